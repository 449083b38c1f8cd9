/* SPDX-License-Identifier: BSD-3-Clause */
/* The job database as text: an endpoint's address, and the whole database for herd-info --job. */
#include "herd_config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "opal/util/jobdb.h"
#include "opal/util/jobdb_internal.h"

int opal_jobdb_endpoint_string(const void *addr, size_t len, char *text, size_t size)
{
    char host[INET6_ADDRSTRLEN];
    if (NULL == addr || NULL == text || 0 == size) {
        return HERD_ERR_BAD_PARAM;
    }
    if (len == sizeof(struct sockaddr_in)) {
        struct sockaddr_in in4;
        memcpy(&in4, addr, sizeof(in4));
        if (AF_INET == in4.sin_family &&
            NULL != inet_ntop(AF_INET, &in4.sin_addr, host, sizeof(host))) {
            snprintf(text, size, "%s:%u", host, ntohs(in4.sin_port));
            return HERD_SUCCESS;
        }
    } else if (len == sizeof(struct sockaddr_in6)) {
        struct sockaddr_in6 in6;
        memcpy(&in6, addr, sizeof(in6));
        if (AF_INET6 == in6.sin6_family &&
            NULL != inet_ntop(AF_INET6, &in6.sin6_addr, host, sizeof(host))) {
            snprintf(text, size, "[%s]:%u", host, ntohs(in6.sin6_port));
            return HERD_SUCCESS;
        }
    }
    return HERD_ERR_BAD_PARAM;
}

/* The fabric table, for herd-info --job. */
static void dump_fabrics(FILE *out, const opal_jobdb_t *db)
{
    const opal_jobdb_header_t *h = db->header;
    if (0 == h->num_fabrics) {
        return;
    }
    fprintf(out, "fabrics (%u address slots per node):\n", h->fabric_addrs);
    for (uint32_t f = 0; f < h->num_fabrics; ++f) {
        opal_jobdb_fabric_view_t view;
        int rc = opal_jobdb_get_fabric(db, f, &view);
        if (HERD_SUCCESS != rc) {
            fprintf(out, "  %u %s\n", f, HERD_ERR_NOT_FOUND == rc ? "(not set)" : "(corrupt)");
        } else if (view.assigned) {
            fprintf(out, "  %u %s: assigned, ports %u-%u\n", f, view.name, view.first_port,
                    view.first_port + view.num_ports - 1);
        } else {
            fprintf(out, "  %u %s: modex (%s)\n", f, view.name, view.reason);
        }
    }
}

/* Rank's assigned endpoints (the first address of its node on each fabric). */
static void dump_proc_endpoints(FILE *out, const opal_jobdb_t *db, uint32_t rank)
{
    for (uint32_t f = 0; f < db->header->num_fabrics; ++f) {
        struct sockaddr_in6 addr;
        size_t len = sizeof(addr);
        char text[INET6_ADDRSTRLEN + 16];
        opal_jobdb_fabric_view_t view;
        if (HERD_SUCCESS == opal_jobdb_get_endpoint(db, rank, f, 0, &addr, &len) &&
            HERD_SUCCESS == opal_jobdb_endpoint_string(&addr, len, text, sizeof(text)) &&
            HERD_SUCCESS == opal_jobdb_get_fabric(db, f, &view)) {
            fprintf(out, ", %s %s", view.name, text);
        }
    }
}

void opal_jobdb_dump(FILE *out, const opal_jobdb_t *db)
{
    const opal_jobdb_header_t *h = db->header;
    uint32_t ready = 0;
    for (uint32_t r = 0; r < h->num_procs; ++r) {
        ready += (1u == atomic_load_explicit(&db->records[r].ready, memory_order_acquire));
    }
    fprintf(out, "job %s on node %s: %u procs (%u ready), %u nodes, %s\n", h->jobid, h->node_name,
            h->num_procs, ready, h->num_nodes,
            opal_jobdb_is_complete(db) ? "complete" : "incomplete");
    fprintf(out, "segment %s: %llu bytes, format %u, %u endpoint slots of %u bytes per proc\n",
            db->name, (unsigned long long) h->segment_size, h->version, h->endpoint_slots,
            h->endpoint_slot_size);
    fprintf(out, "nodes:\n");
    for (uint32_t n = 0; n < h->num_nodes; ++n) {
        const char *name = opal_jobdb_node_name(db, n);
        fprintf(out, "  %u %s\n", n, NULL != name ? name : "(not set)");
    }
    dump_fabrics(out, db);
    fprintf(out, "procs:\n");
    for (uint32_t r = 0; r < h->num_procs; ++r) {
        opal_jobdb_proc_view_t view;
        int rc = opal_jobdb_get_proc(db, r, &view);
        if (HERD_ERR_NOT_FOUND == rc) {
            fprintf(out, "  rank %u: not ready\n", r);
            continue;
        }
        if (HERD_SUCCESS != rc) {
            fprintf(out, "  rank %u: corrupt record\n", r);
            continue;
        }
        const char *node = opal_jobdb_node_name(db, view.node);
        fprintf(out, "  rank %u: node %u (%s), app %u, local rank %u, node rank %u, %s %s (%s)", r,
                view.node, NULL != node ? node : "?", view.app, view.local_rank, view.node_rank,
                view.bound ? "bound to" : "unbound on", view.cpuset, view.locality);
        uint64_t endpoint_bytes = (uint64_t) h->endpoint_slots * h->endpoint_slot_size;
        if (0 != endpoint_bytes) {
            fprintf(out, ", endpoints");
            for (uint32_t s = 0; s < h->endpoint_slots; ++s) {
                fputc(' ', out);
                const uint8_t *slot = view.endpoints + (uint64_t) s * h->endpoint_slot_size;
                for (uint32_t b = 0; b < h->endpoint_slot_size; ++b) {
                    fprintf(out, "%02x", slot[b]);
                }
            }
        }
        dump_proc_endpoints(out, db, r);
        fputc('\n', out);
    }
}
