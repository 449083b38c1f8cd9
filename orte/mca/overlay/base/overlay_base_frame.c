/* SPDX-License-Identifier: BSD-3-Clause */
/* The overlay framework object, its static-component table, and open/select/close. */
#include "herd_config.h"

#include "opal/mca/mca.h"
#include "orte/mca/overlay/overlay.h"
#include "orte/mca/overlay/base/component-hints.h"
#include "orte/mca/overlay/base/static-components.h"

opal_mca_framework_t orte_overlay_base_framework = OPAL_MCA_FRAMEWORK_INIT_HINTS(
    orte, overlay, "Daemon-to-daemon messaging along a radix tree", false,
    orte_overlay_static_components, NULL, orte_overlay_component_hints);

int orte_overlay_base_open(void)
{
    return opal_mca_framework_open_select(&orte_overlay_base_framework);
}

void orte_overlay_base_close(void)
{
    opal_mca_framework_close(&orte_overlay_base_framework);
}

const orte_overlay_module_t *orte_overlay_base_module(void)
{
    return opal_mca_framework_module(&orte_overlay_base_framework);
}
