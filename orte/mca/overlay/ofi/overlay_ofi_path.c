/* SPDX-License-Identifier: BSD-3-Clause */
/* overlay ofi: the fabric path. The grpcomm collectives' messages to a daemon whose fabric
 * address is known go over the RDM endpoint, cut into fragments under a small header and
 * numbered per destination; the receiver reassembles them and delivers them in that order.
 * Addresses travel over tcp (HELLO on the reserved tag), so only a daemon of this DVM gets
 * into the address vector, and a receiver delivers a peer's fabric messages only once that
 * peer's HELLO arrived: whatever the peer sent over tcp before it has been delivered. A send
 * that fails sends the peer a FALLBACK over tcp with the first number it re-sends over tcp;
 * the receiver holds that peer's tcp collective messages until the fabric ones before that
 * number are delivered, and drops later fabric ones. docs/overlay.md, "The ofi component". */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <sys/uio.h>
#include <unistd.h>

#include "opal/util/output.h"
#include "orte/mca/grpcomm/grpcomm.h"
#include "orte/mca/overlay/ofi/overlay_ofi_internal.h"
#include "orte/mca/wireup/base/base.h"

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t) (v >> 8);
    p[1] = (uint8_t) v;
}
static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t) (v >> 24);
    p[1] = (uint8_t) (v >> 16);
    p[2] = (uint8_t) (v >> 8);
    p[3] = (uint8_t) v;
}
static uint16_t get16(const uint8_t *p)
{
    return (uint16_t) ((p[0] << 8) | p[1]);
}
static uint32_t get32(const uint8_t *p)
{
    return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3];
}

/* The DVM's collectives (grpcomm's tags on the DVM overlay) and a job's fences (the wireup
 * engine's collective and direct-fence tags on the job's overlay). */
bool overlay_ofi_is_collective(uint16_t tag)
{
    return (tag >= ORTE_GRPCOMM_TAG_BASE && tag < ORTE_GRPCOMM_TAG_BASE + ORTE_GRPCOMM_NUM_TAGS) ||
           (tag >= ORTE_WIREUP_TAG_COLL && tag <= ORTE_WIREUP_TAG_DFENCE);
}

static bool fabric_usable(const orte_overlay_t *o)
{
    return NULL != o->fabric && NULL != o->peers && getpid() == o->fabric_pid;
}

/* ---- timers: the completion queue is read from the loop ---- */

static void arm_poll(orte_overlay_t *o, unsigned usec)
{
    struct timeval tv = {.tv_sec = 0, .tv_usec = (suseconds_t) usec};
    if (NULL != o->poll_timer && !o->poll_armed) {
        o->poll_armed = HERD_SUCCESS == opal_event_add(o->poll_timer, &tv);
    }
}

/* Poll again soon (every 100 us) while fabric traffic is in flight, and (no wait descriptor:
 * the shm provider) for 50 ms after the last of it, a collective's next round being likely
 * then; after that back off, doubling, to 64 ms. */
#define OFI_POLL_ACTIVE_US 100u
#define OFI_POLL_HOLD_US   50000u
#define OFI_POLL_IDLE_US   64000u
static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

void overlay_ofi_rearm(orte_overlay_t *o, bool active)
{
    uint64_t now = now_us();

    if (o->pending_sends > 0 || o->unposted > 0 || active) {
        o->last_active_us = now;
        o->poll_backoff = OFI_POLL_ACTIVE_US;
    } else if (NULL != o->cq_event) {
        if (overlay_ofi_ops->trywait(o->fabric)) {
            return; /* the descriptor wakes the loop */
        }
        o->poll_backoff = 0;
    } else if (now - o->last_active_us < OFI_POLL_HOLD_US) {
        o->poll_backoff = OFI_POLL_ACTIVE_US;
    } else if (o->poll_backoff < OFI_POLL_IDLE_US) {
        o->poll_backoff = 0 == o->poll_backoff ? OFI_POLL_ACTIVE_US : 2 * o->poll_backoff;
    }
    arm_poll(o, o->poll_backoff);
}

