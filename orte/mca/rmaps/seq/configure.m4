dnl rmaps seq: one process per line of a hostfile, in order.
AC_DEFUN([HERD_MCA_orte_rmaps_seq_CONFIG], [$1])
