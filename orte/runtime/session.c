/* The session daemon (herdd --session): one per job and node, started by the node's daemon.
 * It maps the whole job itself, fills the node's job database, starts and watches the local
 * processes, and talks only to the job's other session daemons and herdrun. The first one (the
 * shepherd) runs the error manager and gathers exit statuses and resource usage. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/event/signal_pipe.h"
#include "opal/mca/base/mca_var.h"
#include "opal/util/argv.h"
#include "opal/util/fd.h"
#include "opal/util/output.h"
#include "opal/util/program_scan.h"
#include "opal/util/topology.h"
#include "orte/mca/errmgr/errmgr.h"
#include "orte/mca/grpcomm/grpcomm.h"
#include "orte/mca/iof/iof.h"
#include "orte/mca/odls/odls.h"
#include "orte/mca/overlay/overlay.h"
#include "orte/mca/rmaps/rmaps.h"
#include "orte/runtime/job.h"
#include "opal/util/jobdb.h"
#include "orte/runtime/endpoints.h"
#include "orte/runtime/jobmap.h"
#include "orte/runtime/session.h"
#include "orte/runtime/session_handoff.h"
#include "orte/runtime/session_wireup.h"
#include "orte/mca/wireup/base/base.h"
#include "orte/util/radix.h"

/* A local process mapped while the wireup waits for the whole map: started once it is done. */
typedef struct local_proc {
    uint32_t rank;
    uint32_t app;
    uint32_t local_rank;
    uint32_t node_rank;
    bool bound;
    char *cpuset; /* NULL when not bound */
} local_proc_t;

/* A namespace served here: the job (index 0) or processes it spawned (1, 2, ...). */
typedef struct nsjob {
    uint32_t index;
    uint32_t offset;             /* the ids of its processes here: offset + rank */
    const orte_job_spec_t *spec; /* its apps */
    orte_job_spec_t *own_spec;   /* a spawn's (freed with it) */
    opal_jobdb_t *db;            /* this node's database of it */
    bool own_db;                 /* a spawn's (the job's is the session's) */
    uint32_t num_procs;
    uint32_t local_size;
    uint32_t launched;
    uint32_t parent_nspace; /* a spawn's parent, else UINT32_MAX */
    uint32_t parent_rank;
    char ***app_env;    /* per app: the processes' environment, made at its first process */
    uint32_t num_nodes; /* its node table: the job's candidates, or (a spawn) its participants */
    uint32_t *per_node; /* its processes per node of that table */
    /* as the wireup modules see it */
    orte_wireup_nspace_t ns;
    char name[OPAL_JOBDB_ID_MAX + 16];
    const char **node_names;
    orte_vpid_t *node_vpid; /* per node of its table: the session daemon there */
    orte_vpid_t *daemons;   /* those hosting its processes */
    uint32_t num_daemons;
    uint32_t *local_ranks;
    uint32_t num_local;
    uint32_t first_record; /* its local processes: records first_record .. + num_local - 1 */
    bool registered;       /* known to the wireup */
    local_proc_t *pending; /* mapped here, waiting for the wireup's registration */
    uint32_t num_pending;
} nsjob_t;

/* A spawn a local process asked for, waiting for herdrun's answer. */
typedef struct spawn_req {
    struct spawn_req *next;
    uint32_t id;
    orte_wireup_spawn_fn_t cb;
    void *cbdata;
} spawn_req_t;

typedef struct session {
    opal_event_base_t *base;
    orte_job_launch_t *launch;
    const orte_job_spec_t *spec;
    char *node_name;
    uint32_t my_candidate;
    orte_vpid_t vpid;
    uint32_t size;                  /* participants + herdrun */
    orte_inventory_t **inventories; /* per candidate */
    orte_jobmap_nodes_t nodes;
    orte_rmaps_app_t *apps;

    const orte_overlay_module_t *ovl;
    orte_overlay_t *overlay;
    const orte_grpcomm_module_t *gc;
    orte_grpcomm_t *grpcomm;
    const orte_odls_module_t *odls;
    orte_odls_t *procs;
    opal_jobdb_t *db;
    orte_endpoints_plan_t endpoints; /* the job's RM-assigned endpoints (not its spawns') */
    uint16_t *ports;                 /* per fabric of the plan: the port of the proc emitted */
    const orte_iof_module_t *iof;
    orte_iof_source_t *source; /* the processes' pipes, unless handed to herdrun */
    /* wireup: NULL when no module serves the processes */
    orte_session_wireup_t *wireup;
    bool wireup_wanted;  /* some program here can use a wireup (or wireup_base_always) */
    bool wireup_skipped; /* none could: not started (a spawn here starts it) */
    int wireup_output;   /* where to say why, at wireup_base_verbose (or -1) */
    nsjob_t **jobs;      /* by namespace index: the job, then its spawns */
    uint32_t num_jobs;
    uint32_t *used; /* per candidate: processes of the job (and its spawns) placed there */
    spawn_req_t *spawn_reqs;
    uint32_t next_spawn_id;
    int iof_sock;    /* a one-node job: herdrun reads the pipes itself, sent here */
    int stdin_fd;    /* a one-node job: herdrun's stdin, for the stdin target (or -1) */
    int parent_sock; /* a one-node job: the overlay connection to herdrun, made at fork (or -1) */
    bool iof_drained;

    int out_pipe[2]; /* our own stdout and stderr (messages), forwarded to herdrun */
    int err_pipe[2];
    /* where stdout and stderr went before: what we say before the overlay is up (a bad
     * selection found at start-up) is written there instead, not lost */
    int orig_fd[2];
    opal_event_t *out_event;
    opal_event_t *err_event;
    opal_signal_pipe_t *signals;

    char **proc_env; /* what every process starts from */
    uint32_t launched;
    orte_proc_record_t *records; /* the local processes, by id (rank, then spawns') */
    uint32_t num_records;
    uint32_t cap_records;
    uint32_t records_sent; /* to the shepherd, in DONE messages */
    bool mapping_done;
    /* the only session daemon of its job, whose programs all passed the check: it launched
     * without waiting for the check's allgather to come back */
    bool launched_early;
    bool wireup_failed; /* its processes are not started: the job fails */
    bool aborting;
    bool done_sent;
    bool stop;
    int status;

    /* shepherd */
    const orte_errmgr_module_t *errmgr;
    bool *finished; /* by vpid: done, or lost */
    uint32_t num_finished;
    orte_proc_record_t *collected;
    size_t num_collected;
    size_t cap_collected;
    bool job_aborting;
    bool reported;
    int job_status;
} session_t;

/* ------------------------------------------------------------------------------------------ */
/* sending */

static void send_buffer(session_t *s, orte_vpid_t dst, uint16_t tag, opal_buffer_t *buffer)
{
    int rc = s->ovl->send(s->overlay, dst, tag, buffer->base, buffer->used);
    if (HERD_SUCCESS != rc) {
        opal_output(OPAL_OUTPUT_STDERR, "session daemon on %s: cannot reach vpid %u: %s",
                    s->node_name, dst, opal_strerror(rc));
    }
}

static void send_record(session_t *s, orte_vpid_t dst, uint16_t tag, bool with_action,
                        uint32_t action, const orte_proc_record_t *record)
{
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if ((!with_action || HERD_SUCCESS == opal_buffer_pack_uint32(&buffer, action)) &&
        HERD_SUCCESS == orte_proc_record_pack(&buffer, record)) {
        send_buffer(s, dst, tag, &buffer);
    }
    opal_buffer_destruct(&buffer);
}

/* Forward what is waiting in one of our output pipes. */
static void drain_pipe(session_t *s, int fd, uint8_t stream)
{
    uint8_t chunk[65536 + 1];
    for (;;) {
        ssize_t n = read(fd, chunk + 1, sizeof(chunk) - 1);
        if (n < 0 && EINTR == errno) {
            continue;
        }
        if (n <= 0) {
            return;
        }
        chunk[0] = stream;
        if (NULL != s->overlay) {
            s->ovl->send(s->overlay, 0, ORTE_SESSION_TAG_OUTPUT, chunk, (size_t) n + 1);
        } else if (s->orig_fd[stream - 1] >= 0) {
            (void) opal_fd_write_all(s->orig_fd[stream - 1], chunk + 1, (size_t) n);
        }
    }
}

static void output_cb(int fd, short what, void *arg)
{
    session_t *s = arg;
    drain_pipe(s, fd, fd == s->out_pipe[0] ? 1 : 2);
}

/* Every local process has exited and mapping is over: report to the shepherd, then tell
 * herdrun that nothing more comes from here (after our last output, on the same route). */
static void finish_local(session_t *s)
{
    if (s->done_sent || !s->mapping_done ||
        (NULL != s->procs && s->odls->num_alive(s->procs) > 0)) {
        return;
    }
    if (NULL != s->source && !s->iof_drained) {
        /* the processes' last words first: the rest waits until the sink has them all */
        s->iof->source_finish(s->source);
        if (!s->iof_drained) {
            return;
        }
    }
    s->done_sent = true;
    fflush(stdout);
    fflush(stderr);
    drain_pipe(s, s->out_pipe[0], 1);
    drain_pipe(s, s->err_pipe[0], 2);
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    /* a node that had processes again after a spawn sends only the new ones */
    int rc = opal_buffer_pack_uint32(&buffer, s->num_records - s->records_sent);
    for (uint32_t i = s->records_sent; HERD_SUCCESS == rc && i < s->num_records; ++i) {
        rc = orte_proc_record_pack(&buffer, &s->records[i]);
    }
    s->records_sent = s->num_records;
    if (HERD_SUCCESS == rc) {
        send_buffer(s, ORTE_SESSION_SHEPHERD, ORTE_SESSION_TAG_DONE, &buffer);
    }
    opal_buffer_destruct(&buffer);
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_pack_uint32(&buffer, s->launched)) {
        send_buffer(s, 0, ORTE_SESSION_TAG_EOF, &buffer);
    }
    opal_buffer_destruct(&buffer);
}

static orte_proc_record_t *find_record(session_t *s, uint32_t rank)
{
    uint32_t lo = 0, hi = s->num_records;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->records[mid].rank == rank) {
            return &s->records[mid];
        }
        if (s->records[mid].rank < rank) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* the shepherd */

static void shepherd_abort(session_t *s)
{
    if (s->job_aborting) {
        return;
    }
    s->job_aborting = true;
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_pack_int32(&buffer, s->spec->kill_grace_ms)) {
        for (orte_vpid_t v = 1; v < s->size; ++v) {
            if (!s->finished[v]) {
                s->ovl->send(s->overlay, v, ORTE_SESSION_TAG_ABORT, buffer.base, buffer.used);
            }
        }
    }
    opal_buffer_destruct(&buffer);
}

