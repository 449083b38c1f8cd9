/* SPDX-License-Identifier: BSD-3-Clause */
/* The session daemon's local processes: their environment, their start through odls, their
 * records (how each ended and what it used), the signals and aborts herdrun and the shepherd send
 * them, and the report to the shepherd once all of them have ended. */
#include "herd_config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/util/argv.h"
#include "opal/util/show_help.h"
#include "opal/util/topology.h"
#include "orte/runtime/session_internal.h"

/* The processes' environment: ours, without what only daemons should see. */
int orte_session_procs_build_env(orte_session_t *s)
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
        if (HERD_SUCCESS != opal_argv_append(&s->local.proc_env, *e)) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    return HERD_SUCCESS;
}

void orte_session_procs_release(orte_session_t *s)
{
    free(s->local.records);
    opal_argv_free(s->local.proc_env);
}

orte_proc_record_t *orte_session_record_find(orte_session_t *s, uint32_t id)
{
    uint32_t lo = 0, hi = s->local.num_records;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->local.records[mid].rank == id) {
            return &s->local.records[mid];
        }
        if (s->local.records[mid].rank < id) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    /* a rank moved here from a lost node was appended out of order (session_relocate.c) */
    for (uint32_t i = 0; i < s->local.num_records; ++i) {
        if (s->local.records[i].rank == id) {
            return &s->local.records[i];
        }
    }
    return NULL;
}

/* Room for n more local records (records stay in id order: a spawn's ids come after). */
int orte_session_records_reserve(orte_session_t *s, uint32_t n)
{
    uint32_t want = s->local.num_records + n;
    if (want <= s->local.cap_records) {
        return HERD_SUCCESS;
    }
    orte_proc_record_t *grown = realloc(s->local.records, (want > 0 ? want : 1) * sizeof(*grown));
    if (NULL == grown) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    s->local.records = grown;
    s->local.cap_records = want;
    return HERD_SUCCESS;
}

/* Every local process has exited and mapping is over: report to the shepherd, then tell
 * herdrun that nothing more comes from here (after our last output, on the same route). */
void orte_session_procs_finish(orte_session_t *s)
{
    orte_session_local_t *local = &s->local;
    if (local->done_sent || !s->map.done ||
        (NULL != local->procs && local->odls->num_alive(local->procs) > 0)) {
        return;
    }
    if (!orte_session_io_drained(s)) {
        return;
    }
    local->done_sent = true;
    orte_session_io_flush_output(s);
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    /* a node that had processes again after a spawn sends only the new ones */
    int rc = opal_buffer_pack_uint32(&buffer, local->num_records - local->records_sent);
    for (uint32_t i = local->records_sent; HERD_SUCCESS == rc && i < local->num_records; ++i) {
        rc = orte_proc_record_pack(&buffer, &local->records[i]);
    }
    local->records_sent = local->num_records;
    if (HERD_SUCCESS == rc) {
        orte_session_send_buffer(s, ORTE_SESSION_SHEPHERD, ORTE_SESSION_TAG_DONE, &buffer);
    }
    opal_buffer_destruct(&buffer);
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_pack_uint32(&buffer, local->launched)) {
        orte_session_send_buffer(s, 0, ORTE_SESSION_TAG_EOF, &buffer);
    }
    opal_buffer_destruct(&buffer);
}

/* ------------------------------------------------------------------------------------------ */
/* starting */

/* The environment every process of an app starts from: ours, with its -x variables replacing
 * those of the same name. Made once per app, not per process (the launch path). */
