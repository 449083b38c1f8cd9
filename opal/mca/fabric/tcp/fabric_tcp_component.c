/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric tcp: the node's network interfaces with their addresses, flags, MTU and index, from
 * getifaddrs(), optionally narrowed by fabric_tcp_if_include / fabric_tcp_if_exclude, and what
 * RM-assigned endpoints need: the addresses a listener can bind on and the reserved port range
 * (fabric_tcp_port_base / fabric_tcp_port_range, docs/endpoints.md). */
#include "herd_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#if defined(__linux__)
#include <netpacket/packet.h>
#endif

#include "opal/mca/base/mca_var.h"
#include "opal/util/if_filter.h"
#include "opal/mca/fabric/base/base.h"
#include "opal/mca/fabric/fabric.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"

#define FABRIC_TCP_HELP_FILE "help-fabric-tcp.txt"

/* One entry of an include or exclude list: an interface name, or a subnet that matches every
 * interface holding an address inside it. */
typedef opal_if_filter_t fabric_tcp_filter_t;

#define FABRIC_TCP_DEFAULT_PRIORITY 10
/* The reserved range for RM-assigned endpoints: below Linux's ephemeral ports (32768-60999),
 * so the kernel never hands them out for outgoing connections, and clear of the ofi range. */
#define FABRIC_TCP_DEFAULT_PORT_BASE  16384
#define FABRIC_TCP_DEFAULT_PORT_RANGE 4096

typedef struct {
    int priority;
    char *if_include; /* variable storage, owned by the variable system */
    char *if_exclude;
    int if_include_index;
    int if_exclude_index;
    int port_base;
    int port_range;
    fabric_tcp_filter_t *filters; /* the list that is set, parsed by open() */
    size_t num_filters;
    bool filters_exclude;
    opal_fabric_record_t *record; /* what query() found; discover() hands out copies */
} fabric_tcp_state_t;

static fabric_tcp_state_t fabric_tcp_state = {
    .priority = FABRIC_TCP_DEFAULT_PRIORITY,
    .if_include_index = -1,
    .if_exclude_index = -1,
    .port_base = FABRIC_TCP_DEFAULT_PORT_BASE,
    .port_range = FABRIC_TCP_DEFAULT_PORT_RANGE,
};

static int fabric_tcp_discover(opal_fabric_record_t **record);

static const opal_fabric_module_t fabric_tcp_module = {
    .discover = fabric_tcp_discover,
};

static int fabric_tcp_register(const opal_mca_component_t *component)
{
    static const opal_mca_var_def_t vars[] = {
        {.name = "priority",
         .type = OPAL_MCA_VAR_INT,
         .storage = &fabric_tcp_state.priority,
         .help = "Priority of the tcp fabric component: records are listed "
                 "highest priority first"},
        {.name = "if_include",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &fabric_tcp_state.if_include,
         .help = "Comma-separated interfaces to report, by name (eth0) or "
                 "subnet (10.0.0.0/8, fd00::/64); all others are left out. "
                 "Cannot be combined with fabric_tcp_if_exclude",
         .index = &fabric_tcp_state.if_include_index},
        {.name = "if_exclude",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &fabric_tcp_state.if_exclude,
         .help = "Comma-separated interfaces to leave out, by name (docker0) or "
                 "subnet (172.17.0.0/16). Cannot be combined with "
                 "fabric_tcp_if_include",
         .index = &fabric_tcp_state.if_exclude_index},
        {.name = "port_base",
         .type = OPAL_MCA_VAR_INT,
         .storage = &fabric_tcp_state.port_base,
         .help = "First TCP port of the range reserved on every node for "
                 "RM-assigned endpoints: the session daemons give each process "
                 "a port of it, so peers connect without a modex"},
        {.name = "port_range",
         .type = OPAL_MCA_VAR_INT,
         .storage = &fabric_tcp_state.port_range,
         .help = "Ports in that range (0: never pre-assign tcp endpoints). Each "
                 "of a node's dvm_session_slots jobs gets an equal share; a job "
                 "with more processes on a node than its share uses the modex"},
    };

    /* storage holds the default on entry; a component that stays loaded (static build) still
     * holds the values of its previous registration */
    fabric_tcp_state.priority = FABRIC_TCP_DEFAULT_PRIORITY;
    fabric_tcp_state.if_include = NULL;
    fabric_tcp_state.if_exclude = NULL;
    fabric_tcp_state.port_base = FABRIC_TCP_DEFAULT_PORT_BASE;
    fabric_tcp_state.port_range = FABRIC_TCP_DEFAULT_PORT_RANGE;
    return opal_mca_var_register_table(component, vars, OPAL_MCA_VAR_DEFS_COUNT(vars));
}

