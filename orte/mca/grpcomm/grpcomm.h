/* The grpcomm framework: collectives among the daemons of a DVM (broadcast, barrier,
 * allgather), over any transport that can send a message to a daemon. */
#ifndef ORTE_MCA_GRPCOMM_H
#define ORTE_MCA_GRPCOMM_H

#include <stddef.h>
#include <stdint.h>

#include "opal/mca/mca.h"
#include "orte/types.h"

#define OPAL_MCA_grpcomm_INTERFACE_VERSION 1u

typedef struct orte_grpcomm_module orte_grpcomm_module_t;

OPAL_EXPORT extern opal_mca_framework_t orte_grpcomm_base_framework;

#endif /* ORTE_MCA_GRPCOMM_H */
