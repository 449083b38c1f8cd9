/* SPDX-License-Identifier: BSD-3-Clause */
/* The map report of a job mapped on every node (orte/runtime/dvm_map_wire.c): round-tripped,
 * its checksums telling maps apart, and malformed reports rejected with a reason, the output
 * left alone, never a crash. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "orte/runtime/dvm_map.h"

static orte_rmaps_proc_t proc_at(uint32_t rank, uint32_t local_rank, const char *cpuset)
{
    return (orte_rmaps_proc_t){.rank = rank,
                               .local_rank = local_rank,
                               .node_rank = local_rank,
                               .bound = NULL != cpuset,
                               .cpuset = NULL != cpuset ? cpuset : "0-63",
                               .locality = "node"};
}

static dvm_map_report_t sample(void)
{
    dvm_map_report_t r = {.job_seq = 7, .status = HERD_SUCCESS, .map_ns = 5, .total_ns = 9};
    orte_rmaps_proc_t a = proc_at(4, 0, "0"), b = proc_at(9, 1, "1");
    dvm_map_report_add(&r, &a);
    dvm_map_report_add(&r, &b);
    return r;
}

static void test_round_trip(void **state)
{
    (void) state;
    dvm_map_report_t r = sample(), back;
    uint8_t bytes[DVM_MAP_REPORT_BYTES];
    char reason[128];
    assert_int_equal(r.num_procs, 2);
    assert_int_equal(r.first, 4);
    assert_int_equal(r.last, 9);
    dvm_map_report_encode(&r, bytes);
    assert_int_equal(dvm_map_report_decode(bytes, sizeof(bytes), &back, reason, sizeof(reason)),
                     HERD_SUCCESS);
    uint8_t again[DVM_MAP_REPORT_BYTES];
    dvm_map_report_encode(&back, again);
    assert_memory_equal(bytes, again, sizeof(bytes));
    assert_int_equal(back.job_seq, 7);
    assert_int_equal(back.last, 9);
    assert_true(back.rank_sum == r.rank_sum && back.map_sum == r.map_sum);
    assert_true(back.map_ns == 5 && back.total_ns == 9);
    /* a node without processes, and a node that could not map */
    dvm_map_report_t none = {.job_seq = 7}, failed = {.job_seq = 7, .status = HERD_ERR_SILENT};
    dvm_map_report_encode(&none, bytes);
    assert_int_equal(dvm_map_report_decode(bytes, sizeof(bytes), &back, reason, sizeof(reason)),
                     HERD_SUCCESS);
    assert_int_equal(back.num_procs, 0);
    dvm_map_report_encode(&failed, bytes);
    assert_int_equal(dvm_map_report_decode(bytes, sizeof(bytes), &back, reason, sizeof(reason)),
                     HERD_SUCCESS);
    assert_int_equal(back.status, HERD_ERR_SILENT);
}

/* The nodes' rank sums add up to the job's whatever the split; a rank twice or missing, another
 * binding or local rank, shows. */
static void test_checksums(void **state)
{
    (void) state;
    dvm_map_report_t whole = {0}, left = {0}, right = {0}, dup = {0};
    for (uint32_t rank = 0; rank < 100; ++rank) {
        orte_rmaps_proc_t p = proc_at(rank, rank % 10, "3");
        dvm_map_report_add(&whole, &p);
        dvm_map_report_add(rank % 3 ? &left : &right, &p);
        orte_rmaps_proc_t q = proc_at(rank == 50 ? 51 : rank, rank % 10, "3");
        dvm_map_report_add(&dup, &q);
    }
    assert_true(left.rank_sum + right.rank_sum == whole.rank_sum);
    assert_true(left.map_sum + right.map_sum == whole.map_sum);
    assert_int_equal(left.num_procs + right.num_procs, 100);
    assert_true(dup.rank_sum != whole.rank_sum); /* 51 twice, 50 never */
    orte_rmaps_proc_t p = proc_at(5, 0, "0-1"), q = proc_at(5, 0, "0"), u = proc_at(5, 1, "0");
    assert_true(dvm_map_proc_hash(&p) != dvm_map_proc_hash(&q));
    assert_true(dvm_map_proc_hash(&q) != dvm_map_proc_hash(&u));
    orte_rmaps_proc_t unbound = proc_at(5, 0, NULL);
    assert_true(dvm_map_proc_hash(&unbound) != dvm_map_proc_hash(&q));
}

