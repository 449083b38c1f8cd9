/* SPDX-License-Identifier: BSD-3-Clause */
/* btl: selection (default order, include, exclude, a stub DSO outranking the built components,
 * one built for another interface version refused), the per-peer choice (first reachable, cached
 * in the proc; every peer at start with btl_base_add_all), the matching engine (order per source
 * and tag, any source / any tag, the unexpected queue, truncation), the sm ring (one process, a
 * full ring, wrap-around, several producers with fork, the creation race) and the tcp frame
 * decoders (malformed input of every kind, random bytes). A stand-in runtime (rte) replaces
 * libherd: no job is needed. */
#include "herd_config.h"

#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "ompi-shim/mca/btl/btl.h"
#include "ompi-shim/mca/btl/sm/btl_sm.h"
#include "ompi-shim/mca/btl/tcp/btl_tcp.h"
#include "ompi-shim/mca/endpoint/endpoint.h"
#include "ompi-shim/proc/proc.h"
#include "opal/mca/mca.h"
#include "support/capture.h"

#define STUB_DIR HERD_TEST_BUILDDIR "/btl/stubs"
#define JOB_SIZE 8u
#define MY_RANK  2u

static char *build_component_path;
/* btl ofi is built (configure found libfabric): it is selected between sm and tcp, but its
 * transport DSO is kept off the component path here (test_btl_ofi runs it), so it never starts
 * and the per-peer choices below stay self, sm and tcp. */
static herd_test_capture_t stderr_capture;
static char jobid[64];

/* ------------------------------------------------------------------------------------------ */
/* the stand-in runtime: ranks 0-3 on node 0 (this one), 4-7 on node 1; no RM endpoints */

static int rte_peer_node(uint32_t peer, uint32_t *node)
{
    if (peer >= JOB_SIZE) {
        return HERD_ERR_BAD_PARAM;
    }
    *node = peer / 4;
    return HERD_SUCCESS;
}

static int rte_peer_endpoint(uint32_t peer, const char *fabric, void *addr, size_t *len)
{
    (void) peer, (void) fabric, (void) addr, (void) len;
    return HERD_ERR_NOT_FOUND;
}

static int rte_put(const char *key, const void *value, size_t len)
{
    (void) key, (void) value, (void) len;
    return HERD_SUCCESS;
}

static int rte_commit(void)
{
    return HERD_SUCCESS;
}

static int rte_get(uint32_t peer, const char *key, void **value, size_t *len)
{
    (void) peer, (void) key, (void) value, (void) len;
    return HERD_ERR_NOT_FOUND;
}

static const char *rte_last_error(void)
{
    return "no job in a unit test";
}

static ompi_btl_rte_t rte = {
    .my_rank = MY_RANK,
    .job_size = JOB_SIZE,
    .my_node = 0,
    .jobid = jobid,
    .node_name = "unitnode",
    .peer_node = rte_peer_node,
    .peer_endpoint = rte_peer_endpoint,
    .put = rte_put,
    .commit = rte_commit,
    .get = rte_get,
    .last_error = rte_last_error,
};

/* ------------------------------------------------------------------------------------------ */
/* helpers */

static int setup(void **state)
{
    (void) state;
    setenv("HERD_MCA_component_path", build_component_path, 1);
    /* no transport DSO (ucx, ofi), also not an installed one: test_btl_ucx and _ofi have them */
    setenv("HERD_MCA_btl_base_dso_path", "/nonexistent", 1);
    unsetenv("HERD_MCA_btl");
    unsetenv("HERD_MCA_btl_base_verbose");
    unsetenv("HERD_MCA_btl_self_priority");
    unsetenv("HERD_MCA_btl_base_add_all");
    setenv("HERD_MCA_mca_base_component_show_load_errors", "1", 1);
    assert_int_equal(ompi_proc_init(JOB_SIZE), HERD_SUCCESS);
    return 0;
}

static int teardown(void **state)
{
    (void) state;
    ompi_btl_base_close();
    assert_false(ompi_btl_base_framework.opened);
    ompi_proc_finalize();
    unsetenv("HERD_MCA_btl");
    return 0;
}

/* The names of the started modules, "self,sm,tcp": the selected list, in priority order. */
static const char *open_with(const char *selection, char *names, size_t size)
{
    const opal_mca_framework_t *fw = &ompi_btl_base_framework;
    size_t used = 0;

    if (NULL != selection) {
        setenv("HERD_MCA_btl", selection, 1);
    }
    assert_int_equal(ompi_btl_base_open(&rte), HERD_SUCCESS);
    names[0] = '\0';
    for (size_t i = 0; i < fw->num_selected; ++i) {
        const ompi_btl_module_t *m = fw->selected[i]->module;
        used += (size_t) snprintf(names + used, size - used, "%s%s", i ? "," : "", m->name);
    }
    return names;
}

/* The components of list that this build has, in list's order: the transports that need a
 * library (ucx, ofi) are built only where configure found it. */
static const char *built(const char *list)
{
    static char out[256];
    char copy[256];
    char *save = NULL;
    size_t used = 0;

    snprintf(copy, sizeof(copy), "%s", list);
    out[0] = '\0';
    for (char *name = strtok_r(copy, ",", &save); NULL != name; name = strtok_r(NULL, ",", &save)) {
        for (const opal_mca_component_t *const *c = ompi_btl_base_framework.static_components;
             NULL != *c; ++c) {
            if (0 == strcmp((*c)->name, name)) {
                used += (size_t) snprintf(out + used, sizeof(out) - used, "%s%s",
                                          0 == used ? "" : ",", name);
            }
        }
    }
    return out;
}

static void close_and_reset(void)
{
    ompi_btl_base_close();
    unsetenv("HERD_MCA_btl");
}

static ompi_btl_recv_t posted(uint32_t src, int tag, void *buf, size_t cap)
{
    ompi_btl_recv_t r = {.want_src = src, .want_tag = tag, .buf = buf, .cap = cap};
    return r;
}

/* ------------------------------------------------------------------------------------------ */
/* selection */

static void test_default_order(void **state)
{
    char names[256];
    (void) state;

    assert_string_equal(open_with(NULL, names, sizeof(names)), built("self,sm,ucx,ofi,tcp"));
    /* nothing per peer at open */
    ompi_proc_stats_t stats;
    ompi_proc_stats(&stats);
    assert_int_equal(stats.num_procs, 0);
}

