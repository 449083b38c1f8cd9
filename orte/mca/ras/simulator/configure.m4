dnl SPDX-License-Identifier: BSD-3-Clause
dnl ras simulator: many virtual nodes on this host, each with an hwloc synthetic topology.
AC_DEFUN([HERD_MCA_orte_ras_simulator_CONFIG], [$1])
dnl Offers itself only when asked for virtual nodes, over every other ras.
m4_define([HERD_MCA_orte_ras_simulator_PRIORITY], [100])
m4_define([HERD_MCA_orte_ras_simulator_AVAILABLE_WHEN], [var:ras_simulator_num_nodes])
