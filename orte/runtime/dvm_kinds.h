/* SPDX-License-Identifier: BSD-3-Clause */
/* The table of inventories by kind (dvm_kinds.c) and its wire format: what dvm_kinds.c and
 * dvm_kinds_wire.c share, and the unit test and fuzzer of the decoder. */
#ifndef ORTE_RUNTIME_DVM_KINDS_H
#define ORTE_RUNTIME_DVM_KINDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/dss/buffer.h"

#define DVM_KINDS_WIRE_VERSION 1u

typedef struct dvm_kinds_range {
    uint32_t first;
    uint32_t count;
} dvm_kinds_range_t;

typedef struct dvm_kinds_kind {
    uint8_t *record; /* a packed inventory (orte_inventory_pack, no XML), placeholders in it */
    size_t len;
    dvm_kinds_range_t *ranges;
    uint32_t num_ranges;
} dvm_kinds_kind_t;

typedef struct dvm_kinds dvm_kinds_t;
/* status HERD_SUCCESS: every daemon's inventory is known by kind (dvm->kinds is the table). */
struct orte_dvm;
typedef void (*dvm_kinds_done_fn_t)(struct orte_dvm *dvm, int status);

struct dvm_kinds {
    dvm_kinds_kind_t *kinds;
    uint32_t num_kinds;
    uint32_t waiting; /* children whose records have not come */
    bool *heard;      /* by child index */
    uint32_t first_child;
    uint32_t num_children;
    bool sent; /* sent up (the root: broadcast) */
    size_t table_bytes;
    dvm_kinds_done_fn_t done;
};

dvm_kinds_t *dvm_kinds_table_new(void);
void dvm_kinds_table_free(dvm_kinds_t *kinds);
/* Add vpids first..first+count-1 with this record (a kind already there when the bytes are the
 * same; a range continuing the kind's last one extends it). */
int dvm_kinds_add(dvm_kinds_t *kinds, const uint8_t *record, size_t len, uint32_t first,
                  uint32_t count);
/* Each kind's ranges in vpid order, neighbours merged. */
void dvm_kinds_normalize(dvm_kinds_t *kinds);
/* Whether the table names every daemon 1..size-1 exactly once; reason says what is wrong. */
bool dvm_kinds_complete(const dvm_kinds_t *kinds, uint32_t size, char *reason, size_t rsize);
/* One message type (a subtree's records, or the whole table): uint8 version, uint32 kinds, per
 * kind (bytes record, uint32 ranges, per range uint32 first, uint32 count). The decoder adds
 * what it reads to into, rejecting (with a reason) another version, counts above size, empty
 * records, a record named twice, ranges outside 1..size-1 and trailing bytes; into is then left
 * as it was, and the caller fails the exchange. */
int dvm_kinds_pack(const dvm_kinds_t *kinds, opal_buffer_t *buffer);
int dvm_kinds_decode(const void *data, size_t len, uint32_t size, dvm_kinds_t *into, char *reason,
                     size_t rsize);

#endif /* ORTE_RUNTIME_DVM_KINDS_H */
