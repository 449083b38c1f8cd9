/* SPDX-License-Identifier: BSD-3-Clause */
/* overlay tcp connections: non-blocking connect and accept, the challenge-response handshake,
 * framed reads, queued and direct writes, forwarding, and failure handling. */
#include "herd_config.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "opal/util/output.h"
#include "opal/util/show_help.h"
#include "orte/mca/overlay/tcp/overlay_tcp.h"
#include "orte/util/radix.h"

/* Receive buffer: what a connection starts with, and the size above which an idle buffer (one
 * that grew for a large message) is given back. An accepted connection starts with room for one
 * handshake frame only, so a stranger holds 1 KiB, not 64, until it proves itself. */
#define OVERLAY_TCP_RBUF_INITIAL  ((size_t) 64 * 1024)
#define OVERLAY_TCP_RBUF_STRANGER ((size_t) OVERLAY_TCP_HANDSHAKE_OUT)
#define OVERLAY_TCP_RBUF_SHRINK   ((size_t) 8 * 1024 * 1024)
/* recv() calls per wakeup, so one busy neighbour cannot starve the others. */
#define OVERLAY_TCP_READ_ROUNDS 16
/* Frames gathered into one sendmsg(). */
#define OVERLAY_TCP_WRITE_IOV 64
/* TCP keepalive: a neighbour whose node vanished without a FIN/RST is noticed in about a
 * minute (30 s idle, then 3 probes 10 s apart) rather than the kernel's two hours. */
#define OVERLAY_TCP_KEEPIDLE  30
#define OVERLAY_TCP_KEEPINTVL 10
#define OVERLAY_TCP_KEEPCNT   3
/* A refused stranger is logged at overlay_base_verbose 1 the first time on an endpoint, then at
 * this level: a flood must not flood the log either (peers_rejected counts them all). */
#define OVERLAY_TCP_VERBOSE_REFUSALS 5

/* What frame handling left behind. */
typedef enum {
    CONN_CONTINUE, /* the connection is fine */
    CONN_GONE,     /* it was closed and freed */
    CONN_STOP,     /* a callback asked for finalize: touch nothing more */
} conn_result_t;

static void conn_read_cb(int fd, short what, void *arg);
static void conn_write_cb(int fd, short what, void *arg);
static void conn_timer_cb(int fd, short what, void *arg);

