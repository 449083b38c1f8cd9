/* SPDX-License-Identifier: BSD-3-Clause */
/* The per-process record session daemons and herdrun exchange (orte/runtime/proc_record.h): its
 * wire format, and what it says to a user. */
#include "herd_config.h"

#include <stdio.h>
#include <string.h>

#include "orte/runtime/proc_record.h"

int orte_proc_record_pack(opal_buffer_t *b, const orte_proc_record_t *r)
{
    int rc;
    if (HERD_SUCCESS != (rc = opal_buffer_pack_uint32(b, r->rank)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(b, r->node)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(b, r->app)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_int32(b, r->pid)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint8(b, r->state)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_bool(b, r->signaled)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_bool(b, r->aborted)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_int32(b, r->exit_code)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_int32(b, r->signo)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint64(b, r->wall_ns)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint64(b, r->user_us)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint64(b, r->sys_us)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_int64(b, r->max_rss_kb)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(b, r->restarts))) {
        return rc;
    }
    return HERD_SUCCESS;
}

int orte_proc_record_unpack(opal_buffer_t *b, orte_proc_record_t *out)
{
    orte_proc_record_t r;
    int64_t rss = 0;
    int rc;
    memset(&r, 0, sizeof(r));
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(b, &r.rank)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(b, &r.node)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(b, &r.app)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_int32(b, &r.pid)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint8(b, &r.state)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_bool(b, &r.signaled)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_bool(b, &r.aborted)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_int32(b, &r.exit_code)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_int32(b, &r.signo)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint64(b, &r.wall_ns)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint64(b, &r.user_us)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint64(b, &r.sys_us)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_int64(b, &rss)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(b, &r.restarts))) {
        return rc;
    }
    /* An exit code is the 8 bits wait() reports: a launcher exits with it, and exit(256) would
     * tell the shell the job succeeded. */
    if (r.state > ORTE_PROC_UNFINALIZED || r.exit_code < 0 || r.exit_code > 255 ||
        (r.signaled && (r.signo <= 0 || r.signo >= 128))) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    r.max_rss_kb = rss;
    *out = r;
    return HERD_SUCCESS;
}

bool orte_proc_record_failed(const orte_proc_record_t *r)
{
    return ORTE_PROC_EXITED != r->state || r->signaled || 0 != r->exit_code;
}

int orte_proc_record_status(const orte_proc_record_t *r)
{
    if (ORTE_PROC_ABORTED == r->state) {
        return 0 != r->exit_code ? r->exit_code : 1; /* an aborted job never reports success */
    }
    if (ORTE_PROC_EXITED != r->state) {
        return 1;
    }
    if (r->signaled) {
        return 128 + r->signo;
    }
    return r->exit_code;
}

void orte_proc_record_describe(const orte_proc_record_t *r, char *text, size_t size)
{
    if (ORTE_PROC_START_FAILED == r->state) {
        snprintf(text, size, "could not be started");
    } else if (ORTE_PROC_LOST == r->state) {
        snprintf(text, size, "was lost with its node's session daemon");
    } else if (ORTE_PROC_ABORTED == r->state) {
        snprintf(text, size, "called abort with status %d", r->exit_code);
    } else if (ORTE_PROC_UNFINALIZED == r->state) {
        snprintf(text, size,
                 "exited with status 0 without finalizing (after MPI_Init, PMIx_Init or "
                 "herd_init)");
    } else if (r->signaled) {
        snprintf(text, size, "was killed by signal %d (%s)", r->signo, strsignal(r->signo));
    } else {
        snprintf(text, size, "exited with status %d", r->exit_code);
    }
}
