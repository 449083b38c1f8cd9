dnl SPDX-License-Identifier: BSD-3-Clause
dnl fabric tcp: sockets only, so it can always be built where getifaddrs exists.
AC_DEFUN([HERD_MCA_opal_fabric_tcp_CONFIG], [
    AC_CHECK_FUNC([getifaddrs], [$1], [herd_mca_reason="getifaddrs() not found"; $2])
])
