/* The overlay framework object and its static-component table. */
#include "herd_config.h"

#include "orte/mca/overlay/overlay.h"
#include "orte/mca/overlay/base/static-components.h"

opal_mca_framework_t orte_overlay_base_framework = OPAL_MCA_FRAMEWORK_INIT(
    orte, overlay, "Daemon-to-daemon messaging along a radix tree", false, orte_overlay_static_components);
