/* SPDX-License-Identifier: BSD-3-Clause */
/* The table of inventories by kind (records and the vpid ranges that have each) and its one
 * wire message, kept apart from the exchange (dvm_kinds.c) so that the decoder can be tested
 * and fuzzed on its own. */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orte/runtime/dvm_kinds.h"

/* ------------------------------------------------------------------------------------------ */
/* the table */

dvm_kinds_t *dvm_kinds_table_new(void)
{
    return calloc(1, sizeof(dvm_kinds_t));
}

void dvm_kinds_table_free(dvm_kinds_t *k)
{
    for (uint32_t i = 0; NULL != k && i < k->num_kinds; ++i) {
        free(k->kinds[i].record);
        free(k->kinds[i].ranges);
    }
    if (NULL != k) {
        free(k->kinds);
        free(k->heard);
        free(k);
    }
}

int dvm_kinds_add(dvm_kinds_t *k, const uint8_t *record, size_t len, uint32_t first, uint32_t count)
{
    dvm_kinds_kind_t *kind = NULL;
    for (uint32_t i = 0; i < k->num_kinds && NULL == kind; ++i) {
        if (k->kinds[i].len == len && 0 == memcmp(k->kinds[i].record, record, len)) {
            kind = &k->kinds[i];
        }
    }
    if (NULL == kind) {
        dvm_kinds_kind_t *grown = realloc(k->kinds, (k->num_kinds + 1) * sizeof(*grown));
        if (NULL == grown) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        k->kinds = grown;
        kind = &k->kinds[k->num_kinds];
        memset(kind, 0, sizeof(*kind));
        kind->record = malloc(len);
        if (NULL == kind->record) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        memcpy(kind->record, record, len);
        kind->len = len;
        k->num_kinds++;
    }
    dvm_kinds_range_t *last = kind->num_ranges > 0 ? &kind->ranges[kind->num_ranges - 1] : NULL;
    if (NULL != last && last->first + last->count == first) {
        last->count += count; /* the next vpids of the same kind: one range */
        return HERD_SUCCESS;
    }
    dvm_kinds_range_t *ranges = realloc(kind->ranges, (kind->num_ranges + 1) * sizeof(*ranges));
    if (NULL == ranges) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    kind->ranges = ranges;
    kind->ranges[kind->num_ranges++] = (dvm_kinds_range_t){.first = first, .count = count};
    return HERD_SUCCESS;
}

static int range_cmp(const void *a, const void *b)
{
    const dvm_kinds_range_t *x = a, *y = b;
    return x->first < y->first ? -1 : x->first > y->first;
}

/* Ranges of each kind in vpid order, neighbours merged: subtrees arrive in any order. */
void dvm_kinds_normalize(dvm_kinds_t *k)
{
    for (uint32_t i = 0; i < k->num_kinds; ++i) {
        dvm_kinds_kind_t *kind = &k->kinds[i];
        uint32_t out = 0;
        qsort(kind->ranges, kind->num_ranges, sizeof(*kind->ranges), range_cmp);
        for (uint32_t r = 0; r < kind->num_ranges; ++r) {
            if (out > 0 && kind->ranges[out - 1].first + kind->ranges[out - 1].count ==
                               kind->ranges[r].first) {
                kind->ranges[out - 1].count += kind->ranges[r].count;
            } else {
                kind->ranges[out++] = kind->ranges[r];
            }
        }
        kind->num_ranges = out;
    }
}

/* Whether the table names every daemon 1..size-1 exactly once. */
bool dvm_kinds_complete(const dvm_kinds_t *k, uint32_t size, char *reason, size_t rsize)
{
    size_t total = 0, n = 0;
    for (uint32_t i = 0; i < k->num_kinds; ++i) {
        total += k->kinds[i].num_ranges;
    }
    dvm_kinds_range_t *all = malloc((total + 1) * sizeof(*all));
    if (NULL == all) {
        snprintf(reason, rsize, "out of memory");
        return false;
    }
    for (uint32_t i = 0; i < k->num_kinds; ++i) {
        for (uint32_t r = 0; r < k->kinds[i].num_ranges; ++r) {
            all[n++] = k->kinds[i].ranges[r];
        }
    }
    qsort(all, n, sizeof(*all), range_cmp);
    uint32_t next = 1;
    bool ok = true;
    for (size_t r = 0; r < n && ok; ++r) {
        ok = all[r].first == next;
        next = all[r].first + all[r].count;
    }
    ok = ok && next == size;
    if (!ok) {
        snprintf(reason, rsize, "the inventories by kind do not name daemons 1 to %u once each",
                 size - 1);
    }
    free(all);
    return ok;
}

/* ------------------------------------------------------------------------------------------ */
/* wire: uint8 version, uint32 kinds, per kind (bytes record, uint32 ranges, per range uint32
 * first, uint32 count) */

