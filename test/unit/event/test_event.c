/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests for opal/event: timers, fd events, cross-thread calls and stops, freeing a base. */
#include "herd_config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "opal/event/event.h"
#include "opal/event/signal_pipe.h"

/* Hang guards only: a loop that should return within microseconds gets this long before the
 * test fails, and the whole program is killed if a thread deadlocks outside any loop. */
#define GUARD_SECONDS 30
#define ALARM_SECONDS 120

/* Stops the loop and records that it had to: a loop that never finished on its own. */
typedef struct {
    opal_event_base_t *base;
    opal_event_t *event;
    bool fired;
} guard_t;

static void guard_cb(int fd, short what, void *arg)
{
    guard_t *guard = arg;
    guard->fired = true;
    opal_event_base_stop(guard->base);
}

static void guard_start(guard_t *guard, opal_event_base_t *base)
{
    guard->base = base;
    guard->fired = false;
    assert_int_equal(opal_event_timer_create(base, false, guard_cb, guard, &guard->event),
                     HERD_SUCCESS);
    struct timeval timeout = {GUARD_SECONDS, 0};
    assert_int_equal(opal_event_add(guard->event, &timeout), HERD_SUCCESS);
}

static void guard_finish(guard_t *guard)
{
    opal_event_free(guard->event);
    assert_false(guard->fired);
}

static void stop_cb(int fd, short what, void *arg)
{
    opal_event_base_stop(arg);
}

typedef struct {
    opal_event_base_t *base;
    opal_event_t *event;
    int count;
    int stop_at;
    short last_what;
} counter_t;

static void count_cb(int fd, short what, void *arg)
{
    counter_t *counter = arg;
    counter->count++;
    counter->last_what = what;
    if (counter->count == counter->stop_at) {
        assert_int_equal(opal_event_del(counter->event), HERD_SUCCESS);
        opal_event_base_stop(counter->base);
    }
}

static void test_timer_fires_once(void **state)
{
    opal_event_base_t *base = NULL;
    assert_int_equal(opal_event_base_create(&base), HERD_SUCCESS);
    assert_non_null(base);
    counter_t counter = {base, NULL, 0, 0, -1};
    assert_int_equal(opal_event_timer_create(base, false, count_cb, &counter, &counter.event),
                     HERD_SUCCESS);
    opal_event_t *stopper;
    assert_int_equal(opal_event_timer_create(base, false, stop_cb, base, &stopper), HERD_SUCCESS);
    guard_t guard;
    guard_start(&guard, base);

    /* Timers run in deadline order, so the one-shot has had its chance before the stopper;
     * the stopper's later deadline gives a wrongly repeating timer room to fire again. */
    struct timeval soon = {0, 1000};
    struct timeval later = {0, 100000};
    assert_int_equal(opal_event_add(counter.event, &soon), HERD_SUCCESS);
    assert_int_equal(opal_event_add(stopper, &later), HERD_SUCCESS);
    assert_int_equal(opal_event_base_loop(base, false), HERD_SUCCESS);
    assert_int_equal(counter.count, 1);
    assert_int_equal(counter.last_what, 0);

    /* A one-shot timer can be armed again; a once-loop returns after it fired. */
    assert_int_equal(opal_event_add(counter.event, &soon), HERD_SUCCESS);
    while (counter.count < 2 && !guard.fired) {
        assert_int_equal(opal_event_base_loop(base, true), HERD_SUCCESS);
    }
    assert_int_equal(counter.count, 2);

    guard_finish(&guard);
    opal_event_free(stopper);
    opal_event_free(counter.event);
    opal_event_base_free(base);
}

static void test_timer_persistent(void **state)
{
    opal_event_base_t *base;
    assert_int_equal(opal_event_base_create(&base), HERD_SUCCESS);
    counter_t counter = {base, NULL, 0, 5, -1};
    assert_int_equal(opal_event_timer_create(base, true, count_cb, &counter, &counter.event),
                     HERD_SUCCESS);
    guard_t guard;
    guard_start(&guard, base);
    struct timeval period = {0, 1000};
    assert_int_equal(opal_event_add(counter.event, &period), HERD_SUCCESS);
    assert_int_equal(opal_event_base_loop(base, false), HERD_SUCCESS);
    /* count_cb deletes the timer at the fifth expiry, so there is never a sixth. */
    assert_int_equal(counter.count, 5);
    guard_finish(&guard);
    opal_event_free(counter.event);
    opal_event_base_free(base);
}

