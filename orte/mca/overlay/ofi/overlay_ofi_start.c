/* SPDX-License-Identifier: BSD-3-Clause */
/* overlay ofi: the fabric path's start (receive buffers posted, the completion queue in the
 * loop) and stop (counters said, the fabric closed, everything the path holds released), and
 * the count of endpoints a process has open. */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/util/output.h"
#include "orte/mca/overlay/ofi/overlay_ofi_internal.h"

/* RDM endpoints open in this process (a forked child starts from none). */
static unsigned open_endpoints;
static pid_t open_endpoints_pid;

bool overlay_ofi_endpoint_slot(bool take)
{
    if (open_endpoints_pid != getpid()) {
        open_endpoints_pid = getpid();
        open_endpoints = 0;
    }
    if (open_endpoints >= OVERLAY_OFI_MAX_ENDPOINTS) {
        return false;
    }
    open_endpoints += take ? 1 : 0;
    return true;
}

static int rx_start(orte_overlay_t *o, char **reason)
{
    o->rxbufs = calloc(OVERLAY_OFI_RECV_BUFFERS, sizeof(*o->rxbufs));
    if (NULL == o->rxbufs) {
        *reason = strdup("out of memory");
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (int i = 0; i < OVERLAY_OFI_RECV_BUFFERS; ++i) {
        ofi_rxbuf_t *rb = &o->rxbufs[i];
        rb->op.kind = OFI_OP_RX;
        if (NULL == (rb->buf = malloc(o->frag_bytes))) {
            *reason = strdup("out of memory");
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        overlay_ofi_rx_repost(o, rb);
        if (!rb->posted) {
            *reason = strdup("fi_recv failed: the receive buffers could not be posted");
            return HERD_ERR_NOT_AVAILABLE;
        }
    }
    return HERD_SUCCESS;
}

static int events_start(orte_overlay_t *o, char **reason)
{
    int fd = overlay_ofi_ops->wait_fd(o->fabric);

    if (NULL == o->base) {
        return HERD_SUCCESS; /* a caller that drives progress itself (unit tests) */
    }
    if ((fd >= 0 &&
         HERD_SUCCESS != opal_event_fd_create(o->base, fd, OPAL_EVENT_READ | OPAL_EVENT_PERSIST,
                                              overlay_ofi_fd_event, o, &o->cq_event)) ||
        HERD_SUCCESS !=
            opal_event_timer_create(o->base, false, overlay_ofi_poll_event, o, &o->poll_timer)) {
        *reason = strdup("the completion queue could not be added to the event loop");
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (NULL != o->cq_event && HERD_SUCCESS != opal_event_add(o->cq_event, NULL)) {
        *reason = strdup("the completion queue could not be added to the event loop");
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    overlay_ofi_rearm(o, false);
    return HERD_SUCCESS;
}

int overlay_ofi_path_start(orte_overlay_t *o, char **reason)
{
    size_t max = overlay_ofi_ops->max_msg_size(o->fabric);
    int rc;

    *reason = NULL;
    o->frag_bytes = max < OVERLAY_OFI_MAX_FRAGMENT ? max : OVERLAY_OFI_MAX_FRAGMENT;
    if (o->frag_bytes < OVERLAY_OFI_HEADER_BYTES + 64) {
        *reason = strdup("the provider's largest message is too small for a fragment");
        return HERD_ERR_NOT_AVAILABLE;
    }
    if (NULL == (o->peers = calloc(o->num_daemons, sizeof(*o->peers)))) {
        *reason = strdup("out of memory");
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t v = 0; v < o->num_daemons; ++v) {
        o->peers[v].tx_tail = &o->peers[v].tx_head;
        o->peers[v].held_tail = &o->peers[v].held_head;
    }
    rc = rx_start(o, reason);
    if (HERD_SUCCESS == rc) {
        rc = events_start(o, reason);
    }
    if (HERD_SUCCESS == rc) {
        opal_output_verbose(2, overlay_ofi_output(),
                            "overlay ofi: daemon %u: fragments of %zu bytes, completions %s",
                            o->vpid, o->frag_bytes,
                            NULL != o->cq_event || NULL == o->base ? "on a wait descriptor"
                                                                   : "polled on a timer");
    }
    return rc;
}

/* Everything the path holds; the fabric is closed (or left to the parent process) first, so
 * that nothing posted still points into it. */
void overlay_ofi_path_stop(orte_overlay_t *o, bool close_fabric)
{
    if (NULL != o->peers) {
        opal_output_verbose(
            2, overlay_ofi_output(),
            "overlay ofi: daemon %u sent %llu messages / %llu bytes over the "
            "fabric, received %llu messages / %llu bytes; %llu collective "
            "messages over tcp, %llu re-sent over tcp, %llu dropped",
            o->vpid, (unsigned long long) o->count.msgs_sent,
            (unsigned long long) o->count.bytes_sent, (unsigned long long) o->count.msgs_recv,
            (unsigned long long) o->count.bytes_recv, (unsigned long long) o->count.coll_tcp,
            (unsigned long long) o->count.resent_tcp, (unsigned long long) o->count.dropped);
    }
    if (NULL != o->cq_event) {
        opal_event_free(o->cq_event);
        o->cq_event = NULL;
    }
    if (NULL != o->poll_timer) {
        opal_event_free(o->poll_timer);
        o->poll_timer = NULL;
    }
    if (NULL != o->fabric && close_fabric) {
        overlay_ofi_ops->close(o->fabric);
        if (open_endpoints_pid == getpid() && open_endpoints > 0) {
            open_endpoints--;
        }
    }
    o->fabric = NULL;
    for (uint32_t v = 0; NULL != o->peers && v < o->num_daemons; ++v) {
        ofi_peer_t *p = &o->peers[v];
        while (NULL != p->tx_head) {
            ofi_txmsg_t *m = p->tx_head;
            p->tx_head = m->next;
            m->abandoned = true;
            overlay_ofi_tx_free(o, m);
        }
        overlay_ofi_peer_drop_received(p);
    }
    while (NULL != o->abandoned) {
        ofi_txmsg_t *m = o->abandoned;
        o->abandoned = m->next;
        overlay_ofi_tx_free(o, m);
    }
    for (int i = 0; NULL != o->rxbufs && i < OVERLAY_OFI_RECV_BUFFERS; ++i) {
        free(o->rxbufs[i].buf);
    }
    free(o->rxbufs);
    free(o->peers);
    o->rxbufs = NULL;
    o->peers = NULL;
}
