/* SPDX-License-Identifier: BSD-3-Clause */
/* A node's job database in POSIX shared memory: the session daemon writes, procs read in place. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/util/hash.h"
#include "opal/util/show_help.h"
#include "opal/util/jobdb.h"
#include "opal/util/jobdb_internal.h"

/* Readers load these flags in another process through a read-only mapping: only a lock-free
 * atomic is safe there (a lock would be private to each process, and would need writing). */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "32-bit atomics must be lock-free");
_Static_assert(sizeof(opal_jobdb_header_t) % 8 == 0, "the header keeps regions aligned");
_Static_assert(sizeof(opal_jobdb_record_t) % 8 == 0, "records keep regions aligned");
_Static_assert(sizeof(opal_jobdb_node_entry_t) % 8 == 0, "node entries keep regions aligned");
_Static_assert(sizeof(opal_jobdb_fabric_entry_t) % 8 == 0, "fabric entries keep regions aligned");
_Static_assert(sizeof(opal_jobdb_addr_t) % 8 == 0, "addresses keep regions aligned");

#define JOBDB_STRING_CACHE  4096u          /* recent strings remembered to store repeats once */
#define JOBDB_DEFAULT_SLOT  8u
#define JOBDB_STRINGS_PROC  32u
#define JOBDB_STRINGS_NODE  64u
#define JOBDB_STRINGS_EXTRA 4096u
#define JOBDB_DEFAULT_ADDRS 4u
#define JOBDB_STRINGS_FABRIC 512u /* a fabric's reason for modex */

static const char *help_file = "help-jobdb.txt";


/* Which regions a segment has, from the counts and sizes the creator chose. */
typedef struct jobdb_counts {
    uint32_t num_procs;
    uint32_t num_nodes;
    uint32_t slots;
    uint32_t slot_size;
    uint32_t num_fabrics;
    uint32_t fabric_addrs;
    uint64_t string_bytes;
} jobdb_counts_t;

static uint64_t align8(uint64_t n)
{
    return (n + 7u) & ~(uint64_t) 7u;
}

static bool valid_name_part(const char *part)
{
    return NULL != part && '\0' != part[0] && NULL == strchr(part, '/');
}

int opal_jobdb_segment_name(const char *jobid, const char *node_name, char *buf, size_t size)
{
    char name[JOBDB_NAME_MAX];
    if (!valid_name_part(jobid) || !valid_name_part(node_name) || NULL == buf) {
        return HERD_ERR_BAD_PARAM;
    }
    int n =
        snprintf(name, sizeof(name), "/herd-%lu-%s-%s", (unsigned long) getuid(), jobid, node_name);
    if (n < 0 || (size_t) n >= sizeof(name) || (size_t) n >= size) {
        return HERD_ERR_BAD_PARAM;
    }
    memcpy(buf, name, (size_t) n + 1);
    return HERD_SUCCESS;
}

int opal_jobdb_rank_segment_name(const char *jobid, const char *node_name, const char *what,
                                 uint32_t rank, char *buf, size_t size)
{
    char tag[OPAL_JOBDB_ID_MAX + 64];
    if (!valid_name_part(jobid) || !valid_name_part(what) ||
        snprintf(tag, sizeof(tag), "%s.%s%u", jobid, what, rank) >= (int) sizeof(tag)) {
        return HERD_ERR_BAD_PARAM;
    }
    return opal_jobdb_segment_name(tag, node_name, buf, size);
}

/* Bytes of one proc's ports: a uint16_t per fabric, rounded up so the region stays aligned. */
static uint64_t ports_bytes(uint64_t num_procs, uint32_t num_fabrics)
{
    return align8(num_procs * num_fabrics * sizeof(uint16_t));
}

