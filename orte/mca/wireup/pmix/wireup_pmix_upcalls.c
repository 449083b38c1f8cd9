/* SPDX-License-Identifier: BSD-3-Clause */
/* wireup pmix: the PMIx server library's upcalls. They run on the library's thread; each copies
 * what it was given into a call and queues it for the session daemon's loop, where it is served
 * with the wireup engine and answered through the library's callback. Calls that change what a
 * process is known to have done (connected, finalized, aborted) answer only once the loop has
 * recorded it, so the process's exit, which comes after the answer, never overtakes it. This
 * file has the calls' queue and the upcalls of the wireup itself; the others are beside it
 * (wireup_pmix.h). */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/event/event.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"
#include "orte/mca/wireup/pmix/wireup_pmix.h"

/* ------------------------------------------------------------------------------------------ */
/* calls: queueing and answering */

void wireup_pmix_call_free(wireup_pmix_call_t *c)
{
    free(c->procs);
    free(c->data);
    free(c->message);
    for (size_t i = 0; i < c->nkeys; ++i) {
        free(c->keys[i]);
    }
    free(c->keys);
    if (NULL != c->values) {
        for (size_t i = 0; i < c->nkeys; ++i) {
            PMIX_VALUE_DESTRUCT(&c->values[i]);
        }
        free(c->values);
    }
    if (NULL != c->info) {
        PMIX_INFO_FREE(c->info, c->ninfo);
    }
    if (NULL != c->directives) {
        PMIX_INFO_FREE(c->directives, c->ndirs);
    }
    if (NULL != c->queries) {
        PMIX_QUERY_FREE(c->queries, c->nqueries);
    }
    if (NULL != c->apps) {
        PMIX_APP_FREE(c->apps, c->napps);
    }
    if (NULL != c->pdata) {
        PMIX_PDATA_FREE(c->pdata, c->npdata);
    }
    free(c->part_data);
    wireup_pmix_state_t *st = c->st;
    free(c);
    wireup_pmix_release(st);
}

pmix_status_t wireup_pmix_status(int rc)
{
    switch (rc) {
    case HERD_SUCCESS:
        return PMIX_SUCCESS;
    case HERD_ERR_NOT_FOUND:
        return PMIX_ERR_NOT_FOUND;
    case HERD_ERR_TIMEOUT:
        return PMIX_ERR_TIMEOUT;
    case HERD_ERR_UNREACH:
        return PMIX_ERR_UNREACH;
    case HERD_ERR_BAD_PARAM:
        return PMIX_ERR_BAD_PARAM;
    case HERD_ERR_OUT_OF_RESOURCE:
        return PMIX_ERR_OUT_OF_RESOURCE;
    case HERD_ERR_EXISTS:
        return PMIX_ERR_DUPLICATE_KEY;
    case HERD_ERR_NOT_SUPPORTED:
        return PMIX_ERR_NOT_SUPPORTED;
    default:
        return PMIX_ERROR;
    }
}

void wireup_pmix_answer_op(wireup_pmix_call_t *c, pmix_status_t status)
{
    if (NULL != c->op_cb) {
        c->op_cb(status, c->cbdata);
        c->op_cb = NULL;
    }
    if (NULL != c->info_cb) {
        c->info_cb(status, NULL, 0, c->cbdata, NULL, NULL);
        c->info_cb = NULL;
    }
    c->answered = true;
}

void wireup_pmix_refuse_op(wireup_pmix_call_t *c, pmix_status_t status)
{
    wireup_pmix_answer_op(c, status);
}

static void run_call(void *arg)
{
    wireup_pmix_call_t *c = arg;
    if (atomic_load(&c->st->finalizing)) {
        /* the server is stopping: say so, touch nothing else */
        c->refuse(c, PMIX_ERR_UNREACH);
        wireup_pmix_call_free(c);
        return;
    }
    c->run(c);
}

