/* SPDX-License-Identifier: BSD-3-Clause */
/* errmgr restart after a node loss, on the session daemons' side: the node herdrun chose starts
 * the lost node's ranks with their rank, app and environment (RELOCATE, answered by RELOCATED),
 * and every session daemon, told where they went (MOVED), points its job database at their new
 * node; the shepherd stops waiting for the lost daemon. docs/errmgr.md. */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_var.h"
#include "opal/util/show_help.h"
#include "orte/runtime/relocate.h"
#include "orte/runtime/session_internal.h"

/* errmgr_restart_max as this daemon's error manager sees it (0 when unknown). */
static uint32_t restart_max(void)
{
    char *value = NULL;
    int index = opal_mca_var_find("errmgr_restart_max");
    uint32_t max = 0;
    if (index >= 0 && HERD_SUCCESS == opal_mca_var_value_string(index, &value) && NULL != value) {
        long v = strtol(value, NULL, 10);
        max = v > 0 ? (uint32_t) v : 0;
    }
    free(value);
    return max;
}

static void send_relocated(orte_session_t *s, orte_relocate_msg_t *answer, int status,
                           const char *reason)
{
    answer->status = status;
    answer->reason = (char *) reason;
    answer->max_restarts = restart_max();
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == orte_relocate_msg_pack(&buffer, answer)) {
        orte_session_send_buffer(s, 0, ORTE_SESSION_TAG_RELOCATED, &buffer);
    }
    opal_buffer_destruct(&buffer);
    answer->reason = NULL;
}

bool orte_session_rank_mapped_here(const orte_session_nsjob_t *nsj, uint32_t rank)
{
    uint32_t lo = 0, hi = NULL != nsj->local_ranks ? nsj->num_local : 0;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (nsj->local_ranks[mid] == rank) {
            return true;
        }
        if (nsj->local_ranks[mid] < rank) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return false;
}

/* herdrun's count of rank's earlier restarts (0 when it sent none). */
static uint32_t known_restarts(const orte_relocate_msg_t *ask, uint32_t rank)
{
    for (uint32_t i = 0; i < ask->num_ranks; ++i) {
        if (ask->ranks[i].rank == rank) {
            return ask->ranks[i].restarts;
        }
    }
    return 0;
}

/* The ranks of the lost node, each with the restart it gets now, in answer->ranks; a reason in
 * why (and HERD_ERR_...) when one of them may not move. */
static int collect_lost(orte_session_t *s, orte_session_nsjob_t *nsj,
                        const orte_relocate_msg_t *ask, orte_relocate_msg_t *answer, char *why,
                        size_t size)
{
    const orte_errmgr_module_t *errmgr = orte_session_restart_errmgr(s);
    const char *lost_node =
        ask->lost_candidate < s->nodes.num ? s->nodes.nodes[ask->lost_candidate].name : "?";
    answer->ranks = calloc(nsj->num_procs > 0 ? nsj->num_procs : 1, sizeof(*answer->ranks));
    if (NULL == answer->ranks || NULL == errmgr) {
        snprintf(why, size, "its error manager could not be opened on %s", s->node_name);
        return HERD_ERR_NOT_FOUND;
    }
    for (uint32_t rank = 0; rank < nsj->num_procs; ++rank) {
        opal_jobdb_proc_view_t view;
        if (HERD_SUCCESS != opal_jobdb_get_proc(nsj->db, rank, &view) ||
            view.node != ask->lost_candidate) {
            continue;
        }
        uint32_t restarts = known_restarts(ask, rank);
        orte_errmgr_failure_t failure = {.event = ORTE_ERRMGR_PROC_LOST,
                                         .rank = rank,
                                         .node = lost_node,
                                         .exit_code = 1,
                                         .restarts = restarts};
        if (ORTE_ERRMGR_RESTART_PROC != orte_errmgr_base_decide(&failure)) {
            snprintf(why, size, "rank %u has used its %u restart%s (errmgr_restart_max)", rank,
                     restarts, 1 == restarts ? "" : "s");
            return HERD_ERR_NOT_AVAILABLE;
        }
        answer->ranks[answer->num_ranks++] =
            (orte_relocate_rank_t){.rank = rank, .restarts = restarts + 1, .pid = 0};
    }
    return HERD_SUCCESS;
}

