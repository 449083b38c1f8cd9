/* SPDX-License-Identifier: BSD-3-Clause */
/* grpcomm tree: xcast down the radix tree; barrier and allgather gather up it (each daemon
 * waits for its children, then sends its whole subtree's part to its parent) and the root
 * releases the result down it again: 2 * depth rounds, messages only between tree neighbours. */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>

#include "opal/util/output.h"
#include "orte/mca/grpcomm/base/base.h"
#include "orte/mca/grpcomm/grpcomm.h"
#include "orte/mca/grpcomm/tree/grpcomm_tree.h"
#include "orte/util/radix.h"

static int grpcomm_tree_init(orte_grpcomm_t *g)
{
    /* orte_radix_children() fills only existing children: never more than num_daemons - 1,
     * whatever the radix */
    uint32_t room = g->radix < g->num_daemons ? g->radix : g->num_daemons;

    if (0 == g->radix) {
        opal_output_verbose(1, orte_grpcomm_base_framework.output,
                            "grpcomm tree: a radix tree needs a radix of at least 1");
        return HERD_ERR_BAD_PARAM;
    }
    g->xcast_children = calloc(room, sizeof(*g->xcast_children));
    if (NULL == g->xcast_children) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    g->num_xcast_children = orte_radix_children(g->me, g->num_daemons, g->radix, g->xcast_children);
    g->xcast_parent = orte_radix_parent(g->me, g->radix);
    return HERD_SUCCESS;
}

/* A gather message comes from a child and accounts for exactly that child's subtree. */
static int grpcomm_tree_check_gather(const orte_grpcomm_t *g, const orte_grpcomm_msg_t *msg,
                                     char *reason, size_t size)
{
    uint32_t expected;

    if (orte_radix_parent(msg->src, g->radix) != g->me) {
        snprintf(reason, size, "daemon %u is not a child of daemon %u in the radix-%u tree",
                 msg->src, g->me, g->radix);
        return HERD_ERR_BAD_PARAM;
    }
    if (0 != msg->header.round) {
        snprintf(reason, size, "it names round %u, but a gather has no rounds", msg->header.round);
        return HERD_ERR_BAD_PARAM;
    }
    expected = orte_radix_subtree_size(msg->src, g->num_daemons, g->radix);
    if (msg->count != expected) {
        snprintf(reason, size, "it accounts for %u daemons, but the subtree of daemon %u has %u",
                 msg->count, msg->src, expected);
        return HERD_ERR_BAD_PARAM;
    }
    for (uint32_t i = 0; NULL != msg->entries && i < msg->count; i++) {
        if (!orte_radix_in_subtree(msg->src, msg->entries[i].vpid, g->radix)) {
            snprintf(reason, size,
                     "it carries the blob of daemon %u, which is not in the "
                     "subtree of daemon %u",
                     msg->entries[i].vpid, msg->src);
            return HERD_ERR_BAD_PARAM;
        }
    }
    return HERD_SUCCESS;
}

static int grpcomm_tree_check(const orte_grpcomm_t *g, const orte_grpcomm_msg_t *msg, char *reason,
                              size_t size)
{
    switch (msg->tag) {
    case ORTE_GRPCOMM_TAG_XCAST:
        return HERD_SUCCESS; /* a release: the base checked it comes from the parent */
    case ORTE_GRPCOMM_TAG_GATHER:
        return grpcomm_tree_check_gather(g, msg, reason, size);
    default:
        snprintf(reason, size, "the tree component never sends %s messages",
                 orte_grpcomm_base_tag_name(msg->tag));
        return HERD_ERR_BAD_PARAM;
    }
}

