/* SPDX-License-Identifier: BSD-3-Clause */
/* odls default: fork/exec local processes, bind them, collect exit status and usage. */
#include "herd_config.h"

#include "opal/mca/base/mca_var.h"
#include "orte/mca/odls/default/odls_default.h"
#include "orte/mca/odls/odls.h"

#define ODLS_DEFAULT_DEFAULT_PRIORITY 10


static struct {
    int priority;
} odls_default_state = {
    .priority = ODLS_DEFAULT_DEFAULT_PRIORITY,
};

bool orte_odls_default_wait_exec = false;

static int odls_default_register(const opal_mca_component_t *component)
{
    static const opal_mca_var_def_t vars[] = {
        {.name = "priority",
         .type = OPAL_MCA_VAR_INT,
         .storage = &odls_default_state.priority,
         .help = "Priority of the default odls component (fork/exec of local "
                 "processes); the available component with the highest "
                 "priority is used"},
        {.name = "wait_exec",
         .type = OPAL_MCA_VAR_BOOL,
         .storage = &orte_odls_default_wait_exec,
         .help = "Wait until each process has exec'd before starting the next "
                 "(clone with CLONE_VFORK, as posix_spawn does): the daemon is "
                 "held for as long as each child waits for a core. false: go "
                 "on at once while the child execs (x86-64 and AArch64; other "
                 "CPUs always wait)"},
    };

    /* a component that stays loaded (static build) still holds its previous value */
    odls_default_state.priority = ODLS_DEFAULT_DEFAULT_PRIORITY;
    orte_odls_default_wait_exec = false;
    return opal_mca_var_register_table(component, vars, OPAL_MCA_VAR_DEFS_COUNT(vars));
}

static int odls_default_query(const opal_mca_component_t *component, void **module, int *priority)
{
    *module = (void *) &orte_odls_default_module;
    *priority = odls_default_state.priority;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(orte, odls, default, .register_params = odls_default_register,
                   .query = odls_default_query);
