/* SPDX-License-Identifier: BSD-3-Clause */
/* The planning helpers components share: node levels, free slots, spreading processes over
 * nodes, oversubscription, and reporting the constraint that makes a map impossible. */
#include "herd_config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/show_help.h"
#include "orte/mca/rmaps/base/base.h"

void orte_rmaps_base_explain(const orte_rmaps_ctx_t *ctx, const char *format, ...)
{
    va_list ap;

    if (NULL == ctx->explain) {
        return;
    }
    fputs("[rmaps] ", ctx->explain);
    va_start(ap, format);
    vfprintf(ctx->explain, format, ap);
    va_end(ap);
    fputc('\n', ctx->explain);
}

int orte_rmaps_base_report(const char *topic, ...)
{
    va_list ap;

    va_start(ap, topic);
    opal_show_vhelp(ORTE_RMAPS_BASE_HELP_FILE, topic, true, ap);
    va_end(ap);
    return HERD_ERR_SILENT;
}

orte_rmaps_level_t orte_rmaps_base_mapping_level(orte_rmaps_mapping_t mapping)
{
    switch (mapping) {
    case ORTE_RMAPS_MAP_PACKAGE:
        return ORTE_RMAPS_LEVEL_PACKAGE;
    case ORTE_RMAPS_MAP_L3CACHE:
        return ORTE_RMAPS_LEVEL_L3CACHE;
    case ORTE_RMAPS_MAP_HWTHREAD:
        return ORTE_RMAPS_LEVEL_HWTHREAD;
    default:
        /* slot, node, core, seq: a slot is a core */
        return ORTE_RMAPS_LEVEL_CORE;
    }
}

const char *orte_rmaps_base_level_name(orte_rmaps_level_t level)
{
    static const char *const names[ORTE_RMAPS_LEVEL_COUNT] = {"node", "package", "L3 cache", "core",
                                                              "hwthread"};
    return level < ORTE_RMAPS_LEVEL_COUNT ? names[level] : "unknown";
}

static orte_rmaps_level_t binding_level(orte_rmaps_binding_t binding)
{
    switch (binding) {
    case ORTE_RMAPS_BIND_PACKAGE:
        return ORTE_RMAPS_LEVEL_PACKAGE;
    case ORTE_RMAPS_BIND_L3CACHE:
        return ORTE_RMAPS_LEVEL_L3CACHE;
    case ORTE_RMAPS_BIND_HWTHREAD:
        return ORTE_RMAPS_LEVEL_HWTHREAD;
    default:
        return ORTE_RMAPS_LEVEL_CORE;
    }
}

/* The fewest units (cores or hwthreads) any object of level holds on a node. */
static uint32_t fewest_units(const orte_rmaps_node_t *node, const orte_rmaps_node_state_t *st,
                             orte_rmaps_level_t level, orte_rmaps_level_t unit)
{
    uint32_t fewest = UINT32_MAX;

    if (ORTE_RMAPS_LEVEL_MACHINE == level) {
        return st->num[unit];
    }
    for (uint32_t i = 0; i < st->num[level]; ++i) {
        hwloc_obj_t obj = hwloc_get_obj_by_depth(node->topology, st->depth[level], i);
        int n =
            hwloc_get_nbobjs_inside_cpuset_by_depth(node->topology, obj->cpuset, st->depth[unit]);
        if (n >= 0 && (uint32_t) n < fewest) {
            fewest = (uint32_t) n;
        }
    }
    return fewest;
}

