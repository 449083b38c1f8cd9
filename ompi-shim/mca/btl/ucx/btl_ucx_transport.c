/* SPDX-License-Identifier: BSD-3-Clause */
/* btl ucx: the transport proper, the DSO herd-btl-ucx.so that the front loads (docs/btl.md,
 * "ucx"). One UCP context and one worker per process; every message is one UCX active message
 * whose header carries the source rank, the tag and a per-peer sequence number. A peer's
 * endpoint is made on the first message to it, from the worker address the peer published
 * through the modex; a message from a peer we never sent to needs no endpoint (UCX delivers
 * it to the worker), so the receiver adds the sender from the header alone. It links only UCX:
 * libherd is reached through the services table. */
#include "herd_config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ucp/api/ucp.h>

#include "ompi-shim/mca/btl/btl.h"
#include "ompi-shim/mca/btl/ucx/btl_ucx.h"

/* A message from a peer that cannot be handed up yet: an earlier one of that peer (a rendezvous)
 * is still being fetched, or this one is. Kept in sequence order on the peer's endpoint. */
typedef struct btl_ucx_held {
    struct btl_ucx_held *next;
    struct btl_ucx_endpoint *endpoint;
    uint32_t seq;
    int tag;
    bool complete;
    ucs_status_t status;
    void *request; /* a rendezvous being fetched, until rendezvous_done */
    size_t len;
    uint8_t *data;
} btl_ucx_held_t;

/* What this process keeps for a peer, in proc->endpoint[HERD_ENDPOINT_TAG_UCX]. */
typedef struct btl_ucx_endpoint {
    struct btl_ucx_endpoint *next;
    ompi_proc_t *proc;
    ucp_ep_h ep;       /* NULL until the first message to the peer (received-from only) */
    bool failed;       /* the error handler ran: sends fail, close is forced */
    uint32_t send_seq; /* the next message's sequence number to the peer */
    uint32_t recv_seq; /* the next sequence number to hand up from the peer */
    btl_ucx_held_t *held;
} btl_ucx_endpoint_t;

/* A message longer than the eager limit: copied with its header, freed when UCX is done. */
typedef struct btl_ucx_copy {
    uint32_t peer;
    uint8_t header[BTL_UCX_HEADER_SIZE];
    uint8_t data[];
} btl_ucx_copy_t;

static struct {
    const ompi_btl_dso_services_t *svc;
    const btl_ucx_params_t *params;
    const ompi_btl_rte_t *rte;
    ompi_btl_deliver_fn_t deliver;
    ucp_context_h context;
    ucp_worker_h worker;
    btl_ucx_endpoint_t *endpoints;
    size_t num_endpoints;
    size_t num_sending;          /* copies UCX has not finished with (pending()) */
    uint64_t num_at_once;        /* sends UCX finished from the caller's buffer */
    uint64_t num_copied;         /* sends that went from a copy */
    struct timespec stuck_since; /* pending(): when sending last moved, while flushing */
    size_t stuck_at;             /* num_sending then */
    bool gave_up;                /* pending() stopped waiting for them */
    size_t num_dropped;          /* copies cancelled by our finalize */
    size_t num_receiving;        /* rendezvous data being fetched */
    bool closing;                /* our finalize is closing the endpoints */
    size_t num_refused;          /* messages that arrived while closing (never handed up) */
    int events;                  /* messages handed up or sends finished during one progress */
} btl_ucx;

#define SVC (btl_ucx.svc)

static const char *tls_text(void)
{
    const char *tls = btl_ucx.params->tls;
    return NULL != tls ? tls : "";
}

/* ------------------------------------------------------------------------------------------ */
/* the header */

static void encode_header(uint32_t src, int tag, uint32_t seq, uint8_t *out)
{
    uint16_t flags = 0;
    out[0] = BTL_UCX_MAGIC;
    out[1] = BTL_UCX_VERSION;
    memcpy(out + 2, &flags, 2);
    memcpy(out + 4, &src, 4);
    memcpy(out + 8, &tag, 4);
    memcpy(out + 12, &seq, 4);
}

