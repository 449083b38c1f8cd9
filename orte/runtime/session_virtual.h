/* SPDX-License-Identifier: BSD-3-Clause */
/* A virtual session: a session daemon's map of a job computed inside its node daemon's process,
 * without forking one (herdrun --do-not-launch --mca herdrun_map_everywhere 1). */
#ifndef ORTE_RUNTIME_SESSION_VIRTUAL_H
#define ORTE_RUNTIME_SESSION_VIRTUAL_H

#include <stdint.h>

#include "orte/runtime/dvm_map.h"
#include "orte/runtime/job.h"
#include "orte/util/inventory.h"

/* Map the job as the session daemon of candidate my_candidate would (the same node table, apps
 * and mapper: orte/runtime/session.c, session_map.c), with no job database: count and checksum
 * the candidate's processes into *report (job_seq, status and the times included). The rmaps
 * framework must be open. inventories: one per candidate (names, slots, topologies are what
 * count). A job the mapper refuses gives the mapper's status in report->status (it said why on
 * stderr) and HERD_SUCCESS; only a failure to make the node table is returned. */
int orte_session_virtual_map(const orte_job_launch_t *launch, orte_inventory_t *const *inventories,
                             uint32_t my_candidate, dvm_map_report_t *report);

#endif /* ORTE_RUNTIME_SESSION_VIRTUAL_H */
