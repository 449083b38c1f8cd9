/* SPDX-License-Identifier: BSD-3-Clause */
/* grpcomm bruck: allgather by Bruck's algorithm and barrier by dissemination, ceil(log2 n)
 * rounds each for any n, and xcast down a binomial tree rooted at daemon 0. In round r a
 * daemon talks to the daemons 2^r before and after it (modulo n), which the overlay routes. */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>

#include "orte/mca/grpcomm/base/base.h"
#include "orte/mca/grpcomm/bruck/grpcomm_bruck.h"
#include "orte/mca/grpcomm/grpcomm.h"

/* At most one binomial child per bit of a 32-bit vpid. */
#define GRPCOMM_BRUCK_MAX_CHILDREN 32u

/* (v + offset) mod n without overflow; offset < n. */
static orte_vpid_t grpcomm_bruck_plus(orte_vpid_t v, uint32_t offset, uint32_t n)
{
    return (orte_vpid_t) (((uint64_t) v + offset) % n);
}

/* (v - offset) mod n; offset < n. */
static orte_vpid_t grpcomm_bruck_minus(orte_vpid_t v, uint32_t offset, uint32_t n)
{
    return (orte_vpid_t) (((uint64_t) v + n - offset) % n);
}

/* How many blobs round r of an allgather carries: the 2^r a daemon holds by then, or what is
 * still missing in the last round when n is not a power of two. */
static uint32_t grpcomm_bruck_round_count(uint32_t round, uint32_t n)
{
    uint32_t distance = UINT32_C(1) << round;

    return distance < n - distance ? distance : n - distance;
}

/* The binomial tree: v's parent is v without its highest bit; its children are v + 2^k for
 * every 2^k above v. */
static int grpcomm_bruck_init(orte_grpcomm_t *g)
{
    uint32_t first_bit = 0 == g->me ? 0 : orte_grpcomm_base_floor_log2(g->me) + 1;

    g->xcast_children = calloc(GRPCOMM_BRUCK_MAX_CHILDREN, sizeof(*g->xcast_children));
    if (NULL == g->xcast_children) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t k = first_bit; k < GRPCOMM_BRUCK_MAX_CHILDREN; k++) {
        uint64_t child = (uint64_t) g->me + (UINT64_C(1) << k);

        if (child >= g->num_daemons) {
            break;
        }
        g->xcast_children[g->num_xcast_children++] = (orte_vpid_t) child;
    }
    if (0 != g->me) {
        g->xcast_parent = g->me - (UINT32_C(1) << orte_grpcomm_base_floor_log2(g->me));
    }
    return HERD_SUCCESS;
}

static int grpcomm_bruck_check_round(const orte_grpcomm_t *g, const orte_grpcomm_msg_t *msg,
                                     char *reason, size_t size)
{
    uint32_t n = g->num_daemons;
    uint32_t rounds = orte_grpcomm_base_ceil_log2(n);
    uint32_t round = msg->header.round;
    uint32_t distance;
    orte_vpid_t expected;

    if (round >= rounds) {
        snprintf(reason, size, "it names round %u, but %s among %u daemons takes %u rounds", round,
                 orte_grpcomm_op_name((orte_grpcomm_op_t) msg->header.op), n, rounds);
        return HERD_ERR_BAD_PARAM;
    }
    distance = UINT32_C(1) << round;
    if (ORTE_GRPCOMM_TAG_ALLGATHER_ROUND == msg->tag) {
        expected = grpcomm_bruck_plus(g->me, distance, n);
    } else {
        expected = grpcomm_bruck_minus(g->me, distance, n);
    }
    if (msg->src != expected) {
        snprintf(reason, size, "round %u reaches daemon %u from daemon %u, not from daemon %u",
                 round, g->me, expected, msg->src);
        return HERD_ERR_BAD_PARAM;
    }
    if (ORTE_GRPCOMM_TAG_BARRIER_ROUND == msg->tag) {
        return HERD_SUCCESS;
    }
    /* the sender's own blob and the ones after it, in order */
    if (msg->count != grpcomm_bruck_round_count(round, n)) {
        snprintf(reason, size,
                 "it carries %u blobs, but round %u of an allgather among %u "
                 "daemons carries %u",
                 msg->count, round, n, grpcomm_bruck_round_count(round, n));
        return HERD_ERR_BAD_PARAM;
    }
    for (uint32_t j = 0; j < msg->count; j++) {
        orte_vpid_t want = grpcomm_bruck_plus(msg->src, j, n);

        if (msg->entries[j].vpid != want) {
            snprintf(reason, size, "blob %u it carries is daemon %u's, daemon %u's belongs there",
                     j + 1, msg->entries[j].vpid, want);
            return HERD_ERR_BAD_PARAM;
        }
    }
    return HERD_SUCCESS;
}

