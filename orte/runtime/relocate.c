/* SPDX-License-Identifier: BSD-3-Clause */
/* The relocation messages' format and the choice of the node (orte/runtime/relocate.h). */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>

#include "orte/runtime/relocate.h"

/* the smallest encoding of one rank: three 4-byte integers */
#define RELOCATE_RANK_MIN_BYTES 12u

int orte_relocate_msg_pack(opal_buffer_t *b, const orte_relocate_msg_t *m)
{
    int rc;
    if (HERD_SUCCESS != (rc = opal_buffer_pack_uint32(b, ORTE_RELOCATE_VERSION)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(b, m->lost_vpid)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(b, m->lost_candidate)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(b, m->to_candidate)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_int32(b, m->status)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(b, m->max_restarts)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(b, m->num_ranks))) {
        return rc;
    }
    for (uint32_t i = 0; i < m->num_ranks; ++i) {
        if (HERD_SUCCESS != (rc = opal_buffer_pack_uint32(b, m->ranks[i].rank)) ||
            HERD_SUCCESS != (rc = opal_buffer_pack_uint32(b, m->ranks[i].restarts)) ||
            HERD_SUCCESS != (rc = opal_buffer_pack_int32(b, m->ranks[i].pid))) {
            return rc;
        }
    }
    return opal_buffer_pack_string(b, m->reason);
}

static int unpack_ranks(opal_buffer_t *b, uint32_t max_ranks, orte_relocate_msg_t *m)
{
    if (HERD_SUCCESS != opal_buffer_unpack_uint32(b, &m->num_ranks) || m->num_ranks > max_ranks ||
        m->num_ranks > opal_buffer_remaining(b) / RELOCATE_RANK_MIN_BYTES) {
        return HERD_ERR_BAD_PARAM;
    }
    m->ranks = calloc(m->num_ranks > 0 ? m->num_ranks : 1, sizeof(*m->ranks));
    if (NULL == m->ranks) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t i = 0; i < m->num_ranks; ++i) {
        if (HERD_SUCCESS != opal_buffer_unpack_uint32(b, &m->ranks[i].rank) ||
            HERD_SUCCESS != opal_buffer_unpack_uint32(b, &m->ranks[i].restarts) ||
            HERD_SUCCESS != opal_buffer_unpack_int32(b, &m->ranks[i].pid)) {
            return HERD_ERR_BAD_PARAM;
        }
    }
    return HERD_SUCCESS;
}

int orte_relocate_msg_unpack(const void *data, size_t length, uint32_t max_ranks,
                             orte_relocate_msg_t *m)
{
    opal_buffer_t b;
    uint32_t version = 0;
    memset(m, 0, sizeof(*m));
    opal_buffer_init(&b);
    int rc = opal_buffer_load(&b, data, length);
    if (HERD_SUCCESS == rc && (HERD_SUCCESS != opal_buffer_unpack_uint32(&b, &version) ||
                               ORTE_RELOCATE_VERSION != version ||
                               HERD_SUCCESS != opal_buffer_unpack_uint32(&b, &m->lost_vpid) ||
                               HERD_SUCCESS != opal_buffer_unpack_uint32(&b, &m->lost_candidate) ||
                               HERD_SUCCESS != opal_buffer_unpack_uint32(&b, &m->to_candidate) ||
                               HERD_SUCCESS != opal_buffer_unpack_int32(&b, &m->status) ||
                               HERD_SUCCESS != opal_buffer_unpack_uint32(&b, &m->max_restarts))) {
        rc = HERD_ERR_BAD_PARAM;
    }
    if (HERD_SUCCESS == rc) {
        rc = unpack_ranks(&b, max_ranks, m);
    }
    if (HERD_SUCCESS == rc &&
        (HERD_SUCCESS != opal_buffer_unpack_string(&b, &m->reason) ||
         (NULL != m->reason && strlen(m->reason) > ORTE_RELOCATE_REASON_MAX) ||
         opal_buffer_remaining(&b) > 0)) {
        rc = HERD_ERR_BAD_PARAM;
    }
    opal_buffer_destruct(&b);
    if (HERD_SUCCESS != rc) {
        orte_relocate_msg_free(m);
    }
    return rc;
}

void orte_relocate_msg_free(orte_relocate_msg_t *m)
{
    if (NULL == m) {
        return;
    }
    free(m->ranks);
    free(m->reason);
    memset(m, 0, sizeof(*m));
}

uint32_t orte_relocate_choose(const orte_relocate_node_t *nodes, uint32_t num_nodes, uint32_t need,
                              bool oversubscribe)
{
    uint32_t best = UINT32_MAX;
    int64_t best_free = 0;
    for (uint32_t i = 0; NULL != nodes && i < num_nodes; ++i) {
        int64_t free_slots = (int64_t) nodes[i].slots - (int64_t) nodes[i].used;
        if (!nodes[i].live || (!oversubscribe && free_slots < (int64_t) need)) {
            continue;
        }
        if (UINT32_MAX == best || free_slots > best_free) {
            best = i;
            best_free = free_slots;
        }
    }
    return best;
}
