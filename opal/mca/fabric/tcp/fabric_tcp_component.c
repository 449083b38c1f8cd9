/* placeholder: being written */
#include "herd_config.h"
#include "opal/mca/fabric/fabric.h"
OPAL_MCA_COMPONENT(opal, fabric, tcp);
