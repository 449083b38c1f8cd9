dnl SPDX-License-Identifier: BSD-3-Clause
dnl btl tcp: messages over TCP sockets; always built (POSIX sockets).
AC_DEFUN([HERD_MCA_ompi_btl_tcp_CONFIG], [
    HERD_MCA_ENDPOINT_TAG([tcp])
    $1
])
