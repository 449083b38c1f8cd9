/* SPDX-License-Identifier: BSD-3-Clause */
/* The wireup framework: what a job's processes talk to on their node to find each other
 * (native for libherd, pmix for PMIx clients, pmi1 for PMI-1 clients), and the engine in its
 * base that carries their data between the job's session daemons (docs/wireup.md). */
#ifndef ORTE_MCA_WIREUP_H
#define ORTE_MCA_WIREUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "opal/event/event.h"
#include "opal/mca/mca.h"
#include "orte/types.h"

#define OPAL_MCA_wireup_INTERFACE_VERSION 3u

/* ------------------------------------------------------------------------------------------ */
/* What a module is told about a job */

/* One namespace: the job itself (index 0) or a set of processes it spawned (1, 2, ...).
 * Everything pointed to stays valid until del_nspace() returns. */
typedef struct orte_wireup_nspace {
    uint32_t index;     /* 0: the job; then one per spawn, in order */
    const char *name;   /* PMIx namespace and PMI-1 KVS name: printable, < 256 bytes */
    const char *jobid;  /* herd's job id ("<dvm id>.<seq>") */
    uint32_t seq;       /* the job's number in its DVM (HERD_JOBID) */
    uint32_t num_procs; /* ranks 0 .. num_procs - 1 */
    uint32_t num_apps;
    uint32_t universe_size;        /* slots of the DVM's nodes (MPI_UNIVERSE_SIZE) */
    uint32_t num_nodes;            /* nodes of the node table (every candidate of the job) */
    const char *const *node_names; /* by node index */
    uint32_t my_node;              /* this node's index */
    const uint32_t *local_ranks;   /* this node's ranks, ascending */
    uint32_t num_local;
    /* The node's job database of this namespace (opal/util/jobdb.h): every rank's node, local and
     * node rank, app, binding and locality, read in place. db_name is its segment name. */
    const struct opal_jobdb *db;
    const char *db_name;
    /* spawned namespaces: who asked for it (index and rank of the parent), else UINT32_MAX */
    uint32_t parent_nspace;
    uint32_t parent_rank;
    const char *const *app_programs; /* by app: its program as the job gave it (argv[0]) */
} orte_wireup_nspace_t;

/* One local process about to start (or, in proc_exited, that ended). */
typedef struct orte_wireup_proc {
    const orte_wireup_nspace_t *ns;
    uint32_t rank;
    uint32_t app;
    uint32_t local_rank;
    uint32_t node_rank;
    /* proc_setup: started here after its node was lost (errmgr restart), not among ns's
     * local_ranks; a module that serves only those gives it nothing (HERD_SUCCESS) */
    bool moved;
    /* proc_exited only: its exit status, or the signal that killed it (0: none) */
    int exit_code;
    int signo;
} orte_wireup_proc_t;

/* What a module adds to a process before it starts: environment variables and descriptors
 * the process must inherit. */
#define ORTE_WIREUP_MAX_CHILD_FDS 4
typedef struct orte_wireup_child {
    char ***env; /* the process's environment (an argv the module may extend or change) */
    /* descriptors to inherit: fds[i] becomes descriptor child_fd[i] in the process (3, 4, ...
     * in the order they were added; orte_wireup_child_add_fd() says which) */
    int fds[ORTE_WIREUP_MAX_CHILD_FDS];
    int child_fd[ORTE_WIREUP_MAX_CHILD_FDS];
    int num_fds;
} orte_wireup_child_t;

/* Adds fd to what the process inherits; *child_fd is its number in the process. fd stays the
 * caller's (the session daemon closes its copy after the fork). HERD_ERR_OUT_OF_RESOURCE when
 * ORTE_WIREUP_MAX_CHILD_FDS are taken. */
OPAL_EXPORT int orte_wireup_child_add_fd(orte_wireup_child_t *child, int fd, int *child_fd);
/* Sets NAME=value in the child's environment, replacing an earlier NAME. */
OPAL_EXPORT int orte_wireup_child_setenv(orte_wireup_child_t *child, const char *name,
                                         const char *value);

/* ------------------------------------------------------------------------------------------ */
/* The engine: data, fences and direct modex among the session daemons of a job. One per
 * session daemon; every module of the daemon shares it. Callbacks run from the event loop,
 * never inside the call that starts the operation. */

typedef struct orte_wireup_engine orte_wireup_engine_t;

