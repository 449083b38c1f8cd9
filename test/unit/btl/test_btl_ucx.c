/* SPDX-License-Identifier: BSD-3-Clause */
/* btl ucx: the front's variables (defaults, a priority that reorders the transports), the
 * transport DSO missing (the module is dropped and says where it looked), the DSO's entry
 * refusing other services or parameter versions, and a loopback inside this process over real
 * UCX: the process sends to itself through its own worker, messages of 0 bytes to 8 MB with one
 * tag arrive whole and in the order sent (long ones by rendezvous, short ones eager), and the
 * modex carries the worker address. A stand-in runtime replaces libherd: no job is needed.
 * Skipped (77) when this build has no ucx component. */
#include "herd_config.h"

#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ompi-shim/mca/btl/btl.h"
#include "ompi-shim/mca/btl/ucx/btl_ucx.h"
#include "ompi-shim/proc/proc.h"
#include "opal/mca/base/mca_var.h"
#include "opal/mca/mca.h"
#include "support/capture.h"

#define UCX_DSO  HERD_TEST_BUILDDIR "/../../ompi-shim/mca/btl/ucx/.libs/herd-btl-ucx.so"
#define JOB_SIZE 8u
#define MY_RANK  2u

static char *full_path;    /* the build's component path */
static char *path_without; /* the same without the ucx transport's folder */
static herd_test_capture_t stderr_capture;

/* ------------------------------------------------------------------------------------------ */
/* the stand-in runtime: one modex slot, for this process's own worker address */

static void *modex_value;
static size_t modex_len;
static int modex_puts, modex_commits;

static int rte_peer_node(uint32_t peer, uint32_t *node)
{
    *node = peer / 4;
    return peer < JOB_SIZE ? HERD_SUCCESS : HERD_ERR_BAD_PARAM;
}

static int rte_peer_endpoint(uint32_t peer, const char *fabric, void *addr, size_t *len)
{
    (void) peer, (void) fabric, (void) addr, (void) len;
    return HERD_ERR_NOT_FOUND;
}

static int rte_put(const char *key, const void *value, size_t len)
{
    if (0 != strcmp(key, BTL_UCX_MODEX_KEY)) {
        return HERD_SUCCESS; /* tcp's, in the tests that start it */
    }
    free(modex_value);
    modex_value = malloc(len);
    assert_non_null(modex_value);
    memcpy(modex_value, value, len);
    modex_len = len;
    ++modex_puts;
    return HERD_SUCCESS;
}

static int rte_commit(void)
{
    ++modex_commits;
    return HERD_SUCCESS;
}

static int rte_get(uint32_t peer, const char *key, void **value, size_t *len)
{
    if (MY_RANK != peer || 0 != strcmp(key, BTL_UCX_MODEX_KEY) || NULL == modex_value) {
        return HERD_ERR_NOT_FOUND;
    }
    *value = malloc(modex_len);
    memcpy(*value, modex_value, modex_len);
    *len = modex_len;
    return HERD_SUCCESS;
}

static const char *rte_last_error(void)
{
    return "no such key in the unit test's modex";
}

static ompi_btl_rte_t rte = {
    .my_rank = MY_RANK,
    .job_size = JOB_SIZE,
    .my_node = 0,
    .jobid = "unit.1",
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
    setenv("HERD_MCA_component_path", full_path, 1);
    unsetenv("HERD_MCA_btl");
    unsetenv("HERD_MCA_btl_base_verbose");
    unsetenv("HERD_MCA_btl_ucx_priority");
    assert_int_equal(ompi_proc_init(JOB_SIZE), HERD_SUCCESS);
    return 0;
}

static int teardown(void **state)
{
    (void) state;
    ompi_btl_base_close();
    ompi_proc_finalize();
    free(modex_value);
    modex_value = NULL;
    unsetenv("HERD_MCA_btl");
    unsetenv("HERD_MCA_btl_base_dso_path");
    unsetenv("HERD_MCA_btl_base_verbose");
    return 0;
}