/* The root's release: the barrier is over, or here are all the blobs. */
static int grpcomm_tree_release(orte_grpcomm_t *g, orte_grpcomm_coll_t *coll)
{
    opal_buffer_t buffer = OPAL_BUFFER_STATIC_INIT;
    orte_grpcomm_header_t header;
    int rc;

    orte_grpcomm_base_header(g, coll, 0, &header);
    rc = orte_grpcomm_base_pack_header(&buffer, &header);
    if (HERD_SUCCESS == rc && ORTE_GRPCOMM_OP_ALLGATHER == coll->op) {
        rc = orte_grpcomm_base_pack_count(&buffer, g->num_daemons);
        for (orte_vpid_t v = 0; HERD_SUCCESS == rc && v < g->num_daemons; v++) {
            rc = orte_grpcomm_base_pack_blob(&buffer, v, coll->blobs[v].data, coll->blobs[v].len);
        }
    }
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < g->num_xcast_children; i++) {
        rc = orte_grpcomm_base_send(g, g->xcast_children[i], ORTE_GRPCOMM_TAG_XCAST, &buffer);
    }
    opal_buffer_destruct(&buffer);
    return rc;
}

/* This daemon's whole subtree has entered: tell the parent, with the subtree's blobs. */
static int grpcomm_tree_send_up(orte_grpcomm_t *g, orte_grpcomm_coll_t *coll)
{
    opal_buffer_t buffer = OPAL_BUFFER_STATIC_INIT;
    orte_grpcomm_header_t header;
    uint32_t subtree = orte_radix_subtree_size(g->me, g->num_daemons, g->radix);
    int rc;

    orte_grpcomm_base_header(g, coll, 0, &header);
    rc = orte_grpcomm_base_pack_header(&buffer, &header);
    if (HERD_SUCCESS == rc) {
        rc = orte_grpcomm_base_pack_count(&buffer, subtree);
    }
    if (ORTE_GRPCOMM_OP_ALLGATHER == coll->op) {
        /* what is present is exactly the subtree: this daemon's blob and its children's */
        for (orte_vpid_t v = 0; HERD_SUCCESS == rc && v < g->num_daemons; v++) {
            if (coll->present[v]) {
                rc = orte_grpcomm_base_pack_blob(&buffer, v, coll->blobs[v].data,
                                                 coll->blobs[v].len);
            }
        }
    }
    if (HERD_SUCCESS == rc) {
        rc = orte_grpcomm_base_send(g, g->xcast_parent, ORTE_GRPCOMM_TAG_GATHER, &buffer);
    }
    opal_buffer_destruct(&buffer);
    return rc;
}

static void grpcomm_tree_contribute_if_ready(orte_grpcomm_t *g, orte_grpcomm_coll_t *coll)
{
    int rc;

    if (coll->waiting > 0 || coll->contributed) {
        return;
    }
    coll->contributed = true;
    if (ORTE_VPID_INVALID == g->xcast_parent) {
        /* the root: everybody is in */
        rc = grpcomm_tree_release(g, coll);
        orte_grpcomm_base_finish(coll, rc);
        return;
    }
    rc = grpcomm_tree_send_up(g, coll);
    if (HERD_SUCCESS != rc) {
        orte_grpcomm_base_finish(coll, rc);
    }
}

static int grpcomm_tree_start(orte_grpcomm_t *g, orte_grpcomm_coll_t *coll)
{
    coll->waiting = g->num_xcast_children;
    grpcomm_tree_contribute_if_ready(g, coll);
    return HERD_SUCCESS;
}

static int grpcomm_tree_consume_gather(orte_grpcomm_t *g, orte_grpcomm_coll_t *coll,
                                       orte_grpcomm_msg_t *msg, char *reason, size_t size)
{
    if (coll->heard[msg->src]) {
        snprintf(reason, size, "daemon %u already contributed to this collective", msg->src);
        return HERD_ERR_BAD_PARAM;
    }
    coll->heard[msg->src] = true;
    for (uint32_t i = 0; NULL != msg->entries && i < msg->count; i++) {
        orte_grpcomm_entry_t *entry = &msg->entries[i];

        /* subtrees are disjoint and checked on arrival, so nothing is overwritten */
        coll->blobs[entry->vpid] = *entry;
        coll->present[entry->vpid] = true;
        entry->data = NULL;
    }
    coll->waiting--;
    grpcomm_tree_contribute_if_ready(g, coll);
    return HERD_SUCCESS;
}

