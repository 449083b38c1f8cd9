/* SPDX-License-Identifier: BSD-3-Clause */
/* RM-assigned endpoints: the port windows of concurrent jobs, the plan every session daemon
 * computes from the inventories (deterministic, range overflow, IPv4/IPv6, several interfaces,
 * ofi providers, ucx), and the plan written to a job database and read back in place. */
#include "herd_config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "opal/dss/buffer.h"
#include "opal/mca/fabric/fabric.h"
#include "opal/util/argv.h"
#include "opal/util/jobdb.h"
#include "orte/runtime/endpoints.h"
#include "orte/util/inventory.h"

/* ------------------------------------------------------------------------------------------ */
/* inventories built by hand */

/* A node with session_slots session endpoints (0: no DVM) and no fabric yet. */
static orte_inventory_t *node_inventory(const char *name, uint32_t session_slots)
{
    orte_inventory_t *inv = calloc(1, sizeof(*inv));
    assert_non_null(inv);
    inv->node_name = strdup(name);
    inv->signature = strdup("0000000000000000");
    assert_non_null(inv->node_name);
    for (uint32_t s = 0; s < session_slots; ++s) {
        char uri[64];
        snprintf(uri, sizeof(uri), "tcp://10.0.0.1:%u", 40000 + s);
        assert_int_equal(HERD_SUCCESS, opal_argv_append(&inv->session_uris, uri));
    }
    return inv;
}

static void add_record(orte_inventory_t *inv, opal_fabric_record_t *record)
{
    opal_fabric_record_t **grown = realloc(inv->fabric, (inv->num_fabric + 1) * sizeof(*grown));
    assert_non_null(grown);
    inv->fabric = grown;
    inv->fabric[inv->num_fabric++] = record;
}

static void add_number(opal_fabric_record_t *record, const char *key, unsigned value)
{
    char text[16];
    snprintf(text, sizeof(text), "%u", value);
    assert_int_equal(HERD_SUCCESS, opal_fabric_record_add_attr(record, key, text));
}

/* A tcp record: interfaces "name=addr,addr;name=addr" and the port range (range 0: none). */
static void add_tcp(orte_inventory_t *inv, const char *interfaces, unsigned base, unsigned range)
{
    opal_fabric_record_t *record = opal_fabric_record_new("tcp");
    assert_non_null(record);
    if (range > 0) {
        add_number(record, "port_base", base);
        add_number(record, "port_range", range);
    }
    char **ifs = opal_argv_split(interfaces, ';');
    for (char **i = ifs; NULL != i && NULL != *i; ++i) {
        char *eq = strchr(*i, '=');
        assert_non_null(eq);
        *eq = '\0';
        opal_fabric_device_t *dev = opal_fabric_record_add_device(record, *i, "interface");
        assert_non_null(dev);
        char **addrs = opal_argv_split(eq + 1, ',');
        for (char **a = addrs; NULL != a && NULL != *a; ++a) {
            assert_int_equal(HERD_SUCCESS, opal_fabric_device_add_attr(dev, "endpoint_addr", *a));
        }
        opal_argv_free(addrs);
    }
    opal_argv_free(ifs);
    add_record(inv, record);
}

/* An ofi record: devices "provider@src_addr|..." and what fabric_ofi_assign says. */
static void add_ofi(orte_inventory_t *inv, const char *devices, const char *assign, unsigned base,
                    unsigned range)
{
    opal_fabric_record_t *record = opal_fabric_record_new("ofi");
    assert_non_null(record);
    assert_int_equal(HERD_SUCCESS, opal_fabric_record_add_attr(record, "assign", assign));
    add_number(record, "port_base", base);
    add_number(record, "port_range", range);
    char **list = opal_argv_split(devices, '|');
    for (char **d = list; NULL != d && NULL != *d; ++d) {
        char *at = strchr(*d, '@');
        assert_non_null(at);
        *at = '\0';
        char name[128];
        snprintf(name, sizeof(name), "%s/%s/rdm", *d, at + 1);
        opal_fabric_device_t *dev = opal_fabric_record_add_device(record, name, "provider");
        assert_non_null(dev);
        assert_int_equal(HERD_SUCCESS, opal_fabric_device_add_attr(dev, "provider", *d));
        assert_int_equal(HERD_SUCCESS, opal_fabric_device_add_attr(dev, "src_addr", at + 1));
    }
    opal_argv_free(list);
    add_record(inv, record);
}

