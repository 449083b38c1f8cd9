/* SPDX-License-Identifier: BSD-3-Clause */
/* overlay tcp endpoints: the module interface (init, listen, connect, send, callbacks,
 * finalize), routing along the radix tree, message queues and local delivery. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "opal/util/output.h"
#include "opal/util/show_help.h"
#include "orte/mca/overlay/tcp/overlay_tcp.h"
#include "orte/mca/overlay/tcp/overlay_tcp_sodium.h"
#include "orte/util/radix.h"

/* Connections accepted but not yet authenticated, beyond the children that may all connect at
 * once: a flood of strangers cannot exhaust the daemon's descriptors or memory (the oldest is
 * dropped for a new one, so a daemon arriving after the flood still gets in). */
#define OVERLAY_TCP_EXTRA_PENDING 64u
/* After running out of descriptors, how long the listener rests before accepting again. */
#define OVERLAY_TCP_ACCEPT_RETRY_SECONDS 1
/* Connections accepted per wakeup, so a burst cannot starve established connections. */
#define OVERLAY_TCP_ACCEPT_BURST 64

static void overlay_tcp_destroy(orte_overlay_t *overlay);

/* ------------------------------------------------------------------------------------------ */
/* queues */

overlay_tcp_msg_t *overlay_tcp_msg_new(const overlay_tcp_header_t *header, bool with_header,
                                       const struct iovec *iov, int iovcnt, size_t length)
{
    size_t head = with_header ? OVERLAY_TCP_HEADER_BYTES : 0;
    overlay_tcp_msg_t *msg;
    uint8_t *p;

    if (length > SIZE_MAX - sizeof(*msg) - head) {
        return NULL;
    }
    msg = malloc(sizeof(*msg) + head + length);
    if (NULL == msg) {
        return NULL;
    }
    msg->next = NULL;
    msg->size = head + length;
    msg->offset = 0;
    msg->src = header->src;
    msg->tag = header->tag;
    if (with_header) {
        overlay_tcp_header_encode(header, msg->bytes);
    }
    p = msg->bytes + head;
    for (int i = 0; i < iovcnt; i++) {
        if (0 != iov[i].iov_len) {
            memcpy(p, iov[i].iov_base, iov[i].iov_len);
            p += iov[i].iov_len;
        }
    }
    return msg;
}

void overlay_tcp_queue_push(orte_overlay_t *overlay, overlay_tcp_queue_t *queue,
                            overlay_tcp_msg_t *msg)
{
    if (NULL == queue->tail) {
        queue->head = msg;
    } else {
        queue->tail->next = msg;
    }
    queue->tail = msg;
    queue->count++;
    queue->bytes += msg->size;
    overlay->stats.bytes_queued += msg->size;
}

void overlay_tcp_queue_drop(orte_overlay_t *overlay, overlay_tcp_queue_t *queue)
{
    overlay_tcp_msg_t *msg = queue->head;

    while (NULL != msg) {
        overlay_tcp_msg_t *next = msg->next;

        free(msg);
        msg = next;
    }
    overlay->stats.messages_dropped += queue->count;
    overlay->stats.bytes_queued -= queue->bytes;
    memset(queue, 0, sizeof(*queue));
}

/* ------------------------------------------------------------------------------------------ */
/* routing and delivery */

void overlay_tcp_deliver(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                         size_t length)
{
    const overlay_tcp_handler_t *page = overlay->handlers[tag / OVERLAY_TCP_HANDLER_PAGE];
    const overlay_tcp_handler_t *handler =
        NULL != page ? &page[tag % OVERLAY_TCP_HANDLER_PAGE] : NULL;

    if (NULL == handler || NULL == handler->cb) {
        overlay->stats.messages_dropped++;
        opal_output_verbose(1, overlay_tcp_output(),
                            "overlay tcp: daemon %u dropped a message of %zu bytes from daemon %u: "
                            "nothing is registered for tag %u",
                            overlay->vpid, length, src, tag);
        return;
    }
    overlay->stats.messages_delivered++;
    handler->cb(overlay, src, tag, data, length, handler->arg);
}

void overlay_tcp_enter(orte_overlay_t *overlay)
{
    overlay->busy++;
}

