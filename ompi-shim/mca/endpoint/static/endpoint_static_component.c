/* SPDX-License-Identifier: BSD-3-Clause */
/* endpoint static: only the compile-time slots (proc->endpoint[HERD_ENDPOINT_TAG_X]); a
 * component that asks for a run-time slot is told it is not supported. The one component
 * with --disable-dynamic-endpoint-slots. */
#include "herd_config.h"

#include "ompi-shim/mca/endpoint/endpoint.h"
#include "opal/mca/base/mca_var.h"

#define ENDPOINT_STATIC_DEFAULT_PRIORITY 10

static struct {
    int priority; /* endpoint_static_priority */
} endpoint_static_state = {
    .priority = ENDPOINT_STATIC_DEFAULT_PRIORITY,
};

static int endpoint_static_register_slot(const char *name, int *slot)
{
    return HERD_ERR_NOT_SUPPORTED;
}

static void *endpoint_static_get(const ompi_proc_t *proc, int slot)
{
    return NULL;
}

static int endpoint_static_set(ompi_proc_t *proc, int slot, void *value)
{
    return HERD_ERR_NOT_SUPPORTED;
}

static const ompi_endpoint_module_t endpoint_static_module = {
    .name = "static",
    .register_slot = endpoint_static_register_slot,
    .get = endpoint_static_get,
    .set = endpoint_static_set,
    .release = NULL, /* it keeps nothing per proc */
};

static int endpoint_static_register(const opal_mca_component_t *component)
{
    int index;

    /* a component that stays loaded (always, in libherd) still holds its previous value */
    endpoint_static_state.priority = ENDPOINT_STATIC_DEFAULT_PRIORITY;
    index = opal_mca_var_register(component, "priority",
                                  "Priority of the static endpoint component (compile-time "
                                  "endpoint slots only: components not known at configure time "
                                  "cannot register one); the available component with the "
                                  "highest priority is used",
                                  OPAL_MCA_VAR_INT, &endpoint_static_state.priority);
    return index < 0 ? index : HERD_SUCCESS;
}

static int endpoint_static_query(const opal_mca_component_t *component, void **module,
                                 int *priority)
{
    *module = (void *) &endpoint_static_module;
    *priority = endpoint_static_state.priority;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(ompi, endpoint, static, .register_params = endpoint_static_register,
                   .query = endpoint_static_query);