static char *value_of(const char *name)
{
    char *value = NULL;
    int index = opal_mca_var_find(name);
    assert_true(index >= 0);
    assert_int_equal(opal_mca_var_value_string(index, &value), HERD_SUCCESS);
    return value;
}

/* The selected transports in priority order, "self,ucx". */
static const char *selected(char *names, size_t size)
{
    const opal_mca_framework_t *fw = &ompi_btl_base_framework;
    size_t used = 0;

    names[0] = '\0';
    for (size_t i = 0; i < fw->num_selected; ++i) {
        const ompi_btl_module_t *m = fw->selected[i]->module;
        used += (size_t) snprintf(names + used, size - used, "%s%s", i ? "," : "", m->name);
    }
    return names;
}

/* ------------------------------------------------------------------------------------------ */
/* the front */

/* The variables exist with their defaults once the framework registered (no UCX needed), and
 * the priority puts ucx between sm and tcp, or after tcp when lowered. */
static void test_variables(void **state)
{
    char names[256];
    (void) state;

    setenv("HERD_MCA_component_path", path_without, 1);
    setenv("HERD_MCA_btl_base_dso_path", path_without, 1); /* not an installed one either */
    setenv("HERD_MCA_btl", "self,sm,tcp,ucx", 1);
    herd_test_capture_start(&stderr_capture);
    int rc = ompi_btl_base_open(&rte);
    free(herd_test_capture_stop(&stderr_capture));
    assert_int_equal(rc, HERD_SUCCESS);
    assert_string_equal(selected(names, sizeof(names)), "self,sm,ucx,tcp");
    struct {
        const char *name, *value;
    } defaults[] = {
        {"btl_ucx_priority", "25"},      {"btl_ucx_tls", ""},
        {"btl_ucx_eager_limit", "8192"}, {"btl_ucx_error_handling", "auto"},
        {"btl_ucx_close_timeout", "10"},
    };
    for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); ++i) {
        char *value = value_of(defaults[i].name);
        if (0 != strcmp(value, defaults[i].value)) {
            fail_msg("%s is \"%s\", expected \"%s\"", defaults[i].name, value, defaults[i].value);
        }
        free(value);
    }
    ompi_btl_base_close();

    setenv("HERD_MCA_btl_ucx_priority", "5", 1);
    herd_test_capture_start(&stderr_capture);
    rc = ompi_btl_base_open(&rte);
    free(herd_test_capture_stop(&stderr_capture));
    assert_int_equal(rc, HERD_SUCCESS);
    assert_string_equal(selected(names, sizeof(names)), "self,sm,tcp,ucx");
    unsetenv("HERD_MCA_btl_ucx_priority");
}

/* No DSO on the path: ucx is selected but cannot start; the reason, where it looked and how to
 * leave it out are said at verbose 1, and a peer only ucx could reach is unreachable. */
static void test_dso_missing(void **state)
{
    (void) state;

    setenv("HERD_MCA_component_path", path_without, 1);
    setenv("HERD_MCA_btl_base_dso_path", path_without, 1); /* not an installed one either */
    setenv("HERD_MCA_btl", "self,ucx", 1);
    setenv("HERD_MCA_btl_base_verbose", "1", 1);
    herd_test_capture_start(&stderr_capture);
    int rc = ompi_btl_base_open(&rte);
    char *err = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(rc, HERD_SUCCESS);
    assert_contains(err, "herd-btl-ucx.so is in no folder of btl_base_dso_path");
    assert_contains(err, "--mca btl ^ucx");
    assert_contains(err, "rank 2: the ucx transport could not start");
    free(err);
    herd_test_capture_start(&stderr_capture);
    rc = ompi_btl_base_send(5, 1, "x", 1);
    free(herd_test_capture_stop(&stderr_capture));
    assert_int_equal(rc, HERD_ERR_UNREACH);
    assert_int_equal(ompi_btl_base_send(MY_RANK, 1, "x", 1), HERD_SUCCESS);
    assert_string_equal(ompi_btl_base_peer_module(MY_RANK)->name, "self");
    assert_int_equal(modex_puts, 0);
}

