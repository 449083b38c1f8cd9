/* SPDX-License-Identifier: BSD-3-Clause */
/* What the rmaps base shares with its components: the mapping context, the plan of one app, and
 * the helpers that count capacity, spread processes and report impossible maps. */
#ifndef ORTE_MCA_RMAPS_BASE_H
#define ORTE_MCA_RMAPS_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "orte/mca/rmaps/rmaps.h"

#define ORTE_RMAPS_BASE_HELP_FILE "help-rmaps-base.txt"

/* The levels of a node the mapper works with, outermost first. */
typedef enum orte_rmaps_level {
    ORTE_RMAPS_LEVEL_MACHINE = 0,
    ORTE_RMAPS_LEVEL_PACKAGE,
    ORTE_RMAPS_LEVEL_L3CACHE,
    ORTE_RMAPS_LEVEL_CORE,
    ORTE_RMAPS_LEVEL_HWTHREAD,
    ORTE_RMAPS_LEVEL_COUNT
} orte_rmaps_level_t;

/* What the base knows about a node while mapping a job. */
typedef struct orte_rmaps_node_state {
    /* hwloc depth of each level, -1 when the node has none (no core level: hwthreads stand in;
     * no package level: the machine does) */
    int depth[ORTE_RMAPS_LEVEL_COUNT];
    uint32_t num[ORTE_RMAPS_LEVEL_COUNT]; /* objects of each level */
    uint32_t used_slots;                  /* planning: slots taken by the apps planned so far */
    uint32_t placed;                      /* planning: processes of the apps planned so far */
    uint32_t emitted; /* emission: the job's processes handed out so far (next local rank) */
    char *all_cpus;   /* the node's cpu list, for unbound processes */
} orte_rmaps_node_state_t;

/* How one app is mapped: a component fills counts; the base emits from it. */
struct orte_rmaps_plan {
    uint32_t app;
    uint32_t np;                   /* as requested (0: decided by the component) */
    orte_rmaps_policy_t policy;    /* resolved: no DEFAULT left but oversubscribe */
    const char *component;         /* set by the base */
    orte_rmaps_level_t map_level;  /* the objects processes are spread over inside a node */
    orte_rmaps_level_t unit_level; /* what PE counts: cores, or hwthreads */
    uint32_t block;   /* > 0: that many consecutive processes per object (ppr); 0: round robin */
    uint32_t *counts; /* per node: processes of this app (zeroed by the base) */
    uint32_t *first;  /* per node: placement index of the app's first process (set by the base) */
    uint32_t total;   /* processes of this app (set by orte_rmaps_base_plan_done) */
};

/* A node name and its index, for looking nodes up by name (seq). */
typedef struct orte_rmaps_named_node {
    const char *name;
    uint32_t index;
} orte_rmaps_named_node_t;

struct orte_rmaps_ctx {
    const orte_rmaps_job_t *job;
    orte_rmaps_node_state_t *nodes;
    FILE *explain;                         /* NULL unless explaining */
    orte_rmaps_named_node_t *sorted_nodes; /* by name, then index (built on first use) */
};

/* Printing a decision when explaining (a line, "[rmaps] " prepended, newline appended). */
OPAL_EXPORT void orte_rmaps_base_explain(const orte_rmaps_ctx_t *ctx, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* The level a --map-by, --bind-to, --rank-by or ppr object uses. */
OPAL_EXPORT orte_rmaps_level_t orte_rmaps_base_mapping_level(orte_rmaps_mapping_t mapping);
OPAL_EXPORT const char *orte_rmaps_base_level_name(orte_rmaps_level_t level);

/* Sets plan->map_level and unit_level for mapping over objects of `mapping` with plan->policy.pe,
 * and checks every node has that level and that PE fits in one of its objects; reports
 * (HERD_ERR_SILENT) otherwise. */
OPAL_EXPORT int orte_rmaps_base_set_level(orte_rmaps_ctx_t *ctx, orte_rmaps_plan_t *plan,
                                          orte_rmaps_mapping_t mapping);

/* Processes node can still take for plan (free slots / PE), without oversubscribing. */
OPAL_EXPORT uint32_t orte_rmaps_base_free(const orte_rmaps_ctx_t *ctx,
                                          const orte_rmaps_plan_t *plan, uint32_t node);
/* Processes node can take at most when oversubscribing (UINT32_MAX without max_slots). */
OPAL_EXPORT uint32_t orte_rmaps_base_limit(const orte_rmaps_ctx_t *ctx,
                                           const orte_rmaps_plan_t *plan, uint32_t node);

/* Adds up to amount processes to counts, round robin over the nodes (weights[n] per node and
 * round, 1 when weights is NULL), never beyond room[n] in total; deterministic and O(nodes log).
 * Returns what did not fit. */
OPAL_EXPORT uint64_t orte_rmaps_base_spread(uint32_t num_nodes, const uint32_t *weights,
                                            const uint32_t *room, uint64_t amount,
                                            uint32_t *counts);

/* What is left over beyond the free slots: spread evenly when the policy allows oversubscribing
 * (up to max_slots), else reported naming the constraint. HERD_SUCCESS, or HERD_ERR_SILENT. */
OPAL_EXPORT int orte_rmaps_base_oversubscribe(orte_rmaps_ctx_t *ctx, orte_rmaps_plan_t *plan,
                                              uint64_t left);

/* Reports a help topic of the base help file, returns HERD_ERR_SILENT. */
OPAL_EXPORT int orte_rmaps_base_report(const char *topic, ...);

/* Index of the node named name, via the sorted index; HERD_ERR_NOT_FOUND. */
OPAL_EXPORT int orte_rmaps_base_find_node(orte_rmaps_ctx_t *ctx, const char *name, uint32_t *node);

/* Internal to the base: emitting one planned app, and seq's emission order. */
int orte_rmaps_base_emit_plan(orte_rmaps_ctx_t *ctx, const orte_rmaps_plan_t *plan,
                              uint32_t *next_rank, orte_rmaps_emit_fn_t emit, void *cbdata);
int orte_rmaps_base_prepare_nodes(orte_rmaps_ctx_t *ctx);
void orte_rmaps_base_release_nodes(orte_rmaps_ctx_t *ctx);

#endif /* ORTE_MCA_RMAPS_BASE_H */
