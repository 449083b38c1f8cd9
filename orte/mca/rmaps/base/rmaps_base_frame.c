/* SPDX-License-Identifier: BSD-3-Clause */
/* The rmaps framework object, its static-component table, and mapping a job: plan every app
 * with the first component that takes its policy, then emit the processes in rank order. */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/mca.h"
#include "orte/mca/rmaps/base/base.h"
#include "orte/mca/rmaps/rmaps.h"

#include "orte/mca/rmaps/base/component-hints.h"
#include "orte/mca/rmaps/base/static-components.h"

opal_mca_framework_t orte_rmaps_base_framework = OPAL_MCA_FRAMEWORK_INIT_HINTS(
    orte, rmaps, "Mapping: where each process goes, and its binding", true,
    orte_rmaps_static_components, NULL, orte_rmaps_component_hints);

int orte_rmaps_base_open(void)
{
    return opal_mca_framework_open_select(&orte_rmaps_base_framework);
}

void orte_rmaps_base_close(void)
{
    opal_mca_framework_close(&orte_rmaps_base_framework);
}

/* The job size the defaults are decided on: an app of np 0 counts as the job's slots. */
static uint32_t job_size(const orte_rmaps_job_t *job)
{
    uint64_t slots = 0;
    uint64_t np = 0;

    for (uint32_t n = 0; n < job->num_nodes; ++n) {
        slots += job->nodes[n].slots;
    }
    for (uint32_t a = 0; a < job->num_apps; ++a) {
        np += job->apps[a].np > 0 ? job->apps[a].np : slots;
    }
    return np > UINT32_MAX ? UINT32_MAX : (uint32_t) np;
}

static void explain_nodes(const orte_rmaps_ctx_t *ctx, const orte_rmaps_plan_t *plan)
{
    for (uint32_t n = 0; n < ctx->job->num_nodes && NULL != ctx->explain; ++n) {
        const orte_rmaps_node_t *node = &ctx->job->nodes[n];
        const orte_rmaps_node_state_t *st = &ctx->nodes[n];
        char max[32] = "none";
        if (node->max_slots > 0) {
            snprintf(max, sizeof(max), "%u", node->max_slots);
        }
        orte_rmaps_base_explain(ctx,
                                "app %u: node %s: %u slots (%u used by earlier apps), "
                                "max_slots %s, %u packages, %u cores, %u hwthreads: room for "
                                "%u processes -> gets %u",
                                plan->app, node->name, node->slots, st->used_slots, max,
                                st->num[ORTE_RMAPS_LEVEL_PACKAGE], st->num[ORTE_RMAPS_LEVEL_CORE],
                                st->num[ORTE_RMAPS_LEVEL_HWTHREAD],
                                orte_rmaps_base_free(ctx, plan, n), plan->counts[n]);
    }
}

/* The first selected component that takes the app's policy plans it; HERD_ERR_TAKE_NEXT when
 * none does. */
static int try_mappers(orte_rmaps_ctx_t *ctx, orte_rmaps_plan_t *plan)
{
    const opal_mca_framework_t *fw = &orte_rmaps_base_framework;
    int rc = HERD_ERR_TAKE_NEXT;

    for (size_t i = 0; i < fw->num_selected && HERD_ERR_TAKE_NEXT == rc; ++i) {
        const orte_rmaps_module_t *module = fw->selected[i]->module;
        memset(plan->counts, 0, ctx->job->num_nodes * sizeof(*plan->counts));
        plan->block = 0;
        rc = module->plan(ctx, plan);
        if (HERD_ERR_TAKE_NEXT == rc) {
            orte_rmaps_base_explain(ctx, "app %u: component %s does not do --map-by %s", plan->app,
                                    module->name, orte_rmaps_mapping_name(plan->policy.mapping));
        } else {
            plan->component = module->name;
            orte_rmaps_base_explain(ctx, "app %u: component %s maps it", plan->app, module->name);
        }
    }
    return rc;
}

