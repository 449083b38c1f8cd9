/* SPDX-License-Identifier: BSD-3-Clause */
/* A job as herdrun describes it (the app contexts and the job-wide choices) and the launch
 * message that carries it to every node: its size depends on the apps, never on the number of
 * processes. */
#ifndef ORTE_RUNTIME_JOB_H
#define ORTE_RUNTIME_JOB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "opal/dss/buffer.h"
#include "opal/status.h"
#include "opal/visibility.h"

/* Version of the launch message (raise it with every change to the encoding below, and with
 * every change of the messages the job's session daemons and herdrun exchange: proc_record.h,
 * session.h; the launch message is where mixed versions are refused). 5: node lists as runs;
 * 7: session slots (runs too), restart counts, tool flags. */
#define ORTE_JOB_WIRE_VERSION 7u
#define ORTE_JOB_SECRET_BYTES 32u
/* Limits the decoder enforces, so a corrupt message cannot make it allocate without bound. */
#define ORTE_JOB_MAX_APPS  4096u
/* arguments (and -x, --mca entries) of one app: more than any execve() takes with an 8 MiB
 * stack (ARG_MAX 2 MiB, each argument at least 2 bytes and a pointer); herdrun refuses more */
#define ORTE_JOB_MAX_ARGS  (1u << 20)
#define ORTE_JOB_MAX_HOSTS (1u << 20)

/* Job-wide flags (herdrun options). */
#define ORTE_JOB_FLAG_DISPLAY_MAP     0x01u /* --display-map */
#define ORTE_JOB_FLAG_REPORT_BINDINGS 0x02u /* --report-bindings */
#define ORTE_JOB_FLAG_REPORT_USAGE    0x04u /* --report-usage */
#define ORTE_JOB_FLAG_EXPLAIN         0x08u /* --explain */
#define ORTE_JOB_FLAG_DO_NOT_LAUNCH   0x10u /* --do-not-launch: map (and display) only */
#define ORTE_JOB_FLAG_VERBOSE         0x20u /* -v: show sizes of what went over the wire */
#define ORTE_JOB_FLAG_MERGE_STDERR    0x40u /* --merge-stderr-to-stdout */
#define ORTE_JOB_FLAG_TAG_OUTPUT      0x80u /* --tag-output */
#define ORTE_JOB_FLAG_TIMESTAMP_OUTPUT 0x100u /* --timestamp-output */
#define ORTE_JOB_FLAG_NO_QUEUE         0x200u /* --no-queue: refuse rather than wait for a slot */
/* session daemons report their processes' pids once started (MPIR, orte/runtime/launch_mpir.c) */
#define ORTE_JOB_FLAG_PROCTABLE 0x400u
#define ORTE_JOB_FLAG_STOP_ON_EXEC 0x800u /* --stop-on-exec: stopped before main, for a debugger */

/* One app context: "-n 4 -x FOO ./prog a b" between two ':'. */
typedef struct orte_job_app {
    char **argv;   /* NULL-terminated; argv[0] is the program as the user typed it */
    char **env;    /* NULL-terminated "NAME=value" added to the procs' environment (-x) */
    char *cwd;     /* --wdir, else herdrun's working directory */
    uint32_t np;   /* -n; 0: every free slot (or what the mapping policy implies) */
    char *map_by;  /* option values as the user gave them (NULL: default); parsed with */
    char *rank_by; /* orte_rmaps_policy_parse() */
    char *bind_to;
    char **seq_hosts; /* --map-by seq: the hostfile's lines in order (NULL: every node once) */
} orte_job_app_t;

typedef struct orte_job_spec {
    char *jobid;  /* unique in the DVM: "<dvm id>.<seq>" */
    uint32_t seq; /* the job's number in its DVM (1, 2, ...) */
    orte_job_app_t *apps;
    uint32_t num_apps;
    char **hosts;          /* the nodes the job may use, by name (NULL: every node of the DVM) */
    uint32_t flags;        /* ORTE_JOB_FLAG_* */
    bool oversubscribe;    /* --oversubscribe: default OVERSUBSCRIBE modifier for every app */
    bool nooversubscribe;  /* --nooversubscribe */
    uint32_t timeout;      /* --timeout seconds; 0: none */
    char *errmgr;          /* errmgr component for the shepherd (NULL: by priority) */
    int32_t kill_grace_ms; /* SIGTERM-to-SIGKILL grace; < 0: odls_base_kill_grace_ms */
    int32_t stdin_target;  /* --stdin: a rank, ORTE_IOF_STDIN_ALL (-2) or _NONE (-1) */
    char **mca;     /* "HERD_MCA_name=value" from --mca, given to session daemons and procs */
    char *sink_uri; /* where herdrun listens for the job's session daemons */
    uint8_t secret[ORTE_JOB_SECRET_BYTES]; /* of the job's overlay */
} orte_job_spec_t;

