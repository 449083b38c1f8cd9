/* SPDX-License-Identifier: BSD-3-Clause */
/* Questions about file system paths that tools ask before they start work. */
#ifndef OPAL_UTIL_PATH_H
#define OPAL_UTIL_PATH_H

#include <stdbool.h>

#include "opal/visibility.h"

/* Whether a file could be written at path now: an existing file that is not a folder and that
 * we may write, or a new one in a folder that exists and that we may write into. When not,
 * *why says why in a few words (static storage or strerror's). For tools that write a file
 * when their work ends (a report, a contact file), to refuse a bad path before it starts. */
OPAL_EXPORT bool opal_path_writable(const char *path, const char **why);

#endif /* OPAL_UTIL_PATH_H */
