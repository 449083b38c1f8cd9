/* SPDX-License-Identifier: BSD-3-Clause */
/* The overlay's watch over its connections: heartbeats (an idle connection carries them, a busy
 * one does not, a silent neighbour is lost as having stopped answering, both ends agree on the
 * smaller timeout, 0 switches them off) and strangers at a listener (refused at the first wrong
 * byte, quietly unless overlay_base_verbose asks, dropped when they stay silent, the oldest
 * dropped for a newcomer when too many are pending, no descriptor kept). */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "opal/event/event.h"
#include "support/capture.h"
#include "orte/mca/overlay/overlay.h"

/* The wire format is pure functions: hand-made peers use it directly. */
#include "orte/mca/overlay/tcp/overlay_tcp_sodium.c"
#include "orte/mca/overlay/tcp/overlay_tcp_wire.c"

/* Generous: only a hang guard, never a timing assertion. */
#define HANG_GUARD_SECONDS 300
#define TEST_TAG           42

static const uint8_t test_secret[ORTE_OVERLAY_SECRET_BYTES] = {
    0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe,
    0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00,
};

static const orte_overlay_module_t *module;
static int fds_at_setup;
static herd_test_capture_t stderr_capture;

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

/* ------------------------------------------------------------------------------------------ */
/* endpoints, each on its own event base, driven from the test */

typedef struct {
    opal_event_base_t *base;
    opal_event_t *tick; /* a zero timer: makes one loop round return at once */
    orte_overlay_t *overlay;
    char *uri;
    size_t num_got;
    size_t num_lost;
    orte_vpid_t lost_peer;
    int lost_status;
    char lost_reason[512];
} node_t;

static void on_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                    size_t length, void *arg)
{
    ((node_t *) arg)->num_got++;
}

static void on_lost(orte_overlay_t *overlay, orte_vpid_t peer, int status, const char *reason,
                    void *arg)
{
    node_t *node = arg;

    node->num_lost++;
    node->lost_peer = peer;
    node->lost_status = status;
    snprintf(node->lost_reason, sizeof(node->lost_reason), "%s", reason);
}

static void tick_cb(int fd, short what, void *arg)
{
}

static node_t *node_new(orte_vpid_t vpid, uint32_t n, uint32_t heartbeat_ms, bool listen)
{
    node_t *node = calloc(1, sizeof(*node));
    orte_overlay_config_t config = {
        .vpid = vpid,
        .num_daemons = n,
        .radix = 2,
        .dvm_id = "test-dvm",
        .if_include = "127.0.0.1",
        .heartbeat_timeout_ms = heartbeat_ms,
    };

    assert_non_null(node);
    assert_int_equal(opal_event_base_create(&node->base), HERD_SUCCESS);
    assert_int_equal(opal_event_timer_create(node->base, false, tick_cb, node, &node->tick),
                     HERD_SUCCESS);
    config.base = node->base;
    memcpy(config.secret, test_secret, sizeof(config.secret));
    assert_int_equal(module->init(&config, &node->overlay), HERD_SUCCESS);
    assert_int_equal(module->register_recv(node->overlay, TEST_TAG, on_recv, node), HERD_SUCCESS);
    module->set_lost_callback(node->overlay, on_lost, node);
    if (listen) {
        assert_int_equal(module->listen(node->overlay, &node->uri), HERD_SUCCESS);
    }
    return node;
}

