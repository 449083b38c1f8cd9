/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests of the rmaps framework: the policy parser and its defaults, placements and bindings for
 * every component on synthetic topologies, MPMD, oversubscription, every impossible-map message,
 * determinism, explain output, and a million ranks on 256 nodes. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "orte/mca/rmaps/rmaps.h"
#include "orte/util/inventory.h"
#include "support/capture.h"

#define T_2X4X2 "pack:2 core:4 pu:2" /* 16 hwthreads: core c = cpus 2c,2c+1 */
#define T_1X8X1 "pack:1 core:8 pu:1"
#define T_2X2X1 "pack:2 core:2 pu:1"
#define T_L3    "pack:2 l3:2 core:2 pu:2" /* L3 l = cpus 4l..4l+3 */

#define MAX_NODES 256
#define MAX_APPS  4

/* ------------------------------------------------------------------------------------------ */
/* building jobs */

typedef struct {
    orte_rmaps_node_t nodes[MAX_NODES];
    char names[MAX_NODES][16];
    orte_rmaps_app_t apps[MAX_APPS];
    orte_rmaps_job_t job;
    hwloc_topology_t topologies[MAX_NODES]; /* owned, one per distinct description */
    const char *descriptions[MAX_NODES];
    uint32_t num_topologies;
} test_job_t;

static hwloc_topology_t topology_of(test_job_t *t, const char *synthetic)
{
    for (uint32_t i = 0; i < t->num_topologies; ++i) {
        if (0 == strcmp(t->descriptions[i], synthetic)) {
            return t->topologies[i];
        }
    }
    hwloc_topology_t topo;
    assert_int_equal(0, hwloc_topology_init(&topo));
    assert_int_equal(0, hwloc_topology_set_synthetic(topo, synthetic));
    assert_int_equal(0, hwloc_topology_load(topo));
    t->topologies[t->num_topologies] = topo;
    t->descriptions[t->num_topologies++] = synthetic;
    return topo;
}

static test_job_t *job_new(void)
{
    test_job_t *t = calloc(1, sizeof(*t));
    assert_non_null(t);
    t->job.nodes = t->nodes;
    t->job.apps = t->apps;
    return t;
}

static void job_free(test_job_t *t)
{
    for (uint32_t i = 0; i < t->num_topologies; ++i) {
        hwloc_topology_destroy(t->topologies[i]);
    }
    free(t);
}

static void add_node(test_job_t *t, const char *synthetic, uint32_t slots, uint32_t max_slots)
{
    uint32_t n = t->job.num_nodes++;
    snprintf(t->names[n], sizeof(t->names[n]), "n%u", n);
    t->nodes[n].name = t->names[n];
    t->nodes[n].slots = slots;
    t->nodes[n].max_slots = max_slots;
    t->nodes[n].topology = topology_of(t, synthetic);
}

static void add_nodes(test_job_t *t, uint32_t count, const char *synthetic, uint32_t slots)
{
    for (uint32_t i = 0; i < count; ++i) {
        add_node(t, synthetic, slots, 0);
    }
}

static void add_app(test_job_t *t, uint32_t np, const char *map_by, const char *rank_by,
                    const char *bind_to)
{
    orte_rmaps_app_t *app = &t->apps[t->job.num_apps++];
    app->np = np;
    assert_int_equal(HERD_SUCCESS, orte_rmaps_policy_parse(map_by, rank_by, bind_to, &app->policy));
}

/* ------------------------------------------------------------------------------------------ */
/* running the mapper */

typedef struct {
    const test_job_t *t;
    char *text;
    size_t len;
    size_t size;
    uint32_t expect_rank;
} stream_t;

/* "rank node local_rank cpuset locality" per process, checking rank order on the way */
static int stream_emit(const orte_rmaps_proc_t *proc, void *cbdata)
{
    stream_t *s = cbdata;
    char line[512];
    int w;

    assert_int_equal(s->expect_rank, proc->rank);
    s->expect_rank++;
    assert_int_equal(proc->local_rank, proc->node_rank);
    w = snprintf(line, sizeof(line), "%u %s %u %s %s\n", proc->rank, s->t->nodes[proc->node].name,
                 proc->local_rank, proc->cpuset, proc->locality);
    if (s->len + (size_t) w + 1 > s->size) {
        s->size = 2 * (s->size + (size_t) w + 1);
        s->text = realloc(s->text, s->size);
        assert_non_null(s->text);
    }
    memcpy(s->text + s->len, line, (size_t) w + 1);
    s->len += (size_t) w;
    return HERD_SUCCESS;
}

/* The map as text; NULL (and *rc) when mapping fails. */
static char *map_text(const test_job_t *t, int *rc)
{
    stream_t s = {.t = t};
    uint32_t num = 0;
    int status = orte_rmaps_base_map_job(&t->job, stream_emit, &s, &num);

    if (NULL != rc) {
        *rc = status;
    }
    if (HERD_SUCCESS != status) {
        free(s.text);
        return NULL;
    }
    assert_int_equal(num, s.expect_rank);
    if (NULL == s.text) {
        s.text = strdup("");
    }
    return s.text;
}

static void assert_map(test_job_t *t, const char *expected)
{
    int rc;
    char *text = map_text(t, &rc);

    assert_int_equal(HERD_SUCCESS, rc);
    if (0 != strcmp(text, expected)) {
        fail_msg("map differs:\n--- expected\n%s--- got\n%s", expected, text);
    }
    free(text);
    job_free(t);
}

/* Mapping must fail with HERD_ERR_SILENT, print each needle, and emit nothing. */
static void assert_map_error(test_job_t *t, const char *const *needles)
{
    herd_test_capture_t capture;
    stream_t s = {.t = t};
    uint32_t num = 12345;
    int rc;

    herd_test_capture_start(&capture);
    rc = orte_rmaps_base_map_job(&t->job, stream_emit, &s, &num);
    char *err = herd_test_capture_stop(&capture);
    assert_int_equal(HERD_ERR_SILENT, rc);
    assert_int_equal(12345, num);
    assert_null(s.text);
    for (size_t i = 0; NULL != needles[i]; ++i) {
        assert_contains(err, needles[i]);
    }
    free(err);
    job_free(t);
}

/* ------------------------------------------------------------------------------------------ */
/* setup */

static int group_setup(void **state)
{
    (void) state;
    unsetenv("HERD_MCA_rmaps");
    return orte_rmaps_base_open();
}

