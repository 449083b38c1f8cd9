/* SPDX-License-Identifier: BSD-3-Clause */
/* The wireup engine's published names (PMIx publish/lookup/unpublish, PMI-1 publish_name and
 * lookup_name): one daemon of the job (the shepherd) keeps them for every namespace; the others
 * send it requests and wait for its answers. */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orte/mca/wireup/base/wireup_base_engine_internal.h"

enum { NAME_OP_PUBLISH = 1, NAME_OP_LOOKUP = 2, NAME_OP_UNPUBLISH = 3 };

typedef struct wireup_name_entry {
    struct wireup_name_entry *next;
    char *name;
    void *value;
    size_t len;
} name_entry_t;

/* A lookup waiting at the names daemon. */
typedef struct wireup_name_wait {
    struct wireup_name_wait *next;
    orte_wireup_engine_t *engine;
    char *name;
    orte_wireup_ticket_t *ticket;
    opal_event_t *timer;
} name_wait_t;

/* A name request this daemon sent. */
typedef struct wireup_name_req {
    struct wireup_name_req *next;
    uint32_t id;
    opal_event_t *timer;
    orte_wireup_done_fn_t done;
    orte_wireup_value_fn_t value;
    void *cbdata;
} name_req_t;

/* ------------------------------------------------------------------------------------------ */
/* at the names daemon */

static name_entry_t *find_name(orte_wireup_engine_t *e, const char *name)
{
    for (name_entry_t *n = e->names; NULL != n; n = n->next) {
        if (0 == strcmp(n->name, name)) {
            return n;
        }
    }
    return NULL;
}

static void name_wait_free(name_wait_t *w)
{
    wireup_engine_free_timer(&w->timer);
    free(w->name);
    free(w);
}

static void name_wait_timeout(int fd, short what, void *arg)
{
    name_wait_t *w = arg;
    orte_wireup_engine_t *e = w->engine;
    char error[ORTE_WIREUP_MAX_KEY + 80];
    for (name_wait_t **p = &e->name_waits; NULL != *p; p = &(*p)->next) {
        if (*p == w) {
            *p = w->next;
            break;
        }
    }
    snprintf(error, sizeof(error), "no process published the name '%s' in time", w->name);
    wireup_engine_ticket_answer(w->ticket, HERD_ERR_NOT_FOUND, NULL, 0, error);
    name_wait_free(w);
}

static void names_publish(orte_wireup_engine_t *e, name_entry_t *n, const char *name,
                          const void *value, size_t len, orte_wireup_ticket_t *ticket)
{
    char error[ORTE_WIREUP_MAX_KEY + 80];
    if (NULL != n) {
        snprintf(error, sizeof(error), "the name '%s' is already published", name);
        wireup_engine_ticket_answer(ticket, HERD_ERR_EXISTS, NULL, 0, error);
        return;
    }
    n = calloc(1, sizeof(*n));
    if (NULL == n || NULL == (n->name = strdup(name)) ||
        (len > 0 && NULL == (n->value = malloc(len)))) {
        if (NULL != n) {
            free(n->name);
        }
        free(n);
        wireup_engine_ticket_answer(ticket, HERD_ERR_OUT_OF_RESOURCE, NULL, 0, NULL);
        return;
    }
    if (len > 0) {
        memcpy(n->value, value, len);
    }
    n->len = len;
    n->next = e->names;
    e->names = n;
    wireup_engine_ticket_answer(ticket, HERD_SUCCESS, NULL, 0, NULL);
    /* lookups waiting for it */
    name_wait_t **p = &e->name_waits;
    while (NULL != *p) {
        name_wait_t *w = *p;
        if (0 == strcmp(w->name, name)) {
            *p = w->next;
            wireup_engine_ticket_answer(w->ticket, HERD_SUCCESS, n->value, n->len, NULL);
            name_wait_free(w);
        } else {
            p = &w->next;
        }
    }
}

