/* SPDX-License-Identifier: BSD-3-Clause */
/* wireup pmix: PMIx_Job_control. What herd does:
 *   PMIX_JOB_CTRL_KILL       SIGKILL to the targets now;
 *   PMIX_JOB_CTRL_TERMINATE  SIGTERM, then SIGKILL after the job's kill grace;
 *   PMIX_JOB_CTRL_SIGNAL     that signal to the targets, nothing more;
 *   PMIX_JOB_CTRL_PAUSE, _RESUME  SIGSTOP, SIGCONT.
 * The targets are the caller's whole job (no target), every process of a namespace of the job
 * (PMIX_RANK_WILDCARD), or named processes, on any node: the asking daemon sends one request per
 * daemon hosting them (the engine's CTRL requests), and answers the caller once all are done.
 * Processes killed so ended because they were asked to: not failures of their own (the job goes
 * on without them, and ends with the status of the others); the asking daemon says who asked to
 * kill whom. PMIX_JOB_CTRL_PREEMPTIBLE and _CHECKPOINT_METHOD only inform: herd never preempts
 * nor checkpoints a job, and takes note. Checkpoint, restart, cancel and provisioning requests
 * are refused with PMIX_ERR_NOT_SUPPORTED. (Cleanup registrations, PMIX_REGISTER_CLEANUP and its
 * kin, never come here: the PMIx library keeps them itself.) */
#include "herd_config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/jobdb.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"
#include "orte/mca/wireup/pmix/wireup_pmix.h"

/* A request to another daemon answers within this (it only signals processes). */
#define JCTRL_TIMEOUT_MS 5000

typedef struct jctrl {
    orte_wireup_signal_how_t how;
    int signo;
} jctrl_t;

/* ------------------------------------------------------------------------------------------ */
/* at the daemons hosting the targets */

void wireup_pmix_ctrl_handler(void *ctx, uint32_t nspace, uint32_t rank, const char *key,
                              int timeout_ms, orte_wireup_ticket_t *ticket)
{
    wireup_pmix_state_t *st = ctx;
    int how = 0, signo = 0;
    char scope[8] = "";
    if (NULL == key || 3 != sscanf(key, "%d %d %7s", &how, &signo, scope) ||
        how < ORTE_WIREUP_SIGNAL || how > ORTE_WIREUP_TERMINATE || signo < 0 || signo >= NSIG ||
        (0 != strcmp(scope, "all") && 0 != strcmp(scope, "one"))) {
        orte_wireup_dmodex_reply(ticket, HERD_ERR_BAD_PARAM, NULL, 0, "a malformed job control");
        return;
    }
    bool all = 0 == strcmp(scope, "all");
    int rc = st->host->signal(st->host->ctx, nspace, all ? ORTE_WIREUP_RANK_WILDCARD : rank,
                              (orte_wireup_signal_how_t) how, signo);
    wireup_pmix_ns_t *pns = (nspace < st->num_nss) ? st->nss[nspace] : NULL;
    for (uint32_t l = 0;
         HERD_SUCCESS == rc && ORTE_WIREUP_SIGNAL != how && NULL != pns && l < pns->num_local;
         ++l) {
        if (all || pns->locals[l].rank == rank) {
            pns->locals[l].killed = true;
        }
    }
    /* a process that ended already was not found: nothing left to do */
    orte_wireup_dmodex_reply(ticket, HERD_ERR_NOT_FOUND == rc ? HERD_SUCCESS : rc, NULL, 0,
                             HERD_SUCCESS == rc || HERD_ERR_NOT_FOUND == rc
                                 ? NULL
                                 : "the session daemon could not signal its processes");
}

/* ------------------------------------------------------------------------------------------ */
/* at the asking daemon */

static void part_done(int status, const void *value, size_t len, const char *error, void *cbdata)
{
    wireup_pmix_call_t *c = cbdata;
    if (HERD_SUCCESS != status && HERD_SUCCESS == c->first_error) {
        c->first_error = status;
        opal_output_verbose(1, wireup_pmix_output(), "wireup pmix: a job control of %s:%u: %s",
                            c->proc.nspace, c->proc.rank,
                            NULL != error ? error : opal_strerror(status));
    }
    if (0 == --c->pending) {
        wireup_pmix_answer_op(c, wireup_pmix_status(c->first_error));
        wireup_pmix_call_free(c);
    }
}