/* Plans one app with the first selected component that takes its policy. */
static int plan_app(orte_rmaps_ctx_t *ctx, orte_rmaps_plan_t *plan)
{
    char text[256];

    orte_rmaps_policy_string(&plan->policy, text, sizeof(text));
    orte_rmaps_base_explain(ctx, "app %u: %u processes%s, policy after defaults: %s", plan->app,
                            plan->np, 0 == plan->np ? " (as many as the policy allows)" : "", text);
    int rc = try_mappers(ctx, plan);
    if (HERD_ERR_TAKE_NEXT == rc && orte_rmaps_base_framework.num_deferred > 0) {
        /* the mappers of other policies (ppr, seq) are loaded when an app first asks for one */
        orte_rmaps_base_explain(ctx, "app %u: loading the mappers not loaded yet", plan->app);
        rc = opal_mca_framework_load_deferred(&orte_rmaps_base_framework);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
        rc = try_mappers(ctx, plan);
    }
    if (HERD_ERR_TAKE_NEXT == rc) {
        return orte_rmaps_base_report("no-mapper", plan->app,
                                      orte_rmaps_mapping_name(plan->policy.mapping));
    }
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    /* the app takes its slots: later apps continue after it */
    plan->total = 0;
    for (uint32_t n = 0; n < ctx->job->num_nodes; ++n) {
        orte_rmaps_node_state_t *st = &ctx->nodes[n];
        uint32_t pe = plan->policy.pe > 0 ? plan->policy.pe : 1;
        plan->first[n] = (st->used_slots + pe - 1) / pe;
        plan->total += plan->counts[n];
    }
    explain_nodes(ctx, plan);
    for (uint32_t n = 0; n < ctx->job->num_nodes; ++n) {
        uint32_t pe = plan->policy.pe > 0 ? plan->policy.pe : 1;
        ctx->nodes[n].used_slots = (plan->first[n] + plan->counts[n]) * pe;
        ctx->nodes[n].placed += plan->counts[n];
    }
    return HERD_SUCCESS;
}

int orte_rmaps_base_map_job(const orte_rmaps_job_t *job, orte_rmaps_emit_fn_t emit, void *cbdata,
                            uint32_t *num_procs)
{
    orte_rmaps_ctx_t ctx = {.job = job};
    orte_rmaps_plan_t *plans = NULL;
    uint32_t next_rank = 0;
    uint32_t size;
    uint64_t total = 0;
    int rc;

    if (NULL == job || NULL == emit || NULL == num_procs) {
        return HERD_ERR_BAD_PARAM;
    }
    if (!orte_rmaps_base_framework.opened || 0 == orte_rmaps_base_framework.num_selected) {
        return HERD_ERR_NOT_FOUND;
    }
    if (0 == job->num_nodes || 0 == job->num_apps) {
        return orte_rmaps_base_report("nothing-to-map", job->num_nodes, job->num_apps);
    }
    ctx.explain = job->explain ? (NULL != job->explain_file ? job->explain_file : stdout) : NULL;
    rc = orte_rmaps_base_prepare_nodes(&ctx);
    if (HERD_SUCCESS != rc) {
        goto out;
    }
    plans = calloc(job->num_apps, sizeof(*plans));
    if (NULL == plans) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    size = job_size(job);
    orte_rmaps_base_explain(&ctx, "job: %u apps on %u nodes; defaults decided for %u processes",
                            job->num_apps, job->num_nodes, size);
    /* every app is planned before anything is emitted: an impossible map starts nothing */
    for (uint32_t a = 0; a < job->num_apps; ++a) {
        orte_rmaps_plan_t *plan = &plans[a];
        plan->app = a;
        plan->np = job->apps[a].np;
        orte_rmaps_policy_resolve(&job->apps[a].policy, size, &plan->policy);
        plan->counts = calloc(job->num_nodes, sizeof(*plan->counts));
        plan->first = calloc(job->num_nodes, sizeof(*plan->first));
        if (NULL == plan->counts || NULL == plan->first) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
            goto out;
        }
        rc = plan_app(&ctx, plan);
        if (HERD_SUCCESS != rc) {
            goto out;
        }
        total += plan->total;
    }
    if (total > UINT32_MAX) {
        rc = orte_rmaps_base_report("too-many-processes", (unsigned long long) total);
        goto out;
    }
    for (uint32_t a = 0; NULL != job->app_node_counts && a < job->num_apps; ++a) {
        memcpy(job->app_node_counts + (size_t) a * job->num_nodes, plans[a].counts,
               job->num_nodes * sizeof(uint32_t));
    }
    if (NULL != job->planned) {
        uint32_t *per_node = calloc(job->num_nodes, sizeof(*per_node));
        if (NULL == per_node) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
            goto out;
        }
        for (uint32_t a = 0; a < job->num_apps; ++a) {
            for (uint32_t n = 0; n < job->num_nodes; ++n) {
                per_node[n] += plans[a].counts[n];
            }
        }
        rc = job->planned((uint32_t) total, per_node, cbdata);
        free(per_node);
        if (HERD_SUCCESS != rc) {
            goto out;
        }
    }
    for (uint32_t a = 0; a < job->num_apps && HERD_SUCCESS == rc; ++a) {
        rc = orte_rmaps_base_emit_plan(&ctx, &plans[a], &next_rank, emit, cbdata);
    }
    if (HERD_SUCCESS == rc) {
        orte_rmaps_base_explain(&ctx, "job: %u processes mapped", next_rank);
        *num_procs = next_rank;
    }
out:
    if (NULL != plans) {
        for (uint32_t a = 0; a < job->num_apps; ++a) {
            free(plans[a].counts);
            free(plans[a].first);
        }
    }
    free(plans);
    orte_rmaps_base_release_nodes(&ctx);
    return rc;
}
