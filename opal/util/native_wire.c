/* SPDX-License-Identifier: BSD-3-Clause */
/* The native wireup protocol's frames and messages (opal/util/native_wire.h). */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/status.h"
#include "opal/util/native_wire.h"

static uint32_t get_u32(const uint8_t *p)
{
    return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3];
}

static void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t) (v >> 24);
    p[1] = (uint8_t) (v >> 16);
    p[2] = (uint8_t) (v >> 8);
    p[3] = (uint8_t) v;
}

long opal_native_frame(const void *buf, size_t len, opal_native_header_t *header)
{
    const uint8_t *p = buf;
    if (len < OPAL_NATIVE_HEADER_SIZE) {
        /* a wrong magic is wrong as soon as its bytes are there */
        uint8_t magic[4];
        put_u32(magic, OPAL_NATIVE_WIRE_MAGIC);
        return (0 == memcmp(p, magic, len < 4 ? len : 4)) ? 0 : (long) HERD_ERR_UNPACK_FAILURE;
    }
    if (OPAL_NATIVE_WIRE_MAGIC != get_u32(p)) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    uint16_t version = (uint16_t) ((p[4] << 8) | p[5]);
    uint16_t type = (uint16_t) ((p[6] << 8) | p[7]);
    uint32_t length = get_u32(p + 12);
    if (OPAL_NATIVE_WIRE_VERSION != version) {
        return HERD_ERR_VERSION_MISMATCH;
    }
    if (type < OPAL_NATIVE_HELLO || type >= OPAL_NATIVE_TYPE_END ||
        length > OPAL_NATIVE_MAX_PAYLOAD) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    if (NULL != header) {
        header->type = type;
        header->id = get_u32(p + 8);
        header->length = length;
    }
    size_t total = OPAL_NATIVE_HEADER_SIZE + (size_t) length;
    return len >= total ? (long) total : 0;
}

int opal_native_encode(opal_native_type_t type, uint32_t id, const void *payload, size_t len,
                       opal_buffer_t *out)
{
    if (type < OPAL_NATIVE_HELLO || type >= OPAL_NATIVE_TYPE_END || len > OPAL_NATIVE_MAX_PAYLOAD ||
        (len > 0 && NULL == payload)) {
        return HERD_ERR_BAD_PARAM;
    }
    uint8_t h[OPAL_NATIVE_HEADER_SIZE];
    put_u32(h, OPAL_NATIVE_WIRE_MAGIC);
    h[4] = 0;
    h[5] = OPAL_NATIVE_WIRE_VERSION;
    h[6] = (uint8_t) (type >> 8);
    h[7] = (uint8_t) type;
    put_u32(h + 8, id);
    put_u32(h + 12, (uint32_t) len);
    size_t total = sizeof(h) + len;
    uint8_t *bytes = malloc(total);
    if (NULL == bytes) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    memcpy(bytes, h, sizeof(h));
    if (len > 0) {
        memcpy(bytes + sizeof(h), payload, len);
    }
    int rc = opal_buffer_load(out, bytes, total);
    free(bytes);
    return rc;
}

/* A payload to decode, whole. */
static int load(opal_buffer_t *b, const void *data, size_t len)
{
    opal_buffer_init(b);
    if (len > OPAL_NATIVE_MAX_PAYLOAD || (len > 0 && NULL == data)) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    return (0 == len) ? HERD_SUCCESS : opal_buffer_load(b, data, len);
}

/* The end of a decode: everything used, or malformed. */
static int finish(opal_buffer_t *b, int rc)
{
    if (HERD_SUCCESS == rc && 0 != opal_buffer_remaining(b)) {
        rc = HERD_ERR_UNPACK_FAILURE;
    }
    opal_buffer_destruct(b);
    return (HERD_SUCCESS == rc || HERD_ERR_OUT_OF_RESOURCE == rc) ? rc : HERD_ERR_UNPACK_FAILURE;
}

static bool string_ok(const char *s, size_t max, bool may_be_empty)
{
    return NULL != s && (may_be_empty || '\0' != s[0]) && strlen(s) <= max;
}

/* ------------------------------------------------------------------------------------------ */

int opal_native_pack_hello(opal_buffer_t *b, const opal_native_hello_t *h)
{
    int rc;
    if (!string_ok(h->nspace, OPAL_NATIVE_MAX_NSPACE, false) ||
        !string_ok(h->token, OPAL_NATIVE_MAX_MESSAGE, true)) {
        return HERD_ERR_BAD_PARAM;
    }
    if (HERD_SUCCESS != (rc = opal_buffer_pack_string(b, h->nspace)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(b, h->rank)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_int32(b, h->pid)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_string(b, h->token))) {
        return rc;
    }
    return HERD_SUCCESS;
}

