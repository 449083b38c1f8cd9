/* SPDX-License-Identifier: BSD-3-Clause */
/* The shepherd (the session daemon with vpid 1): it hears every failure of the job, asks the
 * error manager what to do, gathers the other session daemons' exit records and sends herdrun
 * the final report. */
#include "herd_config.h"

#include <stdlib.h>

#include "opal/util/output.h"
#include "opal/util/show_help.h"
#include "orte/runtime/session_internal.h"
#include "orte/util/radix.h"

int orte_session_shepherd_open(orte_session_t *s)
{
    if (NULL != s->spec->errmgr) {
        setenv("HERD_MCA_errmgr", s->spec->errmgr, 1);
    }
    s->shepherd.finished = calloc(s->size, sizeof(*s->shepherd.finished));
    if (NULL == s->shepherd.finished || HERD_SUCCESS != orte_errmgr_base_open()) {
        opal_show_help(ORTE_SESSION_HELP, "no-errmgr", false, s->node_name, s->spec->jobid);
        return (NULL == s->shepherd.finished) ? HERD_ERR_OUT_OF_RESOURCE : HERD_ERR_NOT_FOUND;
    }
    s->shepherd.errmgr = orte_errmgr_base_module();
    return HERD_SUCCESS;
}

void orte_session_shepherd_release(orte_session_t *s)
{
    free(s->shepherd.collected);
    free(s->shepherd.finished);
}

static void shepherd_abort(orte_session_t *s)
{
    if (s->shepherd.job_aborting) {
        return;
    }
    s->shepherd.job_aborting = true;
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_pack_int32(&buffer, s->spec->kill_grace_ms)) {
        for (orte_vpid_t v = 1; v < s->size; ++v) {
            if (!s->shepherd.finished[v]) {
                s->ovl->send(s->overlay, v, ORTE_SESSION_TAG_ABORT, buffer.base, buffer.used);
            }
        }
    }
    opal_buffer_destruct(&buffer);
}

static void shepherd_maybe_report(orte_session_t *s)
{
    orte_session_shepherd_t *sh = &s->shepherd;
    if (sh->reported || sh->num_finished + 1 < s->size) {
        return;
    }
    sh->reported = true;
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    int rc = opal_buffer_pack_int32(&buffer, sh->job_status);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_pack_uint32(&buffer, (uint32_t) sh->num_collected);
    }
    for (size_t i = 0; HERD_SUCCESS == rc && i < sh->num_collected; ++i) {
        rc = orte_proc_record_pack(&buffer, &sh->collected[i]);
    }
    if (HERD_SUCCESS == rc) {
        orte_session_send_buffer(s, 0, ORTE_SESSION_TAG_REPORT, &buffer);
    }
    opal_buffer_destruct(&buffer);
}

static int collect(orte_session_shepherd_t *sh, const orte_proc_record_t *record)
{
    if (sh->num_collected == sh->cap_collected) {
        size_t cap = sh->cap_collected ? 2 * sh->cap_collected : 64;
        orte_proc_record_t *grown = realloc(sh->collected, cap * sizeof(*grown));
        if (NULL == grown) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        sh->collected = grown;
        sh->cap_collected = cap;
    }
    sh->collected[sh->num_collected++] = *record;
    return HERD_SUCCESS;
}

/* A failure reached the shepherd: ask the error manager, tell herdrun, act. */
static void shepherd_failure(orte_session_t *s, const orte_proc_record_t *record)
{
    if (s->shepherd.job_aborting || record->aborted) {
        return; /* a consequence of the abort, not a failure of its own */
    }
    const char *node = (record->node < s->nodes.num) ? s->nodes.nodes[record->node].name : "?";
    orte_errmgr_failure_t failure = {
        .event = ORTE_PROC_LOST == record->state           ? ORTE_ERRMGR_DAEMON_LOST
                 : ORTE_PROC_START_FAILED == record->state ? ORTE_ERRMGR_PROC_START_FAILED
                                                           : ORTE_ERRMGR_PROC_FAILED,
        .rank = record->rank,
        .node = node,
        .pid = record->pid,
        .signaled = record->signaled,
        .exit_code = record->exit_code,
        .signo = record->signo,
        .restarts = record->restarts,
    };
    orte_errmgr_action_t action = s->shepherd.errmgr->decide(&failure);
    if (0 == s->shepherd.job_status) {
        s->shepherd.job_status = orte_proc_record_status(record);
    }
    orte_session_send_record(s, 0, ORTE_SESSION_TAG_FAILURE, true, (uint32_t) action, record);
    if (ORTE_ERRMGR_ABORT_JOB == action) {
        shepherd_abort(s);
    }
}

/* A process asked for the job to be aborted (MPI_Abort): always the end of the job, whatever the
 * error manager says of failures, and herdrun shows the process's message. */
static void shepherd_aborted(orte_session_t *s, const orte_proc_record_t *record,
                             const char *message)
{
    if (s->shepherd.job_aborting) {
        return;
    }
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (0 == s->shepherd.job_status) {
        s->shepherd.job_status = orte_proc_record_status(record);
    }
    if (HERD_SUCCESS == opal_buffer_pack_uint32(&buffer, (uint32_t) ORTE_ERRMGR_ABORT_JOB) &&
        HERD_SUCCESS == orte_proc_record_pack(&buffer, record) &&
        HERD_SUCCESS == opal_buffer_pack_string(&buffer, NULL != message ? message : "")) {
        orte_session_send_buffer(s, 0, ORTE_SESSION_TAG_FAILURE, &buffer);
    }
    opal_buffer_destruct(&buffer);
    shepherd_abort(s);
}

