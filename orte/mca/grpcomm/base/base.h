/* SPDX-License-Identifier: BSD-3-Clause */
/* What the grpcomm base shares with its components and tests: the instance and collective
 * records, the wire format, and the engine every algorithm plugs into. */
#ifndef ORTE_MCA_GRPCOMM_BASE_H
#define ORTE_MCA_GRPCOMM_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/dss/buffer.h"
#include "orte/mca/grpcomm/grpcomm.h"

#define ORTE_GRPCOMM_BASE_HELP_FILE "help-grpcomm-base.txt"

/* Wire format of every grpcomm message; a message of another version is refused. */
#define ORTE_GRPCOMM_WIRE_VERSION 1u

/* Which algorithm sent a message: daemons running different components must not mix. */
#define ORTE_GRPCOMM_ALGORITHM_TREE  1u
#define ORTE_GRPCOMM_ALGORITHM_BRUCK 2u

/* Collectives known only from messages (not started here) that one instance holds at most: a
 * peer sending garbage ids must not make a daemon grow without bound. */
#define ORTE_GRPCOMM_MAX_UNSTARTED 1024u

/* Room for a rejection reason, with vpids and counts in it. */
#define ORTE_GRPCOMM_REASON_SIZE 256

/* The header every message starts with. */
typedef struct orte_grpcomm_header {
    uint8_t version;
    uint8_t algorithm;    /* ORTE_GRPCOMM_ALGORITHM_* */
    uint8_t op;           /* orte_grpcomm_op_t of the collective */
    uint32_t id;          /* the collective */
    uint32_t num_daemons; /* as the sender counts them */
    uint32_t round;       /* round of a round-based algorithm, else 0 */
} orte_grpcomm_header_t;

/* A daemon's blob inside a message or a collective (data owned, NULL when len is 0). */
typedef struct orte_grpcomm_entry {
    orte_vpid_t vpid;
    void *data;
    size_t len;
} orte_grpcomm_entry_t;

/* A decoded message, held until its collective can use it. */
typedef struct orte_grpcomm_msg {
    struct orte_grpcomm_msg *next;
    orte_vpid_t src;
    uint16_t tag;
    orte_grpcomm_header_t header;
    void *payload; /* xcast: the root's data */
    size_t payload_len;
    uint32_t count;                /* barrier gather: daemons accounted for; blob sets: entries */
    orte_grpcomm_entry_t *entries; /* blob sets, NULL otherwise */
    void *raw; /* the bytes as received, forwarded unchanged down a broadcast tree */
    size_t raw_len;
} orte_grpcomm_msg_t;

/* One collective: started here, or only known from messages that arrived first. */
typedef struct orte_grpcomm_coll {
    struct orte_grpcomm_coll *next;
    uint32_t id;
    orte_grpcomm_op_t op;
    bool started;  /* the local call was made */
    bool finished; /* completed or failed: the base runs the callback and frees it */
    int status;    /* why it failed (also for a collective failed before it started) */
    orte_grpcomm_cbfunc_t cb;
    void *cbdata;
    orte_grpcomm_msg_t *held; /* in arrival order */
    /* results */
    const void *payload; /* xcast: points into payload_owned or at the root's argument */
    size_t payload_len;
    void *payload_owned;
    orte_grpcomm_entry_t *blobs; /* allgather: num_daemons entries, indexed by vpid */
    bool *present;               /* allgather: which blobs are in */
    /* algorithm progress */
    bool *heard;      /* per vpid: a message of this collective came from it (tree gather) */
    uint32_t waiting; /* tree: children still to contribute */
    bool contributed; /* tree: sent up (the root: released) */
    uint32_t round;   /* round-based: the next round to receive */
    uint32_t sent;    /* round-based: rounds sent so far */
} orte_grpcomm_coll_t;

/* What a component plugs into the base engine. The base does the bookkeeping (ids, held
 * messages, callbacks, failures) and the xcast of user data along the broadcast tree init()
 * sets up; the component does barrier and allgather. */
