/* SPDX-License-Identifier: BSD-3-Clause */
/* Mapping a job on every node without launching it (herdrun --do-not-launch --mca
 * herdrun_map_everywhere 1): what a node daemon reports once its virtual session mapped the job,
 * the checksums both sides compute, and the wire format of a subtree's reports
 * (ORTE_DVM_TAG_MAPPED: each daemon sends its parent its own and its subtree's in one message),
 * shared by the daemons (dvm_map_only.c), herdrun (launch_map.c), the unit test and the fuzzer. */
#ifndef ORTE_RUNTIME_DVM_MAP_H
#define ORTE_RUNTIME_DVM_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "orte/mca/rmaps/rmaps.h"

#define DVM_MAP_WIRE_VERSION 1u
/* uint8 version, uint32 count, then per report: uint32 vpid, uint32 job seq, int32 status,
 * uint32 procs, first, last, uint64 rank_sum, map_sum, map_ns, total_ns; big-endian */
#define DVM_MAP_HEADER_BYTES 5u
#define DVM_MAP_ENTRY_BYTES  56u

/* One node's map of the job: the processes it would start, and how long mapping took. */
typedef struct dvm_map_report {
    uint32_t job_seq;
    int32_t status;     /* HERD_SUCCESS, or why the node could not map the job */
    uint32_t num_procs; /* its local processes */
    uint32_t first;     /* lowest and highest local rank (0 and 0 when none) */
    uint32_t last;
    uint64_t rank_sum; /* sum of dvm_map_mix(rank) over its processes: over every node, that of
                        * every rank of the job exactly once */
    uint64_t map_sum;  /* sum of dvm_map_proc_hash() over its processes: rank, local rank and
                        * binding, as herdrun's own map of the job gives for that node */
    uint64_t map_ns;   /* CPU time of the mapper run (orte_rmaps_base_map_job) */
    uint64_t total_ns; /* CPU time of the whole virtual session: node table, topology, map */
} dvm_map_report_t;

/* A 64-bit mix of x (splitmix64's finalizer): sums of it tell sets of ranks apart. */
static inline uint64_t dvm_map_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* One process's part of map_sum. */
uint64_t dvm_map_proc_hash(const orte_rmaps_proc_t *proc);
/* Add proc to report (its counts and sums). */
void dvm_map_report_add(dvm_map_report_t *report, const orte_rmaps_proc_t *proc);

/* How a node's report compares with what herdrun's own map gives that node. */
typedef enum {
    DVM_MAP_AGREES = 0,
    DVM_MAP_OTHER_JOB,     /* a report for another job */
    DVM_MAP_FAILED,        /* the node could not map the job (got->status) */
    DVM_MAP_OTHER_RANKS,   /* other processes: count, rank range or rank checksum */
    DVM_MAP_OTHER_BINDING, /* the same ranks, numbered or bound otherwise (map checksum) */
} dvm_map_verdict_t;
dvm_map_verdict_t dvm_map_report_compare(const dvm_map_report_t *got, const dvm_map_report_t *want,
                                         uint32_t job_seq);

/* A node's report, and the node (its daemon's vpid). */
typedef struct dvm_map_entry {
    uint32_t vpid;
    dvm_map_report_t report;
} dvm_map_entry_t;

/* The message of count reports: DVM_MAP_HEADER_BYTES + count * DVM_MAP_ENTRY_BYTES bytes. */
static inline size_t dvm_map_message_bytes(uint32_t count)
{
    return DVM_MAP_HEADER_BYTES + (size_t) count * DVM_MAP_ENTRY_BYTES;
}
void dvm_map_encode(const dvm_map_entry_t *entries, uint32_t count, uint8_t *out);
/* Decode a message of a DVM of size daemons, rejecting (with a reason) another version, a length
 * other than its count's, no report or more than size - 1, a vpid outside 1..size-1, a positive
 * status, ranks out of order, more processes than their range holds, and a map time above the
 * total. *entries (malloc'd, count of them) set only on success. */
int dvm_map_decode(const void *data, size_t len, uint32_t size, dvm_map_entry_t **entries,
                   uint32_t *count, char *reason, size_t rsize);

#endif /* ORTE_RUNTIME_DVM_MAP_H */
