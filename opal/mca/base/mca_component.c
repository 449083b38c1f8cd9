/* SPDX-License-Identifier: BSD-3-Clause */
/* Finding components: the configure-generated static table of a framework, then DSOs named
 * herd_<fw>_<comp> on the search path, each checked before it is trusted.
 * Built a second time with OPAL_MCA_STATIC_ONLY for libherd, which hides its copy of the MCA
 * core from the application: there only the components linked in exist (a DSO could not call
 * the hidden functions), and libltdl is not needed. */
#include "herd_config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_internal.h"
#ifndef OPAL_MCA_STATIC_ONLY
#include "opal/mca/base/mca_dl.h"
#endif
#include "opal/mca/base/mca_var.h"
#include "opal/util/argv.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"

static const char *help_file = "help-mca-base.txt";

#ifndef OPAL_MCA_STATIC_ONLY
typedef struct {
    const char *prefix; /* "herd_<fw>_" */
    char **paths;       /* DSO candidates found in one folder, in order */
} find_state_t;

static bool valid_component_name(const char *name)
{
    size_t len = strlen(name);
    if (0 == len || len > OPAL_MCA_MAX_NAME_LEN) {
        return false;
    }
    for (size_t i = 0; i < len; ++i) {
        if (!islower((unsigned char) name[i]) && !isdigit((unsigned char) name[i]) &&
            '_' != name[i]) {
            return false;
        }
    }
    return true;
}

static opal_mca_component_entry_t *find_entry(opal_mca_framework_t *fw, const char *name)
{
    for (size_t i = 0; i < fw->num_components; ++i) {
        if (0 == strcmp(fw->components[i].component->name, name)) {
            return &fw->components[i];
        }
    }
    return NULL;
}
#endif

static int add_entry(opal_mca_framework_t *fw, const opal_mca_component_t *component,
                     char *filename, void *dl_handle)
{
    opal_mca_component_entry_t *grown =
        realloc(fw->components, (fw->num_components + 1) * sizeof(*grown));
    if (NULL == grown) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    fw->components = grown;
    grown[fw->num_components++] = (opal_mca_component_entry_t){
        .component = component,
        .is_static = (NULL == dl_handle),
        .filename = filename,
        .dl_handle = dl_handle,
    };
    return HERD_SUCCESS;
}

/* Whether a component struct belongs to this framework (why not goes to why). Checks the
 * ABI stamp first: it is the only field whose position every version agrees on. */
static int check_component(const opal_mca_framework_t *fw, const opal_mca_component_t *c,
                           const char *expected_name, char *why, size_t why_len)
{
    if (OPAL_MCA_ABI_VERSION != c->mca_abi_version) {
        snprintf(why, why_len,
                 "it was built for MCA ABI version %u, but this herd uses version %u; rebuild "
                 "the component against this herd",
                 c->mca_abi_version, OPAL_MCA_ABI_VERSION);
        return HERD_ERR_VERSION_MISMATCH;
    }
    if (NULL == c->framework || 0 != strcmp(c->framework, fw->name)) {
        snprintf(why, why_len, "it says it belongs to framework '%s', not '%s'",
                 NULL != c->framework ? c->framework : "(none)", fw->name);
        return HERD_ERR_BAD_PARAM;
    }
    if (fw->interface_version != c->interface_version) {
        snprintf(why, why_len,
                 "it was built for %s interface version %u, but this herd's %s framework has "
                 "version %u; rebuild the component against this herd",
                 fw->name, c->interface_version, fw->name, fw->interface_version);
        return HERD_ERR_VERSION_MISMATCH;
    }
    if (NULL == c->name || 0 != strcmp(c->name, expected_name)) {
        snprintf(why, why_len, "its file name says component '%s' but it calls itself '%s'",
                 expected_name, NULL != c->name ? c->name : "(none)");
        return HERD_ERR_BAD_PARAM;
    }
    return HERD_SUCCESS;
}

static void report_refused(const opal_mca_framework_t *fw, const char *path, const char *why)
{
    if (opal_mca_show_load_errors()) {
        opal_show_help(help_file, "component-refused", true, fw->name, path, why);
    } else {
        opal_output_verbose(10, fw->output, "refused %s: %s", path, why);
    }
}

#ifndef OPAL_MCA_STATIC_ONLY
static int collect_path(const char *path, void *data)
{
    find_state_t *state = data;
    const char *base = strrchr(path, '/');
    base = (NULL != base) ? base + 1 : path;
    if (0 == strncmp(base, state->prefix, strlen(state->prefix))) {
        opal_argv_append(&state->paths, path);
    }
    return 0;
}