void opal_native_hello_free(opal_native_hello_t *h)
{
    free(h->nspace);
    free(h->token);
    memset(h, 0, sizeof(*h));
}

int opal_native_unpack_hello(const void *data, size_t len, opal_native_hello_t *out)
{
    opal_buffer_t b;
    opal_native_hello_t h = {0};
    int rc = load(&b, data, len);
    if (HERD_SUCCESS == rc && (HERD_SUCCESS != (rc = opal_buffer_unpack_string(&b, &h.nspace)) ||
                               HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(&b, &h.rank)) ||
                               HERD_SUCCESS != (rc = opal_buffer_unpack_int32(&b, &h.pid)) ||
                               HERD_SUCCESS != (rc = opal_buffer_unpack_string(&b, &h.token)))) {
        /* rc says which */
    }
    if (HERD_SUCCESS == rc && (!string_ok(h.nspace, OPAL_NATIVE_MAX_NSPACE, false) ||
                               !string_ok(h.token, OPAL_NATIVE_MAX_MESSAGE, true))) {
        rc = HERD_ERR_UNPACK_FAILURE;
    }
    rc = finish(&b, rc);
    if (HERD_SUCCESS != rc) {
        opal_native_hello_free(&h);
        return rc;
    }
    *out = h;
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */

int opal_native_pack_commit(opal_buffer_t *b, const opal_native_commit_t *c)
{
    int rc;
    if (c->num_puts > OPAL_NATIVE_MAX_PUTS) {
        return HERD_ERR_BAD_PARAM;
    }
    if (HERD_SUCCESS != (rc = opal_buffer_pack_uint32(b, c->num_puts))) {
        return rc;
    }
    for (uint32_t i = 0; i < c->num_puts; ++i) {
        const opal_native_put_t *p = &c->puts[i];
        if (!string_ok(p->key, OPAL_NATIVE_MAX_KEY, false) || p->len > OPAL_NATIVE_MAX_VALUE ||
            (p->len > 0 && NULL == p->value)) {
            return HERD_ERR_BAD_PARAM;
        }
        if (HERD_SUCCESS != (rc = opal_buffer_pack_string(b, p->key)) ||
            HERD_SUCCESS != (rc = opal_buffer_pack_bytes(b, p->value, p->len))) {
            return rc;
        }
    }
    return HERD_SUCCESS;
}

void opal_native_commit_free(opal_native_commit_t *c)
{
    for (uint32_t i = 0; NULL != c->puts && i < c->num_puts; ++i) {
        free(c->puts[i].key);
        free(c->puts[i].value);
    }
    free(c->puts);
    memset(c, 0, sizeof(*c));
}

int opal_native_unpack_commit(const void *data, size_t len, opal_native_commit_t *out)
{
    opal_buffer_t b;
    opal_native_commit_t c = {0};
    uint32_t n = 0;
    int rc = load(&b, data, len);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_unpack_uint32(&b, &n);
    }
    if (HERD_SUCCESS == rc && n > OPAL_NATIVE_MAX_PUTS) {
        rc = HERD_ERR_UNPACK_FAILURE;
    }
    /* grown as the puts come, so a lying count costs no more than the bytes behind it */
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < n; ++i) {
        if (0 == i % 64) {
            opal_native_put_t *grown = realloc(c.puts, (i + 64) * sizeof(*grown));
            if (NULL == grown) {
                rc = HERD_ERR_OUT_OF_RESOURCE;
                break;
            }
            c.puts = grown;
        }
        opal_native_put_t *p = &c.puts[i];
        memset(p, 0, sizeof(*p));
        c.num_puts = i + 1;
        if (HERD_SUCCESS != (rc = opal_buffer_unpack_string(&b, &p->key)) ||
            HERD_SUCCESS != (rc = opal_buffer_unpack_bytes(&b, &p->value, &p->len))) {
            break;
        }
        if (!string_ok(p->key, OPAL_NATIVE_MAX_KEY, false) || p->len > OPAL_NATIVE_MAX_VALUE) {
            rc = HERD_ERR_UNPACK_FAILURE;
        }
    }
    rc = finish(&b, rc);
    if (HERD_SUCCESS != rc) {
        opal_native_commit_free(&c);
        return rc;
    }
    *out = c;
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */

int opal_native_pack_fence(opal_buffer_t *b, bool collect)
{
    return opal_buffer_pack_bool(b, collect);
}

int opal_native_unpack_fence(const void *data, size_t len, bool *collect)
{
    opal_buffer_t b;
    bool c = false;
    int rc = load(&b, data, len);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_unpack_bool(&b, &c);
    }
    rc = finish(&b, rc);
    if (HERD_SUCCESS == rc) {
        *collect = c;
    }
    return rc;
}

/* ------------------------------------------------------------------------------------------ */