pmix_status_t wireup_pmix_call_queue(wireup_pmix_call_t *c)
{
    if (HERD_SUCCESS != opal_event_base_call(c->st->host->base, run_call, c)) {
        wireup_pmix_call_free(c);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    return PMIX_SUCCESS;
}

wireup_pmix_call_t *wireup_pmix_call_new(const pmix_proc_t *proc, wireup_pmix_run_fn_t run,
                                         wireup_pmix_refuse_fn_t refuse)
{
    wireup_pmix_state_t *st = wireup_pmix_active();
    if (NULL == st || atomic_load(&st->finalizing)) {
        return NULL;
    }
    wireup_pmix_call_t *c = calloc(1, sizeof(*c));
    if (NULL == c) {
        return NULL;
    }
    atomic_fetch_add(&st->refs, 1);
    c->st = st;
    c->run = run;
    c->refuse = refuse;
    c->timeout_ms = -1;
    if (NULL != proc) {
        c->proc = *proc;
    }
    return c;
}

int wireup_pmix_timeout_ms(const pmix_info_t info[], size_t ninfo)
{
    for (size_t i = 0; i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_TIMEOUT) && PMIX_INT == info[i].value.type &&
            info[i].value.data.integer > 0) {
            return info[i].value.data.integer * 1000;
        }
    }
    return -1;
}

bool wireup_pmix_copy_info(const pmix_info_t *in, size_t n, pmix_info_t **out)
{
    *out = NULL;
    if (0 == n) {
        return true;
    }
    PMIX_INFO_CREATE(*out, n);
    if (NULL == *out) {
        return false;
    }
    for (size_t i = 0; i < n; ++i) {
        if (PMIX_SUCCESS != PMIx_Info_xfer(&(*out)[i], &in[i])) {
            PMIX_INFO_FREE(*out, n);
            *out = NULL;
            return false;
        }
    }
    return true;
}

static bool copy_procs(wireup_pmix_call_t *c, const pmix_proc_t procs[], size_t nprocs)
{
    c->procs = malloc((nprocs > 0 ? nprocs : 1) * sizeof(*c->procs));
    if (NULL == c->procs) {
        return false;
    }
    if (nprocs > 0) {
        memcpy(c->procs, procs, nprocs * sizeof(*procs));
    }
    c->nprocs = nprocs;
    return true;
}

/* The engine's view of a PMIx process list; NULL (and *bad) when a namespace is not ours. */
static orte_wireup_procid_t *engine_procs(wireup_pmix_call_t *c, bool *bad)
{
    orte_wireup_procid_t *ids = malloc((c->nprocs > 0 ? c->nprocs : 1) * sizeof(*ids));
    *bad = false;
    for (size_t i = 0; NULL != ids && i < c->nprocs; ++i) {
        wireup_pmix_ns_t *pns = wireup_pmix_find_ns(c->st, c->procs[i].nspace);
        if (NULL == pns) {
            *bad = true;
            free(ids);
            return NULL;
        }
        ids[i].nspace = pns->ns->index;
        ids[i].rank =
            (PMIX_RANK_WILDCARD == c->procs[i].rank) ? ORTE_WIREUP_RANK_WILDCARD : c->procs[i].rank;
    }
    return ids;
}

/* ------------------------------------------------------------------------------------------ */
/* connected, finalized, abort */

static void mark(wireup_pmix_call_t *c, bool finalized)
{
    wireup_pmix_ns_t *pns = wireup_pmix_find_ns(c->st, c->proc.nspace);
    wireup_pmix_local_t *local = (NULL != pns) ? wireup_pmix_find_local(pns, c->proc.rank) : NULL;
    if (NULL != local) {
        if (finalized) {
            local->finalized = true;
        } else {
            local->connected = true;
        }
    }
    wireup_pmix_answer_op(c, PMIX_SUCCESS);
    wireup_pmix_call_free(c);
}

static void run_connected(wireup_pmix_call_t *c)
{
    mark(c, false);
}

static void run_finalized(wireup_pmix_call_t *c)
{
    mark(c, true);
}

static void run_abort(wireup_pmix_call_t *c)
{
    wireup_pmix_ns_t *pns = wireup_pmix_find_ns(c->st, c->proc.nspace);
    wireup_pmix_local_t *local = (NULL != pns) ? wireup_pmix_find_local(pns, c->proc.rank) : NULL;
    if (NULL != local) {
        local->called_abort = true;
    }
    if (NULL != pns) {
        c->st->host->abort(c->st->host->ctx, pns->ns->index, c->proc.rank, c->status,
                           NULL != c->message ? c->message : "");
    }
    wireup_pmix_answer_op(c, PMIX_SUCCESS);
    wireup_pmix_call_free(c);
}

/* ------------------------------------------------------------------------------------------ */
/* fences and connect */

static void release_buffer(void *cbdata)
{
    free(cbdata);
}

