/* The MCA variable system: a registry of typed run-time parameters, the settings read from
 * parameter files, the environment and the command line, and the rules that pick each value. */

#include "herd_config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/mca/base/mca_var.h"
#include "opal/util/argv.h"
#include "opal/util/show_help.h"

#ifndef HERD_SYSCONFDIR
#error "HERD_SYSCONFDIR must be defined (opal/Makefile.am passes it)"
#endif

#define MCA_VAR_HELP_FILE "help-mca-var.txt"
#define MCA_VAR_ENV_PREFIX "HERD_MCA_"
#define MCA_VAR_PARAM_FILES_NAME "param_files"
#define MCA_VAR_SYSTEM_FILE_NAME "herd-mca-params.conf"
#define MCA_VAR_USER_FILE_NAME ".herd/mca-params.conf"
#define MCA_VAR_CLI_DETAIL "--mca"
#define MCA_VAR_SET_DETAIL "opal_mca_var_set_value()"
#define MCA_VAR_LEVEL_MAX 9

typedef union {
    int i; /* OPAL_MCA_VAR_INT and OPAL_MCA_VAR_ENUM */
    unsigned int u;
    size_t size;
    bool b;
    char *s; /* owned */
} mca_var_value_t;

/* A place the value is mirrored into. The owner is kept so that a component's storage can be
 * forgotten before its DSO is unloaded. */
typedef struct {
    void *ptr;
    const opal_mca_component_t *owner;
} mca_var_storage_t;

typedef struct {
    char *full_name;
    char *framework;
    char *component;
    char *name;
    char *help;
    opal_mca_var_type_t type;
    int level;
    opal_mca_var_enum_value_t *enum_values; /* deep copy, {NULL, 0}-terminated */
    mca_var_value_t value;
    mca_var_value_t default_value;
    opal_mca_var_source_t source;
    char *source_detail;
    mca_var_storage_t *storage;
    size_t num_storage;
    /* A synonym is an entry of its own (so herd-info can list it) that points at the variable
     * it was renamed to; only its names, level and warning flag are used. */
    int synonym_of;
    bool deprecation_warned;
} mca_var_t;

/* One "name = value" from a file, the environment, the command line or the program, kept
 * whether or not a variable of that name exists yet: registration may come later. */
typedef struct {
    char *name;
    char *value;
    opal_mca_var_source_t source;
    char *detail;
    bool bad_reported; /* its value did not parse and the user was told */
    bool bad_pending;  /* found bad during the current resolution, not reported yet */
} mca_var_setting_t;

static struct {
    int refcount;
    mca_var_t *vars;
    size_t num_vars;
    size_t max_vars;
    mca_var_setting_t *settings;
    size_t num_settings;
    size_t max_settings;
    char **unknown_warned; /* names already reported by opal_mca_var_check_unknown() */
    int bad_file_lines; /* skipped lines of parameter files: reported, not fatal */
    char *system_file; /* replaces the compiled-in path; see opal_mca_var_set_system_file() */
} mca_var_registry;

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

static const struct {
    const char *word;
    bool value;
} mca_var_bool_words[] = {
    {"1", true},      {"0", false},   {"true", true},     {"false", false},
    {"yes", true},    {"no", false},  {"on", true},       {"off", false},
    {"enabled", true}, {"disabled", false},
};

static const struct {
    const char *suffix;
    size_t multiplier;
} mca_var_size_suffixes[] = {
    {"", 1},
    {"b", 1},
    {"k", 1024},
    {"kb", 1024},
    {"kib", 1024},
    {"m", 1024 * 1024},
    {"mb", 1024 * 1024},
    {"mib", 1024 * 1024},
    {"g", 1024 * 1024 * 1024},
    {"gb", 1024 * 1024 * 1024},
    {"gib", 1024 * 1024 * 1024},
};

/* ---------------------------------------------------------------------------------------------
 * Parsing text into typed values
 * ------------------------------------------------------------------------------------------- */

static bool mca_var_is_blank(const char *text)
{
    while (isspace((unsigned char) *text)) {
        text++;
    }
    return '\0' == *text;
}

/* Trim in place; returns the first non-blank character. */
static char *mca_var_trim(char *text)
{
    char *end;

    while (isspace((unsigned char) *text)) {
        text++;
    }
    end = text + strlen(text);
    while (end > text && isspace((unsigned char) end[-1])) {
        end--;
    }
    *end = '\0';
    return text;
}

/* Read an optionally signed decimal or 0x-hexadecimal number, skipping leading blanks; *end
 * points after the digits. Octal is deliberately not recognised: "010" is ten. */
