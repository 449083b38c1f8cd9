/* SPDX-License-Identifier: BSD-3-Clause */
/* Questions about file system paths that tools ask before they start work. */
#include "herd_config.h"

#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/util/path.h"

bool opal_path_writable(const char *path, const char **why)
{
    struct stat st;
    const char *reason = NULL;
    if (NULL == path || '\0' == path[0]) {
        reason = "no file name";
    } else if (0 == stat(path, &st)) {
        if (S_ISDIR(st.st_mode)) {
            reason = "it is a folder";
        } else if (0 != access(path, W_OK)) {
            reason = strerror(errno);
        }
    } else if (ENOENT != errno) {
        reason = strerror(errno);
    } else {
        /* a new file: its folder must exist and take it (dirname may write to its argument) */
        char *copy = strdup(path);
        if (NULL == copy) {
            reason = strerror(ENOMEM);
        } else {
            const char *folder = dirname(copy);
            if (0 != stat(folder, &st)) {
                reason = ENOENT == errno ? "its folder does not exist" : strerror(errno);
            } else if (0 != access(folder, W_OK | X_OK)) {
                reason = strerror(errno);
            }
            free(copy);
        }
    }
    if (NULL != why) {
        *why = reason;
    }
    return NULL == reason;
}
