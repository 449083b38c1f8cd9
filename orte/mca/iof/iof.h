/* SPDX-License-Identifier: BSD-3-Clause */
/* The iof framework: forwarding the processes' stdout and stderr to the job's sink (herdrun)
 * and herdrun's stdin to the target processes, without losing, repeating, splitting or
 * interleaving anything, under flow control (docs/iof.md).
 *
 * Two halves talk through a transport the caller provides (the job's overlay, or a direct call
 * when both halves live in one process):
 *   - a source (one per session daemon, or herdrun itself for processes whose pipes it was
 *     handed) reads the processes' pipes, keeps each stream's partial line until its newline,
 *     and sends whole lines with per-stream byte offsets, never more than a window of bytes
 *     ahead of what the sink acknowledged; it writes what the sink forwards to the processes'
 *     stdin;
 *   - the sink (herdrun) writes fragments to its stdout and stderr (tagged, timestamped, into
 *     files, as the job asked), acknowledges them once written, and reads its stdin only while
 *     some process is its target. */
#ifndef ORTE_MCA_IOF_H
#define ORTE_MCA_IOF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "opal/event/event.h"
#include "opal/mca/mca.h"
#include "orte/types.h"

#define OPAL_MCA_iof_INTERFACE_VERSION 1u

/* Streams of a process. */
#define ORTE_IOF_STDIN  0
#define ORTE_IOF_STDOUT 1
#define ORTE_IOF_STDERR 2

/* The "rank" of a daemon's own messages (printed untagged, as they are). */
#define ORTE_IOF_RANK_DAEMON UINT32_MAX

/* --stdin: a rank, or one of these. */
#define ORTE_IOF_STDIN_NONE (-1)
#define ORTE_IOF_STDIN_ALL  (-2)

/* Sink flags (herdrun options). */
#define ORTE_IOF_FLAG_TAG       0x01u /* --tag-output: "[jobid,rank]<stdout>: " per line */
#define ORTE_IOF_FLAG_TIMESTAMP 0x02u /* --timestamp-output: "[2026-11-22 13:55:01.123456] " */
#define ORTE_IOF_FLAG_NOCOPY    0x04u /* --output-filename DIR:nocopy: files only */

/* The messages of the protocol; the caller maps them to its transport's tags. */
enum {
    ORTE_IOF_MSG_DATA = 0,  /* source -> sink: a fragment of one stream */
    ORTE_IOF_MSG_ACK,       /* sink -> source: a stream written up to an offset */
    ORTE_IOF_MSG_STDIN,     /* sink -> source: stdin bytes (or its end) for the target(s) */
    ORTE_IOF_MSG_STDIN_ACK, /* source -> sink: stdin written up to an offset, or unwanted */
    ORTE_IOF_MSG_READY,     /* source -> sink: holds stdin targets: start reading stdin */
    ORTE_IOF_NUM_MSGS
};

/* Most pieces a message is sent in (a transport must take at least this many). */
#define ORTE_IOF_MAX_PIECES 8

/* How a source or sink reaches the other half. send() may deliver to the other half at once,
 * within the call (herdrun's one-node jobs do): both halves allow that, and neither sends
 * data from its deliver(), so the nesting stays shallow. iov is only valid during the call.
 * Callers ignore SIGPIPE (a process that closed its stdin is an EPIPE, not a signal). */
typedef struct orte_iof_transport {
    int (*send)(void *ctx, orte_vpid_t dst, int msg, const struct iovec *iov, int iovcnt);
    void *ctx;
} orte_iof_transport_t;

typedef struct orte_iof_source orte_iof_source_t;
typedef struct orte_iof_sink orte_iof_sink_t;