static bool mca_var_scan_number(const char *text, bool *negative, unsigned long long *magnitude,
                                const char **end)
{
    const char *p = text;
    bool neg = false;
    unsigned int base = 10;
    unsigned long long acc = 0;
    size_t digits = 0;

    while (isspace((unsigned char) *p)) {
        p++;
    }
    if ('+' == *p || '-' == *p) {
        neg = ('-' == *p);
        p++;
    }
    if ('0' == p[0] && ('x' == p[1] || 'X' == p[1])) {
        base = 16;
        p += 2;
    }
    for (;; p++) {
        unsigned int digit;

        if (isdigit((unsigned char) *p)) {
            digit = (unsigned int) (*p - '0');
        } else if (16 == base && isxdigit((unsigned char) *p)) {
            digit = (unsigned int) (tolower((unsigned char) *p) - 'a' + 10);
        } else {
            break;
        }
        if (acc > (ULLONG_MAX - digit) / base) {
            return false;
        }
        acc = acc * base + digit;
        digits++;
    }
    if (0 == digits) {
        return false;
    }
    *negative = neg;
    *magnitude = acc;
    *end = p;
    return true;
}

static bool mca_var_parse_int(const char *text, int *value)
{
    bool negative;
    unsigned long long magnitude;
    const char *end;

    if (!mca_var_scan_number(text, &negative, &magnitude, &end) || !mca_var_is_blank(end)) {
        return false;
    }
    if (negative) {
        if (magnitude > (unsigned long long) INT_MAX + 1) {
            return false;
        }
        *value = (int) (-(long long) magnitude);
    } else {
        if (magnitude > (unsigned long long) INT_MAX) {
            return false;
        }
        *value = (int) magnitude;
    }
    return true;
}

static bool mca_var_parse_unsigned(const char *text, unsigned int *value)
{
    bool negative;
    unsigned long long magnitude;
    const char *end;

    if (!mca_var_scan_number(text, &negative, &magnitude, &end) || !mca_var_is_blank(end)) {
        return false;
    }
    if (negative || magnitude > UINT_MAX) {
        return false;
    }
    *value = (unsigned int) magnitude;
    return true;
}

static bool mca_var_parse_size(const char *text, size_t *value)
{
    bool negative;
    unsigned long long magnitude;
    const char *end;
    const char *suffix;
    size_t suffix_len = 0;

    if (!mca_var_scan_number(text, &negative, &magnitude, &end) || negative) {
        return false;
    }
    suffix = end;
    while (isspace((unsigned char) *suffix)) {
        suffix++;
    }
    while (isalpha((unsigned char) suffix[suffix_len])) {
        suffix_len++;
    }
    if (!mca_var_is_blank(suffix + suffix_len)) {
        return false;
    }
    for (size_t i = 0; i < sizeof(mca_var_size_suffixes) / sizeof(mca_var_size_suffixes[0]); i++) {
        size_t multiplier = mca_var_size_suffixes[i].multiplier;

        if (strlen(mca_var_size_suffixes[i].suffix) != suffix_len ||
            0 != strncasecmp(suffix, mca_var_size_suffixes[i].suffix, suffix_len)) {
            continue;
        }
        if (magnitude > SIZE_MAX / multiplier) {
            return false;
        }
        *value = (size_t) magnitude * multiplier;
        return true;
    }
    return false;
}

/* Whether text, ignoring surrounding blanks, is word (case-insensitive). */
static bool mca_var_word_equals(const char *text, const char *word)
{
    size_t len;

    while (isspace((unsigned char) *text)) {
        text++;
    }
    len = strlen(word);
    return 0 == strncasecmp(text, word, len) && mca_var_is_blank(text + len);
}

static bool mca_var_parse_bool(const char *text, bool *value)
{
    for (size_t i = 0; i < sizeof(mca_var_bool_words) / sizeof(mca_var_bool_words[0]); i++) {
        if (mca_var_word_equals(text, mca_var_bool_words[i].word)) {
            *value = mca_var_bool_words[i].value;
            return true;
        }
    }
    return false;
}

static bool mca_var_parse_enum(const opal_mca_var_enum_value_t *values, const char *text,
                               int *value)
{
    int number;

    for (size_t i = 0; NULL != values[i].name; i++) {
        if (mca_var_word_equals(text, values[i].name)) {
            *value = values[i].value;
            return true;
        }
    }
    /* The numeric form is accepted only for a value the list names. */
    if (mca_var_parse_int(text, &number)) {
        for (size_t i = 0; NULL != values[i].name; i++) {
            if (values[i].value == number) {
                *value = number;
                return true;
            }
        }
    }
    return false;
}

