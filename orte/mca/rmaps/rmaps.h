/* SPDX-License-Identifier: BSD-3-Clause */
/* The rmaps framework: decides where each process of a job goes (node, binding, ranks), the same
 * way on every daemon, and hands each process over as soon as it is placed. */
#ifndef ORTE_MCA_RMAPS_H
#define ORTE_MCA_RMAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <hwloc.h>

#include "opal/mca/mca.h"
#include "orte/util/inventory.h"

#define OPAL_MCA_rmaps_INTERFACE_VERSION 1u

/* Design (docs/rmaps.md has the user's view and the defaults).
 *
 * Every session daemon of a job runs the mapper over the same inputs (the nodes in the same
 * order, their topologies, the app contexts) and must get the same map: the mapper depends on
 * nothing else (no time, addresses or hash order). A job is mapped app after app (MPMD: ranks
 * continue, and later apps continue on the slots earlier apps left free).
 *
 * Mapping one app has two steps. Planning (a component) decides how many processes each node
 * gets and checks every constraint, so an impossible map is reported before any process is
 * handed out. Emission (the base) then walks the plan in rank order and calls the emit callback
 * once per process: placement inside the node (round-robin over the mapping objects, or blocks
 * of N for ppr), binding and locality are computed on the fly, in O(1) per process, and nothing
 * is kept once the callback returns. Memory is O(nodes), plus O(processes on one node) when
 * ranking by an object inside nodes.
 *
 * The framework is multi-select: components are tried in priority order and a component that
 * does not handle the requested --map-by returns HERD_ERR_TAKE_NEXT. */

/* --map-by */
typedef enum orte_rmaps_mapping {
    ORTE_RMAPS_MAP_DEFAULT = 0, /* decided from the job size (see orte_rmaps_policy_resolve) */
    ORTE_RMAPS_MAP_SLOT,
    ORTE_RMAPS_MAP_NODE,
    ORTE_RMAPS_MAP_PACKAGE,
    ORTE_RMAPS_MAP_L3CACHE,
    ORTE_RMAPS_MAP_CORE,
    ORTE_RMAPS_MAP_HWTHREAD,
    ORTE_RMAPS_MAP_PPR,
    ORTE_RMAPS_MAP_SEQ,
} orte_rmaps_mapping_t;

/* --rank-by */
typedef enum orte_rmaps_ranking {
    ORTE_RMAPS_RANK_DEFAULT = 0, /* follows the mapping */
    ORTE_RMAPS_RANK_SLOT,
    ORTE_RMAPS_RANK_NODE,
    ORTE_RMAPS_RANK_PACKAGE,
    ORTE_RMAPS_RANK_L3CACHE,
    ORTE_RMAPS_RANK_CORE,
    ORTE_RMAPS_RANK_HWTHREAD,
} orte_rmaps_ranking_t;

/* --bind-to */
typedef enum orte_rmaps_binding {
    ORTE_RMAPS_BIND_DEFAULT = 0, /* follows the mapping and the job size */
    ORTE_RMAPS_BIND_NONE,
    ORTE_RMAPS_BIND_HWTHREAD,
    ORTE_RMAPS_BIND_CORE,
    ORTE_RMAPS_BIND_L3CACHE,
    ORTE_RMAPS_BIND_PACKAGE,
} orte_rmaps_binding_t;

typedef enum orte_rmaps_oversubscribe {
    ORTE_RMAPS_OVERSUB_DEFAULT = 0, /* refused, suggesting --oversubscribe */
    ORTE_RMAPS_OVERSUB_ALLOW,       /* OVERSUBSCRIBE: beyond slots, up to max_slots when set */
    ORTE_RMAPS_OVERSUB_FORBID,      /* NOOVERSUBSCRIBE */
} orte_rmaps_oversubscribe_t;

