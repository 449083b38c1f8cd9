/* SPDX-License-Identifier: BSD-3-Clause */
/* iof default, the source: reads the processes' stdout and stderr pipes, holds each stream's
 * partial line until its newline (up to iof_base_line_max), and sends whole lines to the sink
 * with their byte offset, never more than iof_base_window bytes ahead of the sink's
 * acknowledgements; writes stdin from the sink to the target processes and acknowledges it
 * once written. */
#include "herd_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "opal/util/output.h"
#include "orte/mca/iof/default/iof_default.h"

typedef struct proc proc_t;

typedef struct stream {
    proc_t *proc;
    uint8_t which; /* ORTE_IOF_STDOUT or ORTE_IOF_STDERR */
    int fd;        /* -1 once ended */
    opal_event_t *event;
    bool watching; /* event added */
    uint64_t sent; /* offset of the next byte to send */
    uint64_t acked;
    uint8_t *held; /* a partial line waiting for its newline */
    size_t held_len;
    size_t held_cap;
} stream_t;

/* One chunk of stdin, kept until every target wrote it. */
typedef struct chunk {
    struct chunk *next;
    uint64_t offset; /* of its first byte in the stdin stream */
    size_t len;
    uint32_t pending; /* targets that have not written it yet */
    uint8_t data[];
} chunk_t;

struct proc {
    uint32_t rank; /* first: the table's key */
    orte_iof_source_t *source;
    bool exited;
    stream_t out;
    stream_t err;
    /* stdin: the write end (-1: none or closed), where this target is in the chunk list */
    int in_fd;
    opal_event_t *in_event;
    bool in_watching;
    chunk_t *in_chunk; /* NULL: waiting for the next chunk */
    size_t in_off;
};

struct orte_iof_source {
    orte_iof_source_config_t config;
    size_t window;
    size_t line_max;
    iof_table_t procs; /* proc_t by rank */
    opal_event_t *kick; /* zero timer: look at exited processes' empty pipes */
    bool kick_armed;
    bool finishing;
    bool drained;
    uint8_t scratch[IOF_CHUNK];
    /* stdin */
    chunk_t *in_head;
    chunk_t *in_tail;
    uint64_t in_next;  /* offset the next chunk must have */
    uint64_t in_acked; /* everything before it was written by every target */
    bool in_eof;
    bool in_ready_sent;
    bool in_closed_sent;
    uint32_t in_targets; /* open targets */
};

/* ------------------------------------------------------------------------------------------ */
/* the process table */

static proc_t *find_proc(const orte_iof_source_t *src, uint32_t rank)
{
    return iof_table_find(&src->procs, rank);
}

/* ------------------------------------------------------------------------------------------ */
/* output */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static void send_data(stream_t *s, const struct iovec *pieces, int n, uint8_t flags)
{
    orte_iof_source_t *src = s->proc->source;
    uint8_t header[IOF_DATA_HEADER];
    struct iovec iov[3];
    size_t len = 0;
    iov[0].iov_base = header;
    iov[0].iov_len = sizeof(header);
    for (int i = 0; i < n; ++i) {
        iov[1 + i] = pieces[i];
        len += pieces[i].iov_len;
    }
    iof_put_u32(header, s->proc->rank);
    header[4] = s->which;
    header[5] = flags;
    iof_put_u64(header + 6, s->sent);
    iof_put_u64(header + 14, now_ns());
    s->sent += len;
    int rc = src->config.transport.send(src->config.transport.ctx, src->config.sink,
                                        ORTE_IOF_MSG_DATA, iov, 1 + n);
    if (HERD_SUCCESS != rc) {
        /* the sink is gone: nothing will acknowledge this, and nobody is there to read it */
        s->acked = s->sent;
    }
}

