/* SPDX-License-Identifier: BSD-3-Clause */
/* libherd: the native wireup protocol (opal/util/native_wire.h) to this node's session daemon:
 * requests, their replies, and the fence's reply, which may come between. */
#include "herd_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "herd_internal.h"
#include "opal/status.h"
#include "opal/util/fd.h"

int libherd_send_request(opal_native_type_t type, const opal_buffer_t *payload, uint32_t *id)
{
    opal_buffer_t frame;
    opal_buffer_init(&frame);
    uint32_t this_id = ++libherd.next_id;
    int rc = opal_native_encode(type, this_id, NULL != payload ? payload->base : NULL,
                                NULL != payload ? payload->used : 0, &frame);
    if (HERD_SUCCESS == rc) {
        rc = opal_fd_send_all(libherd.fd, frame.base, frame.used);
        if (HERD_SUCCESS != rc) {
            rc = libherd_fail(HERD_ERR_UNREACH, "the session daemon is gone (writing to it: %s)",
                              strerror(errno));
        }
    }
    opal_buffer_destruct(&frame);
    if (HERD_SUCCESS == rc && NULL != id) {
        *id = this_id;
    }
    return rc;
}

/* Read what the socket has (all of it without blocking, or at least something with). */
static int read_some(bool block)
{
    for (;;) {
        if (libherd.in_cap - libherd.in_len < 65536) {
            size_t cap = libherd.in_cap ? 2 * libherd.in_cap : 131072;
            uint8_t *grown = realloc(libherd.in, cap);
            if (NULL == grown) {
                return libherd_fail(HERD_ERR_OUT_OF_RESOURCE, "out of memory reading a reply");
            }
            libherd.in = grown;
            libherd.in_cap = cap;
        }
        ssize_t n = recv(libherd.fd, libherd.in + libherd.in_len, libherd.in_cap - libherd.in_len,
                         block ? 0 : MSG_DONTWAIT);
        if (n > 0) {
            libherd.in_len += (size_t) n;
            return HERD_SUCCESS;
        }
        if (n < 0 && EINTR == errno) {
            continue;
        }
        if (n < 0 && !block && (EAGAIN == errno || EWOULDBLOCK == errno)) {
            return HERD_ERR_TIMEOUT; /* nothing now */
        }
        return libherd_fail(HERD_ERR_UNREACH, "the session daemon is gone (%s)",
                            0 == n ? "it closed the connection" : strerror(errno));
    }
}

/* The next whole reply in what was read: HERD_SUCCESS with *reply and *id, HERD_ERR_TIMEOUT
 * when none is whole yet, or an error for a malformed one. */
static int next_reply(uint32_t *id, opal_native_reply_t *reply)
{
    opal_native_header_t h;
    long n = opal_native_frame(libherd.in, libherd.in_len, &h);
    if (0 == n) {
        return HERD_ERR_TIMEOUT;
    }
    if (n < 0 || OPAL_NATIVE_REPLY != h.type) {
        return libherd_fail(n < 0 ? (int) n : HERD_ERR_UNPACK_FAILURE,
                            "the session daemon sent a malformed reply");
    }
    int rc = opal_native_unpack_reply(libherd.in + OPAL_NATIVE_HEADER_SIZE, h.length, reply);
    memmove(libherd.in, libherd.in + n, libherd.in_len - (size_t) n);
    libherd.in_len -= (size_t) n;
    if (HERD_SUCCESS != rc) {
        return libherd_fail(rc, "the session daemon sent a malformed reply");
    }
    *id = h.id;
    return HERD_SUCCESS;
}

/* A reply for the fence in flight: record it. */
static bool take_fence(uint32_t id, const opal_native_reply_t *r)
{
    if (NULL == libherd.fence || libherd.fence->id != id) {
        return false;
    }
    libherd.fence->done = true;
    libherd.fence->status = r->status;
    if (HERD_SUCCESS != r->status) {
        libherd_fail(r->status, "%s", '\0' != r->error[0] ? r->error : "the fence failed");
    }
    libherd.fence = NULL;
    return true;
}

/* Wait for the reply to request id (the fence's may come first). */
static int await(uint32_t id, opal_native_reply_t *out)
{
    for (;;) {
        uint32_t got;
        opal_native_reply_t r;
        int rc = next_reply(&got, &r);
        if (HERD_SUCCESS == rc) {
            if (got == id) {
                if (HERD_SUCCESS != r.status) {
                    libherd_fail(r.status, "%s",
                                 '\0' != r.error[0] ? r.error : opal_strerror(r.status));
                }
                *out = r;
                return HERD_SUCCESS;
            }
            take_fence(got, &r);
            opal_native_reply_free(&r);
            continue;
        }
        if (HERD_ERR_TIMEOUT != rc) {
            return rc;
        }
        if (HERD_SUCCESS != (rc = read_some(true))) {
            return rc;
        }
    }
}

/* One request and its reply's status (and value, for a get). */
int libherd_call(opal_native_type_t type, const opal_buffer_t *payload, opal_native_reply_t *out)
{
    uint32_t id;
    opal_native_reply_t r;
    if (!libherd.initialized) {
        return libherd_fail(HERD_ERR_NOT_AVAILABLE, "herd_init has not been called");
    }
    int rc = libherd_send_request(type, payload, &id);
    if (HERD_SUCCESS == rc) {
        rc = await(id, &r);
    }
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    rc = r.status;
    if (NULL != out && HERD_SUCCESS == rc) {
        *out = r;
    } else {
        opal_native_reply_free(&r);
    }
    return rc;
}

/* Take every reply there is now (or, blocking, at least one) for the fence in flight. */
int libherd_progress_fence(bool block)
{
    for (;;) {
        uint32_t id;
        opal_native_reply_t r;
        int rc = next_reply(&id, &r);
        if (HERD_SUCCESS == rc) {
            take_fence(id, &r);
            opal_native_reply_free(&r);
            if (block && NULL == libherd.fence) {
                return HERD_SUCCESS;
            }
            continue;
        }
        if (HERD_ERR_TIMEOUT != rc) {
            return rc;
        }
        rc = read_some(block);
        if (HERD_ERR_TIMEOUT == rc) {
            return HERD_SUCCESS; /* nothing more now */
        }
        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
}
