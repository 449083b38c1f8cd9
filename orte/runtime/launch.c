/* SPDX-License-Identifier: BSD-3-Clause */
/* herdrun's side of a job (orte/runtime/launch.h), the flow common to its three backends: name
 * the job, plan it to learn which nodes take part and to report an impossible map before
 * anything starts, open the job's overlay (herdrun is its vpid 0), hand the launch to the
 * backend, run the loop until the job ends, then release everything (job_destroy). */
#include "herd_config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>

#include "opal/util/jobdb.h"
#include "opal/util/show_help.h"
#include "orte/mca/errmgr/errmgr.h"
#include "orte/mca/odls/odls.h"
#include "orte/runtime/launch_internal.h"
#include "orte/util/orphans.h"

static void job_init(launch_job_t *job, const launch_backend_t *backend, orte_job_spec_t *spec,
                     const orte_launch_options_t *options)
{
    memset(job, 0, sizeof(*job));
    job->backend = backend;
    job->spec = spec;
    job->options = options;
    job->io.pipes_sock = -1;
    job->io.attach_fd = -1;
}

/* ------------------------------------------------------------------------------------------ */
/* client and local: no DVM in this process, so herdrun runs the loop itself */

static void own_signal_cb(int signo, void *arg)
{
    launch_job_t *job = arg;
    if (SIGCHLD != signo) {
        launch_job_signal_cb(signo, job);
    } else if (NULL != job->backend->child_exited) {
        job->backend->child_exited(job);
    }
}

/* The overlay and grpcomm frameworks (a DVM has them open), and signals through our own pipe. */
static int open_own_loop(launch_job_t *job)
{
    static const int caught[] = {SIGTERM, SIGINT, SIGHUP, SIGCHLD, 0};
    int rc;
    orte_orphans_adopt();
    job->own_frameworks_opened = true;
    if (HERD_SUCCESS != (rc = orte_overlay_base_open()) ||
        HERD_SUCCESS != (rc = orte_grpcomm_base_open())) {
        opal_show_help(LAUNCH_HELP_FILE, "no-overlay-grpcomm", false, opal_strerror(rc));
        return HERD_ERR_SILENT;
    }
    opal_signal_pipe_t *signal_pipe = NULL;
    rc = opal_signal_pipe_open(job->base, caught, own_signal_cb, job, &signal_pipe);
    if (HERD_SUCCESS == rc) {
        job->signal_pipe = signal_pipe;
    }
    return rc;
}