static void shepherd_maybe_report(session_t *s)
{
    if (s->reported || s->num_finished + 1 < s->size) {
        return;
    }
    s->reported = true;
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    int rc = opal_buffer_pack_int32(&buffer, s->job_status);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_pack_uint32(&buffer, (uint32_t) s->num_collected);
    }
    for (size_t i = 0; HERD_SUCCESS == rc && i < s->num_collected; ++i) {
        rc = orte_proc_record_pack(&buffer, &s->collected[i]);
    }
    if (HERD_SUCCESS == rc) {
        send_buffer(s, 0, ORTE_SESSION_TAG_REPORT, &buffer);
    }
    opal_buffer_destruct(&buffer);
}

static int collect(session_t *s, const orte_proc_record_t *record)
{
    if (s->num_collected == s->cap_collected) {
        size_t cap = s->cap_collected ? 2 * s->cap_collected : 64;
        orte_proc_record_t *grown = realloc(s->collected, cap * sizeof(*grown));
        if (NULL == grown) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        s->collected = grown;
        s->cap_collected = cap;
    }
    s->collected[s->num_collected++] = *record;
    return HERD_SUCCESS;
}

/* A failure reached the shepherd: ask the error manager, tell herdrun, act. */
static void shepherd_failure(session_t *s, const orte_proc_record_t *record)
{
    if (s->job_aborting || record->aborted) {
        return; /* a consequence of the abort, not a failure of its own */
    }
    const char *node = (record->node < s->nodes.num) ? s->nodes.nodes[record->node].name : "?";
    orte_errmgr_failure_t failure = {
        .event = ORTE_PROC_LOST == record->state           ? ORTE_ERRMGR_DAEMON_LOST
                 : ORTE_PROC_START_FAILED == record->state ? ORTE_ERRMGR_PROC_START_FAILED
                                                           : ORTE_ERRMGR_PROC_FAILED,
        .rank = record->rank,
        .node = node,
        .pid = record->pid,
        .signaled = record->signaled,
        .exit_code = record->exit_code,
        .signo = record->signo,
    };
    orte_errmgr_action_t action = s->errmgr->decide(&failure);
    if (0 == s->job_status) {
        s->job_status = orte_proc_record_status(record);
    }
    send_record(s, 0, ORTE_SESSION_TAG_FAILURE, true, (uint32_t) action, record);
    if (ORTE_ERRMGR_ABORT_JOB == action) {
        shepherd_abort(s);
    }
}

/* A process asked for the job to be aborted (MPI_Abort): always the end of the job, whatever the
 * error manager says of failures, and herdrun shows the process's message. */
static void shepherd_aborted(session_t *s, const orte_proc_record_t *record, const char *message)
{
    if (s->job_aborting) {
        return;
    }
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (0 == s->job_status) {
        s->job_status = orte_proc_record_status(record);
    }
    if (HERD_SUCCESS == opal_buffer_pack_uint32(&buffer, (uint32_t) ORTE_ERRMGR_ABORT_JOB) &&
        HERD_SUCCESS == orte_proc_record_pack(&buffer, record) &&
        HERD_SUCCESS == opal_buffer_pack_string(&buffer, NULL != message ? message : "")) {
        send_buffer(s, 0, ORTE_SESSION_TAG_FAILURE, &buffer);
    }
    opal_buffer_destruct(&buffer);
    shepherd_abort(s);
}

static void recv_aborted(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                         size_t length, void *arg)
{
    session_t *s = arg;
    opal_buffer_t buffer;
    orte_proc_record_t record;
    char *message = NULL;
    opal_buffer_init(&buffer);
    if (ORTE_SESSION_SHEPHERD == s->vpid &&
        HERD_SUCCESS == opal_buffer_load(&buffer, data, length) &&
        HERD_SUCCESS == orte_proc_record_unpack(&buffer, &record) &&
        HERD_SUCCESS == opal_buffer_unpack_string(&buffer, &message) &&
        ORTE_PROC_ABORTED == record.state) {
        shepherd_aborted(s, &record, message);
    }
    free(message);
    opal_buffer_destruct(&buffer);
}

/* vpid (and everything below it in the tree) will not report: count it as finished. */
static void shepherd_lost(session_t *s, orte_vpid_t lost, const char *reason)
{
    for (orte_vpid_t v = 1; v < s->size; ++v) {
        bool below = false;
        for (orte_vpid_t u = v; u > 0 && !below; u = orte_radix_parent(u, s->launch->radix)) {
            below = (u == lost);
        }
        if (below && !s->finished[v]) {
            s->finished[v] = true;
            s->num_finished++;
        }
    }
    orte_proc_record_t record = {.rank = UINT32_MAX, .state = ORTE_PROC_LOST, .exit_code = 1};
    if (lost > 0 && lost - 1 < s->launch->num_participants) {
        record.node = s->launch->participants[lost - 1];
    }
    opal_output_verbose(1, OPAL_OUTPUT_STDERR, "shepherd: session daemon %u lost: %s", lost,
                        reason);
    shepherd_failure(s, &record);
    shepherd_maybe_report(s);
}

static void recv_failure(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                         size_t length, void *arg)
{
    session_t *s = arg;
    opal_buffer_t buffer;
    orte_proc_record_t record;
    opal_buffer_init(&buffer);
    if (ORTE_SESSION_SHEPHERD == s->vpid &&
        HERD_SUCCESS == opal_buffer_load(&buffer, data, length) &&
        HERD_SUCCESS == orte_proc_record_unpack(&buffer, &record)) {
        shepherd_failure(s, &record);
    }
    opal_buffer_destruct(&buffer);
}

static void recv_done(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                      size_t length, void *arg)
{
    session_t *s = arg;
    opal_buffer_t buffer;
    uint32_t n = 0;
    opal_buffer_init(&buffer);
    if (ORTE_SESSION_SHEPHERD != s->vpid || src == 0 || src >= s->size || s->finished[src] ||
        HERD_SUCCESS != opal_buffer_load(&buffer, data, length) ||
        HERD_SUCCESS != opal_buffer_unpack_uint32(&buffer, &n)) {
        opal_buffer_destruct(&buffer);
        return;
    }
    bool keep_all = 0 != (s->spec->flags & ORTE_JOB_FLAG_REPORT_USAGE);
    for (uint32_t i = 0; i < n; ++i) {
        orte_proc_record_t record;
        if (HERD_SUCCESS != orte_proc_record_unpack(&buffer, &record)) {
            break;
        }
        if (keep_all || orte_proc_record_failed(&record)) {
            collect(s, &record);
        }
    }
    opal_buffer_destruct(&buffer);
    s->finished[src] = true;
    s->num_finished++;
    shepherd_maybe_report(s);
}

/* A session daemon that had reported its processes has new ones (a spawn): not finished. */
static void recv_reopen(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                        size_t length, void *arg)
{
    session_t *s = arg;
    if (ORTE_SESSION_SHEPHERD == s->vpid && src > 0 && src < s->size && s->finished[src] &&
        !s->reported) {
        s->finished[src] = false;
        s->num_finished--;
    }
}

static void recv_lost(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                      size_t length, void *arg)
{
    session_t *s = arg;
    opal_buffer_t buffer;
    uint32_t vpid = 0;
    char *reason = NULL;
    opal_buffer_init(&buffer);
    if (ORTE_SESSION_SHEPHERD == s->vpid &&
        HERD_SUCCESS == opal_buffer_load(&buffer, data, length) &&
        HERD_SUCCESS == opal_buffer_unpack_uint32(&buffer, &vpid) &&
        HERD_SUCCESS == opal_buffer_unpack_string(&buffer, &reason) && vpid > 0 && vpid < s->size) {
        shepherd_lost(s, vpid, NULL != reason ? reason : "");
    }
    free(reason);
    opal_buffer_destruct(&buffer);
}

/* ------------------------------------------------------------------------------------------ */
/* every session daemon */

static void recv_abort(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                       size_t length, void *arg)
{
    session_t *s = arg;
    opal_buffer_t buffer;
    int32_t grace = -1;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_load(&buffer, data, length)) {
        opal_buffer_unpack_int32(&buffer, &grace);
    }
    opal_buffer_destruct(&buffer);
    s->aborting = true;
    if (NULL != s->procs) {
        s->odls->kill_all(s->procs, grace < 0 ? ORTE_ODLS_KILL_GRACE_DEFAULT : grace);
    }
    finish_local(s);
}

static void recv_signal(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                        size_t length, void *arg)
{
    session_t *s = arg;
    opal_buffer_t buffer;
    int32_t signo = 0;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_load(&buffer, data, length) &&
        HERD_SUCCESS == opal_buffer_unpack_int32(&buffer, &signo) && signo > 0 && signo < 65 &&
        NULL != s->procs) {
        /* the processes were told to stop: what they do now is not a failure of their own */
        if (SIGINT == signo || SIGTERM == signo || SIGHUP == signo) {
            s->aborting = true;
        }
        s->odls->signal(s->procs, signo);
    }
    opal_buffer_destruct(&buffer);
}

static void stop_loop(session_t *s)
{
    s->stop = true;
    opal_event_base_stop(s->base);
}

static void lost_cb(orte_overlay_t *overlay, orte_vpid_t peer, int status, const char *reason,
                    void *arg)
{
    session_t *s = arg;
    orte_session_wireup_lost(s->wireup, peer);
    if (peer == orte_radix_parent(s->vpid, s->launch->radix)) {
        /* herdrun closed the job (or the route to it is gone): nothing left to do here */
        if (HERD_SUCCESS != status) {
            s->status = HERD_ERR_UNREACH;
        }
        stop_loop(s);
        return;
    }
    if (ORTE_SESSION_SHEPHERD == s->vpid) {
        shepherd_lost(s, peer, reason);
        return;
    }
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_pack_uint32(&buffer, peer) &&
        HERD_SUCCESS == opal_buffer_pack_string(&buffer, reason)) {
        send_buffer(s, ORTE_SESSION_SHEPHERD, ORTE_SESSION_TAG_LOST, &buffer);
    }
    opal_buffer_destruct(&buffer);
}

static nsjob_t *nsjob_of(session_t *s, uint32_t id);

