/* SPDX-License-Identifier: BSD-3-Clause */
/* The odls framework: start a node's local processes, bind them, watch them exit, and kill them;
 * one instance per job (docs/odls.md). */
#ifndef ORTE_MCA_ODLS_H
#define ORTE_MCA_ODLS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/types.h>

#include "opal/event/event.h"
#include "opal/mca/mca.h"
#include "orte/types.h"

#define OPAL_MCA_odls_INTERFACE_VERSION 2u

/* Most descriptors a process can inherit besides stdin, stdout and stderr. */
#define ORTE_ODLS_MAX_EXTRA_FDS 8

/* kill_all()'s grace_ms argument meaning "the MCA variable odls_base_kill_grace_ms". */
#define ORTE_ODLS_KILL_GRACE_DEFAULT (-1)

/* One process to start. Everything pointed to is copied (or no longer needed) when launch()
 * returns. */
typedef struct orte_odls_proc_spec {
    char *const *argv;     /* argv[0] is looked up in the PATH of env unless it holds a '/' */
    char *const *env;      /* the whole environment (NULL: empty); odls adds the HERD_* numbers */
    const char *cwd;       /* working directory (NULL: the caller's) */
    const char *cpuset;    /* binding as a CPU list ("0-3,8"); NULL or "": not bound */
    int stdin_fd;          /* given to the child as its stdin; -1: /dev/null */
    int stdout_fd;         /* the same for stdout */
    int stderr_fd;         /* the same for stderr */
    /* more descriptors the process inherits (a wireup socket): extra_fds[i] becomes descriptor
     * 3 + i in the process; at most ORTE_ODLS_MAX_EXTRA_FDS */
    const int *extra_fds;
    int num_extra_fds;
    pid_t *pid;            /* where launch() puts the process's pid on success (may be NULL) */
    const char *node_name; /* for messages (NULL: "this node") */
    bool simulated;        /* a simulated node: its cpusets do not exist here, so do not bind */
    uint32_t id; /* the caller's name for the process: what proc_exited() reports */
    /* the numbers given to the process as HERD_RANK, HERD_SIZE, ... */
    uint32_t rank;
    uint32_t size;
    uint32_t local_rank;
    uint32_t local_size;
    uint32_t node_rank;
    uint32_t jobid;
    uint32_t appnum;
    /* stop it at its exec, before main, until something sends it SIGCONT (a debugger attaches
     * meanwhile: herdrun --stop-on-exec) */
    bool stop_on_exec;
} orte_odls_proc_spec_t;

/* How a process ended and what it used. */
typedef struct orte_odls_exit {
    pid_t pid;
    bool signaled;        /* killed by a signal (signo) rather than exited (exit_code) */
    int exit_code;        /* when !signaled */
    int signo;            /* when signaled */
    char signal_name[48]; /* strsignal(signo) when signaled, else "" */
    bool core_dumped;
    struct timeval user_cpu; /* CPU time in user mode, of it and its reaped descendants */
    struct timeval sys_cpu;
    long max_rss_kb;  /* largest resident set size */
    bool not_started; /* its exec failed (already reported): it never ran */
    uint64_t wall_ns; /* from just before the start to when the exit was collected */
} orte_odls_exit_t;

/* Callbacks run from the event base's loop; they may call launch(), kill_all() and signal() but
 * not destroy(). */
typedef struct orte_odls_callbacks {
    /* Once per launched process, when its exit status has been collected. info is valid only
     * during the call. */
    void (*proc_exited)(uint32_t id, const orte_odls_exit_t *info, void *cbdata);
    /* Whenever the last live process of the instance has exited (after its proc_exited). May be
     * NULL. With more launches afterwards it runs again when those have exited. */
    void (*all_exited)(void *cbdata);
    void *cbdata;
} orte_odls_callbacks_t;

/* One job's local processes on this node. Opaque; a process may have several. */
typedef struct orte_odls orte_odls_t;

struct orte_odls_module {
    const char *name; /* the component's name: "default" */

