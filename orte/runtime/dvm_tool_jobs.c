/* SPDX-License-Identifier: BSD-3-Clause */
/* The DVM root's table of running jobs, for tools (herd-ps, herd-cancel): each job is the herdrun
 * connection that launched it; the root answers what it knows itself (nodes, jobs, owners),
 * relays a question about a job to its herdrun and the answer back, and forwards a cancel to it
 * once the asking user is found to own the job. */
#include "herd_config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opal/util/argv.h"
#include "orte/mca/toolsrv/toolsrv.h"
#include "orte/runtime/dvm_tool.h"
#include "orte/runtime/dvm_tool_internal.h"
#include "orte/runtime/job_status.h"

typedef struct root_job {
    orte_dvm_ps_job_t info;
    int fd; /* its herdrun's connection */
    struct root_job *next;
} root_job_t;

/* A question relayed to a herdrun, waiting for its answer: for a tool's connection (asker_fd),
 * or for the root itself (done, asker_fd -1: its PMIx tool server). */
typedef struct pending_query {
    uint32_t qid;
    int asker_fd;
    int herdrun_fd;
    void (*done)(struct pending_query *q, int status, const void *data, size_t len);
    void *arg;
    size_t index;
    struct pending_query *next;
} pending_query_t;

static struct {
    root_job_t *jobs;
    pending_query_t *queries;
    uint32_t next_qid;
    orte_dvm_t *dvm;
    orte_toolsrv_host_t host; /* the root as a tool server (toolsrv) */
    orte_toolsrv_t *server;
} table;

static void job_free(root_job_t *job)
{
    free(job->info.jobid);
    free(job->info.command);
    free(job->info.nodes);
    free(job);
}

int orte_dvm_tool_jobs_add(orte_dvm_t *dvm, int fd, uid_t uid, pid_t pid,
                           const orte_job_launch_t *launch)
{
    root_job_t *job = calloc(1, sizeof(*job));
    if (NULL == job) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    const orte_job_spec_t *spec = launch->spec;
    job->fd = fd;
    job->info.uid = (uint32_t) uid;
    job->info.pid = (int32_t) pid;
    job->info.start = (uint64_t) time(NULL);
    job->info.jobid = strdup(spec->jobid);
    job->info.command = spec->num_apps > 0 ? opal_argv_join(spec->apps[0].argv, ' ') : NULL;
    job->info.np = (uint32_t) orte_job_spec_requested_np(spec);
    job->info.nodes = calloc(launch->num_participants + 1, sizeof(uint32_t));
    if (NULL == job->info.jobid || NULL == job->info.nodes) {
        job_free(job);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t i = 0; i < launch->num_participants; ++i) {
        job->info.nodes[i] = launch->node_index[launch->participants[i]];
    }
    job->info.num_nodes = launch->num_participants;
    table.dvm = dvm;
    job->next = table.jobs;
    table.jobs = job;
    return HERD_SUCCESS;
}

/* Answer the asker of a relayed question: {i32 status, bytes}. */
static void answer_asker(int fd, int status, const void *data, size_t len)
{
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_pack_uint32(&buffer, ORTE_DVM_TOOL_JOB_ANSWER) &&
        HERD_SUCCESS == opal_buffer_pack_int32(&buffer, status) &&
        HERD_SUCCESS == opal_buffer_pack_bytes(&buffer, data, len)) {
        orte_dvm_tool_send_frame(fd, &buffer);
    }
    opal_buffer_destruct(&buffer);
}

/* The answer reached whoever asked. */
static void query_finish(pending_query_t *q, int status, const void *data, size_t len)
{
    if (NULL != q->done) {
        q->done(q, status, data, len);
    } else {
        answer_asker(q->asker_fd, status, data, len);
    }
}

