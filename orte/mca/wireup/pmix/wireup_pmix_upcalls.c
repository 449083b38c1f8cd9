/* SPDX-License-Identifier: BSD-3-Clause */
/* wireup pmix: the PMIx server library's upcalls. They run on the library's thread; each copies
 * what it was given into a call and queues it for the session daemon's loop, where it is served
 * with the wireup engine and answered through the library's callback. Calls that change what a
 * process is known to have done (connected, finalized, aborted) answer only once the loop has
 * recorded it, so the process's exit, which comes after the answer, never overtakes it. */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/event/event.h"
#include "opal/util/output.h"
#include "orte/mca/wireup/pmix/wireup_pmix.h"

typedef enum call_type {
    CALL_CONNECTED,
    CALL_FINALIZED,
    CALL_ABORT,
    CALL_FENCE,
    CALL_DMODEX,
    CALL_PUBLISH,
    CALL_LOOKUP,
    CALL_UNPUBLISH,
    CALL_SPAWN,
    CALL_CONNECT,
    CALL_DMODEX_ANSWER, /* the library answered another daemon's request */
} call_type_t;

typedef struct call {
    call_type_t type;
    wireup_pmix_state_t *st;
    pmix_proc_t proc;   /* who asked */
    pmix_proc_t *procs; /* fence, connect */
    size_t nprocs;
    char *data; /* fence contribution, dmodex answer */
    size_t ndata;
    int status; /* abort status, dmodex answer status */
    char *message;
    char **keys; /* publish (with values), lookup, unpublish */
    pmix_value_t *values;
    size_t nkeys;
    int timeout_ms;
    pmix_app_t *apps;
    size_t napps;
    orte_wireup_ticket_t *ticket; /* a dmodex answer's */
    /* the library's callback */
    pmix_op_cbfunc_t op_cb;
    pmix_modex_cbfunc_t modex_cb;
    pmix_lookup_cbfunc_t lookup_cb;
    pmix_spawn_cbfunc_t spawn_cb;
    void *cbdata;
    /* several engine operations for one call (publish, lookup, unpublish) */
    size_t pending;
    int first_error;
    pmix_pdata_t *pdata;
    size_t npdata;
} call_t;

/* ------------------------------------------------------------------------------------------ */
/* queueing and answering */

static void call_free(call_t *c)
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
    if (NULL != c->apps) {
        PMIX_APP_FREE(c->apps, c->napps);
    }
    if (NULL != c->pdata) {
        PMIX_PDATA_FREE(c->pdata, c->npdata);
    }
    wireup_pmix_state_t *st = c->st;
    free(c);
    wireup_pmix_release(st);
}

static pmix_status_t to_pmix(int rc)
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

static void answer_op(call_t *c, pmix_status_t status)
{
    if (NULL != c->op_cb) {
        c->op_cb(status, c->cbdata);
        c->op_cb = NULL;
    }
}

static void run_call(void *arg);

/* Queue c for the loop; PMIX_SUCCESS (its callback will come) or an error (none will). */
static pmix_status_t queue(call_t *c)
{
    if (HERD_SUCCESS != opal_event_base_call(c->st->host->base, run_call, c)) {
        call_free(c);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    return PMIX_SUCCESS;
}

/* A new call holding a reference on the running state; NULL when there is none any more. */
static call_t *call_new(call_type_t type, const pmix_proc_t *proc)
{
    wireup_pmix_state_t *st = wireup_pmix_active();
    if (NULL == st || atomic_load(&st->finalizing)) {
        return NULL;
    }
    call_t *c = calloc(1, sizeof(*c));
    if (NULL == c) {
        return NULL;
    }
    atomic_fetch_add(&st->refs, 1);
    c->type = type;
    c->st = st;
    c->timeout_ms = -1;
    if (NULL != proc) {
        c->proc = *proc;
    }
    return c;
}

static bool copy_procs(call_t *c, const pmix_proc_t procs[], size_t nprocs)
{
    c->procs = malloc((nprocs > 0 ? nprocs : 1) * sizeof(*c->procs));
    if (NULL == c->procs) {
        return false;
    }
    memcpy(c->procs, procs, nprocs * sizeof(*procs));
    c->nprocs = nprocs;
    return true;
}

/* The engine's view of a PMIx process list; NULL (and *bad) when a namespace is not ours. */
static orte_wireup_procid_t *engine_procs(call_t *c, bool *bad)
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

static void mark(call_t *c, bool finalized)
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
    answer_op(c, PMIX_SUCCESS);
    call_free(c);
}

