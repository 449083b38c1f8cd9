dnl SPDX-License-Identifier: BSD-3-Clause
dnl ras slurm: the allocation of the Slurm job herd runs in (SLURM_JOB_NODELIST,
dnl SLURM_TASKS_PER_NODE).
AC_DEFUN([HERD_MCA_orte_ras_slurm_CONFIG], [$1])
dnl Offers itself only inside a Slurm job.
m4_define([HERD_MCA_orte_ras_slurm_PRIORITY], [40])
m4_define([HERD_MCA_orte_ras_slurm_AVAILABLE_WHEN], [env:SLURM_JOB_NODELIST])
