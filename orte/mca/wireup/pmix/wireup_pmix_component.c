/* SPDX-License-Identifier: BSD-3-Clause */
/* wireup pmix: the component, and the module's life cycle: start the PMIx server with our
 * topology in the job's private folder, register each namespace with every process's place,
 * give each local process the server's environment. */
#include "herd_config.h"

#include <hwloc.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/base/mca_var.h"
#include "opal/util/argv.h"
#include "opal/util/jobdb.h"
#include "opal/util/output.h"
#include "opal/util/topology.h"
#include "orte/mca/wireup/pmix/wireup_pmix.h"

#define WIREUP_PMIX_DEFAULT_PRIORITY 30
/* Namespaces up to this size get every process's data registered on every node. */
#define WIREUP_PMIX_DEFAULT_PROC_DATA_LIMIT 4096u

static struct {
    int priority;                /* wireup_pmix_priority */
    bool ompi_hints;             /* wireup_pmix_ompi_hints */
    unsigned proc_data_limit;    /* wireup_pmix_proc_data_limit */
    wireup_pmix_state_t *active; /* the running server: one per process */
    bool served;                 /* a server ran in this process: OpenPMIx cannot start another */
} wireup_pmix_component_state = {
    .priority = WIREUP_PMIX_DEFAULT_PRIORITY,
    .ompi_hints = true,
    .proc_data_limit = WIREUP_PMIX_DEFAULT_PROC_DATA_LIMIT,
};

int wireup_pmix_output(void)
{
    return orte_wireup_base_framework.output;
}

wireup_pmix_state_t *wireup_pmix_active(void)
{
    return wireup_pmix_component_state.active;
}

void wireup_pmix_release(wireup_pmix_state_t *st)
{
    if (1 == atomic_fetch_sub(&st->refs, 1)) {
        for (uint32_t i = 0; i < st->num_nss; ++i) {
            if (NULL != st->nss[i]) {
                free(st->nss[i]->locals);
                free(st->nss[i]);
            }
        }
        free(st->nss);
        free(st);
    }
}

wireup_pmix_ns_t *wireup_pmix_find_ns(wireup_pmix_state_t *st, const char *name)
{
    for (uint32_t i = 0; i < st->num_nss; ++i) {
        if (NULL != st->nss[i] && 0 == strncmp(st->nss[i]->name, name, PMIX_MAX_NSLEN)) {
            return st->nss[i];
        }
    }
    return NULL;
}

wireup_pmix_local_t *wireup_pmix_find_local(wireup_pmix_ns_t *pns, uint32_t rank)
{
    uint32_t lo = 0, hi = pns->num_local;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (pns->locals[mid].rank == rank) {
            return &pns->locals[mid];
        }
        if (pns->locals[mid].rank < rank) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* start and stop */

/* The value an Open MPI parameter file gives pml (its last "pml = value" line) into value;
 * false when it gives none. */
static bool ompi_file_pml(const char *path, char *value, size_t size)
{
    FILE *f = fopen(path, "r");
    if (NULL == f) {
        return false;
    }
    char line[512];
    bool found = false;
    while (NULL != fgets(line, sizeof(line), f)) {
        const char *p = line + strspn(line, " \t");
        if (0 != strncmp(p, "pml", 3)) {
            continue;
        }
        p += 3 + strspn(p + 3, " \t");
        if ('=' != *p) {
            continue;
        }
        p += 1 + strspn(p + 1, " \t");
        size_t len = strcspn(p, " \t\r\n#");
        snprintf(value, size, "%.*s", (int) len, p);
        found = true;
    }
    fclose(f);
    return found;
}

/* What OMPI_MCA_pml should be for Open MPI to skip cm on top of what its parameter files say
 * (an environment variable replaces their value: Debian's own file excludes ucx), into hint;
 * false when nothing needs saying (the files name the PMLs to use). */
static bool ompi_pml_hint(char *hint, size_t size)
{
    const char *home = getenv("HOME");
    char user_file[PATH_MAX], value[256] = "";
    snprintf(user_file, sizeof(user_file), "%s/.openmpi/mca-params.conf",
             NULL != home ? home : "/nonexistent");
    if (!ompi_file_pml(user_file, value, sizeof(value))) {
        ompi_file_pml("/etc/openmpi/openmpi-mca-params.conf", value, sizeof(value));
    }
    if ('\0' == value[0]) {
        snprintf(hint, size, "^cm");
        return true;
    }
    if ('^' != value[0]) {
        return false; /* a list of PMLs to use: cm only if it is named, as the user wants */
    }
    char copy[256];
    snprintf(copy, sizeof(copy), "%s", value + 1);
    for (char *save = NULL, *name = strtok_r(copy, ",", &save); NULL != name;
         name = strtok_r(NULL, ",", &save)) {
        if (0 == strcmp(name, "cm")) {
            return false; /* excluded already */
        }
    }
    return (size_t) snprintf(hint, size, "%s,cm", value) < size;
}

/* Whether this node has a device one of Open MPI's MTLs could drive (InfiniPath, Omni-Path,
 * Slingshot, or any RDMA device): only then may its MTL-based PML (cm) be chosen. */
static bool node_has_mtl_device(void)
{
    static const char *const paths[] = {"/sys/class/infiniband", "/dev/ipath", "/dev/hfi1_0",
                                        "/dev/cxi0"};
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); ++i) {
        if (0 == access(paths[i], F_OK)) {
            return true;
        }
    }
    return false;
}

