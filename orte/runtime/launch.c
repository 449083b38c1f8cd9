/* herdrun's side of a job (orte/runtime/launch.h): plan the job to learn which nodes take part
 * and to report an impossible map before anything starts, broadcast the app context, then
 * serve as vpid 0 of the job's overlay: print output and failures, forward signals, enforce
 * --timeout, print the usage report. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opal/event/signal_pipe.h"
#include "opal/mca/base/mca_var.h"
#include "opal/mca/opal_frameworks.h"
#include "opal/util/argv.h"
#include "opal/util/fd.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"
#include "orte/mca/grpcomm/grpcomm.h"
#include "orte/mca/iof/iof.h"
#include "orte/mca/errmgr/errmgr.h"
#include "orte/mca/odls/odls.h"
#include "orte/mca/orte_frameworks.h"
#include "orte/mca/overlay/overlay.h"
#include "orte/mca/rmaps/rmaps.h"
#include "orte/runtime/dvm_tool.h"
#include "opal/util/jobdb.h"
#include "orte/runtime/endpoints.h"
#include "orte/runtime/jobmap.h"
#include "orte/runtime/launch.h"
#include "orte/runtime/session.h"
#include "orte/runtime/session_handoff.h"
#include "orte/runtime/session_wireup.h"
#include "orte/util/orphans.h"
#include "orte/util/radix.h"

/* Every message for the user is in this catalog. */
#define LAUNCH_HELP_FILE "help-launch.txt"

/* A namespace the job spawned: its processes' ids are offset .. offset + size - 1. */
typedef struct spawned {
    uint32_t offset;
    uint32_t size;
} spawned_t;

/* A spawn being started. */
typedef struct spawn_op {
    struct spawn_op *next;
    uint32_t nspace;
    orte_vpid_t requester;
    uint32_t req_id;
    uint32_t acks;
    int status;
    char *error;
} spawn_op_t;

typedef struct job {
    orte_dvm_t *dvm;           /* NULL: a one-node job of this host, run without a DVM */
    orte_dvm_client_t *client; /* a running DVM reached as a tool (--dvm-uri) */
    const orte_allocation_t *alloc;
    orte_inventory_t *local_inv;     /* without a DVM: this node's */
    pid_t session_pid;               /* without a DVM: the session daemon we forked */
    opal_signal_pipe_t *signal_pipe; /* without a DVM: ours */
    opal_event_base_t *base;
    orte_job_spec_t *spec;
    orte_job_launch_t launch;
    const orte_launch_options_t *options;
    const char **candidate_names; /* by candidate index */
    uint32_t size;                /* participants + 1 */

    const orte_overlay_module_t *ovl;
    orte_overlay_t *overlay;
    const orte_grpcomm_module_t *gc;
    orte_grpcomm_t *grpcomm;

    const orte_iof_module_t *iof;
    orte_iof_sink_t *sink;
    /* a one-node job: the session daemon hands us its processes' pipes, read here */
    orte_iof_source_t *source;
    int iof_sock;
    /* a one-node job whose stdin goes to one rank and is not a terminal: that process reads
     * our stdin itself, as in a shell pipeline, and we never read it */
    bool stdin_direct;
    opal_event_t *iof_event;
    bool source_finishing;
    bool source_drained;
    /* on a persistent DVM: where tools attach to the output (herdrun --attach) */
    int attach_fd;
    opal_event_t *attach_event;
    char *attach_path;

    bool *eof; /* by vpid */
    uint32_t num_eof;
    bool report_received;
    bool start_failed;
    bool aborting;
    bool output_lost; /* herdrun's stdout or stderr refused a write: exit 1 if all went well */
    bool finished;
    int signals;
    int exit_status;
    int grace_ms;
    orte_proc_record_t *report;
    uint32_t num_report;
    opal_event_t *timeout_timer;
    opal_event_t *grace_timer;
    opal_event_t *deadline_timer;
    opal_event_t *start_timer; /* until every session daemon has checked in */

    /* spawns (MPI_Comm_spawn): planned here, started by the session daemons */
    orte_jobmap_nodes_t *nodes; /* the candidates, kept while the job runs */
    uint32_t *used;             /* per candidate: processes placed there so far */
    uint32_t num_procs;         /* the job's own */
    uint32_t next_id;           /* the first id of the next spawn's processes */
    spawned_t *spawns;          /* namespace index - 1 */
    uint32_t num_spawns;
    spawn_op_t *spawn_ops; /* waiting for every session daemon's acknowledgement */
} job_t;

/* ------------------------------------------------------------------------------------------ */

static void job_finish(job_t *job)
{
    if (job->finished) {
        return;
    }
    job->finished = true;
    opal_event_base_stop(job->base);
}

static void take_pipes(job_t *job);
static void describe_rank(const job_t *job, uint32_t id, char *text, size_t size);
static void fail_spawns(job_t *job);

static void check_finished(job_t *job)
{
    if (job->num_eof + 1 >= job->size && (job->report_received || job->start_failed) &&
        NULL == job->spawn_ops) {
        if (NULL != job->source && !job->source_drained) {
            /* every process exited: what is left in their pipes is the last of the output */
            if (!job->source_finishing) {
                job->source_finishing = true;
                take_pipes(job);
                job->iof->source_finish(job->source);
            }
            if (!job->source_drained) {
                return;
            }
        }
        job_finish(job);
    }
}

static void deadline_cb(int fd, short what, void *arg)
{
    job_t *job = arg;
    opal_show_help(LAUNCH_HELP_FILE, "daemons-silent-after-abort", false,
                   job->size - 1 - job->num_eof, job->size - 1);
    job_finish(job);
}

static void arm(opal_event_t *timer, double seconds)
{
    struct timeval tv = {.tv_sec = (time_t) seconds,
                         .tv_usec = (suseconds_t) ((seconds - (double) (time_t) seconds) * 1e6)};
    opal_event_del(timer);
    opal_event_add(timer, &tv);
}

static void send_all(job_t *job, uint16_t tag, int32_t value)
{
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_pack_int32(&buffer, value)) {
        for (orte_vpid_t v = 1; v < job->size; ++v) {
            if (!job->eof[v]) {
                job->ovl->send(job->overlay, v, tag, buffer.base, buffer.used);
            }
        }
    }
    opal_buffer_destruct(&buffer);
}

/* Kill the whole job (after grace_ms), and stop waiting for daemons that cannot answer. */
static void job_abort(job_t *job, int grace_ms)
{
    job->aborting = true;
    send_all(job, ORTE_SESSION_TAG_ABORT, grace_ms);
    arm(job->deadline_timer, (grace_ms > 0 ? grace_ms / 1000.0 : 0.0) + 5.0);
}

static const char *node_name(const job_t *job, uint32_t candidate)
{
    return candidate < job->launch.num_candidates ? job->candidate_names[candidate] : "?";
}

/* ------------------------------------------------------------------------------------------ */
/* messages from the session daemons */

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

static void recv_failure(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                         size_t length, void *arg)
{
    job_t *job = arg;
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
    if (job->aborting && job->signals > 0) {
        free(message);
        return; /* we asked for it */
    }
    char how[160], who[64];
    orte_proc_record_describe(&r, how, sizeof(how));
    describe_rank(job, r.rank, who, sizeof(who));
    const char *then = (2u == action) ? "; the job goes on without it (errmgr continue)" : "";
    if (ORTE_PROC_LOST == r.state) {
        opal_show_help(LAUNCH_HELP_FILE, "session-daemon-lost", false, job->spec->jobid,
                       node_name(job, r.node), then);
    } else if (UINT32_MAX == r.rank) {
        opal_show_help(LAUNCH_HELP_FILE, "session-daemon-cannot-start", false, job->spec->jobid,
                       node_name(job, r.node));
    } else if (ORTE_PROC_ABORTED == r.state) {
        /* MPI_Abort, PMI abort, herd_abort: the process's own words, if it gave any */
        opal_show_help(LAUNCH_HELP_FILE, "proc-aborted", false, job->spec->jobid, who,
                       node_name(job, r.node), (int) r.pid, how,
                       (NULL != message && '\0' != *message) ? ": " : "",
                       NULL != message ? message : "");
    } else if (r.pid > 0) {
        opal_show_help(LAUNCH_HELP_FILE, "proc-failed", false, job->spec->jobid, who,
                       node_name(job, r.node), (int) r.pid, how, then);
    } else {
        opal_show_help(LAUNCH_HELP_FILE, "proc-failed-no-pid", false, job->spec->jobid, who,
                       node_name(job, r.node), how, then);
    }
    fflush(stderr);
    free(message);
    if (0 == job->exit_status) {
        job->exit_status = orte_proc_record_status(&r);
    }
    if (1u == action && !job->aborting) {
        /* the shepherd is killing the job: stop waiting for it after the grace */
        job->aborting = true;
        arm(job->deadline_timer, (job->grace_ms > 0 ? job->grace_ms / 1000.0 : 0.0) + 5.0);
    }
}

static int by_rank(const void *a, const void *b)
{
    uint32_t ra = ((const orte_proc_record_t *) a)->rank;
    uint32_t rb = ((const orte_proc_record_t *) b)->rank;
    return (ra > rb) - (ra < rb);
}

