/* SPDX-License-Identifier: BSD-3-Clause */
/* errmgr: which component is selected (default, include, exclude, priorities, a stub DSO that
 * outranks the real ones, one built for another interface version), what abort and continue
 * decide for each kind of failure, and the words a failure is described with. */
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

#include "opal/mca/mca.h"
#include "orte/mca/errmgr/errmgr.h"
#include "support/capture.h"

#define STUB_DIR HERD_TEST_BUILDDIR "/errmgr/stubs"

/* HERD_MCA_component_path as test/uninstalled-env.sh set it (the real DSO components). */
static char *build_component_path;
static herd_test_capture_t stderr_capture;

static const orte_errmgr_event_t all_events[] = {
    ORTE_ERRMGR_PROC_FAILED,
    ORTE_ERRMGR_PROC_START_FAILED,
    ORTE_ERRMGR_DAEMON_LOST,
    ORTE_ERRMGR_PROC_LOST,
};
#define NUM_EVENTS (sizeof(all_events) / sizeof(all_events[0]))

/* ------------------------------------------------------------------------------------------ */
/* helpers */

static int setup(void **state)
{
    setenv("HERD_MCA_component_path", build_component_path, 1);
    unsetenv("HERD_MCA_errmgr");
    unsetenv("HERD_MCA_errmgr_base_verbose");
    unsetenv("HERD_MCA_errmgr_abort_priority");
    unsetenv("HERD_MCA_errmgr_continue_priority");
    unsetenv("HERD_MCA_errmgr_stub_priority");
    unsetenv("HERD_MCA_errmgr_stub_answer");
    setenv("HERD_MCA_mca_base_component_show_load_errors", "1", 1);
    return 0;
}

static int teardown(void **state)
{
    orte_errmgr_base_close();
    assert_false(orte_errmgr_base_framework.opened);
    return 0;
}

/* Opens the framework with this selection (NULL: none) and returns the selected module's
 * name; fails the test when nothing is selected. */
static const char *open_with(const char *selection)
{
    const orte_errmgr_module_t *module;

    if (NULL != selection) {
        setenv("HERD_MCA_errmgr", selection, 1);
    }
    assert_int_equal(orte_errmgr_base_open(), HERD_SUCCESS);
    module = orte_errmgr_base_module();
    assert_non_null(module);
    assert_non_null(module->decide);
    return module->name;
}

/* Closes the framework and forgets the selection, for a second open in one test. */
static void close_and_reset(void)
{
    orte_errmgr_base_close();
    unsetenv("HERD_MCA_errmgr");
}

static bool has_component(const char *name)
{
    const opal_mca_framework_t *fw = &orte_errmgr_base_framework;

    for (size_t i = 0; i < fw->num_components; i++) {
        if (0 == strcmp(fw->components[i].component->name, name)) {
            return true;
        }
    }
    return false;
}

static orte_errmgr_failure_t failure_of(orte_errmgr_event_t event)
{
    bool daemon = ORTE_ERRMGR_DAEMON_LOST == event;

    return (orte_errmgr_failure_t){
        .event = event,
        .rank = daemon ? UINT32_MAX : 3,
        .node = "node-a",
        .pid = 4242,
        .exit_code = ORTE_ERRMGR_PROC_FAILED == event ? 3 : 0,
    };
}

/* Puts the stub components' folder before the real ones on the component path. */
static void use_stub_components(void)
{
    char path[4096];

    snprintf(path, sizeof(path), "%s:%s", STUB_DIR, build_component_path);
    setenv("HERD_MCA_component_path", path, 1);
}

/* ------------------------------------------------------------------------------------------ */
/* selection */

static void test_default_is_abort(void **state)
{
    const opal_mca_framework_t *fw = &orte_errmgr_base_framework;
    const orte_errmgr_module_t *module;

    assert_null(orte_errmgr_base_module());
    assert_string_equal(open_with(NULL), "abort");
    assert_true(has_component("abort"));
    /* continue (10) cannot beat abort (50): left unloaded, unless the build is static */
    assert_int_equal(has_component("continue"), 0 == fw->num_deferred);
    assert_int_equal(opal_mca_framework_load_deferred(&orte_errmgr_base_framework),
                     HERD_SUCCESS);
    assert_true(has_component("continue"));
    assert_int_equal(fw->num_selected, 1);
    assert_int_equal(fw->selected[0]->priority, 50);
    module = orte_errmgr_base_module();
    /* a second open keeps the selection, and one close undoes both */
    assert_int_equal(orte_errmgr_base_open(), HERD_SUCCESS);
    assert_ptr_equal(orte_errmgr_base_module(), module);
    assert_int_equal(fw->num_selected, 1);
    orte_errmgr_base_close();
    assert_false(fw->opened);
    assert_null(orte_errmgr_base_module());
}

