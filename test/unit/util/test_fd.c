/* SPDX-License-Identifier: BSD-3-Clause */
/* opal_fd_write_all and opal_fd_send_all: whole buffers through a pipe or a socket, and a socket
 * whose reader is gone reported as an error (EPIPE) instead of a SIGPIPE that kills the writer. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opal/util/fd.h"

#define BIG (4u << 20) /* far more than a socket or pipe holds: the writer waits for the reader */

/* A child that reads fd to its end and exits 0 when it got exactly BIG bytes of the pattern. */
static pid_t start_reader(int fd, int other)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (0 == pid) {
        close(other);
        static uint8_t chunk[65536];
        size_t total = 0;
        ssize_t n;
        int bad = 0;
        while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
            for (ssize_t i = 0; i < n; ++i) {
                bad |= chunk[i] != (uint8_t) ((total + (size_t) i) % 251);
            }
            total += (size_t) n;
        }
        _exit(0 == bad && BIG == total ? 0 : 1);
    }
    close(fd);
    return pid;
}

static uint8_t *pattern(void)
{
    uint8_t *data = malloc(BIG);
    assert_non_null(data);
    for (size_t i = 0; i < BIG; ++i) {
        data[i] = (uint8_t) (i % 251);
    }
    return data;
}

static void expect_reader_ok(pid_t pid)
{
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_whole_buffers(void **state)
{
    uint8_t *data = pattern();
    int fds[2];

    /* a blocking socket, and a non-blocking one (the writer polls instead of spinning) */
    for (int nonblocking = 0; nonblocking < 2; ++nonblocking) {
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
        if (nonblocking) {
            fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK);
        }
        pid_t reader = start_reader(fds[0], fds[1]);
        assert_int_equal(opal_fd_send_all(fds[1], data, BIG), HERD_SUCCESS);
        close(fds[1]);
        expect_reader_ok(reader);
    }
    assert_int_equal(pipe(fds), 0);
    pid_t reader = start_reader(fds[0], fds[1]);
    assert_int_equal(opal_fd_write_all(fds[1], data, BIG), HERD_SUCCESS);
    close(fds[1]);
    expect_reader_ok(reader);
    free(data);
}

static void test_reader_gone(void **state)
{
    int fds[2];
    /* SIGPIPE as an application gets it: by default it kills */
    void (*old)(int) = signal(SIGPIPE, SIG_DFL);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    close(fds[0]);
    errno = 0;
    assert_int_equal(opal_fd_send_all(fds[1], "lost", 4), HERD_ERR_IN_ERRNO);
    assert_int_equal(errno, EPIPE);
    close(fds[1]);

    /* a peer that died while the writer waited for room */
    uint8_t *data = pattern();
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (0 == pid) {
        char some[100];
        close(fds[1]);
        _exit(read(fds[0], some, sizeof(some)) > 0 ? 0 : 1); /* reads a little, then is gone */
    }
    close(fds[0]);
    errno = 0;
    assert_int_equal(opal_fd_send_all(fds[1], data, BIG), HERD_ERR_IN_ERRNO);
    assert_true(EPIPE == errno || ECONNRESET == errno);
    close(fds[1]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    free(data);
    signal(SIGPIPE, old);
}

static void test_not_a_socket(void **state)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    errno = 0;
    assert_int_equal(opal_fd_send_all(fds[1], "x", 1), HERD_ERR_IN_ERRNO);
    assert_int_equal(errno, ENOTSOCK);
    close(fds[0]);
    close(fds[1]);
    errno = 0;
    assert_int_equal(opal_fd_send_all(-1, "x", 1), HERD_ERR_IN_ERRNO);
    assert_int_equal(errno, EBADF);
    /* nothing to write is done at once, whatever the descriptor */
    assert_int_equal(opal_fd_send_all(-1, "", 0), HERD_SUCCESS);
    assert_int_equal(opal_fd_write_all(-1, "", 0), HERD_SUCCESS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_buffers),
        cmocka_unit_test(test_reader_gone),
        cmocka_unit_test(test_not_a_socket),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
