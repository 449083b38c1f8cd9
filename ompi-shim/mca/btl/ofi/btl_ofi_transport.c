/* SPDX-License-Identifier: BSD-3-Clause */
/* btl ofi's transport proper, the DSO herd-btl-ofi.so (docs/btl.md, "ofi"): one libfabric RDM
 * endpoint per process (FI_MSG, send-after-send order), its address vector and completion
 * queue. Every frame carries its source rank and tag in a small header, so a message from a
 * peer we never sent to is delivered without an address-vector entry; messages longer than
 * btl_ofi_frag_size travel as consecutive fragments, joined per source. It links libfabric only:
 * libherd's services (proc table, output) come through the table the front passes in. */
#include "herd_config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "ompi-shim/mca/btl/btl.h"
#include "ompi-shim/mca/btl/ofi/btl_ofi.h"
#include "ompi-shim/proc/proc.h"
#include "opal/status.h"

#define OFI_HELP       "help-btl-ofi.txt"
#define OFI_RETRY_MS   5
#define OFI_CQ_BATCH   16
#define OFI_ADDR_TEXT  128
#define OFI_PROV_MAX   64
#define OFI_MIN_VERSON FI_VERSION(1, 5)

enum ofi_op_kind { OP_RECV = 1, OP_SEND, OP_HELLO, OP_ACK };

/* A frame being sent: its bytes stay here until the provider completes the send. */
typedef struct ofi_frag {
    struct fi_context ctx; /* first: the completion's op_context is the frag */
    uint8_t kind;          /* OP_SEND, OP_HELLO or OP_ACK */
    struct ofi_frag *next; /* in its peer's queue, or the in-flight list */
    struct ofi_frag *prev; /* in the in-flight list */
    struct ofi_ep *ep;     /* NULL for an ACK */
    fi_addr_t to;          /* an ACK's destination */
    size_t len;
    uint8_t bytes[];
} ofi_frag_t;

/* A receive buffer. Buffers are filled in the order they were posted (send-after-send order
 * is about placement), but a provider may complete them out of that order (a long message
 * under rendezvous after a short one behind it): frames are taken in posting order. */
typedef struct ofi_recv {
    struct fi_context ctx;
    uint8_t kind; /* OP_RECV */
    bool done;    /* completed, not taken yet */
    bool failed;  /* completed with an error: nothing to take */
    size_t len;
    uint8_t *buf;
} ofi_recv_t;

/* NONE: no address yet (a peer that only sent to us); HELLO: at its RM-assigned address,
 * waiting for its ACK; READY; FAILED: its frames are dropped, sends to it fail. */
enum ofi_ep_state { EP_NONE, EP_HELLO, EP_READY, EP_FAILED };
enum ofi_hello_state { HELLO_TO_POST, HELLO_IN_FLIGHT, HELLO_SENT };

/* What this process keeps for a peer (proc->endpoint[HERD_ENDPOINT_TAG_OFI]). */
typedef struct ofi_ep {
    struct ofi_ep *next;        /* every endpoint */
    struct ofi_ep *active_next; /* endpoints with frames queued or in flight, or a hello */
    bool active;
    ompi_proc_t *proc;
    enum ofi_ep_state state;
    enum ofi_hello_state hello;
    fi_addr_t addr;
    uint8_t raw[BTL_OFI_ADDR_MAX]; /* the address inserted, to compare with a hello's */
    size_t raw_len;
    ofi_frag_t *queue_head;
    ofi_frag_t *queue_tail;
    size_t queued;
    size_t in_flight;   /* data frames posted and not completed */
    long long since_ms; /* last completion for this peer while it had frames out */
    long long retry_ms; /* HELLO: when to post the hello again */
    long long deadline_ms;
    /* a message from this peer arriving in fragments */
    uint8_t *partial;
    size_t partial_len;
    size_t partial_got;
    int partial_tag;
} ofi_ep_t;

static struct {
    const ompi_btl_dso_services_t *svc;
    const btl_ofi_params_t *params;
    const ompi_btl_rte_t *rte;
    ompi_btl_deliver_fn_t deliver;
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_cq *cq;
    struct fid_av *av;
    struct fid_ep *ep;
    char provider[OFI_PROV_MAX];
    bool node_only; /* shm: peers on this node */
    uint8_t my_addr[BTL_OFI_ADDR_MAX];
    size_t my_addr_len;
    char my_addr_text[OFI_ADDR_TEXT];
    ofi_recv_t *recvs;
    uint8_t *recv_mem;
    size_t recv_size;
    size_t num_recvs;
    size_t next_recv; /* the buffer posted first among those not taken yet */
    ofi_ep_t *eps;
    size_t num_eps;
    ofi_ep_t *active;
    ofi_frag_t *in_flight; /* every frame posted and not completed (freed at finalize) */
    ofi_frag_t *acks;      /* ACKs the provider could not take yet */
    size_t pending;        /* data frames queued or in flight to peers that have not failed */
    size_t acks_pending;   /* ACKs queued or in flight: a peer waits for them */
    long long timeout_ms;
} ofi;

static long long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long) t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static const char *addr_text(const void *addr, char *buf, size_t size)
{
    size_t len = size;
    if (NULL == ofi.av || NULL == fi_av_straddr(ofi.av, addr, buf, &len)) {
        snprintf(buf, size, "(an address)");
    }
    return buf;
}

/* ------------------------------------------------------------------------------------------ */
/* opening the endpoint */

