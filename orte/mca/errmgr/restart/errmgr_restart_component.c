/* SPDX-License-Identifier: BSD-3-Clause */
/* errmgr restart: a process that fails is started again on its node with the same rank (or, when
 * its node was lost, on another live node of the job), up to errmgr_restart_max times (services,
 * workers of a task farm, a flaky step of a workflow); one that fails once more, or cannot be
 * started at all, ends the job, and so does a lost daemon whose processes could not be moved.
 * The session daemon of the failed process's node (or of the node herdrun chose) carries the
 * restart out (docs/errmgr.md). */
#include "herd_config.h"

#include "opal/mca/base/mca_var.h"
#include "opal/util/show_help.h"
#include "orte/mca/errmgr/errmgr.h"

#define ERRMGR_RESTART_DEFAULT_PRIORITY HERD_MCA_PRIORITY_orte_errmgr_restart
#define ERRMGR_RESTART_DEFAULT_MAX      3

static struct {
    int priority; /* errmgr_restart_priority */
    int max;      /* errmgr_restart_max */
} errmgr_restart_state = {
    .priority = ERRMGR_RESTART_DEFAULT_PRIORITY,
    .max = ERRMGR_RESTART_DEFAULT_MAX,
};

static orte_errmgr_action_t errmgr_restart_decide(const orte_errmgr_failure_t *failure)
{
    switch (failure->event) {
    case ORTE_ERRMGR_PROC_FAILED:
    case ORTE_ERRMGR_PROC_LOST:
        /* lost: started on another live node of the job (herdrun chooses it) */
        return failure->restarts < (uint32_t) errmgr_restart_state.max ? ORTE_ERRMGR_RESTART_PROC
                                                                       : ORTE_ERRMGR_ABORT_JOB;
    case ORTE_ERRMGR_PROC_START_FAILED:
        /* what kept it from starting (a missing program, a bad binding) is still there */
        return ORTE_ERRMGR_ABORT_JOB;
    case ORTE_ERRMGR_DAEMON_LOST:
        /* asked once the processes of that node could not be moved (each was PROC_LOST first) */
        return ORTE_ERRMGR_ABORT_JOB;
    }
    return ORTE_ERRMGR_ABORT_JOB;
}

static const orte_errmgr_module_t errmgr_restart_module = {
    .name = "restart",
    .decide = errmgr_restart_decide,
};

static int errmgr_restart_register(const opal_mca_component_t *component)
{
    /* a component that stays loaded (static build) still holds its previous values */
    errmgr_restart_state.priority = ERRMGR_RESTART_DEFAULT_PRIORITY;
    errmgr_restart_state.max = ERRMGR_RESTART_DEFAULT_MAX;
    static const opal_mca_var_def_t vars[] = {
        {.name = "priority",
         .type = OPAL_MCA_VAR_INT,
         .storage = &errmgr_restart_state.priority,
         .help = "Priority of the restart errmgr component (a failed process is started again "
                 "on its node); the available component with the highest priority is used"},
        {.name = "max",
         .type = OPAL_MCA_VAR_INT,
         .storage = &errmgr_restart_state.max,
         .help = "How many times one rank is restarted; its next failure ends the job "
                 "(0: never restarted)"},
    };
    return opal_mca_var_register_table(component, vars, OPAL_MCA_VAR_DEFS_COUNT(vars));
}

static int errmgr_restart_query(const opal_mca_component_t *component, void **module, int *priority)
{
    if (errmgr_restart_state.max < 0) {
        /* a bad value is a mistake to say, not a policy to guess */
        opal_show_help("help-errmgr-restart.txt", "bad-max", false, errmgr_restart_state.max);
        return HERD_ERR_BAD_PARAM;
    }
    *module = (void *) &errmgr_restart_module;
    *priority = errmgr_restart_state.priority;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(orte, errmgr, restart, .register_params = errmgr_restart_register,
                   .query = errmgr_restart_query);
