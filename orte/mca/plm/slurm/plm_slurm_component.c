/* SPDX-License-Identifier: BSD-3-Clause */
/* plm slurm: start every daemon with one srun step inside the job's allocation, so Slurm knows
 * and accounts for them, and kills the step when one daemon fails (--kill-on-bad-exit). srun
 * starts them all at once, so daemons connect straight to the root (flat wireup) and take their
 * rank from SLURM_PROCID. The step shares the allocation (--overlap, Slurm 20.11 and later): a
 * persistent DVM must not hold the CPUs that the allocation's other steps (srun beside it) need,
 * and its daemons are not bound (--cpu-bind=none): they bind the jobs' processes themselves. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "opal/mca/base/mca_var.h"
#include "opal/util/argv.h"
#include "orte/mca/plm/plm.h"

static int plm_slurm_launch(orte_plm_daemon_t *daemons, size_t num_daemons, const char *herdd);

static const orte_plm_module_t plm_slurm_module = {
    .name = "slurm",
    .prebinds_listeners = false,
    .tree_spawn = false,
    .flat_wireup = true,
    .launch = plm_slurm_launch,
};

static struct {
    int priority;
    char *srun;    /* plm_slurm_srun */
    char *args;    /* plm_slurm_args */
    char *overlap; /* plm_slurm_overlap: auto, yes or no */
} plm_slurm_state;

static int plm_slurm_register(const opal_mca_component_t *component)
{
    static const opal_mca_var_def_t vars[] = {
        {.name = "priority",
         .type = OPAL_MCA_VAR_INT,
         .storage = &plm_slurm_state.priority,
         .help = "Priority of the Slurm launcher"},
        {.name = "srun",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &plm_slurm_state.srun,
         .help = "The srun command to start daemons with"},
        {.name = "args",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &plm_slurm_state.args,
         .help = "Extra srun arguments, split at spaces (e.g. "
                 "\"--partition=debug\")"},
        {.name = "overlap",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &plm_slurm_state.overlap,
         .help = "Start the daemons' step with --overlap, so that it holds no CPU the "
                 "allocation's other steps need: yes, no, or auto (when srun is Slurm 20.11 "
                 "or later)"},
    };

    plm_slurm_state.priority = 5;
    plm_slurm_state.srun = "srun";
    plm_slurm_state.args = "";
    plm_slurm_state.overlap = "auto";
    return opal_mca_var_register_table(component, vars, OPAL_MCA_VAR_DEFS_COUNT(vars));
}

static int plm_slurm_query(const opal_mca_component_t *component, void **module, int *priority)
{
    *module = (void *) &plm_slurm_module;
    *priority = plm_slurm_state.priority;
    return HERD_SUCCESS;
}

/* Whether srun knows --overlap (Slurm 20.11 and later): srun --version says "slurm 22.05.8"
 * (Debian's: "slurm-wlm 22.05.8"). */
static bool srun_has_overlap(void)
{
    if (0 == strcmp(plm_slurm_state.overlap, "yes")) {
        return true;
    }
    if (0 != strcmp(plm_slurm_state.overlap, "auto")) {
        return false;
    }
    char command[512];
    snprintf(command, sizeof(command), "%s --version 2>/dev/null", plm_slurm_state.srun);
    FILE *p = popen(command, "r");
    if (NULL == p) {
        return false;
    }
    int major = 0, minor = 0;
    int got = fscanf(p, "%*s %d.%d", &major, &minor);
    pclose(p);
    return 2 == got && (major > 20 || (20 == major && minor >= 11));
}