static void test_include_and_exclude(void **state)
{
    char names[256];
    (void) state;

    assert_string_equal(open_with("self", names, sizeof(names)), "self");
    close_and_reset();
    assert_string_equal(open_with("tcp,self", names, sizeof(names)), "self,tcp");
    close_and_reset();
    assert_string_equal(open_with("^tcp", names, sizeof(names)), built("self,sm,ucx,ofi"));
    close_and_reset();
    assert_string_equal(open_with("^sm,self", names, sizeof(names)), built("ucx,ofi,tcp"));
    close_and_reset();
    setenv("HERD_MCA_btl", "^self,sm,tcp", 1);
    herd_test_capture_start(&stderr_capture);
    int rc = ompi_btl_base_open(&rte);
    char *err = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(rc, HERD_ERR_NOT_FOUND);
    free(err);
    assert_false(ompi_btl_base_is_open());
}

static void test_unknown_component(void **state)
{
    (void) state;
    setenv("HERD_MCA_btl", "self,shm", 1);
    herd_test_capture_start(&stderr_capture);
    int rc = ompi_btl_base_open(&rte);
    char *err = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(rc, HERD_ERR_BAD_PARAM);
    assert_contains(err, "\"shm\"");
    free(err);
}

static void test_priority_variable(void **state)
{
    char names[256];
    (void) state;

    setenv("HERD_MCA_btl_self_priority", "1", 1);
    assert_string_equal(open_with(NULL, names, sizeof(names)), built("sm,ucx,ofi,tcp,self"));
    close_and_reset();
    unsetenv("HERD_MCA_btl_self_priority");
    assert_string_equal(open_with(NULL, names, sizeof(names)), built("self,sm,ucx,ofi,tcp"));
}

/* The stub DSO outranks the built components; badiface (interface version 7) is refused. */
static void test_stub_and_version(void **state)
{
    char names[256], path[4096];
    (void) state;

    snprintf(path, sizeof(path), "%s:%s", STUB_DIR, build_component_path);
    setenv("HERD_MCA_component_path", path, 1);
    herd_test_capture_start(&stderr_capture);
    const char *got = open_with(NULL, names, sizeof(names));
    char *err = herd_test_capture_stop(&stderr_capture);
    char want[256];
    snprintf(want, sizeof(want), "stub,%s", built("self,sm,ucx,ofi,tcp"));
    assert_string_equal(got, want);
    assert_contains(err, "herd_btl_badiface");
    assert_contains(err, "btl interface version 7");
    free(err);
    close_and_reset();
    setenv("HERD_MCA_mca_base_component_show_load_errors", "0", 1);
    assert_string_equal(open_with("^stub", names, sizeof(names)), built("self,sm,ucx,ofi,tcp"));
}

/* A front component loading its transport from a DSO: found on the component path (also in
 * .libs), started, its operations copied into the front; missing, refused (another services
 * version) and failing init each leave the front as it was, with the reason on the stream. */
static int front_init_calls;
static int front_init(const ompi_btl_rte_t *r, ompi_btl_deliver_fn_t deliver)
{
    (void) r, (void) deliver;
    ++front_init_calls;
    return HERD_SUCCESS;
}

static void test_dso_front(void **state)
{
    char names[256], path[4096];
    int init_status = HERD_SUCCESS;
    (void) state;

    snprintf(path, sizeof(path), "/nonexistent:%s:%s", STUB_DIR, build_component_path);
    setenv("HERD_MCA_component_path", path, 1);
    setenv("HERD_MCA_btl_base_dso_path", path, 1);
    setenv("HERD_MCA_btl_base_verbose", "10", 1);
    /* the framework's stream is open, as it is when the base starts a front */
    assert_string_equal(open_with("self", names, sizeof(names)), "self");

    ompi_btl_module_t front = {.name = "stubtr", .init = front_init};
    herd_test_capture_start(&stderr_capture);
    int rc = ompi_btl_base_dso_front_init(&front, &init_status, &rte, ompi_btl_base_deliver);
    char *err = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(rc, HERD_SUCCESS);
    assert_contains(err, "stub transport started for rank 2");
    assert_contains(err, "the stubtr transport is loaded from");
    free(err);
    assert_string_equal(front.name, "stubtr");
    assert_ptr_equal(front.init, front_init);
    assert_non_null(front.send);
    assert_true(front.reachable(5));
    /* the DSO reaches the proc table through the services */
    ompi_proc_t *proc = NULL;
    assert_int_equal(ompi_proc_lookup(MY_RANK, &proc), HERD_SUCCESS);
    assert_int_equal(front.add_peer(proc), HERD_SUCCESS);
    assert_int_equal(front.num_peers(), 1);
    ompi_btl_recv_t r = posted(MY_RANK, 9, names, sizeof(names));
    assert_int_equal(ompi_btl_base_post_recv(&r), HERD_SUCCESS);
    assert_int_equal(front.send(proc, 9, "hello", 6), HERD_SUCCESS);
    assert_true(r.done);
    assert_string_equal(names, "hello");
    front.finalize();
    assert_int_equal(front_init_calls, 0);

    /* missing: says where it looked and how to leave the transport out */
    ompi_btl_module_t missing = {.name = "nosuch", .init = front_init};
    herd_test_capture_start(&stderr_capture);
    rc = ompi_btl_base_dso_front_init(&missing, &init_status, &rte, ompi_btl_base_deliver);
    err = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(rc, HERD_ERR_NOT_FOUND);
    assert_contains(err, "herd-btl-nosuch.so is in no folder of btl_base_dso_path");
    assert_contains(err, "--mca btl ^nosuch");
    free(err);
    assert_null(missing.send);

    /* built for another services version: the DSO refuses, with its reason */
    ompi_btl_module_t old = {.name = "stubold", .init = front_init};
    herd_test_capture_start(&stderr_capture);
    rc = ompi_btl_base_dso_front_init(&old, &init_status, &rte, ompi_btl_base_deliver);
    err = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(rc, HERD_ERR_NOT_AVAILABLE);
    assert_contains(err, "refused to start: the stub transport was built for services version 999");
    free(err);
    assert_null(old.send);

    /* every process on this node and sm started: the DSO is not loaded at all */
    close_and_reset();
    assert_string_equal(open_with("self,sm", names, sizeof(names)), "self,sm");
    ompi_btl_rte_t one_node = rte;
    one_node.local_size = one_node.job_size;
    ompi_btl_module_t spared = {.name = "stubtr", .init = front_init};
    herd_test_capture_start(&stderr_capture);
    rc = ompi_btl_base_dso_front_init(&spared, &init_status, &one_node, ompi_btl_base_deliver);
    err = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(rc, HERD_ERR_NOT_AVAILABLE);
    assert_contains(err, "stubtr not loaded: every process of the job is on this node");
    free(err);
    assert_null(spared.send);

    /* init fails: the status comes back and the front is untouched */
    ompi_btl_module_t failing = {.name = "stubtr", .init = front_init};
    init_status = HERD_ERR_UNREACH;
    rc = ompi_btl_base_dso_front_init(&failing, &init_status, &rte, ompi_btl_base_deliver);
    assert_int_equal(rc, HERD_ERR_UNREACH);
    assert_null(failing.send);
    unsetenv("HERD_MCA_btl_base_verbose");
}

