/* SPDX-License-Identifier: BSD-3-Clause */
/* A node daemon restarted on a node the DVM marked down rejoins it (herd-dvm --add-host): the
 * root starts it with the DVM's launcher, attached to its nearest live ancestor as a leaf (the
 * daemons that were below it stay where they re-attached), gives it what the start-up gave the
 * others (every inventory, the daemons down, the next command broadcast), marks the node up and
 * tells every daemon (ORTE_DVM_CMD_NODE_UP). One rejoin at a time. docs/dvm.md, "Node loss". */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opal/util/argv.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"
#include "orte/runtime/dvm_internal.h"
#include "orte/runtime/dvm_rejoin.h"
#include "orte/runtime/dvm_tool_internal.h"
#include "orte/util/radix.h"

/* A daemon the root started for a rejoin, and what it prints (passed on once it joined). */
typedef struct rejoin_proc {
    orte_plm_daemon_t daemon;
    dvm_relay_t *relay;
} rejoin_proc_t;

struct dvm_rejoin {
    bool *rejoined;      /* by vpid: came back once; a leaf for good, never anyone's parent again */
    orte_vpid_t pending; /* the daemon joining now (0: none) */
    orte_vpid_t via;     /* the ancestor it attaches to */
    int tool_fd;         /* the tool waiting for the outcome, -1 once it is gone */
    opal_event_t *timer; /* the daemon has dvm_startup_timeout to join */
    rejoin_proc_t *procs;
    size_t num_procs;
};

/* ------------------------------------------------------------------------------------------ */
/* the root: answering the tool */

/* Send the tool on fd the outcome: a help-dvm.txt topic filled in. */
static void vsay(int fd, int status, const char *topic, va_list ap)
{
    if (fd < 0) {
        return;
    }
    char *text = opal_show_help_vstring(DVM_HELP_FILE, topic, false, ap);
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_pack_uint32(&buffer, ORTE_DVM_TOOL_REJOIN_ANSWER) &&
        HERD_SUCCESS == orte_dvm_rejoin_answer_pack(&buffer, status, NULL != text ? text : topic)) {
        orte_dvm_tool_send_frame(fd, &buffer);
    }
    opal_buffer_destruct(&buffer);
    free(text);
}

/* A request refused: the rejoin in progress (if any) goes on. */
static void refuse(int fd, const char *topic, ...)
{
    va_list ap;
    va_start(ap, topic);
    vsay(fd, HERD_ERR_BAD_PARAM, topic, ap);
    va_end(ap);
}

/* The rejoin in progress is over: tell its tool (if still there); a failure goes to the DVM's
 * log as well (the tool may be gone). */