typedef struct orte_grpcomm_algorithm {
    const char *name;
    uint8_t wire_id; /* ORTE_GRPCOMM_ALGORITHM_* */
    /* Checks the transport and sets the instance's broadcast tree (xcast_parent, xcast_children).
     * An error is reported by it. */
    int (*init)(orte_grpcomm_t *g);
    /* The broadcast tree of any daemon v: its parent (ORTE_VPID_INVALID for the root) and its
     * children (at most room), so that the base can route around lost daemons. */
    orte_vpid_t (*parent_of)(const orte_grpcomm_t *g, orte_vpid_t v);
    uint32_t (*children_of)(const orte_grpcomm_t *g, orte_vpid_t v, orte_vpid_t *children,
                            uint32_t room);
    /* Stateless: whether a decoded message (barrier or allgather) is one this daemon can ever
     * receive (expected sender for its round, expected counts). Fills reason on error. */
    int (*check)(const orte_grpcomm_t *g, const orte_grpcomm_msg_t *msg, char *reason, size_t size);
    /* Starts a barrier or allgather (blobs[me] is already in for an allgather). */
    int (*start)(orte_grpcomm_t *g, orte_grpcomm_coll_t *coll);
    /* Uses a held message of a started barrier or allgather: HERD_SUCCESS (consumed; the
     * entries it takes are set to NULL), HERD_ERR_TAKE_NEXT (not yet: keep holding it), or an
     * error with a reason (the collective fails). */
    int (*consume)(orte_grpcomm_t *g, orte_grpcomm_coll_t *coll, orte_grpcomm_msg_t *msg,
                   char *reason, size_t size);
} orte_grpcomm_algorithm_t;

struct orte_grpcomm {
    const orte_grpcomm_module_t *module;
    const orte_grpcomm_algorithm_t *algorithm;
    orte_vpid_t me;
    uint32_t num_daemons;
    uint32_t radix;
    orte_grpcomm_send_fn_t send;
    void *ctx;
    /* the broadcast tree, set by the algorithm's init() */
    orte_vpid_t xcast_parent; /* ORTE_VPID_INVALID at the root */
    orte_vpid_t *xcast_children;
    uint32_t num_xcast_children;
    orte_grpcomm_coll_t *colls;
    uint32_t num_unstarted;
    uint8_t *down; /* bitmap by vpid of the daemons lost (NULL: none) */
    uint8_t *back; /* bitmap by vpid of the lost daemons that rejoined as leaves (NULL: none) */
    bool leaf;     /* this daemon rejoined: it has no broadcast children */
};

/* Instance life cycle and the module entry points the components share. */
OPAL_EXPORT int orte_grpcomm_base_create(const orte_grpcomm_module_t *module,
                                         const orte_grpcomm_algorithm_t *algorithm,
                                         const orte_grpcomm_transport_t *transport,
                                         orte_grpcomm_t **instance);
OPAL_EXPORT void orte_grpcomm_base_destroy(orte_grpcomm_t *g);
OPAL_EXPORT int orte_grpcomm_base_xcast(orte_grpcomm_t *g, uint32_t id, const void *data,
                                        size_t len, orte_grpcomm_cbfunc_t cb, void *cbdata);
OPAL_EXPORT int orte_grpcomm_base_barrier(orte_grpcomm_t *g, uint32_t id, orte_grpcomm_cbfunc_t cb,
                                          void *cbdata);
OPAL_EXPORT int orte_grpcomm_base_allgather(orte_grpcomm_t *g, uint32_t id, const void *data,
                                            size_t len, orte_grpcomm_cbfunc_t cb, void *cbdata);
OPAL_EXPORT int orte_grpcomm_base_deliver(orte_grpcomm_t *g, orte_vpid_t src, uint16_t tag,
                                          const void *data, size_t len);