static void fabric_event(orte_overlay_t *o)
{
    uint64_t before = o->count.msgs_recv + o->count.frags_done;

    overlay_ofi_enter(o);
    overlay_ofi_progress(o);
    if (!o->dying && fabric_usable(o)) {
        overlay_ofi_rearm(o, before != o->count.msgs_recv + o->count.frags_done);
    }
    (void) overlay_ofi_leave(o);
}

void overlay_ofi_fd_event(int fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    fabric_event(arg);
}

void overlay_ofi_poll_event(int fd, short what, void *arg)
{
    orte_overlay_t *o = arg;
    (void) fd;
    (void) what;
    o->poll_armed = false;
    fabric_event(o);
}

/* ---- sending ---- */

static void send_control(orte_overlay_t *o, orte_vpid_t peer, uint8_t kind, uint32_t value,
                         const void *addr, size_t alen)
{
    uint8_t msg[OVERLAY_OFI_CTL_BYTES + OVERLAY_OFI_MAX_ADDR];

    msg[0] = OVERLAY_OFI_WIRE_VERSION;
    msg[1] = kind;
    put16(msg + 2, (uint16_t) alen);
    put32(msg + 4, value);
    if (alen > 0) {
        memcpy(msg + OVERLAY_OFI_CTL_BYTES, addr, alen);
    }
    (void) o->tcp->send(o->inner, peer, ORTE_OVERLAY_TAG_COMPONENT, msg,
                        OVERLAY_OFI_CTL_BYTES + alen);
}

/* value 1: "answer with yours" (I do not have it: it may have come while I had no fabric) */
static void send_hello(orte_overlay_t *o, orte_vpid_t peer, bool again)
{
    uint8_t addr[OVERLAY_OFI_MAX_ADDR];
    size_t alen = sizeof(addr);

    if (!fabric_usable(o) || peer >= o->num_daemons || peer == o->vpid ||
        (o->peers[peer].hello_sent && !again)) {
        return;
    }
    if (HERD_SUCCESS != overlay_ofi_ops->getname(o->fabric, addr, &alen) || 0 == alen ||
        alen > sizeof(addr)) {
        return;
    }
    o->peers[peer].hello_sent = true;
    send_control(o, peer, OVERLAY_OFI_CTL_HELLO, o->peers[peer].addr_known ? 0 : 1, addr, alen);
    opal_output_verbose(5, overlay_ofi_output(),
                        "overlay ofi: daemon %u sent its fabric address to daemon %u", o->vpid,
                        peer);
}

void overlay_ofi_send_hello(orte_overlay_t *o, orte_vpid_t peer)
{
    send_hello(o, peer, false);
}

void overlay_ofi_tx_free(orte_overlay_t *o, ofi_txmsg_t *m)
{
    for (unsigned i = 0; i < m->nfrags; ++i) {
        if (!m->frags[i].posted && !m->abandoned) {
            o->unposted--;
        }
        free(m->frags[i].wire);
    }
    free(m->payload);
    free(m);
}

/* A message taken off its peer's list: freed now, or kept until its posted fragments complete
 * (or the path stops). */
static void abandon(orte_overlay_t *o, ofi_txmsg_t *m)
{
    m->abandoned = true;
    if (m->nposted == m->ndone) {
        overlay_ofi_tx_free(o, m);
        return;
    }
    m->next = o->abandoned;
    o->abandoned = m;
}

/* The peer's messages not completed yet go over tcp, in order, and so does all that follows;
 * the peer is told where the fabric stopped. */
