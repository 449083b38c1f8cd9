/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the output streams: prefixes, verbosity, unknown streams, and whole messages
 * from concurrent threads and forked children. */
#include "herd_config.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "opal/util/argv.h"
#include "opal/util/output.h"
#include "support/capture.h"


/* "[host:pid] " for a process, as the streams write it. */
static char *host_pid_prefix(pid_t pid)
{
    char host[256] = "";
    char *prefix;

    assert_int_equal(gethostname(host, sizeof(host) - 1), 0);
    prefix = malloc(strlen(host) + 32);
    assert_non_null(prefix);
    sprintf(prefix, "[%s:%ld] ", host, (long) pid);
    return prefix;
}

static int teardown(void **state)
{
    opal_output_finalize();
    return 0;
}

static void test_stream_zero_has_no_prefix(void **state)
{
    herd_test_capture_t capture;
    char *text;

    herd_test_capture_start(&capture);
    opal_output(OPAL_OUTPUT_STDERR, "hello %d", 5);
    opal_output(OPAL_OUTPUT_STDERR, "ends with newline\n");
    opal_output(OPAL_OUTPUT_STDERR, "two\nlines");
    opal_output(OPAL_OUTPUT_STDERR, "%s", "");
    text = herd_test_capture_stop(&capture);
    assert_string_equal(text, "hello 5\nends with newline\ntwo\nlines\n\n");
    free(text);
}

static void test_prefix_on_every_line(void **state)
{
    char *host_pid = host_pid_prefix(getpid());
    char expected[1024];
    herd_test_capture_t capture;
    char *text;
    int stream = opal_output_open("fw", 0);

    assert_true(stream >= 1);
    herd_test_capture_start(&capture);
    opal_output(stream, "first\nsecond\n\nlast %s", "word");
    opal_output(stream, "%s", "");
    text = herd_test_capture_stop(&capture);
    snprintf(expected, sizeof(expected),
             "%sfw: first\n%sfw: second\n%sfw: \n%sfw: last word\n%sfw: \n", host_pid, host_pid,
             host_pid, host_pid, host_pid);
    assert_string_equal(text, expected);
    free(text);
    free(host_pid);
}

static void test_stream_without_prefix_name(void **state)
{
    char *host_pid = host_pid_prefix(getpid());
    char expected[512];
    herd_test_capture_t capture;
    char *text;
    int unnamed = opal_output_open(NULL, 0);
    int empty = opal_output_open("", 0);

    assert_true(unnamed >= 1);
    assert_true(empty >= 1);
    herd_test_capture_start(&capture);
    opal_output(unnamed, "a");
    opal_output(empty, "b");
    text = herd_test_capture_stop(&capture);
    snprintf(expected, sizeof(expected), "%sa\n%sb\n", host_pid, host_pid);
    assert_string_equal(text, expected);
    free(text);
    free(host_pid);
}

static void test_verbosity_filters_levels(void **state)
{
    char *host_pid = host_pid_prefix(getpid());
    char expected[512];
    herd_test_capture_t capture;
    char *text;
    int stream = opal_output_open("v", 5);

    assert_int_equal(opal_output_get_verbosity(stream), 5);
    herd_test_capture_start(&capture);
    opal_output_verbose(0, stream, "level 0");
    opal_output_verbose(5, stream, "level 5");
    opal_output_verbose(6, stream, "level 6 hidden");
    opal_output_verbose(100, stream, "level 100 hidden");
    opal_output_set_verbosity(stream, 10);
    opal_output_verbose(6, stream, "level 6 now shown");
    opal_output_set_verbosity(stream, -1);
    opal_output_verbose(0, stream, "level 0 hidden at -1");
    opal_output(stream, "plain output ignores verbosity");
    text = herd_test_capture_stop(&capture);
    assert_int_equal(opal_output_get_verbosity(stream), -1);
    snprintf(expected, sizeof(expected), "%sv: level 0\n%sv: level 5\n%sv: level 6 now shown\n"
             "%sv: plain output ignores verbosity\n", host_pid, host_pid, host_pid, host_pid);
    assert_string_equal(text, expected);
    free(text);
    free(host_pid);
}