/* What herdrun says of a node's report, against its own map for the node. */
static void test_compare(void **state)
{
    (void) state;
    dvm_map_report_t want = sample(), got = sample();
    assert_int_equal(dvm_map_report_compare(&got, &want, 7), DVM_MAP_AGREES);
    assert_int_equal(dvm_map_report_compare(&got, &want, 8), DVM_MAP_OTHER_JOB);
    got.status = HERD_ERR_SILENT;
    assert_int_equal(dvm_map_report_compare(&got, &want, 7), DVM_MAP_FAILED);
    got = sample();
    orte_rmaps_proc_t extra = proc_at(11, 2, "2");
    dvm_map_report_add(&got, &extra);
    assert_int_equal(dvm_map_report_compare(&got, &want, 7), DVM_MAP_OTHER_RANKS);
    /* built anew from the same processes: the same report */
    dvm_map_report_t other = {.job_seq = 7};
    orte_rmaps_proc_t a = proc_at(4, 0, "0"), c = proc_at(9, 1, "1");
    dvm_map_report_add(&other, &a);
    dvm_map_report_add(&other, &c);
    assert_int_equal(dvm_map_report_compare(&other, &want, 7), DVM_MAP_AGREES);
    /* the same count and range, another rank inside it */
    other = (dvm_map_report_t){.job_seq = 7, .first = 4, .last = 9, .num_procs = 2};
    other.rank_sum = dvm_map_mix(4) + dvm_map_mix(5);
    assert_int_equal(dvm_map_report_compare(&other, &want, 7), DVM_MAP_OTHER_RANKS);
    /* the same ranks bound elsewhere */
    dvm_map_report_t moved = {.job_seq = 7};
    orte_rmaps_proc_t m1 = proc_at(4, 0, "0"), m2 = proc_at(9, 1, "2");
    dvm_map_report_add(&moved, &m1);
    dvm_map_report_add(&moved, &m2);
    assert_int_equal(dvm_map_report_compare(&moved, &want, 7), DVM_MAP_OTHER_BINDING);
}

static void expect_rejected(const uint8_t *bytes, size_t len, int rc)
{
    dvm_map_report_t out, before;
    memset(&out, 0xa5, sizeof(out));
    before = out;
    char reason[128] = "";
    assert_int_equal(dvm_map_report_decode(bytes, len, &out, reason, sizeof(reason)), rc);
    assert_true('\0' != reason[0]);
    assert_memory_equal(&out, &before, sizeof(out)); /* set only on success */
}

static void test_malformed(void **state)
{
    (void) state;
    dvm_map_report_t r = sample();
    uint8_t bytes[DVM_MAP_REPORT_BYTES + 1];
    dvm_map_report_encode(&r, bytes);
    bytes[DVM_MAP_REPORT_BYTES] = 0;
    expect_rejected(bytes, DVM_MAP_REPORT_BYTES - 1, HERD_ERR_UNPACK_FAILURE);
    expect_rejected(bytes, DVM_MAP_REPORT_BYTES + 1, HERD_ERR_UNPACK_FAILURE);
    expect_rejected(bytes, 0, HERD_ERR_UNPACK_FAILURE);
    expect_rejected(NULL, 0, HERD_ERR_UNPACK_FAILURE);

    dvm_map_report_t bad = r;
    bad.status = 3; /* not a herd status */
    dvm_map_report_encode(&bad, bytes);
    expect_rejected(bytes, DVM_MAP_REPORT_BYTES, HERD_ERR_UNPACK_FAILURE);
    bad = r;
    bad.num_procs = 7; /* 7 ranks in 4..9 */
    dvm_map_report_encode(&bad, bytes);
    expect_rejected(bytes, DVM_MAP_REPORT_BYTES, HERD_ERR_UNPACK_FAILURE);
    bad = r;
    bad.first = 10; /* after last */
    dvm_map_report_encode(&bad, bytes);
    expect_rejected(bytes, DVM_MAP_REPORT_BYTES, HERD_ERR_UNPACK_FAILURE);
    bad = (dvm_map_report_t){.first = 3}; /* no processes but a rank */
    dvm_map_report_encode(&bad, bytes);
    expect_rejected(bytes, DVM_MAP_REPORT_BYTES, HERD_ERR_UNPACK_FAILURE);
    bad = r;
    bad.map_ns = bad.total_ns + 1;
    dvm_map_report_encode(&bad, bytes);
    expect_rejected(bytes, DVM_MAP_REPORT_BYTES, HERD_ERR_UNPACK_FAILURE);
    dvm_map_report_encode(&r, bytes);
    bytes[0] = DVM_MAP_WIRE_VERSION + 1;
    expect_rejected(bytes, DVM_MAP_REPORT_BYTES, HERD_ERR_VERSION_MISMATCH);
}

/* Every byte of a valid report changed to every value: accepted or rejected, never a crash, and
 * what is accepted encodes to the same bytes. */
static void test_every_byte(void **state)
{
    (void) state;
    dvm_map_report_t r = sample();
    uint8_t valid[DVM_MAP_REPORT_BYTES];
    dvm_map_report_encode(&r, valid);
    for (size_t i = 0; i < sizeof(valid); ++i) {
        for (unsigned v = 0; v < 256; ++v) {
            uint8_t bytes[DVM_MAP_REPORT_BYTES], again[DVM_MAP_REPORT_BYTES];
            memcpy(bytes, valid, sizeof(bytes));
            bytes[i] = (uint8_t) v;
            dvm_map_report_t out;
            char reason[128];
            if (HERD_SUCCESS ==
                dvm_map_report_decode(bytes, sizeof(bytes), &out, reason, sizeof(reason))) {
                dvm_map_report_encode(&out, again);
                assert_memory_equal(bytes, again, sizeof(bytes));
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip), cmocka_unit_test(test_checksums),
        cmocka_unit_test(test_compare),    cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_every_byte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