static int group_teardown(void **state)
{
    (void) state;
    orte_rmaps_base_close();
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* the policy parser and the defaults */

static void test_parse_good(void **state)
{
    orte_rmaps_policy_t p;
    (void) state;

    assert_int_equal(HERD_SUCCESS, orte_rmaps_policy_parse(NULL, NULL, NULL, &p));
    assert_int_equal(ORTE_RMAPS_MAP_DEFAULT, p.mapping);
    assert_int_equal(ORTE_RMAPS_RANK_DEFAULT, p.ranking);
    assert_int_equal(ORTE_RMAPS_BIND_DEFAULT, p.binding);

    assert_int_equal(HERD_SUCCESS, orte_rmaps_policy_parse("core:PE=2", "slot", "none", &p));
    assert_int_equal(ORTE_RMAPS_MAP_CORE, p.mapping);
    assert_int_equal(2, p.pe);
    assert_int_equal(ORTE_RMAPS_RANK_SLOT, p.ranking);
    assert_int_equal(ORTE_RMAPS_BIND_NONE, p.binding);

    assert_int_equal(HERD_SUCCESS, orte_rmaps_policy_parse("socket:SPAN", "socket", "socket", &p));
    assert_int_equal(ORTE_RMAPS_MAP_PACKAGE, p.mapping);
    assert_true(p.span);
    assert_int_equal(ORTE_RMAPS_RANK_PACKAGE, p.ranking);
    assert_int_equal(ORTE_RMAPS_BIND_PACKAGE, p.binding);

    assert_int_equal(HERD_SUCCESS,
                     orte_rmaps_policy_parse("ppr:2:socket:PE=2,OVERSUBSCRIBE", NULL, NULL, &p));
    assert_int_equal(ORTE_RMAPS_MAP_PPR, p.mapping);
    assert_int_equal(2, p.ppr_count);
    assert_int_equal(ORTE_RMAPS_MAP_PACKAGE, p.ppr_object);
    assert_int_equal(2, p.pe);
    assert_int_equal(ORTE_RMAPS_OVERSUB_ALLOW, p.oversubscribe);

    assert_int_equal(HERD_SUCCESS,
                     orte_rmaps_policy_parse("SLOT:nooversubscribe", "NODE", "HWThread", &p));
    assert_int_equal(ORTE_RMAPS_MAP_SLOT, p.mapping);
    assert_int_equal(ORTE_RMAPS_OVERSUB_FORBID, p.oversubscribe);
    assert_int_equal(ORTE_RMAPS_RANK_NODE, p.ranking);
    assert_int_equal(ORTE_RMAPS_BIND_HWTHREAD, p.binding);

    assert_int_equal(HERD_SUCCESS, orte_rmaps_policy_parse("l3cache", "hwthread", "l3cache", &p));
    assert_int_equal(ORTE_RMAPS_MAP_L3CACHE, p.mapping);
    assert_int_equal(HERD_SUCCESS, orte_rmaps_policy_parse("seq", NULL, "core", &p));
    assert_int_equal(ORTE_RMAPS_MAP_SEQ, p.mapping);
    assert_null(p.seq_hosts);
    assert_int_equal(HERD_SUCCESS, orte_rmaps_policy_parse("ppr:1:node", NULL, NULL, &p));
    assert_int_equal(ORTE_RMAPS_MAP_NODE, p.ppr_object);
    assert_int_equal(HERD_SUCCESS, orte_rmaps_policy_parse("hwthread", NULL, NULL, &p));
    assert_int_equal(ORTE_RMAPS_MAP_HWTHREAD, p.mapping);
}

static void expect_parse_error(const char *map_by, const char *rank_by, const char *bind_to,
                               const char *needle1, const char *needle2)
{
    herd_test_capture_t capture;
    orte_rmaps_policy_t p;

    memset(&p, 0x5a, sizeof(p));
    herd_test_capture_start(&capture);
    int rc = orte_rmaps_policy_parse(map_by, rank_by, bind_to, &p);
    char *err = herd_test_capture_stop(&capture);
    assert_int_equal(HERD_ERR_BAD_PARAM, rc);
    assert_int_equal(0x5a5a5a5a, (uint32_t) p.pe); /* untouched on failure */
    assert_contains(err, needle1);
    assert_contains(err, needle2);
    free(err);
}

static void test_parse_bad(void **state)
{
    (void) state;
    expect_parse_error("diagonal", NULL, NULL,
                       "The value \"diagonal\" of --map-by is not valid: \"diagonal\" is not a "
                       "mapping policy",
                       "Accepted values: slot, node, package (or socket), l3cache, core");
    expect_parse_error("core:PE=0", NULL, NULL, "the modifier \"PE=0\" needs a positive number",
                       "PE=n, SPAN, OVERSUBSCRIBE, NOOVERSUBSCRIBE");
    expect_parse_error("core:PE=x", NULL, NULL, "\"PE=x\"", "--map-by");
    expect_parse_error("core:BOGUS", NULL, NULL, "\"BOGUS\" is not a modifier", "--map-by");
    expect_parse_error("ppr:2", NULL, NULL, "ppr needs a positive count and an object",
                       "ppr:N:OBJ");
    expect_parse_error("ppr:x:core", NULL, NULL, "ppr needs a positive count", "--map-by");
    expect_parse_error("ppr:2:rack", NULL, NULL, "\"rack\" is not an object ppr can count",
                       "--map-by");
    expect_parse_error("core:OVERSUBSCRIBE,NOOVERSUBSCRIBE", NULL, NULL,
                       "OVERSUBSCRIBE and NOOVERSUBSCRIBE contradict each other", "--map-by");
    expect_parse_error(NULL, "diagonal", NULL, "The value \"diagonal\" of --rank-by is not valid",
                       "Accepted values: slot, node, package (or socket), l3cache, core, "
                       "hwthread");
    expect_parse_error(NULL, NULL, "board", "The value \"board\" of --bind-to is not valid",
                       "Accepted values: none, hwthread, core, l3cache, package (or socket)");
}

static void resolve(const char *map_by, const char *rank_by, const char *bind_to, uint32_t np,
                    const char *expected)
{
    orte_rmaps_policy_t p;
    orte_rmaps_policy_t r;
    char text[256];

    assert_int_equal(HERD_SUCCESS, orte_rmaps_policy_parse(map_by, rank_by, bind_to, &p));
    orte_rmaps_policy_resolve(&p, np, &r);
    orte_rmaps_policy_string(&r, text, sizeof(text));
    assert_string_equal(expected, text);
}

static void test_defaults(void **state)
{
    (void) state;
    resolve(NULL, NULL, NULL, 1, "--map-by core --rank-by core --bind-to core");
    resolve(NULL, NULL, NULL, 2, "--map-by core --rank-by core --bind-to core");
    resolve(NULL, NULL, NULL, 3, "--map-by package --rank-by package --bind-to package");
    resolve("node", NULL, NULL, 2, "--map-by node --rank-by node --bind-to core");
    resolve("node", NULL, NULL, 8, "--map-by node --rank-by node --bind-to package");
    resolve("slot", NULL, NULL, 2, "--map-by slot --rank-by slot --bind-to core");
    resolve("slot", NULL, NULL, 3, "--map-by slot --rank-by slot --bind-to package");
    resolve("core", NULL, NULL, 64, "--map-by core --rank-by core --bind-to core");
    resolve("hwthread", NULL, NULL, 64, "--map-by hwthread --rank-by hwthread --bind-to hwthread");
    resolve("l3cache", NULL, NULL, 64, "--map-by l3cache --rank-by l3cache --bind-to l3cache");
    resolve("package:PE=2", NULL, NULL, 64,
            "--map-by package:PE=2 --rank-by package --bind-to core");
    resolve("hwthread:PE=2", NULL, NULL, 64,
            "--map-by hwthread:PE=2 --rank-by hwthread --bind-to hwthread");
    resolve("ppr:2:core", NULL, NULL, 64, "--map-by ppr:2:core --rank-by slot --bind-to core");
    resolve("ppr:2:node", NULL, NULL, 64, "--map-by ppr:2:node --rank-by slot --bind-to package");
    resolve("seq", NULL, NULL, 2, "--map-by seq --rank-by slot --bind-to core");
    resolve("core:SPAN:OVERSUBSCRIBE", "node", "none", 2,
            "--map-by core:SPAN:OVERSUBSCRIBE --rank-by node --bind-to none");
}

/* ------------------------------------------------------------------------------------------ */
/* round_robin placements */

static void test_map_core(void **state)
{
    (void) state;
    test_job_t *t = job_new();
    add_nodes(t, 2, T_2X4X2, 8);
    add_app(t, 4, "core", NULL, NULL);
    assert_map(t, "0 n0 0 0-1 pk0:co0\n"
                  "1 n0 1 2-3 pk0:co1\n"
                  "2 n0 2 4-5 pk0:co2\n"
                  "3 n0 3 6-7 pk0:co3\n");
}

static void test_map_default_small_and_large(void **state)
{
    (void) state;
    /* np 2: by core, bound to cores */
    test_job_t *t = job_new();
    add_nodes(t, 1, T_2X4X2, 8);
    add_app(t, 2, NULL, NULL, NULL);
    assert_map(t, "0 n0 0 0-1 pk0:co0\n"
                  "1 n0 1 2-3 pk0:co1\n");
    /* np 4: by package (alternating), bound to packages */
    t = job_new();
    add_nodes(t, 1, T_2X4X2, 8);
    add_app(t, 4, NULL, NULL, NULL);
    assert_map(t, "0 n0 0 0-7 pk0\n"
                  "1 n0 1 8-15 pk1\n"
                  "2 n0 2 0-7 pk0\n"
                  "3 n0 3 8-15 pk1\n");
}

static void test_map_package_bind_core(void **state)
{
    (void) state;
    /* the processes of a package take its cores in turn */
    test_job_t *t = job_new();
    add_nodes(t, 1, T_2X4X2, 8);
    add_app(t, 4, "package", NULL, "core");
    assert_map(t, "0 n0 0 0-1 pk0:co0\n"
                  "1 n0 1 8-9 pk1:co4\n"
                  "2 n0 2 2-3 pk0:co1\n"
                  "3 n0 3 10-11 pk1:co5\n");
    /* ranked by core instead: the cores' order */
    t = job_new();
    add_nodes(t, 1, T_2X4X2, 8);
    add_app(t, 4, "package", "core", "core");
    assert_map(t, "0 n0 0 0-1 pk0:co0\n"
                  "1 n0 1 2-3 pk0:co1\n"
                  "2 n0 2 8-9 pk1:co4\n"
                  "3 n0 3 10-11 pk1:co5\n");
    /* ranked by slot: the mapping's order */
    t = job_new();
    add_nodes(t, 1, T_2X4X2, 8);
    add_app(t, 4, "core", "package", "hwthread");
    assert_map(t, "0 n0 0 0 pk0:co0:pu0\n"
                  "1 n0 1 2 pk0:co1:pu2\n"
                  "2 n0 2 4 pk0:co2:pu4\n"
                  "3 n0 3 6 pk0:co3:pu6\n");
}

static void test_map_core_rank_package_two_packages(void **state)
{
    (void) state;
    /* 8 on cores of both packages; rank-by package alternates packages */
    test_job_t *t = job_new();
    add_nodes(t, 1, "pack:2 core:2 pu:1", 4);
    add_app(t, 4, "core", "package", "core");
    assert_map(t, "0 n0 0 0 pk0:co0\n"
                  "1 n0 1 2 pk1:co2\n"
                  "2 n0 2 1 pk0:co1\n"
                  "3 n0 3 3 pk1:co3\n");
}

static void test_map_node(void **state)
{
    (void) state;
    test_job_t *t = job_new();
    add_nodes(t, 2, T_2X4X2, 8);
    add_app(t, 5, "node", NULL, "core");
    assert_map(t, "0 n0 0 0-1 pk0:co0\n"
                  "1 n1 0 0-1 pk0:co0\n"
                  "2 n0 1 2-3 pk0:co1\n"
                  "3 n1 1 2-3 pk0:co1\n"
                  "4 n0 2 4-5 pk0:co2\n");
    /* uneven slots: a full node is skipped */
    t = job_new();
    add_node(t, T_2X4X2, 1, 0);
    add_node(t, T_2X4X2, 3, 0);
    add_app(t, 4, "node", "node", "none");
    assert_map(t, "0 n0 0 0-15 node\n"
                  "1 n1 0 0-15 node\n"
                  "2 n1 1 0-15 node\n"
                  "3 n1 2 0-15 node\n");
    /* by node, ranked by slot */
    t = job_new();
    add_nodes(t, 2, T_2X2X1, 4);
    add_app(t, 3, "node", "slot", "core");
    assert_map(t, "0 n0 0 0 pk0:co0\n"
                  "1 n0 1 1 pk0:co1\n"
                  "2 n1 0 0 pk0:co0\n");
}

static void test_map_slot_heterogeneous(void **state)
{
    (void) state;
    test_job_t *t = job_new();
    add_node(t, T_2X2X1, 4, 0);
    add_node(t, T_1X8X1, 8, 0);
    add_app(t, 6, "slot", NULL, "core");
    assert_map(t, "0 n0 0 0 pk0:co0\n"
                  "1 n0 1 1 pk0:co1\n"
                  "2 n0 2 2 pk1:co2\n"
                  "3 n0 3 3 pk1:co3\n"
                  "4 n1 0 0 pk0:co0\n"
                  "5 n1 1 1 pk0:co1\n");
    /* default binding for np > 2 by slot: the package */
    t = job_new();
    add_node(t, T_2X2X1, 2, 0);
    add_node(t, T_1X8X1, 8, 0);
    add_app(t, 3, "slot", NULL, NULL);
    assert_map(t, "0 n0 0 0-1 pk0\n"
                  "1 n0 1 0-1 pk0\n"
                  "2 n1 0 0-7 pk0\n");
}

/* The binding texts are cached per topology: the same core of two topologies is two cpusets,
 * also when nodes of both take turns (each node loads its own topology here). */
static void test_binding_text_per_topology(void **state)
{
    (void) state;
    test_job_t *t = job_new();
    add_node(t, T_2X4X2, 8, 0);
    add_node(t, T_1X8X1, 8, 0);
    add_node(t, T_2X4X2, 8, 0);
    add_node(t, T_1X8X1, 8, 0);
    add_app(t, 8, "node", NULL, "core");
    assert_map(t, "0 n0 0 0-1 pk0:co0\n"
                  "1 n1 0 0 pk0:co0\n"
                  "2 n2 0 0-1 pk0:co0\n"
                  "3 n3 0 0 pk0:co0\n"
                  "4 n0 1 2-3 pk0:co1\n"
                  "5 n1 1 1 pk0:co1\n"
                  "6 n2 1 2-3 pk0:co1\n"
                  "7 n3 1 1 pk0:co1\n");
}

static void test_map_hwthread(void **state)
{
    (void) state;
    test_job_t *t = job_new();
    add_nodes(t, 1, T_2X4X2, 16);
    add_app(t, 3, "hwthread", NULL, NULL);
    assert_map(t, "0 n0 0 0 pk0:co0:pu0\n"
                  "1 n0 1 1 pk0:co0:pu1\n"
                  "2 n0 2 2 pk0:co1:pu2\n");
}

static void test_map_pe(void **state)
{
    (void) state;
    test_job_t *t = job_new();
    add_nodes(t, 1, T_2X4X2, 8);
    add_app(t, 3, "core:PE=2", NULL, NULL);
    assert_map(t, "0 n0 0 0-3 pk0:co0-1\n"
                  "1 n0 1 4-7 pk0:co2-3\n"
                  "2 n0 2 8-11 pk1:co4-5\n");
    /* PE inside packages, alternating */
    t = job_new();
    add_nodes(t, 1, T_2X4X2, 8);
    add_app(t, 4, "package:PE=2", NULL, NULL);
    assert_map(t, "0 n0 0 0-3 pk0:co0-1\n"
                  "1 n0 1 8-11 pk1:co4-5\n"
                  "2 n0 2 4-7 pk0:co2-3\n"
                  "3 n0 3 12-15 pk1:co6-7\n");
    /* PE counts hwthreads when mapping by hwthread */
    t = job_new();
    add_nodes(t, 1, T_2X4X2, 16);
    add_app(t, 2, "hwthread:PE=3", NULL, NULL);
    assert_map(t, "0 n0 0 0-2 pk0:co0-1:pu0-2\n"
                  "1 n0 1 3-5 pk0:co1-2:pu3-5\n");
    /* PE with a coarser binding: the packages holding the cpus */
    t = job_new();
    add_nodes(t, 1, T_2X4X2, 8);
    add_app(t, 2, "core:PE=4", NULL, "package");
    assert_map(t, "0 n0 0 0-7 pk0\n"
                  "1 n0 1 8-15 pk1\n");
    /* PE takes PE slots: 8 slots hold 4 processes of PE=2 */
    t = job_new();
    add_nodes(t, 2, T_2X4X2, 8);
    add_app(t, 5, "slot:PE=2", NULL, "core");
    assert_map(t, "0 n0 0 0-3 pk0:co0-1\n"
                  "1 n0 1 4-7 pk0:co2-3\n"
                  "2 n0 2 8-11 pk1:co4-5\n"
                  "3 n0 3 12-15 pk1:co6-7\n"
                  "4 n1 0 0-3 pk0:co0-1\n");
}

static void test_map_l3cache(void **state)
{
    (void) state;
    test_job_t *t = job_new();
    add_nodes(t, 1, T_L3, 8);
    add_app(t, 5, "l3cache", NULL, NULL);
    assert_map(t, "0 n0 0 0-3 pk0:l3c0\n"
                  "1 n0 1 4-7 pk0:l3c1\n"
                  "2 n0 2 8-11 pk1:l3c2\n"
                  "3 n0 3 12-15 pk1:l3c3\n"
                  "4 n0 4 0-3 pk0:l3c0\n");
    t = job_new();
    add_nodes(t, 1, T_L3, 8);
    add_app(t, 2, "core", NULL, "l3cache");
    assert_map(t, "0 n0 0 0-3 pk0:l3c0\n"
                  "1 n0 1 0-3 pk0:l3c0\n");
}

static void test_map_span(void **state)
{
    (void) state;
    test_job_t *t = job_new();
    add_nodes(t, 2, T_2X4X2, 8);
    add_app(t, 4, "package:SPAN", NULL, NULL);
    assert_map(t, "0 n0 0 0-7 pk0\n"
                  "1 n0 1 8-15 pk1\n"
                  "2 n1 0 0-7 pk0\n"
                  "3 n1 1 8-15 pk1\n");
    /* without SPAN the first node fills first */
    t = job_new();
    add_nodes(t, 2, T_2X4X2, 8);
    add_app(t, 4, "package", NULL, NULL);
    assert_map(t, "0 n0 0 0-7 pk0\n"
                  "1 n0 1 8-15 pk1\n"
                  "2 n0 2 0-7 pk0\n"
                  "3 n0 3 8-15 pk1\n");
}

static void test_map_np_zero(void **state)
{
    (void) state;
    test_job_t *t = job_new();
    add_node(t, T_2X2X1, 2, 0);
    add_node(t, T_2X2X1, 1, 0);
    add_app(t, 0, "slot", NULL, "core");
    assert_map(t, "0 n0 0 0 pk0:co0\n"
                  "1 n0 1 1 pk0:co1\n"
                  "2 n1 0 0 pk0:co0\n");
}

static void test_map_bind_none(void **state)
{
    (void) state;
    test_job_t *t = job_new();
    add_nodes(t, 1, T_2X4X2, 8);
    add_app(t, 2, "core", NULL, "none");
    assert_map(t, "0 n0 0 0-15 node\n"
                  "1 n0 1 0-15 node\n");
}

/* ------------------------------------------------------------------------------------------ */
/* MPMD, oversubscription */

static void test_mpmd(void **state)
{
    (void) state;
    test_job_t *t = job_new();
    add_nodes(t, 2, T_2X4X2, 4);
    add_app(t, 2, "core", NULL, NULL);
    add_app(t, 3, "core", NULL, NULL);
    assert_map(t, "0 n0 0 0-1 pk0:co0\n"
                  "1 n0 1 2-3 pk0:co1\n"
                  "2 n0 2 4-5 pk0:co2\n"
                  "3 n0 3 6-7 pk0:co3\n"
                  "4 n1 0 0-1 pk0:co0\n");
    /* different policies per app; app 1 continues on the slots app 0 left */
    t = job_new();
    add_nodes(t, 2, T_2X4X2, 8);
    add_app(t, 2, "node", NULL, "core");
    add_app(t, 2, "core:PE=2", NULL, NULL);
    assert_map(t, "0 n0 0 0-1 pk0:co0\n"
                  "1 n1 0 0-1 pk0:co0\n"
                  "2 n0 1 4-7 pk0:co2-3\n"
                  "3 n0 2 8-11 pk1:co4-5\n");
}

static void test_mpmd_app_numbers(void **state)
{
    (void) state;
    test_job_t *t = job_new();
    orte_rmaps_map_t *map = NULL;
    add_nodes(t, 1, T_2X4X2, 8);
    add_app(t, 1, "core", NULL, NULL);
    add_app(t, 2, "core", NULL, NULL);
    add_app(t, 1, "core", NULL, NULL);
    assert_int_equal(HERD_SUCCESS, orte_rmaps_base_map_collect(&t->job, &map));
    assert_int_equal(4, map->num_procs);
    assert_int_equal(0, map->procs[0].app);
    assert_int_equal(1, map->procs[1].app);
    assert_int_equal(1, map->procs[2].app);
    assert_int_equal(2, map->procs[3].app);
    assert_int_equal(3, map->procs[3].local_rank);
    orte_rmaps_map_free(map);
    job_free(t);
}

static void test_oversubscribe(void **state)
{
    (void) state;
    test_job_t *t = job_new();
    add_nodes(t, 2, T_2X4X2, 2);
    add_app(t, 6, "core:OVERSUBSCRIBE", NULL, NULL);
    assert_map(t, "0 n0 0 0-1 pk0:co0\n"
                  "1 n0 1 2-3 pk0:co1\n"
                  "2 n0 2 4-5 pk0:co2\n"
                  "3 n1 0 0-1 pk0:co0\n"
                  "4 n1 1 2-3 pk0:co1\n"
                  "5 n1 2 4-5 pk0:co2\n");
    /* beyond the cores: wrap round */
    t = job_new();
    add_nodes(t, 1, T_2X2X1, 4);
    add_app(t, 6, "core:OVERSUBSCRIBE", NULL, NULL);
    assert_map(t, "0 n0 0 0 pk0:co0\n"
                  "1 n0 1 1 pk0:co1\n"
                  "2 n0 2 2 pk1:co2\n"
                  "3 n0 3 3 pk1:co3\n"
                  "4 n0 4 0 pk0:co0\n"
                  "5 n0 5 1 pk0:co1\n");
    /* max_slots caps one node; the other takes the rest */
    t = job_new();
    add_node(t, T_2X2X1, 2, 2);
    add_node(t, T_2X2X1, 2, 0);
    add_app(t, 6, "slot:OVERSUBSCRIBE", NULL, "core");
    assert_map(t, "0 n0 0 0 pk0:co0\n"
                  "1 n0 1 1 pk0:co1\n"
                  "2 n1 0 0 pk0:co0\n"
                  "3 n1 1 1 pk0:co1\n"
                  "4 n1 2 2 pk1:co2\n"
                  "5 n1 3 3 pk1:co3\n");
}

/* ------------------------------------------------------------------------------------------ */
/* impossible maps */

static void test_error_not_enough_slots(void **state)
{
    (void) state;
    test_job_t *t = job_new();
    add_nodes(t, 2, T_2X4X2, 2);
    add_app(t, 6, "core", NULL, NULL);
    assert_map_error(t, (const char *const[]){"App 0: 6 processes requested but the 2 nodes have "
                                              "4 slots.",
                                              "Only 4 processes fit", "--oversubscribe",
                                              "run fewer processes", NULL});
    t = job_new();
    add_nodes(t, 1, T_2X4X2, 2);
    add_app(t, 3, "slot:NOOVERSUBSCRIBE", NULL, NULL);
    assert_map_error(t, (const char *const[]){"App 0: 3 processes requested but the 1 node has 2 "
                                              "slots, and",
                                              "NOOVERSUBSCRIBE forbids", NULL});
    /* PE divides the slots */
    t = job_new();
    add_nodes(t, 2, T_2X4X2, 4);
    add_app(t, 5, "core:PE=2", NULL, NULL);
    assert_map_error(t, (const char *const[]){"5 processes requested but the 2 nodes have 8 "
                                              "slots (enough for 4 processes with PE=2)",
                                              NULL});
    /* MPMD: the second app finds what the first left */
    t = job_new();
    add_nodes(t, 1, T_2X4X2, 4);
    add_app(t, 3, "core", NULL, NULL);
    add_app(t, 2, "core", NULL, NULL);
    assert_map_error(t, (const char *const[]){"App 1: 2 processes requested but the 1 node has 1 "
                                              "slots left by the earlier apps",
                                              NULL});
    /* np 0 with nothing free */
    t = job_new();
    add_nodes(t, 1, T_2X4X2, 2);
    add_app(t, 2, "core", NULL, NULL);
    add_app(t, 0, "core", NULL, NULL);
    assert_map_error(t,
                     (const char *const[]){"App 1: no free slots are left on the 1 nodes", NULL});
}

static void test_error_max_slots(void **state)
{
    (void) state;
    test_job_t *t = job_new();
    add_node(t, T_2X4X2, 2, 3);
    add_node(t, T_2X4X2, 2, 3);
    add_app(t, 8, "core:OVERSUBSCRIBE", NULL, NULL);
    assert_map_error(t, (const char *const[]){"App 0: 8 processes requested, more than the 2 nodes "
                                              "take even when",
                                              "max_slots limits allow 6 processes", NULL});
}

static void test_error_pe(void **state)
{
    (void) state;
    test_job_t *t = job_new();
    add_node(t, T_2X4X2, 8, 0);
    add_node(t, T_2X2X1, 4, 0);
    add_app(t, 2, "package:PE=4", NULL, NULL);
    assert_map_error(t, (const char *const[]){"PE=4 is larger than a package of node n1 (2 "
                                              "cores)",
                                              "smaller PE=n", NULL});
    t = job_new();
    add_node(t, T_2X2X1, 4, 0);
    add_app(t, 1, "core:PE=5", NULL, NULL);
    assert_map_error(t, (const char *const[]){"PE=5 is larger than node n0 (4 cores)", NULL});
}

static void test_error_missing_objects(void **state)
{
    (void) state;
    test_job_t *t = job_new();
    add_node(t, T_L3, 8, 0);
    add_node(t, T_2X4X2, 8, 0);
    add_app(t, 2, "l3cache", NULL, NULL);
    assert_map_error(t, (const char *const[]){"Node n1 has no L3 cache, so processes cannot be "
                                              "mapped by l3cache there",
                                              "Choose another --map-by", NULL});
    t = job_new();
    add_node(t, T_2X4X2, 8, 0);
    add_app(t, 2, "core", NULL, "l3cache");
    assert_map_error(t, (const char *const[]){"Node n0 has no L3 cache, so processes cannot be "
                                              "bound with --bind-to l3cache there",
                                              NULL});
    t = job_new();
    add_node(t, T_2X4X2, 8, 0);
    add_app(t, 2, "core", "l3cache", NULL);
    assert_map_error(t, (const char *const[]){"cannot be ranked with --rank-by l3cache", NULL});
}

/* ------------------------------------------------------------------------------------------ */
/* ppr and seq */

static void test_ppr(void **state)
{
    (void) state;
    test_job_t *t = job_new();
    add_nodes(t, 2, T_2X4X2, 8);
    add_app(t, 0, "ppr:2:package", NULL, NULL);
    assert_map(t, "0 n0 0 0-7 pk0\n"
                  "1 n0 1 0-7 pk0\n"
                  "2 n0 2 8-15 pk1\n"
                  "3 n0 3 8-15 pk1\n"
                  "4 n1 0 0-7 pk0\n"
                  "5 n1 1 0-7 pk0\n"
                  "6 n1 2 8-15 pk1\n"
                  "7 n1 3 8-15 pk1\n");
    /* fewer than the ppr allows; bound to cores inside the package */
    t = job_new();
    add_nodes(t, 2, T_2X4X2, 8);
    add_app(t, 3, "ppr:2:package", NULL, "core");
    assert_map(t, "0 n0 0 0-1 pk0:co0\n"
                  "1 n0 1 2-3 pk0:co1\n"
                  "2 n0 2 8-9 pk1:co4\n");
    t = job_new();
    add_nodes(t, 2, T_2X2X1, 4);
    add_app(t, 0, "ppr:1:core", NULL, NULL);
    assert_map(t, "0 n0 0 0 pk0:co0\n"
                  "1 n0 1 1 pk0:co1\n"
                  "2 n0 2 2 pk1:co2\n"
                  "3 n0 3 3 pk1:co3\n"
                  "4 n1 0 0 pk0:co0\n"
                  "5 n1 1 1 pk0:co1\n"
                  "6 n1 2 2 pk1:co2\n"
                  "7 n1 3 3 pk1:co3\n");
    t = job_new();
    add_nodes(t, 3, T_2X2X1, 4);
    add_app(t, 0, "ppr:1:node", NULL, "core");
    assert_map(t, "0 n0 0 0 pk0:co0\n"
                  "1 n1 0 0 pk0:co0\n"
                  "2 n2 0 0 pk0:co0\n");
}

static void test_ppr_errors(void **state)
{
    (void) state;
    test_job_t *t = job_new();
    add_nodes(t, 2, T_2X4X2, 4);
    add_app(t, 0, "ppr:8:package", NULL, NULL);
    assert_map_error(t, (const char *const[]){"ppr:8:package needs 16 processes per node but n0 "
                                              "has 4 slots",
                                              "--oversubscribe", NULL});
    t = job_new();
    add_nodes(t, 2, T_2X4X2, 8);
    add_app(t, 3, "ppr:1:node", NULL, NULL);
    assert_map_error(t, (const char *const[]){"3 processes requested but --map-by ppr:1:node "
                                              "places at most 2 on the",
                                              NULL});
    t = job_new();
    add_node(t, T_2X4X2, 4, 6);
    add_app(t, 0, "ppr:8:package:OVERSUBSCRIBE", NULL, NULL);
    assert_map_error(t,
                     (const char *const[]){"needs 16 processes on node n0, more than its",
                                           "max_slots allow (6) even when oversubscribed", NULL});
    /* allowed to oversubscribe: fine */
    t = job_new();
    add_node(t, T_2X2X1, 2, 0);
    add_app(t, 0, "ppr:2:package:OVERSUBSCRIBE", NULL, "core");
    assert_map(t, "0 n0 0 0 pk0:co0\n"
                  "1 n0 1 1 pk0:co1\n"
                  "2 n0 2 2 pk1:co2\n"
                  "3 n0 3 3 pk1:co3\n");
}

static void test_seq(void **state)
{
    static const char *const hosts[] = {"n1", "n0", "n1", NULL};
    (void) state;
    test_job_t *t = job_new();
    add_nodes(t, 2, T_2X4X2, 8);
    add_app(t, 0, "seq", NULL, "core");
    t->apps[0].policy.seq_hosts = hosts;
    assert_map(t, "0 n1 0 0-1 pk0:co0\n"
                  "1 n0 0 0-1 pk0:co0\n"
                  "2 n1 1 2-3 pk0:co1\n");
    /* no list: every node once */
    t = job_new();
    add_nodes(t, 3, T_2X2X1, 4);
    add_app(t, 0, "seq", NULL, "core");
    assert_map(t, "0 n0 0 0 pk0:co0\n"
                  "1 n1 0 0 pk0:co0\n"
                  "2 n2 0 0 pk0:co0\n");
}

static void test_seq_errors(void **state)
{
    static const char *const unknown[] = {"n0", "n7", NULL};
    static const char *const twice[] = {"n0", "n0", NULL};
    (void) state;
    test_job_t *t = job_new();
    add_nodes(t, 2, T_2X4X2, 8);
    add_app(t, 0, "seq", NULL, NULL);
    t->apps[0].policy.seq_hosts = unknown;
    assert_map_error(t, (const char *const[]){"lists host \"n7\" (entry 2 of the list), which is "
                                              "not one of",
                                              NULL});
    t = job_new();
    add_nodes(t, 2, T_2X4X2, 8);
    add_app(t, 3, "seq", NULL, NULL);
    assert_map_error(t, (const char *const[]){"3 processes requested but --map-by seq has only 2 "
                                              "hosts",
                                              NULL});
    t = job_new();
    add_nodes(t, 2, T_2X4X2, 1);
    add_app(t, 0, "seq", NULL, NULL);
    t->apps[0].policy.seq_hosts = twice;
    assert_map_error(t, (const char *const[]){"--map-by seq puts 2 processes on node n0, which "
                                              "has 1 slots",
                                              NULL});
}

/* ------------------------------------------------------------------------------------------ */
/* determinism, explain, display, streaming, selection */

static test_job_t *mixed_job(void)
{
    test_job_t *t = job_new();
    for (uint32_t n = 0; n < 12; ++n) {
        add_node(t, 0 == n % 3 ? T_2X4X2 : (1 == n % 3 ? T_1X8X1 : T_2X2X1), 3 + n % 5, 0);
    }
    add_app(t, 20, "node", NULL, "core");
    add_app(t, 7, "package:PE=2,OVERSUBSCRIBE", "core", NULL);
    add_app(t, 0, "ppr:1:node:OVERSUBSCRIBE", NULL, "hwthread");
    return t;
}

static void test_determinism(void **state)
{
    (void) state;
    test_job_t *a = mixed_job();
    test_job_t *b = mixed_job();
    char *first = map_text(a, NULL);
    char *again = map_text(a, NULL);
    char *other = map_text(b, NULL); /* separately loaded topologies */
    assert_non_null(first);
    assert_true(strlen(first) > 100);
    assert_string_equal(first, again);
    assert_string_equal(first, other);
    free(first);
    free(again);
    free(other);
    job_free(a);
    job_free(b);
}

static void test_explain(void **state)
{
    (void) state;
    test_job_t *t = job_new();
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    assert_non_null(out);
    add_nodes(t, 2, T_2X4X2, 3);
    add_app(t, 4, "core", NULL, NULL);
    t->job.explain = true;
    t->job.explain_file = out;
    char *map = map_text(t, NULL);
    fclose(out);
    assert_non_null(map);
    assert_contains(text, "[rmaps] app 0: 4 processes, policy after defaults: --map-by core "
                          "--rank-by core --bind-to core");
    assert_contains(text, "component ppr does not do --map-by core");
    assert_contains(text, "component round_robin maps it");
    assert_contains(text, "node n0: 3 slots (0 used by earlier apps), max_slots none, 2 "
                          "packages, 8 cores, 16 hwthreads: room for 3 processes -> gets 3");
    assert_contains(text, "node n1: 3 slots");
    assert_contains(text, "ranks 0-2 -> node n0");
    assert_contains(text, "rank 3 -> node n1");
    assert_contains(text, "job: 4 processes mapped");
    free(text);
    free(map);
    job_free(t);
}

static void test_display_and_bindings(void **state)
{
    (void) state;
    test_job_t *t = job_new();
    orte_rmaps_map_t *map = NULL;
    char *text = NULL;
    size_t size = 0;
    char line[256];
    add_nodes(t, 2, T_2X4X2, 1);
    add_app(t, 2, "node", NULL, NULL);
    add_app(t, 1, "core:OVERSUBSCRIBE", NULL, "none");
    assert_int_equal(HERD_SUCCESS, orte_rmaps_base_map_collect(&t->job, &map));
    FILE *out = open_memstream(&text, &size);
    orte_rmaps_display_map(out, &t->job, map);
    fclose(out);
    assert_contains(text, "=== job map: 3 processes on 2 nodes ===");
    assert_contains(text, "node n0: 1 slots, 2 processes");
    assert_contains(text, "rank 0      app 0   local 0     cpus 0-7          pk0");
    assert_contains(text, "rank 2      app 1   local 1     cpus (unbound)    node");
    orte_rmaps_binding_line("n1", &map->procs[1], line, sizeof(line));
    assert_string_equal("[n1] rank 1 (app 0, local rank 0) bound to cpus 0-7 (pk0)", line);
    orte_rmaps_binding_line("n0", &map->procs[2], line, sizeof(line));
    assert_string_equal("[n0] rank 2 (app 1, local rank 1) not bound (cpus 0-15)", line);
    free(text);
    orte_rmaps_map_free(map);
    job_free(t);
}

static int stop_at_three(const orte_rmaps_proc_t *proc, void *cbdata)
{
    uint32_t *seen = cbdata;
    (*seen)++;
    return 2 == proc->rank ? HERD_ERR_UNREACH : HERD_SUCCESS;
}

static void test_emit_error_stops(void **state)
{
    (void) state;
    test_job_t *t = job_new();
    uint32_t seen = 0;
    uint32_t num = 99;
    add_nodes(t, 1, T_2X4X2, 8);
    add_app(t, 8, "core", NULL, NULL);
    assert_int_equal(HERD_ERR_UNREACH,
                     orte_rmaps_base_map_job(&t->job, stop_at_three, &seen, &num));
    assert_int_equal(3, seen);
    assert_int_equal(99, num);
    job_free(t);
}

/* ------------------------------------------------------------------------------------------ */
/* the planned callback: what a session daemon sizes its job database and local size from */

typedef struct {
    uint32_t num_nodes;
    uint32_t calls; /* of planned */
    uint32_t total; /* what planned said */
    uint32_t per_node[MAX_NODES];
    uint32_t emitted; /* by emit */
    uint32_t emitted_per_node[MAX_NODES];
    uint32_t emits_before_planned;
    int planned_rc; /* what planned returns */
} planned_check_t;

static int planned_record(uint32_t num_procs, const uint32_t *procs_per_node, void *cbdata)
{
    planned_check_t *c = cbdata;
    c->calls++;
    c->total = num_procs;
    memcpy(c->per_node, procs_per_node, c->num_nodes * sizeof(*procs_per_node));
    return c->planned_rc;
}

static int planned_emit(const orte_rmaps_proc_t *proc, void *cbdata)
{
    planned_check_t *c = cbdata;
    if (0 == c->calls) {
        c->emits_before_planned++;
    }
    c->emitted++;
    c->emitted_per_node[proc->node]++;
    return HERD_SUCCESS;
}

/* planned is called once, before the first process, and announces exactly what is emitted. */
static void assert_planned_matches(test_job_t *t, uint32_t expected_total)
{
    planned_check_t c = {.num_nodes = t->job.num_nodes};
    uint32_t num = 0;
    t->job.planned = planned_record;
    assert_int_equal(HERD_SUCCESS, orte_rmaps_base_map_job(&t->job, planned_emit, &c, &num));
    assert_int_equal(1, c.calls);
    assert_int_equal(0, c.emits_before_planned);
    assert_int_equal(expected_total, c.total);
    assert_int_equal(expected_total, c.emitted);
    assert_int_equal(expected_total, num);
    for (uint32_t n = 0; n < t->job.num_nodes; ++n) {
        if (c.per_node[n] != c.emitted_per_node[n]) {
            fail_msg("node n%u: planned %u processes, %u emitted", n, c.per_node[n],
                     c.emitted_per_node[n]);
        }
    }
    job_free(t);
}

static void test_planned_counts(void **state)
{
    static const char *const hosts[] = {"n2", "n0", "n2", "n2", NULL};
    (void) state;
    test_job_t *t = job_new();
    add_nodes(t, 2, T_2X4X2, 3);
    add_app(t, 5, "core", NULL, NULL);
    assert_planned_matches(t, 5);

    t = job_new();
    add_nodes(t, 3, T_2X2X1, 4);
    add_app(t, 7, "node", NULL, "core");
    assert_planned_matches(t, 7);

    t = job_new();
    add_node(t, T_2X4X2, 8, 0);
    add_node(t, T_2X2X1, 4, 0);
    add_node(t, T_2X4X2, 8, 0);
    add_app(t, 0, "ppr:2:package", NULL, NULL);
    assert_planned_matches(t, 12);

    t = job_new();
    add_nodes(t, 3, T_2X4X2, 8);
    add_app(t, 0, "seq", NULL, NULL);
    t->apps[0].policy.seq_hosts = hosts;
    assert_planned_matches(t, 4);

    /* MPMD over mixed nodes: the counts add up over apps */
    t = mixed_job();
    planned_check_t c = {.num_nodes = t->job.num_nodes};
    uint32_t num = 0;
    assert_int_equal(HERD_SUCCESS, orte_rmaps_base_map_job(&t->job, planned_emit, &c, &num));
    assert_planned_matches(t, num);

    /* a node that gets nothing is announced with 0 */
    t = job_new();
    add_nodes(t, 4, T_2X4X2, 8);
    add_app(t, 3, "slot", NULL, NULL);
    assert_planned_matches(t, 3);
}

/* planned's error stops mapping before any process and is what map_job returns; an impossible
 * map never reaches planned. */
static void test_planned_error_stops(void **state)
{
    (void) state;
    test_job_t *t = job_new();
    planned_check_t c = {.num_nodes = 2, .planned_rc = HERD_ERR_OUT_OF_RESOURCE};
    uint32_t num = 99;
    add_nodes(t, 2, T_2X4X2, 8);
    add_app(t, 4, "core", NULL, NULL);
    t->job.planned = planned_record;
    assert_int_equal(HERD_ERR_OUT_OF_RESOURCE,
                     orte_rmaps_base_map_job(&t->job, planned_emit, &c, &num));
    assert_int_equal(1, c.calls);
    assert_int_equal(4, c.total);
    assert_int_equal(0, c.emitted);
    assert_int_equal(99, num);
    /* a status of its own choosing too (herdrun plans with HERD_ERR_TAKE_NEXT to stop early) */
    memset(&c, 0, sizeof(c));
    c.num_nodes = 2;
    c.planned_rc = HERD_ERR_TAKE_NEXT;
    assert_int_equal(HERD_ERR_TAKE_NEXT, orte_rmaps_base_map_job(&t->job, planned_emit, &c, &num));
    assert_int_equal(0, c.emitted);
    assert_int_equal(99, num);
    job_free(t);

    t = job_new();
    memset(&c, 0, sizeof(c));
    c.num_nodes = 1;
    herd_test_capture_t capture;
    add_nodes(t, 1, T_2X4X2, 2);
    add_app(t, 4, "core", NULL, NULL);
    t->job.planned = planned_record;
    herd_test_capture_start(&capture);
    int rc = orte_rmaps_base_map_job(&t->job, planned_emit, &c, &num);
    free(herd_test_capture_stop(&capture));
    assert_int_equal(HERD_ERR_SILENT, rc);
    assert_int_equal(0, c.calls);
    assert_int_equal(0, c.emitted);
    job_free(t);
}

static void test_inventory_topology(void **state)
{
    (void) state;
    orte_inventory_t *inv = NULL;
    orte_inventory_t empty = {0};
    hwloc_topology_t topo = NULL;
    assert_int_equal(HERD_SUCCESS, orte_inventory_collect("n0", T_2X2X1, NULL, &inv));
    assert_int_equal(HERD_SUCCESS, orte_rmaps_topology_load(inv, &topo));
    assert_int_equal(4, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE));
    hwloc_topology_destroy(topo);
    topo = NULL;
    assert_int_equal(HERD_ERR_NOT_FOUND, orte_rmaps_topology_load(&empty, &topo));
    assert_null(topo);
    empty.synthetic = (char *) "pack:nonsense";
    assert_int_equal(HERD_ERR_BAD_PARAM, orte_rmaps_topology_load(&empty, &topo));
    assert_null(topo);
    /* a bad description is not remembered as good: refused again */
    assert_int_equal(HERD_ERR_BAD_PARAM, orte_rmaps_topology_load(&empty, &topo));
    assert_null(topo);
    orte_inventory_free(inv);
}

