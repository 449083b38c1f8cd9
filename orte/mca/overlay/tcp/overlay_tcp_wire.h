/* SPDX-License-Identifier: BSD-3-Clause */
/* overlay tcp wire format: frame header, one encoder and one decoder per message type, the
 * handshake MACs and tcp:// URIs. Pure functions (libc + libsodium), so they can be fuzzed. */
#ifndef ORTE_MCA_OVERLAY_TCP_WIRE_H
#define ORTE_MCA_OVERLAY_TCP_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "opal/status.h"
#include "orte/mca/overlay/overlay.h"
#include "orte/types.h"

/* "HRDO" in network byte order at the start of every frame. */
#define OVERLAY_TCP_MAGIC 0x4852444fu
/* 2: heartbeats (HEARTBEAT frames, each side's timeout in HELLO and CHALLENGE). */
#define OVERLAY_TCP_PROTOCOL_VERSION 2u
#define OVERLAY_TCP_HEADER_BYTES     24u

#define OVERLAY_TCP_NONCE_BYTES 32u
#define OVERLAY_TCP_MAC_BYTES   32u /* crypto_auth_BYTES (HMAC-SHA-512-256) */
#define OVERLAY_TCP_KEY_BYTES   32u /* crypto_auth_KEYBYTES */

/* Longest URI a daemon advertises: "tcp://[v6]:port" is far shorter. */
#define OVERLAY_TCP_MAX_URI 255u

/* Handshake frames come from peers not yet authenticated, so they are held to a small size
 * whatever overlay_tcp_max_message_size says: a stranger must not make a daemon allocate. */
#define OVERLAY_TCP_MAX_HANDSHAKE_PAYLOAD 1024u

/* Smallest and largest allowed overlay_tcp_max_message_size: the length field is 32 bits. */
#define OVERLAY_TCP_MIN_MESSAGE_SIZE 1024u
#define OVERLAY_TCP_MAX_MESSAGE_SIZE ((size_t) UINT32_MAX - OVERLAY_TCP_HEADER_BYTES)

typedef enum {
    OVERLAY_TCP_MSG_HELLO = 1,     /* connector -> acceptor: who I am, nonce_c */
    OVERLAY_TCP_MSG_CHALLENGE = 2, /* acceptor -> connector: nonce_s and the acceptor's proof */
    OVERLAY_TCP_MSG_RESPONSE = 3,  /* connector -> acceptor: the connector's proof */
    OVERLAY_TCP_MSG_DATA = 4,      /* a routed message */
    OVERLAY_TCP_MSG_BYE = 5,       /* orderly close */
    OVERLAY_TCP_MSG_HEARTBEAT = 6, /* "still here", on a connection with nothing else to send */
} overlay_tcp_msg_type_t;

/* Why a peer says goodbye (BYE payload). */
#define OVERLAY_TCP_BYE_FINALIZE 1u

/* The fixed frame header, in host byte order once decoded. On the wire, big-endian:
 *   0 magic u32 | 4 version u8 | 5 type u8 | 6 flags u16 | 8 tag u16 | 10 reserved u16 |
 *   12 src u32 | 16 dst u32 | 20 payload length u32 */
typedef struct {
    uint8_t version;
    uint8_t type;
    uint16_t flags; /* none defined in version 1: must be 0 */
    uint16_t tag;
    orte_vpid_t src;
    orte_vpid_t dst;
    uint32_t length;
} overlay_tcp_header_t;

typedef struct {
    uint8_t nonce[OVERLAY_TCP_NONCE_BYTES];
    uint32_t num_daemons;
    uint32_t radix;
    uint32_t heartbeat_ms; /* the connector's heartbeat timeout; 0: off */
    char dvm_id[ORTE_OVERLAY_MAX_DVM_ID + 1];
    char uri[OVERLAY_TCP_MAX_URI + 1]; /* may be empty: a leaf need not listen */
} overlay_tcp_hello_t;

typedef struct {
    uint8_t nonce[OVERLAY_TCP_NONCE_BYTES];
    uint32_t heartbeat_ms; /* the acceptor's heartbeat timeout; 0: off */
    uint8_t mac[OVERLAY_TCP_MAC_BYTES];
} overlay_tcp_challenge_t;

typedef struct {
    uint8_t mac[OVERLAY_TCP_MAC_BYTES];
} overlay_tcp_response_t;

typedef struct {
    uint32_t reason;
} overlay_tcp_bye_t;

/* The sender's heartbeat timeout, so that a neighbour configured otherwise learns it. */
typedef struct {
    uint32_t timeout_ms;
} overlay_tcp_heartbeat_t;

/* A DATA frame, checked against the tree: payload points into the caller's buffer. */
typedef struct {
    orte_vpid_t src;
    orte_vpid_t dst;
    uint16_t tag;
    const uint8_t *payload;
    size_t length;
} overlay_tcp_data_t;

/* Decoders return HERD_SUCCESS; HERD_ERR_UNPACK_READ_PAST_END when the bytes end before the
 * thing does (the header decoder: read more); HERD_ERR_VERSION_MISMATCH for another protocol
 * version; HERD_ERR_UNPACK_FAILURE for anything malformed. On failure they write a short
 * reason into why (when not NULL) and leave their output untouched. */

void overlay_tcp_header_encode(const overlay_tcp_header_t *header,
                               uint8_t out[OVERLAY_TCP_HEADER_BYTES]);
/* Checks magic, version, type, flags, reserved bits and the length limit of the type (DATA:
 * max_payload; handshake types: OVERLAY_TCP_MAX_HANDSHAKE_PAYLOAD; BYE and HEARTBEAT: exactly
 * 4). */
