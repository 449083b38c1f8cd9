dnl SPDX-License-Identifier: BSD-3-Clause
dnl wireup pmi1: the PMI-1 "simple" wire protocol over PMI_FD, for unmodified MPICH programs;
dnl always built.
AC_DEFUN([HERD_MCA_orte_wireup_pmi1_CONFIG], [$1])