/* Loading a description again gives a copy of the first load: the same topology, the caller's
 * own (destroying one leaves the next intact), for more descriptions than the cache holds. */
static void test_topology_reloaded(void **state)
{
    (void) state;
    const char *specs[] = {
        T_2X2X1, T_2X4X2, "pack:1 core:3 pu:1", "pack:3 core:1 pu:2", "pack:2 core:5 pu:1",
        T_2X2X1};
    const int cores[] = {4, 8, 3, 3, 10, 4};
    for (int round = 0; round < 3; ++round) {
        for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); ++i) {
            orte_inventory_t inv = {0};
            hwloc_topology_t a = NULL, b = NULL;
            inv.synthetic = (char *) specs[i];
            assert_int_equal(HERD_SUCCESS, orte_rmaps_topology_load(&inv, &a));
            assert_int_equal(HERD_SUCCESS, orte_rmaps_topology_load(&inv, &b));
            assert_true(a != b);
            assert_int_equal(cores[i], hwloc_get_nbobjs_by_type(a, HWLOC_OBJ_CORE));
            hwloc_topology_destroy(a);
            assert_int_equal(cores[i], hwloc_get_nbobjs_by_type(b, HWLOC_OBJ_CORE));
            hwloc_topology_destroy(b);
        }
    }
    /* the same machine as XML */
    orte_inventory_t *inv = NULL;
    hwloc_topology_t a = NULL, b = NULL;
    assert_int_equal(HERD_SUCCESS, orte_inventory_collect("n0", T_2X4X2, NULL, &inv));
    assert_non_null(orte_inventory_xml(inv)); /* a simulated node's, made when asked */
    free(inv->synthetic); /* load from the XML */
    inv->synthetic = NULL;
    assert_int_equal(HERD_SUCCESS, orte_rmaps_topology_load(inv, &a));
    assert_int_equal(HERD_SUCCESS, orte_rmaps_topology_load(inv, &b));
    assert_int_equal(16, hwloc_get_nbobjs_by_type(a, HWLOC_OBJ_PU));
    assert_int_equal(16, hwloc_get_nbobjs_by_type(b, HWLOC_OBJ_PU));
    hwloc_topology_destroy(a);
    hwloc_topology_destroy(b);
    orte_inventory_free(inv);
}

