/* SPDX-License-Identifier: BSD-3-Clause */
/* The MCA component and framework types: what a component declares and what a framework base
 * keeps. Every framework header includes this one. */
#ifndef OPAL_MCA_H
#define OPAL_MCA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/status.h"
#include "opal/visibility.h"

/* Bumped whenever opal_mca_component_t changes layout. The loader refuses a component whose
 * stamp differs. It is the first field of the struct so a loader can read it safely from a
 * component built against any other version. */
#ifndef OPAL_MCA_ABI_VERSION
#define OPAL_MCA_ABI_VERSION 1u
#endif

#define OPAL_MCA_MAX_NAME_LEN 63

typedef struct opal_mca_component opal_mca_component_t;

struct opal_mca_component {
    uint32_t mca_abi_version;   /* OPAL_MCA_ABI_VERSION when built */
    uint32_t interface_version; /* the framework's interface version when built */
    const char *layer;          /* "opal", "orte" or "ompi" */
    const char *framework;      /* e.g. "fabric" */
    const char *name;           /* e.g. "tcp" */
    const char *version;        /* the component's own version string */
    /* Register the component's MCA variables; may be NULL. Called once, before open. */
    int (*register_params)(const opal_mca_component_t *component);
    /* Prepare the component; HERD_ERR_NOT_AVAILABLE skips it silently. May be NULL. */
    int (*open)(const opal_mca_component_t *component);
    /* Release what open and query made. May be NULL. */
    int (*close)(const opal_mca_component_t *component);
    /* Offer a module and its priority, or HERD_ERR_NOT_AVAILABLE. Output set only on success. */
    int (*query)(const opal_mca_component_t *component, void **module, int *priority);
};

/* Declares a framework's component. The one exported symbol of a component:
 *   OPAL_MCA_COMPONENT(opal, fabric, tcp, .query = tcp_query, .open = tcp_open);
 * defines `const opal_mca_component_t opal_fabric_tcp_component`, stamped with the MCA ABI
 * version and the framework's interface version (OPAL_MCA_<fw>_INTERFACE_VERSION, which the
 * framework header defines). */
#define OPAL_MCA_COMPONENT(layer_, fw_, comp_, ...)                                               \
    OPAL_MODULE_EXPORT extern const opal_mca_component_t layer_##_##fw_##_##comp_##_component;  \
    OPAL_MODULE_EXPORT const opal_mca_component_t layer_##_##fw_##_##comp_##_component = {      \
        .mca_abi_version = OPAL_MCA_ABI_VERSION,                                                \
        .interface_version = OPAL_MCA_##fw_##_INTERFACE_VERSION,                                \
        .layer = #layer_,                                                                       \
        .framework = #fw_,                                                                      \
        .name = #comp_,                                                                         \
        .version = HERD_COMPONENT_VERSION,                                                      \
        __VA_ARGS__}

#ifndef HERD_COMPONENT_VERSION
#define HERD_COMPONENT_VERSION PACKAGE_VERSION
#endif

/* What configure knows about a DSO component without loading it (its configure.m4 declares it
 * with HERD_MCA_<layer>_<fw>_<comp>_PRIORITY and _AVAILABLE_WHEN). A framework given these
 * hints loads such a component only when its selection could pick it: when one of the
 * component's own variables is set, when an include selection names it, or when the
 * availability condition holds and its priority could beat the components already offering.
 * Tables end with a NULL name. */
typedef struct opal_mca_component_hint {
    const char *name;
    /* the highest priority query() offers while none of the component's variables is set */
    int priority;
    /* space-separated alternatives, of which one must hold for query() to accept: env:NAME (an
     * environment variable set and not empty) or var:NAME (an MCA variable given a value); NULL
     * or "" when it may always accept. "asked": only when the framework base asks for more
     * components (opal_mca_framework_load_deferred), because those it has cannot do a job */
    const char *available_when;
} opal_mca_component_hint_t;

/* A DSO component found on the search path and not loaded yet (see the hints above). */
typedef struct opal_mca_deferred {
    char *name;
    char *path; /* without extension, as found */
    const opal_mca_component_hint_t *hint;
} opal_mca_deferred_t;

/* One found component, as the framework base keeps it. */
typedef struct opal_mca_component_entry {
    const opal_mca_component_t *component;
    bool is_static;        /* from the configure-generated table, not a DSO */
    char *filename;        /* full path of the DSO, NULL for static */
    void *dl_handle;       /* libltdl handle, NULL for static */
    bool opened;           /* open() succeeded */
    bool offered;          /* query() offered a module at the last selection */
    void *module;          /* from query(), when selected */
    int priority;          /* from query(), when selected */
} opal_mca_component_entry_t;

typedef struct opal_mca_framework {
    /* set statically by the framework base */
    const char *layer;
    const char *name;
    const char *description;
    uint32_t interface_version;
    bool multi_select; /* keep every available component (ordered) instead of one winner */
    const opal_mca_component_t *const *static_components; /* NULL-terminated */
    /* Registers the framework base's own variables (ras_base_hostfile, ...) before any
     * component is found; may be NULL. */
    int (*register_base)(void);
    /* framework-wide variables registered by opal_mca_framework_register() */
    char *selection;   /* HERD_MCA_<fw>: "a,b" or "^a,b" */
    int verbose;       /* HERD_MCA_<fw>_base_verbose */
    int output;        /* output stream for verbose messages */
    /* state */
    bool registered;
    bool opened;
    opal_mca_component_entry_t *components; /* found components, sorted by name */
    size_t num_components;
    opal_mca_component_entry_t **selected; /* selected, highest priority first */
    size_t num_selected;
    /* Set before the framework is registered by a program that uses the framework but never
     * lists it (a daemon's fabric inventory): a DSO the selection leaves out is not even loaded,
     * as loading one (libfabric) can cost more than everything else the program does.
     * Its variables then stay unknown to the program. */
    bool load_selected_only;
    /* Set before the framework is registered: the selection's default in this program (NULL:
     * every component). A selection the user makes still wins. */
    const char *default_selection;
    /* Set statically (OPAL_MCA_FRAMEWORK_INIT_HINTS): the configure-generated hints of the
     * framework's DSO components (base/component-hints.h), or NULL to load every one found. */
    const opal_mca_component_hint_t *hints;
    opal_mca_deferred_t *deferred; /* found, not loaded: each may still be loaded later */
    size_t num_deferred;
} opal_mca_framework_t;

