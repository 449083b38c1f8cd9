/* SPDX-License-Identifier: BSD-3-Clause */
/* The wireup engine's completion queue: every callback of an operation is queued and run from
 * the event loop, never inside the call that started the operation (wireup.h promises it). */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>

#include "orte/mca/wireup/base/wireup_base_engine_internal.h"

typedef struct wireup_completion {
    struct wireup_completion *next;
    void (*run)(struct wireup_completion *c);
    /* the user's callback and what it gets */
    orte_wireup_done_fn_t done;
    orte_wireup_value_fn_t value;
    orte_wireup_blobs_fn_t blobs;
    void *cbdata;
    int status;
    char *error;
    void *data;
    size_t len;
    struct iovec *iov;
    uint32_t num_iov;
} completion_t;

static void completion_free(completion_t *c)
{
    free(c->error);
    free(c->data);
    free(c->iov);
    free(c);
}

static void queue_cb(int fd, short what, void *arg)
{
    orte_wireup_engine_t *e = arg;
    e->queue_armed = false;
    /* take the current queue: callbacks may queue more, run in the next round */
    completion_t *c = e->queue_head;
    e->queue_head = e->queue_tail = NULL;
    while (NULL != c) {
        completion_t *next = c->next;
        c->run(c);
        completion_free(c);
        c = next;
    }
}

int wireup_engine_queue_create(orte_wireup_engine_t *e)
{
    return opal_event_timer_create(e->config.base, false, queue_cb, e, &e->queue_event);
}

void wireup_engine_queue_free(orte_wireup_engine_t *e)
{
    while (NULL != e->queue_head) {
        completion_t *c = e->queue_head;
        e->queue_head = c->next;
        completion_free(c);
    }
    opal_event_free(e->queue_event);
}

static void queue_push(orte_wireup_engine_t *e, completion_t *c)
{
    c->next = NULL;
    if (NULL == e->queue_tail) {
        e->queue_head = c;
    } else {
        e->queue_tail->next = c;
    }
    e->queue_tail = c;
    if (!e->queue_armed) {
        struct timeval now = {0, 0};
        e->queue_armed = (HERD_SUCCESS == opal_event_add(e->queue_event, &now));
    }
}

static void run_done(completion_t *c)
{
    c->done(c->status, c->error, c->cbdata);
}

static void run_value(completion_t *c)
{
    c->value(c->status, c->data, c->len, c->error, c->cbdata);
}

static void run_blobs(completion_t *c)
{
    c->blobs(c->status, c->iov, c->num_iov, c->error, c->cbdata);
}

static char *dup_error(const char *error)
{
    return (NULL != error) ? strdup(error) : NULL;
}

void wireup_engine_complete_done(orte_wireup_engine_t *e, orte_wireup_done_fn_t cb, void *cbdata,
                                 int status, const char *error)
{
    completion_t *c = calloc(1, sizeof(*c));
    if (NULL == c) {
        return;
    }
    c->run = run_done;
    c->done = cb;
    c->cbdata = cbdata;
    c->status = status;
    c->error = dup_error(error);
    queue_push(e, c);
}

void wireup_engine_complete_value(orte_wireup_engine_t *e, orte_wireup_value_fn_t cb, void *cbdata,
                                  int status, const void *data, size_t len, const char *error)
{
    completion_t *c = calloc(1, sizeof(*c));
    if (NULL == c) {
        return;
    }
    c->run = run_value;
    c->value = cb;
    c->cbdata = cbdata;
    c->status = status;
    c->error = dup_error(error);
    if (HERD_SUCCESS == status && len > 0) {
        c->data = malloc(len);
        if (NULL == c->data) {
            c->status = HERD_ERR_OUT_OF_RESOURCE;
        } else {
            memcpy(c->data, data, len);
            c->len = len;
        }
    }
    queue_push(e, c);
}

/* Blobs are copied into one allocation; iov points into it. */
void wireup_engine_complete_blobs(orte_wireup_engine_t *e, orte_wireup_blobs_fn_t cb, void *cbdata,
                                  int status, const struct iovec *blobs, uint32_t n,
                                  const char *error)
{
    completion_t *c = calloc(1, sizeof(*c));
    if (NULL == c) {
        return;
    }
    c->run = run_blobs;
    c->blobs = cb;
    c->cbdata = cbdata;
    c->status = status;
    c->error = dup_error(error);
    if (HERD_SUCCESS == status) {
        size_t total = 0;
        for (uint32_t i = 0; i < n; ++i) {
            total += blobs[i].iov_len;
        }
        c->iov = calloc(n > 0 ? n : 1, sizeof(*c->iov));
        c->data = malloc(total > 0 ? total : 1);
        if (NULL == c->iov || NULL == c->data) {
            c->status = HERD_ERR_OUT_OF_RESOURCE;
        } else {
            uint8_t *p = c->data;
            for (uint32_t i = 0; i < n; ++i) {
                c->iov[i].iov_base = (blobs[i].iov_len > 0) ? p : NULL;
                c->iov[i].iov_len = blobs[i].iov_len;
                if (blobs[i].iov_len > 0) {
                    memcpy(p, blobs[i].iov_base, blobs[i].iov_len);
                }
                p += blobs[i].iov_len;
            }
            c->num_iov = n;
        }
    }
    queue_push(e, c);
}
