/* SPDX-License-Identifier: BSD-3-Clause */
/* Spawns on herdrun's side: a process asks for more processes (MPI_Comm_spawn); herdrun plans
 * them on the job's nodes (reporting an impossible map now, once), then every session daemon
 * maps and starts its share and acknowledges; the asking daemon hears once all have. */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/argv.h"
#include "opal/util/jobdb.h"
#include "opal/util/show_help.h"
#include "orte/runtime/launch_internal.h"
#include "orte/runtime/session.h"

/* A namespace the job spawned: its processes' ids are offset .. offset + size - 1. */
struct launch_spawned {
    uint32_t offset;
    uint32_t size;
};

/* A spawn being started. */
struct launch_spawn_op {
    struct launch_spawn_op *next;
    uint32_t nspace;
    orte_vpid_t requester;
    uint32_t req_id;
    uint32_t acks;
    int status;
    char *error;
};

static void spawn_respond(launch_job_t *job, orte_vpid_t requester, uint32_t req_id, int status,
                          uint32_t nspace, const char *error)
{
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_pack_uint32(&buffer, req_id) &&
        HERD_SUCCESS == opal_buffer_pack_int32(&buffer, status) &&
        HERD_SUCCESS == opal_buffer_pack_uint32(&buffer, nspace) &&
        HERD_SUCCESS == opal_buffer_pack_string(&buffer, NULL != error ? error : "")) {
        job->daemons.ovl->send(job->daemons.overlay, requester, ORTE_SESSION_TAG_SPAWN_RESP,
                               buffer.base, buffer.used);
    }
    opal_buffer_destruct(&buffer);
}

/* What the job's processes of a spawn get that the asking process did not say. */
static int complete_spawn(launch_job_t *job, orte_job_spec_t *c, uint32_t nspace)
{
    const orte_job_spec_t *spec = job->spec;
    char jobid[OPAL_JOBDB_ID_MAX];
    snprintf(jobid, sizeof(jobid), "%s.%u", spec->jobid, nspace);
    free(c->jobid);
    c->jobid = strdup(jobid);
    c->seq = spec->seq;
    c->flags = spec->flags & ORTE_JOB_FLAG_REPORT_BINDINGS;
    c->oversubscribe = spec->oversubscribe;
    c->nooversubscribe = spec->nooversubscribe;
    c->stdin_target = ORTE_IOF_STDIN_NONE;
    c->kill_grace_ms = spec->kill_grace_ms;
    opal_argv_free(c->hosts);
    c->hosts = NULL;
    opal_argv_free(c->mca);
    c->mca = opal_argv_copy(spec->mca);
    for (uint32_t a = 0; a < c->num_apps; ++a) {
        orte_job_app_t *app = &c->apps[a];
        free(app->map_by);
        free(app->rank_by);
        free(app->bind_to);
        opal_argv_free(app->seq_hosts);
        app->map_by = app->rank_by = app->bind_to = NULL;
        app->seq_hosts = NULL;
        if (NULL == app->cwd && NULL != spec->apps[0].cwd &&
            NULL == (app->cwd = strdup(spec->apps[0].cwd))) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    return NULL == c->jobid || (NULL != spec->mca && NULL == c->mca) ? HERD_ERR_OUT_OF_RESOURCE
                                                                     : HERD_SUCCESS;
}

/* Plan the spawn: *per_part (by participant) and *total set; on failure *error says why for
 * the asking process. */
static int plan_request(launch_job_t *job, orte_job_spawn_t *sp, uint32_t nspace,
                        uint32_t *per_part, uint32_t *total, const char **error)
{
    int rc = HERD_SUCCESS;
    if (job->state.aborting) {
        rc = HERD_ERR_UNREACH;
        *error = "the job is being aborted";
    } else if (NULL == per_part || NULL == job->spawns.used) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        *error = "herdrun is out of memory";
    } else if (HERD_SUCCESS != (rc = complete_spawn(job, sp->spec, nspace))) {
        *error = "herdrun is out of memory";
    } else if (HERD_SUCCESS != (rc = launch_plan_spawn(job, sp->spec, per_part, total))) {
        *error = "the spawned processes do not fit on the job's nodes (herdrun said why); "
                 "start the job with --oversubscribe or more slots";
    } else if ((uint64_t) job->spawns.next_id + *total > UINT32_MAX - 1) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        *error = "the job has spawned too many processes";
    }
    return rc;
}

/* The spawn is planned: record it, and tell every session daemon to start its share. */
static void start_spawn(launch_job_t *job, orte_job_spawn_t *sp, launch_spawn_op_t *op,
                        orte_vpid_t src, uint32_t nspace, const uint32_t *per_part, uint32_t total)
{
    launch_spawns_t *s = &job->spawns;
    s->spawns[s->num_spawns++] = (launch_spawned_t){.offset = s->next_id, .size = total};
    for (uint32_t p = 0; p < job->plan.launch.num_participants; ++p) {
        s->used[job->plan.launch.participants[p]] += per_part[p];
    }
    sp->nspace = nspace;
    sp->offset = s->next_id;
    sp->requester = src;
    s->next_id += total;
    *op = (launch_spawn_op_t){
        .next = s->ops, .nspace = nspace, .requester = src, .req_id = sp->req_id};
    s->ops = op;
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    int rc = orte_job_spawn_pack(&buffer, sp);
    for (orte_vpid_t v = 1; HERD_SUCCESS == rc && v < job->daemons.size; ++v) {
        if (HERD_SUCCESS != job->daemons.ovl->send(job->daemons.overlay, v, ORTE_SESSION_TAG_SPAWN,
                                                   buffer.base, buffer.used)) {
            op->acks++; /* gone: its loss is reported on its own */
            op->status = HERD_ERR_UNREACH;
        }
    }
    opal_buffer_destruct(&buffer);
}

