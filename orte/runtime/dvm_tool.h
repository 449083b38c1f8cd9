/* SPDX-License-Identifier: BSD-3-Clause */
/* Tools (herdrun --dvm-uri) using a running DVM (herd-dvm): the root listens on a Unix socket
 * that only its own user may use; a tool asks for what it needs to plan a job (the allocation,
 * the inventories, a job number), sends the launch message for the root to broadcast, and hears
 * about daemons that cannot run its job. The tool drives the job itself (it is vpid 0 of the
 * job's overlay), so the root runs any number of jobs without waiting on any. */
#ifndef ORTE_RUNTIME_DVM_TOOL_H
#define ORTE_RUNTIME_DVM_TOOL_H

#include <stdint.h>

#include "opal/event/event.h"
#include "orte/mca/ras/ras.h"
#include "orte/runtime/dvm.h"
#include "orte/util/inventory.h"

#define ORTE_DVM_TOOL_VERSION   2u
#define ORTE_DVM_TOOL_MAX_FRAME (256u << 20)

/* Root side: listen at $TMPDIR/herd-<uid>/dvm-<id>.sock (set *path, caller frees) and serve
 * tools from the DVM's loop until orte_dvm_tool_server_stop(). */
OPAL_EXPORT int orte_dvm_tool_server_start(orte_dvm_t *dvm, char **path);
OPAL_EXPORT void orte_dvm_tool_server_stop(void);

/* Tool side: what the DVM told us. */
typedef struct orte_dvm_client orte_dvm_client_t;

/* Read the contact file (as herd-dvm --report-uri writes it), connect, and get the DVM's
 * description. Reports problems (naming the file and what to do) and returns HERD_ERR_SILENT. */
OPAL_EXPORT int orte_dvm_client_connect(const char *uri_file, opal_event_base_t *base,
                                        orte_dvm_client_t **client);
OPAL_EXPORT void orte_dvm_client_close(orte_dvm_client_t *client);
OPAL_EXPORT const orte_allocation_t *orte_dvm_client_allocation(const orte_dvm_client_t *client);
OPAL_EXPORT const orte_inventory_t *orte_dvm_client_inventory(const orte_dvm_client_t *client,
                                                              uint32_t node_index);
OPAL_EXPORT uint32_t orte_dvm_client_radix(const orte_dvm_client_t *client);
/* Whether node node_index can take jobs (orte_dvm_node_up at the root when we connected). */
OPAL_EXPORT bool orte_dvm_client_node_up(const orte_dvm_client_t *client, uint32_t node_index);
OPAL_EXPORT const char *orte_dvm_client_id(const orte_dvm_client_t *client);
/* The DVM's tool socket, as the contact file names it. */
OPAL_EXPORT const char *orte_dvm_client_tool_path(const orte_dvm_client_t *client);
/* dvm_owner.c: whether the contact file is the caller's own: if another user's, says that
 * only its owner may use that DVM (tool: "herdrun", "herd-dvm") and returns HERD_ERR_SILENT. */
OPAL_EXPORT int orte_dvm_contact_check_owner(const char *uri_file, const char *tool);
/* Read only the tool socket's path from a contact file (problems reported: HERD_ERR_SILENT);
 * the caller frees it. */
OPAL_EXPORT int orte_dvm_contact_tool_path(const char *uri_file, char **tool_path);
/* Where the herdrun driving job seq of the DVM with this tool socket lets tools attach to the
 * job's output (herdrun --attach): beside the tool socket, in the user's private folder. */
OPAL_EXPORT int orte_dvm_job_iof_path(const char *tool_path, uint32_t seq, char *path,
                                      size_t size);
/* The job number the root reserved for this tool. */
OPAL_EXPORT uint32_t orte_dvm_client_seq(const orte_dvm_client_t *client);
/* Ask the root to broadcast this launch message. Job errors (and the loss of the DVM) arrive
 * through cb, from the loop. */
OPAL_EXPORT int orte_dvm_client_launch(orte_dvm_client_t *client, const void *message, size_t len,
                                       orte_dvm_job_error_cb_t cb, void *arg);
/* Hear whether the launched job waits for a free session slot (waiting_on: the node) or got
 * its slots and started (waiting_on NULL); from the loop. */
OPAL_EXPORT void orte_dvm_client_set_queue_cb(orte_dvm_client_t *client, orte_dvm_job_queue_cb_t cb,
                                              void *arg);

/* herdrun's side of herd-ps and herd-cancel: the root relays a tool's question about the job
 * (what: ORTE_DVM_JOB_QUERY_*), answered with orte_dvm_client_answer() (now or later, from the
 * loop), and a signal herd-cancel sends to the job (uid and pid: who asked). */
