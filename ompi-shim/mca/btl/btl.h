/* SPDX-License-Identifier: BSD-3-Clause */
/* The btl framework: byte transfer between the processes of a job (docs/btl.md). Every
 * available component is kept, ordered by priority; the base picks for each peer, on the first
 * message to it, the first module that can reach it, and caches that choice in the peer's proc.
 * Modules move whole tagged messages and hand every one they receive up through one callback;
 * the base matches them against posted receives, so a module stays small. Internal to libherd
 * (hidden). Not thread-safe, like the rest of libherd. */
#ifndef OMPI_MCA_BTL_H
#define OMPI_MCA_BTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ompi-shim/proc/proc.h"
#include "opal/mca/mca.h"

#define OPAL_MCA_btl_INTERFACE_VERSION 1u

/* What a module may ask of the runtime: libherd's job information and modex, as a table of
 * functions rather than calls into libherd, so a module built outside libherd (a DSO given this
 * table) needs no symbol from it, and unit tests can run a module without a job. */
typedef struct ompi_btl_rte {
    uint32_t my_rank;
    uint32_t job_size;
    uint32_t my_node;
    uint32_t local_size;   /* processes of this job on this node (the idle policy) */
    const char *jobid;     /* "<dvm>.<seq>" */
    const char *node_name; /* this process's node (names of sm segments) */
    /* herd_peer_node, herd_peer_endpoint, herd_put, herd_commit, herd_get, herd_last_error */
    int (*peer_node)(uint32_t peer, uint32_t *node);
    int (*peer_endpoint)(uint32_t peer, const char *fabric, void *addr, size_t *len);
    int (*put)(const char *key, const void *value, size_t len);
    int (*commit)(void);
    int (*get)(uint32_t peer, const char *key, void **value, size_t *len);
    const char *(*last_error)(void);
} ompi_btl_rte_t;

/* A whole message received from src: the module owns data, which is valid only during the call
 * (the base copies it into a posted receive or its unexpected queue). */
typedef void (*ompi_btl_deliver_fn_t)(uint32_t src, int tag, const void *data, size_t len);

/* A transport. Per-peer state lives in proc->endpoint[the component's tag] (a plain index),
 * created by add_peer or when the peer's first message arrives. */
typedef struct ompi_btl_module {
    const char *name; /* the component's: "self", "sm", "tcp" */
    /* Start (at the first messaging call, once): what makes this process reachable (sm's
     * receive segment, tcp's listener), nothing per peer. A failure drops the module. */
    int (*init)(const ompi_btl_rte_t *rte, ompi_btl_deliver_fn_t deliver);
    /* Cheap: can this module reach peer at all (self: my rank; sm: my node; tcp: anyone)? */
    bool (*reachable)(uint32_t peer);
    /* Make proc's endpoint (map the peer's segment, open the connection or start to); called
     * once per peer, on the first message to it. */
    int (*add_peer)(ompi_proc_t *proc);
    /* Send len bytes of buf with tag to proc (added). On return buf may be reused: the module
     * has sent or copied what it could not send yet, and pushes that on from progress. */
    int (*send)(ompi_proc_t *proc, int tag, const void *buf, size_t len);
    /* Move what can move now without blocking; the number of events handled (0: idle), or a
     * negative status for a failure the caller must see (a peer gone). NULL: nothing to do
     * (self delivers in send). */
    int (*progress)(void);
    /* progress makes a system call (tcp's poll()): while it finds nothing, the base calls it
     * only every btl_base_kernel_poll_interval rounds, so a waiting process polls shared memory
     * at full speed. */
    bool progress_enters_kernel;
    /* Messages accepted by send and not yet handed to the wire or the peer's memory (the base
     * progresses until it is 0 before finalize: herd_send returned, so they must arrive). */
    size_t (*pending)(void);
    /* Release every endpoint (clearing the procs' slots) and what init made. */
    void (*finalize)(void);
    /* Peers this module holds an endpoint for (verbose output, tests). */
    size_t (*num_peers)(void);
} ompi_btl_module_t;

/* ------------------------------------------------------------------------------------------
 * Transports in their own DSO (docs/btl.md, "Transport libraries"). A transport whose library is
 * costly to load (libfabric, UCX) must not be linked into every program that links libherd. Its
 * component, linked into libherd like the others, is a small front: it registers the variables
 * and, when the framework starts its module, loads the transport proper from the DSO
 * "herd-btl-<name>.so", found in the folders of the MCA component path. The DSO links only its
 * own library: what it needs of libherd comes through the tables below, so it holds no
 * reference to a libherd symbol (libherd exports only herd_*, and keeps opal hidden). */

#ifndef OMPI_BTL_DSO_ABI_VERSION /* a unit test builds a stand-in DSO for another version */
#define OMPI_BTL_DSO_ABI_VERSION 1u
#endif

typedef struct ompi_btl_dso_services {
    uint32_t abi_version;       /* OMPI_BTL_DSO_ABI_VERSION: the layout of this table */
    uint32_t interface_version; /* OPAL_MCA_btl_INTERFACE_VERSION: the module's layout */
    /* the front component's variable values; the layout is the component's own header */
    const void *params;
    /* ompi_proc_lookup (creates) and ompi_proc_find (never creates) */
    int (*proc_lookup)(uint32_t rank, ompi_proc_t **proc);
    ompi_proc_t *(*proc_find)(uint32_t rank);
    /* printed on the btl framework's stream when level <= btl_base_verbose */
    void (*verbose)(int level, const char *format, ...) __attribute__((format(printf, 2, 3)));
    /* opal_show_help: topic from the help catalog file (the DSO's help file is installed with
     * the others), with an error frame */
    int (*show_help)(const char *file, const char *topic, int want_error_header, ...);
    const char *(*strerror)(int status);
} ompi_btl_dso_services_t;

