/* SPDX-License-Identifier: BSD-3-Clause */
/* The rejoin messages (dvm_rejoin.h) packed and checked: a decoder rejects anything malformed
 * with an error, before allocating for a count it has not checked. */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>

#include "orte/runtime/dvm_rejoin.h"

/* A host name as the allocation holds it (HOST_NAME_MAX and then some). */
#define REJOIN_MAX_HOST 255u

static int check_version(opal_buffer_t *buffer)
{
    uint32_t version = 0;
    int rc = opal_buffer_unpack_uint32(buffer, &version);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    return ORTE_DVM_REJOIN_VERSION == version ? HERD_SUCCESS : HERD_ERR_VERSION_MISMATCH;
}

int orte_dvm_rejoin_request_pack(opal_buffer_t *buffer, const char *host)
{
    int rc = opal_buffer_pack_uint32(buffer, ORTE_DVM_REJOIN_VERSION);
    return HERD_SUCCESS == rc ? opal_buffer_pack_string(buffer, host) : rc;
}

int orte_dvm_rejoin_request_unpack(opal_buffer_t *buffer, char **host)
{
    char *name = NULL;
    int rc = check_version(buffer);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_unpack_string(buffer, &name);
    }
    if (HERD_SUCCESS == rc && (NULL == name || '\0' == name[0] || strlen(name) > REJOIN_MAX_HOST)) {
        rc = HERD_ERR_UNPACK_FAILURE;
    }
    if (HERD_SUCCESS != rc) {
        free(name);
        return rc;
    }
    *host = name;
    return HERD_SUCCESS;
}

int orte_dvm_rejoin_answer_pack(opal_buffer_t *buffer, int status, const char *message)
{
    int rc = opal_buffer_pack_uint32(buffer, ORTE_DVM_REJOIN_VERSION);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_pack_int32(buffer, status);
    }
    return HERD_SUCCESS == rc ? opal_buffer_pack_string(buffer, message) : rc;
}

int orte_dvm_rejoin_answer_unpack(opal_buffer_t *buffer, int *status, char **message)
{
    int32_t st = 0;
    char *text = NULL;
    int rc = check_version(buffer);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_unpack_int32(buffer, &st);
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_unpack_string(buffer, &text);
    }
    /* a status above zero is no status of ours; a message is always said */
    if (HERD_SUCCESS == rc && (st > 0 || NULL == text)) {
        rc = HERD_ERR_UNPACK_FAILURE;
    }
    if (HERD_SUCCESS != rc) {
        free(text);
        return rc;
    }
    *status = st;
    *message = text;
    return HERD_SUCCESS;
}

int orte_dvm_rejoin_hello_pack(opal_buffer_t *buffer, const void *inventory, size_t len)
{
    int rc = opal_buffer_pack_uint32(buffer, ORTE_DVM_REJOIN_VERSION);
    return HERD_SUCCESS == rc ? opal_buffer_pack_bytes(buffer, inventory, len) : rc;
}

int orte_dvm_rejoin_hello_unpack(opal_buffer_t *buffer, void **inventory, size_t *len)
{
    void *data = NULL;
    size_t length = 0;
    int rc = check_version(buffer);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_unpack_bytes(buffer, &data, &length);
    }
    if (HERD_SUCCESS == rc && 0 == length) {
        rc = HERD_ERR_UNPACK_FAILURE; /* a node always has an inventory */
    }
    if (HERD_SUCCESS != rc) {
        free(data);
        return rc;
    }
    *inventory = data;
    *len = length;
    return HERD_SUCCESS;
}

int orte_dvm_rejoin_node_up_pack(opal_buffer_t *buffer, orte_vpid_t vpid, const void *inventory,
                                 size_t len)
{
    int rc = opal_buffer_pack_uint32(buffer, vpid);
    return HERD_SUCCESS == rc ? orte_dvm_rejoin_hello_pack(buffer, inventory, len) : rc;
}

int orte_dvm_rejoin_node_up_unpack(opal_buffer_t *buffer, uint32_t num_daemons, orte_vpid_t *vpid,
                                   void **inventory, size_t *len)
{
    uint32_t v = 0;
    int rc = opal_buffer_unpack_uint32(buffer, &v);
    if (HERD_SUCCESS == rc && (0 == v || v >= num_daemons)) {
        rc = HERD_ERR_UNPACK_FAILURE;
    }
    if (HERD_SUCCESS == rc) {
        rc = orte_dvm_rejoin_hello_unpack(buffer, inventory, len);
    }
    if (HERD_SUCCESS == rc && 0 != opal_buffer_remaining(buffer)) {
        free(*inventory);
        rc = HERD_ERR_UNPACK_FAILURE;
    }
    if (HERD_SUCCESS == rc) {
        *vpid = v;
    }
    return rc;
}

