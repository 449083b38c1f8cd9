/* SPDX-License-Identifier: BSD-3-Clause */
/* odls: the default component starts real processes (/bin/true, sh scripts) and the tests check
 * exit statuses, signals, environment, working directory, binding, fds, kill_all escalation,
 * process groups, usage and many processes; each test ends with no child of ours left. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "opal/event/event.h"
#include "orte/mca/odls/odls.h"
#include "support/capture.h"

#define MAX_RANKS 256
/* generous: only there so a broken build fails instead of hanging */
#define HANG_GUARD_SECONDS 60

extern char **environ;

typedef struct {
    opal_event_base_t *base;
    opal_event_t *tick;
    const orte_odls_module_t *module;
    orte_odls_t *odls;
    int reported[MAX_RANKS];
    orte_odls_exit_t exits[MAX_RANKS];
    int all_exited_calls;
    size_t alive_at_all_exited;
    int unexpected_rank;
} test_ctx_t;

static char scratch_dir[PATH_MAX];

/* ------------------------------------------------------------------------------------------ */
/* helpers */

static void on_proc_exited(uint32_t rank, const orte_odls_exit_t *info, void *cbdata)
{
    test_ctx_t *ctx = cbdata;

    if (rank >= MAX_RANKS) {
        ctx->unexpected_rank = 1;
        return;
    }
    ctx->reported[rank]++;
    ctx->exits[rank] = *info;
}

static void on_all_exited(void *cbdata)
{
    test_ctx_t *ctx = cbdata;

    ctx->all_exited_calls++;
    ctx->alive_at_all_exited = ctx->module->num_alive(ctx->odls);
}

static void on_tick(int fd, short what, void *arg)
{
    /* only wakes the loop so run_until() re-checks its condition */
}

static int setup(void **state)
{
    test_ctx_t *ctx = calloc(1, sizeof(*ctx));
    orte_odls_callbacks_t callbacks = {
        .proc_exited = on_proc_exited, .all_exited = on_all_exited, .cbdata = ctx};
    struct timeval tick = {.tv_sec = 0, .tv_usec = 10000};

    assert_non_null(ctx);
    unsetenv("HERD_MCA_odls");
    unsetenv("HERD_MCA_odls_base_kill_grace_ms");
    assert_int_equal(orte_odls_base_open(), HERD_SUCCESS);
    ctx->module = orte_odls_base_module();
    assert_non_null(ctx->module);
    assert_int_equal(opal_event_base_create(&ctx->base), HERD_SUCCESS);
    assert_int_equal(opal_event_timer_create(ctx->base, true, on_tick, ctx, &ctx->tick),
                     HERD_SUCCESS);
    assert_int_equal(opal_event_add(ctx->tick, &tick), HERD_SUCCESS);
    assert_int_equal(ctx->module->create(ctx->base, &callbacks, &ctx->odls), HERD_SUCCESS);
    *state = ctx;
    return 0;
}

/* Fails when a child of this process (or an orphan reparented to it: the test is a subreaper)
 * is still running; collects the ones that just died. */
static void assert_no_children(void)
{
    for (int tries = 0; tries < 100 * HANG_GUARD_SECONDS; ++tries) {
        pid_t pid = waitpid(-1, NULL, WNOHANG);
        if (pid < 0 && ECHILD == errno) {
            return;
        }
        if (0 == pid) {
            usleep(10000);
        }
    }
    fail_msg("a child process is still running");
}

static int teardown(void **state)
{
    test_ctx_t *ctx = *state;

    assert_int_equal(ctx->module->num_alive(ctx->odls), 0);
    ctx->module->destroy(ctx->odls);
    opal_event_free(ctx->tick);
    opal_event_base_free(ctx->base);
    orte_odls_base_close();
    assert_int_equal(ctx->unexpected_rank, 0);
    free(ctx);
    assert_no_children();
    return 0;
}

static bool all_exited(const test_ctx_t *ctx)
{
    return 0 == ctx->module->num_alive(ctx->odls);
}

/* Runs the loop until done(ctx) holds; fails after the hang guard. */
static void run_until(test_ctx_t *ctx, bool (*done)(const test_ctx_t *ctx))
{
    time_t deadline = time(NULL) + HANG_GUARD_SECONDS;

    while (!done(ctx)) {
        if (time(NULL) > deadline) {
            fail_msg("processes did not exit within %d s", HANG_GUARD_SECONDS);
        }
        opal_event_base_loop(ctx->base, true);
    }
}

static orte_odls_proc_spec_t spec_for(char *const *argv, uint32_t rank)
{
    return (orte_odls_proc_spec_t){
        .id = rank,
        .argv = argv,
        .env = environ,
        .stdin_fd = -1,
        .stdout_fd = -1,
        .stderr_fd = -1,
        .node_name = "node-test",
        .rank = rank,
        .size = 1,
        .local_size = 1,
    };
}

static void launch_ok(test_ctx_t *ctx, char *const *argv, uint32_t rank)
{
    orte_odls_proc_spec_t spec = spec_for(argv, rank);

    assert_int_equal(ctx->module->launch(ctx->odls, &spec), HERD_SUCCESS);
}

