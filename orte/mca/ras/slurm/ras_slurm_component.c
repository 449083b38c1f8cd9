/* ras slurm: the allocation of the Slurm job herd runs in (SLURM_JOB_NODELIST, SLURM_TASKS_PER_NODE). */
#include "herd_config.h"

#include "orte/mca/ras/ras.h"

OPAL_MCA_COMPONENT(orte, ras, slurm);
