/* SPDX-License-Identifier: BSD-3-Clause */
/* overlay ofi: the endpoint, shared by the module (overlay_ofi_module.c) and the fabric path
 * (overlay_ofi_path.c). */
#ifndef ORTE_MCA_OVERLAY_OFI_INTERNAL_H
#define ORTE_MCA_OVERLAY_OFI_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "opal/event/event.h"
#include "orte/mca/overlay/ofi/overlay_ofi.h"

/* Wire version of the fabric header and of the control messages on the reserved tag. */
#define OVERLAY_OFI_WIRE_VERSION 1u
/* Fabric header: u8 version, u8 kind, u16 tag, u32 origin, u32 seq, u32 total, u32 offset. */
#define OVERLAY_OFI_HEADER_BYTES 20u
#define OVERLAY_OFI_KIND_DATA    1u
/* Control (tcp, reserved tag): u8 version, u8 kind, u16 address length, u32 value, address. */
#define OVERLAY_OFI_CTL_BYTES    8u
#define OVERLAY_OFI_CTL_HELLO    1u /* my fabric address; value 0 */
#define OVERLAY_OFI_CTL_FALLBACK 2u /* value: the first fabric seq re-sent over tcp */
/* Largest message the fabric carries (larger ones go over tcp): a receiver allocates no more. */
#define OVERLAY_OFI_MAX_MESSAGE (64u * 1024u * 1024u)
/* Largest fabric fragment (header included), and the receive buffers posted. */
#define OVERLAY_OFI_MAX_FRAGMENT (64u * 1024u)
#define OVERLAY_OFI_RECV_BUFFERS 32
/* A fabric message more than this many ahead of the next one expected is corrupt. */
#define OVERLAY_OFI_WINDOW 4096u

typedef struct ofi_recv_reg ofi_recv_reg_t;
typedef struct ofi_txmsg ofi_txmsg_t;
typedef struct ofi_rxmsg ofi_rxmsg_t;
typedef struct ofi_held ofi_held_t;
typedef struct ofi_rxbuf ofi_rxbuf_t;

/* What a completion's context leads back to: a receive buffer or a send fragment. */
enum { OFI_OP_RX = 1, OFI_OP_TX = 2 };

/* What a completion's context leads back to. */
typedef struct ofi_op {
    overlay_ofi_ctx_t ctx; /* first: the address given to libfabric */
    int kind;
} ofi_op_t;

typedef struct ofi_txfrag {
    ofi_op_t op;
    ofi_txmsg_t *msg;
    uint8_t *wire; /* header and payload slice */
    size_t length;
    bool posted;
    bool done;
} ofi_txfrag_t;

struct ofi_txmsg {
    ofi_txmsg_t *next;
    orte_vpid_t dst;
    uint16_t tag;
    uint32_t seq;
    uint8_t *payload; /* whole, for a re-send over tcp */
    size_t length;
    unsigned nfrags, nposted, ndone;
    bool abandoned; /* re-sent over tcp: free once its posted fragments completed */
    ofi_txfrag_t frags[];
};

struct ofi_rxmsg {
    ofi_rxmsg_t *next;
    uint32_t seq;
    uint16_t tag;
    uint32_t total;
    uint32_t received;
    uint8_t *data;
};

struct ofi_held {
    ofi_held_t *next;
    uint16_t tag;
    size_t length;
    uint8_t data[];
};

struct ofi_rxbuf {
    ofi_op_t op;
    uint8_t *buf;
    bool posted;
};

/* What this daemon knows of one other daemon on the fabric. */
typedef struct ofi_peer {
    uint64_t dest;      /* its address in the address vector */
    uint64_t addr_hash; /* of the address in its HELLO (a new one: the daemon restarted) */
    bool addr_known;    /* its HELLO arrived over tcp (so its fabric messages may be delivered) */
    bool hello_sent;    /* mine went to it over tcp */
    bool tx_failed;     /* a fabric send to it failed: tcp only from then on */
    uint32_t tx_seq;    /* next fabric seq to it */
    uint32_t rx_seq;    /* next fabric seq from it to deliver */
    bool rx_fallback;   /* it fell back to tcp at fabric seq rx_limit */
    uint32_t rx_limit;
    ofi_txmsg_t *tx_head; /* sent over the fabric, not yet all completed (in seq order) */
    ofi_txmsg_t **tx_tail;
    ofi_rxmsg_t *rx_list;  /* fabric messages from it not delivered yet (by seq) */
    ofi_held_t *held_head; /* its tcp collective messages held until the fabric catches up */
    ofi_held_t **held_tail;
} ofi_peer_t;

typedef struct ofi_counters {
    uint64_t msgs_sent, bytes_sent; /* over the fabric (payload) */
    uint64_t msgs_recv, bytes_recv; /* delivered from the fabric */
    uint64_t coll_tcp;              /* collective messages that went over tcp */
    uint64_t resent_tcp;            /* fabric messages re-sent over tcp after an error */
    uint64_t dropped;               /* corrupt or unexpected fabric messages */
    uint64_t frags_done;            /* send fragments completed */
} ofi_counters_t;

