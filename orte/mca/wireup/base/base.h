/* SPDX-License-Identifier: BSD-3-Clause */
/* The wireup engine as its host (the session daemon, or a test) drives it: creating it,
 * describing namespaces, handing it the messages of its tags, and telling it about lost
 * daemons. Modules use the functions of wireup.h instead. */
#ifndef ORTE_MCA_WIREUP_BASE_H
#define ORTE_MCA_WIREUP_BASE_H

#include "orte/mca/wireup/wireup.h"

/* The job overlay's tags the engine sends and receives with (after the iof's). */
#define ORTE_WIREUP_TAG_BASE 32u
enum {
    ORTE_WIREUP_TAG_COLL = ORTE_WIREUP_TAG_BASE,       /* + grpcomm tag - ORTE_GRPCOMM_TAG_BASE */
    ORTE_WIREUP_TAG_DFENCE = ORTE_WIREUP_TAG_BASE + 4, /* a direct fence's contribution */
    ORTE_WIREUP_TAG_DMODEX_REQ = ORTE_WIREUP_TAG_BASE + 5,  /* a request for a process's data */
    ORTE_WIREUP_TAG_DMODEX_RESP = ORTE_WIREUP_TAG_BASE + 6, /* its answer */
    ORTE_WIREUP_TAG_NAME_REQ = ORTE_WIREUP_TAG_BASE + 7,    /* publish/lookup/unpublish */
    ORTE_WIREUP_TAG_NAME_RESP = ORTE_WIREUP_TAG_BASE + 8,
    ORTE_WIREUP_TAG_END = ORTE_WIREUP_TAG_BASE + 9, /* one past the last */
};
/* Version of the messages above; every one starts with it. */
#define ORTE_WIREUP_WIRE_VERSION 1u

typedef struct orte_wireup_engine_config {
    opal_event_base_t *base;
    orte_vpid_t me;     /* this daemon's vpid in the job overlay */
    uint32_t radix;     /* of the fences' trees */
    orte_vpid_t names;  /* the daemon keeping published names (the shepherd) */
    int get_timeout_ms; /* default wait of gets and lookups */
    /* Send to another daemon of the job (routed by the overlay). Copies before returning. */
    int (*send)(void *ctx, orte_vpid_t dst, uint16_t tag, const struct iovec *iov, int iovcnt);
    void *ctx;
} orte_wireup_engine_config_t;

OPAL_EXPORT int orte_wireup_engine_create(const orte_wireup_engine_config_t *config,
                                          orte_wireup_engine_t **engine);
/* Frees the engine and everything still waiting in it, without running callbacks: finalize the
 * modules first (they own what their callbacks would touch). NULL does nothing. */
OPAL_EXPORT void orte_wireup_engine_destroy(orte_wireup_engine_t *engine);

/* A namespace: daemons (ascending vpids) host its processes; rank_vpid tells which daemon hosts
 * a rank; num_local of them are here. Messages for a namespace not added yet are held. */
typedef struct orte_wireup_engine_nspace {
    uint32_t index;
    uint32_t num_procs;
    const orte_vpid_t *daemons; /* copied */
    uint32_t num_daemons;
    uint32_t num_local;
    orte_vpid_t (*rank_vpid)(void *ctx, uint32_t rank);
    void *ctx;
} orte_wireup_engine_nspace_t;
OPAL_EXPORT int orte_wireup_engine_add_nspace(orte_wireup_engine_t *engine,
                                              const orte_wireup_engine_nspace_t *ns);

/* A message with one of the engine's tags. Malformed messages are dropped and counted (never a
 * crash); HERD_ERR_UNPACK_FAILURE or HERD_ERR_VERSION_MISMATCH then. */
OPAL_EXPORT int orte_wireup_engine_deliver(orte_wireup_engine_t *engine, orte_vpid_t src,
                                           uint16_t tag, const void *data, size_t len);
/* A daemon of the job is gone: what waits on it fails with HERD_ERR_UNREACH. */
OPAL_EXPORT void orte_wireup_engine_lost(orte_wireup_engine_t *engine, orte_vpid_t vpid);

typedef struct orte_wireup_engine_stats {
    uint64_t fences;        /* completed here */
    uint64_t dmodex_sent;   /* requests this daemon sent */
    uint64_t dmodex_served; /* requests it answered */
    uint64_t cached_procs;  /* remote processes whose data is kept here */
    uint64_t malformed;     /* messages dropped */
} orte_wireup_engine_stats_t;
OPAL_EXPORT void orte_wireup_engine_get_stats(const orte_wireup_engine_t *engine,
                                              orte_wireup_engine_stats_t *stats);

#endif /* ORTE_MCA_WIREUP_BASE_H */