/* ------------------------------------------------------------------------------------------ */
/* the per-peer choice */

static void test_per_peer_choice(void **state)
{
    char names[256], path[4096], buf[16];
    (void) state;

    snprintf(path, sizeof(path), "%s:%s", STUB_DIR, build_component_path);
    setenv("HERD_MCA_component_path", path, 1);
    setenv("HERD_MCA_mca_base_component_show_load_errors", "0", 1);
    assert_string_equal(open_with("stub,self", names, sizeof(names)), "stub,self");
    /* nobody chosen before the first message */
    assert_null(ompi_btl_base_peer_module(0));
    assert_null(ompi_proc_find(0));
    /* rank 0: the stub reaches it (loops the message back with tag + 1000) */
    ompi_btl_recv_t r = posted(0, 1005, buf, sizeof(buf));
    assert_int_equal(ompi_btl_base_post_recv(&r), HERD_SUCCESS);
    assert_int_equal(ompi_btl_base_send(0, 5, "hello", 6), HERD_SUCCESS);
    assert_true(r.done);
    assert_string_equal(buf, "hello");
    assert_string_equal(ompi_btl_base_peer_module(0)->name, "stub");
    assert_int_equal(ompi_proc_find(0)->btl_choice, 1);
    /* my rank (2) is even: the stub outranks self for it too */
    assert_int_equal(ompi_btl_base_send(MY_RANK, 5, "x", 1), HERD_SUCCESS);
    assert_string_equal(ompi_btl_base_peer_module(MY_RANK)->name, "stub");
    /* rank 3: the stub does not reach it, nor does self: unreachable, and nothing cached */
    assert_int_equal(ompi_btl_base_send(3, 5, "x", 1), HERD_ERR_UNREACH);
    assert_null(ompi_btl_base_peer_module(3));
    assert_int_equal(ompi_proc_find(3)->btl_choice, 0);
    /* out of the job */
    assert_int_equal(ompi_btl_base_send(JOB_SIZE, 5, "x", 1), HERD_ERR_BAD_PARAM);
    assert_int_equal(ompi_btl_base_num_unexpected(), 1); /* the one to my rank, tag 1005 */
    close_and_reset();
    /* a proc's choice does not outlive the framework */
    assert_int_equal(ompi_proc_find(0)->btl_choice, 0);
}

/* btl_base_add_all: every peer a transport reaches is added when messaging starts, before any
 * message; the others are left for their first send to report. Off again: nothing is added. */
static void test_add_all(void **state)
{
    char names[256], path[4096];
    ompi_proc_stats_t stats;
    (void) state;

    snprintf(path, sizeof(path), "%s:%s", STUB_DIR, build_component_path);
    setenv("HERD_MCA_component_path", path, 1);
    setenv("HERD_MCA_mca_base_component_show_load_errors", "0", 1);
    setenv("HERD_MCA_btl_base_add_all", "1", 1);
    assert_string_equal(open_with("stub,self", names, sizeof(names)), "stub,self");
    const ompi_btl_module_t *stub = ompi_btl_base_framework.selected[0]->module;
    /* the stub reaches the even ranks (my rank 2 among them), self nobody else */
    assert_int_equal(stub->num_peers(), JOB_SIZE / 2);
    for (uint32_t peer = 0; peer < JOB_SIZE; ++peer) {
        const ompi_btl_module_t *m = ompi_btl_base_peer_module(peer);
        if (0 == peer % 2) {
            assert_non_null(m);
            assert_string_equal(m->name, "stub");
        } else {
            assert_null(m);
        }
    }
    ompi_proc_stats(&stats);
    assert_int_equal(stats.num_procs, JOB_SIZE); /* the unreachable ones were looked up too */
    assert_int_equal(ompi_btl_base_send(1, 5, "x", 1), HERD_ERR_UNREACH);
    close_and_reset();

    setenv("HERD_MCA_btl_base_add_all", "0", 1);
    assert_string_equal(open_with("stub,self", names, sizeof(names)), "stub,self");
    stub = ompi_btl_base_framework.selected[0]->module;
    assert_int_equal(stub->num_peers(), 0);
    assert_null(ompi_btl_base_peer_module(0));
    unsetenv("HERD_MCA_btl_base_add_all");
}

static void test_self_only(void **state)
{
    char names[256], buf[8];
    size_t len;
    (void) state;

    open_with("self", names, sizeof(names));
    assert_int_equal(ompi_btl_base_send(MY_RANK, 3, "abc", 4), HERD_SUCCESS);
    assert_string_equal(ompi_btl_base_peer_module(MY_RANK)->name, "self");
    assert_int_equal(ompi_btl_base_send(1, 3, "abc", 4), HERD_ERR_UNREACH);
    ompi_btl_recv_t r = posted(OMPI_BTL_ANY_SOURCE, OMPI_BTL_ANY_TAG, buf, sizeof(buf));
    assert_int_equal(ompi_btl_base_post_recv(&r), HERD_SUCCESS);
    assert_true(r.done);
    len = r.len;
    assert_int_equal(len, 4);
    assert_int_equal(r.src, MY_RANK);
    assert_int_equal(r.tag, 3);
    assert_string_equal(buf, "abc");
    ompi_proc_stats_t stats;
    ompi_proc_stats(&stats);
    assert_int_equal(stats.num_procs, 2); /* me, and rank 1 which nobody reaches */
}

/* How often the base polled the stub (a kernel-polling module) in rounds of progress. */
static unsigned stub_polls_in(unsigned rounds)
{
    unsigned polls = 0;

    assert_int_equal(ompi_btl_base_send(0, 900, "", 0), HERD_SUCCESS); /* reset the count */
    ompi_btl_recv_t r = posted(0, 1900, &polls, sizeof(polls));
    assert_int_equal(ompi_btl_base_post_recv(&r), HERD_SUCCESS);
    assert_true(r.done);
    for (unsigned i = 0; i < rounds; ++i) {
        assert_int_equal(ompi_btl_base_progress(), 0);
    }
    assert_int_equal(ompi_btl_base_send(0, 900, "", 0), HERD_SUCCESS);
    r = posted(0, 1900, &polls, sizeof(polls));
    assert_int_equal(ompi_btl_base_post_recv(&r), HERD_SUCCESS);
    assert_true(r.done);
    return polls;
}

