dnl SPDX-License-Identifier: BSD-3-Clause
dnl plm ssh: start daemons with ssh (any ssh client works; found at run time).
AC_DEFUN([HERD_MCA_orte_plm_ssh_CONFIG], [$1])