/* The DSO's entry checks both tables' versions and the parameters' before it serves. */
static void test_entry_versions(void **state)
{
    char why[512];
    btl_ucx_params_t params = {.version = BTL_UCX_PARAMS_VERSION};
    ompi_btl_dso_services_t svc = {
        .abi_version = OMPI_BTL_DSO_ABI_VERSION,
        .interface_version = OPAL_MCA_btl_INTERFACE_VERSION,
        .params = &params,
    };
    (void) state;

    void *handle = dlopen(UCX_DSO, RTLD_NOW | RTLD_LOCAL);
    if (NULL == handle) {
        fail_msg("cannot load %s: %s", UCX_DSO, dlerror());
    }
    ompi_btl_dso_entry_fn_t entry;
    *(void **) &entry = dlsym(handle, "herd_btl_ucx_transport");
    assert_non_null(entry);

    svc.abi_version = 999;
    why[0] = '\0';
    assert_null(entry(&svc, why, sizeof(why)));
    assert_contains(why, "built for services version 1");
    assert_contains(why, "libherd offers 999");
    svc.abi_version = OMPI_BTL_DSO_ABI_VERSION;
    svc.interface_version = 7;
    assert_null(entry(&svc, why, sizeof(why)));
    assert_contains(why, "reinstall herd");
    svc.interface_version = OPAL_MCA_btl_INTERFACE_VERSION;
    params.version = 0;
    assert_null(entry(&svc, why, sizeof(why)));
    assert_contains(why, "ucx parameters version");
    params.version = BTL_UCX_PARAMS_VERSION;
    const ompi_btl_module_t *module = entry(&svc, why, sizeof(why));
    assert_non_null(module);
    assert_string_equal(module->name, "ucx");
    /* never unloaded while the process runs (UCX), as the front does */
    (void) handle;
}

/* ------------------------------------------------------------------------------------------ */
/* the transport, over real UCX */

static void fill(unsigned char *buf, size_t len, unsigned step)
{
    for (size_t i = 0; i < len; ++i) {
        buf[i] = (unsigned char) (i * 7u + step * 31u + (i >> 10));
    }
}

/* This process sends to itself through UCX: the modex put at init, the get and the endpoint on
 * the first message, and 0-byte to 8 MB messages with one tag, all sent before the first is
 * received, received whole and in the order sent (a short message sent after a long one waits
 * for it). */
