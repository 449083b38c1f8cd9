/* ras hostfile: Open-MPI-style hostfiles and -H host lists. */
#include "herd_config.h"

#include "orte/mca/ras/ras.h"

OPAL_MCA_COMPONENT(orte, ras, hostfile);
