/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer harness for the overlay tcp wire format: frame headers (and the check of a header's
 * first bytes), every message decoder (HEARTBEAT included), a stream of frames through the
 * handshake states, and tcp:// URIs, from arbitrary bytes. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "orte/mca/overlay/tcp/overlay_tcp_wire.h"
#include "test/fuzz/fuzz.h"

static const uint8_t fuzz_secret[ORTE_OVERLAY_SECRET_BYTES] = {1, 2, 3, 4, 5, 6, 7, 8};

/* A failed decode leaves its output alone and says why; a successful one re-encodes to the
 * very bytes it came from (the encoding is canonical). */
static void fuzz_hello(const uint8_t *payload, size_t length)
{
    overlay_tcp_hello_t hello;
    uint8_t again[OVERLAY_TCP_MAX_HANDSHAKE_PAYLOAD];
    size_t again_length = 0;
    char why[256] = "";

    memset(&hello, FUZZ_BYTE, sizeof(hello));
    if (HERD_SUCCESS != overlay_tcp_hello_decode(payload, length, &hello, why, sizeof(why))) {
        FUZZ_CHECK(fuzz_all_bytes(&hello, sizeof(hello)));
        FUZZ_CHECK('\0' != why[0]);
        return;
    }
    FUZZ_CHECK(overlay_tcp_string_valid(hello.dvm_id, ORTE_OVERLAY_MAX_DVM_ID));
    FUZZ_CHECK(overlay_tcp_string_valid(hello.uri, OVERLAY_TCP_MAX_URI));
    FUZZ_CHECK(HERD_SUCCESS ==
               overlay_tcp_hello_encode(&hello, again, sizeof(again), &again_length));
    FUZZ_CHECK(again_length == length && 0 == memcmp(again, payload, length));
}

static void fuzz_small(const uint8_t *payload, size_t length)
{
    overlay_tcp_challenge_t challenge;
    overlay_tcp_response_t response;
    overlay_tcp_bye_t bye;
    overlay_tcp_heartbeat_t heartbeat;
    uint8_t again[128];
    size_t again_length = 0;

    memset(&challenge, FUZZ_BYTE, sizeof(challenge));
    if (HERD_SUCCESS == overlay_tcp_challenge_decode(payload, length, &challenge, NULL, 0)) {
        FUZZ_CHECK(HERD_SUCCESS ==
                   overlay_tcp_challenge_encode(&challenge, again, sizeof(again), &again_length));
        FUZZ_CHECK(again_length == length && 0 == memcmp(again, payload, length));
    } else {
        FUZZ_CHECK(fuzz_all_bytes(&challenge, sizeof(challenge)));
    }
    memset(&response, FUZZ_BYTE, sizeof(response));
    if (HERD_SUCCESS == overlay_tcp_response_decode(payload, length, &response, NULL, 0)) {
        FUZZ_CHECK(HERD_SUCCESS ==
                   overlay_tcp_response_encode(&response, again, sizeof(again), &again_length));
        FUZZ_CHECK(again_length == length && 0 == memcmp(again, payload, length));
    } else {
        FUZZ_CHECK(fuzz_all_bytes(&response, sizeof(response)));
    }
    memset(&bye, FUZZ_BYTE, sizeof(bye));
    if (HERD_SUCCESS == overlay_tcp_bye_decode(payload, length, &bye, NULL, 0)) {
        FUZZ_CHECK(0 != bye.reason);
        FUZZ_CHECK(HERD_SUCCESS ==
                   overlay_tcp_bye_encode(&bye, again, sizeof(again), &again_length));
        FUZZ_CHECK(again_length == length && 0 == memcmp(again, payload, length));
    } else {
        FUZZ_CHECK(fuzz_all_bytes(&bye, sizeof(bye)));
    }
    memset(&heartbeat, FUZZ_BYTE, sizeof(heartbeat));
    if (HERD_SUCCESS == overlay_tcp_heartbeat_decode(payload, length, &heartbeat, NULL, 0)) {
        FUZZ_CHECK(HERD_SUCCESS ==
                   overlay_tcp_heartbeat_encode(&heartbeat, again, sizeof(again), &again_length));
        FUZZ_CHECK(again_length == length && 0 == memcmp(again, payload, length));
    } else {
        FUZZ_CHECK(fuzz_all_bytes(&heartbeat, sizeof(heartbeat)));
    }
}