/* Whether a selection ("a,b" or "^a,b"; NULL or "" selects all) leaves component name out. A
 * selection that does not parse leaves nothing out: the framework's open reports it. */
static bool selection_leaves_out(const char *selection, const char *name)
{
    bool exclude = false;
    char **names = NULL;
    opal_mca_selection_names(selection, &names, &exclude);
    bool out = opal_mca_selection_left_out(names, exclude, name);
    opal_argv_free(names);
    return out;
}

static const opal_mca_component_hint_t *find_hint(const opal_mca_framework_t *fw, const char *name)
{
    for (const opal_mca_component_hint_t *h = fw->hints; NULL != h && NULL != h->name; ++h) {
        if (0 == strcmp(h->name, name)) {
            return h;
        }
    }
    return NULL;
}

static int add_deferred(opal_mca_framework_t *fw, const char *name, const char *path,
                        const opal_mca_component_hint_t *hint)
{
    opal_mca_deferred_t *grown = realloc(fw->deferred, (fw->num_deferred + 1) * sizeof(*grown));
    if (NULL == grown) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    fw->deferred = grown;
    opal_mca_deferred_t *d = &grown[fw->num_deferred];
    d->name = strdup(name);
    d->path = strdup(path);
    d->hint = hint;
    if (NULL == d->name || NULL == d->path) {
        free(d->name);
        free(d->path);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    fw->num_deferred++;
    opal_output_verbose(10, fw->output,
                        "found component %s in %s: loaded only when it could be selected", name,
                        path);
    return HERD_SUCCESS;
}

/* Load one DSO candidate (path without extension) and add it if it passes every check; one
 * configure gave a hint for is only noted when defer is set. */
static int load_dso(opal_mca_framework_t *fw, const char *path, const char *prefix, bool defer)
{
    char why[512];
    char *error = NULL;
    void *handle = NULL;
    void *address = NULL;
    char *filename = NULL;
    const char *base = strrchr(path, '/');
    const char *name = ((NULL != base) ? base + 1 : path) + strlen(prefix);
    int rc;

    if (!valid_component_name(name)) {
        opal_output_verbose(10, fw->output, "ignoring %s: not a valid component name", path);
        return HERD_SUCCESS;
    }
    if (fw->load_selected_only && selection_leaves_out(fw->selection, name)) {
        opal_output_verbose(10, fw->output, "not loading %s: left out by the selection %s", path,
                            fw->selection);
        return HERD_SUCCESS;
    }
    opal_mca_component_entry_t *existing = find_entry(fw, name);
    if (NULL != existing) {
        /* First found wins: the static copy, else the earlier folder on the search path. */
        opal_output_verbose(10, fw->output, "ignoring %s: component %s already found in %s", path,
                            name, existing->is_static ? "the library" : existing->filename);
        return HERD_SUCCESS;
    }
    for (size_t i = 0; i < fw->num_deferred; ++i) {
        if (0 == strcmp(fw->deferred[i].name, name)) {
            opal_output_verbose(10, fw->output, "ignoring %s: component %s already found in %s",
                                path, name, fw->deferred[i].path);
            return HERD_SUCCESS;
        }
    }
    const opal_mca_component_hint_t *hint = defer ? find_hint(fw, name) : NULL;
    if (NULL != hint) {
        return add_deferred(fw, name, path, hint);
    }
    rc = opal_mca_dl_open(path, &handle, &filename, &error);
    if (HERD_SUCCESS != rc) {
        snprintf(why, sizeof(why), "the dynamic loader said: %s", error);
        report_refused(fw, path, why);
        free(error);
        return HERD_SUCCESS;
    }
    char symbol[3 * OPAL_MCA_MAX_NAME_LEN + 16];
    snprintf(symbol, sizeof(symbol), "%s_%s_%s_component", fw->layer, fw->name, name);
    rc = opal_mca_dl_sym(handle, symbol, &address, &error);
    if (HERD_SUCCESS != rc) {
        snprintf(why, sizeof(why),
                 "it does not define the symbol %s (is it a herd component of framework %s?); "
                 "the dynamic loader said: %s",
                 symbol, fw->name, error);
        free(error);
        goto err_refused;
    }
    rc = check_component(fw, address, name, why, sizeof(why));
    if (HERD_SUCCESS != rc) {
        goto err_refused;
    }
    if (HERD_SUCCESS != add_entry(fw, address, filename, handle)) {
        free(filename);
        opal_mca_dl_close(handle);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    opal_output_verbose(10, fw->output, "found component %s in %s", name, filename);
    return HERD_SUCCESS;

err_refused:
    report_refused(fw, filename, why);
    free(filename);
    opal_mca_dl_close(handle);
    return HERD_SUCCESS;
}

#endif /* OPAL_MCA_STATIC_ONLY */

static int compare_entries(const void *a, const void *b)
{
    const opal_mca_component_entry_t *ea = a, *eb = b;
    return strcmp(ea->component->name, eb->component->name);
}

int opal_mca_components_find(opal_mca_framework_t *fw)
{
    char why[512];
    int rc = HERD_SUCCESS;

    for (size_t i = 0; NULL != fw->static_components && NULL != fw->static_components[i]; ++i) {
        const opal_mca_component_t *c = fw->static_components[i];
        /* OPAL_MCA_COMPONENT always names it; a NULL name is refused by the check */
        const char *name = NULL != c->name ? c->name : "(none)";
        if (HERD_SUCCESS != check_component(fw, c, name, why, sizeof(why))) {
            report_refused(fw, name, why);
            continue;
        }
        rc = add_entry(fw, c, NULL, NULL);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
        opal_output_verbose(10, fw->output, "found static component %s", c->name);
    }

#ifndef OPAL_MCA_STATIC_ONLY
    char prefix[OPAL_MCA_MAX_NAME_LEN + 8];
    snprintf(prefix, sizeof(prefix), "herd_%s_", fw->name);
    bool defer = opal_mca_defer_enabled() && NULL != fw->hints;
    char **folders = opal_argv_split(opal_mca_component_path(), ':');
    if (NULL == folders) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (size_t f = 0; NULL != folders[f] && HERD_SUCCESS == rc; ++f) {
        find_state_t state = {.prefix = prefix, .paths = NULL};
        opal_mca_dl_foreach(folders[f], collect_path, &state);
        for (size_t p = 0; NULL != state.paths && NULL != state.paths[p]; ++p) {
            rc = load_dso(fw, state.paths[p], prefix, defer);
            if (HERD_SUCCESS != rc) {
                break;
            }
        }
        opal_argv_free(state.paths);
    }
    opal_argv_free(folders);
#endif
    opal_mca_components_sort(fw);
    return rc;
}

void opal_mca_components_sort(opal_mca_framework_t *fw)
{
    if (fw->num_components > 1) {
        qsort(fw->components, fw->num_components, sizeof(*fw->components), compare_entries);
    }
}

int opal_mca_components_load_deferred(opal_mca_framework_t *fw, size_t index,
                                      opal_mca_component_entry_t **loaded)
{
    *loaded = NULL;
#ifdef OPAL_MCA_STATIC_ONLY
    (void) fw;
    (void) index;
    return HERD_ERR_NOT_FOUND;
#else
    opal_mca_deferred_t d = fw->deferred[index];
    memmove(&fw->deferred[index], &fw->deferred[index + 1],
            (fw->num_deferred - index - 1) * sizeof(*fw->deferred));
    fw->num_deferred--;
    char prefix[OPAL_MCA_MAX_NAME_LEN + 8];
    snprintf(prefix, sizeof(prefix), "herd_%s_", fw->name);
    size_t before = fw->num_components;
    int rc = load_dso(fw, d.path, prefix, false);
    free(d.name);
    free(d.path);
    if (HERD_SUCCESS == rc && fw->num_components > before) {
        *loaded = &fw->components[fw->num_components - 1];
    }
    return rc;
#endif
}

void opal_mca_components_release(opal_mca_framework_t *fw)
{
    for (size_t i = 0; i < fw->num_components; ++i) {
        if (NULL != fw->components[i].dl_handle) {
            /* the framework no longer owns its variables' storage, which may be unmapped */
            opal_mca_var_release_component(fw->components[i].component);
#ifndef OPAL_MCA_STATIC_ONLY
            /* Kept loaded by default: opening the framework again finds the same module. */
            if (opal_mca_unload_components()) {
                opal_mca_dl_close(fw->components[i].dl_handle);
            }
#endif
        }
        free(fw->components[i].filename);
    }
    free(fw->components);
    fw->components = NULL;
    fw->num_components = 0;
    for (size_t i = 0; i < fw->num_deferred; ++i) {
        free(fw->deferred[i].name);
        free(fw->deferred[i].path);
    }
    free(fw->deferred);
    fw->deferred = NULL;
    fw->num_deferred = 0;
}
