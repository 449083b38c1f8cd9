/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer harness for opal/dss/buffer: unpacks arbitrary bytes in an order the input chooses. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opal/dss/buffer.h"
#include "test/fuzz/fuzz.h"

/* Input layout: byte 0 says how many op bytes follow (mod 64); each op byte picks the next
 * unpack. The rest is the packed data. After the ops the harness keeps unpacking whatever
 * type decodes next, so every input is parsed to its end or its first bad value. */
#define FUZZ_MAX_OPS 64

typedef enum {
    KIND_UINT8,
    KIND_UINT16,
    KIND_UINT32,
    KIND_UINT64,
    KIND_INT32,
    KIND_INT64,
    KIND_BOOL,
    KIND_STRING,
    KIND_BYTES,
    KIND_UINT32_ARRAY,
    KIND_STRING_ARRAY,
    KIND_COUNT
} fuzz_kind_t;

static char fuzz_sentinel_object;
#define FUZZ_SENTINEL      ((void *) &fuzz_sentinel_object)
#define FUZZ_SENTINEL_SIZE ((size_t) 0x5a5a5a5a)

static bool fuzz_is_allowed_failure(int rc)
{
    return HERD_ERR_UNPACK_READ_PAST_END == rc || HERD_ERR_UNPACK_FAILURE == rc ||
           HERD_ERR_PACK_MISMATCH == rc;
}

/* Unpack one value of kind. On failure: a clean status, offset and outputs untouched. On
 * success: re-packing the value must reproduce exactly the bytes consumed (the encoding is
 * canonical), which catches a decoder that accepts something the encoder never writes. */
