/* SPDX-License-Identifier: BSD-3-Clause */
/* The state the DVM's files share (dvm*.c only): one orte_dvm_t split by who uses each part,
 * and the ops table through which the shared code reaches the side it runs on: the root
 * (dvm_root.c) or a node daemon (dvm_daemon.c). Where each part lives:
 *   dvm.c         core: variables, event loop, signals, overlay and grpcomm, commands, release
 *   dvm_tree.c    the daemons this process starts below it, their exits and losses, timeouts
 *   dvm_relay.c   what those daemons print on stderr, passed on once the DVM is ready
 *   dvm_boot.c    what a daemon is started with: built by its parent, read by the daemon
 *   dvm_root.c    the root: start-up, inventories, report, contact file, serve, shutdown
 *   dvm_daemon.c  a node daemon (herdd): join, inventory, serve, lost peers
 *   dvm_jobs.c    a node daemon's jobs: one session daemon per job, through the hand-off
 *   dvm_queue.c   the root's session slots and the jobs waiting for them
 *   dvm_loss.c    a lost daemon survived: routing around it, its children re-attaching
 *   dvm_virtual_root.c  the root's launch of processes hosting many simulated nodes each
 *   dvm_virtual_host.c  such a process: many node daemons on one event loop
 *   dvm_rejoin.c  a daemon restarted on a node marked down rejoins (herd-dvm --add-host)
 *   dvm_kinds.c   hosted nodes' start-up: inventories by kind (table and wire: dvm_kinds_wire.c)
 *   dvm_map_only.c  a job mapped on every node, launched nowhere (report wire: dvm_map_wire.c) */
#ifndef ORTE_RUNTIME_DVM_INTERNAL_H
#define ORTE_RUNTIME_DVM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "opal/event/event.h"
#include "opal/event/signal_pipe.h"
#include "orte/mca/grpcomm/grpcomm.h"
#include "orte/mca/overlay/overlay.h"
#include "orte/mca/plm/plm.h"
#include "orte/runtime/dvm.h"
#include "orte/runtime/dvm_kinds.h"

#define DVM_HELP_FILE "help-dvm.txt"

/* How long a process re-parented to a daemon (a session daemon whose node daemon died) has to
 * end after SIGTERM before it is killed. */
#define DVM_ORPHAN_GRACE_MS 2000

/* Collective ids: the inventory allgather; a barrier after which every daemon holds every
 * inventory (what distributed mapping needs); then one xcast per command. */
#define DVM_COLL_INVENTORY     1u
#define DVM_COLL_READY         2u
#define DVM_COLL_FIRST_COMMAND 3u

/* The DVM's MCA variables (registered by the root and the daemons alike). */
typedef struct dvm_vars {
    int radix;
    int session_slots;       /* static session endpoints per node */
    int startup_timeout;     /* seconds */
    char *fabric_inventory;  /* "auto", "all", "none" */
    char *fabric_components; /* "all" or a list of fabric components to ask */
    int shutdown_grace_ms;   /* before stragglers are killed */
    double shutdown_grace;   /* the same in seconds */
    char *on_node_loss;      /* "auto", "continue", "stop" */
    int reattach_timeout;    /* seconds a lost daemon's children have to re-attach */
    int heartbeat_timeout;   /* seconds of silence before a neighbour is lost; 0: off */
} dvm_vars_t;

