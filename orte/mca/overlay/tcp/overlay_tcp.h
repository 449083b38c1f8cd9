/* SPDX-License-Identifier: BSD-3-Clause */
/* overlay tcp internals shared by the component, the endpoint API and the connection code. */
#ifndef ORTE_MCA_OVERLAY_TCP_H
#define ORTE_MCA_OVERLAY_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>

#include "opal/event/event.h"
#include "orte/mca/overlay/overlay.h"
#include "orte/mca/overlay/tcp/overlay_tcp_if.h"
#include "orte/mca/overlay/tcp/overlay_tcp_wire.h"

#define OVERLAY_TCP_HELP_FILE "help-overlay-tcp.txt"

/* The component's variables, read by init() into each endpoint. */
typedef struct {
    int priority;
    size_t max_message_size;
    char *if_include; /* variable storage, owned by the variable system */
    char *if_exclude;
    int if_include_index;
    int if_exclude_index;
} overlay_tcp_settings_t;

extern overlay_tcp_settings_t overlay_tcp_settings;
extern const orte_overlay_module_t overlay_tcp_module;

/* One queued frame: header and payload in one allocation, written from offset on. Messages to
 * self use the same struct (src and tag then say what to deliver). */
typedef struct overlay_tcp_msg {
    struct overlay_tcp_msg *next;
    size_t size;
    size_t offset;
    orte_vpid_t src;
    uint16_t tag;
    uint8_t bytes[];
} overlay_tcp_msg_t;

typedef struct {
    overlay_tcp_msg_t *head;
    overlay_tcp_msg_t *tail;
    size_t count;
    uint64_t bytes;
} overlay_tcp_queue_t;

typedef enum {
    OVERLAY_TCP_PEER_WAITING, /* not connected yet: messages are held */
    OVERLAY_TCP_PEER_UP,      /* authenticated connection */
    OVERLAY_TCP_PEER_LOST,    /* was connected (or tried to be) and is gone */
} overlay_tcp_peer_state_t;

struct overlay_tcp_conn;

/* A neighbour in the tree: the parent or one child. Its queue outlives connections, so what is
 * sent before a child connects goes out once it does. */
typedef struct {
    orte_vpid_t vpid;
    overlay_tcp_peer_state_t state;
    struct overlay_tcp_conn *conn; /* authenticated, or (parent) being set up */
    overlay_tcp_queue_t queue;
    char uri[OVERLAY_TCP_MAX_URI + 1]; /* advertised by a child, or the parent's we dialled */
} overlay_tcp_peer_t;

typedef enum {
    OVERLAY_TCP_CONN_CONNECTING,     /* connector: connect() in progress */
    OVERLAY_TCP_CONN_WAIT_HELLO,     /* acceptor: nothing received yet */
    OVERLAY_TCP_CONN_WAIT_CHALLENGE, /* connector: HELLO sent */
    OVERLAY_TCP_CONN_WAIT_RESPONSE,  /* acceptor: CHALLENGE sent */
    OVERLAY_TCP_CONN_UP,             /* authenticated: DATA and BYE only */
} overlay_tcp_conn_state_t;

/* Largest handshake frame we send. */
#define OVERLAY_TCP_HANDSHAKE_OUT (OVERLAY_TCP_HEADER_BYTES + OVERLAY_TCP_MAX_HANDSHAKE_PAYLOAD)

typedef struct overlay_tcp_conn {
    struct orte_overlay *overlay;
    struct overlay_tcp_conn *prev; /* in overlay->conns */
    struct overlay_tcp_conn *next;
    int fd;
    bool outgoing;
    overlay_tcp_conn_state_t state;
    overlay_tcp_peer_t *peer;            /* once authenticated; from the start for the parent */
    orte_vpid_t claimed_vpid;            /* from the HELLO, for messages */
    char address[INET6_ADDRSTRLEN + 16]; /* the remote end, for messages */
    char hello_uri[OVERLAY_TCP_MAX_URI + 1];
    opal_event_t *read_event;
    opal_event_t *write_event;
    opal_event_t *timer; /* handshake timeout, or a connect() failure to report */
    bool write_armed;
    int connect_errno; /* connect() failed at once; reported from the timer */
    uint8_t nonce_local[OVERLAY_TCP_NONCE_BYTES];
    uint8_t nonce_remote[OVERLAY_TCP_NONCE_BYTES];
    uint8_t hs_out[OVERLAY_TCP_HANDSHAKE_OUT]; /* handshake frame being written */
    size_t hs_length;
    size_t hs_offset;
    uint8_t *rbuf; /* received bytes not yet handled */
    size_t rcap;
    size_t rlen;
    bool said_bye; /* the peer said goodbye: its close is orderly */
    /* heartbeats (overlay_tcp_heartbeat.c), once up: two flags per message, counted per tick */
    uint32_t hb_timeout_ms;      /* the smaller of both ends' timeouts; 0: not watched */
    uint32_t hb_peer_timeout_ms; /* what the neighbour said its own is */
    bool hb_sent;                /* bytes went out since the last tick */
    bool hb_heard;               /* bytes came in since the last tick */
    uint32_t hb_quiet_ms;        /* whole ticks with nothing sent */
    uint32_t hb_silent_ms;       /* whole ticks with nothing heard */
    uint64_t hb_tick;            /* the last tick that looked at this connection */
} overlay_tcp_conn_t;

