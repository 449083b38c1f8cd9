/* SPDX-License-Identifier: BSD-3-Clause */
/* The wireup engine's direct modex: a get of a peer's data on demand from the daemon hosting the
 * peer (the requests this daemon sends and their answers), the requests it receives (handed to
 * the key-value service or to the module of their kind), and the tickets every answer goes out
 * with (name requests at the names daemon use them too). */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orte/mca/wireup/base/wireup_base_engine_internal.h"

/* A requester gives the answering daemon this long beyond the request's own timeout. */
#define ENGINE_REPLY_GRACE_MS 10000

/* A get of a remote owner's key, waiting for that owner's daemon. */
typedef struct kv_get {
    struct kv_get *next;
    char *key;
    orte_wireup_value_fn_t cb;
    void *cbdata;
} kv_get_t;

/* A direct-modex request this daemon sent. */
typedef struct wireup_dm_req {
    struct wireup_dm_req *next;
    orte_wireup_engine_t *engine;
    uint32_t id;
    orte_vpid_t target;
    uint32_t nspace;
    uint32_t rank;
    uint8_t kind;
    char *key;
    opal_event_t *timer;
    orte_wireup_value_fn_t cb; /* raw requests */
    void *cbdata;
    kv_get_t *gets; /* kv requests: the gets answered by it */
} dm_req_t;

struct orte_wireup_ticket {
    struct orte_wireup_ticket *next;
    orte_wireup_engine_t *engine;
    orte_vpid_t src;
    uint32_t id;
    bool orphaned; /* the requester is gone: the answer is dropped */
    bool names;    /* an answer to a name request */
};

/* ------------------------------------------------------------------------------------------ */
/* requests this daemon sends */

/* The answer to a kv request came (or failed): every get attached to it looks again. */
static void kv_request_done(orte_wireup_engine_t *e, dm_req_t *req, int status, const void *data,
                            size_t len, const char *error)
{
    wireup_ns_t *ns = wireup_engine_find_ns(e, req->nspace);
    char text[ORTE_WIREUP_MAX_KEY + 160];
    if (HERD_SUCCESS == status && NULL != ns) {
        status = wireup_store_unpack_bytes(ns->store, data, len, ORTE_WIREUP_MAX_KEY,
                                           ORTE_WIREUP_MAX_VALUE);
        if (HERD_SUCCESS != status) {
            wireup_engine_malformed(e, req->target, "direct modex answer");
            error = "the answer of the session daemon hosting the peer was malformed";
        }
    }
    kv_get_t *g = req->gets;
    req->gets = NULL;
    while (NULL != g) {
        kv_get_t *next = g->next;
        wireup_store_value_t v;
        if (HERD_SUCCESS == status && NULL != ns &&
            wireup_store_find(ns->store, req->rank, g->key, &v)) {
            wireup_engine_complete_value(e, g->cb, g->cbdata, HERD_SUCCESS, v.data, v.len, NULL);
        } else {
            if (HERD_SUCCESS == status) {
                snprintf(text, sizeof(text), "rank %u has no key '%s'", req->rank, g->key);
            }
            wireup_engine_complete_value(e, g->cb, g->cbdata,
                                         HERD_SUCCESS == status ? HERD_ERR_NOT_FOUND : status, NULL,
                                         0, HERD_SUCCESS == status ? text : error);
        }
        free(g->key);
        free(g);
        g = next;
    }
}

static void dm_req_free(dm_req_t *req)
{
    wireup_engine_free_timer(&req->timer);
    free(req->key);
    free(req);
}

static void dm_req_unlink(orte_wireup_engine_t *e, dm_req_t *req)
{
    for (dm_req_t **p = &e->dm_reqs; NULL != *p; p = &(*p)->next) {
        if (*p == req) {
            *p = req->next;
            return;
        }
    }
}

/* Finish a request this daemon sent: its raw callback, or its kv gets. */
static void dm_req_finish(orte_wireup_engine_t *e, dm_req_t *req, int status, const void *data,
                          size_t len, const char *error)
{
    dm_req_unlink(e, req);
    if (NULL != req->cb) {
        wireup_engine_complete_value(e, req->cb, req->cbdata, status, data, len, error);
    } else {
        kv_request_done(e, req, status, data, len, error);
    }
    dm_req_free(req);
}

