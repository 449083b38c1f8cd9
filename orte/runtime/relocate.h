/* SPDX-License-Identifier: BSD-3-Clause */
/* Moving the processes of a lost node to another live node of the job (errmgr restart,
 * docs/errmgr.md): the node herdrun chooses, and the one message format of the three relocation
 * tags (orte/runtime/session.h: RELOCATE, RELOCATED, MOVED). Pure: no I/O, no state. */
#ifndef ORTE_RUNTIME_RELOCATE_H
#define ORTE_RUNTIME_RELOCATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/dss/buffer.h"
#include "opal/visibility.h"

#define ORTE_RELOCATE_VERSION 1u
/* The longest reason a RELOCATED message carries (longer ones are refused). */
#define ORTE_RELOCATE_REASON_MAX 1024u

/* One rank that moves: its restarts so far (RELOCATE: herdrun's count of its earlier restarts;
 * RELOCATED and MOVED: this move's number, 1 for the first), its new pid (RELOCATED). */
typedef struct orte_relocate_rank {
    uint32_t rank;
    uint32_t restarts;
    int32_t pid;
} orte_relocate_rank_t;

/* {u32 version, u32 lost_vpid, u32 lost_candidate, u32 to_candidate, i32 status,
 *  u32 max_restarts, u32 n, n x {u32 rank, u32 restarts, i32 pid}, string reason} */
typedef struct orte_relocate_msg {
    uint32_t lost_vpid;      /* the session daemon that went with its node */
    uint32_t lost_candidate; /* its node */
    uint32_t to_candidate;   /* the node the ranks go to */
    int32_t status;          /* RELOCATED: HERD_SUCCESS, or why they could not move */
    uint32_t max_restarts;   /* RELOCATED: errmgr_restart_max as the new node sees it */
    uint32_t num_ranks;
    orte_relocate_rank_t *ranks;
    char *reason; /* RELOCATED when status is not HERD_SUCCESS; else NULL */
} orte_relocate_msg_t;

OPAL_EXPORT int orte_relocate_msg_pack(opal_buffer_t *buffer, const orte_relocate_msg_t *msg);
/* Decode data into msg (free it with orte_relocate_msg_free). A wrong version, a count larger
 * than max_ranks or than the bytes left, a reason too long, or bytes after the end:
 * HERD_ERR_BAD_PARAM (nothing to free). */
OPAL_EXPORT int orte_relocate_msg_unpack(const void *data, size_t length, uint32_t max_ranks,
                                         orte_relocate_msg_t *msg);
OPAL_EXPORT void orte_relocate_msg_free(orte_relocate_msg_t *msg);

/* A node as the choice sees it. */
typedef struct orte_relocate_node {
    uint32_t slots;
    uint32_t used; /* the job's processes there now */
    bool live;     /* a node of the job whose session daemon is still there */
} orte_relocate_node_t;

/* Where need processes go: the live node with the most free slots (ties: the lowest index) that
 * has room for all of them, or with oversubscribe the live node with the most free slots even
 * without room. UINT32_MAX when none. */
OPAL_EXPORT uint32_t orte_relocate_choose(const orte_relocate_node_t *nodes, uint32_t num_nodes,
                                          uint32_t need, bool oversubscribe);

#endif /* ORTE_RUNTIME_RELOCATE_H */