/* Where each region goes, from the counts and sizes; false if it would not fit in 64 bits. */
static bool plan_layout(const jobdb_counts_t *c, opal_jobdb_header_t *h)
{
    h->header_size = sizeof(opal_jobdb_header_t);
    h->record_size = sizeof(opal_jobdb_record_t);
    h->num_procs = c->num_procs;
    h->num_nodes = c->num_nodes;
    h->endpoint_slots = c->slots;
    h->endpoint_slot_size = c->slot_size;
    h->num_fabrics = c->num_fabrics;
    h->fabric_addrs = c->fabric_addrs;
    /* Every product below is of 32-bit factors bounded by the checks in create: no overflow. */
    h->records_offset = h->header_size;
    h->endpoints_offset = h->records_offset + (uint64_t) c->num_procs * h->record_size;
    h->nodes_offset = align8(h->endpoints_offset +
                             (uint64_t) c->num_procs * c->slots * (uint64_t) c->slot_size);
    h->fabrics_offset =
        h->nodes_offset + (uint64_t) c->num_nodes * sizeof(opal_jobdb_node_entry_t);
    h->addrs_offset =
        h->fabrics_offset + (uint64_t) c->num_fabrics * sizeof(opal_jobdb_fabric_entry_t);
    h->ports_offset = h->addrs_offset + (uint64_t) c->num_fabrics * c->num_nodes *
                                            c->fabric_addrs * sizeof(opal_jobdb_addr_t);
    h->strings_offset = h->ports_offset + ports_bytes(c->num_procs, c->num_fabrics);
    h->strings_size = align8(c->string_bytes);
    h->segment_size = h->strings_offset + h->strings_size;
    return h->segment_size <= (uint64_t) SIZE_MAX && h->segment_size <= (uint64_t) INT64_MAX;
}

/* Point the handle's region pointers into the mapping, from a header already checked. */
static void set_regions(opal_jobdb_t *db)
{
    const opal_jobdb_header_t *h = (const opal_jobdb_header_t *) db->base;
    db->header = h;
    db->records = (opal_jobdb_record_t *) (db->base + h->records_offset);
    db->endpoints = db->base + h->endpoints_offset;
    db->nodes = (opal_jobdb_node_entry_t *) (db->base + h->nodes_offset);
    db->fabrics = (opal_jobdb_fabric_entry_t *) (db->base + h->fabrics_offset);
    db->addrs = (opal_jobdb_addr_t *) (db->base + h->addrs_offset);
    db->ports = (uint16_t *) (db->base + h->ports_offset);
    db->strings = (char *) (db->base + h->strings_offset);
}

