/* SPDX-License-Identifier: BSD-3-Clause */
/* The iof framework object, its variables (the flow-control window, the longest held-back
 * partial line), and opening it with one selected component. */
#include "herd_config.h"

#include <stdio.h>

#include "opal/mca/base/mca_var.h"
#include "opal/util/show_help.h"
#include "opal/mca/mca.h"
#include "orte/mca/iof/iof.h"

#include "orte/mca/iof/base/component-hints.h"
#include "orte/mca/iof/base/static-components.h"

#define IOF_BASE_DEFAULT_WINDOW   ((size_t) 256 * 1024)
#define IOF_BASE_DEFAULT_LINE_MAX ((size_t) 64 * 1024)
#define IOF_BASE_DEFAULT_PIPE_SIZE ((size_t) 256 * 1024)
/* A window smaller than a pipe read would stall a stream on every read. */
#define IOF_BASE_MIN_WINDOW   ((size_t) 4096)
#define IOF_BASE_MIN_LINE_MAX ((size_t) 80)
#define IOF_BASE_MAX_SIZE     ((size_t) 1 << 30)

static int iof_base_register(void);

opal_mca_framework_t orte_iof_base_framework = OPAL_MCA_FRAMEWORK_INIT_HINTS(
    orte, iof, "I/O forwarding: the processes' stdout/stderr to herdrun, its stdin to them",
    false, orte_iof_static_components, iof_base_register, orte_iof_component_hints);

/* Storage of the framework variables, owned by the variable system. */
static struct {
    size_t window;   /* iof_base_window */
    size_t line_max; /* iof_base_line_max */
    size_t pipe_size; /* iof_base_pipe_size */
} iof_base_vars = {
    .window = IOF_BASE_DEFAULT_WINDOW,
    .line_max = IOF_BASE_DEFAULT_LINE_MAX,
    .pipe_size = IOF_BASE_DEFAULT_PIPE_SIZE,
};

static int check_size(const char *name, size_t value, size_t low)
{
    if (value < low || value > IOF_BASE_MAX_SIZE) {
        opal_show_help("help-iof-base.txt", "bad-size", false, name, value, low,
                       (size_t) IOF_BASE_MAX_SIZE, name, name);
        return HERD_ERR_BAD_PARAM;
    }
    return HERD_SUCCESS;
}

static int iof_base_register(void)
{
    static const opal_mca_var_def_t vars[] = {
        {.name = "base_window",
         .type = OPAL_MCA_VAR_SIZE,
         .storage = &iof_base_vars.window,
         .help = "Bytes of one process's stdout or stderr (or of the job's stdin) that may be on "
                 "their way and not yet written out; a process writing faster than the reader "
                 "blocks once this much (plus a partial line of up to iof_base_line_max) is "
                 "pending, so no daemon's memory grows with the output"},
        {.name = "base_line_max",
         .type = OPAL_MCA_VAR_SIZE,
         .storage = &iof_base_vars.line_max,
         .help = "Longest partial line (bytes) a daemon holds back waiting for its newline, so "
                 "that lines of different ranks are never mixed; a longer line is passed on in "
                 "pieces"},
        {.name = "base_pipe_size",
         .type = OPAL_MCA_VAR_SIZE,
         .storage = &iof_base_vars.pipe_size,
         .help = "Capacity (bytes) asked for each process's stdout pipe, so that a process writes "
                 "on while its output is forwarded (0: the system's default, 64 KiB); a daemon "
                 "enlarges pipes up to 16 MiB in all, within the per-user pipe limit"},
    };
    int rc;

    iof_base_vars.window = IOF_BASE_DEFAULT_WINDOW;
    iof_base_vars.line_max = IOF_BASE_DEFAULT_LINE_MAX;
    iof_base_vars.pipe_size = IOF_BASE_DEFAULT_PIPE_SIZE;
    rc = opal_mca_var_register_framework_table("iof", vars, OPAL_MCA_VAR_DEFS_COUNT(vars));
    if (HERD_SUCCESS == rc) {
        rc = check_size("iof_base_window", iof_base_vars.window, IOF_BASE_MIN_WINDOW);
    }
    if (HERD_SUCCESS == rc) {
        rc = check_size("iof_base_line_max", iof_base_vars.line_max, IOF_BASE_MIN_LINE_MAX);
    }
    return rc;
}

int orte_iof_base_open(void)
{
    return opal_mca_framework_open_select(&orte_iof_base_framework);
}

void orte_iof_base_close(void)
{
    opal_mca_framework_close(&orte_iof_base_framework);
}

const orte_iof_module_t *orte_iof_base_module(void)
{
    const opal_mca_framework_t *fw = &orte_iof_base_framework;

    return fw->opened ? opal_mca_framework_module(fw) : NULL;
}

size_t orte_iof_base_window(void)
{
    return iof_base_vars.window;
}

size_t orte_iof_base_pipe_size(void)
{
    return iof_base_vars.pipe_size > IOF_BASE_MAX_SIZE ? IOF_BASE_MAX_SIZE
                                                       : iof_base_vars.pipe_size;
}

size_t orte_iof_base_line_max(void)
{
    return iof_base_vars.line_max;
}
