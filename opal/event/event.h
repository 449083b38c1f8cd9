/* SPDX-License-Identifier: BSD-3-Clause */
/* A thin wrapper over libevent: one event base per thread that runs a loop, timers, fd events,
 * and a cross-thread wakeup that runs a callback in the loop's thread. */
#ifndef OPAL_EVENT_EVENT_H
#define OPAL_EVENT_EVENT_H

#include <stdbool.h>
#include <sys/time.h>

#include "opal/status.h"

typedef struct opal_event_base opal_event_base_t;
typedef struct opal_event opal_event_t;

/* Flags for fd events (may be or'ed). */
#define OPAL_EVENT_READ 0x02
#define OPAL_EVENT_WRITE 0x04
#define OPAL_EVENT_PERSIST 0x10

typedef void (*opal_event_cb_t)(int fd, short what, void *arg);
typedef void (*opal_event_call_t)(void *arg);

OPAL_EXPORT int opal_event_base_create(opal_event_base_t **base);
/* Calls still queued by opal_event_base_call() run here, in the caller's thread, so what they
 * own is released. */
OPAL_EXPORT void opal_event_base_free(opal_event_base_t *base);
/* Run until opal_event_base_stop() or, with once, until one round of events was handled. */
OPAL_EXPORT int opal_event_base_loop(opal_event_base_t *base, bool once);
/* Run what is ready now (sockets that can be written, ...) without waiting for anything. */
OPAL_EXPORT int opal_event_base_poll(opal_event_base_t *base);
/* Ask the loop to return; callable from any thread. */
OPAL_EXPORT void opal_event_base_stop(opal_event_base_t *base);
/* Run fn(arg) in the loop's thread as soon as possible; callable from any thread. */
OPAL_EXPORT int opal_event_base_call(opal_event_base_t *base, opal_event_call_t fn, void *arg);

/* fd events: flags OPAL_EVENT_READ/WRITE[/PERSIST]. */
OPAL_EXPORT int opal_event_fd_create(opal_event_base_t *base, int fd, short flags,
                                     opal_event_cb_t cb, void *arg, opal_event_t **event);
/* Timers: call cb once after timeout (or every timeout with persist). */
OPAL_EXPORT int opal_event_timer_create(opal_event_base_t *base, bool persist, opal_event_cb_t cb,
                                        void *arg, opal_event_t **event);
/* Arm an event; timeout may be NULL for fd events (no timeout). */
OPAL_EXPORT int opal_event_add(opal_event_t *event, const struct timeval *timeout);
OPAL_EXPORT int opal_event_del(opal_event_t *event);
OPAL_EXPORT void opal_event_free(opal_event_t *event);

#endif /* OPAL_EVENT_EVENT_H */
