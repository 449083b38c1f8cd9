dnl SPDX-License-Identifier: BSD-3-Clause
dnl btl self: messages a process sends to itself; always built.
AC_DEFUN([HERD_MCA_ompi_btl_self_CONFIG], [
    HERD_MCA_ENDPOINT_TAG([self])
    $1
])
