/* SPDX-License-Identifier: BSD-3-Clause */
/* The event loop: libevent 2.1 bases, timers and fd events, plus calls queued from any thread. */
#include "herd_config.h"

#include "opal/event/event.h"

#include <pthread.h>
#include <stdlib.h>

#include <event2/event.h>
#include <event2/thread.h>

/* One pending opal_event_base_call(). */
typedef struct opal_event_call_item {
    struct opal_event_call_item *next;
    opal_event_call_t fn;
    void *arg;
} opal_event_call_item_t;

struct opal_event_base {
    struct event_base *evbase;
    /* Never added, only activated: the way other threads get the loop thread to run queued
     * calls and to honour a stop request. */
    struct event *wakeup;
    pthread_mutex_t lock; /* protects everything below */
    opal_event_call_item_t *calls_head;
    opal_event_call_item_t *calls_tail;
    bool stop_requested;
};

struct opal_event {
    struct event *ev;
    opal_event_cb_t cb;
    void *arg;
    bool is_timer;
};

/* libevent wants its lock callbacks installed once per process, before the first base exists.
 * These two are written once under pthread_once and only read afterwards. */
static pthread_once_t event_threads_once = PTHREAD_ONCE_INIT;
static int event_threads_status = HERD_ERROR;

static void event_threads_init(void)
{
    /* evthread_use_pthreads() can only fail to allocate its locks. */
    event_threads_status = (0 == evthread_use_pthreads()) ? HERD_SUCCESS : HERD_ERR_OUT_OF_RESOURCE;
}

/* Detach the whole queue under the lock, so that calls queued meanwhile (even by the calls
 * being run) wait for the next wakeup instead of racing with this one. */
static opal_event_call_item_t *event_base_take_calls(opal_event_base_t *base, bool *stop)
{
    pthread_mutex_lock(&base->lock);
    opal_event_call_item_t *calls = base->calls_head;
    base->calls_head = NULL;
    base->calls_tail = NULL;
    if (NULL != stop) {
        *stop = base->stop_requested;
        base->stop_requested = false;
    }
    pthread_mutex_unlock(&base->lock);
    return calls;
}

static void event_base_run_calls(opal_event_call_item_t *calls)
{
    while (NULL != calls) {
        opal_event_call_item_t *next = calls->next;
        calls->fn(calls->arg);
        free(calls);
        calls = next;
    }
}

static void event_base_wakeup_cb(evutil_socket_t fd, short what, void *arg)
{
    opal_event_base_t *base = arg;
    bool stop;
    opal_event_call_item_t *calls = event_base_take_calls(base, &stop);
    event_base_run_calls(calls);
    if (stop) {
        event_base_loopbreak(base->evbase);
    }
}

int opal_event_base_create(opal_event_base_t **base)
{
    if (NULL == base) {
        return HERD_ERR_BAD_PARAM;
    }
    pthread_once(&event_threads_once, event_threads_init);
    if (HERD_SUCCESS != event_threads_status) {
        return event_threads_status;
    }

    int rc = HERD_ERR_OUT_OF_RESOURCE;
    opal_event_base_t *result = calloc(1, sizeof(*result));
    if (NULL == result) {
        return rc;
    }
    if (0 != pthread_mutex_init(&result->lock, NULL)) {
        goto err_free_result;
    }
    /* Created after evthread_use_pthreads(), the base has locks and a notification fd, which
     * is what makes event_active() and event_base_loopbreak() safe from other threads. */
    result->evbase = event_base_new();
    if (NULL == result->evbase) {
        goto err_destroy_lock;
    }
    result->wakeup = event_new(result->evbase, -1, EV_PERSIST, event_base_wakeup_cb, result);
    if (NULL == result->wakeup) {
        goto err_free_evbase;
    }
    *base = result;
    return HERD_SUCCESS;

err_free_evbase:
    event_base_free(result->evbase);
err_destroy_lock:
    pthread_mutex_destroy(&result->lock);
err_free_result:
    free(result);
    return rc;
}

void opal_event_base_free(opal_event_base_t *base)
{
    if (NULL == base) {
        return;
    }
    /* Calls still queued run here rather than being dropped: their arguments are often owned
     * by the call, and dropping them would leak. A call may queue another, hence the loop. */
    opal_event_call_item_t *calls;
    while (NULL != (calls = event_base_take_calls(base, NULL))) {
        event_base_run_calls(calls);
    }
    event_free(base->wakeup);
    event_base_free(base->evbase);
    pthread_mutex_destroy(&base->lock);
    free(base);
}

int opal_event_base_loop(opal_event_base_t *base, bool once)
{
    if (NULL == base) {
        return HERD_ERR_BAD_PARAM;
    }
    /* Without NO_EXIT_ON_EMPTY libevent returns at once when nothing is armed, but another
     * thread may still queue a call or ask for a stop: keep waiting for those. */
    int flags = EVLOOP_NO_EXIT_ON_EMPTY;
    if (once) {
        flags |= EVLOOP_ONCE;
    }
    if (event_base_loop(base->evbase, flags) < 0) {
        return HERD_ERROR;
    }
    return HERD_SUCCESS;
}

