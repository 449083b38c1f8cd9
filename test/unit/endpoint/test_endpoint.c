/* SPDX-License-Identifier: BSD-3-Clause */
/* endpoint: the compile-time tags (numbering, uniqueness, lookup by name), the proc table (lazy
 * creation, find without creating, memory, freeing), sizeof(ompi_proc_t) in this configuration,
 * run-time slots (registration, after procs exist, limits, get/set), and selection (default,
 * include, exclude, priorities, a stub DSO that outranks the real components, one built for
 * another interface version).
 * Built twice: test_endpoint with this build's tags, test_endpoint_fixture
 * (ENDPOINT_TEST_FIXTURE) with the proc table and the framework compiled against the fixture
 * components' three tags. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ompi-shim/mca/endpoint/endpoint.h"
#include "ompi-shim/proc/proc.h"
#include "opal/mca/mca.h"
#include "support/capture.h"

#define STUB_DIR HERD_TEST_BUILDDIR "/endpoint/stubs"

/* HERD_MCA_component_path as test/uninstalled-env.sh set it. */
static char *build_component_path;
static herd_test_capture_t stderr_capture;

/* ------------------------------------------------------------------------------------------ */
/* helpers */

static int setup(void **state)
{
    setenv("HERD_MCA_component_path", build_component_path, 1);
    unsetenv("HERD_MCA_endpoint");
    unsetenv("HERD_MCA_endpoint_base_verbose");
    unsetenv("HERD_MCA_endpoint_static_priority");
    unsetenv("HERD_MCA_endpoint_dynamic_priority");
    unsetenv("HERD_MCA_endpoint_dynamic_max_slots");
    unsetenv("HERD_MCA_endpoint_stub_priority");
    setenv("HERD_MCA_mca_base_component_show_load_errors", "1", 1);
    return 0;
}

static int teardown(void **state)
{
    ompi_proc_finalize();
    ompi_endpoint_base_close();
    assert_false(ompi_endpoint_base_framework.opened);
    return 0;
}

/* Opens the framework with this selection (NULL: none) and returns the selected module's name;
 * fails the test when nothing is selected. */
static const char *open_with(const char *selection)
{
    const ompi_endpoint_module_t *module;

    if (NULL != selection) {
        setenv("HERD_MCA_endpoint", selection, 1);
    }
    assert_int_equal(ompi_endpoint_base_open(), HERD_SUCCESS);
    module = ompi_endpoint_base_module();
    assert_non_null(module);
    assert_non_null(module->register_slot);
    assert_non_null(module->get);
    assert_non_null(module->set);
    return module->name;
}

static void close_and_reset(void)
{
    ompi_endpoint_base_close();
    unsetenv("HERD_MCA_endpoint");
}

static bool has_component(const char *name)
{
    const opal_mca_framework_t *fw = &ompi_endpoint_base_framework;

    for (size_t i = 0; i < fw->num_components; i++) {
        if (0 == strcmp(fw->components[i].component->name, name)) {
            return true;
        }
    }
    return false;
}

static void use_stub_components(void)
{
    char path[4096];

    snprintf(path, sizeof(path), "%s:%s", STUB_DIR, build_component_path);
    setenv("HERD_MCA_component_path", path, 1);
}

static ompi_proc_t *lookup(uint32_t rank)
{
    ompi_proc_t *proc = NULL;

    assert_int_equal(ompi_proc_lookup(rank, &proc), HERD_SUCCESS);
    assert_non_null(proc);
    return proc;
}

/* ------------------------------------------------------------------------------------------ */
/* compile-time tags */

/* The tags this program was built with: enum value, name, declaring component. */
static const struct {
    int value;
    const char *name;
    const char *owner;
} built_tags[] = {
#define TEST_TAG(tag_, name_, owner_) {HERD_ENDPOINT_TAG_##tag_, name_, owner_},
    HERD_ENDPOINT_TAG_FOREACH(TEST_TAG)
#undef TEST_TAG
    {-1, NULL, NULL},
};
#define NUM_BUILT_TAGS (sizeof(built_tags) / sizeof(built_tags[0]) - 1)

