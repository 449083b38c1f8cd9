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

static bool is_known(pid_t pid, const pid_t *known, size_t num_known)
{
    for (size_t i = 0; i < num_known; ++i) {
        if (known[i] == pid) {
            return true;
        }
    }
    return false;
}

/* The children of every thread of ours, from /proc (each task lists its own). */
static size_t kill_children_once(const pid_t *known, size_t num_known)
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
            kill((pid_t) -pid, SIGKILL);
            kill((pid_t) pid, SIGKILL);
            waitpid((pid_t) pid, NULL, 0);
            count++;
        }
        fclose(f);
    }
    closedir(tasks);
    return count;
}

size_t orte_orphans_kill(const pid_t *known, size_t num_known)
{
    size_t total = 0, round;
    /* No child at all, the usual end of a job: one system call says so, no /proc to read */
    siginfo_t info;
    if (0 != waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) && ECHILD == errno) {
        return 0;
    }
    /* killing one may re-parent its own children to us: go again until none is left */
    for (int i = 0; i < 8 && 0 != (round = kill_children_once(known, num_known)); ++i) {
        total += round;
    }
    return total;
}