static int fuzz_unpack(opal_buffer_t *buffer, fuzz_kind_t kind)
{
    size_t before = buffer->unpack_offset;
    opal_buffer_t repacked = OPAL_BUFFER_STATIC_INIT;
    int rc = HERD_ERROR;
    int pack_rc = HERD_ERROR;
    bool untouched = false;

    switch (kind) {
    case KIND_UINT8: {
        uint8_t v = 0x5a;
        rc = opal_buffer_unpack_uint8(buffer, &v);
        untouched = (0x5a == v);
        if (HERD_SUCCESS == rc) {
            pack_rc = opal_buffer_pack_uint8(&repacked, v);
        }
        break;
    }
    case KIND_UINT16: {
        uint16_t v = 0x5a5a;
        rc = opal_buffer_unpack_uint16(buffer, &v);
        untouched = (0x5a5a == v);
        if (HERD_SUCCESS == rc) {
            pack_rc = opal_buffer_pack_uint16(&repacked, v);
        }
        break;
    }
    case KIND_UINT32: {
        uint32_t v = 0x5a5a5a5au;
        rc = opal_buffer_unpack_uint32(buffer, &v);
        untouched = (0x5a5a5a5au == v);
        if (HERD_SUCCESS == rc) {
            pack_rc = opal_buffer_pack_uint32(&repacked, v);
        }
        break;
    }
    case KIND_UINT64: {
        uint64_t v = UINT64_C(0x5a5a5a5a5a5a5a5a);
        rc = opal_buffer_unpack_uint64(buffer, &v);
        untouched = (UINT64_C(0x5a5a5a5a5a5a5a5a) == v);
        if (HERD_SUCCESS == rc) {
            pack_rc = opal_buffer_pack_uint64(&repacked, v);
        }
        break;
    }
    case KIND_INT32: {
        int32_t v = 0x5a5a5a5a;
        rc = opal_buffer_unpack_int32(buffer, &v);
        untouched = (0x5a5a5a5a == v);
        if (HERD_SUCCESS == rc) {
            pack_rc = opal_buffer_pack_int32(&repacked, v);
        }
        break;
    }
    case KIND_INT64: {
        int64_t v = INT64_C(0x5a5a5a5a5a5a5a5a);
        rc = opal_buffer_unpack_int64(buffer, &v);
        untouched = (INT64_C(0x5a5a5a5a5a5a5a5a) == v);
        if (HERD_SUCCESS == rc) {
            pack_rc = opal_buffer_pack_int64(&repacked, v);
        }
        break;
    }
    case KIND_BOOL: {
        /* Two probes, since a bool has no spare value to act as a sentinel. */
        bool v = false;
        bool w = true;
        rc = opal_buffer_unpack_bool(buffer, &v);
        if (HERD_SUCCESS == rc) {
            pack_rc = opal_buffer_pack_bool(&repacked, v);
            break;
        }
        FUZZ_CHECK(opal_buffer_unpack_bool(buffer, &w) == rc);
        untouched = !v && w;
        break;
    }
    case KIND_STRING: {
        char *v = FUZZ_SENTINEL;
        rc = opal_buffer_unpack_string(buffer, &v);
        untouched = (FUZZ_SENTINEL == v);
        if (HERD_SUCCESS == rc) {
            FUZZ_CHECK(FUZZ_SENTINEL != v);
            pack_rc = opal_buffer_pack_string(&repacked, v);
            free(v);
        }
        break;
    }
    case KIND_BYTES: {
        void *v = FUZZ_SENTINEL;
        size_t len = FUZZ_SENTINEL_SIZE;
        rc = opal_buffer_unpack_bytes(buffer, &v, &len);
        untouched = (FUZZ_SENTINEL == v && FUZZ_SENTINEL_SIZE == len);
        if (HERD_SUCCESS == rc) {
            FUZZ_CHECK((0 == len) == (NULL == v));
            pack_rc = opal_buffer_pack_bytes(&repacked, v, len);
            free(v);
        }
        break;
    }
    case KIND_UINT32_ARRAY: {
        uint32_t *v = FUZZ_SENTINEL;
        size_t n = FUZZ_SENTINEL_SIZE;
        rc = opal_buffer_unpack_uint32_array(buffer, &v, &n);
        untouched = (FUZZ_SENTINEL == (void *) v && FUZZ_SENTINEL_SIZE == n);
        if (HERD_SUCCESS == rc) {
            FUZZ_CHECK((0 == n) == (NULL == v));
            pack_rc = opal_buffer_pack_uint32_array(&repacked, v, n);
            free(v);
        }
        break;
    }
    case KIND_STRING_ARRAY: {
        char **v = FUZZ_SENTINEL;
        size_t n = FUZZ_SENTINEL_SIZE;
        rc = opal_buffer_unpack_string_array(buffer, &v, &n);
        untouched = (FUZZ_SENTINEL == (void *) v && FUZZ_SENTINEL_SIZE == n);
        if (HERD_SUCCESS == rc) {
            FUZZ_CHECK((0 == n) == (NULL == v));
            pack_rc = opal_buffer_pack_string_array(&repacked, v, n);
            for (size_t i = 0; i < n; i++) {
                free(v[i]);
            }
            free(v);
        }
        break;
    }
    default:
        abort();
    }

    if (HERD_SUCCESS == rc) {
        size_t after = buffer->unpack_offset;
        FUZZ_CHECK(after > before && after <= buffer->used);
        FUZZ_CHECK(HERD_SUCCESS == pack_rc);
        FUZZ_CHECK(repacked.used == after - before);
        FUZZ_CHECK(0 == memcmp(repacked.base, buffer->base + before, repacked.used));
    } else {
        FUZZ_CHECK(fuzz_is_allowed_failure(rc));
        FUZZ_CHECK(buffer->unpack_offset == before);
        FUZZ_CHECK(untouched);
    }
    opal_buffer_destruct(&repacked);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (0 == size) {
        return 0;
    }
    size_t n_ops = data[0] % FUZZ_MAX_OPS;
    if (n_ops > size - 1) {
        n_ops = size - 1;
    }
    const uint8_t *ops = data + 1;
    const uint8_t *payload = ops + n_ops;
    size_t payload_len = size - 1 - n_ops;

    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    FUZZ_CHECK(HERD_SUCCESS == opal_buffer_load(&buffer, payload, payload_len));
    FUZZ_CHECK(opal_buffer_remaining(&buffer) == payload_len);

    for (size_t i = 0; i < n_ops; i++) {
        fuzz_unpack(&buffer, (fuzz_kind_t) (ops[i] % KIND_COUNT));
    }

    /* Then like a real decoder that knows the next type: the first kind that decodes wins. Each
     * success consumes at least two bytes, so this ends. */
    bool progress = true;
    while (progress && opal_buffer_remaining(&buffer) > 0) {
        progress = false;
        for (int kind = 0; kind < KIND_COUNT && !progress; kind++) {
            progress = (HERD_SUCCESS == fuzz_unpack(&buffer, (fuzz_kind_t) kind));
        }
    }
    FUZZ_CHECK(buffer.unpack_offset <= buffer.used);
    opal_buffer_destruct(&buffer);
    return 0;
}
