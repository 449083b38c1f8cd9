/* SPDX-License-Identifier: BSD-3-Clause */
/* Typed, bounds-checked serialization buffers: the encoder and the one decoder per type. */
#include "herd_config.h"

#include "opal/dss/buffer.h"

#include <stdlib.h>
#include <string.h>

/* Wire format. Every value is a one-byte tag followed by its body; integers are big-endian.
 *   uint8, bool     1 byte (a bool is 0 or 1)       uint16            2 bytes
 *   uint32, int32   4 bytes                         uint64, int64     8 bytes
 *   string          uint32 length counting the terminating NUL, then that many bytes;
 *                   length 0 is the NULL string, so NULL and "" stay distinct
 *   bytes           uint32 length, then the bytes
 *   uint32 array    uint32 count, then count uint32 bodies
 *   string array    uint32 count, then count string bodies (no tag per element)
 * A length or count above OPAL_BUFFER_MAX_ITEM is malformed (HERD_ERR_UNPACK_FAILURE); one that
 * runs past the end of the data is a truncation (HERD_ERR_UNPACK_READ_PAST_END). The encoding is
 * canonical: a value decodes from exactly one byte sequence, which the fuzzer relies on. */
enum {
    BUFFER_TAG_UINT8 = 0x01,
    BUFFER_TAG_UINT16 = 0x02,
    BUFFER_TAG_UINT32 = 0x03,
    BUFFER_TAG_UINT64 = 0x04,
    BUFFER_TAG_INT32 = 0x05,
    BUFFER_TAG_INT64 = 0x06,
    BUFFER_TAG_BOOL = 0x07,
    BUFFER_TAG_STRING = 0x08,
    BUFFER_TAG_BYTES = 0x09,
    BUFFER_TAG_UINT32_ARRAY = 0x0a,
    BUFFER_TAG_STRING_ARRAY = 0x0b,
    BUFFER_TAG_LAST = BUFFER_TAG_STRING_ARRAY
};

#define BUFFER_TAG_SIZE    1
#define BUFFER_LENGTH_SIZE 4
/* First allocation: enough for a typical control message without a second realloc. */
#define BUFFER_MIN_CAPACITY 256

/* ---------------------------------------------------------------------------------------------
 * Storage and encoding */

void opal_buffer_init(opal_buffer_t *buffer)
{
    if (NULL == buffer) {
        return;
    }
    buffer->base = NULL;
    buffer->capacity = 0;
    buffer->used = 0;
    buffer->unpack_offset = 0;
}

void opal_buffer_destruct(opal_buffer_t *buffer)
{
    if (NULL == buffer) {
        return;
    }
    free(buffer->base);
    opal_buffer_init(buffer);
}

int opal_buffer_load(opal_buffer_t *buffer, const void *data, size_t len)
{
    if (NULL == buffer || (NULL == data && len > 0)) {
        return HERD_ERR_BAD_PARAM;
    }
    if (0 == len) {
        opal_buffer_destruct(buffer);
        return HERD_SUCCESS;
    }
    /* Copy before freeing the old storage, so loading a buffer's own bytes works. */
    uint8_t *copy = malloc(len);
    if (NULL == copy) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    memcpy(copy, data, len);
    free(buffer->base);
    buffer->base = copy;
    buffer->capacity = len;
    buffer->used = len;
    buffer->unpack_offset = 0;
    return HERD_SUCCESS;
}

size_t opal_buffer_remaining(const opal_buffer_t *buffer)
{
    if (NULL == buffer || buffer->unpack_offset >= buffer->used) {
        return 0;
    }
    return buffer->used - buffer->unpack_offset;
}

/* Make room for len more bytes. Doubling keeps n small packs at O(n) copying in total; every
 * step is checked so that a huge len fails instead of wrapping around to a small allocation. */
static int buffer_reserve(opal_buffer_t *buffer, size_t len)
{
    if (len > SIZE_MAX - buffer->used) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    size_t needed = buffer->used + len;
    if (needed <= buffer->capacity) {
        return HERD_SUCCESS;
    }
    size_t capacity =
        buffer->capacity < BUFFER_MIN_CAPACITY ? BUFFER_MIN_CAPACITY : buffer->capacity;
    while (capacity < needed) {
        if (capacity > SIZE_MAX / 2) {
            capacity = needed;
            break;
        }
        capacity *= 2;
    }
    uint8_t *base = realloc(buffer->base, capacity);
    if (NULL == base) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    buffer->base = base;
    buffer->capacity = capacity;
    return HERD_SUCCESS;
}

