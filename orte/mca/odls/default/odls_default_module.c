/* SPDX-License-Identifier: BSD-3-Clause */
/* The default odls module: clone/exec with a process group per process, binding applied in the
 * child before exec, exit statuses and usage collected with wait4 when SIGCHLD arrives, and
 * kill_all escalating from SIGTERM to SIGKILL. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "opal/util/output.h"
#include "opal/util/show_help.h"
#include "orte/mca/odls/base/base.h"
#include "orte/mca/odls/default/odls_default.h"
#include "orte/mca/odls/odls.h"

#define ODLS_DEFAULT_HELP_FILE "help-odls-default.txt"
/* CPU numbers above this are certainly a corrupt binding, not a real machine */
#define ODLS_DEFAULT_MAX_CPU       (1u << 20)
#define ODLS_DEFAULT_NUM_HERD_VARS 7
/* the child's stack between clone and exec (it calls a few system calls, nothing deep) */
#define ODLS_DEFAULT_CHILD_STACK (64 * 1024)
/* How long one reading of the daemon's signal dispositions serves the processes it starts
 * (odls_default_scan_signals) */
#define ODLS_DEFAULT_SIGNAL_SCAN_NS 1000000L
/* signals 1 to 64 */
#define ODLS_DEFAULT_MAX_SIGNALS 64
#ifndef SYS_close_range
#define SYS_close_range 436 /* the same number on every architecture */
#endif

typedef struct {
    pid_t pid;
    uint32_t rank; /* in messages */
    uint32_t id;   /* in proc_exited */
    struct timespec start;
    /* Until the exec is known to have happened: the child's report pipe (closed by a successful
     * exec, or carrying why it failed) and what a late failure message names. */
    int report_fd;
    bool not_started; /* its exec failed (reported): it never ran */
    char *late;       /* "program\0node\0cwd\0cpuset\0", for that message; NULL once known */
    /* A child started without waiting for its exec: its stack and its copy of the plan, which
     * it reads in our memory until it has exec'd or exited (then freed); else NULL. */
    char *child_mem;
} odls_default_proc_t;

/* What the child may fail at before exec, reported to the parent through a pipe. */
typedef enum {
    ODLS_CHILD_STDIO = 1,
    ODLS_CHILD_CHDIR,
    ODLS_CHILD_BIND,
    ODLS_CHILD_EXEC,
} odls_child_stage_t;

typedef struct {
    int stage;
    int error;
} odls_child_failure_t;

/* Everything the child needs, prepared before clone: between clone and exec only
 * async-signal-safe calls are allowed (no malloc, no locks). */
typedef struct {
    const char *program;
    char *const *argv;
    char **env;
    const char *cwd;
    cpu_set_t *cpus;
    size_t cpus_size;
    int stdio[3];
    const int *extra_fds; /* become 3, 4, ... */
    int num_extra_fds;
    int report_fd;
    pid_t parent; /* the launcher, for the child to check it is still there */
    int max_fd;
    const int *reset_signals; /* caught or ignored in the daemon: set back to SIG_DFL */
    int num_reset_signals;
    bool stop_on_exec; /* traced by us until its exec stops it; then left stopped (reap) */
} odls_child_plan_t;

/* A plan the caller's memory may no longer hold when the child reads it: one allocation with
 * the child's stack first, then copies of every string and array (the child runs while the
 * daemon goes on, and reads them until it has exec'd). */
typedef struct odls_default_copy {
    odls_child_plan_t plan; /* pointing into the rest of the allocation */
    int extra_fds[ORTE_ODLS_MAX_EXTRA_FDS];
    int reset_signals[ODLS_DEFAULT_MAX_SIGNALS];
} odls_default_copy_t;

struct orte_odls {
    opal_event_base_t *base;
    orte_odls_callbacks_t callbacks;
    orte_odls_base_sigchld_t *sigchld;
    odls_default_proc_t *procs; /* live (not yet reported) processes */
    size_t num_procs;
    size_t max_procs;
    /* Process groups sent SIGTERM by kill_all and not yet SIGKILLed: kept after their leader
     * exits, because a member that ignores SIGTERM may outlive it. */
    pid_t *doomed_groups;
    size_t num_doomed;
    size_t max_doomed;
    opal_event_t *kill_timer;
    bool kill_timer_armed;
    bool told_simulated;
    /* ODLS_DEFAULT_CHILD_STACK bytes for each child until its exec, when the caller waits for
     * it (odls_default_wait_exec, or no way to start one without waiting) */
    char *child_stack;
    bool wait_exec;
    /* The signals whose disposition here is not SIG_DFL, as last read, and when */
    int reset_signals[ODLS_DEFAULT_MAX_SIGNALS];
    int num_reset_signals;
    bool signals_scanned;
    struct timespec signals_scanned_at;
};

/* ------------------------------------------------------------------------------------------ */
/* the child, between clone and exec */

/* The child shares the daemon's memory until its exec, and unless the daemon waits for that
 * (CLONE_VFORK) the daemon's thread runs meanwhile. So the child writes nothing of the daemon's,
 * not even errno: libc's wrappers would set the errno of the thread that cloned it (the child
 * inherits its thread pointer), under that thread's feet. It calls the kernel directly and gets
 * -errno back. Where this file has no such call, the caller waits for every exec. */
#if defined(__x86_64__)
#define ODLS_DEFAULT_ASYNC_CLONE 1
static inline long odls_child_sys(long nr, long a, long b, long c, long d)
{
    long ret;
    register long r10 __asm__("r10") = d;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
                     : "rcx", "r11", "memory");
    return ret;
}
#elif defined(__aarch64__)
#define ODLS_DEFAULT_ASYNC_CLONE 1
static inline long odls_child_sys(long nr, long a, long b, long c, long d)
{
    register long x8 __asm__("x8") = nr;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
    return x0;
}
#else
#define ODLS_DEFAULT_ASYNC_CLONE 0
static long odls_child_sys(long nr, long a, long b, long c, long d)
{
    long ret = syscall(nr, a, b, c, d);
    return ret < 0 ? -errno : ret;
}
#endif

