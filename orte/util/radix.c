/* SPDX-License-Identifier: BSD-3-Clause */
/* Radix-tree routing: pure arithmetic on vpids, shared by the overlay and grpcomm. */
#include "herd_config.h"

#include "orte/util/radix.h"

orte_vpid_t orte_radix_parent(orte_vpid_t v, uint32_t radix)
{
    if (0 == v || 0 == radix) {
        return ORTE_VPID_INVALID;
    }
    return (v - 1) / radix;
}

uint32_t orte_radix_children(orte_vpid_t v, uint32_t n, uint32_t radix, orte_vpid_t *children)
{
    uint32_t count = 0;
    uint64_t first = (uint64_t) v * radix + 1; /* 64-bit: v * radix may not fit in 32 */
    for (uint64_t c = first; c < first + radix && c < n; ++c) {
        children[count++] = (orte_vpid_t) c;
    }
    return count;
}

bool orte_radix_in_subtree(orte_vpid_t v, orte_vpid_t x, uint32_t radix)
{
    /* walk x up towards the root; ancestors only ever get smaller */
    while (x > v) {
        x = orte_radix_parent(x, radix);
    }
    return x == v;
}

orte_vpid_t orte_radix_next_hop(orte_vpid_t me, orte_vpid_t dst, uint32_t n, uint32_t radix)
{
    if (dst >= n || me >= n || 0 == radix) {
        return ORTE_VPID_INVALID;
    }
    if (dst == me) {
        return me;
    }
    /* the ancestor of dst just below me, if dst is in my subtree */
    orte_vpid_t x = dst;
    while (x > me) {
        orte_vpid_t parent = orte_radix_parent(x, radix);
        if (parent == me) {
            return x;
        }
        x = parent;
    }
    return orte_radix_parent(me, radix);
}

uint32_t orte_radix_depth(uint32_t n, uint32_t radix)
{
    if (n <= 1 || 0 == radix) {
        return 0;
    }
    uint32_t depth = 0;
    for (orte_vpid_t last = n - 1; last > 0; last = orte_radix_parent(last, radix)) {
        ++depth; /* the deepest daemon is the last one */
    }
    return depth;
}

uint32_t orte_radix_subtree_size(orte_vpid_t v, uint32_t n, uint32_t radix)
{
    if (v >= n) {
        return 0;
    }
    /* level by level: the subtree's vpids at each level form one contiguous range */
    uint64_t lo = v, hi = v, size = 0;
    while (lo < n) {
        size += (hi < n ? hi : n - 1) - lo + 1;
        if (0 == radix) {
            break;
        }
        lo = lo * radix + 1;
        hi = hi * radix + radix;
    }
    return (uint32_t) size;
}