typedef void (*orte_dvm_client_query_cb_t)(uint32_t qid, uint32_t what, void *arg);
typedef void (*orte_dvm_client_signal_cb_t)(int signo, uint32_t uid, int32_t pid, void *arg);
OPAL_EXPORT void orte_dvm_client_set_tool_cbs(orte_dvm_client_t *client,
                                              orte_dvm_client_query_cb_t query_cb,
                                              orte_dvm_client_signal_cb_t signal_cb, void *arg);
/* status: HERD_SUCCESS with answer (an orte_job_status_pack() buffer), or an error. */
OPAL_EXPORT int orte_dvm_client_answer(orte_dvm_client_t *client, uint32_t qid, int status,
                                       const opal_buffer_t *answer);

/* ------------------------------------------------------------------------------------------ */
/* herd-ps and herd-cancel (dvm_tool_query.c): short blocking conversations with the root. */

#define ORTE_DVM_JOB_QUERY_SUMMARY 1u /* the job's state and processes per node */
#define ORTE_DVM_JOB_QUERY_PROCS   2u /* and every process: rank, node, pid, state, status */

/* What the root knows of the DVM: its nodes and its running jobs. */
typedef struct orte_dvm_ps_node {
    char *name;
    uint32_t slots;
    bool up;
} orte_dvm_ps_node_t;
typedef struct orte_dvm_ps_job {
    char *jobid;
    uint32_t uid;    /* of the herdrun that submitted it */
    int32_t pid;     /* that herdrun */
    uint64_t start;  /* when it was launched (seconds since the epoch) */
    char *command;   /* the first app's argv, joined */
    uint32_t np;     /* as asked for (0: every free slot) */
    uint32_t num_nodes;
    uint32_t *nodes; /* DVM node indexes that run its processes */
    int32_t cancel_signo; /* herd-cancel sent it this signal (0: none) */
} orte_dvm_ps_job_t;
typedef struct orte_dvm_ps {
    char *id;
    uint64_t now; /* the root's clock */
    orte_dvm_ps_node_t *nodes;
    uint32_t num_nodes;
    orte_dvm_ps_job_t *jobs;
    uint32_t num_jobs;
} orte_dvm_ps_t;
OPAL_EXPORT int orte_dvm_ps_pack(opal_buffer_t *buffer, const orte_dvm_ps_t *ps);
/* Malformed input: HERD_ERR_UNPACK_FAILURE, never a crash; *ps set only on success. */
OPAL_EXPORT int orte_dvm_ps_unpack(opal_buffer_t *buffer, orte_dvm_ps_t **ps);
OPAL_EXPORT void orte_dvm_ps_free(orte_dvm_ps_t *ps);
/* The running job named by text: its whole id ("<dvm id>.<number>") or its number; NULL when
 * none is. */
OPAL_EXPORT const orte_dvm_ps_job_t *orte_dvm_ps_find_job(const orte_dvm_ps_t *ps,
                                                          const char *text);

typedef struct orte_dvm_conn orte_dvm_conn_t;
/* Connect to the DVM of this contact file: HERD_ERR_NOT_FOUND when the file cannot be read or
 * names no tool socket, HERD_ERR_UNREACH when the DVM cannot be reached; why says what the
 * system said (the caller reports). Every answer is waited for at most timeout_ms. */
OPAL_EXPORT int orte_dvm_conn_open(const char *uri_file, int timeout_ms, orte_dvm_conn_t **conn,
                                   char *why, size_t why_size);
OPAL_EXPORT void orte_dvm_conn_close(orte_dvm_conn_t *conn);
OPAL_EXPORT int orte_dvm_conn_ps(orte_dvm_conn_t *conn, orte_dvm_ps_t **ps);
/* Ask the job's herdrun; *status is its answer's (HERD_ERR_NOT_FOUND: no such job running),
 * answer loaded with what it said on success. HERD_ERR_TIMEOUT: no answer in time. */
OPAL_EXPORT int orte_dvm_conn_job_query(orte_dvm_conn_t *conn, const char *jobid, uint32_t what,
                                        int *status, opal_buffer_t *answer);
/* *status: HERD_SUCCESS (sent), HERD_ERR_NOT_FOUND (no such job), HERD_ERR_AUTH (another user's:
 * *owner is its uid). */
OPAL_EXPORT int orte_dvm_conn_cancel(orte_dvm_conn_t *conn, const char *jobid, int signo,
                                     int *status, uint32_t *owner);
/* herd-dvm --add-host: ask the root to start a daemon on host, a node it marked down, and wait
 * (the connection's timeout) until it rejoined or failed. *status: HERD_SUCCESS when it joined;
 * *message (malloc'd) says what happened, for the user, either way. */
OPAL_EXPORT int orte_dvm_conn_rejoin(orte_dvm_conn_t *conn, const char *host, int *status,
                                     char **message);

#endif /* ORTE_RUNTIME_DVM_TOOL_H */
