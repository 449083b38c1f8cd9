/* SPDX-License-Identifier: BSD-3-Clause */
/* The odls framework object, its variables (the kill grace period), and opening it with one
 * selected component. */
#include "herd_config.h"

#include "opal/mca/base/mca_var.h"
#include "opal/mca/mca.h"
#include "opal/util/show_help.h"
#include "orte/mca/odls/odls.h"

#include "orte/mca/odls/base/component-hints.h"
#include "orte/mca/odls/base/static-components.h"

#define ODLS_BASE_DEFAULT_KILL_GRACE_MS 1000

static int odls_base_register(void);

opal_mca_framework_t orte_odls_base_framework = OPAL_MCA_FRAMEWORK_INIT_HINTS(
    orte, odls, "Local launch: fork/exec, binding, exit status, usage", false,
    orte_odls_static_components, odls_base_register, orte_odls_component_hints);

/* Storage of the framework variables, owned by the variable system. */
static struct {
    int kill_grace_ms; /* odls_base_kill_grace_ms */
} odls_base_vars = {
    .kill_grace_ms = ODLS_BASE_DEFAULT_KILL_GRACE_MS,
};

static int odls_base_register(void)
{
    int index;

    odls_base_vars.kill_grace_ms = ODLS_BASE_DEFAULT_KILL_GRACE_MS;
    index = opal_mca_var_register_framework(
        "odls", "base_kill_grace_ms",
        "Milliseconds a process gets to exit after SIGTERM when a job is killed, before SIGKILL "
        "ends it and everything in its process group (0: SIGKILL at once)",
        OPAL_MCA_VAR_INT, &odls_base_vars.kill_grace_ms);
    if (index < 0) {
        return index;
    }
    if (odls_base_vars.kill_grace_ms < 0) {
        /* neither "forever" nor "none" is what -1 obviously means: refuse it */
        opal_show_help("help-odls-base.txt", "bad-kill-grace", false, odls_base_vars.kill_grace_ms);
        return HERD_ERR_BAD_PARAM;
    }
    return HERD_SUCCESS;
}

int orte_odls_base_open(void)
{
    return opal_mca_framework_open_select(&orte_odls_base_framework);
}

void orte_odls_base_close(void)
{
    opal_mca_framework_close(&orte_odls_base_framework);
}

const orte_odls_module_t *orte_odls_base_module(void)
{
    const opal_mca_framework_t *fw = &orte_odls_base_framework;

    return fw->opened ? opal_mca_framework_module(fw) : NULL;
}

int orte_odls_base_kill_grace_ms(void)
{
    return odls_base_vars.kill_grace_ms < 0 ? 0 : odls_base_vars.kill_grace_ms;
}
