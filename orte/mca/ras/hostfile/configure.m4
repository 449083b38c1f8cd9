dnl ras hostfile: Open-MPI-style hostfiles and -H host lists.
AC_DEFUN([HERD_MCA_orte_ras_hostfile_CONFIG], [$1])