/* srun --nodes=N --ntasks=N --ntasks-per-node=1 --nodelist=a,b --kill-on-bad-exit=1 ... herdd */
static char **srun_argv(orte_plm_daemon_t *daemons, size_t num_daemons, const char *herdd)
{
    char **argv = opal_argv_split(plm_slurm_state.srun, ' ');
    char **nodes = NULL;
    char option[64];
    int rc = (NULL != argv) ? HERD_SUCCESS : HERD_ERR_OUT_OF_RESOURCE;
    for (size_t i = 0; HERD_SUCCESS == rc && i < num_daemons; ++i) {
        rc = opal_argv_append(&nodes, daemons[i].node->name);
    }
    char *list = (HERD_SUCCESS == rc) ? opal_argv_join(nodes, ',') : NULL;
    opal_argv_free(nodes);
    if (NULL == list) {
        opal_argv_free(argv);
        return NULL;
    }
    snprintf(option, sizeof(option), "--nodes=%zu", num_daemons);
    rc = opal_argv_append(&argv, option);
    snprintf(option, sizeof(option), "--ntasks=%zu", num_daemons);
    rc = (HERD_SUCCESS == rc) ? opal_argv_append(&argv, option) : rc;
    const char *fixed[] = {"--ntasks-per-node=1", "--kill-on-bad-exit=1", "--quiet",
                           "--input=none", "--cpu-bind=none", "--nodelist"};
    if (HERD_SUCCESS == rc && srun_has_overlap()) {
        rc = opal_argv_append(&argv, "--overlap");
    }
    for (size_t i = 0; HERD_SUCCESS == rc && i < sizeof(fixed) / sizeof(fixed[0]); ++i) {
        rc = opal_argv_append(&argv, fixed[i]);
    }
    rc = (HERD_SUCCESS == rc) ? opal_argv_append(&argv, list) : rc;
    free(list);
    char **extra = opal_argv_split(NULL != plm_slurm_state.args ? plm_slurm_state.args : "", ' ');
    rc = (HERD_SUCCESS == rc && NULL != extra) ? opal_argv_insert(&argv, opal_argv_count(argv),
                                                                  extra)
                                               : rc;
    opal_argv_free(extra);
    rc = (HERD_SUCCESS == rc) ? opal_argv_append(&argv, herdd) : rc;
    if (HERD_SUCCESS != rc) {
        opal_argv_free(argv);
        return NULL;
    }
    return argv;
}

static int plm_slurm_launch(orte_plm_daemon_t *daemons, size_t num_daemons, const char *herdd)
{
    int err_pipe[2];
    char **argv = srun_argv(daemons, num_daemons, herdd);
    if (NULL == argv || 0 == num_daemons) {
        opal_argv_free(argv);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (0 != pipe2(err_pipe, O_CLOEXEC)) {
        opal_argv_free(argv);
        return HERD_ERR_IN_ERRNO;
    }
    pid_t pid = fork();
    if (pid < 0) {
        int saved = errno;
        close(err_pipe[0]);
        close(err_pipe[1]);
        opal_argv_free(argv);
        errno = saved;
        return HERD_ERR_IN_ERRNO;
    }
    if (0 == pid) {
        /* srun ends the step (every daemon) when it is killed */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        dup2(err_pipe[1], STDERR_FILENO);
        int null_fd = open("/dev/null", O_RDWR);
        if (null_fd >= 0) {
            dup2(null_fd, STDIN_FILENO);
            dup2(null_fd, STDOUT_FILENO);
        }
        setpgid(0, 0);
        /* one bootstrap for every task; each daemon's rank comes from SLURM_PROCID, its node
         * name from SLURMD_NODENAME (see herdd) */
        for (size_t b = 0; NULL != daemons[0].boot && NULL != daemons[0].boot[b]; ++b) {
            putenv(daemons[0].boot[b]);
        }
        setenv(ORTE_BOOT_VPID, "slurm", 1);
        setenv(ORTE_BOOT_NODE, "slurm", 1);
        execvp(argv[0], argv);
        dprintf(STDERR_FILENO, "cannot execute %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    opal_argv_free(argv);
    close(err_pipe[1]);
    /* one process stands for the whole step: the first daemon holds it */
    daemons[0].pid = pid;
    daemons[0].stderr_fd = err_pipe[0];
    for (size_t i = 1; i < num_daemons; ++i) {
        daemons[i].pid = 0;
    }
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(orte, plm, slurm, .register_params = plm_slurm_register,
                   .query = plm_slurm_query);
