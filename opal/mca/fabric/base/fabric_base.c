/* SPDX-License-Identifier: BSD-3-Clause */
/* The fabric framework base: open and select every available component, run their discovery
 * for the node inventory, and close them again. */
#include "herd_config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/base/mca_var.h"
#include "opal/mca/fabric/base/base.h"
#include "opal/mca/fabric/fabric.h"
#include "opal/mca/mca.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"

#include "opal/mca/fabric/base/component-hints.h"
#include "opal/mca/fabric/base/static-components.h"

opal_mca_framework_t opal_fabric_base_framework = OPAL_MCA_FRAMEWORK_INIT_HINTS(
    opal, fabric, "Network discovery: interfaces, providers and transports", true,
    opal_fabric_static_components, NULL, opal_fabric_component_hints);

static void fabric_base_hostname(char *name, size_t size)
{
    if (0 != gethostname(name, size)) {
        snprintf(name, size, "(unknown host)");
    }
    name[size - 1] = '\0';
}

int opal_fabric_base_open(void)
{
    return opal_mca_framework_open_select(&opal_fabric_base_framework);
}

void opal_fabric_base_close(void)
{
    opal_mca_framework_close(&opal_fabric_base_framework);
}

int opal_fabric_base_discover(opal_fabric_record_t ***records, size_t *num_records)
{
    opal_mca_framework_t *fw = &opal_fabric_base_framework;
    opal_fabric_record_t **found;
    size_t count = 0;

    if (NULL == records || NULL == num_records) {
        return HERD_ERR_BAD_PARAM;
    }
    if (!fw->opened) {
        opal_output(OPAL_OUTPUT_STDERR, "fabric: discovery was asked for before the framework "
                                        "was opened (opal_fabric_base_open)");
        return HERD_ERR_BAD_PARAM;
    }
    if (0 == fw->num_selected) {
        *records = NULL;
        *num_records = 0;
        return HERD_SUCCESS;
    }
    found = calloc(fw->num_selected, sizeof(*found));
    if (NULL == found) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < fw->num_selected; i++) {
        const opal_mca_component_entry_t *entry = fw->selected[i];
        const opal_fabric_module_t *module = entry->module;
        opal_fabric_record_t *record = NULL;
        int rc;

        if (NULL == module || NULL == module->discover) {
            continue;
        }
        rc = module->discover(&record);
        if (HERD_SUCCESS != rc) {
            /* one broken stack must not hide what the others found */
            if (HERD_ERR_SILENT != rc) {
                char host[256];

                fabric_base_hostname(host, sizeof(host));
                opal_show_help(OPAL_FABRIC_BASE_HELP_FILE, "discover-failed", true,
                               entry->component->name, host, opal_strerror(rc),
                               entry->component->name);
            }
            continue;
        }
        opal_output_verbose(10, fw->output, "fabric: component %s found %u device(s)",
                            entry->component->name, record->num_devices);
        found[count++] = record;
    }
    if (0 == count) {
        free(found);
        found = NULL;
    }
    *records = found;
    *num_records = count;
    return HERD_SUCCESS;
}

/* "environment (HERD_MCA_fabric_tcp_if_include)", for messages about a variable. */
static void fabric_base_var_origin(const opal_mca_var_info_t *info, char *origin, size_t size)
{
    const char *source = opal_mca_var_source_name(info->source);

    if (NULL != info->source_detail && '\0' != info->source_detail[0]) {
        snprintf(origin, size, "%s (%s)", source, info->source_detail);
    } else {
        snprintf(origin, size, "%s", source);
    }
}

/* Whether a string variable holds a non-empty value; *value gets it (caller frees). */
static bool fabric_base_var_is_set(int index, char **value)
{
    char *text = NULL;

    if (index < 0 || HERD_SUCCESS != opal_mca_var_value_string(index, &text)) {
        return false;
    }
    if (NULL == text || '\0' == text[0]) {
        free(text);
        return false;
    }
    *value = text;
    return true;
}

int opal_fabric_base_check_include_exclude(int include_index, int exclude_index)
{
    opal_mca_var_info_t include_info;
    opal_mca_var_info_t exclude_info;
    char include_origin[512];
    char exclude_origin[512];
    char *include_value = NULL;
    char *exclude_value = NULL;
    int rc = HERD_SUCCESS;

    if (!fabric_base_var_is_set(include_index, &include_value)) {
        return HERD_SUCCESS;
    }
    if (!fabric_base_var_is_set(exclude_index, &exclude_value)) {
        goto out;
    }
    rc = opal_mca_var_get_info(include_index, &include_info);
    if (HERD_SUCCESS == rc) {
        rc = opal_mca_var_get_info(exclude_index, &exclude_info);
    }
    if (HERD_SUCCESS != rc) {
        goto out;
    }
    fabric_base_var_origin(&include_info, include_origin, sizeof(include_origin));
    fabric_base_var_origin(&exclude_info, exclude_origin, sizeof(exclude_origin));
    opal_show_help(OPAL_FABRIC_BASE_HELP_FILE, "include-and-exclude", true, include_info.full_name,
                   exclude_info.full_name, include_info.full_name, include_value, include_origin,
                   exclude_info.full_name, exclude_value, exclude_origin);
    rc = HERD_ERR_SILENT;

out:
    free(include_value);
    free(exclude_value);
    return rc;
}
