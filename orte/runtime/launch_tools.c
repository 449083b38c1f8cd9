/* SPDX-License-Identifier: BSD-3-Clause */
/* What tools see of a running job on herdrun's side: the process table the session daemons
 * report (rank, node, pid, state, exit status), herdrun's answers to herd-ps and PMIx tools, and
 * the debugger interface's start (MPIR, --stop-on-exec) once every process has started. */
#include "herd_config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/util/argv.h"
#include "opal/util/show_help.h"
#include "orte/runtime/launch_internal.h"
#include "orte/runtime/session.h"

/* How long a query waits for the session daemons' tables. */
#define TOOLS_QUERY_TIMEOUT_MS 2000

struct launch_tools_query {
    launch_job_t *job;
    uint32_t qid;
    uint32_t what;
    bool *answered; /* by vpid */
    uint32_t num_answered;
    opal_event_t *timer;
    launch_tools_answer_cb_t cb;
    void *arg;
    struct launch_tools_query *next;
};

static bool debugger_wanted(const launch_job_t *job)
{
    return NULL != job->options->debugger;
}

void launch_tools_prepare(launch_job_t *job)
{
    if (job->options->stop_on_exec) {
        job->spec->flags |= ORTE_JOB_FLAG_STOP_ON_EXEC | ORTE_JOB_FLAG_PROCTABLE;
    } else if (debugger_wanted(job) && job->plan.num_procs <= launch_params_proctable_max()) {
        job->spec->flags |= ORTE_JOB_FLAG_PROCTABLE;
    }
}

static int ensure_table(launch_job_t *job)
{
    launch_tools_t *t = &job->tools;
    if (NULL != t->procs) {
        return HERD_SUCCESS;
    }
    uint32_t n = job->plan.num_procs;
    t->procs = calloc(n > 0 ? n : 1, sizeof(*t->procs));
    if (NULL == t->procs) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t r = 0; r < n; ++r) {
        t->procs[r].rank = r;
        t->procs[r].node = UINT32_MAX;
        t->procs[r].state = ORTE_JOB_PROC_UNKNOWN;
    }
    return HERD_SUCCESS;
}

void launch_tools_moved(launch_job_t *job, uint32_t rank, uint32_t candidate, int32_t pid)
{
    if (rank >= job->plan.num_procs || candidate >= job->plan.launch.num_candidates ||
        HERD_SUCCESS != ensure_table(job)) {
        return;
    }
    orte_job_proc_status_t *p = &job->tools.procs[rank];
    p->node = job->plan.launch.node_index[candidate];
    p->pid = pid;
    p->state = pid > 0 ? ORTE_JOB_PROC_RUNNING : ORTE_JOB_PROC_UNKNOWN;
}

/* ------------------------------------------------------------------------------------------ */
/* the debugger's start */

static void release_procs(launch_job_t *job)
{
    if (job->tools.released) {
        return;
    }
    job->tools.released = true;
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_pack_int32(&buffer, SIGCONT)) {
        for (orte_vpid_t v = 1; v < job->daemons.size; ++v) {
            if (!job->daemons.eof[v]) {
                job->daemons.ovl->send(job->daemons.overlay, v, ORTE_SESSION_TAG_SIGNAL,
                                       buffer.base, buffer.used);
            }
        }
    }
    opal_buffer_destruct(&buffer);
}

/* --stop-on-exec: the processes wait, stopped, until a debugger attaches. */
static void debug_poll_cb(int fd, short what, void *arg)
{
    launch_job_t *job = arg;
    const orte_launch_debugger_t *d = job->options->debugger;
    if (job->state.aborting || job->state.finished) {
        return;
    }
    if (NULL != d && d->attached(d->arg)) {
        d->breakpoint(d->arg);
        release_procs(job);
        return;
    }
    struct timeval tenth = {.tv_sec = 0, .tv_usec = 100000};
    opal_event_add(job->tools.debug_timer, &tenth);
}

