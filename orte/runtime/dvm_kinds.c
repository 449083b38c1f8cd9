/* SPDX-License-Identifier: BSD-3-Clause */
/* The start-up inventory exchange by kinds, for a DVM whose nodes' inventories differ only by
 * the node's name and address (simulated nodes hosted many to a process, dvm_virtual_*.c): a
 * daemon's record is its inventory with its name and address left out, each daemon sends its
 * parent its subtree's records as (record, vpid ranges), identical records once, and the root
 * broadcasts the whole table. Every daemon then holds O(kinds + ranges) bytes instead of n
 * inventories, and rebuilds a node's inventory from the allocation's name and the node's address
 * when a job needs it. */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/argv.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"
#include "orte/runtime/dvm_internal.h"
#include "orte/util/radix.h"

/* What stands for the node's name and address in a record. */
#define KINDS_PLACEHOLDER "@"
#define KINDS_URI_PREFIX  "tcp://"
#define KINDS_REASON_SIZE 256

bool dvm_kinds_wanted(const orte_dvm_t *dvm)
{
    return 0 == dvm->vpid ? dvm_virtual_wanted(dvm) : dvm->hosted;
}

/* ------------------------------------------------------------------------------------------ */
/* records and inventories */

/* The node's address as its session endpoints name it: the host part of its URI. */
static void node_address(orte_vpid_t vpid, char *text, size_t size)
{
    char uri[64];
    dvm_virtual_uri(vpid, 1, uri, sizeof(uri));
    const char *host = uri + strlen(KINDS_URI_PREFIX);
    const char *colon = strrchr(host, ':');
    snprintf(text, size, "%.*s", (int) (colon - host), host);
}

/* This daemon's record: its inventory with the name and the address in its session endpoints
 * replaced by the placeholder. */
static int own_record(const orte_dvm_t *dvm, opal_buffer_t *buffer)
{
    orte_inventory_t copy = *dvm->daemon.mine;
    char address[64], prefix[96];
    char **uris = NULL;
    int rc = HERD_SUCCESS;
    node_address(dvm->vpid, address, sizeof(address));
    snprintf(prefix, sizeof(prefix), KINDS_URI_PREFIX "%s:", address);
    for (char **u = dvm->daemon.mine->session_uris; HERD_SUCCESS == rc && NULL != u && *u; ++u) {
        char templated[320];
        if (0 == strncmp(*u, prefix, strlen(prefix))) {
            snprintf(templated, sizeof(templated), KINDS_URI_PREFIX KINDS_PLACEHOLDER ":%s",
                     *u + strlen(prefix));
        } else {
            snprintf(templated, sizeof(templated), "%s", *u);
        }
        rc = opal_argv_append(&uris, templated);
    }
    copy.node_name = (char *) KINDS_PLACEHOLDER;
    copy.session_uris = uris;
    copy.xml = NULL;
    if (HERD_SUCCESS == rc) {
        rc = orte_inventory_pack(buffer, &copy, false);
    }
    opal_argv_free(uris);
    return rc;
}

static const dvm_kinds_kind_t *kind_of(const dvm_kinds_t *k, orte_vpid_t vpid)
{
    for (uint32_t i = 0; i < k->num_kinds; ++i) {
        for (uint32_t r = 0; r < k->kinds[i].num_ranges; ++r) {
            const dvm_kinds_range_t *range = &k->kinds[i].ranges[r];
            if (vpid >= range->first && vpid - range->first < range->count) {
                return &k->kinds[i];
            }
        }
    }
    return NULL;
}