/* Which protocol an operation belongs to: fences of different kinds are counted apart, and a
 * direct-modex request is answered by the module that registered its kind. */
typedef enum orte_wireup_kind {
    ORTE_WIREUP_KIND_NATIVE = 1,
    ORTE_WIREUP_KIND_PMI1 = 2,
    ORTE_WIREUP_KIND_PMIX = 3,
    ORTE_WIREUP_KIND_CONNECT = 4, /* PMIx_Connect and friends: a fence without data */
    ORTE_WIREUP_KIND_PROCS = 5,   /* direct requests: what a daemon knows of its processes */
    ORTE_WIREUP_KIND_CTRL = 6,    /* direct requests: signal or kill a daemon's processes */
    ORTE_WIREUP_NUM_KINDS = 7,
} orte_wireup_kind_t;

/* Any rank of a namespace (the whole namespace in a process list). */
#define ORTE_WIREUP_RANK_WILDCARD UINT32_MAX
/* The owner of a key that belongs to the namespace, not to a process (PMI-1 KVS keys). */
#define ORTE_WIREUP_OWNER_NSPACE UINT32_MAX

typedef struct orte_wireup_procid {
    uint32_t nspace; /* index */
    uint32_t rank;   /* or ORTE_WIREUP_RANK_WILDCARD */
} orte_wireup_procid_t;

/* Completion of a fence, a put or anything without a result. error: a sentence for users when
 * status is an error (else NULL), valid during the call. */
typedef void (*orte_wireup_done_fn_t)(int status, const char *error, void *cbdata);
/* A value, valid during the call only. */
typedef void (*orte_wireup_value_fn_t)(int status, const void *value, size_t len, const char *error,
                                       void *cbdata);
/* Every participating daemon's contribution to a raw allgather, in daemon order (valid during
 * the call). */
typedef void (*orte_wireup_blobs_fn_t)(int status, const struct iovec *blobs, uint32_t num_blobs,
                                       const char *error, void *cbdata);

/* Key-value store (native and pmi1). Keys are strings of 1..ORTE_WIREUP_MAX_KEY bytes, values
 * at most ORTE_WIREUP_MAX_VALUE bytes. */
#define ORTE_WIREUP_MAX_KEY   511u
#define ORTE_WIREUP_MAX_VALUE (64u << 20)

/* A local process (or, owner ORTE_WIREUP_OWNER_NSPACE, the namespace) stores key. It is seen by
 * others once committed. A key stored again replaces the value. */
OPAL_EXPORT int orte_wireup_kv_put(orte_wireup_engine_t *engine, uint32_t nspace, uint32_t owner,
                                   const char *key, const void *value, size_t len);
/* Make what owner stored so far visible: gets waiting for one of its keys are answered. */
OPAL_EXPORT int orte_wireup_kv_commit(orte_wireup_engine_t *engine, uint32_t nspace,
                                      uint32_t owner);
/* A local process enters a fence of kind. When every local process of the namespace has entered,
 * this daemon contributes (with collect: what was committed here since the previous fence of
 * this kind, namespace-owned keys too) and the fence completes once every daemon hosting the
 * namespace has. cb runs once per process that entered. A process may not enter again before
 * its fence completed (HERD_ERR_EXISTS). */
OPAL_EXPORT int orte_wireup_kv_fence(orte_wireup_engine_t *engine, uint32_t nspace,
                                     orte_wireup_kind_t kind, uint32_t rank, bool collect,
                                     orte_wireup_done_fn_t cb, void *cbdata);
/* owner's value of key, from this node's store, or asked of the daemon hosting owner (direct
 * modex; the answer, with everything owner committed, is kept here for everyone on the node).
 * Waits for the key to be committed up to timeout_ms (< 0: wireup_base_get_timeout; 0: answer
 * now). HERD_ERR_NOT_FOUND with a message naming owner and key when it never comes,
 * HERD_ERR_BAD_PARAM for an unknown namespace or rank, HERD_ERR_UNREACH when the owner's daemon
 * is gone. For namespace-owned keys (owner ORTE_WIREUP_OWNER_NSPACE) only this node's store is
 * searched. */
OPAL_EXPORT int orte_wireup_kv_get(orte_wireup_engine_t *engine, uint32_t nspace, uint32_t owner,
                                   const char *key, int timeout_ms, orte_wireup_value_fn_t cb,
                                   void *cbdata);

