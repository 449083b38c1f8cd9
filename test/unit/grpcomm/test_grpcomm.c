/* SPDX-License-Identifier: BSD-3-Clause */
/* grpcomm: the tree and bruck components run xcast, barrier and allgather among n in-process
 * instances over a fake transport that delivers in a seeded (reproducible) random order, with
 * daemons entering late, overlapping collectives, malformed and truncated messages, aborts,
 * failing sends, and the rounds and message counts each algorithm promises. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/dss/buffer.h"
#include "opal/mca/base/mca_var.h"
#include "support/capture.h"
#include "orte/mca/grpcomm/base/base.h"
#include "orte/mca/grpcomm/grpcomm.h"
#include "orte/util/radix.h"

static const uint32_t test_sizes[] = {1, 2, 3, 5, 8, 13, 64, 256};
static const uint32_t tree_radixes[] = {1, 2, 3, 4, 8, 64};
/* bruck ignores the radix; two values show it */
static const uint32_t bruck_radixes[] = {2, 5};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------------------------------ */
/* reproducible randomness (splitmix64) */

static uint64_t rng_next(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static size_t rng_below(uint64_t *state, size_t bound)
{
    return (size_t) (rng_next(state) % bound);
}

/* ------------------------------------------------------------------------------------------ */
/* stderr capture, to check what a rejected message tells the admin */

static herd_test_capture_t stderr_capture;

/* ------------------------------------------------------------------------------------------ */
/* selecting a component */

static int setup(void **state)
{
    unsetenv("HERD_MCA_grpcomm");
    unsetenv("HERD_MCA_grpcomm_tree_priority");
    unsetenv("HERD_MCA_grpcomm_bruck_priority");
    return 0;
}

static int teardown(void **state)
{
    orte_grpcomm_base_close();
    return setup(state);
}

/* The module of the named component, selected the way a site admin would. */
static const orte_grpcomm_module_t *open_component(const char *name)
{
    const orte_grpcomm_module_t *module;

    orte_grpcomm_base_close();
    setenv("HERD_MCA_grpcomm", name, 1);
    assert_int_equal(orte_grpcomm_base_open(), HERD_SUCCESS);
    module = orte_grpcomm_base_module();
    assert_non_null(module);
    assert_string_equal(module->name, name);
    return module;
}

static bool is_tree(const orte_grpcomm_module_t *module)
{
    return 0 == strcmp(module->name, "tree");
}

/* ------------------------------------------------------------------------------------------ */
/* the fake transport: n instances and one queue of messages in flight */

typedef struct net net_t;
typedef struct coll coll_t;

typedef struct {
    net_t *net;
    orte_vpid_t vpid;
} endpoint_t;

typedef struct {
    orte_vpid_t src;
    orte_vpid_t dst;
    uint16_t tag;
    uint8_t *data;
    size_t len;
} packet_t;

typedef struct {
    packet_t *items;
    size_t count;
    size_t capacity;
} packet_list_t;

struct net {
    const orte_grpcomm_module_t *module;
    uint32_t n;
    uint32_t radix;
    endpoint_t *endpoints;
    orte_grpcomm_t **inst;
    packet_list_t queue;
    packet_list_t *capture; /* when set, every delivered packet is copied here */
    uint64_t rng;
    bool expect_accept; /* every delivery must be accepted */
    orte_vpid_t failing_sender;
    int send_error;
    coll_t *watch; /* counts deliveries to daemons that have not entered it yet */
    /* counters of what was sent */
    uint64_t messages;
    uint64_t by_tag[ORTE_GRPCOMM_NUM_TAGS];
    uint64_t *by_daemon;
    uint64_t gather_blobs;
    uint64_t release_blobs;
    uint64_t round_blobs;
    uint64_t max_wave;
    uint64_t early_deliveries;
};

static void packet_list_append(packet_list_t *list, orte_vpid_t src, orte_vpid_t dst, uint16_t tag,
                               const void *data, size_t len)
{
    packet_t *p;

    if (list->count == list->capacity) {
        list->capacity = 0 == list->capacity ? 64 : 2 * list->capacity;
        list->items = realloc(list->items, list->capacity * sizeof(*list->items));
        assert_non_null(list->items);
    }
    p = &list->items[list->count++];
    p->src = src;
    p->dst = dst;
    p->tag = tag;
    p->len = len;
    p->data = malloc(len > 0 ? len : 1);
    assert_non_null(p->data);
    if (len > 0) {
        memcpy(p->data, data, len);
    }
}

static void packet_list_free(packet_list_t *list)
{
    for (size_t i = 0; i < list->count; i++) {
        free(list->items[i].data);
    }
    free(list->items);
    memset(list, 0, sizeof(*list));
}

/* The blob count of a message, read with the documented wire format: header (three uint8,
 * three uint32), then for blob sets a uint32 count. 0 for messages without blobs. */
static uint32_t packet_blob_count(uint16_t tag, const void *data, size_t len)
{
    opal_buffer_t buffer = OPAL_BUFFER_STATIC_INIT;
    uint8_t version = 0, algorithm = 0, op = 0;
    uint32_t id = 0, n = 0, round = 0, count = 0;

    assert_int_equal(opal_buffer_load(&buffer, data, len), HERD_SUCCESS);
    assert_int_equal(opal_buffer_unpack_uint8(&buffer, &version), HERD_SUCCESS);
    assert_int_equal(version, ORTE_GRPCOMM_WIRE_VERSION);
    assert_int_equal(opal_buffer_unpack_uint8(&buffer, &algorithm), HERD_SUCCESS);
    assert_int_equal(opal_buffer_unpack_uint8(&buffer, &op), HERD_SUCCESS);
    assert_int_equal(opal_buffer_unpack_uint32(&buffer, &id), HERD_SUCCESS);
    assert_int_equal(opal_buffer_unpack_uint32(&buffer, &n), HERD_SUCCESS);
    assert_int_equal(opal_buffer_unpack_uint32(&buffer, &round), HERD_SUCCESS);
    if (ORTE_GRPCOMM_OP_ALLGATHER == op && ORTE_GRPCOMM_TAG_BARRIER_ROUND != tag) {
        assert_int_equal(opal_buffer_unpack_uint32(&buffer, &count), HERD_SUCCESS);
    }
    opal_buffer_destruct(&buffer);
    return count;
}

static int net_send(void *ctx, orte_vpid_t dst, uint16_t tag, const void *data, size_t len)
{
    endpoint_t *endpoint = ctx;
    net_t *net = endpoint->net;
    uint32_t blobs;

    /* what the interface promises the transport */
    assert_true(dst < net->n);
    assert_int_not_equal(dst, endpoint->vpid);
    assert_true(tag >= ORTE_GRPCOMM_TAG_BASE &&
                tag < ORTE_GRPCOMM_TAG_BASE + ORTE_GRPCOMM_NUM_TAGS);
    if (endpoint->vpid == net->failing_sender) {
        return net->send_error;
    }
    packet_list_append(&net->queue, endpoint->vpid, dst, tag, data, len);
    net->messages++;
    net->by_tag[tag - ORTE_GRPCOMM_TAG_BASE]++;
    net->by_daemon[endpoint->vpid]++;
    blobs = packet_blob_count(tag, data, len);
    if (ORTE_GRPCOMM_TAG_GATHER == tag) {
        net->gather_blobs += blobs;
    } else if (ORTE_GRPCOMM_TAG_XCAST == tag) {
        net->release_blobs += blobs;
    } else {
        net->round_blobs += blobs;
    }
    return HERD_SUCCESS;
}

/* For instances that must not send anything. */
static int no_send(void *ctx, orte_vpid_t dst, uint16_t tag, const void *data, size_t len)
{
    fail_msg("unexpected send of a %zu-byte message with tag %u to daemon %u", len, (unsigned) tag,
             dst);
    return HERD_ERROR;
}

static net_t *net_create(const orte_grpcomm_module_t *module, uint32_t n, uint32_t radix,
                         uint64_t seed)
{
    net_t *net = calloc(1, sizeof(*net));

    assert_non_null(net);
    net->module = module;
    net->n = n;
    net->radix = radix;
    net->rng = seed;
    net->expect_accept = true;
    net->failing_sender = ORTE_VPID_INVALID;
    net->endpoints = calloc(n, sizeof(*net->endpoints));
    net->inst = calloc(n, sizeof(*net->inst));
    net->by_daemon = calloc(n, sizeof(*net->by_daemon));
    assert_non_null(net->endpoints);
    assert_non_null(net->inst);
    assert_non_null(net->by_daemon);
    for (orte_vpid_t v = 0; v < n; v++) {
        orte_grpcomm_transport_t transport = {
            .me = v, .num_daemons = n, .radix = radix, .send = net_send, .ctx = &net->endpoints[v]};

        net->endpoints[v].net = net;
        net->endpoints[v].vpid = v;
        assert_int_equal(module->create(&transport, &net->inst[v]), HERD_SUCCESS);
        assert_non_null(net->inst[v]);
    }
    return net;
}

static void net_destroy(net_t *net)
{
    for (uint32_t v = 0; v < net->n; v++) {
        net->module->destroy(net->inst[v]);
    }
    packet_list_free(&net->queue);
    free(net->endpoints);
    free(net->inst);
    free(net->by_daemon);
    free(net);
}

struct coll {
    net_t *net;
    uint32_t id;
    orte_grpcomm_op_t op;
    struct slot *slots;
    bool *entered;
    uint32_t num_entered;
    uint32_t completed;
    uint32_t failed;
    /* when set, a daemon's successful completion starts this collective there (reentrancy) */
    coll_t *then;
};

typedef struct slot {
    coll_t *coll;
    orte_vpid_t vpid;
    int calls;
    int status;
} slot_t;

static void net_deliver_packet(net_t *net, packet_t *packet);

/* Delivers and removes queue entry index. */
static int net_deliver_at(net_t *net, size_t index)
{
    packet_t packet = net->queue.items[index];
    int rc;

    net->queue.items[index] = net->queue.items[--net->queue.count];
    if (NULL != net->capture) {
        packet_list_append(net->capture, packet.src, packet.dst, packet.tag, packet.data,
                           packet.len);
    }
    if (NULL != net->watch && !net->watch->entered[packet.dst]) {
        net->early_deliveries++;
    }
    rc = net->module->deliver(net->inst[packet.dst], packet.src, packet.tag, packet.data,
                              packet.len);
    if (net->expect_accept) {
        assert_int_equal(rc, HERD_SUCCESS);
    }
    free(packet.data);
    return rc;
}

static void net_run_random(net_t *net)
{
    while (net->queue.count > 0) {
        net_deliver_at(net, rng_below(&net->rng, net->queue.count));
    }
}

/* Delivers everything in flight (in random order), then everything that sent, and so on: the
 * number of waves is the number of communication rounds. */
static uint32_t net_run_waves(net_t *net)
{
    uint32_t waves = 0;

    while (net->queue.count > 0) {
        packet_list_t wave = net->queue;

        memset(&net->queue, 0, sizeof(net->queue));
        if (wave.count > net->max_wave) {
            net->max_wave = wave.count;
        }
        /* deliver the wave from its own list: what it sends goes to the next wave */
        while (wave.count > 0) {
            size_t index = rng_below(&net->rng, wave.count);
            packet_t packet = wave.items[index];

            wave.items[index] = wave.items[--wave.count];
            net_deliver_packet(net, &packet);
        }
        free(wave.items);
        waves++;
    }
    return waves;
}

static void net_deliver_packet(net_t *net, packet_t *packet)
{
    int rc = net->module->deliver(net->inst[packet->dst], packet->src, packet->tag, packet->data,
                                  packet->len);

    if (net->expect_accept) {
        assert_int_equal(rc, HERD_SUCCESS);
    }
    free(packet->data);
}

/* ------------------------------------------------------------------------------------------ */
/* collectives with known content */

static size_t payload_len(uint32_t id)
{
    return 3 == id % 7 ? 0 : (size_t) ((id * 53u) % 500u) + 1;
}

static uint8_t payload_byte(uint32_t id, size_t i)
{
    return (uint8_t) (id * 29u + i * 13u + 5u);
}

/* Sizes differ per daemon, and every fourth contributes nothing. */
static size_t blob_len(uint32_t id, orte_vpid_t v)
{
    return 1 == v % 4 ? 0 : (size_t) ((v * 37u + id * 11u) % 61u);
}

static uint8_t blob_byte(uint32_t id, orte_vpid_t v, size_t i)
{
    return (uint8_t) (v * 131u + i * 7u + id * 3u + 1u);
}

static void check_payload(uint32_t id, const void *data, size_t len)
{
    const uint8_t *bytes = data;

    assert_int_equal(len, payload_len(id));
    if (0 == len) {
        assert_null(data);
        return;
    }
    for (size_t i = 0; i < len; i++) {
        assert_int_equal(bytes[i], payload_byte(id, i));
    }
}

static void check_blobs(uint32_t id, uint32_t n, const orte_grpcomm_result_t *result)
{
    assert_int_equal(result->num_blobs, n);
    assert_non_null(result->blobs);
    for (orte_vpid_t v = 0; v < n; v++) {
        const uint8_t *bytes = result->blobs[v].data;

        assert_int_equal(result->blobs[v].len, blob_len(id, v));
        if (0 == result->blobs[v].len) {
            assert_null(bytes);
            continue;
        }
        for (size_t i = 0; i < result->blobs[v].len; i++) {
            assert_int_equal(bytes[i], blob_byte(id, v, i));
        }
    }
}

static void coll_start(coll_t *coll, orte_vpid_t v);

static void coll_cb(int status, const orte_grpcomm_result_t *result, void *cbdata)
{
    slot_t *slot = cbdata;
    coll_t *coll = slot->coll;
    net_t *net = coll->net;

    slot->calls++;
    slot->status = status;
    assert_non_null(result);
    assert_int_equal(result->id, coll->id);
    assert_int_equal(result->op, coll->op);
    if (HERD_SUCCESS != status) {
        coll->failed++;
        return;
    }
    coll->completed++;
    switch (coll->op) {
    case ORTE_GRPCOMM_OP_XCAST:
        assert_true(coll->entered[0]); /* nothing to broadcast before the root starts */
        check_payload(coll->id, result->data, result->len);
        break;
    case ORTE_GRPCOMM_OP_BARRIER:
        /* the barrier's promise: nobody leaves before everybody arrived */
        assert_int_equal(coll->num_entered, net->n);
        break;
    case ORTE_GRPCOMM_OP_ALLGATHER:
        assert_int_equal(coll->num_entered, net->n);
        check_blobs(coll->id, net->n, result);
        break;
    }
    if (NULL != coll->then) {
        coll_start(coll->then, slot->vpid);
    }
}

static coll_t *coll_new(net_t *net, uint32_t id, orte_grpcomm_op_t op)
{
    coll_t *coll = calloc(1, sizeof(*coll));

    assert_non_null(coll);
    coll->net = net;
    coll->id = id;
    coll->op = op;
    coll->slots = calloc(net->n, sizeof(*coll->slots));
    coll->entered = calloc(net->n, sizeof(*coll->entered));
    assert_non_null(coll->slots);
    assert_non_null(coll->entered);
    for (orte_vpid_t v = 0; v < net->n; v++) {
        coll->slots[v].coll = coll;
        coll->slots[v].vpid = v;
    }
    return coll;
}

static void coll_free(coll_t *coll)
{
    free(coll->slots);
    free(coll->entered);
    free(coll);
}

/* Daemon v enters the collective, with its own copy of its data (freed right after, since the
 * instance must have copied it). */
static int coll_try_start(coll_t *coll, orte_vpid_t v)
{
    net_t *net = coll->net;
    orte_grpcomm_t *g = net->inst[v];
    uint8_t *data = NULL;
    size_t len = 0;
    int rc;

    assert_false(coll->entered[v]);
    coll->entered[v] = true;
    coll->num_entered++;
    if (ORTE_GRPCOMM_OP_XCAST == coll->op && 0 == v) {
        len = payload_len(coll->id);
    } else if (ORTE_GRPCOMM_OP_ALLGATHER == coll->op) {
        len = blob_len(coll->id, v);
    }
    if (len > 0) {
        data = malloc(len);
        assert_non_null(data);
        for (size_t i = 0; i < len; i++) {
            data[i] = ORTE_GRPCOMM_OP_XCAST == coll->op ? payload_byte(coll->id, i)
                                                        : blob_byte(coll->id, v, i);
        }
    }
    switch (coll->op) {
    case ORTE_GRPCOMM_OP_XCAST:
        rc = net->module->xcast(g, coll->id, data, len, coll_cb, &coll->slots[v]);
        break;
    case ORTE_GRPCOMM_OP_BARRIER:
        rc = net->module->barrier(g, coll->id, coll_cb, &coll->slots[v]);
        break;
    default:
        rc = net->module->allgather(g, coll->id, data, len, coll_cb, &coll->slots[v]);
        break;
    }
    if (NULL != data) {
        memset(data, 0xee, len); /* a kept pointer would now see garbage */
    }
    free(data);
    return rc;
}

static void coll_start(coll_t *coll, orte_vpid_t v)
{
    assert_int_equal(coll_try_start(coll, v), HERD_SUCCESS);
}

static void coll_assert_all_succeeded(const coll_t *coll)
{
    for (orte_vpid_t v = 0; v < coll->net->n; v++) {
        assert_int_equal(coll->slots[v].calls, 1);
        assert_int_equal(coll->slots[v].status, HERD_SUCCESS);
    }
    assert_int_equal(coll->completed, coll->net->n);
}

static void shuffle_vpids(uint64_t *rng, orte_vpid_t *order, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        order[i] = i;
    }
    for (uint32_t i = n; i > 1; i--) {
        uint32_t j = (uint32_t) rng_below(rng, i);
        orte_vpid_t swap = order[i - 1];

        order[i - 1] = order[j];
        order[j] = swap;
    }
}