/* What the shared code asks of the side it runs on. A NULL member: nothing to do there. */
typedef struct dvm_side_ops {
    /* SIGINT, SIGTERM or SIGHUP arrived (handled in the loop, not in the signal handler). */
    void (*signal)(orte_dvm_t *dvm, int signo);
    /* The first failure was reported (dvm->status says so): stop. */
    void (*stop)(orte_dvm_t *dvm);
    /* A command the root broadcast reached this process (command 0 when it carries none);
     * the root's own broadcasts complete at the root too. */
    void (*command)(orte_dvm_t *dvm, uint32_t command, const uint8_t *payload, size_t len);
    /* The overlay connection to the parent closed (HERD_SUCCESS: in order). Daemons only. */
    void (*parent_lost)(orte_dvm_t *dvm, int status, const char *reason);
    /* The overlay connection to a daemon below closed (HERD_SUCCESS: in order). */
    void (*below_lost)(orte_dvm_t *dvm, orte_vpid_t vpid, int status, const char *reason);
    /* The process this one started for a daemon below (herdd itself, or its ssh client)
     * exited while the DVM runs; how says how ("exited with status 255"). */
    void (*below_exited)(orte_dvm_t *dvm, orte_plm_daemon_t *daemon, const char *how);
    /* SIGCHLD: reap this side's other children (a node daemon's session daemons). */
    void (*reap)(orte_dvm_t *dvm);
    /* Release this side's children and state, after the daemons below and before the shared
     * runtime (overlay, loop) goes. */
    void (*release)(orte_dvm_t *dvm);
} dvm_side_ops_t;

typedef struct dvm_relay dvm_relay_t;

/* The daemons this process starts below it: every daemon (the root, when the launcher pre-binds
 * them all on this host), or this process's children in the tree (a tree spawn, root and inner
 * daemons alike). */
typedef struct dvm_tree {
    const orte_plm_module_t *plm; /* how they are started */
    char *herdd;                  /* the daemon binary they run */
    orte_plm_daemon_t *launched;  /* one per daemon started here */
    size_t num_launched;
    dvm_relay_t *relays; /* one per launched daemon once the DVM is ready (dvm_relay.c) */
    bool *joined; /* root: by vpid, said it is connected (ORTE_DVM_TAG_JOINED) */
    char **uris;  /* root: by vpid, where each listens (the JOINED message's payload) */
    /* hosted nodes: their common ports (overlay, then one per session slot), held bound on
     * 127.0.0.1 for the DVM's life (dvm_virtual_root.c) */
    int *virtual_port_fds;
    size_t num_virtual_port_fds;
} dvm_tree_t;

/* The root's session slots and the jobs waiting for them (dvm_queue.c). */
typedef struct dvm_slots dvm_slots_t;
/* The root's rejoins (dvm_rejoin.c). */
typedef struct dvm_rejoin dvm_rejoin_t;

/* The root's own state. */
typedef struct dvm_root {
    orte_dvm_options_t options;   /* its herdd is tree.herdd */
    orte_inventory_t **inventory; /* by vpid; [0] unused */
    uint32_t xml_pending;
    struct timespec started;
    double ready_seconds;
    uint64_t inventory_bytes; /* of every inventory gathered: what the allgather gives each */
    double launched_seconds;  /* start-up phases, since started: every daemon process started */
    double inventory_seconds; /* the inventory allgather complete here */
    orte_overlay_stats_t at_inventory; /* the root's endpoint then, and once ready */
    orte_overlay_stats_t at_ready;
    bool barrier_done; /* the ready barrier completed */
    bool ready;        /* every daemon reported, every XML arrived, the barrier completed */
    uint32_t next_job_seq;
    orte_dvm_job_error_cb_t job_error_cb; /* a daemon could not start a job's part */
    void *job_error_arg;
    char *tool_path;                /* the tool socket, for the contact file */
    orte_dvm_signal_cb_t signal_cb; /* SIGINT/SIGTERM/SIGHUP go here when set */
    void *signal_arg;
    /* node loss (dvm_loss.c): children of a lost daemon that have not re-attached yet */
    bool *awaiting;                /* by vpid */
    opal_event_t *reattach_timer; /* armed while some are awaited */
    dvm_slots_t *slots;           /* made at the first submission */
    orte_dvm_mapped_cb_t mapped_cb; /* a job mapped everywhere: its reports (dvm_map_only.c) */
    void *mapped_arg;
    dvm_rejoin_t *rejoin; /* herd-dvm --add-host */
} dvm_root_t;

/* A session daemon a node daemon started for a job. */
typedef struct dvm_session {
    pid_t pid; /* -1 once reaped */
    uint32_t slot;
    char *jobid;
    char launch_shm[256]; /* the segments it owns, removed here too if it dies without doing so */
    char jobdb_shm[256];
} dvm_session_t;

