/* SPDX-License-Identifier: BSD-3-Clause */
/* The session daemon's map: it maps the whole job itself (the same deterministic mapper on every
 * node), writes every process into the node's job database with its endpoints, and takes this
 * node's processes as they come; and the namespaces it serves (the job, then its spawns). */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "opal/util/argv.h"
#include "opal/util/show_help.h"
#include "orte/runtime/session_internal.h"

/* ------------------------------------------------------------------------------------------ */
/* namespaces: the job (0) and what it spawned */

orte_session_nsjob_t *orte_session_nsjob_new(orte_session_t *s, uint32_t index)
{
    if (index != s->map.num_jobs) {
        return NULL; /* herdrun numbers them in order */
    }
    orte_session_nsjob_t **grown = realloc(s->map.jobs, (index + 1) * sizeof(*grown));
    if (NULL == grown) {
        return NULL;
    }
    s->map.jobs = grown;
    orte_session_nsjob_t *nsj = calloc(1, sizeof(*nsj));
    if (NULL == nsj) {
        return NULL;
    }
    nsj->index = index;
    s->map.jobs[index] = nsj;
    s->map.num_jobs = index + 1;
    return nsj;
}

void orte_session_nsjob_free(orte_session_nsjob_t *nsj)
{
    if (NULL == nsj) {
        return;
    }
    for (uint32_t i = 0; i < nsj->num_pending; ++i) {
        free(nsj->pending[i].cpuset);
    }
    free(nsj->pending);
    for (uint32_t a = 0; NULL != nsj->app_env && a < nsj->spec->num_apps; ++a) {
        opal_argv_free(nsj->app_env[a]);
    }
    free(nsj->app_env);
    if (nsj->own_db) {
        opal_jobdb_destroy(nsj->db);
    }
    orte_job_spec_free(nsj->own_spec);
    free(nsj->node_names);
    free(nsj->app_programs);
    free(nsj->node_vpid);
    free(nsj->daemons);
    free(nsj->local_ranks);
    free(nsj->per_node);
    free(nsj);
}

/* The segments local processes may own (btl sm's receive rings, docs/btl.md): a process removes
 * its own at herd_finalize, and these names are computable, so one killed first leaves nothing
 * once its session daemon is done. Nothing to do for a name that is not there. */
static void unlink_rank_segments(const orte_session_t *s, const orte_session_nsjob_t *nsj)
{
    for (uint32_t i = 0; NULL != nsj && NULL != nsj->local_ranks && i < nsj->num_local; ++i) {
        char name[256];
        if (HERD_SUCCESS == opal_jobdb_rank_segment_name(nsj->spec->jobid, s->node_name, "sm",
                                                         nsj->local_ranks[i], name, sizeof(name))) {
            shm_unlink(name);
        }
    }
}

orte_session_nsjob_t *orte_session_nsjob_of(orte_session_t *s, uint32_t id)
{
    for (uint32_t k = s->map.num_jobs; k > 0; --k) {
        if (id >= s->map.jobs[k - 1]->offset) {
            return s->map.jobs[k - 1];
        }
    }
    return NULL;
}

void orte_session_map_close_db(orte_session_t *s)
{
    opal_jobdb_destroy(s->map.db);
    orte_endpoints_plan_destruct(&s->map.endpoints);
    free(s->map.ports);
}

void orte_session_map_release(orte_session_t *s)
{
    for (uint32_t k = 0; k < s->map.num_jobs; ++k) {
        unlink_rank_segments(s, s->map.jobs[k]);
        orte_session_nsjob_free(s->map.jobs[k]);
    }
    free(s->map.jobs);
    free(s->map.used);
}

/* ------------------------------------------------------------------------------------------ */
/* mapping the job */