#if ODLS_DEFAULT_ASYNC_CLONE
/* the kernel's sigaction on both, all zero: SIG_DFL, no flags, no restorer, nothing masked */
static const unsigned long odls_child_default_action[4];
/* the kernel's signal set on both (64 signals), empty */
static const unsigned long odls_child_no_signals;

static void odls_child_default_signal(int signo)
{
    odls_child_sys(SYS_rt_sigaction, signo, (long) odls_child_default_action, 0,
                   sizeof(odls_child_no_signals));
}

static void odls_child_unblock_signals(void)
{
    odls_child_sys(SYS_rt_sigprocmask, SIG_SETMASK, (long) &odls_child_no_signals, 0,
                   sizeof(odls_child_no_signals));
}
#else
/* the caller waits for the exec here: libc, which knows this CPU's kernel structures, may set
 * the caller's errno */
static void odls_child_default_signal(int signo)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(signo, &dfl, NULL);
}

static void odls_child_unblock_signals(void)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}
#endif

static void __attribute__((noreturn)) odls_child_exit(int code)
{
    for (;;) {
        odls_child_sys(SYS_exit_group, code, 0, 0, 0);
    }
}

static void __attribute__((noreturn)) odls_default_child_fail(int report_fd, int stage, long error)
{
    odls_child_failure_t failure;

    failure.stage = stage;
    failure.error = (int) -error;
    odls_child_sys(SYS_write, report_fd, (long) &failure, sizeof(failure), 0);
    odls_child_exit(127);
}

/* Close every fd from first to last. */
static void odls_default_close_range(unsigned int first, unsigned int last, int max_fd)
{
    if (first > last) {
        return;
    }
    if (0 != odls_child_sys(SYS_close_range, first, last, 0, 0)) {
        /* an old kernel: close one by one up to the limit the parent read */
        for (unsigned int fd = first; fd <= last && fd < (unsigned int) max_fd; ++fd) {
            odls_child_sys(SYS_close, fd, 0, 0, 0);
        }
    }
}

static void __attribute__((noreturn)) odls_default_child(const odls_child_plan_t *plan)
{
    long report_fd;
    long moved[3];
    long rc;

    /* its own process group, so kill_all reaches whatever it starts */
    odls_child_sys(SYS_setpgid, 0, 0, 0, 0);
    /* a launcher killed with -9 cannot kill it: the kernel does (the parent's pid is passed in,
     * as the parent may already be gone by now) */
    odls_child_sys(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0);
    if (odls_child_sys(SYS_getppid, 0, 0, 0, 0) != plan->parent) {
        odls_child_exit(127);
    }
    /* The application starts with default dispositions, whatever the daemon ignores or catches
     * (SIGPIPE, SIGCHLD, SIGTERM); and no handler of the daemon's may run here once the mask is
     * cleared below (these are the child's own: it does not share the daemon's handlers). Only
     * those the daemon had changed: the others are SIG_DFL already, and 64 calls were a fifth
     * of the child's time before its exec. */
    for (int i = 0; i < plan->num_reset_signals; ++i) {
        odls_child_default_signal(plan->reset_signals[i]);
    }

    /* Move everything above where it goes first: a caller's fd may itself be 0, 1 or 2 (a
     * daemon started with stdin closed) or 3.. (an extra one), and dup2 in place would clobber
     * it. */
    int first_free = 3 + plan->num_extra_fds;
    long extra[ORTE_ODLS_MAX_EXTRA_FDS];
    report_fd = odls_child_sys(SYS_fcntl, plan->report_fd, F_DUPFD_CLOEXEC, first_free, 0);
    if (report_fd < 0) {
        odls_child_exit(127);
    }
    for (int i = 0; i < 3; ++i) {
        moved[i] = odls_child_sys(SYS_fcntl, plan->stdio[i], F_DUPFD, first_free, 0);
        if (moved[i] < 0) {
            odls_default_child_fail(report_fd, ODLS_CHILD_STDIO, moved[i]);
        }
    }
    for (int i = 0; i < plan->num_extra_fds; ++i) {
        extra[i] = odls_child_sys(SYS_fcntl, plan->extra_fds[i], F_DUPFD, first_free, 0);
        if (extra[i] < 0) {
            odls_default_child_fail(report_fd, ODLS_CHILD_STDIO, extra[i]);
        }
    }
    /* dup3 (every architecture has it) never sees the same fd twice here: the copies are above */
    for (int i = 0; i < 3; ++i) {
        if ((rc = odls_child_sys(SYS_dup3, moved[i], i, 0, 0)) < 0) {
            odls_default_child_fail(report_fd, ODLS_CHILD_STDIO, rc);
        }
    }
    for (int i = 0; i < plan->num_extra_fds; ++i) {
        /* the copy is inheritable (no O_CLOEXEC) */
        if ((rc = odls_child_sys(SYS_dup3, extra[i], 3 + i, 0, 0)) < 0) {
            odls_default_child_fail(report_fd, ODLS_CHILD_STDIO, rc);
        }
    }
    /* nothing else of the daemon's (sockets, other jobs' pipes) reaches the application; the
     * report pipe is close-on-exec */
    odls_default_close_range((unsigned int) first_free, (unsigned int) report_fd - 1, plan->max_fd);
    odls_default_close_range((unsigned int) report_fd + 1, ~0u, plan->max_fd);

    if (NULL != plan->cwd && (rc = odls_child_sys(SYS_chdir, (long) plan->cwd, 0, 0, 0)) < 0) {
        odls_default_child_fail(report_fd, ODLS_CHILD_CHDIR, rc);
    }
    if (NULL != plan->cpus &&
        (rc = odls_child_sys(SYS_sched_setaffinity, 0, (long) plan->cpus_size, (long) plan->cpus,
                             0)) < 0) {
        odls_default_child_fail(report_fd, ODLS_CHILD_BIND, rc);
    }
    if (plan->stop_on_exec) {
        /* the exec then stops it with SIGTRAP, before any of the program runs: the reap turns
         * that into a plain stop a debugger can attach to */
        odls_child_sys(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0);
    }
    odls_child_unblock_signals();
    rc = odls_child_sys(SYS_execve, (long) plan->program, (long) plan->argv, (long) plan->env, 0);
    odls_default_child_fail(report_fd, ODLS_CHILD_EXEC, rc);
}

