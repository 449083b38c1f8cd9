/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric ucx: the UCX transports usable on this node (one device per transport/device pair, from
 * UCT) and the size of a UCP worker address, which peers will need to exchange. */
#include "herd_config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ucp/api/ucp.h>
#include <uct/api/uct.h>

#include "opal/mca/base/mca_var.h"
#include "opal/mca/fabric/base/base.h"
#include "opal/mca/fabric/fabric.h"
#include "opal/util/output.h"

#define FABRIC_UCX_DEFAULT_PRIORITY 20

typedef struct {
    int priority;
    opal_fabric_record_t *record; /* what query() found; discover() hands out copies */
} fabric_ucx_state_t;

static fabric_ucx_state_t fabric_ucx_state = {
    .priority = FABRIC_UCX_DEFAULT_PRIORITY,
};

static int fabric_ucx_discover(opal_fabric_record_t **record);

static const opal_fabric_module_t fabric_ucx_module = {
    .discover = fabric_ucx_discover,
};

static int fabric_ucx_register(const opal_mca_component_t *component)
{
    int index;

    /* storage holds the default on entry, but a component that stays loaded still holds the
     * value of its previous registration */
    fabric_ucx_state.priority = FABRIC_UCX_DEFAULT_PRIORITY;
    index = opal_mca_var_register(component, "priority",
                                  "Priority of the ucx fabric component: records are listed "
                                  "highest priority first",
                                  OPAL_MCA_VAR_INT, &fabric_ucx_state.priority);
    return index < 0 ? index : HERD_SUCCESS;
}

static const char *fabric_ucx_device_type_name(uct_device_type_t type)
{
    switch (type) {
    case UCT_DEVICE_TYPE_NET:
        return "net";
    case UCT_DEVICE_TYPE_SHM:
        return "shm";
    case UCT_DEVICE_TYPE_ACC:
        return "acc";
    case UCT_DEVICE_TYPE_SELF:
        return "self";
    default:
        return "unknown";
    }
}

static int fabric_ucx_add_transport(opal_fabric_record_t *record, const char *component_name,
                                    const char *md_name, const uct_tl_resource_desc_t *tl)
{
    opal_fabric_device_t *device;
    char name[UCT_TL_NAME_MAX + UCT_DEVICE_NAME_MAX + 2];
    int rc;

    snprintf(name, sizeof(name), "%s/%s", tl->tl_name, tl->dev_name);
    device = opal_fabric_record_add_device(record, name, "transport");
    if (NULL == device) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    rc = opal_fabric_device_add_attr(device, "transport", tl->tl_name);
    if (HERD_SUCCESS == rc) {
        rc = opal_fabric_device_add_attr(device, "device", tl->dev_name);
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_fabric_device_add_attr(device, "dev_type",
                                         fabric_ucx_device_type_name(tl->dev_type));
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_fabric_device_add_attr(device, "md", md_name);
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_fabric_device_add_attr(device, "component", component_name);
    }
    return rc;
}

/* A memory domain that cannot be opened here (no such hardware, no permission) is skipped: the
 * others are still worth reporting. */
static int fabric_ucx_add_md(opal_fabric_record_t *record, uct_component_h component,
                             const char *component_name, const char *md_name)
{
    uct_tl_resource_desc_t *tls = NULL;
    uct_md_config_t *config = NULL;
    unsigned num_tls = 0;
    ucs_status_t status;
    uct_md_h md;
    int rc = HERD_SUCCESS;

    status = uct_md_config_read(component, NULL, NULL, &config);
    if (UCS_OK != status) {
        opal_output_verbose(10, opal_fabric_base_framework.output,
                            "fabric ucx: cannot read the configuration of %s: %s", md_name,
                            ucs_status_string(status));
        return HERD_SUCCESS;
    }
    status = uct_md_open(component, md_name, config, &md);
    uct_config_release(config);
    if (UCS_OK != status) {
        opal_output_verbose(10, opal_fabric_base_framework.output,
                            "fabric ucx: cannot open memory domain %s: %s", md_name,
                            ucs_status_string(status));
        return HERD_SUCCESS;
    }
    status = uct_md_query_tl_resources(md, &tls, &num_tls);
    if (UCS_OK != status) {
        opal_output_verbose(10, opal_fabric_base_framework.output,
                            "fabric ucx: cannot list the transports of %s: %s", md_name,
                            ucs_status_string(status));
        goto out_md;
    }
    for (unsigned i = 0; HERD_SUCCESS == rc && i < num_tls; i++) {
        rc = fabric_ucx_add_transport(record, component_name, md_name, &tls[i]);
    }
    uct_release_tl_resource_list(tls);

out_md:
    uct_md_close(md);
    return rc;
}

static int fabric_ucx_add_component(opal_fabric_record_t *record, uct_component_h component)
{
    uct_md_resource_desc_t *mds;
    uct_component_attr_t attr;
    ucs_status_t status;
    int rc = HERD_SUCCESS;

    memset(&attr, 0, sizeof(attr));
    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME | UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
    status = uct_component_query(component, &attr);
    if (UCS_OK != status) {
        opal_output_verbose(10, opal_fabric_base_framework.output,
                            "fabric ucx: cannot query a UCT component: %s",
                            ucs_status_string(status));
        return HERD_SUCCESS;
    }
    if (0 == attr.md_resource_count) {
        return HERD_SUCCESS;
    }
    mds = calloc(attr.md_resource_count, sizeof(*mds));
    if (NULL == mds) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    /* the second query fills the array sized by the first */
    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
    attr.md_resources = mds;
    status = uct_component_query(component, &attr);
    if (UCS_OK != status) {
        opal_output_verbose(10, opal_fabric_base_framework.output,
                            "fabric ucx: cannot list the memory domains of %s: %s", attr.name,
                            ucs_status_string(status));
        goto out;
    }
    for (unsigned i = 0; HERD_SUCCESS == rc && i < attr.md_resource_count; i++) {
        rc = fabric_ucx_add_md(record, component, attr.name, mds[i].md_name);
    }

out:
    free(mds);
    return rc;
}

