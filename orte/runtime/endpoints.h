/* SPDX-License-Identifier: BSD-3-Clause */
/* RM-assigned endpoints ("instant on"): which fabrics of a job have their processes' endpoints
 * chosen by the session daemons, each node's addresses on them, and every process's port, all
 * computed the same way by every session daemon (and herdrun, for --display-map -v) from the
 * nodes' inventories, with no message. docs/endpoints.md describes the scheme. */
#ifndef ORTE_RUNTIME_ENDPOINTS_H
#define ORTE_RUNTIME_ENDPOINTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "opal/util/jobdb.h"
#include "orte/util/inventory.h"

/* Addresses kept per node and fabric (the first ones the node reports). */
#define ORTE_ENDPOINTS_MAX_ADDRS 4u

typedef struct orte_endpoints_addr {
    int family; /* AF_INET or AF_INET6 */
    uint8_t bytes[16];
} orte_endpoints_addr_t;

/* One node's share of a fabric in the job. */
typedef struct orte_endpoints_node {
    uint32_t first_port; /* the job's window on this node (0: the node has no process) */
    uint32_t num_ports;
    orte_endpoints_addr_t addrs[ORTE_ENDPOINTS_MAX_ADDRS];
    uint32_t num_addrs;
} orte_endpoints_node_t;

typedef struct orte_endpoints_fabric {
    char name[OPAL_JOBDB_FABRIC_NAME_MAX]; /* "tcp", "ofi:tcp;ofi_rxm", "ucx" */
    bool assigned;                         /* false: its endpoints go through the modex */
    char *reason;                          /* why not assigned (NULL when assigned) */
    orte_endpoints_node_t *nodes;          /* per node of the job */
} orte_endpoints_fabric_t;

typedef struct orte_endpoints_plan {
    orte_endpoints_fabric_t *fabrics;
    uint32_t num_fabrics;
    uint32_t num_nodes;
} orte_endpoints_plan_t;

/* What the plan is made from: the same on every session daemon and in herdrun. */
typedef struct orte_endpoints_job {
    orte_inventory_t *const *inventories; /* per node of the job, in candidate order */
    const uint32_t *per_node;             /* the job's processes per node (node ranks 0..n-1) */
    uint32_t num_nodes;
    /* per node: the job's session slot there, as the launch message carries it (NULL: 0) */
    const uint32_t *session_slot;
} orte_endpoints_job_t;

/* The ports of one job on one node: a range of `range` ports from `base` is split into `slots`
 * session slots, each into `parts` equal parts (one per assigned provider of a family); the job
 * in session slot `slot` gets part `part`: *count ports from *first. *count may be 0 (a range
 * too small to share). HERD_ERR_BAD_PARAM for zero slots or parts, or slot/part out of range. */
OPAL_EXPORT int orte_endpoints_window(uint32_t base, uint32_t range, uint32_t slots, uint32_t slot,
                                      uint32_t parts, uint32_t part, uint32_t *first,
                                      uint32_t *count);

/* Decide every fabric of the job. A fabric is assigned only when every node with processes can
 * give each of them a port and has an address the others can reach; otherwise its reason says
 * which node and which variable to change, and the processes use the modex for it. Nothing is
 * printed. *plan (destruct it) set only on success. */
OPAL_EXPORT int orte_endpoints_plan_build(const orte_endpoints_job_t *job,
                                          orte_endpoints_plan_t *plan);
OPAL_EXPORT void orte_endpoints_plan_destruct(orte_endpoints_plan_t *plan);

/* The port of the process with node_rank on node, for fabric; 0 when none is assigned. */
OPAL_EXPORT uint16_t orte_endpoints_port(const orte_endpoints_plan_t *plan, uint32_t fabric,
                                         uint32_t node, uint32_t node_rank);

/* The job database's layout fields for the plan (num_fabrics, fabric_addrs). */
OPAL_EXPORT void orte_endpoints_layout(const orte_endpoints_plan_t *plan,
                                       opal_jobdb_layout_t *layout);
/* Write the plan's fabric table and node addresses into db (before any record). */
OPAL_EXPORT int orte_endpoints_write(const orte_endpoints_plan_t *plan, opal_jobdb_t *db);

/* "192.0.2.2:16384" or "[fd00::2]:16384": the endpoint at the node's first address. */
OPAL_EXPORT void orte_endpoints_format(const orte_endpoints_plan_t *plan, uint32_t fabric,
                                       uint32_t node, uint32_t node_rank, char *text, size_t size);

/* --display-map -v: one line per fabric, the path the job uses (RM-assigned with the ports, or
 * the modex and why). */
OPAL_EXPORT void orte_endpoints_print(FILE *out, const orte_endpoints_plan_t *plan,
                                      const orte_endpoints_job_t *job);

#endif /* ORTE_RUNTIME_ENDPOINTS_H */