static void add_ucx(orte_inventory_t *inv)
{
    opal_fabric_record_t *record = opal_fabric_record_new("ucx");
    assert_non_null(record);
    assert_int_equal(HERD_SUCCESS, opal_fabric_record_add_attr(record, "endpoints", "modex"));
    add_record(inv, record);
}

static void free_nodes(orte_inventory_t **invs, uint32_t n)
{
    for (uint32_t i = 0; i < n; ++i) {
        orte_inventory_free(invs[i]);
    }
}

static int fabric_index(const orte_endpoints_plan_t *plan, const char *name)
{
    for (uint32_t f = 0; f < plan->num_fabrics; ++f) {
        if (0 == strcmp(plan->fabrics[f].name, name)) {
            return (int) f;
        }
    }
    return -1;
}

static void expect_format(const orte_endpoints_plan_t *plan, const char *fabric, uint32_t node,
                          uint32_t node_rank, const char *want)
{
    char text[96];
    int f = fabric_index(plan, fabric);
    assert_true(f >= 0);
    orte_endpoints_format(plan, (uint32_t) f, node, node_rank, text, sizeof(text));
    assert_string_equal(want, text);
}

static void assert_contains(const char *text, const char *part)
{
    if (NULL == text || NULL == strstr(text, part)) {
        fail_msg("\"%s\" does not contain \"%s\"", NULL != text ? text : "(null)", part);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* windows */

static void test_window(void **state)
{
    uint32_t first = 1, count = 1;
    assert_int_equal(HERD_SUCCESS, orte_endpoints_window(16384, 4096, 8, 0, 1, 0, &first, &count));
    assert_int_equal(16384, first);
    assert_int_equal(512, count);
    assert_int_equal(HERD_SUCCESS, orte_endpoints_window(16384, 4096, 8, 7, 1, 0, &first, &count));
    assert_int_equal(16384 + 7 * 512, first);
    /* two providers share a slot's ports: part 1 of slot 1 */
    assert_int_equal(HERD_SUCCESS, orte_endpoints_window(20480, 8192, 8, 1, 2, 1, &first, &count));
    assert_int_equal(20480 + 3 * 512, first);
    assert_int_equal(512, count);
    /* a range too small to share: no port for anyone */
    assert_int_equal(HERD_SUCCESS, orte_endpoints_window(16384, 7, 8, 3, 1, 0, &first, &count));
    assert_int_equal(0, count);

    first = count = 77;
    assert_int_equal(HERD_ERR_BAD_PARAM, orte_endpoints_window(1, 2, 0, 0, 1, 0, &first, &count));
    assert_int_equal(HERD_ERR_BAD_PARAM, orte_endpoints_window(1, 2, 8, 8, 1, 0, &first, &count));
    assert_int_equal(HERD_ERR_BAD_PARAM, orte_endpoints_window(1, 2, 8, 0, 2, 2, &first, &count));
    assert_int_equal(HERD_ERR_BAD_PARAM, orte_endpoints_window(1, 2, 8, 0, 0, 0, &first, &count));
    assert_int_equal(77, first); /* output set only on success */
    assert_int_equal(77, count);
}

/* Jobs running at once on a node have different session slots (the DVM's root gives each a
 * free one): their windows never overlap, and stay inside the reserved range. */
static void test_concurrent_jobs_disjoint(void **state)
{
    const uint32_t slots = 8, parts = 2, base = 20480, range = 8192;
    uint8_t used[65536 / 8];
    memset(used, 0, sizeof(used));
    for (uint32_t seq = 1; seq <= slots; ++seq) {
        for (uint32_t part = 0; part < parts; ++part) {
            uint32_t first, count;
            assert_int_equal(HERD_SUCCESS, orte_endpoints_window(base, range, slots, seq % slots,
                                                                 parts, part, &first, &count));
            assert_true(count > 0);
            assert_true(first >= base && first + count <= base + range);
            for (uint32_t p = first; p < first + count; ++p) {
                assert_int_equal(0, used[p / 8] & (1u << (p % 8)));
                used[p / 8] |= (uint8_t) (1u << (p % 8));
            }
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* plans */

/* Two nodes, 8 session slots each, both with eth0 (IPv4 and IPv6, one link-local), ib0 and lo. */
static void two_nodes(orte_inventory_t *invs[2])
{
    invs[0] = node_inventory("n0", 8);
    invs[1] = node_inventory("n1", 8);
    add_tcp(invs[0], "lo=127.0.0.1,::1;eth0=10.0.0.1,fe80::1,fd00::1;ib0=10.1.0.1", 16384, 4096);
    add_tcp(invs[1], "lo=127.0.0.1,::1;eth0=10.0.0.2,fe80::2,fd00::2;ib0=10.1.0.2", 16384, 4096);
}

static void test_plan_tcp_two_nodes(void **state)
{
    orte_inventory_t *invs[2];
    two_nodes(invs);
    uint32_t per_node[2] = {3, 2};
    orte_endpoints_job_t job = {.inventories = invs,
                                .per_node = per_node,
                                .num_nodes = 2,
                                .session_slot = (const uint32_t[]){3, 3}};
    orte_endpoints_plan_t plan;
    assert_int_equal(HERD_SUCCESS, orte_endpoints_plan_build(&job, &plan));
    assert_int_equal(1, plan.num_fabrics);
    const orte_endpoints_fabric_t *tcp = &plan.fabrics[0];
    assert_string_equal("tcp", tcp->name);
    assert_true(tcp->assigned);
    assert_null(tcp->reason);
    /* several interfaces: every non-loopback, non-link-local address, in the node's order */
    const orte_endpoints_node_t *n1 = &tcp->nodes[1];
    assert_int_equal(3, n1->num_addrs);
    char text[INET6_ADDRSTRLEN];
    assert_string_equal("10.0.0.2", inet_ntop(AF_INET, n1->addrs[0].bytes, text, sizeof(text)));
    assert_int_equal(AF_INET6, n1->addrs[1].family);
    assert_string_equal("fd00::2", inet_ntop(AF_INET6, n1->addrs[1].bytes, text, sizeof(text)));
    assert_string_equal("10.1.0.2", inet_ntop(AF_INET, n1->addrs[2].bytes, text, sizeof(text)));
    /* job 3 of 8 slots: ports 16384 + 3 * 512 + node rank */
    expect_format(&plan, "tcp", 0, 0, "10.0.0.1:17920");
    expect_format(&plan, "tcp", 0, 2, "10.0.0.1:17922");
    expect_format(&plan, "tcp", 1, 1, "10.0.0.2:17921");
    assert_int_equal(0, orte_endpoints_port(&plan, 0, 1, 512)); /* past the window */
    assert_int_equal(0, orte_endpoints_port(&plan, 1, 0, 0));   /* no such fabric */

    char *out = NULL;
    size_t len = 0;
    FILE *stream = open_memstream(&out, &len);
    orte_endpoints_print(stream, &plan, &job);
    fclose(stream);
    assert_contains(out,
                    "tcp                  RM-assigned, ports 17920-18431 (session slot 3 of 8)");
    free(out);
    orte_endpoints_plan_destruct(&plan);
    free_nodes(invs, 2);
}

/* Every session daemon unpacks the inventories it was given: the plan from those copies is the
 * one herdrun made from its own. */
static void test_plan_deterministic(void **state)
{
    orte_inventory_t *invs[2], *copies[2];
    two_nodes(invs);
    add_ucx(invs[1]);
    add_ofi(invs[0], "tcp;ofi_rxm@10.0.0.1|udp;ofi_rxd@10.0.0.1", "tcp;ofi_rxm,udp;ofi_rxd", 20480,
            8192);
    add_ofi(invs[1], "tcp;ofi_rxm@10.0.0.2|udp;ofi_rxd@10.0.0.2", "tcp;ofi_rxm,udp;ofi_rxd", 20480,
            8192);
    for (int i = 0; i < 2; ++i) {
        opal_buffer_t buffer;
        opal_buffer_init(&buffer);
        assert_int_equal(HERD_SUCCESS, orte_inventory_pack(&buffer, invs[i], false));
        assert_int_equal(HERD_SUCCESS, orte_inventory_unpack(&buffer, &copies[i]));
        opal_buffer_destruct(&buffer);
    }
    uint32_t per_node[2] = {4, 4};
    orte_endpoints_job_t a = {.inventories = invs,
                              .per_node = per_node,
                              .num_nodes = 2,
                              .session_slot = (const uint32_t[]){9, 9}};
    orte_endpoints_job_t b = a;
    b.inventories = copies;
    orte_endpoints_plan_t pa, pb;
    assert_int_equal(HERD_SUCCESS, orte_endpoints_plan_build(&a, &pa));
    assert_int_equal(HERD_SUCCESS, orte_endpoints_plan_build(&b, &pb));
    assert_int_equal(4, pa.num_fabrics);
    assert_int_equal(pa.num_fabrics, pb.num_fabrics);
    for (uint32_t f = 0; f < pa.num_fabrics; ++f) {
        assert_string_equal(pa.fabrics[f].name, pb.fabrics[f].name);
        assert_int_equal(pa.fabrics[f].assigned, pb.fabrics[f].assigned);
        for (uint32_t n = 0; n < 2; ++n) {
            for (uint32_t r = 0; r < 4; ++r) {
                char ta[96], tb[96];
                orte_endpoints_format(&pa, f, n, r, ta, sizeof(ta));
                orte_endpoints_format(&pb, f, n, r, tb, sizeof(tb));
                assert_string_equal(ta, tb);
            }
        }
    }
    /* fabrics in the order first seen: n0's (tcp, then its ofi providers), then n1's ucx */
    assert_string_equal("tcp", pa.fabrics[0].name);
    assert_string_equal("ofi:tcp;ofi_rxm", pa.fabrics[1].name);
    assert_string_equal("ofi:udp;ofi_rxd", pa.fabrics[2].name);
    assert_string_equal("ucx", pa.fabrics[3].name);
    /* ofi providers split a slot (9 % 8 = 1) in two: 20480 + (1 * 2 + part) * 512 */
    expect_format(&pa, "ofi:tcp;ofi_rxm", 1, 3, "10.0.0.2:21507");
    expect_format(&pa, "ofi:udp;ofi_rxd", 1, 3, "10.0.0.2:22019");
    /* UCX worker addresses cannot be chosen in advance */
    assert_false(pa.fabrics[3].assigned);
    assert_contains(pa.fabrics[3].reason, "UCX makes a worker's address");
    expect_format(&pa, "ucx", 0, 0, "modex");
    orte_endpoints_plan_destruct(&pa);
    orte_endpoints_plan_destruct(&pb);
    free_nodes(invs, 2);
    free_nodes(copies, 2);
}

/* More processes on a node than the job's share of the range: the fabric falls back to the modex
 * for the whole job, and the reason names the node and the variable to raise. */
static void test_plan_range_overflow(void **state)
{
    orte_inventory_t *invs[2];
    two_nodes(invs);
    uint32_t per_node[2] = {512, 513};
    orte_endpoints_job_t job = {.inventories = invs,
                                .per_node = per_node,
                                .num_nodes = 2,
                                .session_slot = (const uint32_t[]){1, 1}};
    orte_endpoints_plan_t plan;
    assert_int_equal(HERD_SUCCESS, orte_endpoints_plan_build(&job, &plan));
    assert_int_equal(1, plan.num_fabrics);
    assert_false(plan.fabrics[0].assigned);
    assert_contains(plan.fabrics[0].reason, "node n1 runs 513 processes of the job");
    assert_contains(plan.fabrics[0].reason, "share of fabric_tcp_port_range there is 512 ports");
    assert_contains(plan.fabrics[0].reason, "raise fabric_tcp_port_range to at least 4104");
    /* nobody gets a port, not even n0's processes, which would fit */
    assert_int_equal(0, orte_endpoints_port(&plan, 0, 0, 0));
    expect_format(&plan, "tcp", 0, 0, "modex");

    char *out = NULL;
    size_t len = 0;
    FILE *stream = open_memstream(&out, &len);
    orte_endpoints_print(stream, &plan, &job);
    fclose(stream);
    assert_contains(out, "tcp                  modex: node n1 runs 513 processes");
    free(out);
    orte_endpoints_plan_destruct(&plan);

    /* exactly the share fits */
    per_node[1] = 512;
    assert_int_equal(HERD_SUCCESS, orte_endpoints_plan_build(&job, &plan));
    assert_true(plan.fabrics[0].assigned);
    expect_format(&plan, "tcp", 1, 511, "10.0.0.2:17407");
    orte_endpoints_plan_destruct(&plan);
    free_nodes(invs, 2);
}

static void test_plan_ipv6_and_loopback(void **state)
{
    orte_inventory_t *invs[3];
    invs[0] = node_inventory("v6a", 0);
    invs[1] = node_inventory("v6b", 0);
    invs[2] = node_inventory("lonely", 0);
    add_tcp(invs[0], "eth0=fe80::a,fd00::a", 30000, 100);
    add_tcp(invs[1], "eth0=fd00::b", 30000, 100);
    add_tcp(invs[2], "lo=127.0.0.1", 30000, 100);
    uint32_t per_node[3] = {2, 1, 0};
    orte_endpoints_job_t job = {.inventories = invs,
                                .per_node = per_node,
                                .num_nodes = 3,
                                .session_slot = (const uint32_t[]){5, 5, 5}};
    orte_endpoints_plan_t plan;
    /* no session slots (herdrun without a DVM): the whole range is the job's */
    assert_int_equal(HERD_SUCCESS, orte_endpoints_plan_build(&job, &plan));
    assert_true(plan.fabrics[0].assigned);
    expect_format(&plan, "tcp", 0, 1, "[fd00::a]:30001");
    expect_format(&plan, "tcp", 1, 0, "[fd00::b]:30000");
    orte_endpoints_plan_destruct(&plan);

    /* a node with only the loopback cannot be reached from the others */
    per_node[2] = 1;
    assert_int_equal(HERD_SUCCESS, orte_endpoints_plan_build(&job, &plan));
    assert_false(plan.fabrics[0].assigned);
    assert_contains(plan.fabrics[0].reason, "node lonely has no address for it that another "
                                            "node can reach (loopback only)");
    orte_endpoints_plan_destruct(&plan);

    /* a job on that node alone uses the loopback */
    per_node[0] = per_node[1] = 0;
    assert_int_equal(HERD_SUCCESS, orte_endpoints_plan_build(&job, &plan));
    assert_true(plan.fabrics[0].assigned);
    expect_format(&plan, "tcp", 2, 0, "127.0.0.1:30000");
    orte_endpoints_plan_destruct(&plan);
    free_nodes(invs, 3);
}

/* A job on one node puts the loopback first, then the node's other addresses. */
static void test_plan_one_node_loopback_first(void **state)
{
    orte_inventory_t *invs[2];
    two_nodes(invs);
    uint32_t per_node[2] = {0, 2};
    orte_endpoints_job_t job = {.inventories = invs,
                                .per_node = per_node,
                                .num_nodes = 2,
                                .session_slot = (const uint32_t[]){0, 0}};
    orte_endpoints_plan_t plan;
    assert_int_equal(HERD_SUCCESS, orte_endpoints_plan_build(&job, &plan));
    const orte_endpoints_node_t *n1 = &plan.fabrics[0].nodes[1];
    assert_int_equal(ORTE_ENDPOINTS_MAX_ADDRS, n1->num_addrs); /* 5 usable, 4 kept */
    expect_format(&plan, "tcp", 1, 1, "127.0.0.1:16385");
    assert_int_equal(AF_INET6, n1->addrs[1].family);         /* ::1 */
    assert_int_equal(0, plan.fabrics[0].nodes[0].num_addrs); /* no process there */
    orte_endpoints_plan_destruct(&plan);
    free_nodes(invs, 2);
}

static void test_plan_missing_pieces(void **state)
{
    orte_inventory_t *invs[2];
    invs[0] = node_inventory("a", 8);
    invs[1] = node_inventory("b", 8);
    add_tcp(invs[0], "eth0=10.0.0.1", 16384, 4096);
    add_tcp(invs[1], "eth0=10.0.0.2", 0, 0); /* fabric_tcp_port_range 0 there */
    add_ofi(invs[0], "tcp;ofi_rxm@10.0.0.1", "tcp;ofi_rxm", 20480, 8192);
    uint32_t per_node[2] = {1, 1};
    orte_endpoints_job_t job = {.inventories = invs,
                                .per_node = per_node,
                                .num_nodes = 2,
                                .session_slot = (const uint32_t[]){2, 2}};
    orte_endpoints_plan_t plan;
    assert_int_equal(HERD_SUCCESS, orte_endpoints_plan_build(&job, &plan));
    assert_int_equal(2, plan.num_fabrics);
    assert_false(plan.fabrics[0].assigned);
    assert_contains(plan.fabrics[0].reason,
                    "node b has no port range for it (fabric_tcp_port_range is 0");
    assert_false(plan.fabrics[1].assigned);
    assert_contains(plan.fabrics[1].reason, "node b reports no ofi fabric");
    orte_endpoints_plan_destruct(&plan);

    /* a node whose fabric_ofi_assign leaves the provider out */
    add_ofi(invs[1], "tcp;ofi_rxm@10.0.0.2", "udp;ofi_rxd", 20480, 8192);
    assert_int_equal(HERD_SUCCESS, orte_endpoints_plan_build(&job, &plan));
    assert_contains(plan.fabrics[1].reason, "node b does not assign endpoints of provider "
                                            "tcp;ofi_rxm (fabric_ofi_assign)");
    orte_endpoints_plan_destruct(&plan);

    /* no fabric inventory at all (dvm_fabric_inventory none): nothing assigned, said once */
    orte_inventory_t *bare[1] = {node_inventory("bare", 8)};
    orte_endpoints_job_t none = {.inventories = bare, .per_node = per_node, .num_nodes = 1};
    assert_int_equal(HERD_SUCCESS, orte_endpoints_plan_build(&none, &plan));
    assert_int_equal(0, plan.num_fabrics);
    char *out = NULL;
    size_t len = 0;
    FILE *stream = open_memstream(&out, &len);
    orte_endpoints_print(stream, &plan, &none);
    fclose(stream);
    assert_contains(out, "endpoints: none assigned, every transport uses the modex");
    free(out);
    orte_endpoints_plan_destruct(&plan);
    free_nodes(bare, 1);
    free_nodes(invs, 2);
}

/* ------------------------------------------------------------------------------------------ */
/* the plan in a job database */

static void test_plan_in_jobdb(void **state)
{
    orte_inventory_t *invs[2];
    two_nodes(invs);
    add_ucx(invs[0]);
    uint32_t per_node[2] = {2, 3};
    orte_endpoints_job_t job = {.inventories = invs,
                                .per_node = per_node,
                                .num_nodes = 2,
                                .session_slot = (const uint32_t[]){4, 4}};
    orte_endpoints_plan_t plan;
    assert_int_equal(HERD_SUCCESS, orte_endpoints_plan_build(&job, &plan));
    opal_jobdb_layout_t layout = {0};
    orte_endpoints_layout(&plan, &layout);
    assert_int_equal(2, layout.num_fabrics);

    char jobid[64];
    snprintf(jobid, sizeof(jobid), "eptest%ld", (long) getpid());
    opal_jobdb_t *writer = NULL, *reader = NULL;
    assert_int_equal(HERD_SUCCESS, opal_jobdb_create(jobid, "n1", 5, 2, &layout, &writer));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_set_node(writer, 0, "n0"));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_set_node(writer, 1, "n1"));
    assert_int_equal(HERD_SUCCESS, orte_endpoints_write(&plan, writer));
    for (uint32_t rank = 0; rank < 5; ++rank) {
        uint32_t node = rank < 2 ? 0 : 1, node_rank = rank < 2 ? rank : rank - 2;
        uint16_t ports[2];
        for (uint32_t f = 0; f < 2; ++f) {
            ports[f] = orte_endpoints_port(&plan, f, node, node_rank);
        }
        opal_jobdb_proc_t proc = {.rank = rank,
                                  .node = node,
                                  .node_rank = node_rank,
                                  .local_rank = node_rank,
                                  .ports = ports};
        assert_int_equal(HERD_SUCCESS, opal_jobdb_put_proc(writer, &proc));
    }
    assert_int_equal(HERD_SUCCESS, opal_jobdb_finish(writer));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_attach(opal_jobdb_name(writer), &reader));

    uint32_t tcp = 9, ucx = 9;
    assert_int_equal(HERD_SUCCESS, opal_jobdb_find_fabric(reader, "tcp", &tcp));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_find_fabric(reader, "ucx", &ucx));
    for (uint32_t rank = 0; rank < 5; ++rank) {
        uint32_t node = rank < 2 ? 0 : 1, node_rank = rank < 2 ? rank : rank - 2;
        struct sockaddr_storage addr;
        size_t len = sizeof(addr);
        char got[96], want[96];
        assert_int_equal(HERD_SUCCESS, opal_jobdb_get_endpoint(reader, rank, tcp, 0, &addr, &len));
        assert_int_equal(HERD_SUCCESS, opal_jobdb_endpoint_string(&addr, len, got, sizeof(got)));
        orte_endpoints_format(&plan, tcp, node, node_rank, want, sizeof(want));
        assert_string_equal(want, got);
        len = sizeof(addr);
        assert_int_equal(HERD_SUCCESS, opal_jobdb_get_endpoint(reader, rank, tcp, 1, &addr, &len));
        assert_int_equal(sizeof(struct sockaddr_in6), len); /* fd00::n, the second address */
        len = sizeof(addr);
        assert_int_equal(HERD_ERR_NOT_FOUND,
                         opal_jobdb_get_endpoint(reader, rank, ucx, 0, &addr, &len));
    }
    opal_jobdb_fabric_view_t view;
    assert_int_equal(HERD_SUCCESS, opal_jobdb_get_fabric(reader, ucx, &view));
    assert_contains(view.reason, "UCX makes a worker's address");
    assert_int_equal(HERD_SUCCESS, opal_jobdb_get_fabric(reader, tcp, &view));
    assert_int_equal(16384 + 4 * 512, view.first_port);
    assert_int_equal(512, view.num_ports);
    opal_jobdb_detach(reader);
    opal_jobdb_destroy(writer);
    orte_endpoints_plan_destruct(&plan);
    free_nodes(invs, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window),
        cmocka_unit_test(test_concurrent_jobs_disjoint),
        cmocka_unit_test(test_plan_tcp_two_nodes),
        cmocka_unit_test(test_plan_deterministic),
        cmocka_unit_test(test_plan_range_overflow),
        cmocka_unit_test(test_plan_ipv6_and_loopback),
        cmocka_unit_test(test_plan_one_node_loopback_first),
        cmocka_unit_test(test_plan_missing_pieces),
        cmocka_unit_test(test_plan_in_jobdb),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
