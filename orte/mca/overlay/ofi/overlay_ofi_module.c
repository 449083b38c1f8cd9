/* SPDX-License-Identifier: BSD-3-Clause */
/* overlay ofi: the module. Each call goes to the tcp overlay's endpoint underneath, except the
 * collectives' messages the fabric path takes (overlay_ofi_path.c); receive and lost callbacks
 * are wrapped so that users see this endpoint, never tcp's. */
#include "herd_config.h"

#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include "opal/util/output.h"
#include "orte/mca/overlay/ofi/overlay_ofi_internal.h"
#include "orte/util/radix.h"

static ofi_recv_reg_t **ofi_find_reg(orte_overlay_t *o, uint16_t tag);

void overlay_ofi_enter(orte_overlay_t *o)
{
    o->depth++;
}

bool overlay_ofi_leave(orte_overlay_t *o)
{
    if (0 == --o->depth && o->dying) {
        overlay_ofi_release(o);
        return false;
    }
    return !o->dying;
}

void overlay_ofi_deliver(orte_overlay_t *o, orte_vpid_t src, uint16_t tag, const void *data,
                         size_t length)
{
    ofi_recv_reg_t *reg = *ofi_find_reg(o, tag);

    if (NULL == reg) {
        opal_output_verbose(5, overlay_ofi_output(),
                            "overlay ofi: daemon %u: no callback for tag %u (from %u)", o->vpid,
                            tag, src);
        return;
    }
    reg->cb(o, src, tag, data, length, reg->arg);
}

static void ofi_recv_trampoline(orte_overlay_t *inner, orte_vpid_t src, uint16_t tag,
                                const void *data, size_t length, void *arg)
{
    ofi_recv_reg_t *reg = arg;
    orte_overlay_t *o = reg->owner;

    (void) inner;
    if (o->dying) {
        return;
    }
    overlay_ofi_enter(o);
    if (overlay_ofi_tcp_arrived(o, src, tag, data, length) && !o->dying) {
        /* found again: a callback the fabric's catching up ran may have removed it */
        overlay_ofi_deliver(o, src, tag, data, length);
    }
    (void) overlay_ofi_leave(o);
}

static void ofi_control_trampoline(orte_overlay_t *inner, orte_vpid_t src, uint16_t tag,
                                   const void *data, size_t length, void *arg)
{
    orte_overlay_t *o = arg;

    (void) inner;
    (void) tag;
    if (o->dying) {
        return;
    }
    overlay_ofi_enter(o);
    overlay_ofi_control(o, src, data, length);
    (void) overlay_ofi_leave(o);
}

static void ofi_lost_trampoline(orte_overlay_t *inner, orte_vpid_t peer, int status,
                                const char *reason, void *arg)
{
    orte_overlay_t *o = arg;

    (void) inner;
    if (NULL != o->lost_cb && !o->dying) {
        overlay_ofi_enter(o);
        o->lost_cb(o, peer, status, reason, o->lost_arg);
        (void) overlay_ofi_leave(o);
    }
}

/* Open the fabric endpoint, or say why not and go on without it. */
static void ofi_open_fabric(orte_overlay_t *o)
{
    char *reason = NULL;
    int rc;

    if (o->num_daemons <= 1) {
        opal_output_verbose(2, overlay_ofi_output(),
                            "overlay ofi: daemon %u is alone: no fabric endpoint", o->vpid);
        return;
    }
    if (!overlay_ofi_endpoint_slot(false)) {
        opal_output_verbose(1, overlay_ofi_output(),
                            "overlay ofi: daemon %u falls back to tcp: this process already has "
                            "%u RDM endpoints (simulated nodes hosted together)",
                            o->vpid, OVERLAY_OFI_MAX_ENDPOINTS);
        return;
    }
    rc = overlay_ofi_ops->open(overlay_ofi_settings.provider, &o->fabric, &reason);
    if (HERD_SUCCESS != rc) {
        o->fabric = NULL;
        opal_output_verbose(1, overlay_ofi_output(), "overlay ofi: daemon %u falls back to tcp: %s",
                            o->vpid, NULL != reason ? reason : "the fabric could not be opened");
        free(reason);
        return;
    }
    o->fabric_pid = getpid();
    (void) overlay_ofi_endpoint_slot(true);
    opal_output_verbose(1, overlay_ofi_output(),
                        "overlay ofi: daemon %u opened an RDM endpoint of provider %s", o->vpid,
                        overlay_ofi_ops->provider_name(o->fabric));
    if (HERD_SUCCESS != overlay_ofi_path_start(o, &reason)) {
        opal_output_verbose(1, overlay_ofi_output(), "overlay ofi: daemon %u falls back to tcp: %s",
                            o->vpid, NULL != reason ? reason : "the fabric path did not start");
        free(reason);
        overlay_ofi_path_stop(o, true);
    }
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
    o->num_daemons = config->num_daemons;
    o->radix = config->radix;
    o->base = config->base;
    o->tcp->set_lost_callback(o->inner, ofi_lost_trampoline, o);
    o->control_ok = HERD_SUCCESS == o->tcp->register_recv(o->inner, ORTE_OVERLAY_TAG_COMPONENT,
                                                          ofi_control_trampoline, o);
    *overlay = o;
    return HERD_SUCCESS;
}

