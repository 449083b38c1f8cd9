/* SPDX-License-Identifier: BSD-3-Clause */
/* A per-boot cache of this node's fabric records, so that a daemon does not open libfabric and
 * UCX again at every DVM start when nothing that discovery sees has changed. */
#include "herd_config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/dss/buffer.h"
#include "opal/mca/base/mca_var.h"
#include "opal/mca/fabric/base/base.h"
#include "opal/util/hash.h"
#include "opal/util/output.h"
#include "opal/util/tmpdir.h"

#define FABRIC_CACHE_MAGIC   "herd-fabric-cache"
#define FABRIC_CACHE_MAX     (4u * 1024u * 1024u) /* larger is not ours: refused */
#define FABRIC_CACHE_RECORDS 64u

/* Adds a struct sockaddr's family and address bytes (not its padding) to hash. */
static uint64_t hash_sockaddr(uint64_t hash, const struct sockaddr *sa)
{
    if (NULL == sa) {
        return opal_hash_fnv1a(hash, "-", 1);
    }
    hash = opal_hash_fnv1a(hash, &sa->sa_family, sizeof(sa->sa_family));
    if (AF_INET == sa->sa_family) {
        const struct sockaddr_in *in = (const struct sockaddr_in *) sa;
        hash = opal_hash_fnv1a(hash, &in->sin_addr, sizeof(in->sin_addr));
    } else if (AF_INET6 == sa->sa_family) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *) sa;
        hash = opal_hash_fnv1a(hash, &in6->sin6_addr, sizeof(in6->sin6_addr));
        hash = opal_hash_fnv1a(hash, &in6->sin6_scope_id, sizeof(in6->sin6_scope_id));
    }
    return hash;
}

/* The names in a /sys/class folder (RDMA devices, network devices), sorted away by hashing
 * each name alone and adding them up: readdir's order is not stable. */
static uint64_t hash_sysfs_class(uint64_t hash, const char *path)
{
    uint64_t sum = 0;
    DIR *dir = opendir(path);
    if (NULL == dir) {
        return opal_hash_fnv1a_string(hash, path);
    }
    for (struct dirent *e = readdir(dir); NULL != e; e = readdir(dir)) {
        sum += opal_hash_fnv1a_string(OPAL_HASH_FNV1A_INIT, e->d_name);
    }
    closedir(dir);
    return opal_hash_fnv1a(hash, &sum, sizeof(sum));
}

/* What discovery sees, as one number: this host's name, its interfaces (name, flags, addresses),
 * its network and RDMA devices, the libfabric and UCX settings in the environment (FI_*, UCX_*),
 * which components were asked, and this build of herd. */
static uint64_t fabric_cache_key(const char *components)
{
    extern char **environ;
    uint64_t hash = opal_hash_fnv1a_string(OPAL_HASH_FNV1A_INIT, PACKAGE_VERSION);
    char host[256] = "";
    struct ifaddrs *ifs = NULL;
    uint64_t sum = 0;

    hash = opal_hash_fnv1a_string(hash, components);
    gethostname(host, sizeof(host) - 1);
    hash = opal_hash_fnv1a_string(hash, host);
    if (0 == getifaddrs(&ifs)) {
        for (const struct ifaddrs *i = ifs; NULL != i; i = i->ifa_next) {
            uint64_t one = opal_hash_fnv1a_string(OPAL_HASH_FNV1A_INIT, i->ifa_name);
            one = opal_hash_fnv1a(one, &i->ifa_flags, sizeof(i->ifa_flags));
            one = hash_sockaddr(one, i->ifa_addr);
            one = hash_sockaddr(one, i->ifa_netmask);
            sum += one; /* the order getifaddrs lists them in does not matter */
        }
        freeifaddrs(ifs);
    }
    hash = opal_hash_fnv1a(hash, &sum, sizeof(sum));
    hash = hash_sysfs_class(hash, "/sys/class/net");
    hash = hash_sysfs_class(hash, "/sys/class/infiniband");
    sum = 0;
    for (char **e = environ; NULL != e && NULL != *e; ++e) {
        if (0 == strncmp(*e, "FI_", 3) || 0 == strncmp(*e, "UCX_", 4)) {
            sum += opal_hash_fnv1a_string(OPAL_HASH_FNV1A_INIT, *e);
        }
    }
    return opal_hash_fnv1a(hash, &sum, sizeof(sum));
}