static void test_loopback(void **state)
{
    static const size_t sizes[] = {8, 200000, 0, 16, 8000000, 8192, 8193, 1, 3000000, 64};
    enum { N = sizeof(sizes) / sizeof(sizes[0]) };
    unsigned char *out = malloc(8000000), *in = malloc(8000000);
    bool got_all = true;
    (void) state;

    assert_non_null(out);
    assert_non_null(in);
    setenv("HERD_MCA_btl", "ucx", 1);
    setenv("HERD_MCA_btl_base_verbose", "10", 1);
    modex_puts = modex_commits = 0;
    herd_test_capture_start(&stderr_capture);
    int rc = ompi_btl_base_open(&rte);
    /* every message is sent before any is received: long ones are copied and wait */
    for (unsigned i = 0; HERD_SUCCESS == rc && i < N; ++i) {
        fill(out, sizes[i], i);
        rc = ompi_btl_base_send(MY_RANK, 4, out, sizes[i]);
        memset(out, 0xee, sizes[i]); /* the buffer is ours again on return */
    }
    for (unsigned i = 0; HERD_SUCCESS == rc && i < N; ++i) {
        ompi_btl_recv_t r = {
            .want_src = MY_RANK, .want_tag = OMPI_BTL_ANY_TAG, .buf = in, .cap = 8000000};
        rc = ompi_btl_base_post_recv(&r);
        for (long k = 0; HERD_SUCCESS == rc && !r.done && k < 50000000L; ++k) {
            rc = ompi_btl_base_progress() < 0 ? HERD_ERROR : HERD_SUCCESS;
        }
        fill(out, sizes[i], i);
        if (!r.done || HERD_SUCCESS != r.status || MY_RANK != r.src || 4 != r.tag ||
            r.len != sizes[i] || 0 != memcmp(in, out, sizes[i])) {
            got_all = false;
            fprintf(stderr, "message %u (%zu bytes): done %d, status %d, %zu bytes, tag %d\n", i,
                    sizes[i], r.done, r.status, r.len, r.tag);
            break;
        }
    }
    char *err = herd_test_capture_stop(&stderr_capture);
    if (HERD_SUCCESS != rc || !got_all) {
        fail_msg("open, send or receive failed (%d):\n%s", rc, err);
    }
    assert_contains(err, "rank 2: ucx 1.");
    assert_contains(err, "published by the modex");
    assert_contains(err, "rank 2: ucx connects to rank 2");
    assert_contains(err, "rank 2 -> rank 2: ucx");
    /* the long ones came by rendezvous, and the short ones sent after them waited */
    assert_contains(err, "rank 2: ucx holds message 1 from rank 2 (200000 bytes, rendezvous)");
    assert_contains(err, "rank 2: ucx holds message 2 from rank 2 (0 bytes) until the earlier");
    free(err);
    assert_int_equal(modex_puts, 1);
    assert_true(modex_commits >= 1);
    assert_string_equal(ompi_btl_base_peer_module(MY_RANK)->name, "ucx");
    assert_int_equal(ompi_btl_base_num_unexpected(), 0);
    herd_test_capture_start(&stderr_capture);
    ompi_btl_base_close();
    err = herd_test_capture_stop(&stderr_capture);
    assert_contains(err, "peers per btl: ucx 1; 0 unexpected messages");
    free(err);
    /* the endpoint is gone with the module */
    assert_null(ompi_proc_find(MY_RANK)->endpoint[HERD_ENDPOINT_TAG_UCX]);
    free(out);
    free(in);
}

/* A UCX_TLS UCX does not know: init fails with the help text naming btl_ucx_tls, the module is
 * dropped, and the framework reports that nothing could start. */
static void test_bad_tls(void **state)
{
    (void) state;

    setenv("HERD_MCA_btl", "ucx", 1);
    setenv("HERD_MCA_btl_ucx_tls", "nosuchtransport", 1);
    herd_test_capture_start(&stderr_capture);
    int rc = ompi_btl_base_open(&rte);
    char *err = herd_test_capture_stop(&stderr_capture);
    unsetenv("HERD_MCA_btl_ucx_tls");
    assert_int_equal(rc, HERD_ERR_NOT_FOUND);
    assert_contains(err, "cannot start the ucx transport");
    assert_contains(err, "btl_ucx_tls \"nosuchtransport\"");
    free(err);
}

int main(void)
{
    const char *path = getenv("HERD_MCA_component_path");
    bool have_ucx = false;

    for (const opal_mca_component_t *const *c = ompi_btl_base_framework.static_components;
         NULL != *c; ++c) {
        have_ucx = have_ucx || 0 == strcmp((*c)->name, "ucx");
    }
    if (!have_ucx) {
        printf("SKIP: this build has no ucx btl component\n");
        return 77;
    }
    full_path = strdup(NULL != path ? path : "");
    path_without = calloc(1, strlen(full_path) + 1);
    char *copy = strdup(full_path), *save = NULL;
    for (char *f = strtok_r(copy, ":", &save); NULL != f; f = strtok_r(NULL, ":", &save)) {
        if (NULL == strstr(f, "/ompi-shim/mca/btl/ucx")) {
            strcat(strcat(path_without, '\0' != path_without[0] ? ":" : ""), f);
        }
    }
    free(copy);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_variables, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dso_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_entry_versions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loopback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_tls, setup, teardown),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    free(full_path);
    free(path_without);
    return failed;
}
