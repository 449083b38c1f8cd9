/* SPDX-License-Identifier: BSD-3-Clause */
/* The session daemon's I/O: its own stdout and stderr redirected into pipes and forwarded to
 * herdrun, and the processes' pipes, read here by the iof source or handed to herdrun (a
 * one-node job forked by herdrun). */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "opal/util/fd.h"
#include "opal/util/show_help.h"
#include "orte/runtime/session_internal.h"

/* Forward what is waiting in one of our output pipes. */
static void drain_pipe(orte_session_t *s, int fd, uint8_t stream)
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
        } else if (s->io.orig_fd[stream - 1] >= 0) {
            (void) opal_fd_write_all(s->io.orig_fd[stream - 1], chunk + 1, (size_t) n);
        }
    }
}

static void output_cb(int fd, short what, void *arg)
{
    orte_session_t *s = arg;
    drain_pipe(s, fd, fd == s->io.out_pipe[0] ? 1 : 2);
}

void orte_session_io_flush_output(orte_session_t *s)
{
    fflush(stdout);
    fflush(stderr);
    drain_pipe(s, s->io.out_pipe[0], 1);
    drain_pipe(s, s->io.err_pipe[0], 2);
}

int orte_session_io_redirect_output(orte_session_t *s)
{
    orte_session_io_t *io = &s->io;
    if (0 != pipe2(io->out_pipe, O_CLOEXEC) || 0 != pipe2(io->err_pipe, O_CLOEXEC)) {
        return HERD_ERR_IN_ERRNO;
    }
    io->orig_fd[0] = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    io->orig_fd[1] = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    /* the processes inherit fds 1 and 2 (odls dup2s them, clearing close-on-exec) */
    if (dup2(io->out_pipe[1], STDOUT_FILENO) < 0 || dup2(io->err_pipe[1], STDERR_FILENO) < 0) {
        return HERD_ERR_IN_ERRNO;
    }
    close(io->out_pipe[1]);
    close(io->err_pipe[1]);
    io->out_pipe[1] = io->err_pipe[1] = -1;
    setvbuf(stdout, NULL, _IOLBF, 0);
    fcntl(io->out_pipe[0], F_SETFL, O_NONBLOCK);
    fcntl(io->err_pipe[0], F_SETFL, O_NONBLOCK);
    int rc = opal_event_fd_create(s->base, io->out_pipe[0], OPAL_EVENT_READ | OPAL_EVENT_PERSIST,
                                  output_cb, s, &io->out_event);
    if (HERD_SUCCESS == rc) {
        rc = opal_event_fd_create(s->base, io->err_pipe[0], OPAL_EVENT_READ | OPAL_EVENT_PERSIST,
                                  output_cb, s, &io->err_event);
    }
    if (HERD_SUCCESS == rc) {
        opal_event_add(io->out_event, NULL);
        opal_event_add(io->err_event, NULL);
    }
    return rc;
}

static int iof_send(void *ctx, orte_vpid_t dst, int msg, const struct iovec *iov, int iovcnt)
{
    orte_session_t *s = ctx;
    if (NULL == s->overlay) {
        return HERD_ERR_UNREACH;
    }
    return s->ovl->sendv(s->overlay, dst, (uint16_t) (ORTE_SESSION_TAG_IOF + msg), iov, iovcnt);
}

void orte_session_io_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                          size_t length, void *arg)
{
    orte_session_t *s = arg;
    struct iovec iov = {.iov_base = (void *) data, .iov_len = length};
    if (NULL != s->io.source) {
        s->io.iof->source_deliver(s->io.source, src, tag - ORTE_SESSION_TAG_IOF, &iov, 1);
    }
}

static void iof_drained(void *cbdata)
{
    orte_session_t *s = cbdata;
    s->io.drained = true;
    orte_session_procs_finish(s);
}

/* The processes' I/O: forwarded from here, unless herdrun reads their pipes itself. */
int orte_session_io_start(orte_session_t *s)
{
    int rc = orte_iof_base_open();
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    s->io.iof = orte_iof_base_module();
    if (s->io.iof_sock >= 0) {
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
    return s->io.iof->source_create(&config, &s->io.source);
}

bool orte_session_io_drained(orte_session_t *s)
{
    if (NULL != s->io.source && !s->io.drained) {
        /* the processes' last words first: the rest waits until the sink has them all */
        s->io.iof->source_finish(s->io.source);
        if (!s->io.drained) {
            return false;
        }
    }
    return true;
}

/* The daemon's ends of a started process's pipes: to our source, or to herdrun. */
void orte_session_io_hand_over(orte_session_t *s, uint32_t id, int parent[3])
{
    int rc;
    if (s->io.iof_sock >= 0) {
        rc = orte_iof_base_send_fds(s->io.iof_sock, id, parent);
        for (int i = 0; i < 3; ++i) {
            if (parent[i] >= 0) {
                close(parent[i]); /* herdrun holds them now */
            }
        }
    } else {
        rc = s->io.iof->source_add(s->io.source, id, parent);
    }
    if (HERD_SUCCESS != rc) {
        opal_show_help(ORTE_SESSION_HELP, "output-not-forwarded", false, s->node_name, id,
                       opal_strerror(rc));
    }
}

/* Every local process has been handed over: stdin for all of them can flow. */
void orte_session_io_all_handed_over(orte_session_t *s)
{
    if (s->io.iof_sock >= 0) {
        int none[3] = {-1, -1, -1};
        orte_iof_base_send_fds(s->io.iof_sock, ORTE_IOF_RANK_DAEMON, none);
    } else if (NULL != s->io.source) {
        s->io.iof->source_all_added(s->io.source);
    }
}

void orte_session_io_exited(orte_session_t *s, uint32_t id)
{
    if (NULL != s->io.source) {
        s->io.iof->source_exited(s->io.source, id);
    }
}

void orte_session_io_close_source(orte_session_t *s)
{
    if (NULL != s->io.source) {
        s->io.iof->source_destroy(s->io.source);
        s->io.source = NULL;
    }
    orte_iof_base_close();
    if (s->io.iof_sock >= 0) {
        close(s->io.iof_sock);
        s->io.iof_sock = -1;
    }
}

void orte_session_io_close_output(orte_session_t *s)
{
    orte_session_io_t *io = &s->io;
    if (NULL != io->out_event) {
        opal_event_free(io->out_event);
    }
    if (NULL != io->err_event) {
        opal_event_free(io->err_event);
    }
    for (int i = 0; i < 2; ++i) {
        if (io->out_pipe[i] >= 0) {
            close(io->out_pipe[i]);
        }
        if (io->err_pipe[i] >= 0) {
            close(io->err_pipe[i]);
        }
        if (io->orig_fd[i] >= 0) {
            close(io->orig_fd[i]);
        }
    }
}