static void test_tags_numbered_in_order(void **state)
{
    assert_int_equal(NUM_BUILT_TAGS, HERD_ENDPOINT_STATIC_COUNT);
    assert_int_equal(HERD_ENDPOINT_NUM_STATIC_TAGS, HERD_ENDPOINT_STATIC_COUNT);
    for (size_t i = 0; NULL != built_tags[i].name; ++i) {
        assert_int_equal(built_tags[i].value, (int) i); /* 0..n-1, no gap */
    }
    assert_int_equal(HERD_ENDPOINT_SLOT_COUNT,
                     HERD_ENDPOINT_STATIC_COUNT + HERD_ENDPOINT_DYNAMIC_SLOTS);
#if HERD_ENDPOINT_DYNAMIC_SLOTS
    /* the run-time table hangs off the last slot, after every tag */
    assert_int_equal(HERD_ENDPOINT_DYNAMIC_INDEX, HERD_ENDPOINT_STATIC_COUNT);
    assert_int_equal(HERD_ENDPOINT_DYNAMIC_INDEX, HERD_ENDPOINT_SLOT_COUNT - 1);
#else
    assert_int_equal(HERD_ENDPOINT_SLOT_COUNT, HERD_ENDPOINT_STATIC_COUNT);
#endif
#ifdef ENDPOINT_TEST_FIXTURE
    /* the fixture components, in the order configure found them; nobuild's tag is absent */
    assert_int_equal(NUM_BUILT_TAGS, 3);
    assert_int_equal(HERD_ENDPOINT_TAG_ALPHA, 0);
    assert_int_equal(HERD_ENDPOINT_TAG_BETA, 1);
    assert_int_equal(HERD_ENDPOINT_TAG_BETA_RDMA, 2);
#endif
}

static void test_tags_unique(void **state)
{
    for (size_t i = 0; NULL != built_tags[i].name; ++i) {
        for (size_t j = i + 1; NULL != built_tags[j].name; ++j) {
            /* the generator compares without case, so lookups may too */
            assert_true(0 != strcasecmp(built_tags[i].name, built_tags[j].name));
            assert_int_not_equal(built_tags[i].value, built_tags[j].value);
        }
    }
}

static void test_slot_for_tag(void **state)
{
    int slot = -7;

    for (size_t i = 0; NULL != built_tags[i].name; ++i) {
        slot = -7;
        assert_int_equal(ompi_endpoint_base_slot_for_tag(built_tags[i].name, &slot), HERD_SUCCESS);
        assert_int_equal(slot, built_tags[i].value);
        assert_string_equal(ompi_endpoint_base_tag_name(slot), built_tags[i].name);
        assert_string_equal(ompi_endpoint_base_tag_owner(slot), built_tags[i].owner);
    }
    slot = -7;
    assert_int_equal(ompi_endpoint_base_slot_for_tag("no_such_tag", &slot), HERD_ERR_NOT_FOUND);
    assert_int_equal(ompi_endpoint_base_slot_for_tag(NULL, &slot), HERD_ERR_NOT_FOUND);
    assert_int_equal(slot, -7); /* output untouched on failure */
    assert_null(ompi_endpoint_base_tag_name(HERD_ENDPOINT_STATIC_COUNT));
    assert_null(ompi_endpoint_base_tag_name(-1));
    assert_null(ompi_endpoint_base_tag_owner(HERD_ENDPOINT_STATIC_COUNT));
#ifdef ENDPOINT_TEST_FIXTURE
    assert_int_equal(ompi_endpoint_base_slot_for_tag("beta_rdma", &slot), HERD_SUCCESS);
    assert_int_equal(slot, HERD_ENDPOINT_TAG_BETA_RDMA);
    assert_int_equal(ompi_endpoint_base_slot_for_tag("BETA", &slot), HERD_SUCCESS);
    assert_int_equal(slot, HERD_ENDPOINT_TAG_BETA);
    assert_string_equal(ompi_endpoint_base_tag_owner(HERD_ENDPOINT_TAG_BETA_RDMA), "xport-beta");
    assert_string_equal(ompi_endpoint_base_tag_owner(HERD_ENDPOINT_TAG_ALPHA), "xport-alpha");
    assert_int_equal(ompi_endpoint_base_slot_for_tag("nobuild", &slot), HERD_ERR_NOT_FOUND);
    assert_int_equal(ompi_endpoint_base_slot_for_tag("gamma", &slot), HERD_ERR_NOT_FOUND);
#endif
}

/* ------------------------------------------------------------------------------------------ */
/* the proc structure */

/* sizeof(ompi_proc_t) is the slots plus the rank and the btl choice padded to pointer alignment,
 * or those two alone (8 bytes) without any slot (docs/endpoint.md). A field added to the struct
 * fails this test: update the formula and the doc's table together. */
