/* SPDX-License-Identifier: BSD-3-Clause */
/* The life of a running job on herdrun's side: when it is over, aborting it, forwarding
 * signals to it, and its timers (start, --timeout, the grace after a signal, the deadline after
 * an abort). */
#include "herd_config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "opal/util/show_help.h"
#include "orte/runtime/launch_internal.h"
#include "orte/runtime/session.h"

/* The loss of a session daemon in herdrun's words (no word of its node's daemon came). */
static void say_loss(launch_job_t *job)
{
    if (!job->state.loss.pending) {
        return;
    }
    job->state.loss.pending = false;
    if (NULL != job->state.loss_timer) {
        opal_event_del(job->state.loss_timer);
    }
    opal_show_help(LAUNCH_HELP_FILE, "session-daemon-vanished", false, job->spec->jobid,
                   launch_job_node_name(job, job->state.loss.candidate), job->state.loss.reason);
}

void launch_job_finish(launch_job_t *job)
{
    if (job->state.finished) {
        return;
    }
    say_loss(job);
    job->state.finished = true;
    opal_event_base_stop(job->base);
}

static void loss_cb(int fd, short what, void *arg)
{
    launch_job_t *job = arg;
    say_loss(job);
    launch_job_check_finished(job);
}

void launch_job_lost_daemon(launch_job_t *job, uint32_t candidate, const char *reason)
{
    launch_state_t *s = &job->state;
    if (job->backend->forks_session || NULL == s->loss_timer) {
        /* no node daemon will say why: herdrun's words now */
        opal_show_help(LAUNCH_HELP_FILE, "session-daemon-vanished", false, job->spec->jobid,
                       launch_job_node_name(job, candidate), reason);
        return;
    }
    if (s->loss.pending) {
        return; /* one at a time: the abort follows from the first */
    }
    s->loss.pending = true;
    s->loss.candidate = candidate;
    snprintf(s->loss.reason, sizeof(s->loss.reason), "%s", reason);
    struct timeval second = {.tv_sec = 1, .tv_usec = 0};
    opal_event_add(s->loss_timer, &second);
}

void launch_job_check_finished(launch_job_t *job)
{
    if (job->state.loss.pending) {
        return; /* the node daemon's word on it first (or loss_cb, a second later) */
    }
    if (launch_relocate_pending(job)) {
        return; /* a lost node's ranks are being started elsewhere (errmgr restart) */
    }
    if (job->daemons.num_eof + 1 >= job->daemons.size &&
        (job->report.received || job->state.start_failed) && NULL == job->spawns.ops) {
        /* every process exited: what is left in their pipes is the last of the output */
        if (!launch_io_source_drained(job)) {
            return;
        }
        launch_job_finish(job);
    }
}

static void deadline_cb(int fd, short what, void *arg)
{
    launch_job_t *job = arg;
    opal_show_help(LAUNCH_HELP_FILE, "daemons-silent-after-abort", false,
                   job->daemons.size - 1 - job->daemons.num_eof, job->daemons.size - 1);
    launch_job_finish(job);
}

static void arm(opal_event_t *timer, double seconds)
{
    struct timeval tv = {.tv_sec = (time_t) seconds,
                         .tv_usec = (suseconds_t) ((seconds - (double) (time_t) seconds) * 1e6)};
    opal_event_del(timer);
    opal_event_add(timer, &tv);
}

void launch_job_arm_deadline(launch_job_t *job, int grace_ms)
{
    arm(job->state.deadline_timer, (grace_ms > 0 ? grace_ms / 1000.0 : 0.0) + 5.0);
}

/* A message with one int32 to every session daemon that has not finished. */
static void send_all(launch_job_t *job, uint16_t tag, int32_t value)
{
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_pack_int32(&buffer, value)) {
        for (orte_vpid_t v = 1; v < job->daemons.size; ++v) {
            if (!job->daemons.eof[v]) {
                job->daemons.ovl->send(job->daemons.overlay, v, tag, buffer.base, buffer.used);
            }
        }
    }
    opal_buffer_destruct(&buffer);
}

/* Kill the whole job (after grace_ms), and stop waiting for daemons that cannot answer. */
void launch_job_abort(launch_job_t *job, int grace_ms)
{
    if (job->state.queued) {
        launch_job_finish(job); /* nothing started: the DVM forgets it when we go */
        return;
    }
    job->state.aborting = true;
    send_all(job, ORTE_SESSION_TAG_ABORT, grace_ms);
    launch_job_arm_deadline(job, grace_ms);
}

/* A DVM reports that the job could not start on a node (message: the whole sentence). */
void launch_job_error_cb(const char *jobid, const char *node, const char *message, void *arg)
{
    launch_job_t *job = arg;
    /* the DVM's words (from its own catalog), passed on as they are */
    fprintf(stderr, "%s", message);
    if (0 != strcmp(jobid, job->spec->jobid) && 0 != strcmp(jobid, "?")) {
        return;
    }
    bool about_loss = job->state.loss.pending &&
                      0 == strcmp(node, launch_job_node_name(job, job->state.loss.candidate));
    if (about_loss) {
        /* it says why the session daemon vanished: ours would say it twice */
        job->state.loss.pending = false;
        opal_event_del(job->state.loss_timer);
    }
    if (0 == job->state.exit_status) {
        job->state.exit_status = 1;
    }
    job->state.start_failed = true;
    launch_job_abort(job, 0);
    if (about_loss) {
        launch_job_check_finished(job);
    }
}