void launch_spawn_recv_request(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                               const void *data, size_t length, void *arg)
{
    launch_job_t *job = arg;
    opal_buffer_t buffer;
    orte_job_spawn_t *sp = NULL;
    opal_buffer_init(&buffer);
    int rc = opal_buffer_load(&buffer, data, length);
    if (HERD_SUCCESS == rc) {
        rc = orte_job_spawn_unpack(&buffer, &sp);
    }
    opal_buffer_destruct(&buffer);
    if (HERD_SUCCESS != rc || src == 0 || src >= job->daemons.size) {
        opal_show_help(LAUNCH_HELP_FILE, "malformed-spawn-request", false, src);
        orte_job_spawn_free(sp);
        return;
    }
    uint32_t *per_part = calloc(job->plan.launch.num_participants, sizeof(*per_part));
    uint32_t total = 0;
    uint32_t nspace = job->spawns.num_spawns + 1;
    const char *error = NULL;
    rc = plan_request(job, sp, nspace, per_part, &total, &error);
    launch_spawned_t *grown =
        (HERD_SUCCESS == rc)
            ? realloc(job->spawns.spawns, (job->spawns.num_spawns + 1) * sizeof(*grown))
            : NULL;
    launch_spawn_op_t *op = (NULL != grown) ? calloc(1, sizeof(*op)) : NULL;
    if (HERD_SUCCESS == rc && NULL != grown) {
        job->spawns.spawns = grown;
    }
    if (HERD_SUCCESS == rc && NULL == op) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        error = "herdrun is out of memory";
    }
    if (HERD_SUCCESS != rc) {
        spawn_respond(job, src, sp->req_id, rc, 0, error);
    } else {
        start_spawn(job, sp, op, src, nspace, per_part, total);
    }
    free(per_part);
    orte_job_spawn_free(sp);
}

static void spawn_op_done(launch_job_t *job, launch_spawn_op_t *op)
{
    for (launch_spawn_op_t **p = &job->spawns.ops; NULL != *p; p = &(*p)->next) {
        if (*p == op) {
            *p = op->next;
            break;
        }
    }
    spawn_respond(job, op->requester, op->req_id, op->status, op->nspace, op->error);
    free(op->error);
    free(op);
    launch_job_check_finished(job);
}

void launch_spawn_recv_ack(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                           size_t length, void *arg)
{
    launch_job_t *job = arg;
    opal_buffer_t buffer;
    uint32_t nspace = 0, started = 0;
    int32_t status = 0;
    char *error = NULL;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS != opal_buffer_load(&buffer, data, length) ||
        HERD_SUCCESS != opal_buffer_unpack_uint32(&buffer, &nspace) ||
        HERD_SUCCESS != opal_buffer_unpack_int32(&buffer, &status) ||
        HERD_SUCCESS != opal_buffer_unpack_uint32(&buffer, &started) ||
        HERD_SUCCESS != opal_buffer_unpack_string(&buffer, &error) || src == 0 ||
        src >= job->daemons.size || status > 0) {
        opal_buffer_destruct(&buffer);
        free(error);
        return;
    }
    opal_buffer_destruct(&buffer);
    if (started > 0 && job->daemons.eof[src]) {
        /* it had finished: it has processes again, and will say when they are done */
        job->daemons.eof[src] = false;
        job->daemons.num_eof--;
    }
    for (launch_spawn_op_t *op = job->spawns.ops; NULL != op; op = op->next) {
        if (op->nspace == nspace) {
            if (HERD_SUCCESS != status && HERD_SUCCESS == op->status) {
                op->status = status;
                op->error = (NULL != error && '\0' != *error) ? strdup(error) : NULL;
            }
            if (++op->acks + 1 >= job->daemons.size) {
                spawn_op_done(job, op);
            }
            break;
        }
    }
    free(error);
}

void launch_spawn_fail_all(launch_job_t *job)
{
    while (NULL != job->spawns.ops) {
        launch_spawn_op_t *op = job->spawns.ops;
        if (HERD_SUCCESS == op->status) {
            op->status = HERD_ERR_UNREACH;
            free(op->error);
            op->error = strdup("a session daemon of the job was lost");
        }
        spawn_op_done(job, op);
    }
}

void launch_spawn_describe_rank(const launch_job_t *job, uint32_t id, char *text, size_t size)
{
    for (uint32_t k = job->spawns.num_spawns; k > 0; --k) {
        const launch_spawned_t *sp = &job->spawns.spawns[k - 1];
        if (id >= sp->offset && id - sp->offset < sp->size) {
            snprintf(text, size, "rank %u of spawn %u", id - sp->offset, k);
            return;
        }
    }
    snprintf(text, size, "rank %u", id);
}

void launch_spawn_release(launch_job_t *job)
{
    free(job->spawns.used);
    free(job->spawns.spawns);
    while (NULL != job->spawns.ops) {
        launch_spawn_op_t *op = job->spawns.ops;
        job->spawns.ops = op->next;
        free(op->error);
        free(op);
    }
}