/* false for anything that is not a header of ours from a rank of this job */
static bool decode_header(const void *header, size_t len, uint32_t *src, int *tag, uint32_t *seq)
{
    const uint8_t *h = header;
    uint16_t flags;

    if (BTL_UCX_HEADER_SIZE != len || BTL_UCX_MAGIC != h[0] || BTL_UCX_VERSION != h[1]) {
        return false;
    }
    memcpy(&flags, h + 2, 2);
    memcpy(src, h + 4, 4);
    memcpy(tag, h + 8, 4);
    memcpy(seq, h + 12, 4);
    return 0 == flags && *src < btl_ucx.rte->job_size && *tag >= 0;
}

/* ------------------------------------------------------------------------------------------ */
/* endpoints */

static btl_ucx_endpoint_t *endpoint_of(ompi_proc_t *proc)
{
    btl_ucx_endpoint_t *e = proc->endpoint[HERD_ENDPOINT_TAG_UCX];

    if (NULL != e) {
        return e;
    }
    e = calloc(1, sizeof(*e));
    if (NULL == e) {
        return NULL;
    }
    e->proc = proc;
    e->next = btl_ucx.endpoints;
    btl_ucx.endpoints = e;
    btl_ucx.num_endpoints++;
    proc->endpoint[HERD_ENDPOINT_TAG_UCX] = e;
    return e;
}

static void endpoint_failed(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    btl_ucx_endpoint_t *e = arg;
    (void) ep;

    if (!e->failed) {
        SVC->verbose(1, "rank %u: ucx lost rank %u (%s): later messages to it fail",
                     btl_ucx.rte->my_rank, e->proc->rank, ucs_status_string(status));
    }
    e->failed = true;
}

/* The lanes UCX chose for a peer, at verbose 10 (which UCX transports carry the messages). */
static void say_lanes(btl_ucx_endpoint_t *e)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);

    if (NULL == f) {
        return;
    }
    ucp_ep_print_info(e->ep, f);
    fclose(f);
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); NULL != line;
         line = strtok_r(NULL, "\n", &save)) {
        char *lane = strstr(line, "lane[");
        if (NULL != lane) {
            SVC->verbose(10, "rank %u: ucx to rank %u: %s", btl_ucx.rte->my_rank, e->proc->rank,
                         lane);
        }
    }
    free(text);
}

/* Whether the endpoint to peer asks UCX to report the peer's exit (btl_ucx_error_handling). */
static bool detect_failure(uint32_t peer)
{
    uint32_t node;

    switch (btl_ucx.params->error_handling) {
    case BTL_UCX_ERRORS_PEER:
        return true;
    case BTL_UCX_ERRORS_NONE:
        return false;
    default:
        /* on this node UCX would rather use shared memory, which cannot report it */
        return !(HERD_SUCCESS == btl_ucx.rte->peer_node(peer, &node) &&
                 node == btl_ucx.rte->my_node);
    }
}

/* The first message to a peer: its worker address from the modex, and an endpoint to it. */
static int btl_ucx_add_peer(ompi_proc_t *proc)
{
    const ompi_btl_rte_t *rte = btl_ucx.rte;
    btl_ucx_endpoint_t *e = endpoint_of(proc);
    void *address = NULL;
    size_t len = 0;

    if (NULL == e) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (NULL != e->ep) {
        return e->failed ? HERD_ERR_UNREACH : HERD_SUCCESS;
    }
    /* the direct modex: the first time, the peer's daemon is asked (and waits for it to
     * publish, up to wireup_base_get_timeout) */
    int rc = rte->get(proc->rank, BTL_UCX_MODEX_KEY, &address, &len);
    if (HERD_SUCCESS != rc) {
        SVC->verbose(1,
                     "rank %u: ucx cannot find rank %u's worker address (%s): the peer publishes "
                     "it when its ucx transport starts",
                     rte->my_rank, proc->rank, rte->last_error());
        return HERD_ERR_UNREACH;
    }
    bool detect = detect_failure(proc->rank);
    ucp_ep_params_t params = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER,
        .address = address,
        /* a peer that exits becomes an error on our side, not a hang */
        .err_mode = detect ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE,
        .err_handler = {.cb = endpoint_failed, .arg = e},
    };
    ucs_status_t status = ucp_ep_create(btl_ucx.worker, &params, &e->ep);
    free(address);
    if (UCS_OK != status) {
        e->ep = NULL;
        SVC->verbose(1,
                     "rank %u: ucx cannot make an endpoint to rank %u (%s): no UCX transport "
                     "(btl_ucx_tls \"%s\") reaches it",
                     rte->my_rank, proc->rank, ucs_status_string(status), tls_text());
        return HERD_ERR_UNREACH;
    }
    SVC->verbose(5,
                 "rank %u: ucx connects to rank %u (worker address of %zu bytes, modex; peer "
                 "failure %s)",
                 rte->my_rank, proc->rank, len, detect ? "detected" : "not detected");
    say_lanes(e);
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* receiving */