/* A node daemon's own state. */
typedef struct dvm_daemon {
    orte_inventory_t *mine;
    opal_event_t *stdin_event; /* EOF: the ssh session that started us is gone */
    /* every node's inventory as gathered (packed; a session daemon unpacks what it needs) */
    uint8_t **inventory_blobs; /* by node index (vpid - 1), pointing into inventory_block */
    uint8_t *inventory_block;
    size_t *inventory_lengths;
    uint8_t **inventory_replaced; /* by node index: a rejoined node's new inventory (dvm_rejoin.c),
                                   * which inventory_blobs points at instead; NULL: none */
    int *session_fds; /* the static session endpoints' listeners, by slot */
    uint32_t num_session_slots;
    dvm_session_t *sessions; /* started here, running or not yet reaped */
    size_t num_sessions;
    /* where to re-attach when the parent is lost (dvm_loss.c): nearest first */
    orte_vpid_t *ancestors;
    char **ancestor_uris;
    uint32_t num_ancestors;
    uint32_t current;  /* the one attached to (0: the parent we started with) */
    uint32_t trying;   /* the one being tried after a loss */
    uint32_t attempts; /* at it: it may not know yet that the daemons between are lost */
    opal_event_t *retry_timer;
    bool reattaching;       /* the parent was lost; connecting to an ancestor */
    /* a hosted simulated node (dvm_virtual_host.c): the host's allocation (every node's name)
     * and the DVM's common session ports, one per slot; NULL otherwise */
    const orte_allocation_t *names;
    const uint16_t *session_ports;
    /* jobs mapped here and launched nowhere, one node per turn of the loop (dvm_map_only.c):
     * the host's, shared by its nodes, or this daemon's own */
    struct dvm_map_queue *map_queue;
    bool owns_map_queue;
    struct dvm_map_gather *map_gather; /* this node's subtree's reports, for the parent */
    bool map_recv_registered;
} dvm_daemon_t;

struct orte_dvm {
    const dvm_side_ops_t *ops;
    /* a simulated node hosted with others in one process (dvm_virtual_host.c): the event loop,
     * the signals and the frameworks are the host's, not this daemon's */
    bool hosted;
    /* who this process is in which DVM */
    char *id; /* the root's own copy; a daemon's points into its environment */
    uint8_t secret[ORTE_DVM_SECRET_LEN];
    orte_vpid_t vpid;
    uint32_t size;
    uint32_t radix;
    orte_allocation_t *allocation; /* the root's; a tree-spawning daemon's copy; else NULL */
    const dvm_vars_t *vars;
    /* the runtime both sides run on */
    opal_event_base_t *base;
    const orte_overlay_module_t *ovl;
    orte_overlay_t *overlay;
    const orte_grpcomm_module_t *gc;
    orte_grpcomm_t *grpcomm;
    char *uri;
    uint32_t next_command;       /* id of the next command xcast */
    bool survive_loss;           /* dvm_on_node_loss continue: a lost daemon is routed around */
    bool *down;                  /* by vpid: daemons lost (NULL until the first) */
    uint32_t num_down;
    opal_signal_pipe_t *signals; /* signals arrive through it, to be handled in the loop */
    opal_event_t *timer;         /* start-up timeout (root), then shutdown grace */
    opal_event_t *orphan_timer;  /* orphans asked to end are killed when it fires (dvm.c) */
    /* outcome of the event loop */
    bool done;
    bool stopping; /* shutdown begun */
    int status;

    /* hosted simulated nodes: the inventories by kind, in place of the allgather (dvm_kinds.c) */
    dvm_kinds_t *kinds;

    dvm_tree_t tree;
    dvm_root_t root;     /* root only */
    dvm_daemon_t daemon; /* node daemon only */
};

/* What a node daemon reads from its bootstrap (dvm_boot_read), besides what goes into dvm. The
 * strings point into the environment. */
