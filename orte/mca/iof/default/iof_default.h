/* SPDX-License-Identifier: BSD-3-Clause */
/* iof default: what its source and sink share: the wire encoding of the protocol's messages
 * (docs/iof.md), in network byte order. */
#ifndef ORTE_MCA_IOF_DEFAULT_H
#define ORTE_MCA_IOF_DEFAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "orte/mca/iof/iof.h"

/* DATA: {u32 rank, u8 stream, u8 flags, u64 offset, u64 when_ns} then the bytes */
#define IOF_DATA_HEADER  22u
#define IOF_DATA_EOF     0x01u /* the stream ends after these bytes */
#define IOF_DATA_REOPEN  0x02u /* a stream that ended goes on at this offset (its rank restarted) */
/* ACK: {u32 rank, u8 stream, u64 end}: everything before end was written out */
#define IOF_ACK_SIZE     13u
/* STDIN: {u32 target, u8 flags, u64 offset} then the bytes */
#define IOF_STDIN_HEADER 13u
#define IOF_STDIN_EOF    0x01u
/* STDIN_ACK: {u64 end, u8 flags} */
#define IOF_STDIN_ACK_SIZE 9u
#define IOF_STDIN_CLOSED   0x01u /* no target takes stdin any more: stop reading it */
/* READY: {u32 target}: this source holds the target (a rank, or every local process) */
#define IOF_READY_SIZE 4u

/* Largest read from a pipe or stdin at once. */
#define IOF_CHUNK ((size_t) 64 * 1024)

static inline void iof_put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t) (v >> 24);
    p[1] = (uint8_t) (v >> 16);
    p[2] = (uint8_t) (v >> 8);
    p[3] = (uint8_t) v;
}

static inline void iof_put_u64(uint8_t *p, uint64_t v)
{
    iof_put_u32(p, (uint32_t) (v >> 32));
    iof_put_u32(p + 4, (uint32_t) v);
}

static inline uint32_t iof_get_u32(const uint8_t *p)
{
    return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3];
}

static inline uint64_t iof_get_u64(const uint8_t *p)
{
    return ((uint64_t) iof_get_u32(p) << 32) | iof_get_u32(p + 4);
}

/* A message split at its header: the header copied out (it may span pieces), the payload as
 * the remaining pieces (pointing into the message). */
typedef struct iof_msg {
    uint8_t header[IOF_DATA_HEADER];
    struct iovec payload[ORTE_IOF_MAX_PIECES];
    int num_payload;
    size_t payload_len;
} iof_msg_t;

/* Split iov after header_len bytes. false when the message is shorter than that or has too
 * many pieces. */
bool iof_msg_split(const struct iovec *iov, int iovcnt, size_t header_len, iof_msg_t *msg);

/* Entries by rank (a source's processes, the sink's per-rank state), open-addressed and grown
 * as needed. Every entry starts with its uint32_t rank. Iterate over slots[0..cap). */
typedef struct iof_table {
    void **slots;
    size_t cap; /* a power of 2, or 0 */
    size_t count;
} iof_table_t;

void *iof_table_find(const iof_table_t *table, uint32_t rank);
/* HERD_ERR_OUT_OF_RESOURCE when it cannot grow; the rank must not be there yet. */
int iof_table_insert(iof_table_t *table, void *entry);

/* rc of handling message kind msg from vpid from: a malformed one is said at verbosity 1. */
int iof_dropped(int rc, int msg, orte_vpid_t from);

/* Add or remove an event (on: add with no timeout), remembering which it is in *armed. */
void iof_event_arm(opal_event_t *event, bool *armed, bool on);

/* Free the event (if any) and close the fd (if open), leaving both unset. */
void iof_close_watched(opal_event_t **event, bool *armed, int *fd);

/* The source and sink halves of the module. */
int iof_default_source_create(const orte_iof_source_config_t *config,
                              orte_iof_source_t **source);
void iof_default_source_destroy(orte_iof_source_t *source);
int iof_default_source_add(orte_iof_source_t *source, uint32_t rank, const int fds[3]);
void iof_default_source_all_added(orte_iof_source_t *source);
void iof_default_source_exited(orte_iof_source_t *source, uint32_t rank);
void iof_default_source_finish(orte_iof_source_t *source);
int iof_default_source_deliver(orte_iof_source_t *source, orte_vpid_t from, int msg,
                               const struct iovec *iov, int iovcnt);

int iof_default_sink_create(const orte_iof_sink_config_t *config, orte_iof_sink_t **sink);
void iof_default_sink_destroy(orte_iof_sink_t *sink);
int iof_default_sink_deliver(orte_iof_sink_t *sink, orte_vpid_t from, int msg,
                             const struct iovec *iov, int iovcnt);
void iof_default_sink_source_lost(orte_iof_sink_t *sink, orte_vpid_t vpid);
void iof_default_sink_rank_moved(orte_iof_sink_t *sink, uint32_t rank);
int iof_default_sink_attach(orte_iof_sink_t *sink, int fd);
size_t iof_default_sink_queued(const orte_iof_sink_t *sink);

#endif /* ORTE_MCA_IOF_DEFAULT_H */
