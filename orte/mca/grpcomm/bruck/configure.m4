dnl SPDX-License-Identifier: BSD-3-Clause
dnl grpcomm bruck: Bruck allgather and dissemination barrier: log2(n) rounds, no root.
AC_DEFUN([HERD_MCA_orte_grpcomm_bruck_CONFIG], [$1])
m4_define([HERD_MCA_orte_grpcomm_bruck_PRIORITY], [10])
