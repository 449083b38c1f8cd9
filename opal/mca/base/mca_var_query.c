/* SPDX-License-Identifier: BSD-3-Clause */
/* MCA variables: what herd-info and the programs ask of the registry (variables, their values,
 * defaults, types and sources), and the warnings about names no variable knows. */

#include "herd_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_var_internal.h"
#include "opal/util/argv.h"
#include "opal/util/show_help.h"

static const char *const mca_var_type_names[] = {
    [OPAL_MCA_VAR_INT] = "int",       [OPAL_MCA_VAR_UNSIGNED] = "unsigned",
    [OPAL_MCA_VAR_SIZE] = "size",     [OPAL_MCA_VAR_BOOL] = "bool",
    [OPAL_MCA_VAR_STRING] = "string", [OPAL_MCA_VAR_ENUM] = "enum",
};

static const char *const mca_var_source_names[] = {
    [OPAL_MCA_VAR_SOURCE_DEFAULT] = "default",
    [OPAL_MCA_VAR_SOURCE_SYSTEM_FILE] = "system file",
    [OPAL_MCA_VAR_SOURCE_USER_FILE] = "user file",
    [OPAL_MCA_VAR_SOURCE_ENV] = "environment",
    [OPAL_MCA_VAR_SOURCE_CLI] = "command line",
    [OPAL_MCA_VAR_SOURCE_SET] = "set",
};

/* ---------------------------------------------------------------------------------------------
 * Queries
 * ------------------------------------------------------------------------------------------- */

int opal_mca_var_count(void)
{
    return (int) mca_var_registry.num_vars;
}

int opal_mca_var_get_info(int index, opal_mca_var_info_t *info)
{
    const mca_var_t *entry;
    const mca_var_t *var;

    if (!mca_var_index_is_valid(index) || NULL == info) {
        return HERD_ERR_BAD_PARAM;
    }
    entry = &mca_var_registry.vars[index];
    var = &mca_var_registry.vars[mca_var_target(index)];
    *info = (opal_mca_var_info_t){
        .index = index,
        .full_name = entry->full_name,
        .framework = entry->framework,
        .component = entry->component,
        .name = entry->name,
        .help = var->help,
        .type = var->type,
        .level = entry->level,
        .enum_values = var->enum_values,
        .source = var->source,
        .source_detail = var->source_detail,
        .deprecated_by = (entry == var) ? NULL : var->full_name,
    };
    return HERD_SUCCESS;
}

int opal_mca_var_value_string(int index, char **value)
{
    const mca_var_t *var;

    if (!mca_var_index_is_valid(index) || NULL == value) {
        return HERD_ERR_BAD_PARAM;
    }
    var = &mca_var_registry.vars[mca_var_target(index)];
    return mca_var_value_to_string(var, &var->value, value);
}

int opal_mca_var_default_string(int index, char **value)
{
    const mca_var_t *var;

    if (!mca_var_index_is_valid(index) || NULL == value) {
        return HERD_ERR_BAD_PARAM;
    }
    var = &mca_var_registry.vars[mca_var_target(index)];
    return mca_var_value_to_string(var, &var->default_value, value);
}

const char *opal_mca_var_type_name(opal_mca_var_type_t type)
{
    if ((unsigned int) type > OPAL_MCA_VAR_ENUM) {
        return "unknown";
    }
    return mca_var_type_names[type];
}

const char *opal_mca_var_source_name(opal_mca_var_source_t source)
{
    if ((unsigned int) source > OPAL_MCA_VAR_SOURCE_SET) {
        return "unknown";
    }
    return mca_var_source_names[source];
}

/* ---------------------------------------------------------------------------------------------
 * Unknown names
 * ------------------------------------------------------------------------------------------- */

/* Whether name is under one of prefixes ("odls" covers "odls" and "odls_..."). */
static bool mca_var_has_prefix(const char *name, const char *const *prefixes)
{
    if (NULL == prefixes) {
        return false;
    }
    for (size_t i = 0; NULL != prefixes[i]; i++) {
        size_t len = strlen(prefixes[i]);

        if (0 == strncmp(name, prefixes[i], len) && ('\0' == name[len] || '_' == name[len])) {
            return true;
        }
    }
    return false;
}

/* only_prefixes NULL: every name not under skip_prefixes. */
static int mca_var_check_unknown(const char *const *skip_prefixes, const char *const *only_prefixes)
{
    char **candidates;
    char **seen = NULL;
    size_t num_candidates = 0;
    int count = 0;

    /* Only current names are suggested: suggesting a deprecated one would trade one warning
     * for another. */
    candidates = calloc(mca_var_registry.num_vars + 1, sizeof(*candidates));
    if (NULL == candidates) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < mca_var_registry.num_vars; i++) {
        if (mca_var_registry.vars[i].synonym_of < 0) {
            candidates[num_candidates++] = mca_var_registry.vars[i].full_name;
        }
    }

    for (size_t i = 0; i < mca_var_registry.num_settings; i++) {
        const char *name = mca_var_registry.settings[i].name;
        const mca_var_setting_t *setting;
        const char *suggestion;

        if (OPAL_MCA_VAR_SOURCE_SET == mca_var_registry.settings[i].source ||
            opal_mca_var_find(name) >= 0 || mca_var_has_prefix(name, skip_prefixes) ||
            (NULL != only_prefixes && !mca_var_has_prefix(name, only_prefixes)) ||
            opal_argv_find(seen, name) >= 0) {
            continue;
        }
        if (HERD_SUCCESS != opal_argv_append(&seen, name)) {
            count = HERD_ERR_OUT_OF_RESOURCE;
            goto out;
        }
        count++;
        if (opal_argv_find(mca_var_registry.unknown_warned, name) >= 0) {
            continue;
        }
        if (HERD_SUCCESS != opal_argv_append(&mca_var_registry.unknown_warned, name)) {
            count = HERD_ERR_OUT_OF_RESOURCE;
            goto out;
        }
        /* Name the source that would have won, which is the one the user is likely editing. */
        setting = mca_var_best_setting(name, false);
        suggestion = opal_closest_string(name, candidates);
        if (NULL != suggestion) {
            opal_show_help(MCA_VAR_HELP_FILE, "unknown-name", false, name,
                           opal_mca_var_source_name(setting->source),
                           NULL == setting->detail ? "" : setting->detail, suggestion);
        } else {
            opal_show_help(MCA_VAR_HELP_FILE, "unknown-name-no-suggestion", false, name,
                           opal_mca_var_source_name(setting->source),
                           NULL == setting->detail ? "" : setting->detail);
        }
    }
out:
    opal_argv_free(seen);
    free(candidates);
    return count;
}

int opal_mca_var_check_unknown(const char *const *skip_prefixes)
{
    return mca_var_check_unknown(skip_prefixes, NULL);
}

int opal_mca_var_check_unknown_under(const char *const *prefixes)
{
    static const char *const none[] = {NULL};
    return mca_var_check_unknown(NULL, NULL != prefixes ? prefixes : none);
}