/* Raw collectives (pmix). This daemon's contribution to an allgather among the daemons hosting
 * the processes listed (a whole namespace: rank ORTE_WIREUP_RANK_WILDCARD). Every such daemon
 * must make the same call (the same list, in any order, and kind); calls with the same list and
 * kind are matched in the order they are made. Daemons hosting none of the processes take no
 * part. */
OPAL_EXPORT int orte_wireup_allgather(orte_wireup_engine_t *engine,
                                      const orte_wireup_procid_t *procs, size_t num_procs,
                                      orte_wireup_kind_t kind, const void *data, size_t len,
                                      orte_wireup_blobs_fn_t cb, void *cbdata);

/* Raw direct modex (pmix), and direct requests of other kinds (PROCS, CTRL): a module answers
 * requests of its kind for its local processes. The handler is called on the event loop; it
 * answers through reply(ticket, ...) exactly once, possibly later. */
typedef struct orte_wireup_ticket orte_wireup_ticket_t;
typedef void (*orte_wireup_dmodex_handler_t)(void *ctx, uint32_t nspace, uint32_t rank,
                                             const char *key, int timeout_ms,
                                             orte_wireup_ticket_t *ticket);
OPAL_EXPORT int orte_wireup_set_dmodex_handler(orte_wireup_engine_t *engine,
                                               orte_wireup_kind_t kind,
                                               orte_wireup_dmodex_handler_t handler, void *ctx);
OPAL_EXPORT void orte_wireup_dmodex_reply(orte_wireup_ticket_t *ticket, int status,
                                          const void *data, size_t len, const char *error);
/* Ask the daemon hosting (nspace, rank) for its data of kind (key may be NULL); for the request
 * kinds (PROCS, CTRL), key says what is asked and the answer is what the handler replied. */
OPAL_EXPORT int orte_wireup_dmodex(orte_wireup_engine_t *engine, uint32_t nspace, uint32_t rank,
                                   orte_wireup_kind_t kind, const char *key, int timeout_ms,
                                   orte_wireup_value_fn_t cb, void *cbdata);

/* Published names (PMIx publish/lookup, PMI-1 publish_name/lookup_name), kept by the job's
 * shepherd for every namespace of the job. A lookup waits up to timeout_ms for the name to be
 * published (0: answer now). */
OPAL_EXPORT int orte_wireup_publish(orte_wireup_engine_t *engine, const char *name,
                                    const void *value, size_t len, orte_wireup_done_fn_t cb,
                                    void *cbdata);
OPAL_EXPORT int orte_wireup_lookup(orte_wireup_engine_t *engine, const char *name, int timeout_ms,
                                   orte_wireup_value_fn_t cb, void *cbdata);
OPAL_EXPORT int orte_wireup_unpublish(orte_wireup_engine_t *engine, const char *name,
                                      orte_wireup_done_fn_t cb, void *cbdata);

/* ------------------------------------------------------------------------------------------ */
/* What the session daemon does for the modules */

/* One app of a spawn request. */
typedef struct orte_wireup_spawn_app {
    char **argv;     /* argv[0]: the program */
    char **env;      /* NAME=value added to the new processes' environment */
    const char *cwd; /* NULL: the parent's */
    uint32_t np;
} orte_wireup_spawn_app_t;

/* A request for more processes (MPI_Comm_spawn): a new namespace on the job's nodes. */
typedef struct orte_wireup_spawn_request {
    uint32_t parent_nspace; /* who asks */
    uint32_t parent_rank;
    const orte_wireup_spawn_app_t *apps;
    uint32_t num_apps;
    /* keys the new processes find stored under their namespace (PMI-1's "preput") */
    const char *const *preput_keys;
    const char *const *preput_values;
    uint32_t num_preput;
} orte_wireup_spawn_request_t;

/* What a job control (PMIx_Job_control) does to processes. */
typedef enum orte_wireup_signal_how {
    ORTE_WIREUP_SIGNAL = 1,    /* send them the signal, nothing more */
    ORTE_WIREUP_KILL = 2,      /* SIGKILL now */
    ORTE_WIREUP_TERMINATE = 3, /* SIGTERM, then SIGKILL after odls_base_kill_grace_ms */
} orte_wireup_signal_how_t;

/* The new namespace's index, or an error and a sentence saying why. */
typedef void (*orte_wireup_spawn_fn_t)(int status, uint32_t nspace, const char *error,
                                       void *cbdata);