static int hold(stream_t *s, const uint8_t *data, size_t n)
{
    if (s->held_len + n > s->held_cap) {
        size_t cap = s->held_cap ? s->held_cap : 256;
        while (cap < s->held_len + n) {
            cap *= 2;
        }
        uint8_t *grown = realloc(s->held, cap);
        if (NULL == grown) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        s->held = grown;
        s->held_cap = cap;
    }
    memcpy(s->held + s->held_len, data, n);
    s->held_len += n;
    return HERD_SUCCESS;
}

static void drop_held(stream_t *s)
{
    s->held_len = 0;
    /* a long line's buffer is not kept for the rest of the job */
    if (s->held_cap > 4096) {
        free(s->held);
        s->held = NULL;
        s->held_cap = 0;
    }
}

/* What was held, then n bytes of data, as one fragment; nothing is held afterwards. */
static void send_with_held(stream_t *s, const uint8_t *data, size_t n)
{
    struct iovec pieces[2];
    int np = 0;
    if (s->held_len > 0) {
        pieces[np].iov_base = s->held;
        pieces[np++].iov_len = s->held_len;
    }
    pieces[np].iov_base = (void *) data;
    pieces[np++].iov_len = n;
    send_data(s, pieces, np, 0);
    drop_held(s);
}

/* n bytes just read: send what ends in a newline (with what was held before it), hold the
 * rest, unless holding it would pass the bound. */
static void consume(stream_t *s, const uint8_t *data, size_t n)
{
    size_t line_max = s->proc->source->line_max;
    const uint8_t *last = (n > 0) ? memrchr(data, '\n', n) : NULL;
    if (NULL != last) {
        size_t whole = (size_t) (last - data) + 1;
        send_with_held(s, data, whole);
        data += whole;
        n -= whole;
    }
    if (0 == n) {
        return;
    }
    if (s->held_len + n >= line_max || HERD_SUCCESS != hold(s, data, n)) {
        /* a line longer than the bound (or no memory to hold it): pass it on as it is */
        send_with_held(s, data, n);
    }
}

static void check_drained(orte_iof_source_t *src);

/* The stream's pipe is done: send what was held, with the end mark. */
static void end_stream(stream_t *s)
{
    if (s->fd < 0) {
        return;
    }
    iof_close_watched(&s->event, &s->watching, &s->fd);
    struct iovec piece = {.iov_base = s->held, .iov_len = s->held_len};
    send_data(s, &piece, s->held_len > 0 ? 1 : 0, IOF_DATA_EOF);
    drop_held(s);
    free(s->held);
    s->held = NULL;
    s->held_cap = 0;
}

static size_t budget(const stream_t *s)
{
    uint64_t in_flight = s->sent - s->acked;
    size_t window = s->proc->source->window;
    return in_flight >= window ? 0 : window - (size_t) in_flight;
}

static void watch(stream_t *s, bool on)
{
    iof_event_arm(s->event, &s->watching, on);
}

/* Read once from the stream if the window allows. */
static void read_stream(stream_t *s)
{
    orte_iof_source_t *src = s->proc->source;
    if (s->fd < 0) {
        return;
    }
    size_t room = budget(s);
    if (0 == room) {
        watch(s, false); /* until the sink catches up */
        return;
    }
    if (room > sizeof(src->scratch)) {
        room = sizeof(src->scratch);
    }
    ssize_t n;
    do {
        n = read(s->fd, src->scratch, room);
    } while (n < 0 && EINTR == errno);
    if (n > 0) {
        consume(s, src->scratch, (size_t) n);
        if (0 == budget(s)) {
            watch(s, false);
        }
        return;
    }
    if (n < 0 && (EAGAIN == errno || EWOULDBLOCK == errno) && !s->proc->exited) {
        return;
    }
    /* the end, an error, or empty after the process exited (a child of it may hold the pipe:
     * what it writes from now on is not the job's) */
    end_stream(s);
    check_drained(src);
}

static void stream_cb(int fd, short what, void *arg)
{
    read_stream(arg);
}

