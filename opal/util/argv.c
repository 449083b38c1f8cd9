/* SPDX-License-Identifier: BSD-3-Clause */
/* NULL-terminated string vectors (argv-style) and "did you mean" string distances. */
#include "herd_config.h"

#include "opal/util/argv.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t opal_argv_count(char *const *argv)
{
    size_t count = 0;

    if (NULL == argv) {
        return 0;
    }
    while (NULL != argv[count]) {
        count++;
    }
    return count;
}

void opal_argv_free(char **argv)
{
    if (NULL == argv) {
        return;
    }
    for (size_t i = 0; NULL != argv[i]; i++) {
        free(argv[i]);
    }
    free(argv);
}

/* Free the first count strings of a temporary array and the array itself. */
static void free_strings(char **strings, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        free(strings[i]);
    }
    free(strings);
}

int opal_argv_insert(char ***argv, size_t index, char *const *source)
{
    size_t count, num_new;
    char **copies, **grown;

    if (NULL == argv) {
        return HERD_ERR_BAD_PARAM;
    }
    count = opal_argv_count(*argv);
    if (index > count) {
        return HERD_ERR_BAD_PARAM;
    }
    num_new = opal_argv_count(source);
    if (0 == num_new && NULL != *argv) {
        return HERD_SUCCESS;
    }

    /* Copy the new strings before touching *argv, so a failure leaves it as it was and inserting
     * a vector into itself reads the strings before they move. */
    copies = malloc((num_new + 1) * sizeof(*copies));
    if (NULL == copies) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < num_new; i++) {
        copies[i] = strdup(source[i]);
        if (NULL == copies[i]) {
            free_strings(copies, i);
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }

    grown = realloc(*argv, (count + num_new + 1) * sizeof(*grown));
    if (NULL == grown) {
        free_strings(copies, num_new);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    memmove(&grown[index + num_new], &grown[index], (count - index) * sizeof(*grown));
    memcpy(&grown[index], copies, num_new * sizeof(*grown));
    grown[count + num_new] = NULL;
    free(copies);
    *argv = grown;
    return HERD_SUCCESS;
}

int opal_argv_append(char ***argv, const char *arg)
{
    /* A one-entry vector on the stack; the cast is safe because insert only reads it. */
    char *const single[2] = {(char *) arg, NULL};

    if (NULL == argv || NULL == arg) {
        return HERD_ERR_BAD_PARAM;
    }
    return opal_argv_insert(argv, opal_argv_count(*argv), single);
}

int opal_argv_append_unique(char ***argv, const char *arg)
{
    if (NULL == argv || NULL == arg) {
        return HERD_ERR_BAD_PARAM;
    }
    if (opal_argv_find(*argv, arg) >= 0) {
        return HERD_SUCCESS;
    }
    return opal_argv_append(argv, arg);
}

int opal_argv_prepend(char ***argv, const char *arg)
{
    char *const single[2] = {(char *) arg, NULL};

    if (NULL == argv || NULL == arg) {
        return HERD_ERR_BAD_PARAM;
    }
    return opal_argv_insert(argv, 0, single);
}

int opal_argv_delete(char ***argv, size_t index, size_t count)
{
    size_t total;

    if (NULL == argv) {
        return HERD_ERR_BAD_PARAM;
    }
    total = opal_argv_count(*argv);
    if (index >= total || 0 == count) {
        return HERD_SUCCESS;
    }
    if (count > total - index) {
        count = total - index;
    }
    for (size_t i = index; i < index + count; i++) {
        free((*argv)[i]);
    }
    /* Moves the terminating NULL too. The array is not shrunk: that could only fail or waste
     * time, and the spare slots are harmless. */
    memmove(&(*argv)[index], &(*argv)[index + count], (total - index - count + 1) * sizeof(char *));
    return HERD_SUCCESS;
}

char **opal_argv_copy(char *const *argv)
{
    char **copy = NULL;

    if (NULL == argv) {
        return NULL;
    }
    if (HERD_SUCCESS != opal_argv_insert(&copy, 0, argv)) {
        return NULL;
    }
    return copy;
}

/* Walk the fields of text, counting them, and when fields is not NULL also storing copies.
 * Returns the number of fields, or SIZE_MAX when a copy cannot be allocated (the copies made so
 * far are freed). An empty text has no fields even when empty fields are kept: "" is an empty
 * list, not a list of one empty string. */
static size_t split_fields(const char *text, char delimiter, bool keep_empty, char **fields)
{
    size_t num_fields = 0;
    const char *start, *end;

    if ('\0' == *text) {
        return 0;
    }
    for (start = text;; start = end + 1) {
        /* With delimiter '\0', strchr finds the terminator: the whole text is one field. */
        end = strchr(start, delimiter);
        if (NULL == end) {
            end = start + strlen(start);
        }
        if (end > start || keep_empty) {
            if (NULL != fields) {
                fields[num_fields] = strndup(start, (size_t) (end - start));
                if (NULL == fields[num_fields]) {
                    free_strings(fields, num_fields);
                    return SIZE_MAX;
                }
            }
            num_fields++;
        }
        if ('\0' == *end) {
            break;
        }
    }
    return num_fields;
}

/* Split text at delimiter, keeping or dropping empty fields. NULL text is treated as "". */
static char **split(const char *text, char delimiter, bool keep_empty)
{
    size_t num_fields;
    char **fields;

    if (NULL == text) {
        text = "";
    }
    num_fields = split_fields(text, delimiter, keep_empty, NULL);
    fields = malloc((num_fields + 1) * sizeof(*fields));
    if (NULL == fields) {
        return NULL;
    }
    if (SIZE_MAX == split_fields(text, delimiter, keep_empty, fields)) {
        return NULL;
    }
    fields[num_fields] = NULL;
    return fields;
}

char **opal_argv_split(const char *text, char delimiter)
{
    return split(text, delimiter, false);
}

char **opal_argv_split_with_empty(const char *text, char delimiter)
{
    return split(text, delimiter, true);
}

char *opal_argv_join(char *const *argv, char delimiter)
{
    size_t count = opal_argv_count(argv), length = 0, pos = 0;
    char *joined;

    for (size_t i = 0; i < count; i++) {
        length += strlen(argv[i]) + 1;
    }
    joined = malloc(length + 1);
    if (NULL == joined) {
        return NULL;
    }
    for (size_t i = 0; i < count; i++) {
        size_t len = strlen(argv[i]);

        if (i > 0 && '\0' != delimiter) {
            joined[pos++] = delimiter;
        }
        memcpy(&joined[pos], argv[i], len);
        pos += len;
    }
    joined[pos] = '\0';
    return joined;
}

int opal_argv_find(char *const *argv, const char *arg)
{
    if (NULL == argv || NULL == arg) {
        return -1;
    }
    for (size_t i = 0; NULL != argv[i]; i++) {
        if (0 == strcmp(argv[i], arg)) {
            return (int) i;
        }
    }
    return -1;
}

int opal_env_find(char *const *env, const char *name)
{
    if (NULL == env || NULL == name) {
        return -1;
    }
    size_t len = strcspn(name, "=");
    for (size_t i = 0; NULL != env[i]; i++) {
        if (0 == strncmp(env[i], name, len) && '=' == env[i][len]) {
            return (int) i;
        }
    }
    return -1;
}

size_t opal_string_distance(const char *a, const char *b)
{
    size_t len_a, len_b, result;
    size_t stack_row[64];
    size_t *row;

    if (NULL == a) {
        a = "";
    }
    if (NULL == b) {
        b = "";
    }
    len_a = strlen(a);
    len_b = strlen(b);
    if (0 == len_a || 0 == len_b) {
        return len_a + len_b;
    }

    /* One row of the edit-distance table suffices; option names fit the stack buffer. If a long
     * string cannot get memory, the longer length is returned: an upper bound on the distance,
     * so the only effect is a suggestion not being made. */
    if (len_b < sizeof(stack_row) / sizeof(stack_row[0])) {
        row = stack_row;
    } else {
        row = malloc((len_b + 1) * sizeof(*row));
        if (NULL == row) {
            return len_a > len_b ? len_a : len_b;
        }
    }

    for (size_t j = 0; j <= len_b; j++) {
        row[j] = j;
    }
    for (size_t i = 1; i <= len_a; i++) {
        size_t diagonal = row[0];

        row[0] = i;
        for (size_t j = 1; j <= len_b; j++) {
            size_t above = row[j];
            size_t best = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);

            if (above + 1 < best) {
                best = above + 1;
            }
            if (row[j - 1] + 1 < best) {
                best = row[j - 1] + 1;
            }
            diagonal = above;
            row[j] = best;
        }
    }
    result = row[len_b];
    if (row != stack_row) {
        free(row);
    }
    return result;
}

const char *opal_closest_string(const char *word, char *const *candidates)
{
    const char *best = NULL;
    size_t best_distance = SIZE_MAX, limit;

    if (NULL == word || NULL == candidates) {
        return NULL;
    }
    limit = strlen(word) / 3;
    if (limit < 2) {
        limit = 2;
    }
    for (size_t i = 0; NULL != candidates[i]; i++) {
        size_t distance = opal_string_distance(word, candidates[i]);

        /* Strictly smaller: on a tie the earlier candidate wins, so the answer is stable. */
        if (distance <= limit && distance < best_distance) {
            best = candidates[i];
            best_distance = distance;
        }
    }
    return best;
}
