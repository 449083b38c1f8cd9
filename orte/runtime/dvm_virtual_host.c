/* SPDX-License-Identifier: BSD-3-Clause */
/* A herdd process hosting many simulated nodes (ras_simulator_nodes_per_process above 1): each
 * node is a whole node daemon (its own orte_dvm_t, overlay endpoint, grpcomm instance, listener
 * and session endpoints), and all of them run on this process's one event loop; the host owns
 * the loop, the signals and the frameworks, and releases each node once it is done. */
#include "herd_config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <unistd.h>

#include "opal/mca/base/mca_var.h"
#include "opal/util/argv.h"
#include "opal/util/show_help.h"
#include "orte/runtime/dvm_internal.h"
#include "orte/util/orphans.h"
#include "orte/util/radix.h"

typedef struct virtual_node {
    orte_dvm_t dvm;
    dvm_boot_t boot;
    char parent_uri[64];
    char *ancestors;
    bool opened;   /* its runtime started: it must be released */
    bool released; /* done and released */
} virtual_node_t;

typedef struct virtual_host {
    opal_event_base_t *base;
    opal_signal_pipe_t *signals;
    virtual_node_t *nodes;
    uint32_t count;
    uint32_t live; /* opened and not released */
    uint16_t port;
    uint32_t stride; /* between this process's vpids */
    const char *root_uri;
    char **names;
    char **topologies;
    orte_inventory_t **kinds; /* by topology index: collected once */
    /* every node's name, for the inventories by kind: the same simulated allocation as the
     * root's, made again here from the same variables (the bootstrap carries them) */
    orte_allocation_t *allocation;
    uint16_t *session_ports; /* the DVM's common session ports, one per slot */
    size_t num_session_ports;
    char scratch_uri[64]; /* dvm_boot_ancestors' answers, copied at once */
    dvm_map_queue_t *map_queue; /* the nodes' maps of jobs launched nowhere, one per turn */
} virtual_host_t;

static void bootstrap_error(const char *what)
{
    /* raw: herdd's bootstrap guards, as in dvm_boot.c */
    fprintf(stderr,
            "herdd: malformed simulated-node bootstrap (%s); herdd is started by herd-dvm or "
            "herdrun, not by hand\n",
            what);
}

/* The per-node lists of the bootstrap, each with count entries. */
static int read_lists(virtual_host_t *host, const orte_dvm_t *first, char ***kinds, char ***fds)
{
    const char *count_text = getenv(DVM_BOOT_VIRTUAL_COUNT);
    const char *port_text = getenv(DVM_BOOT_VIRTUAL_PORT);
    const char *stride_text = getenv(DVM_BOOT_VIRTUAL_STRIDE);
    unsigned long count = NULL != count_text ? strtoul(count_text, NULL, 10) : 0;
    unsigned long port = NULL != port_text ? strtoul(port_text, NULL, 10) : 0;
    unsigned long stride = NULL != stride_text ? strtoul(stride_text, NULL, 10) : 0;
    if (0 == count || 0 == port || port > 65535 || 0 == stride || stride >= first->size ||
        (uint64_t) first->vpid + (uint64_t) (count - 1) * stride >= first->size) {
        bootstrap_error("count, stride, port or vpids");
        return HERD_ERR_BAD_PARAM;
    }
    host->count = (uint32_t) count;
    host->stride = (uint32_t) stride;
    host->port = (uint16_t) port;
    host->names = opal_argv_split(getenv(DVM_BOOT_VIRTUAL_NODES), ',');
    host->topologies = opal_argv_split(getenv(DVM_BOOT_VIRTUAL_TOPOLOGIES), ';');
    *kinds = opal_argv_split(getenv(DVM_BOOT_VIRTUAL_KINDS), ',');
    *fds = opal_argv_split(getenv(DVM_BOOT_VIRTUAL_FDS), ',');
    if ((size_t) count != opal_argv_count(host->names) ||
        (size_t) count != opal_argv_count(*kinds) || (size_t) count != opal_argv_count(*fds) ||
        0 == opal_argv_count(host->topologies)) {
        bootstrap_error("node lists");
        return HERD_ERR_BAD_PARAM;
    }
    return HERD_SUCCESS;
}

