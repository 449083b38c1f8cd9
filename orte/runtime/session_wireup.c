/* SPDX-License-Identifier: BSD-3-Clause */
/* A session daemon's wireup (session_wireup.h): the modules, the engine, the job's private
 * folder on this node, and the namespaces. */
#include "herd_config.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opal/util/jobdb.h"
#include "opal/util/output.h"
#include "opal/util/tmpdir.h"
#include "orte/mca/wireup/base/base.h"
#include "orte/runtime/session_wireup.h"

typedef struct active_module {
    const orte_wireup_module_t *module;
    void *state;
} active_module_t;

/* What the engine needs to find a rank's daemon in one namespace. */
typedef struct ns_entry {
    orte_wireup_nspace_t ns;
    const opal_jobdb_t *db;
    orte_vpid_t *node_vpid; /* per node index */
    uint32_t num_nodes;
} ns_entry_t;

struct orte_session_wireup {
    orte_session_wireup_config_t config;
    orte_wireup_host_t host;
    orte_wireup_engine_t *engine;
    active_module_t *modules;
    size_t num_modules;
    ns_entry_t **nss;
    uint32_t num_nss;
    char tmpdir[4096];
    char names[128];
};

static orte_vpid_t rank_vpid(void *ctx, uint32_t rank)
{
    ns_entry_t *e = ctx;
    opal_jobdb_proc_view_t view;
    if (HERD_SUCCESS != opal_jobdb_get_proc(e->db, rank, &view) || view.node >= e->num_nodes) {
        return ORTE_VPID_INVALID;
    }
    return e->node_vpid[view.node];
}

static void host_abort(void *ctx, uint32_t nspace, uint32_t rank, int status, const char *message)
{
    orte_session_wireup_t *w = ctx;
    w->config.abort(w->config.ctx, nspace, rank, status, message);
}

static int host_spawn(void *ctx, const orte_wireup_spawn_request_t *request,
                      orte_wireup_spawn_fn_t cb, void *cbdata)
{
    orte_session_wireup_t *w = ctx;
    if (NULL == w->config.spawn) {
        return HERD_ERR_NOT_SUPPORTED;
    }
    return w->config.spawn(w->config.ctx, request, cb, cbdata);
}

static int host_signal(void *ctx, uint32_t nspace, uint32_t rank, orte_wireup_signal_how_t how,
                       int signo)
{
    orte_session_wireup_t *w = ctx;
    if (NULL == w->config.signal) {
        return HERD_ERR_NOT_SUPPORTED;
    }
    return w->config.signal(w->config.ctx, nspace, rank, how, signo);
}

static bool host_aborting(void *ctx)
{
    orte_session_wireup_t *w = ctx;
    return NULL != w->config.aborting && w->config.aborting(w->config.ctx);
}

static const orte_wireup_nspace_t *host_nspace(void *ctx, uint32_t index)
{
    orte_session_wireup_t *w = ctx;
    return (index < w->num_nss && NULL != w->nss[index]) ? &w->nss[index]->ns : NULL;
}

static int engine_send(void *ctx, orte_vpid_t dst, uint16_t tag, const struct iovec *iov,
                       int iovcnt)
{
    orte_session_wireup_t *w = ctx;
    return w->config.send(w->config.ctx, dst, tag, iov, iovcnt);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    if (0 != remove(path)) {
        opal_output_verbose(1, orte_wireup_base_framework.output, "wireup: cannot remove %s: %s",
                            path, strerror(errno));
    }
    return 0;
}

/* The wireup folder of the session daemon pid, inside our private folder. */
static int folder_of(pid_t pid, char *path, size_t size)
{
    char base[4096];
    int rc = opal_private_tmpdir(base, sizeof(base));
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if ((size_t) snprintf(path, size, "%s/job-%ld", base, (long) pid) >= size) {
        return HERD_ERR_BAD_PARAM;
    }
    return HERD_SUCCESS;
}

void orte_session_wireup_reaped(pid_t session_pid, int wstatus)
{
    char path[4096];
    if (WIFEXITED(wstatus) && 0 == WEXITSTATUS(wstatus)) {
        return;
    }
    if (session_pid > 0 && HERD_SUCCESS == folder_of(session_pid, path, sizeof(path))) {
        nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    }
}

/* A folder of this job on this node, inside our private folder: what modules leave in it (a
 * socket, PMIx's files) goes with it. */