/* Every client deregistration asked for is done (their cleanup with them); at most 5 s. */
static void wait_deregistered(wireup_pmix_state_t *st)
{
    for (int i = 0; i < 5000 && atomic_load(&st->deregistering) > 0; ++i) {
        usleep(1000);
    }
}

static int pmix_module_init(const orte_wireup_host_t *host, void **state_out)
{
    if (NULL != wireup_pmix_component_state.active) {
        return HERD_ERR_NOT_AVAILABLE; /* the library holds one server per process */
    }
    if (wireup_pmix_component_state.served) {
        /* OpenPMIx 4.2's listener thread dies on a stale descriptor after a restart */
        opal_output_verbose(1, wireup_pmix_output(),
                            "wireup pmix: a PMIx server already ran in this process; OpenPMIx "
                            "cannot start a second one");
        return HERD_ERR_NOT_AVAILABLE;
    }
    wireup_pmix_state_t *st = calloc(1, sizeof(*st));
    if (NULL == st) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    st->host = host;
    atomic_init(&st->refs, 1);
    atomic_init(&st->finalizing, false);
    atomic_init(&st->deregistering, 0);
    /* A herdrun run under another launcher's PMIx must not make our server that one's client. */
    extern char **environ;
    for (size_t i = 0; NULL != environ[i];) {
        if (0 == strncmp(environ[i], "PMIX_", 5) && 0 != strncmp(environ[i], "PMIX_MCA_", 9)) {
            char name[256];
            size_t len = strcspn(environ[i], "=");
            snprintf(name, sizeof(name), "%.*s", (int) (len < 255 ? len : 255), environ[i]);
            unsetenv(name);
        } else {
            ++i;
        }
    }
    /* Given our topology, the library does not discover its own (more than ten times slower). */
    hwloc_topology_t topo = NULL;
    int rc = opal_topology_load_local(&topo);
    pmix_info_t info[4];
    size_t n = 0;
    bool no = false;
    PMIX_INFO_LOAD(&info[n], PMIX_SERVER_TMPDIR, host->tmpdir, PMIX_STRING);
    n++;
    PMIX_INFO_LOAD(&info[n], PMIX_SYSTEM_TMPDIR, host->tmpdir, PMIX_STRING);
    n++;
    PMIX_INFO_LOAD(&info[n], PMIX_SERVER_TOOL_SUPPORT, &no, PMIX_BOOL);
    n++;
    if (HERD_SUCCESS == rc) {
        st->hwloc_topology = topo;
        st->topology.source = "hwloc";
        st->topology.topology = topo;
        PMIX_INFO_LOAD(&info[n], PMIX_TOPOLOGY2, &st->topology, PMIX_TOPO);
        n++;
    }
    pmix_status_t prc = PMIx_server_init(&wireup_pmix_server_module, info, n);
    /* the first three only: destructing the topology's entry would destroy the topology the
     * server keeps using (it is ours to destroy after the server stops) */
    for (size_t i = 0; i < 3; ++i) {
        PMIX_INFO_DESTRUCT(&info[i]);
    }
    if (n > 3 && PMIX_TOPO == info[3].value.type) {
        /* the library's copy of our pmix_topology_t, with its copy of the source's name */
        free(info[3].value.data.topo->source);
        free(info[3].value.data.topo);
    }
    if (PMIX_SUCCESS != prc) {
        opal_output_verbose(1, wireup_pmix_output(),
                            "wireup pmix: the PMIx server does not start (%s): PMIx clients "
                            "on %s run without it",
                            PMIx_Error_string(prc), host->node_name);
        if (NULL != topo) {
            hwloc_topology_destroy(topo);
        }
        free(st);
        return HERD_ERR_NOT_AVAILABLE;
    }
    st->server_up = true;
    wireup_pmix_component_state.served = true;
    pmix_status_t arc = wireup_pmix_register_attributes();
    if (PMIX_SUCCESS != arc) {
        opal_output_verbose(1, wireup_pmix_output(),
                            "wireup pmix: the PMIx server takes no list of herd's attributes (%s)",
                            PMIx_Error_string(arc));
    }
    /* decided once per session daemon: what the node has does not change during a job */
    if (wireup_pmix_component_state.ompi_hints) {
        if (node_has_mtl_device() || !ompi_pml_hint(st->pml_hint, sizeof(st->pml_hint))) {
            st->pml_hint[0] = '\0';
        }
        if (NULL != topo) {
            int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
            st->num_pus = pus > 0 ? (uint32_t) pus : 0;
        }
    }
    rc = orte_wireup_set_dmodex_handler(host->engine, ORTE_WIREUP_KIND_PMIX,
                                        wireup_pmix_dmodex_handler, st);
    if (HERD_SUCCESS == rc) {
        rc = orte_wireup_set_dmodex_handler(host->engine, ORTE_WIREUP_KIND_PROCS,
                                            wireup_pmix_procs_handler, st);
    }
    if (HERD_SUCCESS == rc) {
        rc = orte_wireup_set_dmodex_handler(host->engine, ORTE_WIREUP_KIND_CTRL,
                                            wireup_pmix_ctrl_handler, st);
    }
    if (HERD_SUCCESS != rc) {
        orte_wireup_set_dmodex_handler(host->engine, ORTE_WIREUP_KIND_PMIX, NULL, NULL);
        orte_wireup_set_dmodex_handler(host->engine, ORTE_WIREUP_KIND_PROCS, NULL, NULL);
        PMIx_server_finalize();
        if (NULL != topo) {
            hwloc_topology_destroy(topo);
        }
        free(st);
        return rc;
    }
    wireup_pmix_component_state.active = st;
    *state_out = st;
    return HERD_SUCCESS;
}

