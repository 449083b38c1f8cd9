/* SPDX-License-Identifier: BSD-3-Clause */
/* Allocations: building, freeing, the table herd-dvm --display-allocation prints, and the
 * versioned wire format the daemons receive. */
#include "herd_config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/dss/buffer.h"
#include "orte/mca/ras/base/base.h"
#include "orte/mca/ras/ras.h"

void orte_ras_base_printable(const char *text, size_t length, char *out, size_t size)
{
    size_t keep;
    size_t used = 0;
    bool cut;

    if (NULL == out || 0 == size) {
        return;
    }
    if (NULL == text) {
        length = 0;
    }
    /* a cut is marked with "...", so that a quoted token is never mistaken for the whole */
    cut = length > size - 1;
    keep = !cut ? length : (size - 1 > 3 ? size - 1 - 3 : 0);
    for (size_t i = 0; i < keep; i++) {
        unsigned char c = (unsigned char) text[i];

        out[used++] = (c < 0x20 || c >= 0x7f) ? '?' : (char) c;
    }
    while (cut && used + 1 < size) {
        out[used++] = '.';
    }
    out[used] = '\0';
}

/* The text limits of a node's strings; origin and topology may be absent. */
static bool ras_text_is_valid(const char *text, bool required)
{
    if (NULL == text) {
        return !required;
    }
    return (!required || '\0' != text[0]) && strlen(text) <= ORTE_RAS_MAX_TEXT_LEN;
}

static bool ras_node_is_valid(const char *name, uint32_t slots, uint32_t max_slots,
                              const char *topology, const char *origin)
{
    return NULL != name && '\0' != name[0] && strlen(name) <= ORTE_RAS_MAX_NAME_LEN && slots >= 1 &&
           slots <= ORTE_RAS_MAX_SLOTS && max_slots <= ORTE_RAS_MAX_SLOTS &&
           (0 == max_slots || max_slots >= slots) && ras_text_is_valid(topology, false) &&
           ras_text_is_valid(origin, false);
}

orte_allocation_t *orte_allocation_new(const char *source)
{
    orte_allocation_t *allocation;

    if (!ras_text_is_valid(source, true)) {
        return NULL;
    }
    allocation = calloc(1, sizeof(*allocation));
    if (NULL == allocation) {
        return NULL;
    }
    allocation->source = strdup(source);
    if (NULL == allocation->source) {
        free(allocation);
        return NULL;
    }
    return allocation;
}

static void ras_node_destruct(orte_node_t *node)
{
    free(node->name);
    free(node->topology);
    free(node->origin);
}

int orte_allocation_add_node(orte_allocation_t *allocation, const char *name, uint32_t slots,
                             uint32_t max_slots, const char *topology, const char *origin)
{
    orte_node_t node = {.slots = slots, .max_slots = max_slots};
    orte_node_t *grown;

    if (NULL == allocation || !ras_node_is_valid(name, slots, max_slots, topology, origin)) {
        return HERD_ERR_BAD_PARAM;
    }
    if (allocation->num_nodes >= ORTE_RAS_MAX_NODES) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    node.name = strdup(name);
    node.topology = NULL != topology ? strdup(topology) : NULL;
    node.origin = NULL != origin ? strdup(origin) : NULL;
    if (NULL == node.name || (NULL != topology && NULL == node.topology) ||
        (NULL != origin && NULL == node.origin)) {
        goto err_node;
    }
    grown = realloc(allocation->nodes, ((size_t) allocation->num_nodes + 1) * sizeof(*grown));
    if (NULL == grown) {
        goto err_node;
    }
    grown[allocation->num_nodes++] = node;
    allocation->nodes = grown;
    return HERD_SUCCESS;

err_node:
    ras_node_destruct(&node);
    return HERD_ERR_OUT_OF_RESOURCE;
}

void orte_allocation_free(orte_allocation_t *allocation)
{
    if (NULL == allocation) {
        return;
    }
    for (uint32_t i = 0; NULL != allocation->nodes && i < allocation->num_nodes; i++) {
        ras_node_destruct(&allocation->nodes[i]);
    }
    free(allocation->nodes);
    free(allocation->source);
    free(allocation);
}

/* ------------------------------------------------------------------------------------------ */
/* display */

static int ras_width(int width, const char *text)
{
    int length = (int) strlen(text);

    return length > width ? length : width;
}

static const char *ras_or_dash(const char *text)
{
    return (NULL != text && '\0' != text[0]) ? text : "-";
}

