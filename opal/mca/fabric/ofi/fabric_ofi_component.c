/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric ofi: the libfabric providers usable on this node, one device per distinct provider,
 * fabric, domain and endpoint type, with address formats and capabilities (fi_getinfo), and
 * what RM-assigned endpoints need: the source address of providers addressed by IP socket
 * address, which of them get endpoints assigned, and the reserved port range
 * (docs/endpoints.md). */
#include "herd_config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rdma/fabric.h>

#include "opal/mca/base/mca_var.h"
#include "opal/mca/fabric/base/base.h"
#include "opal/mca/fabric/fabric.h"
#include "opal/util/argv.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"

#define FABRIC_OFI_HELP_FILE "help-fabric-ofi.txt"

/* The API version we ask for: what these headers describe, lowered to what the library in use
 * supports (an older library refuses a newer version). 1.5 is the floor for the mr_mode bits
 * we pass. */
#define FABRIC_OFI_HEADER_VERSION FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)
#define FABRIC_OFI_MIN_VERSION    FI_VERSION(1, 5)

#define FABRIC_OFI_DEFAULT_PRIORITY 30
/* The range for RM-assigned endpoints of sockaddr providers: right after fabric_tcp's, below
 * Linux's ephemeral ports; shared by the assigned providers (each gets an equal part). */
#define FABRIC_OFI_DEFAULT_PORT_BASE  20480
#define FABRIC_OFI_DEFAULT_PORT_RANGE 8192
#define FABRIC_OFI_DEFAULT_ASSIGN     "tcp;ofi_rxm,udp;ofi_rxd"

typedef struct {
    int priority;
    char *provider_include; /* variable storage, owned by the variable system */
    char *provider_exclude;
    int provider_include_index;
    int provider_exclude_index;
    int port_base;
    int port_range;
    char *assign; /* providers whose endpoints are pre-assigned (variable storage) */
    char **providers; /* the list that is set, split by open() */
    bool providers_exclude;
    opal_fabric_record_t *record; /* what query() found; discover() hands out copies */
} fabric_ofi_state_t;

static fabric_ofi_state_t fabric_ofi_state = {
    .priority = FABRIC_OFI_DEFAULT_PRIORITY,
    .provider_include_index = -1,
    .provider_exclude_index = -1,
    .port_base = FABRIC_OFI_DEFAULT_PORT_BASE,
    .port_range = FABRIC_OFI_DEFAULT_PORT_RANGE,
};

/* One device being assembled: fi_getinfo() lists a (provider, fabric, domain, endpoint type)
 * once per combination of capabilities, modes and address formats; we merge those. */
typedef struct {
    const struct fi_info *info; /* first entry seen; names are read from it */
    uint64_t caps;
    uint64_t addr_formats; /* bit n set: address format n was offered */
    bool other_formats;    /* a format number too large for the bit set */
    char src_addr[INET6_ADDRSTRLEN]; /* an IP source address offered, or "" */
} fabric_ofi_entry_t;

static int fabric_ofi_discover(opal_fabric_record_t **record);

static const opal_fabric_module_t fabric_ofi_module = {
    .discover = fabric_ofi_discover,
};

