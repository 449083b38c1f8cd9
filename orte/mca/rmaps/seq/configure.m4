dnl SPDX-License-Identifier: BSD-3-Clause
dnl rmaps seq: one process per line of a hostfile, in order.
AC_DEFUN([HERD_MCA_orte_rmaps_seq_CONFIG], [$1])
dnl Takes only --map-by seq: loaded when an app first asks for a policy the loaded mappers lack.
m4_define([HERD_MCA_orte_rmaps_seq_PRIORITY], [60])
m4_define([HERD_MCA_orte_rmaps_seq_AVAILABLE_WHEN], [asked])
