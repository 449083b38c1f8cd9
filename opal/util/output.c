/* SPDX-License-Identifier: BSD-3-Clause */
/* Output streams: messages to stderr, each line prefixed "[host:pid] prefix: ", shown or
 * hidden by verbosity level, safe to call from several threads at once. */
#include "herd_config.h"

#include "opal/util/output.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    bool in_use;
    bool decorated;   /* lines get "[host:pid] " (streams >= 1) */
    int verbosity;
    char *prefix;     /* the name after "[host:pid] ", or NULL */
} output_stream_t;

/* One lock guards the table and every write, so a message's lines are never split by another
 * thread's message. */
static pthread_mutex_t output_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t output_atfork_once = PTHREAD_ONCE_INIT;
static output_stream_t stream_zero = {.in_use = true, .decorated = false, .verbosity = 0};
/* What an unknown or closed stream id behaves as: stream 0 with its default verbosity. */
static const output_stream_t stream_unknown = {.in_use = false, .decorated = false, .verbosity = 0};
static output_stream_t *streams; /* stream id n >= 1 lives in streams[n - 1] */
static int num_streams;
static char hostname[256];

/* A forked child (a launched process reporting a failed exec) must not inherit the lock held by
 * a thread that does not exist in the child, so fork waits for the lock and releases it on both
 * sides. */
static void output_atfork_prepare(void)
{
    pthread_mutex_lock(&output_lock);
}

static void output_atfork_release(void)
{
    pthread_mutex_unlock(&output_lock);
}

static void output_register_atfork(void)
{
    pthread_atfork(output_atfork_prepare, output_atfork_release, output_atfork_release);
}

static void output_lock_acquire(void)
{
    pthread_once(&output_atfork_once, output_register_atfork);
    pthread_mutex_lock(&output_lock);
}

/* Called with the lock held. */
static const output_stream_t *find_stream(int id)
{
    if (OPAL_OUTPUT_STDERR == id) {
        return &stream_zero;
    }
    if (id < 1 || id > num_streams || !streams[id - 1].in_use) {
        return NULL;
    }
    return &streams[id - 1];
}

/* Write all of buf to stderr, resuming after signals and partial writes. Errors are ignored:
 * there is nowhere left to report a failure to write to stderr. */
static void write_all(const char *buf, size_t length)
{
    while (length > 0) {
        ssize_t written = write(STDERR_FILENO, buf, length);

        if (written < 0) {
            if (EINTR == errno) {
                continue;
            }
            return;
        }
        buf += written;
        length -= (size_t) written;
    }
}

/* Put the stream's prefix before every line of msg, end it with a newline, and write it in one
 * call. Called with the lock held. */
static void write_lines(const output_stream_t *stream, const char *msg, size_t length)
{
    bool add_newline = (0 == length || '\n' != msg[length - 1]);
    size_t num_lines = add_newline ? 1 : 0, header_length = 0, total, pos = 0;
    const char *prefix = stream->prefix;
    int header_chars = 0;
    char *out;

    for (size_t i = 0; i < length; i++) {
        if ('\n' == msg[i]) {
            num_lines++;
        }
    }
    if (stream->decorated) {
        /* The pid is read at each write: a forked child must show its own. */
        header_chars = snprintf(NULL, 0, "[%s:%ld] %s%s", hostname, (long) getpid(),
                                NULL != prefix ? prefix : "", NULL != prefix ? ": " : "");
        if (header_chars > 0) {
            header_length = (size_t) header_chars;
        }
    }
    total = num_lines * header_length + length + (add_newline ? 1 : 0);
    out = malloc(total + 1);
    if (NULL == out) {
        /* Better undecorated than lost. */
        write_all(msg, length);
        if (add_newline) {
            write_all("\n", 1);
        }
        return;
    }

    if (header_length > 0) {
        snprintf(out, header_length + 1, "[%s:%ld] %s%s", hostname, (long) getpid(),
                 NULL != prefix ? prefix : "", NULL != prefix ? ": " : "");
    }
    for (size_t start = 0; start < length || (add_newline && start == length);) {
        const char *newline = memchr(&msg[start], '\n', length - start);
        size_t line_length = (NULL != newline) ? (size_t) (newline - &msg[start]) : length - start;

        if (pos > 0) {
            memcpy(&out[pos], out, header_length);
        }
        pos += header_length;
        memcpy(&out[pos], &msg[start], line_length);
        pos += line_length;
        out[pos++] = '\n';
        start += line_length + 1;
    }
    write_all(out, pos);
    free(out);
}

