/* The wireup engine (wireup.h, base/base.h): every namespace's key-value store on this node,
 * fences (a grpcomm allgather among the daemons hosting a namespace, or a direct exchange
 * among the daemons hosting a set of processes), direct modex to the daemon hosting a process,
 * and published names kept by one daemon. Single-threaded: everything runs on the host's event
 * loop, and every callback is queued, never run inside the call that started it. */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/dss/buffer.h"
#include "opal/util/output.h"
#include "orte/mca/grpcomm/grpcomm.h"
#include "orte/mca/wireup/base/base.h"
#include "orte/mca/wireup/base/wireup_base_store.h"
#include "orte/mca/wireup/wireup.h"

/* Messages for a namespace not known yet are held, up to these bounds. */
#define ENGINE_MAX_HELD_MSGS  65536u
#define ENGINE_MAX_HELD_BYTES ((size_t) 64 << 20)
/* A requester gives the answering daemon this long beyond the request's own timeout. */
#define ENGINE_REPLY_GRACE_MS 10000
#define ENGINE_MAX_SIG_PROCS  (1u << 20)

enum { NAME_OP_PUBLISH = 1, NAME_OP_LOOKUP = 2, NAME_OP_UNPUBLISH = 3 };

/* ------------------------------------------------------------------------------------------ */
/* types */

typedef struct completion {
    struct completion *next;
    void (*run)(struct completion *c);
    /* the user's callback and what it gets */
    orte_wireup_done_fn_t done;
    orte_wireup_value_fn_t value;
    orte_wireup_blobs_fn_t blobs;
    void *cbdata;
    int status;
    char *error;
    void *data;
    size_t len;
    struct iovec *iov;
    uint32_t num_iov;
} completion_t;

typedef struct fence_waiter {
    struct fence_waiter *next;
    uint32_t rank;
    orte_wireup_done_fn_t cb;
    void *cbdata;
} fence_waiter_t;

/* A kv fence of one kind in one namespace: the local processes that entered. */
typedef struct kv_fence {
    fence_waiter_t *waiters;
    uint32_t entered;
    bool collect;
    bool running; /* contributed; waiting for the other daemons */
} kv_fence_t;

typedef struct ns ns_t;

/* A local get waiting for a key to be committed (a local owner, or the namespace). */
typedef struct kv_wait {
    struct kv_wait *next;
    orte_wireup_engine_t *engine;
    ns_t *ns;
    uint32_t owner;
    char *key;
    orte_wireup_value_fn_t cb;
    void *cbdata;
    opal_event_t *timer;
    int timeout_ms;
} kv_wait_t;

/* A request of another daemon waiting for a local owner's key. */
typedef struct remote_wait {
    struct remote_wait *next;
    orte_wireup_engine_t *engine;
    ns_t *ns;
    uint32_t owner;
    char *key; /* NULL: anything committed */
    orte_wireup_ticket_t *ticket;
    opal_event_t *timer;
    int timeout_ms;
} remote_wait_t;

struct ns {
    bool added;
    uint32_t index;
    uint32_t num_procs;
    uint32_t num_local;
    orte_vpid_t *daemons;
    uint32_t num_daemons;
    int64_t my_pos; /* in daemons, or -1 */
    orte_vpid_t (*rank_vpid)(void *ctx, uint32_t rank);
    void *ctx;
    wireup_store_t *store;
    uint64_t commit_gen;
    uint64_t fence_gen[ORTE_WIREUP_NUM_KINDS];
    uint32_t coll_seq[ORTE_WIREUP_NUM_KINDS];
    orte_grpcomm_t *gc;
    kv_fence_t kvf[ORTE_WIREUP_NUM_KINDS];
    kv_wait_t *kv_waits;
    remote_wait_t *remote_waits;
    orte_wireup_engine_t *engine;
};

/* A get of a remote owner's key, waiting for that owner's daemon. */
typedef struct kv_get {
    struct kv_get *next;
    char *key;
    orte_wireup_value_fn_t cb;
    void *cbdata;
} kv_get_t;

/* A direct-modex request this daemon sent. */
typedef struct dm_req {
    struct dm_req *next;
    orte_wireup_engine_t *engine;
    uint32_t id;
    orte_vpid_t target;
    uint32_t nspace;
    uint32_t rank;
    uint8_t kind;
    char *key;
    opal_event_t *timer;
    orte_wireup_value_fn_t cb; /* raw requests */
    void *cbdata;
    kv_get_t *gets; /* kv requests: the gets answered by it */
} dm_req_t;

struct orte_wireup_ticket {
    struct orte_wireup_ticket *next;
    orte_wireup_engine_t *engine;
    orte_vpid_t src;
    uint32_t id;
    bool orphaned; /* the requester is gone: the answer is dropped */
    bool names;    /* an answer to a name request */
};

/* A contribution to a direct fence, received before or after the local call. */
typedef struct dcontrib {
    orte_vpid_t vpid;
    struct iovec data;
} dcontrib_t;

typedef struct dfence {
    struct dfence *next;
    uint8_t kind;
    uint32_t seq;
    uint8_t *sig;
    size_t sig_len;
    bool started;
    orte_vpid_t *parts; /* ascending, once started */
    uint32_t num_parts;
    dcontrib_t *contribs;
    uint32_t num_contribs;
    uint32_t cap_contribs;
    orte_wireup_blobs_fn_t cb;
    void *cbdata;
} dfence_t;

/* How many direct fences with a given signature were started here. */
typedef struct dsig {
    struct dsig *next;
    uint8_t kind;
    uint8_t *sig;
    size_t sig_len;
    uint32_t count;
} dsig_t;

typedef struct name_entry {
    struct name_entry *next;
    char *name;
    void *value;
    size_t len;
} name_entry_t;

/* A lookup waiting at the names daemon. */
typedef struct name_wait {
    struct name_wait *next;
    orte_wireup_engine_t *engine;
    char *name;
    orte_wireup_ticket_t *ticket;
    opal_event_t *timer;
} name_wait_t;

/* A name request this daemon sent. */
typedef struct name_req {
    struct name_req *next;
    uint32_t id;
    opal_event_t *timer;
    orte_wireup_done_fn_t done;
    orte_wireup_value_fn_t value;
    void *cbdata;
} name_req_t;

typedef struct held_msg {
    struct held_msg *next;
    orte_vpid_t src;
    uint16_t tag;
    uint32_t nspace;
    size_t len;
    uint8_t data[];
} held_msg_t;

typedef struct handler {
    orte_wireup_dmodex_handler_t fn;
    void *ctx;
} handler_t;

/* A grpcomm collective of a namespace in flight. */
typedef struct coll_op {
    orte_wireup_engine_t *engine;
    ns_t *ns;
    uint8_t kind;
    bool kv; /* a kv fence: unpack the blobs into the store, release the waiters */
    orte_wireup_blobs_fn_t cb;
    void *cbdata;
} coll_op_t;

struct orte_wireup_engine {
    orte_wireup_engine_config_t config;
    const orte_grpcomm_module_t *gcm;
    ns_t **nss;
    uint32_t num_nss;
    completion_t *queue_head;
    completion_t *queue_tail;
    opal_event_t *queue_event;
    bool queue_armed;
    held_msg_t *held;
    uint32_t num_held;
    size_t held_bytes;
    handler_t handlers[ORTE_WIREUP_NUM_KINDS];
    uint32_t next_id;
    dm_req_t *dm_reqs;
    orte_wireup_ticket_t *tickets;
    dfence_t *dfences;
    dsig_t *dsigs;
    name_entry_t *names;
    name_wait_t *name_waits;
    name_req_t *name_reqs;
    orte_wireup_engine_stats_t stats;
    int verbose_stream;
};

static int engine_deliver(orte_wireup_engine_t *e, orte_vpid_t src, uint16_t tag, const void *data,
                          size_t len, bool redelivery);

/* ------------------------------------------------------------------------------------------ */
/* the completion queue: callbacks run from the loop, never inside the starting call */

static void queue_cb(int fd, short what, void *arg)
{
    orte_wireup_engine_t *e = arg;
    e->queue_armed = false;
    /* take the current queue: callbacks may queue more, run in the next round */
    completion_t *c = e->queue_head;
    e->queue_head = e->queue_tail = NULL;
    while (NULL != c) {
        completion_t *next = c->next;
        c->run(c);
        free(c->error);
        free(c->data);
        free(c->iov);
        free(c);
        c = next;
    }
}

static void queue_push(orte_wireup_engine_t *e, completion_t *c)
{
    c->next = NULL;
    if (NULL == e->queue_tail) {
        e->queue_head = c;
    } else {
        e->queue_tail->next = c;
    }
    e->queue_tail = c;
    if (!e->queue_armed) {
        struct timeval now = {0, 0};
        e->queue_armed = (HERD_SUCCESS == opal_event_add(e->queue_event, &now));
    }
}

static void run_done(completion_t *c)
{
    c->done(c->status, c->error, c->cbdata);
}

static void run_value(completion_t *c)
{
    c->value(c->status, c->data, c->len, c->error, c->cbdata);
}

static void run_blobs(completion_t *c)
{
    c->blobs(c->status, c->iov, c->num_iov, c->error, c->cbdata);
}

static char *dup_error(const char *error)
{
    return (NULL != error) ? strdup(error) : NULL;
}

/* Queue done(status, error). Out of memory leaves the caller waiting: nothing better exists. */
static void complete_done(orte_wireup_engine_t *e, orte_wireup_done_fn_t cb, void *cbdata,
                          int status, const char *error)
{
    completion_t *c = calloc(1, sizeof(*c));
    if (NULL == c) {
        return;
    }
    c->run = run_done;
    c->done = cb;
    c->cbdata = cbdata;
    c->status = status;
    c->error = dup_error(error);
    queue_push(e, c);
}