/* clone's entry: the child never returns */
static int odls_default_child_start(void *plan)
{
    odls_default_child(plan);
}

/* ------------------------------------------------------------------------------------------ */
/* preparing a launch */

/* Parses a CPU list ("0-3,8") strictly into a cpu_set_t sized for its highest CPU. */
static int odls_default_parse_cpuset(const char *text, cpu_set_t **cpus, size_t *size)
{
    unsigned long highest = 0;
    const char *p = text;
    cpu_set_t *set;
    size_t set_size;

    /* first pass: validate and find the highest CPU */
    while (true) {
        char *end;
        unsigned long first, last;
        if (*p < '0' || *p > '9') {
            return HERD_ERR_BAD_PARAM;
        }
        first = strtoul(p, &end, 10);
        last = first;
        p = end;
        if ('-' == *p) {
            ++p;
            if (*p < '0' || *p > '9') {
                return HERD_ERR_BAD_PARAM;
            }
            last = strtoul(p, &end, 10);
            p = end;
        }
        if (last < first || last >= ODLS_DEFAULT_MAX_CPU) {
            return HERD_ERR_BAD_PARAM;
        }
        if (last > highest) {
            highest = last;
        }
        if ('\0' == *p) {
            break;
        }
        if (',' != *p) {
            return HERD_ERR_BAD_PARAM;
        }
        ++p;
    }

    set = CPU_ALLOC(highest + 1);
    if (NULL == set) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    set_size = CPU_ALLOC_SIZE(highest + 1);
    CPU_ZERO_S(set_size, set);
    for (p = text; '\0' != *p;) {
        char *end;
        unsigned long first = strtoul(p, &end, 10);
        unsigned long last = first;
        p = end;
        if ('-' == *p) {
            last = strtoul(p + 1, &end, 10);
            p = end;
        }
        for (unsigned long cpu = first; cpu <= last; ++cpu) {
            CPU_SET_S(cpu, set_size, set);
        }
        if (',' == *p) {
            ++p;
        }
    }
    *cpus = set;
    *size = set_size;
    return HERD_SUCCESS;
}

static bool odls_default_is_herd_var(const char *entry)
{
    static const char *const names[ODLS_DEFAULT_NUM_HERD_VARS] = {
        "HERD_RANK=",      "HERD_SIZE=",  "HERD_LOCAL_RANK=", "HERD_LOCAL_SIZE=",
        "HERD_NODE_RANK=", "HERD_JOBID=", "HERD_APPNUM=",
    };

    for (int i = 0; i < ODLS_DEFAULT_NUM_HERD_VARS; ++i) {
        if (0 == strncmp(entry, names[i], strlen(names[i]))) {
            return true;
        }
    }
    return false;
}

/* The caller's environment with this process's numbers, in one allocation (free once). Values
 * the caller set for these names are replaced: the numbers come from the spec. */
static char **odls_default_environment(const orte_odls_proc_spec_t *spec)
{
    enum { VAR_LEN = 32 };
    size_t count = 0, n = 0;
    char **env;
    char *vars;

    while (NULL != spec->env && NULL != spec->env[count]) {
        ++count;
    }
    env = malloc((count + ODLS_DEFAULT_NUM_HERD_VARS + 1) * sizeof(*env) +
                 ODLS_DEFAULT_NUM_HERD_VARS * VAR_LEN);
    if (NULL == env) {
        return NULL;
    }
    vars = (char *) (env + count + ODLS_DEFAULT_NUM_HERD_VARS + 1);
    for (size_t i = 0; i < count; ++i) {
        if (!odls_default_is_herd_var(spec->env[i])) {
            env[n++] = spec->env[i];
        }
    }
    snprintf(vars + 0 * VAR_LEN, VAR_LEN, "HERD_RANK=%u", spec->rank);
    snprintf(vars + 1 * VAR_LEN, VAR_LEN, "HERD_SIZE=%u", spec->size);
    snprintf(vars + 2 * VAR_LEN, VAR_LEN, "HERD_LOCAL_RANK=%u", spec->local_rank);
    snprintf(vars + 3 * VAR_LEN, VAR_LEN, "HERD_LOCAL_SIZE=%u", spec->local_size);
    snprintf(vars + 4 * VAR_LEN, VAR_LEN, "HERD_NODE_RANK=%u", spec->node_rank);
    snprintf(vars + 5 * VAR_LEN, VAR_LEN, "HERD_JOBID=%u", spec->jobid);
    snprintf(vars + 6 * VAR_LEN, VAR_LEN, "HERD_APPNUM=%u", spec->appnum);
    for (int i = 0; i < ODLS_DEFAULT_NUM_HERD_VARS; ++i) {
        env[n++] = vars + i * VAR_LEN;
    }
    env[n] = NULL;
    return env;
}

static int odls_default_reserve(orte_odls_t *odls)
{
    if (odls->num_procs == odls->max_procs) {
        size_t max = (0 == odls->max_procs) ? 16 : 2 * odls->max_procs;
        odls_default_proc_t *procs = realloc(odls->procs, max * sizeof(*procs));
        if (NULL == procs) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        odls->procs = procs;
        odls->max_procs = max;
    }
    return HERD_SUCCESS;
}

