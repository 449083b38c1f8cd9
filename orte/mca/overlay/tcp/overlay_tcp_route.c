/* SPDX-License-Identifier: BSD-3-Clause */
/* overlay tcp routing: the neighbours of an endpoint (parent, children, and the descendants it
 * adopted when daemons between them were lost) and the next hop towards any daemon, around the
 * daemons known to be down. With none down this is the plain radix tree (orte/util/radix.h). */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/util/output.h"
#include "orte/mca/overlay/tcp/overlay_tcp.h"
#include "orte/util/radix.h"

bool overlay_tcp_is_down(const orte_overlay_t *overlay, orte_vpid_t vpid)
{
    return NULL != overlay->down && vpid < overlay->num_daemons &&
           0 != (overlay->down[vpid / 8] & (1u << (vpid % 8)));
}

int overlay_tcp_mark_down(orte_overlay_t *overlay, orte_vpid_t vpid)
{
    if (vpid >= overlay->num_daemons || vpid == overlay->vpid) {
        return HERD_ERR_BAD_PARAM;
    }
    if (NULL == overlay->down) {
        overlay->down = calloc((overlay->num_daemons + 7) / 8, 1);
        if (NULL == overlay->down) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    overlay->down[vpid / 8] |= (uint8_t) (1u << (vpid % 8));
    return HERD_SUCCESS;
}

static bool is_static_child(const orte_overlay_t *overlay, orte_vpid_t vpid)
{
    return 0 != overlay->num_children && vpid >= overlay->first_child &&
           vpid - overlay->first_child < overlay->num_children;
}

/* The peer kept for descendant vpid taken in because those between us are down; made (waiting
 * for it to connect) when make is set. */
static overlay_tcp_peer_t *adopted_peer(orte_overlay_t *overlay, orte_vpid_t vpid, bool make)
{
    for (uint32_t i = 0; i < overlay->num_adopted; i++) {
        if (overlay->adopted[i]->vpid == vpid) {
            return overlay->adopted[i];
        }
    }
    if (!make) {
        return NULL;
    }
    overlay_tcp_peer_t **grown =
        realloc(overlay->adopted, (overlay->num_adopted + 1) * sizeof(*grown));
    if (NULL == grown) {
        return NULL;
    }
    overlay->adopted = grown;
    overlay_tcp_peer_t *peer = calloc(1, sizeof(*peer));
    if (NULL == peer) {
        return NULL;
    }
    peer->vpid = vpid;
    peer->state = OVERLAY_TCP_PEER_WAITING;
    overlay->adopted[overlay->num_adopted++] = peer;
    opal_output_verbose(5, overlay_tcp_output(),
                        "overlay tcp: daemon %u adopts daemon %u (the daemons between them are "
                        "down)",
                        overlay->vpid, vpid);
    return peer;
}

overlay_tcp_peer_t *overlay_tcp_neighbour(orte_overlay_t *overlay, orte_vpid_t vpid)
{
    if (overlay->has_parent && vpid == overlay->parent.vpid) {
        return &overlay->parent;
    }
    if (is_static_child(overlay, vpid)) {
        return &overlay->children[vpid - overlay->first_child];
    }
    return adopted_peer(overlay, vpid, false);
}

/* The child of v whose subtree holds x (x a descendant of v). */
static orte_vpid_t child_toward(orte_vpid_t v, orte_vpid_t x, uint32_t radix)
{
    orte_vpid_t child = x;
    while (orte_radix_parent(child, radix) != v) {
        child = orte_radix_parent(child, radix);
    }
    return child;
}

overlay_tcp_peer_t *overlay_tcp_next_hop(orte_overlay_t *overlay, orte_vpid_t dst)
{
    orte_vpid_t me = overlay->vpid;
    if (dst >= overlay->num_daemons || dst == me) {
        return NULL;
    }
    if (!orte_radix_in_subtree(me, dst, overlay->radix)) {
        return overlay->has_parent ? &overlay->parent : NULL;
    }
    /* down the tree, past the daemons that are down: the first live one on the path is a
     * neighbour (a child, or a descendant adopted in their place) */
    orte_vpid_t hop = child_toward(me, dst, overlay->radix);
    while (hop != dst && overlay_tcp_is_down(overlay, hop)) {
        hop = child_toward(hop, dst, overlay->radix);
    }
    if (overlay_tcp_is_down(overlay, hop)) {
        /* a daemon down here that connected again (it rejoined the DVM): reachable itself,
         * while its old subtree stays routed around it */
        overlay_tcp_peer_t *back = overlay_tcp_neighbour(overlay, hop);
        return (NULL != back && OVERLAY_TCP_PEER_UP == back->state) ? back : NULL;
    }
    return is_static_child(overlay, hop) ? &overlay->children[hop - overlay->first_child]
                                         : adopted_peer(overlay, hop, true);
}

overlay_tcp_peer_t *overlay_tcp_accept_child(orte_overlay_t *overlay, orte_vpid_t vpid)
{
    if (is_static_child(overlay, vpid)) {
        return &overlay->children[vpid - overlay->first_child];
    }
    if (vpid == overlay->vpid || !orte_radix_in_subtree(overlay->vpid, vpid, overlay->radix)) {
        return NULL;
    }
    /* a descendant whose parent is lost, and every daemon between us gone too: down (the DVM
     * said so), or our own child whose connection we lost (the DVM may not have decided yet:
     * the descendant noticed the same loss at the same moment) */
    for (orte_vpid_t v = orte_radix_parent(vpid, overlay->radix); v != overlay->vpid;
         v = orte_radix_parent(v, overlay->radix)) {
        bool lost_child =
            is_static_child(overlay, v) &&
            OVERLAY_TCP_PEER_LOST == overlay->children[v - overlay->first_child].state;
        if (!overlay_tcp_is_down(overlay, v) && !lost_child) {
            return NULL;
        }
    }
    return adopted_peer(overlay, vpid, true);
}

/* The DVM says vpid is down: its connection (if any) closes without a callback, what was
 * queued for it or through it is dropped, and messages to its subtree go around it. */
int overlay_tcp_route_around(orte_overlay_t *overlay, orte_vpid_t vpid)
{
    if (NULL == overlay || vpid >= overlay->num_daemons || vpid == overlay->vpid ||
        (overlay->has_parent && vpid == overlay->parent.vpid)) {
        return HERD_ERR_BAD_PARAM;
    }
    int rc = overlay_tcp_mark_down(overlay, vpid);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    overlay_tcp_peer_t *peer = overlay_tcp_neighbour(overlay, vpid);
    if (NULL != peer) {
        if (NULL != peer->conn) {
            overlay_tcp_conn_close(peer->conn, false);
        }
        if (OVERLAY_TCP_PEER_UP == peer->state) {
            overlay->stats.neighbours_up--;
        }
        peer->state = OVERLAY_TCP_PEER_LOST;
        overlay_tcp_queue_drop(overlay, &peer->queue);
    }
    opal_output_verbose(5, overlay_tcp_output(),
                        "overlay tcp: daemon %u routes around daemon %u, which is down",
                        overlay->vpid, vpid);
    return HERD_SUCCESS;
}

void overlay_tcp_route_free(orte_overlay_t *overlay)
{
    for (uint32_t i = 0; i < overlay->num_adopted; i++) {
        overlay_tcp_queue_drop(overlay, &overlay->adopted[i]->queue);
        free(overlay->adopted[i]);
    }
    free(overlay->adopted);
    overlay->adopted = NULL;
    overlay->num_adopted = 0;
    free(overlay->down);
    overlay->down = NULL;
}
