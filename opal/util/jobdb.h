/* SPDX-License-Identifier: BSD-3-Clause */
/* A node's job database: one POSIX shared-memory segment per job and node, written by the
 * session daemon as procs are mapped and read in place by the procs and herd-info. */
#ifndef OPAL_UTIL_JOBDB_H
#define OPAL_UTIL_JOBDB_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "opal/status.h"
#include "opal/visibility.h"

/* Design.
 *
 * The segment is the only copy of the job's map on a node: every proc of the job (not only the
 * local ones) has a fixed-size record, indexed by rank, so a lookup is O(1) and a reader keeps
 * nothing but a small handle, whatever the job size (its private memory does not grow with the
 * number of procs; the mapping is shared, read-only page cache).
 *
 * One writer (the session daemon, one thread) fills the records in any order while readers may
 * already be attached: each record and node entry has a ready flag, stored last with release
 * semantics and loaded by readers with acquire semantics, so a reader sees a record whole or not
 * at all. A ready record never changes again. opal_jobdb_finish() sets the header's complete
 * flag once every record and node is in.
 *
 * Readers trust nothing in the segment: the header is checked against the segment's size when
 * attaching, and every string offset of a record when it is read, so a corrupt or truncated
 * segment is an error, never a crash. (A segment shrunk while mapped cannot be guarded against
 * without a signal handler; only the owner can do that, and it never does.) */

/* Layout of the segment, version OPAL_JOBDB_FORMAT_VERSION. All offsets are from the start of
 * the segment and 8-byte aligned; regions follow each other in this order:
 *   header | records[num_procs] | endpoints[num_procs][endpoint_slots][endpoint_slot_size]
 *   | nodes[num_nodes] | fabrics[num_fabrics] | addrs[num_fabrics][num_nodes][fabric_addrs]
 *   | ports[num_procs][num_fabrics] (uint16_t, padded to 8 bytes)
 *   | strings[strings_size] (NUL-terminated cpusets, localities, node names, fabric reasons)
 * Any change to these structures must raise the version.
 *
 * RM-assigned endpoints ("instant on", docs/endpoints.md): a fabric whose endpoints the session
 * daemons chose in advance has an entry in the fabric table, its addresses per node (the same
 * for every proc of a node), and one port per proc. A proc's endpoint on that fabric is its
 * node's address with its port: found in O(1) from the proc's record, nothing per proc but 2
 * bytes. The writer fills the fabric table and the addresses before the first record, so a
 * reader that sees a record ready sees them too. */
#define OPAL_JOBDB_MAGIC          0x42444a48u /* "HJDB" in memory on little-endian hosts */
#define OPAL_JOBDB_FORMAT_VERSION 2u
#define OPAL_JOBDB_ID_MAX         64u  /* bytes of the job id, with its NUL */
#define OPAL_JOBDB_NODE_MAX       256u /* bytes of a node name, with its NUL */
#define OPAL_JOBDB_MAX_SLOTS      1024u
#define OPAL_JOBDB_MAX_SLOT_SIZE  4096u
#define OPAL_JOBDB_MAX_FABRICS    64u
#define OPAL_JOBDB_MAX_ADDRS      16u /* addresses per node and fabric */
#define OPAL_JOBDB_FABRIC_NAME_MAX 48u /* bytes of a fabric name, with its NUL */

/* A record's flags. */
#define OPAL_JOBDB_PROC_BOUND 0x1u

typedef struct opal_jobdb_header {
    _Atomic uint32_t magic; /* stored last when creating: a reader never sees half a header */
    uint32_t version;
    uint32_t header_size;
    uint32_t record_size;
    uint64_t segment_size;
    uint32_t num_procs;
    uint32_t num_nodes;
    uint32_t endpoint_slots;     /* per proc */
    uint32_t endpoint_slot_size; /* bytes, a multiple of 8 */
    uint64_t records_offset;
    uint64_t endpoints_offset;
    uint64_t nodes_offset;
    uint64_t strings_offset;
    uint64_t strings_size;
    uint32_t num_fabrics;  /* entries of the fabric table */
    uint32_t fabric_addrs; /* address slots per node and fabric */
    uint64_t fabrics_offset;
    uint64_t addrs_offset;
    uint64_t ports_offset;
    _Atomic uint32_t complete; /* 1 once every record and node is ready */
    uint32_t reserved;
    char jobid[OPAL_JOBDB_ID_MAX];
    char node_name[OPAL_JOBDB_NODE_MAX]; /* the node this segment belongs to */
} opal_jobdb_header_t;

