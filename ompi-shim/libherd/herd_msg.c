/* SPDX-License-Identifier: BSD-3-Clause */
/* libherd: messages between ranks over the btl framework (docs/btl.md). */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>

#include "herd_internal.h"
#include "opal/status.h"

static const char *node_name_of_me(void)
{
    const char *name = herd_node_name(libherd.me.node);
    return NULL != name ? name : "node";
}

/* The transports start at the first messaging call, not at herd_init: a program that never
 * sends binds no socket and maps no segment. */
static int btl_ready(void)
{
    if (!libherd.initialized) {
        return libherd_fail(HERD_ERR_NOT_AVAILABLE, "herd_init has not been called");
    }
    if (ompi_btl_base_is_open()) {
        return HERD_SUCCESS;
    }
    ompi_btl_rte_t rte = {
        .my_rank = libherd.rank,
        .job_size = libherd.size,
        .my_node = libherd.me.node,
        .local_size = libherd.local_size,
        .jobid = herd_jobid(),
        .node_name = node_name_of_me(),
        .peer_node = herd_peer_node,
        .peer_endpoint = herd_peer_endpoint,
        .put = herd_put,
        .commit = herd_commit,
        .get = herd_get,
        .last_error = herd_last_error,
    };
    int rc = ompi_btl_base_open(&rte);
    if (HERD_SUCCESS != rc) {
        return libherd_fail(
            rc,
            "rank %u cannot start any message transport (%s): check HERD_MCA_btl and "
            "the btl_* variables (herd-info --param btl all lists them)",
            libherd.rank, opal_strerror(rc));
    }
    return HERD_SUCCESS;
}

static int send_checked(uint32_t peer, int tag, const void *buf, size_t len)
{
    int rc = btl_ready();
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (peer >= libherd.size || tag < 0 || (len > 0 && NULL == buf)) {
        return libherd_fail(
            HERD_ERR_BAD_PARAM,
            "herd_send: rank %u is not in the job (size %u), or tag %d is negative, or "
            "the buffer is NULL",
            peer, libherd.size, tag);
    }
    libherd.error[0] = '\0';
    rc = ompi_btl_base_send(peer, tag, buf, len);
    if (HERD_ERR_UNREACH == rc && '\0' == libherd.error[0]) {
        return libherd_fail(
            rc,
            "rank %u cannot reach rank %u with any of its transports: allow one that "
            "can (HERD_MCA_btl, e.g. self,sm,tcp), and see why with "
            "HERD_MCA_btl_base_verbose=10",
            libherd.rank, peer);
    }
    if (HERD_SUCCESS != rc && '\0' == libherd.error[0]) {
        return libherd_fail(rc,
                            "rank %u cannot send to rank %u: %s (HERD_MCA_btl_base_verbose=10 says "
                            "more)",
                            libherd.rank, peer, opal_strerror(rc));
    }
    return rc;
}

int herd_send(uint32_t peer, int tag, const void *buf, size_t len)
{
    return send_checked(peer, tag, buf, len);
}

int herd_isend(uint32_t peer, int tag, const void *buf, size_t len, herd_request_t *request)
{
    if (NULL == request) {
        return libherd_fail(HERD_ERR_BAD_PARAM, "herd_isend: no request to fill");
    }
    struct herd_request *req = calloc(1, sizeof(*req));
    if (NULL == req) {
        return libherd_fail(HERD_ERR_OUT_OF_RESOURCE, "herd_isend: out of memory");
    }
    /* the transports copy what they cannot send at once, so the send is complete here */
    int rc = send_checked(peer, tag, buf, len);
    if (HERD_SUCCESS != rc) {
        free(req);
        return rc;
    }
    req->kind = HERD_REQUEST_SEND;
    req->done = true;
    req->status = HERD_SUCCESS;
    *request = req;
    return HERD_SUCCESS;
}

/* Check a receive's arguments and post it in req. */
static int post_recv(uint32_t src, int tag, void *buf, size_t cap, size_t *len, uint32_t *src_out,
                     int *tag_out, struct herd_request *req)
{
    int rc = btl_ready();
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if ((HERD_ANY_SOURCE != src && src >= libherd.size) || (tag < 0 && HERD_ANY_TAG != tag) ||
        (cap > 0 && NULL == buf)) {
        return libherd_fail(
            HERD_ERR_BAD_PARAM,
            "herd_recv: rank %u is not in the job (size %u, or HERD_ANY_SOURCE), or tag "
            "%d is negative (or HERD_ANY_TAG), or the buffer is NULL",
            src, libherd.size, tag);
    }
    memset(req, 0, sizeof(*req));
    req->kind = HERD_REQUEST_RECV;
    req->recv.want_src = src;
    req->recv.want_tag = tag;
    req->recv.buf = buf;
    req->recv.cap = cap;
    req->len_out = len;
    req->src_out = src_out;
    req->tag_out = tag_out;
    rc = ompi_btl_base_post_recv(&req->recv);
    if (HERD_SUCCESS != rc) {
        return libherd_fail(rc, "herd_recv: cannot post the receive (%s)", opal_strerror(rc));
    }
    if (req->recv.done) {
        /* matched a message that was waiting */
        req->done = true;
        req->status = libherd_finish_recv(req);
    }
    return HERD_SUCCESS;
}

int herd_irecv(uint32_t src, int tag, void *buf, size_t cap, size_t *len, uint32_t *src_out,
               int *tag_out, herd_request_t *request)
{
    if (NULL == request) {
        return libherd_fail(HERD_ERR_BAD_PARAM, "herd_irecv: no request to fill");
    }
    struct herd_request *req = malloc(sizeof(*req));
    if (NULL == req) {
        return libherd_fail(HERD_ERR_OUT_OF_RESOURCE, "herd_irecv: out of memory");
    }
    int rc = post_recv(src, tag, buf, cap, len, src_out, tag_out, req);
    if (HERD_SUCCESS != rc) {
        free(req);
        return rc;
    }
    *request = req;
    return HERD_SUCCESS;
}

int herd_recv(uint32_t src, int tag, void *buf, size_t cap, size_t *len, uint32_t *src_out,
              int *tag_out)
{
    /* on the stack: a blocking receive allocates nothing */
    struct herd_request req;
    int rc = post_recv(src, tag, buf, cap, len, src_out, tag_out, &req);
    return HERD_SUCCESS == rc ? libherd_wait_request(&req) : rc;
}

int herd_progress(void)
{
    int rc = btl_ready();
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    rc = ompi_btl_base_progress();
    return rc >= 0 ? rc : libherd_fail(rc, "message progress failed: %s", opal_strerror(rc));
}

const char *herd_peer_transport(uint32_t peer)
{
    const ompi_btl_module_t *module = libherd.initialized ? ompi_btl_base_peer_module(peer) : NULL;
    return NULL != module ? module->name : NULL;
}
