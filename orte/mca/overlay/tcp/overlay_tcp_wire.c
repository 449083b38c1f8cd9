/* SPDX-License-Identifier: BSD-3-Clause */
/* overlay tcp wire format: encode and strictly decode frames and handshake messages, compute
 * the handshake MACs, parse and format tcp:// URIs. */
#include "herd_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "orte/mca/overlay/tcp/overlay_tcp_sodium.h"
#include "orte/mca/overlay/tcp/overlay_tcp_wire.h"

/* Both MAC transcripts start with a different label, so one can never pass for the other; the
 * version in them is the transcript's (it changed with protocol version 2). */
#define OVERLAY_TCP_CHALLENGE_LABEL "herd overlay v2 challenge"
#define OVERLAY_TCP_RESPONSE_LABEL  "herd overlay v2 response"
/* crypto_kdf context: exactly crypto_kdf_CONTEXTBYTES (8) characters. */
#define OVERLAY_TCP_KDF_CONTEXT "herdovly"
#define OVERLAY_TCP_KDF_SUBKEY  1u

#define OVERLAY_TCP_BYE_PAYLOAD       4u
#define OVERLAY_TCP_HEARTBEAT_PAYLOAD 4u

static void wire_why(char *why, size_t why_size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static void wire_why(char *why, size_t why_size, const char *format, ...)
{
    va_list ap;

    if (NULL == why || 0 == why_size) {
        return;
    }
    va_start(ap, format);
    vsnprintf(why, why_size, format, ap);
    va_end(ap);
}

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t) (v >> 8);
    p[1] = (uint8_t) v;
}

static void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t) (v >> 24);
    p[1] = (uint8_t) (v >> 16);
    p[2] = (uint8_t) (v >> 8);
    p[3] = (uint8_t) v;
}

