/* The overlay framework: messaging among the daemons of a DVM, routed along a radix tree,
 * over authenticated, framed, versioned connections. */
#ifndef ORTE_MCA_OVERLAY_H
#define ORTE_MCA_OVERLAY_H

#include <stddef.h>
#include <stdint.h>

#include "opal/mca/mca.h"
#include "orte/types.h"

#define OPAL_MCA_overlay_INTERFACE_VERSION 1u

typedef struct orte_overlay_module orte_overlay_module_t;

OPAL_EXPORT extern opal_mca_framework_t orte_overlay_base_framework;

#endif /* ORTE_MCA_OVERLAY_H */
