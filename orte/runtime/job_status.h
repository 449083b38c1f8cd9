/* SPDX-License-Identifier: BSD-3-Clause */
/* A running job's processes as its session daemons see them (pid, state) and as herdrun answers
 * tools about them (herd-ps, PMIx tool queries, MPIR): the records and their wire format. */
#ifndef ORTE_RUNTIME_JOB_STATUS_H
#define ORTE_RUNTIME_JOB_STATUS_H

#include <stdbool.h>
#include <stdint.h>

#include "opal/dss/buffer.h"
#include "opal/visibility.h"

typedef enum orte_job_proc_state {
    ORTE_JOB_PROC_STARTING = 0,     /* mapped, not started yet */
    ORTE_JOB_PROC_RUNNING = 1,      /* started, not exited */
    ORTE_JOB_PROC_EXITED = 2,       /* exited (status: its exit code, or 128 + signal) */
    ORTE_JOB_PROC_START_FAILED = 3, /* could not be started */
    ORTE_JOB_PROC_UNKNOWN = 4,      /* its session daemon did not say (gone, or too slow) */
} orte_job_proc_state_t;

typedef struct orte_job_proc_status {
    uint32_t rank;
    uint32_t node; /* the DVM's node index (herdrun's answer), or the job's candidate */
    uint32_t app;
    int32_t pid;
    uint8_t state;  /* orte_job_proc_state_t */
    int32_t status; /* ORTE_JOB_PROC_EXITED: exit code or 128 + signal */
} orte_job_proc_status_t;

/* What herdrun says of its job. */
typedef struct orte_job_status {
    char *state;        /* "starting", "running", "ending", "cancelled" */
    uint32_t num_procs; /* the job's processes */
    uint32_t num_nodes; /* nodes with processes */
    uint32_t *nodes;    /* their DVM node indexes */
    uint32_t *node_procs;
    char **programs; /* per app: the program's path (argv[0] when not known) */
    uint32_t num_apps;
    orte_job_proc_status_t *procs; /* by rank (NULL: not asked for) */
    uint32_t num_table;
} orte_job_status_t;

OPAL_EXPORT const char *orte_job_proc_state_name(uint8_t state);
OPAL_EXPORT int orte_job_proc_status_pack(opal_buffer_t *buffer, const orte_job_proc_status_t *p);
OPAL_EXPORT int orte_job_proc_status_unpack(opal_buffer_t *buffer, orte_job_proc_status_t *p);
OPAL_EXPORT int orte_job_status_pack(opal_buffer_t *buffer, const orte_job_status_t *status);
/* Malformed input: HERD_ERR_UNPACK_FAILURE, never a crash; *status set only on success. */
OPAL_EXPORT int orte_job_status_unpack(opal_buffer_t *buffer, orte_job_status_t **status);
OPAL_EXPORT void orte_job_status_free(orte_job_status_t *status);

#endif /* ORTE_RUNTIME_JOB_STATUS_H */