typedef struct orte_rmaps_policy {
    orte_rmaps_mapping_t mapping;
    uint32_t pe; /* PE=n: cpus (cores, or hwthreads when mapping by hwthread) per process; 0 */
    bool span;   /* SPAN: balance over the objects of all nodes, not node after node */
    orte_rmaps_oversubscribe_t oversubscribe;
    uint32_t ppr_count;              /* ppr:N:OBJ: N */
    orte_rmaps_mapping_t ppr_object; /* ppr:N:OBJ: PACKAGE, L3CACHE, CORE, HWTHREAD or NODE */
    /* seq: node names, one process each, in rank order (NULL-terminated, borrowed: the caller
     * keeps it alive while mapping). NULL: every node once, in node order. */
    const char *const *seq_hosts;
    orte_rmaps_ranking_t ranking;
    orte_rmaps_binding_t binding;
} orte_rmaps_policy_t;

/* One node of the job, in the order every daemon agrees on. The topology is borrowed; nodes
 * with the same topology signature may share one. */
typedef struct orte_rmaps_node {
    const char *name;
    uint32_t slots;
    uint32_t max_slots; /* 0: no limit when oversubscribing */
    hwloc_topology_t topology;
} orte_rmaps_node_t;

/* One app context: np 0 means as many as there are free slots (ppr, seq: as the policy says). */
typedef struct orte_rmaps_app {
    uint32_t np;
    orte_rmaps_policy_t policy;
} orte_rmaps_app_t;

/* Called once, after every app is planned and before the first emit: the job's size and how
 * many processes each node gets (num_nodes entries, valid during the call). A session daemon
 * sizes its job database and the procs' HERD_LOCAL_SIZE from it. Anything but HERD_SUCCESS
 * stops mapping and is returned by orte_rmaps_base_map_job(). */
typedef int (*orte_rmaps_planned_fn_t)(uint32_t num_procs, const uint32_t *procs_per_node,
                                       void *cbdata);

typedef struct orte_rmaps_job {
    const orte_rmaps_node_t *nodes;
    uint32_t num_nodes;
    const orte_rmaps_app_t *apps;
    uint32_t num_apps;
    bool explain;       /* print each decision (herdrun --explain) */
    FILE *explain_file; /* where; NULL: stdout */
    orte_rmaps_planned_fn_t planned; /* may be NULL; gets map_job's cbdata */
    /* When not NULL (num_apps * num_nodes entries): filled before planned is called with how
     * many processes of app a node n gets, at [a * num_nodes + n]. */
    uint32_t *app_node_counts;
} orte_rmaps_job_t;

/* One placed process. The strings are valid only during the emit callback (copy what you keep). */
typedef struct orte_rmaps_proc {
    uint32_t rank; /* in the job, across apps */
    uint32_t app;
    uint32_t node;       /* index into job->nodes */
    uint32_t local_rank; /* among the job's processes on the node, in rank order */
    uint32_t node_rank;  /* the same as local_rank while a node runs one job */
    bool bound;
    const char *cpuset;   /* the binding as a cpu list ("0-3,8"); the whole node when unbound */
    const char *locality; /* "pk0:co2" (package, L3, core, hwthread indexes); "node" unbound */
} orte_rmaps_proc_t;

/* Called once per process, in rank order. Anything but HERD_SUCCESS stops mapping and is
 * returned by orte_rmaps_base_map_job(). */
typedef int (*orte_rmaps_emit_fn_t)(const orte_rmaps_proc_t *proc, void *cbdata);

/* What a component works with while planning one app (orte/mca/rmaps/base/base.h). */
typedef struct orte_rmaps_ctx orte_rmaps_ctx_t;
typedef struct orte_rmaps_plan orte_rmaps_plan_t;

struct orte_rmaps_module {
    const char *name; /* the component's name */
    /* Plan plan->app (its policy resolved, in plan->policy) with the base's helpers: set each
     * node's process count, or report why it is impossible and return HERD_ERR_SILENT.
     * HERD_ERR_TAKE_NEXT when the mapping is not one this component does. */
    int (*plan)(orte_rmaps_ctx_t *ctx, orte_rmaps_plan_t *plan);
};
typedef struct orte_rmaps_module orte_rmaps_module_t;

OPAL_EXPORT extern opal_mca_framework_t orte_rmaps_base_framework;

/* Open the framework and keep every available component, by priority (rmaps_<comp>_priority;
 * HERD_MCA_rmaps=a,b or ^a chooses). HERD_ERR_NOT_FOUND when none is available. Opening an
 * open framework does nothing. */