static void start_timeout_cb(int fd, short what, void *arg)
{
    launch_job_t *job = arg;
    uint32_t missing = job->daemons.size - 1 - job->daemons.num_eof;
    opal_show_help(LAUNCH_HELP_FILE, "start-timeout", false, job->spec->jobid,
                   launch_params_start_timeout(), missing);
    if (0 == job->state.exit_status) {
        job->state.exit_status = 1;
    }
    job->state.start_failed = true;
    launch_job_abort(job, 0);
}

static void grace_cb(int fd, short what, void *arg)
{
    launch_job_abort(arg, 0);
}

/* SIGINT, SIGTERM or SIGHUP: the first is forwarded to the job's processes (killed after the
 * grace), a second kills them at once. */
void launch_job_signal_cb(int signo, void *arg)
{
    launch_job_t *job = arg;
    if (job->state.finished) {
        return;
    }
    job->state.signals++;
    if (0 == job->state.exit_status) {
        job->state.exit_status = 128 + signo;
    }
    if (job->state.signals > 1) {
        opal_show_help(LAUNCH_HELP_FILE, "signal-again", false, strsignal(signo), job->spec->jobid);
        launch_job_abort(job, 0);
        return;
    }
    if (job->state.queued) {
        launch_job_abort(job, 0);
        return;
    }
    opal_show_help(LAUNCH_HELP_FILE, "signal-forwarded", false, strsignal(signo), job->spec->jobid);
    job->state.aborting = true;
    send_all(job, ORTE_SESSION_TAG_SIGNAL, signo);
    arm(job->state.grace_timer, job->state.grace_ms / 1000.0);
    arm(job->state.deadline_timer, job->state.grace_ms / 1000.0 + 5.0);
}

void launch_job_cancel(launch_job_t *job, int signo)
{
    if (job->state.finished) {
        return;
    }
    if (SIGTERM != signo && SIGINT != signo && SIGHUP != signo && SIGKILL != signo) {
        /* a signal for the processes, not the end of the job */
        opal_show_help(LAUNCH_HELP_FILE, "cancel-signal", false, strsignal(signo),
                       job->spec->jobid);
        send_all(job, ORTE_SESSION_TAG_SIGNAL, signo);
        return;
    }
    if (0 == job->tools.cancel_signo) {
        job->tools.cancel_signo = signo;
        opal_show_help(LAUNCH_HELP_FILE, "cancelled", false, job->spec->jobid, strsignal(signo),
                       SIGKILL == signo ? 0 : job->state.grace_ms);
    }
    if (NULL != job->options->debugger) {
        job->options->debugger->aborting("cancelled (herd-cancel)", job->options->debugger->arg);
    }
    job->state.signals++; /* what the processes do now is our doing */
    if (0 == job->state.exit_status) {
        job->state.exit_status = 128 + signo;
    }
    if (SIGKILL == signo) {
        launch_job_abort(job, 0);
        return;
    }
    /* as the errmgr ends a job: SIGTERM to every process, SIGKILL after the grace */
    launch_job_abort(job, job->state.grace_ms);
}

static void timeout_cb(int fd, short what, void *arg)
{
    launch_job_t *job = arg;
    opal_show_help(LAUNCH_HELP_FILE, "timeout", false, job->spec->jobid, job->spec->timeout);
    job->state.signals++; /* what the processes do now is our doing */
    job->state.exit_status = ORTE_LAUNCH_TIMEOUT_STATUS;
    launch_job_abort(job, job->state.grace_ms);
}

int launch_timers_start(launch_job_t *job)
{
    launch_state_t *s = &job->state;
    int rc;
    if (HERD_SUCCESS != (rc = opal_event_timer_create(job->base, false, deadline_cb, job,
                                                      &s->deadline_timer)) ||
        HERD_SUCCESS !=
            (rc = opal_event_timer_create(job->base, false, grace_cb, job, &s->grace_timer)) ||
        HERD_SUCCESS !=
            (rc = opal_event_timer_create(job->base, false, timeout_cb, job, &s->timeout_timer)) ||
        HERD_SUCCESS != (rc = opal_event_timer_create(job->base, false, start_timeout_cb, job,
                                                      &s->start_timer)) ||
        HERD_SUCCESS !=
            (rc = opal_event_timer_create(job->base, false, loss_cb, job, &s->loss_timer))) {
        return rc;
    }
    arm(s->start_timer, (double) launch_params_start_timeout());
    if (job->spec->timeout > 0) {
        arm(s->timeout_timer, (double) job->spec->timeout);
    }
    return HERD_SUCCESS;
}

void launch_timers_free(launch_job_t *job)
{
    opal_event_t **timers[] = {&job->state.deadline_timer, &job->state.grace_timer,
                               &job->state.timeout_timer, &job->state.start_timer,
                               &job->state.loss_timer};
    for (size_t i = 0; i < sizeof(timers) / sizeof(timers[0]); ++i) {
        if (NULL != *timers[i]) {
            opal_event_free(*timers[i]);
            *timers[i] = NULL;
        }
    }
}
