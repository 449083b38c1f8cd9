/* SPDX-License-Identifier: BSD-3-Clause */
/* Encoding and decoding of the launch message (orte/runtime/job.h). */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/util/argv.h"
#include "orte/mca/ras/base/base.h"
#include "orte/runtime/job.h"
#include "orte/util/runs.h"

void orte_job_app_destruct(orte_job_app_t *app)
{
    opal_argv_free(app->argv);
    opal_argv_free(app->env);
    opal_argv_free(app->seq_hosts);
    free(app->cwd);
    free(app->map_by);
    free(app->rank_by);
    free(app->bind_to);
    memset(app, 0, sizeof(*app));
}

void orte_job_spec_free(orte_job_spec_t *spec)
{
    if (NULL == spec) {
        return;
    }
    for (uint32_t a = 0; NULL != spec->apps && a < spec->num_apps; ++a) {
        orte_job_app_destruct(&spec->apps[a]);
    }
    free(spec->apps);
    opal_argv_free(spec->hosts);
    opal_argv_free(spec->mca);
    free(spec->jobid);
    free(spec->errmgr);
    free(spec->sink_uri);
    free(spec);
}

/* A string that may be NULL: a presence flag, then the string. */
static int pack_opt_string(opal_buffer_t *buffer, const char *value)
{
    int rc = opal_buffer_pack_bool(buffer, NULL != value);
    if (HERD_SUCCESS == rc && NULL != value) {
        rc = opal_buffer_pack_string(buffer, value);
    }
    return rc;
}

static int unpack_opt_string(opal_buffer_t *buffer, char **value)
{
    bool present = false;
    int rc = opal_buffer_unpack_bool(buffer, &present);
    if (HERD_SUCCESS == rc && present) {
        rc = opal_buffer_unpack_string(buffer, value);
        /* the encoder never flags a NULL as present: one encoding per value */
        if (HERD_SUCCESS == rc && NULL == *value) {
            rc = HERD_ERR_UNPACK_FAILURE;
        }
    }
    return rc;
}

/* A NULL-terminated argv that may be NULL (sent as an empty array). */
static int pack_argv(opal_buffer_t *buffer, char *const *argv)
{
    return opal_buffer_pack_string_array(buffer, argv, (size_t) opal_argv_count(argv));
}

/* The decoded strings become the argv as they are, NULL-terminated in place: appending them one
 * by one (each append counts the list) made decoding quadratic, minutes for a host list at
 * ORTE_JOB_MAX_HOSTS. */
static int unpack_argv(opal_buffer_t *buffer, size_t max, char ***argv)
{
    char **values = NULL;
    size_t n = 0;
    int rc = opal_buffer_unpack_string_array(buffer, &values, &n);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    rc = (n > max) ? HERD_ERR_UNPACK_FAILURE : HERD_SUCCESS;
    for (size_t i = 0; HERD_SUCCESS == rc && i < n; ++i) {
        if (NULL == values[i]) {
            rc = HERD_ERR_UNPACK_FAILURE;
        }
    }
    if (HERD_SUCCESS == rc && n > 0) {
        char **terminated = realloc(values, (n + 1) * sizeof(*values));
        if (NULL == terminated) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
        } else {
            values = terminated;
            values[n] = NULL;
        }
    }
    if (HERD_SUCCESS != rc) {
        for (size_t i = 0; i < n; ++i) {
            free(values[i]);
        }
        free(values);
        return rc;
    }
    *argv = values; /* NULL when the list is empty */
    return HERD_SUCCESS;
}

static int pack_app(opal_buffer_t *buffer, const orte_job_app_t *app)
{
    int rc;
    if (HERD_SUCCESS != (rc = pack_argv(buffer, app->argv)) ||
        HERD_SUCCESS != (rc = pack_argv(buffer, app->env)) ||
        HERD_SUCCESS != (rc = pack_opt_string(buffer, app->cwd)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, app->np)) ||
        HERD_SUCCESS != (rc = pack_opt_string(buffer, app->map_by)) ||
        HERD_SUCCESS != (rc = pack_opt_string(buffer, app->rank_by)) ||
        HERD_SUCCESS != (rc = pack_opt_string(buffer, app->bind_to)) ||
        HERD_SUCCESS != (rc = pack_argv(buffer, app->seq_hosts))) {
        return rc;
    }
    return HERD_SUCCESS;
}