/* The put_* helpers write into space already reserved, so they cannot fail. */
static void buffer_put_uint(opal_buffer_t *buffer, uint64_t value, size_t width)
{
    uint8_t *out = buffer->base + buffer->used;
    for (size_t i = 0; i < width; i++) {
        out[i] = (uint8_t) (value >> (8 * (width - 1 - i)));
    }
    buffer->used += width;
}

static void buffer_put_bytes(opal_buffer_t *buffer, const void *data, size_t len)
{
    if (len > 0) {
        memcpy(buffer->base + buffer->used, data, len);
        buffer->used += len;
    }
}

static int buffer_pack_fixed(opal_buffer_t *buffer, uint8_t tag, uint64_t value, size_t width)
{
    if (NULL == buffer) {
        return HERD_ERR_BAD_PARAM;
    }
    int rc = buffer_reserve(buffer, BUFFER_TAG_SIZE + width);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    buffer_put_uint(buffer, tag, BUFFER_TAG_SIZE);
    buffer_put_uint(buffer, value, width);
    return HERD_SUCCESS;
}

int opal_buffer_pack_uint8(opal_buffer_t *buffer, uint8_t value)
{
    return buffer_pack_fixed(buffer, BUFFER_TAG_UINT8, value, sizeof(value));
}

int opal_buffer_pack_uint16(opal_buffer_t *buffer, uint16_t value)
{
    return buffer_pack_fixed(buffer, BUFFER_TAG_UINT16, value, sizeof(value));
}

int opal_buffer_pack_uint32(opal_buffer_t *buffer, uint32_t value)
{
    return buffer_pack_fixed(buffer, BUFFER_TAG_UINT32, value, sizeof(value));
}

int opal_buffer_pack_uint64(opal_buffer_t *buffer, uint64_t value)
{
    return buffer_pack_fixed(buffer, BUFFER_TAG_UINT64, value, sizeof(value));
}

/* Signed values travel as their two's-complement bit pattern (conversion to unsigned is exact). */
int opal_buffer_pack_int32(opal_buffer_t *buffer, int32_t value)
{
    return buffer_pack_fixed(buffer, BUFFER_TAG_INT32, (uint32_t) value, sizeof(value));
}

int opal_buffer_pack_int64(opal_buffer_t *buffer, int64_t value)
{
    return buffer_pack_fixed(buffer, BUFFER_TAG_INT64, (uint64_t) value, sizeof(value));
}

int opal_buffer_pack_bool(opal_buffer_t *buffer, bool value)
{
    return buffer_pack_fixed(buffer, BUFFER_TAG_BOOL, value ? 1 : 0, 1);
}

/* Size of a string body; a string that unpack would refuse is refused here already. */
static int buffer_string_body_size(const char *value, size_t *size)
{
    if (NULL == value) {
        *size = BUFFER_LENGTH_SIZE;
        return HERD_SUCCESS;
    }
    size_t len = strlen(value) + 1;
    if (len > OPAL_BUFFER_MAX_ITEM) {
        return HERD_ERR_BAD_PARAM;
    }
    *size = BUFFER_LENGTH_SIZE + len;
    return HERD_SUCCESS;
}

static void buffer_put_string_body(opal_buffer_t *buffer, const char *value)
{
    if (NULL == value) {
        buffer_put_uint(buffer, 0, BUFFER_LENGTH_SIZE);
        return;
    }
    size_t len = strlen(value) + 1;
    buffer_put_uint(buffer, len, BUFFER_LENGTH_SIZE);
    buffer_put_bytes(buffer, value, len);
}

int opal_buffer_pack_string(opal_buffer_t *buffer, const char *value)
{
    if (NULL == buffer) {
        return HERD_ERR_BAD_PARAM;
    }
    size_t body_size;
    int rc = buffer_string_body_size(value, &body_size);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    rc = buffer_reserve(buffer, BUFFER_TAG_SIZE + body_size);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    buffer_put_uint(buffer, BUFFER_TAG_STRING, BUFFER_TAG_SIZE);
    buffer_put_string_body(buffer, value);
    return HERD_SUCCESS;
}

int opal_buffer_pack_bytes(opal_buffer_t *buffer, const void *data, size_t len)
{
    if (NULL == buffer || (NULL == data && len > 0) || len > OPAL_BUFFER_MAX_ITEM) {
        return HERD_ERR_BAD_PARAM;
    }
    int rc = buffer_reserve(buffer, BUFFER_TAG_SIZE + BUFFER_LENGTH_SIZE + len);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    buffer_put_uint(buffer, BUFFER_TAG_BYTES, BUFFER_TAG_SIZE);
    buffer_put_uint(buffer, len, BUFFER_LENGTH_SIZE);
    buffer_put_bytes(buffer, data, len);
    return HERD_SUCCESS;
}