/* One request to the daemon hosting rank of pns (every process of pns there, with all). */
static void send_part(wireup_pmix_call_t *c, const wireup_pmix_ns_t *pns, uint32_t rank, bool all)
{
    const jctrl_t *j = c->part_data;
    char key[64];
    snprintf(key, sizeof(key), "%d %d %s", (int) j->how, j->signo, all ? "all" : "one");
    c->pending++;
    int rc = orte_wireup_dmodex(c->st->host->engine, pns->ns->index, rank, ORTE_WIREUP_KIND_CTRL,
                                key, JCTRL_TIMEOUT_MS, part_done, c);
    if (HERD_SUCCESS != rc) {
        part_done(rc, NULL, 0, NULL, c);
    }
}

/* Every process of pns: one request per node hosting some, naming its first rank there. */
static int send_all(wireup_pmix_call_t *c, const wireup_pmix_ns_t *pns)
{
    const orte_wireup_nspace_t *ns = pns->ns;
    bool *seen = calloc(ns->num_nodes > 0 ? ns->num_nodes : 1, sizeof(*seen));
    if (NULL == seen) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t r = 0; r < ns->num_procs; ++r) {
        opal_jobdb_proc_view_t view;
        if (HERD_SUCCESS == opal_jobdb_get_proc(ns->db, r, &view) && view.node < ns->num_nodes &&
            !seen[view.node]) {
            seen[view.node] = true;
            send_part(c, pns, r, true);
        }
    }
    free(seen);
    return HERD_SUCCESS;
}

static const char *how_words(const jctrl_t *j, char *text, size_t size)
{
    switch (j->how) {
    case ORTE_WIREUP_KILL:
        return "kill";
    case ORTE_WIREUP_TERMINATE:
        return "terminate";
    default:
        if (SIGSTOP == j->signo) {
            return "pause";
        }
        if (SIGCONT == j->signo) {
            return "resume";
        }
        snprintf(text, size, "send signal %d (%s) to", j->signo, strsignal(j->signo));
        return text;
    }
}

/* Say who asked for what, among the job's output (the processes it kills end without a word). */
static void say(wireup_pmix_call_t *c, const pmix_proc_t *targets, size_t n)
{
    const jctrl_t *j = c->part_data;
    char how[96], whom[PMIX_MAX_NSLEN + 64];
    wireup_pmix_ns_t *asker = wireup_pmix_find_ns(c->st, c->proc.nspace);
    if (1 == n && PMIX_RANK_WILDCARD == targets[0].rank) {
        snprintf(whom, sizeof(whom), "every process of %s", targets[0].nspace);
    } else if (1 == n) {
        snprintf(whom, sizeof(whom), "rank %u of %s", targets[0].rank, targets[0].nspace);
    } else {
        snprintf(whom, sizeof(whom), "%zu processes", n);
    }
    opal_show_help(WIREUP_PMIX_HELP, "job-control", false, c->st->host->node_name,
                   NULL != asker ? asker->ns->jobid : c->proc.nspace, c->proc.rank,
                   how_words(j, how, sizeof(how)), whom);
}

static void run_jctrl(wireup_pmix_call_t *c)
{
    pmix_proc_t own;
    const pmix_proc_t *targets = c->procs;
    size_t n = c->nprocs;
    if (0 == n) {
        /* no target: the caller's own job */
        PMIX_LOAD_PROCID(&own, c->proc.nspace, PMIX_RANK_WILDCARD);
        targets = &own;
        n = 1;
    }
    /* every target checked before anything is done */
    for (size_t i = 0; i < n; ++i) {
        wireup_pmix_ns_t *pns = wireup_pmix_find_ns(c->st, targets[i].nspace);
        if (NULL == pns ||
            (PMIX_RANK_WILDCARD != targets[i].rank && targets[i].rank >= pns->ns->num_procs)) {
            wireup_pmix_answer_op(c, NULL == pns ? PMIX_ERR_NOT_FOUND : PMIX_ERR_BAD_PARAM);
            wireup_pmix_call_free(c);
            return;
        }
    }
    say(c, targets, n);
    c->pending = 1; /* held until every part started */
    for (size_t i = 0; i < n; ++i) {
        wireup_pmix_ns_t *pns = wireup_pmix_find_ns(c->st, targets[i].nspace);
        if (PMIX_RANK_WILDCARD == targets[i].rank) {
            int rc = send_all(c, pns);
            if (HERD_SUCCESS != rc && HERD_SUCCESS == c->first_error) {
                c->first_error = rc;
            }
        } else {
            send_part(c, pns, targets[i].rank, false);
        }
    }
    part_done(HERD_SUCCESS, NULL, 0, NULL, c);
}

