/* SPDX-License-Identifier: BSD-3-Clause */
/* Removing what dead processes left behind (orte/util/orphans.h). */
#include "herd_config.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "orte/util/orphans.h"

void orte_orphans_adopt(void)
{
#ifdef PR_SET_CHILD_SUBREAPER
    prctl(PR_SET_CHILD_SUBREAPER, 1);
#endif
}

/* Children this process started and manages itself (orte_orphans_keep). */
#define ORPHANS_MAX_KEPT 8
static pid_t kept[ORPHANS_MAX_KEPT];
static size_t num_kept;

void orte_orphans_keep(pid_t pid)
{
    if (pid > 0 && num_kept < ORPHANS_MAX_KEPT) {
        kept[num_kept++] = pid;
    }
}

void orte_orphans_release(pid_t pid)
{
    for (size_t i = 0; i < num_kept; ++i) {
        if (kept[i] == pid) {
            kept[i] = kept[--num_kept];
            return;
        }
    }
}

static bool is_known(pid_t pid, const pid_t *known, size_t num_known)
{
    for (size_t i = 0; i < num_kept; ++i) {
        if (kept[i] == pid) {
            return true;
        }
    }
    for (size_t i = 0; i < num_known; ++i) {
        if (known[i] == pid) {
            return true;
        }
    }
    return false;
}

/* Call fn for each child of every thread of ours (from /proc: each task lists its own) that is
 * not known; how many there were. */
static size_t each_unknown_child(const pid_t *known, size_t num_known, void (*fn)(pid_t pid))
{
    size_t count = 0;
    DIR *tasks = opendir("/proc/self/task");
    if (NULL == tasks) {
        return 0;
    }
    struct dirent *entry;
    while (NULL != (entry = readdir(tasks))) {
        if ('.' == entry->d_name[0]) {
            continue;
        }
        char path[64];
        snprintf(path, sizeof(path), "/proc/self/task/%.20s/children", entry->d_name);
        FILE *f = fopen(path, "r");
        if (NULL == f) {
            continue;
        }
        long pid;
        while (1 == fscanf(f, "%ld", &pid)) {
            if (pid <= 1 || is_known((pid_t) pid, known, num_known)) {
                continue;
            }
            fn((pid_t) pid);
            count++;
        }
        fclose(f);
    }
    closedir(tasks);
    return count;
}

static void kill_and_reap(pid_t pid)
{
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* Reap one that has exited; ask one that runs to end (itself only: it ends its own). */
static void reap_or_term(pid_t pid)
{
    if (0 == waitpid(pid, NULL, WNOHANG)) {
        kill(pid, SIGTERM);
    }
}

static void leave_alone(pid_t pid)
{
    (void) pid;
}

static bool no_child_at_all(void)
{
    /* the usual end of a job: one system call says so, no /proc to read */
    siginfo_t info;
    return 0 != waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) && ECHILD == errno;
}

size_t orte_orphans_term(const pid_t *known, size_t num_known)
{
    if (no_child_at_all()) {
        return 0;
    }
    each_unknown_child(known, num_known, reap_or_term);
    /* those reaped are gone from /proc: what is still listed runs, asked to end */
    return each_unknown_child(known, num_known, leave_alone);
}

size_t orte_orphans_kill(const pid_t *known, size_t num_known)
{
    size_t total = 0, round;
    if (no_child_at_all()) {
        return 0;
    }
    /* killing one may re-parent its own children to us: go again until none is left */
    for (int i = 0; i < 8 && 0 != (round = each_unknown_child(known, num_known, kill_and_reap));
         ++i) {
        total += round;
    }
    return total;
}
