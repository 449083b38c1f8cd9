/* SPDX-License-Identifier: BSD-3-Clause */
/* errmgr abort: any failure of a process or daemon ends the whole job (the default, as mpirun
 * does: an MPI job with a dead rank usually hangs in its next collective). */
#include "herd_config.h"

#include "opal/mca/base/mca_var.h"
#include "orte/mca/errmgr/errmgr.h"

#define ERRMGR_ABORT_DEFAULT_PRIORITY HERD_MCA_PRIORITY_orte_errmgr_abort

static struct {
    int priority; /* errmgr_abort_priority */
} errmgr_abort_state = {
    .priority = ERRMGR_ABORT_DEFAULT_PRIORITY,
};

static orte_errmgr_action_t errmgr_abort_decide(const orte_errmgr_failure_t *failure)
{
    return ORTE_ERRMGR_ABORT_JOB;
}

static const orte_errmgr_module_t errmgr_abort_module = {
    .name = "abort",
    .decide = errmgr_abort_decide,
};

static int errmgr_abort_register(const opal_mca_component_t *component)
{
    int index;

    /* a component that stays loaded (static build) still holds its previous value */
    errmgr_abort_state.priority = ERRMGR_ABORT_DEFAULT_PRIORITY;
    index = opal_mca_var_register(component, "priority",
                                  "Priority of the abort errmgr component (any failed process "
                                  "or lost daemon ends the whole job); the available component "
                                  "with the highest priority is used",
                                  OPAL_MCA_VAR_INT, &errmgr_abort_state.priority);
    return index < 0 ? index : HERD_SUCCESS;
}

static int errmgr_abort_query(const opal_mca_component_t *component, void **module, int *priority)
{
    *module = (void *) &errmgr_abort_module;
    *priority = errmgr_abort_state.priority;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(orte, errmgr, abort, .register_params = errmgr_abort_register,
                   .query = errmgr_abort_query);