struct orte_overlay {
    const orte_overlay_module_t *tcp;
    orte_overlay_t *inner;        /* tcp's endpoint */
    overlay_ofi_fabric_t *fabric; /* NULL: fell back to tcp alone */
    pid_t fabric_pid;             /* the process that opened it */
    orte_vpid_t vpid;
    uint32_t num_daemons;
    uint32_t radix;
    opal_event_base_t *base;
    ofi_recv_reg_t *regs;
    orte_overlay_lost_cb_t lost_cb;
    void *lost_arg;
    /* the fabric path (overlay_ofi_path.c) */
    ofi_peer_t *peers;      /* by vpid */
    ofi_txmsg_t *abandoned; /* re-sent over tcp, fragments still posted */
    ofi_rxbuf_t *rxbufs;
    size_t frag_bytes; /* fragment size, header included */
    opal_event_t *cq_event;
    opal_event_t *poll_timer;
    bool poll_armed;
    uint64_t last_active_us; /* of fabric traffic, monotonic */
    unsigned poll_backoff;   /* us, of the poll timer */
    unsigned pending_sends;  /* fragments not yet completed */
    unsigned unposted;       /* fragments waiting for room in the provider */
    ofi_counters_t count;
    bool online;     /* listened or connected: the fabric was opened (or tried) */
    bool control_ok; /* the reserved tag is ours on tcp's endpoint */
    unsigned depth;  /* in a callback of ours */
    bool dying;      /* finalize was called inside one: release on the way out */
};

struct ofi_recv_reg {
    struct ofi_recv_reg *next;
    orte_overlay_t *owner;
    uint16_t tag;
    orte_overlay_recv_cb_t cb;
    void *arg;
};

/* RDM endpoints one process opens at most: opening one costs ~50 ms of system time with the
 * tcp provider, so simulated nodes hosted 128 to a process (ras_simulator_nodes_per_process)
 * would keep their host's loop from the handshakes for seconds; the rest use tcp alone. */
#define OVERLAY_OFI_MAX_ENDPOINTS 4u

/* overlay_ofi_path.c */
/* Whether this process may open another endpoint; take: count the one just opened. */
bool overlay_ofi_endpoint_slot(bool take);
bool overlay_ofi_is_collective(uint16_t tag);
/* Post the receive buffers and hook the completion queue to the loop; on failure the caller
 * closes the fabric (*reason says why, the caller's to free). */
int overlay_ofi_path_start(orte_overlay_t *o, char **reason);
/* Print the counters (verbose 2), close the fabric (unless close_fabric is false: a forked
 * child leaves its parent's alone) and free what the path holds. */
void overlay_ofi_path_stop(orte_overlay_t *o, bool close_fabric);
/* Send my fabric address to peer over tcp (once). */
void overlay_ofi_send_hello(orte_overlay_t *o, orte_vpid_t peer);
/* HERD_SUCCESS when the message went (or will go) over the fabric; HERD_ERR_TAKE_NEXT when it
 * must go over tcp. */
int overlay_ofi_path_send(orte_overlay_t *o, orte_vpid_t dst, uint16_t tag, const struct iovec *iov,
                          int iovcnt, size_t length);
/* A control message on the reserved tag, from tcp. */
void overlay_ofi_control(orte_overlay_t *o, orte_vpid_t src, const void *data, size_t length);
/* A collective message that came over tcp: false when it is held (the fabric has to catch up
 * first), true when the caller delivers it now. */
bool overlay_ofi_tcp_arrived(orte_overlay_t *o, orte_vpid_t src, uint16_t tag, const void *data,
                             size_t length);
/* Read completions and deliver what is complete. */
void overlay_ofi_progress(orte_overlay_t *o);
/* The loop's events on the completion queue, and when to poll it next. */
void overlay_ofi_fd_event(int fd, short what, void *arg);
void overlay_ofi_poll_event(int fd, short what, void *arg);
void overlay_ofi_rearm(orte_overlay_t *o, bool active);
void overlay_ofi_tx_free(orte_overlay_t *o, ofi_txmsg_t *m);
/* Free what peer P sent that is not delivered yet (partial messages, held tcp messages). */
void overlay_ofi_peer_drop_received(ofi_peer_t *p);
/* Give a receive buffer (back) to the provider. */
void overlay_ofi_rx_repost(orte_overlay_t *o, ofi_rxbuf_t *rb);
/* Give a message to the user's callback for its tag (counted as dropped when none). */
void overlay_ofi_deliver(orte_overlay_t *o, orte_vpid_t src, uint16_t tag, const void *data,
                         size_t length);
/* Entering / leaving one of our callbacks; leave returns false when the endpoint was released
 * (finalize was called inside). */
void overlay_ofi_enter(orte_overlay_t *o);
bool overlay_ofi_leave(orte_overlay_t *o);
void overlay_ofi_release(orte_overlay_t *o);

#endif /* ORTE_MCA_OVERLAY_OFI_INTERNAL_H */