static void release_held(btl_ucx_held_t *m)
{
    free(m->data);
    free(m);
}

/* Hand up, in sequence order, what has arrived whole. */
static void drain(btl_ucx_endpoint_t *e)
{
    while (NULL != e->held && e->held->seq == e->recv_seq && e->held->complete) {
        btl_ucx_held_t *m = e->held;
        e->held = m->next;
        e->recv_seq++;
        if (UCS_OK == m->status) {
            btl_ucx.deliver(e->proc->rank, m->tag, m->data, m->len);
            btl_ucx.events++;
        } else {
            SVC->verbose(1, "rank %u: ucx lost a %zu-byte message from rank %u (tag %d): %s",
                         btl_ucx.rte->my_rank, m->len, e->proc->rank, m->tag,
                         ucs_status_string(m->status));
        }
        release_held(m);
    }
}

/* Keep a message for later, in sequence order (sequence numbers wrap: compare differences). */
static btl_ucx_held_t *hold(btl_ucx_endpoint_t *e, uint32_t seq, int tag, size_t len)
{
    btl_ucx_held_t *m = calloc(1, sizeof(*m));

    if (NULL == m || NULL == (m->data = malloc(len > 0 ? len : 1))) {
        free(m);
        return NULL;
    }
    m->endpoint = e;
    m->seq = seq;
    m->tag = tag;
    m->len = len;
    m->status = UCS_OK;
    btl_ucx_held_t **at = &e->held;
    while (NULL != *at && (int32_t) (seq - (*at)->seq) > 0) {
        at = &(*at)->next;
    }
    m->next = *at;
    *at = m;
    return m;
}

static void rendezvous_done(void *request, ucs_status_t status, size_t length, void *user_data)
{
    btl_ucx_held_t *m = user_data;
    (void) length;

    m->complete = true;
    m->status = status;
    m->request = NULL;
    ucp_request_free(request);
    btl_ucx.num_receiving--;
    drain(m->endpoint);
}

/* Every message of ours arrives here, inside ucp_worker_progress. */
static ucs_status_t message_arrived(void *arg, const void *header, size_t header_length, void *data,
                                    size_t length, const ucp_am_recv_param_t *param)
{
    const ompi_btl_rte_t *rte = btl_ucx.rte;
    bool rendezvous = 0 != (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV);
    uint32_t src, seq;
    int tag;
    ompi_proc_t *proc;
    (void) arg;

    if (btl_ucx.closing) {
        /* nobody receives any more: refused, not fetched (a rendezvous's sender is told), so
         * that the endpoints can close with no transfer still coming in */
        btl_ucx.num_refused++;
        return rendezvous ? UCS_ERR_CANCELED : UCS_OK;
    }
    if (!decode_header(header, header_length, &src, &tag, &seq)) {
        SVC->verbose(1, "rank %u: ucx dropped a message with a malformed %zu-byte header",
                     rte->my_rank, header_length);
        return rendezvous ? UCS_ERR_INVALID_PARAM : UCS_OK;
    }
    /* the add from the message: a proc and an endpoint holding only the receive order */
    btl_ucx_endpoint_t *e = HERD_SUCCESS == SVC->proc_lookup(src, &proc) ? endpoint_of(proc) : NULL;
    if (NULL == e) {
        SVC->verbose(1, "rank %u: ucx dropped a message from rank %u: out of memory", rte->my_rank,
                     src);
        return rendezvous ? UCS_ERR_NO_MEMORY : UCS_OK;
    }
    if ((int32_t) (seq - e->recv_seq) < 0) {
        SVC->verbose(1, "rank %u: ucx dropped a message from rank %u with a past sequence number",
                     rte->my_rank, src);
        return rendezvous ? UCS_ERR_INVALID_PARAM : UCS_OK;
    }
    if (!rendezvous && seq == e->recv_seq) {
        /* the common case: in order and whole, handed up from UCX's buffer */
        e->recv_seq++;
        btl_ucx.deliver(src, tag, data, length);
        btl_ucx.events++;
        drain(e);
        return UCS_OK;
    }
    btl_ucx_held_t *m = hold(e, seq, tag, length);
    SVC->verbose(10, "rank %u: ucx holds message %u from rank %u (%zu bytes%s) until %s",
                 rte->my_rank, seq, src, length, rendezvous ? ", rendezvous" : "",
                 rendezvous ? "it is fetched" : "the earlier ones are there");
    if (NULL == m) {
        SVC->verbose(1, "rank %u: ucx cannot keep a %zu-byte message from rank %u: out of memory",
                     rte->my_rank, length, src);
        return rendezvous ? UCS_ERR_NO_MEMORY : UCS_OK;
    }
    if (!rendezvous) {
        memcpy(m->data, data, length);
        m->complete = true;
        drain(e);
        return UCS_OK;
    }
    /* rendezvous: UCX fetches the data into our memory; handed up when it is all there */
    ucp_request_param_t p = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .cb.recv_am = rendezvous_done,
        .user_data = m,
    };
    ucs_status_ptr_t r = ucp_am_recv_data_nbx(btl_ucx.worker, data, m->data, length, &p);
    if (NULL == r || UCS_PTR_IS_ERR(r)) {
        m->complete = true;
        m->status = UCS_PTR_STATUS(r);
        drain(e);
    } else {
        m->request = r;
        btl_ucx.num_receiving++;
    }
    return UCS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* sending */

