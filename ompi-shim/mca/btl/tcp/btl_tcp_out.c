/* SPDX-License-Identifier: BSD-3-Clause */
/* btl tcp: the connections this process opens to its peers, one per peer on its first message,
 * and sends on (connect, hello, ack, then queued frames; a refused RM-assigned address retried by
 * the modex). */
#include "herd_config.h"

#include <errno.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ompi-shim/mca/btl/tcp/btl_tcp_internal.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"

void btl_tcp_drop_queue(btl_tcp_endpoint_t *ep)
{
    while (NULL != ep->queue_head) {
        btl_tcp_frag_t *f = ep->queue_head;
        ep->queue_head = f->next;
        btl_tcp.num_queued -= f->is_message;
        free(f);
    }
    ep->queue_tail = NULL;
}

static void fail_endpoint(btl_tcp_endpoint_t *ep, const char *why)
{
    if (ep->fd >= 0) {
        close(ep->fd);
        ep->fd = -1;
    }
    if (NULL != ep->queue_head) {
        opal_output_verbose(1, ompi_btl_base_framework.output,
                            "rank %u: tcp to rank %u failed (%s): its queued messages are lost",
                            btl_tcp.rte->my_rank, ep->proc->rank, why);
    }
    btl_tcp_drop_queue(ep);
    ep->state = OUT_FAILED;
}

