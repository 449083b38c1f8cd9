/* SPDX-License-Identifier: BSD-3-Clause */
/* Slurm's compressed lists: host lists such as n[01-04,7],gpu5 and task counts such as 2(x3),1,
 * expanded with every mistake reported at the character where it is. */
#include "herd_config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/show_help.h"
#include "orte/mca/ras/base/base.h"
#include "orte/mca/ras/ras.h"

/* Digits of one number in a range or count: 9 keeps it below 10^9, far beyond any limit. */
#define RAS_MAX_DIGITS 9

/* How much of a long list a message shows around the bad character. */
#define RAS_EXCERPT_CHARS 64

#define RAS_NODELIST_VARIABLE       "SLURM_JOB_NODELIST"
#define RAS_TASKS_PER_NODE_VARIABLE "SLURM_TASKS_PER_NODE"

/* ------------------------------------------------------------------------------------------ */
/* messages */

/* The short reason of a malformed list (a section of the help file, one line). */
static char *ras_reason(const char *topic, const char *argument)
{
    char *text = opal_show_help_string(ORTE_RAS_BASE_HELP_FILE, topic, false, argument);
    size_t length;

    if (NULL == text) {
        return NULL;
    }
    length = strlen(text);
    while (length > 0 && '\n' == text[length - 1]) {
        text[--length] = '\0';
    }
    return text;
}

/* Reports list (from variable) as malformed at byte position: the list (or the part around
 * position, for a long one) with a caret under the bad character, followed by the reason. */
static int ras_report_malformed(const char *topic, const char *variable, const char *list,
                                size_t position, const char *reason_topic, const char *argument)
{
    size_t length = strlen(list);
    size_t from = 0;
    size_t to = length;
    char excerpt[RAS_EXCERPT_CHARS + 8];
    char caret[RAS_EXCERPT_CHARS + 8];
    size_t used = 0;
    size_t column;
    char *reason;

    if (position > length) {
        position = length;
    }
    if (length > RAS_EXCERPT_CHARS) {
        from = position > RAS_EXCERPT_CHARS / 2 ? position - RAS_EXCERPT_CHARS / 2 : 0;
        to = from + RAS_EXCERPT_CHARS;
        if (to > length) {
            to = length;
            from = to - RAS_EXCERPT_CHARS;
        }
    }
    if (from > 0) {
        memcpy(excerpt, "...", 3);
        used = 3;
    }
    column = used + (position - from);
    orte_ras_base_printable(list + from, to - from, excerpt + used, sizeof(excerpt) - used - 3);
    used = strlen(excerpt);
    if (to < length) {
        memcpy(excerpt + used, "...", 4);
    }
    memset(caret, ' ', column);
    caret[column] = '^';
    caret[column + 1] = '\0';

    reason = ras_reason(reason_topic, argument);
    opal_show_help(ORTE_RAS_BASE_HELP_FILE, topic, true, variable, position + 1, excerpt, caret,
                   NULL != reason ? reason : reason_topic);
    free(reason);
    return HERD_ERR_SILENT;
}

static int ras_report_hostlist(const char *variable, const char *list, size_t position,
                               const char *reason_topic, const char *argument)
{
    return ras_report_malformed("hostlist-malformed", variable, list, position, reason_topic,
                                argument);
}

static int ras_report_tasks(const char *variable, const char *list, size_t position,
                            const char *reason_topic, const char *argument)
{
    return ras_report_malformed("tasks-per-node-malformed", variable, list, position, reason_topic,
                                argument);
}

/* The character at position, quoted for a reason ("'$'"). */
static void ras_char_text(char c, char text[8])
{
    unsigned char byte = (unsigned char) c;

    if (byte < 0x20 || byte >= 0x7f) {
        snprintf(text, 8, "0x%02x", byte);
    } else {
        snprintf(text, 8, "'%c'", c);
    }
}

