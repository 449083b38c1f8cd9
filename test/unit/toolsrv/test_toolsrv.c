/* SPDX-License-Identifier: BSD-3-Clause */
/* toolsrv: which component is selected (pmix by default when built, none when excluded, a stub
 * DSO that outranks it, one built for another interface version), and that starting a tool
 * server is quiet and harmless when there is none: the host runs on without. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/event/event.h"
#include "opal/mca/mca.h"
#include "orte/mca/toolsrv/toolsrv.h"
#include "support/capture.h"

#define STUB_DIR HERD_TEST_BUILDDIR "/toolsrv/stubs"

static char *build_component_path;
static herd_test_capture_t stderr_capture;

/* What the host was asked. */
static struct {
    int jobs_calls;
    int signals;
    int last_signo;
} asked;

static void host_jobs(bool with_procs, orte_toolsrv_jobs_cb_t cb, void *cbdata, void *arg)
{
    orte_toolsrv_job_t job = {.nspace = "job.1", .num_procs = 2};
    asked.jobs_calls++;
    cb(HERD_SUCCESS, &job, 1, cbdata);
}

static int host_signal_job(const char *nspace, int signo, uint32_t uid, void *arg)
{
    asked.signals++;
    asked.last_signo = signo;
    return 0 == strcmp(nspace, "job.1") ? HERD_SUCCESS : HERD_ERR_NOT_FOUND;
}

static int setup(void **state)
{
    setenv("HERD_MCA_component_path", build_component_path, 1);
    unsetenv("HERD_MCA_toolsrv");
    unsetenv("HERD_MCA_toolsrv_stub_priority");
    setenv("HERD_MCA_mca_base_component_show_load_errors", "1", 1);
    memset(&asked, 0, sizeof(asked));
    return 0;
}

static int teardown(void **state)
{
    orte_toolsrv_base_close();
    assert_false(orte_toolsrv_base_framework.opened);
    return 0;
}

static void use_stub_components(void)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s:%s", STUB_DIR, build_component_path);
    setenv("HERD_MCA_component_path", path, 1);
}

static bool has_component(const char *name)
{
    const opal_mca_framework_t *fw = &orte_toolsrv_base_framework;
    for (size_t i = 0; i < fw->num_components; i++) {
        if (0 == strcmp(fw->components[i].component->name, name)) {
            return true;
        }
    }
    return false;
}

static void test_default_is_pmix(void **state)
{
    assert_null(orte_toolsrv_base_module());
    int rc = orte_toolsrv_base_open();
#ifdef HERD_TEST_HAVE_PMIX
    assert_int_equal(rc, HERD_SUCCESS);
    assert_string_equal(orte_toolsrv_base_module()->name, "pmix");
#else
    assert_int_equal(rc, HERD_ERR_NOT_FOUND);
#endif
}

/* ^pmix: no tool server; starting one is quiet, the host just has none. */
static void test_excluded_means_none(void **state)
{
    opal_event_base_t *base = NULL;
    assert_int_equal(opal_event_base_create(&base), HERD_SUCCESS);
    orte_toolsrv_host_t host = {
        .base = base, .name = "test", .jobs = host_jobs, .signal_job = host_signal_job};
    orte_toolsrv_t *server = (orte_toolsrv_t *) &host; /* must be reset */
    setenv("HERD_MCA_toolsrv", "^pmix", 1);
    herd_test_capture_start(&stderr_capture);
    orte_toolsrv_base_start(&host, &server);
    char *err = herd_test_capture_stop(&stderr_capture);
    assert_null(server);
    assert_string_equal(err, "");
    free(err);
    assert_false(orte_toolsrv_base_framework.opened);
    orte_toolsrv_base_stop(NULL);
    assert_int_equal(asked.jobs_calls, 0);
    opal_event_base_free(base);
}

/* A DSO with a higher priority wins and is started with the host; the one built for another
 * interface version is refused with the reason. */
static void test_stub_outranks_and_calls_host(void **state)
{
    opal_event_base_t *base = NULL;
    assert_int_equal(opal_event_base_create(&base), HERD_SUCCESS);
    orte_toolsrv_host_t host = {
        .base = base, .name = "test", .jobs = host_jobs, .signal_job = host_signal_job};
    orte_toolsrv_t *server = NULL;
    use_stub_components();
    herd_test_capture_start(&stderr_capture);
    orte_toolsrv_base_start(&host, &server);
    char *err = herd_test_capture_stop(&stderr_capture);
    assert_non_null(server);
    assert_string_equal(orte_toolsrv_base_module()->name, "stub");
    assert_int_equal(asked.jobs_calls, 1);
    assert_int_equal(asked.signals, 1);
    assert_int_equal(asked.last_signo, SIGTERM);
    assert_false(has_component("badiface"));
    assert_non_null(strstr(err, "herd_toolsrv_badiface"));
    free(err);
    orte_toolsrv_base_stop(server);
    assert_false(orte_toolsrv_base_framework.opened);

    /* excluded, the stub is not used */
    setenv("HERD_MCA_mca_base_component_show_load_errors", "0", 1);
    setenv("HERD_MCA_toolsrv", "^stub", 1);
    int rc = orte_toolsrv_base_open();
#ifdef HERD_TEST_HAVE_PMIX
    assert_int_equal(rc, HERD_SUCCESS);
    assert_string_equal(orte_toolsrv_base_module()->name, "pmix");
#else
    assert_int_equal(rc, HERD_ERR_NOT_FOUND);
#endif
    opal_event_base_free(base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_default_is_pmix, setup, teardown),
        cmocka_unit_test_setup_teardown(test_excluded_means_none, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stub_outranks_and_calls_host, setup, teardown),
    };
    const char *path = getenv("HERD_MCA_component_path");
    build_component_path = strdup(NULL != path ? path : "");
    if (NULL == build_component_path) {
        return 1;
    }
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    free(build_component_path);
    return failed;
}