static void answer(orte_dvm_t *dvm, int status, const char *topic, ...)
{
    dvm_rejoin_t *r = dvm->root.rejoin;
    va_list ap, again;
    va_start(ap, topic);
    va_copy(again, ap);
    vsay(r->tool_fd, status, topic, ap);
    if (HERD_SUCCESS != status) {
        opal_show_vhelp(DVM_HELP_FILE, topic, false, again); /* the DVM's log says it too */
    }
    va_end(again);
    va_end(ap);
    r->tool_fd = -1;
    r->pending = 0;
    if (NULL != r->timer) {
        opal_event_del(r->timer);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* the root: the processes it started */

static rejoin_proc_t *proc_of(dvm_rejoin_t *r, orte_vpid_t vpid)
{
    for (size_t i = r->num_procs; i > 0; --i) {
        if (r->procs[i - 1].daemon.vpid == vpid && r->procs[i - 1].daemon.pid > 0) {
            return &r->procs[i - 1];
        }
    }
    return NULL;
}

static void relay_start(orte_dvm_t *dvm, rejoin_proc_t *p)
{
    if (p->daemon.stderr_fd >= 0 && NULL == p->relay) {
        p->relay = dvm_relay_open(dvm, p->daemon.vpid, p->daemon.stderr_fd);
    }
}

static void proc_close(rejoin_proc_t *p)
{
    dvm_relay_close(p->relay);
    p->relay = NULL;
    if (p->daemon.stderr_fd >= 0) {
        close(p->daemon.stderr_fd);
        p->daemon.stderr_fd = -1;
    }
    if (p->daemon.stdin_fd >= 0) {
        close(p->daemon.stdin_fd);
        p->daemon.stdin_fd = -1;
    }
    opal_argv_free(p->daemon.boot);
    p->daemon.boot = NULL;
}

/* A daemon started here exited: before it joined, the rejoin failed; after, its node is lost
 * again (as root_below_exited says it for the daemons of the start-up). */
static void proc_exited(orte_dvm_t *dvm, rejoin_proc_t *p, int wstatus)
{
    dvm_rejoin_t *r = dvm->root.rejoin;
    char how[128];
    dvm_describe_exit(wstatus, how, sizeof(how));
    if (r->pending == p->daemon.vpid) {
        char *err = orte_plm_base_read_stderr(&p->daemon);
        answer(dvm, HERD_ERR_UNREACH, "rejoin-exited", p->daemon.node->name, p->daemon.vpid, how,
               (NULL != err && '\0' != err[0]) ? err : "(nothing on stderr)");
        free(err);
    } else if (!dvm->stopping) {
        dvm_relay_close(p->relay); /* what it printed last */
        p->relay = NULL;
        char reason[160];
        snprintf(reason, sizeof(reason), "its daemon %s", how);
        dvm_loss_root_node_down(dvm, p->daemon.vpid, reason);
        dvm_queue_node_down(dvm, p->daemon.vpid);
    }
    p->daemon.pid = -1;
    proc_close(p);
}

void dvm_rejoin_reap(orte_dvm_t *dvm)
{
    dvm_rejoin_t *r = dvm->root.rejoin;
    for (size_t i = 0; NULL != r && i < r->num_procs; ++i) {
        int wstatus;
        rejoin_proc_t *p = &r->procs[i];
        if (p->daemon.pid > 0 && waitpid(p->daemon.pid, &wstatus, WNOHANG) > 0) {
            proc_exited(dvm, p, wstatus);
        }
    }
}

bool dvm_rejoin_all_gone(const orte_dvm_t *dvm)
{
    const dvm_rejoin_t *r = dvm->root.rejoin;
    for (size_t i = 0; NULL != r && i < r->num_procs; ++i) {
        if (r->procs[i].daemon.pid > 0) {
            return false;
        }
    }
    return true;
}

size_t dvm_rejoin_num_procs(const orte_dvm_t *dvm)
{
    return NULL != dvm->root.rejoin ? dvm->root.rejoin->num_procs : 0;
}

size_t dvm_rejoin_known_pids(const orte_dvm_t *dvm, pid_t *pids)
{
    const dvm_rejoin_t *r = dvm->root.rejoin;
    size_t n = 0;
    for (size_t i = 0; NULL != r && i < r->num_procs; ++i) {
        if (r->procs[i].daemon.pid > 0) {
            pids[n++] = r->procs[i].daemon.pid;
        }
    }
    return n;
}

void dvm_rejoin_signal(orte_dvm_t *dvm, int signo)
{
    dvm_rejoin_t *r = dvm->root.rejoin;
    for (size_t i = 0; NULL != r && i < r->num_procs; ++i) {
        if (r->procs[i].daemon.pid > 0) {
            kill(r->procs[i].daemon.pid, signo);
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* the root: starting the daemon */

/* Where vpid attaches: its nearest ancestor that is up and was never rejoined itself (the
 * routing of the other daemons goes around a lost daemon for good, but to it). */
static orte_vpid_t attach_point(const orte_dvm_t *dvm, orte_vpid_t vpid)
{
    const dvm_rejoin_t *r = dvm->root.rejoin;
    orte_vpid_t a = orte_radix_parent(vpid, dvm->radix);
    while (0 != a &&
           (dvm_loss_is_down(dvm, a) || r->rejoined[a] || !orte_dvm_node_up(dvm, a - 1))) {
        a = orte_radix_parent(a, dvm->radix);
    }
    return a;
}

static const char *uri_of(const orte_dvm_t *dvm, orte_vpid_t v)
{
    return 0 == v ? dvm->uri : (NULL != dvm->tree.uris ? dvm->tree.uris[v] : NULL);
}

/* "vpid=uri ..." of the live ancestors above via, nearest first: where the daemon re-attaches
 * if via is lost later. */
static char *ancestors_above(const orte_dvm_t *dvm, orte_vpid_t via)
{
    char **entries = NULL;
    if (0 != via) {
        for (orte_vpid_t a = orte_radix_parent(via, dvm->radix); ORTE_VPID_INVALID != a;
             a = orte_radix_parent(a, dvm->radix)) {
            const char *uri = uri_of(dvm, a);
            char entry[320];
            if ((0 != a && (dvm_loss_is_down(dvm, a) || dvm->root.rejoin->rejoined[a])) ||
                NULL == uri) {
                continue;
            }
            snprintf(entry, sizeof(entry), "%u=%s", a, uri);
            if (HERD_SUCCESS != opal_argv_append(&entries, entry)) {
                opal_argv_free(entries);
                return NULL;
            }
        }
    }
    char *joined = (NULL != entries) ? opal_argv_join(entries, ' ') : strdup("");
    opal_argv_free(entries);
    return joined;
}

/* Build the bootstrap of p (as dvm_tree.c does for the start-up, plus DVM_BOOT_REJOIN) and
 * start it. */
static int launch(orte_dvm_t *dvm, rejoin_proc_t *p, orte_vpid_t via, char *why, size_t size)
{
    const orte_plm_module_t *plm = dvm->tree.plm;
    char *allocation_hex = plm->tree_spawn ? dvm_boot_allocation_hex(dvm->allocation) : NULL;
    char *ancestors = ancestors_above(dvm, via);
    char entry[64];
    int rc = (NULL == ancestors || (plm->tree_spawn && NULL == allocation_hex))
                 ? HERD_ERR_OUT_OF_RESOURCE
                 : HERD_SUCCESS;
    char *listen_uri = NULL;
    if (HERD_SUCCESS == rc && NULL == uri_of(dvm, via)) {
        snprintf(why, size, "the address of daemon %u, where it would attach, is not known", via);
        rc = HERD_ERR_NOT_FOUND;
    }
    if (HERD_SUCCESS == rc && plm->prebinds_listeners) {
        rc = dvm_tree_prebind(&p->daemon, &listen_uri);
        free(listen_uri);
    }
    if (HERD_SUCCESS == rc) {
        rc = dvm_boot_build(dvm, &p->daemon, uri_of(dvm, via), ancestors, allocation_hex);
    }
    snprintf(entry, sizeof(entry), "%s=%u", DVM_BOOT_REJOIN, via);
    if (HERD_SUCCESS == rc) {
        rc = opal_argv_append(&p->daemon.boot, entry);
    }
    if (HERD_SUCCESS == rc) {
        errno = 0;
        rc = plm->launch(&p->daemon, 1, dvm->tree.herdd);
    }
    if (HERD_SUCCESS != rc && '\0' == why[0]) {
        snprintf(why, size, "%s", HERD_ERR_IN_ERRNO == rc ? strerror(errno) : opal_strerror(rc));
    }
    if (p->daemon.listen_fd >= 0) {
        close(p->daemon.listen_fd); /* the daemon has it now */
        p->daemon.listen_fd = -1;
    }
    free(ancestors);
    free(allocation_hex);
    return rc;
}

static void timeout_cb(int fd, short what, void *arg)
{
    orte_dvm_t *dvm = arg;
    dvm_rejoin_t *r = dvm->root.rejoin;
    rejoin_proc_t *p = proc_of(r, r->pending);
    if (0 == r->pending) {
        return;
    }
    orte_vpid_t vpid = r->pending;
    answer(dvm, HERD_ERR_TIMEOUT, "rejoin-timeout", dvm_tree_node_name(dvm, vpid), vpid,
           dvm->vars->startup_timeout);
    if (NULL != p) {
        kill(p->daemon.pid, SIGKILL); /* reaped as usual; no longer pending, so said no more */
    }
}

/* Why vpid cannot rejoin now (a help-dvm.txt topic), or NULL. */
static const char *refusal(const orte_dvm_t *dvm, orte_vpid_t vpid)
{
    if (!dvm->survive_loss || !dvm->root.options.persistent) {
        return "rejoin-not-persistent";
    }
    if (dvm->stopping) {
        return "rejoin-stopping";
    }
    if (dvm_virtual_wanted(dvm) || dvm->tree.plm->flat_wireup) {
        return "rejoin-unsupported-launcher";
    }
    if (0 != dvm->root.rejoin->pending) {
        return "rejoin-in-progress";
    }
    if (0 == vpid) {
        return "rejoin-unknown-host";
    }
    if (!dvm_loss_is_down(dvm, vpid)) {
        return "rejoin-not-down";
    }
    return NULL;
}

static orte_vpid_t vpid_of_host(const orte_dvm_t *dvm, const char *host)
{
    for (uint32_t i = 0; i < dvm->allocation->num_nodes; ++i) {
        if (0 == strcmp(dvm->allocation->nodes[i].name, host)) {
            return i + 1;
        }
    }
    return 0;
}

static int start_rejoin(orte_dvm_t *dvm, orte_vpid_t vpid)
{
    dvm_rejoin_t *r = dvm->root.rejoin;
    rejoin_proc_t *grown = realloc(r->procs, (r->num_procs + 1) * sizeof(*grown));
    if (NULL == grown) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    r->procs = grown;
    rejoin_proc_t *p = &r->procs[r->num_procs++];
    *p = (rejoin_proc_t){.daemon = {.vpid = vpid,
                                    .node = &dvm->allocation->nodes[vpid - 1],
                                    .listen_fd = -1,
                                    .pid = -1,
                                    .stderr_fd = -1,
                                    .stdin_fd = -1}};
    orte_vpid_t via = attach_point(dvm, vpid);
    char why[256] = "";
    r->pending = vpid; /* an exit reaped from here on answers the tool */
    r->via = via;
    if (HERD_SUCCESS != launch(dvm, p, via, why, sizeof(why))) {
        answer(dvm, HERD_ERR_UNREACH, "rejoin-launch-failed", p->daemon.node->name, vpid,
               dvm->tree.plm->name, why);
        proc_close(p);
        return HERD_SUCCESS;
    }
    struct timeval limit = {.tv_sec = dvm->vars->startup_timeout};
    opal_event_add(r->timer, &limit);
    opal_output_verbose(1, OPAL_OUTPUT_STDERR,
                        "herd-dvm: starting a daemon on node %s (daemon %u) to rejoin the DVM "
                        "below daemon %u",
                        p->daemon.node->name, vpid, via);
    return HERD_SUCCESS;
}

int dvm_rejoin_tool_request(orte_dvm_t *dvm, int fd, opal_buffer_t *frame)
{
    dvm_rejoin_t *r = dvm->root.rejoin;
    char *host = NULL;
    int rc = orte_dvm_rejoin_request_unpack(frame, &host);
    if (HERD_SUCCESS != rc || NULL == r) {
        free(host);
        return HERD_SUCCESS != rc ? rc : HERD_ERR_NOT_AVAILABLE;
    }
    orte_vpid_t vpid = vpid_of_host(dvm, host);
    const char *topic = refusal(dvm, vpid);
    if (NULL != topic) {
        refuse(fd, topic, host, 0 != r->pending ? dvm_tree_node_name(dvm, r->pending) : host);
        free(host);
        return HERD_SUCCESS;
    }
    free(host);
    r->tool_fd = fd;
    return start_rejoin(dvm, vpid);
}

void dvm_rejoin_conn_closed(orte_dvm_t *dvm, int fd)
{
    dvm_rejoin_t *r = NULL != dvm ? dvm->root.rejoin : NULL;
    if (NULL != r && r->tool_fd == fd) {
        r->tool_fd = -1; /* the rejoin goes on; the log says how it ends */
    }
}

/* ------------------------------------------------------------------------------------------ */
/* the root: the daemon is in */

/* Every node's inventory as the allgather gave it the others, for the rejoining daemon. */
static int send_ack(orte_dvm_t *dvm, orte_vpid_t vpid)
{
    orte_dvm_rejoin_ack_t ack = {.next_command = dvm->next_command, .num_nodes = dvm->size - 1};
    opal_buffer_t *packed = calloc(dvm->size, sizeof(*packed));
    ack.down = calloc(dvm->size, sizeof(*ack.down));
    ack.inventories = calloc(dvm->size, sizeof(*ack.inventories));
    ack.lengths = calloc(dvm->size, sizeof(*ack.lengths));
    int rc = (NULL != packed && NULL != ack.down && NULL != ack.inventories && NULL != ack.lengths)
                 ? HERD_SUCCESS
                 : HERD_ERR_OUT_OF_RESOURCE;
    for (orte_vpid_t v = 1; HERD_SUCCESS == rc && v < dvm->size; ++v) {
        if (dvm_loss_is_down(dvm, v)) {
            ack.down[ack.num_down++] = v;
        }
        opal_buffer_init(&packed[v]);
        rc = orte_inventory_pack(&packed[v], dvm->root.inventory[v], false);
        ack.inventories[v - 1] = packed[v].base;
        ack.lengths[v - 1] = packed[v].used;
    }
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == rc && HERD_SUCCESS == (rc = orte_dvm_rejoin_ack_pack(&buffer, &ack))) {
        rc = dvm->ovl->send(dvm->overlay, vpid, ORTE_DVM_TAG_REJOIN_ACK, buffer.base, buffer.used);
    }
    opal_buffer_destruct(&buffer);
    for (orte_vpid_t v = 1; NULL != packed && v < dvm->size; ++v) {
        opal_buffer_destruct(&packed[v]);
    }
    free(packed);
    free(ack.down);
    free(ack.inventories);
    free(ack.lengths);
    return rc;
}

/* The daemon's inventory replaces the one its node had (the topology XML kept when the
 * topology is the same: the root asks a topology's first node for it once). */
static int take_inventory(orte_dvm_t *dvm, orte_vpid_t vpid, const void *data, size_t len)
{
    opal_buffer_t buffer;
    orte_inventory_t *inv = NULL;
    opal_buffer_init(&buffer);
    int rc = opal_buffer_load(&buffer, data, len);
    if (HERD_SUCCESS == rc) {
        rc = orte_inventory_unpack(&buffer, &inv);
    }
    opal_buffer_destruct(&buffer);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    orte_inventory_t *old = dvm->root.inventory[vpid];
    if (NULL != old && NULL != old->xml && NULL == inv->xml &&
        0 == strcmp(old->signature, inv->signature)) {
        inv->xml = old->xml;
        old->xml = NULL;
    }
    orte_inventory_free(old);
    dvm->root.inventory[vpid] = inv;
    return HERD_SUCCESS;
}

/* ORTE_DVM_TAG_REJOIN_REQ: the daemon started for the pending rejoin is connected. */
static void root_rejoin_req(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                            const void *data, size_t length, void *arg)
{
    orte_dvm_t *dvm = arg;
    dvm_rejoin_t *r = dvm->root.rejoin;
    opal_buffer_t buffer;
    void *inventory = NULL;
    size_t len = 0;
    if (0 == r->pending || src != r->pending) {
        opal_output(OPAL_OUTPUT_STDERR,
                    "herd-dvm: ignoring a rejoin request from daemon %u: no rejoin of it is in "
                    "progress",
                    src);
        return;
    }
    opal_buffer_init(&buffer);
    int rc = opal_buffer_load(&buffer, data, length);
    if (HERD_SUCCESS == rc) {
        rc = orte_dvm_rejoin_hello_unpack(&buffer, &inventory, &len);
    }
    opal_buffer_destruct(&buffer);
    if (HERD_SUCCESS == rc) {
        rc = take_inventory(dvm, src, inventory, len);
    }
    free(inventory);
    if (HERD_SUCCESS != rc) {
        answer(dvm, rc, "rejoin-bad-hello", dvm_tree_node_name(dvm, src), src, opal_strerror(rc));
        rejoin_proc_t *p = proc_of(r, src);
        if (NULL != p) {
            kill(p->daemon.pid, SIGKILL);
        }
        return;
    }
    /* up: every daemon takes it back (those routing to it go to it again) */
    dvm->down[src] = false;
    dvm->num_down--;
    r->rejoined[src] = true;
    if (NULL != dvm->gc->rejoined) {
        dvm->gc->rejoined(dvm->grpcomm, src);
    }
    /* with its inventory: its session endpoints changed with the new daemon */
    opal_buffer_t inv, up;
    opal_buffer_init(&inv);
    opal_buffer_init(&up);
    rc = orte_inventory_pack(&inv, dvm->root.inventory[src], false);
    if (HERD_SUCCESS == rc) {
        rc = orte_dvm_rejoin_node_up_pack(&up, src, inv.base, inv.used);
    }
    if (HERD_SUCCESS == rc) {
        rc = orte_dvm_root_command(dvm, ORTE_DVM_CMD_NODE_UP, up.base, up.used);
    }
    opal_buffer_destruct(&inv);
    opal_buffer_destruct(&up);
    if (HERD_SUCCESS == rc) {
        rc = send_ack(dvm, src); /* the commands after NODE_UP are its */
    }
    if (HERD_SUCCESS != rc) {
        answer(dvm, rc, "rejoin-bad-hello", dvm_tree_node_name(dvm, src), src, opal_strerror(rc));
        return;
    }
    rejoin_proc_t *p = proc_of(r, src);
    if (NULL != p) {
        relay_start(dvm, p);
    }
    opal_show_help(DVM_HELP_FILE, "node-up", false, dvm_tree_node_name(dvm, src), src, r->via);
    answer(dvm, HERD_SUCCESS, "rejoin-done", dvm_tree_node_name(dvm, src), src, r->via);
}

bool dvm_rejoin_was_rejoined(const orte_dvm_t *dvm, orte_vpid_t vpid)
{
    const dvm_rejoin_t *r = dvm->root.rejoin;
    return NULL != r && vpid < dvm->size && r->rejoined[vpid];
}

int dvm_rejoin_root_open(orte_dvm_t *dvm)
{
    dvm_rejoin_t *r = calloc(1, sizeof(*r));
    if (NULL == r) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    dvm->root.rejoin = r;
    r->tool_fd = -1;
    r->rejoined = calloc(dvm->size, sizeof(*r->rejoined));
    if (NULL == r->rejoined) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    int rc = opal_event_timer_create(dvm->base, false, timeout_cb, dvm, &r->timer);
    if (HERD_SUCCESS == rc) {
        rc = dvm->ovl->register_recv(dvm->overlay, ORTE_DVM_TAG_REJOIN_REQ, root_rejoin_req, dvm);
    }
    return rc;
}

/* The daemons started here got the shutdown broadcast with the others; those still there after
 * the grace are killed. */
void dvm_rejoin_root_release(orte_dvm_t *dvm)
{
    dvm_rejoin_t *r = dvm->root.rejoin;
    if (NULL == r) {
        return;
    }
    for (size_t i = 0; i < r->num_procs; ++i) {
        rejoin_proc_t *p = &r->procs[i];
        if (p->daemon.pid > 0) {
            kill(p->daemon.pid, SIGKILL);
            waitpid(p->daemon.pid, NULL, 0);
            p->daemon.pid = -1;
        }
        proc_close(p);
    }
    if (NULL != r->timer) {
        opal_event_free(r->timer);
    }
    free(r->procs);
    free(r->rejoined);
    free(r);
    dvm->root.rejoin = NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* the daemon */

bool dvm_rejoin_daemon_wanted(void)
{
    return NULL != getenv(DVM_BOOT_REJOIN);
}

/* ORTE_DVM_TAG_REJOIN_ACK: the root took us in. */
static void daemon_rejoin_ack(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                              const void *data, size_t length, void *arg)
{
    orte_dvm_t *dvm = arg;
    dvm_daemon_t *d = &dvm->daemon;
    orte_dvm_rejoin_ack_t *ack = NULL;
    opal_buffer_t buffer;
    if (0 != src || NULL != d->inventory_blobs) {
        return; /* only the root, once */
    }
    opal_buffer_init(&buffer);
    int rc = opal_buffer_load(&buffer, data, length);
    if (HERD_SUCCESS == rc) {
        rc = orte_dvm_rejoin_ack_unpack(&buffer, dvm->size, &ack);
    }
    opal_buffer_destruct(&buffer);
    size_t total = 0;
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < ack->num_nodes; ++i) {
        total += ack->lengths[i];
    }
    if (HERD_SUCCESS == rc) {
        d->inventory_blobs = calloc(dvm->size, sizeof(*d->inventory_blobs));
        d->inventory_lengths = calloc(dvm->size, sizeof(*d->inventory_lengths));
        d->inventory_block = malloc(total + 1);
        if (NULL == d->inventory_blobs || NULL == d->inventory_lengths ||
            NULL == d->inventory_block) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    if (HERD_SUCCESS != rc) {
        orte_dvm_rejoin_ack_free(ack);
        opal_show_help(DVM_HELP_FILE, "daemon-step-failed", false, dvm->vpid,
                       "taking the DVM's state to rejoin it", opal_strerror(rc));
        dvm->status = rc;
        dvm_leave_loop(dvm);
        return;
    }
    size_t at = 0;
    for (uint32_t i = 0; i < ack->num_nodes; ++i) {
        d->inventory_blobs[i] = d->inventory_block + at;
        memcpy(d->inventory_block + at, ack->inventories[i], ack->lengths[i]);
        d->inventory_lengths[i] = ack->lengths[i];
        at += ack->lengths[i];
    }
    /* a leaf: the daemons that were below us stay where they re-attached */
    if (NULL != dvm->gc->rejoined) {
        dvm->gc->rejoined(dvm->grpcomm, dvm->vpid);
    }
    for (uint32_t i = 0; i < ack->num_down; ++i) {
        if (ack->down[i] != dvm->vpid) {
            dvm_loss_route_around(dvm, ack->down[i]);
        }
    }
    dvm->next_command = ack->next_command;
    orte_dvm_rejoin_ack_free(ack);
    rc = dvm_command_xcast(dvm, NULL, 0);
    if (HERD_SUCCESS != rc) {
        opal_show_help(DVM_HELP_FILE, "daemon-step-failed", false, dvm->vpid,
                       "waiting for commands", opal_strerror(rc));
        dvm->status = rc;
        dvm_leave_loop(dvm);
    }
}

int dvm_rejoin_daemon_join(orte_dvm_t *dvm, const dvm_boot_t *boot)
{
    dvm_daemon_t *d = &dvm->daemon;
    char *end = NULL;
    const char *text = getenv(DVM_BOOT_REJOIN);
    unsigned long via = strtoul(text, &end, 10);
    int rc = HERD_SUCCESS;
    if ('\0' == text[0] || '\0' != *end || via >= dvm->vpid ||
        !orte_radix_in_subtree((orte_vpid_t) via, dvm->vpid, dvm->radix) || 0 == d->num_ancestors) {
        rc = HERD_ERR_BAD_PARAM;
    }
    if (HERD_SUCCESS == rc) {
        rc = dvm->ovl->register_recv(dvm->overlay, ORTE_DVM_TAG_REJOIN_ACK, daemon_rejoin_ack, dvm);
    }
    if (HERD_SUCCESS == rc) {
        /* the bootstrap's parent is the ancestor we attach to; those above it follow */
        d->ancestors[0] = (orte_vpid_t) via;
        d->current = 0;
        rc = (via == orte_radix_parent(dvm->vpid, dvm->radix))
                 ? dvm->ovl->connect_parent(dvm->overlay, boot->parent_uri)
                 : dvm->ovl->connect_ancestor(dvm->overlay, (orte_vpid_t) via, boot->parent_uri);
    }
    opal_buffer_t inventory, hello;
    opal_buffer_init(&inventory);
    opal_buffer_init(&hello);
    if (HERD_SUCCESS == rc) {
        rc = orte_inventory_pack(&inventory, d->mine, false);
    }
    if (HERD_SUCCESS == rc) {
        rc = orte_dvm_rejoin_hello_pack(&hello, inventory.base, inventory.used);
    }
    if (HERD_SUCCESS == rc) {
        /* queued until the link is up */
        rc = dvm->ovl->send(dvm->overlay, 0, ORTE_DVM_TAG_REJOIN_REQ, hello.base, hello.used);
    }
    opal_buffer_destruct(&inventory);
    opal_buffer_destruct(&hello);
    if (HERD_SUCCESS != rc) {
        opal_show_help(DVM_HELP_FILE, "cannot-join", false, dvm->vpid, boot->node, boot->parent_uri,
                       opal_strerror(rc));
    }
    return rc;
}

/* ORTE_DVM_CMD_NODE_UP: it is back; broadcasts reach it again, and its new inventory replaces
 * the one its node had (the jobs' session daemons find its new session endpoints there). */
void dvm_rejoin_daemon_node_up(orte_dvm_t *dvm, const uint8_t *payload, size_t len)
{
    dvm_daemon_t *d = &dvm->daemon;
    opal_buffer_t buffer;
    orte_vpid_t vpid = 0;
    void *inventory = NULL;
    size_t length = 0;
    opal_buffer_init(&buffer);
    int rc = opal_buffer_load(&buffer, payload, len);
    if (HERD_SUCCESS == rc) {
        rc = orte_dvm_rejoin_node_up_unpack(&buffer, dvm->size, &vpid, &inventory, &length);
    }
    opal_buffer_destruct(&buffer);
    if (HERD_SUCCESS != rc || vpid == dvm->vpid) {
        if (HERD_SUCCESS != rc) {
            opal_output(OPAL_OUTPUT_STDERR,
                        "herdd: daemon %u ignores a malformed NODE_UP command: %s", dvm->vpid,
                        opal_strerror(rc));
        }
        free(inventory);
        return;
    }
    if (NULL == d->inventory_replaced) {
        d->inventory_replaced = calloc(dvm->size, sizeof(*d->inventory_replaced));
    }
    if (NULL != d->inventory_replaced && NULL != d->inventory_blobs) {
        free(d->inventory_replaced[vpid - 1]);
        d->inventory_replaced[vpid - 1] = inventory;
        d->inventory_blobs[vpid - 1] = inventory;
        d->inventory_lengths[vpid - 1] = length;
    } else {
        free(inventory);
    }
    if (dvm_loss_is_down(dvm, vpid)) {
        dvm->down[vpid] = false;
        dvm->num_down--;
    }
    if (NULL != dvm->gc->rejoined) {
        dvm->gc->rejoined(dvm->grpcomm, vpid);
    }
}

void dvm_rejoin_daemon_release(orte_dvm_t *dvm)
{
    dvm_daemon_t *d = &dvm->daemon;
    for (uint32_t i = 0; NULL != d->inventory_replaced && i < dvm->size; ++i) {
        free(d->inventory_replaced[i]);
    }
    free(d->inventory_replaced);
    d->inventory_replaced = NULL;
}
