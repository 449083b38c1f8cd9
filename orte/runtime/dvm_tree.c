/* SPDX-License-Identifier: BSD-3-Clause */
/* The daemons a DVM process starts and watches below it, on the root and on inner daemons
 * alike: tree spawn through plm, their exits and lost connections (handed to the side through
 * dvm->ops), the start-up timeout and the shutdown grace. */
#include "herd_config.h"

#include <errno.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opal/util/argv.h"
#include "opal/util/show_help.h"
#include "orte/runtime/dvm_internal.h"
#include "orte/util/radix.h"

/* ------------------------------------------------------------------------------------------ */
/* where a daemon is */

const char *dvm_tree_node_name(const orte_dvm_t *dvm, orte_vpid_t vpid)
{
    if (0 == vpid) {
        return "the root";
    }
    if (NULL != dvm->allocation && vpid - 1 < dvm->allocation->num_nodes) {
        return dvm->allocation->nodes[vpid - 1].name;
    }
    return "an unknown node";
}

void dvm_tree_position(const orte_dvm_t *dvm, orte_vpid_t vpid, char *text, size_t size)
{
    uint32_t depth = 0;
    for (orte_vpid_t v = vpid; v > 0; v = orte_radix_parent(v, dvm->radix)) {
        ++depth;
    }
    snprintf(text, size, "daemon %u, child of %u, depth %u of %u", vpid,
             orte_radix_parent(vpid, dvm->radix), depth, orte_radix_depth(dvm->size, dvm->radix));
}

/* ------------------------------------------------------------------------------------------ */
/* starting them */

/* Listeners for daemons on this host, bound before any daemon starts so every daemon's URI
 * (and so its parent's) is known up front. */
int dvm_tree_prebind(orte_plm_daemon_t *d, char **uri)
{
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = 0};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return HERD_ERR_IN_ERRNO;
    }
    if (0 != bind(fd, (struct sockaddr *) &addr, sizeof(addr)) || 0 != listen(fd, 128) ||
        0 != getsockname(fd, (struct sockaddr *) &addr, &len)) {
        close(fd);
        return HERD_ERR_IN_ERRNO;
    }
    char text[64];
    snprintf(text, sizeof(text), "tcp://127.0.0.1:%u", ntohs(addr.sin_port));
    *uri = strdup(text);
    d->listen_fd = fd;
    return NULL != *uri ? HERD_SUCCESS : HERD_ERR_OUT_OF_RESOURCE;
}

/* Where a daemon's ancestors listen, for its bootstrap: pre-bound, every URI is known here;
 * in a tree spawn, this process's own and its ancestors' (from its bootstrap). */
typedef struct {
    char **uris; /* pre-bound: by vpid - 1 */
    bool prebound;
} tree_uris_t;

static const char *tree_uri_of(const orte_dvm_t *dvm, orte_vpid_t v, void *arg)
{
    const tree_uris_t *known = arg;
    if (v == dvm->vpid) {
        return dvm->uri;
    }
    if (known->prebound) {
        return 0 == v ? dvm->uri : known->uris[v - 1];
    }
    for (uint32_t i = 0; i < dvm->daemon.num_ancestors; ++i) {
        if (dvm->daemon.ancestors[i] == v) {
            return dvm->daemon.ancestor_uris[i];
        }
    }
    return NULL;
}

/* Daemon i's entry (its vpid: children[i] in a tree spawn, else i + 1), with its listener when
 * the launcher pre-binds (its URI into uris[i]). */
static int prepare_entry(orte_dvm_t *dvm, uint32_t i, const orte_vpid_t *children, char **uris)
{
    const orte_plm_module_t *plm = dvm->tree.plm;
    orte_vpid_t vpid = plm->tree_spawn ? children[i] : i + 1;
    dvm->tree.launched[i] = (orte_plm_daemon_t){.vpid = vpid,
                                                .node = &dvm->allocation->nodes[vpid - 1],
                                                .listen_fd = -1,
                                                .pid = -1,
                                                .stderr_fd = -1,
                                                .stdin_fd = -1};
    dvm->tree.num_launched = i + 1; /* from here on, dvm_tree_release() cleans it up */
    if (plm->prebinds_listeners &&
        HERD_SUCCESS != dvm_tree_prebind(&dvm->tree.launched[i], &uris[i])) {
        opal_show_help(DVM_HELP_FILE, "prebind-failed", true, vpid, strerror(errno));
        return HERD_ERR_SILENT;
    }
    return HERD_SUCCESS;
}

/* Daemon i's bootstrap: its parent's URI and its ancestors' (pre-bound: all of lower vpids, so
 * already known; else this process is the parent). */
static int build_boot(orte_dvm_t *dvm, uint32_t i, char **uris, const char *allocation_hex)
{
    const orte_plm_module_t *plm = dvm->tree.plm;
    orte_plm_daemon_t *d = &dvm->tree.launched[i];
    orte_vpid_t parent = orte_radix_parent(d->vpid, dvm->radix);
    const char *parent_uri = (parent == dvm->vpid) ? dvm->uri : uris[parent - 1];
    tree_uris_t known = {.uris = uris, .prebound = plm->prebinds_listeners};
    char *ancestors = dvm_boot_ancestors(dvm, d->vpid, tree_uri_of, &known);
    int rc = (NULL != ancestors) ? dvm_boot_build(dvm, d, parent_uri, ancestors, allocation_hex)
                                 : HERD_ERR_OUT_OF_RESOURCE;
    free(ancestors);
    return rc;
}

