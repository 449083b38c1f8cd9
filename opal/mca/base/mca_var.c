/* SPDX-License-Identifier: BSD-3-Clause */
/* The MCA variable system's registry: its life cycle (init, finalize) and the registration of
 * variables. The other mca_var_*.c files parse, resolve, read the sources and answer queries. */

#include "herd_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_var_internal.h"
#include "opal/util/argv.h"
#include "opal/util/show_help.h"

#define MCA_VAR_LEVEL_MAX 9

mca_var_registry_t mca_var_registry;

/* ---------------------------------------------------------------------------------------------
 * Start and stop
 * ------------------------------------------------------------------------------------------- */

static void mca_var_free_entry(mca_var_t *var)
{
    if (OPAL_MCA_VAR_STRING == var->type && var->synonym_of < 0) {
        free(var->value.s);
        free(var->default_value.s);
    }
    if (NULL != var->enum_values) {
        for (size_t j = 0; NULL != var->enum_values[j].name; j++) {
            free((char *) var->enum_values[j].name);
        }
        free(var->enum_values);
    }
    free(var->full_name);
    free(var->framework);
    free(var->component);
    free(var->name);
    free(var->help);
    free(var->source_detail);
    free(var->storage);
}

static void mca_var_free_all(void)
{
    for (size_t i = 0; i < mca_var_registry.num_vars; i++) {
        mca_var_t *var = &mca_var_registry.vars[i];

        /* Storage gets its default back, so that the next init starts fresh (the default of a
         * variable is what its storage holds at registration); strings get NULL, since the
         * copies they point to are freed here. */
        if (var->synonym_of < 0) {
            if (OPAL_MCA_VAR_STRING == var->type) {
                free(var->value.s);
                var->value.s = NULL;
            } else {
                var->value = var->default_value;
            }
            for (size_t j = 0; j < var->num_storage; j++) {
                mca_var_write_storage(var, var->storage[j].ptr);
            }
        }
        mca_var_free_entry(var);
    }
    free(mca_var_registry.vars);
    for (size_t i = 0; i < mca_var_registry.num_settings; i++) {
        free(mca_var_registry.settings[i].name);
        free(mca_var_registry.settings[i].value);
        free(mca_var_registry.settings[i].detail);
    }
    free(mca_var_registry.settings);
    opal_argv_free(mca_var_registry.unknown_warned);
    free(mca_var_registry.system_file);
    memset(&mca_var_registry, 0, sizeof(mca_var_registry));
}

int opal_mca_var_init(void)
{
    int rc;

    if (mca_var_registry.refcount++ > 0) {
        return HERD_SUCCESS;
    }
    rc = mca_var_read_param_files();
    if (HERD_SUCCESS == rc) {
        rc = mca_var_read_environment();
    }
    if (HERD_SUCCESS != rc) {
        mca_var_free_all();
    }
    return rc;
}

void opal_mca_var_finalize(void)
{
    if (0 == mca_var_registry.refcount || --mca_var_registry.refcount > 0) {
        return;
    }
    mca_var_free_all();
}

/* ---------------------------------------------------------------------------------------------
 * Registration
 * ------------------------------------------------------------------------------------------- */

int opal_mca_var_find(const char *full_name)
{
    if (NULL == full_name) {
        return HERD_ERR_BAD_PARAM;
    }
    for (size_t i = 0; i < mca_var_registry.num_vars; i++) {
        if (0 == strcmp(mca_var_registry.vars[i].full_name, full_name)) {
            return (int) i;
        }
    }
    return HERD_ERR_NOT_FOUND;
}

/* A new, zeroed entry at the end of the registry, or NULL. */
static mca_var_t *mca_var_new_entry(void)
{
    mca_var_t *var;

    if (mca_var_registry.num_vars == mca_var_registry.max_vars) {
        size_t max = mca_var_registry.max_vars ? 2 * mca_var_registry.max_vars : 64;
        mca_var_t *grown = realloc(mca_var_registry.vars, max * sizeof(*grown));

        if (NULL == grown) {
            return NULL;
        }
        mca_var_registry.vars = grown;
        mca_var_registry.max_vars = max;
    }
    var = &mca_var_registry.vars[mca_var_registry.num_vars];
    memset(var, 0, sizeof(*var));
    var->synonym_of = -1;
    var->level = OPAL_MCA_VAR_LEVEL_DEFAULT;
    return var;
}