static void fall_back(orte_overlay_t *o, orte_vpid_t vpid, const char *why)
{
    ofi_peer_t *p = &o->peers[vpid];
    uint32_t first = NULL != p->tx_head ? p->tx_head->seq : p->tx_seq;
    unsigned resent = 0;

    if (p->tx_failed) {
        return;
    }
    p->tx_failed = true;
    send_control(o, vpid, OVERLAY_OFI_CTL_FALLBACK, first, NULL, 0);
    while (NULL != p->tx_head) {
        ofi_txmsg_t *m = p->tx_head;
        p->tx_head = m->next;
        (void) o->tcp->send(o->inner, vpid, m->tag, m->payload, m->length);
        resent++;
        for (unsigned i = 0; i < m->nfrags; ++i) {
            if (!m->frags[i].posted) {
                o->unposted--;
            }
        }
        abandon(o, m);
    }
    p->tx_tail = &p->tx_head;
    o->count.resent_tcp += resent;
    opal_output_verbose(1, overlay_ofi_output(),
                        "overlay ofi: daemon %u sends to daemon %u over tcp from now on (%s); "
                        "%u message(s) re-sent over tcp",
                        o->vpid, vpid, why, resent);
}

/* Post the fragments the provider has not taken yet; false when the message fell back. */
static bool tx_post(orte_overlay_t *o, ofi_txmsg_t *m)
{
    ofi_peer_t *p = &o->peers[m->dst];

    for (unsigned i = 0; i < m->nfrags; ++i) {
        ofi_txfrag_t *f = &m->frags[i];
        int error = 0;
        int rc;
        if (f->posted) {
            continue;
        }
        rc = overlay_ofi_ops->post_send(o->fabric, p->dest, f->wire, f->length, &f->op.ctx, &error);
        if (OVERLAY_OFI_AGAIN == rc) {
            return true;
        }
        if (HERD_SUCCESS != rc) {
            char why[96];
            snprintf(why, sizeof(why), "a fabric send failed: %s", strerror(error));
            fall_back(o, m->dst, why);
            return false;
        }
        f->posted = true;
        m->nposted++;
        o->unposted--;
        o->pending_sends++;
    }
    return true;
}

static void tx_post_all(orte_overlay_t *o)
{
    for (uint32_t v = 0; v < o->num_daemons && o->unposted > 0; ++v) {
        for (ofi_txmsg_t *m = o->peers[v].tx_head; NULL != m; m = m->next) {
            if (m->nposted < m->nfrags && !tx_post(o, m)) {
                break; /* the peer fell back: its list is gone */
            }
        }
    }
}

static ofi_txmsg_t *tx_new(orte_overlay_t *o, orte_vpid_t dst, uint16_t tag, uint32_t seq,
                           const struct iovec *iov, int iovcnt, size_t length)
{
    size_t room = o->frag_bytes - OVERLAY_OFI_HEADER_BYTES;
    unsigned nfrags = 0 == length ? 1 : (unsigned) ((length + room - 1) / room);
    ofi_txmsg_t *m = calloc(1, sizeof(*m) + nfrags * sizeof(ofi_txfrag_t));
    size_t at = 0;

    if (NULL == m || NULL == (m->payload = malloc(length > 0 ? length : 1))) {
        free(m);
        return NULL;
    }
    for (int i = 0; i < iovcnt; ++i) {
        memcpy(m->payload + at, iov[i].iov_base, iov[i].iov_len);
        at += iov[i].iov_len;
    }
    *m = (ofi_txmsg_t){.dst = dst,
                       .tag = tag,
                       .seq = seq,
                       .payload = m->payload,
                       .length = length,
                       .nfrags = nfrags};
    for (unsigned i = 0; i < nfrags; ++i) {
        ofi_txfrag_t *f = &m->frags[i];
        size_t off = i * room;
        size_t len = length - off < room ? length - off : room;
        f->op.kind = OFI_OP_TX;
        f->msg = m;
        f->length = OVERLAY_OFI_HEADER_BYTES + len;
        if (NULL == (f->wire = malloc(f->length))) {
            m->nfrags = i;
            m->abandoned = true;
            overlay_ofi_tx_free(o, m);
            return NULL;
        }
        f->wire[0] = OVERLAY_OFI_WIRE_VERSION;
        f->wire[1] = OVERLAY_OFI_KIND_DATA;
        put16(f->wire + 2, tag);
        put32(f->wire + 4, o->vpid);
        put32(f->wire + 8, seq);
        put32(f->wire + 12, (uint32_t) length);
        put32(f->wire + 16, (uint32_t) off);
        memcpy(f->wire + OVERLAY_OFI_HEADER_BYTES, m->payload + off, len);
    }
    o->unposted += nfrags;
    return m;
}