bool overlay_tcp_leave(orte_overlay_t *overlay)
{
    overlay->busy--;
    if (0 == overlay->busy && overlay->finalize_requested) {
        overlay_tcp_destroy(overlay);
        return true;
    }
    return false;
}

void overlay_tcp_report_lost(orte_overlay_t *overlay, orte_vpid_t vpid, int status,
                             const char *reason)
{
    opal_output_verbose(1, overlay_tcp_output(), "overlay tcp: daemon %u lost daemon %u: %s",
                        overlay->vpid, vpid, reason);
    if (NULL != overlay->lost_cb && !overlay->finalize_requested) {
        overlay->lost_cb(overlay, vpid, status, reason, overlay->lost_arg);
    }
}

/* Messages to self are delivered from the loop, like every other message, so a callback never
 * runs inside send(). */
static void overlay_tcp_self_cb(int fd, short what, void *arg)
{
    orte_overlay_t *overlay = arg;
    overlay_tcp_msg_t *batch = overlay->self_queue.head;

    overlay->self_armed = false;
    overlay->stats.bytes_queued -= overlay->self_queue.bytes;
    memset(&overlay->self_queue, 0, sizeof(overlay->self_queue));
    overlay_tcp_enter(overlay);
    while (NULL != batch) {
        overlay_tcp_msg_t *msg = batch;

        batch = msg->next;
        if (!overlay->finalize_requested) {
            overlay_tcp_deliver(overlay, msg->src, msg->tag, msg->bytes, msg->size);
        } else {
            overlay->stats.messages_dropped++;
        }
        free(msg);
    }
    overlay_tcp_leave(overlay);
}

/* ------------------------------------------------------------------------------------------ */
/* the module */

static bool overlay_tcp_config_valid(const orte_overlay_config_t *config)
{
    return NULL != config && NULL != config->base && config->num_daemons >= 1 &&
           config->vpid < config->num_daemons && config->radix >= 1 &&
           overlay_tcp_string_valid(config->dvm_id, ORTE_OVERLAY_MAX_DVM_ID) &&
           '\0' != config->dvm_id[0];
}

