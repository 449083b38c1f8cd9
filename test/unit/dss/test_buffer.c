/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests for opal/dss/buffer: round trips, truncation at every byte, wrong types, lengths. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "opal/dss/buffer.h"

/* One of each type, so that tests can loop over all of them. */
typedef enum {
    KIND_UINT8,
    KIND_UINT16,
    KIND_UINT32,
    KIND_UINT64,
    KIND_INT32,
    KIND_INT64,
    KIND_BOOL,
    KIND_STRING,
    KIND_NULL_STRING,
    KIND_BYTES,
    KIND_UINT32_ARRAY,
    KIND_STRING_ARRAY,
    KIND_COUNT
} kind_t;

static const uint32_t sample_uint32s[] = {0, 1, UINT32_MAX, 0xdeadbeefu};
static const uint8_t sample_bytes[] = {0x00, 0xff, 0x10, 0x00, 0x7f};
static char *const sample_strings[] = {"alpha", NULL, "", "node042"};
#define SAMPLE_STRING "compute-node-17"

/* Recognisable values that a failed unpack must leave in its outputs. */
#define SENTINEL_U64 UINT64_C(0xa5a5a5a5a5a5a5a5)
static char sentinel_object;
#define SENTINEL_PTR ((void *) &sentinel_object)

static int pack_sample(opal_buffer_t *buffer, kind_t kind)
{
    switch (kind) {
    case KIND_UINT8:
        return opal_buffer_pack_uint8(buffer, 0xab);
    case KIND_UINT16:
        return opal_buffer_pack_uint16(buffer, 0xabcd);
    case KIND_UINT32:
        return opal_buffer_pack_uint32(buffer, 0x89abcdefu);
    case KIND_UINT64:
        return opal_buffer_pack_uint64(buffer, UINT64_C(0x0123456789abcdef));
    case KIND_INT32:
        return opal_buffer_pack_int32(buffer, -123456);
    case KIND_INT64:
        return opal_buffer_pack_int64(buffer, INT64_C(-1234567890123));
    case KIND_BOOL:
        return opal_buffer_pack_bool(buffer, true);
    case KIND_STRING:
        return opal_buffer_pack_string(buffer, SAMPLE_STRING);
    case KIND_NULL_STRING:
        return opal_buffer_pack_string(buffer, NULL);
    case KIND_BYTES:
        return opal_buffer_pack_bytes(buffer, sample_bytes, sizeof(sample_bytes));
    case KIND_UINT32_ARRAY:
        return opal_buffer_pack_uint32_array(buffer, sample_uint32s, 4);
    case KIND_STRING_ARRAY:
        return opal_buffer_pack_string_array(buffer, sample_strings, 4);
    default:
        fail_msg("unknown kind %d", (int) kind);
    }
    return -1;
}

/* Unpack one value of the given kind. On success it must equal the sample; on failure every
 * output must still hold its sentinel and the unpack offset must not have moved. */
