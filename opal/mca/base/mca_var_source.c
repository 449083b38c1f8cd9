/* SPDX-License-Identifier: BSD-3-Clause */
/* MCA variables: the settings and where they come from (parameter files, the environment, the
 * command line, the program itself), kept whether or not a variable of that name is registered. */

#include "herd_config.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/mca/base/mca_var_internal.h"
#include "opal/util/argv.h"
#include "opal/util/install_dirs.h"
#include "opal/util/show_help.h"


#define MCA_VAR_ENV_PREFIX       "HERD_MCA_"
#define MCA_VAR_PARAM_FILES_NAME "param_files"
/* Set by a process once it has read the parameter files (and said what is wrong with them) to
 * the list it read, so its children (daemons, session daemons, the job's processes) that read
 * the same list do not say it again: a missing file was said once, not by every daemon. */
#define MCA_VAR_FILES_SAID_ENV "HERD_PARAM_FILES_SAID"

/* true while reading a list of files that a parent process has already spoken about */
static bool mca_var_files_quiet = false;
#define MCA_VAR_SYSTEM_FILE_NAME "herd-mca-params.conf"
#define MCA_VAR_USER_FILE_NAME   ".herd/mca-params.conf"
#define MCA_VAR_CLI_DETAIL       "--mca"
#define MCA_VAR_SET_DETAIL       "opal_mca_var_set_value()"

/* ---------------------------------------------------------------------------------------------
 * Settings
 * ------------------------------------------------------------------------------------------- */