/* Free what one app owns and zero it (the app itself is the caller's). */
OPAL_EXPORT void orte_job_app_destruct(orte_job_app_t *app);
/* Free everything the spec owns, and the spec. NULL does nothing. */
OPAL_EXPORT void orte_job_spec_free(orte_job_spec_t *spec);

/* Encode the spec (versioned). */
OPAL_EXPORT int orte_job_spec_pack(opal_buffer_t *buffer, const orte_job_spec_t *spec);
/* Decode one spec. Malformed input (wrong version, truncated, a limit exceeded, an app without
 * a program) is HERD_ERR_VERSION_MISMATCH or HERD_ERR_UNPACK_FAILURE, never a crash. *spec set
 * only on success. */
OPAL_EXPORT int orte_job_spec_unpack(opal_buffer_t *buffer, orte_job_spec_t **spec);

/* The launch message as it goes over the DVM: the spec plus O(nodes) facts about the nodes it
 * may use, never anything per process. Candidates are the DVM nodes the job may use, in DVM
 * order (what every mapper maps over); participants are the candidates that get processes
 * (they run a session daemon; participant i is vpid i + 1 of the job's overlay, vpid 0 being
 * herdrun). */
#define ORTE_JOB_SLOT_UNSET UINT32_MAX
typedef struct orte_job_launch {
    orte_job_spec_t *spec;
    uint32_t radix;         /* of the job overlay's tree */
    uint32_t universe_size; /* the DVM's slots (its nodes that are up): MPI_UNIVERSE_SIZE */
    uint32_t num_candidates;
    uint32_t *node_index; /* per candidate: index of the node in the DVM (vpid - 1) */
    uint32_t *slots;      /* per candidate, from the allocation */
    uint32_t *max_slots;
    uint32_t num_participants;
    uint32_t *participants; /* indexes into the candidates, ascending */
    /* per candidate: the node's session slot the job runs in (its session daemon's static
     * endpoint, its share of the port ranges), chosen by the DVM's root among the free ones;
     * ORTE_JOB_SLOT_UNSET until then (a tool's launch), 0 where the node runs no process */
    uint32_t *session_slot;
    /* "signature", "hwloc XML", ... for real topologies the session daemons may not have
     * (only when the job's nodes do not all share one); NULL when none */
    char **xml_pairs;
} orte_job_launch_t;

OPAL_EXPORT void orte_job_launch_free(orte_job_launch_t *launch);
OPAL_EXPORT int orte_job_launch_pack(opal_buffer_t *buffer, const orte_job_launch_t *launch);
/* Malformed input is HERD_ERR_UNPACK_FAILURE (or VERSION_MISMATCH); indexes are checked against
 * num_dvm_nodes (at most ORTE_RAS_MAX_NODES whatever the caller says: runs expand). *launch set
 * only on success. */
OPAL_EXPORT int orte_job_launch_unpack(opal_buffer_t *buffer, uint32_t num_dvm_nodes,
                                       orte_job_launch_t **launch);

/* A spawn (MPI_Comm_spawn) as it travels over the job's overlay: from the asking process's
 * session daemon to herdrun (nspace and offset 0), then from herdrun to every session daemon
 * with the new namespace's index and the first id of its processes. The spec holds the apps
 * (argv, env, cwd, np); herdrun completes it (job id, policies) before passing it on. */
#define ORTE_JOB_SPAWN_WIRE_VERSION 1u
#define ORTE_JOB_MAX_PREPUT         4096u
typedef struct orte_job_spawn {
    uint32_t req_id;        /* the asking daemon's number for the request */
    uint32_t requester;     /* its vpid */
    uint32_t parent_nspace; /* the asking process */
    uint32_t parent_rank;
    uint32_t nspace; /* the new namespace's index (herdrun's) */
    uint32_t offset; /* the first id of its processes in the job (herdrun's) */
    orte_job_spec_t *spec;
    char **preput_keys; /* keys the new processes find in their namespace (NULL: none) */
    char **preput_values;
    uint32_t num_preput;
} orte_job_spawn_t;

OPAL_EXPORT void orte_job_spawn_free(orte_job_spawn_t *spawn);
OPAL_EXPORT int orte_job_spawn_pack(opal_buffer_t *buffer, const orte_job_spawn_t *spawn);
/* Malformed input is HERD_ERR_UNPACK_FAILURE or HERD_ERR_VERSION_MISMATCH, never a crash.
 * *spawn set only on success. */
OPAL_EXPORT int orte_job_spawn_unpack(opal_buffer_t *buffer, orte_job_spawn_t **spawn);

/* The job's total np as the user asked for it (0 when some app takes every free slot). */
OPAL_EXPORT uint64_t orte_job_spec_requested_np(const orte_job_spec_t *spec);

#endif /* ORTE_RUNTIME_JOB_H */
