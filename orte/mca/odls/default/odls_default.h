/* SPDX-License-Identifier: BSD-3-Clause */
/* What the default component's files share: its module. */
#ifndef ORTE_MCA_ODLS_DEFAULT_H
#define ORTE_MCA_ODLS_DEFAULT_H

#include "orte/mca/odls/odls.h"

/* clone/exec with binding, process groups and SIGCHLD reaping (odls_default_module.c). */
extern const orte_odls_module_t orte_odls_default_module;

/* odls_default_wait_exec: wait until each child has exec'd before starting the next. */
extern bool orte_odls_default_wait_exec;

#endif /* ORTE_MCA_ODLS_DEFAULT_H */