static int unpack_sample(opal_buffer_t *buffer, kind_t kind)
{
    size_t offset_before = buffer->unpack_offset;
    int rc = -1;
    bool untouched = false;
    switch (kind) {
    case KIND_UINT8: {
        uint8_t v = 0x5a;
        rc = opal_buffer_unpack_uint8(buffer, &v);
        untouched = (0x5a == v);
        if (HERD_SUCCESS == rc) {
            assert_int_equal(v, 0xab);
        }
        break;
    }
    case KIND_UINT16: {
        uint16_t v = 0x5a5a;
        rc = opal_buffer_unpack_uint16(buffer, &v);
        untouched = (0x5a5a == v);
        if (HERD_SUCCESS == rc) {
            assert_int_equal(v, 0xabcd);
        }
        break;
    }
    case KIND_UINT32: {
        uint32_t v = 0x5a5a5a5au;
        rc = opal_buffer_unpack_uint32(buffer, &v);
        untouched = (0x5a5a5a5au == v);
        if (HERD_SUCCESS == rc) {
            assert_int_equal(v, 0x89abcdefu);
        }
        break;
    }
    case KIND_UINT64: {
        uint64_t v = SENTINEL_U64;
        rc = opal_buffer_unpack_uint64(buffer, &v);
        untouched = (SENTINEL_U64 == v);
        if (HERD_SUCCESS == rc) {
            assert_true(UINT64_C(0x0123456789abcdef) == v);
        }
        break;
    }
    case KIND_INT32: {
        int32_t v = 0x5a5a5a5a;
        rc = opal_buffer_unpack_int32(buffer, &v);
        untouched = (0x5a5a5a5a == v);
        if (HERD_SUCCESS == rc) {
            assert_int_equal(v, -123456);
        }
        break;
    }
    case KIND_INT64: {
        int64_t v = INT64_C(0x5a5a5a5a5a5a5a5a);
        rc = opal_buffer_unpack_int64(buffer, &v);
        untouched = (INT64_C(0x5a5a5a5a5a5a5a5a) == v);
        if (HERD_SUCCESS == rc) {
            assert_true(INT64_C(-1234567890123) == v);
        }
        break;
    }
    case KIND_BOOL: {
        bool v = false;
        rc = opal_buffer_unpack_bool(buffer, &v);
        untouched = !v;
        if (HERD_SUCCESS == rc) {
            assert_true(v);
        }
        break;
    }
    case KIND_STRING:
    case KIND_NULL_STRING: {
        char *v = SENTINEL_PTR;
        rc = opal_buffer_unpack_string(buffer, &v);
        untouched = (SENTINEL_PTR == v);
        if (HERD_SUCCESS == rc) {
            if (KIND_STRING == kind) {
                assert_non_null(v);
                assert_string_equal(v, SAMPLE_STRING);
            } else {
                assert_null(v);
            }
            free(v);
        }
        break;
    }
    case KIND_BYTES: {
        void *v = SENTINEL_PTR;
        size_t len = 77;
        rc = opal_buffer_unpack_bytes(buffer, &v, &len);
        untouched = (SENTINEL_PTR == v && 77 == len);
        if (HERD_SUCCESS == rc) {
            assert_int_equal(len, sizeof(sample_bytes));
            assert_memory_equal(v, sample_bytes, len);
            free(v);
        }
        break;
    }
    case KIND_UINT32_ARRAY: {
        uint32_t *v = SENTINEL_PTR;
        size_t n = 77;
        rc = opal_buffer_unpack_uint32_array(buffer, &v, &n);
        untouched = (SENTINEL_PTR == (void *) v && 77 == n);
        if (HERD_SUCCESS == rc) {
            assert_int_equal(n, 4);
            assert_memory_equal(v, sample_uint32s, sizeof(sample_uint32s));
            free(v);
        }
        break;
    }
    case KIND_STRING_ARRAY: {
        char **v = SENTINEL_PTR;
        size_t n = 77;
        rc = opal_buffer_unpack_string_array(buffer, &v, &n);
        untouched = (SENTINEL_PTR == (void *) v && 77 == n);
        if (HERD_SUCCESS == rc) {
            assert_int_equal(n, 4);
            assert_string_equal(v[0], "alpha");
            assert_null(v[1]);
            assert_non_null(v[2]);
            assert_string_equal(v[2], "");
            assert_string_equal(v[3], "node042");
            for (size_t i = 0; i < n; i++) {
                free(v[i]);
            }
            free(v);
        }
        break;
    }
    default:
        fail_msg("unknown kind %d", (int) kind);
    }
    if (HERD_SUCCESS != rc) {
        assert_true(untouched);
        assert_int_equal(buffer->unpack_offset, offset_before);
    }
    return rc;
}

static void put_be32(uint8_t *out, uint32_t value)
{
    out[0] = (uint8_t) (value >> 24);
    out[1] = (uint8_t) (value >> 16);
    out[2] = (uint8_t) (value >> 8);
    out[3] = (uint8_t) value;
}