static void complete_value(orte_wireup_engine_t *e, orte_wireup_value_fn_t cb, void *cbdata,
                           int status, const void *data, size_t len, const char *error)
{
    completion_t *c = calloc(1, sizeof(*c));
    if (NULL == c) {
        return;
    }
    c->run = run_value;
    c->value = cb;
    c->cbdata = cbdata;
    c->status = status;
    c->error = dup_error(error);
    if (HERD_SUCCESS == status && len > 0) {
        c->data = malloc(len);
        if (NULL == c->data) {
            c->status = HERD_ERR_OUT_OF_RESOURCE;
        } else {
            memcpy(c->data, data, len);
            c->len = len;
        }
    }
    queue_push(e, c);
}

/* Blobs are copied into one allocation; iov points into it. */
static void complete_blobs(orte_wireup_engine_t *e, orte_wireup_blobs_fn_t cb, void *cbdata,
                           int status, const struct iovec *blobs, uint32_t n, const char *error)
{
    completion_t *c = calloc(1, sizeof(*c));
    if (NULL == c) {
        return;
    }
    c->run = run_blobs;
    c->blobs = cb;
    c->cbdata = cbdata;
    c->status = status;
    c->error = dup_error(error);
    if (HERD_SUCCESS == status) {
        size_t total = 0;
        for (uint32_t i = 0; i < n; ++i) {
            total += blobs[i].iov_len;
        }
        c->iov = calloc(n > 0 ? n : 1, sizeof(*c->iov));
        c->data = malloc(total > 0 ? total : 1);
        if (NULL == c->iov || NULL == c->data) {
            c->status = HERD_ERR_OUT_OF_RESOURCE;
        } else {
            uint8_t *p = c->data;
            for (uint32_t i = 0; i < n; ++i) {
                c->iov[i].iov_base = (blobs[i].iov_len > 0) ? p : NULL;
                c->iov[i].iov_len = blobs[i].iov_len;
                if (blobs[i].iov_len > 0) {
                    memcpy(p, blobs[i].iov_base, blobs[i].iov_len);
                }
                p += blobs[i].iov_len;
            }
            c->num_iov = n;
        }
    }
    queue_push(e, c);
}

/* ------------------------------------------------------------------------------------------ */
/* small helpers */

static ns_t *find_ns(const orte_wireup_engine_t *e, uint32_t index)
{
    return (index < e->num_nss && NULL != e->nss[index] && e->nss[index]->added) ? e->nss[index]
                                                                                 : NULL;
}

static int send_buffer(orte_wireup_engine_t *e, orte_vpid_t dst, uint16_t tag, opal_buffer_t *b)
{
    struct iovec iov = {.iov_base = b->base, .iov_len = b->used};
    return e->config.send(e->config.ctx, dst, tag, &iov, 1);
}

static int arm_timer(orte_wireup_engine_t *e, opal_event_cb_t cb, void *arg, int ms,
                     opal_event_t **timer)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    int rc = opal_event_timer_create(e->config.base, false, cb, arg, timer);
    if (HERD_SUCCESS == rc && HERD_SUCCESS != (rc = opal_event_add(*timer, &tv))) {
        opal_event_free(*timer);
        *timer = NULL;
    }
    return rc;
}

static void free_timer(opal_event_t **timer)
{
    if (NULL != *timer) {
        opal_event_free(*timer);
        *timer = NULL;
    }
}

static int effective_timeout(const orte_wireup_engine_t *e, int timeout_ms)
{
    return timeout_ms < 0 ? e->config.get_timeout_ms : timeout_ms;
}

static const char *kind_name(uint8_t kind)
{
    switch (kind) {
    case ORTE_WIREUP_KIND_NATIVE:
        return "native";
    case ORTE_WIREUP_KIND_PMI1:
        return "pmi1";
    case ORTE_WIREUP_KIND_PMIX:
        return "pmix";
    case ORTE_WIREUP_KIND_CONNECT:
        return "connect";
    default:
        return "unknown";
    }
}

static bool kind_valid(int kind)
{
    return kind >= ORTE_WIREUP_KIND_NATIVE && kind < ORTE_WIREUP_NUM_KINDS;
}

static bool key_valid(const char *key)
{
    return NULL != key && '\0' != *key && strlen(key) <= ORTE_WIREUP_MAX_KEY;
}

/* Whether owner is hosted here (or is the namespace itself, whose keys are only local). */
static bool owner_local(const orte_wireup_engine_t *e, const ns_t *ns, uint32_t owner)
{
    return ORTE_WIREUP_OWNER_NSPACE == owner || ns->rank_vpid(ns->ctx, owner) == e->config.me;
}

static void malformed(orte_wireup_engine_t *e, orte_vpid_t src, const char *what)
{
    e->stats.malformed++;
    opal_output_verbose(1, e->verbose_stream,
                        "wireup: dropped a malformed %s message from session daemon %u", what, src);
}

/* ------------------------------------------------------------------------------------------ */
/* namespace collectives (grpcomm among the daemons hosting the namespace) */

static int coll_send(void *ctx, orte_vpid_t dst, uint16_t tag, const void *data, size_t len)
{
    ns_t *ns = ctx;
    orte_wireup_engine_t *e = ns->engine;
    opal_buffer_t header;
    if (dst >= ns->num_daemons || tag < ORTE_GRPCOMM_TAG_BASE ||
        tag >= ORTE_GRPCOMM_TAG_BASE + ORTE_GRPCOMM_NUM_TAGS) {
        return HERD_ERR_BAD_PARAM;
    }
    opal_buffer_init(&header);
    int rc = opal_buffer_pack_uint8(&header, ORTE_WIREUP_WIRE_VERSION);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_pack_uint32(&header, ns->index);
    }
    if (HERD_SUCCESS == rc) {
        struct iovec iov[2] = {{.iov_base = header.base, .iov_len = header.used},
                               {.iov_base = (void *) data, .iov_len = len}};
        rc = e->config.send(e->config.ctx, ns->daemons[dst],
                            (uint16_t) (ORTE_WIREUP_TAG_COLL + (tag - ORTE_GRPCOMM_TAG_BASE)), iov,
                            2);
    }
    opal_buffer_destruct(&header);
    return rc;
}

static void kv_fence_release(orte_wireup_engine_t *e, ns_t *ns, uint8_t kind, int status,
                             const char *error)
{
    kv_fence_t *f = &ns->kvf[kind];
    fence_waiter_t *w = f->waiters;
    f->waiters = NULL;
    f->entered = 0;
    f->collect = false;
    f->running = false;
    while (NULL != w) {
        fence_waiter_t *next = w->next;
        complete_done(e, w->cb, w->cbdata, status, error);
        free(w);
        w = next;
    }
}

static void coll_done(int status, const orte_grpcomm_result_t *result, void *cbdata)
{
    coll_op_t *op = cbdata;
    orte_wireup_engine_t *e = op->engine;
    ns_t *ns = op->ns;
    if (HERD_SUCCESS == status) {
        e->stats.fences++;
    }
    if (op->kv) {
        char error[160];
        for (uint32_t i = 0; HERD_SUCCESS == status && i < result->num_blobs; ++i) {
            if ((int64_t) i == ns->my_pos || 0 == result->blobs[i].len) {
                continue;
            }
            status =
                wireup_store_unpack_bytes(ns->store, result->blobs[i].data, result->blobs[i].len,
                                          ORTE_WIREUP_MAX_KEY, ORTE_WIREUP_MAX_VALUE);
            if (HERD_SUCCESS != status) {
                malformed(e, ns->daemons[i], "fence data");
            }
        }
        snprintf(error, sizeof(error),
                 "the %s fence of namespace %u failed: %s (a session daemon of the job is gone, "
                 "or sent malformed data)",
                 kind_name(op->kind), ns->index, opal_strerror(status));
        kv_fence_release(e, ns, op->kind, status, HERD_SUCCESS == status ? NULL : error);
    } else if (HERD_SUCCESS == status) {
        struct iovec *iov = calloc(result->num_blobs > 0 ? result->num_blobs : 1, sizeof(*iov));
        if (NULL == iov) {
            complete_blobs(e, op->cb, op->cbdata, HERD_ERR_OUT_OF_RESOURCE, NULL, 0, NULL);
        } else {
            for (uint32_t i = 0; i < result->num_blobs; ++i) {
                iov[i].iov_base = (void *) result->blobs[i].data;
                iov[i].iov_len = result->blobs[i].len;
            }
            complete_blobs(e, op->cb, op->cbdata, HERD_SUCCESS, iov, result->num_blobs, NULL);
            free(iov);
        }
    } else {
        complete_blobs(e, op->cb, op->cbdata, status, NULL, 0,
                       "a collective among the job's session daemons failed: one of them is gone");
    }
    free(op);
}

