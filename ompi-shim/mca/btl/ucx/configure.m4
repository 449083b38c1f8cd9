dnl SPDX-License-Identifier: BSD-3-Clause
dnl btl ucx: messages over UCX's UCP. The front (variables, a module whose init loads the
dnl transport) goes into libherd; the transport proper is the DSO herd-btl-ucx.so, the only
dnl thing linked with UCX, so a program that never uses ucx never loads libucp.
AC_DEFUN([HERD_MCA_ompi_btl_ucx_CONFIG], [
    AS_IF([test "$herd_have_UCX" = yes], [
        HERD_MCA_ENDPOINT_TAG([ucx])
        HERD_MCA_TRANSPORT_DSO
        $1
    ], [herd_mca_reason="UCX not found"; $2])
])
