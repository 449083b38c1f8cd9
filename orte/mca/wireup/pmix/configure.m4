dnl SPDX-License-Identifier: BSD-3-Clause
dnl wireup pmix: the session daemon as a PMIx server (OpenPMIx's server library), for unmodified
dnl PMIx clients such as Open MPI programs; built when libpmix is found (--with-pmix).
AC_DEFUN([HERD_MCA_orte_wireup_pmix_CONFIG], [
    AS_IF([test "$herd_have_PMIX" = yes], [$1], [herd_mca_reason="OpenPMIx (libpmix-dev) not found"; $2])
])
