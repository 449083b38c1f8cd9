/* SPDX-License-Identifier: BSD-3-Clause */
/* Tools (herdrun --dvm-uri) using a running DVM (herd-dvm): the root listens on a Unix socket
 * that only its own user may use; a tool asks for what it needs to plan a job (the allocation,
 * the inventories, a job number), sends the launch message for the root to broadcast, and hears
 * about daemons that cannot run its job. The tool drives the job itself (it is vpid 0 of the
 * job's overlay), so the root runs any number of jobs without waiting on any. */
#ifndef ORTE_RUNTIME_DVM_TOOL_H
#define ORTE_RUNTIME_DVM_TOOL_H

#include <stdint.h>

#include "opal/event/event.h"
#include "orte/mca/ras/ras.h"
#include "orte/runtime/dvm.h"
#include "orte/util/inventory.h"

#define ORTE_DVM_TOOL_VERSION   2u
#define ORTE_DVM_TOOL_MAX_FRAME (256u << 20)

/* Root side: listen at $TMPDIR/herd-<uid>/dvm-<id>.sock (set *path, caller frees) and serve
 * tools from the DVM's loop until orte_dvm_tool_server_stop(). */
OPAL_EXPORT int orte_dvm_tool_server_start(orte_dvm_t *dvm, char **path);
OPAL_EXPORT void orte_dvm_tool_server_stop(void);

/* Tool side: what the DVM told us. */
typedef struct orte_dvm_client orte_dvm_client_t;

/* Read the contact file (as herd-dvm --report-uri writes it), connect, and get the DVM's
 * description. Reports problems (naming the file and what to do) and returns HERD_ERR_SILENT. */
OPAL_EXPORT int orte_dvm_client_connect(const char *uri_file, opal_event_base_t *base,
                                        orte_dvm_client_t **client);
OPAL_EXPORT void orte_dvm_client_close(orte_dvm_client_t *client);
OPAL_EXPORT const orte_allocation_t *orte_dvm_client_allocation(const orte_dvm_client_t *client);
OPAL_EXPORT const orte_inventory_t *orte_dvm_client_inventory(const orte_dvm_client_t *client,
                                                              uint32_t node_index);
OPAL_EXPORT uint32_t orte_dvm_client_radix(const orte_dvm_client_t *client);
/* Whether node node_index can take jobs (orte_dvm_node_up at the root when we connected). */
OPAL_EXPORT bool orte_dvm_client_node_up(const orte_dvm_client_t *client, uint32_t node_index);
OPAL_EXPORT const char *orte_dvm_client_id(const orte_dvm_client_t *client);
/* The DVM's tool socket, as the contact file names it. */
OPAL_EXPORT const char *orte_dvm_client_tool_path(const orte_dvm_client_t *client);
/* dvm_owner.c: whether the contact file is the caller's own: if another user's, says that
 * only its owner may use that DVM (tool: "herdrun", "herd-dvm") and returns HERD_ERR_SILENT. */
OPAL_EXPORT int orte_dvm_contact_check_owner(const char *uri_file, const char *tool);
/* Read only the tool socket's path from a contact file (problems reported: HERD_ERR_SILENT);
 * the caller frees it. */
OPAL_EXPORT int orte_dvm_contact_tool_path(const char *uri_file, char **tool_path);
/* Where the herdrun driving job seq of the DVM with this tool socket lets tools attach to the
 * job's output (herdrun --attach): beside the tool socket, in the user's private folder. */
OPAL_EXPORT int orte_dvm_job_iof_path(const char *tool_path, uint32_t seq, char *path,
                                      size_t size);
/* The job number the root reserved for this tool. */
OPAL_EXPORT uint32_t orte_dvm_client_seq(const orte_dvm_client_t *client);
/* Ask the root to broadcast this launch message. Job errors (and the loss of the DVM) arrive
 * through cb, from the loop. */
OPAL_EXPORT int orte_dvm_client_launch(orte_dvm_client_t *client, const void *message, size_t len,
                                       orte_dvm_job_error_cb_t cb, void *arg);
/* Hear whether the launched job waits for a free session slot (waiting_on: the node) or got
 * its slots and started (waiting_on NULL); from the loop. */
OPAL_EXPORT void orte_dvm_client_set_queue_cb(orte_dvm_client_t *client, orte_dvm_job_queue_cb_t cb,
                                              void *arg);

#endif /* ORTE_RUNTIME_DVM_TOOL_H */
