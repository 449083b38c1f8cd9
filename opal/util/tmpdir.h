/* SPDX-License-Identifier: BSD-3-Clause */
/* herd's private folder for per-user files (topology cache, tool sockets): $TMPDIR/herd-<uid>. */
#ifndef OPAL_UTIL_TMPDIR_H
#define OPAL_UTIL_TMPDIR_H

#include <stddef.h>

#include "opal/status.h"
#include "opal/visibility.h"

/* The folder's path into dir (set only on success), created with mode 0700 when missing.
 * HERD_ERR_NOT_SUPPORTED when it exists but is not a folder of ours that only we may use
 * (someone else's folder must never hold our sockets or caches), HERD_ERR_IN_ERRNO when it
 * cannot be made, HERD_ERR_BAD_PARAM when the path does not fit in size. */
OPAL_EXPORT int opal_private_tmpdir(char *dir, size_t size);

#endif /* OPAL_UTIL_TMPDIR_H */