/* Starts every (collective, daemon) pair in a random order, delivering random messages in
 * between, so daemons enter at different times and messages often arrive first. */
static void run_interleaved(net_t *net, coll_t **colls, size_t num_colls)
{
    size_t total = num_colls * net->n;
    size_t *actions = calloc(total, sizeof(*actions));
    size_t next = 0;

    assert_non_null(actions);
    for (size_t i = 0; i < total; i++) {
        actions[i] = i;
    }
    for (size_t i = total; i > 1; i--) {
        size_t j = rng_below(&net->rng, i);
        size_t swap = actions[i - 1];

        actions[i - 1] = actions[j];
        actions[j] = swap;
    }
    while (next < total || net->queue.count > 0) {
        if (next < total && (0 == net->queue.count || 0 == rng_below(&net->rng, 3))) {
            size_t action = actions[next++];

            coll_start(colls[action / net->n], (orte_vpid_t) (action % net->n));
        } else {
            net_deliver_at(net, rng_below(&net->rng, net->queue.count));
        }
    }
    free(actions);
}

/* ------------------------------------------------------------------------------------------ */
/* the expected costs */

static uint32_t rounds_of(const orte_grpcomm_module_t *module, orte_grpcomm_op_t op, uint32_t n,
                          uint32_t radix)
{
    uint32_t rounds = UINT32_MAX;

    assert_int_equal(module->rounds(op, n, radix, &rounds), HERD_SUCCESS);
    return rounds;
}

