/* SPDX-License-Identifier: BSD-3-Clause */
/* errmgr restart after a node loss, on herdrun's side: when a session daemon says its node
 * daemon died (NODE_LOST) and the job's error manager restarts lost processes, herdrun chooses
 * another live node of the job (the most free slots, ties by the lowest index; slots respected
 * unless --oversubscribe), asks its session daemon to start the lost node's ranks
 * (RELOCATE), says each moved rank once it answers (RELOCATED), and tells every session daemon
 * where they went (MOVED). When nothing can take them the job ends as before, naming the node.
 * docs/errmgr.md. */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/show_help.h"
#include "orte/mca/errmgr/errmgr.h"
#include "orte/runtime/launch_internal.h"
#include "orte/runtime/relocate.h"
#include "orte/runtime/session.h"
#include "orte/util/radix.h"

static int ensure_state(launch_job_t *job)
{
    launch_relocation_t *rl = &job->relocation;
    if (NULL == rl->gone) {
        rl->gone = calloc(job->daemons.size > 0 ? job->daemons.size : 1, sizeof(*rl->gone));
    }
    if (NULL == rl->restarts) {
        rl->restarts =
            calloc(job->plan.num_procs > 0 ? job->plan.num_procs : 1, sizeof(*rl->restarts));
    }
    return (NULL == rl->gone || NULL == rl->restarts) ? HERD_ERR_OUT_OF_RESOURCE : HERD_SUCCESS;
}

/* Whether the job's error manager starts lost processes again (asked as for a first loss). */
static bool restart_wanted(launch_job_t *job)
{
    bool was_open = NULL != orte_errmgr_base_module();
    if (HERD_SUCCESS != orte_errmgr_base_open()) {
        return false;
    }
    job->relocation.opened_errmgr = job->relocation.opened_errmgr || !was_open;
    const orte_errmgr_module_t *m = orte_errmgr_base_module();
    orte_errmgr_failure_t probe = {.event = ORTE_ERRMGR_PROC_LOST, .rank = 0, .node = "?"};
    return NULL != m && ORTE_ERRMGR_RESTART_PROC == m->decide(&probe);
}

/* The live node of the job that takes lost's processes (its vpid), or 0 with why. */
static orte_vpid_t choose_target(launch_job_t *job, orte_vpid_t lost, char *why, size_t size)
{
    const orte_job_launch_t *launch = &job->plan.launch;
    uint32_t lost_c = launch->participants[lost - 1];
    uint32_t need = NULL != job->spawns.used ? job->spawns.used[lost_c] : 0;
    orte_relocate_node_t *nodes = calloc(launch->num_participants, sizeof(*nodes));
    if (NULL == nodes) {
        snprintf(why, size, "out of memory");
        return 0;
    }
    for (uint32_t p = 0; p < launch->num_participants; ++p) {
        uint32_t c = launch->participants[p];
        nodes[p] = (orte_relocate_node_t){
            .slots = c < job->plan.nodes.num ? job->plan.nodes.nodes[c].slots : 0,
            .used = NULL != job->spawns.used ? job->spawns.used[c] : 0,
            .live = p + 1 != lost && !job->relocation.gone[p + 1]};
    }
    uint32_t p =
        orte_relocate_choose(nodes, launch->num_participants, need, job->spec->oversubscribe);
    free(nodes);
    if (UINT32_MAX == p) {
        snprintf(why, size,
                 "no other live node of the job has %u free slot%s for %s (--oversubscribe "
                 "allows more processes than slots)",
                 need, 1 == need ? "" : "s", 1 == need ? "it" : "them");
        return 0;
    }
    return p + 1;
}

/* Why lost's processes cannot be moved at all (NULL: they can be). */
static const char *cannot_move(const launch_job_t *job, orte_vpid_t lost)
{
    if (ORTE_SESSION_SHEPHERD == lost) {
        return "its session daemon was the job's shepherd (it gathers every exit)";
    }
    if (0 != orte_radix_parent(lost, job->plan.launch.radix) ||
        orte_radix_subtree_size(lost, job->daemons.size, job->plan.launch.radix) > 1) {
        return "other nodes' session daemons were reached through it";
    }
    if (0 != job->relocation.pending) {
        return "another lost node's processes are being moved";
    }
    if (NULL != job->spawns.ops || job->spawns.num_spawns > 0) {
        return "the job has spawned processes";
    }
    return NULL;
}

static void give_up(launch_job_t *job, orte_vpid_t lost, const char *why)
{
    uint32_t c = job->plan.launch.participants[lost - 1];
    opal_show_help(LAUNCH_HELP_FILE, "node-lost-not-moved", false, job->spec->jobid,
                   launch_job_node_name(job, c), why);
    if (0 == job->state.exit_status) {
        job->state.exit_status = 1;
    }
    launch_job_abort(job, 0);
}

static int send_relocate(launch_job_t *job, orte_vpid_t lost, orte_vpid_t target)
{
    launch_relocation_t *rl = &job->relocation;
    orte_relocate_msg_t ask = {.lost_vpid = lost,
                               .lost_candidate = job->plan.launch.participants[lost - 1],
                               .to_candidate = job->plan.launch.participants[target - 1]};
    ask.ranks = calloc(job->plan.num_procs > 0 ? job->plan.num_procs : 1, sizeof(*ask.ranks));
    if (NULL == ask.ranks) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t r = 0; r < job->plan.num_procs; ++r) {
        if (rl->restarts[r] > 0) {
            ask.ranks[ask.num_ranks++] =
                (orte_relocate_rank_t){.rank = r, .restarts = rl->restarts[r]};
        }
    }
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    int rc = orte_relocate_msg_pack(&buffer, &ask);
    if (HERD_SUCCESS == rc) {
        rc = job->daemons.ovl->send(job->daemons.overlay, target, ORTE_SESSION_TAG_RELOCATE,
                                    buffer.base, buffer.used);
    }
    opal_buffer_destruct(&buffer);
    free(ask.ranks);
    return rc;
}