/* The tag byte the buffer writes for a kind, found by packing rather than hard-coded. */
static uint8_t tag_of(kind_t kind)
{
    opal_buffer_t buffer = OPAL_BUFFER_STATIC_INIT;
    assert_int_equal(pack_sample(&buffer, kind), HERD_SUCCESS);
    uint8_t tag = buffer.base[0];
    opal_buffer_destruct(&buffer);
    return tag;
}

static void test_integer_round_trip(void **state)
{
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    const uint8_t u8s[] = {0, 1, 0x7f, 0x80, UINT8_MAX};
    const uint16_t u16s[] = {0, 1, 0x7fff, 0x8000, UINT16_MAX};
    const uint32_t u32s[] = {0, 1, 0x7fffffffu, 0x80000000u, UINT32_MAX};
    const uint64_t u64s[] = {0, 1, INT64_MAX, (uint64_t) INT64_MAX + 1, UINT64_MAX};
    const int32_t i32s[] = {0, 1, -1, INT32_MAX, INT32_MIN, -123456789};
    const int64_t i64s[] = {0, 1, -1, INT64_MAX, INT64_MIN, -(INT64_C(1) << 40)};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(opal_buffer_pack_uint8(&buffer, u8s[i]), HERD_SUCCESS);
        assert_int_equal(opal_buffer_pack_uint16(&buffer, u16s[i]), HERD_SUCCESS);
        assert_int_equal(opal_buffer_pack_uint32(&buffer, u32s[i]), HERD_SUCCESS);
        assert_int_equal(opal_buffer_pack_uint64(&buffer, u64s[i]), HERD_SUCCESS);
    }
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(opal_buffer_pack_int32(&buffer, i32s[i]), HERD_SUCCESS);
        assert_int_equal(opal_buffer_pack_int64(&buffer, i64s[i]), HERD_SUCCESS);
    }
    assert_int_equal(opal_buffer_pack_bool(&buffer, false), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_bool(&buffer, true), HERD_SUCCESS);

    for (size_t i = 0; i < 5; i++) {
        uint8_t u8;
        uint16_t u16;
        uint32_t u32;
        uint64_t u64;
        assert_int_equal(opal_buffer_unpack_uint8(&buffer, &u8), HERD_SUCCESS);
        assert_int_equal(u8, u8s[i]);
        assert_int_equal(opal_buffer_unpack_uint16(&buffer, &u16), HERD_SUCCESS);
        assert_int_equal(u16, u16s[i]);
        assert_int_equal(opal_buffer_unpack_uint32(&buffer, &u32), HERD_SUCCESS);
        assert_int_equal(u32, u32s[i]);
        assert_int_equal(opal_buffer_unpack_uint64(&buffer, &u64), HERD_SUCCESS);
        assert_true(u64 == u64s[i]);
    }
    for (size_t i = 0; i < 6; i++) {
        int32_t i32;
        int64_t i64;
        assert_int_equal(opal_buffer_unpack_int32(&buffer, &i32), HERD_SUCCESS);
        assert_true(i32 == i32s[i]);
        assert_int_equal(opal_buffer_unpack_int64(&buffer, &i64), HERD_SUCCESS);
        assert_true(i64 == i64s[i]);
    }
    bool flag = true;
    assert_int_equal(opal_buffer_unpack_bool(&buffer, &flag), HERD_SUCCESS);
    assert_false(flag);
    assert_int_equal(opal_buffer_unpack_bool(&buffer, &flag), HERD_SUCCESS);
    assert_true(flag);

    assert_int_equal(opal_buffer_remaining(&buffer), 0);
    uint8_t extra = 9;
    assert_int_equal(opal_buffer_unpack_uint8(&buffer, &extra), HERD_ERR_UNPACK_READ_PAST_END);
    assert_int_equal(extra, 9);
    opal_buffer_destruct(&buffer);
}

