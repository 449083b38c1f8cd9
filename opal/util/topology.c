/* SPDX-License-Identifier: BSD-3-Clause */
/* Loading this host's topology through a per-boot XML cache (opal/util/topology.h). */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/util/hash.h"
#include "opal/util/tmpdir.h"
#include "opal/util/topology.h"

/* FNV-1a over the allowed CPU mask: part of the cache file's name. */
static unsigned long long cpuset_hash(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (0 != sched_getaffinity(0, sizeof(set), &set)) {
        return 0;
    }
    return opal_hash_fnv1a(OPAL_HASH_FNV1A_INIT, &set, sizeof(set));
}

static int cache_path(char *path, size_t size)
{
    char boot[64] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (NULL == f) {
        return HERD_ERR_NOT_SUPPORTED;
    }
    if (NULL == fgets(boot, sizeof(boot), f)) {
        boot[0] = '\0';
    }
    fclose(f);
    boot[strcspn(boot, "\n")] = '\0';
    if ('\0' == boot[0]) {
        return HERD_ERR_NOT_SUPPORTED;
    }
    char dir[512];
    /* only a private folder of ours: someone else's file must never become our topology */
    int rc = opal_private_tmpdir(dir, sizeof(dir));
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    /* v2: restricted to our binding (a v1 file taken under taskset holds every CPU); v3: with
     * the I/O objects, for the programs that read it (opal_topology_xml_file) */
    snprintf(path, size, "%s/topology-v3-%s-%016llx-%x.xml", dir, boot, cpuset_hash(),
             (unsigned) hwloc_get_api_version());
    return HERD_SUCCESS;
}

static int load_xml_file(const char *path, hwloc_topology_t *topology)
{
    hwloc_topology_t topo;
    if (0 != hwloc_topology_init(&topo)) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    /* the cached XML describes this very host: keep its binding support */
    hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM);
    if (0 != hwloc_topology_set_xml(topo, path) || 0 != hwloc_topology_load(topo)) {
        hwloc_topology_destroy(topo);
        return HERD_ERR_NOT_FOUND;
    }
    *topology = topo;
    return HERD_SUCCESS;
}

/* Started under taskset, numactl or a batch system's binding: the CPUs outside our own mask
 * are not ours to hand out (mpirun does the same), so the topology holds only the rest. */
static void restrict_to_binding(hwloc_topology_t topo)
{
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    if (NULL == mine) {
        return;
    }
    if (0 == hwloc_get_cpubind(topo, mine, HWLOC_CPUBIND_PROCESS) && !hwloc_bitmap_iszero(mine) &&
        !hwloc_bitmap_isincluded(hwloc_topology_get_topology_cpuset(topo), mine)) {
        hwloc_topology_restrict(topo, mine, 0);
    }
    hwloc_bitmap_free(mine);
}

/* The first topology this process loaded, and the CPUs it was loaded under: a launch asks three
 * times (the allocation's slots, the inventory, the map), and each load after hwloc let go of its
 * last topology starts hwloc's plugins over, where a copy costs a twentieth of that. */
static pthread_mutex_t loaded_lock = PTHREAD_MUTEX_INITIALIZER;
static hwloc_topology_t loaded;
static unsigned long long loaded_cpus;

static int load_uncached(hwloc_topology_t *topology, bool file_cache);

int opal_topology_load_local(hwloc_topology_t *topology)
{
    const char *use = getenv("HERD_TOPOLOGY_CACHE");
    if (NULL != use && 0 == strcmp(use, "0")) {
        return load_uncached(topology, false);
    }
    unsigned long long cpus = cpuset_hash();
    int rc = HERD_SUCCESS;
    pthread_mutex_lock(&loaded_lock);
    if (NULL != loaded && loaded_cpus != cpus) {
        hwloc_topology_destroy(loaded);
        loaded = NULL;
    }
    if (NULL == loaded) {
        rc = load_uncached(&loaded, true);
        if (HERD_SUCCESS != rc) {
            loaded = NULL;
        }
        loaded_cpus = cpus;
    }
    if (HERD_SUCCESS == rc && 0 != hwloc_topology_dup(topology, loaded)) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
    }
    pthread_mutex_unlock(&loaded_lock);
    return rc;
}

