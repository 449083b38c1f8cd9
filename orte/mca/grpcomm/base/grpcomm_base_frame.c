/* The grpcomm framework object and its static-component table. */
#include "herd_config.h"

#include "orte/mca/grpcomm/grpcomm.h"
#include "orte/mca/grpcomm/base/static-components.h"

opal_mca_framework_t orte_grpcomm_base_framework = OPAL_MCA_FRAMEWORK_INIT(
    orte, grpcomm, "Collectives among daemons: broadcast, barrier, allgather", false, orte_grpcomm_static_components);
