/* SPDX-License-Identifier: BSD-3-Clause */
/* What btl tcp's files share (the wire format is btl_tcp.h): the state, the peers' outgoing
 * endpoints and incoming connections, and the calls between btl_tcp_component.c (the module, the
 * listener, addresses), btl_tcp_out.c (connections this process opens and sends on) and
 * btl_tcp_in.c (connections peers opened, which it receives on). */
#ifndef OMPI_BTL_TCP_INTERNAL_H
#define OMPI_BTL_TCP_INTERNAL_H

#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "ompi-shim/mca/btl/btl.h"
#include "ompi-shim/mca/btl/tcp/btl_tcp.h"

#define BTL_TCP_MODEX_KEY   "btl.tcp.addr"
#define BTL_TCP_READ_BUFFER 65536u
#define BTL_TCP_RETRY_MS    5
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

/* The component's one state (defined in btl_tcp_component.c). */
typedef struct {
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
} btl_tcp_state_t;

extern btl_tcp_state_t btl_tcp;

/* btl_tcp_component.c: an address as text (into buf); a deadline ms from now, and whether it
 * has passed; where a peer listens (by path, falling back to the modex; *used says which) */
const char *btl_tcp_addr_text(const struct sockaddr_storage *addr, socklen_t len, char *buf,
                              size_t size);
void btl_tcp_deadline_in(struct timespec *t, long ms);
bool btl_tcp_passed(const struct timespec *t);
int btl_tcp_peer_address(const ompi_proc_t *proc, enum btl_tcp_addr_path path,
                         struct sockaddr_storage *addr, socklen_t *len,
                         enum btl_tcp_addr_path *used);

/* btl_tcp_out.c: the endpoint of proc (made on first use; NULL: out of memory); the module's
 * add_peer and send; one endpoint's progress on its poll events (how many events it made); its
 * queue dropped */
btl_tcp_endpoint_t *btl_tcp_endpoint_of(ompi_proc_t *proc);
int btl_tcp_add_peer(ompi_proc_t *proc);
int btl_tcp_send(ompi_proc_t *proc, int tag, const void *buf, size_t len);
int btl_tcp_progress_endpoint(btl_tcp_endpoint_t *ep, short revents);
void btl_tcp_drop_queue(btl_tcp_endpoint_t *ep);

/* btl_tcp_in.c: take new connections (how many); read one (true: it is to be closed, *events
 * counts messages delivered); close the index-th (the last takes its place) */
int btl_tcp_accept_conns(void);
int btl_tcp_read_conn(btl_tcp_conn_t *c, int *events);
void btl_tcp_close_conn(size_t index);

#endif /* OMPI_BTL_TCP_INTERNAL_H */