typedef struct dvm_boot {
    const char *node;              /* this node's name */
    const char *parent_uri;        /* where the parent daemon listens */
    const char *topology;          /* hwloc synthetic topology (simulated node), or NULL */
    const char *fabric_components; /* which fabric components to ask, NULL for none */
    uint32_t listen_fd;            /* a listener made by the launcher, UINT32_MAX if none */
    const char *plm_name;          /* a tree spawn: the launcher for the daemons below */
    const char *ancestors;         /* "vpid=uri ..." above the parent (ORTE_BOOT_ANCESTORS) */
    const char *on_loss;           /* "continue" or "stop" (ORTE_BOOT_ON_LOSS) */
} dvm_boot_t;

/* dvm.c: the core */
/* Register the DVM's variables and point dvm->vars at them (also on failure). */
int dvm_load_vars(orte_dvm_t *dvm);
/* dvm_fabric_components as a daemon's bootstrap gives it ("all" when empty). */
const char *dvm_fabric_components_of(const char *value);
/* Event loop, signals, the start-up/shutdown timer, overlay and grpcomm. */
int dvm_start_runtime(orte_dvm_t *dvm);
/* Kill what is left of this process's children, then release everything dvm_start_runtime
 * made. */
void dvm_release_runtime(orte_dvm_t *dvm);
/* Start the next command broadcast: the root sends data, a daemon (data NULL) waits for one. */
int dvm_command_xcast(orte_dvm_t *dvm, const void *data, size_t len);
/* Report the first failure (a help-dvm.txt topic) and stop through dvm->ops->stop. */
void dvm_fail(orte_dvm_t *dvm, const char *topic, ...);
/* Leave the event loop (dvm->status says how it went). */
void dvm_leave_loop(orte_dvm_t *dvm);
/* "exited with status 1", "was killed by signal 9 (Killed)". */
void dvm_describe_exit(int wstatus, char *text, size_t size);

/* dvm_relay.c: pass on what the launched daemons print (from when the DVM is ready); pass on
 * what daemon printed last (before its exit is handled); stop (before the pipes close) */
void dvm_relay_start(orte_dvm_t *dvm);
void dvm_relay_drain(orte_dvm_t *dvm, orte_plm_daemon_t *daemon);
void dvm_relay_release(orte_dvm_t *dvm);
/* the same for one daemon started later (herd-dvm --add-host): FD is its stderr pipe, which
 * stays open; close says what it printed last */
dvm_relay_t *dvm_relay_open(orte_dvm_t *dvm, orte_vpid_t vpid, int fd);
void dvm_relay_close(dvm_relay_t *relay);

/* dvm_tree.c: the daemons below */
/* A listener on 127.0.0.1 for daemon d (d->listen_fd) and its URI (malloc'd). */
int dvm_tree_prebind(orte_plm_daemon_t *d, char **uri);
/* The name of vpid's node ("the root" for 0). */
const char *dvm_tree_node_name(const orte_dvm_t *dvm, orte_vpid_t vpid);
/* "daemon 5, child of 1, depth 2 of 3": where a daemon sits, for failure messages. */
void dvm_tree_position(const orte_dvm_t *dvm, orte_vpid_t vpid, char *text, size_t size);
/* Start the daemons this process is responsible for with dvm->tree.plm. */
int dvm_tree_launch(orte_dvm_t *dvm);
/* SIGCHLD: reap the processes started for daemons below; an exit while the DVM runs goes to
 * dvm->ops->below_exited. */
void dvm_tree_reap(orte_dvm_t *dvm);
bool dvm_tree_all_gone(const orte_dvm_t *dvm);
/* SIGTERM to every process started for a daemon below (their daemons see us go). */
void dvm_tree_terminate(orte_dvm_t *dvm);
/* Arm dvm->timer: the start-up timeout, or the shutdown grace once dvm->stopping. */
void dvm_tree_arm_timer(orte_dvm_t *dvm, double seconds);
void dvm_tree_timeout_cb(int fd, short what, void *arg);
/* The overlay's lost-connection callback: the parent, or a daemon below. */
void dvm_tree_peer_lost(orte_overlay_t *overlay, orte_vpid_t peer, int status, const char *reason,
                        void *arg);