/* A module whose progress enters the kernel is polled every kernel_poll_interval rounds while
 * it finds nothing; self, which has no progress, costs nothing. */
static void test_kernel_poll_interval(void **state)
{
    char names[256], path[4096];
    (void) state;

    snprintf(path, sizeof(path), "%s:%s", STUB_DIR, build_component_path);
    setenv("HERD_MCA_component_path", path, 1);
    setenv("HERD_MCA_mca_base_component_show_load_errors", "0", 1);
    open_with("stub,self", names, sizeof(names));
    assert_int_equal(stub_polls_in(64), 4); /* the default interval, 16 */
    close_and_reset();
    setenv("HERD_MCA_btl_base_kernel_poll_interval", "4", 1);
    open_with("stub,self", names, sizeof(names));
    assert_int_equal(stub_polls_in(64), 16);
    close_and_reset();
    setenv("HERD_MCA_btl_base_kernel_poll_interval", "1", 1);
    open_with("stub,self", names, sizeof(names));
    assert_int_equal(stub_polls_in(64), 64);
    /* waiting rounds poll the same way (and yield now and then, which is not observable) */
    close_and_reset();
    unsetenv("HERD_MCA_btl_base_kernel_poll_interval");
}

/* ------------------------------------------------------------------------------------------ */
/* the matching engine (fed directly, as a module would) */

static void test_match_order_and_wildcards(void **state)
{
    int a = 0, b = 0, c = 0, d = 0;
    (void) state;

    /* unexpected: from 1 tag 7 (1), from 2 tag 7 (2), from 1 tag 8 (3), from 1 tag 7 (4) */
    int v1 = 1, v2 = 2, v3 = 3, v4 = 4;
    ompi_btl_base_deliver(1, 7, &v1, sizeof(v1));
    ompi_btl_base_deliver(2, 7, &v2, sizeof(v2));
    ompi_btl_base_deliver(1, 8, &v3, sizeof(v3));
    ompi_btl_base_deliver(1, 7, &v4, sizeof(v4));
    assert_int_equal(ompi_btl_base_num_unexpected(), 4);
    /* (1, 7) matches its messages in order */
    ompi_btl_recv_t r = posted(1, 7, &a, sizeof(a));
    ompi_btl_base_post_recv(&r);
    assert_true(r.done);
    assert_int_equal(a, 1);
    /* any tag from 1: the earliest left, which is tag 8 */
    r = posted(1, OMPI_BTL_ANY_TAG, &b, sizeof(b));
    ompi_btl_base_post_recv(&r);
    assert_int_equal(b, 3);
    assert_int_equal(r.tag, 8);
    /* any source tag 7: rank 2's (earlier than 1's second) */
    r = posted(OMPI_BTL_ANY_SOURCE, 7, &c, sizeof(c));
    ompi_btl_base_post_recv(&r);
    assert_int_equal(c, 2);
    assert_int_equal(r.src, 2);
    r = posted(OMPI_BTL_ANY_SOURCE, OMPI_BTL_ANY_TAG, &d, sizeof(d));
    ompi_btl_base_post_recv(&r);
    assert_int_equal(d, 4);
    assert_int_equal(ompi_btl_base_num_unexpected(), 0);
}

static void test_match_posted_first(void **state)
{
    int x = 0, y = 0, z = 0;
    int v1 = 10, v2 = 20, v3 = 30;
    (void) state;

    ompi_btl_recv_t r1 = posted(3, 1, &x, sizeof(x));
    ompi_btl_recv_t r2 = posted(OMPI_BTL_ANY_SOURCE, 1, &y, sizeof(y));
    ompi_btl_recv_t r3 = posted(3, OMPI_BTL_ANY_TAG, &z, sizeof(z));
    ompi_btl_base_post_recv(&r1);
    ompi_btl_base_post_recv(&r2);
    ompi_btl_base_post_recv(&r3);
    assert_false(r1.done || r2.done || r3.done);
    /* a message goes to the earliest posted receive that matches it */
    ompi_btl_base_deliver(3, 1, &v1, sizeof(v1));
    assert_true(r1.done);
    assert_false(r2.done);
    ompi_btl_base_deliver(3, 1, &v2, sizeof(v2));
    assert_true(r2.done);
    assert_int_equal(y, 20);
    ompi_btl_base_deliver(4, 9, &v3, sizeof(v3)); /* matches none */
    assert_false(r3.done);
    assert_int_equal(ompi_btl_base_num_unexpected(), 1);
    ompi_btl_base_deliver(3, 9, &v3, sizeof(v3));
    assert_true(r3.done);
    assert_int_equal(z, 30);
    /* a cancelled receive is not matched */
    ompi_btl_recv_t r4 = posted(5, 5, &x, sizeof(x));
    ompi_btl_base_post_recv(&r4);
    ompi_btl_base_cancel_recv(&r4);
    ompi_btl_base_deliver(5, 5, &v1, sizeof(v1));
    assert_false(r4.done);
    assert_int_equal(ompi_btl_base_num_unexpected(), 2);
}

static void test_match_truncation(void **state)
{
    char small[4] = {0};
    (void) state;

    ompi_btl_base_deliver(1, 1, "0123456789", 10);
    ompi_btl_recv_t r = posted(1, 1, small, sizeof(small));
    ompi_btl_base_post_recv(&r);
    assert_true(r.done);
    assert_int_equal(r.status, HERD_ERR_TRUNCATE);
    assert_int_equal(r.len, 10);
    assert_memory_equal(small, "0123", 4);
    /* posted first, then too long */
    r = posted(1, 2, small, sizeof(small));
    ompi_btl_base_post_recv(&r);
    ompi_btl_base_deliver(1, 2, "abcdefgh", 8);
    assert_int_equal(r.status, HERD_ERR_TRUNCATE);
    assert_memory_equal(small, "abcd", 4);
    /* zero-length messages and buffers */
    r = posted(1, 3, NULL, 0);
    assert_int_equal(ompi_btl_base_post_recv(&r), HERD_SUCCESS);
    ompi_btl_base_deliver(1, 3, NULL, 0);
    assert_int_equal(r.status, HERD_SUCCESS);
    assert_int_equal(r.len, 0);
}

/* ------------------------------------------------------------------------------------------ */
/* the sm ring */

