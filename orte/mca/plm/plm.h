/* SPDX-License-Identifier: BSD-3-Clause */
/* The plm framework: starting the DVM's daemons (herdd) on the allocation's nodes: forked on
 * this host for simulated nodes, over ssh as a tree, or as one Slurm step. */
#ifndef ORTE_MCA_PLM_H
#define ORTE_MCA_PLM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "opal/mca/mca.h"
#include "orte/mca/ras/ras.h"
#include "orte/types.h"

#define OPAL_MCA_plm_INTERFACE_VERSION 1u

/* What a daemon needs to start, handed over in its environment (plm local, slurm) or as
 * KEY=VALUE lines on its stdin ending with an empty line (plm ssh, `herdd --bootstrap-stdin`),
 * so neither the secret nor contact information ever appears in a command line. */
#define ORTE_BOOT_DVM_ID "HERD_DVM_ID"
#define ORTE_BOOT_VPID "HERD_DVM_VPID"           /* "slurm": SLURM_PROCID + 1 */
#define ORTE_BOOT_SIZE "HERD_DVM_SIZE"
#define ORTE_BOOT_RADIX "HERD_DVM_RADIX"
#define ORTE_BOOT_SECRET "HERD_DVM_SECRET"         /* 64 hex digits */
#define ORTE_BOOT_PARENT_URI "HERD_DVM_PARENT_URI"
#define ORTE_BOOT_NODE "HERD_DVM_NODE" /* the node's name; "slurm": SLURMD_NODENAME */
#define ORTE_BOOT_TOPOLOGY "HERD_DVM_TOPOLOGY"     /* hwloc synthetic topology (simulated) */
#define ORTE_BOOT_LISTEN_FD "HERD_DVM_LISTEN_FD"   /* a listening socket made by the launcher */
#define ORTE_BOOT_FABRIC "HERD_DVM_FABRIC"         /* 1: report the fabric inventory */
#define ORTE_BOOT_PLM "HERD_DVM_PLM"               /* tree spawn: the launcher to use */
#define ORTE_BOOT_ALLOCATION "HERD_DVM_ALLOCATION" /* tree spawn: packed allocation, hex */
#define ORTE_BOOT_HERDD "HERD_DVM_HERDD"           /* tree spawn: the daemon's path */
/* where to re-attach when the parent is lost: "vpid=uri" of the grandparent, its parent... up
 * to the root, space-separated (empty below the root's children) */
#define ORTE_BOOT_ANCESTORS "HERD_DVM_ANCESTORS"
#define ORTE_BOOT_ON_LOSS "HERD_DVM_ON_NODE_LOSS" /* "continue": survive a lost daemon */

/* One daemon to start. */
typedef struct orte_plm_daemon {
    orte_vpid_t vpid;
    const orte_node_t *node; /* where */
    char **boot;             /* KEY=VALUE bootstrap settings (NULL-terminated) */
    int listen_fd;           /* local launches: the daemon's pre-bound listener, else -1 */
    /* local launches: more descriptors the process inherits under the same numbers (the
     * pre-bound listeners of a process hosting several simulated nodes) */
    const int *inherit_fds;
    size_t num_inherit_fds;
    /* filled by launch(): */
    pid_t pid;               /* the local process started: herdd itself, or the ssh client */
    int stderr_fd;           /* read end of that process's stderr, -1 if none */
    int stdin_fd;            /* write end of its stdin, kept open while the daemon runs (its
                              * EOF tells a remote daemon that its launcher is gone), or -1 */
} orte_plm_daemon_t;

typedef struct orte_plm_module {
    const char *name; /* the component's name, passed on to daemons that spawn in turn */
    /* Whether daemons get their listening sockets from the launcher (all on this host), so
     * every daemon's URI is known before any starts. */
    bool prebinds_listeners;
    /* Whether daemons start their own children (the root starts only its own), so that no
     * process starts more than radix daemons. They get the allocation in their bootstrap. */
    bool tree_spawn;
    /* Whether every daemon connects straight to the root (the launcher starts them all at
     * once and no daemon can know its tree parent's address in advance). */
    bool flat_wireup;
    /* Start the daemons (without waiting for them to connect). herdd is the daemon binary's
     * path on the target nodes. On failure, the caller kills the daemons already started
     * (those with pid > 0). */
    int (*launch)(orte_plm_daemon_t *daemons, size_t num_daemons, const char *herdd);
} orte_plm_module_t;

OPAL_EXPORT extern opal_mca_framework_t orte_plm_base_framework;

/* Open the framework and select a launcher for this allocation. */
OPAL_EXPORT int orte_plm_base_select(const orte_allocation_t *allocation,
                                     const orte_plm_module_t **module);
OPAL_EXPORT void orte_plm_base_close(void);

/* The launched process's stderr so far (for "why did this daemon fail"), malloc'd, "" if none. */
OPAL_EXPORT char *orte_plm_base_read_stderr(orte_plm_daemon_t *daemon);

#endif /* ORTE_MCA_PLM_H */