static void test_timer_deleted_does_not_fire(void **state)
{
    opal_event_base_t *base;
    assert_int_equal(opal_event_base_create(&base), HERD_SUCCESS);
    counter_t counter = {base, NULL, 0, 0, -1};
    assert_int_equal(opal_event_timer_create(base, false, count_cb, &counter, &counter.event),
                     HERD_SUCCESS);
    opal_event_t *stopper;
    assert_int_equal(opal_event_timer_create(base, false, stop_cb, base, &stopper), HERD_SUCCESS);
    struct timeval soon = {0, 1000};
    struct timeval later = {0, 50000};
    assert_int_equal(opal_event_add(counter.event, &soon), HERD_SUCCESS);
    assert_int_equal(opal_event_add(stopper, &later), HERD_SUCCESS);
    assert_int_equal(opal_event_del(counter.event), HERD_SUCCESS);
    guard_t guard;
    guard_start(&guard, base);
    assert_int_equal(opal_event_base_loop(base, false), HERD_SUCCESS);
    assert_int_equal(counter.count, 0);
    guard_finish(&guard);
    opal_event_free(stopper);
    opal_event_free(counter.event);
    opal_event_base_free(base);
}

typedef struct {
    opal_event_base_t *base;
    opal_event_t *event;
    int fd;
    char received[8];
    size_t n_received;
    bool bad_what;
    bool bad_fd;
} pipe_reader_t;

/* Reads one byte per call, so a persistent event must fire once per byte written. */
static void pipe_read_cb(int fd, short what, void *arg)
{
    pipe_reader_t *reader = arg;
    if (fd != reader->fd) {
        reader->bad_fd = true;
    }
    if (OPAL_EVENT_READ != what) {
        reader->bad_what = true;
    }
    char c;
    if (1 == read(fd, &c, 1) && reader->n_received < sizeof(reader->received)) {
        reader->received[reader->n_received++] = c;
    }
    if (3 == reader->n_received) {
        opal_event_del(reader->event);
        opal_event_base_stop(reader->base);
    }
}

static void test_fd_read_event(void **state)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    opal_event_base_t *base;
    assert_int_equal(opal_event_base_create(&base), HERD_SUCCESS);
    pipe_reader_t reader = {.base = base, .fd = fds[0]};
    assert_int_equal(opal_event_fd_create(base, fds[0], OPAL_EVENT_READ | OPAL_EVENT_PERSIST,
                                          pipe_read_cb, &reader, &reader.event),
                     HERD_SUCCESS);
    assert_int_equal(opal_event_add(reader.event, NULL), HERD_SUCCESS);
    guard_t guard;
    guard_start(&guard, base);
    assert_int_equal(write(fds[1], "abc", 3), 3);
    assert_int_equal(opal_event_base_loop(base, false), HERD_SUCCESS);
    assert_int_equal(reader.n_received, 3);
    assert_memory_equal(reader.received, "abc", 3);
    assert_false(reader.bad_what);
    assert_false(reader.bad_fd);
    guard_finish(&guard);
    opal_event_free(reader.event);
    opal_event_base_free(base);
    close(fds[0]);
    close(fds[1]);
}

/* A write event on an empty pipe fires with WRITE; a read event that times out fires with 0. */
static void test_fd_write_event_and_timeout(void **state)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    opal_event_base_t *base;
    assert_int_equal(opal_event_base_create(&base), HERD_SUCCESS);
    guard_t guard;
    guard_start(&guard, base);

    counter_t writable = {base, NULL, 0, 1, -1};
    assert_int_equal(
        opal_event_fd_create(base, fds[1], OPAL_EVENT_WRITE, count_cb, &writable, &writable.event),
        HERD_SUCCESS);
    assert_int_equal(opal_event_add(writable.event, NULL), HERD_SUCCESS);
    assert_int_equal(opal_event_base_loop(base, false), HERD_SUCCESS);
    assert_int_equal(writable.count, 1);
    assert_int_equal(writable.last_what, OPAL_EVENT_WRITE);

    /* Nothing is ever written, so only the timeout can wake this one. */
    counter_t silent = {base, NULL, 0, 1, -1};
    assert_int_equal(
        opal_event_fd_create(base, fds[0], OPAL_EVENT_READ, count_cb, &silent, &silent.event),
        HERD_SUCCESS);
    struct timeval timeout = {0, 1000};
    assert_int_equal(opal_event_add(silent.event, &timeout), HERD_SUCCESS);
    assert_int_equal(opal_event_base_loop(base, false), HERD_SUCCESS);
    assert_int_equal(silent.count, 1);
    assert_int_equal(silent.last_what, 0);

    guard_finish(&guard);
    opal_event_free(writable.event);
    opal_event_free(silent.event);
    opal_event_base_free(base);
    close(fds[0]);
    close(fds[1]);
}