typedef struct orte_wireup_host {
    opal_event_base_t *base; /* every module's events and callbacks run here */
    const char *node_name;
    const char *tmpdir; /* a private folder of this job on this node, removed at its end */
    orte_wireup_engine_t *engine;
    /* A process asked for the job to be aborted (MPI_Abort, herd_abort, PMI abort). */
    void (*abort)(void *ctx, uint32_t nspace, uint32_t rank, int status, const char *message);
    /* A process asks for more processes to be started (MPI_Comm_spawn): a new namespace on the
     * job's nodes, known to every module here before cb runs. The request is copied. */
    int (*spawn)(void *ctx, const orte_wireup_spawn_request_t *request, orte_wireup_spawn_fn_t cb,
                 void *cbdata);
    /* A namespace (its numbers, names and database) by index; NULL when unknown here. */
    const orte_wireup_nspace_t *(*nspace)(void *ctx, uint32_t index);
    /* Job control of this node's processes of nspace: rank, or every one
     * (ORTE_WIREUP_RANK_WILDCARD). Processes killed (KILL, TERMINATE) ended because they were
     * asked to: not failures of their own. HERD_ERR_NOT_FOUND when none of them runs here. */
    int (*signal)(void *ctx, uint32_t nspace, uint32_t rank, orte_wireup_signal_how_t how,
                  int signo);
    /* Whether the job is being aborted (its processes are being killed). */
    bool (*aborting)(void *ctx);
    void *ctx;
} orte_wireup_host_t;

/* ------------------------------------------------------------------------------------------ */
/* The module */

struct orte_wireup_module {
    const char *name; /* the component's name: "native", "pmix", "pmi1" */
    /* Start serving on this node for one job; *state is the module's. HERD_ERR_NOT_AVAILABLE:
     * the module cannot serve here (already said why at wireup_base_verbose), and is left out. */
    int (*init)(const orte_wireup_host_t *host, void **state);
    /* A namespace is known: its processes on this node will start after this returns (and may
     * be none: a namespace hosted elsewhere, known here so its processes can be looked up). */
    int (*add_nspace)(void *state, const orte_wireup_nspace_t *ns);
    /* Prepare a local process: environment and inherited descriptors. Called just before its
     * start; HERD_ERR_* fails the start. */
    int (*proc_setup)(void *state, const orte_wireup_proc_t *proc, orte_wireup_child_t *child);
    /* The process was started (after proc_setup), or could not be (pid 0). May be NULL. */
    void (*proc_started)(void *state, const orte_wireup_proc_t *proc, pid_t pid);
    /* The process has exited. *unfinalized set to true when it connected through this module
     * and did not finalize (the job treats that as a failure). */
    void (*proc_exited)(void *state, const orte_wireup_proc_t *proc, bool *unfinalized);
    /* The namespace is over (every process exited). May be NULL. */
    void (*del_nspace)(void *state, const orte_wireup_nspace_t *ns);
    /* Stop serving and free state. */
    void (*finalize)(void *state);
    /* Instead of del_nspace and finalize, when the process exits right after (a session
     * daemon at the end of its job): stop answering, and release only what would outlive the
     * process (files outside the session's wireup folder, which the caller removes). May be
     * NULL: then del_nspace and finalize run. */
    void (*abandon)(void *state);
};
typedef struct orte_wireup_module orte_wireup_module_t;

OPAL_EXPORT extern opal_mca_framework_t orte_wireup_base_framework;

/* Open the framework and select every available component (HERD_MCA_wireup: "native,pmi1",
 * "^pmix", or "none" for no wireup at all). HERD_ERR_NOT_FOUND when the selection names
 * nothing available. Opening an open framework does nothing. */
OPAL_EXPORT int orte_wireup_base_open(void);
OPAL_EXPORT void orte_wireup_base_close(void);
/* The selected modules, highest priority first (n of them). */
OPAL_EXPORT const orte_wireup_module_t *const *orte_wireup_base_modules(size_t *n);
/* Whether a node starts its wireups even when none of its programs can use one: the variable
 * wireup_base_always, or a wireup selection the user set. Loads no component, unless the user
 * set wireup_base_verbose: then *output is the framework's verbose stream (else -1). */
OPAL_EXPORT bool orte_wireup_base_always(int *output);
/* wireup_base_get_timeout in milliseconds. */
OPAL_EXPORT int orte_wireup_base_get_timeout_ms(void);

#endif /* ORTE_MCA_WIREUP_H */
