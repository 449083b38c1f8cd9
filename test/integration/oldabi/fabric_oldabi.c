/* SPDX-License-Identifier: BSD-3-Clause */
/* A fabric component as an older herd would have built it: the loader must refuse it. */
#include "herd_config.h"

#include "opal/mca/fabric/fabric.h"

OPAL_MCA_COMPONENT(opal, fabric, oldabi);
