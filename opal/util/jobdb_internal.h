/* SPDX-License-Identifier: BSD-3-Clause */
/* The job database's handle, shared by its files: jobdb.c (create, fill, attach, read) and
 * jobdb_dump.c (its text for herd-info --job). Users see only opal/util/jobdb.h. */
#ifndef OPAL_UTIL_JOBDB_INTERNAL_H
#define OPAL_UTIL_JOBDB_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/util/jobdb.h"

#define JOBDB_NAME_MAX (NAME_MAX + 2) /* a leading '/', a file name, a NUL */

struct opal_jobdb {
    char name[JOBDB_NAME_MAX];
    uint8_t *base;
    size_t size;
    bool writer;
    const opal_jobdb_header_t *header;
    opal_jobdb_record_t *records;
    uint8_t *endpoints;
    opal_jobdb_node_entry_t *nodes;
    opal_jobdb_fabric_entry_t *fabrics;
    opal_jobdb_addr_t *addrs;
    uint16_t *ports;
    char *strings;
    /* Writer only: strings_used is the next free byte; string_cache maps a string's hash to
     * 1 + its offset (0: empty), so repeats cost nothing while the cache stays fixed-size. */
    uint64_t strings_used;
    uint32_t *string_cache;
    uint32_t procs_put;
    uint32_t nodes_set;
};

#endif