OPAL_EXPORT int orte_rmaps_base_open(void);
OPAL_EXPORT void orte_rmaps_base_close(void);

/* Parse mpirun-style option values (each may be NULL: default). Bad values are reported (the
 * option, the bad part, the accepted values) and HERD_ERR_BAD_PARAM returned. *policy is set
 * only on success (seq_hosts NULL). */
OPAL_EXPORT int orte_rmaps_policy_parse(const char *map_by, const char *rank_by,
                                        const char *bind_to, orte_rmaps_policy_t *policy);
/* The policy with every default decided for a job of job_np processes (np 0 apps counted as
 * their free slots by the caller). See docs/rmaps.md for the rules. */
OPAL_EXPORT void orte_rmaps_policy_resolve(const orte_rmaps_policy_t *policy, uint32_t job_np,
                                           orte_rmaps_policy_t *resolved);
/* "--map-by core:PE=2 --rank-by core --bind-to core" (defaults shown as "default"). */
OPAL_EXPORT void orte_rmaps_policy_string(const orte_rmaps_policy_t *policy, char *text,
                                          size_t size);

/* Map the job, calling emit for each process in rank order. Every impossible map is detected
 * (and reported on stderr, saying which constraint blocked it and what would work) before
 * anything is emitted: HERD_ERR_SILENT then. *num_procs set only on success. The framework must
 * be open. */
OPAL_EXPORT int orte_rmaps_base_map_job(const orte_rmaps_job_t *job, orte_rmaps_emit_fn_t emit,
                                        void *cbdata, uint32_t *num_procs);

/* A whole map kept in memory, for --display-map and tests (large jobs should stream). */
typedef struct orte_rmaps_map {
    orte_rmaps_proc_t *procs; /* by rank; strings owned */
    uint32_t num_procs;
} orte_rmaps_map_t;

/* Map the job into *map (set only on success; free with orte_rmaps_map_free). */
OPAL_EXPORT int orte_rmaps_base_map_collect(const orte_rmaps_job_t *job, orte_rmaps_map_t **map);
OPAL_EXPORT void orte_rmaps_map_free(orte_rmaps_map_t *map);

/* Something to add at the end of a process's line (herdrun -v: its endpoints): text for proc. */
typedef void (*orte_rmaps_annotate_fn_t)(const orte_rmaps_proc_t *proc, char *text, size_t size,
                                         void *arg);
/* The same as orte_rmaps_display_map, each process's line ending with what annotate says. */
OPAL_EXPORT void orte_rmaps_display_map_annotated(FILE *out, const orte_rmaps_job_t *job,
                                                  const orte_rmaps_map_t *map,
                                                  orte_rmaps_annotate_fn_t annotate, void *arg);
/* --display-map: a table per node of its processes. */
OPAL_EXPORT void orte_rmaps_display_map(FILE *out, const orte_rmaps_job_t *job,
                                        const orte_rmaps_map_t *map);
/* --report-bindings: one line for a process, e.g.
 * "[n1] rank 3 (app 0, local rank 3) bound to cpus 6-7 (pk0:co3)". */
OPAL_EXPORT void orte_rmaps_binding_line(const char *node_name, const orte_rmaps_proc_t *proc,
                                         char *text, size_t size);

/* The topology an inventory describes: its XML when it carries one, else its synthetic
 * description (a copy of what an earlier call in this process, or before its fork, loaded from
 * the same description). *topology (destroy with hwloc_topology_destroy) set only on success;
 * HERD_ERR_NOT_FOUND when the inventory has neither, HERD_ERR_BAD_PARAM when it does not load. */
OPAL_EXPORT int orte_rmaps_topology_load(const orte_inventory_t *inventory,
                                         hwloc_topology_t *topology);

/* Names of the policy values, as the options spell them ("package", "ppr", ...). */
OPAL_EXPORT const char *orte_rmaps_mapping_name(orte_rmaps_mapping_t mapping);
OPAL_EXPORT const char *orte_rmaps_ranking_name(orte_rmaps_ranking_t ranking);
OPAL_EXPORT const char *orte_rmaps_binding_name(orte_rmaps_binding_t binding);

#endif /* ORTE_MCA_RMAPS_H */
