/* SPDX-License-Identifier: BSD-3-Clause */
/* uint32 sequences as runs (orte/util/runs.c): round trips, the size a launch message's node
 * arrays take, and every non-canonical or malformed encoding rejected. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "orte/util/runs.h"

static void round_trip(const uint32_t *values, size_t n, size_t expected_runs)
{
    opal_buffer_t buffer;
    uint32_t *got = NULL;
    uint32_t runs = 0;
    size_t got_n = 99;
    opal_buffer_init(&buffer);
    assert_int_equal(orte_runs_pack(&buffer, values, n), HERD_SUCCESS);
    assert_int_equal(opal_buffer_unpack_uint32(&buffer, &runs), HERD_SUCCESS);
    assert_int_equal(runs, expected_runs);
    buffer.unpack_offset = 0;
    assert_int_equal(orte_runs_unpack(&buffer, n, &got, &got_n), HERD_SUCCESS);
    assert_int_equal(got_n, n);
    assert_int_equal(opal_buffer_remaining(&buffer), 0);
    if (n > 0) {
        assert_memory_equal(got, values, n * sizeof(*values));
    }
    free(got);
    opal_buffer_destruct(&buffer);
}

static void test_round_trips(void **state)
{
    static const uint32_t one[] = {7};
    static const uint32_t same[] = {32, 32, 32, 32};
    static const uint32_t counting[] = {0, 1, 2, 3, 4};
    static const uint32_t mixed[] = {0, 1, 2, 5, 5, 5, 9, 11, 12};
    static const uint32_t edges[] = {UINT32_MAX, UINT32_MAX, 0, UINT32_MAX - 1, UINT32_MAX};
    static const uint32_t steps[] = {5, 5, 6, 7}; /* greedy: (5,0,2) then (6,1,2) */
    round_trip(NULL, 0, 0);
    round_trip(one, 1, 1);
    round_trip(same, 4, 1);
    round_trip(counting, 5, 1);
    round_trip(mixed, 9, 4);
    round_trip(edges, 5, 3);
    round_trip(steps, 4, 2);
}

/* What a launch message carries for 16,384 nodes of one kind: a run each, not 16,384 values. */
static void test_size_follows_runs(void **state)
{
    enum { NODES = 16384 };
    uint32_t *index = malloc(NODES * sizeof(*index));
    uint32_t *slots = malloc(NODES * sizeof(*slots));
    opal_buffer_t buffer;
    assert_non_null(index);
    assert_non_null(slots);
    for (uint32_t i = 0; i < NODES; ++i) {
        index[i] = i;
        slots[i] = 32;
    }
    opal_buffer_init(&buffer);
    assert_int_equal(orte_runs_pack(&buffer, index, NODES), HERD_SUCCESS);
    assert_int_equal(orte_runs_pack(&buffer, slots, NODES), HERD_SUCCESS);
    assert_true(buffer.used <= 2 * (5 + 15));
    uint32_t *got = NULL;
    size_t n = 0;
    assert_int_equal(orte_runs_unpack(&buffer, NODES, &got, &n), HERD_SUCCESS);
    assert_int_equal(n, NODES);
    assert_int_equal(got[NODES - 1], NODES - 1);
    free(got);
    /* at most NODES - 1 values: refused */
    assert_int_equal(orte_runs_unpack(&buffer, NODES - 1, &got, &n), HERD_ERR_UNPACK_FAILURE);
    opal_buffer_destruct(&buffer);
    free(index);
    free(slots);
}

/* A message of count runs, each given as (start, step, length). */
static int unpack_runs(const uint32_t *triples, uint32_t count, size_t max_values)
{
    opal_buffer_t buffer;
    uint32_t *got = (uint32_t *) &buffer; /* must stay untouched on failure */
    size_t n = 99;
    opal_buffer_init(&buffer);
    assert_int_equal(opal_buffer_pack_uint32(&buffer, count), HERD_SUCCESS);
    for (uint32_t i = 0; i < 3 * count; ++i) {
        assert_int_equal(opal_buffer_pack_uint32(&buffer, triples[i]), HERD_SUCCESS);
    }
    int rc = orte_runs_unpack(&buffer, max_values, &got, &n);
    if (HERD_SUCCESS == rc) {
        free(got);
    } else {
        assert_ptr_equal(got, (uint32_t *) &buffer);
        assert_int_equal(n, 99);
    }
    opal_buffer_destruct(&buffer);
    return rc;
}

static void test_malformed(void **state)
{
    static const uint32_t good[] = {0, 1, 4, 9, 0, 2};
    static const uint32_t step2[] = {0, 2, 4};
    static const uint32_t empty[] = {0, 0, 0};
    static const uint32_t single_step[] = {3, 1, 1};
    static const uint32_t overflow[] = {UINT32_MAX - 1, 1, 3};
    static const uint32_t mergeable_count[] = {0, 1, 2, 2, 1, 2};  /* 0,1 then 2,3 */
    static const uint32_t mergeable_same[] = {4, 0, 2, 4, 0, 1};   /* 4,4 then 4 */
    static const uint32_t mergeable_single[] = {4, 0, 1, 5, 0, 1}; /* 4 then 5 */
    static const uint32_t not_mergeable[] = {4, 0, 2, 5, 0, 1};    /* 4,4 then 5: fine */
    assert_int_equal(unpack_runs(good, 2, 6), HERD_SUCCESS);
    assert_int_equal(unpack_runs(good, 2, 5), HERD_ERR_UNPACK_FAILURE); /* too many values */
    assert_int_equal(unpack_runs(step2, 1, 8), HERD_ERR_UNPACK_FAILURE);
    assert_int_equal(unpack_runs(empty, 1, 8), HERD_ERR_UNPACK_FAILURE);
    assert_int_equal(unpack_runs(single_step, 1, 8), HERD_ERR_UNPACK_FAILURE);
    assert_int_equal(unpack_runs(overflow, 1, 8), HERD_ERR_UNPACK_FAILURE);
    assert_int_equal(unpack_runs(mergeable_count, 2, 8), HERD_ERR_UNPACK_FAILURE);
    assert_int_equal(unpack_runs(mergeable_same, 2, 8), HERD_ERR_UNPACK_FAILURE);
    assert_int_equal(unpack_runs(mergeable_single, 2, 8), HERD_ERR_UNPACK_FAILURE);
    assert_int_equal(unpack_runs(not_mergeable, 2, 8), HERD_SUCCESS);
    /* a count the buffer cannot hold is refused before anything is allocated */
    assert_int_equal(unpack_runs(good, 0, 6), HERD_SUCCESS);
    opal_buffer_t buffer;
    uint32_t *got = NULL;
    size_t n = 0;
    opal_buffer_init(&buffer);
    assert_int_equal(opal_buffer_pack_uint32(&buffer, UINT32_MAX), HERD_SUCCESS);
    assert_int_equal(orte_runs_unpack(&buffer, SIZE_MAX, &got, &n), HERD_ERR_UNPACK_FAILURE);
    opal_buffer_destruct(&buffer);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_size_follows_runs),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