static void names_lookup(orte_wireup_engine_t *e, name_entry_t *n, const char *name, int timeout_ms,
                         orte_wireup_ticket_t *ticket)
{
    char error[ORTE_WIREUP_MAX_KEY + 80];
    if (NULL != n) {
        wireup_engine_ticket_answer(ticket, HERD_SUCCESS, n->value, n->len, NULL);
        return;
    }
    if (timeout_ms <= 0) {
        snprintf(error, sizeof(error), "no process has published the name '%s'", name);
        wireup_engine_ticket_answer(ticket, HERD_ERR_NOT_FOUND, NULL, 0, error);
        return;
    }
    name_wait_t *w = calloc(1, sizeof(*w));
    if (NULL == w || NULL == (w->name = strdup(name)) ||
        HERD_SUCCESS != wireup_engine_arm_timer(e, name_wait_timeout, w, timeout_ms, &w->timer)) {
        if (NULL != w) {
            free(w->name);
        }
        free(w);
        wireup_engine_ticket_answer(ticket, HERD_ERR_OUT_OF_RESOURCE, NULL, 0, NULL);
        return;
    }
    w->engine = e;
    w->ticket = ticket;
    w->next = e->name_waits;
    e->name_waits = w;
}

static void names_unpublish(orte_wireup_engine_t *e, name_entry_t *n, const char *name,
                            orte_wireup_ticket_t *ticket)
{
    char error[ORTE_WIREUP_MAX_KEY + 80];
    if (NULL == n) {
        snprintf(error, sizeof(error), "the name '%s' is not published", name);
        wireup_engine_ticket_answer(ticket, HERD_ERR_NOT_FOUND, NULL, 0, error);
        return;
    }
    for (name_entry_t **p = &e->names; NULL != *p; p = &(*p)->next) {
        if (*p == n) {
            *p = n->next;
            break;
        }
    }
    free(n->name);
    free(n->value);
    free(n);
    wireup_engine_ticket_answer(ticket, HERD_SUCCESS, NULL, 0, NULL);
}

/* One request (op already checked). */
static void names_serve(orte_wireup_engine_t *e, uint8_t op, const char *name, const void *value,
                        size_t len, int timeout_ms, orte_wireup_ticket_t *ticket)
{
    name_entry_t *n = find_name(e, name);
    if (NAME_OP_PUBLISH == op) {
        names_publish(e, n, name, value, len, ticket);
    } else if (NAME_OP_LOOKUP == op) {
        names_lookup(e, n, name, timeout_ms, ticket);
    } else {
        names_unpublish(e, n, name, ticket);
    }
}

int wireup_engine_recv_name_req(orte_wireup_engine_t *e, orte_vpid_t src, opal_buffer_t *b)
{
    uint32_t id;
    uint8_t op;
    char *name = NULL;
    void *value = NULL;
    size_t vlen = 0;
    int32_t timeout_ms;
    int rc;
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(b, &id)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint8(b, &op)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_string(b, &name)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_bytes(b, &value, &vlen)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_int32(b, &timeout_ms))) {
        /* a message cut before its timeout has its value already unpacked */
        free(name);
        free(value);
        return rc;
    }
    if (op < NAME_OP_PUBLISH || op > NAME_OP_UNPUBLISH || !wireup_engine_key_valid(name) ||
        vlen > ORTE_WIREUP_MAX_VALUE || e->config.names != e->config.me) {
        rc = HERD_ERR_UNPACK_FAILURE;
    } else {
        orte_wireup_ticket_t *t = wireup_engine_ticket_new(e, src, id, true);
        if (NULL == t) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
        } else {
            names_serve(e, op, name, value, vlen, timeout_ms, t);
        }
    }
    free(name);
    free(value);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* requests this daemon sends */

static void name_req_free(name_req_t *r)
{
    wireup_engine_free_timer(&r->timer);
    free(r);
}

static void name_req_finish(orte_wireup_engine_t *e, name_req_t *r, int status, const void *data,
                            size_t len, const char *error)
{
    for (name_req_t **p = &e->name_reqs; NULL != *p; p = &(*p)->next) {
        if (*p == r) {
            *p = r->next;
            break;
        }
    }
    if (NULL != r->value) {
        wireup_engine_complete_value(e, r->value, r->cbdata, status, data, len, error);
    } else {
        wireup_engine_complete_done(e, r->done, r->cbdata, status, error);
    }
    name_req_free(r);
}

