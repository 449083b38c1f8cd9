/* SPDX-License-Identifier: BSD-3-Clause */
/* What herdrun and every session daemon feed the mapper for one job: the candidate nodes with
 * their topologies (one per distinct signature) and the apps with their policies, built the same
 * way on both sides so every mapper gets the same map. */
#ifndef ORTE_RUNTIME_JOBMAP_H
#define ORTE_RUNTIME_JOBMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "orte/mca/rmaps/rmaps.h"
#include "orte/util/inventory.h"
#include "orte/runtime/job.h"

typedef struct orte_jobmap_nodes {
    orte_rmaps_node_t *nodes; /* per candidate; names borrowed from the inventories */
    bool *simulated;          /* per candidate: a synthetic topology (do not bind here) */
    uint32_t num;
    hwloc_topology_t *topologies; /* owned, one per distinct signature */
    char **signatures;            /* of those */
    uint32_t num_topologies;
} orte_jobmap_nodes_t;

/* Load one topology per distinct signature: the synthetic description, else the inventory's
 * XML, else the XML xml_pairs ("signature", "xml", ...) give for the signature. The inventories
 * must outlive *nodes. Reports (naming the node) and returns HERD_ERR_SILENT when a topology is
 * missing or does not load. */
OPAL_EXPORT int orte_jobmap_nodes_build(orte_inventory_t *const *inventories, const uint32_t *slots,
                                        const uint32_t *max_slots, uint32_t num,
                                        char *const *xml_pairs, orte_jobmap_nodes_t *nodes);
OPAL_EXPORT void orte_jobmap_nodes_destruct(orte_jobmap_nodes_t *nodes);

/* The mapper's apps for the spec (policies parsed, --oversubscribe applied). *apps (free it)
 * set only on success; bad policies are reported and HERD_ERR_BAD_PARAM returned. The spec must
 * outlive *apps (seq host lists are borrowed). */
OPAL_EXPORT int orte_jobmap_apps(const orte_job_spec_t *spec, orte_rmaps_app_t **apps);

/* The nodes a spawn of the job maps over: its participants (the nodes running a session daemon),
 * in participant order, each with the slots the job's processes left free there (used: per
 * candidate, the processes placed so far). *out (free it; names and topologies borrowed from
 * nodes) set only on success. */
OPAL_EXPORT int orte_jobmap_spawn_nodes(const orte_jobmap_nodes_t *nodes,
                                        const uint32_t *participants, uint32_t num_participants,
                                        const uint32_t *used, orte_rmaps_node_t **out);

#endif /* ORTE_RUNTIME_JOBMAP_H */
