/* SPDX-License-Identifier: BSD-3-Clause */
/* iof default, the sink's stdin: read only while a target wants it, never more than a window
 * ahead of the slowest target's acknowledgements. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/util/fd.h"
#include "opal/util/output.h"
#include "orte/mca/iof/default/iof_default_sink_internal.h"

/* ------------------------------------------------------------------------------------------ */
/* stdin */

static void in_arm(orte_iof_sink_t *sink, bool on);

/* The smallest window left among the targets. */
static size_t in_budget(const orte_iof_sink_t *sink)
{
    size_t room = sink->window;
    bool any = false;
    for (uint32_t v = 1; v <= sink->config.num_sources; ++v) {
        if (sink->ready[v] && !sink->closed[v]) {
            uint64_t in_flight = sink->in_sent - sink->acked[v];
            size_t left = in_flight >= sink->window ? 0 : sink->window - (size_t) in_flight;
            room = left < room ? left : room;
            any = true;
        }
    }
    return any ? room : 0;
}

static bool in_anyone(const orte_iof_sink_t *sink)
{
    for (uint32_t v = 1; v <= sink->config.num_sources; ++v) {
        if (sink->ready[v] && !sink->closed[v]) {
            return true;
        }
    }
    return false;
}

static void in_send(orte_iof_sink_t *sink, const uint8_t *data, size_t len, bool eof)
{
    uint8_t header[IOF_STDIN_HEADER];
    struct iovec iov[2] = {{.iov_base = header, .iov_len = sizeof(header)},
                           {.iov_base = (void *) data, .iov_len = len}};
    iof_put_u32(header, (uint32_t) sink->config.stdin_target);
    header[4] = eof ? IOF_STDIN_EOF : 0;
    iof_put_u64(header + 5, sink->in_sent);
    /* counted before sending: a source in this process may answer within the send */
    sink->in_sent += len;
    for (uint32_t v = 1; v <= sink->config.num_sources; ++v) {
        if (sink->ready[v] && !sink->closed[v]) {
            sink->config.transport.send(sink->config.transport.ctx, v, ORTE_IOF_MSG_STDIN, iov,
                                        len > 0 ? 2 : 1);
        }
    }
}

static void in_read(orte_iof_sink_t *sink)
{
    if (sink->in_done) {
        return;
    }
    size_t room = in_budget(sink);
    if (0 == room) {
        in_arm(sink, false); /* until a target catches up */
        return;
    }
    uint8_t buf[IOF_CHUNK];
    if (room > sizeof(buf)) {
        room = sizeof(buf);
    }
    ssize_t n;
    do {
        n = read(sink->config.stdin_fd, buf, room);
    } while (n < 0 && EINTR == errno);
    if (n < 0 && (EAGAIN == errno || EWOULDBLOCK == errno)) {
        return;
    }
    if (n > 0) {
        in_send(sink, buf, (size_t) n, false);
        if (sink->in_poll) {
            in_arm(sink, true);
        }
        return;
    }
    /* the end of our stdin (or an error reading it): the targets read EOF */
    in_send(sink, NULL, 0, true);
    sink->in_done = true;
    in_arm(sink, false);
}

static void in_cb(int fd, short what, void *arg)
{
    orte_iof_sink_t *sink = arg;
    if (sink->in_poll) {
        sink->in_watching = false; /* a one-shot timer */
    }
    in_read(sink);
}

static void in_arm(orte_iof_sink_t *sink, bool on)
{
    if (NULL == sink->in_event || sink->in_watching == on) {
        return;
    }
    sink->in_watching = on;
    if (!on) {
        opal_event_del(sink->in_event);
    } else if (sink->in_poll) {
        struct timeval now = {0, 0};
        opal_event_add(sink->in_event, &now);
    } else {
        opal_event_add(sink->in_event, NULL);
    }
}

/* Every target there is has said it is ready: start reading stdin. */
static void in_maybe_start(orte_iof_sink_t *sink)
{
    if (sink->reading || sink->in_done || sink->config.stdin_fd < 0) {
        return;
    }
    if (ORTE_IOF_STDIN_ALL == sink->config.stdin_target) {
        for (uint32_t v = 1; v <= sink->config.num_sources; ++v) {
            if (!sink->ready[v] && !sink->closed[v]) {
                return;
            }
        }
    }
    if (!in_anyone(sink)) {
        return;
    }
    sink->reading = true;
    /* a file or /dev/null cannot be watched (epoll refuses them): always readable, they are
     * read on a zero timer, one chunk per round */
    struct stat st;
    int rc = HERD_ERR_NOT_SUPPORTED;
    if (0 == fstat(sink->config.stdin_fd, &st) &&
        (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ||
         (S_ISCHR(st.st_mode) && isatty(sink->config.stdin_fd)))) {
        rc = opal_event_fd_create(sink->config.base, sink->config.stdin_fd,
                                  OPAL_EVENT_READ | OPAL_EVENT_PERSIST, in_cb, sink,
                                  &sink->in_event);
    }
    if (HERD_SUCCESS == rc) {
        in_arm(sink, true);
        return;
    }
    if (HERD_SUCCESS ==
        opal_event_timer_create(sink->config.base, false, in_cb, sink, &sink->in_event)) {
        sink->in_poll = true;
        in_arm(sink, true);
    }
}

void iof_default_sink_stdin_target_gone(orte_iof_sink_t *sink, orte_vpid_t vpid)
{
    if (vpid < 1 || vpid > sink->config.num_sources || sink->closed[vpid]) {
        return;
    }
    sink->closed[vpid] = true;
    if (sink->reading && !in_anyone(sink)) {
        /* nobody takes stdin any more: leave the rest of it unread for whoever comes next */
        sink->in_done = true;
        in_arm(sink, false);
        return;
    }
    if (sink->reading && !sink->in_done) {
        in_arm(sink, true);
    }
    in_maybe_start(sink);
}

int iof_default_sink_stdin_ready(orte_iof_sink_t *sink, orte_vpid_t from, const struct iovec *iov,
                                 int iovcnt)
{
    iof_msg_t msg;
    if (!iof_msg_split(iov, iovcnt, IOF_READY_SIZE, &msg) || from < 1 ||
        from > sink->config.num_sources) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    if (!sink->ready[from]) {
        sink->ready[from] = true;
        sink->num_ready++;
        sink->acked[from] = sink->in_sent;
        if (sink->reading && sink->in_sent > 0) {
            /* too late for what was sent already: it cannot be a target now */
            sink->closed[from] = true;
        }
    }
    in_maybe_start(sink);
    return HERD_SUCCESS;
}

int iof_default_sink_stdin_ack(orte_iof_sink_t *sink, orte_vpid_t from, const struct iovec *iov,
                               int iovcnt)
{
    iof_msg_t msg;
    if (!iof_msg_split(iov, iovcnt, IOF_STDIN_ACK_SIZE, &msg) || from < 1 ||
        from > sink->config.num_sources) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    uint64_t end = iof_get_u64(msg.header);
    if (end > sink->in_sent) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    if (end > sink->acked[from]) {
        sink->acked[from] = end;
    }
    if (msg.header[8] & IOF_STDIN_CLOSED) {
        iof_default_sink_stdin_target_gone(sink, from);
    } else if (sink->reading && !sink->in_done && in_budget(sink) > 0) {
        in_arm(sink, true);
    }
    return HERD_SUCCESS;
}
