/* SPDX-License-Identifier: BSD-3-Clause */
/* herdrun's side of one job, shared by the launch files only (orte/runtime/launch*.c): the job's
 * state, split by concern, and the backend that says how the job reaches its nodes. */
#ifndef ORTE_RUNTIME_LAUNCH_INTERNAL_H
#define ORTE_RUNTIME_LAUNCH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "opal/dss/buffer.h"
#include "opal/event/event.h"
#include "opal/event/signal_pipe.h"
#include "orte/mca/grpcomm/grpcomm.h"
#include "orte/mca/iof/iof.h"
#include "orte/mca/overlay/overlay.h"
#include "orte/mca/rmaps/rmaps.h"
#include "orte/mca/toolsrv/toolsrv.h"
#include "orte/runtime/dvm.h"
#include "orte/runtime/dvm_tool.h"
#include "orte/runtime/job.h"
#include "orte/runtime/jobmap.h"
#include "orte/runtime/job_status.h"
#include "orte/runtime/launch.h"
#include "orte/runtime/proc_record.h"
#include "orte/util/inventory.h"

/* The catalog of every message the launch files (and attach.c) print for the user. */
#define LAUNCH_HELP_FILE "help-launch.txt"

typedef struct launch_job launch_job_t;

/* ------------------------------------------------------------------------------------------ */
/* The backend: how the job reaches its nodes. Three exist:
 *   dvm    (launch_backend_dvm.c)    herdrun started a DVM of its own and is its root;
 *   client (launch_backend_client.c) a persistent DVM (herd-dvm), reached as a tool (--dvm-uri);
 *   local  (launch_backend_local.c)  this host alone, no daemon: herdrun forks the session
 *                                    daemon itself.
 * Signals come through the DVM's own handler (dvm: set in start) or through herdrun's signal
 * pipe (client, local: opened before the job is planned, launch.c). Everything else the job
 * does is the same in all three (launch.c). A NULL op does nothing. */
typedef struct launch_backend {
    const char *name; /* "dvm", "client" or "local" */
    /* Number the job in its DVM: set job->spec->seq and write the job's id to jobid. */
    int (*name_job)(launch_job_t *job, char *jobid, size_t size);
    /* The inventory of a node of job->plan.alloc, by its index there. */
    const orte_inventory_t *(*inventory)(const launch_job_t *job, uint32_t node_index);
    /* Whether that node can take the job (its daemon was not lost); NULL: every node can. */
    bool (*node_up)(const launch_job_t *job, uint32_t node_index);
    /* Hand the launch message over (the DVM broadcasts it; local: fork the session daemon),
     * and from now on deliver the DVM's events (job errors, signals) to the job. */
    int (*start)(launch_job_t *job, const opal_buffer_t *message);
    /* The job's loop returned: stop delivering the DVM's events to the job. */
    void (*loop_ended)(launch_job_t *job);
    /* SIGCHLD came through herdrun's signal pipe. */
    void (*child_exited)(launch_job_t *job);
    /* Once the job's overlay is closed: wait for the processes this backend started itself. */
    void (*reap)(launch_job_t *job);
    /* Last: release what the backend's open function (launch_backend_*_open) took. */
    void (*release)(launch_job_t *job);
    /* herdrun runs the session daemons' own installation and selections (not a persistent
     * DVM's): it checks odls and errmgr before anything starts. */
    bool checks_session_frameworks;
    /* The session daemon is herdrun's child and its processes run here (local): their pipes
     * come to herdrun, a redirected stdin goes to them directly, the overlay needs no port. */
    bool forks_session;
    /* The DVM's root chooses the job's session slots when it starts the job (client): they
     * are not known while the job is planned, and the job may wait for them. */
    bool dvm_chooses_slots;
} launch_backend_t;

extern const launch_backend_t launch_backend_dvm;
extern const launch_backend_t launch_backend_client;
extern const launch_backend_t launch_backend_local;

/* What each backend keeps for the job; only its own file reads it. */
typedef union launch_backend_state {
    struct {
        orte_dvm_t *dvm;
    } dvm;
    struct {
        orte_dvm_client_t *client;
    } client;
    struct {
        orte_inventory_t *inventory; /* this node's */
        pid_t session_pid;           /* the session daemon herdrun forked; <= 0: none */
    } local;
} launch_backend_state_t;

/* Set the job up for a backend (launch.c calls one, then runs the job). Each takes the loop,
 * the allocation and the radix from its DVM (or makes them); on failure it has said why. */
