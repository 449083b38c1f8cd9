dnl SPDX-License-Identifier: BSD-3-Clause
dnl btl sm: shared-memory rings between the processes of a node (POSIX shm_open, C11 atomics).
AC_DEFUN([HERD_MCA_ompi_btl_sm_CONFIG], [
    HERD_MCA_ENDPOINT_TAG([sm])
    $1
])
