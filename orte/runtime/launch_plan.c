/* SPDX-License-Identifier: BSD-3-Clause */
/* Planning on herdrun's side: the candidate nodes and the topologies to ship with the launch,
 * then the map (which candidates get processes, an impossible map reported before anything
 * starts, --display-map), and the plan of each spawn. The session daemons compute the real map
 * themselves, from the same inputs. */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/argv.h"
#include "opal/util/show_help.h"
#include "orte/runtime/endpoints.h"
#include "orte/runtime/launch_internal.h"

/* What the planning step of the mapper found: processes per node, and their total. */
typedef struct {
    uint32_t *per_node;
    uint32_t num_nodes;
    uint32_t total;
} plan_counts_t;

static int plan_counts(uint32_t num_procs, const uint32_t *per_node, void *cbdata)
{
    plan_counts_t *c = cbdata;
    c->total = num_procs;
    memcpy(c->per_node, per_node, c->num_nodes * sizeof(*per_node));
    return HERD_ERR_TAKE_NEXT;
}

static int never_emitted(const orte_rmaps_proc_t *proc, void *cbdata)
{
    return HERD_ERR_BAD_PARAM;
}

/* The nodes the job may use: every DVM node, or those --host names (each must be one). */
static int choose_candidates(launch_job_t *job)
{
    const orte_allocation_t *alloc = job->plan.alloc;
    orte_job_launch_t *launch = &job->plan.launch;
    uint32_t n = alloc->num_nodes;
    launch->node_index = calloc(n, sizeof(uint32_t));
    launch->slots = calloc(n, sizeof(uint32_t));
    launch->max_slots = calloc(n, sizeof(uint32_t));
    /* slot 0 on every node: the only job of herdrun's own DVM (a persistent DVM's root
     * chooses) */
    launch->session_slot = calloc(n, sizeof(uint32_t));
    job->plan.candidate_names = calloc(n, sizeof(char *));
    if (NULL == launch->node_index || NULL == launch->slots || NULL == launch->max_slots ||
        NULL == launch->session_slot || NULL == job->plan.candidate_names) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (char *const *h = job->spec->hosts; NULL != h && NULL != *h; ++h) {
        uint32_t i = 0;
        while (i < n && 0 != strcmp(alloc->nodes[i].name, *h)) {
            ++i;
        }
        if (i == n) {
            opal_show_help(LAUNCH_HELP_FILE, "unknown-host", false, *h);
            return HERD_ERR_SILENT;
        }
        if (NULL != job->backend->node_up && !job->backend->node_up(job, i)) {
            opal_show_help(LAUNCH_HELP_FILE, "host-down", false, *h);
            return HERD_ERR_SILENT;
        }
    }
    uint64_t universe = 0;
    for (uint32_t i = 0; i < n; ++i) {
        /* MPI_UNIVERSE_SIZE: every slot of the DVM, whatever --host says, as mpirun gives it */
        if (NULL == job->backend->node_up || job->backend->node_up(job, i)) {
            universe += alloc->nodes[i].slots;
        }
    }
    launch->universe_size = universe > UINT32_MAX ? UINT32_MAX : (uint32_t) universe;
    for (uint32_t i = 0; i < n; ++i) {
        if (NULL != job->spec->hosts &&
            opal_argv_find(job->spec->hosts, alloc->nodes[i].name) < 0) {
            continue;
        }
        /* a node whose daemon was lost takes no job */
        if (NULL != job->backend->node_up && !job->backend->node_up(job, i)) {
            continue;
        }
        uint32_t c = launch->num_candidates++;
        launch->node_index[c] = i;
        launch->slots[c] = alloc->nodes[i].slots;
        launch->max_slots[c] = alloc->nodes[i].max_slots;
        job->plan.candidate_names[c] = alloc->nodes[i].name;
    }
    return HERD_SUCCESS;
}

/* The XML of every real topology among the candidates, when they do not all share one (a
 * session daemon knows its own node's); plan.all_pairs gets every one of the DVM's. */
