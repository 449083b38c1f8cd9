/* SPDX-License-Identifier: BSD-3-Clause */
/* btl ucx: the front, linked into libherd. It registers the component's variables (herd-info
 * shows them whether or not UCX can load) and offers a module whose init loads the transport
 * proper from herd-btl-ucx.so (btl_ucx_transport.c): UCX is loaded only by a process that
 * starts its transports with ucx selected. No UCX header or call here. */
#include "herd_config.h"

#include "ompi-shim/mca/btl/btl.h"
#include "ompi-shim/mca/btl/ucx/btl_ucx.h"
#include "opal/mca/base/mca_var.h"

#define BTL_UCX_DEFAULT_PRIORITY      25 /* below sm (50), above ofi (20) and tcp (10) */
#define BTL_UCX_DEFAULT_EAGER_LIMIT   8192
#define BTL_UCX_DEFAULT_CLOSE_TIMEOUT 10

static btl_ucx_params_t btl_ucx_params;

static const opal_mca_var_enum_value_t btl_ucx_error_values[] = {
    {"auto", BTL_UCX_ERRORS_AUTO},
    {"peer", BTL_UCX_ERRORS_PEER},
    {"none", BTL_UCX_ERRORS_NONE},
    {NULL, 0},
};

static int btl_ucx_front_init(const ompi_btl_rte_t *rte, ompi_btl_deliver_fn_t deliver);

/* Not const: a successful init copies the transport's operations in, so the base calls the
 * DSO's functions with no forwarding (btl.h). */
static ompi_btl_module_t btl_ucx_front = {
    .name = "ucx",
    .init = btl_ucx_front_init,
};

static int btl_ucx_front_init(const ompi_btl_rte_t *rte, ompi_btl_deliver_fn_t deliver)
{
    return ompi_btl_base_dso_front_init(&btl_ucx_front, &btl_ucx_params, rte, deliver);
}

static int btl_ucx_register(const opal_mca_component_t *component)
{
    /* the tuning knobs are shown to tuners (herd-info --level 4), not to every user */
    static const opal_mca_var_def_t vars[] = {
        {.name = "priority",
         .type = OPAL_MCA_VAR_INT,
         .storage = &btl_ucx_params.priority,
         .help = "Priority of the ucx transport (UCX's UCP, any peer UCX reaches)"},
        {.name = "tls",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &btl_ucx_params.tls,
         .help = "UCX transports the ucx btl may use, given to UCX as UCX_TLS "
                 "(tcp; posix,sysv,cma; ...: see ucx_info -d). Empty: UCX's "
                 "own choice, or UCX_TLS from the environment"},
        {.name = "eager_limit",
         .type = OPAL_MCA_VAR_SIZE,
         .storage = &btl_ucx_params.eager_limit,
         .help = "Messages up to this many bytes go to UCX from the caller's "
                 "buffer as eager messages; longer ones are copied first and "
                 "UCX chooses the protocol (rendezvous), so herd_send never "
                 "waits for the receiver to fetch them",
         .level = 4},
        {.name = "error_handling",
         .type = OPAL_MCA_VAR_ENUM,
         .storage = &btl_ucx_params.error_handling,
         .help = "Whether UCX must report a peer that exits, so that sends to it fail instead of "
                 "waiting: peer (always; UCX 1.13 then cannot use its shared-memory transports, "
                 "which cannot), none (never), or auto (for peers on other nodes only)",
         .enum_values = btl_ucx_error_values},
        {.name = "close_timeout",
         .type = OPAL_MCA_VAR_INT,
         .storage = &btl_ucx_params.close_timeout,
         .help = "Seconds herd_finalize waits for UCX to flush and close its "
                 "endpoints before it leaves them (a peer that hangs)",
         .level = 4},
    };

    /* storage holds the default on entry; a libherd opened twice keeps the old values */
    btl_ucx_params.version = BTL_UCX_PARAMS_VERSION;
    btl_ucx_params.priority = BTL_UCX_DEFAULT_PRIORITY;
    btl_ucx_params.eager_limit = BTL_UCX_DEFAULT_EAGER_LIMIT;
    btl_ucx_params.close_timeout = BTL_UCX_DEFAULT_CLOSE_TIMEOUT;
    btl_ucx_params.error_handling = BTL_UCX_ERRORS_AUTO;
    return opal_mca_var_register_table(component, vars, OPAL_MCA_VAR_DEFS_COUNT(vars));
}

static int btl_ucx_query(const opal_mca_component_t *component, void **module, int *priority)
{
    (void) component;
    *module = &btl_ucx_front;
    *priority = btl_ucx_params.priority;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(ompi, btl, ucx, .register_params = btl_ucx_register, .query = btl_ucx_query);