static void fence_done(int status, const struct iovec *blobs, uint32_t num, const char *error,
                       void *cbdata)
{
    wireup_pmix_call_t *c = cbdata;
    if (HERD_SUCCESS != status) {
        opal_output_verbose(1, wireup_pmix_output(), "wireup pmix: a fence failed: %s",
                            NULL != error ? error : opal_strerror(status));
        c->modex_cb(wireup_pmix_status(status), NULL, 0, c->cbdata, NULL, NULL);
        wireup_pmix_call_free(c);
        return;
    }
    /* every daemon's contribution, one after the other, as the library packed them */
    size_t total = 0;
    for (uint32_t i = 0; i < num; ++i) {
        total += blobs[i].iov_len;
    }
    char *all = malloc(total > 0 ? total : 1);
    if (NULL == all) {
        c->modex_cb(PMIX_ERR_OUT_OF_RESOURCE, NULL, 0, c->cbdata, NULL, NULL);
        wireup_pmix_call_free(c);
        return;
    }
    size_t off = 0;
    for (uint32_t i = 0; i < num; ++i) {
        memcpy(all + off, blobs[i].iov_base, blobs[i].iov_len);
        off += blobs[i].iov_len;
    }
    c->modex_cb(PMIX_SUCCESS, all, total, c->cbdata, release_buffer, all);
    wireup_pmix_call_free(c);
}

static void connect_done(int status, const struct iovec *blobs, uint32_t num, const char *error,
                         void *cbdata)
{
    wireup_pmix_call_t *c = cbdata;
    wireup_pmix_answer_op(c, wireup_pmix_status(status));
    wireup_pmix_call_free(c);
}

static void fence_or_connect(wireup_pmix_call_t *c, bool connect)
{
    bool bad;
    orte_wireup_procid_t *ids = engine_procs(c, &bad);
    int rc = (NULL == ids)
                 ? (bad ? HERD_ERR_BAD_PARAM : HERD_ERR_OUT_OF_RESOURCE)
                 : orte_wireup_allgather(c->st->host->engine, ids, c->nprocs,
                                         connect ? ORTE_WIREUP_KIND_CONNECT : ORTE_WIREUP_KIND_PMIX,
                                         connect ? NULL : c->data, connect ? 0 : c->ndata,
                                         connect ? connect_done : fence_done, c);
    free(ids);
    if (HERD_SUCCESS != rc) {
        if (connect) {
            wireup_pmix_answer_op(c, wireup_pmix_status(rc));
        } else {
            c->modex_cb(wireup_pmix_status(rc), NULL, 0, c->cbdata, NULL, NULL);
        }
        wireup_pmix_call_free(c);
    }
}

static void run_fence(wireup_pmix_call_t *c)
{
    fence_or_connect(c, false);
}

static void run_connect(wireup_pmix_call_t *c)
{
    fence_or_connect(c, true);
}

static void refuse_modex(wireup_pmix_call_t *c, pmix_status_t status)
{
    c->modex_cb(status, NULL, 0, c->cbdata, NULL, NULL);
}

/* ------------------------------------------------------------------------------------------ */
/* direct modex */

static void dmodex_done(int status, const void *value, size_t len, const char *error, void *cbdata)
{
    wireup_pmix_call_t *c = cbdata;
    char *copy = NULL;
    if (HERD_SUCCESS == status && len > 0 && NULL == (copy = malloc(len))) {
        status = HERD_ERR_OUT_OF_RESOURCE;
    }
    if (HERD_SUCCESS == status) {
        if (len > 0) {
            memcpy(copy, value, len);
        }
        c->modex_cb(PMIX_SUCCESS, copy, len, c->cbdata, release_buffer, copy);
    } else {
        opal_output_verbose(5, wireup_pmix_output(), "wireup pmix: direct modex of %s:%u: %s",
                            c->proc.nspace, c->proc.rank,
                            NULL != error ? error : opal_strerror(status));
        c->modex_cb(wireup_pmix_status(status), NULL, 0, c->cbdata, NULL, NULL);
    }
    wireup_pmix_call_free(c);
}

