/* SPDX-License-Identifier: BSD-3-Clause */
/* herdrun as vpid 0 of the job's overlay: it opens the overlay and the collectives of the job,
 * and hears the session daemons (their output and failures, the shepherd's report, the end of
 * their processes, the start check) and their loss. */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/util/argv.h"
#include "opal/util/fd.h"
#include "opal/util/show_help.h"
#include "orte/runtime/launch_internal.h"
#include "orte/runtime/session.h"
#include "orte/util/radix.h"

/* A session daemon's own words for the user (1: stdout, 2: stderr). */
static void recv_output(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                        size_t length, void *arg)
{
    const uint8_t *bytes = data;
    if (length < 1 || (1 != bytes[0] && 2 != bytes[0])) {
        return;
    }
    int fd = (1 == bytes[0]) ? STDOUT_FILENO : STDERR_FILENO;
    /* a failure means our output is gone (a closed pipe): nothing to do about it */
    opal_fd_write_all(fd, bytes + 1, length - 1);
}

/* The shepherd says a process failed (action 1: it kills the job; 2: the job goes on). */
static void recv_failure(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                         size_t length, void *arg)
{
    launch_job_t *job = arg;
    opal_buffer_t buffer;
    uint32_t action = 0;
    orte_proc_record_t r;
    char *message = NULL;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS != opal_buffer_load(&buffer, data, length) ||
        HERD_SUCCESS != opal_buffer_unpack_uint32(&buffer, &action) ||
        HERD_SUCCESS != orte_proc_record_unpack(&buffer, &r) ||
        (opal_buffer_remaining(&buffer) > 0 &&
         HERD_SUCCESS != opal_buffer_unpack_string(&buffer, &message))) {
        opal_buffer_destruct(&buffer);
        opal_show_help(LAUNCH_HELP_FILE, "malformed-failure-report", false, src);
        return;
    }
    opal_buffer_destruct(&buffer);
    if (job->state.aborting && job->state.signals > 0) {
        free(message);
        return; /* we asked for it */
    }
    launch_report_failure(job, action, &r, message);
    fflush(stderr);
    free(message);
    if (0 == job->state.exit_status) {
        job->state.exit_status = orte_proc_record_status(&r);
    }
    if (1u == action && !job->state.aborting) {
        /* the shepherd is killing the job: stop waiting for it after the grace */
        job->state.aborting = true;
        launch_job_arm_deadline(job, job->state.grace_ms);
    }
}

/* A session daemon started a failed process again (errmgr restart): said, nothing else. */
static void recv_restarted(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                           size_t length, void *arg)
{
    launch_job_t *job = arg;
    opal_buffer_t buffer;
    orte_proc_record_t r;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_load(&buffer, data, length) &&
        HERD_SUCCESS == orte_proc_record_unpack(&buffer, &r) && !job->state.aborting) {
        launch_relocate_note_restart(job, r.rank, r.restarts);
        launch_report_restart(job, &r);
        fflush(stderr);
    }
    opal_buffer_destruct(&buffer);
}

static int by_rank(const void *a, const void *b)
{
    uint32_t ra = ((const orte_proc_record_t *) a)->rank;
    uint32_t rb = ((const orte_proc_record_t *) b)->rank;
    return (ra > rb) - (ra < rb);
}

/* The shepherd's report: the job's status and every process's record. */
static void recv_report(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                        size_t length, void *arg)
{
    launch_job_t *job = arg;
    launch_report_t *report = &job->report;
    opal_buffer_t buffer;
    int32_t status = 0;
    uint32_t n = 0;
    opal_buffer_init(&buffer);
    if (report->received || HERD_SUCCESS != opal_buffer_load(&buffer, data, length) ||
        HERD_SUCCESS != opal_buffer_unpack_int32(&buffer, &status) ||
        HERD_SUCCESS != opal_buffer_unpack_uint32(&buffer, &n) ||
        n > opal_buffer_remaining(&buffer)) {
        opal_buffer_destruct(&buffer);
        return;
    }
    report->records = calloc(n > 0 ? n : 1, sizeof(*report->records));
    for (uint32_t i = 0; NULL != report->records && i < n; ++i) {
        if (HERD_SUCCESS != orte_proc_record_unpack(&buffer, &report->records[i])) {
            break;
        }
        report->num_records = i + 1;
    }
    opal_buffer_destruct(&buffer);
    if (NULL != report->records) {
        qsort(report->records, report->num_records, sizeof(*report->records), by_rank);
    }
    if (0 == job->state.exit_status && 0 != status) {
        job->state.exit_status = status;
    }
    report->received = true;
    launch_job_check_finished(job);
}