static void all_started(launch_job_t *job)
{
    launch_tools_t *t = &job->tools;
    const orte_launch_debugger_t *d = job->options->debugger;
    uint32_t n = job->plan.num_procs;
    t->all_started = true;
    if (NULL != d) {
        orte_launch_proc_desc_t *descs = calloc(n > 0 ? n : 1, sizeof(*descs));
        if (NULL == descs) {
            return;
        }
        for (uint32_t r = 0; r < n; ++r) {
            const orte_job_proc_status_t *p = &t->procs[r];
            descs[r].host =
                p->node < job->plan.alloc->num_nodes ? job->plan.alloc->nodes[p->node].name : "?";
            descs[r].executable = (NULL != t->programs && p->app < job->spec->num_apps)
                                      ? t->programs[p->app]
                                      : job->spec->apps[0].argv[0];
            descs[r].pid = p->pid;
        }
        d->procs_started(descs, n, d->arg);
        free(descs);
    }
    if (!job->options->stop_on_exec) {
        return;
    }
    if (NULL != d && !d->attached(d->arg)) {
        opal_show_help(LAUNCH_HELP_FILE, "stopped-on-exec", false, job->spec->jobid, n,
                       (long) getpid());
        if (HERD_SUCCESS ==
            opal_event_timer_create(job->base, false, debug_poll_cb, job, &t->debug_timer)) {
            debug_poll_cb(-1, 0, job);
            return;
        }
    }
    release_procs(job); /* a debugger that started us holds them already */
}

/* ------------------------------------------------------------------------------------------ */
/* queries */

static void query_free(launch_tools_query_t *q)
{
    if (NULL != q->timer) {
        opal_event_free(q->timer);
    }
    free(q->answered);
    free(q);
}

static void unlink_query(launch_job_t *job, launch_tools_query_t *q)
{
    for (launch_tools_query_t **p = &job->tools.queries; NULL != *p; p = &(*p)->next) {
        if (*p == q) {
            *p = q->next;
            return;
        }
    }
}

static const char *job_state(const launch_job_t *job)
{
    if (job->tools.cancel_signo > 0) {
        return "cancelled";
    }
    if (job->state.finished || job->report.received) {
        return "ending";
    }
    if (job->state.aborting) {
        return "aborting";
    }
    if (job->options->stop_on_exec && job->tools.all_started && !job->tools.released) {
        return "stopped";
    }
    return "running";
}

/* The answer: the job's state and processes per node, and the table when with_table. */
static void answer(launch_job_t *job, bool with_table, launch_tools_answer_cb_t cb, void *arg)
{
    const launch_plan_t *plan = &job->plan;
    uint32_t np = plan->launch.num_participants;
    orte_job_status_t st = {.state = (char *) job_state(job), .num_procs = plan->num_procs};
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    st.nodes = calloc(np + 1, sizeof(uint32_t));
    st.node_procs = calloc(np + 1, sizeof(uint32_t));
    st.programs = calloc(job->spec->num_apps + 1, sizeof(char *));
    int rc = (NULL == st.nodes || NULL == st.node_procs || NULL == st.programs)
                 ? HERD_ERR_OUT_OF_RESOURCE
                 : HERD_SUCCESS;
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < np; ++i) {
        uint32_t c = plan->launch.participants[i];
        st.nodes[i] = plan->launch.node_index[c];
        st.node_procs[i] = NULL != job->spawns.used ? job->spawns.used[c] : 0;
    }
    st.num_nodes = np;
    for (uint32_t a = 0; HERD_SUCCESS == rc && a < job->spec->num_apps; ++a) {
        st.programs[a] = (NULL != job->tools.programs && NULL != job->tools.programs[a])
                             ? job->tools.programs[a]
                             : job->spec->apps[a].argv[0];
    }
    st.num_apps = job->spec->num_apps;
    if (with_table && NULL != job->tools.procs) {
        st.procs = job->tools.procs;
        st.num_table = plan->num_procs;
    }
    if (HERD_SUCCESS == rc) {
        rc = orte_job_status_pack(&buffer, &st);
    }
    cb(job, rc, HERD_SUCCESS == rc ? &buffer : NULL, arg);
    opal_buffer_destruct(&buffer);
    free(st.nodes);
    free(st.node_procs);
    free(st.programs);
}

static void query_done(launch_job_t *job, launch_tools_query_t *q)
{
    unlink_query(job, q);
    answer(job, true, q->cb, q->arg);
    query_free(q);
}

static void query_timeout_cb(int fd, short what, void *arg)
{
    launch_tools_query_t *q = arg;
    launch_job_t *job = q->job;
    /* what the silent session daemons hold is unknown now */
    for (uint32_t r = 0; NULL != job->tools.procs && r < job->plan.num_procs; ++r) {
        uint32_t node = job->tools.procs[r].node;
        for (uint32_t v = 1; v < job->daemons.size; ++v) {
            uint32_t c = job->plan.launch.participants[v - 1];
            if (!q->answered[v] && node == job->plan.launch.node_index[c] &&
                ORTE_JOB_PROC_RUNNING == job->tools.procs[r].state) {
                job->tools.procs[r].state = ORTE_JOB_PROC_UNKNOWN;
            }
        }
    }
    query_done(job, q);
}

