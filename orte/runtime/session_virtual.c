/* SPDX-License-Identifier: BSD-3-Clause */
/* A virtual session: what a session daemon computes when it maps its job (session.c's node table
 * and apps, session_map.c's mapper run), done in the node daemon's own process for a job that is
 * mapped everywhere and launched nowhere. Only the map is the session daemon's: no job database,
 * endpoints, overlay or processes. */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "orte/runtime/jobmap.h"
#include "orte/runtime/session_virtual.h"

typedef struct virtual_map {
    uint32_t my_candidate;
    dvm_map_report_t *report;
} virtual_map_t;

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

/* Every process of the job comes here, as to a session daemon's emit callback: ours are
 * counted. */
static int virtual_emit(const orte_rmaps_proc_t *proc, void *cbdata)
{
    virtual_map_t *vm = cbdata;
    if (proc->node == vm->my_candidate) {
        dvm_map_report_add(vm->report, proc);
    }
    return HERD_SUCCESS;
}

int orte_session_virtual_map(const orte_job_launch_t *launch, orte_inventory_t *const *inventories,
                             uint32_t my_candidate, dvm_map_report_t *report)
{
    uint64_t start = cpu_ns();
    memset(report, 0, sizeof(*report));
    report->job_seq = launch->spec->seq;
    if (my_candidate >= launch->num_candidates) {
        return HERD_SUCCESS; /* no process here: a real node starts no session daemon */
    }
    orte_jobmap_nodes_t nodes;
    orte_rmaps_app_t *apps = NULL;
    int rc = orte_jobmap_nodes_build(inventories, launch->slots, launch->max_slots,
                                     launch->num_candidates, launch->xml_pairs, &nodes);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    rc = orte_jobmap_apps(launch->spec, &apps);
    if (HERD_SUCCESS == rc) {
        orte_rmaps_job_t job = {.nodes = nodes.nodes,
                                .num_nodes = nodes.num,
                                .apps = apps,
                                .num_apps = launch->spec->num_apps};
        virtual_map_t vm = {.my_candidate = my_candidate, .report = report};
        uint32_t num_procs = 0;
        uint64_t map_start = cpu_ns();
        report->status = orte_rmaps_base_map_job(&job, virtual_emit, &vm, &num_procs);
        report->map_ns = cpu_ns() - map_start;
    } else {
        report->status = rc;
    }
    free(apps);
    orte_jobmap_nodes_destruct(&nodes);
    if (HERD_SUCCESS != report->status) {
        /* what a failed map leaves counted is no map */
        dvm_map_report_t failed = {.job_seq = report->job_seq, .status = report->status};
        *report = failed;
    }
    report->total_ns = cpu_ns() - start;
    if (report->map_ns > report->total_ns) {
        report->map_ns = report->total_ns;
    }
    return HERD_SUCCESS;
}
