/* SPDX-License-Identifier: BSD-3-Clause */
/* ras slurm: the allocation of the Slurm job herd runs in, from SLURM_JOB_NODELIST and
 * SLURM_TASKS_PER_NODE (slots per node; one slot per node when Slurm did not set it). */
#include "herd_config.h"

#include <stdlib.h>

#include "opal/mca/base/mca_var.h"
#include "orte/mca/ras/base/base.h"
#include "orte/mca/ras/ras.h"

#define RAS_SLURM_DEFAULT_PRIORITY HERD_MCA_PRIORITY_orte_ras_slurm

typedef struct {
    int priority;
} ras_slurm_state_t;

static ras_slurm_state_t ras_slurm_state = {
    .priority = RAS_SLURM_DEFAULT_PRIORITY,
};

static int ras_slurm_allocate(orte_allocation_t **allocation);

static const orte_ras_module_t ras_slurm_module = {
    .allocate = ras_slurm_allocate,
};

static int ras_slurm_register(const opal_mca_component_t *component)
{
    int index;

    ras_slurm_state.priority = RAS_SLURM_DEFAULT_PRIORITY;
    index = opal_mca_var_register(component, "priority",
                                  "Priority of the slurm ras component, used inside a Slurm job "
                                  "when no hostfile or host list is given; the highest available "
                                  "component wins",
                                  OPAL_MCA_VAR_INT, &ras_slurm_state.priority);
    if (index < 0) {
        return index;
    }
    return HERD_SUCCESS;
}

static const char *ras_slurm_nodelist(void)
{
    const char *nodelist = getenv("SLURM_JOB_NODELIST");

    return (NULL != nodelist && '\0' != nodelist[0]) ? nodelist : NULL;
}

static int ras_slurm_query(const opal_mca_component_t *component, void **module, int *priority)
{
    /* a hostfile or -H inside a Slurm job is the user narrowing the allocation on purpose */
    if (NULL == ras_slurm_nodelist() || NULL != orte_ras_base_hostfile() ||
        NULL != orte_ras_base_host_list()) {
        return HERD_ERR_NOT_AVAILABLE;
    }
    *module = (void *) &ras_slurm_module;
    *priority = ras_slurm_state.priority;
    return HERD_SUCCESS;
}

static int ras_slurm_allocate(orte_allocation_t **allocation)
{
    const char *nodelist = ras_slurm_nodelist();

    if (NULL == nodelist) {
        return HERD_ERR_NOT_AVAILABLE;
    }
    return orte_ras_base_slurm_allocation(nodelist, getenv("SLURM_TASKS_PER_NODE"), allocation);
}

OPAL_MCA_COMPONENT(orte, ras, slurm, .register_params = ras_slurm_register,
                   .query = ras_slurm_query);