static void test_proc_size(void **state)
{
    const size_t align = _Alignof(void *);
    size_t rank_padded = (sizeof(uint32_t) + align - 1) / align * align;
    size_t expected = (0 == HERD_ENDPOINT_SLOT_COUNT)
                          ? 2 * sizeof(uint32_t)
                          : HERD_ENDPOINT_SLOT_COUNT * sizeof(void *) + rank_padded;

    assert_int_equal(sizeof(ompi_proc_t), expected);
    if (8 == sizeof(void *)) {
        /* the figures docs/endpoint.md gives for 64-bit Linux */
#ifdef ENDPOINT_TEST_FIXTURE
        assert_int_equal(sizeof(ompi_proc_t), HERD_ENDPOINT_DYNAMIC_SLOTS ? 40 : 32);
#else
        if (0 == HERD_ENDPOINT_STATIC_COUNT) {
            assert_int_equal(sizeof(ompi_proc_t), HERD_ENDPOINT_DYNAMIC_SLOTS ? 16 : 8);
        }
#endif
    }
#if OMPI_PROC_HAVE_ENDPOINTS
    /* slot 0 sits at the start: a transport's lookup is one load at a constant offset */
    assert_int_equal(offsetof(ompi_proc_t, endpoint), 0);
#endif
}

#if HERD_ENDPOINT_NUM_STATIC_TAGS > 0
static void test_static_slots_plain_index(void **state)
{
    int a = 1, b = 2;
    ompi_proc_t *proc;

    assert_int_equal(ompi_proc_init(4), HERD_SUCCESS);
    proc = lookup(3);
    for (int tag = 0; tag < HERD_ENDPOINT_STATIC_COUNT; ++tag) {
        assert_null(ompi_endpoint_static_get(proc, tag));
    }
    ompi_endpoint_static_set(proc, 0, &a);
    proc->endpoint[HERD_ENDPOINT_STATIC_COUNT - 1] = &b;
    assert_ptr_equal(proc->endpoint[0], &a);
    assert_ptr_equal(ompi_endpoint_static_get(proc, HERD_ENDPOINT_STATIC_COUNT - 1), &b);
#ifdef ENDPOINT_TEST_FIXTURE
    assert_ptr_equal(ompi_endpoint_static_get(proc, HERD_ENDPOINT_TAG_ALPHA), &a);
    assert_null(ompi_endpoint_static_get(proc, HERD_ENDPOINT_TAG_BETA));
    assert_ptr_equal(proc->endpoint[HERD_ENDPOINT_TAG_BETA_RDMA], &b);
#endif
    /* the same proc again, with its endpoints */
    assert_ptr_equal(lookup(3), proc);
    assert_ptr_equal(ompi_proc_find(3)->endpoint[0], &a);
}
#endif

/* ------------------------------------------------------------------------------------------ */
/* the proc table */

static void test_proc_table_lazy(void **state)
{
    ompi_proc_stats_t stats;
    ompi_proc_t *proc = (ompi_proc_t *) 0x1;

    /* no table yet */
    assert_int_equal(ompi_proc_lookup(0, &proc), HERD_ERR_NOT_AVAILABLE);
    assert_ptr_equal(proc, (ompi_proc_t *) 0x1);
    assert_null(ompi_proc_find(0));
    assert_int_equal(ompi_proc_init(0), HERD_ERR_BAD_PARAM);

    assert_int_equal(ompi_proc_init(1000000), HERD_SUCCESS);
    assert_int_equal(ompi_proc_init(8), HERD_ERR_BAD_PARAM); /* one table */
    ompi_proc_stats(&stats);
    assert_int_equal(stats.job_size, 1000000);
    assert_int_equal(stats.num_procs, 0);
    assert_int_equal(stats.table_bytes, 0); /* nothing before the first lookup */

    /* find never creates */
    assert_null(ompi_proc_find(17));
    assert_null(ompi_proc_find(17));
    ompi_proc_stats(&stats);
    assert_int_equal(stats.num_procs, 0);

    ompi_proc_t *first = lookup(17);
    assert_int_equal(first->rank, 17);
#if OMPI_PROC_HAVE_ENDPOINTS
    for (int s = 0; s < HERD_ENDPOINT_SLOT_COUNT; ++s) {
        assert_null(first->endpoint[s]);
    }
#endif
    assert_ptr_equal(lookup(17), first);
    assert_ptr_equal(ompi_proc_find(17), first);
    assert_null(ompi_proc_find(16));
    assert_null(ompi_proc_find(18));

    ompi_proc_t *last = lookup(999999);
    assert_int_equal(last->rank, 999999);
    assert_ptr_not_equal(last, first);

    /* outside the job */
    proc = (ompi_proc_t *) 0x1;
    assert_int_equal(ompi_proc_lookup(1000000, &proc), HERD_ERR_BAD_PARAM);
    assert_int_equal(ompi_proc_lookup(UINT32_MAX, &proc), HERD_ERR_BAD_PARAM);
    assert_ptr_equal(proc, (ompi_proc_t *) 0x1);
    assert_null(ompi_proc_find(1000000));

    /* 2 peers of a million ranks: 2 procs, 2 blocks and the block index, not a million of
     * anything */
    ompi_proc_stats(&stats);
    assert_int_equal(stats.num_procs, 2);
    assert_int_equal(stats.num_blocks, 2);
    size_t index_entries = (1000000 + OMPI_PROC_BLOCK_SIZE - 1) / OMPI_PROC_BLOCK_SIZE;
    assert_int_equal(stats.table_bytes,
                     index_entries * sizeof(void *) + 2 * OMPI_PROC_BLOCK_SIZE * sizeof(void *));
    assert_int_equal(stats.proc_bytes, 2 * sizeof(ompi_proc_t));
    /* a third peer in an existing block costs no block */
    lookup(18);
    ompi_proc_stats(&stats);
    assert_int_equal(stats.num_procs, 3);
    assert_int_equal(stats.num_blocks, 2);

    ompi_proc_finalize();
    ompi_proc_stats(&stats);
    assert_int_equal(stats.num_procs, 0);
    assert_int_equal(stats.table_bytes, 0);
    assert_null(ompi_proc_find(17));
    assert_int_equal(ompi_proc_lookup(17, &proc), HERD_ERR_NOT_AVAILABLE);
    ompi_proc_finalize(); /* again: nothing */
    /* a new table starts empty */
    assert_int_equal(ompi_proc_init(3), HERD_SUCCESS);
    assert_null(ompi_proc_find(2));
}

