/* SPDX-License-Identifier: BSD-3-Clause */
/* btl tcp: the module. One listener per process, bound when the transports start: at its
 * RM-assigned endpoint when the job has one (herd_peer_endpoint), else (no assignment, or the
 * assigned port taken) at a port of the kernel's choice published with herd_put. A process
 * opens its own connection to a peer on its first message to it and only sends on it; it
 * receives on the connections peers opened to it. Two processes sending to each other at once
 * thus open two connections and nothing has to be decided between them (docs/btl.md). */
#include "herd_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "ompi-shim/mca/btl/btl.h"
#include "ompi-shim/mca/btl/tcp/btl_tcp_internal.h"
#include "opal/mca/base/mca_var.h"
#include "opal/util/jobdb.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"

#define BTL_TCP_DEFAULT_PRIORITY 10

btl_tcp_state_t btl_tcp = {.listen_fd = -1};

const char *btl_tcp_addr_text(const struct sockaddr_storage *addr, socklen_t len, char *buf,
                              size_t size)
{
    if (HERD_SUCCESS != opal_jobdb_endpoint_string(addr, len, buf, size)) {
        snprintf(buf, size, "(an address)");
    }
    return buf;
}

void btl_tcp_deadline_in(struct timespec *t, long ms)
{
    clock_gettime(CLOCK_MONOTONIC, t);
    t->tv_sec += ms / 1000;
    t->tv_nsec += (ms % 1000) * 1000000;
    if (t->tv_nsec >= 1000000000) {
        t->tv_sec++;
        t->tv_nsec -= 1000000000;
    }
}

bool btl_tcp_passed(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}
/* ------------------------------------------------------------------------------------------ */
/* the listener and where peers find it */

/* An address of this host peers on other nodes can name, for the modex: the first IPv4
 * interface that is up and not loopback, else loopback (a job on one host). */
static void local_address(struct sockaddr_storage *addr, socklen_t *len)
{
    struct ifaddrs *ifs = NULL;
    struct sockaddr_in *sin = (struct sockaddr_in *) addr;

    memset(addr, 0, sizeof(*addr));
    sin->sin_family = AF_INET;
    sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    *len = sizeof(*sin);
    if (0 != getifaddrs(&ifs)) {
        return;
    }
    for (struct ifaddrs *i = ifs; NULL != i; i = i->ifa_next) {
        if (NULL != i->ifa_addr && AF_INET == i->ifa_addr->sa_family && (i->ifa_flags & IFF_UP) &&
            !(i->ifa_flags & IFF_LOOPBACK)) {
            sin->sin_addr = ((struct sockaddr_in *) i->ifa_addr)->sin_addr;
            break;
        }
    }
    freeifaddrs(ifs);
}

static int listen_at(const struct sockaddr_storage *addr, socklen_t len, int *err)
{
    int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;

    if (fd < 0) {
        *err = errno;
        return -1;
    }
    /* a port in TIME_WAIT from a previous job of this session slot is ours to reuse */
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (0 != bind(fd, (const struct sockaddr *) addr, len) || 0 != listen(fd, SOMAXCONN)) {
        *err = errno;
        close(fd);
        return -1;
    }
    return fd;
}

