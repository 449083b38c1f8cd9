/* SPDX-License-Identifier: BSD-3-Clause */
/* btl self: a process's messages to itself, handed straight to the matching engine (one copy,
 * into the receive or the unexpected queue). */
#include "herd_config.h"

#include "ompi-shim/mca/btl/btl.h"
#include "opal/mca/base/mca_var.h"

#define BTL_SELF_DEFAULT_PRIORITY 100

static struct {
    int priority; /* btl_self_priority */
    const ompi_btl_rte_t *rte;
    ompi_btl_deliver_fn_t deliver;
    ompi_proc_t *me; /* once added */
} btl_self_state;

static int btl_self_init(const ompi_btl_rte_t *rte, ompi_btl_deliver_fn_t deliver)
{
    btl_self_state.rte = rte;
    btl_self_state.deliver = deliver;
    btl_self_state.me = NULL;
    return HERD_SUCCESS;
}

static bool btl_self_reachable(uint32_t peer)
{
    return peer == btl_self_state.rte->my_rank;
}

static int btl_self_add_peer(ompi_proc_t *proc)
{
    /* nothing to keep: the slot only marks the proc as added */
    proc->endpoint[HERD_ENDPOINT_TAG_SELF] = &btl_self_state;
    btl_self_state.me = proc;
    return HERD_SUCCESS;
}

static int btl_self_send(ompi_proc_t *proc, int tag, const void *buf, size_t len)
{
    btl_self_state.deliver(proc->rank, tag, buf, len);
    return HERD_SUCCESS;
}

static size_t btl_self_pending(void)
{
    return 0;
}

static void btl_self_finalize(void)
{
    if (NULL != btl_self_state.me) {
        btl_self_state.me->endpoint[HERD_ENDPOINT_TAG_SELF] = NULL;
        btl_self_state.me = NULL;
    }
}

static size_t btl_self_num_peers(void)
{
    return NULL != btl_self_state.me ? 1 : 0;
}

static const ompi_btl_module_t btl_self_module = {
    .name = "self",
    .init = btl_self_init,
    .reachable = btl_self_reachable,
    .add_peer = btl_self_add_peer,
    .send = btl_self_send,
    .progress = NULL, /* every message is delivered in send */
    .pending = btl_self_pending,
    .finalize = btl_self_finalize,
    .num_peers = btl_self_num_peers,
};

static int btl_self_register(const opal_mca_component_t *component)
{
    btl_self_state.priority = BTL_SELF_DEFAULT_PRIORITY;
    int index = opal_mca_var_register(component, "priority",
                                      "Priority of the self transport (a process's messages to "
                                      "itself); a peer uses the first transport that reaches it, "
                                      "highest priority first",
                                      OPAL_MCA_VAR_INT, &btl_self_state.priority);
    return index < 0 ? index : HERD_SUCCESS;
}

static int btl_self_query(const opal_mca_component_t *component, void **module, int *priority)
{
    (void) component;
    *module = (void *) &btl_self_module;
    *priority = btl_self_state.priority;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(ompi, btl, self, .register_params = btl_self_register, .query = btl_self_query);
