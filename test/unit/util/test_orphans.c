/* SPDX-License-Identifier: BSD-3-Clause */
/* orte_orphans_kill: every child that is not known is killed and reaped (also one re-parented to
 * us as the subreaper, and one that has exited already), a known one is left alone, and with no
 * child at all nothing happens. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "orte/util/orphans.h"

/* A child that waits to be killed. */
static pid_t start_sleeper(void)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (0 == pid) {
        for (;;) {
            pause();
        }
    }
    return pid;
}

static void assert_no_child(void)
{
    errno = 0;
    assert_int_equal(-1, waitpid(-1, NULL, WNOHANG));
    assert_int_equal(ECHILD, errno);
}

static void test_no_child(void **state)
{
    (void) state;
    assert_no_child();
    assert_int_equal(0, orte_orphans_kill(NULL, 0));
    pid_t gone = 1; /* a known pid that is no child of ours changes nothing */
    assert_int_equal(0, orte_orphans_kill(&gone, 1));
    assert_no_child();
}

static void test_running_child(void **state)
{
    (void) state;
    pid_t pid = start_sleeper();
    assert_int_equal(1, orte_orphans_kill(NULL, 0));
    assert_int_equal(-1, kill(pid, 0)); /* reaped: the pid is gone */
    assert_no_child();
}

static void test_exited_child(void **state)
{
    (void) state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (0 == pid) {
        _exit(0);
    }
    /* a zombie until reaped: it is a child still, and is reaped */
    siginfo_t info;
    assert_int_equal(0, waitid(P_PID, (id_t) pid, &info, WEXITED | WNOWAIT));
    assert_int_equal(1, orte_orphans_kill(NULL, 0));
    assert_no_child();
}

/* orte_orphans_term: a child that has exited is reaped, one that runs gets SIGTERM and is left
 * to end (counted), a known one is left alone. */
static void test_term(void **state)
{
    (void) state;
    int pipefd[2];
    assert_int_equal(0, pipe(pipefd));
    pid_t exited = fork();
    assert_true(exited >= 0);
    if (0 == exited) {
        _exit(0);
    }
    siginfo_t info;
    assert_int_equal(0, waitid(P_PID, (id_t) exited, &info, WEXITED | WNOWAIT));
    pid_t polite = fork();
    assert_true(polite >= 0);
    if (0 == polite) {
        /* says it got SIGTERM by closing the pipe as it ends */
        close(pipefd[0]);
        for (;;) {
            pause();
        }
    }
    close(pipefd[1]);
    pid_t known = start_sleeper();
    assert_int_equal(1, orte_orphans_term(&known, 1));
    char byte;
    assert_int_equal(0, read(pipefd[0], &byte, 1)); /* the SIGTERM ended it */
    close(pipefd[0]);
    int status = 0;
    assert_int_equal(polite, waitpid(polite, &status, 0));
    assert_true(WIFSIGNALED(status) && SIGTERM == WTERMSIG(status));
    assert_int_equal(-1, kill(exited, 0)); /* reaped */
    assert_int_equal(0, kill(known, 0));
    assert_int_equal(1, orte_orphans_kill(NULL, 0));
    assert_no_child();
    assert_int_equal(0, orte_orphans_term(NULL, 0));
}

/* A kept child (a helper its parent manages) is no orphan, until released. */
static void test_kept_child(void **state)
{
    (void) state;
    pid_t helper = start_sleeper();
    orte_orphans_keep(helper);
    assert_int_equal(0, orte_orphans_kill(NULL, 0));
    assert_int_equal(0, orte_orphans_term(NULL, 0));
    assert_int_equal(0, kill(helper, 0));
    orte_orphans_release(helper);
    assert_int_equal(1, orte_orphans_kill(NULL, 0));
    assert_no_child();
}

static void test_orphaned_grandchild(void **state)
{
    (void) state;
    int pipefd[2];
    assert_int_equal(0, pipe(pipefd));
    orte_orphans_adopt();
    pid_t child = fork();
    assert_true(child >= 0);
    if (0 == child) {
        /* a process that leaves one behind: the grandchild goes to us when it exits */
        pid_t grandchild = start_sleeper();
        ssize_t ignored = write(pipefd[1], &grandchild, sizeof(grandchild));
        (void) ignored;
        _exit(0);
    }
    close(pipefd[1]);
    pid_t grandchild = 0;
    assert_int_equal(sizeof(grandchild), read(pipefd[0], &grandchild, sizeof(grandchild)));
    close(pipefd[0]);
    assert_int_equal(child, waitpid(child, NULL, 0));
    assert_int_equal(1, orte_orphans_kill(NULL, 0));
    assert_int_equal(-1, kill(grandchild, 0));
    assert_no_child();
}

static void test_known_child_left(void **state)
{
    (void) state;
    pid_t known = start_sleeper();
    pid_t other = start_sleeper();
    assert_int_equal(1, orte_orphans_kill(&known, 1));
    assert_int_equal(-1, kill(other, 0));
    assert_int_equal(0, kill(known, 0)); /* still there */
    assert_int_equal(0, kill(known, SIGKILL));
    assert_int_equal(known, waitpid(known, NULL, 0));
    assert_no_child();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_child),         cmocka_unit_test(test_running_child),
        cmocka_unit_test(test_exited_child),     cmocka_unit_test(test_orphaned_grandchild),
        cmocka_unit_test(test_known_child_left), cmocka_unit_test(test_term),
        cmocka_unit_test(test_kept_child),
    };
    return cmocka_run_group_tests_name("orphans", tests, NULL, NULL);
}
