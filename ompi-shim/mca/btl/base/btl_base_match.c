/* SPDX-License-Identifier: BSD-3-Clause */
/* The matching engine: posted receives and the unexpected queue, both in arrival order, so that
 * messages from one source with one tag are received in the order they were sent (modules
 * deliver each source's messages in order), as MPI orders them. */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>

#include "ompi-shim/mca/btl/base/base.h"
#include "ompi-shim/mca/btl/btl.h"

/* A message no receive was posted for yet: its bytes follow the header. */
typedef struct unexpected {
    struct unexpected *next;
    uint32_t src;
    int tag;
    size_t len;
    unsigned char data[];
} unexpected_t;

static struct {
    ompi_btl_recv_t *posted_head;
    ompi_btl_recv_t *posted_tail;
    unexpected_t *unexpected_head;
    unexpected_t *unexpected_tail;
    size_t num_unexpected;
} match;

static bool matches(const ompi_btl_recv_t *recv, uint32_t src, int tag)
{
    return (OMPI_BTL_ANY_SOURCE == recv->want_src || recv->want_src == src) &&
           (OMPI_BTL_ANY_TAG == recv->want_tag || recv->want_tag == tag);
}

/* Copy what fits, and say when it did not all fit (the length is that of the message). */
static void complete(ompi_btl_recv_t *recv, uint32_t src, int tag, const void *data, size_t len)
{
    size_t copy = len <= recv->cap ? len : recv->cap;

    if (copy > 0) {
        memcpy(recv->buf, data, copy);
    }
    recv->src = src;
    recv->tag = tag;
    recv->len = len;
    recv->status = len <= recv->cap ? HERD_SUCCESS : HERD_ERR_TRUNCATE;
    recv->done = true;
}

void ompi_btl_base_deliver(uint32_t src, int tag, const void *data, size_t len)
{
    ompi_btl_recv_t *prev = NULL;

    for (ompi_btl_recv_t *recv = match.posted_head; NULL != recv; prev = recv, recv = recv->next) {
        if (!matches(recv, src, tag)) {
            continue;
        }
        if (NULL == prev) {
            match.posted_head = recv->next;
        } else {
            prev->next = recv->next;
        }
        if (match.posted_tail == recv) {
            match.posted_tail = prev;
        }
        recv->next = NULL;
        complete(recv, src, tag, data, len);
        return;
    }
    /* keep a copy: the module's buffer is reused as soon as this returns. Without memory the
     * message is lost; there is no one to return an error to, so the receive will not match. */
    unexpected_t *u = malloc(sizeof(*u) + len);
    if (NULL == u) {
        return;
    }
    u->next = NULL;
    u->src = src;
    u->tag = tag;
    u->len = len;
    if (len > 0) {
        memcpy(u->data, data, len);
    }
    if (NULL == match.unexpected_tail) {
        match.unexpected_head = u;
    } else {
        match.unexpected_tail->next = u;
    }
    match.unexpected_tail = u;
    match.num_unexpected++;
}

int ompi_btl_base_post_recv(ompi_btl_recv_t *recv)
{
    unexpected_t *prev = NULL;

    if (NULL == recv || (NULL == recv->buf && recv->cap > 0)) {
        return HERD_ERR_BAD_PARAM;
    }
    recv->done = false;
    recv->next = NULL;
    for (unexpected_t *u = match.unexpected_head; NULL != u; prev = u, u = u->next) {
        if (!matches(recv, u->src, u->tag)) {
            continue;
        }
        if (NULL == prev) {
            match.unexpected_head = u->next;
        } else {
            prev->next = u->next;
        }
        if (match.unexpected_tail == u) {
            match.unexpected_tail = prev;
        }
        match.num_unexpected--;
        complete(recv, u->src, u->tag, u->data, u->len);
        free(u);
        return HERD_SUCCESS;
    }
    if (NULL == match.posted_tail) {
        match.posted_head = recv;
    } else {
        match.posted_tail->next = recv;
    }
    match.posted_tail = recv;
    return HERD_SUCCESS;
}

void ompi_btl_base_cancel_recv(ompi_btl_recv_t *recv)
{
    ompi_btl_recv_t *prev = NULL;

    for (ompi_btl_recv_t *r = match.posted_head; NULL != r; prev = r, r = r->next) {
        if (r != recv) {
            continue;
        }
        if (NULL == prev) {
            match.posted_head = r->next;
        } else {
            prev->next = r->next;
        }
        if (match.posted_tail == r) {
            match.posted_tail = prev;
        }
        r->next = NULL;
        return;
    }
}

size_t ompi_btl_base_num_unexpected(void)
{
    return match.num_unexpected;
}

void ompi_btl_base_match_release(void)
{
    while (NULL != match.unexpected_head) {
        unexpected_t *u = match.unexpected_head;
        match.unexpected_head = u->next;
        free(u);
    }
    match.unexpected_tail = NULL;
    match.num_unexpected = 0;
    /* posted receives belong to their callers, who are told the framework closed */
    match.posted_head = match.posted_tail = NULL;
}