int orte_dvm_rejoin_ack_pack(opal_buffer_t *buffer, const orte_dvm_rejoin_ack_t *ack)
{
    int rc = opal_buffer_pack_uint32(buffer, ORTE_DVM_REJOIN_VERSION);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_pack_uint32(buffer, ack->next_command);
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_pack_uint32(buffer, ack->num_down);
    }
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < ack->num_down; ++i) {
        rc = opal_buffer_pack_uint32(buffer, ack->down[i]);
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_pack_uint32(buffer, ack->num_nodes);
    }
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < ack->num_nodes; ++i) {
        rc = opal_buffer_pack_bytes(buffer, ack->inventories[i], ack->lengths[i]);
    }
    return rc;
}

void orte_dvm_rejoin_ack_free(orte_dvm_rejoin_ack_t *ack)
{
    if (NULL == ack) {
        return;
    }
    for (uint32_t i = 0; NULL != ack->inventories && i < ack->num_nodes; ++i) {
        free(ack->inventories[i]);
    }
    free(ack->inventories);
    free(ack->lengths);
    free(ack->down);
    free(ack);
}

static int unpack_down(opal_buffer_t *buffer, uint32_t num_daemons, orte_dvm_rejoin_ack_t *ack)
{
    int rc = opal_buffer_unpack_uint32(buffer, &ack->num_down);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    /* each vpid takes 4 bytes: a count the message cannot hold is refused before allocating */
    if (ack->num_down >= num_daemons ||
        (size_t) ack->num_down * 4 > opal_buffer_remaining(buffer)) {
        ack->num_down = 0;
        return HERD_ERR_UNPACK_FAILURE;
    }
    ack->down = calloc(ack->num_down + 1, sizeof(*ack->down));
    if (NULL == ack->down) {
        ack->num_down = 0;
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < ack->num_down; ++i) {
        rc = opal_buffer_unpack_uint32(buffer, &ack->down[i]);
        if (HERD_SUCCESS == rc && (0 == ack->down[i] || ack->down[i] >= num_daemons)) {
            rc = HERD_ERR_UNPACK_FAILURE;
        }
    }
    return rc;
}

static int unpack_inventories(opal_buffer_t *buffer, uint32_t num_daemons,
                              orte_dvm_rejoin_ack_t *ack)
{
    uint32_t count = 0;
    int rc = opal_buffer_unpack_uint32(buffer, &count);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    /* one per node, and each blob has at least its length (4 bytes) in the message */
    if (count + 1 != num_daemons || (size_t) count * 4 > opal_buffer_remaining(buffer)) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    ack->inventories = calloc(count + 1, sizeof(*ack->inventories));
    ack->lengths = calloc(count + 1, sizeof(*ack->lengths));
    if (NULL == ack->inventories || NULL == ack->lengths) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    ack->num_nodes = count;
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < count; ++i) {
        void *data = NULL;
        rc = opal_buffer_unpack_bytes(buffer, &data, &ack->lengths[i]);
        ack->inventories[i] = data;
        if (HERD_SUCCESS == rc && 0 == ack->lengths[i]) {
            rc = HERD_ERR_UNPACK_FAILURE;
        }
    }
    return rc;
}

int orte_dvm_rejoin_ack_unpack(opal_buffer_t *buffer, uint32_t num_daemons,
                               orte_dvm_rejoin_ack_t **ack_out)
{
    orte_dvm_rejoin_ack_t *ack = calloc(1, sizeof(*ack));
    if (NULL == ack) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    int rc = check_version(buffer);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_unpack_uint32(buffer, &ack->next_command);
    }
    if (HERD_SUCCESS == rc) {
        rc = unpack_down(buffer, num_daemons, ack);
    }
    if (HERD_SUCCESS == rc) {
        rc = unpack_inventories(buffer, num_daemons, ack);
    }
    if (HERD_SUCCESS == rc && 0 != opal_buffer_remaining(buffer)) {
        rc = HERD_ERR_UNPACK_FAILURE; /* trailing bytes: not this message */
    }
    if (HERD_SUCCESS != rc) {
        orte_dvm_rejoin_ack_free(ack);
        return rc;
    }
    *ack_out = ack;
    return HERD_SUCCESS;
}