static void recv_report(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                        size_t length, void *arg)
{
    job_t *job = arg;
    opal_buffer_t buffer;
    int32_t status = 0;
    uint32_t n = 0;
    opal_buffer_init(&buffer);
    if (job->report_received || HERD_SUCCESS != opal_buffer_load(&buffer, data, length) ||
        HERD_SUCCESS != opal_buffer_unpack_int32(&buffer, &status) ||
        HERD_SUCCESS != opal_buffer_unpack_uint32(&buffer, &n) ||
        n > opal_buffer_remaining(&buffer)) {
        opal_buffer_destruct(&buffer);
        return;
    }
    job->report = calloc(n > 0 ? n : 1, sizeof(*job->report));
    for (uint32_t i = 0; NULL != job->report && i < n; ++i) {
        if (HERD_SUCCESS != orte_proc_record_unpack(&buffer, &job->report[i])) {
            break;
        }
        job->num_report = i + 1;
    }
    opal_buffer_destruct(&buffer);
    if (NULL != job->report) {
        qsort(job->report, job->num_report, sizeof(*job->report), by_rank);
    }
    if (0 == job->exit_status && 0 != status) {
        job->exit_status = status;
    }
    job->report_received = true;
    check_finished(job);
}

static void recv_eof(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                     size_t length, void *arg)
{
    job_t *job = arg;
    if (src > 0 && src < job->size && !job->eof[src]) {
        job->eof[src] = true;
        job->num_eof++;
        check_finished(job);
    }
}

static void lost_cb(orte_overlay_t *overlay, orte_vpid_t peer, int status, const char *reason,
                    void *arg)
{
    job_t *job = arg;
    if (job->finished || peer == 0 || peer >= job->size) {
        return;
    }
    /* everything below it is cut off too */
    uint32_t cut = 0;
    for (orte_vpid_t v = 1; v < job->size; ++v) {
        bool below = false;
        for (orte_vpid_t u = v; u > 0 && !below; u = orte_radix_parent(u, job->launch.radix)) {
            below = (u == peer);
        }
        if (below && NULL != job->sink) {
            job->iof->sink_source_lost(job->sink, v);
        }
        if (below && !job->eof[v]) {
            job->eof[v] = true;
            job->num_eof++;
            cut++;
        }
    }
    if (cut > 0 && !job->start_failed) {
        /* one that said goodbye was told to stop (its node daemon is going away, and says
         * why); one that vanished is news, unless the job is already being stopped: then the
         * first loss was reported and this one follows from it (an abort written to a session
         * daemon that is leaving fails with a broken pipe) */
        if (HERD_SUCCESS != status && !job->aborting) {
            opal_show_help(LAUNCH_HELP_FILE, "session-daemon-vanished", false, job->spec->jobid,
                           node_name(job, job->launch.participants[peer - 1]), reason);
        }
        if (0 == job->exit_status) {
            job->exit_status = 1;
        }
        /* the shepherd may be the one gone: its report will not come */
        job->report_received = job->report_received || peer == ORTE_SESSION_SHEPHERD;
        job_abort(job, 0);
    }
    if (cut > 0) {
        fail_spawns(job);
    }
    check_finished(job);
}

static void check_cb(int status, const orte_grpcomm_result_t *result, void *cbdata)
{
    job_t *job = cbdata;
    if (NULL != job->start_timer) {
        opal_event_del(job->start_timer);
    }
    uint32_t failed = 0;
    char **others = NULL;
    for (uint32_t v = 1; HERD_SUCCESS == status && v < result->num_blobs && v < job->size; ++v) {
        if (0 == result->blobs[v].len) {
            continue;
        }
        const char *node = node_name(job, job->launch.participants[v - 1]);
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
        job->start_failed = true;
        if (0 == job->exit_status) {
            job->exit_status = 1;
        }
        check_finished(job);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* herdrun's own events */

static void job_error_cb(const char *jobid, const char *node, const char *message, void *arg)
{
    job_t *job = arg;
    fprintf(stderr, "%s", message);
    if (0 != strcmp(jobid, job->spec->jobid) && 0 != strcmp(jobid, "?")) {
        return;
    }
    if (0 == job->exit_status) {
        job->exit_status = 1;
    }
    job->start_failed = true;
    job_abort(job, 0);
}

static int launch_start_timeout = 60; /* herdrun_start_timeout */

static void start_timeout_cb(int fd, short what, void *arg)
{
    job_t *job = arg;
    uint32_t missing = job->size - 1 - job->num_eof;
    opal_show_help(LAUNCH_HELP_FILE, "start-timeout", false, job->spec->jobid, launch_start_timeout,
                   missing);
    if (0 == job->exit_status) {
        job->exit_status = 1;
    }
    job->start_failed = true;
    job_abort(job, 0);
}

static void grace_cb(int fd, short what, void *arg)
{
    job_abort(arg, 0);
}

static void signal_cb(int signo, void *arg)
{
    job_t *job = arg;
    if (job->finished) {
        return;
    }
    job->signals++;
    if (0 == job->exit_status) {
        job->exit_status = 128 + signo;
    }
    if (job->signals > 1) {
        opal_show_help(LAUNCH_HELP_FILE, "signal-again", false, strsignal(signo), job->spec->jobid);
        job_abort(job, 0);
        return;
    }
    opal_show_help(LAUNCH_HELP_FILE, "signal-forwarded", false, strsignal(signo), job->spec->jobid);
    job->aborting = true;
    send_all(job, ORTE_SESSION_TAG_SIGNAL, signo);
    arm(job->grace_timer, job->grace_ms / 1000.0);
    arm(job->deadline_timer, job->grace_ms / 1000.0 + 5.0);
}

/* herdrun's own stdout or stderr refused a write. A pipe nobody reads any more (herdrun ... |
 * head): the output has nowhere to go, so the job stops, as the writer in a pipeline stops
 * (exit 141, 128 + SIGPIPE). Anything else (a full disk): said once, and the job goes on, its
 * output to that stream lost, and herdrun exits 1 if the job itself succeeded. */
static void output_failed_cb(void *arg, int stream, int error)
{
    job_t *job = arg;
    const char *name = 1 == stream ? "standard output" : "standard error";
    job->output_lost = true;
    if (EPIPE != error) {
        opal_show_help(LAUNCH_HELP_FILE, "output-write-failed", false, name, strerror(error),
                       job->spec->jobid);
        return;
    }
    if (job->finished || job->aborting) {
        return;
    }
    opal_show_help(LAUNCH_HELP_FILE, "output-closed", false, name, job->spec->jobid);
    job->signals++; /* what the processes do now is our doing */
    if (0 == job->exit_status) {
        job->exit_status = 128 + SIGPIPE;
    }
    job_abort(job, job->grace_ms);
}

static void timeout_cb(int fd, short what, void *arg)
{
    job_t *job = arg;
    opal_show_help(LAUNCH_HELP_FILE, "timeout", false, job->spec->jobid, job->spec->timeout);
    job->signals++; /* what the processes do now is our doing */
    job->exit_status = ORTE_LAUNCH_TIMEOUT_STATUS;
    job_abort(job, job->grace_ms);
}

/* ------------------------------------------------------------------------------------------ */
/* the usage report */

static double seconds_of(uint64_t us)
{
    return (double) us / 1e6;
}

typedef struct {
    uint32_t count;
    uint64_t user_us;
    uint64_t sys_us;
    int64_t rss_kb;
} usage_totals_t;

/* Per candidate node, in one pass over the report (free the result); NULL if out of memory. */
static usage_totals_t *node_totals(const job_t *job)
{
    usage_totals_t *t = calloc(job->launch.num_candidates + 1, sizeof(*t));
    for (uint32_t i = 0; NULL != t && i < job->num_report; ++i) {
        const orte_proc_record_t *r = &job->report[i];
        if (r->node < job->launch.num_candidates) {
            t[r->node].count++;
            t[r->node].user_us += r->user_us;
            t[r->node].sys_us += r->sys_us;
            t[r->node].rss_kb += r->max_rss_kb;
        }
    }
    return t;
}

static void print_usage(job_t *job, FILE *out)
{
    uint64_t user = 0, sys = 0;
    int64_t rss = 0;
    double wall = 0;
    fprintf(out, "Resource usage of job %s (%u processes):\n", job->spec->jobid, job->num_report);
    fprintf(out, "  %6s  %-16s %8s  %-22s %9s %9s %9s %10s\n", "rank", "node", "pid", "status",
            "wall s", "user s", "sys s", "maxrss MB");
    for (uint32_t i = 0; i < job->num_report; ++i) {
        const orte_proc_record_t *r = &job->report[i];
        char how[64];
        if (ORTE_PROC_ABORTED == r->state) {
            snprintf(how, sizeof(how), "abort %d", r->exit_code);
        } else if (ORTE_PROC_UNFINALIZED == r->state) {
            snprintf(how, sizeof(how), "exit 0 (no finalize)");
        } else if (ORTE_PROC_EXITED != r->state) {
            snprintf(how, sizeof(how), "%s", ORTE_PROC_LOST == r->state ? "lost" : "not started");
        } else if (r->signaled) {
            snprintf(how, sizeof(how), "signal %d%s", r->signo, r->aborted ? " (aborted)" : "");
        } else {
            snprintf(how, sizeof(how), "exit %d", r->exit_code);
        }
        fprintf(out, "  %6u  %-16s %8d  %-22s %9.3f %9.3f %9.3f %10.1f\n", r->rank,
                node_name(job, r->node), (int) r->pid, how, (double) r->wall_ns / 1e9,
                seconds_of(r->user_us), seconds_of(r->sys_us), (double) r->max_rss_kb / 1024.0);
    }
    fprintf(out, "  per node:\n");
    usage_totals_t *per_node = node_totals(job);
    for (uint32_t c = 0; NULL != per_node && c < job->launch.num_candidates; ++c) {
        const usage_totals_t *t = &per_node[c];
        if (t->count > 0) {
            fprintf(out,
                    "    %-16s %6u process%s  user %9.3f s  sys %9.3f s  maxrss sum %10.1f MB\n",
                    node_name(job, c), t->count, 1 == t->count ? "  " : "es",
                    seconds_of(t->user_us), seconds_of(t->sys_us), (double) t->rss_kb / 1024.0);
        }
    }
    free(per_node);
    for (uint32_t i = 0; i < job->num_report; ++i) {
        user += job->report[i].user_us;
        sys += job->report[i].sys_us;
        rss += job->report[i].max_rss_kb;
        if ((double) job->report[i].wall_ns / 1e9 > wall) {
            wall = (double) job->report[i].wall_ns / 1e9;
        }
    }
    fprintf(out,
            "  job: %u processes, longest wall %.3f s, user %.3f s, sys %.3f s, maxrss sum "
            "%.1f MB, exit status %d\n",
            job->num_report, wall, seconds_of(user), seconds_of(sys), (double) rss / 1024.0,
            job->exit_status);
}

static void json_string(FILE *out, const char *text)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *) text; '\0' != *p; ++p) {
        if ('"' == *p || '\\' == *p) {
            fprintf(out, "\\%c", *p);
        } else if (*p < 0x20) {
            fprintf(out, "\\u%04x", *p);
        } else {
            fputc(*p, out);
        }
    }
    fputc('"', out);
}

