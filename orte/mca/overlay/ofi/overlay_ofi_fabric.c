/* SPDX-License-Identifier: BSD-3-Clause */
/* overlay ofi: one libfabric RDM endpoint (fabric, domain, completion queue, address vector,
 * endpoint), opened and closed in order. Closing the endpoint and the domain is what removes a
 * provider's shared-memory files (shm's /dev/shm/<pid>:<n>:<n>). */
#include "herd_config.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_eq.h>

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
    int wait_fd; /* the completion queue's, or -1 */
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

/* A completion queue with a descriptor the event loop can wait on, or without one when the
 * provider has none (then the module polls it on a timer). */
static int fabric_cq_open(overlay_ofi_fabric_t *f)
{
    struct fi_cq_attr attr = {.format = FI_CQ_FORMAT_MSG, .wait_obj = FI_WAIT_FD};
    int rc = fi_cq_open(f->domain, &attr, &f->cq, NULL);

    if (0 == rc && 0 != fi_control(&f->cq->fid, FI_GETWAIT, &f->wait_fd)) {
        (void) fi_close(&f->cq->fid);
        f->cq = NULL;
        rc = -FI_ENOSYS;
    }
    if (0 != rc) {
        f->wait_fd = -1;
        attr.wait_obj = FI_WAIT_NONE;
        rc = fi_cq_open(f->domain, &attr, &f->cq, NULL);
    }
    return rc;
}

/* Signals whose handling libfabric's shm provider takes over when it makes its region (to
 * unlink it, then exit): the daemon's own handling (SIGTERM to the root is an orderly shutdown,
 * whose finalize closes the endpoint and so unlinks the region) must stay. */
static const int fabric_signals[] = {SIGINT, SIGTERM, SIGHUP,  SIGQUIT, SIGSEGV,
                                     SIGBUS, SIGILL,  SIGABRT, SIGFPE};
#define FABRIC_NSIGNALS (sizeof(fabric_signals) / sizeof(fabric_signals[0]))

static void signals_save(struct sigaction *saved)
{
    for (size_t i = 0; i < FABRIC_NSIGNALS; ++i) {
        (void) sigaction(fabric_signals[i], NULL, &saved[i]);
    }
}

static void signals_restore(const struct sigaction *saved)
{
    for (size_t i = 0; i < FABRIC_NSIGNALS; ++i) {
        (void) sigaction(fabric_signals[i], &saved[i], NULL);
    }
}

static int fabric_open_steps(const char *provider, overlay_ofi_fabric_t **fabric, char **reason);

/* libfabric's tcp;ofi_rxm sizes its buffer pools for an application's traffic: ~90 MB per
 * daemon at its defaults, for a few hundred small messages. Smaller ones while this process
 * opens its endpoint, unless the user set them; taken out of the environment again so that
 * what the daemon starts (session daemons, applications) does not inherit them. */
static const char *const fabric_env[][2] = {
    {"FI_OFI_RXM_BUFFER_SIZE", "4096"},
    {"FI_OFI_RXM_MSG_RX_SIZE", "32"},
    {"FI_OFI_RXM_MSG_TX_SIZE", "32"},
};
#define FABRIC_NENV (sizeof(fabric_env) / sizeof(fabric_env[0]))

static int fabric_open(const char *provider, overlay_ofi_fabric_t **fabric, char **reason)
{
    struct sigaction saved[FABRIC_NSIGNALS];
    bool set[FABRIC_NENV];
    int rc;

    for (size_t i = 0; i < FABRIC_NENV; ++i) {
        set[i] =
            NULL == getenv(fabric_env[i][0]) && 0 == setenv(fabric_env[i][0], fabric_env[i][1], 0);
    }
    signals_save(saved);
    rc = fabric_open_steps(provider, fabric, reason);
    signals_restore(saved);
    for (size_t i = 0; i < FABRIC_NENV; ++i) {
        if (set[i]) {
            (void) unsetenv(fabric_env[i][0]);
        }
    }
    return rc;
}