static void pmix_module_finalize(void *state)
{
    wireup_pmix_state_t *st = state;
    wait_deregistered(st);
    /* upcalls still queued answer the library with an error and touch nothing else */
    atomic_store(&st->finalizing, true);
    opal_event_base_poll(st->host->base);
    orte_wireup_set_dmodex_handler(st->host->engine, ORTE_WIREUP_KIND_PMIX, NULL, NULL);
    orte_wireup_set_dmodex_handler(st->host->engine, ORTE_WIREUP_KIND_PROCS, NULL, NULL);
    orte_wireup_set_dmodex_handler(st->host->engine, ORTE_WIREUP_KIND_CTRL, NULL, NULL);
    if (st->server_up) {
        PMIx_server_finalize();
    }
    if (NULL != st->hwloc_topology) {
        hwloc_topology_destroy((hwloc_topology_t) st->hwloc_topology);
        st->hwloc_topology = NULL;
    }
    wireup_pmix_component_state.active = NULL;
    wireup_pmix_release(st);
}

/* The session daemon exits next: PMIx_server_deregister_nspace blocks until the server's
 * thread has cleaned up and PMIx_server_finalize takes longer still, for memory the exit frees
 * anyway and files in the wireup folder (PMIX_SERVER_TMPDIR), which the
 * session removes. Upcalls still arriving answer with an error; state is never freed. */
static void pmix_module_abandon(void *state)
{
    wireup_pmix_state_t *st = state;
    atomic_store(&st->finalizing, true);
    wait_deregistered(st);
}

/* ------------------------------------------------------------------------------------------ */
/* namespaces */

/* A growing string. */
typedef struct text {
    char *s;
    size_t len, cap;
    bool failed;
} text_t;

