/* SPDX-License-Identifier: BSD-3-Clause */
/* A stub toolsrv component, built as DSOs for the toolsrv tests: one that outranks pmix and,
 * when started, asks its host for the jobs and signals one (so a test sees the host is called
 * through it), and one built for another toolsrv interface version, which the loader must
 * refuse. */
#include "herd_config.h"

#include <signal.h>
#include <stdlib.h>

#include "opal/mca/base/mca_var.h"
#include "orte/mca/toolsrv/toolsrv.h"

#ifdef STUB_INTERFACE_VERSION
#undef OPAL_MCA_toolsrv_INTERFACE_VERSION
#define OPAL_MCA_toolsrv_INTERFACE_VERSION STUB_INTERFACE_VERSION
#endif

#define STUB_STR2(x)         #x
#define STUB_STR(x)          STUB_STR2(x)
#define STUB_DECLARE(n, ...) OPAL_MCA_COMPONENT(orte, toolsrv, n, __VA_ARGS__)

static struct {
    int priority; /* toolsrv_<name>_priority */
} stub_state = {.priority = STUB_PRIORITY};

struct orte_toolsrv {
    int jobs_seen;
};

static void stub_jobs_cb(int status, const orte_toolsrv_job_t *jobs, size_t n, void *cbdata)
{
    struct orte_toolsrv *srv = cbdata;
    srv->jobs_seen = HERD_SUCCESS == status ? (int) n : -1;
}

static int stub_start(const orte_toolsrv_host_t *host, orte_toolsrv_t **server)
{
    struct orte_toolsrv *srv = calloc(1, sizeof(*srv));
    if (NULL == srv) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    host->jobs(true, stub_jobs_cb, srv, host->arg);
    if (srv->jobs_seen < 0 || HERD_SUCCESS != host->signal_job("job.1", SIGTERM, 0, host->arg)) {
        free(srv);
        return HERD_ERR_NOT_AVAILABLE;
    }
    *server = srv;
    return HERD_SUCCESS;
}

static void stub_stop(orte_toolsrv_t *srv)
{
    free(srv);
}

static const orte_toolsrv_module_t stub_module = {
    .name = STUB_STR(STUB_NAME),
    .start = stub_start,
    .stop = stub_stop,
};

static int stub_register(const opal_mca_component_t *component)
{
    stub_state.priority = STUB_PRIORITY;
    int rc = opal_mca_var_register(component, "priority", "Priority of this stub component",
                                   OPAL_MCA_VAR_INT, &stub_state.priority);
    return rc < 0 ? rc : HERD_SUCCESS;
}

static int stub_query(const opal_mca_component_t *component, void **module, int *priority)
{
    *module = (void *) &stub_module;
    *priority = stub_state.priority;
    return HERD_SUCCESS;
}

STUB_DECLARE(STUB_NAME, .register_params = stub_register, .query = stub_query);