static void proc_exited(uint32_t rank, const orte_odls_exit_t *info, void *cbdata)
{
    session_t *s = cbdata;
    orte_proc_record_t *r = find_record(s, rank);
    if (NULL != s->source) {
        s->iof->source_exited(s->source, rank);
    }
    if (NULL == r) {
        return;
    }
    bool unfinalized = false;
    nsjob_t *nsj = nsjob_of(s, rank);
    if (NULL != s->wireup && NULL != nsj) {
        orte_wireup_proc_t proc = {.ns = &nsj->ns, .rank = rank - nsj->offset, .app = r->app};
        unfinalized = orte_session_wireup_proc_exited(s->wireup, &proc);
    }
    bool called_abort = ORTE_PROC_ABORTED == r->state;
    int abort_status = r->exit_code;
    r->pid = info->pid;
    r->signaled = info->signaled;
    r->exit_code = info->exit_code;
    r->signo = info->signo;
    r->wall_ns = info->wall_ns;
    r->user_us = (uint64_t) info->user_cpu.tv_sec * 1000000u + (uint64_t) info->user_cpu.tv_usec;
    r->sys_us = (uint64_t) info->sys_cpu.tv_sec * 1000000u + (uint64_t) info->sys_cpu.tv_usec;
    r->max_rss_kb = info->max_rss_kb;
    r->aborted = s->aborting;
    if (info->not_started) {
        r->state = ORTE_PROC_START_FAILED; /* its exec failed after all (odls said why) */
        r->signaled = false;
        r->exit_code = 1;
    } else if (called_abort) {
        r->state = ORTE_PROC_ABORTED; /* what it did last is what counts */
        r->signaled = false;
        r->exit_code = abort_status;
    } else if (unfinalized && !r->signaled && 0 == r->exit_code && !s->aborting) {
        r->state = ORTE_PROC_UNFINALIZED;
    }
    if (orte_proc_record_failed(r) && !s->aborting) {
        send_record(s, ORTE_SESSION_SHEPHERD, ORTE_SESSION_TAG_FAILURE, false, 0, r);
    }
}

static void all_exited(void *cbdata)
{
    finish_local(cbdata);
}

static void signal_cb(int signo, void *arg)
{
    session_t *s = arg;
    (void) signo;
    /* our daemon is gone or stopping (SIGTERM): the processes go with us */
    s->status = HERD_ERR_UNREACH;
    stop_loop(s);
}

/* ------------------------------------------------------------------------------------------ */
/* namespaces: the job (0) and what it spawned */

static nsjob_t *nsjob_new(session_t *s, uint32_t index)
{
    if (index != s->num_jobs) {
        return NULL; /* herdrun numbers them in order */
    }
    nsjob_t **grown = realloc(s->jobs, (index + 1) * sizeof(*grown));
    if (NULL == grown) {
        return NULL;
    }
    s->jobs = grown;
    nsjob_t *nsj = calloc(1, sizeof(*nsj));
    if (NULL == nsj) {
        return NULL;
    }
    nsj->index = index;
    s->jobs[index] = nsj;
    s->num_jobs = index + 1;
    return nsj;
}

static void nsjob_free(nsjob_t *nsj)
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
    free(nsj->node_vpid);
    free(nsj->daemons);
    free(nsj->local_ranks);
    free(nsj->per_node);
    free(nsj);
}

/* The segments local processes may own (btl sm's receive rings, docs/btl.md): a process removes
 * its own at herd_finalize, and these names are computable, so one killed first leaves nothing
 * once its session daemon is done. Nothing to do for a name that is not there. */
static void unlink_rank_segments(const session_t *s, const nsjob_t *nsj)
{
    for (uint32_t i = 0; NULL != nsj && NULL != nsj->local_ranks && i < nsj->num_local; ++i) {
        char name[256];
        if (HERD_SUCCESS == opal_jobdb_rank_segment_name(nsj->spec->jobid, s->node_name, "sm",
                                                         nsj->local_ranks[i], name, sizeof(name))) {
            shm_unlink(name);
        }
    }
}

/* The namespace a process id belongs to (ids grow with each spawn). */
static nsjob_t *nsjob_of(session_t *s, uint32_t id)
{
    for (uint32_t k = s->num_jobs; k > 0; --k) {
        if (id >= s->jobs[k - 1]->offset) {
            return s->jobs[k - 1];
        }
    }
    return NULL;
}

