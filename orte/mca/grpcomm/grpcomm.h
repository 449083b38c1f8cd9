/* SPDX-License-Identifier: BSD-3-Clause */
/* The grpcomm framework: collectives among the daemons of a DVM (broadcast, barrier,
 * allgather), over any transport that can send a tagged message to a daemon. */
#ifndef ORTE_MCA_GRPCOMM_H
#define ORTE_MCA_GRPCOMM_H

#include <stddef.h>
#include <stdint.h>

#include "opal/mca/mca.h"
#include "orte/types.h"

#define OPAL_MCA_grpcomm_INTERFACE_VERSION 2u

/* The transport tags grpcomm sends with; the transport hands every message carrying one of them
 * to the module's deliver(). One tag per message type (docs/grpcomm.md has the formats). */
#define ORTE_GRPCOMM_TAG_BASE            64u
#define ORTE_GRPCOMM_TAG_XCAST           (ORTE_GRPCOMM_TAG_BASE + 0u) /* down a broadcast tree */
#define ORTE_GRPCOMM_TAG_GATHER          (ORTE_GRPCOMM_TAG_BASE + 1u) /* up the radix tree */
#define ORTE_GRPCOMM_TAG_ALLGATHER_ROUND (ORTE_GRPCOMM_TAG_BASE + 2u) /* one Bruck round */
#define ORTE_GRPCOMM_TAG_BARRIER_ROUND   (ORTE_GRPCOMM_TAG_BASE + 3u) /* one dissemination round */
#define ORTE_GRPCOMM_NUM_TAGS            4u

typedef enum orte_grpcomm_op {
    ORTE_GRPCOMM_OP_XCAST = 1,
    ORTE_GRPCOMM_OP_BARRIER = 2,
    ORTE_GRPCOMM_OP_ALLGATHER = 3,
} orte_grpcomm_op_t;

/* One daemon's contribution to an allgather. data is NULL when len is 0. */
typedef struct orte_grpcomm_blob {
    const void *data;
    size_t len;
} orte_grpcomm_blob_t;

/* What a completed collective produced; everything it points to is valid only during the
 * callback (copy what you keep). On failure only id and op are set. */
typedef struct orte_grpcomm_result {
    uint32_t id;
    orte_grpcomm_op_t op;
    const void *data; /* xcast: the root's payload (NULL when len is 0) */
    size_t len;
    const orte_grpcomm_blob_t *blobs; /* allgather: num_blobs entries, indexed by vpid */
    uint32_t num_blobs;
} orte_grpcomm_result_t;

/* Called exactly once per collective whose start returned HERD_SUCCESS: status HERD_SUCCESS
 * with the result, or an error (a rejected message, a failed send, abort_all). It may run
 * before the starting call returns, and may start other collectives, but must not destroy the
 * instance. */
typedef void (*orte_grpcomm_cbfunc_t)(int status, const orte_grpcomm_result_t *result,
                                      void *cbdata);

/* Sends len bytes to daemon dst (never the sender itself; not necessarily a tree neighbour:
 * the transport routes). The transport copies data before returning and must not call
 * deliver() on the sending instance from inside send. */
typedef int (*orte_grpcomm_send_fn_t)(void *ctx, orte_vpid_t dst, uint16_t tag, const void *data,
                                      size_t len);

/* What an instance needs to know about the DVM and how to reach the other daemons. Every daemon
 * of the DVM must use the same num_daemons and radix (messages carry num_daemons and are
 * rejected when it differs). */
typedef struct orte_grpcomm_transport {
    orte_vpid_t me;
    uint32_t num_daemons;
    uint32_t radix; /* of the DVM's radix tree (orte/util/radix.h); at least 1 */
    orte_grpcomm_send_fn_t send;
    void *ctx;
} orte_grpcomm_transport_t;

/* One daemon's collective engine. Opaque; tests run many in one process. */
typedef struct orte_grpcomm orte_grpcomm_t;

/* A collective is named by an id the caller chooses; every daemon starts it with the same id
 * and operation. Collectives with different ids never mix, whatever their operations, and
 * any number may be in flight. Messages for an id not yet started here are held until it is.
 * Use a fresh id for each collective (a counter): an id may only be used again once the
 * previous collective with that id has completed on every daemon.
 *
 * Starting returns HERD_SUCCESS (the callback will run exactly once) or, with no callback ever,
 * HERD_ERR_BAD_PARAM (bad arguments), HERD_ERR_EXISTS (the id is already started here) or
 * HERD_ERR_OUT_OF_RESOURCE. */
struct orte_grpcomm_module {
    const char *name; /* the component's name: "tree", "bruck" */