static uint64_t expected_messages(const orte_grpcomm_module_t *module, orte_grpcomm_op_t op,
                                  uint32_t n)
{
    if (ORTE_GRPCOMM_OP_XCAST == op) {
        return n - 1; /* one per daemon but the root, in both broadcast trees */
    }
    if (is_tree(module)) {
        return 2 * (uint64_t) (n - 1); /* one up, one down per tree edge */
    }
    return (uint64_t) n * orte_grpcomm_base_ceil_log2(n); /* one per daemon and round */
}

/* ------------------------------------------------------------------------------------------ */
/* one collective under three schedules */

typedef enum {
    SCHEDULE_WAVES,       /* all enter first, then round after round */
    SCHEDULE_INTERLEAVED, /* entering and delivering mixed at random */
    SCHEDULE_LATE,        /* a third of the daemons enter after everything else is delivered */
} schedule_t;

static uint64_t total_early_deliveries;
static unsigned total_runs;

static void run_late(net_t *net, coll_t *coll)
{
    bool *late = calloc(net->n, sizeof(*late));
    orte_vpid_t *order = calloc(net->n, sizeof(*order));
    bool any_late = false;

    assert_non_null(late);
    assert_non_null(order);
    for (orte_vpid_t v = 0; v < net->n; v++) {
        late[v] = 0 == rng_below(&net->rng, 3);
    }
    late[net->n - 1] = true; /* at least one */
    shuffle_vpids(&net->rng, order, net->n);
    for (uint32_t i = 0; i < net->n; i++) {
        if (!late[order[i]]) {
            coll_start(coll, order[i]);
        }
    }
    net_run_random(net);
    for (orte_vpid_t v = 0; v < net->n; v++) {
        any_late = any_late || late[v];
    }
    if (any_late && ORTE_GRPCOMM_OP_XCAST != coll->op) {
        /* nobody can be done while somebody has not entered */
        assert_int_equal(coll->completed, 0);
    }
    if (late[0] && ORTE_GRPCOMM_OP_XCAST == coll->op) {
        assert_int_equal(coll->completed, 0);
    }
    for (uint32_t i = 0; i < net->n; i++) {
        if (late[order[i]]) {
            coll_start(coll, order[i]);
            net_run_random(net);
        }
    }
    free(order);
    free(late);
}

static void run_collective(const orte_grpcomm_module_t *module, orte_grpcomm_op_t op, uint32_t n,
                           uint32_t radix, schedule_t schedule)
{
    uint64_t seed = ((uint64_t) n << 32) ^ ((uint64_t) radix << 16) ^ ((uint64_t) op << 8) ^
                    (uint64_t) schedule ^ (is_tree(module) ? 0 : UINT64_C(1) << 63);
    uint32_t id = 100 + (uint32_t) (seed % 1000);
    net_t *net = net_create(module, n, radix, seed);
    coll_t *coll = coll_new(net, id, op);
    orte_vpid_t *order;

    net->watch = coll;
    switch (schedule) {
    case SCHEDULE_WAVES:
        order = calloc(n, sizeof(*order));
        assert_non_null(order);
        shuffle_vpids(&net->rng, order, n);
        for (uint32_t i = 0; i < n; i++) {
            coll_start(coll, order[i]);
        }
        free(order);
        /* the rounds helper tells the truth */
        assert_int_equal(net_run_waves(net), rounds_of(module, op, n, radix));
        break;
    case SCHEDULE_INTERLEAVED:
        run_interleaved(net, &coll, 1);
        break;
    case SCHEDULE_LATE:
        run_late(net, coll);
        break;
    }
    coll_assert_all_succeeded(coll);
    assert_int_equal(net->messages, expected_messages(module, op, n));
    total_early_deliveries += net->early_deliveries;
    total_runs++;
    coll_free(coll);
    net_destroy(net);
}

static void run_all_sizes(const char *name, orte_grpcomm_op_t op)
{
    const orte_grpcomm_module_t *module = open_component(name);
    const uint32_t *radixes = is_tree(module) ? tree_radixes : bruck_radixes;
    size_t num_radixes = is_tree(module) ? ARRAY_SIZE(tree_radixes) : ARRAY_SIZE(bruck_radixes);
    unsigned runs = total_runs;

    total_early_deliveries = 0;
    for (size_t s = 0; s < ARRAY_SIZE(test_sizes); s++) {
        for (size_t r = 0; r < num_radixes; r++) {
            run_collective(module, op, test_sizes[s], radixes[r], SCHEDULE_WAVES);
            run_collective(module, op, test_sizes[s], radixes[r], SCHEDULE_INTERLEAVED);
            run_collective(module, op, test_sizes[s], radixes[r], SCHEDULE_LATE);
        }
    }
    /* the held-message path was really taken */
    assert_true(total_early_deliveries > 0);
    print_message("%s %s: %u runs, %llu messages arrived before their daemon entered\n", name,
                  orte_grpcomm_op_name(op), total_runs - runs,
                  (unsigned long long) total_early_deliveries);
}

static void test_xcast(const char *name)
{
    run_all_sizes(name, ORTE_GRPCOMM_OP_XCAST);
}

static void test_barrier(const char *name)
{
    run_all_sizes(name, ORTE_GRPCOMM_OP_BARRIER);
}

static void test_allgather(const char *name)
{
    run_all_sizes(name, ORTE_GRPCOMM_OP_ALLGATHER);
}

/* Several collectives of every kind at once, with ids at both ends of the range: none may take
 * another's messages. */
static void test_overlapping(const char *name)
{
    const orte_grpcomm_module_t *module = open_component(name);
    static const uint32_t sizes[] = {1, 2, 5, 13, 64};
    static const struct {
        uint32_t id;
        orte_grpcomm_op_t op;
    } kinds[] = {
        {7, ORTE_GRPCOMM_OP_BARRIER},       {8, ORTE_GRPCOMM_OP_ALLGATHER},
        {9, ORTE_GRPCOMM_OP_XCAST},         {UINT32_MAX, ORTE_GRPCOMM_OP_ALLGATHER},
        {0, ORTE_GRPCOMM_OP_XCAST},         {1, ORTE_GRPCOMM_OP_BARRIER},
        {12345, ORTE_GRPCOMM_OP_ALLGATHER},
    };

    for (size_t s = 0; s < ARRAY_SIZE(sizes); s++) {
        for (uint64_t seed = 1; seed <= 3; seed++) {
            net_t *net = net_create(module, sizes[s], 3, seed * 7919 + sizes[s]);
            coll_t *colls[ARRAY_SIZE(kinds)];

            for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
                colls[k] = coll_new(net, kinds[k].id, kinds[k].op);
            }
            run_interleaved(net, colls, ARRAY_SIZE(kinds));
            for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
                coll_assert_all_succeeded(colls[k]);
                coll_free(colls[k]);
            }
            net_destroy(net);
        }
    }
}

/* A callback may start the next collective: five barriers in a chain. */
static void test_callback_starts_next(const char *name)
{
    const orte_grpcomm_module_t *module = open_component(name);
    net_t *net = net_create(module, 13, 2, 99);
    coll_t *colls[5];

    for (size_t i = 0; i < ARRAY_SIZE(colls); i++) {
        colls[i] = coll_new(net, 500 + (uint32_t) i,
                            0 == i % 2 ? ORTE_GRPCOMM_OP_BARRIER : ORTE_GRPCOMM_OP_ALLGATHER);
        if (i > 0) {
            colls[i - 1]->then = colls[i];
        }
    }
    run_interleaved(net, colls, 1);
    for (size_t i = 0; i < ARRAY_SIZE(colls); i++) {
        coll_assert_all_succeeded(colls[i]);
        coll_free(colls[i]);
    }
    net_destroy(net);
}

/* ------------------------------------------------------------------------------------------ */
/* cost: rounds and messages */

static void test_rounds(const char *name)
{
    const orte_grpcomm_module_t *module = open_component(name);
    static const uint32_t bruck_expected[][3] = {
        /* n, xcast (binomial hops), barrier/allgather (ceil log2 n) */
        {1, 0, 0}, {2, 1, 1}, {3, 1, 2}, {5, 2, 3}, {8, 3, 3}, {13, 3, 4}, {64, 6, 6}, {256, 8, 8},
    };
    static const uint32_t tree_expected[][3] = {
        /* n, radix, depth */
        {1, 2, 0},  {2, 2, 1},   {3, 2, 1},   {4, 2, 2},    {8, 2, 3},
        {13, 3, 2}, {64, 1, 63}, {256, 4, 4}, {256, 64, 2}, {256, 255, 1},
    };
    uint32_t rounds = 12345;

    if (is_tree(module)) {
        for (size_t i = 0; i < ARRAY_SIZE(tree_expected); i++) {
            uint32_t n = tree_expected[i][0], radix = tree_expected[i][1];
            uint32_t depth = tree_expected[i][2];

            assert_int_equal(rounds_of(module, ORTE_GRPCOMM_OP_XCAST, n, radix), depth);
            assert_int_equal(rounds_of(module, ORTE_GRPCOMM_OP_BARRIER, n, radix), 2 * depth);
            assert_int_equal(rounds_of(module, ORTE_GRPCOMM_OP_ALLGATHER, n, radix), 2 * depth);
        }
        assert_int_equal(module->rounds(ORTE_GRPCOMM_OP_BARRIER, 8, 0, &rounds),
                         HERD_ERR_BAD_PARAM);
    } else {
        for (size_t i = 0; i < ARRAY_SIZE(bruck_expected); i++) {
            uint32_t n = bruck_expected[i][0];

            for (uint32_t radix = 1; radix <= 4; radix++) {
                assert_int_equal(rounds_of(module, ORTE_GRPCOMM_OP_XCAST, n, radix),
                                 bruck_expected[i][1]);
                assert_int_equal(rounds_of(module, ORTE_GRPCOMM_OP_BARRIER, n, radix),
                                 bruck_expected[i][2]);
                assert_int_equal(rounds_of(module, ORTE_GRPCOMM_OP_ALLGATHER, n, radix),
                                 bruck_expected[i][2]);
            }
        }
    }
    assert_int_equal(module->rounds(ORTE_GRPCOMM_OP_BARRIER, 0, 2, &rounds), HERD_ERR_BAD_PARAM);
    assert_int_equal(module->rounds((orte_grpcomm_op_t) 9, 8, 2, &rounds), HERD_ERR_BAD_PARAM);
    assert_int_equal(rounds, 12345); /* untouched on error */
    /* the base helper answers for the selected component */
    assert_int_equal(orte_grpcomm_base_rounds(ORTE_GRPCOMM_OP_ALLGATHER, 256, 4, &rounds),
                     HERD_SUCCESS);
    assert_int_equal(rounds, 8); /* 2 * depth 4, and ceil(log2 256) */
    assert_int_equal(orte_grpcomm_base_rounds(ORTE_GRPCOMM_OP_XCAST, 13, 3, &rounds), HERD_SUCCESS);
    assert_int_equal(rounds, is_tree(module) ? 2 : 3);
    orte_grpcomm_base_close();
    assert_int_equal(orte_grpcomm_base_rounds(ORTE_GRPCOMM_OP_XCAST, 13, 3, &rounds),
                     HERD_ERR_NOT_FOUND);
}

