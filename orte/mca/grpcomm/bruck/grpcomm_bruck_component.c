/* SPDX-License-Identifier: BSD-3-Clause */
/* grpcomm bruck: Bruck allgather and dissemination barrier: log2(n) rounds, no root. Below tree
 * by default, since its peers are mostly not tree neighbours and the overlay routes each
 * message over several hops. */
#include "herd_config.h"

#include "opal/mca/base/mca_var.h"
#include "orte/mca/grpcomm/bruck/grpcomm_bruck.h"
#include "orte/mca/grpcomm/grpcomm.h"

#define GRPCOMM_BRUCK_DEFAULT_PRIORITY HERD_MCA_PRIORITY_orte_grpcomm_bruck

typedef struct {
    int priority;
} grpcomm_bruck_state_t;

static grpcomm_bruck_state_t grpcomm_bruck_state = {
    .priority = GRPCOMM_BRUCK_DEFAULT_PRIORITY,
};

static int grpcomm_bruck_register(const opal_mca_component_t *component)
{
    int index;

    /* a component that stays loaded (static build) still holds its previous value */
    grpcomm_bruck_state.priority = GRPCOMM_BRUCK_DEFAULT_PRIORITY;
    index = opal_mca_var_register(component, "priority",
                                  "Priority of the bruck grpcomm component (Bruck allgather, "
                                  "dissemination barrier, binomial xcast); the available "
                                  "component with the highest priority is used",
                                  OPAL_MCA_VAR_INT, &grpcomm_bruck_state.priority);
    return index < 0 ? index : HERD_SUCCESS;
}

static int grpcomm_bruck_query(const opal_mca_component_t *component, void **module, int *priority)
{
    *module = (void *) &orte_grpcomm_bruck_module;
    *priority = grpcomm_bruck_state.priority;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(orte, grpcomm, bruck, .register_params = grpcomm_bruck_register,
                   .query = grpcomm_bruck_query);