static void test_selection(void **state)
{
    (void) state;
    test_job_t *t = job_new();
    orte_rmaps_base_close();
    setenv("HERD_MCA_rmaps", "^ppr", 1);
    assert_int_equal(HERD_SUCCESS, orte_rmaps_base_open());
    add_nodes(t, 1, T_2X4X2, 8);
    add_app(t, 0, "ppr:1:core", NULL, NULL);
    assert_map_error(t, (const char *const[]){"App 0: no available rmaps component maps by ppr",
                                              "HERD_MCA_rmaps", NULL});
    orte_rmaps_base_close();
    unsetenv("HERD_MCA_rmaps");
    assert_int_equal(HERD_SUCCESS, orte_rmaps_base_open());
    /* ppr and seq take only their own policy: a DSO build loads them when an app first asks
     * for a policy round_robin does not do (a static build has them all from the start) */
    assert_int_equal(3, orte_rmaps_base_framework.num_selected +
                            orte_rmaps_base_framework.num_deferred);
    t = job_new();
    add_nodes(t, 1, T_2X4X2, 8);
    add_app(t, 2, "ppr:1:package", NULL, NULL);
    char *text = map_text(t, NULL);
    assert_non_null(text);
    free(text);
    job_free(t);
    assert_int_equal(0, orte_rmaps_base_framework.num_deferred);
    assert_int_equal(3, orte_rmaps_base_framework.num_selected);
    /* tried by priority: ppr, seq, round_robin */
    assert_string_equal("ppr", orte_rmaps_base_framework.selected[0]->component->name);
    assert_string_equal("seq", orte_rmaps_base_framework.selected[1]->component->name);
    assert_string_equal("round_robin", orte_rmaps_base_framework.selected[2]->component->name);
}

