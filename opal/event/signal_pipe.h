/* SPDX-License-Identifier: BSD-3-Clause */
/* Signals handled in an event loop: a handler that only writes the signal's number into a pipe,
 * and a loop event that reads the pipe and calls back with each signal, outside signal context.
 * One per process at a time (the handler is process-wide). */
#ifndef OPAL_EVENT_SIGNAL_PIPE_H
#define OPAL_EVENT_SIGNAL_PIPE_H

#include "opal/event/event.h"

typedef struct opal_signal_pipe opal_signal_pipe_t;
typedef void (*opal_signal_pipe_cb_t)(int signo, void *arg);

/* Catch the signals in the 0-terminated list signals (with SA_RESTART; SIGCHLD only for exits,
 * SA_NOCLDSTOP), ignore SIGPIPE, and call cb(signo, arg) in base's loop for each one caught.
 * HERD_ERR_EXISTS when another signal pipe is open in this process. */
OPAL_EXPORT int opal_signal_pipe_open(opal_event_base_t *base, const int *signals,
                                      opal_signal_pipe_cb_t cb, void *arg,
                                      opal_signal_pipe_t **pipe);
/* Put the dispositions back as they were before open, and release everything. NULL is fine. */
OPAL_EXPORT void opal_signal_pipe_close(opal_signal_pipe_t *pipe);
/* In a child forked while a signal pipe was open: put the dispositions back as they were before
 * it was opened and close the child's copies of the pipe, so that nothing the child catches is
 * written into the parent's pipe. The parent's pipe and loop stay the parent's. */
OPAL_EXPORT void opal_signal_pipe_drop_inherited(void);
/* Wait up to timeout_ms (outside the loop) for a signal, and discard what arrived; whether one
 * did. For a caller that waits with the loop stopped, such as for a child's exit. */
OPAL_EXPORT bool opal_signal_pipe_wait(opal_signal_pipe_t *pipe, int timeout_ms);

#endif /* OPAL_EVENT_SIGNAL_PIPE_H */
