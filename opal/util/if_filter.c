/* SPDX-License-Identifier: BSD-3-Clause */
/* Interface filters: parsing "eth0" / "10.0.0.0/8" entries and matching interfaces. */
#include "herd_config.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/argv.h"
#include "opal/util/if_filter.h"

int opal_if_filter_parse(const char *text, opal_if_filter_t *filter)
{
    opal_if_filter_t parsed;
    char address[INET6_ADDRSTRLEN];
    const char *slash = strchr(text, '/');
    size_t length = NULL != slash ? (size_t) (slash - text) : strlen(text);
    unsigned max_prefix = 0;

    memset(&parsed, 0, sizeof(parsed));
    if (length < sizeof(address)) {
        memcpy(address, text, length);
        address[length] = '\0';
        if (1 == inet_pton(AF_INET, address, parsed.address)) {
            parsed.family = AF_INET;
            max_prefix = 32;
        } else if (1 == inet_pton(AF_INET6, address, parsed.address)) {
            parsed.family = AF_INET6;
            max_prefix = 128;
        }
    }
    if (0 == parsed.family) {
        /* not an address, so an interface name, which holds no slash */
        if (NULL != slash || 0 == length || length >= IFNAMSIZ) {
            return HERD_ERR_BAD_PARAM;
        }
        parsed.name = strdup(text);
        if (NULL == parsed.name) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        *filter = parsed;
        return HERD_SUCCESS;
    }
    parsed.prefix = max_prefix;
    if (NULL != slash) {
        unsigned long prefix = 0;
        size_t digits = 0;
        for (const char *p = slash + 1; '\0' != *p; p++, digits++) {
            if (*p < '0' || *p > '9' || digits >= 3) {
                return HERD_ERR_BAD_PARAM;
            }
            prefix = prefix * 10 + (unsigned long) (*p - '0');
        }
        if (0 == digits || prefix > max_prefix) {
            return HERD_ERR_BAD_PARAM;
        }
        parsed.prefix = (unsigned) prefix;
    }
    *filter = parsed;
    return HERD_SUCCESS;
}

void opal_if_filter_release(opal_if_filter_t *filter)
{
    free(filter->name);
    filter->name = NULL;
}

/* Removes blanks around an entry in place, so "lo, eth0" works as users expect. */
static char *trim(char *text)
{
    while (' ' == *text || '\t' == *text) {
        text++;
    }
    char *end = text + strlen(text);
    while (end > text && (' ' == end[-1] || '\t' == end[-1])) {
        *--end = '\0';
    }
    return text;
}

int opal_if_filter_list_parse(const char *value, opal_if_filter_t **filters, size_t *count,
                              char **bad_entry)
{
    opal_if_filter_t *parsed = NULL;
    size_t num = 0;
    int rc = HERD_SUCCESS;
    char **entries = opal_argv_split(NULL != value ? value : "", ',');
    if (NULL == entries) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    size_t num_entries = opal_argv_count(entries);
    if (num_entries > 0) {
        parsed = calloc(num_entries, sizeof(*parsed));
        if (NULL == parsed) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
            goto out;
        }
    }
    for (size_t i = 0; i < num_entries; i++) {
        char *entry = trim(entries[i]);
        if ('\0' == entry[0]) {
            continue;
        }
        rc = opal_if_filter_parse(entry, &parsed[num]);
        if (HERD_ERR_BAD_PARAM == rc) {
            *bad_entry = strdup(entry);
            rc = (NULL != *bad_entry) ? HERD_ERR_BAD_PARAM : HERD_ERR_OUT_OF_RESOURCE;
        }
        if (HERD_SUCCESS != rc) {
            goto out;
        }
        num++;
    }
    if (0 == num) {
        free(parsed);
        parsed = NULL;
    }
    *filters = parsed;
    *count = num;
    parsed = NULL;

out:
    opal_if_filter_list_free(parsed, num);
    opal_argv_free(entries);
    return rc;
}

void opal_if_filter_list_free(opal_if_filter_t *filters, size_t count)
{
    for (size_t i = 0; NULL != filters && i < count; i++) {
        opal_if_filter_release(&filters[i]);
    }
    free(filters);
}

bool opal_sockaddr_bytes(const struct sockaddr *sa, uint8_t bytes[16], int *family)
{
    if (NULL == sa) {
        return false;
    }
    if (AF_INET == sa->sa_family) {
        struct sockaddr_in in;
        memcpy(&in, sa, sizeof(in));
        memcpy(bytes, &in.sin_addr, 4);
        *family = AF_INET;
        return true;
    }
    if (AF_INET6 == sa->sa_family) {
        struct sockaddr_in6 in6;
        memcpy(&in6, sa, sizeof(in6));
        memcpy(bytes, &in6.sin6_addr, 16);
        *family = AF_INET6;
        return true;
    }
    return false;
}

/* Whether the first prefix bits of a and b are equal. */
static bool prefix_equal(const uint8_t *a, const uint8_t *b, unsigned prefix)
{
    unsigned bytes = prefix / 8;
    unsigned bits = prefix % 8;
    if (0 != memcmp(a, b, bytes)) {
        return false;
    }
    if (0 == bits) {
        return true;
    }
    uint8_t mask = (uint8_t) (0xffu << (8 - bits));
    return (a[bytes] & mask) == (b[bytes] & mask);
}

bool opal_if_filter_matches(const opal_if_filter_t *filter, const char *ifname,
                            const struct sockaddr *address)
{
    uint8_t bytes[16];
    int family = 0;
    if (NULL != filter->name) {
        return NULL != ifname && 0 == strcmp(filter->name, ifname);
    }
    return opal_sockaddr_bytes(address, bytes, &family) && family == filter->family &&
           prefix_equal(bytes, filter->address, filter->prefix);
}