/* max_slots as the table shows it: "-" for no limit. */
static void ras_max_slots_text(uint32_t max_slots, char *text, size_t size)
{
    if (0 == max_slots) {
        snprintf(text, size, "-");
    } else {
        snprintf(text, size, "%" PRIu32, max_slots);
    }
}

void orte_allocation_display(FILE *stream, const orte_allocation_t *allocation)
{
    int name_width = (int) strlen("NODE");
    int slots_width = (int) strlen("SLOTS");
    int max_width = (int) strlen("MAX_SLOTS");
    int topology_width = (int) strlen("TOPOLOGY");
    uint64_t total_slots = 0;
    uint64_t total_max_slots = 0;
    bool every_node_limited = true;
    char number[32];

    if (NULL == stream || NULL == allocation) {
        return;
    }
    /* columns as wide as their widest entry, so that the table lines up for any names */
    for (uint32_t i = 0; i < allocation->num_nodes; i++) {
        const orte_node_t *node = &allocation->nodes[i];

        name_width = ras_width(name_width, ras_or_dash(node->name));
        topology_width = ras_width(topology_width, ras_or_dash(node->topology));
        snprintf(number, sizeof(number), "%" PRIu32, node->slots);
        slots_width = ras_width(slots_width, number);
        ras_max_slots_text(node->max_slots, number, sizeof(number));
        max_width = ras_width(max_width, number);
        total_slots += node->slots;
        total_max_slots += node->max_slots;
        every_node_limited = every_node_limited && 0 != node->max_slots;
    }
    fprintf(stream, "======================== ALLOCATED NODES ========================\n");
    fprintf(stream, "source: %s\n\n", ras_or_dash(allocation->source));
    fprintf(stream, "%-*s  %*s  %*s  %-*s  %s\n", name_width, "NODE", slots_width, "SLOTS",
            max_width, "MAX_SLOTS", topology_width, "TOPOLOGY", "ORIGIN");
    for (uint32_t i = 0; i < allocation->num_nodes; i++) {
        const orte_node_t *node = &allocation->nodes[i];

        ras_max_slots_text(node->max_slots, number, sizeof(number));
        fprintf(stream, "%-*s  %*" PRIu32 "  %*s  %-*s  %s\n", name_width, ras_or_dash(node->name),
                slots_width, node->slots, max_width, number, topology_width,
                ras_or_dash(node->topology), ras_or_dash(node->origin));
    }
    /* a sum of limits means nothing when some node has none */
    if (every_node_limited && allocation->num_nodes > 0) {
        snprintf(number, sizeof(number), "%" PRIu64, total_max_slots);
    } else {
        snprintf(number, sizeof(number), "-");
    }
    fprintf(stream, "\ntotal: %" PRIu32 " node%s, %" PRIu64 " slot%s, max_slots %s\n",
            allocation->num_nodes, 1 == allocation->num_nodes ? "" : "s", total_slots,
            1 == total_slots ? "" : "s", number);
    fprintf(stream, "=================================================================\n");
}

/* ------------------------------------------------------------------------------------------ */
/* wire format */

static bool ras_allocation_is_valid(const orte_allocation_t *allocation)
{
    if (!ras_text_is_valid(allocation->source, true) ||
        allocation->num_nodes > ORTE_RAS_MAX_NODES ||
        (allocation->num_nodes > 0 && NULL == allocation->nodes)) {
        return false;
    }
    for (uint32_t i = 0; i < allocation->num_nodes; i++) {
        const orte_node_t *node = &allocation->nodes[i];

        if (!ras_node_is_valid(node->name, node->slots, node->max_slots, node->topology,
                               node->origin)) {
            return false;
        }
    }
    return true;
}

/* Layout: uint32 format version, string source, uint32 node count, then per node string name,
 * uint32 slots, uint32 max_slots, string topology (may be a packed NULL), string origin (may
 * be a packed NULL). */