static void copy_sent(void *request, ucs_status_t status, void *user_data)
{
    btl_ucx_copy_t *c = user_data;

    if (UCS_ERR_CANCELED == status) {
        btl_ucx.num_dropped++; /* our finalize closed the endpoint: said once there */
    } else if (UCS_OK != status) {
        ompi_proc_t *proc = SVC->proc_find(c->peer);
        btl_ucx_endpoint_t *e = NULL != proc ? proc->endpoint[HERD_ENDPOINT_TAG_UCX] : NULL;
        if (NULL != e && !e->failed) {
            SVC->verbose(1,
                         "rank %u: ucx could not deliver a message to rank %u (%s): later "
                         "messages to it fail",
                         btl_ucx.rte->my_rank, c->peer, ucs_status_string(status));
            e->failed = true;
        }
    }
    free(c);
    ucp_request_free(request);
    btl_ucx.num_sending--;
    btl_ucx.events++;
}

/* Hand a copy of the message to UCX: the caller's buffer is free at once, and UCX sends from
 * the copy whenever it can (the receiver fetches a rendezvous when it progresses). */
static int send_copy(btl_ucx_endpoint_t *e, const uint8_t *header, const void *buf, size_t len,
                     uint32_t flags)
{
    btl_ucx_copy_t *c = malloc(sizeof(*c) + len);

    if (NULL == c) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    c->peer = e->proc->rank;
    memcpy(c->header, header, BTL_UCX_HEADER_SIZE);
    memcpy(c->data, buf, len);
    ucp_request_param_t p = {
        .op_attr_mask =
            UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS,
        .flags = flags,
        .cb.send = copy_sent,
        .user_data = c,
    };
    ucs_status_ptr_t r =
        ucp_am_send_nbx(e->ep, BTL_UCX_AM_ID, c->header, sizeof(c->header), c->data, len, &p);
    if (UCS_PTR_IS_ERR(r)) {
        free(c);
        return HERD_ERR_UNREACH;
    }
    if (NULL == r) {
        free(c);
    } else {
        btl_ucx.num_sending++;
    }
    btl_ucx.num_copied++;
    return HERD_SUCCESS;
}

/* Never waits: a short message goes from the caller's buffer when UCX can finish with it at
 * once, anything else from a copy (docs/btl.md: herd_send never waits for the receiver). */
