dnl SPDX-License-Identifier: BSD-3-Clause
dnl iof default: per-process pipes, whole lines, credit-based flow control; always built.
AC_DEFUN([HERD_MCA_orte_iof_default_CONFIG], [$1])