static int planned_cb(uint32_t num_procs, const uint32_t *per_node, void *cbdata)
{
    orte_session_t *s = cbdata;
    orte_session_map_t *map = &s->map;
    orte_session_nsjob_t *nsj = map->jobs[0];
    nsj->num_procs = num_procs;
    nsj->local_size = per_node[s->my_candidate];
    /* what a spawn maps around: the processes on each candidate */
    for (uint32_t c = 0; c < s->nodes.num; ++c) {
        map->used[c] = per_node[c];
    }
    int rc = orte_session_records_reserve(s, nsj->local_size);
    /* every node's process count is known now: the endpoints of every process are decided
     * before the first is emitted, the same way on every node */
    orte_endpoints_job_t ejob = {.inventories = s->inventories,
                                 .per_node = per_node,
                                 .num_nodes = s->nodes.num,
                                 .session_slot = s->launch->session_slot};
    opal_jobdb_layout_t layout = {0};
    if (HERD_SUCCESS == rc) {
        rc = orte_endpoints_plan_build(&ejob, &map->endpoints);
    }
    if (HERD_SUCCESS == rc && map->endpoints.num_fabrics > 0) {
        orte_endpoints_layout(&map->endpoints, &layout);
        map->ports = calloc(map->endpoints.num_fabrics, sizeof(*map->ports));
        rc = NULL == map->ports ? HERD_ERR_OUT_OF_RESOURCE : HERD_SUCCESS;
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_jobdb_create(s->spec->jobid, s->node_name, num_procs, s->nodes.num, &layout,
                               &map->db);
    }
    for (uint32_t n = 0; HERD_SUCCESS == rc && n < s->nodes.num; ++n) {
        rc = opal_jobdb_set_node(map->db, n, s->nodes.nodes[n].name);
    }
    if (HERD_SUCCESS == rc) {
        rc = orte_endpoints_write(&map->endpoints, map->db);
    }
    nsj->db = map->db;
    return rc;
}

/* --report-bindings: rmaps' line, and what did not apply or where it comes from. */
static void report_binding(orte_session_t *s, const orte_session_nsjob_t *nsj,
                           const orte_rmaps_proc_t *proc)
{
    char line[512];
    orte_rmaps_binding_line(s->node_name, proc, line, sizeof(line));
    bool simulated = proc->bound && s->nodes.simulated[s->my_candidate];
    bool spawned = nsj->index > 0;
    const char *topic = simulated ? (spawned ? "binding-simulated-spawned" : "binding-simulated")
                                  : (spawned ? "binding-spawned" : "binding");
    opal_show_help(ORTE_SESSION_HELP, topic, false, line);
}

/* One of this node's processes was mapped: its record, then started now (no wireup: while the
 * mapper goes on) or once the map is complete (a wireup registers the whole namespace, PMIx with
 * every process's place, before any of its processes may connect). */
