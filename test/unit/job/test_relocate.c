/* SPDX-License-Identifier: BSD-3-Clause */
/* Moving a lost node's ranks (orte/runtime/relocate.h): which node takes them, and the one
 * message format of RELOCATE, RELOCATED and MOVED (what is packed comes back; every truncation,
 * wrong version, oversized count or trailing byte is refused without a crash). */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "orte/runtime/relocate.h"

/* ------------------------------------------------------------------------------------------ */
/* the choice */

static void test_choose_most_free(void **state)
{
    orte_relocate_node_t nodes[] = {
        {.slots = 4, .used = 3, .live = true},
        {.slots = 4, .used = 1, .live = true},  /* 3 free: the most */
        {.slots = 8, .used = 0, .live = false}, /* the lost one */
        {.slots = 4, .used = 2, .live = true},
    };
    assert_int_equal(orte_relocate_choose(nodes, 4, 1, false), 1);
    assert_int_equal(orte_relocate_choose(nodes, 4, 3, false), 1);
    /* room for none of them */
    assert_int_equal(orte_relocate_choose(nodes, 4, 4, false), UINT32_MAX);
    /* oversubscribing: still the most free */
    assert_int_equal(orte_relocate_choose(nodes, 4, 4, true), 1);
}

static void test_choose_ties_and_edges(void **state)
{
    orte_relocate_node_t nodes[] = {
        {.slots = 2, .used = 2, .live = true},
        {.slots = 3, .used = 1, .live = true}, /* 2 free */
        {.slots = 2, .used = 0, .live = true}, /* 2 free: a tie, the lower index wins */
    };
    assert_int_equal(orte_relocate_choose(nodes, 3, 2, false), 1);
    /* every node full: only with oversubscribe, then the least overfull (ties: lowest) */
    orte_relocate_node_t full[] = {
        {.slots = 1, .used = 2, .live = true},
        {.slots = 1, .used = 1, .live = true},
        {.slots = 1, .used = 1, .live = true},
    };
    assert_int_equal(orte_relocate_choose(full, 3, 1, false), UINT32_MAX);
    assert_int_equal(orte_relocate_choose(full, 3, 1, true), 1);
    /* nothing live, nothing at all */
    orte_relocate_node_t dead[] = {{.slots = 9, .used = 0, .live = false}};
    assert_int_equal(orte_relocate_choose(dead, 1, 1, true), UINT32_MAX);
    assert_int_equal(orte_relocate_choose(NULL, 0, 1, true), UINT32_MAX);
    assert_int_equal(orte_relocate_choose(nodes, 0, 1, true), UINT32_MAX);
    /* nothing to move fits anywhere live */
    assert_int_equal(orte_relocate_choose(full, 3, 0, false), 1);
}

/* ------------------------------------------------------------------------------------------ */
/* the message */

static void pack_sample(opal_buffer_t *b, const char *reason)
{
    orte_relocate_rank_t ranks[] = {{.rank = 1, .restarts = 1, .pid = 4711},
                                    {.rank = 5, .restarts = 3, .pid = 0}};
    orte_relocate_msg_t m = {.lost_vpid = 2,
                             .lost_candidate = 7,
                             .to_candidate = 3,
                             .status = -5,
                             .max_restarts = 3,
                             .num_ranks = 2,
                             .ranks = ranks,
                             .reason = (char *) reason};
    opal_buffer_init(b);
    assert_int_equal(orte_relocate_msg_pack(b, &m), HERD_SUCCESS);
}

