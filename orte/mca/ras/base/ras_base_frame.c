/* The ras framework object and its static-component table. */
#include "herd_config.h"

#include "orte/mca/ras/ras.h"
#include "orte/mca/ras/base/static-components.h"

opal_mca_framework_t orte_ras_base_framework = OPAL_MCA_FRAMEWORK_INIT(
    orte, ras, "Allocation: which nodes and how many slots", false, orte_ras_static_components);