void orte_session_shepherd_recv_aborted(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                        const void *data, size_t length, void *arg)
{
    orte_session_t *s = arg;
    opal_buffer_t buffer;
    orte_proc_record_t record;
    char *message = NULL;
    opal_buffer_init(&buffer);
    if (ORTE_SESSION_SHEPHERD == s->vpid &&
        HERD_SUCCESS == opal_buffer_load(&buffer, data, length) &&
        HERD_SUCCESS == orte_proc_record_unpack(&buffer, &record) &&
        HERD_SUCCESS == opal_buffer_unpack_string(&buffer, &message) &&
        ORTE_PROC_ABORTED == record.state) {
        shepherd_aborted(s, &record, message);
    }
    free(message);
    opal_buffer_destruct(&buffer);
}

void orte_session_shepherd_lost(orte_session_t *s, orte_vpid_t lost, const char *reason)
{
    for (orte_vpid_t v = 1; v < s->size; ++v) {
        bool below = false;
        for (orte_vpid_t u = v; u > 0 && !below; u = orte_radix_parent(u, s->launch->radix)) {
            below = (u == lost);
        }
        if (below && !s->shepherd.finished[v]) {
            s->shepherd.finished[v] = true;
            s->shepherd.num_finished++;
        }
    }
    orte_proc_record_t record = {.rank = UINT32_MAX, .state = ORTE_PROC_LOST, .exit_code = 1};
    if (lost > 0 && lost - 1 < s->launch->num_participants) {
        record.node = s->launch->participants[lost - 1];
    }
    opal_output_verbose(1, OPAL_OUTPUT_STDERR, "shepherd: session daemon %u lost: %s", lost,
                        reason);
    shepherd_failure(s, &record);
    shepherd_maybe_report(s);
}

void orte_session_shepherd_moved(orte_session_t *s, orte_vpid_t lost)
{
    if (lost > ORTE_SESSION_SHEPHERD && lost < s->size && !s->shepherd.finished[lost]) {
        s->shepherd.finished[lost] = true;
        s->shepherd.num_finished++;
    }
    shepherd_maybe_report(s);
}

void orte_session_shepherd_recv_failure(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                        const void *data, size_t length, void *arg)
{
    orte_session_t *s = arg;
    opal_buffer_t buffer;
    orte_proc_record_t record;
    opal_buffer_init(&buffer);
    if (ORTE_SESSION_SHEPHERD == s->vpid &&
        HERD_SUCCESS == opal_buffer_load(&buffer, data, length) &&
        HERD_SUCCESS == orte_proc_record_unpack(&buffer, &record)) {
        shepherd_failure(s, &record);
    }
    opal_buffer_destruct(&buffer);
}

void orte_session_shepherd_recv_done(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                     const void *data, size_t length, void *arg)
{
    orte_session_t *s = arg;
    opal_buffer_t buffer;
    uint32_t n = 0;
    opal_buffer_init(&buffer);
    if (ORTE_SESSION_SHEPHERD != s->vpid || src == 0 || src >= s->size ||
        s->shepherd.finished[src] || HERD_SUCCESS != opal_buffer_load(&buffer, data, length) ||
        HERD_SUCCESS != opal_buffer_unpack_uint32(&buffer, &n)) {
        opal_buffer_destruct(&buffer);
        return;
    }
    bool keep_all = 0 != (s->spec->flags & ORTE_JOB_FLAG_REPORT_USAGE);
    for (uint32_t i = 0; i < n; ++i) {
        orte_proc_record_t record;
        if (HERD_SUCCESS != orte_proc_record_unpack(&buffer, &record)) {
            break;
        }
        if (keep_all || orte_proc_record_failed(&record)) {
            collect(&s->shepherd, &record);
        }
    }
    opal_buffer_destruct(&buffer);
    s->shepherd.finished[src] = true;
    s->shepherd.num_finished++;
    shepherd_maybe_report(s);
}

/* A session daemon that had reported its processes has new ones (a spawn): not finished. */
void orte_session_shepherd_recv_reopen(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                       const void *data, size_t length, void *arg)
{
    orte_session_t *s = arg;
    if (ORTE_SESSION_SHEPHERD == s->vpid && src > 0 && src < s->size && s->shepherd.finished[src] &&
        !s->shepherd.reported) {
        s->shepherd.finished[src] = false;
        s->shepherd.num_finished--;
    }
}

void orte_session_shepherd_recv_lost(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                     const void *data, size_t length, void *arg)
{
    orte_session_t *s = arg;
    opal_buffer_t buffer;
    uint32_t vpid = 0;
    char *reason = NULL;
    opal_buffer_init(&buffer);
    if (ORTE_SESSION_SHEPHERD == s->vpid &&
        HERD_SUCCESS == opal_buffer_load(&buffer, data, length) &&
        HERD_SUCCESS == opal_buffer_unpack_uint32(&buffer, &vpid) &&
        HERD_SUCCESS == opal_buffer_unpack_string(&buffer, &reason) && vpid > 0 && vpid < s->size) {
        orte_session_shepherd_lost(s, vpid, NULL != reason ? reason : "");
    }
    free(reason);
    opal_buffer_destruct(&buffer);
}
