/* SPDX-License-Identifier: BSD-3-Clause */
/* The overlay framework and its tcp component: the wire codecs (round trips, every malformed
 * header and payload), MACs, URIs and interface choice; the handshake with the right and wrong
 * secret, DVM id, garbage and silence; routing over trees of 7 and 20 daemons; large messages;
 * lost neighbours (finalized, killed with -9, misbehaving); no descriptor left open. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "opal/event/event.h"
#include "opal/mca/base/mca_var.h"
#include "support/capture.h"
#include "orte/mca/overlay/overlay.h"
#include "orte/util/radix.h"

/* The component's wire format and interface choice are pure functions: test them directly. */
#include "orte/mca/overlay/tcp/overlay_tcp_if.c"
#include "orte/mca/overlay/tcp/overlay_tcp_sodium.c"
#include "orte/mca/overlay/tcp/overlay_tcp_wire.c"

/* Generous: only a hang guard, never a timing assertion. */
#define HANG_GUARD_SECONDS 300
#define TEST_TAG           42
#define OTHER_TAG          43

static const uint8_t test_secret[ORTE_OVERLAY_SECRET_BYTES] = {
    0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe,
    0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00,
};
static uint8_t wrong_secret[ORTE_OVERLAY_SECRET_BYTES];

static const orte_overlay_module_t *module;
static int fds_at_setup;

/* ------------------------------------------------------------------------------------------ */
/* helpers: descriptors, stderr */

static int count_fds(void)
{
    DIR *dir = opendir("/proc/self/fd");
    struct dirent *entry;
    int count = 0;

    assert_non_null(dir);
    while (NULL != (entry = readdir(dir))) {
        if ('.' != entry->d_name[0]) {
            count++;
        }
    }
    closedir(dir);
    return count;
}

static herd_test_capture_t stderr_capture;

/* ------------------------------------------------------------------------------------------ */
/* helpers: overlay endpoints, each on its own event base, all driven from the test */

typedef struct {
    orte_vpid_t src;
    uint16_t tag;
    size_t length;
    uint8_t *data;
} got_t;

typedef struct {
    orte_vpid_t peer;
    int status;
    char reason[512];
} lost_t;

#define MAX_LOST 16

typedef struct {
    opal_event_base_t *base;
    opal_event_t *tick; /* a zero timer: makes one loop round return at once */
    orte_overlay_t *overlay;
    char *uri;
    orte_vpid_t vpid;
    got_t *got;
    size_t num_got;
    size_t cap_got;
    lost_t lost[MAX_LOST];
    size_t num_lost;
    bool finalize_on_recv;
} node_t;

static void on_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                    size_t length, void *arg)
{
    node_t *node = arg;
    got_t *got;

    assert_ptr_equal(overlay, node->overlay);
    if (node->num_got == node->cap_got) {
        node->cap_got = 0 == node->cap_got ? 64 : 2 * node->cap_got;
        node->got = realloc(node->got, node->cap_got * sizeof(*node->got));
        assert_non_null(node->got);
    }
    got = &node->got[node->num_got++];
    got->src = src;
    got->tag = tag;
    got->length = length;
    got->data = malloc(length > 0 ? length : 1);
    assert_non_null(got->data);
    if (length > 0) {
        memcpy(got->data, data, length);
    }
    if (node->finalize_on_recv) {
        module->finalize(overlay);
        node->overlay = NULL;
    }
}

static void on_lost(orte_overlay_t *overlay, orte_vpid_t peer, int status, const char *reason,
                    void *arg)
{
    node_t *node = arg;

    assert_true(node->num_lost < MAX_LOST);
    node->lost[node->num_lost].peer = peer;
    node->lost[node->num_lost].status = status;
    snprintf(node->lost[node->num_lost].reason, sizeof(node->lost[0].reason), "%s", reason);
    node->num_lost++;
}

static void tick_cb(int fd, short what, void *arg)
{
}

static orte_overlay_config_t make_config(opal_event_base_t *base, orte_vpid_t vpid, uint32_t n,
                                         uint32_t radix, const char *dvm_id, const uint8_t *secret)
{
    orte_overlay_config_t config = {
        .base = base,
        .vpid = vpid,
        .num_daemons = n,
        .radix = radix,
        .dvm_id = dvm_id,
        .if_include = "127.0.0.1",
    };

    memcpy(config.secret, secret, ORTE_OVERLAY_SECRET_BYTES);
    return config;
}

static node_t *node_new_with(orte_vpid_t vpid, uint32_t n, uint32_t radix, const char *dvm_id,
                             const uint8_t *secret, bool listen)
{
    node_t *node = calloc(1, sizeof(*node));
    orte_overlay_config_t config;

    assert_non_null(node);
    node->vpid = vpid;
    assert_int_equal(opal_event_base_create(&node->base), HERD_SUCCESS);
    assert_int_equal(opal_event_timer_create(node->base, false, tick_cb, node, &node->tick),
                     HERD_SUCCESS);
    config = make_config(node->base, vpid, n, radix, dvm_id, secret);
    assert_int_equal(module->init(&config, &node->overlay), HERD_SUCCESS);
    assert_int_equal(module->register_recv(node->overlay, TEST_TAG, on_recv, node), HERD_SUCCESS);
    module->set_lost_callback(node->overlay, on_lost, node);
    if (listen) {
        assert_int_equal(module->listen(node->overlay, &node->uri), HERD_SUCCESS);
        assert_non_null(node->uri);
        assert_int_equal(strncmp(node->uri, "tcp://127.0.0.1:", 16), 0);
    }
    return node;
}

static node_t *node_new(orte_vpid_t vpid, uint32_t n, uint32_t radix)
{
    return node_new_with(vpid, n, radix, "test-dvm", test_secret, true);
}

static void node_free(node_t *node)
{
    if (NULL == node) {
        return;
    }
    if (NULL != node->overlay) {
        module->finalize(node->overlay);
    }
    for (size_t i = 0; i < node->num_got; i++) {
        free(node->got[i].data);
    }
    free(node->got);
    opal_event_free(node->tick);
    opal_event_base_free(node->base);
    free(node->uri);
    free(node);
}

static orte_overlay_stats_t node_stats(const node_t *node)
{
    orte_overlay_stats_t stats;

    memset(&stats, 0xff, sizeof(stats));
    module->get_stats(node->overlay, &stats);
    return stats;
}

/* One round of each node's loop, without blocking. */
static void pump(node_t *const *nodes, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        struct timeval now = {0, 0};

        if (NULL == nodes[i]) {
            continue;
        }
        assert_int_equal(opal_event_add(nodes[i]->tick, &now), HERD_SUCCESS);
        assert_int_equal(opal_event_base_loop(nodes[i]->base, true), HERD_SUCCESS);
    }
}

typedef bool (*done_fn_t)(void *arg);

static void run_until(node_t *const *nodes, size_t count, done_fn_t done, void *arg,
                      const char *what)
{
    time_t deadline = time(NULL) + HANG_GUARD_SECONDS;

    while (!done(arg)) {
        if (time(NULL) > deadline) {
            fail_msg("gave up waiting for %s", what);
        }
        pump(nodes, count);
    }
}

static bool node_has_lost(void *arg)
{
    return ((node_t *) arg)->num_lost > 0;
}

static bool node_has_got(void *arg)
{
    return ((node_t *) arg)->num_got > 0;
}

typedef struct {
    node_t *node;
    uint64_t count;
} stat_wait_t;

static bool node_rejected(void *arg)
{
    stat_wait_t *wait = arg;

    return node_stats(wait->node).peers_rejected >= wait->count;
}

static bool node_up(void *arg)
{
    stat_wait_t *wait = arg;

    return node_stats(wait->node).neighbours_up >= wait->count;
}

static bool node_protocol_errors(void *arg)
{
    stat_wait_t *wait = arg;

    return node_stats(wait->node).protocol_errors >= wait->count;
}

/* ------------------------------------------------------------------------------------------ */
/* helpers: raw peers that speak (or abuse) the protocol by hand */

static int raw_connect(const char *uri)
{
    struct sockaddr_storage address;
    socklen_t length = 0;
    int fd;

    assert_int_equal(overlay_tcp_uri_parse(uri, &address, &length, NULL, 0), HERD_SUCCESS);
    fd = socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *) &address, length), 0);
    return fd;
}

/* A listening socket on 127.0.0.1 and its URI. */
static int raw_listener(bool bind_any, char *uri, size_t size)
{
    struct sockaddr_in in;
    socklen_t length = sizeof(in);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    assert_true(fd >= 0);
    memset(&in, 0, sizeof(in));
    in.sin_family = AF_INET;
    in.sin_addr.s_addr = htonl(bind_any ? INADDR_ANY : INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *) &in, sizeof(in)), 0);
    assert_int_equal(listen(fd, 16), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *) &in, &length), 0);
    snprintf(uri, size, "tcp://127.0.0.1:%u", (unsigned) ntohs(in.sin_port));
    return fd;
}

static void raw_write(int fd, const void *data, size_t length)
{
    const uint8_t *p = data;

    while (length > 0) {
        ssize_t n = send(fd, p, length, MSG_NOSIGNAL);

        if (n < 0 && EINTR == errno) {
            continue;
        }
        assert_true(n > 0);
        p += n;
        length -= (size_t) n;
    }
}

static void raw_send_frame(int fd, uint8_t type, uint16_t tag, orte_vpid_t src, orte_vpid_t dst,
                           const void *payload, size_t length)
{
    overlay_tcp_header_t header = {
        .version = OVERLAY_TCP_PROTOCOL_VERSION,
        .type = type,
        .tag = tag,
        .src = src,
        .dst = dst,
        .length = (uint32_t) length,
    };
    uint8_t bytes[OVERLAY_TCP_HEADER_BYTES];

    overlay_tcp_header_encode(&header, bytes);
    raw_write(fd, bytes, sizeof(bytes));
    if (length > 0) {
        raw_write(fd, payload, length);
    }
}

/* Read exactly length bytes while the nodes run; false at end of stream. */
static bool raw_read(node_t *const *nodes, size_t count, int fd, void *buffer, size_t length)
{
    time_t deadline = time(NULL) + HANG_GUARD_SECONDS;
    uint8_t *p = buffer;
    size_t got = 0;

    while (got < length) {
        ssize_t n = recv(fd, p + got, length - got, MSG_DONTWAIT);

        if (n > 0) {
            got += (size_t) n;
            continue;
        }
        if (0 == n || (n < 0 && ECONNRESET == errno)) {
            return false;
        }
        assert_true(EAGAIN == errno || EWOULDBLOCK == errno || EINTR == errno);
        if (time(NULL) > deadline) {
            fail_msg("gave up waiting for bytes from the overlay");
        }
        pump(nodes, count);
    }
    return true;
}

static bool raw_read_frame(node_t *const *nodes, size_t count, int fd, overlay_tcp_header_t *header,
                           uint8_t *payload, size_t size)
{
    uint8_t bytes[OVERLAY_TCP_HEADER_BYTES];

    if (!raw_read(nodes, count, fd, bytes, sizeof(bytes))) {
        return false;
    }
    assert_int_equal(overlay_tcp_header_decode(bytes, sizeof(bytes), OVERLAY_TCP_MAX_MESSAGE_SIZE,
                                               header, NULL, 0),
                     HERD_SUCCESS);
    assert_true(header->length <= size);
    return raw_read(nodes, count, fd, payload, header->length);
}

/* The node closes the raw peer's connection. */
static void raw_expect_close(node_t *const *nodes, size_t count, int fd)
{
    uint8_t byte;

    while (raw_read(nodes, count, fd, &byte, 1)) {
        /* whatever it still sent is of no interest */
    }
    close(fd);
}

static void raw_hello(int fd, orte_vpid_t me, orte_vpid_t parent, uint32_t n, uint32_t radix,
                      const char *dvm_id, const char *uri, uint8_t nonce[OVERLAY_TCP_NONCE_BYTES])
{
    overlay_tcp_hello_t hello;
    uint8_t payload[OVERLAY_TCP_MAX_HANDSHAKE_PAYLOAD];
    size_t length = 0;

    memset(&hello, 0, sizeof(hello));
    randombytes_buf(nonce, OVERLAY_TCP_NONCE_BYTES);
    memcpy(hello.nonce, nonce, OVERLAY_TCP_NONCE_BYTES);
    hello.num_daemons = n;
    hello.radix = radix;
    snprintf(hello.dvm_id, sizeof(hello.dvm_id), "%s", dvm_id);
    snprintf(hello.uri, sizeof(hello.uri), "%s", uri);
    assert_int_equal(overlay_tcp_hello_encode(&hello, payload, sizeof(payload), &length),
                     HERD_SUCCESS);
    raw_send_frame(fd, OVERLAY_TCP_MSG_HELLO, 0, me, parent, payload, length);
}

/* A hand-made child: does the whole handshake with secret and returns the socket. */
static int raw_child(node_t *const *nodes, size_t count, const char *uri, orte_vpid_t me,
                     orte_vpid_t parent, uint32_t n, uint32_t radix, const uint8_t *secret)
{
    uint8_t key[OVERLAY_TCP_KEY_BYTES];
    uint8_t nonce_c[OVERLAY_TCP_NONCE_BYTES];
    uint8_t payload[OVERLAY_TCP_MAX_HANDSHAKE_PAYLOAD];
    uint8_t expected[OVERLAY_TCP_MAC_BYTES];
    overlay_tcp_header_t header;
    overlay_tcp_challenge_t challenge;
    overlay_tcp_response_t response;
    int fd = raw_connect(uri);

    assert_int_equal(overlay_tcp_derive_key(secret, key), HERD_SUCCESS);
    raw_hello(fd, me, parent, n, radix, "test-dvm", "", nonce_c);
    assert_true(raw_read_frame(nodes, count, fd, &header, payload, sizeof(payload)));
    assert_int_equal(header.type, OVERLAY_TCP_MSG_CHALLENGE);
    assert_int_equal(overlay_tcp_challenge_decode(payload, header.length, &challenge, NULL, 0),
                     HERD_SUCCESS);
    overlay_tcp_challenge_mac(key, nonce_c, challenge.nonce, parent, me, n, radix, "test-dvm",
                              challenge.heartbeat_ms, expected);
    /* a child with the wrong secret cannot check the parent, and answers anyway */
    if (0 == memcmp(secret, test_secret, sizeof(test_secret))) {
        assert_true(overlay_tcp_mac_equal(expected, challenge.mac));
    }
    overlay_tcp_response_mac(key, challenge.nonce, nonce_c, me, parent, n, radix, "test-dvm", "", 0,
                             response.mac);
    raw_send_frame(fd, OVERLAY_TCP_MSG_RESPONSE, 0, me, parent, response.mac, sizeof(response.mac));
    return fd;
}

/* ------------------------------------------------------------------------------------------ */
/* setup */

static const char *const test_variables[] = {
    "HERD_MCA_overlay",
    "HERD_MCA_overlay_tcp_if_include",
    "HERD_MCA_overlay_tcp_if_exclude",
    "HERD_MCA_overlay_tcp_max_message_size",
    "HERD_MCA_overlay_tcp_handshake_timeout",
    "HERD_MCA_overlay_base_handshake_timeout",
    "HERD_MCA_overlay_base_verbose",
    "HERD_MCA_overlay_tcp_priority",
    NULL,
};

static void unset_variables(void)
{
    for (size_t i = 0; NULL != test_variables[i]; i++) {
        unsetenv(test_variables[i]);
    }
}

static void open_overlay(void)
{
    assert_int_equal(orte_overlay_base_open(), HERD_SUCCESS);
    module = orte_overlay_base_module();
    assert_non_null(module);
}

/* Refused strangers are said at overlay_base_verbose only (an endpoint's first refusal at 1,
 * the others at 5): the tests that read why reopen the framework with it. */