static void run_abort(call_t *c)
{
    wireup_pmix_ns_t *pns = wireup_pmix_find_ns(c->st, c->proc.nspace);
    if (NULL != pns) {
        c->st->host->abort(c->st->host->ctx, pns->ns->index, c->proc.rank, c->status,
                           NULL != c->message ? c->message : "");
    }
    answer_op(c, PMIX_SUCCESS);
    call_free(c);
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
    call_t *c = cbdata;
    if (HERD_SUCCESS != status) {
        opal_output_verbose(1, wireup_pmix_output(), "wireup pmix: a fence failed: %s",
                            NULL != error ? error : opal_strerror(status));
        c->modex_cb(to_pmix(status), NULL, 0, c->cbdata, NULL, NULL);
        call_free(c);
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
        call_free(c);
        return;
    }
    size_t off = 0;
    for (uint32_t i = 0; i < num; ++i) {
        memcpy(all + off, blobs[i].iov_base, blobs[i].iov_len);
        off += blobs[i].iov_len;
    }
    c->modex_cb(PMIX_SUCCESS, all, total, c->cbdata, release_buffer, all);
    call_free(c);
}

static void connect_done(int status, const struct iovec *blobs, uint32_t num, const char *error,
                         void *cbdata)
{
    call_t *c = cbdata;
    answer_op(c, to_pmix(status));
    call_free(c);
}

static void run_fence(call_t *c, bool connect)
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
            answer_op(c, to_pmix(rc));
        } else {
            c->modex_cb(to_pmix(rc), NULL, 0, c->cbdata, NULL, NULL);
        }
        call_free(c);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* direct modex */

static void dmodex_done(int status, const void *value, size_t len, const char *error, void *cbdata)
{
    call_t *c = cbdata;
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
        c->modex_cb(to_pmix(status), NULL, 0, c->cbdata, NULL, NULL);
    }
    call_free(c);
}

static void run_dmodex(call_t *c)
{
    wireup_pmix_ns_t *pns = wireup_pmix_find_ns(c->st, c->proc.nspace);
    int rc = (NULL == pns)
                 ? HERD_ERR_BAD_PARAM
                 : orte_wireup_dmodex(c->st->host->engine, pns->ns->index, c->proc.rank,
                                      ORTE_WIREUP_KIND_PMIX, NULL, c->timeout_ms, dmodex_done, c);
    if (HERD_SUCCESS != rc) {
        c->modex_cb(to_pmix(rc), NULL, 0, c->cbdata, NULL, NULL);
        call_free(c);
    }
}

/* The library's answer to another daemon's request for a local process's data (its thread). */
static void dmodex_answered(pmix_status_t status, char *data, size_t sz, void *cbdata)
{
    call_t *c = cbdata;
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
    if (HERD_SUCCESS != opal_event_base_call(c->st->host->base, run_call, c)) {
        call_free(c); /* the requester times out */
    }
}

void wireup_pmix_dmodex_handler(void *ctx, uint32_t nspace, uint32_t rank, const char *key,
                                int timeout_ms, orte_wireup_ticket_t *ticket)
{
    wireup_pmix_state_t *st = ctx;
    wireup_pmix_ns_t *pns = (nspace < st->num_nss) ? st->nss[nspace] : NULL;
    call_t *c = (NULL != pns) ? call_new(CALL_DMODEX_ANSWER, NULL) : NULL;
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
        call_free(c);
    }
}

