/* btl sm: each process owns one receive segment, a bounded lock-free ring of fixed-size cells
 * that every process of its node may push into (multi-producer, single consumer). A message
 * that fits in a cell travels in one; a longer one in consecutive cells of its sender, which
 * the receiver joins (docs/btl.md). This header is the ring and the segment, shared by the
 * component and its unit test. */
#ifndef OMPI_BTL_SM_H
#define OMPI_BTL_SM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BTL_SM_MAGIC   0x68726473u /* "hrds", written last by the creator */
#define BTL_SM_VERSION 1u

/* The segment's first bytes. The producers' position and the consumer's sit on their own cache
 * lines: a sender must not slow the receiver's reads. */
typedef struct btl_sm_header {
    _Atomic uint32_t magic;
    uint32_t version;
    uint64_t size;      /* bytes of the whole segment */
    uint32_t num_cells; /* a power of two */
    uint32_t cell_size; /* bytes of a cell, with its header */
    uint32_t owner;     /* the receiving rank */
    uint8_t pad0[64 - 28];
    _Atomic uint64_t enqueue_pos; /* producers */
    uint8_t pad1[64 - 8];
    _Atomic uint64_t dequeue_pos; /* the owner only; atomic to be read by tests */
    uint8_t pad2[64 - 8];
} btl_sm_header_t;

/* A cell: seq tells whose turn it is (a producer's at pos, the consumer's at pos + 1). */
typedef struct btl_sm_cell {
    _Atomic uint64_t seq;
    uint32_t src;
    int32_t tag;
    uint64_t total;    /* bytes of the whole message */
    uint32_t frag_len; /* bytes in this cell */
    uint32_t reserved;
    unsigned char data[];
} btl_sm_cell_t;

/* A mapped segment. */
typedef struct btl_sm_segment {
    btl_sm_header_t *header;
    size_t size;
    uint32_t num_cells;
    uint32_t cell_size;
    size_t payload; /* data bytes per cell */
} btl_sm_segment_t;

/* Bytes a segment of num_cells cells of cell_size bytes needs. */
size_t btl_sm_segment_size(uint32_t num_cells, uint32_t cell_size);

/* Map the segment called name, creating it (owner, num_cells, cell_size) if nobody has yet:
 * any of its users may be first (a sender before the receiver started), the others wait up to
 * timeout_ms for the creator to finish it. *created says who did. HERD_ERR_BAD_PARAM for a
 * geometry that is not a power-of-two number of cells of at least 64 bytes, a multiple of 8;
 * HERD_ERR_VERSION_MISMATCH for a segment of another version; HERD_ERR_TIMEOUT;
 * HERD_ERR_IN_ERRNO (errno says why). */
int btl_sm_segment_attach(const char *name, uint32_t owner, uint32_t num_cells, uint32_t cell_size,
                          int timeout_ms, btl_sm_segment_t *seg, bool *created);
void btl_sm_segment_detach(btl_sm_segment_t *seg);

/* Push one fragment (frag_len <= seg->payload bytes of data): false when the ring is full. */
bool btl_sm_ring_push(btl_sm_segment_t *seg, uint32_t src, int tag, uint64_t total,
                      const void *data, uint32_t frag_len);
/* The next cell to read, or NULL when the ring is empty; btl_sm_ring_release hands it back. */
btl_sm_cell_t *btl_sm_ring_peek(btl_sm_segment_t *seg);
void btl_sm_ring_release(btl_sm_segment_t *seg, btl_sm_cell_t *cell);

#endif /* OMPI_BTL_SM_H */