static void open_overlay_verbose(const char *level)
{
    orte_overlay_base_close();
    setenv("HERD_MCA_overlay_base_verbose", level, 1);
    open_overlay();
}

static int setup(void **state)
{
    unset_variables();
    fds_at_setup = count_fds();
    open_overlay();
    return 0;
}

static int teardown(void **state)
{
    orte_overlay_base_close();
    module = NULL;
    unset_variables();
    /* every test must leave no socket, event base or file behind */
    assert_int_equal(count_fds(), fds_at_setup);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* wire format */

static void test_header_round_trip(void **state)
{
    static const uint8_t types[] = {OVERLAY_TCP_MSG_HELLO, OVERLAY_TCP_MSG_CHALLENGE,
                                    OVERLAY_TCP_MSG_RESPONSE, OVERLAY_TCP_MSG_DATA,
                                    OVERLAY_TCP_MSG_BYE};
    uint8_t bytes[OVERLAY_TCP_HEADER_BYTES];

    for (size_t i = 0; i < sizeof(types); i++) {
        overlay_tcp_header_t in = {
            .version = OVERLAY_TCP_PROTOCOL_VERSION,
            .type = types[i],
            .tag = OVERLAY_TCP_MSG_DATA == types[i] ? 0xbeef : 0,
            .src = 0xfffffffeu,
            .dst = 7,
            .length = OVERLAY_TCP_MSG_BYE == types[i] ? 4 : 1000,
        };
        overlay_tcp_header_t out;

        overlay_tcp_header_encode(&in, bytes);
        /* network byte order, magic first */
        assert_int_equal(bytes[0], 'H');
        assert_int_equal(bytes[3], 'O');
        assert_int_equal(bytes[23], in.length & 0xff);
        assert_int_equal(overlay_tcp_header_decode(bytes, sizeof(bytes), 1000, &out, NULL, 0),
                         HERD_SUCCESS);
        assert_int_equal(out.version, in.version);
        assert_int_equal(out.type, in.type);
        assert_int_equal(out.flags, 0);
        assert_int_equal(out.tag, in.tag);
        assert_int_equal(out.src, in.src);
        assert_int_equal(out.dst, in.dst);
        assert_int_equal(out.length, in.length);
    }
    /* a DATA frame of exactly the limit, and an empty one */
    overlay_tcp_header_t data = {
        .version = OVERLAY_TCP_PROTOCOL_VERSION, .type = OVERLAY_TCP_MSG_DATA, .length = 5000};
    overlay_tcp_header_t out;

    overlay_tcp_header_encode(&data, bytes);
    assert_int_equal(overlay_tcp_header_decode(bytes, sizeof(bytes), 5000, &out, NULL, 0),
                     HERD_SUCCESS);
    data.length = 0;
    overlay_tcp_header_encode(&data, bytes);
    assert_int_equal(overlay_tcp_header_decode(bytes, sizeof(bytes), 5000, &out, NULL, 0),
                     HERD_SUCCESS);
    assert_int_equal(out.length, 0);
}

/* Decode must fail with status and leave the output alone; why must say something. */
static void expect_bad_header(const uint8_t *bytes, size_t size, size_t max, int status,
                              const char *why_part)
{
    overlay_tcp_header_t out;
    overlay_tcp_header_t untouched;
    char why[256] = "";

    memset(&out, 0xa5, sizeof(out));
    memcpy(&untouched, &out, sizeof(out));
    assert_int_equal(overlay_tcp_header_decode(bytes, size, max, &out, why, sizeof(why)), status);
    assert_memory_equal(&out, &untouched, sizeof(out));
    assert_contains(why, why_part);
}

static void test_header_malformed(void **state)
{
    overlay_tcp_header_t good = {.version = OVERLAY_TCP_PROTOCOL_VERSION,
                                 .type = OVERLAY_TCP_MSG_DATA,
                                 .tag = 3,
                                 .src = 1,
                                 .dst = 2,
                                 .length = 100};
    uint8_t valid[OVERLAY_TCP_HEADER_BYTES];
    uint8_t bytes[OVERLAY_TCP_HEADER_BYTES];
    overlay_tcp_header_t out;

    overlay_tcp_header_encode(&good, valid);
    /* every truncation asks for more */
    for (size_t size = 0; size < OVERLAY_TCP_HEADER_BYTES; size++) {
        expect_bad_header(valid, size, 1000, HERD_ERR_UNPACK_READ_PAST_END, "cut short");
    }
    expect_bad_header(NULL, 0, 1000, HERD_ERR_UNPACK_READ_PAST_END, "cut short");
    /* each magic byte */
    for (size_t i = 0; i < 4; i++) {
        memcpy(bytes, valid, sizeof(bytes));
        bytes[i] ^= 0x20;
        expect_bad_header(bytes, sizeof(bytes), 1000, HERD_ERR_UNPACK_FAILURE, "magic");
    }
    /* other versions */
    static const uint8_t versions[] = {0, 1, 3, 255}; /* 1: before heartbeats */
    for (size_t i = 0; i < sizeof(versions); i++) {
        memcpy(bytes, valid, sizeof(bytes));
        bytes[4] = versions[i];
        expect_bad_header(bytes, sizeof(bytes), 1000, HERD_ERR_VERSION_MISMATCH,
                          "protocol version");
    }
    /* unknown types */
    static const uint8_t types[] = {0, 7, 8, 128, 255};
    for (size_t i = 0; i < sizeof(types); i++) {
        memcpy(bytes, valid, sizeof(bytes));
        bytes[5] = types[i];
        expect_bad_header(bytes, sizeof(bytes), 1000, HERD_ERR_UNPACK_FAILURE, "unknown message");
    }
    /* any flag bit */
    for (unsigned bit = 0; bit < 16; bit++) {
        memcpy(bytes, valid, sizeof(bytes));
        bytes[6 + (bit < 8 ? 1 : 0)] = (uint8_t) (1u << (bit % 8));
        expect_bad_header(bytes, sizeof(bytes), 1000, HERD_ERR_UNPACK_FAILURE, "flags");
    }
    /* the reserved field */
    for (size_t i = 10; i < 12; i++) {
        memcpy(bytes, valid, sizeof(bytes));
        bytes[i] = 1;
        expect_bad_header(bytes, sizeof(bytes), 1000, HERD_ERR_UNPACK_FAILURE, "reserved");
    }
    /* DATA over the limit, by one and by a lot */
    expect_bad_header(valid, sizeof(valid), 99, HERD_ERR_UNPACK_FAILURE, "over the limit");
    good.length = UINT32_MAX;
    overlay_tcp_header_encode(&good, bytes);
    expect_bad_header(bytes, sizeof(bytes), OVERLAY_TCP_MAX_MESSAGE_SIZE, HERD_ERR_UNPACK_FAILURE,
                      "over the limit");
    /* handshake frames are small whatever the limit for DATA */
    static const uint8_t handshakes[] = {OVERLAY_TCP_MSG_HELLO, OVERLAY_TCP_MSG_CHALLENGE,
                                         OVERLAY_TCP_MSG_RESPONSE};
    for (size_t i = 0; i < sizeof(handshakes); i++) {
        overlay_tcp_header_t hs = {.version = OVERLAY_TCP_PROTOCOL_VERSION,
                                   .type = handshakes[i],
                                   .length = OVERLAY_TCP_MAX_HANDSHAKE_PAYLOAD};

        overlay_tcp_header_encode(&hs, bytes);
        assert_int_equal(overlay_tcp_header_decode(bytes, sizeof(bytes), 1u << 30, &out, NULL, 0),
                         HERD_SUCCESS);
        hs.length++;
        overlay_tcp_header_encode(&hs, bytes);
        expect_bad_header(bytes, sizeof(bytes), 1u << 30, HERD_ERR_UNPACK_FAILURE,
                          "over the limit");
        /* and carry no tag */
        hs.length = 10;
        hs.tag = 1;
        overlay_tcp_header_encode(&hs, bytes);
        expect_bad_header(bytes, sizeof(bytes), 1u << 30, HERD_ERR_UNPACK_FAILURE, "tag");
    }
    /* BYE is exactly four bytes */
    static const uint32_t bye_lengths[] = {0, 3, 5, 1000};
    for (size_t i = 0; i < sizeof(bye_lengths) / sizeof(bye_lengths[0]); i++) {
        overlay_tcp_header_t bye = {.version = OVERLAY_TCP_PROTOCOL_VERSION,
                                    .type = OVERLAY_TCP_MSG_BYE,
                                    .length = bye_lengths[i]};

        overlay_tcp_header_encode(&bye, bytes);
        expect_bad_header(bytes, sizeof(bytes), 1000, HERD_ERR_UNPACK_FAILURE, "BYE");
    }
    /* every single-bit corruption decodes to something valid or fails cleanly */
    for (size_t bit = 0; bit < 8 * OVERLAY_TCP_HEADER_BYTES; bit++) {
        int rc;

        memcpy(bytes, valid, sizeof(bytes));
        bytes[bit / 8] ^= (uint8_t) (1u << (bit % 8));
        rc = overlay_tcp_header_decode(bytes, sizeof(bytes), 1000, &out, NULL, 0);
        assert_true(HERD_SUCCESS == rc || HERD_ERR_UNPACK_FAILURE == rc ||
                    HERD_ERR_VERSION_MISMATCH == rc);
    }
}

static overlay_tcp_hello_t sample_hello(void)
{
    overlay_tcp_hello_t hello;

    memset(&hello, 0, sizeof(hello));
    for (size_t i = 0; i < sizeof(hello.nonce); i++) {
        hello.nonce[i] = (uint8_t) (i * 7);
    }
    hello.num_daemons = 1000;
    hello.radix = 64;
    hello.heartbeat_ms = 30000;
    snprintf(hello.dvm_id, sizeof(hello.dvm_id), "herd-dvm-4242@node001");
    snprintf(hello.uri, sizeof(hello.uri), "tcp://10.0.0.1:40123");
    return hello;
}

static void expect_bad_hello(const uint8_t *payload, size_t length, const char *why_part)
{
    overlay_tcp_hello_t out;
    overlay_tcp_hello_t untouched;
    char why[256] = "";

    memset(&out, 0x5a, sizeof(out));
    memcpy(&untouched, &out, sizeof(out));
    assert_int_equal(overlay_tcp_hello_decode(payload, length, &out, why, sizeof(why)),
                     HERD_ERR_UNPACK_FAILURE);
    assert_memory_equal(&out, &untouched, sizeof(out));
    assert_contains(why, why_part);
}

static void test_hello_codec(void **state)
{
    overlay_tcp_hello_t hello = sample_hello();
    overlay_tcp_hello_t out;
    uint8_t payload[OVERLAY_TCP_MAX_HANDSHAKE_PAYLOAD + 8];
    uint8_t bad[sizeof(payload)];
    size_t length = 0;
    size_t dvm_at = OVERLAY_TCP_NONCE_BYTES + 12;

    assert_int_equal(overlay_tcp_hello_encode(&hello, payload, sizeof(payload), &length),
                     HERD_SUCCESS);
    assert_int_equal(length, 32 + 12 + 2 + strlen(hello.dvm_id) + 2 + strlen(hello.uri));
    assert_int_equal(overlay_tcp_hello_decode(payload, length, &out, NULL, 0), HERD_SUCCESS);
    assert_memory_equal(out.nonce, hello.nonce, sizeof(out.nonce));
    assert_int_equal(out.num_daemons, 1000);
    assert_int_equal(out.radix, 64);
    assert_int_equal(out.heartbeat_ms, 30000);
    assert_string_equal(out.dvm_id, hello.dvm_id);
    assert_string_equal(out.uri, hello.uri);

    /* an empty URI (a leaf that does not listen) and the longest strings */
    hello.uri[0] = '\0';
    memset(hello.dvm_id, 'd', ORTE_OVERLAY_MAX_DVM_ID);
    hello.dvm_id[ORTE_OVERLAY_MAX_DVM_ID] = '\0';
    assert_int_equal(overlay_tcp_hello_encode(&hello, payload, sizeof(payload), &length),
                     HERD_SUCCESS);
    assert_true(length <= OVERLAY_TCP_MAX_HANDSHAKE_PAYLOAD);
    assert_int_equal(overlay_tcp_hello_decode(payload, length, &out, NULL, 0), HERD_SUCCESS);
    assert_string_equal(out.uri, "");
    assert_int_equal(strlen(out.dvm_id), ORTE_OVERLAY_MAX_DVM_ID);
    memset(hello.uri, 'u', OVERLAY_TCP_MAX_URI);
    hello.uri[OVERLAY_TCP_MAX_URI] = '\0';
    assert_int_equal(overlay_tcp_hello_encode(&hello, payload, sizeof(payload), &length),
                     HERD_SUCCESS);
    assert_true(length <= OVERLAY_TCP_MAX_HANDSHAKE_PAYLOAD);
    assert_int_equal(overlay_tcp_hello_decode(payload, length, &out, NULL, 0), HERD_SUCCESS);

    /* the encoder refuses what the decoder would */
    hello = sample_hello();
    assert_int_equal(overlay_tcp_hello_encode(&hello, payload, 10, &length), HERD_ERR_BAD_PARAM);
    hello.dvm_id[0] = '\0';
    assert_int_equal(overlay_tcp_hello_encode(&hello, payload, sizeof(payload), &length),
                     HERD_ERR_BAD_PARAM);
    hello = sample_hello();
    hello.dvm_id[3] = '\n';
    assert_int_equal(overlay_tcp_hello_encode(&hello, payload, sizeof(payload), &length),
                     HERD_ERR_BAD_PARAM);
    hello = sample_hello();
    hello.radix = 0;
    assert_int_equal(overlay_tcp_hello_encode(&hello, payload, sizeof(payload), &length),
                     HERD_ERR_BAD_PARAM);

    /* every truncation, and one byte too many */
    hello = sample_hello();
    assert_int_equal(overlay_tcp_hello_encode(&hello, payload, sizeof(payload), &length),
                     HERD_SUCCESS);
    for (size_t cut = 0; cut < length; cut++) {
        overlay_tcp_hello_t untouched;

        memset(&out, 0x5a, sizeof(out));
        memcpy(&untouched, &out, sizeof(out));
        assert_int_equal(overlay_tcp_hello_decode(payload, cut, &out, NULL, 0),
                         HERD_ERR_UNPACK_FAILURE);
        assert_memory_equal(&out, &untouched, sizeof(out));
    }
    memcpy(bad, payload, length);
    bad[length] = 'x';
    expect_bad_hello(bad, length + 1, "after its last field");
    expect_bad_hello(NULL, 0, "cut short");

    /* a tree of no daemons, or radix 0 */
    memcpy(bad, payload, length);
    memset(bad + OVERLAY_TCP_NONCE_BYTES, 0, 4);
    expect_bad_hello(bad, length, "tree of 0 daemons");
    memcpy(bad, payload, length);
    memset(bad + OVERLAY_TCP_NONCE_BYTES + 4, 0, 4);
    expect_bad_hello(bad, length, "radix 0");

    /* DVM id: empty, longer than allowed, longer than what follows, not printable */
    memcpy(bad, payload, length);
    bad[dvm_at] = 0;
    bad[dvm_at + 1] = 0;
    expect_bad_hello(bad, length, "DVM id is 0 bytes");
    memcpy(bad, payload, length);
    bad[dvm_at] = 0x01;
    bad[dvm_at + 1] = 0x00; /* 256 */
    expect_bad_hello(bad, length, "DVM id is 256 bytes");
    memcpy(bad, payload, length);
    bad[dvm_at] = 0x00;
    bad[dvm_at + 1] = 0xff;
    expect_bad_hello(bad, length, "DVM id is cut short");
    memcpy(bad, payload, length);
    bad[dvm_at + 2] = 0;
    expect_bad_hello(bad, length, "not printable");
    memcpy(bad, payload, length);
    bad[dvm_at + 3] = 0x80;
    expect_bad_hello(bad, length, "not printable");

    /* URI: longer than allowed, longer than what follows, not printable */
    size_t uri_at = dvm_at + 2 + strlen(hello.dvm_id);
    memcpy(bad, payload, length);
    bad[uri_at] = 0x01;
    bad[uri_at + 1] = 0x00;
    expect_bad_hello(bad, length, "URI is 256 bytes");
    memcpy(bad, payload, length);
    bad[uri_at + 1] = (uint8_t) (bad[uri_at + 1] + 1);
    expect_bad_hello(bad, length, "URI is cut short");
    memcpy(bad, payload, length);
    bad[length - 1] = '\t';
    expect_bad_hello(bad, length, "not printable");
}

static void test_small_codecs(void **state)
{
    overlay_tcp_challenge_t challenge;
    overlay_tcp_challenge_t challenge_out;
    overlay_tcp_response_t response;
    overlay_tcp_response_t response_out;
    overlay_tcp_bye_t bye = {.reason = OVERLAY_TCP_BYE_FINALIZE};
    overlay_tcp_bye_t bye_out;
    uint8_t payload[128];
    size_t length = 0;
    char why[256];

    randombytes_buf(challenge.nonce, sizeof(challenge.nonce));
    randombytes_buf(challenge.mac, sizeof(challenge.mac));
    challenge.heartbeat_ms = 0x01020304;
    assert_int_equal(overlay_tcp_challenge_encode(&challenge, payload, sizeof(payload), &length),
                     HERD_SUCCESS);
    assert_int_equal(length, 68);
    assert_int_equal(payload[32], 1); /* big-endian, after the nonce */
    assert_int_equal(overlay_tcp_challenge_decode(payload, length, &challenge_out, NULL, 0),
                     HERD_SUCCESS);
    assert_memory_equal(&challenge, &challenge_out, sizeof(challenge));
    assert_int_equal(overlay_tcp_challenge_encode(&challenge, payload, 67, &length),
                     HERD_ERR_BAD_PARAM);
    for (size_t size = 0; size < sizeof(payload); size++) {
        if (68 != size) {
            assert_int_equal(
                overlay_tcp_challenge_decode(payload, size, &challenge_out, why, sizeof(why)),
                HERD_ERR_UNPACK_FAILURE);
            assert_contains(why, "CHALLENGE");
        }
    }

    randombytes_buf(response.mac, sizeof(response.mac));
    assert_int_equal(overlay_tcp_response_encode(&response, payload, sizeof(payload), &length),
                     HERD_SUCCESS);
    assert_int_equal(length, 32);
    assert_int_equal(overlay_tcp_response_decode(payload, length, &response_out, NULL, 0),
                     HERD_SUCCESS);
    assert_memory_equal(&response, &response_out, sizeof(response));
    for (size_t size = 0; size < sizeof(payload); size++) {
        if (32 != size) {
            assert_int_equal(overlay_tcp_response_decode(payload, size, &response_out, NULL, 0),
                             HERD_ERR_UNPACK_FAILURE);
        }
    }
    assert_int_equal(overlay_tcp_response_decode(NULL, 32, &response_out, NULL, 0),
                     HERD_ERR_UNPACK_FAILURE);

    assert_int_equal(overlay_tcp_bye_encode(&bye, payload, sizeof(payload), &length), HERD_SUCCESS);
    assert_int_equal(length, 4);
    assert_int_equal(overlay_tcp_bye_decode(payload, length, &bye_out, NULL, 0), HERD_SUCCESS);
    assert_int_equal(bye_out.reason, OVERLAY_TCP_BYE_FINALIZE);
    assert_int_equal(overlay_tcp_bye_decode(payload, 3, &bye_out, NULL, 0),
                     HERD_ERR_UNPACK_FAILURE);
    assert_int_equal(overlay_tcp_bye_decode(payload, 5, &bye_out, NULL, 0),
                     HERD_ERR_UNPACK_FAILURE);
    memset(payload, 0, 4);
    assert_int_equal(overlay_tcp_bye_decode(payload, 4, &bye_out, why, sizeof(why)),
                     HERD_ERR_UNPACK_FAILURE);
    assert_contains(why, "reason 0");
    bye.reason = 0;
    assert_int_equal(overlay_tcp_bye_encode(&bye, payload, sizeof(payload), &length),
                     HERD_ERR_BAD_PARAM);
}

static void test_data_decode(void **state)
{
    overlay_tcp_header_t header = {.version = OVERLAY_TCP_PROTOCOL_VERSION,
                                   .type = OVERLAY_TCP_MSG_DATA,
                                   .tag = 9,
                                   .src = 3,
                                   .dst = 6,
                                   .length = 5};
    const uint8_t payload[5] = "hello";
    overlay_tcp_data_t data;
    char why[256];

    assert_int_equal(overlay_tcp_data_decode(&header, payload, 7, &data, NULL, 0), HERD_SUCCESS);
    assert_int_equal(data.src, 3);
    assert_int_equal(data.dst, 6);
    assert_int_equal(data.tag, 9);
    assert_ptr_equal(data.payload, payload);
    assert_int_equal(data.length, 5);
    assert_int_equal(overlay_tcp_data_decode(&header, payload, 6, &data, why, sizeof(why)),
                     HERD_ERR_UNPACK_FAILURE);
    assert_contains(why, "daemons 0 to 5");
    header.src = 7;
    header.dst = 0;
    assert_int_equal(overlay_tcp_data_decode(&header, payload, 7, &data, NULL, 0),
                     HERD_ERR_UNPACK_FAILURE);
    header.src = 0;
    assert_int_equal(overlay_tcp_data_decode(&header, NULL, 7, &data, NULL, 0),
                     HERD_ERR_UNPACK_FAILURE);
    header.type = OVERLAY_TCP_MSG_BYE;
    assert_int_equal(overlay_tcp_data_decode(&header, payload, 7, &data, NULL, 0),
                     HERD_ERR_UNPACK_FAILURE);
    assert_int_equal(overlay_tcp_data_decode(NULL, payload, 7, &data, NULL, 0),
                     HERD_ERR_UNPACK_FAILURE);
}

static void test_macs(void **state)
{
    uint8_t key[OVERLAY_TCP_KEY_BYTES];
    uint8_t other_key[OVERLAY_TCP_KEY_BYTES];
    uint8_t nonce_c[OVERLAY_TCP_NONCE_BYTES];
    uint8_t nonce_s[OVERLAY_TCP_NONCE_BYTES];
    uint8_t mac[OVERLAY_TCP_MAC_BYTES];
    uint8_t again[OVERLAY_TCP_MAC_BYTES];
    uint8_t changed[OVERLAY_TCP_MAC_BYTES];

    assert_int_equal(overlay_tcp_derive_key(test_secret, key), HERD_SUCCESS);
    assert_int_equal(overlay_tcp_derive_key(wrong_secret, other_key), HERD_SUCCESS);
    /* a subkey, not the secret itself */
    assert_memory_not_equal(key, test_secret, sizeof(key));
    assert_memory_not_equal(key, other_key, sizeof(key));
    randombytes_buf(nonce_c, sizeof(nonce_c));
    randombytes_buf(nonce_s, sizeof(nonce_s));

    overlay_tcp_challenge_mac(key, nonce_c, nonce_s, 0, 1, 7, 2, "dvm", 30000, mac);
    overlay_tcp_challenge_mac(key, nonce_c, nonce_s, 0, 1, 7, 2, "dvm", 30000, again);
    assert_true(overlay_tcp_mac_equal(mac, again));
    /* every input matters */
    overlay_tcp_challenge_mac(other_key, nonce_c, nonce_s, 0, 1, 7, 2, "dvm", 30000, changed);
    assert_false(overlay_tcp_mac_equal(mac, changed));
    overlay_tcp_challenge_mac(key, nonce_s, nonce_c, 0, 1, 7, 2, "dvm", 30000, changed);
    assert_false(overlay_tcp_mac_equal(mac, changed));
    overlay_tcp_challenge_mac(key, nonce_c, nonce_s, 1, 0, 7, 2, "dvm", 30000, changed);
    assert_false(overlay_tcp_mac_equal(mac, changed));
    overlay_tcp_challenge_mac(key, nonce_c, nonce_s, 0, 2, 7, 2, "dvm", 30000, changed);
    assert_false(overlay_tcp_mac_equal(mac, changed));
    overlay_tcp_challenge_mac(key, nonce_c, nonce_s, 0, 1, 8, 2, "dvm", 30000, changed);
    assert_false(overlay_tcp_mac_equal(mac, changed));
    overlay_tcp_challenge_mac(key, nonce_c, nonce_s, 0, 1, 7, 3, "dvm", 30000, changed);
    assert_false(overlay_tcp_mac_equal(mac, changed));
    overlay_tcp_challenge_mac(key, nonce_c, nonce_s, 0, 1, 7, 2, "dvn", 30000, changed);
    assert_false(overlay_tcp_mac_equal(mac, changed));
    overlay_tcp_challenge_mac(key, nonce_c, nonce_s, 0, 1, 7, 2, "dvm", 30001, changed);
    assert_false(overlay_tcp_mac_equal(mac, changed));
    /* the response can never pass for the challenge, even over the same fields */
    overlay_tcp_response_mac(key, nonce_c, nonce_s, 0, 1, 7, 2, "dvm", "", 30000, changed);
    assert_false(overlay_tcp_mac_equal(mac, changed));
    overlay_tcp_response_mac(key, nonce_s, nonce_c, 1, 0, 7, 2, "dvm", "tcp://1.2.3.4:5", 30000,
                             mac);
    overlay_tcp_response_mac(key, nonce_s, nonce_c, 1, 0, 7, 2, "dvm", "tcp://1.2.3.4:6", 30000,
                             changed);
    assert_false(overlay_tcp_mac_equal(mac, changed));
    overlay_tcp_response_mac(key, nonce_s, nonce_c, 1, 0, 7, 2, "dvm", "tcp://1.2.3.4:5", 0,
                             changed);
    assert_false(overlay_tcp_mac_equal(mac, changed));
    /* length prefixes: moving a byte from the DVM id to the URI changes the MAC */
    overlay_tcp_response_mac(key, nonce_s, nonce_c, 1, 0, 7, 2, "ab", "c", 30000, mac);
    overlay_tcp_response_mac(key, nonce_s, nonce_c, 1, 0, 7, 2, "a", "bc", 30000, changed);
    assert_false(overlay_tcp_mac_equal(mac, changed));
}

static void test_uri(void **state)
{
    static const char *const good[] = {
        "tcp://127.0.0.1:1", "tcp://10.0.0.1:40123",   "tcp://255.255.255.255:65535",
        "tcp://[::1]:80",    "tcp://[fd00::1:2]:4000",
    };
    static const char *const bad[] = {
        "",
        "tcp:/1.2.3.4:5",
        "udp://1.2.3.4:5",
        "tcp://",
        "tcp://1.2.3.4",
        "tcp://1.2.3.4:",
        "tcp://1.2.3.4:0",
        "tcp://1.2.3.4:65536",
        "tcp://1.2.3.4:123456",
        "tcp://1.2.3.4:80x",
        "tcp://1.2.3.4:-1",
        "tcp://1.2.3.4: 80",
        "tcp://localhost:80",
        "tcp://1.2.3:80",
        "tcp://::1:80",
        "tcp://[::1]80",
        "tcp://[::1:80",
        "tcp://[]:80",
        "tcp://[1.2.3.4]:80",
        "tcp://:80",
        "TCP://1.2.3.4:5",
        "tcp://1111111111111111111111111111111111111111111111111111111111111111111:5",
    };
    struct sockaddr_storage address;
    socklen_t length = 0;
    char text[128];
    char why[256];

    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        assert_int_equal(overlay_tcp_uri_parse(good[i], &address, &length, NULL, 0), HERD_SUCCESS);
        assert_int_equal(overlay_tcp_uri_format((struct sockaddr *) &address, text, sizeof(text)),
                         HERD_SUCCESS);
        assert_string_equal(text, good[i]);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        why[0] = '\0';
        if (HERD_ERR_BAD_PARAM !=
            overlay_tcp_uri_parse(bad[i], &address, &length, why, sizeof(why))) {
            fail_msg("URI \"%s\" was accepted", bad[i]);
        }
        assert_true('\0' != why[0]);
    }
    assert_int_equal(overlay_tcp_uri_parse(NULL, &address, &length, NULL, 0), HERD_ERR_BAD_PARAM);
    assert_int_equal(
        overlay_tcp_uri_parse("tcp://localhost:80", &address, &length, why, sizeof(why)),
        HERD_ERR_BAD_PARAM);
    assert_contains(why, "not resolved");
    assert_int_equal(overlay_tcp_uri_format((struct sockaddr *) &address, text, 8),
                     HERD_ERR_BAD_PARAM);
}