    /* A new instance whose events run on base (which must outlive it). callbacks is copied;
     * proc_exited is required. *instance set only on success. */
    int (*create)(opal_event_base_t *base, const orte_odls_callbacks_t *callbacks,
                  orte_odls_t **instance);
    /* Kills what is still running (SIGKILL to each process group), waits for it, and frees the
     * instance, without running callbacks. NULL is ignored. */
    void (*destroy)(orte_odls_t *instance);

    /* Start one process. What can be checked before starting it is (the program, working
     * directory and binding): on failure nothing was left running and the reason was reported
     * (naming the program, rank and node): HERD_ERR_BAD_PARAM (bad spec or cpuset),
     * HERD_ERR_NOT_FOUND (no such program), HERD_ERR_IN_ERRNO (the system refused: fork,
     * chdir, binding). On success the process is started and its proc_exited will come; the
     * launch does not wait for its exec, so execs run in parallel. Should an exec still fail,
     * the reason is reported and proc_exited has not_started set. */
    int (*launch)(orte_odls_t *instance, const orte_odls_proc_spec_t *spec);
    /* SIGTERM to every live process and its process group, then SIGKILL to those left after
     * grace_ms (ORTE_ODLS_KILL_GRACE_DEFAULT: the MCA variable odls_base_kill_grace_ms).
     * Returns at once; the exits come through the callbacks. */
    int (*kill_all)(orte_odls_t *instance, int grace_ms);
    /* Forward signo to every live process's process group. */
    int (*signal)(orte_odls_t *instance, int signo);
    /* kill_all() and signal() for one live process (its pid): HERD_ERR_NOT_FOUND when pid is
     * not one (any more). */
    int (*kill_proc)(orte_odls_t *instance, pid_t pid, int grace_ms);
    int (*signal_proc)(orte_odls_t *instance, pid_t pid, int signo);
    /* How many launched processes have not been reported as exited yet. */
    size_t (*num_alive)(const orte_odls_t *instance);
};
typedef struct orte_odls_module orte_odls_module_t;

OPAL_EXPORT extern opal_mca_framework_t orte_odls_base_framework;

/* Open the framework and select its component (HERD_MCA_odls). HERD_ERR_NOT_FOUND when none
 * is available. Opening an open framework does nothing. */
OPAL_EXPORT int orte_odls_base_open(void);
OPAL_EXPORT void orte_odls_base_close(void);
/* The selected module, or NULL when the framework is not open. */
OPAL_EXPORT const orte_odls_module_t *orte_odls_base_module(void);
/* The value of odls_base_kill_grace_ms (the default when the framework was never registered). */
OPAL_EXPORT int orte_odls_base_kill_grace_ms(void);

/* Checks that argv0 names an executable regular file, the way launch() will find it: in the
 * colon-separated path (NULL: "/usr/bin:/bin"; empty entries and relative ones are taken from
 * cwd), then in cwd itself as mpirun does, unless argv0 holds a '/'; relative names from cwd
 * (NULL: ours). Call it for every app
 * before starting anything. On success *resolved is the path to exec (caller frees). Otherwise
 * the problem is reported naming the program and node, and HERD_ERR_NOT_FOUND (no such file) or
 * HERD_ERR_BAD_PARAM (not executable, a directory, empty name) returned. */
OPAL_EXPORT int orte_odls_base_check_program(const char *argv0, const char *path, const char *cwd,
                                             const char *node_name, char **resolved);
/* The value of PATH in env (NULL when env has none). */
OPAL_EXPORT const char *orte_odls_base_env_path(char *const *env);

/* "exited with status 3", "killed by signal 9 (Killed)", "... (core dumped)"; text is always
 * terminated. Returns text. */
OPAL_EXPORT char *orte_odls_exit_describe(const orte_odls_exit_t *info, char *text, size_t size);
/* What a launcher exits with for this process: its exit code, or 128 + the signal. */
OPAL_EXPORT int orte_odls_exit_status(const orte_odls_exit_t *info);

#endif /* ORTE_MCA_ODLS_H */
