dnl SPDX-License-Identifier: BSD-3-Clause
dnl plm local: fork/exec daemons on this host (simulated nodes); always buildable.
AC_DEFUN([HERD_MCA_orte_plm_local_CONFIG], [$1])
