/* SPDX-License-Identifier: BSD-3-Clause */
/* The overlay framework: messaging among the daemons of a DVM, routed along a radix tree,
 * over authenticated, framed, versioned connections. */
#ifndef ORTE_MCA_OVERLAY_H
#define ORTE_MCA_OVERLAY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "opal/event/event.h"
#include "opal/mca/mca.h"
#include "orte/types.h"

#define OPAL_MCA_overlay_INTERFACE_VERSION 3u

/* The DVM secret every daemon is given (never on a command line). */
#define ORTE_OVERLAY_SECRET_BYTES 32u
/* Longest DVM id, in bytes of printable ASCII. */
#define ORTE_OVERLAY_MAX_DVM_ID 255u

/* One daemon's endpoint in the overlay. Opaque: made by a module's init(), passed to every
 * other call, released by finalize(). A process may hold several (tests, simulated nodes). */
typedef struct orte_overlay orte_overlay_t;

typedef struct orte_overlay_config {
    /* The loop every socket, timer and callback of this endpoint runs on. Every call on the
     * endpoint must come from the thread that runs this loop (or while it is not running). */
    opal_event_base_t *base;
    orte_vpid_t vpid;     /* mine: 0 is the root, 1..num_daemons-1 the daemons */
    uint32_t num_daemons; /* n, the root included */
    uint32_t radix;       /* of the routing tree (orte/util/radix.h), >= 1 */
    const char *dvm_id;   /* printable ASCII, 1..ORTE_OVERLAY_MAX_DVM_ID bytes; copied */
    uint8_t secret[ORTE_OVERLAY_SECRET_BYTES]; /* copied; the caller may wipe its own copy */
    /* Interfaces to advertise an address on: comma-separated names (eth0) or subnets
     * (10.0.0.0/8). NULL for both means the component's MCA variables decide; at most one of
     * the two may be set. */
    const char *if_include;
    const char *if_exclude;
    /* Heartbeats, in ms; 0 switches them off. A connection is watched with the smaller of its
     * two ends' timeouts (each end tells the other its own; 0 at either end: not watched). An
     * end that has sent nothing on a watched connection for a third of that timeout sends a
     * heartbeat (so a connection that carries traffic carries no heartbeat); a neighbour from
     * which nothing at all arrived for the whole timeout is lost (HERD_ERR_TIMEOUT, "stopped
     * answering") and its connection closed. One timer per endpoint; nothing per message but a
     * flag. The DVM sets it from dvm_heartbeat_timeout. */
    uint32_t heartbeat_timeout_ms;
} orte_overlay_config_t;

/* A message for this daemon. data is only valid during the call: copy what must outlive it. */
typedef void (*orte_overlay_recv_cb_t)(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                                       const void *data, size_t length, void *arg);

/* A neighbour (parent or child) is gone, or the connection to the parent could not be set up.
 * status: HERD_SUCCESS when the neighbour finalized in order; HERD_ERR_UNREACH when the
 * connection failed or closed unexpectedly (a daemon killed with -9); HERD_ERR_AUTH when the
 * parent failed the handshake; HERD_ERR_TIMEOUT when the handshake did not finish in time, or
 * the neighbour stopped answering (nothing heard from it for the heartbeat timeout: a hung or
 * stopped daemon, a node that froze); HERD_ERR_UNPACK_FAILURE when the neighbour sent a
 * malformed frame. reason is a sentence for
 * users, valid only during the call. Messages queued for the neighbour are dropped, and sends
 * routed through it fail with HERD_ERR_UNREACH from then on. */
typedef void (*orte_overlay_lost_cb_t)(orte_overlay_t *overlay, orte_vpid_t peer, int status,
                                       const char *reason, void *arg);

/* Counters of one endpoint, for tests, herd-info and logs. */
typedef struct orte_overlay_stats {
    uint64_t messages_sent;      /* accepted by send() here, self included */
    uint64_t messages_delivered; /* handed to a receive callback here */
    uint64_t messages_forwarded; /* passed on towards another daemon */
    uint64_t messages_dropped;   /* no callback for the tag, or the next hop was lost */
    uint64_t bytes_queued;       /* waiting in send queues now */
    uint64_t peers_rejected;     /* connections refused during the handshake, for any reason
                                  * (malformed, timed out, evicted for a newer one) */
    uint64_t auth_failures;      /* of those, the ones that failed a MAC check */
    uint64_t protocol_errors;    /* connections closed because a neighbour sent a bad frame */
    uint64_t heartbeats_sent;    /* on connections that had nothing else to carry */
    uint64_t bytes_sent;         /* written to neighbours' connections (frames after the
                                  * handshake: its own messages and those it forwards) */
    uint64_t bytes_received;     /* read from its connections, handshakes included */
    uint32_t neighbours_up;      /* authenticated connections now */
} orte_overlay_stats_t;