static void close_own_loop(launch_job_t *job)
{
    if (NULL != job->signal_pipe) {
        orte_orphans_kill(NULL, 0);
        opal_signal_pipe_close(job->signal_pipe);
        job->signal_pipe = NULL;
    }
    if (job->own_frameworks_opened) {
        orte_grpcomm_base_close();
        orte_overlay_base_close();
        job->own_frameworks_opened = false;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* the flow, step by step */

/* The job's id (from its backend), its overlay's secret, and its processes' kill grace. */
static int name_job(launch_job_t *job)
{
    orte_job_spec_t *spec = job->spec;
    job->plan.launch.spec = spec;
    job->state.grace_ms =
        (spec->kill_grace_ms >= 0) ? spec->kill_grace_ms : orte_odls_base_kill_grace_ms();
    spec->kill_grace_ms = job->state.grace_ms;
    char jobid[128];
    int rc = job->backend->name_job(job, jobid, sizeof(jobid));
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    free(spec->jobid);
    spec->jobid = strdup(jobid);
    if (NULL == spec->jobid ||
        sizeof(spec->secret) != getrandom(spec->secret, sizeof(spec->secret), 0)) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    return HERD_SUCCESS;
}

/* The mapper, and the frameworks the session daemons will select when they run this
 * installation (a DVM this herdrun starts, or forks, on this host alone): one that names no
 * usable component is said here, before anything starts (the framework says which names
 * exist); a forked session daemon finds them selected already. A running DVM (--dvm-uri)
 * checks its own. */
static int open_frameworks(launch_job_t *job)
{
    int rc = orte_rmaps_base_open();
    if (HERD_SUCCESS != rc) {
        opal_show_help(LAUNCH_HELP_FILE, "no-rmaps", false, opal_strerror(rc));
        return HERD_ERR_SILENT;
    }
    if (!job->backend->checks_session_frameworks) {
        return HERD_SUCCESS;
    }
    if (HERD_SUCCESS != (rc = orte_odls_base_open())) {
        opal_show_help(LAUNCH_HELP_FILE, "no-odls", false, opal_strerror(rc));
        return HERD_ERR_SILENT;
    }
    if (HERD_SUCCESS != (rc = orte_errmgr_base_open())) {
        opal_show_help(LAUNCH_HELP_FILE, "no-errmgr", false, opal_strerror(rc));
        return HERD_ERR_SILENT;
    }
    return HERD_SUCCESS;
}

static bool launching(const launch_job_t *job)
{
    return 0 == (job->spec->flags & ORTE_JOB_FLAG_DO_NOT_LAUNCH);
}

/* One slot per session daemon, and (unless --do-not-launch) the job's overlay, I/O and
 * collectives, ready for the session daemons to connect. */
static int open_daemons(launch_job_t *job)
{
    job->daemons.size = job->plan.launch.num_participants + 1;
    job->daemons.eof = calloc(job->daemons.size, sizeof(*job->daemons.eof));
    if (NULL == job->daemons.eof) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (!launching(job)) {
        return HERD_SUCCESS;
    }
    int rc = launch_overlay_open(job);
    if (HERD_SUCCESS != rc) {
        if (HERD_ERR_SILENT != rc) {
            opal_show_help(LAUNCH_HELP_FILE, "endpoint-failed", false, opal_strerror(rc));
        }
        return HERD_ERR_SILENT;
    }
    return HERD_SUCCESS;
}

/* The launch message, and its size with -v. */
static int pack_launch(launch_job_t *job, opal_buffer_t *message)
{
    int rc = orte_job_launch_pack(message, &job->plan.launch);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (job->options->verbose > 0) {
        const orte_job_spec_t *spec = job->spec;
        printf("launch message: %zu bytes (%u app%s, %u candidate nodes, %u with processes)\n",
               message->used, spec->num_apps, 1 == spec->num_apps ? "" : "s",
               job->plan.launch.num_candidates, job->plan.launch.num_participants);
        fflush(stdout);
    }
    return HERD_SUCCESS;
}

/* Run the loop until the job is over, then settle what herdrun exits with. */
static void wait_for_end(launch_job_t *job, int *exit_status)
{
    opal_event_base_loop(job->base, false);
    if (NULL != job->backend->loop_ended) {
        job->backend->loop_ended(job);
    }
    if (!job->state.finished) {
        /* the loop ended under us: the DVM failed (it said why) and took the job with it */
        if (0 == job->state.exit_status) {
            job->state.exit_status = 1;
        }
    }
    if ((job->spec->flags & ORTE_JOB_FLAG_REPORT_USAGE) && job->report.received) {
        launch_report_usage(job);
    }
    if (job->io.output_lost && 0 == job->state.exit_status) {
        job->state.exit_status = 1; /* as a program whose output could not be written */
    }
    *exit_status = job->state.exit_status;
}

static int run_job(launch_job_t *job, int *exit_status)
{
    opal_buffer_t message;
    opal_buffer_init(&message);
    job->flow_began = true;
    int rc = launch_map_everywhere_check(job);
    if (HERD_SUCCESS == rc) {
        rc = name_job(job);
    }
    if (HERD_SUCCESS == rc) {
        rc = launch_plan_candidates(job);
    }
    if (HERD_SUCCESS == rc) {
        rc = open_frameworks(job);
    }
    if (HERD_SUCCESS == rc) {
        rc = launch_plan_map(job);
    }
    if (HERD_SUCCESS == rc) {
        rc = open_daemons(job);
    }
    if (HERD_SUCCESS == rc) {
        launch_tools_prepare(job);
        rc = pack_launch(job, &message);
    }
    if (HERD_SUCCESS == rc) {
        orte_launch_check_settings();
        if (!launching(job)) {
            *exit_status = 0;
            if (launch_params_map_everywhere()) {
                rc = launch_map_everywhere(job, &message, exit_status);
            }
        } else if (HERD_SUCCESS == (rc = launch_timers_start(job)) &&
                   HERD_SUCCESS == (rc = job->backend->start(job, &message))) {
            /* after the start: a local job's session daemon is forked by then, without the
             * tool server's threads */
            launch_tools_serve(job);
            wait_for_end(job, exit_status);
        }
    }
    opal_buffer_destruct(&message);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* the end */

/* A session daemon killed with -9 on this host cannot remove its segments. */
static void unlink_segments(const launch_job_t *job)
{
    const char *jobid = job->spec->jobid;
    if (0 == job->daemons.size || NULL == jobid) {
        return;
    }
    char name[256], launch_tag[300];
    snprintf(launch_tag, sizeof(launch_tag), "%s.launch", jobid);
    for (uint32_t c = 0; c < job->plan.launch.num_candidates; ++c) {
        const char *node = job->plan.candidate_names[c];
        if (HERD_SUCCESS == opal_jobdb_segment_name(jobid, node, name, sizeof(name))) {
            shm_unlink(name);
        }
        if (HERD_SUCCESS == opal_jobdb_segment_name(launch_tag, node, name, sizeof(name))) {
            shm_unlink(name);
        }
    }
}

/* Release everything the job holds, whatever its backend and however far it got. */
static void job_destroy(launch_job_t *job)
{
    if (job->flow_began) {
        launch_tools_unserve(job);
        launch_tools_release(job); /* pending tool questions are answered before the DVM goes */
        launch_io_close(job);
        launch_overlay_close(job);
        launch_timers_free(job);
        unlink_segments(job);
        launch_plan_release(job);
        /* the frameworks the flow opens: closed, opened or not */
        orte_rmaps_base_close();
        if (job->backend->checks_session_frameworks) {
            orte_errmgr_base_close();
            orte_odls_base_close();
        }
        free(job->daemons.eof);
        free(job->report.records);
        launch_spawn_release(job);
        launch_relocate_release(job);
    }
    if (NULL != job->backend->reap) {
        job->backend->reap(job);
    }
    close_own_loop(job);
    if (NULL != job->backend->release) {
        job->backend->release(job);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* the public API: one job, by backend */

int orte_launch_run(orte_dvm_t *dvm, orte_job_spec_t *spec, const orte_launch_options_t *options,
                    int *exit_status)
{
    launch_job_t job;
    job_init(&job, &launch_backend_dvm, spec, options);
    int rc = launch_backend_dvm_open(&job, dvm);
    if (HERD_SUCCESS == rc) {
        rc = run_job(&job, exit_status);
    }
    job_destroy(&job);
    return rc;
}

int orte_launch_run_local(const orte_allocation_t *alloc, orte_job_spec_t *spec,
                          const orte_launch_options_t *options, int *exit_status)
{
    launch_job_t job;
    job_init(&job, &launch_backend_local, spec, options);
    int rc = launch_backend_local_open(&job, alloc);
    if (HERD_SUCCESS == rc) {
        rc = open_own_loop(&job);
    }
    if (HERD_SUCCESS == rc) {
        rc = run_job(&job, exit_status);
    }
    job_destroy(&job);
    return rc;
}

int orte_launch_run_client(const char *uri_file, orte_job_spec_t *spec,
                           const orte_launch_options_t *options, int *exit_status)
{
    launch_job_t job;
    job_init(&job, &launch_backend_client, spec, options);
    int rc = launch_backend_client_open(&job, uri_file);
    if (HERD_SUCCESS == rc) {
        rc = open_own_loop(&job);
    }
    if (HERD_SUCCESS == rc) {
        rc = run_job(&job, exit_status);
    }
    job_destroy(&job);
    return rc;
}