static void odls_default_report_failure(uint32_t rank, const char *node, const char *program,
                                        const char *cwd, const char *cpuset,
                                        const odls_child_failure_t *failure)
{
    const char *reason = strerror(failure->error);

    switch (failure->stage) {
    case ODLS_CHILD_STDIO:
        opal_show_help(ODLS_DEFAULT_HELP_FILE, "stdio-failed", true, rank, node, program, reason);
        break;
    case ODLS_CHILD_CHDIR:
        opal_show_help(ODLS_DEFAULT_HELP_FILE, "chdir-failed", true, rank, node, program, cwd,
                       reason);
        break;
    case ODLS_CHILD_BIND:
        opal_show_help(ODLS_DEFAULT_HELP_FILE, "bind-failed", true, rank, node, program, cpuset,
                       reason);
        break;
    default:
        opal_show_help(ODLS_DEFAULT_HELP_FILE, "exec-failed", true, rank, node, program, reason);
        break;
    }
}

/* Read what a child's report pipe says, without waiting: false while the child has not
 * exec'd yet. Once it has (or failed, which is reported here), the pipe is closed. */
static bool odls_default_check_report(odls_default_proc_t *proc, bool wait)
{
    odls_child_failure_t failure;
    ssize_t got;

    if (proc->report_fd < 0) {
        return true;
    }
    if (wait) {
        fcntl(proc->report_fd, F_SETFL, 0);
    }
    do {
        got = read(proc->report_fd, &failure, sizeof(failure));
    } while (got < 0 && EINTR == errno);
    if (got < 0 && EAGAIN == errno) {
        return false;
    }
    if (0 == got) {
        /* exec'd: it no longer runs in our memory (the pipe closes after the switch) */
        free(proc->child_mem);
        proc->child_mem = NULL;
    }
    if (got > 0) {
        const char *program = proc->late;
        const char *node = program + strlen(program) + 1;
        const char *cwd = node + strlen(node) + 1;
        const char *cpuset = cwd + strlen(cwd) + 1;
        if ((size_t) got < sizeof(failure)) {
            failure.stage = ODLS_CHILD_EXEC;
            failure.error = EIO;
        }
        odls_default_report_failure(proc->rank, node, program, cwd, cpuset, &failure);
        proc->not_started = true;
    }
    close(proc->report_fd);
    proc->report_fd = -1;
    free(proc->late);
    proc->late = NULL;
    return true;
}

/* The exec reports of earlier launches that have come in (a launch does not wait for its own:
 * the children exec in parallel while the next ones are started). */
static void odls_default_sweep_reports(orte_odls_t *odls)
{
    for (size_t i = 0; i < odls->num_procs; ++i) {
        odls_default_check_report(&odls->procs[i], false);
    }
}

/* What the child would fail at in the working directory or the binding, found before the clone
 * so the launch can say so at once; HERD_SUCCESS when nothing is wrong. */
static int odls_default_precheck(const odls_child_plan_t *plan, odls_child_failure_t *failure)
{
    struct stat st;
    if (NULL != plan->cwd &&
        (0 != stat(plan->cwd, &st) || 0 != access(plan->cwd, X_OK) || !S_ISDIR(st.st_mode))) {
        failure->stage = ODLS_CHILD_CHDIR;
        failure->error = (0 == errno) ? ENOTDIR : errno;
        if (0 == stat(plan->cwd, &st) && !S_ISDIR(st.st_mode)) {
            failure->error = ENOTDIR;
        }
        return HERD_ERR_IN_ERRNO;
    }
    if (NULL != plan->cpus) {
        cpu_set_t allowed;
        CPU_ZERO(&allowed);
        if (0 == sched_getaffinity(0, sizeof(allowed), &allowed)) {
            for (size_t cpu = 0; cpu < 8 * plan->cpus_size; ++cpu) {
                if (CPU_ISSET_S(cpu, plan->cpus_size, plan->cpus) &&
                    (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed))) {
                    failure->stage = ODLS_CHILD_BIND;
                    failure->error = EINVAL;
                    return HERD_ERR_IN_ERRNO;
                }
            }
        }
    }
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* starting without waiting for the exec */

/* The strings of a NULL-terminated array: their count, and the bytes of their text. */
static size_t odls_default_text_size(char *const *strings, size_t *count)
{
    size_t size = 0, n = 0;
    while (NULL != strings && NULL != strings[n]) {
        size += strlen(strings[n++]) + 1;
    }
    *count = n;
    return size;
}

/* Copy count strings: the array to out, the text from *text on. */
static void odls_default_copy_strings(char *const *strings, size_t count, char **out, char **text)
{
    for (size_t i = 0; i < count; ++i) {
        size_t len = strlen(strings[i]) + 1;
        memcpy(*text, strings[i], len);
        out[i] = *text;
        *text += len;
    }
    out[count] = NULL;
}

/* plan with every string, array and cpuset copied into one allocation (*mem, free once) that
 * starts with the child's stack: the stack, the struct, the cpuset (longs) and the two pointer
 * arrays first, so each is aligned, then the text. */
