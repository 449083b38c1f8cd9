/* SPDX-License-Identifier: BSD-3-Clause */
/* A stub errmgr component, built as DSOs for the errmgr tests: one that outranks the real
 * components and continues after everything (so a test can tell it was asked; its variable
 * errmgr_stub_answer makes it answer anything, even what is not an action), and one built for
 * another errmgr interface version, which the loader must refuse. */
#include "herd_config.h"

#include "opal/mca/base/mca_var.h"
#include "orte/mca/errmgr/errmgr.h"

#ifdef STUB_INTERFACE_VERSION
#undef OPAL_MCA_errmgr_INTERFACE_VERSION
#define OPAL_MCA_errmgr_INTERFACE_VERSION STUB_INTERFACE_VERSION
#endif

#define STUB_STR2(x) #x
#define STUB_STR(x)  STUB_STR2(x)
/* An indirection so STUB_NAME is expanded before OPAL_MCA_COMPONENT pastes it. */
#define STUB_DECLARE(n, ...) OPAL_MCA_COMPONENT(orte, errmgr, n, __VA_ARGS__)

static struct {
    int priority; /* errmgr_<name>_priority */
    int answer;   /* errmgr_<name>_answer: what decide() returns */
} stub_state = {.priority = STUB_PRIORITY, .answer = ORTE_ERRMGR_CONTINUE};

static orte_errmgr_action_t stub_decide(const orte_errmgr_failure_t *failure)
{
    return (orte_errmgr_action_t) stub_state.answer;
}

static const orte_errmgr_module_t stub_module = {
    .name = STUB_STR(STUB_NAME),
    .decide = stub_decide,
};

static int stub_register(const opal_mca_component_t *component)
{
    stub_state.priority = STUB_PRIORITY;
    stub_state.answer = ORTE_ERRMGR_CONTINUE;
    int rc = opal_mca_var_register(component, "priority", "Priority of this stub component",
                                   OPAL_MCA_VAR_INT, &stub_state.priority);
    if (rc >= 0) {
        rc = opal_mca_var_register(component, "answer", "What this stub's decide() returns",
                                   OPAL_MCA_VAR_INT, &stub_state.answer);
    }
    return rc < 0 ? rc : HERD_SUCCESS;
}

static int stub_query(const opal_mca_component_t *component, void **module, int *priority)
{
    *module = (void *) &stub_module;
    *priority = stub_state.priority;
    return HERD_SUCCESS;
}

STUB_DECLARE(STUB_NAME, .register_params = stub_register, .query = stub_query);
