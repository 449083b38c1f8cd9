/* SPDX-License-Identifier: BSD-3-Clause */
/* Loading a transport's DSO for its front component (btl.h, "Transports in their own DSO").
 * Plain dlopen, not libltdl: libherd carries only the static half of the MCA core, and this is
 * the one place it loads code. */
#include "herd_config.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ompi-shim/mca/btl/base/base.h"
#include "ompi-shim/mca/btl/btl.h"
#include "ompi-shim/proc/proc.h"
#include "opal/mca/mca.h"
#include "opal/util/argv.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"

static void dso_verbose(int level, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    opal_output_vverbose(level, ompi_btl_base_framework.output, format, ap);
    va_end(ap);
}

static int dso_show_help(const char *file, const char *topic, int want_error_header, ...)
{
    va_list ap;
    va_start(ap, want_error_header);
    int rc = opal_show_vhelp(file, topic, 0 != want_error_header, ap);
    va_end(ap);
    return rc;
}

/* One table per front (params differ), kept for the life of the process: the DSO keeps the
 * pointer. Fronts are few (ofi, ucx), so a small fixed array. */
#define DSO_MAX_FRONTS 4
static ompi_btl_dso_services_t dso_services[DSO_MAX_FRONTS];
static size_t dso_num_services;

/* Where fronts look: btl_base_dso_path, else the MCA component path; what="btl_base_dso_path"
 * or "the component path", for messages. */
static const char *dso_search_path(const char **what)
{
    if (NULL != ompi_btl_base_dso_path && '\0' != ompi_btl_base_dso_path[0]) {
        *what = "btl_base_dso_path";
        return ompi_btl_base_dso_path;
    }
    *what = "the component path";
    return opal_mca_component_path();
}

/* The path of "herd-btl-<name>.so" in the first folder of the search path holding it (also in a
 * folder's .libs, where an uninstalled build keeps it); false when none has it. */
static bool dso_find(const char *name, char *path, size_t size)
{
    const char *what;
    char **folders = opal_argv_split(dso_search_path(&what), ':');
    bool found = false;
    for (size_t f = 0; NULL != folders && NULL != folders[f] && !found; ++f) {
        if ('\0' == folders[f][0]) {
            continue;
        }
        snprintf(path, size, "%s/herd-btl-%s.so", folders[f], name);
        found = (0 == access(path, R_OK));
        if (!found) {
            snprintf(path, size, "%s/.libs/herd-btl-%s.so", folders[f], name);
            found = (0 == access(path, R_OK));
        }
    }
    opal_argv_free(folders);
    return found;
}

/* Whether the btl selection names this transport ("self,ucx"), not only leaves it in ("^tcp"
 * or no selection): split as the MCA core splits it. */
static bool dso_named(const char *name)
{
    bool exclude = false, mixed = false;
    char **names = NULL;
    if (HERD_SUCCESS !=
        opal_mca_split_selection(ompi_btl_base_framework.selection, &exclude, &names, &mixed)) {
        return false;
    }
    bool named = !exclude && !mixed && NULL != names && opal_argv_find(names, name) >= 0;
    opal_argv_free(names);
    return named;
}

int ompi_btl_base_dso_front_init(ompi_btl_module_t *front, const void *params,
                                 const ompi_btl_rte_t *rte, ompi_btl_deliver_fn_t deliver)
{
    int output = ompi_btl_base_framework.output;
    char path[4096], symbol[OPAL_MCA_MAX_NAME_LEN + 32], why[512] = "";

    /* Every process of the job on this node and sm started: sm reaches them all, faster, so
     * loading libfabric or UCX (a large share of a process's start-up, in every process)
     * would buy nothing. Named in the
     * selection, it is loaded all the same (a user comparing transports). */
    if (rte->local_size >= rte->job_size && ompi_btl_base_started("sm") &&
        !dso_named(front->name)) {
        opal_output_verbose(10, output,
                            "rank %u: %s not loaded: every process of the job is on this node, "
                            "where sm reaches them (--mca btl self,%s to use it anyway)",
                            rte->my_rank, front->name, front->name);
        return HERD_ERR_NOT_AVAILABLE;
    }

    if (!dso_find(front->name, path, sizeof(path))) {
        const char *what;
        const char *where = dso_search_path(&what);
        opal_output_verbose(1, output,
                            "rank %u: the %s transport's library herd-btl-%s.so is in no folder "
                            "of %s (%s): install it there, or leave %s out with --mca btl ^%s",
                            rte->my_rank, front->name, front->name, what, where, front->name,
                            front->name);
        return HERD_ERR_NOT_FOUND;
    }
    /* RTLD_LOCAL: the transport's library (and its own copy of anything) stays out of the
     * application's symbol namespace; RTLD_NOW: a missing symbol fails here, not mid-job. */
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (NULL == handle) {
        opal_output_verbose(1, output, "rank %u: cannot load the %s transport from %s: %s",
                            rte->my_rank, front->name, path, dlerror());
        return HERD_ERR_NOT_AVAILABLE;
    }
    snprintf(symbol, sizeof(symbol), "herd_btl_%s_transport", front->name);
    ompi_btl_dso_entry_fn_t entry;
    /* dlsym returns an object pointer; POSIX guarantees the conversion to a function pointer */
    *(void **) &entry = dlsym(handle, symbol);
    if (NULL == entry) {
        opal_output_verbose(1, output,
                            "rank %u: %s is not a herd transport library (no symbol %s): "
                            "reinstall herd",
                            rte->my_rank, path, symbol);
        dlclose(handle);
        return HERD_ERR_NOT_AVAILABLE;
    }

    ompi_btl_dso_services_t *svc = NULL;
    for (size_t i = 0; i < dso_num_services; ++i) {
        if (dso_services[i].params == params) {
            svc = &dso_services[i];
        }
    }
    if (NULL == svc) {
        if (DSO_MAX_FRONTS == dso_num_services) {
            dlclose(handle);
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        svc = &dso_services[dso_num_services++];
    }
    *svc = (ompi_btl_dso_services_t){
        .abi_version = OMPI_BTL_DSO_ABI_VERSION,
        .interface_version = OPAL_MCA_btl_INTERFACE_VERSION,
        .params = params,
        .proc_lookup = ompi_proc_lookup,
        .proc_find = ompi_proc_find,
        .verbose = dso_verbose,
        .show_help = dso_show_help,
        .strerror = opal_strerror,
    };
    const ompi_btl_module_t *module = entry(svc, why, sizeof(why));
    if (NULL == module) {
        opal_output_verbose(1, output, "rank %u: the %s transport (%s) refused to start: %s",
                            rte->my_rank, front->name, path,
                            '\0' != why[0] ? why : "it gave no reason");
        dlclose(handle);
        return HERD_ERR_NOT_AVAILABLE;
    }
    int rc = module->init(rte, deliver);
    if (HERD_SUCCESS != rc) {
        /* kept loaded: init may have started threads or handlers in the transport's library */
        return rc;
    }
    opal_output_verbose(10, output, "rank %u: the %s transport is loaded from %s", rte->my_rank,
                        front->name, path);
    const char *name = front->name;
    int (*front_init)(const ompi_btl_rte_t *, ompi_btl_deliver_fn_t) = front->init;
    *front = *module;
    front->name = name;
    front->init = front_init;
    return HERD_SUCCESS;
}
