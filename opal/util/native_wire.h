/* SPDX-License-Identifier: BSD-3-Clause */
/* The native wireup protocol between libherd (a process) and its session daemon, over a Unix
 * stream socket: framed, versioned, length-checked messages, one encoder and one decoder per
 * type (docs/wireup.md). Shared by the client library and the daemon's native component. */
#ifndef OPAL_UTIL_NATIVE_WIRE_H
#define OPAL_UTIL_NATIVE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/dss/buffer.h"
#include "opal/visibility.h"

#define OPAL_NATIVE_WIRE_MAGIC   0x4e445248u /* "HRDN" */
#define OPAL_NATIVE_WIRE_VERSION 1u
#define OPAL_NATIVE_HEADER_SIZE  16u
/* The same limits as the daemons' store (orte/mca/wireup/wireup.h). */
#define OPAL_NATIVE_MAX_KEY     511u
#define OPAL_NATIVE_MAX_VALUE   (64u << 20)
#define OPAL_NATIVE_MAX_PAYLOAD (OPAL_NATIVE_MAX_VALUE + 64u * 1024u)
#define OPAL_NATIVE_MAX_PUTS    65536u
#define OPAL_NATIVE_MAX_NSPACE  255u
#define OPAL_NATIVE_MAX_MESSAGE 4096u /* abort message, error sentence */

typedef enum opal_native_type {
    OPAL_NATIVE_HELLO = 1,    /* client: string nspace, u32 rank, i32 pid, string token */
    OPAL_NATIVE_COMMIT = 2,   /* client: u32 n, n x (string key, bytes value) */
    OPAL_NATIVE_FENCE = 3,    /* client: bool collect */
    OPAL_NATIVE_GET = 4,      /* client: u32 peer, string key */
    OPAL_NATIVE_ABORT = 5,    /* client: i32 status, string message */
    OPAL_NATIVE_FINALIZE = 6, /* client: nothing */
    OPAL_NATIVE_REPLY = 7,    /* daemon: i32 status, string error, bytes value */
    OPAL_NATIVE_TYPE_END
} opal_native_type_t;

/* The fixed header: u32 magic, u16 version, u16 type, u32 request id, u32 payload length (all
 * big-endian). */
typedef struct opal_native_header {
    uint16_t type;
    uint32_t id;
    uint32_t length;
} opal_native_header_t;

/* Whether buf holds a whole frame: its total length (header + payload), 0 when more bytes are
 * needed, HERD_ERR_UNPACK_FAILURE or HERD_ERR_VERSION_MISMATCH (negative) for a header that can
 * never be valid (wrong magic or version, unknown type, payload over the limit). */
OPAL_EXPORT long opal_native_frame(const void *buf, size_t len, opal_native_header_t *header);
/* A frame: header then the payload bytes (which may be NULL/0), into out (caller destructs). */
OPAL_EXPORT int opal_native_encode(opal_native_type_t type, uint32_t id, const void *payload,
                                   size_t len, opal_buffer_t *out);

typedef struct opal_native_hello {
    char *nspace;
    uint32_t rank;
    int32_t pid;
    char *token;
} opal_native_hello_t;

typedef struct opal_native_put {
    char *key;
    void *value;
    size_t len;
} opal_native_put_t;

typedef struct opal_native_commit {
    opal_native_put_t *puts;
    uint32_t num_puts;
} opal_native_commit_t;

typedef struct opal_native_get {
    uint32_t peer;
    char *key;
} opal_native_get_t;

typedef struct opal_native_abort {
    int32_t status;
    char *message;
} opal_native_abort_t;

typedef struct opal_native_reply {
    int32_t status;
    char *error; /* "" when none */
    void *value;
    size_t len;
} opal_native_reply_t;

/* Payload encoders (append to payload) and decoders (the whole payload must be used; anything
 * else, a limit exceeded or a missing string is HERD_ERR_UNPACK_FAILURE; *out set only on
 * success and freed with the matching _free). */
OPAL_EXPORT int opal_native_pack_hello(opal_buffer_t *payload, const opal_native_hello_t *hello);
OPAL_EXPORT int opal_native_unpack_hello(const void *data, size_t len, opal_native_hello_t *out);
OPAL_EXPORT void opal_native_hello_free(opal_native_hello_t *hello);

OPAL_EXPORT int opal_native_pack_commit(opal_buffer_t *payload, const opal_native_commit_t *commit);
OPAL_EXPORT int opal_native_unpack_commit(const void *data, size_t len, opal_native_commit_t *out);
OPAL_EXPORT void opal_native_commit_free(opal_native_commit_t *commit);

OPAL_EXPORT int opal_native_pack_fence(opal_buffer_t *payload, bool collect);
OPAL_EXPORT int opal_native_unpack_fence(const void *data, size_t len, bool *collect);

OPAL_EXPORT int opal_native_pack_get(opal_buffer_t *payload, const opal_native_get_t *get);
OPAL_EXPORT int opal_native_unpack_get(const void *data, size_t len, opal_native_get_t *out);
OPAL_EXPORT void opal_native_get_free(opal_native_get_t *get);

OPAL_EXPORT int opal_native_pack_abort(opal_buffer_t *payload, const opal_native_abort_t *abort);
OPAL_EXPORT int opal_native_unpack_abort(const void *data, size_t len, opal_native_abort_t *out);
OPAL_EXPORT void opal_native_abort_free(opal_native_abort_t *abort);

OPAL_EXPORT int opal_native_pack_reply(opal_buffer_t *payload, const opal_native_reply_t *reply);
OPAL_EXPORT int opal_native_unpack_reply(const void *data, size_t len, opal_native_reply_t *out);
OPAL_EXPORT void opal_native_reply_free(opal_native_reply_t *reply);

#endif /* OPAL_UTIL_NATIVE_WIRE_H */