/* Bruck: n * ceil(log2 n) messages, n per round, each daemon receiving n - 1 blobs. Tree: one
 * message per edge each way; a level never sends more than n; but the release carries all n
 * blobs to every daemon. */
static void test_message_counts(const char *name)
{
    const orte_grpcomm_module_t *module = open_component(name);

    for (size_t s = 0; s < ARRAY_SIZE(test_sizes); s++) {
        uint32_t n = test_sizes[s];
        uint32_t radix = 4;
        uint32_t log = orte_grpcomm_base_ceil_log2(n);
        net_t *net = net_create(module, n, radix, 4242 + n);
        coll_t *coll = coll_new(net, 77, ORTE_GRPCOMM_OP_ALLGATHER);

        for (orte_vpid_t v = 0; v < n; v++) {
            coll_start(coll, v);
        }
        net_run_waves(net);
        coll_assert_all_succeeded(coll);
        if (is_tree(module)) {
            orte_vpid_t children[4];
            uint64_t gathered = 0;

            assert_int_equal(net->by_tag[ORTE_GRPCOMM_TAG_GATHER - ORTE_GRPCOMM_TAG_BASE], n - 1);
            assert_int_equal(net->by_tag[ORTE_GRPCOMM_TAG_XCAST - ORTE_GRPCOMM_TAG_BASE], n - 1);
            assert_true(net->max_wave <= n);
            for (orte_vpid_t v = 0; v < n; v++) {
                /* one message up, one down to each child */
                assert_int_equal(net->by_daemon[v],
                                 (0 == v ? 0 : 1) + orte_radix_children(v, n, radix, children));
                if (v > 0) {
                    gathered += orte_radix_subtree_size(v, n, radix);
                }
            }
            assert_int_equal(net->gather_blobs, gathered);
            assert_int_equal(net->release_blobs, (uint64_t) (n - 1) * n);
        } else {
            assert_int_equal(net->messages, (uint64_t) n * log);
            assert_int_equal(net->by_tag[ORTE_GRPCOMM_TAG_ALLGATHER_ROUND - ORTE_GRPCOMM_TAG_BASE],
                             (uint64_t) n * log);
            for (orte_vpid_t v = 0; v < n; v++) {
                assert_int_equal(net->by_daemon[v], log);
            }
            if (n > 1) {
                assert_int_equal(net->max_wave, n);
            }
            assert_int_equal(net->round_blobs, (uint64_t) n * (n - 1));
        }
        if (256 == n) {
            print_message(
                "%s allgather n=256: %llu messages, %llu blobs carried\n", name,
                (unsigned long long) net->messages,
                (unsigned long long) (net->gather_blobs + net->release_blobs + net->round_blobs));
        }
        coll_free(coll);
        net_destroy(net);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* failures */

/* abort_all fails what is pending, exactly once, and collectives known only from held messages
 * fail as soon as they start; later ids still work. */
static void test_abort_all(const char *name)
{
    const orte_grpcomm_module_t *module = open_component(name);
    const uint32_t n = 13;
    net_t *net = net_create(module, n, 3, 31337);
    coll_t *gather = coll_new(net, 1, ORTE_GRPCOMM_OP_ALLGATHER);
    coll_t *barrier = coll_new(net, 2, ORTE_GRPCOMM_OP_BARRIER);
    coll_t *after = coll_new(net, 3, ORTE_GRPCOMM_OP_BARRIER);

    for (orte_vpid_t v = 0; v < n; v++) {
        if (5 != v && 9 != v) {
            coll_start(gather, v);
        }
        if (0 != v) {
            coll_start(barrier, v);
        }
    }
    net_run_random(net);
    assert_int_equal(gather->completed + gather->failed, 0);
    assert_int_equal(barrier->completed + barrier->failed, 0);

    assert_int_equal(module->abort_all(net->inst[0], HERD_SUCCESS), HERD_ERR_BAD_PARAM);
    assert_int_equal(module->abort_all(NULL, HERD_ERR_UNREACH), HERD_ERR_BAD_PARAM);
    for (orte_vpid_t v = 0; v < n; v++) {
        assert_int_equal(module->abort_all(net->inst[v], HERD_ERR_UNREACH), HERD_SUCCESS);
    }
    assert_int_equal(gather->failed, n - 2);
    assert_int_equal(barrier->failed, n - 1);
    /* the latecomers: those holding messages fail at once, the others at the next abort */
    coll_start(gather, 5);
    coll_start(gather, 9);
    coll_start(barrier, 0);
    /* the root heard from its children; in bruck everybody hears from its ring neighbours */
    assert_int_equal(barrier->slots[0].calls, 1);
    assert_int_equal(barrier->slots[0].status, HERD_ERR_UNREACH);
    if (!is_tree(module)) {
        assert_int_equal(gather->slots[5].calls, 1);
        assert_int_equal(gather->slots[9].calls, 1);
    }
    for (orte_vpid_t v = 0; v < n; v++) {
        assert_int_equal(module->abort_all(net->inst[v], HERD_ERR_UNREACH), HERD_SUCCESS);
    }
    for (orte_vpid_t v = 0; v < n; v++) {
        assert_int_equal(gather->slots[v].calls, 1);
        assert_int_equal(gather->slots[v].status, HERD_ERR_UNREACH);
        assert_int_equal(barrier->slots[v].calls, 1);
        assert_int_equal(barrier->slots[v].status, HERD_ERR_UNREACH);
    }
    /* stragglers of the aborted collectives are harmless */
    net_run_random(net);
    assert_int_equal(gather->failed, n);
    assert_int_equal(barrier->failed, n);
    for (orte_vpid_t v = 0; v < n; v++) {
        coll_start(after, v);
    }
    net_run_random(net);
    coll_assert_all_succeeded(after);
    coll_free(gather);
    coll_free(barrier);
    coll_free(after);
    net_destroy(net); /* frees what the stragglers left held */
}

/* A send that fails fails the sender's collective through its callback, with the reason
 * reported. */
static void test_send_failure(const char *name)
{
    const orte_grpcomm_module_t *module = open_component(name);
    net_t *net = net_create(module, 8, 2, 5);
    coll_t *coll = coll_new(net, 40, ORTE_GRPCOMM_OP_ALLGATHER);
    char *text;

    net->failing_sender = 2;
    net->send_error = HERD_ERR_UNREACH;
    herd_test_capture_start(&stderr_capture);
    for (orte_vpid_t v = 0; v < 8; v++) {
        coll_start(coll, v);
    }
    net_run_random(net);
    text = herd_test_capture_stop(&stderr_capture);
    assert_non_null(strstr(text, "Daemon 2 could not send"));
    free(text);
    assert_int_equal(coll->slots[2].calls, 1);
    assert_int_equal(coll->slots[2].status, HERD_ERR_UNREACH);
    assert_int_equal(coll->completed, 0);
    for (orte_vpid_t v = 0; v < 8; v++) {
        assert_int_equal(module->abort_all(net->inst[v], HERD_ERR_TIMEOUT), HERD_SUCCESS);
        assert_int_equal(coll->slots[v].calls, 1);
    }
    assert_int_equal(coll->failed, 8);
    coll_free(coll);
    net_destroy(net);
}

static void test_bad_arguments(const char *name)
{
    const orte_grpcomm_module_t *module = open_component(name);
    orte_grpcomm_t *sentinel = (orte_grpcomm_t *) &sentinel;
    orte_grpcomm_t *g = sentinel;
    orte_grpcomm_transport_t transport = {
        .me = 0, .num_daemons = 4, .radix = 2, .send = no_send, .ctx = NULL};
    net_t *net;
    coll_t *coll;
    coll_t *again;

    assert_int_equal(module->create(NULL, &g), HERD_ERR_BAD_PARAM);
    assert_int_equal(module->create(&transport, NULL), HERD_ERR_BAD_PARAM);
    transport.num_daemons = 0;
    assert_int_equal(module->create(&transport, &g), HERD_ERR_BAD_PARAM);
    transport.num_daemons = 4;
    transport.me = 4;
    assert_int_equal(module->create(&transport, &g), HERD_ERR_BAD_PARAM);
    transport.me = 0;
    transport.send = NULL;
    assert_int_equal(module->create(&transport, &g), HERD_ERR_BAD_PARAM);
    transport.send = no_send;
    transport.radix = 0;
    /* only the tree needs a radix */
    if (is_tree(module)) {
        assert_int_equal(module->create(&transport, &g), HERD_ERR_BAD_PARAM);
        assert_ptr_equal(g, sentinel);
    } else {
        assert_int_equal(module->create(&transport, &g), HERD_SUCCESS);
        module->destroy(g);
    }
    module->destroy(NULL);

    net = net_create(module, 4, 2, 3);
    coll = coll_new(net, 60, ORTE_GRPCOMM_OP_ALLGATHER);
    assert_int_equal(module->barrier(net->inst[1], 61, NULL, NULL), HERD_ERR_BAD_PARAM);
    assert_int_equal(module->allgather(net->inst[1], 61, NULL, 5, coll_cb, &coll->slots[1]),
                     HERD_ERR_BAD_PARAM);
    assert_int_equal(module->xcast(NULL, 61, NULL, 0, coll_cb, &coll->slots[1]),
                     HERD_ERR_BAD_PARAM);
    assert_int_equal(module->deliver(net->inst[1], 0, ORTE_GRPCOMM_TAG_XCAST, NULL, 3),
                     HERD_ERR_BAD_PARAM);
    assert_int_equal(module->deliver(NULL, 0, ORTE_GRPCOMM_TAG_XCAST, "x", 1), HERD_ERR_BAD_PARAM);
    /* the same id twice on one daemon: refused, and the first one is unharmed */
    coll_start(coll, 1);
    again = coll_new(net, 60, ORTE_GRPCOMM_OP_BARRIER);
    assert_int_equal(coll_try_start(again, 1), HERD_ERR_EXISTS);
    assert_int_equal(again->slots[1].calls, 0);
    coll_start(coll, 0);
    coll_start(coll, 2);
    coll_start(coll, 3);
    net_run_random(net);
    coll_assert_all_succeeded(coll);
    /* a pending collective and held messages are freed by destroy, without callbacks */
    coll_free(again);
    again = coll_new(net, 62, ORTE_GRPCOMM_OP_BARRIER);
    coll_start(again, 1);
    coll_start(again, 2);
    coll_start(again, 3);
    net_run_random(net);
    assert_int_equal(again->completed + again->failed, 0);
    net_destroy(net);
    coll_free(coll);
    coll_free(again);
}

/* ------------------------------------------------------------------------------------------ */
/* malformed messages */

static void craft_header(opal_buffer_t *buffer, uint8_t version, uint8_t algorithm, uint8_t op,
                         uint32_t id, uint32_t n, uint32_t round)
{
    opal_buffer_init(buffer);
    assert_int_equal(opal_buffer_pack_uint8(buffer, version), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_uint8(buffer, algorithm), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_uint8(buffer, op), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_uint32(buffer, id), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_uint32(buffer, n), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_uint32(buffer, round), HERD_SUCCESS);
}

/* A blob set: the count it claims, then the listed daemons' blobs. */
static void craft_blobs(opal_buffer_t *buffer, uint32_t id, uint32_t claimed,
                        const orte_vpid_t *vpids, uint32_t count)
{
    assert_int_equal(opal_buffer_pack_uint32(buffer, claimed), HERD_SUCCESS);
    for (uint32_t i = 0; i < count; i++) {
        uint8_t bytes[64];
        size_t len = blob_len(id, vpids[i]);

        for (size_t b = 0; b < len; b++) {
            bytes[b] = blob_byte(id, vpids[i], b);
        }
        assert_int_equal(opal_buffer_pack_uint32(buffer, vpids[i]), HERD_SUCCESS);
        assert_int_equal(opal_buffer_pack_bytes(buffer, bytes, len), HERD_SUCCESS);
    }
}

/* Delivers a crafted message and checks it is rejected with rc, the log naming the sender and
 * containing needle. */
static void expect_rejection(net_t *net, orte_vpid_t dst, orte_vpid_t src, uint16_t tag,
                             opal_buffer_t *buffer, int rc, const char *needle)
{
    char sender[64];
    char *text;
    int got;

    herd_test_capture_start(&stderr_capture);
    got = net->module->deliver(net->inst[dst], src, tag, buffer->base, buffer->used);
    text = herd_test_capture_stop(&stderr_capture);
    opal_buffer_destruct(buffer);
    if (got != rc || NULL == strstr(text, needle)) {
        print_error("expected rc %d and \"%s\", got rc %d and:\n%s\n", rc, needle, got, text);
    }
    assert_int_equal(got, rc);
    snprintf(sender, sizeof(sender), "from daemon %u", src);
    assert_non_null(strstr(text, sender));
    assert_non_null(strstr(text, needle));
    free(text);
}

static void expect_accepted(net_t *net, orte_vpid_t dst, orte_vpid_t src, uint16_t tag,
                            opal_buffer_t *buffer)
{
    assert_int_equal(net->module->deliver(net->inst[dst], src, tag, buffer->base, buffer->used),
                     HERD_SUCCESS);
    opal_buffer_destruct(buffer);
}

/* Starts collective id of kind op on daemon v and checks it fails at once with rc: the
 * rejected message named it, so it must not hang. */
static void expect_failed_start(net_t *net, orte_vpid_t v, uint32_t id, orte_grpcomm_op_t op,
                                int rc)
{
    coll_t *coll = coll_new(net, id, op);

    coll_start(coll, v);
    assert_int_equal(coll->slots[v].calls, 1);
    assert_int_equal(coll->slots[v].status, rc);
    coll_free(coll);
}

/* What any component refuses before looking at the algorithm. */
static void test_malformed_common(const char *name)
{
    const orte_grpcomm_module_t *module = open_component(name);
    uint8_t mine = is_tree(module) ? ORTE_GRPCOMM_ALGORITHM_TREE : ORTE_GRPCOMM_ALGORITHM_BRUCK;
    uint8_t other = is_tree(module) ? ORTE_GRPCOMM_ALGORITHM_BRUCK : ORTE_GRPCOMM_ALGORITHM_TREE;
    uint16_t any_tag = is_tree(module) ? ORTE_GRPCOMM_TAG_GATHER : ORTE_GRPCOMM_TAG_BARRIER_ROUND;
    net_t *net = net_create(module, 8, 2, 11);
    opal_buffer_t msg;
    char *text;

    net->expect_accept = false;
    craft_header(&msg, 2, mine, ORTE_GRPCOMM_OP_BARRIER, 10, 8, 0);
    expect_rejection(net, 1, 3, any_tag, &msg, HERD_ERR_VERSION_MISMATCH, "wire format version 2");
    opal_buffer_init(&msg);
    expect_rejection(net, 1, 3, any_tag, &msg, HERD_ERR_UNPACK_FAILURE, "too short");
    opal_buffer_init(&msg);
    assert_int_equal(opal_buffer_pack_uint8(&msg, ORTE_GRPCOMM_WIRE_VERSION), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_uint8(&msg, mine), HERD_SUCCESS);
    expect_rejection(net, 1, 3, any_tag, &msg, HERD_ERR_UNPACK_FAILURE, "header is truncated");
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, mine, 9, 10, 8, 0);
    expect_rejection(net, 1, 3, any_tag, &msg, HERD_ERR_UNPACK_FAILURE, "operation 9");
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, mine, ORTE_GRPCOMM_OP_BARRIER, 10, 8, 0);
    expect_rejection(net, 1, 3, ORTE_GRPCOMM_TAG_BASE + 9, &msg, HERD_ERR_BAD_PARAM,
                     "not one of grpcomm's");
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, mine, ORTE_GRPCOMM_OP_BARRIER, 10, 8, 0);
    expect_rejection(net, 1, 8, any_tag, &msg, HERD_ERR_BAD_PARAM, "not another daemon");
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, mine, ORTE_GRPCOMM_OP_BARRIER, 10, 8, 0);
    expect_rejection(net, 1, 1, any_tag, &msg, HERD_ERR_BAD_PARAM, "not another daemon");
    /* no header, so no collective could be failed: 10 still works... checked below */

    /* wrong DVM size and wrong component: the named collective fails */
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, mine, ORTE_GRPCOMM_OP_ALLGATHER, 20, 9, 0);
    craft_blobs(&msg, 20, 1, (const orte_vpid_t[]){3}, 1);
    expect_rejection(net, 1, 3,
                     is_tree(module) ? ORTE_GRPCOMM_TAG_GATHER : ORTE_GRPCOMM_TAG_ALLGATHER_ROUND,
                     &msg, HERD_ERR_BAD_PARAM, "counts 9 daemons");
    expect_failed_start(net, 1, 20, ORTE_GRPCOMM_OP_ALLGATHER, HERD_ERR_BAD_PARAM);
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, other, ORTE_GRPCOMM_OP_BARRIER, 21, 8, 0);
    expect_rejection(net, 1, 0, ORTE_GRPCOMM_TAG_BARRIER_ROUND, &msg, HERD_ERR_BAD_PARAM,
                     "another grpcomm component");
    expect_failed_start(net, 1, 21, ORTE_GRPCOMM_OP_BARRIER, HERD_ERR_BAD_PARAM);

    /* blob sets: too many, a daemon that does not exist, one daemon twice, trailing bytes */
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, mine, ORTE_GRPCOMM_OP_ALLGATHER, 22, 8, 0);
    craft_blobs(&msg, 22, 9, (const orte_vpid_t[]){0}, 1);
    expect_rejection(net, 1, 0, ORTE_GRPCOMM_TAG_XCAST, &msg, HERD_ERR_UNPACK_FAILURE,
                     "carries 9 blobs, but the DVM has 8");
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, mine, ORTE_GRPCOMM_OP_ALLGATHER, 23, 8, 0);
    craft_blobs(&msg, 23, 2, (const orte_vpid_t[]){0, 8}, 2);
    expect_rejection(net, 1, 0, ORTE_GRPCOMM_TAG_XCAST, &msg, HERD_ERR_UNPACK_FAILURE,
                     "blob of daemon 8, but the DVM has 8");
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, mine, ORTE_GRPCOMM_OP_ALLGATHER, 24, 8, 0);
    craft_blobs(&msg, 24, 2, (const orte_vpid_t[]){3, 3}, 2);
    expect_rejection(net, 1, 0, ORTE_GRPCOMM_TAG_XCAST, &msg, HERD_ERR_UNPACK_FAILURE,
                     "blob of daemon 3 twice");
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, mine, ORTE_GRPCOMM_OP_ALLGATHER, 25, 8, 0);
    craft_blobs(&msg, 25, 3, (const orte_vpid_t[]){3, 4}, 2);
    expect_rejection(net, 1, 0, ORTE_GRPCOMM_TAG_XCAST, &msg, HERD_ERR_UNPACK_FAILURE,
                     "blob 3 of 3 is truncated");
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, mine, ORTE_GRPCOMM_OP_BARRIER, 26, 8, 0);
    assert_int_equal(opal_buffer_pack_uint32(&msg, 7), HERD_SUCCESS);
    expect_rejection(net, 1, 0, ORTE_GRPCOMM_TAG_BARRIER_ROUND, &msg, HERD_ERR_UNPACK_FAILURE,
                     "unexpected bytes");
    expect_failed_start(net, 1, 26, ORTE_GRPCOMM_OP_BARRIER, HERD_ERR_UNPACK_FAILURE);
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, mine, ORTE_GRPCOMM_OP_ALLGATHER, 27, 8, 0);
    expect_rejection(net, 1, 0, ORTE_GRPCOMM_TAG_BARRIER_ROUND, &msg, HERD_ERR_UNPACK_FAILURE,
                     "barrier round, but its header says allgather");
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, mine, ORTE_GRPCOMM_OP_XCAST, 28, 8, 0);
    expect_rejection(net, 1, 0, ORTE_GRPCOMM_TAG_GATHER, &msg, HERD_ERR_UNPACK_FAILURE,
                     "never gathered");

    /* broadcasts: only from the parent, never to the root, and without rounds */
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, mine, ORTE_GRPCOMM_OP_XCAST, 29, 8, 0);
    assert_int_equal(opal_buffer_pack_bytes(&msg, "hi", 2), HERD_SUCCESS);
    expect_rejection(net, 1, 3, ORTE_GRPCOMM_TAG_XCAST, &msg, HERD_ERR_BAD_PARAM,
                     "daemon 3 is not the parent of daemon 1");
    expect_failed_start(net, 1, 29, ORTE_GRPCOMM_OP_XCAST, HERD_ERR_BAD_PARAM);
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, mine, ORTE_GRPCOMM_OP_XCAST, 30, 8, 0);
    assert_int_equal(opal_buffer_pack_bytes(&msg, "hi", 2), HERD_SUCCESS);
    expect_rejection(net, 0, 1, ORTE_GRPCOMM_TAG_XCAST, &msg, HERD_ERR_BAD_PARAM, "is the root");
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, mine, ORTE_GRPCOMM_OP_XCAST, 31, 8, 3);
    assert_int_equal(opal_buffer_pack_bytes(&msg, "hi", 2), HERD_SUCCESS);
    expect_rejection(net, 1, 0, ORTE_GRPCOMM_TAG_XCAST, &msg, HERD_ERR_BAD_PARAM,
                     "round 3 of a broadcast");
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, mine, ORTE_GRPCOMM_OP_XCAST, 32, 8, 0);
    expect_rejection(net, 1, 0, ORTE_GRPCOMM_TAG_XCAST, &msg, HERD_ERR_UNPACK_FAILURE,
                     "payload is truncated");

    /* a good xcast is still accepted and held until its daemon starts it, twice is too many */
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, mine, ORTE_GRPCOMM_OP_XCAST, 33, 8, 0);
    assert_int_equal(opal_buffer_pack_bytes(&msg, NULL, 0), HERD_SUCCESS);
    expect_accepted(net, 1, 0, ORTE_GRPCOMM_TAG_XCAST, &msg);
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, mine, ORTE_GRPCOMM_OP_XCAST, 33, 8, 0);
    assert_int_equal(opal_buffer_pack_bytes(&msg, NULL, 0), HERD_SUCCESS);
    expect_rejection(net, 1, 0, ORTE_GRPCOMM_TAG_XCAST, &msg, HERD_ERR_BAD_PARAM,
                     "repeats a message");
    expect_failed_start(net, 1, 33, ORTE_GRPCOMM_OP_XCAST, HERD_ERR_BAD_PARAM);

    /* held for one kind, started as another: the start fails and says why */
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, mine, ORTE_GRPCOMM_OP_XCAST, 34, 8, 0);
    assert_int_equal(opal_buffer_pack_bytes(&msg, "x", 1), HERD_SUCCESS);
    expect_accepted(net, 1, 0, ORTE_GRPCOMM_TAG_XCAST, &msg);
    herd_test_capture_start(&stderr_capture);
    expect_failed_start(net, 1, 34, ORTE_GRPCOMM_OP_BARRIER, HERD_ERR_BAD_PARAM);
    text = herd_test_capture_stop(&stderr_capture);
    assert_non_null(strstr(text, "held for operation xcast"));
    assert_non_null(strstr(text, "from daemon 0"));
    free(text);

    /* a started collective gets a message of another kind: it fails there and then */
    {
        coll_t *coll = coll_new(net, 35, ORTE_GRPCOMM_OP_BARRIER);

        coll_start(coll, 1);
        craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, mine, ORTE_GRPCOMM_OP_XCAST, 35, 8, 0);
        assert_int_equal(opal_buffer_pack_bytes(&msg, "x", 1), HERD_SUCCESS);
        expect_rejection(net, 1, 0, ORTE_GRPCOMM_TAG_XCAST, &msg, HERD_ERR_BAD_PARAM,
                         "runs collective 35 as operation barrier");
        assert_int_equal(coll->slots[1].calls, 1);
        assert_int_equal(coll->slots[1].status, HERD_ERR_BAD_PARAM);
        coll_free(coll);
    }

    /* rejections that could not name a collective failed nothing */
    {
        coll_t *coll = coll_new(net, 10, ORTE_GRPCOMM_OP_XCAST);

        for (orte_vpid_t v = 0; v < 8; v++) {
            coll_start(coll, v);
        }
        net->expect_accept = true;
        net_run_random(net);
        coll_assert_all_succeeded(coll);
        coll_free(coll);
    }
    net_destroy(net);
}