/* ORTE_DVM_TAG_JOINED at the root: a daemon is connected. */
void dvm_tree_joined(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                     size_t length, void *arg);
/* Kill and reap what is left of the processes started for daemons below. */
void dvm_tree_release(orte_dvm_t *dvm);

/* dvm_boot.c: a daemon's bootstrap */
void dvm_hex_encode(const uint8_t *bytes, size_t len, char *out);
/* The allocation as one hex string for a tree spawn's bootstrap (malloc'd), NULL if out of
 * memory. */
char *dvm_boot_allocation_hex(const orte_allocation_t *allocation);
/* Fill daemon->boot for daemon, whose parent listens at parent_uri; ancestors: "vpid=uri" of
 * the parent's ancestors, nearest first (dvm_boot_ancestors). */
int dvm_boot_build(const orte_dvm_t *dvm, orte_plm_daemon_t *daemon, const char *parent_uri,
                   const char *ancestors, const char *allocation_hex);
/* The "vpid=uri ..." list of the ancestors of vpid above its parent, nearest first; uri_of(v)
 * gives each one's URI. malloc'd, NULL if out of memory. */
char *dvm_boot_ancestors(const orte_dvm_t *dvm, orte_vpid_t vpid,
                         const char *(*uri_of)(const orte_dvm_t *dvm, orte_vpid_t v,
                                               void *arg),
                         void *arg);
/* A node daemon: who it is (dvm->id, secret, vpid, size, radix) and where to connect, from the
 * environment, after reading stdin lines into it when bootstrap_stdin. Reports problems. */
int dvm_boot_read(orte_dvm_t *dvm, bool bootstrap_stdin, dvm_boot_t *boot);
/* A node daemon in a tree spawn: the allocation and daemon binary, to start its children. */
int dvm_boot_read_tree_spawn(orte_dvm_t *dvm, const dvm_boot_t *boot);

/* dvm_loss.c: a lost daemon survived (dvm_on_node_loss continue) */
/* Whether daemon vpid was lost. */
bool dvm_loss_is_down(const orte_dvm_t *dvm, orte_vpid_t vpid);
/* This process routes and broadcasts around vpid from now on (overlay and grpcomm). */
void dvm_loss_route_around(orte_dvm_t *dvm, orte_vpid_t vpid);
/* Root: vpid is lost (reason: a sentence); its node is down, the DVM goes on. */
void dvm_loss_root_node_down(orte_dvm_t *dvm, orte_vpid_t vpid, const char *reason);
/* Root: the handlers for re-attaching daemons. */
int dvm_loss_root_open(orte_dvm_t *dvm);
void dvm_loss_root_release(orte_dvm_t *dvm);
/* Daemon: the ancestors to re-attach to (the parent's URI, then "vpid=uri ..." above it, from
 * the bootstrap), and the handler for the root's answer. */
int dvm_loss_daemon_open(orte_dvm_t *dvm, const char *parent_uri, const char *ancestors);
/* Daemon: the parent is lost; false when there is nowhere to go (then the daemon stops). */
bool dvm_loss_daemon_reattach(orte_dvm_t *dvm, int status, const char *reason);
/* Daemon: ORTE_DVM_CMD_NODE_DOWN from the root. */
void dvm_loss_daemon_node_down(orte_dvm_t *dvm, const uint8_t *payload, size_t len);
void dvm_loss_daemon_release(orte_dvm_t *dvm);

/* dvm_rejoin.c: a daemon restarted on a node marked down rejoins (herd-dvm --add-host) */
/* The bootstrap key of a rejoining daemon: the vpid of the ancestor it attaches to (its
 * ORTE_BOOT_PARENT_URI is that one's). */
