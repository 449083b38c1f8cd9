/* SPDX-License-Identifier: BSD-3-Clause */
/* rmaps seq: one process per line of a hostfile, in order. */
#include "herd_config.h"

#include <stdlib.h>

#include "opal/mca/base/mca_var.h"
#include "orte/mca/rmaps/base/base.h"
#include "orte/mca/rmaps/rmaps.h"

#define RMAPS_SEQ_DEFAULT_PRIORITY HERD_MCA_PRIORITY_orte_rmaps_seq

typedef struct {
    int priority;
} rmaps_seq_state_t;

static rmaps_seq_state_t rmaps_seq_state = {
    .priority = RMAPS_SEQ_DEFAULT_PRIORITY,
};

/* Rank i goes to the i-th host of the list (every node once, in order, without a list). */
static int rmaps_seq_plan(orte_rmaps_ctx_t *ctx, orte_rmaps_plan_t *plan)
{
    const orte_rmaps_policy_t *policy = &plan->policy;
    const char *const *hosts = policy->seq_hosts;
    uint32_t num_nodes = ctx->job->num_nodes;
    uint32_t length = 0;
    uint32_t np;
    int rc;

    if (ORTE_RMAPS_MAP_SEQ != policy->mapping) {
        return HERD_ERR_TAKE_NEXT;
    }
    rc = orte_rmaps_base_set_level(ctx, plan, ORTE_RMAPS_MAP_SLOT);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (NULL != hosts) {
        while (NULL != hosts[length] && length < UINT32_MAX) {
            length++;
        }
    } else {
        length = num_nodes;
    }
    np = plan->np > 0 ? plan->np : length;
    if (np > length) {
        return orte_rmaps_base_report("seq-too-few-hosts", plan->app, np, length, length);
    }
    for (uint32_t i = 0; i < np; ++i) {
        uint32_t n = i;
        if (NULL != hosts) {
            rc = orte_rmaps_base_find_node(ctx, hosts[i], &n);
            if (HERD_ERR_NOT_FOUND == rc) {
                return orte_rmaps_base_report("seq-unknown-host", plan->app, hosts[i], i + 1);
            }
            if (HERD_SUCCESS != rc) {
                return rc;
            }
        }
        plan->counts[n]++;
    }
    for (uint32_t n = 0; n < num_nodes; ++n) {
        const orte_rmaps_node_t *node = &ctx->job->nodes[n];
        uint32_t used = ctx->nodes[n].used_slots;
        if (plan->counts[n] <= orte_rmaps_base_free(ctx, plan, n)) {
            continue;
        }
        if (ORTE_RMAPS_OVERSUB_ALLOW != policy->oversubscribe) {
            return orte_rmaps_base_report("seq-over-slots", plan->app, plan->counts[n], node->name,
                                          node->slots > used ? node->slots - used : 0,
                                          used > 0 ? " left by the earlier apps" : "");
        }
        if (plan->counts[n] > orte_rmaps_base_limit(ctx, plan, n)) {
            return orte_rmaps_base_report("seq-over-max", plan->app, plan->counts[n], node->name,
                                          node->max_slots);
        }
    }
    return HERD_SUCCESS;
}

static const orte_rmaps_module_t rmaps_seq_module = {
    .name = "seq",
    .plan = rmaps_seq_plan,
};

static int rmaps_seq_register(const opal_mca_component_t *component)
{
    int index;

    rmaps_seq_state.priority = RMAPS_SEQ_DEFAULT_PRIORITY;
    index = opal_mca_var_register(component, "priority",
                                  "Priority of the seq rmaps component (--map-by seq: one "
                                  "process per host of a list, in order); components are tried "
                                  "from the highest priority down",
                                  OPAL_MCA_VAR_INT, &rmaps_seq_state.priority);
    return index < 0 ? index : HERD_SUCCESS;
}

static int rmaps_seq_query(const opal_mca_component_t *component, void **module, int *priority)
{
    (void) component;
    *module = (void *) &rmaps_seq_module;
    *priority = rmaps_seq_state.priority;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(orte, rmaps, seq, .register_params = rmaps_seq_register,
                   .query = rmaps_seq_query);