static int write_usage_json(job_t *job, const char *path)
{
    FILE *out = fopen(path, "w");
    if (NULL == out) {
        opal_show_help(LAUNCH_HELP_FILE, "usage-report-write-failed", false, path, strerror(errno));
        return HERD_ERR_SILENT;
    }
    fprintf(out, "{\n  \"jobid\": ");
    json_string(out, job->spec->jobid);
    fprintf(out, ",\n  \"exit_status\": %d,\n  \"ranks\": [\n", job->exit_status);
    for (uint32_t i = 0; i < job->num_report; ++i) {
        const orte_proc_record_t *r = &job->report[i];
        fprintf(out, "    {\"rank\": %u, \"node\": ", r->rank);
        json_string(out, node_name(job, r->node));
        fprintf(out,
                ", \"pid\": %d, \"state\": \"%s\", \"exit_code\": %d, \"signal\": %d, "
                "\"wall_s\": %.6f, \"user_s\": %.6f, \"sys_s\": %.6f, \"max_rss_kb\": %" PRId64
                "}%s\n",
                (int) r->pid,
                ORTE_PROC_EXITED == r->state        ? (r->signaled ? "signaled" : "exited")
                : ORTE_PROC_LOST == r->state        ? "lost"
                : ORTE_PROC_ABORTED == r->state     ? "aborted"
                : ORTE_PROC_UNFINALIZED == r->state ? "unfinalized"
                                                    : "not_started",
                r->signaled ? 0 : r->exit_code, r->signaled ? r->signo : 0,
                (double) r->wall_ns / 1e9, seconds_of(r->user_us), seconds_of(r->sys_us),
                r->max_rss_kb, i + 1 < job->num_report ? "," : "");
    }
    fprintf(out, "  ],\n  \"nodes\": [\n");
    bool first = true;
    uint64_t tu = 0, ts = 0;
    int64_t tr = 0;
    usage_totals_t *per_node = node_totals(job);
    for (uint32_t c = 0; NULL != per_node && c < job->launch.num_candidates; ++c) {
        uint64_t nu = per_node[c].user_us, ns = per_node[c].sys_us;
        int64_t nr = per_node[c].rss_kb;
        uint32_t count = per_node[c].count;
        tu += nu;
        ts += ns;
        tr += nr;
        if (0 == count) {
            continue;
        }
        fprintf(out, "%s    {\"node\": ", first ? "" : ",\n");
        json_string(out, node_name(job, c));
        fprintf(out,
                ", \"processes\": %u, \"user_s\": %.6f, \"sys_s\": %.6f, "
                "\"max_rss_kb_sum\": %" PRId64 "}",
                count, seconds_of(nu), seconds_of(ns), nr);
        first = false;
    }
    free(per_node);
    fprintf(out,
            "\n  ],\n  \"job\": {\"processes\": %u, \"user_s\": %.6f, \"sys_s\": %.6f, "
            "\"max_rss_kb_sum\": %" PRId64 "}\n}\n",
            job->num_report, seconds_of(tu), seconds_of(ts), tr);
    if (0 != fclose(out)) {
        opal_show_help(LAUNCH_HELP_FILE, "usage-report-write-failed", false, path, strerror(errno));
        return HERD_ERR_SILENT;
    }
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* planning */

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

static const orte_inventory_t *job_inventory(const job_t *job, uint32_t node_index);

/* --display-map -v: each process's RM-assigned endpoints, as its session daemons will write them.
 */
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
static int display_map(job_t *job, const orte_rmaps_job_t *mjob, const orte_rmaps_map_t *map,
                       const uint32_t *per_node)
{
    if (NULL == job->options || job->options->verbose <= 0) {
        orte_rmaps_display_map(stdout, mjob, map);
        return HERD_SUCCESS;
    }
    orte_inventory_t **invs = calloc(mjob->num_nodes > 0 ? mjob->num_nodes : 1, sizeof(*invs));
    if (NULL == invs) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t c = 0; c < mjob->num_nodes; ++c) {
        invs[c] = (orte_inventory_t *) job_inventory(job, job->launch.node_index[c]);
    }
    orte_endpoints_job_t ejob = {.inventories = invs,
                                 .per_node = per_node,
                                 .num_nodes = mjob->num_nodes,
                                 .seq = job->spec->seq};
    orte_endpoints_plan_t plan;
    int rc = orte_endpoints_plan_build(&ejob, &plan);
    if (HERD_SUCCESS == rc) {
        orte_rmaps_display_map_annotated(stdout, mjob, map, annotate_endpoints, &plan);
        orte_endpoints_print(stdout, &plan, &ejob);
        orte_endpoints_plan_destruct(&plan);
    }
    free(invs);
    return rc;
}