/* The one symbol a transport DSO exports, "herd_btl_<name>_transport": check svc (versions),
 * keep it (it outlives the module), and return the module, whose init the front then calls.
 * NULL with a sentence in why (what is wrong and what to do) when it cannot serve. */
typedef const ompi_btl_module_t *(*ompi_btl_dso_entry_fn_t)(const ompi_btl_dso_services_t *svc,
                                                            char *why, size_t why_len);

/* For a DSO's entry: whether libherd's services and module layout are the ones the DSO was built
 * for; false with the sentence for why (naming dso, "herd-btl-ofi.so") when not. Inline, as the
 * DSO may call nothing of libherd's. */
static inline bool ompi_btl_dso_versions_match(const ompi_btl_dso_services_t *svc, const char *dso,
                                               char *why, size_t why_len)
{
    if (OMPI_BTL_DSO_ABI_VERSION == svc->abi_version &&
        OPAL_MCA_btl_INTERFACE_VERSION == svc->interface_version) {
        return true;
    }
    snprintf(why, why_len,
             "%s was built for services version %u and module version %u, but libherd offers %u "
             "and %u: reinstall herd",
             dso, OMPI_BTL_DSO_ABI_VERSION, OPAL_MCA_btl_INTERFACE_VERSION, svc->abi_version,
             svc->interface_version);
    return false;
}

/* For a front component's init: load "herd-btl-<front->name>.so", get its module, start it
 * with rte and deliver, and copy its operations into *front, so the base calls the DSO's
 * functions straight (no forwarding). params: the front's variables (services.params).
 * A DSO that is missing, refuses, or fails init: a status, the reason on the btl stream at
 * verbosity 1, and *front unchanged (the base then drops it like any module that fails
 * init). The DSO stays loaded until the process exits (libfabric and UCX must not be
 * unloaded while their threads or handlers may still run). */
int ompi_btl_base_dso_front_init(ompi_btl_module_t *front, const void *params,
                                 const ompi_btl_rte_t *rte, ompi_btl_deliver_fn_t deliver);

OPAL_EXPORT extern opal_mca_framework_t ompi_btl_base_framework;

/* Any source / any tag for receives (the values herd.h exports). */
#define OMPI_BTL_ANY_SOURCE UINT32_MAX
#define OMPI_BTL_ANY_TAG    (-1)

/* A receive, posted to the matching engine. The caller owns it; the base fills the results. */
typedef struct ompi_btl_recv {
    struct ompi_btl_recv *next;
    uint32_t want_src; /* or OMPI_BTL_ANY_SOURCE */
    int want_tag;      /* or OMPI_BTL_ANY_TAG */
    void *buf;
    size_t cap;
    /* results */
    bool done;
    int status; /* HERD_SUCCESS, or HERD_ERR_TRUNCATE (cap bytes were copied) */
    uint32_t src;
    int tag;
    size_t len; /* of the message, also when truncated */
} ompi_btl_recv_t;

/* Open the framework and start every selected module with rte (copied). Selection:
 * HERD_MCA_btl ("self,sm" / "^tcp"). HERD_ERR_NOT_FOUND when no module could start. Opening an
 * open framework does nothing. */
int ompi_btl_base_open(const ompi_btl_rte_t *rte);
/* Finalize the modules (their endpoints) and close; nothing when not open. */
void ompi_btl_base_close(void);
bool ompi_btl_base_is_open(void);

/* Send to peer (blocking until buf may be reused: modules copy what they cannot send at once).
 * The first message to a peer chooses its module. HERD_ERR_UNREACH when none reaches it. */
int ompi_btl_base_send(uint32_t peer, int tag, const void *buf, size_t len);
/* Post a receive: matched at once against the unexpected queue (done may be true on return),
 * else when a message arrives. */
int ompi_btl_base_post_recv(ompi_btl_recv_t *recv);
/* Take a receive that is not done out of the posted queue (finalize, tests). */
void ompi_btl_base_cancel_recv(ompi_btl_recv_t *recv);
/* Progress the modules once (those whose progress enters the kernel only every
 * btl_base_kernel_poll_interval rounds while they are idle); the events handled, or a negative
 * status. */
int ompi_btl_base_progress(void);
/* The same for a caller waiting for a message: after btl_base_yield_polls rounds in a row that
 * moved nothing, yield the core (processes of an oversubscribed node must let their peers run). */
int ompi_btl_base_progress_waiting(void);

/* The module used for peer, or NULL before the first message to it. */
const ompi_btl_module_t *ompi_btl_base_peer_module(uint32_t peer);
/* Messages received and not yet matched (tests, verbose output). */
size_t ompi_btl_base_num_unexpected(void);

/* The matching engine's entry for every message a module receives (the deliver callback).
 * Exposed for the unit tests, which feed it directly. */
void ompi_btl_base_deliver(uint32_t src, int tag, const void *data, size_t len);

#endif /* OMPI_MCA_BTL_H */
