/* SPDX-License-Identifier: BSD-3-Clause */
/* The local backend: a one-node job of this host, without any daemon. herdrun is the node's
 * daemon: it forks the session daemon itself (no exec, no node daemon), which saves most of the
 * start-up, and waits for it at the end. */
#include "herd_config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "opal/util/show_help.h"
#include "orte/runtime/launch_internal.h"
#include "orte/runtime/session.h"
#include "orte/runtime/session_handoff.h"
#include "orte/runtime/session_wireup.h"

/* How long a session daemon we forked has to exit once the job is over. */
#define LOCAL_SESSION_EXIT_GRACE_MS 1000

bool orte_launch_local_possible(const orte_allocation_t *alloc)
{
    if (!launch_params_direct()) {
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

/* No DVM to number the job: a random id, and the job is number 1. */
static int local_name_job(launch_job_t *job, char *jobid, size_t size)
{
    uint8_t id[8];
    if (sizeof(id) != getrandom(id, sizeof(id), 0)) {
        return HERD_ERR_IN_ERRNO;
    }
    job->spec->seq = 1;
    snprintf(jobid, size, "%02x%02x%02x%02x%02x%02x%02x%02x.1", id[0], id[1], id[2], id[3], id[4],
             id[5], id[6], id[7]);
    return HERD_SUCCESS;
}

static const orte_inventory_t *local_inventory(const launch_job_t *job, uint32_t node_index)
{
    return job->mode.local.inventory;
}

/* What a node daemon would put in the session daemon's segment: the launch and this node. */
static int pack_handoff(launch_job_t *job, const opal_buffer_t *message, opal_buffer_t *segment)
{
    const orte_inventory_t *inv = job->mode.local.inventory;
    opal_buffer_t packed;
    opal_buffer_init(&packed);
    int rc = orte_inventory_pack(&packed, inv, false);
    if (HERD_SUCCESS == rc) {
        const uint8_t *blob = packed.base;
        size_t len = packed.used;
        rc = orte_session_handoff_pack(segment, inv->node_name, 0, message->base, message->used,
                                       &blob, &len, 1, inv->signature, inv->xml);
    }
    opal_buffer_destruct(&packed);
    return rc;
}

/* Fork the session daemon with the segment in memory. pair: the processes' pipes come to us
 * over it; link: our overlay connection to the daemon, when it has no sink_uri to dial. */
static int fork_session(launch_job_t *job, const opal_buffer_t *segment, int pair[2], int link[2])
{
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
        _exit(orte_session_run_forked(segment->base, segment->used, parent, pair[1],
                                      job->io.stdin_direct ? STDIN_FILENO : -1, link[1]));
    }
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
    job->mode.local.session_pid = pid;
    return HERD_SUCCESS;
}

static int local_start(launch_job_t *job, const opal_buffer_t *message)
{
    opal_buffer_t segment;
    opal_buffer_init(&segment);
    int rc = pack_handoff(job, message, &segment);
    if (HERD_SUCCESS != rc) {
        opal_buffer_destruct(&segment);
        return rc;
    }
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
    rc = fork_session(job, &segment, pair, link);
    opal_buffer_destruct(&segment);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (link[0] >= 0 &&
        HERD_SUCCESS != (rc = job->daemons.ovl->adopt_peer(job->daemons.overlay, link[0], 1))) {
        /* the daemon sees its end close and leaves; it is waited for as after any failure */
        close(link[0]);
        close(pair[0]);
        opal_show_help(LAUNCH_HELP_FILE, "session-connect-failed", false, opal_strerror(rc));
        return HERD_ERR_SILENT;
    }
    return launch_io_watch_pipes(job, pair[0]);
}

/* The session daemon we forked is gone: if the job was not over, nothing more will come. */
static void local_child_exited(launch_job_t *job)
{
    pid_t session_pid = job->mode.local.session_pid;
    int wstatus = 0;
    if (session_pid <= 0 || session_pid != waitpid(session_pid, &wstatus, WNOHANG)) {
        return;
    }
    orte_session_wireup_reaped(session_pid, wstatus);
    job->mode.local.session_pid = -1;
    if (job->state.finished) {
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
        if (0 == job->state.exit_status) {
            job->state.exit_status = 1;
        }
    }
    launch_job_finish(job);
}

/* Wait until the session daemon we forked has exited, at most grace_ms, woken by the SIGCHLD
 * byte of the signal pipe rather than by polling; then kill and reap it if it is still there.
 * Other signals that come now are dropped: the job is over. */
static void wait_session(launch_job_t *job, int grace_ms)
{
    pid_t session_pid = job->mode.local.session_pid;
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
        pid_t got = waitpid(session_pid, &wstatus, WNOHANG);
        if (got == session_pid || (got < 0 && EINTR != errno)) {
            if (got == session_pid) {
                orte_session_wireup_reaped(session_pid, wstatus);
            }
            job->mode.local.session_pid = -1;
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
    kill(session_pid, SIGKILL);
    int killed = SIGKILL; /* a wait status "killed by SIGKILL", should waitpid fail */
    waitpid(session_pid, &killed, 0);
    orte_session_wireup_reaped(session_pid, killed);
    job->mode.local.session_pid = -1;
}

static void local_reap(launch_job_t *job)
{
    if (job->mode.local.session_pid > 0) {
        /* it saw us leave: its exit (SIGCHLD writes to the signal pipe) ends our wait, a second
         * at most, then make sure */
        wait_session(job, LOCAL_SESSION_EXIT_GRACE_MS);
    }
}

static void local_release(launch_job_t *job)
{
    if (NULL != job->base) {
        opal_event_base_free(job->base);
        job->base = NULL;
    }
    if (NULL != job->mode.local.inventory) {
        orte_inventory_free(job->mode.local.inventory);
        job->mode.local.inventory = NULL;
    }
}

const launch_backend_t launch_backend_local = {
    .name = "local",
    .name_job = local_name_job,
    .inventory = local_inventory,
    .start = local_start,
    .child_exited = local_child_exited,
    .reap = local_reap,
    .release = local_release,
    .checks_session_frameworks = true,
    .forks_session = true,
};

/* This node's inventory (herdrun is its daemon), and a loop of our own. */
int launch_backend_local_open(launch_job_t *job, const orte_allocation_t *alloc)
{
    job->plan.alloc = alloc;
    job->plan.launch.radix = 32;
    orte_inventory_t *inventory = NULL;
    int rc = orte_inventory_collect(alloc->nodes[0].name, NULL, orte_dvm_local_fabric_components(),
                                    &inventory);
    if (HERD_SUCCESS != rc) {
        opal_show_help(LAUNCH_HELP_FILE, "no-topology", false, opal_strerror(rc));
        return HERD_ERR_SILENT;
    }
    job->mode.local.inventory = inventory;
    return opal_event_base_create(&job->base);
}