static void dm_req_timeout(int fd, short what, void *arg)
{
    dm_req_t *req = arg;
    char error[ORTE_WIREUP_MAX_KEY + 160];
    snprintf(error, sizeof(error),
             "the session daemon hosting rank %u of namespace %u did not answer a request for "
             "key '%s' in time",
             req->rank, req->nspace, NULL != req->key ? req->key : "(any)");
    dm_req_finish(req->engine, req, HERD_ERR_TIMEOUT, NULL, 0, error);
}

/* A request to the daemon hosting (nspace, rank). */
static int dm_send(orte_wireup_engine_t *e, dm_req_t *req, int timeout_ms)
{
    wireup_ns_t *ns = wireup_engine_find_ns(e, req->nspace);
    if (NULL == ns) {
        return HERD_ERR_BAD_PARAM;
    }
    req->engine = e;
    req->id = ++e->next_id;
    req->target = ns->rank_vpid(ns->ctx, req->rank);
    if (ORTE_VPID_INVALID == req->target) {
        return HERD_ERR_BAD_PARAM;
    }
    int rc = wireup_engine_arm_timer(e, dm_req_timeout, req, timeout_ms + ENGINE_REPLY_GRACE_MS,
                                     &req->timer);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    req->next = e->dm_reqs;
    e->dm_reqs = req;
    e->stats.dmodex_sent++;
    opal_buffer_t b;
    opal_buffer_init(&b);
    if (HERD_SUCCESS != (rc = opal_buffer_pack_uint8(&b, ORTE_WIREUP_WIRE_VERSION)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(&b, req->id)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(&b, req->nspace)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(&b, req->rank)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint8(&b, req->kind)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_string(&b, NULL != req->key ? req->key : "")) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_int32(&b, timeout_ms))) {
        opal_buffer_destruct(&b);
        dm_req_unlink(e, req);
        return rc;
    }
    if (req->target == e->config.me) {
        /* a process of ours: answered through our own handler, without a message */
        rc = wireup_engine_deliver(e, e->config.me, ORTE_WIREUP_TAG_DMODEX_REQ, b.base, b.used,
                                   false);
    } else {
        rc = wireup_engine_send_buffer(e, req->target, ORTE_WIREUP_TAG_DMODEX_REQ, &b);
    }
    opal_buffer_destruct(&b);
    if (HERD_SUCCESS != rc) {
        dm_req_unlink(e, req);
    }
    return rc;
}

