/* SPDX-License-Identifier: BSD-3-Clause */
/* A sequence of uint32 values packed as runs: each run a start, a step (0: repeated, 1:
 * counting up) and a length. What a launch message carries per node (indexes, slots) is mostly
 * a few runs, so its size follows the runs, not the nodes. */
#ifndef ORTE_UTIL_RUNS_H
#define ORTE_UTIL_RUNS_H

#include <stddef.h>
#include <stdint.h>

#include "opal/dss/buffer.h"

/* Pack values[0..n-1] as the greedy (longest-first) runs: one canonical encoding per sequence. */
OPAL_EXPORT int orte_runs_pack(opal_buffer_t *buffer, const uint32_t *values, size_t n);
/* Unpack a sequence of at most max_values values into a malloc'd array (NULL when empty).
 * HERD_ERR_UNPACK_FAILURE for malformed input: a step other than 0 or 1, an empty run, a run
 * past UINT32_MAX, more values than max_values, or runs that are not the canonical ones (two
 * that the packer would have made one). *values and *n set only on success. */
OPAL_EXPORT int orte_runs_unpack(opal_buffer_t *buffer, size_t max_values, uint32_t **values,
                                 size_t *n);

#endif /* ORTE_UTIL_RUNS_H */
