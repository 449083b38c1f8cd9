/* SPDX-License-Identifier: BSD-3-Clause */
/* The wireup engine's life cycle (create, namespaces, lost daemons, destroy) and the dispatch of
 * the messages session daemons send each other to its services: the key-value store
 * (wireup_base_kv.c), direct modex (_modex.c), namespace collectives (_coll.c), direct fences
 * (_fence.c) and published names (_names.c). Their callbacks all go through the completion queue
 * (_complete.c). Single-threaded: everything runs on the host's event loop (wireup.h, base.h). */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/util/output.h"
#include "orte/mca/wireup/base/wireup_base_engine_internal.h"

/* Messages for a namespace not known yet are held, up to these bounds. */
#define ENGINE_MAX_HELD_MSGS  65536u
#define ENGINE_MAX_HELD_BYTES ((size_t) 64 << 20)

typedef struct wireup_held_msg {
    struct wireup_held_msg *next;
    orte_vpid_t src;
    uint16_t tag;
    uint32_t nspace;
    size_t len;
    uint8_t data[];
} held_msg_t;

/* ------------------------------------------------------------------------------------------ */
/* small helpers the services share */

int wireup_engine_send_buffer(orte_wireup_engine_t *e, orte_vpid_t dst, uint16_t tag,
                              opal_buffer_t *b)
{
    struct iovec iov = {.iov_base = b->base, .iov_len = b->used};
    return e->config.send(e->config.ctx, dst, tag, &iov, 1);
}

int wireup_engine_arm_timer(orte_wireup_engine_t *e, opal_event_cb_t cb, void *arg, int ms,
                            opal_event_t **timer)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    int rc = opal_event_timer_create(e->config.base, false, cb, arg, timer);
    if (HERD_SUCCESS == rc && HERD_SUCCESS != (rc = opal_event_add(*timer, &tv))) {
        opal_event_free(*timer);
        *timer = NULL;
    }
    return rc;
}

const char *wireup_engine_kind_name(uint8_t kind)
{
    switch (kind) {
    case ORTE_WIREUP_KIND_NATIVE:
        return "native";
    case ORTE_WIREUP_KIND_PMI1:
        return "pmi1";
    case ORTE_WIREUP_KIND_PMIX:
        return "pmix";
    case ORTE_WIREUP_KIND_CONNECT:
        return "connect";
    case ORTE_WIREUP_KIND_PROCS:
        return "procs";
    case ORTE_WIREUP_KIND_CTRL:
        return "ctrl";
    default:
        return "unknown";
    }
}

void wireup_engine_malformed(orte_wireup_engine_t *e, orte_vpid_t src, const char *what)
{
    e->stats.malformed++;
    opal_output_verbose(1, e->verbose_stream,
                        "wireup: dropped a malformed %s message from session daemon %u", what, src);
}

int wireup_engine_cmp_vpid(const void *a, const void *b)
{
    orte_vpid_t x = *(const orte_vpid_t *) a, y = *(const orte_vpid_t *) b;
    return x < y ? -1 : (x > y);
}

/* ------------------------------------------------------------------------------------------ */
/* receiving: one decoder per message type, in the file of its service */