static void check_query(launch_job_t *job, launch_tools_query_t *q)
{
    for (orte_vpid_t v = 1; v < job->daemons.size; ++v) {
        if (!q->answered[v] && !job->daemons.eof[v]) {
            return;
        }
    }
    query_done(job, q);
}

void launch_tools_query(launch_job_t *job, uint32_t what, launch_tools_answer_cb_t cb, void *arg)
{
    if (ORTE_DVM_JOB_QUERY_PROCS != what || NULL == job->daemons.overlay) {
        answer(job, false, cb, arg);
        return;
    }
    launch_tools_query_t *q = calloc(1, sizeof(*q));
    if (NULL == q || HERD_SUCCESS != ensure_table(job) ||
        NULL == (q->answered = calloc(job->daemons.size, sizeof(bool))) ||
        HERD_SUCCESS != opal_event_timer_create(job->base, false, query_timeout_cb, q, &q->timer)) {
        if (NULL != q) {
            query_free(q);
        }
        cb(job, HERD_ERR_OUT_OF_RESOURCE, NULL, arg);
        return;
    }
    q->job = job;
    q->qid = ++job->tools.next_qid;
    q->what = what;
    q->cb = cb;
    q->arg = arg;
    q->next = job->tools.queries;
    job->tools.queries = q;
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_pack_uint32(&buffer, q->qid)) {
        for (orte_vpid_t v = 1; v < job->daemons.size; ++v) {
            if (!job->daemons.eof[v]) {
                job->daemons.ovl->send(job->daemons.overlay, v, ORTE_SESSION_TAG_PTABLE_QUERY,
                                       buffer.base, buffer.used);
            }
        }
    }
    opal_buffer_destruct(&buffer);
    struct timeval tv = {.tv_sec = TOOLS_QUERY_TIMEOUT_MS / 1000,
                         .tv_usec = (TOOLS_QUERY_TIMEOUT_MS % 1000) * 1000};
    opal_event_add(q->timer, &tv);
    check_query(job, q);
}

/* ------------------------------------------------------------------------------------------ */
/* the session daemons' tables */

static int take_programs(launch_job_t *job, char **programs, size_t n)
{
    if (NULL != job->tools.programs || n != job->spec->num_apps) {
        return HERD_ERR_EXISTS; /* the first daemon's words are kept */
    }
    job->tools.programs = programs;
    return HERD_SUCCESS;
}

static int read_table(launch_job_t *job, opal_buffer_t *buffer, orte_vpid_t src, uint32_t *qid)
{
    uint32_t candidate = 0, n = 0;
    char **programs = NULL;
    size_t napps = 0;
    int rc;
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, qid)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &candidate)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_string_array(buffer, &programs, &napps)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &n))) {
        opal_argv_free(programs);
        return rc;
    }
    if (candidate != job->plan.launch.participants[src - 1] ||
        HERD_SUCCESS != take_programs(job, programs, napps)) {
        opal_argv_free(programs);
    }
    if (candidate != job->plan.launch.participants[src - 1]) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    if (HERD_SUCCESS != (rc = ensure_table(job))) {
        return rc;
    }
    for (uint32_t i = 0; i < n; ++i) {
        orte_job_proc_status_t p;
        if (HERD_SUCCESS != (rc = orte_job_proc_status_unpack(buffer, &p))) {
            return rc;
        }
        if (p.rank < job->plan.num_procs) {
            p.node = job->plan.launch.node_index[candidate];
            job->tools.procs[p.rank] = p;
        }
    }
    return HERD_SUCCESS;
}

void launch_tools_recv_ptable(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                              const void *data, size_t length, void *arg)
{
    launch_job_t *job = arg;
    opal_buffer_t buffer;
    uint32_t qid = 0;
    opal_buffer_init(&buffer);
    int rc = (src >= 1 && src < job->daemons.size) ? opal_buffer_load(&buffer, data, length)
                                                   : HERD_ERR_BAD_PARAM;
    if (HERD_SUCCESS == rc) {
        rc = read_table(job, &buffer, src, &qid);
    }
    opal_buffer_destruct(&buffer);
    if (HERD_SUCCESS != rc) {
        return; /* a session daemon of ours sends well-formed tables */
    }
    if (0 == qid) {
        if (++job->tools.started_reports == job->daemons.size - 1 && !job->tools.all_started) {
            all_started(job);
        }
        return;
    }
    for (launch_tools_query_t *q = job->tools.queries; NULL != q; q = q->next) {
        if (q->qid == qid) {
            q->answered[src] = true;
            check_query(job, q);
            return;
        }
    }
}