int dvm_kinds_inventory(const orte_dvm_t *dvm, const orte_allocation_t *names, orte_vpid_t vpid,
                        orte_inventory_t **inventory)
{
    const dvm_kinds_kind_t *kind = NULL != dvm->kinds ? kind_of(dvm->kinds, vpid) : NULL;
    orte_inventory_t *inv = NULL;
    opal_buffer_t buffer;
    if (NULL == kind || NULL == names || vpid - 1 >= names->num_nodes) {
        return HERD_ERR_NOT_FOUND;
    }
    opal_buffer_init(&buffer);
    int rc = opal_buffer_load(&buffer, kind->record, kind->len);
    if (HERD_SUCCESS == rc) {
        rc = orte_inventory_unpack(&buffer, &inv);
    }
    opal_buffer_destruct(&buffer);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    char address[64];
    node_address(vpid, address, sizeof(address));
    free(inv->node_name);
    inv->node_name = strdup(names->nodes[vpid - 1].name);
    rc = NULL != inv->node_name ? HERD_SUCCESS : HERD_ERR_OUT_OF_RESOURCE;
    const char *templated = KINDS_URI_PREFIX KINDS_PLACEHOLDER ":";
    for (char **u = inv->session_uris; HERD_SUCCESS == rc && NULL != u && *u; ++u) {
        if (0 == strncmp(*u, templated, strlen(templated))) {
            char uri[320];
            snprintf(uri, sizeof(uri), KINDS_URI_PREFIX "%s:%s", address, *u + strlen(templated));
            free(*u);
            *u = strdup(uri);
            rc = NULL != *u ? HERD_SUCCESS : HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    if (HERD_SUCCESS != rc) {
        orte_inventory_free(inv);
        return rc;
    }
    *inventory = inv;
    return HERD_SUCCESS;
}

size_t dvm_kinds_table_bytes(const orte_dvm_t *dvm)
{
    return NULL != dvm->kinds ? dvm->kinds->table_bytes : 0;
}

uint32_t dvm_kinds_count(const orte_dvm_t *dvm)
{
    return NULL != dvm->kinds ? dvm->kinds->num_kinds : 0;
}

int dvm_kinds_request_xml(orte_dvm_t *dvm)
{
    for (uint32_t i = 0; i < dvm->kinds->num_kinds; ++i) {
        /* the lowest vpid of a kind is the first of its kind in its process: it has the XML */
        orte_vpid_t first = dvm->kinds->kinds[i].ranges[0].first;
        int rc = dvm->ovl->send(dvm->overlay, first, ORTE_DVM_TAG_XML_REQ, NULL, 0);
        if (HERD_SUCCESS != rc) {
            dvm_fail(dvm, "send-failed", dvm_tree_node_name(dvm, first), opal_strerror(rc));
            return rc;
        }
        dvm->root.xml_pending++;
    }
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* the exchange */

static void kinds_fail(orte_dvm_t *dvm, int status, const char *reason)
{
    opal_show_help(DVM_HELP_FILE, "kinds-failed", false, dvm->vpid, reason);
    dvm->kinds->sent = true;
    dvm->kinds->done(dvm, status);
}

/* The table arrived (the root: its own broadcast completed). */
static void kinds_table_cb(int status, const orte_grpcomm_result_t *result, void *cbdata)
{
    orte_dvm_t *dvm = cbdata;
    char reason[KINDS_REASON_SIZE];
    if (HERD_SUCCESS != status) {
        dvm->kinds->done(dvm, status);
        return;
    }
    if (0 != dvm->vpid) {
        dvm_kinds_t *table = dvm_kinds_table_new();
        if (NULL == table) {
            dvm->kinds->done(dvm, HERD_ERR_OUT_OF_RESOURCE);
            return;
        }
        status =
            dvm_kinds_decode(result->data, result->len, dvm->size, table, reason, sizeof(reason));
        if (HERD_SUCCESS == status) {
            dvm_kinds_normalize(table);
            status = dvm_kinds_complete(table, dvm->size, reason, sizeof(reason))
                         ? HERD_SUCCESS
                         : HERD_ERR_BAD_PARAM;
        }
        if (HERD_SUCCESS != status) {
            dvm_kinds_table_free(table);
            kinds_fail(dvm, status, reason);
            return;
        }
        /* the table replaces this daemon's subtree */
        table->done = dvm->kinds->done;
        table->sent = true;
        table->table_bytes = result->len;
        dvm_kinds_table_free(dvm->kinds);
        dvm->kinds = table;
    } else {
        dvm->kinds->table_bytes = result->len;
    }
    dvm->kinds->done(dvm, HERD_SUCCESS);
}

/* Every child's subtree is in: send it up (the root: check and broadcast the table). */
static void kinds_maybe_send(orte_dvm_t *dvm)
{
    dvm_kinds_t *k = dvm->kinds;
    char reason[KINDS_REASON_SIZE];
    if (k->sent || 0 != k->waiting) {
        return;
    }
    k->sent = true;
    dvm_kinds_normalize(k);
    if (0 == dvm->vpid && !dvm_kinds_complete(k, dvm->size, reason, sizeof(reason))) {
        kinds_fail(dvm, HERD_ERR_BAD_PARAM, reason);
        return;
    }
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    int rc = dvm_kinds_pack(k, &buffer);
    if (HERD_SUCCESS == rc) {
        rc = (0 == dvm->vpid)
                 ? dvm->gc->xcast(dvm->grpcomm, DVM_COLL_INVENTORY, buffer.base, buffer.used,
                                  kinds_table_cb, dvm)
                 : dvm->ovl->send(dvm->overlay, orte_radix_parent(dvm->vpid, dvm->radix),
                                  ORTE_DVM_TAG_KINDS, buffer.base, buffer.used);
    }
    opal_buffer_destruct(&buffer);
    if (HERD_SUCCESS != rc) {
        snprintf(reason, sizeof(reason), "sending it: %s", opal_strerror(rc));
        kinds_fail(dvm, rc, reason);
    }
}

static void kinds_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                       size_t length, void *arg)
{
    orte_dvm_t *dvm = arg;
    dvm_kinds_t *k = dvm->kinds;
    char reason[KINDS_REASON_SIZE];
    uint32_t child = NULL != k ? src - k->first_child : 0;
    if (NULL == k || k->sent || src < k->first_child || child >= k->num_children ||
        orte_radix_parent(src, dvm->radix) != dvm->vpid || k->heard[child]) {
        opal_show_help(DVM_HELP_FILE, "kinds-unexpected", false, dvm->vpid, src);
        return;
    }
    int rc = dvm_kinds_decode(data, length, dvm->size, k, reason, sizeof(reason));
    if (HERD_SUCCESS != rc) {
        char why[KINDS_REASON_SIZE + 64];
        snprintf(why, sizeof(why), "daemon %u sent a malformed message (%s)", src, reason);
        kinds_fail(dvm, rc, why);
        return;
    }
    k->heard[child] = true;
    k->waiting--;
    kinds_maybe_send(dvm);
}

int dvm_kinds_start(orte_dvm_t *dvm, dvm_kinds_done_fn_t done)
{
    dvm_kinds_t *k = dvm_kinds_table_new();
    if (NULL == k) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    dvm->kinds = k;
    k->done = done;
    /* children radix*v+1 .. radix*v+radix, those below size */
    uint64_t first = (uint64_t) dvm->radix * dvm->vpid + 1;
    uint64_t last = first + dvm->radix; /* one past */
    if (last > dvm->size) {
        last = dvm->size;
    }
    k->first_child = (uint32_t) first;
    k->num_children = first < last ? (uint32_t) (last - first) : 0;
    k->waiting = k->num_children;
    k->heard = calloc(k->num_children + 1, sizeof(*k->heard));
    if (NULL == k->heard) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    int rc = dvm->ovl->register_recv(dvm->overlay, ORTE_DVM_TAG_KINDS, kinds_recv, dvm);
    if (HERD_SUCCESS == rc && 0 != dvm->vpid) {
        opal_buffer_t buffer;
        opal_buffer_init(&buffer);
        rc = own_record(dvm, &buffer);
        if (HERD_SUCCESS == rc) {
            rc = dvm_kinds_add(k, buffer.base, buffer.used, dvm->vpid, 1);
        }
        opal_buffer_destruct(&buffer);
        if (HERD_SUCCESS == rc) {
            rc = dvm->gc->xcast(dvm->grpcomm, DVM_COLL_INVENTORY, NULL, 0, kinds_table_cb, dvm);
        }
    }
    if (HERD_SUCCESS == rc) {
        kinds_maybe_send(dvm); /* a leaf sends at once */
    }
    return rc;
}

void dvm_kinds_release(orte_dvm_t *dvm)
{
    dvm_kinds_table_free(dvm->kinds);
    dvm->kinds = NULL;
}