    /* A new instance for daemon transport->me; *instance set only on success.
     * HERD_ERR_BAD_PARAM when the transport description is invalid. */
    int (*create)(const orte_grpcomm_transport_t *transport, orte_grpcomm_t **instance);
    /* Frees the instance and everything pending in it, without running callbacks (call
     * abort_all() first for that). NULL is ignored. */
    void (*destroy)(orte_grpcomm_t *instance);

    /* Broadcast from daemon 0: the root passes data (copied before the call returns), the
     * others pass NULL/0 (ignored); every daemon's callback gets the root's data. */
    int (*xcast)(orte_grpcomm_t *instance, uint32_t id, const void *data, size_t len,
                 orte_grpcomm_cbfunc_t cb, void *cbdata);
    /* Completes on a daemon only after every daemon has started it. */
    int (*barrier)(orte_grpcomm_t *instance, uint32_t id, orte_grpcomm_cbfunc_t cb, void *cbdata);
    /* Every daemon contributes len bytes (len may differ between daemons, and be 0); the
     * callback gets all num_daemons contributions indexed by vpid. data is copied. */
    int (*allgather)(orte_grpcomm_t *instance, uint32_t id, const void *data, size_t len,
                     orte_grpcomm_cbfunc_t cb, void *cbdata);

    /* The transport hands over a message received from daemon src with a grpcomm tag (data is
     * copied). HERD_SUCCESS when accepted. A malformed or unexpected message is rejected: the
     * reason is logged naming the sender, the collective it names (if it can be read) fails,
     * and an error is returned (HERD_ERR_VERSION_MISMATCH, HERD_ERR_UNPACK_FAILURE,
     * HERD_ERR_BAD_PARAM, or HERD_ERR_OUT_OF_RESOURCE when too many collectives are held). */
    int (*deliver)(orte_grpcomm_t *instance, orte_vpid_t src, uint16_t tag, const void *data,
                   size_t len);

    /* Fails every collective started here and not complete with status (an error, e.g.
     * HERD_ERR_UNREACH when a daemon is lost), through its callback; collectives known only
     * from held messages fail as soon as they are started. Later ids work as usual.
     * HERD_ERR_BAD_PARAM when status is not an error. */
    int (*abort_all)(orte_grpcomm_t *instance, int status);

    /* Daemon vpid (not this one) is gone for good: broadcasts go around it from now on (its
     * parent in the broadcast tree sends to its children), and a broadcast may come from any
     * ancestor. A barrier or an allgather started after a loss fails with HERD_ERR_UNREACH
     * (they count every daemon in). */
    int (*lost)(orte_grpcomm_t *instance, orte_vpid_t vpid);
    /* Daemon vpid, lost, is back (it rejoined the DVM) as a leaf: broadcasts reach it again
     * (from its nearest live ancestor), while its old children keep getting them around it.
     * vpid == this daemon: it is that rejoined leaf and forwards no broadcast. A later lost()
     * of vpid undoes it. May be NULL. */
    int (*rejoined)(orte_grpcomm_t *instance, orte_vpid_t vpid);
    /* The communication rounds op takes among num_daemons daemons: the longest chain of
     * messages each of which is sent only after the previous one arrived. *rounds set only
     * on success. */
    int (*rounds)(orte_grpcomm_op_t op, uint32_t num_daemons, uint32_t radix, uint32_t *rounds);
};
typedef struct orte_grpcomm_module orte_grpcomm_module_t;

OPAL_EXPORT extern opal_mca_framework_t orte_grpcomm_base_framework;

/* Open the framework and select one component (highest priority: grpcomm_tree_priority,
 * grpcomm_bruck_priority; HERD_MCA_grpcomm=bruck chooses). HERD_ERR_NOT_FOUND when no
 * component is available. Opening an open framework does nothing. */
OPAL_EXPORT int orte_grpcomm_base_open(void);
OPAL_EXPORT void orte_grpcomm_base_close(void);
/* The selected module, or NULL when the framework is not open. */
OPAL_EXPORT const orte_grpcomm_module_t *orte_grpcomm_base_module(void);
/* The selected module's rounds() (for the DVM benchmark's "tree rounds" line).
 * HERD_ERR_NOT_FOUND when the framework is not open. */
OPAL_EXPORT int orte_grpcomm_base_rounds(orte_grpcomm_op_t op, uint32_t num_daemons, uint32_t radix,
                                         uint32_t *rounds);
/* "xcast", "barrier", "allgather", or "unknown". */
OPAL_EXPORT const char *orte_grpcomm_op_name(orte_grpcomm_op_t op);

#endif /* ORTE_MCA_GRPCOMM_H */