int overlay_ofi_path_send(orte_overlay_t *o, orte_vpid_t dst, uint16_t tag, const struct iovec *iov,
                          int iovcnt, size_t length)
{
    ofi_peer_t *p;
    ofi_txmsg_t *m;

    if (!overlay_ofi_is_collective(tag) || !fabric_usable(o) || dst >= o->num_daemons ||
        dst == o->vpid) {
        return HERD_ERR_TAKE_NEXT;
    }
    p = &o->peers[dst];
    overlay_ofi_send_hello(o, dst);
    if (p->addr_known && !p->tx_failed && length > OVERLAY_OFI_MAX_MESSAGE) {
        fall_back(o, dst, "a message over the fabric's 64 MiB limit");
    }
    if (!p->addr_known || p->tx_failed) {
        o->count.coll_tcp++;
        return HERD_ERR_TAKE_NEXT;
    }
    if (NULL == (m = tx_new(o, dst, tag, p->tx_seq, iov, iovcnt, length))) {
        fall_back(o, dst, "out of memory");
        o->count.coll_tcp++;
        return HERD_ERR_TAKE_NEXT;
    }
    p->tx_seq++;
    *p->tx_tail = m;
    p->tx_tail = &m->next;
    o->count.msgs_sent++;
    o->count.bytes_sent += length;
    opal_output_verbose(10, overlay_ofi_output(),
                        "overlay ofi: daemon %u -> %u tag %u: %zu bytes over the fabric", o->vpid,
                        dst, tag, length);
    (void) tx_post(o, m);
    overlay_ofi_rearm(o, true);
    return HERD_SUCCESS;
}

static void tx_reap(orte_overlay_t *o, ofi_peer_t *p)
{
    while (NULL != p->tx_head && p->tx_head->ndone == p->tx_head->nfrags) {
        ofi_txmsg_t *m = p->tx_head;
        p->tx_head = m->next;
        if (NULL == p->tx_head) {
            p->tx_tail = &p->tx_head;
        }
        overlay_ofi_tx_free(o, m);
    }
}

static void tx_complete(orte_overlay_t *o, ofi_txfrag_t *f, int error)
{
    ofi_txmsg_t *m = f->msg;

    f->done = true;
    m->ndone++;
    o->pending_sends--;
    o->count.frags_done++;
    if (m->abandoned) {
        if (m->ndone == m->nposted) {
            ofi_txmsg_t **at = &o->abandoned;
            while (NULL != *at && *at != m) {
                at = &(*at)->next;
            }
            if (NULL != *at) {
                *at = m->next;
            }
            overlay_ofi_tx_free(o, m);
        }
        return;
    }
    if (0 != error) {
        char why[96];
        snprintf(why, sizeof(why), "a fabric send completed in error: %s", strerror(error));
        fall_back(o, m->dst, why);
        return;
    }
    tx_reap(o, &o->peers[m->dst]);
}

/* ---- receiving ---- */

static void drop(orte_overlay_t *o, const char *why, orte_vpid_t origin)
{
    o->count.dropped++;
    opal_output_verbose(1, overlay_ofi_output(),
                        "overlay ofi: daemon %u dropped a fabric message (origin %u): %s", o->vpid,
                        origin, why);
}

static void held_release(orte_overlay_t *o, ofi_peer_t *p, orte_vpid_t src)
{
    while (NULL != p->held_head && !o->dying) {
        ofi_held_t *h = p->held_head;
        p->held_head = h->next;
        if (NULL == p->held_head) {
            p->held_tail = &p->held_head;
        }
        overlay_ofi_deliver(o, src, h->tag, h->data, h->length);
        free(h);
    }
}

/* Deliver the peer's fabric messages that are next in order, then, once the fabric caught up
 * with a FALLBACK, the tcp ones held behind them. */