/* Start an allgather of the namespace's daemons (this one hosting some of its processes). */
static int ns_allgather(orte_wireup_engine_t *e, ns_t *ns, uint8_t kind, bool kv, const void *data,
                        size_t len, orte_wireup_blobs_fn_t cb, void *cbdata)
{
    if (NULL == ns->gc) {
        /* this daemon alone hosts the namespace: nothing to exchange */
        if (kv) {
            e->stats.fences++;
            kv_fence_release(e, ns, kind, HERD_SUCCESS, NULL);
            return HERD_SUCCESS;
        }
        struct iovec one = {.iov_base = (void *) data, .iov_len = len};
        e->stats.fences++;
        complete_blobs(e, cb, cbdata, HERD_SUCCESS, &one, 1, NULL);
        return HERD_SUCCESS;
    }
    coll_op_t *op = calloc(1, sizeof(*op));
    if (NULL == op) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    *op = (coll_op_t){.engine = e, .ns = ns, .kind = kind, .kv = kv, .cb = cb, .cbdata = cbdata};
    uint32_t id = ((uint32_t) kind << 24) | (ns->coll_seq[kind]++ & 0xffffffu);
    int rc = e->gcm->allgather(ns->gc, id, data, len, coll_done, op);
    if (HERD_SUCCESS != rc) {
        free(op);
    }
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* key-value store */

static void kv_wait_free(kv_wait_t *w)
{
    free_timer(&w->timer);
    free(w->key);
    free(w);
}

static void remote_wait_free(remote_wait_t *w)
{
    free_timer(&w->timer);
    free(w->key);
    free(w);
}

static void kv_wait_timeout(int fd, short what, void *arg)
{
    kv_wait_t *w = arg;
    ns_t *ns = w->ns;
    char error[ORTE_WIREUP_MAX_KEY + 160];
    for (kv_wait_t **p = &ns->kv_waits; NULL != *p; p = &(*p)->next) {
        if (*p == w) {
            *p = w->next;
            break;
        }
    }
    if (ORTE_WIREUP_OWNER_NSPACE == w->owner) {
        snprintf(error, sizeof(error), "no process put key '%s' within %.1f s", w->key,
                 w->timeout_ms / 1000.0);
    } else {
        snprintf(error, sizeof(error), "rank %u never committed key '%s' within %.1f s", w->owner,
                 w->key, w->timeout_ms / 1000.0);
    }
    complete_value(w->engine, w->cb, w->cbdata, HERD_ERR_NOT_FOUND, NULL, 0, error);
    kv_wait_free(w);
}

static void answer_owner(orte_wireup_engine_t *e, ns_t *ns, uint32_t owner,
                         orte_wireup_ticket_t *ticket)
{
    opal_buffer_t b;
    opal_buffer_init(&b);
    int rc = wireup_store_pack_owner(ns->store, owner, &b);
    e->stats.dmodex_served++;
    orte_wireup_dmodex_reply(ticket, rc, b.base, b.used, NULL);
    opal_buffer_destruct(&b);
}

/* owner committed: answer the local gets and remote requests now satisfied. */
static void kv_committed(orte_wireup_engine_t *e, ns_t *ns, uint32_t owner)
{
    kv_wait_t **p = &ns->kv_waits;
    while (NULL != *p) {
        kv_wait_t *w = *p;
        wireup_store_value_t v;
        if (w->owner == owner && wireup_store_find(ns->store, owner, w->key, &v)) {
            *p = w->next;
            complete_value(e, w->cb, w->cbdata, HERD_SUCCESS, v.data, v.len, NULL);
            kv_wait_free(w);
        } else {
            p = &w->next;
        }
    }
    remote_wait_t **r = &ns->remote_waits;
    while (NULL != *r) {
        remote_wait_t *w = *r;
        wireup_store_value_t v;
        if (w->owner == owner &&
            (NULL == w->key || wireup_store_find(ns->store, owner, w->key, &v))) {
            *r = w->next;
            answer_owner(e, ns, owner, w->ticket);
            w->ticket = NULL;
            remote_wait_free(w);
        } else {
            r = &w->next;
        }
    }
}

int orte_wireup_kv_put(orte_wireup_engine_t *e, uint32_t nspace, uint32_t owner, const char *key,
                       const void *value, size_t len)
{
    ns_t *ns = (NULL != e) ? find_ns(e, nspace) : NULL;
    if (NULL == ns || !key_valid(key) || len > ORTE_WIREUP_MAX_VALUE ||
        (len > 0 && NULL == value) ||
        (ORTE_WIREUP_OWNER_NSPACE != owner && owner >= ns->num_procs)) {
        return HERD_ERR_BAD_PARAM;
    }
    return wireup_store_put(ns->store, owner, key, value, len);
}

int orte_wireup_kv_commit(orte_wireup_engine_t *e, uint32_t nspace, uint32_t owner)
{
    ns_t *ns = (NULL != e) ? find_ns(e, nspace) : NULL;
    size_t count = 0;
    if (NULL == ns || (ORTE_WIREUP_OWNER_NSPACE != owner && owner >= ns->num_procs)) {
        return HERD_ERR_BAD_PARAM;
    }
    int rc = wireup_store_commit(ns->store, owner, ++ns->commit_gen, &count);
    if (HERD_SUCCESS == rc) {
        kv_committed(e, ns, owner);
    }
    return rc;
}

int orte_wireup_kv_fence(orte_wireup_engine_t *e, uint32_t nspace, orte_wireup_kind_t kind,
                         uint32_t rank, bool collect, orte_wireup_done_fn_t cb, void *cbdata)
{
    ns_t *ns = (NULL != e) ? find_ns(e, nspace) : NULL;
    if (NULL == ns || !kind_valid(kind) || NULL == cb || rank >= ns->num_procs || ns->my_pos < 0 ||
        ns->num_local == 0) {
        return HERD_ERR_BAD_PARAM;
    }
    kv_fence_t *f = &ns->kvf[kind];
    if (f->running) {
        return HERD_ERR_EXISTS;
    }
    for (fence_waiter_t *w = f->waiters; NULL != w; w = w->next) {
        if (w->rank == rank) {
            return HERD_ERR_EXISTS;
        }
    }
    fence_waiter_t *w = calloc(1, sizeof(*w));
    if (NULL == w) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    *w = (fence_waiter_t){.next = f->waiters, .rank = rank, .cb = cb, .cbdata = cbdata};
    f->waiters = w;
    f->collect = f->collect || collect;
    if (++f->entered < ns->num_local) {
        return HERD_SUCCESS;
    }
    /* the last local process is in: contribute */
    f->running = true;
    opal_buffer_t b;
    opal_buffer_init(&b);
    int rc = HERD_SUCCESS;
    if (f->collect) {
        rc = wireup_store_pack_since(ns->store, ns->fence_gen[kind], &b);
        ns->fence_gen[kind] = ns->commit_gen;
    }
    if (HERD_SUCCESS == rc) {
        rc = ns_allgather(e, ns, (uint8_t) kind, true, b.base, b.used, NULL, NULL);
    }
    opal_buffer_destruct(&b);
    if (HERD_SUCCESS != rc) {
        kv_fence_release(e, ns, (uint8_t) kind, rc, "this session daemon could not start a fence");
    }
    return HERD_SUCCESS;
}

/* The answer to a kv request came (or failed): every get attached to it looks again. */
static void kv_request_done(orte_wireup_engine_t *e, dm_req_t *req, int status, const void *data,
                            size_t len, const char *error)
{
    ns_t *ns = find_ns(e, req->nspace);
    char text[ORTE_WIREUP_MAX_KEY + 160];
    if (HERD_SUCCESS == status && NULL != ns) {
        status = wireup_store_unpack_bytes(ns->store, data, len, ORTE_WIREUP_MAX_KEY,
                                           ORTE_WIREUP_MAX_VALUE);
        if (HERD_SUCCESS != status) {
            malformed(e, req->target, "direct modex answer");
            error = "the answer of the session daemon hosting the peer was malformed";
        }
    }
    kv_get_t *g = req->gets;
    req->gets = NULL;
    while (NULL != g) {
        kv_get_t *next = g->next;
        wireup_store_value_t v;
        if (HERD_SUCCESS == status && NULL != ns &&
            wireup_store_find(ns->store, req->rank, g->key, &v)) {
            complete_value(e, g->cb, g->cbdata, HERD_SUCCESS, v.data, v.len, NULL);
        } else {
            if (HERD_SUCCESS == status) {
                snprintf(text, sizeof(text), "rank %u has no key '%s'", req->rank, g->key);
            }
            complete_value(e, g->cb, g->cbdata,
                           HERD_SUCCESS == status ? HERD_ERR_NOT_FOUND : status, NULL, 0,
                           HERD_SUCCESS == status ? text : error);
        }
        free(g->key);
        free(g);
        g = next;
    }
}

static void dm_req_free(dm_req_t *req)
{
    free_timer(&req->timer);
    free(req->key);
    free(req);
}

static void dm_req_unlink(orte_wireup_engine_t *e, dm_req_t *req)
{
    for (dm_req_t **p = &e->dm_reqs; NULL != *p; p = &(*p)->next) {
        if (*p == req) {
            *p = req->next;
            return;
        }
    }
}

/* Finish a request this daemon sent: its raw callback, or its kv gets. */
static void dm_req_finish(orte_wireup_engine_t *e, dm_req_t *req, int status, const void *data,
                          size_t len, const char *error)
{
    dm_req_unlink(e, req);
    if (NULL != req->cb) {
        complete_value(e, req->cb, req->cbdata, status, data, len, error);
    } else {
        kv_request_done(e, req, status, data, len, error);
    }
    dm_req_free(req);
}

static void dm_req_timeout(int fd, short what, void *arg)
{
    dm_req_t *req = arg;
    char error[ORTE_WIREUP_MAX_KEY + 160];
    snprintf(error, sizeof(error),
             "the session daemon hosting rank %u of namespace %u did not answer a request for "
             "key '%s' in time",
             req->rank, req->nspace, NULL != req->key ? req->key : "(any)");
    dm_req_finish(req->engine, req, HERD_ERR_TIMEOUT, NULL, 0, error);
}

/* A request to the daemon hosting (nspace, rank). */
static int dm_send(orte_wireup_engine_t *e, dm_req_t *req, int timeout_ms);

int orte_wireup_kv_get(orte_wireup_engine_t *e, uint32_t nspace, uint32_t owner, const char *key,
                       int timeout_ms, orte_wireup_value_fn_t cb, void *cbdata)
{
    ns_t *ns = (NULL != e) ? find_ns(e, nspace) : NULL;
    wireup_store_value_t v;
    if (NULL == ns || !key_valid(key) || NULL == cb ||
        (ORTE_WIREUP_OWNER_NSPACE != owner && owner >= ns->num_procs)) {
        return HERD_ERR_BAD_PARAM;
    }
    if (wireup_store_find(ns->store, owner, key, &v)) {
        complete_value(e, cb, cbdata, HERD_SUCCESS, v.data, v.len, NULL);
        return HERD_SUCCESS;
    }
    timeout_ms = effective_timeout(e, timeout_ms);
    if (owner_local(e, ns, owner)) {
        char error[ORTE_WIREUP_MAX_KEY + 80];
        if (0 == timeout_ms) {
            if (ORTE_WIREUP_OWNER_NSPACE == owner) {
                snprintf(error, sizeof(error), "no process has put key '%s'", key);
            } else {
                snprintf(error, sizeof(error), "rank %u has not committed key '%s'", owner, key);
            }
            complete_value(e, cb, cbdata, HERD_ERR_NOT_FOUND, NULL, 0, error);
            return HERD_SUCCESS;
        }
        kv_wait_t *w = calloc(1, sizeof(*w));
        if (NULL == w || NULL == (w->key = strdup(key))) {
            free(w);
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        w->engine = e;
        w->ns = ns;
        w->owner = owner;
        w->cb = cb;
        w->cbdata = cbdata;
        w->timeout_ms = timeout_ms;
        int rc = arm_timer(e, kv_wait_timeout, w, timeout_ms, &w->timer);
        if (HERD_SUCCESS != rc) {
            kv_wait_free(w);
            return rc;
        }
        w->next = ns->kv_waits;
        ns->kv_waits = w;
        return HERD_SUCCESS;
    }
    /* a remote owner: join a request already on its way for the same key, or send one */
    kv_get_t *g = calloc(1, sizeof(*g));
    if (NULL == g || NULL == (g->key = strdup(key))) {
        free(g);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    g->cb = cb;
    g->cbdata = cbdata;
    for (dm_req_t *req = e->dm_reqs; NULL != req; req = req->next) {
        if (NULL == req->cb && req->nspace == nspace && req->rank == owner &&
            0 == strcmp(req->key, key)) {
            g->next = req->gets;
            req->gets = g;
            return HERD_SUCCESS;
        }
    }
    dm_req_t *req = calloc(1, sizeof(*req));
    if (NULL == req || NULL == (req->key = strdup(key))) {
        free(req);
        free(g->key);
        free(g);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    req->nspace = nspace;
    req->rank = owner;
    req->kind = ORTE_WIREUP_KIND_NATIVE; /* any kv kind: the store is shared */
    req->gets = g;
    int rc = dm_send(e, req, timeout_ms);
    if (HERD_SUCCESS != rc) {
        free(g->key);
        free(g);
        req->gets = NULL;
        dm_req_free(req);
    }
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* direct modex */

static int dm_send(orte_wireup_engine_t *e, dm_req_t *req, int timeout_ms)
{
    ns_t *ns = find_ns(e, req->nspace);
    if (NULL == ns) {
        return HERD_ERR_BAD_PARAM;
    }
    req->engine = e;
    req->id = ++e->next_id;
    req->target = ns->rank_vpid(ns->ctx, req->rank);
    if (ORTE_VPID_INVALID == req->target) {
        return HERD_ERR_BAD_PARAM;
    }
    int rc = arm_timer(e, dm_req_timeout, req, timeout_ms + ENGINE_REPLY_GRACE_MS, &req->timer);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    req->next = e->dm_reqs;
    e->dm_reqs = req;
    e->stats.dmodex_sent++;
    opal_buffer_t b;
    opal_buffer_init(&b);
    if (HERD_SUCCESS != (rc = opal_buffer_pack_uint8(&b, ORTE_WIREUP_WIRE_VERSION)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(&b, req->id)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(&b, req->nspace)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(&b, req->rank)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint8(&b, req->kind)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_string(&b, NULL != req->key ? req->key : "")) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_int32(&b, timeout_ms))) {
        opal_buffer_destruct(&b);
        dm_req_unlink(e, req);
        return rc;
    }
    if (req->target == e->config.me) {
        /* a process of ours: answered through our own handler, without a message */
        rc = engine_deliver(e, e->config.me, ORTE_WIREUP_TAG_DMODEX_REQ, b.base, b.used, false);
    } else {
        rc = send_buffer(e, req->target, ORTE_WIREUP_TAG_DMODEX_REQ, &b);
    }
    opal_buffer_destruct(&b);
    if (HERD_SUCCESS != rc) {
        dm_req_unlink(e, req);
    }
    return rc;
}

int orte_wireup_dmodex(orte_wireup_engine_t *e, uint32_t nspace, uint32_t rank,
                       orte_wireup_kind_t kind, const char *key, int timeout_ms,
                       orte_wireup_value_fn_t cb, void *cbdata)
{
    ns_t *ns = (NULL != e) ? find_ns(e, nspace) : NULL;
    if (NULL == ns || !kind_valid(kind) || NULL == cb || rank >= ns->num_procs ||
        (NULL != key && '\0' != *key && !key_valid(key))) {
        return HERD_ERR_BAD_PARAM;
    }
    dm_req_t *req = calloc(1, sizeof(*req));
    if (NULL == req) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    req->nspace = nspace;
    req->rank = rank;
    req->kind = (uint8_t) kind;
    req->cb = cb;
    req->cbdata = cbdata;
    if (NULL != key && '\0' != *key && NULL == (req->key = strdup(key))) {
        free(req);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    int rc = dm_send(e, req, effective_timeout(e, timeout_ms));
    if (HERD_SUCCESS != rc) {
        dm_req_free(req);
    }
    return rc;
}

int orte_wireup_set_dmodex_handler(orte_wireup_engine_t *e, orte_wireup_kind_t kind,
                                   orte_wireup_dmodex_handler_t handler, void *ctx)
{
    if (NULL == e || !kind_valid(kind) || ORTE_WIREUP_KIND_NATIVE == kind ||
        ORTE_WIREUP_KIND_PMI1 == kind) {
        return HERD_ERR_BAD_PARAM; /* the key-value kinds are the engine's own */
    }
    if (NULL != handler && NULL != e->handlers[kind].fn) {
        return HERD_ERR_EXISTS;
    }
    e->handlers[kind].fn = handler;
    e->handlers[kind].ctx = ctx;
    return HERD_SUCCESS;
}

static orte_wireup_ticket_t *ticket_new(orte_wireup_engine_t *e, orte_vpid_t src, uint32_t id,
                                        bool names)
{
    orte_wireup_ticket_t *t = calloc(1, sizeof(*t));
    if (NULL != t) {
        *t = (orte_wireup_ticket_t){
            .next = e->tickets, .engine = e, .src = src, .id = id, .names = names};
        e->tickets = t;
    }
    return t;
}

static void ticket_release(orte_wireup_ticket_t *t)
{
    orte_wireup_engine_t *e = t->engine;
    for (orte_wireup_ticket_t **p = &e->tickets; NULL != *p; p = &(*p)->next) {
        if (*p == t) {
            *p = t->next;
            break;
        }
    }
    free(t);
}

static void handle_resp(orte_wireup_engine_t *e, bool names, uint32_t id, int status,
                        const void *data, size_t len, const char *error);

/* Answer a request (a direct modex, or a name request at the names daemon). */
static void ticket_answer(orte_wireup_ticket_t *t, int status, const void *data, size_t len,
                          const char *error)
{
    orte_wireup_engine_t *e = t->engine;
    if (t->orphaned) {
        ticket_release(t);
        return;
    }
    if (t->src == e->config.me) {
        handle_resp(e, t->names, t->id, status, data, len, error);
        ticket_release(t);
        return;
    }
    opal_buffer_t b;
    opal_buffer_init(&b);
    if (HERD_SUCCESS == opal_buffer_pack_uint8(&b, ORTE_WIREUP_WIRE_VERSION) &&
        HERD_SUCCESS == opal_buffer_pack_uint32(&b, t->id) &&
        HERD_SUCCESS == opal_buffer_pack_int32(&b, status) &&
        HERD_SUCCESS == opal_buffer_pack_bytes(&b, HERD_SUCCESS == status ? data : NULL,
                                               HERD_SUCCESS == status ? len : 0) &&
        HERD_SUCCESS == opal_buffer_pack_string(&b, NULL != error ? error : "")) {
        send_buffer(e, t->src, t->names ? ORTE_WIREUP_TAG_NAME_RESP : ORTE_WIREUP_TAG_DMODEX_RESP,
                    &b);
    }
    opal_buffer_destruct(&b);
    ticket_release(t);
}

void orte_wireup_dmodex_reply(orte_wireup_ticket_t *t, int status, const void *data, size_t len,
                              const char *error)
{
    if (NULL != t) {
        ticket_answer(t, status, data, len, error);
    }
}

static void remote_wait_timeout(int fd, short what, void *arg)
{
    remote_wait_t *w = arg;
    ns_t *ns = w->ns;
    char error[ORTE_WIREUP_MAX_KEY + 160];
    for (remote_wait_t **p = &ns->remote_waits; NULL != *p; p = &(*p)->next) {
        if (*p == w) {
            *p = w->next;
            break;
        }
    }
    snprintf(error, sizeof(error), "rank %u never committed key '%s' within %.1f s", w->owner,
             NULL != w->key ? w->key : "(any)", w->timeout_ms / 1000.0);
    orte_wireup_dmodex_reply(w->ticket, HERD_ERR_NOT_FOUND, NULL, 0, error);
    w->ticket = NULL;
    remote_wait_free(w);
}

/* Another daemon asks for a local process's keys: answer now, or once it commits them. */
static void kv_serve(orte_wireup_engine_t *e, ns_t *ns, uint32_t rank, const char *key,
                     int timeout_ms, orte_wireup_ticket_t *ticket)
{
    wireup_store_value_t v;
    bool ready = ('\0' == *key) ? wireup_store_has_owner(ns->store, rank)
                                : wireup_store_find(ns->store, rank, key, &v);
    if (ready) {
        answer_owner(e, ns, rank, ticket);
        return;
    }
    if (timeout_ms <= 0) {
        char error[ORTE_WIREUP_MAX_KEY + 80];
        snprintf(error, sizeof(error), "rank %u has not committed key '%s'", rank,
                 '\0' != *key ? key : "(any)");
        orte_wireup_dmodex_reply(ticket, HERD_ERR_NOT_FOUND, NULL, 0, error);
        return;
    }
    remote_wait_t *w = calloc(1, sizeof(*w));
    if (NULL == w || ('\0' != *key && NULL == (w->key = strdup(key)))) {
        free(w);
        orte_wireup_dmodex_reply(ticket, HERD_ERR_OUT_OF_RESOURCE, NULL, 0, NULL);
        return;
    }
    w->engine = e;
    w->ns = ns;
    w->owner = rank;
    w->ticket = ticket;
    w->timeout_ms = timeout_ms;
    if (HERD_SUCCESS != arm_timer(e, remote_wait_timeout, w, timeout_ms, &w->timer)) {
        orte_wireup_dmodex_reply(ticket, HERD_ERR_OUT_OF_RESOURCE, NULL, 0, NULL);
        w->ticket = NULL;
        remote_wait_free(w);
        return;
    }
    w->next = ns->remote_waits;
    ns->remote_waits = w;
}

/* ------------------------------------------------------------------------------------------ */
/* raw allgather: a namespace's collective, or a direct fence among the daemons of a list */

typedef struct procid_pair {
    uint32_t nspace;
    uint32_t rank;
} procid_pair_t;

static int cmp_pair(const void *a, const void *b)
{
    const procid_pair_t *x = a, *y = b;
    if (x->nspace != y->nspace) {
        return x->nspace < y->nspace ? -1 : 1;
    }
    return x->rank < y->rank ? -1 : (x->rank > y->rank);
}

static int cmp_vpid(const void *a, const void *b)
{
    orte_vpid_t x = *(const orte_vpid_t *) a, y = *(const orte_vpid_t *) b;
    return x < y ? -1 : (x > y);
}

/* The signature of a process list: sorted, without repeats, as big-endian pairs. */
static int make_sig(const orte_wireup_procid_t *procs, size_t n, uint8_t **sig, size_t *len)
{
    procid_pair_t *pairs = malloc((n > 0 ? n : 1) * sizeof(*pairs));
    if (NULL == pairs) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < n; ++i) {
        pairs[i].nspace = procs[i].nspace;
        pairs[i].rank = procs[i].rank;
    }
    qsort(pairs, n, sizeof(*pairs), cmp_pair);
    size_t m = 0;
    for (size_t i = 0; i < n; ++i) {
        if (0 == m || 0 != cmp_pair(&pairs[m - 1], &pairs[i])) {
            pairs[m++] = pairs[i];
        }
    }
    uint8_t *out = malloc(m > 0 ? 8 * m : 1);
    if (NULL == out) {
        free(pairs);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < m; ++i) {
        for (int k = 0; k < 4; ++k) {
            out[8 * i + k] = (uint8_t) (pairs[i].nspace >> (24 - 8 * k));
            out[8 * i + 4 + k] = (uint8_t) (pairs[i].rank >> (24 - 8 * k));
        }
    }
    free(pairs);
    *sig = out;
    *len = 8 * m;
    return HERD_SUCCESS;
}

static uint32_t sig_word(const uint8_t *p)
{
    return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3];
}

/* The daemons hosting the processes of a signature, ascending. HERD_ERR_NOT_FOUND when a
 * namespace is not known here (yet); HERD_ERR_BAD_PARAM for a rank out of range. */
static int sig_daemons(orte_wireup_engine_t *e, const uint8_t *sig, size_t len, orte_vpid_t **out,
                       uint32_t *count)
{
    size_t n = len / 8, cap = 16, m = 0;
    orte_vpid_t *v = malloc(cap * sizeof(*v));
    if (NULL == v) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < n; ++i) {
        ns_t *ns = find_ns(e, sig_word(sig + 8 * i));
        uint32_t rank = sig_word(sig + 8 * i + 4);
        if (NULL == ns) {
            free(v);
            return HERD_ERR_NOT_FOUND;
        }
        if (ORTE_WIREUP_RANK_WILDCARD != rank && rank >= ns->num_procs) {
            free(v);
            return HERD_ERR_BAD_PARAM;
        }
        size_t add = (ORTE_WIREUP_RANK_WILDCARD == rank) ? ns->num_daemons : 1;
        if (m + add > cap) {
            while (m + add > cap) {
                cap *= 2;
            }
            orte_vpid_t *grown = realloc(v, cap * sizeof(*v));
            if (NULL == grown) {
                free(v);
                return HERD_ERR_OUT_OF_RESOURCE;
            }
            v = grown;
        }
        if (ORTE_WIREUP_RANK_WILDCARD == rank) {
            memcpy(v + m, ns->daemons, ns->num_daemons * sizeof(*v));
            m += ns->num_daemons;
        } else {
            v[m++] = ns->rank_vpid(ns->ctx, rank);
        }
    }
    qsort(v, m, sizeof(*v), cmp_vpid);
    size_t u = 0;
    for (size_t i = 0; i < m; ++i) {
        if (ORTE_VPID_INVALID != v[i] && (0 == u || v[u - 1] != v[i])) {
            v[u++] = v[i];
        }
    }
    *out = v;
    *count = (uint32_t) u;
    return HERD_SUCCESS;
}

static dfence_t *find_dfence(orte_wireup_engine_t *e, uint8_t kind, uint32_t seq,
                             const uint8_t *sig, size_t len)
{
    for (dfence_t *f = e->dfences; NULL != f; f = f->next) {
        if (f->kind == kind && f->seq == seq && f->sig_len == len &&
            0 == memcmp(f->sig, sig, len)) {
            return f;
        }
    }
    return NULL;
}

static dfence_t *get_dfence(orte_wireup_engine_t *e, uint8_t kind, uint32_t seq, const uint8_t *sig,
                            size_t len)
{
    dfence_t *f = find_dfence(e, kind, seq, sig, len);
    if (NULL != f) {
        return f;
    }
    f = calloc(1, sizeof(*f));
    if (NULL == f || NULL == (f->sig = malloc(len > 0 ? len : 1))) {
        free(f);
        return NULL;
    }
    memcpy(f->sig, sig, len);
    f->sig_len = len;
    f->kind = kind;
    f->seq = seq;
    f->next = e->dfences;
    e->dfences = f;
    return f;
}

static void dfence_free(orte_wireup_engine_t *e, dfence_t *f)
{
    for (dfence_t **p = &e->dfences; NULL != *p; p = &(*p)->next) {
        if (*p == f) {
            *p = f->next;
            break;
        }
    }
    for (uint32_t i = 0; i < f->num_contribs; ++i) {
        free(f->contribs[i].data.iov_base);
    }
    free(f->contribs);
    free(f->parts);
    free(f->sig);
    free(f);
}

static int dfence_add(dfence_t *f, orte_vpid_t vpid, const void *data, size_t len)
{
    for (uint32_t i = 0; i < f->num_contribs; ++i) {
        if (f->contribs[i].vpid == vpid) {
            return HERD_ERR_EXISTS;
        }
    }
    if (f->num_contribs == f->cap_contribs) {
        uint32_t cap = f->cap_contribs ? 2 * f->cap_contribs : 4;
        dcontrib_t *grown = realloc(f->contribs, cap * sizeof(*grown));
        if (NULL == grown) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        f->contribs = grown;
        f->cap_contribs = cap;
    }
    void *copy = NULL;
    if (len > 0 && NULL == (copy = malloc(len))) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (len > 0) {
        memcpy(copy, data, len);
    }
    f->contribs[f->num_contribs].vpid = vpid;
    f->contribs[f->num_contribs].data.iov_base = copy;
    f->contribs[f->num_contribs].data.iov_len = len;
    f->num_contribs++;
    return HERD_SUCCESS;
}

/* Complete a started direct fence once every participant's contribution is in. */
static void dfence_check(orte_wireup_engine_t *e, dfence_t *f)
{
    if (!f->started || f->num_contribs < f->num_parts) {
        return;
    }
    struct iovec *iov = calloc(f->num_parts, sizeof(*iov));
    bool ok = NULL != iov;
    for (uint32_t p = 0; ok && p < f->num_parts; ++p) {
        ok = false;
        for (uint32_t i = 0; i < f->num_contribs; ++i) {
            if (f->contribs[i].vpid == f->parts[p]) {
                iov[p] = f->contribs[i].data;
                ok = true;
                break;
            }
        }
    }
    if (ok) {
        e->stats.fences++;
        complete_blobs(e, f->cb, f->cbdata, HERD_SUCCESS, iov, f->num_parts, NULL);
    } else {
        complete_blobs(e, f->cb, f->cbdata,
                       NULL == iov ? HERD_ERR_OUT_OF_RESOURCE : HERD_ERR_BAD_PARAM, NULL, 0,
                       "a fence received a contribution from a daemon not taking part");
    }
    free(iov);
    dfence_free(e, f);
}

static int dfence_start(orte_wireup_engine_t *e, uint8_t kind, uint8_t *sig, size_t sig_len,
                        orte_vpid_t *parts, uint32_t num_parts, const void *data, size_t len,
                        orte_wireup_blobs_fn_t cb, void *cbdata)
{
    dsig_t *s = e->dsigs;
    while (NULL != s &&
           !(s->kind == kind && s->sig_len == sig_len && 0 == memcmp(s->sig, sig, sig_len))) {
        s = s->next;
    }
    if (NULL == s) {
        s = calloc(1, sizeof(*s));
        if (NULL == s || NULL == (s->sig = malloc(sig_len > 0 ? sig_len : 1))) {
            free(s);
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        memcpy(s->sig, sig, sig_len);
        s->sig_len = sig_len;
        s->kind = kind;
        s->next = e->dsigs;
        e->dsigs = s;
    }
    uint32_t seq = ++s->count;
    dfence_t *f = get_dfence(e, kind, seq, sig, sig_len);
    if (NULL == f || f->started) {
        return NULL == f ? HERD_ERR_OUT_OF_RESOURCE : HERD_ERR_EXISTS;
    }
    int rc = dfence_add(f, e->config.me, data, len);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    f->started = true;
    f->parts = parts;
    f->num_parts = num_parts;
    f->cb = cb;
    f->cbdata = cbdata;
    opal_buffer_t b;
    opal_buffer_init(&b);
    if (HERD_SUCCESS != (rc = opal_buffer_pack_uint8(&b, ORTE_WIREUP_WIRE_VERSION)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint8(&b, kind)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(&b, seq)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_bytes(&b, sig, sig_len)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_bytes(&b, data, len))) {
        opal_buffer_destruct(&b);
        f->parts = NULL; /* the caller frees them */
        dfence_free(e, f);
        return rc;
    }
    for (uint32_t p = 0; p < num_parts; ++p) {
        if (parts[p] != e->config.me) {
            int src = send_buffer(e, parts[p], ORTE_WIREUP_TAG_DFENCE, &b);
            if (HERD_SUCCESS != src) {
                rc = src; /* the lost callback fails it; keep the others informed */
            }
        }
    }
    opal_buffer_destruct(&b);
    dfence_check(e, f);
    (void) rc;
    return HERD_SUCCESS;
}

int orte_wireup_allgather(orte_wireup_engine_t *e, const orte_wireup_procid_t *procs,
                          size_t num_procs, orte_wireup_kind_t kind, const void *data, size_t len,
                          orte_wireup_blobs_fn_t cb, void *cbdata)
{
    if (NULL == e || NULL == procs || 0 == num_procs || num_procs > ENGINE_MAX_SIG_PROCS ||
        !kind_valid(kind) || NULL == cb || (len > 0 && NULL == data)) {
        return HERD_ERR_BAD_PARAM;
    }
    uint8_t *sig;
    size_t sig_len;
    int rc = make_sig(procs, num_procs, &sig, &sig_len);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    /* a whole namespace: its own collective */
    if (8 == sig_len && ORTE_WIREUP_RANK_WILDCARD == sig_word(sig + 4)) {
        ns_t *ns = find_ns(e, sig_word(sig));
        free(sig);
        if (NULL == ns || ns->my_pos < 0) {
            return HERD_ERR_BAD_PARAM;
        }
        return ns_allgather(e, ns, (uint8_t) kind, false, data, len, cb, cbdata);
    }
    orte_vpid_t *parts;
    uint32_t num_parts;
    rc = sig_daemons(e, sig, sig_len, &parts, &num_parts);
    if (HERD_SUCCESS != rc) {
        free(sig);
        return HERD_ERR_NOT_FOUND == rc ? HERD_ERR_BAD_PARAM : rc;
    }
    bool mine = false;
    for (uint32_t p = 0; p < num_parts; ++p) {
        mine = mine || parts[p] == e->config.me;
    }
    if (!mine) {
        free(sig);
        free(parts);
        return HERD_ERR_BAD_PARAM; /* none of the processes is hosted here */
    }
    rc = dfence_start(e, (uint8_t) kind, sig, sig_len, parts, num_parts, data, len, cb, cbdata);
    free(sig);
    if (HERD_SUCCESS != rc) {
        free(parts);
    }
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* published names */

static name_entry_t *find_name(orte_wireup_engine_t *e, const char *name)
{
    for (name_entry_t *n = e->names; NULL != n; n = n->next) {
        if (0 == strcmp(n->name, name)) {
            return n;
        }
    }
    return NULL;
}

static void name_wait_free(name_wait_t *w)
{
    free_timer(&w->timer);
    free(w->name);
    free(w);
}

static void name_wait_timeout(int fd, short what, void *arg)
{
    name_wait_t *w = arg;
    orte_wireup_engine_t *e = w->engine;
    char error[ORTE_WIREUP_MAX_KEY + 80];
    for (name_wait_t **p = &e->name_waits; NULL != *p; p = &(*p)->next) {
        if (*p == w) {
            *p = w->next;
            break;
        }
    }
    snprintf(error, sizeof(error), "no process published the name '%s' in time", w->name);
    ticket_answer(w->ticket, HERD_ERR_NOT_FOUND, NULL, 0, error);
    name_wait_free(w);
}

/* At the names daemon: one request. */
static void names_serve(orte_wireup_engine_t *e, uint8_t op, const char *name, const void *value,
                        size_t len, int timeout_ms, orte_wireup_ticket_t *ticket)
{
    char error[ORTE_WIREUP_MAX_KEY + 80];
    name_entry_t *n = find_name(e, name);
    if (NAME_OP_PUBLISH == op) {
        if (NULL != n) {
            snprintf(error, sizeof(error), "the name '%s' is already published", name);
            ticket_answer(ticket, HERD_ERR_EXISTS, NULL, 0, error);
            return;
        }
        n = calloc(1, sizeof(*n));
        if (NULL == n || NULL == (n->name = strdup(name)) ||
            (len > 0 && NULL == (n->value = malloc(len)))) {
            if (NULL != n) {
                free(n->name);
            }
            free(n);
            ticket_answer(ticket, HERD_ERR_OUT_OF_RESOURCE, NULL, 0, NULL);
            return;
        }
        if (len > 0) {
            memcpy(n->value, value, len);
        }
        n->len = len;
        n->next = e->names;
        e->names = n;
        ticket_answer(ticket, HERD_SUCCESS, NULL, 0, NULL);
        /* lookups waiting for it */
        name_wait_t **p = &e->name_waits;
        while (NULL != *p) {
            name_wait_t *w = *p;
            if (0 == strcmp(w->name, name)) {
                *p = w->next;
                ticket_answer(w->ticket, HERD_SUCCESS, n->value, n->len, NULL);
                name_wait_free(w);
            } else {
                p = &w->next;
            }
        }
    } else if (NAME_OP_LOOKUP == op) {
        if (NULL != n) {
            ticket_answer(ticket, HERD_SUCCESS, n->value, n->len, NULL);
            return;
        }
        if (timeout_ms <= 0) {
            snprintf(error, sizeof(error), "no process has published the name '%s'", name);
            ticket_answer(ticket, HERD_ERR_NOT_FOUND, NULL, 0, error);
            return;
        }
        name_wait_t *w = calloc(1, sizeof(*w));
        if (NULL == w || NULL == (w->name = strdup(name)) ||
            HERD_SUCCESS != arm_timer(e, name_wait_timeout, w, timeout_ms, &w->timer)) {
            if (NULL != w) {
                free(w->name);
            }
            free(w);
            ticket_answer(ticket, HERD_ERR_OUT_OF_RESOURCE, NULL, 0, NULL);
            return;
        }
        w->engine = e;
        w->ticket = ticket;
        w->next = e->name_waits;
        e->name_waits = w;
    } else {
        if (NULL == n) {
            snprintf(error, sizeof(error), "the name '%s' is not published", name);
            ticket_answer(ticket, HERD_ERR_NOT_FOUND, NULL, 0, error);
            return;
        }
        for (name_entry_t **p = &e->names; NULL != *p; p = &(*p)->next) {
            if (*p == n) {
                *p = n->next;
                break;
            }
        }
        free(n->name);
        free(n->value);
        free(n);
        ticket_answer(ticket, HERD_SUCCESS, NULL, 0, NULL);
    }
}

static void name_req_free(name_req_t *r)
{
    free_timer(&r->timer);
    free(r);
}

static void name_req_finish(orte_wireup_engine_t *e, name_req_t *r, int status, const void *data,
                            size_t len, const char *error)
{
    for (name_req_t **p = &e->name_reqs; NULL != *p; p = &(*p)->next) {
        if (*p == r) {
            *p = r->next;
            break;
        }
    }
    if (NULL != r->value) {
        complete_value(e, r->value, r->cbdata, status, data, len, error);
    } else {
        complete_done(e, r->done, r->cbdata, status, error);
    }
    name_req_free(r);
}

static int name_request(orte_wireup_engine_t *e, uint8_t op, const char *name, const void *value,
                        size_t len, int timeout_ms, orte_wireup_done_fn_t done,
                        orte_wireup_value_fn_t value_cb, void *cbdata)
{
    if (NULL == e || !key_valid(name) || len > ORTE_WIREUP_MAX_VALUE ||
        (len > 0 && NULL == value) || (NULL == done && NULL == value_cb)) {
        return HERD_ERR_BAD_PARAM;
    }
    name_req_t *r = calloc(1, sizeof(*r));
    if (NULL == r) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    r->id = ++e->next_id;
    r->done = done;
    r->value = value_cb;
    r->cbdata = cbdata;
    r->next = e->name_reqs;
    e->name_reqs = r;
    opal_buffer_t b;
    opal_buffer_init(&b);
    int rc;
    if (HERD_SUCCESS != (rc = opal_buffer_pack_uint8(&b, ORTE_WIREUP_WIRE_VERSION)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(&b, r->id)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint8(&b, op)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_string(&b, name)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_bytes(&b, value, len)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_int32(&b, timeout_ms))) {
        opal_buffer_destruct(&b);
        e->name_reqs = r->next;
        free(r);
        return rc;
    }
    if (e->config.names == e->config.me) {
        rc = engine_deliver(e, e->config.me, ORTE_WIREUP_TAG_NAME_REQ, b.base, b.used, false);
    } else {
        rc = send_buffer(e, e->config.names, ORTE_WIREUP_TAG_NAME_REQ, &b);
    }
    opal_buffer_destruct(&b);
    if (HERD_SUCCESS != rc) {
        for (name_req_t **p = &e->name_reqs; NULL != *p; p = &(*p)->next) {
            if (*p == r) {
                *p = r->next;
                break;
            }
        }
        free(r);
    }
    return rc;
}

int orte_wireup_publish(orte_wireup_engine_t *e, const char *name, const void *value, size_t len,
                        orte_wireup_done_fn_t cb, void *cbdata)
{
    return name_request(e, NAME_OP_PUBLISH, name, value, len, 0, cb, NULL, cbdata);
}

int orte_wireup_lookup(orte_wireup_engine_t *e, const char *name, int timeout_ms,
                       orte_wireup_value_fn_t cb, void *cbdata)
{
    return name_request(e, NAME_OP_LOOKUP, name, NULL, 0, timeout_ms < 0 ? 0 : timeout_ms, NULL, cb,
                        cbdata);
}

int orte_wireup_unpublish(orte_wireup_engine_t *e, const char *name, orte_wireup_done_fn_t cb,
                          void *cbdata)
{
    return name_request(e, NAME_OP_UNPUBLISH, name, NULL, 0, 0, cb, NULL, cbdata);
}

/* ------------------------------------------------------------------------------------------ */
/* receiving: one decoder per message type */

static void handle_resp(orte_wireup_engine_t *e, bool names, uint32_t id, int status,
                        const void *data, size_t len, const char *error)
{
    const char *text = (NULL != error && '\0' != *error) ? error : NULL;
    if (names) {
        for (name_req_t *r = e->name_reqs; NULL != r; r = r->next) {
            if (r->id == id) {
                name_req_finish(e, r, status, data, len, text);
                return;
            }
        }
        return;
    }
    for (dm_req_t *r = e->dm_reqs; NULL != r; r = r->next) {
        if (r->id == id) {
            dm_req_finish(e, r, status, data, len, text);
            return;
        }
    }
    /* an answer after its request timed out: nothing waits for it */
}

/* Hold a message for a namespace not known yet. */
static int hold(orte_wireup_engine_t *e, orte_vpid_t src, uint16_t tag, uint32_t nspace,
                const void *data, size_t len)
{
    if (e->num_held >= ENGINE_MAX_HELD_MSGS || e->held_bytes + len > ENGINE_MAX_HELD_BYTES) {
        malformed(e, src, "held (too many messages for unknown namespaces)");
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    held_msg_t *h = malloc(sizeof(*h) + len);
    if (NULL == h) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    h->src = src;
    h->tag = tag;
    h->nspace = nspace;
    h->len = len;
    memcpy(h->data, data, len);
    /* appended, so they are delivered in arrival order */
    h->next = NULL;
    held_msg_t **p = &e->held;
    while (NULL != *p) {
        p = &(*p)->next;
    }
    *p = h;
    e->num_held++;
    e->held_bytes += len;
    return HERD_SUCCESS;
}

static int recv_coll(orte_wireup_engine_t *e, orte_vpid_t src, uint16_t tag, opal_buffer_t *b,
                     const void *data, size_t len, bool redelivery)
{
    uint32_t nspace;
    int rc = opal_buffer_unpack_uint32(b, &nspace);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    ns_t *ns = find_ns(e, nspace);
    if (NULL == ns) {
        return redelivery ? HERD_ERR_NOT_FOUND : hold(e, src, tag, nspace, data, len);
    }
    if (NULL == ns->gc) {
        return HERD_ERR_BAD_PARAM; /* no collective of this namespace runs here */
    }
    orte_vpid_t *pos = bsearch(&src, ns->daemons, ns->num_daemons, sizeof(src), cmp_vpid);
    if (NULL == pos) {
        return HERD_ERR_BAD_PARAM;
    }
    return e->gcm->deliver(ns->gc, (orte_vpid_t) (pos - ns->daemons),
                           (uint16_t) (ORTE_GRPCOMM_TAG_BASE + (tag - ORTE_WIREUP_TAG_COLL)),
                           b->base + b->unpack_offset, opal_buffer_remaining(b));
}

static int recv_dfence(orte_wireup_engine_t *e, orte_vpid_t src, opal_buffer_t *b, const void *data,
                       size_t len)
{
    uint8_t kind;
    uint32_t seq;
    void *sig = NULL, *contribution = NULL;
    size_t sig_len = 0, clen = 0;
    int rc;
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_uint8(b, &kind)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(b, &seq)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_bytes(b, &sig, &sig_len)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_bytes(b, &contribution, &clen))) {
        free(sig);
        return rc;
    }
    if (!kind_valid(kind) || 0 == sig_len || 0 != sig_len % 8 ||
        sig_len / 8 > ENGINE_MAX_SIG_PROCS || 0 == seq) {
        rc = HERD_ERR_UNPACK_FAILURE;
        goto out;
    }
    /* its processes' namespaces must be known here to tell who takes part */
    orte_vpid_t *parts = NULL;
    uint32_t num_parts = 0;
    rc = sig_daemons(e, sig, sig_len, &parts, &num_parts);
    if (HERD_ERR_NOT_FOUND == rc) {
        uint32_t first_unknown = 0;
        for (size_t i = 0; i < sig_len / 8; ++i) {
            if (NULL == find_ns(e, sig_word((uint8_t *) sig + 8 * i))) {
                first_unknown = sig_word((uint8_t *) sig + 8 * i);
                break;
            }
        }
        /* held under the first namespace missing (again, when another was just added) */
        rc = hold(e, src, ORTE_WIREUP_TAG_DFENCE, first_unknown, data, len);
        goto out;
    }
    if (HERD_SUCCESS != rc) {
        goto out;
    }
    bool member = NULL != bsearch(&src, parts, num_parts, sizeof(src), cmp_vpid) &&
                  NULL != bsearch(&e->config.me, parts, num_parts, sizeof(src), cmp_vpid);
    free(parts);
    if (!member) {
        rc = HERD_ERR_BAD_PARAM;
        goto out;
    }
    dfence_t *f = get_dfence(e, kind, seq, sig, sig_len);
    if (NULL == f) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    rc = dfence_add(f, src, contribution, clen);
    if (HERD_SUCCESS == rc) {
        dfence_check(e, f);
    }
out:
    free(sig);
    free(contribution);
    return rc;
}

static int recv_dmodex_req(orte_wireup_engine_t *e, orte_vpid_t src, opal_buffer_t *b,
                           const void *data, size_t len, bool redelivery)
{
    uint32_t id, nspace, rank;
    uint8_t kind;
    int32_t timeout_ms;
    char *key = NULL;
    int rc;
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(b, &id)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(b, &nspace)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(b, &rank)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint8(b, &kind)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_string(b, &key)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_int32(b, &timeout_ms))) {
        free(key);
        return rc;
    }
    if (!kind_valid(kind) || NULL == key || strlen(key) > ORTE_WIREUP_MAX_KEY) {
        free(key);
        return HERD_ERR_UNPACK_FAILURE;
    }
    ns_t *ns = find_ns(e, nspace);
    if (NULL == ns) {
        free(key);
        return redelivery ? HERD_ERR_NOT_FOUND
                          : hold(e, src, ORTE_WIREUP_TAG_DMODEX_REQ, nspace, data, len);
    }
    orte_wireup_ticket_t *t = ticket_new(e, src, id, false);
    if (NULL == t) {
        free(key);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (rank >= ns->num_procs || ns->rank_vpid(ns->ctx, rank) != e->config.me) {
        char error[128];
        snprintf(error, sizeof(error), "rank %u of namespace %u is not hosted by this daemon", rank,
                 nspace);
        orte_wireup_dmodex_reply(t, HERD_ERR_BAD_PARAM, NULL, 0, error);
    } else if (ORTE_WIREUP_KIND_NATIVE == kind || ORTE_WIREUP_KIND_PMI1 == kind) {
        kv_serve(e, ns, rank, key, timeout_ms, t);
    } else if (NULL != e->handlers[kind].fn) {
        e->stats.dmodex_served++;
        e->handlers[kind].fn(e->handlers[kind].ctx, nspace, rank, '\0' != *key ? key : NULL,
                             timeout_ms, t);
    } else {
        char error[128];
        snprintf(error, sizeof(error), "no %s wireup serves rank %u's data on its node",
                 kind_name(kind), rank);
        orte_wireup_dmodex_reply(t, HERD_ERR_NOT_SUPPORTED, NULL, 0, error);
    }
    free(key);
    return HERD_SUCCESS;
}

static int recv_resp(orte_wireup_engine_t *e, bool names, opal_buffer_t *b)
{
    uint32_t id;
    int32_t status;
    void *value = NULL;
    size_t vlen = 0;
    char *error = NULL;
    int rc;
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(b, &id)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_int32(b, &status)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_bytes(b, &value, &vlen)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_string(b, &error))) {
        free(value);
        return rc;
    }
    if (status > 0 || status <= HERD_ERR_MAX || (HERD_SUCCESS != status && vlen > 0)) {
        rc = HERD_ERR_UNPACK_FAILURE;
    } else {
        handle_resp(e, names, id, status, value, vlen, error);
    }
    free(value);
    free(error);
    return rc;
}