static void run_dmodex(wireup_pmix_call_t *c)
{
    wireup_pmix_ns_t *pns = wireup_pmix_find_ns(c->st, c->proc.nspace);
    int rc = (NULL == pns)
                 ? HERD_ERR_BAD_PARAM
                 : orte_wireup_dmodex(c->st->host->engine, pns->ns->index, c->proc.rank,
                                      ORTE_WIREUP_KIND_PMIX, NULL, c->timeout_ms, dmodex_done, c);
    if (HERD_SUCCESS != rc) {
        c->modex_cb(wireup_pmix_status(rc), NULL, 0, c->cbdata, NULL, NULL);
        wireup_pmix_call_free(c);
    }
}

static void run_dmodex_answer(wireup_pmix_call_t *c)
{
    orte_wireup_dmodex_reply(c->ticket, c->status, c->data, c->ndata,
                             HERD_SUCCESS != c->status ? "the PMIx server has no data of it"
                                                       : NULL);
    wireup_pmix_call_free(c);
}

static void refuse_nothing(wireup_pmix_call_t *c, pmix_status_t status)
{
    /* the engine goes too: nobody to answer */
}

/* The library's answer to another daemon's request for a local process's data (its thread). */
static void dmodex_answered(pmix_status_t status, char *data, size_t sz, void *cbdata)
{
    wireup_pmix_call_t *c = cbdata;
    c->status = (PMIX_SUCCESS == status)       ? HERD_SUCCESS
                : (PMIX_ERR_TIMEOUT == status) ? HERD_ERR_TIMEOUT
                                               : HERD_ERR_NOT_FOUND;
    if (PMIX_SUCCESS == status && sz > 0) {
        c->data = malloc(sz);
        if (NULL == c->data) {
            c->status = HERD_ERR_OUT_OF_RESOURCE;
        } else {
            memcpy(c->data, data, sz);
            c->ndata = sz;
        }
    }
    /* the requester times out if this fails */
    wireup_pmix_call_queue(c);
}

