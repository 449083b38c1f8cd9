/* SPDX-License-Identifier: BSD-3-Clause */
/* Where herd's installed files are, for a tree installed where configure said or moved since
 * (install_dirs.h). */
#include "herd_config.h"

#include "opal/util/install_dirs.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#if !defined(HERD_PREFIX_DIR) || !defined(HERD_LIBDIR) || !defined(HERD_PKGLIBDIR) ||              \
    !defined(HERD_PKGDATADIR) || !defined(HERD_SYSCONFDIR)
#error "opal/Makefile.am passes the configured folders (HERD_PREFIX_DIR, HERD_LIBDIR, ...)"
#endif

static const char *const configured_dirs[OPAL_INSTALL_NUM_DIRS] = {
    [OPAL_INSTALL_PREFIX] = HERD_PREFIX_DIR,
    [OPAL_INSTALL_PKGLIBDIR] = HERD_PKGLIBDIR,
    [OPAL_INSTALL_PKGDATADIR] = HERD_PKGDATADIR,
    [OPAL_INSTALL_SYSCONFDIR] = HERD_SYSCONFDIR,
};

static pthread_once_t install_dirs_once = PTHREAD_ONCE_INIT;
static const char *install_dirs[OPAL_INSTALL_NUM_DIRS];

/* The part of a configured folder below the configured prefix ("lib/herd"), or NULL when the
 * folder is not under it. */
static const char *below_prefix(const char *dir)
{
    size_t length = strlen(HERD_PREFIX_DIR);

    if (0 == strncmp(dir, HERD_PREFIX_DIR, length) && '/' == dir[length]) {
        return dir + length + 1;
    }
    return NULL;
}

static bool is_folder(const char *path)
{
    struct stat st;

    return 0 == stat(path, &st) && S_ISDIR(st.st_mode);
}

/* The prefix of a moved tree: the folder this library was loaded from is <P>/<libdir below the
 * prefix>, P is not the configured prefix, and P has herd's data folder (a library copied out of
 * its tree alone, or one in a build tree, does not count). NULL otherwise. */
static char *moved_prefix(void)
{
    const char *libdir = below_prefix(HERD_LIBDIR);
    const char *datadir = below_prefix(HERD_PKGDATADIR);
    char resolved[PATH_MAX], configured[PATH_MAX], data[PATH_MAX + 64];
    Dl_info info;
    size_t length, libdir_length;
    char *slash;

    if (NULL == libdir || NULL == datadir ||
        0 == dladdr((void *) (uintptr_t) &opal_install_dir, &info) || NULL == info.dli_fname ||
        NULL == realpath(info.dli_fname, resolved) || NULL == (slash = strrchr(resolved, '/'))) {
        return NULL;
    }
    *slash = '\0';
    length = strlen(resolved);
    libdir_length = strlen(libdir);
    if (length <= libdir_length || '/' != resolved[length - libdir_length - 1] ||
        0 != strcmp(resolved + length - libdir_length, libdir)) {
        return NULL;
    }
    resolved[length - libdir_length - 1] = '\0';
    if (NULL != realpath(HERD_PREFIX_DIR, configured) && 0 == strcmp(configured, resolved)) {
        return NULL;
    }
    snprintf(data, sizeof(data), "%s/%s", resolved, datadir);
    return is_folder(data) ? strdup(resolved) : NULL;
}

static void install_dirs_compute(void)
{
    const char *variable = getenv("HERD_PREFIX");
    char *prefix = NULL;

    if (NULL != variable && '\0' != variable[0]) {
        prefix = strdup(variable);
        /* "/opt/herd/" and "/opt/herd" are the same prefix ("/" stays "/") */
        for (size_t n = NULL != prefix ? strlen(prefix) : 0; n > 1 && '/' == prefix[n - 1]; n--) {
            prefix[n - 1] = '\0';
        }
    } else {
        prefix = moved_prefix();
    }
    for (int i = 0; i < OPAL_INSTALL_NUM_DIRS; i++) {
        const char *below = below_prefix(configured_dirs[i]);
        char *dir = NULL;

        install_dirs[i] = configured_dirs[i];
        if (NULL == prefix) {
            continue;
        }
        if (OPAL_INSTALL_PREFIX == i) {
            install_dirs[i] = prefix;
        } else if (NULL != below && asprintf(&dir, "%s/%s", prefix, below) >= 0) {
            install_dirs[i] = dir; /* kept for the life of the process */
        }
    }
}

const char *opal_install_dir(opal_install_dir_t which)
{
    if (which < 0 || which >= OPAL_INSTALL_NUM_DIRS) {
        return "";
    }
    pthread_once(&install_dirs_once, install_dirs_compute);
    return install_dirs[which];
}