/* Which candidates get processes (and an impossible map reported now, before anything runs). */
static int plan_job(job_t *job, orte_jobmap_nodes_t *nodes, orte_rmaps_app_t *apps)
{
    orte_rmaps_job_t mjob = {.nodes = nodes->nodes,
                             .num_nodes = nodes->num,
                             .apps = apps,
                             .num_apps = job->spec->num_apps,
                             .explain = 0 != (job->spec->flags & ORTE_JOB_FLAG_EXPLAIN)};
    plan_counts_t counts = {.per_node = calloc(nodes->num, sizeof(uint32_t)),
                            .num_nodes = nodes->num};
    uint32_t num_procs = 0;
    int rc;
    if (NULL == counts.per_node) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (job->spec->flags & ORTE_JOB_FLAG_DISPLAY_MAP) {
        orte_rmaps_map_t *map = NULL;
        rc = orte_rmaps_base_map_collect(&mjob, &map);
        if (HERD_SUCCESS == rc) {
            for (uint32_t i = 0; i < map->num_procs; ++i) {
                counts.per_node[map->procs[i].node]++;
            }
            counts.total = map->num_procs;
            rc = display_map(job, &mjob, map, counts.per_node);
            fflush(stdout);
            orte_rmaps_map_free(map);
        }
    } else {
        mjob.planned = plan_counts;
        rc = orte_rmaps_base_map_job(&mjob, never_emitted, &counts, &num_procs);
        if (HERD_ERR_TAKE_NEXT == rc) {
            rc = HERD_SUCCESS;
        }
    }
    if (HERD_SUCCESS == rc) {
        job->launch.participants = calloc(nodes->num, sizeof(uint32_t));
        if (NULL == job->launch.participants) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    for (uint32_t n = 0; HERD_SUCCESS == rc && n < nodes->num; ++n) {
        if (counts.per_node[n] > 0) {
            job->launch.participants[job->launch.num_participants++] = n;
        }
    }
    if (HERD_SUCCESS == rc && 0 == job->launch.num_participants) {
        opal_show_help(LAUNCH_HELP_FILE, "no-processes", false);
        rc = HERD_ERR_SILENT;
    }
    if (HERD_SUCCESS == rc) {
        /* what a spawn plans with */
        job->nodes = nodes;
        job->used = counts.per_node;
        job->num_procs = counts.total;
        job->next_id = counts.total;
        return rc;
    }
    free(counts.per_node);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* spawns: a process asks for more processes (MPI_Comm_spawn); herdrun plans them on the job's
 * nodes (reporting an impossible map now, once), then every session daemon maps and starts its
 * share and acknowledges; the asking daemon hears once all have. */

static void spawn_respond(job_t *job, orte_vpid_t requester, uint32_t req_id, int status,
                          uint32_t nspace, const char *error)
{
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_pack_uint32(&buffer, req_id) &&
        HERD_SUCCESS == opal_buffer_pack_int32(&buffer, status) &&
        HERD_SUCCESS == opal_buffer_pack_uint32(&buffer, nspace) &&
        HERD_SUCCESS == opal_buffer_pack_string(&buffer, NULL != error ? error : "")) {
        job->ovl->send(job->overlay, requester, ORTE_SESSION_TAG_SPAWN_RESP, buffer.base,
                       buffer.used);
    }
    opal_buffer_destruct(&buffer);
}

/* How many processes of the spawn go to each participant (an impossible map is reported). */
static int plan_spawn(job_t *job, const orte_job_spec_t *spec, uint32_t *per_part, uint32_t *total)
{
    uint32_t np = job->launch.num_participants;
    orte_rmaps_node_t *list = NULL;
    orte_rmaps_app_t *apps = NULL;
    uint32_t n = 0;
    int rc = orte_jobmap_spawn_nodes(job->nodes, job->launch.participants, np, job->used, &list);
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

/* What the job's processes of a spawn get that the asking process did not say. */
static int complete_spawn(job_t *job, orte_job_spec_t *c, uint32_t nspace)
{
    char jobid[OPAL_JOBDB_ID_MAX];
    snprintf(jobid, sizeof(jobid), "%s.%u", job->spec->jobid, nspace);
    free(c->jobid);
    c->jobid = strdup(jobid);
    c->seq = job->spec->seq;
    c->flags = job->spec->flags & ORTE_JOB_FLAG_REPORT_BINDINGS;
    c->oversubscribe = job->spec->oversubscribe;
    c->nooversubscribe = job->spec->nooversubscribe;
    c->stdin_target = ORTE_IOF_STDIN_NONE;
    c->kill_grace_ms = job->spec->kill_grace_ms;
    opal_argv_free(c->hosts);
    c->hosts = NULL;
    opal_argv_free(c->mca);
    c->mca = opal_argv_copy(job->spec->mca);
    for (uint32_t a = 0; a < c->num_apps; ++a) {
        orte_job_app_t *app = &c->apps[a];
        free(app->map_by);
        free(app->rank_by);
        free(app->bind_to);
        opal_argv_free(app->seq_hosts);
        app->map_by = app->rank_by = app->bind_to = NULL;
        app->seq_hosts = NULL;
        if (NULL == app->cwd && NULL != job->spec->apps[0].cwd &&
            NULL == (app->cwd = strdup(job->spec->apps[0].cwd))) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    return NULL == c->jobid || (NULL != job->spec->mca && NULL == c->mca) ? HERD_ERR_OUT_OF_RESOURCE
                                                                          : HERD_SUCCESS;
}

static void recv_spawn_req(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                           size_t length, void *arg)
{
    job_t *job = arg;
    opal_buffer_t buffer;
    orte_job_spawn_t *sp = NULL;
    opal_buffer_init(&buffer);
    int rc = opal_buffer_load(&buffer, data, length);
    if (HERD_SUCCESS == rc) {
        rc = orte_job_spawn_unpack(&buffer, &sp);
    }
    opal_buffer_destruct(&buffer);
    if (HERD_SUCCESS != rc || src == 0 || src >= job->size) {
        opal_show_help(LAUNCH_HELP_FILE, "malformed-spawn-request", false, src);
        orte_job_spawn_free(sp);
        return;
    }
    uint32_t np = job->launch.num_participants;
    uint32_t *per_part = calloc(np, sizeof(*per_part));
    uint32_t total = 0;
    uint32_t nspace = job->num_spawns + 1;
    const char *error = NULL;
    if (job->aborting) {
        rc = HERD_ERR_UNREACH;
        error = "the job is being aborted";
    } else if (NULL == per_part || NULL == job->nodes) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        error = "herdrun is out of memory";
    } else if (HERD_SUCCESS != (rc = complete_spawn(job, sp->spec, nspace))) {
        error = "herdrun is out of memory";
    } else if (HERD_SUCCESS != (rc = plan_spawn(job, sp->spec, per_part, &total))) {
        error = "the spawned processes do not fit on the job's nodes (herdrun said why); "
                "start the job with --oversubscribe or more slots";
    } else if ((uint64_t) job->next_id + total > UINT32_MAX - 1) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        error = "the job has spawned too many processes";
    }
    spawned_t *grown =
        (HERD_SUCCESS == rc) ? realloc(job->spawns, (job->num_spawns + 1) * sizeof(*grown)) : NULL;
    spawn_op_t *op = (NULL != grown) ? calloc(1, sizeof(*op)) : NULL;
    if (HERD_SUCCESS == rc && NULL != grown) {
        job->spawns = grown;
    }
    if (HERD_SUCCESS == rc && NULL == op) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        error = "herdrun is out of memory";
    }
    if (HERD_SUCCESS != rc) {
        spawn_respond(job, src, sp->req_id, rc, 0, error);
        free(per_part);
        orte_job_spawn_free(sp);
        return;
    }
    job->spawns[job->num_spawns++] = (spawned_t){.offset = job->next_id, .size = total};
    for (uint32_t p = 0; p < np; ++p) {
        job->used[job->launch.participants[p]] += per_part[p];
    }
    free(per_part);
    sp->nspace = nspace;
    sp->offset = job->next_id;
    sp->requester = src;
    job->next_id += total;
    *op = (spawn_op_t){
        .next = job->spawn_ops, .nspace = nspace, .requester = src, .req_id = sp->req_id};
    job->spawn_ops = op;
    opal_buffer_init(&buffer);
    rc = orte_job_spawn_pack(&buffer, sp);
    for (orte_vpid_t v = 1; HERD_SUCCESS == rc && v < job->size; ++v) {
        if (HERD_SUCCESS !=
            job->ovl->send(job->overlay, v, ORTE_SESSION_TAG_SPAWN, buffer.base, buffer.used)) {
            op->acks++; /* gone: its loss is reported on its own */
            op->status = HERD_ERR_UNREACH;
        }
    }
    opal_buffer_destruct(&buffer);
    orte_job_spawn_free(sp);
}

static void spawn_op_done(job_t *job, spawn_op_t *op)
{
    for (spawn_op_t **p = &job->spawn_ops; NULL != *p; p = &(*p)->next) {
        if (*p == op) {
            *p = op->next;
            break;
        }
    }
    spawn_respond(job, op->requester, op->req_id, op->status, op->nspace, op->error);
    free(op->error);
    free(op);
    check_finished(job);
}

static void recv_spawn_ack(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                           size_t length, void *arg)
{
    job_t *job = arg;
    opal_buffer_t buffer;
    uint32_t nspace = 0, started = 0;
    int32_t status = 0;
    char *error = NULL;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS != opal_buffer_load(&buffer, data, length) ||
        HERD_SUCCESS != opal_buffer_unpack_uint32(&buffer, &nspace) ||
        HERD_SUCCESS != opal_buffer_unpack_int32(&buffer, &status) ||
        HERD_SUCCESS != opal_buffer_unpack_uint32(&buffer, &started) ||
        HERD_SUCCESS != opal_buffer_unpack_string(&buffer, &error) || src == 0 ||
        src >= job->size || status > 0) {
        opal_buffer_destruct(&buffer);
        free(error);
        return;
    }
    opal_buffer_destruct(&buffer);
    if (started > 0 && job->eof[src]) {
        /* it had finished: it has processes again, and will say when they are done */
        job->eof[src] = false;
        job->num_eof--;
    }
    for (spawn_op_t *op = job->spawn_ops; NULL != op; op = op->next) {
        if (op->nspace == nspace) {
            if (HERD_SUCCESS != status && HERD_SUCCESS == op->status) {
                op->status = status;
                op->error = (NULL != error && '\0' != *error) ? strdup(error) : NULL;
            }
            if (++op->acks + 1 >= job->size) {
                spawn_op_done(job, op);
            }
            break;
        }
    }
    free(error);
}

/* A spawn in flight cannot complete once a daemon is gone: it fails. */
static void fail_spawns(job_t *job)
{
    while (NULL != job->spawn_ops) {
        spawn_op_t *op = job->spawn_ops;
        if (HERD_SUCCESS == op->status) {
            op->status = HERD_ERR_UNREACH;
            free(op->error);
            op->error = strdup("a session daemon of the job was lost");
        }
        spawn_op_done(job, op);
    }
}

/* "rank 3", or "rank 1 of spawn 2" for a spawned process's id. */
static void describe_rank(const job_t *job, uint32_t id, char *text, size_t size)
{
    for (uint32_t k = job->num_spawns; k > 0; --k) {
        const spawned_t *sp = &job->spawns[k - 1];
        if (id >= sp->offset && id - sp->offset < sp->size) {
            snprintf(text, size, "rank %u of spawn %u", id - sp->offset, k);
            return;
        }
    }
    snprintf(text, size, "rank %u", id);
}

