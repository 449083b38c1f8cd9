/* SPDX-License-Identifier: BSD-3-Clause */
/* wireup pmix: what the component's files share. The session daemon is a PMIx server through
 * OpenPMIx's server library: namespaces are registered with every process's place, each local
 * process gets the server's environment, and the library's upcalls (which run on its own
 * thread) are carried into the session daemon's loop as calls and served with the wireup
 * engine:
 *   wireup_pmix_component.c  the component, the server's life cycle, namespaces, processes
 *   wireup_pmix_upcalls.c    calls and their queue; connect, finalize, abort, fences, modex,
 *                            spawn, events; the upcall table
 *   wireup_pmix_names.c      publish, lookup (PMIX_WAIT, PMIX_TIMEOUT), unpublish
 *   wireup_pmix_log.c        PMIx_Log to the process's stdout or stderr, or syslog
 *   wireup_pmix_jctrl.c      PMIx_Job_control: kill, terminate, signal, pause, resume
 *   wireup_pmix_query.c      PMIx_Query_info (answers built by orte/util/pmix/pmix_query.c) */
#ifndef ORTE_MCA_WIREUP_PMIX_H
#define ORTE_MCA_WIREUP_PMIX_H

#include <pmix.h>
#include <pmix_server.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "orte/mca/wireup/wireup.h"

/* The catalog of the component's messages (help-wireup-pmix.txt, beside this file). */
#define WIREUP_PMIX_HELP "help-wireup-pmix.txt"

/* One local process of a namespace. */
typedef struct wireup_pmix_local {
    uint32_t rank;
    bool registered; /* PMIx_server_register_client done */
    bool connected;
    bool finalized;
    bool called_abort;
    bool killed; /* on a process's request (PMIx_Job_control) */
    pid_t pid;   /* 0 until started */
    bool exited; /* then: */
    int exit_code;
    int signo; /* the signal that killed it, or 0 */
} wireup_pmix_local_t;

/* A namespace as the PMIx server knows it. */
typedef struct wireup_pmix_ns {
    const orte_wireup_nspace_t *ns; /* the session daemon's, valid until del_nspace */
    pmix_nspace_t name;
    wireup_pmix_local_t *locals; /* in the order of ns->local_ranks (ascending ranks) */
    uint32_t num_local;
    bool registered;
} wireup_pmix_ns_t;

typedef struct wireup_pmix_state {
    const orte_wireup_host_t *host;
    wireup_pmix_ns_t **nss; /* by namespace index */
    uint32_t num_nss;
    /* Upcalls queued for the loop hold a reference: the state goes with the last of them. */
    _Atomic int refs;
    _Atomic bool finalizing;
    _Atomic int deregistering; /* client deregistrations the library has not done yet */
    bool server_up;
    pmix_topology_t topology;
    void *hwloc_topology; /* ours, handed to the server (hwloc_topology_t) */
    /* hints for Open MPI programs (wireup_pmix_ompi_hints) */
    char pml_hint[256]; /* OMPI_MCA_pml to skip cm ("": nothing to say) */
    uint32_t num_pus;   /* hardware threads herd may use here (0: unknown) */
} wireup_pmix_state_t;

/* ------------------------------------------------------------------------------------------ */
/* Calls: an upcall copied for the loop (wireup_pmix_upcalls.c) */

typedef struct wireup_pmix_call wireup_pmix_call_t;
typedef void (*wireup_pmix_run_fn_t)(wireup_pmix_call_t *c);
/* The server is stopping: answer the library with status and touch nothing else. */
typedef void (*wireup_pmix_refuse_fn_t)(wireup_pmix_call_t *c, pmix_status_t status);

struct wireup_pmix_call {
    wireup_pmix_state_t *st;
    wireup_pmix_run_fn_t run;
    wireup_pmix_refuse_fn_t refuse;
    pmix_proc_t proc;   /* who asked */
    pmix_proc_t *procs; /* fence, connect, job control targets */
    size_t nprocs;
    char *data; /* fence contribution, dmodex answer */
    size_t ndata;
    int status; /* abort status, dmodex answer status */
    char *message;
    char **keys; /* publish (with values), lookup, unpublish */
    pmix_value_t *values;
    size_t nkeys;
    int timeout_ms;
    size_t wait_for;   /* lookup with PMIX_WAIT: how many keys (0: none, SIZE_MAX: all) */
    pmix_info_t *info; /* log data, job control directives (copies) */
    size_t ninfo;
    pmix_info_t *directives; /* log directives */
    size_t ndirs;
    pmix_query_t *queries;
    size_t nqueries;
    pmix_app_t *apps;
    size_t napps;
    orte_wireup_ticket_t *ticket; /* a request's, answered by this call */
    /* the library's callback */
    pmix_op_cbfunc_t op_cb;
    pmix_modex_cbfunc_t modex_cb;
    pmix_lookup_cbfunc_t lookup_cb;
    pmix_spawn_cbfunc_t spawn_cb;
    pmix_info_cbfunc_t info_cb;
    void *cbdata;
    /* several engine operations for one call */
    size_t pending;
    int first_error;
    bool answered; /* the library has its answer (the rest of the parts are only waited for) */
    pmix_pdata_t *pdata;
    size_t npdata;
    void *part_data; /* what a file keeps while the parts run (freed by call_free) */
};

