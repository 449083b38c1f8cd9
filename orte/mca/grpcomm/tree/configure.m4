dnl SPDX-License-Identifier: BSD-3-Clause
dnl grpcomm tree: collectives along the DVM's radix tree.
AC_DEFUN([HERD_MCA_orte_grpcomm_tree_CONFIG], [$1])
m4_define([HERD_MCA_orte_grpcomm_tree_PRIORITY], [20])