static void close_endpoint(void)
{
    if (NULL != ofi.ep) {
        fi_close(&ofi.ep->fid);
        ofi.ep = NULL;
    }
    if (NULL != ofi.av) {
        fi_close(&ofi.av->fid);
        ofi.av = NULL;
    }
    if (NULL != ofi.cq) {
        fi_close(&ofi.cq->fid);
        ofi.cq = NULL;
    }
    if (NULL != ofi.domain) {
        fi_close(&ofi.domain->fid);
        ofi.domain = NULL;
    }
    if (NULL != ofi.fabric) {
        fi_close(&ofi.fabric->fid);
        ofi.fabric = NULL;
    }
    if (NULL != ofi.info) {
        fi_freeinfo(ofi.info);
        ofi.info = NULL;
    }
    free(ofi.recvs);
    ofi.recvs = NULL;
    free(ofi.recv_mem);
    ofi.recv_mem = NULL;
    ofi.num_recvs = 0;
    ofi.next_recv = 0;
}

static uint32_t api_version(void)
{
    uint32_t header = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);
    uint32_t library = fi_version();
    return library < header ? library : header;
}

/* The providers' entries for an RDM endpoint with send-after-send order, of provider name, bound
 * to src when given. */
static int get_info(const char *name, const struct sockaddr_storage *src, size_t src_len,
                    struct fi_info **out)
{
    struct fi_info *hints = fi_allocinfo();
    if (NULL == hints) {
        return -FI_ENOMEM;
    }
    hints->caps = FI_MSG;
    hints->mode = FI_CONTEXT;
    hints->ep_attr->type = FI_EP_RDM;
    hints->tx_attr->msg_order = FI_ORDER_SAS;
    hints->rx_attr->msg_order = FI_ORDER_SAS;
    /* no FI_MR_LOCAL: frames are sent from and received into unregistered memory */
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->fabric_attr->prov_name = strdup(name);
    if (NULL != src) {
        hints->addr_format = AF_INET6 == src->ss_family ? FI_SOCKADDR_IN6 : FI_SOCKADDR_IN;
        hints->src_addr = malloc(src_len);
        if (NULL != hints->src_addr) {
            memcpy(hints->src_addr, src, src_len);
            hints->src_addrlen = src_len;
        }
    }
    int rc = NULL == hints->fabric_attr->prov_name || (NULL != src && NULL == hints->src_addr)
                 ? -FI_ENOMEM
                 : fi_getinfo(api_version(), NULL, NULL, 0, hints, out);
    fi_freeinfo(hints);
    return rc;
}

static int post_recv(ofi_recv_t *r)
{
    int rc;
    do {
        rc = (int) fi_recv(ofi.ep, r->buf, ofi.recv_size, NULL, FI_ADDR_UNSPEC, &r->ctx);
        if (-FI_EAGAIN == rc) {
            fi_cq_read(ofi.cq, NULL, 0); /* lets a manual-progress provider move */
        }
    } while (-FI_EAGAIN == rc);
    return rc;
}

/* Open fabric, domain, completion queue, address vector and endpoint for info (taken), post the
 * receive buffers and learn our address; *what names the call that failed. */
static int open_endpoint(struct fi_info *info, const char **what)
{
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_MSG, .wait_obj = FI_WAIT_NONE};
    struct fi_av_attr av_attr = {.type = FI_AV_UNSPEC};
    int rc;

    ofi.info = info;
    if (0 != (rc = fi_fabric(info->fabric_attr, &ofi.fabric, NULL))) {
        *what = "fi_fabric";
    } else if (0 != (rc = fi_domain(ofi.fabric, info, &ofi.domain, NULL))) {
        *what = "fi_domain";
    } else if (0 != (rc = fi_cq_open(ofi.domain, &cq_attr, &ofi.cq, NULL))) {
        *what = "fi_cq_open";
    } else if (0 != (rc = fi_av_open(ofi.domain, &av_attr, &ofi.av, NULL))) {
        *what = "fi_av_open";
    } else if (0 != (rc = fi_endpoint(ofi.domain, info, &ofi.ep, NULL))) {
        *what = "fi_endpoint";
    } else if (0 != (rc = fi_ep_bind(ofi.ep, &ofi.cq->fid, FI_TRANSMIT | FI_RECV))) {
        *what = "fi_ep_bind (completion queue)";
    } else if (0 != (rc = fi_ep_bind(ofi.ep, &ofi.av->fid, 0))) {
        *what = "fi_ep_bind (address vector)";
    } else if (0 != (rc = fi_enable(ofi.ep))) {
        *what = "fi_enable";
    }
    if (0 != rc) {
        close_endpoint();
        return rc;
    }
    ofi.my_addr_len = sizeof(ofi.my_addr);
    if (0 != (rc = fi_getname(&ofi.ep->fid, ofi.my_addr, &ofi.my_addr_len))) {
        *what = "fi_getname";
        close_endpoint();
        return rc;
    }
    ofi.recv_size = BTL_OFI_HEADER_SIZE + ofi.params->frag_size;
    ofi.num_recvs = (size_t) ofi.params->recv_buffers;
    ofi.recvs = calloc(ofi.num_recvs, sizeof(*ofi.recvs));
    ofi.recv_mem = malloc(ofi.num_recvs * ofi.recv_size);
    if (NULL == ofi.recvs || NULL == ofi.recv_mem) {
        *what = "allocating the receive buffers";
        close_endpoint();
        return -FI_ENOMEM;
    }
    for (size_t i = 0; i < ofi.num_recvs; ++i) {
        ofi.recvs[i].kind = OP_RECV;
        ofi.recvs[i].buf = ofi.recv_mem + i * ofi.recv_size;
        if (0 != (rc = post_recv(&ofi.recvs[i]))) {
            *what = "fi_recv";
            close_endpoint();
            return rc;
        }
    }
    snprintf(ofi.provider, sizeof(ofi.provider), "%s", info->fabric_attr->prov_name);
    ofi.node_only = 0 == strcmp(ofi.provider, "shm");
    addr_text(ofi.my_addr, ofi.my_addr_text, sizeof(ofi.my_addr_text));
    return 0;
}

