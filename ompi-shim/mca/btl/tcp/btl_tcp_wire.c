/* SPDX-License-Identifier: BSD-3-Clause */
/* btl tcp's frame header and hello: encoders, and decoders that check every field and length
 * so that garbage on a socket is an error, never a crash or an overrun. */
#include "herd_config.h"

#include <string.h>

#include "ompi-shim/mca/btl/tcp/btl_tcp.h"
#include "opal/status.h"

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; ++i) {
        p[i] = (uint8_t) (v >> (8 * i));
    }
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

void btl_tcp_encode_header(uint8_t type, int32_t tag, uint64_t length, uint8_t *out)
{
    out[0] = BTL_TCP_MAGIC;
    out[1] = BTL_TCP_VERSION;
    out[2] = type;
    out[3] = 0;
    put_u32(out + 4, (uint32_t) tag);
    put_u32(out + 8, (uint32_t) length);
    put_u32(out + 12, (uint32_t) (length >> 32));
}

int btl_tcp_decode_header(const uint8_t *buf, size_t avail, uint64_t max_length,
                          btl_tcp_header_t *h)
{
    if (avail < BTL_TCP_HEADER_SIZE) {
        return HERD_ERR_UNPACK_READ_PAST_END;
    }
    if (BTL_TCP_MAGIC != buf[0]) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    if (BTL_TCP_VERSION != buf[1]) {
        return HERD_ERR_VERSION_MISMATCH;
    }
    uint8_t type = buf[2];
    int32_t tag = (int32_t) get_u32(buf + 4);
    uint64_t length = (uint64_t) get_u32(buf + 8) | (uint64_t) get_u32(buf + 12) << 32;
    if (0 != buf[3] || tag < 0) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    switch (type) {
    case BTL_TCP_HELLO:
    case BTL_TCP_ACK:
        if (0 != tag || length < BTL_TCP_HELLO_MIN || length > BTL_TCP_HELLO_MAX) {
            return HERD_ERR_UNPACK_FAILURE;
        }
        break;
    case BTL_TCP_MSG:
        if (length > max_length) {
            return HERD_ERR_UNPACK_FAILURE;
        }
        break;
    default:
        return HERD_ERR_UNPACK_FAILURE;
    }
    h->type = type;
    h->tag = tag;
    h->length = length;
    return HERD_SUCCESS;
}

size_t btl_tcp_encode_hello(uint32_t rank, const char *jobid, uint8_t *out)
{
    size_t n = NULL != jobid ? strlen(jobid) : 0;

    if (0 == n || n > BTL_TCP_JOBID_MAX) {
        return 0;
    }
    put_u32(out, rank);
    out[4] = (uint8_t) n;
    out[5] = (uint8_t) (n >> 8);
    memcpy(out + 6, jobid, n);
    return 6 + n;
}

int btl_tcp_decode_hello(const uint8_t *payload, size_t len, uint32_t job_size, const char *jobid,
                         uint32_t *rank)
{
    if (len < BTL_TCP_HELLO_MIN || len > BTL_TCP_HELLO_MAX) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    size_t n = (size_t) payload[4] | (size_t) payload[5] << 8;
    if (6 + n != len || 0 == n) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    uint32_t r = get_u32(payload);
    if (r >= job_size) {
        return HERD_ERR_BAD_PARAM;
    }
    if (strlen(jobid) != n || 0 != memcmp(payload + 6, jobid, n)) {
        return HERD_ERR_AUTH;
    }
    *rank = r;
    return HERD_SUCCESS;
}
