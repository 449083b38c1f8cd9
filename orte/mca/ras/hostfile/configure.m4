dnl SPDX-License-Identifier: BSD-3-Clause
dnl ras hostfile: Open-MPI-style hostfiles and -H host lists.
AC_DEFUN([HERD_MCA_orte_ras_hostfile_CONFIG], [$1])
dnl Offers itself only for a hostfile or a host list (--hostfile, -H).
m4_define([HERD_MCA_orte_ras_hostfile_PRIORITY], [50])
m4_define([HERD_MCA_orte_ras_hostfile_AVAILABLE_WHEN], [var:ras_base_hostfile var:ras_base_host])