static int fabric_ucx_add_transports(opal_fabric_record_t *record)
{
    uct_component_h *components;
    unsigned num_components;
    ucs_status_t status;
    int rc = HERD_SUCCESS;

    status = uct_query_components(&components, &num_components);
    if (UCS_OK != status) {
        opal_output_verbose(5, opal_fabric_base_framework.output,
                            "fabric ucx: cannot list UCT components: %s",
                            ucs_status_string(status));
        return HERD_ERR_NOT_AVAILABLE;
    }
    for (unsigned i = 0; HERD_SUCCESS == rc && i < num_components; i++) {
        rc = fabric_ucx_add_component(record, components[i]);
    }
    uct_release_component_list(components);
    return rc;
}

/* The size of the address a UCP worker publishes with the features herd's transports use; it
 * tells the inventory how much room each peer's endpoint data will take. */
static int fabric_ucx_worker_address_size(size_t *size)
{
    ucp_worker_params_t worker_params;
    ucp_params_t params;
    ucp_config_t *config;
    ucp_context_h context;
    ucp_worker_h worker;
    ucp_address_t *address;
    size_t length;
    ucs_status_t status;
    int rc = HERD_ERR_NOT_AVAILABLE;

    status = ucp_config_read(NULL, NULL, &config);
    if (UCS_OK != status) {
        opal_output_verbose(5, opal_fabric_base_framework.output,
                            "fabric ucx: cannot read the UCX configuration: %s",
                            ucs_status_string(status));
        return HERD_ERR_NOT_AVAILABLE;
    }
    memset(&params, 0, sizeof(params));
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_TAG | UCP_FEATURE_RMA | UCP_FEATURE_AM;
    status = ucp_init(&params, config, &context);
    ucp_config_release(config);
    if (UCS_OK != status) {
        opal_output_verbose(5, opal_fabric_base_framework.output,
                            "fabric ucx: ucp_init() failed: %s", ucs_status_string(status));
        return HERD_ERR_NOT_AVAILABLE;
    }
    memset(&worker_params, 0, sizeof(worker_params));
    worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;
    status = ucp_worker_create(context, &worker_params, &worker);
    if (UCS_OK != status) {
        opal_output_verbose(5, opal_fabric_base_framework.output,
                            "fabric ucx: cannot create a UCP worker: %s",
                            ucs_status_string(status));
        goto out_context;
    }
    status = ucp_worker_get_address(worker, &address, &length);
    if (UCS_OK != status) {
        opal_output_verbose(5, opal_fabric_base_framework.output,
                            "fabric ucx: cannot get the UCP worker address: %s",
                            ucs_status_string(status));
        goto out_worker;
    }
    ucp_worker_release_address(worker, address);
    *size = length;
    rc = HERD_SUCCESS;

out_worker:
    ucp_worker_destroy(worker);
out_context:
    ucp_cleanup(context);
    return rc;
}

static int fabric_ucx_build_record(opal_fabric_record_t **result)
{
    opal_fabric_record_t *record;
    size_t address_size = 0;
    char text[32];
    int rc;

    rc = fabric_ucx_worker_address_size(&address_size);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    record = opal_fabric_record_new("ucx");
    if (NULL == record) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    rc = opal_fabric_record_add_attr(record, "version", ucp_get_version_string());
    if (HERD_SUCCESS == rc) {
        snprintf(text, sizeof(text), "%zu", address_size);
        rc = opal_fabric_record_add_attr(record, "worker_address_size", text);
    }
    if (HERD_SUCCESS == rc) {
        /* a worker's address exists only once UCX made the worker: it cannot be assigned in
         * advance, the transport exchanges it (herd_put at init, herd_get on first message) */
        rc = opal_fabric_record_add_attr(record, "endpoints", "modex");
    }
    if (HERD_SUCCESS == rc) {
        rc = fabric_ucx_add_transports(record);
    }
    if (HERD_SUCCESS != rc) {
        opal_fabric_record_free(record);
        return rc;
    }
    *result = record;
    return HERD_SUCCESS;
}

static int fabric_ucx_query(const opal_mca_component_t *component, void **module, int *priority)
{
    opal_fabric_record_t *record = NULL;
    int rc;

    rc = fabric_ucx_build_record(&record);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (0 == record->num_devices) {
        opal_output_verbose(5, opal_fabric_base_framework.output,
                            "fabric ucx: UCX offers no transport here");
        opal_fabric_record_free(record);
        return HERD_ERR_NOT_AVAILABLE;
    }
    opal_fabric_record_free(fabric_ucx_state.record);
    fabric_ucx_state.record = record;
    *module = (void *) &fabric_ucx_module;
    *priority = fabric_ucx_state.priority;
    return HERD_SUCCESS;
}

static int fabric_ucx_discover(opal_fabric_record_t **record)
{
    if (NULL == fabric_ucx_state.record) {
        return HERD_ERR_NOT_AVAILABLE;
    }
    return opal_fabric_record_copy(fabric_ucx_state.record, record);
}

static int fabric_ucx_close(const opal_mca_component_t *component)
{
    opal_fabric_record_free(fabric_ucx_state.record);
    fabric_ucx_state.record = NULL;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(opal, fabric, ucx, .register_params = fabric_ucx_register,
                   .query = fabric_ucx_query, .close = fabric_ucx_close);
