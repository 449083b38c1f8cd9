/* SPDX-License-Identifier: BSD-3-Clause */
/* The errmgr framework object, opening it with one selected component, and asking that
 * component what to do about a failure. */
#include "herd_config.h"

#include "opal/mca/mca.h"
#include "opal/util/output.h"
#include "orte/mca/errmgr/errmgr.h"

#include "orte/mca/errmgr/base/component-hints.h"
#include "orte/mca/errmgr/base/static-components.h"

opal_mca_framework_t orte_errmgr_base_framework = OPAL_MCA_FRAMEWORK_INIT_HINTS(
    orte, errmgr,
    "Error manager: abort the job, continue, or restart the process when a process or daemon fails",
    false, orte_errmgr_static_components, NULL, orte_errmgr_component_hints);

int orte_errmgr_base_open(void)
{
    return opal_mca_framework_open_select(&orte_errmgr_base_framework);
}

void orte_errmgr_base_close(void)
{
    opal_mca_framework_close(&orte_errmgr_base_framework);
}

const orte_errmgr_module_t *orte_errmgr_base_module(void)
{
    const opal_mca_framework_t *fw = &orte_errmgr_base_framework;

    return fw->opened ? opal_mca_framework_module(fw) : NULL;
}

static const char *action_name(orte_errmgr_action_t action)
{
    return ORTE_ERRMGR_CONTINUE == action       ? "continue"
           : ORTE_ERRMGR_RESTART_PROC == action ? "restart the process"
                                                : "abort the job";
}

orte_errmgr_action_t orte_errmgr_base_decide(const orte_errmgr_failure_t *failure)
{
    const orte_errmgr_module_t *module = orte_errmgr_base_module();
    orte_errmgr_action_t action;
    char what[128];

    if (NULL == failure || NULL == module) {
        return ORTE_ERRMGR_ABORT_JOB;
    }
    action = module->decide(failure);
    bool restart_ok =
        ORTE_ERRMGR_RESTART_PROC == action &&
        (ORTE_ERRMGR_PROC_FAILED == failure->event || ORTE_ERRMGR_PROC_LOST == failure->event);
    if (ORTE_ERRMGR_ABORT_JOB != action && ORTE_ERRMGR_CONTINUE != action && !restart_ok) {
        /* a third-party DSO built against a newer interface may answer something we cannot
         * carry out; aborting is the one answer that never leaves a broken job running */
        opal_output_verbose(1, orte_errmgr_base_framework.output,
                            "errmgr %s answered %d, which is not an action: aborting the job",
                            module->name, (int) action);
        action = ORTE_ERRMGR_ABORT_JOB;
    }
    orte_errmgr_failure_describe(failure, what, sizeof(what));
    if (ORTE_ERRMGR_DAEMON_LOST == failure->event) {
        opal_output_verbose(5, orte_errmgr_base_framework.output,
                            "the daemon on %s %s: errmgr %s decides to %s",
                            NULL != failure->node ? failure->node : "an unknown node", what,
                            module->name, action_name(action));
    } else {
        opal_output_verbose(5, orte_errmgr_base_framework.output,
                            "rank %u on %s %s: errmgr %s decides to %s", failure->rank,
                            NULL != failure->node ? failure->node : "an unknown node", what,
                            module->name, action_name(action));
    }
    return action;
}