static void collect_rank(ompi_proc_t *proc, void *data)
{
    uint32_t **next = data;
    *(*next)++ = proc->rank;
}

static void test_proc_foreach_in_rank_order(void **state)
{
    static const uint32_t ranks[] = {700, 3, 256, 255, 0, 511};
    uint32_t seen[8] = {0};
    uint32_t *next = seen;

    assert_int_equal(ompi_proc_init(1024), HERD_SUCCESS);
    ompi_proc_foreach(collect_rank, &next); /* none yet */
    assert_ptr_equal(next, seen);
    for (size_t i = 0; i < sizeof(ranks) / sizeof(ranks[0]); ++i) {
        lookup(ranks[i]);
    }
    ompi_proc_foreach(collect_rank, &next);
    assert_int_equal(next - seen, 6);
    assert_int_equal(seen[0], 0);
    assert_int_equal(seen[1], 3);
    assert_int_equal(seen[2], 255);
    assert_int_equal(seen[3], 256);
    assert_int_equal(seen[4], 511);
    assert_int_equal(seen[5], 700);
}

/* ------------------------------------------------------------------------------------------ */
/* selection */

static void test_default_selection(void **state)
{
    const opal_mca_framework_t *fw = &ompi_endpoint_base_framework;

    assert_null(ompi_endpoint_base_module());
    const char *name = open_with(NULL);
    assert_true(has_component("static"));
#if HERD_ENDPOINT_DYNAMIC_SLOTS
    assert_true(has_component("dynamic"));
    assert_string_equal(name, "dynamic");
    assert_int_equal(fw->selected[0]->priority, 20);
#else
    /* configured out: not built, so not found */
    assert_false(has_component("dynamic"));
    assert_string_equal(name, "static");
    assert_int_equal(fw->selected[0]->priority, 10);
#endif
    assert_int_equal(fw->num_selected, 1);
    /* a second open keeps the selection, and one close undoes both */
    const ompi_endpoint_module_t *module = ompi_endpoint_base_module();
    assert_int_equal(ompi_endpoint_base_open(), HERD_SUCCESS);
    assert_ptr_equal(ompi_endpoint_base_module(), module);
    ompi_endpoint_base_close();
    assert_false(fw->opened);
    assert_null(ompi_endpoint_base_module());
}

static void test_include_and_exclude(void **state)
{
    assert_string_equal(open_with("static"), "static");
    close_and_reset();
#if HERD_ENDPOINT_DYNAMIC_SLOTS
    assert_string_equal(open_with("^dynamic"), "static");
    close_and_reset();
    assert_string_equal(open_with("^static"), "dynamic");
    close_and_reset();
    assert_string_equal(open_with("static,dynamic"), "dynamic");
    close_and_reset();
    /* nothing left */
    setenv("HERD_MCA_endpoint", "^static,dynamic", 1);
    assert_int_equal(ompi_endpoint_base_open(), HERD_ERR_NOT_FOUND);
    assert_null(ompi_endpoint_base_module());
#else
    setenv("HERD_MCA_endpoint", "^static", 1);
    assert_int_equal(ompi_endpoint_base_open(), HERD_ERR_NOT_FOUND);
    assert_null(ompi_endpoint_base_module());
#endif
}

