dnl SPDX-License-Identifier: BSD-3-Clause
dnl errmgr abort: any failure ends the whole job (the default); always built.
AC_DEFUN([HERD_MCA_orte_errmgr_abort_CONFIG], [$1])
m4_define([HERD_MCA_orte_errmgr_abort_PRIORITY], [50])
