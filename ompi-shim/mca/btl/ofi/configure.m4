dnl SPDX-License-Identifier: BSD-3-Clause
dnl btl ofi: messages over libfabric (an RDM endpoint). Built only with libfabric (configure's
dnl --with-libfabric check). The component in libherd is a front; the transport proper is the
dnl DSO herd-btl-ofi.so, the only file that links libfabric (docs/btl.md).
AC_DEFUN([HERD_MCA_ompi_btl_ofi_CONFIG], [
    AS_IF([test "$herd_have_FABRIC" = yes], [
        HERD_MCA_ENDPOINT_TAG([ofi])
        HERD_MCA_TRANSPORT_DSO
        $1
    ], [herd_mca_reason="libfabric not found"; $2])
])