static int topology_pairs(launch_job_t *job)
{
    orte_job_launch_t *launch = &job->plan.launch;
    const char *first_real = NULL;
    bool several = false;
    for (uint32_t c = 0; c < launch->num_candidates; ++c) {
        const orte_inventory_t *inv = job->backend->inventory(job, launch->node_index[c]);
        if (NULL != inv->synthetic) {
            continue;
        }
        if (NULL == first_real) {
            first_real = inv->signature;
        } else if (0 != strcmp(first_real, inv->signature)) {
            several = true;
        }
    }
    /* the root has one XML per signature, on the first node that reported it */
    const orte_allocation_t *alloc = job->plan.alloc;
    for (uint32_t i = 0; i < alloc->num_nodes; ++i) {
        const orte_inventory_t *inv = job->backend->inventory(job, i);
        if (NULL == inv->xml || NULL != inv->synthetic) {
            continue;
        }
        if (HERD_SUCCESS != opal_argv_append(&job->plan.all_pairs, inv->signature) ||
            HERD_SUCCESS != opal_argv_append(&job->plan.all_pairs, inv->xml)) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        if (several && (HERD_SUCCESS != opal_argv_append(&launch->xml_pairs, inv->signature) ||
                        HERD_SUCCESS != opal_argv_append(&launch->xml_pairs, inv->xml))) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    return HERD_SUCCESS;
}

int launch_plan_candidates(launch_job_t *job)
{
    int rc;
    if (HERD_SUCCESS != (rc = choose_candidates(job)) ||
        HERD_SUCCESS != (rc = topology_pairs(job))) {
        return rc;
    }
    uint32_t num = job->plan.launch.num_candidates;
    job->plan.inventories = calloc(num, sizeof(*job->plan.inventories));
    if (NULL == job->plan.inventories) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t c = 0; c < num; ++c) {
        job->plan.inventories[c] =
            (orte_inventory_t *) job->backend->inventory(job, job->plan.launch.node_index[c]);
    }
    return HERD_SUCCESS;
}

/* --display-map -v: each process's RM-assigned endpoints, as its session daemons will write
 * them. */
static void annotate_endpoints(const orte_rmaps_proc_t *proc, char *text, size_t size, void *arg)
{
    const orte_endpoints_plan_t *plan = arg;
    size_t used = 0;
    for (uint32_t f = 0; f < plan->num_fabrics && used < size; ++f) {
        char endpoint[96];
        if (!plan->fabrics[f].assigned) {
            continue;
        }
        orte_endpoints_format(plan, f, proc->node, proc->node_rank, endpoint, sizeof(endpoint));
        int n = snprintf(text + used, size - used, "%s%s %s", 0 == used ? "" : ", ",
                         plan->fabrics[f].name, endpoint);
        used += (n > 0) ? (size_t) n : 0;
    }
}

/* The map, and with -v the endpoints of the job: which path each fabric takes, every process's
 * endpoints. The plan is the session daemons' own computation over the same inventories. */
static int display_map(launch_job_t *job, const orte_rmaps_job_t *mjob, const orte_rmaps_map_t *map,
                       const uint32_t *per_node)
{
    if (NULL == job->options || job->options->verbose <= 0 || job->backend->dvm_chooses_slots) {
        orte_rmaps_display_map(stdout, mjob, map);
        if (NULL != job->options && job->options->verbose > 0) {
            /* the ports depend on the session slots, which the DVM gives at the job's start */
            printf("endpoints: decided by the DVM when it gives the job its session slots\n");
        }
        return HERD_SUCCESS;
    }
    orte_endpoints_job_t ejob = {.inventories = job->plan.inventories,
                                 .per_node = per_node,
                                 .num_nodes = mjob->num_nodes,
                                 .session_slot = job->plan.launch.session_slot};
    orte_endpoints_plan_t plan;
    int rc = orte_endpoints_plan_build(&ejob, &plan);
    if (HERD_SUCCESS == rc) {
        orte_rmaps_display_map_annotated(stdout, mjob, map, annotate_endpoints, &plan);
        orte_endpoints_print(stdout, &plan, &ejob);
        orte_endpoints_plan_destruct(&plan);
    }
    return rc;
}

/* Map the job with the mapper's planning step (only counts), or in full for --display-map. */
static int count_procs(launch_job_t *job, orte_rmaps_job_t *mjob, plan_counts_t *counts)
{
    uint32_t num_procs = 0;
    int rc;
    if (job->spec->flags & ORTE_JOB_FLAG_DISPLAY_MAP) {
        orte_rmaps_map_t *map = NULL;
        rc = orte_rmaps_base_map_collect(mjob, &map);
        if (HERD_SUCCESS == rc) {
            for (uint32_t i = 0; i < map->num_procs; ++i) {
                counts->per_node[map->procs[i].node]++;
            }
            counts->total = map->num_procs;
            rc = display_map(job, mjob, map, counts->per_node);
            fflush(stdout);
            orte_rmaps_map_free(map);
        }
        return rc;
    }
    mjob->planned = plan_counts;
    rc = orte_rmaps_base_map_job(mjob, never_emitted, counts, &num_procs);
    return HERD_ERR_TAKE_NEXT == rc ? HERD_SUCCESS : rc;
}