/* A session daemon's processes are all done: nothing more comes from it. */
static void recv_eof(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                     size_t length, void *arg)
{
    launch_job_t *job = arg;
    if (src > 0 && src < job->daemons.size && !job->daemons.eof[src]) {
        job->daemons.eof[src] = true;
        job->daemons.num_eof++;
        launch_job_check_finished(job);
    }
}

/* A session daemon's node daemon died (nobody else says it: the node daemon is gone, and the
 * session daemon's goodbye that follows is not a loss). */
static void recv_node_lost(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                           size_t length, void *arg)
{
    launch_job_t *job = arg;
    if (job->state.finished || src == 0 || src >= job->daemons.size ||
        launch_relocate_node_lost(job, src)) {
        return; /* (or its ranks are being moved: errmgr restart) */
    }
    if (!job->state.aborting) {
        opal_show_help(LAUNCH_HELP_FILE, "node-daemon-died", false, job->spec->jobid,
                       launch_job_node_name(job, job->plan.launch.participants[src - 1]));
    }
    if (0 == job->state.exit_status) {
        job->state.exit_status = 1;
    }
    launch_job_abort(job, 0);
}

/* Mark peer and every daemon below it in the tree as done; how many were not yet. */
static uint32_t cut_off(launch_job_t *job, orte_vpid_t peer)
{
    launch_daemons_t *d = &job->daemons;
    uint32_t cut = 0;
    for (orte_vpid_t v = 1; v < d->size; ++v) {
        bool below = false;
        for (orte_vpid_t u = v; u > 0 && !below; u = orte_radix_parent(u, job->plan.launch.radix)) {
            below = (u == peer);
        }
        if (below && NULL != job->io.sink) {
            job->io.iof->sink_source_lost(job->io.sink, v);
        }
        if (below && !d->eof[v]) {
            d->eof[v] = true;
            d->num_eof++;
            cut++;
        }
    }
    return cut;
}

static void lost_cb(orte_overlay_t *overlay, orte_vpid_t peer, int status, const char *reason,
                    void *arg)
{
    launch_job_t *job = arg;
    if (job->state.finished || peer == 0 || peer >= job->daemons.size) {
        return;
    }
    /* everything below it is cut off too */
    uint32_t cut = cut_off(job, peer);
    if (cut > 0 && launch_relocate_gone(job, peer)) {
        /* its node daemon's death was said (NODE_LOST): its ranks moved, or the job ends */
        launch_job_check_finished(job);
        return;
    }
    if (cut > 0 && !job->state.start_failed) {
        /* one that said goodbye was told to stop (its node daemon is going away, and says
         * why); one that vanished is news, unless the job is already being stopped: then the
         * first loss was reported and this one follows from it (an abort written to a session
         * daemon that is leaving fails with a broken pipe) */
        if (HERD_SUCCESS != status && !job->state.aborting) {
            launch_job_lost_daemon(job, job->plan.launch.participants[peer - 1], reason);
        }
        if (0 == job->state.exit_status) {
            job->state.exit_status = 1;
        }
        /* the shepherd may be the one gone: its report will not come; nor when a session
         * daemon stopped answering (hung, not dead): the shepherd waits for it in vain */
        job->report.received =
            job->report.received || peer == ORTE_SESSION_SHEPHERD || HERD_ERR_TIMEOUT == status;
        launch_job_abort(job, 0);
    }
    if (cut > 0) {
        launch_spawn_fail_all(job);
    }
    launch_job_check_finished(job);
}

/* Every session daemon checked that the job can start on its node: an empty blob if so, else
 * what went wrong there. */
static void check_cb(int status, const orte_grpcomm_result_t *result, void *cbdata)
{
    launch_job_t *job = cbdata;
    if (NULL != job->state.start_timer) {
        opal_event_del(job->state.start_timer);
    }
    uint32_t failed = 0;
    char **others = NULL;
    for (uint32_t v = 1; HERD_SUCCESS == status && v < result->num_blobs && v < job->daemons.size;
         ++v) {
        if (0 == result->blobs[v].len) {
            continue;
        }
        const char *node = launch_job_node_name(job, job->plan.launch.participants[v - 1]);
        if (0 == failed++) {
            /* the first node's words in full; the others would say the same of themselves */
            fwrite(result->blobs[v].data, 1, result->blobs[v].len, stderr);
        } else if (failed <= 11) {
            opal_argv_append(&others, failed <= 10 ? node : "...");
        }
    }
    if (HERD_SUCCESS != status) {
        opal_show_help(LAUNCH_HELP_FILE, "start-check-failed", false, job->spec->jobid,
                       opal_strerror(status));
        failed = 1;
    }
    if (failed > 1) {
        char *list = opal_argv_join(others, ' ');
        opal_show_help(LAUNCH_HELP_FILE, "start-check-failed-elsewhere", false, failed - 1,
                       2 == failed ? "" : "s", NULL != list ? list : "");
        free(list);
    }
    opal_argv_free(others);
    fflush(stderr);
    if (failed > 0) {
        /* nothing started anywhere */
        job->state.start_failed = true;
        if (0 == job->state.exit_status) {
            job->state.exit_status = 1;
        }
        launch_job_check_finished(job);
    }
}