int orte_rmaps_base_set_level(orte_rmaps_ctx_t *ctx, orte_rmaps_plan_t *plan,
                              orte_rmaps_mapping_t mapping)
{
    const orte_rmaps_policy_t *policy = &plan->policy;
    orte_rmaps_level_t object = orte_rmaps_base_mapping_level(mapping);
    bool spread_on_node = ORTE_RMAPS_MAP_PACKAGE != mapping && ORTE_RMAPS_MAP_L3CACHE != mapping;

    plan->unit_level =
        ORTE_RMAPS_MAP_HWTHREAD == mapping ? ORTE_RMAPS_LEVEL_HWTHREAD : ORTE_RMAPS_LEVEL_CORE;
    /* with PE, processes take runs of consecutive units inside the mapping object; for the
     * node-wide mappings that object is the whole node */
    plan->map_level = (policy->pe > 0 && spread_on_node) ? ORTE_RMAPS_LEVEL_MACHINE : object;

    for (uint32_t n = 0; n < ctx->job->num_nodes; ++n) {
        const orte_rmaps_node_t *node = &ctx->job->nodes[n];
        const orte_rmaps_node_state_t *st = &ctx->nodes[n];
        if (st->depth[object] < 0) {
            return orte_rmaps_base_report("missing-object", node->name,
                                          orte_rmaps_base_level_name(object),
                                          orte_rmaps_mapping_name(mapping));
        }
        if (ORTE_RMAPS_BIND_NONE != policy->binding &&
            st->depth[binding_level(policy->binding)] < 0) {
            return orte_rmaps_base_report(
                "missing-bind-object", node->name,
                orte_rmaps_base_level_name(binding_level(policy->binding)),
                orte_rmaps_binding_name(policy->binding));
        }
        if (ORTE_RMAPS_RANK_L3CACHE == policy->ranking && st->depth[ORTE_RMAPS_LEVEL_L3CACHE] < 0) {
            return orte_rmaps_base_report("missing-rank-object", node->name, "L3 cache", "l3cache");
        }
        if (policy->pe > 0) {
            uint32_t fewest = fewest_units(node, st, plan->map_level, plan->unit_level);
            if (policy->pe > fewest) {
                const char *units =
                    ORTE_RMAPS_LEVEL_CORE == plan->unit_level ? "cores" : "hwthreads";
                if (ORTE_RMAPS_LEVEL_MACHINE == plan->map_level) {
                    return orte_rmaps_base_report("pe-too-large-node", policy->pe, node->name,
                                                  fewest, units);
                }
                return orte_rmaps_base_report("pe-too-large", policy->pe,
                                              orte_rmaps_base_level_name(plan->map_level),
                                              node->name, fewest, units);
            }
        }
    }
    return HERD_SUCCESS;
}

uint32_t orte_rmaps_base_free(const orte_rmaps_ctx_t *ctx, const orte_rmaps_plan_t *plan,
                              uint32_t node)
{
    uint32_t slots = ctx->job->nodes[node].slots;
    uint32_t used = ctx->nodes[node].used_slots;
    uint32_t pe = plan->policy.pe > 0 ? plan->policy.pe : 1;

    return slots > used ? (slots - used) / pe : 0;
}

uint32_t orte_rmaps_base_limit(const orte_rmaps_ctx_t *ctx, const orte_rmaps_plan_t *plan,
                               uint32_t node)
{
    const orte_rmaps_node_t *n = &ctx->job->nodes[node];
    uint32_t used = ctx->nodes[node].used_slots;
    uint32_t pe = plan->policy.pe > 0 ? plan->policy.pe : 1;
    uint32_t cap;

    if (0 == n->max_slots) {
        return UINT32_MAX;
    }
    cap = n->max_slots > n->slots ? n->max_slots : n->slots;
    return cap > used ? (cap - used) / pe : 0;
}

/* What nodes take when every node with weight w gets min(room, level * w). */
static uint64_t spread_sum(uint32_t num_nodes, const uint32_t *weights, const uint32_t *room,
                           uint64_t level)
{
    uint64_t sum = 0;

    for (uint32_t n = 0; n < num_nodes; ++n) {
        uint64_t w = NULL != weights ? weights[n] : 1;
        uint64_t take = level * w;
        sum += take < room[n] ? take : room[n];
    }
    return sum;
}

