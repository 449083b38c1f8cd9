/* SPDX-License-Identifier: BSD-3-Clause */
/* The DVM's tool protocol, shared by its files only: dvm_tool.c (framing, hello, launch),
 * dvm_tool_jobs.c (the root's table of running jobs: herd-ps, herd-cancel, queries relayed to
 * each job's herdrun) and dvm_tool_query.c (the tools' side of those). */
#ifndef ORTE_RUNTIME_DVM_TOOL_INTERNAL_H
#define ORTE_RUNTIME_DVM_TOOL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "opal/dss/buffer.h"
#include "orte/runtime/dvm.h"
#include "orte/runtime/job.h"

enum {
    ORTE_DVM_TOOL_HELLO = 1,     /* tool -> root: {u32 version} */
    ORTE_DVM_TOOL_WELCOME = 2,   /* root -> tool: {u32 version, id, u32 radix, u32 seq,
                                    allocation, u32 n, n inventories, n bool up} */
    ORTE_DVM_TOOL_LAUNCH = 3,    /* tool -> root: {bytes launch message} */
    ORTE_DVM_TOOL_JOB_ERROR = 4, /* root -> tool: {jobid, node, message} */
    /* herd-ps: the DVM's nodes and running jobs (orte_dvm_ps_t) */
    ORTE_DVM_TOOL_PS = 5,        /* tool -> root: {u32 version} */
    ORTE_DVM_TOOL_PS_ANSWER = 6, /* root -> tool: orte_dvm_ps_pack() */
    /* a question for the herdrun that drives a job, relayed by the root */
    ORTE_DVM_TOOL_JOB_QUERY = 7,  /* tool -> root: {u32 version, jobid, u32 what};
                                     root -> herdrun: {u32 qid, u32 what} */
    ORTE_DVM_TOOL_JOB_ANSWER = 8, /* herdrun -> root: {u32 qid, i32 status, bytes};
                                     root -> tool: {i32 status, bytes} */
    /* herd-cancel */
    ORTE_DVM_TOOL_CANCEL = 9,         /* tool -> root: {u32 version, jobid, i32 signo} */
    ORTE_DVM_TOOL_SIGNAL = 10,        /* root -> herdrun: {i32 signo, u32 uid, i32 pid} */
    ORTE_DVM_TOOL_CANCEL_ANSWER = 11, /* root -> tool: {i32 status, u32 owner uid} */
    ORTE_DVM_TOOL_JOB_QUEUE = 20, /* root -> tool: {jobid, node}: the job waits for a session
                                     slot there ("": it started) */
    /* herd-dvm --add-host (dvm_rejoin.h) */
    ORTE_DVM_TOOL_REJOIN = 30,        /* tool -> root: {u32 version, host} */
    ORTE_DVM_TOOL_REJOIN_ANSWER = 31, /* root -> tool: {u32 version, i32 status, message} */
};

/* Send one length-prefixed frame (blocking until it is out). */
int orte_dvm_tool_send_frame(int fd, const opal_buffer_t *buffer);

/* Root side (dvm_tool_jobs.c), called by dvm_tool.c. */
/* A tool connection launched this job (its peer's uid and pid from SO_PEERCRED). */
int orte_dvm_tool_jobs_add(orte_dvm_t *dvm, int fd, uid_t uid, pid_t pid,
                           const orte_job_launch_t *launch);
/* A tool connection closed: its job (if any) is over, and its pending queries die. */
void orte_dvm_tool_jobs_conn_closed(int fd);
/* A frame of the types above 4 from connection fd (peer uid); HERD_ERR_UNPACK_FAILURE for a
 * type it does not know or malformed input (the connection is then dropped). */
int orte_dvm_tool_jobs_frame(orte_dvm_t *dvm, int fd, uid_t uid, uint32_t type,
                             opal_buffer_t *frame);
/* Root side (dvm_rejoin.c): a tool's ORTE_DVM_TOOL_REJOIN frame from connection fd (answered
 * on fd, at once when refused, else once the daemon joined or failed); an error drops the
 * connection. And: tool connection fd closed. */
int dvm_rejoin_tool_request(orte_dvm_t *dvm, int fd, opal_buffer_t *frame);
void dvm_rejoin_conn_closed(orte_dvm_t *dvm, int fd);

/* The root's tool server (toolsrv) is started, and stopped by orte_dvm_tool_jobs_clear(). */
void orte_dvm_tool_jobs_serve(orte_dvm_t *dvm);
void orte_dvm_tool_jobs_clear(void);

#endif /* ORTE_RUNTIME_DVM_TOOL_INTERNAL_H */