static int grpcomm_bruck_check(const orte_grpcomm_t *g, const orte_grpcomm_msg_t *msg, char *reason,
                               size_t size)
{
    switch (msg->tag) {
    case ORTE_GRPCOMM_TAG_ALLGATHER_ROUND:
    case ORTE_GRPCOMM_TAG_BARRIER_ROUND:
        return grpcomm_bruck_check_round(g, msg, reason, size);
    case ORTE_GRPCOMM_TAG_XCAST:
        snprintf(reason, size, "the bruck component releases no %s by broadcast",
                 orte_grpcomm_op_name((orte_grpcomm_op_t) msg->header.op));
        return HERD_ERR_BAD_PARAM;
    default:
        snprintf(reason, size, "the bruck component never sends %s messages",
                 orte_grpcomm_base_tag_name(msg->tag));
        return HERD_ERR_BAD_PARAM;
    }
}

static int grpcomm_bruck_send_round(orte_grpcomm_t *g, orte_grpcomm_coll_t *coll, uint32_t round)
{
    opal_buffer_t buffer = OPAL_BUFFER_STATIC_INIT;
    orte_grpcomm_header_t header;
    uint32_t n = g->num_daemons;
    uint32_t distance = UINT32_C(1) << round;
    orte_vpid_t dst;
    uint16_t tag;
    int rc;

    orte_grpcomm_base_header(g, coll, round, &header);
    rc = orte_grpcomm_base_pack_header(&buffer, &header);
    if (ORTE_GRPCOMM_OP_ALLGATHER == coll->op) {
        /* by round r this daemon holds its own blob and the 2^r - 1 after it */
        uint32_t count = grpcomm_bruck_round_count(round, n);

        tag = ORTE_GRPCOMM_TAG_ALLGATHER_ROUND;
        dst = grpcomm_bruck_minus(g->me, distance, n);
        if (HERD_SUCCESS == rc) {
            rc = orte_grpcomm_base_pack_count(&buffer, count);
        }
        for (uint32_t j = 0; HERD_SUCCESS == rc && j < count; j++) {
            orte_vpid_t v = grpcomm_bruck_plus(g->me, j, n);

            rc = orte_grpcomm_base_pack_blob(&buffer, v, coll->blobs[v].data, coll->blobs[v].len);
        }
    } else {
        tag = ORTE_GRPCOMM_TAG_BARRIER_ROUND;
        dst = grpcomm_bruck_plus(g->me, distance, n);
    }
    if (HERD_SUCCESS == rc) {
        rc = orte_grpcomm_base_send(g, dst, tag, &buffer);
    }
    opal_buffer_destruct(&buffer);
    return rc;
}

/* Sends every round this daemon can (round r once round r - 1 has arrived), and finishes
 * after the last round arrived. */
static void grpcomm_bruck_advance(orte_grpcomm_t *g, orte_grpcomm_coll_t *coll)
{
    uint32_t rounds = orte_grpcomm_base_ceil_log2(g->num_daemons);

    while (coll->sent < rounds && coll->sent <= coll->round) {
        int rc = grpcomm_bruck_send_round(g, coll, coll->sent);

        if (HERD_SUCCESS != rc) {
            orte_grpcomm_base_finish(coll, rc);
            return;
        }
        coll->sent++;
    }
    if (coll->round == rounds) {
        orte_grpcomm_base_finish(coll, HERD_SUCCESS);
    }
}

static int grpcomm_bruck_start(orte_grpcomm_t *g, orte_grpcomm_coll_t *coll)
{
    coll->round = 0;
    coll->sent = 0;
    grpcomm_bruck_advance(g, coll);
    return HERD_SUCCESS;
}

