dnl ras simulator: many virtual nodes on this host, each with an hwloc synthetic topology.
AC_DEFUN([HERD_MCA_orte_ras_simulator_CONFIG], [$1])