/* Say which daemon could not be started (the first without a pid) and why. */
static int launch_failed(orte_dvm_t *dvm, uint32_t count, int rc, int saved_errno)
{
    const char *node = "?";
    for (uint32_t i = 0; i < count; ++i) {
        if (dvm->tree.launched[i].pid < 0) {
            node = dvm->tree.launched[i].node->name;
            break;
        }
    }
    opal_show_help(DVM_HELP_FILE, "launch-failed", true, node, dvm->tree.plm->name, dvm->tree.herdd,
                   HERD_ERR_IN_ERRNO == rc ? strerror(saved_errno) : opal_strerror(rc));
    return HERD_ERR_SILENT;
}

/* All on this host, with listeners made here: bind, start and let go of one daemon at a time.
 * Each start copies this process's descriptor table into the new process, which closes it
 * again at exec: with every listener bound first, starting n daemons cost O(n^2) descriptor
 * copies and closes (a tenth of a millisecond per start at 1,024 daemons). A daemon's parent
 * and ancestors have lower vpids, so their URIs are known by the time it starts. */
static int launch_prebound(orte_dvm_t *dvm, uint32_t count, char **uris)
{
    int rc = HERD_SUCCESS;
    for (uint32_t i = 0; i < count && HERD_SUCCESS == rc; ++i) {
        rc = prepare_entry(dvm, i, NULL, uris);
        if (HERD_SUCCESS == rc) {
            rc = build_boot(dvm, i, uris, NULL);
        }
        if (HERD_SUCCESS == rc) {
            rc = dvm->tree.plm->launch(&dvm->tree.launched[i], 1, dvm->tree.herdd);
            if (HERD_SUCCESS != rc) {
                rc = launch_failed(dvm, i + 1, rc, errno);
            }
        }
        if (dvm->tree.launched[i].listen_fd >= 0) {
            close(dvm->tree.launched[i].listen_fd); /* the daemon has it now */
            dvm->tree.launched[i].listen_fd = -1;
        }
    }
    return rc;
}

/* Start the daemons this process is responsible for: every daemon when the launcher pre-binds
 * (all on this host), else this process's children in the tree (a tree spawn starts the rest
 * from below). */