static int overlay_tcp_init(const orte_overlay_config_t *config, orte_overlay_t **result)
{
    const overlay_tcp_settings_t *s = &overlay_tcp_settings;
    orte_overlay_t *overlay;
    uint64_t first_child;
    int rc;

    if (NULL == result || !overlay_tcp_config_valid(config)) {
        return HERD_ERR_BAD_PARAM;
    }
    if (NULL != config->if_include && '\0' != config->if_include[0] && NULL != config->if_exclude &&
        '\0' != config->if_exclude[0]) {
        opal_show_help(OVERLAY_TCP_HELP_FILE, "include-and-exclude-config", true, config->vpid,
                       config->if_include, config->if_exclude);
        return HERD_ERR_SILENT;
    }
    overlay = calloc(1, sizeof(*overlay));
    if (NULL == overlay) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    overlay->base = config->base;
    overlay->vpid = config->vpid;
    overlay->num_daemons = config->num_daemons;
    overlay->radix = config->radix;
    snprintf(overlay->dvm_id, sizeof(overlay->dvm_id), "%s", config->dvm_id);
    overlay->max_message_size = s->max_message_size;
    overlay->handshake_timeout.tv_sec = (time_t) orte_overlay_base_handshake_timeout();
    /* a parent slow to answer (its node busy, its loop blocked a while) is judged like a
     * neighbour gone silent; the handshake timeout is for strangers at our own listener */
    overlay->heartbeat_timeout_ms = config->heartbeat_timeout_ms;
    overlay->connect_timeout = overlay->handshake_timeout;
    if ((uint64_t) config->heartbeat_timeout_ms >
        (uint64_t) overlay->handshake_timeout.tv_sec * 1000) {
        overlay->connect_timeout.tv_sec = (time_t) (config->heartbeat_timeout_ms / 1000);
        overlay->connect_timeout.tv_usec =
            (suseconds_t) (config->heartbeat_timeout_ms % 1000) * 1000;
    }
    overlay->listen_fd = -1;

    memcpy(overlay->secret, config->secret, sizeof(overlay->secret));
    /* the caller's lists replace the variables, so a launcher can pass on what its user chose */
    if (NULL != config->if_include && '\0' != config->if_include[0]) {
        rc = overlay_tcp_if_list_parse("the overlay's if_include setting", config->if_include,
                                       false, &overlay->interfaces);
    } else if (NULL != config->if_exclude && '\0' != config->if_exclude[0]) {
        rc = overlay_tcp_if_list_parse("the overlay's if_exclude setting", config->if_exclude, true,
                                       &overlay->interfaces);
    } else if (NULL != s->if_include && '\0' != s->if_include[0]) {
        rc = overlay_tcp_if_list_parse("overlay_tcp_if_include", s->if_include, false,
                                       &overlay->interfaces);
    } else {
        rc = overlay_tcp_if_list_parse("overlay_tcp_if_exclude", s->if_exclude, true,
                                       &overlay->interfaces);
    }
    if (HERD_SUCCESS != rc) {
        goto err_free;
    }

    overlay->has_parent = 0 != overlay->vpid;
    overlay->parent.vpid = orte_radix_parent(overlay->vpid, overlay->radix);
    overlay->parent.state = OVERLAY_TCP_PEER_WAITING;
    /* 64-bit: vpid * radix may not fit in 32 */
    first_child = (uint64_t) overlay->vpid * overlay->radix + 1;
    if (first_child < overlay->num_daemons) {
        uint64_t count = overlay->num_daemons - first_child;

        overlay->first_child = (orte_vpid_t) first_child;
        overlay->num_children = (uint32_t) (count < overlay->radix ? count : overlay->radix);
        overlay->children = calloc(overlay->num_children, sizeof(*overlay->children));
        if (NULL == overlay->children) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
            goto err_lists;
        }
        for (uint32_t i = 0; i < overlay->num_children; i++) {
            overlay->children[i].vpid = overlay->first_child + i;
            overlay->children[i].state = OVERLAY_TCP_PEER_WAITING;
        }
    } else {
        overlay->first_child = ORTE_VPID_INVALID;
    }
    rc = opal_event_timer_create(overlay->base, false, overlay_tcp_self_cb, overlay,
                                 &overlay->self_event);
    if (HERD_SUCCESS != rc) {
        goto err_children;
    }
    opal_output_verbose(5, overlay_tcp_output(),
                        "overlay tcp: daemon %u of %u (radix %u, DVM %s): parent %d, %u children",
                        overlay->vpid, overlay->num_daemons, overlay->radix, overlay->dvm_id,
                        overlay->has_parent ? (int) overlay->parent.vpid : -1,
                        overlay->num_children);
    *result = overlay;
    return HERD_SUCCESS;

err_children:
    free(overlay->children);
err_lists:
    overlay_tcp_if_list_free(&overlay->interfaces);
err_free:
    explicit_bzero(overlay->secret, sizeof(overlay->secret));
    free(overlay);
    return rc;
}

static void overlay_tcp_accept_cb(int fd, short what, void *arg);

static void overlay_tcp_accept_retry_cb(int fd, short what, void *arg)
{
    orte_overlay_t *overlay = arg;

    if (overlay->listen_fd >= 0) {
        opal_event_add(overlay->listen_event, NULL);
        /* there may be connections waiting already */
        overlay_tcp_accept_cb(overlay->listen_fd, OPAL_EVENT_READ, overlay);
    }
}