static int report_create_error(const char *name, const char *jobid, uint64_t size, int err)
{
    char bytes[32];
    snprintf(bytes, sizeof(bytes), "%llu", (unsigned long long) size);
    if (EEXIST == err) {
        opal_show_help(help_file, "exists", true, name, jobid, jobid, name);
        return HERD_ERR_EXISTS;
    }
    if (ENOSPC == err || EFBIG == err || ENOMEM == err) {
        opal_show_help(help_file, "no-space", true, name, jobid, bytes, strerror(err));
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    opal_show_help(help_file, "create-failed", true, name, jobid, bytes, strerror(err));
    errno = err;
    return HERD_ERR_IN_ERRNO;
}

int opal_jobdb_create(const char *jobid, const char *node_name, uint32_t num_procs,
                      uint32_t num_nodes, const opal_jobdb_layout_t *sizes, opal_jobdb_t **db)
{
    opal_jobdb_header_t plan;
    int rc;
    if (NULL == db || 0 == num_procs || 0 == num_nodes || NULL == jobid || NULL == node_name ||
        strlen(jobid) >= OPAL_JOBDB_ID_MAX || strlen(node_name) >= OPAL_JOBDB_NODE_MAX) {
        return HERD_ERR_BAD_PARAM;
    }
    uint32_t slots = (NULL != sizes) ? sizes->endpoint_slots : 0;
    uint32_t slot_size = (NULL != sizes && 0 != sizes->endpoint_slot_size)
                             ? sizes->endpoint_slot_size
                             : JOBDB_DEFAULT_SLOT;
    uint32_t num_fabrics = (NULL != sizes) ? sizes->num_fabrics : 0;
    uint32_t fabric_addrs = (NULL != sizes && 0 != sizes->fabric_addrs) ? sizes->fabric_addrs
                                                                         : JOBDB_DEFAULT_ADDRS;
    if (slots > OPAL_JOBDB_MAX_SLOTS || slot_size > OPAL_JOBDB_MAX_SLOT_SIZE ||
        num_fabrics > OPAL_JOBDB_MAX_FABRICS || fabric_addrs > OPAL_JOBDB_MAX_ADDRS) {
        return HERD_ERR_BAD_PARAM;
    }
    if (0 == num_fabrics) {
        fabric_addrs = 0;
    }
    slot_size = (uint32_t) align8(slot_size);
    uint64_t string_bytes = (NULL != sizes) ? sizes->string_bytes : 0;
    if (0 == string_bytes) {
        string_bytes = (uint64_t) num_procs * JOBDB_STRINGS_PROC +
                       (uint64_t) num_nodes * JOBDB_STRINGS_NODE +
                       (uint64_t) num_fabrics * JOBDB_STRINGS_FABRIC + JOBDB_STRINGS_EXTRA;
    }
    /* Records hold 32-bit string offsets. */
    if (string_bytes > UINT32_MAX - 8u) {
        return HERD_ERR_BAD_PARAM;
    }
    memset(&plan, 0, sizeof(plan));
    jobdb_counts_t counts = {.num_procs = num_procs,
                             .num_nodes = num_nodes,
                             .slots = slots,
                             .slot_size = slot_size,
                             .num_fabrics = num_fabrics,
                             .fabric_addrs = fabric_addrs,
                             .string_bytes = string_bytes};
    if (!plan_layout(&counts, &plan)) {
        return HERD_ERR_BAD_PARAM;
    }

    opal_jobdb_t *handle = calloc(1, sizeof(*handle));
    if (NULL == handle) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    rc = opal_jobdb_segment_name(jobid, node_name, handle->name, sizeof(handle->name));
    if (HERD_SUCCESS != rc) {
        goto err_handle;
    }
    handle->string_cache = calloc(JOBDB_STRING_CACHE, sizeof(uint32_t));
    if (NULL == handle->string_cache) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto err_handle;
    }
    int fd = shm_open(handle->name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        rc = report_create_error(handle->name, jobid, plan.segment_size, errno);
        goto err_cache;
    }
    /* Reserve the pages now: a sparse tmpfs file that cannot be filled later would kill the
     * writer with SIGBUS instead of an error. ftruncate first, as fallocate alone is not
     * supported everywhere (glibc then writes the blocks itself). */
    int err = 0;
    if (0 != ftruncate(fd, (off_t) plan.segment_size)) {
        err = errno;
    } else {
        err = posix_fallocate(fd, 0, (off_t) plan.segment_size);
    }
    if (0 != err) {
        rc = report_create_error(handle->name, jobid, plan.segment_size, err);
        goto err_unlink;
    }
    void *base = mmap(NULL, (size_t) plan.segment_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (MAP_FAILED == base) {
        rc = report_create_error(handle->name, jobid, plan.segment_size, errno);
        goto err_unlink;
    }
    close(fd);

    handle->base = base;
    handle->size = (size_t) plan.segment_size;
    handle->writer = true;
    opal_jobdb_header_t *h = (opal_jobdb_header_t *) base;
    /* The file reads as zeroes: only the header needs writing, the magic last. */
    h->version = OPAL_JOBDB_FORMAT_VERSION;
    h->header_size = plan.header_size;
    h->record_size = plan.record_size;
    h->segment_size = plan.segment_size;
    h->num_procs = plan.num_procs;
    h->num_nodes = plan.num_nodes;
    h->endpoint_slots = plan.endpoint_slots;
    h->endpoint_slot_size = plan.endpoint_slot_size;
    h->records_offset = plan.records_offset;
    h->endpoints_offset = plan.endpoints_offset;
    h->nodes_offset = plan.nodes_offset;
    h->strings_offset = plan.strings_offset;
    h->strings_size = plan.strings_size;
    h->num_fabrics = plan.num_fabrics;
    h->fabric_addrs = plan.fabric_addrs;
    h->fabrics_offset = plan.fabrics_offset;
    h->addrs_offset = plan.addrs_offset;
    h->ports_offset = plan.ports_offset;
    snprintf(h->jobid, sizeof(h->jobid), "%s", jobid);
    snprintf(h->node_name, sizeof(h->node_name), "%s", node_name);
    atomic_store_explicit(&h->magic, OPAL_JOBDB_MAGIC, memory_order_release);
    set_regions(handle);
    *db = handle;
    return HERD_SUCCESS;

err_unlink:
    close(fd);
    shm_unlink(handle->name);
err_cache:
    free(handle->string_cache);
err_handle:
    free(handle);
    return rc;
}

/* Store text in the string area (once for repeats): its offset and length. */
static int store_string(opal_jobdb_t *db, const char *text, uint32_t *offset, uint32_t *length)
{
    size_t len = strlen(text);
    uint64_t hash = opal_hash_fnv1a(OPAL_HASH_FNV1A_INIT, text, len);
    uint32_t *slot = &db->string_cache[hash % JOBDB_STRING_CACHE];
    if (0 != *slot) {
        uint32_t at = *slot - 1;
        if (0 == strcmp(db->strings + at, text)) {
            *offset = at;
            *length = (uint32_t) len;
            return HERD_SUCCESS;
        }
    }
    if (len + 1 > db->header->strings_size - db->strings_used) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    uint32_t at = (uint32_t) db->strings_used;
    memcpy(db->strings + at, text, len + 1);
    db->strings_used += len + 1;
    *slot = at + 1;
    *offset = at;
    *length = (uint32_t) len;
    return HERD_SUCCESS;
}

static int report_strings_full(const opal_jobdb_t *db, const char *what)
{
    char bytes[32];
    snprintf(bytes, sizeof(bytes), "%llu", (unsigned long long) db->header->strings_size);
    opal_show_help(help_file, "strings-full", true, db->header->jobid, db->header->node_name, bytes,
                   what);
    return HERD_ERR_OUT_OF_RESOURCE;
}

int opal_jobdb_move_proc(opal_jobdb_t *db, uint32_t rank, uint32_t node)
{
    if (NULL == db || !db->writer || rank >= db->header->num_procs ||
        node >= db->header->num_nodes) {
        return HERD_ERR_BAD_PARAM;
    }
    opal_jobdb_record_t *rec = &db->records[rank];
    if (1u != atomic_load_explicit(&rec->ready, memory_order_acquire)) {
        return HERD_ERR_NOT_FOUND;
    }
    /* one aligned word: a reader sees the old node or the new one */
    rec->node = node;
    atomic_thread_fence(memory_order_release);
    return HERD_SUCCESS;
}

int opal_jobdb_put_proc(opal_jobdb_t *db, const opal_jobdb_proc_t *proc)
{
    if (NULL == db || !db->writer || NULL == proc) {
        return HERD_ERR_BAD_PARAM;
    }
    const opal_jobdb_header_t *h = db->header;
    uint64_t endpoint_bytes = (uint64_t) h->endpoint_slots * h->endpoint_slot_size;
    if (proc->rank >= h->num_procs || proc->node >= h->num_nodes ||
        proc->endpoints_length > endpoint_bytes ||
        (NULL == proc->endpoints && 0 != proc->endpoints_length)) {
        return HERD_ERR_BAD_PARAM;
    }
    opal_jobdb_record_t *rec = &db->records[proc->rank];
    if (0 != atomic_load_explicit(&rec->ready, memory_order_relaxed)) {
        return HERD_ERR_EXISTS;
    }
    uint32_t cpuset_offset, cpuset_length, locality_offset, locality_length;
    int rc =
        store_string(db, NULL != proc->cpuset ? proc->cpuset : "", &cpuset_offset, &cpuset_length);
    if (HERD_SUCCESS == rc) {
        rc = store_string(db, NULL != proc->locality ? proc->locality : "", &locality_offset,
                          &locality_length);
    }
    if (HERD_SUCCESS != rc) {
        /* A cpuset stored before the locality failed stays, unused: it may be shared already. */
        char what[64];
        snprintf(what, sizeof(what), "rank %u", proc->rank);
        return report_strings_full(db, what);
    }
    rec->node = proc->node;
    rec->local_rank = proc->local_rank;
    rec->node_rank = proc->node_rank;
    rec->app = proc->app;
    rec->flags = proc->bound ? OPAL_JOBDB_PROC_BOUND : 0;
    rec->cpuset_offset = cpuset_offset;
    rec->cpuset_length = cpuset_length;
    rec->locality_offset = locality_offset;
    rec->locality_length = locality_length;
    if (0 != endpoint_bytes && 0 != proc->endpoints_length) {
        memcpy(db->endpoints + (uint64_t) proc->rank * endpoint_bytes, proc->endpoints,
               proc->endpoints_length);
    }
    if (0 != h->num_fabrics && NULL != proc->ports) {
        memcpy(db->ports + (uint64_t) proc->rank * h->num_fabrics, proc->ports,
               h->num_fabrics * sizeof(uint16_t));
    }
    atomic_store_explicit(&rec->ready, 1u, memory_order_release);
    db->procs_put++;
    return HERD_SUCCESS;
}

int opal_jobdb_set_node(opal_jobdb_t *db, uint32_t index, const char *name)
{
    if (NULL == db || !db->writer || NULL == name || index >= db->header->num_nodes) {
        return HERD_ERR_BAD_PARAM;
    }
    opal_jobdb_node_entry_t *entry = &db->nodes[index];
    if (0 != atomic_load_explicit(&entry->ready, memory_order_relaxed)) {
        return HERD_ERR_EXISTS;
    }
    uint32_t offset, length;
    if (HERD_SUCCESS != store_string(db, name, &offset, &length)) {
        char what[64];
        snprintf(what, sizeof(what), "node %u", index);
        return report_strings_full(db, what);
    }
    entry->name_offset = offset;
    entry->name_length = length;
    atomic_store_explicit(&entry->ready, 1u, memory_order_release);
    db->nodes_set++;
    return HERD_SUCCESS;
}

int opal_jobdb_set_fabric(opal_jobdb_t *db, uint32_t index, const char *name, bool assigned,
                          uint32_t first_port, uint32_t num_ports, const char *reason)
{
    if (NULL == db || !db->writer || index >= db->header->num_fabrics || NULL == name ||
        '\0' == name[0] || strlen(name) >= OPAL_JOBDB_FABRIC_NAME_MAX || first_port > UINT16_MAX ||
        num_ports > UINT16_MAX + 1u) {
        return HERD_ERR_BAD_PARAM;
    }
    opal_jobdb_fabric_entry_t *entry = &db->fabrics[index];
    if (0 != atomic_load_explicit(&entry->ready, memory_order_relaxed)) {
        return HERD_ERR_EXISTS;
    }
    uint32_t offset, length;
    if (HERD_SUCCESS != store_string(db, (assigned || NULL == reason) ? "" : reason, &offset,
                                     &length)) {
        char what[96];
        snprintf(what, sizeof(what), "fabric %s", name);
        return report_strings_full(db, what);
    }
    entry->state = assigned ? OPAL_JOBDB_FABRIC_ASSIGNED : OPAL_JOBDB_FABRIC_MODEX;
    entry->reason_offset = offset;
    entry->reason_length = length;
    entry->first_port = first_port;
    entry->num_ports = num_ports;
    memcpy(entry->name, name, strlen(name) + 1);
    atomic_store_explicit(&entry->ready, 1u, memory_order_release);
    return HERD_SUCCESS;
}

int opal_jobdb_set_fabric_addrs(opal_jobdb_t *db, uint32_t fabric, uint32_t node,
                                const opal_jobdb_addr_t *addrs, uint32_t num_addrs)
{
    if (NULL == db || !db->writer || fabric >= db->header->num_fabrics ||
        node >= db->header->num_nodes || num_addrs > db->header->fabric_addrs ||
        (NULL == addrs && 0 != num_addrs)) {
        return HERD_ERR_BAD_PARAM;
    }
    for (uint32_t i = 0; i < num_addrs; ++i) {
        if (OPAL_JOBDB_ADDR_IPV4 != addrs[i].family && OPAL_JOBDB_ADDR_IPV6 != addrs[i].family) {
            return HERD_ERR_BAD_PARAM;
        }
    }
    const opal_jobdb_header_t *h = db->header;
    opal_jobdb_addr_t *slot =
        &db->addrs[((uint64_t) fabric * h->num_nodes + node) * h->fabric_addrs];
    if (num_addrs > 0) {
        memcpy(slot, addrs, num_addrs * sizeof(*addrs));
    }
    /* the segment reads as zeroes: the rest of the node's slots already say "none" */
    return HERD_SUCCESS;
}

int opal_jobdb_finish(opal_jobdb_t *db)
{
    if (NULL == db || !db->writer) {
        return HERD_ERR_BAD_PARAM;
    }
    if (db->procs_put != db->header->num_procs || db->nodes_set != db->header->num_nodes) {
        return HERD_ERR_NOT_FOUND;
    }
    opal_jobdb_header_t *h = (opal_jobdb_header_t *) db->base;
    atomic_store_explicit(&h->complete, 1u, memory_order_release);
    return HERD_SUCCESS;
}

static void release(opal_jobdb_t *db)
{
    munmap(db->base, db->size);
    free(db->string_cache);
    free(db);
}

void opal_jobdb_destroy(opal_jobdb_t *db)
{
    if (NULL == db) {
        return;
    }
    if (db->writer) {
        shm_unlink(db->name);
    }
    release(db);
}

void opal_jobdb_detach(opal_jobdb_t *db)
{
    opal_jobdb_destroy(db);
}

/* A region [offset, offset + count * unit) inside the segment, after minimum, 8-byte aligned. */
static bool region_fits(uint64_t offset, uint64_t count, uint64_t unit, uint64_t minimum,
                        uint64_t size)
{
    if (offset < minimum || offset > size || 0 != offset % 8) {
        return false;
    }
    /* count and unit are at most 32-bit and 64 KiB-ish products: check before multiplying. */
    if (0 != unit && count > (size - offset) / unit) {
        return false;
    }
    return true;
}

/* Why a header cannot be used, or NULL when it can. */
static const char *check_header(const opal_jobdb_header_t *h, uint64_t size, int *rc)
{
    *rc = HERD_ERR_UNPACK_FAILURE;
    if (OPAL_JOBDB_MAGIC != atomic_load_explicit(&h->magic, memory_order_acquire)) {
        return "it is not a herd job database (bad magic number), or is still being created";
    }
    if (OPAL_JOBDB_FORMAT_VERSION != h->version) {
        *rc = HERD_ERR_VERSION_MISMATCH;
        return "its format version differs from this herd's";
    }
    if (sizeof(opal_jobdb_header_t) != h->header_size ||
        sizeof(opal_jobdb_record_t) != h->record_size) {
        return "its header or record size is not the one of its format version";
    }
    if (h->segment_size != size) {
        return "its size differs from the one its header records (truncated?)";
    }
    if (0 == h->num_procs || 0 == h->num_nodes || h->endpoint_slots > OPAL_JOBDB_MAX_SLOTS ||
        h->endpoint_slot_size > OPAL_JOBDB_MAX_SLOT_SIZE || 0 != h->endpoint_slot_size % 8 ||
        h->strings_size > UINT32_MAX) {
        return "its counts are out of range";
    }
    uint64_t endpoint_bytes = (uint64_t) h->endpoint_slots * h->endpoint_slot_size;
    if (!region_fits(h->records_offset, h->num_procs, h->record_size, h->header_size, size) ||
        !region_fits(h->endpoints_offset, h->num_procs, endpoint_bytes,
                     h->records_offset + (uint64_t) h->num_procs * h->record_size, size)) {
        return "its records or endpoints lie outside the segment";
    }
    uint64_t endpoints_end = h->endpoints_offset + (uint64_t) h->num_procs * endpoint_bytes;
    if (!region_fits(h->nodes_offset, h->num_nodes, sizeof(opal_jobdb_node_entry_t), endpoints_end,
                     size)) {
        return "its node table lies outside the segment";
    }
    uint64_t nodes_end =
        h->nodes_offset + (uint64_t) h->num_nodes * sizeof(opal_jobdb_node_entry_t);
    if (h->num_fabrics > OPAL_JOBDB_MAX_FABRICS || h->fabric_addrs > OPAL_JOBDB_MAX_ADDRS) {
        return "its fabric counts are out of range";
    }
    uint64_t addrs_per_fabric = (uint64_t) h->num_nodes * h->fabric_addrs;
    if (!region_fits(h->fabrics_offset, h->num_fabrics, sizeof(opal_jobdb_fabric_entry_t),
                     nodes_end, size) ||
        !region_fits(h->addrs_offset, (uint64_t) h->num_fabrics * addrs_per_fabric,
                     sizeof(opal_jobdb_addr_t),
                     h->fabrics_offset +
                         (uint64_t) h->num_fabrics * sizeof(opal_jobdb_fabric_entry_t),
                     size) ||
        !region_fits(h->ports_offset, 1, ports_bytes(h->num_procs, h->num_fabrics),
                     h->addrs_offset + (uint64_t) h->num_fabrics * addrs_per_fabric *
                                           sizeof(opal_jobdb_addr_t),
                     size)) {
        return "its fabric table, addresses or ports lie outside the segment";
    }
    uint64_t ports_end = h->ports_offset + ports_bytes(h->num_procs, h->num_fabrics);
    if (!region_fits(h->strings_offset, 1, h->strings_size, ports_end, size)) {
        return "its string area lies outside the segment";
    }
    if (NULL == memchr(h->jobid, '\0', sizeof(h->jobid)) ||
        NULL == memchr(h->node_name, '\0', sizeof(h->node_name))) {
        return "its job id or node name is not terminated";
    }
    *rc = HERD_SUCCESS;
    return NULL;
}

int opal_jobdb_attach(const char *name, opal_jobdb_t **db)
{
    struct stat st;
    int rc;
    if (NULL == name || NULL == db || strlen(name) >= JOBDB_NAME_MAX) {
        return HERD_ERR_BAD_PARAM;
    }
    int fd = shm_open(name, O_RDONLY, 0);
    if (fd < 0) {
        int err = errno;
        opal_show_help(help_file, "attach-failed", true, name, strerror(err));
        errno = err;
        return (ENOENT == err) ? HERD_ERR_NOT_FOUND : HERD_ERR_IN_ERRNO;
    }
    if (0 != fstat(fd, &st)) {
        int err = errno;
        close(fd);
        opal_show_help(help_file, "attach-failed", true, name, strerror(err));
        errno = err;
        return HERD_ERR_IN_ERRNO;
    }
    if ((uint64_t) st.st_size < sizeof(opal_jobdb_header_t) || (uint64_t) st.st_size > SIZE_MAX) {
        close(fd);
        opal_show_help(help_file, "corrupt", true, name,
                       "it is too small to hold a header (truncated, or still being created)");
        return HERD_ERR_UNPACK_FAILURE;
    }
    void *base = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    int err = errno;
    close(fd);
    if (MAP_FAILED == base) {
        opal_show_help(help_file, "attach-failed", true, name, strerror(err));
        errno = err;
        return HERD_ERR_IN_ERRNO;
    }
    const char *why = check_header((const opal_jobdb_header_t *) base, (uint64_t) st.st_size, &rc);
    if (NULL != why) {
        if (HERD_ERR_VERSION_MISMATCH == rc) {
            opal_show_help(help_file, "version", true, name,
                           ((const opal_jobdb_header_t *) base)->version,
                           OPAL_JOBDB_FORMAT_VERSION);
        } else {
            opal_show_help(help_file, "corrupt", true, name, why);
        }
        munmap(base, (size_t) st.st_size);
        return rc;
    }
    opal_jobdb_t *handle = calloc(1, sizeof(*handle));
    if (NULL == handle) {
        munmap(base, (size_t) st.st_size);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    snprintf(handle->name, sizeof(handle->name), "%s", name);
    handle->base = base;
    handle->size = (size_t) st.st_size;
    set_regions(handle);
    *db = handle;
    return HERD_SUCCESS;
}

/* A string of a ready record: inside the area and NUL-terminated where its length says. */
static const char *string_at(const opal_jobdb_t *db, uint32_t offset, uint32_t length)
{
    uint64_t end = (uint64_t) offset + length;
    if (end >= db->header->strings_size || '\0' != db->strings[end]) {
        return NULL;
    }
    return db->strings + offset;
}

int opal_jobdb_get_proc(const opal_jobdb_t *db, uint32_t rank, opal_jobdb_proc_view_t *view)
{
    if (NULL == db || NULL == view) {
        return HERD_ERR_BAD_PARAM;
    }
    const opal_jobdb_header_t *h = db->header;
    if (rank >= h->num_procs) {
        return HERD_ERR_BAD_PARAM;
    }
    const opal_jobdb_record_t *rec = &db->records[rank];
    if (1u != atomic_load_explicit(&rec->ready, memory_order_acquire)) {
        return HERD_ERR_NOT_FOUND;
    }
    const char *cpuset = string_at(db, rec->cpuset_offset, rec->cpuset_length);
    const char *locality = string_at(db, rec->locality_offset, rec->locality_length);
    if (NULL == cpuset || NULL == locality || rec->node >= h->num_nodes) {
        char why[96];
        snprintf(why, sizeof(why), "the record of rank %u points outside the segment", rank);
        opal_show_help(help_file, "corrupt", true, db->name, why);
        return HERD_ERR_UNPACK_FAILURE;
    }
    view->rank = rank;
    view->app = rec->app;
    view->node = rec->node;
    view->local_rank = rec->local_rank;
    view->node_rank = rec->node_rank;
    view->bound = 0 != (rec->flags & OPAL_JOBDB_PROC_BOUND);
    view->cpuset = cpuset;
    view->locality = locality;
    uint64_t endpoint_bytes = (uint64_t) h->endpoint_slots * h->endpoint_slot_size;
    view->endpoints = (0 == endpoint_bytes) ? NULL : db->endpoints + rank * endpoint_bytes;
    return HERD_SUCCESS;
}

const char *opal_jobdb_node_name(const opal_jobdb_t *db, uint32_t index)
{
    if (NULL == db || index >= db->header->num_nodes) {
        return NULL;
    }
    const opal_jobdb_node_entry_t *entry = &db->nodes[index];
    if (1u != atomic_load_explicit(&entry->ready, memory_order_acquire)) {
        return NULL;
    }
    return string_at(db, entry->name_offset, entry->name_length);
}

uint32_t opal_jobdb_num_fabrics(const opal_jobdb_t *db)
{
    return NULL != db ? db->header->num_fabrics : 0;
}

int opal_jobdb_get_fabric(const opal_jobdb_t *db, uint32_t index, opal_jobdb_fabric_view_t *view)
{
    if (NULL == db || NULL == view || index >= db->header->num_fabrics) {
        return HERD_ERR_BAD_PARAM;
    }
    const opal_jobdb_fabric_entry_t *entry = &db->fabrics[index];
    if (1u != atomic_load_explicit(&entry->ready, memory_order_acquire)) {
        return HERD_ERR_NOT_FOUND;
    }
    const char *reason = string_at(db, entry->reason_offset, entry->reason_length);
    if (NULL == reason || NULL == memchr(entry->name, '\0', sizeof(entry->name)) ||
        entry->state > OPAL_JOBDB_FABRIC_ASSIGNED) {
        char why[96];
        snprintf(why, sizeof(why), "the entry of fabric %u is malformed", index);
        opal_show_help(help_file, "corrupt", true, db->name, why);
        return HERD_ERR_UNPACK_FAILURE;
    }
    view->name = entry->name;
    view->assigned = OPAL_JOBDB_FABRIC_ASSIGNED == entry->state;
    view->reason = reason;
    view->first_port = entry->first_port;
    view->num_ports = entry->num_ports;
    return HERD_SUCCESS;
}

int opal_jobdb_find_fabric(const opal_jobdb_t *db, const char *name, uint32_t *index)
{
    if (NULL == db || NULL == name || NULL == index) {
        return HERD_ERR_BAD_PARAM;
    }
    for (uint32_t f = 0; f < db->header->num_fabrics; ++f) {
        const opal_jobdb_fabric_entry_t *entry = &db->fabrics[f];
        if (1u == atomic_load_explicit(&entry->ready, memory_order_acquire) &&
            0 == strncmp(entry->name, name, sizeof(entry->name))) {
            *index = f;
            return HERD_SUCCESS;
        }
    }
    return HERD_ERR_NOT_FOUND;
}

int opal_jobdb_get_endpoint(const opal_jobdb_t *db, uint32_t rank, uint32_t fabric,
                            uint32_t addr_index, void *addr, size_t *len)
{
    opal_jobdb_proc_view_t view;
    opal_jobdb_fabric_view_t fview;
    if (NULL == db || NULL == addr || NULL == len || fabric >= db->header->num_fabrics) {
        return HERD_ERR_BAD_PARAM;
    }
    int rc = opal_jobdb_get_proc(db, rank, &view);
    if (HERD_SUCCESS == rc) {
        rc = opal_jobdb_get_fabric(db, fabric, &fview);
    }
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    const opal_jobdb_header_t *h = db->header;
    uint16_t port = db->ports[(uint64_t) rank * h->num_fabrics + fabric];
    if (!fview.assigned || 0 == port || addr_index >= h->fabric_addrs) {
        return HERD_ERR_NOT_FOUND;
    }
    const opal_jobdb_addr_t *a =
        &db->addrs[((uint64_t) fabric * h->num_nodes + view.node) * h->fabric_addrs + addr_index];
    if (OPAL_JOBDB_ADDR_IPV4 == a->family) {
        struct sockaddr_in in4 = {.sin_family = AF_INET, .sin_port = htons(port)};
        if (*len < sizeof(in4)) {
            return HERD_ERR_BAD_PARAM;
        }
        memcpy(&in4.sin_addr, a->bytes, 4);
        memcpy(addr, &in4, sizeof(in4));
        *len = sizeof(in4);
        return HERD_SUCCESS;
    }
    if (OPAL_JOBDB_ADDR_IPV6 == a->family) {
        struct sockaddr_in6 in6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
        if (*len < sizeof(in6)) {
            return HERD_ERR_BAD_PARAM;
        }
        memcpy(&in6.sin6_addr, a->bytes, 16);
        memcpy(addr, &in6, sizeof(in6));
        *len = sizeof(in6);
        return HERD_SUCCESS;
    }
    if (OPAL_JOBDB_ADDR_NONE == a->family) {
        return HERD_ERR_NOT_FOUND;
    }
    char why[96];
    snprintf(why, sizeof(why), "an address of fabric %u on node %u is malformed", fabric,
             view.node);
    opal_show_help(help_file, "corrupt", true, db->name, why);
    return HERD_ERR_UNPACK_FAILURE;
}

bool opal_jobdb_is_complete(const opal_jobdb_t *db)
{
    return NULL != db && 1u == atomic_load_explicit(&db->header->complete, memory_order_acquire);
}

uint32_t opal_jobdb_num_procs(const opal_jobdb_t *db)
{
    return db->header->num_procs;
}

uint32_t opal_jobdb_num_nodes(const opal_jobdb_t *db)
{
    return db->header->num_nodes;
}

const char *opal_jobdb_jobid(const opal_jobdb_t *db)
{
    return db->header->jobid;
}

const char *opal_jobdb_name(const opal_jobdb_t *db)
{
    return db->name;
}
