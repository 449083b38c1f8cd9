/* SPDX-License-Identifier: BSD-3-Clause */
/* Broadcasts around lost daemons: a daemon's parent in the broadcast tree sends to the children
 * of a lost child itself, and a daemon takes a broadcast from any ancestor (base.h,
 * orte_grpcomm_base_lost). */
#include "herd_config.h"

#include <stdlib.h>

#include "opal/util/output.h"
#include "orte/mca/grpcomm/base/base.h"

/* Children in a broadcast tree a daemon has at most (radix and binomial trees alike). */
#define LOST_MAX_CHILDREN 1024u

bool orte_grpcomm_base_is_down(const orte_grpcomm_t *g, orte_vpid_t v)
{
    return NULL != g->down && v < g->num_daemons && 0 != (g->down[v / 8] & (1u << (v % 8)));
}

bool orte_grpcomm_base_is_ancestor(const orte_grpcomm_t *g, orte_vpid_t v)
{
    for (orte_vpid_t a = g->algorithm->parent_of(g, g->me); ORTE_VPID_INVALID != a;
         a = g->algorithm->parent_of(g, a)) {
        if (a == v) {
            return true;
        }
    }
    return false;
}

static bool is_back(const orte_grpcomm_t *g, orte_vpid_t v)
{
    return NULL != g->back && v < g->num_daemons && 0 != (g->back[v / 8] & (1u << (v % 8)));
}

/* The live children: the tree's own, a lost one replaced by its live children (recursively). */
static int rebuild_children(orte_grpcomm_t *g)
{
    orte_vpid_t *stack = malloc(LOST_MAX_CHILDREN * sizeof(*stack));
    orte_vpid_t *live = NULL;
    uint32_t depth = 0, num_live = 0, cap_live = 0;
    int rc = HERD_SUCCESS;
    if (NULL == stack) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    depth = g->algorithm->children_of(g, g->me, stack, LOST_MAX_CHILDREN);
    while (depth > 0 && HERD_SUCCESS == rc) {
        orte_vpid_t c = stack[--depth];
        if (g->leaf) {
            break; /* rejoined: its old children get broadcasts from elsewhere */
        }
        bool back = is_back(g, c);
        if (orte_grpcomm_base_is_down(g, c)) {
            depth += g->algorithm->children_of(g, c, stack + depth, LOST_MAX_CHILDREN - depth);
            if (!back) {
                continue;
            }
        }
        if (num_live == cap_live) {
            orte_vpid_t *grown = realloc(live, (cap_live + 16) * sizeof(*grown));
            if (NULL == grown) {
                rc = HERD_ERR_OUT_OF_RESOURCE;
                break;
            }
            live = grown;
            cap_live += 16;
        }
        live[num_live++] = c;
    }
    free(stack);
    if (HERD_SUCCESS != rc) {
        free(live);
        return rc;
    }
    free(g->xcast_children);
    g->xcast_children = live;
    g->num_xcast_children = num_live;
    return HERD_SUCCESS;
}

int orte_grpcomm_base_lost(orte_grpcomm_t *g, orte_vpid_t vpid)
{
    if (NULL == g || vpid >= g->num_daemons || vpid == g->me || NULL == g->algorithm->parent_of ||
        NULL == g->algorithm->children_of) {
        return HERD_ERR_BAD_PARAM;
    }
    if (NULL == g->down) {
        g->down = calloc((g->num_daemons + 7) / 8, 1);
        if (NULL == g->down) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    g->down[vpid / 8] |= (uint8_t) (1u << (vpid % 8));
    if (NULL != g->back) {
        g->back[vpid / 8] &= (uint8_t) ~(1u << (vpid % 8)); /* lost again */
    }
    orte_vpid_t parent = g->algorithm->parent_of(g, g->me);
    while (ORTE_VPID_INVALID != parent && orte_grpcomm_base_is_down(g, parent)) {
        parent = g->algorithm->parent_of(g, parent);
    }
    g->xcast_parent = parent;
    opal_output_verbose(5, orte_grpcomm_base_framework.output,
                        "grpcomm: daemon %u broadcasts around daemon %u, which is lost", g->me,
                        vpid);
    return rebuild_children(g);
}

int orte_grpcomm_base_rejoined(orte_grpcomm_t *g, orte_vpid_t vpid)
{
    if (NULL == g || vpid >= g->num_daemons || NULL == g->algorithm->children_of) {
        return HERD_ERR_BAD_PARAM;
    }
    if (vpid == g->me) {
        /* a leaf now; broadcasts may come from any ancestor (engine_check_xcast) */
        g->leaf = true;
        free(g->xcast_children);
        g->xcast_children = NULL;
        g->num_xcast_children = 0;
        return HERD_SUCCESS;
    }
    if (!orte_grpcomm_base_is_down(g, vpid)) {
        return HERD_SUCCESS; /* never lost here: it is in the tree as it was */
    }
    if (NULL == g->back) {
        g->back = calloc((g->num_daemons + 7) / 8, 1);
        if (NULL == g->back) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    g->back[vpid / 8] |= (uint8_t) (1u << (vpid % 8));
    opal_output_verbose(5, orte_grpcomm_base_framework.output,
                        "grpcomm: daemon %u takes daemon %u back as a leaf", g->me, vpid);
    return rebuild_children(g);
}