static int unpack_app(opal_buffer_t *buffer, orte_job_app_t *app)
{
    int rc;
    if (HERD_SUCCESS != (rc = unpack_argv(buffer, ORTE_JOB_MAX_ARGS, &app->argv)) ||
        HERD_SUCCESS != (rc = unpack_argv(buffer, ORTE_JOB_MAX_ARGS, &app->env)) ||
        HERD_SUCCESS != (rc = unpack_opt_string(buffer, &app->cwd)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &app->np)) ||
        HERD_SUCCESS != (rc = unpack_opt_string(buffer, &app->map_by)) ||
        HERD_SUCCESS != (rc = unpack_opt_string(buffer, &app->rank_by)) ||
        HERD_SUCCESS != (rc = unpack_opt_string(buffer, &app->bind_to)) ||
        HERD_SUCCESS != (rc = unpack_argv(buffer, ORTE_JOB_MAX_HOSTS, &app->seq_hosts))) {
        return rc;
    }
    if (NULL == app->argv || NULL == app->argv[0] || '\0' == app->argv[0][0]) {
        return HERD_ERR_UNPACK_FAILURE; /* an app without a program */
    }
    return HERD_SUCCESS;
}

int orte_job_spec_pack(opal_buffer_t *buffer, const orte_job_spec_t *spec)
{
    int rc;
    if (NULL == buffer || NULL == spec || NULL == spec->jobid || 0 == spec->num_apps) {
        return HERD_ERR_BAD_PARAM;
    }
    if (HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, ORTE_JOB_WIRE_VERSION)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_string(buffer, spec->jobid)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, spec->seq)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, spec->num_apps))) {
        return rc;
    }
    for (uint32_t a = 0; a < spec->num_apps; ++a) {
        if (HERD_SUCCESS != (rc = pack_app(buffer, &spec->apps[a]))) {
            return rc;
        }
    }
    if (HERD_SUCCESS != (rc = pack_argv(buffer, spec->hosts)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, spec->flags)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_bool(buffer, spec->oversubscribe)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_bool(buffer, spec->nooversubscribe)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, spec->timeout)) ||
        HERD_SUCCESS != (rc = pack_opt_string(buffer, spec->errmgr)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_int32(buffer, spec->kill_grace_ms)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_int32(buffer, spec->stdin_target)) ||
        HERD_SUCCESS != (rc = pack_argv(buffer, spec->mca)) ||
        HERD_SUCCESS != (rc = pack_opt_string(buffer, spec->sink_uri)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_bytes(buffer, spec->secret, sizeof(spec->secret)))) {
        return rc;
    }
    return HERD_SUCCESS;
}

int orte_job_spec_unpack(opal_buffer_t *buffer, orte_job_spec_t **spec_out)
{
    uint32_t version = 0;
    void *secret = NULL;
    size_t secret_len = 0;
    int rc;
    if (NULL == buffer || NULL == spec_out) {
        return HERD_ERR_BAD_PARAM;
    }
    rc = opal_buffer_unpack_uint32(buffer, &version);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (ORTE_JOB_WIRE_VERSION != version) {
        return HERD_ERR_VERSION_MISMATCH;
    }
    orte_job_spec_t *spec = calloc(1, sizeof(*spec));
    if (NULL == spec) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_string(buffer, &spec->jobid)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &spec->seq)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &spec->num_apps))) {
        goto err;
    }
    if (0 == spec->num_apps || spec->num_apps > ORTE_JOB_MAX_APPS || NULL == spec->jobid ||
        '\0' == spec->jobid[0] || NULL != strchr(spec->jobid, '/')) {
        spec->num_apps = 0;
        rc = HERD_ERR_UNPACK_FAILURE;
        goto err;
    }
    /* grows app by app, so a lying count costs no more than the bytes that back it */
    uint32_t declared = spec->num_apps;
    spec->num_apps = 0;
    for (uint32_t a = 0; a < declared; ++a) {
        orte_job_app_t *apps = realloc(spec->apps, (a + 1) * sizeof(*apps));
        if (NULL == apps) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
            goto err;
        }
        spec->apps = apps;
        memset(&apps[a], 0, sizeof(apps[a]));
        spec->num_apps = a + 1;
        if (HERD_SUCCESS != (rc = unpack_app(buffer, &apps[a]))) {
            goto err;
        }
    }
    if (HERD_SUCCESS != (rc = unpack_argv(buffer, ORTE_JOB_MAX_HOSTS, &spec->hosts)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &spec->flags)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_bool(buffer, &spec->oversubscribe)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_bool(buffer, &spec->nooversubscribe)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &spec->timeout)) ||
        HERD_SUCCESS != (rc = unpack_opt_string(buffer, &spec->errmgr)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_int32(buffer, &spec->kill_grace_ms)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_int32(buffer, &spec->stdin_target)) ||
        HERD_SUCCESS != (rc = unpack_argv(buffer, ORTE_JOB_MAX_ARGS, &spec->mca)) ||
        HERD_SUCCESS != (rc = unpack_opt_string(buffer, &spec->sink_uri)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_bytes(buffer, &secret, &secret_len))) {
        goto err;
    }
    if (sizeof(spec->secret) != secret_len || spec->stdin_target < -2) {
        rc = HERD_ERR_UNPACK_FAILURE;
        goto err;
    }
    memcpy(spec->secret, secret, sizeof(spec->secret));
    free(secret);
    *spec_out = spec;
    return HERD_SUCCESS;