static int recv_name_req(orte_wireup_engine_t *e, orte_vpid_t src, opal_buffer_t *b)
{
    uint32_t id;
    uint8_t op;
    char *name = NULL;
    void *value = NULL;
    size_t vlen = 0;
    int32_t timeout_ms;
    int rc;
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(b, &id)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint8(b, &op)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_string(b, &name)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_bytes(b, &value, &vlen)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_int32(b, &timeout_ms))) {
        /* a message cut before its timeout has its value already unpacked */
        free(name);
        free(value);
        return rc;
    }
    if (op < NAME_OP_PUBLISH || op > NAME_OP_UNPUBLISH || !key_valid(name) ||
        vlen > ORTE_WIREUP_MAX_VALUE || e->config.names != e->config.me) {
        rc = HERD_ERR_UNPACK_FAILURE;
    } else {
        orte_wireup_ticket_t *t = ticket_new(e, src, id, true);
        if (NULL == t) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
        } else {
            names_serve(e, op, name, value, vlen, timeout_ms, t);
        }
    }
    free(name);
    free(value);
    return rc;
}

static int engine_deliver(orte_wireup_engine_t *e, orte_vpid_t src, uint16_t tag, const void *data,
                          size_t len, bool redelivery)
{
    opal_buffer_t b;
    uint8_t version = 0;
    int rc;
    opal_buffer_init(&b);
    if (HERD_SUCCESS != (rc = opal_buffer_load(&b, data, len))) {
        return rc;
    }
    if (HERD_SUCCESS != opal_buffer_unpack_uint8(&b, &version)) {
        rc = HERD_ERR_UNPACK_FAILURE;
    } else if (ORTE_WIREUP_WIRE_VERSION != version) {
        rc = HERD_ERR_VERSION_MISMATCH;
    } else if (tag >= ORTE_WIREUP_TAG_COLL && tag < ORTE_WIREUP_TAG_COLL + ORTE_GRPCOMM_NUM_TAGS) {
        rc = recv_coll(e, src, tag, &b, data, len, redelivery);
    } else if (ORTE_WIREUP_TAG_DFENCE == tag) {
        rc = recv_dfence(e, src, &b, data, len);
    } else if (ORTE_WIREUP_TAG_DMODEX_REQ == tag) {
        rc = recv_dmodex_req(e, src, &b, data, len, redelivery);
    } else if (ORTE_WIREUP_TAG_DMODEX_RESP == tag) {
        rc = recv_resp(e, false, &b);
    } else if (ORTE_WIREUP_TAG_NAME_REQ == tag) {
        rc = recv_name_req(e, src, &b);
    } else if (ORTE_WIREUP_TAG_NAME_RESP == tag) {
        rc = recv_resp(e, true, &b);
    } else {
        rc = HERD_ERR_BAD_PARAM;
    }
    opal_buffer_destruct(&b);
    if (HERD_SUCCESS != rc && HERD_ERR_NOT_FOUND != rc) {
        malformed(e, src, HERD_ERR_VERSION_MISMATCH == rc ? "(other version)" : "wireup");
    }
    return rc;
}