static bool ras_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool ras_is_alnum(char c)
{
    return ras_is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool ras_is_name_char(char c)
{
    return ras_is_alnum(c) || '.' == c || '-' == c || '_' == c;
}

/* ------------------------------------------------------------------------------------------ */
/* host lists */

typedef struct {
    uint32_t low;
    uint32_t high;
    int width; /* zero-padded to the digits of the first bound: n[01-10] */
} ras_range_t;

/* One bracketed group of ranges and the literal text after it. */
typedef struct {
    size_t first_range;
    size_t num_ranges;
    size_t suffix_start; /* position of the text after ']' */
    size_t suffix_length;
} ras_group_t;

/* One entry of the list: prefix, then groups (each with its suffix). Arrays are reused from
 * entry to entry. */
typedef struct {
    const char *variable;
    const char *list;
    size_t prefix_start;
    size_t prefix_length;
    ras_group_t *groups;
    size_t num_groups;
    size_t groups_capacity;
    ras_range_t *ranges;
    size_t num_ranges;
    size_t ranges_capacity;
    char **names; /* the expansion so far */
    size_t num_names;
    size_t names_capacity;
} ras_hostlist_t;

static int ras_grow(void **array, size_t *capacity, size_t needed, size_t element)
{
    size_t grown_capacity;
    void *grown;

    if (needed <= *capacity) {
        return HERD_SUCCESS;
    }
    grown_capacity = 0 == *capacity ? 8 : *capacity;
    while (grown_capacity < needed) {
        grown_capacity *= 2;
    }
    grown = realloc(*array, grown_capacity * element);
    if (NULL == grown) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    *array = grown;
    *capacity = grown_capacity;
    return HERD_SUCCESS;
}

/* Digits at *position, at most RAS_MAX_DIGITS of them. */
static int ras_hostlist_number(ras_hostlist_t *state, size_t *position, uint32_t *value, int *width)
{
    const char *list = state->list;
    size_t start = *position;
    uint32_t number = 0;
    char text[8];

    if (!ras_is_digit(list[start])) {
        if ('\0' == list[start]) {
            return ras_report_hostlist(state->variable, list, start, "hostlist-reason-unclosed",
                                       "");
        }
        if ('[' == list[start]) {
            return ras_report_hostlist(state->variable, list, start, "hostlist-reason-nested", "");
        }
        ras_char_text(list[start], text);
        return ras_report_hostlist(state->variable, list, start, "hostlist-reason-not-number",
                                   text);
    }
    while (ras_is_digit(list[*position])) {
        if (*position - start >= RAS_MAX_DIGITS) {
            return ras_report_hostlist(state->variable, list, start,
                                       "hostlist-reason-number-too-long", "");
        }
        number = number * 10u + (uint32_t) (list[*position] - '0');
        (*position)++;
    }
    *value = number;
    *width = (int) (*position - start);
    return HERD_SUCCESS;
}

/* The group starting at the '[' at *position; *count gets the numbers it stands for. */
static int ras_hostlist_group(ras_hostlist_t *state, size_t *position, uint64_t *count)
{
    const char *list = state->list;
    size_t open = *position;
    uint64_t total = 0;
    char text[8];
    int rc;

    (*position)++;
    for (;;) {
        ras_range_t range;
        size_t high_start;
        int high_width;

        rc = ras_hostlist_number(state, position, &range.low, &range.width);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
        range.high = range.low;
        if ('-' == list[*position]) {
            (*position)++;
            high_start = *position;
            rc = ras_hostlist_number(state, position, &range.high, &high_width);
            if (HERD_SUCCESS != rc) {
                return rc;
            }
            if (range.high < range.low) {
                return ras_report_hostlist(state->variable, list, high_start,
                                           "hostlist-reason-descending", "");
            }
        }
        rc = ras_grow((void **) &state->ranges, &state->ranges_capacity, state->num_ranges + 1,
                      sizeof(*state->ranges));
        if (HERD_SUCCESS != rc) {
            return rc;
        }
        state->ranges[state->num_ranges++] = range;
        total += (uint64_t) range.high - range.low + 1u;
        if (total > ORTE_RAS_MAX_NODES) {
            opal_show_help(ORTE_RAS_BASE_HELP_FILE, "hostlist-too-many", true, state->variable,
                           ORTE_RAS_MAX_NODES);
            return HERD_ERR_SILENT;
        }
        switch (list[*position]) {
        case ',':
            (*position)++;
            continue;
        case ']':
            (*position)++;
            *count = total;
            return HERD_SUCCESS;
        case '\0':
            return ras_report_hostlist(state->variable, list, open, "hostlist-reason-unclosed", "");
        case '[':
            return ras_report_hostlist(state->variable, list, *position, "hostlist-reason-nested",
                                       "");
        default:
            ras_char_text(list[*position], text);
            return ras_report_hostlist(state->variable, list, *position, "hostlist-reason-in-range",
                                       text);
        }
    }
}

static size_t ras_digits(uint32_t value)
{
    size_t digits = 1;

    while (value >= 10u) {
        value /= 10u;
        digits++;
    }
    return digits;
}

/* The longest name the entry makes, so that no name is cut. */
static size_t ras_hostlist_longest(const ras_hostlist_t *state)
{
    size_t length = state->prefix_length;

    for (size_t g = 0; g < state->num_groups; g++) {
        const ras_group_t *group = &state->groups[g];
        size_t widest = 0;

        for (size_t r = group->first_range; r < group->first_range + group->num_ranges; r++) {
            size_t width = ras_digits(state->ranges[r].high);

            if ((size_t) state->ranges[r].width > width) {
                width = (size_t) state->ranges[r].width;
            }
            widest = width > widest ? width : widest;
        }
        length += widest + group->suffix_length;
    }
    return length;
}

/* Appends the count names of the parsed entry, the last group varying fastest. */
static int ras_hostlist_emit(ras_hostlist_t *state, uint64_t count)
{
    size_t *range_of = calloc(state->num_groups + 1, sizeof(*range_of));
    uint32_t *value_of = calloc(state->num_groups + 1, sizeof(*value_of));
    char name[ORTE_RAS_MAX_NAME_LEN + 1];
    int rc;

    if (NULL == range_of || NULL == value_of) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    rc = ras_grow((void **) &state->names, &state->names_capacity,
                  state->num_names + (size_t) count, sizeof(*state->names));
    if (HERD_SUCCESS != rc) {
        goto out;
    }
    for (size_t g = 0; g < state->num_groups; g++) {
        range_of[g] = state->groups[g].first_range;
        value_of[g] = state->ranges[range_of[g]].low;
    }
    for (uint64_t k = 0; k < count; k++) {
        size_t used = state->prefix_length;

        memcpy(name, state->list + state->prefix_start, state->prefix_length);
        for (size_t g = 0; g < state->num_groups; g++) {
            const ras_group_t *group = &state->groups[g];
            int n = snprintf(name + used, sizeof(name) - used, "%0*u",
                             state->ranges[range_of[g]].width, (unsigned) value_of[g]);

            used += (size_t) n;
            memcpy(name + used, state->list + group->suffix_start, group->suffix_length);
            used += group->suffix_length;
        }
        name[used] = '\0';
        state->names[state->num_names] = strdup(name);
        if (NULL == state->names[state->num_names]) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
            goto out;
        }
        state->num_names++;
        /* the next combination: an odometer whose wheels are the groups' ranges */
        for (size_t g = state->num_groups; g-- > 0;) {
            const ras_group_t *group = &state->groups[g];

            if (value_of[g] < state->ranges[range_of[g]].high) {
                value_of[g]++;
                break;
            }
            if (range_of[g] + 1 < group->first_range + group->num_ranges) {
                range_of[g]++;
                value_of[g] = state->ranges[range_of[g]].low;
                break;
            }
            range_of[g] = group->first_range;
            value_of[g] = state->ranges[range_of[g]].low;
        }
    }

out:
    free(range_of);
    free(value_of);
    return rc;
}

