/* SPDX-License-Identifier: BSD-3-Clause */
/* The floor and the stopwatch of contrib/bench/launch.sh: start N copies of a program with
 * fork+execve and wait for all of them (the least any launcher does), or time a whole command.
 *
 *   forkloop N [PROGRAM [ARGS...]]
 *       start N copies of PROGRAM (a path; default /bin/true), all of them first, then wait for
 *       all. Prints nothing; exits 0 when every copy exited 0.
 *   forkloop --time [--reps R] [--warmup W] [--timeout S] [--log FILE] -- COMMAND [ARGS...]
 *       run COMMAND W times untimed (default 1), then R times (default 10), each timed on
 *       CLOCK_MONOTONIC from fork to reaping, and print "BEST_MS MEDIAN_MS". COMMAND gets
 *       /dev/null as stdin, and FILE (rewritten on every run) or /dev/null as stdout and stderr.
 *       The first run that exits non-zero, dies of a signal or outlives S seconds (default 60;
 *       then its process group is killed) stops the measurement: forkloop says which on stderr,
 *       leaves that run's output in FILE and exits 1.
 *
 * Built by launch.sh with plain cc; not part of the herd build. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define FORKLOOP_DEFAULT_PROGRAM "/bin/true"
#define FORKLOOP_DEFAULT_REPS    10
#define FORKLOOP_DEFAULT_WARMUP  1
#define FORKLOOP_DEFAULT_TIMEOUT 60

typedef struct {
    long reps;
    long warmup;
    long timeout_s;
    const char *log_path; /* NULL: /dev/null */
    char **command;       /* NULL-terminated */
} forkloop_timer_t;

/* The process group of the timed run, for the signal handlers: a run that outlives its timeout,
 * or a Ctrl-C on the benchmark, must not leave a launcher (and its children) behind. */
static volatile sig_atomic_t forkloop_running_pgid = 0;
static volatile sig_atomic_t forkloop_timed_out = 0;

static void forkloop_on_alarm(int signo)
{
    (void) signo;
    if (0 != forkloop_running_pgid) {
        forkloop_timed_out = 1;
        kill(-(pid_t) forkloop_running_pgid, SIGKILL);
    }
}

static void forkloop_on_interrupt(int signo)
{
    if (0 != forkloop_running_pgid) {
        kill(-(pid_t) forkloop_running_pgid, SIGKILL);
    }
    _exit(128 + signo);
}

static int forkloop_usage(void)
{
    fprintf(stderr, "usage: forkloop N [PROGRAM [ARGS...]]\n"
                    "       forkloop --time [--reps R] [--warmup W] [--timeout S] [--log FILE] "
                    "-- COMMAND [ARGS...]\n");
    return 2;
}

/* A whole positive number, or -1. */
static long forkloop_parse_count(const char *text)
{
    char *end = NULL;
    long value;

    errno = 0;
    value = strtol(text, &end, 10);
    if (0 != errno || end == text || '\0' != *end || value < 1) {
        return -1;
    }
    return value;
}

static int forkloop_run_copies(long copies, char **argv)
{
    int failed = 0;
    long started;

    for (started = 0; started < copies; ++started) {
        pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, "forkloop: fork of copy %ld of %ld failed: %s\n", started + 1, copies,
                    strerror(errno));
            failed = 1;
            break;
        }
        if (0 == pid) {
            execve(argv[0], argv, environ);
            fprintf(stderr, "forkloop: cannot run %s: %s\n", argv[0], strerror(errno));
            _exit(127);
        }
    }
    /* every copy started before the first wait, as a launcher does */
    for (; started > 0; --started) {
        int status;
        if (wait(&status) < 0) {
            fprintf(stderr, "forkloop: wait failed: %s\n", strerror(errno));
            return 1;
        }
        if (!WIFEXITED(status) || 0 != WEXITSTATUS(status)) {
            failed = 1;
        }
    }
    return failed;
}

static double forkloop_elapsed_ms(const struct timespec *start, const struct timespec *end)
{
    return (double) (end->tv_sec - start->tv_sec) * 1e3 +
           (double) (end->tv_nsec - start->tv_nsec) / 1e6;
}

/* Run the command once; its wall time in *elapsed_ms, and *left_behind set when it left
 * processes in its group (they are killed). 0, or 1 after saying on stderr why the run failed. */
static int forkloop_time_once(const forkloop_timer_t *timer, double *elapsed_ms, int *left_behind)
{
    const char *out_path = NULL != timer->log_path ? timer->log_path : "/dev/null";
    struct itimerval alarm_at = {.it_value = {.tv_sec = timer->timeout_s}};
    struct itimerval no_alarm = {{0, 0}, {0, 0}};
    struct timespec start;
    struct timespec end;
    int status;
    pid_t pid;

    forkloop_timed_out = 0;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pid = fork();
    if (pid < 0) {
        fprintf(stderr, "forkloop: fork failed: %s\n", strerror(errno));
        return 1;
    }
    if (0 == pid) {
        int in_fd = open("/dev/null", O_RDONLY);
        int out_fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in_fd < 0 || out_fd < 0) {
            fprintf(stderr, "forkloop: cannot open %s: %s\n", in_fd < 0 ? "/dev/null" : out_path,
                    strerror(errno));
            _exit(127);
        }
        setpgid(0, 0);
        dup2(in_fd, STDIN_FILENO);
        dup2(out_fd, STDOUT_FILENO);
        dup2(out_fd, STDERR_FILENO);
        close(in_fd);
        close(out_fd);
        execvp(timer->command[0], timer->command);
        fprintf(stderr, "forkloop: cannot run %s: %s\n", timer->command[0], strerror(errno));
        _exit(127);
    }
    /* set here too: the timeout must find the group even if the child has not run yet */
    setpgid(pid, pid);
    forkloop_running_pgid = pid;
    setitimer(ITIMER_REAL, &alarm_at, NULL);
    while (waitpid(pid, &status, 0) < 0) {
        if (EINTR != errno) {
            fprintf(stderr, "forkloop: waitpid failed: %s\n", strerror(errno));
            return 1;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    setitimer(ITIMER_REAL, &no_alarm, NULL);
    forkloop_running_pgid = 0;
    /* the launcher is gone: anything left in its group is a leftover, to report and end */
    if (!forkloop_timed_out && 0 == kill(-pid, 0)) {
        *left_behind = 1;
        kill(-pid, SIGKILL);
    }
    if (forkloop_timed_out) {
        fprintf(stderr, "forkloop: %s did not finish within %ld s (killed)\n", timer->command[0],
                timer->timeout_s);
        return 1;
    }
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "forkloop: %s died of signal %d\n", timer->command[0], WTERMSIG(status));
        return 1;
    }
    if (0 != WEXITSTATUS(status)) {
        fprintf(stderr, "forkloop: %s exited with status %d\n", timer->command[0],
                WEXITSTATUS(status));
        return 1;
    }
    *elapsed_ms = forkloop_elapsed_ms(&start, &end);
    return 0;
}