void orte_dvm_tool_jobs_conn_closed(int fd)
{
    for (root_job_t **p = &table.jobs; NULL != *p;) {
        root_job_t *job = *p;
        if (job->fd == fd) {
            *p = job->next;
            job_free(job);
        } else {
            p = &job->next;
        }
    }
    for (pending_query_t **p = &table.queries; NULL != *p;) {
        pending_query_t *q = *p;
        if ((q->asker_fd >= 0 && q->asker_fd == fd) || q->herdrun_fd == fd) {
            *p = q->next;
            if (q->herdrun_fd == fd) {
                /* the job ended while the question was out */
                query_finish(q, HERD_ERR_NOT_FOUND, NULL, 0);
            }
            free(q);
        } else {
            p = &q->next;
        }
    }
}

void orte_dvm_tool_jobs_clear(void)
{
    if (NULL != table.host.base) {
        orte_toolsrv_base_stop(table.server);
        table.server = NULL;
        table.host.base = NULL;
    }
    while (NULL != table.jobs) {
        root_job_t *job = table.jobs;
        table.jobs = job->next;
        job_free(job);
    }
    while (NULL != table.queries) {
        pending_query_t *q = table.queries;
        table.queries = q->next;
        free(q);
    }
}

static root_job_t *job_find(const char *jobid)
{
    for (root_job_t *job = table.jobs; NULL != job; job = job->next) {
        if (0 == strcmp(job->info.jobid, jobid)) {
            return job;
        }
    }
    return NULL;
}

static int answer_ps(orte_dvm_t *dvm, int fd)
{
    const orte_allocation_t *alloc = orte_dvm_allocation(dvm);
    orte_dvm_ps_t ps = {.id = (char *) orte_dvm_id(dvm),
                        .now = (uint64_t) time(NULL),
                        .num_nodes = alloc->num_nodes};
    int rc = HERD_SUCCESS;
    ps.nodes = calloc(alloc->num_nodes + 1, sizeof(*ps.nodes));
    for (root_job_t *job = table.jobs; NULL != job; job = job->next) {
        ps.num_jobs++;
    }
    ps.jobs = calloc(ps.num_jobs + 1, sizeof(*ps.jobs));
    if (NULL == ps.nodes || NULL == ps.jobs) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    for (uint32_t i = 0; i < alloc->num_nodes; ++i) {
        ps.nodes[i].name = alloc->nodes[i].name;
        ps.nodes[i].slots = alloc->nodes[i].slots;
        ps.nodes[i].up = orte_dvm_node_up(dvm, i);
    }
    /* oldest first: the list is newest first */
    uint32_t k = ps.num_jobs;
    for (root_job_t *job = table.jobs; NULL != job; job = job->next) {
        ps.jobs[--k] = job->info;
    }
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == (rc = opal_buffer_pack_uint32(&buffer, ORTE_DVM_TOOL_PS_ANSWER)) &&
        HERD_SUCCESS == (rc = orte_dvm_ps_pack(&buffer, &ps))) {
        rc = orte_dvm_tool_send_frame(fd, &buffer);
    }
    opal_buffer_destruct(&buffer);
out:
    free(ps.nodes);
    free(ps.jobs);
    return rc;
}

/* Ask the job's herdrun; q (filled but for its qid and herdrun) is pending until it answers.
 * On failure q is freed. */
static int send_query(root_job_t *job, uint32_t what, pending_query_t *q)
{
    int rc;
    q->qid = ++table.next_qid;
    q->herdrun_fd = job->fd;
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == (rc = opal_buffer_pack_uint32(&buffer, ORTE_DVM_TOOL_JOB_QUERY)) &&
        HERD_SUCCESS == (rc = opal_buffer_pack_uint32(&buffer, q->qid)) &&
        HERD_SUCCESS == (rc = opal_buffer_pack_uint32(&buffer, what))) {
        rc = orte_dvm_tool_send_frame(job->fd, &buffer);
    }
    opal_buffer_destruct(&buffer);
    if (HERD_SUCCESS != rc) {
        free(q);
        return rc;
    }
    q->next = table.queries;
    table.queries = q;
    return HERD_SUCCESS;
}