static void overlay_tcp_accept_cb(int fd, short what, void *arg)
{
    orte_overlay_t *overlay = arg;

    for (int i = 0; i < OVERLAY_TCP_ACCEPT_BURST; i++) {
        struct sockaddr_storage address;
        socklen_t length = sizeof(address);
        char text[INET6_ADDRSTRLEN + 16];
        int conn_fd;

        conn_fd = accept4(fd, (struct sockaddr *) &address, &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (conn_fd < 0) {
            int err = errno;

            if (EINTR == err || ECONNABORTED == err || EPROTO == err) {
                continue;
            }
            if (EAGAIN == err || EWOULDBLOCK == err) {
                return;
            }
            /* the listener would stay readable and spin the loop: rest a while (a log line
             * only: a flood of strangers can cause it, and it must not reach a job's output) */
            opal_output_verbose(1, overlay_tcp_output(),
                                "overlay tcp: daemon %u cannot accept connections for now: %s; "
                                "trying again in %d s",
                                overlay->vpid, strerror(err), OVERLAY_TCP_ACCEPT_RETRY_SECONDS);
            if (NULL != overlay->accept_retry) {
                struct timeval rest = {.tv_sec = OVERLAY_TCP_ACCEPT_RETRY_SECONDS};

                opal_event_del(overlay->listen_event);
                opal_event_add(overlay->accept_retry, &rest);
            }
            return;
        }
        overlay_tcp_address_format((struct sockaddr *) &address, text, sizeof(text));
        if (overlay->num_pending >= overlay->num_children + OVERLAY_TCP_EXTRA_PENDING) {
            overlay_tcp_conn_evict_pending(overlay);
        }
        if (HERD_SUCCESS != overlay_tcp_conn_accept(overlay, conn_fd, text)) {
            close(conn_fd);
        }
    }
}

int overlay_tcp_auth_prepare(orte_overlay_t *overlay)
{
    const char *why = NULL;
    if (overlay->key_ready) {
        return HERD_SUCCESS;
    }
    if (NULL == overlay_tcp_sodium(&why)) {
        opal_show_help(OVERLAY_TCP_HELP_FILE, "sodium-unavailable", true, why);
        return HERD_ERR_SILENT;
    }
    if (HERD_SUCCESS != overlay_tcp_derive_key(overlay->secret, overlay->key)) {
        return HERD_ERROR;
    }
    explicit_bzero(overlay->secret, sizeof(overlay->secret));
    overlay->key_ready = true;
    return HERD_SUCCESS;
}

int overlay_tcp_random(void *buf, size_t size)
{
    uint8_t *p = buf;
    while (size > 0) {
        ssize_t n = getrandom(p, size, 0);
        if (n < 0) {
            if (EINTR == errno) {
                continue;
            }
            return HERD_ERR_IN_ERRNO;
        }
        p += n;
        size -= (size_t) n;
    }
    return HERD_SUCCESS;
}

/* Start accepting on a listening socket; advertise its address, or for a wildcard bind the
 * best allowed interface address with its port. */
static int overlay_tcp_listener_start(orte_overlay_t *overlay, int fd, char **uri)
{
    struct sockaddr_storage bound;
    struct sockaddr_storage advertised;
    socklen_t length = sizeof(bound);
    char text[OVERLAY_TCP_MAX_URI + 1];
    char *copy;
    int rc;

    /* whoever connects here is authenticated */
    if (HERD_SUCCESS != (rc = overlay_tcp_auth_prepare(overlay))) {
        return rc;
    }
    if (0 != getsockname(fd, (struct sockaddr *) &bound, &length)) {
        return HERD_ERR_IN_ERRNO;
    }
    advertised = bound;
    if (AF_INET == bound.ss_family) {
        struct sockaddr_in in;

        memcpy(&in, &bound, sizeof(in));
        if (INADDR_ANY == ntohl(in.sin_addr.s_addr)) {
            rc = overlay_tcp_if_choose(&overlay->interfaces, AF_INET, overlay->vpid, &advertised,
                                       &length);
            if (HERD_SUCCESS != rc) {
                return rc;
            }
            ((struct sockaddr_in *) &advertised)->sin_port = in.sin_port;
        }
    } else {
        struct sockaddr_in6 in6;

        memcpy(&in6, &bound, sizeof(in6));
        if (0 == memcmp(&in6.sin6_addr, &in6addr_any, sizeof(in6addr_any))) {
            rc = overlay_tcp_if_choose(&overlay->interfaces, AF_INET6, overlay->vpid, &advertised,
                                       &length);
            if (HERD_SUCCESS != rc) {
                return rc;
            }
            ((struct sockaddr_in6 *) &advertised)->sin6_port = in6.sin6_port;
        }
    }
    rc = overlay_tcp_uri_format((struct sockaddr *) &advertised, text, sizeof(text));
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    copy = strdup(text);
    if (NULL == copy) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    rc = opal_event_fd_create(overlay->base, fd, OPAL_EVENT_READ | OPAL_EVENT_PERSIST,
                              overlay_tcp_accept_cb, overlay, &overlay->listen_event);
    if (HERD_SUCCESS == rc) {
        rc = opal_event_timer_create(overlay->base, false, overlay_tcp_accept_retry_cb, overlay,
                                     &overlay->accept_retry);
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_event_add(overlay->listen_event, NULL);
    }
    if (HERD_SUCCESS != rc) {
        opal_event_free(overlay->accept_retry);
        opal_event_free(overlay->listen_event);
        overlay->accept_retry = NULL;
        overlay->listen_event = NULL;
        free(copy);
        return rc;
    }
    overlay->listen_fd = fd;
    snprintf(overlay->uri, sizeof(overlay->uri), "%s", text);
    opal_output_verbose(5, overlay_tcp_output(), "overlay tcp: daemon %u listens at %s",
                        overlay->vpid, text);
    *uri = copy;
    return HERD_SUCCESS;
}

static int overlay_tcp_listen(orte_overlay_t *overlay, char **uri)
{
    struct sockaddr_storage address;
    socklen_t length = 0;
    char text[INET6_ADDRSTRLEN + 16];
    const char *step;
    int saved_errno;
    int one = 1;
    int fd;
    int rc;

    if (NULL == overlay || NULL == uri || overlay->finalize_requested) {
        return HERD_ERR_BAD_PARAM;
    }
    if (overlay->listen_fd >= 0) {
        return HERD_ERR_EXISTS;
    }
    rc = overlay_tcp_if_choose(&overlay->interfaces, AF_UNSPEC, overlay->vpid, &address, &length);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    overlay_tcp_address_format((struct sockaddr *) &address, text, sizeof(text));
    fd = socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        step = "socket";
        goto err_report;
    }
    /* a restarted daemon must not wait for its old connections' TIME_WAIT */
    (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (AF_INET6 == address.ss_family) {
        (void) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    }
    if (0 != bind(fd, (struct sockaddr *) &address, length)) {
        step = "bind";
        goto err_report;
    }
    if (0 != listen(fd, SOMAXCONN)) {
        step = "listen";
        goto err_report;
    }
    rc = overlay_tcp_listener_start(overlay, fd, uri);
    if (HERD_SUCCESS != rc) {
        close(fd);
    }
    return rc;

err_report:
    saved_errno = errno;
    opal_show_help(OVERLAY_TCP_HELP_FILE, "listen-failed", true, overlay->vpid, text, step,
                   strerror(saved_errno));
    if (fd >= 0) {
        close(fd);
    }
    return HERD_ERR_SILENT;
}

/* A descriptor handed to the endpoint becomes non-blocking and close-on-exec, like its own. */
static int overlay_tcp_fd_take(int fd)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || 0 != fcntl(fd, F_SETFL, flags | O_NONBLOCK)) {
        return HERD_ERR_IN_ERRNO;
    }
    flags = fcntl(fd, F_GETFD);
    if (flags < 0 || 0 != fcntl(fd, F_SETFD, flags | FD_CLOEXEC)) {
        return HERD_ERR_IN_ERRNO;
    }
    return HERD_SUCCESS;
}