typedef struct {
    orte_overlay_recv_cb_t cb;
    void *arg;
} overlay_tcp_handler_t;

/* Receive callbacks by tag in 256 lazily allocated pages: O(1) lookup without 1 MiB per
 * endpoint. */
#define OVERLAY_TCP_HANDLER_PAGES 256u
#define OVERLAY_TCP_HANDLER_PAGE  256u

struct orte_overlay {
    opal_event_base_t *base;
    orte_vpid_t vpid;
    uint32_t num_daemons;
    uint32_t radix;
    char dvm_id[ORTE_OVERLAY_MAX_DVM_ID + 1];
    /* the DVM's secret until the key is derived from it (overlay_tcp_auth_prepare), then
     * wiped */
    uint8_t secret[ORTE_OVERLAY_SECRET_BYTES];
    uint8_t key[OVERLAY_TCP_KEY_BYTES];
    bool key_ready;
    overlay_tcp_if_list_t interfaces;
    size_t max_message_size;
    struct timeval handshake_timeout; /* an accepted connection's, to authenticate */
    struct timeval connect_timeout;   /* ours, to hear the parent's answer */

    uint32_t heartbeat_timeout_ms; /* from the config; 0: off */
    opal_event_t *heartbeat_timer; /* one per endpoint, armed while a connection is watched */
    uint32_t heartbeat_tick_ms;    /* its period now; 0: not armed */
    uint64_t heartbeat_ticks;      /* ticks so far */

    int listen_fd;
    opal_event_t *listen_event;
    opal_event_t *accept_retry;        /* re-arms the listener after running out of fds */
    char uri[OVERLAY_TCP_MAX_URI + 1]; /* empty until listening */

    bool has_parent;
    overlay_tcp_peer_t parent;
    overlay_tcp_peer_t *children;
    uint32_t num_children;
    orte_vpid_t first_child;

    overlay_tcp_peer_t **adopted; /* descendants taken in when those between were lost */
    uint32_t num_adopted;
    uint8_t *down; /* bitmap by vpid of the daemons routed around (NULL: none) */

    overlay_tcp_conn_t *conns; /* every open connection */
    uint32_t num_pending;      /* accepted, not yet authenticated */

    overlay_tcp_queue_t self_queue;
    opal_event_t *self_event;
    bool self_armed;

    overlay_tcp_handler_t *handlers[OVERLAY_TCP_HANDLER_PAGES];
    orte_overlay_lost_cb_t lost_cb;
    void *lost_arg;
    orte_overlay_stats_t stats;

    /* Callbacks may call finalize(): the endpoint is then torn down when the outermost event
     * handler returns, not under the handler's feet. */
    int busy;
    bool finalize_requested;
};

/* Connections (overlay_tcp_conn.c). */
/* address: the remote end as text, for messages. */
int overlay_tcp_conn_accept(struct orte_overlay *overlay, int fd, const char *address);
int overlay_tcp_conn_connect(struct orte_overlay *overlay, const struct sockaddr *address,
                             socklen_t address_length);
/* An established connection to peer on a socket that needs no handshake (adopt_peer). */
int overlay_tcp_conn_adopt(struct orte_overlay *overlay, int fd, overlay_tcp_peer_t *peer);
/* Close without callbacks (finalize); with bye, first try to say goodbye. */
void overlay_tcp_conn_close(overlay_tcp_conn_t *conn, bool bye);
/* Close conn after a failure and say so: a neighbour's loss goes to the lost callback, a
 * refused stranger to the log (overlay_base_verbose). The caller is inside enter/leave when conn
 * has a peer. */
