/* SPDX-License-Identifier: BSD-3-Clause */
/* SIGCHLD to event bases: a signal handler writes a byte into each watcher's pipe (the
 * self-pipe trick), so children are reaped in the loop and never inside a handler. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "orte/mca/odls/base/base.h"

/* Enough for every job a session daemon or a test runs at once. */
#define ODLS_SIGCHLD_MAX_WATCHES 256

struct orte_odls_base_sigchld {
    int pipe_fds[2];
    opal_event_t *event;
    void (*cb)(void *arg);
    void *arg;
    int slot;
};

/* A signal handler can only reach process-wide state: the write ends it must poke (stored plus
 * one, so the zeroed table is empty even if a pipe got fd 0), and the handler it replaced. Changed
 * only with SIGCHLD blocked, so the handler never sees a half update. */
static volatile int sigchld_write_fds[ODLS_SIGCHLD_MAX_WATCHES];
static int sigchld_num_watches;
static struct sigaction sigchld_previous;

static void sigchld_handler(int signo, siginfo_t *info, void *context)
{
    int saved_errno = errno;
    unsigned char byte = 0;

    for (int i = 0; i < ODLS_SIGCHLD_MAX_WATCHES; ++i) {
        int fd = sigchld_write_fds[i] - 1;
        if (fd >= 0) {
            /* a full pipe already holds a wakeup: losing this byte loses nothing */
            ssize_t ignored = write(fd, &byte, 1);
            (void) ignored;
        }
    }
    /* whoever handled SIGCHLD before us (a daemon reaping its own children) still sees it */
    if (sigchld_previous.sa_flags & SA_SIGINFO) {
        if (NULL != sigchld_previous.sa_sigaction) {
            sigchld_previous.sa_sigaction(signo, info, context);
        }
    } else if (SIG_DFL != sigchld_previous.sa_handler && SIG_IGN != sigchld_previous.sa_handler) {
        sigchld_previous.sa_handler(signo);
    }
    errno = saved_errno;
}

static void sigchld_block(sigset_t *saved)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, saved);
}

static void sigchld_drain(int fd, short what, void *arg)
{
    orte_odls_base_sigchld_t *watch = arg;
    unsigned char bytes[256];

    while (read(fd, bytes, sizeof(bytes)) > 0) {
        /* one call covers every byte: the callback reaps whatever is ready */
    }
    watch->cb(watch->arg);
}

int orte_odls_base_sigchld_watch(opal_event_base_t *base, void (*cb)(void *arg), void *arg,
                                 orte_odls_base_sigchld_t **watch)
{
    orte_odls_base_sigchld_t *w;
    sigset_t saved;
    int rc;

    if (NULL == base || NULL == cb || NULL == watch) {
        return HERD_ERR_BAD_PARAM;
    }
    w = calloc(1, sizeof(*w));
    if (NULL == w) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    w->cb = cb;
    w->arg = arg;
    w->slot = -1;
    if (0 != pipe2(w->pipe_fds, O_CLOEXEC | O_NONBLOCK)) {
        free(w);
        return HERD_ERR_IN_ERRNO;
    }
    rc = opal_event_fd_create(base, w->pipe_fds[0], OPAL_EVENT_READ | OPAL_EVENT_PERSIST,
                              sigchld_drain, w, &w->event);
    if (HERD_SUCCESS == rc) {
        rc = opal_event_add(w->event, NULL);
    }
    if (HERD_SUCCESS != rc) {
        goto err_event;
    }

    sigchld_block(&saved);
    for (int i = 0; i < ODLS_SIGCHLD_MAX_WATCHES && w->slot < 0; ++i) {
        if (sigchld_write_fds[i] <= 0) {
            w->slot = i;
        }
    }
    if (w->slot < 0) {
        sigprocmask(SIG_SETMASK, &saved, NULL);
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto err_event;
    }
    if (0 == sigchld_num_watches) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = sigchld_handler;
        sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NOCLDSTOP;
        sigemptyset(&sa.sa_mask);
        if (0 != sigaction(SIGCHLD, &sa, &sigchld_previous)) {
            sigprocmask(SIG_SETMASK, &saved, NULL);
            rc = HERD_ERR_IN_ERRNO;
            goto err_event;
        }
    }
    sigchld_write_fds[w->slot] = w->pipe_fds[1] + 1;
    ++sigchld_num_watches;
    sigprocmask(SIG_SETMASK, &saved, NULL);
    *watch = w;
    return HERD_SUCCESS;

err_event:
    if (NULL != w->event) {
        opal_event_free(w->event);
    }
    close(w->pipe_fds[0]);
    close(w->pipe_fds[1]);
    free(w);
    return rc;
}

void orte_odls_base_sigchld_unwatch(orte_odls_base_sigchld_t *watch)
{
    sigset_t saved;

    if (NULL == watch) {
        return;
    }
    sigchld_block(&saved);
    sigchld_write_fds[watch->slot] = 0;
    if (0 == --sigchld_num_watches) {
        sigaction(SIGCHLD, &sigchld_previous, NULL);
    }
    sigprocmask(SIG_SETMASK, &saved, NULL);
    opal_event_free(watch->event);
    close(watch->pipe_fds[0]);
    close(watch->pipe_fds[1]);
    free(watch);
}