#define DVM_BOOT_REJOIN "HERD_DVM_REJOIN"
/* Root: the handler of ORTE_DVM_TAG_REJOIN_REQ and the rejoin state. */
int dvm_rejoin_root_open(orte_dvm_t *dvm);
/* Root: kill and reap what is left of the daemons started for rejoins, free the state. */
void dvm_rejoin_root_release(orte_dvm_t *dvm);
/* Root: SIGCHLD; whether every daemon started for a rejoin is gone; signal them all. */
void dvm_rejoin_reap(orte_dvm_t *dvm);
bool dvm_rejoin_all_gone(const orte_dvm_t *dvm);
/* Root: how many processes rejoins started (at most), and their pids that run, into pids (the
 * orphan sweep must not take them for orphans); returns how many it wrote. */
size_t dvm_rejoin_num_procs(const orte_dvm_t *dvm);
size_t dvm_rejoin_known_pids(const orte_dvm_t *dvm, pid_t *pids);
void dvm_rejoin_signal(orte_dvm_t *dvm, int signo);
/* Root: whether daemon vpid rejoined once (a leaf since: nobody re-attached below it). */
bool dvm_rejoin_was_rejoined(const orte_dvm_t *dvm, orte_vpid_t vpid);
/* Daemon: whether this daemon was started to rejoin; then join that way (after
 * dvm_daemon_open, instead of dvm_daemon_join). */
bool dvm_rejoin_daemon_wanted(void);
int dvm_rejoin_daemon_join(orte_dvm_t *dvm, const dvm_boot_t *boot);
/* Daemon: ORTE_DVM_CMD_NODE_UP from the root. */
void dvm_rejoin_daemon_node_up(orte_dvm_t *dvm, const uint8_t *payload, size_t len);
/* Daemon: free the inventories NODE_UP brought. */
void dvm_rejoin_daemon_release(orte_dvm_t *dvm);

/* dvm_queue.c: the root's session slots */
/* The handler of ORTE_DVM_TAG_SESSION_END. */
int dvm_queue_open(orte_dvm_t *dvm);
/* Forget the slots and the queued jobs. */
void dvm_queue_release(orte_dvm_t *dvm);
/* Daemon vpid was lost: its slots go, the jobs queued for its node are refused. */
void dvm_queue_node_down(orte_dvm_t *dvm, orte_vpid_t vpid);

/* dvm_daemon.c: a node daemon's steps, for a process hosting several (dvm_virtual_host.c) */
/* A fresh daemon's state (ops, first command id, status). */
void dvm_daemon_init(orte_dvm_t *dvm);
/* The runtime, the message handlers, the listener and the node's session endpoints. */
int dvm_daemon_open(orte_dvm_t *dvm, const dvm_boot_t *boot, bool bootstrap_stdin);
/* Offer the inventory to the allgather, connect to the parent and tell the root. */
int dvm_daemon_join(orte_dvm_t *dvm, const dvm_boot_t *boot);
/* What orte_dvm_daemon_main releases of one daemon once it is done. */
void dvm_daemon_free(orte_dvm_t *dvm);

/* dvm_virtual_root.c, dvm_virtual_host.c: many simulated nodes per process */
/* The bootstrap keys of a hosting process: its nodes are HERD_DVM_VIRTUAL_COUNT vpids from
 * HERD_DVM_VPID on, HERD_DVM_VIRTUAL_STRIDE apart, each listening at dvm_virtual_uri(vpid). */
#define DVM_BOOT_VIRTUAL_COUNT      "HERD_DVM_VIRTUAL_COUNT"
#define DVM_BOOT_VIRTUAL_STRIDE     "HERD_DVM_VIRTUAL_STRIDE"
#define DVM_BOOT_VIRTUAL_PORT       "HERD_DVM_VIRTUAL_PORT"
#define DVM_BOOT_VIRTUAL_NODES      "HERD_DVM_VIRTUAL_NODES"      /* names, ',' between */
#define DVM_BOOT_VIRTUAL_TOPOLOGIES "HERD_DVM_VIRTUAL_TOPOLOGIES" /* distinct, ';' between */
#define DVM_BOOT_VIRTUAL_KINDS      "HERD_DVM_VIRTUAL_KINDS"      /* per node: topology index */
#define DVM_BOOT_VIRTUAL_FDS        "HERD_DVM_VIRTUAL_FDS"        /* per node: its listener */
#define DVM_BOOT_VIRTUAL_SESSION_PORTS "HERD_DVM_VIRTUAL_SESSION_PORTS" /* one per session slot */
/* Where simulated node vpid listens: an address of its own in 127.0.0.0/8 (so its session
 * endpoints have a port space of their own too) and the DVM's common port. */