static odls_default_copy_t *odls_default_copy_plan(const odls_child_plan_t *plan, char **mem)
{
    size_t argc, envc;
    size_t cpus_size = (NULL != plan->cpus) ? plan->cpus_size : 0; /* a multiple of a long */
    size_t text = odls_default_text_size(plan->argv, &argc) +
                  odls_default_text_size(plan->env, &envc) + strlen(plan->program) + 1 +
                  (NULL != plan->cwd ? strlen(plan->cwd) + 1 : 0);
    size_t arrays = (argc + 1 + envc + 1) * sizeof(char *);
    char *block = malloc(ODLS_DEFAULT_CHILD_STACK + sizeof(odls_default_copy_t) + cpus_size +
                         arrays + text);
    if (NULL == block) {
        return NULL;
    }
    *mem = block;
    /* the stack grows down from here, 16-byte aligned as malloc's block and the size are */
    odls_default_copy_t *copy = (odls_default_copy_t *) (void *) (block + ODLS_DEFAULT_CHILD_STACK);
    copy->plan = *plan;
    char *cursor = (char *) (copy + 1);
    if (NULL != plan->cpus) {
        memcpy(cursor, plan->cpus, cpus_size);
        copy->plan.cpus = (cpu_set_t *) (void *) cursor;
        cursor += cpus_size;
    }
    char **argv = (char **) (void *) cursor;
    char **env = argv + argc + 1;
    char *strings = (char *) (env + envc + 1);
    odls_default_copy_strings(plan->argv, argc, argv, &strings);
    odls_default_copy_strings(plan->env, envc, env, &strings);
    copy->plan.argv = argv;
    copy->plan.env = env;
    size_t len = strlen(plan->program) + 1;
    memcpy(strings, plan->program, len);
    copy->plan.program = strings;
    strings += len;
    if (NULL != plan->cwd) {
        memcpy(strings, plan->cwd, strlen(plan->cwd) + 1);
        copy->plan.cwd = strings;
    }
    if (plan->num_extra_fds > 0) {
        memcpy(copy->extra_fds, plan->extra_fds, (size_t) plan->num_extra_fds * sizeof(int));
    }
    copy->plan.extra_fds = copy->extra_fds;
    memcpy(copy->reset_signals, plan->reset_signals,
           (size_t) plan->num_reset_signals * sizeof(int));
    copy->plan.reset_signals = copy->reset_signals;
    return copy;
}

/* Which signals a child must set back to SIG_DFL: those caught or ignored here, read with one
 * sigaction per signal. A reading serves the processes started in the next
 * ODLS_DEFAULT_SIGNAL_SCAN_NS (a launch starts them tens of microseconds apart), so a whole
 * launch reads once instead of once per process. A handler that another thread installs
 * within that time is not reset in those children (herd's daemons install theirs at start-up,
 * from the main thread); the kernel still resets it at their exec. A signal glibc keeps for
 * itself (sigaction refuses it) is always reset. */
static void odls_default_scan_signals(orte_odls_t *odls)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (odls->signals_scanned &&
        (now.tv_sec - odls->signals_scanned_at.tv_sec) * 1000000000L +
                (now.tv_nsec - odls->signals_scanned_at.tv_nsec) <
            ODLS_DEFAULT_SIGNAL_SCAN_NS) {
        return;
    }
    odls->num_reset_signals = 0;
    for (int signo = 1; signo < NSIG && signo <= ODLS_DEFAULT_MAX_SIGNALS; ++signo) {
        struct sigaction current;
        if (SIGKILL == signo || SIGSTOP == signo) {
            continue;
        }
        if (0 != sigaction(signo, NULL, &current) || SIG_DFL != current.sa_handler) {
            odls->reset_signals[odls->num_reset_signals++] = signo;
        }
    }
    odls->signals_scanned = true;
    odls->signals_scanned_at = now;
}

/* stop_on_exec: wait for the child's exec to stop it (SIGCHLD does not come for stops: the
 * handler is SA_NOCLDSTOP), then leave it stopped and untraced, for a debugger to attach to
 * (SIGCONT releases it). A child whose exec failed has exited: left for the reap. */
static void odls_default_await_exec_stop(pid_t pid)
{
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    while (0 != waitid(P_PID, (id_t) pid, &info, WEXITED | WSTOPPED | WNOWAIT) && EINTR == errno) {
    }
    if (CLD_TRAPPED != info.si_code && CLD_STOPPED != info.si_code) {
        return;
    }
    int status;
    while (waitpid(pid, &status, WUNTRACED) < 0 && EINTR == errno) {
    }
    ptrace(PTRACE_DETACH, pid, NULL, (void *) (intptr_t) SIGSTOP);
}

