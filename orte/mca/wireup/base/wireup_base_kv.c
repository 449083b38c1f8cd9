/* SPDX-License-Identifier: BSD-3-Clause */
/* The wireup engine's key-value service on top of each namespace's store (wireup_base_store.c):
 * puts and commits of local processes, gets answered from the store or once the key is
 * committed, and other daemons' requests for a local process's keys (the serving side of the
 * direct modex). Gets of a remote owner's key go to wireup_base_modex.c. */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orte/mca/wireup/base/wireup_base_engine_internal.h"

/* A local get waiting for a key to be committed (a local owner, or the namespace). */
typedef struct wireup_kv_wait {
    struct wireup_kv_wait *next;
    orte_wireup_engine_t *engine;
    wireup_ns_t *ns;
    uint32_t owner;
    char *key;
    orte_wireup_value_fn_t cb;
    void *cbdata;
    opal_event_t *timer;
    int timeout_ms;
} kv_wait_t;

/* A request of another daemon waiting for a local owner's key. */
typedef struct wireup_remote_wait {
    struct wireup_remote_wait *next;
    orte_wireup_engine_t *engine;
    wireup_ns_t *ns;
    uint32_t owner;
    char *key; /* NULL: anything committed */
    orte_wireup_ticket_t *ticket;
    opal_event_t *timer;
    int timeout_ms;
} remote_wait_t;

/* Whether owner is hosted here (or is the namespace itself, whose keys are only local). */
static bool owner_local(const orte_wireup_engine_t *e, const wireup_ns_t *ns, uint32_t owner)
{
    return ORTE_WIREUP_OWNER_NSPACE == owner || ns->rank_vpid(ns->ctx, owner) == e->config.me;
}

static void kv_wait_free(kv_wait_t *w)
{
    wireup_engine_free_timer(&w->timer);
    free(w->key);
    free(w);
}

static void remote_wait_free(remote_wait_t *w)
{
    wireup_engine_free_timer(&w->timer);
    free(w->key);
    free(w);
}

void wireup_engine_kv_ns_free(wireup_ns_t *ns)
{
    while (NULL != ns->kv_waits) {
        kv_wait_t *w = ns->kv_waits;
        ns->kv_waits = w->next;
        kv_wait_free(w);
    }
    while (NULL != ns->remote_waits) {
        remote_wait_t *w = ns->remote_waits;
        ns->remote_waits = w->next;
        remote_wait_free(w); /* its ticket goes with the ticket list */
    }
}

static void kv_wait_timeout(int fd, short what, void *arg)
{
    kv_wait_t *w = arg;
    wireup_ns_t *ns = w->ns;
    char error[ORTE_WIREUP_MAX_KEY + 160];
    for (kv_wait_t **p = &ns->kv_waits; NULL != *p; p = &(*p)->next) {
        if (*p == w) {
            *p = w->next;
            break;
        }
    }
    if (ORTE_WIREUP_OWNER_NSPACE == w->owner) {
        snprintf(error, sizeof(error), "no process put key '%s' within %.1f s", w->key,
                 w->timeout_ms / 1000.0);
    } else {
        snprintf(error, sizeof(error), "rank %u never committed key '%s' within %.1f s", w->owner,
                 w->key, w->timeout_ms / 1000.0);
    }
    wireup_engine_complete_value(w->engine, w->cb, w->cbdata, HERD_ERR_NOT_FOUND, NULL, 0, error);
    kv_wait_free(w);
}

static void answer_owner(orte_wireup_engine_t *e, wireup_ns_t *ns, uint32_t owner,
                         orte_wireup_ticket_t *ticket)
{
    opal_buffer_t b;
    opal_buffer_init(&b);
    int rc = wireup_store_pack_owner(ns->store, owner, &b);
    e->stats.dmodex_served++;
    orte_wireup_dmodex_reply(ticket, rc, b.base, b.used, NULL);
    opal_buffer_destruct(&b);
}

/* owner committed: answer the local gets and remote requests now satisfied. */
static void kv_committed(orte_wireup_engine_t *e, wireup_ns_t *ns, uint32_t owner)
{
    kv_wait_t **p = &ns->kv_waits;
    while (NULL != *p) {
        kv_wait_t *w = *p;
        wireup_store_value_t v;
        if (w->owner == owner && wireup_store_find(ns->store, owner, w->key, &v)) {
            *p = w->next;
            wireup_engine_complete_value(e, w->cb, w->cbdata, HERD_SUCCESS, v.data, v.len, NULL);
            kv_wait_free(w);
        } else {
            p = &w->next;
        }
    }
    remote_wait_t **r = &ns->remote_waits;
    while (NULL != *r) {
        remote_wait_t *w = *r;
        wireup_store_value_t v;
        if (w->owner == owner &&
            (NULL == w->key || wireup_store_find(ns->store, owner, w->key, &v))) {
            *r = w->next;
            answer_owner(e, ns, owner, w->ticket);
            w->ticket = NULL;
            remote_wait_free(w);
        } else {
            r = &w->next;
        }
    }
}

int orte_wireup_kv_put(orte_wireup_engine_t *e, uint32_t nspace, uint32_t owner, const char *key,
                       const void *value, size_t len)
{
    wireup_ns_t *ns = (NULL != e) ? wireup_engine_find_ns(e, nspace) : NULL;
    if (NULL == ns || !wireup_engine_key_valid(key) || len > ORTE_WIREUP_MAX_VALUE ||
        (len > 0 && NULL == value) ||
        (ORTE_WIREUP_OWNER_NSPACE != owner && owner >= ns->num_procs)) {
        return HERD_ERR_BAD_PARAM;
    }
    return wireup_store_put(ns->store, owner, key, value, len);
}