static int overlay_tcp_adopt_listener(orte_overlay_t *overlay, int fd, char **uri)
{
    struct sockaddr_storage bound;
    socklen_t length = sizeof(bound);
    int type = 0;
    int accepting = 0;
    socklen_t size;
    const char *why = NULL;
    char fd_text[16];

    if (NULL == overlay || NULL == uri || fd < 0 || overlay->finalize_requested) {
        return HERD_ERR_BAD_PARAM;
    }
    if (overlay->listen_fd >= 0) {
        return HERD_ERR_EXISTS;
    }
    size = sizeof(type);
    if (0 != getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &size)) {
        why = "it is not an open socket";
    } else if (SOCK_STREAM != type) {
        why = "it is not a stream (TCP) socket";
    } else if (0 != getsockname(fd, (struct sockaddr *) &bound, &length) ||
               (AF_INET != bound.ss_family && AF_INET6 != bound.ss_family)) {
        why = "it is not an IPv4 or IPv6 socket";
    } else {
        size = sizeof(accepting);
        if (0 != getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &size) || !accepting) {
            why = "listen() was not called on it";
        }
    }
    if (NULL != why) {
        snprintf(fd_text, sizeof(fd_text), "%d", fd);
        opal_show_help(OVERLAY_TCP_HELP_FILE, "adopt-bad-fd", true, overlay->vpid, fd_text, why);
        return HERD_ERR_BAD_PARAM;
    }
    if (HERD_SUCCESS != overlay_tcp_fd_take(fd)) {
        return HERD_ERR_IN_ERRNO;
    }
    return overlay_tcp_listener_start(overlay, fd, uri);
}