static int relay_query(int fd, opal_buffer_t *frame)
{
    uint32_t version = 0, what = 0;
    char *jobid = NULL;
    int rc;
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(frame, &version)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_string(frame, &jobid)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(frame, &what))) {
        free(jobid);
        return rc;
    }
    if (ORTE_DVM_TOOL_VERSION != version || NULL == jobid) {
        free(jobid);
        return HERD_ERR_VERSION_MISMATCH;
    }
    root_job_t *job = job_find(jobid);
    free(jobid);
    if (NULL == job) {
        answer_asker(fd, HERD_ERR_NOT_FOUND, NULL, 0);
        return HERD_SUCCESS;
    }
    pending_query_t *q = calloc(1, sizeof(*q));
    if (NULL == q) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    q->asker_fd = fd;
    if (HERD_SUCCESS != send_query(job, what, q)) {
        answer_asker(fd, HERD_ERR_UNREACH, NULL, 0);
    }
    return HERD_SUCCESS;
}

/* A herdrun answers: pass it on to whoever asked (if still there). */
static int relay_answer(int fd, opal_buffer_t *frame)
{
    uint32_t qid = 0;
    int32_t status = 0;
    void *data = NULL;
    size_t len = 0;
    int rc;
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(frame, &qid)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_int32(frame, &status)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_bytes(frame, &data, &len))) {
        free(data);
        return rc;
    }
    for (pending_query_t **p = &table.queries; NULL != *p; p = &(*p)->next) {
        pending_query_t *q = *p;
        if (q->qid == qid && q->herdrun_fd == fd) {
            *p = q->next;
            query_finish(q, status, data, len);
            free(q);
            break;
        }
    }
    free(data);
    return HERD_SUCCESS;
}

/* herd-cancel (or a PMIx tool's job control): only the job's own user may end it. */
static int signal_job(root_job_t *job, int signo, uint32_t uid)
{
    if (job->info.uid != uid) {
        return HERD_ERR_AUTH;
    }
    opal_buffer_t buffer;
    int status;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == (status = opal_buffer_pack_uint32(&buffer, ORTE_DVM_TOOL_SIGNAL)) &&
        HERD_SUCCESS == (status = opal_buffer_pack_int32(&buffer, signo)) &&
        HERD_SUCCESS == (status = opal_buffer_pack_uint32(&buffer, uid)) &&
        HERD_SUCCESS == (status = opal_buffer_pack_int32(&buffer, 0))) {
        status = orte_dvm_tool_send_frame(job->fd, &buffer);
    }
    opal_buffer_destruct(&buffer);
    if (HERD_SUCCESS == status && 0 == job->info.cancel_signo) {
        job->info.cancel_signo = signo;
    }
    if (SIGKILL == signo && NULL != table.dvm) {
        /* at once, whatever herdrun and the session daemons do: a stopped session daemon
         * cannot kill its processes, its node daemon can kill it (and they die with it) */
        opal_buffer_t kill_cmd;
        opal_buffer_init(&kill_cmd);
        if (HERD_SUCCESS == opal_buffer_pack_string(&kill_cmd, job->info.jobid)) {
            (void) orte_dvm_root_command(table.dvm, ORTE_DVM_CMD_KILL_JOB, kill_cmd.base,
                                         kill_cmd.used);
        }
        opal_buffer_destruct(&kill_cmd);
    }
    return status;
}

static int cancel_job(int fd, uid_t uid, opal_buffer_t *frame)
{
    uint32_t version = 0;
    int32_t signo = 0;
    char *jobid = NULL;
    int rc;
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(frame, &version)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_string(frame, &jobid)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_int32(frame, &signo))) {
        free(jobid);
        return rc;
    }
    if (ORTE_DVM_TOOL_VERSION != version || NULL == jobid || signo <= 0 || signo >= 65) {
        free(jobid);
        return HERD_ERR_UNPACK_FAILURE;
    }
    root_job_t *job = job_find(jobid);
    free(jobid);
    int status = HERD_SUCCESS;
    uint32_t owner = 0;
    if (NULL == job) {
        status = HERD_ERR_NOT_FOUND;
    } else {
        status = signal_job(job, signo, (uint32_t) uid);
        owner = job->info.uid;
    }
    opal_buffer_t answer;
    opal_buffer_init(&answer);
    if (HERD_SUCCESS == (rc = opal_buffer_pack_uint32(&answer, ORTE_DVM_TOOL_CANCEL_ANSWER)) &&
        HERD_SUCCESS == (rc = opal_buffer_pack_int32(&answer, status)) &&
        HERD_SUCCESS == (rc = opal_buffer_pack_uint32(&answer, owner))) {
        rc = orte_dvm_tool_send_frame(fd, &answer);
    }
    opal_buffer_destruct(&answer);
    return rc;
}