int orte_wireup_engine_deliver(orte_wireup_engine_t *e, orte_vpid_t src, uint16_t tag,
                               const void *data, size_t len)
{
    if (NULL == e || (NULL == data && len > 0)) {
        return HERD_ERR_BAD_PARAM;
    }
    return engine_deliver(e, src, tag, data, len, false);
}

/* ------------------------------------------------------------------------------------------ */
/* life cycle */

int orte_wireup_engine_create(const orte_wireup_engine_config_t *config,
                              orte_wireup_engine_t **engine)
{
    if (NULL == config || NULL == config->base || NULL == config->send || NULL == engine ||
        0 == config->radix) {
        return HERD_ERR_BAD_PARAM;
    }
    const orte_grpcomm_module_t *gcm = orte_grpcomm_base_module();
    if (NULL == gcm) {
        return HERD_ERR_NOT_FOUND; /* the grpcomm framework must be open */
    }
    orte_wireup_engine_t *e = calloc(1, sizeof(*e));
    if (NULL == e) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    e->config = *config;
    e->gcm = gcm;
    e->verbose_stream = orte_wireup_base_framework.output;
    int rc = opal_event_timer_create(config->base, false, queue_cb, e, &e->queue_event);
    if (HERD_SUCCESS != rc) {
        free(e);
        return rc;
    }
    *engine = e;
    return HERD_SUCCESS;
}