/* Bind the listener: at the RM-assigned endpoint, else anywhere and published by the modex. */
static int start_listener(void)
{
    const ompi_btl_rte_t *rte = btl_tcp.rte;
    struct sockaddr_storage addr;
    size_t len = sizeof(addr);
    int err = 0;
    const char *why = NULL;
    char text[128];

    int rc =
        btl_tcp.use_rm ? rte->peer_endpoint(rte->my_rank, "tcp", &addr, &len) : HERD_ERR_NOT_FOUND;
    if (HERD_SUCCESS == rc) {
        btl_tcp.listen_fd = listen_at(&addr, (socklen_t) len, &err);
        if (btl_tcp.listen_fd >= 0) {
            btl_tcp_addr_text(&addr, (socklen_t) len, btl_tcp.listen_text,
                              sizeof(btl_tcp.listen_text));
            opal_output_verbose(5, ompi_btl_base_framework.output,
                                "rank %u: tcp listens at its RM-assigned endpoint %s", rte->my_rank,
                                btl_tcp.listen_text);
            return HERD_SUCCESS;
        }
        if (EADDRINUSE != err) {
            opal_show_help("help-btl-tcp.txt", "listen-failed", true, rte->my_rank,
                           btl_tcp_addr_text(&addr, (socklen_t) len, text, sizeof(text)),
                           strerror(err));
            return HERD_ERR_SILENT;
        }
        why = "its RM-assigned port is taken by another program";
        ((struct sockaddr_in *) &addr)->sin_port = 0; /* same family layout for the port */
    } else {
        why = btl_tcp.use_rm ? "the job has no RM-assigned tcp endpoint"
                             : "btl_tcp_use_rm_endpoint is false";
        socklen_t slen;
        local_address(&addr, &slen);
        len = slen;
    }
    /* the modex: the kernel's port at this address, published for peers' herd_get */
    struct sockaddr_storage any = addr;
    if (AF_INET == any.ss_family) {
        ((struct sockaddr_in *) &any)->sin_addr.s_addr = htonl(INADDR_ANY);
        ((struct sockaddr_in *) &any)->sin_port = 0;
    } else {
        ((struct sockaddr_in6 *) &any)->sin6_port = 0;
    }
    btl_tcp.listen_fd = listen_at(&any, (socklen_t) len, &err);
    if (btl_tcp.listen_fd < 0) {
        opal_show_help("help-btl-tcp.txt", "listen-failed", true, rte->my_rank,
                       btl_tcp_addr_text(&any, (socklen_t) len, text, sizeof(text)), strerror(err));
        return HERD_ERR_SILENT;
    }
    struct sockaddr_storage bound;
    socklen_t blen = sizeof(bound);
    getsockname(btl_tcp.listen_fd, (struct sockaddr *) &bound, &blen);
    if (AF_INET == addr.ss_family) {
        ((struct sockaddr_in *) &addr)->sin_port = ((struct sockaddr_in *) &bound)->sin_port;
    } else {
        ((struct sockaddr_in6 *) &addr)->sin6_port = ((struct sockaddr_in6 *) &bound)->sin6_port;
    }
    rc = rte->put(BTL_TCP_MODEX_KEY, &addr, len);
    if (HERD_SUCCESS == rc) {
        rc = rte->commit();
    }
    if (HERD_SUCCESS != rc) {
        close(btl_tcp.listen_fd);
        btl_tcp.listen_fd = -1;
        return rc;
    }
    btl_tcp_addr_text(&addr, (socklen_t) len, btl_tcp.listen_text, sizeof(btl_tcp.listen_text));
    opal_output_verbose(5, ompi_btl_base_framework.output,
                        "rank %u: tcp listens at %s, published by the modex (%s)", rte->my_rank,
                        btl_tcp.listen_text, why);
    return HERD_SUCCESS;
}

/* Where peer listens: its RM-assigned endpoint, else what it published (the one place that
 * knows both; docs/btl.md). Blocks in herd_get until the peer published, up to the wireup's
 * get timeout. */
int btl_tcp_peer_address(const ompi_proc_t *proc, enum btl_tcp_addr_path path,
                         struct sockaddr_storage *addr, socklen_t *len,
                         enum btl_tcp_addr_path *used)
{
    const ompi_btl_rte_t *rte = btl_tcp.rte;
    size_t room = sizeof(*addr);

    if (PATH_RM == path && btl_tcp.use_rm &&
        HERD_SUCCESS == rte->peer_endpoint(proc->rank, "tcp", addr, &room)) {
        *len = (socklen_t) room;
        *used = PATH_RM;
        return HERD_SUCCESS;
    }
    void *value = NULL;
    size_t vlen = 0;
    int rc = rte->get(proc->rank, BTL_TCP_MODEX_KEY, &value, &vlen);
    if (HERD_SUCCESS != rc) {
        opal_show_help("help-btl-tcp.txt", "no-address", true, rte->my_rank, proc->rank,
                       rte->last_error());
        return HERD_ERR_UNREACH;
    }
    if (vlen < sizeof(struct sockaddr_in) || vlen > sizeof(*addr)) {
        free(value);
        return HERD_ERR_UNPACK_FAILURE;
    }
    memcpy(addr, value, vlen);
    free(value);
    *len = (socklen_t) vlen;
    *used = PATH_MODEX;
    return HERD_SUCCESS;
}
/* ------------------------------------------------------------------------------------------ */
/* the module */

static int btl_tcp_progress(void)
{
    size_t n = 1 + btl_tcp.num_conns + btl_tcp.num_endpoints;
    int events = 0;

    if (n > btl_tcp.cap_pfds) {
        struct pollfd *grown = realloc(btl_tcp.pfds, n * sizeof(*grown));
        if (NULL == grown) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        btl_tcp.pfds = grown;
        btl_tcp.cap_pfds = n;
    }
    struct pollfd *p = btl_tcp.pfds;
    size_t k = 0;
    p[k++] = (struct pollfd){.fd = btl_tcp.listen_fd, .events = POLLIN};
    for (size_t i = 0; i < btl_tcp.num_conns; ++i) {
        p[k++] = (struct pollfd){.fd = btl_tcp.conns[i]->fd, .events = POLLIN};
    }
    size_t first_ep = k;
    for (btl_tcp_endpoint_t *ep = btl_tcp.endpoints; NULL != ep; ep = ep->next) {
        short want = 0;
        if (OUT_CONNECTING == ep->state) {
            want = POLLOUT;
        } else if (OUT_AWAIT_ACK == ep->state) {
            want = POLLIN;
        } else if (OUT_READY == ep->state) {
            want = (short) (POLLIN | (NULL != ep->queue_head ? POLLOUT : 0));
        }
        p[k++] = (struct pollfd){.fd = ep->fd >= 0 ? ep->fd : -1, .events = want};
    }
    if (poll(p, k, 0) < 0) {
        return 0;
    }
    /* endpoints first: their order in p is that of the list, which accept does not change */
    size_t j = first_ep;
    for (btl_tcp_endpoint_t *ep = btl_tcp.endpoints; NULL != ep; ep = ep->next, ++j) {
        if (0 != p[j].revents || OUT_CONNECTING == ep->state || OUT_AWAIT_ACK == ep->state) {
            events += btl_tcp_progress_endpoint(ep, p[j].revents);
        }
    }
    /* incoming, from the last: close_conn moves the last one into a closed one's place */
    for (size_t i = btl_tcp.num_conns; i > 0; --i) {
        if (0 != p[i].revents && btl_tcp_read_conn(btl_tcp.conns[i - 1], &events)) {
            btl_tcp_close_conn(i - 1);
            events++;
        }
    }
    if (p[0].revents & POLLIN) {
        events += btl_tcp_accept_conns();
    }
    return events;
}