static void test_unknown_component(void **state)
{
    char *err;
    int rc;

    setenv("HERD_MCA_endpoint", "dynamc", 1);
    herd_test_capture_start(&stderr_capture);
    rc = ompi_endpoint_base_open();
    err = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(rc, HERD_ERR_BAD_PARAM);
    assert_null(ompi_endpoint_base_module());
    assert_contains(err, "\"dynamc\"");
#if HERD_ENDPOINT_DYNAMIC_SLOTS
    assert_contains(err, "dynamic, static");
#else
    assert_contains(err, "static");
#endif
    free(err);
}

static void test_priority_variables(void **state)
{
#if HERD_ENDPOINT_DYNAMIC_SLOTS
    setenv("HERD_MCA_endpoint_static_priority", "30", 1);
    assert_string_equal(open_with(NULL), "static");
    assert_int_equal(ompi_endpoint_base_framework.selected[0]->priority, 30);
    close_and_reset();
    /* a value set for one open is not the default of the next (the components stay loaded) */
    unsetenv("HERD_MCA_endpoint_static_priority");
    assert_string_equal(open_with(NULL), "dynamic");
    close_and_reset();
    setenv("HERD_MCA_endpoint_dynamic_priority", "5", 1);
    assert_string_equal(open_with(NULL), "static");
#else
    setenv("HERD_MCA_endpoint_static_priority", "30", 1);
    assert_string_equal(open_with(NULL), "static");
    assert_int_equal(ompi_endpoint_base_framework.selected[0]->priority, 30);
#endif
}

/* A DSO on the component path with a higher priority wins, and is the one asked. */
static void test_stub_outranks_and_is_asked(void **state)
{
    int slot = -1;
    char *err;

    use_stub_components();
    herd_test_capture_start(&stderr_capture);
    const char *name = open_with(NULL);
    err = herd_test_capture_stop(&stderr_capture);
    assert_string_equal(name, "stub");
    assert_int_equal(ompi_endpoint_base_framework.selected[0]->priority, 90);
    assert_int_equal(ompi_endpoint_base_register_slot("xport", &slot), HERD_SUCCESS);
    assert_int_equal(slot, 41); /* the stub's answer */
    /* the one built for interface version 7 is refused, with the reason */
    assert_false(has_component("badiface"));
    assert_contains(err, "herd_endpoint_badiface");
    assert_contains(err, "endpoint interface version 7");
    free(err);
    close_and_reset();

    setenv("HERD_MCA_mca_base_component_show_load_errors", "0", 1);
    assert_string_equal(open_with("^stub"), HERD_ENDPOINT_DYNAMIC_SLOTS ? "dynamic" : "static");
    close_and_reset();
    assert_string_equal(open_with("static,stub"), "stub");
    close_and_reset();
    setenv("HERD_MCA_endpoint_stub_priority", "1", 1);
    assert_string_equal(open_with("static,stub"), "static");
}

/* ------------------------------------------------------------------------------------------ */
/* run-time slots */

static void test_static_module_has_no_runtime_slots(void **state)
{
    int slot = -1;
    int value = 5;
    char *err;

    assert_int_equal(ompi_proc_init(2), HERD_SUCCESS);
    ompi_proc_t *proc = lookup(1);
    setenv("HERD_MCA_endpoint_base_verbose", "1", 1);
    assert_string_equal(open_with("static"), "static");
    herd_test_capture_start(&stderr_capture);
    int rc = ompi_endpoint_base_register_slot("xport", &slot);
    err = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(rc, HERD_ERR_NOT_SUPPORTED);
    assert_int_equal(slot, -1);
    /* said at verbose level 1 only: the asking component may do without */
    assert_contains(err, "\"xport\" asked for a run-time endpoint slot, but the endpoint "
                         "component static has compile-time slots only");
    free(err);
    assert_int_equal(ompi_endpoint_base_set(proc, 0, &value), HERD_ERR_NOT_SUPPORTED);
    assert_null(ompi_endpoint_base_get(proc, 0));
#if HERD_ENDPOINT_DYNAMIC_SLOTS
    assert_null(proc->endpoint[HERD_ENDPOINT_DYNAMIC_INDEX]); /* unused with static */
#endif
}

