/* SPDX-License-Identifier: BSD-3-Clause */
/* This node's processes of the job as herdrun's tools see them (herd-ps --procs, PMIx tool
 * queries, the MPIR table of debuggers): rank, pid, state and exit status, with each app's
 * program, sent to herdrun once every local process started (when the job asks for it) and
 * whenever herdrun asks. */
#include "herd_config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/argv.h"
#include "orte/runtime/job_status.h"
#include "orte/runtime/session_internal.h"

static uint8_t proc_state(const orte_proc_record_t *r)
{
    if (ORTE_PROC_START_FAILED == r->state && !r->collected) {
        return ORTE_JOB_PROC_START_FAILED;
    }
    if (r->collected) {
        return ORTE_PROC_START_FAILED == r->state ? ORTE_JOB_PROC_START_FAILED
                                                  : ORTE_JOB_PROC_EXITED;
    }
    return r->pid > 0 ? ORTE_JOB_PROC_RUNNING : ORTE_JOB_PROC_STARTING;
}

/* Each app's program as odls will find it (argv[0] when it cannot be found). */
static char **programs(orte_session_t *s)
{
    char **list = calloc(s->spec->num_apps + 1, sizeof(char *));
    for (uint32_t a = 0; NULL != list && a < s->spec->num_apps; ++a) {
        const orte_job_app_t *app = &s->spec->apps[a];
        const char *path = orte_odls_base_env_path(app->env);
        if (NULL == path) {
            path = orte_odls_base_env_path(s->local.proc_env);
        }
        /* it passed this check before anything started: nothing is said again */
        char *resolved = NULL, *real = NULL;
        if (HERD_SUCCESS !=
            orte_odls_base_check_program(app->argv[0], path, app->cwd, s->node_name, &resolved)) {
            resolved = strdup(app->argv[0]);
        } else if (NULL != (real = realpath(resolved, NULL))) {
            free(resolved);
            resolved = real;
        }
        list[a] = resolved;
    }
    return list;
}

static void send_table(orte_session_t *s, uint32_t qid)
{
    orte_session_nsjob_t *nsj = s->map.num_jobs > 0 ? s->map.jobs[0] : NULL;
    uint32_t first = NULL != nsj ? nsj->first_record : 0;
    uint32_t n = NULL != nsj && s->map.done ? nsj->num_local : 0;
    char **progs = programs(s);
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    int rc = NULL == progs ? HERD_ERR_OUT_OF_RESOURCE : HERD_SUCCESS;
    if (HERD_SUCCESS == rc && HERD_SUCCESS == (rc = opal_buffer_pack_uint32(&buffer, qid)) &&
        HERD_SUCCESS == (rc = opal_buffer_pack_uint32(&buffer, s->my_candidate)) &&
        HERD_SUCCESS == (rc = opal_buffer_pack_string_array(&buffer, progs, s->spec->num_apps))) {
        rc = opal_buffer_pack_uint32(&buffer, n);
    }
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < n && first + i < s->local.num_records; ++i) {
        const orte_proc_record_t *r = &s->local.records[first + i];
        orte_job_proc_status_t p = {.rank = r->rank,
                                    .node = s->my_candidate,
                                    .app = r->app,
                                    .pid = r->pid,
                                    .state = proc_state(r),
                                    .status = r->collected ? orte_proc_record_status(r) : 0};
        rc = orte_job_proc_status_pack(&buffer, &p);
    }
    if (HERD_SUCCESS == rc) {
        orte_session_send_buffer(s, 0, ORTE_SESSION_TAG_PTABLE, &buffer);
    }
    opal_buffer_destruct(&buffer);
    opal_argv_free(progs);
}

void orte_session_ptable_started(orte_session_t *s)
{
    if (s->local.ptable_sent || 0 == (s->spec->flags & ORTE_JOB_FLAG_PROCTABLE) || !s->map.done ||
        0 == s->map.num_jobs) {
        return;
    }
    const orte_session_nsjob_t *nsj = s->map.jobs[0];
    for (uint32_t i = 0; i < nsj->num_local; ++i) {
        const orte_proc_record_t *r = &s->local.records[nsj->first_record + i];
        if (r->pid <= 0 && ORTE_PROC_START_FAILED != r->state) {
            return; /* held for the wireup: not started yet */
        }
    }
    s->local.ptable_sent = true;
    send_table(s, 0);
}

void orte_session_ptable_recv_query(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                    const void *data, size_t length, void *arg)
{
    orte_session_t *s = arg;
    opal_buffer_t buffer;
    uint32_t qid = 0;
    opal_buffer_init(&buffer);
    if (0 == src && HERD_SUCCESS == opal_buffer_load(&buffer, data, length) &&
        HERD_SUCCESS == opal_buffer_unpack_uint32(&buffer, &qid) && 0 != qid) {
        send_table(s, qid);
    }
    opal_buffer_destruct(&buffer);
}
