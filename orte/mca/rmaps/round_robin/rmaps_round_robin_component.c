/* SPDX-License-Identifier: BSD-3-Clause */
/* rmaps round_robin: round-robin mapping by slot, node, package, L3 cache, core or hwthread. */
#include "herd_config.h"

#include <stdlib.h>

#include "opal/mca/base/mca_var.h"
#include "orte/mca/rmaps/base/base.h"
#include "orte/mca/rmaps/rmaps.h"

#define RMAPS_ROUND_ROBIN_DEFAULT_PRIORITY HERD_MCA_PRIORITY_orte_rmaps_round_robin

typedef struct {
    int priority;
} rmaps_round_robin_state_t;

static rmaps_round_robin_state_t rmaps_round_robin_state = {
    .priority = RMAPS_ROUND_ROBIN_DEFAULT_PRIORITY,
};

/* By slot and by object fill each node up to its free slots before the next (round robin over
 * the objects inside it); by node takes one process per node and round; SPAN balances over the
 * objects of all nodes. Beyond the free slots, oversubscription spreads evenly. */
static int rmaps_round_robin_plan(orte_rmaps_ctx_t *ctx, orte_rmaps_plan_t *plan)
{
    const orte_rmaps_policy_t *policy = &plan->policy;
    uint32_t num_nodes = ctx->job->num_nodes;
    uint32_t *room = NULL;
    uint32_t *weights = NULL;
    uint64_t np = plan->np;
    uint64_t free_total = 0;
    uint64_t left;
    int rc;

    switch (policy->mapping) {
    case ORTE_RMAPS_MAP_SLOT:
    case ORTE_RMAPS_MAP_NODE:
    case ORTE_RMAPS_MAP_PACKAGE:
    case ORTE_RMAPS_MAP_L3CACHE:
    case ORTE_RMAPS_MAP_CORE:
    case ORTE_RMAPS_MAP_HWTHREAD:
        break;
    default:
        return HERD_ERR_TAKE_NEXT;
    }
    rc = orte_rmaps_base_set_level(ctx, plan, policy->mapping);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    room = calloc((size_t) num_nodes + 1, sizeof(*room));
    weights = calloc((size_t) num_nodes + 1, sizeof(*weights));
    if (NULL == room || NULL == weights) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    for (uint32_t n = 0; n < num_nodes; ++n) {
        room[n] = orte_rmaps_base_free(ctx, plan, n);
        weights[n] = ctx->nodes[n].num[orte_rmaps_base_mapping_level(policy->mapping)];
        free_total += room[n];
    }
    if (0 == np) {
        if (0 == free_total) {
            rc = orte_rmaps_base_report("no-free-slots", plan->app, num_nodes);
            goto out;
        }
        np = free_total;
    }
    if (ORTE_RMAPS_MAP_NODE == policy->mapping) {
        left = orte_rmaps_base_spread(num_nodes, NULL, room, np, plan->counts);
    } else if (policy->span) {
        left = orte_rmaps_base_spread(num_nodes, weights, room, np, plan->counts);
    } else {
        left = np;
        for (uint32_t n = 0; n < num_nodes && left > 0; ++n) {
            uint32_t take = room[n] < left ? room[n] : (uint32_t) left;
            plan->counts[n] = take;
            left -= take;
        }
    }
    rc = orte_rmaps_base_oversubscribe(ctx, plan, left);
out:
    free(room);
    free(weights);
    return rc;
}

static const orte_rmaps_module_t rmaps_round_robin_module = {
    .name = "round_robin",
    .plan = rmaps_round_robin_plan,
};

static int rmaps_round_robin_register(const opal_mca_component_t *component)
{
    int index;

    /* a component that stays loaded (static build) still holds its previous value */
    rmaps_round_robin_state.priority = RMAPS_ROUND_ROBIN_DEFAULT_PRIORITY;
    index = opal_mca_var_register(component, "priority",
                                  "Priority of the round_robin rmaps component (--map-by slot, "
                                  "node, package, l3cache, core, hwthread); components are tried "
                                  "from the highest priority down",
                                  OPAL_MCA_VAR_INT, &rmaps_round_robin_state.priority);
    return index < 0 ? index : HERD_SUCCESS;
}

static int rmaps_round_robin_query(const opal_mca_component_t *component, void **module,
                                   int *priority)
{
    (void) component;
    *module = (void *) &rmaps_round_robin_module;
    *priority = rmaps_round_robin_state.priority;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(orte, rmaps, round_robin, .register_params = rmaps_round_robin_register,
                   .query = rmaps_round_robin_query);
