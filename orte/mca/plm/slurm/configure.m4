dnl SPDX-License-Identifier: BSD-3-Clause
dnl plm slurm: daemons started as one srun step (srun is found at run time).
AC_DEFUN([HERD_MCA_orte_plm_slurm_CONFIG], [$1])