static void ring_name(char *buf, size_t size, const char *what)
{
    snprintf(buf, size, "/herd-unit-btl-%d-%s", (int) getpid(), what);
}

/* A ring of num_cells cells of cell_size bytes, no fast box. */
static const btl_sm_geometry_t *cells(uint32_t num_cells, uint32_t cell_size)
{
    static btl_sm_geometry_t g;
    g = (btl_sm_geometry_t){.num_cells = num_cells, .cell_size = cell_size};
    return &g;
}

static void test_sm_ring_single(void **state)
{
    btl_sm_segment_t seg;
    bool created;
    char name[128];
    (void) state;

    ring_name(name, sizeof(name), "single");
    assert_int_equal(btl_sm_segment_attach(name, 0, cells(3, 128), 100, &seg, &created),
                     HERD_ERR_BAD_PARAM); /* not a power of two */
    assert_int_equal(btl_sm_segment_attach(name, 0, cells(4, 128), 100, &seg, &created),
                     HERD_SUCCESS);
    assert_true(created);
    assert_int_equal(seg.payload, 128 - 32);
    assert_null(btl_sm_ring_peek(&seg));
    /* wrap around several times, filling the ring each lap */
    for (uint32_t lap = 0; lap < 5; ++lap) {
        for (uint32_t i = 0; i < 4; ++i) {
            uint32_t v = lap * 10 + i;
            assert_true(btl_sm_ring_push(&seg, 9, (int) i, sizeof(v), &v, sizeof(v), NULL));
        }
        assert_false(btl_sm_ring_push(&seg, 9, 0, 0, NULL, 0, NULL)); /* full */
        for (uint32_t i = 0; i < 4; ++i) {
            btl_sm_cell_t *cell = btl_sm_ring_peek(&seg);
            assert_non_null(cell);
            uint32_t v;
            memcpy(&v, cell->data, sizeof(v));
            assert_int_equal(v, lap * 10 + i);
            assert_int_equal(cell->src, 9);
            assert_int_equal(cell->tag, (int) i);
            btl_sm_ring_release(&seg, cell);
        }
        assert_null(btl_sm_ring_peek(&seg));
    }
    /* a second attach maps the same segment */
    btl_sm_segment_t again;
    assert_int_equal(btl_sm_segment_attach(name, 0, cells(4, 128), 100, &again, &created),
                     HERD_SUCCESS);
    assert_false(created);
    assert_true(btl_sm_ring_push(&again, 1, 1, 0, NULL, 0, NULL));
    assert_non_null(btl_sm_ring_peek(&seg));
    btl_sm_segment_detach(&again);
    btl_sm_segment_detach(&seg);
    shm_unlink(name);
}

/* Several forked producers push numbered messages at once into a small ring; the consumer sees
 * every one, each producer's in order. One child creates the segment (a sender first). */
static void test_sm_ring_producers(void **state)
{
    enum { PRODUCERS = 4, EACH = 5000 };
    char name[128];
    pid_t pids[PRODUCERS];
    (void) state;

    ring_name(name, sizeof(name), "mp");
    for (int p = 0; p < PRODUCERS; ++p) {
        pids[p] = fork();
        assert_true(pids[p] >= 0);
        if (0 == pids[p]) {
            btl_sm_segment_t seg;
            bool created;
            if (HERD_SUCCESS !=
                btl_sm_segment_attach(name, 0, cells(16, 64), 10000, &seg, &created)) {
                _exit(2);
            }
            for (uint32_t i = 0; i < EACH; ++i) {
                while (!btl_sm_ring_push(&seg, (uint32_t) p, 0, sizeof(i), &i, sizeof(i), NULL)) {
                    sched_yield();
                }
            }
            btl_sm_segment_detach(&seg);
            _exit(0);
        }
    }
    btl_sm_segment_t seg;
    bool created;
    assert_int_equal(btl_sm_segment_attach(name, 0, cells(16, 64), 10000, &seg, &created),
                     HERD_SUCCESS);
    uint32_t next[PRODUCERS] = {0};
    uint32_t total = 0;
    while (total < PRODUCERS * EACH) {
        btl_sm_cell_t *cell = btl_sm_ring_peek(&seg);
        if (NULL == cell) {
            sched_yield();
            continue;
        }
        uint32_t v;
        assert_true(cell->src < PRODUCERS);
        memcpy(&v, cell->data, sizeof(v));
        assert_int_equal(v, next[cell->src]);
        next[cell->src]++;
        total++;
        btl_sm_ring_release(&seg, cell);
    }
    assert_null(btl_sm_ring_peek(&seg));
    for (int p = 0; p < PRODUCERS; ++p) {
        int status;
        assert_int_equal(waitpid(pids[p], &status, 0), pids[p]);
        assert_true(WIFEXITED(status) && 0 == WEXITSTATUS(status));
    }
    btl_sm_segment_detach(&seg);
    shm_unlink(name);
}

static void test_sm_attach_timeout(void **state)
{
    char name[128];
    btl_sm_segment_t seg;
    bool created;
    (void) state;

    /* an empty file under the name: a creator that never finished */
    ring_name(name, sizeof(name), "stale");
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(btl_sm_segment_attach(name, 0, cells(4, 64), 50, &seg, &created),
                     HERD_ERR_TIMEOUT);
    shm_unlink(name);
}

/* ------------------------------------------------------------------------------------------ */
/* sm fast boxes */

/* Claims (two boxes, a third sender gets none), discovery, many laps of records of every length
 * with wrap-around, a full box, and payloads made of the very positions a record header would
 * carry: stale bytes of an earlier lap are never read as a record. */
