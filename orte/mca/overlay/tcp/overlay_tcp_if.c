/* SPDX-License-Identifier: BSD-3-Clause */
/* overlay tcp interface selection: parse include/exclude lists and pick the address to listen
 * on and advertise from getifaddrs(). */
#include "herd_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/status.h"
#include "opal/util/show_help.h"
#include "orte/mca/overlay/tcp/overlay_tcp.h"
#include "orte/mca/overlay/tcp/overlay_tcp_if.h"
#include "orte/mca/overlay/tcp/overlay_tcp_wire.h"


void overlay_tcp_if_list_free(overlay_tcp_if_list_t *list)
{
    if (NULL == list) {
        return;
    }
    opal_if_filter_list_free(list->filters, list->count);
    free(list->variable);
    free(list->value);
    memset(list, 0, sizeof(*list));
}

int overlay_tcp_if_list_parse(const char *variable, const char *value, bool exclude,
                              overlay_tcp_if_list_t *list)
{
    overlay_tcp_if_list_t result;
    char *bad_entry = NULL;
    int rc = HERD_SUCCESS;

    if (NULL == variable || NULL == list) {
        return HERD_ERR_BAD_PARAM;
    }
    memset(&result, 0, sizeof(result));
    result.exclude = exclude;
    result.variable = strdup(variable);
    result.value = strdup(NULL != value ? value : "");
    if (NULL == result.variable || NULL == result.value) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    rc = opal_if_filter_list_parse(value, &result.filters, &result.count, &bad_entry);
    if (HERD_ERR_BAD_PARAM == rc) {
        opal_show_help(OVERLAY_TCP_HELP_FILE, "bad-interface-entry", true, bad_entry, variable,
                       variable, value);
        free(bad_entry);
        rc = HERD_ERR_SILENT;
    }

out:
    if (HERD_SUCCESS != rc) {
        overlay_tcp_if_list_free(&result);
        return rc;
    }
    *list = result;
    return HERD_SUCCESS;
}

bool overlay_tcp_if_allowed(const overlay_tcp_if_list_t *list, const char *name,
                            const struct sockaddr *address)
{
    bool matches = false;

    if (NULL == list || 0 == list->count) {
        return true;
    }
    for (size_t i = 0; i < list->count && !matches; i++) {
        matches = opal_if_filter_matches(&list->filters[i], name, address);
    }
    return list->exclude ? !matches : matches;
}

/* 0 best .. 3 worst; -1 for an address that cannot be used at all. */
static int if_rank(const struct ifaddrs *ifa, int family)
{
    uint8_t bytes[16];
    int address_family;
    bool loopback;

    if (NULL == ifa->ifa_name || 0 == (ifa->ifa_flags & IFF_UP) ||
        !opal_sockaddr_bytes(ifa->ifa_addr, bytes, &address_family)) {
        return -1;
    }
    if (AF_UNSPEC != family && family != address_family) {
        return -1;
    }
    loopback = 0 != (ifa->ifa_flags & IFF_LOOPBACK);
    if (AF_INET == address_family) {
        static const uint8_t any4[4] = {0, 0, 0, 0};

        if (0 == memcmp(bytes, any4, 4)) {
            return -1;
        }
        loopback = loopback || 127 == bytes[0];
    } else {
        static const uint8_t loop6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

        /* link-local needs a scope id that a URI does not carry */
        if (0xfe == bytes[0] && 0x80 == (bytes[1] & 0xc0)) {
            return -1;
        }
        loopback = loopback || 0 == memcmp(bytes, loop6, 16);
    }
    return (loopback ? 2 : 0) + (AF_INET6 == address_family ? 1 : 0);
}