static void node_free(node_t *node)
{
    if (NULL != node->overlay) {
        module->finalize(node->overlay);
    }
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

/* One round of each node's loop; wait is how long a round may wait for something to happen
 * (0: not at all), so that timers can fire without the test spinning. */
static void pump_waiting(node_t *const *nodes, size_t count, long wait_us)
{
    for (size_t i = 0; i < count; i++) {
        struct timeval wait = {0, count > 1 ? 0 : wait_us};

        if (NULL == nodes[i]) {
            continue;
        }
        assert_int_equal(opal_event_add(nodes[i]->tick, &wait), HERD_SUCCESS);
        assert_int_equal(opal_event_base_loop(nodes[i]->base, true), HERD_SUCCESS);
    }
}

static void pump(node_t *const *nodes, size_t count)
{
    pump_waiting(nodes, count, 1000);
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

/* Run the nodes for at least seconds of wall time (for "nothing happens" checks: what they
 * check must hold however long it runs). */
static void run_for(node_t *const *nodes, size_t count, double seconds)
{
    struct timespec start;
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        pump(nodes, count);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((double) (now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
}

static bool node_has_lost(void *arg)
{
    return ((node_t *) arg)->num_lost > 0;
}

typedef struct {
    node_t *node;
    uint64_t count;
} stat_wait_t;

static bool node_up(void *arg)
{
    stat_wait_t *wait = arg;

    return node_stats(wait->node).neighbours_up >= wait->count;
}

static bool node_rejected(void *arg)
{
    stat_wait_t *wait = arg;

    return node_stats(wait->node).peers_rejected >= wait->count;
}

static bool node_heartbeats(void *arg)
{
    stat_wait_t *wait = arg;

    return node_stats(wait->node).heartbeats_sent >= wait->count;
}

/* ------------------------------------------------------------------------------------------ */
/* hand-made peers */

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

/* A listening socket on 127.0.0.1 that never accepts, and its URI. */
static int raw_listener(char *uri, size_t size)
{
    struct sockaddr_in in = {.sin_family = AF_INET};
    socklen_t length = sizeof(in);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    assert_true(fd >= 0);
    in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
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

static void raw_send_frame(int fd, uint8_t type, orte_vpid_t src, orte_vpid_t dst,
                           const void *payload, size_t length)
{
    overlay_tcp_header_t header = {
        .version = OVERLAY_TCP_PROTOCOL_VERSION,
        .type = type,
        .tag = OVERLAY_TCP_MSG_DATA == type ? TEST_TAG : 0,
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

/* Read exactly length bytes while the nodes run; false at the end of the stream. */
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

/* The node closes the raw peer's connection (whatever it still sent is of no interest). */
static void raw_expect_close(node_t *const *nodes, size_t count, int fd)
{
    uint8_t byte;

    while (raw_read(nodes, count, fd, &byte, 1)) {
    }
    close(fd);
}

static void raw_hello(int fd, orte_vpid_t me, orte_vpid_t parent, uint32_t n, uint32_t heartbeat_ms,
                      uint8_t nonce[OVERLAY_TCP_NONCE_BYTES])
{
    overlay_tcp_hello_t hello;
    uint8_t payload[OVERLAY_TCP_MAX_HANDSHAKE_PAYLOAD];
    size_t length = 0;

    memset(&hello, 0, sizeof(hello));
    randombytes_buf(nonce, OVERLAY_TCP_NONCE_BYTES);
    memcpy(hello.nonce, nonce, OVERLAY_TCP_NONCE_BYTES);
    hello.num_daemons = n;
    hello.radix = 2;
    hello.heartbeat_ms = heartbeat_ms;
    snprintf(hello.dvm_id, sizeof(hello.dvm_id), "test-dvm");
    assert_int_equal(overlay_tcp_hello_encode(&hello, payload, sizeof(payload), &length),
                     HERD_SUCCESS);
    raw_send_frame(fd, OVERLAY_TCP_MSG_HELLO, me, parent, payload, length);
}

/* A hand-made child 1 of the node at uri that authenticates, announcing heartbeat_ms, and then
 * does only what the test makes it do. The parent's timeout from its CHALLENGE goes to
 * *parent_ms. */
static int raw_child(node_t *const *nodes, size_t count, const char *uri, uint32_t n,
                     uint32_t heartbeat_ms, uint32_t *parent_ms)
{
    uint8_t key[OVERLAY_TCP_KEY_BYTES];
    uint8_t nonce_c[OVERLAY_TCP_NONCE_BYTES];
    uint8_t payload[OVERLAY_TCP_MAX_HANDSHAKE_PAYLOAD];
    uint8_t expected[OVERLAY_TCP_MAC_BYTES];
    overlay_tcp_header_t header;
    overlay_tcp_challenge_t challenge;
    overlay_tcp_response_t response;
    int fd = raw_connect(uri);

    assert_int_equal(overlay_tcp_derive_key(test_secret, key), HERD_SUCCESS);
    raw_hello(fd, 1, 0, n, heartbeat_ms, nonce_c);
    assert_true(raw_read_frame(nodes, count, fd, &header, payload, sizeof(payload)));
    assert_int_equal(header.type, OVERLAY_TCP_MSG_CHALLENGE);
    assert_int_equal(overlay_tcp_challenge_decode(payload, header.length, &challenge, NULL, 0),
                     HERD_SUCCESS);
    /* the parent's timeout is part of what its MAC proves */
    overlay_tcp_challenge_mac(key, nonce_c, challenge.nonce, 0, 1, n, 2, "test-dvm",
                              challenge.heartbeat_ms, expected);
    assert_true(overlay_tcp_mac_equal(expected, challenge.mac));
    overlay_tcp_challenge_mac(key, nonce_c, challenge.nonce, 0, 1, n, 2, "test-dvm",
                              challenge.heartbeat_ms + 1, expected);
    assert_false(overlay_tcp_mac_equal(expected, challenge.mac));
    *parent_ms = challenge.heartbeat_ms;
    overlay_tcp_response_mac(key, challenge.nonce, nonce_c, 1, 0, n, 2, "test-dvm", "",
                             heartbeat_ms, response.mac);
    raw_send_frame(fd, OVERLAY_TCP_MSG_RESPONSE, 1, 0, response.mac, sizeof(response.mac));
    return fd;
}

/* ------------------------------------------------------------------------------------------ */
/* setup */

static const char *const test_variables[] = {
    "HERD_MCA_overlay_base_verbose",
    "HERD_MCA_overlay_base_handshake_timeout",
    "HERD_MCA_overlay_tcp_handshake_timeout",
    NULL,
};

static void open_overlay(const char *verbose, const char *handshake_timeout)
{
    orte_overlay_base_close();
    for (size_t i = 0; NULL != test_variables[i]; i++) {
        unsetenv(test_variables[i]);
    }
    if (NULL != verbose) {
        setenv("HERD_MCA_overlay_base_verbose", verbose, 1);
    }
    if (NULL != handshake_timeout) {
        setenv("HERD_MCA_overlay_base_handshake_timeout", handshake_timeout, 1);
    }
    assert_int_equal(orte_overlay_base_open(), HERD_SUCCESS);
    module = orte_overlay_base_module();
    assert_non_null(module);
}

static int setup(void **state)
{
    fds_at_setup = count_fds();
    open_overlay(NULL, NULL);
    return 0;
}

static int teardown(void **state)
{
    orte_overlay_base_close();
    module = NULL;
    for (size_t i = 0; NULL != test_variables[i]; i++) {
        unsetenv(test_variables[i]);
    }
    /* every test must leave no socket, event base or file behind */
    assert_int_equal(count_fds(), fds_at_setup);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* heartbeats */

static void test_heartbeat_codec(void **state)
{
    overlay_tcp_heartbeat_t heartbeat = {.timeout_ms = 30000};
    overlay_tcp_heartbeat_t out;
    overlay_tcp_header_t header;
    overlay_tcp_header_t decoded;
    uint8_t payload[16];
    uint8_t bytes[OVERLAY_TCP_HEADER_BYTES];
    size_t length = 0;
    char why[256] = "";

    assert_int_equal(overlay_tcp_heartbeat_encode(&heartbeat, payload, sizeof(payload), &length),
                     HERD_SUCCESS);
    assert_int_equal(length, 4);
    assert_int_equal(overlay_tcp_heartbeat_decode(payload, length, &out, NULL, 0), HERD_SUCCESS);
    assert_int_equal(out.timeout_ms, 30000);
    assert_int_equal(overlay_tcp_heartbeat_encode(&heartbeat, payload, 3, &length),
                     HERD_ERR_BAD_PARAM);
    for (size_t size = 0; size < sizeof(payload); size++) {
        if (4 != size) {
            assert_int_equal(overlay_tcp_heartbeat_decode(payload, size, &out, why, sizeof(why)),
                             HERD_ERR_UNPACK_FAILURE);
            assert_contains(why, "HEARTBEAT");
        }
    }
    /* its header: exactly 4 bytes of payload, no tag */
    header = (overlay_tcp_header_t){.version = OVERLAY_TCP_PROTOCOL_VERSION,
                                    .type = OVERLAY_TCP_MSG_HEARTBEAT,
                                    .src = 1,
                                    .length = 4};
    overlay_tcp_header_encode(&header, bytes);
    assert_int_equal(overlay_tcp_header_decode(bytes, sizeof(bytes), 1000, &decoded, NULL, 0),
                     HERD_SUCCESS);
    assert_string_equal(overlay_tcp_msg_type_name(decoded.type), "HEARTBEAT");
    header.length = 5;
    overlay_tcp_header_encode(&header, bytes);
    assert_int_equal(
        overlay_tcp_header_decode(bytes, sizeof(bytes), 1000, &decoded, why, sizeof(why)),
        HERD_ERR_UNPACK_FAILURE);
    assert_contains(why, "a HEARTBEAT frame carries 5 bytes instead of 4");
    header.length = 4;
    header.tag = 7;
    overlay_tcp_header_encode(&header, bytes);
    assert_int_equal(overlay_tcp_header_decode(bytes, sizeof(bytes), 1000, &decoded, NULL, 0),
                     HERD_ERR_UNPACK_FAILURE);
}

/* The first bytes of a header are judged as they come, exactly as the whole header would be. */
static void test_header_start(void **state)
{
    overlay_tcp_header_t good = {.version = OVERLAY_TCP_PROTOCOL_VERSION,
                                 .type = OVERLAY_TCP_MSG_HELLO,
                                 .src = 1,
                                 .length = 1024};
    uint8_t bytes[OVERLAY_TCP_HEADER_BYTES];
    char why[256];

    /* every start of a good header passes */
    static const uint8_t types[] = {OVERLAY_TCP_MSG_HELLO,    OVERLAY_TCP_MSG_CHALLENGE,
                                    OVERLAY_TCP_MSG_RESPONSE, OVERLAY_TCP_MSG_DATA,
                                    OVERLAY_TCP_MSG_BYE,      OVERLAY_TCP_MSG_HEARTBEAT};
    for (size_t t = 0; t < sizeof(types); t++) {
        good.type = types[t];
        good.length =
            (OVERLAY_TCP_MSG_BYE == types[t] || OVERLAY_TCP_MSG_HEARTBEAT == types[t]) ? 4 : 1024;
        overlay_tcp_header_encode(&good, bytes);
        for (size_t size = 0; size < OVERLAY_TCP_HEADER_BYTES; size++) {
            assert_int_equal(overlay_tcp_header_check_start(bytes, size, 1u << 20, NULL, 0),
                             HERD_SUCCESS);
        }
    }
    /* a stranger's first byte */
    assert_int_equal(
        overlay_tcp_header_check_start((const uint8_t *) "G", 1, 1u << 20, why, sizeof(why)),
        HERD_ERR_UNPACK_FAILURE);
    assert_contains(why, "magic number");
    /* a 4 GiB length prefix, as other protocols frame their messages */
    static const uint8_t huge[] = {0xff, 0xff, 0xff, 0xff};
    assert_int_equal(overlay_tcp_header_check_start(huge, 1, 1u << 20, NULL, 0),
                     HERD_ERR_UNPACK_FAILURE);
    /* the right magic, another version: said with both versions at the fifth byte */
    memcpy(bytes, "HRDO\x01", 5);
    assert_int_equal(overlay_tcp_header_check_start(bytes, 5, 1u << 20, why, sizeof(why)),
                     HERD_ERR_VERSION_MISMATCH);
    assert_contains(why, "protocol version 1, this daemon version 2");
    /* an unknown type, a flag, the reserved field, a tag on a handshake frame */
    good.type = OVERLAY_TCP_MSG_HELLO;
    good.length = 100;
    overlay_tcp_header_encode(&good, bytes);
    bytes[5] = 99;
    assert_int_equal(overlay_tcp_header_check_start(bytes, 6, 1u << 20, NULL, 0),
                     HERD_ERR_UNPACK_FAILURE);
    overlay_tcp_header_encode(&good, bytes);
    bytes[7] = 1;
    assert_int_equal(overlay_tcp_header_check_start(bytes, 8, 1u << 20, NULL, 0),
                     HERD_ERR_UNPACK_FAILURE);
    overlay_tcp_header_encode(&good, bytes);
    bytes[9] = 1;
    assert_int_equal(overlay_tcp_header_check_start(bytes, 10, 1u << 20, NULL, 0),
                     HERD_ERR_UNPACK_FAILURE);
    overlay_tcp_header_encode(&good, bytes);
    bytes[11] = 1;
    assert_int_equal(overlay_tcp_header_check_start(bytes, 12, 1u << 20, NULL, 0),
                     HERD_ERR_UNPACK_FAILURE);
    /* a length that no last byte can bring under the limit, and one that still can */
    overlay_tcp_header_encode(&good, bytes);
    bytes[20] = 0;
    bytes[21] = 0;
    bytes[22] = 0x05; /* at least 1280 > 1024 */
    assert_int_equal(overlay_tcp_header_check_start(bytes, 23, 1u << 20, why, sizeof(why)),
                     HERD_ERR_UNPACK_FAILURE);
    assert_contains(why, "over the limit");
    bytes[22] = 0x04; /* 1024 is still possible */
    assert_int_equal(overlay_tcp_header_check_start(bytes, 23, 1u << 20, NULL, 0), HERD_SUCCESS);
    /* a BYE or HEARTBEAT length other than 4 shows at its first wrong byte */
    good.type = OVERLAY_TCP_MSG_HEARTBEAT;
    good.length = 4;
    overlay_tcp_header_encode(&good, bytes);
    bytes[21] = 1;
    assert_int_equal(overlay_tcp_header_check_start(bytes, 22, 1u << 20, NULL, 0),
                     HERD_ERR_UNPACK_FAILURE);
    /* whole headers go to the decoder */
    assert_int_equal(
        overlay_tcp_header_check_start(bytes, OVERLAY_TCP_HEADER_BYTES, 1u << 20, NULL, 0),
        HERD_ERR_BAD_PARAM);
}

/* Two daemons with nothing to say keep their connection: each side sends heartbeats, a few per
 * timeout, and nobody is lost. */
static void test_idle_connection_lives(void **state)
{
    node_t *root = node_new(0, 2, 300, true);
    node_t *child = node_new(1, 2, 300, false);
    node_t *both[] = {root, child};
    stat_wait_t up = {.node = child, .count = 1};
    stat_wait_t beat = {.node = root, .count = 3};
    stat_wait_t child_beat = {.node = child, .count = 3};

    assert_int_equal(module->connect_parent(child->overlay, root->uri), HERD_SUCCESS);
    run_until(both, 2, node_up, &up, "the child to connect");
    /* three heartbeats each way: a whole timeout of nothing else, and nobody lost */
    run_until(both, 2, node_heartbeats, &beat, "the root's heartbeats");
    run_until(both, 2, node_heartbeats, &child_beat, "the child's heartbeats");
    assert_int_equal(root->num_lost, 0);
    assert_int_equal(child->num_lost, 0);
    assert_int_equal(node_stats(root).neighbours_up, 1);
    /* they carried no message */
    assert_int_equal(root->num_got, 0);
    assert_int_equal(child->num_got, 0);
    assert_int_equal(node_stats(root).messages_dropped, 0);
    node_free(child);
    node_free(root);
}

/* A connection that carries traffic anyway carries no heartbeat from the side that talks. */
static void test_busy_connection_no_heartbeat(void **state)
{
    node_t *root = node_new(0, 2, 300, true);
    node_t *child = node_new(1, 2, 300, false);
    node_t *both[] = {root, child};
    stat_wait_t up = {.node = child, .count = 1};
    stat_wait_t beat = {.node = root, .count = 4};

    assert_int_equal(module->connect_parent(child->overlay, root->uri), HERD_SUCCESS);
    run_until(both, 2, node_up, &up, "the child to connect");
    /* the child talks before every round of the loops; the root has nothing to say */
    while (node_stats(root).heartbeats_sent < beat.count) {
        assert_int_equal(module->send(child->overlay, 0, TEST_TAG, "busy", 4), HERD_SUCCESS);
        pump(both, 2);
    }
    assert_int_equal(node_stats(child).heartbeats_sent, 0);
    assert_int_equal(root->num_lost, 0);
    assert_int_equal(child->num_lost, 0);
    node_free(child);
    node_free(root);
}

/* A neighbour that authenticated and then went silent (a stopped daemon) is lost, as having
 * stopped answering, and its connection is closed; the timeout that applies is the smaller of
 * both ends', and the root sent its heartbeats at the pace of that one. */
static void test_silent_neighbour_lost(void **state)
{
    node_t *root = node_new(0, 3, 60000, true);
    node_t *nodes[] = {root};
    overlay_tcp_header_t header;
    overlay_tcp_heartbeat_t heartbeat;
    uint8_t payload[64];
    uint32_t parent_ms = 0;
    int fd;

    /* the hand-made child asks for 400 ms, much less than the root's minute */
    fd = raw_child(nodes, 1, root->uri, 3, 400, &parent_ms);
    assert_int_equal(parent_ms, 60000);
    /* what the root sends it on an idle connection is a heartbeat with the root's own timeout */
    assert_true(raw_read_frame(nodes, 1, fd, &header, payload, sizeof(payload)));
    assert_int_equal(header.type, OVERLAY_TCP_MSG_HEARTBEAT);
    assert_int_equal(header.src, 0);
    assert_int_equal(header.dst, 1);
    assert_int_equal(overlay_tcp_heartbeat_decode(payload, header.length, &heartbeat, NULL, 0),
                     HERD_SUCCESS);
    assert_int_equal(heartbeat.timeout_ms, 60000);
    /* it says nothing back: lost after 400 ms of silence, not a minute */
    run_until(nodes, 1, node_has_lost, root, "the root to give up on the silent child");
    assert_int_equal(root->lost_peer, 1);
    assert_int_equal(root->lost_status, HERD_ERR_TIMEOUT);
    assert_contains(root->lost_reason, "daemon 1 (127.0.0.1:");
    assert_contains(root->lost_reason,
                    "stopped answering: nothing heard from it for 400 ms (dvm_heartbeat_timeout)");
    assert_null(strstr(root->lost_reason, "closed"));
    assert_int_equal(node_stats(root).neighbours_up, 0);
    raw_expect_close(nodes, 1, fd);
    /* the child may come back (a daemon that was only stopped): a new connection, watched */
    fd = raw_child(nodes, 1, root->uri, 3, 400, &parent_ms);
    stat_wait_t up = {.node = root, .count = 1};
    run_until(nodes, 1, node_up, &up, "the child to come back");
    close(fd);
    node_free(root);
}

/* A heartbeat that says another timeout changes the connection's: a neighbour configured with a
 * shorter one gets heartbeats often enough for it, also on a socket shared at fork. */
static void test_heartbeat_tells_timeout(void **state)
{
    node_t *root = node_new(0, 2, 60000, false);
    node_t *nodes[] = {root};
    overlay_tcp_header_t header;
    uint8_t payload[64];
    uint8_t beat[4];
    int pair[2];
    size_t length = 0;
    overlay_tcp_heartbeat_t heartbeat = {.timeout_ms = 300};

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
    assert_int_equal(module->adopt_peer(root->overlay, pair[0], 1), HERD_SUCCESS);
    /* nothing comes for a while: both ends were assumed to have a minute */
    run_for(nodes, 1, 0.3);
    assert_int_equal(recv(pair[1], payload, sizeof(payload), MSG_DONTWAIT), -1);
    assert_int_equal(root->num_lost, 0);
    /* the child says it has 300 ms: heartbeats come, and silence is lost after 300 ms */
    assert_int_equal(overlay_tcp_heartbeat_encode(&heartbeat, beat, sizeof(beat), &length),
                     HERD_SUCCESS);
    raw_send_frame(pair[1], OVERLAY_TCP_MSG_HEARTBEAT, 1, 0, beat, length);
    assert_true(raw_read_frame(nodes, 1, pair[1], &header, payload, sizeof(payload)));
    assert_int_equal(header.type, OVERLAY_TCP_MSG_HEARTBEAT);
    run_until(nodes, 1, node_has_lost, root, "the root to give up on the silent child");
    assert_int_equal(root->lost_status, HERD_ERR_TIMEOUT);
    assert_contains(root->lost_reason, "a socket shared at fork");
    assert_contains(root->lost_reason, "nothing heard from it for 300 ms");
    close(pair[1]);
    node_free(root);
}

/* A heartbeat that claims to come from another daemon is a broken neighbour. */
static void test_forged_heartbeat(void **state)
{
    node_t *root = node_new(0, 3, 60000, true);
    node_t *nodes[] = {root};
    uint8_t beat[4] = {0, 0, 0, 100};
    uint32_t parent_ms = 0;
    int fd = raw_child(nodes, 1, root->uri, 3, 60000, &parent_ms);

    herd_test_capture_start(&stderr_capture);
    raw_send_frame(fd, OVERLAY_TCP_MSG_HEARTBEAT, 2, 0, beat, sizeof(beat));
    run_until(nodes, 1, node_has_lost, root, "the root to cut off the forger");
    char *text = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(root->lost_status, HERD_ERR_UNPACK_FAILURE);
    assert_contains(text, "a HEARTBEAT from daemon 2 to daemon 0 came on the connection from "
                          "daemon 1");
    free(text);
    raw_expect_close(nodes, 1, fd);
    node_free(root);
}

/* 0 at either end: the connection is not watched and carries no heartbeat. */
static void test_heartbeats_off(void **state)
{
    node_t *root = node_new(0, 3, 300, true);
    node_t *off = node_new(2, 3, 0, false);
    node_t *nodes[] = {root, off};
    stat_wait_t up = {.node = root, .count = 2};
    uint32_t parent_ms = 0;

    assert_int_equal(module->connect_parent(off->overlay, root->uri), HERD_SUCCESS);
    /* and a hand-made child 1 that says 0, and then nothing at all */
    int fd = raw_child(nodes, 2, root->uri, 3, 0, &parent_ms);
    assert_int_equal(parent_ms, 300);
    run_until(nodes, 2, node_up, &up, "both children to connect");
    run_for(nodes, 2, 1.5); /* five timeouts of the root's */
    assert_int_equal(root->num_lost, 0);
    assert_int_equal(off->num_lost, 0);
    assert_int_equal(node_stats(root).heartbeats_sent, 0);
    assert_int_equal(node_stats(off).heartbeats_sent, 0);
    close(fd);
    node_free(off);
    node_free(root);
}

/* A daemon waits for its own parent's answer as long as for a silent neighbour, not the few
 * seconds a stranger gets at its listener. */
static void test_parent_slow_to_answer(void **state)
{
    node_t *child;
    char uri[64];
    int listener;

    open_overlay(NULL, "1");
    child = node_new(1, 2, 2500, false);
    listener = raw_listener(uri, sizeof(uri));
    assert_int_equal(module->connect_parent(child->overlay, uri), HERD_SUCCESS);
    run_until(&child, 1, node_has_lost, child, "the handshake to time out");
    assert_int_equal(child->lost_status, HERD_ERR_TIMEOUT);
    assert_contains(child->lost_reason, "did not complete the handshake within 2.5 s "
                                        "(dvm_heartbeat_timeout)");
    close(listener);
    node_free(child);
}

/* ------------------------------------------------------------------------------------------ */
/* strangers */

static void expect_dropped(node_t *node, int fd, uint64_t count)
{
    stat_wait_t rejected = {.node = node, .count = count};

    raw_expect_close(&node, 1, fd);
    run_until(&node, 1, node_rejected, &rejected, "the node to drop the stranger");
}

/* Refused at the first wrong byte, not after 24, and never a word on stderr by default. */
static void test_stranger_dropped_at_once(void **state)
{
    node_t *root;
    uint64_t count = 0;
    char *text;
    int fd;

    /* a handshake timeout far beyond the hang guard: whatever is dropped was dropped for what it
     * sent, not for how long it took */
    open_overlay(NULL, "100000");
    root = node_new(0, 3, 0, true);

    herd_test_capture_start(&stderr_capture);
    /* one byte of garbage */
    fd = raw_connect(root->uri);
    raw_write(fd, "G", 1);
    expect_dropped(root, fd, ++count);
    /* a 4 GiB length prefix */
    fd = raw_connect(root->uri);
    raw_write(fd, "\xff\xff\xff\xff", 4);
    expect_dropped(root, fd, ++count);
    /* the magic and another version */
    fd = raw_connect(root->uri);
    raw_write(fd, "HRDO\x01", 5);
    expect_dropped(root, fd, ++count);
    /* data before the handshake: known from its sixth byte */
    fd = raw_connect(root->uri);
    raw_write(fd, "HRDO\x02\x04", 6);
    expect_dropped(root, fd, ++count);
    /* a forged HELLO (another DVM) */
    uint8_t nonce[OVERLAY_TCP_NONCE_BYTES];
    fd = raw_connect(root->uri);
    {
        overlay_tcp_hello_t hello;
        uint8_t payload[OVERLAY_TCP_MAX_HANDSHAKE_PAYLOAD];
        size_t length = 0;

        memset(&hello, 0, sizeof(hello));
        hello.num_daemons = 3;
        hello.radix = 2;
        snprintf(hello.dvm_id, sizeof(hello.dvm_id), "not-this-one");
        assert_int_equal(overlay_tcp_hello_encode(&hello, payload, sizeof(payload), &length),
                         HERD_SUCCESS);
        raw_send_frame(fd, OVERLAY_TCP_MSG_HELLO, 1, 0, payload, length);
    }
    expect_dropped(root, fd, ++count);
    /* a HELLO that passes, then a wrong RESPONSE */
    fd = raw_connect(root->uri);
    raw_hello(fd, 1, 0, 3, 0, nonce);
    raw_send_frame(fd, OVERLAY_TCP_MSG_RESPONSE, 1, 0, nonce, sizeof(nonce));
    expect_dropped(root, fd, ++count);
    text = herd_test_capture_stop(&stderr_capture);
    assert_string_equal(text, "");
    free(text);
    assert_int_equal(node_stats(root).peers_rejected, count);
    assert_int_equal(node_stats(root).auth_failures, 1);
    assert_int_equal(root->num_lost, 0);
    node_free(root);

    /* with overlay_base_verbose 1: the first refusal of an endpoint, and a word on the rest */
    open_overlay("1", NULL);
    root = node_new(0, 3, 0, true);
    herd_test_capture_start(&stderr_capture);
    fd = raw_connect(root->uri);
    raw_write(fd, "G", 1);
    expect_dropped(root, fd, 1);
    fd = raw_connect(root->uri);
    raw_write(fd, "HRDO\x01", 5);
    expect_dropped(root, fd, 2);
    text = herd_test_capture_stop(&stderr_capture);
    assert_contains(text, "daemon 0 of DVM test-dvm refused a connection from 127.0.0.1:");
    assert_contains(text, "magic number");
    assert_contains(text, "further refusals are logged at overlay_base_verbose 5");
    assert_null(strstr(text, "protocol version 1"));
    free(text);
    node_free(root);

    /* and at 5 every one */
    open_overlay("5", NULL);
    root = node_new(0, 3, 0, true);
    herd_test_capture_start(&stderr_capture);
    fd = raw_connect(root->uri);
    raw_write(fd, "G", 1);
    expect_dropped(root, fd, 1);
    fd = raw_connect(root->uri);
    raw_write(fd, "HRDO\x01", 5);
    expect_dropped(root, fd, 2);
    text = herd_test_capture_stop(&stderr_capture);
    assert_contains(text, "the peer speaks overlay protocol version 1, this daemon version 2");
    free(text);
    node_free(root);
}

/* A stranger that says nothing, or a forged HELLO and nothing more, is dropped after
 * overlay_base_handshake_timeout. */
static void test_silent_stranger_dropped(void **state)
{
    uint8_t nonce[OVERLAY_TCP_NONCE_BYTES];
    node_t *root;
    int idle;
    int forged;

    open_overlay(NULL, "1");
    root = node_new(0, 3, 0, true);
    int fds_before = count_fds();
    idle = raw_connect(root->uri);
    forged = raw_connect(root->uri);
    raw_hello(forged, 2, 0, 3, 0, nonce); /* a child of ours, but it cannot answer */
    raw_expect_close(&root, 1, idle);
    raw_expect_close(&root, 1, forged);
    assert_int_equal(node_stats(root).peers_rejected, 2);
    /* both were closed on the root's side too */
    pump(&root, 1);
    assert_int_equal(count_fds(), fds_before);
    node_free(root);
}

/* More strangers than may authenticate at once: the oldest go, a daemon arriving after them
 * gets in, and the root never holds more than the bound. */
static void test_flood_then_daemon(void **state)
{
    enum { FLOOD = 200 };
    node_t *root;
    node_t *child;
    int strangers[FLOOD];
    int closed = 0;
    int most = 0;

    open_overlay(NULL, "60");
    root = node_new(0, 3, 0, true);
    int fds_before = count_fds();
    for (int i = 0; i < FLOOD; i++) {
        strangers[i] = raw_connect(root->uri);
        pump(&root, 1);
        int held = count_fds() - fds_before - (i + 1); /* ours are the strangers' ends */
        most = held > most ? held : most;
    }
    for (int r = 0; r < 20; r++) {
        pump(&root, 1);
    }
    /* a listener holds at most its children (2) and 64 more */
    assert_true(most <= 2 + 64);
    /* the oldest were dropped, the newest are still waiting */
    for (int i = 0; i < FLOOD; i++) {
        uint8_t byte;
        ssize_t n = recv(strangers[i], &byte, 1, MSG_DONTWAIT);

        if (0 == n) {
            closed++;
        }
    }
    assert_true(closed >= FLOOD - (2 + 64));
    assert_int_equal(node_stats(root).peers_rejected, (uint64_t) closed);
    /* a real child connects after the flood and gets in */
    child = node_new(1, 3, 0, false);
    node_t *both[] = {root, child};
    stat_wait_t up = {.node = child, .count = 1};
    assert_int_equal(module->connect_parent(child->overlay, root->uri), HERD_SUCCESS);
    assert_int_equal(module->send(child->overlay, 0, TEST_TAG, "in", 2), HERD_SUCCESS);
    run_until(both, 2, node_up, &up, "the child to get in after the flood");
    for (int i = 0; i < FLOOD; i++) {
        close(strangers[i]);
    }
    node_free(child);
    node_free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_heartbeat_codec, setup, teardown),
        cmocka_unit_test_setup_teardown(test_header_start, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle_connection_lives, setup, teardown),
        cmocka_unit_test_setup_teardown(test_busy_connection_no_heartbeat, setup, teardown),
        cmocka_unit_test_setup_teardown(test_silent_neighbour_lost, setup, teardown),
        cmocka_unit_test_setup_teardown(test_heartbeat_tells_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forged_heartbeat, setup, teardown),
        cmocka_unit_test_setup_teardown(test_heartbeats_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parent_slow_to_answer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stranger_dropped_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_silent_stranger_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flood_then_daemon, setup, teardown),
    };

    if (sodium_init() < 0) {
        return 1;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
