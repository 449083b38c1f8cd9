dnl SPDX-License-Identifier: BSD-3-Clause
dnl rmaps ppr: N processes per resource (ppr:N:OBJ).
AC_DEFUN([HERD_MCA_orte_rmaps_ppr_CONFIG], [$1])
dnl Takes only --map-by ppr: loaded when an app first asks for a policy the loaded mappers lack.
m4_define([HERD_MCA_orte_rmaps_ppr_PRIORITY], [90])
m4_define([HERD_MCA_orte_rmaps_ppr_AVAILABLE_WHEN], [asked])
