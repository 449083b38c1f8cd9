/* The overlay framework object, its static-component table, and open/select/close. */
#include "herd_config.h"

#include "opal/mca/mca.h"
#include "orte/mca/overlay/overlay.h"
#include "orte/mca/overlay/base/static-components.h"

opal_mca_framework_t orte_overlay_base_framework =
    OPAL_MCA_FRAMEWORK_INIT(orte, overlay, "Daemon-to-daemon messaging along a radix tree", false,
                            orte_overlay_static_components);

int orte_overlay_base_open(void)
{
    opal_mca_framework_t *fw = &orte_overlay_base_framework;
    int rc;

    /* a second open would take a second reference on the MCA system that one close cannot drop */
    if (fw->opened) {
        return HERD_SUCCESS;
    }
    rc = opal_mca_init();
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    rc = opal_mca_framework_open(fw);
    if (HERD_SUCCESS == rc) {
        rc = opal_mca_framework_select(fw);
    }
    if (HERD_SUCCESS != rc) {
        opal_mca_framework_close(fw);
        opal_mca_finalize();
    }
    return rc;
}

void orte_overlay_base_close(void)
{
    opal_mca_framework_t *fw = &orte_overlay_base_framework;

    if (!fw->opened) {
        return;
    }
    opal_mca_framework_close(fw);
    opal_mca_finalize();
}

const orte_overlay_module_t *orte_overlay_base_module(void)
{
    return opal_mca_framework_module(&orte_overlay_base_framework);
}