void wireup_engine_names_answered(orte_wireup_engine_t *e, uint32_t id, int status,
                                  const void *data, size_t len, const char *error)
{
    for (name_req_t *r = e->name_reqs; NULL != r; r = r->next) {
        if (r->id == id) {
            name_req_finish(e, r, status, data, len, error);
            return;
        }
    }
}

static int name_request(orte_wireup_engine_t *e, uint8_t op, const char *name, const void *value,
                        size_t len, int timeout_ms, orte_wireup_done_fn_t done,
                        orte_wireup_value_fn_t value_cb, void *cbdata)
{
    if (NULL == e || !wireup_engine_key_valid(name) || len > ORTE_WIREUP_MAX_VALUE ||
        (len > 0 && NULL == value) || (NULL == done && NULL == value_cb)) {
        return HERD_ERR_BAD_PARAM;
    }
    name_req_t *r = calloc(1, sizeof(*r));
    if (NULL == r) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    r->id = ++e->next_id;
    r->done = done;
    r->value = value_cb;
    r->cbdata = cbdata;
    r->next = e->name_reqs;
    e->name_reqs = r;
    opal_buffer_t b;
    opal_buffer_init(&b);
    int rc;
    if (HERD_SUCCESS != (rc = opal_buffer_pack_uint8(&b, ORTE_WIREUP_WIRE_VERSION)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(&b, r->id)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint8(&b, op)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_string(&b, name)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_bytes(&b, value, len)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_int32(&b, timeout_ms))) {
        opal_buffer_destruct(&b);
        e->name_reqs = r->next;
        free(r);
        return rc;
    }
    if (e->config.names == e->config.me) {
        rc =
            wireup_engine_deliver(e, e->config.me, ORTE_WIREUP_TAG_NAME_REQ, b.base, b.used, false);
    } else {
        rc = wireup_engine_send_buffer(e, e->config.names, ORTE_WIREUP_TAG_NAME_REQ, &b);
    }
    opal_buffer_destruct(&b);
    if (HERD_SUCCESS != rc) {
        for (name_req_t **p = &e->name_reqs; NULL != *p; p = &(*p)->next) {
            if (*p == r) {
                *p = r->next;
                break;
            }
        }
        free(r);
    }
    return rc;
}

int orte_wireup_publish(orte_wireup_engine_t *e, const char *name, const void *value, size_t len,
                        orte_wireup_done_fn_t cb, void *cbdata)
{
    return name_request(e, NAME_OP_PUBLISH, name, value, len, 0, cb, NULL, cbdata);
}

int orte_wireup_lookup(orte_wireup_engine_t *e, const char *name, int timeout_ms,
                       orte_wireup_value_fn_t cb, void *cbdata)
{
    return name_request(e, NAME_OP_LOOKUP, name, NULL, 0, timeout_ms < 0 ? 0 : timeout_ms, NULL, cb,
                        cbdata);
}

int orte_wireup_unpublish(orte_wireup_engine_t *e, const char *name, orte_wireup_done_fn_t cb,
                          void *cbdata)
{
    return name_request(e, NAME_OP_UNPUBLISH, name, NULL, 0, 0, cb, NULL, cbdata);
}

/* ------------------------------------------------------------------------------------------ */
/* life cycle */

void wireup_engine_names_lost(orte_wireup_engine_t *e, orte_vpid_t vpid)
{
    if (vpid == e->config.names) {
        while (NULL != e->name_reqs) {
            name_req_finish(e, e->name_reqs, HERD_ERR_UNREACH, NULL, 0,
                            "the session daemon keeping published names is gone");
        }
    }
}

void wireup_engine_names_free(orte_wireup_engine_t *e)
{
    while (NULL != e->names) {
        name_entry_t *n = e->names;
        e->names = n->next;
        free(n->name);
        free(n->value);
        free(n);
    }
    while (NULL != e->name_waits) {
        name_wait_t *w = e->name_waits;
        e->name_waits = w->next;
        name_wait_free(w);
    }
    while (NULL != e->name_reqs) {
        name_req_t *r = e->name_reqs;
        e->name_reqs = r->next;
        name_req_free(r);
    }
}
