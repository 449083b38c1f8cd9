/* SPDX-License-Identifier: BSD-3-Clause */
/* grpcomm tree: collectives along the DVM's radix tree; the default, as it only ever talks to
 * tree neighbours, which the overlay reaches in one hop. */
#include "herd_config.h"

#include "opal/mca/base/mca_var.h"
#include "orte/mca/grpcomm/grpcomm.h"
#include "orte/mca/grpcomm/tree/grpcomm_tree.h"

#define GRPCOMM_TREE_DEFAULT_PRIORITY HERD_MCA_PRIORITY_orte_grpcomm_tree

typedef struct {
    int priority;
} grpcomm_tree_state_t;

static grpcomm_tree_state_t grpcomm_tree_state = {
    .priority = GRPCOMM_TREE_DEFAULT_PRIORITY,
};

static int grpcomm_tree_register(const opal_mca_component_t *component)
{
    int index;

    /* a component that stays loaded (static build) still holds its previous value */
    grpcomm_tree_state.priority = GRPCOMM_TREE_DEFAULT_PRIORITY;
    index = opal_mca_var_register(component, "priority",
                                  "Priority of the tree grpcomm component (collectives along the "
                                  "DVM's radix tree); the available component with the highest "
                                  "priority is used",
                                  OPAL_MCA_VAR_INT, &grpcomm_tree_state.priority);
    return index < 0 ? index : HERD_SUCCESS;
}

static int grpcomm_tree_query(const opal_mca_component_t *component, void **module, int *priority)
{
    *module = (void *) &orte_grpcomm_tree_module;
    *priority = grpcomm_tree_state.priority;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(orte, grpcomm, tree, .register_params = grpcomm_tree_register,
                   .query = grpcomm_tree_query);
