/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared between the MCA base files; not for frameworks or components. */
#ifndef OPAL_MCA_BASE_INTERNAL_H
#define OPAL_MCA_BASE_INTERNAL_H

#include "opal/mca/mca.h"

/* Fill fw->components from the static table and the DSOs on the search path, sorted by name. */
int opal_mca_components_find(opal_mca_framework_t *fw);
/* A selection ("a,b", "^a,b", NULL or "") as *names (NULL: every component) and *exclude; one
 * that does not parse keeps every component (the framework's open reports it). Free *names
 * with opal_argv_free. */
void opal_mca_selection_names(const char *selection, char ***names, bool *exclude);
/* Whether that selection leaves component name out. */
bool opal_mca_selection_left_out(char **names, bool exclude, const char *name);
/* Sort fw->components by name again (after a deferred component joined them). */
void opal_mca_components_sort(opal_mca_framework_t *fw);
/* Load fw->deferred[index] and forget it as deferred. *loaded is its new entry at the end of
 * fw->components (not sorted yet, variables not registered), or NULL when the DSO was refused
 * (reported as at discovery). */
int opal_mca_components_load_deferred(opal_mca_framework_t *fw, size_t index,
                                      opal_mca_component_entry_t **loaded);
/* Unload and forget every found component (after they are closed) and every deferred one. */
void opal_mca_components_release(opal_mca_framework_t *fw);
/* Whether refused DSOs are reported (variable mca_base_component_show_load_errors). */
bool opal_mca_show_load_errors(void);
/* Whether frameworks with hints defer loading (mca_base_component_defer, opal_mca_set_defer). */
bool opal_mca_defer_enabled(void);
/* Whether DSOs are unloaded when their framework closes (mca_base_component_unload). */
bool opal_mca_unload_components(void);

#endif /* OPAL_MCA_BASE_INTERNAL_H */
