/* SPDX-License-Identifier: BSD-3-Clause */
/* The wireup framework object (every available component is active), its variables, and the
 * helpers modules use to prepare a process (environment, inherited descriptors). */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_var.h"
#include "opal/mca/mca.h"
#include "opal/util/argv.h"
#include "opal/util/show_help.h"
#include "orte/mca/wireup/wireup.h"

#include "orte/mca/wireup/base/component-hints.h"
#include "orte/mca/wireup/base/static-components.h"

#define WIREUP_BASE_DEFAULT_GET_TIMEOUT 60 /* seconds */
#define WIREUP_BASE_HELP_FILE           "help-wireup-base.txt"

static int wireup_base_register(void);

opal_mca_framework_t orte_wireup_base_framework = OPAL_MCA_FRAMEWORK_INIT_HINTS(
    orte, wireup,
    "Wireup: what a job's processes talk to on their node to find each other (native for "
    "libherd, pmix for PMIx clients such as Open MPI, pmi1 for PMI-1 clients such as MPICH)",
    true, orte_wireup_static_components, wireup_base_register, orte_wireup_component_hints);

static struct {
    int get_timeout; /* wireup_base_get_timeout, seconds */
    bool always;     /* wireup_base_always */
} wireup_base_vars = {
    .get_timeout = WIREUP_BASE_DEFAULT_GET_TIMEOUT,
};

/* The selected modules, in priority order (the framework's only state besides the list). */
static const orte_wireup_module_t **wireup_modules;

/* The framework's variables. The last one is also registered alone (wireup_base_register_always):
 * it is read before the framework (and its components) is loaded. */
static const opal_mca_var_def_t wireup_base_var_defs[] = {
    {.name = "base_get_timeout",
     .type = OPAL_MCA_VAR_INT,
     .storage = &wireup_base_vars.get_timeout,
     .help = "Seconds a process's get of a peer's key (herd_get, PMIx_Get) waits for the peer to "
             "commit it before failing with an error naming the peer and the key"},
    {.name = "base_always",
     .type = OPAL_MCA_VAR_BOOL,
     .storage = &wireup_base_vars.always,
     .help = "Start the wireups on every node of every job. By default a node whose programs can "
             "use none gets none (dynamically linked programs that need only the C runtime and "
             "start no other program, such as /bin/true or hostname): that saves starting a PMIx "
             "server"},
};
#define WIREUP_BASE_NUM_VARS OPAL_MCA_VAR_DEFS_COUNT(wireup_base_var_defs)

static int wireup_base_register_always(void)
{
    wireup_base_vars.always = false;
    return opal_mca_var_register_framework_table(
        "wireup", &wireup_base_var_defs[WIREUP_BASE_NUM_VARS - 1], 1);
}

static int wireup_base_register(void)
{
    wireup_base_vars.get_timeout = WIREUP_BASE_DEFAULT_GET_TIMEOUT;
    wireup_base_vars.always = false;
    return opal_mca_var_register_framework_table("wireup", wireup_base_var_defs,
                                                 WIREUP_BASE_NUM_VARS);
}

bool orte_wireup_base_always(int *output)
{
    *output = -1;
    /* a selection is a choice of wireups to run (and a bad one must be reported) */
    if (opal_mca_var_is_set("wireup") || wireup_base_register_always() < 0 ||
        wireup_base_vars.always) {
        return true;
    }
    if (opal_mca_var_is_set("wireup_base_verbose") &&
        HERD_SUCCESS == opal_mca_framework_register(&orte_wireup_base_framework)) {
        *output = orte_wireup_base_framework.output;
    }
    return false;
}

int orte_wireup_base_open(void)
{
    opal_mca_framework_t *fw = &orte_wireup_base_framework;
    if (NULL != wireup_modules) {
        return HERD_SUCCESS;
    }
    int rc = opal_mca_framework_open_select(fw);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (wireup_base_vars.get_timeout < 0) {
        opal_show_help(WIREUP_BASE_HELP_FILE, "bad-get-timeout", false,
                       wireup_base_vars.get_timeout);
        opal_mca_framework_close(fw);
        return HERD_ERR_BAD_PARAM;
    }
    wireup_modules = calloc(fw->num_selected + 1, sizeof(*wireup_modules));
    if (NULL == wireup_modules) {
        opal_mca_framework_close(fw);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < fw->num_selected; ++i) {
        wireup_modules[i] = fw->selected[i]->module;
    }
    return HERD_SUCCESS;
}

void orte_wireup_base_close(void)
{
    free(wireup_modules);
    wireup_modules = NULL;
    opal_mca_framework_close(&orte_wireup_base_framework);
}

const orte_wireup_module_t *const *orte_wireup_base_modules(size_t *n)
{
    *n = (NULL != wireup_modules) ? orte_wireup_base_framework.num_selected : 0;
    return wireup_modules;
}

int orte_wireup_base_get_timeout_ms(void)
{
    return wireup_base_vars.get_timeout * 1000;
}

int orte_wireup_child_add_fd(orte_wireup_child_t *child, int fd, int *child_fd)
{
    if (NULL == child || fd < 0 || NULL == child_fd) {
        return HERD_ERR_BAD_PARAM;
    }
    if (child->num_fds >= ORTE_WIREUP_MAX_CHILD_FDS) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    /* after stdin, stdout and stderr, in the order they were added */
    child->fds[child->num_fds] = fd;
    child->child_fd[child->num_fds] = 3 + child->num_fds;
    *child_fd = child->child_fd[child->num_fds];
    child->num_fds++;
    return HERD_SUCCESS;
}

int orte_wireup_child_setenv(orte_wireup_child_t *child, const char *name, const char *value)
{
    if (NULL == child || NULL == child->env || NULL == name || '\0' == *name ||
        NULL != strchr(name, '=') || NULL == value) {
        return HERD_ERR_BAD_PARAM;
    }
    size_t name_len = strlen(name);
    char *entry = malloc(name_len + strlen(value) + 2);
    if (NULL == entry) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    sprintf(entry, "%s=%s", name, value);
    int i = opal_env_find(*child->env, name);
    if (i >= 0) {
        free((*child->env)[i]);
        (*child->env)[i] = entry;
        return HERD_SUCCESS;
    }
    int rc = opal_argv_append(child->env, entry);
    free(entry);
    return rc;
}
