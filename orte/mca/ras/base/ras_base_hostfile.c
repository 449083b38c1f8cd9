/* SPDX-License-Identifier: BSD-3-Clause */
/* The hostfile and -H host-list parser: hosts with their slots and max_slots, every mistake
 * reported at its file:line or list entry with the offending token quoted. */
#include "herd_config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/argv.h"
#include "opal/util/hash.h"
#include "opal/util/show_help.h"
#include "orte/mca/ras/base/base.h"
#include "orte/mca/ras/ras.h"

/* A token or a list quoted in a message: enough to recognise it, never a screenful. */
#define RAS_QUOTE_SIZE 128

/* One host while parsing. */
typedef struct {
    char *name;
    uint32_t slots;
    uint32_t max_slots; /* 0: no limit */
    int line;           /* first hostfile line naming the host (first entry for -H) */
    int max_line;       /* the hostfile line that set max_slots */
    bool slots_given;   /* -H only: a count was given, ":N" or by listing the host twice */
} ras_host_t;

/* Hosts in the order first named, with a hash index so that a long hostfile with repeated
 * hosts is not quadratic. */
typedef struct {
    ras_host_t *hosts;
    size_t num_hosts;
    size_t capacity;
    size_t *index;     /* open addressing: position in hosts + 1, 0 for an empty bucket */
    size_t index_size; /* a power of two, more than twice num_hosts */
} ras_host_table_t;

/* ------------------------------------------------------------------------------------------ */
/* characters and numbers */

static bool ras_is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool ras_is_name_char(char c)
{
    return ras_is_alnum(c) || '.' == c || '-' == c || '_' == c;
}

static bool ras_is_blank(char c)
{
    return ' ' == c || '\t' == c || '\r' == c || '\v' == c || '\f' == c;
}

static bool ras_is_host_name(const char *text, size_t length)
{
    if (0 == length || length > ORTE_RAS_MAX_NAME_LEN || !ras_is_alnum(text[0])) {
        return false;
    }
    for (size_t i = 1; i < length; i++) {
        if (!ras_is_name_char(text[i])) {
            return false;
        }
    }
    return true;
}

/* A count from 1 to max in plain decimal digits (no sign, no blanks). */
static bool ras_parse_count(const char *text, size_t length, uint32_t max, uint32_t *value)
{
    uint64_t number = 0;

    if (0 == length) {
        return false;
    }
    for (size_t i = 0; i < length; i++) {
        if (text[i] < '0' || text[i] > '9') {
            return false;
        }
        number = number * 10u + (uint64_t) (text[i] - '0');
        if (number > max) {
            return false;
        }
    }
    if (0 == number) {
        return false;
    }
    *value = (uint32_t) number;
    return true;
}

/* ------------------------------------------------------------------------------------------ */
/* the host table */

static size_t ras_hash(const char *name)
{
    return (size_t) opal_hash_fnv1a_string(OPAL_HASH_FNV1A_INIT, name);
}

static ras_host_t *ras_table_find(const ras_host_table_t *table, const char *name)
{
    size_t mask;

    if (0 == table->index_size) {
        return NULL;
    }
    mask = table->index_size - 1;
    for (size_t bucket = ras_hash(name) & mask;; bucket = (bucket + 1) & mask) {
        size_t position = table->index[bucket];

        if (0 == position) {
            return NULL;
        }
        if (0 == strcmp(table->hosts[position - 1].name, name)) {
            return &table->hosts[position - 1];
        }
    }
}

static int ras_table_grow_index(ras_host_table_t *table)
{
    size_t size = 0 == table->index_size ? 64 : table->index_size * 2;
    size_t *index = calloc(size, sizeof(*index));

    if (NULL == index) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < table->num_hosts; i++) {
        size_t bucket = ras_hash(table->hosts[i].name) & (size - 1);

        while (0 != index[bucket]) {
            bucket = (bucket + 1) & (size - 1);
        }
        index[bucket] = i + 1;
    }
    free(table->index);
    table->index = index;
    table->index_size = size;
    return HERD_SUCCESS;
}