err:
    free(secret);
    orte_job_spec_free(spec);
    return HERD_ERR_VERSION_MISMATCH == rc ? rc : HERD_ERR_UNPACK_FAILURE;
}

uint64_t orte_job_spec_requested_np(const orte_job_spec_t *spec)
{
    uint64_t total = 0;
    for (uint32_t a = 0; a < spec->num_apps; ++a) {
        if (0 == spec->apps[a].np) {
            return 0;
        }
        total += spec->apps[a].np;
    }
    return total;
}

void orte_job_launch_free(orte_job_launch_t *launch)
{
    if (NULL == launch) {
        return;
    }
    orte_job_spec_free(launch->spec);
    free(launch->node_index);
    free(launch->slots);
    free(launch->max_slots);
    free(launch->participants);
    free(launch->session_slot);
    opal_argv_free(launch->xml_pairs);
    free(launch);
}

int orte_job_launch_pack(opal_buffer_t *buffer, const orte_job_launch_t *launch)
{
    int rc;
    if (HERD_SUCCESS != (rc = orte_job_spec_pack(buffer, launch->spec)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, launch->radix)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, launch->universe_size)) ||
        /* as runs: the nodes' indexes and slots are mostly a few, whatever the node count */
        HERD_SUCCESS !=
            (rc = orte_runs_pack(buffer, launch->node_index, launch->num_candidates)) ||
        HERD_SUCCESS != (rc = orte_runs_pack(buffer, launch->slots, launch->num_candidates)) ||
        HERD_SUCCESS != (rc = orte_runs_pack(buffer, launch->max_slots, launch->num_candidates)) ||
        HERD_SUCCESS !=
            (rc = orte_runs_pack(buffer, launch->participants, launch->num_participants)) ||
        HERD_SUCCESS !=
            (rc = orte_runs_pack(buffer, launch->session_slot, launch->num_candidates)) ||
        HERD_SUCCESS != (rc = pack_argv(buffer, launch->xml_pairs))) {
        return rc;
    }
    return HERD_SUCCESS;
}

int orte_job_launch_unpack(opal_buffer_t *buffer, uint32_t num_dvm_nodes,
                           orte_job_launch_t **launch_out)
{
    size_t n_index = 0, n_slots = 0, n_max = 0, n_part = 0, n_session = 0;
    orte_job_launch_t *launch = calloc(1, sizeof(*launch));
    int rc;
    if (NULL == launch) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    /* runs expand: a few bytes can say four billion nodes, so no more than an allocation has */
    if (num_dvm_nodes > ORTE_RAS_MAX_NODES) {
        num_dvm_nodes = ORTE_RAS_MAX_NODES;
    }
    if (HERD_SUCCESS != (rc = orte_job_spec_unpack(buffer, &launch->spec)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &launch->radix)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &launch->universe_size)) ||
        HERD_SUCCESS !=
            (rc = orte_runs_unpack(buffer, num_dvm_nodes, &launch->node_index, &n_index)) ||
        HERD_SUCCESS != (rc = orte_runs_unpack(buffer, n_index, &launch->slots, &n_slots)) ||
        HERD_SUCCESS != (rc = orte_runs_unpack(buffer, n_index, &launch->max_slots, &n_max)) ||
        HERD_SUCCESS !=
            (rc = orte_runs_unpack(buffer, n_index, &launch->participants, &n_part)) ||
        HERD_SUCCESS !=
            (rc = orte_runs_unpack(buffer, n_index, &launch->session_slot, &n_session)) ||
        HERD_SUCCESS != (rc = unpack_argv(buffer, 2 * ORTE_JOB_MAX_APPS, &launch->xml_pairs))) {
        goto err;
    }
    rc = HERD_ERR_UNPACK_FAILURE;
    if (0 == n_index || n_index != n_slots || n_index != n_max || n_index != n_session ||
        0 == n_part || n_part > n_index || n_index > num_dvm_nodes || 0 == launch->radix ||
        0 != opal_argv_count(launch->xml_pairs) % 2) {
        goto err;
    }
    launch->num_candidates = (uint32_t) n_index;
    launch->num_participants = (uint32_t) n_part;
    for (uint32_t i = 0; i < launch->num_candidates; ++i) {
        if (launch->node_index[i] >= num_dvm_nodes ||
            (i > 0 && launch->node_index[i] <= launch->node_index[i - 1])) {
            goto err;
        }
    }
    for (uint32_t i = 0; i < launch->num_participants; ++i) {
        if (launch->participants[i] >= launch->num_candidates ||
            (i > 0 && launch->participants[i] <= launch->participants[i - 1])) {
            goto err;
        }
    }
    *launch_out = launch;
    return HERD_SUCCESS;