/* Integers travel big-endian after their one-byte tag. */
static void test_network_byte_order(void **state)
{
    opal_buffer_t buffer = OPAL_BUFFER_STATIC_INIT;
    assert_int_equal(opal_buffer_pack_uint16(&buffer, 0x0102), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_uint32(&buffer, 0x01020304u), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_uint64(&buffer, UINT64_C(0x0102030405060708)), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_int32(&buffer, -2), HERD_SUCCESS);
    const uint8_t expected_u16[] = {0x01, 0x02};
    const uint8_t expected_u32[] = {0x01, 0x02, 0x03, 0x04};
    const uint8_t expected_u64[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
    const uint8_t expected_i32[] = {0xff, 0xff, 0xff, 0xfe};
    assert_int_equal(buffer.used, 3 + 5 + 9 + 5);
    assert_memory_equal(buffer.base + 1, expected_u16, 2);
    assert_memory_equal(buffer.base + 4, expected_u32, 4);
    assert_memory_equal(buffer.base + 9, expected_u64, 8);
    assert_memory_equal(buffer.base + 18, expected_i32, 4);
    opal_buffer_destruct(&buffer);
}

static void test_string_round_trip(void **state)
{
    opal_buffer_t buffer = OPAL_BUFFER_STATIC_INIT;
    size_t long_len = 100000;
    char *long_string = malloc(long_len + 1);
    assert_non_null(long_string);
    for (size_t i = 0; i < long_len; i++) {
        long_string[i] = (char) ('a' + i % 26);
    }
    long_string[long_len] = '\0';
    const char *strings[] = {NULL, "", "x", "h\xc3\xa9llo w\xc3\xb6rld", long_string, NULL, ""};
    size_t count = sizeof(strings) / sizeof(strings[0]);
    for (size_t i = 0; i < count; i++) {
        assert_int_equal(opal_buffer_pack_string(&buffer, strings[i]), HERD_SUCCESS);
    }
    for (size_t i = 0; i < count; i++) {
        char *value = SENTINEL_PTR;
        assert_int_equal(opal_buffer_unpack_string(&buffer, &value), HERD_SUCCESS);
        if (NULL == strings[i]) {
            assert_null(value);
        } else {
            /* "" must come back as an allocated empty string, not as NULL. */
            assert_non_null(value);
            assert_string_equal(value, strings[i]);
            free(value);
        }
    }
    assert_int_equal(opal_buffer_remaining(&buffer), 0);
    free(long_string);
    opal_buffer_destruct(&buffer);
}

static void test_bytes_round_trip(void **state)
{
    opal_buffer_t buffer = OPAL_BUFFER_STATIC_INIT;
    size_t big_len = 1024 * 1024;
    uint8_t *big = malloc(big_len);
    assert_non_null(big);
    for (size_t i = 0; i < big_len; i++) {
        big[i] = (uint8_t) (i * 7);
    }
    assert_int_equal(opal_buffer_pack_bytes(&buffer, NULL, 0), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_bytes(&buffer, sample_bytes, 0), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_bytes(&buffer, sample_bytes, sizeof(sample_bytes)),
                     HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_bytes(&buffer, big, big_len), HERD_SUCCESS);

    for (int i = 0; i < 2; i++) {
        void *data = SENTINEL_PTR;
        size_t len = 77;
        assert_int_equal(opal_buffer_unpack_bytes(&buffer, &data, &len), HERD_SUCCESS);
        assert_null(data);
        assert_int_equal(len, 0);
    }
    void *data;
    size_t len;
    assert_int_equal(opal_buffer_unpack_bytes(&buffer, &data, &len), HERD_SUCCESS);
    assert_int_equal(len, sizeof(sample_bytes));
    assert_memory_equal(data, sample_bytes, len);
    free(data);
    assert_int_equal(opal_buffer_unpack_bytes(&buffer, &data, &len), HERD_SUCCESS);
    assert_int_equal(len, big_len);
    assert_memory_equal(data, big, len);
    free(data);
    assert_int_equal(opal_buffer_remaining(&buffer), 0);
    free(big);
    opal_buffer_destruct(&buffer);
}

static void test_array_round_trip(void **state)
{
    opal_buffer_t buffer = OPAL_BUFFER_STATIC_INIT;
    assert_int_equal(opal_buffer_pack_uint32_array(&buffer, NULL, 0), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_uint32_array(&buffer, sample_uint32s, 4), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_string_array(&buffer, NULL, 0), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_string_array(&buffer, sample_strings, 4), HERD_SUCCESS);
    char *const all_null[] = {NULL, NULL};
    assert_int_equal(opal_buffer_pack_string_array(&buffer, all_null, 2), HERD_SUCCESS);

    uint32_t *values = SENTINEL_PTR;
    size_t n = 77;
    assert_int_equal(opal_buffer_unpack_uint32_array(&buffer, &values, &n), HERD_SUCCESS);
    assert_null(values);
    assert_int_equal(n, 0);
    assert_int_equal(unpack_sample(&buffer, KIND_UINT32_ARRAY), HERD_SUCCESS);

    char **strings = SENTINEL_PTR;
    n = 77;
    assert_int_equal(opal_buffer_unpack_string_array(&buffer, &strings, &n), HERD_SUCCESS);
    assert_null(strings);
    assert_int_equal(n, 0);
    assert_int_equal(unpack_sample(&buffer, KIND_STRING_ARRAY), HERD_SUCCESS);
    assert_int_equal(opal_buffer_unpack_string_array(&buffer, &strings, &n), HERD_SUCCESS);
    assert_int_equal(n, 2);
    assert_null(strings[0]);
    assert_null(strings[1]);
    free(strings);
    assert_int_equal(opal_buffer_remaining(&buffer), 0);
    opal_buffer_destruct(&buffer);
}

/* Cut a buffer holding one of every kind at every byte: everything before the cut unpacks, the
 * value that straddles it fails with READ_PAST_END and leaves offset and outputs alone. */
static void test_every_truncation_point(void **state)
{
    opal_buffer_t full = OPAL_BUFFER_STATIC_INIT;
    size_t ends[KIND_COUNT];
    for (int kind = 0; kind < KIND_COUNT; kind++) {
        assert_int_equal(pack_sample(&full, (kind_t) kind), HERD_SUCCESS);
        ends[kind] = full.used;
    }
    for (size_t cut = 0; cut <= full.used; cut++) {
        opal_buffer_t prefix = OPAL_BUFFER_STATIC_INIT;
        assert_int_equal(opal_buffer_load(&prefix, full.base, cut), HERD_SUCCESS);
        for (int kind = 0; kind < KIND_COUNT; kind++) {
            int rc = unpack_sample(&prefix, (kind_t) kind);
            if (ends[kind] <= cut) {
                assert_int_equal(rc, HERD_SUCCESS);
                continue;
            }
            assert_int_equal(rc, HERD_ERR_UNPACK_READ_PAST_END);
            /* Retrying is just as clean: nothing was consumed. */
            assert_int_equal(unpack_sample(&prefix, (kind_t) kind), HERD_ERR_UNPACK_READ_PAST_END);
            break;
        }
        if (cut == full.used) {
            assert_int_equal(opal_buffer_remaining(&prefix), 0);
        }
        opal_buffer_destruct(&prefix);
    }
    opal_buffer_destruct(&full);
}

static void test_wrong_type(void **state)
{
    for (int packed = 0; packed < KIND_COUNT; packed++) {
        opal_buffer_t buffer = OPAL_BUFFER_STATIC_INIT;
        assert_int_equal(pack_sample(&buffer, (kind_t) packed), HERD_SUCCESS);
        for (int wanted = 0; wanted < KIND_COUNT; wanted++) {
            if (wanted == packed || (KIND_STRING == packed && KIND_NULL_STRING == wanted) ||
                (KIND_NULL_STRING == packed && KIND_STRING == wanted)) {
                continue;
            }
            assert_int_equal(unpack_sample(&buffer, (kind_t) wanted), HERD_ERR_PACK_MISMATCH);
        }
        assert_int_equal(unpack_sample(&buffer, (kind_t) packed), HERD_SUCCESS);
        opal_buffer_destruct(&buffer);
    }
}

/* Bytes that were never a packed value: tags no type uses. */
static void test_unknown_tag(void **state)
{
    const uint8_t bad_tags[] = {0x00, 0x7e, 0xff};
    for (size_t t = 0; t < sizeof(bad_tags); t++) {
        uint8_t raw[16];
        memset(raw, 0, sizeof(raw));
        raw[0] = bad_tags[t];
        opal_buffer_t buffer = OPAL_BUFFER_STATIC_INIT;
        assert_int_equal(opal_buffer_load(&buffer, raw, sizeof(raw)), HERD_SUCCESS);
        for (int kind = 0; kind < KIND_COUNT; kind++) {
            assert_int_equal(unpack_sample(&buffer, (kind_t) kind), HERD_ERR_UNPACK_FAILURE);
        }
        opal_buffer_destruct(&buffer);
    }
}

/* Load tag, a 32-bit length field and tail into buffer. */
static void load_with_length(opal_buffer_t *buffer, kind_t kind, uint32_t length, const void *tail,
                             size_t tail_len)
{
    uint8_t raw[64];
    assert_true(5 + tail_len <= sizeof(raw));
    raw[0] = tag_of(kind);
    put_be32(raw + 1, length);
    if (tail_len > 0) {
        memcpy(raw + 5, tail, tail_len);
    }
    assert_int_equal(opal_buffer_load(buffer, raw, 5 + tail_len), HERD_SUCCESS);
}

/* A length above the limit is malformed; a plausible one the data cannot hold is a truncation.
 * Neither may allocate for the claimed size (valgrind would notice a 2 GiB calloc). */
static void test_absurd_lengths(void **state)
{
    const kind_t kinds[] = {KIND_STRING, KIND_BYTES, KIND_UINT32_ARRAY, KIND_STRING_ARRAY};
    const uint32_t malformed[] = {UINT32_MAX, 0x80000000u, OPAL_BUFFER_MAX_ITEM + 1u};
    const uint32_t truncated[] = {OPAL_BUFFER_MAX_ITEM, 1000, 9};
    const char tail[] = "abcdefg"; /* 8 bytes with its NUL */
    for (size_t k = 0; k < 4; k++) {
        opal_buffer_t buffer = OPAL_BUFFER_STATIC_INIT;
        for (size_t i = 0; i < 3; i++) {
            load_with_length(&buffer, kinds[k], malformed[i], tail, sizeof(tail));
            assert_int_equal(unpack_sample(&buffer, kinds[k]), HERD_ERR_UNPACK_FAILURE);
            load_with_length(&buffer, kinds[k], truncated[i], tail, sizeof(tail));
            assert_int_equal(unpack_sample(&buffer, kinds[k]), HERD_ERR_UNPACK_READ_PAST_END);
        }
        opal_buffer_destruct(&buffer);
    }
}

static void test_malformed_strings(void **state)
{
    opal_buffer_t buffer = OPAL_BUFFER_STATIC_INIT;

    /* No terminating NUL. */
    load_with_length(&buffer, KIND_STRING, 3, "abc", 3);
    assert_int_equal(unpack_sample(&buffer, KIND_STRING), HERD_ERR_UNPACK_FAILURE);
    /* A NUL inside: the length would not match what strlen() sees. */
    load_with_length(&buffer, KIND_STRING, 4, "a\0b", 4);
    assert_int_equal(unpack_sample(&buffer, KIND_STRING), HERD_ERR_UNPACK_FAILURE);
    /* Well formed, as a control. */
    load_with_length(&buffer, KIND_STRING, 4, "abc", 4);
    char *value = NULL;
    assert_int_equal(opal_buffer_unpack_string(&buffer, &value), HERD_SUCCESS);
    assert_string_equal(value, "abc");
    free(value);

    /* In an array: the first element is fine and must be freed when the second is refused. */
    uint8_t elements[] = {0, 0, 0, 2, 'a', 0, 0, 0, 0, 2, 'b', 'c'};
    load_with_length(&buffer, KIND_STRING_ARRAY, 2, elements, sizeof(elements));
    assert_int_equal(unpack_sample(&buffer, KIND_STRING_ARRAY), HERD_ERR_UNPACK_FAILURE);

    /* A bool is 0 or 1, nothing else. */
    uint8_t raw_bool[] = {tag_of(KIND_BOOL), 2};
    assert_int_equal(opal_buffer_load(&buffer, raw_bool, sizeof(raw_bool)), HERD_SUCCESS);
    assert_int_equal(unpack_sample(&buffer, KIND_BOOL), HERD_ERR_UNPACK_FAILURE);
    opal_buffer_destruct(&buffer);
}

/* Several MB through many small and some large packs, then every value back. */
#define GOLDEN UINT64_C(0x9e3779b97f4a7c15)
static void test_growth(void **state)
{
    opal_buffer_t buffer = OPAL_BUFFER_STATIC_INIT;
    uint8_t block[1024];
    size_t blocks = 4096;
    size_t words = 200000;
    for (size_t i = 0; i < blocks; i++) {
        memset(block, (int) (i & 0xff), sizeof(block));
        assert_int_equal(opal_buffer_pack_bytes(&buffer, block, sizeof(block)), HERD_SUCCESS);
    }
    for (size_t i = 0; i < words; i++) {
        assert_int_equal(opal_buffer_pack_uint64(&buffer, (uint64_t) i * GOLDEN), HERD_SUCCESS);
    }
    assert_true(buffer.used == blocks * (5 + sizeof(block)) + words * 9);
    assert_true(buffer.capacity >= buffer.used);
    assert_true(buffer.used > 5 * 1000 * 1000);

    for (size_t i = 0; i < blocks; i++) {
        void *data;
        size_t len;
        assert_int_equal(opal_buffer_unpack_bytes(&buffer, &data, &len), HERD_SUCCESS);
        assert_int_equal(len, sizeof(block));
        memset(block, (int) (i & 0xff), sizeof(block));
        assert_memory_equal(data, block, len);
        free(data);
    }
    for (size_t i = 0; i < words; i++) {
        uint64_t value;
        assert_int_equal(opal_buffer_unpack_uint64(&buffer, &value), HERD_SUCCESS);
        assert_true(value == (uint64_t) i * GOLDEN);
    }
    assert_int_equal(opal_buffer_remaining(&buffer), 0);
    opal_buffer_destruct(&buffer);
}

static void test_bad_params(void **state)
{
    opal_buffer_t buffer = OPAL_BUFFER_STATIC_INIT;
    assert_int_equal(opal_buffer_pack_uint32(NULL, 1), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_buffer_pack_string(NULL, "x"), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_buffer_pack_bytes(&buffer, NULL, 1), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_buffer_pack_uint32_array(&buffer, NULL, 1), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_buffer_pack_string_array(&buffer, NULL, 1), HERD_ERR_BAD_PARAM);
    /* Counts unpack would refuse are refused when packing, before anything is read. */
    assert_int_equal(
        opal_buffer_pack_uint32_array(&buffer, sample_uint32s, (size_t) OPAL_BUFFER_MAX_ITEM + 1),
        HERD_ERR_BAD_PARAM);
    assert_int_equal(
        opal_buffer_pack_string_array(&buffer, sample_strings, (size_t) OPAL_BUFFER_MAX_ITEM + 1),
        HERD_ERR_BAD_PARAM);
    assert_int_equal(
        opal_buffer_pack_bytes(&buffer, sample_bytes, (size_t) OPAL_BUFFER_MAX_ITEM + 1),
        HERD_ERR_BAD_PARAM);
    assert_int_equal(buffer.used, 0);

    assert_int_equal(pack_sample(&buffer, KIND_UINT32), HERD_SUCCESS);
    uint32_t value;
    void *data;
    size_t len;
    assert_int_equal(opal_buffer_unpack_uint32(NULL, &value), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_buffer_unpack_uint32(&buffer, NULL), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_buffer_unpack_bytes(&buffer, &data, NULL), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_buffer_unpack_bytes(&buffer, NULL, &len), HERD_ERR_BAD_PARAM);
    assert_int_equal(buffer.unpack_offset, 0);
    assert_int_equal(opal_buffer_load(&buffer, NULL, 3), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_buffer_load(NULL, sample_bytes, 3), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_buffer_remaining(NULL), 0);
    opal_buffer_destruct(&buffer);
    opal_buffer_destruct(NULL);
}

static void test_load_and_remaining(void **state)
{
    opal_buffer_t source = OPAL_BUFFER_STATIC_INIT;
    opal_buffer_t buffer = OPAL_BUFFER_STATIC_INIT;
    assert_int_equal(opal_buffer_remaining(&buffer), 0);
    assert_int_equal(pack_sample(&source, KIND_STRING), HERD_SUCCESS);
    assert_int_equal(pack_sample(&source, KIND_UINT64), HERD_SUCCESS);

    /* Loading replaces what was there and rewinds. */
    assert_int_equal(pack_sample(&buffer, KIND_BOOL), HERD_SUCCESS);
    assert_int_equal(unpack_sample(&buffer, KIND_BOOL), HERD_SUCCESS);
    assert_int_equal(opal_buffer_load(&buffer, source.base, source.used), HERD_SUCCESS);
    assert_int_equal(opal_buffer_remaining(&buffer), source.used);
    assert_int_equal(unpack_sample(&buffer, KIND_STRING), HERD_SUCCESS);
    assert_int_equal(opal_buffer_remaining(&buffer), 9);

    /* A buffer can load its own bytes. */
    assert_int_equal(opal_buffer_load(&buffer, buffer.base, buffer.used), HERD_SUCCESS);
    assert_int_equal(unpack_sample(&buffer, KIND_STRING), HERD_SUCCESS);
    assert_int_equal(unpack_sample(&buffer, KIND_UINT64), HERD_SUCCESS);

    /* Packing after unpacking appends; unpacking continues where it was. */
    assert_int_equal(pack_sample(&buffer, KIND_INT32), HERD_SUCCESS);
    assert_int_equal(unpack_sample(&buffer, KIND_INT32), HERD_SUCCESS);

    assert_int_equal(opal_buffer_load(&buffer, NULL, 0), HERD_SUCCESS);
    assert_int_equal(opal_buffer_remaining(&buffer), 0);
    assert_int_equal(unpack_sample(&buffer, KIND_UINT8), HERD_ERR_UNPACK_READ_PAST_END);
    assert_int_equal(unpack_sample(&buffer, KIND_UINT32_ARRAY), HERD_ERR_UNPACK_READ_PAST_END);

    /* A destructed buffer is empty and usable again. */
    opal_buffer_destruct(&buffer);
    assert_null(buffer.base);
    assert_int_equal(buffer.used + buffer.capacity + buffer.unpack_offset, 0);
    assert_int_equal(pack_sample(&buffer, KIND_STRING_ARRAY), HERD_SUCCESS);
    assert_int_equal(unpack_sample(&buffer, KIND_STRING_ARRAY), HERD_SUCCESS);
    opal_buffer_destruct(&buffer);
    opal_buffer_destruct(&source);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integer_round_trip),
        cmocka_unit_test(test_network_byte_order),
        cmocka_unit_test(test_string_round_trip),
        cmocka_unit_test(test_bytes_round_trip),
        cmocka_unit_test(test_array_round_trip),
        cmocka_unit_test(test_every_truncation_point),
        cmocka_unit_test(test_wrong_type),
        cmocka_unit_test(test_unknown_tag),
        cmocka_unit_test(test_absurd_lengths),
        cmocka_unit_test(test_malformed_strings),
        cmocka_unit_test(test_growth),
        cmocka_unit_test(test_bad_params),
        cmocka_unit_test(test_load_and_remaining),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
