/* SPDX-License-Identifier: BSD-3-Clause */
/* Daemons and launchers are child subreapers: what a dead session daemon (or node daemon) leaves
 * behind is re-parented to them, and they remove it. */
#ifndef ORTE_UTIL_ORPHANS_H
#define ORTE_UTIL_ORPHANS_H

#include <stddef.h>
#include <sys/types.h>

#include "opal/visibility.h"

/* Become the subreaper of everything this process starts (Linux; elsewhere nothing happens). */
OPAL_EXPORT void orte_orphans_adopt(void);

/* A child this process started and manages itself (a helper process), never taken for an
 * orphan until released (at most 8 at once). */
OPAL_EXPORT void orte_orphans_keep(pid_t pid);
OPAL_EXPORT void orte_orphans_release(pid_t pid);

/* SIGKILL every child of this process that is not in known (nor kept) (and its process group), and
 * reap it. Returns how many there were. */
OPAL_EXPORT size_t orte_orphans_kill(const pid_t *known, size_t num_known);

/* The gentle first step: reap every child not in known that has exited, and SIGTERM each one
 * that runs (a session daemon whose node daemon died says so to herdrun before it ends). Returns
 * how many run still; orte_orphans_kill them after a grace. */
OPAL_EXPORT size_t orte_orphans_term(const pid_t *known, size_t num_known);

#endif /* ORTE_UTIL_ORPHANS_H */