int wireup_engine_hold(orte_wireup_engine_t *e, orte_vpid_t src, uint16_t tag, uint32_t nspace,
                       const void *data, size_t len)
{
    if (e->num_held >= ENGINE_MAX_HELD_MSGS || e->held_bytes + len > ENGINE_MAX_HELD_BYTES) {
        wireup_engine_malformed(e, src, "held (too many messages for unknown namespaces)");
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    held_msg_t *h = malloc(sizeof(*h) + len);
    if (NULL == h) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    h->src = src;
    h->tag = tag;
    h->nspace = nspace;
    h->len = len;
    memcpy(h->data, data, len);
    /* appended, so they are delivered in arrival order */
    h->next = NULL;
    held_msg_t **p = &e->held;
    while (NULL != *p) {
        p = &(*p)->next;
    }
    *p = h;
    e->num_held++;
    e->held_bytes += len;
    return HERD_SUCCESS;
}

int wireup_engine_deliver(orte_wireup_engine_t *e, orte_vpid_t src, uint16_t tag, const void *data,
                          size_t len, bool redelivery)
{
    opal_buffer_t b;
    uint8_t version = 0;
    int rc;
    opal_buffer_init(&b);
    if (HERD_SUCCESS != (rc = opal_buffer_load(&b, data, len))) {
        return rc;
    }
    if (HERD_SUCCESS != opal_buffer_unpack_uint8(&b, &version)) {
        rc = HERD_ERR_UNPACK_FAILURE;
    } else if (ORTE_WIREUP_WIRE_VERSION != version) {
        rc = HERD_ERR_VERSION_MISMATCH;
    } else if (tag >= ORTE_WIREUP_TAG_COLL && tag < ORTE_WIREUP_TAG_COLL + ORTE_GRPCOMM_NUM_TAGS) {
        rc = wireup_engine_recv_coll(e, src, tag, &b, data, len, redelivery);
    } else if (ORTE_WIREUP_TAG_DFENCE == tag) {
        rc = wireup_engine_recv_dfence(e, src, &b, data, len);
    } else if (ORTE_WIREUP_TAG_DMODEX_REQ == tag) {
        rc = wireup_engine_recv_dmodex_req(e, src, &b, data, len, redelivery);
    } else if (ORTE_WIREUP_TAG_DMODEX_RESP == tag) {
        rc = wireup_engine_recv_resp(e, false, &b);
    } else if (ORTE_WIREUP_TAG_NAME_REQ == tag) {
        rc = wireup_engine_recv_name_req(e, src, &b);
    } else if (ORTE_WIREUP_TAG_NAME_RESP == tag) {
        rc = wireup_engine_recv_resp(e, true, &b);
    } else {
        rc = HERD_ERR_BAD_PARAM;
    }
    opal_buffer_destruct(&b);
    if (HERD_SUCCESS != rc && HERD_ERR_NOT_FOUND != rc) {
        wireup_engine_malformed(e, src,
                                HERD_ERR_VERSION_MISMATCH == rc ? "(other version)" : "wireup");
    }
    return rc;
}

int orte_wireup_engine_deliver(orte_wireup_engine_t *e, orte_vpid_t src, uint16_t tag,
                               const void *data, size_t len)
{
    if (NULL == e || (NULL == data && len > 0)) {
        return HERD_ERR_BAD_PARAM;
    }
    return wireup_engine_deliver(e, src, tag, data, len, false);
}

/* ------------------------------------------------------------------------------------------ */
/* life cycle */

int orte_wireup_engine_create(const orte_wireup_engine_config_t *config,
                              orte_wireup_engine_t **engine)
{
    if (NULL == config || NULL == config->base || NULL == config->send || NULL == engine ||
        0 == config->radix) {
        return HERD_ERR_BAD_PARAM;
    }
    const orte_grpcomm_module_t *gcm = orte_grpcomm_base_module();
    if (NULL == gcm) {
        return HERD_ERR_NOT_FOUND; /* the grpcomm framework must be open */
    }
    orte_wireup_engine_t *e = calloc(1, sizeof(*e));
    if (NULL == e) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    e->config = *config;
    e->gcm = gcm;
    e->verbose_stream = orte_wireup_base_framework.output;
    int rc = wireup_engine_queue_create(e);
    if (HERD_SUCCESS != rc) {
        free(e);
        return rc;
    }
    *engine = e;
    return HERD_SUCCESS;
}

static void ns_free(orte_wireup_engine_t *e, wireup_ns_t *ns)
{
    if (NULL == ns) {
        return;
    }
    wireup_engine_coll_ns_free(e, ns);
    wireup_engine_kv_ns_free(ns);
    wireup_store_free(ns->store);
    free(ns->daemons);
    free(ns);
}

void orte_wireup_engine_destroy(orte_wireup_engine_t *e)
{
    if (NULL == e) {
        return;
    }
    for (uint32_t i = 0; i < e->num_nss; ++i) {
        ns_free(e, e->nss[i]);
    }
    free(e->nss);
    wireup_engine_queue_free(e);
    while (NULL != e->held) {
        held_msg_t *h = e->held;
        e->held = h->next;
        free(h);
    }
    wireup_engine_dmodex_free(e);
    wireup_engine_dfences_free(e);
    wireup_engine_names_free(e);
    free(e);
}

/* A namespace's record from its description; *out set only on success. */
static int ns_new(orte_wireup_engine_t *e, const orte_wireup_engine_nspace_t *desc,
                  wireup_ns_t **out)
{
    wireup_ns_t *ns = calloc(1, sizeof(*ns));
    if (NULL == ns || NULL == (ns->store = wireup_store_create()) ||
        NULL == (ns->daemons = malloc((desc->num_daemons > 0 ? desc->num_daemons : 1) *
                                      sizeof(*ns->daemons)))) {
        if (NULL != ns) {
            wireup_store_free(ns->store);
        }
        free(ns);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    ns->engine = e;
    ns->index = desc->index;
    ns->num_procs = desc->num_procs;
    ns->num_local = desc->num_local;
    ns->rank_vpid = desc->rank_vpid;
    ns->ctx = desc->ctx;
    memcpy(ns->daemons, desc->daemons, desc->num_daemons * sizeof(*ns->daemons));
    qsort(ns->daemons, desc->num_daemons, sizeof(*ns->daemons), wireup_engine_cmp_vpid);
    ns->num_daemons = desc->num_daemons;
    ns->my_pos = -1;
    for (uint32_t i = 0; i < ns->num_daemons; ++i) {
        if (i > 0 && ns->daemons[i] == ns->daemons[i - 1]) {
            ns_free(e, ns);
            return HERD_ERR_BAD_PARAM;
        }
        if (ns->daemons[i] == e->config.me) {
            ns->my_pos = i;
        }
    }
    if (ns->my_pos >= 0 && ns->num_daemons > 1) {
        int rc = wireup_engine_coll_create(e, ns);
        if (HERD_SUCCESS != rc) {
            ns_free(e, ns);
            return rc;
        }
    }
    *out = ns;
    return HERD_SUCCESS;
}

int orte_wireup_engine_add_nspace(orte_wireup_engine_t *e, const orte_wireup_engine_nspace_t *desc)
{
    if (NULL == e || NULL == desc || NULL == desc->rank_vpid || 0 == desc->num_procs ||
        ORTE_WIREUP_OWNER_NSPACE == desc->num_procs || desc->index > (1u << 20) ||
        (desc->num_daemons > 0 && NULL == desc->daemons)) {
        return HERD_ERR_BAD_PARAM;
    }
    if (NULL != wireup_engine_find_ns(e, desc->index)) {
        return HERD_ERR_EXISTS;
    }
    if (desc->index >= e->num_nss) {
        uint32_t n = desc->index + 1;
        wireup_ns_t **grown = realloc(e->nss, n * sizeof(*grown));
        if (NULL == grown) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        memset(grown + e->num_nss, 0, (n - e->num_nss) * sizeof(*grown));
        e->nss = grown;
        e->num_nss = n;
    }
    wireup_ns_t *ns;
    int rc = ns_new(e, desc, &ns);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    ns->added = true;
    e->nss[desc->index] = ns;
    /* what arrived for it before it was known, in arrival order */
    held_msg_t **p = &e->held;
    while (NULL != *p) {
        held_msg_t *h = *p;
        if (h->nspace == desc->index) {
            *p = h->next;
            e->num_held--;
            e->held_bytes -= h->len;
            wireup_engine_deliver(e, h->src, h->tag, h->data, h->len, true);
            free(h);
        } else {
            p = &h->next;
        }
    }
    return HERD_SUCCESS;
}

void orte_wireup_engine_lost(orte_wireup_engine_t *e, orte_vpid_t vpid)
{
    if (NULL == e) {
        return;
    }
    wireup_engine_coll_lost(e, vpid);
    wireup_engine_dfences_lost(e, vpid);
    wireup_engine_dmodex_lost(e, vpid);
    wireup_engine_names_lost(e, vpid);
}

void orte_wireup_engine_get_stats(const orte_wireup_engine_t *e, orte_wireup_engine_stats_t *stats)
{
    *stats = e->stats;
    stats->cached_procs = 0;
    for (uint32_t i = 0; i < e->num_nss; ++i) {
        const wireup_ns_t *ns = wireup_engine_find_ns(e, i);
        if (NULL != ns) {
            stats->cached_procs += wireup_store_num_remote_owners(ns->store);
        }
    }
}
