/* SPDX-License-Identifier: BSD-3-Clause */
/* ras hostfile: the allocation named by a hostfile (--hostfile, ras_base_hostfile) and/or a host
 * list (-H, ras_base_host); the parsing itself is in the ras base, which the mapper shares. */
#include "herd_config.h"

#include "opal/mca/base/mca_var.h"
#include "orte/mca/ras/base/base.h"
#include "orte/mca/ras/ras.h"

#define RAS_HOSTFILE_DEFAULT_PRIORITY HERD_MCA_PRIORITY_orte_ras_hostfile

typedef struct {
    int priority;
} ras_hostfile_state_t;

static ras_hostfile_state_t ras_hostfile_state = {
    .priority = RAS_HOSTFILE_DEFAULT_PRIORITY,
};

static int ras_hostfile_allocate(orte_allocation_t **allocation);

static const orte_ras_module_t ras_hostfile_module = {
    .allocate = ras_hostfile_allocate,
};

static int ras_hostfile_register(const opal_mca_component_t *component)
{
    int index;

    /* a component that stays loaded (static build) still holds its previous value */
    ras_hostfile_state.priority = RAS_HOSTFILE_DEFAULT_PRIORITY;
    index = opal_mca_var_register(component, "priority",
                                  "Priority of the hostfile ras component, used when a hostfile "
                                  "or host list is given; the highest available component wins",
                                  OPAL_MCA_VAR_INT, &ras_hostfile_state.priority);
    if (index < 0) {
        return index;
    }
    return HERD_SUCCESS;
}

static int ras_hostfile_query(const opal_mca_component_t *component, void **module, int *priority)
{
    if (NULL == orte_ras_base_hostfile() && NULL == orte_ras_base_host_list()) {
        return HERD_ERR_NOT_AVAILABLE;
    }
    /* parsing waits for allocate(): a mistake in the hostfile must stop the run, not make the
     * framework quietly pick another component */
    *module = (void *) &ras_hostfile_module;
    *priority = ras_hostfile_state.priority;
    return HERD_SUCCESS;
}

static int ras_hostfile_allocate(orte_allocation_t **allocation)
{
    return orte_ras_base_read_hosts(orte_ras_base_hostfile(), orte_ras_base_host_list(),
                                    allocation);
}

OPAL_MCA_COMPONENT(orte, ras, hostfile, .register_params = ras_hostfile_register,
                   .query = ras_hostfile_query);