int opal_mca_var_parse(opal_mca_var_type_t type, const opal_mca_var_enum_value_t *values,
                       const char *text, void *value)
{
    bool ok = false;

    if (NULL == text || NULL == value) {
        return HERD_ERR_BAD_PARAM;
    }
    switch (type) {
    case OPAL_MCA_VAR_INT:
        ok = mca_var_parse_int(text, value);
        break;
    case OPAL_MCA_VAR_UNSIGNED:
        ok = mca_var_parse_unsigned(text, value);
        break;
    case OPAL_MCA_VAR_SIZE:
        ok = mca_var_parse_size(text, value);
        break;
    case OPAL_MCA_VAR_BOOL:
        ok = mca_var_parse_bool(text, value);
        break;
    case OPAL_MCA_VAR_STRING: {
        char *copy = strdup(text);

        if (NULL == copy) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        *(char **) value = copy;
        return HERD_SUCCESS;
    }
    case OPAL_MCA_VAR_ENUM:
        ok = NULL != values && mca_var_parse_enum(values, text, value);
        break;
    }
    return ok ? HERD_SUCCESS : HERD_ERR_BAD_PARAM;
}

/* ---------------------------------------------------------------------------------------------
 * Values of variables
 * ------------------------------------------------------------------------------------------- */

static bool mca_var_index_is_valid(int index)
{
    return index >= 0 && (size_t) index < mca_var_registry.num_vars;
}

/* The variable an index stands for: itself, or what a synonym was renamed to. */
static int mca_var_target(int index)
{
    int target = mca_var_registry.vars[index].synonym_of;

    return target >= 0 ? target : index;
}

static int mca_var_value_to_string(const mca_var_t *var, const mca_var_value_t *value,
                                   char **text)
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

static void mca_var_write_storage(const mca_var_t *var, void *storage)
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

static void mca_var_read_storage(opal_mca_var_type_t type, const void *storage,
                                 mca_var_value_t *value)
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
static const mca_var_setting_t *mca_var_best_setting(const char *name, bool include_set)
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

static bool mca_var_name_is_valid(const char *name)
{
    if (NULL == name || '\0' == *name) {
        return false;
    }
    for (const char *p = name; *p; p++) {
        if (!isalnum((unsigned char) *p) && '_' != *p) {
            return false;
        }
    }
    return true;
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
static void mca_var_report_bad_value(const mca_var_t *var, const char *setting_name,
                                     const char *text, opal_mca_var_source_t source,
                                     const char *detail)
{
    char topic[32];
    char extra[64] = "";
    char *enum_names = NULL;
    char *kept = NULL;

    snprintf(topic, sizeof(topic), "bad-value-%s", mca_var_type_names[var->type]);
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
                   mca_var_source_names[source], NULL == detail ? "" : detail, var->full_name,
                   NULL == kept ? "?" : kept, mca_var_source_names[var->source],
                   NULL != enum_names ? enum_names : extra);
    free(kept);
    free(enum_names);
}

static void mca_var_report_developer_error(const char *topic, const char *name, const char *what)
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
        opal_show_help(MCA_VAR_HELP_FILE, "deprecated-name", true, synonym->full_name,
                       mca_var_registry.vars[index].full_name,
                       mca_var_source_names[setting->source],
                       NULL == setting->detail ? "" : setting->detail,
                       mca_var_registry.vars[index].full_name);
    }
}

/* Give a variable the value of its best valid setting: highest source first; within a source,
 * the variable's own name before its synonyms and later settings before earlier ones. A bad
 * value is reported (once) and the next setting tried; with none left, the default applies.
 * Returns HERD_ERR_BAD_PARAM when a bad value was newly reported. */
static int mca_var_resolve(int index)
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
        opal_show_help(MCA_VAR_HELP_FILE, "bad-file-line", true, path, line_number, line);
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

/* A missing file is normal (most sites have none); one that exists but cannot be read is worth
 * a warning, since the user wrote it for a reason. */