/* ------------------------------------------------------------------------------------------ */
/* the upcall (the library's thread) */

/* What the directives ask: PMIX_SUCCESS with *j set (how 0: nothing to do, only information),
 * or PMIX_ERR_NOT_SUPPORTED. */
static pmix_status_t read_directives(const pmix_info_t dirs[], size_t n, jctrl_t *j)
{
    j->how = 0;
    j->signo = 0;
    bool informed = false;
    for (size_t i = 0; i < n; ++i) {
        const pmix_info_t *d = &dirs[i];
        bool action = 0 == j->how;
        if (PMIX_CHECK_KEY(d, PMIX_JOB_CTRL_KILL) && PMIX_INFO_TRUE(d)) {
            *j = action ? (jctrl_t){ORTE_WIREUP_KILL, SIGKILL} : *j;
        } else if (PMIX_CHECK_KEY(d, PMIX_JOB_CTRL_TERMINATE) && PMIX_INFO_TRUE(d)) {
            *j = action ? (jctrl_t){ORTE_WIREUP_TERMINATE, SIGTERM} : *j;
        } else if (PMIX_CHECK_KEY(d, PMIX_JOB_CTRL_SIGNAL)) {
            int signo = (PMIX_INT == d->value.type) ? d->value.data.integer : -1;
            if (signo <= 0 || signo >= NSIG) {
                return PMIX_ERR_BAD_PARAM;
            }
            *j = action ? (jctrl_t){ORTE_WIREUP_SIGNAL, signo} : *j;
        } else if (PMIX_CHECK_KEY(d, PMIX_JOB_CTRL_PAUSE) && PMIX_INFO_TRUE(d)) {
            *j = action ? (jctrl_t){ORTE_WIREUP_SIGNAL, SIGSTOP} : *j;
        } else if (PMIX_CHECK_KEY(d, PMIX_JOB_CTRL_RESUME) && PMIX_INFO_TRUE(d)) {
            *j = action ? (jctrl_t){ORTE_WIREUP_SIGNAL, SIGCONT} : *j;
        } else if (PMIX_CHECK_KEY(d, PMIX_JOB_CTRL_PREEMPTIBLE) ||
                   PMIX_CHECK_KEY(d, PMIX_JOB_CTRL_CHECKPOINT_METHOD) ||
                   PMIX_CHECK_KEY(d, PMIX_JOB_CTRL_ID)) {
            informed = true;
        } else {
            /* checkpoint, restart, cancel, provisioning, and anything unknown */
            opal_output_verbose(5, wireup_pmix_output(),
                                "wireup pmix: job control %s is not offered by herd", d->key);
            return PMIX_ERR_NOT_SUPPORTED;
        }
    }
    return (0 != j->how || informed) ? PMIX_SUCCESS : PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t wireup_pmix_up_job_control(const pmix_proc_t *requestor, const pmix_proc_t targets[],
                                         size_t ntargets, const pmix_info_t directives[],
                                         size_t ndirs, pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    jctrl_t j;
    pmix_status_t prc = read_directives(directives, ndirs, &j);
    if (PMIX_SUCCESS != prc) {
        return prc;
    }
    if (0 == j.how) {
        return PMIX_OPERATION_SUCCEEDED; /* noted: herd never preempts nor checkpoints */
    }
    if (NULL == requestor) {
        return PMIX_ERR_BAD_PARAM; /* a tool: not served by a session daemon */
    }
    wireup_pmix_call_t *c = wireup_pmix_call_new(requestor, run_jctrl, wireup_pmix_refuse_op);
    if (NULL == c) {
        return PMIX_ERR_UNREACH;
    }
    c->info_cb = cbfunc;
    c->cbdata = cbdata;
    c->part_data = malloc(sizeof(jctrl_t));
    c->procs = malloc((ntargets > 0 ? ntargets : 1) * sizeof(*c->procs));
    if (NULL == c->part_data || NULL == c->procs) {
        wireup_pmix_call_free(c);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    *(jctrl_t *) c->part_data = j;
    if (ntargets > 0) {
        memcpy(c->procs, targets, ntargets * sizeof(*targets));
    }
    c->nprocs = ntargets;
    return wireup_pmix_call_queue(c);
}