static int mca_var_add_storage(mca_var_t *var, void *storage, const opal_mca_component_t *owner)
{
    mca_var_storage_t *grown;

    for (size_t i = 0; i < var->num_storage; i++) {
        if (var->storage[i].ptr == storage) {
            return HERD_SUCCESS;
        }
    }
    grown = realloc(var->storage, (var->num_storage + 1) * sizeof(*grown));
    if (NULL == grown) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    var->storage = grown;
    var->storage[var->num_storage++] = (mca_var_storage_t){.ptr = storage, .owner = owner};
    return HERD_SUCCESS;
}

static opal_mca_var_enum_value_t *mca_var_copy_enum(const opal_mca_var_enum_value_t *values)
{
    size_t count = 0;
    opal_mca_var_enum_value_t *copy;

    while (NULL != values[count].name) {
        count++;
    }
    copy = calloc(count + 1, sizeof(*copy));
    if (NULL == copy) {
        return NULL;
    }
    for (size_t i = 0; i < count; i++) {
        copy[i].value = values[i].value;
        copy[i].name = strdup(values[i].name);
        if (NULL == copy[i].name) {
            for (size_t j = 0; j < i; j++) {
                free((char *) copy[j].name);
            }
            free(copy);
            return NULL;
        }
    }
    return copy;
}

/* "<fw>_<comp>_<name>" without the parts that are empty; NULL if out of memory. */
static char *mca_var_join_name(const char *framework, const char *component, const char *name)
{
    const char *parts[3] = {framework, component, name};
    size_t len = 1;
    char *full_name;

    for (int i = 0; i < 3; i++) {
        len += strlen(parts[i]) + 1;
    }
    full_name = malloc(len);
    if (NULL == full_name) {
        return NULL;
    }
    full_name[0] = '\0';
    for (int i = 0; i < 3; i++) {
        if ('\0' == parts[i][0]) {
            continue;
        }
        if ('\0' != full_name[0]) {
            strcat(full_name, "_");
        }
        strcat(full_name, parts[i]);
    }
    return full_name;
}

/* A second registration of a name shares the first one's value: the sources were already
 * applied once. */
static int mca_var_register_again(int index, const opal_mca_component_t *owner,
                                  opal_mca_var_type_t type, void *storage)
{
    mca_var_t *var = &mca_var_registry.vars[index];
    int rc;

    if (var->synonym_of >= 0) {
        mca_var_report_developer_error("register-name-taken", var->full_name,
                                       mca_var_registry.vars[var->synonym_of].full_name);
        return HERD_ERR_BAD_PARAM;
    }
    if (var->type != type) {
        mca_var_report_developer_error("register-type-mismatch", var->full_name,
                                       opal_mca_var_type_name(var->type));
        return HERD_ERR_BAD_PARAM;
    }
    rc = mca_var_add_storage(var, storage, owner);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    mca_var_write_storage(var, storage);
    return index;
}

