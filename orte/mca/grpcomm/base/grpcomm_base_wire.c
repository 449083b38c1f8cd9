/* SPDX-License-Identifier: BSD-3-Clause */
/* The grpcomm wire format: packing the header and blob sets, and one decoder per message type
 * that refuses anything malformed with a reason instead of trusting a peer's counts. */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>

#include "orte/mca/grpcomm/base/base.h"

const char *orte_grpcomm_op_name(orte_grpcomm_op_t op)
{
    switch (op) {
    case ORTE_GRPCOMM_OP_XCAST:
        return "xcast";
    case ORTE_GRPCOMM_OP_BARRIER:
        return "barrier";
    case ORTE_GRPCOMM_OP_ALLGATHER:
        return "allgather";
    }
    return "unknown";
}

const char *orte_grpcomm_base_tag_name(uint16_t tag)
{
    switch (tag) {
    case ORTE_GRPCOMM_TAG_XCAST:
        return "xcast";
    case ORTE_GRPCOMM_TAG_GATHER:
        return "gather";
    case ORTE_GRPCOMM_TAG_ALLGATHER_ROUND:
        return "allgather round";
    case ORTE_GRPCOMM_TAG_BARRIER_ROUND:
        return "barrier round";
    default:
        return "unknown";
    }
}

uint32_t orte_grpcomm_base_ceil_log2(uint32_t n)
{
    uint32_t log = 0;

    /* 64-bit so that n above 2^31 cannot overflow the shift */
    while ((UINT64_C(1) << log) < n) {
        log++;
    }
    return log;
}

uint32_t orte_grpcomm_base_floor_log2(uint32_t n)
{
    uint32_t log = 0;

    while (n > 1) {
        n >>= 1;
        log++;
    }
    return log;
}

void orte_grpcomm_base_header(const orte_grpcomm_t *g, const orte_grpcomm_coll_t *coll,
                              uint32_t round, orte_grpcomm_header_t *header)
{
    header->version = ORTE_GRPCOMM_WIRE_VERSION;
    header->algorithm = g->algorithm->wire_id;
    header->op = (uint8_t) coll->op;
    header->id = coll->id;
    header->num_daemons = g->num_daemons;
    header->round = round;
}

int orte_grpcomm_base_pack_header(opal_buffer_t *buffer, const orte_grpcomm_header_t *header)
{
    int rc = opal_buffer_pack_uint8(buffer, header->version);

    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_pack_uint8(buffer, header->algorithm);
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_pack_uint8(buffer, header->op);
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_pack_uint32(buffer, header->id);
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_pack_uint32(buffer, header->num_daemons);
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_pack_uint32(buffer, header->round);
    }
    return rc;
}

int orte_grpcomm_base_pack_count(opal_buffer_t *buffer, uint32_t count)
{
    return opal_buffer_pack_uint32(buffer, count);
}

int orte_grpcomm_base_pack_blob(opal_buffer_t *buffer, orte_vpid_t vpid, const void *data,
                                size_t len)
{
    int rc = opal_buffer_pack_uint32(buffer, vpid);

    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_pack_bytes(buffer, data, len);
    }
    return rc;
}

void orte_grpcomm_base_msg_clear(orte_grpcomm_msg_t *msg)
{
    if (NULL != msg->entries) {
        for (uint32_t i = 0; i < msg->count; i++) {
            free(msg->entries[i].data);
        }
        free(msg->entries);
        msg->entries = NULL;
    }
    free(msg->payload);
    msg->payload = NULL;
    free(msg->raw);
    msg->raw = NULL;
}

/* A failed unpack is a malformed message, except when memory ran out. */
static int wire_unpack_status(int rc)
{
    return HERD_ERR_OUT_OF_RESOURCE == rc ? rc : HERD_ERR_UNPACK_FAILURE;
}

