/* SPDX-License-Identifier: BSD-3-Clause */
/* A node's inventory, as its daemon reports it to the DVM: name, slots, topology (summary,
 * signature, and the full hwloc XML once per distinct signature) and fabric records. */
#ifndef ORTE_UTIL_INVENTORY_H
#define ORTE_UTIL_INVENTORY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "opal/dss/buffer.h"
#include "opal/mca/fabric/fabric.h"

typedef struct orte_inventory {
    char *node_name;
    uint32_t slots; /* cores: one process per core unless the allocation says otherwise */
    uint32_t num_packages;
    uint32_t num_cores;
    uint32_t num_pus;
    char *signature; /* identical for nodes with the same topology */
    char *synthetic; /* hwloc synthetic description, when the topology has one, else NULL */
    char *xml;       /* full hwloc XML; NULL when not sent (the receiver has this signature), or
                      * for a simulated node until orte_inventory_xml() makes it */
    opal_fabric_record_t **fabric;
    size_t num_fabric;
    /* The node's static session endpoints: listeners its daemon holds for the session daemons
     * of jobs (a job uses the entry its launch message's session_slot names for this node), so
     * every peer knows where a job's session daemon on this node listens without asking.
     * NULL-terminated; NULL when none. */
    char **session_uris;
} orte_inventory_t;

/* Discover this node: the hwloc topology of this machine, or of the synthetic description
 * when given (simulated nodes); the fabric framework's records unless fabric_components is NULL:
 * "all" asks every component the framework selects, a list ("tcp") only those (the fabric
 * selection variable, when the user set it, wins). */
OPAL_EXPORT int orte_inventory_collect(const char *node_name, const char *synthetic,
                                       const char *fabric_components,
                                       orte_inventory_t **inventory);
OPAL_EXPORT void orte_inventory_free(orte_inventory_t *inventory);
/* The node's full hwloc XML: a collected simulated node has none until it is asked for (made
 * here from its synthetic description, and kept); NULL when it cannot be made. */
OPAL_EXPORT const char *orte_inventory_xml(orte_inventory_t *inventory);

/* Versioned serialization; with_xml false leaves the XML out. Unpack rejects malformed input. */
OPAL_EXPORT int orte_inventory_pack(opal_buffer_t *buffer, const orte_inventory_t *inventory,
                                    bool with_xml);
OPAL_EXPORT int orte_inventory_unpack(opal_buffer_t *buffer, orte_inventory_t **inventory);

/* "2 packages, 16 cores, 32 hwthreads" into text. */
OPAL_EXPORT void orte_inventory_summary(const orte_inventory_t *inventory, char *text, size_t size);

#endif /* ORTE_UTIL_INVENTORY_H */