void overlay_tcp_conn_fail(overlay_tcp_conn_t *conn, int status, const char *reason);
/* The listener is full of connections still authenticating: drop the oldest of those that have
 * said nothing yet (else the oldest), so that a daemon arriving after a flood gets in. */
void overlay_tcp_conn_evict_pending(struct orte_overlay *overlay);
/* Queue (or write at once) a frame for peer; payload gathered from iov. */
int overlay_tcp_peer_send(struct orte_overlay *overlay, overlay_tcp_peer_t *peer,
                          const overlay_tcp_header_t *header, const struct iovec *iov, int iovcnt,
                          size_t length);

/* Queues (overlay_tcp_module.c). */
/* A copy of header (encoded in front when with_header) and the payload gathered from iov. */
overlay_tcp_msg_t *overlay_tcp_msg_new(const overlay_tcp_header_t *header, bool with_header,
                                       const struct iovec *iov, int iovcnt, size_t length);
void overlay_tcp_queue_push(struct orte_overlay *overlay, overlay_tcp_queue_t *queue,
                            overlay_tcp_msg_t *msg);
void overlay_tcp_queue_drop(struct orte_overlay *overlay, overlay_tcp_queue_t *queue);

/* Heartbeats (overlay_tcp_heartbeat.c). */
/* conn is up: watch it with the smaller of our timeout and the neighbour's. */
void overlay_tcp_heartbeat_watch(overlay_tcp_conn_t *conn, uint32_t peer_timeout_ms);
/* A HEARTBEAT frame arrived on conn (up). HERD_SUCCESS, or a malformed frame (why says how). */
int overlay_tcp_heartbeat_recv(overlay_tcp_conn_t *conn, const overlay_tcp_header_t *header,
                               const uint8_t *payload, char *why, size_t why_size);
void overlay_tcp_heartbeat_free(struct orte_overlay *overlay);
/* "30 s", "1.5 s" or "500 ms", for messages. */
void overlay_tcp_duration_format(uint64_t ms, char *text, size_t size);

/* Routing (overlay_tcp_route.c). */
/* The parent, a child or an adopted descendant with that vpid, else NULL. */
overlay_tcp_peer_t *overlay_tcp_neighbour(struct orte_overlay *overlay, orte_vpid_t vpid);
/* The neighbour a message for dst (not this daemon) goes to, around the daemons that are down;
 * NULL when dst is down or out of range. */
overlay_tcp_peer_t *overlay_tcp_next_hop(struct orte_overlay *overlay, orte_vpid_t dst);
/* The peer a connecting descendant vpid takes: a child, or a descendant adopted because the
 * daemons between are down; NULL when vpid is not below this daemon. */
overlay_tcp_peer_t *overlay_tcp_accept_child(struct orte_overlay *overlay, orte_vpid_t vpid);
bool overlay_tcp_is_down(const struct orte_overlay *overlay, orte_vpid_t vpid);
int overlay_tcp_mark_down(struct orte_overlay *overlay, orte_vpid_t vpid);
int overlay_tcp_route_around(struct orte_overlay *overlay, orte_vpid_t vpid);
void overlay_tcp_route_free(struct orte_overlay *overlay);

/* Delivery (overlay_tcp_module.c). */
/* Deliver a message addressed to this daemon to its tag's callback. */
void overlay_tcp_deliver(struct orte_overlay *overlay, orte_vpid_t src, uint16_t tag,
                         const void *data, size_t length);
/* Bracket every event handler that may run user callbacks; leave returns true when the
 * endpoint was torn down (finalize() from a callback) and must not be touched. */
void overlay_tcp_enter(struct orte_overlay *overlay);
bool overlay_tcp_leave(struct orte_overlay *overlay);
/* Tell the user a neighbour is gone. */
/* Load libsodium and derive the key, once: what a handshake needs, done at the first listen or
 * connect (a socketpair adopted from a fork needs neither). HERD_ERR_SILENT once the user was
 * told why it cannot be done. */
int overlay_tcp_auth_prepare(struct orte_overlay *overlay);
/* size random bytes (getrandom), for nonces */
int overlay_tcp_random(void *buf, size_t size);
void overlay_tcp_report_lost(struct orte_overlay *overlay, orte_vpid_t vpid, int status,
                             const char *reason);
int overlay_tcp_output(void);

#endif /* ORTE_MCA_OVERLAY_TCP_H */
