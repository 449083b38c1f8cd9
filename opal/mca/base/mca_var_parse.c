/* SPDX-License-Identifier: BSD-3-Clause */
/* MCA variables: parsing text (from a file, the environment, the command line or the program) into
 * a typed value, the same way for every source. */

#include "herd_config.h"

#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "opal/mca/base/mca_var_internal.h"

static const struct {
    const char *word;
    bool value;
} mca_var_bool_words[] = {
    {"1", true},   {"0", false}, {"true", true}, {"false", false},  {"yes", true},
    {"no", false}, {"on", true}, {"off", false}, {"enabled", true}, {"disabled", false},
};

static const struct {
    const char *suffix;
    size_t multiplier;
} mca_var_size_suffixes[] = {
    {"", 1},
    {"b", 1},
    {"k", 1024},
    {"kb", 1024},
    {"kib", 1024},
    {"m", 1024 * 1024},
    {"mb", 1024 * 1024},
    {"mib", 1024 * 1024},
    {"g", 1024 * 1024 * 1024},
    {"gb", 1024 * 1024 * 1024},
    {"gib", 1024 * 1024 * 1024},
};

static bool mca_var_is_blank(const char *text)
{
    while (isspace((unsigned char) *text)) {
        text++;
    }
    return '\0' == *text;
}

/* Trim in place; returns the first non-blank character. */
char *mca_var_trim(char *text)
{
    char *end;

    while (isspace((unsigned char) *text)) {
        text++;
    }
    end = text + strlen(text);
    while (end > text && isspace((unsigned char) end[-1])) {
        end--;
    }
    *end = '\0';
    return text;
}

/* Read an optionally signed decimal or 0x-hexadecimal number, skipping leading blanks; *end
 * points after the digits. Octal is deliberately not recognised: "010" is ten. */
static bool mca_var_scan_number(const char *text, bool *negative, unsigned long long *magnitude,
                                const char **end)
{
    const char *p = text;
    bool neg = false;
    unsigned int base = 10;
    unsigned long long acc = 0;
    size_t digits = 0;

    while (isspace((unsigned char) *p)) {
        p++;
    }
    if ('+' == *p || '-' == *p) {
        neg = ('-' == *p);
        p++;
    }
    if ('0' == p[0] && ('x' == p[1] || 'X' == p[1])) {
        base = 16;
        p += 2;
    }
    for (;; p++) {
        unsigned int digit;

        if (isdigit((unsigned char) *p)) {
            digit = (unsigned int) (*p - '0');
        } else if (16 == base && isxdigit((unsigned char) *p)) {
            digit = (unsigned int) (tolower((unsigned char) *p) - 'a' + 10);
        } else {
            break;
        }
        if (acc > (ULLONG_MAX - digit) / base) {
            return false;
        }
        acc = acc * base + digit;
        digits++;
    }
    if (0 == digits) {
        return false;
    }
    *negative = neg;
    *magnitude = acc;
    *end = p;
    return true;
}

static bool mca_var_parse_int(const char *text, int *value)
{
    bool negative;
    unsigned long long magnitude;
    const char *end;

    if (!mca_var_scan_number(text, &negative, &magnitude, &end) || !mca_var_is_blank(end)) {
        return false;
    }
    if (negative) {
        if (magnitude > (unsigned long long) INT_MAX + 1) {
            return false;
        }
        *value = (int) (-(long long) magnitude);
    } else {
        if (magnitude > (unsigned long long) INT_MAX) {
            return false;
        }
        *value = (int) magnitude;
    }
    return true;
}

static bool mca_var_parse_unsigned(const char *text, unsigned int *value)
{
    bool negative;
    unsigned long long magnitude;
    const char *end;

    if (!mca_var_scan_number(text, &negative, &magnitude, &end) || !mca_var_is_blank(end)) {
        return false;
    }
    if (negative || magnitude > UINT_MAX) {
        return false;
    }
    *value = (unsigned int) magnitude;
    return true;
}