OPAL_EXPORT int orte_grpcomm_base_abort_all(orte_grpcomm_t *g, int status);
OPAL_EXPORT int orte_grpcomm_base_lost(orte_grpcomm_t *g, orte_vpid_t vpid);
OPAL_EXPORT int orte_grpcomm_base_rejoined(orte_grpcomm_t *g, orte_vpid_t vpid);
/* Whether daemon v was lost, and whether it is an ancestor of this one in the broadcast tree. */
OPAL_EXPORT bool orte_grpcomm_base_is_down(const orte_grpcomm_t *g, orte_vpid_t v);
OPAL_EXPORT bool orte_grpcomm_base_is_ancestor(const orte_grpcomm_t *g, orte_vpid_t v);

/* Helpers for components. */
/* Marks coll complete (HERD_SUCCESS) or failed; the base runs the callback afterwards. */
OPAL_EXPORT void orte_grpcomm_base_finish(orte_grpcomm_coll_t *coll, int status);
/* The header of a message of coll sent by this daemon in round. */
OPAL_EXPORT void orte_grpcomm_base_header(const orte_grpcomm_t *g, const orte_grpcomm_coll_t *coll,
                                          uint32_t round, orte_grpcomm_header_t *header);
/* Packs a header, a blob-set count, one blob of a set. */
OPAL_EXPORT int orte_grpcomm_base_pack_header(opal_buffer_t *buffer,
                                              const orte_grpcomm_header_t *header);
OPAL_EXPORT int orte_grpcomm_base_pack_count(opal_buffer_t *buffer, uint32_t count);
OPAL_EXPORT int orte_grpcomm_base_pack_blob(opal_buffer_t *buffer, orte_vpid_t vpid,
                                            const void *data, size_t len);
/* Sends a packed message (a failure is logged, naming the destination). */
OPAL_EXPORT int orte_grpcomm_base_send(orte_grpcomm_t *g, orte_vpid_t dst, uint16_t tag,
                                       const opal_buffer_t *buffer);
/* Sends a received broadcast message unchanged to this daemon's broadcast children. */
OPAL_EXPORT int orte_grpcomm_base_forward(orte_grpcomm_t *g, const orte_grpcomm_msg_t *msg);
/* "xcast", "gather", "allgather round", "barrier round", or "unknown". */
OPAL_EXPORT const char *orte_grpcomm_base_tag_name(uint16_t tag);
/* ceil(log2 n) and floor(log2 n) for n >= 1 (0 for n <= 1). */
OPAL_EXPORT uint32_t orte_grpcomm_base_ceil_log2(uint32_t n);
OPAL_EXPORT uint32_t orte_grpcomm_base_floor_log2(uint32_t n);

/* Decoding, one function per message type (internal to the base). Each decodes the body of a
 * message whose header is in msg->header, checks it against num_daemons, and insists the
 * buffer ends where the message does. The body fields of msg are set only on success; reason
 * says what is wrong otherwise. */
int orte_grpcomm_base_decode_header(opal_buffer_t *buffer, orte_grpcomm_header_t *header,
                                    char *reason, size_t size);
int orte_grpcomm_base_decode_xcast(opal_buffer_t *buffer, uint32_t num_daemons,
                                   orte_grpcomm_msg_t *msg, char *reason, size_t size);
int orte_grpcomm_base_decode_gather(opal_buffer_t *buffer, uint32_t num_daemons,
                                    orte_grpcomm_msg_t *msg, char *reason, size_t size);
int orte_grpcomm_base_decode_allgather_round(opal_buffer_t *buffer, uint32_t num_daemons,
                                             orte_grpcomm_msg_t *msg, char *reason, size_t size);
int orte_grpcomm_base_decode_barrier_round(opal_buffer_t *buffer, uint32_t num_daemons,
                                           orte_grpcomm_msg_t *msg, char *reason, size_t size);
/* Frees a message's entries and payload, not the message itself. */
void orte_grpcomm_base_msg_clear(orte_grpcomm_msg_t *msg);

#endif /* ORTE_MCA_GRPCOMM_BASE_H */
