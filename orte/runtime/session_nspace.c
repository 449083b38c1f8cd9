/* SPDX-License-Identifier: BSD-3-Clause */
/* The wireup as the session daemon hosts it: started (or left out when no program here could use
 * one), told of each namespace once its map is complete, before any of its processes starts,
 * and carrying its messages and its processes' aborts over the job's overlay. */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>

#include "opal/util/output.h"
#include "opal/util/show_help.h"
#include "orte/runtime/session_internal.h"

/* The namespace as the wireup modules see it, once its database is complete. Its node table:
 * the job's candidates, or (a spawn) the job's participants. */
static int register_wireup(orte_session_t *s, orte_session_nsjob_t *nsj)
{
    uint32_t np = s->launch->num_participants;
    uint32_t nn = nsj->num_nodes;
    nsj->node_names = calloc(nn > 0 ? nn : 1, sizeof(*nsj->node_names));
    nsj->node_vpid = malloc((nn > 0 ? nn : 1) * sizeof(*nsj->node_vpid));
    nsj->daemons = malloc((np > 0 ? np : 1) * sizeof(*nsj->daemons));
    nsj->local_ranks =
        malloc((nsj->num_local > 0 ? nsj->num_local : 1) * sizeof(*nsj->local_ranks));
    nsj->app_programs = calloc(nsj->spec->num_apps + 1, sizeof(*nsj->app_programs));
    if (NULL == nsj->node_names || NULL == nsj->node_vpid || NULL == nsj->daemons ||
        NULL == nsj->local_ranks || NULL == nsj->app_programs) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t a = 0; a < nsj->spec->num_apps; ++a) {
        nsj->app_programs[a] = nsj->spec->apps[a].argv[0];
    }
    for (uint32_t n = 0; n < nn; ++n) {
        nsj->node_vpid[n] = ORTE_VPID_INVALID;
    }
    for (uint32_t p = 0; p < np; ++p) {
        uint32_t c = s->launch->participants[p];
        uint32_t n = (0 == nsj->index) ? c : p;
        nsj->node_vpid[n] = p + 1;
        if (nsj->per_node[n] > 0) {
            nsj->daemons[nsj->num_daemons++] = p + 1;
        }
    }
    for (uint32_t n = 0; n < nn; ++n) {
        nsj->node_names[n] = s->nodes.nodes[0 == nsj->index ? n : s->launch->participants[n]].name;
    }
    for (uint32_t i = 0; i < nsj->num_local; ++i) {
        nsj->local_ranks[i] = s->local.records[nsj->first_record + i].rank - nsj->offset;
    }
    snprintf(nsj->name, sizeof(nsj->name), "herd.%s", nsj->spec->jobid);
    nsj->ns = (orte_wireup_nspace_t){
        .index = nsj->index,
        .name = nsj->name,
        .jobid = nsj->spec->jobid,
        .seq = s->spec->seq,
        .num_procs = nsj->num_procs,
        .num_apps = nsj->spec->num_apps,
        .universe_size = s->launch->universe_size,
        .num_nodes = nn,
        .node_names = nsj->node_names,
        .my_node = (0 == nsj->index) ? s->my_candidate : s->vpid - 1,
        .local_ranks = nsj->local_ranks,
        .num_local = nsj->num_local,
        .db = nsj->db,
        .db_name = opal_jobdb_name(nsj->db),
        .parent_nspace = nsj->parent_nspace,
        .parent_rank = nsj->parent_rank,
        .app_programs = nsj->app_programs,
    };
    int rc = orte_session_wireup_add_nspace(s->wireup.modules, &nsj->ns, nsj->daemons,
                                            nsj->num_daemons, nsj->node_vpid);
    nsj->registered = HERD_SUCCESS == rc;
    return rc;
}

/* The wireup was left out (no program here could use one) and a spawn brings processes here:
 * start it now, and tell it the namespaces mapped before this one. */
static int start_skipped_wireup(orte_session_t *s, const orte_session_nsjob_t *current)
{
    if (s->wireup.output >= 0) {
        opal_output_verbose(1, s->wireup.output,
                            "wireup on %s: a spawn brings processes that may use a wireup: "
                            "starting it now",
                            s->node_name);
    }
    s->wireup.skipped = false;
    int rc = orte_session_nspace_start_wireup(s);
    for (uint32_t k = 0; HERD_SUCCESS == rc && NULL != s->wireup.modules && k < s->map.num_jobs;
         ++k) {
        orte_session_nsjob_t *earlier = s->map.jobs[k];
        if (NULL != earlier && earlier != current && NULL != earlier->per_node &&
            !earlier->registered) {
            rc = register_wireup(s, earlier);
        }
    }
    return rc;
}