static const char *host_uri_of(const orte_dvm_t *dvm, orte_vpid_t v, void *arg)
{
    virtual_host_t *host = arg;
    if (0 == v) {
        return host->root_uri;
    }
    dvm_virtual_uri(v, host->port, host->scratch_uri, sizeof(host->scratch_uri));
    return host->scratch_uri;
}

/* A copy of a kind's inventory under this node's name; only the first node of a kind keeps the
 * XML (the root asks the first node of each distinct topology for it). */
static int clone_inventory(const orte_inventory_t *kind, const char *name, bool with_xml,
                           orte_inventory_t **out)
{
    opal_buffer_t packed, reading;
    opal_buffer_init(&packed);
    opal_buffer_init(&reading);
    int rc = orte_inventory_pack(&packed, kind, with_xml);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_load(&reading, packed.base, packed.used);
    }
    if (HERD_SUCCESS == rc) {
        rc = orte_inventory_unpack(&reading, out);
    }
    opal_buffer_destruct(&packed);
    opal_buffer_destruct(&reading);
    if (HERD_SUCCESS == rc) {
        free((*out)->node_name);
        (*out)->node_name = strdup(name);
        if (NULL == (*out)->node_name) {
            orte_inventory_free(*out);
            *out = NULL;
            rc = HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    return rc;
}

/* Node i: its identity (the host's bootstrap with its own vpid), its inventory, its bootstrap
 * (name, topology, listener, parent and ancestors), then the daemon's own open and join. */
static int start_node(virtual_host_t *host, const orte_dvm_t *first, const dvm_boot_t *boot,
                      uint32_t i, uint32_t kind, int listen_fd)
{
    virtual_node_t *n = &host->nodes[i];
    orte_dvm_t *dvm = &n->dvm;
    bool first_of_kind = NULL == host->kinds[kind];
    int rc = HERD_SUCCESS;
    dvm_daemon_init(dvm);
    dvm->hosted = true;
    dvm->base = host->base;
    dvm->id = first->id;
    memcpy(dvm->secret, first->secret, sizeof(dvm->secret));
    dvm->vpid = first->vpid + i * host->stride;
    dvm->size = first->size;
    dvm->radix = first->radix;
    dvm->survive_loss = first->survive_loss;
    dvm->daemon.names = host->allocation;
    dvm->daemon.session_ports = host->session_ports;
    dvm->daemon.map_queue = host->map_queue;
    if (first_of_kind) {
        rc = orte_inventory_collect(host->names[i], host->topologies[kind], boot->fabric_components,
                                    &host->kinds[kind]);
    }
    if (HERD_SUCCESS == rc) {
        rc = clone_inventory(host->kinds[kind], host->names[i], first_of_kind, &dvm->daemon.mine);
    }
    if (HERD_SUCCESS != rc) {
        opal_show_help(DVM_HELP_FILE, "no-node-topology", false, dvm->vpid, host->names[i],
                       opal_strerror(rc));
        return rc;
    }
    orte_vpid_t parent = orte_radix_parent(dvm->vpid, dvm->radix);
    snprintf(n->parent_uri, sizeof(n->parent_uri), "%s", host_uri_of(dvm, parent, host));
    n->ancestors = dvm_boot_ancestors(dvm, dvm->vpid, host_uri_of, host);
    if (NULL == n->ancestors) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    n->boot = *boot;
    n->boot.node = host->names[i];
    n->boot.topology = host->topologies[kind];
    n->boot.parent_uri = n->parent_uri;
    n->boot.ancestors = n->ancestors;
    n->boot.listen_fd = (uint32_t) listen_fd;
    n->boot.plm_name = NULL;
    n->opened = true;
    host->live++;
    rc = dvm_daemon_open(dvm, &n->boot, false);
    if (HERD_SUCCESS == rc) {
        rc = dvm_daemon_join(dvm, &n->boot);
    }
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* the host's loop */

/* Session daemons of every node: reaped by their node; anything else re-parented to us is an
 * orphan nobody watches. */
static void host_children_exited(virtual_host_t *host)
{
    size_t total = 0, k = 0;
    for (uint32_t i = 0; i < host->count; ++i) {
        if (host->nodes[i].opened && !host->nodes[i].released) {
            dvm_jobs_reap(&host->nodes[i].dvm, false);
            total += host->nodes[i].dvm.daemon.num_sessions;
        }
    }
    pid_t *known = malloc((total + 1) * sizeof(*known));
    if (NULL == known) {
        return;
    }
    for (uint32_t i = 0; i < host->count; ++i) {
        const virtual_node_t *n = &host->nodes[i];
        for (size_t s = 0; n->opened && !n->released && s < n->dvm.daemon.num_sessions; ++s) {
            if (n->dvm.daemon.sessions[s].pid > 0) {
                known[k++] = n->dvm.daemon.sessions[s].pid;
            }
        }
    }
    orte_orphans_kill(known, k);
    free(known);
}

static void host_signal_cb(int signo, void *arg)
{
    virtual_host_t *host = arg;
    if (SIGCHLD == signo) {
        host_children_exited(host);
        return;
    }
    for (uint32_t i = 0; i < host->count; ++i) {
        virtual_node_t *n = &host->nodes[i];
        if (n->opened && !n->released && !n->dvm.done) {
            n->dvm.ops->signal(&n->dvm, signo);
        }
    }
}

static void release_node(virtual_host_t *host, virtual_node_t *n, int *status)
{
    if (HERD_SUCCESS != n->dvm.status && HERD_SUCCESS == *status) {
        *status = n->dvm.status;
    }
    n->dvm.stopping = true;
    dvm_release_runtime(&n->dvm);
    dvm_daemon_free(&n->dvm);
    free(n->ancestors);
    n->ancestors = NULL;
    n->released = true;
    host->live--;
}

/* Until every node is done (told to stop, its parent gone, a signal), releasing each as it
 * finishes. */
static void host_serve(virtual_host_t *host, int *status)
{
    while (host->live > 0) {
        opal_event_base_loop(host->base, false);
        for (uint32_t i = 0; i < host->count; ++i) {
            virtual_node_t *n = &host->nodes[i];
            if (n->opened && !n->released && n->dvm.done) {
                release_node(host, n, status);
            }
        }
    }
}

static void flush_cb(int fd, short what, void *arg)
{
}

static void host_close(virtual_host_t *host)
{
    int ignored = HERD_SUCCESS;
    for (uint32_t i = 0; NULL != host->nodes && i < host->count; ++i) {
        if (host->nodes[i].opened && !host->nodes[i].released) {
            release_node(host, &host->nodes[i], &ignored);
        }
    }
    if (NULL != host->base) {
        /* the nodes' goodbyes go out in one round, bounded by a timer */
        opal_event_t *flush = NULL;
        struct timeval tv = {.tv_sec = 0, .tv_usec = 2000};
        if (HERD_SUCCESS == opal_event_timer_create(host->base, false, flush_cb, NULL, &flush)) {
            opal_event_add(flush, &tv);
            opal_event_base_loop(host->base, true);
            opal_event_free(flush);
        }
    }
    orte_grpcomm_base_close();
    orte_overlay_base_close();
    opal_signal_pipe_close(host->signals);
    dvm_map_queue_free(host->map_queue);
    opal_event_base_free(host->base);
    for (uint32_t k = 0; NULL != host->kinds && NULL != host->topologies && host->topologies[k];
         ++k) {
        orte_inventory_free(host->kinds[k]);
    }
    free(host->kinds);
    free(host->nodes);
    free(host->session_ports);
    orte_allocation_free(host->allocation);
    orte_ras_base_close();
    opal_argv_free(host->names);
    opal_argv_free(host->topologies);
}

/* The allocation again (every node's name), checked against this process's own nodes, and the
 * session ports. */
static int host_names(virtual_host_t *host, const orte_dvm_t *first)
{
    char **ports = opal_argv_split(getenv(DVM_BOOT_VIRTUAL_SESSION_PORTS), ',');
    orte_dvm_t vars_holder;
    int rc = dvm_load_vars(&vars_holder);
    host->num_session_ports = opal_argv_count(ports);
    host->session_ports = calloc(host->num_session_ports + 1, sizeof(*host->session_ports));
    if (HERD_SUCCESS == rc &&
        (NULL == host->session_ports ||
         host->num_session_ports != (size_t) vars_holder.vars->session_slots)) {
        bootstrap_error("session ports");
        rc = HERD_ERR_BAD_PARAM;
    }
    for (size_t i = 0; HERD_SUCCESS == rc && i < host->num_session_ports; ++i) {
        unsigned long port = strtoul(ports[i], NULL, 10);
        if (0 == port || port > 65535) {
            bootstrap_error("a session port");
            rc = HERD_ERR_BAD_PARAM;
        }
        host->session_ports[i] = (uint16_t) port;
    }
    opal_argv_free(ports);
    if (HERD_SUCCESS == rc) {
        rc = orte_ras_base_allocate(&host->allocation);
    }
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    bool same = host->allocation->num_nodes + 1 == first->size;
    for (uint32_t i = 0; same && i < host->count; ++i) {
        same = 0 == strcmp(host->allocation->nodes[first->vpid - 1 + i * host->stride].name,
                           host->names[i]);
    }
    if (!same) {
        opal_show_help(DVM_HELP_FILE, "virtual-allocation-differs", false, first->vpid,
                       host->names[0]);
        return HERD_ERR_SILENT;
    }
    return HERD_SUCCESS;
}

/* The loop and signals, then every node in vpid order. */
static int host_run(virtual_host_t *host, const orte_dvm_t *first, const dvm_boot_t *boot,
                    char **kinds, char **fds)
{
    static const int caught[] = {SIGCHLD, SIGTERM, SIGINT, SIGHUP, 0};
    int rc = opal_event_base_create(&host->base);
    if (HERD_SUCCESS == rc) {
        rc = opal_signal_pipe_open(host->base, caught, host_signal_cb, host, &host->signals);
    }
    if (HERD_SUCCESS == rc) {
        rc = dvm_map_queue_new(host->base, &host->map_queue);
    }
    size_t num_kinds = opal_argv_count(host->topologies);
    host->kinds = calloc(num_kinds, sizeof(*host->kinds));
    host->nodes = calloc(host->count, sizeof(*host->nodes));
    if (HERD_SUCCESS == rc && (NULL == host->kinds || NULL == host->nodes)) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
    }
    if (HERD_SUCCESS == rc) {
        rc = host_names(host, first);
    }
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < host->count; ++i) {
        unsigned long kind = strtoul(kinds[i], NULL, 10);
        long fd = strtol(fds[i], NULL, 10);
        if (kind >= num_kinds || fd < 0) {
            bootstrap_error("a node's topology or listener");
            rc = HERD_ERR_BAD_PARAM;
            break;
        }
        rc = start_node(host, first, boot, i, (uint32_t) kind, (int) fd);
    }
    int status = rc;
    if (HERD_SUCCESS == rc) {
        host_serve(host, &status);
    }
    return status;
}

