/* SPDX-License-Identifier: BSD-3-Clause */
/* RM-assigned endpoints: the plan of a job's fabrics from its nodes' inventories
 * (orte/runtime/endpoints.h). Pure computation: no message, no variable read here, so every
 * session daemon and herdrun get the same plan from the same inventories. */
#include "herd_config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "opal/mca/fabric/base/base.h"
#include "opal/util/argv.h"
#include "orte/runtime/endpoints.h"

#define ENDPOINTS_REASON_MAX 512u

/* The families of fabrics, as the inventory names their components. */
typedef enum { FAMILY_TCP, FAMILY_OFI, FAMILY_UCX } endpoints_family_t;

int orte_endpoints_window(uint32_t base, uint32_t range, uint32_t slots, uint32_t slot,
                          uint32_t parts, uint32_t part, uint32_t *first, uint32_t *count)
{
    if (NULL == first || NULL == count || 0 == slots || 0 == parts || slot >= slots ||
        part >= parts) {
        return HERD_ERR_BAD_PARAM;
    }
    /* equal shares, the remainder unused: a job's ports never depend on the other jobs */
    uint64_t share = (uint64_t) range / ((uint64_t) slots * parts);
    *first = (uint32_t) (base + ((uint64_t) slot * parts + part) * share);
    *count = (uint32_t) share;
    return HERD_SUCCESS;
}

static const opal_fabric_record_t *find_record(const orte_inventory_t *inv, const char *component)
{
    for (size_t i = 0; NULL != inv && i < inv->num_fabric; ++i) {
        if (0 == strcmp(inv->fabric[i]->component, component)) {
            return inv->fabric[i];
        }
    }
    return NULL;
}

static uint32_t session_slots(const orte_inventory_t *inv)
{
    size_t n = opal_argv_count(inv->session_uris);
    /* no session endpoints: herdrun without a DVM, one job on the node */
    return 0 == n ? 1u : (uint32_t) n;
}

/* The job's slot on node n; the root only hands out slots the node has (modulo: never out of
 * the range, whatever a launch message says). */
static uint32_t job_slot(const orte_endpoints_job_t *job, uint32_t n, uint32_t slots)
{
    return NULL == job->session_slot ? 0u : job->session_slot[n] % slots;
}

/* A numeric attribute in 0..max; false when missing or malformed. */
static bool record_number(const opal_fabric_record_t *record, const char *key, uint32_t max,
                          uint32_t *value)
{
    const char *text = opal_fabric_record_get_attr(record, key);
    char *end;
    if (NULL == text || '\0' == text[0]) {
        return false;
    }
    unsigned long n = strtoul(text, &end, 10);
    if ('\0' != *end || n > max) {
        return false;
    }
    *value = (uint32_t) n;
    return true;
}

static bool is_loopback(const orte_endpoints_addr_t *a)
{
    static const uint8_t v6_loopback[16] = {[15] = 1};
    return (AF_INET == a->family && 127 == a->bytes[0]) ||
           (AF_INET6 == a->family && 0 == memcmp(a->bytes, v6_loopback, 16));
}

static bool parse_addr(const char *text, orte_endpoints_addr_t *a)
{
    memset(a, 0, sizeof(*a));
    if (1 == inet_pton(AF_INET, text, a->bytes)) {
        a->family = AF_INET;
        return true;
    }
    if (1 == inet_pton(AF_INET6, text, a->bytes)) {
        /* link-local needs the connecting side's interface index: not nameable in advance */
        if (0xfe == a->bytes[0] && 0x80 == (a->bytes[1] & 0xc0)) {
            return false;
        }
        a->family = AF_INET6;
        return true;
    }
    return false;
}

/* Addresses gathered for one node, in the order the inventory lists them, without repeats. */
typedef struct {
    orte_endpoints_addr_t list[ORTE_ENDPOINTS_MAX_ADDRS * 4];
    uint32_t count;
} addr_set_t;

