/* SPDX-License-Identifier: BSD-3-Clause */
/* herdrun's MPIR interface for debuggers (herdrun_mpir.c). */
#ifndef ORTE_TOOLS_HERDRUN_MPIR_H
#define ORTE_TOOLS_HERDRUN_MPIR_H

#include "orte/runtime/launch.h"

/* The hooks the launch calls (they fill MPIR_proctable and call MPIR_Breakpoint). */
const orte_launch_debugger_t *herdrun_mpir_hooks(void);
/* The table freed at the end. */
void herdrun_mpir_release(void);

#endif /* ORTE_TOOLS_HERDRUN_MPIR_H */
