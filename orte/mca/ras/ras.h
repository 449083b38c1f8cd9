/* SPDX-License-Identifier: BSD-3-Clause */
/* The ras framework: what the allocation is (nodes and slots), from a hostfile or host list,
 * a resource manager (Slurm), or a simulator of many virtual nodes on this host. */
#ifndef ORTE_MCA_RAS_H
#define ORTE_MCA_RAS_H

#include <stdint.h>
#include <stdio.h>

#include "opal/dss/buffer.h"
#include "opal/mca/mca.h"

#define OPAL_MCA_ras_INTERFACE_VERSION 1u

typedef struct orte_node {
    char *name;         /* host name (a simulated node's own name for the simulator) */
    uint32_t slots;     /* processes that may run there without oversubscribing */
    uint32_t max_slots; /* hard limit, 0 for none */
    char *topology;     /* hwloc synthetic description for simulated nodes, else NULL */
    char *origin;       /* where it was named, for messages: "hosts.txt:3", "-H", ... */
} orte_node_t;

typedef struct orte_allocation {
    orte_node_t *nodes;
    uint32_t num_nodes;
    char *source; /* which component made it: "hostfile", "slurm", "simulator", "local" */
    /* Simulated nodes: how many virtual node daemons one daemon process hosts (0 or 1: one
     * process per node). Not packed: only the root's local launcher reads it. */
    uint32_t nodes_per_process;
} orte_allocation_t;

typedef struct orte_ras_module {
    /* Read the allocation; set *allocation only on success (free with orte_allocation_free).
     * Malformed input is reported (file:line, the bad token, what would work) and
     * HERD_ERR_SILENT returned. */
    int (*allocate)(orte_allocation_t **allocation);
} orte_ras_module_t;

OPAL_EXPORT extern opal_mca_framework_t orte_ras_base_framework;

/* Register the framework variables ras_base_hostfile (--hostfile) and ras_base_host (-H), then
 * find and open the components. Idempotent; undone by orte_ras_base_close(). */
OPAL_EXPORT int orte_ras_base_open(void);

/* Open (if needed) and select the framework, and ask the winning component for the
 * allocation. With no component available (no hostfile, host list, simulator or resource
 * manager), the allocation is this host alone, with one slot per core (source "local").
 * *allocation is set only on success; errors are reported and HERD_ERR_SILENT returned. */
OPAL_EXPORT int orte_ras_base_allocate(orte_allocation_t **allocation);

/* Close the components and release the variables. */
OPAL_EXPORT void orte_ras_base_close(void);

OPAL_EXPORT void orte_allocation_free(orte_allocation_t *allocation);

/* Print the allocation as a table (node, slots, max_slots, topology, origin) with totals, as
 * herd-dvm --display-allocation shows it. */
OPAL_EXPORT void orte_allocation_display(FILE *stream, const orte_allocation_t *allocation);

/* Serialization for the daemons: one versioned allocation per call. Unpack rejects malformed
 * or oversized input with HERD_ERR_UNPACK_FAILURE (or a buffer error) and leaves the buffer
 * position where it was; pack refuses an allocation unpack would reject (HERD_ERR_BAD_PARAM). */
OPAL_EXPORT int orte_allocation_pack(opal_buffer_t *buffer, const orte_allocation_t *allocation);
OPAL_EXPORT int orte_allocation_unpack(opal_buffer_t *buffer, orte_allocation_t **allocation);

#endif /* ORTE_MCA_RAS_H */
