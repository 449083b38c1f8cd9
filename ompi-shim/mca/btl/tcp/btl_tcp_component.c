/* SPDX-License-Identifier: BSD-3-Clause */
/* btl tcp: the module. One listener per process, bound when the transports start: at its
 * RM-assigned endpoint when the job has one (herd_peer_endpoint), else (no assignment, or the
 * assigned port taken) at a port of the kernel's choice published with herd_put. A process
 * opens its own connection to a peer on its first message to it and only sends on it; it
 * receives on the connections peers opened to it. Two processes sending to each other at once
 * thus open two connections and nothing has to be decided between them (docs/btl.md). */
#include "herd_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "ompi-shim/mca/btl/btl.h"
#include "ompi-shim/mca/btl/tcp/btl_tcp.h"
#include "opal/mca/base/mca_var.h"
#include "opal/util/jobdb.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"

#define BTL_TCP_DEFAULT_PRIORITY 10
#define BTL_TCP_MODEX_KEY        "btl.tcp.addr"
#define BTL_TCP_READ_BUFFER      65536u
#define BTL_TCP_RETRY_MS         5

/* Bytes waiting to be written to a connection: a frame, or the rest of one. */
typedef struct btl_tcp_frag {
    struct btl_tcp_frag *next;
    size_t len;
    size_t sent;
    bool is_message; /* counts in pending(); the hello does not */
    uint8_t bytes[];
} btl_tcp_frag_t;

enum btl_tcp_out_state { OUT_NONE, OUT_CONNECTING, OUT_AWAIT_ACK, OUT_READY, OUT_FAILED };
enum btl_tcp_addr_path { PATH_RM, PATH_MODEX };

/* What this process keeps for a peer: its outgoing connection. */
typedef struct btl_tcp_endpoint {
    struct btl_tcp_endpoint *next;
    ompi_proc_t *proc;
    int fd;
    enum btl_tcp_out_state state;
    enum btl_tcp_addr_path path;
    struct sockaddr_storage addr;
    socklen_t addr_len;
    struct timespec deadline;
    struct timespec retry_at;
    uint8_t ack[BTL_TCP_FRAME_MAX];
    size_t ack_got;
    btl_tcp_frag_t *queue_head;
    btl_tcp_frag_t *queue_tail;
} btl_tcp_endpoint_t;

/* A connection a peer opened to us: its hello, then its messages. */
typedef struct btl_tcp_conn {
    int fd;
    bool hello_done;
    uint32_t src;
    uint8_t *buf; /* BTL_TCP_READ_BUFFER bytes: frames are parsed from it */
    size_t start;
    size_t end;
    /* a message longer than buf is read straight into its own memory */
    uint8_t *big;
    size_t big_len;
    size_t big_got;
    int big_tag;
} btl_tcp_conn_t;

static struct {
    int priority;        /* btl_tcp_priority */
    int connect_timeout; /* btl_tcp_connect_timeout, seconds */
    size_t max_message;  /* btl_tcp_max_message */
    bool use_rm;         /* btl_tcp_use_rm_endpoint */
    const ompi_btl_rte_t *rte;
    ompi_btl_deliver_fn_t deliver;
    int listen_fd;
    char listen_text[128];
    btl_tcp_endpoint_t *endpoints;
    size_t num_endpoints;
    size_t num_queued; /* messages in queues */
    btl_tcp_conn_t **conns;
    size_t num_conns;
    size_t cap_conns;
    struct pollfd *pfds;
    size_t cap_pfds;
} btl_tcp = {.listen_fd = -1};

static const char *addr_text(const struct sockaddr_storage *addr, socklen_t len, char *buf,
                             size_t size)
{
    if (HERD_SUCCESS != opal_jobdb_endpoint_string(addr, len, buf, size)) {
        snprintf(buf, size, "(an address)");
    }
    return buf;
}

static void deadline_in(struct timespec *t, long ms)
{
    clock_gettime(CLOCK_MONOTONIC, t);
    t->tv_sec += ms / 1000;
    t->tv_nsec += (ms % 1000) * 1000000;
    if (t->tv_nsec >= 1000000000) {
        t->tv_sec++;
        t->tv_nsec -= 1000000000;
    }
}

