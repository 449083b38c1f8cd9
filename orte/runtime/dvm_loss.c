/* SPDX-License-Identifier: BSD-3-Clause */
/* A DVM that outlives a lost daemon (dvm_on_node_loss continue): the lost daemon's node is
 * marked down, every daemon that routes towards it goes around it (overlay and grpcomm), the
 * daemons below it re-attach to their nearest live ancestor, and the root re-synchronises their
 * command broadcasts; jobs elsewhere never notice. docs/dvm.md, "Node loss". */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/argv.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"
#include "orte/runtime/dvm_internal.h"
#include "orte/util/radix.h"

bool dvm_loss_is_down(const orte_dvm_t *dvm, orte_vpid_t vpid)
{
    return NULL != dvm->down && vpid < dvm->size && dvm->down[vpid];
}

bool orte_dvm_node_up(const orte_dvm_t *dvm, uint32_t node_index)
{
    orte_vpid_t vpid = node_index + 1;
    return !dvm_loss_is_down(dvm, vpid) &&
           (NULL == dvm->root.awaiting || vpid >= dvm->size || !dvm->root.awaiting[vpid]);
}

static int mark_down(orte_dvm_t *dvm, orte_vpid_t vpid)
{
    if (NULL == dvm->down) {
        dvm->down = calloc(dvm->size, sizeof(*dvm->down));
        if (NULL == dvm->down) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    if (!dvm->down[vpid]) {
        dvm->down[vpid] = true;
        dvm->num_down++;
    }
    return HERD_SUCCESS;
}

void dvm_loss_route_around(orte_dvm_t *dvm, orte_vpid_t vpid)
{
    if (vpid >= dvm->size || vpid == dvm->vpid || HERD_SUCCESS != mark_down(dvm, vpid)) {
        return;
    }
    if (orte_radix_parent(dvm->vpid, dvm->radix) != vpid && NULL != dvm->ovl->route_around) {
        dvm->ovl->route_around(dvm->overlay, vpid);
    }
    if (NULL != dvm->gc->lost) {
        dvm->gc->lost(dvm->grpcomm, vpid);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* the root */

static void put_u32(uint8_t *out, uint32_t value)
{
    out[0] = (uint8_t) (value >> 24);
    out[1] = (uint8_t) (value >> 16);
    out[2] = (uint8_t) (value >> 8);
    out[3] = (uint8_t) value;
}

/* The children of vpid that are not down: they must re-attach to an ancestor. */
static void await_children(orte_dvm_t *dvm, orte_vpid_t vpid)
{
    orte_vpid_t children[1024];
    uint32_t count =
        orte_radix_children(vpid, dvm->size, dvm->radix < 1024 ? dvm->radix : 1024, children);
    bool any = false;
    if (dvm_rejoin_was_rejoined(dvm, vpid)) {
        count = 0; /* a rejoined daemon is a leaf: its old children re-attached elsewhere */
    }
    for (uint32_t i = 0; i < count && NULL != dvm->root.awaiting; ++i) {
        if (!dvm_loss_is_down(dvm, children[i])) {
            dvm->root.awaiting[children[i]] = true;
            any = true;
        }
    }
    if (any && NULL != dvm->root.reattach_timer) {
        struct timeval limit = {.tv_sec = dvm->vars->reattach_timeout};
        opal_event_add(dvm->root.reattach_timer, &limit);
    }
}

void dvm_loss_root_node_down(orte_dvm_t *dvm, orte_vpid_t vpid, const char *reason)
{
    if (0 == vpid || vpid >= dvm->size || dvm_loss_is_down(dvm, vpid)) {
        return;
    }
    opal_show_help(DVM_HELP_FILE, "node-down", false, dvm_tree_node_name(dvm, vpid), vpid, reason);
    dvm_loss_route_around(dvm, vpid);
    if (NULL != dvm->root.awaiting) {
        dvm->root.awaiting[vpid] = false;
    }
    await_children(dvm, vpid);
    /* every daemon that routes towards it goes around it too */
    uint8_t payload[4];
    put_u32(payload, vpid);
    orte_dvm_root_command(dvm, ORTE_DVM_CMD_NODE_DOWN, payload, sizeof(payload));
}

/* The re-attach limit passed: those still awaited are down too (and their children awaited). */
static void reattach_timeout_cb(int fd, short what, void *arg)
{
    orte_dvm_t *dvm = arg;
    for (orte_vpid_t v = 1; v < dvm->size; ++v) {
        if (dvm->root.awaiting[v]) {
            char reason[256];
            snprintf(reason, sizeof(reason),
                     "its parent was lost and it did not re-attach within %d seconds "
                     "(dvm_reattach_timeout)",
                     dvm->vars->reattach_timeout);
            dvm->root.awaiting[v] = false;
            dvm_loss_root_node_down(dvm, v, reason);
        }
    }
}

/* ORTE_DVM_TAG_REATTACHED: a daemon below a lost one is back, through an ancestor. It gets the
 * number of the next command broadcast (those in between went past it); one taken for down
 * meanwhile is told it is out. */
static void root_reattached(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                            const void *data, size_t length, void *arg)
{
    orte_dvm_t *dvm = arg;
    opal_buffer_t buffer;
    bool welcome = !dvm_loss_is_down(dvm, src) && !dvm->stopping;
    if (src == 0 || src >= dvm->size) {
        return;
    }
    if (welcome) {
        dvm->root.awaiting[src] = false;
        orte_vpid_t via = orte_radix_parent(src, dvm->radix);
        while (0 != via && dvm_loss_is_down(dvm, via)) {
            via = orte_radix_parent(via, dvm->radix);
        }
        opal_show_help(DVM_HELP_FILE, "reattached", false, dvm_tree_node_name(dvm, src), src, via);
    }
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_pack_uint32(&buffer, dvm->next_command) &&
        HERD_SUCCESS == opal_buffer_pack_uint8(&buffer, welcome ? 1 : 0)) {
        dvm->ovl->send(dvm->overlay, src, ORTE_DVM_TAG_RESYNC, buffer.base, buffer.used);
    }
    opal_buffer_destruct(&buffer);
}

int dvm_loss_root_open(orte_dvm_t *dvm)
{
    const char *policy = dvm->vars->on_node_loss;
    dvm->survive_loss = 0 == strcmp(policy, "continue") ||
                        (0 == strcmp(policy, "auto") && dvm->root.options.persistent);
    if (!dvm->survive_loss) {
        return HERD_SUCCESS;
    }
    dvm->root.awaiting = calloc(dvm->size, sizeof(*dvm->root.awaiting));
    if (NULL == dvm->root.awaiting) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    int rc = opal_event_timer_create(dvm->base, false, reattach_timeout_cb, dvm,
                                     &dvm->root.reattach_timer);
    if (HERD_SUCCESS == rc) {
        rc = dvm->ovl->register_recv(dvm->overlay, ORTE_DVM_TAG_REATTACHED, root_reattached, dvm);
    }
    return rc;
}

void dvm_loss_root_release(orte_dvm_t *dvm)
{
    if (NULL != dvm->root.reattach_timer) {
        opal_event_free(dvm->root.reattach_timer);
        dvm->root.reattach_timer = NULL;
    }
    free(dvm->root.awaiting);
    dvm->root.awaiting = NULL;
    free(dvm->down);
    dvm->down = NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* a node daemon */

/* ORTE_DVM_TAG_RESYNC: the root's answer to our re-attachment. */
static void daemon_resync(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                          size_t length, void *arg)
{
    orte_dvm_t *dvm = arg;
    opal_buffer_t buffer;
    uint32_t next = 0;
    uint8_t welcome = 0;
    opal_buffer_init(&buffer);
    int rc = opal_buffer_load(&buffer, data, length);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_unpack_uint32(&buffer, &next);
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_unpack_uint8(&buffer, &welcome);
    }
    opal_buffer_destruct(&buffer);
    if (0 != src || HERD_SUCCESS != rc) {
        return;
    }
    if (!welcome) {
        /* taken for down while it was away (a node that hung, then woke): it is out */
        dvm->status = HERD_ERR_UNREACH;
        dvm_leave_loop(dvm);
        return;
    }
    dvm->daemon.reattaching = false;
    dvm->daemon.current = dvm->daemon.trying;
    dvm->daemon.attempts = 0; /* attached: a later loss starts over from the new parent */
    if (next != dvm->next_command) {
        /* the broadcasts in between went past us: wait for the next one instead */
        dvm->gc->abort_all(dvm->grpcomm, HERD_ERR_UNREACH);
        dvm->next_command = next;
        dvm_command_xcast(dvm, NULL, 0);
    }
}

int dvm_loss_daemon_open(orte_dvm_t *dvm, const char *parent_uri, const char *ancestors)
{
    dvm_daemon_t *d = &dvm->daemon;
    char **entries = opal_argv_split(NULL != ancestors ? ancestors : "", ' ');
    uint32_t count = opal_argv_count(entries) + 1;
    d->ancestors = calloc(count, sizeof(*d->ancestors));
    d->ancestor_uris = calloc(count + 1, sizeof(*d->ancestor_uris));
    int rc = (NULL != d->ancestors && NULL != d->ancestor_uris) ? HERD_SUCCESS
                                                                : HERD_ERR_OUT_OF_RESOURCE;
    /* the parent first, then the ancestors above it, nearest first */
    if (HERD_SUCCESS == rc) {
        d->ancestors[0] = orte_radix_parent(dvm->vpid, dvm->radix);
        d->ancestor_uris[0] = strdup(parent_uri);
        d->num_ancestors = 1;
    }
    for (uint32_t i = 0; HERD_SUCCESS == rc && NULL != entries && NULL != entries[i]; ++i) {
        char *eq = strchr(entries[i], '=');
        if (NULL == eq) {
            continue;
        }
        *eq = '\0';
        d->ancestors[d->num_ancestors] = (orte_vpid_t) strtoul(entries[i], NULL, 10);
        d->ancestor_uris[d->num_ancestors] = strdup(eq + 1);
        if (NULL == d->ancestor_uris[d->num_ancestors]) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
            break;
        }
        d->num_ancestors++;
    }
    opal_argv_free(entries);
    d->current = 0;
    d->attempts = 0;
    if (HERD_SUCCESS == rc && dvm->survive_loss) {
        rc = dvm->ovl->register_recv(dvm->overlay, ORTE_DVM_TAG_RESYNC, daemon_resync, dvm);
    }
    return rc;
}

/* Attempts at one ancestor before the next one up: it refuses us until it has noticed the loss
 * of the daemons between (the same loss we noticed, at about the same moment). */
#define REATTACH_ATTEMPTS 10
#define REATTACH_PAUSE_MS 100

static void try_ancestor(orte_dvm_t *dvm)
{
    dvm_daemon_t *d = &dvm->daemon;
    uint32_t i = d->trying;
    d->attempts++;
    if (HERD_SUCCESS ==
        dvm->ovl->connect_ancestor(dvm->overlay, d->ancestors[i], d->ancestor_uris[i])) {
        d->reattaching = true;
        /* waits for the link; the root answers with where the broadcasts are */
        dvm->ovl->send(dvm->overlay, 0, ORTE_DVM_TAG_REATTACHED, NULL, 0);
        return;
    }
    /* could not even start: the lost callback will not come, so go on from here */
    dvm_loss_daemon_reattach(dvm, HERD_ERR_UNREACH, "the connection could not be started");
}

static void retry_cb(int fd, short what, void *arg)
{
    try_ancestor(arg);
}

bool dvm_loss_daemon_reattach(orte_dvm_t *dvm, int status, const char *reason)
{
    dvm_daemon_t *d = &dvm->daemon;
    if (!dvm->survive_loss || HERD_SUCCESS == status || dvm->done ||
        NULL == dvm->ovl->connect_ancestor) {
        return false;
    }
    if (0 == d->attempts || d->attempts >= REATTACH_ATTEMPTS) {
        /* a fresh loss: the one above the ancestor we were attached to; or that one keeps
         * refusing us: the next one up */
        d->trying = (0 == d->attempts) ? d->current + 1 : d->trying + 1;
        d->attempts = 0;
        if (d->trying >= d->num_ancestors) {
            opal_show_help(DVM_HELP_FILE, "daemon-reattach-failed", false,
                           NULL != d->mine ? d->mine->node_name : "?", dvm->vpid, reason);
            return false;
        }
        opal_output_verbose(1, OPAL_OUTPUT_STDERR,
                            "herdd: daemon %u lost its parent (%s): re-attaching to daemon %u",
                            dvm->vpid, reason, d->ancestors[d->trying]);
        if (NULL != dvm->gc->lost) {
            dvm->gc->lost(dvm->grpcomm, d->ancestors[d->trying - 1]);
        }
    }
    if (NULL == d->retry_timer &&
        HERD_SUCCESS != opal_event_timer_create(dvm->base, false, retry_cb, dvm, &d->retry_timer)) {
        return false;
    }
    struct timeval pause = {.tv_sec = 0,
                            .tv_usec = 0 == d->attempts ? 0 : REATTACH_PAUSE_MS * 1000};
    opal_event_add(d->retry_timer, &pause);
    return true;
}

void dvm_loss_daemon_node_down(orte_dvm_t *dvm, const uint8_t *payload, size_t len)
{
    if (len < 4) {
        return;
    }
    orte_vpid_t vpid = ((uint32_t) payload[0] << 24) | ((uint32_t) payload[1] << 16) |
                       ((uint32_t) payload[2] << 8) | payload[3];
    /* our own parent is ours to handle when its connection drops */
    if (vpid != dvm->daemon.ancestors[dvm->daemon.current]) {
        dvm_loss_route_around(dvm, vpid);
    }
}

void dvm_loss_daemon_release(orte_dvm_t *dvm)
{
    dvm_daemon_t *d = &dvm->daemon;
    for (uint32_t i = 0; NULL != d->ancestor_uris && i < d->num_ancestors; ++i) {
        free(d->ancestor_uris[i]);
    }
    free(d->ancestor_uris);
    free(d->ancestors);
    if (NULL != d->retry_timer) {
        opal_event_free(d->retry_timer);
        d->retry_timer = NULL;
    }
    d->ancestor_uris = NULL;
    d->ancestors = NULL;
    d->num_ancestors = 0;
    free(dvm->down);
    dvm->down = NULL;
}