static int odls_default_launch(orte_odls_t *odls, const orte_odls_proc_spec_t *spec)
{
    const char *node;
    odls_child_plan_t plan = {.report_fd = -1};
    int devnull = -1;
    int report[2] = {-1, -1};
    char *program = NULL;
    struct rlimit nofile;
    sigset_t all, saved;
    struct timespec start;
    char *child_mem = NULL;
    odls_default_copy_t *child_mem_copy = NULL;
    pid_t pid;
    int rc;

    if (NULL == odls || NULL == spec || NULL == spec->argv || NULL == spec->argv[0] ||
        spec->num_extra_fds < 0 || spec->num_extra_fds > ORTE_ODLS_MAX_EXTRA_FDS ||
        (spec->num_extra_fds > 0 && NULL == spec->extra_fds)) {
        return HERD_ERR_BAD_PARAM;
    }
    for (int i = 0; i < spec->num_extra_fds; ++i) {
        if (spec->extra_fds[i] < 0) {
            return HERD_ERR_BAD_PARAM;
        }
    }
    node = (NULL != spec->node_name) ? spec->node_name : "this node";
    rc = orte_odls_base_check_program(spec->argv[0], orte_odls_base_env_path(spec->env), spec->cwd,
                                      node, &program);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    plan.program = program;
    plan.argv = spec->argv;
    plan.cwd = spec->cwd;
    plan.stop_on_exec = spec->stop_on_exec;

    if (NULL != spec->cpuset && '\0' != spec->cpuset[0]) {
        if (spec->simulated) {
            /* a simulated node's CPUs are not this machine's: say so once per job */
            if (!odls->told_simulated) {
                odls->told_simulated = true;
                opal_output_verbose(1, orte_odls_base_framework.output,
                                    "odls: %s is simulated: processes are not bound (rank %u "
                                    "would be bound to %s)",
                                    node, spec->rank, spec->cpuset);
            }
        } else {
            rc = odls_default_parse_cpuset(spec->cpuset, &plan.cpus, &plan.cpus_size);
            if (HERD_ERR_BAD_PARAM == rc) {
                opal_show_help(ODLS_DEFAULT_HELP_FILE, "bad-cpuset", true, spec->rank, node,
                               spec->cpuset);
            }
            if (HERD_SUCCESS != rc) {
                goto out;
            }
        }
    }

    {
        odls_child_failure_t failure = {0};
        errno = 0;
        if (HERD_SUCCESS != odls_default_precheck(&plan, &failure)) {
            odls_default_report_failure(spec->rank, node, program, spec->cwd, spec->cpuset,
                                        &failure);
            errno = failure.error;
            rc = HERD_ERR_IN_ERRNO;
            goto out;
        }
    }
    odls_default_sweep_reports(odls);
    plan.env = odls_default_environment(spec);
    rc = odls_default_reserve(odls);
    if (NULL == plan.env || HERD_SUCCESS != rc) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    if (spec->stdin_fd < 0 || spec->stdout_fd < 0 || spec->stderr_fd < 0) {
        devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (devnull < 0) {
            rc = HERD_ERR_IN_ERRNO;
            goto out;
        }
    }
    plan.stdio[0] = (spec->stdin_fd >= 0) ? spec->stdin_fd : devnull;
    plan.stdio[1] = (spec->stdout_fd >= 0) ? spec->stdout_fd : devnull;
    plan.stdio[2] = (spec->stderr_fd >= 0) ? spec->stderr_fd : devnull;
    plan.extra_fds = spec->extra_fds;
    plan.num_extra_fds = spec->num_extra_fds;
    if (0 != pipe2(report, O_CLOEXEC | O_NONBLOCK)) {
        rc = HERD_ERR_IN_ERRNO;
        goto out;
    }
    plan.report_fd = report[1];
    plan.parent = getpid();
    plan.max_fd = (0 == getrlimit(RLIMIT_NOFILE, &nofile) && nofile.rlim_cur < INT_MAX)
                      ? (int) nofile.rlim_cur
                      : 65536;
    odls_default_scan_signals(odls);
    plan.reset_signals = odls->reset_signals;
    plan.num_reset_signals = odls->num_reset_signals;
    /* for a message should the exec fail after all (found by a later sweep or at its exit) */
    size_t lens[4] = {strlen(program) + 1, strlen(node) + 1,
                      strlen(NULL != spec->cwd ? spec->cwd : "") + 1,
                      strlen(NULL != spec->cpuset ? spec->cpuset : "") + 1};
    char *late = malloc(lens[0] + lens[1] + lens[2] + lens[3]);
    if (NULL == late) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    memcpy(late, program, lens[0]);
    memcpy(late + lens[0], node, lens[1]);
    memcpy(late + lens[0] + lens[1], NULL != spec->cwd ? spec->cwd : "", lens[2]);
    memcpy(late + lens[0] + lens[1] + lens[2], NULL != spec->cpuset ? spec->cpuset : "", lens[3]);

    /* The child shares our memory on a stack of its own. A fork would copy the page tables of a
     * daemon that maps libpmix, hwloc and the job database, then pay a copy-on-write fault for
     * every page either side touched next; its exec running on another core does not win that
     * back (docs/bench.md has the figures, docs/odls.md the price, in maximum RSS). The child writes nothing of ours and changes only what is its own: fds,
     * dispositions, mask, directory. Unless told to wait, we go on to the next process at once
     * (the child reads a copy of the plan, on a stack of its own, both freed once it has
     * exec'd): waiting would hold the daemon for as long as the child waits for a core. */
    if (!odls->wait_exec && NULL == (child_mem_copy = odls_default_copy_plan(&plan, &child_mem))) {
        free(late);
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    clock_gettime(CLOCK_MONOTONIC, &start);
    /* No handler of ours may run in the child before it resets them. */
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &saved);
    if (NULL != child_mem) {
        pid = clone(odls_default_child_start, child_mem + ODLS_DEFAULT_CHILD_STACK,
                    CLONE_VM | SIGCHLD, &child_mem_copy->plan);
    } else {
        pid = clone(odls_default_child_start, odls->child_stack + ODLS_DEFAULT_CHILD_STACK,
                    CLONE_VM | CLONE_VFORK | SIGCHLD, &plan);
    }
    int clone_errno = errno;
    sigprocmask(SIG_SETMASK, &saved, NULL);
    errno = clone_errno;
    close(report[1]);
    report[1] = -1;
    if (pid < 0) {
        opal_show_help(ODLS_DEFAULT_HELP_FILE, "fork-failed", true, spec->rank, node,
                       strerror(clone_errno));
        errno = clone_errno;
        free(late);
        free(child_mem);
        rc = HERD_ERR_IN_ERRNO;
        goto out;
    }
    /* also here, so the group exists whichever of the two runs first */
    setpgid(pid, pid);
    if (plan.stop_on_exec) {
        odls_default_await_exec_stop(pid);
    }

    odls->procs[odls->num_procs++] = (odls_default_proc_t){
        .pid = pid,
        .rank = spec->rank,
        .id = spec->id,
        .start = start,
        .report_fd = report[0],
        .late = late,
        .child_mem = child_mem,
    };
    report[0] = -1;
    opal_output_verbose(10, orte_odls_base_framework.output, "odls: rank %u on %s is pid %d (%s)",
                        spec->rank, node, (int) pid, program);
    if (NULL != spec->pid) {
        *spec->pid = pid;
    }
    rc = HERD_SUCCESS;

out:
    if (report[0] >= 0) {
        close(report[0]);
    }
    if (report[1] >= 0) {
        close(report[1]);
    }
    if (devnull >= 0) {
        close(devnull);
    }
    if (NULL != plan.cpus) {
        CPU_FREE(plan.cpus);
    }
    free(plan.env);
    free(program);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* collecting exits */

static void odls_default_fill_exit(const odls_default_proc_t *proc, int status,
                                   const struct rusage *usage, const struct timespec *now,
                                   orte_odls_exit_t *info)
{
    memset(info, 0, sizeof(*info));
    info->pid = proc->pid;
    if (WIFSIGNALED(status)) {
        const char *name = strsignal(WTERMSIG(status));
        info->signaled = true;
        info->signo = WTERMSIG(status);
        info->core_dumped = WCOREDUMP(status);
        snprintf(info->signal_name, sizeof(info->signal_name), "%s",
                 (NULL != name) ? name : "unknown signal");
    } else {
        info->exit_code = WEXITSTATUS(status);
    }
    info->user_cpu = usage->ru_utime;
    info->sys_cpu = usage->ru_stime;
    info->max_rss_kb = usage->ru_maxrss;
    info->wall_ns = (uint64_t) (now->tv_sec - proc->start.tv_sec) * UINT64_C(1000000000) +
                    (uint64_t) (now->tv_nsec - proc->start.tv_nsec);
}

static void odls_default_reap(void *arg)
{
    orte_odls_t *odls = arg;
    struct timespec now;
    orte_odls_exit_t *exits = NULL;
    uint32_t *ranks = NULL;
    size_t num_exits = 0, kept = 0;

    clock_gettime(CLOCK_MONOTONIC, &now);
    /* Only our own pids: other instances and the daemon itself have children too. */
    for (size_t i = 0; i < odls->num_procs; ++i) {
        odls_default_proc_t *proc = &odls->procs[i];
        struct rusage usage;
        int status;
        pid_t done;

        do {
            done = wait4(proc->pid, &status, WNOHANG, &usage);
        } while (done < 0 && EINTR == errno);
        if (done == proc->pid && WIFSTOPPED(status)) {
            /* stop_on_exec: stopped at its exec while we trace it; leave it stopped, untraced,
             * for a debugger (SIGCONT releases it) */
            ptrace(PTRACE_DETACH, proc->pid, NULL, (void *) (intptr_t) SIGSTOP);
            odls->procs[kept++] = *proc;
            continue;
        }
        if (done != proc->pid) {
            odls->procs[kept++] = *proc;
            continue;
        }
        if (NULL == exits) {
            /* at most every live process exits now; one allocation for the round */
            exits = malloc(odls->num_procs * sizeof(*exits));
            ranks = malloc(odls->num_procs * sizeof(*ranks));
            if (NULL == exits || NULL == ranks) {
                /* collect it later: the status stays with the zombie */
                free(exits);
                free(ranks);
                exits = NULL;
                ranks = NULL;
                odls->procs[kept++] = *proc;
                continue;
            }
        }
        /* it has exited, so its report is complete: did it ever run? */
        odls_default_check_report(proc, true);
        free(proc->child_mem);
        proc->child_mem = NULL;
        odls_default_fill_exit(proc, status, &usage, &now, &exits[num_exits]);
        exits[num_exits].not_started = proc->not_started;
        ranks[num_exits++] = proc->id;
    }
    odls->num_procs = kept;

    /* callbacks last: they may launch (which grows procs) or kill */
    for (size_t i = 0; i < num_exits; ++i) {
        odls->callbacks.proc_exited(ranks[i], &exits[i], odls->callbacks.cbdata);
    }
    if (num_exits > 0 && 0 == odls->num_procs && NULL != odls->callbacks.all_exited) {
        odls->callbacks.all_exited(odls->callbacks.cbdata);
    }
    free(exits);
    free(ranks);
}

/* ------------------------------------------------------------------------------------------ */
/* killing */

static void odls_default_kill_doomed(orte_odls_t *odls)
{
    for (size_t i = 0; i < odls->num_doomed; ++i) {
        kill(-odls->doomed_groups[i], SIGKILL);
    }
    odls->num_doomed = 0;
}

static void odls_default_kill_timer_fired(int fd, short what, void *arg)
{
    orte_odls_t *odls = arg;

    odls->kill_timer_armed = false;
    opal_output_verbose(5, orte_odls_base_framework.output,
                        "odls: grace period over: SIGKILL to %zu process groups", odls->num_doomed);
    odls_default_kill_doomed(odls);
}

static int odls_default_add_doomed(orte_odls_t *odls, pid_t group)
{
    for (size_t i = 0; i < odls->num_doomed; ++i) {
        if (odls->doomed_groups[i] == group) {
            return HERD_SUCCESS;
        }
    }
    if (odls->num_doomed == odls->max_doomed) {
        size_t max = (0 == odls->max_doomed) ? 16 : 2 * odls->max_doomed;
        pid_t *groups = realloc(odls->doomed_groups, max * sizeof(*groups));
        if (NULL == groups) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        odls->doomed_groups = groups;
        odls->max_doomed = max;
    }
    odls->doomed_groups[odls->num_doomed++] = group;
    return HERD_SUCCESS;
}

/* SIGTERM to pid and its group, remembered for SIGKILL at the end of the grace; with no grace
 * (or no memory to remember it), SIGKILL now. */
static void odls_default_doom(orte_odls_t *odls, pid_t pid, int grace_ms)
{
    if (0 == grace_ms) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        return;
    }
    /* the leader too, in case it left its group */
    kill(-pid, SIGTERM);
    kill(pid, SIGTERM);
    if (HERD_SUCCESS != odls_default_add_doomed(odls, pid)) {
        /* cannot wait for it without remembering it: no grace then */
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
    }
}

