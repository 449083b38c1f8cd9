/* grpcomm tree: collectives along the DVM's radix tree. */
#include "herd_config.h"

#include "orte/mca/grpcomm/grpcomm.h"

OPAL_MCA_COMPONENT(orte, grpcomm, tree);