int orte_allocation_pack(opal_buffer_t *buffer, const orte_allocation_t *allocation)
{
    size_t mark;
    int rc;

    if (NULL == buffer || NULL == allocation || !ras_allocation_is_valid(allocation)) {
        return HERD_ERR_BAD_PARAM;
    }
    mark = buffer->used;
    rc = opal_buffer_pack_uint32(buffer, ORTE_RAS_ALLOCATION_FORMAT_VERSION);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_pack_string(buffer, allocation->source);
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_pack_uint32(buffer, allocation->num_nodes);
    }
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < allocation->num_nodes; i++) {
        const orte_node_t *node = &allocation->nodes[i];

        rc = opal_buffer_pack_string(buffer, node->name);
        if (HERD_SUCCESS == rc) {
            rc = opal_buffer_pack_uint32(buffer, node->slots);
        }
        if (HERD_SUCCESS == rc) {
            rc = opal_buffer_pack_uint32(buffer, node->max_slots);
        }
        if (HERD_SUCCESS == rc) {
            rc = opal_buffer_pack_string(buffer, node->topology);
        }
        if (HERD_SUCCESS == rc) {
            rc = opal_buffer_pack_string(buffer, node->origin);
        }
    }
    if (HERD_SUCCESS != rc) {
        /* a half-packed allocation would make whatever follows it unreadable */
        buffer->used = mark;
    }
    return rc;
}

/* A string within the text limit; a packed NULL only where allowed. */
static int ras_unpack_text(opal_buffer_t *buffer, bool required, size_t limit, char **text)
{
    char *value = NULL;
    int rc = opal_buffer_unpack_string(buffer, &value);

    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if ((NULL == value && required) ||
        (NULL != value && ((required && '\0' == value[0]) || strlen(value) > limit))) {
        free(value);
        return HERD_ERR_UNPACK_FAILURE;
    }
    *text = value;
    return HERD_SUCCESS;
}

static int ras_unpack_node(opal_buffer_t *buffer, orte_node_t *node)
{
    orte_node_t value = {0};
    int rc = ras_unpack_text(buffer, true, ORTE_RAS_MAX_NAME_LEN, &value.name);

    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_unpack_uint32(buffer, &value.slots);
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_unpack_uint32(buffer, &value.max_slots);
    }
    if (HERD_SUCCESS == rc) {
        rc = ras_unpack_text(buffer, false, ORTE_RAS_MAX_TEXT_LEN, &value.topology);
    }
    if (HERD_SUCCESS == rc) {
        rc = ras_unpack_text(buffer, false, ORTE_RAS_MAX_TEXT_LEN, &value.origin);
    }
    if (HERD_SUCCESS == rc && !ras_node_is_valid(value.name, value.slots, value.max_slots,
                                                 value.topology, value.origin)) {
        rc = HERD_ERR_UNPACK_FAILURE;
    }
    if (HERD_SUCCESS != rc) {
        ras_node_destruct(&value);
        return rc;
    }
    *node = value;
    return HERD_SUCCESS;
}

int orte_allocation_unpack(opal_buffer_t *buffer, orte_allocation_t **allocation)
{
    orte_allocation_t *result = NULL;
    char *source = NULL;
    uint32_t version;
    uint32_t num_nodes;
    size_t mark;
    int rc;

    if (NULL == buffer || NULL == allocation) {
        return HERD_ERR_BAD_PARAM;
    }
    mark = buffer->unpack_offset;
    rc = opal_buffer_unpack_uint32(buffer, &version);
    if (HERD_SUCCESS != rc) {
        goto err;
    }
    if (ORTE_RAS_ALLOCATION_FORMAT_VERSION != version) {
        rc = HERD_ERR_VERSION_MISMATCH;
        goto err;
    }
    rc = ras_unpack_text(buffer, true, ORTE_RAS_MAX_TEXT_LEN, &source);
    if (HERD_SUCCESS != rc) {
        goto err;
    }
    result = orte_allocation_new(source);
    free(source);
    if (NULL == result) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto err;
    }
    rc = opal_buffer_unpack_uint32(buffer, &num_nodes);
    if (HERD_SUCCESS != rc) {
        goto err;
    }
    /* every node takes several bytes, so a count above the bytes left is corrupt: checking
     * that first bounds the allocation below by what was actually received */
    if (num_nodes > ORTE_RAS_MAX_NODES || num_nodes > opal_buffer_remaining(buffer)) {
        rc = HERD_ERR_UNPACK_FAILURE;
        goto err;
    }
    if (num_nodes > 0) {
        result->nodes = calloc(num_nodes, sizeof(*result->nodes));
        if (NULL == result->nodes) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
            goto err;
        }
    }
    for (uint32_t i = 0; i < num_nodes; i++) {
        rc = ras_unpack_node(buffer, &result->nodes[result->num_nodes]);
        if (HERD_SUCCESS != rc) {
            goto err;
        }
        result->num_nodes++;
    }
    *allocation = result;
    return HERD_SUCCESS;

err:
    /* like the buffer's own unpack calls: a failed unpack leaves the position where it was */
    buffer->unpack_offset = mark;
    orte_allocation_free(result);
    return rc;
}
