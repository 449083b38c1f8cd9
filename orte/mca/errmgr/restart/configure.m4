dnl SPDX-License-Identifier: BSD-3-Clause
dnl errmgr restart: a failed process is started again, up to errmgr_restart_max times; always
dnl built, used only when chosen (its priority is the lowest).
AC_DEFUN([HERD_MCA_orte_errmgr_restart_CONFIG], [$1])
m4_define([HERD_MCA_orte_errmgr_restart_PRIORITY], [5])
