/* SPDX-License-Identifier: BSD-3-Clause */
/* iof default, the sink (herdrun): writes each fragment whole to stdout or stderr (tagged,
 * timestamped, and into DIR/rank.N/ as asked), acknowledges it to its source once written, and
 * reads stdin only while a target wants it, never more than a window ahead of the slowest
 * target's acknowledgements. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "opal/util/fd.h"
#include "opal/util/output.h"
#include "orte/mca/iof/default/iof_default.h"

/* Bytes an attached tool may fall behind before it is dropped, in windows. */
#include "orte/mca/iof/default/iof_default_sink_internal.h"

/* ------------------------------------------------------------------------------------------ */
/* per-rank state */

static rank_state_t *rank_state(orte_iof_sink_t *sink, uint32_t rank)
{
    rank_state_t *r = iof_table_find(&sink->ranks, rank);
    if (NULL != r) {
        return r;
    }
    r = calloc(1, sizeof(*r));
    if (NULL == r) {
        return NULL;
    }
    r->rank = rank;
    r->file[0] = r->file[1] = -1;
    if (HERD_SUCCESS != iof_table_insert(&sink->ranks, r)) {
        free(r);
        return NULL;
    }
    return r;
}

/* ------------------------------------------------------------------------------------------ */
/* outputs */

static void send_ack(orte_iof_sink_t *sink, orte_vpid_t vpid, uint32_t rank, uint8_t stream,
                     uint64_t end)
{
    uint8_t msg[IOF_ACK_SIZE];
    struct iovec iov = {.iov_base = msg, .iov_len = sizeof(msg)};
    iof_put_u32(msg, rank);
    msg[4] = stream;
    iof_put_u64(msg + 5, end);
    sink->config.transport.send(sink->config.transport.ctx, vpid, ORTE_IOF_MSG_ACK, &iov, 1);
}

static void output_watch(output_t *o, bool on)
{
    iof_event_arm(o->event, &o->watching, on);
}

static void drop_tool(output_t *o);

/* herdrun's own stdout or stderr, not a tool's output */
static bool own_output(const output_t *o)
{
    return o == &o->sink->out[0] || o == &o->sink->out[1];
}

static void output_broke(output_t *o, int error)
{
    /* nobody reads it any more: release what waits, so no process blocks on it */
    bool first = !o->broken;
    o->broken = true;
    while (NULL != o->head) {
        item_t *it = o->head;
        o->head = it->next;
        if (it->ack) {
            send_ack(o->sink, it->vpid, it->rank, it->stream, it->end);
        }
        free(it);
    }
    o->tail = NULL;
    o->queued = 0;
    output_watch(o, false);
    orte_iof_sink_t *sink = o->sink;
    /* a tool's output breaking is the tool's business */
    if (first && NULL != sink->config.output_failed && own_output(o)) {
        sink->config.output_failed(sink->config.cbdata, o == &sink->out[0] ? 1 : 2, error);
    }
}

/* Write what is queued, as far as the reader takes it. */
static void output_flush(output_t *o)
{
    while (NULL != o->head) {
        item_t *it = o->head;
        ssize_t n = (it->len == it->off) ? 0 : write(o->fd, it->data + it->off, it->len - it->off);
        if (n < 0 && EINTR == errno) {
            continue;
        }
        if (n < 0 && (EAGAIN == errno || EWOULDBLOCK == errno)) {
            output_watch(o, true);
            return;
        }
        if (n < 0) {
            if (!own_output(o)) {
                drop_tool(o);
            } else {
                output_broke(o, errno);
            }
            return;
        }
        it->off += (size_t) n;
        o->queued -= (size_t) n;
        if (it->off == it->len) {
            o->head = it->next;
            if (NULL == o->head) {
                o->tail = NULL;
            }
            if (it->ack) {
                send_ack(o->sink, it->vpid, it->rank, it->stream, it->end);
            }
            free(it);
        }
    }
    output_watch(o, false);
}

static void output_cb(int fd, short what, void *arg)
{
    output_flush(arg);
}

