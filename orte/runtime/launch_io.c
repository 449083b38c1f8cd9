/* SPDX-License-Identifier: BSD-3-Clause */
/* The job's input and output on herdrun's side: the iof sink that prints what the processes
 * write and feeds their stdin, the pipes of a one-node job read here directly, the socket tools
 * attach to (herdrun --attach), and what happens when herdrun's own output fails. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "opal/util/show_help.h"
#include "orte/runtime/launch_internal.h"
#include "orte/runtime/session.h"

/* The sink's way to the session daemons (stdin, flow control). */
static int iof_send(void *ctx, orte_vpid_t dst, int msg, const struct iovec *iov, int iovcnt)
{
    launch_job_t *job = ctx;
    if (NULL != job->io.source && ORTE_SESSION_SHEPHERD == dst) {
        /* our own source: a call, not a message */
        return job->io.iof->source_deliver(job->io.source, 0, msg, iov, iovcnt);
    }
    if (NULL == job->daemons.overlay) {
        return HERD_ERR_UNREACH;
    }
    return job->daemons.ovl->sendv(job->daemons.overlay, dst,
                                   (uint16_t) (ORTE_SESSION_TAG_IOF + msg), iov, iovcnt);
}

/* From our own source (the pipes of a one-node job) straight to the sink. */
static int iof_send_local(void *ctx, orte_vpid_t dst, int msg, const struct iovec *iov, int iovcnt)
{
    launch_job_t *job = ctx;
    return job->io.iof->sink_deliver(job->io.sink, ORTE_SESSION_SHEPHERD, msg, iov, iovcnt);
}

static void iof_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                     size_t length, void *arg)
{
    launch_job_t *job = arg;
    struct iovec iov = {.iov_base = (void *) data, .iov_len = length};
    job->io.iof->sink_deliver(job->io.sink, src, tag - ORTE_SESSION_TAG_IOF, &iov, 1);
}

static void iof_drained(void *cbdata)
{
    launch_job_t *job = cbdata;
    job->io.source_drained = true;
    launch_job_check_finished(job);
}

/* Pipes the session daemon handed over: ours to read from now on. */
static void take_pipes(launch_job_t *job)
{
    launch_io_t *io = &job->io;
    while (io->pipes_sock >= 0) {
        uint32_t rank = 0;
        int fds[3];
        int rc = orte_iof_base_recv_fds(io->pipes_sock, &rank, fds);
        if (HERD_ERR_NOT_FOUND == rc) {
            return;
        }
        if (HERD_SUCCESS != rc) {
            /* the session daemon is gone (or spoke nonsense): nothing more comes this way */
            if (NULL != io->pipes_event) {
                opal_event_free(io->pipes_event);
                io->pipes_event = NULL;
            }
            close(io->pipes_sock);
            io->pipes_sock = -1;
            return;
        }
        if (ORTE_IOF_RANK_DAEMON == rank) {
            io->iof->source_all_added(io->source);
        } else if (HERD_SUCCESS != (rc = io->iof->source_add(io->source, rank, fds))) {
            opal_show_help(LAUNCH_HELP_FILE, "output-forward-failed", false, rank,
                           opal_strerror(rc));
        }
    }
}

static void pipes_cb(int fd, short what, void *arg)
{
    take_pipes(arg);
}

int launch_io_watch_pipes(launch_job_t *job, int sock)
{
    job->io.pipes_sock = sock;
    int rc = opal_event_fd_create(job->base, sock, OPAL_EVENT_READ | OPAL_EVENT_PERSIST, pipes_cb,
                                  job, &job->io.pipes_event);
    if (HERD_SUCCESS == rc) {
        opal_event_add(job->io.pipes_event, NULL);
    }
    return rc;
}

bool launch_io_source_drained(launch_job_t *job)
{
    launch_io_t *io = &job->io;
    if (NULL == io->source || io->source_drained) {
        return true;
    }
    if (!io->source_finishing) {
        io->source_finishing = true;
        take_pipes(job);
        io->iof->source_finish(io->source);
    }
    return io->source_drained;
}

/* herdrun's own stdout or stderr refused a write. A pipe nobody reads any more (herdrun ... |
 * head): the output has nowhere to go, so the job stops, as the writer in a pipeline stops
 * (exit 141, 128 + SIGPIPE). Anything else (a full disk): said once, and the job goes on, its
 * output to that stream lost, and herdrun exits 1 if the job itself succeeded. */
static void output_failed_cb(void *arg, int stream, int error)
{
    launch_job_t *job = arg;
    const char *name = 1 == stream ? "standard output" : "standard error";
    job->io.output_lost = true;
    if (EPIPE != error) {
        opal_show_help(LAUNCH_HELP_FILE, "output-write-failed", false, name, strerror(error),
                       job->spec->jobid);
        return;
    }
    if (job->state.finished || job->state.aborting) {
        return;
    }
    opal_show_help(LAUNCH_HELP_FILE, "output-closed", false, name, job->spec->jobid);
    job->state.signals++; /* what the processes do now is our doing */
    if (0 == job->state.exit_status) {
        job->state.exit_status = 128 + SIGPIPE;
    }
    launch_job_abort(job, job->state.grace_ms);
}

/* A file of --output-filename could not be made or written (a full disk, a quota): said once,
 * the job goes on (what it writes there is lost from then on), herdrun exits 1 if the job
 * itself succeeded, as for its own outputs. */
static void file_failed_cb(void *arg, const char *path, uint32_t rank, int stream, int error)
{
    launch_job_t *job = arg;
    job->io.output_lost = true;
    opal_show_help(LAUNCH_HELP_FILE, "output-file-failed", false, path, rank,
                   1 == stream ? "stdout" : "stderr", strerror(error),
                   job->options->output_nocopy ? "" : " (it still reaches herdrun's own output)",
                   job->spec->jobid);
}

