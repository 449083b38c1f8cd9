/* SPDX-License-Identifier: BSD-3-Clause */
/* The session daemon's state, one struct per concern, and the calls its files make to each
 * other; private to those files (everything else uses session.h). Where each part lives:
 *   session.c           life cycle: start-up from the hand-off, the job's overlay, loop, release
 *   session_check.c     the start check of the programs, and its allgather
 *   session_map.c       the namespaces, mapping the job, its database, taking local processes
 *   session_procs.c     the local processes: environment, start (odls), exits, records, DONE
 *   session_io.c        the daemon's own output, and the processes' pipes (iof source)
 *   session_nspace.c    the wireup: its start, each namespace's registration, its callbacks
 *   session_spawn.c     MPI_Comm_spawn: requests, spawn messages, acks
 *   session_shepherd.c  vpid 1 only: error manager, exit records, the final report
 * and beside them: session_handoff.c (the segment from the node's daemon), session_wireup.c
 * (the wireup modules), proc_record.c (the exit record and its wire format). */
#ifndef ORTE_RUNTIME_SESSION_INTERNAL_H
#define ORTE_RUNTIME_SESSION_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/dss/buffer.h"
#include "opal/event/event.h"
#include "opal/event/signal_pipe.h"
#include "opal/util/jobdb.h"
#include "orte/mca/errmgr/errmgr.h"
#include "orte/mca/grpcomm/grpcomm.h"
#include "orte/mca/iof/iof.h"
#include "orte/mca/odls/odls.h"
#include "orte/mca/overlay/overlay.h"
#include "orte/mca/rmaps/rmaps.h"
#include "orte/mca/wireup/wireup.h"
#include "orte/runtime/endpoints.h"
#include "orte/runtime/job.h"
#include "orte/runtime/jobmap.h"
#include "orte/runtime/proc_record.h"
#include "orte/runtime/session.h"
#include "orte/runtime/session_wireup.h"
#include "orte/util/inventory.h"

/* The catalog of the session daemon's messages (help-session.txt, beside this file). */
#define ORTE_SESSION_HELP "help-session.txt"

/* A local process mapped while the wireup waits for the whole map: started once it is done. */
typedef struct orte_session_local_proc {
    uint32_t rank;
    uint32_t app;
    uint32_t local_rank;
    uint32_t node_rank;
    bool bound;
    char *cpuset; /* NULL when not bound */
    bool moved;   /* started here after its node was lost (session_relocate.c) */
} orte_session_local_proc_t;

/* A namespace served here: the job (index 0) or processes it spawned (1, 2, ...). */
typedef struct orte_session_nsjob {
    uint32_t index;
    uint32_t offset;             /* the ids of its processes here: offset + rank */
    const orte_job_spec_t *spec; /* its apps */
    orte_job_spec_t *own_spec;   /* a spawn's (freed with it) */
    opal_jobdb_t *db;            /* this node's database of it */
    bool own_db;                 /* a spawn's (the job's is the session's) */
    uint32_t num_procs;
    uint32_t local_size;
    uint32_t launched;
    uint32_t parent_nspace; /* a spawn's parent, else UINT32_MAX */
    uint32_t parent_rank;
    char ***app_env;    /* per app: the processes' environment, made at its first process */
    uint32_t num_nodes; /* its node table: the job's candidates, or (a spawn) its participants */
    uint32_t *per_node; /* its processes per node of that table */
    /* as the wireup modules see it */
    orte_wireup_nspace_t ns;
    char name[OPAL_JOBDB_ID_MAX + 16];
    const char **node_names;
    const char **app_programs; /* per app: its argv[0] (pointers into spec) */
    orte_vpid_t *node_vpid;    /* per node of its table: the session daemon there */
    orte_vpid_t *daemons;      /* those hosting its processes */
    uint32_t num_daemons;
    uint32_t *local_ranks;
    uint32_t num_local;
    uint32_t first_record; /* its local processes: records first_record .. + num_local - 1 */
    bool registered;       /* known to the wireup */
    orte_session_local_proc_t *pending; /* mapped here, waiting for the wireup's registration */
    uint32_t num_pending;
} orte_session_nsjob_t;

