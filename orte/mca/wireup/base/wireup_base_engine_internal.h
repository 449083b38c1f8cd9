/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the files of the wireup engine (wireup_base_engine.c, _complete.c, _kv.c, _modex.c,
 * _coll.c, _fence.c, _names.c); not for the host (base/base.h) nor for modules (wireup.h). */
#ifndef ORTE_MCA_WIREUP_BASE_ENGINE_INTERNAL_H
#define ORTE_MCA_WIREUP_BASE_ENGINE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "opal/dss/buffer.h"
#include "opal/event/event.h"
#include "orte/mca/grpcomm/grpcomm.h"
#include "orte/mca/wireup/base/base.h"
#include "orte/mca/wireup/base/wireup_base_store.h"
#include "orte/mca/wireup/wireup.h"

/* ------------------------------------------------------------------------------------------ */
/* the engine's state; each service's records are private to its file */

/* A kv fence of one kind in one namespace: the local processes that entered (coll.c). */
typedef struct wireup_kv_fence {
    struct wireup_fence_waiter *waiters;
    uint32_t entered;
    bool collect;
    bool running; /* contributed; waiting for the other daemons */
} wireup_kv_fence_t;

/* A namespace as the engine knows it. */
typedef struct wireup_ns {
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
    wireup_kv_fence_t kvf[ORTE_WIREUP_NUM_KINDS];
    struct wireup_kv_wait *kv_waits;         /* local gets waiting for a commit (kv.c) */
    struct wireup_remote_wait *remote_waits; /* other daemons' requests waiting (kv.c) */
    orte_wireup_engine_t *engine;
} wireup_ns_t;

/* A module's direct-modex handler for its kind. */
typedef struct wireup_dmodex_handler {
    orte_wireup_dmodex_handler_t fn;
    void *ctx;
} wireup_dmodex_handler_t;

struct orte_wireup_engine {
    orte_wireup_engine_config_t config;
    const orte_grpcomm_module_t *gcm;
    wireup_ns_t **nss; /* by index; NULL or not added yet: unknown */
    uint32_t num_nss;
    /* the completion queue (complete.c) */
    struct wireup_completion *queue_head;
    struct wireup_completion *queue_tail;
    opal_event_t *queue_event;
    bool queue_armed;
    /* messages for namespaces not known yet (engine.c) */
    struct wireup_held_msg *held;
    uint32_t num_held;
    size_t held_bytes;
    /* direct modex (modex.c); next_id numbers name requests too */
    wireup_dmodex_handler_t handlers[ORTE_WIREUP_NUM_KINDS];
    uint32_t next_id;
    struct wireup_dm_req *dm_reqs;
    orte_wireup_ticket_t *tickets;
    /* direct fences (fence.c) */
    struct wireup_dfence *dfences;
    struct wireup_dsig *dsigs;
    /* published names (names.c) */
    struct wireup_name_entry *names;
    struct wireup_name_wait *name_waits;
    struct wireup_name_req *name_reqs;
    orte_wireup_engine_stats_t stats;
    int verbose_stream;
};

/* ------------------------------------------------------------------------------------------ */
/* small helpers every service uses (inline: they sit on every message's path) */

static inline wireup_ns_t *wireup_engine_find_ns(const orte_wireup_engine_t *e, uint32_t index)
{
    return (index < e->num_nss && NULL != e->nss[index] && e->nss[index]->added) ? e->nss[index]
                                                                                 : NULL;
}

static inline int wireup_engine_effective_timeout(const orte_wireup_engine_t *e, int timeout_ms)
{
    return timeout_ms < 0 ? e->config.get_timeout_ms : timeout_ms;
}

static inline bool wireup_engine_kind_valid(int kind)
{
    return kind >= ORTE_WIREUP_KIND_NATIVE && kind < ORTE_WIREUP_NUM_KINDS;
}

static inline bool wireup_engine_key_valid(const char *key)
{
    return NULL != key && '\0' != *key && strlen(key) <= ORTE_WIREUP_MAX_KEY;
}

