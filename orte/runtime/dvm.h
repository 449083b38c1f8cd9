/* SPDX-License-Identifier: BSD-3-Clause */
/* The distributed virtual machine: the root (herd-dvm, herdrun) and one daemon (herdd) per node
 * of the allocation, connected by the overlay along a radix tree. This is the state and the
 * protocol both sides share; the tools only parse options and call in. */
#ifndef ORTE_RUNTIME_DVM_H
#define ORTE_RUNTIME_DVM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "opal/event/event.h"
#include "orte/mca/ras/ras.h"
#include "orte/types.h"
#include "orte/util/inventory.h"

#define ORTE_DVM_SECRET_LEN 32

/* Overlay tags of the DVM's own messages (grpcomm has its own range). */
enum {
    ORTE_DVM_TAG_COMMAND = 1,   /* root -> daemon, via xcast: shutdown */
    ORTE_DVM_TAG_LOST = 2,      /* daemon -> root: a neighbour's connection failed */
    ORTE_DVM_TAG_XML_REQ = 3,   /* root -> daemon: send your topology XML */
    ORTE_DVM_TAG_XML = 4,       /* daemon -> root: the XML */
    ORTE_DVM_TAG_JOINED = 5,    /* daemon -> root: connected (so a timeout names who did not) */
    ORTE_DVM_TAG_JOB_ERROR = 6, /* daemon -> root: {jobid, message}: a job could not start here */
    ORTE_DVM_TAG_REATTACHED = 7, /* daemon -> root: {}: its parent was lost, it re-attached */
    ORTE_DVM_TAG_RESYNC = 8,     /* root -> daemon: {u32 next command, u8 welcome}: after that */
    ORTE_DVM_TAG_KINDS = 9,      /* daemon -> parent: its subtree's inventories by kind (hosted
                                  * simulated nodes' start-up, dvm_kinds.c) */
    /* daemon -> root: {jobid}: the job's session slot on the daemon's node is free */
    ORTE_DVM_TAG_SESSION_END = 12,
    /* daemon -> parent: its own and its subtree's maps of a job launched nowhere (dvm_map.h) */
    ORTE_DVM_TAG_MAPPED = 14,
    /* a node daemon rejoining the DVM (dvm_rejoin.h): daemon -> root {version, inventory};
     * root -> daemon {version, next command, daemons down, every inventory} */
    ORTE_DVM_TAG_REJOIN_REQ = 20,
    ORTE_DVM_TAG_REJOIN_ACK = 21,
};

/* Commands the root broadcasts (first 4 bytes of a command xcast, big-endian). */
#define ORTE_DVM_CMD_SHUTDOWN 1u
#define ORTE_DVM_CMD_LAUNCH   2u /* then an orte_job_launch_t (orte/runtime/job.h) */
#define ORTE_DVM_CMD_NODE_DOWN 3u /* then {u32 vpid}: route and broadcast around it */
/* then {string jobid}: each node daemon kills that job's session daemon with SIGKILL (its
 * processes die with it: PR_SET_PDEATHSIG), a stopped one too (herd-cancel --signal KILL) */
#define ORTE_DVM_CMD_KILL_JOB 4u
/* then {u32 vpid}: that daemon, down, rejoined (herd-dvm --add-host): broadcasts reach it again */
#define ORTE_DVM_CMD_NODE_UP 10u

/* Root side: a daemon reports that job jobid could not start on its node (message is a whole
 * sentence for the user). */
typedef void (*orte_dvm_job_error_cb_t)(const char *jobid, const char *node, const char *message,
                                        void *arg);
/* Root side: a job submitted with orte_dvm_root_submit() waits for a free session slot on node
 * waiting_on, or (waiting_on NULL) got its slots and was broadcast. */
typedef void (*orte_dvm_job_queue_cb_t)(const char *jobid, const char *waiting_on, void *arg);
/* Root side: node node_index reported its map of a job mapped everywhere and launched nowhere
 * (dvm_map.h), or (report NULL) sent a malformed message of its subtree's reports: malformed
 * says why. */
struct dvm_map_report;
typedef void (*orte_dvm_mapped_cb_t)(uint32_t node_index, const struct dvm_map_report *report,
                                     const char *malformed, void *arg);
/* Root side: SIGINT, SIGTERM or SIGHUP arrived (handled in the loop). */
typedef void (*orte_dvm_signal_cb_t)(int signo, void *arg);

/* What the root was asked to do. */
typedef struct orte_dvm_options {
    bool display_allocation;
    bool display_topology;
    const char *herdd; /* daemon binary; default: next to the running tool */
    bool persistent;   /* herd-dvm: jobs come and go; a lost node need not end it */
} orte_dvm_options_t;

typedef struct orte_dvm orte_dvm_t;
struct orte_job_launch; /* orte/runtime/job.h */

/* Root side: read the allocation, start a daemon on every node, wait until all reported their
 * inventory. Prints what went wrong (which node, its place in the tree, the launch command's
 * stderr), stops everything it started and returns HERD_ERR_SILENT on failure. */
OPAL_EXPORT int orte_dvm_root_start(const orte_dvm_options_t *options, orte_dvm_t **dvm);
/* Root side: print the ready line "DVM ready: N nodes, S slots, T s" and the requested
 * displays. */
OPAL_EXPORT void orte_dvm_root_report(orte_dvm_t *dvm, FILE *stream);
/* Root side: the URI a tool needs to reach this DVM, written to path with mode 0600. */
OPAL_EXPORT int orte_dvm_root_write_uri(orte_dvm_t *dvm, const char *path);
/* Root side: run until shutdown is requested (SIGTERM/SIGINT, herd-dvm --shutdown) or a daemon
 * fails. Returns HERD_SUCCESS for a requested shutdown. */