static int enqueue(output_t *o, const struct iovec *iov, int iovcnt, size_t skip, const item_t *ack)
{
    size_t len = 0;
    for (int i = 0; i < iovcnt; ++i) {
        len += iov[i].iov_len;
    }
    len -= skip;
    item_t *it = malloc(sizeof(*it) + len);
    if (NULL == it) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (NULL != ack) {
        *it = *ack;
    } else {
        memset(it, 0, sizeof(*it));
    }
    it->next = NULL;
    it->len = len;
    it->off = 0;
    size_t at = 0;
    for (int i = 0; i < iovcnt; ++i) {
        size_t l = iov[i].iov_len;
        const uint8_t *b = iov[i].iov_base;
        if (skip >= l) {
            skip -= l;
            continue;
        }
        memcpy(it->data + at, b + skip, l - skip);
        at += l - skip;
        skip = 0;
    }
    if (NULL == o->tail) {
        o->head = it;
    } else {
        o->tail->next = it;
    }
    o->tail = it;
    o->queued += len;
    output_watch(o, true);
    return HERD_SUCCESS;
}

/* Write iov to o whole, in order after what is queued. true: written now (acknowledge at
 * once); false: queued, acknowledged when written (ack), or dropped (a broken output,
 * acknowledged at once). */
static bool output_write(output_t *o, const struct iovec *iov, int iovcnt, const item_t *ack)
{
    size_t len = 0;
    for (int i = 0; i < iovcnt; ++i) {
        len += iov[i].iov_len;
    }
    if (o->broken || (0 == len && (NULL == o->head || NULL == ack))) {
        return true;
    }
    if (0 == len) {
        /* nothing to write, but its acknowledgement (a stream's end) must follow what waits */
        return HERD_SUCCESS != enqueue(o, iov, 0, 0, ack);
    }
    if (o->blocking) {
        for (int i = 0; i < iovcnt; ++i) {
            if (HERD_SUCCESS != opal_fd_write_all(o->fd, iov[i].iov_base, iov[i].iov_len)) {
                if (own_output(o)) {
                    output_broke(o, errno);
                } else {
                    o->broken = true;
                }
                break;
            }
        }
        return true;
    }
    size_t done = 0;
    if (NULL == o->head) {
        ssize_t n;
        do {
            n = writev(o->fd, iov, iovcnt);
        } while (n < 0 && EINTR == errno);
        if (n < 0 && EAGAIN != errno && EWOULDBLOCK != errno) {
            output_broke(o, errno);
            return true;
        }
        done = n > 0 ? (size_t) n : 0;
        if (done == len) {
            return true;
        }
    }
    if (HERD_SUCCESS != enqueue(o, iov, iovcnt, done, ack)) {
        /* no memory to queue it: wait for the reader rather than lose it */
        output_watch(o, false);
        struct iovec rest[ORTE_IOF_MAX_PIECES + 2];
        int nrest = 0;
        size_t skip = done;
        for (int i = 0; i < iovcnt; ++i) {
            if (skip >= iov[i].iov_len) {
                skip -= iov[i].iov_len;
                continue;
            }
            rest[nrest].iov_base = (uint8_t *) iov[i].iov_base + skip;
            rest[nrest++].iov_len = iov[i].iov_len - skip;
            skip = 0;
        }
        int flags = fcntl(o->fd, F_GETFL);
        fcntl(o->fd, F_SETFL, flags & ~O_NONBLOCK);
        for (int i = 0; i < nrest; ++i) {
            opal_fd_write_all(o->fd, rest[i].iov_base, rest[i].iov_len);
        }
        fcntl(o->fd, F_SETFL, flags);
        return true;
    }
    return false;
}

/* Our own non-blocking way to write fd, when that cannot disturb anyone else: a pipe or a
 * terminal reopened (a new open file description, so the shell's stays blocking). Files and
 * sockets are written in full, blocking. */
static void output_open(orte_iof_sink_t *sink, output_t *o, int fd)
{
    struct stat st;
    o->sink = sink;
    o->fd = fd;
    o->blocking = true;
    if (fd < 0 || 0 != fstat(fd, &st) || !(S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
        o->broken = fd < 0;
        return;
    }
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    int own = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | O_APPEND);
    if (own < 0) {
        return;
    }
    if (HERD_SUCCESS != opal_event_fd_create(sink->config.base, own,
                                             OPAL_EVENT_WRITE | OPAL_EVENT_PERSIST, output_cb, o,
                                             &o->event)) {
        close(own);
        return;
    }
    o->fd = own;
    o->own_fd = true;
    o->blocking = false;
}

