/* SPDX-License-Identifier: BSD-3-Clause */
/* btl sm: the module. A process maps its own receive segment when the transports start, and a
 * peer's on the first message to it (a ring rank maps 2 segments, not N), where it claims a fast
 * box if one is left. A short message goes through the box, a long one through the ring; a
 * sender switches between them only once the receiver has read everything it put in the other,
 * so a source's messages arrive in order. What cannot go now is copied into the peer's queue and
 * pushed on from progress, so herd_send never waits for the receiver and two senders filling
 * each other's rings cannot deadlock. */
#include "herd_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ompi-shim/mca/btl/btl.h"
#include "ompi-shim/mca/btl/sm/btl_sm.h"
#include "opal/mca/base/mca_var.h"
#include "opal/util/jobdb.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"

#define BTL_SM_DEFAULT_PRIORITY   50
#define BTL_SM_DEFAULT_CELLS      128u
#define BTL_SM_DEFAULT_CELL_SIZE  8192u
#define BTL_SM_DEFAULT_FBOXES     16u
#define BTL_SM_DEFAULT_FBOX_SIZE  8192u
#define BTL_SM_ATTACH_TIMEOUT_MS  30000
#define BTL_SM_MAX_CELLS_PER_POLL 64u

/* A message (or its rest) the peer's ring had no room for. */
typedef struct btl_sm_pending {
    struct btl_sm_pending *next;
    int tag;
    size_t len;    /* of the whole message */
    size_t offset; /* sent so far */
    size_t base;   /* data[0] is this byte of the message (what was sent before it queued) */
    unsigned char data[];
} btl_sm_pending_t;

/* What this process keeps for a peer of its node. */
typedef struct btl_sm_endpoint {
    struct btl_sm_endpoint *next; /* every endpoint, for finalize */
    ompi_proc_t *proc;
    btl_sm_segment_t peer_seg; /* the peer's receive segment, once we send to it */
    btl_sm_fbox_sender_t fbox; /* our box in it (fbox.box NULL: none was left) */
    uint32_t fbox_max;         /* the longest message that goes through the box */
    bool ring_outstanding;     /* cells we pushed may not all be read yet */
    uint64_t ring_last;        /* the position of the last one */
    btl_sm_pending_t *queue_head;
    btl_sm_pending_t *queue_tail;
    /* a message of the peer's arriving in several cells */
    unsigned char *rx_buf;
    size_t rx_total;
    size_t rx_got;
    int rx_tag;
} btl_sm_endpoint_t;

static struct {
    int priority;        /* btl_sm_priority */
    unsigned num_cells;  /* btl_sm_num_cells */
    size_t cell_size;    /* btl_sm_cell_size */
    unsigned num_fboxes; /* btl_sm_num_fboxes */
    size_t fbox_size;    /* btl_sm_fbox_size */
    const ompi_btl_rte_t *rte;
    ompi_btl_deliver_fn_t deliver;
    btl_sm_segment_t mine;
    btl_sm_fbox_receiver_t *fbox_rx; /* my boxes that senders claimed, mine.num_fboxes */
    uint32_t fbox_seen;
    char my_name[256];
    btl_sm_endpoint_t *endpoints;
    size_t num_endpoints;
    size_t num_queued; /* messages in peers' queues */
} btl_sm;

static int btl_sm_segment_name(uint32_t rank, char *buf, size_t size)
{
    return opal_jobdb_rank_segment_name(btl_sm.rte->jobid, btl_sm.rte->node_name, "sm", rank, buf,
                                        size);
}

static int btl_sm_attach(uint32_t rank, btl_sm_segment_t *seg)
{
    char name[256];
    bool created;
    int rc = btl_sm_segment_name(rank, name, sizeof(name));

    if (HERD_SUCCESS != rc) {
        return rc;
    }
    btl_sm_geometry_t geometry = {.num_cells = btl_sm.num_cells,
                                  .cell_size = (uint32_t) btl_sm.cell_size,
                                  .num_fboxes = btl_sm.num_fboxes,
                                  .fbox_size = (uint32_t) btl_sm.fbox_size};
    rc = btl_sm_segment_attach(name, rank, &geometry, BTL_SM_ATTACH_TIMEOUT_MS, seg, &created);
    if (HERD_SUCCESS != rc) {
        opal_show_help("help-btl-sm.txt", "attach-failed", true, btl_sm.rte->my_rank, name, rank,
                       HERD_ERR_IN_ERRNO == rc ? strerror(errno) : opal_strerror(rc));
        return HERD_ERR_SILENT;
    }
    opal_output_verbose(10, ompi_btl_base_framework.output,
                        "rank %u: sm segment %s of rank %u %s (%u cells of %u bytes, %u fast "
                        "boxes of %u bytes)",
                        btl_sm.rte->my_rank, name, rank, created ? "created" : "mapped",
                        seg->num_cells, seg->cell_size, seg->num_fboxes, seg->fbox_size);
    return HERD_SUCCESS;
}

