/* SPDX-License-Identifier: BSD-3-Clause */
/* What libherd's files share (never installed): the process's state, the requests, and the
 * calls one file makes into another. herd.c: start, end, the job in place; herd_daemon.c: the
 * native wireup protocol to the session daemon; herd_data.c: put, commit, fence, get;
 * herd_request.c: test and wait; herd_msg.c: send and receive over the btl framework. */
#ifndef LIBHERD_HERD_INTERNAL_H
#define LIBHERD_HERD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "herd.h"
#include "ompi-shim/mca/btl/btl.h"
#include "opal/util/jobdb.h"
#include "opal/util/native_wire.h"

/* A fence, or a message (herd_isend is complete when it returns; herd_irecv's receive sits in
 * the btl base's matching engine until a message matches it). */
enum herd_request_kind { HERD_REQUEST_FENCE, HERD_REQUEST_SEND, HERD_REQUEST_RECV };

struct herd_request {
    enum herd_request_kind kind;
    uint32_t id;
    bool done;
    int status;
    ompi_btl_recv_t recv;
    size_t *len_out;
    uint32_t *src_out;
    int *tag_out;
};

/* The process's one connection to its session daemon, and what libherd keeps of the job. */
typedef struct {
    bool initialized;
    int fd;
    opal_jobdb_t *db;
    opal_jobdb_proc_view_t me;
    uint32_t rank;
    uint32_t size;
    uint32_t local_size;
    uint32_t next_id;
    opal_native_put_t *puts; /* since the last commit */
    uint32_t num_puts;
    uint32_t cap_puts;
    struct herd_request *fence; /* the fence in flight, if any */
    uint8_t *in;                /* bytes read, not yet a whole reply */
    size_t in_len;
    size_t in_cap;
    char error[1024];
} libherd_state_t;

extern libherd_state_t libherd;

/* Record the error herd_last_error() gives, and return status. */
int libherd_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* herd_daemon.c: one request to the session daemon, without waiting (*id its id); one request
 * and its reply (*out only with HERD_SUCCESS, the caller frees it); every reply there is now
 * (block: at least one) for the fence in flight. */
int libherd_send_request(opal_native_type_t type, const opal_buffer_t *payload, uint32_t *id);
int libherd_call(opal_native_type_t type, const opal_buffer_t *payload, opal_native_reply_t *out);
int libherd_progress_fence(bool block);

/* herd.c: peer's record in the job database, or an error said */
int libherd_peer_view(uint32_t peer, opal_jobdb_proc_view_t *view);
/* herd_data.c: forget the puts not committed */
void libherd_release_puts(void);
/* herd_request.c: a completed receive's results to the caller; complete req (not freed) */
int libherd_finish_recv(struct herd_request *req);
int libherd_wait_request(struct herd_request *req);

#endif /* LIBHERD_HERD_INTERNAL_H */
