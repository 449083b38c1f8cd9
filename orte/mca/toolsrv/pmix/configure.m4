dnl SPDX-License-Identifier: BSD-3-Clause
dnl toolsrv pmix: herdrun and the DVM root as PMIx tool servers (OpenPMIx's server library),
dnl for pps, pattrs and pquery; built when libpmix is found (--with-pmix).
AC_DEFUN([HERD_MCA_orte_toolsrv_pmix_CONFIG], [
    AS_IF([test "$herd_have_PMIX" = yes], [$1], [herd_mca_reason="OpenPMIx (libpmix-dev) not found"; $2])
])
m4_define([HERD_MCA_orte_toolsrv_pmix_PRIORITY], [50])
