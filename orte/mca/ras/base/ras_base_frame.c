/* SPDX-License-Identifier: BSD-3-Clause */
/* The ras framework base: its variables (--hostfile, -H), open and select (one winner), the
 * allocation of the winner or of this host alone, and close. */
#include "herd_config.h"

#include <hwloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/base/mca_var.h"
#include "opal/mca/mca.h"
#include "opal/util/output.h"
#include "opal/util/topology.h"
#include "opal/util/show_help.h"
#include "opal/util/topology.h"
#include "orte/mca/ras/base/base.h"
#include "orte/mca/ras/ras.h"

#include "orte/mca/ras/base/component-hints.h"
#include "orte/mca/ras/base/static-components.h"

opal_mca_framework_t orte_ras_base_framework = OPAL_MCA_FRAMEWORK_INIT_HINTS(
    orte, ras, "Allocation: which nodes and how many slots", false, orte_ras_static_components,
    orte_ras_base_register, orte_ras_component_hints);

/* Storage of the framework variables, owned by the variable system (like the framework's own
 * selection string). */
static struct {
    char *hostfile;  /* ras_base_hostfile */
    char *host_list; /* ras_base_host */
} ras_base_vars;

int orte_ras_base_register(void)
{
    static const opal_mca_var_def_t vars[] = {
        {.name = "base_hostfile",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &ras_base_vars.hostfile,
         .help = "Hostfile naming the nodes to run on, one per line: host [slots=N] [max_slots=M] "
                 "(what --hostfile sets). A line without slots= gives its host one slot"},
        {.name = "base_host",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &ras_base_vars.host_list,
         .help = "Comma-separated hosts to run on, each with an optional slot count: a,b:4,c "
                 "(what -H sets). With a hostfile as well, it picks hosts from the hostfile"},
    };

    /* called when the framework registers, before its components (register_base) */
    return opal_mca_var_register_framework_table("ras", vars, OPAL_MCA_VAR_DEFS_COUNT(vars));
}

static const char *ras_base_non_empty(const char *value)
{
    return (NULL != value && '\0' != value[0]) ? value : NULL;
}

const char *orte_ras_base_hostfile(void)
{
    return ras_base_non_empty(ras_base_vars.hostfile);
}

const char *orte_ras_base_host_list(void)
{
    return ras_base_non_empty(ras_base_vars.host_list);
}

int orte_ras_base_open(void)
{
    /* registering the framework registers the base's variables first (register_base) */
    int rc = opal_mca_framework_open(&orte_ras_base_framework);
    if (HERD_SUCCESS != rc) {
        opal_mca_framework_close(&orte_ras_base_framework);
    }
    return rc;
}

void orte_ras_base_close(void)
{
    opal_mca_framework_close(&orte_ras_base_framework);
}

/* Cores of this host (hardware threads when hwloc sees no core), at least one. */
static uint32_t ras_base_local_slots(void)
{
    hwloc_topology_t topology;
    int count = 0;

    if (HERD_SUCCESS == opal_topology_load_local(&topology)) {
        count = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
        if (count <= 0) {
            count = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);
        }
        hwloc_topology_destroy(topology);
    }
    if (count <= 0) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);

        count = online > 0 && online <= (long) ORTE_RAS_MAX_SLOTS ? (int) online : 1;
    }
    return count > (int) ORTE_RAS_MAX_SLOTS ? ORTE_RAS_MAX_SLOTS : (uint32_t) count;
}

int orte_ras_base_local_allocation(orte_allocation_t **allocation)
{
    char host[ORTE_RAS_MAX_NAME_LEN + 1];
    orte_allocation_t *result;
    int rc;

    if (NULL == allocation) {
        return HERD_ERR_BAD_PARAM;
    }
    if (0 != gethostname(host, sizeof(host))) {
        snprintf(host, sizeof(host), "localhost");
    }
    host[sizeof(host) - 1] = '\0';
    if ('\0' == host[0]) {
        snprintf(host, sizeof(host), "localhost");
    }
    result = orte_allocation_new("local");
    if (NULL == result) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    rc = orte_allocation_add_node(result, host, ras_base_local_slots(), 0, NULL, "local");
    if (HERD_SUCCESS != rc) {
        orte_allocation_free(result);
        return rc;
    }
    *allocation = result;
    return HERD_SUCCESS;
}

/* Whether the ras selection variable names components to use (not "^a" to leave some out). */
static bool ras_base_selection_includes(const opal_mca_framework_t *fw)
{
    return NULL != fw->selection && '\0' != fw->selection[0] && '^' != fw->selection[0];
}

int orte_ras_base_allocate(orte_allocation_t **allocation)
{
    opal_mca_framework_t *fw = &orte_ras_base_framework;
    const opal_mca_component_entry_t *winner;
    const orte_ras_module_t *module;
    orte_allocation_t *result = NULL;
    int rc;

    if (NULL == allocation) {
        return HERD_ERR_BAD_PARAM;
    }
    rc = orte_ras_base_open();
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    rc = opal_mca_framework_select(fw);
    if (HERD_ERR_NOT_FOUND == rc) {
        if (ras_base_selection_includes(fw)) {
            /* the user named the components to use: running on this host alone instead would
             * hide that none of them could */
            opal_show_help(ORTE_RAS_BASE_HELP_FILE, "no-selected-component", true, fw->selection);
            return HERD_ERR_SILENT;
        }
        opal_output_verbose(10, fw->output,
                            "ras: no component available, the allocation is this host alone");
        return orte_ras_base_local_allocation(allocation);
    }
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    winner = fw->selected[0];
    module = winner->module;
    if (NULL == module || NULL == module->allocate) {
        return HERD_ERR_NOT_SUPPORTED;
    }
    rc = module->allocate(&result);
    if (HERD_SUCCESS != rc) {
        if (HERD_ERR_SILENT != rc) {
            opal_show_help(ORTE_RAS_BASE_HELP_FILE, "allocate-failed", true,
                           winner->component->name, opal_strerror(rc), winner->component->name);
        }
        return HERD_ERR_SILENT;
    }
    opal_output_verbose(10, fw->output, "ras: component %s found %u node(s)",
                        winner->component->name, result->num_nodes);
    *allocation = result;
    return HERD_SUCCESS;
}