int opal_buffer_pack_uint32_array(opal_buffer_t *buffer, const uint32_t *values, size_t n)
{
    if (NULL == buffer || (NULL == values && n > 0) || n > OPAL_BUFFER_MAX_ITEM) {
        return HERD_ERR_BAD_PARAM;
    }
    /* n <= OPAL_BUFFER_MAX_ITEM, so n * 4 cannot overflow even with a 32-bit size_t. */
    int rc = buffer_reserve(buffer, BUFFER_TAG_SIZE + BUFFER_LENGTH_SIZE + n * sizeof(uint32_t));
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    buffer_put_uint(buffer, BUFFER_TAG_UINT32_ARRAY, BUFFER_TAG_SIZE);
    buffer_put_uint(buffer, n, BUFFER_LENGTH_SIZE);
    for (size_t i = 0; i < n; i++) {
        buffer_put_uint(buffer, values[i], sizeof(uint32_t));
    }
    return HERD_SUCCESS;
}

int opal_buffer_pack_string_array(opal_buffer_t *buffer, char *const *values, size_t n)
{
    if (NULL == buffer || (NULL == values && n > 0) || n > OPAL_BUFFER_MAX_ITEM) {
        return HERD_ERR_BAD_PARAM;
    }
    /* Size everything first so that a failure leaves the buffer exactly as it was. */
    size_t total = BUFFER_TAG_SIZE + BUFFER_LENGTH_SIZE;
    for (size_t i = 0; i < n; i++) {
        size_t body_size;
        int rc = buffer_string_body_size(values[i], &body_size);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
        if (body_size > SIZE_MAX - total) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        total += body_size;
    }
    int rc = buffer_reserve(buffer, total);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    buffer_put_uint(buffer, BUFFER_TAG_STRING_ARRAY, BUFFER_TAG_SIZE);
    buffer_put_uint(buffer, n, BUFFER_LENGTH_SIZE);
    for (size_t i = 0; i < n; i++) {
        buffer_put_string_body(buffer, values[i]);
    }
    return HERD_SUCCESS;
}

/* ---------------------------------------------------------------------------------------------
 * Decoding. Every unpack reads through a private cursor and commits it to the buffer only when
 * the whole value decoded, which is what keeps the unpack offset still on any failure. */

typedef struct {
    const uint8_t *data;
    size_t len;
    size_t pos;
} buffer_reader_t;

static void buffer_reader_init(buffer_reader_t *reader, const opal_buffer_t *buffer)
{
    reader->data = buffer->base;
    reader->len = buffer->used;
    reader->pos = buffer->unpack_offset < buffer->used ? buffer->unpack_offset : buffer->used;
}

static size_t buffer_reader_remaining(const buffer_reader_t *reader)
{
    return reader->len - reader->pos;
}

/* Consume n bytes; *bytes stays NULL for n == 0 so that an empty buffer (data NULL) never
 * takes part in pointer arithmetic. */
static int buffer_reader_take(buffer_reader_t *reader, size_t n, const uint8_t **bytes)
{
    if (n > buffer_reader_remaining(reader)) {
        return HERD_ERR_UNPACK_READ_PAST_END;
    }
    *bytes = NULL;
    if (n > 0) {
        *bytes = reader->data + reader->pos;
        reader->pos += n;
    }
    return HERD_SUCCESS;
}

static uint64_t buffer_decode_uint(const uint8_t *bytes, size_t width)
{
    uint64_t result = 0;
    for (size_t i = 0; i < width; i++) {
        result = (result << 8) | bytes[i];
    }
    return result;
}

static int buffer_reader_uint(buffer_reader_t *reader, size_t width, uint64_t *value)
{
    const uint8_t *bytes;
    int rc = buffer_reader_take(reader, width, &bytes);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    *value = buffer_decode_uint(bytes, width);
    return HERD_SUCCESS;
}

/* A known tag of another type means the caller unpacks in the wrong order (a protocol bug); an
 * unknown tag means the bytes are not a packed buffer at all. */
static int buffer_reader_tag(buffer_reader_t *reader, uint8_t expected)
{
    uint64_t tag;
    int rc = buffer_reader_uint(reader, BUFFER_TAG_SIZE, &tag);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (tag == expected) {
        return HERD_SUCCESS;
    }
    if (tag >= BUFFER_TAG_UINT8 && tag <= BUFFER_TAG_LAST) {
        return HERD_ERR_PACK_MISMATCH;
    }
    return HERD_ERR_UNPACK_FAILURE;
}

