/* SPDX-License-Identifier: BSD-3-Clause */
/* The hand-off from a node's daemon (or from herdrun on its own host) to a job's session daemon:
 * the environment a `herdd --session` is started with, and the segment that carries the job.
 * Both sides use only this file: the node daemon packs and writes, the session daemon reads
 * and parses. */
#ifndef ORTE_RUNTIME_SESSION_HANDOFF_H
#define ORTE_RUNTIME_SESSION_HANDOFF_H

#include <stddef.h>
#include <stdint.h>

#include "opal/dss/buffer.h"
#include "opal/visibility.h"
#include "orte/runtime/job.h"
#include "orte/util/inventory.h"

/* How a session daemon learns what its daemon gives it (environment of `herdd --session`). */
#define ORTE_SESSION_ENV_SEGMENT     "HERD_SESSION_SEGMENT"    /* the segment's shm name */
#define ORTE_SESSION_ENV_LISTEN_FD   "HERD_SESSION_LISTEN_FD"  /* its static endpoint's listener */
#define ORTE_SESSION_ENV_DAEMON      "HERD_SESSION_DAEMON_PID" /* die with this process */
#define ORTE_SESSION_SEGMENT_VERSION 1u

/* What the segment says: the launch message as received, the node it runs on (its name and
 * its index among the job's candidates) and every candidate's inventory. */
typedef struct orte_session_handoff {
    char *node_name;
    uint32_t my_candidate;
    orte_job_launch_t *launch;      /* its xml_pairs end with this node's own topology */
    orte_inventory_t **inventories; /* per candidate (launch->num_candidates) */
} orte_session_handoff_t;

/* Pack the segment: the launch message's bytes, this node, the candidates' packed inventories,
 * and this node's topology (signature, XML). */
OPAL_EXPORT int orte_session_handoff_pack(opal_buffer_t *buffer, const char *node_name,
                                          uint32_t my_candidate, const void *launch,
                                          size_t launch_len, const uint8_t *const *inventories,
                                          const size_t *lengths, uint32_t num_candidates,
                                          const char *signature, const char *xml);
/* Write a packed segment into a new shared-memory object name (mode 0600, O_EXCL). */
OPAL_EXPORT int orte_session_handoff_write(const char *name, const opal_buffer_t *segment);
/* Read the shared-memory object name into buffer, and unlink it at once: the session daemon
 * owns it from then on, even when it is killed the next moment. */
OPAL_EXPORT int orte_session_handoff_read(const char *name, opal_buffer_t *buffer);
/* Decode a segment. HERD_ERR_VERSION_MISMATCH for another segment version,
 * HERD_ERR_UNPACK_FAILURE (or a buffer error) for malformed input; *handoff set only on
 * success, released with orte_session_handoff_destruct. */
OPAL_EXPORT int orte_session_handoff_parse(opal_buffer_t *buffer, orte_session_handoff_t *handoff);
OPAL_EXPORT void orte_session_handoff_destruct(orte_session_handoff_t *handoff);

#endif /* ORTE_RUNTIME_SESSION_HANDOFF_H */