/* Ends the literal text that runs from literal_start to position: the prefix, or the suffix of
 * the last group. */
static void ras_hostlist_end_literal(ras_hostlist_t *state, size_t literal_start, size_t position)
{
    if (0 == state->num_groups) {
        state->prefix_length = position - literal_start;
    } else {
        state->groups[state->num_groups - 1].suffix_length = position - literal_start;
    }
}

/* Parses the entry at *position (up to a ',' outside brackets or the end) and expands it. */
static int ras_hostlist_entry(ras_hostlist_t *state, size_t *position)
{
    const char *list = state->list;
    size_t start = *position;
    size_t literal_start = start;
    uint64_t count = 1;
    char text[8];
    int rc;

    state->prefix_start = start;
    state->prefix_length = 0;
    state->num_groups = 0;
    state->num_ranges = 0;
    if (',' == list[start] || '\0' == list[start]) {
        return ras_report_hostlist(state->variable, list, start, "hostlist-reason-empty", "");
    }
    if (!ras_is_alnum(list[start]) && '[' != list[start]) {
        ras_char_text(list[start], text);
        return ras_report_hostlist(state->variable, list, start, "hostlist-reason-first-char",
                                   text);
    }
    for (;;) {
        char c = list[*position];

        if (ras_is_name_char(c)) {
            (*position)++;
            continue;
        }
        ras_hostlist_end_literal(state, literal_start, *position);
        if (',' == c || '\0' == c) {
            break;
        }
        if (']' == c) {
            return ras_report_hostlist(state->variable, list, *position, "hostlist-reason-unopened",
                                       "");
        }
        if ('[' == c) {
            uint64_t group_count = 0;
            ras_group_t *group;

            rc = ras_grow((void **) &state->groups, &state->groups_capacity, state->num_groups + 1,
                          sizeof(*state->groups));
            if (HERD_SUCCESS != rc) {
                return rc;
            }
            group = &state->groups[state->num_groups++];
            group->first_range = state->num_ranges;
            rc = ras_hostlist_group(state, position, &group_count);
            if (HERD_SUCCESS != rc) {
                return rc;
            }
            group->num_ranges = state->num_ranges - group->first_range;
            group->suffix_start = *position;
            group->suffix_length = 0;
            literal_start = *position;
            count *= group_count;
            if (count > ORTE_RAS_MAX_NODES) {
                opal_show_help(ORTE_RAS_BASE_HELP_FILE, "hostlist-too-many", true, state->variable,
                               ORTE_RAS_MAX_NODES);
                return HERD_ERR_SILENT;
            }
            continue;
        }
        ras_char_text(c, text);
        return ras_report_hostlist(state->variable, list, *position, "hostlist-reason-bad-char",
                                   text);
    }
    if (ras_hostlist_longest(state) > ORTE_RAS_MAX_NAME_LEN) {
        char limit[16];

        snprintf(limit, sizeof(limit), "%u", ORTE_RAS_MAX_NAME_LEN);
        return ras_report_hostlist(state->variable, list, start, "hostlist-reason-too-long", limit);
    }
    if (state->num_names + count > ORTE_RAS_MAX_NODES) {
        opal_show_help(ORTE_RAS_BASE_HELP_FILE, "hostlist-too-many", true, state->variable,
                       ORTE_RAS_MAX_NODES);
        return HERD_ERR_SILENT;
    }
    return ras_hostlist_emit(state, count);
}

