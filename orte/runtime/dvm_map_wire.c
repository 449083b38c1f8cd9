/* SPDX-License-Identifier: BSD-3-Clause */
/* The map report (ORTE_DVM_TAG_MAPPED) on the wire, and the checksums of a node's map: kept
 * apart from the daemons' and herdrun's code so that the decoder can be tested and fuzzed on its
 * own. */
#include "herd_config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orte/runtime/dvm_map.h"

/* FNV-1a of a binding's text: the cpuset is what a session daemon would bind the process to. */
static uint64_t text_hash(const char *text)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *c = NULL != text ? text : ""; '\0' != *c; ++c) {
        h = (h ^ (uint8_t) *c) * 0x100000001b3ull;
    }
    return h;
}

uint64_t dvm_map_proc_hash(const orte_rmaps_proc_t *proc)
{
    uint64_t h = dvm_map_mix(((uint64_t) proc->rank << 32) | proc->local_rank);
    h = dvm_map_mix(h ^ ((uint64_t) proc->app << 1) ^ (proc->bound ? 1u : 0u));
    return dvm_map_mix(h ^ text_hash(proc->bound ? proc->cpuset : NULL));
}

void dvm_map_report_add(dvm_map_report_t *report, const orte_rmaps_proc_t *proc)
{
    if (0 == report->num_procs || proc->rank < report->first) {
        report->first = proc->rank;
    }
    if (0 == report->num_procs || proc->rank > report->last) {
        report->last = proc->rank;
    }
    report->num_procs++;
    report->rank_sum += dvm_map_mix(proc->rank);
    report->map_sum += dvm_map_proc_hash(proc);
}

dvm_map_verdict_t dvm_map_report_compare(const dvm_map_report_t *got, const dvm_map_report_t *want,
                                         uint32_t job_seq)
{
    if (got->job_seq != job_seq) {
        return DVM_MAP_OTHER_JOB;
    }
    if (HERD_SUCCESS != got->status) {
        return DVM_MAP_FAILED;
    }
    if (got->num_procs != want->num_procs || got->first != want->first || got->last != want->last ||
        got->rank_sum != want->rank_sum) {
        return DVM_MAP_OTHER_RANKS;
    }
    return got->map_sum != want->map_sum ? DVM_MAP_OTHER_BINDING : DVM_MAP_AGREES;
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t) (v >> 24);
    p[1] = (uint8_t) (v >> 16);
    p[2] = (uint8_t) (v >> 8);
    p[3] = (uint8_t) v;
    return p + 4;
}

static uint8_t *put64(uint8_t *p, uint64_t v)
{
    return put32(put32(p, (uint32_t) (v >> 32)), (uint32_t) v);
}

static uint32_t get32(const uint8_t *p)
{
    return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3];
}

static uint64_t get64(const uint8_t *p)
{
    return ((uint64_t) get32(p) << 32) | get32(p + 4);
}

static uint8_t *encode_entry(uint8_t *p, const dvm_map_entry_t *e)
{
    const dvm_map_report_t *r = &e->report;
    p = put32(p, e->vpid);
    p = put32(p, r->job_seq);
    p = put32(p, (uint32_t) r->status);
    p = put32(p, r->num_procs);
    p = put32(p, r->first);
    p = put32(p, r->last);
    p = put64(p, r->rank_sum);
    p = put64(p, r->map_sum);
    p = put64(p, r->map_ns);
    return put64(p, r->total_ns);
}

void dvm_map_encode(const dvm_map_entry_t *entries, uint32_t count, uint8_t *out)
{
    uint8_t *p = out;
    *p++ = DVM_MAP_WIRE_VERSION;
    p = put32(p, count);
    for (uint32_t i = 0; i < count; ++i) {
        p = encode_entry(p, &entries[i]);
    }
}

static bool decode_entry(const uint8_t *p, uint32_t size, dvm_map_entry_t *e, char *reason,
                         size_t rsize)
{
    dvm_map_report_t r = {
        .job_seq = get32(p + 4),
        .status = (int32_t) get32(p + 8),
        .num_procs = get32(p + 12),
        .first = get32(p + 16),
        .last = get32(p + 20),
        .rank_sum = get64(p + 24),
        .map_sum = get64(p + 32),
        .map_ns = get64(p + 40),
        .total_ns = get64(p + 48),
    };
    e->vpid = get32(p);
    if (0 == e->vpid || e->vpid >= size) {
        snprintf(reason, rsize, "a report of daemon %u, not one of 1-%u", e->vpid, size - 1);
        return false;
    }
    if (r.status > 0) {
        snprintf(reason, rsize, "status %d is not a herd status", (int) r.status);
        return false;
    }
    if (0 == r.num_procs ? (0 != r.first || 0 != r.last || 0 != r.rank_sum || 0 != r.map_sum)
                         : (r.first > r.last || r.num_procs - 1u > r.last - r.first)) {
        snprintf(reason, rsize, "%u processes do not fit ranks %u-%u", r.num_procs, r.first,
                 r.last);
        return false;
    }
    if (r.map_ns > r.total_ns) {
        snprintf(reason, rsize, "a map time above the total");
        return false;
    }
    e->report = r;
    return true;
}

int dvm_map_decode(const void *data, size_t len, uint32_t size, dvm_map_entry_t **entries,
                   uint32_t *count, char *reason, size_t rsize)
{
    const uint8_t *p = data;
    if (len < DVM_MAP_HEADER_BYTES || NULL == p) {
        snprintf(reason, rsize, "%zu bytes, shorter than its header", len);
        return HERD_ERR_UNPACK_FAILURE;
    }
    if (DVM_MAP_WIRE_VERSION != p[0]) {
        snprintf(reason, rsize, "version %u, not %u", p[0], DVM_MAP_WIRE_VERSION);
        return HERD_ERR_VERSION_MISMATCH;
    }
    uint32_t n = get32(p + 1);
    if (0 == n || size < 2 || n > size - 1 || len != dvm_map_message_bytes(n)) {
        snprintf(reason, rsize, "%u reports in %zu bytes, from a DVM of %u daemons", n, len, size);
        return HERD_ERR_UNPACK_FAILURE;
    }
    dvm_map_entry_t *out = malloc(n * sizeof(*out)); /* n is bounded by len */
    if (NULL == out) {
        snprintf(reason, rsize, "out of memory");
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t i = 0; i < n; ++i) {
        if (!decode_entry(p + DVM_MAP_HEADER_BYTES + (size_t) i * DVM_MAP_ENTRY_BYTES, size,
                          &out[i], reason, rsize)) {
            free(out);
            return HERD_ERR_UNPACK_FAILURE;
        }
    }
    *entries = out;
    *count = n;
    return HERD_SUCCESS;
}