void dvm_virtual_uri(orte_vpid_t vpid, uint16_t port, char *uri, size_t size);
/* Root: whether this DVM hosts several simulated nodes per process; then launch them. */
bool dvm_virtual_wanted(const orte_dvm_t *dvm);
int dvm_virtual_launch(orte_dvm_t *dvm);
/* herdd: the bootstrap names several nodes (DVM_BOOT_VIRTUAL_COUNT): host them all. */
int dvm_virtual_host_main(void);

/* dvm_kinds.c: the start-up exchange of inventories by kind (hosted simulated nodes); the table
 * and its wire format are dvm_kinds.h's */
/* Whether this DVM's start-up uses it: the root's daemons are hosted (dvm_virtual_wanted), or
 * this node is. */
bool dvm_kinds_wanted(const orte_dvm_t *dvm);
/* Start it: register for the children's records, offer this daemon's (not the root's), wait
 * for the table (the root: broadcast it once complete). After connect_parent. */
int dvm_kinds_start(orte_dvm_t *dvm, dvm_kinds_done_fn_t done);
/* Daemon vpid's inventory rebuilt from the table, its name from names (malloc'd). */
int dvm_kinds_inventory(const orte_dvm_t *dvm, const orte_allocation_t *names, orte_vpid_t vpid,
                        orte_inventory_t **inventory);
/* Root: ask the first node of each kind for its topology XML (dvm->root.xml_pending). */
int dvm_kinds_request_xml(orte_dvm_t *dvm);
/* The table's size as broadcast, and its number of kinds. */
size_t dvm_kinds_table_bytes(const orte_dvm_t *dvm);
uint32_t dvm_kinds_count(const orte_dvm_t *dvm);
void dvm_kinds_release(orte_dvm_t *dvm);

/* dvm_map_only.c: a job mapped on every node in virtual sessions, launched nowhere */
typedef struct dvm_map_queue dvm_map_queue_t;
typedef struct dvm_map_gather dvm_map_gather_t;
/* A queue of maps to make on base, one per turn of the loop (a host's, shared by its nodes). */
int dvm_map_queue_new(opal_event_base_t *base, dvm_map_queue_t **queue);
void dvm_map_queue_free(dvm_map_queue_t *queue);
/* ORTE_DVM_CMD_LAUNCH of a job flagged ORTE_JOB_FLAG_DO_NOT_LAUNCH: map this node's share in a
 * virtual session and report it to the root (every node reports, 0 processes where it has
 * none). Takes launch. */
void dvm_map_only_launch(orte_dvm_t *dvm, struct orte_job_launch *launch);
/* Forget this daemon's maps still queued (and its own queue). */
void dvm_map_only_release(orte_dvm_t *dvm);

/* dvm_jobs.c: a node daemon's session daemons */
/* Listen on the node's static session endpoints (one per slot) and list them in the
 * inventory. */
int dvm_jobs_bind_endpoints(orte_dvm_t *dvm);
/* ORTE_DVM_CMD_LAUNCH: if this node takes part, hand the job to a new session daemon. */
void dvm_jobs_launch(orte_dvm_t *dvm, const uint8_t *data, size_t len);
/* Reap the session daemons that exited (every one, waiting, when block). */
void dvm_jobs_reap(orte_dvm_t *dvm, bool block);
/* ORTE_DVM_CMD_KILL_JOB: SIGKILL to the session daemon of that job here, if any. */
void dvm_jobs_kill(orte_dvm_t *dvm, const uint8_t *data, size_t len);
/* Stop the session daemons, wait for them, close the endpoints. */
void dvm_jobs_release(orte_dvm_t *dvm);

#endif /* ORTE_RUNTIME_DVM_INTERNAL_H */