int opal_native_pack_get(opal_buffer_t *b, const opal_native_get_t *g)
{
    int rc;
    if (!string_ok(g->key, OPAL_NATIVE_MAX_KEY, false)) {
        return HERD_ERR_BAD_PARAM;
    }
    if (HERD_SUCCESS != (rc = opal_buffer_pack_uint32(b, g->peer)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_string(b, g->key))) {
        return rc;
    }
    return HERD_SUCCESS;
}

void opal_native_get_free(opal_native_get_t *g)
{
    free(g->key);
    memset(g, 0, sizeof(*g));
}

int opal_native_unpack_get(const void *data, size_t len, opal_native_get_t *out)
{
    opal_buffer_t b;
    opal_native_get_t g = {0};
    int rc = load(&b, data, len);
    if (HERD_SUCCESS == rc && HERD_SUCCESS == (rc = opal_buffer_unpack_uint32(&b, &g.peer))) {
        rc = opal_buffer_unpack_string(&b, &g.key);
    }
    if (HERD_SUCCESS == rc && !string_ok(g.key, OPAL_NATIVE_MAX_KEY, false)) {
        rc = HERD_ERR_UNPACK_FAILURE;
    }
    rc = finish(&b, rc);
    if (HERD_SUCCESS != rc) {
        opal_native_get_free(&g);
        return rc;
    }
    *out = g;
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */

int opal_native_pack_abort(opal_buffer_t *b, const opal_native_abort_t *a)
{
    int rc;
    const char *message = NULL != a->message ? a->message : "";
    if (strlen(message) > OPAL_NATIVE_MAX_MESSAGE) {
        return HERD_ERR_BAD_PARAM;
    }
    if (HERD_SUCCESS != (rc = opal_buffer_pack_int32(b, a->status)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_string(b, message))) {
        return rc;
    }
    return HERD_SUCCESS;
}

void opal_native_abort_free(opal_native_abort_t *a)
{
    free(a->message);
    memset(a, 0, sizeof(*a));
}

int opal_native_unpack_abort(const void *data, size_t len, opal_native_abort_t *out)
{
    opal_buffer_t b;
    opal_native_abort_t a = {0};
    int rc = load(&b, data, len);
    if (HERD_SUCCESS == rc && HERD_SUCCESS == (rc = opal_buffer_unpack_int32(&b, &a.status))) {
        rc = opal_buffer_unpack_string(&b, &a.message);
    }
    if (HERD_SUCCESS == rc && !string_ok(a.message, OPAL_NATIVE_MAX_MESSAGE, true)) {
        rc = HERD_ERR_UNPACK_FAILURE;
    }
    rc = finish(&b, rc);
    if (HERD_SUCCESS != rc) {
        opal_native_abort_free(&a);
        return rc;
    }
    *out = a;
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */

int opal_native_pack_reply(opal_buffer_t *b, const opal_native_reply_t *r)
{
    int rc;
    const char *error = NULL != r->error ? r->error : "";
    if (r->status > 0 || r->len > OPAL_NATIVE_MAX_VALUE || (r->len > 0 && NULL == r->value)) {
        return HERD_ERR_BAD_PARAM;
    }
    if (strlen(error) > OPAL_NATIVE_MAX_MESSAGE) {
        error = "(an error too long to send)";
    }
    if (HERD_SUCCESS != (rc = opal_buffer_pack_int32(b, r->status)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_string(b, error)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_bytes(b, r->value, r->len))) {
        return rc;
    }
    return HERD_SUCCESS;
}

void opal_native_reply_free(opal_native_reply_t *r)
{
    free(r->error);
    free(r->value);
    memset(r, 0, sizeof(*r));
}

int opal_native_unpack_reply(const void *data, size_t len, opal_native_reply_t *out)
{
    opal_buffer_t b;
    opal_native_reply_t r = {0};
    int rc = load(&b, data, len);
    if (HERD_SUCCESS == rc &&
        (HERD_SUCCESS != (rc = opal_buffer_unpack_int32(&b, &r.status)) ||
         HERD_SUCCESS != (rc = opal_buffer_unpack_string(&b, &r.error)) ||
         HERD_SUCCESS != (rc = opal_buffer_unpack_bytes(&b, &r.value, &r.len)))) {
        /* rc says which */
    }
    if (HERD_SUCCESS == rc &&
        (r.status > 0 || r.status <= HERD_ERR_MAX ||
         !string_ok(r.error, OPAL_NATIVE_MAX_MESSAGE, true) || r.len > OPAL_NATIVE_MAX_VALUE)) {
        rc = HERD_ERR_UNPACK_FAILURE;
    }
    rc = finish(&b, rc);
    if (HERD_SUCCESS != rc) {
        opal_native_reply_free(&r);
        return rc;
    }
    *out = r;
    return HERD_SUCCESS;
}