/* Tree: daemon 1 of 8 with radix 2 has parent 0 and children 3 (subtree {3, 7}) and 4. */
static void test_malformed_tree(void **state)
{
    const orte_grpcomm_module_t *module = open_component("tree");
    uint8_t tree = ORTE_GRPCOMM_ALGORITHM_TREE;
    net_t *net = net_create(module, 8, 2, 12);
    opal_buffer_t msg;
    coll_t *coll;

    net->expect_accept = false;
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, tree, ORTE_GRPCOMM_OP_BARRIER, 50, 8, 0);
    assert_int_equal(opal_buffer_pack_uint32(&msg, 1), HERD_SUCCESS);
    expect_rejection(net, 1, 2, ORTE_GRPCOMM_TAG_GATHER, &msg, HERD_ERR_BAD_PARAM,
                     "daemon 2 is not a child of daemon 1 in the radix-2 tree");
    expect_failed_start(net, 1, 50, ORTE_GRPCOMM_OP_BARRIER, HERD_ERR_BAD_PARAM);
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, tree, ORTE_GRPCOMM_OP_BARRIER, 51, 8, 0);
    assert_int_equal(opal_buffer_pack_uint32(&msg, 1), HERD_SUCCESS);
    expect_rejection(net, 1, 3, ORTE_GRPCOMM_TAG_GATHER, &msg, HERD_ERR_BAD_PARAM,
                     "accounts for 1 daemons, but the subtree of daemon 3 has 2");
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, tree, ORTE_GRPCOMM_OP_ALLGATHER, 52, 8, 0);
    craft_blobs(&msg, 52, 1, (const orte_vpid_t[]){3}, 1);
    expect_rejection(net, 1, 3, ORTE_GRPCOMM_TAG_GATHER, &msg, HERD_ERR_BAD_PARAM,
                     "subtree of daemon 3 has 2");
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, tree, ORTE_GRPCOMM_OP_ALLGATHER, 53, 8, 0);
    craft_blobs(&msg, 53, 2, (const orte_vpid_t[]){3, 5}, 2);
    expect_rejection(net, 1, 3, ORTE_GRPCOMM_TAG_GATHER, &msg, HERD_ERR_BAD_PARAM,
                     "blob of daemon 5, which is not in the subtree of daemon 3");
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, tree, ORTE_GRPCOMM_OP_BARRIER, 54, 8, 2);
    assert_int_equal(opal_buffer_pack_uint32(&msg, 1), HERD_SUCCESS);
    expect_rejection(net, 1, 4, ORTE_GRPCOMM_TAG_GATHER, &msg, HERD_ERR_BAD_PARAM,
                     "round 2, but a gather has no rounds");
    /* the release must carry every daemon's blob */
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, tree, ORTE_GRPCOMM_OP_ALLGATHER, 55, 8, 0);
    craft_blobs(&msg, 55, 7, (const orte_vpid_t[]){0, 1, 2, 3, 4, 5, 6}, 7);
    expect_rejection(net, 1, 0, ORTE_GRPCOMM_TAG_XCAST, &msg, HERD_ERR_BAD_PARAM,
                     "releases 7 blobs, not one for each of the 8 daemons");
    expect_failed_start(net, 1, 55, ORTE_GRPCOMM_OP_ALLGATHER, HERD_ERR_BAD_PARAM);
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, tree, ORTE_GRPCOMM_OP_BARRIER, 56, 8, 0);
    expect_rejection(net, 1, 2, ORTE_GRPCOMM_TAG_BARRIER_ROUND, &msg, HERD_ERR_BAD_PARAM,
                     "never sends barrier round");

    /* a child contributing twice: once held, once consumed */
    coll = coll_new(net, 57, ORTE_GRPCOMM_OP_ALLGATHER);
    coll_start(coll, 1);
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, tree, ORTE_GRPCOMM_OP_ALLGATHER, 57, 8, 0);
    craft_blobs(&msg, 57, 1, (const orte_vpid_t[]){4}, 1);
    expect_accepted(net, 1, 4, ORTE_GRPCOMM_TAG_GATHER, &msg);
    assert_int_equal(coll->slots[1].calls, 0);
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, tree, ORTE_GRPCOMM_OP_ALLGATHER, 57, 8, 0);
    craft_blobs(&msg, 57, 1, (const orte_vpid_t[]){4}, 1);
    expect_rejection(net, 1, 4, ORTE_GRPCOMM_TAG_GATHER, &msg, HERD_ERR_BAD_PARAM,
                     "daemon 4 already contributed");
    assert_int_equal(coll->slots[1].calls, 1);
    assert_int_equal(coll->slots[1].status, HERD_ERR_BAD_PARAM);
    coll_free(coll);

    /* released before this daemon's subtree was in */
    coll = coll_new(net, 58, ORTE_GRPCOMM_OP_BARRIER);
    coll_start(coll, 1);
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, tree, ORTE_GRPCOMM_OP_BARRIER, 58, 8, 0);
    expect_rejection(net, 1, 0, ORTE_GRPCOMM_TAG_XCAST, &msg, HERD_ERR_BAD_PARAM,
                     "releases the collective before daemon 1 contributed");
    assert_int_equal(coll->slots[1].calls, 1);
    assert_int_equal(coll->slots[1].status, HERD_ERR_BAD_PARAM);
    coll_free(coll);
    net_destroy(net);
}

