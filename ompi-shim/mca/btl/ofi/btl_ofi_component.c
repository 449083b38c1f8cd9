/* SPDX-License-Identifier: BSD-3-Clause */
/* btl ofi's front, linked into libherd: it registers the component's variables (herd-info shows
 * them whether or not libfabric is installed where the program runs) and offers a module whose
 * init loads the transport from herd-btl-ofi.so. No libfabric header or call here: a program
 * that never sends a message, or leaves ofi out, never loads libfabric (docs/btl.md). */
#include "herd_config.h"

#include "ompi-shim/mca/btl/btl.h"
#include "ompi-shim/mca/btl/ofi/btl_ofi.h"
#include "opal/mca/base/mca_var.h"

/* Between sm (50) and tcp (10): a fabric is the better way off the node. */
#define BTL_OFI_DEFAULT_PRIORITY 20
/* Connected TCP under the reliable-datagram layer first; then the older sockets provider, and
 * UDP with its reliability layer. */
#define BTL_OFI_DEFAULT_PROVIDERS       "tcp;ofi_rxm,sockets,udp;ofi_rxd"
#define BTL_OFI_DEFAULT_FRAG_SIZE       65536
#define BTL_OFI_DEFAULT_RECV_BUFFERS    16
#define BTL_OFI_DEFAULT_TIMEOUT         60
#define BTL_OFI_DEFAULT_CLOSE_LINGER_MS 20

static btl_ofi_params_t btl_ofi_params;

static int btl_ofi_front_init(const ompi_btl_rte_t *rte, ompi_btl_deliver_fn_t deliver);

/* The base calls the transport's functions straight: front_init copies them in here. */
static ompi_btl_module_t btl_ofi_module = {
    .name = "ofi",
    .init = btl_ofi_front_init,
};

static int btl_ofi_front_init(const ompi_btl_rte_t *rte, ompi_btl_deliver_fn_t deliver)
{
    btl_ofi_params.version = BTL_OFI_PARAMS_VERSION;
    return ompi_btl_base_dso_front_init(&btl_ofi_module, &btl_ofi_params, rte, deliver);
}

static int btl_ofi_register(const opal_mca_component_t *component)
{
    btl_ofi_params_t *p = &btl_ofi_params;
    static const opal_mca_var_def_t vars[] = {
        {.name = "priority",
         .type = OPAL_MCA_VAR_INT,
         .storage = &btl_ofi_params.priority,
         .help = "Priority of the ofi transport (libfabric, any peer)"},
        {.name = "provider",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &btl_ofi_params.providers,
         .help = "Comma-separated libfabric providers with a reliable "
                 "datagram endpoint, tried in order; the first that opens is "
                 "used (every process must end up with the same one)"},
        {.name = "frag_size",
         .type = OPAL_MCA_VAR_SIZE,
         .storage = &btl_ofi_params.frag_size,
         .help = "Payload bytes per libfabric message: longer messages are "
                 "sent in fragments of this size (the same in every process)"},
        {.name = "recv_buffers",
         .type = OPAL_MCA_VAR_INT,
         .storage = &btl_ofi_params.recv_buffers,
         .help = "Receive buffers of frag_size bytes kept posted"},
        {.name = "timeout",
         .type = OPAL_MCA_VAR_INT,
         .storage = &btl_ofi_params.timeout,
         .help = "Seconds a peer may leave this process's messages "
                 "unanswered before it is taken for gone (0: never), and "
                 "that its RM-assigned endpoint may take to answer"},
        {.name = "use_rm_endpoint",
         .type = OPAL_MCA_VAR_BOOL,
         .storage = &btl_ofi_params.use_rm,
         .help = "Bind to the RM-assigned endpoint of the provider when the "
                 "job has one (false: the provider's choice, published by the "
                 "modex)"},
        {.name = "max_message",
         .type = OPAL_MCA_VAR_SIZE,
         .storage = &btl_ofi_params.max_message,
         .help = "Longest message accepted from a peer (bytes; a longer "
                 "header is taken for garbage and dropped)"},
        {.name = "close_linger_ms",
         .type = OPAL_MCA_VAR_INT,
         .storage = &btl_ofi_params.close_linger_ms,
         .help = "Milliseconds a provider that makes a datagram endpoint reliable "
                 "in software (ofi_rxd) keeps progressing at finalize before its "
                 "endpoint closes, so that it acknowledges what peers sent last "
                 "(0: close at once)"},
    };

    /* storage holds the defaults on entry (a framework opened again registers again) */
    p->priority = BTL_OFI_DEFAULT_PRIORITY;
    p->providers = BTL_OFI_DEFAULT_PROVIDERS;
    p->frag_size = BTL_OFI_DEFAULT_FRAG_SIZE;
    p->recv_buffers = BTL_OFI_DEFAULT_RECV_BUFFERS;
    p->timeout = BTL_OFI_DEFAULT_TIMEOUT;
    p->use_rm = true;
    p->max_message = (size_t) 1 << 32;
    p->close_linger_ms = BTL_OFI_DEFAULT_CLOSE_LINGER_MS;
    return opal_mca_var_register_table(component, vars, OPAL_MCA_VAR_DEFS_COUNT(vars));
}

static int btl_ofi_query(const opal_mca_component_t *component, void **module, int *priority)
{
    (void) component;
    *module = &btl_ofi_module;
    *priority = btl_ofi_params.priority;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(ompi, btl, ofi, .register_params = btl_ofi_register, .query = btl_ofi_query);
