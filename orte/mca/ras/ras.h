/* The ras framework: what the allocation is (nodes and slots), from a hostfile or host list,
 * a resource manager (Slurm), or a simulator of many virtual nodes on this host. */
#ifndef ORTE_MCA_RAS_H
#define ORTE_MCA_RAS_H

#include <stdint.h>
#include <stdio.h>

#include "opal/mca/mca.h"

#define OPAL_MCA_ras_INTERFACE_VERSION 1u

typedef struct orte_node {
    char *name;        /* host name (a simulated node's own name for the simulator) */
    uint32_t slots;    /* processes that may run there without oversubscribing */
    uint32_t max_slots; /* hard limit, 0 for none */
    char *topology;    /* hwloc synthetic description for simulated nodes, else NULL */
    char *origin;      /* where it was named, for messages: "hosts.txt:3", "-H", ... */
} orte_node_t;

typedef struct orte_allocation {
    orte_node_t *nodes;
    uint32_t num_nodes;
    char *source; /* which component made it: "hostfile", "slurm", "simulator", "local" */
} orte_allocation_t;

typedef struct orte_ras_module {
    /* Read the allocation; set *allocation only on success (free with orte_allocation_free).
     * Malformed input is reported (file:line, the bad token, what would work) and
     * HERD_ERR_SILENT returned. */
    int (*allocate)(orte_allocation_t **allocation);
} orte_ras_module_t;

OPAL_EXPORT extern opal_mca_framework_t orte_ras_base_framework;

#endif /* ORTE_MCA_RAS_H */