int overlay_tcp_if_choose_from(const struct ifaddrs *interfaces, const overlay_tcp_if_list_t *list,
                               int family, struct sockaddr_storage *address,
                               socklen_t *address_length)
{
    const struct ifaddrs *best = NULL;
    int best_rank = 4;

    for (const struct ifaddrs *ifa = interfaces; NULL != ifa; ifa = ifa->ifa_next) {
        int rank = if_rank(ifa, family);

        if (rank < 0 || rank >= best_rank ||
            !overlay_tcp_if_allowed(list, ifa->ifa_name, ifa->ifa_addr)) {
            continue;
        }
        best = ifa;
        best_rank = rank;
    }
    if (NULL == best) {
        return HERD_ERR_NOT_FOUND;
    }
    memset(address, 0, sizeof(*address));
    if (AF_INET == best->ifa_addr->sa_family) {
        memcpy(address, best->ifa_addr, sizeof(struct sockaddr_in));
        ((struct sockaddr_in *) address)->sin_port = 0;
        *address_length = sizeof(struct sockaddr_in);
    } else {
        memcpy(address, best->ifa_addr, sizeof(struct sockaddr_in6));
        ((struct sockaddr_in6 *) address)->sin6_port = 0;
        ((struct sockaddr_in6 *) address)->sin6_scope_id = 0;
        *address_length = sizeof(struct sockaddr_in6);
    }
    return HERD_SUCCESS;
}

/* "lo 127.0.0.1, eth0 10.0.0.5 (left out by overlay_tcp_if_exclude)" for the report. */
static void if_describe(const struct ifaddrs *interfaces, const overlay_tcp_if_list_t *list,
                        int family, char *text, size_t size)
{
    size_t used = 0;

    text[0] = '\0';
    for (const struct ifaddrs *ifa = interfaces; NULL != ifa && used < size; ifa = ifa->ifa_next) {
        char host[INET6_ADDRSTRLEN + 16];
        const char *note = "";
        int n;

        if (NULL == ifa->ifa_name || NULL == ifa->ifa_addr ||
            (AF_INET != ifa->ifa_addr->sa_family && AF_INET6 != ifa->ifa_addr->sa_family)) {
            continue;
        }
        overlay_tcp_address_format(ifa->ifa_addr, host, sizeof(host));
        /* drop the ":0" port the formatter adds */
        char *colon = strrchr(host, ':');
        if (NULL != colon) {
            *colon = '\0';
        }
        if (if_rank(ifa, family) < 0) {
            note = AF_UNSPEC != family && family != ifa->ifa_addr->sa_family
                       ? " (other address family)"
                       : " (down, link-local or unspecified)";
        } else if (!overlay_tcp_if_allowed(list, ifa->ifa_name, ifa->ifa_addr)) {
            note = list->exclude ? " (excluded)" : " (not included)";
        }
        n = snprintf(text + used, size - used, "%s%s %s%s", 0 == used ? "" : ", ", ifa->ifa_name,
                     host, note);
        if (n < 0) {
            break;
        }
        used += (size_t) n;
    }
    if (0 == used) {
        snprintf(text, size, "none");
    }
}

int overlay_tcp_if_choose(const overlay_tcp_if_list_t *list, int family, orte_vpid_t vpid,
                          struct sockaddr_storage *address, socklen_t *address_length)
{
    struct ifaddrs *interfaces = NULL;
    char found[2048];
    char host[256];
    char restriction[1024];
    int rc;

    if (0 != getifaddrs(&interfaces)) {
        int saved = errno;

        if (0 != gethostname(host, sizeof(host))) {
            snprintf(host, sizeof(host), "(unknown host)");
        }
        host[sizeof(host) - 1] = '\0';
        opal_show_help(OVERLAY_TCP_HELP_FILE, "getifaddrs-failed", true, vpid, host,
                       strerror(saved));
        return HERD_ERR_SILENT;
    }
    rc = overlay_tcp_if_choose_from(interfaces, list, family, address, address_length);
    if (HERD_ERR_NOT_FOUND == rc) {
        if (0 != gethostname(host, sizeof(host))) {
            snprintf(host, sizeof(host), "(unknown host)");
        }
        host[sizeof(host) - 1] = '\0';
        if_describe(interfaces, list, family, found, sizeof(found));
        if (NULL != list && 0 != list->count) {
            snprintf(restriction, sizeof(restriction), "%s = \"%s\"", list->variable, list->value);
        } else {
            snprintf(restriction, sizeof(restriction), "no interface list is set");
        }
        opal_show_help(OVERLAY_TCP_HELP_FILE, "no-usable-interface", true, vpid, host, found,
                       restriction);
        rc = HERD_ERR_SILENT;
    }
    freeifaddrs(interfaces);
    return rc;
}
