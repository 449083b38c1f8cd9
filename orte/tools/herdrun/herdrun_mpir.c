/* SPDX-License-Identifier: BSD-3-Clause */
/* The MPIR process-acquisition interface that parallel debuggers (gdb scripts, TotalView, DDT,
 * STAT) read in the starter's own executable: the process table, filled once every process of
 * the job has started, and MPIR_Breakpoint, which herdrun calls then. The names and types are
 * the MPIR standard's (MPI Forum, "The MPIR Process Acquisition Interface", 2018). */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>

#include "orte/tools/herdrun/herdrun_mpir.h"

/* The interface itself: exported from the executable, with the standard's names. */
struct MPIR_PROCDESC {
    char *host_name;
    char *executable_name;
    int pid;
};

#define MPIR_NULL           0
#define MPIR_DEBUG_SPAWNED  1
#define MPIR_DEBUG_ABORTING 2

/* visible to debuggers although herd builds with -fvisibility=hidden */
#define MPIR_EXPORT __attribute__((visibility("default"), used))

MPIR_EXPORT struct MPIR_PROCDESC *MPIR_proctable = NULL;
MPIR_EXPORT int MPIR_proctable_size = 0;
MPIR_EXPORT volatile int MPIR_being_debugged = 0;
MPIR_EXPORT volatile int MPIR_debug_state = MPIR_NULL;
MPIR_EXPORT char *MPIR_debug_abort_string = NULL;
/* herdrun is a starter, not a process of the job */
MPIR_EXPORT int MPIR_i_am_starter = 1;
/* a debugger may attach to some of the processes only */
MPIR_EXPORT int MPIR_partial_attach_ok = 1;
/* not for herdrun: its processes are stopped by --stop-on-exec, not in MPI_Init */
MPIR_EXPORT int MPIR_force_to_main = 0;

/* What debuggers break on: it must exist as a function that is really called. */
MPIR_EXPORT void MPIR_Breakpoint(void) __attribute__((noinline));
void MPIR_Breakpoint(void)
{
    __asm__ __volatile__("" ::: "memory");
}

static void free_table(void)
{
    for (int i = 0; NULL != MPIR_proctable && i < MPIR_proctable_size; ++i) {
        free(MPIR_proctable[i].host_name);
        free(MPIR_proctable[i].executable_name);
    }
    free(MPIR_proctable);
    MPIR_proctable = NULL;
    MPIR_proctable_size = 0;
}

static void procs_started(const orte_launch_proc_desc_t *procs, uint32_t n, void *arg)
{
    free_table();
    struct MPIR_PROCDESC *table = calloc(n > 0 ? n : 1, sizeof(*table));
    if (NULL == table) {
        return;
    }
    for (uint32_t i = 0; i < n; ++i) {
        table[i].host_name = strdup(procs[i].host);
        table[i].executable_name = strdup(procs[i].executable);
        table[i].pid = procs[i].pid;
    }
    MPIR_proctable = table;
    MPIR_proctable_size = (int) n;
    MPIR_debug_state = MPIR_DEBUG_SPAWNED;
    MPIR_Breakpoint();
}

static bool attached(void *arg)
{
    return 0 != MPIR_being_debugged;
}

static void breakpoint(void *arg)
{
    MPIR_Breakpoint();
}

static void aborting(const char *why, void *arg)
{
    if (MPIR_DEBUG_ABORTING == MPIR_debug_state) {
        return;
    }
    free(MPIR_debug_abort_string);
    MPIR_debug_abort_string = strdup(why);
    MPIR_debug_state = MPIR_DEBUG_ABORTING;
    MPIR_Breakpoint();
}

static const orte_launch_debugger_t hooks = {
    .procs_started = procs_started,
    .attached = attached,
    .breakpoint = breakpoint,
    .aborting = aborting,
};

const orte_launch_debugger_t *herdrun_mpir_hooks(void)
{
    return &hooks;
}

void herdrun_mpir_release(void)
{
    free_table();
    free(MPIR_debug_abort_string);
    MPIR_debug_abort_string = NULL;
}