int orte_wireup_kv_commit(orte_wireup_engine_t *e, uint32_t nspace, uint32_t owner)
{
    wireup_ns_t *ns = (NULL != e) ? wireup_engine_find_ns(e, nspace) : NULL;
    size_t count = 0;
    if (NULL == ns || (ORTE_WIREUP_OWNER_NSPACE != owner && owner >= ns->num_procs)) {
        return HERD_ERR_BAD_PARAM;
    }
    int rc = wireup_store_commit(ns->store, owner, ++ns->commit_gen, &count);
    if (HERD_SUCCESS == rc) {
        kv_committed(e, ns, owner);
    }
    return rc;
}

int orte_wireup_kv_get(orte_wireup_engine_t *e, uint32_t nspace, uint32_t owner, const char *key,
                       int timeout_ms, orte_wireup_value_fn_t cb, void *cbdata)
{
    wireup_ns_t *ns = (NULL != e) ? wireup_engine_find_ns(e, nspace) : NULL;
    wireup_store_value_t v;
    if (NULL == ns || !wireup_engine_key_valid(key) || NULL == cb ||
        (ORTE_WIREUP_OWNER_NSPACE != owner && owner >= ns->num_procs)) {
        return HERD_ERR_BAD_PARAM;
    }
    if (wireup_store_find(ns->store, owner, key, &v)) {
        wireup_engine_complete_value(e, cb, cbdata, HERD_SUCCESS, v.data, v.len, NULL);
        return HERD_SUCCESS;
    }
    timeout_ms = wireup_engine_effective_timeout(e, timeout_ms);
    if (!owner_local(e, ns, owner)) {
        return wireup_engine_dmodex_get(e, ns, owner, key, timeout_ms, cb, cbdata);
    }
    char error[ORTE_WIREUP_MAX_KEY + 80];
    if (0 == timeout_ms) {
        if (ORTE_WIREUP_OWNER_NSPACE == owner) {
            snprintf(error, sizeof(error), "no process has put key '%s'", key);
        } else {
            snprintf(error, sizeof(error), "rank %u has not committed key '%s'", owner, key);
        }
        wireup_engine_complete_value(e, cb, cbdata, HERD_ERR_NOT_FOUND, NULL, 0, error);
        return HERD_SUCCESS;
    }
    kv_wait_t *w = calloc(1, sizeof(*w));
    if (NULL == w || NULL == (w->key = strdup(key))) {
        free(w);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    w->engine = e;
    w->ns = ns;
    w->owner = owner;
    w->cb = cb;
    w->cbdata = cbdata;
    w->timeout_ms = timeout_ms;
    int rc = wireup_engine_arm_timer(e, kv_wait_timeout, w, timeout_ms, &w->timer);
    if (HERD_SUCCESS != rc) {
        kv_wait_free(w);
        return rc;
    }
    w->next = ns->kv_waits;
    ns->kv_waits = w;
    return HERD_SUCCESS;
}

static void remote_wait_timeout(int fd, short what, void *arg)
{
    remote_wait_t *w = arg;
    wireup_ns_t *ns = w->ns;
    char error[ORTE_WIREUP_MAX_KEY + 160];
    for (remote_wait_t **p = &ns->remote_waits; NULL != *p; p = &(*p)->next) {
        if (*p == w) {
            *p = w->next;
            break;
        }
    }
    snprintf(error, sizeof(error), "rank %u never committed key '%s' within %.1f s", w->owner,
             NULL != w->key ? w->key : "(any)", w->timeout_ms / 1000.0);
    orte_wireup_dmodex_reply(w->ticket, HERD_ERR_NOT_FOUND, NULL, 0, error);
    w->ticket = NULL;
    remote_wait_free(w);
}

void wireup_engine_kv_serve(orte_wireup_engine_t *e, wireup_ns_t *ns, uint32_t rank,
                            const char *key, int timeout_ms, orte_wireup_ticket_t *ticket)
{
    wireup_store_value_t v;
    bool ready = ('\0' == *key) ? wireup_store_has_owner(ns->store, rank)
                                : wireup_store_find(ns->store, rank, key, &v);
    if (ready) {
        answer_owner(e, ns, rank, ticket);
        return;
    }
    if (timeout_ms <= 0) {
        char error[ORTE_WIREUP_MAX_KEY + 80];
        snprintf(error, sizeof(error), "rank %u has not committed key '%s'", rank,
                 '\0' != *key ? key : "(any)");
        orte_wireup_dmodex_reply(ticket, HERD_ERR_NOT_FOUND, NULL, 0, error);
        return;
    }
    remote_wait_t *w = calloc(1, sizeof(*w));
    if (NULL == w || ('\0' != *key && NULL == (w->key = strdup(key)))) {
        free(w);
        orte_wireup_dmodex_reply(ticket, HERD_ERR_OUT_OF_RESOURCE, NULL, 0, NULL);
        return;
    }
    w->engine = e;
    w->ns = ns;
    w->owner = rank;
    w->ticket = ticket;
    w->timeout_ms = timeout_ms;
    if (HERD_SUCCESS != wireup_engine_arm_timer(e, remote_wait_timeout, w, timeout_ms, &w->timer)) {
        orte_wireup_dmodex_reply(ticket, HERD_ERR_OUT_OF_RESOURCE, NULL, 0, NULL);
        w->ticket = NULL;
        remote_wait_free(w);
        return;
    }
    w->next = ns->remote_waits;
    ns->remote_waits = w;
}
