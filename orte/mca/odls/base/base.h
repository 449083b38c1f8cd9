/* SPDX-License-Identifier: BSD-3-Clause */
/* What the odls base shares with its components: SIGCHLD delivered to an event base. */
#ifndef ORTE_MCA_ODLS_BASE_H
#define ORTE_MCA_ODLS_BASE_H

#include "opal/event/event.h"
#include "opal/status.h"
#include "orte/mca/odls/odls.h"

/* One event base's interest in SIGCHLD. */
typedef struct orte_odls_base_sigchld orte_odls_base_sigchld_t;

/* Run cb(arg) from base's loop after any child of this process changed state (the call may
 * cover several children, or none of the caller's: reap with waitpid on your own pids). The
 * first watch installs a SIGCHLD handler (SA_RESTART) that chains to the one it replaces; the
 * last unwatch restores that one. *watch set only on success. */
OPAL_EXPORT int orte_odls_base_sigchld_watch(opal_event_base_t *base, void (*cb)(void *arg),
                                             void *arg, orte_odls_base_sigchld_t **watch);
/* Stop watching; NULL is ignored. */
OPAL_EXPORT void orte_odls_base_sigchld_unwatch(orte_odls_base_sigchld_t *watch);

#endif /* ORTE_MCA_ODLS_BASE_H */
