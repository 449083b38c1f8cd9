dnl SPDX-License-Identifier: BSD-3-Clause
dnl overlay tcp: TCP connections on libevent, authenticated with the DVM's secret (libsodium).
AC_DEFUN([HERD_MCA_orte_overlay_tcp_CONFIG], [
    AS_IF([test "$herd_have_SODIUM" = yes], [$1], [herd_mca_reason="libsodium not found"; $2])
])