static int mca_var_read_file(const char *path, opal_mca_var_source_t source)
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
        if (ENOENT != errno && ENOTDIR != errno) {
            opal_show_help(MCA_VAR_HELP_FILE, "unreadable-file", true, path, strerror(errno));
        }
        return HERD_SUCCESS;
    }
    if (0 == fstat(fileno(file), &info) && S_ISDIR(info.st_mode)) {
        opal_show_help(MCA_VAR_HELP_FILE, "unreadable-file", true, path, strerror(EISDIR));
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
    if (ferror(file)) {
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
    if (asprintf(&path, "%s/%s", HERD_SYSCONFDIR, MCA_VAR_SYSTEM_FILE_NAME) < 0) {
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

static int mca_var_read_param_files(void)
{
    const char *list = getenv(MCA_VAR_ENV_PREFIX MCA_VAR_PARAM_FILES_NAME);
    const char *home = getenv("HOME");
    char *system_path = mca_var_system_file_path();
    char *user_path = NULL;
    char **files = NULL;
    int rc = HERD_SUCCESS;

    if (NULL == system_path) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (NULL == list) {
        rc = mca_var_read_file(system_path, OPAL_MCA_VAR_SOURCE_SYSTEM_FILE);
        if (HERD_SUCCESS != rc || NULL == home || '\0' == *home) {
            goto out;
        }
        if (asprintf(&user_path, "%s/%s", home, MCA_VAR_USER_FILE_NAME) < 0) {
            user_path = NULL;
            rc = HERD_ERR_OUT_OF_RESOURCE;
            goto out;
        }
        rc = mca_var_read_file(user_path, OPAL_MCA_VAR_SOURCE_USER_FILE);
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
        rc = mca_var_read_file(path, source);
        free(path);
        if (HERD_SUCCESS != rc) {
            goto out;
        }
    }
out:
    opal_argv_free(files);
    free(user_path);
    free(system_path);
    return rc;
}

static int mca_var_read_environment(void)
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
        rc = (NULL == detail) ? HERD_ERR_OUT_OF_RESOURCE
                              : mca_var_add_setting(name, equals + 1, OPAL_MCA_VAR_SOURCE_ENV,
                                                    detail);
        free(detail);
        free(name);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
    return HERD_SUCCESS;
}

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
                                       mca_var_type_names[var->type]);
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
                                opal_mca_var_type_t type,
                                const opal_mca_var_enum_value_t *values, void *storage)
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

int opal_mca_var_register(const opal_mca_component_t *component, const char *name,
                          const char *help, opal_mca_var_type_t type, void *storage)
{
    if (NULL == name || '\0' == *name || OPAL_MCA_VAR_ENUM == type ||
        (NULL != component && (NULL == component->framework || NULL == component->name))) {
        mca_var_report_developer_error("register-bad-args", NULL == name ? "" : name, "");
        return HERD_ERR_BAD_PARAM;
    }
    if (NULL == component) {
        return mca_var_register_any(NULL, "", "", name, help, type, NULL, storage);
    }
    return mca_var_register_any(component, component->framework, component->name, name, help,
                                type, NULL, storage);
}

int opal_mca_var_register_framework(const char *framework, const char *name, const char *help,
                                    opal_mca_var_type_t type, void *storage)
{
    static const char base_prefix[] = "base_";

    if (NULL == framework || NULL == name || OPAL_MCA_VAR_ENUM == type) {
        mca_var_report_developer_error("register-bad-args", NULL == name ? "" : name, "");
        return HERD_ERR_BAD_PARAM;
    }
    /* "<fw>_base_verbose" belongs to the framework's base, as in Open MPI. */
    if (0 == strncmp(name, base_prefix, sizeof(base_prefix) - 1) && '\0' != *framework) {
        return mca_var_register_any(NULL, framework, "base", name + sizeof(base_prefix) - 1,
                                    help, type, NULL, storage);
    }
    return mca_var_register_any(NULL, framework, "", name, help, type, NULL, storage);
}

int opal_mca_var_register_enum(const opal_mca_component_t *component, const char *name,
                               const char *help, const opal_mca_var_enum_value_t *values,
                               int *storage)
{
    if (NULL == name || '\0' == *name ||
        (NULL != component && (NULL == component->framework || NULL == component->name))) {
        mca_var_report_developer_error("register-bad-args", NULL == name ? "" : name, "");
        return HERD_ERR_BAD_PARAM;
    }
    if (NULL == component) {
        return mca_var_register_any(NULL, "", "", name, help, OPAL_MCA_VAR_ENUM, values, storage);
    }
    return mca_var_register_any(component, component->framework, component->name, name, help,
                                OPAL_MCA_VAR_ENUM, values, storage);
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

/* ---------------------------------------------------------------------------------------------
 * Setting values
 * ------------------------------------------------------------------------------------------- */

int opal_mca_var_set_cli(const char *full_name, const char *value)
{
    int index;
    int rc;

    if (!mca_var_name_is_valid(full_name) || NULL == value) {
        opal_show_help(MCA_VAR_HELP_FILE, "bad-cli-name", true,
                       NULL == full_name ? "" : full_name, NULL == value ? "" : value);
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

int opal_mca_var_set_level(int index, int level)
{
    if (!mca_var_index_is_valid(index) || level < 1 || level > MCA_VAR_LEVEL_MAX) {
        return HERD_ERR_BAD_PARAM;
    }
    mca_var_registry.vars[index].level = level;
    return HERD_SUCCESS;
}

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
static int mca_var_check_unknown(const char *const *skip_prefixes,
                                 const char *const *only_prefixes)
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
                           mca_var_source_names[setting->source],
                           NULL == setting->detail ? "" : setting->detail, suggestion);
        } else {
            opal_show_help(MCA_VAR_HELP_FILE, "unknown-name-no-suggestion", false, name,
                           mca_var_source_names[setting->source],
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