static int overlay_tcp_connect_parent(orte_overlay_t *overlay, const char *uri)
{
    struct sockaddr_storage address;
    socklen_t length = 0;
    char why[256];
    int rc;

    if (NULL == overlay || NULL == uri || overlay->finalize_requested) {
        return HERD_ERR_BAD_PARAM;
    }
    if (!overlay->has_parent) {
        opal_output_verbose(1, overlay_tcp_output(),
                            "overlay tcp: daemon 0 is the root and has no parent to connect to");
        return HERD_ERR_BAD_PARAM;
    }
    if (HERD_SUCCESS != (rc = overlay_tcp_auth_prepare(overlay))) {
        return rc;
    }
    if (NULL != overlay->parent.conn || OVERLAY_TCP_PEER_UP == overlay->parent.state) {
        return HERD_ERR_EXISTS;
    }
    rc = overlay_tcp_uri_parse(uri, &address, &length, why, sizeof(why));
    if (HERD_SUCCESS != rc || strlen(uri) > OVERLAY_TCP_MAX_URI) {
        opal_show_help(OVERLAY_TCP_HELP_FILE, "bad-uri", true, overlay->vpid, overlay->parent.vpid,
                       uri, HERD_SUCCESS != rc ? why : "it is too long");
        return HERD_ERR_BAD_PARAM;
    }
    snprintf(overlay->parent.uri, sizeof(overlay->parent.uri), "%s", uri);
    /* a lost parent may be dialled again; what was queued for it went with the loss */
    overlay->parent.state = OVERLAY_TCP_PEER_WAITING;
    return overlay_tcp_conn_connect(overlay, (struct sockaddr *) &address, length);
}

static int overlay_tcp_connect_ancestor(orte_overlay_t *overlay, orte_vpid_t ancestor,
                                        const char *uri)
{
    if (NULL == overlay || !overlay->has_parent || ancestor >= overlay->vpid ||
        !orte_radix_in_subtree(ancestor, overlay->vpid, overlay->radix)) {
        return HERD_ERR_BAD_PARAM;
    }
    if (NULL != overlay->parent.conn || OVERLAY_TCP_PEER_UP == overlay->parent.state) {
        return HERD_ERR_EXISTS;
    }
    /* those between us and the ancestor are down for us, the parent we had among them */
    for (orte_vpid_t v = orte_radix_parent(overlay->vpid, overlay->radix); v != ancestor;
         v = orte_radix_parent(v, overlay->radix)) {
        int rc = overlay_tcp_mark_down(overlay, v);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
    overlay->parent.vpid = ancestor;
    return overlay_tcp_connect_parent(overlay, uri);
}

static int overlay_tcp_adopt_peer(orte_overlay_t *overlay, int fd, orte_vpid_t vpid)
{
    overlay_tcp_peer_t *peer;
    struct sockaddr_storage remote;
    socklen_t length = sizeof(remote);
    int type = 0;
    socklen_t size = sizeof(type);
    const char *why = NULL;
    char fd_text[16];

    if (NULL == overlay || fd < 0 || overlay->finalize_requested) {
        return HERD_ERR_BAD_PARAM;
    }
    peer = overlay_tcp_neighbour(overlay, vpid);
    if (NULL == peer) {
        opal_output_verbose(1, overlay_tcp_output(),
                            "overlay tcp: daemon %u cannot adopt a connection to daemon %u: it is "
                            "not a neighbour in the tree",
                            overlay->vpid, vpid);
        return HERD_ERR_BAD_PARAM;
    }
    if (NULL != peer->conn || OVERLAY_TCP_PEER_UP == peer->state) {
        return HERD_ERR_EXISTS;
    }
    if (0 != getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &size)) {
        why = "it is not an open socket";
    } else if (SOCK_STREAM != type) {
        why = "it is not a stream socket";
    } else if (0 != getpeername(fd, (struct sockaddr *) &remote, &length)) {
        why = "it is not connected";
    }
    if (NULL != why) {
        snprintf(fd_text, sizeof(fd_text), "%d", fd);
        opal_show_help(OVERLAY_TCP_HELP_FILE, "adopt-bad-peer-fd", true, overlay->vpid, fd_text,
                       vpid, why, vpid);
        return HERD_ERR_BAD_PARAM;
    }
    if (HERD_SUCCESS != overlay_tcp_fd_take(fd)) {
        return HERD_ERR_IN_ERRNO;
    }
    if (peer == &overlay->parent) {
        snprintf(overlay->parent.uri, sizeof(overlay->parent.uri), "%s",
                 "(a socket shared at fork)");
    }
    return overlay_tcp_conn_adopt(overlay, fd, peer);
}