static int forkloop_compare_doubles(const void *a, const void *b)
{
    double x = *(const double *) a;
    double y = *(const double *) b;
    return (x > y) - (x < y);
}

static int forkloop_time(const forkloop_timer_t *timer)
{
    struct sigaction on_alarm = {.sa_handler = forkloop_on_alarm};
    struct sigaction on_interrupt = {.sa_handler = forkloop_on_interrupt};
    double *samples = calloc((size_t) timer->reps, sizeof(*samples));
    double ignored;
    double median;
    long runs_left_behind = 0;
    long i;

    if (NULL == samples) {
        fprintf(stderr, "forkloop: out of memory for %ld samples\n", timer->reps);
        return 1;
    }
    /* no SA_RESTART: the alarm must interrupt waitpid() */
    sigemptyset(&on_alarm.sa_mask);
    sigaction(SIGALRM, &on_alarm, NULL);
    sigemptyset(&on_interrupt.sa_mask);
    sigaction(SIGINT, &on_interrupt, NULL);
    sigaction(SIGTERM, &on_interrupt, NULL);
    sigaction(SIGHUP, &on_interrupt, NULL);
    for (i = 0; i < timer->warmup + timer->reps; ++i) {
        int left_behind = 0;
        if (0 != forkloop_time_once(timer,
                                    i < timer->warmup ? &ignored : &samples[i - timer->warmup],
                                    &left_behind)) {
            goto err_run;
        }
        runs_left_behind += left_behind;
    }
    if (runs_left_behind > 0) {
        fprintf(stderr, "forkloop: %ld of %ld runs of %s left processes behind (killed)\n",
                runs_left_behind, timer->warmup + timer->reps, timer->command[0]);
    }
    qsort(samples, (size_t) timer->reps, sizeof(*samples), forkloop_compare_doubles);
    median = 0 == timer->reps % 2 ? (samples[timer->reps / 2 - 1] + samples[timer->reps / 2]) / 2
                                  : samples[timer->reps / 2];
    printf("%.3f %.3f\n", samples[0], median);
    free(samples);
    return 0;
err_run:
    free(samples);
    return 1;
}

int main(int argc, char **argv)
{
    forkloop_timer_t timer = {.reps = FORKLOOP_DEFAULT_REPS,
                              .warmup = FORKLOOP_DEFAULT_WARMUP,
                              .timeout_s = FORKLOOP_DEFAULT_TIMEOUT};
    char *default_argv[] = {FORKLOOP_DEFAULT_PROGRAM, NULL};
    long copies;
    int i;

    if (argc < 2) {
        return forkloop_usage();
    }
    if (0 != strcmp(argv[1], "--time")) {
        copies = forkloop_parse_count(argv[1]);
        if (copies < 1) {
            fprintf(stderr, "forkloop: N must be a whole number above 0, not '%s'\n", argv[1]);
            return forkloop_usage();
        }
        return forkloop_run_copies(copies, argc > 2 ? &argv[2] : default_argv);
    }
    for (i = 2; i < argc && 0 != strcmp(argv[i], "--"); i += 2) {
        long *count = 0 == strcmp(argv[i], "--reps")      ? &timer.reps
                      : 0 == strcmp(argv[i], "--warmup")  ? &timer.warmup
                      : 0 == strcmp(argv[i], "--timeout") ? &timer.timeout_s
                                                          : NULL;
        if (i + 1 >= argc) {
            fprintf(stderr, "forkloop: %s needs a value\n", argv[i]);
            return forkloop_usage();
        }
        if (0 == strcmp(argv[i], "--log")) {
            timer.log_path = argv[i + 1];
            continue;
        }
        if (NULL == count) {
            fprintf(stderr, "forkloop: unknown option '%s'\n", argv[i]);
            return forkloop_usage();
        }
        /* --warmup 0 is allowed, the rest must be above 0 */
        *count = 0 == strcmp(argv[i + 1], "0") && count == &timer.warmup
                     ? 0
                     : forkloop_parse_count(argv[i + 1]);
        if (*count < 0) {
            fprintf(stderr, "forkloop: %s takes a whole number above 0, not '%s'\n", argv[i],
                    argv[i + 1]);
            return forkloop_usage();
        }
    }
    if (i + 1 >= argc) {
        fprintf(stderr, "forkloop: --time needs '--' and a command\n");
        return forkloop_usage();
    }
    timer.command = &argv[i + 1];
    return forkloop_time(&timer);
}