static void ras_names_free(char **names, size_t num_names)
{
    for (size_t i = 0; NULL != names && i < num_names; i++) {
        free(names[i]);
    }
    free(names);
}

int orte_ras_base_hostlist_expand(const char *variable, const char *list, char ***names,
                                  size_t *num_names)
{
    ras_hostlist_t state = {.variable = variable, .list = list};
    size_t position = 0;
    int rc;

    if (NULL == list || NULL == names || NULL == num_names) {
        return HERD_ERR_BAD_PARAM;
    }
    if (NULL == state.variable) {
        state.variable = "the host list";
    }
    if ('\0' == list[0]) {
        opal_show_help(ORTE_RAS_BASE_HELP_FILE, "hostlist-empty", true, state.variable);
        return HERD_ERR_SILENT;
    }
    for (;;) {
        rc = ras_hostlist_entry(&state, &position);
        if (HERD_SUCCESS != rc) {
            break;
        }
        if ('\0' == list[position]) {
            break;
        }
        position++; /* the ',' */
    }
    free(state.groups);
    free(state.ranges);
    if (HERD_SUCCESS != rc) {
        ras_names_free(state.names, state.num_names);
        return rc;
    }
    *names = state.names;
    *num_names = state.num_names;
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* tasks per node */

/* A count from 1 to max at *position. */
static int ras_tasks_number(const char *variable, const char *text, size_t *position, uint32_t max,
                            uint32_t *value)
{
    size_t start = *position;
    uint64_t number = 0;
    char shown[16];

    if (!ras_is_digit(text[start])) {
        if (',' == text[start] || '\0' == text[start]) {
            return ras_report_tasks(variable, text, start, "tasks-reason-empty", "");
        }
        ras_char_text(text[start], shown);
        return ras_report_tasks(variable, text, start, "tasks-reason-not-number", shown);
    }
    while (ras_is_digit(text[*position])) {
        number = number * 10u + (uint64_t) (text[*position] - '0');
        if (number > max) {
            snprintf(shown, sizeof(shown), "%u", max);
            return ras_report_tasks(variable, text, start, "tasks-reason-out-of-range", shown);
        }
        (*position)++;
    }
    if (0 == number) {
        snprintf(shown, sizeof(shown), "%u", max);
        return ras_report_tasks(variable, text, start, "tasks-reason-out-of-range", shown);
    }
    *value = (uint32_t) number;
    return HERD_SUCCESS;
}

int orte_ras_base_tasks_per_node_expand(const char *variable, const char *text, uint32_t **counts,
                                        size_t *num_counts)
{
    uint32_t *values = NULL;
    size_t used = 0;
    size_t capacity = 0;
    size_t position = 0;
    char shown[8];
    int rc = HERD_SUCCESS;

    if (NULL == text || NULL == counts || NULL == num_counts) {
        return HERD_ERR_BAD_PARAM;
    }
    if (NULL == variable) {
        variable = "the task counts";
    }
    if ('\0' == text[0]) {
        opal_show_help(ORTE_RAS_BASE_HELP_FILE, "hostlist-empty", true, variable);
        return HERD_ERR_SILENT;
    }
    for (;;) {
        uint32_t count;
        uint32_t repeat = 1;

        rc = ras_tasks_number(variable, text, &position, ORTE_RAS_MAX_SLOTS, &count);
        if (HERD_SUCCESS != rc) {
            break;
        }
        if ('(' == text[position]) {
            if ('x' != text[position + 1]) {
                rc = ras_report_tasks(variable, text, position + 1, "tasks-reason-repeat", "");
                break;
            }
            position += 2;
            rc = ras_tasks_number(variable, text, &position, ORTE_RAS_MAX_NODES, &repeat);
            if (HERD_SUCCESS != rc) {
                break;
            }
            if (')' != text[position]) {
                rc = ras_report_tasks(variable, text, position, "tasks-reason-repeat", "");
                break;
            }
            position++;
        }
        if (used + repeat > ORTE_RAS_MAX_NODES) {
            opal_show_help(ORTE_RAS_BASE_HELP_FILE, "hostlist-too-many", true, variable,
                           ORTE_RAS_MAX_NODES);
            rc = HERD_ERR_SILENT;
            break;
        }
        rc = ras_grow((void **) &values, &capacity, used + repeat, sizeof(*values));
        if (HERD_SUCCESS != rc) {
            break;
        }
        for (uint32_t i = 0; i < repeat; i++) {
            values[used++] = count;
        }
        if ('\0' == text[position]) {
            break;
        }
        if (',' != text[position]) {
            ras_char_text(text[position], shown);
            rc = ras_report_tasks(variable, text, position, "tasks-reason-bad-char", shown);
            break;
        }
        position++;
    }
    if (HERD_SUCCESS != rc) {
        free(values);
        return rc;
    }
    *counts = values;
    *num_counts = used;
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* the Slurm allocation */

static int ras_compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The first name listed twice, or NULL (reported by the caller). */
static int ras_find_duplicate(char **names, size_t num_names, char **duplicate)
{
    char **sorted = malloc((num_names > 0 ? num_names : 1) * sizeof(*sorted));

    *duplicate = NULL;
    if (NULL == sorted) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (num_names > 0) {
        memcpy(sorted, names, num_names * sizeof(*sorted));
    }
    qsort(sorted, num_names, sizeof(*sorted), ras_compare_names);
    for (size_t i = 1; i < num_names; i++) {
        if (0 == strcmp(sorted[i - 1], sorted[i])) {
            *duplicate = sorted[i];
            break;
        }
    }
    free(sorted);
    return HERD_SUCCESS;
}

int orte_ras_base_slurm_allocation(const char *nodelist, const char *tasks_per_node,
                                   orte_allocation_t **allocation)
{
    orte_allocation_t *result = NULL;
    char **names = NULL;
    size_t num_names = 0;
    uint32_t *counts = NULL;
    size_t num_counts = 0;
    char *duplicate = NULL;
    int rc;

    if (NULL == nodelist || NULL == allocation) {
        return HERD_ERR_BAD_PARAM;
    }
    rc = orte_ras_base_hostlist_expand(RAS_NODELIST_VARIABLE, nodelist, &names, &num_names);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (NULL != tasks_per_node && '\0' != tasks_per_node[0]) {
        rc = orte_ras_base_tasks_per_node_expand(RAS_TASKS_PER_NODE_VARIABLE, tasks_per_node,
                                                 &counts, &num_counts);
        if (HERD_SUCCESS != rc) {
            goto out;
        }
        if (num_counts != num_names) {
            char shown_nodes[RAS_EXCERPT_CHARS + 4];
            char shown_tasks[RAS_EXCERPT_CHARS + 4];

            orte_ras_base_printable(nodelist, strlen(nodelist), shown_nodes, sizeof(shown_nodes));
            orte_ras_base_printable(tasks_per_node, strlen(tasks_per_node), shown_tasks,
                                    sizeof(shown_tasks));
            opal_show_help(ORTE_RAS_BASE_HELP_FILE, "tasks-per-node-mismatch", true,
                           RAS_TASKS_PER_NODE_VARIABLE, num_counts, RAS_NODELIST_VARIABLE,
                           num_names, RAS_NODELIST_VARIABLE, shown_nodes,
                           RAS_TASKS_PER_NODE_VARIABLE, shown_tasks, RAS_TASKS_PER_NODE_VARIABLE);
            rc = HERD_ERR_SILENT;
            goto out;
        }
    }
    rc = ras_find_duplicate(names, num_names, &duplicate);
    if (HERD_SUCCESS != rc) {
        goto out;
    }
    if (NULL != duplicate) {
        opal_show_help(ORTE_RAS_BASE_HELP_FILE, "hostlist-duplicate", true, RAS_NODELIST_VARIABLE,
                       duplicate);
        rc = HERD_ERR_SILENT;
        goto out;
    }
    result = orte_allocation_new("slurm");
    if (NULL == result) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    result->nodes = calloc(num_names, sizeof(*result->nodes));
    if (NULL == result->nodes) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    for (size_t i = 0; i < num_names; i++) {
        orte_node_t *node = &result->nodes[i];

        node->origin = strdup(RAS_NODELIST_VARIABLE);
        if (NULL == node->origin) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
            goto out;
        }
        node->name = names[i];
        names[i] = NULL;
        node->slots = NULL != counts ? counts[i] : 1u;
        result->num_nodes++;
    }
    *allocation = result;
    result = NULL;

out:
    orte_allocation_free(result);
    ras_names_free(names, num_names);
    free(counts);
    return rc;
}
