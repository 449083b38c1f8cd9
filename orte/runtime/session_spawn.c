/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Comm_spawn on the session daemons' side: a local process's request goes to herdrun, which
 * plans the new processes and sends the spawn to every session daemon; each maps it the same way,
 * starts its share and acks, and the asking daemon hands herdrun's answer back to the process. */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/util/argv.h"
#include "opal/util/show_help.h"
#include "orte/runtime/session_internal.h"

/* A spawn a local process asked for, waiting for herdrun's answer. */
typedef struct orte_session_spawn_req {
    struct orte_session_spawn_req *next;
    uint32_t id;
    orte_wireup_spawn_fn_t cb;
    void *cbdata;
} orte_session_spawn_req_t;

void orte_session_spawn_release(orte_session_t *s)
{
    while (NULL != s->spawn.reqs) {
        orte_session_spawn_req_t *req = s->spawn.reqs;
        s->spawn.reqs = req->next;
        free(req);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* asking: a local process wants more processes */

/* The spawn message's spec and preput keys from the wireup's request (sp->spec allocated). */
static int spawn_from_request(const orte_wireup_spawn_request_t *req, orte_job_spawn_t *sp)
{
    int rc = HERD_SUCCESS;
    sp->spec->jobid = strdup("spawn"); /* herdrun names it */
    sp->spec->apps = calloc(req->num_apps, sizeof(*sp->spec->apps));
    sp->spec->num_apps = req->num_apps;
    rc = (NULL == sp->spec->jobid || NULL == sp->spec->apps) ? HERD_ERR_OUT_OF_RESOURCE : rc;
    for (uint32_t a = 0; HERD_SUCCESS == rc && a < req->num_apps; ++a) {
        orte_job_app_t *app = &sp->spec->apps[a];
        app->np = req->apps[a].np;
        app->argv = opal_argv_copy(req->apps[a].argv);
        app->env = opal_argv_copy(req->apps[a].env);
        app->cwd = (NULL != req->apps[a].cwd) ? strdup(req->apps[a].cwd) : NULL;
        if (NULL == app->argv || (NULL != req->apps[a].env && NULL == app->env) ||
            (NULL != req->apps[a].cwd && NULL == app->cwd)) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < req->num_preput; ++i) {
        if (NULL == req->preput_keys[i] || NULL == req->preput_values[i] ||
            HERD_SUCCESS != opal_argv_append(&sp->preput_keys, req->preput_keys[i]) ||
            HERD_SUCCESS != opal_argv_append(&sp->preput_values, req->preput_values[i])) {
            rc = NULL == req->preput_keys[i] || NULL == req->preput_values[i]
                     ? HERD_ERR_BAD_PARAM
                     : HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    return rc;
}

/* A process asks for more processes: herdrun plans them and every session daemon starts its
 * share; the answer comes in orte_session_spawn_recv_resp. */
int orte_session_spawn_request(void *ctx, const orte_wireup_spawn_request_t *req,
                               orte_wireup_spawn_fn_t cb, void *cbdata)
{
    orte_session_t *s = ctx;
    if (NULL == req || NULL == cb || 0 == req->num_apps || req->num_apps > ORTE_JOB_MAX_APPS ||
        req->parent_nspace >= s->map.num_jobs || req->num_preput > ORTE_JOB_MAX_PREPUT) {
        return HERD_ERR_BAD_PARAM;
    }
    for (uint32_t a = 0; a < req->num_apps; ++a) {
        if (NULL == req->apps[a].argv || NULL == req->apps[a].argv[0] ||
            '\0' == req->apps[a].argv[0][0] || 0 == req->apps[a].np) {
            return HERD_ERR_BAD_PARAM;
        }
    }
    orte_job_spawn_t sp = {.req_id = ++s->spawn.next_id,
                           .requester = s->vpid,
                           .parent_nspace = req->parent_nspace,
                           .parent_rank = req->parent_rank,
                           .num_preput = req->num_preput};
    orte_session_spawn_req_t *pending = calloc(1, sizeof(*pending));
    sp.spec = calloc(1, sizeof(*sp.spec));
    int rc = (NULL == pending || NULL == sp.spec) ? HERD_ERR_OUT_OF_RESOURCE : HERD_SUCCESS;
    if (HERD_SUCCESS == rc) {
        rc = spawn_from_request(req, &sp);
    }
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == rc) {
        rc = orte_job_spawn_pack(&buffer, &sp);
    }
    if (HERD_SUCCESS == rc) {
        rc = s->ovl->send(s->overlay, 0, ORTE_SESSION_TAG_SPAWN_REQ, buffer.base, buffer.used);
    }
    opal_buffer_destruct(&buffer);
    orte_job_spec_free(sp.spec);
    opal_argv_free(sp.preput_keys);
    opal_argv_free(sp.preput_values);
    if (HERD_SUCCESS != rc) {
        free(pending);
        return rc;
    }
    *pending = (orte_session_spawn_req_t){
        .next = s->spawn.reqs, .id = sp.req_id, .cb = cb, .cbdata = cbdata};
    s->spawn.reqs = pending;
    return HERD_SUCCESS;
}

void orte_session_spawn_recv_resp(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                  const void *data, size_t length, void *arg)
{
    orte_session_t *s = arg;
    opal_buffer_t buffer;
    uint32_t id = 0, nspace = 0;
    int32_t status = 0;
    char *error = NULL;
    opal_buffer_init(&buffer);
    if (0 == src && HERD_SUCCESS == opal_buffer_load(&buffer, data, length) &&
        HERD_SUCCESS == opal_buffer_unpack_uint32(&buffer, &id) &&
        HERD_SUCCESS == opal_buffer_unpack_int32(&buffer, &status) &&
        HERD_SUCCESS == opal_buffer_unpack_uint32(&buffer, &nspace) &&
        HERD_SUCCESS == opal_buffer_unpack_string(&buffer, &error) && status <= 0 &&
        (HERD_SUCCESS != status || nspace < s->map.num_jobs)) {
        for (orte_session_spawn_req_t **p = &s->spawn.reqs; NULL != *p; p = &(*p)->next) {
            orte_session_spawn_req_t *req = *p;
            if (req->id == id) {
                *p = req->next;
                req->cb(status, nspace, (NULL != error && '\0' != *error) ? error : NULL,
                        req->cbdata);
                free(req);
                break;
            }
        }
    }
    free(error);
    opal_buffer_destruct(&buffer);
}

/* ------------------------------------------------------------------------------------------ */
/* starting: herdrun planned them; every session daemon maps the same way and starts its share */

typedef struct spawn_map {
    orte_session_t *s;
    orte_session_nsjob_t *nsj;
    uint32_t my_part; /* this node's index in the spawn's node table */
} spawn_map_t;

static int spawn_planned_cb(uint32_t num_procs, const uint32_t *per_node, void *cbdata)
{
    spawn_map_t *m = cbdata;
    orte_session_t *s = m->s;
    orte_session_nsjob_t *nsj = m->nsj;
    uint32_t np = s->launch->num_participants;
    nsj->num_procs = num_procs;
    nsj->local_size = per_node[m->my_part];
    nsj->per_node = malloc((np > 0 ? np : 1) * sizeof(*nsj->per_node));
    if (NULL == nsj->per_node) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    memcpy(nsj->per_node, per_node, np * sizeof(*per_node));
    int rc = orte_session_records_reserve(s, nsj->local_size);
    if (HERD_SUCCESS == rc) {
        rc = opal_jobdb_create(nsj->spec->jobid, s->node_name, num_procs, np, NULL, &nsj->db);
        nsj->own_db = HERD_SUCCESS == rc;
    }
    for (uint32_t p = 0; HERD_SUCCESS == rc && p < np; ++p) {
        rc = opal_jobdb_set_node(nsj->db, p, s->nodes.nodes[s->launch->participants[p]].name);
    }
    return rc;
}

static int spawn_emit_cb(const orte_rmaps_proc_t *proc, void *cbdata)
{
    spawn_map_t *m = cbdata;
    orte_session_t *s = m->s;
    /* node ranks count every process of the job already on the node */
    uint32_t node_rank = s->map.used[s->launch->participants[proc->node]] + proc->local_rank;
    opal_jobdb_proc_t entry = orte_session_map_db_entry(proc, node_rank);
    int rc = opal_jobdb_put_proc(m->nsj->db, &entry);
    if (HERD_SUCCESS != rc || proc->node != m->my_part) {
        return rc;
    }
    return orte_session_map_take_local(s, m->nsj, proc, node_rank);
}

static void send_spawn_ack(orte_session_t *s, uint32_t nspace, int status, uint32_t started,
                           const char *error)
{
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_pack_uint32(&buffer, nspace) &&
        HERD_SUCCESS == opal_buffer_pack_int32(&buffer, status) &&
        HERD_SUCCESS == opal_buffer_pack_uint32(&buffer, started) &&
        HERD_SUCCESS == opal_buffer_pack_string(&buffer, NULL != error ? error : "")) {
        orte_session_send_buffer(s, 0, ORTE_SESSION_TAG_SPAWN_ACK, &buffer);
    }
    opal_buffer_destruct(&buffer);
}

/* Map a spawn over the job's participants as herdrun did (its processes of this node wait for
 * the registration). Every session daemon maps and registers it, with processes here or not, so
 * any process can look its processes up. */
static int spawn_start(orte_session_t *s, orte_job_spawn_t *sp, orte_session_nsjob_t *nsj)
{
    uint32_t np = s->launch->num_participants;
    orte_rmaps_node_t *list = NULL;
    orte_rmaps_app_t *apps = NULL;
    nsj->offset = sp->offset;
    nsj->parent_nspace = sp->parent_nspace;
    nsj->parent_rank = sp->parent_rank;
    nsj->own_spec = sp->spec;
    nsj->spec = sp->spec;
    sp->spec = NULL;
    nsj->num_nodes = np;
    int rc = orte_jobmap_spawn_nodes(&s->nodes, s->launch->participants, np, s->map.used, &list);
    if (HERD_SUCCESS == rc) {
        rc = orte_jobmap_apps(nsj->spec, &apps);
    }
    if (HERD_SUCCESS == rc) {
        spawn_map_t m = {.s = s, .nsj = nsj, .my_part = s->vpid - 1};
        orte_rmaps_job_t job = {.nodes = list,
                                .num_nodes = np,
                                .apps = apps,
                                .num_apps = nsj->spec->num_apps,
                                .planned = spawn_planned_cb};
        uint32_t before = s->local.num_records, n = 0;
        rc = orte_rmaps_base_map_job(&job, spawn_emit_cb, &m, &n);
        nsj->first_record = before;
        nsj->num_local = s->local.num_records - before;
        if (HERD_SUCCESS == rc) {
            rc = opal_jobdb_finish(nsj->db);
        }
    }
    free(list);
    free(apps);
    if (HERD_SUCCESS == rc) {
        for (uint32_t p = 0; p < np; ++p) {
            s->map.used[s->launch->participants[p]] += nsj->per_node[p];
        }
    }
    return rc;
}

void orte_session_spawn_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                             const void *data, size_t length, void *arg)
{
    orte_session_t *s = arg;
    opal_buffer_t buffer;
    orte_job_spawn_t *sp = NULL;
    opal_buffer_init(&buffer);
    int rc = opal_buffer_load(&buffer, data, length);
    if (HERD_SUCCESS == rc) {
        rc = orte_job_spawn_unpack(&buffer, &sp);
    }
    opal_buffer_destruct(&buffer);
    orte_session_nsjob_t *nsj =
        (HERD_SUCCESS == rc && 0 == src) ? orte_session_nsjob_new(s, sp->nspace) : NULL;
    if (NULL == nsj) {
        opal_show_help(ORTE_SESSION_HELP, "malformed-spawn", false, s->node_name, src);
        if (HERD_SUCCESS == rc) {
            send_spawn_ack(s, sp->nspace, HERD_ERR_BAD_PARAM, 0, "a malformed spawn");
        }
        orte_job_spawn_free(sp);
        return;
    }
    uint32_t launched_before = s->local.launched;
    rc = spawn_start(s, sp, nsj);
    if (HERD_SUCCESS != rc) {
        opal_show_help(ORTE_SESSION_HELP, "spawn-start-failed", false, s->node_name,
                       nsj->spec->jobid, opal_strerror(rc));
    }
    if (s->local.done_sent && nsj->num_local > 0 && HERD_SUCCESS == rc) {
        /* this node had finished: it has processes again, and reports them when they end (the
         * source, reopened by them, drains again first) */
        s->local.done_sent = false;
        s->io.drained = false;
        opal_buffer_init(&buffer);
        orte_session_send_buffer(s, ORTE_SESSION_SHEPHERD, ORTE_SESSION_TAG_REOPEN, &buffer);
        opal_buffer_destruct(&buffer);
    }
    orte_session_nspace_register_and_start(s, nsj, rc, sp);
    uint32_t started = s->local.launched - launched_before;
    send_spawn_ack(s, nsj->index,
                   (HERD_SUCCESS == rc && started == nsj->num_local)
                       ? HERD_SUCCESS
                       : (HERD_SUCCESS != rc ? rc : HERD_ERR_NOT_FOUND),
                   started,
                   HERD_SUCCESS != rc          ? "a session daemon could not map or register them"
                   : started != nsj->num_local ? "some of them could not be started"
                                               : NULL);
    orte_job_spawn_free(sp);
    orte_session_procs_finish(s);
}
