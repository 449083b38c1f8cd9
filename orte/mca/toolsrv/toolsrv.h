/* SPDX-License-Identifier: BSD-3-Clause */
/* The toolsrv framework: standard tools reach herdrun and the DVM root through it (a PMIx tool
 * server: pps, pattrs, pquery) and see their jobs and processes, and end or signal them
 * (docs/tools.md). The host (herdrun, herd-dvm) answers from its own facts, on its loop. */
#ifndef ORTE_MCA_TOOLSRV_H
#define ORTE_MCA_TOOLSRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/event/event.h"
#include "opal/mca/mca.h"

#define OPAL_MCA_toolsrv_INTERFACE_VERSION 1u

/* One process of a job, as the host knows it. */
typedef struct orte_toolsrv_proc {
    uint32_t rank;
    const char *host;
    const char *executable;
    int pid;       /* 0: not known */
    uint8_t state; /* orte_job_proc_state_t (orte/runtime/job_status.h) */
    int exit_code; /* once exited: its status (128 + signal when killed) */
} orte_toolsrv_proc_t;

/* One job the host drives (herdrun) or runs (the DVM root). */
typedef struct orte_toolsrv_job {
    const char *nspace; /* the job's id, its PMIx namespace */
    uint32_t num_procs;
    bool aborting;
    const orte_toolsrv_proc_t *procs; /* NULL unless asked for */
    uint32_t num_known;
} orte_toolsrv_job_t;

/* The host's answer: valid during the call only. */
typedef void (*orte_toolsrv_jobs_cb_t)(int status, const orte_toolsrv_job_t *jobs, size_t n,
                                       void *cbdata);

typedef struct orte_toolsrv_host {
    opal_event_base_t *base; /* the host's loop: every call below is made from it */
    const char *name;        /* "herdrun" or "herd-dvm", for messages */
    bool system_server;      /* may be the host's system server (the DVM root;
                                toolsrv_pmix_system_server) */
    /* The jobs, with their processes when with_procs; the answer through cb, now or later. */
    void (*jobs)(bool with_procs, orte_toolsrv_jobs_cb_t cb, void *cbdata, void *arg);
    /* A tool of user uid asks to send signo to a job's processes (SIGTERM, SIGKILL end it, as
     * herd-cancel does). HERD_ERR_NOT_FOUND: no such job; HERD_ERR_AUTH: not the tool's. */
    int (*signal_job)(const char *nspace, int signo, uint32_t uid, void *arg);
    void *arg;
} orte_toolsrv_host_t;

typedef struct orte_toolsrv orte_toolsrv_t;

struct orte_toolsrv_module {
    const char *name; /* the component's name: "pmix" */
    /* Start serving tools; host (which must outlive the server) is called from its loop.
     * HERD_ERR_NOT_AVAILABLE when it cannot here (said at toolsrv_base_verbose). */
    int (*start)(const orte_toolsrv_host_t *host, orte_toolsrv_t **server);
    /* Stop (tools connected are dropped) and free. NULL is ignored. */
    void (*stop)(orte_toolsrv_t *server);
};
typedef struct orte_toolsrv_module orte_toolsrv_module_t;

OPAL_EXPORT extern opal_mca_framework_t orte_toolsrv_base_framework;

/* Open the framework and select one component (HERD_MCA_toolsrv; ^pmix: none).
 * HERD_ERR_NOT_FOUND when none is available. */
OPAL_EXPORT int orte_toolsrv_base_open(void);
OPAL_EXPORT void orte_toolsrv_base_close(void);
/* The selected module, or NULL when the framework is not open. */
OPAL_EXPORT const orte_toolsrv_module_t *orte_toolsrv_base_module(void);

/* Open, select and start a tool server for host, quietly: tools are an extra, so a host without
 * one (no OpenPMIx, HERD_MCA_toolsrv=^pmix, a second server in this process) runs on without.
 * *server NULL then. */
OPAL_EXPORT void orte_toolsrv_base_start(const orte_toolsrv_host_t *host, orte_toolsrv_t **server);
/* Stop it and close the framework. */
OPAL_EXPORT void orte_toolsrv_base_stop(orte_toolsrv_t *server);

#endif /* ORTE_MCA_TOOLSRV_H */
