/* Shared between the MCA base files; not for frameworks or components. */
#ifndef OPAL_MCA_BASE_INTERNAL_H
#define OPAL_MCA_BASE_INTERNAL_H

#include "opal/mca/mca.h"

/* Fill fw->components from the static table and the DSOs on the search path, sorted by name. */
int opal_mca_components_find(opal_mca_framework_t *fw);
/* Unload and forget every found component (after they are closed). */
void opal_mca_components_release(opal_mca_framework_t *fw);
/* Whether refused DSOs are reported (variable mca_base_component_show_load_errors). */
bool opal_mca_show_load_errors(void);
/* Whether DSOs are unloaded when their framework closes (mca_base_component_unload). */
bool opal_mca_unload_components(void);

#endif /* OPAL_MCA_BASE_INTERNAL_H */