static void text_add(text_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_add(text_t *t, const char *fmt, ...)
{
    va_list ap;
    for (int attempt = 0; attempt < 2 && !t->failed; ++attempt) {
        va_start(ap, fmt);
        int n = vsnprintf(NULL != t->s ? t->s + t->len : NULL, t->cap - t->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = true;
            return;
        }
        if (t->len + (size_t) n < t->cap) {
            t->len += (size_t) n;
            return;
        }
        size_t cap = 2 * (t->cap + (size_t) n) + 64;
        char *grown = realloc(t->s, cap);
        if (NULL == grown) {
            t->failed = true;
            return;
        }
        t->s = grown;
        t->cap = cap;
    }
}

/* The information of one local process (PMIX_PROC_DATA). */
static int proc_data(wireup_pmix_state_t *st, const orte_wireup_nspace_t *ns, uint32_t rank,
                     const uint32_t *node_id, pmix_info_t *info)
{
    opal_jobdb_proc_view_t view;
    if (HERD_SUCCESS != opal_jobdb_get_proc(ns->db, rank, &view)) {
        return HERD_ERR_NOT_FOUND;
    }
    pmix_data_array_t *array;
    PMIX_DATA_ARRAY_CREATE(array, 8, PMIX_INFO);
    if (NULL == array) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    pmix_info_t *pi = array->array;
    size_t n = 0;
    pmix_rank_t prank = rank;
    uint32_t app = view.app, nodeid = node_id[view.node];
    uint16_t local_rank = (uint16_t) view.local_rank, node_rank = (uint16_t) view.node_rank;
    PMIX_INFO_LOAD(&pi[n++], PMIX_RANK, &prank, PMIX_PROC_RANK);
    PMIX_INFO_LOAD(&pi[n++], PMIX_APPNUM, &app, PMIX_UINT32);
    PMIX_INFO_LOAD(&pi[n++], PMIX_LOCAL_RANK, &local_rank, PMIX_UINT16);
    PMIX_INFO_LOAD(&pi[n++], PMIX_NODE_RANK, &node_rank, PMIX_UINT16);
    PMIX_INFO_LOAD(&pi[n++], PMIX_NODEID, &nodeid, PMIX_UINT32);
    PMIX_INFO_LOAD(&pi[n++], PMIX_HOSTNAME, ns->node_names[view.node], PMIX_STRING);
    /* where it is bound, as PMIx describes locality (procs on one node compare theirs) */
    if (view.bound && NULL != st->hwloc_topology && '\0' != view.cpuset[0]) {
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        pmix_cpuset_t cpuset = {.source = "hwloc", .bitmap = set};
        char *locality = NULL;
        if (NULL != set && 0 == hwloc_bitmap_list_sscanf(set, view.cpuset) &&
            PMIX_SUCCESS == PMIx_server_generate_locality_string(&cpuset, &locality) &&
            NULL != locality) {
            PMIX_INFO_LOAD(&pi[n++], PMIX_LOCALITY_STRING, locality, PMIX_STRING);
            free(locality);
        }
        if (NULL != set) {
            hwloc_bitmap_free(set);
        }
    }
    array->size = n;
    PMIX_INFO_LOAD(info, PMIX_PROC_DATA, array, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(array);
    return HERD_SUCCESS;
}

/* Registering the local clients one at a time, blocking, waits for the library's thread once
 * per process (long on a busy node): they are registered together, before any of
 * them starts, and waited for once. */
typedef struct register_batch {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    uint32_t pending;
    pmix_status_t status; /* the first failure */
} register_batch_t;

static void register_done(pmix_status_t status, void *cbdata)
{
    register_batch_t *b = cbdata;
    pthread_mutex_lock(&b->lock);
    if (PMIX_SUCCESS != status && PMIX_OPERATION_SUCCEEDED != status && PMIX_SUCCESS == b->status) {
        b->status = status;
    }
    if (0 == --b->pending) {
        pthread_cond_signal(&b->cond);
    }
    pthread_mutex_unlock(&b->lock);
}

static int register_clients(wireup_pmix_state_t *st, wireup_pmix_ns_t *pns)
{
    register_batch_t b = {.lock = PTHREAD_MUTEX_INITIALIZER,
                          .cond = PTHREAD_COND_INITIALIZER,
                          .status = PMIX_SUCCESS};
    uid_t uid = getuid();
    gid_t gid = getgid();
    pthread_mutex_lock(&b.lock);
    for (uint32_t l = 0; l < pns->num_local; ++l) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, pns->name, pns->locals[l].rank);
        b.pending++;
        pthread_mutex_unlock(&b.lock); /* the callback may run before the call returns */
        pmix_status_t prc = PMIx_server_register_client(&p, uid, gid, NULL, register_done, &b);
        pthread_mutex_lock(&b.lock);
        if (PMIX_OPERATION_SUCCEEDED == prc || PMIX_SUCCESS != prc) {
            /* done at once (or refused): no callback will come */
            b.pending--;
            if (PMIX_OPERATION_SUCCEEDED != prc && PMIX_SUCCESS == b.status) {
                b.status = prc;
            }
        }
        if (PMIX_SUCCESS == prc || PMIX_OPERATION_SUCCEEDED == prc) {
            pns->locals[l].registered = true;
            pns->locals[l].connected = false;
            pns->locals[l].finalized = false;
        }
    }
    while (b.pending > 0) {
        pthread_cond_wait(&b.cond, &b.lock);
    }
    pthread_mutex_unlock(&b.lock);
    pthread_mutex_destroy(&b.lock);
    pthread_cond_destroy(&b.cond);
    if (PMIX_SUCCESS != b.status) {
        opal_output(OPAL_OUTPUT_STDERR,
                    "wireup pmix on %s: the PMIx server refused a process of namespace %s: %s",
                    st->host->node_name, pns->name, PMIx_Error_string(b.status));
        return HERD_ERROR;
    }
    return HERD_SUCCESS;
}

/* Register a namespace: its size, nodes and every process's place (node and proc maps, the
 * library's compressed regular expressions), the apps, and what each local process needs. */