static void rx_deliver_ready(orte_overlay_t *o, orte_vpid_t src)
{
    ofi_peer_t *p = &o->peers[src];

    while (p->addr_known && NULL != p->rx_list && p->rx_list->seq == p->rx_seq &&
           p->rx_list->received == p->rx_list->total && !o->dying) {
        ofi_rxmsg_t *m = p->rx_list;
        p->rx_list = m->next;
        p->rx_seq++;
        o->count.msgs_recv++;
        o->count.bytes_recv += m->total;
        overlay_ofi_deliver(o, src, m->tag, m->data, m->total);
        free(m->data);
        free(m);
    }
    if (!o->dying && p->rx_fallback && p->rx_seq == p->rx_limit) {
        held_release(o, p, src);
    }
}

/* The message seq of the peer's, found or added in seq order. */
static ofi_rxmsg_t *rx_find(ofi_peer_t *p, uint32_t seq, uint16_t tag, uint32_t total)
{
    ofi_rxmsg_t **at = &p->rx_list;
    ofi_rxmsg_t *m;

    while (NULL != *at && (uint32_t) ((*at)->seq - p->rx_seq) < (uint32_t) (seq - p->rx_seq)) {
        at = &(*at)->next;
    }
    if (NULL != *at && (*at)->seq == seq) {
        m = *at;
        return m->tag == tag && m->total == total ? m : NULL;
    }
    if (NULL == (m = calloc(1, sizeof(*m))) || NULL == (m->data = malloc(total > 0 ? total : 1))) {
        free(m);
        return NULL;
    }
    m->seq = seq;
    m->tag = tag;
    m->total = total;
    m->next = *at;
    *at = m;
    return m;
}

/* One fragment, every header field checked against what this daemon expects. */
static void rx_fragment(orte_overlay_t *o, const uint8_t *buf, size_t length)
{
    uint16_t tag;
    uint32_t origin, seq, total, offset;
    size_t flen;
    ofi_peer_t *p;
    ofi_rxmsg_t *m;

    if (length < OVERLAY_OFI_HEADER_BYTES) {
        drop(o, "shorter than its header", ORTE_VPID_INVALID);
        return;
    }
    tag = get16(buf + 2);
    origin = get32(buf + 4);
    seq = get32(buf + 8);
    total = get32(buf + 12);
    offset = get32(buf + 16);
    flen = length - OVERLAY_OFI_HEADER_BYTES;
    if (OVERLAY_OFI_WIRE_VERSION != buf[0] || OVERLAY_OFI_KIND_DATA != buf[1]) {
        drop(o, "unknown version or kind", origin);
        return;
    }
    if (origin >= o->num_daemons || origin == o->vpid || !overlay_ofi_is_collective(tag)) {
        drop(o, "bad origin or tag", origin);
        return;
    }
    if (total > OVERLAY_OFI_MAX_MESSAGE || offset > total || flen > total - offset ||
        (0 == flen && 0 != total)) {
        drop(o, "bad length or offset", origin);
        return;
    }
    p = &o->peers[origin];
    if ((uint32_t) (seq - p->rx_seq) >= OVERLAY_OFI_WINDOW) {
        drop(o, "out of sequence", origin);
        return;
    }
    if (p->rx_fallback && (uint32_t) (seq - p->rx_seq) >= (uint32_t) (p->rx_limit - p->rx_seq)) {
        opal_output_verbose(5, overlay_ofi_output(),
                            "overlay ofi: daemon %u: fabric message %u of daemon %u came over "
                            "tcp again",
                            o->vpid, seq, origin);
        return;
    }
    if (NULL == (m = rx_find(p, seq, tag, total)) || flen > m->total - m->received) {
        drop(o, "does not match the message's other fragments", origin);
        return;
    }
    memcpy(m->data + offset, buf + OVERLAY_OFI_HEADER_BYTES, flen);
    m->received += (uint32_t) flen;
    rx_deliver_ready(o, origin);
}