int launch_backend_dvm_open(launch_job_t *job, orte_dvm_t *dvm);
int launch_backend_client_open(launch_job_t *job, const char *uri_file);
int launch_backend_local_open(launch_job_t *job, const orte_allocation_t *alloc);

/* ------------------------------------------------------------------------------------------ */
/* The job's state, by concern. */

/* What the job is and where it may run: filled by the planning (launch_plan.c). */
typedef struct launch_plan {
    const orte_allocation_t *alloc; /* the nodes of the DVM (or this host) */
    orte_job_launch_t launch;       /* the launch message: candidates, participants, radix */
    const char **candidate_names;   /* by candidate index */
    orte_inventory_t **inventories; /* by candidate (the backend's) */
    char **all_pairs;               /* "signature", "XML" of every real topology of the DVM */
    orte_jobmap_nodes_t nodes;      /* the candidates as the mapper sees them */
    orte_rmaps_app_t *apps;
    uint32_t num_procs; /* the job's own processes (spawns not counted) */
} launch_plan_t;

/* The session daemons, as vpid 0 of the job's overlay sees them (launch_overlay.c). */
typedef struct launch_daemons {
    uint32_t size; /* participants + 1 (herdrun); 0 until planned */
    const orte_overlay_module_t *ovl;
    orte_overlay_t *overlay;
    const orte_grpcomm_module_t *gc;
    orte_grpcomm_t *grpcomm;
    bool *eof; /* by vpid: nothing more comes from it */
    uint32_t num_eof;
} launch_daemons_t;

/* The job's input and output (launch_io.c). */
typedef struct launch_io {
    const orte_iof_module_t *iof;
    orte_iof_sink_t *sink;
    /* a one-node job (local): the session daemon hands us its processes' pipes, read here */
    orte_iof_source_t *source;
    int pipes_sock; /* where those pipes come from; -1: none */
    opal_event_t *pipes_event;
    /* a one-node job whose stdin goes to one rank and is not a terminal: that process reads
     * our stdin itself, as in a shell pipeline, and we never read it */
    bool stdin_direct;
    bool source_finishing;
    bool source_drained;
    /* on a persistent DVM (client): its tool socket, beside which tools attach to the output
     * (herdrun --attach); NULL: nobody can attach */
    const char *tool_path;
    int attach_fd; /* -1: none */
    opal_event_t *attach_event;
    char *attach_path;
    bool output_lost; /* herdrun's stdout or stderr refused a write: exit 1 if all went well */
} launch_io_t;

/* Where the job is in its life, and what herdrun will exit with (launch_control.c). */
typedef struct launch_state {
    bool start_failed;
    bool aborting;
    bool finished;
    bool queued; /* submitted to a persistent DVM, no session slots yet: nothing runs */
    int signals; /* how many herdrun forwarded (or caused: --timeout, a closed output) */
    int exit_status;
    int grace_ms;                 /* SIGTERM-to-SIGKILL grace of the job's processes */
    opal_event_t *timeout_timer;  /* --timeout */
    opal_event_t *grace_timer;    /* after a forwarded signal: then kill */
    opal_event_t *deadline_timer; /* after an abort: stop waiting for the daemons */
    opal_event_t *start_timer;    /* until every session daemon has checked in */
    /* A session daemon that vanished is said once: by its node's daemon, which knows why (a job
     * error naming that node), or here, when none has come a second later or at the end. */
    struct {
        bool pending;
        uint32_t candidate;
        char reason[256];
    } loss;
    opal_event_t *loss_timer;
} launch_state_t;

/* The shepherd's report at the job's end: its status and every process's record, by rank
 * (received in launch_overlay.c, printed by launch_report.c). */
typedef struct launch_report {
    bool received;
    orte_proc_record_t *records;
    uint32_t num_records;
} launch_report_t;

typedef struct launch_tools_query launch_tools_query_t;

/* What tools see of the running job (launch_tools.c): herd-ps, PMIx tools, the debugger. */
typedef struct launch_tools {
    orte_job_proc_status_t *procs; /* by rank, as the session daemons last said */
    char **programs;               /* per app, as a session daemon resolved it */
    uint32_t started_reports;      /* session daemons that said all their processes started */
    bool all_started;
    launch_tools_query_t *queries; /* waiting for the session daemons' tables */
    uint32_t next_qid;
    opal_event_t *debug_timer; /* --stop-on-exec: until a debugger attaches */
    bool released;             /* --stop-on-exec: the processes were let go */
    int cancel_signo;          /* herd-cancel's signal (0: none) */
    orte_toolsrv_host_t host;  /* what PMIx tools see (toolsrv) */
    orte_toolsrv_t *server;
    opal_event_t *serve_timer; /* the server starts once the job has run a moment */
} launch_tools_t;

