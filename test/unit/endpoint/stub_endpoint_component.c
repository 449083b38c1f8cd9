/* SPDX-License-Identifier: BSD-3-Clause */
/* A stub endpoint component, built as DSOs for the endpoint tests: one that outranks static and
 * dynamic (its register_slot answers slot 41 for anything, so a test can tell it was asked),
 * and one built for another endpoint interface version, which the loader must refuse. It never
 * touches a proc: its DSO is built against this build's tags, the test may use others. */
#include "herd_config.h"

#include "ompi-shim/mca/endpoint/endpoint.h"
#include "opal/mca/base/mca_var.h"

#ifdef STUB_INTERFACE_VERSION
#undef OPAL_MCA_endpoint_INTERFACE_VERSION
#define OPAL_MCA_endpoint_INTERFACE_VERSION STUB_INTERFACE_VERSION
#endif

#define STUB_STR2(x) #x
#define STUB_STR(x)  STUB_STR2(x)
/* An indirection so STUB_NAME is expanded before OPAL_MCA_COMPONENT pastes it. */
#define STUB_DECLARE(n, ...) OPAL_MCA_COMPONENT(ompi, endpoint, n, __VA_ARGS__)

#define STUB_SLOT 41

static struct {
    int priority; /* endpoint_<name>_priority */
} stub_state = {.priority = STUB_PRIORITY};

static int stub_register_slot(const char *name, int *slot)
{
    *slot = STUB_SLOT;
    return HERD_SUCCESS;
}

static void *stub_get(const ompi_proc_t *proc, int slot)
{
    return NULL;
}

static int stub_set(ompi_proc_t *proc, int slot, void *value)
{
    return HERD_ERR_NOT_SUPPORTED;
}

static const ompi_endpoint_module_t stub_module = {
    .name = STUB_STR(STUB_NAME),
    .register_slot = stub_register_slot,
    .get = stub_get,
    .set = stub_set,
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