static void self_free_cb(int fd, short what, void *arg)
{
    opal_event_t **event = arg;
    opal_event_free(*event);
    *event = NULL;
}

static void test_free_event_in_its_callback(void **state)
{
    opal_event_base_t *base;
    assert_int_equal(opal_event_base_create(&base), HERD_SUCCESS);
    opal_event_t *event = NULL;
    assert_int_equal(opal_event_timer_create(base, true, self_free_cb, &event, &event),
                     HERD_SUCCESS);
    struct timeval soon = {0, 1000};
    assert_int_equal(opal_event_add(event, &soon), HERD_SUCCESS);
    guard_t guard;
    guard_start(&guard, base);
    while (NULL != event && !guard.fired) {
        assert_int_equal(opal_event_base_loop(base, true), HERD_SUCCESS);
    }
    assert_null(event);
    guard_finish(&guard);
    opal_event_base_free(base);
}

/* Calls from several threads, each thread's calls in its own order, all in the loop thread. */
#define CALL_THREADS     4
#define CALLS_PER_THREAD 5000

typedef struct {
    opal_event_base_t *base;
    pthread_t loop_thread;
    int next_expected[CALL_THREADS];
    int total;
    bool out_of_order;
    bool wrong_thread;
} call_state_t;

/* One per call, so that a call knows its sender and place without any global state. */
typedef struct {
    call_state_t *shared;
    int thread_index;
    int sequence;
} call_token_t;

typedef struct {
    call_token_t *tokens;
    int failures;
} caller_t;

static void ordered_call(void *arg)
{
    call_token_t *token = arg;
    call_state_t *shared = token->shared;
    if (!pthread_equal(pthread_self(), shared->loop_thread)) {
        shared->wrong_thread = true;
    }
    if (token->sequence != shared->next_expected[token->thread_index]) {
        shared->out_of_order = true;
    }
    shared->next_expected[token->thread_index] = token->sequence + 1;
    if (++shared->total == CALL_THREADS * CALLS_PER_THREAD) {
        opal_event_base_stop(shared->base);
    }
}

static void *caller_main(void *arg)
{
    caller_t *caller = arg;
    for (int i = 0; i < CALLS_PER_THREAD; i++) {
        call_token_t *token = &caller->tokens[i];
        if (HERD_SUCCESS != opal_event_base_call(token->shared->base, ordered_call, token)) {
            caller->failures++;
        }
    }
    return NULL;
}

static void test_call_from_other_threads(void **state)
{
    call_state_t shared;
    memset(&shared, 0, sizeof(shared));
    assert_int_equal(opal_event_base_create(&shared.base), HERD_SUCCESS);
    shared.loop_thread = pthread_self();
    guard_t guard;
    guard_start(&guard, shared.base);

    call_token_t *tokens = calloc(CALL_THREADS * CALLS_PER_THREAD, sizeof(*tokens));
    assert_non_null(tokens);
    pthread_t threads[CALL_THREADS];
    caller_t callers[CALL_THREADS];
    for (int t = 0; t < CALL_THREADS; t++) {
        callers[t] = (caller_t){&tokens[t * CALLS_PER_THREAD], 0};
        for (int i = 0; i < CALLS_PER_THREAD; i++) {
            callers[t].tokens[i] = (call_token_t){&shared, t, i};
        }
        assert_int_equal(pthread_create(&threads[t], NULL, caller_main, &callers[t]), 0);
    }
    assert_int_equal(opal_event_base_loop(shared.base, false), HERD_SUCCESS);
    for (int t = 0; t < CALL_THREADS; t++) {
        assert_int_equal(pthread_join(threads[t], NULL), 0);
        assert_int_equal(callers[t].failures, 0);
        assert_int_equal(shared.next_expected[t], CALLS_PER_THREAD);
    }
    assert_int_equal(shared.total, CALL_THREADS * CALLS_PER_THREAD);
    assert_false(shared.out_of_order);
    assert_false(shared.wrong_thread);
    guard_finish(&guard);
    opal_event_base_free(shared.base);
    free(tokens);
}

/* The stopping thread waits until the loop is provably running (it ran a call), then stops it
 * while it sleeps with nothing to do. */
