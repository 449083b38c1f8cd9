/* SPDX-License-Identifier: BSD-3-Clause */
/* A transport DSO for the front-loading tests (btl.h, "Transports in their own DSO"): it links
 * nothing, so everything it does goes through the services table. It reaches every peer and
 * hands a message to itself straight back through deliver. Built twice: as "stubtr", and as
 * "stubold" with another OMPI_BTL_DSO_ABI_VERSION, which the entry must refuse. */
#include "herd_config.h"

#include <stdio.h>

#include "ompi-shim/mca/btl/btl.h"

#ifndef STUB_NAME
#define STUB_NAME stubtr
#endif
#define STUB_STR_(x)   #x
#define STUB_STR(x)    STUB_STR_(x)
#define STUB_ENTRY_(n) herd_btl_##n##_transport
#define STUB_ENTRY(n)  STUB_ENTRY_(n)

static const ompi_btl_dso_services_t *svc;
static ompi_btl_deliver_fn_t up;
static size_t peers;

static int stub_init(const ompi_btl_rte_t *rte, ompi_btl_deliver_fn_t deliver)
{
    up = deliver;
    peers = 0;
    svc->verbose(10, "stub transport started for rank %u", rte->my_rank);
    return *(const int *) svc->params; /* the test chooses whether init fails */
}

static bool stub_reachable(uint32_t peer)
{
    (void) peer;
    return true;
}

static int stub_add_peer(ompi_proc_t *proc)
{
    ++peers;
    (void) proc;
    return HERD_SUCCESS;
}

static int stub_send(ompi_proc_t *proc, int tag, const void *buf, size_t len)
{
    ompi_proc_t *found = svc->proc_find(proc->rank);
    if (found != proc) {
        return HERD_ERROR;
    }
    up(proc->rank, tag, buf, len);
    return HERD_SUCCESS;
}

static int stub_progress(void)
{
    return 0;
}

static size_t stub_pending(void)
{
    return 0;
}

static void stub_finalize(void)
{
    peers = 0;
}

static size_t stub_num_peers(void)
{
    return peers;
}

static const ompi_btl_module_t stub_module = {
    .name = STUB_STR(STUB_NAME),
    .init = stub_init,
    .reachable = stub_reachable,
    .add_peer = stub_add_peer,
    .send = stub_send,
    .progress = stub_progress,
    .pending = stub_pending,
    .finalize = stub_finalize,
    .num_peers = stub_num_peers,
};

OPAL_MODULE_EXPORT const ompi_btl_module_t *
    STUB_ENTRY(STUB_NAME)(const ompi_btl_dso_services_t *services, char *why, size_t why_len);

OPAL_MODULE_EXPORT const ompi_btl_module_t *
STUB_ENTRY(STUB_NAME)(const ompi_btl_dso_services_t *services, char *why, size_t why_len)
{
    if (!ompi_btl_dso_versions_match(services, "the stub transport", why, why_len)) {
        return NULL;
    }
    svc = services;
    return &stub_module;
}
