/* The dynamic loader: libltdl, initialised on first use and shut down with the MCA core. */
#include "herd_config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

int opal_mca_dl_open(const char *path, void **handle, char **filename, char **error)
{
    pthread_once(&dl_once, dl_init);
    if (HERD_SUCCESS != dl_init_status) {
        *error = strdup("libltdl failed to initialise");
        return HERD_ERROR;
    }
    lt_dladvise advise;
    if (0 != lt_dladvise_init(&advise)) {
        *error = dl_error_copy("lt_dladvise_init failed");
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    /* Try the extensions libtool knows (.la first), and keep symbols local to the module. */
    lt_dladvise_ext(&advise);
    lt_dladvise_local(&advise);
    lt_dlhandle h = lt_dlopenadvise(path, advise);
    lt_dladvise_destroy(&advise);
    if (NULL == h) {
        *error = dl_error_copy("unknown dynamic loader error");
        return HERD_ERR_NOT_FOUND;
    }
    const lt_dlinfo *info = lt_dlgetinfo(h);
    *filename = strdup(NULL != info && NULL != info->filename ? info->filename : path);
    if (NULL == *filename) {
        lt_dlclose(h);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    *handle = h;
    return HERD_SUCCESS;
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
