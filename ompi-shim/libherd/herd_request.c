/* SPDX-License-Identifier: BSD-3-Clause */
/* libherd: test and wait on requests (a fence, a send, a receive). */
#include "herd_config.h"

#include <stdlib.h>

#include "herd_internal.h"
#include "opal/status.h"

/* A receive that completed: its results to the caller's variables, and its status explained. */
int libherd_finish_recv(struct herd_request *req)
{
    const ompi_btl_recv_t *r = &req->recv;
    if (NULL != req->len_out) {
        *req->len_out = r->len;
    }
    if (NULL != req->src_out) {
        *req->src_out = r->src;
    }
    if (NULL != req->tag_out) {
        *req->tag_out = r->tag;
    }
    if (HERD_ERR_TRUNCATE == r->status) {
        return libherd_fail(
            r->status,
            "the message from rank %u with tag %d is %zu bytes, more than the %zu-byte "
            "receive buffer: only the first %zu bytes were received (post a buffer of "
            "at least %zu bytes)",
            r->src, r->tag, r->len, r->cap, r->cap, r->len);
    }
    return r->status;
}

/* One round of progress for req, without blocking. */
static void request_progress(struct herd_request *req)
{
    if (HERD_REQUEST_FENCE == req->kind) {
        int rc = libherd.initialized ? libherd_progress_fence(false) : HERD_ERR_NOT_AVAILABLE;
        if (HERD_SUCCESS != rc) {
            req->done = true;
            req->status = rc;
            libherd.fence = NULL;
        }
        return;
    }
    if (HERD_REQUEST_RECV == req->kind && !req->recv.done) {
        /* yields after a while of finding nothing (btl_base_yield_polls) */
        int rc =
            ompi_btl_base_is_open() ? ompi_btl_base_progress_waiting() : HERD_ERR_NOT_AVAILABLE;
        if (rc < 0) {
            ompi_btl_base_cancel_recv(&req->recv);
            req->recv.done = true;
            req->recv.status = rc;
            libherd_fail(rc, "waiting for a message from %s: %s",
                         OMPI_BTL_ANY_SOURCE == req->recv.want_src ? "any rank" : "the rank",
                         '\0' != libherd.error[0] ? libherd.error : opal_strerror(rc));
        }
    }
    if (HERD_REQUEST_FENCE != req->kind && (HERD_REQUEST_SEND == req->kind || req->recv.done)) {
        req->done = true;
        req->status = HERD_REQUEST_RECV == req->kind ? libherd_finish_recv(req) : req->status;
    }
}

int herd_test(herd_request_t *request, int *done)
{
    if (NULL == request || NULL == *request || NULL == done) {
        return libherd_fail(HERD_ERR_BAD_PARAM, "herd_test: no request");
    }
    struct herd_request *req = *request;
    if (!req->done) {
        request_progress(req);
    }
    *done = req->done ? 1 : 0;
    if (!req->done) {
        return HERD_SUCCESS;
    }
    int status = req->status;
    free(req);
    *request = NULL;
    return status;
}

/* Complete req (not freed). */
int libherd_wait_request(struct herd_request *req)
{
    while (!req->done) {
        if (HERD_REQUEST_FENCE == req->kind) {
            int rc = libherd.initialized ? libherd_progress_fence(true) : HERD_ERR_NOT_AVAILABLE;
            if (HERD_SUCCESS != rc) {
                req->done = true;
                req->status = rc;
                libherd.fence = NULL;
            }
        } else {
            request_progress(req);
        }
    }
    return req->status;
}

int herd_wait(herd_request_t *request)
{
    if (NULL == request || NULL == *request) {
        return libherd_fail(HERD_ERR_BAD_PARAM, "herd_wait: no request");
    }
    int status = libherd_wait_request(*request);
    free(*request);
    *request = NULL;
    return status;
}