void orte_session_nspace_register_and_start(orte_session_t *s, orte_session_nsjob_t *nsj, int rc,
                                            const orte_job_spawn_t *sp)
{
    if (HERD_SUCCESS != rc) {
        s->local.aborting = true; /* the caller reports it, once */
    }
    int wrc = rc;
    if (HERD_SUCCESS == rc && s->wireup.skipped && NULL != sp && nsj->num_local > 0) {
        wrc = start_skipped_wireup(s, nsj);
    }
    if (HERD_SUCCESS == wrc && NULL != s->wireup.modules) {
        wrc = register_wireup(s, nsj);
        if (HERD_SUCCESS == wrc && NULL != sp && sp->num_preput > 0) {
            wrc = orte_session_wireup_preput(
                s->wireup.modules, nsj->index, (const char *const *) sp->preput_keys,
                (const char *const *) sp->preput_values, sp->num_preput);
        }
        if (HERD_SUCCESS != wrc) {
            opal_show_help(ORTE_SESSION_HELP, "wireup-register-failed", false, s->node_name,
                           nsj->spec->jobid, opal_strerror(wrc));
        }
    }
    orte_session_procs_start_held(s, nsj, wrc);
}

/* ------------------------------------------------------------------------------------------ */
/* what the wireup asks of the session */

static int wireup_send(void *ctx, orte_vpid_t dst, uint16_t tag, const struct iovec *iov,
                       int iovcnt)
{
    orte_session_t *s = ctx;
    if (NULL == s->overlay) {
        return HERD_ERR_UNREACH;
    }
    return s->ovl->sendv(s->overlay, dst, tag, iov, iovcnt);
}

void orte_session_nspace_wireup_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                     const void *data, size_t length, void *arg)
{
    orte_session_t *s = arg;
    orte_session_wireup_deliver(s->wireup.modules, src, tag, data, length);
}

/* A process asked for the job to be aborted: the shepherd ends the job and herdrun shows the
 * message. Its record says so from now on, whatever its exit looks like. */
static void wireup_abort(void *ctx, uint32_t nspace, uint32_t rank, int status, const char *message)
{
    orte_session_t *s = ctx;
    orte_proc_record_t *r = (nspace < s->map.num_jobs)
                                ? orte_session_record_find(s, s->map.jobs[nspace]->offset + rank)
                                : NULL;
    if (NULL == r || ORTE_PROC_ABORTED == r->state) {
        return;
    }
    r->state = ORTE_PROC_ABORTED;
    /* what a shell would see of exit(status) */
    r->exit_code = status & 0xff;
    if (0 == r->exit_code && 0 != status) {
        r->exit_code = 1;
    }
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == orte_proc_record_pack(&buffer, r) &&
        HERD_SUCCESS == opal_buffer_pack_string(&buffer, NULL != message ? message : "")) {
        orte_session_send_buffer(s, ORTE_SESSION_SHEPHERD, ORTE_SESSION_TAG_ABORTED, &buffer);
    }
    opal_buffer_destruct(&buffer);
}

/* A process asked for job control of processes of this node (PMIx_Job_control). */
static int wireup_signal(void *ctx, uint32_t nspace, uint32_t rank, orte_wireup_signal_how_t how,
                         int signo)
{
    orte_session_t *s = ctx;
    if (nspace >= s->map.num_jobs || NULL == s->map.jobs[nspace]) {
        return HERD_ERR_NOT_FOUND;
    }
    return orte_session_procs_signal(s, s->map.jobs[nspace], rank, how, signo);
}

static bool wireup_aborting(void *ctx)
{
    orte_session_t *s = ctx;
    return s->local.aborting;
}

/* The wireup modules, once the overlay can carry the engine's messages. */
int orte_session_nspace_start_wireup(orte_session_t *s)
{
    orte_session_wireup_config_t config = {.base = s->base,
                                           .node_name = s->node_name,
                                           .me = s->vpid,
                                           .names = ORTE_SESSION_SHEPHERD,
                                           .radix = s->launch->radix,
                                           .send = wireup_send,
                                           .abort = wireup_abort,
                                           .spawn = orte_session_spawn_request,
                                           .signal = wireup_signal,
                                           .aborting = wireup_aborting,
                                           .ctx = s};
    return orte_session_wireup_start(&config, &s->wireup.modules);
}