static void run_dmodex_answer(call_t *c)
{
    orte_wireup_dmodex_reply(c->ticket, c->status, c->data, c->ndata,
                             HERD_SUCCESS != c->status ? "the PMIx server has no data of it"
                                                       : NULL);
    call_free(c);
}

/* ------------------------------------------------------------------------------------------ */
/* publish, lookup, unpublish: each key is a published name; its value is the publisher and the
 * PMIx value, packed by the library */

static int pack_published(const pmix_proc_t *publisher, pmix_value_t *value, void **bytes,
                          size_t *len)
{
    pmix_data_buffer_t buffer;
    PMIX_DATA_BUFFER_CONSTRUCT(&buffer);
    if (PMIX_SUCCESS != PMIx_Data_pack(NULL, &buffer, (void *) publisher, 1, PMIX_PROC) ||
        PMIX_SUCCESS != PMIx_Data_pack(NULL, &buffer, value, 1, PMIX_VALUE)) {
        PMIX_DATA_BUFFER_DESTRUCT(&buffer);
        return HERD_ERROR;
    }
    char *ptr = NULL;
    size_t sz = 0;
    PMIX_DATA_BUFFER_UNLOAD(&buffer, ptr, sz);
    PMIX_DATA_BUFFER_DESTRUCT(&buffer);
    *bytes = ptr;
    *len = sz;
    return HERD_SUCCESS;
}

