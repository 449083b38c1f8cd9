/* SPDX-License-Identifier: BSD-3-Clause */
/* The start check: every session daemon checks the programs it would start (and whether any of
 * them could use a wireup), and an allgather among the daemons and herdrun brings every node's
 * findings together, so that nothing starts anywhere when a program is missing somewhere. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/util/argv.h"
#include "opal/util/output.h"
#include "opal/util/program_scan.h"
#include "opal/util/show_help.h"
#include "orte/runtime/session_internal.h"

/* Whether the processes of app (program: its resolved path) could talk to a wireup, or start a
 * program that could: only programs that cannot (opal_program_is_leaf) save the wireup's
 * start. */
static bool app_can_use_wireup(orte_session_t *s, const orte_job_app_t *app, const char *program,
                               char *why, size_t why_size)
{
    bool leaf = false;
    char reason[128] = "";
    if (HERD_SUCCESS != opal_program_is_leaf(program, &leaf, reason, sizeof(reason))) {
        snprintf(reason, sizeof(reason), "unreadable: %s", strerror(errno));
        leaf = false;
    }
    /* a preloaded library could be anything, a wireup client included */
    char *const *envs[] = {app->env, s->local.proc_env};
    for (size_t e = 0; leaf && e < sizeof(envs) / sizeof(envs[0]); ++e) {
        if (opal_env_find(envs[e], "LD_PRELOAD") >= 0 || opal_env_find(envs[e], "LD_AUDIT") >= 0) {
            snprintf(reason, sizeof(reason), "LD_PRELOAD or LD_AUDIT in its environment");
            leaf = false;
        }
    }
    snprintf(why, why_size, "%s %s a wireup (%s)", program, leaf ? "cannot use" : "may use",
             reason);
    return !leaf;
}

/* What was written into the capture pipe (read end), as a string; NULL when out of memory. */
static char *read_capture(int fd)
{
    char *text = calloc(1, 1);
    size_t len = 0;
    if (fd >= 0) {
        fcntl(fd, F_SETFL, O_NONBLOCK);
        char chunk[4096];
        ssize_t n;
        while (NULL != text && (n = read(fd, chunk, sizeof(chunk))) > 0) {
            char *grown = realloc(text, len + (size_t) n + 1);
            if (NULL == grown) {
                free(text);
                text = NULL;
                break;
            }
            text = grown;
            memcpy(text + len, chunk, (size_t) n);
            len += (size_t) n;
            text[len] = '\0';
        }
        close(fd);
    }
    return text;
}

/* Every program with processes here must be there before anything starts anywhere. What is
 * wrong goes to herdrun in the check's allgather (not as output), so it can say it once for
 * all nodes: what odls and this function say on stderr meanwhile is captured. Returns the
 * messages (empty: fine); NULL when out of memory. */
static char *check_programs(orte_session_t *s)
{
    bool *local = orte_session_map_local_apps(s);
    char why[4200] = ""; /* said after the capture ends: what is said during it is an error */
    int saved = dup(STDERR_FILENO);
    int capture[2] = {-1, -1};
    fflush(stderr);
    if (saved >= 0 && 0 == pipe2(capture, O_CLOEXEC)) {
        fcntl(capture[1], F_SETPIPE_SZ, 1 << 20);
        fcntl(capture[1], F_SETFL, O_NONBLOCK);
        dup2(capture[1], STDERR_FILENO);
        close(capture[1]);
    }
    for (uint32_t a = 0; a < s->spec->num_apps; ++a) {
        const orte_job_app_t *app = &s->spec->apps[a];
        if (NULL != local && !local[a]) {
            continue;
        }
        const char *path = orte_odls_base_env_path(app->env);
        if (NULL == path) {
            path = getenv("PATH");
        }
        char *resolved = NULL;
        orte_odls_base_check_program(app->argv[0], path, app->cwd, s->node_name, &resolved);
        if (NULL != resolved && !s->wireup.wanted) {
            s->wireup.wanted = app_can_use_wireup(s, app, resolved, why, sizeof(why));
        }
        free(resolved);
        if (NULL != app->cwd && 0 != access(app->cwd, X_OK)) {
            opal_show_help(ORTE_SESSION_HELP, "bad-wdir", false, app->cwd, a, app->argv[0],
                           s->node_name, strerror(errno));
        }
    }
    fflush(stderr);
    free(local);
    if (saved >= 0) {
        dup2(saved, STDERR_FILENO);
        close(saved);
    }
    if ('\0' != why[0] && s->wireup.output >= 0) {
        opal_output_verbose(5, s->wireup.output, "wireup on %s: %s", s->node_name, why);
    }
    return read_capture(capture[0]);
}

/* Every session daemon's program check is in: go, or stop having started nothing. */
static void check_cb(int status, const orte_grpcomm_result_t *result, void *cbdata)
{
    orte_session_t *s = cbdata;
    bool ok = HERD_SUCCESS == status;
    for (uint32_t v = 0; ok && v < result->num_blobs; ++v) {
        ok = 0 == result->blobs[v].len;
    }
    if (s->map.launched_early) {
        /* herdrun has the (empty) check now; only a failed collective is news */
        if (!ok && !s->local.aborting) {
            opal_show_help(ORTE_SESSION_HELP, "check-failed-late", false, s->node_name,
                           s->spec->jobid, opal_strerror(status));
            s->local.aborting = true;
            s->local.odls->kill_all(s->local.procs, 0);
        }
        return;
    }
    if (!ok) {
        s->map.done = true; /* nothing will be mapped: herdrun reports and closes */
        orte_session_procs_finish(s);
        return;
    }
    orte_session_map_job(s);
}

int orte_session_check_start(orte_session_t *s, bool *alone_and_fine)
{
    char *problems = check_programs(s);
    if (NULL == problems) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    *alone_and_fine = 1 == s->launch->num_participants && '\0' == problems[0];
    int rc = s->gc->allgather(s->grpcomm, ORTE_SESSION_COLL_CHECK, problems, strlen(problems),
                              check_cb, s);
    free(problems);
    return rc;
}