static void output_close(output_t *o)
{
    if (NULL != o->head && !o->broken && o->fd >= 0) {
        /* the job is over: wait for the reader to take the rest */
        int flags = fcntl(o->fd, F_GETFL);
        fcntl(o->fd, F_SETFL, flags & ~O_NONBLOCK);
        for (item_t *it = o->head; NULL != it; it = it->next) {
            if (HERD_SUCCESS != opal_fd_write_all(o->fd, it->data + it->off, it->len - it->off)) {
                break;
            }
        }
    }
    while (NULL != o->head) {
        item_t *it = o->head;
        o->head = it->next;
        free(it);
    }
    o->tail = NULL;
    o->queued = 0;
    if (NULL != o->event) {
        opal_event_free(o->event);
        o->event = NULL;
    }
    if (o->own_fd && o->fd >= 0) {
        close(o->fd);
    }
    o->fd = -1;
}

/* ------------------------------------------------------------------------------------------ */
/* attached tools */

static void drop_tool(output_t *o)
{
    orte_iof_sink_t *sink = o->sink;
    for (output_t **pp = &sink->tools; NULL != *pp; pp = &(*pp)->next) {
        if (*pp == o) {
            *pp = o->next;
            break;
        }
    }
    o->broken = true; /* nothing it queued waits for an acknowledgement */
    output_close(o);
    free(o);
}

static void to_tools(orte_iof_sink_t *sink, uint32_t rank, uint8_t stream,
                     const struct iovec *payload, int n, size_t len)
{
    uint8_t frame[9];
    struct iovec iov[ORTE_IOF_MAX_PIECES + 1];
    iof_put_u32(frame, rank);
    frame[4] = stream;
    iof_put_u32(frame + 5, (uint32_t) len);
    iov[0].iov_base = frame;
    iov[0].iov_len = sizeof(frame);
    for (int i = 0; i < n; ++i) {
        iov[1 + i] = payload[i];
    }
    output_t *next;
    for (output_t *o = sink->tools; NULL != o; o = next) {
        next = o->next;
        if (o->queued > IOF_ATTACH_WINDOWS * sink->window) {
            /* too slow: the job does not wait for a tool */
            opal_output_verbose(1, orte_iof_base_framework.output,
                                "iof: an attached tool fell %zu bytes behind: detached", o->queued);
            drop_tool(o);
            continue;
        }
        output_write(o, iov, 1 + n, NULL);
        if (o->broken) {
            drop_tool(o);
        }
    }
}