static inline void wireup_engine_free_timer(opal_event_t **timer)
{
    if (NULL != *timer) {
        opal_event_free(*timer);
        *timer = NULL;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* dispatch and life cycle (wireup_base_engine.c) */

/* Decode one message and hand it to its service. redelivery: a held message delivered again
 * now that its namespace is known (it is not held a second time). */
int wireup_engine_deliver(orte_wireup_engine_t *e, orte_vpid_t src, uint16_t tag, const void *data,
                          size_t len, bool redelivery);
/* Hold a message for a namespace not known yet. */
int wireup_engine_hold(orte_wireup_engine_t *e, orte_vpid_t src, uint16_t tag, uint32_t nspace,
                       const void *data, size_t len);
int wireup_engine_send_buffer(orte_wireup_engine_t *e, orte_vpid_t dst, uint16_t tag,
                              opal_buffer_t *b);
int wireup_engine_arm_timer(orte_wireup_engine_t *e, opal_event_cb_t cb, void *arg, int ms,
                            opal_event_t **timer);
const char *wireup_engine_kind_name(uint8_t kind);
/* Count a dropped message and say so at wireup_base_verbose 1. */
void wireup_engine_malformed(orte_wireup_engine_t *e, orte_vpid_t src, const char *what);
/* qsort/bsearch order of vpids. */
int wireup_engine_cmp_vpid(const void *a, const void *b);

/* ------------------------------------------------------------------------------------------ */
/* completion queue (wireup_base_complete.c): callbacks run from the loop, never inside the
 * starting call. Out of memory leaves the caller waiting: nothing better exists. */

int wireup_engine_queue_create(orte_wireup_engine_t *e);
/* Drop what is queued without running it, and the queue's event. */
void wireup_engine_queue_free(orte_wireup_engine_t *e);
void wireup_engine_complete_done(orte_wireup_engine_t *e, orte_wireup_done_fn_t cb, void *cbdata,
                                 int status, const char *error);
/* data is copied. */
void wireup_engine_complete_value(orte_wireup_engine_t *e, orte_wireup_value_fn_t cb, void *cbdata,
                                  int status, const void *data, size_t len, const char *error);
/* blobs are copied. */
void wireup_engine_complete_blobs(orte_wireup_engine_t *e, orte_wireup_blobs_fn_t cb, void *cbdata,
                                  int status, const struct iovec *blobs, uint32_t n,
                                  const char *error);

/* ------------------------------------------------------------------------------------------ */
/* key-value store (wireup_base_kv.c) */

/* Another daemon asks for a local process's keys: answer now, or once it commits them. */
void wireup_engine_kv_serve(orte_wireup_engine_t *e, wireup_ns_t *ns, uint32_t rank,
                            const char *key, int timeout_ms, orte_wireup_ticket_t *ticket);
/* Free what waits in the namespace's store, without answering. */
void wireup_engine_kv_ns_free(wireup_ns_t *ns);

/* ------------------------------------------------------------------------------------------ */
/* direct modex (wireup_base_modex.c) */

/* A get of a remote owner's key: joins a request already on its way for it, or sends one.
 * timeout_ms is already the effective one. */
int wireup_engine_dmodex_get(orte_wireup_engine_t *e, wireup_ns_t *ns, uint32_t owner,
                             const char *key, int timeout_ms, orte_wireup_value_fn_t cb,
                             void *cbdata);
/* A request received from src (a direct modex, or a name request at the names daemon), to be
 * answered once with wireup_engine_ticket_answer. */
orte_wireup_ticket_t *wireup_engine_ticket_new(orte_wireup_engine_t *e, orte_vpid_t src,
                                               uint32_t id, bool names);
void wireup_engine_ticket_answer(orte_wireup_ticket_t *t, int status, const void *data, size_t len,
                                 const char *error);
int wireup_engine_recv_dmodex_req(orte_wireup_engine_t *e, orte_vpid_t src, opal_buffer_t *b,
                                  const void *data, size_t len, bool redelivery);
/* The answer to a direct modex request or (names) a name request. */
int wireup_engine_recv_resp(orte_wireup_engine_t *e, bool names, opal_buffer_t *b);
/* Free the requests sent and the tickets held, without running callbacks. */
void wireup_engine_dmodex_free(orte_wireup_engine_t *e);
/* vpid is gone: the requests sent to it fail, its tickets' answers are dropped. */
void wireup_engine_dmodex_lost(orte_wireup_engine_t *e, orte_vpid_t vpid);

/* ------------------------------------------------------------------------------------------ */
/* namespace collectives (wireup_base_coll.c): grpcomm among the daemons hosting a namespace */

/* The namespace's grpcomm instance (this daemon among several hosting it). */
int wireup_engine_coll_create(orte_wireup_engine_t *e, wireup_ns_t *ns);
int wireup_engine_recv_coll(orte_wireup_engine_t *e, orte_vpid_t src, uint16_t tag,
                            opal_buffer_t *b, const void *data, size_t len, bool redelivery);
/* Start an allgather of the namespace's daemons (this one hosting some of its processes): a kv
 * fence's (kv: the blobs go into the store and release the fence's waiters) or a raw one. */
int wireup_engine_ns_allgather(orte_wireup_engine_t *e, wireup_ns_t *ns, uint8_t kind, bool kv,
                               const void *data, size_t len, orte_wireup_blobs_fn_t cb,
                               void *cbdata);
/* Free the namespace's collective and kv fence waiters, without callbacks. */
void wireup_engine_coll_ns_free(orte_wireup_engine_t *e, wireup_ns_t *ns);
/* vpid is gone: the collectives of the namespaces it hosts fail. */
void wireup_engine_coll_lost(orte_wireup_engine_t *e, orte_vpid_t vpid);

/* ------------------------------------------------------------------------------------------ */
/* direct fences (wireup_base_fence.c) */

int wireup_engine_recv_dfence(orte_wireup_engine_t *e, orte_vpid_t src, opal_buffer_t *b,
                              const void *data, size_t len);
/* Free the direct fences and their signatures' counts, without callbacks. */
void wireup_engine_dfences_free(orte_wireup_engine_t *e);
/* vpid is gone: the direct fences it takes part in fail. */
void wireup_engine_dfences_lost(orte_wireup_engine_t *e, orte_vpid_t vpid);

/* ------------------------------------------------------------------------------------------ */
/* published names (wireup_base_names.c) */

int wireup_engine_recv_name_req(orte_wireup_engine_t *e, orte_vpid_t src, opal_buffer_t *b);
/* The names daemon answered request id. */
void wireup_engine_names_answered(orte_wireup_engine_t *e, uint32_t id, int status,
                                  const void *data, size_t len, const char *error);
void wireup_engine_names_free(orte_wireup_engine_t *e);
/* vpid is gone: when it kept the names, the requests sent to it fail. */
void wireup_engine_names_lost(orte_wireup_engine_t *e, orte_vpid_t vpid);

#endif /* ORTE_MCA_WIREUP_BASE_ENGINE_INTERNAL_H */