typedef struct launch_spawned launch_spawned_t;
typedef struct launch_spawn_op launch_spawn_op_t;

/* Spawns (MPI_Comm_spawn): planned here, started by the session daemons (launch_spawn.c). */
typedef struct launch_spawns {
    uint32_t *used;           /* per candidate: processes placed there so far; NULL: unplanned */
    uint32_t next_id;         /* the first id of the next spawn's processes */
    launch_spawned_t *spawns; /* by namespace index - 1 */
    uint32_t num_spawns;
    launch_spawn_op_t *ops; /* waiting for every session daemon's acknowledgement */
} launch_spawns_t;

/* errmgr restart after a node loss (launch_relocate.c). */
typedef struct launch_relocation {
    bool *gone;          /* by vpid: its node was lost (its ranks moved, or the job ends) */
    uint32_t *restarts;  /* by rank: how often it was restarted so far */
    orte_vpid_t pending; /* the lost daemon whose ranks are being moved (0: none) */
    orte_vpid_t target;  /* the session daemon asked to start them */
    bool target_had_eof; /* it had finished before it was asked */
    bool opened_errmgr;  /* herdrun opened the errmgr framework to ask it (closed at the end) */
} launch_relocation_t;

struct launch_job {
    const launch_backend_t *backend;
    launch_backend_state_t mode;
    opal_event_base_t *base; /* the loop the job runs on */
    orte_job_spec_t *spec;
    const orte_launch_options_t *options;
    launch_plan_t plan;
    launch_daemons_t daemons;
    launch_io_t io;
    launch_state_t state;
    launch_report_t report;
    launch_spawns_t spawns;
    launch_tools_t tools;
    launch_relocation_t relocation;
    /* client and local: herdrun runs the loop itself (launch.c) */
    opal_signal_pipe_t *signal_pipe;
    bool own_frameworks_opened; /* overlay and grpcomm: closed at the end, opened or not */
    bool flow_began; /* the frameworks the flow opens are closed at the end, opened or not */
};

/* The name of candidate node c ("?" for an index out of range). */
static inline const char *launch_job_node_name(const launch_job_t *job, uint32_t candidate)
{
    return candidate < job->plan.launch.num_candidates ? job->plan.candidate_names[candidate] : "?";
}

/* ------------------------------------------------------------------------------------------ */
/* Shared between the launch files. */

/* launch_control.c: the job's end, aborts, signals and timers. */
void launch_job_finish(launch_job_t *job);
void launch_job_check_finished(launch_job_t *job);
void launch_job_abort(launch_job_t *job, int grace_ms);
/* Stop waiting for the session daemons grace_ms (and 5 s) from now. */
void launch_job_arm_deadline(launch_job_t *job, int grace_ms);
void launch_job_signal_cb(int signo, void *arg);
void launch_job_error_cb(const char *jobid, const char *node, const char *message, void *arg);
/* The session daemon on candidate vanished (reason: the overlay's words): said once. */
void launch_job_lost_daemon(launch_job_t *job, uint32_t candidate, const char *reason);
/* Every timer of the job, and the start timer and --timeout armed. */
int launch_timers_start(launch_job_t *job);
void launch_timers_free(launch_job_t *job);

/* launch_plan.c */
/* The candidates (every node, or the --host ones) and the topologies to ship. */
int launch_plan_candidates(launch_job_t *job);
/* The map: which candidates get processes (an impossible map reported now). */
int launch_plan_map(launch_job_t *job);
/* How many processes of a spawn go to each participant (an impossible map reported). */
int launch_plan_spawn(launch_job_t *job, const orte_job_spec_t *spec, uint32_t *per_part,
                      uint32_t *total);
void launch_plan_release(launch_job_t *job);

/* launch_overlay.c: herdrun as vpid 0 of the job's overlay. */
int launch_overlay_open(launch_job_t *job);
void launch_overlay_close(launch_job_t *job);

