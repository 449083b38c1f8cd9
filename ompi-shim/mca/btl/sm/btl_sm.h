/* SPDX-License-Identifier: BSD-3-Clause */
/* btl sm: each process owns one receive segment holding a few fast boxes and a ring. A fast box
 * is a small single-producer ring of 64-byte-aligned records that one sender claims on its first
 * message: a small message is one record, header and payload in one or a few cache lines, sent
 * without an atomic read-modify-write. The ring is a bounded lock-free ring of fixed-size cells
 * that every process of the node may push into (multi-producer, single consumer): senders
 * without a box, and long messages, in consecutive cells of their sender which the receiver
 * joins (docs/btl.md). This header is the segment, the ring and the boxes, shared by the
 * component and its unit test. */
#ifndef OMPI_BTL_SM_H
#define OMPI_BTL_SM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BTL_SM_MAGIC   0x68726473u /* "hrds", written last by the creator */
#define BTL_SM_VERSION 2u

/* A segment's shape, chosen by its creator (the others read it from the header). */
typedef struct btl_sm_geometry {
    uint32_t num_cells;  /* a power of two, >= 2 */
    uint32_t cell_size;  /* bytes of a cell with its header, a multiple of 8, >= 64 */
    uint32_t num_fboxes; /* may be 0 */
    uint32_t fbox_size;  /* data bytes of a box, a power of two >= 256 */
} btl_sm_geometry_t;

/* The segment's first bytes. The producers' position, the consumer's and the boxes' claim
 * counter sit on their own cache lines: a sender must not slow the receiver's reads. */
typedef struct btl_sm_header {
    _Atomic uint32_t magic;
    uint32_t version;
    uint64_t size;      /* bytes of the whole segment */
    uint32_t num_cells; /* a power of two */
    uint32_t cell_size; /* bytes of a cell, with its header */
    uint32_t owner;     /* the receiving rank */
    uint32_t num_fboxes;
    uint32_t fbox_size; /* data bytes of each box */
    uint8_t pad0[64 - 36];
    _Atomic uint64_t enqueue_pos; /* producers */
    uint8_t pad1[64 - 8];
    _Atomic uint64_t dequeue_pos; /* the owner only; read by a sender switching to its box */
    uint8_t pad2[64 - 8];
    _Atomic uint32_t fboxes_claimed; /* senders, once each; may count past num_fboxes */
    uint8_t pad3[64 - 4];
} btl_sm_header_t;

/* A fast box: its owner (sender rank + 1, 0 while unclaimed), the consumer's position on its own
 * line (a sender reads it only when the box looks full), then fbox_size bytes of records. */
typedef struct btl_sm_fbox {
    _Atomic uint32_t owner;
    uint8_t pad0[64 - 4];
    _Atomic uint64_t tail; /* bytes consumed (absolute position) */
    uint8_t pad1[64 - 8];
    unsigned char data[];
} btl_sm_fbox_t;

/* A record in a box, at a 64-byte boundary, its payload right after it. seq is its absolute
 * position + 1 once published; 0 (fresh pages, or cleared by the sender before it publishes the
 * record in front) is never valid, so stale bytes of an earlier lap are never taken for one. */
typedef struct btl_sm_rec {
    _Atomic uint64_t seq;
    int32_t tag;
    uint32_t len; /* payload bytes, or BTL_SM_REC_WRAP: the rest of the box is skipped */
    unsigned char data[];
} btl_sm_rec_t;

#define BTL_SM_REC_WRAP UINT32_MAX

/* A sender's view of the box it claimed. */
typedef struct btl_sm_fbox_sender {
    btl_sm_fbox_t *box; /* NULL: no box */
    uint32_t size;
    uint64_t head;       /* where the next record goes */
    uint64_t tail_cache; /* the consumer's position when last read */
} btl_sm_fbox_sender_t;

/* The receiver's view of one of its boxes. */
typedef struct btl_sm_fbox_receiver {
    btl_sm_fbox_t *box;
    uint32_t size;
    uint32_t src; /* the sender's rank */
    uint64_t head;
} btl_sm_fbox_receiver_t;

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
    unsigned char *cells;
    uint32_t num_fboxes;
    uint32_t fbox_size;
} btl_sm_segment_t;

/* Bytes a segment of this geometry needs. */
size_t btl_sm_segment_size(const btl_sm_geometry_t *geometry);

/* Map the segment called name, creating it (owner, geometry) if nobody has yet: any of its users
 * may be first (a sender before the receiver started), the others wait up to timeout_ms for the
 * creator to finish it and take its geometry. *created says who did. HERD_ERR_BAD_PARAM for a
 * geometry outside what btl_sm_geometry_t says; HERD_ERR_VERSION_MISMATCH for a segment of
 * another version; HERD_ERR_TIMEOUT; HERD_ERR_IN_ERRNO (errno says why). */
int btl_sm_segment_attach(const char *name, uint32_t owner, const btl_sm_geometry_t *geometry,
                          int timeout_ms, btl_sm_segment_t *seg, bool *created);
void btl_sm_segment_detach(btl_sm_segment_t *seg);

/* Push one fragment (frag_len <= seg->payload bytes of data): false when the ring is full. *pos
 * (may be NULL) is the position it took: the receiver has read it once dequeue_pos > *pos. */
bool btl_sm_ring_push(btl_sm_segment_t *seg, uint32_t src, int tag, uint64_t total,
                      const void *data, uint32_t frag_len, uint64_t *pos);
/* Has the receiver read every cell up to position pos? */
bool btl_sm_ring_consumed(const btl_sm_segment_t *seg, uint64_t pos);
/* The next cell to read, or NULL when the ring is empty; btl_sm_ring_release hands it back. */
btl_sm_cell_t *btl_sm_ring_peek(btl_sm_segment_t *seg);
void btl_sm_ring_release(btl_sm_segment_t *seg, btl_sm_cell_t *cell);

/* Claim a box of seg for sender rank src: HERD_ERR_OUT_OF_RESOURCE when all are taken. */
int btl_sm_fbox_claim(btl_sm_segment_t *seg, uint32_t src, btl_sm_fbox_sender_t *sender);
/* The longest payload a box of size bytes carries in one record (a quarter of it, less the
 * record header, so that a few messages are in flight at once). */
uint32_t btl_sm_fbox_max_payload(uint32_t size);
/* Write one record (len <= btl_sm_fbox_max_payload): false when the box has no room now. */
bool btl_sm_fbox_push(btl_sm_fbox_sender_t *sender, int tag, const void *data, uint32_t len);
/* Has the receiver read every record of this box? */
bool btl_sm_fbox_drained(btl_sm_fbox_sender_t *sender);

/* The boxes of seg claimed since *seen (the receiver's count), each whose sender has written its
 * rank: fills receivers[*seen ...] and advances *seen. */
void btl_sm_fbox_discover(btl_sm_segment_t *seg, btl_sm_fbox_receiver_t *receivers, uint32_t *seen);
/* The next record, or NULL; btl_sm_fbox_release hands it back. */
const btl_sm_rec_t *btl_sm_fbox_peek(btl_sm_fbox_receiver_t *receiver);
void btl_sm_fbox_release(btl_sm_fbox_receiver_t *receiver, const btl_sm_rec_t *rec);

#endif /* OMPI_BTL_SM_H */