static bool passed(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

/* ------------------------------------------------------------------------------------------ */
/* the listener and where peers find it */

/* An address of this host peers on other nodes can name, for the modex: the first IPv4
 * interface that is up and not loopback, else loopback (a job on one host). */
static void local_address(struct sockaddr_storage *addr, socklen_t *len)
{
    struct ifaddrs *ifs = NULL;
    struct sockaddr_in *sin = (struct sockaddr_in *) addr;

    memset(addr, 0, sizeof(*addr));
    sin->sin_family = AF_INET;
    sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    *len = sizeof(*sin);
    if (0 != getifaddrs(&ifs)) {
        return;
    }
    for (struct ifaddrs *i = ifs; NULL != i; i = i->ifa_next) {
        if (NULL != i->ifa_addr && AF_INET == i->ifa_addr->sa_family && (i->ifa_flags & IFF_UP) &&
            !(i->ifa_flags & IFF_LOOPBACK)) {
            sin->sin_addr = ((struct sockaddr_in *) i->ifa_addr)->sin_addr;
            break;
        }
    }
    freeifaddrs(ifs);
}

static int listen_at(const struct sockaddr_storage *addr, socklen_t len, int *err)
{
    int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;

    if (fd < 0) {
        *err = errno;
        return -1;
    }
    /* a port in TIME_WAIT from a previous job of this session slot is ours to reuse */
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (0 != bind(fd, (const struct sockaddr *) addr, len) || 0 != listen(fd, SOMAXCONN)) {
        *err = errno;
        close(fd);
        return -1;
    }
    return fd;
}

/* Bind the listener: at the RM-assigned endpoint, else anywhere and published by the modex. */
static int start_listener(void)
{
    const ompi_btl_rte_t *rte = btl_tcp.rte;
    struct sockaddr_storage addr;
    size_t len = sizeof(addr);
    int err = 0;
    const char *why = NULL;
    char text[128];

    int rc =
        btl_tcp.use_rm ? rte->peer_endpoint(rte->my_rank, "tcp", &addr, &len) : HERD_ERR_NOT_FOUND;
    if (HERD_SUCCESS == rc) {
        btl_tcp.listen_fd = listen_at(&addr, (socklen_t) len, &err);
        if (btl_tcp.listen_fd >= 0) {
            addr_text(&addr, (socklen_t) len, btl_tcp.listen_text, sizeof(btl_tcp.listen_text));
            opal_output_verbose(5, ompi_btl_base_framework.output,
                                "rank %u: tcp listens at its RM-assigned endpoint %s", rte->my_rank,
                                btl_tcp.listen_text);
            return HERD_SUCCESS;
        }
        if (EADDRINUSE != err) {
            opal_show_help("help-btl-tcp.txt", "listen-failed", true, rte->my_rank,
                           addr_text(&addr, (socklen_t) len, text, sizeof(text)), strerror(err));
            return HERD_ERR_SILENT;
        }
        why = "its RM-assigned port is taken by another program";
        ((struct sockaddr_in *) &addr)->sin_port = 0; /* same family layout for the port */
    } else {
        why = btl_tcp.use_rm ? "the job has no RM-assigned tcp endpoint"
                             : "btl_tcp_use_rm_endpoint is false";
        socklen_t slen;
        local_address(&addr, &slen);
        len = slen;
    }
    /* the modex: the kernel's port at this address, published for peers' herd_get */
    struct sockaddr_storage any = addr;
    if (AF_INET == any.ss_family) {
        ((struct sockaddr_in *) &any)->sin_addr.s_addr = htonl(INADDR_ANY);
        ((struct sockaddr_in *) &any)->sin_port = 0;
    } else {
        ((struct sockaddr_in6 *) &any)->sin6_port = 0;
    }
    btl_tcp.listen_fd = listen_at(&any, (socklen_t) len, &err);
    if (btl_tcp.listen_fd < 0) {
        opal_show_help("help-btl-tcp.txt", "listen-failed", true, rte->my_rank,
                       addr_text(&any, (socklen_t) len, text, sizeof(text)), strerror(err));
        return HERD_ERR_SILENT;
    }
    struct sockaddr_storage bound;
    socklen_t blen = sizeof(bound);
    getsockname(btl_tcp.listen_fd, (struct sockaddr *) &bound, &blen);
    if (AF_INET == addr.ss_family) {
        ((struct sockaddr_in *) &addr)->sin_port = ((struct sockaddr_in *) &bound)->sin_port;
    } else {
        ((struct sockaddr_in6 *) &addr)->sin6_port = ((struct sockaddr_in6 *) &bound)->sin6_port;
    }
    rc = rte->put(BTL_TCP_MODEX_KEY, &addr, len);
    if (HERD_SUCCESS == rc) {
        rc = rte->commit();
    }
    if (HERD_SUCCESS != rc) {
        close(btl_tcp.listen_fd);
        btl_tcp.listen_fd = -1;
        return rc;
    }
    addr_text(&addr, (socklen_t) len, btl_tcp.listen_text, sizeof(btl_tcp.listen_text));
    opal_output_verbose(5, ompi_btl_base_framework.output,
                        "rank %u: tcp listens at %s, published by the modex (%s)", rte->my_rank,
                        btl_tcp.listen_text, why);
    return HERD_SUCCESS;
}

/* Where peer listens: its RM-assigned endpoint, else what it published (the one place that
 * knows both; docs/btl.md). Blocks in herd_get until the peer published, up to the wireup's
 * get timeout. */
static int btl_tcp_peer_address(const ompi_proc_t *proc, enum btl_tcp_addr_path path,
                                struct sockaddr_storage *addr, socklen_t *len,
                                enum btl_tcp_addr_path *used)
{
    const ompi_btl_rte_t *rte = btl_tcp.rte;
    size_t room = sizeof(*addr);

    if (PATH_RM == path && btl_tcp.use_rm &&
        HERD_SUCCESS == rte->peer_endpoint(proc->rank, "tcp", addr, &room)) {
        *len = (socklen_t) room;
        *used = PATH_RM;
        return HERD_SUCCESS;
    }
    void *value = NULL;
    size_t vlen = 0;
    int rc = rte->get(proc->rank, BTL_TCP_MODEX_KEY, &value, &vlen);
    if (HERD_SUCCESS != rc) {
        opal_show_help("help-btl-tcp.txt", "no-address", true, rte->my_rank, proc->rank,
                       rte->last_error());
        return HERD_ERR_UNREACH;
    }
    if (vlen < sizeof(struct sockaddr_in) || vlen > sizeof(*addr)) {
        free(value);
        return HERD_ERR_UNPACK_FAILURE;
    }
    memcpy(addr, value, vlen);
    free(value);
    *len = (socklen_t) vlen;
    *used = PATH_MODEX;
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* outgoing connections */

static void drop_queue(btl_tcp_endpoint_t *ep)
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
    drop_queue(ep);
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
        deadline_in(&ep->retry_at, BTL_TCP_RETRY_MS);
        return HERD_SUCCESS;
    }
    int err = errno;
    close(ep->fd);
    ep->fd = -1;
    errno = err;
    return HERD_ERR_IN_ERRNO;
}