static void conn_set_options(int fd)
{
    int one = 1;

    /* control messages are small and latency-bound; writes are batched by the queue anyway */
    (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    (void) setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
#if defined(TCP_KEEPIDLE) && defined(TCP_KEEPINTVL) && defined(TCP_KEEPCNT)
    int idle = OVERLAY_TCP_KEEPIDLE;
    int interval = OVERLAY_TCP_KEEPINTVL;
    int count = OVERLAY_TCP_KEEPCNT;

    (void) setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    (void) setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
    (void) setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
#endif
}

static int conn_new(orte_overlay_t *overlay, int fd, bool outgoing, const char *address,
                    size_t rcap, overlay_tcp_conn_t **result)
{
    overlay_tcp_conn_t *conn = calloc(1, sizeof(*conn));
    int rc = HERD_ERR_OUT_OF_RESOURCE;

    if (NULL == conn) {
        return rc;
    }
    conn->overlay = overlay;
    conn->fd = fd;
    conn->outgoing = outgoing;
    conn->claimed_vpid = ORTE_VPID_INVALID;
    snprintf(conn->address, sizeof(conn->address), "%s", address);
    conn->rcap = rcap;
    conn->rbuf = malloc(conn->rcap);
    if (NULL == conn->rbuf) {
        goto err_free;
    }
    rc = opal_event_fd_create(overlay->base, fd, OPAL_EVENT_READ | OPAL_EVENT_PERSIST, conn_read_cb,
                              conn, &conn->read_event);
    if (HERD_SUCCESS != rc) {
        goto err_free;
    }
    rc = opal_event_fd_create(overlay->base, fd, OPAL_EVENT_WRITE | OPAL_EVENT_PERSIST,
                              conn_write_cb, conn, &conn->write_event);
    if (HERD_SUCCESS != rc) {
        goto err_events;
    }
    rc = opal_event_timer_create(overlay->base, false, conn_timer_cb, conn, &conn->timer);
    if (HERD_SUCCESS != rc) {
        goto err_events;
    }
    rc = opal_event_add(conn->read_event, NULL);
    if (HERD_SUCCESS == rc) {
        rc = opal_event_add(conn->timer,
                            outgoing ? &overlay->connect_timeout : &overlay->handshake_timeout);
    }
    if (HERD_SUCCESS != rc) {
        goto err_events;
    }
    conn_set_options(fd);
    conn->next = overlay->conns;
    if (NULL != overlay->conns) {
        overlay->conns->prev = conn;
    }
    overlay->conns = conn;
    *result = conn;
    return HERD_SUCCESS;

err_events:
    opal_event_free(conn->timer);
    opal_event_free(conn->write_event);
    opal_event_free(conn->read_event);
err_free:
    free(conn->rbuf);
    free(conn);
    return rc;
}

/* Unlink, close and free; the peer (if any) must already have let go of it. */
static void conn_destroy(overlay_tcp_conn_t *conn)
{
    orte_overlay_t *overlay = conn->overlay;

    if (NULL != conn->prev) {
        conn->prev->next = conn->next;
    } else {
        overlay->conns = conn->next;
    }
    if (NULL != conn->next) {
        conn->next->prev = conn->prev;
    }
    if (!conn->outgoing && NULL == conn->peer) {
        overlay->num_pending--;
    }
    if (NULL != conn->peer && conn->peer->conn == conn) {
        conn->peer->conn = NULL;
    }
    opal_event_free(conn->timer);
    opal_event_free(conn->write_event);
    opal_event_free(conn->read_event);
    close(conn->fd);
    free(conn->rbuf);
    explicit_bzero(conn->nonce_local, sizeof(conn->nonce_local));
    free(conn);
}

/* "daemon 5" or "no daemon yet", for messages about a connection not yet authenticated. */
static void conn_claimed(const overlay_tcp_conn_t *conn, char *text, size_t size)
{
    if (ORTE_VPID_INVALID == conn->claimed_vpid) {
        snprintf(text, size, "it had not said which daemon it is");
    } else {
        snprintf(text, size, "claiming to be daemon %u", conn->claimed_vpid);
    }
}

/* Close conn after a failure and say so: a neighbour's loss (or the parent's failed setup) goes
 * to the lost callback, a refused stranger to the log. The caller is inside enter/leave. */
static void conn_fail(overlay_tcp_conn_t *conn, int status, const char *reason)
{
    orte_overlay_t *overlay = conn->overlay;
    overlay_tcp_peer_t *peer = conn->peer;
    orte_vpid_t vpid = NULL != peer ? peer->vpid : ORTE_VPID_INVALID;

    if (NULL == peer) {
        /* never on stderr: a session daemon's stderr is its job's, and anyone who can reach a
         * port could write into it */
        bool first = 0 == overlay->stats.peers_rejected;
        char claimed[64];

        conn_claimed(conn, claimed, sizeof(claimed));
        overlay->stats.peers_rejected++;
        if (HERD_ERR_AUTH == status) {
            overlay->stats.auth_failures++;
        }
        opal_output_verbose(first ? 1 : OVERLAY_TCP_VERBOSE_REFUSALS, overlay_tcp_output(),
                            "overlay tcp: daemon %u of DVM %s refused a connection from %s (%s): "
                            "%s%s",
                            overlay->vpid, overlay->dvm_id, conn->address, claimed, reason,
                            first ? " (further refusals are logged at overlay_base_verbose 5)"
                                  : "");
        conn_destroy(conn);
        return;
    }
    if (OVERLAY_TCP_PEER_UP == peer->state) {
        overlay->stats.neighbours_up--;
    }
    peer->state = OVERLAY_TCP_PEER_LOST;
    overlay_tcp_queue_drop(overlay, &peer->queue);
    conn_destroy(conn);
    overlay_tcp_report_lost(overlay, vpid, status, reason);
}

void overlay_tcp_conn_fail(overlay_tcp_conn_t *conn, int status, const char *reason)
{
    conn_fail(conn, status, reason);
}

void overlay_tcp_conn_evict_pending(orte_overlay_t *overlay)
{
    overlay_tcp_conn_t *oldest = NULL;
    overlay_tcp_conn_t *oldest_silent = NULL;
    char reason[256];

    /* newest first in the list: the last one seen is the oldest. One that has not even said
     * HELLO goes before one whose HELLO passed (that may be a daemon of ours mid-handshake). */
    for (overlay_tcp_conn_t *conn = overlay->conns; NULL != conn; conn = conn->next) {
        if (conn->outgoing || NULL != conn->peer) {
            continue;
        }
        oldest = conn;
        if (OVERLAY_TCP_CONN_WAIT_HELLO == conn->state) {
            oldest_silent = conn;
        }
    }
    if (NULL != oldest_silent) {
        oldest = oldest_silent;
    }
    if (NULL != oldest) {
        snprintf(reason, sizeof(reason),
                 "dropped for a newer connection: %u connections were authenticating at once",
                 overlay->num_pending);
        conn_fail(oldest, HERD_ERR_OUT_OF_RESOURCE, reason);
    }
}

/* The parent failed our checks during the handshake: a security event worth a log line of its
 * own, on top of the lost callback. */
static void conn_refuse_parent(overlay_tcp_conn_t *conn, int status, const char *reason)
{
    orte_overlay_t *overlay = conn->overlay;

    overlay->stats.peers_rejected++;
    if (HERD_ERR_AUTH == status) {
        overlay->stats.auth_failures++;
    }
    opal_show_help(OVERLAY_TCP_HELP_FILE, "parent-rejected", true, overlay->vpid,
                   overlay->parent.vpid, overlay->parent.uri, reason);
    conn_fail(conn, status, reason);
}

/* An authenticated neighbour broke the protocol: log it, count it, drop the connection. */
static void conn_protocol_error(overlay_tcp_conn_t *conn, const char *reason)
{
    orte_overlay_t *overlay = conn->overlay;
    char text[512];

    overlay->stats.protocol_errors++;
    opal_show_help(OVERLAY_TCP_HELP_FILE, "bad-frame", true, overlay->vpid, conn->peer->vpid,
                   conn->address, reason);
    snprintf(text, sizeof(text), "daemon %u (%s) sent a malformed message: %s", conn->peer->vpid,
             conn->address, reason);
    conn_fail(conn, HERD_ERR_UNPACK_FAILURE, text);
}

static void conn_want_write(overlay_tcp_conn_t *conn)
{
    if (!conn->write_armed && HERD_SUCCESS == opal_event_add(conn->write_event, NULL)) {
        conn->write_armed = true;
    }
}

static void conn_stop_write(overlay_tcp_conn_t *conn)
{
    if (conn->write_armed) {
        opal_event_del(conn->write_event);
        conn->write_armed = false;
    }
}

/* Put one handshake frame in the connection's handshake buffer and ask to write it. */
static int conn_send_handshake(overlay_tcp_conn_t *conn, uint8_t type, orte_vpid_t dst,
                               const uint8_t *payload, size_t length)
{
    overlay_tcp_header_t header = {
        .version = OVERLAY_TCP_PROTOCOL_VERSION,
        .type = type,
        .src = conn->overlay->vpid,
        .dst = dst,
        .length = (uint32_t) length,
    };

    /* the peer answers only once our previous frame arrived whole, so the buffer is free */
    if (conn->hs_offset != conn->hs_length || length > OVERLAY_TCP_MAX_HANDSHAKE_PAYLOAD) {
        return HERD_ERROR;
    }
    overlay_tcp_header_encode(&header, conn->hs_out);
    memcpy(conn->hs_out + OVERLAY_TCP_HEADER_BYTES, payload, length);
    conn->hs_length = OVERLAY_TCP_HEADER_BYTES + length;
    conn->hs_offset = 0;
    conn_want_write(conn);
    return HERD_SUCCESS;
}

/* Write what the socket takes now: a pending handshake frame first, then (once up) the peer's
 * queue, gathered into one sendmsg() per round. HERD_SUCCESS even when some is left; an error
 * leaves the system's reason in errno. */
static int conn_flush(overlay_tcp_conn_t *conn)
{
    orte_overlay_t *overlay = conn->overlay;
    overlay_tcp_queue_t *queue;

    while (conn->hs_offset < conn->hs_length) {
        ssize_t n = send(conn->fd, conn->hs_out + conn->hs_offset,
                         conn->hs_length - conn->hs_offset, MSG_NOSIGNAL);

        if (n < 0) {
            if (EINTR == errno) {
                continue;
            }
            return (EAGAIN == errno || EWOULDBLOCK == errno) ? HERD_SUCCESS : HERD_ERR_IN_ERRNO;
        }
        conn->hs_offset += (size_t) n;
    }
    if (OVERLAY_TCP_CONN_UP != conn->state || NULL == conn->peer) {
        return HERD_SUCCESS;
    }
    queue = &conn->peer->queue;
    while (NULL != queue->head) {
        struct iovec iov[OVERLAY_TCP_WRITE_IOV];
        struct msghdr message;
        int count = 0;
        ssize_t n;
        size_t written;

        for (overlay_tcp_msg_t *msg = queue->head; NULL != msg && count < OVERLAY_TCP_WRITE_IOV;
             msg = msg->next) {
            iov[count].iov_base = msg->bytes + msg->offset;
            iov[count].iov_len = msg->size - msg->offset;
            count++;
        }
        memset(&message, 0, sizeof(message));
        message.msg_iov = iov;
        message.msg_iovlen = (size_t) count;
        n = sendmsg(conn->fd, &message, MSG_NOSIGNAL);
        if (n < 0) {
            if (EINTR == errno) {
                continue;
            }
            return (EAGAIN == errno || EWOULDBLOCK == errno) ? HERD_SUCCESS : HERD_ERR_IN_ERRNO;
        }
        conn->hb_sent = true;
        written = (size_t) n;
        overlay->stats.bytes_sent += written;
        while (written > 0) {
            overlay_tcp_msg_t *msg = queue->head;
            size_t left = msg->size - msg->offset;

            if (written < left) {
                msg->offset += written;
                break;
            }
            written -= left;
            queue->head = msg->next;
            if (NULL == queue->head) {
                queue->tail = NULL;
            }
            queue->count--;
            queue->bytes -= msg->size;
            overlay->stats.bytes_queued -= msg->size;
            free(msg);
        }
    }
    return HERD_SUCCESS;
}

static bool conn_has_output(const overlay_tcp_conn_t *conn)
{
    return conn->hs_offset < conn->hs_length ||
           (OVERLAY_TCP_CONN_UP == conn->state && NULL != conn->peer &&
            NULL != conn->peer->queue.head);
}

int overlay_tcp_peer_send(orte_overlay_t *overlay, overlay_tcp_peer_t *peer,
                          const overlay_tcp_header_t *header, const struct iovec *iov, int iovcnt,
                          size_t length)
{
    overlay_tcp_conn_t *conn = peer->conn;
    overlay_tcp_msg_t *msg;
    size_t written = 0;

    /* the common case costs one sendmsg() and no copy: nothing queued ahead, socket has room */
    if (OVERLAY_TCP_PEER_UP == peer->state && NULL != conn && OVERLAY_TCP_CONN_UP == conn->state &&
        NULL == peer->queue.head && conn->hs_offset == conn->hs_length) {
        uint8_t head[OVERLAY_TCP_HEADER_BYTES];
        struct iovec all[ORTE_OVERLAY_MAX_IOV + 1];
        struct msghdr message;
        ssize_t n;

        overlay_tcp_header_encode(header, head);
        all[0].iov_base = head;
        all[0].iov_len = sizeof(head);
        for (int i = 0; i < iovcnt; i++) {
            all[i + 1] = iov[i];
        }
        memset(&message, 0, sizeof(message));
        message.msg_iov = all;
        message.msg_iovlen = (size_t) iovcnt + 1;
        do {
            n = sendmsg(conn->fd, &message, MSG_NOSIGNAL);
        } while (n < 0 && EINTR == errno);
        conn->hb_sent = conn->hb_sent || n > 0;
        overlay->stats.bytes_sent += n > 0 ? (uint64_t) n : 0;
        if (n >= 0 && (size_t) n == sizeof(head) + length) {
            return HERD_SUCCESS;
        }
        /* on a hard error the frame is queued all the same: the write handler meets the error
         * again and reports the loss from the loop, never from inside send() */
        written = n > 0 ? (size_t) n : 0;
    }
    msg = overlay_tcp_msg_new(header, true, iov, iovcnt, length);
    if (NULL == msg) {
        if (written > 0) {
            /* part of the frame is on the wire and the rest cannot follow: the stream is
             * broken, so end it and let the read handler report the loss */
            shutdown(conn->fd, SHUT_RDWR);
        }
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    msg->offset = written;
    overlay_tcp_queue_push(overlay, &peer->queue, msg);
    if (OVERLAY_TCP_PEER_UP == peer->state && NULL != conn) {
        conn_want_write(conn);
    }
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* setting up */

int overlay_tcp_conn_accept(orte_overlay_t *overlay, int fd, const char *address)
{
    overlay_tcp_conn_t *conn = NULL;
    int rc;

    rc = conn_new(overlay, fd, false, address, OVERLAY_TCP_RBUF_STRANGER, &conn);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    conn->state = OVERLAY_TCP_CONN_WAIT_HELLO;
    overlay->num_pending++;
    opal_output_verbose(10, overlay_tcp_output(), "overlay tcp: daemon %u accepted %s",
                        overlay->vpid, address);
    return HERD_SUCCESS;
}

int overlay_tcp_conn_adopt(orte_overlay_t *overlay, int fd, overlay_tcp_peer_t *peer)
{
    overlay_tcp_conn_t *conn = NULL;
    bool parent = (peer == &overlay->parent);
    int rc;

    rc = conn_new(overlay, fd, parent, "a socket shared at fork", OVERLAY_TCP_RBUF_INITIAL, &conn);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    opal_event_del(conn->timer); /* no handshake to wait for */
    conn->peer = peer;
    conn->state = OVERLAY_TCP_CONN_UP;
    peer->conn = conn;
    peer->state = OVERLAY_TCP_PEER_UP;
    overlay->stats.neighbours_up++;
    /* both ends inherited their settings from the process that made the pair */
    overlay_tcp_heartbeat_watch(conn, overlay->heartbeat_timeout_ms);
    if (NULL != peer->queue.head) {
        conn_want_write(conn);
    }
    opal_output_verbose(5, overlay_tcp_output(),
                        "overlay tcp: daemon %u: %s %u connected by a socket shared at fork",
                        overlay->vpid, parent ? "parent" : "child", peer->vpid);
    return HERD_SUCCESS;
}

int overlay_tcp_conn_connect(orte_overlay_t *overlay, const struct sockaddr *address,
                             socklen_t address_length)
{
    overlay_tcp_conn_t *conn = NULL;
    char text[INET6_ADDRSTRLEN + 16];
    int fd;
    int rc;

    overlay_tcp_address_format(address, text, sizeof(text));
    fd = socket(address->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return HERD_ERR_IN_ERRNO;
    }
    rc = conn_new(overlay, fd, true, text, OVERLAY_TCP_RBUF_INITIAL, &conn);
    if (HERD_SUCCESS != rc) {
        close(fd);
        return rc;
    }
    conn->state = OVERLAY_TCP_CONN_CONNECTING;
    conn->peer = &overlay->parent;
    overlay->parent.conn = conn;
    if (0 == connect(fd, address, address_length) || EINPROGRESS == errno || EINTR == errno) {
        /* completion (or failure) shows up as writability */
        conn_want_write(conn);
    } else {
        /* reported from the loop like every other failure, never from inside this call */
        struct timeval now = {0, 0};

        conn->connect_errno = errno;
        opal_event_add(conn->timer, &now);
    }
    opal_output_verbose(10, overlay_tcp_output(),
                        "overlay tcp: daemon %u connecting to its parent %u at %s", overlay->vpid,
                        overlay->parent.vpid, text);
    return HERD_SUCCESS;
}

/* The connect() finished: send HELLO, or report why it failed. */
static void conn_connected(overlay_tcp_conn_t *conn)
{
    orte_overlay_t *overlay = conn->overlay;
    overlay_tcp_hello_t hello;
    uint8_t payload[OVERLAY_TCP_MAX_HANDSHAKE_PAYLOAD];
    size_t length = 0;
    socklen_t size = sizeof(int);
    char reason[512];
    int err = 0;

    if (0 != getsockopt(conn->fd, SOL_SOCKET, SO_ERROR, &err, &size)) {
        err = errno;
    }
    if (0 != err) {
        snprintf(reason, sizeof(reason), "could not connect to the parent daemon %u at %s: %s",
                 overlay->parent.vpid, overlay->parent.uri, strerror(err));
        conn_fail(conn, HERD_ERR_UNREACH, reason);
        return;
    }
    memset(&hello, 0, sizeof(hello));
    if (HERD_SUCCESS != overlay_tcp_random(conn->nonce_local, sizeof(conn->nonce_local))) {
        snprintf(reason, sizeof(reason), "no random numbers for the handshake: %s",
                 strerror(errno));
        conn_fail(conn, HERD_ERROR, reason);
        return;
    }
    memcpy(hello.nonce, conn->nonce_local, sizeof(hello.nonce));
    hello.num_daemons = overlay->num_daemons;
    hello.radix = overlay->radix;
    hello.heartbeat_ms = overlay->heartbeat_timeout_ms;
    snprintf(hello.dvm_id, sizeof(hello.dvm_id), "%s", overlay->dvm_id);
    /* the response MAC covers this exact URI, even if listen() is called meanwhile */
    snprintf(hello.uri, sizeof(hello.uri), "%s", overlay->uri);
    snprintf(conn->hello_uri, sizeof(conn->hello_uri), "%s", overlay->uri);
    if (HERD_SUCCESS != overlay_tcp_hello_encode(&hello, payload, sizeof(payload), &length) ||
        HERD_SUCCESS != conn_send_handshake(conn, OVERLAY_TCP_MSG_HELLO, overlay->parent.vpid,
                                            payload, length)) {
        conn_fail(conn, HERD_ERROR, "could not build the HELLO message");
        return;
    }
    conn->state = OVERLAY_TCP_CONN_WAIT_CHALLENGE;
}

/* ------------------------------------------------------------------------------------------ */
/* handshake */

static conn_result_t conn_on_hello(overlay_tcp_conn_t *conn, const overlay_tcp_header_t *header,
                                   const uint8_t *payload)
{
    orte_overlay_t *overlay = conn->overlay;
    overlay_tcp_hello_t hello;
    overlay_tcp_challenge_t challenge;
    overlay_tcp_peer_t *peer;
    uint8_t out[OVERLAY_TCP_NONCE_BYTES + 4 + OVERLAY_TCP_MAC_BYTES];
    size_t length = 0;
    char why[256];
    char reason[768];

    if (HERD_SUCCESS !=
        overlay_tcp_hello_decode(payload, header->length, &hello, why, sizeof(why))) {
        snprintf(reason, sizeof(reason), "its HELLO is malformed: %s", why);
        conn_fail(conn, HERD_ERR_UNPACK_FAILURE, reason);
        return CONN_GONE;
    }
    conn->claimed_vpid = header->src;
    if (0 != strcmp(hello.dvm_id, overlay->dvm_id)) {
        snprintf(reason, sizeof(reason), "it belongs to DVM \"%s\", this daemon to DVM \"%s\"",
                 hello.dvm_id, overlay->dvm_id);
        conn_fail(conn, HERD_ERR_BAD_PARAM, reason);
        return CONN_GONE;
    }
    if (header->dst != overlay->vpid) {
        snprintf(reason, sizeof(reason), "it was looking for daemon %u, but this is daemon %u",
                 header->dst, overlay->vpid);
        conn_fail(conn, HERD_ERR_BAD_PARAM, reason);
        return CONN_GONE;
    }
    if (hello.num_daemons != overlay->num_daemons || hello.radix != overlay->radix) {
        snprintf(reason, sizeof(reason),
                 "it was told the DVM has %u daemons in a tree of radix %u, this daemon was told "
                 "%u daemons and radix %u",
                 hello.num_daemons, hello.radix, overlay->num_daemons, overlay->radix);
        conn_fail(conn, HERD_ERR_BAD_PARAM, reason);
        return CONN_GONE;
    }
    peer = overlay_tcp_accept_child(overlay, header->src);
    if (NULL == peer) {
        snprintf(reason, sizeof(reason),
                 "daemon %u is not a child of daemon %u (the children are %u daemon(s) from "
                 "vpid %u)",
                 header->src, overlay->vpid, overlay->num_children,
                 0 != overlay->num_children ? overlay->first_child : 0);
        conn_fail(conn, HERD_ERR_BAD_PARAM, reason);
        return CONN_GONE;
    }
    if (OVERLAY_TCP_PEER_UP == peer->state) {
        snprintf(reason, sizeof(reason), "daemon %u is already connected from %s", peer->vpid,
                 NULL != peer->conn ? peer->conn->address : "(unknown)");
        conn_fail(conn, HERD_ERR_EXISTS, reason);
        return CONN_GONE;
    }
    memcpy(conn->nonce_remote, hello.nonce, sizeof(conn->nonce_remote));
    snprintf(conn->hello_uri, sizeof(conn->hello_uri), "%s", hello.uri);
    conn->hb_peer_timeout_ms = hello.heartbeat_ms;
    if (HERD_SUCCESS != overlay_tcp_random(conn->nonce_local, sizeof(conn->nonce_local))) {
        snprintf(reason, sizeof(reason), "no random numbers for the handshake: %s",
                 strerror(errno));
        conn_fail(conn, HERD_ERROR, reason);
        return CONN_GONE;
    }
    memcpy(challenge.nonce, conn->nonce_local, sizeof(challenge.nonce));
    challenge.heartbeat_ms = overlay->heartbeat_timeout_ms;
    overlay_tcp_challenge_mac(overlay->key, conn->nonce_remote, conn->nonce_local, overlay->vpid,
                              header->src, overlay->num_daemons, overlay->radix, overlay->dvm_id,
                              challenge.heartbeat_ms, challenge.mac);
    if (HERD_SUCCESS != overlay_tcp_challenge_encode(&challenge, out, sizeof(out), &length) ||
        HERD_SUCCESS !=
            conn_send_handshake(conn, OVERLAY_TCP_MSG_CHALLENGE, header->src, out, length)) {
        conn_fail(conn, HERD_ERROR, "could not build the CHALLENGE message");
        return CONN_GONE;
    }
    conn->state = OVERLAY_TCP_CONN_WAIT_RESPONSE;
    return CONN_CONTINUE;
}

static conn_result_t conn_on_response(overlay_tcp_conn_t *conn, const overlay_tcp_header_t *header,
                                      const uint8_t *payload)
{
    orte_overlay_t *overlay = conn->overlay;
    overlay_tcp_response_t response;
    overlay_tcp_peer_t *peer;
    uint8_t expected[OVERLAY_TCP_MAC_BYTES];
    char why[256];
    char reason[512];

    if (HERD_SUCCESS !=
        overlay_tcp_response_decode(payload, header->length, &response, why, sizeof(why))) {
        snprintf(reason, sizeof(reason), "its RESPONSE is malformed: %s", why);
        conn_fail(conn, HERD_ERR_UNPACK_FAILURE, reason);
        return CONN_GONE;
    }
    if (header->src != conn->claimed_vpid || header->dst != overlay->vpid) {
        snprintf(reason, sizeof(reason),
                 "its RESPONSE comes from daemon %u to daemon %u, not from the daemon it claimed",
                 header->src, header->dst);
        conn_fail(conn, HERD_ERR_BAD_PARAM, reason);
        return CONN_GONE;
    }
    overlay_tcp_response_mac(overlay->key, conn->nonce_local, conn->nonce_remote,
                             conn->claimed_vpid, overlay->vpid, overlay->num_daemons,
                             overlay->radix, overlay->dvm_id, conn->hello_uri,
                             conn->hb_peer_timeout_ms, expected);
    if (!overlay_tcp_mac_equal(expected, response.mac)) {
        conn_fail(conn, HERD_ERR_AUTH,
                  "it does not know the DVM secret (its RESPONSE carries the wrong MAC)");
        return CONN_GONE;
    }
    peer = overlay_tcp_neighbour(overlay, conn->claimed_vpid);
    if (OVERLAY_TCP_PEER_UP == peer->state) {
        /* two connections claiming the same child raced through the handshake */
        snprintf(reason, sizeof(reason), "daemon %u is already connected from %s", peer->vpid,
                 NULL != peer->conn ? peer->conn->address : "(unknown)");
        conn_fail(conn, HERD_ERR_EXISTS, reason);
        return CONN_GONE;
    }
    opal_event_del(conn->timer);
    overlay->num_pending--;
    conn->peer = peer;
    conn->state = OVERLAY_TCP_CONN_UP;
    peer->conn = conn;
    peer->state = OVERLAY_TCP_PEER_UP;
    snprintf(peer->uri, sizeof(peer->uri), "%s", conn->hello_uri);
    overlay->stats.neighbours_up++;
    overlay_tcp_heartbeat_watch(conn, conn->hb_peer_timeout_ms);
    opal_output_verbose(5, overlay_tcp_output(),
                        "overlay tcp: daemon %u: child %u connected from %s", overlay->vpid,
                        peer->vpid, conn->address);
    if (NULL != peer->queue.head) {
        conn_want_write(conn);
    }
    return CONN_CONTINUE;
}

static conn_result_t conn_on_challenge(overlay_tcp_conn_t *conn, const overlay_tcp_header_t *header,
                                       const uint8_t *payload)
{
    orte_overlay_t *overlay = conn->overlay;
    overlay_tcp_challenge_t challenge;
    overlay_tcp_response_t response;
    uint8_t expected[OVERLAY_TCP_MAC_BYTES];
    uint8_t out[OVERLAY_TCP_MAC_BYTES];
    size_t length = 0;
    char why[256];
    char reason[512];

    if (HERD_SUCCESS !=
        overlay_tcp_challenge_decode(payload, header->length, &challenge, why, sizeof(why))) {
        snprintf(reason, sizeof(reason), "its CHALLENGE is malformed: %s", why);
        conn_refuse_parent(conn, HERD_ERR_UNPACK_FAILURE, reason);
        return CONN_GONE;
    }
    if (header->src != overlay->parent.vpid || header->dst != overlay->vpid) {
        snprintf(reason, sizeof(reason),
                 "it answers as daemon %u to daemon %u, but this is daemon %u looking for its "
                 "parent %u",
                 header->src, header->dst, overlay->vpid, overlay->parent.vpid);
        conn_refuse_parent(conn, HERD_ERR_AUTH, reason);
        return CONN_GONE;
    }
    overlay_tcp_challenge_mac(overlay->key, conn->nonce_local, challenge.nonce,
                              overlay->parent.vpid, overlay->vpid, overlay->num_daemons,
                              overlay->radix, overlay->dvm_id, challenge.heartbeat_ms, expected);
    if (!overlay_tcp_mac_equal(expected, challenge.mac)) {
        conn_refuse_parent(conn, HERD_ERR_AUTH,
                           "it could not prove it knows the DVM secret (wrong MAC in its "
                           "CHALLENGE): it belongs to another DVM or was given another secret");
        return CONN_GONE;
    }
    memcpy(conn->nonce_remote, challenge.nonce, sizeof(conn->nonce_remote));
    overlay_tcp_response_mac(overlay->key, conn->nonce_remote, conn->nonce_local, overlay->vpid,
                             overlay->parent.vpid, overlay->num_daemons, overlay->radix,
                             overlay->dvm_id, conn->hello_uri, overlay->heartbeat_timeout_ms,
                             response.mac);
    if (HERD_SUCCESS != overlay_tcp_response_encode(&response, out, sizeof(out), &length) ||
        HERD_SUCCESS != conn_send_handshake(conn, OVERLAY_TCP_MSG_RESPONSE, overlay->parent.vpid,
                                            out, length)) {
        conn_fail(conn, HERD_ERROR, "could not build the RESPONSE message");
        return CONN_GONE;
    }
    /* the parent checks the RESPONSE before anything after it, so data may follow at once */
    opal_event_del(conn->timer);
    conn->state = OVERLAY_TCP_CONN_UP;
    overlay->parent.state = OVERLAY_TCP_PEER_UP;
    overlay->stats.neighbours_up++;
    overlay_tcp_heartbeat_watch(conn, challenge.heartbeat_ms);
    opal_output_verbose(5, overlay_tcp_output(),
                        "overlay tcp: daemon %u: connected to parent %u at %s", overlay->vpid,
                        overlay->parent.vpid, overlay->parent.uri);
    return CONN_CONTINUE;
}

/* ------------------------------------------------------------------------------------------ */
/* established connections */

static conn_result_t conn_on_data(overlay_tcp_conn_t *conn, const overlay_tcp_header_t *header,
                                  const uint8_t *payload)
{
    orte_overlay_t *overlay = conn->overlay;
    orte_vpid_t from = conn->peer->vpid;
    overlay_tcp_data_t data;
    overlay_tcp_peer_t *next;
    char why[256];
    bool routed;

    if (HERD_SUCCESS !=
        overlay_tcp_data_decode(header, payload, overlay->num_daemons, &data, why, sizeof(why))) {
        conn_protocol_error(conn, why);
        return CONN_GONE;
    }
    /* along a tree a message climbs out of the sender's subtree and descends into the
     * receiver's: anything else is a forged source or a routing loop */
    if (conn->peer == &overlay->parent) {
        routed = orte_radix_in_subtree(overlay->vpid, data.dst, overlay->radix) &&
                 !orte_radix_in_subtree(overlay->vpid, data.src, overlay->radix);
    } else {
        routed = orte_radix_in_subtree(from, data.src, overlay->radix) &&
                 !orte_radix_in_subtree(from, data.dst, overlay->radix);
    }
    if (!routed) {
        snprintf(why, sizeof(why),
                 "a message from daemon %u to daemon %u cannot come through "
                 "daemon %u along the tree",
                 data.src, data.dst, from);
        conn_protocol_error(conn, why);
        return CONN_GONE;
    }
    if (data.dst == overlay->vpid) {
        overlay_tcp_deliver(overlay, data.src, data.tag, data.payload, data.length);
        return overlay->finalize_requested ? CONN_STOP : CONN_CONTINUE;
    }
    next = overlay_tcp_next_hop(overlay, data.dst);
    if (NULL == next || OVERLAY_TCP_PEER_LOST == next->state) {
        overlay->stats.messages_dropped++;
        opal_output_verbose(1, overlay_tcp_output(),
                            "overlay tcp: daemon %u dropped a message from daemon %u to daemon %u: "
                            "the next hop was lost",
                            overlay->vpid, data.src, data.dst);
        return CONN_CONTINUE;
    }
    struct iovec iov = {.iov_base = (void *) data.payload, .iov_len = data.length};
    if (HERD_SUCCESS ==
        overlay_tcp_peer_send(overlay, next, header, &iov, 0 != data.length ? 1 : 0, data.length)) {
        overlay->stats.messages_forwarded++;
    } else {
        overlay->stats.messages_dropped++;
    }
    return CONN_CONTINUE;
}

static conn_result_t conn_on_bye(overlay_tcp_conn_t *conn, const overlay_tcp_header_t *header,
                                 const uint8_t *payload)
{
    overlay_tcp_bye_t bye;
    char why[256];
    char reason[256];

    if (HERD_SUCCESS != overlay_tcp_bye_decode(payload, header->length, &bye, why, sizeof(why))) {
        conn_protocol_error(conn, why);
        return CONN_GONE;
    }
    /* nothing follows a BYE: close now rather than wait for the FIN */
    snprintf(reason, sizeof(reason), "daemon %u (%s) finalized and said goodbye", conn->peer->vpid,
             conn->address);
    conn_fail(conn, HERD_SUCCESS, reason);
    return CONN_GONE;
}

/* Which frame types each state accepts; checked on the header, before any payload is read. */
static bool conn_expects(const overlay_tcp_conn_t *conn, unsigned type)
{
    switch (conn->state) {
    case OVERLAY_TCP_CONN_WAIT_HELLO:
        return OVERLAY_TCP_MSG_HELLO == type;
    case OVERLAY_TCP_CONN_WAIT_CHALLENGE:
        return OVERLAY_TCP_MSG_CHALLENGE == type;
    case OVERLAY_TCP_CONN_WAIT_RESPONSE:
        return OVERLAY_TCP_MSG_RESPONSE == type;
    case OVERLAY_TCP_CONN_UP:
        return OVERLAY_TCP_MSG_DATA == type || OVERLAY_TCP_MSG_BYE == type ||
               OVERLAY_TCP_MSG_HEARTBEAT == type;
    default:
        return false;
    }
}

/* What conn_expects() allows, for messages. */
static const char *conn_expected_names(const overlay_tcp_conn_t *conn)
{
    switch (conn->state) {
    case OVERLAY_TCP_CONN_WAIT_HELLO:
        return "HELLO";
    case OVERLAY_TCP_CONN_WAIT_CHALLENGE:
        return "CHALLENGE";
    case OVERLAY_TCP_CONN_WAIT_RESPONSE:
        return "RESPONSE";
    case OVERLAY_TCP_CONN_UP:
        return "DATA, HEARTBEAT or BYE";
    default:
        return "nothing";
    }
}

/* A frame or the stream is bad: the right report for the connection's stage. */
static void conn_bad_input(overlay_tcp_conn_t *conn, int status, const char *why)
{
    char reason[512];

    if (OVERLAY_TCP_CONN_UP == conn->state) {
        conn_protocol_error(conn, why);
    } else if (conn->outgoing) {
        conn_refuse_parent(conn, status, why);
    } else {
        snprintf(reason, sizeof(reason), "it sent something other than the overlay handshake: %s",
                 why);
        conn_fail(conn, status, reason);
    }
}

static conn_result_t conn_handle_frame(overlay_tcp_conn_t *conn, const overlay_tcp_header_t *header,
                                       const uint8_t *payload)
{
    switch (conn->state) {
    case OVERLAY_TCP_CONN_WAIT_HELLO:
        return conn_on_hello(conn, header, payload);
    case OVERLAY_TCP_CONN_WAIT_CHALLENGE:
        return conn_on_challenge(conn, header, payload);
    case OVERLAY_TCP_CONN_WAIT_RESPONSE:
        return conn_on_response(conn, header, payload);
    default:
        break;
    }
    if (OVERLAY_TCP_MSG_HEARTBEAT == header->type) {
        char why[256];

        if (HERD_SUCCESS != overlay_tcp_heartbeat_recv(conn, header, payload, why, sizeof(why))) {
            conn_protocol_error(conn, why);
            return CONN_GONE;
        }
        return CONN_CONTINUE;
    }
    return OVERLAY_TCP_MSG_DATA == header->type ? conn_on_data(conn, header, payload)
                                                : conn_on_bye(conn, header, payload);
}

/* The start of a header is in, not all of it: refuse it now if no ending of it could be a frame
 * this connection takes (a stranger's garbage is refused at its first wrong byte). */
static bool conn_check_start(overlay_tcp_conn_t *conn, const uint8_t *bytes, size_t size)
{
    char why[256];
    int rc;

    rc =
        overlay_tcp_header_check_start(bytes, size, OVERLAY_TCP_MAX_MESSAGE_SIZE, why, sizeof(why));
    if (HERD_SUCCESS != rc) {
        conn_bad_input(conn, HERD_ERR_VERSION_MISMATCH == rc ? rc : HERD_ERR_UNPACK_FAILURE, why);
        return false;
    }
    if (size > 5 && !conn_expects(conn, bytes[5])) {
        snprintf(why, sizeof(why), "a %s frame arrived where only %s may come",
                 overlay_tcp_msg_type_name(bytes[5]), conn_expected_names(conn));
        conn_bad_input(conn, HERD_ERR_UNPACK_FAILURE, why);
        return false;
    }
    return true;
}

/* Handle every whole frame in the receive buffer; keep the partial one at its start. */
static conn_result_t conn_process(overlay_tcp_conn_t *conn)
{
    orte_overlay_t *overlay = conn->overlay;
    conn_result_t result = CONN_CONTINUE;
    size_t pos = 0;

    while (conn->rlen - pos >= OVERLAY_TCP_HEADER_BYTES) {
        overlay_tcp_header_t header;
        char why[256];
        size_t total;
        int rc;

        /* decoded against the protocol's own limit so that an over-size DATA frame gets the
         * message naming the variable */
        rc = overlay_tcp_header_decode(conn->rbuf + pos, conn->rlen - pos,
                                       OVERLAY_TCP_MAX_MESSAGE_SIZE, &header, why, sizeof(why));
        if (HERD_SUCCESS != rc) {
            conn_bad_input(conn, HERD_ERR_VERSION_MISMATCH == rc ? rc : HERD_ERR_UNPACK_FAILURE,
                           why);
            return CONN_GONE;
        }
        if (!conn_expects(conn, header.type)) {
            snprintf(why, sizeof(why), "a %s frame arrived where only %s may come",
                     overlay_tcp_msg_type_name(header.type), conn_expected_names(conn));
            conn_bad_input(conn, HERD_ERR_UNPACK_FAILURE, why);
            return CONN_GONE;
        }
        if (OVERLAY_TCP_MSG_DATA == header.type && header.length > overlay->max_message_size) {
            char size_text[32];
            char max_text[32];
            char reason[512];

            snprintf(size_text, sizeof(size_text), "%u", header.length);
            snprintf(max_text, sizeof(max_text), "%zu", overlay->max_message_size);
            overlay->stats.protocol_errors++;
            opal_show_help(OVERLAY_TCP_HELP_FILE, "frame-too-large", true, overlay->vpid,
                           conn->peer->vpid, conn->address, size_text, max_text, size_text);
            snprintf(reason, sizeof(reason),
                     "daemon %u (%s) sent a message of %s bytes, over overlay_tcp_max_message_size "
                     "(%s) on daemon %u",
                     conn->peer->vpid, conn->address, size_text, max_text, overlay->vpid);
            conn_fail(conn, HERD_ERR_UNPACK_FAILURE, reason);
            return CONN_GONE;
        }
        total = OVERLAY_TCP_HEADER_BYTES + header.length;
        if (conn->rlen - pos < total) {
            if (total > conn->rcap) {
                uint8_t *bigger;

                memmove(conn->rbuf, conn->rbuf + pos, conn->rlen - pos);
                conn->rlen -= pos;
                pos = 0;
                bigger = realloc(conn->rbuf, total);
                if (NULL == bigger) {
                    char reason[256];

                    snprintf(reason, sizeof(reason),
                             "out of memory for a message of %zu bytes from daemon %u", total,
                             conn->peer->vpid);
                    conn_fail(conn, HERD_ERR_OUT_OF_RESOURCE, reason);
                    return CONN_GONE;
                }
                conn->rbuf = bigger;
                conn->rcap = total;
            }
            break;
        }
        result = conn_handle_frame(conn, &header, conn->rbuf + pos + OVERLAY_TCP_HEADER_BYTES);
        if (CONN_GONE == result) {
            return CONN_GONE;
        }
        pos += total;
        if (CONN_STOP == result) {
            break;
        }
    }
    if (CONN_CONTINUE == result && conn->rlen - pos > 0 &&
        conn->rlen - pos < OVERLAY_TCP_HEADER_BYTES &&
        !conn_check_start(conn, conn->rbuf + pos, conn->rlen - pos)) {
        return CONN_GONE;
    }
    if (pos > 0) {
        memmove(conn->rbuf, conn->rbuf + pos, conn->rlen - pos);
        conn->rlen -= pos;
    }
    if (0 == conn->rlen && conn->rcap > OVERLAY_TCP_RBUF_SHRINK) {
        uint8_t *smaller = realloc(conn->rbuf, OVERLAY_TCP_RBUF_INITIAL);

        if (NULL != smaller) {
            conn->rbuf = smaller;
            conn->rcap = OVERLAY_TCP_RBUF_INITIAL;
        }
    }
    return result;
}

/* The peer closed its end (recv returned 0). */
static void conn_closed(overlay_tcp_conn_t *conn)
{
    orte_overlay_t *overlay = conn->overlay;
    char reason[512];

    if (OVERLAY_TCP_CONN_UP == conn->state) {
        snprintf(reason, sizeof(reason),
                 "the connection to daemon %u (%s) closed unexpectedly: the daemon or its node "
                 "may have died",
                 conn->peer->vpid, conn->address);
        conn_fail(conn, HERD_ERR_UNREACH, reason);
    } else if (conn->outgoing) {
        snprintf(reason, sizeof(reason),
                 "the parent daemon %u at %s closed the connection during the handshake: it "
                 "refused this daemon (its log says why: DVM id, vpid, tree shape or secret)",
                 overlay->parent.vpid, overlay->parent.uri);
        conn_fail(conn, HERD_ERR_UNREACH, reason);
    } else {
        conn_fail(conn, HERD_ERR_UNREACH,
                  "it closed the connection before finishing the handshake");
    }
}

static void conn_read(overlay_tcp_conn_t *conn)
{
    if (OVERLAY_TCP_CONN_UP == conn->state && conn->rcap < OVERLAY_TCP_RBUF_INITIAL) {
        /* authenticated now: the stranger's small buffer would cost a recv() per 1 KiB */
        uint8_t *bigger = realloc(conn->rbuf, OVERLAY_TCP_RBUF_INITIAL);

        if (NULL != bigger) {
            conn->rbuf = bigger;
            conn->rcap = OVERLAY_TCP_RBUF_INITIAL;
        }
    }
    for (int round = 0; round < OVERLAY_TCP_READ_ROUNDS; round++) {
        size_t room = conn->rcap - conn->rlen;
        ssize_t n = recv(conn->fd, conn->rbuf + conn->rlen, room, 0);

        if (n < 0) {
            char reason[512];

            if (EINTR == errno) {
                continue;
            }
            if (EAGAIN == errno || EWOULDBLOCK == errno) {
                return;
            }
            if (NULL != conn->peer) {
                snprintf(reason, sizeof(reason), "the connection to daemon %u (%s) failed: %s",
                         conn->peer->vpid, conn->address, strerror(errno));
            } else {
                snprintf(reason, sizeof(reason), "the connection failed: %s", strerror(errno));
            }
            conn_fail(conn, HERD_ERR_UNREACH, reason);
            return;
        }
        if (0 == n) {
            conn_closed(conn);
            return;
        }
        conn->hb_heard = true; /* any byte is a sign of life */
        conn->rlen += (size_t) n;
        conn->overlay->stats.bytes_received += (uint64_t) n;
        if (CONN_CONTINUE != conn_process(conn)) {
            return;
        }
        /* a short read means the socket is drained: spare the recv() that says EAGAIN */
        if ((size_t) n < room) {
            return;
        }
    }
}

static void conn_read_cb(int fd, short what, void *arg)
{
    overlay_tcp_conn_t *conn = arg;
    orte_overlay_t *overlay = conn->overlay;

    overlay_tcp_enter(overlay);
    if (OVERLAY_TCP_CONN_CONNECTING == conn->state) {
        /* a failed connect() wakes readers too */
        conn_connected(conn);
    } else {
        conn_read(conn);
    }
    overlay_tcp_leave(overlay);
}

static void conn_write_cb(int fd, short what, void *arg)
{
    overlay_tcp_conn_t *conn = arg;
    orte_overlay_t *overlay = conn->overlay;

    overlay_tcp_enter(overlay);
    if (OVERLAY_TCP_CONN_CONNECTING == conn->state) {
        conn_connected(conn);
    } else if (HERD_SUCCESS != conn_flush(conn)) {
        char reason[512];

        if (NULL != conn->peer && OVERLAY_TCP_CONN_UP == conn->state) {
            snprintf(reason, sizeof(reason), "writing to daemon %u (%s) failed: %s",
                     conn->peer->vpid, conn->address, strerror(errno));
        } else {
            snprintf(reason, sizeof(reason), "writing during the handshake with %s failed: %s",
                     conn->address, strerror(errno));
        }
        conn_fail(conn, HERD_ERR_UNREACH, reason);
    } else if (!conn_has_output(conn)) {
        conn_stop_write(conn);
    }
    overlay_tcp_leave(overlay);
}

static void conn_timer_cb(int fd, short what, void *arg)
{
    overlay_tcp_conn_t *conn = arg;
    orte_overlay_t *overlay = conn->overlay;
    char reason[512];

    overlay_tcp_enter(overlay);
    if (0 != conn->connect_errno) {
        snprintf(reason, sizeof(reason), "could not connect to the parent daemon %u at %s: %s",
                 overlay->parent.vpid, overlay->parent.uri, strerror(conn->connect_errno));
        conn_fail(conn, HERD_ERR_UNREACH, reason);
    } else if (conn->outgoing) {
        char span[32];
        bool heartbeat = overlay->connect_timeout.tv_sec != overlay->handshake_timeout.tv_sec ||
                         0 != overlay->connect_timeout.tv_usec;

        overlay_tcp_duration_format(heartbeat ? overlay->heartbeat_timeout_ms
                                              : (uint64_t) overlay->handshake_timeout.tv_sec * 1000,
                                    span, sizeof(span));
        snprintf(reason, sizeof(reason),
                 "the parent daemon %u at %s did not complete the handshake within %s (%s)",
                 overlay->parent.vpid, overlay->parent.uri, span,
                 heartbeat ? "dvm_heartbeat_timeout" : "overlay_base_handshake_timeout");
        conn_fail(conn, HERD_ERR_TIMEOUT, reason);
    } else {
        snprintf(reason, sizeof(reason),
                 "it did not complete the handshake within %ld s (overlay_base_handshake_timeout)",
                 (long) overlay->handshake_timeout.tv_sec);
        conn_fail(conn, HERD_ERR_TIMEOUT, reason);
    }
    overlay_tcp_leave(overlay);
}

void overlay_tcp_conn_close(overlay_tcp_conn_t *conn, bool bye)
{
    if (bye && NULL != conn->peer && HERD_SUCCESS == conn_flush(conn) && !conn_has_output(conn)) {
        overlay_tcp_header_t header = {
            .version = OVERLAY_TCP_PROTOCOL_VERSION,
            .type = OVERLAY_TCP_MSG_BYE,
            .src = conn->overlay->vpid,
            .dst = conn->peer->vpid,
        };
        overlay_tcp_bye_t goodbye = {.reason = OVERLAY_TCP_BYE_FINALIZE};
        uint8_t frame[OVERLAY_TCP_HEADER_BYTES + 4];
        size_t length = 0;

        if (HERD_SUCCESS == overlay_tcp_bye_encode(&goodbye, frame + OVERLAY_TCP_HEADER_BYTES,
                                                   sizeof(frame) - OVERLAY_TCP_HEADER_BYTES,
                                                   &length)) {
            header.length = (uint32_t) length;
            overlay_tcp_header_encode(&header, frame);
            /* best effort: a full socket means the neighbour sees an abrupt close instead */
            (void) send(conn->fd, frame, OVERLAY_TCP_HEADER_BYTES + length,
                        MSG_NOSIGNAL | MSG_DONTWAIT);
        }
    }
    /* unread input would turn our FIN into a RST, which can discard the BYE at the far end */
    shutdown(conn->fd, SHUT_WR);
    for (int i = 0; i < OVERLAY_TCP_READ_ROUNDS; i++) {
        if (recv(conn->fd, conn->rbuf, conn->rcap, MSG_DONTWAIT) <= 0) {
            break;
        }
    }
    if (NULL != conn->peer) {
        if (OVERLAY_TCP_PEER_UP == conn->peer->state) {
            conn->overlay->stats.neighbours_up--;
        }
        conn->peer->state = OVERLAY_TCP_PEER_LOST;
    }
    conn_destroy(conn);
}