static int app_environment(orte_session_t *s, orte_session_nsjob_t *nsj, uint32_t app_index,
                           char ***env_out)
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
    char **env = opal_argv_copy(s->local.proc_env);
    if (NULL != s->local.proc_env && NULL == env) {
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

/* A local process could not be started: the shepherd hears of it, the rest of this node is not
 * started (it would only be killed again). */
static void start_failed(orte_session_t *s, orte_proc_record_t *r)
{
    r->state = ORTE_PROC_START_FAILED;
    r->exit_code = 1;
    orte_session_send_record(s, ORTE_SESSION_SHEPHERD, ORTE_SESSION_TAG_FAILURE, false, 0, r);
    s->local.aborting = true;
}

/* Start one local process of a namespace: its pipes, its wireup, odls. */
void orte_session_procs_start_one(orte_session_t *s, orte_session_nsjob_t *nsj,
                                  orte_proc_record_t *r, const orte_session_local_proc_t *p)
{
    const orte_job_app_t *app = &nsj->spec->apps[p->app];
    uint32_t id = nsj->offset + p->rank;
    if (s->local.aborting) {
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
                                .node_rank = p->node_rank,
                                .moved = p->moved};
    if (NULL != s->wireup.modules) {
        own_env = opal_argv_copy(env);
        int rc = (NULL == own_env && NULL != env)
                     ? HERD_ERR_OUT_OF_RESOURCE
                     : orte_session_wireup_proc_setup(s->wireup.modules, &wproc, &own_env, fds,
                                                      &num_fds);
        if (HERD_SUCCESS != rc) {
            opal_show_help(ORTE_SESSION_HELP, "wireup-proc-setup-failed", false, s->node_name,
                           p->rank, opal_strerror(rc));
            for (int i = 0; i < num_fds; ++i) {
                close(fds[i]);
            }
            opal_argv_free(own_env);
            orte_session_wireup_proc_started(s->wireup.modules, &wproc, 0);
            start_failed(s, r);
            return;
        }
        env = own_env;
    }
    int child[3], parent[3];
    bool wanted = 0 == nsj->index && orte_iof_base_stdin_wanted(s->spec->stdin_target, p->rank);
    /* herdrun's own stdin when it gives it (no pipe, nothing forwarded), else a pipe */
    int direct_stdin = wanted ? s->io.stdin_fd : -1;
    bool target = wanted && direct_stdin < 0;
    if (HERD_SUCCESS != orte_iof_base_make_pipes(target,
                                                 0 != (s->spec->flags & ORTE_JOB_FLAG_MERGE_STDERR),
                                                 child, parent)) {
        opal_show_help(ORTE_SESSION_HELP, "pipes-failed", false, s->node_name, p->rank,
                       strerror(errno));
        for (int i = 0; i < num_fds; ++i) {
            close(fds[i]);
        }
        opal_argv_free(own_env);
        if (NULL != s->wireup.modules) {
            orte_session_wireup_proc_started(s->wireup.modules, &wproc, 0);
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
        /* a debugger attaches before main (herdrun --stop-on-exec) */
        .stop_on_exec = 0 == nsj->index && 0 != (s->spec->flags & ORTE_JOB_FLAG_STOP_ON_EXEC),
    };
    int rc = s->local.odls->launch(s->local.procs, &spec);
    orte_iof_base_close_child(child);
    for (int i = 0; i < num_fds; ++i) {
        close(fds[i]); /* the process has its copies */
    }
    opal_argv_free(own_env);
    if (NULL != s->wireup.modules) {
        orte_session_wireup_proc_started(s->wireup.modules, &wproc, HERD_SUCCESS == rc ? pid : 0);
    }
    if (HERD_SUCCESS == rc) {
        r->pid = pid;
        orte_session_io_hand_over(s, id, parent);
        s->local.launched++;
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

void orte_session_procs_start_held(orte_session_t *s, orte_session_nsjob_t *nsj, int status)
{
    for (uint32_t i = 0; i < nsj->num_pending; ++i) {
        orte_proc_record_t *r = orte_session_record_find(s, nsj->offset + nsj->pending[i].rank);
        if (NULL != r && HERD_SUCCESS == status) {
            orte_session_procs_start_one(s, nsj, r, &nsj->pending[i]);
        } else if (NULL != r && !s->local.aborting) {
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
    orte_session_ptable_started(s);
}

/* ------------------------------------------------------------------------------------------ */
/* watching */

static void proc_exited(uint32_t rank, const orte_odls_exit_t *info, void *cbdata)
{
    orte_session_t *s = cbdata;
    orte_proc_record_t *r = orte_session_record_find(s, rank);
    orte_session_io_exited(s, rank);
    if (NULL == r) {
        return;
    }
    bool unfinalized = false;
    orte_session_nsjob_t *nsj = orte_session_nsjob_of(s, rank);
    if (NULL != s->wireup.modules && NULL != nsj) {
        orte_wireup_proc_t proc = {.ns = &nsj->ns,
                                   .rank = rank - nsj->offset,
                                   .app = r->app,
                                   .exit_code = info->exit_code,
                                   .signo = info->signaled ? info->signo : 0};
        unfinalized = orte_session_wireup_proc_exited(s->wireup.modules, &proc);
    }
    bool called_abort = ORTE_PROC_ABORTED == r->state;
    int abort_status = r->exit_code;
    r->pid = info->pid;
    r->collected = true;
    r->signaled = info->signaled;
    r->exit_code = info->exit_code;
    r->signo = info->signo;
    r->wall_ns = info->wall_ns;
    r->user_us = (uint64_t) info->user_cpu.tv_sec * 1000000u + (uint64_t) info->user_cpu.tv_usec;
    r->sys_us = (uint64_t) info->sys_cpu.tv_sec * 1000000u + (uint64_t) info->sys_cpu.tv_usec;
    r->max_rss_kb = info->max_rss_kb;
    /* killed on a process's request (PMIx_Job_control): aborted already */
    r->aborted = r->aborted || s->local.aborting;
    if (info->not_started) {
        r->state = ORTE_PROC_START_FAILED; /* its exec failed after all (odls said why) */
        r->signaled = false;
        r->exit_code = 1;
    } else if (called_abort) {
        r->state = ORTE_PROC_ABORTED; /* what it did last is what counts */
        r->signaled = false;
        r->exit_code = abort_status;
    } else if (unfinalized && !r->signaled && 0 == r->exit_code && !r->aborted) {
        r->state = ORTE_PROC_UNFINALIZED;
    }
    if (orte_proc_record_failed(r) && !r->aborted && !orte_session_restart_proc(s, r)) {
        orte_session_send_record(s, ORTE_SESSION_SHEPHERD, ORTE_SESSION_TAG_FAILURE, false, 0, r);
    }
}

static void all_exited(void *cbdata)
{
    orte_session_procs_finish(cbdata);
}

int orte_session_procs_open(orte_session_t *s)
{
    s->local.odls = orte_odls_base_module();
    orte_odls_callbacks_t callbacks = {
        .proc_exited = proc_exited, .all_exited = all_exited, .cbdata = s};
    return s->local.odls->create(s->base, &callbacks, &s->local.procs);
}

void orte_session_procs_close(orte_session_t *s)
{
    if (NULL != s->local.procs) {
        s->local.odls->destroy(s->local.procs); /* kills what still runs, and waits for it */
    }
    orte_odls_base_close();
}

/* ------------------------------------------------------------------------------------------ */
/* what herdrun and the shepherd tell them */

void orte_session_procs_recv_abort(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                   const void *data, size_t length, void *arg)
{
    orte_session_t *s = arg;
    opal_buffer_t buffer;
    int32_t grace = -1;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_load(&buffer, data, length)) {
        opal_buffer_unpack_int32(&buffer, &grace);
    }
    opal_buffer_destruct(&buffer);
    s->local.aborting = true;
    if (NULL != s->local.procs) {
        s->local.odls->kill_all(s->local.procs, grace < 0 ? ORTE_ODLS_KILL_GRACE_DEFAULT : grace);
    }
    orte_session_procs_finish(s);
}

void orte_session_procs_recv_signal(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                    const void *data, size_t length, void *arg)
{
    orte_session_t *s = arg;
    opal_buffer_t buffer;
    int32_t signo = 0;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_load(&buffer, data, length) &&
        HERD_SUCCESS == opal_buffer_unpack_int32(&buffer, &signo) && signo > 0 && signo < 65 &&
        NULL != s->local.procs) {
        /* the processes were told to stop: what they do now is not a failure of their own */
        if (SIGINT == signo || SIGTERM == signo || SIGHUP == signo) {
            s->local.aborting = true;
        }
        s->local.odls->signal(s->local.procs, signo);
    }
    opal_buffer_destruct(&buffer);
}

int orte_session_procs_signal(orte_session_t *s, orte_session_nsjob_t *nsj, uint32_t rank,
                              orte_wireup_signal_how_t how, int signo)
{
    bool any = false;
    int rc = HERD_ERR_NOT_FOUND;
    for (uint32_t i = 0; NULL != s->local.procs && i < nsj->num_local; ++i) {
        orte_proc_record_t *r = &s->local.records[nsj->first_record + i];
        if ((ORTE_WIREUP_RANK_WILDCARD != rank && r->rank != nsj->offset + rank) || r->pid <= 0) {
            continue;
        }
        int one =
            (ORTE_WIREUP_SIGNAL == how)
                ? s->local.odls->signal_proc(s->local.procs, r->pid, signo)
                : s->local.odls->kill_proc(s->local.procs, r->pid,
                                           ORTE_WIREUP_KILL == how ? 0 : s->spec->kill_grace_ms);
        if (HERD_SUCCESS == one && ORTE_WIREUP_SIGNAL != how) {
            r->aborted = true; /* asked to end: not a failure of its own */
        }
        any = any || HERD_SUCCESS == one;
        rc = (HERD_ERR_NOT_FOUND == one) ? rc : one;
    }
    return any ? HERD_SUCCESS : rc;
}