static void test_stream_zero_verbosity(void **state)
{
    herd_test_capture_t capture;
    char *text;

    assert_int_equal(opal_output_get_verbosity(OPAL_OUTPUT_STDERR), 0);
    herd_test_capture_start(&capture);
    opal_output_verbose(0, OPAL_OUTPUT_STDERR, "shown");
    opal_output_verbose(1, OPAL_OUTPUT_STDERR, "hidden");
    opal_output_set_verbosity(OPAL_OUTPUT_STDERR, 3);
    opal_output_verbose(3, OPAL_OUTPUT_STDERR, "now shown");
    /* Finalize puts stream 0 back to its default. */
    opal_output_finalize();
    opal_output_verbose(3, OPAL_OUTPUT_STDERR, "hidden again");
    text = herd_test_capture_stop(&capture);
    assert_string_equal(text, "shown\nnow shown\n");
    assert_int_equal(opal_output_get_verbosity(OPAL_OUTPUT_STDERR), 0);
    free(text);
}

static void test_unknown_and_closed_streams(void **state)
{
    herd_test_capture_t capture;
    char *text;
    int stream = opal_output_open("closed", 10);

    opal_output_close(stream);
    /* Closing twice, closing stream 0 and closing nonsense are harmless. */
    opal_output_close(stream);
    opal_output_close(OPAL_OUTPUT_STDERR);
    opal_output_close(-7);
    opal_output_set_verbosity(12345, 9);
    assert_int_equal(opal_output_get_verbosity(12345), 0);
    assert_int_equal(opal_output_get_verbosity(stream), 0);

    herd_test_capture_start(&capture);
    opal_output(stream, "after close");
    opal_output(12345, "never opened");
    opal_output(-1, "negative");
    opal_output_verbose(0, 12345, "verbose level 0");
    opal_output_verbose(1, 12345, "verbose level 1 hidden");
    opal_output(OPAL_OUTPUT_STDERR, "stream zero still works");
    text = herd_test_capture_stop(&capture);
    assert_string_equal(text, "after close\nnever opened\nnegative\nverbose level 0\n"
                              "stream zero still works\n");
    free(text);
}

static void test_many_streams_distinct_ids(void **state)
{
    int ids[50];

    for (int i = 0; i < 50; i++) {
        char name[16];

        snprintf(name, sizeof(name), "s%d", i);
        ids[i] = opal_output_open(name, i);
        assert_true(ids[i] >= 1);
        for (int j = 0; j < i; j++) {
            assert_int_not_equal(ids[i], ids[j]);
        }
    }
    /* Every stream kept its own settings across the table growing. */
    for (int i = 0; i < 50; i++) {
        assert_int_equal(opal_output_get_verbosity(ids[i]), i);
    }
    opal_output_close(ids[7]);
    assert_int_equal(opal_output_get_verbosity(ids[7]), 0);
    assert_int_equal(opal_output_get_verbosity(ids[8]), 8);
}

static void test_long_message_is_not_truncated(void **state)
{
    char *long_text = malloc(5001);
    herd_test_capture_t capture;
    char *text;

    assert_non_null(long_text);
    for (int i = 0; i < 5000; i++) {
        long_text[i] = (char) ('a' + i % 26);
    }
    long_text[5000] = '\0';
    herd_test_capture_start(&capture);
    opal_output(OPAL_OUTPUT_STDERR, "<%s>", long_text);
    text = herd_test_capture_stop(&capture);
    assert_int_equal(strlen(text), 5003);
    assert_int_equal(text[0], '<');
    assert_memory_equal(&text[1], long_text, 5000);
    assert_string_equal(&text[5001], ">\n");
    free(text);
    free(long_text);
}

static void test_reopen_after_finalize(void **state)
{
    int stream;

    opal_output_finalize();
    stream = opal_output_open("again", 2);
    assert_true(stream >= 1);
    assert_int_equal(opal_output_get_verbosity(stream), 2);
}

#define NUM_THREADS 8
#define NUM_MESSAGES 1000

typedef struct {
    int stream;
    int thread;
    pthread_barrier_t *start; /* all threads write at once, to give interleaving every chance */
} thread_arg_t;

