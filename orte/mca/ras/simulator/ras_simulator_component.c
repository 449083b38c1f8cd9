/* ras simulator: many virtual nodes on this host, each with an hwloc synthetic topology. */
#include "herd_config.h"

#include "orte/mca/ras/ras.h"

OPAL_MCA_COMPONENT(orte, ras, simulator);
