/* SPDX-License-Identifier: BSD-3-Clause */
/* The errmgr framework: what a job does when one of its processes or daemons fails
 * (docs/errmgr.md). */
#ifndef ORTE_MCA_ERRMGR_H
#define ORTE_MCA_ERRMGR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/mca/mca.h"

#define OPAL_MCA_errmgr_INTERFACE_VERSION 2u

/* What went wrong. */
typedef enum orte_errmgr_event {
    ORTE_ERRMGR_PROC_FAILED = 1,   /* a process exited non-zero or was killed by a signal */
    ORTE_ERRMGR_PROC_START_FAILED, /* a process could not be started (exec, binding, chdir) */
    ORTE_ERRMGR_DAEMON_LOST,       /* a session daemon (and so its node's processes) is gone */
    ORTE_ERRMGR_PROC_LOST,         /* a process went with its lost node (one event per rank,
                                      asked before the job ends for DAEMON_LOST) */
} orte_errmgr_event_t;

/* What the job does about it. Zero is no action, so a forgotten field is not a decision. */
typedef enum orte_errmgr_action {
    ORTE_ERRMGR_ABORT_JOB = 1, /* kill every process of the job, exit with the failure's status */
    ORTE_ERRMGR_CONTINUE,      /* record the failure, let the others run to completion */
    ORTE_ERRMGR_RESTART_PROC,  /* start the failed process again with its rank: on its node
                                  (PROC_FAILED) or on another live node of the job (PROC_LOST);
                                  for anything else it aborts the job */
} orte_errmgr_action_t;

/* One failure, as the shepherd (herdrun or a daemon) saw it. Valid only during the call it is
 * passed to. */
typedef struct orte_errmgr_failure {
    orte_errmgr_event_t event;
    uint32_t rank;    /* UINT32_MAX for DAEMON_LOST */
    const char *node; /* node name */
    int pid;          /* 0 when unknown */
    bool signaled;    /* killed by signal signo rather than exited with exit_code */
    int exit_code;
    int signo;
    uint32_t restarts; /* how often this rank was restarted before (errmgr restart) */
} orte_errmgr_failure_t;

struct orte_errmgr_module {
    const char *name; /* the component's name: "abort", "continue" */
    /* What the job does about this failure. Pure: no side effects (the shepherd acts). failure
     * is never NULL. */
    orte_errmgr_action_t (*decide)(const orte_errmgr_failure_t *failure);
};
typedef struct orte_errmgr_module orte_errmgr_module_t;

OPAL_EXPORT extern opal_mca_framework_t orte_errmgr_base_framework;

/* Open the framework and select one component, the available one with the highest priority
 * (HERD_MCA_errmgr=continue chooses). HERD_ERR_NOT_FOUND when none is available. Opening an
 * open framework does nothing. */
OPAL_EXPORT int orte_errmgr_base_open(void);
OPAL_EXPORT void orte_errmgr_base_close(void);
/* The selected module, or NULL when the framework is not open. */
OPAL_EXPORT const orte_errmgr_module_t *orte_errmgr_base_module(void);

/* The selected module's decision, shown at HERD_MCA_errmgr_base_verbose=5. ABORT_JOB when the
 * framework is not open, failure is NULL, or the module answers something that is not an
 * action (or RESTART_PROC for anything but PROC_FAILED and PROC_LOST): a failure nobody decided
 * about must not leave the rest of the job running. */
OPAL_EXPORT orte_errmgr_action_t orte_errmgr_base_decide(const orte_errmgr_failure_t *failure);

/* What happened, to follow "rank 3 on node-a " (or "the daemon on node-a "): "exited with
 * status 3", "was killed by signal 9 (Killed)", "could not be started", "was lost", "was lost
 * with its node". text is
 * always terminated (when size > 0). Returns text. */
OPAL_EXPORT char *orte_errmgr_failure_describe(const orte_errmgr_failure_t *f, char *text,
                                               size_t size);

#endif /* ORTE_MCA_ERRMGR_H */