void overlay_ofi_rx_repost(orte_overlay_t *o, ofi_rxbuf_t *rb)
{
    if (!rb->posted && HERD_SUCCESS == overlay_ofi_ops->post_recv(o->fabric, rb->buf, o->frag_bytes,
                                                                  &rb->op.ctx)) {
        rb->posted = true;
    }
}

void overlay_ofi_progress(orte_overlay_t *o)
{
    overlay_ofi_completion_t c[16];

    for (int round = 0; round < 64 && fabric_usable(o) && !o->dying; ++round) {
        int n = overlay_ofi_ops->poll(o->fabric, c, 16);
        if (n <= 0) {
            if (n < 0) {
                for (uint32_t v = 0; v < o->num_daemons; ++v) {
                    if (o->peers[v].addr_known) {
                        fall_back(o, v, "the completion queue failed");
                    }
                }
            }
            break;
        }
        for (int i = 0; i < n && !o->dying; ++i) {
            ofi_op_t *op = (ofi_op_t *) c[i].ctx;
            if (NULL != op && OFI_OP_TX == op->kind) {
                tx_complete(o, (ofi_txfrag_t *) op, c[i].error);
            } else if (NULL != op && OFI_OP_RX == op->kind) {
                ofi_rxbuf_t *rb = (ofi_rxbuf_t *) op;
                rb->posted = false;
                if (0 == c[i].error) {
                    rx_fragment(o, rb->buf, c[i].length);
                } else {
                    opal_output_verbose(1, overlay_ofi_output(),
                                        "overlay ofi: daemon %u: a fabric receive failed: %s",
                                        o->vpid, strerror(c[i].error));
                }
                if (!o->dying) {
                    overlay_ofi_rx_repost(o, rb);
                }
            }
        }
    }
    if (!o->dying && fabric_usable(o)) {
        for (int i = 0; i < OVERLAY_OFI_RECV_BUFFERS; ++i) {
            overlay_ofi_rx_repost(o, &o->rxbufs[i]); /* ones the provider had no room for */
        }
        if (o->unposted > 0) {
            tx_post_all(o);
        }
    }
}

/* ---- control messages and tcp arrivals ---- */

static uint64_t addr_hash(const uint8_t *addr, size_t alen)
{
    uint64_t h = 14695981039346656037ull; /* FNV-1a */
    for (size_t i = 0; i < alen; ++i) {
        h = (h ^ addr[i]) * 1099511628211ull;
    }
    return h;
}

void overlay_ofi_peer_drop_received(ofi_peer_t *p)
{
    while (NULL != p->rx_list) {
        ofi_rxmsg_t *m = p->rx_list;
        p->rx_list = m->next;
        free(m->data);
        free(m);
    }
    while (NULL != p->held_head) {
        ofi_held_t *h = p->held_head;
        p->held_head = h->next;
        free(h);
    }
    p->held_tail = &p->held_head;
}

/* A daemon that came back (a new process under the same vpid) starts from nothing: what was
 * in flight to or from the old one is dropped, numbering starts again, HELLOs again. */
static void peer_reset(orte_overlay_t *o, orte_vpid_t vpid)
{
    ofi_peer_t *p = &o->peers[vpid];

    while (NULL != p->tx_head) {
        ofi_txmsg_t *m = p->tx_head;
        p->tx_head = m->next;
        for (unsigned i = 0; i < m->nfrags; ++i) {
            if (!m->frags[i].posted) {
                o->unposted--;
            }
        }
        abandon(o, m);
    }
    overlay_ofi_peer_drop_received(p);
    *p = (ofi_peer_t){.tx_tail = &p->tx_head, .held_tail = &p->held_head};
    opal_output_verbose(1, overlay_ofi_output(),
                        "overlay ofi: daemon %u: daemon %u has a new fabric address (it "
                        "restarted): its fabric state starts over",
                        o->vpid, vpid);
}

