/* SPDX-License-Identifier: BSD-3-Clause */
/* Running one job on a DVM from its root (herdrun): plan it, broadcast the launch, then be the
 * job's sink (output, failures, the shepherd's report) until it ends. */
#ifndef ORTE_RUNTIME_LAUNCH_H
#define ORTE_RUNTIME_LAUNCH_H

#include <stdbool.h>

#include "orte/runtime/dvm.h"
#include "orte/runtime/job.h"

/* What herdrun exits with when --timeout expires (as timeout(1) does). */
#define ORTE_LAUNCH_TIMEOUT_STATUS 124

/* One process of a started job, as a debugger's process table (MPIR_PROCDESC) holds it. */
typedef struct orte_launch_proc_desc {
    const char *host;
    const char *executable;
    int pid;
} orte_launch_proc_desc_t;

/* The debugger interface (MPIR) lives in the herdrun executable, where debuggers look for it;
 * the launch calls it through these (orte/runtime/launch_tools.c). */
typedef struct orte_launch_debugger {
    /* Every process of the job started: the table by rank (valid during the call). */
    void (*procs_started)(const orte_launch_proc_desc_t *procs, uint32_t n, void *arg);
    /* Whether a debugger says it is attached (MPIR_being_debugged). */
    bool (*attached)(void *arg);
    /* The debugger's breakpoint (MPIR_Breakpoint), with the table filled. */
    void (*breakpoint)(void *arg);
    /* The job is being aborted (a failure, a signal, herd-cancel). */
    void (*aborting)(const char *why, void *arg);
    void *arg;
} orte_launch_debugger_t;

typedef struct orte_launch_options {
    const char *report_usage_file; /* --report-usage=FILE: the JSON report; NULL: none */
    const char *output_dir;        /* --output-filename DIR (NULL: none) */
    bool output_nocopy;            /* --output-filename DIR:nocopy */
    int verbose;
    const orte_launch_debugger_t *debugger; /* NULL: no debugger interface */
    /* --stop-on-exec: the processes stop before main until a debugger attaches (the
     * debugger's attached() turns true), then herdrun calls its breakpoint and lets them run */
    bool stop_on_exec;
} orte_launch_options_t;

/* Run spec (its jobid, seq, secret and sink are filled here) on dvm and wait for it to end.
 * Everything the user must know is printed here. *exit_status: what herdrun exits with (0, a
 * failed process's status, 128 + a signal, ORTE_LAUNCH_TIMEOUT_STATUS, or 1). Returns
 * HERD_SUCCESS when the job ran (whatever its status), else an error (already reported). */
OPAL_EXPORT int orte_launch_run(orte_dvm_t *dvm, orte_job_spec_t *spec,
                                const orte_launch_options_t *options, int *exit_status);

/* Register herdrun's MCA variables (herdrun_direct) so tools can list them. */
OPAL_EXPORT int orte_launch_register_params(void);
/* Warn about each setting (--mca, HERD_MCA_, a parameter file) under a framework this process
 * registered, or under herdrun_ and mca_base_, that no variable knows: most likely a typo
 * (--mca odls_defualt_wait_exec), said with the closest name. Settings of the frameworks only
 * other programs open (btl and wireup: the processes) are theirs to read. herdrun calls it
 * before a job starts, herd-dvm once its DVM is up. */
OPAL_EXPORT void orte_launch_check_settings(void);
/* Whether the allocation is this host alone (not simulated) and herdrun_direct is set: then
 * herdrun needs no DVM. */
OPAL_EXPORT bool orte_launch_local_possible(const orte_allocation_t *alloc);
/* The same as orte_launch_run for a one-node allocation of this host, without a DVM: herdrun
 * is the node's daemon and forks the session daemon itself (no exec, no node daemon), which
 * saves most of the start-up. */
OPAL_EXPORT int orte_launch_run_local(const orte_allocation_t *alloc, orte_job_spec_t *spec,
                                      const orte_launch_options_t *options, int *exit_status);

/* The same on a running DVM (herd-dvm --report-uri FILE), reached as a tool: no daemon is
 * started; the DVM's root only broadcasts the launch. */
OPAL_EXPORT int orte_launch_run_client(const char *uri_file, orte_job_spec_t *spec,
                                       const orte_launch_options_t *options, int *exit_status);

/* Print the output of job (its number, or "<dvm id>.<number>") of the DVM whose contact file is
 * uri_file, from now on until the job ends (herdrun --attach). flags: ORTE_IOF_FLAG_TAG and
 * ORTE_IOF_FLAG_TIMESTAMP prefix each line. Problems are reported (HERD_ERR_SILENT). */
OPAL_EXPORT int orte_launch_attach(const char *uri_file, const char *job, uint32_t flags,
                                   int *exit_status);

#endif /* ORTE_RUNTIME_LAUNCH_H */