static char *scratch_path(const char *name)
{
    char *path;

    assert_true(asprintf(&path, "%s/%s", scratch_dir, name) > 0);
    return path;
}

/* The whole file, or NULL. */
static char *read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    char *text;
    size_t n;

    if (NULL == f) {
        return NULL;
    }
    text = calloc(1, 65536);
    n = fread(text, 1, 65535, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

/* One line from a pipe (blocking, with the hang guard as an alarm). */
static void read_line(int fd, char *line, size_t size)
{
    size_t n = 0;

    alarm(HANG_GUARD_SECONDS);
    while (n + 1 < size) {
        char c;
        ssize_t got = read(fd, &c, 1);
        if (got <= 0 || '\n' == c) {
            break;
        }
        line[n++] = c;
    }
    alarm(0);
    line[n] = '\0';
}

/* Waits for an orphan (reparented to the test, a subreaper) to die; returns its status. */
static int wait_orphan(pid_t pid)
{
    int status = 0;

    alarm(HANG_GUARD_SECONDS);
    while (waitpid(pid, &status, 0) < 0 && EINTR == errno) {
    }
    alarm(0);
    return status;
}

/* ------------------------------------------------------------------------------------------ */
/* tests */

static void test_selection(void **state)
{
    test_ctx_t *ctx = *state;

    assert_string_equal(ctx->module->name, "default");
    assert_int_equal(orte_odls_base_kill_grace_ms(), 1000);
    orte_odls_base_close();
    setenv("HERD_MCA_odls_base_kill_grace_ms", "250", 1);
    assert_int_equal(orte_odls_base_open(), HERD_SUCCESS);
    assert_int_equal(orte_odls_base_kill_grace_ms(), 250);
    unsetenv("HERD_MCA_odls_base_kill_grace_ms");
}

static void test_exit_codes(void **state)
{
    test_ctx_t *ctx = *state;
    char *argv_true[] = {"true", NULL};
    char *argv_false[] = {"/bin/false", NULL};
    char *argv_seven[] = {"sh", "-c", "exit 7", NULL};
    char text[128];

    launch_ok(ctx, argv_true, 0);
    launch_ok(ctx, argv_false, 1);
    launch_ok(ctx, argv_seven, 2);
    run_until(ctx, all_exited);

    for (int rank = 0; rank < 3; ++rank) {
        assert_int_equal(ctx->reported[rank], 1);
        assert_false(ctx->exits[rank].signaled);
        assert_true(ctx->exits[rank].pid > 0);
    }
    assert_int_equal(ctx->exits[0].exit_code, 0);
    assert_int_equal(ctx->exits[1].exit_code, 1);
    assert_int_equal(ctx->exits[2].exit_code, 7);
    assert_string_equal(orte_odls_exit_describe(&ctx->exits[2], text, sizeof(text)),
                        "exited with status 7");
    assert_int_equal(orte_odls_exit_status(&ctx->exits[2]), 7);
    assert_true(ctx->all_exited_calls >= 1);
    assert_int_equal(ctx->alive_at_all_exited, 0);
}

static void test_killed_by_signal(void **state)
{
    test_ctx_t *ctx = *state;
    char *argv[] = {"sh", "-c", "kill -SEGV $$", NULL};
    char text[128], expected[128];

    launch_ok(ctx, argv, 3);
    run_until(ctx, all_exited);
    assert_int_equal(ctx->reported[3], 1);
    assert_true(ctx->exits[3].signaled);
    assert_int_equal(ctx->exits[3].signo, SIGSEGV);
    assert_string_equal(ctx->exits[3].signal_name, strsignal(SIGSEGV));
    /* main() turned core dumps off, so the text is exact */
    assert_false(ctx->exits[3].core_dumped);
    snprintf(expected, sizeof(expected), "killed by signal %d (%s)", SIGSEGV, strsignal(SIGSEGV));
    assert_string_equal(orte_odls_exit_describe(&ctx->exits[3], text, sizeof(text)), expected);
    assert_int_equal(orte_odls_exit_status(&ctx->exits[3]), 128 + SIGSEGV);
}

static void test_environment(void **state)
{
    test_ctx_t *ctx = *state;
    char *out = scratch_path("env.txt");
    char *script;
    char *env[] = {"PATH=/usr/bin:/bin", "ODLS_TEST_VALUE=kept", "HERD_RANK=99", NULL};
    char *text;

    assert_true(asprintf(&script, "env > '%s'", out) > 0);
    char *argv[] = {"sh", "-c", script, NULL};
    orte_odls_proc_spec_t spec = spec_for(argv, 5);
    spec.env = env;
    spec.size = 16;
    spec.local_rank = 1;
    spec.local_size = 4;
    spec.node_rank = 2;
    spec.jobid = 42;
    spec.appnum = 3;
    assert_int_equal(ctx->module->launch(ctx->odls, &spec), HERD_SUCCESS);
    run_until(ctx, all_exited);
    assert_int_equal(ctx->exits[5].exit_code, 0);

    text = read_file(out);
    assert_non_null(text);
    assert_contains(text, "HERD_RANK=5\n");
    assert_null(strstr(text, "HERD_RANK=99"));
    assert_contains(text, "HERD_SIZE=16\n");
    assert_contains(text, "HERD_LOCAL_RANK=1\n");
    assert_contains(text, "HERD_LOCAL_SIZE=4\n");
    assert_contains(text, "HERD_NODE_RANK=2\n");
    assert_contains(text, "HERD_JOBID=42\n");
    assert_contains(text, "HERD_APPNUM=3\n");
    assert_contains(text, "ODLS_TEST_VALUE=kept\n");
    free(text);
    free(script);
    free(out);
}

static void test_working_directory(void **state)
{
    test_ctx_t *ctx = *state;
    char *dir = scratch_path("wd");
    char *argv[] = {"sh", "-c", "pwd -P > here.txt", NULL};
    char *text, *out, real[PATH_MAX];
    orte_odls_proc_spec_t spec = spec_for(argv, 0);

    assert_int_equal(mkdir(dir, 0700), 0);
    spec.cwd = dir;
    assert_int_equal(ctx->module->launch(ctx->odls, &spec), HERD_SUCCESS);
    run_until(ctx, all_exited);
    assert_int_equal(ctx->exits[0].exit_code, 0);
    out = scratch_path("wd/here.txt");
    text = read_file(out);
    assert_non_null(text);
    assert_non_null(realpath(dir, real));
    strcat(real, "\n");
    assert_string_equal(text, real);
    free(text);
    free(out);
    free(dir);
}

/* The child's Cpus_allowed_list line, run with cpuset (and simulated). */
static char *child_cpus(test_ctx_t *ctx, const char *cpuset, bool simulated, uint32_t rank)
{
    char *out = scratch_path("cpus.txt");
    char *script, *text;

    assert_true(asprintf(&script, "grep Cpus_allowed_list: /proc/self/status > '%s'", out) > 0);
    char *argv[] = {"sh", "-c", script, NULL};
    orte_odls_proc_spec_t spec = spec_for(argv, rank);
    spec.cpuset = cpuset;
    spec.simulated = simulated;
    assert_int_equal(ctx->module->launch(ctx->odls, &spec), HERD_SUCCESS);
    run_until(ctx, all_exited);
    assert_int_equal(ctx->exits[rank].exit_code, 0);
    text = read_file(out);
    assert_non_null(text);
    free(script);
    free(out);
    return text;
}

static void test_binding(void **state)
{
    test_ctx_t *ctx = *state;
    cpu_set_t ours;
    int first = -1;
    char cpuset[32], expected[64], *text, *status, *line;

    assert_int_equal(sched_getaffinity(0, sizeof(ours), &ours), 0);
    if (CPU_COUNT(&ours) < 2) {
        skip(); /* bound or not, one CPU looks the same */
    }
    for (int cpu = 0; cpu < CPU_SETSIZE && first < 0; ++cpu) {
        if (CPU_ISSET(cpu, &ours)) {
            first = cpu;
        }
    }
    snprintf(cpuset, sizeof(cpuset), "%d", first);
    snprintf(expected, sizeof(expected), "Cpus_allowed_list:\t%d\n", first);
    text = child_cpus(ctx, cpuset, false, 0);
    assert_string_equal(text, expected);
    free(text);

    /* simulated: the cpuset is not this machine's, so the child keeps ours */
    status = read_file("/proc/self/status");
    assert_non_null(status);
    line = strstr(status, "Cpus_allowed_list:");
    assert_non_null(line);
    line[strcspn(line, "\n") + 1] = '\0';
    text = child_cpus(ctx, cpuset, true, 1);
    assert_string_equal(text, line);
    free(text);
    free(status);
}

static void test_bad_binding(void **state)
{
    test_ctx_t *ctx = *state;
    char *argv[] = {"/bin/true", NULL};
    orte_odls_proc_spec_t spec = spec_for(argv, 6);
    herd_test_capture_t capture;
    char *text;
    int rc;

    spec.cpuset = "0-x";
    herd_test_capture_start(&capture);
    rc = ctx->module->launch(ctx->odls, &spec);
    text = herd_test_capture_stop(&capture);
    assert_int_equal(rc, HERD_ERR_BAD_PARAM);
    assert_contains(text, "Rank 6 on node-test");
    assert_contains(text, "\"0-x\"");
    free(text);

    /* a CPU this machine does not have: the child fails before exec and says why */
    spec.cpuset = "100000";
    herd_test_capture_start(&capture);
    rc = ctx->module->launch(ctx->odls, &spec);
    text = herd_test_capture_stop(&capture);
    assert_int_equal(rc, HERD_ERR_IN_ERRNO);
    assert_contains(text, "could not be bound to CPUs 100000");
    free(text);
    assert_int_equal(ctx->module->num_alive(ctx->odls), 0);
    assert_int_equal(ctx->reported[6], 0);
}

static void test_no_inherited_fds(void **state)
{
    test_ctx_t *ctx = *state;
    char *out = scratch_path("fds.txt");
    char *argv[] = {"ls", "/proc/self/fd", NULL};
    orte_odls_proc_spec_t spec = spec_for(argv, 0);
    int leaked, out_fd;
    char *text, *save = NULL;
    int count = 0;

    /* an fd without close-on-exec, as a careless library would leave */
    leaked = dup2(STDERR_FILENO, 50);
    assert_int_equal(leaked, 50);
    out_fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(out_fd >= 0);
    spec.stdout_fd = out_fd;
    assert_int_equal(ctx->module->launch(ctx->odls, &spec), HERD_SUCCESS);
    close(out_fd);
    close(leaked);
    run_until(ctx, all_exited);
    assert_int_equal(ctx->exits[0].exit_code, 0);

    text = read_file(out);
    assert_non_null(text);
    /* 0, 1, 2, and the one ls opens to read the folder */
    for (char *fd = strtok_r(text, "\n", &save); NULL != fd; fd = strtok_r(NULL, "\n", &save)) {
        assert_true(atoi(fd) <= 3);
        ++count;
    }
    assert_true(count >= 3 && count <= 4);
    free(text);
    free(out);
}

/* Extra descriptors (a wireup socket) become 3, 4, ... in the process, in the order given;
 * nothing else is inherited. */
static void test_extra_fds(void **state)
{
    test_ctx_t *ctx = *state;
    char *argv[] = {"sh", "-c",
                    "echo three >&3; echo four >&4; ls /proc/self/fd | sort -n | tr '\\n' ' '",
                    NULL};
    orte_odls_proc_spec_t spec = spec_for(argv, 0);
    int a[2], b[2], out[2];
    char line[128];

    assert_int_equal(pipe2(a, O_CLOEXEC), 0);
    assert_int_equal(pipe2(b, O_CLOEXEC), 0);
    assert_int_equal(pipe2(out, O_CLOEXEC), 0);
    int extra[2] = {a[1], b[1]};
    spec.extra_fds = extra;
    spec.num_extra_fds = 2;
    spec.stdout_fd = out[1];
    assert_int_equal(ctx->module->launch(ctx->odls, &spec), HERD_SUCCESS);
    close(a[1]);
    close(b[1]);
    close(out[1]);
    read_line(a[0], line, sizeof(line));
    assert_string_equal(line, "three");
    read_line(b[0], line, sizeof(line));
    assert_string_equal(line, "four");
    read_line(out[0], line, sizeof(line));
    /* 0-2, the two extra, and the one ls opens to read the folder */
    assert_non_null(strstr(line, "0 1 2 3 4 "));
    assert_null(strstr(line, " 6 "));
    close(a[0]);
    close(b[0]);
    close(out[0]);
    run_until(ctx, all_exited);
    assert_int_equal(ctx->exits[0].exit_code, 0);
    /* too many, or a bad one, is refused before anything starts */
    int many[ORTE_ODLS_MAX_EXTRA_FDS + 1] = {0};
    spec.extra_fds = many;
    spec.num_extra_fds = ORTE_ODLS_MAX_EXTRA_FDS + 1;
    assert_int_equal(ctx->module->launch(ctx->odls, &spec), HERD_ERR_BAD_PARAM);
    int bad = -1;
    spec.extra_fds = &bad;
    spec.num_extra_fds = 1;
    assert_int_equal(ctx->module->launch(ctx->odls, &spec), HERD_ERR_BAD_PARAM);
}

static void test_stdio(void **state)
{
    test_ctx_t *ctx = *state;
    char *argv_echo[] = {"sh", "-c", "echo hello; echo oops >&2", NULL};
    char *argv_cat[] = {"cat", NULL}; /* stdin is /dev/null: ends at once */
    orte_odls_proc_spec_t spec = spec_for(argv_echo, 0);
    int out[2];
    char line[64];

    assert_int_equal(pipe2(out, O_CLOEXEC), 0);
    spec.stdout_fd = out[1];
    spec.stderr_fd = out[1];
    assert_int_equal(ctx->module->launch(ctx->odls, &spec), HERD_SUCCESS);
    close(out[1]);
    read_line(out[0], line, sizeof(line));
    assert_string_equal(line, "hello");
    read_line(out[0], line, sizeof(line));
    assert_string_equal(line, "oops");
    close(out[0]);
    launch_ok(ctx, argv_cat, 1);
    run_until(ctx, all_exited);
    assert_int_equal(ctx->exits[0].exit_code, 0);
    assert_int_equal(ctx->exits[1].exit_code, 0);
}

/* The SigIgn line of a process started with argv_status (grep reads its own status: what it
 * inherited across the exec). */
static void launched_sigign(test_ctx_t *ctx, uint32_t rank, char *line, size_t size)
{
    char *argv_status[] = {"grep", "^SigIgn:", "/proc/self/status", NULL};
    orte_odls_proc_spec_t spec = spec_for(argv_status, rank);
    int out[2];

    assert_int_equal(pipe2(out, O_CLOEXEC), 0);
    spec.stdout_fd = out[1];
    assert_int_equal(ctx->module->launch(ctx->odls, &spec), HERD_SUCCESS);
    close(out[1]);
    read_line(out[0], line, size);
    close(out[0]);
}

static void on_usr1(int signo)
{
    (void) signo;
}

/* What the launcher ignores or catches, a process starts with as SIG_DFL: one reading of the
 * dispositions serves a burst of launches, and a change made later is seen by the next burst. */
static void test_signal_dispositions(void **state)
{
    test_ctx_t *ctx = *state;
    struct sigaction ignore = {.sa_handler = SIG_IGN}, handler = {.sa_handler = on_usr1};
    struct sigaction old_usr1, old_usr2, old_pipe, old_hup;
    char line[128];

    sigemptyset(&ignore.sa_mask);
    sigemptyset(&handler.sa_mask);
    assert_int_equal(0, sigaction(SIGUSR1, &handler, &old_usr1));
    assert_int_equal(0, sigaction(SIGUSR2, &ignore, &old_usr2));
    assert_int_equal(0, sigaction(SIGPIPE, &ignore, &old_pipe));
    launched_sigign(ctx, 0, line, sizeof(line));
    assert_string_equal(line, "SigIgn:\t0000000000000000");
    /* ignored from now on, after the reading above has expired */
    assert_int_equal(0, sigaction(SIGHUP, &ignore, &old_hup));
    usleep(5000);
    launched_sigign(ctx, 1, line, sizeof(line));
    assert_string_equal(line, "SigIgn:\t0000000000000000");
    run_until(ctx, all_exited);
    assert_int_equal(ctx->exits[0].exit_code, 0);
    assert_int_equal(ctx->exits[1].exit_code, 0);
    sigaction(SIGUSR1, &old_usr1, NULL);
    sigaction(SIGUSR2, &old_usr2, NULL);
    sigaction(SIGPIPE, &old_pipe, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
}

static void test_missing_program(void **state)
{
    test_ctx_t *ctx = *state;
    char *argv[] = {"herd-no-such-program", NULL};
    orte_odls_proc_spec_t spec = spec_for(argv, 0);
    char *plain = scratch_path("plain.txt");
    char *resolved = NULL, *text;
    herd_test_capture_t capture;
    FILE *f;
    int rc;

    herd_test_capture_start(&capture);
    rc = orte_odls_base_check_program("herd-no-such-program", "/usr/bin:/bin", NULL, "node7",
                                      &resolved);
    text = herd_test_capture_stop(&capture);
    assert_int_equal(rc, HERD_ERR_NOT_FOUND);
    assert_null(resolved);
    assert_contains(text, "\"herd-no-such-program\" was not found on node7");
    assert_contains(text, "/usr/bin:/bin");
    free(text);

    /* a file that is not executable, by full path */
    f = fopen(plain, "w");
    assert_non_null(f);
    fclose(f);
    herd_test_capture_start(&capture);
    rc = orte_odls_base_check_program(plain, NULL, NULL, "node7", &resolved);
    text = herd_test_capture_stop(&capture);
    assert_int_equal(rc, HERD_ERR_BAD_PARAM);
    assert_contains(text, "cannot be run on node7");
    free(text);

    /* a folder is not a program */
    herd_test_capture_start(&capture);
    rc = orte_odls_base_check_program("./", NULL, scratch_dir, "node7", &resolved);
    text = herd_test_capture_stop(&capture);
    assert_int_equal(rc, HERD_ERR_BAD_PARAM);
    free(text);

    /* found in PATH, and relative to the working directory */
    assert_int_equal(
        orte_odls_base_check_program("sh", "/nonexistent:/usr/bin:/bin", NULL, "n", &resolved),
        HERD_SUCCESS);
    assert_non_null(strstr(resolved, "/sh"));
    free(resolved);
    assert_int_equal(orte_odls_base_check_program("../bin/true", NULL, "/usr/bin", "n", &resolved),
                     HERD_SUCCESS);
    assert_string_equal(resolved, "/usr/bin/../bin/true");
    free(resolved);

    /* not in PATH but in the working directory: found there, as mpirun finds it */
    char *local = scratch_path("herd-wdir-program");
    f = fopen(local, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(chmod(local, 0700), 0);
    assert_int_equal(orte_odls_base_check_program("herd-wdir-program", "/usr/bin:/bin", scratch_dir,
                                                  "n", &resolved),
                     HERD_SUCCESS);
    assert_string_equal(resolved, local);
    free(resolved);
    unlink(local);
    free(local);

    /* launch checks too, and starts nothing */
    herd_test_capture_start(&capture);
    rc = ctx->module->launch(ctx->odls, &spec);
    text = herd_test_capture_stop(&capture);
    assert_int_equal(rc, HERD_ERR_NOT_FOUND);
    assert_contains(text, "\"herd-no-such-program\" was not found on node-test");
    free(text);
    assert_int_equal(ctx->module->num_alive(ctx->odls), 0);
    free(plain);
}

static void test_bad_working_directory(void **state)
{
    test_ctx_t *ctx = *state;
    char *argv[] = {"/bin/true", NULL};
    orte_odls_proc_spec_t spec = spec_for(argv, 0);
    herd_test_capture_t capture;
    char *text;
    int rc;

    /* absolute program, so the check does not depend on the folder; chdir fails in the child */
    spec.cwd = "/nonexistent/herd-odls-test";
    herd_test_capture_start(&capture);
    rc = ctx->module->launch(ctx->odls, &spec);
    text = herd_test_capture_stop(&capture);
    assert_int_equal(rc, HERD_ERR_IN_ERRNO);
    assert_contains(text, "working directory /nonexistent/herd-odls-test");
    assert_contains(text, strerror(ENOENT));
    free(text);
    assert_int_equal(ctx->module->num_alive(ctx->odls), 0);
}

static void test_kill_all_escalates(void **state)
{
    test_ctx_t *ctx = *state;
    char *argv[] = {"sh", "-c", "trap '' TERM; echo ready; exec sleep 30", NULL};
    orte_odls_proc_spec_t spec = spec_for(argv, 0);
    int out[2];
    char line[64];

    assert_int_equal(pipe2(out, O_CLOEXEC), 0);
    spec.stdout_fd = out[1];
    assert_int_equal(ctx->module->launch(ctx->odls, &spec), HERD_SUCCESS);
    close(out[1]);
    /* only once the trap is set does SIGTERM stop mattering */
    read_line(out[0], line, sizeof(line));
    assert_string_equal(line, "ready");
    close(out[0]);
    assert_int_equal(ctx->module->kill_all(ctx->odls, 200), HERD_SUCCESS);
    run_until(ctx, all_exited);
    assert_int_equal(ctx->reported[0], 1);
    assert_true(ctx->exits[0].signaled);
    assert_int_equal(ctx->exits[0].signo, SIGKILL);
    assert_int_equal(orte_odls_exit_status(&ctx->exits[0]), 128 + SIGKILL);
}

static bool two_reported(const test_ctx_t *ctx)
{
    return ctx->reported[0] + ctx->reported[1] >= 2;
}

/* One process signalled or killed (PMIx_Job_control): the others go on; a pid that is not one
 * of the instance's is refused. */
static void test_kill_and_signal_one(void **state)
{
    test_ctx_t *ctx = *state;
    char *argv[] = {"sh", "-c", "trap 'exit 7' USR1; echo ready; while :; do sleep 0.05; done",
                    NULL};
    pid_t pids[3] = {0, 0, 0};
    char line[64];

    for (uint32_t r = 0; r < 3; ++r) {
        orte_odls_proc_spec_t spec = spec_for(argv, r);
        int out[2];
        assert_int_equal(pipe2(out, O_CLOEXEC), 0);
        spec.stdout_fd = out[1];
        spec.pid = &pids[r];
        assert_int_equal(ctx->module->launch(ctx->odls, &spec), HERD_SUCCESS);
        close(out[1]);
        read_line(out[0], line, sizeof(line));
        close(out[0]);
    }
    assert_int_equal(ctx->module->signal_proc(ctx->odls, pids[0], SIGUSR1), HERD_SUCCESS);
    assert_int_equal(ctx->module->kill_proc(ctx->odls, pids[1], 0), HERD_SUCCESS);
    assert_int_equal(ctx->module->kill_proc(ctx->odls, getpid(), 0), HERD_ERR_NOT_FOUND);
    assert_int_equal(ctx->module->signal_proc(ctx->odls, pids[0], 0), HERD_ERR_BAD_PARAM);
    run_until(ctx, two_reported);
    assert_false(ctx->exits[0].signaled);
    assert_int_equal(ctx->exits[0].exit_code, 7);
    assert_true(ctx->exits[1].signaled);
    assert_int_equal(ctx->exits[1].signo, SIGKILL);
    assert_int_equal(ctx->reported[2], 0);
    assert_int_equal(ctx->module->num_alive(ctx->odls), 1);
    /* a terminate: SIGTERM first */
    assert_int_equal(ctx->module->kill_proc(ctx->odls, pids[2], 5000), HERD_SUCCESS);
    run_until(ctx, all_exited);
    assert_true(ctx->exits[2].signaled);
    assert_int_equal(ctx->exits[2].signo, SIGTERM);
    assert_int_equal(ctx->module->kill_proc(ctx->odls, pids[2], 0), HERD_ERR_NOT_FOUND);
}

static void test_kill_all_process_group(void **state)
{
    test_ctx_t *ctx = *state;
    char *argv[] = {"sh", "-c", "sleep 30 & echo $!; wait", NULL};
    orte_odls_proc_spec_t spec = spec_for(argv, 0);
    int out[2], status;
    char line[64];
    pid_t grandchild;

    assert_int_equal(pipe2(out, O_CLOEXEC), 0);
    spec.stdout_fd = out[1];
    assert_int_equal(ctx->module->launch(ctx->odls, &spec), HERD_SUCCESS);
    close(out[1]);
    read_line(out[0], line, sizeof(line));
    close(out[0]);
    grandchild = (pid_t) atoi(line);
    assert_true(grandchild > 0);
    assert_int_equal(kill(grandchild, 0), 0);

    assert_int_equal(ctx->module->kill_all(ctx->odls, ORTE_ODLS_KILL_GRACE_DEFAULT), HERD_SUCCESS);
    run_until(ctx, all_exited);
    assert_true(ctx->exits[0].signaled);
    assert_int_equal(ctx->exits[0].signo, SIGTERM);
    status = wait_orphan(grandchild);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGTERM);
}

static bool orphan_gone;
static pid_t orphan_pid;
static int orphan_status;

static bool orphan_collected(const test_ctx_t *ctx)
{
    if (!orphan_gone && waitpid(orphan_pid, &orphan_status, WNOHANG) == orphan_pid) {
        orphan_gone = true;
    }
    return orphan_gone && all_exited(ctx);
}

static void test_kill_all_outliving_member(void **state)
{
    test_ctx_t *ctx = *state;
    /* the leader dies of SIGTERM; a member that ignores it must still be killed */
    char *argv[] = {"sh", "-c", "(trap '' TERM; exec sleep 30) & sleep 0.2; echo $!; wait", NULL};
    orte_odls_proc_spec_t spec = spec_for(argv, 0);
    int out[2];
    char line[64];

    assert_int_equal(pipe2(out, O_CLOEXEC), 0);
    spec.stdout_fd = out[1];
    assert_int_equal(ctx->module->launch(ctx->odls, &spec), HERD_SUCCESS);
    close(out[1]);
    read_line(out[0], line, sizeof(line));
    close(out[0]);
    orphan_pid = (pid_t) atoi(line);
    orphan_gone = false;
    assert_true(orphan_pid > 0);

    assert_int_equal(ctx->module->kill_all(ctx->odls, 200), HERD_SUCCESS);
    run_until(ctx, orphan_collected);
    assert_int_equal(ctx->exits[0].signo, SIGTERM);
    assert_true(WIFSIGNALED(orphan_status));
    assert_int_equal(WTERMSIG(orphan_status), SIGKILL);
}

static void test_signal_forwarding(void **state)
{
    test_ctx_t *ctx = *state;
    char *argv[] = {"sleep", "30", NULL};

    launch_ok(ctx, argv, 0);
    assert_int_equal(ctx->module->signal(ctx->odls, 0), HERD_ERR_BAD_PARAM);
    assert_int_equal(ctx->module->signal(ctx->odls, SIGINT), HERD_SUCCESS);
    run_until(ctx, all_exited);
    assert_true(ctx->exits[0].signaled);
    assert_int_equal(ctx->exits[0].signo, SIGINT);
    assert_int_equal(orte_odls_exit_status(&ctx->exits[0]), 130);
}

static void test_usage(void **state)
{
    test_ctx_t *ctx = *state;
    /* a little CPU work so the numbers are not all zero by chance */
    char *argv[] = {"sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done", NULL};

    launch_ok(ctx, argv, 0);
    run_until(ctx, all_exited);
    assert_int_equal(ctx->exits[0].exit_code, 0);
    assert_true(ctx->exits[0].max_rss_kb > 0);
    assert_true(ctx->exits[0].wall_ns > 0);
    assert_true(ctx->exits[0].user_cpu.tv_sec > 0 || ctx->exits[0].user_cpu.tv_usec > 0 ||
                ctx->exits[0].sys_cpu.tv_sec > 0 || ctx->exits[0].sys_cpu.tv_usec > 0);
}

/* An exec that fails after the launch returned (here: a file that is executable but not a
 * program the kernel can run) is reported, and its exit comes with not_started. */
static void test_late_exec_failure(void **state)
{
    test_ctx_t *ctx = *state;
    char path[] = "/tmp/herd-odls-badexec-XXXXXX";
    int fd = mkstemp(path);
    herd_test_capture_t capture;
    char *text;

    assert_true(fd >= 0);
    /* no #! and no ELF header: execve fails with ENOEXEC */
    assert_int_equal(write(fd, "\x01\x02\x03\x04", 4), 4);
    close(fd);
    chmod(path, 0700);
    char *argv[] = {path, NULL};
    herd_test_capture_start(&capture);
    launch_ok(ctx, argv, 0);
    run_until(ctx, all_exited);
    text = herd_test_capture_stop(&capture);
    unlink(path);
    assert_true(ctx->exits[0].not_started);
    assert_contains(text, "Rank 0");
    free(text);
}

static void test_many_processes(void **state)
{
    test_ctx_t *ctx = *state;
    char *argv[] = {"/bin/true", NULL};
    const int count = 200;

    for (int rank = 0; rank < count; ++rank) {
        launch_ok(ctx, argv, (uint32_t) rank);
    }
    run_until(ctx, all_exited);
    for (int rank = 0; rank < count; ++rank) {
        assert_int_equal(ctx->reported[rank], 1);
        assert_int_equal(ctx->exits[rank].exit_code, 0);
    }
    assert_true(ctx->all_exited_calls >= 1);
    assert_int_equal(ctx->alive_at_all_exited, 0);
}

static void test_two_instances(void **state)
{
    test_ctx_t *ctx = *state;
    test_ctx_t *other = calloc(1, sizeof(*other));
    orte_odls_callbacks_t callbacks = {
        .proc_exited = on_proc_exited, .all_exited = on_all_exited, .cbdata = other};
    char *argv[] = {"/bin/true", NULL};
    char *argv_sleep[] = {"sleep", "30", NULL};

    assert_non_null(other);
    other->module = ctx->module;
    assert_int_equal(ctx->module->create(ctx->base, &callbacks, &other->odls), HERD_SUCCESS);
    /* the same ranks in both: each instance reports only its own processes */
    for (uint32_t rank = 0; rank < 10; ++rank) {
        launch_ok(ctx, argv, rank);
        launch_ok(other, argv, rank);
    }
    launch_ok(other, argv_sleep, 20);
    run_until(ctx, all_exited);
    while (other->module->num_alive(other->odls) > 1) {
        opal_event_base_loop(ctx->base, true);
    }
    for (uint32_t rank = 0; rank < 10; ++rank) {
        assert_int_equal(ctx->reported[rank], 1);
        assert_int_equal(other->reported[rank], 1);
    }
    assert_int_equal(ctx->reported[20], 0);
    /* destroy kills what is left, without callbacks */
    ctx->module->destroy(other->odls);
    assert_int_equal(other->reported[20], 0);
    free(other);
}

static void test_destroy_kills(void **state)
{
    test_ctx_t *ctx = *state;
    char *argv[] = {"sh", "-c", "echo $$; exec sleep 30", NULL};
    orte_odls_proc_spec_t spec = spec_for(argv, 0);
    int out[2];
    char line[64];
    pid_t pid;

    assert_int_equal(pipe2(out, O_CLOEXEC), 0);
    spec.stdout_fd = out[1];
    assert_int_equal(ctx->module->launch(ctx->odls, &spec), HERD_SUCCESS);
    close(out[1]);
    read_line(out[0], line, sizeof(line));
    close(out[0]);
    pid = (pid_t) atoi(line);
    assert_true(pid > 0);
    assert_int_equal(ctx->module->num_alive(ctx->odls), 1);
    ctx->module->destroy(ctx->odls);
    /* reaped by destroy: the pid no longer exists */
    assert_int_equal(kill(pid, 0), -1);
    assert_int_equal(errno, ESRCH);
    assert_int_equal(ctx->reported[0], 0);
    /* a fresh instance for teardown */
    orte_odls_callbacks_t callbacks = {.proc_exited = on_proc_exited, .cbdata = ctx};
    assert_int_equal(ctx->module->create(ctx->base, &callbacks, &ctx->odls), HERD_SUCCESS);
}

static void test_bad_arguments(void **state)
{
    test_ctx_t *ctx = *state;
    orte_odls_callbacks_t no_callback = {0};
    orte_odls_t *odls = NULL;
    char *argv_empty[] = {NULL};
    orte_odls_proc_spec_t spec = spec_for(argv_empty, 0);
    char text[8];
    orte_odls_exit_t info = {.exit_code = 123};

    assert_int_equal(ctx->module->create(ctx->base, &no_callback, &odls), HERD_ERR_BAD_PARAM);
    assert_null(odls);
    assert_int_equal(ctx->module->launch(ctx->odls, &spec), HERD_ERR_BAD_PARAM);
    assert_int_equal(ctx->module->launch(ctx->odls, NULL), HERD_ERR_BAD_PARAM);
    ctx->module->destroy(NULL);
    /* a short buffer still ends in a terminator */
    assert_string_equal(orte_odls_exit_describe(&info, text, sizeof(text)), "exited ");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_selection, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exit_codes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_by_signal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_environment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_working_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_binding, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_binding, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_inherited_fds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extra_fds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stdio, setup, teardown),
        cmocka_unit_test_setup_teardown(test_signal_dispositions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_program, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_working_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kill_all_escalates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kill_all_process_group, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kill_all_outliving_member, setup, teardown),
        cmocka_unit_test_setup_teardown(test_signal_forwarding, setup, teardown),
        cmocka_unit_test_setup_teardown(test_usage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_late_exec_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_processes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_instances, setup, teardown),
        cmocka_unit_test_setup_teardown(test_destroy_kills, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kill_and_signal_one, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_arguments, setup, teardown),
    };
    struct rlimit no_core = {.rlim_cur = 0, .rlim_max = RLIM_INFINITY};
    char template[] = "/tmp/herd-odls-test-XXXXXX";
    char command[PATH_MAX + 16];
    int failed;

    /* orphans come to us, so a test can see that a grandchild was killed */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    getrlimit(RLIMIT_CORE, &no_core);
    no_core.rlim_cur = 0;
    setrlimit(RLIMIT_CORE, &no_core);
    if (NULL == mkdtemp(template)) {
        return 1;
    }
    snprintf(scratch_dir, sizeof(scratch_dir), "%s", template);
    if (0 != chdir(scratch_dir)) {
        return 1;
    }
    /* every case with processes started without waiting for their exec (the default; under
     * valgrind, which follows no clone that shares memory without CLONE_VFORK, odls waits
     * anyway), and again waiting for each (odls_default_wait_exec, the only way on other
     * CPUs) */
    failed = cmocka_run_group_tests_name("not waiting for the exec", tests, NULL, NULL);
    setenv("HERD_MCA_odls_default_wait_exec", "1", 1);
    /* in a scratch folder of its own: the cases make fixed names in it */
    snprintf(scratch_dir, sizeof(scratch_dir), "%s/again", template);
    if (0 != mkdir(scratch_dir, 0700) || 0 != chdir(scratch_dir)) {
        return 1;
    }
    failed += cmocka_run_group_tests_name("waiting for each exec", tests, NULL, NULL);
    snprintf(scratch_dir, sizeof(scratch_dir), "%s", template);
    unsetenv("HERD_MCA_odls_default_wait_exec");
    if (0 != chdir("/")) {
        return 1;
    }
    snprintf(command, sizeof(command), "rm -rf '%s'", scratch_dir);
    if (0 != system(command)) {
        return 1;
    }
    return failed;
}
