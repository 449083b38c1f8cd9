/* overlay tcp: TCP connections on libevent, authenticated with the DVM's secret (libsodium). */
#include "herd_config.h"

#include "orte/mca/overlay/overlay.h"

OPAL_MCA_COMPONENT(orte, overlay, tcp);