static bool mca_var_parse_size(const char *text, size_t *value)
{
    bool negative;
    unsigned long long magnitude;
    const char *end;
    const char *suffix;
    size_t suffix_len = 0;

    if (!mca_var_scan_number(text, &negative, &magnitude, &end) || negative) {
        return false;
    }
    suffix = end;
    while (isspace((unsigned char) *suffix)) {
        suffix++;
    }
    while (isalpha((unsigned char) suffix[suffix_len])) {
        suffix_len++;
    }
    if (!mca_var_is_blank(suffix + suffix_len)) {
        return false;
    }
    for (size_t i = 0; i < sizeof(mca_var_size_suffixes) / sizeof(mca_var_size_suffixes[0]); i++) {
        size_t multiplier = mca_var_size_suffixes[i].multiplier;

        if (strlen(mca_var_size_suffixes[i].suffix) != suffix_len ||
            0 != strncasecmp(suffix, mca_var_size_suffixes[i].suffix, suffix_len)) {
            continue;
        }
        if (magnitude > SIZE_MAX / multiplier) {
            return false;
        }
        *value = (size_t) magnitude * multiplier;
        return true;
    }
    return false;
}

/* Whether text, ignoring surrounding blanks, is word (case-insensitive). */
static bool mca_var_word_equals(const char *text, const char *word)
{
    size_t len;

    while (isspace((unsigned char) *text)) {
        text++;
    }
    len = strlen(word);
    return 0 == strncasecmp(text, word, len) && mca_var_is_blank(text + len);
}

static bool mca_var_parse_bool(const char *text, bool *value)
{
    for (size_t i = 0; i < sizeof(mca_var_bool_words) / sizeof(mca_var_bool_words[0]); i++) {
        if (mca_var_word_equals(text, mca_var_bool_words[i].word)) {
            *value = mca_var_bool_words[i].value;
            return true;
        }
    }
    return false;
}

static bool mca_var_parse_enum(const opal_mca_var_enum_value_t *values, const char *text,
                               int *value)
{
    int number;

    for (size_t i = 0; NULL != values[i].name; i++) {
        if (mca_var_word_equals(text, values[i].name)) {
            *value = values[i].value;
            return true;
        }
    }
    /* The numeric form is accepted only for a value the list names. */
    if (mca_var_parse_int(text, &number)) {
        for (size_t i = 0; NULL != values[i].name; i++) {
            if (values[i].value == number) {
                *value = number;
                return true;
            }
        }
    }
    return false;
}

int opal_mca_var_parse(opal_mca_var_type_t type, const opal_mca_var_enum_value_t *values,
                       const char *text, void *value)
{
    bool ok = false;

    if (NULL == text || NULL == value) {
        return HERD_ERR_BAD_PARAM;
    }
    switch (type) {
    case OPAL_MCA_VAR_INT:
        ok = mca_var_parse_int(text, value);
        break;
    case OPAL_MCA_VAR_UNSIGNED:
        ok = mca_var_parse_unsigned(text, value);
        break;
    case OPAL_MCA_VAR_SIZE:
        ok = mca_var_parse_size(text, value);
        break;
    case OPAL_MCA_VAR_BOOL:
        ok = mca_var_parse_bool(text, value);
        break;
    case OPAL_MCA_VAR_STRING: {
        char *copy = strdup(text);

        if (NULL == copy) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        *(char **) value = copy;
        return HERD_SUCCESS;
    }
    case OPAL_MCA_VAR_ENUM:
        ok = NULL != values && mca_var_parse_enum(values, text, value);
        break;
    }
    return ok ? HERD_SUCCESS : HERD_ERR_BAD_PARAM;
}

bool mca_var_name_is_valid(const char *name)
{
    if (NULL == name || '\0' == *name) {
        return false;
    }
    for (const char *p = name; *p; p++) {
        if (!isalnum((unsigned char) *p) && '_' != *p) {
            return false;
        }
    }
    return true;
}