static int mca_var_add_setting(const char *name, const char *value, opal_mca_var_source_t source,
                               const char *detail)
{
    mca_var_setting_t setting = {.source = source};

    if (mca_var_registry.num_settings == mca_var_registry.max_settings) {
        size_t max = mca_var_registry.max_settings ? 2 * mca_var_registry.max_settings : 32;
        mca_var_setting_t *grown = realloc(mca_var_registry.settings, max * sizeof(*grown));

        if (NULL == grown) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        mca_var_registry.settings = grown;
        mca_var_registry.max_settings = max;
    }
    setting.name = strdup(name);
    setting.value = strdup(value);
    setting.detail = (NULL == detail) ? NULL : strdup(detail);
    if (NULL == setting.name || NULL == setting.value ||
        (NULL != detail && NULL == setting.detail)) {
        free(setting.name);
        free(setting.value);
        free(setting.detail);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    mca_var_registry.settings[mca_var_registry.num_settings++] = setting;
    return HERD_SUCCESS;
}

/* The setting of name that wins: highest source, and the last one recorded within a source. */
const mca_var_setting_t *mca_var_best_setting(const char *name, bool include_set)
{
    const mca_var_setting_t *best = NULL;

    for (size_t i = 0; i < mca_var_registry.num_settings; i++) {
        const mca_var_setting_t *setting = &mca_var_registry.settings[i];

        if (0 != strcmp(setting->name, name) ||
            (!include_set && OPAL_MCA_VAR_SOURCE_SET == setting->source)) {
            continue;
        }
        if (NULL == best || setting->source >= best->source) {
            best = setting;
        }
    }
    return best;
}

/* ---------------------------------------------------------------------------------------------
 * Parameter files and the environment
 * ------------------------------------------------------------------------------------------- */

/* Cut a "#" comment: at the start of the line, or after a blank outside a quoted value. */
static void mca_var_cut_comment(char *text)
{
    bool after_equals = false;
    bool in_quotes = false;

    for (char *p = text; *p; p++) {
        if ('=' == *p) {
            after_equals = true;
        } else if ('"' == *p && after_equals) {
            in_quotes = !in_quotes;
        } else if ('#' == *p && !in_quotes && (p == text || isspace((unsigned char) p[-1]))) {
            *p = '\0';
            return;
        }
    }
}

static int mca_var_read_file_line(const char *path, int line_number, const char *line,
                                  opal_mca_var_source_t source)
{
    char *work = strdup(line);
    char *text;
    char *equals;
    char *name;
    char *value;
    size_t len;
    char *detail = NULL;
    int rc = HERD_SUCCESS;

    if (NULL == work) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    mca_var_cut_comment(work);
    text = mca_var_trim(work);
    if ('\0' == *text) {
        goto out;
    }
    equals = strchr(text, '=');
    if (NULL != equals) {
        *equals = '\0';
        name = mca_var_trim(text);
        value = mca_var_trim(equals + 1);
    }
    if (NULL == equals || !mca_var_name_is_valid(name)) {
        /* Not fatal: one typo must not stop every job, but the user must hear about it. */
        mca_var_registry.bad_file_lines++;
        if (!mca_var_files_quiet) {
            opal_show_help(MCA_VAR_HELP_FILE, "bad-file-line", true, path, line_number, line);
        }
        goto out;
    }
    len = strlen(value);
    if (len >= 2 && '"' == value[0] && '"' == value[len - 1]) {
        value[len - 1] = '\0';
        value++;
    }
    if (asprintf(&detail, "%s:%d", path, line_number) < 0) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    rc = mca_var_add_setting(name, value, source, detail);
    free(detail);
out:
    free(work);
    return rc;
}

/* A missing default file is normal (most sites have none); one named in HERD_MCA_param_files
 * (named) that is missing, or one that exists but cannot be read, is worth a warning: the user
 * meant its settings to apply. */
static int mca_var_read_file(const char *path, opal_mca_var_source_t source, bool named)
{
    FILE *file;
    struct stat info;
    char *line = NULL;
    size_t capacity = 0;
    ssize_t len;
    int line_number = 0;
    int rc = HERD_SUCCESS;

    file = fopen(path, "r");
    if (NULL == file) {
        if (mca_var_files_quiet) {
            /* said by the process that started this one */
        } else if (ENOENT != errno && ENOTDIR != errno) {
            opal_show_help(MCA_VAR_HELP_FILE, "unreadable-file", true, path, strerror(errno));
        } else if (named) {
            opal_show_help(MCA_VAR_HELP_FILE, "missing-param-file", true, path, strerror(errno));
        }
        return HERD_SUCCESS;
    }
    if (0 == fstat(fileno(file), &info) && S_ISDIR(info.st_mode)) {
        if (!mca_var_files_quiet) {
            opal_show_help(MCA_VAR_HELP_FILE, "unreadable-file", true, path, strerror(EISDIR));
        }
        goto out;
    }
    while ((len = getline(&line, &capacity, file)) >= 0) {
        line_number++;
        while (len > 0 && ('\n' == line[len - 1] || '\r' == line[len - 1])) {
            line[--len] = '\0';
        }
        rc = mca_var_read_file_line(path, line_number, line, source);
        if (HERD_SUCCESS != rc) {
            goto out;
        }
    }
    if (ferror(file) && !mca_var_files_quiet) {
        opal_show_help(MCA_VAR_HELP_FILE, "unreadable-file", true, path, strerror(errno));
    }
out:
    free(line);
    fclose(file);
    return rc;
}

static char *mca_var_system_file_path(void)
{
    char *path = NULL;

    if (NULL != mca_var_registry.system_file) {
        return strdup(mca_var_registry.system_file);
    }
    if (asprintf(&path, "%s/%s", opal_install_dir(OPAL_INSTALL_SYSCONFDIR),
                 MCA_VAR_SYSTEM_FILE_NAME) < 0) {
        return NULL;
    }
    return path;
}

/* "~/x" in HERD_MCA_param_files means $HOME/x, as a shell would have expanded it. */
static char *mca_var_expand_home(const char *path)
{
    const char *home = getenv("HOME");
    char *expanded = NULL;

    if ('~' != path[0] || '/' != path[1] || NULL == home || '\0' == *home) {
        return strdup(path);
    }
    if (asprintf(&expanded, "%s%s", home, path + 1) < 0) {
        return NULL;
    }
    return expanded;
}

int mca_var_read_param_files(void)
{
    const char *list = getenv(MCA_VAR_ENV_PREFIX MCA_VAR_PARAM_FILES_NAME);
    const char *home = getenv("HOME");
    char *system_path = mca_var_system_file_path();
    char *user_path = NULL;
    char **files = NULL;
    int rc = HERD_SUCCESS;

    const char *said = getenv(MCA_VAR_FILES_SAID_ENV);

    if (NULL == system_path) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    /* "" stands for the default list (no HERD_MCA_param_files) */
    mca_var_files_quiet = NULL != said && 0 == strcmp(said, NULL == list ? "" : list);
    if (NULL == list) {
        rc = mca_var_read_file(system_path, OPAL_MCA_VAR_SOURCE_SYSTEM_FILE, false);
        if (HERD_SUCCESS != rc || NULL == home || '\0' == *home) {
            goto out;
        }
        if (asprintf(&user_path, "%s/%s", home, MCA_VAR_USER_FILE_NAME) < 0) {
            user_path = NULL;
            rc = HERD_ERR_OUT_OF_RESOURCE;
            goto out;
        }
        rc = mca_var_read_file(user_path, OPAL_MCA_VAR_SOURCE_USER_FILE, false);
        goto out;
    }

    /* The list replaces the default one; only a first entry naming the system file keeps the
     * system file's (lower) precedence. */
    files = opal_argv_split(list, ':');
    if (NULL == files) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    for (size_t i = 0; NULL != files[i]; i++) {
        char *path = mca_var_expand_home(files[i]);
        opal_mca_var_source_t source = OPAL_MCA_VAR_SOURCE_USER_FILE;

        if (NULL == path) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
            goto out;
        }
        if (0 == i && 0 == strcmp(path, system_path)) {
            source = OPAL_MCA_VAR_SOURCE_SYSTEM_FILE;
        }
        /* the system file keeps its quiet absence even when the list names it */
        rc = mca_var_read_file(path, source, OPAL_MCA_VAR_SOURCE_SYSTEM_FILE != source);
        free(path);
        if (HERD_SUCCESS != rc) {
            goto out;
        }
    }
out:
    if (HERD_SUCCESS == rc) {
        (void) setenv(MCA_VAR_FILES_SAID_ENV, NULL == list ? "" : list, 1);
    }
    mca_var_files_quiet = false;
    opal_argv_free(files);
    free(user_path);
    free(system_path);
    return rc;
}