static void test_msg_round_trip(void **state)
{
    opal_buffer_t b;
    orte_relocate_msg_t m;
    pack_sample(&b, "rank 5 has used its 3 restarts");
    assert_int_equal(orte_relocate_msg_unpack(b.base, b.used, 16, &m), HERD_SUCCESS);
    assert_int_equal(m.lost_vpid, 2);
    assert_int_equal(m.lost_candidate, 7);
    assert_int_equal(m.to_candidate, 3);
    assert_int_equal(m.status, -5);
    assert_int_equal(m.max_restarts, 3);
    assert_int_equal(m.num_ranks, 2);
    assert_int_equal(m.ranks[0].rank, 1);
    assert_int_equal(m.ranks[0].restarts, 1);
    assert_int_equal(m.ranks[0].pid, 4711);
    assert_int_equal(m.ranks[1].rank, 5);
    assert_int_equal(m.ranks[1].restarts, 3);
    assert_string_equal(m.reason, "rank 5 has used its 3 restarts");
    orte_relocate_msg_free(&m);
    opal_buffer_destruct(&b);
    /* no reason, no ranks */
    orte_relocate_msg_t empty = {.lost_vpid = 1};
    opal_buffer_init(&b);
    assert_int_equal(orte_relocate_msg_pack(&b, &empty), HERD_SUCCESS);
    assert_int_equal(orte_relocate_msg_unpack(b.base, b.used, 0, &m), HERD_SUCCESS);
    assert_int_equal(m.num_ranks, 0);
    assert_null(m.reason);
    orte_relocate_msg_free(&m);
    orte_relocate_msg_free(NULL);
    opal_buffer_destruct(&b);
}

static void test_msg_refused(void **state)
{
    opal_buffer_t b;
    orte_relocate_msg_t m;
    pack_sample(&b, "why");
    /* every truncation */
    for (size_t len = 0; len < b.used; ++len) {
        assert_int_not_equal(orte_relocate_msg_unpack(b.base, len, 16, &m), HERD_SUCCESS);
        assert_null(m.ranks);
        assert_null(m.reason);
    }
    /* more ranks than the job has */
    assert_int_not_equal(orte_relocate_msg_unpack(b.base, b.used, 1, &m), HERD_SUCCESS);
    /* a trailing byte */
    uint8_t *longer = malloc(b.used + 1);
    assert_non_null(longer);
    memcpy(longer, b.base, b.used);
    longer[b.used] = 0;
    assert_int_not_equal(orte_relocate_msg_unpack(longer, b.used + 1, 16, &m), HERD_SUCCESS);
    free(longer);
    /* every single corrupted byte: refused or decoded, never a crash or a huge allocation */
    uint8_t *copy = malloc(b.used);
    assert_non_null(copy);
    for (size_t i = 0; i < b.used; ++i) {
        memcpy(copy, b.base, b.used);
        copy[i] ^= 0xff;
        if (HERD_SUCCESS == orte_relocate_msg_unpack(copy, b.used, 16, &m)) {
            assert_true(m.num_ranks <= 16);
            orte_relocate_msg_free(&m);
        }
    }
    free(copy);
    opal_buffer_destruct(&b);
    /* another version */
    opal_buffer_init(&b);
    assert_int_equal(opal_buffer_pack_uint32(&b, ORTE_RELOCATE_VERSION + 1), HERD_SUCCESS);
    assert_int_not_equal(orte_relocate_msg_unpack(b.base, b.used, 16, &m), HERD_SUCCESS);
    opal_buffer_destruct(&b);
    /* a count far beyond the bytes that follow (and any job's size allowed) */
    opal_buffer_init(&b);
    uint32_t head[] = {ORTE_RELOCATE_VERSION, 1, 2, 3};
    for (size_t i = 0; i < 4; ++i) {
        assert_int_equal(opal_buffer_pack_uint32(&b, head[i]), HERD_SUCCESS);
    }
    assert_int_equal(opal_buffer_pack_int32(&b, 0), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_uint32(&b, 3), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_uint32(&b, 1000000), HERD_SUCCESS);
    assert_int_not_equal(orte_relocate_msg_unpack(b.base, b.used, UINT32_MAX, &m), HERD_SUCCESS);
    opal_buffer_destruct(&b);
    /* a reason longer than any said */
    char *reason = malloc(ORTE_RELOCATE_REASON_MAX + 2);
    assert_non_null(reason);
    memset(reason, 'x', ORTE_RELOCATE_REASON_MAX + 1);
    reason[ORTE_RELOCATE_REASON_MAX + 1] = '\0';
    pack_sample(&b, reason);
    assert_int_not_equal(orte_relocate_msg_unpack(b.base, b.used, 16, &m), HERD_SUCCESS);
    opal_buffer_destruct(&b);
    free(reason);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_choose_most_free),
        cmocka_unit_test(test_choose_ties_and_edges),
        cmocka_unit_test(test_msg_round_trip),
        cmocka_unit_test(test_msg_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