static int fabric_open_steps(const char *provider, overlay_ofi_fabric_t **fabric, char **reason)
{
    overlay_ofi_fabric_t *f = calloc(1, sizeof(*f));
    struct fi_av_attr av_attr = {.type = FI_AV_MAP};
    const char *what = NULL;
    int rc;

    *reason = NULL;
    if (NULL == f) {
        *reason = strdup("out of memory");
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    f->wait_fd = -1;
    rc = fabric_getinfo(provider, &f->info, reason);
    if (HERD_SUCCESS != rc) {
        fabric_close(f);
        return rc;
    }
    if (0 != (rc = fi_fabric(f->info->fabric_attr, &f->fabric, NULL))) {
        what = "fi_fabric";
    } else if (0 != (rc = fi_domain(f->fabric, f->info, &f->domain, NULL))) {
        what = "fi_domain";
    } else if (0 != (rc = fabric_cq_open(f))) {
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

static int fabric_getname(overlay_ofi_fabric_t *f, void *addr, size_t *length)
{
    return 0 == fi_getname(&f->ep->fid, addr, length) ? HERD_SUCCESS : HERD_ERR_NOT_AVAILABLE;
}

static int fabric_insert(overlay_ofi_fabric_t *f, const void *addr, size_t length, uint64_t *dest)
{
    fi_addr_t fa = FI_ADDR_NOTAVAIL;

    (void) length; /* the provider knows its own address format */
    if (1 != fi_av_insert(f->av, addr, 1, &fa, 0, NULL) || FI_ADDR_NOTAVAIL == fa) {
        return HERD_ERR_BAD_PARAM;
    }
    *dest = fa;
    return HERD_SUCCESS;
}

static size_t fabric_max_msg_size(const overlay_ofi_fabric_t *f)
{
    return f->info->ep_attr->max_msg_size;
}

static int fabric_post_send(overlay_ofi_fabric_t *f, uint64_t dest, const void *buf, size_t length,
                            overlay_ofi_ctx_t *ctx, int *error)
{
    ssize_t rc = fi_send(f->ep, buf, length, NULL, dest, ctx);

    if (-FI_EAGAIN == rc) {
        return OVERLAY_OFI_AGAIN;
    }
    *error = (int) -rc;
    return 0 == rc ? HERD_SUCCESS : HERD_ERR_UNREACH;
}

static int fabric_post_recv(overlay_ofi_fabric_t *f, void *buf, size_t length,
                            overlay_ofi_ctx_t *ctx)
{
    ssize_t rc = fi_recv(f->ep, buf, length, NULL, FI_ADDR_UNSPEC, ctx);

    if (-FI_EAGAIN == rc) {
        return OVERLAY_OFI_AGAIN;
    }
    return 0 == rc ? HERD_SUCCESS : HERD_ERR_NOT_AVAILABLE;
}

/* The error entry at the head of the queue, as a completion. */
static int fabric_poll_error(overlay_ofi_fabric_t *f, overlay_ofi_completion_t *out)
{
    struct fi_cq_err_entry err = {0};

    if (fi_cq_readerr(f->cq, &err, 0) < 1) {
        return -1;
    }
    *out = (overlay_ofi_completion_t){.ctx = err.op_context,
                                      .recv = 0 != (err.flags & FI_RECV),
                                      .error = 0 != err.err ? err.err : FI_EIO};
    return 1;
}

static int fabric_poll(overlay_ofi_fabric_t *f, overlay_ofi_completion_t *out, int max)
{
    struct fi_cq_msg_entry entries[16];
    ssize_t n;

    if (max > 16) {
        max = 16;
    }
    n = fi_cq_read(f->cq, entries, (size_t) max);
    if (-FI_EAGAIN == n) {
        return 0;
    }
    if (-FI_EAVAIL == n) {
        return fabric_poll_error(f, out);
    }
    if (n < 0) {
        return -1;
    }
    for (ssize_t i = 0; i < n; ++i) {
        out[i] = (overlay_ofi_completion_t){.ctx = entries[i].op_context,
                                            .recv = 0 != (entries[i].flags & FI_RECV),
                                            .length = entries[i].len};
    }
    return (int) n;
}

static int fabric_wait_fd(overlay_ofi_fabric_t *f)
{
    return f->wait_fd;
}

static bool fabric_trywait(overlay_ofi_fabric_t *f)
{
    struct fid *fids[1] = {&f->cq->fid};
    return 0 == fi_trywait(f->fabric, fids, 1);
}

const overlay_ofi_ops_t overlay_ofi_libfabric_ops = {
    .open = fabric_open,
    .provider_name = fabric_provider_name,
    .close = fabric_close,
    .getname = fabric_getname,
    .insert = fabric_insert,
    .max_msg_size = fabric_max_msg_size,
    .post_send = fabric_post_send,
    .post_recv = fabric_post_recv,
    .poll = fabric_poll,
    .wait_fd = fabric_wait_fd,
    .trywait = fabric_trywait,
};

const overlay_ofi_ops_t *overlay_ofi_ops = &overlay_ofi_libfabric_ops;
