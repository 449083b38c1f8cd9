/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the files of the MCA variable system (mca_var*.c): the registry, its entries and
 * settings, and the helpers more than one of those files calls. Not for frameworks or components:
 * they use mca_var.h. */
#ifndef OPAL_MCA_VAR_INTERNAL_H
#define OPAL_MCA_VAR_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "opal/mca/base/mca_var.h"

#define MCA_VAR_HELP_FILE "help-mca-var.txt"

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

/* The variable system's whole state (defined in mca_var.c): one per process, shared by the files
 * of the variable system only. */
typedef struct {
    int refcount;
    mca_var_t *vars;
    size_t num_vars;
    size_t max_vars;
    mca_var_setting_t *settings;
    size_t num_settings;
    size_t max_settings;
    char **unknown_warned; /* names already reported by opal_mca_var_check_unknown() */
    int bad_file_lines;    /* skipped lines of parameter files: reported, not fatal */
    char *system_file;     /* replaces the compiled-in path; see opal_mca_var_set_system_file() */
} mca_var_registry_t;

extern mca_var_registry_t mca_var_registry;

static inline bool mca_var_index_is_valid(int index)
{
    return index >= 0 && (size_t) index < mca_var_registry.num_vars;
}

/* The variable an index stands for: itself, or what a synonym was renamed to. */
static inline int mca_var_target(int index)
{
    int target = mca_var_registry.vars[index].synonym_of;

    return target >= 0 ? target : index;
}

/* mca_var_parse.c: text */

/* Trim in place; returns the first non-blank character. */
char *mca_var_trim(char *text);
/* Whether name is a valid full variable name: letters, digits and underscores. */
bool mca_var_name_is_valid(const char *name);

/* mca_var_value.c: values, resolution and the messages about them */

/* A value as herd-info shows it, freshly allocated. */
int mca_var_value_to_string(const mca_var_t *var, const mca_var_value_t *value, char **text);
void mca_var_write_storage(const mca_var_t *var, void *storage);
void mca_var_read_storage(opal_mca_var_type_t type, const void *storage, mca_var_value_t *value);
/* Give a variable the value of its best valid setting, reporting bad ones (once each); returns
 * HERD_ERR_BAD_PARAM when a bad value was newly reported. */
int mca_var_resolve(int index);
/* Tell the user a setting's text is not a value of the variable's type, and which value the
 * variable keeps instead. */
void mca_var_report_bad_value(const mca_var_t *var, const char *setting_name, const char *text,
                              opal_mca_var_source_t source, const char *detail);
/* An internal error of a registration (topic of help-mca-var.txt with the arguments name, what). */
void mca_var_report_developer_error(const char *topic, const char *name, const char *what);

/* mca_var_source.c: settings from files, the environment, the command line and the program */

/* The setting of name that wins: highest source, and the last one recorded within a source
 * (settings the program made with opal_mca_var_set_value() only when include_set). */
const mca_var_setting_t *mca_var_best_setting(const char *name, bool include_set);
/* The parameter files, then the environment: what opal_mca_var_init() reads. */
int mca_var_read_param_files(void);
int mca_var_read_environment(void);

#endif /* OPAL_MCA_VAR_INTERNAL_H */