typedef struct opal_jobdb_record {
    _Atomic uint32_t ready; /* 1 once the record and its strings and endpoints are written */
    uint32_t node;          /* index into the node table */
    uint32_t local_rank;
    uint32_t node_rank;
    uint32_t app;
    uint32_t flags;         /* OPAL_JOBDB_PROC_* */
    uint32_t cpuset_offset; /* into the string area */
    uint32_t cpuset_length; /* without the NUL */
    uint32_t locality_offset;
    uint32_t locality_length;
} opal_jobdb_record_t;

typedef struct opal_jobdb_node_entry {
    _Atomic uint32_t ready;
    uint32_t name_offset; /* into the string area */
    uint32_t name_length; /* without the NUL */
    uint32_t reserved;
} opal_jobdb_node_entry_t;

/* A fabric's state in a job: its procs' endpoints were assigned by the session daemons, or
 * they are exchanged by the procs themselves (herd_put/herd_get). */
#define OPAL_JOBDB_FABRIC_MODEX    0u
#define OPAL_JOBDB_FABRIC_ASSIGNED 1u

typedef struct opal_jobdb_fabric_entry {
    _Atomic uint32_t ready;
    uint32_t state;         /* OPAL_JOBDB_FABRIC_* */
    uint32_t reason_offset; /* into the string area: why modex ("" when assigned) */
    uint32_t reason_length;
    uint32_t first_port; /* the job's window, as on the first node (for tools) */
    uint32_t num_ports;
    char name[OPAL_JOBDB_FABRIC_NAME_MAX]; /* "tcp", "ofi:tcp;ofi_rxm", "ucx" */
} opal_jobdb_fabric_entry_t;

/* One address of a node on a fabric (network byte order), without a port. */
#define OPAL_JOBDB_ADDR_NONE 0u
#define OPAL_JOBDB_ADDR_IPV4 4u
#define OPAL_JOBDB_ADDR_IPV6 6u

typedef struct opal_jobdb_addr {
    uint8_t family; /* OPAL_JOBDB_ADDR_*; NONE ends a node's list */
    uint8_t reserved[7];
    uint8_t bytes[16]; /* 4 used for IPv4 */
} opal_jobdb_addr_t;

/* Sizes chosen by the creator; zeroes (or no layout at all) take the defaults. */
typedef struct opal_jobdb_layout {
    uint32_t endpoint_slots;     /* per proc, at most OPAL_JOBDB_MAX_SLOTS; default 0 */
    uint32_t endpoint_slot_size; /* bytes, rounded up to a multiple of 8; default 8 */
    /* Room for cpuset, locality and node-name strings, below 4 GiB. Identical strings are
     * stored once, so the default (32 bytes per proc, 64 per node, plus 4 KiB) is ample for
     * real maps. */
    uint64_t string_bytes;
    uint32_t num_fabrics;  /* RM-assigned endpoints: fabric table entries; default 0 */
    uint32_t fabric_addrs; /* address slots per node and fabric, at most OPAL_JOBDB_MAX_ADDRS;
                              default 4 when there are fabrics */
} opal_jobdb_layout_t;

/* One proc, as the writer puts it (the same fields as the mapper's orte_rmaps_proc_t). */
typedef struct opal_jobdb_proc {
    uint32_t rank;
    uint32_t app;
    uint32_t node; /* index into the node table */
    uint32_t local_rank;
    uint32_t node_rank;
    bool bound;
    const char *cpuset;      /* copied into the segment */
    const char *locality;    /* copied into the segment */
    const void *endpoints;   /* endpoints_length bytes for the endpoint slots, or NULL */
    size_t endpoints_length; /* at most endpoint_slots * endpoint_slot_size; the rest is zero */
    const uint16_t *ports;   /* per fabric of the table: its assigned port (0: none), or NULL */
} opal_jobdb_proc_t;

/* One proc, as a reader sees it: the numbers are copied, the pointers point into the segment
 * and stay valid until the reader detaches. */