static void *write_messages(void *arg)
{
    const thread_arg_t *me = arg;

    pthread_barrier_wait(me->start);
    for (int i = 0; i < NUM_MESSAGES; i++) {
        opal_output(me->stream, "thread %d message %d part one\nthread %d message %d part two",
                    me->thread, i, me->thread, i);
    }
    return NULL;
}

static void test_threads_do_not_interleave(void **state)
{
    pthread_t threads[NUM_THREADS];
    thread_arg_t args[NUM_THREADS];
    int next_message[NUM_THREADS] = {0};
    char *host_pid = host_pid_prefix(getpid());
    size_t host_pid_length = strlen(host_pid);
    int stream = opal_output_open("mt", 0);
    pthread_barrier_t start;
    herd_test_capture_t capture;
    char **lines;
    char *text;

    assert_int_equal(pthread_barrier_init(&start, NULL, NUM_THREADS), 0);
    herd_test_capture_start(&capture);
    for (int t = 0; t < NUM_THREADS; t++) {
        args[t].stream = stream;
        args[t].thread = t;
        args[t].start = &start;
        pthread_create(&threads[t], NULL, write_messages, &args[t]);
    }
    for (int t = 0; t < NUM_THREADS; t++) {
        pthread_join(threads[t], NULL);
    }
    text = herd_test_capture_stop(&capture);
    pthread_barrier_destroy(&start);

    /* Each message's two lines must be adjacent and whole, and each thread's messages in order. */
    lines = opal_argv_split_with_empty(text, '\n');
    assert_int_equal(opal_argv_count(lines), NUM_THREADS * NUM_MESSAGES * 2 + 1);
    for (size_t i = 0; i + 1 < opal_argv_count(lines); i += 2) {
        int thread, message, thread2, message2;
        char tail[8] = "";

        assert_memory_equal(lines[i], host_pid, host_pid_length);
        assert_memory_equal(lines[i + 1], host_pid, host_pid_length);
        assert_int_equal(sscanf(lines[i] + host_pid_length, "mt: thread %d message %d part one%7s",
                                &thread, &message, tail), 2);
        assert_int_equal(sscanf(lines[i + 1] + host_pid_length,
                                "mt: thread %d message %d part two%7s", &thread2, &message2, tail),
                         2);
        assert_int_equal(thread, thread2);
        assert_int_equal(message, message2);
        assert_true(thread >= 0 && thread < NUM_THREADS);
        assert_int_equal(message, next_message[thread]);
        next_message[thread]++;
    }
    assert_string_equal(lines[NUM_THREADS * NUM_MESSAGES * 2], "");
    opal_argv_free(lines);
    free(text);
    free(host_pid);
}

static void test_forked_child_shows_its_own_pid(void **state)
{
    int stream = opal_output_open("child", 0);
    char expected[512];
    herd_test_capture_t capture;
    char *host_pid;
    char *text;
    int status;
    pid_t child;

    herd_test_capture_start(&capture);
    child = fork();
    if (0 == child) {
        opal_output(stream, "from the child");
        _exit(0);
    }
    waitpid(child, &status, 0);
    text = herd_test_capture_stop(&capture);
    assert_true(child > 0);
    assert_true(WIFEXITED(status) && 0 == WEXITSTATUS(status));
    host_pid = host_pid_prefix(child);
    snprintf(expected, sizeof(expected), "%schild: from the child\n", host_pid);
    assert_string_equal(text, expected);
    free(text);
    free(host_pid);
}

int main(void)
{
#define TEST(name) cmocka_unit_test_teardown(name, teardown)
    const struct CMUnitTest tests[] = {
        TEST(test_stream_zero_has_no_prefix),
        TEST(test_prefix_on_every_line),
        TEST(test_stream_without_prefix_name),
        TEST(test_verbosity_filters_levels),
        TEST(test_stream_zero_verbosity),
        TEST(test_unknown_and_closed_streams),
        TEST(test_many_streams_distinct_ids),
        TEST(test_long_message_is_not_truncated),
        TEST(test_reopen_after_finalize),
        TEST(test_threads_do_not_interleave),
        TEST(test_forked_child_shows_its_own_pid),
    };
#undef TEST

    return cmocka_run_group_tests(tests, NULL, NULL);
}