int orte_grpcomm_base_decode_header(opal_buffer_t *buffer, orte_grpcomm_header_t *header,
                                    char *reason, size_t size)
{
    orte_grpcomm_header_t h;
    int rc;

    rc = opal_buffer_unpack_uint8(buffer, &h.version);
    if (HERD_SUCCESS != rc) {
        snprintf(reason, size, "it is too short to hold a grpcomm header");
        return wire_unpack_status(rc);
    }
    if (ORTE_GRPCOMM_WIRE_VERSION != h.version) {
        /* the rest of the layout is unknown, so nothing else can be read */
        snprintf(reason, size, "it is in wire format version %u, this daemon reads version %u",
                 h.version, ORTE_GRPCOMM_WIRE_VERSION);
        return HERD_ERR_VERSION_MISMATCH;
    }
    rc = opal_buffer_unpack_uint8(buffer, &h.algorithm);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_unpack_uint8(buffer, &h.op);
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_unpack_uint32(buffer, &h.id);
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_unpack_uint32(buffer, &h.num_daemons);
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_unpack_uint32(buffer, &h.round);
    }
    if (HERD_SUCCESS != rc) {
        snprintf(reason, size, "its header is truncated or malformed");
        return wire_unpack_status(rc);
    }
    if (h.op < ORTE_GRPCOMM_OP_XCAST || h.op > ORTE_GRPCOMM_OP_ALLGATHER) {
        snprintf(reason, size, "it names operation %u, which does not exist", h.op);
        return HERD_ERR_UNPACK_FAILURE;
    }
    *header = h;
    return HERD_SUCCESS;
}

static void wire_free_entries(orte_grpcomm_entry_t *entries, uint32_t count)
{
    if (NULL == entries) {
        return;
    }
    for (uint32_t i = 0; i < count; i++) {
        free(entries[i].data);
    }
    free(entries);
}

/* A blob set: uint32 count, then count times (uint32 vpid, bytes). At most one blob per daemon
 * of the DVM, so a corrupt count is refused before anything is allocated for it. */
static int wire_decode_blob_set(opal_buffer_t *buffer, uint32_t num_daemons, uint32_t *count,
                                orte_grpcomm_entry_t **entries, char *reason, size_t size)
{
    orte_grpcomm_entry_t *list = NULL;
    bool *seen = NULL;
    uint32_t total;
    uint32_t i;
    int rc;

    rc = opal_buffer_unpack_uint32(buffer, &total);
    if (HERD_SUCCESS != rc) {
        snprintf(reason, size, "its blob count is missing");
        return wire_unpack_status(rc);
    }
    if (0 == total || total > num_daemons) {
        snprintf(reason, size, "it carries %u blobs, but the DVM has %u daemons", total,
                 num_daemons);
        return HERD_ERR_UNPACK_FAILURE;
    }
    list = calloc(total, sizeof(*list));
    seen = calloc(num_daemons, sizeof(*seen));
    if (NULL == list || NULL == seen) {
        snprintf(reason, size, "out of memory for %u blobs", total);
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto err_entries;
    }
    for (i = 0; i < total; i++) {
        uint32_t vpid;

        rc = opal_buffer_unpack_uint32(buffer, &vpid);
        if (HERD_SUCCESS != rc) {
            snprintf(reason, size, "blob %u of %u is truncated or malformed", i + 1, total);
            rc = wire_unpack_status(rc);
            goto err_entries;
        }
        if (vpid >= num_daemons) {
            snprintf(reason, size, "it carries a blob of daemon %u, but the DVM has %u daemons",
                     vpid, num_daemons);
            rc = HERD_ERR_UNPACK_FAILURE;
            goto err_entries;
        }
        if (seen[vpid]) {
            snprintf(reason, size, "it carries the blob of daemon %u twice", vpid);
            rc = HERD_ERR_UNPACK_FAILURE;
            goto err_entries;
        }
        seen[vpid] = true;
        list[i].vpid = vpid;
        rc = opal_buffer_unpack_bytes(buffer, &list[i].data, &list[i].len);
        if (HERD_SUCCESS != rc) {
            snprintf(reason, size, "the blob of daemon %u is truncated or malformed", vpid);
            rc = wire_unpack_status(rc);
            goto err_entries;
        }
    }
    free(seen);
    *count = total;
    *entries = list;
    return HERD_SUCCESS;

err_entries:
    free(seen);
    wire_free_entries(list, total);
    return rc;
}

/* Every message ends where its last field does: trailing bytes mean sender and receiver
 * disagree on the format. */
static int wire_check_end(const opal_buffer_t *buffer, char *reason, size_t size)
{
    size_t extra = opal_buffer_remaining(buffer);

    if (0 != extra) {
        snprintf(reason, size, "%zu unexpected bytes follow its last field", extra);
        return HERD_ERR_UNPACK_FAILURE;
    }
    return HERD_SUCCESS;
}

/* Body fields decoded into a scratch copy and moved into msg only when the whole message is
 * good, so msg is never left half filled. */
