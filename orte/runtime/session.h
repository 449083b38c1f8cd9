/* SPDX-License-Identifier: BSD-3-Clause */
/* What a job's session daemons and its launcher say to each other over the job's overlay
 * (vpid 0: herdrun; vpid 1: the shepherd; vpids 2..: the lambs), and the two ways a session
 * daemon starts. docs/herdrun.md describes the protocol; the per-process record they exchange is
 * in orte/runtime/proc_record.h, the hand-off from the node's daemon in session_handoff.h. */
#ifndef ORTE_RUNTIME_SESSION_H
#define ORTE_RUNTIME_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "opal/visibility.h"
#include "orte/runtime/proc_record.h"

/* Tags on the job's overlay (grpcomm uses its own range from 64). */
enum {
    ORTE_SESSION_TAG_OUTPUT = 16,  /* session -> 0: {u8 stream (1 stdout, 2 stderr), bytes} */
    ORTE_SESSION_TAG_FAILURE = 17, /* session -> shepherd: {record}; shepherd -> 0: {u32
                                      action, record} */
    ORTE_SESSION_TAG_ABORT = 18,   /* shepherd or 0 -> session: {i32 grace_ms} */
    ORTE_SESSION_TAG_SIGNAL = 19,  /* 0 -> session: {i32 signo} */
    ORTE_SESSION_TAG_DONE = 20,    /* session -> shepherd: {u32 n, n records} */
    ORTE_SESSION_TAG_REPORT = 21,  /* shepherd -> 0: {i32 status, u32 n, n records} */
    ORTE_SESSION_TAG_EOF = 22,     /* session -> 0: {u32 processes started}: nothing follows */
    ORTE_SESSION_TAG_LOST = 23,    /* session -> shepherd: {u32 vpid, string reason} */
    /* 24 .. 24 + ORTE_IOF_NUM_MSGS - 1: the iof protocol between the session daemons'
     * sources and herdrun's sink (orte/mca/iof/iof.h, docs/iof.md) */
    ORTE_SESSION_TAG_IOF = 24,
    ORTE_SESSION_TAG_ABORTED = 30, /* session -> shepherd: {record, string message}: a process
                                      asked for the job to be aborted (MPI_Abort) */
    /* 32 ..: the wireup engine's messages between session daemons
     * (orte/mca/wireup/base/base.h) */
    /* spawns (MPI_Comm_spawn): orte_job_spawn_t messages (orte/runtime/job.h) */
    ORTE_SESSION_TAG_SPAWN_REQ = 48,  /* session -> 0: {spawn} a process asks for more */
    ORTE_SESSION_TAG_SPAWN = 49,      /* 0 -> every session: {spawn} map and start them */
    ORTE_SESSION_TAG_SPAWN_ACK = 50,  /* session -> 0: {u32 nspace, i32 status, u32 started,
                                         string error} */
    ORTE_SESSION_TAG_SPAWN_RESP = 51, /* 0 -> asking session: {u32 req_id, i32 status,
                                         u32 nspace, string error} */
    ORTE_SESSION_TAG_REOPEN = 52,     /* session -> shepherd: {}: processes again after DONE */
    ORTE_SESSION_TAG_NODE_LOST = 53,  /* session -> 0: {}: this node's daemon died; the
                                         processes here are being ended */
    /* the process table (orte/runtime/job_status.h): herd-ps, PMIx tools, MPIR */
    ORTE_SESSION_TAG_PTABLE = 54,       /* session -> 0: {u32 qid, u32 candidate, string array
                                           programs by app, u32 n, n proc statuses}; qid 0: every
                                           local process started (ORTE_JOB_FLAG_PROCTABLE) */
    ORTE_SESSION_TAG_PTABLE_QUERY = 55, /* 0 -> session: {u32 qid} */
    ORTE_SESSION_TAG_RESTARTED = 56,  /* session -> 0: {record}: that process failed and was
                                         started again (errmgr restart; record.restarts: the
                                         how-many-th restart) */
    /* errmgr restart after a node loss: the lost node's ranks start on another node of the job
     * (orte/runtime/relocate.h holds the one format of the three; docs/errmgr.md) */
    ORTE_SESSION_TAG_RELOCATE = 57,  /* 0 -> session: {relocate}: start here the ranks of the
                                        lost node (with herdrun's count of their restarts) */
    ORTE_SESSION_TAG_RELOCATED = 58, /* session -> 0: {relocate}: started (ranks, pids) or why
                                        not (status, reason) */
    ORTE_SESSION_TAG_MOVED = 59,     /* 0 -> every session: {relocate}: those ranks run on
                                        to_candidate now; lost_vpid reports nothing more */
};

/* The collective every session daemon and herdrun start once connected: an allgather of the
 * program checks (empty: fine), so nothing starts anywhere when a program is missing. */
#define ORTE_SESSION_COLL_CHECK 1u

#define ORTE_SESSION_SHEPHERD 1u

/* Session daemon (herdd --session): run one job's part on this node, from the segment its node's
 * daemon wrote (orte/runtime/session_handoff.h). Returns the exit status, which the caller must
 * pass to _exit, not exit: the wireup library is left running at the end
 * (orte_session_wireup_end). */
OPAL_EXPORT int orte_session_main(void);

/* Be the session daemon of a one-node job in a child forked by its launcher (parent): no node
 * daemon, no exec. The daemon's ends of every process's pipes go to the launcher over iof_sock
 * (a Unix socket, orte_iof_base_send_fds), which forwards their I/O itself; a last message
 * with rank ORTE_IOF_RANK_DAEMON and no fds says every process was handed over. stdin_fd
 * (or -1) is the launcher's stdin, given as is to the job's stdin target (a rank) instead of a
 * pipe. parent_sock (or -1) is this daemon's end of a stream socketpair whose other end the
 * launcher adopted as its overlay connection to vpid 1 (the overlay's adopt_peer): the daemon
 * adopts it as its parent connection instead of dialling the job's sink_uri. Returns the exit
 * status, for _exit (not exit: see orte_session_main). */
OPAL_EXPORT int orte_session_run_forked(const void *segment, size_t len, pid_t parent, int iof_sock,
                                        int stdin_fd, int parent_sock);

#endif /* ORTE_RUNTIME_SESSION_H */