/* The fabric is opened when the endpoint goes onto the network (listens, or connects to a
 * parent): one whose neighbours are all socketpairs on its own host (herdrun and its session
 * daemon on one host) has no use for it. */
static void ofi_go_online(orte_overlay_t *o)
{
    if (o->online) {
        return;
    }
    o->online = true;
    if (!o->control_ok) {
        opal_output_verbose(1, overlay_ofi_output(),
                            "overlay ofi: daemon %u falls back to tcp: its control tag is taken",
                            o->vpid);
        return;
    }
    ofi_open_fabric(o);
}

static int ofi_listen(orte_overlay_t *o, char **uri)
{
    ofi_go_online(o);
    return o->tcp->listen(o->inner, uri);
}

static int ofi_adopt_listener(orte_overlay_t *o, int fd, char **uri)
{
    ofi_go_online(o);
    return o->tcp->adopt_listener(o->inner, fd, uri);
}

/* The fabric address goes to the parent as the first message on the new connection; the
 * parent answers with its own. */
static int ofi_connect_parent(orte_overlay_t *o, const char *uri)
{
    int rc;

    ofi_go_online(o);
    rc = o->tcp->connect_parent(o->inner, uri);

    if (HERD_SUCCESS == rc && 0 != o->vpid && o->radix > 0) {
        overlay_ofi_send_hello(o, orte_radix_parent(o->vpid, o->radix));
    }
    return rc;
}

static int ofi_adopt_peer(orte_overlay_t *o, int fd, orte_vpid_t peer)
{
    int rc = NULL != o->tcp->adopt_peer ? o->tcp->adopt_peer(o->inner, fd, peer)
                                        : HERD_ERR_NOT_SUPPORTED;
    if (HERD_SUCCESS == rc) {
        overlay_ofi_send_hello(o, peer);
    }
    return rc;
}

static int ofi_send(orte_overlay_t *o, orte_vpid_t dst, uint16_t tag, const void *data,
                    size_t length)
{
    struct iovec iov = {.iov_base = (void *) data, .iov_len = length};

    if (ORTE_OVERLAY_TAG_COMPONENT == tag) {
        return HERD_ERR_BAD_PARAM; /* the component's own */
    }
    if (HERD_SUCCESS == overlay_ofi_path_send(o, dst, tag, &iov, 1, length)) {
        return HERD_SUCCESS;
    }
    return o->tcp->send(o->inner, dst, tag, data, length);
}

static int ofi_sendv(orte_overlay_t *o, orte_vpid_t dst, uint16_t tag, const struct iovec *iov,
                     int iovcnt)
{
    size_t length = 0;

    if (ORTE_OVERLAY_TAG_COMPONENT == tag) {
        return HERD_ERR_BAD_PARAM;
    }
    for (int i = 0; i < iovcnt && iovcnt <= ORTE_OVERLAY_MAX_IOV; ++i) {
        length += iov[i].iov_len;
    }
    if (iovcnt >= 0 && iovcnt <= ORTE_OVERLAY_MAX_IOV &&
        HERD_SUCCESS == overlay_ofi_path_send(o, dst, tag, iov, iovcnt, length)) {
        return HERD_SUCCESS;
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
    stats->messages_sent += o->count.msgs_sent;
    stats->messages_delivered += o->count.msgs_recv;
}

static int ofi_route_around(orte_overlay_t *o, orte_vpid_t vpid)
{
    return NULL != o->tcp->route_around ? o->tcp->route_around(o->inner, vpid)
                                        : HERD_ERR_NOT_SUPPORTED;
}

static int ofi_connect_ancestor(orte_overlay_t *o, orte_vpid_t ancestor, const char *uri)
{
    int rc;

    ofi_go_online(o);
    rc = o->tcp->connect_ancestor(o->inner, ancestor, uri);

    if (HERD_SUCCESS == rc) {
        overlay_ofi_send_hello(o, ancestor);
    }
    return rc;
}

void overlay_ofi_release(orte_overlay_t *o)
{
    bool mine = getpid() == o->fabric_pid;

    if (NULL != o->fabric && !mine) {
        /* a forked child (a session daemon) lets go of its parent's endpoint without closing
         * it: closing would change the provider's state the parent shares (shm's segment, left
         * behind in /dev/shm when the parent closes its own later) */
        opal_output_verbose(5, overlay_ofi_output(),
                            "overlay ofi: daemon %u leaves its parent's RDM endpoint alone",
                            o->vpid);
    }
    if (NULL != o->fabric) {
        overlay_ofi_path_stop(o, mine);
        if (mine) {
            opal_output_verbose(5, overlay_ofi_output(),
                                "overlay ofi: daemon %u closed its RDM endpoint", o->vpid);
        }
    }
    o->tcp->finalize(o->inner);
    while (NULL != o->regs) {
        ofi_recv_reg_t *next = o->regs->next;
        free(o->regs);
        o->regs = next;
    }
    free(o);
}

/* From inside one of our callbacks the endpoint is released once the outermost returns (tcp's
 * does the same for its own). */
static void ofi_finalize(orte_overlay_t *o)
{
    if (NULL == o || o->dying) {
        return;
    }
    o->dying = true;
    if (0 == o->depth) {
        overlay_ofi_release(o);
    }
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
