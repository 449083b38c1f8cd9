/* SPDX-License-Identifier: BSD-3-Clause */
/* Where herd's installed files are: the folders configure chose, or the same folders under
 * another prefix when the installed tree was moved (found from where libherd-opal or libherd
 * was loaded) or when HERD_PREFIX names one, as Open MPI's OPAL_PREFIX does. */
#ifndef OPAL_UTIL_INSTALL_DIRS_H
#define OPAL_UTIL_INSTALL_DIRS_H

#include "opal/visibility.h"

typedef enum {
    OPAL_INSTALL_PREFIX,     /* the prefix in effect */
    OPAL_INSTALL_PKGLIBDIR,  /* DSO components */
    OPAL_INSTALL_PKGDATADIR, /* help catalogs */
    OPAL_INSTALL_SYSCONFDIR, /* herd-mca-params.conf */
    OPAL_INSTALL_NUM_DIRS
} opal_install_dir_t;

/* The folder, computed once per process: HERD_PREFIX when set and not empty; else the prefix
 * this library sits under, when that is not the configured one (the tree was moved) and holds
 * herd's data folder; else the configured folder. A configured folder outside the prefix
 * (sysconfdir /etc for prefix /usr) never moves. Never NULL. */
OPAL_EXPORT const char *opal_install_dir(opal_install_dir_t which);

#endif /* OPAL_UTIL_INSTALL_DIRS_H */
