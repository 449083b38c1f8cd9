/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer harness for the ras hostfile and -H host-list parser: arbitrary text in, and every
 * allocation it accepts must keep the rules the rest of herd relies on. */
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

/* Input layout: byte 0 picks what the rest is (mod 3):
 *   0: a hostfile, taken whole (NUL bytes included, which the parser must refuse cleanly);
 *   1: a -H host list, up to the first NUL;
 *   2: a hostfile up to the first NUL, then a -H host list up to the next one. */
enum { FUZZ_HOSTFILE, FUZZ_HOST_LIST, FUZZ_BOTH, FUZZ_MODES };

static char fuzz_sentinel_object;
#define FUZZ_SENTINEL ((orte_allocation_t *) (void *) &fuzz_sentinel_object)

static bool fuzz_is_host_name(const char *name)
{
    size_t length = strlen(name);

    if (0 == length || length > ORTE_RAS_MAX_NAME_LEN) {
        return false;
    }
    for (size_t i = 0; i < length; i++) {
        char c = name[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

        if (!alnum && (0 == i || ('.' != c && '-' != c && '_' != c))) {
            return false;
        }
    }
    return true;
}

static int fuzz_compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *) a, *(char *const *) b);
}

/* What every accepted allocation must be: valid hosts, sane slots, each host once, and a wire
 * round trip that gives it back unchanged. */
static void fuzz_check_allocation(const orte_allocation_t *allocation, bool from_list_only)
{
    opal_buffer_t buffer = OPAL_BUFFER_STATIC_INIT;
    orte_allocation_t *copy = NULL;
    const char **names;

    FUZZ_CHECK(NULL != allocation && FUZZ_SENTINEL != allocation);
    FUZZ_CHECK(0 == strcmp(allocation->source, "hostfile"));
    FUZZ_CHECK(allocation->num_nodes >= 1 && allocation->num_nodes <= ORTE_RAS_MAX_NODES);
    names = calloc(allocation->num_nodes, sizeof(*names));
    FUZZ_CHECK(NULL != names);
    for (uint32_t i = 0; i < allocation->num_nodes; i++) {
        const orte_node_t *node = &allocation->nodes[i];

        FUZZ_CHECK(fuzz_is_host_name(node->name));
        FUZZ_CHECK(node->slots >= 1 && node->slots <= ORTE_RAS_MAX_SLOTS);
        FUZZ_CHECK(0 == node->max_slots || node->max_slots >= node->slots);
        FUZZ_CHECK(NULL == node->topology);
        FUZZ_CHECK(NULL != node->origin);
        FUZZ_CHECK(!from_list_only || (0 == strcmp(node->origin, "-H") && 0 == node->max_slots));
        names[i] = node->name;
    }
    qsort(names, allocation->num_nodes, sizeof(*names), fuzz_compare_names);
    for (uint32_t i = 1; i < allocation->num_nodes; i++) {
        FUZZ_CHECK(0 != strcmp(names[i - 1], names[i]));
    }
    free(names);

    FUZZ_CHECK(HERD_SUCCESS == orte_allocation_pack(&buffer, allocation));
    FUZZ_CHECK(HERD_SUCCESS == orte_allocation_unpack(&buffer, &copy));
    FUZZ_CHECK(0 == opal_buffer_remaining(&buffer));
    FUZZ_CHECK(copy->num_nodes == allocation->num_nodes);
    for (uint32_t i = 0; i < allocation->num_nodes; i++) {
        FUZZ_CHECK(0 == strcmp(copy->nodes[i].name, allocation->nodes[i].name));
        FUZZ_CHECK(copy->nodes[i].slots == allocation->nodes[i].slots);
        FUZZ_CHECK(copy->nodes[i].max_slots == allocation->nodes[i].max_slots);
        FUZZ_CHECK(0 == strcmp(copy->nodes[i].origin, allocation->nodes[i].origin));
    }
    orte_allocation_free(copy);
    opal_buffer_destruct(&buffer);
}

/* A NUL-terminated copy of data[0..length). */
static char *fuzz_string(const uint8_t *data, size_t length)
{
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
    orte_allocation_t *allocation = FUZZ_SENTINEL;
    const uint8_t *rest;
    size_t rest_size;
    char *text = NULL;
    size_t text_length = 0;
    char *host_list = NULL;
    int mode;
    int rc;

    if (0 == size) {
        return 0;
    }
    mode = data[0] % FUZZ_MODES;
    rest = data + 1;
    rest_size = size - 1;
    if (FUZZ_HOSTFILE == mode) {
        text = fuzz_string(rest, rest_size);
        text_length = rest_size;
    } else if (FUZZ_HOST_LIST == mode) {
        const uint8_t *end = memchr(rest, '\0', rest_size);

        host_list = fuzz_string(rest, NULL != end ? (size_t) (end - rest) : rest_size);
    } else {
        const uint8_t *end = memchr(rest, '\0', rest_size);
        size_t first = NULL != end ? (size_t) (end - rest) : rest_size;
        const uint8_t *second = NULL != end ? end + 1 : rest + rest_size;
        size_t second_size = rest_size - (size_t) (second - rest);
        const uint8_t *second_end = memchr(second, '\0', second_size);

        text = fuzz_string(rest, first);
        text_length = first;
        host_list =
            fuzz_string(second, NULL != second_end ? (size_t) (second_end - second) : second_size);
    }

    rc = orte_ras_base_parse_hosts("fuzz.hosts", text, text_length, host_list, &allocation);
    if (HERD_SUCCESS == rc) {
        fuzz_check_allocation(allocation, NULL == text);
        orte_allocation_free(allocation);
    } else {
        /* every refusal is reported (SILENT); nothing is handed out */
        FUZZ_CHECK(HERD_ERR_SILENT == rc || HERD_ERR_OUT_OF_RESOURCE == rc);
        FUZZ_CHECK(FUZZ_SENTINEL == allocation);
    }
    free(text);
    free(host_list);
    return 0;
}
