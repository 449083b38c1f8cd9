/* SPDX-License-Identifier: BSD-3-Clause */
/* rmaps ppr: N processes per package, L3 cache, core, hwthread or node. */
#include "herd_config.h"

#include <stdlib.h>

#include "opal/mca/base/mca_var.h"
#include "orte/mca/rmaps/base/base.h"
#include "orte/mca/rmaps/rmaps.h"

#define RMAPS_PPR_DEFAULT_PRIORITY HERD_MCA_PRIORITY_orte_rmaps_ppr

typedef struct {
    int priority;
} rmaps_ppr_state_t;

static rmaps_ppr_state_t rmaps_ppr_state = {
    .priority = RMAPS_PPR_DEFAULT_PRIORITY,
};

/* Every node gets N per object (blocks of N consecutive processes in each object), nodes in
 * order; fewer when -np asks for fewer. More than the free slots only with OVERSUBSCRIBE. */
static int rmaps_ppr_plan(orte_rmaps_ctx_t *ctx, orte_rmaps_plan_t *plan)
{
    const orte_rmaps_policy_t *policy = &plan->policy;
    uint32_t num_nodes = ctx->job->num_nodes;
    bool per_node = ORTE_RMAPS_MAP_NODE == policy->ppr_object;
    orte_rmaps_level_t level = orte_rmaps_base_mapping_level(policy->ppr_object);
    const char *object = orte_rmaps_mapping_name(policy->ppr_object);
    uint64_t total = 0;
    uint64_t left;
    int rc;

    if (ORTE_RMAPS_MAP_PPR != policy->mapping) {
        return HERD_ERR_TAKE_NEXT;
    }
    rc = orte_rmaps_base_set_level(ctx, plan, per_node ? ORTE_RMAPS_MAP_SLOT : policy->ppr_object);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    plan->block = per_node ? 0 : policy->ppr_count;
    for (uint32_t n = 0; n < num_nodes; ++n) {
        uint64_t want = (uint64_t) policy->ppr_count * (per_node ? 1 : ctx->nodes[n].num[level]);
        total += want;
    }
    left = plan->np > 0 ? plan->np : total;
    if (left > total) {
        return orte_rmaps_base_report("ppr-too-many", plan->app, plan->np, policy->ppr_count,
                                      object, (unsigned long long) total, num_nodes,
                                      (unsigned long long) total);
    }
    for (uint32_t n = 0; n < num_nodes && left > 0; ++n) {
        uint64_t want = (uint64_t) policy->ppr_count * (per_node ? 1 : ctx->nodes[n].num[level]);
        uint32_t take = (uint32_t) (want < left ? want : left);
        uint32_t room = orte_rmaps_base_free(ctx, plan, n);
        if (take > room) {
            const orte_rmaps_node_t *node = &ctx->job->nodes[n];
            uint32_t used = ctx->nodes[n].used_slots;
            uint32_t slots = node->slots > used ? node->slots - used : 0;
            if (ORTE_RMAPS_OVERSUB_ALLOW != policy->oversubscribe) {
                return orte_rmaps_base_report("ppr-over-slots", plan->app, policy->ppr_count,
                                              object, take, node->name, slots,
                                              used > 0 ? " left by the earlier apps" : "");
            }
            if (take > orte_rmaps_base_limit(ctx, plan, n)) {
                return orte_rmaps_base_report("ppr-over-max", plan->app, policy->ppr_count, object,
                                              take, node->name, node->max_slots);
            }
        }
        plan->counts[n] = take;
        left -= take;
    }
    return HERD_SUCCESS;
}

static const orte_rmaps_module_t rmaps_ppr_module = {
    .name = "ppr",
    .plan = rmaps_ppr_plan,
};

static int rmaps_ppr_register(const opal_mca_component_t *component)
{
    int index;

    rmaps_ppr_state.priority = RMAPS_PPR_DEFAULT_PRIORITY;
    index = opal_mca_var_register(component, "priority",
                                  "Priority of the ppr rmaps component (--map-by ppr:N:OBJ); "
                                  "components are tried from the highest priority down",
                                  OPAL_MCA_VAR_INT, &rmaps_ppr_state.priority);
    return index < 0 ? index : HERD_SUCCESS;
}

static int rmaps_ppr_query(const opal_mca_component_t *component, void **module, int *priority)
{
    (void) component;
    *module = (void *) &rmaps_ppr_module;
    *priority = rmaps_ppr_state.priority;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(orte, rmaps, ppr, .register_params = rmaps_ppr_register,
                   .query = rmaps_ppr_query);
