/* SPDX-License-Identifier: BSD-3-Clause */
/* overlay ofi: the module. Each call goes to the tcp overlay's endpoint underneath; receive and
 * lost callbacks are wrapped so that users see this endpoint, never tcp's. */
#include "herd_config.h"

#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include "opal/util/output.h"
#include "orte/mca/overlay/ofi/overlay_ofi.h"

/* One receive callback registered on tcp's endpoint for a user's callback. */
typedef struct ofi_recv_reg {
    struct ofi_recv_reg *next;
    orte_overlay_t *owner;
    uint16_t tag;
    orte_overlay_recv_cb_t cb;
    void *arg;
} ofi_recv_reg_t;

struct orte_overlay {
    const orte_overlay_module_t *tcp;
    orte_overlay_t *inner;        /* tcp's endpoint */
    overlay_ofi_fabric_t *fabric; /* NULL: fell back to tcp alone */
    pid_t fabric_pid;             /* the process that opened it */
    orte_vpid_t vpid;
    ofi_recv_reg_t *regs;
    orte_overlay_lost_cb_t lost_cb;
    void *lost_arg;
};

static void ofi_recv_trampoline(orte_overlay_t *inner, orte_vpid_t src, uint16_t tag,
                                const void *data, size_t length, void *arg)
{
    ofi_recv_reg_t *reg = arg;
    reg->cb(reg->owner, src, tag, data, length, reg->arg);
}

static void ofi_lost_trampoline(orte_overlay_t *inner, orte_vpid_t peer, int status,
                                const char *reason, void *arg)
{
    orte_overlay_t *o = arg;
    if (NULL != o->lost_cb) {
        o->lost_cb(o, peer, status, reason, o->lost_arg);
    }
}

/* Open the fabric endpoint, or say why not and go on without it. */
static void ofi_open_fabric(orte_overlay_t *o)
{
    char *reason = NULL;
    int rc = overlay_ofi_ops->open(overlay_ofi_settings.provider, &o->fabric, &reason);

    if (HERD_SUCCESS != rc) {
        o->fabric = NULL;
        opal_output_verbose(1, overlay_ofi_output(), "overlay ofi: daemon %u falls back to tcp: %s",
                            o->vpid, NULL != reason ? reason : "the fabric could not be opened");
        free(reason);
        return;
    }
    o->fabric_pid = getpid();
    opal_output_verbose(1, overlay_ofi_output(),
                        "overlay ofi: daemon %u opened an RDM endpoint of provider %s", o->vpid,
                        overlay_ofi_ops->provider_name(o->fabric));
}

static int ofi_init(const orte_overlay_config_t *config, orte_overlay_t **overlay)
{
    orte_overlay_t *o = calloc(1, sizeof(*o));
    int rc;

    if (NULL == o) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    rc = overlay_ofi_tcp_module(&o->tcp);
    if (HERD_SUCCESS == rc) {
        rc = o->tcp->init(config, &o->inner);
    }
    if (HERD_SUCCESS != rc) {
        free(o);
        return rc;
    }
    o->vpid = config->vpid;
    o->tcp->set_lost_callback(o->inner, ofi_lost_trampoline, o);
    ofi_open_fabric(o);
    *overlay = o;
    return HERD_SUCCESS;
}

static int ofi_listen(orte_overlay_t *o, char **uri)
{
    return o->tcp->listen(o->inner, uri);
}

static int ofi_adopt_listener(orte_overlay_t *o, int fd, char **uri)
{
    return o->tcp->adopt_listener(o->inner, fd, uri);
}

static int ofi_connect_parent(orte_overlay_t *o, const char *uri)
{
    return o->tcp->connect_parent(o->inner, uri);
}

static int ofi_adopt_peer(orte_overlay_t *o, int fd, orte_vpid_t peer)
{
    return NULL != o->tcp->adopt_peer ? o->tcp->adopt_peer(o->inner, fd, peer)
                                      : HERD_ERR_NOT_SUPPORTED;
}

static int ofi_send(orte_overlay_t *o, orte_vpid_t dst, uint16_t tag, const void *data,
                    size_t length)
{
    if (ORTE_OVERLAY_TAG_COMPONENT == tag) {
        return HERD_ERR_BAD_PARAM; /* the component's own */
    }
    return o->tcp->send(o->inner, dst, tag, data, length);
}

