/* The dynamic loader: libltdl, initialised on first use and shut down with the MCA core. */
#include "herd_config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ltdl.h>

#include "opal/mca/base/mca_dl.h"

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

/* The shared object a module path names: from the dlname of its .la (uninstalled modules
 * live in .libs beside it), else path.so. False when there is none to check. */
static bool dl_shared_object(const char *path, char *so, size_t size)
{
    char la[4096], line[1024];
    char dlname[512] = "";
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

int opal_mca_dl_open(const char *path, void **handle, char **filename, char **error)
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

int opal_mca_dl_foreach(const char *folder, int (*fn)(const char *path, void *data), void *data)
{
    struct stat st;
    pthread_once(&dl_once, dl_init);
    if (HERD_SUCCESS != dl_init_status) {
        return HERD_ERROR;
    }
    /* lt_dlforeachfile treats a missing folder as "nothing there"; check first so a typo in
     * the search path is not mistaken for a loader failure. */
    if (0 != stat(folder, &st) || !S_ISDIR(st.st_mode)) {
        return HERD_SUCCESS;
    }
    lt_dlforeachfile(folder, fn, data);
    return HERD_SUCCESS;
}
