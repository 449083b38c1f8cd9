/* SPDX-License-Identifier: BSD-3-Clause */
/* The table of inventories by kind (orte/runtime/dvm_kinds_wire.c): identical records kept once,
 * ranges merged and checked for coverage, the wire message round-tripped, and malformed
 * messages rejected with a reason, never a crash. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "orte/runtime/dvm_kinds.h"

static const uint8_t record_a[] = "kind A: 32 cores";
static const uint8_t record_b[] = "kind B: 4 cores";

static void test_same_record_once(void **state)
{
    dvm_kinds_t *k = dvm_kinds_table_new();
    char reason[256];
    assert_non_null(k);
    /* a subtree's records arrive in any order: 1, 3 (B), 2, 4..7, 9, 8 */
    assert_int_equal(dvm_kinds_add(k, record_a, sizeof(record_a), 1, 1), HERD_SUCCESS);
    assert_int_equal(dvm_kinds_add(k, record_b, sizeof(record_b), 3, 1), HERD_SUCCESS);
    assert_int_equal(dvm_kinds_add(k, record_a, sizeof(record_a), 2, 1), HERD_SUCCESS);
    assert_int_equal(dvm_kinds_add(k, record_a, sizeof(record_a), 4, 4), HERD_SUCCESS);
    assert_int_equal(dvm_kinds_add(k, record_a, sizeof(record_a), 9, 1), HERD_SUCCESS);
    assert_int_equal(dvm_kinds_add(k, record_a, sizeof(record_a), 8, 1), HERD_SUCCESS);
    assert_int_equal(k->num_kinds, 2);
    dvm_kinds_normalize(k);
    /* A: 1-2, 4-9 (two ranges once merged); B: 3 */
    assert_int_equal(k->kinds[0].num_ranges, 2);
    assert_int_equal(k->kinds[0].ranges[0].first, 1);
    assert_int_equal(k->kinds[0].ranges[0].count, 2);
    assert_int_equal(k->kinds[0].ranges[1].first, 4);
    assert_int_equal(k->kinds[0].ranges[1].count, 6);
    assert_int_equal(k->kinds[1].num_ranges, 1);
    assert_true(dvm_kinds_complete(k, 10, reason, sizeof(reason)));
    /* 11 daemons: vpid 10 is missing */
    assert_false(dvm_kinds_complete(k, 11, reason, sizeof(reason)));
    assert_non_null(strstr(reason, "daemons 1 to 10"));
    dvm_kinds_table_free(k);
}

static void test_overlap_is_incomplete(void **state)
{
    dvm_kinds_t *k = dvm_kinds_table_new();
    char reason[256];
    assert_int_equal(dvm_kinds_add(k, record_a, sizeof(record_a), 1, 3), HERD_SUCCESS);
    assert_int_equal(dvm_kinds_add(k, record_b, sizeof(record_b), 3, 1), HERD_SUCCESS);
    dvm_kinds_normalize(k);
    /* vpid 3 twice, 4 missing */
    assert_false(dvm_kinds_complete(k, 5, reason, sizeof(reason)));
    dvm_kinds_table_free(k);
}

static void test_round_trip(void **state)
{
    dvm_kinds_t *k = dvm_kinds_table_new();
    dvm_kinds_t *back = dvm_kinds_table_new();
    opal_buffer_t buffer;
    char reason[256];
    opal_buffer_init(&buffer);
    assert_int_equal(dvm_kinds_add(k, record_a, sizeof(record_a), 1, 1000), HERD_SUCCESS);
    assert_int_equal(dvm_kinds_add(k, record_b, sizeof(record_b), 1001, 24), HERD_SUCCESS);
    assert_int_equal(dvm_kinds_pack(k, &buffer), HERD_SUCCESS);
    /* a thousand identical nodes cost one record and one range */
    assert_true(buffer.used < 2 * (sizeof(record_a) + sizeof(record_b)) + 64);
    assert_int_equal(dvm_kinds_decode(buffer.base, buffer.used, 1025, back, reason, sizeof(reason)),
                     HERD_SUCCESS);
    assert_int_equal(back->num_kinds, 2);
    assert_memory_equal(back->kinds[1].record, record_b, sizeof(record_b));
    assert_int_equal(back->kinds[1].ranges[0].first, 1001);
    assert_true(dvm_kinds_complete(back, 1025, reason, sizeof(reason)));
    /* decoding adds to what is there: the same subtree twice still has two kinds */
    assert_int_equal(dvm_kinds_decode(buffer.base, buffer.used, 1025, back, reason, sizeof(reason)),
                     HERD_SUCCESS);
    assert_int_equal(back->num_kinds, 2);
    opal_buffer_destruct(&buffer);
    dvm_kinds_table_free(k);
    dvm_kinds_table_free(back);
}

