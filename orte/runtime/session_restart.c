/* SPDX-License-Identifier: BSD-3-Clause */
/* Restarting a failed process where it ran (errmgr restart): the session daemon of its node asks
 * the error manager itself, starts it again with the same rank, app, binding and environment,
 * and tells herdrun. Neither the shepherd nor the job's other processes see a failure: the rank
 * comes back, registered again with the wireup under its new pid. docs/errmgr.md. */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/util/show_help.h"
#include "orte/runtime/session_internal.h"

const orte_errmgr_module_t *orte_session_restart_errmgr(orte_session_t *s)
{
    if (NULL != s->shepherd.errmgr) {
        return s->shepherd.errmgr;
    }
    if (NULL != s->spec->errmgr) {
        setenv("HERD_MCA_errmgr", s->spec->errmgr, 1);
    }
    return HERD_SUCCESS == orte_errmgr_base_open() ? orte_errmgr_base_module() : NULL;
}

bool orte_session_restart_proc(orte_session_t *s, orte_proc_record_t *r)
{
    orte_session_nsjob_t *nsj = orte_session_nsjob_of(s, r->rank);
    /* a process that asked for the abort, or could not start, or one of a job being stopped:
     * not for a restart */
    if (NULL == nsj || NULL == nsj->db || s->local.aborting || r->aborted ||
        (ORTE_PROC_EXITED != r->state && ORTE_PROC_UNFINALIZED != r->state)) {
        return false;
    }
    const orte_errmgr_module_t *errmgr = orte_session_restart_errmgr(s);
    const char *node = (r->node < s->nodes.num) ? s->nodes.nodes[r->node].name : s->node_name;
    orte_errmgr_failure_t failure = {.event = ORTE_ERRMGR_PROC_FAILED,
                                     .rank = r->rank,
                                     .node = node,
                                     .pid = r->pid,
                                     .signaled = r->signaled,
                                     .exit_code = r->exit_code,
                                     .signo = r->signo,
                                     .restarts = r->restarts};
    if (NULL == errmgr || ORTE_ERRMGR_RESTART_PROC != errmgr->decide(&failure)) {
        return false;
    }
    opal_jobdb_proc_view_t view;
    uint32_t rank = r->rank - nsj->offset;
    if (HERD_SUCCESS != opal_jobdb_get_proc(nsj->db, rank, &view)) {
        return false;
    }
    /* herdrun says it (with how this one ended) before the new one can say anything */
    orte_proc_record_t ended = *r;
    ended.restarts = r->restarts + 1;
    orte_session_send_record(s, 0, ORTE_SESSION_TAG_RESTARTED, false, 0, &ended);
    orte_proc_record_t fresh = {
        .rank = r->rank, .node = r->node, .app = r->app, .restarts = r->restarts + 1};
    *r = fresh;
    orte_session_local_proc_t p = {.rank = rank,
                                   .app = view.app,
                                   .local_rank = view.local_rank,
                                   .node_rank = view.node_rank,
                                   .bound = view.bound,
                                   .cpuset = view.bound ? (char *) view.cpuset : NULL,
                                   .moved = !orte_session_rank_mapped_here(nsj, rank)};
    uint32_t launched = s->local.launched;
    orte_session_procs_start_one(s, nsj, r, &p);
    if (s->local.launched > launched) {
        /* counted once per rank: herdrun compares it with the processes it mapped */
        s->local.launched--;
        nsj->launched--;
    }
    return true;
}
