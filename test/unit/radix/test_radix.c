/* SPDX-License-Identifier: BSD-3-Clause */
/* Radix-tree routing, checked against brute force for many sizes and radixes: every route is a
 * path of tree edges that reaches its destination, and the tree's shape adds up. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "orte/util/radix.h"

static bool is_edge(orte_vpid_t a, orte_vpid_t b, uint32_t radix)
{
    return orte_radix_parent(a, radix) == b || orte_radix_parent(b, radix) == a;
}

static void test_parent_and_children_agree(void **state)
{
    orte_vpid_t children[16];
    for (uint32_t radix = 1; radix <= 16; ++radix) {
        for (uint32_t n = 1; n <= 200; n += 7) {
            uint32_t total = 0;
            for (orte_vpid_t v = 0; v < n; ++v) {
                uint32_t count = orte_radix_children(v, n, radix, children);
                assert_true(count <= radix);
                for (uint32_t c = 0; c < count; ++c) {
                    assert_int_equal(v, orte_radix_parent(children[c], radix));
                    assert_true(children[c] < n);
                }
                total += count;
            }
            assert_int_equal(n - 1, total); /* every daemon but the root has one parent */
        }
    }
    assert_int_equal(ORTE_VPID_INVALID, orte_radix_parent(0, 4));
}

static void test_routes_reach_their_destination(void **state)
{
    for (uint32_t radix = 1; radix <= 8; ++radix) {
        for (uint32_t n = 1; n <= 70; ++n) {
            uint32_t depth = orte_radix_depth(n, radix);
            for (orte_vpid_t src = 0; src < n; ++src) {
                for (orte_vpid_t dst = 0; dst < n; ++dst) {
                    orte_vpid_t at = src;
                    uint32_t hops = 0;
                    while (at != dst) {
                        orte_vpid_t next = orte_radix_next_hop(at, dst, n, radix);
                        assert_true(next < n);
                        assert_true(is_edge(at, next, radix));
                        at = next;
                        assert_true(++hops <= 2 * depth);
                    }
                    assert_int_equal(dst, orte_radix_next_hop(dst, dst, n, radix));
                }
            }
        }
    }
}

static void test_subtrees(void **state)
{
    for (uint32_t radix = 1; radix <= 6; ++radix) {
        for (uint32_t n = 1; n <= 120; n += 3) {
            for (orte_vpid_t v = 0; v < n; ++v) {
                uint32_t brute = 0;
                for (orte_vpid_t x = 0; x < n; ++x) {
                    brute += orte_radix_in_subtree(v, x, radix);
                }
                assert_int_equal(brute, orte_radix_subtree_size(v, n, radix));
            }
            assert_int_equal(n, orte_radix_subtree_size(0, n, radix));
        }
    }
    assert_int_equal(0, orte_radix_subtree_size(10, 10, 2));
}

static void test_depth_and_bad_input(void **state)
{
    assert_int_equal(0, orte_radix_depth(1, 4));
    assert_int_equal(1, orte_radix_depth(5, 4));
    assert_int_equal(2, orte_radix_depth(6, 4));
    assert_int_equal(4, orte_radix_depth(256, 4)); /* 1 + 4 + 16 + 64 + 256 > 256 */
    assert_int_equal(8, orte_radix_depth(256, 2));
    assert_int_equal(ORTE_VPID_INVALID, orte_radix_next_hop(0, 5, 5, 2));
    assert_int_equal(ORTE_VPID_INVALID, orte_radix_next_hop(7, 1, 5, 2));
    /* large vpids do not overflow: children of a high vpid in a huge tree */
    orte_vpid_t children[64];
    assert_int_equal(0, orte_radix_children(UINT32_MAX - 2, UINT32_MAX, 64, children));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parent_and_children_agree),
        cmocka_unit_test(test_routes_reach_their_destination),
        cmocka_unit_test(test_subtrees),
        cmocka_unit_test(test_depth_and_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