void wireup_pmix_dmodex_handler(void *ctx, uint32_t nspace, uint32_t rank, const char *key,
                                int timeout_ms, orte_wireup_ticket_t *ticket)
{
    wireup_pmix_state_t *st = ctx;
    wireup_pmix_ns_t *pns = (nspace < st->num_nss) ? st->nss[nspace] : NULL;
    wireup_pmix_call_t *c =
        (NULL != pns) ? wireup_pmix_call_new(NULL, run_dmodex_answer, refuse_nothing) : NULL;
    if (NULL == c) {
        orte_wireup_dmodex_reply(ticket, HERD_ERR_NOT_FOUND, NULL, 0,
                                 "the PMIx server here does not know that namespace");
        return;
    }
    c->ticket = ticket;
    PMIX_LOAD_PROCID(&c->proc, pns->name, rank);
    /* the library answers once the process has committed its data */
    pmix_status_t prc = PMIx_server_dmodex_request(&c->proc, dmodex_answered, c);
    if (PMIX_SUCCESS != prc) {
        orte_wireup_dmodex_reply(ticket, HERD_ERR_NOT_FOUND, NULL, 0,
                                 "the PMIx server here has no data of that process");
        wireup_pmix_call_free(c);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* spawn */

static void spawn_done(int status, uint32_t nspace, const char *error, void *cbdata)
{
    wireup_pmix_call_t *c = cbdata;
    const orte_wireup_nspace_t *ns =
        (HERD_SUCCESS == status) ? c->st->host->nspace(c->st->host->ctx, nspace) : NULL;
    if (HERD_SUCCESS == status && NULL != ns) {
        pmix_nspace_t name;
        PMIX_LOAD_NSPACE(name, ns->name);
        c->spawn_cb(PMIX_SUCCESS, name, c->cbdata);
    } else {
        opal_show_help(WIREUP_PMIX_HELP, "spawn-failed", false, c->proc.nspace, c->proc.rank,
                       NULL != error ? error
                                     : opal_strerror(HERD_SUCCESS == status ? HERD_ERROR : status));
        c->spawn_cb(HERD_SUCCESS == status ? PMIX_ERROR : wireup_pmix_status(status), NULL,
                    c->cbdata);
    }
    wireup_pmix_call_free(c);
}

/* The engine's apps of a spawn (argvs[a] holds app a's argv; freed by the caller). */
static int spawn_apps(const wireup_pmix_call_t *c, orte_wireup_spawn_app_t *apps, char ***argvs)
{
    for (size_t a = 0; a < c->napps; ++a) {
        const pmix_app_t *app = &c->apps[a];
        /* the program is cmd; argv holds argv[0] and the arguments (or nothing) */
        size_t n = 0;
        while (NULL != app->argv && NULL != app->argv[n]) {
            n++;
        }
        argvs[a] = calloc(n + 2, sizeof(char *));
        if (NULL == argvs[a]) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        if ((NULL == app->cmd && 0 == n) || app->maxprocs <= 0) {
            return HERD_ERR_BAD_PARAM;
        }
        argvs[a][0] = (NULL != app->cmd) ? app->cmd : app->argv[0];
        for (size_t i = 1; i < n; ++i) {
            argvs[a][i] = app->argv[i];
        }
        apps[a].argv = argvs[a];
        apps[a].env = app->env;
        apps[a].cwd = app->cwd;
        apps[a].np = (uint32_t) app->maxprocs;
    }
    return HERD_SUCCESS;
}

static void run_spawn(wireup_pmix_call_t *c)
{
    wireup_pmix_ns_t *pns = wireup_pmix_find_ns(c->st, c->proc.nspace);
    orte_wireup_spawn_app_t *apps = calloc(c->napps > 0 ? c->napps : 1, sizeof(*apps));
    char ***argvs = calloc(c->napps > 0 ? c->napps : 1, sizeof(*argvs));
    int rc = (NULL == pns)                     ? HERD_ERR_BAD_PARAM
             : (NULL == apps || NULL == argvs) ? HERD_ERR_OUT_OF_RESOURCE
                                               : spawn_apps(c, apps, argvs);
    if (HERD_SUCCESS == rc) {
        orte_wireup_spawn_request_t req = {.parent_nspace = pns->ns->index,
                                           .parent_rank = c->proc.rank,
                                           .apps = apps,
                                           .num_apps = (uint32_t) c->napps};
        rc = c->st->host->spawn(c->st->host->ctx, &req, spawn_done, c);
    }
    for (size_t a = 0; NULL != argvs && a < c->napps; ++a) {
        free(argvs[a]);
    }
    free(argvs);
    free(apps);
    if (HERD_SUCCESS != rc) {
        c->spawn_cb(wireup_pmix_status(rc), NULL, c->cbdata);
        wireup_pmix_call_free(c);
    }
}

static void refuse_spawn(wireup_pmix_call_t *c, pmix_status_t status)
{
    c->spawn_cb(status, NULL, c->cbdata);
}

/* ------------------------------------------------------------------------------------------ */
/* the upcalls (the library's thread) */

static pmix_status_t up_connected2(const pmix_proc_t *proc, void *server_object, pmix_info_t info[],
                                   size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    wireup_pmix_call_t *c = wireup_pmix_call_new(proc, run_connected, wireup_pmix_refuse_op);
    if (NULL == c) {
        return PMIX_OPERATION_SUCCEEDED;
    }
    c->op_cb = cbfunc;
    c->cbdata = cbdata;
    return wireup_pmix_call_queue(c);
}

static pmix_status_t up_finalized(const pmix_proc_t *proc, void *server_object,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    wireup_pmix_call_t *c = wireup_pmix_call_new(proc, run_finalized, wireup_pmix_refuse_op);
    if (NULL == c) {
        return PMIX_OPERATION_SUCCEEDED;
    }
    c->op_cb = cbfunc;
    c->cbdata = cbdata;
    return wireup_pmix_call_queue(c);
}

static pmix_status_t up_abort(const pmix_proc_t *proc, void *server_object, int status,
                              const char msg[], pmix_proc_t procs[], size_t nprocs,
                              pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    wireup_pmix_call_t *c = wireup_pmix_call_new(proc, run_abort, wireup_pmix_refuse_op);
    if (NULL == c) {
        return PMIX_ERR_UNREACH;
    }
    c->status = status;
    c->message = (NULL != msg) ? strdup(msg) : NULL;
    c->op_cb = cbfunc;
    c->cbdata = cbdata;
    return wireup_pmix_call_queue(c);
}

static pmix_status_t up_fence_nb(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                                 size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cbfunc,
                                 void *cbdata)
{
    wireup_pmix_call_t *c = wireup_pmix_call_new(NULL, run_fence, refuse_modex);
    if (NULL == c) {
        return PMIX_ERR_UNREACH;
    }
    c->modex_cb = cbfunc;
    c->cbdata = cbdata;
    if (!copy_procs(c, procs, nprocs) || (ndata > 0 && NULL == (c->data = malloc(ndata)))) {
        wireup_pmix_call_free(c);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    if (ndata > 0) {
        memcpy(c->data, data, ndata);
    }
    c->ndata = ndata;
    return wireup_pmix_call_queue(c);
}

static pmix_status_t up_direct_modex(const pmix_proc_t *proc, const pmix_info_t info[],
                                     size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    wireup_pmix_call_t *c = wireup_pmix_call_new(proc, run_dmodex, refuse_modex);
    if (NULL == c) {
        return PMIX_ERR_UNREACH;
    }
    c->modex_cb = cbfunc;
    c->cbdata = cbdata;
    c->timeout_ms = wireup_pmix_timeout_ms(info, ninfo);
    return wireup_pmix_call_queue(c);
}

/* The working directory a spawn's directives give (PMIX_WDIR), or NULL. */
static const char *spawn_wdir(const pmix_info_t info[], size_t ninfo)
{
    for (size_t i = 0; i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_WDIR) && PMIX_STRING == info[i].value.type) {
            return info[i].value.data.string;
        }
    }
    return NULL;
}

static pmix_status_t up_spawn(const pmix_proc_t *proc, const pmix_info_t job_info[], size_t ninfo,
                              const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cbfunc,
                              void *cbdata)
{
    if (0 == napps || NULL == apps) {
        return PMIX_ERR_BAD_PARAM;
    }
    wireup_pmix_call_t *c = wireup_pmix_call_new(proc, run_spawn, refuse_spawn);
    if (NULL == c) {
        return PMIX_ERR_UNREACH;
    }
    c->spawn_cb = cbfunc;
    c->cbdata = cbdata;
    PMIX_APP_CREATE(c->apps, napps);
    if (NULL == c->apps) {
        wireup_pmix_call_free(c);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    c->napps = napps;
    const char *job_wdir = spawn_wdir(job_info, ninfo);
    for (size_t a = 0; a < napps; ++a) {
        pmix_app_t *dst = &c->apps[a];
        /* the app's own PMIX_WDIR, else the job's, else its cwd field */
        const char *wdir = spawn_wdir(apps[a].info, apps[a].ninfo);
        wdir = NULL != wdir ? wdir : NULL != job_wdir ? job_wdir : apps[a].cwd;
        dst->cmd = (NULL != apps[a].cmd) ? strdup(apps[a].cmd) : NULL;
        dst->argv = pmix_argv_copy(apps[a].argv);
        dst->env = pmix_argv_copy(apps[a].env);
        dst->cwd = (NULL != wdir) ? strdup(wdir) : NULL;
        dst->maxprocs = apps[a].maxprocs;
    }
    return wireup_pmix_call_queue(c);
}

static pmix_status_t up_connect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                                size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    wireup_pmix_call_t *c = wireup_pmix_call_new(NULL, run_connect, wireup_pmix_refuse_op);
    if (NULL == c) {
        return PMIX_ERR_UNREACH;
    }
    c->op_cb = cbfunc;
    c->cbdata = cbdata;
    if (!copy_procs(c, procs, nprocs)) {
        wireup_pmix_call_free(c);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    return wireup_pmix_call_queue(c);
}

/* Events are not forwarded between nodes: registering and notifying succeed as no-ops. */
static pmix_status_t up_register_events(pmix_status_t *codes, size_t ncodes,
                                        const pmix_info_t info[], size_t ninfo,
                                        pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t up_deregister_events(pmix_status_t *codes, size_t ncodes,
                                          pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t up_notify_event(pmix_status_t code, const pmix_proc_t *source,
                                     pmix_data_range_t range, pmix_info_t info[], size_t ninfo,
                                     pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return PMIX_OPERATION_SUCCEEDED;
}

pmix_server_module_t wireup_pmix_server_module = {
    .client_connected2 = up_connected2,
    .client_finalized = up_finalized,
    .abort = up_abort,
    .fence_nb = up_fence_nb,
    .direct_modex = up_direct_modex,
    .publish = wireup_pmix_up_publish,
    .lookup = wireup_pmix_up_lookup,
    .unpublish = wireup_pmix_up_unpublish,
    .spawn = up_spawn,
    .connect = up_connect,
    .disconnect = up_connect,
    .register_events = up_register_events,
    .deregister_events = up_deregister_events,
    .notify_event = up_notify_event,
    .query = wireup_pmix_up_query,
    .log = wireup_pmix_up_log,
    .job_control = wireup_pmix_up_job_control,
};