static void test_not_open(void **state)
{
    int slot = -1;
    int value = 5;

    assert_int_equal(ompi_proc_init(2), HERD_SUCCESS);
    ompi_proc_t *proc = lookup(0);
    assert_int_equal(ompi_endpoint_base_register_slot("xport", &slot), HERD_ERR_NOT_AVAILABLE);
    assert_int_equal(ompi_endpoint_base_set(proc, 0, &value), HERD_ERR_NOT_AVAILABLE);
    assert_null(ompi_endpoint_base_get(proc, 0));
    ompi_endpoint_base_proc_release(proc); /* nothing to do, no crash */
    assert_int_equal(slot, -1);
}

static void test_bad_slot_names(void **state)
{
    static const char *const bad[] = {"", "my-xport", "x port", "ünï"};
    char long_name[OMPI_ENDPOINT_MAX_NAME_LEN + 2];
    int slot = -1;
    char *err;

    memset(long_name, 'a', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = '\0';
    open_with(NULL);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        herd_test_capture_start(&stderr_capture);
        int rc = ompi_endpoint_base_register_slot(bad[i], &slot);
        err = herd_test_capture_stop(&stderr_capture);
        assert_int_equal(rc, HERD_ERR_BAD_PARAM);
        assert_contains(err, "is not a\nvalid slot name");
        free(err);
    }
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(ompi_endpoint_base_register_slot(long_name, &slot), HERD_ERR_BAD_PARAM);
    assert_int_equal(ompi_endpoint_base_register_slot(NULL, &slot), HERD_ERR_BAD_PARAM);
    err = herd_test_capture_stop(&stderr_capture);
    assert_contains(err, "(null)");
    free(err);
    assert_int_equal(slot, -1);
    /* the longest allowed name is fine */
    long_name[OMPI_ENDPOINT_MAX_NAME_LEN] = '\0';
    int rc = ompi_endpoint_base_register_slot(long_name, &slot);
    assert_int_equal(rc, HERD_ENDPOINT_DYNAMIC_SLOTS ? HERD_SUCCESS : HERD_ERR_NOT_SUPPORTED);
#ifdef ENDPOINT_TEST_FIXTURE
    /* a compile-time tag's name is refused, whatever its case, and the message says which */
    slot = -1;
    herd_test_capture_start(&stderr_capture);
    rc = ompi_endpoint_base_register_slot("Beta_RDMA", &slot);
    err = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(rc, HERD_ERR_BAD_PARAM);
    assert_int_equal(slot, -1);
    assert_contains(err, "\"beta_rdma\" is a\ncompile-time endpoint tag of this herd (slot 2, "
                         "declared by xport-beta");
    free(err);
#endif
}

#if HERD_ENDPOINT_DYNAMIC_SLOTS
static void test_register_same_name_same_slot(void **state)
{
    int a = -1, b = -1, again = -1;

    assert_string_equal(open_with(NULL), "dynamic");
    assert_int_equal(ompi_endpoint_base_register_slot("xport_a", &a), HERD_SUCCESS);
    assert_int_equal(ompi_endpoint_base_register_slot("xport_b", &b), HERD_SUCCESS);
    assert_int_equal(ompi_endpoint_base_register_slot("xport_a", &again), HERD_SUCCESS);
    assert_int_equal(a, 0);
    assert_int_equal(b, 1);
    assert_int_equal(again, a);
    /* names are exact: another case is another slot */
    assert_int_equal(ompi_endpoint_base_register_slot("XPORT_A", &again), HERD_SUCCESS);
    assert_int_equal(again, 2);
    /* closing forgets the names: numbering starts again */
    close_and_reset();
    open_with(NULL);
    assert_int_equal(ompi_endpoint_base_register_slot("xport_b", &b), HERD_SUCCESS);
    assert_int_equal(b, 0);
}

static void test_register_many(void **state)
{
    char name[32];
    int slot = -1;

    assert_string_equal(open_with(NULL), "dynamic");
    for (int i = 0; i < 64; ++i) {
        snprintf(name, sizeof(name), "xport_%d", i);
        assert_int_equal(ompi_endpoint_base_register_slot(name, &slot), HERD_SUCCESS);
        assert_int_equal(slot, i);
    }
    for (int i = 63; i >= 0; --i) {
        snprintf(name, sizeof(name), "xport_%d", i);
        assert_int_equal(ompi_endpoint_base_register_slot(name, &slot), HERD_SUCCESS);
        assert_int_equal(slot, i);
    }
}