/* ------------------------------------------------------------------------------------------ */
/* interface choice */

typedef struct {
    struct ifaddrs entries[8];
    struct sockaddr_storage addresses[8];
    size_t count;
} fake_ifaddrs_t;

static void fake_add(fake_ifaddrs_t *list, const char *name, const char *address, unsigned flags)
{
    struct ifaddrs *entry = &list->entries[list->count];
    struct sockaddr_storage *storage = &list->addresses[list->count];

    memset(entry, 0, sizeof(*entry));
    memset(storage, 0, sizeof(*storage));
    if (NULL != strchr(address, ':')) {
        struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};

        assert_int_equal(inet_pton(AF_INET6, address, &in6.sin6_addr), 1);
        memcpy(storage, &in6, sizeof(in6));
    } else {
        struct sockaddr_in in = {.sin_family = AF_INET};

        assert_int_equal(inet_pton(AF_INET, address, &in.sin_addr), 1);
        memcpy(storage, &in, sizeof(in));
    }
    entry->ifa_name = (char *) name;
    entry->ifa_flags = flags;
    entry->ifa_addr = (struct sockaddr *) storage;
    if (list->count > 0) {
        list->entries[list->count - 1].ifa_next = entry;
    }
    list->count++;
}

/* The address chosen under a list ("" for none, NULL for nothing usable). */
static void expect_choice(const fake_ifaddrs_t *fake, const char *include, const char *exclude,
                          int family, const char *expected)
{
    overlay_tcp_if_list_t list;
    struct sockaddr_storage address;
    socklen_t length = 0;
    char text[128];
    int rc;

    if (NULL != include) {
        assert_int_equal(overlay_tcp_if_list_parse("test_if_include", include, false, &list),
                         HERD_SUCCESS);
    } else {
        assert_int_equal(overlay_tcp_if_list_parse("test_if_exclude", exclude, true, &list),
                         HERD_SUCCESS);
    }
    rc = overlay_tcp_if_choose_from(fake->entries, &list, family, &address, &length);
    overlay_tcp_if_list_free(&list);
    if (NULL == expected) {
        assert_int_equal(rc, HERD_ERR_NOT_FOUND);
        return;
    }
    assert_int_equal(rc, HERD_SUCCESS);
    overlay_tcp_address_format((struct sockaddr *) &address, text, sizeof(text));
    assert_string_equal(text, expected);
}

