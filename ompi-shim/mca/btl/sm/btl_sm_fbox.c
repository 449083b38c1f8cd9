/* SPDX-License-Identifier: BSD-3-Clause */
/* btl sm's fast boxes: one sender's single-producer ring of 64-byte-aligned records in the
 * receiver's segment. A sender writes the payload, clears the header of the record that will
 * follow, and publishes the record by storing its position + 1 last (release); the receiver polls
 * the header at its position and hands the space back by advancing the box's tail, which the
 * sender reads only when the box looks full. No atomic read-modify-write on the way. */
#include "herd_config.h"

#include <string.h>

#include "ompi-shim/mca/btl/sm/btl_sm.h"
#include "opal/status.h"

#define LINE 64u

_Static_assert(sizeof(btl_sm_rec_t) == 16, "a record's header is 16 bytes");

static btl_sm_fbox_t *fbox_at(const btl_sm_segment_t *seg, uint32_t i)
{
    return (btl_sm_fbox_t *) ((unsigned char *) seg->header + sizeof(btl_sm_header_t) +
                              (size_t) i * (sizeof(btl_sm_fbox_t) + seg->fbox_size));
}

static btl_sm_rec_t *rec_at(btl_sm_fbox_t *box, uint32_t size, uint64_t pos)
{
    return (btl_sm_rec_t *) (box->data + (pos & (size - 1)));
}

/* Bytes a record of len payload bytes takes: whole cache lines. */
static uint64_t rec_bytes(uint32_t len)
{
    return ((uint64_t) sizeof(btl_sm_rec_t) + len + LINE - 1) & ~(uint64_t) (LINE - 1);
}

int btl_sm_fbox_claim(btl_sm_segment_t *seg, uint32_t src, btl_sm_fbox_sender_t *sender)
{
    memset(sender, 0, sizeof(*sender));
    if (0 == seg->num_fboxes) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    uint32_t i = atomic_fetch_add_explicit(&seg->header->fboxes_claimed, 1, memory_order_relaxed);
    if (i >= seg->num_fboxes) {
        return HERD_ERR_OUT_OF_RESOURCE; /* the counter only grows: later senders use the ring */
    }
    sender->box = fbox_at(seg, i);
    sender->size = seg->fbox_size;
    /* a box is claimed once per segment: it starts empty, at position 0 */
    atomic_store_explicit(&sender->box->owner, src + 1, memory_order_release);
    return HERD_SUCCESS;
}

uint32_t btl_sm_fbox_max_payload(uint32_t size)
{
    return size / 4 - (uint32_t) sizeof(btl_sm_rec_t);
}

/* Write the record at pos (its space is free, and so is the line after it): clear the header
 * that follows first, so that what an earlier lap left there is never read as a record. */
static void write_rec(btl_sm_fbox_sender_t *s, uint64_t pos, int tag, const void *data,
                      uint32_t len)
{
    btl_sm_rec_t *rec = rec_at(s->box, s->size, pos);
    btl_sm_rec_t *next = rec_at(s->box, s->size, pos + rec_bytes(len));

    atomic_store_explicit(&next->seq, 0, memory_order_relaxed);
    rec->tag = tag;
    rec->len = len;
    if (len > 0) {
        memcpy(rec->data, data, len);
    }
    atomic_store_explicit(&rec->seq, pos + 1, memory_order_release);
}

bool btl_sm_fbox_push(btl_sm_fbox_sender_t *s, int tag, const void *data, uint32_t len)
{
    uint64_t need = rec_bytes(len);
    uint64_t off = s->head & (s->size - 1);
    uint64_t skip = off + need > s->size ? s->size - off : 0;
    /* the record, the end of the box it skips, and the next record's header line */
    uint64_t end = s->head + skip + need + LINE;

    if (end - s->tail_cache > s->size) {
        s->tail_cache = atomic_load_explicit(&s->box->tail, memory_order_acquire);
        if (end - s->tail_cache > s->size) {
            return false;
        }
    }
    if (skip > 0) {
        /* a wrap marker where the record does not fit; the receiver goes on at offset 0, whose
         * header the marker's write_rec clears first */
        btl_sm_rec_t *first = rec_at(s->box, s->size, 0);
        atomic_store_explicit(&first->seq, 0, memory_order_relaxed);
        btl_sm_rec_t *marker = rec_at(s->box, s->size, s->head);
        marker->tag = 0;
        marker->len = BTL_SM_REC_WRAP;
        atomic_store_explicit(&marker->seq, s->head + 1, memory_order_release);
        s->head += skip;
    }
    write_rec(s, s->head, tag, data, len);
    s->head += need;
    return true;
}

bool btl_sm_fbox_drained(btl_sm_fbox_sender_t *s)
{
    if (s->tail_cache != s->head) {
        s->tail_cache = atomic_load_explicit(&s->box->tail, memory_order_acquire);
    }
    return s->tail_cache == s->head;
}

void btl_sm_fbox_discover(btl_sm_segment_t *seg, btl_sm_fbox_receiver_t *receivers, uint32_t *seen)
{
    uint32_t claimed = atomic_load_explicit(&seg->header->fboxes_claimed, memory_order_relaxed);

    if (claimed > seg->num_fboxes) {
        claimed = seg->num_fboxes;
    }
    /* in claim order; one whose sender has not written its rank yet is looked at next time */
    while (*seen < claimed) {
        btl_sm_fbox_t *box = fbox_at(seg, *seen);
        uint32_t owner = atomic_load_explicit(&box->owner, memory_order_acquire);
        if (0 == owner) {
            return;
        }
        receivers[*seen] = (btl_sm_fbox_receiver_t){
            .box = box, .size = seg->fbox_size, .src = owner - 1, .head = 0};
        (*seen)++;
    }
}

const btl_sm_rec_t *btl_sm_fbox_peek(btl_sm_fbox_receiver_t *r)
{
    btl_sm_rec_t *rec = rec_at(r->box, r->size, r->head);

    if (atomic_load_explicit(&rec->seq, memory_order_acquire) != r->head + 1) {
        return NULL;
    }
    if (BTL_SM_REC_WRAP == rec->len) {
        r->head += r->size - (r->head & (r->size - 1));
        atomic_store_explicit(&r->box->tail, r->head, memory_order_release);
        rec = rec_at(r->box, r->size, r->head);
        if (atomic_load_explicit(&rec->seq, memory_order_acquire) != r->head + 1) {
            return NULL;
        }
    }
    return rec;
}

void btl_sm_fbox_release(btl_sm_fbox_receiver_t *r, const btl_sm_rec_t *rec)
{
    r->head += rec_bytes(rec->len);
    atomic_store_explicit(&r->box->tail, r->head, memory_order_release);
}