/* Every function returns HERD_SUCCESS or a negative status; output arguments are set only on
 * success. Callbacks always run from the event loop, never inside a call made by the user. */
struct orte_overlay_module {
    /* Make an endpoint. Nothing is connected yet. */
    int (*init)(const orte_overlay_config_t *config, orte_overlay_t **overlay);
    /* Listen on an address chosen from the allowed interfaces; *uri ("tcp://10.0.0.1:40123")
     * is the caller's to free. */
    int (*listen)(orte_overlay_t *overlay, char **uri);
    /* Use a socket that a launcher already bound and put in listening state, so that it knew
     * every URI before starting any daemon. Owned by the endpoint on success only. */
    int (*adopt_listener)(orte_overlay_t *overlay, int fd, char **uri);
    /* Start connecting to the parent (not for vpid 0). Failures after this returns, including
     * a failed handshake, reach the lost callback. */
    int (*connect_parent)(orte_overlay_t *overlay, const char *uri);
    /* Use one end of a connected stream socket as the connection to neighbour peer (the parent,
     * or a child): a socketpair made before a fork, whose other end only that neighbour holds,
     * so there is nothing to authenticate and no handshake runs on it. The neighbour adopts the
     * other end. Owned by the endpoint on success only; may be NULL in a component that cannot
     * do it (then listen and connect). */
    int (*adopt_peer)(orte_overlay_t *overlay, int fd, orte_vpid_t peer);
    /* Route a message to dst, hop by hop along the tree; to self it is delivered from the loop.
     * Never blocks: what the socket does not take now is copied and queued per connection, and
     * a message for a child that has not connected yet is held until it does.
     * HERD_ERR_UNREACH when the next hop was lost; HERD_ERR_BAD_PARAM for dst >= n or a
     * message over the size limit (reported). */
    int (*send)(orte_overlay_t *overlay, orte_vpid_t dst, uint16_t tag, const void *data,
                size_t length);
    /* The same with the payload gathered from iovcnt pieces (at most ORTE_OVERLAY_MAX_IOV). */
    int (*sendv)(orte_overlay_t *overlay, orte_vpid_t dst, uint16_t tag, const struct iovec *iov,
                 int iovcnt);
    /* Call cb for every message with this tag addressed to this daemon; cb NULL removes the
     * callback. HERD_ERR_EXISTS if another callback holds the tag. Register before connecting:
     * a message for a tag without a callback is dropped (and counted). */
    int (*register_recv)(orte_overlay_t *overlay, uint16_t tag, orte_overlay_recv_cb_t cb,
                         void *arg);
    void (*set_lost_callback)(orte_overlay_t *overlay, orte_overlay_lost_cb_t cb, void *arg);
    void (*get_stats)(const orte_overlay_t *overlay, orte_overlay_stats_t *stats);
    /* Node loss, for a DVM that outlives its faults (docs/overlay.md, "Routing around a lost
     * daemon"). The caller decided daemon vpid (not the parent) is down: its connection closes
     * without a callback, what was queued for it is dropped, and messages to its subtree go to
     * the first live daemon below it, which connects here as an adopted child. May be NULL in a
     * component that cannot. */
    int (*route_around)(orte_overlay_t *overlay, orte_vpid_t vpid);
    /* The parent is lost: connect to ancestor (one of this daemon's ancestors in the radix tree)
     * instead, which adopts this daemon; the daemons between are taken for down. Failures reach
     * the lost callback, as for connect_parent; what is sent meanwhile waits for the link. */
    int (*connect_ancestor)(orte_overlay_t *overlay, orte_vpid_t ancestor, const char *uri);
    /* Tell neighbours goodbye (best effort, without blocking), close every socket, free all.
     * No lost callback runs. From inside a callback the endpoint is released once the callback
     * returns. */
    void (*finalize)(orte_overlay_t *overlay);
};
typedef struct orte_overlay_module orte_overlay_module_t;

#define ORTE_OVERLAY_MAX_IOV 15

OPAL_EXPORT extern opal_mca_framework_t orte_overlay_base_framework;

/* Open the framework and select its one component. HERD_ERR_NOT_FOUND when none is available
 * (the caller reports it: only it knows what it was about to do). */
OPAL_EXPORT int orte_overlay_base_open(void);
OPAL_EXPORT void orte_overlay_base_close(void);
/* The selected module, or NULL before a successful open. */
OPAL_EXPORT const orte_overlay_module_t *orte_overlay_base_module(void);
/* overlay_base_handshake_timeout: seconds an accepted connection has to authenticate before it
 * is dropped (>= 1); valid once the framework is open. */
OPAL_EXPORT unsigned orte_overlay_base_handshake_timeout(void);

#endif /* ORTE_MCA_OVERLAY_H */