typedef struct orte_iof_source_config {
    opal_event_base_t *base;      /* its fd events and timers run here */
    orte_vpid_t vpid;             /* mine, as the sink knows me */
    orte_vpid_t sink;             /* where output goes */
    int32_t stdin_target;         /* a rank, ORTE_IOF_STDIN_ALL or ORTE_IOF_STDIN_NONE */
    orte_iof_transport_t transport;
    /* After finish(): every stream reached its end and the sink acknowledged all of it. */
    void (*drained)(void *cbdata);
    void *cbdata;
} orte_iof_source_config_t;

typedef struct orte_iof_sink_config {
    opal_event_base_t *base;
    uint32_t jobseq;         /* the job's number, in --tag-output's prefix */
    uint32_t flags;          /* ORTE_IOF_FLAG_* */
    const char *output_dir;  /* --output-filename DIR (NULL: none): DIR/rank.N/stdout, stderr */
    int32_t stdin_target;    /* a rank, ORTE_IOF_STDIN_ALL or ORTE_IOF_STDIN_NONE */
    uint32_t num_sources;    /* sources are vpids 1..num_sources */
    int stdin_fd;            /* read only while a target wants it; never made non-blocking */
    int stdout_fd;
    int stderr_fd;
    orte_iof_transport_t transport;
    /* stdout_fd (stream 1) or stderr_fd (stream 2) refused a write with error (an errno: EPIPE
     * when nobody reads the pipe any more, ENOSPC, ...): what was queued for it and what comes
     * later is dropped. Called once per stream, from the sink's event base; NULL: no call. */
    void (*output_failed)(void *cbdata, int stream, int error);
    /* A file of output_dir could not be made or written (error: an errno, ENOSPC, EIO,
     * EDQUOT, ...): what was written before stays, what comes later for that file is dropped.
     * Called once per sink (for the first such file), from its event base; NULL: the sink says
     * it on stderr itself. */
    void (*file_failed)(void *cbdata, const char *path, uint32_t rank, int stream, int error);
    void *cbdata;
} orte_iof_sink_config_t;

/* Every function returns HERD_SUCCESS or a negative status; output arguments are set only on
 * success. */
struct orte_iof_module {
    const char *name; /* the component's name: "default" */

    int (*source_create)(const orte_iof_source_config_t *config, orte_iof_source_t **source);
    /* Closes every pipe end it holds (the processes see EOF or EPIPE) and frees it. */
    void (*source_destroy)(orte_iof_source_t *source);
    /* Take over the daemon's ends of one process's pipes: fds[0] the write end of its stdin
     * (-1: none), fds[1] and fds[2] the read ends of its stdout and stderr (-1: none, as with
     * --merge-stderr-to-stdout). Owned by the source from the call on, even on failure. A process
     * added after source_finish() (spawned later) reopens the source: call finish again. A rank
     * added again after source_exited() (a restarted process) continues that rank's streams:
     * the sink sees one stream per rank and stream, its files are appended to. */
    int (*source_add)(orte_iof_source_t *source, uint32_t rank, const int fds[3]);
    /* No process will be added any more (stdin for every process can start). */
    void (*source_all_added)(orte_iof_source_t *source);
    /* The process exited: its streams end once their pipes are empty, even if a child of it
     * still holds them open. */
    void (*source_exited)(orte_iof_source_t *source, uint32_t rank);
    /* Every process exited: drained() runs once every stream ended and was acknowledged. */
    void (*source_finish)(orte_iof_source_t *source);
    /* A message from the sink. Malformed ones are dropped (HERD_ERR_UNPACK_FAILURE). */
    int (*source_deliver)(orte_iof_source_t *source, orte_vpid_t from, int msg,
                          const struct iovec *iov, int iovcnt);

