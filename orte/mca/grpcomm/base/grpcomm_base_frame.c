/* SPDX-License-Identifier: BSD-3-Clause */
/* The grpcomm framework object, its static-component table, and opening it with one selected
 * component. */
#include "herd_config.h"

#include "opal/mca/mca.h"
#include "orte/mca/grpcomm/grpcomm.h"

#include "orte/mca/grpcomm/base/component-hints.h"
#include "orte/mca/grpcomm/base/static-components.h"

opal_mca_framework_t orte_grpcomm_base_framework = OPAL_MCA_FRAMEWORK_INIT_HINTS(
    orte, grpcomm, "Collectives among daemons: broadcast, barrier, allgather", false,
    orte_grpcomm_static_components, NULL, orte_grpcomm_component_hints);

int orte_grpcomm_base_open(void)
{
    return opal_mca_framework_open_select(&orte_grpcomm_base_framework);
}

void orte_grpcomm_base_close(void)
{
    opal_mca_framework_close(&orte_grpcomm_base_framework);
}

const orte_grpcomm_module_t *orte_grpcomm_base_module(void)
{
    const opal_mca_framework_t *fw = &orte_grpcomm_base_framework;

    return fw->opened ? opal_mca_framework_module(fw) : NULL;
}

int orte_grpcomm_base_rounds(orte_grpcomm_op_t op, uint32_t num_daemons, uint32_t radix,
                             uint32_t *rounds)
{
    const orte_grpcomm_module_t *module = orte_grpcomm_base_module();

    if (NULL == module) {
        return HERD_ERR_NOT_FOUND;
    }
    return module->rounds(op, num_daemons, radix, rounds);
}