static int wire_finish(opal_buffer_t *buffer, orte_grpcomm_msg_t *scratch, orte_grpcomm_msg_t *msg,
                       char *reason, size_t size)
{
    int rc = wire_check_end(buffer, reason, size);

    if (HERD_SUCCESS != rc) {
        wire_free_entries(scratch->entries, scratch->count);
        free(scratch->payload);
        return rc;
    }
    msg->payload = scratch->payload;
    msg->payload_len = scratch->payload_len;
    msg->count = scratch->count;
    msg->entries = scratch->entries;
    return HERD_SUCCESS;
}

int orte_grpcomm_base_decode_xcast(opal_buffer_t *buffer, uint32_t num_daemons,
                                   orte_grpcomm_msg_t *msg, char *reason, size_t size)
{
    orte_grpcomm_msg_t body = {.count = 0};
    int rc = HERD_SUCCESS;

    switch ((orte_grpcomm_op_t) msg->header.op) {
    case ORTE_GRPCOMM_OP_XCAST:
        rc = opal_buffer_unpack_bytes(buffer, &body.payload, &body.payload_len);
        if (HERD_SUCCESS != rc) {
            snprintf(reason, size, "its payload is truncated or malformed");
            return wire_unpack_status(rc);
        }
        break;
    case ORTE_GRPCOMM_OP_BARRIER:
        break; /* the release of a barrier carries nothing */
    case ORTE_GRPCOMM_OP_ALLGATHER:
        rc = wire_decode_blob_set(buffer, num_daemons, &body.count, &body.entries, reason, size);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
        break;
    }
    return wire_finish(buffer, &body, msg, reason, size);
}

int orte_grpcomm_base_decode_gather(opal_buffer_t *buffer, uint32_t num_daemons,
                                    orte_grpcomm_msg_t *msg, char *reason, size_t size)
{
    orte_grpcomm_msg_t body = {.count = 0};
    int rc = HERD_SUCCESS;

    switch ((orte_grpcomm_op_t) msg->header.op) {
    case ORTE_GRPCOMM_OP_XCAST:
        snprintf(reason, size, "an xcast is never gathered");
        return HERD_ERR_UNPACK_FAILURE;
    case ORTE_GRPCOMM_OP_BARRIER:
        /* how many daemons of the sender's subtree have entered: all of them */
        rc = opal_buffer_unpack_uint32(buffer, &body.count);
        if (HERD_SUCCESS != rc) {
            snprintf(reason, size, "its daemon count is missing");
            return wire_unpack_status(rc);
        }
        if (0 == body.count || body.count > num_daemons) {
            snprintf(reason, size, "it accounts for %u daemons, but the DVM has %u", body.count,
                     num_daemons);
            return HERD_ERR_UNPACK_FAILURE;
        }
        break;
    case ORTE_GRPCOMM_OP_ALLGATHER:
        rc = wire_decode_blob_set(buffer, num_daemons, &body.count, &body.entries, reason, size);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
        break;
    }
    return wire_finish(buffer, &body, msg, reason, size);
}

int orte_grpcomm_base_decode_allgather_round(opal_buffer_t *buffer, uint32_t num_daemons,
                                             orte_grpcomm_msg_t *msg, char *reason, size_t size)
{
    orte_grpcomm_msg_t body = {.count = 0};
    int rc;

    if (ORTE_GRPCOMM_OP_ALLGATHER != msg->header.op) {
        snprintf(reason, size, "it is an allgather round, but its header says %s",
                 orte_grpcomm_op_name((orte_grpcomm_op_t) msg->header.op));
        return HERD_ERR_UNPACK_FAILURE;
    }
    rc = wire_decode_blob_set(buffer, num_daemons, &body.count, &body.entries, reason, size);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    return wire_finish(buffer, &body, msg, reason, size);
}

int orte_grpcomm_base_decode_barrier_round(opal_buffer_t *buffer, uint32_t num_daemons,
                                           orte_grpcomm_msg_t *msg, char *reason, size_t size)
{
    orte_grpcomm_msg_t body = {.count = 0};

    if (ORTE_GRPCOMM_OP_BARRIER != msg->header.op) {
        snprintf(reason, size, "it is a barrier round, but its header says %s",
                 orte_grpcomm_op_name((orte_grpcomm_op_t) msg->header.op));
        return HERD_ERR_UNPACK_FAILURE;
    }
    return wire_finish(buffer, &body, msg, reason, size);
}