static void fabric_tcp_free_filters(void)
{
    opal_if_filter_list_free(fabric_tcp_state.filters, fabric_tcp_state.num_filters);
    fabric_tcp_state.filters = NULL;
    fabric_tcp_state.num_filters = 0;
    fabric_tcp_state.filters_exclude = false;
}

static int fabric_tcp_parse_filters(const char *variable, const char *value, bool exclude)
{
    char *bad_entry = NULL;
    int rc = opal_if_filter_list_parse(value, &fabric_tcp_state.filters,
                                       &fabric_tcp_state.num_filters, &bad_entry);
    if (HERD_ERR_BAD_PARAM == rc) {
        opal_show_help(FABRIC_TCP_HELP_FILE, "bad-interface-entry", true, bad_entry, variable,
                       variable, value);
        free(bad_entry);
        rc = HERD_ERR_SILENT;
    }
    if (HERD_SUCCESS == rc) {
        fabric_tcp_state.filters_exclude = exclude;
    }
    return rc;
}

static int fabric_tcp_open(const opal_mca_component_t *component)
{
    const char *include = fabric_tcp_state.if_include;
    const char *exclude = fabric_tcp_state.if_exclude;
    int rc;

    if (fabric_tcp_state.port_range < 0 || fabric_tcp_state.port_base < 1024 ||
        (int64_t) fabric_tcp_state.port_base + fabric_tcp_state.port_range > 65536) {
        /* a bad range only costs the instant-on: the inventory is still worth having */
        opal_show_help(FABRIC_TCP_HELP_FILE, "bad-port-range", true, fabric_tcp_state.port_base,
                       fabric_tcp_state.port_range);
        fabric_tcp_state.port_range = 0;
    }
    rc = opal_fabric_base_check_include_exclude(fabric_tcp_state.if_include_index,
                                                fabric_tcp_state.if_exclude_index);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    fabric_tcp_free_filters();
    if (NULL != include && '\0' != include[0]) {
        return fabric_tcp_parse_filters("fabric_tcp_if_include", include, false);
    }
    if (NULL != exclude && '\0' != exclude[0]) {
        return fabric_tcp_parse_filters("fabric_tcp_if_exclude", exclude, true);
    }
    return HERD_SUCCESS;
}

/* A name filter matches the interface; a subnet, any of the interface's addresses. */
static bool fabric_tcp_filter_matches(const fabric_tcp_filter_t *filter, const struct ifaddrs *list,
                                      const char *name)
{
    if (NULL != filter->name) {
        return opal_if_filter_matches(filter, name, NULL);
    }
    for (const struct ifaddrs *ifa = list; NULL != ifa; ifa = ifa->ifa_next) {
        if (NULL != ifa->ifa_name && 0 == strcmp(ifa->ifa_name, name) &&
            opal_if_filter_matches(filter, name, ifa->ifa_addr)) {
            return true;
        }
    }
    return false;
}

static bool fabric_tcp_interface_selected(const struct ifaddrs *list, const char *name)
{
    bool matches = false;

    if (0 == fabric_tcp_state.num_filters) {
        return true;
    }
    for (size_t i = 0; i < fabric_tcp_state.num_filters && !matches; i++) {
        matches = fabric_tcp_filter_matches(&fabric_tcp_state.filters[i], list, name);
    }
    return fabric_tcp_state.filters_exclude ? !matches : matches;
}

/* getifaddrs() lists an interface once per address family; report it at its first entry. */
static bool fabric_tcp_seen_before(const struct ifaddrs *list, const struct ifaddrs *entry)
{
    for (const struct ifaddrs *ifa = list; ifa != entry; ifa = ifa->ifa_next) {
        if (NULL != ifa->ifa_name && 0 == strcmp(ifa->ifa_name, entry->ifa_name)) {
            return true;
        }
    }
    return false;
}

/* "192.168.1.5/24" or "fe80::1/64". */
static bool fabric_tcp_format_address(const struct ifaddrs *ifa, char *text, size_t size)
{
    char host[INET6_ADDRSTRLEN];
    uint8_t bytes[16];
    uint8_t mask[16];
    int family;
    int mask_family;
    unsigned prefix = 0;
    size_t length;

    if (!opal_sockaddr_bytes(ifa->ifa_addr, bytes, &family) ||
        NULL == inet_ntop(family, bytes, host, sizeof(host))) {
        return false;
    }
    length = AF_INET == family ? 4 : 16;
    if (NULL != ifa->ifa_netmask &&
        opal_sockaddr_bytes(ifa->ifa_netmask, mask, &mask_family) && mask_family == family) {
        for (size_t i = 0; i < length; i++) {
            prefix += (unsigned) __builtin_popcount(mask[i]);
        }
    } else {
        prefix = (unsigned) length * 8;
    }
    snprintf(text, size, "%s/%u", host, prefix);
    return true;
}

