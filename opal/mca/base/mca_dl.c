/* SPDX-License-Identifier: BSD-3-Clause */
/* The dynamic loader: libltdl, initialised on first use and shut down with the MCA core. */
#include "herd_config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ltdl.h>

#include "opal/mca/base/mca_dl.h"
#include "opal/util/argv.h"

static pthread_once_t dl_once = PTHREAD_ONCE_INIT;
static int dl_init_status = HERD_SUCCESS;

static void dl_init(void)
{
    if (0 != lt_dlinit()) {
        dl_init_status = HERD_ERROR;
    }
}

static char *dl_error_copy(const char *fallback)
{
    const char *msg = lt_dlerror();
    return strdup(NULL != msg ? msg : fallback);
}

/* The shared object a module path names: path.so where it is installed (as libtool installs a
 * module, beside its .la, whose dlname names that same file: no need to read it), else the
 * dlname of its .la (uninstalled modules live in .libs beside it). False when there is none to
 * check. */
static bool dl_shared_object(const char *path, char *so, size_t size)
{
    char la[4096], line[1024];
    char dlname[512] = "";
    snprintf(so, size, "%s.so", path);
    if (0 == access(so, F_OK)) {
        return true;
    }
    snprintf(la, sizeof(la), "%s.la", path);
    FILE *f = fopen(la, "r");
    if (NULL != f) {
        while (NULL != fgets(line, sizeof(line), f)) {
            if (1 == sscanf(line, "dlname='%511[^']'", dlname)) {
                break;
            }
        }
        fclose(f);
    }
    const char *slash = strrchr(path, '/');
    int dir_len = (NULL != slash) ? (int) (slash - path) : 1;
    const char *dir = (NULL != slash) ? path : ".";
    if ('\0' != dlname[0]) {
        snprintf(so, size, "%.*s/.libs/%s", dir_len, dir, dlname);
        if (0 != access(so, F_OK)) {
            snprintf(so, size, "%.*s/%s", dir_len, dir, dlname);
        }
    } else {
        snprintf(so, size, "%s.so", path);
    }
    return 0 == access(so, F_OK);
}

static int dl_open(const char *path, void **handle, char **filename, char **error);

/* Signals a library may take over when it is loaded (libinfinipath, under libfabric, installs
 * handlers that exit(1) on SIGTERM): the process's own handling of them stays. */
static const int dl_signals[] = {SIGINT, SIGTERM, SIGHUP,  SIGQUIT, SIGSEGV,
                                 SIGBUS, SIGILL,  SIGABRT, SIGFPE,  SIGCHLD};
#define DL_NSIGNALS (sizeof(dl_signals) / sizeof(dl_signals[0]))

int opal_mca_dl_open(const char *path, void **handle, char **filename, char **error)
{
    struct sigaction saved[DL_NSIGNALS];
    for (size_t i = 0; i < DL_NSIGNALS; ++i) {
        (void) sigaction(dl_signals[i], NULL, &saved[i]);
    }
    int rc = dl_open(path, handle, filename, error);
    for (size_t i = 0; i < DL_NSIGNALS; ++i) {
        (void) sigaction(dl_signals[i], &saved[i], NULL);
    }
    return rc;
}

static int dl_open(const char *path, void **handle, char **filename, char **error)
{
    char so[4096];
    void *resolved = NULL;
    pthread_once(&dl_once, dl_init);
    if (HERD_SUCCESS != dl_init_status) {
        *error = strdup("libltdl failed to initialise");
        return HERD_ERROR;
    }
    /* libltdl binds lazily: a component with an undefined function would load and then kill
     * the process when called. Resolve every symbol now, and if that fails, report dlopen's
     * own reason (libltdl would only say "file not found"). The object stays loaded while
     * libltdl opens it, so that second open costs nothing. */
    if (dl_shared_object(path, so, sizeof(so))) {
        resolved = dlopen(so, RTLD_NOW | RTLD_LOCAL);
        if (NULL == resolved) {
            const char *msg = dlerror();
            *error = strdup(NULL != msg ? msg : "dlopen failed");
            return HERD_ERR_NOT_FOUND;
        }
    }
    lt_dladvise advise;
    if (0 != lt_dladvise_init(&advise)) {
        *error = dl_error_copy("lt_dladvise_init failed");
        goto err_resolved;
    }
    /* Keep symbols local to the module. The shared object found above is opened as it is
     * (reading its .la again would cost every component another parse); without one, try the
     * extensions libtool knows (.la first). */
    if (NULL == resolved) {
        lt_dladvise_ext(&advise);
    }
    lt_dladvise_local(&advise);
    lt_dlhandle h = lt_dlopenadvise(NULL != resolved ? so : path, advise);
    lt_dladvise_destroy(&advise);
    if (NULL == h) {
        *error = dl_error_copy("unknown dynamic loader error");
        goto err_resolved;
    }
    const lt_dlinfo *info = lt_dlgetinfo(h);
    *filename = strdup(NULL != info && NULL != info->filename ? info->filename : path);
    if (NULL == *filename) {
        lt_dlclose(h);
        *error = strdup("out of memory");
        goto err_resolved;
    }
    if (NULL != resolved) {
        dlclose(resolved);
    }
    *handle = h;
    return HERD_SUCCESS;

err_resolved:
    if (NULL != resolved) {
        dlclose(resolved);
    }
    return HERD_ERR_NOT_FOUND;
}

