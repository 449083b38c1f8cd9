/* SPDX-License-Identifier: BSD-3-Clause */
/* The proc table as a two-level sparse array indexed by rank: an index of one pointer per
 * OMPI_PROC_BLOCK_SIZE ranks, blocks of proc pointers allocated on demand, one proc per peer
 * actually looked up. A process that talks to 2 peers of a million-rank job holds 2 procs, 2
 * blocks (4 KiB) and a 31 KiB index, not a million of anything. */
#include "herd_config.h"

#include <stdbool.h>
#include <stdlib.h>

#include "ompi-shim/mca/endpoint/endpoint.h"
#include "ompi-shim/proc/proc.h"
#include "opal/status.h"

typedef ompi_proc_t *ompi_proc_block_t[OMPI_PROC_BLOCK_SIZE];

/* The process's one table (libherd has one job). */
static struct {
    bool initialized;
    uint32_t job_size;
    uint32_t num_index;        /* ceil(job_size / OMPI_PROC_BLOCK_SIZE) */
    ompi_proc_block_t **index; /* num_index entries, allocated at the first lookup */
    size_t num_blocks;
    size_t num_procs;
} proc_table;

int ompi_proc_init(uint32_t job_size)
{
    if (proc_table.initialized || 0 == job_size) {
        return HERD_ERR_BAD_PARAM;
    }
    proc_table.job_size = job_size;
    proc_table.num_index =
        (uint32_t) (((uint64_t) job_size + OMPI_PROC_BLOCK_SIZE - 1) / OMPI_PROC_BLOCK_SIZE);
    proc_table.index = NULL;
    proc_table.num_blocks = 0;
    proc_table.num_procs = 0;
    proc_table.initialized = true;
    return HERD_SUCCESS;
}

void ompi_proc_foreach(void (*fn)(ompi_proc_t *proc, void *data), void *data)
{
    if (!proc_table.initialized || NULL == proc_table.index) {
        return;
    }
    for (uint32_t b = 0; b < proc_table.num_index; ++b) {
        ompi_proc_block_t *block = proc_table.index[b];
        for (uint32_t i = 0; NULL != block && i < OMPI_PROC_BLOCK_SIZE; ++i) {
            if (NULL != (*block)[i]) {
                fn((*block)[i], data);
            }
        }
    }
}

static void release_proc(ompi_proc_t *proc, void *data)
{
    ompi_endpoint_base_proc_release(proc);
    free(proc);
}

void ompi_proc_finalize(void)
{
    if (!proc_table.initialized) {
        return;
    }
    ompi_proc_foreach(release_proc, NULL);
    for (uint32_t b = 0; NULL != proc_table.index && b < proc_table.num_index; ++b) {
        free(proc_table.index[b]);
    }
    free(proc_table.index);
    proc_table.index = NULL;
    proc_table.num_blocks = 0;
    proc_table.num_procs = 0;
    proc_table.job_size = 0;
    proc_table.num_index = 0;
    proc_table.initialized = false;
}

ompi_proc_t *ompi_proc_find(uint32_t rank)
{
    if (rank >= proc_table.job_size || NULL == proc_table.index) {
        return NULL;
    }
    ompi_proc_block_t *block = proc_table.index[rank / OMPI_PROC_BLOCK_SIZE];
    return NULL != block ? (*block)[rank % OMPI_PROC_BLOCK_SIZE] : NULL;
}

int ompi_proc_lookup(uint32_t rank, ompi_proc_t **proc)
{
    if (!proc_table.initialized) {
        return HERD_ERR_NOT_AVAILABLE;
    }
    if (rank >= proc_table.job_size) {
        return HERD_ERR_BAD_PARAM;
    }
    ompi_proc_t *found = ompi_proc_find(rank);
    if (NULL != found) {
        *proc = found;
        return HERD_SUCCESS;
    }
    if (NULL == proc_table.index) {
        proc_table.index = calloc(proc_table.num_index, sizeof(*proc_table.index));
        if (NULL == proc_table.index) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    ompi_proc_block_t **slot = &proc_table.index[rank / OMPI_PROC_BLOCK_SIZE];
    if (NULL == *slot) {
        /* kept even if the proc allocation below fails: an empty block is still valid */
        if (NULL == (*slot = calloc(1, sizeof(**slot)))) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        proc_table.num_blocks++;
    }
    ompi_proc_t *created = calloc(1, sizeof(*created));
    if (NULL == created) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    created->rank = rank;
    (**slot)[rank % OMPI_PROC_BLOCK_SIZE] = created;
    proc_table.num_procs++;
    *proc = created;
    return HERD_SUCCESS;
}

void ompi_proc_stats(ompi_proc_stats_t *stats)
{
    *stats = (ompi_proc_stats_t){
        .job_size = proc_table.job_size,
        .num_procs = proc_table.num_procs,
        .num_blocks = proc_table.num_blocks,
        .table_bytes = (NULL != proc_table.index ? proc_table.num_index * sizeof(void *) : 0) +
                       proc_table.num_blocks * sizeof(ompi_proc_block_t),
        .proc_bytes = proc_table.num_procs * sizeof(ompi_proc_t),
    };
}
