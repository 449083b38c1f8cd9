/* iof default: the component, its module, and what the source and sink share. */
#include "herd_config.h"

#include <string.h>

#include "opal/mca/base/mca_var.h"
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
