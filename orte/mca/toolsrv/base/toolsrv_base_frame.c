/* SPDX-License-Identifier: BSD-3-Clause */
/* The toolsrv framework object, opening it with one selected component, and starting the
 * selected server for a host (quietly: a host runs on without one). */
#include "herd_config.h"

#include "opal/mca/mca.h"
#include "opal/util/output.h"
#include "orte/mca/toolsrv/toolsrv.h"

#include "orte/mca/toolsrv/base/component-hints.h"
#include "orte/mca/toolsrv/base/static-components.h"

opal_mca_framework_t orte_toolsrv_base_framework = OPAL_MCA_FRAMEWORK_INIT_HINTS(
    orte, toolsrv, "Tool server: what standard tools (PMIx pps, pattrs, pquery) connect to", false,
    orte_toolsrv_static_components, NULL, orte_toolsrv_component_hints);

int orte_toolsrv_base_open(void)
{
    return opal_mca_framework_open_select(&orte_toolsrv_base_framework);
}

void orte_toolsrv_base_close(void)
{
    opal_mca_framework_close(&orte_toolsrv_base_framework);
}

const orte_toolsrv_module_t *orte_toolsrv_base_module(void)
{
    const opal_mca_framework_t *fw = &orte_toolsrv_base_framework;

    return fw->opened ? opal_mca_framework_module(fw) : NULL;
}

void orte_toolsrv_base_start(const orte_toolsrv_host_t *host, orte_toolsrv_t **server)
{
    *server = NULL;
    int rc = orte_toolsrv_base_open();
    const orte_toolsrv_module_t *module = orte_toolsrv_base_module();
    if (HERD_SUCCESS != rc || NULL == module) {
        opal_output_verbose(1, orte_toolsrv_base_framework.output,
                            "toolsrv: %s serves no tools (no toolsrv component: %s)", host->name,
                            opal_strerror(rc));
        orte_toolsrv_base_close();
        return;
    }
    rc = module->start(host, server);
    if (HERD_SUCCESS != rc) {
        opal_output_verbose(1, orte_toolsrv_base_framework.output,
                            "toolsrv: %s serves no tools (toolsrv %s: %s)", host->name,
                            module->name, opal_strerror(rc));
        *server = NULL;
        orte_toolsrv_base_close();
    }
}

void orte_toolsrv_base_stop(orte_toolsrv_t *server)
{
    const orte_toolsrv_module_t *module = orte_toolsrv_base_module();
    if (NULL != server && NULL != module) {
        module->stop(server);
    }
    orte_toolsrv_base_close();
}