static void addr_set_add(addr_set_t *set, const char *text)
{
    orte_endpoints_addr_t a;
    if (NULL == text || !parse_addr(text, &a)) {
        return;
    }
    for (uint32_t i = 0; i < set->count; ++i) {
        if (set->list[i].family == a.family && 0 == memcmp(set->list[i].bytes, a.bytes, 16)) {
            return;
        }
    }
    if (set->count < sizeof(set->list) / sizeof(set->list[0])) {
        set->list[set->count++] = a;
    }
}

/* Keep what a peer can reach: in a job on several nodes, not the loopback; in a job on one
 * node, the loopback first (it always works and never leaves the host). */
static void choose_addrs(const addr_set_t *set, bool one_node, orte_endpoints_node_t *node)
{
    node->num_addrs = 0;
    for (int pass = 0; pass < 2; ++pass) {
        bool want_loopback = (0 == pass);
        if (want_loopback && !one_node) {
            continue;
        }
        for (uint32_t i = 0; i < set->count && node->num_addrs < ORTE_ENDPOINTS_MAX_ADDRS; ++i) {
            if (is_loopback(&set->list[i]) == want_loopback) {
                node->addrs[node->num_addrs++] = set->list[i];
            }
        }
    }
}

static void tcp_addrs(const opal_fabric_record_t *record, addr_set_t *set)
{
    for (uint32_t d = 0; d < record->num_devices; ++d) {
        const opal_fabric_device_t *dev = &record->devices[d];
        for (uint32_t a = 0; a < dev->num_attrs; ++a) {
            if (0 == strcmp(dev->attrs[a].key, "endpoint_addr")) {
                addr_set_add(set, dev->attrs[a].value);
            }
        }
    }
}

static void ofi_addrs(const opal_fabric_record_t *record, const char *provider, addr_set_t *set)
{
    for (uint32_t d = 0; d < record->num_devices; ++d) {
        const opal_fabric_device_t *dev = &record->devices[d];
        const char *p = opal_fabric_device_get_attr(dev, "provider");
        if (NULL != p && 0 == strcmp(p, provider)) {
            addr_set_add(set, opal_fabric_device_get_attr(dev, "src_addr"));
        }
    }
}

/* Where provider is in the node's fabric_ofi_assign list: its part of the range. */
static bool ofi_part(const opal_fabric_record_t *record, const char *provider, uint32_t *part,
                     uint32_t *parts)
{
    char **list = opal_argv_split(opal_fabric_record_get_attr(record, "assign"), ',');
    int at = (NULL != list) ? opal_argv_find(list, provider) : -1;
    *parts = (uint32_t) opal_argv_count(list);
    opal_argv_free(list);
    if (at < 0) {
        return false;
    }
    *part = (uint32_t) at;
    return true;
}

static bool ofi_has_provider(const opal_fabric_record_t *record, const char *provider)
{
    addr_set_t set = {.count = 0};
    ofi_addrs(record, provider, &set);
    return set.count > 0;
}

/* The fabric's name, its family and (ofi) its provider. */
static endpoints_family_t family_of(const char *name, const char **provider)
{
    *provider = NULL;
    if (0 == strncmp(name, "ofi:", 4)) {
        *provider = name + 4;
        return FAMILY_OFI;
    }
    return 0 == strcmp(name, "ucx") ? FAMILY_UCX : FAMILY_TCP;
}

static int add_fabric(orte_endpoints_plan_t *plan, const char *name)
{
    for (uint32_t f = 0; f < plan->num_fabrics; ++f) {
        if (0 == strcmp(plan->fabrics[f].name, name)) {
            return HERD_SUCCESS;
        }
    }
    if (strlen(name) >= OPAL_JOBDB_FABRIC_NAME_MAX || plan->num_fabrics >= OPAL_JOBDB_MAX_FABRICS) {
        return HERD_SUCCESS; /* a name the database cannot hold: that fabric uses the modex */
    }
    orte_endpoints_fabric_t *grown =
        realloc(plan->fabrics, (plan->num_fabrics + 1) * sizeof(*grown));
    if (NULL == grown) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    plan->fabrics = grown;
    orte_endpoints_fabric_t *f = &grown[plan->num_fabrics];
    memset(f, 0, sizeof(*f));
    snprintf(f->name, sizeof(f->name), "%s", name);
    f->nodes = calloc(plan->num_nodes > 0 ? plan->num_nodes : 1, sizeof(*f->nodes));
    if (NULL == f->nodes) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    plan->num_fabrics++;
    return HERD_SUCCESS;
}

