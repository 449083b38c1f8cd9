dnl SPDX-License-Identifier: BSD-3-Clause
dnl rmaps round_robin: round-robin mapping by slot, node, package, L3 cache, core or hwthread.
AC_DEFUN([HERD_MCA_orte_rmaps_round_robin_CONFIG], [$1])
m4_define([HERD_MCA_orte_rmaps_round_robin_PRIORITY], [10])
