/* SPDX-License-Identifier: BSD-3-Clause */
/* overlay tcp interface selection: which local address a daemon listens on and advertises,
 * narrowed by an include or exclude list of interface names and subnets. */
#ifndef ORTE_MCA_OVERLAY_TCP_IF_H
#define ORTE_MCA_OVERLAY_TCP_IF_H

#include <ifaddrs.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "opal/util/if_filter.h"
#include "orte/types.h"

/* One entry of a list: an interface name, or a subnet (a bare address is a /32 or /128). */
typedef opal_if_filter_t overlay_tcp_if_filter_t;

typedef struct {
    overlay_tcp_if_filter_t *filters;
    size_t count;
    bool exclude;   /* the entries are what to leave out */
    char *variable; /* where the list came from, for messages: "overlay_tcp_if_include" */
    char *value;    /* the list as given */
} overlay_tcp_if_list_t;

/* Parse a comma-separated list ("eth0, 10.0.0.0/8, fd00::/64"). An empty or NULL value gives an
 * empty list (everything allowed). A bad entry is reported, naming the entry and variable, and
 * HERD_ERR_SILENT returned. *list is set only on success. */
int overlay_tcp_if_list_parse(const char *variable, const char *value, bool exclude,
                              overlay_tcp_if_list_t *list);
void overlay_tcp_if_list_free(overlay_tcp_if_list_t *list);

/* Whether an address of interface name may be used under list. */
bool overlay_tcp_if_allowed(const overlay_tcp_if_list_t *list, const char *name,
                            const struct sockaddr *address);

/* The best allowed address in an interface list of getifaddrs(): up, IPv4 or IPv6 (not
 * link-local), of family (AF_UNSPEC for any); non-loopback before loopback, IPv4 before IPv6,
 * then list order. HERD_ERR_NOT_FOUND (not reported) when there is none. Port is left 0. */
int overlay_tcp_if_choose_from(const struct ifaddrs *interfaces, const overlay_tcp_if_list_t *list,
                               int family, struct sockaddr_storage *address,
                               socklen_t *address_length);

/* The same over this host's interfaces; when none is usable it reports what was found and
 * what the list left out, and returns HERD_ERR_SILENT. */
int overlay_tcp_if_choose(const overlay_tcp_if_list_t *list, int family, orte_vpid_t vpid,
                          struct sockaddr_storage *address, socklen_t *address_length);

#endif /* ORTE_MCA_OVERLAY_TCP_IF_H */