static uint16_t get_u16(const uint8_t *p)
{
    return (uint16_t) ((unsigned) p[0] << 8 | p[1]);
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

const char *overlay_tcp_msg_type_name(unsigned type)
{
    switch (type) {
    case OVERLAY_TCP_MSG_HELLO:
        return "HELLO";
    case OVERLAY_TCP_MSG_CHALLENGE:
        return "CHALLENGE";
    case OVERLAY_TCP_MSG_RESPONSE:
        return "RESPONSE";
    case OVERLAY_TCP_MSG_DATA:
        return "DATA";
    case OVERLAY_TCP_MSG_BYE:
        return "BYE";
    case OVERLAY_TCP_MSG_HEARTBEAT:
        return "HEARTBEAT";
    default:
        return "unknown";
    }
}

void overlay_tcp_header_encode(const overlay_tcp_header_t *header,
                               uint8_t out[OVERLAY_TCP_HEADER_BYTES])
{
    put_u32(out, OVERLAY_TCP_MAGIC);
    out[4] = header->version;
    out[5] = header->type;
    put_u16(out + 6, header->flags);
    put_u16(out + 8, header->tag);
    put_u16(out + 10, 0);
    put_u32(out + 12, header->src);
    put_u32(out + 16, header->dst);
    put_u32(out + 20, header->length);
}

int overlay_tcp_header_decode(const uint8_t *bytes, size_t size, size_t max_payload,
                              overlay_tcp_header_t *header, char *why, size_t why_size)
{
    overlay_tcp_header_t h;
    size_t limit;
    uint32_t magic;

    if (NULL == bytes || size < OVERLAY_TCP_HEADER_BYTES) {
        wire_why(why, why_size, "the frame header is cut short (%zu of %u bytes)", size,
                 OVERLAY_TCP_HEADER_BYTES);
        return HERD_ERR_UNPACK_READ_PAST_END;
    }
    magic = get_u32(bytes);
    if (OVERLAY_TCP_MAGIC != magic) {
        wire_why(why, why_size,
                 "the frame does not start with the overlay magic number (0x%08x instead of "
                 "0x%08x): not a herd overlay peer",
                 magic, OVERLAY_TCP_MAGIC);
        return HERD_ERR_UNPACK_FAILURE;
    }
    h.version = bytes[4];
    h.type = bytes[5];
    h.flags = get_u16(bytes + 6);
    h.tag = get_u16(bytes + 8);
    h.src = get_u32(bytes + 12);
    h.dst = get_u32(bytes + 16);
    h.length = get_u32(bytes + 20);
    if (OVERLAY_TCP_PROTOCOL_VERSION != h.version) {
        wire_why(why, why_size,
                 "the peer speaks overlay protocol version %u, this daemon version %u: run the "
                 "same herd version on every node",
                 h.version, OVERLAY_TCP_PROTOCOL_VERSION);
        return HERD_ERR_VERSION_MISMATCH;
    }
    if (0 != h.flags) {
        wire_why(why, why_size, "the frame has flags 0x%04x set, but none are defined", h.flags);
        return HERD_ERR_UNPACK_FAILURE;
    }
    if (0 != get_u16(bytes + 10)) {
        wire_why(why, why_size, "the frame's reserved field is not zero");
        return HERD_ERR_UNPACK_FAILURE;
    }
    switch (h.type) {
    case OVERLAY_TCP_MSG_HELLO:
    case OVERLAY_TCP_MSG_CHALLENGE:
    case OVERLAY_TCP_MSG_RESPONSE:
        limit = OVERLAY_TCP_MAX_HANDSHAKE_PAYLOAD;
        break;
    case OVERLAY_TCP_MSG_DATA:
        limit = max_payload;
        break;
    case OVERLAY_TCP_MSG_BYE:
    case OVERLAY_TCP_MSG_HEARTBEAT:
        /* both carry one u32 */
        if (OVERLAY_TCP_BYE_PAYLOAD != h.length) {
            wire_why(why, why_size, "a %s frame carries %u bytes instead of %u",
                     overlay_tcp_msg_type_name(h.type), h.length, OVERLAY_TCP_BYE_PAYLOAD);
            return HERD_ERR_UNPACK_FAILURE;
        }
        limit = OVERLAY_TCP_BYE_PAYLOAD;
        break;
    default:
        wire_why(why, why_size, "the frame has unknown message type %u", h.type);
        return HERD_ERR_UNPACK_FAILURE;
    }
    if (OVERLAY_TCP_MSG_DATA != h.type && 0 != h.tag) {
        wire_why(why, why_size, "a %s frame carries tag %u; only DATA frames have tags",
                 overlay_tcp_msg_type_name(h.type), h.tag);
        return HERD_ERR_UNPACK_FAILURE;
    }
    if (h.length > limit) {
        wire_why(why, why_size, "a %s frame announces %u bytes of payload, over the limit of %zu",
                 overlay_tcp_msg_type_name(h.type), h.length, limit);
        return HERD_ERR_UNPACK_FAILURE;
    }
    *header = h;
    return HERD_SUCCESS;
}

int overlay_tcp_header_check_start(const uint8_t *bytes, size_t size, size_t max_payload, char *why,
                                   size_t why_size)
{
    overlay_tcp_header_t filler = {
        .version = OVERLAY_TCP_PROTOCOL_VERSION,
        .type = OVERLAY_TCP_MSG_HELLO,
    };
    uint8_t whole[OVERLAY_TCP_HEADER_BYTES];
    overlay_tcp_header_t header;

    if (NULL == bytes || size >= OVERLAY_TCP_HEADER_BYTES) {
        return HERD_ERR_BAD_PARAM;
    }
    /* Complete the bytes with the most forgiving rest: zeros, a length of 0, and for the types
     * of a fixed length that length. The header decodes exactly when some ending of the bytes
     * would, so a refusal here is the refusal the whole header would get. */
    if (size > 5 && (OVERLAY_TCP_MSG_BYE == bytes[5] || OVERLAY_TCP_MSG_HEARTBEAT == bytes[5])) {
        filler.length = OVERLAY_TCP_BYE_PAYLOAD;
    }
    overlay_tcp_header_encode(&filler, whole);
    memcpy(whole, bytes, size);
    return overlay_tcp_header_decode(whole, sizeof(whole), max_payload, &header, why, why_size);
}

bool overlay_tcp_string_valid(const char *s, size_t max_length)
{
    size_t length;

    if (NULL == s) {
        return false;
    }
    length = strnlen(s, max_length + 1);
    if (length > max_length) {
        return false;
    }
    for (size_t i = 0; i < length; i++) {
        /* printable ASCII only: these strings end up in logs */
        if (s[i] < 0x20 || s[i] > 0x7e) {
            return false;
        }
    }
    return true;
}

/* A length-prefixed (u16) string at *offset; leaves *offset past it. */
static int wire_get_string(const uint8_t *payload, size_t length, size_t *offset, size_t min,
                           size_t max, char *out, const char *what, char *why, size_t why_size)
{
    size_t count;

    if (length - *offset < 2) {
        wire_why(why, why_size, "the %s length is cut short", what);
        return HERD_ERR_UNPACK_FAILURE;
    }
    count = get_u16(payload + *offset);
    *offset += 2;
    if (count < min || count > max) {
        wire_why(why, why_size, "the %s is %zu bytes long; %zu to %zu are allowed", what, count,
                 min, max);
        return HERD_ERR_UNPACK_FAILURE;
    }
    if (length - *offset < count) {
        wire_why(why, why_size, "the %s is cut short", what);
        return HERD_ERR_UNPACK_FAILURE;
    }
    for (size_t i = 0; i < count; i++) {
        uint8_t c = payload[*offset + i];

        if (c < 0x20 || c > 0x7e) {
            wire_why(why, why_size, "the %s holds a byte (0x%02x) that is not printable ASCII",
                     what, c);
            return HERD_ERR_UNPACK_FAILURE;
        }
    }
    memcpy(out, payload + *offset, count);
    out[count] = '\0';
    *offset += count;
    return HERD_SUCCESS;
}

/* HELLO payload: nonce[32] | num_daemons u32 | radix u32 | heartbeat_ms u32 | dvm id (u16 +
 * bytes) | uri (u16 + bytes). */
int overlay_tcp_hello_encode(const overlay_tcp_hello_t *hello, uint8_t *out, size_t out_size,
                             size_t *length)
{
    size_t dvm_length;
    size_t uri_length;
    size_t total;
    size_t offset = 0;

    if (NULL == hello || NULL == out || NULL == length ||
        !overlay_tcp_string_valid(hello->dvm_id, ORTE_OVERLAY_MAX_DVM_ID) ||
        !overlay_tcp_string_valid(hello->uri, OVERLAY_TCP_MAX_URI) || 0 == hello->dvm_id[0] ||
        0 == hello->num_daemons || 0 == hello->radix) {
        return HERD_ERR_BAD_PARAM;
    }
    dvm_length = strlen(hello->dvm_id);
    uri_length = strlen(hello->uri);
    total = OVERLAY_TCP_NONCE_BYTES + 4 + 4 + 4 + 2 + dvm_length + 2 + uri_length;
    if (total > out_size) {
        return HERD_ERR_BAD_PARAM;
    }
    memcpy(out, hello->nonce, OVERLAY_TCP_NONCE_BYTES);
    offset += OVERLAY_TCP_NONCE_BYTES;
    put_u32(out + offset, hello->num_daemons);
    offset += 4;
    put_u32(out + offset, hello->radix);
    offset += 4;
    put_u32(out + offset, hello->heartbeat_ms);
    offset += 4;
    put_u16(out + offset, (uint16_t) dvm_length);
    offset += 2;
    memcpy(out + offset, hello->dvm_id, dvm_length);
    offset += dvm_length;
    put_u16(out + offset, (uint16_t) uri_length);
    offset += 2;
    memcpy(out + offset, hello->uri, uri_length);
    *length = total;
    return HERD_SUCCESS;
}

int overlay_tcp_hello_decode(const uint8_t *payload, size_t length, overlay_tcp_hello_t *hello,
                             char *why, size_t why_size)
{
    overlay_tcp_hello_t h;
    size_t offset = 0;
    int rc;

    if (NULL == payload || length < OVERLAY_TCP_NONCE_BYTES + 4 + 4 + 4) {
        wire_why(why, why_size, "the HELLO is cut short (%zu bytes)", length);
        return HERD_ERR_UNPACK_FAILURE;
    }
    memcpy(h.nonce, payload, OVERLAY_TCP_NONCE_BYTES);
    offset += OVERLAY_TCP_NONCE_BYTES;
    h.num_daemons = get_u32(payload + offset);
    offset += 4;
    h.radix = get_u32(payload + offset);
    offset += 4;
    h.heartbeat_ms = get_u32(payload + offset);
    offset += 4;
    if (0 == h.num_daemons || 0 == h.radix) {
        wire_why(why, why_size, "the HELLO describes a tree of %u daemons with radix %u",
                 h.num_daemons, h.radix);
        return HERD_ERR_UNPACK_FAILURE;
    }
    rc = wire_get_string(payload, length, &offset, 1, ORTE_OVERLAY_MAX_DVM_ID, h.dvm_id, "DVM id",
                         why, why_size);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    rc = wire_get_string(payload, length, &offset, 0, OVERLAY_TCP_MAX_URI, h.uri, "URI", why,
                         why_size);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (offset != length) {
        wire_why(why, why_size, "the HELLO has %zu bytes after its last field", length - offset);
        return HERD_ERR_UNPACK_FAILURE;
    }
    *hello = h;
    return HERD_SUCCESS;
}

/* CHALLENGE payload: nonce[32] | heartbeat_ms u32 | MAC[32]. */
#define OVERLAY_TCP_CHALLENGE_PAYLOAD (OVERLAY_TCP_NONCE_BYTES + 4 + OVERLAY_TCP_MAC_BYTES)

int overlay_tcp_challenge_encode(const overlay_tcp_challenge_t *challenge, uint8_t *out,
                                 size_t out_size, size_t *length)
{
    if (NULL == challenge || NULL == out || NULL == length ||
        out_size < OVERLAY_TCP_CHALLENGE_PAYLOAD) {
        return HERD_ERR_BAD_PARAM;
    }
    memcpy(out, challenge->nonce, OVERLAY_TCP_NONCE_BYTES);
    put_u32(out + OVERLAY_TCP_NONCE_BYTES, challenge->heartbeat_ms);
    memcpy(out + OVERLAY_TCP_NONCE_BYTES + 4, challenge->mac, OVERLAY_TCP_MAC_BYTES);
    *length = OVERLAY_TCP_CHALLENGE_PAYLOAD;
    return HERD_SUCCESS;
}

int overlay_tcp_challenge_decode(const uint8_t *payload, size_t length,
                                 overlay_tcp_challenge_t *challenge, char *why, size_t why_size)
{
    if (NULL == payload || OVERLAY_TCP_CHALLENGE_PAYLOAD != length) {
        wire_why(why, why_size, "the CHALLENGE is %zu bytes instead of %u", length,
                 OVERLAY_TCP_CHALLENGE_PAYLOAD);
        return HERD_ERR_UNPACK_FAILURE;
    }
    memcpy(challenge->nonce, payload, OVERLAY_TCP_NONCE_BYTES);
    challenge->heartbeat_ms = get_u32(payload + OVERLAY_TCP_NONCE_BYTES);
    memcpy(challenge->mac, payload + OVERLAY_TCP_NONCE_BYTES + 4, OVERLAY_TCP_MAC_BYTES);
    return HERD_SUCCESS;
}

int overlay_tcp_response_encode(const overlay_tcp_response_t *response, uint8_t *out,
                                size_t out_size, size_t *length)
{
    if (NULL == response || NULL == out || NULL == length || out_size < OVERLAY_TCP_MAC_BYTES) {
        return HERD_ERR_BAD_PARAM;
    }
    memcpy(out, response->mac, OVERLAY_TCP_MAC_BYTES);
    *length = OVERLAY_TCP_MAC_BYTES;
    return HERD_SUCCESS;
}

int overlay_tcp_response_decode(const uint8_t *payload, size_t length,
                                overlay_tcp_response_t *response, char *why, size_t why_size)
{
    if (NULL == payload || OVERLAY_TCP_MAC_BYTES != length) {
        wire_why(why, why_size, "the RESPONSE is %zu bytes instead of %u", length,
                 OVERLAY_TCP_MAC_BYTES);
        return HERD_ERR_UNPACK_FAILURE;
    }
    memcpy(response->mac, payload, OVERLAY_TCP_MAC_BYTES);
    return HERD_SUCCESS;
}

int overlay_tcp_bye_encode(const overlay_tcp_bye_t *bye, uint8_t *out, size_t out_size,
                           size_t *length)
{
    if (NULL == bye || NULL == out || NULL == length || out_size < OVERLAY_TCP_BYE_PAYLOAD ||
        0 == bye->reason) {
        return HERD_ERR_BAD_PARAM;
    }
    put_u32(out, bye->reason);
    *length = OVERLAY_TCP_BYE_PAYLOAD;
    return HERD_SUCCESS;
}

int overlay_tcp_bye_decode(const uint8_t *payload, size_t length, overlay_tcp_bye_t *bye, char *why,
                           size_t why_size)
{
    uint32_t reason;

    if (NULL == payload || OVERLAY_TCP_BYE_PAYLOAD != length) {
        wire_why(why, why_size, "the BYE is %zu bytes instead of %u", length,
                 OVERLAY_TCP_BYE_PAYLOAD);
        return HERD_ERR_UNPACK_FAILURE;
    }
    reason = get_u32(payload);
    /* later versions may add reasons; zero was never one */
    if (0 == reason) {
        wire_why(why, why_size, "the BYE gives reason 0");
        return HERD_ERR_UNPACK_FAILURE;
    }
    bye->reason = reason;
    return HERD_SUCCESS;
}

int overlay_tcp_heartbeat_encode(const overlay_tcp_heartbeat_t *heartbeat, uint8_t *out,
                                 size_t out_size, size_t *length)
{
    if (NULL == heartbeat || NULL == out || NULL == length ||
        out_size < OVERLAY_TCP_HEARTBEAT_PAYLOAD) {
        return HERD_ERR_BAD_PARAM;
    }
    put_u32(out, heartbeat->timeout_ms);
    *length = OVERLAY_TCP_HEARTBEAT_PAYLOAD;
    return HERD_SUCCESS;
}

int overlay_tcp_heartbeat_decode(const uint8_t *payload, size_t length,
                                 overlay_tcp_heartbeat_t *heartbeat, char *why, size_t why_size)
{
    if (NULL == payload || OVERLAY_TCP_HEARTBEAT_PAYLOAD != length) {
        wire_why(why, why_size, "the HEARTBEAT is %zu bytes instead of %u", length,
                 OVERLAY_TCP_HEARTBEAT_PAYLOAD);
        return HERD_ERR_UNPACK_FAILURE;
    }
    /* any timeout is valid, 0 (off) included: it only tells the receiver how often to send */
    heartbeat->timeout_ms = get_u32(payload);
    return HERD_SUCCESS;
}

int overlay_tcp_data_decode(const overlay_tcp_header_t *header, const uint8_t *payload,
                            uint32_t num_daemons, overlay_tcp_data_t *data, char *why,
                            size_t why_size)
{
    if (NULL == header || OVERLAY_TCP_MSG_DATA != header->type) {
        wire_why(why, why_size, "not a DATA frame");
        return HERD_ERR_UNPACK_FAILURE;
    }
    if (NULL == payload && 0 != header->length) {
        wire_why(why, why_size, "the DATA payload is missing");
        return HERD_ERR_UNPACK_FAILURE;
    }
    if (header->src >= num_daemons || header->dst >= num_daemons) {
        wire_why(why, why_size,
                 "a DATA frame from daemon %u to daemon %u, but the DVM has daemons 0 to %u",
                 header->src, header->dst, num_daemons - 1);
        return HERD_ERR_UNPACK_FAILURE;
    }
    data->src = header->src;
    data->dst = header->dst;
    data->tag = header->tag;
    data->payload = payload;
    data->length = header->length;
    return HERD_SUCCESS;
}

int overlay_tcp_derive_key(const uint8_t secret[ORTE_OVERLAY_SECRET_BYTES],
                           uint8_t key[OVERLAY_TCP_KEY_BYTES])
{
    const overlay_tcp_sodium_t *na = overlay_tcp_sodium(NULL);
    if (NULL == na ||
        0 != na->kdf_derive_from_key(key, OVERLAY_TCP_KEY_BYTES, OVERLAY_TCP_KDF_SUBKEY,
                                     OVERLAY_TCP_KDF_CONTEXT, secret)) {
        return HERD_ERROR;
    }
    return HERD_SUCCESS;
}

static void mac_add_u32(const overlay_tcp_sodium_t *na, crypto_auth_hmacsha512256_state *state,
                        uint32_t value)
{
    uint8_t bytes[4];

    put_u32(bytes, value);
    na->hmac_update(state, bytes, sizeof(bytes));
}

/* Variable-length fields are length-prefixed, so no two transcripts share their bytes. */
static void mac_add_string(const overlay_tcp_sodium_t *na, crypto_auth_hmacsha512256_state *state,
                           const char *s)
{
    size_t length = strlen(s);
    uint8_t bytes[2];

    put_u16(bytes, (uint16_t) length);
    na->hmac_update(state, bytes, sizeof(bytes));
    na->hmac_update(state, (const unsigned char *) s, length);
}

static void transcript_mac(const uint8_t key[OVERLAY_TCP_KEY_BYTES], const char *label,
                           const uint8_t first[OVERLAY_TCP_NONCE_BYTES],
                           const uint8_t second[OVERLAY_TCP_NONCE_BYTES], orte_vpid_t sender,
                           orte_vpid_t receiver, uint32_t num_daemons, uint32_t radix,
                           const char *dvm_id, const char *uri, uint32_t heartbeat_ms,
                           uint8_t mac[OVERLAY_TCP_MAC_BYTES])
{
    const overlay_tcp_sodium_t *na = overlay_tcp_sodium(NULL);
    crypto_auth_hmacsha512256_state state;

    if (NULL == na) {
        /* the caller loads libsodium before any handshake: a MAC of zeros matches none */
        memset(mac, 0, OVERLAY_TCP_MAC_BYTES);
        return;
    }

    na->hmac_init(&state, key, OVERLAY_TCP_KEY_BYTES);
    mac_add_string(na, &state, label);
    na->hmac_update(&state, first, OVERLAY_TCP_NONCE_BYTES);
    na->hmac_update(&state, second, OVERLAY_TCP_NONCE_BYTES);
    mac_add_u32(na, &state, sender);
    mac_add_u32(na, &state, receiver);
    mac_add_u32(na, &state, num_daemons);
    mac_add_u32(na, &state, radix);
    mac_add_string(na, &state, dvm_id);
    if (NULL != uri) {
        mac_add_string(na, &state, uri);
    }
    mac_add_u32(na, &state, heartbeat_ms);
    na->hmac_final(&state, mac);
    explicit_bzero(&state, sizeof(state));
}

void overlay_tcp_challenge_mac(const uint8_t key[OVERLAY_TCP_KEY_BYTES],
                               const uint8_t nonce_c[OVERLAY_TCP_NONCE_BYTES],
                               const uint8_t nonce_s[OVERLAY_TCP_NONCE_BYTES], orte_vpid_t acceptor,
                               orte_vpid_t connector, uint32_t num_daemons, uint32_t radix,
                               const char *dvm_id, uint32_t heartbeat_ms,
                               uint8_t mac[OVERLAY_TCP_MAC_BYTES])
{
    transcript_mac(key, OVERLAY_TCP_CHALLENGE_LABEL, nonce_c, nonce_s, acceptor, connector,
                   num_daemons, radix, dvm_id, NULL, heartbeat_ms, mac);
}

void overlay_tcp_response_mac(const uint8_t key[OVERLAY_TCP_KEY_BYTES],
                              const uint8_t nonce_s[OVERLAY_TCP_NONCE_BYTES],
                              const uint8_t nonce_c[OVERLAY_TCP_NONCE_BYTES], orte_vpid_t connector,
                              orte_vpid_t acceptor, uint32_t num_daemons, uint32_t radix,
                              const char *dvm_id, const char *uri, uint32_t heartbeat_ms,
                              uint8_t mac[OVERLAY_TCP_MAC_BYTES])
{
    transcript_mac(key, OVERLAY_TCP_RESPONSE_LABEL, nonce_s, nonce_c, connector, acceptor,
                   num_daemons, radix, dvm_id, uri, heartbeat_ms, mac);
}

bool overlay_tcp_mac_equal(const uint8_t a[OVERLAY_TCP_MAC_BYTES],
                           const uint8_t b[OVERLAY_TCP_MAC_BYTES])
{
    const overlay_tcp_sodium_t *na = overlay_tcp_sodium(NULL);
    return NULL != na && 0 == na->compare(a, b, OVERLAY_TCP_MAC_BYTES);
}

/* Port: 1 to 5 digits, 1..65535, nothing after it. */
static bool uri_parse_port(const char *text, uint16_t *port)
{
    unsigned long value = 0;
    size_t digits = 0;

    for (; '\0' != text[digits]; digits++) {
        if (text[digits] < '0' || text[digits] > '9' || digits >= 5) {
            return false;
        }
        value = value * 10 + (unsigned long) (text[digits] - '0');
    }
    if (0 == digits || 0 == value || value > 65535) {
        return false;
    }
    *port = (uint16_t) value;
    return true;
}

int overlay_tcp_uri_parse(const char *uri, struct sockaddr_storage *address,
                          socklen_t *address_length, char *why, size_t why_size)
{
    static const char scheme[] = "tcp://";
    char host[INET6_ADDRSTRLEN];
    const char *rest;
    const char *host_end;
    const char *port_text;
    size_t host_length;
    uint16_t port;

    if (NULL == uri || 0 != strncmp(uri, scheme, sizeof(scheme) - 1)) {
        wire_why(why, why_size, "it does not start with %s", scheme);
        return HERD_ERR_BAD_PARAM;
    }
    rest = uri + sizeof(scheme) - 1;
    if ('[' == rest[0]) {
        rest++;
        host_end = strchr(rest, ']');
        if (NULL == host_end || ':' != host_end[1]) {
            wire_why(why, why_size, "an IPv6 address must be written [address]:port");
            return HERD_ERR_BAD_PARAM;
        }
        port_text = host_end + 2;
    } else {
        host_end = strrchr(rest, ':');
        if (NULL == host_end) {
            wire_why(why, why_size, "it has no :port");
            return HERD_ERR_BAD_PARAM;
        }
        port_text = host_end + 1;
    }
    host_length = (size_t) (host_end - rest);
    if (0 == host_length || host_length >= sizeof(host)) {
        wire_why(why, why_size, "the host part is empty or too long");
        return HERD_ERR_BAD_PARAM;
    }
    memcpy(host, rest, host_length);
    host[host_length] = '\0';
    if (!uri_parse_port(port_text, &port)) {
        wire_why(why, why_size, "the port must be a number from 1 to 65535");
        return HERD_ERR_BAD_PARAM;
    }
    memset(address, 0, sizeof(*address));
    if (rest == uri + sizeof(scheme) - 1) {
        struct sockaddr_in in;

        memset(&in, 0, sizeof(in));
        in.sin_family = AF_INET;
        in.sin_port = htons(port);
        if (1 != inet_pton(AF_INET, host, &in.sin_addr)) {
            wire_why(why, why_size,
                     "\"%s\" is not a numeric IPv4 address (IPv6 goes in brackets; host names "
                     "are not resolved)",
                     host);
            return HERD_ERR_BAD_PARAM;
        }
        memcpy(address, &in, sizeof(in));
        *address_length = sizeof(in);
    } else {
        struct sockaddr_in6 in6;

        memset(&in6, 0, sizeof(in6));
        in6.sin6_family = AF_INET6;
        in6.sin6_port = htons(port);
        if (1 != inet_pton(AF_INET6, host, &in6.sin6_addr)) {
            wire_why(why, why_size, "\"%s\" is not a numeric IPv6 address", host);
            return HERD_ERR_BAD_PARAM;
        }
        memcpy(address, &in6, sizeof(in6));
        *address_length = sizeof(in6);
    }
    return HERD_SUCCESS;
}

int overlay_tcp_uri_format(const struct sockaddr *address, char *uri, size_t size)
{
    char text[INET6_ADDRSTRLEN + 16];
    int n;

    if (NULL == address || NULL == uri ||
        (AF_INET != address->sa_family && AF_INET6 != address->sa_family)) {
        return HERD_ERR_BAD_PARAM;
    }
    overlay_tcp_address_format(address, text, sizeof(text));
    n = snprintf(uri, size, "tcp://%s", text);
    if (n < 0 || (size_t) n >= size) {
        return HERD_ERR_BAD_PARAM;
    }
    return HERD_SUCCESS;
}

void overlay_tcp_address_format(const struct sockaddr *address, char *text, size_t size)
{
    char host[INET6_ADDRSTRLEN];

    if (NULL != address && AF_INET == address->sa_family) {
        struct sockaddr_in in;

        memcpy(&in, address, sizeof(in));
        if (NULL != inet_ntop(AF_INET, &in.sin_addr, host, sizeof(host))) {
            snprintf(text, size, "%s:%u", host, (unsigned) ntohs(in.sin_port));
            return;
        }
    } else if (NULL != address && AF_INET6 == address->sa_family) {
        struct sockaddr_in6 in6;

        memcpy(&in6, address, sizeof(in6));
        if (NULL != inet_ntop(AF_INET6, &in6.sin6_addr, host, sizeof(host))) {
            snprintf(text, size, "[%s]:%u", host, (unsigned) ntohs(in6.sin6_port));
            return;
        }
    }
    snprintf(text, size, "(unknown)");
}