static int ofi_sendv(orte_overlay_t *o, orte_vpid_t dst, uint16_t tag, const struct iovec *iov,
                     int iovcnt)
{
    if (ORTE_OVERLAY_TAG_COMPONENT == tag) {
        return HERD_ERR_BAD_PARAM;
    }
    return o->tcp->sendv(o->inner, dst, tag, iov, iovcnt);
}

static ofi_recv_reg_t **ofi_find_reg(orte_overlay_t *o, uint16_t tag)
{
    ofi_recv_reg_t **p = &o->regs;
    while (NULL != *p && (*p)->tag != tag) {
        p = &(*p)->next;
    }
    return p;
}

static int ofi_register_recv(orte_overlay_t *o, uint16_t tag, orte_overlay_recv_cb_t cb, void *arg)
{
    ofi_recv_reg_t **p = ofi_find_reg(o, tag);
    ofi_recv_reg_t *reg;
    int rc;

    if (ORTE_OVERLAY_TAG_COMPONENT == tag) {
        return HERD_ERR_EXISTS;
    }
    if (NULL == cb) {
        rc = o->tcp->register_recv(o->inner, tag, NULL, NULL);
        if (NULL != (reg = *p)) {
            *p = reg->next;
            free(reg);
        }
        return rc;
    }
    if (NULL != *p) {
        return HERD_ERR_EXISTS;
    }
    reg = calloc(1, sizeof(*reg));
    if (NULL == reg) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    *reg = (ofi_recv_reg_t){.owner = o, .tag = tag, .cb = cb, .arg = arg};
    rc = o->tcp->register_recv(o->inner, tag, ofi_recv_trampoline, reg);
    if (HERD_SUCCESS != rc) {
        free(reg);
        return rc;
    }
    *p = reg;
    return HERD_SUCCESS;
}

static void ofi_set_lost_callback(orte_overlay_t *o, orte_overlay_lost_cb_t cb, void *arg)
{
    o->lost_cb = cb;
    o->lost_arg = arg;
}

static void ofi_get_stats(const orte_overlay_t *o, orte_overlay_stats_t *stats)
{
    o->tcp->get_stats(o->inner, stats);
}

static int ofi_route_around(orte_overlay_t *o, orte_vpid_t vpid)
{
    return NULL != o->tcp->route_around ? o->tcp->route_around(o->inner, vpid)
                                        : HERD_ERR_NOT_SUPPORTED;
}

static int ofi_connect_ancestor(orte_overlay_t *o, orte_vpid_t ancestor, const char *uri)
{
    return o->tcp->connect_ancestor(o->inner, ancestor, uri);
}

/* tcp's endpoint defers its own release when called from inside one of its callbacks; ours
 * holds nothing its callbacks touch once the user's callback has returned. */
static void ofi_finalize(orte_overlay_t *o)
{
    if (NULL == o) {
        return;
    }
    if (NULL != o->fabric && getpid() != o->fabric_pid) {
        /* a forked child (a session daemon) lets go of its parent's endpoint without closing
         * it: closing would change the provider's state the parent shares (shm's segment, left
         * behind in /dev/shm when the parent closes its own later) */
        opal_output_verbose(5, overlay_ofi_output(),
                            "overlay ofi: daemon %u leaves its parent's RDM endpoint alone",
                            o->vpid);
        o->fabric = NULL;
    }
    if (NULL != o->fabric) {
        overlay_ofi_ops->close(o->fabric);
        o->fabric = NULL;
        opal_output_verbose(5, overlay_ofi_output(),
                            "overlay ofi: daemon %u closed its RDM endpoint", o->vpid);
    }
    o->tcp->finalize(o->inner);
    while (NULL != o->regs) {
        ofi_recv_reg_t *next = o->regs->next;
        free(o->regs);
        o->regs = next;
    }
    free(o);
}

const orte_overlay_module_t overlay_ofi_module = {
    .init = ofi_init,
    .listen = ofi_listen,
    .adopt_listener = ofi_adopt_listener,
    .connect_parent = ofi_connect_parent,
    .adopt_peer = ofi_adopt_peer,
    .send = ofi_send,
    .sendv = ofi_sendv,
    .register_recv = ofi_register_recv,
    .set_lost_callback = ofi_set_lost_callback,
    .get_stats = ofi_get_stats,
    .route_around = ofi_route_around,
    .connect_ancestor = ofi_connect_ancestor,
    .finalize = ofi_finalize,
};