int dvm_tree_launch(orte_dvm_t *dvm)
{
    const orte_plm_module_t *plm = dvm->tree.plm;
    char **uris = NULL; /* pre-bound URIs, by index into dvm->tree.launched */
    char *allocation_hex = NULL;
    orte_vpid_t children[1024];
    uint32_t count;
    int rc = HERD_SUCCESS;

    if (dvm_virtual_wanted(dvm)) {
        return dvm_virtual_launch(dvm);
    }
    if (plm->tree_spawn) {
        count = orte_radix_children(dvm->vpid, dvm->size, dvm->radix < 1024 ? dvm->radix : 1024,
                                    children);
        allocation_hex = dvm_boot_allocation_hex(dvm->allocation);
        if (NULL == allocation_hex) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    } else {
        count = dvm->size - 1; /* vpids 1..n-1, all from here */
    }
    if (0 == count) {
        free(allocation_hex);
        return HERD_SUCCESS;
    }
    dvm->tree.launched = calloc(count, sizeof(*dvm->tree.launched));
    uris = calloc(count, sizeof(*uris));
    if (NULL == dvm->tree.launched || NULL == uris) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    if (plm->prebinds_listeners && !plm->tree_spawn) {
        rc = launch_prebound(dvm, count, uris);
        goto out;
    }
    for (uint32_t i = 0; i < count && HERD_SUCCESS == rc; ++i) {
        rc = prepare_entry(dvm, i, children, uris);
    }
    for (uint32_t i = 0; i < count && HERD_SUCCESS == rc; ++i) {
        rc = build_boot(dvm, i, uris, allocation_hex);
    }
    if (HERD_SUCCESS == rc) {
        rc = plm->launch(dvm->tree.launched, count, dvm->tree.herdd);
        if (HERD_SUCCESS != rc) {
            rc = launch_failed(dvm, count, rc, errno);
        }
    }

out:
    /* the daemons have their listeners now; this process must not keep them open */
    for (uint32_t i = 0; NULL != dvm->tree.launched && i < dvm->tree.num_launched; ++i) {
        if (dvm->tree.launched[i].listen_fd >= 0) {
            close(dvm->tree.launched[i].listen_fd);
            dvm->tree.launched[i].listen_fd = -1;
        }
    }
    for (uint32_t i = 0; NULL != uris && i < count; ++i) {
        free(uris[i]);
    }
    free(uris);
    free(allocation_hex);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* watching them */

void dvm_tree_reap(orte_dvm_t *dvm)
{
    /* only the processes this DVM launched: waitpid(-1) would take exits meant for others
     * in the same process (odls's children in a session daemon) */
    for (size_t i = 0; i < dvm->tree.num_launched; ++i) {
        orte_plm_daemon_t *d = &dvm->tree.launched[i];
        int wstatus;
        if (d->pid <= 0 || waitpid(d->pid, &wstatus, WNOHANG) <= 0) {
            continue;
        }
        if (!dvm->stopping) {
            char how[128];
            dvm_describe_exit(wstatus, how, sizeof(how));
            dvm->ops->below_exited(dvm, d, how);
        }
        d->pid = -1;
    }
}

bool dvm_tree_all_gone(const orte_dvm_t *dvm)
{
    for (size_t i = 0; i < dvm->tree.num_launched; ++i) {
        if (dvm->tree.launched[i].pid > 0) {
            return false;
        }
    }
    return dvm_rejoin_all_gone(dvm);
}

static void signal_all(orte_dvm_t *dvm, int signo)
{
    dvm_rejoin_signal(dvm, signo);
    for (size_t i = 0; i < dvm->tree.num_launched; ++i) {
        if (dvm->tree.launched[i].pid > 0) {
            kill(dvm->tree.launched[i].pid, signo);
        }
    }
}

void dvm_tree_terminate(orte_dvm_t *dvm)
{
    signal_all(dvm, SIGTERM);
}

void dvm_tree_peer_lost(orte_overlay_t *overlay, orte_vpid_t peer, int status, const char *reason,
                        void *arg)
{
    orte_dvm_t *dvm = arg;
    /* the root has no parent; after a loss the parent is the ancestor we re-attached to */
    if (0 != dvm->vpid && peer < dvm->vpid && orte_radix_in_subtree(peer, dvm->vpid, dvm->radix)) {
        dvm->ops->parent_lost(dvm, status, reason);
        return;
    }
    dvm->ops->below_lost(dvm, peer, status, reason);
}

void dvm_tree_joined(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                     size_t length, void *arg)
{
    orte_dvm_t *dvm = arg;
    if (src > 0 && src < dvm->size) {
        dvm->tree.joined[src] = true;
        /* where it listens: where a daemon rejoining below it connects (dvm_rejoin.c) */
        if (NULL != dvm->tree.uris && length > 0 && length < 256 && NULL == dvm->tree.uris[src]) {
            dvm->tree.uris[src] = strndup(data, length);
        }
    }
}

/* Start-up took too long: say who never connected, or that the exchange stalled. */
static void startup_timeout(orte_dvm_t *dvm)
{
    char **missing = NULL;
    size_t num_missing = 0;
    for (uint32_t v = 1; v < dvm->size; ++v) {
        if (!dvm->tree.joined[v] && num_missing++ < 10) {
            opal_argv_append(&missing, dvm_tree_node_name(dvm, v));
        }
    }
    if (num_missing > 10) {
        opal_argv_append(&missing, "...");
    }
    char *list = opal_argv_join(missing, ',');
    char seconds[32], count[32];
    snprintf(seconds, sizeof(seconds), "%d", dvm->vars->startup_timeout);
    snprintf(count, sizeof(count), "%zu", num_missing);
    if (num_missing > 0) {
        dvm_fail(dvm, "startup-timeout", seconds, count, NULL != list ? list : "");
    } else {
        dvm_fail(dvm, "startup-stalled", seconds);
    }
    free(list);
    opal_argv_free(missing);
}

void dvm_tree_timeout_cb(int fd, short what, void *arg)
{
    orte_dvm_t *dvm = arg;
    if (dvm->stopping) {
        signal_all(dvm, SIGKILL); /* stragglers: they had their grace period */
        return;
    }
    startup_timeout(dvm);
}

void dvm_tree_arm_timer(orte_dvm_t *dvm, double seconds)
{
    struct timeval tv = {.tv_sec = (time_t) seconds,
                         .tv_usec = (suseconds_t) ((seconds - (double) (time_t) seconds) * 1e6)};
    opal_event_del(dvm->timer);
    opal_event_add(dvm->timer, &tv);
}

void dvm_tree_release(orte_dvm_t *dvm)
{
    dvm_relay_release(dvm);
    for (size_t i = 0; i < dvm->tree.num_virtual_port_fds; ++i) {
        close(dvm->tree.virtual_port_fds[i]);
    }
    free(dvm->tree.virtual_port_fds);
    dvm->tree.virtual_port_fds = NULL;
    dvm->tree.num_virtual_port_fds = 0;
    for (size_t i = 0; i < dvm->tree.num_launched; ++i) {
        orte_plm_daemon_t *d = &dvm->tree.launched[i];
        if (d->pid > 0) {
            kill(d->pid, SIGKILL);
            waitpid(d->pid, NULL, 0);
        }
        if (d->stderr_fd >= 0) {
            close(d->stderr_fd);
        }
        if (d->stdin_fd >= 0) {
            close(d->stdin_fd);
        }
        opal_argv_free(d->boot);
    }
    free(dvm->tree.launched);
    dvm->tree.launched = NULL;
    dvm->tree.num_launched = 0;
}