int orte_dvm_tool_jobs_frame(orte_dvm_t *dvm, int fd, uid_t uid, uint32_t type,
                             opal_buffer_t *frame)
{
    uint32_t version = 0;
    switch (type) {
    case ORTE_DVM_TOOL_PS:
        if (HERD_SUCCESS != opal_buffer_unpack_uint32(frame, &version) ||
            ORTE_DVM_TOOL_VERSION != version) {
            return HERD_ERR_VERSION_MISMATCH;
        }
        return answer_ps(dvm, fd);
    case ORTE_DVM_TOOL_JOB_QUERY:
        return relay_query(fd, frame);
    case ORTE_DVM_TOOL_JOB_ANSWER:
        return relay_answer(fd, frame);
    case ORTE_DVM_TOOL_CANCEL:
        return cancel_job(fd, uid, frame);
    default:
        return HERD_ERR_UNPACK_FAILURE;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* the root as a tool server (toolsrv: PMIx tools see every running job) */

/* How long the root waits for the herdruns' process tables. */
#define GATHER_TIMEOUT_S 5

/* The jobs' process tables, asked of their herdruns at once. */
typedef struct gather {
    orte_toolsrv_jobs_cb_t cb;
    void *cbdata;
    size_t n;
    size_t pending;
    char **nspaces;
    uint32_t *num_procs;
    orte_job_status_t **status; /* by job: NULL until (unless) its herdrun answered */
    opal_event_t *timer;
} gather_t;

static void gather_free(gather_t *g)
{
    for (size_t i = 0; i < g->n; ++i) {
        free(g->nspaces[i]);
        orte_job_status_free(g->status[i]);
    }
    free(g->nspaces);
    free(g->num_procs);
    free(g->status);
    if (NULL != g->timer) {
        opal_event_free(g->timer);
    }
    free(g);
}

static void gather_finish(gather_t *g)
{
    /* questions still out are dropped: their answers come too late */
    for (pending_query_t **p = &table.queries; NULL != *p;) {
        pending_query_t *q = *p;
        if (q->arg == g && NULL != q->done) {
            *p = q->next;
            free(q);
        } else {
            p = &q->next;
        }
    }
    const orte_allocation_t *alloc = orte_dvm_allocation(table.dvm);
    orte_toolsrv_job_t *jobs = calloc(g->n + 1, sizeof(*jobs));
    orte_toolsrv_proc_t **procs = calloc(g->n + 1, sizeof(*procs));
    for (size_t i = 0; NULL != jobs && NULL != procs && i < g->n; ++i) {
        const orte_job_status_t *st = g->status[i];
        jobs[i].nspace = g->nspaces[i];
        jobs[i].num_procs = NULL != st ? st->num_procs : g->num_procs[i];
        jobs[i].aborting =
            NULL != st && 0 != strcmp(st->state, "running") && 0 != strcmp(st->state, "stopped");
        if (NULL == st || 0 == st->num_table ||
            NULL == (procs[i] = calloc(st->num_table, sizeof(**procs)))) {
            continue;
        }
        for (uint32_t k = 0; k < st->num_table; ++k) {
            const orte_job_proc_status_t *p = &st->procs[k];
            procs[i][k] = (orte_toolsrv_proc_t){
                .rank = p->rank,
                .host = p->node < alloc->num_nodes ? alloc->nodes[p->node].name : "?",
                .executable = p->app < st->num_apps ? st->programs[p->app] : "?",
                .pid = p->pid,
                .state = p->state,
                .exit_code = p->status};
        }
        jobs[i].procs = procs[i];
        jobs[i].num_known = st->num_table;
    }
    g->cb(NULL != jobs && NULL != procs ? HERD_SUCCESS : HERD_ERR_OUT_OF_RESOURCE, jobs, g->n,
          g->cbdata);
    for (size_t i = 0; NULL != procs && i < g->n; ++i) {
        free(procs[i]);
    }
    free(procs);
    free(jobs);
    gather_free(g);
}

static void gather_answer(pending_query_t *q, int status, const void *data, size_t len)
{
    gather_t *g = q->arg;
    if (HERD_SUCCESS == status) {
        opal_buffer_t buffer;
        opal_buffer_init(&buffer);
        if (HERD_SUCCESS == opal_buffer_load(&buffer, data, len)) {
            (void) orte_job_status_unpack(&buffer, &g->status[q->index]);
        }
        opal_buffer_destruct(&buffer);
    }
    if (0 == --g->pending) {
        q->arg = NULL; /* not dropped again by gather_finish: the caller frees it */
        gather_finish(g);
    }
}

static void gather_timeout_cb(int fd, short what, void *arg)
{
    gather_finish(arg);
}

static void root_jobs(bool with_procs, orte_toolsrv_jobs_cb_t cb, void *cbdata, void *arg)
{
    gather_t *g = calloc(1, sizeof(*g));
    size_t n = 0;
    for (root_job_t *job = table.jobs; NULL != job; job = job->next) {
        n++;
    }
    if (NULL == g || NULL == (g->nspaces = calloc(n + 1, sizeof(char *))) ||
        NULL == (g->num_procs = calloc(n + 1, sizeof(uint32_t))) ||
        NULL == (g->status = calloc(n + 1, sizeof(*g->status))) ||
        HERD_SUCCESS != opal_event_timer_create(orte_dvm_event_base(table.dvm), false,
                                                gather_timeout_cb, g, &g->timer)) {
        if (NULL != g) {
            gather_free(g);
        }
        cb(HERD_ERR_OUT_OF_RESOURCE, NULL, 0, cbdata);
        return;
    }
    g->cb = cb;
    g->cbdata = cbdata;
    for (root_job_t *job = table.jobs; NULL != job; job = job->next, g->n++) {
        g->nspaces[g->n] = strdup(job->info.jobid);
        g->num_procs[g->n] = job->info.np;
    }
    /* the summary (state, size) always; the table when asked for */
    uint32_t what = with_procs ? ORTE_DVM_JOB_QUERY_PROCS : ORTE_DVM_JOB_QUERY_SUMMARY;
    size_t i = 0;
    g->pending = 1; /* until every question is out */
    for (root_job_t *job = table.jobs; NULL != job; job = job->next, ++i) {
        pending_query_t *q = calloc(1, sizeof(*q));
        if (NULL == q) {
            continue;
        }
        q->asker_fd = -1;
        q->done = gather_answer;
        q->arg = g;
        q->index = i;
        g->pending++;
        if (HERD_SUCCESS != send_query(job, what, q)) {
            g->pending--;
        }
    }
    if (0 == --g->pending) {
        gather_finish(g);
        return;
    }
    struct timeval tv = {.tv_sec = GATHER_TIMEOUT_S, .tv_usec = 0};
    opal_event_add(g->timer, &tv);
}

static int root_signal_job(const char *nspace, int signo, uint32_t uid, void *arg)
{
    root_job_t *job = job_find(nspace);
    return NULL == job ? HERD_ERR_NOT_FOUND : signal_job(job, signo, uid);
}

void orte_dvm_tool_jobs_serve(orte_dvm_t *dvm)
{
    table.dvm = dvm;
    table.host = (orte_toolsrv_host_t){.base = orte_dvm_event_base(dvm),
                                       .name = "herd-dvm",
                                       .system_server = true,
                                       .jobs = root_jobs,
                                       .signal_job = root_signal_job};
    orte_toolsrv_base_start(&table.host, &table.server);
}