int overlay_tcp_header_decode(const uint8_t *bytes, size_t size, size_t max_payload,
                              overlay_tcp_header_t *header, char *why, size_t why_size);
/* The first size bytes of a header that has not arrived whole (size < the header): whether they
 * can still start a header that overlay_tcp_header_decode() accepts. HERD_SUCCESS if some
 * ending of them would; otherwise the status and reason the whole header would get, so a
 * stranger is refused at its first wrong byte, not once it sent 24. */
int overlay_tcp_header_check_start(const uint8_t *bytes, size_t size, size_t max_payload, char *why,
                                   size_t why_size);

/* Encoders write the payload only (the caller adds the header) and return HERD_ERR_BAD_PARAM if
 * the message would not decode (strings too long, bad characters) or does not fit. */
int overlay_tcp_hello_encode(const overlay_tcp_hello_t *hello, uint8_t *out, size_t out_size,
                             size_t *length);
int overlay_tcp_hello_decode(const uint8_t *payload, size_t length, overlay_tcp_hello_t *hello,
                             char *why, size_t why_size);
int overlay_tcp_challenge_encode(const overlay_tcp_challenge_t *challenge, uint8_t *out,
                                 size_t out_size, size_t *length);
int overlay_tcp_challenge_decode(const uint8_t *payload, size_t length,
                                 overlay_tcp_challenge_t *challenge, char *why, size_t why_size);
int overlay_tcp_response_encode(const overlay_tcp_response_t *response, uint8_t *out,
                                size_t out_size, size_t *length);
int overlay_tcp_response_decode(const uint8_t *payload, size_t length,
                                overlay_tcp_response_t *response, char *why, size_t why_size);
int overlay_tcp_bye_encode(const overlay_tcp_bye_t *bye, uint8_t *out, size_t out_size,
                           size_t *length);
int overlay_tcp_bye_decode(const uint8_t *payload, size_t length, overlay_tcp_bye_t *bye, char *why,
                           size_t why_size);
int overlay_tcp_heartbeat_encode(const overlay_tcp_heartbeat_t *heartbeat, uint8_t *out,
                                 size_t out_size, size_t *length);
int overlay_tcp_heartbeat_decode(const uint8_t *payload, size_t length,
                                 overlay_tcp_heartbeat_t *heartbeat, char *why, size_t why_size);
/* Checks a DATA frame's vpids against a tree of num_daemons (routing is checked by the caller,
 * who knows which neighbour it came from). */
int overlay_tcp_data_decode(const overlay_tcp_header_t *header, const uint8_t *payload,
                            uint32_t num_daemons, overlay_tcp_data_t *data, char *why,
                            size_t why_size);

/* Whether s is a string the handshake may carry: printable ASCII, at most max_length bytes. */
bool overlay_tcp_string_valid(const char *s, size_t max_length);
const char *overlay_tcp_msg_type_name(unsigned type);

/* The connection key: a subkey of the DVM secret for this protocol only, so no other use of
 * the secret can produce a MAC the overlay accepts. */
int overlay_tcp_derive_key(const uint8_t secret[ORTE_OVERLAY_SECRET_BYTES],
                           uint8_t key[OVERLAY_TCP_KEY_BYTES]);
/* The acceptor's proof: MAC over a labelled transcript of both nonces, both vpids, the tree
 * shape, the DVM id and the acceptor's heartbeat timeout (what its CHALLENGE says). */
void overlay_tcp_challenge_mac(const uint8_t key[OVERLAY_TCP_KEY_BYTES],
                               const uint8_t nonce_c[OVERLAY_TCP_NONCE_BYTES],
                               const uint8_t nonce_s[OVERLAY_TCP_NONCE_BYTES], orte_vpid_t acceptor,
                               orte_vpid_t connector, uint32_t num_daemons, uint32_t radix,
                               const char *dvm_id, uint32_t heartbeat_ms,
                               uint8_t mac[OVERLAY_TCP_MAC_BYTES]);
/* The connector's proof: another label, nonces the other way round, its advertised URI and
 * its heartbeat timeout (what its HELLO said). */
void overlay_tcp_response_mac(const uint8_t key[OVERLAY_TCP_KEY_BYTES],
                              const uint8_t nonce_s[OVERLAY_TCP_NONCE_BYTES],
                              const uint8_t nonce_c[OVERLAY_TCP_NONCE_BYTES], orte_vpid_t connector,
                              orte_vpid_t acceptor, uint32_t num_daemons, uint32_t radix,
                              const char *dvm_id, const char *uri, uint32_t heartbeat_ms,
                              uint8_t mac[OVERLAY_TCP_MAC_BYTES]);
/* Constant-time comparison. */
bool overlay_tcp_mac_equal(const uint8_t a[OVERLAY_TCP_MAC_BYTES],
                           const uint8_t b[OVERLAY_TCP_MAC_BYTES]);

/* "tcp://10.0.0.1:40123" or "tcp://[fd00::1]:40123": numeric hosts only (a daemon must never
 * block its event loop on DNS), port 1..65535. HERD_ERR_BAD_PARAM with a reason otherwise. */
int overlay_tcp_uri_parse(const char *uri, struct sockaddr_storage *address,
                          socklen_t *address_length, char *why, size_t why_size);
int overlay_tcp_uri_format(const struct sockaddr *address, char *uri, size_t size);
/* "10.0.0.1:40123" or "[fd00::1]:40123" for messages; "(unknown)" if it cannot be shown. */
void overlay_tcp_address_format(const struct sockaddr *address, char *text, size_t size);

#endif /* ORTE_MCA_OVERLAY_TCP_WIRE_H */