/* Declares a framework object statically (in the framework's base). */
#define OPAL_MCA_FRAMEWORK_INIT(layer_, fw_, description_, multi_, static_table_)                \
    OPAL_MCA_FRAMEWORK_INIT_REGISTER(layer_, fw_, description_, multi_, static_table_, NULL)
/* The same for a base with variables of its own, registered by register_base_. */
#define OPAL_MCA_FRAMEWORK_INIT_REGISTER(layer_, fw_, description_, multi_, static_table_,       \
                                         register_base_)                                         \
    OPAL_MCA_FRAMEWORK_INIT_HINTS(layer_, fw_, description_, multi_, static_table_,              \
                                  register_base_, NULL)
/* The same for a framework that loads its DSO components only when its selection could pick
 * them: hints_ is the table of base/component-hints.h. */
#define OPAL_MCA_FRAMEWORK_INIT_HINTS(layer_, fw_, description_, multi_, static_table_,          \
                                      register_base_, hints_)                                    \
    {                                                                                            \
        .layer = #layer_, .name = #fw_, .description = description_,                            \
        .interface_version = OPAL_MCA_##fw_##_INTERFACE_VERSION, .multi_select = multi_,         \
        .static_components = static_table_, .register_base = register_base_, .output = -1,     \
        .hints = hints_,                                                                         \
    }

/* Initialise the MCA system: variables, the component loader, the search path. Idempotent,
 * reference counted with opal_mca_finalize(). */
OPAL_EXPORT int opal_mca_init(void);
OPAL_EXPORT void opal_mca_finalize(void);

/* Register the framework's own variables (selection, verbose) and every found component's.
 * Finds components (static table + DSOs on the search path) on first use. */
OPAL_EXPORT int opal_mca_framework_register(opal_mca_framework_t *fw);
/* Register (if needed), then open the components allowed by the selection variable. */
OPAL_EXPORT int opal_mca_framework_open(opal_mca_framework_t *fw);
/* Query every opened component; keep the winner or the ordered list. HERD_ERR_NOT_FOUND when
 * no component is available (reported by the caller, who knows what it needed). */
OPAL_EXPORT int opal_mca_framework_select(opal_mca_framework_t *fw);
/* Select and open in one call, for a framework base's open function: does nothing when the
 * framework is already selected; on failure the framework is closed again (so one close
 * always matches one successful open). */
OPAL_EXPORT int opal_mca_framework_open_select(opal_mca_framework_t *fw);
/* Load every component the framework deferred (see opal_mca_component_hint_t), registering
 * their variables, and open them when the framework is open: for tools that show everything,
 * to check a setting that names none of the loaded components' variables, and for a
 * multi-select framework whose selected components all turned a job down (the new ones that
 * offer a module join the selected list, in priority order). */
OPAL_EXPORT int opal_mca_framework_load_deferred(opal_mca_framework_t *fw);
/* Whether frameworks defer components at all (variable mca_base_component_defer, true by
 * default); herd-info turns it off before registering anything, to show every component. */
OPAL_EXPORT void opal_mca_set_defer(bool defer);
/* Close every component, unload DSOs, forget the selection. Nothing when not open. */
OPAL_EXPORT void opal_mca_framework_close(opal_mca_framework_t *fw);

/* The selected module of a single-select framework, or NULL. */
OPAL_EXPORT void *opal_mca_framework_module(const opal_mca_framework_t *fw);
/* The module that component `name` of the open framework fw offers, whether or not the
 * selection picked it or even kept it: for a component that builds on another one of its
 * framework (an overlay that wraps the tcp overlay's connections). A component not opened
 * yet is loaded (when deferred) and opened here; the framework's close closes it.
 * HERD_ERR_NOT_FOUND when no such component is found, or it is not available here (its open
 * or query declined); HERD_ERR_BAD_PARAM when fw is not open. */
OPAL_EXPORT int opal_mca_framework_component_module(opal_mca_framework_t *fw, const char *name,
                                                    void **module);

/* Parse a selection string ("a,b", "^a,b", "" or NULL) against the known component names.
 * On success *exclude tells which form it was and *names is a NULL-terminated argv (NULL for no
 * selection). Mixing include and exclude, or naming an unknown component, is reported (naming
 * the variable's source and listing the available components) and HERD_ERR_BAD_PARAM returned. */
OPAL_EXPORT int opal_mca_parse_selection(const opal_mca_framework_t *fw, const char *selection,
                                         bool *exclude, char ***names);

/* Split a selection ("a,b" or "^a,b"; a '^' on a later name too is harmless) into *exclude
 * and *names (without the '^'s; NULL for a NULL or empty selection; free with
 * opal_argv_free). *mixed is set when a later name has a '^' and the first does not. Names
 * are not checked against the framework's components. */
OPAL_EXPORT int opal_mca_split_selection(const char *selection, bool *exclude, char ***names,
                                         bool *mixed);

/* Search path for DSO components (colon-separated), from HERD_MCA_component_path and pkglibdir. */
OPAL_EXPORT const char *opal_mca_component_path(void);

#endif /* OPAL_MCA_H */