/* Which candidates get processes (and an impossible map reported now, before anything runs). */
static int plan_job(launch_job_t *job)
{
    orte_jobmap_nodes_t *nodes = &job->plan.nodes;
    orte_job_launch_t *launch = &job->plan.launch;
    orte_rmaps_job_t mjob = {.nodes = nodes->nodes,
                             .num_nodes = nodes->num,
                             .apps = job->plan.apps,
                             .num_apps = job->spec->num_apps,
                             .explain = 0 != (job->spec->flags & ORTE_JOB_FLAG_EXPLAIN)};
    plan_counts_t counts = {.per_node = calloc(nodes->num, sizeof(uint32_t)),
                            .num_nodes = nodes->num};
    if (NULL == counts.per_node) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    int rc = count_procs(job, &mjob, &counts);
    if (HERD_SUCCESS == rc) {
        launch->participants = calloc(nodes->num, sizeof(uint32_t));
        if (NULL == launch->participants) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    for (uint32_t n = 0; HERD_SUCCESS == rc && n < nodes->num; ++n) {
        if (counts.per_node[n] > 0) {
            launch->participants[launch->num_participants++] = n;
        }
    }
    if (HERD_SUCCESS == rc && 0 == launch->num_participants) {
        opal_show_help(LAUNCH_HELP_FILE, "no-processes", false);
        rc = HERD_ERR_SILENT;
    }
    if (HERD_SUCCESS == rc) {
        /* what a spawn plans with */
        job->spawns.used = counts.per_node;
        job->plan.num_procs = counts.total;
        job->spawns.next_id = counts.total;
        return rc;
    }
    free(counts.per_node);
    return rc;
}

int launch_plan_map(launch_job_t *job)
{
    const orte_job_spec_t *spec = job->spec;
    int rc;
    if (HERD_SUCCESS != (rc = orte_jobmap_nodes_build(job->plan.inventories, job->plan.launch.slots,
                                                      job->plan.launch.max_slots,
                                                      job->plan.launch.num_candidates,
                                                      job->plan.all_pairs, &job->plan.nodes)) ||
        HERD_SUCCESS != (rc = orte_jobmap_apps(spec, &job->plan.apps)) ||
        HERD_SUCCESS != (rc = plan_job(job))) {
        return rc;
    }
    if (spec->stdin_target >= 0 && (uint32_t) spec->stdin_target >= job->plan.num_procs) {
        opal_show_help(LAUNCH_HELP_FILE, "bad-stdin-rank", false, (int) spec->stdin_target,
                       job->plan.num_procs, job->plan.num_procs - 1);
        return HERD_ERR_SILENT;
    }
    return HERD_SUCCESS;
}

int launch_plan_spawn(launch_job_t *job, const orte_job_spec_t *spec, uint32_t *per_part,
                      uint32_t *total)
{
    uint32_t np = job->plan.launch.num_participants;
    orte_rmaps_node_t *list = NULL;
    orte_rmaps_app_t *apps = NULL;
    uint32_t n = 0;
    int rc = orte_jobmap_spawn_nodes(&job->plan.nodes, job->plan.launch.participants, np,
                                     job->spawns.used, &list);
    if (HERD_SUCCESS == rc) {
        rc = orte_jobmap_apps(spec, &apps);
    }
    if (HERD_SUCCESS == rc) {
        orte_rmaps_job_t mjob = {.nodes = list,
                                 .num_nodes = np,
                                 .apps = apps,
                                 .num_apps = spec->num_apps,
                                 .planned = plan_counts};
        plan_counts_t counts = {.per_node = per_part, .num_nodes = np};
        rc = orte_rmaps_base_map_job(&mjob, never_emitted, &counts, &n);
        if (HERD_ERR_TAKE_NEXT == rc) {
            rc = HERD_SUCCESS;
            *total = counts.total;
        }
    }
    free(list);
    free(apps);
    return rc;
}

void launch_plan_release(launch_job_t *job)
{
    orte_job_launch_t *launch = &job->plan.launch;
    orte_jobmap_nodes_destruct(&job->plan.nodes);
    free(job->plan.apps);
    free(job->plan.inventories);
    opal_argv_free(job->plan.all_pairs);
    free(job->plan.candidate_names);
    free(launch->node_index);
    free(launch->slots);
    free(launch->max_slots);
    free(launch->participants);
    free(launch->session_slot);
    opal_argv_free(launch->xml_pairs);
}