/* Format the message and write it. Called with the lock held. */
static void emit(const output_stream_t *stream, const char *format, va_list ap)
{
    char stack_msg[512];
    char *msg = stack_msg;
    size_t length;
    va_list copy;
    int chars;

    va_copy(copy, ap);
    chars = vsnprintf(stack_msg, sizeof(stack_msg), format, copy);
    va_end(copy);
    if (chars < 0) {
        return;
    }
    length = (size_t) chars;
    if (length >= sizeof(stack_msg)) {
        char *big = malloc(length + 1);

        if (NULL != big) {
            va_copy(copy, ap);
            vsnprintf(big, length + 1, format, copy);
            va_end(copy);
            msg = big;
        } else {
            /* Truncated, but not lost. */
            length = sizeof(stack_msg) - 1;
        }
    }
    write_lines(stream, msg, length);
    if (msg != stack_msg) {
        free(msg);
    }
}

int opal_output_open(const char *prefix, int verbosity)
{
    char *prefix_copy = NULL;
    int slot;

    if (NULL != prefix && '\0' != *prefix) {
        prefix_copy = strdup(prefix);
        if (NULL == prefix_copy) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }

    output_lock_acquire();
    if ('\0' == hostname[0]) {
        if (0 != gethostname(hostname, sizeof(hostname) - 1) || '\0' == hostname[0]) {
            strcpy(hostname, "unknown-host");
        }
    }
    /* Reuse a closed slot before growing the table. */
    for (slot = 0; slot < num_streams; slot++) {
        if (!streams[slot].in_use) {
            break;
        }
    }
    if (slot == num_streams) {
        int new_count = (0 == num_streams) ? 8 : num_streams * 2;
        output_stream_t *grown = realloc(streams, (size_t) new_count * sizeof(*grown));

        if (NULL == grown) {
            pthread_mutex_unlock(&output_lock);
            free(prefix_copy);
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        memset(&grown[num_streams], 0, (size_t) (new_count - num_streams) * sizeof(*grown));
        streams = grown;
        num_streams = new_count;
    }
    streams[slot].in_use = true;
    streams[slot].decorated = true;
    streams[slot].verbosity = verbosity;
    streams[slot].prefix = prefix_copy;
    pthread_mutex_unlock(&output_lock);
    return slot + 1;
}

void opal_output_set_verbosity(int stream, int verbosity)
{
    output_lock_acquire();
    if (NULL != find_stream(stream)) {
        if (OPAL_OUTPUT_STDERR == stream) {
            stream_zero.verbosity = verbosity;
        } else {
            streams[stream - 1].verbosity = verbosity;
        }
    }
    pthread_mutex_unlock(&output_lock);
}

int opal_output_get_verbosity(int stream)
{
    const output_stream_t *found;
    int verbosity;

    output_lock_acquire();
    found = find_stream(stream);
    verbosity = (NULL != found) ? found->verbosity : stream_unknown.verbosity;
    pthread_mutex_unlock(&output_lock);
    return verbosity;
}

void opal_output_close(int stream)
{
    /* Stream 0 always exists; closing it (or an unknown id) does nothing. */
    output_lock_acquire();
    if (OPAL_OUTPUT_STDERR != stream && NULL != find_stream(stream)) {
        free(streams[stream - 1].prefix);
        memset(&streams[stream - 1], 0, sizeof(streams[0]));
    }
    pthread_mutex_unlock(&output_lock);
}

void opal_output_vverbose(int level, int stream, const char *format, va_list ap)
{
    const output_stream_t *found;

    if (NULL == format) {
        return;
    }
    output_lock_acquire();
    found = find_stream(stream);
    if (NULL == found) {
        found = &stream_unknown;
    }
    if (level <= found->verbosity) {
        emit(found, format, ap);
    }
    pthread_mutex_unlock(&output_lock);
}

void opal_output_verbose(int level, int stream, const char *format, ...)
{
    va_list ap;

    va_start(ap, format);
    opal_output_vverbose(level, stream, format, ap);
    va_end(ap);
}

void opal_output(int stream, const char *format, ...)
{
    const output_stream_t *found;
    va_list ap;

    if (NULL == format) {
        return;
    }
    output_lock_acquire();
    found = find_stream(stream);
    if (NULL == found) {
        found = &stream_unknown;
    }
    va_start(ap, format);
    emit(found, format, ap);
    va_end(ap);
    pthread_mutex_unlock(&output_lock);
}

void opal_output_finalize(void)
{
    output_lock_acquire();
    for (int i = 0; i < num_streams; i++) {
        free(streams[i].prefix);
    }
    free(streams);
    streams = NULL;
    num_streams = 0;
    stream_zero.verbosity = 0;
    pthread_mutex_unlock(&output_lock);
}