/* ------------------------------------------------------------------------------------------ */
/* a million ranks: checks the stream, prints the time (a benchmark figure, not an assertion) */

typedef struct {
    uint32_t count;
    uint32_t per_node[MAX_NODES];
    uint64_t checksum;
} scale_t;

static int scale_emit(const orte_rmaps_proc_t *proc, void *cbdata)
{
    scale_t *s = cbdata;
    if (proc->rank != s->count || proc->local_rank != s->per_node[proc->node]) {
        return HERD_ERROR;
    }
    s->count++;
    s->per_node[proc->node]++;
    s->checksum = s->checksum * 31 + (unsigned char) proc->cpuset[0] + proc->locality[2];
    return HERD_SUCCESS;
}

static void run_scale(const char *map_by, const char *rank_by, const char *bind_to)
{
    test_job_t *t = job_new();
    scale_t s = {0};
    uint32_t num = 0;
    struct timespec start, end;

    add_nodes(t, 256, "pack:2 core:16 pu:2", 32);
    add_app(t, 1048576, map_by, rank_by, bind_to);
    clock_gettime(CLOCK_MONOTONIC, &start);
    assert_int_equal(HERD_SUCCESS, orte_rmaps_base_map_job(&t->job, scale_emit, &s, &num));
    clock_gettime(CLOCK_MONOTONIC, &end);
    assert_int_equal(1048576, num);
    assert_int_equal(1048576, s.count);
    for (uint32_t n = 0; n < 256; ++n) {
        assert_int_equal(4096, s.per_node[n]);
    }
    printf("[ scale    ] 1048576 ranks on 256 nodes, --map-by %s --rank-by %s --bind-to %s: "
           "%.3f s\n",
           map_by, NULL != rank_by ? rank_by : "default", NULL != bind_to ? bind_to : "default",
           (double) (end.tv_sec - start.tv_sec) + (double) (end.tv_nsec - start.tv_nsec) / 1e9);
    job_free(t);
}

