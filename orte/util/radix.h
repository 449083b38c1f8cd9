/* SPDX-License-Identifier: BSD-3-Clause */
/* Routing in a radix (k-ary, heap-ordered) tree over daemons 0..n-1 rooted at 0: the children
 * of v are k*v+1 .. k*v+k. Every daemon computes the same tree from (n, k) alone. */
#ifndef ORTE_UTIL_RADIX_H
#define ORTE_UTIL_RADIX_H

#include <stdbool.h>
#include <stdint.h>

#include "opal/visibility.h"
#include "orte/types.h"

/* The parent of v, or ORTE_VPID_INVALID for the root. */
OPAL_EXPORT orte_vpid_t orte_radix_parent(orte_vpid_t v, uint32_t radix);
/* Fill children (room for radix entries) with v's children that exist in a tree of n; returns
 * how many. */
OPAL_EXPORT uint32_t orte_radix_children(orte_vpid_t v, uint32_t n, uint32_t radix,
                                         orte_vpid_t *children);
/* Whether x is in the subtree rooted at v (v itself included). */
OPAL_EXPORT bool orte_radix_in_subtree(orte_vpid_t v, orte_vpid_t x, uint32_t radix);
/* The neighbour me forwards a message for dst to: the child whose subtree holds dst, else the
 * parent; me itself when dst == me; ORTE_VPID_INVALID when dst >= n. */
OPAL_EXPORT orte_vpid_t orte_radix_next_hop(orte_vpid_t me, orte_vpid_t dst, uint32_t n,
                                            uint32_t radix);
/* Levels below the root in a tree of n (0 for n <= 1): the rounds a broadcast takes. */
OPAL_EXPORT uint32_t orte_radix_depth(uint32_t n, uint32_t radix);
/* The number of daemons in the subtree rooted at v (0 if v >= n). */
OPAL_EXPORT uint32_t orte_radix_subtree_size(orte_vpid_t v, uint32_t n, uint32_t radix);

#endif /* ORTE_UTIL_RADIX_H */
