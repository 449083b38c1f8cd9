/* SPDX-License-Identifier: BSD-3-Clause */
/* What the tree component's files share: its module. */
#ifndef ORTE_MCA_GRPCOMM_TREE_H
#define ORTE_MCA_GRPCOMM_TREE_H

#include "orte/mca/grpcomm/grpcomm.h"

/* Collectives along the DVM's radix tree (grpcomm_tree_module.c). */
extern const orte_grpcomm_module_t orte_grpcomm_tree_module;

#endif /* ORTE_MCA_GRPCOMM_TREE_H */