int opal_mca_dl_sym(void *handle, const char *symbol, void **address, char **error)
{
    void *addr = lt_dlsym((lt_dlhandle) handle, symbol);
    if (NULL == addr) {
        *error = dl_error_copy("symbol not found");
        return HERD_ERR_NOT_FOUND;
    }
    *address = addr;
    return HERD_SUCCESS;
}

int opal_mca_dl_close(void *handle)
{
    return 0 == lt_dlclose((lt_dlhandle) handle) ? HERD_SUCCESS : HERD_ERROR;
}

/* What the folders read so far held: every framework's open lists the same folder again (eight
 * times in a launch). A folder whose inode or modification time changed is read
 * again. Kept for the life of the process. */
typedef struct {
    char *folder;
    dev_t dev;
    ino_t ino;
    struct timespec mtime;
    char **paths; /* as lt_dlforeachfile gave them (an argv; NULL: none) */
} dl_listing_t;

static pthread_mutex_t dl_listing_lock = PTHREAD_MUTEX_INITIALIZER;
static dl_listing_t *dl_listings;
static size_t dl_num_listings;

typedef struct {
    char **paths;
    bool failed;
} dl_collect_t;

static int dl_collect(const char *path, void *data)
{
    dl_collect_t *c = data;
    if (HERD_SUCCESS != opal_argv_append(&c->paths, path)) {
        c->failed = true;
        return 1;
    }
    return 0;
}

/* A copy of folder's listing (caller frees with opal_argv_free; NULL: empty), read from the
 * folder unless it is unchanged since the last time; HERD_ERR_OUT_OF_RESOURCE. */
static int dl_listing(const char *folder, const struct stat *st, char ***out)
{
    dl_listing_t *l = NULL;
    int rc = HERD_SUCCESS;

    pthread_mutex_lock(&dl_listing_lock);
    for (size_t i = 0; i < dl_num_listings && NULL == l; ++i) {
        if (0 == strcmp(dl_listings[i].folder, folder)) {
            l = &dl_listings[i];
        }
    }
    if (NULL == l || l->dev != st->st_dev || l->ino != st->st_ino ||
        l->mtime.tv_sec != st->st_mtim.tv_sec || l->mtime.tv_nsec != st->st_mtim.tv_nsec) {
        dl_collect_t c = {0};
        lt_dlforeachfile(folder, dl_collect, &c);
        if (c.failed) {
            opal_argv_free(c.paths);
            rc = HERD_ERR_OUT_OF_RESOURCE;
            goto out;
        }
        if (NULL == l) {
            dl_listing_t *grown = realloc(dl_listings, (dl_num_listings + 1) * sizeof(*grown));
            char *name = strdup(folder);
            if (NULL == grown || NULL == name) {
                if (NULL != grown) {
                    dl_listings = grown;
                }
                free(name);
                opal_argv_free(c.paths);
                rc = HERD_ERR_OUT_OF_RESOURCE;
                goto out;
            }
            dl_listings = grown;
            l = &dl_listings[dl_num_listings++];
            *l = (dl_listing_t){.folder = name};
        }
        opal_argv_free(l->paths);
        l->paths = c.paths;
        l->dev = st->st_dev;
        l->ino = st->st_ino;
        l->mtime = st->st_mtim;
    }
    *out = opal_argv_copy(l->paths);
    if (NULL != l->paths && NULL == *out) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
    }
out:
    pthread_mutex_unlock(&dl_listing_lock);
    return rc;
}

int opal_mca_dl_foreach(const char *folder, int (*fn)(const char *path, void *data), void *data)
{
    struct stat st;
    char **paths = NULL;
    pthread_once(&dl_once, dl_init);
    if (HERD_SUCCESS != dl_init_status) {
        return HERD_ERROR;
    }
    /* lt_dlforeachfile treats a missing folder as "nothing there"; check first so a typo in
     * the search path is not mistaken for a loader failure. */
    if (0 != stat(folder, &st) || !S_ISDIR(st.st_mode)) {
        return HERD_SUCCESS;
    }
    int rc = dl_listing(folder, &st, &paths);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    /* fn runs on a copy, outside the lock: it may look at folders itself */
    for (size_t i = 0; NULL != paths && NULL != paths[i]; ++i) {
        if (0 != fn(paths[i], data)) {
            break;
        }
    }
    opal_argv_free(paths);
    return HERD_SUCCESS;
}
