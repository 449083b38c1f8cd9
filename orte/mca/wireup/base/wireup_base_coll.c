/* SPDX-License-Identifier: BSD-3-Clause */
/* The wireup engine's namespace collectives: a grpcomm allgather among the daemons hosting a
 * namespace, behind kv fences (what local processes committed, exchanged once all of them
 * entered) and allgathers of a whole namespace (orte_wireup_allgather, wireup_base_fence.c). */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orte/mca/wireup/base/wireup_base_engine_internal.h"

typedef struct wireup_fence_waiter {
    struct wireup_fence_waiter *next;
    uint32_t rank;
    orte_wireup_done_fn_t cb;
    void *cbdata;
} fence_waiter_t;

/* A grpcomm collective of a namespace in flight. */
typedef struct coll_op {
    orte_wireup_engine_t *engine;
    wireup_ns_t *ns;
    uint8_t kind;
    bool kv; /* a kv fence: unpack the blobs into the store, release the waiters */
    orte_wireup_blobs_fn_t cb;
    void *cbdata;
} coll_op_t;

static int coll_send(void *ctx, orte_vpid_t dst, uint16_t tag, const void *data, size_t len)
{
    wireup_ns_t *ns = ctx;
    orte_wireup_engine_t *e = ns->engine;
    opal_buffer_t header;
    if (dst >= ns->num_daemons || tag < ORTE_GRPCOMM_TAG_BASE ||
        tag >= ORTE_GRPCOMM_TAG_BASE + ORTE_GRPCOMM_NUM_TAGS) {
        return HERD_ERR_BAD_PARAM;
    }
    opal_buffer_init(&header);
    int rc = opal_buffer_pack_uint8(&header, ORTE_WIREUP_WIRE_VERSION);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_pack_uint32(&header, ns->index);
    }
    if (HERD_SUCCESS == rc) {
        struct iovec iov[2] = {{.iov_base = header.base, .iov_len = header.used},
                               {.iov_base = (void *) data, .iov_len = len}};
        rc = e->config.send(e->config.ctx, ns->daemons[dst],
                            (uint16_t) (ORTE_WIREUP_TAG_COLL + (tag - ORTE_GRPCOMM_TAG_BASE)), iov,
                            2);
    }
    opal_buffer_destruct(&header);
    return rc;
}

int wireup_engine_coll_create(orte_wireup_engine_t *e, wireup_ns_t *ns)
{
    orte_grpcomm_transport_t t = {.me = (orte_vpid_t) ns->my_pos,
                                  .num_daemons = ns->num_daemons,
                                  .radix = e->config.radix,
                                  .send = coll_send,
                                  .ctx = ns};
    return e->gcm->create(&t, &ns->gc);
}

int wireup_engine_recv_coll(orte_wireup_engine_t *e, orte_vpid_t src, uint16_t tag,
                            opal_buffer_t *b, const void *data, size_t len, bool redelivery)
{
    uint32_t nspace;
    int rc = opal_buffer_unpack_uint32(b, &nspace);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    wireup_ns_t *ns = wireup_engine_find_ns(e, nspace);
    if (NULL == ns) {
        return redelivery ? HERD_ERR_NOT_FOUND : wireup_engine_hold(e, src, tag, nspace, data, len);
    }
    if (NULL == ns->gc) {
        return HERD_ERR_BAD_PARAM; /* no collective of this namespace runs here */
    }
    orte_vpid_t *pos =
        bsearch(&src, ns->daemons, ns->num_daemons, sizeof(src), wireup_engine_cmp_vpid);
    if (NULL == pos) {
        return HERD_ERR_BAD_PARAM;
    }
    return e->gcm->deliver(ns->gc, (orte_vpid_t) (pos - ns->daemons),
                           (uint16_t) (ORTE_GRPCOMM_TAG_BASE + (tag - ORTE_WIREUP_TAG_COLL)),
                           b->base + b->unpack_offset, opal_buffer_remaining(b));
}

static void kv_fence_release(orte_wireup_engine_t *e, wireup_ns_t *ns, uint8_t kind, int status,
                             const char *error)
{
    wireup_kv_fence_t *f = &ns->kvf[kind];
    fence_waiter_t *w = f->waiters;
    f->waiters = NULL;
    f->entered = 0;
    f->collect = false;
    f->running = false;
    while (NULL != w) {
        fence_waiter_t *next = w->next;
        wireup_engine_complete_done(e, w->cb, w->cbdata, status, error);
        free(w);
        w = next;
    }
}