err:
    orte_job_launch_free(launch);
    return HERD_ERR_VERSION_MISMATCH == rc ? rc : HERD_ERR_UNPACK_FAILURE;
}

void orte_job_spawn_free(orte_job_spawn_t *spawn)
{
    if (NULL == spawn) {
        return;
    }
    orte_job_spec_free(spawn->spec);
    opal_argv_free(spawn->preput_keys);
    opal_argv_free(spawn->preput_values);
    free(spawn);
}

int orte_job_spawn_pack(opal_buffer_t *buffer, const orte_job_spawn_t *spawn)
{
    int rc;
    if (NULL == buffer || NULL == spawn || NULL == spawn->spec ||
        (size_t) opal_argv_count(spawn->preput_keys) != spawn->num_preput ||
        (size_t) opal_argv_count(spawn->preput_values) != spawn->num_preput) {
        return HERD_ERR_BAD_PARAM;
    }
    if (HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, ORTE_JOB_SPAWN_WIRE_VERSION)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, spawn->req_id)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, spawn->requester)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, spawn->parent_nspace)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, spawn->parent_rank)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, spawn->nspace)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, spawn->offset)) ||
        HERD_SUCCESS != (rc = orte_job_spec_pack(buffer, spawn->spec)) ||
        HERD_SUCCESS != (rc = pack_argv(buffer, spawn->preput_keys)) ||
        HERD_SUCCESS != (rc = pack_argv(buffer, spawn->preput_values))) {
        return rc;
    }
    return HERD_SUCCESS;
}

int orte_job_spawn_unpack(opal_buffer_t *buffer, orte_job_spawn_t **out)
{
    uint32_t version = 0;
    if (NULL == buffer || NULL == out) {
        return HERD_ERR_BAD_PARAM;
    }
    int rc = opal_buffer_unpack_uint32(buffer, &version);
    if (HERD_SUCCESS != rc) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    if (ORTE_JOB_SPAWN_WIRE_VERSION != version) {
        return HERD_ERR_VERSION_MISMATCH;
    }
    orte_job_spawn_t *sp = calloc(1, sizeof(*sp));
    if (NULL == sp) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &sp->req_id)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &sp->requester)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &sp->parent_nspace)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &sp->parent_rank)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &sp->nspace)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &sp->offset)) ||
        HERD_SUCCESS != (rc = orte_job_spec_unpack(buffer, &sp->spec)) ||
        HERD_SUCCESS != (rc = unpack_argv(buffer, ORTE_JOB_MAX_PREPUT, &sp->preput_keys)) ||
        HERD_SUCCESS != (rc = unpack_argv(buffer, ORTE_JOB_MAX_PREPUT, &sp->preput_values))) {
        goto err;
    }
    sp->num_preput = (uint32_t) opal_argv_count(sp->preput_keys);
    if (sp->num_preput != (uint32_t) opal_argv_count(sp->preput_values)) {
        rc = HERD_ERR_UNPACK_FAILURE;
        goto err;
    }
    for (uint32_t a = 0; a < sp->spec->num_apps; ++a) {
        if (0 == sp->spec->apps[a].np) {
            rc = HERD_ERR_UNPACK_FAILURE; /* a spawn says how many */
            goto err;
        }
    }
    *out = sp;
    return HERD_SUCCESS;

err:
    orte_job_spawn_free(sp);
    return HERD_ERR_VERSION_MISMATCH == rc ? rc : HERD_ERR_UNPACK_FAILURE;
}