int opal_event_base_poll(opal_event_base_t *base)
{
    if (NULL == base) {
        return HERD_ERR_BAD_PARAM;
    }
    return event_base_loop(base->evbase, EVLOOP_NONBLOCK) < 0 ? HERD_ERROR : HERD_SUCCESS;
}

void opal_event_base_stop(opal_event_base_t *base)
{
    if (NULL == base) {
        return;
    }
    /* event_base_loopbreak() alone would be lost if it came before the loop started (libevent
     * clears the flag on entry), so the request goes through the wakeup event, which stays
     * active until a loop runs it. */
    pthread_mutex_lock(&base->lock);
    base->stop_requested = true;
    pthread_mutex_unlock(&base->lock);
    event_active(base->wakeup, EV_READ, 0);
}

int opal_event_base_call(opal_event_base_t *base, opal_event_call_t fn, void *arg)
{
    if (NULL == base || NULL == fn) {
        return HERD_ERR_BAD_PARAM;
    }
    opal_event_call_item_t *item = malloc(sizeof(*item));
    if (NULL == item) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    item->next = NULL;
    item->fn = fn;
    item->arg = arg;

    pthread_mutex_lock(&base->lock);
    if (NULL == base->calls_tail) {
        base->calls_head = item;
    } else {
        base->calls_tail->next = item;
    }
    base->calls_tail = item;
    pthread_mutex_unlock(&base->lock);

    /* Activated after queueing: if the wakeup is already active it will still see the item,
     * and if it is already running it gets activated again. */
    event_active(base->wakeup, EV_READ, 0);
    return HERD_SUCCESS;
}

/* Passes only the herd flags on: a timer or a timeout reports what == 0. */
static void event_dispatch_cb(evutil_socket_t fd, short what, void *arg)
{
    opal_event_t *event = arg;
    short flags = 0;
    if (what & EV_READ) {
        flags |= OPAL_EVENT_READ;
    }
    if (what & EV_WRITE) {
        flags |= OPAL_EVENT_WRITE;
    }
    /* The callback may free the event, so nothing may touch it afterwards. */
    event->cb((int) fd, flags, event->arg);
}

static int event_create(opal_event_base_t *base, int fd, short evflags, bool is_timer,
                        opal_event_cb_t cb, void *arg, opal_event_t **event)
{
    opal_event_t *result = malloc(sizeof(*result));
    if (NULL == result) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    result->cb = cb;
    result->arg = arg;
    result->is_timer = is_timer;
    result->ev = event_new(base->evbase, fd, evflags, event_dispatch_cb, result);
    if (NULL == result->ev) {
        free(result);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    *event = result;
    return HERD_SUCCESS;
}

int opal_event_fd_create(opal_event_base_t *base, int fd, short flags, opal_event_cb_t cb,
                         void *arg, opal_event_t **event)
{
    const short known = OPAL_EVENT_READ | OPAL_EVENT_WRITE | OPAL_EVENT_PERSIST;
    if (NULL == base || NULL == cb || NULL == event || fd < 0 || 0 != (flags & ~known) ||
        0 == (flags & (OPAL_EVENT_READ | OPAL_EVENT_WRITE))) {
        return HERD_ERR_BAD_PARAM;
    }
    short evflags = 0;
    if (flags & OPAL_EVENT_READ) {
        evflags |= EV_READ;
    }
    if (flags & OPAL_EVENT_WRITE) {
        evflags |= EV_WRITE;
    }
    if (flags & OPAL_EVENT_PERSIST) {
        evflags |= EV_PERSIST;
    }
    return event_create(base, fd, evflags, false, cb, arg, event);
}

int opal_event_timer_create(opal_event_base_t *base, bool persist, opal_event_cb_t cb, void *arg,
                            opal_event_t **event)
{
    if (NULL == base || NULL == cb || NULL == event) {
        return HERD_ERR_BAD_PARAM;
    }
    return event_create(base, -1, persist ? EV_PERSIST : 0, true, cb, arg, event);
}

int opal_event_add(opal_event_t *event, const struct timeval *timeout)
{
    if (NULL == event) {
        return HERD_ERR_BAD_PARAM;
    }
    /* A timer without a timeout would be armed and never fire: certainly a caller's bug. */
    if (event->is_timer && NULL == timeout) {
        return HERD_ERR_BAD_PARAM;
    }
    if (NULL != timeout &&
        (timeout->tv_sec < 0 || timeout->tv_usec < 0 || timeout->tv_usec >= 1000000)) {
        return HERD_ERR_BAD_PARAM;
    }
    /* libevent has already logged why (e.g. epoll_ctl refusing a closed fd). */
    if (0 != event_add(event->ev, timeout)) {
        return HERD_ERROR;
    }
    return HERD_SUCCESS;
}

int opal_event_del(opal_event_t *event)
{
    if (NULL == event) {
        return HERD_ERR_BAD_PARAM;
    }
    if (0 != event_del(event->ev)) {
        return HERD_ERROR;
    }
    return HERD_SUCCESS;
}

void opal_event_free(opal_event_t *event)
{
    if (NULL == event) {
        return;
    }
    /* event_free() deletes the event first, so freeing an armed event is fine. */
    event_free(event->ev);
    free(event);
}