static void test_sm_fbox_single(void **state)
{
    enum { SIZE = 256 };
    btl_sm_segment_t seg;
    btl_sm_fbox_sender_t a, b, c;
    btl_sm_fbox_receiver_t rx[2];
    uint32_t seen = 0;
    bool created;
    char name[128];
    (void) state;

    ring_name(name, sizeof(name), "fbox");
    btl_sm_geometry_t g = {.num_cells = 4, .cell_size = 64, .num_fboxes = 2, .fbox_size = 300};
    assert_int_equal(btl_sm_segment_attach(name, 0, &g, 100, &seg, &created), HERD_ERR_BAD_PARAM);
    g.fbox_size = SIZE;
    assert_int_equal(btl_sm_segment_attach(name, 0, &g, 100, &seg, &created), HERD_SUCCESS);
    assert_int_equal(seg.size, btl_sm_segment_size(&g));
    btl_sm_fbox_discover(&seg, rx, &seen);
    assert_int_equal(seen, 0);
    assert_int_equal(btl_sm_fbox_claim(&seg, 7, &a), HERD_SUCCESS);
    assert_int_equal(btl_sm_fbox_claim(&seg, 5, &b), HERD_SUCCESS);
    assert_int_equal(btl_sm_fbox_claim(&seg, 3, &c), HERD_ERR_OUT_OF_RESOURCE);
    assert_null(c.box);
    btl_sm_fbox_discover(&seg, rx, &seen);
    assert_int_equal(seen, 2);
    assert_int_equal(rx[0].src, 7);
    assert_int_equal(rx[1].src, 5);
    /* the ring still works beside the boxes */
    assert_true(btl_sm_ring_push(&seg, 3, 1, 0, NULL, 0, NULL));
    assert_non_null(btl_sm_ring_peek(&seg));
    uint32_t max = btl_sm_fbox_max_payload(SIZE);
    assert_int_equal(max, SIZE / 4 - 16);
    uint64_t payload[SIZE / 8];
    unsigned sent = 0, got = 0;
    for (unsigned lap = 0; lap < 200; ++lap) {
        uint32_t len = (lap * 7) % (max + 1);
        /* every word is a position + 1 a header could hold somewhere in the next laps */
        for (size_t w = 0; w < SIZE / 8; ++w) {
            payload[w] = a.head + 1 + 64 * w;
        }
        while (btl_sm_fbox_push(&a, (int) lap, payload, len)) {
            sent++;
        }
        assert_false(btl_sm_fbox_drained(&a)); /* full, nothing read */
        const btl_sm_rec_t *rec;
        while (NULL != (rec = btl_sm_fbox_peek(&rx[0]))) {
            assert_int_equal(rec->tag, (int) lap);
            assert_int_equal(rec->len, len);
            btl_sm_fbox_release(&rx[0], rec);
            got++;
        }
        assert_int_equal(got, sent);
        assert_true(btl_sm_fbox_drained(&a));
        assert_null(btl_sm_fbox_peek(&rx[1])); /* the other box saw nothing */
    }
    assert_true(sent > 400); /* several records per lap, and many wraps */
    btl_sm_segment_detach(&seg);
    shm_unlink(name);
}

/* A long record whose payload holds, at each word, that word's own position one lap later + 1:
 * when the receiver polls those lines in the next lap, in an empty box, they must have been
 * cleared by the sender (stale bytes are never read as a record). */
static void test_sm_fbox_stale_bytes(void **state)
{
    enum { SIZE = 1024 };
    btl_sm_segment_t seg;
    btl_sm_fbox_sender_t a;
    btl_sm_fbox_receiver_t rx;
    uint32_t seen = 0;
    bool created;
    char name[128];
    uint64_t payload[SIZE / 8];
    (void) state;

    ring_name(name, sizeof(name), "stale-bytes");
    btl_sm_geometry_t g = {.num_cells = 2, .cell_size = 64, .num_fboxes = 1, .fbox_size = SIZE};
    assert_int_equal(btl_sm_segment_attach(name, 0, &g, 100, &seg, &created), HERD_SUCCESS);
    assert_int_equal(btl_sm_fbox_claim(&seg, 1, &a), HERD_SUCCESS);
    btl_sm_fbox_discover(&seg, &rx, &seen);
    assert_int_equal(seen, 1);
    for (unsigned start = 0; start < 4; ++start) {
        /* the long record at a different offset each time */
        for (unsigned k = 0; k < start; ++k) {
            assert_true(btl_sm_fbox_push(&a, 0, payload, 8));
            btl_sm_fbox_release(&rx, btl_sm_fbox_peek(&rx));
        }
        uint32_t max = btl_sm_fbox_max_payload(SIZE);
        uint64_t h0 = a.head;
        for (size_t w = 0; w < max / 8; ++w) {
            payload[w] = h0 + sizeof(btl_sm_rec_t) + 8 * w + SIZE + 1;
        }
        assert_true(btl_sm_fbox_push(&a, 1, payload, max));
        const btl_sm_rec_t *rec = btl_sm_fbox_peek(&rx);
        assert_non_null(rec);
        assert_int_equal(rec->len, max);
        btl_sm_fbox_release(&rx, rec);
        for (unsigned i = 0; i < 2 * SIZE / 64; ++i) {
            assert_true(btl_sm_fbox_push(&a, 2, payload, 8));
            rec = btl_sm_fbox_peek(&rx);
            assert_non_null(rec);
            assert_int_equal(rec->tag, 2);
            assert_int_equal(rec->len, 8);
            btl_sm_fbox_release(&rx, rec);
            assert_null(btl_sm_fbox_peek(&rx));
        }
    }
    btl_sm_segment_detach(&seg);
    shm_unlink(name);
}

/* A forked sender streams messages of changing lengths through its box while the parent reads
 * them: all arrive, in order, with their bytes. */
static void test_sm_fbox_fork(void **state)
{
    enum { EACH = 20000 };
    char name[128];
    btl_sm_geometry_t g = {.num_cells = 4, .cell_size = 64, .num_fboxes = 1, .fbox_size = 1024};
    (void) state;

    ring_name(name, sizeof(name), "fboxfork");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (0 == pid) {
        btl_sm_segment_t seg;
        btl_sm_fbox_sender_t s;
        bool created;
        unsigned char buf[256];
        if (HERD_SUCCESS != btl_sm_segment_attach(name, 0, &g, 10000, &seg, &created) ||
            HERD_SUCCESS != btl_sm_fbox_claim(&seg, 4, &s)) {
            _exit(2);
        }
        for (uint32_t i = 0; i < EACH; ++i) {
            uint32_t len = i % (btl_sm_fbox_max_payload(g.fbox_size) + 1);
            memset(buf, (int) (i & 0xff), len);
            while (!btl_sm_fbox_push(&s, (int) i, buf, len)) {
                sched_yield();
            }
        }
        while (!btl_sm_fbox_drained(&s)) {
            sched_yield();
        }
        btl_sm_segment_detach(&seg);
        _exit(0);
    }
    btl_sm_segment_t seg;
    btl_sm_fbox_receiver_t rx;
    uint32_t seen = 0;
    bool created;
    assert_int_equal(btl_sm_segment_attach(name, 0, &g, 10000, &seg, &created), HERD_SUCCESS);
    while (0 == seen) {
        btl_sm_fbox_discover(&seg, &rx, &seen);
        sched_yield();
    }
    assert_int_equal(rx.src, 4);
    for (uint32_t i = 0; i < EACH;) {
        const btl_sm_rec_t *rec = btl_sm_fbox_peek(&rx);
        if (NULL == rec) {
            sched_yield();
            continue;
        }
        assert_int_equal(rec->tag, (int) i);
        assert_int_equal(rec->len, i % (btl_sm_fbox_max_payload(g.fbox_size) + 1));
        for (uint32_t k = 0; k < rec->len; ++k) {
            if (rec->data[k] != (unsigned char) (i & 0xff)) {
                fail_msg("message %u byte %u is %u", i, k, rec->data[k]);
            }
        }
        btl_sm_fbox_release(&rx, rec);
        i++;
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && 0 == WEXITSTATUS(status));
    btl_sm_segment_detach(&seg);
    shm_unlink(name);
}

