dnl SPDX-License-Identifier: BSD-3-Clause
dnl overlay ofi: the tcp overlay plus a libfabric RDM endpoint (configure's --with-libfabric check).
AC_DEFUN([HERD_MCA_orte_overlay_ofi_CONFIG], [
    AS_IF([test "$herd_have_FABRIC" = yes && test "$herd_have_SODIUM" = yes], [$1],
          [herd_mca_reason="libfabric or libsodium (for the tcp overlay it wraps) not found"; $2])
])
dnl Below tcp's 10: the DSO (and libfabric with it) is loaded only when selected or configured.
m4_define([HERD_MCA_orte_overlay_ofi_PRIORITY], [5])