static void test_include_continue(void **state)
{
    assert_string_equal(open_with("continue"), "continue");
    assert_int_equal(orte_errmgr_base_framework.selected[0]->priority, 10);
}

static void test_exclude_abort(void **state)
{
    assert_string_equal(open_with("^abort"), "continue");
}

static void test_include_both_takes_priority(void **state)
{
    assert_string_equal(open_with("continue,abort"), "abort");
}

static void test_priority_variables(void **state)
{
    setenv("HERD_MCA_errmgr_continue_priority", "60", 1);
    assert_string_equal(open_with(NULL), "continue");
    assert_int_equal(orte_errmgr_base_framework.selected[0]->priority, 60);
    close_and_reset();
    unsetenv("HERD_MCA_errmgr_continue_priority");
    setenv("HERD_MCA_errmgr_abort_priority", "5", 1);
    assert_string_equal(open_with(NULL), "continue");
    close_and_reset();
    /* a value set for one open is not the default of the next (static builds keep the
     * component's storage between opens) */
    unsetenv("HERD_MCA_errmgr_abort_priority");
    assert_string_equal(open_with(NULL), "abort");
    assert_int_equal(orte_errmgr_base_framework.selected[0]->priority, 50);
}

static void test_nothing_left(void **state)
{
    setenv("HERD_MCA_errmgr", "^abort,continue,restart", 1);
    assert_int_equal(orte_errmgr_base_open(), HERD_ERR_NOT_FOUND);
    assert_false(orte_errmgr_base_framework.opened);
    assert_null(orte_errmgr_base_module());
}

static void test_unknown_component(void **state)
{
    char *err;
    int rc;

    setenv("HERD_MCA_errmgr", "abrot", 1);
    herd_test_capture_start(&stderr_capture);
    rc = orte_errmgr_base_open();
    err = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(rc, HERD_ERR_BAD_PARAM);
    assert_null(orte_errmgr_base_module());
    assert_contains(err, "\"abrot\"");
    assert_contains(err, "abort, continue");
    free(err);
}

/* A DSO on the component path with a higher priority wins, and is the one asked. */
static void test_stub_outranks_and_is_asked(void **state)
{
    orte_errmgr_failure_t lost = failure_of(ORTE_ERRMGR_DAEMON_LOST);
    const char *name;
    char *err;

    use_stub_components();
    herd_test_capture_start(&stderr_capture);
    name = open_with(NULL);
    err = herd_test_capture_stop(&stderr_capture);
    assert_string_equal(name, "stub");
    assert_int_equal(orte_errmgr_base_framework.selected[0]->priority, 90);
    /* abort would end the job; the stub continues after anything */
    assert_int_equal(orte_errmgr_base_decide(&lost), ORTE_ERRMGR_CONTINUE);
    /* the one built for interface version 7 is refused, with the reason */
    assert_false(has_component("badiface"));
    assert_contains(err, "herd_errmgr_badiface");
    assert_contains(err, "errmgr interface version 7");
    free(err);
    close_and_reset();

    setenv("HERD_MCA_mca_base_component_show_load_errors", "0", 1);
    assert_string_equal(open_with("^stub"), "abort");
    close_and_reset();
    assert_string_equal(open_with("continue,stub"), "stub");
    close_and_reset();
    setenv("HERD_MCA_errmgr_stub_priority", "1", 1);
    assert_string_equal(open_with("continue,stub"), "continue");
}

/* A module answering something that is not an action (a DSO built against a newer interface)
 * gets the job aborted, and the verbose output says why. */