/* Room for n more local records (records stay in id order: a spawn's ids come after). */
static int reserve_records(session_t *s, uint32_t n)
{
    uint32_t want = s->num_records + n;
    if (want <= s->cap_records) {
        return HERD_SUCCESS;
    }
    orte_proc_record_t *grown = realloc(s->records, (want > 0 ? want : 1) * sizeof(*grown));
    if (NULL == grown) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    s->records = grown;
    s->cap_records = want;
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* mapping and launching */

static int planned_cb(uint32_t num_procs, const uint32_t *per_node, void *cbdata)
{
    session_t *s = cbdata;
    nsjob_t *nsj = s->jobs[0];
    nsj->num_procs = num_procs;
    nsj->local_size = per_node[s->my_candidate];
    /* what a spawn maps around: the processes on each candidate */
    for (uint32_t c = 0; c < s->nodes.num; ++c) {
        s->used[c] = per_node[c];
    }
    int rc = reserve_records(s, nsj->local_size);
    /* every node's process count is known now: the endpoints of every process are decided
     * before the first is emitted, the same way on every node */
    orte_endpoints_job_t ejob = {.inventories = s->inventories,
                                 .per_node = per_node,
                                 .num_nodes = s->nodes.num,
                                 .seq = s->spec->seq};
    opal_jobdb_layout_t layout = {0};
    if (HERD_SUCCESS == rc) {
        rc = orte_endpoints_plan_build(&ejob, &s->endpoints);
    }
    if (HERD_SUCCESS == rc && s->endpoints.num_fabrics > 0) {
        orte_endpoints_layout(&s->endpoints, &layout);
        s->ports = calloc(s->endpoints.num_fabrics, sizeof(*s->ports));
        rc = NULL == s->ports ? HERD_ERR_OUT_OF_RESOURCE : HERD_SUCCESS;
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_jobdb_create(s->spec->jobid, s->node_name, num_procs, s->nodes.num, &layout,
                               &s->db);
    }
    for (uint32_t n = 0; HERD_SUCCESS == rc && n < s->nodes.num; ++n) {
        rc = opal_jobdb_set_node(s->db, n, s->nodes.nodes[n].name);
    }
    if (HERD_SUCCESS == rc) {
        rc = orte_endpoints_write(&s->endpoints, s->db);
    }
    nsj->db = s->db;
    return rc;
}

/* The environment every process of an app starts from: ours, with its -x variables replacing
 * those of the same name. Made once per app, not per process (the launch path). */
static int app_environment(session_t *s, nsjob_t *nsj, uint32_t app_index, char ***env_out)
{
    if (NULL == nsj->app_env) {
        nsj->app_env = calloc(nsj->spec->num_apps, sizeof(*nsj->app_env));
        if (NULL == nsj->app_env) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    if (NULL != nsj->app_env[app_index]) {
        *env_out = nsj->app_env[app_index];
        return HERD_SUCCESS;
    }
    char **env = opal_argv_copy(s->proc_env);
    if (NULL != s->proc_env && NULL == env) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (char *const *e = nsj->spec->apps[app_index].env; NULL != e && NULL != *e; ++e) {
        int i = opal_env_find(env, *e);
        if (i >= 0) {
            opal_argv_delete(&env, (size_t) i, 1);
        }
        if (HERD_SUCCESS != opal_argv_append(&env, *e)) {
            opal_argv_free(env);
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    nsj->app_env[app_index] = env;
    *env_out = env;
    return HERD_SUCCESS;
}

/* The daemon's ends of a started process's pipes: to our source, or to herdrun. */
static void hand_over_pipes(session_t *s, uint32_t id, int parent[3])
{
    int rc;
    if (s->iof_sock >= 0) {
        rc = orte_iof_base_send_fds(s->iof_sock, id, parent);
        for (int i = 0; i < 3; ++i) {
            if (parent[i] >= 0) {
                close(parent[i]); /* herdrun holds them now */
            }
        }
    } else {
        rc = s->iof->source_add(s->source, id, parent);
    }
    if (HERD_SUCCESS != rc) {
        fprintf(stderr, "session daemon on %s: the output of process %u cannot be forwarded: %s\n",
                s->node_name, id, opal_strerror(rc));
    }
}

/* Every local process has been handed over: stdin for all of them can flow. */
static void all_handed_over(session_t *s)
{
    if (s->iof_sock >= 0) {
        int none[3] = {-1, -1, -1};
        orte_iof_base_send_fds(s->iof_sock, ORTE_IOF_RANK_DAEMON, none);
    } else if (NULL != s->source) {
        s->iof->source_all_added(s->source);
    }
}

/* A local process could not be started: the shepherd hears of it, the rest of this node is not
 * started (it would only be killed again). */
static void start_failed(session_t *s, orte_proc_record_t *r)
{
    r->state = ORTE_PROC_START_FAILED;
    r->exit_code = 1;
    send_record(s, ORTE_SESSION_SHEPHERD, ORTE_SESSION_TAG_FAILURE, false, 0, r);
    s->aborting = true;
}

/* Start one local process of a namespace: its pipes, its wireup, odls. */
static void start_proc(session_t *s, nsjob_t *nsj, orte_proc_record_t *r, const local_proc_t *p)
{
    const orte_job_app_t *app = &nsj->spec->apps[p->app];
    uint32_t id = nsj->offset + p->rank;
    if (s->aborting) {
        r->state = ORTE_PROC_START_FAILED;
        r->aborted = true;
        return;
    }
    char **env = NULL;
    if (HERD_SUCCESS != app_environment(s, nsj, p->app, &env)) {
        start_failed(s, r);
        return;
    }
    /* the wireup adds to a copy of the app's environment, and descriptors it inherits */
    char **own_env = NULL;
    int fds[ORTE_WIREUP_MAX_CHILD_FDS];
    int num_fds = 0;
    orte_wireup_proc_t wproc = {.ns = &nsj->ns,
                                .rank = p->rank,
                                .app = p->app,
                                .local_rank = p->local_rank,
                                .node_rank = p->node_rank};
    if (NULL != s->wireup) {
        own_env = opal_argv_copy(env);
        int rc = (NULL == own_env && NULL != env)
                     ? HERD_ERR_OUT_OF_RESOURCE
                     : orte_session_wireup_proc_setup(s->wireup, &wproc, &own_env, fds, &num_fds);
        if (HERD_SUCCESS != rc) {
            fprintf(stderr, "session daemon on %s: cannot prepare the wireup of rank %u: %s\n",
                    s->node_name, p->rank, opal_strerror(rc));
            for (int i = 0; i < num_fds; ++i) {
                close(fds[i]);
            }
            opal_argv_free(own_env);
            orte_session_wireup_proc_started(s->wireup, &wproc, 0);
            start_failed(s, r);
            return;
        }
        env = own_env;
    }
    int child[3], parent[3];
    bool wanted = 0 == nsj->index && orte_iof_base_stdin_wanted(s->spec->stdin_target, p->rank);
    /* herdrun's own stdin when it gives it (no pipe, nothing forwarded), else a pipe */
    int direct_stdin = wanted ? s->stdin_fd : -1;
    bool target = wanted && direct_stdin < 0;
    if (HERD_SUCCESS != orte_iof_base_make_pipes(target,
                                                 0 != (s->spec->flags & ORTE_JOB_FLAG_MERGE_STDERR),
                                                 child, parent)) {
        fprintf(stderr, "session daemon on %s: cannot make the pipes of rank %u: %s\n",
                s->node_name, p->rank, strerror(errno));
        for (int i = 0; i < num_fds; ++i) {
            close(fds[i]);
        }
        opal_argv_free(own_env);
        if (NULL != s->wireup) {
            orte_session_wireup_proc_started(s->wireup, &wproc, 0);
        }
        start_failed(s, r);
        return;
    }
    pid_t pid = 0;
    orte_odls_proc_spec_t spec = {
        .argv = app->argv,
        .env = env,
        .cwd = app->cwd,
        .cpuset = p->bound ? p->cpuset : NULL,
        .stdin_fd = direct_stdin >= 0 ? direct_stdin : child[0],
        .stdout_fd = child[1],
        .stderr_fd = child[2],
        .extra_fds = fds,
        .num_extra_fds = num_fds,
        .pid = &pid,
        .id = id,
        .node_name = s->node_name,
        .simulated = s->nodes.simulated[s->my_candidate],
        .rank = p->rank,
        .size = nsj->num_procs,
        .local_rank = p->local_rank,
        .local_size = nsj->local_size,
        .node_rank = p->node_rank,
        .jobid = s->spec->seq,
        .appnum = p->app,
    };
    int rc = s->odls->launch(s->procs, &spec);
    orte_iof_base_close_child(child);
    for (int i = 0; i < num_fds; ++i) {
        close(fds[i]); /* the process has its copies */
    }
    opal_argv_free(own_env);
    if (NULL != s->wireup) {
        orte_session_wireup_proc_started(s->wireup, &wproc, HERD_SUCCESS == rc ? pid : 0);
    }
    if (HERD_SUCCESS == rc) {
        r->pid = pid;
        hand_over_pipes(s, id, parent);
        s->launched++;
        nsj->launched++;
        return;
    }
    for (int i = 0; i < 3; ++i) {
        if (parent[i] >= 0) {
            close(parent[i]);
        }
    }
    start_failed(s, r);
}

/* One of this node's processes was mapped: its record, then started now (no wireup: while the
 * mapper goes on) or once the map is complete (a wireup registers the whole namespace, PMIx with
 * every process's place, before any of its processes may connect). */
static int take_local(session_t *s, nsjob_t *nsj, const orte_rmaps_proc_t *proc, uint32_t node_rank)
{
    orte_proc_record_t *r = &s->records[s->num_records++];
    memset(r, 0, sizeof(*r));
    r->rank = nsj->offset + proc->rank;
    r->node = s->my_candidate;
    r->app = proc->app;
    if (s->spec->flags & ORTE_JOB_FLAG_REPORT_BINDINGS) {
        char line[512];
        orte_rmaps_binding_line(s->node_name, proc, line, sizeof(line));
        fprintf(stderr, "%s%s%s\n", line,
                (proc->bound && s->nodes.simulated[s->my_candidate])
                    ? " [simulated node: not applied]"
                    : "",
                nsj->index > 0 ? " [spawned]" : "");
    }
    local_proc_t lp = {.rank = proc->rank,
                       .app = proc->app,
                       .local_rank = proc->local_rank,
                       .node_rank = node_rank,
                       .bound = proc->bound,
                       .cpuset = proc->bound ? (char *) proc->cpuset : NULL};
    if (NULL == s->wireup && 0 == nsj->index) {
        start_proc(s, nsj, r, &lp);
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

static opal_jobdb_proc_t db_entry(const orte_rmaps_proc_t *proc, uint32_t node_rank)
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
    session_t *s = cbdata;
    opal_jobdb_proc_t entry = db_entry(proc, proc->node_rank);
    for (uint32_t f = 0; f < s->endpoints.num_fabrics; ++f) {
        s->ports[f] = orte_endpoints_port(&s->endpoints, f, proc->node, proc->node_rank);
    }
    entry.ports = s->ports;
    int rc = opal_jobdb_put_proc(s->db, &entry);
    if (HERD_SUCCESS != rc || proc->node != s->my_candidate) {
        return rc;
    }
    return take_local(s, s->jobs[0], proc, proc->node_rank);
}

/* The namespace as the wireup modules see it, once its database is complete. Its node table:
 * the job's candidates, or (a spawn) the job's participants. */
static int register_wireup(session_t *s, nsjob_t *nsj)
{
    uint32_t np = s->launch->num_participants;
    uint32_t nn = nsj->num_nodes;
    nsj->node_names = calloc(nn > 0 ? nn : 1, sizeof(*nsj->node_names));
    nsj->node_vpid = malloc((nn > 0 ? nn : 1) * sizeof(*nsj->node_vpid));
    nsj->daemons = malloc((np > 0 ? np : 1) * sizeof(*nsj->daemons));
    nsj->local_ranks =
        malloc((nsj->num_local > 0 ? nsj->num_local : 1) * sizeof(*nsj->local_ranks));
    if (NULL == nsj->node_names || NULL == nsj->node_vpid || NULL == nsj->daemons ||
        NULL == nsj->local_ranks) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    uint64_t universe = 0;
    for (uint32_t c = 0; c < s->launch->num_candidates; ++c) {
        universe += s->launch->slots[c];
    }
    for (uint32_t n = 0; n < nn; ++n) {
        nsj->node_vpid[n] = ORTE_VPID_INVALID;
    }
    for (uint32_t p = 0; p < np; ++p) {
        uint32_t c = s->launch->participants[p];
        uint32_t n = (0 == nsj->index) ? c : p;
        nsj->node_vpid[n] = p + 1;
        if (nsj->per_node[n] > 0) {
            nsj->daemons[nsj->num_daemons++] = p + 1;
        }
    }
    for (uint32_t n = 0; n < nn; ++n) {
        nsj->node_names[n] = s->nodes.nodes[0 == nsj->index ? n : s->launch->participants[n]].name;
    }
    for (uint32_t i = 0; i < nsj->num_local; ++i) {
        nsj->local_ranks[i] = s->records[nsj->first_record + i].rank - nsj->offset;
    }
    snprintf(nsj->name, sizeof(nsj->name), "herd.%s", nsj->spec->jobid);
    nsj->ns = (orte_wireup_nspace_t){
        .index = nsj->index,
        .name = nsj->name,
        .jobid = nsj->spec->jobid,
        .seq = s->spec->seq,
        .num_procs = nsj->num_procs,
        .num_apps = nsj->spec->num_apps,
        .universe_size = universe > UINT32_MAX ? UINT32_MAX : (uint32_t) universe,
        .num_nodes = nn,
        .node_names = nsj->node_names,
        .my_node = (0 == nsj->index) ? s->my_candidate : s->vpid - 1,
        .local_ranks = nsj->local_ranks,
        .num_local = nsj->num_local,
        .db = nsj->db,
        .db_name = opal_jobdb_name(nsj->db),
        .parent_nspace = nsj->parent_nspace,
        .parent_rank = nsj->parent_rank,
    };
    int rc = orte_session_wireup_add_nspace(s->wireup, &nsj->ns, nsj->daemons, nsj->num_daemons,
                                            nsj->node_vpid);
    nsj->registered = HERD_SUCCESS == rc;
    return rc;
}

static int start_wireup(session_t *s);

/* The wireup was left out (no program here could use one) and a spawn brings processes here:
 * start it now, and tell it the namespaces mapped before this one. */
static int start_skipped_wireup(session_t *s, const nsjob_t *current)
{
    if (s->wireup_output >= 0) {
        opal_output_verbose(1, s->wireup_output,
                            "wireup on %s: a spawn brings processes that may use a wireup: "
                            "starting it now",
                            s->node_name);
    }
    s->wireup_skipped = false;
    int rc = start_wireup(s);
    for (uint32_t k = 0; HERD_SUCCESS == rc && NULL != s->wireup && k < s->num_jobs; ++k) {
        nsjob_t *earlier = s->jobs[k];
        if (NULL != earlier && earlier != current && NULL != earlier->per_node &&
            !earlier->registered) {
            rc = register_wireup(s, earlier);
        }
    }
    return rc;
}

/* The processes held for the wireup: started now (status HERD_SUCCESS), or not at all. */
static void start_pending(session_t *s, nsjob_t *nsj, int status)
{
    for (uint32_t i = 0; i < nsj->num_pending; ++i) {
        orte_proc_record_t *r = find_record(s, nsj->offset + nsj->pending[i].rank);
        if (NULL != r && HERD_SUCCESS == status) {
            start_proc(s, nsj, r, &nsj->pending[i]);
        } else if (NULL != r && !s->aborting) {
            start_failed(s, r);
        } else if (NULL != r) {
            r->state = ORTE_PROC_START_FAILED;
            r->aborted = true;
        }
        free(nsj->pending[i].cpuset);
    }
    free(nsj->pending);
    nsj->pending = NULL;
    nsj->num_pending = 0;
}

/* After mapping a namespace: its wireup (and a spawn's preput keys), then its held processes. */
static void register_and_start(session_t *s, nsjob_t *nsj, int rc, const orte_job_spawn_t *sp)
{
    if (HERD_SUCCESS != rc) {
        s->aborting = true; /* the caller reports it, once */
    }
    int wrc = rc;
    if (HERD_SUCCESS == rc && s->wireup_skipped && NULL != sp && nsj->num_local > 0) {
        wrc = start_skipped_wireup(s, nsj);
    }
    if (HERD_SUCCESS == wrc && NULL != s->wireup) {
        wrc = register_wireup(s, nsj);
        if (HERD_SUCCESS == wrc && NULL != sp && sp->num_preput > 0) {
            wrc = orte_session_wireup_preput(
                s->wireup, nsj->index, (const char *const *) sp->preput_keys,
                (const char *const *) sp->preput_values, sp->num_preput);
        }
        if (HERD_SUCCESS != wrc) {
            fprintf(stderr,
                    "session daemon on %s: the wireup cannot serve %s (%s): its processes are "
                    "not started (HERD_MCA_wireup selects which wireups run)\n",
                    s->node_name, nsj->spec->jobid, opal_strerror(wrc));
        }
    }
    start_pending(s, nsj, wrc);
}

static void map_and_launch(session_t *s)
{
    orte_rmaps_job_t job = {
        .nodes = s->nodes.nodes,
        .num_nodes = s->nodes.num,
        .apps = s->apps,
        .num_apps = s->spec->num_apps,
        .planned = planned_cb,
    };
    nsjob_t *nsj = s->jobs[0];
    uint32_t num_procs = 0;
    uint32_t before = s->num_records;
    if (s->wireup_failed) {
        s->aborting = true; /* mapped (the database is made) but nothing is started */
    }
    int rc = orte_rmaps_base_map_job(&job, emit_cb, s, &num_procs);
    if (HERD_SUCCESS == rc && NULL != s->db) {
        rc = opal_jobdb_finish(s->db);
    }
    nsj->first_record = before;
    nsj->num_local = s->num_records - before;
    nsj->num_nodes = s->nodes.num;
    nsj->per_node = malloc((s->nodes.num > 0 ? s->nodes.num : 1) * sizeof(*nsj->per_node));
    if (NULL == nsj->per_node) {
        rc = HERD_SUCCESS == rc ? HERD_ERR_OUT_OF_RESOURCE : rc;
    } else {
        memcpy(nsj->per_node, s->used, s->nodes.num * sizeof(*nsj->per_node));
    }
    register_and_start(s, nsj, rc, NULL);
    s->mapping_done = true;
    all_handed_over(s);
    if (s->wireup_failed && HERD_SUCCESS == rc) {
        orte_proc_record_t record = {.rank = UINT32_MAX,
                                     .node = s->my_candidate,
                                     .state = ORTE_PROC_START_FAILED,
                                     .exit_code = 1};
        send_record(s, ORTE_SESSION_SHEPHERD, ORTE_SESSION_TAG_FAILURE, false, 0, &record);
    }
    if (HERD_SUCCESS != rc) {
        fprintf(stderr, "session daemon on %s: mapping job %s failed: %s\n", s->node_name,
                s->spec->jobid, opal_strerror(rc));
        orte_proc_record_t record = {.rank = UINT32_MAX,
                                     .node = s->my_candidate,
                                     .state = ORTE_PROC_START_FAILED,
                                     .exit_code = 1};
        send_record(s, ORTE_SESSION_SHEPHERD, ORTE_SESSION_TAG_FAILURE, false, 0, &record);
        s->aborting = true;
        if (NULL != s->procs) {
            s->odls->kill_all(s->procs, 0);
        }
    }
    finish_local(s);
}

/* ------------------------------------------------------------------------------------------ */
/* spawns: herdrun planned them; every session daemon maps the same way and starts its share */

typedef struct spawn_map {
    session_t *s;
    nsjob_t *nsj;
    uint32_t my_part; /* this node's index in the spawn's node table */
} spawn_map_t;

static int spawn_planned_cb(uint32_t num_procs, const uint32_t *per_node, void *cbdata)
{
    spawn_map_t *m = cbdata;
    session_t *s = m->s;
    nsjob_t *nsj = m->nsj;
    uint32_t np = s->launch->num_participants;
    nsj->num_procs = num_procs;
    nsj->local_size = per_node[m->my_part];
    nsj->per_node = malloc((np > 0 ? np : 1) * sizeof(*nsj->per_node));
    if (NULL == nsj->per_node) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    memcpy(nsj->per_node, per_node, np * sizeof(*per_node));
    int rc = reserve_records(s, nsj->local_size);
    if (HERD_SUCCESS == rc) {
        rc = opal_jobdb_create(nsj->spec->jobid, s->node_name, num_procs, np, NULL, &nsj->db);
        nsj->own_db = HERD_SUCCESS == rc;
    }
    for (uint32_t p = 0; HERD_SUCCESS == rc && p < np; ++p) {
        rc = opal_jobdb_set_node(nsj->db, p, s->nodes.nodes[s->launch->participants[p]].name);
    }
    return rc;
}

static int spawn_emit_cb(const orte_rmaps_proc_t *proc, void *cbdata)
{
    spawn_map_t *m = cbdata;
    session_t *s = m->s;
    /* node ranks count every process of the job already on the node */
    uint32_t node_rank = s->used[s->launch->participants[proc->node]] + proc->local_rank;
    opal_jobdb_proc_t entry = db_entry(proc, node_rank);
    int rc = opal_jobdb_put_proc(m->nsj->db, &entry);
    if (HERD_SUCCESS != rc || proc->node != m->my_part) {
        return rc;
    }
    return take_local(s, m->nsj, proc, node_rank);
}

static void send_spawn_ack(session_t *s, uint32_t nspace, int status, uint32_t started,
                           const char *error)
{
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_pack_uint32(&buffer, nspace) &&
        HERD_SUCCESS == opal_buffer_pack_int32(&buffer, status) &&
        HERD_SUCCESS == opal_buffer_pack_uint32(&buffer, started) &&
        HERD_SUCCESS == opal_buffer_pack_string(&buffer, NULL != error ? error : "")) {
        send_buffer(s, 0, ORTE_SESSION_TAG_SPAWN_ACK, &buffer);
    }
    opal_buffer_destruct(&buffer);
}

/* Map a spawn over the job's participants as herdrun did (its processes of this node wait for
 * the registration). Every session daemon maps and registers it, with processes here or not, so
 * any process can look its processes up. */
static int spawn_start(session_t *s, orte_job_spawn_t *sp, nsjob_t *nsj)
{
    uint32_t np = s->launch->num_participants;
    orte_rmaps_node_t *list = NULL;
    orte_rmaps_app_t *apps = NULL;
    nsj->offset = sp->offset;
    nsj->parent_nspace = sp->parent_nspace;
    nsj->parent_rank = sp->parent_rank;
    nsj->own_spec = sp->spec;
    nsj->spec = sp->spec;
    sp->spec = NULL;
    nsj->num_nodes = np;
    int rc = orte_jobmap_spawn_nodes(&s->nodes, s->launch->participants, np, s->used, &list);
    if (HERD_SUCCESS == rc) {
        rc = orte_jobmap_apps(nsj->spec, &apps);
    }
    if (HERD_SUCCESS == rc) {
        spawn_map_t m = {.s = s, .nsj = nsj, .my_part = s->vpid - 1};
        orte_rmaps_job_t job = {.nodes = list,
                                .num_nodes = np,
                                .apps = apps,
                                .num_apps = nsj->spec->num_apps,
                                .planned = spawn_planned_cb};
        uint32_t before = s->num_records, n = 0;
        rc = orte_rmaps_base_map_job(&job, spawn_emit_cb, &m, &n);
        nsj->first_record = before;
        nsj->num_local = s->num_records - before;
        if (HERD_SUCCESS == rc) {
            rc = opal_jobdb_finish(nsj->db);
        }
    }
    free(list);
    free(apps);
    if (HERD_SUCCESS == rc) {
        for (uint32_t p = 0; p < np; ++p) {
            s->used[s->launch->participants[p]] += nsj->per_node[p];
        }
    }
    return rc;
}

static void recv_spawn(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                       size_t length, void *arg)
{
    session_t *s = arg;
    opal_buffer_t buffer;
    orte_job_spawn_t *sp = NULL;
    opal_buffer_init(&buffer);
    int rc = opal_buffer_load(&buffer, data, length);
    if (HERD_SUCCESS == rc) {
        rc = orte_job_spawn_unpack(&buffer, &sp);
    }
    opal_buffer_destruct(&buffer);
    nsjob_t *nsj = (HERD_SUCCESS == rc && 0 == src) ? nsjob_new(s, sp->nspace) : NULL;
    if (NULL == nsj) {
        fprintf(stderr, "session daemon on %s: ignoring a malformed spawn from vpid %u\n",
                s->node_name, src);
        if (HERD_SUCCESS == rc) {
            send_spawn_ack(s, sp->nspace, HERD_ERR_BAD_PARAM, 0, "a malformed spawn");
        }
        orte_job_spawn_free(sp);
        return;
    }
    uint32_t launched_before = s->launched;
    rc = spawn_start(s, sp, nsj);
    if (HERD_SUCCESS != rc) {
        fprintf(stderr, "session daemon on %s: cannot start the processes of %s: %s\n",
                s->node_name, nsj->spec->jobid, opal_strerror(rc));
    }
    if (s->done_sent && nsj->num_local > 0 && HERD_SUCCESS == rc) {
        /* this node had finished: it has processes again, and reports them when they end */
        s->done_sent = false;
        s->iof_drained = false;
        opal_buffer_init(&buffer);
        send_buffer(s, ORTE_SESSION_SHEPHERD, ORTE_SESSION_TAG_REOPEN, &buffer);
        opal_buffer_destruct(&buffer);
    }
    register_and_start(s, nsj, rc, sp);
    uint32_t started = s->launched - launched_before;
    send_spawn_ack(s, nsj->index,
                   (HERD_SUCCESS == rc && started == nsj->num_local)
                       ? HERD_SUCCESS
                       : (HERD_SUCCESS != rc ? rc : HERD_ERR_NOT_FOUND),
                   started,
                   HERD_SUCCESS != rc          ? "a session daemon could not map or register them"
                   : started != nsj->num_local ? "some of them could not be started"
                                               : NULL);
    orte_job_spawn_free(sp);
    finish_local(s);
}

/* Every session daemon's program check is in: go, or stop having started nothing. */
static void check_cb(int status, const orte_grpcomm_result_t *result, void *cbdata)
{
    session_t *s = cbdata;
    bool ok = HERD_SUCCESS == status;
    for (uint32_t v = 0; ok && v < result->num_blobs; ++v) {
        ok = 0 == result->blobs[v].len;
    }
    if (s->launched_early) {
        /* herdrun has the (empty) check now; only a failed collective is news */
        if (!ok && !s->aborting) {
            fprintf(stderr, "session daemon on %s: the start check of job %s failed after the "
                            "launch (%s): ending the job\n",
                    s->node_name, s->spec->jobid, opal_strerror(status));
            s->aborting = true;
            s->odls->kill_all(s->procs, 0);
        }
        return;
    }
    if (!ok) {
        s->mapping_done = true; /* nothing will be mapped: herdrun reports and closes */
        finish_local(s);
        return;
    }
    map_and_launch(s);
}

static int plan_only(uint32_t num_procs, const uint32_t *per_node, void *cbdata)
{
    return HERD_ERR_TAKE_NEXT; /* the counts are all we wanted */
}

/* Which apps have processes on this node (planning only: O(nodes)). NULL when planning fails:
 * then every app is checked. */
static bool *local_apps(session_t *s)
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

/* Whether the processes of app (program: its resolved path) could talk to a wireup, or start a
 * program that could: only programs that cannot (opal_program_is_leaf) save the wireup's
 * start. */
static bool app_can_use_wireup(session_t *s, const orte_job_app_t *app, const char *program,
                               char *why, size_t why_size)
{
    bool leaf = false;
    char reason[128] = "";
    if (HERD_SUCCESS != opal_program_is_leaf(program, &leaf, reason, sizeof(reason))) {
        snprintf(reason, sizeof(reason), "unreadable: %s", strerror(errno));
        leaf = false;
    }
    /* a preloaded library could be anything, a wireup client included */
    char *const *envs[] = {app->env, s->proc_env};
    for (size_t e = 0; leaf && e < sizeof(envs) / sizeof(envs[0]); ++e) {
        if (opal_env_find(envs[e], "LD_PRELOAD") >= 0 || opal_env_find(envs[e], "LD_AUDIT") >= 0) {
            snprintf(reason, sizeof(reason), "LD_PRELOAD or LD_AUDIT in its environment");
            leaf = false;
        }
    }
    snprintf(why, why_size, "%s %s a wireup (%s)", program, leaf ? "cannot use" : "may use",
             reason);
    return !leaf;
}

/* Every program with processes here must be there before anything starts anywhere. What is
 * wrong goes to herdrun in the check's allgather (not as output), so it can say it once for
 * all nodes. Returns the messages (empty: fine); NULL when out of memory. */
static char *check_programs(session_t *s)
{
    bool *local = local_apps(s);
    char why[4200] = ""; /* said after the capture ends: what is said during it is an error */
    int saved = dup(STDERR_FILENO);
    int capture[2] = {-1, -1};
    fflush(stderr);
    if (saved >= 0 && 0 == pipe2(capture, O_CLOEXEC)) {
        fcntl(capture[1], F_SETPIPE_SZ, 1 << 20);
        fcntl(capture[1], F_SETFL, O_NONBLOCK);
        dup2(capture[1], STDERR_FILENO);
        close(capture[1]);
    }
    for (uint32_t a = 0; a < s->spec->num_apps; ++a) {
        const orte_job_app_t *app = &s->spec->apps[a];
        if (NULL != local && !local[a]) {
            continue;
        }
        const char *path = orte_odls_base_env_path(app->env);
        if (NULL == path) {
            path = getenv("PATH");
        }
        char *resolved = NULL;
        orte_odls_base_check_program(app->argv[0], path, app->cwd, s->node_name, &resolved);
        if (NULL != resolved && !s->wireup_wanted) {
            s->wireup_wanted = app_can_use_wireup(s, app, resolved, why, sizeof(why));
        }
        free(resolved);
        if (NULL != app->cwd && 0 != access(app->cwd, X_OK)) {
            fprintf(stderr,
                    "herdrun: the working directory %s of app %u (%s) is not usable on "
                    "node %s: %s. Use --wdir with a directory that exists there.\n",
                    app->cwd, a, app->argv[0], s->node_name, strerror(errno));
        }
    }
    fflush(stderr);
    free(local);
    if (saved >= 0) {
        dup2(saved, STDERR_FILENO);
        close(saved);
    }
    if ('\0' != why[0] && s->wireup_output >= 0) {
        opal_output_verbose(5, s->wireup_output, "wireup on %s: %s", s->node_name, why);
    }
    char *text = calloc(1, 1);
    size_t len = 0;
    if (capture[0] >= 0) {
        fcntl(capture[0], F_SETFL, O_NONBLOCK);
        char chunk[4096];
        ssize_t n;
        while (NULL != text && (n = read(capture[0], chunk, sizeof(chunk))) > 0) {
            char *grown = realloc(text, len + (size_t) n + 1);
            if (NULL == grown) {
                free(text);
                text = NULL;
                break;
            }
            text = grown;
            memcpy(text + len, chunk, (size_t) n);
            len += (size_t) n;
            text[len] = '\0';
        }
        close(capture[0]);
    }
    return text;
}

/* ------------------------------------------------------------------------------------------ */
/* start-up */

/* The processes' environment: ours, without what only daemons should see. */
static int build_proc_env(session_t *s)
{
    extern char **environ;
    bool our_blacklist = NULL != getenv(OPAL_TOPOLOGY_DEFAULT_MARK);
    for (char **e = environ; NULL != *e; ++e) {
        /* and nothing of a wireup herdrun itself may run under (an outer mpirun or srun):
         * our modules set their own, and a stale one would send a process elsewhere */
        if ((0 == strncmp(*e, "PMIX_", 5) && 0 != strncmp(*e, "PMIX_MCA_", 9)) ||
            0 == strncmp(*e, "PMI_", 4) || 0 == strncmp(*e, "OMPI_MCA_orte_", 14) ||
            0 == strncmp(*e, "OMPI_COMM_WORLD", 15) || 0 == strncmp(*e, "HERD_WIREUP", 11) ||
            0 == strncmp(*e, "HERD_JOBDB=", 11)) {
            continue;
        }
        if (0 == strncmp(*e, "HERD_DVM_", 9) || 0 == strncmp(*e, "HERD_SESSION_", 13) ||
            0 == strncmp(*e, "HWLOC_PLUGINS_PATH=", 19) ||
            0 == strncmp(*e, OPAL_TOPOLOGY_DEFAULT_MARK "=",
                         strlen(OPAL_TOPOLOGY_DEFAULT_MARK) + 1) ||
            (our_blacklist && 0 == strncmp(*e, "HWLOC_PLUGINS_BLACKLIST=", 24))) {
            continue;
        }
        if (HERD_SUCCESS != opal_argv_append(&s->proc_env, *e)) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    return HERD_SUCCESS;
}

static int grpcomm_send(void *ctx, orte_vpid_t dst, uint16_t tag, const void *data, size_t len)
{
    session_t *s = ctx;
    return s->ovl->send(s->overlay, dst, tag, data, len);
}

static void grpcomm_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                         size_t length, void *arg)
{
    session_t *s = arg;
    s->gc->deliver(s->grpcomm, src, tag, data, length);
}

static int redirect_output(session_t *s)
{
    if (0 != pipe2(s->out_pipe, O_CLOEXEC) || 0 != pipe2(s->err_pipe, O_CLOEXEC)) {
        return HERD_ERR_IN_ERRNO;
    }
    s->orig_fd[0] = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    s->orig_fd[1] = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    /* the processes inherit fds 1 and 2 (odls dup2s them, clearing close-on-exec) */
    if (dup2(s->out_pipe[1], STDOUT_FILENO) < 0 || dup2(s->err_pipe[1], STDERR_FILENO) < 0) {
        return HERD_ERR_IN_ERRNO;
    }
    close(s->out_pipe[1]);
    close(s->err_pipe[1]);
    s->out_pipe[1] = s->err_pipe[1] = -1;
    setvbuf(stdout, NULL, _IOLBF, 0);
    fcntl(s->out_pipe[0], F_SETFL, O_NONBLOCK);
    fcntl(s->err_pipe[0], F_SETFL, O_NONBLOCK);
    int rc = opal_event_fd_create(s->base, s->out_pipe[0], OPAL_EVENT_READ | OPAL_EVENT_PERSIST,
                                  output_cb, s, &s->out_event);
    if (HERD_SUCCESS == rc) {
        rc = opal_event_fd_create(s->base, s->err_pipe[0], OPAL_EVENT_READ | OPAL_EVENT_PERSIST,
                                  output_cb, s, &s->err_event);
    }
    if (HERD_SUCCESS == rc) {
        opal_event_add(s->out_event, NULL);
        opal_event_add(s->err_event, NULL);
    }
    return rc;
}

static int iof_send(void *ctx, orte_vpid_t dst, int msg, const struct iovec *iov, int iovcnt)
{
    session_t *s = ctx;
    if (NULL == s->overlay) {
        return HERD_ERR_UNREACH;
    }
    return s->ovl->sendv(s->overlay, dst, (uint16_t) (ORTE_SESSION_TAG_IOF + msg), iov, iovcnt);
}

static void iof_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                     size_t length, void *arg)
{
    session_t *s = arg;
    struct iovec iov = {.iov_base = (void *) data, .iov_len = length};
    if (NULL != s->source) {
        s->iof->source_deliver(s->source, src, tag - ORTE_SESSION_TAG_IOF, &iov, 1);
    }
}

static int wireup_send(void *ctx, orte_vpid_t dst, uint16_t tag, const struct iovec *iov,
                       int iovcnt)
{
    session_t *s = ctx;
    if (NULL == s->overlay) {
        return HERD_ERR_UNREACH;
    }
    return s->ovl->sendv(s->overlay, dst, tag, iov, iovcnt);
}

static void wireup_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                        size_t length, void *arg)
{
    session_t *s = arg;
    orte_session_wireup_deliver(s->wireup, src, tag, data, length);
}

/* A process asked for the job to be aborted: the shepherd ends the job and herdrun shows the
 * message. Its record says so from now on, whatever its exit looks like. */
static void wireup_abort(void *ctx, uint32_t nspace, uint32_t rank, int status, const char *message)
{
    session_t *s = ctx;
    orte_proc_record_t *r =
        (nspace < s->num_jobs) ? find_record(s, s->jobs[nspace]->offset + rank) : NULL;
    if (NULL == r || ORTE_PROC_ABORTED == r->state) {
        return;
    }
    r->state = ORTE_PROC_ABORTED;
    /* what a shell would see of exit(status) */
    r->exit_code = status & 0xff;
    if (0 == r->exit_code && 0 != status) {
        r->exit_code = 1;
    }
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == orte_proc_record_pack(&buffer, r) &&
        HERD_SUCCESS == opal_buffer_pack_string(&buffer, NULL != message ? message : "")) {
        send_buffer(s, ORTE_SESSION_SHEPHERD, ORTE_SESSION_TAG_ABORTED, &buffer);
    }
    opal_buffer_destruct(&buffer);
}

/* A process asks for more processes: herdrun plans them and every session daemon starts its
 * share; the answer comes in recv_spawn_resp. */
static int wireup_spawn(void *ctx, const orte_wireup_spawn_request_t *req,
                        orte_wireup_spawn_fn_t cb, void *cbdata)
{
    session_t *s = ctx;
    if (NULL == req || NULL == cb || 0 == req->num_apps || req->num_apps > ORTE_JOB_MAX_APPS ||
        req->parent_nspace >= s->num_jobs || req->num_preput > ORTE_JOB_MAX_PREPUT) {
        return HERD_ERR_BAD_PARAM;
    }
    for (uint32_t a = 0; a < req->num_apps; ++a) {
        if (NULL == req->apps[a].argv || NULL == req->apps[a].argv[0] ||
            '\0' == req->apps[a].argv[0][0] || 0 == req->apps[a].np) {
            return HERD_ERR_BAD_PARAM;
        }
    }
    orte_job_spawn_t sp = {.req_id = ++s->next_spawn_id,
                           .requester = s->vpid,
                           .parent_nspace = req->parent_nspace,
                           .parent_rank = req->parent_rank,
                           .num_preput = req->num_preput};
    spawn_req_t *pending = calloc(1, sizeof(*pending));
    sp.spec = calloc(1, sizeof(*sp.spec));
    int rc = (NULL == pending || NULL == sp.spec) ? HERD_ERR_OUT_OF_RESOURCE : HERD_SUCCESS;
    if (HERD_SUCCESS == rc) {
        sp.spec->jobid = strdup("spawn"); /* herdrun names it */
        sp.spec->apps = calloc(req->num_apps, sizeof(*sp.spec->apps));
        sp.spec->num_apps = req->num_apps;
        rc = (NULL == sp.spec->jobid || NULL == sp.spec->apps) ? HERD_ERR_OUT_OF_RESOURCE : rc;
    }
    for (uint32_t a = 0; HERD_SUCCESS == rc && a < req->num_apps; ++a) {
        orte_job_app_t *app = &sp.spec->apps[a];
        app->np = req->apps[a].np;
        app->argv = opal_argv_copy(req->apps[a].argv);
        app->env = opal_argv_copy(req->apps[a].env);
        app->cwd = (NULL != req->apps[a].cwd) ? strdup(req->apps[a].cwd) : NULL;
        if (NULL == app->argv || (NULL != req->apps[a].env && NULL == app->env) ||
            (NULL != req->apps[a].cwd && NULL == app->cwd)) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < req->num_preput; ++i) {
        if (NULL == req->preput_keys[i] || NULL == req->preput_values[i] ||
            HERD_SUCCESS != opal_argv_append(&sp.preput_keys, req->preput_keys[i]) ||
            HERD_SUCCESS != opal_argv_append(&sp.preput_values, req->preput_values[i])) {
            rc = NULL == req->preput_keys[i] || NULL == req->preput_values[i]
                     ? HERD_ERR_BAD_PARAM
                     : HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == rc) {
        rc = orte_job_spawn_pack(&buffer, &sp);
    }
    if (HERD_SUCCESS == rc) {
        rc = s->ovl->send(s->overlay, 0, ORTE_SESSION_TAG_SPAWN_REQ, buffer.base, buffer.used);
    }
    opal_buffer_destruct(&buffer);
    orte_job_spec_free(sp.spec);
    opal_argv_free(sp.preput_keys);
    opal_argv_free(sp.preput_values);
    if (HERD_SUCCESS != rc) {
        free(pending);
        return rc;
    }
    *pending = (spawn_req_t){.next = s->spawn_reqs, .id = sp.req_id, .cb = cb, .cbdata = cbdata};
    s->spawn_reqs = pending;
    return HERD_SUCCESS;
}

static void recv_spawn_resp(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                            const void *data, size_t length, void *arg)
{
    session_t *s = arg;
    opal_buffer_t buffer;
    uint32_t id = 0, nspace = 0;
    int32_t status = 0;
    char *error = NULL;
    opal_buffer_init(&buffer);
    if (0 == src && HERD_SUCCESS == opal_buffer_load(&buffer, data, length) &&
        HERD_SUCCESS == opal_buffer_unpack_uint32(&buffer, &id) &&
        HERD_SUCCESS == opal_buffer_unpack_int32(&buffer, &status) &&
        HERD_SUCCESS == opal_buffer_unpack_uint32(&buffer, &nspace) &&
        HERD_SUCCESS == opal_buffer_unpack_string(&buffer, &error) && status <= 0 &&
        (HERD_SUCCESS != status || nspace < s->num_jobs)) {
        for (spawn_req_t **p = &s->spawn_reqs; NULL != *p; p = &(*p)->next) {
            spawn_req_t *req = *p;
            if (req->id == id) {
                *p = req->next;
                req->cb(status, nspace, (NULL != error && '\0' != *error) ? error : NULL,
                        req->cbdata);
                free(req);
                break;
            }
        }
    }
    free(error);
    opal_buffer_destruct(&buffer);
}

/* The wireup modules, once the overlay can carry the engine's messages. */
static int start_wireup(session_t *s)
{
    orte_session_wireup_config_t config = {.base = s->base,
                                           .node_name = s->node_name,
                                           .me = s->vpid,
                                           .names = ORTE_SESSION_SHEPHERD,
                                           .radix = s->launch->radix,
                                           .send = wireup_send,
                                           .abort = wireup_abort,
                                           .spawn = wireup_spawn,
                                           .ctx = s};
    return orte_session_wireup_start(&config, &s->wireup);
}

static void iof_drained(void *cbdata)
{
    session_t *s = cbdata;
    s->iof_drained = true;
    finish_local(s);
}

/* The processes' I/O: forwarded from here, unless herdrun reads their pipes itself. */
static int start_iof(session_t *s)
{
    int rc = orte_iof_base_open();
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    s->iof = orte_iof_base_module();
    if (s->iof_sock >= 0) {
        return HERD_SUCCESS;
    }
    orte_iof_source_config_t config = {
        .base = s->base,
        .vpid = s->vpid,
        .sink = 0,
        .stdin_target = s->spec->stdin_target,
        .transport = {.send = iof_send, .ctx = s},
        .drained = iof_drained,
        .cbdata = s,
    };
    return s->iof->source_create(&config, &s->source);
}

static int start_overlay(session_t *s, int listen_fd)
{
    orte_overlay_config_t config = {
        .base = s->base,
        .vpid = s->vpid,
        .num_daemons = s->size,
        .radix = s->launch->radix,
        .dvm_id = s->spec->jobid,
    };
    memcpy(config.secret, s->spec->secret, sizeof(config.secret));
    int rc = orte_overlay_base_open();
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    s->ovl = orte_overlay_base_module();
    if (HERD_SUCCESS != (rc = s->ovl->init(&config, &s->overlay))) {
        return rc;
    }
    s->ovl->set_lost_callback(s->overlay, lost_cb, s);
    const struct {
        uint16_t tag;
        orte_overlay_recv_cb_t cb;
    } handlers[] = {{ORTE_SESSION_TAG_FAILURE, recv_failure},
                    {ORTE_SESSION_TAG_ABORT, recv_abort},
                    {ORTE_SESSION_TAG_SIGNAL, recv_signal},
                    {ORTE_SESSION_TAG_DONE, recv_done},
                    {ORTE_SESSION_TAG_LOST, recv_lost},
                    {ORTE_SESSION_TAG_ABORTED, recv_aborted},
                    {ORTE_SESSION_TAG_REOPEN, recv_reopen},
                    {ORTE_SESSION_TAG_SPAWN, recv_spawn},
                    {ORTE_SESSION_TAG_SPAWN_RESP, recv_spawn_resp}};
    for (size_t i = 0; i < sizeof(handlers) / sizeof(handlers[0]); ++i) {
        if (HERD_SUCCESS !=
            (rc = s->ovl->register_recv(s->overlay, handlers[i].tag, handlers[i].cb, s))) {
            return rc;
        }
    }
    for (int m = 0; m < ORTE_IOF_NUM_MSGS; ++m) {
        rc = s->ovl->register_recv(s->overlay, (uint16_t) (ORTE_SESSION_TAG_IOF + m), iof_recv, s);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
    for (uint16_t t = ORTE_WIREUP_TAG_BASE; t < ORTE_WIREUP_TAG_END; ++t) {
        if (HERD_SUCCESS != (rc = s->ovl->register_recv(s->overlay, t, wireup_recv, s))) {
            return rc;
        }
    }
    if (HERD_SUCCESS != (rc = orte_grpcomm_base_open())) {
        return rc;
    }
    s->gc = orte_grpcomm_base_module();
    orte_grpcomm_transport_t transport = {.me = s->vpid,
                                          .num_daemons = s->size,
                                          .radix = s->launch->radix,
                                          .send = grpcomm_send,
                                          .ctx = s};
    rc = s->gc->create(&transport, &s->grpcomm);
    for (uint16_t t = 0; HERD_SUCCESS == rc && t < ORTE_GRPCOMM_NUM_TAGS; ++t) {
        rc = s->ovl->register_recv(s->overlay, (uint16_t) (ORTE_GRPCOMM_TAG_BASE + t), grpcomm_recv,
                                   s);
    }
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    char *uri = NULL;
    if (listen_fd >= 0 &&
        HERD_SUCCESS != (rc = s->ovl->adopt_listener(s->overlay, listen_fd, &uri))) {
        return rc;
    }
    free(uri);
    orte_vpid_t parent = orte_radix_parent(s->vpid, s->launch->radix);
    if (s->parent_sock >= 0 && NULL != s->ovl->adopt_peer) {
        /* forked by herdrun with our connection to it already made */
        rc = s->ovl->adopt_peer(s->overlay, s->parent_sock, parent);
        if (HERD_SUCCESS == rc) {
            s->parent_sock = -1;
        }
        return rc;
    }
    /* the parent's static endpoint: herdrun's sink, or the parent node's session endpoint */
    const char *parent_uri = s->spec->sink_uri;
    if (parent > 0) {
        const orte_inventory_t *inv = s->inventories[s->launch->participants[parent - 1]];
        uint32_t count = (uint32_t) opal_argv_count(inv->session_uris);
        if (0 == count) {
            return HERD_ERR_NOT_FOUND;
        }
        parent_uri = inv->session_uris[s->spec->seq % count];
    }
    if (NULL == parent_uri) {
        return HERD_ERR_NOT_FOUND;
    }
    return s->ovl->connect_parent(s->overlay, parent_uri);
}

static void session_release(session_t *s)
{
    if (NULL != s->procs) {
        s->odls->destroy(s->procs); /* kills what still runs, and waits for it */
    }
    orte_odls_base_close();
    /* the process exits next (_exit, with no handlers or destructors): no wireup teardown */
    orte_session_wireup_end(s->wireup, true);
    s->wireup = NULL;
    while (NULL != s->spawn_reqs) {
        spawn_req_t *req = s->spawn_reqs;
        s->spawn_reqs = req->next;
        free(req);
    }
    if (NULL != s->source) {
        s->iof->source_destroy(s->source);
        s->source = NULL;
    }
    orte_iof_base_close();
    if (s->iof_sock >= 0) {
        close(s->iof_sock);
        s->iof_sock = -1;
    }
    if (s->parent_sock >= 0) {
        close(s->parent_sock); /* never adopted: herdrun sees it close */
        s->parent_sock = -1;
    }
    opal_jobdb_destroy(s->db);
    orte_endpoints_plan_destruct(&s->endpoints);
    free(s->ports);
    if (NULL != s->grpcomm) {
        s->gc->destroy(s->grpcomm);
    }
    if (NULL != s->overlay) {
        s->ovl->finalize(s->overlay);
        s->overlay = NULL;
        /* one round so the goodbyes leave */
        opal_event_base_poll(s->base);
    }
    orte_grpcomm_base_close();
    orte_overlay_base_close();
    orte_rmaps_base_close();
    orte_errmgr_base_close();
    if (NULL != s->out_event) {
        opal_event_free(s->out_event);
    }
    if (NULL != s->err_event) {
        opal_event_free(s->err_event);
    }
    opal_signal_pipe_close(s->signals);
    for (int i = 0; i < 2; ++i) {
        if (s->out_pipe[i] >= 0) {
            close(s->out_pipe[i]);
        }
        if (s->err_pipe[i] >= 0) {
            close(s->err_pipe[i]);
        }
        if (s->orig_fd[i] >= 0) {
            close(s->orig_fd[i]);
        }
    }
    if (NULL != s->base) {
        opal_event_base_free(s->base);
    }
    orte_jobmap_nodes_destruct(&s->nodes);
    free(s->apps);
    for (uint32_t c = 0; NULL != s->inventories && c < s->launch->num_candidates; ++c) {
        orte_inventory_free(s->inventories[c]);
    }
    free(s->inventories);
    free(s->records);
    free(s->collected);
    free(s->finished);
    for (uint32_t k = 0; k < s->num_jobs; ++k) {
        unlink_rank_segments(s, s->jobs[k]);
        nsjob_free(s->jobs[k]);
    }
    free(s->jobs);
    free(s->used);
    opal_argv_free(s->proc_env);
    orte_job_launch_free(s->launch);
    free(s->node_name);
}

/* Run the job described by segment (the session segment's bytes); listen_fd is the node's
 * static session endpoint (-1 when the job has one node: no session daemon connects here). */
static int session_run(opal_buffer_t *segment, int listen_fd, int iof_sock, int stdin_fd,
                       int parent_sock)
{
    session_t storage, *s = &storage;
    int rc;
    memset(s, 0, sizeof(*s));
    s->iof_sock = iof_sock;
    s->stdin_fd = stdin_fd;
    s->parent_sock = parent_sock;
    s->out_pipe[0] = s->out_pipe[1] = s->err_pipe[0] = s->err_pipe[1] = -1;
    s->orig_fd[0] = s->orig_fd[1] = -1;
    s->status = HERD_SUCCESS;

    orte_session_handoff_t handoff;
    rc = orte_session_handoff_parse(segment, &handoff);
    if (HERD_SUCCESS == rc) {
        s->node_name = handoff.node_name;
        s->my_candidate = handoff.my_candidate;
        s->launch = handoff.launch;
        s->spec = s->launch->spec;
        s->inventories = handoff.inventories;
    }
    if (HERD_SUCCESS != rc) {
        fprintf(stderr, "herdd --session: cannot read the job: %s\n", opal_strerror(rc));
        session_release(s);
        return 1;
    }
    uint32_t participant = 0;
    while (participant < s->launch->num_participants &&
           s->launch->participants[participant] != s->my_candidate) {
        ++participant;
    }
    s->vpid = participant + 1;
    s->size = s->launch->num_participants + 1;
    for (char *const *m = s->spec->mca; NULL != m && NULL != *m; ++m) {
        const char *eq = strchr(*m, '=');
        if (NULL != eq && eq > *m) {
            char *name = strndup(*m, (size_t) (eq - *m));
            if (NULL != name) {
                setenv(name, eq + 1, 1); /* copied: the spec goes before the environment */
                free(name);
            }
        }
    }
    if (HERD_SUCCESS != (rc = opal_mca_init()) ||
        HERD_SUCCESS != (rc = opal_event_base_create(&s->base)) ||
        HERD_SUCCESS != (rc = redirect_output(s))) {
        fprintf(stderr, "herdd --session on %s: start-up failed: %s\n",
                NULL != s->node_name ? s->node_name : "?", opal_strerror(rc));
        goto out;
    }
    static const int caught[] = {SIGTERM, SIGINT, SIGHUP, 0};
    if (HERD_SUCCESS != (rc = opal_signal_pipe_open(s->base, caught, signal_cb, s, &s->signals))) {
        goto out;
    }
    if (HERD_SUCCESS != (rc = build_proc_env(s)) ||
        HERD_SUCCESS != (rc = orte_jobmap_nodes_build(
                             s->inventories, s->launch->slots, s->launch->max_slots,
                             s->launch->num_candidates, s->launch->xml_pairs, &s->nodes)) ||
        HERD_SUCCESS != (rc = orte_jobmap_apps(s->spec, &s->apps)) ||
        HERD_SUCCESS != (rc = orte_rmaps_base_open()) ||
        HERD_SUCCESS != (rc = orte_odls_base_open())) {
        fprintf(stderr, "herdd --session on %s: cannot prepare job %s: %s\n", s->node_name,
                s->spec->jobid, opal_strerror(rc));
        goto out;
    }
    nsjob_t *job = nsjob_new(s, 0);
    s->used = calloc(s->nodes.num > 0 ? s->nodes.num : 1, sizeof(*s->used));
    if (NULL == job || NULL == s->used) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    job->spec = s->spec;
    job->parent_nspace = UINT32_MAX;
    job->parent_rank = UINT32_MAX;
    if (ORTE_SESSION_SHEPHERD == s->vpid) {
        if (NULL != s->spec->errmgr) {
            setenv("HERD_MCA_errmgr", s->spec->errmgr, 1);
        }
        s->finished = calloc(s->size, sizeof(*s->finished));
        if (NULL == s->finished || HERD_SUCCESS != (rc = orte_errmgr_base_open())) {
            fprintf(stderr, "herdd --session on %s: no error manager for job %s\n", s->node_name,
                    s->spec->jobid);
            rc = (NULL == s->finished) ? HERD_ERR_OUT_OF_RESOURCE : HERD_ERR_NOT_FOUND;
            goto out;
        }
        s->errmgr = orte_errmgr_base_module();
    }
    s->odls = orte_odls_base_module();
    orte_odls_callbacks_t callbacks = {
        .proc_exited = proc_exited, .all_exited = all_exited, .cbdata = s};
    if (HERD_SUCCESS != (rc = s->odls->create(s->base, &callbacks, &s->procs)) ||
        HERD_SUCCESS != (rc = start_iof(s)) || HERD_SUCCESS != (rc = start_overlay(s, listen_fd))) {
        fprintf(stderr, "herdd --session on %s: cannot join job %s: %s\n", s->node_name,
                s->spec->jobid, opal_strerror(rc));
        goto out;
    }
    s->wireup_wanted = orte_wireup_base_always(&s->wireup_output);
    char *problems = check_programs(s);
    if (NULL == problems) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    bool all_here_fine = 1 == s->launch->num_participants && '\0' == problems[0];
    rc = s->gc->allgather(s->grpcomm, ORTE_SESSION_COLL_CHECK, problems, strlen(problems), check_cb,
                          s);
    free(problems);
    if (HERD_SUCCESS != rc) {
        goto out;
    }
    /* while the checks travel: the wireup (a PMIx server takes a few ms to start). If it
     * cannot start (a bad HERD_MCA_wireup), nothing is started here, and the job fails once
     * the overlay carries the reason to herdrun. */
    if (!s->wireup_wanted) {
        s->wireup_skipped = true;
        if (s->wireup_output >= 0) {
            opal_output_verbose(1, s->wireup_output,
                                "wireup on %s: no program of job %s can use a wireup: none "
                                "started (--mca wireup_base_always true starts them)",
                                s->node_name, s->spec->jobid);
        }
    } else if (HERD_SUCCESS != (rc = start_wireup(s))) {
        fprintf(stderr, "herdd --session on %s: cannot start the wireup of job %s: %s\n",
                s->node_name, s->spec->jobid, opal_strerror(rc));
        s->wireup_failed = true;
    }
    /* This node alone runs the job and found nothing wrong: that is the whole check, so start
     * now rather than a round trip to herdrun later (its allgather still brings herdrun the
     * same empty answer, ahead of any message about a process on the same connection). */
    if (all_here_fine) {
        s->launched_early = true;
        map_and_launch(s);
    }
    opal_event_base_loop(s->base, false);
    rc = s->status;

out:
    fflush(stdout);
    fflush(stderr);
    /* to herdrun, or where they went before when the overlay never came up */
    drain_pipe(s, s->out_pipe[0], 1);
    drain_pipe(s, s->err_pipe[0], 2);
    session_release(s);
    return HERD_SUCCESS == rc ? 0 : 1;
}

int orte_session_main(void)
{
    opal_buffer_t segment;
    /* never outlive the node's daemon */
    const char *daemon_pid = getenv(ORTE_SESSION_ENV_DAEMON);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (NULL == daemon_pid || getppid() != (pid_t) strtol(daemon_pid, NULL, 10)) {
        fprintf(stderr, "herdd --session is started by the node's daemon, not by hand\n");
        return 1;
    }
    const char *segment_name = getenv(ORTE_SESSION_ENV_SEGMENT);
    const char *fd_text = getenv(ORTE_SESSION_ENV_LISTEN_FD);
    int listen_fd = (NULL != fd_text) ? (int) strtol(fd_text, NULL, 10) : -1;
    opal_buffer_init(&segment);
    int rc = (NULL == segment_name || listen_fd < 0)
                 ? HERD_ERR_BAD_PARAM
                 : orte_session_handoff_read(segment_name, &segment);
    if (HERD_SUCCESS != rc) {
        fprintf(stderr, "herdd --session: cannot read the job from %s: %s\n",
                NULL != segment_name ? segment_name : "(no segment)", opal_strerror(rc));
        opal_buffer_destruct(&segment);
        return 1;
    }
    int status = session_run(&segment, listen_fd, -1, -1, -1);
    opal_buffer_destruct(&segment);
    return status;
}

int orte_session_run_forked(const void *segment_bytes, size_t len, pid_t parent, int iof_sock,
                            int stdin_fd, int parent_sock)
{
    opal_buffer_t segment;
    /* herdrun's signal handlers are not ours: what we catch goes to our own loop */
    opal_signal_pipe_drop_inherited();
    /* Ctrl-C at the terminal is herdrun's to forward, not ours to act on */
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) {
        return 1;
    }
    opal_buffer_init(&segment);
    int status = (HERD_SUCCESS == opal_buffer_load(&segment, segment_bytes, len))
                     ? session_run(&segment, -1, iof_sock, stdin_fd, parent_sock)
                     : 1;
    opal_buffer_destruct(&segment);
    return status;
}
