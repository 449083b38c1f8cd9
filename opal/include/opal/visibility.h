/* SPDX-License-Identifier: BSD-3-Clause */
/* Symbol visibility: herd's libraries are built with -fvisibility=hidden and export only what is
 * marked here, so nothing internal can clash with Open MPI or MPICH libraries in one process. */
#ifndef OPAL_VISIBILITY_H
#define OPAL_VISIBILITY_H

#if defined(__GNUC__)
#define OPAL_EXPORT __attribute__((visibility("default")))
#else
#define OPAL_EXPORT
#endif

/* The component symbol of a DSO must be visible for the loader to find it with dlsym. */
#define OPAL_MODULE_EXPORT OPAL_EXPORT

#endif /* OPAL_VISIBILITY_H */
