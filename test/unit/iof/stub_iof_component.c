/* SPDX-License-Identifier: BSD-3-Clause */
/* A stub iof component, built as DSOs for the iof tests: one that outranks default (its module
 * only has a name, so a test can tell which one was selected; iof_stub_priority changes its
 * rank), and one built for another iof interface version, which the loader must refuse. */
#include "herd_config.h"

#include "opal/mca/base/mca_var.h"
#include "orte/mca/iof/iof.h"

#ifdef STUB_INTERFACE_VERSION
#undef OPAL_MCA_iof_INTERFACE_VERSION
#define OPAL_MCA_iof_INTERFACE_VERSION STUB_INTERFACE_VERSION
#endif

#define STUB_STR2(x) #x
#define STUB_STR(x)  STUB_STR2(x)
/* An indirection so STUB_NAME is expanded before OPAL_MCA_COMPONENT pastes it. */
#define STUB_DECLARE(n, ...) OPAL_MCA_COMPONENT(orte, iof, n, __VA_ARGS__)

static struct {
    int priority; /* iof_<name>_priority */
} stub_state = {.priority = STUB_PRIORITY};

static const orte_iof_module_t stub_module = {
    .name = STUB_STR(STUB_NAME),
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