/* Start a non-blocking connect to ep->addr. */
static int start_connect(btl_tcp_endpoint_t *ep)
{
    int one = 1;

    ep->fd = socket(ep->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (ep->fd < 0) {
        return HERD_ERR_IN_ERRNO;
    }
    setsockopt(ep->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    ep->ack_got = 0;
    if (0 == connect(ep->fd, (struct sockaddr *) &ep->addr, ep->addr_len) || EINPROGRESS == errno) {
        ep->state = OUT_CONNECTING;
        return HERD_SUCCESS;
    }
    if (ECONNREFUSED == errno) {
        /* not listening yet (RM path: it has not started): try again shortly */
        close(ep->fd);
        ep->fd = -1;
        ep->state = OUT_CONNECTING;
        btl_tcp_deadline_in(&ep->retry_at, BTL_TCP_RETRY_MS);
        return HERD_SUCCESS;
    }
    int err = errno;
    close(ep->fd);
    ep->fd = -1;
    errno = err;
    return HERD_ERR_IN_ERRNO;
}

btl_tcp_endpoint_t *btl_tcp_endpoint_of(ompi_proc_t *proc)
{
    btl_tcp_endpoint_t *ep = proc->endpoint[HERD_ENDPOINT_TAG_TCP];

    if (NULL != ep) {
        return ep;
    }
    ep = calloc(1, sizeof(*ep));
    if (NULL == ep) {
        return NULL;
    }
    ep->proc = proc;
    ep->fd = -1;
    ep->state = OUT_NONE;
    ep->next = btl_tcp.endpoints;
    btl_tcp.endpoints = ep;
    btl_tcp.num_endpoints++;
    proc->endpoint[HERD_ENDPOINT_TAG_TCP] = ep;
    return ep;
}

static int connect_via(btl_tcp_endpoint_t *ep, enum btl_tcp_addr_path path)
{
    char text[128];
    int rc = btl_tcp_peer_address(ep->proc, path, &ep->addr, &ep->addr_len, &ep->path);

    if (HERD_SUCCESS != rc) {
        return rc;
    }
    opal_output_verbose(5, ompi_btl_base_framework.output,
                        "rank %u: tcp connects to rank %u at %s (%s)", btl_tcp.rte->my_rank,
                        ep->proc->rank,
                        btl_tcp_addr_text(&ep->addr, ep->addr_len, text, sizeof(text)),
                        PATH_RM == ep->path ? "RM-assigned endpoint" : "modex");
    btl_tcp_deadline_in(&ep->deadline, 1000L * btl_tcp.connect_timeout);
    return start_connect(ep);
}

int btl_tcp_add_peer(ompi_proc_t *proc)
{
    btl_tcp_endpoint_t *ep = btl_tcp_endpoint_of(proc);

    if (NULL == ep) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (OUT_NONE != ep->state) {
        return OUT_FAILED == ep->state ? HERD_ERR_UNREACH : HERD_SUCCESS;
    }
    return connect_via(ep, PATH_RM);
}

static btl_tcp_frag_t *queue_frag(btl_tcp_endpoint_t *ep, const uint8_t *head, size_t head_len,
                                  const void *data, size_t data_len, bool is_message, bool front)
{
    btl_tcp_frag_t *f = malloc(sizeof(*f) + head_len + data_len);

    if (NULL == f) {
        return NULL;
    }
    f->len = head_len + data_len;
    f->sent = 0;
    f->is_message = is_message;
    memcpy(f->bytes, head, head_len);
    if (data_len > 0) {
        memcpy(f->bytes + head_len, data, data_len);
    }
    if (front) {
        f->next = ep->queue_head;
        ep->queue_head = f;
        if (NULL == ep->queue_tail) {
            ep->queue_tail = f;
        }
    } else {
        f->next = NULL;
        if (NULL == ep->queue_tail) {
            ep->queue_head = f;
        } else {
            ep->queue_tail->next = f;
        }
        ep->queue_tail = f;
    }
    btl_tcp.num_queued += is_message;
    return f;
}

int btl_tcp_send(ompi_proc_t *proc, int tag, const void *buf, size_t len)
{
    btl_tcp_endpoint_t *ep = proc->endpoint[HERD_ENDPOINT_TAG_TCP];
    uint8_t head[BTL_TCP_HEADER_SIZE];
    size_t sent = 0;

    if (OUT_FAILED == ep->state) {
        return HERD_ERR_UNREACH;
    }
    btl_tcp_encode_header(BTL_TCP_MSG, tag, len, head);
    if (OUT_READY == ep->state && NULL == ep->queue_head) {
        struct iovec iov[2] = {{head, sizeof(head)}, {(void *) buf, len}};
        struct msghdr msg = {.msg_iov = iov, .msg_iovlen = len > 0 ? 2 : 1};
        ssize_t n = sendmsg(ep->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && EAGAIN != errno && EWOULDBLOCK != errno && EINTR != errno) {
            fail_endpoint(ep, strerror(errno));
            return HERD_ERR_UNREACH;
        }
        sent = n > 0 ? (size_t) n : 0;
        if (sent == sizeof(head) + len) {
            return HERD_SUCCESS;
        }
    }
    /* not connected yet, behind queued bytes, or the socket is full: keep the rest */
    btl_tcp_frag_t *f;
    if (sent < sizeof(head)) {
        f = queue_frag(ep, head + sent, sizeof(head) - sent, buf, len, true, false);
    } else {
        f = queue_frag(ep, NULL, 0, (const uint8_t *) buf + (sent - sizeof(head)),
                       len - (sent - sizeof(head)), true, false);
    }
    return NULL != f ? HERD_SUCCESS : HERD_ERR_OUT_OF_RESOURCE;
}

/* Write queued frames while the socket takes them. */
static int flush_queue(btl_tcp_endpoint_t *ep)
{
    int events = 0;

    while (NULL != ep->queue_head) {
        btl_tcp_frag_t *f = ep->queue_head;
        ssize_t n = send(ep->fd, f->bytes + f->sent, f->len - f->sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (EAGAIN == errno || EWOULDBLOCK == errno || EINTR == errno) {
                break;
            }
            fail_endpoint(ep, strerror(errno));
            return events;
        }
        f->sent += (size_t) n;
        if (f->sent < f->len) {
            break;
        }
        ep->queue_head = f->next;
        if (NULL == ep->queue_head) {
            ep->queue_tail = NULL;
        }
        btl_tcp.num_queued -= f->is_message;
        free(f);
        events++;
    }
    return events;
}

/* The connect finished: say who we are (ahead of any message). */
static int send_hello(btl_tcp_endpoint_t *ep)
{
    uint8_t frame[BTL_TCP_FRAME_MAX];
    size_t n =
        btl_tcp_encode_hello(btl_tcp.rte->my_rank, btl_tcp.rte->jobid, frame + BTL_TCP_HEADER_SIZE);

    btl_tcp_encode_header(BTL_TCP_HELLO, 0, n, frame);
    if (NULL == queue_frag(ep, frame, BTL_TCP_HEADER_SIZE + n, NULL, 0, false, true)) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    ep->state = OUT_AWAIT_ACK;
    /* the hello goes now; messages wait for the ack (flush_queue would send them too) */
    btl_tcp_frag_t *hello = ep->queue_head;
    ssize_t w = send(ep->fd, hello->bytes, hello->len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w != (ssize_t) hello->len) {
        return HERD_ERR_UNREACH; /* 85 bytes into a fresh socket: anything else is a failure */
    }
    ep->queue_head = hello->next;
    if (NULL == ep->queue_head) {
        ep->queue_tail = NULL;
    }
    free(hello);
    return HERD_SUCCESS;
}

/* Who answered is not our peer (or nobody did): an RM-assigned port taken by someone else. */
static void retry_by_modex(btl_tcp_endpoint_t *ep, const char *why)
{
    if (ep->fd >= 0) {
        close(ep->fd);
        ep->fd = -1;
    }
    if (PATH_RM != ep->path) {
        fail_endpoint(ep, why);
        return;
    }
    opal_output_verbose(5, ompi_btl_base_framework.output,
                        "rank %u: tcp: rank %u's RM-assigned endpoint did not answer as rank %u "
                        "(%s): asking the modex",
                        btl_tcp.rte->my_rank, ep->proc->rank, ep->proc->rank, why);
    if (HERD_SUCCESS != connect_via(ep, PATH_MODEX)) {
        fail_endpoint(ep, "no modex address");
    }
}

static void read_ack(btl_tcp_endpoint_t *ep)
{
    ssize_t n = recv(ep->fd, ep->ack + ep->ack_got, sizeof(ep->ack) - ep->ack_got, MSG_DONTWAIT);
    btl_tcp_header_t h;
    uint32_t rank;

    if (0 == n || (n < 0 && EAGAIN != errno && EWOULDBLOCK != errno && EINTR != errno)) {
        retry_by_modex(ep, 0 == n ? "it closed the connection" : strerror(errno));
        return;
    }
    if (n < 0) {
        return;
    }
    ep->ack_got += (size_t) n;
    int rc = btl_tcp_decode_header(ep->ack, ep->ack_got, 0, &h);
    if (HERD_ERR_UNPACK_READ_PAST_END == rc) {
        return;
    }
    if (HERD_SUCCESS != rc || BTL_TCP_ACK != h.type) {
        retry_by_modex(ep, "not a herd tcp ack");
        return;
    }
    if (ep->ack_got < BTL_TCP_HEADER_SIZE + h.length) {
        return;
    }
    rc = btl_tcp_decode_hello(ep->ack + BTL_TCP_HEADER_SIZE, (size_t) h.length,
                              btl_tcp.rte->job_size, btl_tcp.rte->jobid, &rank);
    if (HERD_SUCCESS != rc || rank != ep->proc->rank ||
        ep->ack_got != BTL_TCP_HEADER_SIZE + h.length) {
        retry_by_modex(ep, "another process answered");
        return;
    }
    ep->state = OUT_READY;
    opal_output_verbose(10, ompi_btl_base_framework.output,
                        "rank %u: tcp connection to rank %u ready", btl_tcp.rte->my_rank, rank);
}

/* One endpoint's connection, given what poll said (revents 0: not polled). */
int btl_tcp_progress_endpoint(btl_tcp_endpoint_t *ep, short revents)
{
    char text[128];

    switch (ep->state) {
    case OUT_CONNECTING:
        if (ep->fd < 0) {
            if (btl_tcp_passed(&ep->deadline)) {
                opal_show_help("help-btl-tcp.txt", "connect-failed", true, btl_tcp.rte->my_rank,
                               ep->proc->rank,
                               btl_tcp_addr_text(&ep->addr, ep->addr_len, text, sizeof(text)),
                               "connection refused", btl_tcp.connect_timeout, ep->proc->rank);
                fail_endpoint(ep, "connection refused");
            } else if (btl_tcp_passed(&ep->retry_at) && HERD_SUCCESS != start_connect(ep)) {
                fail_endpoint(ep, strerror(errno));
            }
            return 0;
        }
        if (0 == revents) {
            if (btl_tcp_passed(&ep->deadline)) {
                opal_show_help("help-btl-tcp.txt", "connect-failed", true, btl_tcp.rte->my_rank,
                               ep->proc->rank,
                               btl_tcp_addr_text(&ep->addr, ep->addr_len, text, sizeof(text)),
                               "no answer", btl_tcp.connect_timeout, ep->proc->rank);
                fail_endpoint(ep, "no answer");
            }
            return 0;
        }
        int err = 0;
        socklen_t elen = sizeof(err);
        getsockopt(ep->fd, SOL_SOCKET, SO_ERROR, &err, &elen);
        if (0 != err) {
            close(ep->fd);
            ep->fd = -1;
            btl_tcp_deadline_in(&ep->retry_at, BTL_TCP_RETRY_MS);
            return 0;
        }
        if (HERD_SUCCESS != send_hello(ep)) {
            retry_by_modex(ep, "the hello could not be sent");
        }
        return 1;
    case OUT_AWAIT_ACK:
        if (revents & (POLLIN | POLLHUP | POLLERR)) {
            read_ack(ep);
            return 1;
        }
        if (btl_tcp_passed(&ep->deadline)) {
            retry_by_modex(ep, "no answer");
        }
        return 0;
    case OUT_READY:
        if (revents & (POLLHUP | POLLERR)) {
            fail_endpoint(ep, "the peer closed the connection");
            return 1;
        }
        if (revents & POLLIN) {
            /* the accepting side never writes after its ack: this is its end */
            uint8_t byte;
            ssize_t n = recv(ep->fd, &byte, 1, MSG_DONTWAIT);
            if (n <= 0 && !(n < 0 && (EAGAIN == errno || EINTR == errno))) {
                fail_endpoint(ep, "the peer closed the connection");
                return 1;
            }
        }
        return NULL != ep->queue_head ? flush_queue(ep) : 0;
    default:
        return 0;
    }
}
