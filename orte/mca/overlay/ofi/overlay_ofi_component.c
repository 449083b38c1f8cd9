/* SPDX-License-Identifier: BSD-3-Clause */
/* overlay ofi: the component, its variables, and the offer of the module. Its priority (5) is
 * below tcp's (10): opening libfabric costs about 0.35 s per process on a small host, so it is
 * used only when asked for (--mca overlay ofi). */
#include "herd_config.h"

#include <stdbool.h>
#include <string.h>

#include "opal/mca/base/mca_var.h"
#include "opal/util/argv.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"
#include "orte/mca/overlay/ofi/overlay_ofi.h"
#include "orte/mca/overlay/overlay.h"

#define OVERLAY_OFI_DEFAULT_PRIORITY 5

overlay_ofi_settings_t overlay_ofi_settings = {.priority = OVERLAY_OFI_DEFAULT_PRIORITY};

static int overlay_ofi_register(const opal_mca_component_t *component)
{
    static const opal_mca_var_def_t vars[] = {
        {.name = "priority",
         .type = OPAL_MCA_VAR_INT,
         .storage = &overlay_ofi_settings.priority,
         .help = "Priority of the ofi overlay component (below tcp's: it is used only when "
                 "selected, --mca overlay ofi)"},
        {.name = "provider",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &overlay_ofi_settings.provider,
         .help = "The libfabric provider of the daemons' RDM endpoints (tcp, shm, udp, ...); "
                 "empty: libfabric's first choice (FI_PROVIDER also applies). When it cannot "
                 "be opened the daemons use tcp alone (said at overlay_base_verbose 1)"},
    };

    overlay_ofi_settings.priority = OVERLAY_OFI_DEFAULT_PRIORITY;
    overlay_ofi_settings.provider = NULL;
    return opal_mca_var_register_table(component, vars, OPAL_MCA_VAR_DEFS_COUNT(vars));
}

/* Whether the tcp component this one wraps could work: declined when tcp was kept by the
 * selection but did not open (a bad overlay_tcp_* value: the same would fail here). One the
 * selection left out (--mca overlay ofi) is opened at the first init. */
static bool overlay_ofi_tcp_usable(void)
{
    const opal_mca_framework_t *fw = &orte_overlay_base_framework;
    char **names = NULL;
    bool exclude = false;
    bool mixed = false;
    bool usable = true;

    for (size_t i = 0; i < fw->num_components; ++i) {
        const opal_mca_component_entry_t *entry = &fw->components[i];
        if (0 != strcmp(entry->component->name, "tcp") || entry->opened) {
            continue;
        }
        if (HERD_SUCCESS != opal_mca_split_selection(fw->selection, &exclude, &names, &mixed)) {
            return false;
        }
        /* kept by the selection, and still not open: its open failed */
        usable = NULL != names && (opal_argv_find(names, "tcp") >= 0) == exclude;
        opal_argv_free(names);
    }
    return usable;
}

static int overlay_ofi_query(const opal_mca_component_t *component, void **module, int *priority)
{
    if (!overlay_ofi_tcp_usable()) {
        opal_output_verbose(1, overlay_ofi_output(),
                            "overlay ofi: not available: the tcp component it wraps did not open");
        return HERD_ERR_NOT_AVAILABLE;
    }
    *module = (void *) &overlay_ofi_module;
    *priority = overlay_ofi_settings.priority;
    return HERD_SUCCESS;
}

int overlay_ofi_tcp_module(const orte_overlay_module_t **tcp)
{
    void *module = NULL;
    int rc = opal_mca_framework_component_module(&orte_overlay_base_framework, "tcp", &module);

    if (HERD_SUCCESS != rc || NULL == module) {
        opal_show_help(OVERLAY_OFI_HELP_FILE, "no-tcp", true,
                       "the tcp overlay component is not built, not found, or declined");
        return HERD_ERR_SILENT;
    }
    *tcp = module;
    return HERD_SUCCESS;
}

int overlay_ofi_output(void)
{
    return orte_overlay_base_framework.output;
}

OPAL_MCA_COMPONENT(orte, overlay, ofi, .register_params = overlay_ofi_register,
                   .query = overlay_ofi_query);