/* Open provider name: at our RM-assigned endpoint when the job has one for it, else wherever
 * the provider puts us, published by the modex. */
static int open_provider(const char *name, char *why, size_t why_len)
{
    const ompi_btl_rte_t *rte = ofi.rte;
    struct fi_info *info = NULL;
    const char *what = "fi_getinfo";
    const char *path_why = "btl_ofi_use_rm_endpoint is false";
    int rc = get_info(name, NULL, 0, &info);

    if (0 != rc) {
        snprintf(why, why_len, "%s: %s", what, fi_strerror(-rc));
        return rc;
    }
    if (ofi.params->use_rm) {
        char fabric[OFI_PROV_MAX + 8];
        struct sockaddr_storage src;
        size_t src_len = sizeof(src);
        struct fi_info *bound = NULL;

        snprintf(fabric, sizeof(fabric), "ofi:%s", info->fabric_attr->prov_name);
        if (HERD_SUCCESS != rte->peer_endpoint(rte->my_rank, fabric, &src, &src_len)) {
            path_why = "the job has no RM-assigned endpoint for it";
        } else if (0 != (rc = get_info(info->fabric_attr->prov_name, &src, src_len, &bound))) {
            path_why = "the provider cannot bind its RM-assigned address";
        } else if (0 != (rc = open_endpoint(bound, &what))) {
            /* another program (or, on simulated nodes, another rank) holds the port */
            path_why = "its RM-assigned endpoint cannot be opened (the port may be taken)";
            ofi.svc->verbose(10, "rank %u: ofi (%s): %s at the RM-assigned endpoint: %s",
                             rte->my_rank, name, what, fi_strerror(-rc));
        } else {
            fi_freeinfo(info);
            ofi.svc->verbose(5, "rank %u: ofi (provider %s) listens at its RM-assigned endpoint %s",
                             rte->my_rank, ofi.provider, ofi.my_addr_text);
            return 0;
        }
    }
    if (0 != (rc = open_endpoint(info, &what))) {
        snprintf(why, why_len, "%s: %s", what, fi_strerror(-rc));
        return rc;
    }
    uint8_t value[1 + OFI_PROV_MAX + BTL_OFI_ADDR_MAX];
    size_t len =
        btl_ofi_encode_modex(ofi.provider, ofi.my_addr, ofi.my_addr_len, value, sizeof(value));
    rc = 0 == len ? HERD_ERR_BAD_PARAM : rte->put(BTL_OFI_MODEX_KEY, value, len);
    if (HERD_SUCCESS == rc) {
        rc = rte->commit();
    }
    if (HERD_SUCCESS != rc) {
        snprintf(why, why_len, "publishing its address: %s", ofi.svc->strerror(rc));
        close_endpoint();
        return -FI_EOTHER;
    }
    ofi.svc->verbose(5, "rank %u: ofi (provider %s) at %s, published by the modex (%s)",
                     rte->my_rank, ofi.provider, ofi.my_addr_text, path_why);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* peers */

static ofi_ep_t *endpoint_of(ompi_proc_t *proc)
{
    ofi_ep_t *ep = proc->endpoint[HERD_ENDPOINT_TAG_OFI];
    if (NULL != ep) {
        return ep;
    }
    ep = calloc(1, sizeof(*ep));
    if (NULL == ep) {
        return NULL;
    }
    ep->proc = proc;
    ep->addr = FI_ADDR_NOTAVAIL;
    ep->next = ofi.eps;
    ofi.eps = ep;
    ofi.num_eps++;
    proc->endpoint[HERD_ENDPOINT_TAG_OFI] = ep;
    return ep;
}

static void activate(ofi_ep_t *ep)
{
    if (!ep->active) {
        ep->active = true;
        ep->active_next = ofi.active;
        ofi.active = ep;
    }
}

static int insert_address(ofi_ep_t *ep, const void *addr, size_t len)
{
    fi_addr_t fa;
    if (len > sizeof(ep->raw) || 1 != fi_av_insert(ofi.av, addr, 1, &fa, 0, NULL)) {
        return HERD_ERR_UNREACH;
    }
    ep->addr = fa;
    memcpy(ep->raw, addr, len);
    ep->raw_len = len;
    return HERD_SUCCESS;
}

static void drop_queue(ofi_ep_t *ep)
{
    while (NULL != ep->queue_head) {
        ofi_frag_t *f = ep->queue_head;
        ep->queue_head = f->next;
        free(f);
    }
    ep->queue_tail = NULL;
    ofi.pending -= ep->queued;
    ep->queued = 0;
}

/* The peer is gone or unreachable: what is queued for it is lost, and what is in flight no
 * longer holds up finalize. */
static void fail_endpoint(ofi_ep_t *ep, const char *why)
{
    if (EP_FAILED == ep->state) {
        return;
    }
    if (ep->queued + ep->in_flight > 0) {
        ofi.svc->verbose(1, "rank %u: ofi to rank %u failed (%s): %zu frames not delivered",
                         ofi.rte->my_rank, ep->proc->rank, why, ep->queued + ep->in_flight);
    } else {
        ofi.svc->verbose(1, "rank %u: ofi to rank %u failed (%s)", ofi.rte->my_rank, ep->proc->rank,
                         why);
    }
    drop_queue(ep);
    ofi.pending -= ep->in_flight;
    ep->state = EP_FAILED;
}

/* Where the peer is, by the modex: what it published (the direct modex asks its daemon the first
 * time, waiting up to the wireup's get timeout). */
static int reach_by_modex(ofi_ep_t *ep)
{
    const ompi_btl_rte_t *rte = ofi.rte;
    void *value = NULL;
    size_t len = 0;
    char name[OFI_PROV_MAX], text[OFI_ADDR_TEXT];
    const uint8_t *addr;
    size_t addr_len;

    int rc = rte->get(ep->proc->rank, BTL_OFI_MODEX_KEY, &value, &len);
    if (HERD_SUCCESS != rc) {
        ofi.svc->show_help(OFI_HELP, "no-address", 1, rte->my_rank, ep->proc->rank,
                           rte->last_error());
        return HERD_ERR_UNREACH;
    }
    rc = btl_ofi_decode_modex(value, len, name, sizeof(name), &addr, &addr_len);
    if (HERD_SUCCESS == rc && 0 != strcmp(name, ofi.provider)) {
        ofi.svc->show_help(OFI_HELP, "provider-mismatch", 1, rte->my_rank, ofi.provider,
                           ep->proc->rank, name);
        rc = HERD_ERR_UNREACH;
    } else if (HERD_SUCCESS == rc) {
        rc = insert_address(ep, addr, addr_len);
    }
    free(value);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    ep->state = EP_READY;
    ofi.svc->verbose(5, "rank %u: ofi reaches rank %u at %s (modex)", rte->my_rank, ep->proc->rank,
                     addr_text(ep->raw, text, sizeof(text)));
    return HERD_SUCCESS;
}

static void in_flight_add(ofi_frag_t *f)
{
    f->prev = NULL;
    f->next = ofi.in_flight;
    if (NULL != ofi.in_flight) {
        ofi.in_flight->prev = f;
    }
    ofi.in_flight = f;
}

static void in_flight_remove(ofi_frag_t *f)
{
    if (NULL != f->prev) {
        f->prev->next = f->next;
    } else {
        ofi.in_flight = f->next;
    }
    if (NULL != f->next) {
        f->next->prev = f->prev;
    }
}

/* Hand a frame to the provider: 0, -FI_EAGAIN (it cannot take it now), or another error. */
static int post(ofi_frag_t *f, fi_addr_t to)
{
    int rc = (int) fi_send(ofi.ep, f->bytes, f->len, NULL, to, &f->ctx);
    if (0 == rc) {
        in_flight_add(f);
    }
    return rc;
}

static ofi_frag_t *new_frag(uint8_t kind, ofi_ep_t *ep, const btl_ofi_header_t *h, const void *data,
                            size_t len)
{
    ofi_frag_t *f = malloc(sizeof(*f) + BTL_OFI_HEADER_SIZE + len);
    if (NULL == f) {
        return NULL;
    }
    f->kind = kind;
    f->ep = ep;
    f->to = FI_ADDR_NOTAVAIL;
    f->next = NULL;
    f->len = BTL_OFI_HEADER_SIZE + len;
    btl_ofi_encode_header(h, f->bytes);
    if (len > 0) {
        memcpy(f->bytes + BTL_OFI_HEADER_SIZE, data, len);
    }
    return f;
}

static void post_hello(ofi_ep_t *ep)
{
    uint8_t payload[BTL_OFI_HELLO_MAX];
    size_t n = btl_ofi_encode_hello(ofi.rte->jobid, ofi.my_addr, ofi.my_addr_len, payload);
    btl_ofi_header_t h = {
        .type = BTL_OFI_HELLO, .src = ofi.rte->my_rank, .dst = ep->proc->rank, .length = n};
    ofi_frag_t *f = new_frag(OP_HELLO, ep, &h, payload, n);
    int rc = NULL != f ? post(f, ep->addr) : -FI_ENOMEM;

    if (0 == rc) {
        ep->hello = HELLO_IN_FLIGHT;
        return;
    }
    free(f);
    /* not listening yet (a peer that has not started its transports): try again shortly */
    ep->hello = HELLO_TO_POST;
    ep->retry_ms = now_ms() + (-FI_EAGAIN == rc ? 0 : OFI_RETRY_MS);
}

static int btl_ofi_add_peer(ompi_proc_t *proc)
{
    const ompi_btl_rte_t *rte = ofi.rte;
    ofi_ep_t *ep = endpoint_of(proc);
    char fabric[OFI_PROV_MAX + 8], text[OFI_ADDR_TEXT];
    struct sockaddr_storage addr;
    size_t len = sizeof(addr);

    if (NULL == ep) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (EP_NONE != ep->state) {
        return EP_FAILED == ep->state ? HERD_ERR_UNREACH : HERD_SUCCESS;
    }
    snprintf(fabric, sizeof(fabric), "ofi:%s", ofi.provider);
    if (ofi.params->use_rm && !ofi.node_only &&
        HERD_SUCCESS == rte->peer_endpoint(proc->rank, fabric, &addr, &len) &&
        HERD_SUCCESS == insert_address(ep, &addr, len)) {
        /* the RM's address may not be the peer's (a port another program took): a hello first,
         * and messages once the peer answers as itself */
        ep->state = EP_HELLO;
        ep->deadline_ms = now_ms() + ofi.timeout_ms;
        ofi.svc->verbose(5, "rank %u: ofi says hello to rank %u at %s (RM-assigned endpoint)",
                         rte->my_rank, proc->rank, addr_text(ep->raw, text, sizeof(text)));
        post_hello(ep);
        activate(ep);
        return HERD_SUCCESS;
    }
    int rc = reach_by_modex(ep);
    if (HERD_SUCCESS != rc) {
        ep->state = EP_FAILED;
    }
    return rc;
}

/* Post what is queued for ep, in order, until the provider cannot take more. */
static int flush_queue(ofi_ep_t *ep)
{
    int events = 0;
    while (EP_READY == ep->state && NULL != ep->queue_head) {
        ofi_frag_t *f = ep->queue_head;
        ofi_frag_t *next = f->next;
        int rc = post(f, ep->addr);
        if (-FI_EAGAIN == rc) {
            break;
        }
        ep->queue_head = next;
        if (NULL == next) {
            ep->queue_tail = NULL;
        }
        ep->queued--;
        if (0 != rc) {
            ofi.pending--;
            free(f);
            fail_endpoint(ep, fi_strerror(-rc));
            return events + 1;
        }
        if (0 == ep->in_flight++) {
            ep->since_ms = now_ms();
        }
        events++;
    }
    return events;
}

static int btl_ofi_send(ompi_proc_t *proc, int tag, const void *buf, size_t len)
{
    ofi_ep_t *ep = proc->endpoint[HERD_ENDPOINT_TAG_OFI];
    btl_ofi_header_t h = {
        .type = BTL_OFI_MSG, .src = ofi.rte->my_rank, .tag = tag, .dst = proc->rank, .length = len};
    size_t offset = 0;

    if (EP_FAILED == ep->state) {
        return HERD_ERR_UNREACH;
    }
    do {
        size_t chunk = len - offset < ofi.params->frag_size ? len - offset : ofi.params->frag_size;
        ofi_frag_t *f = new_frag(OP_SEND, ep, &h, (const uint8_t *) buf + offset, chunk);
        if (NULL == f) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        ofi.pending++;
        h.type = BTL_OFI_FRAG;
        offset += chunk;
        if (EP_READY == ep->state && NULL == ep->queue_head) {
            int rc = post(f, ep->addr);
            if (0 == rc) {
                if (0 == ep->in_flight++) {
                    ep->since_ms = now_ms();
                }
                activate(ep);
                continue;
            }
            if (-FI_EAGAIN != rc) {
                ofi.pending--;
                free(f);
                fail_endpoint(ep, fi_strerror(-rc));
                return HERD_ERR_UNREACH;
            }
        }
        /* in order behind what waits: the peer's hello, or a provider that was full */
        if (0 == ep->queued && 0 == ep->in_flight) {
            ep->since_ms = now_ms();
        }
        if (NULL == ep->queue_tail) {
            ep->queue_head = f;
        } else {
            ep->queue_tail->next = f;
        }
        ep->queue_tail = f;
        ep->queued++;
        activate(ep);
    } while (offset < len);
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* receiving */

static void send_ack(uint32_t asked, fi_addr_t to)
{
    uint8_t payload[BTL_OFI_HELLO_MAX];
    size_t n = btl_ofi_encode_hello(ofi.rte->jobid, NULL, 0, payload);
    btl_ofi_header_t h = {.type = BTL_OFI_ACK, .src = ofi.rte->my_rank, .dst = asked, .length = n};
    ofi_frag_t *f = new_frag(OP_ACK, NULL, &h, payload, n);

    if (NULL == f) {
        return;
    }
    f->to = to;
    int rc = post(f, to);
    if (-FI_EAGAIN == rc) {
        f->next = ofi.acks;
        ofi.acks = f;
    } else if (0 != rc) {
        free(f);
        return;
    }
    ofi.acks_pending++;
}

/* A hello: the sender's own address comes with it, so it is added from the message (no lookup
 * when we answer or send to it later), and told who answers. */
static void take_hello(const btl_ofi_header_t *h, const uint8_t *payload)
{
    const ompi_btl_rte_t *rte = ofi.rte;
    bool same_job = false;
    const uint8_t *addr = NULL;
    size_t addr_len = 0;
    ompi_proc_t *proc;
    ofi_ep_t *ep = NULL;
    fi_addr_t to;

    if (HERD_SUCCESS != btl_ofi_decode_hello(payload, (size_t) h->length, rte->jobid, true,
                                             &same_job, &addr, &addr_len)) {
        ofi.svc->show_help(OFI_HELP, "bad-frame", 1, rte->my_rank, "a malformed hello",
                           rte->my_rank);
        return;
    }
    if (same_job && HERD_SUCCESS == ofi.svc->proc_lookup(h->src, &proc)) {
        ep = endpoint_of(proc);
    }
    if (NULL == ep) {
        /* another job's process took us for one of its own: answer, so it stops waiting */
        if (1 == fi_av_insert(ofi.av, addr, 1, &to, 0, NULL)) {
            send_ack(h->dst, to);
        }
        return;
    }
    if (EP_NONE == ep->state || (EP_HELLO == ep->state && (ep->raw_len != addr_len ||
                                                           0 != memcmp(ep->raw, addr, addr_len)))) {
        if (HERD_SUCCESS != insert_address(ep, addr, addr_len)) {
            return;
        }
    }
    if (EP_NONE == ep->state || EP_HELLO == ep->state) {
        /* its hello is as good as its answer to ours: it is at this address */
        ep->state = EP_READY;
        ofi.svc->verbose(10, "rank %u: ofi: rank %u said hello", rte->my_rank, h->src);
    }
    if (EP_FAILED != ep->state) {
        send_ack(h->dst, ep->addr);
    }
}

static void take_ack(const btl_ofi_header_t *h, const uint8_t *payload)
{
    const ompi_btl_rte_t *rte = ofi.rte;
    bool same_job = false;
    ompi_proc_t *proc = ofi.svc->proc_find(h->dst);
    ofi_ep_t *ep = NULL != proc ? proc->endpoint[HERD_ENDPOINT_TAG_OFI] : NULL;
    char text[OFI_ADDR_TEXT];

    if (HERD_SUCCESS != btl_ofi_decode_hello(payload, (size_t) h->length, rte->jobid, false,
                                             &same_job, NULL, NULL) ||
        NULL == ep || EP_HELLO != ep->state) {
        return; /* a late answer to a hello already settled */
    }
    if (same_job && h->src == h->dst) {
        ep->state = EP_READY;
        ofi.svc->verbose(10, "rank %u: ofi: rank %u answered at its RM-assigned endpoint",
                         rte->my_rank, h->src);
        return;
    }
    ofi.svc->verbose(5, "rank %u: ofi: rank %u's RM-assigned endpoint %s is %s: asking the modex",
                     rte->my_rank, h->dst, addr_text(ep->raw, text, sizeof(text)),
                     same_job ? "another rank's" : "another job's");
    if (HERD_SUCCESS != reach_by_modex(ep)) {
        fail_endpoint(ep, "no address");
    }
}

static void take_frame(const uint8_t *buf, size_t len)
{
    const ompi_btl_rte_t *rte = ofi.rte;
    btl_ofi_header_t h;
    int rc = btl_ofi_decode_header(buf, len, rte->job_size, ofi.params->max_message, &h);
    const uint8_t *payload = buf + BTL_OFI_HEADER_SIZE;
    size_t bytes = len - BTL_OFI_HEADER_SIZE;

    if (HERD_SUCCESS != rc) {
        ofi.svc->show_help(OFI_HELP, "bad-frame", 1, rte->my_rank, ofi.svc->strerror(rc),
                           rte->my_rank);
        return;
    }
    if (BTL_OFI_HELLO == h.type) {
        take_hello(&h, payload);
        return;
    }
    if (BTL_OFI_ACK == h.type) {
        take_ack(&h, payload);
        return;
    }
    ompi_proc_t *proc = ofi.svc->proc_find(h.src);
    ofi_ep_t *ep = NULL != proc ? proc->endpoint[HERD_ENDPOINT_TAG_OFI] : NULL;
    if (BTL_OFI_MSG == h.type) {
        if (NULL != ep && NULL != ep->partial) {
            ofi.svc->verbose(1, "rank %u: ofi: rank %u started a message inside another",
                             rte->my_rank, h.src);
            free(ep->partial);
            ep->partial = NULL;
        }
        if (bytes == h.length) {
            /* whole: straight from the receive buffer, no state for its sender */
            ofi.deliver(h.src, h.tag, payload, bytes);
            return;
        }
        /* the first of several: its sender gets an endpoint to hold the message */
        if (NULL == ep && HERD_SUCCESS == ofi.svc->proc_lookup(h.src, &proc)) {
            ep = endpoint_of(proc);
        }
        uint8_t *whole = NULL != ep ? malloc(h.length) : NULL;
        if (NULL == whole) {
            ofi.svc->verbose(1, "rank %u: ofi: no memory for a %llu-byte message from rank %u",
                             rte->my_rank, (unsigned long long) h.length, h.src);
            return;
        }
        memcpy(whole, payload, bytes);
        ep->partial = whole;
        ep->partial_len = (size_t) h.length;
        ep->partial_got = bytes;
        ep->partial_tag = h.tag;
        return;
    }
    /* FRAG */
    if (NULL == ep || NULL == ep->partial || h.tag != ep->partial_tag ||
        h.length != ep->partial_len || bytes > ep->partial_len - ep->partial_got) {
        ofi.svc->show_help(OFI_HELP, "bad-frame", 1, rte->my_rank,
                           "a fragment of no message in progress", rte->my_rank);
        return;
    }
    memcpy(ep->partial + ep->partial_got, payload, bytes);
    ep->partial_got += bytes;
    if (ep->partial_got == ep->partial_len) {
        uint8_t *whole = ep->partial;
        ep->partial = NULL;
        ofi.deliver(h.src, h.tag, whole, ep->partial_len);
        free(whole);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* completions and progress */

static void sent(ofi_frag_t *f)
{
    ofi_ep_t *ep = f->ep;
    in_flight_remove(f);
    if (OP_SEND == f->kind) {
        if (EP_FAILED != ep->state) {
            ofi.pending--;
        }
        ep->in_flight--;
        ep->since_ms = now_ms();
    } else if (OP_HELLO == f->kind && EP_HELLO == ep->state) {
        ep->hello = HELLO_SENT;
    } else if (OP_ACK == f->kind) {
        ofi.acks_pending--;
    }
    free(f);
}

static void completion_error(void)
{
    struct fi_cq_err_entry e;
    memset(&e, 0, sizeof(e));
    if (fi_cq_readerr(ofi.cq, &e, 0) < 1) {
        return;
    }
    uint8_t kind = NULL != e.op_context ? ((ofi_frag_t *) e.op_context)->kind : 0;
    if (OP_RECV == kind) {
        ofi_recv_t *r = e.op_context;
        if (FI_ECANCELED == e.err) {
            return;
        }
        if (FI_ETRUNC == e.err || FI_ETOOSMALL == e.err) {
            ofi.svc->show_help(OFI_HELP, "frag-size", 1, ofi.rte->my_rank, ofi.recv_size);
        } else {
            ofi.svc->verbose(1, "rank %u: ofi: a receive failed: %s", ofi.rte->my_rank,
                             fi_strerror(e.err));
        }
        r->done = true;
        r->failed = true;
        return;
    }
    if (0 == kind) {
        ofi.svc->verbose(1, "rank %u: ofi: %s", ofi.rte->my_rank, fi_strerror(e.err));
        return;
    }
    ofi_frag_t *f = e.op_context;
    ofi_ep_t *ep = f->ep;
    in_flight_remove(f);
    if (OP_SEND == kind) {
        if (EP_FAILED != ep->state) {
            ofi.pending--;
        }
        ep->in_flight--;
        fail_endpoint(ep, fi_strerror(e.err));
    } else if (OP_HELLO == kind && EP_HELLO == ep->state) {
        /* refused: the peer has not opened its endpoint yet */
        ep->hello = HELLO_TO_POST;
        ep->retry_ms = now_ms() + OFI_RETRY_MS;
    } else if (OP_ACK == kind) {
        ofi.acks_pending--;
    }
    free(f);
}

/* Hellos to post again, queues to push, peers past btl_ofi_timeout; endpoints with nothing left
 * leave the active list. */
static int progress_active(void)
{
    int events = 0;
    long long now = 0;

    while (NULL != ofi.acks) {
        ofi_frag_t *f = ofi.acks;
        ofi_frag_t *next = f->next;
        int rc = post(f, f->to);
        if (-FI_EAGAIN == rc) {
            break;
        }
        ofi.acks = next;
        if (0 != rc) {
            ofi.acks_pending--;
            free(f);
        }
        events++;
    }
    for (ofi_ep_t **link = &ofi.active; NULL != *link;) {
        ofi_ep_t *ep = *link;
        if (EP_HELLO == ep->state) {
            now = 0 != now ? now : now_ms();
            if (now >= ep->deadline_ms) {
                ofi.svc->verbose(5,
                                 "rank %u: ofi: no answer from rank %u's RM-assigned endpoint "
                                 "in %d s: asking the modex",
                                 ofi.rte->my_rank, ep->proc->rank, ofi.params->timeout);
                if (HERD_SUCCESS != reach_by_modex(ep)) {
                    fail_endpoint(ep, "no address");
                }
            } else if (HELLO_TO_POST == ep->hello && now >= ep->retry_ms) {
                post_hello(ep);
            }
        }
        if (EP_READY == ep->state && NULL != ep->queue_head) {
            events += flush_queue(ep);
        }
        if (EP_READY == ep->state && ep->queued + ep->in_flight > 0 && ofi.timeout_ms > 0) {
            now = 0 != now ? now : now_ms();
            if (now - ep->since_ms > ofi.timeout_ms) {
                ofi.svc->show_help(OFI_HELP, "peer-timeout", 1, ofi.rte->my_rank, ep->proc->rank,
                                   ofi.provider, ofi.params->timeout, ep->proc->rank,
                                   ep->proc->rank);
                fail_endpoint(ep, "no answer");
            }
        }
        if (EP_HELLO != ep->state && (EP_FAILED == ep->state || 0 == ep->queued + ep->in_flight)) {
            ep->active = false;
            *link = ep->active_next;
        } else {
            link = &ep->active_next;
        }
    }
    return events;
}

static int btl_ofi_progress(void)
{
    struct fi_cq_msg_entry entries[OFI_CQ_BATCH];
    int events = 0;

    for (;;) {
        ssize_t n = fi_cq_read(ofi.cq, entries, OFI_CQ_BATCH);
        if (-FI_EAVAIL == n) {
            completion_error();
            events++;
            continue;
        }
        if (n <= 0) {
            break;
        }
        for (ssize_t i = 0; i < n; ++i) {
            ofi_frag_t *op = entries[i].op_context;
            if (OP_RECV == op->kind) {
                ofi_recv_t *r = entries[i].op_context;
                r->done = true;
                r->failed = false;
                r->len = entries[i].len;
            } else {
                sent(op);
            }
        }
        events += (int) n;
        if (n < OFI_CQ_BATCH) {
            break;
        }
    }
    /* frames in the order their buffers were posted, which is their order on the wire; a buffer
     * taken and posted again goes back to the end of that order, which is its own place */
    while (ofi.num_recvs > 0 && ofi.recvs[ofi.next_recv].done) {
        ofi_recv_t *r = &ofi.recvs[ofi.next_recv];
        r->done = false;
        if (!r->failed) {
            take_frame(r->buf, r->len);
        }
        int rc = post_recv(r);
        if (0 != rc) {
            /* frames behind it wait for it forever: say why messages stop */
            ofi.svc->verbose(1, "rank %u: ofi cannot post a receive buffer again: %s",
                             ofi.rte->my_rank, fi_strerror(-rc));
        }
        ofi.next_recv = (ofi.next_recv + 1) % ofi.num_recvs;
    }
    if (NULL != ofi.active || NULL != ofi.acks) {
        events += progress_active();
    }
    return events;
}

/* ------------------------------------------------------------------------------------------ */
/* the module */

static int btl_ofi_init(const ompi_btl_rte_t *rte, ompi_btl_deliver_fn_t deliver)
{
    char why[512] = "", tried[1024] = "";
    size_t used = 0;

    ofi.rte = rte;
    ofi.deliver = deliver;
    ofi.eps = ofi.active = NULL;
    ofi.in_flight = ofi.acks = NULL;
    ofi.num_eps = ofi.pending = ofi.acks_pending = 0;
    ofi.timeout_ms = 1000LL * ofi.params->timeout;
    if (strlen(rte->jobid) > BTL_OFI_JOBID_MAX || 0 == ofi.params->frag_size ||
        ofi.params->recv_buffers < 1) {
        return HERD_ERR_BAD_PARAM;
    }
    /* btl_ofi_provider: "tcp;ofi_rxm,sockets": the first that opens */
    const char *p = NULL != ofi.params->providers ? ofi.params->providers : "";
    while ('\0' != *p) {
        const char *end = strchr(p, ',');
        size_t n = NULL != end ? (size_t) (end - p) : strlen(p);
        char name[OFI_PROV_MAX];
        if (n > 0 && n < sizeof(name)) {
            memcpy(name, p, n);
            name[n] = '\0';
            if (0 == open_provider(name, why, sizeof(why))) {
                return HERD_SUCCESS;
            }
            ofi.svc->verbose(5, "rank %u: ofi provider %s cannot open: %s", rte->my_rank, name,
                             why);
            int k = snprintf(tried + used, sizeof(tried) - used, "%s%s (%s)", used ? "; " : "",
                             name, why);
            used += k > 0 && (size_t) k < sizeof(tried) - used ? (size_t) k : 0;
        }
        p += n + (NULL != end);
    }
    ofi.svc->verbose(1, "rank %u: no libfabric provider of btl_ofi_provider \"%s\" opens: %s",
                     rte->my_rank, ofi.params->providers, used ? tried : "the list is empty");
    return HERD_ERR_NOT_AVAILABLE;
}

static bool btl_ofi_reachable(uint32_t peer)
{
    uint32_t node;
    if (!ofi.node_only) {
        return true;
    }
    return HERD_SUCCESS == ofi.rte->peer_node(peer, &node) && node == ofi.rte->my_node;
}

/* Data frames, and ACKs too: a peer whose hello this process answered waits for that answer
 * before its frames count as delivered, so a process that closed with its ACK unsent left that
 * peer waiting out btl_ofi_timeout. */
static size_t btl_ofi_pending(void)
{
    return ofi.pending + ofi.acks_pending;
}

/* A provider that makes a datagram endpoint reliable (ofi_rxd) acknowledges what arrived in a
 * later round of its progress: an endpoint closed right after taking a peer's last frames can
 * leave that peer resending them until btl_ofi_timeout. So it progresses a little longer. */
static void linger(void)
{
    if (NULL == ofi.ep || ofi.params->close_linger_ms <= 0 || NULL == strstr(ofi.provider, "rxd")) {
        return;
    }
    long long until = now_ms() + ofi.params->close_linger_ms;
    while (now_ms() < until) {
        fi_cq_read(ofi.cq, NULL, 0);
        sched_yield();
    }
}

static void btl_ofi_finalize(void)
{
    linger();
    /* the endpoint first: nothing completes after it, so every frame can be freed */
    if (NULL != ofi.ep) {
        fi_close(&ofi.ep->fid);
        ofi.ep = NULL;
    }
    while (NULL != ofi.in_flight) {
        ofi_frag_t *f = ofi.in_flight;
        ofi.in_flight = f->next;
        free(f);
    }
    while (NULL != ofi.acks) {
        ofi_frag_t *f = ofi.acks;
        ofi.acks = f->next;
        free(f);
    }
    while (NULL != ofi.eps) {
        ofi_ep_t *ep = ofi.eps;
        ofi.eps = ep->next;
        drop_queue(ep);
        free(ep->partial);
        ep->proc->endpoint[HERD_ENDPOINT_TAG_OFI] = NULL;
        free(ep);
    }
    ofi.active = NULL;
    ofi.num_eps = ofi.pending = ofi.acks_pending = 0;
    close_endpoint();
}

static size_t btl_ofi_num_peers(void)
{
    return ofi.num_eps;
}

static const ompi_btl_module_t btl_ofi_module = {
    .name = "ofi",
    .init = btl_ofi_init,
    .reachable = btl_ofi_reachable,
    .add_peer = btl_ofi_add_peer,
    .send = btl_ofi_send,
    .progress = btl_ofi_progress,
    .pending = btl_ofi_pending,
    .finalize = btl_ofi_finalize,
    .num_peers = btl_ofi_num_peers,
};

OPAL_MODULE_EXPORT const ompi_btl_module_t *
herd_btl_ofi_transport(const ompi_btl_dso_services_t *svc, char *why, size_t why_len);

OPAL_MODULE_EXPORT const ompi_btl_module_t *
herd_btl_ofi_transport(const ompi_btl_dso_services_t *svc, char *why, size_t why_len)
{
    if (!ompi_btl_dso_versions_match(svc, "herd-btl-ofi.so", why, why_len)) {
        return NULL;
    }
    const btl_ofi_params_t *params = svc->params;
    if (NULL == params || BTL_OFI_PARAMS_VERSION != params->version) {
        snprintf(why, why_len,
                 "herd-btl-ofi.so expects its front's parameters in version %u, but libherd's "
                 "front passes %u: reinstall herd",
                 BTL_OFI_PARAMS_VERSION, NULL != params ? params->version : 0u);
        return NULL;
    }
    if (fi_version() < OFI_MIN_VERSON) {
        snprintf(why, why_len, "libfabric %u.%u is older than 1.5: install a newer libfabric",
                 FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
        return NULL;
    }
    ofi.svc = svc;
    ofi.params = params;
    return &btl_ofi_module;
}