/* Bruck: daemon 1 of 8 (3 rounds) hears allgather round r from 1 + 2^r and barrier round r
 * from 1 - 2^r; its binomial parent is 0. */
static void test_malformed_bruck(void **state)
{
    const orte_grpcomm_module_t *module = open_component("bruck");
    uint8_t bruck = ORTE_GRPCOMM_ALGORITHM_BRUCK;
    net_t *net = net_create(module, 8, 2, 13);
    opal_buffer_t msg;
    coll_t *coll;

    net->expect_accept = false;
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, bruck, ORTE_GRPCOMM_OP_ALLGATHER, 70, 8, 0);
    craft_blobs(&msg, 70, 1, (const orte_vpid_t[]){3}, 1);
    expect_rejection(net, 1, 3, ORTE_GRPCOMM_TAG_ALLGATHER_ROUND, &msg, HERD_ERR_BAD_PARAM,
                     "round 0 reaches daemon 1 from daemon 2, not from daemon 3");
    expect_failed_start(net, 1, 70, ORTE_GRPCOMM_OP_ALLGATHER, HERD_ERR_BAD_PARAM);
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, bruck, ORTE_GRPCOMM_OP_ALLGATHER, 71, 8, 3);
    craft_blobs(&msg, 71, 1, (const orte_vpid_t[]){5}, 1);
    expect_rejection(net, 1, 5, ORTE_GRPCOMM_TAG_ALLGATHER_ROUND, &msg, HERD_ERR_BAD_PARAM,
                     "names round 3, but allgather among 8 daemons takes 3 rounds");
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, bruck, ORTE_GRPCOMM_OP_ALLGATHER, 72, 8, 1);
    craft_blobs(&msg, 72, 1, (const orte_vpid_t[]){3}, 1);
    expect_rejection(net, 1, 3, ORTE_GRPCOMM_TAG_ALLGATHER_ROUND, &msg, HERD_ERR_BAD_PARAM,
                     "carries 1 blobs, but round 1 of an allgather among 8 daemons carries 2");
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, bruck, ORTE_GRPCOMM_OP_ALLGATHER, 73, 8, 1);
    craft_blobs(&msg, 73, 2, (const orte_vpid_t[]){4, 3}, 2);
    expect_rejection(net, 1, 3, ORTE_GRPCOMM_TAG_ALLGATHER_ROUND, &msg, HERD_ERR_BAD_PARAM,
                     "blob 1 it carries is daemon 4's, daemon 3's belongs there");
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, bruck, ORTE_GRPCOMM_OP_BARRIER, 74, 8, 0);
    expect_rejection(net, 1, 2, ORTE_GRPCOMM_TAG_BARRIER_ROUND, &msg, HERD_ERR_BAD_PARAM,
                     "round 0 reaches daemon 1 from daemon 0, not from daemon 2");
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, bruck, ORTE_GRPCOMM_OP_BARRIER, 75, 8, 0);
    assert_int_equal(opal_buffer_pack_uint32(&msg, 1), HERD_SUCCESS);
    expect_rejection(net, 1, 3, ORTE_GRPCOMM_TAG_GATHER, &msg, HERD_ERR_BAD_PARAM,
                     "never sends gather");
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, bruck, ORTE_GRPCOMM_OP_BARRIER, 76, 8, 0);
    expect_rejection(net, 1, 0, ORTE_GRPCOMM_TAG_XCAST, &msg, HERD_ERR_BAD_PARAM,
                     "releases no barrier by broadcast");
    /* binomial tree: 5's parent is 1, not 4 */
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, bruck, ORTE_GRPCOMM_OP_XCAST, 77, 8, 0);
    assert_int_equal(opal_buffer_pack_bytes(&msg, "x", 1), HERD_SUCCESS);
    expect_rejection(net, 5, 4, ORTE_GRPCOMM_TAG_XCAST, &msg, HERD_ERR_BAD_PARAM,
                     "daemon 4 is not the parent of daemon 5 in the broadcast tree of the "
                     "bruck component (daemon 1 is)");

    /* a round twice: held twice, then consumed and repeated */
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, bruck, ORTE_GRPCOMM_OP_BARRIER, 78, 8, 1);
    expect_accepted(net, 1, 7, ORTE_GRPCOMM_TAG_BARRIER_ROUND, &msg);
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, bruck, ORTE_GRPCOMM_OP_BARRIER, 78, 8, 1);
    expect_rejection(net, 1, 7, ORTE_GRPCOMM_TAG_BARRIER_ROUND, &msg, HERD_ERR_BAD_PARAM,
                     "repeats a message");
    expect_failed_start(net, 1, 78, ORTE_GRPCOMM_OP_BARRIER, HERD_ERR_BAD_PARAM);
    coll = coll_new(net, 79, ORTE_GRPCOMM_OP_ALLGATHER);
    coll_start(coll, 1);
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, bruck, ORTE_GRPCOMM_OP_ALLGATHER, 79, 8, 0);
    craft_blobs(&msg, 79, 1, (const orte_vpid_t[]){2}, 1);
    expect_accepted(net, 1, 2, ORTE_GRPCOMM_TAG_ALLGATHER_ROUND, &msg);
    craft_header(&msg, ORTE_GRPCOMM_WIRE_VERSION, bruck, ORTE_GRPCOMM_OP_ALLGATHER, 79, 8, 0);
    craft_blobs(&msg, 79, 1, (const orte_vpid_t[]){2}, 1);
    expect_rejection(net, 1, 2, ORTE_GRPCOMM_TAG_ALLGATHER_ROUND, &msg, HERD_ERR_BAD_PARAM,
                     "repeats round 0, which daemon 1 already has");
    assert_int_equal(coll->slots[1].calls, 1);
    assert_int_equal(coll->slots[1].status, HERD_ERR_BAD_PARAM);
    coll_free(coll);
    net_destroy(net);
}

