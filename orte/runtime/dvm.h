/* The distributed virtual machine: the root (herd-dvm, herdrun) and one daemon (herdd) per node
 * of the allocation, connected by the overlay along a radix tree. This is the state and the
 * protocol both sides share; the tools only parse options and call in. */
#ifndef ORTE_RUNTIME_DVM_H
#define ORTE_RUNTIME_DVM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "opal/event/event.h"
#include "orte/mca/ras/ras.h"
#include "orte/runtime/inventory.h"
#include "orte/types.h"

#define ORTE_DVM_SECRET_LEN 32

/* Overlay tags of the DVM's own messages (grpcomm has its own range). */
enum {
    ORTE_DVM_TAG_COMMAND = 1, /* root -> daemon, via xcast: shutdown */
    ORTE_DVM_TAG_LOST = 2,    /* daemon -> root: a neighbour's connection failed */
    ORTE_DVM_TAG_XML_REQ = 3, /* root -> daemon: send your topology XML */
    ORTE_DVM_TAG_XML = 4,     /* daemon -> root: the XML */
    ORTE_DVM_TAG_JOINED = 5,  /* daemon -> root: connected (so a timeout names who did not) */
};

/* What the root was asked to do. */
typedef struct orte_dvm_options {
    bool display_allocation;
    bool display_topology;
    const char *herdd;      /* daemon binary; default: next to the running tool */
} orte_dvm_options_t;

typedef struct orte_dvm orte_dvm_t;

/* Root side: read the allocation, start a daemon on every node, wait until all reported their
 * inventory. Prints what went wrong (which node, its place in the tree, the launch command's
 * stderr), stops everything it started and returns HERD_ERR_SILENT on failure. */
OPAL_EXPORT int orte_dvm_root_start(const orte_dvm_options_t *options, orte_dvm_t **dvm);
/* Root side: print the ready line "DVM ready: N nodes, S slots, T s" and the requested
 * displays. */
OPAL_EXPORT void orte_dvm_root_report(orte_dvm_t *dvm, FILE *stream);
/* Root side: the URI a tool needs to reach this DVM, written to path with mode 0600. */
OPAL_EXPORT int orte_dvm_root_write_uri(orte_dvm_t *dvm, const char *path);
/* Root side: run until shutdown is requested (SIGTERM/SIGINT, herd-dvm --shutdown) or a daemon
 * fails. Returns HERD_SUCCESS for a requested shutdown. */
OPAL_EXPORT int orte_dvm_root_serve(orte_dvm_t *dvm);
/* Root side: stop every daemon, wait for them, release everything. */
OPAL_EXPORT void orte_dvm_root_stop(orte_dvm_t *dvm);

/* Daemon side (herdd): bootstrap from the environment (or stdin lines), join the DVM, report
 * the inventory, serve until told to stop or the parent is gone. Returns the exit status. */
OPAL_EXPORT int orte_dvm_daemon_main(bool bootstrap_stdin);

/* Register the DVM's own MCA variables (dvm_radix, ...) so tools can list them. */
OPAL_EXPORT int orte_dvm_register_params(void);

/* Number of tree rounds a broadcast takes in this DVM (for the benchmark). */
OPAL_EXPORT uint32_t orte_dvm_tree_rounds(const orte_dvm_t *dvm);

#endif /* ORTE_RUNTIME_DVM_H */