/* A new call holding a reference on the running state, run on the loop by run (refuse when the
 * server stops meanwhile); NULL when there is no server any more or no memory. */
wireup_pmix_call_t *wireup_pmix_call_new(const pmix_proc_t *proc, wireup_pmix_run_fn_t run,
                                         wireup_pmix_refuse_fn_t refuse);
/* Queue c for the loop: PMIX_SUCCESS (its callback will come) or an error (c freed; none will). */
pmix_status_t wireup_pmix_call_queue(wireup_pmix_call_t *c);
void wireup_pmix_call_free(wireup_pmix_call_t *c);
/* Answer an operation's callback once (op_cb, or info_cb without data). */
void wireup_pmix_answer_op(wireup_pmix_call_t *c, pmix_status_t status);
/* refuse functions for calls answered through op_cb / info_cb */
void wireup_pmix_refuse_op(wireup_pmix_call_t *c, pmix_status_t status);
/* A herd status as a PMIx one. */
pmix_status_t wireup_pmix_status(int rc);
/* The timeout of a call's directives (PMIX_TIMEOUT, seconds) in ms, or -1. */
int wireup_pmix_timeout_ms(const pmix_info_t info[], size_t ninfo);
/* A deep copy of n infos into *out (NULL when n is 0); false when out of memory. */
bool wireup_pmix_copy_info(const pmix_info_t *in, size_t n, pmix_info_t **out);

/* ------------------------------------------------------------------------------------------ */
/* The upcalls of each file, put in the table by wireup_pmix_upcalls.c */

pmix_status_t wireup_pmix_up_publish(const pmix_proc_t *proc, const pmix_info_t info[],
                                     size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t wireup_pmix_up_lookup(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                                    size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void *cbdata);
pmix_status_t wireup_pmix_up_unpublish(const pmix_proc_t *proc, char **keys,
                                       const pmix_info_t info[], size_t ninfo,
                                       pmix_op_cbfunc_t cbfunc, void *cbdata);
void wireup_pmix_up_log(const pmix_proc_t *client, const pmix_info_t data[], size_t ndata,
                        const pmix_info_t directives[], size_t ndirs, pmix_op_cbfunc_t cbfunc,
                        void *cbdata);
pmix_status_t wireup_pmix_up_job_control(const pmix_proc_t *requestor, const pmix_proc_t targets[],
                                         size_t ntargets, const pmix_info_t directives[],
                                         size_t ndirs, pmix_info_cbfunc_t cbfunc, void *cbdata);
pmix_status_t wireup_pmix_up_query(pmix_proc_t *proct, pmix_query_t *queries, size_t nqueries,
                                   pmix_info_cbfunc_t cbfunc, void *cbdata);

/* Tell the library what herd honours for each upcall (wireup_pmix_query.c). */
pmix_status_t wireup_pmix_register_attributes(void);

/* The module's upcalls (wireup_pmix_upcalls.c). */
extern pmix_server_module_t wireup_pmix_server_module;

/* ------------------------------------------------------------------------------------------ */
/* The state (wireup_pmix_component.c) */

/* The running state, for the upcalls (one PMIx server per process). */
wireup_pmix_state_t *wireup_pmix_active(void);
void wireup_pmix_release(wireup_pmix_state_t *state);

/* The namespace of a PMIx name, or NULL. */
wireup_pmix_ns_t *wireup_pmix_find_ns(wireup_pmix_state_t *state, const char *name);
/* A local process of it, or NULL. */
wireup_pmix_local_t *wireup_pmix_find_local(wireup_pmix_ns_t *pns, uint32_t rank);
/* The PMIx state of a local process (PMIX_PROC_STATE_*). */
pmix_proc_state_t wireup_pmix_local_state(const wireup_pmix_local_t *local);

/* Answers to other daemons' requests (registered with the engine): direct modex, what this
 * daemon knows of its processes (wireup_pmix_query.c), job control (wireup_pmix_jctrl.c). */
void wireup_pmix_dmodex_handler(void *ctx, uint32_t nspace, uint32_t rank, const char *key,
                                int timeout_ms, orte_wireup_ticket_t *ticket);
void wireup_pmix_procs_handler(void *ctx, uint32_t nspace, uint32_t rank, const char *key,
                               int timeout_ms, orte_wireup_ticket_t *ticket);
void wireup_pmix_ctrl_handler(void *ctx, uint32_t nspace, uint32_t rank, const char *key,
                              int timeout_ms, orte_wireup_ticket_t *ticket);

/* wireup_base_verbose stream */
int wireup_pmix_output(void);

#endif /* ORTE_MCA_WIREUP_PMIX_H */
