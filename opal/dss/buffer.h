/* SPDX-License-Identifier: BSD-3-Clause */
/* Bounds-checked serialization buffers: typed pack/unpack in network byte order. Every value is
 * preceded by a one-byte type tag, so unpacking the wrong type, a truncated buffer or a bad
 * length is an error (never a crash or an over-read). */
#ifndef OPAL_DSS_BUFFER_H
#define OPAL_DSS_BUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/status.h"

typedef struct opal_buffer {
    uint8_t *base;        /* storage (NULL while empty) */
    size_t capacity;      /* bytes allocated */
    size_t used;          /* bytes packed */
    size_t unpack_offset; /* next byte to unpack */
} opal_buffer_t;

#define OPAL_BUFFER_STATIC_INIT {NULL, 0, 0, 0}

/* Largest string / blob / array element count accepted by unpack, to reject absurd lengths
 * before allocating (a corrupt length must not make us allocate gigabytes). */
#define OPAL_BUFFER_MAX_ITEM (256u * 1024u * 1024u)

OPAL_EXPORT void opal_buffer_init(opal_buffer_t *buffer);
OPAL_EXPORT void opal_buffer_destruct(opal_buffer_t *buffer); /* frees storage, re-inits */
/* Replace the contents with a copy of data (for unpacking received bytes). */
OPAL_EXPORT int opal_buffer_load(opal_buffer_t *buffer, const void *data, size_t len);
/* Bytes left to unpack. */
OPAL_EXPORT size_t opal_buffer_remaining(const opal_buffer_t *buffer);

OPAL_EXPORT int opal_buffer_pack_uint8(opal_buffer_t *buffer, uint8_t value);
OPAL_EXPORT int opal_buffer_pack_uint16(opal_buffer_t *buffer, uint16_t value);
OPAL_EXPORT int opal_buffer_pack_uint32(opal_buffer_t *buffer, uint32_t value);
OPAL_EXPORT int opal_buffer_pack_uint64(opal_buffer_t *buffer, uint64_t value);
OPAL_EXPORT int opal_buffer_pack_int32(opal_buffer_t *buffer, int32_t value);
OPAL_EXPORT int opal_buffer_pack_int64(opal_buffer_t *buffer, int64_t value);
OPAL_EXPORT int opal_buffer_pack_bool(opal_buffer_t *buffer, bool value);
/* A NUL-terminated string; NULL is packed as a distinct "null string" and unpacks to NULL. */
OPAL_EXPORT int opal_buffer_pack_string(opal_buffer_t *buffer, const char *value);
/* A byte blob of len bytes (len may be 0). */
OPAL_EXPORT int opal_buffer_pack_bytes(opal_buffer_t *buffer, const void *data, size_t len);
/* Arrays of n elements. */
OPAL_EXPORT int opal_buffer_pack_uint32_array(opal_buffer_t *buffer, const uint32_t *values,
                                              size_t n);
OPAL_EXPORT int opal_buffer_pack_string_array(opal_buffer_t *buffer, char *const *values, size_t n);

/* Unpack: output set only on success; on failure the unpack position does not move. */
OPAL_EXPORT int opal_buffer_unpack_uint8(opal_buffer_t *buffer, uint8_t *value);
OPAL_EXPORT int opal_buffer_unpack_uint16(opal_buffer_t *buffer, uint16_t *value);
OPAL_EXPORT int opal_buffer_unpack_uint32(opal_buffer_t *buffer, uint32_t *value);
OPAL_EXPORT int opal_buffer_unpack_uint64(opal_buffer_t *buffer, uint64_t *value);
OPAL_EXPORT int opal_buffer_unpack_int32(opal_buffer_t *buffer, int32_t *value);
OPAL_EXPORT int opal_buffer_unpack_int64(opal_buffer_t *buffer, int64_t *value);
OPAL_EXPORT int opal_buffer_unpack_bool(opal_buffer_t *buffer, bool *value);
/* *value is malloc'd (caller frees) or NULL for a packed NULL. */
OPAL_EXPORT int opal_buffer_unpack_string(opal_buffer_t *buffer, char **value);
/* *data is malloc'd (NULL when len is 0). */
OPAL_EXPORT int opal_buffer_unpack_bytes(opal_buffer_t *buffer, void **data, size_t *len);
OPAL_EXPORT int opal_buffer_unpack_uint32_array(opal_buffer_t *buffer, uint32_t **values,
                                                size_t *n);
/* *values is a malloc'd array of n malloc'd strings (entries may be NULL). */
OPAL_EXPORT int opal_buffer_unpack_string_array(opal_buffer_t *buffer, char ***values, size_t *n);

#endif /* OPAL_DSS_BUFFER_H */