static int unpack_published(const void *bytes, size_t len, pmix_pdata_t *pd)
{
    pmix_data_buffer_t buffer;
    int32_t one = 1;
    PMIX_DATA_BUFFER_CONSTRUCT(&buffer);
    char *copy = malloc(len > 0 ? len : 1);
    if (NULL == copy) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    memcpy(copy, bytes, len);
    PMIX_DATA_BUFFER_LOAD(&buffer, copy, len);
    pmix_value_t *value = NULL;
    int rc = HERD_SUCCESS;
    if (PMIX_SUCCESS != PMIx_Data_unpack(NULL, &buffer, &pd->proc, &one, PMIX_PROC)) {
        rc = HERD_ERR_UNPACK_FAILURE;
    } else {
        PMIX_VALUE_CREATE(value, 1);
        one = 1;
        if (NULL == value ||
            PMIX_SUCCESS != PMIx_Data_unpack(NULL, &buffer, value, &one, PMIX_VALUE)) {
            rc = HERD_ERR_UNPACK_FAILURE;
        } else if (PMIX_SUCCESS != PMIx_Value_xfer(&pd->value, value)) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    if (NULL != value) {
        PMIX_VALUE_RELEASE(value);
    }
    PMIX_DATA_BUFFER_DESTRUCT(&buffer);
    return rc;
}

static void op_part_done(int status, const char *error, void *cbdata)
{
    call_t *c = cbdata;
    if (HERD_SUCCESS != status && HERD_SUCCESS == c->first_error) {
        c->first_error = status;
    }
    if (0 == --c->pending) {
        answer_op(c, to_pmix(c->first_error));
        call_free(c);
    }
}

static void run_publish(call_t *c, bool unpublish)
{
    c->pending = c->nkeys + 1; /* held until every part started */
    for (size_t i = 0; i < c->nkeys; ++i) {
        int rc;
        if (unpublish) {
            rc = orte_wireup_unpublish(c->st->host->engine, c->keys[i], op_part_done, c);
        } else {
            void *bytes = NULL;
            size_t len = 0;
            rc = pack_published(&c->proc, &c->values[i], &bytes, &len);
            if (HERD_SUCCESS == rc) {
                rc = orte_wireup_publish(c->st->host->engine, c->keys[i], bytes, len, op_part_done,
                                         c);
            }
            free(bytes);
        }
        if (HERD_SUCCESS != rc) {
            op_part_done(rc, NULL, c);
        }
    }
    op_part_done(HERD_SUCCESS, NULL, c);
}

static void lookup_part_done(int status, const void *value, size_t len, const char *error,
                             void *cbdata);

typedef struct lookup_part {
    call_t *call;
    size_t index;
} lookup_part_t;

static void lookup_finish(call_t *c)
{
    /* the names found, in the order asked */
    size_t found = 0;
    for (size_t i = 0; i < c->npdata; ++i) {
        if (PMIX_UNDEF != c->pdata[i].value.type) {
            if (found != i) {
                c->pdata[found] = c->pdata[i];
                PMIX_PDATA_CONSTRUCT(&c->pdata[i]);
            }
            found++;
        }
    }
    c->lookup_cb(
        found > 0 ? PMIX_SUCCESS
                  : to_pmix(HERD_SUCCESS == c->first_error ? HERD_ERR_NOT_FOUND : c->first_error),
        found > 0 ? c->pdata : NULL, found, c->cbdata);
    call_free(c);
}

static void lookup_part_done(int status, const void *value, size_t len, const char *error,
                             void *cbdata)
{
    lookup_part_t *part = cbdata;
    call_t *c = part->call;
    if (HERD_SUCCESS == status) {
        pmix_pdata_t *pd = &c->pdata[part->index];
        PMIX_LOAD_KEY(pd->key, c->keys[part->index]);
        status = unpack_published(value, len, pd);
        if (HERD_SUCCESS != status) {
            PMIX_PDATA_DESTRUCT(pd);
            PMIX_PDATA_CONSTRUCT(pd);
        }
    }
    if (HERD_SUCCESS != status && HERD_SUCCESS == c->first_error) {
        c->first_error = status;
    }
    free(part);
    if (0 == --c->pending) {
        lookup_finish(c);
    }
}

static void run_lookup(call_t *c)
{
    PMIX_PDATA_CREATE(c->pdata, c->nkeys > 0 ? c->nkeys : 1);
    c->npdata = c->nkeys;
    if (NULL == c->pdata) {
        c->lookup_cb(PMIX_ERR_OUT_OF_RESOURCE, NULL, 0, c->cbdata);
        call_free(c);
        return;
    }
    c->pending = c->nkeys + 1;
    for (size_t i = 0; i < c->nkeys; ++i) {
        lookup_part_t *part = malloc(sizeof(*part));
        int rc = (NULL == part) ? HERD_ERR_OUT_OF_RESOURCE : HERD_SUCCESS;
        if (NULL != part) {
            part->call = c;
            part->index = i;
            rc = orte_wireup_lookup(c->st->host->engine, c->keys[i], c->timeout_ms,
                                    lookup_part_done, part);
        }
        if (HERD_SUCCESS != rc) {
            free(part);
            if (HERD_SUCCESS == c->first_error) {
                c->first_error = rc;
            }
            c->pending--;
        }
    }
    if (0 == --c->pending) {
        lookup_finish(c);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* spawn */

static void spawn_done(int status, uint32_t nspace, const char *error, void *cbdata)
{
    call_t *c = cbdata;
    const orte_wireup_nspace_t *ns =
        (HERD_SUCCESS == status) ? c->st->host->nspace(c->st->host->ctx, nspace) : NULL;
    if (HERD_SUCCESS == status && NULL != ns) {
        pmix_nspace_t name;
        PMIX_LOAD_NSPACE(name, ns->name);
        c->spawn_cb(PMIX_SUCCESS, name, c->cbdata);
    } else {
        opal_output(OPAL_OUTPUT_STDERR, "wireup pmix: the spawn asked by %s:%u failed: %s",
                    c->proc.nspace, c->proc.rank,
                    NULL != error ? error
                                  : opal_strerror(HERD_SUCCESS == status ? HERD_ERROR : status));
        c->spawn_cb(HERD_SUCCESS == status ? PMIX_ERROR : to_pmix(status), NULL, c->cbdata);
    }
    call_free(c);
}

static void run_spawn(call_t *c)
{
    wireup_pmix_ns_t *pns = wireup_pmix_find_ns(c->st, c->proc.nspace);
    orte_wireup_spawn_app_t *apps = calloc(c->napps > 0 ? c->napps : 1, sizeof(*apps));
    char ***argvs = calloc(c->napps > 0 ? c->napps : 1, sizeof(*argvs));
    int rc = (NULL == pns)                     ? HERD_ERR_BAD_PARAM
             : (NULL == apps || NULL == argvs) ? HERD_ERR_OUT_OF_RESOURCE
                                               : HERD_SUCCESS;
    for (size_t a = 0; HERD_SUCCESS == rc && a < c->napps; ++a) {
        const pmix_app_t *app = &c->apps[a];
        /* the program is cmd; argv holds argv[0] and the arguments (or nothing) */
        size_t n = 0;
        while (NULL != app->argv && NULL != app->argv[n]) {
            n++;
        }
        argvs[a] = calloc(n + 2, sizeof(char *));
        if (NULL == argvs[a] || (NULL == app->cmd && 0 == n) || app->maxprocs <= 0) {
            rc = NULL == argvs[a] ? HERD_ERR_OUT_OF_RESOURCE : HERD_ERR_BAD_PARAM;
            break;
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
        c->spawn_cb(to_pmix(rc), NULL, c->cbdata);
        call_free(c);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* the loop side */

static void run_call(void *arg)
{
    call_t *c = arg;
    if (atomic_load(&c->st->finalizing)) {
        /* the server is stopping: say so, touch nothing else */
        switch (c->type) {
        case CALL_FENCE:
        case CALL_DMODEX:
            c->modex_cb(PMIX_ERR_UNREACH, NULL, 0, c->cbdata, NULL, NULL);
            break;
        case CALL_LOOKUP:
            c->lookup_cb(PMIX_ERR_UNREACH, NULL, 0, c->cbdata);
            break;
        case CALL_SPAWN:
            c->spawn_cb(PMIX_ERR_UNREACH, NULL, c->cbdata);
            break;
        case CALL_DMODEX_ANSWER:
            break; /* the engine goes too: nobody to answer */
        default:
            answer_op(c, PMIX_ERR_UNREACH);
            break;
        }
        call_free(c);
        return;
    }
    switch (c->type) {
    case CALL_CONNECTED:
        mark(c, false);
        break;
    case CALL_FINALIZED:
        mark(c, true);
        break;
    case CALL_ABORT:
        run_abort(c);
        break;
    case CALL_FENCE:
        run_fence(c, false);
        break;
    case CALL_CONNECT:
        run_fence(c, true);
        break;
    case CALL_DMODEX:
        run_dmodex(c);
        break;
    case CALL_DMODEX_ANSWER:
        run_dmodex_answer(c);
        break;
    case CALL_PUBLISH:
        run_publish(c, false);
        break;
    case CALL_UNPUBLISH:
        run_publish(c, true);
        break;
    case CALL_LOOKUP:
        run_lookup(c);
        break;
    case CALL_SPAWN:
        run_spawn(c);
        break;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* the upcalls (the library's thread) */

static int timeout_of(const pmix_info_t info[], size_t ninfo, bool *wait)
{
    int timeout_ms = -1;
    if (NULL != wait) {
        *wait = false;
    }
    for (size_t i = 0; i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_TIMEOUT) && PMIX_INT == info[i].value.type &&
            info[i].value.data.integer > 0) {
            timeout_ms = info[i].value.data.integer * 1000;
        } else if (NULL != wait && PMIX_CHECK_KEY(&info[i], PMIX_WAIT)) {
            *wait = PMIX_INFO_TRUE(&info[i]);
        }
    }
    return timeout_ms;
}

static pmix_status_t up_connected2(const pmix_proc_t *proc, void *server_object, pmix_info_t info[],
                                   size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    call_t *c = call_new(CALL_CONNECTED, proc);
    if (NULL == c) {
        return PMIX_OPERATION_SUCCEEDED;
    }
    c->op_cb = cbfunc;
    c->cbdata = cbdata;
    return queue(c);
}

static pmix_status_t up_finalized(const pmix_proc_t *proc, void *server_object,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    call_t *c = call_new(CALL_FINALIZED, proc);
    if (NULL == c) {
        return PMIX_OPERATION_SUCCEEDED;
    }
    c->op_cb = cbfunc;
    c->cbdata = cbdata;
    return queue(c);
}

static pmix_status_t up_abort(const pmix_proc_t *proc, void *server_object, int status,
                              const char msg[], pmix_proc_t procs[], size_t nprocs,
                              pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    call_t *c = call_new(CALL_ABORT, proc);
    if (NULL == c) {
        return PMIX_ERR_UNREACH;
    }
    c->status = status;
    c->message = (NULL != msg) ? strdup(msg) : NULL;
    c->op_cb = cbfunc;
    c->cbdata = cbdata;
    return queue(c);
}

static pmix_status_t up_fence_nb(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                                 size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cbfunc,
                                 void *cbdata)
{
    call_t *c = call_new(CALL_FENCE, NULL);
    if (NULL == c) {
        return PMIX_ERR_UNREACH;
    }
    c->modex_cb = cbfunc;
    c->cbdata = cbdata;
    if (!copy_procs(c, procs, nprocs) || (ndata > 0 && NULL == (c->data = malloc(ndata)))) {
        call_free(c);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    if (ndata > 0) {
        memcpy(c->data, data, ndata);
    }
    c->ndata = ndata;
    return queue(c);
}

static pmix_status_t up_direct_modex(const pmix_proc_t *proc, const pmix_info_t info[],
                                     size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    call_t *c = call_new(CALL_DMODEX, proc);
    if (NULL == c) {
        return PMIX_ERR_UNREACH;
    }
    c->modex_cb = cbfunc;
    c->cbdata = cbdata;
    c->timeout_ms = timeout_of(info, ninfo, NULL);
    return queue(c);
}

/* Directives of publish, lookup and unpublish, not data. */
static bool is_directive(const pmix_info_t *info)
{
    return PMIX_CHECK_KEY(info, PMIX_RANGE) || PMIX_CHECK_KEY(info, PMIX_PERSISTENCE) ||
           PMIX_CHECK_KEY(info, PMIX_TIMEOUT) || PMIX_CHECK_KEY(info, PMIX_WAIT) ||
           PMIX_CHECK_KEY(info, PMIX_USERID) || PMIX_CHECK_KEY(info, PMIX_GRPID);
}

static pmix_status_t up_publish(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    call_t *c = call_new(CALL_PUBLISH, proc);
    if (NULL == c) {
        return PMIX_ERR_UNREACH;
    }
    c->op_cb = cbfunc;
    c->cbdata = cbdata;
    c->keys = calloc(ninfo > 0 ? ninfo : 1, sizeof(*c->keys));
    c->values = calloc(ninfo > 0 ? ninfo : 1, sizeof(*c->values));
    if (NULL == c->keys || NULL == c->values) {
        call_free(c);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < ninfo; ++i) {
        if (is_directive(&info[i])) {
            continue;
        }
        c->keys[c->nkeys] = strdup(info[i].key);
        PMIX_VALUE_CONSTRUCT(&c->values[c->nkeys]);
        if (NULL == c->keys[c->nkeys] ||
            PMIX_SUCCESS != PMIx_Value_xfer(&c->values[c->nkeys], &info[i].value)) {
            free(c->keys[c->nkeys]);
            call_free(c);
            return PMIX_ERR_OUT_OF_RESOURCE;
        }
        c->nkeys++;
    }
    return queue(c);
}

static call_t *keys_call(call_type_t type, const pmix_proc_t *proc, char **keys)
{
    call_t *c = call_new(type, proc);
    if (NULL == c) {
        return NULL;
    }
    size_t n = 0;
    while (NULL != keys && NULL != keys[n]) {
        n++;
    }
    c->keys = calloc(n > 0 ? n : 1, sizeof(*c->keys));
    for (size_t i = 0; NULL != c->keys && i < n; ++i) {
        if (NULL == (c->keys[i] = strdup(keys[i]))) {
            break;
        }
        c->nkeys++;
    }
    if (NULL == c->keys || c->nkeys != n) {
        call_free(c);
        return NULL;
    }
    return c;
}

static pmix_status_t up_lookup(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                               size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void *cbdata)
{
    call_t *c = keys_call(CALL_LOOKUP, proc, keys);
    if (NULL == c) {
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    bool wait = false;
    int timeout_ms = timeout_of(info, ninfo, &wait);
    /* without PMIX_WAIT a name not published yet is not found now */
    c->timeout_ms = wait ? (timeout_ms > 0 ? timeout_ms : orte_wireup_base_get_timeout_ms()) : 0;
    c->lookup_cb = cbfunc;
    c->cbdata = cbdata;
    return queue(c);
}

static pmix_status_t up_unpublish(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                                  size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    call_t *c = keys_call(CALL_UNPUBLISH, proc, keys);
    if (NULL == c) {
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    c->op_cb = cbfunc;
    c->cbdata = cbdata;
    return queue(c);
}

static pmix_status_t up_spawn(const pmix_proc_t *proc, const pmix_info_t job_info[], size_t ninfo,
                              const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cbfunc,
                              void *cbdata)
{
    if (0 == napps || NULL == apps) {
        return PMIX_ERR_BAD_PARAM;
    }
    call_t *c = call_new(CALL_SPAWN, proc);
    if (NULL == c) {
        return PMIX_ERR_UNREACH;
    }
    c->spawn_cb = cbfunc;
    c->cbdata = cbdata;
    PMIX_APP_CREATE(c->apps, napps);
    if (NULL == c->apps) {
        call_free(c);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    c->napps = napps;
    for (size_t a = 0; a < napps; ++a) {
        pmix_app_t *dst = &c->apps[a];
        dst->cmd = (NULL != apps[a].cmd) ? strdup(apps[a].cmd) : NULL;
        dst->argv = pmix_argv_copy(apps[a].argv);
        dst->env = pmix_argv_copy(apps[a].env);
        dst->cwd = (NULL != apps[a].cwd) ? strdup(apps[a].cwd) : NULL;
        dst->maxprocs = apps[a].maxprocs;
    }
    return queue(c);
}

static pmix_status_t up_connect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                                size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    call_t *c = call_new(CALL_CONNECT, NULL);
    if (NULL == c) {
        return PMIX_ERR_UNREACH;
    }
    c->op_cb = cbfunc;
    c->cbdata = cbdata;
    if (!copy_procs(c, procs, nprocs)) {
        call_free(c);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    return queue(c);
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

/* Job control. The library itself keeps the cleanup a process registers (PMIX_REGISTER_CLEANUP,
 * _DIR, _IGNORE: Open MPI's shared-memory files) and removes it when the process ends, even
 * by abort, but only if the host has this upcall; it calls it for the directives it does not
 * handle (kill, signal, pause, checkpoint), which herd does not offer to processes. */
static pmix_status_t up_job_control(const pmix_proc_t *requestor, const pmix_proc_t targets[],
                                    size_t ntargets, const pmix_info_t directives[],
                                    size_t ndirs, pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    if (NULL != requestor) {
        opal_output_verbose(5, wireup_pmix_output(),
                            "wireup pmix: %s:%u asked for a job control herd does not offer%s%s",
                            requestor->nspace, requestor->rank, ndirs > 0 ? ": " : "",
                            ndirs > 0 ? directives[0].key : "");
    }
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_server_module_t wireup_pmix_server_module = {
    .client_connected2 = up_connected2,
    .client_finalized = up_finalized,
    .abort = up_abort,
    .fence_nb = up_fence_nb,
    .direct_modex = up_direct_modex,
    .publish = up_publish,
    .lookup = up_lookup,
    .unpublish = up_unpublish,
    .spawn = up_spawn,
    .connect = up_connect,
    .disconnect = up_connect,
    .register_events = up_register_events,
    .deregister_events = up_deregister_events,
    .notify_event = up_notify_event,
    .job_control = up_job_control,
};
