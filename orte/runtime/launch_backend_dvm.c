/* SPDX-License-Identifier: BSD-3-Clause */
/* The dvm backend: herdrun started a DVM of its own and is its root, in this process; the job
 * runs on the DVM's loop, and the DVM delivers its job errors and signals to the job. */
#include "herd_config.h"

#include <stdio.h>

#include "opal/util/show_help.h"
#include "orte/runtime/launch_internal.h"

static int dvm_name_job(launch_job_t *job, char *jobid, size_t size)
{
    orte_dvm_t *dvm = job->mode.dvm.dvm;
    job->spec->seq = orte_dvm_next_job_seq(dvm);
    snprintf(jobid, size, "%s.%u", orte_dvm_id(dvm), job->spec->seq);
    return HERD_SUCCESS;
}

static const orte_inventory_t *dvm_inventory(const launch_job_t *job, uint32_t node_index)
{
    return orte_dvm_node_inventory(job->mode.dvm.dvm, node_index);
}

/* The root broadcasts the launch to its daemons. */
static int dvm_start(launch_job_t *job, const opal_buffer_t *message)
{
    orte_dvm_t *dvm = job->mode.dvm.dvm;
    orte_dvm_root_set_job_error_cb(dvm, launch_job_error_cb, job);
    orte_dvm_root_set_signal_cb(dvm, launch_job_signal_cb, job);
    int rc = orte_dvm_root_command(dvm, ORTE_DVM_CMD_LAUNCH, message->base, message->used);
    if (HERD_SUCCESS != rc) {
        opal_show_help(LAUNCH_HELP_FILE, "launch-send-failed", false, opal_strerror(rc));
        return HERD_ERR_SILENT;
    }
    return HERD_SUCCESS;
}

static void dvm_loop_ended(launch_job_t *job)
{
    orte_dvm_root_set_job_error_cb(job->mode.dvm.dvm, NULL, NULL);
    orte_dvm_root_set_signal_cb(job->mode.dvm.dvm, NULL, NULL);
}

const launch_backend_t launch_backend_dvm = {
    .name = "dvm",
    .name_job = dvm_name_job,
    .inventory = dvm_inventory,
    .start = dvm_start,
    .loop_ended = dvm_loop_ended,
    .checks_session_frameworks = true,
};

int launch_backend_dvm_open(launch_job_t *job, orte_dvm_t *dvm)
{
    job->mode.dvm.dvm = dvm;
    job->plan.alloc = orte_dvm_allocation(dvm);
    job->base = orte_dvm_event_base(dvm);
    job->plan.launch.radix = orte_dvm_radix(dvm);
    return HERD_SUCCESS;
}
