dnl SPDX-License-Identifier: BSD-3-Clause
dnl fabric ucx: needs UCX's ucp and uct libraries (configure's --with-ucx check).
AC_DEFUN([HERD_MCA_opal_fabric_ucx_CONFIG], [
    AS_IF([test "$herd_have_UCX" = yes], [$1], [herd_mca_reason="UCX not found"; $2])
])