static int make_tmpdir(orte_session_wireup_t *w)
{
    int rc = folder_of(getpid(), w->tmpdir, sizeof(w->tmpdir));
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    /* a folder left by an earlier daemon with our pid (it was killed) is removed first */
    nftw(w->tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (0 != mkdir(w->tmpdir, 0700)) {
        w->tmpdir[0] = '\0';
        return HERD_ERR_IN_ERRNO;
    }
    return HERD_SUCCESS;
}

int orte_session_wireup_start(const orte_session_wireup_config_t *config,
                              orte_session_wireup_t **out)
{
    size_t n = 0;
    *out = NULL;
    int rc = orte_wireup_base_open();
    if (HERD_ERR_NOT_FOUND == rc) {
        return HERD_SUCCESS; /* no component: processes get no wireup */
    }
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    const orte_wireup_module_t *const *modules = orte_wireup_base_modules(&n);
    orte_session_wireup_t *w = calloc(1, sizeof(*w));
    if (NULL == w || NULL == (w->modules = calloc(n > 0 ? n : 1, sizeof(*w->modules)))) {
        free(w);
        orte_wireup_base_close();
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    w->config = *config;
    if (HERD_SUCCESS != (rc = make_tmpdir(w))) {
        opal_output(OPAL_OUTPUT_STDERR,
                    "session daemon on %s: cannot make the job's folder for wireup sockets: %s",
                    config->node_name, opal_strerror(rc));
        orte_session_wireup_stop(w);
        return rc;
    }
    orte_wireup_engine_config_t ec = {.base = config->base,
                                      .me = config->me,
                                      .radix = config->radix,
                                      .names = config->names,
                                      .get_timeout_ms = orte_wireup_base_get_timeout_ms(),
                                      .send = engine_send,
                                      .ctx = w};
    if (HERD_SUCCESS != (rc = orte_wireup_engine_create(&ec, &w->engine))) {
        orte_session_wireup_stop(w);
        return rc;
    }
    w->host = (orte_wireup_host_t){.base = config->base,
                                   .node_name = config->node_name,
                                   .tmpdir = w->tmpdir,
                                   .engine = w->engine,
                                   .abort = host_abort,
                                   .spawn = host_spawn,
                                   .nspace = host_nspace,
                                   .signal = host_signal,
                                   .aborting = host_aborting,
                                   .ctx = w};
    for (size_t i = 0; i < n; ++i) {
        void *state = NULL;
        rc = modules[i]->init(&w->host, &state);
        if (HERD_ERR_NOT_AVAILABLE == rc) {
            continue; /* it said why at wireup_base_verbose */
        }
        if (HERD_SUCCESS != rc) {
            opal_output(OPAL_OUTPUT_STDERR,
                        "session daemon on %s: the %s wireup cannot start: %s; its processes "
                        "will run without it (HERD_MCA_wireup=^%s leaves it out)",
                        config->node_name, modules[i]->name, opal_strerror(rc), modules[i]->name);
            continue;
        }
        w->modules[w->num_modules].module = modules[i];
        w->modules[w->num_modules].state = state;
        w->num_modules++;
        size_t used = strlen(w->names);
        snprintf(w->names + used, sizeof(w->names) - used, "%s%s", used ? "," : "",
                 modules[i]->name);
    }
    if (0 == w->num_modules) {
        orte_session_wireup_stop(w);
        return HERD_SUCCESS;
    }
    *out = w;
    return HERD_SUCCESS;
}

void orte_session_wireup_stop(orte_session_wireup_t *w)
{
    orte_session_wireup_end(w, false);
}

void orte_session_wireup_end(orte_session_wireup_t *w, bool exiting)
{
    if (NULL == w) {
        return;
    }
    for (size_t i = 0; i < w->num_modules; ++i) {
        if (exiting && NULL != w->modules[i].module->abandon) {
            w->modules[i].module->abandon(w->modules[i].state);
            continue;
        }
        for (uint32_t k = 0; k < w->num_nss; ++k) {
            if (NULL != w->nss[k] && NULL != w->modules[i].module->del_nspace) {
                w->modules[i].module->del_nspace(w->modules[i].state, &w->nss[k]->ns);
            }
        }
        w->modules[i].module->finalize(w->modules[i].state);
    }
    orte_wireup_engine_destroy(w->engine);
    for (uint32_t k = 0; k < w->num_nss; ++k) {
        if (NULL != w->nss[k]) {
            free(w->nss[k]->node_vpid);
            free(w->nss[k]);
        }
    }
    free(w->nss);
    if ('\0' != w->tmpdir[0]) {
        nftw(w->tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    }
    free(w->modules);
    free(w);
    if (!exiting) {
        /* (a module left running may still be called: its code stays mapped until the exit) */
        orte_wireup_base_close();
    }
}

int orte_session_wireup_add_nspace(orte_session_wireup_t *w, const orte_wireup_nspace_t *ns,
                                   const orte_vpid_t *daemons, uint32_t num_daemons,
                                   const orte_vpid_t *node_vpid)
{
    if (NULL == w || NULL == ns || NULL == ns->db || ns->index > (1u << 20) ||
        (ns->index < w->num_nss && NULL != w->nss[ns->index])) {
        return HERD_ERR_BAD_PARAM;
    }
    if (ns->index >= w->num_nss) {
        ns_entry_t **grown = realloc(w->nss, (ns->index + 1) * sizeof(*grown));
        if (NULL == grown) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        memset(grown + w->num_nss, 0, (ns->index + 1 - w->num_nss) * sizeof(*grown));
        w->nss = grown;
        w->num_nss = ns->index + 1;
    }
    ns_entry_t *e = calloc(1, sizeof(*e));
    if (NULL == e || NULL == (e->node_vpid = malloc((ns->num_nodes > 0 ? ns->num_nodes : 1) *
                                                    sizeof(*e->node_vpid)))) {
        free(e);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    e->ns = *ns;
    e->db = ns->db;
    e->num_nodes = ns->num_nodes;
    memcpy(e->node_vpid, node_vpid, ns->num_nodes * sizeof(*node_vpid));
    w->nss[ns->index] = e;
    orte_wireup_engine_nspace_t desc = {.index = ns->index,
                                        .num_procs = ns->num_procs,
                                        .daemons = daemons,
                                        .num_daemons = num_daemons,
                                        .num_local = ns->num_local,
                                        .rank_vpid = rank_vpid,
                                        .ctx = e};
    int rc = orte_wireup_engine_add_nspace(w->engine, &desc);
    for (size_t i = 0; HERD_SUCCESS == rc && i < w->num_modules; ++i) {
        rc = w->modules[i].module->add_nspace(w->modules[i].state, &e->ns);
        if (HERD_SUCCESS != rc) {
            opal_output(
                OPAL_OUTPUT_STDERR, "session daemon on %s: the %s wireup cannot serve job %s: %s",
                w->config.node_name, w->modules[i].module->name, ns->jobid, opal_strerror(rc));
        }
    }
    return rc;
}

int orte_session_wireup_preput(orte_session_wireup_t *w, uint32_t nspace, const char *const *keys,
                               const char *const *values, uint32_t num)
{
    int rc = HERD_SUCCESS;
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < num; ++i) {
        rc = orte_wireup_kv_put(w->engine, nspace, ORTE_WIREUP_OWNER_NSPACE, keys[i], values[i],
                                strlen(values[i]));
    }
    if (HERD_SUCCESS == rc && num > 0) {
        rc = orte_wireup_kv_commit(w->engine, nspace, ORTE_WIREUP_OWNER_NSPACE);
    }
    return rc;
}

int orte_session_wireup_proc_setup(orte_session_wireup_t *w, const orte_wireup_proc_t *proc,
                                   char ***env, int *fds, int *num_fds)
{
    orte_wireup_child_t child = {.env = env};
    int rc = HERD_SUCCESS;
    for (size_t i = 0; HERD_SUCCESS == rc && i < w->num_modules; ++i) {
        rc = w->modules[i].module->proc_setup(w->modules[i].state, proc, &child);
    }
    for (int i = 0; i < child.num_fds; ++i) {
        fds[i] = child.fds[i];
    }
    *num_fds = child.num_fds;
    return rc;
}

void orte_session_wireup_proc_started(orte_session_wireup_t *w, const orte_wireup_proc_t *proc,
                                      pid_t pid)
{
    for (size_t i = 0; i < w->num_modules; ++i) {
        if (NULL != w->modules[i].module->proc_started) {
            w->modules[i].module->proc_started(w->modules[i].state, proc, pid);
        }
    }
}

bool orte_session_wireup_proc_exited(orte_session_wireup_t *w, const orte_wireup_proc_t *proc)
{
    bool any = false;
    for (size_t i = 0; i < w->num_modules; ++i) {
        bool unfinalized = false;
        w->modules[i].module->proc_exited(w->modules[i].state, proc, &unfinalized);
        any = any || unfinalized;
    }
    return any;
}

void orte_session_wireup_deliver(orte_session_wireup_t *w, orte_vpid_t src, uint16_t tag,
                                 const void *data, size_t len)
{
    if (NULL != w) {
        orte_wireup_engine_deliver(w->engine, src, tag, data, len);
    }
}

void orte_session_wireup_lost(orte_session_wireup_t *w, orte_vpid_t vpid)
{
    if (NULL != w) {
        orte_wireup_engine_lost(w->engine, vpid);
    }
}

const char *orte_session_wireup_names(const orte_session_wireup_t *w)
{
    return NULL != w ? w->names : "none";
}
