/* SPDX-License-Identifier: BSD-3-Clause */
/* overlay tcp heartbeats: a hung neighbour (stopped, frozen in the kernel, swapping for ever) is
 * noticed as surely as a dead one. One timer per endpoint looks at every watched connection a
 * few times per timeout; a message costs two flags (overlay_tcp_conn.c sets them where bytes
 * go out and come in), never a clock read or a syscall. */
#include "herd_config.h"

#include <stdio.h>
#include <string.h>

#include "opal/util/output.h"
#include "orte/mca/overlay/tcp/overlay_tcp.h"

/* Looks per timeout: a neighbour is lost after at least the whole timeout of silence and at
 * most a sixth more. */
#define OVERLAY_TCP_HEARTBEAT_TICKS 6u
/* A side that sent nothing for a third of the timeout sends a heartbeat, so the longest gap a
 * live neighbour leaves is about half the timeout: half of it is slack for a busy loop. */
#define OVERLAY_TCP_HEARTBEAT_QUIET 3u

static void heartbeat_tick_cb(int fd, short what, void *arg);

void overlay_tcp_duration_format(uint64_t ms, char *text, size_t size)
{
    if (ms < 1000) {
        snprintf(text, size, "%llu ms", (unsigned long long) ms);
    } else if (0 == ms % 1000) {
        snprintf(text, size, "%llu s", (unsigned long long) (ms / 1000));
    } else {
        snprintf(text, size, "%.1f s", (double) ms / 1000.0);
    }
}