/* An address a listener can bind on and a peer on another node can name as is: a link-local one
 * (fe80::/10, 169.254.0.0/16) would need the peer's own interface index, so it is left out. */
static bool fabric_tcp_endpoint_address(const struct ifaddrs *ifa, char *text, size_t size)
{
    uint8_t bytes[16];
    int family;

    if (!opal_sockaddr_bytes(ifa->ifa_addr, bytes, &family) ||
        (AF_INET6 == family && 0xfe == bytes[0] && 0x80 == (bytes[1] & 0xc0)) ||
        (AF_INET == family && 169 == bytes[0] && 254 == bytes[1])) {
        return false;
    }
    return NULL != inet_ntop(family, bytes, text, (socklen_t) size);
}

static void fabric_tcp_format_flags(unsigned int flags, char *text, size_t size)
{
    static const struct {
        unsigned int bit;
        const char *name;
    } names[] = {
        {IFF_UP, "up"},
        {IFF_RUNNING, "running"},
        {IFF_LOOPBACK, "loopback"},
        {IFF_BROADCAST, "broadcast"},
        {IFF_POINTOPOINT, "pointopoint"},
        {IFF_MULTICAST, "multicast"},
        {IFF_NOARP, "noarp"},
        {IFF_PROMISC, "promisc"},
    };
    size_t used = 0;

    text[0] = '\0';
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (0 != (flags & names[i].bit)) {
            int n = snprintf(text + used, size - used, "%s%s", 0 == used ? "" : ",", names[i].name);

            if (n < 0 || (size_t) n >= size - used) {
                break;
            }
            used += (size_t) n;
        }
    }
    if (0 == used) {
        snprintf(text, size, "none");
    }
}

static bool fabric_tcp_mtu(int sock, const char *name, unsigned *mtu)
{
    char path[64 + IFNAMSIZ];
    FILE *file;
    bool found;

#if defined(SIOCGIFMTU)
    struct ifreq request;

    if (sock >= 0 && strlen(name) < sizeof(request.ifr_name)) {
        memset(&request, 0, sizeof(request));
        memcpy(request.ifr_name, name, strlen(name) + 1);
        if (0 == ioctl(sock, SIOCGIFMTU, &request) && request.ifr_mtu > 0) {
            *mtu = (unsigned) request.ifr_mtu;
            return true;
        }
    }
#endif
    /* the ioctl needs a socket, which a restricted sandbox may refuse; sysfs does not */
    snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", name);
    file = fopen(path, "r");
    if (NULL == file) {
        return false;
    }
    found = 1 == fscanf(file, "%u", mtu);
    fclose(file);
    return found;
}

#if defined(AF_PACKET)
/* The link-layer address, when the interface has a real one (loopback's is all zeros). */
static bool fabric_tcp_format_hwaddr(const struct ifaddrs *ifa, char *text, size_t size)
{
    struct sockaddr_ll link;
    bool nonzero = false;
    size_t used = 0;

    if (NULL == ifa->ifa_addr || AF_PACKET != ifa->ifa_addr->sa_family) {
        return false;
    }
    memcpy(&link, ifa->ifa_addr, sizeof(link));
    if (0 == link.sll_halen || link.sll_halen > sizeof(link.sll_addr) || size < 3u * 8u) {
        return false;
    }
    for (unsigned i = 0; i < link.sll_halen; i++) {
        nonzero = nonzero || 0 != link.sll_addr[i];
        used += (size_t) snprintf(text + used, size - used, "%s%02x", 0 == i ? "" : ":",
                                  link.sll_addr[i]);
    }
    return nonzero;
}
#endif

/* first is the interface's first getifaddrs() entry; its later entries follow in the list. */
static int fabric_tcp_add_interface(opal_fabric_record_t *record, const struct ifaddrs *first,
                                    int sock)
{
    const char *name = first->ifa_name;
    opal_fabric_device_t *device;
    char text[128];
    unsigned index;
    unsigned mtu;
    int rc = HERD_SUCCESS;

    device = opal_fabric_record_add_device(record, name, "interface");
    if (NULL == device) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    index = if_nametoindex(name);
    if (0 != index) {
        snprintf(text, sizeof(text), "%u", index);
        rc = opal_fabric_device_add_attr(device, "index", text);
    }
    if (HERD_SUCCESS == rc) {
        fabric_tcp_format_flags(first->ifa_flags, text, sizeof(text));
        rc = opal_fabric_device_add_attr(device, "flags", text);
    }
    if (HERD_SUCCESS == rc && fabric_tcp_mtu(sock, name, &mtu)) {
        snprintf(text, sizeof(text), "%u", mtu);
        rc = opal_fabric_device_add_attr(device, "mtu", text);
    }
    for (const struct ifaddrs *ifa = first; HERD_SUCCESS == rc && NULL != ifa;
         ifa = ifa->ifa_next) {
        if (NULL == ifa->ifa_name || 0 != strcmp(ifa->ifa_name, name)) {
            continue;
        }
#if defined(AF_PACKET)
        if (fabric_tcp_format_hwaddr(ifa, text, sizeof(text))) {
            rc = opal_fabric_device_add_attr(device, "hwaddr", text);
            continue;
        }
#endif
        if (fabric_tcp_format_address(ifa, text, sizeof(text))) {
            rc = opal_fabric_device_add_attr(device, "addr", text);
        }
        if (HERD_SUCCESS == rc && 0 != (first->ifa_flags & IFF_UP) &&
            fabric_tcp_endpoint_address(ifa, text, sizeof(text))) {
            rc = opal_fabric_device_add_attr(device, "endpoint_addr", text);
        }
    }
    return rc;
}

