/* SPDX-License-Identifier: BSD-3-Clause */
/* Signals handled in an event loop through a self-pipe (opal/event/signal_pipe.h). */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/event/signal_pipe.h"

#define SIGNAL_PIPE_MAX 8

struct opal_signal_pipe {
    int fds[2];
    opal_event_t *event;
    opal_signal_pipe_cb_t cb;
    void *arg;
    int signals[SIGNAL_PIPE_MAX];
    struct sigaction old[SIGNAL_PIPE_MAX];
    int num_signals;
    struct sigaction old_pipe;
};

/* The handler's only state: where to write (written before the handlers are installed). */
static volatile int signal_pipe_write_fd = -1;
/* The open one, for a forked child to drop. */
static opal_signal_pipe_t *signal_pipe_open;

static volatile pid_t signal_pipe_owner;

static void on_signal(int signo)
{
    int saved = errno;
    unsigned char byte = (unsigned char) signo;
    if (getpid() != signal_pipe_owner) {
        /* a child forked from the owner that has not set up its own handlers yet: the signal
         * is its own, not news for the owner's loop */
        signal(signo, SIG_DFL);
        raise(signo);
        errno = saved;
        return;
    }
    if (signal_pipe_write_fd >= 0) {
        ssize_t ignored = write(signal_pipe_write_fd, &byte, 1);
        (void) ignored;
    }
    errno = saved;
}

static void read_cb(int fd, short what, void *arg)
{
    opal_signal_pipe_t *sp = arg;
    unsigned char signals[64];
    ssize_t n = read(fd, signals, sizeof(signals));
    (void) what;
    for (ssize_t i = 0; i < n; ++i) {
        sp->cb(signals[i], sp->arg);
    }
}

int opal_signal_pipe_open(opal_event_base_t *base, const int *signals, opal_signal_pipe_cb_t cb,
                          void *arg, opal_signal_pipe_t **pipe_out)
{
    if (signal_pipe_write_fd >= 0) {
        return HERD_ERR_EXISTS;
    }
    opal_signal_pipe_t *sp = calloc(1, sizeof(*sp));
    if (NULL == sp) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    sp->cb = cb;
    sp->arg = arg;
    if (0 != pipe2(sp->fds, O_CLOEXEC | O_NONBLOCK)) {
        free(sp);
        return HERD_ERR_IN_ERRNO;
    }
    int rc = opal_event_fd_create(base, sp->fds[0], OPAL_EVENT_READ | OPAL_EVENT_PERSIST, read_cb,
                                  sp, &sp->event);
    if (HERD_SUCCESS == rc) {
        rc = opal_event_add(sp->event, NULL);
    }
    if (HERD_SUCCESS != rc) {
        if (NULL != sp->event) {
            opal_event_free(sp->event);
        }
        close(sp->fds[0]);
        close(sp->fds[1]);
        free(sp);
        return rc;
    }
    signal_pipe_owner = getpid();
    signal_pipe_write_fd = sp->fds[1];
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; 0 != signals[i] && i < SIGNAL_PIPE_MAX; ++i) {
        sa.sa_flags = SA_RESTART | (SIGCHLD == signals[i] ? SA_NOCLDSTOP : 0);
        sp->signals[i] = signals[i];
        sigaction(signals[i], &sa, &sp->old[i]);
        sp->num_signals = i + 1;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, &sp->old_pipe);
    signal_pipe_open = sp;
    *pipe_out = sp;
    return HERD_SUCCESS;
}

static void restore_dispositions(opal_signal_pipe_t *sp)
{
    for (int i = 0; i < sp->num_signals; ++i) {
        sigaction(sp->signals[i], &sp->old[i], NULL);
    }
    sigaction(SIGPIPE, &sp->old_pipe, NULL);
    signal_pipe_write_fd = -1;
    signal_pipe_open = NULL;
}

void opal_signal_pipe_close(opal_signal_pipe_t *sp)
{
    if (NULL == sp) {
        return;
    }
    restore_dispositions(sp);
    opal_event_free(sp->event);
    close(sp->fds[0]);
    close(sp->fds[1]);
    free(sp);
}

void opal_signal_pipe_drop_inherited(void)
{
    opal_signal_pipe_t *sp = signal_pipe_open;
    if (NULL != sp) {
        restore_dispositions(sp);
        close(sp->fds[0]);
        close(sp->fds[1]);
    }
}

bool opal_signal_pipe_wait(opal_signal_pipe_t *sp, int timeout_ms)
{
    struct pollfd pfd = {.fd = sp->fds[0], .events = POLLIN};
    if (poll(&pfd, 1, timeout_ms) <= 0) {
        return false;
    }
    unsigned char drained[64];
    while (read(sp->fds[0], drained, sizeof(drained)) > 0) {
    }
    return true;
}