/* A length or count field: absurd values are rejected before anyone allocates for them. */
static int buffer_reader_length(buffer_reader_t *reader, size_t *length)
{
    uint64_t value;
    int rc = buffer_reader_uint(reader, BUFFER_LENGTH_SIZE, &value);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (value > OPAL_BUFFER_MAX_ITEM) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    *length = (size_t) value;
    return HERD_SUCCESS;
}

/* A string body: the bytes must be exactly one C string, with its NUL last and nowhere else. */
static int buffer_reader_string_body(buffer_reader_t *reader, char **value)
{
    size_t len;
    int rc = buffer_reader_length(reader, &len);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (0 == len) {
        *value = NULL;
        return HERD_SUCCESS;
    }
    const uint8_t *bytes;
    rc = buffer_reader_take(reader, len, &bytes);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if ('\0' != bytes[len - 1] || NULL != memchr(bytes, '\0', len - 1)) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    char *copy = malloc(len);
    if (NULL == copy) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    memcpy(copy, bytes, len);
    *value = copy;
    return HERD_SUCCESS;
}

/* Tag and body of a fixed-width value, committed on success. */
static int buffer_unpack_fixed(opal_buffer_t *buffer, uint8_t tag, size_t width, uint64_t *value)
{
    buffer_reader_t reader;
    buffer_reader_init(&reader, buffer);
    int rc = buffer_reader_tag(&reader, tag);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    rc = buffer_reader_uint(&reader, width, value);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    buffer->unpack_offset = reader.pos;
    return HERD_SUCCESS;
}

int opal_buffer_unpack_uint8(opal_buffer_t *buffer, uint8_t *value)
{
    if (NULL == buffer || NULL == value) {
        return HERD_ERR_BAD_PARAM;
    }
    uint64_t raw;
    int rc = buffer_unpack_fixed(buffer, BUFFER_TAG_UINT8, sizeof(*value), &raw);
    if (HERD_SUCCESS == rc) {
        *value = (uint8_t) raw;
    }
    return rc;
}

int opal_buffer_unpack_uint16(opal_buffer_t *buffer, uint16_t *value)
{
    if (NULL == buffer || NULL == value) {
        return HERD_ERR_BAD_PARAM;
    }
    uint64_t raw;
    int rc = buffer_unpack_fixed(buffer, BUFFER_TAG_UINT16, sizeof(*value), &raw);
    if (HERD_SUCCESS == rc) {
        *value = (uint16_t) raw;
    }
    return rc;
}

int opal_buffer_unpack_uint32(opal_buffer_t *buffer, uint32_t *value)
{
    if (NULL == buffer || NULL == value) {
        return HERD_ERR_BAD_PARAM;
    }
    uint64_t raw;
    int rc = buffer_unpack_fixed(buffer, BUFFER_TAG_UINT32, sizeof(*value), &raw);
    if (HERD_SUCCESS == rc) {
        *value = (uint32_t) raw;
    }
    return rc;
}

int opal_buffer_unpack_uint64(opal_buffer_t *buffer, uint64_t *value)
{
    if (NULL == buffer || NULL == value) {
        return HERD_ERR_BAD_PARAM;
    }
    uint64_t raw;
    int rc = buffer_unpack_fixed(buffer, BUFFER_TAG_UINT64, sizeof(*value), &raw);
    if (HERD_SUCCESS == rc) {
        *value = raw;
    }
    return rc;
}

/* Back from the two's-complement bit pattern without the implementation-defined conversion of
 * an out-of-range unsigned value to a signed type. */
int opal_buffer_unpack_int32(opal_buffer_t *buffer, int32_t *value)
{
    if (NULL == buffer || NULL == value) {
        return HERD_ERR_BAD_PARAM;
    }
    uint64_t raw;
    int rc = buffer_unpack_fixed(buffer, BUFFER_TAG_INT32, sizeof(*value), &raw);
    if (HERD_SUCCESS == rc) {
        *value = raw <= INT32_MAX ? (int32_t) raw : -(int32_t) (UINT32_MAX - raw) - 1;
    }
    return rc;
}

int opal_buffer_unpack_int64(opal_buffer_t *buffer, int64_t *value)
{
    if (NULL == buffer || NULL == value) {
        return HERD_ERR_BAD_PARAM;
    }
    uint64_t raw;
    int rc = buffer_unpack_fixed(buffer, BUFFER_TAG_INT64, sizeof(*value), &raw);
    if (HERD_SUCCESS == rc) {
        *value = raw <= INT64_MAX ? (int64_t) raw : -(int64_t) (UINT64_MAX - raw) - 1;
    }
    return rc;
}

