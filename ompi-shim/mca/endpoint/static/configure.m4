dnl SPDX-License-Identifier: BSD-3-Clause
dnl endpoint static: compile-time slots only; always built (the fallback when run-time slots
dnl are configured out or excluded).
AC_DEFUN([HERD_MCA_ompi_endpoint_static_CONFIG], [$1])
