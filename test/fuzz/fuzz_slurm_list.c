/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer harness for the ras Slurm parsers: compressed host lists (n[01-04,7]), task counts
 * (2(x3),1) and the allocation made of both, checked against a plain reading where one exists. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/dss/buffer.h"
#include "orte/mca/ras/base/base.h"
#include "orte/mca/ras/ras.h"
#include "test/fuzz/fuzz.h"

/* Input layout: byte 0 picks the parser (mod 3), the rest up to the first NUL is its input:
 *   0: a host list; 1: task counts;
 *   2: a host list, then after the NUL the task counts (up to the next NUL) of one allocation. */
enum { FUZZ_HOSTLIST, FUZZ_TASKS, FUZZ_ALLOCATION, FUZZ_MODES };

/* Names checked by expanding each again on its own: enough to catch a bad expansion without
 * making long lists slow. */
#define FUZZ_REEXPAND 8

/* Allocations up to this size also go through the wire format; a million-node round trip
 * would only repeat the same check for seconds. */
#define FUZZ_ROUND_TRIP_NODES 10000

static char fuzz_sentinel_object;
#define FUZZ_SENTINEL ((void *) &fuzz_sentinel_object)

static bool fuzz_is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || '.' == c ||
           '-' == c || '_' == c;
}

static void fuzz_free_names(char **names, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        free(names[i]);
    }
    free(names);
}

/* The list cut at its commas, for lists without brackets, where that is the whole expansion. */
static bool fuzz_equals_comma_split(const char *list, char **names, size_t count)
{
    const char *start = list;

    for (size_t i = 0; i < count; i++) {
        const char *comma = strchr(start, ',');
        size_t length = NULL != comma ? (size_t) (comma - start) : strlen(start);

        if (strlen(names[i]) != length || 0 != memcmp(names[i], start, length)) {
            return false;
        }
        if (NULL == comma) {
            return i + 1 == count;
        }
        start = comma + 1;
    }
    return false;
}

static void fuzz_hostlist(const char *list)
{
    char **names = FUZZ_SENTINEL;
    size_t count = 4242;
    int rc = orte_ras_base_hostlist_expand("FUZZ_NODELIST", list, &names, &count);

    if (HERD_SUCCESS != rc) {
        FUZZ_CHECK(HERD_ERR_SILENT == rc || HERD_ERR_OUT_OF_RESOURCE == rc);
        FUZZ_CHECK(FUZZ_SENTINEL == (void *) names && 4242 == count);
        return;
    }
    FUZZ_CHECK(count >= 1 && count <= ORTE_RAS_MAX_NODES && NULL != names);
    for (size_t i = 0; i < count; i++) {
        size_t length = strlen(names[i]);

        FUZZ_CHECK(length >= 1 && length <= ORTE_RAS_MAX_NAME_LEN);
        for (size_t j = 0; j < length; j++) {
            FUZZ_CHECK(fuzz_is_name_char(names[i][j]));
        }
        /* a plain name stands for itself */
        if (i < FUZZ_REEXPAND) {
            char **again = NULL;
            size_t again_count = 0;

            FUZZ_CHECK(HERD_SUCCESS ==
                       orte_ras_base_hostlist_expand("FUZZ_NAME", names[i], &again, &again_count));
            FUZZ_CHECK(1 == again_count && 0 == strcmp(again[0], names[i]));
            fuzz_free_names(again, again_count);
        }
    }
    if (NULL == strchr(list, '[')) {
        FUZZ_CHECK(fuzz_equals_comma_split(list, names, count));
    }
    fuzz_free_names(names, count);
}