int dvm_kinds_pack(const dvm_kinds_t *k, opal_buffer_t *buffer)
{
    int rc = opal_buffer_pack_uint8(buffer, DVM_KINDS_WIRE_VERSION);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_pack_uint32(buffer, k->num_kinds);
    }
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < k->num_kinds; ++i) {
        const dvm_kinds_kind_t *kind = &k->kinds[i];
        rc = opal_buffer_pack_bytes(buffer, kind->record, kind->len);
        if (HERD_SUCCESS == rc) {
            rc = opal_buffer_pack_uint32(buffer, kind->num_ranges);
        }
        for (uint32_t r = 0; HERD_SUCCESS == rc && r < kind->num_ranges; ++r) {
            rc = opal_buffer_pack_uint32(buffer, kind->ranges[r].first);
            if (HERD_SUCCESS == rc) {
                rc = opal_buffer_pack_uint32(buffer, kind->ranges[r].count);
            }
        }
    }
    return rc;
}

/* Add every range of from to into (records already in into are shared). */
static int kinds_merge(dvm_kinds_t *into, const dvm_kinds_t *from)
{
    int rc = HERD_SUCCESS;
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < from->num_kinds; ++i) {
        const dvm_kinds_kind_t *kind = &from->kinds[i];
        for (uint32_t r = 0; HERD_SUCCESS == rc && r < kind->num_ranges; ++r) {
            rc = dvm_kinds_add(into, kind->record, kind->len, kind->ranges[r].first,
                               kind->ranges[r].count);
        }
    }
    return rc;
}

static int kinds_decode_message(const void *data, size_t len, uint32_t size, dvm_kinds_t *into,
                                char *reason, size_t rsize)
{
    opal_buffer_t buffer;
    uint8_t version = 0;
    uint32_t num_kinds = 0;
    opal_buffer_init(&buffer);
    int rc = opal_buffer_load(&buffer, data, len);
    if (HERD_SUCCESS == rc && (HERD_SUCCESS != opal_buffer_unpack_uint8(&buffer, &version) ||
                               DVM_KINDS_WIRE_VERSION != version)) {
        snprintf(reason, rsize, "version %u, not %u", version, DVM_KINDS_WIRE_VERSION);
        rc = HERD_ERR_VERSION_MISMATCH;
    }
    if (HERD_SUCCESS == rc && (HERD_SUCCESS != opal_buffer_unpack_uint32(&buffer, &num_kinds) ||
                               0 == num_kinds || num_kinds >= size)) {
        snprintf(reason, rsize, "%u kinds for %u daemons", num_kinds, size);
        rc = HERD_ERR_UNPACK_FAILURE;
    }
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < num_kinds; ++i) {
        void *record = NULL;
        size_t record_len = 0;
        uint32_t num_ranges = 0;
        if (HERD_SUCCESS != opal_buffer_unpack_bytes(&buffer, &record, &record_len) ||
            0 == record_len || HERD_SUCCESS != opal_buffer_unpack_uint32(&buffer, &num_ranges) ||
            0 == num_ranges || num_ranges >= size) {
            snprintf(reason, rsize, "kind %u is truncated or empty", i);
            rc = HERD_ERR_UNPACK_FAILURE;
        }
        for (uint32_t r = 0; HERD_SUCCESS == rc && r < num_ranges; ++r) {
            uint32_t first = 0, count = 0;
            if (HERD_SUCCESS != opal_buffer_unpack_uint32(&buffer, &first) ||
                HERD_SUCCESS != opal_buffer_unpack_uint32(&buffer, &count) || 0 == first ||
                0 == count || first >= size || count > size - first) {
                snprintf(reason, rsize, "kind %u has a bad range (%u, %u) for %u daemons", i, first,
                         count, size);
                rc = HERD_ERR_UNPACK_FAILURE;
            } else {
                rc = dvm_kinds_add(into, record, record_len, first, count);
            }
        }
        if (HERD_SUCCESS == rc && into->num_kinds != i + 1) {
            snprintf(reason, rsize, "kind %u repeats the record of an earlier kind", i);
            rc = HERD_ERR_UNPACK_FAILURE;
        }
        free(record);
    }
    if (HERD_SUCCESS == rc && 0 != opal_buffer_remaining(&buffer)) {
        snprintf(reason, rsize, "%zu bytes after the last kind", opal_buffer_remaining(&buffer));
        rc = HERD_ERR_UNPACK_FAILURE;
    }
    opal_buffer_destruct(&buffer);
    return rc;
}

/* The message is read into a table of its own first: a record it names twice (which the packer
 * never writes) would otherwise merge with itself into more ranges than a message may carry. */
int dvm_kinds_decode(const void *data, size_t len, uint32_t size, dvm_kinds_t *into, char *reason,
                     size_t rsize)
{
    dvm_kinds_t *message = dvm_kinds_table_new();
    if (NULL == message) {
        snprintf(reason, rsize, "out of memory");
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    int rc = kinds_decode_message(data, len, size, message, reason, rsize);
    if (HERD_SUCCESS == rc) {
        rc = kinds_merge(into, message);
    }
    dvm_kinds_table_free(message);
    return rc;
}
