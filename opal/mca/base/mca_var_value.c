/* SPDX-License-Identifier: BSD-3-Clause */
/* MCA variables: a variable's value, which setting gives it (resolution: sources, synonyms,
 * defaults), its text form, the storage it is mirrored into, and the messages about bad values. */

#include "herd_config.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_var_internal.h"
#include "opal/util/show_help.h"

/* ---------------------------------------------------------------------------------------------
 * Values of variables
 * ------------------------------------------------------------------------------------------- */

int mca_var_value_to_string(const mca_var_t *var, const mca_var_value_t *value, char **text)
{
    char *result = NULL;
    int n = 0;

    switch (var->type) {
    case OPAL_MCA_VAR_INT:
        n = asprintf(&result, "%d", value->i);
        break;
    case OPAL_MCA_VAR_UNSIGNED:
        n = asprintf(&result, "%u", value->u);
        break;
    case OPAL_MCA_VAR_SIZE:
        n = asprintf(&result, "%zu", value->size);
        break;
    case OPAL_MCA_VAR_BOOL:
        result = strdup(value->b ? "true" : "false");
        break;
    case OPAL_MCA_VAR_STRING:
        result = strdup(NULL == value->s ? "" : value->s);
        break;
    case OPAL_MCA_VAR_ENUM:
        for (size_t i = 0; NULL != var->enum_values[i].name; i++) {
            if (var->enum_values[i].value == value->i) {
                result = strdup(var->enum_values[i].name);
                break;
            }
        }
        /* A default outside the list is still shown, as its number. */
        if (NULL == result) {
            n = asprintf(&result, "%d", value->i);
        }
        break;
    }
    if (n < 0 || NULL == result) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    *text = result;
    return HERD_SUCCESS;
}

void mca_var_write_storage(const mca_var_t *var, void *storage)
{
    switch (var->type) {
    case OPAL_MCA_VAR_INT:
    case OPAL_MCA_VAR_ENUM:
        *(int *) storage = var->value.i;
        break;
    case OPAL_MCA_VAR_UNSIGNED:
        *(unsigned int *) storage = var->value.u;
        break;
    case OPAL_MCA_VAR_SIZE:
        *(size_t *) storage = var->value.size;
        break;
    case OPAL_MCA_VAR_BOOL:
        *(bool *) storage = var->value.b;
        break;
    case OPAL_MCA_VAR_STRING:
        *(char **) storage = var->value.s;
        break;
    }
}

void mca_var_read_storage(opal_mca_var_type_t type, const void *storage, mca_var_value_t *value)
{
    switch (type) {
    case OPAL_MCA_VAR_INT:
    case OPAL_MCA_VAR_ENUM:
        value->i = *(const int *) storage;
        break;
    case OPAL_MCA_VAR_UNSIGNED:
        value->u = *(const unsigned int *) storage;
        break;
    case OPAL_MCA_VAR_SIZE:
        value->size = *(const size_t *) storage;
        break;
    case OPAL_MCA_VAR_BOOL:
        value->b = *(const bool *) storage;
        break;
    case OPAL_MCA_VAR_STRING:
        value->s = *(char *const *) storage;
        break;
    }
}

/* Replace the variable's value (taking ownership of a string) and mirror it into every
 * storage. */
static void mca_var_assign(mca_var_t *var, mca_var_value_t value)
{
    char *old_string = (OPAL_MCA_VAR_STRING == var->type) ? var->value.s : NULL;

    var->value = value;
    for (size_t i = 0; i < var->num_storage; i++) {
        mca_var_write_storage(var, var->storage[i].ptr);
    }
    free(old_string);
}

/* ---------------------------------------------------------------------------------------------
 * Messages
 * ------------------------------------------------------------------------------------------- */

/* "a, b, c": the names an enum accepts, for error messages. */
static char *mca_var_enum_names(const opal_mca_var_enum_value_t *values)
{
    size_t len = 1;
    char *names;

    for (size_t i = 0; NULL != values[i].name; i++) {
        len += strlen(values[i].name) + 2;
    }
    names = malloc(len);
    if (NULL == names) {
        return NULL;
    }
    names[0] = '\0';
    for (size_t i = 0; NULL != values[i].name; i++) {
        if (i > 0) {
            strcat(names, ", ");
        }
        strcat(names, values[i].name);
    }
    return names;
}

/* Tell the user a setting's text is not a value of the variable's type, and which value the
 * variable keeps instead. */
void mca_var_report_bad_value(const mca_var_t *var, const char *setting_name, const char *text,
                              opal_mca_var_source_t source, const char *detail)
{
    char topic[32];
    char extra[64] = "";
    char *enum_names = NULL;
    char *kept = NULL;

    snprintf(topic, sizeof(topic), "bad-value-%s", opal_mca_var_type_name(var->type));
    switch (var->type) {
    case OPAL_MCA_VAR_INT:
        snprintf(extra, sizeof(extra), "%d..%d", INT_MIN, INT_MAX);
        break;
    case OPAL_MCA_VAR_UNSIGNED:
        snprintf(extra, sizeof(extra), "0..%u", UINT_MAX);
        break;
    case OPAL_MCA_VAR_SIZE:
        snprintf(extra, sizeof(extra), "%zu", (size_t) SIZE_MAX);
        break;
    case OPAL_MCA_VAR_ENUM:
        enum_names = mca_var_enum_names(var->enum_values);
        break;
    case OPAL_MCA_VAR_BOOL:
    case OPAL_MCA_VAR_STRING:
        break;
    }
    (void) mca_var_value_to_string(var, &var->value, &kept);
    /* Every bad-value topic takes the same arguments in the same order. */
    opal_show_help(MCA_VAR_HELP_FILE, topic, true, var->full_name, setting_name, text,
                   opal_mca_var_source_name(source), NULL == detail ? "" : detail, var->full_name,
                   NULL == kept ? "?" : kept, opal_mca_var_source_name(var->source),
                   NULL != enum_names ? enum_names : extra);
    free(kept);
    free(enum_names);
}