/* Every fabric some node of the job reports, in the order first seen: the same on every side. */
static int collect_fabrics(const orte_endpoints_job_t *job, orte_endpoints_plan_t *plan)
{
    int rc = HERD_SUCCESS;
    for (uint32_t n = 0; HERD_SUCCESS == rc && n < job->num_nodes; ++n) {
        const orte_inventory_t *inv = job->inventories[n];
        if (0 == job->per_node[n] || NULL == inv) {
            continue;
        }
        for (size_t r = 0; HERD_SUCCESS == rc && r < inv->num_fabric; ++r) {
            const opal_fabric_record_t *record = inv->fabric[r];
            if (0 == strcmp(record->component, "tcp")) {
                rc = add_fabric(plan, "tcp");
            } else if (0 == strcmp(record->component, "ucx")) {
                rc = add_fabric(plan, "ucx");
            } else if (0 == strcmp(record->component, "ofi")) {
                char **list = opal_argv_split(opal_fabric_record_get_attr(record, "assign"), ',');
                for (char **p = list; HERD_SUCCESS == rc && NULL != p && NULL != *p; ++p) {
                    char name[OPAL_JOBDB_FABRIC_NAME_MAX + 8];
                    if (ofi_has_provider(record, *p)) {
                        snprintf(name, sizeof(name), "ofi:%s", *p);
                        rc = add_fabric(plan, name);
                    }
                }
                opal_argv_free(list);
            }
        }
    }
    return rc;
}

static void set_reason(orte_endpoints_fabric_t *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void set_reason(orte_endpoints_fabric_t *f, const char *fmt, ...)
{
    f->assigned = false;
    if (NULL != f->reason) {
        return; /* the first node that cannot is the one to name */
    }
    f->reason = malloc(ENDPOINTS_REASON_MAX);
    if (NULL != f->reason) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(f->reason, ENDPOINTS_REASON_MAX, fmt, ap);
        va_end(ap);
    }
}

/* One node's share of fabric f: its addresses and the job's window, or the reason it has none. */
static void plan_node(const orte_endpoints_job_t *job, orte_endpoints_fabric_t *f, uint32_t n,
                      bool one_node)
{
    const orte_inventory_t *inv = job->inventories[n];
    const char *provider;
    endpoints_family_t family = family_of(f->name, &provider);
    const char *component = FAMILY_OFI == family ? "ofi" : FAMILY_UCX == family ? "ucx" : "tcp";
    const char *var = FAMILY_OFI == family ? "fabric_ofi" : "fabric_tcp";
    const opal_fabric_record_t *record = find_record(inv, component);
    orte_endpoints_node_t *node = &f->nodes[n];
    uint32_t base, range, part = 0, parts = 1;
    addr_set_t set = {.count = 0};

    if (FAMILY_UCX == family) {
        set_reason(f, "UCX makes a worker's address when the worker starts: it cannot be "
                      "assigned in advance");
        return;
    }
    if (NULL == record) {
        set_reason(f,
                   "node %s reports no %s fabric (see its fabric inventory: herd-info "
                   "--fabric, dvm_fabric_inventory, dvm_fabric_components)",
                   inv->node_name, component);
        return;
    }
    if (!record_number(record, "port_base", 65535, &base) ||
        !record_number(record, "port_range", 65536, &range) || 0 == range) {
        set_reason(f, "node %s has no port range for it (%s_port_range is 0 or invalid there)",
                   inv->node_name, var);
        return;
    }
    if (FAMILY_OFI == family) {
        if (!ofi_part(record, provider, &part, &parts)) {
            set_reason(f, "node %s does not assign endpoints of provider %s (fabric_ofi_assign)",
                       inv->node_name, provider);
            return;
        }
        ofi_addrs(record, provider, &set);
    } else {
        tcp_addrs(record, &set);
    }
    choose_addrs(&set, one_node, node);
    if (0 == node->num_addrs) {
        set_reason(f, "node %s has no address for it that another node can reach (%s)",
                   inv->node_name, set.count > 0 ? "loopback only" : "no usable interface address");
        return;
    }
    uint32_t slots = session_slots(inv), first = 0, count = 0;
    orte_endpoints_window(base, range, slots, job_slot(job, n, slots), parts, part, &first, &count);
    if (job->per_node[n] > count) {
        if (FAMILY_OFI == family) {
            set_reason(f,
                       "node %s runs %u processes of the job, but its share of "
                       "fabric_ofi_port_range there is %u ports (%u ports / %u session slots / %u "
                       "providers in fabric_ofi_assign): raise fabric_ofi_port_range to at least "
                       "%llu, or lower dvm_session_slots",
                       inv->node_name, job->per_node[n], count, range, slots, parts,
                       (unsigned long long) job->per_node[n] * slots * parts);
        } else {
            set_reason(f,
                       "node %s runs %u processes of the job, but its share of "
                       "fabric_tcp_port_range there is %u ports (%u ports / %u session slots): "
                       "raise fabric_tcp_port_range to at least %llu, or lower dvm_session_slots",
                       inv->node_name, job->per_node[n], count, range, slots,
                       (unsigned long long) job->per_node[n] * slots);
        }
        return;
    }
    node->first_port = first;
    node->num_ports = count;
}