int iof_default_sink_attach(orte_iof_sink_t *sink, int fd)
{
    output_t *o = calloc(1, sizeof(*o));
    if (NULL == o) {
        close(fd);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    o->sink = sink;
    o->fd = fd;
    o->own_fd = true;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    int rc = opal_event_fd_create(sink->config.base, fd, OPAL_EVENT_WRITE | OPAL_EVENT_PERSIST,
                                  output_cb, o, &o->event);
    if (HERD_SUCCESS != rc) {
        close(fd);
        free(o);
        return rc;
    }
    o->next = sink->tools;
    sink->tools = o;
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* files */

/* A file of the rank cannot be made or written: said once per job (the first one), not once
 * per line; nothing more goes to it. */
static void file_failed(orte_iof_sink_t *sink, rank_state_t *r, int index, const char *path,
                        int error)
{
    if (r->file[index] >= 0) {
        close(r->file[index]);
        r->file[index] = -1;
    }
    r->file_failed[index] = true;
    if (sink->file_error_reported) {
        return;
    }
    sink->file_error_reported = true;
    if (NULL != sink->config.file_failed) {
        sink->config.file_failed(sink->config.cbdata, path, r->rank, index + 1, error);
        return;
    }
    opal_output(OPAL_OUTPUT_STDERR,
                "herdrun: cannot write %s: %s (--output-filename); this rank's output "
                "(and any other that fails the same way) is not saved there",
                path, strerror(error));
}

static void file_path(const orte_iof_sink_t *sink, const rank_state_t *r, int index, char *path,
                      size_t size)
{
    snprintf(path, size, "%s/rank.%u/%s", sink->config.output_dir, r->rank,
             0 == index ? "stdout" : "stderr");
}

static int file_for(orte_iof_sink_t *sink, rank_state_t *r, int index)
{
    if (r->file[index] >= 0 || r->file_failed[index]) {
        return r->file[index];
    }
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/rank.%u", sink->config.output_dir, r->rank);
    if (0 == mkdir(path, 0755) || EEXIST == errno) {
        file_path(sink, r, index, path, sizeof(path));
        int trunc = r->file_used[index] ? 0 : O_TRUNC;
        r->file[index] = open(path, O_WRONLY | O_CREAT | trunc | O_APPEND | O_CLOEXEC, 0644);
        r->file_used[index] = r->file[index] >= 0;
    }
    if (r->file[index] < 0) {
        /* the output still reaches the terminal unless :nocopy */
        file_failed(sink, r, index, path, errno);
    }
    return r->file[index];
}

/* ------------------------------------------------------------------------------------------ */
/* DATA */

static int ensure_scratch(orte_iof_sink_t *sink, size_t need)
{
    if (need <= sink->scratch_cap) {
        return HERD_SUCCESS;
    }
    size_t cap = sink->scratch_cap ? sink->scratch_cap : 4096;
    while (cap < need) {
        cap *= 2;
    }
    uint8_t *grown = realloc(sink->scratch, cap);
    if (NULL == grown) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    sink->scratch = grown;
    sink->scratch_cap = cap;
    return HERD_SUCCESS;
}

/* Each line of the payload with its prefix, into the scratch; a last piece without newline
 * gets one (the prefix of the next fragment starts a new line). */
static size_t format_lines(orte_iof_sink_t *sink, uint32_t rank, uint8_t stream, uint64_t when,
                           const struct iovec *payload, int n, size_t len)
{
    char prefix[128];
    size_t plen = orte_iof_base_prefix(prefix, sizeof(prefix), sink->config.flags,
                                       sink->config.jobseq, rank, stream, when);
    /* a prefix per line: count them first, so the scratch is the size of the output */
    size_t lines = 1;
    for (int i = 0; i < n; ++i) {
        const uint8_t *b = payload[i].iov_base, *end = b + payload[i].iov_len;
        while (b < end && NULL != (b = memchr(b, '\n', (size_t) (end - b)))) {
            ++lines;
            ++b;
        }
    }
    if (HERD_SUCCESS != ensure_scratch(sink, len + lines * plen + 1)) {
        return 0;
    }
    size_t at = 0;
    bool line_start = true;
    for (int i = 0; i < n; ++i) {
        const uint8_t *b = payload[i].iov_base;
        size_t l = payload[i].iov_len;
        while (l > 0) {
            if (line_start) {
                memcpy(sink->scratch + at, prefix, plen);
                at += plen;
                line_start = false;
            }
            const uint8_t *nl = memchr(b, '\n', l);
            size_t take = (NULL != nl) ? (size_t) (nl - b) + 1 : l;
            memcpy(sink->scratch + at, b, take);
            at += take;
            b += take;
            l -= take;
            line_start = NULL != nl;
        }
    }
    if (!line_start) {
        sink->scratch[at++] = '\n';
    }
    return at;
}

static int recv_data(orte_iof_sink_t *sink, orte_vpid_t from, const struct iovec *iov, int iovcnt)
{
    iof_msg_t msg;
    if (!iof_msg_split(iov, iovcnt, IOF_DATA_HEADER, &msg)) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    uint32_t rank = iof_get_u32(msg.header);
    uint8_t stream = msg.header[4];
    uint8_t flags = msg.header[5];
    uint64_t offset = iof_get_u64(msg.header + 6);
    uint64_t when = iof_get_u64(msg.header + 14);
    if (ORTE_IOF_STDOUT != stream && ORTE_IOF_STDERR != stream) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    uint64_t end = offset + msg.payload_len;
    rank_state_t *r = NULL;
    struct iovec *payload = msg.payload;
    int n = msg.num_payload;
    size_t len = msg.payload_len;
    if (ORTE_IOF_RANK_DAEMON != rank) {
        r = rank_state(sink, rank);
        if (NULL == r) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        uint64_t *expect = &r->expect[stream - 1];
        if ((flags & IOF_DATA_REOPEN) && offset == *expect) {
            r->ended[stream - 1] = false; /* the rank was restarted: its stream goes on */
        }
        if (end < *expect || (end == *expect && msg.payload_len > 0) || r->ended[stream - 1]) {
            /* a repeat: written already (or queued: acknowledged after it) */
            item_t ack = {.ack = true, .vpid = from, .rank = rank, .stream = stream, .end = end};
            if (output_write(&sink->out[stream - 1], NULL, 0, &ack)) {
                send_ack(sink, from, rank, stream, end);
            }
            return HERD_SUCCESS;
        }
        if (offset < *expect) {
            /* partly a repeat: skip what was written */
            size_t skip = (size_t) (*expect - offset);
            len -= skip;
            while (n > 0 && skip >= payload[0].iov_len) {
                skip -= payload[0].iov_len;
                ++payload;
                --n;
            }
            if (n > 0) {
                payload[0].iov_base = (uint8_t *) payload[0].iov_base + skip;
                payload[0].iov_len -= skip;
            }
        } else if (offset > *expect && !sink->gap_reported) {
            sink->gap_reported = true;
            opal_output(OPAL_OUTPUT_STDERR,
                        "herdrun: %llu bytes of rank %u's %s were lost on the way",
                        (unsigned long long) (offset - *expect), rank,
                        ORTE_IOF_STDOUT == stream ? "stdout" : "stderr");
        }
        *expect = end;
        if (NULL != sink->config.output_dir && (len > 0 || (flags & IOF_DATA_EOF))) {
            int fd = file_for(sink, r, stream - 1);
            for (int i = 0; fd >= 0 && i < n; ++i) {
                if (HERD_SUCCESS !=
                    opal_fd_write_all(fd, payload[i].iov_base, payload[i].iov_len)) {
                    /* a full disk, a quota, an I/O error: what fitted stays in the file */
                    int error = errno;
                    char path[PATH_MAX];
                    file_path(sink, r, stream - 1, path, sizeof(path));
                    file_failed(sink, r, stream - 1, path, error);
                    fd = -1;
                }
            }
            if ((flags & IOF_DATA_EOF) && fd >= 0) {
                r->file[stream - 1] = -1;
                if (0 != close(fd) && EINTR != errno) {
                    /* a network file system may say only now that the data did not fit */
                    int error = errno;
                    char path[PATH_MAX];
                    file_path(sink, r, stream - 1, path, sizeof(path));
                    file_failed(sink, r, stream - 1, path, error);
                }
            }
        }
        if (flags & IOF_DATA_EOF) {
            r->ended[stream - 1] = true;
        }
    }
    if (len > 0 && NULL != sink->tools) {
        to_tools(sink, rank, stream, payload, n, len);
    }
    bool written = true;
    if (NULL == r || NULL == sink->config.output_dir ||
        !(sink->config.flags & ORTE_IOF_FLAG_NOCOPY)) {
        output_t *o = &sink->out[stream - 1];
        item_t ack = {.ack = true, .vpid = from, .rank = rank, .stream = stream, .end = end};
        bool tagged =
            NULL != r && 0 != (sink->config.flags & (ORTE_IOF_FLAG_TAG | ORTE_IOF_FLAG_TIMESTAMP));
        if (tagged && len > 0) {
            size_t flen = format_lines(sink, rank, stream, when, payload, n, len);
            struct iovec one = {.iov_base = sink->scratch, .iov_len = flen};
            written = output_write(o, &one, 1, &ack);
        } else {
            written = output_write(o, payload, n, &ack);
        }
    }
    if (written) {
        send_ack(sink, from, rank, stream, end);
    }
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* the module */

/* mkdir -p: the folder and every missing one above it. */
static int make_folders(const char *dir)
{
    char path[PATH_MAX];
    if ((size_t) snprintf(path, sizeof(path), "%s", dir) >= sizeof(path)) {
        errno = ENAMETOOLONG;
        return HERD_ERR_IN_ERRNO;
    }
    for (char *p = path + 1;; ++p) {
        if ('/' == *p || '\0' == *p) {
            char saved = *p;
            *p = '\0';
            if (0 != mkdir(path, 0755) && EEXIST != errno) {
                return HERD_ERR_IN_ERRNO;
            }
            *p = saved;
            if ('\0' == saved) {
                break;
            }
        }
    }
    struct stat st;
    if (0 != stat(path, &st)) {
        return HERD_ERR_IN_ERRNO;
    }
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return HERD_ERR_IN_ERRNO;
    }
    return HERD_SUCCESS;
}

int iof_default_sink_create(const orte_iof_sink_config_t *config, orte_iof_sink_t **out)
{
    if (NULL == config || NULL == config->base || NULL == config->transport.send) {
        return HERD_ERR_BAD_PARAM;
    }
    orte_iof_sink_t *sink = calloc(1, sizeof(*sink));
    if (NULL == sink) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    sink->config = *config;
    sink->window = orte_iof_base_window();
    size_t n = (size_t) config->num_sources + 1;
    sink->ready = calloc(n, sizeof(*sink->ready));
    sink->closed = calloc(n, sizeof(*sink->closed));
    sink->acked = calloc(n, sizeof(*sink->acked));
    if (NULL != config->output_dir) {
        sink->config.output_dir = strdup(config->output_dir);
    }
    if (NULL == sink->ready || NULL == sink->closed || NULL == sink->acked ||
        (NULL != config->output_dir && NULL == sink->config.output_dir)) {
        iof_default_sink_destroy(sink);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (NULL != sink->config.output_dir && HERD_SUCCESS != make_folders(sink->config.output_dir)) {
        int saved = errno;
        opal_output(OPAL_OUTPUT_STDERR,
                    "herdrun: cannot make the output folder %s: %s; give --output-filename a "
                    "folder you may write",
                    sink->config.output_dir, strerror(saved));
        iof_default_sink_destroy(sink);
        return HERD_ERR_SILENT;
    }
    output_open(sink, &sink->out[0], config->stdout_fd);
    output_open(sink, &sink->out[1], config->stderr_fd);
    if (ORTE_IOF_STDIN_NONE == config->stdin_target) {
        sink->in_done = true;
    }
    *out = sink;
    return HERD_SUCCESS;
}

void iof_default_sink_destroy(orte_iof_sink_t *sink)
{
    if (NULL == sink) {
        return;
    }
    output_close(&sink->out[0]);
    output_close(&sink->out[1]);
    while (NULL != sink->tools) {
        output_t *o = sink->tools;
        sink->tools = o->next;
        output_close(o);
        free(o);
    }
    for (size_t i = 0; i < sink->ranks.cap; ++i) {
        rank_state_t *r = sink->ranks.slots[i];
        if (NULL == r) {
            continue;
        }
        for (int s = 0; s < 2; ++s) {
            if (r->file[s] >= 0) {
                close(r->file[s]);
            }
        }
        free(r);
    }
    if (NULL != sink->in_event) {
        opal_event_free(sink->in_event);
    }
    free(sink->ranks.slots);
    free(sink->scratch);
    free(sink->ready);
    free(sink->closed);
    free(sink->acked);
    free((char *) sink->config.output_dir);
    free(sink);
}

int iof_default_sink_deliver(orte_iof_sink_t *sink, orte_vpid_t from, int msg,
                             const struct iovec *iov, int iovcnt)
{
    int rc;
    switch (msg) {
    case ORTE_IOF_MSG_DATA:
        rc = recv_data(sink, from, iov, iovcnt);
        break;
    case ORTE_IOF_MSG_READY:
        rc = iof_default_sink_stdin_ready(sink, from, iov, iovcnt);
        break;
    case ORTE_IOF_MSG_STDIN_ACK:
        rc = iof_default_sink_stdin_ack(sink, from, iov, iovcnt);
        break;
    default:
        rc = HERD_ERR_UNPACK_FAILURE;
        break;
    }
    return iof_dropped(rc, msg, from);
}

void iof_default_sink_source_lost(orte_iof_sink_t *sink, orte_vpid_t vpid)
{
    iof_default_sink_stdin_target_gone(sink, vpid);
}

void iof_default_sink_rank_moved(orte_iof_sink_t *sink, uint32_t rank)
{
    rank_state_t *r = iof_table_find(&sink->ranks, rank);
    for (int i = 0; NULL != r && i < 2; ++i) {
        r->expect[i] = 0;
        r->ended[i] = false;
    }
}

size_t iof_default_sink_queued(const orte_iof_sink_t *sink)
{
    return sink->out[0].queued + sink->out[1].queued;
}