static void overlay_tcp_report_too_large(const orte_overlay_t *overlay, orte_vpid_t dst,
                                         uint16_t tag, size_t length)
{
    char size_text[32];
    char max_text[32];

    snprintf(size_text, sizeof(size_text), "%zu", length);
    snprintf(max_text, sizeof(max_text), "%zu", overlay->max_message_size);
    opal_show_help(OVERLAY_TCP_HELP_FILE, "message-too-large", true, overlay->vpid, size_text, dst,
                   tag, max_text);
}

static int overlay_tcp_sendv(orte_overlay_t *overlay, orte_vpid_t dst, uint16_t tag,
                             const struct iovec *iov, int iovcnt)
{
    overlay_tcp_header_t header;
    overlay_tcp_peer_t *peer;
    size_t length = 0;
    int rc;

    if (NULL == overlay || overlay->finalize_requested || iovcnt < 0 ||
        iovcnt > ORTE_OVERLAY_MAX_IOV || (iovcnt > 0 && NULL == iov) ||
        dst >= overlay->num_daemons) {
        return HERD_ERR_BAD_PARAM;
    }
    for (int i = 0; i < iovcnt; i++) {
        if ((NULL == iov[i].iov_base && 0 != iov[i].iov_len) ||
            iov[i].iov_len > SIZE_MAX - length) {
            return HERD_ERR_BAD_PARAM;
        }
        length += iov[i].iov_len;
    }
    if (length > overlay->max_message_size) {
        overlay_tcp_report_too_large(overlay, dst, tag, length);
        return HERD_ERR_BAD_PARAM;
    }
    header = (overlay_tcp_header_t){
        .version = OVERLAY_TCP_PROTOCOL_VERSION,
        .type = OVERLAY_TCP_MSG_DATA,
        .tag = tag,
        .src = overlay->vpid,
        .dst = dst,
        .length = (uint32_t) length,
    };
    if (dst == overlay->vpid) {
        overlay_tcp_msg_t *msg = overlay_tcp_msg_new(&header, false, iov, iovcnt, length);
        struct timeval now = {0, 0};

        if (NULL == msg) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        overlay_tcp_queue_push(overlay, &overlay->self_queue, msg);
        if (!overlay->self_armed) {
            rc = opal_event_add(overlay->self_event, &now);
            if (HERD_SUCCESS != rc) {
                return rc; /* the message stays queued and goes with the next one */
            }
            overlay->self_armed = true;
        }
        overlay->stats.messages_sent++;
        return HERD_SUCCESS;
    }
    peer = overlay_tcp_next_hop(overlay, dst);
    if (NULL == peer) {
        return overlay_tcp_is_down(overlay, dst) ? HERD_ERR_UNREACH : HERD_ERR_BAD_PARAM;
    }
    if (OVERLAY_TCP_PEER_LOST == peer->state) {
        return HERD_ERR_UNREACH;
    }
    rc = overlay_tcp_peer_send(overlay, peer, &header, iov, iovcnt, length);
    if (HERD_SUCCESS == rc) {
        overlay->stats.messages_sent++;
    }
    return rc;
}