/* The map (session_map.c): the namespaces, the job's database and its endpoints. */
typedef struct orte_session_map {
    opal_jobdb_t *db;
    orte_endpoints_plan_t endpoints; /* the job's RM-assigned endpoints (not its spawns') */
    uint16_t *ports;                 /* per fabric of the plan: the port of the proc emitted */
    orte_session_nsjob_t **jobs;     /* by namespace index: the job, then its spawns */
    uint32_t num_jobs;
    uint32_t *used; /* per candidate: processes of the job (and its spawns) placed there */
    bool done;      /* the job is mapped (or will not be): this node may report its end */
    /* the only session daemon of its job, whose programs all passed the check: it launched
     * without waiting for the check's allgather to come back */
    bool launched_early;
} orte_session_map_t;

/* The local processes (session_procs.c): odls, their records, how far they got. */
typedef struct orte_session_local {
    const orte_odls_module_t *odls;
    orte_odls_t *procs;
    char **proc_env; /* what every process starts from */
    uint32_t launched;
    orte_proc_record_t *records; /* the local processes, by id (rank, then spawns') */
    uint32_t num_records;
    uint32_t cap_records;
    uint32_t records_sent; /* to the shepherd, in DONE messages */
    bool aborting;         /* what the processes do now is not a failure of their own */
    bool done_sent;        /* DONE to the shepherd, EOF to herdrun: this node's part is over */
    bool ptable_sent;      /* the process table, once every local process started */
} orte_session_local_t;

/* I/O (session_io.c): the processes' pipes and the daemon's own output. */
typedef struct orte_session_io {
    const orte_iof_module_t *iof;
    orte_iof_source_t *source; /* the processes' pipes, unless handed to herdrun */
    int iof_sock;              /* a one-node job: herdrun reads the pipes itself, sent here */
    int stdin_fd;              /* a one-node job: herdrun's stdin, for the stdin target (or -1) */
    bool drained;              /* the source has had the sink ack everything since finish */
    int out_pipe[2];           /* our own stdout and stderr (messages), forwarded to herdrun */
    int err_pipe[2];
    /* where stdout and stderr went before: what we say before the overlay is up (a bad
     * selection found at start-up) is written there instead, not lost */
    int orig_fd[2];
    opal_event_t *out_event;
    opal_event_t *err_event;
} orte_session_io_t;

/* The wireup (session_nspace.c). */
typedef struct orte_session_wireup_state {
    orte_session_wireup_t *modules; /* NULL when no module serves the processes */
    bool wanted;                    /* some program here can use a wireup (or wireup_base_always) */
    bool skipped;                   /* none could: not started (a spawn here starts it) */
    bool failed;                    /* its processes are not started: the job fails */
    int output;                     /* where to say why, at wireup_base_verbose (or -1) */
} orte_session_wireup_state_t;

/* Spawns this node's processes asked for (session_spawn.c). */
typedef struct orte_session_spawns {
    struct orte_session_spawn_req *reqs; /* waiting for herdrun's answer */
    uint32_t next_id;
} orte_session_spawns_t;

/* Only the shepherd's (vpid 1; session_shepherd.c). */
typedef struct orte_session_shepherd {
    const orte_errmgr_module_t *errmgr;
    bool *finished; /* by vpid: done, or lost */
    uint32_t num_finished;
    orte_proc_record_t *collected;
    size_t num_collected;
    size_t cap_collected;
    bool job_aborting;
    bool reported;
    int job_status;
} orte_session_shepherd_t;

typedef struct orte_session {
    /* the job as handed over, and this daemon's place in it */
    orte_job_launch_t *launch;
    const orte_job_spec_t *spec;
    char *node_name;
    uint32_t my_candidate;
    orte_vpid_t vpid;
    uint32_t size;                  /* participants + herdrun */
    orte_inventory_t **inventories; /* per candidate */
    orte_jobmap_nodes_t nodes;
    orte_rmaps_app_t *apps;
    /* the life cycle (session.c): the loop, the job's overlay and its collectives */
    opal_event_base_t *base;
    opal_signal_pipe_t *signals;
    const orte_overlay_module_t *ovl;
    orte_overlay_t *overlay;
    const orte_grpcomm_module_t *gc;
    orte_grpcomm_t *grpcomm;
    int parent_sock; /* a one-node job: the overlay connection to herdrun, made at fork (or -1) */
    pid_t node_daemon; /* the node daemon that started us (0: herdrun forked us) */
    bool stop;
    int status;
    /* by concern */
    orte_session_map_t map;
    orte_session_local_t local;
    orte_session_io_t io;
    orte_session_wireup_state_t wireup;
    orte_session_spawns_t spawn;
    orte_session_shepherd_t shepherd;
} orte_session_t;