int opal_buffer_unpack_bool(opal_buffer_t *buffer, bool *value)
{
    if (NULL == buffer || NULL == value) {
        return HERD_ERR_BAD_PARAM;
    }
    buffer_reader_t reader;
    buffer_reader_init(&reader, buffer);
    uint64_t raw;
    int rc = buffer_reader_tag(&reader, BUFFER_TAG_BOOL);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    rc = buffer_reader_uint(&reader, 1, &raw);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (raw > 1) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    buffer->unpack_offset = reader.pos;
    *value = (1 == raw);
    return HERD_SUCCESS;
}

int opal_buffer_unpack_string(opal_buffer_t *buffer, char **value)
{
    if (NULL == buffer || NULL == value) {
        return HERD_ERR_BAD_PARAM;
    }
    buffer_reader_t reader;
    buffer_reader_init(&reader, buffer);
    int rc = buffer_reader_tag(&reader, BUFFER_TAG_STRING);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    char *result;
    rc = buffer_reader_string_body(&reader, &result);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    buffer->unpack_offset = reader.pos;
    *value = result;
    return HERD_SUCCESS;
}

int opal_buffer_unpack_bytes(opal_buffer_t *buffer, void **data, size_t *len)
{
    if (NULL == buffer || NULL == data || NULL == len) {
        return HERD_ERR_BAD_PARAM;
    }
    buffer_reader_t reader;
    buffer_reader_init(&reader, buffer);
    int rc = buffer_reader_tag(&reader, BUFFER_TAG_BYTES);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    size_t length;
    rc = buffer_reader_length(&reader, &length);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    const uint8_t *bytes;
    rc = buffer_reader_take(&reader, length, &bytes);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    void *copy = NULL;
    if (length > 0) {
        copy = malloc(length);
        if (NULL == copy) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        memcpy(copy, bytes, length);
    }
    buffer->unpack_offset = reader.pos;
    *data = copy;
    *len = length;
    return HERD_SUCCESS;
}

int opal_buffer_unpack_uint32_array(opal_buffer_t *buffer, uint32_t **values, size_t *n)
{
    if (NULL == buffer || NULL == values || NULL == n) {
        return HERD_ERR_BAD_PARAM;
    }
    buffer_reader_t reader;
    buffer_reader_init(&reader, buffer);
    int rc = buffer_reader_tag(&reader, BUFFER_TAG_UINT32_ARRAY);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    size_t count;
    rc = buffer_reader_length(&reader, &count);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    /* The elements must be there before room is allocated for them; count is at most
     * OPAL_BUFFER_MAX_ITEM, so the product cannot overflow. */
    const uint8_t *bytes;
    rc = buffer_reader_take(&reader, count * sizeof(uint32_t), &bytes);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    uint32_t *result = NULL;
    if (count > 0) {
        result = malloc(count * sizeof(uint32_t));
        if (NULL == result) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    for (size_t i = 0; i < count; i++) {
        result[i] = (uint32_t) buffer_decode_uint(bytes + i * sizeof(uint32_t), sizeof(uint32_t));
    }
    buffer->unpack_offset = reader.pos;
    *values = result;
    *n = count;
    return HERD_SUCCESS;
}

static void buffer_free_strings(char **strings, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(strings[i]);
    }
    free(strings);
}

int opal_buffer_unpack_string_array(opal_buffer_t *buffer, char ***values, size_t *n)
{
    if (NULL == buffer || NULL == values || NULL == n) {
        return HERD_ERR_BAD_PARAM;
    }
    buffer_reader_t reader;
    buffer_reader_init(&reader, buffer);
    int rc = buffer_reader_tag(&reader, BUFFER_TAG_STRING_ARRAY);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    size_t count;
    rc = buffer_reader_length(&reader, &count);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    /* Every element has at least its length field: a count the data cannot hold is refused
     * before the pointer array is allocated. */
    if (count > buffer_reader_remaining(&reader) / BUFFER_LENGTH_SIZE) {
        return HERD_ERR_UNPACK_READ_PAST_END;
    }
    char **result = NULL;
    if (count > 0) {
        result = calloc(count, sizeof(char *));
        if (NULL == result) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    for (size_t i = 0; i < count; i++) {
        rc = buffer_reader_string_body(&reader, &result[i]);
        if (HERD_SUCCESS != rc) {
            /* Entries past i are still NULL from calloc. */
            goto err_free_strings;
        }
    }
    buffer->unpack_offset = reader.pos;
    *values = result;
    *n = count;
    return HERD_SUCCESS;

err_free_strings:
    buffer_free_strings(result, count);
    return rc;
}