static btl_tcp_endpoint_t *endpoint_of(ompi_proc_t *proc)
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
                        ep->proc->rank, addr_text(&ep->addr, ep->addr_len, text, sizeof(text)),
                        PATH_RM == ep->path ? "RM-assigned endpoint" : "modex");
    deadline_in(&ep->deadline, 1000L * btl_tcp.connect_timeout);
    return start_connect(ep);
}

static int btl_tcp_add_peer(ompi_proc_t *proc)
{
    btl_tcp_endpoint_t *ep = endpoint_of(proc);

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

static int btl_tcp_send(ompi_proc_t *proc, int tag, const void *buf, size_t len)
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
static int progress_endpoint(btl_tcp_endpoint_t *ep, short revents)
{
    char text[128];

    switch (ep->state) {
    case OUT_CONNECTING:
        if (ep->fd < 0) {
            if (passed(&ep->deadline)) {
                opal_show_help("help-btl-tcp.txt", "connect-failed", true, btl_tcp.rte->my_rank,
                               ep->proc->rank,
                               addr_text(&ep->addr, ep->addr_len, text, sizeof(text)),
                               "connection refused", btl_tcp.connect_timeout, ep->proc->rank);
                fail_endpoint(ep, "connection refused");
            } else if (passed(&ep->retry_at) && HERD_SUCCESS != start_connect(ep)) {
                fail_endpoint(ep, strerror(errno));
            }
            return 0;
        }
        if (0 == revents) {
            if (passed(&ep->deadline)) {
                opal_show_help("help-btl-tcp.txt", "connect-failed", true, btl_tcp.rte->my_rank,
                               ep->proc->rank,
                               addr_text(&ep->addr, ep->addr_len, text, sizeof(text)), "no answer",
                               btl_tcp.connect_timeout, ep->proc->rank);
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
            deadline_in(&ep->retry_at, BTL_TCP_RETRY_MS);
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
        if (passed(&ep->deadline)) {
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

/* ------------------------------------------------------------------------------------------ */
/* incoming connections */

static void close_conn(size_t index)
{
    btl_tcp_conn_t *c = btl_tcp.conns[index];

    close(c->fd);
    free(c->buf);
    free(c->big);
    free(c);
    btl_tcp.conns[index] = btl_tcp.conns[--btl_tcp.num_conns];
}

static int accept_conns(void)
{
    int events = 0;

    for (;;) {
        int fd = accept4(btl_tcp.listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            return events;
        }
        if (btl_tcp.num_conns == btl_tcp.cap_conns) {
            size_t cap = btl_tcp.cap_conns ? 2 * btl_tcp.cap_conns : 8;
            btl_tcp_conn_t **grown = realloc(btl_tcp.conns, cap * sizeof(*grown));
            if (NULL == grown) {
                close(fd);
                return events;
            }
            btl_tcp.conns = grown;
            btl_tcp.cap_conns = cap;
        }
        btl_tcp_conn_t *c = calloc(1, sizeof(*c));
        uint8_t *buf = malloc(BTL_TCP_READ_BUFFER);
        if (NULL == c || NULL == buf) {
            free(c);
            free(buf);
            close(fd);
            return events;
        }
        c->fd = fd;
        c->buf = buf;
        btl_tcp.conns[btl_tcp.num_conns++] = c;
        events++;
    }
}

/* The hello of a new connection: add its sender (the first we hear of it, maybe) and answer. */
static int take_hello(btl_tcp_conn_t *c, const btl_tcp_header_t *h, const uint8_t *payload)
{
    uint8_t frame[BTL_TCP_FRAME_MAX];
    ompi_proc_t *proc;
    uint32_t src;
    int rc = BTL_TCP_HELLO == h->type
                 ? btl_tcp_decode_hello(payload, (size_t) h->length, btl_tcp.rte->job_size,
                                        btl_tcp.rte->jobid, &src)
                 : HERD_ERR_UNPACK_FAILURE;

    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (HERD_SUCCESS != (rc = ompi_proc_lookup(src, &proc)) || NULL == endpoint_of(proc)) {
        return HERD_SUCCESS != rc ? rc : HERD_ERR_OUT_OF_RESOURCE;
    }
    size_t n =
        btl_tcp_encode_hello(btl_tcp.rte->my_rank, btl_tcp.rte->jobid, frame + BTL_TCP_HEADER_SIZE);
    btl_tcp_encode_header(BTL_TCP_ACK, 0, n, frame);
    if (send(c->fd, frame, BTL_TCP_HEADER_SIZE + n, MSG_NOSIGNAL | MSG_DONTWAIT) !=
        (ssize_t) (BTL_TCP_HEADER_SIZE + n)) {
        return HERD_ERR_UNREACH;
    }
    c->src = src;
    c->hello_done = true;
    opal_output_verbose(10, ompi_btl_base_framework.output, "rank %u: tcp: rank %u connected to us",
                        btl_tcp.rte->my_rank, src);
    return HERD_SUCCESS;
}

/* Parse the frames in c->buf; a message too long for it continues in c->big. */
static int parse_frames(btl_tcp_conn_t *c, int *events)
{
    while (NULL == c->big) {
        btl_tcp_header_t h;
        size_t avail = c->end - c->start;
        int rc = btl_tcp_decode_header(c->buf + c->start, avail, btl_tcp.max_message, &h);
        if (HERD_ERR_UNPACK_READ_PAST_END == rc) {
            break;
        }
        if (HERD_SUCCESS != rc) {
            return rc;
        }
        if (!c->hello_done && BTL_TCP_HELLO != h.type) {
            return HERD_ERR_UNPACK_FAILURE;
        }
        if (c->hello_done && BTL_TCP_MSG != h.type) {
            return HERD_ERR_UNPACK_FAILURE;
        }
        size_t frame = BTL_TCP_HEADER_SIZE + (size_t) h.length;
        if (frame > BTL_TCP_READ_BUFFER) {
            /* a long message: its own memory, filled by the reads that follow */
            c->big = malloc(h.length);
            if (NULL == c->big) {
                return HERD_ERR_OUT_OF_RESOURCE;
            }
            c->big_len = (size_t) h.length;
            c->big_tag = h.tag;
            c->big_got = avail - BTL_TCP_HEADER_SIZE;
            memcpy(c->big, c->buf + c->start + BTL_TCP_HEADER_SIZE, c->big_got);
            c->start = c->end = 0;
            break;
        }
        if (avail < frame) {
            break;
        }
        const uint8_t *payload = c->buf + c->start + BTL_TCP_HEADER_SIZE;
        if (!c->hello_done) {
            if (HERD_SUCCESS != (rc = take_hello(c, &h, payload))) {
                return rc;
            }
        } else {
            btl_tcp.deliver(c->src, h.tag, payload, (size_t) h.length);
        }
        c->start += frame;
        (*events)++;
    }
    if (c->start == c->end) {
        c->start = c->end = 0;
    } else if (c->start > 0 && NULL == c->big) {
        memmove(c->buf, c->buf + c->start, c->end - c->start);
        c->end -= c->start;
        c->start = 0;
    }
    return HERD_SUCCESS;
}

/* Read what a connection has: 1 when it should be closed. */
static int read_conn(btl_tcp_conn_t *c, int *events)
{
    for (;;) {
        ssize_t n;
        if (NULL != c->big) {
            n = recv(c->fd, c->big + c->big_got, c->big_len - c->big_got, MSG_DONTWAIT);
        } else {
            n = recv(c->fd, c->buf + c->end, BTL_TCP_READ_BUFFER - c->end, MSG_DONTWAIT);
        }
        if (n < 0 && (EAGAIN == errno || EWOULDBLOCK == errno || EINTR == errno)) {
            return 0;
        }
        if (n <= 0) {
            /* the peer is done (its finalize) or gone: a frame cut short is worth a word */
            if (NULL != c->big || c->end > c->start) {
                opal_output_verbose(1, ompi_btl_base_framework.output,
                                    "rank %u: tcp: rank %u's connection ended inside a message",
                                    btl_tcp.rte->my_rank, c->src);
            }
            return 1;
        }
        if (NULL != c->big) {
            c->big_got += (size_t) n;
            if (c->big_got == c->big_len) {
                uint8_t *whole = c->big;
                c->big = NULL;
                btl_tcp.deliver(c->src, c->big_tag, whole, c->big_len);
                free(whole);
                (*events)++;
            }
            continue;
        }
        c->end += (size_t) n;
        int rc = parse_frames(c, events);
        if (HERD_SUCCESS != rc) {
            char who[64];
            snprintf(who, sizeof(who), c->hello_done ? "rank %u" : "an unknown peer", c->src);
            opal_show_help("help-btl-tcp.txt", "bad-frame", true, btl_tcp.rte->my_rank, who,
                           opal_strerror(rc), btl_tcp.rte->my_rank);
            return 1;
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* the module */

static int btl_tcp_progress(void)
{
    size_t n = 1 + btl_tcp.num_conns + btl_tcp.num_endpoints;
    int events = 0;

    if (n > btl_tcp.cap_pfds) {
        struct pollfd *grown = realloc(btl_tcp.pfds, n * sizeof(*grown));
        if (NULL == grown) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        btl_tcp.pfds = grown;
        btl_tcp.cap_pfds = n;
    }
    struct pollfd *p = btl_tcp.pfds;
    size_t k = 0;
    p[k++] = (struct pollfd){.fd = btl_tcp.listen_fd, .events = POLLIN};
    for (size_t i = 0; i < btl_tcp.num_conns; ++i) {
        p[k++] = (struct pollfd){.fd = btl_tcp.conns[i]->fd, .events = POLLIN};
    }
    size_t first_ep = k;
    for (btl_tcp_endpoint_t *ep = btl_tcp.endpoints; NULL != ep; ep = ep->next) {
        short want = 0;
        if (OUT_CONNECTING == ep->state) {
            want = POLLOUT;
        } else if (OUT_AWAIT_ACK == ep->state) {
            want = POLLIN;
        } else if (OUT_READY == ep->state) {
            want = (short) (POLLIN | (NULL != ep->queue_head ? POLLOUT : 0));
        }
        p[k++] = (struct pollfd){.fd = ep->fd >= 0 ? ep->fd : -1, .events = want};
    }
    if (poll(p, k, 0) < 0) {
        return 0;
    }
    /* endpoints first: their order in p is that of the list, which accept does not change */
    size_t j = first_ep;
    for (btl_tcp_endpoint_t *ep = btl_tcp.endpoints; NULL != ep; ep = ep->next, ++j) {
        if (0 != p[j].revents || OUT_CONNECTING == ep->state || OUT_AWAIT_ACK == ep->state) {
            events += progress_endpoint(ep, p[j].revents);
        }
    }
    /* incoming, from the last: close_conn moves the last one into a closed one's place */
    for (size_t i = btl_tcp.num_conns; i > 0; --i) {
        if (0 != p[i].revents && read_conn(btl_tcp.conns[i - 1], &events)) {
            close_conn(i - 1);
            events++;
        }
    }
    if (p[0].revents & POLLIN) {
        events += accept_conns();
    }
    return events;
}

static int btl_tcp_init(const ompi_btl_rte_t *rte, ompi_btl_deliver_fn_t deliver)
{
    btl_tcp.rte = rte;
    btl_tcp.deliver = deliver;
    btl_tcp.endpoints = NULL;
    btl_tcp.num_endpoints = btl_tcp.num_queued = 0;
    btl_tcp.num_conns = 0;
    if (strlen(rte->jobid) > BTL_TCP_JOBID_MAX) {
        return HERD_ERR_BAD_PARAM;
    }
    return start_listener();
}

static bool btl_tcp_reachable(uint32_t peer)
{
    (void) peer;
    return true;
}

static size_t btl_tcp_pending(void)
{
    return btl_tcp.num_queued;
}

static void btl_tcp_finalize(void)
{
    while (NULL != btl_tcp.endpoints) {
        btl_tcp_endpoint_t *ep = btl_tcp.endpoints;
        btl_tcp.endpoints = ep->next;
        drop_queue(ep);
        if (ep->fd >= 0) {
            close(ep->fd);
        }
        ep->proc->endpoint[HERD_ENDPOINT_TAG_TCP] = NULL;
        free(ep);
    }
    while (btl_tcp.num_conns > 0) {
        close_conn(btl_tcp.num_conns - 1);
    }
    free(btl_tcp.conns);
    btl_tcp.conns = NULL;
    btl_tcp.cap_conns = 0;
    free(btl_tcp.pfds);
    btl_tcp.pfds = NULL;
    btl_tcp.cap_pfds = 0;
    btl_tcp.num_endpoints = btl_tcp.num_queued = 0;
    if (btl_tcp.listen_fd >= 0) {
        close(btl_tcp.listen_fd);
        btl_tcp.listen_fd = -1;
    }
}

static size_t btl_tcp_num_peers(void)
{
    return btl_tcp.num_endpoints;
}

static const ompi_btl_module_t btl_tcp_module = {
    .name = "tcp",
    .init = btl_tcp_init,
    .reachable = btl_tcp_reachable,
    .add_peer = btl_tcp_add_peer,
    .send = btl_tcp_send,
    .progress = btl_tcp_progress,
    .progress_enters_kernel = true,
    .pending = btl_tcp_pending,
    .finalize = btl_tcp_finalize,
    .num_peers = btl_tcp_num_peers,
};

static int btl_tcp_register(const opal_mca_component_t *component)
{
    static const opal_mca_var_def_t vars[] = {
        {.name = "priority",
         .type = OPAL_MCA_VAR_INT,
         .storage = &btl_tcp.priority,
         .help = "Priority of the tcp transport (TCP sockets, any peer)"},
        {.name = "connect_timeout",
         .type = OPAL_MCA_VAR_INT,
         .storage = &btl_tcp.connect_timeout,
         .help = "Seconds a connection to a peer may take (a peer not "
                 "listening yet is tried again meanwhile)"},
        {.name = "max_message",
         .type = OPAL_MCA_VAR_SIZE,
         .storage = &btl_tcp.max_message,
         .help = "Longest message accepted from a peer (bytes; a longer "
                 "header is taken for garbage and the connection closed)"},
        {.name = "use_rm_endpoint",
         .type = OPAL_MCA_VAR_BOOL,
         .storage = &btl_tcp.use_rm,
         .help = "Listen at the RM-assigned endpoint when the job has one "
                 "(false: always a port of the kernel's choice, published by "
                 "the modex)"},
    };

    btl_tcp.priority = BTL_TCP_DEFAULT_PRIORITY;
    btl_tcp.connect_timeout = 60;
    btl_tcp.max_message = (size_t) 1 << 32;
    btl_tcp.use_rm = true;
    return opal_mca_var_register_table(component, vars, OPAL_MCA_VAR_DEFS_COUNT(vars));
}

static int btl_tcp_query(const opal_mca_component_t *component, void **module, int *priority)
{
    (void) component;
    *module = (void *) &btl_tcp_module;
    *priority = btl_tcp.priority;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(ompi, btl, tcp, .register_params = btl_tcp_register, .query = btl_tcp_query);