static void test_register_limit(void **state)
{
    int slot = -1;
    char *err;

    setenv("HERD_MCA_endpoint_dynamic_max_slots", "2", 1);
    assert_string_equal(open_with(NULL), "dynamic");
    assert_int_equal(ompi_endpoint_base_register_slot("one", &slot), HERD_SUCCESS);
    assert_int_equal(ompi_endpoint_base_register_slot("two", &slot), HERD_SUCCESS);
    assert_int_equal(slot, 1);
    herd_test_capture_start(&stderr_capture);
    int rc = ompi_endpoint_base_register_slot("three", &slot);
    err = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(rc, HERD_ERR_OUT_OF_RESOURCE);
    assert_int_equal(slot, 1);
    assert_contains(err, "\"three\"");
    assert_contains(err,
                    "endpoint_dynamic_max_slots = 2, set by: HERD_MCA_endpoint_dynamic_max_slots");
    assert_contains(err, "one,two");
    assert_contains(err, "HERD_MCA_endpoint_dynamic_max_slots=18");
    free(err);
    /* a name already registered still has its slot */
    assert_int_equal(ompi_endpoint_base_register_slot("one", &slot), HERD_SUCCESS);
    assert_int_equal(slot, 0);
}

static void test_get_set(void **state)
{
    int xa = -1, xb = -1;
    int ep0a, ep0b, ep1a;

    assert_int_equal(ompi_proc_init(8), HERD_SUCCESS);
    assert_string_equal(open_with(NULL), "dynamic");
    const ompi_endpoint_module_t *module = ompi_endpoint_base_module();
    assert_int_equal(ompi_endpoint_base_register_slot("xa", &xa), HERD_SUCCESS);
    assert_int_equal(ompi_endpoint_base_register_slot("xb", &xb), HERD_SUCCESS);
    ompi_proc_t *p0 = lookup(0), *p1 = lookup(1);

    /* nothing set: NULL, and no table yet */
    assert_null(ompi_endpoint_base_get(p0, xa));
    assert_null(p0->endpoint[HERD_ENDPOINT_DYNAMIC_INDEX]);
    /* storing NULL where nothing is allocates nothing */
    assert_int_equal(ompi_endpoint_base_set(p0, xb, NULL), HERD_SUCCESS);
    assert_null(p0->endpoint[HERD_ENDPOINT_DYNAMIC_INDEX]);

    assert_int_equal(ompi_endpoint_base_set(p0, xa, &ep0a), HERD_SUCCESS);
    assert_non_null(p0->endpoint[HERD_ENDPOINT_DYNAMIC_INDEX]);
    assert_int_equal(module->set(p0, xb, &ep0b), HERD_SUCCESS);
    assert_int_equal(ompi_endpoint_base_set(p1, xa, &ep1a), HERD_SUCCESS);
    assert_ptr_equal(ompi_endpoint_base_get(p0, xa), &ep0a);
    assert_ptr_equal(module->get(p0, xb), &ep0b);
    assert_ptr_equal(ompi_endpoint_base_get(p1, xa), &ep1a);
    assert_null(ompi_endpoint_base_get(p1, xb)); /* per proc */
    /* the compile-time slots are untouched */
    for (int s = 0; s < HERD_ENDPOINT_STATIC_COUNT; ++s) {
        assert_null(p0->endpoint[s]);
    }
    /* overwrite, clear */
    assert_int_equal(ompi_endpoint_base_set(p0, xa, &ep1a), HERD_SUCCESS);
    assert_ptr_equal(ompi_endpoint_base_get(p0, xa), &ep1a);
    assert_int_equal(ompi_endpoint_base_set(p0, xa, NULL), HERD_SUCCESS);
    assert_null(ompi_endpoint_base_get(p0, xa));
    assert_ptr_equal(ompi_endpoint_base_get(p0, xb), &ep0b);

    /* slots never registered */
    assert_int_equal(ompi_endpoint_base_set(p0, 2, &ep0a), HERD_ERR_BAD_PARAM);
    assert_int_equal(ompi_endpoint_base_set(p0, -1, &ep0a), HERD_ERR_BAD_PARAM);
    assert_int_equal(ompi_endpoint_base_set(NULL, xa, &ep0a), HERD_ERR_BAD_PARAM);
    assert_null(ompi_endpoint_base_get(p0, 2));
    assert_null(ompi_endpoint_base_get(p0, -1));
    assert_null(ompi_endpoint_base_get(NULL, xa));
}

/* A component that registers after procs exist (and have tables) gets a slot that works on
 * them, and on procs created later. */