static void fuzz_tasks(const char *text)
{
    uint32_t *counts = FUZZ_SENTINEL;
    size_t count = 4242;
    int rc = orte_ras_base_tasks_per_node_expand("FUZZ_TASKS", text, &counts, &count);

    if (HERD_SUCCESS != rc) {
        FUZZ_CHECK(HERD_ERR_SILENT == rc || HERD_ERR_OUT_OF_RESOURCE == rc);
        FUZZ_CHECK(FUZZ_SENTINEL == (void *) counts && 4242 == count);
        return;
    }
    FUZZ_CHECK(count >= 1 && count <= ORTE_RAS_MAX_NODES && NULL != counts);
    for (size_t i = 0; i < count; i++) {
        FUZZ_CHECK(counts[i] >= 1 && counts[i] <= ORTE_RAS_MAX_SLOTS);
    }
    /* without repeats the counts are the plain numbers between the commas */
    if (NULL == strchr(text, '(')) {
        const char *cursor = text;

        for (size_t i = 0; i < count; i++) {
            char *end = NULL;

            FUZZ_CHECK(strtoul(cursor, &end, 10) == counts[i]);
            FUZZ_CHECK(i + 1 == count ? '\0' == *end : ',' == *end);
            cursor = end + 1;
        }
    }
    free(counts);
}

static void fuzz_allocation(const char *nodelist, const char *tasks)
{
    orte_allocation_t *allocation = FUZZ_SENTINEL;
    opal_buffer_t buffer = OPAL_BUFFER_STATIC_INIT;
    orte_allocation_t *copy = NULL;
    int rc = orte_ras_base_slurm_allocation(nodelist, tasks, &allocation);

    if (HERD_SUCCESS != rc) {
        FUZZ_CHECK(HERD_ERR_SILENT == rc || HERD_ERR_OUT_OF_RESOURCE == rc);
        FUZZ_CHECK(FUZZ_SENTINEL == (void *) allocation);
        return;
    }
    FUZZ_CHECK(0 == strcmp(allocation->source, "slurm"));
    FUZZ_CHECK(allocation->num_nodes >= 1);
    for (uint32_t i = 0; i < allocation->num_nodes; i++) {
        const orte_node_t *node = &allocation->nodes[i];

        FUZZ_CHECK(node->slots >= 1 && node->slots <= ORTE_RAS_MAX_SLOTS);
        FUZZ_CHECK('\0' == tasks[0] ? 1 == node->slots : true);
        FUZZ_CHECK(0 == node->max_slots && NULL == node->topology);
    }
    if (allocation->num_nodes > FUZZ_ROUND_TRIP_NODES) {
        orte_allocation_free(allocation);
        return;
    }
    FUZZ_CHECK(HERD_SUCCESS == orte_allocation_pack(&buffer, allocation));
    FUZZ_CHECK(HERD_SUCCESS == orte_allocation_unpack(&buffer, &copy));
    FUZZ_CHECK(copy->num_nodes == allocation->num_nodes);
    for (uint32_t i = 0; i < allocation->num_nodes; i++) {
        FUZZ_CHECK(0 == strcmp(copy->nodes[i].name, allocation->nodes[i].name));
        FUZZ_CHECK(copy->nodes[i].slots == allocation->nodes[i].slots);
    }
    orte_allocation_free(copy);
    opal_buffer_destruct(&buffer);
    orte_allocation_free(allocation);
}

static char *fuzz_string(const uint8_t *data, size_t size)
{
    const uint8_t *end = memchr(data, '\0', size);
    size_t length = NULL != end ? (size_t) (end - data) : size;
    char *text = malloc(length + 1);

    FUZZ_CHECK(NULL != text);
    if (length > 0) {
        memcpy(text, data, length);
    }
    text[length] = '\0';
    return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *first;

    if (0 == size) {
        return 0;
    }
    first = fuzz_string(data + 1, size - 1);
    switch (data[0] % FUZZ_MODES) {
    case FUZZ_HOSTLIST:
        fuzz_hostlist(first);
        break;
    case FUZZ_TASKS:
        fuzz_tasks(first);
        break;
    default: {
        /* the task counts start after the host list's NUL, if there is one */
        size_t used = 1 + strlen(first) + 1;
        char *second = used < size ? fuzz_string(data + used, size - used) : fuzz_string(data, 0);

        fuzz_allocation(first, second);
        free(second);
        break;
    }
    }
    free(first);
    return 0;
}