    int (*sink_create)(const orte_iof_sink_config_t *config, orte_iof_sink_t **sink);
    /* Writes out what is still queued (waiting for the readers), closes files, frees it. */
    void (*sink_destroy)(orte_iof_sink_t *sink);
    int (*sink_deliver)(orte_iof_sink_t *sink, orte_vpid_t from, int msg,
                        const struct iovec *iov, int iovcnt);
    /* vpid is gone: no acknowledgement or stdin request will come from it. */
    void (*sink_source_lost)(orte_iof_sink_t *sink, orte_vpid_t vpid);
    /* Add a tool's socket (herdrun --attach): it gets every fragment from now on, framed as
     * {u32 rank, u8 stream, u32 length, bytes} in network order, until it closes; a tool that
     * falls a window behind is dropped with a message, never slowing the job. Owns fd. */
    int (*sink_attach)(orte_iof_sink_t *sink, int fd);
    /* Bytes waiting to be written to the sink's outputs. */
    size_t (*sink_queued)(const orte_iof_sink_t *sink);
    /* rank moved to another source (its node was lost, errmgr restart): its streams start
     * again from there at offset 0, appended to what was written (and to its files). NULL: the
     * component cannot (the moved rank's first bytes may be taken for repeats). */
    void (*sink_rank_moved)(orte_iof_sink_t *sink, uint32_t rank);
};
typedef struct orte_iof_module orte_iof_module_t;

OPAL_EXPORT extern opal_mca_framework_t orte_iof_base_framework;

/* Open the framework and select its component (HERD_MCA_iof). HERD_ERR_NOT_FOUND when none is
 * available. Opening an open framework does nothing. */
OPAL_EXPORT int orte_iof_base_open(void);
OPAL_EXPORT void orte_iof_base_close(void);
/* The selected module, or NULL when the framework is not open. */
OPAL_EXPORT const orte_iof_module_t *orte_iof_base_module(void);

/* iof_base_window: bytes of one stream that may be sent and not yet acknowledged. */
OPAL_EXPORT size_t orte_iof_base_window(void);
/* iof_base_pipe_size: the capacity asked for each process's stdout pipe (0: the default). */
OPAL_EXPORT size_t orte_iof_base_pipe_size(void);
/* iof_base_line_max: the longest partial line held back waiting for its newline. */
OPAL_EXPORT size_t orte_iof_base_line_max(void);

/* Make one process's pipes (close-on-exec). child[] are what it gets as fds 0, 1, 2 (child[0]
 * -1 without stdin: odls gives it /dev/null; child[2] == child[1] when merge_stderr); parent[]
 * the daemon's ends as source_add() takes them (non-blocking). On failure nothing is left
 * open. */
OPAL_EXPORT int orte_iof_base_make_pipes(bool want_stdin, bool merge_stderr, int child[3],
                                         int parent[3]);
/* Close what make_pipes() gave the child (after the fork), leaving parent[] alone. */
OPAL_EXPORT void orte_iof_base_close_child(int child[3]);
/* Pass one process's parent[] ends over a Unix socket to another process (SCM_RIGHTS), and
 * receive them: the session daemon of a one-node job hands them to herdrun, which reads them
 * itself. recv: HERD_ERR_UNREACH at EOF, HERD_ERR_NOT_FOUND when nothing is waiting. */
OPAL_EXPORT int orte_iof_base_send_fds(int sock, uint32_t rank, const int fds[3]);
OPAL_EXPORT int orte_iof_base_recv_fds(int sock, uint32_t *rank, int fds[3]);

/* "[jobid,rank]<stdout>: " and/or "[YYYY-MM-DD HH:MM:SS.uuuuuu] " into text (always
 * terminated); the length written. when_ns: CLOCK_REALTIME nanoseconds. */
OPAL_EXPORT size_t orte_iof_base_prefix(char *text, size_t size, uint32_t flags, uint32_t jobseq,
                                        uint32_t rank, int stream, uint64_t when_ns);
/* Whether rank reads stdin for --stdin target (never a daemon's own streams). */
OPAL_EXPORT bool orte_iof_base_stdin_wanted(int32_t target, uint32_t rank);
/* Parse --stdin's value: "rank" digits, "all", "none". HERD_ERR_BAD_PARAM otherwise. */
OPAL_EXPORT int orte_iof_base_parse_stdin(const char *text, int32_t *target);

#endif /* ORTE_MCA_IOF_H */
