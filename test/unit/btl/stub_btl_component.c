/* SPDX-License-Identifier: BSD-3-Clause */
/* A stub btl component, built as DSOs for the btl tests: "stub" outranks self, sm and tcp and
 * reaches the even ranks only (so the per-peer choice falls through to the next transport for
 * odd ones); it counts what it is asked. Its progress counts as a kernel poll (like tcp's), and a
 * message with tag STUB_TAG_POLLS comes back (tag + 1000) carrying the number of progress calls
 * since the last such message: the test sees how often the base polled it. "badiface" is built
 * for another btl interface version, which the loader must refuse. It keeps its state in no
 * endpoint slot: a DSO has no tag. */
#include "herd_config.h"

#include <string.h>

#include "ompi-shim/mca/btl/btl.h"
#include "opal/mca/base/mca_var.h"

#ifdef STUB_INTERFACE_VERSION
#undef OPAL_MCA_btl_INTERFACE_VERSION
#define OPAL_MCA_btl_INTERFACE_VERSION STUB_INTERFACE_VERSION
#endif

#define STUB_STR2(x)         #x
#define STUB_STR(x)          STUB_STR2(x)
#define STUB_DECLARE(n, ...) OPAL_MCA_COMPONENT(ompi, btl, n, __VA_ARGS__)

#define STUB_TAG_POLLS 900

static struct {
    int priority;
    ompi_btl_deliver_fn_t deliver;
    size_t peers;
    unsigned polls;
} stub_state;

static int stub_init(const ompi_btl_rte_t *rte, ompi_btl_deliver_fn_t deliver)
{
    (void) rte;
    stub_state.deliver = deliver;
    stub_state.peers = 0;
    stub_state.polls = 0;
    return HERD_SUCCESS;
}

static bool stub_reachable(uint32_t peer)
{
    return 0 == peer % 2;
}

static int stub_add_peer(ompi_proc_t *proc)
{
    (void) proc;
    stub_state.peers++;
    return HERD_SUCCESS;
}

/* Loops every message back as if the peer had sent it, with the tag + 1000: a test can tell
 * the stub carried it. */
static int stub_send(ompi_proc_t *proc, int tag, const void *buf, size_t len)
{
    if (STUB_TAG_POLLS == tag) {
        unsigned polls = stub_state.polls;
        stub_state.polls = 0;
        stub_state.deliver(proc->rank, tag + 1000, &polls, sizeof(polls));
        return HERD_SUCCESS;
    }
    stub_state.deliver(proc->rank, tag + 1000, buf, len);
    return HERD_SUCCESS;
}

static int stub_progress(void)
{
    stub_state.polls++;
    return 0;
}

static size_t stub_pending(void)
{
    return 0;
}

static void stub_finalize(void)
{
    stub_state.peers = 0;
}

static size_t stub_num_peers(void)
{
    return stub_state.peers;
}

static const ompi_btl_module_t stub_module = {
    .name = STUB_STR(STUB_NAME),
    .init = stub_init,
    .reachable = stub_reachable,
    .add_peer = stub_add_peer,
    .send = stub_send,
    .progress = stub_progress,
    .progress_enters_kernel = true,
    .pending = stub_pending,
    .finalize = stub_finalize,
    .num_peers = stub_num_peers,
};

static int stub_register(const opal_mca_component_t *component)
{
    stub_state.priority = STUB_PRIORITY;
    int rc = opal_mca_var_register(component, "priority", "Priority of this stub component",
                                   OPAL_MCA_VAR_INT, &stub_state.priority);
    return rc < 0 ? rc : HERD_SUCCESS;
}

static int stub_query(const opal_mca_component_t *component, void **module, int *priority)
{
    (void) component;
    *module = (void *) &stub_module;
    *priority = stub_state.priority;
    return HERD_SUCCESS;
}

STUB_DECLARE(STUB_NAME, .register_params = stub_register, .query = stub_query);