/* This host's topology, discovered; with its I/O objects (PCI devices, NICs, disks) when with_io:
 * hwloc's PCI plugin, which herd's own processes leave out (opal_topology_prepare), is allowed for
 * this one discovery, while no other topology of ours holds hwloc's plugins. */
static int discover(hwloc_topology_t *topology, bool with_io)
{
    char *saved = NULL;
    const char *blacklist = getenv("HWLOC_PLUGINS_BLACKLIST");
    if (with_io && NULL != blacklist && NULL != getenv(OPAL_TOPOLOGY_DEFAULT_MARK)) {
        saved = strdup(blacklist);
        setenv("HWLOC_PLUGINS_BLACKLIST", OPAL_TOPOLOGY_IO_BLACKLIST, 1);
    }
    hwloc_topology_t topo;
    int rc = HERD_SUCCESS;
    if (0 != hwloc_topology_init(&topo)) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
    } else {
        if (with_io) {
            hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
        }
        if (0 != hwloc_topology_load(topo)) {
            hwloc_topology_destroy(topo);
            rc = HERD_ERROR;
        }
    }
    if (NULL != saved) {
        setenv("HWLOC_PLUGINS_BLACKLIST", saved, 1);
        free(saved);
    }
    if (HERD_SUCCESS == rc) {
        restrict_to_binding(topo);
        *topology = topo;
    }
    return rc;
}

/* Written whole under a temporary name, then renamed: readers never see half a file. */
static void write_cache(hwloc_topology_t topo, const char *path)
{
    char tmp[1100];
    snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int) getpid());
    if (0 == hwloc_topology_export_xml(topo, tmp, 0)) {
        chmod(tmp, 0600);
        if (0 != rename(tmp, path)) {
            unlink(tmp);
        }
    } else {
        unlink(tmp);
    }
}

/* Discovered, or read from the file cache when file_cache (and written there after a discovery,
 * with the I/O objects: herd reads it back without them, hwloc's default). */
static int load_uncached(hwloc_topology_t *topology, bool file_cache)
{
    char path[1024];
    bool cached = file_cache && HERD_SUCCESS == cache_path(path, sizeof(path));
    if (cached && HERD_SUCCESS == load_xml_file(path, topology)) {
        return HERD_SUCCESS;
    }
    hwloc_topology_t topo;
    int rc = discover(&topo, cached);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (!cached) {
        *topology = topo;
        return HERD_SUCCESS;
    }
    write_cache(topo, path);
    hwloc_topology_destroy(topo);
    if (HERD_SUCCESS == load_xml_file(path, topology)) {
        return HERD_SUCCESS;
    }
    /* the file cannot be read back (a full disk): herd's own discovery, without the I/O */
    unlink(path);
    return discover(topology, false);
}

int opal_topology_xml_file(char *path, size_t size)
{
    const char *use = getenv("HERD_TOPOLOGY_CACHE");
    if (NULL != use && 0 == strcmp(use, "0")) {
        return HERD_ERR_NOT_AVAILABLE;
    }
    hwloc_topology_t topo;
    int rc = opal_topology_load_local(&topo); /* makes the file when it is not there yet */
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    hwloc_topology_destroy(topo);
    rc = cache_path(path, size);
    if (HERD_SUCCESS == rc && 0 != access(path, R_OK)) {
        rc = HERD_ERR_NOT_FOUND;
    }
    return rc;
}

void opal_topology_prepare(void)
{
    /* hwloc_pci too: herd keeps no I/O objects (hwloc's default filter drops them), yet loading
     * the plugin pulls in libpciaccess, libz and libudev in every process */
    if (NULL == getenv("HWLOC_PLUGINS_BLACKLIST")) {
        setenv("HWLOC_PLUGINS_BLACKLIST", OPAL_TOPOLOGY_BLACKLIST, 1);
        setenv(OPAL_TOPOLOGY_DEFAULT_MARK, "1", 1);
    }
}