static void test_interface_choice(void **state)
{
    fake_ifaddrs_t fake = {.count = 0};

    fake_add(&fake, "lo", "127.0.0.1", IFF_UP | IFF_LOOPBACK);
    fake_add(&fake, "lo", "::1", IFF_UP | IFF_LOOPBACK);
    fake_add(&fake, "eth0", "fe80::1", IFF_UP);
    fake_add(&fake, "eth0", "10.1.2.3", IFF_UP);
    fake_add(&fake, "eth1", "fd00::5", IFF_UP);
    fake_add(&fake, "eth2", "192.168.0.9", 0); /* down */
    fake_add(&fake, "eth3", "0.0.0.0", IFF_UP);

    /* non-loopback first, IPv4 before IPv6 */
    expect_choice(&fake, NULL, "", AF_UNSPEC, "10.1.2.3:0");
    expect_choice(&fake, NULL, NULL, AF_UNSPEC, "10.1.2.3:0");
    expect_choice(&fake, NULL, "eth0", AF_UNSPEC, "[fd00::5]:0");
    expect_choice(&fake, NULL, "eth0,eth1", AF_UNSPEC, "127.0.0.1:0");
    expect_choice(&fake, NULL, "eth0, eth1, 127.0.0.0/8", AF_UNSPEC, "[::1]:0");
    expect_choice(&fake, NULL, "lo,eth0,eth1", AF_UNSPEC, NULL);
    /* loopback when it is what was asked for */
    expect_choice(&fake, "lo", NULL, AF_UNSPEC, "127.0.0.1:0");
    expect_choice(&fake, "127.0.0.1", NULL, AF_UNSPEC, "127.0.0.1:0");
    expect_choice(&fake, "::1/128", NULL, AF_UNSPEC, "[::1]:0");
    /* subnets and single hosts */
    expect_choice(&fake, "10.0.0.0/8", NULL, AF_UNSPEC, "10.1.2.3:0");
    expect_choice(&fake, "10.1.2.0/23", NULL, AF_UNSPEC, "10.1.2.3:0");
    expect_choice(&fake, "10.1.2.4", NULL, AF_UNSPEC, NULL);
    expect_choice(&fake, "fd00::/8", NULL, AF_UNSPEC, "[fd00::5]:0");
    expect_choice(&fake, "0.0.0.0/0", NULL, AF_UNSPEC, "10.1.2.3:0");
    /* down, link-local and unspecified addresses are never chosen */
    expect_choice(&fake, "eth2", NULL, AF_UNSPEC, NULL);
    expect_choice(&fake, "192.168.0.0/16", NULL, AF_UNSPEC, NULL);
    expect_choice(&fake, "fe80::/10", NULL, AF_UNSPEC, NULL);
    expect_choice(&fake, "eth3", NULL, AF_UNSPEC, NULL);
    /* an address family */
    expect_choice(&fake, NULL, NULL, AF_INET6, "[fd00::5]:0");
    expect_choice(&fake, "lo", NULL, AF_INET6, "[::1]:0");
    expect_choice(&fake, "eth1", NULL, AF_INET, NULL);
    /* the list order breaks ties */
    fake_ifaddrs_t two = {.count = 0};
    fake_add(&two, "ib0", "10.9.9.9", IFF_UP);
    fake_add(&two, "eth0", "10.1.1.1", IFF_UP);
    expect_choice(&two, NULL, NULL, AF_UNSPEC, "10.9.9.9:0");
    expect_choice(&two, "eth0,ib0", NULL, AF_UNSPEC, "10.9.9.9:0");
}