static void coll_done(int status, const orte_grpcomm_result_t *result, void *cbdata)
{
    coll_op_t *op = cbdata;
    orte_wireup_engine_t *e = op->engine;
    wireup_ns_t *ns = op->ns;
    if (HERD_SUCCESS == status) {
        e->stats.fences++;
    }
    if (op->kv) {
        char error[160];
        for (uint32_t i = 0; HERD_SUCCESS == status && i < result->num_blobs; ++i) {
            if ((int64_t) i == ns->my_pos || 0 == result->blobs[i].len) {
                continue;
            }
            status =
                wireup_store_unpack_bytes(ns->store, result->blobs[i].data, result->blobs[i].len,
                                          ORTE_WIREUP_MAX_KEY, ORTE_WIREUP_MAX_VALUE);
            if (HERD_SUCCESS != status) {
                wireup_engine_malformed(e, ns->daemons[i], "fence data");
            }
        }
        snprintf(error, sizeof(error),
                 "the %s fence of namespace %u failed: %s (a session daemon of the job is gone, "
                 "or sent malformed data)",
                 wireup_engine_kind_name(op->kind), ns->index, opal_strerror(status));
        kv_fence_release(e, ns, op->kind, status, HERD_SUCCESS == status ? NULL : error);
    } else if (HERD_SUCCESS == status) {
        struct iovec *iov = calloc(result->num_blobs > 0 ? result->num_blobs : 1, sizeof(*iov));
        if (NULL == iov) {
            wireup_engine_complete_blobs(e, op->cb, op->cbdata, HERD_ERR_OUT_OF_RESOURCE, NULL, 0,
                                         NULL);
        } else {
            for (uint32_t i = 0; i < result->num_blobs; ++i) {
                iov[i].iov_base = (void *) result->blobs[i].data;
                iov[i].iov_len = result->blobs[i].len;
            }
            wireup_engine_complete_blobs(e, op->cb, op->cbdata, HERD_SUCCESS, iov,
                                         result->num_blobs, NULL);
            free(iov);
        }
    } else {
        wireup_engine_complete_blobs(
            e, op->cb, op->cbdata, status, NULL, 0,
            "a collective among the job's session daemons failed: one of them is gone");
    }
    free(op);
}

int wireup_engine_ns_allgather(orte_wireup_engine_t *e, wireup_ns_t *ns, uint8_t kind, bool kv,
                               const void *data, size_t len, orte_wireup_blobs_fn_t cb,
                               void *cbdata)
{
    if (NULL == ns->gc) {
        /* this daemon alone hosts the namespace: nothing to exchange */
        if (kv) {
            e->stats.fences++;
            kv_fence_release(e, ns, kind, HERD_SUCCESS, NULL);
            return HERD_SUCCESS;
        }
        struct iovec one = {.iov_base = (void *) data, .iov_len = len};
        e->stats.fences++;
        wireup_engine_complete_blobs(e, cb, cbdata, HERD_SUCCESS, &one, 1, NULL);
        return HERD_SUCCESS;
    }
    coll_op_t *op = calloc(1, sizeof(*op));
    if (NULL == op) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    *op = (coll_op_t){.engine = e, .ns = ns, .kind = kind, .kv = kv, .cb = cb, .cbdata = cbdata};
    uint32_t id = ((uint32_t) kind << 24) | (ns->coll_seq[kind]++ & 0xffffffu);
    int rc = e->gcm->allgather(ns->gc, id, data, len, coll_done, op);
    if (HERD_SUCCESS != rc) {
        free(op);
    }
    return rc;
}

int orte_wireup_kv_fence(orte_wireup_engine_t *e, uint32_t nspace, orte_wireup_kind_t kind,
                         uint32_t rank, bool collect, orte_wireup_done_fn_t cb, void *cbdata)
{
    wireup_ns_t *ns = (NULL != e) ? wireup_engine_find_ns(e, nspace) : NULL;
    if (NULL == ns || !wireup_engine_kind_valid(kind) || NULL == cb || rank >= ns->num_procs ||
        ns->my_pos < 0 || ns->num_local == 0) {
        return HERD_ERR_BAD_PARAM;
    }
    wireup_kv_fence_t *f = &ns->kvf[kind];
    if (f->running) {
        return HERD_ERR_EXISTS;
    }
    for (fence_waiter_t *w = f->waiters; NULL != w; w = w->next) {
        if (w->rank == rank) {
            return HERD_ERR_EXISTS;
        }
    }
    fence_waiter_t *w = calloc(1, sizeof(*w));
    if (NULL == w) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    *w = (fence_waiter_t){.next = f->waiters, .rank = rank, .cb = cb, .cbdata = cbdata};
    f->waiters = w;
    f->collect = f->collect || collect;
    if (++f->entered < ns->num_local) {
        return HERD_SUCCESS;
    }
    /* the last local process is in: contribute */
    f->running = true;
    opal_buffer_t b;
    opal_buffer_init(&b);
    int rc = HERD_SUCCESS;
    if (f->collect) {
        rc = wireup_store_pack_since(ns->store, ns->fence_gen[kind], &b);
        ns->fence_gen[kind] = ns->commit_gen;
    }
    if (HERD_SUCCESS == rc) {
        rc = wireup_engine_ns_allgather(e, ns, (uint8_t) kind, true, b.base, b.used, NULL, NULL);
    }
    opal_buffer_destruct(&b);
    if (HERD_SUCCESS != rc) {
        kv_fence_release(e, ns, (uint8_t) kind, rc, "this session daemon could not start a fence");
    }
    return HERD_SUCCESS;
}

void wireup_engine_coll_ns_free(orte_wireup_engine_t *e, wireup_ns_t *ns)
{
    if (NULL != ns->gc) {
        e->gcm->destroy(ns->gc);
    }
    for (int k = 0; k < ORTE_WIREUP_NUM_KINDS; ++k) {
        fence_waiter_t *w = ns->kvf[k].waiters;
        while (NULL != w) {
            fence_waiter_t *next = w->next;
            free(w);
            w = next;
        }
    }
}

void wireup_engine_coll_lost(orte_wireup_engine_t *e, orte_vpid_t vpid)
{
    for (uint32_t i = 0; i < e->num_nss; ++i) {
        wireup_ns_t *ns = wireup_engine_find_ns(e, i);
        if (NULL != ns && NULL != ns->gc &&
            NULL != bsearch(&vpid, ns->daemons, ns->num_daemons, sizeof(vpid),
                            wireup_engine_cmp_vpid)) {
            e->gcm->abort_all(ns->gc, HERD_ERR_UNREACH);
        }
    }
}
