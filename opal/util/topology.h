/* SPDX-License-Identifier: BSD-3-Clause */
/* This host's hwloc topology, discovered once per boot and cpuset and then loaded from a cached
 * XML: discovery costs milliseconds, and every daemon and launcher of a node needs it. */
#ifndef OPAL_UTIL_TOPOLOGY_H
#define OPAL_UTIL_TOPOLOGY_H

#include <stdbool.h>

#include <hwloc.h>

#include "opal/status.h"
#include "opal/visibility.h"

/* The topology of this host as this process sees it: only the CPUs of its binding (taskset,
 * numactl, a batch system's cpuset), as mpirun takes its own binding. The cache is a file in
 * $TMPDIR/herd-<uid>/ (mode 0700) named by the boot id, the allowed CPUs and the hwloc version,
 * so a reboot, a different cgroup or another hwloc never reuses it. The first topology a process
 * loads is kept, and later calls (under the same binding) get a copy of it, without I/O objects
 * (hwloc's default; the file has them, opal_topology_xml_file). HERD_TOPOLOGY_CACHE=0
 * turns both off. *topology (destroy it with hwloc_topology_destroy) set only on success. */
OPAL_EXPORT int opal_topology_load_local(hwloc_topology_t *topology);

/* The cache file of this host's topology (restricted to this process's binding, with the I/O
 * objects hwloc finds with its PCI plugin: PCI devices, NICs, disks, not GL or OpenCL devices),
 * made now if it is not there yet, into path. For programs to read instead of discovering the
 * topology themselves (HWLOC_XMLFILE): the same machine, found in a fraction of the time.
 * HERD_ERR_NOT_AVAILABLE with HERD_TOPOLOGY_CACHE=0; an error when it cannot be made. */
OPAL_EXPORT int opal_topology_xml_file(char *path, size_t size);

/* The plugins herd's processes leave out (opal_topology_prepare), and those left out of the
 * discovery that writes the cache (GL connects to displays, OpenCL loads a driver). */
#define OPAL_TOPOLOGY_BLACKLIST    "hwloc_gl,hwloc_opencl,hwloc_xml_libxml,hwloc_pci"
#define OPAL_TOPOLOGY_IO_BLACKLIST "hwloc_gl,hwloc_opencl,hwloc_xml_libxml"

/* Keep hwloc from loading its GL, OpenCL, libxml2 and PCI plugins in herd's processes (a
 * launcher has no use for displays or OpenCL devices, hwloc's own XML parser reads what herd
 * writes, and herd keeps no I/O objects): their dynamic loading was a large part of every
 * process's start (docs/bench.md). Sets HWLOC_PLUGINS_BLACKLIST unless the user did, and then
 * OPAL_TOPOLOGY_DEFAULT_MARK so that variable is not handed to applications. Call before anything
 * uses hwloc. */
#define OPAL_TOPOLOGY_DEFAULT_MARK "HERD_HWLOC_BLACKLIST_DEFAULT"
OPAL_EXPORT void opal_topology_prepare(void);

#endif /* OPAL_UTIL_TOPOLOGY_H */