static void test_scale(void **state)
{
    (void) state;
    alarm(300); /* a hang guard for valgrind runs, not a timing assertion */
    run_scale("package:OVERSUBSCRIBE", NULL, NULL);
    run_scale("core:OVERSUBSCRIBE", "node", "core");
    run_scale("hwthread:PE=2,OVERSUBSCRIBE", NULL, NULL);
    alarm(0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_good),
        cmocka_unit_test(test_parse_bad),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_map_core),
        cmocka_unit_test(test_map_default_small_and_large),
        cmocka_unit_test(test_map_package_bind_core),
        cmocka_unit_test(test_map_core_rank_package_two_packages),
        cmocka_unit_test(test_map_node),
        cmocka_unit_test(test_map_slot_heterogeneous),
        cmocka_unit_test(test_binding_text_per_topology),
        cmocka_unit_test(test_map_hwthread),
        cmocka_unit_test(test_map_pe),
        cmocka_unit_test(test_map_l3cache),
        cmocka_unit_test(test_map_span),
        cmocka_unit_test(test_map_np_zero),
        cmocka_unit_test(test_map_bind_none),
        cmocka_unit_test(test_mpmd),
        cmocka_unit_test(test_mpmd_app_numbers),
        cmocka_unit_test(test_oversubscribe),
        cmocka_unit_test(test_error_not_enough_slots),
        cmocka_unit_test(test_error_max_slots),
        cmocka_unit_test(test_error_pe),
        cmocka_unit_test(test_error_missing_objects),
        cmocka_unit_test(test_ppr),
        cmocka_unit_test(test_ppr_errors),
        cmocka_unit_test(test_seq),
        cmocka_unit_test(test_seq_errors),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_explain),
        cmocka_unit_test(test_display_and_bindings),
        cmocka_unit_test(test_emit_error_stops),
        cmocka_unit_test(test_planned_counts),
        cmocka_unit_test(test_planned_error_stops),
        cmocka_unit_test(test_inventory_topology),
        cmocka_unit_test(test_topology_reloaded),
        cmocka_unit_test(test_selection),
        cmocka_unit_test(test_scale),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