static int overlay_tcp_send(orte_overlay_t *overlay, orte_vpid_t dst, uint16_t tag,
                            const void *data, size_t length)
{
    struct iovec iov = {.iov_base = (void *) data, .iov_len = length};

    return overlay_tcp_sendv(overlay, dst, tag, &iov, 0 != length ? 1 : 0);
}

static int overlay_tcp_register_recv(orte_overlay_t *overlay, uint16_t tag,
                                     orte_overlay_recv_cb_t cb, void *arg)
{
    overlay_tcp_handler_t **page;
    overlay_tcp_handler_t *handler;

    if (NULL == overlay) {
        return HERD_ERR_BAD_PARAM;
    }
    page = &overlay->handlers[tag / OVERLAY_TCP_HANDLER_PAGE];
    if (NULL == *page) {
        if (NULL == cb) {
            return HERD_SUCCESS;
        }
        *page = calloc(OVERLAY_TCP_HANDLER_PAGE, sizeof(**page));
        if (NULL == *page) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    handler = &(*page)[tag % OVERLAY_TCP_HANDLER_PAGE];
    if (NULL != cb && NULL != handler->cb) {
        return HERD_ERR_EXISTS;
    }
    handler->cb = cb;
    handler->arg = NULL != cb ? arg : NULL;
    return HERD_SUCCESS;
}

static void overlay_tcp_set_lost_callback(orte_overlay_t *overlay, orte_overlay_lost_cb_t cb,
                                          void *arg)
{
    if (NULL != overlay) {
        overlay->lost_cb = cb;
        overlay->lost_arg = arg;
    }
}

static void overlay_tcp_get_stats(const orte_overlay_t *overlay, orte_overlay_stats_t *stats)
{
    if (NULL != overlay && NULL != stats) {
        *stats = overlay->stats;
    }
}

static void overlay_tcp_destroy(orte_overlay_t *overlay)
{
    while (NULL != overlay->conns) {
        overlay_tcp_conn_t *conn = overlay->conns;

        overlay_tcp_conn_close(conn, OVERLAY_TCP_CONN_UP == conn->state);
    }
    opal_event_free(overlay->listen_event);
    opal_event_free(overlay->accept_retry);
    if (overlay->listen_fd >= 0) {
        close(overlay->listen_fd);
    }
    overlay_tcp_queue_drop(overlay, &overlay->parent.queue);
    for (uint32_t i = 0; i < overlay->num_children; i++) {
        overlay_tcp_queue_drop(overlay, &overlay->children[i].queue);
    }
    overlay_tcp_queue_drop(overlay, &overlay->self_queue);
    opal_event_free(overlay->self_event);
    overlay_tcp_heartbeat_free(overlay);
    free(overlay->children);
    overlay_tcp_route_free(overlay);
    for (size_t i = 0; i < OVERLAY_TCP_HANDLER_PAGES; i++) {
        free(overlay->handlers[i]);
    }
    overlay_tcp_if_list_free(&overlay->interfaces);
    opal_output_verbose(5, overlay_tcp_output(), "overlay tcp: daemon %u finalized", overlay->vpid);
    explicit_bzero(overlay->secret, sizeof(overlay->secret));
    explicit_bzero(overlay->key, sizeof(overlay->key));
    free(overlay);
}

static void overlay_tcp_finalize(orte_overlay_t *overlay)
{
    if (NULL == overlay) {
        return;
    }
    overlay->finalize_requested = true;
    if (0 == overlay->busy) {
        overlay_tcp_destroy(overlay);
    }
}

const orte_overlay_module_t overlay_tcp_module = {
    .init = overlay_tcp_init,
    .listen = overlay_tcp_listen,
    .adopt_listener = overlay_tcp_adopt_listener,
    .connect_parent = overlay_tcp_connect_parent,
    .connect_ancestor = overlay_tcp_connect_ancestor,
    .route_around = overlay_tcp_route_around,
    .adopt_peer = overlay_tcp_adopt_peer,
    .send = overlay_tcp_send,
    .sendv = overlay_tcp_sendv,
    .register_recv = overlay_tcp_register_recv,
    .set_lost_callback = overlay_tcp_set_lost_callback,
    .get_stats = overlay_tcp_get_stats,
    .finalize = overlay_tcp_finalize,
};