/* ------------------------------------------------------------------------------------------ */
/* session.c: the job's overlay */

/* Send buffer's bytes to dst; a failure is said, not returned (the sender has no one to tell). */
void orte_session_send_buffer(orte_session_t *s, orte_vpid_t dst, uint16_t tag,
                              opal_buffer_t *buffer);
/* Send {record} (or {u32 action, record} with_action). */
void orte_session_send_record(orte_session_t *s, orte_vpid_t dst, uint16_t tag, bool with_action,
                              uint32_t action, const orte_proc_record_t *record);

/* ------------------------------------------------------------------------------------------ */
/* session_check.c: the program check before anything starts anywhere */

/* Check this node's programs and start the check's allgather; its result maps and launches, or
 * ends the job. *alone_and_fine: this node alone runs the job and found nothing wrong. */
int orte_session_check_start(orte_session_t *s, bool *alone_and_fine);

/* ------------------------------------------------------------------------------------------ */
/* session_map.c: namespaces, mapping, the job database */

orte_session_nsjob_t *orte_session_nsjob_new(orte_session_t *s, uint32_t index);
/* The namespace a process id belongs to (ids grow with each spawn). */
orte_session_nsjob_t *orte_session_nsjob_of(orte_session_t *s, uint32_t id);
void orte_session_nsjob_free(orte_session_nsjob_t *nsj);
/* Which apps have processes on this node (planning only). NULL when planning fails. */
bool *orte_session_map_local_apps(orte_session_t *s);
/* Map the whole job, fill the database, start (or hold for the wireup) the local processes. */
void orte_session_map_job(orte_session_t *s);
/* One of this node's processes of nsj was mapped: its record, then started or held. */
int orte_session_map_take_local(orte_session_t *s, orte_session_nsjob_t *nsj,
                                const orte_rmaps_proc_t *proc, uint32_t node_rank);
opal_jobdb_proc_t orte_session_map_db_entry(const orte_rmaps_proc_t *proc, uint32_t node_rank);
/* The job's database and endpoints (release: before the overlay goes). */
void orte_session_map_close_db(orte_session_t *s);
/* The namespaces, and the segments their processes may have left (release: at the end). */
void orte_session_map_release(orte_session_t *s);

/* ------------------------------------------------------------------------------------------ */
/* session_procs.c: the local processes */

int orte_session_procs_build_env(orte_session_t *s);
/* odls, with this file's callbacks for exits. */
int orte_session_procs_open(orte_session_t *s);
orte_proc_record_t *orte_session_record_find(orte_session_t *s, uint32_t id);
int orte_session_records_reserve(orte_session_t *s, uint32_t n);
void orte_session_procs_start_one(orte_session_t *s, orte_session_nsjob_t *nsj,
                                  orte_proc_record_t *r, const orte_session_local_proc_t *p);
/* The processes held for the wireup: started now (status HERD_SUCCESS), or not at all. */
void orte_session_procs_start_held(orte_session_t *s, orte_session_nsjob_t *nsj, int status);
/* When every local process has exited and mapping is over: DONE to the shepherd, EOF to
 * herdrun. Call it whenever that may have become true. */
void orte_session_procs_finish(orte_session_t *s);
/* odls destroyed (what still runs is killed and waited for) and closed. */
void orte_session_procs_close(orte_session_t *s);
void orte_session_procs_release(orte_session_t *s);
void orte_session_procs_recv_abort(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                   const void *data, size_t length, void *arg);
void orte_session_procs_recv_signal(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                    const void *data, size_t length, void *arg);
/* Job control of this node's processes of nsj (rank, or all: ORTE_WIREUP_RANK_WILDCARD), asked
 * by a process (PMIx_Job_control): those killed ended because they were asked to, not failures
 * of their own. HERD_ERR_NOT_FOUND when none of them runs here. */
int orte_session_procs_signal(orte_session_t *s, orte_session_nsjob_t *nsj, uint32_t rank,
                              orte_wireup_signal_how_t how, int signo);

/* ------------------------------------------------------------------------------------------ */
/* session_ptable.c: this node's processes, for herdrun's tools (herd-ps, PMIx tools, MPIR) */
/* Once every local process of the job was started (or failed to): the table to herdrun, when
 * the job asks for it (ORTE_JOB_FLAG_PROCTABLE). Call it whenever that may have become true. */
