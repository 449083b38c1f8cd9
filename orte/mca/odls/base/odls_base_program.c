/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared odls helpers: finding the program to exec (checked for every app before anything
 * starts) and describing how a process ended. */
#include "herd_config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/util/argv.h"
#include "opal/util/show_help.h"
#include "orte/mca/odls/odls.h"

#define ODLS_BASE_HELP_FILE    "help-odls-base.txt"
#define ODLS_BASE_DEFAULT_PATH "/usr/bin:/bin"

const char *orte_odls_base_env_path(char *const *env)
{
    int i = opal_env_find(env, "PATH");
    return i < 0 ? NULL : env[i] + 5;
}

/* dir/name (dir NULL or "" means name alone), relative to cwd when not absolute. */
static char *odls_base_join(const char *cwd, const char *dir, size_t dir_len, const char *name)
{
    char *joined = NULL;
    int n;

    if (0 == dir_len) {
        dir = NULL;
    }
    if (NULL != dir && '/' != dir[0] && NULL != cwd) {
        n = asprintf(&joined, "%s/%.*s/%s", cwd, (int) dir_len, dir, name);
    } else if (NULL != dir) {
        n = asprintf(&joined, "%.*s/%s", (int) dir_len, dir, name);
    } else if ('/' != name[0] && NULL != cwd) {
        n = asprintf(&joined, "%s/%s", cwd, name);
    } else {
        n = asprintf(&joined, "%s", name);
    }
    return n < 0 ? NULL : joined;
}

/* 0 when candidate is an executable regular file, else the errno saying why not (EISDIR for a
 * directory, which access() alone would accept). */
static int odls_base_executable(const char *candidate)
{
    struct stat st;

    if (0 != stat(candidate, &st)) {
        return errno;
    }
    if (S_ISDIR(st.st_mode)) {
        return EISDIR;
    }
    if (!S_ISREG(st.st_mode) || 0 != access(candidate, X_OK)) {
        return EACCES;
    }
    return 0;
}

/* One candidate of a search (taken): *found when it can be run; else the first one that exists
 * but cannot be run is kept with its errno, and the search goes on as a shell's does. False when
 * candidate is NULL (out of memory). */
static bool odls_base_try(char *candidate, char **found, char **rejected, int *rejected_errno)
{
    if (NULL == candidate) {
        return false;
    }
    int err = odls_base_executable(candidate);
    if (0 == err) {
        *found = candidate;
    } else if (ENOENT != err && ENOTDIR != err && NULL == *rejected) {
        *rejected = candidate;
        *rejected_errno = err;
    } else {
        free(candidate);
    }
    return true;
}

int orte_odls_base_check_program(const char *argv0, const char *path, const char *cwd,
                                 const char *node_name, char **resolved)
{
    const char *node = (NULL != node_name) ? node_name : "this node";
    char *found = NULL;
    char *rejected = NULL; /* the first candidate that exists but cannot be run */
    int rejected_errno = 0;
    int rc;

    if (NULL == argv0 || '\0' == argv0[0]) {
        opal_show_help(ODLS_BASE_HELP_FILE, "empty-program", true, node);
        return HERD_ERR_BAD_PARAM;
    }
    if (NULL != strchr(argv0, '/')) {
        found = odls_base_join(cwd, NULL, 0, argv0);
        if (NULL == found) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        rejected_errno = odls_base_executable(found);
        if (0 != rejected_errno) {
            rejected = found;
            found = NULL;
        }
    } else {
        const char *entry = (NULL != path) ? path : ODLS_BASE_DEFAULT_PATH;
        while (NULL == found) {
            const char *colon = strchr(entry, ':');
            size_t len = (NULL != colon) ? (size_t) (colon - entry) : strlen(entry);
            if (!odls_base_try(odls_base_join(cwd, entry, len, argv0), &found, &rejected,
                               &rejected_errno)) {
                free(rejected);
                return HERD_ERR_OUT_OF_RESOURCE;
            }
            if (NULL == colon) {
                break;
            }
            entry = colon + 1;
        }
        /* as mpirun: a program PATH does not have is looked for in the working directory, so
         * "herdrun -n 4 hello" runs ./hello without "." in PATH (and spawns "worker") */
        if (NULL == found && !odls_base_try(odls_base_join(cwd, NULL, 0, argv0), &found, &rejected,
                                            &rejected_errno)) {
            free(rejected);
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }

    if (NULL != found) {
        free(rejected);
        *resolved = found;
        return HERD_SUCCESS;
    }
    if (NULL != rejected && ENOENT != rejected_errno && ENOTDIR != rejected_errno) {
        opal_show_help(ODLS_BASE_HELP_FILE, "program-not-executable", true, argv0, node, rejected,
                       strerror(rejected_errno));
        rc = HERD_ERR_BAD_PARAM;
    } else if (NULL != strchr(argv0, '/')) {
        opal_show_help(ODLS_BASE_HELP_FILE, "program-not-found-path", true, argv0, node,
                       (NULL != cwd) ? cwd : "the launcher's working directory");
        rc = HERD_ERR_NOT_FOUND;
    } else {
        opal_show_help(ODLS_BASE_HELP_FILE, "program-not-found", true, argv0, node,
                       (NULL != path) ? path : ODLS_BASE_DEFAULT_PATH,
                       (NULL != cwd) ? cwd : "the launcher's working directory");
        rc = HERD_ERR_NOT_FOUND;
    }
    free(rejected);
    return rc;
}

char *orte_odls_exit_describe(const orte_odls_exit_t *info, char *text, size_t size)
{
    if (NULL == text || 0 == size) {
        return text;
    }
    if (info->signaled) {
        snprintf(text, size, "killed by signal %d (%s)%s", info->signo, info->signal_name,
                 info->core_dumped ? " (core dumped)" : "");
    } else {
        snprintf(text, size, "exited with status %d", info->exit_code);
    }
    return text;
}

int orte_odls_exit_status(const orte_odls_exit_t *info)
{
    return info->signaled ? 128 + info->signo : info->exit_code;
}
