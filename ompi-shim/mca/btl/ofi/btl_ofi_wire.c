/* SPDX-License-Identifier: BSD-3-Clause */
/* btl ofi's frame header, hello and modex value: encoders, and decoders that check every field
 * and length, so a frame from something that is not a peer of this job is an error, never a
 * crash or an overrun. Part of the transport DSO (and of its unit test): no libherd symbol. */
#include "herd_config.h"

#include <string.h>

#include "ompi-shim/mca/btl/ofi/btl_ofi.h"
#include "opal/status.h"

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t) v;
    p[1] = (uint8_t) (v >> 8);
}

static uint16_t get_u16(const uint8_t *p)
{
    return (uint16_t) (p[0] | p[1] << 8);
}

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

void btl_ofi_encode_header(const btl_ofi_header_t *h, uint8_t *out)
{
    out[0] = BTL_OFI_MAGIC;
    out[1] = BTL_OFI_VERSION;
    out[2] = h->type;
    out[3] = 0;
    put_u32(out + 4, h->src);
    put_u32(out + 8, (uint32_t) h->tag);
    put_u32(out + 12, h->dst);
    put_u32(out + 16, (uint32_t) h->length);
    put_u32(out + 20, (uint32_t) (h->length >> 32));
}

int btl_ofi_decode_header(const uint8_t *buf, size_t len, uint32_t job_size, uint64_t max_message,
                          btl_ofi_header_t *h)
{
    if (len < BTL_OFI_HEADER_SIZE || BTL_OFI_MAGIC != buf[0]) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    if (BTL_OFI_VERSION != buf[1]) {
        return HERD_ERR_VERSION_MISMATCH;
    }
    h->type = buf[2];
    h->src = get_u32(buf + 4);
    h->tag = (int32_t) get_u32(buf + 8);
    h->dst = get_u32(buf + 12);
    h->length = (uint64_t) get_u32(buf + 16) | (uint64_t) get_u32(buf + 20) << 32;
    size_t bytes = len - BTL_OFI_HEADER_SIZE;
    if (0 != buf[3] || h->src >= job_size) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    switch (h->type) {
    case BTL_OFI_MSG:
    case BTL_OFI_FRAG:
        if (h->tag < 0 || h->length > max_message || bytes > h->length ||
            (BTL_OFI_FRAG == h->type && 0 == bytes)) {
            return HERD_ERR_UNPACK_FAILURE;
        }
        return HERD_SUCCESS;
    case BTL_OFI_HELLO:
    case BTL_OFI_ACK:
        if (0 != h->tag || h->dst >= job_size || h->length != bytes || bytes > BTL_OFI_HELLO_MAX) {
            return HERD_ERR_UNPACK_FAILURE;
        }
        return HERD_SUCCESS;
    default:
        return HERD_ERR_UNPACK_FAILURE;
    }
}

size_t btl_ofi_encode_hello(const char *jobid, const void *addr, size_t addr_len, uint8_t *out)
{
    size_t jlen = strlen(jobid);
    if (0 == jlen || jlen > BTL_OFI_JOBID_MAX || addr_len > BTL_OFI_ADDR_MAX ||
        (NULL != addr && 0 == addr_len)) {
        return 0;
    }
    put_u16(out, (uint16_t) jlen);
    memcpy(out + 2, jobid, jlen);
    if (NULL == addr) {
        return 2 + jlen;
    }
    put_u16(out + 2 + jlen, (uint16_t) addr_len);
    memcpy(out + 4 + jlen, addr, addr_len);
    return 4 + jlen + addr_len;
}

int btl_ofi_decode_hello(const uint8_t *payload, size_t len, const char *jobid, bool want_addr,
                         bool *same_job, const uint8_t **addr, size_t *addr_len)
{
    if (len < 2) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    size_t jlen = get_u16(payload);
    if (0 == jlen || jlen > BTL_OFI_JOBID_MAX || len < 2 + jlen) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    *same_job = strlen(jobid) == jlen && 0 == memcmp(payload + 2, jobid, jlen);
    if (!want_addr) {
        return len == 2 + jlen ? HERD_SUCCESS : HERD_ERR_UNPACK_FAILURE;
    }
    if (len < 4 + jlen) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    size_t alen = get_u16(payload + 2 + jlen);
    if (0 == alen || alen > BTL_OFI_ADDR_MAX || len != 4 + jlen + alen) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    *addr = payload + 4 + jlen;
    *addr_len = alen;
    return HERD_SUCCESS;
}

size_t btl_ofi_encode_modex(const char *provider, const void *addr, size_t addr_len, uint8_t *out,
                            size_t room)
{
    size_t plen = strlen(provider);
    if (0 == plen || plen > 255 || 0 == addr_len || addr_len > BTL_OFI_ADDR_MAX ||
        1 + plen + addr_len > room) {
        return 0;
    }
    out[0] = (uint8_t) plen;
    memcpy(out + 1, provider, plen);
    memcpy(out + 1 + plen, addr, addr_len);
    return 1 + plen + addr_len;
}

int btl_ofi_decode_modex(const uint8_t *value, size_t len, char *name, size_t name_room,
                         const uint8_t **addr, size_t *addr_len)
{
    if (len < 1) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    size_t plen = value[0];
    if (0 == plen || plen >= name_room || len <= 1 + plen || len - 1 - plen > BTL_OFI_ADDR_MAX) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    memcpy(name, value + 1, plen);
    name[plen] = '\0';
    if (NULL != memchr(name, '\0', plen)) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    *addr = value + 1 + plen;
    *addr_len = len - 1 - plen;
    return HERD_SUCCESS;
}
