/* SPDX-License-Identifier: BSD-3-Clause */
/* wireup pmi1: what MPICH programs are told about the node. MPICH 4.0 discovers the node's
 * topology with hwloc in every process at MPI_Init, PCI devices included, and hwloc loads its
 * plugins for it (GL, OpenCL, libxml2, PCI): on a node of a few cores most of a process's own
 * start-up, paid once per process while the others spin in MPICH's shared-memory barrier. The
 * session daemon has the same topology in its cache (opal_topology_xml_file, with the I/O
 * objects), so its processes read it from there: HWLOC_XMLFILE, HWLOC_THISSYSTEM=1 (this very
 * node: binding works), and hwloc's discovery plugins left out (nothing is discovered). Nothing
 * is said when the user set any HWLOC_ variable, or with wireup_pmi1_topology_hint 0. */
#include "herd_config.h"

#include <stdio.h>
#include <string.h>

#include "opal/util/argv.h"
#include "opal/util/output.h"
#include "opal/util/topology.h"
#include "orte/mca/wireup/pmi1/wireup_pmi1.h"

int wireup_pmi1_hint_init(bool enabled, char *xml, size_t size)
{
    xml[0] = '\0';
    if (!enabled) {
        return HERD_SUCCESS;
    }
    int rc = opal_topology_xml_file(xml, size);
    if (HERD_SUCCESS != rc) {
        xml[0] = '\0';
        opal_output_verbose(5, orte_wireup_base_framework.output,
                            "wireup pmi1: no topology file for MPICH programs: %s",
                            opal_strerror(rc));
    }
    return HERD_SUCCESS;
}

int wireup_pmi1_hint(const char *xml, orte_wireup_child_t *child)
{
    if ('\0' == xml[0]) {
        return HERD_SUCCESS;
    }
    for (char **e = *child->env; NULL != e && NULL != *e; ++e) {
        if (0 == strncmp(*e, "HWLOC_", 6)) {
            return HERD_SUCCESS; /* the user's hwloc settings stay as they are */
        }
    }
    int rc = orte_wireup_child_setenv(child, "HWLOC_XMLFILE", xml);
    if (HERD_SUCCESS == rc) {
        rc = orte_wireup_child_setenv(child, "HWLOC_THISSYSTEM", "1");
    }
    if (HERD_SUCCESS == rc) {
        rc = orte_wireup_child_setenv(child, "HWLOC_PLUGINS_BLACKLIST", OPAL_TOPOLOGY_BLACKLIST);
    }
    return rc;
}