/* A tool attaches: it gets the output from now on, if it is one of ours. */
static void attach_cb(int fd, short what, void *arg)
{
    launch_job_t *job = arg;
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
    job->io.iof->sink_attach(job->io.sink, conn);
}

static int open_attach(launch_job_t *job)
{
    launch_io_t *io = &job->io;
    char path[PATH_MAX];
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int rc = orte_dvm_job_iof_path(io->tool_path, job->spec->seq, path, sizeof(path));
    if (HERD_SUCCESS != rc || strlen(path) >= sizeof(addr.sun_path)) {
        return HERD_ERR_BAD_PARAM;
    }
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
    io->attach_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (io->attach_fd < 0) {
        return HERD_ERR_IN_ERRNO;
    }
    unlink(path); /* a job of a DVM that died with -9 */
    if (0 != bind(io->attach_fd, (struct sockaddr *) &addr, sizeof(addr)) ||
        0 != listen(io->attach_fd, 16)) {
        return HERD_ERR_IN_ERRNO;
    }
    io->attach_path = strdup(path);
    rc = opal_event_fd_create(job->base, io->attach_fd, OPAL_EVENT_READ | OPAL_EVENT_PERSIST,
                              attach_cb, job, &io->attach_event);
    if (HERD_SUCCESS == rc) {
        opal_event_add(io->attach_event, NULL);
    }
    return rc;
}

/* The sink: where the job's output is printed (or written, --output-filename) and its stdin
 * read. */
static int open_sink(launch_job_t *job)
{
    launch_io_t *io = &job->io;
    const orte_job_spec_t *spec = job->spec;
    orte_iof_sink_config_t config = {
        .base = job->base,
        .jobseq = spec->seq,
        .flags = ((spec->flags & ORTE_JOB_FLAG_TAG_OUTPUT) ? ORTE_IOF_FLAG_TAG : 0) |
                 ((spec->flags & ORTE_JOB_FLAG_TIMESTAMP_OUTPUT) ? ORTE_IOF_FLAG_TIMESTAMP : 0) |
                 (job->options->output_nocopy ? ORTE_IOF_FLAG_NOCOPY : 0),
        .output_dir = job->options->output_dir,
        .stdin_target = spec->stdin_target,
        .num_sources = job->daemons.size - 1,
        .stdin_fd = STDIN_FILENO,
        .stdout_fd = STDOUT_FILENO,
        .stderr_fd = STDERR_FILENO,
        .transport = {.send = iof_send, .ctx = job},
        .output_failed = output_failed_cb,
        .file_failed = file_failed_cb,
        .cbdata = job,
    };
    /* a terminal in the background would stop us (SIGTTIN) at the first read */
    if (isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) != getpgrp()) {
        config.stdin_target = ORTE_IOF_STDIN_NONE;
    }
    /* When the session daemon is our child its processes run here: a pipe or a file for one
     * rank (an open stdin that is not a terminal) is given to it as its stdin, with no copy
     * through us (half the time of forwarding 1M lines). A terminal stays ours: the process is
     * in a group of its own, which the terminal would stop at its first read. */
    if (job->backend->forks_session && config.stdin_target >= 0 &&
        fcntl(STDIN_FILENO, F_GETFD) >= 0 && !isatty(STDIN_FILENO)) {
        io->stdin_direct = true;
        config.stdin_target = ORTE_IOF_STDIN_NONE;
    }
    int rc = io->iof->sink_create(&config, &io->sink);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (NULL != io->tool_path && HERD_SUCCESS != (rc = open_attach(job))) {
        /* the job runs all the same: only attaching is not possible */
        opal_show_help(LAUNCH_HELP_FILE, "attach-unavailable", false, job->spec->jobid,
                       HERD_ERR_IN_ERRNO == rc ? strerror(errno) : opal_strerror(rc));
    }
    if (!job->backend->forks_session) {
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
    return io->iof->source_create(&local, &io->source);
}

int launch_io_open(launch_job_t *job)
{
    int rc = orte_iof_base_open();
    if (HERD_SUCCESS != rc) {
        opal_show_help(LAUNCH_HELP_FILE, "no-iof", false, opal_strerror(rc));
        return HERD_ERR_SILENT;
    }
    job->io.iof = orte_iof_base_module();
    if (HERD_SUCCESS != (rc = open_sink(job))) {
        return rc;
    }
    for (int m = 0; m < ORTE_IOF_NUM_MSGS; ++m) {
        rc = job->daemons.ovl->register_recv(job->daemons.overlay,
                                             (uint16_t) (ORTE_SESSION_TAG_IOF + m), iof_recv, job);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
    return HERD_SUCCESS;
}

void launch_io_close(launch_job_t *job)
{
    launch_io_t *io = &job->io;
    if (NULL != io->attach_event) {
        opal_event_free(io->attach_event);
        io->attach_event = NULL;
    }
    if (io->attach_fd >= 0) {
        close(io->attach_fd);
        io->attach_fd = -1;
    }
    if (NULL != io->attach_path) {
        unlink(io->attach_path);
        free(io->attach_path);
        io->attach_path = NULL;
    }
    if (NULL != io->source) {
        io->iof->source_destroy(io->source);
        io->source = NULL;
    }
    if (NULL != io->pipes_event) {
        opal_event_free(io->pipes_event);
        io->pipes_event = NULL;
    }
    if (io->pipes_sock >= 0) {
        close(io->pipes_sock);
        io->pipes_sock = -1;
    }
    if (NULL != io->sink) {
        /* what waits for a slow reader is written before herdrun exits */
        io->iof->sink_destroy(io->sink);
        io->sink = NULL;
    }
    orte_iof_base_close();
}
