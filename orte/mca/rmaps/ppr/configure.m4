dnl rmaps ppr: N processes per resource (ppr:N:OBJ).
AC_DEFUN([HERD_MCA_orte_rmaps_ppr_CONFIG], [$1])
