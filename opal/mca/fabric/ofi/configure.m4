dnl SPDX-License-Identifier: BSD-3-Clause
dnl fabric ofi: needs libfabric (configure's --with-libfabric check).
AC_DEFUN([HERD_MCA_opal_fabric_ofi_CONFIG], [
    AS_IF([test "$herd_have_FABRIC" = yes], [$1], [herd_mca_reason="libfabric not found"; $2])
])