void orte_session_ptable_started(orte_session_t *s);
void orte_session_ptable_recv_query(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                    const void *data, size_t length, void *arg);
/* ------------------------------------------------------------------------------------------ */
/* session_io.c: the processes' I/O and the daemon's own output */

int orte_session_io_redirect_output(orte_session_t *s);
/* Our own buffered and piped output, to herdrun (or where it went before the overlay). */
void orte_session_io_flush_output(orte_session_t *s);
int orte_session_io_start(orte_session_t *s);
/* The processes' last output has reached the sink (asking the source to finish first). */
bool orte_session_io_drained(orte_session_t *s);
void orte_session_io_hand_over(orte_session_t *s, uint32_t id, int parent[3]);
void orte_session_io_all_handed_over(orte_session_t *s);
void orte_session_io_exited(orte_session_t *s, uint32_t id);
void orte_session_io_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                          size_t length, void *arg);
/* The source and herdrun's socket (release: before the overlay goes). */
void orte_session_io_close_source(orte_session_t *s);
/* Our own output's pipes (release: after the overlay's last round). */
void orte_session_io_close_output(orte_session_t *s);

/* ------------------------------------------------------------------------------------------ */
/* session_nspace.c: the wireup and the namespaces it serves */

int orte_session_nspace_start_wireup(orte_session_t *s);
/* After mapping nsj: its wireup registration (sp: the spawn it is, or NULL), then its held
 * processes. rc: how mapping went. */
void orte_session_nspace_register_and_start(orte_session_t *s, orte_session_nsjob_t *nsj, int rc,
                                            const orte_job_spawn_t *sp);
void orte_session_nspace_wireup_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                     const void *data, size_t length, void *arg);

/* ------------------------------------------------------------------------------------------ */
/* session_spawn.c: MPI_Comm_spawn */

/* The wireup's spawn call (orte_session_wireup_config_t's spawn). */
int orte_session_spawn_request(void *ctx, const orte_wireup_spawn_request_t *req,
                               orte_wireup_spawn_fn_t cb, void *cbdata);
void orte_session_spawn_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                             const void *data, size_t length, void *arg);
void orte_session_spawn_recv_resp(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                  const void *data, size_t length, void *arg);
void orte_session_spawn_release(orte_session_t *s);

/* ------------------------------------------------------------------------------------------ */
/* session_shepherd.c: the error manager and the final report (vpid 1 only) */

int orte_session_shepherd_open(orte_session_t *s);
/* vpid (and everything below it in the tree) will not report. */
void orte_session_shepherd_lost(orte_session_t *s, orte_vpid_t lost, const char *reason);

/* errmgr restart (session_restart.c): the failed local process r started again here when the
 * error manager says so (herdrun is told); false when it is not (the shepherd hears of it). */
bool orte_session_restart_proc(orte_session_t *s, orte_proc_record_t *r);
/* The error manager of this node: the shepherd's, or opened on the first failure here (a job
 * that never fails never loads it outside the shepherd). NULL when none can be opened. */
const orte_errmgr_module_t *orte_session_restart_errmgr(orte_session_t *s);
/* session_relocate.c: errmgr restart after a node loss. RELOCATE (this node was chosen: start
 * the lost node's ranks here) and MOVED (where they went: the job database follows). */
void orte_session_relocate_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                const void *data, size_t length, void *arg);
void orte_session_relocate_recv_moved(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                      const void *data, size_t length, void *arg);
/* Whether rank (of nsj) was mapped to this node (false: it moved here from a lost node). */
bool orte_session_rank_mapped_here(const orte_session_nsjob_t *nsj, uint32_t rank);
/* The shepherd: lost, a leaf whose ranks moved elsewhere, reports nothing more; no failure. */
void orte_session_shepherd_moved(orte_session_t *s, orte_vpid_t lost);
void orte_session_shepherd_recv_failure(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                        const void *data, size_t length, void *arg);
void orte_session_shepherd_recv_aborted(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                        const void *data, size_t length, void *arg);
void orte_session_shepherd_recv_done(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                     const void *data, size_t length, void *arg);
void orte_session_shepherd_recv_reopen(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                       const void *data, size_t length, void *arg);
void orte_session_shepherd_recv_lost(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                     const void *data, size_t length, void *arg);
void orte_session_shepherd_release(orte_session_t *s);

#endif /* ORTE_RUNTIME_SESSION_INTERNAL_H */