/* launch_io.c */
/* The sink (and the pipes' source, the attach socket), registered on the overlay. */
int launch_io_open(launch_job_t *job);
/* Read the pipes the forked session daemon sends over sock from now on. */
int launch_io_watch_pipes(launch_job_t *job, int sock);
/* Whether the output still in the pipes of a one-node job has all been read (once every
 * process exited); false: launch_job_check_finished() is called again when it has. */
bool launch_io_source_drained(launch_job_t *job);
void launch_io_close(launch_job_t *job);

/* launch_report.c */
/* The line for a failed process (or a session daemon that could not start the job). */
void launch_report_failure(const launch_job_t *job, uint32_t action, const orte_proc_record_t *r,
                           const char *message);
/* A failed process was started again (errmgr restart): which, how it ended, the how-many-th. */
void launch_report_restart(const launch_job_t *job, const orte_proc_record_t *r);
/* --report-usage: the table, and the JSON file if asked (exit 1 if it cannot be written). */
void launch_report_usage(launch_job_t *job);

/* launch_spawn.c */
void launch_spawn_recv_request(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                               const void *data, size_t length, void *arg);
void launch_spawn_recv_ack(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                           size_t length, void *arg);
/* A spawn in flight cannot complete once a daemon is gone: they all fail. */
void launch_spawn_fail_all(launch_job_t *job);
/* "rank 3", or "rank 1 of spawn 2" for a spawned process's id. */
void launch_spawn_describe_rank(const launch_job_t *job, uint32_t id, char *text, size_t size);
void launch_spawn_release(launch_job_t *job);

/* launch_relocate.c: errmgr restart after a node loss. */
/* lost's node daemon died (NODE_LOST): its ranks are being moved, or could not be and the job
 * is ending (said): true; false when the job's error manager does not move them (as before). */
bool launch_relocate_node_lost(launch_job_t *job, orte_vpid_t lost);
/* vpid's loss was handled by the above: its goodbye is no news. */
bool launch_relocate_gone(const launch_job_t *job, orte_vpid_t vpid);
/* A move is under way: the job is not finished whatever the daemons said. */
bool launch_relocate_pending(const launch_job_t *job);
/* A session daemon restarted rank where it ran (RESTARTED): restarts so far. */
void launch_relocate_note_restart(launch_job_t *job, uint32_t rank, uint32_t restarts);
void launch_relocate_recv_answer(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                 const void *data, size_t length, void *arg);
void launch_relocate_release(launch_job_t *job);

/* launch_params.c: herdrun's MCA variables. */
int launch_params_start_timeout(void);
bool launch_params_direct(void);
bool launch_params_map_everywhere(void);

/* launch_map.c: herdrun_map_everywhere */
/* Refuse (said) herdrun_map_everywhere without --do-not-launch or herdrun's own DVM. */
int launch_map_everywhere_check(const launch_job_t *job);
/* Broadcast the launch for every node daemon to map, collect and check the reports, print the
 * summary; *exit_status 0 when every node mapped its share of herdrun's map. */
int launch_map_everywhere(launch_job_t *job, const opal_buffer_t *message, int *exit_status);
uint32_t launch_params_proctable_max(void);

/* launch_tools.c: the process table for tools and debuggers. */
/* The launch flags the tools need (before the launch message is packed). */
void launch_tools_prepare(launch_job_t *job);
void launch_tools_recv_ptable(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                              const void *data, size_t length, void *arg);
/* Answer what (ORTE_DVM_JOB_QUERY_*) with an orte_job_status_pack() buffer through cb, now or
 * once the session daemons answered (or 2 s passed: the silent ones' processes are unknown). */
typedef void (*launch_tools_answer_cb_t)(launch_job_t *job, int status,
                                         const opal_buffer_t *answer, void *arg);
void launch_tools_query(launch_job_t *job, uint32_t what, launch_tools_answer_cb_t cb, void *arg);
void launch_tools_release(launch_job_t *job);
/* rank runs on candidate now with pid (moved off a lost node): what herd-ps shows. */
void launch_tools_moved(launch_job_t *job, uint32_t rank, uint32_t candidate, int32_t pid);
/* Serve tools (toolsrv) once the job is started; quietly none when there is no tool server. */
void launch_tools_serve(launch_job_t *job);
void launch_tools_unserve(launch_job_t *job);
/* launch_control.c: herd-cancel's signal (SIGTERM, SIGINT, SIGHUP, SIGKILL end the job). */
void launch_job_cancel(launch_job_t *job, int signo);

#endif /* ORTE_RUNTIME_LAUNCH_INTERNAL_H */