static int register_nspace(wireup_pmix_state_t *st, wireup_pmix_ns_t *pns)
{
    const orte_wireup_nspace_t *ns = pns->ns;
    uint32_t nn = ns->num_nodes, napps = ns->num_apps > 0 ? ns->num_apps : 1;
    uint32_t *node_count = calloc(nn > 0 ? nn : 1, sizeof(*node_count));
    uint32_t *node_id = calloc(nn > 0 ? nn : 1, sizeof(*node_id));
    uint32_t *app_size = calloc(napps, sizeof(*app_size));
    uint32_t *app_leader = calloc(napps, sizeof(*app_leader));
    uint32_t *node_of = malloc((ns->num_procs > 0 ? ns->num_procs : 1) * sizeof(*node_of));
    text_t nodes = {0}, procs = {0}, peers = {0};
    char *node_regex = NULL, *proc_regex = NULL;
    pmix_info_t *info = NULL;
    size_t ninfo = 0, cap = 0;
    int rc = HERD_SUCCESS;
    if (NULL == node_count || NULL == node_id || NULL == app_size || NULL == app_leader ||
        NULL == node_of) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    for (uint32_t a = 0; a < napps; ++a) {
        app_leader[a] = UINT32_MAX;
    }
    for (uint32_t r = 0; r < ns->num_procs; ++r) {
        opal_jobdb_proc_view_t view;
        if (HERD_SUCCESS != opal_jobdb_get_proc(ns->db, r, &view) || view.node >= nn ||
            view.app >= napps) {
            rc = HERD_ERR_NOT_FOUND;
            goto out;
        }
        node_of[r] = view.node;
        node_count[view.node]++;
        app_size[view.app]++;
        if (UINT32_MAX == app_leader[view.app]) {
            app_leader[view.app] = r;
        }
    }
    /* the nodes with processes, in node order: ids 0, 1, ... in the maps */
    uint32_t num_used = 0;
    for (uint32_t i = 0; i < nn; ++i) {
        node_id[i] = (node_count[i] > 0) ? num_used++ : UINT32_MAX;
        if (node_count[i] > 0) {
            text_add(&nodes, "%s%s", 0 == node_id[i] ? "" : ",", ns->node_names[i]);
        }
    }
    for (uint32_t i = 0; i < nn; ++i) {
        if (0 == node_count[i]) {
            continue;
        }
        bool first = true;
        text_add(&procs, "%s", 0 == node_id[i] ? "" : ";");
        for (uint32_t r = 0; r < ns->num_procs; ++r) {
            if (node_of[r] == i) {
                text_add(&procs, "%s%u", first ? "" : ",", r);
                first = false;
            }
        }
    }
    for (uint32_t l = 0; l < ns->num_local; ++l) {
        text_add(&peers, "%s%u", 0 == l ? "" : ",", ns->local_ranks[l]);
    }
    if (nodes.failed || procs.failed || peers.failed) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    if (PMIX_SUCCESS != PMIx_generate_regex(nodes.s, &node_regex) ||
        PMIX_SUCCESS != PMIx_generate_ppn(procs.s, &proc_regex)) {
        rc = HERD_ERROR;
        goto out;
    }
    /* every process's data, as mpirun registers it (a process asks another node's process's
     * local rank, as OpenPMIx's dynamic example does), up to wireup_pmix_proc_data_limit */
    bool all_procs = ns->num_procs <= wireup_pmix_component_state.proc_data_limit;
    cap = 20 + napps + (all_procs ? ns->num_procs : ns->num_local);
    PMIX_INFO_CREATE(info, cap);
    if (NULL == info) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    /* the DVM's slots, as mpirun gives them, even when the job oversubscribes them */
    uint32_t size = ns->num_procs, univ = ns->universe_size > 0 ? ns->universe_size : size;
    uint32_t max_procs = univ > size ? univ : size;
    uint32_t num_local = ns->num_local, num_apps = napps;
    pmix_rank_t leader = num_local > 0 ? ns->local_ranks[0] : 0;
    PMIX_INFO_LOAD(&info[ninfo++], PMIX_JOBID, pns->name, PMIX_STRING);
    PMIX_INFO_LOAD(&info[ninfo++], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[ninfo++], PMIX_UNIV_SIZE, &univ, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[ninfo++], PMIX_MAX_PROCS, &max_procs, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[ninfo++], PMIX_NUM_NODES, &num_used, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[ninfo++], PMIX_JOB_NUM_APPS, &num_apps, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[ninfo++], PMIX_NODE_MAP, node_regex, PMIX_REGEX);
    PMIX_INFO_LOAD(&info[ninfo++], PMIX_PROC_MAP, proc_regex, PMIX_REGEX);
    PMIX_INFO_LOAD(&info[ninfo++], PMIX_LOCAL_SIZE, &num_local, PMIX_UINT32);
    if (num_local > 0) {
        PMIX_INFO_LOAD(&info[ninfo++], PMIX_LOCAL_PEERS, peers.s, PMIX_STRING);
        PMIX_INFO_LOAD(&info[ninfo++], PMIX_LOCALLDR, &leader, PMIX_PROC_RANK);
    }
    if (UINT32_MAX != ns->parent_nspace &&
        NULL != st->host->nspace(st->host->ctx, ns->parent_nspace)) {
        pmix_proc_t parent;
        bool spawned = true;
        PMIX_LOAD_PROCID(&parent, st->host->nspace(st->host->ctx, ns->parent_nspace)->name,
                         ns->parent_rank);
        PMIX_INFO_LOAD(&info[ninfo++], PMIX_PARENT_ID, &parent, PMIX_PROC);
        PMIX_INFO_LOAD(&info[ninfo++], PMIX_SPAWNED, &spawned, PMIX_BOOL);
    }
    for (uint32_t a = 0; a < napps; ++a) {
        pmix_data_array_t *array;
        PMIX_DATA_ARRAY_CREATE(array, 3, PMIX_INFO);
        if (NULL == array) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
            goto out;
        }
        pmix_info_t *ai = array->array;
        pmix_rank_t app_ldr = UINT32_MAX != app_leader[a] ? app_leader[a] : 0;
        PMIX_INFO_LOAD(&ai[0], PMIX_APPNUM, &a, PMIX_UINT32);
        PMIX_INFO_LOAD(&ai[1], PMIX_APP_SIZE, &app_size[a], PMIX_UINT32);
        PMIX_INFO_LOAD(&ai[2], PMIX_APPLDR, &app_ldr, PMIX_PROC_RANK);
        PMIX_INFO_LOAD(&info[ninfo++], PMIX_APP_INFO_ARRAY, array, PMIX_DATA_ARRAY);
        PMIX_DATA_ARRAY_FREE(array);
    }
    for (uint32_t k = 0; k < (all_procs ? ns->num_procs : num_local); ++k) {
        uint32_t rank = all_procs ? k : ns->local_ranks[k];
        if (HERD_SUCCESS != (rc = proc_data(st, ns, rank, node_id, &info[ninfo]))) {
            goto out;
        }
        ninfo++;
    }
    /* blocking without a callback: done when it returns */
    pmix_status_t prc =
        PMIx_server_register_nspace(pns->name, (int) num_local, info, ninfo, NULL, NULL);
    if (PMIX_SUCCESS != prc && PMIX_OPERATION_SUCCEEDED != prc) {
        opal_output(OPAL_OUTPUT_STDERR,
                    "wireup pmix on %s: the PMIx server refused namespace %s: %s",
                    st->host->node_name, pns->name, PMIx_Error_string(prc));
        rc = HERD_ERROR;
        goto out;
    }
    pns->registered = true;
    rc = register_clients(st, pns);