void launch_tools_release(launch_job_t *job)
{
    launch_tools_t *t = &job->tools;
    while (NULL != t->queries) {
        launch_tools_query_t *q = t->queries;
        t->queries = q->next;
        q->cb(job, HERD_ERR_NOT_FOUND, NULL, q->arg);
        query_free(q);
    }
    if (NULL != t->debug_timer) {
        opal_event_free(t->debug_timer);
        t->debug_timer = NULL;
    }
    free(t->procs);
    t->procs = NULL;
    opal_argv_free(t->programs);
    t->programs = NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* herdrun as a tool server (toolsrv: PMIx tools) */

typedef struct {
    orte_toolsrv_jobs_cb_t cb;
    void *cbdata;
} toolsrv_ask_t;

static void toolsrv_answer(launch_job_t *job, int status, const opal_buffer_t *answer, void *arg)
{
    toolsrv_ask_t *ask = arg;
    orte_toolsrv_job_t tj = {.nspace = job->spec->jobid,
                             .num_procs = job->plan.num_procs,
                             .aborting = job->state.aborting};
    orte_toolsrv_proc_t *procs = NULL;
    const launch_tools_t *t = &job->tools;
    if (HERD_SUCCESS == status && NULL != t->procs && job->plan.num_procs > 0) {
        procs = calloc(job->plan.num_procs, sizeof(*procs));
        for (uint32_t r = 0; NULL != procs && r < job->plan.num_procs; ++r) {
            const orte_job_proc_status_t *p = &t->procs[r];
            procs[r] = (orte_toolsrv_proc_t){
                .rank = r,
                .host = p->node < job->plan.alloc->num_nodes ? job->plan.alloc->nodes[p->node].name
                                                             : "?",
                .executable = (NULL != t->programs && p->app < job->spec->num_apps)
                                  ? t->programs[p->app]
                                  : job->spec->apps[0].argv[0],
                .pid = p->pid,
                .state = p->state,
                .exit_code = p->status};
        }
        tj.procs = procs;
        tj.num_known = NULL != procs ? job->plan.num_procs : 0;
    }
    ask->cb(HERD_SUCCESS, &tj, 1, ask->cbdata);
    free(procs);
    free(ask);
}

static void toolsrv_jobs(bool with_procs, orte_toolsrv_jobs_cb_t cb, void *cbdata, void *arg)
{
    launch_job_t *job = arg;
    toolsrv_ask_t *ask = malloc(sizeof(*ask));
    if (NULL == ask) {
        cb(HERD_ERR_OUT_OF_RESOURCE, NULL, 0, cbdata);
        return;
    }
    ask->cb = cb;
    ask->cbdata = cbdata;
    launch_tools_query(job, with_procs ? ORTE_DVM_JOB_QUERY_PROCS : ORTE_DVM_JOB_QUERY_SUMMARY,
                       toolsrv_answer, ask);
}

static int toolsrv_signal_job(const char *nspace, int signo, uint32_t uid, void *arg)
{
    launch_job_t *job = arg;
    if (0 != strcmp(nspace, job->spec->jobid)) {
        return HERD_ERR_NOT_FOUND;
    }
    if (uid != (uint32_t) getuid()) {
        return HERD_ERR_AUTH;
    }
    launch_job_cancel(job, signo);
    return HERD_SUCCESS;
}

static void serve_cb(int fd, short what, void *arg)
{
    launch_job_t *job = arg;
    launch_tools_t *t = &job->tools;
    if (job->state.finished) {
        return;
    }
    t->host = (orte_toolsrv_host_t){.base = job->base,
                                    .name = "herdrun",
                                    .jobs = toolsrv_jobs,
                                    .signal_job = toolsrv_signal_job,
                                    .arg = job};
    orte_toolsrv_base_start(&t->host, &t->server);
}

/* Tools attach to jobs that run a while: the tool server (a forked helper starting a PMIx
 * server, a fifth of a short job's time on a busy host) starts only once the job has run a
 * quarter of a second. */
#define TOOLS_SERVE_DELAY_US 250000

void launch_tools_serve(launch_job_t *job)
{
    launch_tools_t *t = &job->tools;
    if (HERD_SUCCESS == opal_event_timer_create(job->base, false, serve_cb, job, &t->serve_timer)) {
        struct timeval tv = {.tv_sec = 0, .tv_usec = TOOLS_SERVE_DELAY_US};
        opal_event_add(t->serve_timer, &tv);
    }
}

void launch_tools_unserve(launch_job_t *job)
{
    if (NULL != job->tools.serve_timer) {
        opal_event_free(job->tools.serve_timer);
        job->tools.serve_timer = NULL;
    }
    if (NULL != job->tools.host.base) {
        orte_toolsrv_base_stop(job->tools.server);
        job->tools.server = NULL;
        job->tools.host.base = NULL;
    }
}
