dnl SPDX-License-Identifier: BSD-3-Clause
dnl endpoint dynamic: run-time registered slots in a per-proc table behind the last slot of
dnl proc->endpoint[]; configure --disable-dynamic-endpoint-slots removes that slot, and with it
dnl this component.
AC_DEFUN([HERD_MCA_ompi_endpoint_dynamic_CONFIG], [
    AS_IF([test "$enable_dynamic_endpoint_slots" = yes], [$1],
          [herd_mca_reason="--disable-dynamic-endpoint-slots: procs have no dynamic slot"; $2])
])