/* The grace of the doomed starts now (unless it runs already). */
static void odls_default_arm_grace(orte_odls_t *odls, int grace_ms)
{
    if (odls->num_doomed > 0 && !odls->kill_timer_armed) {
        struct timeval grace = {.tv_sec = grace_ms / 1000, .tv_usec = (grace_ms % 1000) * 1000};
        if (HERD_SUCCESS != opal_event_add(odls->kill_timer, &grace)) {
            /* no timer, no grace: never leave a process behind */
            odls_default_kill_doomed(odls);
            return;
        }
        odls->kill_timer_armed = true;
    }
}

static int odls_default_kill_all(orte_odls_t *odls, int grace_ms)
{
    if (NULL == odls) {
        return HERD_ERR_BAD_PARAM;
    }
    if (grace_ms < 0) {
        grace_ms = orte_odls_base_kill_grace_ms();
    }
    for (size_t i = 0; i < odls->num_procs; ++i) {
        odls_default_doom(odls, odls->procs[i].pid, grace_ms);
    }
    if (0 == grace_ms) {
        odls_default_kill_doomed(odls);
        return HERD_SUCCESS;
    }
    odls_default_arm_grace(odls, grace_ms);
    return HERD_SUCCESS;
}

static int odls_default_signal(orte_odls_t *odls, int signo)
{
    if (NULL == odls || signo <= 0 || signo >= NSIG) {
        return HERD_ERR_BAD_PARAM;
    }
    for (size_t i = 0; i < odls->num_procs; ++i) {
        kill(-odls->procs[i].pid, signo);
    }
    return HERD_SUCCESS;
}

