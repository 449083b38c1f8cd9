/* SPDX-License-Identifier: BSD-3-Clause */
/* MCA variables: typed run-time parameters with a value, a default and the source the value came
 * from (default < system file < user file < environment < command line). */
#ifndef OPAL_MCA_VAR_H
#define OPAL_MCA_VAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/mca/mca.h"

typedef enum {
    OPAL_MCA_VAR_INT,      /* storage: int */
    OPAL_MCA_VAR_UNSIGNED, /* storage: unsigned int */
    OPAL_MCA_VAR_SIZE,     /* storage: size_t; k/m/g suffixes (any case), powers of 1024 */
    OPAL_MCA_VAR_BOOL,     /* storage: bool; 1/0, true/false, yes/no, on/off, enabled/disabled */
    OPAL_MCA_VAR_STRING,   /* storage: char *, owned by the variable system (may be NULL) */
    OPAL_MCA_VAR_ENUM,     /* storage: int; the value is one of a list of named values */
} opal_mca_var_type_t;

/* Where a variable's current value came from, lowest precedence first. */
typedef enum {
    OPAL_MCA_VAR_SOURCE_DEFAULT,
    OPAL_MCA_VAR_SOURCE_SYSTEM_FILE, /* $(sysconfdir)/herd-mca-params.conf */
    OPAL_MCA_VAR_SOURCE_USER_FILE,   /* ~/.herd/mca-params.conf */
    OPAL_MCA_VAR_SOURCE_ENV,         /* HERD_MCA_<name> */
    OPAL_MCA_VAR_SOURCE_CLI,         /* --mca name value */
    OPAL_MCA_VAR_SOURCE_SET,         /* set by the program itself (opal_mca_var_set_value) */
} opal_mca_var_source_t;

/* A named value of an enum variable; arrays end with {NULL, 0}. */
typedef struct {
    const char *name;
    int value;
} opal_mca_var_enum_value_t;

/* Levels as in Open MPI: 1-3 end users, 4-6 tuners, 7-9 developers. */
#define OPAL_MCA_VAR_LEVEL_DEFAULT 1

typedef struct opal_mca_var_info {
    int index;
    const char *full_name;  /* "fabric_tcp_if_include" */
    const char *framework;  /* "fabric", or "" for a top-level variable */
    const char *component;  /* "tcp", "base", or "" */
    const char *name;       /* "if_include" */
    const char *help;
    opal_mca_var_type_t type;
    int level;
    const opal_mca_var_enum_value_t *enum_values; /* for OPAL_MCA_VAR_ENUM */
    opal_mca_var_source_t source;
    const char *source_detail; /* "file:line", "HERD_MCA_x", "--mca", or NULL */
    const char *deprecated_by; /* for a synonym: the new name, else NULL */
} opal_mca_var_info_t;

/* Start the variable system: read the parameter files (sysconfdir then ~/.herd, or the
 * colon-separated list in env HERD_MCA_param_files) and the HERD_MCA_* environment.
 * Bad lines in files are reported with file:line. Idempotent (reference counted). */
OPAL_EXPORT int opal_mca_var_init(void);
OPAL_EXPORT void opal_mca_var_finalize(void);

/* Read path instead of $(sysconfdir)/herd-mca-params.conf at the next opal_mca_var_init() (NULL
 * restores the compiled-in path); for tests and relocated installations. Cleared by the last
 * opal_mca_var_finalize(). */
OPAL_EXPORT int opal_mca_var_set_system_file(const char *path);

/* Record a --mca NAME VALUE from a command line. Takes effect for variables registered before
 * or after this call. */
OPAL_EXPORT int opal_mca_var_set_cli(const char *full_name, const char *value);

/* Register a variable of a component (component may be NULL for a top-level variable, e.g.
 * "component_path"). Full name "<fw>_<comp>_<name>". *storage holds the default on entry and the
 * resolved value on return. Returns the variable index (>= 0), or a negative status; a bad value
 * from any source is reported (variable, source, expected type) and HERD_ERR_BAD_PARAM returned.
 * Registering the same full name twice returns the existing index (storage is then shared). */
OPAL_EXPORT int opal_mca_var_register(const opal_mca_component_t *component, const char *name,
                                      const char *help, opal_mca_var_type_t type, void *storage);
/* The same for framework-level variables: "<fw>_<name>" (name may be "" for "<fw>" itself, or
 * "base_verbose"). framework may be "" for a top-level variable. */
OPAL_EXPORT int opal_mca_var_register_framework(const char *framework, const char *name,
                                                const char *help, opal_mca_var_type_t type,
                                                void *storage);
/* An enum variable: values lists the accepted names; *storage holds the default value. */
OPAL_EXPORT int opal_mca_var_register_enum(const opal_mca_component_t *component, const char *name,
                                           const char *help,
                                           const opal_mca_var_enum_value_t *values, int *storage);

/* One variable of a registration table: what one opal_mca_var_register*() call, and the
 * opal_mca_var_set_level() after it, would say. Fill it with designated initializers; a field left
 * out is 0 or NULL, which means "none" (level: the default level). A table may be static const
 * (storage of static objects) or built at run time (storage in a struct passed in). */