/* The sm module sending to its own process (sm reaches my node): short messages take the box,
 * long ones the ring, and a source's messages still arrive in the order sent when they switch
 * between the two, also with small boxes that fill. */
static void test_sm_channels_keep_order(void **state)
{
    static const size_t sizes[] = {8, 20000, 8, 8, 1000, 5000, 100, 30000, 1, 0, 2032, 2033, 64};
    enum { N = sizeof(sizes) / sizeof(sizes[0]), ROUNDS = 20 };
    char names[256];
    static unsigned char out[30000], in[N * ROUNDS][30000];
    ompi_btl_recv_t r[N * ROUNDS];
    (void) state;

    setenv("HERD_MCA_btl_sm_fbox_size", "8192", 1);
    setenv("HERD_MCA_btl_sm_num_cells", "8", 1);
    open_with("sm", names, sizeof(names));
    /* a long message behind a short one in the box waits (queued) until the box was read */
    assert_int_equal(ompi_btl_base_send(MY_RANK, 6, out, 8), HERD_SUCCESS);
    assert_int_equal(ompi_btl_base_send(MY_RANK, 6, out, 20000), HERD_SUCCESS);
    const ompi_btl_module_t *sm = ompi_btl_base_peer_module(MY_RANK);
    assert_string_equal(sm->name, "sm");
    assert_int_equal(sm->pending(), 1);
    ompi_btl_recv_t first = posted(MY_RANK, 6, in[0], sizeof(in[0]));
    ompi_btl_recv_t second = posted(MY_RANK, 6, in[1], sizeof(in[1]));
    ompi_btl_base_post_recv(&first);
    ompi_btl_base_post_recv(&second);
    for (unsigned spins = 0; !second.done && spins < 1000; ++spins) {
        assert_true(ompi_btl_base_progress() >= 0);
    }
    assert_int_equal(first.len, 8);
    assert_int_equal(second.len, 20000);
    assert_int_equal(sm->pending(), 0);
    for (unsigned m = 0; m < N * ROUNDS; ++m) {
        memset(out, (int) m, sizeof(out));
        assert_int_equal(ompi_btl_base_send(MY_RANK, 7, out, sizes[m % N]), HERD_SUCCESS);
        if (m % 5 == 4) {
            ompi_btl_base_progress(); /* now and then, as a program would */
        }
    }
    for (unsigned m = 0; m < N * ROUNDS; ++m) {
        r[m] = posted(MY_RANK, 7, in[m], sizeof(in[m]));
        assert_int_equal(ompi_btl_base_post_recv(&r[m]), HERD_SUCCESS);
    }
    for (unsigned spins = 0; !r[N * ROUNDS - 1].done && spins < 1000000; ++spins) {
        assert_true(ompi_btl_base_progress() >= 0);
    }
    for (unsigned m = 0; m < N * ROUNDS; ++m) {
        assert_true(r[m].done);
        assert_int_equal(r[m].len, sizes[m % N]);
        for (size_t k = 0; k < r[m].len; ++k) {
            if (in[m][k] != (unsigned char) m) {
                fail_msg("message %u (%zu bytes) byte %zu is from message %u", m, r[m].len, k,
                         in[m][k]);
            }
        }
    }
    assert_int_equal(ompi_btl_base_num_unexpected(), 0);
    close_and_reset();
    unsetenv("HERD_MCA_btl_sm_fbox_size");
    unsetenv("HERD_MCA_btl_sm_num_cells");
}

/* ------------------------------------------------------------------------------------------ */
/* the tcp decoders */

static void test_tcp_header(void **state)
{
    uint8_t b[BTL_TCP_HEADER_SIZE];
    btl_tcp_header_t h;
    (void) state;

    btl_tcp_encode_header(BTL_TCP_MSG, 42, 1000, b);
    assert_int_equal(btl_tcp_decode_header(b, sizeof(b), 1 << 20, &h), HERD_SUCCESS);
    assert_int_equal(h.type, BTL_TCP_MSG);
    assert_int_equal(h.tag, 42);
    assert_int_equal(h.length, 1000);
    /* short */
    for (size_t n = 0; n < BTL_TCP_HEADER_SIZE; ++n) {
        assert_int_equal(btl_tcp_decode_header(b, n, 1 << 20, &h), HERD_ERR_UNPACK_READ_PAST_END);
    }
    /* too long a message for max */
    assert_int_equal(btl_tcp_decode_header(b, sizeof(b), 999, &h), HERD_ERR_UNPACK_FAILURE);
    uint8_t bad[BTL_TCP_HEADER_SIZE];
    /* magic, version, type, flags, negative tag */
    memcpy(bad, b, sizeof(b));
    bad[0] = 'X';
    assert_int_equal(btl_tcp_decode_header(bad, sizeof(bad), 1 << 20, &h), HERD_ERR_UNPACK_FAILURE);
    memcpy(bad, b, sizeof(b));
    bad[1] = 2;
    assert_int_equal(btl_tcp_decode_header(bad, sizeof(bad), 1 << 20, &h),
                     HERD_ERR_VERSION_MISMATCH);
    memcpy(bad, b, sizeof(b));
    bad[2] = 9;
    assert_int_equal(btl_tcp_decode_header(bad, sizeof(bad), 1 << 20, &h), HERD_ERR_UNPACK_FAILURE);
    memcpy(bad, b, sizeof(b));
    bad[3] = 1;
    assert_int_equal(btl_tcp_decode_header(bad, sizeof(bad), 1 << 20, &h), HERD_ERR_UNPACK_FAILURE);
    btl_tcp_encode_header(BTL_TCP_MSG, -1, 0, bad);
    assert_int_equal(btl_tcp_decode_header(bad, sizeof(bad), 1 << 20, &h), HERD_ERR_UNPACK_FAILURE);
    /* a hello of an impossible length, or with a tag */
    btl_tcp_encode_header(BTL_TCP_HELLO, 0, 3, bad);
    assert_int_equal(btl_tcp_decode_header(bad, sizeof(bad), 1 << 20, &h), HERD_ERR_UNPACK_FAILURE);
    btl_tcp_encode_header(BTL_TCP_HELLO, 0, 1u << 30, bad);
    assert_int_equal(btl_tcp_decode_header(bad, sizeof(bad), 1 << 20, &h), HERD_ERR_UNPACK_FAILURE);
    btl_tcp_encode_header(BTL_TCP_ACK, 3, 10, bad);
    assert_int_equal(btl_tcp_decode_header(bad, sizeof(bad), 1 << 20, &h), HERD_ERR_UNPACK_FAILURE);
}