static const orte_inventory_t *job_inventory(const job_t *job, uint32_t node_index)
{
    if (NULL != job->client) {
        return orte_dvm_client_inventory(job->client, node_index);
    }
    return (NULL != job->dvm) ? orte_dvm_node_inventory(job->dvm, node_index) : job->local_inv;
}

/* The nodes the job may use: every DVM node, or those --host names (each must be one). */
static int choose_candidates(job_t *job)
{
    const orte_allocation_t *alloc = job->alloc;
    uint32_t n = alloc->num_nodes;
    job->launch.node_index = calloc(n, sizeof(uint32_t));
    job->launch.slots = calloc(n, sizeof(uint32_t));
    job->launch.max_slots = calloc(n, sizeof(uint32_t));
    job->candidate_names = calloc(n, sizeof(char *));
    if (NULL == job->launch.node_index || NULL == job->launch.slots ||
        NULL == job->launch.max_slots || NULL == job->candidate_names) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (char *const *h = job->spec->hosts; NULL != h && NULL != *h; ++h) {
        bool known = false;
        for (uint32_t i = 0; i < n && !known; ++i) {
            known = 0 == strcmp(alloc->nodes[i].name, *h);
        }
        if (!known) {
            opal_show_help(LAUNCH_HELP_FILE, "unknown-host", false, *h);
            return HERD_ERR_SILENT;
        }
    }
    for (uint32_t i = 0; i < n; ++i) {
        if (NULL != job->spec->hosts &&
            opal_argv_find(job->spec->hosts, alloc->nodes[i].name) < 0) {
            continue;
        }
        uint32_t c = job->launch.num_candidates++;
        job->launch.node_index[c] = i;
        job->launch.slots[c] = alloc->nodes[i].slots;
        job->launch.max_slots[c] = alloc->nodes[i].max_slots;
        job->candidate_names[c] = alloc->nodes[i].name;
    }
    return HERD_SUCCESS;
}

/* The XML of every real topology among the candidates, when they do not all share one (a
 * session daemon knows its own node's). */
static int topology_pairs(job_t *job, char ***all_pairs)
{
    const char *first_real = NULL;
    bool several = false;
    for (uint32_t c = 0; c < job->launch.num_candidates; ++c) {
        const orte_inventory_t *inv = job_inventory(job, job->launch.node_index[c]);
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
    const orte_allocation_t *alloc = job->alloc;
    for (uint32_t i = 0; i < alloc->num_nodes; ++i) {
        const orte_inventory_t *inv = job_inventory(job, i);
        if (NULL == inv->xml || NULL != inv->synthetic) {
            continue;
        }
        if (HERD_SUCCESS != opal_argv_append(all_pairs, inv->signature) ||
            HERD_SUCCESS != opal_argv_append(all_pairs, inv->xml)) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        if (several && (HERD_SUCCESS != opal_argv_append(&job->launch.xml_pairs, inv->signature) ||
                        HERD_SUCCESS != opal_argv_append(&job->launch.xml_pairs, inv->xml))) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    return HERD_SUCCESS;
}

static int grpcomm_send(void *ctx, orte_vpid_t dst, uint16_t tag, const void *data, size_t len)
{
    job_t *job = ctx;
    return job->ovl->send(job->overlay, dst, tag, data, len);
}

static void grpcomm_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                         size_t length, void *arg)
{
    job_t *job = arg;
    job->gc->deliver(job->grpcomm, src, tag, data, length);
}

/* ------------------------------------------------------------------------------------------ */
/* I/O forwarding */

static int iof_send(void *ctx, orte_vpid_t dst, int msg, const struct iovec *iov, int iovcnt)
{
    job_t *job = ctx;
    if (NULL != job->source && ORTE_SESSION_SHEPHERD == dst) {
        /* our own source: a call, not a message */
        return job->iof->source_deliver(job->source, 0, msg, iov, iovcnt);
    }
    if (NULL == job->overlay) {
        return HERD_ERR_UNREACH;
    }
    return job->ovl->sendv(job->overlay, dst, (uint16_t) (ORTE_SESSION_TAG_IOF + msg), iov, iovcnt);
}

/* From our own source (the pipes of a one-node job) straight to the sink. */
static int iof_send_local(void *ctx, orte_vpid_t dst, int msg, const struct iovec *iov, int iovcnt)
{
    job_t *job = ctx;
    return job->iof->sink_deliver(job->sink, ORTE_SESSION_SHEPHERD, msg, iov, iovcnt);
}

static void iof_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                     size_t length, void *arg)
{
    job_t *job = arg;
    struct iovec iov = {.iov_base = (void *) data, .iov_len = length};
    job->iof->sink_deliver(job->sink, src, tag - ORTE_SESSION_TAG_IOF, &iov, 1);
}

static void iof_drained(void *cbdata)
{
    job_t *job = cbdata;
    job->source_drained = true;
    check_finished(job);
}

/* Pipes the session daemon handed over: ours to read from now on. */
static void take_pipes(job_t *job)
{
    while (job->iof_sock >= 0) {
        uint32_t rank = 0;
        int fds[3];
        int rc = orte_iof_base_recv_fds(job->iof_sock, &rank, fds);
        if (HERD_ERR_NOT_FOUND == rc) {
            return;
        }
        if (HERD_SUCCESS != rc) {
            /* the session daemon is gone (or spoke nonsense): nothing more comes this way */
            if (NULL != job->iof_event) {
                opal_event_free(job->iof_event);
                job->iof_event = NULL;
            }
            close(job->iof_sock);
            job->iof_sock = -1;
            return;
        }
        if (ORTE_IOF_RANK_DAEMON == rank) {
            job->iof->source_all_added(job->source);
        } else if (HERD_SUCCESS != (rc = job->iof->source_add(job->source, rank, fds))) {
            opal_show_help(LAUNCH_HELP_FILE, "output-forward-failed", false, rank,
                           opal_strerror(rc));
        }
    }
}

static void pipes_cb(int fd, short what, void *arg)
{
    take_pipes(arg);
}

/* A tool attaches: it gets the output from now on, if it is one of ours. */
static void attach_cb(int fd, short what, void *arg)
{
    job_t *job = arg;
    int conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
    if (conn < 0) {
        return;
    }
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (0 != getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &len) || cred.uid != getuid()) {
        close(conn);
        return;
    }
    job->iof->sink_attach(job->sink, conn);
}

static int open_attach(job_t *job)
{
    char path[PATH_MAX];
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int rc = orte_dvm_job_iof_path(orte_dvm_client_tool_path(job->client), job->spec->seq, path,
                                   sizeof(path));
    if (HERD_SUCCESS != rc || strlen(path) >= sizeof(addr.sun_path)) {
        return HERD_ERR_BAD_PARAM;
    }
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
    job->attach_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (job->attach_fd < 0) {
        return HERD_ERR_IN_ERRNO;
    }
    unlink(path); /* a job of a DVM that died with -9 */
    if (0 != bind(job->attach_fd, (struct sockaddr *) &addr, sizeof(addr)) ||
        0 != listen(job->attach_fd, 16)) {
        return HERD_ERR_IN_ERRNO;
    }
    job->attach_path = strdup(path);
    rc = opal_event_fd_create(job->base, job->attach_fd, OPAL_EVENT_READ | OPAL_EVENT_PERSIST,
                              attach_cb, job, &job->attach_event);
    if (HERD_SUCCESS == rc) {
        opal_event_add(job->attach_event, NULL);
    }
    return rc;
}

static int open_iof(job_t *job)
{
    int rc = orte_iof_base_open();
    if (HERD_SUCCESS != rc) {
        opal_show_help(LAUNCH_HELP_FILE, "no-iof", false, opal_strerror(rc));
        return HERD_ERR_SILENT;
    }
    job->iof = orte_iof_base_module();
    const orte_job_spec_t *spec = job->spec;
    orte_iof_sink_config_t config = {
        .base = job->base,
        .jobseq = spec->seq,
        .flags = ((spec->flags & ORTE_JOB_FLAG_TAG_OUTPUT) ? ORTE_IOF_FLAG_TAG : 0) |
                 ((spec->flags & ORTE_JOB_FLAG_TIMESTAMP_OUTPUT) ? ORTE_IOF_FLAG_TIMESTAMP : 0) |
                 (job->options->output_nocopy ? ORTE_IOF_FLAG_NOCOPY : 0),
        .output_dir = job->options->output_dir,
        .stdin_target = spec->stdin_target,
        .num_sources = job->size - 1,
        .stdin_fd = STDIN_FILENO,
        .stdout_fd = STDOUT_FILENO,
        .stderr_fd = STDERR_FILENO,
        .transport = {.send = iof_send, .ctx = job},
        .output_failed = output_failed_cb,
        .cbdata = job,
    };
    /* a terminal in the background would stop us (SIGTTIN) at the first read */
    if (isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) != getpgrp()) {
        config.stdin_target = ORTE_IOF_STDIN_NONE;
    }
    /* Without a DVM the session daemon is our child and its processes run here: a pipe or a
     * file for one rank (an open stdin that is not a terminal) is given to it as its stdin,
     * with no copy through us (half the time of forwarding 1M lines). A terminal stays ours:
     * the process is in a group of its own, which the terminal would stop at its first read. */
    if (NULL == job->dvm && NULL == job->client && config.stdin_target >= 0 &&
        fcntl(STDIN_FILENO, F_GETFD) >= 0 && !isatty(STDIN_FILENO)) {
        job->stdin_direct = true;
        config.stdin_target = ORTE_IOF_STDIN_NONE;
    }
    rc = job->iof->sink_create(&config, &job->sink);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (NULL != job->client && HERD_SUCCESS != (rc = open_attach(job))) {
        /* the job runs all the same: only attaching is not possible */
        opal_show_help(LAUNCH_HELP_FILE, "attach-unavailable", false, job->spec->jobid,
                       HERD_ERR_IN_ERRNO == rc ? strerror(errno) : opal_strerror(rc));
    }
    if (NULL != job->dvm || NULL != job->client) {
        return HERD_SUCCESS;
    }
    orte_iof_source_config_t local = {
        .base = job->base,
        .vpid = ORTE_SESSION_SHEPHERD,
        .sink = 0,
        .stdin_target = config.stdin_target,
        .transport = {.send = iof_send_local, .ctx = job},
        .drained = iof_drained,
        .cbdata = job,
    };
    return job->iof->source_create(&local, &job->source);
}