static int btl_tcp_init(const ompi_btl_rte_t *rte, ompi_btl_deliver_fn_t deliver)
{
    btl_tcp.rte = rte;
    btl_tcp.deliver = deliver;
    btl_tcp.endpoints = NULL;
    btl_tcp.num_endpoints = btl_tcp.num_queued = 0;
    btl_tcp.num_conns = 0;
    if (strlen(rte->jobid) > BTL_TCP_JOBID_MAX) {
        return HERD_ERR_BAD_PARAM;
    }
    return start_listener();
}

static bool btl_tcp_reachable(uint32_t peer)
{
    (void) peer;
    return true;
}

static size_t btl_tcp_pending(void)
{
    return btl_tcp.num_queued;
}

static void btl_tcp_finalize(void)
{
    while (NULL != btl_tcp.endpoints) {
        btl_tcp_endpoint_t *ep = btl_tcp.endpoints;
        btl_tcp.endpoints = ep->next;
        btl_tcp_drop_queue(ep);
        if (ep->fd >= 0) {
            close(ep->fd);
        }
        ep->proc->endpoint[HERD_ENDPOINT_TAG_TCP] = NULL;
        free(ep);
    }
    while (btl_tcp.num_conns > 0) {
        btl_tcp_close_conn(btl_tcp.num_conns - 1);
    }
    free(btl_tcp.conns);
    btl_tcp.conns = NULL;
    btl_tcp.cap_conns = 0;
    free(btl_tcp.pfds);
    btl_tcp.pfds = NULL;
    btl_tcp.cap_pfds = 0;
    btl_tcp.num_endpoints = btl_tcp.num_queued = 0;
    if (btl_tcp.listen_fd >= 0) {
        close(btl_tcp.listen_fd);
        btl_tcp.listen_fd = -1;
    }
}

static size_t btl_tcp_num_peers(void)
{
    return btl_tcp.num_endpoints;
}

static const ompi_btl_module_t btl_tcp_module = {
    .name = "tcp",
    .init = btl_tcp_init,
    .reachable = btl_tcp_reachable,
    .add_peer = btl_tcp_add_peer,
    .send = btl_tcp_send,
    .progress = btl_tcp_progress,
    .progress_enters_kernel = true,
    .pending = btl_tcp_pending,
    .finalize = btl_tcp_finalize,
    .num_peers = btl_tcp_num_peers,
};

static int btl_tcp_register(const opal_mca_component_t *component)
{
    static const opal_mca_var_def_t vars[] = {
        {.name = "priority",
         .type = OPAL_MCA_VAR_INT,
         .storage = &btl_tcp.priority,
         .help = "Priority of the tcp transport (TCP sockets, any peer)"},
        {.name = "connect_timeout",
         .type = OPAL_MCA_VAR_INT,
         .storage = &btl_tcp.connect_timeout,
         .help = "Seconds a connection to a peer may take (a peer not "
                 "listening yet is tried again meanwhile)"},
        {.name = "max_message",
         .type = OPAL_MCA_VAR_SIZE,
         .storage = &btl_tcp.max_message,
         .help = "Longest message accepted from a peer (bytes; a longer "
                 "header is taken for garbage and the connection closed)"},
        {.name = "use_rm_endpoint",
         .type = OPAL_MCA_VAR_BOOL,
         .storage = &btl_tcp.use_rm,
         .help = "Listen at the RM-assigned endpoint when the job has one "
                 "(false: always a port of the kernel's choice, published by "
                 "the modex)"},
    };

    btl_tcp.priority = BTL_TCP_DEFAULT_PRIORITY;
    btl_tcp.connect_timeout = 60;
    btl_tcp.max_message = (size_t) 1 << 32;
    btl_tcp.use_rm = true;
    return opal_mca_var_register_table(component, vars, OPAL_MCA_VAR_DEFS_COUNT(vars));
}

static int btl_tcp_query(const opal_mca_component_t *component, void **module, int *priority)
{
    (void) component;
    *module = (void *) &btl_tcp_module;
    *priority = btl_tcp.priority;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(ompi, btl, tcp, .register_params = btl_tcp_register, .query = btl_tcp_query);