/* Exited processes' streams whose pipes are empty see no event: look at them. */
static void kick_cb(int fd, short what, void *arg)
{
    orte_iof_source_t *src = arg;
    src->kick_armed = false;
    for (size_t i = 0; i < src->procs.cap; ++i) {
        proc_t *p = src->procs.slots[i];
        if (NULL == p || !p->exited) {
            continue;
        }
        if (p->out.fd >= 0) {
            read_stream(&p->out);
        }
        if (p->err.fd >= 0) {
            read_stream(&p->err);
        }
    }
}

static void kick(orte_iof_source_t *src)
{
    if (!src->kick_armed && NULL != src->kick) {
        struct timeval now = {0, 0};
        src->kick_armed = true;
        opal_event_add(src->kick, &now);
    }
}

static bool stream_done(const stream_t *s)
{
    return s->fd < 0 && s->acked >= s->sent;
}

static void check_drained(orte_iof_source_t *src)
{
    if (!src->finishing || src->drained) {
        return;
    }
    for (size_t i = 0; i < src->procs.cap; ++i) {
        proc_t *p = src->procs.slots[i];
        if (NULL != p && (!stream_done(&p->out) || !stream_done(&p->err))) {
            return;
        }
    }
    src->drained = true;
    if (NULL != src->config.drained) {
        src->config.drained(src->config.cbdata);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* stdin */

static void send_stdin_ack(orte_iof_source_t *src, bool closed)
{
    uint8_t msg[IOF_STDIN_ACK_SIZE];
    struct iovec iov = {.iov_base = msg, .iov_len = sizeof(msg)};
    iof_put_u64(msg, src->in_acked);
    msg[8] = closed ? IOF_STDIN_CLOSED : 0;
    src->config.transport.send(src->config.transport.ctx, src->config.sink,
                               ORTE_IOF_MSG_STDIN_ACK, &iov, 1);
}

/* Free the chunks every target has written, and tell the sink how far that is. */
static void release_chunks(orte_iof_source_t *src)
{
    bool released = false;
    while (NULL != src->in_head && 0 == src->in_head->pending) {
        chunk_t *c = src->in_head;
        src->in_head = c->next;
        if (NULL == src->in_head) {
            src->in_tail = NULL;
        }
        src->in_acked = c->offset + c->len;
        free(c);
        released = true;
    }
    if (released && !src->in_closed_sent) {
        send_stdin_ack(src, false);
    }
}

static void in_watch(proc_t *p, bool on)
{
    iof_event_arm(p->in_event, &p->in_watching, on);
}

/* This target takes no more stdin (its end, or it closed its stdin). */
static void close_target(proc_t *p)
{
    orte_iof_source_t *src = p->source;
    if (p->in_fd < 0) {
        return;
    }
    iof_close_watched(&p->in_event, &p->in_watching, &p->in_fd);
    for (chunk_t *c = p->in_chunk; NULL != c; c = c->next) {
        c->pending--;
    }
    p->in_chunk = NULL;
    src->in_targets--;
    release_chunks(src);
    if (0 == src->in_targets && !src->in_eof && !src->in_closed_sent) {
        /* nobody here reads stdin any more: herdrun should stop reading it */
        src->in_closed_sent = true;
        send_stdin_ack(src, true);
    }
}

static void write_stdin(proc_t *p)
{
    while (NULL != p->in_chunk) {
        chunk_t *c = p->in_chunk;
        ssize_t n = write(p->in_fd, c->data + p->in_off, c->len - p->in_off);
        if (n < 0 && EINTR == errno) {
            continue;
        }
        if (n < 0 && (EAGAIN == errno || EWOULDBLOCK == errno)) {
            in_watch(p, true);
            return;
        }
        if (n < 0) {
            close_target(p); /* EPIPE: it closed its stdin or exited */
            return;
        }
        p->in_off += (size_t) n;
        if (p->in_off == c->len) {
            p->in_chunk = c->next;
            p->in_off = 0;
            c->pending--;
            release_chunks(p->source);
        }
    }
    in_watch(p, false);
    if (p->source->in_eof && NULL == p->in_chunk) {
        close_target(p); /* everything written: the process reads EOF */
    }
}

static void stdin_cb(int fd, short what, void *arg)
{
    write_stdin(arg);
}

static bool is_target(const orte_iof_source_t *src, uint32_t rank)
{
    return orte_iof_base_stdin_wanted(src->config.stdin_target, rank);
}

static void send_ready(orte_iof_source_t *src, uint32_t target)
{
    uint8_t msg[IOF_READY_SIZE];
    struct iovec iov = {.iov_base = msg, .iov_len = sizeof(msg)};
    iof_put_u32(msg, target);
    src->in_ready_sent = true;
    src->config.transport.send(src->config.transport.ctx, src->config.sink, ORTE_IOF_MSG_READY,
                               &iov, 1);
}

static int recv_stdin(orte_iof_source_t *src, const struct iovec *iov, int iovcnt)
{
    iof_msg_t msg;
    if (!iof_msg_split(iov, iovcnt, IOF_STDIN_HEADER, &msg)) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    uint8_t flags = msg.header[4];
    uint64_t offset = iof_get_u64(msg.header + 5);
    if (src->in_eof || offset != src->in_next) {
        return HERD_ERR_UNPACK_FAILURE; /* a repeat or a gap: the sink sends in order */
    }
    src->in_next += msg.payload_len;
    if (msg.payload_len > 0) {
        if (0 == src->in_targets) {
            /* nobody to write it to: done with it at once */
            src->in_acked = src->in_next;
            if (!src->in_closed_sent) {
                src->in_closed_sent = true;
                send_stdin_ack(src, true);
            }
            return HERD_SUCCESS;
        }
        chunk_t *c = malloc(sizeof(*c) + msg.payload_len);
        if (NULL == c) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        c->next = NULL;
        c->offset = offset;
        c->len = 0;
        for (int i = 0; i < msg.num_payload; ++i) {
            memcpy(c->data + c->len, msg.payload[i].iov_base, msg.payload[i].iov_len);
            c->len += msg.payload[i].iov_len;
        }
        c->pending = src->in_targets;
        if (NULL == src->in_tail) {
            src->in_head = c;
        } else {
            src->in_tail->next = c;
        }
        src->in_tail = c;
        for (size_t i = 0; i < src->procs.cap; ++i) {
            proc_t *p = src->procs.slots[i];
            if (NULL != p && p->in_fd >= 0 && NULL == p->in_chunk) {
                p->in_chunk = c;
                p->in_off = 0;
                in_watch(p, true); /* written from the loop, never from here */
            }
        }
    }
    if (flags & IOF_STDIN_EOF) {
        src->in_eof = true;
        for (size_t i = 0; i < src->procs.cap; ++i) {
            proc_t *p = src->procs.slots[i];
            if (NULL != p && p->in_fd >= 0 && NULL == p->in_chunk) {
                close_target(p);
            }
        }
    }
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* the module */

int iof_default_source_create(const orte_iof_source_config_t *config,
                              orte_iof_source_t **source)
{
    if (NULL == config || NULL == config->base || NULL == config->transport.send) {
        return HERD_ERR_BAD_PARAM;
    }
    orte_iof_source_t *src = calloc(1, sizeof(*src));
    if (NULL == src) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    src->config = *config;
    src->window = orte_iof_base_window();
    src->line_max = orte_iof_base_line_max();
    int rc = opal_event_timer_create(config->base, false, kick_cb, src, &src->kick);
    if (HERD_SUCCESS != rc) {
        free(src);
        return rc;
    }
    *source = src;
    return HERD_SUCCESS;
}

static void free_stream(stream_t *s)
{
    if (NULL != s->event) {
        opal_event_free(s->event);
    }
    if (s->fd >= 0) {
        close(s->fd);
    }
    free(s->held);
}

void iof_default_source_destroy(orte_iof_source_t *src)
{
    if (NULL == src) {
        return;
    }
    for (size_t i = 0; i < src->procs.cap; ++i) {
        proc_t *p = src->procs.slots[i];
        if (NULL == p) {
            continue;
        }
        free_stream(&p->out);
        free_stream(&p->err);
        if (NULL != p->in_event) {
            opal_event_free(p->in_event);
        }
        if (p->in_fd >= 0) {
            close(p->in_fd);
        }
        free(p);
    }
    while (NULL != src->in_head) {
        chunk_t *c = src->in_head;
        src->in_head = c->next;
        free(c);
    }
    if (NULL != src->kick) {
        opal_event_free(src->kick);
    }
    free(src->procs.slots);
    free(src);
}

static int open_stream(proc_t *p, stream_t *s, uint8_t which, int fd)
{
    s->proc = p;
    s->which = which;
    s->fd = fd;
    if (fd < 0) {
        return HERD_SUCCESS;
    }
    int rc = opal_event_fd_create(p->source->config.base, fd,
                                  OPAL_EVENT_READ | OPAL_EVENT_PERSIST, stream_cb, s, &s->event);
    if (HERD_SUCCESS == rc) {
        watch(s, true);
    }
    return rc;
}

/* A restarted process (errmgr restart) takes over its rank's stream: what the old pipe still
 * holds goes first (all of it now: the old process exited, so it is at most a pipe's capacity
 * past the window), then the new pipe's bytes follow at the next offsets. A stream that had
 * ended is reopened at the sink. */
static int reopen_stream(proc_t *p, stream_t *s, int fd)
{
    orte_iof_source_t *src = p->source;
    if (fd < 0) {
        return HERD_SUCCESS;
    }
    if (s->fd >= 0) {
        ssize_t n;
        while ((n = read(s->fd, src->scratch, sizeof(src->scratch))) > 0 ||
               (n < 0 && EINTR == errno)) {
            if (n > 0) {
                consume(s, src->scratch, (size_t) n);
            }
        }
        iof_close_watched(&s->event, &s->watching, &s->fd);
        if (s->held_len > 0) {
            send_with_held(s, NULL, 0); /* its last line, unfinished: not joined to the next */
        }
    } else {
        send_data(s, NULL, 0, IOF_DATA_REOPEN);
    }
    return open_stream(p, s, s->which, fd);
}

static int reopen_proc(proc_t *p, const int fds[3])
{
    if (fds[0] >= 0) {
        close(fds[0]); /* stdin went to the first one, and ended with it */
    }
    p->exited = false;
    p->source->finishing = false;
    p->source->drained = false;
    int rc = reopen_stream(p, &p->out, fds[1]);
    int rc2 = reopen_stream(p, &p->err, fds[2]);
    return HERD_SUCCESS != rc ? rc : rc2;
}

int iof_default_source_add(orte_iof_source_t *src, uint32_t rank, const int fds[3])
{
    /* herdrun reading a one-node job's pipes itself never hears of exits: a rank added again
     * is a restart all the same (the daemon restarts only what exited) */
    proc_t *old = find_proc(src, rank);
    if (NULL != old) {
        return reopen_proc(old, fds);
    }
    proc_t *p = calloc(1, sizeof(*p));
    int rc = (NULL == p) ? HERD_ERR_OUT_OF_RESOURCE : HERD_SUCCESS;
    if (HERD_SUCCESS != rc) {
        for (int i = 0; i < 3; ++i) {
            if (fds[i] >= 0) {
                close(fds[i]);
            }
        }
        free(p);
        return rc;
    }
    p->source = src;
    p->rank = rank;
    p->in_fd = -1;
    p->out.fd = p->err.fd = -1;
    rc = iof_table_insert(&src->procs, p);
    if (HERD_SUCCESS != rc) {
        for (int i = 0; i < 3; ++i) {
            if (fds[i] >= 0) {
                close(fds[i]);
            }
        }
        free(p);
        return rc;
    }
    /* a process added after finish() (a spawn's, on a node whose processes had all ended)
     * reopens the source: finish() comes again once it has ended too */
    src->finishing = false;
    src->drained = false;
    /* from here on the table owns p and its fds: a failure below leaves a stream that ends */
    if (HERD_SUCCESS != (rc = open_stream(p, &p->out, ORTE_IOF_STDOUT, fds[1]))) {
        end_stream(&p->out);
    }
    int rc2 = open_stream(p, &p->err, ORTE_IOF_STDERR, fds[2]);
    if (HERD_SUCCESS != rc2) {
        end_stream(&p->err);
        rc = rc2;
    }
    if (fds[0] >= 0 && !is_target(src, rank)) {
        close(fds[0]);
    } else if (fds[0] >= 0) {
        p->in_fd = fds[0];
        src->in_targets++;
        rc2 = opal_event_fd_create(src->config.base, p->in_fd,
                                   OPAL_EVENT_WRITE | OPAL_EVENT_PERSIST, stdin_cb, p,
                                   &p->in_event);
        if (HERD_SUCCESS != rc2) {
            close_target(p);
            rc = rc2;
        } else if (src->config.stdin_target >= 0) {
            send_ready(src, rank); /* the one target: stdin can flow */
        }
    }
    return rc;
}

void iof_default_source_all_added(orte_iof_source_t *src)
{
    if (ORTE_IOF_STDIN_ALL == src->config.stdin_target && !src->in_ready_sent) {
        send_ready(src, (uint32_t) ORTE_IOF_STDIN_ALL);
    }
}

void iof_default_source_exited(orte_iof_source_t *src, uint32_t rank)
{
    proc_t *p = find_proc(src, rank);
    if (NULL != p && !p->exited) {
        p->exited = true;
        kick(src);
    }
}

void iof_default_source_finish(orte_iof_source_t *src)
{
    for (size_t i = 0; i < src->procs.cap; ++i) {
        proc_t *p = src->procs.slots[i];
        if (NULL != p) {
            p->exited = true;
        }
    }
    src->finishing = true;
    kick(src);
    check_drained(src);
}

static int recv_ack(orte_iof_source_t *src, const struct iovec *iov, int iovcnt)
{
    iof_msg_t msg;
    if (!iof_msg_split(iov, iovcnt, IOF_ACK_SIZE, &msg)) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    proc_t *p = find_proc(src, iof_get_u32(msg.header));
    uint8_t which = msg.header[4];
    uint64_t end = iof_get_u64(msg.header + 5);
    if (NULL == p || (ORTE_IOF_STDOUT != which && ORTE_IOF_STDERR != which)) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    stream_t *s = (ORTE_IOF_STDOUT == which) ? &p->out : &p->err;
    if (end > s->sent) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    if (end > s->acked) {
        s->acked = end;
    }
    if (s->fd >= 0 && budget(s) > 0) {
        watch(s, true);
        if (p->exited) {
            kick(src); /* its pipe may be empty: no event would come */
        }
    }
    check_drained(src);
    return HERD_SUCCESS;
}

int iof_default_source_deliver(orte_iof_source_t *src, orte_vpid_t from, int msg,
                               const struct iovec *iov, int iovcnt)
{
    int rc;
    switch (msg) {
    case ORTE_IOF_MSG_ACK:
        rc = recv_ack(src, iov, iovcnt);
        break;
    case ORTE_IOF_MSG_STDIN:
        rc = recv_stdin(src, iov, iovcnt);
        break;
    default:
        rc = HERD_ERR_UNPACK_FAILURE;
        break;
    }
    return iof_dropped(rc, msg, from);
}