static int open_sink(job_t *job)
{
    orte_overlay_config_t config = {.base = job->base,
                                    .vpid = 0,
                                    .num_daemons = job->size,
                                    .radix = job->launch.radix,
                                    .dvm_id = job->spec->jobid};
    memcpy(config.secret, job->spec->secret, sizeof(config.secret));
    job->ovl = orte_overlay_base_module();
    int rc = job->ovl->init(&config, &job->overlay);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    job->ovl->set_lost_callback(job->overlay, lost_cb, job);
    const struct {
        uint16_t tag;
        orte_overlay_recv_cb_t cb;
    } handlers[] = {
        {ORTE_SESSION_TAG_OUTPUT, recv_output},       {ORTE_SESSION_TAG_FAILURE, recv_failure},
        {ORTE_SESSION_TAG_REPORT, recv_report},       {ORTE_SESSION_TAG_EOF, recv_eof},
        {ORTE_SESSION_TAG_SPAWN_REQ, recv_spawn_req}, {ORTE_SESSION_TAG_SPAWN_ACK, recv_spawn_ack}};
    for (size_t i = 0; i < sizeof(handlers) / sizeof(handlers[0]); ++i) {
        rc = job->ovl->register_recv(job->overlay, handlers[i].tag, handlers[i].cb, job);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
    if (HERD_SUCCESS != (rc = open_iof(job))) {
        return rc;
    }
    for (int m = 0; m < ORTE_IOF_NUM_MSGS; ++m) {
        rc = job->ovl->register_recv(job->overlay, (uint16_t) (ORTE_SESSION_TAG_IOF + m), iof_recv,
                                     job);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
    job->gc = orte_grpcomm_base_module();
    orte_grpcomm_transport_t transport = {.me = 0,
                                          .num_daemons = job->size,
                                          .radix = job->launch.radix,
                                          .send = grpcomm_send,
                                          .ctx = job};
    rc = job->gc->create(&transport, &job->grpcomm);
    for (uint16_t t = 0; HERD_SUCCESS == rc && t < ORTE_GRPCOMM_NUM_TAGS; ++t) {
        rc = job->ovl->register_recv(job->overlay, (uint16_t) (ORTE_GRPCOMM_TAG_BASE + t),
                                     grpcomm_recv, job);
    }
    /* the session daemon we fork gets its end of a socketpair (start_job): nothing to listen
     * on, no port open on this host for the job */
    bool forking = NULL == job->dvm && NULL == job->client && NULL != job->ovl->adopt_peer;
    if (HERD_SUCCESS == rc && !forking) {
        rc = job->ovl->listen(job->overlay, &job->spec->sink_uri);
    }
    if (HERD_SUCCESS == rc) {
        rc = job->gc->allgather(job->grpcomm, ORTE_SESSION_COLL_CHECK, NULL, 0, check_cb, job);
    }
    return rc;
}

static int start_job(job_t *job, const opal_buffer_t *message);

void orte_launch_check_settings(void)
{
    opal_mca_framework_t *all[] = {HERD_MCA_opal_FRAMEWORKS HERD_MCA_orte_FRAMEWORKS NULL};
    const char *prefixes[sizeof(all) / sizeof(all[0]) + 3];
    size_t n = 0;
    for (size_t i = 0; NULL != all[i]; ++i) {
        /* a framework loading only its selection does not know its other components' names */
        if (all[i]->registered && !all[i]->load_selected_only) {
            prefixes[n++] = all[i]->name;
            /* a name under the framework that no loaded component knows may belong to one it
             * left unloaded (and if not, the suggestion should consider those too) */
            if (all[i]->num_deferred > 0 && opal_mca_var_unknown_under(all[i]->name)) {
                (void) opal_mca_framework_load_deferred(all[i]);
            }
        }
    }
    if (opal_mca_var_find("herdrun_direct") >= 0) {
        prefixes[n++] = "herdrun"; /* herdrun's own group, registered by herdrun only */
    }
    prefixes[n++] = "mca_base";
    prefixes[n] = NULL;
    (void) opal_mca_var_check_unknown_under(prefixes);
}

static int launch_run(job_t *job, orte_job_spec_t *spec, const orte_launch_options_t *options,
                      int *exit_status)
{
    orte_jobmap_nodes_t nodes;
    orte_rmaps_app_t *apps = NULL;
    orte_inventory_t **inventories = NULL;
    char **all_pairs = NULL;
    opal_buffer_t message;
    int rc;

    memset(&nodes, 0, sizeof(nodes));
    opal_buffer_init(&message);
    job->spec = spec;
    job->options = options;
    job->launch.spec = spec;
    job->grace_ms =
        (spec->kill_grace_ms >= 0) ? spec->kill_grace_ms : orte_odls_base_kill_grace_ms();
    spec->kill_grace_ms = job->grace_ms;

    char jobid[128];
    if (NULL != job->dvm) {
        spec->seq = orte_dvm_next_job_seq(job->dvm);
        snprintf(jobid, sizeof(jobid), "%s.%u", orte_dvm_id(job->dvm), spec->seq);
    } else if (NULL != job->client) {
        spec->seq = orte_dvm_client_seq(job->client);
        snprintf(jobid, sizeof(jobid), "%s.%u", orte_dvm_client_id(job->client), spec->seq);
    } else {
        uint8_t id[8];
        if (sizeof(id) != getrandom(id, sizeof(id), 0)) {
            rc = HERD_ERR_IN_ERRNO;
            goto out;
        }
        spec->seq = 1;
        snprintf(jobid, sizeof(jobid), "%02x%02x%02x%02x%02x%02x%02x%02x.1", id[0], id[1], id[2],
                 id[3], id[4], id[5], id[6], id[7]);
    }
    free(spec->jobid);
    spec->jobid = strdup(jobid);
    if (NULL == spec->jobid ||
        sizeof(spec->secret) != getrandom(spec->secret, sizeof(spec->secret), 0)) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }

    if (HERD_SUCCESS != (rc = choose_candidates(job)) ||
        HERD_SUCCESS != (rc = topology_pairs(job, &all_pairs))) {
        goto out;
    }
    inventories = calloc(job->launch.num_candidates, sizeof(*inventories));
    if (NULL == inventories) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    for (uint32_t c = 0; c < job->launch.num_candidates; ++c) {
        inventories[c] = (orte_inventory_t *) job_inventory(job, job->launch.node_index[c]);
    }
    if (HERD_SUCCESS != (rc = orte_rmaps_base_open())) {
        opal_show_help(LAUNCH_HELP_FILE, "no-rmaps", false, opal_strerror(rc));
        rc = HERD_ERR_SILENT;
        goto out;
    }
    /* The session daemons of a DVM this herdrun starts (or forks, on this host alone) use the
     * same installation and selections: one that names no usable component is said here, before
     * anything starts (the framework says which names exist); a forked session daemon finds
     * them selected already. A running DVM (--dvm-uri) checks its own. */
    if (NULL == job->client) {
        const char *missing = NULL;
        if (HERD_SUCCESS != (rc = orte_odls_base_open())) {
            missing = "no-odls";
        } else if (HERD_SUCCESS != (rc = orte_errmgr_base_open())) {
            missing = "no-errmgr";
        }
        if (NULL != missing) {
            opal_show_help(LAUNCH_HELP_FILE, missing, false, opal_strerror(rc));
            rc = HERD_ERR_SILENT;
            goto out;
        }
    }
    if (HERD_SUCCESS !=
            (rc = orte_jobmap_nodes_build(inventories, job->launch.slots, job->launch.max_slots,
                                          job->launch.num_candidates, all_pairs, &nodes)) ||
        HERD_SUCCESS != (rc = orte_jobmap_apps(spec, &apps)) ||
        HERD_SUCCESS != (rc = plan_job(job, &nodes, apps))) {
        goto out;
    }
    if (spec->stdin_target >= 0 && (uint32_t) spec->stdin_target >= job->num_procs) {
        opal_show_help(LAUNCH_HELP_FILE, "bad-stdin-rank", false, (int) spec->stdin_target,
                       job->num_procs, job->num_procs - 1);
        rc = HERD_ERR_SILENT;
        goto out;
    }
    job->size = job->launch.num_participants + 1;
    job->eof = calloc(job->size, sizeof(*job->eof));
    if (NULL == job->eof) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    bool launching = 0 == (spec->flags & ORTE_JOB_FLAG_DO_NOT_LAUNCH);
    if (launching && HERD_SUCCESS != (rc = open_sink(job))) {
        if (HERD_ERR_SILENT != rc) {
            opal_show_help(LAUNCH_HELP_FILE, "endpoint-failed", false, opal_strerror(rc));
        }
        rc = HERD_ERR_SILENT;
        goto out;
    }
    if (HERD_SUCCESS != (rc = orte_job_launch_pack(&message, &job->launch))) {
        goto out;
    }
    if (options->verbose > 0) {
        printf("launch message: %zu bytes (%u app%s, %u candidate nodes, %u with processes)\n",
               message.used, spec->num_apps, 1 == spec->num_apps ? "" : "s",
               job->launch.num_candidates, job->launch.num_participants);
        fflush(stdout);
    }
    orte_launch_check_settings();
    if (!launching) {
        *exit_status = 0;
        rc = HERD_SUCCESS;
        goto out;
    }
    if (HERD_SUCCESS != (rc = opal_event_timer_create(job->base, false, deadline_cb, job,
                                                      &job->deadline_timer)) ||
        HERD_SUCCESS !=
            (rc = opal_event_timer_create(job->base, false, grace_cb, job, &job->grace_timer)) ||
        HERD_SUCCESS != (rc = opal_event_timer_create(job->base, false, timeout_cb, job,
                                                      &job->timeout_timer)) ||
        HERD_SUCCESS != (rc = opal_event_timer_create(job->base, false, start_timeout_cb, job,
                                                      &job->start_timer))) {
        goto out;
    }
    arm(job->start_timer, (double) launch_start_timeout);
    if (spec->timeout > 0) {
        arm(job->timeout_timer, (double) spec->timeout);
    }
    if (HERD_SUCCESS != (rc = start_job(job, &message))) {
        goto out;
    }
    opal_event_base_loop(job->base, false);
    if (NULL != job->dvm) {
        orte_dvm_root_set_job_error_cb(job->dvm, NULL, NULL);
        orte_dvm_root_set_signal_cb(job->dvm, NULL, NULL);
    }
    if (!job->finished) {
        /* the loop ended under us: the DVM failed (it said why) and took the job with it */
        if (0 == job->exit_status) {
            job->exit_status = 1;
        }
    }
    if ((spec->flags & ORTE_JOB_FLAG_REPORT_USAGE) && job->report_received) {
        fflush(stdout);
        print_usage(job, stdout);
        fflush(stdout);
        if (NULL != options->report_usage_file &&
            HERD_SUCCESS != write_usage_json(job, options->report_usage_file) &&
            0 == job->exit_status) {
            job->exit_status = 1;
        }
    }
    if (job->output_lost && 0 == job->exit_status) {
        job->exit_status = 1; /* as a program whose output could not be written */
    }
    *exit_status = job->exit_status;
    rc = HERD_SUCCESS;

out:
    if (NULL != job->attach_event) {
        opal_event_free(job->attach_event);
        job->attach_event = NULL;
    }
    if (job->attach_fd >= 0) {
        close(job->attach_fd);
        job->attach_fd = -1;
    }
    if (NULL != job->attach_path) {
        unlink(job->attach_path);
        free(job->attach_path);
        job->attach_path = NULL;
    }
    if (NULL != job->source) {
        job->iof->source_destroy(job->source);
        job->source = NULL;
    }
    if (NULL != job->iof_event) {
        opal_event_free(job->iof_event);
        job->iof_event = NULL;
    }
    if (job->iof_sock >= 0) {
        close(job->iof_sock);
        job->iof_sock = -1;
    }
    if (NULL != job->sink) {
        /* what waits for a slow reader is written before herdrun exits */
        job->iof->sink_destroy(job->sink);
        job->sink = NULL;
    }
    orte_iof_base_close();
    if (NULL != job->overlay) {
        /* goodbye: every session daemon sees its parent leave in order and exits */
        job->ovl->finalize(job->overlay);
        job->overlay = NULL;
        opal_event_base_poll(job->base);
    }
    if (NULL != job->grpcomm) {
        job->gc->destroy(job->grpcomm);
    }
    if (NULL != job->deadline_timer) {
        opal_event_free(job->deadline_timer);
    }
    if (NULL != job->grace_timer) {
        opal_event_free(job->grace_timer);
    }
    if (NULL != job->timeout_timer) {
        opal_event_free(job->timeout_timer);
    }
    if (NULL != job->start_timer) {
        opal_event_free(job->start_timer);
    }
    if (job->size > 0) {
        /* a session daemon killed with -9 on this host cannot remove its segments */
        for (uint32_t c = 0; c < job->launch.num_candidates && NULL != spec->jobid; ++c) {
            char name[256], launch_tag[300];
            snprintf(launch_tag, sizeof(launch_tag), "%s.launch", spec->jobid);
            if (HERD_SUCCESS ==
                opal_jobdb_segment_name(spec->jobid, job->candidate_names[c], name, sizeof(name))) {
                shm_unlink(name);
            }
            if (HERD_SUCCESS ==
                opal_jobdb_segment_name(launch_tag, job->candidate_names[c], name, sizeof(name))) {
                shm_unlink(name);
            }
        }
    }
    opal_buffer_destruct(&message);
    orte_jobmap_nodes_destruct(&nodes);
    orte_rmaps_base_close();
    if (NULL == job->client) {
        orte_errmgr_base_close();
        orte_odls_base_close();
    }
    free(apps);
    free(inventories);
    opal_argv_free(all_pairs);
    free(job->eof);
    free(job->report);
    free(job->used);
    free(job->spawns);
    while (NULL != job->spawn_ops) {
        spawn_op_t *op = job->spawn_ops;
        job->spawn_ops = op->next;
        free(op->error);
        free(op);
    }
    free(job->candidate_names);
    free(job->launch.node_index);
    free(job->launch.slots);
    free(job->launch.max_slots);
    free(job->launch.participants);
    opal_argv_free(job->launch.xml_pairs);
    return rc;
}

/* Hand the launch to the DVM, or (no DVM) fork this node's session daemon. */
static int start_job(job_t *job, const opal_buffer_t *message)
{
    int rc;
    if (NULL != job->dvm) {
        orte_dvm_root_set_job_error_cb(job->dvm, job_error_cb, job);
        orte_dvm_root_set_signal_cb(job->dvm, signal_cb, job);
        rc = orte_dvm_root_command(job->dvm, ORTE_DVM_CMD_LAUNCH, message->base, message->used);
        if (HERD_SUCCESS != rc) {
            opal_show_help(LAUNCH_HELP_FILE, "launch-send-failed", false, opal_strerror(rc));
            return HERD_ERR_SILENT;
        }
        return HERD_SUCCESS;
    }
    if (NULL != job->client) {
        rc = orte_dvm_client_launch(job->client, message->base, message->used, job_error_cb, job);
        if (HERD_SUCCESS != rc) {
            opal_show_help(LAUNCH_HELP_FILE, "launch-send-failed", false, opal_strerror(rc));
            return HERD_ERR_SILENT;
        }
        return HERD_SUCCESS;
    }
    opal_buffer_t inv, segment;
    opal_buffer_init(&inv);
    opal_buffer_init(&segment);
    rc = orte_inventory_pack(&inv, job->local_inv, false);
    if (HERD_SUCCESS == rc) {
        const uint8_t *blob = inv.base;
        size_t len = inv.used;
        rc = orte_session_handoff_pack(&segment, job->local_inv->node_name, 0, message->base,
                                       message->used, &blob, &len, 1, job->local_inv->signature,
                                       job->local_inv->xml);
    }
    opal_buffer_destruct(&inv);
    if (HERD_SUCCESS != rc) {
        opal_buffer_destruct(&segment);
        return rc;
    }
    /* pair: the processes' pipes come to us over it; link: our overlay connection to the
     * daemon, when it has no sink_uri to dial */
    int pair[2], link[2] = {-1, -1};
    if (0 != socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair)) {
        opal_show_help(LAUNCH_HELP_FILE, "io-socket-failed", false, strerror(errno));
        opal_buffer_destruct(&segment);
        return HERD_ERR_SILENT;
    }
    if (NULL == job->spec->sink_uri &&
        0 != socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, link)) {
        opal_show_help(LAUNCH_HELP_FILE, "session-socket-failed", false, strerror(errno));
        close(pair[0]);
        close(pair[1]);
        opal_buffer_destruct(&segment);
        return HERD_ERR_SILENT;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (0 == pid) {
        /* the session daemon: everything it needs is in memory already */
        close(pair[0]);
        if (link[0] >= 0) {
            close(link[0]);
        }
        _exit(orte_session_run_forked(segment.base, segment.used, parent, pair[1],
                                      job->stdin_direct ? STDIN_FILENO : -1, link[1]));
    }
    opal_buffer_destruct(&segment);
    close(pair[1]);
    if (link[1] >= 0) {
        close(link[1]);
    }
    if (pid < 0) {
        close(pair[0]);
        if (link[0] >= 0) {
            close(link[0]);
        }
        opal_show_help(LAUNCH_HELP_FILE, "fork-failed", false, strerror(errno));
        return HERD_ERR_SILENT;
    }
    job->session_pid = pid;
    if (link[0] >= 0 && HERD_SUCCESS != (rc = job->ovl->adopt_peer(job->overlay, link[0], 1))) {
        /* the daemon sees its end close and leaves; it is waited for as after any failure */
        close(link[0]);
        close(pair[0]);
        opal_show_help(LAUNCH_HELP_FILE, "session-connect-failed", false, opal_strerror(rc));
        return HERD_ERR_SILENT;
    }
    job->iof_sock = pair[0];
    rc = opal_event_fd_create(job->base, job->iof_sock, OPAL_EVENT_READ | OPAL_EVENT_PERSIST,
                              pipes_cb, job, &job->iof_event);
    if (HERD_SUCCESS == rc) {
        opal_event_add(job->iof_event, NULL);
    }
    return rc;
}

