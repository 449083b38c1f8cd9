/* SPDX-License-Identifier: BSD-3-Clause */
/* One stub component, built several times with different -D switches: a good DSO, a DSO built
 * for another MCA ABI or interface version, one exporting the wrong symbol, one whose struct
 * calls itself by another name, and (STUB_STATIC) copies linked into the test program. */
#include "herd_config.h"

#include "opal/mca/base/mca_var.h"
#include "stub_framework.h"

#ifdef STUB_INTERFACE_VERSION
#undef OPAL_MCA_stub_INTERFACE_VERSION
#define OPAL_MCA_stub_INTERFACE_VERSION STUB_INTERFACE_VERSION
#endif

#define STUB_STR2(x) #x
#define STUB_STR(x) STUB_STR2(x)
#define STUB_PASTE3(a, b, c) a##b##c
#define STUB_SYMBOL(n) STUB_PASTE3(opal_stub_, n, _component)
/* An indirection so STUB_NAME is expanded before OPAL_MCA_COMPONENT pastes it. */
#define STUB_DECLARE(n, ...) OPAL_MCA_COMPONENT(opal, stub, n, __VA_ARGS__)

#ifdef STUB_STATIC
#define STUB_FROM_STATIC true
#else
#define STUB_FROM_STATIC false
#endif

static struct {
    int priority; /* variable <fw>_<comp>_priority */
    stub_module_t module;
} stub_state = {.priority = STUB_PRIORITY,
                .module = {.name = STUB_STR(STUB_NAME), .from_static = STUB_FROM_STATIC}};

static int stub_register(const opal_mca_component_t *component)
{
    /* the default is set here, not only at load time: a static component is registered again
     * after each close, and must not start from the value the last run resolved */
    stub_state.priority = STUB_PRIORITY;
    int rc = opal_mca_var_register(component, "priority", "Priority of this stub component",
                                   OPAL_MCA_VAR_INT, &stub_state.priority);
    return rc < 0 ? rc : HERD_SUCCESS;
}

#ifdef STUB_TAKES_SIGNALS
#include <signal.h>
static void stub_on_term(int signo)
{
    (void) signo;
}
/* as some libraries do when they are loaded (libinfinipath under libfabric): take SIGTERM */
__attribute__((constructor)) static void stub_take_signals(void)
{
    (void) signal(SIGTERM, stub_on_term);
}
#endif

#ifdef STUB_UNDEFINED
/* Exists nowhere: dlopen() must refuse this DSO, and the loader must say why. */
extern int herd_stub_symbol_that_does_not_exist(void);
#endif

static int stub_query(const opal_mca_component_t *component, void **module, int *priority)
{
#ifdef STUB_UNDEFINED
    if (0 != herd_stub_symbol_that_does_not_exist()) {
        return HERD_ERR_NOT_AVAILABLE;
    }
#endif
    if (stub_state.priority < 0) {
        return HERD_ERR_NOT_AVAILABLE; /* a negative priority means "decline" in these tests */
    }
    *module = &stub_state.module;
    *priority = stub_state.priority;
    return HERD_SUCCESS;
}

#ifdef STUB_CLAIMED_NAME
/* Spelled out instead of OPAL_MCA_COMPONENT to give the struct a name unlike its file's. */
OPAL_MODULE_EXPORT extern const opal_mca_component_t STUB_SYMBOL(STUB_NAME);
OPAL_MODULE_EXPORT const opal_mca_component_t STUB_SYMBOL(STUB_NAME) = {
    .mca_abi_version = OPAL_MCA_ABI_VERSION,
    .interface_version = OPAL_MCA_stub_INTERFACE_VERSION,
    .layer = "opal",
    .framework = "stub",
    .name = STUB_CLAIMED_NAME,
    .version = PACKAGE_VERSION,
    .register_params = stub_register,
    .query = stub_query,
};
#else
STUB_DECLARE(STUB_NAME, .register_params = stub_register, .query = stub_query);
#endif
