/* SPDX-License-Identifier: BSD-3-Clause */
/* Building the mapper's input for a job (orte/runtime/jobmap.h). */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/util/argv.h"
#include "opal/util/output.h"
#include "orte/runtime/jobmap.h"

static const char *xml_for(char *const *pairs, const char *signature)
{
    for (size_t i = 0; NULL != pairs && NULL != pairs[i] && NULL != pairs[i + 1]; i += 2) {
        if (0 == strcmp(pairs[i], signature) && '\0' != pairs[i + 1][0]) {
            return pairs[i + 1];
        }
    }
    return NULL;
}

int orte_jobmap_nodes_build(orte_inventory_t *const *inventories, const uint32_t *slots,
                            const uint32_t *max_slots, uint32_t num, char *const *xml_pairs,
                            orte_jobmap_nodes_t *out)
{
    orte_jobmap_nodes_t n;
    int rc = HERD_SUCCESS;
    memset(&n, 0, sizeof(n));
    n.num = num;
    n.nodes = calloc(num, sizeof(*n.nodes));
    n.simulated = calloc(num, sizeof(*n.simulated));
    n.topologies = calloc(num, sizeof(*n.topologies));
    n.signatures = calloc(num, sizeof(*n.signatures));
    if (NULL == n.nodes || NULL == n.simulated || NULL == n.topologies || NULL == n.signatures) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    for (uint32_t i = 0; i < num; ++i) {
        const orte_inventory_t *inv = inventories[i];
        uint32_t t = 0;
        while (t < n.num_topologies && 0 != strcmp(n.signatures[t], inv->signature)) {
            ++t;
        }
        if (t == n.num_topologies) {
            orte_inventory_t view = *inv;
            if (NULL == view.synthetic && NULL == view.xml) {
                view.xml = (char *) xml_for(xml_pairs, inv->signature);
            }
            rc = orte_rmaps_topology_load(&view, &n.topologies[t]);
            if (HERD_SUCCESS != rc) {
                opal_output(OPAL_OUTPUT_STDERR,
                            "herd: the topology of node %s (signature %s) is %s; the job cannot "
                            "be mapped",
                            inv->node_name, inv->signature,
                            HERD_ERR_NOT_FOUND == rc ? "not known here" : "unreadable");
                rc = HERD_ERR_SILENT;
                goto out;
            }
            n.signatures[t] = inv->signature;
            n.num_topologies++;
        }
        n.nodes[i].name = inv->node_name;
        n.nodes[i].slots = (NULL != slots) ? slots[i] : inv->slots;
        n.nodes[i].max_slots = (NULL != max_slots) ? max_slots[i] : 0;
        n.nodes[i].topology = n.topologies[t];
        n.simulated[i] = NULL != inv->synthetic;
    }
out:
    if (HERD_SUCCESS != rc) {
        orte_jobmap_nodes_destruct(&n);
        return rc;
    }
    *out = n;
    return HERD_SUCCESS;
}

void orte_jobmap_nodes_destruct(orte_jobmap_nodes_t *n)
{
    for (uint32_t t = 0; NULL != n->topologies && t < n->num_topologies; ++t) {
        hwloc_topology_destroy(n->topologies[t]);
    }
    free(n->topologies);
    free(n->signatures);
    free(n->nodes);
    free(n->simulated);
    memset(n, 0, sizeof(*n));
}

int orte_jobmap_apps(const orte_job_spec_t *spec, orte_rmaps_app_t **apps_out)
{
    orte_rmaps_app_t *apps = calloc(spec->num_apps, sizeof(*apps));
    if (NULL == apps) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t a = 0; a < spec->num_apps; ++a) {
        const orte_job_app_t *app = &spec->apps[a];
        int rc = orte_rmaps_policy_parse(app->map_by, app->rank_by, app->bind_to, &apps[a].policy);
        if (HERD_SUCCESS != rc) {
            free(apps);
            return rc;
        }
        /* a modifier in --map-by wins over the job-wide option */
        if (ORTE_RMAPS_OVERSUB_DEFAULT == apps[a].policy.oversubscribe) {
            if (spec->oversubscribe) {
                apps[a].policy.oversubscribe = ORTE_RMAPS_OVERSUB_ALLOW;
            } else if (spec->nooversubscribe) {
                apps[a].policy.oversubscribe = ORTE_RMAPS_OVERSUB_FORBID;
            }
        }
        apps[a].policy.seq_hosts = (const char *const *) app->seq_hosts;
        apps[a].np = app->np;
    }
    *apps_out = apps;
    return HERD_SUCCESS;
}

int orte_jobmap_spawn_nodes(const orte_jobmap_nodes_t *nodes, const uint32_t *participants,
                            uint32_t num_participants, const uint32_t *used,
                            orte_rmaps_node_t **out)
{
    orte_rmaps_node_t *list = calloc(num_participants > 0 ? num_participants : 1, sizeof(*list));
    if (NULL == list) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t p = 0; p < num_participants; ++p) {
        uint32_t c = participants[p];
        if (c >= nodes->num) {
            free(list);
            return HERD_ERR_BAD_PARAM;
        }
        list[p] = nodes->nodes[c];
        list[p].slots = used[c] < list[p].slots ? list[p].slots - used[c] : 0;
        /* a node's hard limit counts what runs there already (0 stays "no limit") */
        if (list[p].max_slots > 0) {
            list[p].max_slots = used[c] < list[p].max_slots ? list[p].max_slots - used[c] : 1;
        }
    }
    *out = list;
    return HERD_SUCCESS;
}