void mca_var_report_developer_error(const char *topic, const char *name, const char *what)
{
    opal_show_help(MCA_VAR_HELP_FILE, topic, true, NULL == name ? "(null)" : name,
                   NULL == what ? "" : what);
}

/* ---------------------------------------------------------------------------------------------
 * Resolution: which setting gives a variable its value
 * ------------------------------------------------------------------------------------------- */

/* Whether a setting's name is the variable (pass 0) or one of its synonyms (pass 1). */
static bool mca_var_setting_names(int index, const char *name, int pass)
{
    if (0 == pass) {
        return 0 == strcmp(name, mca_var_registry.vars[index].full_name);
    }
    for (size_t i = 0; i < mca_var_registry.num_vars; i++) {
        if (mca_var_registry.vars[i].synonym_of == index &&
            0 == strcmp(name, mca_var_registry.vars[i].full_name)) {
            return true;
        }
    }
    return false;
}

/* Each synonym set in some source gets one warning that names the new name. */
static void mca_var_warn_deprecated(int index)
{
    for (size_t i = 0; i < mca_var_registry.num_vars; i++) {
        mca_var_t *synonym = &mca_var_registry.vars[i];
        const mca_var_setting_t *setting;

        if (synonym->synonym_of != index || synonym->deprecation_warned) {
            continue;
        }
        setting = mca_var_best_setting(synonym->full_name, false);
        if (NULL == setting) {
            continue;
        }
        synonym->deprecation_warned = true;
        opal_show_help(
            MCA_VAR_HELP_FILE, "deprecated-name", true, synonym->full_name,
            mca_var_registry.vars[index].full_name, opal_mca_var_source_name(setting->source),
            NULL == setting->detail ? "" : setting->detail, mca_var_registry.vars[index].full_name);
    }
}

/* Give a variable the value of its best valid setting: highest source first; within a source,
 * the variable's own name before its synonyms and later settings before earlier ones. A bad
 * value is reported (once) and the next setting tried; with none left, the default applies.
 * Returns HERD_ERR_BAD_PARAM when a bad value was newly reported. */
int mca_var_resolve(int index)
{
    mca_var_t *var = &mca_var_registry.vars[index];
    const mca_var_setting_t *winner = NULL;
    mca_var_value_t parsed = {0};
    bool found_bad = false;
    int rc;

    for (int source = OPAL_MCA_VAR_SOURCE_SET; source > OPAL_MCA_VAR_SOURCE_DEFAULT && !winner;
         source--) {
        for (int pass = 0; pass < 2 && !winner; pass++) {
            for (size_t i = mca_var_registry.num_settings; i-- > 0;) {
                mca_var_setting_t *setting = &mca_var_registry.settings[i];

                if ((int) setting->source != source || setting->bad_reported ||
                    !mca_var_setting_names(index, setting->name, pass)) {
                    continue;
                }
                rc = opal_mca_var_parse(var->type, var->enum_values, setting->value, &parsed);
                if (HERD_SUCCESS == rc) {
                    winner = setting;
                    break;
                }
                if (HERD_ERR_BAD_PARAM != rc) {
                    goto err_forget_pending;
                }
                setting->bad_pending = true;
                found_bad = true;
            }
        }
    }

    if (NULL != winner) {
        char *detail = NULL;

        if (NULL != winner->detail && NULL == (detail = strdup(winner->detail))) {
            if (OPAL_MCA_VAR_STRING == var->type) {
                free(parsed.s);
            }
            rc = HERD_ERR_OUT_OF_RESOURCE;
            goto err_forget_pending;
        }
        free(var->source_detail);
        var->source_detail = detail;
        var->source = winner->source;
    } else {
        parsed = var->default_value;
        if (OPAL_MCA_VAR_STRING == var->type && NULL != parsed.s &&
            NULL == (parsed.s = strdup(parsed.s))) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
            goto err_forget_pending;
        }
        free(var->source_detail);
        var->source_detail = NULL;
        var->source = OPAL_MCA_VAR_SOURCE_DEFAULT;
    }
    mca_var_assign(var, parsed);

    /* Reported after the choice, so each message can say which value the variable keeps. */
    if (found_bad) {
        for (size_t i = 0; i < mca_var_registry.num_settings; i++) {
            mca_var_setting_t *setting = &mca_var_registry.settings[i];

            if (setting->bad_pending) {
                setting->bad_pending = false;
                setting->bad_reported = true;
                mca_var_report_bad_value(var, setting->name, setting->value, setting->source,
                                         setting->detail);
            }
        }
    }
    mca_var_warn_deprecated(index);
    return found_bad ? HERD_ERR_BAD_PARAM : HERD_SUCCESS;

err_forget_pending:
    /* Left set, they would be reported by the next resolution, under another variable. */
    for (size_t i = 0; i < mca_var_registry.num_settings; i++) {
        mca_var_registry.settings[i].bad_pending = false;
    }
    return rc;
}