/* The cache file for this boot and key; HERD_ERR_NOT_SUPPORTED when there is none to use. */
static int fabric_cache_path(const char *components, char *path, size_t size)
{
    const char *use = getenv("HERD_FABRIC_CACHE");
    char boot[64] = "";
    char dir[512];
    FILE *f;

    /* a fabric variable set anywhere changes what discovery reports: only the defaults are
     * cached (the variables' registration needs the components loaded, the cost we avoid) */
    if ((NULL != use && 0 == strcmp(use, "0")) || opal_mca_var_any_set_under("fabric")) {
        return HERD_ERR_NOT_SUPPORTED;
    }
    f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (NULL == f) {
        return HERD_ERR_NOT_SUPPORTED;
    }
    if (NULL == fgets(boot, sizeof(boot), f)) {
        boot[0] = '\0';
    }
    fclose(f);
    boot[strcspn(boot, "\n")] = '\0';
    /* only a private folder of ours: someone else's file must never become our inventory */
    if ('\0' == boot[0] || HERD_SUCCESS != opal_private_tmpdir(dir, sizeof(dir))) {
        return HERD_ERR_NOT_SUPPORTED;
    }
    snprintf(path, size, "%s/fabric-v%u-%s-%016llx.bin", dir, OPAL_FABRIC_RECORD_FORMAT_VERSION,
             boot, (unsigned long long) fabric_cache_key(components));
    return HERD_SUCCESS;
}

static int fabric_cache_read(const char *path, opal_buffer_t *buffer)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    int rc = HERD_ERR_NOT_FOUND;
    if (fd < 0) {
        return HERD_ERR_NOT_FOUND;
    }
    if (0 == fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_size > 0 &&
        (size_t) st.st_size <= FABRIC_CACHE_MAX) {
        uint8_t *bytes = malloc((size_t) st.st_size);
        if (NULL != bytes && st.st_size == read(fd, bytes, (size_t) st.st_size)) {
            rc = opal_buffer_load(buffer, bytes, (size_t) st.st_size);
        }
        free(bytes);
    }
    close(fd);
    return rc;
}

int opal_fabric_base_cache_load(const char *components, opal_fabric_record_t ***records,
                                size_t *num_records)
{
    char path[1024];
    opal_buffer_t buffer;
    opal_fabric_record_t **found = NULL;
    char *magic = NULL;
    uint32_t count = 0;
    int rc;

    if (HERD_SUCCESS != fabric_cache_path(components, path, sizeof(path))) {
        return HERD_ERR_NOT_FOUND;
    }
    opal_buffer_init(&buffer);
    rc = fabric_cache_read(path, &buffer);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_unpack_string(&buffer, &magic);
    }
    if (HERD_SUCCESS == rc && (NULL == magic || 0 != strcmp(magic, FABRIC_CACHE_MAGIC))) {
        rc = HERD_ERR_UNPACK_FAILURE;
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_unpack_uint32(&buffer, &count);
    }
    if (HERD_SUCCESS == rc && (count > FABRIC_CACHE_RECORDS)) {
        rc = HERD_ERR_UNPACK_FAILURE;
    }
    if (HERD_SUCCESS == rc && count > 0 && NULL == (found = calloc(count, sizeof(*found)))) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < count; ++i) {
        rc = opal_fabric_record_unpack(&buffer, &found[i]);
    }
    if (HERD_SUCCESS == rc && 0 != opal_buffer_remaining(&buffer)) {
        rc = HERD_ERR_UNPACK_FAILURE;
    }
    free(magic);
    opal_buffer_destruct(&buffer);
    if (HERD_SUCCESS != rc) {
        opal_fabric_records_free(found, count);
        if (HERD_ERR_NOT_FOUND != rc) {
            opal_output_verbose(5, opal_fabric_base_framework.output,
                                "fabric: ignoring the unreadable cache %s: %s", path,
                                opal_strerror(rc));
        }
        return HERD_ERR_NOT_FOUND;
    }
    opal_output_verbose(10, opal_fabric_base_framework.output,
                        "fabric: %u record(s) from the cache %s", count, path);
    *records = found;
    *num_records = count;
    return HERD_SUCCESS;
}

void opal_fabric_base_cache_store(const char *components, opal_fabric_record_t *const *records,
                                  size_t num_records)
{
    char path[1024];
    char tmp[1100];
    opal_buffer_t buffer;
    int rc;

    if (num_records > FABRIC_CACHE_RECORDS ||
        HERD_SUCCESS != fabric_cache_path(components, path, sizeof(path))) {
        return;
    }
    opal_buffer_init(&buffer);
    rc = opal_buffer_pack_string(&buffer, FABRIC_CACHE_MAGIC);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_pack_uint32(&buffer, (uint32_t) num_records);
    }
    for (size_t i = 0; HERD_SUCCESS == rc && i < num_records; ++i) {
        rc = opal_fabric_record_pack(&buffer, records[i]);
    }
    /* written aside and renamed: a daemon reading it meanwhile sees the old file or the new */
    snprintf(tmp, sizeof(tmp), "%s.%d", path, (int) getpid());
    int fd = (HERD_SUCCESS == rc) ? open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600) : -1;
    if (fd >= 0) {
        bool written = (ssize_t) buffer.used == write(fd, buffer.base, buffer.used);
        close(fd);
        if (!written || 0 != rename(tmp, path)) {
            unlink(tmp);
        }
    }
    opal_buffer_destruct(&buffer);
}