/* A message built by hand: version, kinds, then one kind with the given range. */
static void build(opal_buffer_t *buffer, uint8_t version, uint32_t num_kinds, size_t record_len,
                  uint32_t first, uint32_t count)
{
    opal_buffer_init(buffer);
    assert_int_equal(opal_buffer_pack_uint8(buffer, version), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_uint32(buffer, num_kinds), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_bytes(buffer, record_a, record_len), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_uint32(buffer, 1), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_uint32(buffer, first), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_uint32(buffer, count), HERD_SUCCESS);
}

static void expect_rejected(opal_buffer_t *buffer, uint32_t size, int status, const char *why)
{
    dvm_kinds_t *k = dvm_kinds_table_new();
    char reason[256] = "";
    assert_int_equal(dvm_kinds_decode(buffer->base, buffer->used, size, k, reason, sizeof(reason)),
                     status);
    assert_non_null(strstr(reason, why));
    dvm_kinds_table_free(k);
    opal_buffer_destruct(buffer);
}

static void test_malformed(void **state)
{
    opal_buffer_t buffer;
    build(&buffer, 2, 1, sizeof(record_a), 1, 1);
    expect_rejected(&buffer, 8, HERD_ERR_VERSION_MISMATCH, "version 2");
    build(&buffer, DVM_KINDS_WIRE_VERSION, 0, sizeof(record_a), 1, 1);
    expect_rejected(&buffer, 8, HERD_ERR_UNPACK_FAILURE, "0 kinds");
    build(&buffer, DVM_KINDS_WIRE_VERSION, 9, sizeof(record_a), 1, 1);
    expect_rejected(&buffer, 8, HERD_ERR_UNPACK_FAILURE, "9 kinds for 8 daemons");
    build(&buffer, DVM_KINDS_WIRE_VERSION, 1, 0, 1, 1);
    expect_rejected(&buffer, 8, HERD_ERR_UNPACK_FAILURE, "truncated or empty");
    build(&buffer, DVM_KINDS_WIRE_VERSION, 1, sizeof(record_a), 0, 1);
    expect_rejected(&buffer, 8, HERD_ERR_UNPACK_FAILURE, "bad range (0, 1)");
    build(&buffer, DVM_KINDS_WIRE_VERSION, 1, sizeof(record_a), 7, 2);
    expect_rejected(&buffer, 8, HERD_ERR_UNPACK_FAILURE, "bad range (7, 2)");
    build(&buffer, DVM_KINDS_WIRE_VERSION, 1, sizeof(record_a), 1, UINT32_MAX);
    expect_rejected(&buffer, 8, HERD_ERR_UNPACK_FAILURE, "bad range");
    /* two kinds announced, one there */
    build(&buffer, DVM_KINDS_WIRE_VERSION, 2, sizeof(record_a), 1, 1);
    expect_rejected(&buffer, 8, HERD_ERR_UNPACK_FAILURE, "kind 1 is truncated");
    /* the same record twice in one message (the packer merges them): its ranges would add up */
    build(&buffer, DVM_KINDS_WIRE_VERSION, 2, sizeof(record_a), 1, 3);
    assert_int_equal(opal_buffer_pack_bytes(&buffer, record_a, sizeof(record_a)), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_uint32(&buffer, 1), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_uint32(&buffer, 4), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_uint32(&buffer, 2), HERD_SUCCESS);
    expect_rejected(&buffer, 8, HERD_ERR_UNPACK_FAILURE, "kind 1 repeats");
    build(&buffer, DVM_KINDS_WIRE_VERSION, 1, sizeof(record_a), 1, 1);
    assert_int_equal(opal_buffer_pack_uint8(&buffer, 0), HERD_SUCCESS);
    expect_rejected(&buffer, 8, HERD_ERR_UNPACK_FAILURE, "after the last kind");
    /* every prefix of a good message is rejected, none crashes */
    build(&buffer, DVM_KINDS_WIRE_VERSION, 1, sizeof(record_a), 1, 7);
    for (size_t cut = 0; cut < buffer.used; ++cut) {
        dvm_kinds_t *k = dvm_kinds_table_new();
        char reason[256];
        assert_int_not_equal(dvm_kinds_decode(buffer.base, cut, 8, k, reason, sizeof(reason)),
                             HERD_SUCCESS);
        dvm_kinds_table_free(k);
    }
    opal_buffer_destruct(&buffer);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_record_once),
        cmocka_unit_test(test_overlap_is_incomplete),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
