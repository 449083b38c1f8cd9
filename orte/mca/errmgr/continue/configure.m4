dnl SPDX-License-Identifier: BSD-3-Clause
dnl errmgr continue: a failed process is recorded and the others run on; always built.
AC_DEFUN([HERD_MCA_orte_errmgr_continue_CONFIG], [$1])
m4_define([HERD_MCA_orte_errmgr_continue_PRIORITY], [10])
