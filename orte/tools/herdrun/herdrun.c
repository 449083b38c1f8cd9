/* SPDX-License-Identifier: BSD-3-Clause */
/* herdrun: start a DVM over the allocation (or use a running one), run one job on it, and exit
 * with the job's status. The options are mpirun's (herdrun --help, man herdrun). */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_var.h"
#include "opal/mca/mca.h"
#include "opal/util/fd.h"
#include "opal/util/show_help.h"
#include "orte/mca/iof/iof.h"
#include "orte/mca/odls/odls.h"
#include "orte/mca/ras/ras.h"
#include "orte/runtime/dvm.h"
#include "orte/runtime/launch.h"
#include "orte/tools/herdrun/herdrun_cmdline.h"
#include "orte/tools/herdrun/herdrun_mpir.h"

#include <time.h>
int main(int argc, char *argv[])
{
    extern char **environ;
    herdrun_options_t opts = {0};
    orte_dvm_t *dvm = NULL;
    int status = 1;

    opal_fd_fill_stdio();
    /* A job's own DVM asks only the tcp fabric component (getifaddrs: what RM-assigned tcp
     * endpoints need) unless told otherwise: loading every fabric library (libfabric, UCX)
     * costs a third of a second per node (--mca dvm_fabric_components all asks them all). */
    setenv("HERD_MCA_dvm_fabric_components", "tcp", 0);
    if (HERD_SUCCESS != opal_mca_init()) {
        return 1;
    }
    if (HERD_SUCCESS != herdrun_cmdline_parse(argc, argv, environ, &opts)) {
        goto out;
    }
    if (opts.help) {
        herdrun_cmdline_usage(stdout);
        status = 0;
        goto out;
    }
    if (opts.version) {
        printf("herdrun (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
        status = 0;
        goto out;
    }
    /* the odls variables (kill grace) and iof's (window) are read here too: register them */
    if (HERD_SUCCESS != opal_mca_framework_register(&orte_odls_base_framework) ||
        HERD_SUCCESS != opal_mca_framework_register(&orte_iof_base_framework) ||
        HERD_SUCCESS != orte_launch_register_params()) {
        goto out;
    }
    /* --stop-on-exec, or HERD_MPIR_STOP=1 set by a debugger's launch script */
    const char *mpir_stop = getenv("HERD_MPIR_STOP");
    bool stop_on_exec = NULL != opts.spec && ((opts.spec->flags & ORTE_JOB_FLAG_STOP_ON_EXEC) ||
                                              (NULL != mpir_stop && 0 != strcmp(mpir_stop, "") &&
                                               0 != strcmp(mpir_stop, "0")));
    orte_launch_options_t launch_options = {.report_usage_file = opts.report_usage_file,
                                            .output_dir = opts.output_dir,
                                            .output_nocopy = opts.output_nocopy,
                                            .verbose = opts.verbose,
                                            .debugger = herdrun_mpir_hooks(),
                                            .stop_on_exec = stop_on_exec};
    int job_status = 1;
    if (NULL != opts.attach) {
        uint32_t flags =
            ((opts.spec->flags & ORTE_JOB_FLAG_TAG_OUTPUT) ? ORTE_IOF_FLAG_TAG : 0) |
            ((opts.spec->flags & ORTE_JOB_FLAG_TIMESTAMP_OUTPUT) ? ORTE_IOF_FLAG_TIMESTAMP : 0);
        if (HERD_SUCCESS == orte_launch_attach(opts.dvm_uri, opts.attach, flags, &job_status)) {
            status = job_status;
        }
        goto out;
    }
    if (NULL != opts.dvm_uri) {
        /* a running DVM: no daemon to start */
        if (HERD_SUCCESS ==
            orte_launch_run_client(opts.dvm_uri, opts.spec, &launch_options, &job_status)) {
            status = job_status;
        }
        goto out;
    }
    /* this host alone: no node daemon to start, herdrun is the node's daemon */
    orte_allocation_t *alloc = NULL;
    if (HERD_SUCCESS != orte_ras_base_allocate(&alloc)) {
        goto out; /* reported: a bad hostfile, an unknown host list, ... */
    }
    if (orte_launch_local_possible(alloc)) {
        if (HERD_SUCCESS == orte_launch_run_local(alloc, opts.spec, &launch_options, &job_status)) {
            status = job_status;
        }
        orte_allocation_free(alloc);
        orte_ras_base_close();
        goto out;
    }
    orte_allocation_free(alloc);
    orte_dvm_options_t dvm_options = {0};
    if (HERD_SUCCESS != orte_dvm_root_start(&dvm_options, &dvm)) {
        goto out;
    }
    if (HERD_SUCCESS == orte_launch_run(dvm, opts.spec, &launch_options, &job_status)) {
        status = job_status;
    }
    orte_dvm_root_stop(dvm);

out:
    herdrun_mpir_release();
    herdrun_options_destruct(&opts);
    opal_mca_finalize();
    return status;
}