static int fabric_tcp_build_record(opal_fabric_record_t **result)
{
    opal_fabric_record_t *record;
    struct ifaddrs *list = NULL;
    int sock;
    int rc = HERD_SUCCESS;

    if (0 != getifaddrs(&list)) {
        opal_output_verbose(5, opal_fabric_base_framework.output,
                            "fabric tcp: getifaddrs() failed: %s", strerror(errno));
        return HERD_ERR_NOT_AVAILABLE;
    }
    record = opal_fabric_record_new("tcp");
    if (NULL == record) {
        freeifaddrs(list);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (fabric_tcp_state.port_range > 0) {
        char number[16];

        snprintf(number, sizeof(number), "%d", fabric_tcp_state.port_base);
        rc = opal_fabric_record_add_attr(record, "port_base", number);
        snprintf(number, sizeof(number), "%d", fabric_tcp_state.port_range);
        if (HERD_SUCCESS == rc) {
            rc = opal_fabric_record_add_attr(record, "port_range", number);
        }
        if (HERD_SUCCESS != rc) {
            freeifaddrs(list);
            opal_fabric_record_free(record);
            return rc;
        }
    }
    sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    for (const struct ifaddrs *ifa = list; NULL != ifa; ifa = ifa->ifa_next) {
        if (NULL == ifa->ifa_name || fabric_tcp_seen_before(list, ifa)) {
            continue;
        }
        if (!fabric_tcp_interface_selected(list, ifa->ifa_name)) {
            opal_output_verbose(10, opal_fabric_base_framework.output,
                                "fabric tcp: interface %s left out by fabric_tcp_if_%s",
                                ifa->ifa_name,
                                fabric_tcp_state.filters_exclude ? "exclude" : "include");
            continue;
        }
        rc = fabric_tcp_add_interface(record, ifa, sock);
        if (HERD_SUCCESS != rc) {
            break;
        }
    }
    if (sock >= 0) {
        close(sock);
    }
    freeifaddrs(list);
    if (HERD_SUCCESS != rc) {
        opal_fabric_record_free(record);
        return rc;
    }
    *result = record;
    return HERD_SUCCESS;
}

static int fabric_tcp_query(const opal_mca_component_t *component, void **module, int *priority)
{
    opal_fabric_record_t *record = NULL;
    int rc;

    rc = fabric_tcp_build_record(&record);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (0 == record->num_devices) {
        if (0 != fabric_tcp_state.num_filters && !fabric_tcp_state.filters_exclude) {
            char host[256];

            if (0 != gethostname(host, sizeof(host))) {
                snprintf(host, sizeof(host), "(unknown host)");
            }
            host[sizeof(host) - 1] = '\0';
            opal_show_help(FABRIC_TCP_HELP_FILE, "include-matches-nothing", true, host,
                           fabric_tcp_state.if_include);
        } else {
            opal_output_verbose(5, opal_fabric_base_framework.output,
                                "fabric tcp: no network interface to report");
        }
        opal_fabric_record_free(record);
        return HERD_ERR_NOT_AVAILABLE;
    }
    opal_fabric_record_free(fabric_tcp_state.record);
    fabric_tcp_state.record = record;
    *module = (void *) &fabric_tcp_module;
    *priority = fabric_tcp_state.priority;
    return HERD_SUCCESS;
}

static int fabric_tcp_discover(opal_fabric_record_t **record)
{
    if (NULL == fabric_tcp_state.record) {
        return HERD_ERR_NOT_AVAILABLE;
    }
    return opal_fabric_record_copy(fabric_tcp_state.record, record);
}

static int fabric_tcp_close(const opal_mca_component_t *component)
{
    fabric_tcp_free_filters();
    opal_fabric_record_free(fabric_tcp_state.record);
    fabric_tcp_state.record = NULL;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(opal, fabric, tcp, .register_params = fabric_tcp_register,
                   .open = fabric_tcp_open, .query = fabric_tcp_query, .close = fabric_tcp_close);