static int btl_sm_init(const ompi_btl_rte_t *rte, ompi_btl_deliver_fn_t deliver)
{
    btl_sm.rte = rte;
    btl_sm.deliver = deliver;
    btl_sm.endpoints = NULL;
    btl_sm.num_endpoints = btl_sm.num_queued = 0;
    btl_sm.fbox_rx = NULL;
    btl_sm.fbox_seen = 0;
    if (btl_sm.cell_size > UINT32_MAX || btl_sm.fbox_size > UINT32_MAX) {
        return HERD_ERR_BAD_PARAM;
    }
    int rc = btl_sm_segment_name(rte->my_rank, btl_sm.my_name, sizeof(btl_sm.my_name));
    if (HERD_SUCCESS == rc) {
        rc = btl_sm_attach(rte->my_rank, &btl_sm.mine);
    }
    if (HERD_SUCCESS == rc && btl_sm.mine.num_fboxes > 0) {
        btl_sm.fbox_rx = calloc(btl_sm.mine.num_fboxes, sizeof(*btl_sm.fbox_rx));
        if (NULL == btl_sm.fbox_rx) {
            btl_sm_segment_detach(&btl_sm.mine);
            rc = HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    return rc;
}

static bool btl_sm_reachable(uint32_t peer)
{
    uint32_t node;

    return HERD_SUCCESS == btl_sm.rte->peer_node(peer, &node) && node == btl_sm.rte->my_node;
}

static btl_sm_endpoint_t *btl_sm_endpoint_of(ompi_proc_t *proc)
{
    btl_sm_endpoint_t *ep = proc->endpoint[HERD_ENDPOINT_TAG_SM];

    if (NULL != ep) {
        return ep;
    }
    ep = calloc(1, sizeof(*ep));
    if (NULL == ep) {
        return NULL;
    }
    ep->proc = proc;
    ep->next = btl_sm.endpoints;
    btl_sm.endpoints = ep;
    btl_sm.num_endpoints++;
    proc->endpoint[HERD_ENDPOINT_TAG_SM] = ep;
    return ep;
}

static int btl_sm_add_peer(ompi_proc_t *proc)
{
    btl_sm_endpoint_t *ep = btl_sm_endpoint_of(proc);

    if (NULL == ep) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (NULL != ep->peer_seg.header) {
        return HERD_SUCCESS;
    }
    int rc = btl_sm_attach(proc->rank, &ep->peer_seg);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    /* none left (more senders than boxes): this peer's messages all take the ring */
    if (HERD_SUCCESS == btl_sm_fbox_claim(&ep->peer_seg, btl_sm.rte->my_rank, &ep->fbox)) {
        ep->fbox_max = btl_sm_fbox_max_payload(ep->fbox.size);
    }
    opal_output_verbose(10, ompi_btl_base_framework.output, "rank %u -> rank %u: sm %s",
                        btl_sm.rte->my_rank, proc->rank,
                        NULL != ep->fbox.box ? "fast box" : "ring only (no fast box left)");
    return HERD_SUCCESS;
}

/* Have the receiver read every cell we put in its ring? */
static bool btl_sm_ring_done(btl_sm_endpoint_t *ep)
{
    if (ep->ring_outstanding && btl_sm_ring_consumed(&ep->peer_seg, ep->ring_last)) {
        ep->ring_outstanding = false;
    }
    return !ep->ring_outstanding;
}

/* Push cells of the message from *offset on while the ring has room (data[0] is byte base of
 * the message); true once the last cell went (a zero-length message takes one cell too). */
static bool btl_sm_push(btl_sm_endpoint_t *ep, int tag, const unsigned char *data, size_t len,
                        size_t *offset, size_t base)
{
    btl_sm_segment_t *seg = &ep->peer_seg;
    uint32_t me = btl_sm.rte->my_rank;

    if (0 == *offset && NULL != ep->fbox.box) {
        if (len <= ep->fbox_max && btl_sm_ring_done(ep)) {
            if (!btl_sm_fbox_push(&ep->fbox, tag, data, (uint32_t) len)) {
                return false;
            }
            *offset = len;
            return true;
        }
        /* a long message (or a short one behind cells still unread, which it follows through
         * the ring) goes only once the receiver has read what the box holds */
        if (!btl_sm_fbox_drained(&ep->fbox)) {
            return false;
        }
    }
    do {
        size_t frag = len - *offset < seg->payload ? len - *offset : seg->payload;
        if (!btl_sm_ring_push(seg, me, tag, len, data + (*offset - base), (uint32_t) frag,
                              &ep->ring_last)) {
            return false;
        }
        ep->ring_outstanding = true;
        *offset += frag;
    } while (*offset < len);
    return true;
}

static int btl_sm_send(ompi_proc_t *proc, int tag, const void *buf, size_t len)
{
    btl_sm_endpoint_t *ep = proc->endpoint[HERD_ENDPOINT_TAG_SM];
    size_t offset = 0;

    if (NULL == ep->queue_head && btl_sm_push(ep, tag, buf, len, &offset, 0)) {
        return HERD_SUCCESS;
    }
    /* behind earlier messages, or the ring is full: keep the rest, in order */
    btl_sm_pending_t *p = malloc(sizeof(*p) + (len - offset));
    if (NULL == p) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    p->next = NULL;
    p->tag = tag;
    p->len = len;
    p->offset = p->base = offset;
    memcpy(p->data, (const unsigned char *) buf + offset, len - offset);
    if (NULL == ep->queue_tail) {
        ep->queue_head = p;
    } else {
        ep->queue_tail->next = p;
    }
    ep->queue_tail = p;
    btl_sm.num_queued++;
    return HERD_SUCCESS;
}

/* Push what the peers' queues hold while their rings take it. */
static int btl_sm_push_queues(void)
{
    int events = 0;

    for (btl_sm_endpoint_t *ep = btl_sm.endpoints; NULL != ep && btl_sm.num_queued > 0;
         ep = ep->next) {
        while (NULL != ep->queue_head) {
            btl_sm_pending_t *p = ep->queue_head;
            size_t before = p->offset;
            bool done = btl_sm_push(ep, p->tag, p->data, p->len, &p->offset, p->base);
            events += p->offset > before;
            if (!done) {
                break;
            }
            ep->queue_head = p->next;
            if (NULL == ep->queue_head) {
                ep->queue_tail = NULL;
            }
            free(p);
            btl_sm.num_queued--;
            events++;
        }
    }
    return events;
}

/* A cell of a message that spans several: join it in the sender's endpoint. */
static int btl_sm_join(const btl_sm_cell_t *cell)
{
    ompi_proc_t *proc;
    int rc = ompi_proc_lookup(cell->src, &proc);

    if (HERD_SUCCESS != rc) {
        return rc;
    }
    btl_sm_endpoint_t *ep = btl_sm_endpoint_of(proc);
    if (NULL == ep) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (NULL == ep->rx_buf) {
        ep->rx_buf = malloc(cell->total);
        if (NULL == ep->rx_buf) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        ep->rx_total = cell->total;
        ep->rx_got = 0;
        ep->rx_tag = cell->tag;
    }
    if (cell->frag_len > ep->rx_total - ep->rx_got) {
        return HERD_ERR_UNPACK_FAILURE; /* a sender broke the protocol: do not overrun */
    }
    memcpy(ep->rx_buf + ep->rx_got, cell->data, cell->frag_len);
    ep->rx_got += cell->frag_len;
    if (ep->rx_got == ep->rx_total) {
        unsigned char *whole = ep->rx_buf;
        ep->rx_buf = NULL;
        btl_sm.deliver(cell->src, ep->rx_tag, whole, ep->rx_total);
        free(whole);
    }
    return HERD_SUCCESS;
}

static int btl_sm_progress(void)
{
    int events = 0;
    btl_sm_cell_t *cell;

    if (btl_sm.fbox_seen < btl_sm.mine.num_fboxes) {
        btl_sm_fbox_discover(&btl_sm.mine, btl_sm.fbox_rx, &btl_sm.fbox_seen);
    }
    for (uint32_t i = 0; i < btl_sm.fbox_seen; ++i) {
        btl_sm_fbox_receiver_t *r = &btl_sm.fbox_rx[i];
        const btl_sm_rec_t *rec;
        for (unsigned n = 0; n < BTL_SM_MAX_CELLS_PER_POLL && NULL != (rec = btl_sm_fbox_peek(r));
             ++n) {
            /* straight from shared memory into a posted receive or the unexpected queue */
            btl_sm.deliver(r->src, rec->tag, rec->data, rec->len);
            btl_sm_fbox_release(r, rec);
            events++;
        }
    }
    for (unsigned n = 0;
         n < BTL_SM_MAX_CELLS_PER_POLL && NULL != (cell = btl_sm_ring_peek(&btl_sm.mine)); ++n) {
        int rc = HERD_SUCCESS;
        if (cell->total == cell->frag_len) {
            /* a whole message in one cell: straight from shared memory, no per-peer state */
            btl_sm.deliver(cell->src, cell->tag, cell->data, cell->frag_len);
        } else {
            rc = btl_sm_join(cell);
        }
        btl_sm_ring_release(&btl_sm.mine, cell);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
        events++;
    }
    if (btl_sm.num_queued > 0) {
        events += btl_sm_push_queues();
    }
    return events;
}

static size_t btl_sm_pending(void)
{
    return btl_sm.num_queued;
}

static void btl_sm_finalize(void)
{
    while (NULL != btl_sm.endpoints) {
        btl_sm_endpoint_t *ep = btl_sm.endpoints;
        btl_sm.endpoints = ep->next;
        while (NULL != ep->queue_head) {
            btl_sm_pending_t *p = ep->queue_head;
            ep->queue_head = p->next;
            free(p);
        }
        free(ep->rx_buf);
        btl_sm_segment_detach(&ep->peer_seg);
        ep->proc->endpoint[HERD_ENDPOINT_TAG_SM] = NULL;
        free(ep);
    }
    btl_sm.num_endpoints = btl_sm.num_queued = 0;
    free(btl_sm.fbox_rx);
    btl_sm.fbox_rx = NULL;
    btl_sm.fbox_seen = 0;
    btl_sm_segment_detach(&btl_sm.mine);
    /* peers map it on their first message: it goes only now (the session daemon removes it at
     * the job's end if this process dies first) */
    shm_unlink(btl_sm.my_name);
}

static size_t btl_sm_num_peers(void)
{
    return btl_sm.num_endpoints;
}

static const ompi_btl_module_t btl_sm_module = {
    .name = "sm",
    .init = btl_sm_init,
    .reachable = btl_sm_reachable,
    .add_peer = btl_sm_add_peer,
    .send = btl_sm_send,
    .progress = btl_sm_progress,
    .pending = btl_sm_pending,
    .finalize = btl_sm_finalize,
    .num_peers = btl_sm_num_peers,
};

static int btl_sm_register(const opal_mca_component_t *component)
{
    static const opal_mca_var_def_t vars[] = {
        {.name = "priority",
         .type = OPAL_MCA_VAR_INT,
         .storage = &btl_sm.priority,
         .help = "Priority of the sm transport (shared-memory rings between the "
                 "processes of a node)"},
        {.name = "num_cells",
         .type = OPAL_MCA_VAR_UNSIGNED,
         .storage = &btl_sm.num_cells,
         .help = "Cells of each process's receive ring (a power of two): "
                 "num_cells * cell_size bytes of /dev/shm per process"},
        {.name = "cell_size",
         .type = OPAL_MCA_VAR_SIZE,
         .storage = &btl_sm.cell_size,
         .help = "Bytes of a ring cell, 32 of them its header (a multiple of "
                 "8, at least 64): a message up to cell_size - 32 bytes travels "
                 "in one cell, a longer one in several"},
        {.name = "num_fboxes",
         .type = OPAL_MCA_VAR_UNSIGNED,
         .storage = &btl_sm.num_fboxes,
         .help = "Fast boxes in each process's receive segment: the first this "
                 "many peers that send to it get one (short messages in one "
                 "or a few cache lines, no atomic operation); the others, and "
                 "long messages, use the ring. 0: the ring only"},
        {.name = "fbox_size",
         .type = OPAL_MCA_VAR_SIZE,
         .storage = &btl_sm.fbox_size,
         .help = "Bytes of each fast box (a power of two, at least 256; 128 more "
                 "for its control lines): messages up to fbox_size / 4 - 16 "
                 "bytes go through it"},
    };

    btl_sm.priority = BTL_SM_DEFAULT_PRIORITY;
    btl_sm.num_cells = BTL_SM_DEFAULT_CELLS;
    btl_sm.cell_size = BTL_SM_DEFAULT_CELL_SIZE;
    btl_sm.num_fboxes = BTL_SM_DEFAULT_FBOXES;
    btl_sm.fbox_size = BTL_SM_DEFAULT_FBOX_SIZE;
    return opal_mca_var_register_table(component, vars, OPAL_MCA_VAR_DEFS_COUNT(vars));
}

static int btl_sm_query(const opal_mca_component_t *component, void **module, int *priority)
{
    (void) component;
    *module = (void *) &btl_sm_module;
    *priority = btl_sm.priority;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(ompi, btl, sm, .register_params = btl_sm_register, .query = btl_sm_query);