static int btl_ucx_send(ompi_proc_t *proc, int tag, const void *buf, size_t len)
{
    btl_ucx_endpoint_t *e = proc->endpoint[HERD_ENDPOINT_TAG_UCX];
    uint8_t header[BTL_UCX_HEADER_SIZE];
    int rc;

    if (e->failed) {
        return HERD_ERR_UNREACH;
    }
    encode_header(btl_ucx.rte->my_rank, tag, e->send_seq, header);
    if (len > btl_ucx.params->eager_limit) {
        rc = send_copy(e, header, buf, len, 0);
    } else {
        /* eager, and only if UCX is done with buf on return (else it says NO_RESOURCE and
         * keeps nothing): a peer's full queue never holds the caller's buffer */
        ucp_request_param_t p = {
            .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL,
            .flags = UCP_AM_SEND_FLAG_EAGER,
        };
        ucs_status_ptr_t r =
            ucp_am_send_nbx(e->ep, BTL_UCX_AM_ID, header, sizeof(header), buf, len, &p);
        if (NULL == r) {
            btl_ucx.num_at_once++;
            rc = HERD_SUCCESS;
        } else if (UCS_PTR_IS_ERR(r) && UCS_ERR_NO_RESOURCE == UCS_PTR_STATUS(r)) {
            rc = send_copy(e, header, buf, len, UCP_AM_SEND_FLAG_EAGER);
        } else {
            if (!UCS_PTR_IS_ERR(r)) {
                ucp_request_free(r); /* not expected with FORCE_IMM_CMPL */
            }
            rc = HERD_ERR_UNREACH;
        }
    }
    if (HERD_SUCCESS == rc) {
        e->send_seq++;
    }
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* the module */

static int btl_ucx_progress(void)
{
    btl_ucx.events = 0;
    unsigned n = ucp_worker_progress(btl_ucx.worker);
    return btl_ucx.events > 0 ? btl_ucx.events : (int) (n > 0);
}

/* The base flushes until this is 0 before finalize. A peer gone without UCX noticing (shared
 * memory without error handling) never takes its messages: once no send has finished for
 * btl_ucx_close_timeout seconds, the rest are given up (said at verbose 1), so finalize ends. */
static size_t btl_ucx_pending(void)
{
    struct timespec now;

    if (0 == btl_ucx.num_sending || btl_ucx.gave_up) {
        return 0;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (btl_ucx.num_sending != btl_ucx.stuck_at) {
        btl_ucx.stuck_at = btl_ucx.num_sending;
        btl_ucx.stuck_since = now;
    } else if (now.tv_sec - btl_ucx.stuck_since.tv_sec >= btl_ucx.params->close_timeout) {
        SVC->verbose(1,
                     "rank %u: ucx gives up on %zu messages that no peer took for %d s "
                     "(btl_ucx_close_timeout): their peers are gone or stopped receiving",
                     btl_ucx.rte->my_rank, btl_ucx.num_sending, btl_ucx.params->close_timeout);
        btl_ucx.gave_up = true;
        return 0;
    }
    return btl_ucx.num_sending;
}

static bool btl_ucx_reachable(uint32_t peer)
{
    /* UCX knows which of its transports reach a peer only from its address: add_peer tells */
    (void) peer;
    return true;
}

static size_t btl_ucx_num_peers(void)
{
    return btl_ucx.num_endpoints;
}

static bool passed(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

/* Rendezvous still being fetched when close gives up: cancelled, and their completions run,
 * so that no endpoint is destroyed with a transfer still attached (UCX asserts on that). */
static void cancel_receiving(void)
{
    for (btl_ucx_endpoint_t *e = btl_ucx.endpoints; NULL != e; e = e->next) {
        for (btl_ucx_held_t *m = e->held; NULL != m; m = m->next) {
            if (NULL != m->request) {
                ucp_request_cancel(btl_ucx.worker, m->request);
            }
        }
    }
    for (int round = 0; round < 1000 && btl_ucx.num_receiving > 0; ++round) {
        ucp_worker_progress(btl_ucx.worker);
    }
}

/* Close every endpoint: flushed (what we sent reaches the peer) unless the peer failed, then
 * forced; waited for up to btl_ucx_close_timeout seconds, as are rendezvous still arriving. */
static void close_endpoints(void)
{
    void **closing = calloc(btl_ucx.num_endpoints + 1, sizeof(*closing));
    size_t num_closing = 0;
    struct timespec deadline;

    btl_ucx.closing = true;

    for (btl_ucx_endpoint_t *e = btl_ucx.endpoints; NULL != e; e = e->next) {
        if (NULL == e->ep) {
            continue;
        }
        ucp_request_param_t p = {
            .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
            .flags = e->failed ? UCP_EP_CLOSE_FLAG_FORCE : 0,
        };
        ucs_status_ptr_t r = ucp_ep_close_nbx(e->ep, &p);
        e->ep = NULL;
        if (NULL != r && !UCS_PTR_IS_ERR(r)) {
            if (NULL != closing) {
                closing[num_closing++] = r;
            } else {
                ucp_request_free(r);
            }
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += btl_ucx.params->close_timeout;
    size_t open = num_closing;
    while ((open > 0 || btl_ucx.num_receiving > 0) && !passed(&deadline)) {
        ucp_worker_progress(btl_ucx.worker);
        open = 0;
        for (size_t i = 0; i < num_closing; ++i) {
            if (NULL != closing[i] && UCS_INPROGRESS != ucp_request_check_status(closing[i])) {
                ucp_request_free(closing[i]);
                closing[i] = NULL;
            }
            open += NULL != closing[i];
        }
    }
    if (open > 0 || btl_ucx.num_receiving > 0) {
        SVC->verbose(1,
                     "rank %u: ucx left %zu endpoints unclosed and %zu messages arriving after "
                     "%d s (btl_ucx_close_timeout): a peer did not answer",
                     btl_ucx.rte->my_rank, open, btl_ucx.num_receiving,
                     btl_ucx.params->close_timeout);
        cancel_receiving();
    }
    for (size_t i = 0; i < num_closing; ++i) {
        if (NULL != closing[i]) {
            ucp_request_free(closing[i]); /* UCX frees it when it completes */
        }
    }
    free(closing);
}

static void btl_ucx_finalize(void)
{
    if (NULL == btl_ucx.worker) {
        return;
    }
    SVC->verbose(5, "rank %u: ucx sent %llu messages from the caller's buffer and %llu from a copy",
                 btl_ucx.rte->my_rank, (unsigned long long) btl_ucx.num_at_once,
                 (unsigned long long) btl_ucx.num_copied);
    close_endpoints();
    ucp_worker_destroy(btl_ucx.worker);
    btl_ucx.worker = NULL;
    ucp_cleanup(btl_ucx.context);
    btl_ucx.context = NULL;
    if (btl_ucx.num_dropped > 0) {
        SVC->verbose(1, "rank %u: ucx dropped %zu messages that their peers never took",
                     btl_ucx.rte->my_rank, btl_ucx.num_dropped);
    }
    if (btl_ucx.num_refused > 0) {
        SVC->verbose(1, "rank %u: ucx refused %zu messages that arrived during its finalize",
                     btl_ucx.rte->my_rank, btl_ucx.num_refused);
    }
    /* no UCX callback runs any more: what it was filling can go */
    while (NULL != btl_ucx.endpoints) {
        btl_ucx_endpoint_t *e = btl_ucx.endpoints;
        btl_ucx.endpoints = e->next;
        while (NULL != e->held) {
            btl_ucx_held_t *m = e->held;
            e->held = m->next;
            release_held(m);
        }
        e->proc->endpoint[HERD_ENDPOINT_TAG_UCX] = NULL;
        free(e);
    }
    btl_ucx.num_endpoints = btl_ucx.num_sending = btl_ucx.num_receiving = 0;
}

/* UCP with active messages, one worker for this (single-threaded) process, our message
 * handler, and the worker's address published by the modex for peers' first messages. */
static int btl_ucx_init(const ompi_btl_rte_t *rte, ompi_btl_deliver_fn_t deliver)
{
    ucp_config_t *config = NULL;
    ucs_status_t status;
    const char *what;

    btl_ucx.rte = rte;
    btl_ucx.deliver = deliver;
    btl_ucx.endpoints = NULL;
    btl_ucx.num_endpoints = btl_ucx.num_sending = btl_ucx.num_receiving = 0;
    btl_ucx.num_at_once = btl_ucx.num_copied = 0;
    btl_ucx.num_dropped = btl_ucx.num_refused = 0;
    btl_ucx.closing = false;
    btl_ucx.stuck_at = 0;
    btl_ucx.gave_up = false;

    what = "ucp_config_read";
    status = ucp_config_read(NULL, NULL, &config);
    if (UCS_OK != status) {
        goto err_say;
    }
    if ('\0' != tls_text()[0]) {
        status = ucp_config_modify(config, "TLS", tls_text());
        if (UCS_OK != status) {
            SVC->show_help("help-btl-ucx.txt", "bad-tls", 1, rte->my_rank, tls_text(),
                           ucs_status_string(status));
            ucp_config_release(config);
            return HERD_ERR_SILENT;
        }
    }
    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED,
        .features = UCP_FEATURE_AM,
        .mt_workers_shared = 0,
    };
    what = "ucp_init";
    status = ucp_init(&params, config, &btl_ucx.context);
    ucp_config_release(config);
    if (UCS_OK != status) {
        goto err_say;
    }
    ucp_worker_params_t worker_params = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = UCS_THREAD_MODE_SINGLE,
    };
    what = "ucp_worker_create";
    status = ucp_worker_create(btl_ucx.context, &worker_params, &btl_ucx.worker);
    if (UCS_OK != status) {
        goto err_context;
    }
    ucp_am_handler_param_t handler = {
        .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
                      UCP_AM_HANDLER_PARAM_FIELD_CB,
        .id = BTL_UCX_AM_ID,
        .flags = UCP_AM_FLAG_WHOLE_MSG,
        .cb = message_arrived,
    };
    what = "ucp_worker_set_am_recv_handler";
    status = ucp_worker_set_am_recv_handler(btl_ucx.worker, &handler);
    if (UCS_OK != status) {
        goto err_worker;
    }
    ucp_address_t *address;
    size_t len;
    what = "ucp_worker_get_address";
    status = ucp_worker_get_address(btl_ucx.worker, &address, &len);
    if (UCS_OK != status) {
        goto err_worker;
    }
    int rc = rte->put(BTL_UCX_MODEX_KEY, address, len);
    if (HERD_SUCCESS == rc) {
        rc = rte->commit();
    }
    ucp_worker_release_address(btl_ucx.worker, address);
    if (HERD_SUCCESS != rc) {
        SVC->verbose(1, "rank %u: ucx cannot publish its worker address: %s", rte->my_rank,
                     rte->last_error());
        ucp_worker_destroy(btl_ucx.worker);
        btl_ucx.worker = NULL;
        ucp_cleanup(btl_ucx.context);
        btl_ucx.context = NULL;
        return rc;
    }
    SVC->verbose(5,
                 "rank %u: ucx %s started (UCX_TLS %s), its worker address (%zu bytes) published "
                 "by the modex",
                 rte->my_rank, ucp_get_version_string(),
                 '\0' != tls_text()[0] ? tls_text() : "UCX's default", len);
    return HERD_SUCCESS;

err_worker:
    ucp_worker_destroy(btl_ucx.worker);
    btl_ucx.worker = NULL;
err_context:
    ucp_cleanup(btl_ucx.context);
    btl_ucx.context = NULL;
err_say:
    SVC->show_help("help-btl-ucx.txt", "init-failed", 1, rte->my_rank, what,
                   ucs_status_string(status), tls_text());
    return HERD_ERR_SILENT;
}

static const ompi_btl_module_t btl_ucx_module = {
    .name = "ucx",
    .init = btl_ucx_init,
    .reachable = btl_ucx_reachable,
    .add_peer = btl_ucx_add_peer,
    .send = btl_ucx_send,
    .progress = btl_ucx_progress,
    .pending = btl_ucx_pending,
    .finalize = btl_ucx_finalize,
    .num_peers = btl_ucx_num_peers,
};

OPAL_MODULE_EXPORT const ompi_btl_module_t *
herd_btl_ucx_transport(const ompi_btl_dso_services_t *svc, char *why, size_t why_len);

OPAL_MODULE_EXPORT const ompi_btl_module_t *
herd_btl_ucx_transport(const ompi_btl_dso_services_t *svc, char *why, size_t why_len)
{
    if (!ompi_btl_dso_versions_match(svc, "herd-btl-ucx.so", why, why_len)) {
        return NULL;
    }
    const btl_ucx_params_t *params = svc->params;
    if (NULL == params || BTL_UCX_PARAMS_VERSION != params->version) {
        snprintf(why, why_len,
                 "herd-btl-ucx.so was built for ucx parameters version %u, but libherd's ucx "
                 "component has %u: reinstall herd",
                 BTL_UCX_PARAMS_VERSION, NULL != params ? params->version : 0u);
        return NULL;
    }
    btl_ucx.svc = svc;
    btl_ucx.params = params;
    return &btl_ucx_module;
}