typedef struct {
    opal_event_base_t *base;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool loop_running;
} stopper_t;

static void announce_running(void *arg)
{
    stopper_t *stopper = arg;
    pthread_mutex_lock(&stopper->lock);
    stopper->loop_running = true;
    pthread_cond_signal(&stopper->cond);
    pthread_mutex_unlock(&stopper->lock);
}

static void *stopper_main(void *arg)
{
    stopper_t *stopper = arg;
    pthread_mutex_lock(&stopper->lock);
    while (!stopper->loop_running) {
        pthread_cond_wait(&stopper->cond, &stopper->lock);
    }
    pthread_mutex_unlock(&stopper->lock);
    opal_event_base_stop(stopper->base);
    return NULL;
}

static void test_stop_from_other_thread(void **state)
{
    stopper_t stopper = {.loop_running = false};
    assert_int_equal(pthread_mutex_init(&stopper.lock, NULL), 0);
    assert_int_equal(pthread_cond_init(&stopper.cond, NULL), 0);
    assert_int_equal(opal_event_base_create(&stopper.base), HERD_SUCCESS);
    guard_t guard;
    guard_start(&guard, stopper.base);

    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, stopper_main, &stopper), 0);
    assert_int_equal(opal_event_base_call(stopper.base, announce_running, &stopper), HERD_SUCCESS);
    assert_int_equal(opal_event_base_loop(stopper.base, false), HERD_SUCCESS);
    assert_int_equal(pthread_join(thread, NULL), 0);
    assert_true(stopper.loop_running);

    guard_finish(&guard);
    opal_event_base_free(stopper.base);
    pthread_cond_destroy(&stopper.cond);
    pthread_mutex_destroy(&stopper.lock);
}

/* A stop that arrives before the loop starts is not lost: the next loop returns. */
static void test_stop_before_loop(void **state)
{
    opal_event_base_t *base;
    assert_int_equal(opal_event_base_create(&base), HERD_SUCCESS);
    guard_t guard;
    guard_start(&guard, base);
    opal_event_base_stop(base);
    assert_int_equal(opal_event_base_loop(base, false), HERD_SUCCESS);
    guard_finish(&guard);
    opal_event_base_free(base);
}

/* With nothing armed the loop must still wait: another thread may yet queue work. The only
 * hang guard here is the alarm, since a guard timer would itself be something armed. */
typedef struct {
    opal_event_base_t *base;
    bool ran;
} late_call_t;

static void late_call(void *arg)
{
    late_call_t *late = arg;
    late->ran = true;
    opal_event_base_stop(late->base);
}

static void *late_caller_main(void *arg)
{
    late_call_t *late = arg;
    /* Not a timing assumption: a correct loop waits however long this takes. The pause only
     * makes it likely that a loop which wrongly returns when idle has already done so. */
    usleep(20000);
    if (HERD_SUCCESS != opal_event_base_call(late->base, late_call, late)) {
        return arg;
    }
    return NULL;
}

static void test_loop_waits_with_nothing_armed(void **state)
{
    late_call_t late = {NULL, false};
    assert_int_equal(opal_event_base_create(&late.base), HERD_SUCCESS);
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, late_caller_main, &late), 0);
    assert_int_equal(opal_event_base_loop(late.base, false), HERD_SUCCESS);
    void *thread_result = &late;
    assert_int_equal(pthread_join(thread, &thread_result), 0);
    assert_null(thread_result);
    assert_true(late.ran);
    opal_event_base_free(late.base);
}

typedef struct {
    opal_event_base_t *base;
    int ran;
    int requeue;
    int failures;
} pending_t;

static void queue_owned_call(pending_t *pending);

/* Owns its argument, like most real calls: if the base dropped it, valgrind would see a leak. */
static void owned_arg_call(void *arg)
{
    pending_t **box = arg;
    pending_t *pending = *box;
    free(box);
    pending->ran++;
    if (pending->requeue > 0) {
        pending->requeue--;
        queue_owned_call(pending);
    }
}

static void queue_owned_call(pending_t *pending)
{
    pending_t **box = malloc(sizeof(*box));
    if (NULL == box) {
        pending->failures++;
        return;
    }
    *box = pending;
    if (HERD_SUCCESS != opal_event_base_call(pending->base, owned_arg_call, box)) {
        free(box);
        pending->failures++;
    }
}

static void *queue_from_thread(void *arg)
{
    for (int i = 0; i < 50; i++) {
        queue_owned_call(arg);
    }
    return NULL;
}

