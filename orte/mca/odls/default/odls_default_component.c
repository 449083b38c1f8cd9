/* odls default: fork/exec local processes, bind them, collect exit status and usage. */
#include "herd_config.h"

#include "opal/mca/base/mca_var.h"
#include "orte/mca/odls/default/odls_default.h"
#include "orte/mca/odls/odls.h"

#define ODLS_DEFAULT_DEFAULT_PRIORITY 10

#define ODLS_DEFAULT_DEFAULT_SPAWNERS 2

static struct {
    int priority;
} odls_default_state = {
    .priority = ODLS_DEFAULT_DEFAULT_PRIORITY,
};

int orte_odls_default_spawners = ODLS_DEFAULT_DEFAULT_SPAWNERS;

static int odls_default_register(const opal_mca_component_t *component)
{
    int index;

    /* a component that stays loaded (static build) still holds its previous value */
    odls_default_state.priority = ODLS_DEFAULT_DEFAULT_PRIORITY;
    index = opal_mca_var_register(component, "priority",
                                  "Priority of the default odls component (fork/exec of local "
                                  "processes); the available component with the highest "
                                  "priority is used",
                                  OPAL_MCA_VAR_INT, &odls_default_state.priority);
    if (index < 0) {
        return index;
    }
    orte_odls_default_spawners = ODLS_DEFAULT_DEFAULT_SPAWNERS;
    index =
        opal_mca_var_register(component, "spawners",
                              "Threads that start processes at once (each waits until its "
                              "child has exec'd, as posix_spawn does, while the daemon "
                              "prepares the next); 0: the daemon's own thread starts them "
                              "one after the other. At most " ORTE_ODLS_DEFAULT_MAX_SPAWNERS_STR,
                              OPAL_MCA_VAR_INT, &orte_odls_default_spawners);
    return index < 0 ? index : HERD_SUCCESS;
}

static int odls_default_query(const opal_mca_component_t *component, void **module, int *priority)
{
    *module = (void *) &orte_odls_default_module;
    *priority = odls_default_state.priority;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(orte, odls, default, .register_params = odls_default_register,
                   .query = odls_default_query);