/* What a daemon judges from the first bytes of a header agrees with the whole header: a start
 * it refuses never begins a header that decodes, and every start of one that decodes passes. */
static void fuzz_header_start(const uint8_t *data, size_t size, size_t max_payload)
{
    overlay_tcp_header_t header;
    size_t whole = size < OVERLAY_TCP_HEADER_BYTES ? size : OVERLAY_TCP_HEADER_BYTES;
    bool decodes =
        size >= OVERLAY_TCP_HEADER_BYTES &&
        HERD_SUCCESS == overlay_tcp_header_decode(data, size, max_payload, &header, NULL, 0);
    bool refused = false;

    for (size_t cut = 0; cut < whole && cut < OVERLAY_TCP_HEADER_BYTES; cut++) {
        char why[256] = "";
        int rc = overlay_tcp_header_check_start(data, cut, max_payload, why, sizeof(why));

        if (HERD_SUCCESS != rc) {
            FUZZ_CHECK(HERD_ERR_UNPACK_FAILURE == rc || HERD_ERR_VERSION_MISMATCH == rc);
            FUZZ_CHECK('\0' != why[0]);
            refused = true;
        } else {
            /* once refused, a longer start cannot be taken back */
            FUZZ_CHECK(!refused);
        }
        FUZZ_CHECK(!(decodes && refused));
    }
}

/* The bytes as one connection's stream, the way a daemon reads it: header, limits, the type the
 * state allows, the payload decoder, the MAC checks; stop at the first refusal. */
static void fuzz_stream(const uint8_t *data, size_t size, size_t max_payload, uint32_t n,
                        bool acceptor)
{
    enum { WAIT_HELLO, WAIT_RESPONSE, WAIT_CHALLENGE, UP } state;
    uint8_t key[OVERLAY_TCP_KEY_BYTES];
    uint8_t nonce_local[OVERLAY_TCP_NONCE_BYTES] = {9};
    uint8_t nonce_remote[OVERLAY_TCP_NONCE_BYTES] = {0};
    char hello_uri[OVERLAY_TCP_MAX_URI + 1] = "";
    size_t pos = 0;

    FUZZ_CHECK(HERD_SUCCESS == overlay_tcp_derive_key(fuzz_secret, key));
    state = acceptor ? WAIT_HELLO : WAIT_CHALLENGE;
    while (size - pos >= OVERLAY_TCP_HEADER_BYTES) {
        overlay_tcp_header_t header;
        uint8_t again[OVERLAY_TCP_HEADER_BYTES];
        uint8_t mac[OVERLAY_TCP_MAC_BYTES];
        const uint8_t *payload;
        char why[256] = "";
        int rc;

        memset(&header, FUZZ_BYTE, sizeof(header));
        rc = overlay_tcp_header_decode(data + pos, size - pos, max_payload, &header, why,
                                       sizeof(why));
        if (HERD_SUCCESS != rc) {
            FUZZ_CHECK(HERD_ERR_UNPACK_FAILURE == rc || HERD_ERR_VERSION_MISMATCH == rc);
            FUZZ_CHECK(fuzz_all_bytes(&header, sizeof(header)));
            FUZZ_CHECK('\0' != why[0]);
            return;
        }
        overlay_tcp_header_encode(&header, again);
        FUZZ_CHECK(0 == memcmp(again, data + pos, sizeof(again)));
        FUZZ_CHECK(OVERLAY_TCP_MSG_DATA == header.type ? header.length <= max_payload
                                                       : header.length <= 1024);
        if (size - pos - OVERLAY_TCP_HEADER_BYTES < header.length) {
            return; /* a daemon would wait for more */
        }
        payload = data + pos + OVERLAY_TCP_HEADER_BYTES;
        pos += OVERLAY_TCP_HEADER_BYTES + header.length;

        switch (state) {
        case WAIT_HELLO: {
            overlay_tcp_hello_t hello;
            overlay_tcp_challenge_t challenge;

            if (OVERLAY_TCP_MSG_HELLO != header.type ||
                HERD_SUCCESS != overlay_tcp_hello_decode(payload, header.length, &hello, NULL, 0)) {
                return;
            }
            memcpy(nonce_remote, hello.nonce, sizeof(nonce_remote));
            memcpy(hello_uri, hello.uri, sizeof(hello_uri));
            overlay_tcp_challenge_mac(key, nonce_remote, nonce_local, header.dst, header.src,
                                      hello.num_daemons, hello.radix, hello.dvm_id,
                                      hello.heartbeat_ms, challenge.mac);
            state = WAIT_RESPONSE;
            break;
        }
        case WAIT_RESPONSE: {
            overlay_tcp_response_t response;

            if (OVERLAY_TCP_MSG_RESPONSE != header.type ||
                HERD_SUCCESS !=
                    overlay_tcp_response_decode(payload, header.length, &response, NULL, 0)) {
                return;
            }
            overlay_tcp_response_mac(key, nonce_local, nonce_remote, header.src, header.dst, n, 2,
                                     "fuzz", hello_uri, 30000, mac);
            /* the fuzzer cannot forge a MAC; carry on as if it had, to reach the DATA path */
            (void) overlay_tcp_mac_equal(mac, response.mac);
            state = UP;
            break;
        }
        case WAIT_CHALLENGE: {
            overlay_tcp_challenge_t challenge;

            if (OVERLAY_TCP_MSG_CHALLENGE != header.type ||
                HERD_SUCCESS !=
                    overlay_tcp_challenge_decode(payload, header.length, &challenge, NULL, 0)) {
                return;
            }
            overlay_tcp_challenge_mac(key, nonce_local, challenge.nonce, header.src, header.dst, n,
                                      2, "fuzz", challenge.heartbeat_ms, mac);
            (void) overlay_tcp_mac_equal(mac, challenge.mac);
            state = UP;
            break;
        }
        case UP:
            if (OVERLAY_TCP_MSG_DATA == header.type) {
                overlay_tcp_data_t message;

                memset(&message, FUZZ_BYTE, sizeof(message));
                if (HERD_SUCCESS !=
                    overlay_tcp_data_decode(&header, payload, n, &message, NULL, 0)) {
                    FUZZ_CHECK(fuzz_all_bytes(&message, sizeof(message)));
                    return;
                }
                FUZZ_CHECK(message.src < n && message.dst < n);
                FUZZ_CHECK(message.length == header.length && message.payload == payload);
            } else if (OVERLAY_TCP_MSG_HEARTBEAT == header.type) {
                overlay_tcp_heartbeat_t heartbeat;

                FUZZ_CHECK(4 == header.length);
                FUZZ_CHECK(HERD_SUCCESS == overlay_tcp_heartbeat_decode(payload, header.length,
                                                                        &heartbeat, NULL, 0));
            } else if (OVERLAY_TCP_MSG_BYE == header.type) {
                overlay_tcp_bye_t bye;

                (void) overlay_tcp_bye_decode(payload, header.length, &bye, NULL, 0);
                return;
            } else {
                return;
            }
            break;
        }
    }
}