bool launch_relocate_node_lost(launch_job_t *job, orte_vpid_t lost)
{
    launch_relocation_t *rl = &job->relocation;
    if (job->state.aborting || job->state.finished || lost == 0 || lost >= job->daemons.size ||
        HERD_SUCCESS != ensure_state(job) || rl->gone[lost] || !restart_wanted(job)) {
        return false;
    }
    rl->gone[lost] = true;
    char why[256];
    const char *no = cannot_move(job, lost);
    orte_vpid_t target = (NULL == no) ? choose_target(job, lost, why, sizeof(why)) : 0;
    if (0 == target) {
        give_up(job, lost, NULL != no ? no : why);
        return true;
    }
    int rc = send_relocate(job, lost, target);
    if (HERD_SUCCESS != rc) {
        snprintf(why, sizeof(why), "the chosen node could not be asked (%s)", opal_strerror(rc));
        give_up(job, lost, why);
        return true;
    }
    rl->pending = lost;
    rl->target = target;
    /* the target had finished: it has processes again, and says when they are done */
    rl->target_had_eof = job->daemons.eof[target];
    if (rl->target_had_eof) {
        job->daemons.eof[target] = false;
        job->daemons.num_eof--;
    }
    return true;
}

bool launch_relocate_gone(const launch_job_t *job, orte_vpid_t vpid)
{
    return NULL != job->relocation.gone && vpid < job->daemons.size && job->relocation.gone[vpid];
}

bool launch_relocate_pending(const launch_job_t *job)
{
    return 0 != job->relocation.pending && !job->state.aborting;
}

void launch_relocate_note_restart(launch_job_t *job, uint32_t rank, uint32_t restarts)
{
    if (rank < job->plan.num_procs && HERD_SUCCESS == ensure_state(job) &&
        restarts > job->relocation.restarts[rank]) {
        job->relocation.restarts[rank] = restarts;
    }
}

/* Every live session daemon learns where the ranks went; the shepherd stops waiting for the
 * lost one. */
static void send_moved(launch_job_t *job, const orte_relocate_msg_t *answer)
{
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    orte_relocate_msg_t moved = *answer;
    moved.status = HERD_SUCCESS;
    moved.reason = NULL;
    if (HERD_SUCCESS == orte_relocate_msg_pack(&buffer, &moved)) {
        for (orte_vpid_t v = 1; v < job->daemons.size; ++v) {
            if (!job->relocation.gone[v]) {
                (void) job->daemons.ovl->send(job->daemons.overlay, v, ORTE_SESSION_TAG_MOVED,
                                              buffer.base, buffer.used);
            }
        }
    }
    opal_buffer_destruct(&buffer);
}

static void say_moved(launch_job_t *job, const orte_relocate_msg_t *answer)
{
    const char *from = launch_job_node_name(job, answer->lost_candidate);
    const char *to = launch_job_node_name(job, answer->to_candidate);
    for (uint32_t i = 0; i < answer->num_ranks; ++i) {
        const orte_relocate_rank_t *m = &answer->ranks[i];
        char max[32] = "";
        if (answer->max_restarts > 0) {
            snprintf(max, sizeof(max), " of %u", answer->max_restarts);
        }
        opal_show_help(LAUNCH_HELP_FILE, "proc-moved", false, job->spec->jobid, m->rank, from, to,
                       m->restarts, max);
        if (NULL != job->io.sink && NULL != job->io.iof->sink_rank_moved) {
            job->io.iof->sink_rank_moved(job->io.sink, m->rank);
        }
        launch_relocate_note_restart(job, m->rank, m->restarts);
        launch_tools_moved(job, m->rank, answer->to_candidate, m->pid);
    }
    fflush(stderr);
    if (NULL != job->spawns.used && answer->lost_candidate < job->plan.nodes.num &&
        answer->to_candidate < job->plan.nodes.num) {
        job->spawns.used[answer->lost_candidate] -= answer->num_ranks;
        job->spawns.used[answer->to_candidate] += answer->num_ranks;
    }
}

void launch_relocate_recv_answer(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                 const void *data, size_t length, void *arg)
{
    launch_job_t *job = arg;
    launch_relocation_t *rl = &job->relocation;
    orte_relocate_msg_t answer;
    if (0 == rl->pending || src != rl->target ||
        HERD_SUCCESS != orte_relocate_msg_unpack(data, length, job->plan.num_procs, &answer)) {
        opal_show_help(LAUNCH_HELP_FILE, "malformed-relocated", false, src);
        return;
    }
    orte_vpid_t lost = rl->pending;
    rl->pending = 0;
    if (answer.lost_vpid != lost || HERD_SUCCESS != answer.status) {
        if (rl->target_had_eof && !job->daemons.eof[src]) {
            /* it sends no second EOF: nothing started there */
            job->daemons.eof[src] = true;
            job->daemons.num_eof++;
        }
        give_up(job, lost, NULL != answer.reason ? answer.reason : "the chosen node refused");
    } else if (!job->state.aborting) {
        say_moved(job, &answer);
        send_moved(job, &answer);
    }
    orte_relocate_msg_free(&answer);
    launch_job_check_finished(job);
}

void launch_relocate_release(launch_job_t *job)
{
    if (job->relocation.opened_errmgr) {
        orte_errmgr_base_close();
    }
    free(job->relocation.gone);
    free(job->relocation.restarts);
    memset(&job->relocation, 0, sizeof(job->relocation));
}
