/* SPDX-License-Identifier: BSD-3-Clause */
/* herdrun's MCA variables (herdrun_direct, herdrun_start_timeout), and the warning about
 * settings no variable knows (most likely typos). */
#include "herd_config.h"

#include <stddef.h>
#include <stdbool.h>

#include "opal/mca/base/mca_var.h"
#include "opal/mca/opal_frameworks.h"
#include "opal/util/show_help.h"
#include "orte/mca/orte_frameworks.h"
#include "orte/runtime/launch_internal.h"

/* Static storage, as the variable system writes defaults back into it. */
static bool launch_direct = true;
static int launch_start_timeout = 60;
static int launch_proctable_max = 65536;
static bool launch_map_everywhere_var = false;

int orte_launch_register_params(void)
{
    launch_start_timeout = 60;
    launch_proctable_max = 65536;
    launch_map_everywhere_var = false;
    const opal_mca_var_def_t defs[] = {
        {.name = "direct",
         .type = OPAL_MCA_VAR_BOOL,
         .storage = &launch_direct,
         .help = "Run a job whose allocation is this host alone without starting a node "
                 "daemon: herdrun forks the job's session daemon itself (false: always start a "
                 "DVM)"},
        {.name = "start_timeout",
         .type = OPAL_MCA_VAR_INT,
         .storage = &launch_start_timeout,
         .help = "Seconds every session daemon of a job has to check in before herdrun gives up "
                 "on the job and stops it"},
        {.name = "proctable_max",
         .type = OPAL_MCA_VAR_INT,
         .storage = &launch_proctable_max,
         .help = "Largest job whose process table (rank, node, pid) the session daemons send "
                 "herdrun as soon as every process started, for debuggers (MPIR_proctable); a "
                 "larger job's table is only fetched when a tool asks (--stop-on-exec always "
                 "fetches it)"},
        {.name = "map_everywhere",
         .type = OPAL_MCA_VAR_BOOL,
         .storage = &launch_map_everywhere_var,
         .help = "With --do-not-launch, on the DVM herdrun starts: every node daemon maps the "
                 "job as its session daemon would (without starting anything) and reports its "
                 "share; herdrun checks each against its own map and prints a summary"},
    };
    int rc = opal_mca_var_register_framework_table("herdrun", defs, OPAL_MCA_VAR_DEFS_COUNT(defs));
    if (HERD_SUCCESS == rc && launch_start_timeout < 1) {
        opal_show_help(LAUNCH_HELP_FILE, "bad-start-timeout", false, launch_start_timeout);
        return HERD_ERR_BAD_PARAM;
    }
    return rc;
}

int launch_params_start_timeout(void)
{
    return launch_start_timeout;
}

uint32_t launch_params_proctable_max(void)
{
    return launch_proctable_max > 0 ? (uint32_t) launch_proctable_max : 0;
}

bool launch_params_map_everywhere(void)
{
    return launch_map_everywhere_var;
}

bool launch_params_direct(void)
{
    return launch_direct;
}

void orte_launch_check_settings(void)
{
    opal_mca_framework_t *all[] = {HERD_MCA_opal_FRAMEWORKS HERD_MCA_orte_FRAMEWORKS NULL};
    const char *prefixes[sizeof(all) / sizeof(all[0]) + 3];
    size_t n = 0;
    for (size_t i = 0; NULL != all[i]; ++i) {
        /* a framework loading only its selection does not know its other components' names */
        if (all[i]->registered && !all[i]->load_selected_only) {
            prefixes[n++] = all[i]->name;
            /* a name under the framework that no loaded component knows may belong to one it
             * left unloaded (and if not, the suggestion should consider those too) */
            if (all[i]->num_deferred > 0 && opal_mca_var_unknown_under(all[i]->name)) {
                (void) opal_mca_framework_load_deferred(all[i]);
            }
        }
    }
    if (opal_mca_var_find("herdrun_direct") >= 0) {
        prefixes[n++] = "herdrun"; /* herdrun's own group, registered by herdrun only */
    }
    prefixes[n++] = "mca_base";
    prefixes[n] = NULL;
    (void) opal_mca_var_check_unknown_under(prefixes);
}