int orte_launch_run(orte_dvm_t *dvm, orte_job_spec_t *spec, const orte_launch_options_t *options,
                    int *exit_status)
{
    job_t job;
    memset(&job, 0, sizeof(job));
    job.iof_sock = -1;
    job.attach_fd = -1;
    job.dvm = dvm;
    job.alloc = orte_dvm_allocation(dvm);
    job.base = orte_dvm_event_base(dvm);
    job.launch.radix = orte_dvm_radix(dvm);
    return launch_run(&job, spec, options, exit_status);
}

/* How long a session daemon we forked has to exit once the job is over. */
#define LOCAL_SESSION_EXIT_GRACE_MS 1000

/* The session daemon we forked is gone: if the job was not over, nothing more will come. */
static void session_exited(job_t *job)
{
    int wstatus = 0;
    if (job->session_pid <= 0 || job->session_pid != waitpid(job->session_pid, &wstatus, WNOHANG)) {
        return;
    }
    orte_session_wireup_reaped(job->session_pid, wstatus);
    job->session_pid = -1;
    if (job->finished) {
        return;
    }
    if (!(WIFEXITED(wstatus) && 0 == WEXITSTATUS(wstatus))) {
        if (WIFSIGNALED(wstatus)) {
            opal_show_help(LAUNCH_HELP_FILE, "session-daemon-killed", false, job->spec->jobid,
                           WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
        } else {
            opal_show_help(LAUNCH_HELP_FILE, "session-daemon-exited", false, job->spec->jobid,
                           WEXITSTATUS(wstatus));
        }
        if (0 == job->exit_status) {
            job->exit_status = 1;
        }
    }
    job_finish(job);
}

/* Wait until the session daemon we forked has exited, at most grace_ms, woken by the SIGCHLD
 * byte of the signal pipe rather than by polling; then kill and reap it if it is still there.
 * Other signals that come now are dropped: the job is over. */
static void local_wait_session(job_t *job, int grace_ms)
{
    struct timespec deadline, now;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += grace_ms / 1000;
    deadline.tv_nsec += (long) (grace_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    for (;;) {
        int wstatus = 0;
        pid_t got = waitpid(job->session_pid, &wstatus, WNOHANG);
        if (got == job->session_pid || (got < 0 && EINTR != errno)) {
            if (got == job->session_pid) {
                orte_session_wireup_reaped(job->session_pid, wstatus);
            }
            job->session_pid = -1;
            return;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        long left_ms = (long) (deadline.tv_sec - now.tv_sec) * 1000L +
                       (deadline.tv_nsec - now.tv_nsec) / 1000000L;
        if (left_ms <= 0) {
            break;
        }
        opal_signal_pipe_wait(job->signal_pipe, (int) left_ms);
    }
    kill(job->session_pid, SIGKILL);
    int killed = SIGKILL; /* a wait status "killed by SIGKILL", should waitpid fail */
    waitpid(job->session_pid, &killed, 0);
    orte_session_wireup_reaped(job->session_pid, killed);
    job->session_pid = -1;
}

static void local_signal_cb(int signo, void *arg)
{
    if (SIGCHLD != signo) {
        signal_cb(signo, arg);
    } else {
        session_exited(arg);
    }
}

/* herdrun's variables: static storage, as the variable system writes defaults back into it. */
static bool launch_direct = true;

int orte_launch_register_params(void)
{
    int rc = opal_mca_var_register_framework(
        "herdrun", "direct",
        "Run a job whose allocation is this host alone without starting a node daemon: "
        "herdrun forks the job's session daemon itself (false: always start a DVM)",
        OPAL_MCA_VAR_BOOL, &launch_direct);
    if (rc < 0) {
        return rc;
    }
    launch_start_timeout = 60;
    rc = opal_mca_var_register_framework(
        "herdrun", "start_timeout",
        "Seconds every session daemon of a job has to check in before herdrun gives up on the "
        "job and stops it",
        OPAL_MCA_VAR_INT, &launch_start_timeout);
    if (rc >= 0 && launch_start_timeout < 1) {
        opal_show_help(LAUNCH_HELP_FILE, "bad-start-timeout", false, launch_start_timeout);
        return HERD_ERR_BAD_PARAM;
    }
    return rc < 0 ? rc : HERD_SUCCESS;
}

bool orte_launch_local_possible(const orte_allocation_t *alloc)
{
    if (!launch_direct) {
        return false;
    }
    char host[256] = "";
    if (NULL == alloc || 1 != alloc->num_nodes || NULL != alloc->nodes[0].topology) {
        return false;
    }
    gethostname(host, sizeof(host) - 1);
    const char *name = alloc->nodes[0].name;
    return 0 == strcmp(name, host) || 0 == strcmp(name, "localhost") ||
           0 == strcmp(name, "127.0.0.1");
}

/* Run the job on a loop of our own (no DVM in this process): signals through our own pipe. */
static int run_own_loop(job_t *job, orte_job_spec_t *spec, const orte_launch_options_t *options,
                        int *exit_status)
{
    static const int caught[] = {SIGTERM, SIGINT, SIGHUP, SIGCHLD, 0};
    int rc;
    orte_orphans_adopt();
    if (HERD_SUCCESS != (rc = orte_overlay_base_open()) ||
        HERD_SUCCESS != (rc = orte_grpcomm_base_open())) {
        opal_show_help(LAUNCH_HELP_FILE, "no-overlay-grpcomm", false, opal_strerror(rc));
        rc = HERD_ERR_SILENT;
        goto out;
    }
    if (HERD_SUCCESS !=
        (rc = opal_signal_pipe_open(job->base, caught, local_signal_cb, job, &job->signal_pipe))) {
        goto out;
    }
    rc = launch_run(job, spec, options, exit_status);
    if (job->session_pid > 0) {
        /* it saw us leave: its exit (SIGCHLD writes to the signal pipe) ends our wait, a second
         * at most, then make sure */
        local_wait_session(job, LOCAL_SESSION_EXIT_GRACE_MS);
    }
    orte_orphans_kill(NULL, 0);
    opal_signal_pipe_close(job->signal_pipe);
    job->signal_pipe = NULL;
out:
    orte_grpcomm_base_close();
    orte_overlay_base_close();
    return rc;
}

int orte_launch_run_local(const orte_allocation_t *alloc, orte_job_spec_t *spec,
                          const orte_launch_options_t *options, int *exit_status)
{
    job_t job;
    int rc;
    memset(&job, 0, sizeof(job));
    job.iof_sock = -1;
    job.attach_fd = -1;
    job.alloc = alloc;
    job.launch.radix = 32;
    if (HERD_SUCCESS !=
        (rc = orte_inventory_collect(alloc->nodes[0].name, NULL, orte_dvm_local_fabric_components(),
                                     &job.local_inv))) {
        opal_show_help(LAUNCH_HELP_FILE, "no-topology", false, opal_strerror(rc));
        return HERD_ERR_SILENT;
    }
    rc = opal_event_base_create(&job.base);
    if (HERD_SUCCESS == rc) {
        rc = run_own_loop(&job, spec, options, exit_status);
        opal_event_base_free(job.base);
    }
    orte_inventory_free(job.local_inv);
    return rc;
}

int orte_launch_run_client(const char *uri_file, orte_job_spec_t *spec,
                           const orte_launch_options_t *options, int *exit_status)
{
    job_t job;
    int rc;
    memset(&job, 0, sizeof(job));
    job.iof_sock = -1;
    job.attach_fd = -1;
    if (HERD_SUCCESS != (rc = opal_event_base_create(&job.base))) {
        return rc;
    }
    rc = orte_dvm_client_connect(uri_file, job.base, &job.client);
    if (HERD_SUCCESS == rc) {
        job.alloc = orte_dvm_client_allocation(job.client);
        job.launch.radix = orte_dvm_client_radix(job.client);
        rc = run_own_loop(&job, spec, options, exit_status);
        orte_dvm_client_close(job.client);
    }
    opal_event_base_free(job.base);
    return rc;
}
