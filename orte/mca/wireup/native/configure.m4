dnl SPDX-License-Identifier: BSD-3-Clause
dnl wireup native: the session daemon serves libherd's processes over a Unix socket; always built.
AC_DEFUN([HERD_MCA_orte_wireup_native_CONFIG], [$1])