int dvm_virtual_host_main(void)
{
    virtual_host_t host;
    orte_dvm_t first;
    dvm_boot_t boot;
    char **kinds = NULL, **fds = NULL;
    memset(&host, 0, sizeof(host));
    dvm_daemon_init(&first);
    if (HERD_SUCCESS != dvm_boot_read(&first, false, &boot) ||
        HERD_SUCCESS != read_lists(&host, &first, &kinds, &fds)) {
        opal_argv_free(host.names);
        opal_argv_free(host.topologies);
        opal_argv_free(kinds);
        opal_argv_free(fds);
        return 1;
    }
    host.root_uri = boot.parent_uri;
    /* a process started by a local launcher never outlives it, even if it is killed with -9 */
    const char *launcher = getenv("HERD_DVM_LAUNCHER_PID");
    if (NULL != launcher) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != (pid_t) strtol(launcher, NULL, 10)) {
            return 1;
        }
    }
    orte_orphans_adopt();
    /* synthetic topologies: hwloc's discovery plugins would only cost time to load */
    setenv("HWLOC_PLUGINS_PATH", "/dev/null", 1);
    int rc = HERD_ERROR;
    if (HERD_SUCCESS == opal_mca_init()) {
        rc = host_run(&host, &first, &boot, kinds, fds);
        host_close(&host);
        opal_mca_finalize();
    }
    opal_argv_free(kinds);
    opal_argv_free(fds);
    return HERD_SUCCESS == rc ? 0 : 1;
}