static void test_base_decide_rejects_non_action(void **state)
{
    orte_errmgr_failure_t failed = failure_of(ORTE_ERRMGR_PROC_FAILED);
    char *err;

    use_stub_components();
    setenv("HERD_MCA_mca_base_component_show_load_errors", "0", 1);
    setenv("HERD_MCA_errmgr_base_verbose", "1", 1);
    setenv("HERD_MCA_errmgr_stub_answer", "0", 1);
    assert_string_equal(open_with("stub"), "stub");
    assert_int_equal(orte_errmgr_base_module()->decide(&failed), 0);
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(orte_errmgr_base_decide(&failed), ORTE_ERRMGR_ABORT_JOB);
    err = herd_test_capture_stop(&stderr_capture);
    assert_contains(err, "errmgr stub answered 0, which is not an action: aborting the job");
    free(err);
    close_and_reset();
    setenv("HERD_MCA_errmgr_stub_answer", "7", 1);
    assert_string_equal(open_with("stub"), "stub");
    assert_int_equal(orte_errmgr_base_decide(&failed), ORTE_ERRMGR_ABORT_JOB);
}

/* ------------------------------------------------------------------------------------------ */
/* decisions */

static void test_abort_decides(void **state)
{
    const orte_errmgr_module_t *module;

    assert_string_equal(open_with("abort"), "abort");
    module = orte_errmgr_base_module();
    for (size_t i = 0; i < NUM_EVENTS; i++) {
        orte_errmgr_failure_t failure = failure_of(all_events[i]);
        assert_int_equal(module->decide(&failure), ORTE_ERRMGR_ABORT_JOB);
        assert_int_equal(orte_errmgr_base_decide(&failure), ORTE_ERRMGR_ABORT_JOB);
    }
}

static void test_continue_decides(void **state)
{
    const orte_errmgr_module_t *module;
    orte_errmgr_failure_t failed = failure_of(ORTE_ERRMGR_PROC_FAILED);
    orte_errmgr_failure_t killed = failure_of(ORTE_ERRMGR_PROC_FAILED);
    orte_errmgr_failure_t not_started = failure_of(ORTE_ERRMGR_PROC_START_FAILED);
    orte_errmgr_failure_t lost = failure_of(ORTE_ERRMGR_DAEMON_LOST);
    orte_errmgr_failure_t unknown = failure_of((orte_errmgr_event_t) 99);

    killed.signaled = true;
    killed.signo = SIGKILL;
    assert_string_equal(open_with("continue"), "continue");
    module = orte_errmgr_base_module();
    assert_int_equal(module->decide(&failed), ORTE_ERRMGR_CONTINUE);
    assert_int_equal(module->decide(&killed), ORTE_ERRMGR_CONTINUE);
    assert_int_equal(module->decide(&not_started), ORTE_ERRMGR_CONTINUE);
    /* the job's routing tree through that node is gone */
    assert_int_equal(module->decide(&lost), ORTE_ERRMGR_ABORT_JOB);
    orte_errmgr_failure_t proc_lost = failure_of(ORTE_ERRMGR_PROC_LOST);
    assert_int_equal(module->decide(&proc_lost), ORTE_ERRMGR_ABORT_JOB);
    /* an event it does not know is not assumed to be harmless */
    assert_int_equal(module->decide(&unknown), ORTE_ERRMGR_ABORT_JOB);
    assert_int_equal(orte_errmgr_base_decide(&failed), ORTE_ERRMGR_CONTINUE);
    assert_int_equal(orte_errmgr_base_decide(&lost), ORTE_ERRMGR_ABORT_JOB);
}