uint64_t orte_rmaps_base_spread(uint32_t num_nodes, const uint32_t *weights, const uint32_t *room,
                                uint64_t amount, uint32_t *counts)
{
    uint64_t total = 0;
    uint64_t high = 0;
    uint64_t low = 0;
    uint64_t left;

    for (uint32_t n = 0; n < num_nodes; ++n) {
        uint64_t w = NULL != weights ? weights[n] : 1;
        if (0 == w) {
            continue;
        }
        total += room[n];
        uint64_t rounds = (room[n] + w - 1) / w;
        high = rounds > high ? rounds : high;
    }
    if (amount >= total) {
        for (uint32_t n = 0; n < num_nodes; ++n) {
            if (NULL == weights || weights[n] > 0) {
                counts[n] += room[n];
            }
        }
        return amount - total;
    }
    /* Round robin one weight per node and round gives every node min(room, rounds * weight)
     * after full rounds: find the most full rounds that fit, then the last partial round goes
     * to the first nodes in order. Same result as going round by round, in O(nodes log). */
    while (low < high) {
        uint64_t mid = low + (high - low + 1) / 2;
        if (spread_sum(num_nodes, weights, room, mid) <= amount) {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    left = amount - spread_sum(num_nodes, weights, room, low);
    for (uint32_t n = 0; n < num_nodes; ++n) {
        uint64_t w = NULL != weights ? weights[n] : 1;
        uint64_t take = low * w < room[n] ? low * w : room[n];
        uint64_t more = room[n] - take < w ? room[n] - take : w;
        more = more < left ? more : left;
        left -= more;
        counts[n] += (uint32_t) (take + more);
    }
    return left;
}

int orte_rmaps_base_oversubscribe(orte_rmaps_ctx_t *ctx, orte_rmaps_plan_t *plan, uint64_t left)
{
    uint32_t num_nodes = ctx->job->num_nodes;
    const orte_rmaps_policy_t *policy = &plan->policy;
    uint64_t placed = 0;
    uint64_t free_slots = 0;
    bool earlier = false;
    char note[160] = "";
    uint32_t *room;

    if (0 == left) {
        return HERD_SUCCESS;
    }
    for (uint32_t n = 0; n < num_nodes; ++n) {
        uint32_t slots = ctx->job->nodes[n].slots;
        placed += plan->counts[n];
        free_slots += slots > ctx->nodes[n].used_slots ? slots - ctx->nodes[n].used_slots : 0;
        earlier = earlier || ctx->nodes[n].used_slots > 0;
    }
    if (policy->pe > 0) {
        snprintf(note, sizeof(note), "%s (enough for %llu processes with PE=%u)",
                 earlier ? " left by the earlier apps" : "", (unsigned long long) placed,
                 policy->pe);
    } else if (earlier) {
        snprintf(note, sizeof(note), " left by the earlier apps");
    }
    if (ORTE_RMAPS_OVERSUB_ALLOW != policy->oversubscribe) {
        return orte_rmaps_base_report(
            ORTE_RMAPS_OVERSUB_FORBID == policy->oversubscribe ? "oversubscribe-forbidden"
                                                               : "not-enough-slots",
            plan->app, (unsigned long long) (placed + left), num_nodes,
            1 == num_nodes ? "node has" : "nodes have", (unsigned long long) free_slots, note,
            (unsigned long long) placed);
    }
    room = calloc(num_nodes, sizeof(*room));
    if (NULL == room) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t n = 0; n < num_nodes; ++n) {
        uint32_t limit = orte_rmaps_base_limit(ctx, plan, n);
        room[n] = limit > plan->counts[n] ? limit - plan->counts[n] : 0;
    }
    left = orte_rmaps_base_spread(num_nodes, NULL, room, left, plan->counts);
    free(room);
    if (left > 0) {
        uint64_t fit = 0;
        for (uint32_t n = 0; n < num_nodes; ++n) {
            fit += plan->counts[n];
        }
        return orte_rmaps_base_report("max-slots-reached", plan->app,
                                      (unsigned long long) (fit + left), num_nodes,
                                      (unsigned long long) fit);
    }
    orte_rmaps_base_explain(ctx,
                            "app %u: oversubscribing: the processes beyond the free slots "
                            "are spread evenly over the nodes",
                            plan->app);
    return HERD_SUCCESS;
}

static int compare_node_names(const void *a, const void *b)
{
    const orte_rmaps_named_node_t *na = a;
    const orte_rmaps_named_node_t *nb = b;
    int c = strcmp(na->name, nb->name);

    return 0 != c ? c : (na->index < nb->index ? -1 : (na->index > nb->index));
}

int orte_rmaps_base_find_node(orte_rmaps_ctx_t *ctx, const char *name, uint32_t *node)
{
    uint32_t num_nodes = ctx->job->num_nodes;
    uint32_t low = 0;
    uint32_t high = num_nodes;

    if (NULL == ctx->sorted_nodes) {
        ctx->sorted_nodes = malloc((num_nodes + 1) * sizeof(*ctx->sorted_nodes));
        if (NULL == ctx->sorted_nodes) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        for (uint32_t n = 0; n < num_nodes; ++n) {
            ctx->sorted_nodes[n].name = ctx->job->nodes[n].name;
            ctx->sorted_nodes[n].index = n;
        }
        qsort(ctx->sorted_nodes, num_nodes, sizeof(*ctx->sorted_nodes), compare_node_names);
    }
    /* the first of equal names: the one earliest in node order */
    while (low < high) {
        uint32_t mid = low + (high - low) / 2;
        if (strcmp(ctx->sorted_nodes[mid].name, name) < 0) {
            low = mid + 1;
        } else {
            high = mid;
        }
    }
    if (low < num_nodes && 0 == strcmp(ctx->sorted_nodes[low].name, name)) {
        *node = ctx->sorted_nodes[low].index;
        return HERD_SUCCESS;
    }
    return HERD_ERR_NOT_FOUND;
}