/* Every strict prefix of every real message is refused, and random corruption is refused or
 * accepted but never crashes (valgrind watches the reads). */
static void test_truncated_and_corrupted(const char *name)
{
    const orte_grpcomm_module_t *module = open_component(name);
    const uint32_t n = 5;
    net_t *net = net_create(module, n, 2, 21);
    packet_list_t captured = {0};
    coll_t *colls[3];
    uint64_t rng = 777;
    unsigned refused = 0, mutations = 0;
    char *text;

    colls[0] = coll_new(net, 1, ORTE_GRPCOMM_OP_XCAST);
    colls[1] = coll_new(net, 2, ORTE_GRPCOMM_OP_BARRIER);
    colls[2] = coll_new(net, 3, ORTE_GRPCOMM_OP_ALLGATHER);
    net->capture = &captured;
    run_interleaved(net, colls, 3);
    for (size_t k = 0; k < 3; k++) {
        coll_assert_all_succeeded(colls[k]);
        coll_free(colls[k]);
    }
    net_destroy(net);
    assert_true(captured.count > 0);

    herd_test_capture_start(&stderr_capture);
    for (size_t i = 0; i < captured.count; i++) {
        const packet_t *p = &captured.items[i];
        orte_grpcomm_transport_t transport = {
            .me = p->dst, .num_daemons = n, .radix = 2, .send = no_send, .ctx = NULL};
        uint8_t *copy = malloc(p->len);
        orte_grpcomm_t *g = NULL;

        assert_non_null(copy);
        assert_int_equal(module->create(&transport, &g), HERD_SUCCESS);
        for (size_t len = 0; len < p->len; len++) {
            /* a fresh instance each time: a refused message fails its collective */
            orte_grpcomm_t *fresh = NULL;

            assert_int_equal(module->create(&transport, &fresh), HERD_SUCCESS);
            memcpy(copy, p->data, len);
            assert_int_not_equal(module->deliver(fresh, p->src, p->tag, copy, len), HERD_SUCCESS);
            refused++;
            module->destroy(fresh);
        }
        for (int m = 0; m < 60; m++) {
            size_t flips = 1 + rng_below(&rng, 3);

            memcpy(copy, p->data, p->len);
            for (size_t f = 0; f < flips; f++) {
                copy[rng_below(&rng, p->len)] = (uint8_t) rng_next(&rng);
            }
            /* no send can happen: nothing is started on g */
            (void) module->deliver(g, p->src, p->tag, copy, p->len);
            mutations++;
        }
        module->destroy(g);
        free(copy);
    }
    text = herd_test_capture_stop(&stderr_capture);
    free(text);
    packet_list_free(&captured);
    print_message("%s: %u truncated messages refused, %u corrupted ones survived\n", name, refused,
                  mutations);
}