typedef struct opal_jobdb_proc_view {
    uint32_t rank;
    uint32_t app;
    uint32_t node;
    uint32_t local_rank;
    uint32_t node_rank;
    bool bound;
    const char *cpuset;
    const char *locality;
    const uint8_t *endpoints; /* endpoint_slots * endpoint_slot_size bytes; NULL if no slots */
} opal_jobdb_proc_view_t;

typedef struct opal_jobdb opal_jobdb_t;

/* The segment's name, "/herd-<uid>-<jobid>-<node>", into buf (set only on success).
 * HERD_ERR_BAD_PARAM when jobid or node is empty or holds a '/', or the name would not fit in buf
 * or in a file name. */
OPAL_EXPORT int opal_jobdb_segment_name(const char *jobid, const char *node_name, char *buf,
                                        size_t size);
/* The name of a segment a process of the job owns, "/herd-<uid>-<jobid>.<what><rank>-<node>"
 * (btl sm's receive segment: what "sm"): computable by its peers, which map it, and by the
 * session daemon, which removes it at the job's end in case the process was killed. */
OPAL_EXPORT int opal_jobdb_rank_segment_name(const char *jobid, const char *node_name,
                                             const char *what, uint32_t rank, char *buf,
                                             size_t size);

/* Writer. Create the segment of jobid on node_name (mode 0600, never reusing an existing one),
 * sized for num_procs records and num_nodes nodes, with its space reserved in /dev/shm now so a
 * full /dev/shm is reported here and not as a crash later. Failures are reported to the user:
 * HERD_ERR_EXISTS (the segment exists), HERD_ERR_OUT_OF_RESOURCE (no room), HERD_ERR_IN_ERRNO
 * (another system error); HERD_ERR_BAD_PARAM for invalid arguments. *db set only on success. */
OPAL_EXPORT int opal_jobdb_create(const char *jobid, const char *node_name, uint32_t num_procs,
                                  uint32_t num_nodes, const opal_jobdb_layout_t *sizes,
                                  opal_jobdb_t **db);
/* Write one record, in any order. HERD_ERR_BAD_PARAM for a rank or node out of range or too many
 * endpoint bytes, HERD_ERR_EXISTS when that rank is already in, HERD_ERR_OUT_OF_RESOURCE (reported)
 * when the string area is full. */
OPAL_EXPORT int opal_jobdb_put_proc(opal_jobdb_t *db, const opal_jobdb_proc_t *proc);
/* Name node index of the node table (once per index; errors as for put_proc). */
OPAL_EXPORT int opal_jobdb_set_node(opal_jobdb_t *db, uint32_t index, const char *name);
/* Rank, already put, now runs on node (an index of the node table): a process moved off a lost
 * node (errmgr restart). Readers see the new node from their next lookup; its other fields stay. */
OPAL_EXPORT int opal_jobdb_move_proc(opal_jobdb_t *db, uint32_t rank, uint32_t node);
/* Describe fabric index of the table (once per index, before any record is put): its name,
 * whether its endpoints are assigned, the job's port window (first port and count, as on the
 * job's first node; for tools), and reason, why not (NULL when assigned). HERD_ERR_BAD_PARAM for
 * an index out of range or a name that is empty or too long, HERD_ERR_EXISTS when set already. */
OPAL_EXPORT int opal_jobdb_set_fabric(opal_jobdb_t *db, uint32_t index, const char *name,
                                      bool assigned, uint32_t first_port, uint32_t num_ports,
                                      const char *reason);
/* A node's addresses on fabric index (before any record is put): at most the layout's
 * fabric_addrs. HERD_ERR_BAD_PARAM for indexes out of range, too many or malformed addresses. */
OPAL_EXPORT int opal_jobdb_set_fabric_addrs(opal_jobdb_t *db, uint32_t fabric, uint32_t node,
                                            const opal_jobdb_addr_t *addrs, uint32_t num_addrs);
/* Mark the database complete. HERD_ERR_NOT_FOUND (nothing marked) when a record or node is
 * missing. */
OPAL_EXPORT int opal_jobdb_finish(opal_jobdb_t *db);
/* Unmap and unlink the segment: it goes away with the job. Readers still attached keep their
 * mapping until they detach. NULL does nothing; on a reader's handle, the same as detach. */
OPAL_EXPORT void opal_jobdb_destroy(opal_jobdb_t *db);