static void control_hello(orte_overlay_t *o, orte_vpid_t src, const uint8_t *addr, size_t alen,
                          bool answer)
{
    ofi_peer_t *p = &o->peers[src];
    uint64_t h = addr_hash(addr, alen);

    if (p->addr_known && p->addr_hash != h) {
        peer_reset(o, src);
    }
    if (!p->addr_known) {
        if (HERD_SUCCESS != overlay_ofi_ops->insert(o->fabric, addr, alen, &p->dest)) {
            opal_output_verbose(1, overlay_ofi_output(),
                                "overlay ofi: daemon %u could not use the fabric address of "
                                "daemon %u: tcp to it",
                                o->vpid, src);
            return;
        }
        p->addr_known = true;
        p->addr_hash = h;
        opal_output_verbose(5, overlay_ofi_output(),
                            "overlay ofi: daemon %u has the fabric address of daemon %u", o->vpid,
                            src);
    }
    send_hello(o, src, answer);
    rx_deliver_ready(o, src);
}

static void control_fallback(orte_overlay_t *o, orte_vpid_t src, uint32_t first)
{
    ofi_peer_t *p = &o->peers[src];

    overlay_ofi_progress(o); /* what already arrived counts */
    if (o->dying) {
        return;
    }
    if ((uint32_t) (first - p->rx_seq) >= OVERLAY_OFI_WINDOW) {
        first = p->rx_seq; /* behind what was delivered: nothing to wait for */
    }
    p->rx_fallback = true;
    p->rx_limit = first;
    for (ofi_rxmsg_t **at = &p->rx_list; NULL != *at;) {
        ofi_rxmsg_t *m = *at;
        if ((uint32_t) (m->seq - p->rx_seq) >= (uint32_t) (first - p->rx_seq)) {
            *at = m->next;
            free(m->data);
            free(m);
        } else {
            at = &m->next;
        }
    }
    opal_output_verbose(1, overlay_ofi_output(),
                        "overlay ofi: daemon %u: daemon %u sends to it over tcp from its "
                        "message %u on",
                        o->vpid, src, first);
    rx_deliver_ready(o, src);
}

void overlay_ofi_control(orte_overlay_t *o, orte_vpid_t src, const void *data, size_t length)
{
    const uint8_t *d = data;
    size_t alen;

    if (!fabric_usable(o) || src >= o->num_daemons || src == o->vpid ||
        length < OVERLAY_OFI_CTL_BYTES || OVERLAY_OFI_WIRE_VERSION != d[0]) {
        if (fabric_usable(o)) {
            o->count.dropped++;
        }
        return; /* without a fabric a HELLO needs no answer: the peer stays on tcp */
    }
    alen = get16(d + 2);
    if (OVERLAY_OFI_CTL_HELLO == d[1] && alen > 0 && alen <= OVERLAY_OFI_MAX_ADDR &&
        length == OVERLAY_OFI_CTL_BYTES + alen) {
        control_hello(o, src, d + OVERLAY_OFI_CTL_BYTES, alen, 1 == get32(d + 4));
    } else if (OVERLAY_OFI_CTL_FALLBACK == d[1] && 0 == alen && length == OVERLAY_OFI_CTL_BYTES) {
        control_fallback(o, src, get32(d + 4));
    } else {
        drop(o, "a malformed control message", src);
    }
}

bool overlay_ofi_tcp_arrived(orte_overlay_t *o, orte_vpid_t src, uint16_t tag, const void *data,
                             size_t length)
{
    ofi_peer_t *p;
    ofi_held_t *h;

    if (!overlay_ofi_is_collective(tag) || !fabric_usable(o) || src >= o->num_daemons) {
        return true;
    }
    p = &o->peers[src];
    if (p->rx_fallback && p->rx_seq != p->rx_limit) {
        overlay_ofi_progress(o);
    }
    if (o->dying || !p->rx_fallback || (p->rx_seq == p->rx_limit && NULL == p->held_head)) {
        return !o->dying;
    }
    if (NULL == (h = malloc(sizeof(*h) + length))) {
        drop(o, "out of memory holding a tcp message", src);
        return false;
    }
    h->next = NULL;
    h->tag = tag;
    h->length = length;
    memcpy(h->data, data, length);
    *p->held_tail = h;
    p->held_tail = &h->next;
    return false;
}
