/* What the default component's files share: its module. */
#ifndef ORTE_MCA_ODLS_DEFAULT_H
#define ORTE_MCA_ODLS_DEFAULT_H

#include "orte/mca/odls/odls.h"

/* clone/exec with binding, process groups and SIGCHLD reaping (odls_default_module.c). */
extern const orte_odls_module_t orte_odls_default_module;

/* odls_default_spawners: how many threads start processes at once (0: the calling thread). */
#define ORTE_ODLS_DEFAULT_MAX_SPAWNERS     8
#define ORTE_ODLS_DEFAULT_MAX_SPAWNERS_STR "8"
extern int orte_odls_default_spawners;

#endif /* ORTE_MCA_ODLS_DEFAULT_H */
