/* SPDX-License-Identifier: BSD-3-Clause */
/* A session daemon's wireup: the selected wireup modules, the engine they share, the job's
 * private folder on the node, and the namespaces (the job, then what it spawns) as the modules
 * see them. session.c calls these; docs/wireup.md describes the whole. */
#ifndef ORTE_RUNTIME_SESSION_WIREUP_H
#define ORTE_RUNTIME_SESSION_WIREUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "opal/event/event.h"
#include "opal/visibility.h"
#include "orte/mca/wireup/wireup.h"
#include "orte/types.h"

typedef struct orte_session_wireup orte_session_wireup_t;

typedef struct orte_session_wireup_config {
    opal_event_base_t *base;
    const char *node_name;
    orte_vpid_t me;    /* this session daemon in the job overlay */
    orte_vpid_t names; /* the shepherd: keeper of published names */
    uint32_t radix;    /* of the job overlay */
    /* send over the job overlay (routed) */
    int (*send)(void *ctx, orte_vpid_t dst, uint16_t tag, const struct iovec *iov, int iovcnt);
    /* a process asked for the job to be aborted */
    void (*abort)(void *ctx, uint32_t nspace, uint32_t rank, int status, const char *message);
    /* a process asked for more processes (orte_wireup_host_t's spawn) */
    int (*spawn)(void *ctx, const orte_wireup_spawn_request_t *request, orte_wireup_spawn_fn_t cb,
                 void *cbdata);
    /* job control of this node's processes, and whether the job is being aborted
     * (orte_wireup_host_t's signal and aborting) */
    int (*signal)(void *ctx, uint32_t nspace, uint32_t rank, orte_wireup_signal_how_t how,
                  int signo);
    bool (*aborting)(void *ctx);
    void *ctx;
} orte_session_wireup_config_t;

/* Open the wireup framework and start every selected module. *wireup is NULL (and HERD_SUCCESS
 * returned) when no module is selected or available: processes then get no wireup. */
OPAL_EXPORT int orte_session_wireup_start(const orte_session_wireup_config_t *config,
                                          orte_session_wireup_t **wireup);
/* Stop the modules, free the engine, remove the job's folder on this node. NULL does nothing. */
OPAL_EXPORT void orte_session_wireup_stop(orte_session_wireup_t *wireup);
/* The same, or with exiting (the process exits right after, without running atexit handlers or
 * library destructors): modules that can skip their teardown do (wireup.h, abandon), and the
 * wireup folder is removed all the same. */
OPAL_EXPORT void orte_session_wireup_end(orte_session_wireup_t *wireup, bool exiting);
/* A session daemon was reaped with wstatus: unless it exited 0 (then it removed its own), remove
 * its wireup folder, so what its modules left there (PMIx's files, sockets) does not outlive the
 * job. */
OPAL_EXPORT void orte_session_wireup_reaped(pid_t session_pid, int wstatus);

/* A namespace whose job database is complete: ns (copied, with what it points to kept by the
 * caller until stop), the session daemons hosting its processes (ascending), and per node
 * index of ns the vpid of that node's session daemon (ORTE_VPID_INVALID: none). Registered
 * with every module before any of its local processes starts. */
OPAL_EXPORT int orte_session_wireup_add_nspace(orte_session_wireup_t *wireup,
                                               const orte_wireup_nspace_t *ns,
                                               const orte_vpid_t *daemons, uint32_t num_daemons,
                                               const orte_vpid_t *node_vpid);

/* Keys a spawned namespace's processes find under the namespace (PMI-1 "preput"), stored once
 * the namespace is added. */
OPAL_EXPORT int orte_session_wireup_preput(orte_session_wireup_t *wireup, uint32_t nspace,
                                           const char *const *keys, const char *const *values,
                                           uint32_t num);

/* The environment and inherited descriptors of a local process about to start: *env (an argv
 * the caller owns, extended here) and fds (ORTE_WIREUP_MAX_CHILD_FDS at most; the process gets
 * fds[i] as 3 + i). The caller closes the fds once the process is started (or not). */
OPAL_EXPORT int orte_session_wireup_proc_setup(orte_session_wireup_t *wireup,
                                               const orte_wireup_proc_t *proc, char ***env,
                                               int *fds, int *num_fds);
/* pid 0: it could not be started. */
OPAL_EXPORT void orte_session_wireup_proc_started(orte_session_wireup_t *wireup,
                                                  const orte_wireup_proc_t *proc, pid_t pid);
/* It exited: true when it connected through some module and did not finalize. */
OPAL_EXPORT bool orte_session_wireup_proc_exited(orte_session_wireup_t *wireup,
                                                 const orte_wireup_proc_t *proc);

/* A message with one of the engine's tags (ORTE_WIREUP_TAG_BASE ..), and a lost daemon. */
OPAL_EXPORT void orte_session_wireup_deliver(orte_session_wireup_t *wireup, orte_vpid_t src,
                                             uint16_t tag, const void *data, size_t len);
OPAL_EXPORT void orte_session_wireup_lost(orte_session_wireup_t *wireup, orte_vpid_t vpid);

/* Names of the active modules, comma-separated (for -v output), or "none". */
OPAL_EXPORT const char *orte_session_wireup_names(const orte_session_wireup_t *wireup);

#endif /* ORTE_RUNTIME_SESSION_WIREUP_H */