int orte_endpoints_plan_build(const orte_endpoints_job_t *job, orte_endpoints_plan_t *out)
{
    orte_endpoints_plan_t plan = {.num_nodes = job->num_nodes};
    uint32_t participants = 0;
    for (uint32_t n = 0; n < job->num_nodes; ++n) {
        participants += (job->per_node[n] > 0);
    }
    int rc = collect_fabrics(job, &plan);
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < plan.num_fabrics; ++i) {
        orte_endpoints_fabric_t *f = &plan.fabrics[i];
        f->assigned = true;
        for (uint32_t n = 0; n < job->num_nodes && f->assigned; ++n) {
            if (job->per_node[n] > 0) {
                plan_node(job, f, n, participants <= 1);
            }
        }
        if (!f->assigned) {
            /* all or nothing: a process cannot tell which peers it could reach directly */
            memset(f->nodes, 0, job->num_nodes * sizeof(*f->nodes));
            if (NULL == f->reason) {
                rc = HERD_ERR_OUT_OF_RESOURCE;
            }
        }
    }
    if (HERD_SUCCESS != rc) {
        orte_endpoints_plan_destruct(&plan);
        return rc;
    }
    *out = plan;
    return HERD_SUCCESS;
}

void orte_endpoints_plan_destruct(orte_endpoints_plan_t *plan)
{
    for (uint32_t f = 0; NULL != plan->fabrics && f < plan->num_fabrics; ++f) {
        free(plan->fabrics[f].reason);
        free(plan->fabrics[f].nodes);
    }
    free(plan->fabrics);
    memset(plan, 0, sizeof(*plan));
}

uint16_t orte_endpoints_port(const orte_endpoints_plan_t *plan, uint32_t fabric, uint32_t node,
                             uint32_t node_rank)
{
    if (fabric >= plan->num_fabrics || node >= plan->num_nodes || !plan->fabrics[fabric].assigned) {
        return 0;
    }
    const orte_endpoints_node_t *n = &plan->fabrics[fabric].nodes[node];
    if (node_rank >= n->num_ports || 0 == n->first_port) {
        return 0;
    }
    return (uint16_t) (n->first_port + node_rank);
}

void orte_endpoints_layout(const orte_endpoints_plan_t *plan, opal_jobdb_layout_t *layout)
{
    layout->num_fabrics = plan->num_fabrics;
    layout->fabric_addrs = plan->num_fabrics > 0 ? ORTE_ENDPOINTS_MAX_ADDRS : 0;
}

