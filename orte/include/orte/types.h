/* SPDX-License-Identifier: BSD-3-Clause */
/* Types shared across the runtime layer. */
#ifndef ORTE_TYPES_H
#define ORTE_TYPES_H

#include <stdint.h>

/* A daemon's rank in the DVM: 0 is the root (herd-dvm / herdrun), 1..n-1 the herdd daemons. */
typedef uint32_t orte_vpid_t;
#define ORTE_VPID_INVALID UINT32_MAX

#endif /* ORTE_TYPES_H */