static int grpcomm_bruck_consume(orte_grpcomm_t *g, orte_grpcomm_coll_t *coll,
                                 orte_grpcomm_msg_t *msg, char *reason, size_t size)
{
    uint32_t round = msg->header.round;

    if (round > coll->round) {
        return HERD_ERR_TAKE_NEXT; /* an early peer: wait for the rounds before it */
    }
    if (round < coll->round) {
        snprintf(reason, size, "it repeats round %u, which daemon %u already has", round, g->me);
        return HERD_ERR_BAD_PARAM;
    }
    for (uint32_t j = 0; NULL != msg->entries && j < msg->count; j++) {
        orte_grpcomm_entry_t *entry = &msg->entries[j];

        /* round r brings blobs me + 2^r .. me + 2^(r+1) - 1, none of which is here yet */
        coll->blobs[entry->vpid] = *entry;
        coll->present[entry->vpid] = true;
        entry->data = NULL;
    }
    coll->round++;
    grpcomm_bruck_advance(g, coll);
    return HERD_SUCCESS;
}

static int grpcomm_bruck_rounds(orte_grpcomm_op_t op, uint32_t num_daemons, uint32_t radix,
                                uint32_t *rounds)
{
    if (0 == num_daemons) {
        return HERD_ERR_BAD_PARAM;
    }
    switch (op) {
    case ORTE_GRPCOMM_OP_XCAST:
        /* every daemon sends to all its binomial children at once, so the farthest daemon
         * (the most bits set) is floor(log2 n) hops from the root */
        *rounds = orte_grpcomm_base_floor_log2(num_daemons);
        return HERD_SUCCESS;
    case ORTE_GRPCOMM_OP_BARRIER:
    case ORTE_GRPCOMM_OP_ALLGATHER:
        *rounds = orte_grpcomm_base_ceil_log2(num_daemons);
        return HERD_SUCCESS;
    }
    return HERD_ERR_BAD_PARAM;
}

static orte_vpid_t grpcomm_bruck_parent_of(const orte_grpcomm_t *g, orte_vpid_t v)
{
    (void) g;
    return 0 == v ? ORTE_VPID_INVALID : v - (UINT32_C(1) << orte_grpcomm_base_floor_log2(v));
}

static uint32_t grpcomm_bruck_children_of(const orte_grpcomm_t *g, orte_vpid_t v,
                                          orte_vpid_t *children, uint32_t room)
{
    uint32_t first_bit = 0 == v ? 0 : orte_grpcomm_base_floor_log2(v) + 1;
    uint32_t count = 0;
    for (uint32_t k = first_bit; k < GRPCOMM_BRUCK_MAX_CHILDREN && count < room; k++) {
        uint64_t child = (uint64_t) v + (UINT64_C(1) << k);
        if (child >= g->num_daemons) {
            break;
        }
        children[count++] = (orte_vpid_t) child;
    }
    return count;
}

static const orte_grpcomm_algorithm_t grpcomm_bruck_algorithm = {
    .name = "bruck",
    .wire_id = ORTE_GRPCOMM_ALGORITHM_BRUCK,
    .init = grpcomm_bruck_init,
    .parent_of = grpcomm_bruck_parent_of,
    .children_of = grpcomm_bruck_children_of,
    .check = grpcomm_bruck_check,
    .start = grpcomm_bruck_start,
    .consume = grpcomm_bruck_consume,
};

static int grpcomm_bruck_create(const orte_grpcomm_transport_t *transport,
                                orte_grpcomm_t **instance)
{
    return orte_grpcomm_base_create(&orte_grpcomm_bruck_module, &grpcomm_bruck_algorithm, transport,
                                    instance);
}

const orte_grpcomm_module_t orte_grpcomm_bruck_module = {
    .name = "bruck",
    .create = grpcomm_bruck_create,
    .destroy = orte_grpcomm_base_destroy,
    .xcast = orte_grpcomm_base_xcast,
    .barrier = orte_grpcomm_base_barrier,
    .allgather = orte_grpcomm_base_allgather,
    .deliver = orte_grpcomm_base_deliver,
    .abort_all = orte_grpcomm_base_abort_all,
    .lost = orte_grpcomm_base_lost,
    .rejoined = orte_grpcomm_base_rejoined,
    .rounds = grpcomm_bruck_rounds,
};
