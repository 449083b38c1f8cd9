/* SPDX-License-Identifier: BSD-3-Clause */
/* The wire format of a job's process table (orte/runtime/job_status.h). */
#include "herd_config.h"

#include <stdlib.h>

#include "orte/runtime/job_status.h"

#define STATUS_MAX_PROCS (1u << 26)
#define STATUS_MAX_NODES (1u << 20)
#define STATUS_MAX_APPS  4096u

const char *orte_job_proc_state_name(uint8_t state)
{
    static const char *names[] = {"starting", "running", "exited", "failed-to-start", "unknown"};
    return state < sizeof(names) / sizeof(names[0]) ? names[state] : "unknown";
}

int orte_job_proc_status_pack(opal_buffer_t *buffer, const orte_job_proc_status_t *p)
{
    int rc;
    if (HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, p->rank)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, p->node)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, p->app)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_int32(buffer, p->pid)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint8(buffer, p->state))) {
        return rc;
    }
    return opal_buffer_pack_int32(buffer, p->status);
}

int orte_job_proc_status_unpack(opal_buffer_t *buffer, orte_job_proc_status_t *out)
{
    orte_job_proc_status_t p;
    int rc;
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &p.rank)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &p.node)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &p.app)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_int32(buffer, &p.pid)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint8(buffer, &p.state)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_int32(buffer, &p.status))) {
        return rc;
    }
    if (p.state > ORTE_JOB_PROC_UNKNOWN) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    *out = p;
    return HERD_SUCCESS;
}

int orte_job_status_pack(opal_buffer_t *buffer, const orte_job_status_t *s)
{
    int rc;
    if (HERD_SUCCESS != (rc = opal_buffer_pack_string(buffer, s->state)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, s->num_procs)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32_array(buffer, s->nodes, s->num_nodes)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32_array(buffer, s->node_procs, s->num_nodes)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_string_array(buffer, s->programs, s->num_apps)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, s->num_table))) {
        return rc;
    }
    for (uint32_t i = 0; i < s->num_table; ++i) {
        if (HERD_SUCCESS != (rc = orte_job_proc_status_pack(buffer, &s->procs[i]))) {
            return rc;
        }
    }
    return HERD_SUCCESS;
}

void orte_job_status_free(orte_job_status_t *s)
{
    if (NULL == s) {
        return;
    }
    free(s->state);
    free(s->nodes);
    free(s->node_procs);
    for (uint32_t i = 0; NULL != s->programs && i < s->num_apps; ++i) {
        free(s->programs[i]);
    }
    free(s->programs);
    free(s->procs);
    free(s);
}

int orte_job_status_unpack(opal_buffer_t *buffer, orte_job_status_t **out)
{
    orte_job_status_t *s = calloc(1, sizeof(*s));
    size_t n = 0, m = 0, apps = 0;
    uint32_t table = 0;
    int rc;
    if (NULL == s) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_string(buffer, &s->state)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &s->num_procs)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32_array(buffer, &s->nodes, &n)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32_array(buffer, &s->node_procs, &m))) {
        goto err;
    }
    s->num_nodes = (uint32_t) n;
    if (NULL == s->state || n != m || n > STATUS_MAX_NODES) {
        rc = HERD_ERR_UNPACK_FAILURE;
        goto err;
    }
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_string_array(buffer, &s->programs, &apps))) {
        goto err;
    }
    s->num_apps = (uint32_t) apps;
    if (apps > STATUS_MAX_APPS) {
        rc = HERD_ERR_UNPACK_FAILURE;
        goto err;
    }
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &table))) {
        goto err;
    }
    if (table > STATUS_MAX_PROCS || table > opal_buffer_remaining(buffer)) {
        rc = HERD_ERR_UNPACK_FAILURE;
        goto err;
    }
    if (table > 0) {
        s->procs = calloc(table, sizeof(*s->procs));
        if (NULL == s->procs) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
            goto err;
        }
    }
    for (uint32_t i = 0; i < table; ++i) {
        if (HERD_SUCCESS != (rc = orte_job_proc_status_unpack(buffer, &s->procs[i]))) {
            goto err;
        }
        s->num_table = i + 1;
    }
    *out = s;
    return HERD_SUCCESS;
err:
    orte_job_status_free(s);
    return rc;
}
