/* SPDX-License-Identifier: BSD-3-Clause */
/* libltdl behind four functions: the only file that talks to the dynamic loader. */
#ifndef OPAL_MCA_DL_H
#define OPAL_MCA_DL_H

#include "opal/status.h"

/* Open a module by path, with or without extension (.la is preferred, so uninstalled modules
 * load from the build tree). Every symbol is resolved now: a module that needs one nobody
 * defines is refused with dlopen's reason instead of failing later when called. On success
 * *filename is the file actually loaded (caller frees); on failure *error is the loader's own
 * message (caller frees). */
int opal_mca_dl_open(const char *path, void **handle, char **filename, char **error);
/* Look up symbol; on failure *error is the loader's message (caller frees). */
int opal_mca_dl_sym(void *handle, const char *symbol, void **address, char **error);
int opal_mca_dl_close(void *handle);
/* Call fn(path-without-extension, data) for each file in folder (duplicates folded: a.la and
 * a.so are one). fn returns non-zero to stop. A missing folder is not an error. */
int opal_mca_dl_foreach(const char *folder, int (*fn)(const char *path, void *data), void *data);

#endif /* OPAL_MCA_DL_H */