static void test_interface_lists(void **state)
{
    static const char *const bad[] = {
        "eth0/24",
        "10.0.0.0/33",
        "fd00::/129",
        "10.0.0.0/",
        "10.0.0.0/x",
        "10.0.0.0/1234",
        "an-interface-name-too-long",
        "lo,eth0/1",
    };
    overlay_tcp_if_list_t list;
    struct sockaddr_in in = {.sin_family = AF_INET};
    char *text;

    assert_int_equal(overlay_tcp_if_list_parse("v", " lo , eth0 ,,10.0.0.0/8 ", false, &list),
                     HERD_SUCCESS);
    assert_int_equal(list.count, 3);
    assert_string_equal(list.filters[0].name, "lo");
    assert_string_equal(list.filters[1].name, "eth0");
    assert_null(list.filters[2].name);
    assert_int_equal(list.filters[2].prefix, 8);
    assert_string_equal(list.variable, "v");
    in.sin_addr.s_addr = htonl(0x0a010203);
    assert_true(overlay_tcp_if_allowed(&list, "eth9", (struct sockaddr *) &in));
    assert_true(overlay_tcp_if_allowed(&list, "lo", NULL));
    in.sin_addr.s_addr = htonl(0x0b010203);
    assert_false(overlay_tcp_if_allowed(&list, "eth9", (struct sockaddr *) &in));
    overlay_tcp_if_list_free(&list);

    assert_int_equal(overlay_tcp_if_list_parse("v", "eth0", true, &list), HERD_SUCCESS);
    assert_false(overlay_tcp_if_allowed(&list, "eth0", (struct sockaddr *) &in));
    assert_true(overlay_tcp_if_allowed(&list, "eth1", (struct sockaddr *) &in));
    overlay_tcp_if_list_free(&list);
    assert_true(overlay_tcp_if_allowed(NULL, "eth0", NULL));
    assert_int_equal(overlay_tcp_if_list_parse(NULL, "eth0", true, &list), HERD_ERR_BAD_PARAM);

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memset(&list, 0x5a, sizeof(list));
        herd_test_capture_start(&stderr_capture);
        assert_int_equal(overlay_tcp_if_list_parse("overlay_tcp_if_include", bad[i], false, &list),
                         HERD_ERR_SILENT);
        text = herd_test_capture_stop(&stderr_capture);
        assert_contains(text, "overlay_tcp_if_include");
        assert_contains(text, "neither an interface name nor a subnet");
        free(text);
        /* untouched on failure */
        assert_int_equal(list.count, 0x5a5a5a5a5a5a5a5aULL);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* the framework and the module's checks */

static void test_framework_selects_tcp(void **state)
{
    assert_non_null(module->init);
    assert_non_null(module->listen);
    assert_non_null(module->adopt_listener);
    assert_non_null(module->connect_parent);
    assert_non_null(module->adopt_peer);
    assert_non_null(module->send);
    assert_non_null(module->sendv);
    assert_non_null(module->register_recv);
    assert_non_null(module->set_lost_callback);
    assert_non_null(module->get_stats);
    assert_non_null(module->finalize);
    assert_int_equal(orte_overlay_base_framework.num_selected, 1);
    assert_string_equal(orte_overlay_base_framework.selected[0]->component->name, "tcp");
    /* a second open is harmless, and so is a second close (in teardown) */
    assert_int_equal(orte_overlay_base_open(), HERD_SUCCESS);
}

static void test_init_checks(void **state)
{
    opal_event_base_t *base = NULL;
    orte_overlay_t *overlay = (orte_overlay_t *) &base; /* must stay untouched */
    orte_overlay_t *const untouched = overlay;
    orte_overlay_config_t config;
    char long_id[ORTE_OVERLAY_MAX_DVM_ID + 2];
    char *text;

    assert_int_equal(opal_event_base_create(&base), HERD_SUCCESS);
    config = make_config(base, 0, 1, 2, "dvm", test_secret);
    assert_int_equal(module->init(NULL, &overlay), HERD_ERR_BAD_PARAM);
    assert_int_equal(module->init(&config, NULL), HERD_ERR_BAD_PARAM);
    config.base = NULL;
    assert_int_equal(module->init(&config, &overlay), HERD_ERR_BAD_PARAM);
    config = make_config(base, 3, 3, 2, "dvm", test_secret);
    assert_int_equal(module->init(&config, &overlay), HERD_ERR_BAD_PARAM);
    config = make_config(base, 0, 0, 2, "dvm", test_secret);
    assert_int_equal(module->init(&config, &overlay), HERD_ERR_BAD_PARAM);
    config = make_config(base, 0, 3, 0, "dvm", test_secret);
    assert_int_equal(module->init(&config, &overlay), HERD_ERR_BAD_PARAM);
    config = make_config(base, 0, 3, 2, "", test_secret);
    assert_int_equal(module->init(&config, &overlay), HERD_ERR_BAD_PARAM);
    config = make_config(base, 0, 3, 2, NULL, test_secret);
    assert_int_equal(module->init(&config, &overlay), HERD_ERR_BAD_PARAM);
    config = make_config(base, 0, 3, 2, "two\nlines", test_secret);
    assert_int_equal(module->init(&config, &overlay), HERD_ERR_BAD_PARAM);
    memset(long_id, 'x', sizeof(long_id) - 1);
    long_id[sizeof(long_id) - 1] = '\0';
    config = make_config(base, 0, 3, 2, long_id, test_secret);
    assert_int_equal(module->init(&config, &overlay), HERD_ERR_BAD_PARAM);
    assert_ptr_equal(overlay, untouched);

    /* both interface lists from the caller */
    config = make_config(base, 0, 3, 2, "dvm", test_secret);
    config.if_exclude = "eth0";
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(module->init(&config, &overlay), HERD_ERR_SILENT);
    text = herd_test_capture_stop(&stderr_capture);
    assert_contains(text, "both an interface include list and an exclude list");
    assert_contains(text, "127.0.0.1");
    assert_contains(text, "eth0");
    free(text);
    /* a bad entry in the caller's list */
    config = make_config(base, 0, 3, 2, "dvm", test_secret);
    config.if_include = "10.0.0.0/99";
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(module->init(&config, &overlay), HERD_ERR_SILENT);
    text = herd_test_capture_stop(&stderr_capture);
    assert_contains(text, "10.0.0.0/99");
    free(text);
    assert_ptr_equal(overlay, untouched);

    /* a good one, with its calls checked */
    config = make_config(base, 0, 1, 2, "dvm", test_secret);
    assert_int_equal(module->init(&config, &overlay), HERD_SUCCESS);
    assert_int_equal(module->connect_parent(overlay, "tcp://127.0.0.1:1"), HERD_ERR_BAD_PARAM);
    assert_int_equal(module->send(overlay, 1, TEST_TAG, "x", 1), HERD_ERR_BAD_PARAM);
    struct iovec iov[ORTE_OVERLAY_MAX_IOV + 1];
    for (size_t i = 0; i < ORTE_OVERLAY_MAX_IOV + 1; i++) {
        iov[i].iov_base = (void *) "x";
        iov[i].iov_len = 1;
    }
    assert_int_equal(module->sendv(overlay, 0, TEST_TAG, iov, ORTE_OVERLAY_MAX_IOV + 1),
                     HERD_ERR_BAD_PARAM);
    assert_int_equal(module->sendv(overlay, 0, TEST_TAG, NULL, 1), HERD_ERR_BAD_PARAM);
    assert_int_equal(module->sendv(overlay, 0, TEST_TAG, iov, -1), HERD_ERR_BAD_PARAM);
    module->finalize(overlay);
    module->finalize(NULL);
    opal_event_base_free(base);
}

static void test_mca_include_and_exclude(void **state)
{
    char *text;

    orte_overlay_base_close();
    setenv("HERD_MCA_overlay_tcp_if_include", "lo", 1);
    setenv("HERD_MCA_overlay_tcp_if_exclude", "eth0", 1);
    herd_test_capture_start(&stderr_capture);
    assert_int_not_equal(orte_overlay_base_open(), HERD_SUCCESS);
    text = herd_test_capture_stop(&stderr_capture);
    assert_contains(text, "overlay_tcp_if_include");
    assert_contains(text, "overlay_tcp_if_exclude");
    assert_contains(text, "only one of them may be");
    free(text);
    assert_null(orte_overlay_base_module());

    /* a bad entry is reported at open, naming the variable */
    unsetenv("HERD_MCA_overlay_tcp_if_exclude");
    setenv("HERD_MCA_overlay_tcp_if_include", "lo/8", 1);
    herd_test_capture_start(&stderr_capture);
    assert_int_not_equal(orte_overlay_base_open(), HERD_SUCCESS);
    text = herd_test_capture_stop(&stderr_capture);
    assert_contains(text, "\"lo/8\" in overlay_tcp_if_include");
    free(text);

    /* out-of-range values */
    unsetenv("HERD_MCA_overlay_tcp_if_include");
    setenv("HERD_MCA_overlay_tcp_max_message_size", "100", 1);
    herd_test_capture_start(&stderr_capture);
    assert_int_not_equal(orte_overlay_base_open(), HERD_SUCCESS);
    text = herd_test_capture_stop(&stderr_capture);
    assert_contains(text, "overlay_tcp_max_message_size = 100");
    free(text);
    unsetenv("HERD_MCA_overlay_tcp_max_message_size");
    setenv("HERD_MCA_overlay_base_handshake_timeout", "0", 1);
    herd_test_capture_start(&stderr_capture);
    assert_int_not_equal(orte_overlay_base_open(), HERD_SUCCESS);
    text = herd_test_capture_stop(&stderr_capture);
    assert_contains(text, "overlay_base_handshake_timeout is 0");
    free(text);
    unsetenv("HERD_MCA_overlay_base_handshake_timeout");
    /* its old name still works, with a word that it was renamed */
    setenv("HERD_MCA_overlay_tcp_handshake_timeout", "0", 1);
    herd_test_capture_start(&stderr_capture);
    assert_int_not_equal(orte_overlay_base_open(), HERD_SUCCESS);
    text = herd_test_capture_stop(&stderr_capture);
    assert_contains(text, "overlay_base_handshake_timeout is 0");
    assert_contains(text, "overlay_tcp_handshake_timeout");
    free(text);

    /* the MCA list is what init() uses when the caller gives none */
    unsetenv("HERD_MCA_overlay_tcp_handshake_timeout");
    setenv("HERD_MCA_overlay_tcp_if_include", "no-such-if0", 1);
    open_overlay();
    opal_event_base_t *base = NULL;
    orte_overlay_t *overlay = NULL;
    orte_overlay_config_t config;
    char *uri = NULL;

    assert_int_equal(opal_event_base_create(&base), HERD_SUCCESS);
    config = make_config(base, 0, 1, 2, "dvm", test_secret);
    config.if_include = NULL;
    assert_int_equal(module->init(&config, &overlay), HERD_SUCCESS);
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(module->listen(overlay, &uri), HERD_ERR_SILENT);
    text = herd_test_capture_stop(&stderr_capture);
    assert_null(uri);
    assert_contains(text, "overlay_tcp_if_include = \"no-such-if0\"");
    assert_contains(text, "127.0.0.1 (not included)");
    free(text);
    module->finalize(overlay);
    opal_event_base_free(base);
}

static void test_no_usable_interface(void **state)
{
    opal_event_base_t *base = NULL;
    orte_overlay_t *overlay = NULL;
    orte_overlay_config_t config;
    char *uri = NULL;
    char *text;

    assert_int_equal(opal_event_base_create(&base), HERD_SUCCESS);
    config = make_config(base, 0, 1, 2, "dvm", test_secret);
    config.if_include = NULL;
    config.if_exclude = "0.0.0.0/0,::/0";
    assert_int_equal(module->init(&config, &overlay), HERD_SUCCESS);
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(module->listen(overlay, &uri), HERD_ERR_SILENT);
    text = herd_test_capture_stop(&stderr_capture);
    assert_null(uri);
    assert_contains(text, "Daemon 0 on host");
    assert_contains(text, "found no network address");
    assert_contains(text, "127.0.0.1 (excluded)");
    assert_contains(text, "the overlay's if_exclude setting = \"0.0.0.0/0,::/0\"");
    free(text);
    module->finalize(overlay);
    opal_event_base_free(base);
}

static void test_register_recv(void **state)
{
    node_t *node = node_new(0, 1, 2);
    node_t *nodes[] = {node};
    orte_overlay_stats_t stats;

    assert_int_equal(module->register_recv(node->overlay, TEST_TAG, on_recv, node),
                     HERD_ERR_EXISTS);
    assert_int_equal(module->register_recv(node->overlay, TEST_TAG, NULL, NULL), HERD_SUCCESS);
    assert_int_equal(module->register_recv(node->overlay, TEST_TAG, on_recv, node), HERD_SUCCESS);
    assert_int_equal(module->register_recv(node->overlay, 0xffff, NULL, NULL), HERD_SUCCESS);
    assert_int_equal(module->register_recv(node->overlay, 0xffff, on_recv, node), HERD_SUCCESS);
    assert_int_equal(module->register_recv(NULL, 1, on_recv, node), HERD_ERR_BAD_PARAM);

    /* to self: delivered from the loop, never inside send() */
    assert_int_equal(module->send(node->overlay, 0, TEST_TAG, "one", 3), HERD_SUCCESS);
    assert_int_equal(module->send(node->overlay, 0, 0xffff, "", 0), HERD_SUCCESS);
    assert_int_equal(module->send(node->overlay, 0, OTHER_TAG, "nobody", 6), HERD_SUCCESS);
    assert_int_equal(node->num_got, 0);
    stats = node_stats(node);
    assert_int_equal(stats.messages_sent, 3);
    assert_int_equal(stats.bytes_queued, 9);
    run_until(nodes, 1, node_has_got, node, "a message to self");
    pump(nodes, 1);
    assert_int_equal(node->num_got, 2);
    assert_int_equal(node->got[0].tag, TEST_TAG);
    assert_int_equal(node->got[0].length, 3);
    assert_memory_equal(node->got[0].data, "one", 3);
    assert_int_equal(node->got[1].tag, 0xffff);
    assert_int_equal(node->got[1].length, 0);
    stats = node_stats(node);
    assert_int_equal(stats.messages_delivered, 2);
    assert_int_equal(stats.messages_dropped, 1);
    assert_int_equal(stats.bytes_queued, 0);
    node_free(node);
}

/* ------------------------------------------------------------------------------------------ */
/* handshakes */

static bool pair_connected(void *arg)
{
    node_t **pair = arg;

    return 1 == node_stats(pair[0]).neighbours_up && 1 == node_stats(pair[1]).neighbours_up;
}

static void test_handshake_and_messages(void **state)
{
    node_t *root = node_new(0, 2, 2);
    node_t *child = node_new(1, 2, 2);
    node_t *nodes[] = {root, child};
    orte_overlay_stats_t stats;

    assert_int_equal(module->connect_parent(child->overlay, root->uri), HERD_SUCCESS);
    assert_int_equal(module->connect_parent(child->overlay, root->uri), HERD_ERR_EXISTS);
    run_until(nodes, 2, pair_connected, nodes, "the child to connect");
    assert_int_equal(module->send(root->overlay, 1, TEST_TAG, "down", 4), HERD_SUCCESS);
    assert_int_equal(module->send(child->overlay, 0, TEST_TAG, "up", 2), HERD_SUCCESS);
    run_until(nodes, 2, node_has_got, root, "the message up");
    run_until(nodes, 2, node_has_got, child, "the message down");
    assert_int_equal(root->got[0].src, 1);
    assert_int_equal(root->got[0].tag, TEST_TAG);
    assert_int_equal(root->got[0].length, 2);
    assert_memory_equal(root->got[0].data, "up", 2);
    assert_int_equal(child->got[0].src, 0);
    assert_memory_equal(child->got[0].data, "down", 4);
    stats = node_stats(root);
    assert_int_equal(stats.peers_rejected, 0);
    assert_int_equal(stats.auth_failures, 0);
    assert_int_equal(stats.protocol_errors, 0);
    assert_int_equal(root->num_lost, 0);
    assert_int_equal(child->num_lost, 0);
    node_free(child);
    node_free(root);
}

static void test_wrong_secret(void **state)
{
    open_overlay_verbose("5");
    node_t *root = node_new(0, 2, 2);
    node_t *child = node_new_with(1, 2, 2, "test-dvm", wrong_secret, false);
    node_t *nodes[] = {root, child};
    stat_wait_t rejected = {.node = root, .count = 1};
    orte_overlay_stats_t stats;
    char *text;
    int fd;

    /* the child finds out first: the parent's proof does not check out with its secret */
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(module->send(child->overlay, 0, TEST_TAG, "secret", 6), HERD_SUCCESS);
    assert_int_equal(module->connect_parent(child->overlay, root->uri), HERD_SUCCESS);
    run_until(nodes, 2, node_has_lost, child, "the child to refuse its parent");
    run_until(nodes, 2, node_rejected, &rejected, "the parent to drop the child");
    text = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(child->lost[0].peer, 0);
    assert_int_equal(child->lost[0].status, HERD_ERR_AUTH);
    assert_contains(child->lost[0].reason, "could not prove it knows the DVM secret");
    assert_contains(text, "Daemon 1 refused the daemon answering at its parent's address");
    assert_contains(text, root->uri);
    stats = node_stats(child);
    assert_int_equal(stats.auth_failures, 1);
    assert_int_equal(stats.messages_dropped, 1); /* what was queued for the parent */
    assert_int_equal(module->send(child->overlay, 0, TEST_TAG, "x", 1), HERD_ERR_UNREACH);
    free(text);

    /* a raw child with the wrong secret that answers anyway: the parent's MAC check */
    herd_test_capture_start(&stderr_capture);
    fd = raw_child(nodes, 1, root->uri, 1, 0, 2, 2, wrong_secret);
    rejected.count = 2;
    raw_expect_close(nodes, 1, fd);
    run_until(nodes, 1, node_rejected, &rejected, "the parent to refuse the raw child");
    text = herd_test_capture_stop(&stderr_capture);
    assert_contains(text, "daemon 0 of DVM test-dvm refused a connection from 127.0.0.1:");
    assert_contains(text, "claiming to be daemon 1");
    assert_contains(text, "does not know the DVM secret");
    free(text);
    stats = node_stats(root);
    assert_int_equal(stats.auth_failures, 1);
    assert_int_equal(stats.peers_rejected, 2);
    assert_int_equal(stats.neighbours_up, 0);
    assert_int_equal(root->num_got, 0);
    assert_int_equal(root->num_lost, 0);
    node_free(child);
    node_free(root);
}

static void test_wrong_dvm_id(void **state)
{
    open_overlay_verbose("1");
    node_t *root = node_new(0, 2, 2);
    node_t *child = node_new_with(1, 2, 2, "another-dvm", test_secret, true);
    node_t *nodes[] = {root, child};
    stat_wait_t rejected = {.node = root, .count = 1};
    char *text;

    herd_test_capture_start(&stderr_capture);
    assert_int_equal(module->connect_parent(child->overlay, root->uri), HERD_SUCCESS);
    run_until(nodes, 2, node_rejected, &rejected, "the parent to drop the child");
    run_until(nodes, 2, node_has_lost, child, "the child to notice");
    text = herd_test_capture_stop(&stderr_capture);
    assert_contains(text, "it belongs to DVM \"another-dvm\", this daemon to DVM \"test-dvm\"");
    assert_contains(text, "claiming to be daemon 1");
    assert_int_equal(child->lost[0].peer, 0);
    assert_int_equal(child->lost[0].status, HERD_ERR_UNREACH);
    assert_contains(child->lost[0].reason, "closed the connection during the handshake");
    assert_int_equal(node_stats(root).auth_failures, 0);
    assert_int_equal(root->num_lost, 0);
    free(text);
    node_free(child);
    node_free(root);
}

/* A raw peer sends bytes; the node must drop it with a reason containing why_part. */
static void expect_rejected(node_t *node, int fd, uint64_t count, const char *why_part)
{
    node_t *nodes[] = {node};
    stat_wait_t rejected = {.node = node, .count = count};
    char *text;

    raw_expect_close(nodes, 1, fd);
    run_until(nodes, 1, node_rejected, &rejected, "the node to drop the raw peer");
    text = herd_test_capture_stop(&stderr_capture);
    assert_contains(text, "refused a connection from 127.0.0.1:");
    assert_contains(text, why_part);
    free(text);
}

static void test_garbage_peers(void **state)
{
    open_overlay_verbose("5");
    node_t *root = node_new(0, 7, 2);
    uint8_t nonce[OVERLAY_TCP_NONCE_BYTES];
    uint8_t garbage[64];
    uint64_t count = 0;
    int fd;

    /* random bytes */
    randombytes_buf(garbage, sizeof(garbage));
    garbage[0] = 'G';
    herd_test_capture_start(&stderr_capture);
    fd = raw_connect(root->uri);
    raw_write(fd, garbage, sizeof(garbage));
    expect_rejected(root, fd, ++count, "magic number");

    /* an HTTP client */
    herd_test_capture_start(&stderr_capture);
    fd = raw_connect(root->uri);
    raw_write(fd, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27);
    expect_rejected(root, fd, ++count, "not a herd overlay peer");

    /* another protocol version */
    herd_test_capture_start(&stderr_capture);
    fd = raw_connect(root->uri);
    {
        overlay_tcp_header_t header = {.version = 9, .type = OVERLAY_TCP_MSG_HELLO};
        uint8_t bytes[OVERLAY_TCP_HEADER_BYTES];

        overlay_tcp_header_encode(&header, bytes);
        raw_write(fd, bytes, sizeof(bytes));
    }
    expect_rejected(root, fd, ++count, "protocol version 9");

    /* DATA before the handshake, announcing 2 GiB: refused on the header alone */
    herd_test_capture_start(&stderr_capture);
    fd = raw_connect(root->uri);
    {
        overlay_tcp_header_t header = {.version = OVERLAY_TCP_PROTOCOL_VERSION,
                                       .type = OVERLAY_TCP_MSG_DATA,
                                       .src = 1,
                                       .length = 0x7fffffff};
        uint8_t bytes[OVERLAY_TCP_HEADER_BYTES];

        overlay_tcp_header_encode(&header, bytes);
        raw_write(fd, bytes, sizeof(bytes));
    }
    expect_rejected(root, fd, ++count, "a DATA frame arrived where only HELLO may come");

    /* an oversized handshake frame */
    herd_test_capture_start(&stderr_capture);
    fd = raw_connect(root->uri);
    {
        overlay_tcp_header_t header = {.version = OVERLAY_TCP_PROTOCOL_VERSION,
                                       .type = OVERLAY_TCP_MSG_HELLO,
                                       .length = 1u << 20};
        uint8_t bytes[OVERLAY_TCP_HEADER_BYTES];

        overlay_tcp_header_encode(&header, bytes);
        raw_write(fd, bytes, sizeof(bytes));
    }
    expect_rejected(root, fd, ++count, "over the limit of 1024");

    /* a malformed HELLO */
    herd_test_capture_start(&stderr_capture);
    fd = raw_connect(root->uri);
    raw_send_frame(fd, OVERLAY_TCP_MSG_HELLO, 0, 1, 0, garbage, 20);
    expect_rejected(root, fd, ++count, "its HELLO is malformed");

    /* a daemon that is not a child of this one */
    herd_test_capture_start(&stderr_capture);
    fd = raw_connect(root->uri);
    raw_hello(fd, 5, 0, 7, 2, "test-dvm", "", nonce);
    expect_rejected(root, fd, ++count, "daemon 5 is not a child of daemon 0");

    /* looking for another daemon */
    herd_test_capture_start(&stderr_capture);
    fd = raw_connect(root->uri);
    raw_hello(fd, 1, 3, 7, 2, "test-dvm", "", nonce);
    expect_rejected(root, fd, ++count, "it was looking for daemon 3, but this is daemon 0");

    /* another tree */
    herd_test_capture_start(&stderr_capture);
    fd = raw_connect(root->uri);
    raw_hello(fd, 1, 0, 8, 2, "test-dvm", "", nonce);
    expect_rejected(root, fd, ++count, "it was told the DVM has 8 daemons in a tree of radix 2");

    /* a RESPONSE of the wrong size after a good HELLO */
    herd_test_capture_start(&stderr_capture);
    fd = raw_connect(root->uri);
    raw_hello(fd, 2, 0, 7, 2, "test-dvm", "", nonce);
    raw_send_frame(fd, OVERLAY_TCP_MSG_RESPONSE, 0, 2, 0, garbage, 31);
    expect_rejected(root, fd, ++count, "its RESPONSE is malformed");

    /* a second HELLO where the RESPONSE should be */
    herd_test_capture_start(&stderr_capture);
    fd = raw_connect(root->uri);
    raw_hello(fd, 2, 0, 7, 2, "test-dvm", "", nonce);
    raw_hello(fd, 2, 0, 7, 2, "test-dvm", "", nonce);
    expect_rejected(root, fd, ++count, "a HELLO frame arrived where only RESPONSE may come");

    /* a RESPONSE from another vpid than the HELLO claimed */
    herd_test_capture_start(&stderr_capture);
    fd = raw_connect(root->uri);
    raw_hello(fd, 2, 0, 7, 2, "test-dvm", "", nonce);
    raw_send_frame(fd, OVERLAY_TCP_MSG_RESPONSE, 0, 1, 0, garbage, 32);
    expect_rejected(root, fd, ++count, "not from the daemon it claimed");

    /* connect and hang up */
    herd_test_capture_start(&stderr_capture);
    fd = raw_connect(root->uri);
    shutdown(fd, SHUT_WR);
    expect_rejected(root, fd, ++count, "closed the connection before finishing the handshake");

    /* none of it reached a callback or counted as a MAC failure */
    assert_int_equal(root->num_got, 0);
    assert_int_equal(root->num_lost, 0);
    assert_int_equal(node_stats(root).auth_failures, 0);
    assert_int_equal(node_stats(root).neighbours_up, 0);

    /* and a real child still gets in afterwards */
    node_t *child = node_new(1, 7, 2);
    node_t *both[] = {root, child};
    assert_int_equal(module->send(child->overlay, 0, TEST_TAG, "ok", 2), HERD_SUCCESS);
    assert_int_equal(module->connect_parent(child->overlay, root->uri), HERD_SUCCESS);
    run_until(both, 2, node_has_got, root, "the real child's message");
    assert_int_equal(root->got[0].src, 1);
    node_free(child);
    node_free(root);
}

/* A CHALLENGE as the wire has it. */
static void raw_send_challenge(int fd, orte_vpid_t src, orte_vpid_t dst,
                               const overlay_tcp_challenge_t *challenge)
{
    uint8_t payload[OVERLAY_TCP_MAX_HANDSHAKE_PAYLOAD];
    size_t length = 0;

    assert_int_equal(overlay_tcp_challenge_encode(challenge, payload, sizeof(payload), &length),
                     HERD_SUCCESS);
    raw_send_frame(fd, OVERLAY_TCP_MSG_CHALLENGE, 0, src, dst, payload, length);
}

/* A fake parent (a raw listener) answers the child's HELLO with reply. */
static node_t *child_of_fake_parent(int *listener, int *fd, char *uri, size_t size,
                                    uint8_t nonce_c[OVERLAY_TCP_NONCE_BYTES])
{
    node_t *child = node_new_with(1, 2, 2, "test-dvm", test_secret, false);
    node_t *nodes[] = {child};
    overlay_tcp_header_t header;
    overlay_tcp_hello_t hello;
    uint8_t payload[OVERLAY_TCP_MAX_HANDSHAKE_PAYLOAD];
    time_t deadline = time(NULL) + HANG_GUARD_SECONDS;

    *listener = raw_listener(false, uri, size);
    assert_int_equal(module->connect_parent(child->overlay, uri), HERD_SUCCESS);
    do {
        pump(nodes, 1);
        *fd = accept4(*listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        assert_true(time(NULL) <= deadline);
    } while (*fd < 0);
    assert_true(raw_read_frame(nodes, 1, *fd, &header, payload, sizeof(payload)));
    assert_int_equal(header.type, OVERLAY_TCP_MSG_HELLO);
    assert_int_equal(header.src, 1);
    assert_int_equal(header.dst, 0);
    assert_int_equal(overlay_tcp_hello_decode(payload, header.length, &hello, NULL, 0),
                     HERD_SUCCESS);
    assert_string_equal(hello.dvm_id, "test-dvm");
    assert_int_equal(hello.num_daemons, 2);
    assert_int_equal(hello.radix, 2);
    assert_string_equal(hello.uri, ""); /* not listening */
    memcpy(nonce_c, hello.nonce, OVERLAY_TCP_NONCE_BYTES);
    return child;
}

static void test_fake_parent(void **state)
{
    uint8_t nonce_c[OVERLAY_TCP_NONCE_BYTES];
    uint8_t key[OVERLAY_TCP_KEY_BYTES];
    overlay_tcp_challenge_t challenge;
    char uri[64];
    char *text;
    int listener;
    int fd;
    node_t *child;

    /* a challenge with a made-up MAC */
    herd_test_capture_start(&stderr_capture);
    child = child_of_fake_parent(&listener, &fd, uri, sizeof(uri), nonce_c);
    randombytes_buf(&challenge, sizeof(challenge));
    raw_send_challenge(fd, 0, 1, &challenge);
    run_until(&child, 1, node_has_lost, child, "the child to refuse the fake parent");
    text = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(child->lost[0].status, HERD_ERR_AUTH);
    assert_contains(text, "could not prove it knows the DVM secret");
    assert_contains(text, uri);
    assert_int_equal(node_stats(child).auth_failures, 1);
    assert_int_equal(node_stats(child).peers_rejected, 1);
    free(text);
    raw_expect_close(&child, 1, fd);
    close(listener);
    node_free(child);

    /* a correct MAC from the wrong daemon: vpid 1 is no parent of vpid 1 */
    herd_test_capture_start(&stderr_capture);
    child = child_of_fake_parent(&listener, &fd, uri, sizeof(uri), nonce_c);
    assert_int_equal(overlay_tcp_derive_key(test_secret, key), HERD_SUCCESS);
    randombytes_buf(challenge.nonce, sizeof(challenge.nonce));
    challenge.heartbeat_ms = 0;
    overlay_tcp_challenge_mac(key, nonce_c, challenge.nonce, 1, 1, 2, 2, "test-dvm", 0,
                              challenge.mac);
    raw_send_challenge(fd, 1, 1, &challenge);
    run_until(&child, 1, node_has_lost, child, "the child to refuse the wrong daemon");
    text = herd_test_capture_stop(&stderr_capture);
    assert_contains(child->lost[0].reason, "it answers as daemon 1 to daemon 1");
    free(text);
    raw_expect_close(&child, 1, fd);
    close(listener);
    node_free(child);

    /* something else entirely answers */
    herd_test_capture_start(&stderr_capture);
    child = child_of_fake_parent(&listener, &fd, uri, sizeof(uri), nonce_c);
    raw_write(fd, "HTTP/1.1 400 Bad Request\r\n\r\n", 28);
    run_until(&child, 1, node_has_lost, child, "the child to refuse a web server");
    text = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(child->lost[0].status, HERD_ERR_UNPACK_FAILURE);
    assert_contains(child->lost[0].reason, "magic number");
    free(text);
    raw_expect_close(&child, 1, fd);
    close(listener);
    node_free(child);

    /* the right answer, then data: the raw parent gets what was queued */
    child = child_of_fake_parent(&listener, &fd, uri, sizeof(uri), nonce_c);
    randombytes_buf(challenge.nonce, sizeof(challenge.nonce));
    overlay_tcp_challenge_mac(key, nonce_c, challenge.nonce, 0, 1, 2, 2, "test-dvm", 0,
                              challenge.mac);
    assert_int_equal(module->send(child->overlay, 0, TEST_TAG, "queued", 6), HERD_SUCCESS);
    raw_send_challenge(fd, 0, 1, &challenge);
    {
        overlay_tcp_header_t header;
        overlay_tcp_response_t response;
        uint8_t expected[OVERLAY_TCP_MAC_BYTES];
        uint8_t payload[64];

        assert_true(raw_read_frame(&child, 1, fd, &header, payload, sizeof(payload)));
        assert_int_equal(header.type, OVERLAY_TCP_MSG_RESPONSE);
        assert_int_equal(overlay_tcp_response_decode(payload, header.length, &response, NULL, 0),
                         HERD_SUCCESS);
        overlay_tcp_response_mac(key, challenge.nonce, nonce_c, 1, 0, 2, 2, "test-dvm", "", 0,
                                 expected);
        assert_true(overlay_tcp_mac_equal(expected, response.mac));
        assert_true(raw_read_frame(&child, 1, fd, &header, payload, sizeof(payload)));
        assert_int_equal(header.type, OVERLAY_TCP_MSG_DATA);
        assert_int_equal(header.tag, TEST_TAG);
        assert_int_equal(header.src, 1);
        assert_int_equal(header.dst, 0);
        assert_int_equal(header.length, 6);
        assert_memory_equal(payload, "queued", 6);
    }
    /* the parent dies: the child hears of it */
    close(fd);
    run_until(&child, 1, node_has_lost, child, "the child to notice its parent's death");
    assert_int_equal(child->lost[0].status, HERD_ERR_UNREACH);
    assert_contains(child->lost[0].reason, "closed unexpectedly");
    close(listener);
    node_free(child);
}

static void test_connect_failures(void **state)
{
    node_t *child = node_new_with(1, 2, 2, "test-dvm", test_secret, false);
    char uri[64];
    char *text;
    int listener;

    /* a port that is bound (so nobody else can take it) but not listening refuses */
    {
        struct sockaddr_in in = {.sin_family = AF_INET};
        socklen_t length = sizeof(in);

        listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(listener >= 0);
        in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        assert_int_equal(bind(listener, (struct sockaddr *) &in, sizeof(in)), 0);
        assert_int_equal(getsockname(listener, (struct sockaddr *) &in, &length), 0);
        snprintf(uri, sizeof(uri), "tcp://127.0.0.1:%u", (unsigned) ntohs(in.sin_port));
    }
    assert_int_equal(module->connect_parent(child->overlay, uri), HERD_SUCCESS);
    run_until(&child, 1, node_has_lost, child, "the refused connection");
    assert_int_equal(child->lost[0].peer, 0);
    assert_int_equal(child->lost[0].status, HERD_ERR_UNREACH);
    assert_contains(child->lost[0].reason, "could not connect to the parent daemon 0");
    assert_contains(child->lost[0].reason, uri);
    close(listener);

    /* bad addresses are refused at once, with a message */
    static const char *const bad[] = {"http://127.0.0.1:80", "tcp://localhost:80", "tcp://1.2.3.4"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        herd_test_capture_start(&stderr_capture);
        assert_int_equal(module->connect_parent(child->overlay, bad[i]), HERD_ERR_BAD_PARAM);
        text = herd_test_capture_stop(&stderr_capture);
        assert_contains(text, "Daemon 1 cannot connect to its parent daemon 0");
        assert_contains(text, bad[i]);
        free(text);
    }
    assert_int_equal(module->connect_parent(child->overlay, NULL), HERD_ERR_BAD_PARAM);
    assert_int_equal(child->num_lost, 1);
    node_free(child);
}

static void test_handshake_timeout(void **state)
{
    node_t *root;
    node_t *child;
    char uri[64];
    int listener;
    int fd;

    orte_overlay_base_close();
    setenv("HERD_MCA_overlay_base_handshake_timeout", "1", 1);
    open_overlay_verbose("1");
    root = node_new(0, 2, 2);

    /* a peer that connects and says nothing */
    herd_test_capture_start(&stderr_capture);
    fd = raw_connect(root->uri);
    expect_rejected(root, fd, 1, "it did not complete the handshake within 1 s");

    /* a parent that accepts (in the kernel's backlog) and never answers */
    child = node_new_with(1, 2, 2, "test-dvm", test_secret, false);
    listener = raw_listener(false, uri, sizeof(uri));
    assert_int_equal(module->connect_parent(child->overlay, uri), HERD_SUCCESS);
    run_until(&child, 1, node_has_lost, child, "the handshake to time out");
    assert_int_equal(child->lost[0].status, HERD_ERR_TIMEOUT);
    assert_contains(child->lost[0].reason, "did not complete the handshake within 1 s");
    assert_contains(child->lost[0].reason, "overlay_base_handshake_timeout");
    close(listener);
    node_free(child);
    node_free(root);
}

/* ------------------------------------------------------------------------------------------ */
/* trees */

typedef struct {
    node_t **nodes;
    uint32_t n;
    size_t expected;
} tree_wait_t;

static bool tree_all_got(void *arg)
{
    tree_wait_t *wait = arg;

    for (uint32_t v = 0; v < wait->n; v++) {
        if (wait->nodes[v]->num_got < wait->expected) {
            return false;
        }
    }
    return true;
}

static bool tree_all_up(void *arg)
{
    tree_wait_t *wait = arg;

    for (uint32_t v = 0; v < wait->n; v++) {
        uint32_t neighbours = (0 != v ? 1 : 0);
        uint64_t first = (uint64_t) v * wait->expected + 1;

        for (uint64_t c = first; c < first + wait->expected && c < wait->n; c++) {
            neighbours++;
        }
        if (node_stats(wait->nodes[v]).neighbours_up != neighbours) {
            return false;
        }
    }
    return true;
}

/* n daemons of a radix tree, each connected to its parent; returns once every link is up. */
static void tree_start(node_t **nodes, uint32_t n, uint32_t radix)
{
    tree_wait_t wait = {.nodes = nodes, .n = n, .expected = radix};

    for (uint32_t v = 0; v < n; v++) {
        nodes[v] = node_new(v, n, radix);
    }
    for (uint32_t v = 1; v < n; v++) {
        assert_int_equal(
            module->connect_parent(nodes[v]->overlay, nodes[orte_radix_parent(v, radix)]->uri),
            HERD_SUCCESS);
    }
    run_until(nodes, n, tree_all_up, &wait, "every daemon to connect");
}

/* Payload of the message from src to dst in round: its identity, then a pattern. */
static size_t tree_payload(uint32_t src, uint32_t dst, uint32_t round, uint8_t *out)
{
    size_t length = 12 + (src * 31u + dst * 17u + round * 7u) % 300u;

    memcpy(out, &src, 4);
    memcpy(out + 4, &dst, 4);
    memcpy(out + 8, &round, 4);
    for (size_t i = 12; i < length; i++) {
        out[i] = (uint8_t) (src * 7u + dst * 13u + round + i);
    }
    return length;
}

static void tree_send_round(node_t **nodes, uint32_t n, uint32_t round)
{
    uint8_t payload[512];

    for (uint32_t src = 0; src < n; src++) {
        for (uint32_t dst = 0; dst < n; dst++) {
            size_t length = tree_payload(src, dst, round, payload);

            assert_int_equal(module->send(nodes[src]->overlay, dst, TEST_TAG, payload, length),
                             HERD_SUCCESS);
        }
    }
}

static void run_tree(uint32_t n, uint32_t radix)
{
    node_t **nodes = calloc(n, sizeof(*nodes));
    uint8_t *seen = calloc((size_t) n * n * 2, 1);
    tree_wait_t wait = {.nodes = nodes, .n = n};
    uint8_t expected[512];
    int fds_before = count_fds();

    assert_non_null(nodes);
    assert_non_null(seen);
    for (uint32_t v = 0; v < n; v++) {
        nodes[v] = node_new(v, n, radix);
    }
    /* round 0 goes out before anyone is connected: every hop holds it until its link is up */
    tree_send_round(nodes, n, 0);
    for (uint32_t v = 1; v < n; v++) {
        assert_int_equal(
            module->connect_parent(nodes[v]->overlay, nodes[orte_radix_parent(v, radix)]->uri),
            HERD_SUCCESS);
    }
    wait.expected = radix;
    run_until(nodes, n, tree_all_up, &wait, "every daemon to connect");
    /* round 1 over established connections */
    tree_send_round(nodes, n, 1);
    wait.expected = 2 * (size_t) n;
    run_until(nodes, n, tree_all_got, &wait, "every message");
    pump(nodes, n); /* anything extra would show up now */

    uint64_t total_sent = 0, total_received = 0;
    for (uint32_t dst = 0; dst < n; dst++) {
        node_t *node = nodes[dst];
        orte_overlay_stats_t stats = node_stats(node);

        assert_int_equal(node->num_got, 2 * (size_t) n);
        for (size_t i = 0; i < node->num_got; i++) {
            const got_t *got = &node->got[i];
            uint32_t src;
            uint32_t to;
            uint32_t round;

            assert_true(got->length >= 12);
            memcpy(&src, got->data, 4);
            memcpy(&to, got->data + 4, 4);
            memcpy(&round, got->data + 8, 4);
            assert_int_equal(got->src, src);
            assert_int_equal(to, dst);
            assert_true(round < 2);
            assert_int_equal(got->tag, TEST_TAG);
            assert_int_equal(got->length, tree_payload(src, dst, round, expected));
            assert_memory_equal(got->data, expected, got->length);
            /* exactly once */
            assert_int_equal(seen[((size_t) dst * n + src) * 2 + round], 0);
            seen[((size_t) dst * n + src) * 2 + round] = 1;
        }
        /* what came from other daemons came over its sockets, with headers on top */
        uint64_t from_others = 0;
        for (size_t i = 0; i < node->num_got; i++) {
            from_others += node->got[i].src != dst ? node->got[i].length : 0;
        }
        assert_true(stats.bytes_received >= from_others);
        assert_true(n < 2 || stats.bytes_sent > 0);
        total_sent += stats.bytes_sent;
        total_received += stats.bytes_received;
        assert_int_equal(stats.messages_sent, 2 * (uint64_t) n);
        assert_int_equal(stats.messages_delivered, 2 * (uint64_t) n);
        assert_int_equal(stats.messages_dropped, 0);
        assert_int_equal(stats.peers_rejected, 0);
        assert_int_equal(stats.protocol_errors, 0);
        assert_int_equal(stats.bytes_queued, 0);
        assert_int_equal(node->num_lost, 0);
        /* daemon 1 is an inner daemon of every tree here: traffic passes through it */
        if (1 == dst && n > radix + 1) {
            assert_true(stats.messages_forwarded > 0);
        }
    }
    /* every byte written was read (reads also count the handshakes) */
    assert_true(total_sent <= total_received);
    for (uint32_t v = 0; v < n; v++) {
        node_free(nodes[v]);
    }
    /* finalize closed every socket, and the event bases went with the nodes */
    assert_int_equal(count_fds(), fds_before);
    free(seen);
    free(nodes);
}

static void test_tree_7_radix_2(void **state)
{
    run_tree(7, 2);
}

static void test_tree_20_radix_3(void **state)
{
    run_tree(20, 3);
}

static void test_tree_20_radix_2_and_chain(void **state)
{
    run_tree(20, 2);
    run_tree(6, 1);
}

typedef struct {
    node_t *node;
    size_t count;
} got_wait_t;

static bool node_got_count(void *arg)
{
    got_wait_t *wait = arg;

    return wait->node->num_got >= wait->count;
}

static bool node_lost_count(void *arg)
{
    got_wait_t *wait = arg;

    return wait->node->num_lost >= wait->count;
}

typedef struct {
    node_t **nodes;
    const orte_vpid_t *vpids;
    size_t count;
    size_t expected;
} some_wait_t;

static bool some_got(void *arg)
{
    some_wait_t *wait = arg;
    for (size_t i = 0; i < wait->count; i++) {
        if (wait->nodes[wait->vpids[i]]->num_got < wait->expected) {
            return false;
        }
    }
    return true;
}

/* 13 daemons, radix 3; daemon 1 (children 4, 5, 6) dies. The root routes around it, 4 and 6
 * connect to the root as adopted children, 5 only later (messages for it wait); a stranger
 * claiming to be below a live child is still refused. Messages then flow between every pair of
 * live daemons, through the adopted links, and nothing goes to the dead one. */
static void test_route_around_lost(void **state)
{
    open_overlay_verbose("1"); /* to read why the stranger below is refused */
    const uint32_t n = 13, radix = 3;
    node_t *nodes[13];
    node_t *live[13];
    orte_vpid_t live_vpids[13];
    size_t num_live = 0;
    tree_start(nodes, n, radix);
    node_free(nodes[1]); /* killed: its sockets close */
    nodes[1] = NULL;
    for (uint32_t v = 0; v < n; v++) {
        if (NULL != nodes[v]) {
            live[num_live] = nodes[v];
            live_vpids[num_live++] = v;
        }
    }
    got_wait_t lost = {.node = nodes[4], .count = 1};
    run_until(live, num_live, node_lost_count, &lost, "daemon 4 to lose its parent");
    lost.node = nodes[0];
    run_until(live, num_live, node_lost_count, &lost, "the root to lose daemon 1");
    assert_int_equal(nodes[0]->lost[0].peer, 1);
    /* the DVM decides: route around it */
    assert_int_equal(module->route_around(nodes[0]->overlay, 1), HERD_SUCCESS);
    assert_int_equal(module->route_around(nodes[0]->overlay, 0), HERD_ERR_BAD_PARAM);
    assert_int_equal(module->connect_ancestor(nodes[4]->overlay, 0, nodes[0]->uri), HERD_SUCCESS);
    assert_int_equal(module->connect_ancestor(nodes[6]->overlay, 0, nodes[0]->uri), HERD_SUCCESS);
    assert_int_equal(module->connect_ancestor(nodes[6]->overlay, 5, nodes[0]->uri),
                     HERD_ERR_BAD_PARAM); /* not an ancestor */
    /* to the dead one: unreachable at once where it is known down */
    assert_int_equal(module->send(nodes[0]->overlay, 1, TEST_TAG, "x", 1), HERD_ERR_UNREACH);
    /* every live daemon to every live daemon; 5 connects only now, its messages waited */
    for (size_t i = 0; i < num_live; i++) {
        for (size_t j = 0; j < num_live && 5 != live_vpids[i]; j++) {
            assert_int_equal(module->send(live[i]->overlay, live_vpids[j], TEST_TAG, "hi", 2),
                             HERD_SUCCESS);
        }
    }
    pump(live, num_live);
    /* 5 has no parent until it connects: it cannot send yet */
    assert_int_equal(module->send(nodes[5]->overlay, 0, TEST_TAG, "hi", 2), HERD_ERR_UNREACH);
    assert_int_equal(module->connect_ancestor(nodes[5]->overlay, 0, nodes[0]->uri), HERD_SUCCESS);
    for (size_t j = 0; j < num_live; j++) {
        assert_int_equal(module->send(nodes[5]->overlay, live_vpids[j], TEST_TAG, "hi", 2),
                         HERD_SUCCESS);
    }
    some_wait_t got = {
        .nodes = nodes, .vpids = live_vpids, .count = num_live, .expected = num_live};
    run_until(live, num_live, some_got, &got, "every message around the dead daemon");
    pump(live, num_live);
    for (size_t i = 0; i < num_live; i++) {
        assert_int_equal(live[i]->num_got, num_live);
    }
    /* a stranger claiming to be daemon 7 (below the live daemon 2) is refused by the root */
    uint8_t nonce[OVERLAY_TCP_NONCE_BYTES];
    herd_test_capture_start(&stderr_capture);
    int fd = raw_connect(nodes[0]->uri);
    raw_hello(fd, 7, 0, n, radix, "test-dvm", "", nonce);
    raw_expect_close(live, num_live, fd);
    char *text = herd_test_capture_stop(&stderr_capture);
    assert_contains(text, "daemon 7 is not a child of daemon 0");
    free(text);
    for (uint32_t v = 0; v < n; v++) {
        if (NULL != nodes[v]) {
            node_free(nodes[v]);
        }
    }
}

/* 13 daemons, radix 3; daemon 1 dies, the root routes around it and its children 4, 5, 6
 * re-attach to the root. A new daemon 1 (herd-dvm --add-host) connects to the root again: the
 * root reaches it directly, while messages for 4, 5, 6 still go around it (to their adopted
 * links), never through the new daemon 1. */
static void test_route_to_rejoined(void **state)
{
    const uint32_t n = 13, radix = 3;
    node_t *nodes[13];
    tree_start(nodes, n, radix);
    node_free(nodes[1]);
    nodes[1] = NULL;
    node_t *live[13];
    size_t num_live = 0;
    for (uint32_t v = 0; v < n; v++) {
        if (NULL != nodes[v]) {
            live[num_live++] = nodes[v];
        }
    }
    got_wait_t lost = {.node = nodes[0], .count = 1};
    run_until(live, num_live, node_lost_count, &lost, "the root to lose daemon 1");
    assert_int_equal(module->route_around(nodes[0]->overlay, 1), HERD_SUCCESS);
    for (orte_vpid_t c = 4; c <= 6; c++) {
        assert_int_equal(module->connect_ancestor(nodes[c]->overlay, 0, nodes[0]->uri),
                         HERD_SUCCESS);
    }
    assert_int_equal(module->send(nodes[0]->overlay, 1, TEST_TAG, "x", 1), HERD_ERR_UNREACH);
    /* the new daemon 1 */
    nodes[1] = node_new(1, n, radix);
    live[num_live++] = nodes[1];
    assert_int_equal(module->connect_parent(nodes[1]->overlay, nodes[0]->uri), HERD_SUCCESS);
    assert_int_equal(module->send(nodes[1]->overlay, 0, TEST_TAG, "up", 2), HERD_SUCCESS);
    got_wait_t got = {.node = nodes[0], .count = 1};
    run_until(live, num_live, node_got_count, &got, "the root to hear from the new daemon 1");
    assert_int_equal(module->send(nodes[0]->overlay, 1, TEST_TAG, "ack", 3), HERD_SUCCESS);
    got.node = nodes[1];
    run_until(live, num_live, node_got_count, &got, "the new daemon 1 to hear from the root");
    for (orte_vpid_t c = 4; c <= 6; c++) {
        assert_int_equal(module->send(nodes[0]->overlay, c, TEST_TAG, "hi", 2), HERD_SUCCESS);
        got.node = nodes[c];
        run_until(live, num_live, node_got_count, &got, "an old child of daemon 1 to hear");
    }
    pump(live, num_live);
    assert_int_equal(nodes[1]->num_got, 1); /* nothing for 4, 5, 6 went through it */
    for (uint32_t v = 0; v < n; v++) {
        node_free(nodes[v]);
    }
}

static void fill_pattern(uint8_t *data, size_t length, uint32_t seed)
{
    uint32_t x = seed * 2654435761u + 1;

    for (size_t i = 0; i < length; i++) {
        x = x * 1103515245u + 12345u;
        data[i] = (uint8_t) (x >> 16);
    }
}

static void test_large_messages(void **state)
{
    const uint32_t n = 7;
    const size_t big = 8u * 1024 * 1024 + 3;
    const size_t piece = 1024 * 1024;
    node_t *nodes[7];
    uint8_t *data = malloc(big);
    uint8_t *pieces = malloc(3 * piece);
    tree_wait_t up = {.nodes = nodes, .n = n, .expected = 2};
    got_wait_t at_6;
    got_wait_t at_3;

    assert_non_null(data);
    assert_non_null(pieces);
    for (uint32_t v = 0; v < n; v++) {
        nodes[v] = node_new(v, n, 2);
    }
    for (uint32_t v = 1; v < n; v++) {
        assert_int_equal(
            module->connect_parent(nodes[v]->overlay, nodes[orte_radix_parent(v, 2)]->uri),
            HERD_SUCCESS);
    }
    run_until(nodes, n, tree_all_up, &up, "every daemon to connect");

    /* 3 -> 1 -> 0 -> 2 -> 6: several MB through three forwarding daemons, three times in a
     * row so the queues fill up behind one another */
    for (uint32_t i = 0; i < 3; i++) {
        fill_pattern(data, big, i);
        assert_int_equal(module->send(nodes[3]->overlay, 6, TEST_TAG, data, big - i), HERD_SUCCESS);
    }
    /* and back, gathered from pieces */
    fill_pattern(pieces, 3 * piece, 99);
    struct iovec iov[3] = {
        {.iov_base = pieces, .iov_len = piece},
        {.iov_base = pieces + piece, .iov_len = 0},
        {.iov_base = pieces + piece, .iov_len = 2 * piece},
    };
    assert_int_equal(module->sendv(nodes[6]->overlay, 3, TEST_TAG, iov, 3), HERD_SUCCESS);
    at_6 = (got_wait_t){.node = nodes[6], .count = 3};
    at_3 = (got_wait_t){.node = nodes[3], .count = 1};
    run_until(nodes, n, node_got_count, &at_6, "the large messages");
    run_until(nodes, n, node_got_count, &at_3, "the gathered message");
    for (uint32_t i = 0; i < 3; i++) {
        fill_pattern(data, big, i);
        assert_int_equal(nodes[6]->got[i].src, 3);
        assert_int_equal(nodes[6]->got[i].length, big - i);
        assert_memory_equal(nodes[6]->got[i].data, data, big - i);
    }
    assert_int_equal(nodes[3]->got[0].src, 6);
    assert_int_equal(nodes[3]->got[0].length, 3 * piece);
    assert_memory_equal(nodes[3]->got[0].data, pieces, 3 * piece);
    assert_int_equal(node_stats(nodes[0]).messages_forwarded, 4);
    assert_int_equal(node_stats(nodes[1]).messages_forwarded, 4);
    assert_int_equal(node_stats(nodes[2]).messages_forwarded, 4);
    for (uint32_t v = 0; v < n; v++) {
        assert_int_equal(node_stats(nodes[v]).bytes_queued, 0);
        node_free(nodes[v]);
    }
    free(pieces);
    free(data);
}

static void test_message_size_limit(void **state)
{
    const size_t limit = 1024 * 1024;
    uint8_t *data = calloc(1, 2 * limit);
    node_t *root;
    node_t *child;
    char *text;
    int index = opal_mca_var_find("overlay_tcp_max_message_size");

    assert_non_null(data);
    assert_true(index >= 0);
    /* the root accepts at most 1 MiB, the child (default 64 MiB) sends 2 MiB */
    assert_int_equal(opal_mca_var_set_value(index, "1m"), HERD_SUCCESS);
    root = node_new(0, 2, 2);
    assert_int_equal(opal_mca_var_set_value(index, "64m"), HERD_SUCCESS);
    child = node_new(1, 2, 2);
    node_t *nodes[] = {root, child};

    herd_test_capture_start(&stderr_capture);
    assert_int_equal(module->send(root->overlay, 1, TEST_TAG, data, limit + 1), HERD_ERR_BAD_PARAM);
    text = herd_test_capture_stop(&stderr_capture);
    assert_contains(text, "Daemon 0 was asked to send a message of 1048577 bytes to daemon 1");
    assert_contains(text, "overlay_tcp_max_message_size");
    free(text);
    /* exactly the limit is fine */
    assert_int_equal(module->send(root->overlay, 0, TEST_TAG, data, limit), HERD_SUCCESS);

    assert_int_equal(module->connect_parent(child->overlay, root->uri), HERD_SUCCESS);
    assert_int_equal(module->send(child->overlay, 0, TEST_TAG, data, 2 * limit), HERD_SUCCESS);
    herd_test_capture_start(&stderr_capture);
    run_until(nodes, 2, node_has_lost, root, "the root to drop the child");
    run_until(nodes, 2, node_has_lost, child, "the child to notice");
    text = herd_test_capture_stop(&stderr_capture);
    assert_contains(text, "of 2097152 bytes");
    assert_contains(text, "at least 2097152 bytes");
    assert_int_equal(root->lost[0].peer, 1);
    assert_int_equal(root->lost[0].status, HERD_ERR_UNPACK_FAILURE);
    assert_int_equal(child->lost[0].peer, 0);
    assert_int_equal(child->lost[0].status, HERD_ERR_UNREACH);
    assert_int_equal(node_stats(root).protocol_errors, 1);
    assert_int_equal(root->num_got, 1); /* only its own message */
    free(text);
    node_free(child);
    node_free(root);
    free(data);
}

/* ------------------------------------------------------------------------------------------ */
/* losing neighbours */

static void test_finalized_child(void **state)
{
    node_t *root = node_new(0, 3, 2);
    node_t *child = node_new(1, 3, 2);
    node_t *nodes[] = {root, child};
    stat_wait_t up = {.node = root, .count = 1};

    assert_int_equal(module->connect_parent(child->overlay, root->uri), HERD_SUCCESS);
    run_until(nodes, 2, node_up, &up, "the child to connect");
    module->finalize(child->overlay);
    child->overlay = NULL;
    run_until(nodes, 1, node_has_lost, root, "the root to notice");
    assert_int_equal(root->num_lost, 1);
    assert_int_equal(root->lost[0].peer, 1);
    assert_int_equal(root->lost[0].status, HERD_SUCCESS);
    assert_contains(root->lost[0].reason, "daemon 1 (127.0.0.1:");
    assert_contains(root->lost[0].reason, "finalized");
    assert_int_equal(node_stats(root).neighbours_up, 0);
    /* routes through the lost child fail; other routes still work */
    assert_int_equal(module->send(root->overlay, 1, TEST_TAG, "x", 1), HERD_ERR_UNREACH);
    assert_int_equal(module->send(root->overlay, 2, TEST_TAG, "x", 1), HERD_SUCCESS);
    assert_int_equal(module->send(root->overlay, 0, TEST_TAG, "x", 1), HERD_SUCCESS);
    run_until(nodes, 1, node_has_got, root, "the message to self");
    node_free(child);
    node_free(root);
}

static void test_killed_daemon(void **state)
{
    node_t *root = node_new(0, 2, 2);
    node_t *nodes[] = {root};
    pid_t pid;
    int status = 0;

    fflush(stdout);
    fflush(stderr);
    pid = fork();
    assert_true(pid >= 0);
    if (0 == pid) {
        /* a real daemon in another process: connect, report in, then wait to be killed */
        opal_event_base_t *base = NULL;
        orte_overlay_t *overlay = NULL;
        orte_overlay_config_t config;

        if (HERD_SUCCESS != opal_event_base_create(&base)) {
            _exit(2);
        }
        config = make_config(base, 1, 2, 2, "test-dvm", test_secret);
        if (HERD_SUCCESS != module->init(&config, &overlay) ||
            HERD_SUCCESS != module->send(overlay, 0, TEST_TAG, "alive", 5) ||
            HERD_SUCCESS != module->connect_parent(overlay, root->uri)) {
            _exit(3);
        }
        for (;;) {
            opal_event_base_loop(base, false);
        }
    }
    run_until(nodes, 1, node_has_got, root, "the daemon in the other process to report in");
    assert_memory_equal(root->got[0].data, "alive", 5);
    assert_int_equal(kill(pid, SIGKILL), 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && SIGKILL == WTERMSIG(status));
    run_until(nodes, 1, node_has_lost, root, "the root to notice the kill");
    assert_int_equal(root->lost[0].peer, 1);
    assert_int_equal(root->lost[0].status, HERD_ERR_UNREACH);
    assert_contains(root->lost[0].reason, "daemon 1 (127.0.0.1:");
    assert_int_equal(module->send(root->overlay, 1, TEST_TAG, "x", 1), HERD_ERR_UNREACH);
    node_free(root);
}

/* An authenticated neighbour that misbehaves is cut off and reported. */
static void expect_cut_off(node_t *root, int fd, uint64_t count, const char *why_part)
{
    node_t *nodes[] = {root};
    stat_wait_t errors = {.node = root, .count = count};
    char *text;

    raw_expect_close(nodes, 1, fd);
    run_until(nodes, 1, node_protocol_errors, &errors, "the root to cut off the raw child");
    text = herd_test_capture_stop(&stderr_capture);
    assert_contains(text, why_part);
    free(text);
    assert_int_equal(root->num_lost, (size_t) count);
    assert_int_equal(root->lost[count - 1].peer, 1);
    assert_int_equal(root->lost[count - 1].status, HERD_ERR_UNPACK_FAILURE);
}

static void test_misbehaving_neighbour(void **state)
{
    open_overlay_verbose("1"); /* to read why the second connection is refused */
    node_t *root = node_new(0, 5, 2);
    node_t *nodes[] = {root};
    uint64_t count = 0;
    uint8_t zero[4] = {0, 0, 0, 0};
    int fd;

    /* the hand-made child is a good citizen first */
    fd = raw_child(nodes, 1, root->uri, 1, 0, 5, 2, test_secret);
    raw_send_frame(fd, OVERLAY_TCP_MSG_DATA, TEST_TAG, 1, 0, "hand-made", 9);
    run_until(nodes, 1, node_has_got, root, "the raw child's message");
    assert_int_equal(root->got[0].src, 1);
    assert_memory_equal(root->got[0].data, "hand-made", 9);
    /* then forges a source outside its subtree */
    herd_test_capture_start(&stderr_capture);
    raw_send_frame(fd, OVERLAY_TCP_MSG_DATA, TEST_TAG, 2, 0, "forged", 6);
    expect_cut_off(root, fd, ++count, "cannot come through daemon 1 along the tree");

    /* a lost child may come back; this time it sends a message that loops back to it */
    herd_test_capture_start(&stderr_capture);
    fd = raw_child(nodes, 1, root->uri, 1, 0, 5, 2, test_secret);
    raw_send_frame(fd, OVERLAY_TCP_MSG_DATA, TEST_TAG, 1, 3, "loop", 4);
    expect_cut_off(root, fd, ++count, "a message from daemon 1 to daemon 3 cannot come through");

    herd_test_capture_start(&stderr_capture);
    fd = raw_child(nodes, 1, root->uri, 1, 0, 5, 2, test_secret);
    raw_send_frame(fd, OVERLAY_TCP_MSG_DATA, TEST_TAG, 1, 9, "nowhere", 7);
    expect_cut_off(root, fd, ++count, "daemons 0 to 4");

    herd_test_capture_start(&stderr_capture);
    fd = raw_child(nodes, 1, root->uri, 1, 0, 5, 2, test_secret);
    raw_write(fd, "garbage garbage garbage garbage", 31);
    expect_cut_off(root, fd, ++count, "magic number");

    herd_test_capture_start(&stderr_capture);
    fd = raw_child(nodes, 1, root->uri, 1, 0, 5, 2, test_secret);
    raw_send_frame(fd, OVERLAY_TCP_MSG_BYE, 0, 1, 0, zero, 4);
    expect_cut_off(root, fd, ++count, "reason 0");

    uint8_t nonce[OVERLAY_TCP_NONCE_BYTES];
    herd_test_capture_start(&stderr_capture);
    fd = raw_child(nodes, 1, root->uri, 1, 0, 5, 2, test_secret);
    raw_hello(fd, 1, 0, 5, 2, "test-dvm", "", nonce);
    expect_cut_off(root, fd, ++count,
                   "a HELLO frame arrived where only DATA, HEARTBEAT or BYE may come");

    /* a 100 MiB frame against the default 64 MiB: refused on the header, nothing allocated */
    herd_test_capture_start(&stderr_capture);
    fd = raw_child(nodes, 1, root->uri, 1, 0, 5, 2, test_secret);
    {
        overlay_tcp_header_t header = {.version = OVERLAY_TCP_PROTOCOL_VERSION,
                                       .type = OVERLAY_TCP_MSG_DATA,
                                       .tag = 1,
                                       .src = 1,
                                       .dst = 0,
                                       .length = 100u << 20};
        uint8_t bytes[OVERLAY_TCP_HEADER_BYTES];

        overlay_tcp_header_encode(&header, bytes);
        raw_write(fd, bytes, sizeof(bytes));
    }
    expect_cut_off(root, fd, ++count, "overlay_tcp_max_message_size");

    /* a second connection for a child that is connected is refused */
    fd = raw_child(nodes, 1, root->uri, 1, 0, 5, 2, test_secret);
    raw_send_frame(fd, OVERLAY_TCP_MSG_DATA, TEST_TAG, 1, 0, "again", 5);
    got_wait_t two = {.node = root, .count = 2};
    run_until(nodes, 1, node_got_count, &two, "the returning child's message");
    herd_test_capture_start(&stderr_capture);
    int second = raw_connect(root->uri);
    raw_hello(second, 1, 0, 5, 2, "test-dvm", "", nonce);
    expect_rejected(root, second, node_stats(root).peers_rejected + 1,
                    "daemon 1 is already connected from 127.0.0.1:");
    /* the first one is still fine */
    raw_send_frame(fd, OVERLAY_TCP_MSG_DATA, TEST_TAG, 1, 0, "still", 5);
    got_wait_t three = {.node = root, .count = 3};
    run_until(nodes, 1, node_got_count, &three, "the first connection's message");
    close(fd);
    got_wait_t lost = {.node = root, .count = (size_t) count + 1};
    run_until(nodes, 1, node_lost_count, &lost, "the last loss");
    assert_int_equal(root->lost[count].status, HERD_ERR_UNREACH);
    assert_int_equal(node_stats(root).protocol_errors, count);
    assert_int_equal(node_stats(root).auth_failures, 0);
    node_free(root);
}

static void test_finalize_from_callback(void **state)
{
    node_t *root = node_new(0, 2, 2);
    node_t *child = node_new(1, 2, 2);
    node_t *nodes[] = {root, child};

    root->finalize_on_recv = true;
    assert_int_equal(module->connect_parent(child->overlay, root->uri), HERD_SUCCESS);
    /* two messages in one go: the second must not be handled after the first finalized */
    assert_int_equal(module->send(child->overlay, 0, TEST_TAG, "first", 5), HERD_SUCCESS);
    assert_int_equal(module->send(child->overlay, 0, TEST_TAG, "second", 6), HERD_SUCCESS);
    run_until(nodes, 2, node_has_got, root, "the message that finalizes");
    assert_null(root->overlay);
    run_until(&child, 1, node_has_lost, child, "the child to hear goodbye");
    assert_int_equal(child->lost[0].status, HERD_SUCCESS);
    pump(nodes, 2);
    assert_int_equal(root->num_got, 1);
    node_free(child);
    node_free(root);
}

static void test_adopt_listener(void **state)
{
    node_t *root = node_new_with(0, 2, 2, "test-dvm", test_secret, false);
    node_t *child = node_new_with(1, 2, 2, "test-dvm", test_secret, false);
    node_t *nodes[] = {root, child};
    char uri[64];
    char *adopted = NULL;
    char *text;
    int listener;
    int fd;

    /* a wildcard socket: the advertised address comes from the allowed interfaces */
    listener = raw_listener(true, uri, sizeof(uri));
    assert_int_equal(module->adopt_listener(root->overlay, listener, &adopted), HERD_SUCCESS);
    assert_string_equal(adopted, uri);
    assert_int_equal(module->adopt_listener(root->overlay, listener, &adopted), HERD_ERR_EXISTS);
    assert_int_equal(module->listen(root->overlay, &adopted), HERD_ERR_EXISTS);
    assert_true(fcntl(listener, F_GETFL) & O_NONBLOCK);
    assert_true(fcntl(listener, F_GETFD) & FD_CLOEXEC);
    assert_int_equal(module->connect_parent(child->overlay, adopted), HERD_SUCCESS);
    assert_int_equal(module->send(child->overlay, 0, TEST_TAG, "adopted", 7), HERD_SUCCESS);
    run_until(nodes, 2, node_has_got, root, "a message over the adopted socket");
    free(adopted);
    adopted = NULL;
    node_free(child);
    node_free(root); /* closes the adopted socket */

    /* what is not a listening TCP socket is refused, and stays the caller's */
    root = node_new_with(0, 2, 2, "test-dvm", test_secret, false);
    int pipe_fds[2];
    assert_int_equal(pipe(pipe_fds), 0);
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(module->adopt_listener(root->overlay, pipe_fds[0], &adopted),
                     HERD_ERR_BAD_PARAM);
    text = herd_test_capture_stop(&stderr_capture);
    assert_contains(text, "it is not an open socket");
    free(text);
    assert_true(fcntl(pipe_fds[0], F_GETFD) >= 0);
    close(pipe_fds[0]);
    close(pipe_fds[1]);

    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(module->adopt_listener(root->overlay, fd, &adopted), HERD_ERR_BAD_PARAM);
    text = herd_test_capture_stop(&stderr_capture);
    assert_contains(text, "listen() was not called on it");
    free(text);
    close(fd);

    fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(module->adopt_listener(root->overlay, fd, &adopted), HERD_ERR_BAD_PARAM);
    text = herd_test_capture_stop(&stderr_capture);
    assert_contains(text, "it is not a stream (TCP) socket");
    free(text);
    close(fd);

    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(module->adopt_listener(root->overlay, fd, &adopted), HERD_ERR_BAD_PARAM);
    text = herd_test_capture_stop(&stderr_capture);
    assert_contains(text, "it is not an IPv4 or IPv6 socket");
    free(text);
    close(fd);
    assert_int_equal(module->adopt_listener(root->overlay, -1, &adopted), HERD_ERR_BAD_PARAM);
    assert_null(adopted);

    /* a socket bound to one address is advertised as bound */
    listener = raw_listener(false, uri, sizeof(uri));
    assert_int_equal(module->adopt_listener(root->overlay, listener, &adopted), HERD_SUCCESS);
    assert_string_equal(adopted, uri);
    free(adopted);
    node_free(root);
}

/* A socketpair made before a fork: both ends adopted, no handshake, messages both ways (also
 * what was queued before), an orderly goodbye; bad descriptors refused and left to the caller. */
static void test_adopt_peer(void **state)
{
    node_t *root = node_new_with(0, 3, 2, "test-dvm", test_secret, false);
    node_t *child = node_new_with(1, 3, 2, "test-dvm", test_secret, false);
    node_t *nodes[] = {root, child};
    int pair[2];
    char *text;

    assert_non_null(module->adopt_peer);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
    /* held for the child until its connection is there */
    assert_int_equal(module->send(root->overlay, 1, TEST_TAG, "early", 5), HERD_SUCCESS);
    assert_int_equal(module->adopt_peer(root->overlay, pair[0], 1), HERD_SUCCESS);
    assert_true(fcntl(pair[0], F_GETFL) & O_NONBLOCK);
    assert_true(fcntl(pair[0], F_GETFD) & FD_CLOEXEC);
    assert_int_equal(module->adopt_peer(root->overlay, pair[0], 1), HERD_ERR_EXISTS);
    assert_int_equal(module->adopt_peer(child->overlay, pair[1], 0), HERD_SUCCESS);
    assert_int_equal(node_stats(root).neighbours_up, 1);
    assert_int_equal(node_stats(child).neighbours_up, 1);
    assert_int_equal(module->send(child->overlay, 0, TEST_TAG, "hello", 5), HERD_SUCCESS);
    run_until(nodes, 2, node_has_got, root, "the child's message over the socketpair");
    run_until(nodes, 2, node_has_got, child, "the root's queued message over the socketpair");
    assert_int_equal(root->got[0].src, 1);
    assert_memory_equal(root->got[0].data, "hello", 5);
    assert_int_equal(child->got[0].src, 0);
    assert_memory_equal(child->got[0].data, "early", 5);
    assert_int_equal(node_stats(root).peers_rejected, 0);
    /* the child leaves in order: a goodbye, not a loss */
    module->finalize(child->overlay);
    child->overlay = NULL;
    run_until(nodes, 1, node_has_lost, root, "the root to see the child leave");
    assert_int_equal(root->lost[0].peer, 1);
    assert_int_equal(root->lost[0].status, HERD_SUCCESS);
    assert_int_equal(node_stats(root).neighbours_up, 0);
    node_free(child);
    node_free(root);

    /* the other end closed without a word (the daemon died before adopting it): a loss */
    root = node_new_with(0, 2, 2, "test-dvm", test_secret, false);
    nodes[0] = root;
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
    assert_int_equal(module->adopt_peer(root->overlay, pair[0], 1), HERD_SUCCESS);
    close(pair[1]);
    run_until(nodes, 1, node_has_lost, root, "the root to see the closed end");
    assert_int_equal(root->lost[0].peer, 1);
    assert_int_equal(root->lost[0].status, HERD_ERR_UNREACH);
    assert_contains(root->lost[0].reason, "a socket shared at fork");
    node_free(root);

    /* not a neighbour, not a stream, not connected, not a socket: refused, the caller's still */
    root = node_new_with(0, 7, 2, "test-dvm", test_secret, false);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
    assert_int_equal(module->adopt_peer(root->overlay, pair[0], 3), HERD_ERR_BAD_PARAM);
    assert_int_equal(module->adopt_peer(root->overlay, pair[0], 0), HERD_ERR_BAD_PARAM);
    assert_int_equal(module->adopt_peer(root->overlay, -1, 1), HERD_ERR_BAD_PARAM);
    assert_true(fcntl(pair[0], F_GETFD) >= 0);
    close(pair[0]);
    close(pair[1]);
    struct {
        int domain, type;
        const char *why;
    } bad[] = {{AF_UNIX, SOCK_DGRAM, "it is not a stream socket"},
               {AF_UNIX, SOCK_STREAM, "it is not connected"},
               {-1, 0, "it is not an open socket"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        int fds[2] = {-1, -1};
        if (bad[i].domain < 0) {
            assert_int_equal(pipe(fds), 0);
        } else {
            fds[0] = socket(bad[i].domain, bad[i].type | SOCK_CLOEXEC, 0);
            assert_true(fds[0] >= 0);
        }
        herd_test_capture_start(&stderr_capture);
        assert_int_equal(module->adopt_peer(root->overlay, fds[0], 2), HERD_ERR_BAD_PARAM);
        text = herd_test_capture_stop(&stderr_capture);
        assert_contains(text, bad[i].why);
        assert_contains(text, "as its connection to daemon 2");
        free(text);
        assert_true(fcntl(fds[0], F_GETFD) >= 0);
        close(fds[0]);
        if (fds[1] >= 0) {
            close(fds[1]);
        }
    }
    assert_int_equal(node_stats(root).neighbours_up, 0);
    node_free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_header_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_header_malformed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hello_codec, setup, teardown),
        cmocka_unit_test_setup_teardown(test_small_codecs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_data_decode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_macs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_uri, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interface_choice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interface_lists, setup, teardown),
        cmocka_unit_test_setup_teardown(test_framework_selects_tcp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_init_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mca_include_and_exclude, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_usable_interface, setup, teardown),
        cmocka_unit_test_setup_teardown(test_register_recv, setup, teardown),
        cmocka_unit_test_setup_teardown(test_handshake_and_messages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrong_secret, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrong_dvm_id, setup, teardown),
        cmocka_unit_test_setup_teardown(test_garbage_peers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fake_parent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_connect_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_handshake_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tree_7_radix_2, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tree_20_radix_3, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tree_20_radix_2_and_chain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_large_messages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_message_size_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalized_child, setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_daemon, setup, teardown),
        cmocka_unit_test_setup_teardown(test_misbehaving_neighbour, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize_from_callback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_adopt_listener, setup, teardown),
        cmocka_unit_test_setup_teardown(test_adopt_peer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_route_around_lost, setup, teardown),
        cmocka_unit_test_setup_teardown(test_route_to_rejoined, setup, teardown),
    };

    /* SIGPIPE must never be what ends a daemon: leave it at its default to prove it */
    signal(SIGPIPE, SIG_DFL);
    if (sodium_init() < 0) {
        return 1;
    }
    for (size_t i = 0; i < sizeof(wrong_secret); i++) {
        wrong_secret[i] = (uint8_t) (test_secret[i] ^ 0x5a);
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