int orte_session_map_take_local(orte_session_t *s, orte_session_nsjob_t *nsj,
                                const orte_rmaps_proc_t *proc, uint32_t node_rank)
{
    orte_proc_record_t *r = &s->local.records[s->local.num_records++];
    memset(r, 0, sizeof(*r));
    r->rank = nsj->offset + proc->rank;
    r->node = s->my_candidate;
    r->app = proc->app;
    if (s->spec->flags & ORTE_JOB_FLAG_REPORT_BINDINGS) {
        report_binding(s, nsj, proc);
    }
    orte_session_local_proc_t lp = {.rank = proc->rank,
                                    .app = proc->app,
                                    .local_rank = proc->local_rank,
                                    .node_rank = node_rank,
                                    .bound = proc->bound,
                                    .cpuset = proc->bound ? (char *) proc->cpuset : NULL};
    if (NULL == s->wireup.modules && 0 == nsj->index) {
        orte_session_procs_start_one(s, nsj, r, &lp);
        return HERD_SUCCESS;
    }
    if (NULL == nsj->pending) {
        nsj->pending = calloc(nsj->local_size > 0 ? nsj->local_size : 1, sizeof(*nsj->pending));
        if (NULL == nsj->pending) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    if (nsj->num_pending >= nsj->local_size) {
        return HERD_ERR_BAD_PARAM;
    }
    if (NULL != lp.cpuset && NULL == (lp.cpuset = strdup(lp.cpuset))) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    nsj->pending[nsj->num_pending++] = lp;
    return HERD_SUCCESS;
}

opal_jobdb_proc_t orte_session_map_db_entry(const orte_rmaps_proc_t *proc, uint32_t node_rank)
{
    return (opal_jobdb_proc_t){
        .rank = proc->rank,
        .app = proc->app,
        .node = proc->node,
        .local_rank = proc->local_rank,
        .node_rank = node_rank,
        .bound = proc->bound,
        .cpuset = proc->cpuset,
        .locality = proc->locality,
    };
}

static int emit_cb(const orte_rmaps_proc_t *proc, void *cbdata)
{
    orte_session_t *s = cbdata;
    opal_jobdb_proc_t entry = orte_session_map_db_entry(proc, proc->node_rank);
    for (uint32_t f = 0; f < s->map.endpoints.num_fabrics; ++f) {
        s->map.ports[f] = orte_endpoints_port(&s->map.endpoints, f, proc->node, proc->node_rank);
    }
    entry.ports = s->map.ports;
    int rc = opal_jobdb_put_proc(s->map.db, &entry);
    if (HERD_SUCCESS != rc || proc->node != s->my_candidate) {
        return rc;
    }
    return orte_session_map_take_local(s, s->map.jobs[0], proc, proc->node_rank);
}

static int plan_only(uint32_t num_procs, const uint32_t *per_node, void *cbdata)
{
    return HERD_ERR_TAKE_NEXT; /* the counts are all we wanted */
}

/* Which apps have processes on this node (planning only: O(nodes)). NULL when planning fails:
 * then every app is checked. */
bool *orte_session_map_local_apps(orte_session_t *s)
{
    uint32_t napps = s->spec->num_apps, nnodes = s->nodes.num;
    uint32_t *counts = calloc((size_t) napps * nnodes, sizeof(*counts));
    bool *local = calloc(napps, sizeof(*local));
    uint32_t num_procs = 0;
    if (NULL == counts || NULL == local) {
        free(counts);
        free(local);
        return NULL;
    }
    orte_rmaps_job_t job = {.nodes = s->nodes.nodes,
                            .num_nodes = nnodes,
                            .apps = s->apps,
                            .num_apps = napps,
                            .planned = plan_only,
                            .app_node_counts = counts};
    int rc = orte_rmaps_base_map_job(&job, emit_cb, s, &num_procs);
    for (uint32_t a = 0; a < napps; ++a) {
        local[a] = HERD_ERR_TAKE_NEXT != rc || counts[(size_t) a * nnodes + s->my_candidate] > 0;
    }
    free(counts);
    return local;
}

/* This node's failure to start its share, as a record for the shepherd. */
static void send_node_start_failed(orte_session_t *s)
{
    orte_proc_record_t record = {.rank = UINT32_MAX,
                                 .node = s->my_candidate,
                                 .state = ORTE_PROC_START_FAILED,
                                 .exit_code = 1};
    orte_session_send_record(s, ORTE_SESSION_SHEPHERD, ORTE_SESSION_TAG_FAILURE, false, 0, &record);
}

void orte_session_map_job(orte_session_t *s)
{
    orte_rmaps_job_t job = {
        .nodes = s->nodes.nodes,
        .num_nodes = s->nodes.num,
        .apps = s->apps,
        .num_apps = s->spec->num_apps,
        .planned = planned_cb,
    };
    orte_session_nsjob_t *nsj = s->map.jobs[0];
    uint32_t num_procs = 0;
    uint32_t before = s->local.num_records;
    if (s->wireup.failed) {
        s->local.aborting = true; /* mapped (the database is made) but nothing is started */
    }
    int rc = orte_rmaps_base_map_job(&job, emit_cb, s, &num_procs);
    if (HERD_SUCCESS == rc && NULL != s->map.db) {
        rc = opal_jobdb_finish(s->map.db);
    }
    nsj->first_record = before;
    nsj->num_local = s->local.num_records - before;
    nsj->num_nodes = s->nodes.num;
    nsj->per_node = malloc((s->nodes.num > 0 ? s->nodes.num : 1) * sizeof(*nsj->per_node));
    if (NULL == nsj->per_node) {
        rc = HERD_SUCCESS == rc ? HERD_ERR_OUT_OF_RESOURCE : rc;
    } else {
        memcpy(nsj->per_node, s->map.used, s->nodes.num * sizeof(*nsj->per_node));
    }
    orte_session_nspace_register_and_start(s, nsj, rc, NULL);
    s->map.done = true;
    orte_session_io_all_handed_over(s);
    if (s->wireup.failed && HERD_SUCCESS == rc) {
        send_node_start_failed(s);
    }
    if (HERD_SUCCESS != rc) {
        opal_show_help(ORTE_SESSION_HELP, "mapping-failed", false, s->node_name, s->spec->jobid,
                       opal_strerror(rc));
        send_node_start_failed(s);
        s->local.aborting = true;
        if (NULL != s->local.procs) {
            s->local.odls->kill_all(s->local.procs, 0);
        }
    }
    orte_session_ptable_started(s);
    orte_session_procs_finish(s);
}