static void test_register_after_procs_exist(void **state)
{
    int early = -1, late = -1;
    int e0, l0, l5;

    assert_int_equal(ompi_proc_init(8), HERD_SUCCESS);
    assert_string_equal(open_with(NULL), "dynamic");
    assert_int_equal(ompi_endpoint_base_register_slot("early", &early), HERD_SUCCESS);
    ompi_proc_t *p0 = lookup(0);
    ompi_proc_t *p3 = lookup(3);
    assert_int_equal(ompi_endpoint_base_set(p0, early, &e0), HERD_SUCCESS);

    assert_int_equal(ompi_endpoint_base_register_slot("late", &late), HERD_SUCCESS);
    assert_int_equal(late, 1);
    /* p0's table predates the slot: it reads NULL, then grows on the set */
    assert_null(ompi_endpoint_base_get(p0, late));
    assert_int_equal(ompi_endpoint_base_set(p0, late, &l0), HERD_SUCCESS);
    assert_ptr_equal(ompi_endpoint_base_get(p0, late), &l0);
    assert_ptr_equal(ompi_endpoint_base_get(p0, early), &e0); /* kept through the growth */
    /* p3 has no table: the late slot alone */
    assert_null(ompi_endpoint_base_get(p3, late));
    ompi_proc_t *p5 = lookup(5);
    assert_int_equal(ompi_endpoint_base_set(p5, late, &l5), HERD_SUCCESS);
    assert_ptr_equal(ompi_endpoint_base_get(p5, late), &l5);
    assert_null(ompi_endpoint_base_get(p5, early));
}

/* The tables are freed with their procs (valgrind checks), and when the framework closes first,
 * by the close: the procs then hold no stale table. */
static void test_tables_freed(void **state)
{
    int slot = -1;
    int ep;
    ompi_proc_stats_t stats;

    assert_int_equal(ompi_proc_init(600), HERD_SUCCESS);
    assert_string_equal(open_with(NULL), "dynamic");
    assert_int_equal(ompi_endpoint_base_register_slot("xport", &slot), HERD_SUCCESS);
    for (uint32_t r = 0; r < 600; r += 7) {
        assert_int_equal(ompi_endpoint_base_set(lookup(r), slot, &ep), HERD_SUCCESS);
    }
    ompi_proc_t *p7 = ompi_proc_find(7);
    assert_non_null(p7->endpoint[HERD_ENDPOINT_DYNAMIC_INDEX]);
    ompi_proc_finalize(); /* procs and their tables */
    ompi_proc_stats(&stats);
    assert_int_equal(stats.num_procs, 0);

    assert_int_equal(ompi_proc_init(600), HERD_SUCCESS);
    assert_int_equal(ompi_endpoint_base_register_slot("xport", &slot), HERD_SUCCESS);
    p7 = lookup(7);
    assert_int_equal(ompi_endpoint_base_set(p7, slot, &ep), HERD_SUCCESS);
    ompi_endpoint_base_close();
    assert_null(p7->endpoint[HERD_ENDPOINT_DYNAMIC_INDEX]);
    assert_ptr_equal(ompi_proc_find(7), p7); /* the proc stays */
    /* opened again: new numbering, the old proc works with it */
    open_with(NULL);
    assert_int_equal(ompi_endpoint_base_register_slot("other", &slot), HERD_SUCCESS);
    assert_int_equal(slot, 0);
    assert_null(ompi_endpoint_base_get(p7, slot));
    assert_int_equal(ompi_endpoint_base_set(p7, slot, &ep), HERD_SUCCESS);
    /* teardown: procs finalized while the framework is open */
}
#endif /* HERD_ENDPOINT_DYNAMIC_SLOTS */

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tags_numbered_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tags_unique, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slot_for_tag, setup, teardown),
        cmocka_unit_test_setup_teardown(test_proc_size, setup, teardown),
#if HERD_ENDPOINT_NUM_STATIC_TAGS > 0
        cmocka_unit_test_setup_teardown(test_static_slots_plain_index, setup, teardown),
#endif
        cmocka_unit_test_setup_teardown(test_proc_table_lazy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_proc_foreach_in_rank_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_default_selection, setup, teardown),
        cmocka_unit_test_setup_teardown(test_include_and_exclude, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_component, setup, teardown),
        cmocka_unit_test_setup_teardown(test_priority_variables, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stub_outranks_and_is_asked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_static_module_has_no_runtime_slots, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_open, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_slot_names, setup, teardown),
#if HERD_ENDPOINT_DYNAMIC_SLOTS
        cmocka_unit_test_setup_teardown(test_register_same_name_same_slot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_register_many, setup, teardown),
        cmocka_unit_test_setup_teardown(test_register_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_get_set, setup, teardown),
        cmocka_unit_test_setup_teardown(test_register_after_procs_exist, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tables_freed, setup, teardown),
#endif
    };
    const char *path = getenv("HERD_MCA_component_path");
    int failed;

    build_component_path = strdup(NULL != path ? path : "");
    if (NULL == build_component_path) {
        return 1;
    }
    failed = cmocka_run_group_tests(tests, NULL, NULL);
    free(build_component_path);
    return failed;
}