typedef struct {
    /* "priority"; in a framework table also "" (the framework itself) or "base_verbose" */
    const char *name;
    opal_mca_var_type_t type;
    /* of the type; holds the default on entry, as for opal_mca_var_register() */
    void *storage;
    const char *help;
    /* 1-9 as for opal_mca_var_set_level(), or 0: the default level */
    int level;
    /* for OPAL_MCA_VAR_ENUM (required), else NULL */
    const opal_mca_var_enum_value_t *enum_values;
    /* where the variable's index goes once the whole table registered, or NULL */
    int *index;
} opal_mca_var_def_t;

/* The number of entries of a table declared as an array. */
#define OPAL_MCA_VAR_DEFS_COUNT(defs) (sizeof(defs) / sizeof((defs)[0]))

/* Register the count variables of defs for component, in table order. Each entry is what
 * opal_mca_var_register() (opal_mca_var_register_enum() for OPAL_MCA_VAR_ENUM) does with its
 * name, help, type, storage and enum_values, then opal_mca_var_set_level() when level is not 0;
 * same names, defaults, sources, messages as those calls.
 * Returns HERD_SUCCESS when every entry registered; only then is each entry's index written to
 * *index (when not NULL). Otherwise stops at the first entry that fails and returns its status,
 * as the registration reports it: HERD_ERR_BAD_PARAM for a bad value from a source (the variable
 * is registered with the value it keeps, but its level is not set) or for a mistake in the entry
 * (missing name or storage, enum_values on another type, a level outside 0-9: reported as an
 * internal error, the entry not registered), HERD_ERR_OUT_OF_RESOURCE, or HERD_ERROR before
 * opal_mca_var_init(). The entries before it stay registered (a variable cannot be taken back)
 * and their storage holds their values; the entries after it are not registered, their storage
 * untouched. count 0 registers nothing and succeeds.
 * A table registered again (a framework opened again) registers each name again: the same
 * indices, the value shared (see opal_mca_var_register()), the level set again. */
OPAL_EXPORT int opal_mca_var_register_table(const opal_mca_component_t *component,
                                            const opal_mca_var_def_t *defs, size_t count);
/* The same for framework-level variables, each named as opal_mca_var_register_framework() names
 * it ("<fw>_<name>"; framework "" for top-level variables). Enums are allowed here too. */
OPAL_EXPORT int opal_mca_var_register_framework_table(const char *framework,
                                                      const opal_mca_var_def_t *defs, size_t count);

/* Stop writing to the storage this component registered (string storage is set to NULL); the
 * variables stay known. Call before unloading a component's DSO: its storage goes with it. */
OPAL_EXPORT void opal_mca_var_release_component(const opal_mca_component_t *component);

/* Attributes set after registration. */
OPAL_EXPORT int opal_mca_var_set_level(int index, int level);
/* A synonym (old_full_name) for a renamed variable: setting it sets the variable, with a
 * deprecation warning naming the new name, once per old name. */
OPAL_EXPORT int opal_mca_var_register_synonym(int index, const char *old_full_name);

/* Set a value from the program (source SET); parsed like any other source. */
OPAL_EXPORT int opal_mca_var_set_value(int index, const char *value);

/* Look up a variable by full name. */
OPAL_EXPORT int opal_mca_var_find(const char *full_name);
/* Whether a parameter file, the environment or the command line gives full_name a value,
 * registered or not (a framework can tell a user's choice apart without loading components). */
OPAL_EXPORT bool opal_mca_var_is_set(const char *full_name);
/* Whether a parameter file, the environment or the command line sets any name starting with
 * prefix ("ras_slurm_"), registered or not. */
OPAL_EXPORT bool opal_mca_var_any_set_under(const char *prefix);
/* Whether a parameter file, the environment or the command line sets a name under
 * framework ("<framework>_...") that no registered variable or synonym knows. */
OPAL_EXPORT bool opal_mca_var_unknown_under(const char *framework);
/* Whether full_name has a value other than its default: set by a source as above, or by the
 * program (opal_mca_var_set_value) once registered. */
OPAL_EXPORT bool opal_mca_var_has_value(const char *full_name);
OPAL_EXPORT int opal_mca_var_count(void);
OPAL_EXPORT int opal_mca_var_get_info(int index, opal_mca_var_info_t *info);
/* The current value and the default, as strings, freshly allocated (caller frees). */
OPAL_EXPORT int opal_mca_var_value_string(int index, char **value);
OPAL_EXPORT int opal_mca_var_default_string(int index, char **value);
OPAL_EXPORT const char *opal_mca_var_type_name(opal_mca_var_type_t type);
OPAL_EXPORT const char *opal_mca_var_source_name(opal_mca_var_source_t source);

/* Parse text into a typed value the way every source is parsed; for tests and tools.
 * value must point to storage of the type (char * for strings: allocated). */
OPAL_EXPORT int opal_mca_var_parse(opal_mca_var_type_t type,
                                   const opal_mca_var_enum_value_t *values,
                                   const char *text, void *value);

/* Warn once about each variable set in the environment or a parameter file (or on the command
 * line) that no registered variable or synonym knows, suggesting the closest known name. Names
 * under a framework prefix in skip_prefixes (e.g. frameworks this program never opened) are not
 * checked. Returns the number of unknown names. */
OPAL_EXPORT int opal_mca_var_check_unknown(const char *const *skip_prefixes);
/* The same for the names under one of prefixes only (NULL-terminated): a program that passes
 * settings on to others (herdrun: to the processes it starts) checks the frameworks it uses
 * itself, and leaves the others' names alone. */
OPAL_EXPORT int opal_mca_var_check_unknown_under(const char *const *prefixes);

#endif /* OPAL_MCA_VAR_H */
