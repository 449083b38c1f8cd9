/* SPDX-License-Identifier: BSD-3-Clause */
/* uint32 sequences as runs (start, step 0 or 1, length): see runs.h. */
#include "herd_config.h"

#include <stdbool.h>
#include <stdlib.h>

#include "orte/util/runs.h"

/* Bytes a packed run takes at least (three uint32 with their type bytes): bounds the run count
 * by what the buffer holds before anything is allocated. */
#define RUNS_MIN_RUN_BYTES 15u

typedef struct {
    uint32_t start;
    uint32_t step;
    uint32_t length;
} run_t;

/* Whether value comes after prev in a run of this step. */
static bool follows(uint32_t prev, uint32_t value, uint32_t step)
{
    return 0 == step ? value == prev : prev != UINT32_MAX && value == prev + 1u;
}

/* The run starting at values[i]: as long as the step between neighbours stays 0 or 1. */
static run_t next_run(const uint32_t *values, size_t n, size_t i)
{
    run_t run = {.start = values[i], .step = 0, .length = 1};
    if (i + 1 < n &&
        (follows(values[i], values[i + 1], 0) || follows(values[i], values[i + 1], 1))) {
        run.step = values[i + 1] == values[i] ? 0 : 1;
        while (i + run.length < n && run.length < UINT32_MAX &&
               follows(values[i + run.length - 1], values[i + run.length], run.step)) {
            run.length++;
        }
    }
    return run;
}

int orte_runs_pack(opal_buffer_t *buffer, const uint32_t *values, size_t n)
{
    uint32_t count = 0;
    for (size_t i = 0; i < n; i += next_run(values, n, i).length) {
        count++;
    }
    int rc = opal_buffer_pack_uint32(buffer, count);
    for (size_t i = 0; HERD_SUCCESS == rc && i < n;) {
        run_t run = next_run(values, n, i);
        if (HERD_SUCCESS == (rc = opal_buffer_pack_uint32(buffer, run.start)) &&
            HERD_SUCCESS == (rc = opal_buffer_pack_uint32(buffer, run.step))) {
            rc = opal_buffer_pack_uint32(buffer, run.length);
        }
        i += run.length;
    }
    return rc;
}

/* Whether the packer would have continued prev into a run starting at start: then the two are
 * not canonical. */
static bool continues(const run_t *prev, uint32_t start)
{
    uint32_t last = prev->start + prev->step * (prev->length - 1u);
    if (prev->length > 1) {
        return follows(last, start, prev->step);
    }
    return follows(last, start, 0) || follows(last, start, 1);
}

int orte_runs_unpack(opal_buffer_t *buffer, size_t max_values, uint32_t **values_out, size_t *n_out)
{
    uint32_t count = 0;
    run_t *runs = NULL;
    uint32_t *values = NULL;
    size_t total = 0;
    int rc = opal_buffer_unpack_uint32(buffer, &count);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (count > opal_buffer_remaining(buffer) / RUNS_MIN_RUN_BYTES) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    runs = malloc(((size_t) count + 1) * sizeof(*runs));
    if (NULL == runs) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t r = 0; r < count; ++r) {
        run_t *run = &runs[r];
        if (HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &run->start)) ||
            HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &run->step)) ||
            HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &run->length))) {
            goto out;
        }
        rc = HERD_ERR_UNPACK_FAILURE;
        if (0 == run->length || run->step > 1 || (1 == run->length && 0 != run->step) ||
            (uint64_t) run->start + (uint64_t) run->step * (run->length - 1u) > UINT32_MAX ||
            run->length > max_values - total || (r > 0 && continues(&runs[r - 1], run->start))) {
            goto out;
        }
        total += run->length;
    }
    rc = HERD_SUCCESS;
    if (total > 0) {
        values = malloc(total * sizeof(*values));
        if (NULL == values) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
            goto out;
        }
    }
    size_t k = 0;
    for (uint32_t r = 0; r < count; ++r) {
        for (uint32_t i = 0; i < runs[r].length; ++i) {
            values[k++] = runs[r].start + runs[r].step * i;
        }
    }
    *values_out = values;
    *n_out = total;

out:
    free(runs);
    return rc;
}