/* The window of the first node with one, for tools reading the database. */
static const orte_endpoints_node_t *first_window(const orte_endpoints_fabric_t *f,
                                                 uint32_t num_nodes)
{
    for (uint32_t n = 0; n < num_nodes; ++n) {
        if (0 != f->nodes[n].first_port) {
            return &f->nodes[n];
        }
    }
    return NULL;
}

int orte_endpoints_write(const orte_endpoints_plan_t *plan, opal_jobdb_t *db)
{
    int rc = HERD_SUCCESS;
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < plan->num_fabrics; ++i) {
        const orte_endpoints_fabric_t *f = &plan->fabrics[i];
        const orte_endpoints_node_t *w = first_window(f, plan->num_nodes);
        rc = opal_jobdb_set_fabric(db, i, f->name, f->assigned, NULL != w ? w->first_port : 0,
                                   NULL != w ? w->num_ports : 0, f->reason);
        for (uint32_t n = 0; HERD_SUCCESS == rc && f->assigned && n < plan->num_nodes; ++n) {
            opal_jobdb_addr_t addrs[ORTE_ENDPOINTS_MAX_ADDRS];
            const orte_endpoints_node_t *node = &f->nodes[n];
            memset(addrs, 0, sizeof(addrs));
            for (uint32_t a = 0; a < node->num_addrs; ++a) {
                addrs[a].family =
                    AF_INET == node->addrs[a].family ? OPAL_JOBDB_ADDR_IPV4 : OPAL_JOBDB_ADDR_IPV6;
                memcpy(addrs[a].bytes, node->addrs[a].bytes, 16);
            }
            rc = opal_jobdb_set_fabric_addrs(db, i, n, addrs, node->num_addrs);
        }
    }
    return rc;
}

void orte_endpoints_format(const orte_endpoints_plan_t *plan, uint32_t fabric, uint32_t node,
                           uint32_t node_rank, char *text, size_t size)
{
    char host[INET6_ADDRSTRLEN];
    uint16_t port = orte_endpoints_port(plan, fabric, node, node_rank);
    const orte_endpoints_node_t *n = (0 != port) ? &plan->fabrics[fabric].nodes[node] : NULL;
    if (NULL == n || 0 == n->num_addrs ||
        NULL == inet_ntop(n->addrs[0].family, n->addrs[0].bytes, host, sizeof(host))) {
        snprintf(text, size, "modex");
        return;
    }
    snprintf(text, size, AF_INET6 == n->addrs[0].family ? "[%s]:%u" : "%s:%u", host, port);
}

void orte_endpoints_print(FILE *out, const orte_endpoints_plan_t *plan,
                          const orte_endpoints_job_t *job)
{
    if (0 == plan->num_fabrics) {
        fprintf(out, "endpoints: none assigned, every transport uses the modex (the nodes report "
                     "no fabric: dvm_fabric_inventory, dvm_fabric_components)\n");
        return;
    }
    fprintf(out, "endpoints:\n");
    for (uint32_t i = 0; i < plan->num_fabrics; ++i) {
        const orte_endpoints_fabric_t *f = &plan->fabrics[i];
        if (!f->assigned) {
            fprintf(out, "  %-20s modex: %s\n", f->name, NULL != f->reason ? f->reason : "");
            continue;
        }
        /* nodes usually share their range: name each distinct window once */
        fprintf(out, "  %-20s RM-assigned, ports", f->name);
        uint32_t printed = 0;
        for (uint32_t n = 0; n < plan->num_nodes; ++n) {
            const orte_endpoints_node_t *node = &f->nodes[n];
            bool seen = false;
            for (uint32_t m = 0; m < n && !seen; ++m) {
                seen = f->nodes[m].first_port == node->first_port &&
                       f->nodes[m].num_ports == node->num_ports;
            }
            if (0 == node->first_port || seen) {
                continue;
            }
            const orte_inventory_t *inv = job->inventories[n];
            uint32_t slots = session_slots(inv);
            fprintf(out, "%s %u-%u (session slot %u of %u)", printed > 0 ? "," : "",
                    node->first_port, node->first_port + node->num_ports - 1,
                    job_slot(job, n, slots), slots);
            ++printed;
        }
        fputc('\n', out);
    }
}