/* The one registration path: framework/component/name (any may be ""), joined with "_". */
static int mca_var_register_any(const opal_mca_component_t *owner, const char *framework,
                                const char *component, const char *name, const char *help,
                                opal_mca_var_type_t type, const opal_mca_var_enum_value_t *values,
                                void *storage)
{
    char *full_name = mca_var_join_name(framework, component, name);
    mca_var_t *var;
    int index;

    if (NULL == full_name) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (0 == mca_var_registry.refcount) {
        mca_var_report_developer_error("not-initialized", full_name, "");
        index = HERD_ERROR;
        goto out;
    }
    if (!mca_var_name_is_valid(full_name)) {
        mca_var_report_developer_error("register-bad-name", full_name, "");
        index = HERD_ERR_BAD_PARAM;
        goto out;
    }
    if (NULL == storage || (unsigned int) type > OPAL_MCA_VAR_ENUM ||
        (OPAL_MCA_VAR_ENUM == type && (NULL == values || NULL == values[0].name))) {
        mca_var_report_developer_error("register-bad-args", full_name, "");
        index = HERD_ERR_BAD_PARAM;
        goto out;
    }
    index = opal_mca_var_find(full_name);
    if (index >= 0) {
        index = mca_var_register_again(index, owner, type, storage);
        goto out;
    }

    var = mca_var_new_entry();
    if (NULL == var) {
        index = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    var->type = type;
    var->full_name = full_name;
    full_name = NULL;
    var->framework = strdup(framework);
    var->component = strdup(component);
    var->name = strdup(name);
    var->help = strdup(NULL == help ? "" : help);
    /* Copied, so that herd-info can still show them after a component's DSO is unloaded. */
    var->enum_values = (NULL == values) ? NULL : mca_var_copy_enum(values);
    mca_var_read_storage(type, storage, &var->default_value);
    if (OPAL_MCA_VAR_STRING == type && NULL != var->default_value.s) {
        /* The default may be a literal or the component's own buffer: keep a copy. */
        var->default_value.s = strdup(var->default_value.s);
    }
    if (NULL == var->framework || NULL == var->component || NULL == var->name ||
        NULL == var->help || (NULL != values && NULL == var->enum_values) ||
        (OPAL_MCA_VAR_STRING == type && NULL != *(char **) storage &&
         NULL == var->default_value.s) ||
        HERD_SUCCESS != mca_var_add_storage(var, storage, owner)) {
        goto err_free_var;
    }
    index = (int) mca_var_registry.num_vars++;
    {
        int rc = mca_var_resolve(index);

        if (HERD_SUCCESS != rc) {
            index = rc;
        }
    }
    goto out;

err_free_var:
    /* Not counted yet, so only this entry goes; the storage keeps the caller's default. */
    mca_var_free_entry(var);
    index = HERD_ERR_OUT_OF_RESOURCE;
out:
    free(full_name);
    return index;
}

/* A component's variable (component NULL: a top-level one), "<fw>_<comp>_<name>". */
static int mca_var_register_in_component(const opal_mca_component_t *component, const char *name,
                                         const char *help, opal_mca_var_type_t type,
                                         const opal_mca_var_enum_value_t *values, void *storage)
{
    if (NULL == name || '\0' == *name ||
        (NULL != component && (NULL == component->framework || NULL == component->name))) {
        mca_var_report_developer_error("register-bad-args", NULL == name ? "" : name, "");
        return HERD_ERR_BAD_PARAM;
    }
    if (NULL == component) {
        return mca_var_register_any(NULL, "", "", name, help, type, values, storage);
    }
    return mca_var_register_any(component, component->framework, component->name, name, help, type,
                                values, storage);
}

/* A framework's variable, "<fw>_<name>" (framework "": a top-level one). */
static int mca_var_register_in_framework(const char *framework, const char *name, const char *help,
                                         opal_mca_var_type_t type,
                                         const opal_mca_var_enum_value_t *values, void *storage)
{
    static const char base_prefix[] = "base_";

    if (NULL == framework || NULL == name) {
        mca_var_report_developer_error("register-bad-args", NULL == name ? "" : name, "");
        return HERD_ERR_BAD_PARAM;
    }
    /* "<fw>_base_verbose" belongs to the framework's base, as in Open MPI. */
    if (0 == strncmp(name, base_prefix, sizeof(base_prefix) - 1) && '\0' != *framework) {
        return mca_var_register_any(NULL, framework, "base", name + sizeof(base_prefix) - 1, help,
                                    type, values, storage);
    }
    return mca_var_register_any(NULL, framework, "", name, help, type, values, storage);
}

int opal_mca_var_register(const opal_mca_component_t *component, const char *name, const char *help,
                          opal_mca_var_type_t type, void *storage)
{
    if (OPAL_MCA_VAR_ENUM == type) {
        mca_var_report_developer_error("register-bad-args", NULL == name ? "" : name, "");
        return HERD_ERR_BAD_PARAM;
    }
    return mca_var_register_in_component(component, name, help, type, NULL, storage);
}

int opal_mca_var_register_framework(const char *framework, const char *name, const char *help,
                                    opal_mca_var_type_t type, void *storage)
{
    if (OPAL_MCA_VAR_ENUM == type) {
        mca_var_report_developer_error("register-bad-args", NULL == name ? "" : name, "");
        return HERD_ERR_BAD_PARAM;
    }
    return mca_var_register_in_framework(framework, name, help, type, NULL, storage);
}

int opal_mca_var_register_enum(const opal_mca_component_t *component, const char *name,
                               const char *help, const opal_mca_var_enum_value_t *values,
                               int *storage)
{
    return mca_var_register_in_component(component, name, help, OPAL_MCA_VAR_ENUM, values, storage);
}

int opal_mca_var_register_synonym(int index, const char *old_full_name)
{
    int existing;
    int target;
    mca_var_t *synonym;

    if (!mca_var_index_is_valid(index)) {
        return HERD_ERR_BAD_PARAM;
    }
    target = mca_var_target(index);
    if (!mca_var_name_is_valid(old_full_name)) {
        mca_var_report_developer_error("register-bad-name",
                                       NULL == old_full_name ? "" : old_full_name, "");
        return HERD_ERR_BAD_PARAM;
    }
    existing = opal_mca_var_find(old_full_name);
    if (existing >= 0) {
        if (mca_var_registry.vars[existing].synonym_of == target) {
            return HERD_SUCCESS;
        }
        mca_var_report_developer_error("register-name-taken", old_full_name,
                                       mca_var_registry.vars[mca_var_target(existing)].full_name);
        return HERD_ERR_BAD_PARAM;
    }

    synonym = mca_var_new_entry();
    if (NULL == synonym) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    synonym->full_name = strdup(old_full_name);
    synonym->framework = strdup("");
    synonym->component = strdup("");
    synonym->name = strdup(old_full_name);
    if (NULL == synonym->full_name || NULL == synonym->framework || NULL == synonym->component ||
        NULL == synonym->name) {
        mca_var_free_entry(synonym);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    synonym->synonym_of = target;
    synonym->type = mca_var_registry.vars[target].type;
    synonym->level = mca_var_registry.vars[target].level;
    mca_var_registry.num_vars++;
    /* Settings made under the old name before now apply from here on. */
    return mca_var_resolve(target);
}

void opal_mca_var_release_component(const opal_mca_component_t *component)
{
    for (size_t i = 0; i < mca_var_registry.num_vars; i++) {
        mca_var_t *var = &mca_var_registry.vars[i];
        size_t kept = 0;

        for (size_t j = 0; j < var->num_storage; j++) {
            if (NULL == component || var->storage[j].owner != component) {
                var->storage[kept++] = var->storage[j];
            } else if (OPAL_MCA_VAR_STRING == var->type) {
                /* The string stays owned here; the component must not keep using it. */
                *(char **) var->storage[j].ptr = NULL;
            }
        }
        var->num_storage = kept;
    }
}

int opal_mca_var_set_level(int index, int level)
{
    if (!mca_var_index_is_valid(index) || level < 1 || level > MCA_VAR_LEVEL_MAX) {
        return HERD_ERR_BAD_PARAM;
    }
    mca_var_registry.vars[index].level = level;
    return HERD_SUCCESS;
}

/* ---------------------------------------------------------------------------------------------
 * Registration tables
 * ------------------------------------------------------------------------------------------- */

/* One entry: checked, registered in the component (framework NULL) or the framework, then given
 * its level. Returns the variable's index, or the status of the step that failed. */
static int mca_var_register_def(const opal_mca_component_t *component, const char *framework,
                                const opal_mca_var_def_t *def)
{
    int index;

    if (NULL == def->name || (OPAL_MCA_VAR_ENUM != def->type && NULL != def->enum_values)) {
        mca_var_report_developer_error("register-bad-args", NULL == def->name ? "" : def->name, "");
        return HERD_ERR_BAD_PARAM;
    }
    if (def->level < 0 || def->level > MCA_VAR_LEVEL_MAX) {
        opal_show_help(MCA_VAR_HELP_FILE, "register-bad-level", true, def->name, def->level,
                       MCA_VAR_LEVEL_MAX);
        return HERD_ERR_BAD_PARAM;
    }
    if (NULL == framework) {
        index = mca_var_register_in_component(component, def->name, def->help, def->type,
                                              def->enum_values, def->storage);
    } else {
        index = mca_var_register_in_framework(framework, def->name, def->help, def->type,
                                              def->enum_values, def->storage);
    }
    if (index >= 0 && 0 != def->level) {
        /* cannot fail: the index was just returned and the level is checked above */
        (void) opal_mca_var_set_level(index, def->level);
    }
    return index;
}

/* Both table functions: every entry in order, the first failure ends it; the indices are
 * written only once all entries registered. */
static int mca_var_register_defs(const opal_mca_component_t *component, const char *framework,
                                 const opal_mca_var_def_t *defs, size_t count)
{
    int *indices;
    int rc = HERD_SUCCESS;

    if (0 == count) {
        return HERD_SUCCESS;
    }
    if (NULL == defs) {
        mca_var_report_developer_error("register-bad-args", "", "");
        return HERD_ERR_BAD_PARAM;
    }
    indices = malloc(count * sizeof(*indices));
    if (NULL == indices) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < count; i++) {
        indices[i] = mca_var_register_def(component, framework, &defs[i]);
        if (indices[i] < 0) {
            rc = indices[i];
            goto out;
        }
    }
    for (size_t i = 0; i < count; i++) {
        if (NULL != defs[i].index) {
            *defs[i].index = indices[i];
        }
    }
out:
    free(indices);
    return rc;
}

int opal_mca_var_register_table(const opal_mca_component_t *component,
                                const opal_mca_var_def_t *defs, size_t count)
{
    return mca_var_register_defs(component, NULL, defs, count);
}

int opal_mca_var_register_framework_table(const char *framework, const opal_mca_var_def_t *defs,
                                          size_t count)
{
    if (NULL == framework) {
        mca_var_report_developer_error("register-bad-args", "", "");
        return HERD_ERR_BAD_PARAM;
    }
    return mca_var_register_defs(NULL, framework, defs, count);
}
