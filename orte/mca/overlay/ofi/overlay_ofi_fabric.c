/* SPDX-License-Identifier: BSD-3-Clause */
/* overlay ofi: one libfabric RDM endpoint (fabric, domain, completion queue, address vector,
 * endpoint), opened and closed in order. Closing the endpoint and the domain is what removes a
 * provider's shared-memory files (shm's /dev/shm/<pid>:<n>:<n>). */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "opal/util/output.h"
#include "orte/mca/overlay/ofi/overlay_ofi.h"

#define OVERLAY_OFI_API_VERSION FI_VERSION(1, 5)

struct overlay_ofi_fabric {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_cq *cq;
    struct fid_av *av;
    struct fid_ep *ep;
};

static char *reason_of(const char *what, int rc)
{
    char *reason = NULL;
    if (asprintf(&reason, "%s failed: %s", what, fi_strerror(-rc)) < 0) {
        return NULL;
    }
    return reason;
}

static void fabric_close(overlay_ofi_fabric_t *f)
{
    if (NULL == f) {
        return;
    }
    /* the endpoint first, then what it was bound to, the fabric last */
    if (NULL != f->ep) {
        (void) fi_close(&f->ep->fid);
    }
    if (NULL != f->av) {
        (void) fi_close(&f->av->fid);
    }
    if (NULL != f->cq) {
        (void) fi_close(&f->cq->fid);
    }
    if (NULL != f->domain) {
        (void) fi_close(&f->domain->fid);
    }
    if (NULL != f->fabric) {
        (void) fi_close(&f->fabric->fid);
    }
    if (NULL != f->info) {
        fi_freeinfo(f->info);
    }
    free(f);
}

/* fi_getinfo for a reliable datagram endpoint that can send and receive tagged-free messages. */
static int fabric_getinfo(const char *provider, struct fi_info **info, char **reason)
{
    struct fi_info *hints = fi_allocinfo();
    int rc;

    if (NULL == hints) {
        *reason = strdup("fi_allocinfo failed: out of memory");
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG;
    hints->mode = FI_CONTEXT;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    if (NULL != provider && '\0' != provider[0]) {
        hints->fabric_attr->prov_name = strdup(provider);
    }
    rc = fi_getinfo(OVERLAY_OFI_API_VERSION, NULL, NULL, 0, hints, info);
    fi_freeinfo(hints);
    if (0 != rc) {
        *reason = reason_of("fi_getinfo (an RDM endpoint)", rc);
        return HERD_ERR_NOT_AVAILABLE;
    }
    return HERD_SUCCESS;
}

static int fabric_open(const char *provider, overlay_ofi_fabric_t **fabric, char **reason)
{
    overlay_ofi_fabric_t *f = calloc(1, sizeof(*f));
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_CONTEXT};
    struct fi_av_attr av_attr = {.type = FI_AV_MAP};
    const char *what = NULL;
    int rc;

    *reason = NULL;
    if (NULL == f) {
        *reason = strdup("out of memory");
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    rc = fabric_getinfo(provider, &f->info, reason);
    if (HERD_SUCCESS != rc) {
        fabric_close(f);
        return rc;
    }
    if (0 != (rc = fi_fabric(f->info->fabric_attr, &f->fabric, NULL))) {
        what = "fi_fabric";
    } else if (0 != (rc = fi_domain(f->fabric, f->info, &f->domain, NULL))) {
        what = "fi_domain";
    } else if (0 != (rc = fi_cq_open(f->domain, &cq_attr, &f->cq, NULL))) {
        what = "fi_cq_open";
    } else if (0 != (rc = fi_av_open(f->domain, &av_attr, &f->av, NULL))) {
        what = "fi_av_open";
    } else if (0 != (rc = fi_endpoint(f->domain, f->info, &f->ep, NULL))) {
        what = "fi_endpoint";
    } else if (0 != (rc = fi_ep_bind(f->ep, &f->cq->fid, FI_SEND | FI_RECV))) {
        what = "fi_ep_bind (completion queue)";
    } else if (0 != (rc = fi_ep_bind(f->ep, &f->av->fid, 0))) {
        what = "fi_ep_bind (address vector)";
    } else if (0 != (rc = fi_enable(f->ep))) {
        what = "fi_enable";
    }
    if (NULL != what) {
        *reason = reason_of(what, rc);
        fabric_close(f);
        return HERD_ERR_NOT_AVAILABLE;
    }
    *fabric = f;
    return HERD_SUCCESS;
}

static const char *fabric_provider_name(const overlay_ofi_fabric_t *f)
{
    return f->info->fabric_attr->prov_name;
}

const overlay_ofi_ops_t overlay_ofi_libfabric_ops = {
    .open = fabric_open,
    .provider_name = fabric_provider_name,
    .close = fabric_close,
};

const overlay_ofi_ops_t *overlay_ofi_ops = &overlay_ofi_libfabric_ops;
