/* SPDX-License-Identifier: BSD-3-Clause */
/* Framework life cycle: register variables, find and open components, select by priority
 * (one winner or an ordered list), close. Selection lives here, never in components. */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "opal/mca/base/mca_base_internal.h"
#include "opal/mca/base/mca_var.h"
#ifndef OPAL_MCA_STATIC_ONLY
#include "opal/util/topology.h"
#endif
#include "opal/util/argv.h"
#include "opal/util/install_dirs.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"

static const char *help_file = "help-mca-base.txt";

/* The MCA core's own state: reference count and the core variables. */
static struct {
    int refcount;
    char *user_path;       /* component_path */
    bool show_load_errors; /* mca_base_component_show_load_errors */
    bool unload;           /* mca_base_component_unload */
    bool defer;            /* mca_base_component_defer */
    bool defer_off;        /* opal_mca_set_defer(false): a tool that shows everything */
    char *search_path;     /* user_path + pkglibdir */
} mca_core;

/* The core variables under "mca_base_" (component_path, a top-level one, is registered alone). */
static const opal_mca_var_def_t mca_core_base_vars[] = {
    {.name = "component_show_load_errors",
     .type = OPAL_MCA_VAR_BOOL,
     .storage = &mca_core.show_load_errors,
     .help = "Report component files that cannot be loaded or do not match this herd (wrong "
             "ABI or interface version, wrong symbol)"},
    {.name = "component_unload",
     .type = OPAL_MCA_VAR_BOOL,
     .storage = &mca_core.unload,
     .help = "Unload DSO components when their framework closes. Off by default: libraries "
             "that components pull in cannot all be unloaded safely (UCX patches other "
             "libraries' memory functions; some providers allocate in constructors they never "
             "undo)"},
    {.name = "component_defer",
     .type = OPAL_MCA_VAR_BOOL,
     .storage = &mca_core.defer,
     .help = "Load a component whose configure declared its priority and when it can be "
             "available (ras slurm, errmgr continue, ...) only when the selection could pick "
             "it: when one of its variables is set, when the framework's selection names it, "
             "or when it is available and could beat the components already offering. False "
             "loads every component found"},
};

int opal_mca_init(void)
{
    int rc;
    if (mca_core.refcount++ > 0) {
        return HERD_SUCCESS;
    }
#ifndef OPAL_MCA_STATIC_ONLY
    /* herd's own processes; libherd (OPAL_MCA_STATIC_ONLY) leaves the application's hwloc
     * settings alone and does not link hwloc */
    opal_topology_prepare();
#endif
    rc = opal_mca_var_init();
    if (HERD_SUCCESS != rc) {
        goto err_var;
    }
    mca_core.user_path = NULL;
    mca_core.show_load_errors = true;
    mca_core.unload = false;
    mca_core.defer = true;
    /* a top-level variable, then the "mca_base_" ones */
    rc = opal_mca_var_register_framework(
        "", "component_path",
        "Colon-separated folders searched for DSO components (herd_<fw>_<comp>.so) before the "
        "installed component folder",
        OPAL_MCA_VAR_STRING, &mca_core.user_path);
    if (rc >= 0) {
        rc = opal_mca_var_register_framework_table("mca_base", mca_core_base_vars,
                                                   OPAL_MCA_VAR_DEFS_COUNT(mca_core_base_vars));
    }
    if (rc < 0) {
        goto err_register;
    }
    return HERD_SUCCESS;

err_register:
    opal_mca_var_finalize();
err_var:
    mca_core.refcount = 0;
    return rc < 0 ? rc : HERD_ERROR;
}

void opal_mca_finalize(void)
{
    if (mca_core.refcount <= 0 || --mca_core.refcount > 0) {
        return;
    }
    free(mca_core.search_path);
    mca_core.search_path = NULL;
    opal_mca_var_finalize(); /* frees the string variables' values */
    mca_core.user_path = NULL;
    opal_output_finalize();
}