int wireup_engine_dmodex_get(orte_wireup_engine_t *e, wireup_ns_t *ns, uint32_t owner,
                             const char *key, int timeout_ms, orte_wireup_value_fn_t cb,
                             void *cbdata)
{
    kv_get_t *g = calloc(1, sizeof(*g));
    if (NULL == g || NULL == (g->key = strdup(key))) {
        free(g);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    g->cb = cb;
    g->cbdata = cbdata;
    for (dm_req_t *req = e->dm_reqs; NULL != req; req = req->next) {
        if (NULL == req->cb && req->nspace == ns->index && req->rank == owner &&
            0 == strcmp(req->key, key)) {
            g->next = req->gets;
            req->gets = g;
            return HERD_SUCCESS;
        }
    }
    dm_req_t *req = calloc(1, sizeof(*req));
    if (NULL == req || NULL == (req->key = strdup(key))) {
        free(req);
        free(g->key);
        free(g);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    req->nspace = ns->index;
    req->rank = owner;
    req->kind = ORTE_WIREUP_KIND_NATIVE; /* any kv kind: the store is shared */
    req->gets = g;
    int rc = dm_send(e, req, timeout_ms);
    if (HERD_SUCCESS != rc) {
        free(g->key);
        free(g);
        req->gets = NULL;
        dm_req_free(req);
    }
    return rc;
}

int orte_wireup_dmodex(orte_wireup_engine_t *e, uint32_t nspace, uint32_t rank,
                       orte_wireup_kind_t kind, const char *key, int timeout_ms,
                       orte_wireup_value_fn_t cb, void *cbdata)
{
    wireup_ns_t *ns = (NULL != e) ? wireup_engine_find_ns(e, nspace) : NULL;
    if (NULL == ns || !wireup_engine_kind_valid(kind) || NULL == cb || rank >= ns->num_procs ||
        (NULL != key && '\0' != *key && !wireup_engine_key_valid(key))) {
        return HERD_ERR_BAD_PARAM;
    }
    dm_req_t *req = calloc(1, sizeof(*req));
    if (NULL == req) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    req->nspace = nspace;
    req->rank = rank;
    req->kind = (uint8_t) kind;
    req->cb = cb;
    req->cbdata = cbdata;
    if (NULL != key && '\0' != *key && NULL == (req->key = strdup(key))) {
        free(req);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    int rc = dm_send(e, req, wireup_engine_effective_timeout(e, timeout_ms));
    if (HERD_SUCCESS != rc) {
        dm_req_free(req);
    }
    return rc;
}

void wireup_engine_dmodex_lost(orte_wireup_engine_t *e, orte_vpid_t vpid)
{
    char error[160];
    dm_req_t *r = e->dm_reqs;
    while (NULL != r) {
        dm_req_t *next = r->next;
        if (r->target == vpid) {
            snprintf(error, sizeof(error),
                     "the session daemon hosting rank %u of namespace %u is gone", r->rank,
                     r->nspace);
            dm_req_finish(e, r, HERD_ERR_UNREACH, NULL, 0, error);
        }
        r = next;
    }
    for (orte_wireup_ticket_t *t = e->tickets; NULL != t; t = t->next) {
        if (t->src == vpid) {
            t->orphaned = true;
        }
    }
}

void wireup_engine_dmodex_free(orte_wireup_engine_t *e)
{
    while (NULL != e->dm_reqs) {
        dm_req_t *r = e->dm_reqs;
        e->dm_reqs = r->next;
        while (NULL != r->gets) {
            kv_get_t *g = r->gets;
            r->gets = g->next;
            free(g->key);
            free(g);
        }
        dm_req_free(r);
    }
    while (NULL != e->tickets) {
        orte_wireup_ticket_t *t = e->tickets;
        e->tickets = t->next;
        free(t);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* answers */

/* An answer came (or, from this daemon, was given): finish the request it belongs to. */
static void handle_resp(orte_wireup_engine_t *e, bool names, uint32_t id, int status,
                        const void *data, size_t len, const char *error)
{
    const char *text = (NULL != error && '\0' != *error) ? error : NULL;
    if (names) {
        wireup_engine_names_answered(e, id, status, data, len, text);
        return;
    }
    for (dm_req_t *r = e->dm_reqs; NULL != r; r = r->next) {
        if (r->id == id) {
            dm_req_finish(e, r, status, data, len, text);
            return;
        }
    }
    /* an answer after its request timed out: nothing waits for it */
}

int wireup_engine_recv_resp(orte_wireup_engine_t *e, bool names, opal_buffer_t *b)
{
    uint32_t id;
    int32_t status;
    void *value = NULL;
    size_t vlen = 0;
    char *error = NULL;
    int rc;
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(b, &id)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_int32(b, &status)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_bytes(b, &value, &vlen)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_string(b, &error))) {
        free(value);
        return rc;
    }
    if (status > 0 || status <= HERD_ERR_MAX || (HERD_SUCCESS != status && vlen > 0)) {
        rc = HERD_ERR_UNPACK_FAILURE;
    } else {
        handle_resp(e, names, id, status, value, vlen, error);
    }
    free(value);
    free(error);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* requests this daemon receives, and the tickets it answers them with */

int orte_wireup_set_dmodex_handler(orte_wireup_engine_t *e, orte_wireup_kind_t kind,
                                   orte_wireup_dmodex_handler_t handler, void *ctx)
{
    if (NULL == e || !wireup_engine_kind_valid(kind) || ORTE_WIREUP_KIND_NATIVE == kind ||
        ORTE_WIREUP_KIND_PMI1 == kind) {
        return HERD_ERR_BAD_PARAM; /* the key-value kinds are the engine's own */
    }
    if (NULL != handler && NULL != e->handlers[kind].fn) {
        return HERD_ERR_EXISTS;
    }
    e->handlers[kind].fn = handler;
    e->handlers[kind].ctx = ctx;
    return HERD_SUCCESS;
}

orte_wireup_ticket_t *wireup_engine_ticket_new(orte_wireup_engine_t *e, orte_vpid_t src,
                                               uint32_t id, bool names)
{
    orte_wireup_ticket_t *t = calloc(1, sizeof(*t));
    if (NULL != t) {
        *t = (orte_wireup_ticket_t){
            .next = e->tickets, .engine = e, .src = src, .id = id, .names = names};
        e->tickets = t;
    }
    return t;
}

static void ticket_release(orte_wireup_ticket_t *t)
{
    orte_wireup_engine_t *e = t->engine;
    for (orte_wireup_ticket_t **p = &e->tickets; NULL != *p; p = &(*p)->next) {
        if (*p == t) {
            *p = t->next;
            break;
        }
    }
    free(t);
}

void wireup_engine_ticket_answer(orte_wireup_ticket_t *t, int status, const void *data, size_t len,
                                 const char *error)
{
    orte_wireup_engine_t *e = t->engine;
    if (t->orphaned) {
        ticket_release(t);
        return;
    }
    if (t->src == e->config.me) {
        handle_resp(e, t->names, t->id, status, data, len, error);
        ticket_release(t);
        return;
    }
    opal_buffer_t b;
    opal_buffer_init(&b);
    if (HERD_SUCCESS == opal_buffer_pack_uint8(&b, ORTE_WIREUP_WIRE_VERSION) &&
        HERD_SUCCESS == opal_buffer_pack_uint32(&b, t->id) &&
        HERD_SUCCESS == opal_buffer_pack_int32(&b, status) &&
        HERD_SUCCESS == opal_buffer_pack_bytes(&b, HERD_SUCCESS == status ? data : NULL,
                                               HERD_SUCCESS == status ? len : 0) &&
        HERD_SUCCESS == opal_buffer_pack_string(&b, NULL != error ? error : "")) {
        wireup_engine_send_buffer(
            e, t->src, t->names ? ORTE_WIREUP_TAG_NAME_RESP : ORTE_WIREUP_TAG_DMODEX_RESP, &b);
    }
    opal_buffer_destruct(&b);
    ticket_release(t);
}

void orte_wireup_dmodex_reply(orte_wireup_ticket_t *t, int status, const void *data, size_t len,
                              const char *error)
{
    if (NULL != t) {
        wireup_engine_ticket_answer(t, status, data, len, error);
    }
}

int wireup_engine_recv_dmodex_req(orte_wireup_engine_t *e, orte_vpid_t src, opal_buffer_t *b,
                                  const void *data, size_t len, bool redelivery)
{
    uint32_t id, nspace, rank;
    uint8_t kind;
    int32_t timeout_ms;
    char *key = NULL;
    int rc;
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(b, &id)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(b, &nspace)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(b, &rank)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint8(b, &kind)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_string(b, &key)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_int32(b, &timeout_ms))) {
        free(key);
        return rc;
    }
    if (!wireup_engine_kind_valid(kind) || NULL == key || strlen(key) > ORTE_WIREUP_MAX_KEY) {
        free(key);
        return HERD_ERR_UNPACK_FAILURE;
    }
    wireup_ns_t *ns = wireup_engine_find_ns(e, nspace);
    if (NULL == ns) {
        free(key);
        return redelivery
                   ? HERD_ERR_NOT_FOUND
                   : wireup_engine_hold(e, src, ORTE_WIREUP_TAG_DMODEX_REQ, nspace, data, len);
    }
    orte_wireup_ticket_t *t = wireup_engine_ticket_new(e, src, id, false);
    if (NULL == t) {
        free(key);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (rank >= ns->num_procs || ns->rank_vpid(ns->ctx, rank) != e->config.me) {
        char error[128];
        snprintf(error, sizeof(error), "rank %u of namespace %u is not hosted by this daemon", rank,
                 nspace);
        orte_wireup_dmodex_reply(t, HERD_ERR_BAD_PARAM, NULL, 0, error);
    } else if (ORTE_WIREUP_KIND_NATIVE == kind || ORTE_WIREUP_KIND_PMI1 == kind) {
        wireup_engine_kv_serve(e, ns, rank, key, timeout_ms, t);
    } else if (NULL != e->handlers[kind].fn) {
        e->stats.dmodex_served++;
        e->handlers[kind].fn(e->handlers[kind].ctx, nspace, rank, '\0' != *key ? key : NULL,
                             timeout_ms, t);
    } else {
        char error[128];
        snprintf(error, sizeof(error), "no %s wireup serves rank %u's data on its node",
                 wireup_engine_kind_name(kind), rank);
        orte_wireup_dmodex_reply(t, HERD_ERR_NOT_SUPPORTED, NULL, 0, error);
    }
    free(key);
    return HERD_SUCCESS;
}