/* Start answer's ranks here; the pid of each in answer (0: it could not start). */
static void start_moved(orte_session_t *s, orte_session_nsjob_t *nsj, orte_relocate_msg_t *answer)
{
    if (s->local.done_sent) {
        /* this node had finished: it has processes again (as after a spawn) */
        s->local.done_sent = false;
        s->io.drained = false;
        opal_buffer_t buffer;
        opal_buffer_init(&buffer);
        orte_session_send_buffer(s, ORTE_SESSION_SHEPHERD, ORTE_SESSION_TAG_REOPEN, &buffer);
        opal_buffer_destruct(&buffer);
    }
    for (uint32_t i = 0; i < answer->num_ranks; ++i) {
        orte_relocate_rank_t *m = &answer->ranks[i];
        opal_jobdb_proc_view_t view;
        if (HERD_SUCCESS != opal_jobdb_get_proc(nsj->db, m->rank, &view) ||
            HERD_SUCCESS != orte_session_records_reserve(s, 1)) {
            continue;
        }
        /* appended: record_find looks past the sorted ones for it */
        orte_proc_record_t *r = &s->local.records[s->local.num_records++];
        *r = (orte_proc_record_t){.rank = nsj->offset + m->rank,
                                  .node = s->my_candidate,
                                  .app = view.app,
                                  .restarts = m->restarts};
        /* its old binding was to the lost node's cores: unbound here */
        orte_session_local_proc_t p = {.rank = m->rank,
                                       .app = view.app,
                                       .local_rank = nsj->local_size,
                                       .node_rank = nsj->local_size,
                                       .bound = false,
                                       .moved = true};
        nsj->local_size++;
        (void) opal_jobdb_move_proc(nsj->db, m->rank, s->my_candidate);
        orte_session_procs_start_one(s, nsj, r, &p);
        m->pid = r->pid;
    }
}

void orte_session_relocate_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                const void *data, size_t length, void *arg)
{
    orte_session_t *s = arg;
    orte_session_nsjob_t *nsj = s->map.num_jobs > 0 ? s->map.jobs[0] : NULL;
    orte_relocate_msg_t ask;
    if (0 != src || NULL == nsj ||
        HERD_SUCCESS != orte_relocate_msg_unpack(data, length, nsj->num_procs, &ask)) {
        opal_show_help(ORTE_SESSION_HELP, "malformed-relocate", false, s->node_name, src);
        return;
    }
    orte_relocate_msg_t answer = {.lost_vpid = ask.lost_vpid,
                                  .lost_candidate = ask.lost_candidate,
                                  .to_candidate = s->my_candidate};
    char why[256] = "";
    int rc = HERD_ERR_NOT_AVAILABLE;
    if (!s->map.done || NULL == nsj->db || s->local.aborting) {
        snprintf(why, sizeof(why), "the job is %s on %s",
                 s->local.aborting ? "being stopped" : "not mapped yet", s->node_name);
    } else {
        rc = collect_lost(s, nsj, &ask, &answer, why, sizeof(why));
    }
    if (HERD_SUCCESS == rc) {
        start_moved(s, nsj, &answer);
    } else {
        answer.num_ranks = 0;
    }
    send_relocated(s, &answer, rc, HERD_SUCCESS == rc ? NULL : why);
    orte_relocate_msg_free(&answer);
    orte_relocate_msg_free(&ask);
    orte_session_procs_finish(s);
}

void orte_session_relocate_recv_moved(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                      const void *data, size_t length, void *arg)
{
    orte_session_t *s = arg;
    orte_session_nsjob_t *nsj = s->map.num_jobs > 0 ? s->map.jobs[0] : NULL;
    orte_relocate_msg_t moved;
    if (0 != src || NULL == nsj ||
        HERD_SUCCESS != orte_relocate_msg_unpack(data, length, nsj->num_procs, &moved)) {
        opal_show_help(ORTE_SESSION_HELP, "malformed-relocate", false, s->node_name, src);
        return;
    }
    for (uint32_t i = 0; NULL != nsj->db && i < moved.num_ranks; ++i) {
        /* the libherd processes here find the rank's new node in the database from now on */
        (void) opal_jobdb_move_proc(nsj->db, moved.ranks[i].rank, moved.to_candidate);
    }
    if (ORTE_SESSION_SHEPHERD == s->vpid) {
        orte_session_shepherd_moved(s, moved.lost_vpid);
    }
    orte_relocate_msg_free(&moved);
}