/* ------------------------------------------------------------------------------------------ */
/* selection */

static void test_selection(void **state)
{
    const orte_grpcomm_module_t *module;

    assert_null(orte_grpcomm_base_module());
    assert_int_equal(orte_grpcomm_base_open(), HERD_SUCCESS);
    module = orte_grpcomm_base_module();
    assert_non_null(module);
    assert_string_equal(module->name, "tree"); /* the default */
    assert_true(opal_mca_var_find("grpcomm_tree_priority") >= 0);
    /* bruck (10) cannot beat tree (20): left unloaded, unless the build is static */
    assert_int_equal(opal_mca_var_find("grpcomm_bruck_priority") >= 0,
                     0 == orte_grpcomm_base_framework.num_deferred);
    assert_int_equal(opal_mca_framework_load_deferred(&orte_grpcomm_base_framework),
                     HERD_SUCCESS);
    assert_true(opal_mca_var_find("grpcomm_bruck_priority") >= 0);
    assert_string_equal(orte_grpcomm_base_module()->name, "tree");
    assert_int_equal(orte_grpcomm_base_open(), HERD_SUCCESS); /* again: nothing changes */
    orte_grpcomm_base_close();
    assert_null(orte_grpcomm_base_module());

    setenv("HERD_MCA_grpcomm", "bruck", 1);
    assert_int_equal(orte_grpcomm_base_open(), HERD_SUCCESS);
    assert_string_equal(orte_grpcomm_base_module()->name, "bruck");
    orte_grpcomm_base_close();

    setenv("HERD_MCA_grpcomm", "^tree", 1);
    assert_int_equal(orte_grpcomm_base_open(), HERD_SUCCESS);
    assert_string_equal(orte_grpcomm_base_module()->name, "bruck");
    orte_grpcomm_base_close();
    unsetenv("HERD_MCA_grpcomm");

    setenv("HERD_MCA_grpcomm_bruck_priority", "50", 1);
    assert_int_equal(orte_grpcomm_base_open(), HERD_SUCCESS);
    assert_string_equal(orte_grpcomm_base_module()->name, "bruck");
    orte_grpcomm_base_close();
    unsetenv("HERD_MCA_grpcomm_bruck_priority");

    /* the priority does not stick once the variable is gone */
    assert_int_equal(orte_grpcomm_base_open(), HERD_SUCCESS);
    assert_string_equal(orte_grpcomm_base_module()->name, "tree");
}

/* ------------------------------------------------------------------------------------------ */

#define BOTH_COMPONENTS(test)                                                                      \
    static void test##_tree(void **state)                                                          \
    {                                                                                              \
        test("tree");                                                                              \
    }                                                                                              \
    static void test##_bruck(void **state)                                                         \
    {                                                                                              \
        test("bruck");                                                                             \
    }

/* Daemons lost: every other daemon tells its instance; broadcasts from the root still reach
 * every live daemon (a lost daemon's parent sends to its children), nothing goes to a lost one,
 * and a barrier fails at once with HERD_ERR_UNREACH instead of waiting for the lost. */
static void test_lost(const char *name)
{
    const orte_grpcomm_module_t *module = open_component(name);
    const uint32_t n = 13;
    const orte_vpid_t lost[] = {1, 6};
    net_t *net = net_create(module, n, 3, 7);
    net->capture = calloc(1, sizeof(*net->capture));
    assert_non_null(net->capture);
    for (orte_vpid_t v = 0; v < n; v++) {
        for (size_t i = 0; i < sizeof(lost) / sizeof(lost[0]); i++) {
            if (v != lost[i]) {
                assert_int_equal(module->lost(net->inst[v], lost[i]), HERD_SUCCESS);
            }
        }
    }
    assert_int_equal(module->lost(net->inst[0], 0), HERD_ERR_BAD_PARAM); /* not itself */
    assert_int_equal(module->lost(net->inst[0], n), HERD_ERR_BAD_PARAM);
    for (uint32_t id = 1; id <= 3; id++) {
        coll_t *coll = coll_new(net, id, ORTE_GRPCOMM_OP_XCAST);
        coll_start(coll, 0);
        for (orte_vpid_t v = 2; v < n; v++) {
            if (6 != v) {
                coll_start(coll, v);
            }
        }
        net_run_random(net);
        assert_int_equal(coll->completed, n - 2);
        assert_int_equal(coll->failed, 0);
        assert_int_equal(coll->slots[1].calls, 0);
        assert_int_equal(coll->slots[6].calls, 0);
        coll_free(coll);
    }
    for (size_t i = 0; i < net->capture->count; i++) {
        assert_true(1 != net->capture->items[i].dst && 6 != net->capture->items[i].dst);
    }
    coll_t *barrier = coll_new(net, 9, ORTE_GRPCOMM_OP_BARRIER);
    coll_start(barrier, 0);
    coll_start(barrier, 2);
    assert_int_equal(barrier->failed, 2);
    assert_int_equal(barrier->slots[0].status, HERD_ERR_UNREACH);
    coll_free(barrier);
    packet_list_free(net->capture);
    free(net->capture);
    net->capture = NULL;
    net_destroy(net);
}

/* A lost inner daemon rejoins as a leaf: broadcasts reach it again and everyone else as before
 * (its old children through their nearest live ancestor), it forwards nothing; lost again, it
 * is routed around again. */
static void xcast_round(net_t *net, uint32_t id, uint32_t n, orte_vpid_t skip, uint32_t expect)
{
    coll_t *coll = coll_new(net, id, ORTE_GRPCOMM_OP_XCAST);
    coll_start(coll, 0);
    for (orte_vpid_t v = 1; v < n; v++) {
        if (skip != v) {
            coll_start(coll, v);
        }
    }
    net_run_random(net);
    assert_int_equal(coll->completed, expect);
    assert_int_equal(coll->failed, 0);
    coll_free(coll);
}

static void test_rejoined(const char *name)
{
    const orte_grpcomm_module_t *module = open_component(name);
    const uint32_t n = 13;
    net_t *net = net_create(module, n, 3, 7);
    for (orte_vpid_t v = 0; v < n; v++) {
        if (1 != v) {
            assert_int_equal(module->lost(net->inst[v], 1), HERD_SUCCESS);
        }
    }
    xcast_round(net, 1, n, 1, n - 1);
    for (orte_vpid_t v = 0; v < n; v++) {
        assert_int_equal(module->rejoined(net->inst[v], 1), HERD_SUCCESS);
    }
    assert_int_equal(module->rejoined(net->inst[0], n), HERD_ERR_BAD_PARAM);
    net->capture = calloc(1, sizeof(*net->capture));
    assert_non_null(net->capture);
    xcast_round(net, 2, n, ORTE_VPID_INVALID, n);
    for (size_t i = 0; i < net->capture->count; i++) {
        assert_int_not_equal(net->capture->items[i].src, 1); /* a leaf forwards nothing */
    }
    packet_list_free(net->capture);
    free(net->capture);
    net->capture = NULL;
    for (orte_vpid_t v = 0; v < n; v++) {
        if (1 != v) {
            assert_int_equal(module->lost(net->inst[v], 1), HERD_SUCCESS);
        }
    }
    xcast_round(net, 3, n, 1, n - 1);
    net_destroy(net);
}

BOTH_COMPONENTS(test_xcast)
BOTH_COMPONENTS(test_lost)
BOTH_COMPONENTS(test_rejoined)
BOTH_COMPONENTS(test_barrier)
BOTH_COMPONENTS(test_allgather)
BOTH_COMPONENTS(test_overlapping)
BOTH_COMPONENTS(test_callback_starts_next)
BOTH_COMPONENTS(test_rounds)
BOTH_COMPONENTS(test_message_counts)
BOTH_COMPONENTS(test_abort_all)
BOTH_COMPONENTS(test_send_failure)
BOTH_COMPONENTS(test_bad_arguments)
BOTH_COMPONENTS(test_malformed_common)
BOTH_COMPONENTS(test_truncated_and_corrupted)

#define BOTH_TESTS(test)                                                                           \
    cmocka_unit_test_setup_teardown(test##_tree, setup, teardown),                                 \
        cmocka_unit_test_setup_teardown(test##_bruck, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_selection, setup, teardown),
        BOTH_TESTS(test_rounds),
        BOTH_TESTS(test_xcast),
        BOTH_TESTS(test_lost),
        BOTH_TESTS(test_rejoined),
        BOTH_TESTS(test_barrier),
        BOTH_TESTS(test_allgather),
        BOTH_TESTS(test_overlapping),
        BOTH_TESTS(test_callback_starts_next),
        BOTH_TESTS(test_message_counts),
        BOTH_TESTS(test_abort_all),
        BOTH_TESTS(test_send_failure),
        BOTH_TESTS(test_bad_arguments),
        BOTH_TESTS(test_malformed_common),
        cmocka_unit_test_setup_teardown(test_malformed_tree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed_bruck, setup, teardown),
        BOTH_TESTS(test_truncated_and_corrupted),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