/* (Re)arm the endpoint's timer with period tick_ms. */
static int heartbeat_arm(orte_overlay_t *overlay, uint32_t tick_ms)
{
    struct timeval period = {.tv_sec = (time_t) (tick_ms / 1000),
                             .tv_usec = (suseconds_t) (tick_ms % 1000) * 1000};
    int rc;

    if (NULL == overlay->heartbeat_timer) {
        rc = opal_event_timer_create(overlay->base, true, heartbeat_tick_cb, overlay,
                                     &overlay->heartbeat_timer);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
    opal_event_del(overlay->heartbeat_timer);
    rc = opal_event_add(overlay->heartbeat_timer, &period);
    overlay->heartbeat_tick_ms = HERD_SUCCESS == rc ? tick_ms : 0;
    return rc;
}

/* The connection's timeout from both ends' (the smaller; 0 at either end: off), and a timer fine
 * enough for it. */
static void heartbeat_set_timeout(overlay_tcp_conn_t *conn, uint32_t peer_timeout_ms)
{
    orte_overlay_t *overlay = conn->overlay;
    uint32_t own = overlay->heartbeat_timeout_ms;
    uint32_t tick;

    conn->hb_peer_timeout_ms = peer_timeout_ms;
    conn->hb_timeout_ms = own < peer_timeout_ms ? own : peer_timeout_ms;
    if (0 == conn->hb_timeout_ms) {
        return;
    }
    tick = conn->hb_timeout_ms / OVERLAY_TCP_HEARTBEAT_TICKS;
    tick = 0 == tick ? 1 : tick;
    if (0 != overlay->heartbeat_tick_ms && overlay->heartbeat_tick_ms <= tick) {
        return;
    }
    if (HERD_SUCCESS != heartbeat_arm(overlay, tick)) {
        /* out of memory for a timer: the connection is still good, only unwatched */
        opal_output_verbose(1, overlay_tcp_output(),
                            "overlay tcp: daemon %u cannot watch daemon %u for heartbeats: no "
                            "timer",
                            overlay->vpid, conn->peer->vpid);
        conn->hb_timeout_ms = 0;
    }
}

void overlay_tcp_heartbeat_watch(overlay_tcp_conn_t *conn, uint32_t peer_timeout_ms)
{
    conn->hb_sent = false;
    conn->hb_heard = false;
    conn->hb_quiet_ms = 0;
    conn->hb_silent_ms = 0;
    /* the next tick may come at once: skip it, so that silence is counted in whole ticks */
    conn->hb_tick = conn->overlay->heartbeat_ticks + 1;
    heartbeat_set_timeout(conn, peer_timeout_ms);
}

int overlay_tcp_heartbeat_recv(overlay_tcp_conn_t *conn, const overlay_tcp_header_t *header,
                               const uint8_t *payload, char *why, size_t why_size)
{
    overlay_tcp_heartbeat_t heartbeat;
    int rc;

    rc = overlay_tcp_heartbeat_decode(payload, header->length, &heartbeat, why, why_size);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    /* a heartbeat is never forwarded: it comes from the neighbour itself, to us */
    if (header->src != conn->peer->vpid || header->dst != conn->overlay->vpid) {
        snprintf(why, why_size,
                 "a HEARTBEAT from daemon %u to daemon %u came on the connection from daemon %u",
                 header->src, header->dst, conn->peer->vpid);
        return HERD_ERR_UNPACK_FAILURE;
    }
    if (heartbeat.timeout_ms != conn->hb_peer_timeout_ms) {
        heartbeat_set_timeout(conn, heartbeat.timeout_ms);
    }
    return HERD_SUCCESS;
}

/* Nothing went out on conn for a third of its timeout: say we are here. Not behind queued data:
 * then the socket is full, and the neighbour, not us, is the one not keeping up. */
static void heartbeat_send(overlay_tcp_conn_t *conn)
{
    orte_overlay_t *overlay = conn->overlay;
    overlay_tcp_heartbeat_t heartbeat = {.timeout_ms = overlay->heartbeat_timeout_ms};
    overlay_tcp_header_t header = {
        .version = OVERLAY_TCP_PROTOCOL_VERSION,
        .type = OVERLAY_TCP_MSG_HEARTBEAT,
        .src = overlay->vpid,
        .dst = conn->peer->vpid,
    };
    uint8_t payload[4];
    size_t length = 0;

    if (NULL != conn->peer->queue.head ||
        HERD_SUCCESS !=
            overlay_tcp_heartbeat_encode(&heartbeat, payload, sizeof(payload), &length)) {
        return;
    }
    header.length = (uint32_t) length;
    struct iovec iov = {.iov_base = payload, .iov_len = length};
    if (HERD_SUCCESS == overlay_tcp_peer_send(overlay, conn->peer, &header, &iov, 1, length)) {
        overlay->stats.heartbeats_sent++;
    }
}

static void heartbeat_lost(overlay_tcp_conn_t *conn)
{
    char span[32];
    char reason[512];

    overlay_tcp_duration_format(conn->hb_timeout_ms, span, sizeof(span));
    snprintf(reason, sizeof(reason),
             "daemon %u (%s) stopped answering: nothing heard from it for %s "
             "(dvm_heartbeat_timeout)",
             conn->peer->vpid, conn->address, span);
    overlay_tcp_conn_fail(conn, HERD_ERR_TIMEOUT, reason);
}

static uint32_t add_saturated(uint32_t a, uint32_t b)
{
    return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

/* One look at conn; true when it was lost (the connection list may have changed under us). */
static bool heartbeat_look(overlay_tcp_conn_t *conn, uint32_t tick_ms)
{
    conn->hb_tick = conn->overlay->heartbeat_ticks;
    conn->hb_silent_ms = conn->hb_heard ? 0 : add_saturated(conn->hb_silent_ms, tick_ms);
    conn->hb_quiet_ms = conn->hb_sent ? 0 : add_saturated(conn->hb_quiet_ms, tick_ms);
    conn->hb_heard = false;
    conn->hb_sent = false;
    if (conn->hb_silent_ms >= conn->hb_timeout_ms) {
        heartbeat_lost(conn);
        return true;
    }
    if (conn->hb_quiet_ms >= conn->hb_timeout_ms / OVERLAY_TCP_HEARTBEAT_QUIET) {
        heartbeat_send(conn);
    }
    return false;
}

/* Counted in ticks, not by the clock: if our own loop was blocked, the neighbours were not
 * silent, we were not listening, and a late tick counts as one. */
static void heartbeat_tick_cb(int fd, short what, void *arg)
{
    orte_overlay_t *overlay = arg;
    uint32_t tick_ms = overlay->heartbeat_tick_ms;
    bool watched = false;
    overlay_tcp_conn_t *conn;

    overlay->heartbeat_ticks++;
    overlay_tcp_enter(overlay);
    conn = overlay->conns;
    while (NULL != conn && !overlay->finalize_requested) {
        if (OVERLAY_TCP_CONN_UP != conn->state || NULL == conn->peer || 0 == conn->hb_timeout_ms) {
            conn = conn->next;
            continue;
        }
        watched = true;
        if (conn->hb_tick >= overlay->heartbeat_ticks) {
            conn = conn->next; /* new since the last tick, or looked at already */
            continue;
        }
        /* a loss runs the lost callback, which may close other connections: start over (the
         * ones looked at are skipped) */
        conn = heartbeat_look(conn, tick_ms) ? overlay->conns : conn->next;
    }
    if (!watched && NULL != overlay->heartbeat_timer) {
        opal_event_del(overlay->heartbeat_timer);
        overlay->heartbeat_tick_ms = 0;
    }
    overlay_tcp_leave(overlay);
}

void overlay_tcp_heartbeat_free(orte_overlay_t *overlay)
{
    opal_event_free(overlay->heartbeat_timer);
    overlay->heartbeat_timer = NULL;
}
