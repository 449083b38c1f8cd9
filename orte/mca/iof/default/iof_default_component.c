/* SPDX-License-Identifier: BSD-3-Clause */
/* iof default: the component, its module, and what the source and sink share. */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/base/mca_var.h"
#include "opal/util/output.h"
#include "orte/mca/iof/default/iof_default.h"

#define IOF_DEFAULT_PRIORITY 50

static struct {
    int priority; /* iof_default_priority */
} iof_default_state = {
    .priority = IOF_DEFAULT_PRIORITY,
};

bool iof_msg_split(const struct iovec *iov, int iovcnt, size_t header_len, iof_msg_t *msg)
{
    size_t need = header_len;
    int i = 0;
    size_t off = 0;
    if (header_len > sizeof(msg->header)) {
        return false;
    }
    while (need > 0) {
        if (i >= iovcnt) {
            return false;
        }
        size_t take = iov[i].iov_len - off;
        if (take > need) {
            take = need;
        }
        memcpy(msg->header + (header_len - need), (const uint8_t *) iov[i].iov_base + off, take);
        need -= take;
        off += take;
        if (off == iov[i].iov_len) {
            ++i;
            off = 0;
        }
    }
    msg->num_payload = 0;
    msg->payload_len = 0;
    for (; i < iovcnt; ++i, off = 0) {
        if (iov[i].iov_len == off) {
            continue;
        }
        if (msg->num_payload == ORTE_IOF_MAX_PIECES) {
            return false;
        }
        msg->payload[msg->num_payload].iov_base = (uint8_t *) iov[i].iov_base + off;
        msg->payload[msg->num_payload].iov_len = iov[i].iov_len - off;
        msg->payload_len += iov[i].iov_len - off;
        msg->num_payload++;
    }
    return true;
}

static size_t table_slot(size_t cap, uint32_t rank)
{
    return (size_t) ((rank * 2654435761u) & (uint32_t) (cap - 1));
}

static uint32_t entry_rank(const void *entry)
{
    return *(const uint32_t *) entry;
}

void *iof_table_find(const iof_table_t *table, uint32_t rank)
{
    if (0 == table->cap) {
        return NULL;
    }
    for (size_t i = table_slot(table->cap, rank);; i = (i + 1) & (table->cap - 1)) {
        if (NULL == table->slots[i] || entry_rank(table->slots[i]) == rank) {
            return table->slots[i];
        }
    }
}

static void place(void **slots, size_t cap, void *entry)
{
    size_t j = table_slot(cap, entry_rank(entry));
    while (NULL != slots[j]) {
        j = (j + 1) & (cap - 1);
    }
    slots[j] = entry;
}

int iof_table_insert(iof_table_t *table, void *entry)
{
    if (2 * (table->count + 1) > table->cap) {
        size_t cap = table->cap ? 2 * table->cap : 16;
        void **grown = calloc(cap, sizeof(*grown));
        if (NULL == grown) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        for (size_t i = 0; i < table->cap; ++i) {
            if (NULL != table->slots[i]) {
                place(grown, cap, table->slots[i]);
            }
        }
        free(table->slots);
        table->slots = grown;
        table->cap = cap;
    }
    place(table->slots, table->cap, entry);
    table->count++;
    return HERD_SUCCESS;
}

int iof_dropped(int rc, int msg, orte_vpid_t from)
{
    if (HERD_ERR_UNPACK_FAILURE == rc) {
        opal_output_verbose(1, orte_iof_base_framework.output,
                            "iof: dropped a malformed message (kind %d) from vpid %u", msg, from);
    }
    return rc;
}

void iof_event_arm(opal_event_t *event, bool *armed, bool on)
{
    if (NULL == event || *armed == on) {
        return;
    }
    *armed = on;
    if (on) {
        opal_event_add(event, NULL);
    } else {
        opal_event_del(event);
    }
}

void iof_close_watched(opal_event_t **event, bool *armed, int *fd)
{
    if (NULL != *event) {
        opal_event_free(*event);
        *event = NULL;
    }
    *armed = false;
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

static const orte_iof_module_t iof_default_module = {
    .name = "default",
    .source_create = iof_default_source_create,
    .source_destroy = iof_default_source_destroy,
    .source_add = iof_default_source_add,
    .source_all_added = iof_default_source_all_added,
    .source_exited = iof_default_source_exited,
    .source_finish = iof_default_source_finish,
    .source_deliver = iof_default_source_deliver,
    .sink_create = iof_default_sink_create,
    .sink_destroy = iof_default_sink_destroy,
    .sink_deliver = iof_default_sink_deliver,
    .sink_source_lost = iof_default_sink_source_lost,
    .sink_rank_moved = iof_default_sink_rank_moved,
    .sink_attach = iof_default_sink_attach,
    .sink_queued = iof_default_sink_queued,
};

static int iof_default_register(const opal_mca_component_t *component)
{
    int index;

    iof_default_state.priority = IOF_DEFAULT_PRIORITY;
    index = opal_mca_var_register(component, "priority",
                                  "Priority of the default iof component (pipes per process, "
                                  "whole lines, credit-based flow control); the available "
                                  "component with the highest priority is used",
                                  OPAL_MCA_VAR_INT, &iof_default_state.priority);
    return index < 0 ? index : HERD_SUCCESS;
}

static int iof_default_query(const opal_mca_component_t *component, void **module, int *priority)
{
    *module = (void *) &iof_default_module;
    *priority = iof_default_state.priority;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(orte, iof, default, .register_params = iof_default_register,
                   .query = iof_default_query);
