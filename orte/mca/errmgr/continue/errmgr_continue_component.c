/* SPDX-License-Identifier: BSD-3-Clause */
/* errmgr continue: a process that fails or cannot start is recorded and the others run to
 * completion (task farms, ensembles); a lost daemon still ends the job. */
#include "herd_config.h"

#include "opal/mca/base/mca_var.h"
#include "orte/mca/errmgr/errmgr.h"

#define ERRMGR_CONTINUE_DEFAULT_PRIORITY HERD_MCA_PRIORITY_orte_errmgr_continue

static struct {
    int priority; /* errmgr_continue_priority */
} errmgr_continue_state = {
    .priority = ERRMGR_CONTINUE_DEFAULT_PRIORITY,
};

static orte_errmgr_action_t errmgr_continue_decide(const orte_errmgr_failure_t *failure)
{
    switch (failure->event) {
    case ORTE_ERRMGR_PROC_FAILED:
    case ORTE_ERRMGR_PROC_START_FAILED:
        return ORTE_ERRMGR_CONTINUE;
    case ORTE_ERRMGR_DAEMON_LOST:
    case ORTE_ERRMGR_PROC_LOST:
        /* the job's routing tree (launch messages, I/O forwarding, exit reports) runs through
         * the daemons; with one gone, the processes below it can no longer be reached, watched
         * or killed, so the job cannot be run to a reported end */
        return ORTE_ERRMGR_ABORT_JOB;
    }
    /* an event newer than this component: it cannot know that continuing is safe */
    return ORTE_ERRMGR_ABORT_JOB;
}

static const orte_errmgr_module_t errmgr_continue_module = {
    .name = "continue",
    .decide = errmgr_continue_decide,
};

static int errmgr_continue_register(const opal_mca_component_t *component)
{
    int index;

    /* a component that stays loaded (static build) still holds its previous value */
    errmgr_continue_state.priority = ERRMGR_CONTINUE_DEFAULT_PRIORITY;
    index = opal_mca_var_register(component, "priority",
                                  "Priority of the continue errmgr component (a failed process "
                                  "is recorded and the others run on; a lost daemon still ends "
                                  "the job); the available component with the highest priority "
                                  "is used",
                                  OPAL_MCA_VAR_INT, &errmgr_continue_state.priority);
    return index < 0 ? index : HERD_SUCCESS;
}

static int errmgr_continue_query(const opal_mca_component_t *component, void **module,
                                 int *priority)
{
    *module = (void *) &errmgr_continue_module;
    *priority = errmgr_continue_state.priority;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(orte, errmgr, continue, .register_params = errmgr_continue_register,
                   .query = errmgr_continue_query);