out:
    if (NULL != info) {
        PMIX_INFO_FREE(info, cap);
    }
    free(node_regex);
    free(proc_regex);
    free(nodes.s);
    free(procs.s);
    free(peers.s);
    free(node_count);
    free(node_id);
    free(app_size);
    free(app_leader);
    free(node_of);
    return rc;
}

static int pmix_module_add_nspace(void *state, const orte_wireup_nspace_t *ns)
{
    wireup_pmix_state_t *st = state;
    if (ns->index >= st->num_nss) {
        wireup_pmix_ns_t **grown = realloc(st->nss, (ns->index + 1) * sizeof(*grown));
        if (NULL == grown) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        memset(grown + st->num_nss, 0, (ns->index + 1 - st->num_nss) * sizeof(*grown));
        st->nss = grown;
        st->num_nss = ns->index + 1;
    }
    if (NULL != st->nss[ns->index] || strlen(ns->name) > PMIX_MAX_NSLEN) {
        return HERD_ERR_BAD_PARAM;
    }
    wireup_pmix_ns_t *pns = calloc(1, sizeof(*pns));
    if (NULL == pns || NULL == (pns->locals = calloc(ns->num_local > 0 ? ns->num_local : 1,
                                                     sizeof(*pns->locals)))) {
        free(pns);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    pns->ns = ns;
    PMIX_LOAD_NSPACE(pns->name, ns->name);
    pns->num_local = ns->num_local;
    for (uint32_t l = 0; l < ns->num_local; ++l) {
        pns->locals[l].rank = ns->local_ranks[l];
    }
    st->nss[ns->index] = pns;
    return register_nspace(st, pns);
}

static void pmix_module_del_nspace(void *state, const orte_wireup_nspace_t *ns)
{
    wireup_pmix_state_t *st = state;
    if (ns->index >= st->num_nss || NULL == st->nss[ns->index]) {
        return;
    }
    wireup_pmix_ns_t *pns = st->nss[ns->index];
    for (uint32_t l = 0; l < pns->num_local; ++l) {
        if (pns->locals[l].registered) {
            pmix_proc_t p;
            PMIX_LOAD_PROCID(&p, pns->name, pns->locals[l].rank);
            PMIx_server_deregister_client(&p, NULL, NULL);
        }
    }
    if (pns->registered) {
        PMIx_server_deregister_nspace(pns->name, NULL, NULL);
    }
    st->nss[ns->index] = NULL;
    free(pns->locals);
    free(pns);
}

/* ------------------------------------------------------------------------------------------ */
/* what Open MPI programs are told about the node */

/* Open MPI 4.1 probes its MTL-based PML (cm) in every process even where no device exists, and
 * one of the libraries it loads (libinfinipath) sleeps in that probe. Where the
 * node has no such device cm can never be chosen, so skipping it changes nothing but the
 * start-up time. Like mpirun, processes of an oversubscribed node are told to yield when idle.
 * Nothing the user set (environment, -x, Open MPI's parameter files) is overridden. */
static int ompi_hints(wireup_pmix_state_t *st, const orte_wireup_proc_t *proc,
                      orte_wireup_child_t *child)
{
    int rc = HERD_SUCCESS; /* with the hints off, pml_hint is empty and num_pus 0 */
    char **env = *child->env;
    if ('\0' != st->pml_hint[0] && opal_env_find(env, "OMPI_MCA_pml") < 0 &&
        opal_env_find(env, "OMPI_MCA_mtl") < 0 &&
        opal_env_find(env, "OMPI_MCA_mca_param_files") < 0) {
        rc = orte_wireup_child_setenv(child, "OMPI_MCA_pml", st->pml_hint);
    }
    if (HERD_SUCCESS == rc && st->num_pus > 0 && proc->ns->num_local > st->num_pus &&
        opal_env_find(*child->env, "OMPI_MCA_mpi_yield_when_idle") < 0) {
        rc = orte_wireup_child_setenv(child, "OMPI_MCA_mpi_yield_when_idle", "1");
    }
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* processes */

static int pmix_module_proc_setup(void *state, const orte_wireup_proc_t *proc,
                                  orte_wireup_child_t *child)
{
    wireup_pmix_state_t *st = state;
    wireup_pmix_ns_t *pns = (proc->ns->index < st->num_nss) ? st->nss[proc->ns->index] : NULL;
    wireup_pmix_local_t *local = (NULL != pns) ? wireup_pmix_find_local(pns, proc->rank) : NULL;
    if (NULL == local) {
        /* moved off a lost node: the namespace was registered without it here, so it runs
         * without a PMIx server (docs/errmgr.md) */
        return proc->moved ? HERD_SUCCESS : HERD_ERR_BAD_PARAM;
    }
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, pns->name, proc->rank);
    if (!local->registered) {
        if (local->exited) {
            /* restarted (errmgr restart): the library must be done with the old process's
             * deregistration, or its cleanup would undo this registration (the new client
             * would wait in PMIx_Init for ever) */
            wait_deregistered(st);
        }
        pmix_status_t prc = PMIx_server_register_client(&p, getuid(), getgid(), NULL, NULL, NULL);
        if (PMIX_SUCCESS != prc && PMIX_OPERATION_SUCCEEDED != prc) {
            return HERD_ERROR;
        }
        local->registered = true;
        /* a process started for this rank begins afresh (a test bed may run a rank again) */
        local->connected = false;
        local->finalized = false;
    }
    char **env = NULL;
    if (PMIX_SUCCESS != PMIx_server_setup_fork(&p, &env)) {
        return HERD_ERROR;
    }
    int rc = HERD_SUCCESS;
    for (size_t i = 0; HERD_SUCCESS == rc && NULL != env && NULL != env[i]; ++i) {
        char *eq = strchr(env[i], '=');
        if (NULL != eq) {
            *eq = '\0';
            rc = orte_wireup_child_setenv(child, env[i], eq + 1);
        }
    }
    for (size_t i = 0; NULL != env && NULL != env[i]; ++i) {
        free(env[i]);
    }
    free(env);
    /* Open MPI 4.1 takes a process without a well-formed daemon URI for a singleton: it gets
     * one (never contacted: everything goes through the PMIx server). */
    char uri[64];
    snprintf(uri, sizeof(uri), "%u.%u;tcp://127.0.0.1:1", proc->ns->seq + 1, proc->ns->index);
    if (HERD_SUCCESS == rc) {
        rc = orte_wireup_child_setenv(child, "OMPI_MCA_orte_local_daemon_uri", uri);
    }
    if (HERD_SUCCESS == rc) {
        rc = ompi_hints(st, proc, child);
    }
    return rc;
}

/* Its pid, for PMIx_Log and the process tables. */
static void pmix_module_proc_started(void *state, const orte_wireup_proc_t *proc, pid_t pid)
{
    wireup_pmix_state_t *st = state;
    wireup_pmix_ns_t *pns = (proc->ns->index < st->num_nss) ? st->nss[proc->ns->index] : NULL;
    wireup_pmix_local_t *local = (NULL != pns) ? wireup_pmix_find_local(pns, proc->rank) : NULL;
    if (NULL != local) {
        local->pid = pid;
        local->exited = pid <= 0; /* never started */
        local->exit_code = pid <= 0 ? 1 : 0;
        local->signo = 0;
        local->killed = false;
        local->called_abort = false;
    }
}

/* A client's deregistration is done by the library's thread while this loop serves the job's
 * other processes (waiting for each cost up to 2 ms per exit on a busy node); the end of the
 * server waits for them all, since that is when the library removes what the client registered
 * for cleanup. */
static void deregistered(pmix_status_t status, void *cbdata)
{
    wireup_pmix_state_t *st = cbdata;
    atomic_fetch_sub(&st->deregistering, 1);
}

static void pmix_module_proc_exited(void *state, const orte_wireup_proc_t *proc, bool *unfinalized)
{
    wireup_pmix_state_t *st = state;
    wireup_pmix_ns_t *pns = (proc->ns->index < st->num_nss) ? st->nss[proc->ns->index] : NULL;
    wireup_pmix_local_t *local = (NULL != pns) ? wireup_pmix_find_local(pns, proc->rank) : NULL;
    *unfinalized = false;
    if (NULL == local) {
        return;
    }
    local->exited = true;
    local->exit_code = proc->exit_code;
    local->signo = proc->signo;
    *unfinalized = local->connected && !local->finalized;
    if (local->registered) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, pns->name, proc->rank);
        atomic_fetch_add(&st->deregistering, 1);
        PMIx_server_deregister_client(&p, deregistered, st);
        local->registered = false;
    }
}

