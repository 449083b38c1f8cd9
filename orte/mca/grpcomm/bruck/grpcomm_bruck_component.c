/* grpcomm bruck: Bruck allgather and dissemination barrier: log2(n) rounds, no root. */
#include "herd_config.h"

#include "orte/mca/grpcomm/grpcomm.h"

OPAL_MCA_COMPONENT(orte, grpcomm, bruck);