static int fabric_ofi_register(const opal_mca_component_t *component)
{
    static const opal_mca_var_def_t vars[] = {
        {.name = "priority",
         .type = OPAL_MCA_VAR_INT,
         .storage = &fabric_ofi_state.priority,
         .help = "Priority of the ofi fabric component: records are listed "
                 "highest priority first"},
        {.name = "provider_include",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &fabric_ofi_state.provider_include,
         .help = "Comma-separated libfabric providers to report (e.g. "
                 "tcp,verbs); a layered provider such as tcp;ofi_rxm matches "
                 "any of its parts. Cannot be combined with "
                 "fabric_ofi_provider_exclude",
         .index = &fabric_ofi_state.provider_include_index},
        {.name = "provider_exclude",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &fabric_ofi_state.provider_exclude,
         .help = "Comma-separated libfabric providers to leave out (e.g. "
                 "sockets,udp); a layered provider such as tcp;ofi_rxm is left "
                 "out when any of its parts is listed. Cannot be combined with "
                 "fabric_ofi_provider_include",
         .index = &fabric_ofi_state.provider_exclude_index},
        {.name = "assign",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &fabric_ofi_state.assign,
         .help = "Comma-separated providers addressed by IP socket address "
                 "(FI_SOCKADDR_IN/IN6) whose endpoints the session daemons "
                 "assign in advance, so peers need no modex; empty: none"},
        {.name = "port_base",
         .type = OPAL_MCA_VAR_INT,
         .storage = &fabric_ofi_state.port_base,
         .help = "First port of the range reserved on every node for "
                 "RM-assigned endpoints of the providers in fabric_ofi_assign"},
        {.name = "port_range",
         .type = OPAL_MCA_VAR_INT,
         .storage = &fabric_ofi_state.port_range,
         .help = "Ports in that range (0: never pre-assign). Split equally "
                 "among the providers of fabric_ofi_assign and a node's "
                 "dvm_session_slots jobs; a job with more processes on a node "
                 "than its share uses the modex"},
    };

    /* storage holds the default on entry, but a component that stays loaded still holds the
     * values of its previous registration */
    fabric_ofi_state.priority = FABRIC_OFI_DEFAULT_PRIORITY;
    fabric_ofi_state.provider_include = NULL;
    fabric_ofi_state.provider_exclude = NULL;
    fabric_ofi_state.assign = FABRIC_OFI_DEFAULT_ASSIGN;
    fabric_ofi_state.port_base = FABRIC_OFI_DEFAULT_PORT_BASE;
    fabric_ofi_state.port_range = FABRIC_OFI_DEFAULT_PORT_RANGE;
    return opal_mca_var_register_table(component, vars, OPAL_MCA_VAR_DEFS_COUNT(vars));
}