const char *opal_mca_component_path(void)
{
    /* Built on each call: component_path may change after init (--mca on a command line). */
    const char *user = (mca_core.refcount > 0) ? mca_core.user_path : NULL;
    const char *pkglibdir = opal_install_dir(OPAL_INSTALL_PKGLIBDIR);
    size_t len = (NULL != user ? strlen(user) : 0) + strlen(pkglibdir) + 2;
    char *path = malloc(len);
    if (NULL == path) {
        return pkglibdir;
    }
    if (NULL != user && '\0' != user[0]) {
        snprintf(path, len, "%s:%s", user, pkglibdir);
    } else {
        snprintf(path, len, "%s", pkglibdir);
    }
    free(mca_core.search_path);
    mca_core.search_path = path;
    return path;
}

bool opal_mca_show_load_errors(void)
{
    return mca_core.show_load_errors;
}

bool opal_mca_unload_components(void)
{
    return mca_core.unload;
}

bool opal_mca_defer_enabled(void)
{
    return mca_core.defer && !mca_core.defer_off;
}

void opal_mca_set_defer(bool defer)
{
    mca_core.defer_off = !defer;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Names of the found components joined with ", ", for messages. */
static char *component_names(const opal_mca_framework_t *fw)
{
    char **names = NULL;
    for (size_t i = 0; i < fw->num_components; ++i) {
        opal_argv_append(&names, fw->components[i].component->name);
    }
    for (size_t i = 0; i < fw->num_deferred; ++i) {
        opal_argv_append(&names, fw->deferred[i].name);
    }
    if (NULL != names) {
        qsort(names, opal_argv_count(names), sizeof(*names), compare_names);
    }
    char *joined = NULL != names ? opal_argv_join(names, ',') : strdup("(none)");
    opal_argv_free(names);
    if (NULL != joined) {
        /* "a,b" reads better as "a, b" in a sentence */
        size_t commas = 0;
        for (char *p = joined; '\0' != *p; ++p) {
            commas += (',' == *p);
        }
        char *spaced = malloc(strlen(joined) + commas + 1);
        if (NULL != spaced) {
            char *out = spaced;
            for (char *p = joined; '\0' != *p; ++p) {
                *out++ = *p;
                if (',' == *p) {
                    *out++ = ' ';
                }
            }
            *out = '\0';
        }
        free(joined);
        joined = spaced;
    }
    return joined;
}

/* Where the selection variable's value came from, for messages: "HERD_MCA_fabric", a
 * file:line, "--mca". */
static const char *selection_source(const opal_mca_framework_t *fw)
{
    opal_mca_var_info_t info;
    int index = opal_mca_var_find(fw->name);
    if (index >= 0 && HERD_SUCCESS == opal_mca_var_get_info(index, &info) &&
        NULL != info.source_detail) {
        return info.source_detail;
    }
    return fw->name;
}

int opal_mca_split_selection(const char *selection, bool *exclude, char ***names, bool *mixed)
{
    *exclude = false;
    *names = NULL;
    *mixed = false;
    if (NULL == selection || '\0' == selection[0]) {
        return HERD_SUCCESS;
    }
    char **list = opal_argv_split(selection, ',');
    if (NULL == list) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    size_t count = opal_argv_count(list);
    for (size_t i = 0; i < count; ++i) {
        char *name = list[i];
        bool negated = ('^' == name[0]);
        if (0 == i) {
            *exclude = negated;
        } else if (negated && !*exclude) {
            *mixed = true;
        }
        if (negated) {
            memmove(name, name + 1, strlen(name));
        }
    }
    if (0 == count) {
        opal_argv_free(list);
        list = NULL;
    }
    *names = list;
    return HERD_SUCCESS;
}

int opal_mca_parse_selection(const opal_mca_framework_t *fw, const char *selection,
                             bool *exclude, char ***names)
{
    char **list = NULL;
    bool is_exclude = false, mixed = false;
    int rc = opal_mca_split_selection(selection, &is_exclude, &list, &mixed);

    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (mixed) {
        char *available = component_names(fw);
        opal_show_help(help_file, "selection-mixed", true, selection, fw->name,
                       selection_source(fw), fw->name, available ? available : "");
        free(available);
        rc = HERD_ERR_BAD_PARAM;
        goto out;
    }
    for (char **name = list; NULL != name && NULL != *name; ++name) {
        bool known = false;
        for (size_t c = 0; c < fw->num_components; ++c) {
            known = known || 0 == strcmp(fw->components[c].component->name, *name);
        }
        for (size_t d = 0; d < fw->num_deferred; ++d) {
            known = known || 0 == strcmp(fw->deferred[d].name, *name);
        }
        if (!known) {
            char *available = component_names(fw);
            opal_show_help(help_file, "selection-unknown", true, fw->name, *name,
                           selection_source(fw), selection, available ? available : "");
            free(available);
            rc = HERD_ERR_BAD_PARAM;
            goto out;
        }
    }
    *exclude = is_exclude;
    *names = list;
    return HERD_SUCCESS;

out:
    opal_argv_free(list);
    return rc;
}

/* The selection order: the higher priority first; ties by name, so every process (and every
 * daemon) picks the same one. Negative when a goes before b. */
static int rank_order(int priority_a, const char *name_a, int priority_b, const char *name_b)
{
    if (priority_a != priority_b) {
        return priority_a > priority_b ? -1 : 1;
    }
    return strcmp(name_a, name_b);
}

static int compare_selected(const void *a, const void *b)
{
    const opal_mca_component_entry_t *ea = *(opal_mca_component_entry_t *const *) a;
    const opal_mca_component_entry_t *eb = *(opal_mca_component_entry_t *const *) b;
    return rank_order(ea->priority, ea->component->name, eb->priority, eb->component->name);
}

bool opal_mca_selection_left_out(char **names, bool exclude, const char *name)
{
    return NULL != names && (opal_argv_find(names, name) >= 0) == exclude;
}

/* Open one component the selection keeps. */
static void open_entry(opal_mca_framework_t *fw, opal_mca_component_entry_t *entry)
{
    const opal_mca_component_t *c = entry->component;
    int crc = (NULL != c->open) ? c->open(c) : HERD_SUCCESS;
    if (HERD_SUCCESS == crc) {
        entry->opened = true;
        opal_output_verbose(10, fw->output, "opened component %s", c->name);
    } else if (HERD_ERR_NOT_AVAILABLE == crc) {
        opal_output_verbose(10, fw->output, "component %s is not available here", c->name);
    } else if (HERD_ERR_SILENT != crc) {
        opal_show_help(help_file, "component-open-failed", true, fw->name, c->name,
                       opal_strerror(crc));
    }
}

/* Load fw->deferred[index]: its variables are registered when the framework's are, and it is
 * opened when the framework is open and the selection keeps it. *loaded: its entry, or NULL
 * when the DSO was refused. fw->components may move and is left unsorted. */
static int load_one(opal_mca_framework_t *fw, size_t index, char **names, bool exclude,
                    opal_mca_component_entry_t **loaded)
{
    int rc = opal_mca_components_load_deferred(fw, index, loaded);
    if (HERD_SUCCESS != rc || NULL == *loaded) {
        return rc;
    }
    const opal_mca_component_t *c = (*loaded)->component;
    if (fw->registered && NULL != c->register_params) {
        rc = c->register_params(c);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
    if (fw->opened && !opal_mca_selection_left_out(names, exclude, c->name)) {
        open_entry(fw, *loaded);
    }
    return HERD_SUCCESS;
}

void opal_mca_selection_names(const char *selection, char ***names, bool *exclude)
{
    bool mixed = false;
    if (HERD_SUCCESS != opal_mca_split_selection(selection, exclude, names, &mixed) || mixed) {
        opal_argv_free(*names);
        *names = NULL;
        *exclude = false;
    }
}

/* Load the deferred components a user asked for: one of whose variables is set, or named by
 * an include selection. */
static int load_wanted(opal_mca_framework_t *fw)
{
    char **names = NULL;
    bool exclude = false;
    int rc = HERD_SUCCESS;
    if (0 == fw->num_deferred) {
        return HERD_SUCCESS;
    }
    opal_mca_selection_names(fw->selection, &names, &exclude);
    for (size_t i = 0; i < fw->num_deferred && HERD_SUCCESS == rc;) {
        const char *name = fw->deferred[i].name;
        char prefix[2 * OPAL_MCA_MAX_NAME_LEN + 4];
        snprintf(prefix, sizeof(prefix), "%s_%s_", fw->name, name);
        bool by_variable = opal_mca_var_any_set_under(prefix);
        if (!by_variable && (NULL == names || exclude || opal_argv_find(names, name) < 0)) {
            ++i;
            continue;
        }
        opal_output_verbose(10, fw->output, "loading component %s: %s", name,
                            by_variable ? "one of its variables is set" : "the selection names it");
        opal_mca_component_entry_t *loaded = NULL;
        rc = load_one(fw, i, names, exclude, &loaded);
    }
    opal_argv_free(names);
    opal_mca_components_sort(fw);
    return rc;
}

/* Whether one alternative of a hint's availability condition holds. */
static bool condition_holds(const char *condition)
{
    if (NULL == condition || '\0' == condition[0]) {
        return true;
    }
    char **alternatives = opal_argv_split(condition, ' ');
    bool holds = (NULL == alternatives); /* out of memory: load it, as without a hint */
    for (size_t i = 0; !holds && NULL != alternatives[i]; ++i) {
        const char *alt = alternatives[i];
        if (0 == strncmp(alt, "env:", 4)) {
            const char *value = getenv(alt + 4);
            holds = NULL != value && '\0' != value[0];
        } else if (0 == strncmp(alt, "var:", 4)) {
            holds = opal_mca_var_has_value(alt + 4);
        } else if (0 == strcmp(alt, "asked")) {
            holds = false; /* only opal_mca_framework_load_deferred() loads it */
        } else {
            holds = true; /* a condition this herd does not know: never skip on it */
        }
    }
    opal_argv_free(alternatives);
    return holds;
}

/* The entries that offered a module, highest priority first, in fw->selected again (after
 * fw->components moved). */
static int collect_selected(opal_mca_framework_t *fw)
{
    free(fw->selected);
    fw->selected = calloc(fw->num_components + 1, sizeof(*fw->selected));
    fw->num_selected = 0;
    if (NULL == fw->selected) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < fw->num_components; ++i) {
        if (fw->components[i].offered) {
            fw->selected[fw->num_selected++] = &fw->components[i];
        }
    }
    qsort(fw->selected, fw->num_selected, sizeof(*fw->selected), compare_selected);
    return HERD_SUCCESS;
}

int opal_mca_framework_register(opal_mca_framework_t *fw)
{
    int rc;
    char selection_help[256];
    char verbose_help[256];
    /* the help names the framework, so the table is made here */
    const opal_mca_var_def_t vars[] = {
        {.name = "",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &fw->selection,
         .help = selection_help},
        {.name = "base_verbose",
         .type = OPAL_MCA_VAR_INT,
         .storage = &fw->verbose,
         .help = verbose_help},
    };

    if (fw->registered) {
        return HERD_SUCCESS;
    }
    rc = opal_mca_init();
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    fw->selection = (char *) fw->default_selection;
    fw->verbose = 0;
    snprintf(selection_help, sizeof(selection_help),
             "Which %s components to use: a comma-separated list (a,b) keeps only those, a list "
             "starting with ^ (^a,b) excludes those",
             fw->name);
    snprintf(verbose_help, sizeof(verbose_help),
             "Verbosity of the %s framework: 0 quiet, 10 component discovery and selection, "
             "higher for more detail",
             fw->name);
    rc = opal_mca_var_register_framework_table(fw->name, vars, OPAL_MCA_VAR_DEFS_COUNT(vars));
    if (rc < 0) {
        goto err_init;
    }
    fw->output = opal_output_open(fw->name, fw->verbose);
    if (NULL != fw->register_base) {
        rc = fw->register_base();
        if (HERD_SUCCESS != rc) {
            goto err_output;
        }
    }
    rc = opal_mca_components_find(fw);
    if (HERD_SUCCESS == rc) {
        rc = load_wanted(fw);
    }
    if (HERD_SUCCESS != rc) {
        goto err_components;
    }
    /* Every loaded component registers its variables, also those the selection leaves out,
     * so herd-info shows them and a setting for them is not reported as unknown (a deferred
     * one is loaded as soon as one of its variables is set). */
    for (size_t i = 0; i < fw->num_components; ++i) {
        const opal_mca_component_t *c = fw->components[i].component;
        if (NULL != c->register_params) {
            rc = c->register_params(c);
            if (HERD_SUCCESS != rc) {
                goto err_components;
            }
        }
    }
    fw->registered = true;
    return HERD_SUCCESS;

err_components:
    opal_mca_components_release(fw);
err_output:
    opal_output_close(fw->output);
    fw->output = -1;
err_init:
    opal_mca_finalize();
    return rc < 0 ? rc : HERD_ERROR;
}

int opal_mca_framework_open(opal_mca_framework_t *fw)
{
    bool exclude = false;
    char **names = NULL;
    int rc;

    if (fw->opened) {
        return HERD_SUCCESS;
    }
    rc = opal_mca_framework_register(fw);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    rc = opal_mca_parse_selection(fw, fw->selection, &exclude, &names);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    /* settings made since the framework registered (a --mca read later) */
    rc = load_wanted(fw);
    if (HERD_SUCCESS != rc) {
        opal_argv_free(names);
        return rc;
    }
    for (size_t i = 0; i < fw->num_components; ++i) {
        opal_mca_component_entry_t *entry = &fw->components[i];
        if (opal_mca_selection_left_out(names, exclude, entry->component->name)) {
            opal_output_verbose(10, fw->output, "component %s left out by %s=%s",
                                entry->component->name, selection_source(fw), fw->selection);
            continue;
        }
        open_entry(fw, entry);
    }
    opal_argv_free(names);
    fw->opened = true;
    return HERD_SUCCESS;
}

static void close_entry(opal_mca_component_entry_t *entry)
{
    if (entry->opened && NULL != entry->component->close) {
        entry->component->close(entry->component);
    }
    entry->opened = false;
    entry->offered = false;
    entry->module = NULL;
}

/* Ask one opened component for its module; one that declines is closed. */
static int query_entry(opal_mca_framework_t *fw, opal_mca_component_entry_t *entry)
{
    const opal_mca_component_t *c = entry->component;
    void *module = NULL;
    int priority = 0;
    int qrc = (NULL != c->query) ? c->query(c, &module, &priority) : HERD_ERR_NOT_AVAILABLE;
    if (HERD_SUCCESS != qrc) {
        if (HERD_ERR_NOT_AVAILABLE != qrc && HERD_ERR_SILENT != qrc) {
            opal_show_help(help_file, "component-query-failed", true, fw->name, c->name,
                           opal_strerror(qrc));
        }
        opal_output_verbose(10, fw->output, "component %s declined (%s)", c->name,
                            opal_strerror(qrc));
        close_entry(entry);
        return qrc;
    }
    entry->offered = true;
    entry->module = module;
    entry->priority = priority;
    opal_output_verbose(10, fw->output, "component %s offers priority %d", c->name, priority);
    return HERD_SUCCESS;
}

/* The deferred component the selection should try next: available, kept by the selection,
 * and (single-select) able to beat the best offer so far; the highest hint first. -1: none. */
static ssize_t next_deferred(opal_mca_framework_t *fw, char **names, bool exclude)
{
    const opal_mca_component_entry_t *best = NULL;
    for (size_t i = 0; i < fw->num_components; ++i) {
        const opal_mca_component_entry_t *e = &fw->components[i];
        if (e->offered && (NULL == best || compare_selected(&e, &best) < 0)) {
            best = e;
        }
    }
    ssize_t next = -1;
    for (size_t i = 0; i < fw->num_deferred; ++i) {
        const opal_mca_deferred_t *d = &fw->deferred[i];
        if (opal_mca_selection_left_out(names, exclude, d->name) ||
            !condition_holds(d->hint->available_when)) {
            continue;
        }
        if (!fw->multi_select && NULL != best &&
            rank_order(d->hint->priority, d->name, best->priority, best->component->name) > 0) {
            continue;
        }
        if (next < 0 || rank_order(d->hint->priority, d->name, fw->deferred[next].hint->priority,
                                   fw->deferred[next].name) < 0) {
            next = (ssize_t) i;
        }
    }
    return next;
}

int opal_mca_framework_select(opal_mca_framework_t *fw)
{
    int rc = opal_mca_framework_open(fw);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    for (size_t i = 0; i < fw->num_components; ++i) {
        opal_mca_component_entry_t *entry = &fw->components[i];
        entry->offered = false;
        if (entry->opened) {
            (void) query_entry(fw, entry);
        }
    }
    if (fw->num_deferred > 0) {
        char **names = NULL;
        bool exclude = false;
        opal_mca_selection_names(fw->selection, &names, &exclude);
        ssize_t next;
        while (HERD_SUCCESS == rc && (next = next_deferred(fw, names, exclude)) >= 0) {
            opal_mca_component_entry_t *loaded = NULL;
            opal_output_verbose(10, fw->output, "loading component %s: it could be selected",
                                fw->deferred[next].name);
            rc = load_one(fw, (size_t) next, names, exclude, &loaded);
            if (HERD_SUCCESS == rc && NULL != loaded && loaded->opened) {
                (void) query_entry(fw, loaded);
            }
        }
        opal_argv_free(names);
        opal_mca_components_sort(fw);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
    rc = collect_selected(fw);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (!fw->multi_select && fw->num_selected > 1) {
        for (size_t i = 1; i < fw->num_selected; ++i) {
            opal_output_verbose(10, fw->output, "component %s not selected (priority %d)",
                                fw->selected[i]->component->name, fw->selected[i]->priority);
            close_entry(fw->selected[i]);
            fw->selected[i] = NULL;
        }
        fw->num_selected = 1;
    }
    for (size_t i = 0; i < fw->num_selected; ++i) {
        opal_output_verbose(10, fw->output, "selected component %s (priority %d)",
                            fw->selected[i]->component->name, fw->selected[i]->priority);
    }
    return 0 == fw->num_selected ? HERD_ERR_NOT_FOUND : HERD_SUCCESS;
}

int opal_mca_framework_load_deferred(opal_mca_framework_t *fw)
{
    if (!fw->registered || 0 == fw->num_deferred) {
        return HERD_SUCCESS;
    }
    char **names = NULL;
    bool exclude = false;
    int rc = HERD_SUCCESS;
    opal_mca_selection_names(fw->selection, &names, &exclude);
    while (HERD_SUCCESS == rc && fw->num_deferred > 0) {
        opal_mca_component_entry_t *loaded = NULL;
        rc = load_one(fw, 0, names, exclude, &loaded);
        /* a multi-select framework already selected takes the new ones into its list; a
         * single-select one keeps its winner */
        if (HERD_SUCCESS == rc && NULL != loaded && loaded->opened && NULL != fw->selected &&
            fw->multi_select) {
            (void) query_entry(fw, loaded);
        }
    }
    opal_argv_free(names);
    opal_mca_components_sort(fw);
    /* fw->components moved: the selected entries are found again (a single-select framework
     * closed its losers, so only the winner still offers) */
    if (NULL != fw->selected) {
        int crc = collect_selected(fw);
        rc = HERD_SUCCESS == rc ? crc : rc;
    }
    return rc;
}

int opal_mca_framework_open_select(opal_mca_framework_t *fw)
{
    if (fw->opened && fw->num_selected > 0) {
        return HERD_SUCCESS;
    }
    int rc = opal_mca_framework_select(fw);
    if (HERD_SUCCESS != rc) {
        opal_mca_framework_close(fw);
    }
    return rc;
}

void *opal_mca_framework_module(const opal_mca_framework_t *fw)
{
    return fw->num_selected > 0 ? fw->selected[0]->module : NULL;
}

/* Load the deferred component called name (its entry is appended to fw->components, which
 * may move: fw->selected is pointed at the moved entries again). NULL: none, or refused. */
static opal_mca_component_entry_t *load_by_name(opal_mca_framework_t *fw, const char *name)
{
    for (size_t i = 0; i < fw->num_deferred; ++i) {
        if (0 != strcmp(fw->deferred[i].name, name)) {
            continue;
        }
        const opal_mca_component_t **was = NULL;
        if (fw->num_selected > 0) {
            was = malloc(fw->num_selected * sizeof(*was));
            if (NULL == was) {
                return NULL;
            }
            for (size_t k = 0; k < fw->num_selected; ++k) {
                was[k] = fw->selected[k]->component;
            }
        }
        opal_mca_component_entry_t *loaded = NULL;
        /* no selection names: opened whatever the selection says, as the caller asked for it */
        int rc = load_one(fw, i, NULL, false, &loaded);
        const opal_mca_component_t *want = NULL != loaded ? loaded->component : NULL;
        for (size_t k = 0; k < fw->num_selected; ++k) {
            for (size_t j = 0; j < fw->num_components; ++j) {
                if (fw->components[j].component == was[k]) {
                    fw->selected[k] = &fw->components[j];
                }
            }
        }
        free(was);
        if (HERD_SUCCESS != rc || NULL == want) {
            return NULL;
        }
        for (size_t j = 0; j < fw->num_components; ++j) {
            if (fw->components[j].component == want) {
                return &fw->components[j];
            }
        }
        return NULL;
    }
    return NULL;
}

int opal_mca_framework_component_module(opal_mca_framework_t *fw, const char *name, void **module)
{
    if (!fw->opened || NULL == name) {
        return HERD_ERR_BAD_PARAM;
    }
    opal_mca_component_entry_t *entry = NULL;
    for (size_t i = 0; i < fw->num_components && NULL == entry; ++i) {
        if (0 == strcmp(fw->components[i].component->name, name)) {
            entry = &fw->components[i];
        }
    }
    if (NULL == entry) {
        entry = load_by_name(fw, name);
    }
    if (NULL == entry) {
        return HERD_ERR_NOT_FOUND;
    }
    if (entry->offered) {
        *module = entry->module;
        return HERD_SUCCESS;
    }
    if (!entry->opened) {
        open_entry(fw, entry);
    }
    /* one the selection did not keep is queried (and closed again if it declines) */
    if (!entry->opened || HERD_SUCCESS != query_entry(fw, entry)) {
        return HERD_ERR_NOT_FOUND;
    }
    *module = entry->module;
    return HERD_SUCCESS;
}

void opal_mca_framework_close(opal_mca_framework_t *fw)
{
    if (!fw->registered) {
        return;
    }
    for (size_t i = 0; i < fw->num_components; ++i) {
        close_entry(&fw->components[i]);
    }
    free(fw->selected);
    fw->selected = NULL;
    fw->num_selected = 0;
    opal_mca_components_release(fw);
    opal_output_close(fw->output);
    fw->output = -1;
    fw->opened = false;
    fw->registered = false;
    opal_mca_finalize();
}
