/* SPDX-License-Identifier: BSD-3-Clause */
/* The proc table: one ompi_proc_t per peer this process talks to, created on its first lookup,
 * holding that peer's endpoint slots (docs/endpoint.md). Internal to libherd (hidden), and not
 * thread-safe, like the rest of libherd: callers serialize. */
#ifndef OMPI_PROC_H
#define OMPI_PROC_H

#include <stddef.h>
#include <stdint.h>

#include "herd_endpoint_tags.h"

/* Whether a proc has an endpoint array at all: not when configured with
 * --disable-dynamic-endpoint-slots and no built transport declares a tag (C has no zero-length
 * arrays, and an empty one would cost a pointer per proc for nothing). HERD_ENDPOINT_SLOT_COUNT
 * itself cannot be used in #if: it counts enum constants. */
#define OMPI_PROC_HAVE_ENDPOINTS (HERD_ENDPOINT_NUM_STATIC_TAGS + HERD_ENDPOINT_DYNAMIC_SLOTS > 0)

/* A peer. Node and locality are not copied here: libherd reads them from the job database on
 * demand (herd_peer_node, herd_peer_locality), so a proc stays a few words. */
typedef struct ompi_proc {
#if OMPI_PROC_HAVE_ENDPOINTS
    /* endpoint[HERD_ENDPOINT_TAG_X]: transport X's endpoint for this peer, NULL until it makes
     * one; endpoint[HERD_ENDPOINT_DYNAMIC_INDEX]: owned by the endpoint framework (its table of
     * run-time registered slots, NULL until the first set) */
    void *endpoint[HERD_ENDPOINT_SLOT_COUNT];
#endif
    uint32_t rank; /* in this job */
    /* The btl base's module for this peer: 1 + its index in the selected list, 0 before the
     * first message to it (docs/btl.md). It sits in the rank's padding, so it costs nothing
     * when the proc has slots. */
    uint8_t btl_choice;
} ompi_proc_t;

/* Ranks per second-level block of the table: a block of 256 pointers (2 KiB) is allocated when
 * the first rank in it is looked up. */
#define OMPI_PROC_BLOCK_SIZE 256u

/* Where the table's memory goes, for tests and docs/endpoint.md. */
typedef struct ompi_proc_stats {
    uint32_t job_size;
    size_t num_procs;   /* procs created so far */
    size_t num_blocks;  /* second-level blocks allocated */
    size_t table_bytes; /* the block index and the blocks, without the procs */
    size_t proc_bytes;  /* num_procs * sizeof(ompi_proc_t), without malloc's overhead */
} ompi_proc_stats_t;

/* Start an empty table for a job of job_size ranks; nothing is allocated before the first
 * lookup. HERD_ERR_BAD_PARAM when job_size is 0 or a table exists already. */
int ompi_proc_init(uint32_t job_size);
/* Free every proc, after the endpoint framework released what it keeps for each (its dynamic
 * table), and the table. Nothing when there is no table. */
void ompi_proc_finalize(void);

/* The proc of rank, created with every slot NULL on the first lookup. HERD_ERR_NOT_AVAILABLE
 * before ompi_proc_init, HERD_ERR_BAD_PARAM for a rank outside the job, HERD_ERR_OUT_OF_RESOURCE.
 * *proc is set only on success; a proc's address never changes until ompi_proc_finalize. */
int ompi_proc_lookup(uint32_t rank, ompi_proc_t **proc);
/* The proc of rank if a lookup created it, else NULL: never creates (a transport asking "do I
 * know this peer yet?" must not grow the table). */
ompi_proc_t *ompi_proc_find(uint32_t rank);

/* Call fn on every existing proc, in rank order. fn must not create or free procs. */
void ompi_proc_foreach(void (*fn)(ompi_proc_t *proc, void *data), void *data);

/* The table's current memory use. */
void ompi_proc_stats(ompi_proc_stats_t *stats);

#endif /* OMPI_PROC_H */
