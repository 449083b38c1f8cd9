dnl errmgr abort: any failure ends the whole job (the default); always built.
AC_DEFUN([HERD_MCA_orte_errmgr_abort_CONFIG], [$1])
