/* SPDX-License-Identifier: BSD-3-Clause */
/* The map reports of a job mapped on every node (orte/runtime/dvm_map_wire.c): a subtree's
 * message round-tripped, the checksums telling maps apart, herdrun's verdict on a report, and
 * malformed messages rejected with a reason, the output left alone, never a crash. */
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

#define DVM_SIZE 17 /* daemons 1..16 */

static void test_round_trip(void **state)
{
    (void) state;
    /* a subtree: this node's report, one with no processes, one that could not map */
    dvm_map_entry_t in[3] = {{.vpid = 3, .report = sample()},
                             {.vpid = 16, .report = {.job_seq = 7}},
                             {.vpid = 4, .report = {.job_seq = 7, .status = HERD_ERR_SILENT}}};
    uint8_t bytes[DVM_MAP_HEADER_BYTES + 3 * DVM_MAP_ENTRY_BYTES];
    assert_int_equal(dvm_map_message_bytes(3), sizeof(bytes));
    dvm_map_encode(in, 3, bytes);
    dvm_map_entry_t *out = NULL;
    uint32_t count = 0;
    char reason[128];
    assert_int_equal(
        dvm_map_decode(bytes, sizeof(bytes), DVM_SIZE, &out, &count, reason, sizeof(reason)),
        HERD_SUCCESS);
    assert_int_equal(count, 3);
    assert_int_equal(out[0].vpid, 3);
    assert_int_equal(out[0].report.job_seq, 7);
    assert_int_equal(out[0].report.num_procs, 2);
    assert_int_equal(out[0].report.first, 4);
    assert_int_equal(out[0].report.last, 9);
    assert_true(out[0].report.rank_sum == in[0].report.rank_sum &&
                out[0].report.map_sum == in[0].report.map_sum);
    assert_true(out[0].report.map_ns == 5 && out[0].report.total_ns == 9);
    assert_int_equal(out[1].vpid, 16);
    assert_int_equal(out[1].report.num_procs, 0);
    assert_int_equal(out[2].report.status, HERD_ERR_SILENT);
    uint8_t again[sizeof(bytes)];
    dvm_map_encode(out, count, again);
    assert_memory_equal(bytes, again, sizeof(bytes));
    free(out);
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
    dvm_map_entry_t *out = (dvm_map_entry_t *) bytes; /* must stay as it is */
    uint32_t count = 12345;
    char reason[128] = "";
    assert_int_equal(dvm_map_decode(bytes, len, DVM_SIZE, &out, &count, reason, sizeof(reason)),
                     rc);
    assert_true('\0' != reason[0]);
    assert_ptr_equal(out, bytes); /* set only on success */
    assert_int_equal(count, 12345);
}

/* One report of daemon 3 as r, with its last byte cut or one byte more. */
static void expect_entry_rejected(dvm_map_report_t r, uint32_t vpid)
{
    dvm_map_entry_t e = {.vpid = vpid, .report = r};
    uint8_t bytes[DVM_MAP_HEADER_BYTES + DVM_MAP_ENTRY_BYTES];
    dvm_map_encode(&e, 1, bytes);
    expect_rejected(bytes, sizeof(bytes), HERD_ERR_UNPACK_FAILURE);
}

static void test_malformed(void **state)
{
    (void) state;
    dvm_map_report_t r = sample();
    dvm_map_entry_t e = {.vpid = 3, .report = r};
    uint8_t bytes[DVM_MAP_HEADER_BYTES + DVM_MAP_ENTRY_BYTES + 1];
    dvm_map_encode(&e, 1, bytes);
    bytes[sizeof(bytes) - 1] = 0;
    expect_rejected(bytes, sizeof(bytes) - 2, HERD_ERR_UNPACK_FAILURE); /* cut */
    expect_rejected(bytes, sizeof(bytes), HERD_ERR_UNPACK_FAILURE);     /* a byte more */
    expect_rejected(bytes, 4, HERD_ERR_UNPACK_FAILURE);                 /* no header */
    expect_rejected(NULL, 0, HERD_ERR_UNPACK_FAILURE);
    uint8_t none[DVM_MAP_HEADER_BYTES];
    dvm_map_encode(NULL, 0, none);
    expect_rejected(none, sizeof(none), HERD_ERR_UNPACK_FAILURE); /* no report */
    /* a count far above the DVM's size, with the bytes to match it missing */
    uint8_t huge[DVM_MAP_HEADER_BYTES] = {DVM_MAP_WIRE_VERSION, 0xff, 0xff, 0xff, 0xff};
    expect_rejected(huge, sizeof(huge), HERD_ERR_UNPACK_FAILURE);
    dvm_map_encode(&e, 1, bytes);
    bytes[0] = DVM_MAP_WIRE_VERSION + 1;
    expect_rejected(bytes, DVM_MAP_HEADER_BYTES + DVM_MAP_ENTRY_BYTES, HERD_ERR_VERSION_MISMATCH);

    expect_entry_rejected(r, 0);        /* the root maps nothing */
    expect_entry_rejected(r, DVM_SIZE); /* no such daemon */
    dvm_map_report_t bad = r;
    bad.status = 3; /* not a herd status */
    expect_entry_rejected(bad, 3);
    bad = r;
    bad.num_procs = 7; /* 7 ranks in 4..9 */
    expect_entry_rejected(bad, 3);
    bad = r;
    bad.first = 10; /* after last */
    expect_entry_rejected(bad, 3);
    bad = (dvm_map_report_t){.first = 3}; /* no processes but a rank */
    expect_entry_rejected(bad, 3);
    bad = r;
    bad.map_ns = bad.total_ns + 1;
    expect_entry_rejected(bad, 3);
}

/* Every byte of a valid message changed to every value: accepted or rejected, never a crash, and
 * what is accepted encodes to the same bytes. */
static void test_every_byte(void **state)
{
    (void) state;
    dvm_map_entry_t in[2] = {{.vpid = 3, .report = sample()}, {.vpid = 5, .report = sample()}};
    uint8_t valid[DVM_MAP_HEADER_BYTES + 2 * DVM_MAP_ENTRY_BYTES];
    dvm_map_encode(in, 2, valid);
    for (size_t i = 0; i < sizeof(valid); ++i) {
        for (unsigned v = 0; v < 256; ++v) {
            uint8_t bytes[sizeof(valid)], again[sizeof(valid)];
            memcpy(bytes, valid, sizeof(bytes));
            bytes[i] = (uint8_t) v;
            dvm_map_entry_t *out = NULL;
            uint32_t count = 0;
            char reason[128];
            if (HERD_SUCCESS == dvm_map_decode(bytes, sizeof(bytes), DVM_SIZE, &out, &count, reason,
                                               sizeof(reason))) {
                assert_int_equal(count, 2);
                dvm_map_encode(out, count, again);
                assert_memory_equal(bytes, again, sizeof(bytes));
                free(out);
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
