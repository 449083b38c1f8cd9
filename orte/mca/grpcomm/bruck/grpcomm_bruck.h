/* SPDX-License-Identifier: BSD-3-Clause */
/* What the bruck component's files share: its module. */
#ifndef ORTE_MCA_GRPCOMM_BRUCK_H
#define ORTE_MCA_GRPCOMM_BRUCK_H

#include "orte/mca/grpcomm/grpcomm.h"

/* Bruck allgather, dissemination barrier, binomial xcast (grpcomm_bruck_module.c). */
extern const orte_grpcomm_module_t orte_grpcomm_bruck_module;

#endif /* ORTE_MCA_GRPCOMM_BRUCK_H */