/* Appends a host not yet in the table; *host gets it with no slots, for the caller to fill.
 * HERD_ERR_OUT_OF_RESOURCE also when the table holds ORTE_RAS_MAX_NODES hosts already. */
static int ras_table_add(ras_host_table_t *table, const char *name, size_t length, int line,
                         ras_host_t **host)
{
    ras_host_t *entry;
    size_t bucket;
    int rc;

    if (table->num_hosts >= ORTE_RAS_MAX_NODES) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if ((table->num_hosts + 1) * 2 > table->index_size) {
        rc = ras_table_grow_index(table);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
    if (table->num_hosts == table->capacity) {
        size_t capacity = 0 == table->capacity ? 16 : table->capacity * 2;
        ras_host_t *grown = realloc(table->hosts, capacity * sizeof(*grown));

        if (NULL == grown) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        table->hosts = grown;
        table->capacity = capacity;
    }
    entry = &table->hosts[table->num_hosts];
    memset(entry, 0, sizeof(*entry));
    entry->name = malloc(length + 1);
    if (NULL == entry->name) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    memcpy(entry->name, name, length);
    entry->name[length] = '\0';
    entry->line = line;
    bucket = ras_hash(entry->name) & (table->index_size - 1);
    while (0 != table->index[bucket]) {
        bucket = (bucket + 1) & (table->index_size - 1);
    }
    table->index[bucket] = ++table->num_hosts;
    *host = entry;
    return HERD_SUCCESS;
}

/* The host named text[0..length), or NULL. */
static ras_host_t *ras_table_find_text(const ras_host_table_t *table, const char *text,
                                       size_t length)
{
    char name[ORTE_RAS_MAX_NAME_LEN + 1];

    if (length > ORTE_RAS_MAX_NAME_LEN) {
        return NULL;
    }
    memcpy(name, text, length);
    name[length] = '\0';
    return ras_table_find(table, name);
}

static void ras_table_destruct(ras_host_table_t *table)
{
    for (size_t i = 0; i < table->num_hosts; i++) {
        free(table->hosts[i].name);
    }
    free(table->hosts);
    free(table->index);
    memset(table, 0, sizeof(*table));
}

/* ------------------------------------------------------------------------------------------ */
/* hostfiles */

static void ras_quote(const char *text, size_t length, char quoted[RAS_QUOTE_SIZE])
{
    orte_ras_base_printable(text, length, quoted, RAS_QUOTE_SIZE);
}

static int ras_report_bad_host(const char *filename, int line, const char *text, size_t length)
{
    char quoted[RAS_QUOTE_SIZE];
    const char *colon = memchr(text, ':', length);

    ras_quote(text, length, quoted);
    if (NULL != colon && ras_is_host_name(text, (size_t) (colon - text))) {
        /* "node1:4" is the -H form; say how a hostfile writes it */
        char host[RAS_QUOTE_SIZE];
        char count[RAS_QUOTE_SIZE];

        ras_quote(text, (size_t) (colon - text), host);
        ras_quote(colon + 1, length - (size_t) (colon - text) - 1, count);
        opal_show_help(ORTE_RAS_BASE_HELP_FILE, "hostfile-host-with-colon", true, filename, line,
                       quoted, host, count);
    } else {
        opal_show_help(ORTE_RAS_BASE_HELP_FILE, "hostfile-bad-host", true, filename, line, quoted);
    }
    return HERD_ERR_SILENT;
}

/* What one line says about its host. */
typedef struct {
    const char *host;
    size_t host_length;
    uint32_t slots;
    uint32_t max_slots;
    bool have_slots;
    bool have_max_slots;
} ras_hostfile_line_t;

static const char *ras_skip_blanks(const char *text)
{
    while (ras_is_blank(*text)) {
        text++;
    }
    return text;
}

static const char *ras_word_end(const char *text)
{
    while ('\0' != *text && !ras_is_blank(*text) && '=' != *text) {
        text++;
    }
    return text;
}

/* One "key=value" attribute at *cursor (blanks around '=' are allowed, as in "slots = 4");
 * *cursor moves past it. */
static int ras_hostfile_attribute(const char *filename, int line_number, const char **cursor,
                                  ras_hostfile_line_t *line)
{
    static char *const keys[] = {"slots", "max_slots", NULL};
    const char *key = *cursor;
    const char *key_end = ras_word_end(key);
    const char *value;
    const char *value_end;
    const char *after_key = ras_skip_blanks(key_end);
    char token[RAS_QUOTE_SIZE];
    char name[RAS_QUOTE_SIZE];
    uint32_t number;
    uint32_t *target;
    bool *seen;

    if ('=' != *after_key || key == key_end) {
        /* not an attribute; quote the whole blank-delimited word */
        const char *word_end = key;

        while ('\0' != *word_end && !ras_is_blank(*word_end)) {
            word_end++;
        }
        ras_quote(key, (size_t) (word_end - key), token);
        opal_show_help(ORTE_RAS_BASE_HELP_FILE, "hostfile-not-key-value", true, filename,
                       line_number, token);
        return HERD_ERR_SILENT;
    }
    value = ras_skip_blanks(after_key + 1);
    value_end = value;
    while ('\0' != *value_end && !ras_is_blank(*value_end)) {
        value_end++;
    }
    *cursor = value_end;
    ras_quote(key, (size_t) (value_end - key), token);
    ras_quote(key, (size_t) (key_end - key), name);

    if (0 == strcmp(name, "slots")) {
        target = &line->slots;
        seen = &line->have_slots;
    } else if (0 == strcmp(name, "max_slots") || 0 == strcmp(name, "max-slots")) {
        target = &line->max_slots;
        seen = &line->have_max_slots;
    } else {
        const char *closest = opal_closest_string(name, keys);
        char suggestion[64] = "";

        if (NULL != closest) {
            snprintf(suggestion, sizeof(suggestion), " Did you mean %s?", closest);
        }
        opal_show_help(ORTE_RAS_BASE_HELP_FILE, "hostfile-unknown-key", true, filename, line_number,
                       name, token, suggestion);
        return HERD_ERR_SILENT;
    }
    if (*seen) {
        opal_show_help(ORTE_RAS_BASE_HELP_FILE, "hostfile-repeated-key", true, filename,
                       line_number, name, token);
        return HERD_ERR_SILENT;
    }
    if (!ras_parse_count(value, (size_t) (value_end - value), ORTE_RAS_MAX_SLOTS, &number)) {
        opal_show_help(ORTE_RAS_BASE_HELP_FILE, "hostfile-bad-number", true, filename, line_number,
                       token, name, ORTE_RAS_MAX_SLOTS);
        return HERD_ERR_SILENT;
    }
    *target = number;
    *seen = true;
    return HERD_SUCCESS;
}

/* Adds what the line says to the host's earlier lines. */
static int ras_hostfile_merge(ras_host_table_t *table, const char *filename, int line_number,
                              const ras_hostfile_line_t *line)
{
    ras_host_t *host = ras_table_find_text(table, line->host, line->host_length);
    uint64_t slots;
    int rc;

    if (NULL == host) {
        rc = ras_table_add(table, line->host, line->host_length, line_number, &host);
        if (HERD_ERR_OUT_OF_RESOURCE == rc && table->num_hosts >= ORTE_RAS_MAX_NODES) {
            opal_show_help(ORTE_RAS_BASE_HELP_FILE, "hostfile-too-many-hosts", true, filename,
                           line_number, ORTE_RAS_MAX_NODES);
            return HERD_ERR_SILENT;
        }
        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
    if (line->have_max_slots) {
        if (0 != host->max_slots && host->max_slots != line->max_slots) {
            opal_show_help(ORTE_RAS_BASE_HELP_FILE, "hostfile-max-slots-conflict", true, host->name,
                           filename, host->max_line, host->max_slots, line_number, line->max_slots);
            return HERD_ERR_SILENT;
        }
        host->max_slots = line->max_slots;
        host->max_line = line_number;
    }
    slots = (uint64_t) host->slots + line->slots;
    if (slots > ORTE_RAS_MAX_SLOTS) {
        opal_show_help(ORTE_RAS_BASE_HELP_FILE, "hostfile-too-many-slots", true, filename,
                       line_number, host->name, (unsigned long long) slots, ORTE_RAS_MAX_SLOTS);
        return HERD_ERR_SILENT;
    }
    if (0 != host->max_slots && slots > host->max_slots) {
        opal_show_help(ORTE_RAS_BASE_HELP_FILE, "hostfile-slots-exceed-max", true, filename,
                       line_number, host->name, (unsigned) slots, host->max_slots, host->max_line);
        return HERD_ERR_SILENT;
    }
    host->slots = (uint32_t) slots;
    return HERD_SUCCESS;
}

static int ras_hostfile_parse_line(ras_host_table_t *table, const char *filename, int line_number,
                                   char *text)
{
    ras_hostfile_line_t line = {.slots = 1};
    char *comment = strchr(text, '#');
    const char *cursor;
    int rc;

    if (NULL != comment) {
        *comment = '\0';
    }
    cursor = ras_skip_blanks(text);
    if ('\0' == *cursor) {
        return HERD_SUCCESS;
    }
    line.host = cursor;
    while ('\0' != *cursor && !ras_is_blank(*cursor)) {
        cursor++;
    }
    line.host_length = (size_t) (cursor - line.host);
    if (!ras_is_host_name(line.host, line.host_length)) {
        return ras_report_bad_host(filename, line_number, line.host, line.host_length);
    }
    for (cursor = ras_skip_blanks(cursor); '\0' != *cursor; cursor = ras_skip_blanks(cursor)) {
        rc = ras_hostfile_attribute(filename, line_number, &cursor, &line);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
    if (line.have_max_slots && line.max_slots < line.slots) {
        char host[RAS_QUOTE_SIZE];

        ras_quote(line.host, line.host_length, host);
        opal_show_help(ORTE_RAS_BASE_HELP_FILE, "hostfile-max-below-slots", true, filename,
                       line_number, host, line.slots, line.max_slots);
        return HERD_ERR_SILENT;
    }
    return ras_hostfile_merge(table, filename, line_number, &line);
}

static int ras_hostfile_parse(const char *filename, const char *text, size_t length,
                              ras_host_table_t *table)
{
    char *copy = malloc(length + 1);
    size_t offset = 0;
    int line_number = 0;
    int rc = HERD_SUCCESS;

    if (NULL == copy) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (length > 0) {
        memcpy(copy, text, length);
    }
    copy[length] = '\0';
    while (offset < length && HERD_SUCCESS == rc) {
        char *line = copy + offset;
        char *newline = memchr(line, '\n', length - offset);
        size_t line_length = NULL != newline ? (size_t) (newline - line) : length - offset;

        offset += line_length + 1;
        line[line_length] = '\0';
        line_number++; /* no overflow: the text is at most ORTE_RAS_MAX_HOSTFILE_SIZE bytes */
        if (strlen(line) != line_length) {
            opal_show_help(ORTE_RAS_BASE_HELP_FILE, "hostfile-binary", true, filename, line_number,
                           filename);
            rc = HERD_ERR_SILENT;
            break;
        }
        rc = ras_hostfile_parse_line(table, filename, line_number, line);
    }
    free(copy);
    if (HERD_SUCCESS == rc && 0 == table->num_hosts) {
        opal_show_help(ORTE_RAS_BASE_HELP_FILE, "hostfile-empty", true, filename);
        rc = HERD_ERR_SILENT;
    }
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* -H host lists */

static int ras_host_list_entry(ras_host_table_t *table, const char *list, int entry,
                               const char *start, const char *end)
{
    char quoted[RAS_QUOTE_SIZE];
    char whole[RAS_QUOTE_SIZE]; /* the list, quoted in messages */
    const char *colon;
    const char *host_end;
    ras_host_t *host;
    uint32_t slots = 1;
    uint64_t sum;
    int rc;

    while (start < end && ras_is_blank(*start)) {
        start++;
    }
    while (end > start && ras_is_blank(end[-1])) {
        end--;
    }
    if (start == end) {
        ras_quote(list, strlen(list), whole);
        opal_show_help(ORTE_RAS_BASE_HELP_FILE, "host-list-empty-entry", true, entry, whole);
        return HERD_ERR_SILENT;
    }
    ras_quote(start, (size_t) (end - start), quoted);
    colon = memchr(start, ':', (size_t) (end - start));
    host_end = NULL != colon ? colon : end;
    if (!ras_is_host_name(start, (size_t) (host_end - start))) {
        ras_quote(list, strlen(list), whole);
        opal_show_help(ORTE_RAS_BASE_HELP_FILE, "host-list-bad-host", true, entry, quoted, whole);
        return HERD_ERR_SILENT;
    }
    if (NULL != colon &&
        !ras_parse_count(colon + 1, (size_t) (end - colon - 1), ORTE_RAS_MAX_SLOTS, &slots)) {
        ras_quote(list, strlen(list), whole);
        opal_show_help(ORTE_RAS_BASE_HELP_FILE, "host-list-bad-slots", true, entry, quoted, whole,
                       ORTE_RAS_MAX_SLOTS);
        return HERD_ERR_SILENT;
    }
    host = ras_table_find_text(table, start, (size_t) (host_end - start));
    if (NULL == host) {
        rc = ras_table_add(table, start, (size_t) (host_end - start), entry, &host);
        if (HERD_ERR_OUT_OF_RESOURCE == rc && table->num_hosts >= ORTE_RAS_MAX_NODES) {
            opal_show_help(ORTE_RAS_BASE_HELP_FILE, "host-list-too-many-hosts", true,
                           ORTE_RAS_MAX_NODES);
            return HERD_ERR_SILENT;
        }
        if (HERD_SUCCESS != rc) {
            return rc;
        }
        host->slots = slots;
        host->slots_given = NULL != colon;
        return HERD_SUCCESS;
    }
    /* listed again: the user asks for the sum, whatever the hostfile says */
    sum = (uint64_t) host->slots + slots;
    if (sum > ORTE_RAS_MAX_SLOTS) {
        opal_show_help(ORTE_RAS_BASE_HELP_FILE, "host-list-too-many-slots", true, host->name,
                       (unsigned long long) sum, ORTE_RAS_MAX_SLOTS);
        return HERD_ERR_SILENT;
    }
    host->slots = (uint32_t) sum;
    host->slots_given = true;
    return HERD_SUCCESS;
}

static int ras_host_list_parse(const char *list, ras_host_table_t *table)
{
    const char *start = list;
    int entry = 0;

    for (;;) {
        const char *comma = strchr(start, ',');
        const char *end = NULL != comma ? comma : start + strlen(start);
        int rc;

        if (entry == INT32_MAX) {
            /* only a list of gigabytes gets here; say so rather than count on */
            opal_show_help(ORTE_RAS_BASE_HELP_FILE, "host-list-too-many-hosts", true,
                           ORTE_RAS_MAX_NODES);
            return HERD_ERR_SILENT;
        }
        rc = ras_host_list_entry(table, list, ++entry, start, end);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
        if (NULL == comma) {
            return HERD_SUCCESS;
        }
        start = comma + 1;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* the allocation */

/* A node for the host. The name is copied, not moved: with -H the hostfile's table is still
 * searched after some of its hosts became nodes. */
static int ras_node_from_host(orte_node_t *node, const ras_host_t *host, uint32_t slots,
                              uint32_t max_slots, const char *origin)
{
    node->name = strdup(host->name);
    node->origin = strdup(origin);
    if (NULL == node->name || NULL == node->origin) {
        free(node->name);
        free(node->origin);
        node->name = NULL;
        node->origin = NULL;
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    node->slots = slots;
    node->max_slots = max_slots;
    return HERD_SUCCESS;
}

static int ras_allocation_reserve(orte_allocation_t *allocation, size_t count)
{
    allocation->nodes = calloc(count > 0 ? count : 1, sizeof(*allocation->nodes));
    return NULL != allocation->nodes ? HERD_SUCCESS : HERD_ERR_OUT_OF_RESOURCE;
}

/* The hostfile alone, or the host list alone, in the order hosts were first named. */
static int ras_allocation_from_table(orte_allocation_t *allocation, const ras_host_table_t *table,
                                     const char *filename)
{
    size_t origin_size = (NULL != filename ? strlen(filename) : 0) + 16;
    char *origin = malloc(origin_size);
    int rc;

    if (NULL == origin) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    rc = ras_allocation_reserve(allocation, table->num_hosts);
    for (size_t i = 0; HERD_SUCCESS == rc && i < table->num_hosts; i++) {
        const ras_host_t *host = &table->hosts[i];

        if (NULL != filename) {
            snprintf(origin, origin_size, "%s:%d", filename, host->line);
        } else {
            snprintf(origin, origin_size, "-H");
        }
        rc = ras_node_from_host(&allocation->nodes[allocation->num_nodes], host, host->slots,
                                host->max_slots, origin);
        if (HERD_SUCCESS == rc) {
            allocation->num_nodes++;
        }
    }
    free(origin);
    return rc;
}

/* The host list picks hosts from the hostfile, in the list's order. */
static int ras_allocation_select(orte_allocation_t *allocation, const ras_host_table_t *file_table,
                                 const ras_host_table_t *list_table, const char *filename)
{
    size_t origin_size = strlen(filename) + 32;
    char *origin = malloc(origin_size);
    int rc;

    if (NULL == origin) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    rc = ras_allocation_reserve(allocation, list_table->num_hosts);
    for (size_t i = 0; HERD_SUCCESS == rc && i < list_table->num_hosts; i++) {
        const ras_host_t *wanted = &list_table->hosts[i];
        const ras_host_t *host = ras_table_find(file_table, wanted->name);
        uint32_t slots;

        if (NULL == host) {
            opal_show_help(ORTE_RAS_BASE_HELP_FILE, "host-list-not-in-hostfile", true, wanted->name,
                           filename, wanted->name);
            rc = HERD_ERR_SILENT;
            break;
        }
        slots = wanted->slots_given ? wanted->slots : host->slots;
        if (0 != host->max_slots && slots > host->max_slots) {
            opal_show_help(ORTE_RAS_BASE_HELP_FILE, "host-list-exceeds-max-slots", true, host->name,
                           slots, filename, host->max_slots, host->max_line);
            rc = HERD_ERR_SILENT;
            break;
        }
        snprintf(origin, origin_size, "%s%s:%d", wanted->slots_given ? "-H, " : "", filename,
                 host->line);
        rc = ras_node_from_host(&allocation->nodes[allocation->num_nodes], host, slots,
                                host->max_slots, origin);
        if (HERD_SUCCESS == rc) {
            allocation->num_nodes++;
        }
    }
    free(origin);
    return rc;
}

int orte_ras_base_parse_hosts(const char *filename, const char *text, size_t length,
                              const char *host_list, orte_allocation_t **allocation)
{
    ras_host_table_t file_table = {0};
    ras_host_table_t list_table = {0};
    orte_allocation_t *result = NULL;
    int rc = HERD_SUCCESS;

    if (NULL == allocation || (NULL == text && NULL == host_list)) {
        return HERD_ERR_BAD_PARAM;
    }
    if (NULL == filename) {
        filename = "(hostfile)";
    }
    if (NULL != text && length > ORTE_RAS_MAX_HOSTFILE_SIZE) {
        opal_show_help(ORTE_RAS_BASE_HELP_FILE, "hostfile-too-large", true, filename,
                       ORTE_RAS_MAX_HOSTFILE_SIZE / (1024u * 1024u));
        return HERD_ERR_SILENT;
    }
    if (NULL != text) {
        rc = ras_hostfile_parse(filename, text, length, &file_table);
    }
    if (HERD_SUCCESS == rc && NULL != host_list) {
        rc = ras_host_list_parse(host_list, &list_table);
    }
    if (HERD_SUCCESS != rc) {
        goto out;
    }
    result = orte_allocation_new("hostfile");
    if (NULL == result) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    if (NULL == host_list) {
        rc = ras_allocation_from_table(result, &file_table, filename);
    } else if (NULL == text) {
        rc = ras_allocation_from_table(result, &list_table, NULL);
    } else {
        rc = ras_allocation_select(result, &file_table, &list_table, filename);
    }
    if (HERD_SUCCESS == rc) {
        *allocation = result;
        result = NULL;
    }

out:
    orte_allocation_free(result);
    ras_table_destruct(&file_table);
    ras_table_destruct(&list_table);
    return rc;
}

/* The whole file in memory (it is small, and the parser wants to see all of it). */
static int ras_read_file(const char *path, char **text, size_t *length)
{
    FILE *file = fopen(path, "r");
    size_t used = 0;
    size_t capacity = 0;
    char *data = NULL;
    int rc = HERD_SUCCESS;

    if (NULL == file) {
        opal_show_help(ORTE_RAS_BASE_HELP_FILE, "hostfile-unreadable", true, path, strerror(errno));
        return HERD_ERR_SILENT;
    }
    for (;;) {
        size_t got;

        if (used > ORTE_RAS_MAX_HOSTFILE_SIZE) {
            opal_show_help(ORTE_RAS_BASE_HELP_FILE, "hostfile-too-large", true, path,
                           ORTE_RAS_MAX_HOSTFILE_SIZE / (1024u * 1024u));
            rc = HERD_ERR_SILENT;
            break;
        }
        if (used == capacity) {
            size_t grown_capacity = 0 == capacity ? 4096 : capacity * 2;
            char *grown;

            /* one byte past the limit tells a file at the limit from a longer one */
            if (grown_capacity > ORTE_RAS_MAX_HOSTFILE_SIZE + 1u) {
                grown_capacity = ORTE_RAS_MAX_HOSTFILE_SIZE + 1u;
            }
            grown = realloc(data, grown_capacity);
            if (NULL == grown) {
                rc = HERD_ERR_OUT_OF_RESOURCE;
                break;
            }
            data = grown;
            capacity = grown_capacity;
        }
        errno = 0;
        got = fread(data + used, 1, capacity - used, file);
        used += got;
        if (got > 0) {
            continue;
        }
        if (ferror(file)) {
            /* a folder opens fine and fails here (EISDIR) */
            opal_show_help(ORTE_RAS_BASE_HELP_FILE, "hostfile-unreadable", true, path,
                           strerror(0 != errno ? errno : EIO));
            rc = HERD_ERR_SILENT;
        }
        break;
    }
    fclose(file);
    if (HERD_SUCCESS != rc) {
        free(data);
        return rc;
    }
    *text = data;
    *length = used;
    return HERD_SUCCESS;
}

int orte_ras_base_read_hosts(const char *hostfile, const char *host_list,
                             orte_allocation_t **allocation)
{
    char *text = NULL;
    size_t length = 0;
    int rc;

    if (NULL == allocation || (NULL == hostfile && NULL == host_list)) {
        return HERD_ERR_BAD_PARAM;
    }
    if (NULL != hostfile) {
        rc = ras_read_file(hostfile, &text, &length);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
    rc = orte_ras_base_parse_hosts(hostfile, text, length, host_list, allocation);
    free(text);
    return rc;
}