static void test_tcp_hello(void **state)
{
    uint8_t p[BTL_TCP_HELLO_MAX + 8];
    uint32_t rank = 99;
    (void) state;

    size_t n = btl_tcp_encode_hello(5, "job.1", p);
    assert_int_equal(n, 6 + 5);
    assert_int_equal(btl_tcp_decode_hello(p, n, 8, "job.1", &rank), HERD_SUCCESS);
    assert_int_equal(rank, 5);
    rank = 99;
    assert_int_equal(btl_tcp_decode_hello(p, n, 5, "job.1", &rank), HERD_ERR_BAD_PARAM);
    assert_int_equal(btl_tcp_decode_hello(p, n, 8, "job.2", &rank), HERD_ERR_AUTH);
    assert_int_equal(btl_tcp_decode_hello(p, n, 8, "job.11", &rank), HERD_ERR_AUTH);
    assert_int_equal(btl_tcp_decode_hello(p, n - 1, 8, "job.1", &rank), HERD_ERR_UNPACK_FAILURE);
    assert_int_equal(btl_tcp_decode_hello(p, n + 1, 8, "job.1", &rank), HERD_ERR_UNPACK_FAILURE);
    assert_int_equal(btl_tcp_decode_hello(p, 3, 8, "job.1", &rank), HERD_ERR_UNPACK_FAILURE);
    p[4] = 0xff; /* a job id length past the payload */
    assert_int_equal(btl_tcp_decode_hello(p, n, 8, "job.1", &rank), HERD_ERR_UNPACK_FAILURE);
    assert_int_equal(rank, 99); /* untouched on failure */
    char longid[BTL_TCP_JOBID_MAX + 2];
    memset(longid, 'j', sizeof(longid) - 1);
    longid[sizeof(longid) - 1] = '\0';
    assert_int_equal(btl_tcp_encode_hello(1, longid, p), 0);
    assert_int_equal(btl_tcp_encode_hello(1, "", p), 0);
}

/* Random bytes: every answer is a defined status, and a success is self-consistent. */
static void test_tcp_random_input(void **state)
{
    uint8_t b[BTL_TCP_FRAME_MAX];
    unsigned seed = 12345;
    (void) state;

    for (int i = 0; i < 200000; ++i) {
        size_t n = (size_t) (rand_r(&seed) % (sizeof(b) + 1));
        for (size_t k = 0; k < n; ++k) {
            b[k] = (uint8_t) rand_r(&seed);
        }
        if (n > 0 && rand_r(&seed) % 2) {
            b[0] = BTL_TCP_MAGIC; /* get past the first check half of the time */
            if (n > 1) {
                b[1] = BTL_TCP_VERSION;
            }
        }
        btl_tcp_header_t h;
        int rc = btl_tcp_decode_header(b, n, 1 << 20, &h);
        assert_true(HERD_SUCCESS == rc || HERD_ERR_UNPACK_READ_PAST_END == rc ||
                    HERD_ERR_UNPACK_FAILURE == rc || HERD_ERR_VERSION_MISMATCH == rc);
        if (HERD_SUCCESS == rc) {
            assert_true(h.tag >= 0);
            assert_true(BTL_TCP_MSG == h.type ? h.length <= (1 << 20)
                                              : h.length <= BTL_TCP_HELLO_MAX);
        }
        uint32_t rank;
        rc = btl_tcp_decode_hello(b, n, 8, "job.1", &rank);
        assert_true(HERD_SUCCESS == rc || HERD_ERR_UNPACK_FAILURE == rc ||
                    HERD_ERR_BAD_PARAM == rc || HERD_ERR_AUTH == rc);
        if (HERD_SUCCESS == rc) {
            assert_true(rank < 8);
        }
    }
}

int main(void)
{
    const char *path = getenv("HERD_MCA_component_path");

    /* Without the folders of transport DSOs (ompi-shim/mca/btl/<name>): this test runs the
     * framework with what libherd has, and a front whose DSO is missing is dropped at init like
     * any module that cannot start; the transports themselves (UCX) are test_btl_ucx's. */
    build_component_path = calloc(1, strlen(NULL != path ? path : "") + 1);
    assert_non_null(build_component_path);
    char *copy = strdup(NULL != path ? path : ""), *save = NULL;
    for (char *f = strtok_r(copy, ":", &save); NULL != f; f = strtok_r(NULL, ":", &save)) {
        if (NULL == strstr(f, "/ompi-shim/mca/btl/")) {
            strcat(strcat(build_component_path, '\0' != build_component_path[0] ? ":" : ""), f);
        }
    }
    free(copy);
    snprintf(jobid, sizeof(jobid), "unit%d.1", (int) getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_default_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_include_and_exclude, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_component, setup, teardown),
        cmocka_unit_test_setup_teardown(test_priority_variable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stub_and_version, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dso_front, setup, teardown),
        cmocka_unit_test_setup_teardown(test_per_peer_choice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_add_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_self_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kernel_poll_interval, setup, teardown),
        cmocka_unit_test_setup_teardown(test_match_order_and_wildcards, setup, teardown),
        cmocka_unit_test_setup_teardown(test_match_posted_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_match_truncation, setup, teardown),
        cmocka_unit_test(test_sm_ring_single),
        cmocka_unit_test(test_sm_ring_producers),
        cmocka_unit_test(test_sm_attach_timeout),
        cmocka_unit_test(test_sm_fbox_single),
        cmocka_unit_test(test_sm_fbox_stale_bytes),
        cmocka_unit_test(test_sm_fbox_fork),
        cmocka_unit_test_setup_teardown(test_sm_channels_keep_order, setup, teardown),
        cmocka_unit_test(test_tcp_header),
        cmocka_unit_test(test_tcp_hello),
        cmocka_unit_test(test_tcp_random_input),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    free(build_component_path);
    return failed;
}