static void ns_free(orte_wireup_engine_t *e, ns_t *ns)
{
    if (NULL == ns) {
        return;
    }
    if (NULL != ns->gc) {
        e->gcm->destroy(ns->gc);
    }
    for (int k = 0; k < ORTE_WIREUP_NUM_KINDS; ++k) {
        fence_waiter_t *w = ns->kvf[k].waiters;
        while (NULL != w) {
            fence_waiter_t *next = w->next;
            free(w);
            w = next;
        }
    }
    while (NULL != ns->kv_waits) {
        kv_wait_t *w = ns->kv_waits;
        ns->kv_waits = w->next;
        kv_wait_free(w);
    }
    while (NULL != ns->remote_waits) {
        remote_wait_t *w = ns->remote_waits;
        ns->remote_waits = w->next;
        remote_wait_free(w); /* its ticket goes with the ticket list */
    }
    wireup_store_free(ns->store);
    free(ns->daemons);
    free(ns);
}

void orte_wireup_engine_destroy(orte_wireup_engine_t *e)
{
    if (NULL == e) {
        return;
    }
    for (uint32_t i = 0; i < e->num_nss; ++i) {
        ns_free(e, e->nss[i]);
    }
    free(e->nss);
    while (NULL != e->queue_head) {
        completion_t *c = e->queue_head;
        e->queue_head = c->next;
        free(c->error);
        free(c->data);
        free(c->iov);
        free(c);
    }
    opal_event_free(e->queue_event);
    while (NULL != e->held) {
        held_msg_t *h = e->held;
        e->held = h->next;
        free(h);
    }
    while (NULL != e->dm_reqs) {
        dm_req_t *r = e->dm_reqs;
        e->dm_reqs = r->next;
        while (NULL != r->gets) {
            kv_get_t *g = r->gets;
            r->gets = g->next;
            free(g->key);
            free(g);
        }
        dm_req_free(r);
    }
    while (NULL != e->tickets) {
        orte_wireup_ticket_t *t = e->tickets;
        e->tickets = t->next;
        free(t);
    }
    while (NULL != e->dfences) {
        dfence_free(e, e->dfences);
    }
    while (NULL != e->dsigs) {
        dsig_t *s = e->dsigs;
        e->dsigs = s->next;
        free(s->sig);
        free(s);
    }
    while (NULL != e->names) {
        name_entry_t *n = e->names;
        e->names = n->next;
        free(n->name);
        free(n->value);
        free(n);
    }
    while (NULL != e->name_waits) {
        name_wait_t *w = e->name_waits;
        e->name_waits = w->next;
        name_wait_free(w);
    }
    while (NULL != e->name_reqs) {
        name_req_t *r = e->name_reqs;
        e->name_reqs = r->next;
        name_req_free(r);
    }
    free(e);
}