/* Reader. Map the segment called name (from opal_jobdb_segment_name) read-only and check its
 * header. Failures are reported to the user: HERD_ERR_NOT_FOUND (no such segment),
 * HERD_ERR_VERSION_MISMATCH, HERD_ERR_UNPACK_FAILURE (corrupt or truncated), HERD_ERR_IN_ERRNO.
 * *db set only on success. */
OPAL_EXPORT int opal_jobdb_attach(const char *name, opal_jobdb_t **db);
/* Rank's record, in O(1) and in place. HERD_ERR_BAD_PARAM for a rank out of range,
 * HERD_ERR_NOT_FOUND when its record is not ready yet, HERD_ERR_UNPACK_FAILURE (reported) when
 * it is corrupt. *view set only on success. */
OPAL_EXPORT int opal_jobdb_get_proc(const opal_jobdb_t *db, uint32_t rank,
                                    opal_jobdb_proc_view_t *view);
/* Node index's name, in the segment; NULL when out of range, not set yet, or corrupt. */
OPAL_EXPORT const char *opal_jobdb_node_name(const opal_jobdb_t *db, uint32_t index);
/* A fabric of the table, as a reader sees it (pointers into the segment). */
typedef struct opal_jobdb_fabric_view {
    const char *name;
    bool assigned;
    const char *reason; /* "" when assigned */
    uint32_t first_port;
    uint32_t num_ports;
} opal_jobdb_fabric_view_t;

OPAL_EXPORT uint32_t opal_jobdb_num_fabrics(const opal_jobdb_t *db);
/* Fabric index of the table. HERD_ERR_BAD_PARAM out of range, HERD_ERR_NOT_FOUND not set yet,
 * HERD_ERR_UNPACK_FAILURE (reported) when corrupt. *view set only on success. */
OPAL_EXPORT int opal_jobdb_get_fabric(const opal_jobdb_t *db, uint32_t index,
                                      opal_jobdb_fabric_view_t *view);
/* The index of the fabric called name; HERD_ERR_NOT_FOUND when the table has none. */
OPAL_EXPORT int opal_jobdb_find_fabric(const opal_jobdb_t *db, const char *name, uint32_t *index);
/* Rank's RM-assigned endpoint on fabric, at address index (0 first) of its node: a
 * struct sockaddr_in or sockaddr_in6 with the port, into addr (*len bytes of room; *len gets
 * the size written). O(1), nothing copied but the address. HERD_ERR_NOT_FOUND when the fabric's
 * endpoints are not assigned (modex), the rank has no port, or the node has no address index;
 * HERD_ERR_BAD_PARAM for a rank or fabric out of range or too little room; HERD_ERR_UNPACK_FAILURE
 * (reported) for a corrupt entry. Output set only on success. */
OPAL_EXPORT int opal_jobdb_get_endpoint(const opal_jobdb_t *db, uint32_t rank, uint32_t fabric,
                                        uint32_t addr_index, void *addr, size_t *len);

/* "10.0.0.5:17408" or "[fd00::5]:17408" for a sockaddr_in or sockaddr_in6 of len bytes.
 * HERD_ERR_BAD_PARAM for anything else. */
OPAL_EXPORT int opal_jobdb_endpoint_string(const void *addr, size_t len, char *text, size_t size);

/* Whether the writer has finished (acquire: every record is then ready). */
OPAL_EXPORT bool opal_jobdb_is_complete(const opal_jobdb_t *db);
OPAL_EXPORT uint32_t opal_jobdb_num_procs(const opal_jobdb_t *db);
OPAL_EXPORT uint32_t opal_jobdb_num_nodes(const opal_jobdb_t *db);
OPAL_EXPORT const char *opal_jobdb_jobid(const opal_jobdb_t *db);
/* The segment's name, as attach takes it. */
OPAL_EXPORT const char *opal_jobdb_name(const opal_jobdb_t *db);
/* Unmap (a reader's handle; on the writer's, the same as destroy). NULL does nothing. */
OPAL_EXPORT void opal_jobdb_detach(opal_jobdb_t *db);

/* What herd-info --job prints: the header, the node table, then one line per proc. */
OPAL_EXPORT void opal_jobdb_dump(FILE *out, const opal_jobdb_t *db);

#endif /* OPAL_UTIL_JOBDB_H */