static int grpcomm_tree_consume_release(orte_grpcomm_t *g, orte_grpcomm_coll_t *coll,
                                        orte_grpcomm_msg_t *msg, char *reason, size_t size)
{
    int rc;

    if (!coll->contributed) {
        /* the root releases only once every daemon is in, this one included */
        snprintf(reason, size, "it releases the collective before daemon %u contributed", g->me);
        return HERD_ERR_BAD_PARAM;
    }
    for (uint32_t i = 0; NULL != msg->entries && i < msg->count; i++) {
        orte_grpcomm_entry_t *entry = &msg->entries[i];

        free(coll->blobs[entry->vpid].data);
        coll->blobs[entry->vpid] = *entry;
        coll->present[entry->vpid] = true;
        entry->data = NULL;
    }
    rc = orte_grpcomm_base_forward(g, msg);
    orte_grpcomm_base_finish(coll, rc);
    return HERD_SUCCESS;
}

static int grpcomm_tree_consume(orte_grpcomm_t *g, orte_grpcomm_coll_t *coll,
                                orte_grpcomm_msg_t *msg, char *reason, size_t size)
{
    if (ORTE_GRPCOMM_TAG_GATHER == msg->tag) {
        return grpcomm_tree_consume_gather(g, coll, msg, reason, size);
    }
    return grpcomm_tree_consume_release(g, coll, msg, reason, size);
}

static int grpcomm_tree_rounds(orte_grpcomm_op_t op, uint32_t num_daemons, uint32_t radix,
                               uint32_t *rounds)
{
    uint32_t depth;

    if (0 == num_daemons || 0 == radix) {
        return HERD_ERR_BAD_PARAM;
    }
    depth = orte_radix_depth(num_daemons, radix);
    switch (op) {
    case ORTE_GRPCOMM_OP_XCAST:
        *rounds = depth;
        return HERD_SUCCESS;
    case ORTE_GRPCOMM_OP_BARRIER:
    case ORTE_GRPCOMM_OP_ALLGATHER:
        *rounds = 2 * depth; /* up the tree, then down */
        return HERD_SUCCESS;
    }
    return HERD_ERR_BAD_PARAM;
}

static orte_vpid_t grpcomm_tree_parent_of(const orte_grpcomm_t *g, orte_vpid_t v)
{
    return orte_radix_parent(v, g->radix);
}

static uint32_t grpcomm_tree_children_of(const orte_grpcomm_t *g, orte_vpid_t v,
                                         orte_vpid_t *children, uint32_t room)
{
    orte_vpid_t all[1024];
    uint32_t n = orte_radix_children(v, g->num_daemons, g->radix < 1024 ? g->radix : 1024, all);
    n = n < room ? n : room;
    for (uint32_t i = 0; i < n; i++) {
        children[i] = all[i];
    }
    return n;
}

static const orte_grpcomm_algorithm_t grpcomm_tree_algorithm = {
    .name = "tree",
    .wire_id = ORTE_GRPCOMM_ALGORITHM_TREE,
    .init = grpcomm_tree_init,
    .parent_of = grpcomm_tree_parent_of,
    .children_of = grpcomm_tree_children_of,
    .check = grpcomm_tree_check,
    .start = grpcomm_tree_start,
    .consume = grpcomm_tree_consume,
};

static int grpcomm_tree_create(const orte_grpcomm_transport_t *transport, orte_grpcomm_t **instance)
{
    return orte_grpcomm_base_create(&orte_grpcomm_tree_module, &grpcomm_tree_algorithm, transport,
                                    instance);
}

const orte_grpcomm_module_t orte_grpcomm_tree_module = {
    .name = "tree",
    .create = grpcomm_tree_create,
    .destroy = orte_grpcomm_base_destroy,
    .xcast = orte_grpcomm_base_xcast,
    .barrier = orte_grpcomm_base_barrier,
    .allgather = orte_grpcomm_base_allgather,
    .deliver = orte_grpcomm_base_deliver,
    .abort_all = orte_grpcomm_base_abort_all,
    .lost = orte_grpcomm_base_lost,
    .rejoined = orte_grpcomm_base_rejoined,
    .rounds = grpcomm_tree_rounds,
};