static void test_restart_decides(void **state)
{
    orte_errmgr_failure_t failed = failure_of(ORTE_ERRMGR_PROC_FAILED);
    orte_errmgr_failure_t not_started = failure_of(ORTE_ERRMGR_PROC_START_FAILED);
    orte_errmgr_failure_t lost = failure_of(ORTE_ERRMGR_DAEMON_LOST);

    assert_string_equal(open_with("restart"), "restart");
    /* the lowest priority: only when asked for */
    assert_int_equal(orte_errmgr_base_framework.selected[0]->priority, 5);
    const orte_errmgr_module_t *module = orte_errmgr_base_module();
    /* three restarts by default, then the job ends */
    for (uint32_t k = 0; k < 3; ++k) {
        failed.restarts = k;
        assert_int_equal(orte_errmgr_base_decide(&failed), ORTE_ERRMGR_RESTART_PROC);
    }
    failed.restarts = 3;
    assert_int_equal(module->decide(&failed), ORTE_ERRMGR_ABORT_JOB);
    /* what kept it from starting is still there; a daemon lost is asked only once its
     * processes could not be moved */
    assert_int_equal(module->decide(&not_started), ORTE_ERRMGR_ABORT_JOB);
    assert_int_equal(module->decide(&lost), ORTE_ERRMGR_ABORT_JOB);
    /* a process lost with its node moves to another node, counted as a restart */
    orte_errmgr_failure_t proc_lost = failure_of(ORTE_ERRMGR_PROC_LOST);
    for (uint32_t k = 0; k < 3; ++k) {
        proc_lost.restarts = k;
        assert_int_equal(orte_errmgr_base_decide(&proc_lost), ORTE_ERRMGR_RESTART_PROC);
    }
    proc_lost.restarts = 3;
    assert_int_equal(orte_errmgr_base_decide(&proc_lost), ORTE_ERRMGR_ABORT_JOB);
    close_and_reset();
    setenv("HERD_MCA_errmgr_restart_max", "1", 1);
    assert_string_equal(open_with("restart"), "restart");
    failed.restarts = 1;
    assert_int_equal(orte_errmgr_base_decide(&failed), ORTE_ERRMGR_ABORT_JOB);
    proc_lost.restarts = 1;
    assert_int_equal(orte_errmgr_base_decide(&proc_lost), ORTE_ERRMGR_ABORT_JOB);
    proc_lost.restarts = 0;
    assert_int_equal(orte_errmgr_base_decide(&proc_lost), ORTE_ERRMGR_RESTART_PROC);
    close_and_reset();
    /* a negative maximum is a mistake: nothing is selected, and it is said */
    setenv("HERD_MCA_errmgr_restart_max", "-1", 1);
    setenv("HERD_MCA_errmgr", "restart", 1);
    herd_test_capture_start(&stderr_capture);
    assert_int_not_equal(orte_errmgr_base_open(), HERD_SUCCESS);
    char *err = herd_test_capture_stop(&stderr_capture);
    assert_contains(err, "errmgr_restart_max is -1");
    free(err);
    unsetenv("HERD_MCA_errmgr_restart_max");
}

static void test_base_decide_restart_only_for_failures(void **state)
{
    orte_errmgr_failure_t lost = failure_of(ORTE_ERRMGR_DAEMON_LOST);

    /* a module answering restart for a lost daemon: nothing could carry it out */
    use_stub_components();
    setenv("HERD_MCA_mca_base_component_show_load_errors", "0", 1);
    setenv("HERD_MCA_errmgr_stub_answer", "3", 1);
    assert_string_equal(open_with("stub"), "stub");
    assert_int_equal(orte_errmgr_base_decide(&lost), ORTE_ERRMGR_ABORT_JOB);
    /* a process lost with its node can be moved: restart is an answer there */
    orte_errmgr_failure_t proc_lost = failure_of(ORTE_ERRMGR_PROC_LOST);
    assert_int_equal(orte_errmgr_base_decide(&proc_lost), ORTE_ERRMGR_RESTART_PROC);
}

static void test_base_decide_without_module(void **state)
{
    orte_errmgr_failure_t failed = failure_of(ORTE_ERRMGR_PROC_FAILED);

    /* not open: nobody decided, so the job must not go on */
    assert_int_equal(orte_errmgr_base_decide(&failed), ORTE_ERRMGR_ABORT_JOB);
    assert_string_equal(open_with("continue"), "continue");
    assert_int_equal(orte_errmgr_base_decide(NULL), ORTE_ERRMGR_ABORT_JOB);
    assert_int_equal(orte_errmgr_base_decide(&failed), ORTE_ERRMGR_CONTINUE);
}

static void test_base_decide_verbose(void **state)
{
    orte_errmgr_failure_t failed = failure_of(ORTE_ERRMGR_PROC_FAILED);
    orte_errmgr_failure_t lost = failure_of(ORTE_ERRMGR_DAEMON_LOST);
    char *err;

    lost.node = "node-b";
    assert_string_equal(open_with("continue"), "continue");
    herd_test_capture_start(&stderr_capture);
    orte_errmgr_base_decide(&failed);
    err = herd_test_capture_stop(&stderr_capture);
    assert_string_equal(err, ""); /* quiet by default */
    free(err);
    orte_errmgr_base_close();

    setenv("HERD_MCA_errmgr_base_verbose", "5", 1);
    assert_string_equal(open_with("continue"), "continue");
    herd_test_capture_start(&stderr_capture);
    orte_errmgr_base_decide(&failed);
    orte_errmgr_base_decide(&lost);
    err = herd_test_capture_stop(&stderr_capture);
    assert_contains(err, "rank 3 on node-a exited with status 3: errmgr continue decides to "
                         "continue");
    assert_contains(err, "the daemon on node-b was lost: errmgr continue decides to abort the "
                         "job");
    free(err);
}

