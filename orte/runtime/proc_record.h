/* SPDX-License-Identifier: BSD-3-Clause */
/* How one process of a job ended and what it used: the record a session daemon sends its
 * shepherd and the shepherd sends herdrun, its wire format, and how a launcher reports it. */
#ifndef ORTE_RUNTIME_PROC_RECORD_H
#define ORTE_RUNTIME_PROC_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/dss/buffer.h"
#include "opal/visibility.h"

typedef enum orte_proc_state {
    ORTE_PROC_EXITED = 0,       /* ran and exited (or was killed): see signaled/exit_code */
    ORTE_PROC_START_FAILED = 1, /* could not be started (exec, chdir, binding) */
    ORTE_PROC_LOST = 2,         /* its session daemon is gone: fate unknown */
    ORTE_PROC_ABORTED = 3,      /* asked for the job to be aborted (exit_code: its status) */
    ORTE_PROC_UNFINALIZED = 4,  /* exited with status 0 without finalizing its wireup */
} orte_proc_state_t;

/* How one process ended and what it used. */
typedef struct orte_proc_record {
    uint32_t rank;
    uint32_t node; /* candidate index of its node in the job */
    uint32_t app;
    int32_t pid;
    uint8_t state; /* orte_proc_state_t */
    bool signaled;
    bool aborted; /* ended because the job was being aborted, not on its own */
    int32_t exit_code;
    int32_t signo;
    uint64_t wall_ns;
    uint64_t user_us;
    uint64_t sys_us;
    int64_t max_rss_kb;
    uint32_t restarts; /* how often it was started again after a failure (errmgr restart) */
} orte_proc_record_t;

OPAL_EXPORT int orte_proc_record_pack(opal_buffer_t *buffer, const orte_proc_record_t *record);
/* HERD_ERR_UNPACK_FAILURE (or a buffer error) on malformed input; *record set only on success. */
OPAL_EXPORT int orte_proc_record_unpack(opal_buffer_t *buffer, orte_proc_record_t *record);
/* Whether the record is a failure the error manager hears about. */
OPAL_EXPORT bool orte_proc_record_failed(const orte_proc_record_t *record);
/* What a launcher exits with for this record: exit code, 128 + signal, or 1. */
OPAL_EXPORT int orte_proc_record_status(const orte_proc_record_t *record);
/* "exited with status 3", "was killed by signal 9 (Killed)", "could not be started", "called
 * abort with status 3", "exited without finalizing". */
OPAL_EXPORT void orte_proc_record_describe(const orte_proc_record_t *record, char *text,
                                           size_t size);

#endif /* ORTE_RUNTIME_PROC_RECORD_H */
