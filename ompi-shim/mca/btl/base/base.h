/* SPDX-License-Identifier: BSD-3-Clause */
/* What the btl base shares between its files (not for components). */
#ifndef OMPI_MCA_BTL_BASE_BASE_H
#define OMPI_MCA_BTL_BASE_BASE_H

#include <stdbool.h>

/* A proc's btl_choice is a uint8_t index into the started modules. */
#define OMPI_BTL_BASE_MAX_MODULES 16

/* btl_base_dso_path: where fronts look for their transport's DSO (NULL or "": the component
 * path). */
extern char *ompi_btl_base_dso_path;

/* Whether a module of that name started (it is among the modules messages may use). */
bool ompi_btl_base_started(const char *name);

/* Drop every unexpected message and forget the posted receives (framework close). */
void ompi_btl_base_match_release(void);

#endif /* OMPI_MCA_BTL_BASE_BASE_H */