static void test_free_with_pending_calls(void **state)
{
    pending_t pending = {NULL, 0, 3, 0};
    assert_int_equal(opal_event_base_create(&pending.base), HERD_SUCCESS);
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, queue_from_thread, &pending), 0);
    assert_int_equal(pthread_join(thread, NULL), 0);
    queue_from_thread(&pending);
    /* The loop never ran: freeing the base runs all 100 calls and the 3 they queue. */
    assert_int_equal(pending.ran, 0);
    opal_event_base_free(pending.base);
    assert_int_equal(pending.ran, 103);
    assert_int_equal(pending.failures, 0);
}

static void noop_cb(int fd, short what, void *arg)
{
}

static void noop_call(void *arg)
{
}

static void test_bad_params(void **state)
{
    opal_event_base_t *base;
    opal_event_t *event = NULL;
    assert_int_equal(opal_event_base_create(NULL), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_event_base_create(&base), HERD_SUCCESS);
    assert_int_equal(opal_event_base_loop(NULL, false), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_event_base_call(NULL, noop_call, NULL), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_event_base_call(base, NULL, NULL), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_event_fd_create(base, -1, OPAL_EVENT_READ, noop_cb, NULL, &event),
                     HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_event_fd_create(base, 0, 0, noop_cb, NULL, &event), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_event_fd_create(base, 0, OPAL_EVENT_PERSIST, noop_cb, NULL, &event),
                     HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_event_fd_create(base, 0, OPAL_EVENT_READ | 0x100, noop_cb, NULL, &event),
                     HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_event_fd_create(base, 0, OPAL_EVENT_READ, NULL, NULL, &event),
                     HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_event_timer_create(NULL, false, noop_cb, NULL, &event),
                     HERD_ERR_BAD_PARAM);
    assert_null(event);

    assert_int_equal(opal_event_timer_create(base, false, noop_cb, NULL, &event), HERD_SUCCESS);
    assert_int_equal(opal_event_add(event, NULL), HERD_ERR_BAD_PARAM);
    struct timeval negative = {-1, 0};
    struct timeval bad_usec = {0, 1000000};
    assert_int_equal(opal_event_add(event, &negative), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_event_add(event, &bad_usec), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_event_add(NULL, &negative), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_event_del(NULL), HERD_ERR_BAD_PARAM);
    opal_event_free(event);
    opal_event_free(NULL);
    opal_event_base_stop(NULL);
    opal_event_base_free(NULL);
    opal_event_base_free(base);
}

static void ignore_signal(int signo, void *arg)
{
    (void) signo;
    (void) arg;
}

/* A signal that a child forked with the pipe open gets before it has handlers of its own is
 * the child's: it acts as by default (here it ends the child) and writes nothing into the
 * parent's pipe (a daemon's helper sent SIGTERM made the daemon shut down). */
static void test_signal_pipe_forked_child(void **state)
{
    static const int caught[] = {SIGUSR1, 0};
    opal_event_base_t *base = NULL;
    opal_signal_pipe_t *sp = NULL;
    (void) state;
    assert_int_equal(opal_event_base_create(&base), HERD_SUCCESS);
    assert_int_equal(opal_signal_pipe_open(base, caught, ignore_signal, NULL, &sp), HERD_SUCCESS);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (0 == pid) {
        raise(SIGUSR1);
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && SIGUSR1 == WTERMSIG(status));
    assert_false(opal_signal_pipe_wait(sp, 50));
    raise(SIGUSR1); /* the parent's own still arrives */
    assert_true(opal_signal_pipe_wait(sp, 5000));
    opal_signal_pipe_close(sp);
    opal_event_base_free(base);
}

int main(void)
{
    alarm(ALARM_SECONDS);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timer_fires_once),
        cmocka_unit_test(test_timer_persistent),
        cmocka_unit_test(test_timer_deleted_does_not_fire),
        cmocka_unit_test(test_fd_read_event),
        cmocka_unit_test(test_fd_write_event_and_timeout),
        cmocka_unit_test(test_free_event_in_its_callback),
        cmocka_unit_test(test_call_from_other_threads),
        cmocka_unit_test(test_stop_from_other_thread),
        cmocka_unit_test(test_stop_before_loop),
        cmocka_unit_test(test_loop_waits_with_nothing_armed),
        cmocka_unit_test(test_free_with_pending_calls),
        cmocka_unit_test(test_bad_params),
        cmocka_unit_test(test_signal_pipe_forked_child),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