int orte_wireup_engine_add_nspace(orte_wireup_engine_t *e, const orte_wireup_engine_nspace_t *desc)
{
    if (NULL == e || NULL == desc || NULL == desc->rank_vpid || 0 == desc->num_procs ||
        ORTE_WIREUP_OWNER_NSPACE == desc->num_procs || desc->index > (1u << 20) ||
        (desc->num_daemons > 0 && NULL == desc->daemons)) {
        return HERD_ERR_BAD_PARAM;
    }
    if (NULL != find_ns(e, desc->index)) {
        return HERD_ERR_EXISTS;
    }
    if (desc->index >= e->num_nss) {
        uint32_t n = desc->index + 1;
        ns_t **grown = realloc(e->nss, n * sizeof(*grown));
        if (NULL == grown) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        memset(grown + e->num_nss, 0, (n - e->num_nss) * sizeof(*grown));
        e->nss = grown;
        e->num_nss = n;
    }
    ns_t *ns = calloc(1, sizeof(*ns));
    if (NULL == ns || NULL == (ns->store = wireup_store_create()) ||
        NULL == (ns->daemons = malloc((desc->num_daemons > 0 ? desc->num_daemons : 1) *
                                      sizeof(*ns->daemons)))) {
        if (NULL != ns) {
            wireup_store_free(ns->store);
        }
        free(ns);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    ns->engine = e;
    ns->index = desc->index;
    ns->num_procs = desc->num_procs;
    ns->num_local = desc->num_local;
    ns->rank_vpid = desc->rank_vpid;
    ns->ctx = desc->ctx;
    memcpy(ns->daemons, desc->daemons, desc->num_daemons * sizeof(*ns->daemons));
    qsort(ns->daemons, desc->num_daemons, sizeof(*ns->daemons), cmp_vpid);
    ns->num_daemons = desc->num_daemons;
    ns->my_pos = -1;
    for (uint32_t i = 0; i < ns->num_daemons; ++i) {
        if (i > 0 && ns->daemons[i] == ns->daemons[i - 1]) {
            ns_free(e, ns);
            return HERD_ERR_BAD_PARAM;
        }
        if (ns->daemons[i] == e->config.me) {
            ns->my_pos = i;
        }
    }
    if (ns->my_pos >= 0 && ns->num_daemons > 1) {
        orte_grpcomm_transport_t t = {.me = (orte_vpid_t) ns->my_pos,
                                      .num_daemons = ns->num_daemons,
                                      .radix = e->config.radix,
                                      .send = coll_send,
                                      .ctx = ns};
        int rc = e->gcm->create(&t, &ns->gc);
        if (HERD_SUCCESS != rc) {
            ns_free(e, ns);
            return rc;
        }
    }
    ns->added = true;
    e->nss[desc->index] = ns;
    /* what arrived for it before it was known, in arrival order */
    held_msg_t **p = &e->held;
    while (NULL != *p) {
        held_msg_t *h = *p;
        if (h->nspace == desc->index) {
            *p = h->next;
            e->num_held--;
            e->held_bytes -= h->len;
            engine_deliver(e, h->src, h->tag, h->data, h->len, true);
            free(h);
        } else {
            p = &h->next;
        }
    }
    return HERD_SUCCESS;
}

void orte_wireup_engine_lost(orte_wireup_engine_t *e, orte_vpid_t vpid)
{
    char error[160];
    if (NULL == e) {
        return;
    }
    for (uint32_t i = 0; i < e->num_nss; ++i) {
        ns_t *ns = find_ns(e, i);
        if (NULL != ns && NULL != ns->gc &&
            NULL != bsearch(&vpid, ns->daemons, ns->num_daemons, sizeof(vpid), cmp_vpid)) {
            e->gcm->abort_all(ns->gc, HERD_ERR_UNREACH);
        }
    }
    dfence_t *f = e->dfences;
    while (NULL != f) {
        dfence_t *next = f->next;
        if (f->started && NULL != bsearch(&vpid, f->parts, f->num_parts, sizeof(vpid), cmp_vpid)) {
            complete_blobs(e, f->cb, f->cbdata, HERD_ERR_UNREACH, NULL, 0,
                           "a session daemon taking part in the fence is gone");
            dfence_free(e, f);
        }
        f = next;
    }
    dm_req_t *r = e->dm_reqs;
    while (NULL != r) {
        dm_req_t *next = r->next;
        if (r->target == vpid) {
            snprintf(error, sizeof(error),
                     "the session daemon hosting rank %u of namespace %u is gone", r->rank,
                     r->nspace);
            dm_req_finish(e, r, HERD_ERR_UNREACH, NULL, 0, error);
        }
        r = next;
    }
    if (vpid == e->config.names) {
        while (NULL != e->name_reqs) {
            name_req_finish(e, e->name_reqs, HERD_ERR_UNREACH, NULL, 0,
                            "the session daemon keeping published names is gone");
        }
    }
    for (orte_wireup_ticket_t *t = e->tickets; NULL != t; t = t->next) {
        if (t->src == vpid) {
            t->orphaned = true;
        }
    }
}

void orte_wireup_engine_get_stats(const orte_wireup_engine_t *e, orte_wireup_engine_stats_t *stats)
{
    *stats = e->stats;
    stats->cached_procs = 0;
    for (uint32_t i = 0; i < e->num_nss; ++i) {
        const ns_t *ns = find_ns(e, i);
        if (NULL != ns) {
            stats->cached_procs += wireup_store_num_remote_owners(ns->store);
        }
    }
}
