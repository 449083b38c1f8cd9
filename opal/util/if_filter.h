/* SPDX-License-Identifier: BSD-3-Clause */
/* Interface filters, the entries of an include or exclude list (fabric_tcp_if_include,
 * overlay_tcp_if_exclude, ...): an interface name, or a subnet matching every interface that
 * holds an address inside it ("eth0", "10.0.0.0/8", "10.1.2.3" for one host, "fd00::/64"). */
#ifndef OPAL_UTIL_IF_FILTER_H
#define OPAL_UTIL_IF_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "opal/status.h"

typedef struct opal_if_filter {
    char *name;          /* NULL for a subnet */
    int family;          /* AF_INET or AF_INET6, for a subnet */
    uint8_t address[16]; /* network byte order */
    unsigned prefix;     /* bits that must match */
} opal_if_filter_t;

/* Parse one entry. HERD_ERR_BAD_PARAM when it is neither an address[/prefix] nor a possible
 * interface name (empty, too long, holding a slash). *filter is set only on success. */
OPAL_EXPORT int opal_if_filter_parse(const char *text, opal_if_filter_t *filter);
OPAL_EXPORT void opal_if_filter_release(opal_if_filter_t *filter);

/* Parse a comma-separated list ("lo, eth0, 10.0.0.0/8"): blanks around entries and empty
 * entries are ignored. On success *filters (NULL for an empty list) and *count are set. A bad
 * entry gives HERD_ERR_BAD_PARAM with *bad_entry a copy of it (caller frees), so the caller can
 * report it naming its own variable. */
OPAL_EXPORT int opal_if_filter_list_parse(const char *value, opal_if_filter_t **filters,
                                          size_t *count, char **bad_entry);
OPAL_EXPORT void opal_if_filter_list_free(opal_if_filter_t *filters, size_t count);

/* Whether the interface called ifname, or its address (may be NULL), is what filter names. */
OPAL_EXPORT bool opal_if_filter_matches(const opal_if_filter_t *filter, const char *ifname,
                                        const struct sockaddr *address);

/* The raw bytes of an IPv4 or IPv6 address, copied out of the sockaddr (no aliasing casts). */
OPAL_EXPORT bool opal_sockaddr_bytes(const struct sockaddr *sa, uint8_t bytes[16], int *family);

#endif /* OPAL_UTIL_IF_FILTER_H */