/* Whether pid is a live process of the instance. */
static bool odls_default_alive(const orte_odls_t *odls, pid_t pid)
{
    for (size_t i = 0; i < odls->num_procs; ++i) {
        if (odls->procs[i].pid == pid) {
            return true;
        }
    }
    return false;
}

static int odls_default_kill_proc(orte_odls_t *odls, pid_t pid, int grace_ms)
{
    if (NULL == odls || pid <= 0) {
        return HERD_ERR_BAD_PARAM;
    }
    if (!odls_default_alive(odls, pid)) {
        return HERD_ERR_NOT_FOUND;
    }
    if (grace_ms < 0) {
        grace_ms = orte_odls_base_kill_grace_ms();
    }
    odls_default_doom(odls, pid, grace_ms);
    odls_default_arm_grace(odls, grace_ms);
    return HERD_SUCCESS;
}

static int odls_default_signal_proc(orte_odls_t *odls, pid_t pid, int signo)
{
    if (NULL == odls || pid <= 0 || signo <= 0 || signo >= NSIG) {
        return HERD_ERR_BAD_PARAM;
    }
    if (!odls_default_alive(odls, pid)) {
        return HERD_ERR_NOT_FOUND;
    }
    kill(-pid, signo);
    return HERD_SUCCESS;
}

static size_t odls_default_num_alive(const orte_odls_t *odls)
{
    return (NULL != odls) ? odls->num_procs : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* instances */

/* Valgrind follows no clone that shares memory without CLONE_VFORK: it stops the program. It
 * preloads its vgpreload_*.so into the programs it runs (herdrun and its forked session daemon
 * included), which is how we know. */
static bool odls_default_under_valgrind(void)
{
    const char *preload = getenv("LD_PRELOAD");
    return NULL != preload && NULL != strstr(preload, "/vgpreload_");
}

static int odls_default_create(opal_event_base_t *base, const orte_odls_callbacks_t *callbacks,
                               orte_odls_t **instance)
{
    orte_odls_t *odls;
    int rc;

    if (NULL == base || NULL == callbacks || NULL == callbacks->proc_exited || NULL == instance) {
        return HERD_ERR_BAD_PARAM;
    }
    odls = calloc(1, sizeof(*odls));
    if (NULL == odls || NULL == (odls->child_stack = malloc(ODLS_DEFAULT_CHILD_STACK))) {
        free(odls);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    odls->base = base;
    odls->callbacks = *callbacks;
    rc = opal_event_timer_create(base, false, odls_default_kill_timer_fired, odls,
                                 &odls->kill_timer);
    if (HERD_SUCCESS != rc) {
        goto err_free;
    }
    rc = orte_odls_base_sigchld_watch(base, odls_default_reap, odls, &odls->sigchld);
    if (HERD_SUCCESS != rc) {
        goto err_timer;
    }
    odls->wait_exec =
        orte_odls_default_wait_exec || !ODLS_DEFAULT_ASYNC_CLONE || odls_default_under_valgrind();
    *instance = odls;
    return HERD_SUCCESS;

err_timer:
    opal_event_free(odls->kill_timer);
err_free:
    free(odls->child_stack);
    free(odls);
    return rc;
}

static void odls_default_destroy(orte_odls_t *odls)
{
    if (NULL == odls) {
        return;
    }
    for (size_t i = 0; i < odls->num_procs; ++i) {
        pid_t pid = odls->procs[i].pid;
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && EINTR == errno) {
        }
        if (odls->procs[i].report_fd >= 0) {
            close(odls->procs[i].report_fd);
        }
        free(odls->procs[i].late);
        free(odls->procs[i].child_mem);
    }
    odls_default_kill_doomed(odls);
    orte_odls_base_sigchld_unwatch(odls->sigchld);
    opal_event_free(odls->kill_timer);
    free(odls->doomed_groups);
    free(odls->procs);
    free(odls->child_stack);
    free(odls);
}

const orte_odls_module_t orte_odls_default_module = {
    .name = "default",
    .create = odls_default_create,
    .destroy = odls_default_destroy,
    .launch = odls_default_launch,
    .kill_all = odls_default_kill_all,
    .signal = odls_default_signal,
    .kill_proc = odls_default_kill_proc,
    .signal_proc = odls_default_signal_proc,
    .num_alive = odls_default_num_alive,
};