static void fuzz_uri(const uint8_t *data, size_t size)
{
    char text[512];
    char formatted[OVERLAY_TCP_MAX_URI + 1];
    struct sockaddr_storage address;
    struct sockaddr_storage again;
    socklen_t length = 0;
    socklen_t again_length = 0;
    char why[256] = "";

    if (size >= sizeof(text)) {
        size = sizeof(text) - 1;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    if (HERD_SUCCESS != overlay_tcp_uri_parse(text, &address, &length, why, sizeof(why))) {
        FUZZ_CHECK('\0' != why[0]);
        return;
    }
    /* what a daemon advertises parses back to the same address */
    FUZZ_CHECK(HERD_SUCCESS ==
               overlay_tcp_uri_format((struct sockaddr *) &address, formatted, sizeof(formatted)));
    FUZZ_CHECK(HERD_SUCCESS == overlay_tcp_uri_parse(formatted, &again, &again_length, NULL, 0));
    FUZZ_CHECK(length == again_length && 0 == memcmp(&address, &again, length));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool ready;
    size_t max_payload;
    uint32_t n;

    if (!ready) {
        FUZZ_CHECK(sodium_init() >= 0);
        ready = true;
    }
    if (size < 2) {
        return 0;
    }
    /* byte 0 picks the limits, the rest is what a peer sent */
    max_payload = (size_t) 1 << (data[0] % 28);
    n = 1u + data[1];
    data += 2;
    size -= 2;

    fuzz_header_start(data, size, max_payload);
    fuzz_stream(data, size, max_payload, n, true);
    fuzz_stream(data, size, max_payload, n, false);
    fuzz_hello(data, size);
    fuzz_small(data, size);
    fuzz_uri(data, size);
    return 0;
}