/* ------------------------------------------------------------------------------------------ */
/* descriptions */

static void test_describe(void **state)
{
    orte_errmgr_failure_t failure = failure_of(ORTE_ERRMGR_PROC_FAILED);
    char text[128];

    assert_ptr_equal(orte_errmgr_failure_describe(&failure, text, sizeof(text)), text);
    assert_string_equal(text, "exited with status 3");
    failure.signaled = true;
    failure.signo = SIGKILL;
    orte_errmgr_failure_describe(&failure, text, sizeof(text));
    /* the tests run in the C locale, so the signal's name is exact */
    assert_string_equal(text, "was killed by signal 9 (Killed)");
    failure.signo = SIGSEGV;
    orte_errmgr_failure_describe(&failure, text, sizeof(text));
    assert_string_equal(text, "was killed by signal 11 (Segmentation fault)");

    failure = failure_of(ORTE_ERRMGR_PROC_START_FAILED);
    orte_errmgr_failure_describe(&failure, text, sizeof(text));
    assert_string_equal(text, "could not be started");
    failure = failure_of(ORTE_ERRMGR_DAEMON_LOST);
    orte_errmgr_failure_describe(&failure, text, sizeof(text));
    assert_string_equal(text, "was lost");
    failure = failure_of(ORTE_ERRMGR_PROC_LOST);
    orte_errmgr_failure_describe(&failure, text, sizeof(text));
    assert_string_equal(text, "was lost with its node");
    failure = failure_of((orte_errmgr_event_t) 99);
    orte_errmgr_failure_describe(&failure, text, sizeof(text));
    assert_string_equal(text, "failed (errmgr event 99)");
}

static void test_describe_edges(void **state)
{
    orte_errmgr_failure_t failure = failure_of(ORTE_ERRMGR_PROC_FAILED);
    char text[8] = "xxxxxxx";

    /* a short buffer still ends in a terminator */
    assert_string_equal(orte_errmgr_failure_describe(&failure, text, sizeof(text)), "exited ");
    assert_null(orte_errmgr_failure_describe(&failure, NULL, 16));
    /* size 0: not one byte written */
    memcpy(text, "abcdefg", 8);
    orte_errmgr_failure_describe(&failure, text, 0);
    assert_string_equal(text, "abcdefg");
    assert_string_equal(orte_errmgr_failure_describe(NULL, text, sizeof(text)), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_default_is_abort, setup, teardown),
        cmocka_unit_test_setup_teardown(test_include_continue, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exclude_abort, setup, teardown),
        cmocka_unit_test_setup_teardown(test_include_both_takes_priority, setup, teardown),
        cmocka_unit_test_setup_teardown(test_priority_variables, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nothing_left, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_component, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stub_outranks_and_is_asked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abort_decides, setup, teardown),
        cmocka_unit_test_setup_teardown(test_continue_decides, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart_decides, setup, teardown),
        cmocka_unit_test_setup_teardown(test_base_decide_restart_only_for_failures, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_base_decide_without_module, setup, teardown),
        cmocka_unit_test_setup_teardown(test_base_decide_verbose, setup, teardown),
        cmocka_unit_test_setup_teardown(test_base_decide_rejects_non_action, setup, teardown),
        cmocka_unit_test_setup_teardown(test_describe, setup, teardown),
        cmocka_unit_test_setup_teardown(test_describe_edges, setup, teardown),
    };
    const char *path = getenv("HERD_MCA_component_path");
    int failed;

    /* empty in a static build: the real components are in the library */
    build_component_path = strdup(NULL != path ? path : "");
    if (NULL == build_component_path) {
        return 1;
    }
    failed = cmocka_run_group_tests(tests, NULL, NULL);
    free(build_component_path);
    return failed;
}