static int fabric_ofi_open(const opal_mca_component_t *component)
{
    const char *include = fabric_ofi_state.provider_include;
    const char *exclude = fabric_ofi_state.provider_exclude;
    const char *list = NULL;
    int rc;

    rc = opal_fabric_base_check_include_exclude(fabric_ofi_state.provider_include_index,
                                                fabric_ofi_state.provider_exclude_index);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (fabric_ofi_state.port_range < 0 || fabric_ofi_state.port_base < 1024 ||
        (int64_t) fabric_ofi_state.port_base + fabric_ofi_state.port_range > 65536) {
        /* a bad range only costs the instant-on: the inventory is still worth having */
        opal_show_help(FABRIC_OFI_HELP_FILE, "bad-port-range", true, fabric_ofi_state.port_base,
                       fabric_ofi_state.port_range);
        fabric_ofi_state.port_range = 0;
    }
    opal_argv_free(fabric_ofi_state.providers);
    fabric_ofi_state.providers = NULL;
    fabric_ofi_state.providers_exclude = false;
    if (NULL != include && '\0' != include[0]) {
        list = include;
    } else if (NULL != exclude && '\0' != exclude[0]) {
        list = exclude;
        fabric_ofi_state.providers_exclude = true;
    }
    if (NULL != list) {
        fabric_ofi_state.providers = opal_argv_split(list, ',');
        if (NULL == fabric_ofi_state.providers) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    return HERD_SUCCESS;
}

/* Whether name appears in the user's list, as the whole provider name or as one of the
 * ';'-separated layers ("tcp;ofi_rxm" is both tcp and ofi_rxm). */
static bool fabric_ofi_provider_listed(const char *provider)
{
    for (char **entry = fabric_ofi_state.providers; NULL != *entry; entry++) {
        size_t length = strlen(*entry);
        const char *part = provider;

        if (0 == strcasecmp(*entry, provider)) {
            return true;
        }
        while (NULL != part && '\0' != *part) {
            const char *end = strchr(part, ';');
            size_t part_length = NULL != end ? (size_t) (end - part) : strlen(part);

            if (part_length == length && 0 == strncasecmp(part, *entry, length)) {
                return true;
            }
            part = NULL != end ? end + 1 : NULL;
        }
    }
    return false;
}

static bool fabric_ofi_provider_selected(const char *provider)
{
    if (NULL == fabric_ofi_state.providers) {
        return true;
    }
    return fabric_ofi_state.providers_exclude ? !fabric_ofi_provider_listed(provider)
                                              : fabric_ofi_provider_listed(provider);
}

static const char *fabric_ofi_ep_type_name(enum fi_ep_type type)
{
    switch (type) {
    case FI_EP_MSG:
        return "msg";
    case FI_EP_RDM:
        return "rdm";
    case FI_EP_DGRAM:
        return "dgram";
    case FI_EP_SOCK_STREAM:
        return "sock_stream";
    case FI_EP_SOCK_DGRAM:
        return "sock_dgram";
    case FI_EP_UNSPEC:
        return "unspec";
    default:
        return "unknown";
    }
}

/* "msg,tagged,rma": the capabilities that tell what a provider is good for, not every bit. */
static void fabric_ofi_format_caps(uint64_t caps, char *text, size_t size)
{
    static const struct {
        uint64_t bit;
        const char *name;
    } names[] = {
        {FI_MSG, "msg"},
        {FI_TAGGED, "tagged"},
        {FI_RMA, "rma"},
        {FI_ATOMIC, "atomic"},
        {FI_MULTICAST, "multicast"},
#if defined(FI_COLLECTIVE)
        {FI_COLLECTIVE, "collective"},
#endif
#if defined(FI_DIRECTED_RECV)
        {FI_DIRECTED_RECV, "directed_recv"},
#endif
#if defined(FI_HMEM)
        {FI_HMEM, "hmem"},
#endif
#if defined(FI_LOCAL_COMM) && defined(FI_REMOTE_COMM)
        {FI_LOCAL_COMM, "local_comm"},
        {FI_REMOTE_COMM, "remote_comm"},
#endif
    };
    size_t used = 0;

    text[0] = '\0';
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (0 != (caps & names[i].bit)) {
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

static bool fabric_ofi_same_text(const char *a, const char *b)
{
    if (NULL == a || NULL == b) {
        return a == b;
    }
    return 0 == strcmp(a, b);
}

static const char *fabric_ofi_fabric_name(const struct fi_info *info)
{
    return NULL != info->fabric_attr ? info->fabric_attr->name : NULL;
}

static const char *fabric_ofi_domain_name(const struct fi_info *info)
{
    return NULL != info->domain_attr ? info->domain_attr->name : NULL;
}

static enum fi_ep_type fabric_ofi_ep_type(const struct fi_info *info)
{
    return NULL != info->ep_attr ? info->ep_attr->type : FI_EP_UNSPEC;
}

static bool fabric_ofi_same_device(const struct fi_info *a, const struct fi_info *b)
{
    return fabric_ofi_same_text(a->fabric_attr->prov_name, b->fabric_attr->prov_name) &&
           fabric_ofi_same_text(fabric_ofi_fabric_name(a), fabric_ofi_fabric_name(b)) &&
           fabric_ofi_same_text(fabric_ofi_domain_name(a), fabric_ofi_domain_name(b)) &&
           fabric_ofi_ep_type(a) == fabric_ofi_ep_type(b);
}

static int fabric_ofi_add_text(opal_fabric_device_t *device, const char *key, const char *value)
{
    return opal_fabric_device_add_attr(device, key, NULL != value ? value : "");
}

static int fabric_ofi_add_device(opal_fabric_record_t *record, const fabric_ofi_entry_t *entry)
{
    const struct fi_info *info = entry->info;
    const char *provider = info->fabric_attr->prov_name;
    const char *fabric = fabric_ofi_fabric_name(info);
    const char *domain = fabric_ofi_domain_name(info);
    const char *ep_type = fabric_ofi_ep_type_name(fabric_ofi_ep_type(info));
    opal_fabric_device_t *device;
    bool assignable = false;
    char text[512];
    int rc;

    /* provider/domain/ep_type@fabric: a domain such as lo appears in one fabric per address
     * family, so the fabric is part of what tells devices apart */
    snprintf(text, sizeof(text), "%s/%s/%s@%s", provider, NULL != domain ? domain : "-", ep_type,
             NULL != fabric ? fabric : "-");
    device = opal_fabric_record_add_device(record, text, "provider");
    if (NULL == device) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    rc = fabric_ofi_add_text(device, "provider", provider);
    if (HERD_SUCCESS == rc) {
        rc = fabric_ofi_add_text(device, "fabric", fabric);
    }
    if (HERD_SUCCESS == rc) {
        rc = fabric_ofi_add_text(device, "domain", domain);
    }
    if (HERD_SUCCESS == rc) {
        rc = fabric_ofi_add_text(device, "ep_type", ep_type);
    }
    for (uint32_t format = 0; HERD_SUCCESS == rc && format < 64; format++) {
        if (0 == (entry->addr_formats & (UINT64_C(1) << format))) {
            continue;
        }
        /* fi_tostr's buffer is static; it is copied before the next call */
        rc = fabric_ofi_add_text(device, "addr_format", fi_tostr(&format, FI_TYPE_ADDR_FORMAT));
        if (FI_SOCKADDR_IN == format || FI_SOCKADDR_IN6 == format) {
            assignable = true;
        }
    }
    if (HERD_SUCCESS == rc && entry->other_formats) {
        rc = fabric_ofi_add_text(device, "addr_format", "other");
    }
    if (HERD_SUCCESS == rc && assignable && '\0' != entry->src_addr[0]) {
        /* where an endpoint of this device binds: an assigned one adds its port to it */
        rc = fabric_ofi_add_text(device, "src_addr", entry->src_addr);
    }
    if (HERD_SUCCESS == rc) {
        fabric_ofi_format_caps(entry->caps, text, sizeof(text));
        rc = fabric_ofi_add_text(device, "caps", text);
    }
    if (HERD_SUCCESS == rc) {
        /* an IP socket address can be chosen before the endpoint exists (a known port) */
        rc = fabric_ofi_add_text(device, "assignable", assignable ? "yes" : "no");
    }
    return rc;
}

/* The numeric IP address of info's source address, when it is a socket address. */
static void fabric_ofi_source_address(const struct fi_info *info, char *text, size_t size)
{
    if (NULL == info->src_addr) {
        return;
    }
    if (FI_SOCKADDR_IN == info->addr_format && info->src_addrlen >= sizeof(struct sockaddr_in)) {
        struct sockaddr_in in4;

        memcpy(&in4, info->src_addr, sizeof(in4));
        if (AF_INET == in4.sin_family &&
            NULL == inet_ntop(AF_INET, &in4.sin_addr, text, (socklen_t) size)) {
            text[0] = '\0';
        }
    } else if (FI_SOCKADDR_IN6 == info->addr_format &&
               info->src_addrlen >= sizeof(struct sockaddr_in6)) {
        struct sockaddr_in6 in6;

        memcpy(&in6, info->src_addr, sizeof(in6));
        if (AF_INET6 == in6.sin6_family &&
            NULL == inet_ntop(AF_INET6, &in6.sin6_addr, text, (socklen_t) size)) {
            text[0] = '\0';
        }
    }
}

/* Merges fi_getinfo()'s entries into one per device, in the order libfabric ranks them. */
static int fabric_ofi_collect(const struct fi_info *list, fabric_ofi_entry_t **entries,
                              size_t *num_entries)
{
    fabric_ofi_entry_t *found = NULL;
    size_t count = 0;

    for (const struct fi_info *info = list; NULL != info; info = info->next) {
        fabric_ofi_entry_t *entry = NULL;

        if (NULL == info->fabric_attr || NULL == info->fabric_attr->prov_name) {
            continue;
        }
        if (!fabric_ofi_provider_selected(info->fabric_attr->prov_name)) {
            opal_output_verbose(10, opal_fabric_base_framework.output,
                                "fabric ofi: provider %s left out by fabric_ofi_provider_%s",
                                info->fabric_attr->prov_name,
                                fabric_ofi_state.providers_exclude ? "exclude" : "include");
            continue;
        }
        for (size_t i = 0; i < count && NULL == entry; i++) {
            if (fabric_ofi_same_device(found[i].info, info)) {
                entry = &found[i];
            }
        }
        if (NULL == entry) {
            fabric_ofi_entry_t *grown = realloc(found, (count + 1) * sizeof(*grown));

            if (NULL == grown) {
                free(found);
                return HERD_ERR_OUT_OF_RESOURCE;
            }
            found = grown;
            entry = &found[count++];
            memset(entry, 0, sizeof(*entry));
            entry->info = info;
        }
        entry->caps |= info->caps;
        if ('\0' == entry->src_addr[0]) {
            fabric_ofi_source_address(info, entry->src_addr, sizeof(entry->src_addr));
        }
        if (info->addr_format < 64) {
            entry->addr_formats |= UINT64_C(1) << info->addr_format;
        } else {
            entry->other_formats = true;
        }
    }
    *entries = found;
    *num_entries = count;
    return HERD_SUCCESS;
}

/* Every provider libfabric can offer here: no capability asked for, every mode and memory
 * registration mode accepted, so the hints rule nothing out. */
static int fabric_ofi_getinfo(uint32_t version, struct fi_info **list)
{
    struct fi_info *hints = fi_allocinfo();
    int ret;

    if (NULL == hints) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    hints->mode = ~UINT64_C(0);
    hints->domain_attr->mode = ~UINT64_C(0);
    hints->domain_attr->mr_mode = ~(FI_MR_BASIC | FI_MR_SCALABLE);
    ret = fi_getinfo(version, NULL, NULL, 0, hints, list);
    fi_freeinfo(hints);
    if (0 != ret) {
        opal_output_verbose(5, opal_fabric_base_framework.output,
                            "fabric ofi: fi_getinfo() found no provider: %s", fi_strerror(-ret));
        return HERD_ERR_NOT_AVAILABLE;
    }
    return HERD_SUCCESS;
}

static int fabric_ofi_build_record(opal_fabric_record_t **result)
{
    uint32_t library_version = fi_version();
    uint32_t version = FABRIC_OFI_HEADER_VERSION;
    opal_fabric_record_t *record = NULL;
    fabric_ofi_entry_t *entries = NULL;
    struct fi_info *list = NULL;
    size_t num_entries = 0;
    char text[32];
    int rc;

    if (FI_VERSION_LT(library_version, version)) {
        version = library_version;
    }
    if (FI_VERSION_LT(version, FABRIC_OFI_MIN_VERSION)) {
        opal_output_verbose(5, opal_fabric_base_framework.output,
                            "fabric ofi: libfabric %u.%u is older than 1.5", FI_MAJOR(version),
                            FI_MINOR(version));
        return HERD_ERR_NOT_AVAILABLE;
    }
    rc = fabric_ofi_getinfo(version, &list);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    rc = fabric_ofi_collect(list, &entries, &num_entries);
    if (HERD_SUCCESS != rc) {
        goto out;
    }
    record = opal_fabric_record_new("ofi");
    if (NULL == record) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    snprintf(text, sizeof(text), "%u.%u", FI_MAJOR(library_version), FI_MINOR(library_version));
    rc = opal_fabric_record_add_attr(record, "version", text);
    if (HERD_SUCCESS == rc && fabric_ofi_state.port_range > 0 && NULL != fabric_ofi_state.assign &&
        '\0' != fabric_ofi_state.assign[0]) {
        rc = opal_fabric_record_add_attr(record, "assign", fabric_ofi_state.assign);
        snprintf(text, sizeof(text), "%d", fabric_ofi_state.port_base);
        if (HERD_SUCCESS == rc) {
            rc = opal_fabric_record_add_attr(record, "port_base", text);
        }
        snprintf(text, sizeof(text), "%d", fabric_ofi_state.port_range);
        if (HERD_SUCCESS == rc) {
            rc = opal_fabric_record_add_attr(record, "port_range", text);
        }
    }
    for (size_t i = 0; HERD_SUCCESS == rc && i < num_entries; i++) {
        rc = fabric_ofi_add_device(record, &entries[i]);
    }
    if (HERD_SUCCESS != rc) {
        goto out;
    }
    *result = record;
    record = NULL;

out:
    opal_fabric_record_free(record);
    free(entries);
    fi_freeinfo(list);
    return rc;
}

static int fabric_ofi_query(const opal_mca_component_t *component, void **module, int *priority)
{
    opal_fabric_record_t *record = NULL;
    int rc;

    rc = fabric_ofi_build_record(&record);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (0 == record->num_devices) {
        opal_output_verbose(5, opal_fabric_base_framework.output,
                            "fabric ofi: every provider found was left out by "
                            "fabric_ofi_provider_include/exclude");
        opal_fabric_record_free(record);
        return HERD_ERR_NOT_AVAILABLE;
    }
    opal_fabric_record_free(fabric_ofi_state.record);
    fabric_ofi_state.record = record;
    *module = (void *) &fabric_ofi_module;
    *priority = fabric_ofi_state.priority;
    return HERD_SUCCESS;
}

static int fabric_ofi_discover(opal_fabric_record_t **record)
{
    if (NULL == fabric_ofi_state.record) {
        return HERD_ERR_NOT_AVAILABLE;
    }
    return opal_fabric_record_copy(fabric_ofi_state.record, record);
}

static int fabric_ofi_close(const opal_mca_component_t *component)
{
    opal_argv_free(fabric_ofi_state.providers);
    fabric_ofi_state.providers = NULL;
    fabric_ofi_state.providers_exclude = false;
    opal_fabric_record_free(fabric_ofi_state.record);
    fabric_ofi_state.record = NULL;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(opal, fabric, ofi, .register_params = fabric_ofi_register,
                   .open = fabric_ofi_open, .query = fabric_ofi_query, .close = fabric_ofi_close);
