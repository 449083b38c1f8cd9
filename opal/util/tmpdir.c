/* SPDX-License-Identifier: BSD-3-Clause */
/* herd's private per-user folder (opal/util/tmpdir.h). */
#include "herd_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/util/tmpdir.h"

int opal_private_tmpdir(char *dir, size_t size)
{
    char path[4096];
    struct stat st;
    const char *tmp = getenv("TMPDIR");
    if (NULL == tmp || '/' != tmp[0]) {
        tmp = "/tmp";
    }
    int len = snprintf(path, sizeof(path), "%s/herd-%u", tmp, (unsigned) getuid());
    if (len < 0 || (size_t) len >= size || (size_t) len >= sizeof(path)) {
        return HERD_ERR_BAD_PARAM;
    }
    if (0 != mkdir(path, 0700) && EEXIST != errno) {
        return HERD_ERR_IN_ERRNO;
    }
    if (0 != lstat(path, &st) || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
        0 != (st.st_mode & 077)) {
        errno = EPERM;
        return HERD_ERR_NOT_SUPPORTED;
    }
    snprintf(dir, size, "%s", path);
    return HERD_SUCCESS;
}