OPAL_EXPORT int orte_dvm_root_serve(orte_dvm_t *dvm);
/* Root side: stop every daemon, wait for them, release everything. */
OPAL_EXPORT void orte_dvm_root_stop(orte_dvm_t *dvm);

/* Root side, for launchers (herdrun): the loop everything runs on, the allocation, the
 * inventory of node index (0-based), the tree radix and the DVM id. */
OPAL_EXPORT opal_event_base_t *orte_dvm_event_base(orte_dvm_t *dvm);
OPAL_EXPORT const orte_allocation_t *orte_dvm_allocation(const orte_dvm_t *dvm);
OPAL_EXPORT const orte_inventory_t *orte_dvm_node_inventory(const orte_dvm_t *dvm,
                                                            uint32_t node_index);
OPAL_EXPORT uint32_t orte_dvm_radix(const orte_dvm_t *dvm);
/* Whether node node_index (0-based) can take jobs: its daemon is not lost, and not one of
 * those below a lost daemon still re-attaching. */
OPAL_EXPORT bool orte_dvm_node_up(const orte_dvm_t *dvm, uint32_t node_index);
OPAL_EXPORT const char *orte_dvm_id(const orte_dvm_t *dvm);
/* The number for a new job (1, 2, ...). */
OPAL_EXPORT uint32_t orte_dvm_next_job_seq(orte_dvm_t *dvm);
/* Broadcast a command (ORTE_DVM_CMD_*) with its payload to every daemon. */
OPAL_EXPORT int orte_dvm_root_command(orte_dvm_t *dvm, uint32_t command, const void *data,
                                      size_t len);
OPAL_EXPORT void orte_dvm_root_set_job_error_cb(orte_dvm_t *dvm, orte_dvm_job_error_cb_t cb,
                                                void *arg);
/* Root side (dvm_queue.c): start a tool's job (launch, owned from now on) in a free session slot
 * of each node it has processes on, chosen here and written into the launch message; or queue
 * it until there are (first come, first served on each node); with ORTE_JOB_FLAG_NO_QUEUE,
 * refuse it through the job error callback instead. The queue callback says which. */
OPAL_EXPORT int orte_dvm_root_submit(orte_dvm_t *dvm, struct orte_job_launch *launch);
/* Root side: forget a queued job (its tool went away); nothing for a job that started. */
OPAL_EXPORT void orte_dvm_root_withdraw(orte_dvm_t *dvm, const char *jobid);
OPAL_EXPORT void orte_dvm_root_set_job_queue_cb(orte_dvm_t *dvm, orte_dvm_job_queue_cb_t cb,
                                                void *arg);
/* With a callback set, signals no longer stop the DVM: the callback decides. */
/* What the root's own endpoint carried so far, and when the DVM was ready. */
typedef struct orte_dvm_traffic {
    double ready_seconds; /* since the root started */
    uint64_t messages_delivered;
    uint64_t bytes_sent;
    uint64_t bytes_received;
} orte_dvm_traffic_t;
OPAL_EXPORT void orte_dvm_root_traffic(const orte_dvm_t *dvm, orte_dvm_traffic_t *traffic);
/* The map reports go to cb (NULL: nobody, they are dropped). */
OPAL_EXPORT int orte_dvm_root_set_mapped_cb(orte_dvm_t *dvm, orte_dvm_mapped_cb_t cb, void *arg);
OPAL_EXPORT void orte_dvm_root_set_signal_cb(orte_dvm_t *dvm, orte_dvm_signal_cb_t cb, void *arg);
/* The tool socket (orte/runtime/dvm_tool.h) orte_dvm_root_write_uri() names. */
OPAL_EXPORT void orte_dvm_root_set_tool_path(orte_dvm_t *dvm, const char *path);
/* Begin an orderly shutdown from inside the loop; orte_dvm_root_serve() returns once every
 * daemon is gone. status is what serve returns. */
OPAL_EXPORT void orte_dvm_root_request_stop(orte_dvm_t *dvm, int status);

/* Daemon side (herdd): bootstrap from the environment (or stdin lines), join the DVM, report
 * the inventory, serve until told to stop or the parent is gone. Returns the exit status. */
OPAL_EXPORT int orte_dvm_daemon_main(bool bootstrap_stdin);

/* Register the DVM's own MCA variables (dvm_radix, ...) so tools can list them. */
OPAL_EXPORT int orte_dvm_register_params(void);
/* Which fabric components this host's inventory asks when herdrun runs a job here without a
 * DVM (a real node: dvm_fabric_inventory auto or all): NULL for none, else as
 * dvm_fabric_components says ("all" or a list). Registers the DVM's variables. */
OPAL_EXPORT const char *orte_dvm_local_fabric_components(void);
/* dvm_heartbeat_timeout in ms (0: off), for every overlay of the DVM and of its jobs: the
 * daemons', the session daemons' and herdrun's. Registers the DVM's variables; HERD_ERR_SILENT
 * once a bad value of one of them was reported. */
OPAL_EXPORT int orte_dvm_heartbeat_timeout_ms(uint32_t *ms);

/* Number of tree rounds a broadcast takes in this DVM (for the benchmark). */
OPAL_EXPORT uint32_t orte_dvm_tree_rounds(const orte_dvm_t *dvm);

#endif /* ORTE_RUNTIME_DVM_H */
