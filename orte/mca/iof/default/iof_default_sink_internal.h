/* SPDX-License-Identifier: BSD-3-Clause */
/* The sink's state, shared by its files: iof_default_sink.c (output, tools, files, the module)
 * and iof_default_sink_stdin.c (herdrun's stdin to the target ranks). */
#ifndef ORTE_MCA_IOF_DEFAULT_SINK_INTERNAL_H
#define ORTE_MCA_IOF_DEFAULT_SINK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "orte/mca/iof/default/iof_default.h"

#define IOF_ATTACH_WINDOWS 16u

/* Something waiting to be written to an output, and whose acknowledgement it releases. */
typedef struct item {
    struct item *next;
    size_t len;
    size_t off;
    bool ack; /* send an ACK for (vpid, rank, stream, end) once written */
    orte_vpid_t vpid;
    uint32_t rank;
    uint8_t stream;
    uint64_t end;
    uint8_t data[];
} item_t;

typedef struct output {
    orte_iof_sink_t *sink;
    int fd;
    bool own_fd;   /* a non-blocking description of our own, closed at the end */
    bool blocking; /* the fd is shared with others (a file, a socket): written in full */
    bool broken;   /* its reader is gone: what comes is dropped */
    opal_event_t *event;
    bool watching;
    item_t *head;
    item_t *tail;
    size_t queued;
    struct output *next; /* attached tools */
} output_t;

/* What the sink knows about one rank's streams. */
typedef struct rank_state {
    uint32_t rank;
    uint64_t expect[2];  /* next offset of stdout, stderr */
    int file[2];         /* DIR/rank.N/stdout, stderr (-1: not open) */
    bool file_failed[2]; /* could not be opened: not tried again */
    bool ended[2];       /* its end came: anything more is a repeat */
    bool file_used[2];   /* opened before (a restarted rank appends to its files) */
} rank_state_t;

struct orte_iof_sink {
    orte_iof_sink_config_t config;
    size_t window;
    output_t out[2]; /* stdout, stderr */
    output_t *tools;
    iof_table_t ranks; /* rank_state_t by rank */
    bool gap_reported;
    bool file_error_reported;
    uint8_t *scratch; /* formatted (tagged) output */
    size_t scratch_cap;
    /* stdin */
    bool *ready;  /* by vpid: holds a target */
    bool *closed; /* by vpid: takes no more */
    uint64_t *acked;
    uint32_t num_ready;
    bool reading; /* stdin read armed */
    bool in_done; /* EOF seen, or no target left */
    bool in_poll; /* stdin cannot be watched (a file): read on a timer */
    opal_event_t *in_event;
    bool in_watching;
    uint64_t in_sent;
};

/* iof_default_sink_stdin.c: a target says it takes stdin (READY), acknowledges what it wrote
 * (STDIN_ACK), or is gone */
int iof_default_sink_stdin_ready(orte_iof_sink_t *sink, orte_vpid_t from, const struct iovec *iov,
                                 int iovcnt);
int iof_default_sink_stdin_ack(orte_iof_sink_t *sink, orte_vpid_t from, const struct iovec *iov,
                               int iovcnt);
void iof_default_sink_stdin_target_gone(orte_iof_sink_t *sink, orte_vpid_t vpid);

#endif