int mca_var_read_environment(void)
{
    const size_t prefix_len = strlen(MCA_VAR_ENV_PREFIX);

    for (char **entry = environ; NULL != entry && NULL != *entry; entry++) {
        const char *start = *entry + prefix_len;
        const char *equals;
        char *name;
        char *detail;
        int rc;

        if (0 != strncmp(*entry, MCA_VAR_ENV_PREFIX, prefix_len) ||
            NULL == (equals = strchr(start, '=')) || equals == start) {
            continue;
        }
        name = strndup(start, (size_t) (equals - start));
        if (NULL == name) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        if (0 == strcmp(name, MCA_VAR_PARAM_FILES_NAME)) {
            free(name);
            continue;
        }
        /* The detail is the environment variable itself: what the user has to change. */
        detail = strndup(*entry, (size_t) (equals - *entry));
        rc = (NULL == detail)
                 ? HERD_ERR_OUT_OF_RESOURCE
                 : mca_var_add_setting(name, equals + 1, OPAL_MCA_VAR_SOURCE_ENV, detail);
        free(detail);
        free(name);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
    return HERD_SUCCESS;
}

int opal_mca_var_set_system_file(const char *path)
{
    char *copy = NULL;

    if (NULL != path && NULL == (copy = strdup(path))) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    free(mca_var_registry.system_file);
    mca_var_registry.system_file = copy;
    return HERD_SUCCESS;
}

/* ---------------------------------------------------------------------------------------------
 * What the sources set
 * ------------------------------------------------------------------------------------------- */

bool opal_mca_var_is_set(const char *full_name)
{
    return NULL != full_name && NULL != mca_var_best_setting(full_name, false);
}

bool opal_mca_var_any_set_under(const char *prefix)
{
    size_t len = strlen(prefix);
    for (size_t i = 0; i < mca_var_registry.num_settings; i++) {
        const mca_var_setting_t *setting = &mca_var_registry.settings[i];
        if (OPAL_MCA_VAR_SOURCE_SET != setting->source &&
            0 == strncmp(setting->name, prefix, len)) {
            return true;
        }
    }
    return false;
}

bool opal_mca_var_unknown_under(const char *framework)
{
    size_t len = strlen(framework);
    for (size_t i = 0; i < mca_var_registry.num_settings; i++) {
        const mca_var_setting_t *setting = &mca_var_registry.settings[i];
        if (OPAL_MCA_VAR_SOURCE_SET != setting->source &&
            0 == strncmp(setting->name, framework, len) && '_' == setting->name[len] &&
            opal_mca_var_find(setting->name) < 0) {
            return true;
        }
    }
    return false;
}

bool opal_mca_var_has_value(const char *full_name)
{
    if (NULL == full_name) {
        return false;
    }
    /* the program's own settings count too: they are kept as settings of source SET */
    return NULL != mca_var_best_setting(full_name, true);
}

/* ---------------------------------------------------------------------------------------------
 * Setting values
 * ------------------------------------------------------------------------------------------- */

int opal_mca_var_set_cli(const char *full_name, const char *value)
{
    int index;
    int rc;

    if (!mca_var_name_is_valid(full_name) || NULL == value) {
        opal_show_help(MCA_VAR_HELP_FILE, "bad-cli-name", true, NULL == full_name ? "" : full_name,
                       NULL == value ? "" : value);
        return HERD_ERR_BAD_PARAM;
    }
    index = opal_mca_var_find(full_name);
    if (index >= 0) {
        mca_var_t *var = &mca_var_registry.vars[mca_var_target(index)];
        mca_var_value_t parsed;

        /* Checked before it is recorded, so a rejected value leaves everything as it was. */
        rc = opal_mca_var_parse(var->type, var->enum_values, value, &parsed);
        if (HERD_ERR_BAD_PARAM == rc) {
            mca_var_report_bad_value(var, full_name, value, OPAL_MCA_VAR_SOURCE_CLI,
                                     MCA_VAR_CLI_DETAIL);
            return rc;
        }
        if (HERD_SUCCESS != rc) {
            return rc;
        }
        if (OPAL_MCA_VAR_STRING == var->type) {
            free(parsed.s);
        }
    }
    rc = mca_var_add_setting(full_name, value, OPAL_MCA_VAR_SOURCE_CLI, MCA_VAR_CLI_DETAIL);
    if (HERD_SUCCESS != rc || index < 0) {
        return rc;
    }
    return mca_var_resolve(mca_var_target(index));
}

int opal_mca_var_set_value(int index, const char *value)
{
    mca_var_t *var;
    mca_var_value_t parsed;
    char *copy;
    int rc;

    if (!mca_var_index_is_valid(index) || NULL == value) {
        return HERD_ERR_BAD_PARAM;
    }
    index = mca_var_target(index);
    var = &mca_var_registry.vars[index];
    rc = opal_mca_var_parse(var->type, var->enum_values, value, &parsed);
    if (HERD_ERR_BAD_PARAM == rc) {
        mca_var_report_bad_value(var, var->full_name, value, OPAL_MCA_VAR_SOURCE_SET,
                                 MCA_VAR_SET_DETAIL);
        return rc;
    }
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (OPAL_MCA_VAR_STRING == var->type) {
        free(parsed.s);
    }
    /* One SET setting per variable: replace the previous one rather than pile them up. */
    for (size_t i = 0; i < mca_var_registry.num_settings; i++) {
        mca_var_setting_t *setting = &mca_var_registry.settings[i];

        if (OPAL_MCA_VAR_SOURCE_SET == setting->source &&
            0 == strcmp(setting->name, var->full_name)) {
            copy = strdup(value);
            if (NULL == copy) {
                return HERD_ERR_OUT_OF_RESOURCE;
            }
            free(setting->value);
            setting->value = copy;
            return mca_var_resolve(index);
        }
    }
    rc = mca_var_add_setting(var->full_name, value, OPAL_MCA_VAR_SOURCE_SET, NULL);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    return mca_var_resolve(index);
}