static const orte_wireup_module_t wireup_pmix_module = {
    .name = "pmix",
    .init = pmix_module_init,
    .add_nspace = pmix_module_add_nspace,
    .proc_setup = pmix_module_proc_setup,
    .proc_started = pmix_module_proc_started,
    .proc_exited = pmix_module_proc_exited,
    .del_nspace = pmix_module_del_nspace,
    .finalize = pmix_module_finalize,
    .abandon = pmix_module_abandon,
};

static int wireup_pmix_register(const opal_mca_component_t *component)
{
    static const opal_mca_var_def_t vars[] = {
        {.name = "priority",
         .type = OPAL_MCA_VAR_INT,
         .storage = &wireup_pmix_component_state.priority,
         .help = "Priority of the pmix wireup component (the session daemon "
                 "as a PMIx server, for Open MPI and other PMIx clients)"},
        {.name = "ompi_hints",
         .type = OPAL_MCA_VAR_BOOL,
         .storage = &wireup_pmix_component_state.ompi_hints,
         .help = "Tell Open MPI programs what this node has: skip the MTL-based PML "
                 "(OMPI_MCA_pml=^cm) where no InfiniPath, Omni-Path, Slingshot or RDMA device "
                 "exists (its probe costs up to 0.2 s per process), and yield when idle where the "
                 "node is oversubscribed. What the user set for pml, mtl or mpi_yield_when_idle "
                 "is never overridden"},
        {.name = "proc_data_limit",
         .type = OPAL_MCA_VAR_UNSIGNED,
         .storage = &wireup_pmix_component_state.proc_data_limit,
         .help = "Register every process's data (rank, local and node rank, app, node) on every "
                 "node for namespaces of at most this many processes, as mpirun does; bigger ones "
                 "get only their local processes' (a PMIx_Get of another node's process's local "
                 "rank then fails), which keeps a large job's registration short"},
    };

    wireup_pmix_component_state.priority = WIREUP_PMIX_DEFAULT_PRIORITY;
    wireup_pmix_component_state.ompi_hints = true;
    wireup_pmix_component_state.proc_data_limit = WIREUP_PMIX_DEFAULT_PROC_DATA_LIMIT;
    return opal_mca_var_register_table(component, vars, OPAL_MCA_VAR_DEFS_COUNT(vars));
}

static int wireup_pmix_query(const opal_mca_component_t *component, void **module, int *priority)
{
    *module = (void *) &wireup_pmix_module;
    *priority = wireup_pmix_component_state.priority;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(orte, wireup, pmix, .register_params = wireup_pmix_register,
                   .query = wireup_pmix_query);
