dnl SPDX-License-Identifier: BSD-3-Clause
dnl odls default: fork/exec local processes, bind them, collect exit status and usage.
AC_DEFUN([HERD_MCA_orte_odls_default_CONFIG], [$1])
