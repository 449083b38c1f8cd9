/* SPDX-License-Identifier: BSD-3-Clause */
/* A node daemon rejoining a running persistent DVM (herd-dvm --add-host): the messages between
 * the tool, the root and the restarted daemon, and the root's and the daemon's parts of it
 * (dvm_rejoin.c; encoders and decoders in dvm_rejoin_wire.c). docs/dvm.md, "Node loss". */
#ifndef ORTE_RUNTIME_DVM_REJOIN_H
#define ORTE_RUNTIME_DVM_REJOIN_H

#include <stddef.h>
#include <stdint.h>

#include "opal/dss/buffer.h"
#include "orte/types.h"

/* Version of every rejoin message (the first field after the frame type or tag). */
#define ORTE_DVM_REJOIN_VERSION 1u

/* tool -> root (tool frame ORTE_DVM_TOOL_REJOIN): {u32 version, string host}. */
OPAL_EXPORT int orte_dvm_rejoin_request_pack(opal_buffer_t *buffer, const char *host);
/* *host malloc'd; HERD_ERR_VERSION_MISMATCH, HERD_ERR_UNPACK_FAILURE for a missing, empty or
 * overlong host name. */
OPAL_EXPORT int orte_dvm_rejoin_request_unpack(opal_buffer_t *buffer, char **host);

/* root -> tool (ORTE_DVM_TOOL_REJOIN_ANSWER): {u32 version, i32 status, string message}: status
 * HERD_SUCCESS when the node joined; message is a whole sentence for the user either way. */
OPAL_EXPORT int orte_dvm_rejoin_answer_pack(opal_buffer_t *buffer, int status, const char *message);
OPAL_EXPORT int orte_dvm_rejoin_answer_unpack(opal_buffer_t *buffer, int *status, char **message);

/* daemon -> root (overlay ORTE_DVM_TAG_REJOIN_REQ): {u32 version, bytes inventory}, the
 * daemon's packed inventory (orte_inventory_pack). *inventory malloc'd. */
OPAL_EXPORT int orte_dvm_rejoin_hello_pack(opal_buffer_t *buffer, const void *inventory,
                                           size_t len);
OPAL_EXPORT int orte_dvm_rejoin_hello_unpack(opal_buffer_t *buffer, void **inventory, size_t *len);

/* The payload of ORTE_DVM_CMD_NODE_UP (root -> every daemon): {u32 vpid, u32 version, bytes
 * inventory}: the rejoined daemon's inventory replaces the one its node had (new session
 * endpoints). vpid checked in 1..num_daemons-1; *inventory malloc'd. */
OPAL_EXPORT int orte_dvm_rejoin_node_up_pack(opal_buffer_t *buffer, orte_vpid_t vpid,
                                             const void *inventory, size_t len);
OPAL_EXPORT int orte_dvm_rejoin_node_up_unpack(opal_buffer_t *buffer, uint32_t num_daemons,
                                               orte_vpid_t *vpid, void **inventory, size_t *len);

/* root -> daemon (overlay ORTE_DVM_TAG_REJOIN_ACK): what a daemon that joined at start-up holds
 * and a rejoining one lacks: the command broadcast to wait for next, the daemons down now, and
 * every node's packed inventory (by node index, the daemon's own included).
 * {u32 version, u32 next_command, u32 num_down, u32 down[num_down], u32 num_nodes,
 *  bytes inventory[num_nodes]} */
typedef struct orte_dvm_rejoin_ack {
    uint32_t next_command;
    uint32_t num_down;
    orte_vpid_t *down;
    uint32_t num_nodes;
    uint8_t **inventories; /* by node index (vpid - 1) */
    size_t *lengths;
} orte_dvm_rejoin_ack_t;

OPAL_EXPORT int orte_dvm_rejoin_ack_pack(opal_buffer_t *buffer, const orte_dvm_rejoin_ack_t *ack);
/* Checks the message against the DVM's size (num_daemons, root included): num_nodes must be
 * num_daemons - 1, every down vpid in 1..num_daemons-1. *ack set only on success. */
OPAL_EXPORT int orte_dvm_rejoin_ack_unpack(opal_buffer_t *buffer, uint32_t num_daemons,
                                           orte_dvm_rejoin_ack_t **ack);
OPAL_EXPORT void orte_dvm_rejoin_ack_free(orte_dvm_rejoin_ack_t *ack);

#endif /* ORTE_RUNTIME_DVM_REJOIN_H */