static int grpcomm_send(void *ctx, orte_vpid_t dst, uint16_t tag, const void *data, size_t len)
{
    launch_job_t *job = ctx;
    return job->daemons.ovl->send(job->daemons.overlay, dst, tag, data, len);
}

static void grpcomm_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                         size_t length, void *arg)
{
    launch_job_t *job = arg;
    job->daemons.gc->deliver(job->daemons.grpcomm, src, tag, data, length);
}

/* The overlay as vpid 0 with the session daemons' messages registered. */
static int open_overlay(launch_job_t *job)
{
    launch_daemons_t *d = &job->daemons;
    orte_overlay_config_t config = {.base = job->base,
                                    .vpid = 0,
                                    .num_daemons = d->size,
                                    .radix = job->plan.launch.radix,
                                    .dvm_id = job->spec->jobid};
    memcpy(config.secret, job->spec->secret, sizeof(config.secret));
    int rc = orte_dvm_heartbeat_timeout_ms(&config.heartbeat_timeout_ms);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    d->ovl = orte_overlay_base_module();
    rc = d->ovl->init(&config, &d->overlay);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    d->ovl->set_lost_callback(d->overlay, lost_cb, job);
    const struct {
        uint16_t tag;
        orte_overlay_recv_cb_t cb;
    } handlers[] = {{ORTE_SESSION_TAG_OUTPUT, recv_output},
                    {ORTE_SESSION_TAG_FAILURE, recv_failure},
                    {ORTE_SESSION_TAG_REPORT, recv_report},
                    {ORTE_SESSION_TAG_EOF, recv_eof},
                    {ORTE_SESSION_TAG_NODE_LOST, recv_node_lost},
                    {ORTE_SESSION_TAG_RESTARTED, recv_restarted},
                    {ORTE_SESSION_TAG_RELOCATED, launch_relocate_recv_answer},
                    {ORTE_SESSION_TAG_SPAWN_REQ, launch_spawn_recv_request},
                    {ORTE_SESSION_TAG_SPAWN_ACK, launch_spawn_recv_ack},
                    {ORTE_SESSION_TAG_PTABLE, launch_tools_recv_ptable}};
    for (size_t i = 0; i < sizeof(handlers) / sizeof(handlers[0]); ++i) {
        rc = d->ovl->register_recv(d->overlay, handlers[i].tag, handlers[i].cb, job);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
    return HERD_SUCCESS;
}

int launch_overlay_open(launch_job_t *job)
{
    launch_daemons_t *d = &job->daemons;
    int rc;
    if (HERD_SUCCESS != (rc = open_overlay(job)) || HERD_SUCCESS != (rc = launch_io_open(job))) {
        return rc;
    }
    d->gc = orte_grpcomm_base_module();
    orte_grpcomm_transport_t transport = {.me = 0,
                                          .num_daemons = d->size,
                                          .radix = job->plan.launch.radix,
                                          .send = grpcomm_send,
                                          .ctx = job};
    rc = d->gc->create(&transport, &d->grpcomm);
    for (uint16_t t = 0; HERD_SUCCESS == rc && t < ORTE_GRPCOMM_NUM_TAGS; ++t) {
        rc = d->ovl->register_recv(d->overlay, (uint16_t) (ORTE_GRPCOMM_TAG_BASE + t), grpcomm_recv,
                                   job);
    }
    /* the session daemon we fork gets its end of a socketpair (local start): nothing to listen
     * on, no port open on this host for the job */
    bool forking = job->backend->forks_session && NULL != d->ovl->adopt_peer;
    if (HERD_SUCCESS == rc && !forking) {
        rc = d->ovl->listen(d->overlay, &job->spec->sink_uri);
    }
    if (HERD_SUCCESS == rc) {
        rc = d->gc->allgather(d->grpcomm, ORTE_SESSION_COLL_CHECK, NULL, 0, check_cb, job);
    }
    return rc;
}

void launch_overlay_close(launch_job_t *job)
{
    launch_daemons_t *d = &job->daemons;
    if (NULL != d->overlay) {
        /* goodbye: every session daemon sees its parent leave in order and exits */
        d->ovl->finalize(d->overlay);
        d->overlay = NULL;
        opal_event_base_poll(job->base);
    }
    if (NULL != d->grpcomm) {
        d->gc->destroy(d->grpcomm);
        d->grpcomm = NULL;
    }
}
