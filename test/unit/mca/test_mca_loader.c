/* SPDX-License-Identifier: BSD-3-Clause */
/* The MCA loader and selection: static and DSO components together, priorities and ties,
 * include/exclude lists, and refusal of files that are not right for this herd. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/base/mca_var.h"
#include "opal/mca/mca.h"
#include "support/capture.h"
#include "stub_framework.h"

/* Static components linked into this program: alpha (also built as a DSO, which must lose to
 * this copy) and delta (declines by default: negative priority). */
extern const opal_mca_component_t opal_stub_alpha_component;
extern const opal_mca_component_t opal_stub_delta_component;
static const opal_mca_component_t *const stub_static_components[] = {
    &opal_stub_alpha_component,
    &opal_stub_delta_component,
    NULL,
};

/* The base's own variable, registered through the framework's register_base hook. */
static int stub_base_knob;
static int stub_register_base(void)
{
    stub_base_knob = 3;
    int rc = opal_mca_var_register_framework("stub", "base_knob", "A variable of the stub base",
                                             OPAL_MCA_VAR_INT, &stub_base_knob);
    return rc < 0 ? rc : HERD_SUCCESS;
}

static opal_mca_framework_t stub_framework = OPAL_MCA_FRAMEWORK_INIT_REGISTER(
    opal, stub, "test stubs", false, stub_static_components, stub_register_base);

static herd_test_capture_t stderr_capture;

static int setup(void **state)
{
    setenv("HERD_MCA_component_path", HERD_TEST_BUILDDIR "/mca/stubs", 1);
    unsetenv("HERD_MCA_stub");
    unsetenv("HERD_MCA_stub_beta_priority");
    unsetenv("HERD_MCA_stub_delta_priority");
    setenv("HERD_MCA_mca_base_component_show_load_errors", "1", 1);
    return 0;
}

static int teardown(void **state)
{
    opal_mca_framework_close(&stub_framework);
    return 0;
}

static bool has_component(const char *name, bool *is_static)
{
    for (size_t i = 0; i < stub_framework.num_components; ++i) {
        if (0 == strcmp(stub_framework.components[i].component->name, name)) {
            *is_static = stub_framework.components[i].is_static;
            return true;
        }
    }
    return false;
}

static void test_find_static_and_dso(void **state)
{
    bool is_static = false;
    struct sigaction mine = {.sa_handler = SIG_IGN}, old, now;
    sigemptyset(&mine.sa_mask);
    sigaction(SIGTERM, &mine, &old);
    herd_test_capture_start(&stderr_capture);
    int rc = opal_mca_framework_register(&stub_framework);
    char *err = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(HERD_SUCCESS, rc);
    /* gamma's DSO takes SIGTERM when loaded; the loader gives it back */
    sigaction(SIGTERM, NULL, &now);
    sigaction(SIGTERM, &old, NULL);
    assert_true(SIG_IGN == now.sa_handler);
    /* alpha, beta, gamma, delta; badabi, badiface, wrongsym, wrongname refused */
    assert_int_equal(4, stub_framework.num_components);
    assert_true(has_component("alpha", &is_static));
    assert_true(is_static); /* the static copy wins over herd_stub_alpha.la */
    assert_true(has_component("beta", &is_static));
    assert_false(is_static);
    assert_true(has_component("gamma", &is_static));
    assert_true(has_component("delta", &is_static));
    assert_false(has_component("badabi", &is_static));
    assert_false(has_component("other", &is_static));
    /* sorted by name */
    assert_string_equal("alpha", stub_framework.components[0].component->name);
    assert_string_equal("gamma", stub_framework.components[3].component->name);
    /* the DSO's real file is reported */
    for (size_t i = 0; i < stub_framework.num_components; ++i) {
        if (!stub_framework.components[i].is_static) {
            assert_non_null(strstr(stub_framework.components[i].filename, "herd_stub_"));
        }
    }
    free(err);
}

static void test_refusals_are_explained(void **state)
{
    herd_test_capture_start(&stderr_capture);
    int rc = opal_mca_framework_register(&stub_framework);
    char *err = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(HERD_SUCCESS, rc);
    assert_non_null(strstr(err, "herd_stub_badabi"));
    assert_non_null(strstr(err, "MCA ABI version 999, but this herd uses version 1"));
    assert_non_null(strstr(err, "herd_stub_badiface"));
    assert_non_null(strstr(err, "stub interface version 7"));
    assert_non_null(strstr(err, "does not define the symbol opal_stub_wrongsym_component"));
    assert_non_null(strstr(err, "calls itself 'other'"));
    /* libltdl alone would say "file not found"; the real reason is dlopen()'s */
    assert_non_null(strstr(err, "herd_stub_undef"));
    assert_non_null(strstr(err, "undefined symbol: herd_stub_symbol_that_does_not_exist"));
    free(err);
}

static void test_refusals_can_be_silenced(void **state)
{
    setenv("HERD_MCA_mca_base_component_show_load_errors", "0", 1);
    herd_test_capture_start(&stderr_capture);
    int rc = opal_mca_framework_register(&stub_framework);
    char *err = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(HERD_SUCCESS, rc);
    assert_null(strstr(err, "badabi"));
    free(err);
}

static void test_corrupt_and_missing_files(void **state)
{
    char dir[] = "/tmp/herd-test-stubs-XXXXXX";
    char file[300], path[700];
    assert_non_null(mkdtemp(dir));
    snprintf(file, sizeof(file), "%s/herd_stub_corrupt.so", dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fputs("this is not a shared object\n", f);
    fclose(f);
    snprintf(path, sizeof(path), "/nonexistent/herd:%s:%s/mca/stubs", dir, HERD_TEST_BUILDDIR);
    setenv("HERD_MCA_component_path", path, 1);
    herd_test_capture_start(&stderr_capture);
    int rc = opal_mca_framework_register(&stub_framework);
    char *err = herd_test_capture_stop(&stderr_capture);
    unlink(file);
    rmdir(dir);
    assert_int_equal(HERD_SUCCESS, rc);
    assert_int_equal(4, stub_framework.num_components);
    assert_non_null(strstr(err, "herd_stub_corrupt"));
    assert_non_null(strstr(err, "the dynamic loader said:"));
    free(err);
}

static const char *winner(void)
{
    stub_module_t *module = opal_mca_framework_module(&stub_framework);
    return NULL != module ? module->name : NULL;
}

static void test_select_priority_and_tie(void **state)
{
    herd_test_capture_start(&stderr_capture);
    int rc = opal_mca_framework_select(&stub_framework);
    free(herd_test_capture_stop(&stderr_capture));
    assert_int_equal(HERD_SUCCESS, rc);
    /* beta and gamma both offer 20: the tie goes to the first name, on every run */
    assert_string_equal("beta", winner());
    assert_int_equal(1, stub_framework.num_selected);
}

static void test_select_priority_from_variable(void **state)
{
    setenv("HERD_MCA_stub_gamma_priority", "50", 1);
    herd_test_capture_start(&stderr_capture);
    int rc = opal_mca_framework_select(&stub_framework);
    free(herd_test_capture_stop(&stderr_capture));
    unsetenv("HERD_MCA_stub_gamma_priority");
    assert_int_equal(HERD_SUCCESS, rc);
    assert_string_equal("gamma", winner());
}

static void test_multi_select_order(void **state)
{
    stub_framework.multi_select = true;
    setenv("HERD_MCA_stub_delta_priority", "7", 1);
    herd_test_capture_start(&stderr_capture);
    int rc = opal_mca_framework_select(&stub_framework);
    free(herd_test_capture_stop(&stderr_capture));
    stub_framework.multi_select = false;
    unsetenv("HERD_MCA_stub_delta_priority");
    assert_int_equal(HERD_SUCCESS, rc);
    assert_int_equal(4, stub_framework.num_selected);
    const char *expected[] = {"beta", "gamma", "delta", "alpha"}; /* 20, 20, 7, 5 */
    for (size_t i = 0; i < 4; ++i) {
        assert_string_equal(expected[i], stub_framework.selected[i]->component->name);
    }
}

static void test_include_list(void **state)
{
    setenv("HERD_MCA_stub", "alpha,delta", 1);
    herd_test_capture_start(&stderr_capture);
    int rc = opal_mca_framework_select(&stub_framework);
    free(herd_test_capture_stop(&stderr_capture));
    assert_int_equal(HERD_SUCCESS, rc);
    /* delta declines (negative priority), so alpha is all that is left */
    assert_string_equal("alpha", winner());
    stub_module_t *module = opal_mca_framework_module(&stub_framework);
    assert_true(module->from_static);
}

static void test_exclude_list(void **state)
{
    setenv("HERD_MCA_stub", "^beta", 1);
    herd_test_capture_start(&stderr_capture);
    int rc = opal_mca_framework_select(&stub_framework);
    free(herd_test_capture_stop(&stderr_capture));
    assert_int_equal(HERD_SUCCESS, rc);
    assert_string_equal("gamma", winner());
}

static void test_exclude_everything_available(void **state)
{
    setenv("HERD_MCA_stub", "^alpha,beta,gamma", 1);
    herd_test_capture_start(&stderr_capture);
    int rc = opal_mca_framework_select(&stub_framework);
    free(herd_test_capture_stop(&stderr_capture));
    assert_int_equal(HERD_ERR_NOT_FOUND, rc); /* delta declines: nothing to select */
    assert_null(winner());
}

static void test_mixed_list_is_an_error(void **state)
{
    setenv("HERD_MCA_stub", "alpha,^beta", 1);
    herd_test_capture_start(&stderr_capture);
    int rc = opal_mca_framework_open(&stub_framework);
    char *err = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(HERD_ERR_BAD_PARAM, rc);
    assert_non_null(strstr(err, "alpha,^beta"));
    assert_non_null(strstr(err, "HERD_MCA_stub"));
    assert_non_null(strstr(err, "alpha, beta, delta, gamma"));
    free(err);
}

static void test_unknown_name_is_an_error(void **state)
{
    setenv("HERD_MCA_stub", "alpha,betta", 1);
    herd_test_capture_start(&stderr_capture);
    int rc = opal_mca_framework_open(&stub_framework);
    char *err = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(HERD_ERR_BAD_PARAM, rc);
    assert_non_null(strstr(err, "\"betta\""));
    assert_non_null(strstr(err, "alpha, beta, delta, gamma"));
    free(err);
}

static void test_parse_selection(void **state)
{
    bool exclude = true;
    char **names = (char **) 1;
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(HERD_SUCCESS, opal_mca_framework_register(&stub_framework));
    free(herd_test_capture_stop(&stderr_capture));
    assert_int_equal(HERD_SUCCESS, opal_mca_parse_selection(&stub_framework, "", &exclude, &names));
    assert_false(exclude);
    assert_null(names);
    assert_int_equal(HERD_SUCCESS,
                     opal_mca_parse_selection(&stub_framework, "^gamma,beta", &exclude, &names));
    assert_true(exclude);
    assert_string_equal("gamma", names[0]);
    assert_string_equal("beta", names[1]);
    assert_null(names[2]);
    for (size_t i = 0; NULL != names[i]; ++i) {
        free(names[i]);
    }
    free(names);
    /* "^a,^b" is still one exclude list */
    assert_int_equal(HERD_SUCCESS,
                     opal_mca_parse_selection(&stub_framework, "^gamma,^beta", &exclude, &names));
    assert_true(exclude);
    for (size_t i = 0; NULL != names[i]; ++i) {
        free(names[i]);
    }
    free(names);
}

static void test_close_and_reopen(void **state)
{
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(HERD_SUCCESS, opal_mca_framework_select(&stub_framework));
    opal_mca_framework_close(&stub_framework);
    assert_int_equal(0, stub_framework.num_components);
    assert_null(stub_framework.selected);
    assert_int_equal(HERD_SUCCESS, opal_mca_framework_select(&stub_framework));
    free(herd_test_capture_stop(&stderr_capture));
    assert_string_equal("beta", winner());
}

/* With unloading on, closing unloads the DSOs; opening again loads them again. */
static void test_unload_and_reload(void **state)
{
    setenv("HERD_MCA_mca_base_component_unload", "1", 1);
    setenv("HERD_MCA_stub_beta_priority", "60", 1);
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(HERD_SUCCESS, opal_mca_framework_select(&stub_framework));
    assert_string_equal("beta", winner());
    opal_mca_framework_close(&stub_framework);
    unsetenv("HERD_MCA_stub_beta_priority");
    setenv("HERD_MCA_stub_gamma_priority", "70", 1);
    assert_int_equal(HERD_SUCCESS, opal_mca_framework_select(&stub_framework));
    free(herd_test_capture_stop(&stderr_capture));
    unsetenv("HERD_MCA_stub_gamma_priority");
    unsetenv("HERD_MCA_mca_base_component_unload");
    assert_string_equal("gamma", winner());
    stub_module_t *module = opal_mca_framework_module(&stub_framework);
    assert_false(module->from_static);
}

static void test_register_base_hook(void **state)
{
    setenv("HERD_MCA_stub_base_knob", "11", 1);
    herd_test_capture_start(&stderr_capture);
    int rc = opal_mca_framework_register(&stub_framework);
    free(herd_test_capture_stop(&stderr_capture));
    unsetenv("HERD_MCA_stub_base_knob");
    assert_int_equal(HERD_SUCCESS, rc);
    assert_true(opal_mca_var_find("stub_base_knob") >= 0);
    assert_int_equal(11, stub_base_knob);
}

/* open_select twice needs one close; a failed one leaves nothing open. */
static void test_open_select_pairs_with_close(void **state)
{
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(HERD_SUCCESS, opal_mca_framework_open_select(&stub_framework));
    assert_int_equal(HERD_SUCCESS, opal_mca_framework_open_select(&stub_framework));
    opal_mca_framework_close(&stub_framework);
    assert_false(stub_framework.registered);
    setenv("HERD_MCA_stub", "delta", 1); /* declines: nothing to select */
    int rc = opal_mca_framework_open_select(&stub_framework);
    free(herd_test_capture_stop(&stderr_capture));
    assert_int_equal(HERD_ERR_NOT_FOUND, rc);
    assert_false(stub_framework.registered);
}

/* A component asks for a sibling's module: the winner's is the selected one; a loser, or one
 * the selection left out, is opened and queried; one that declines, or no such name, is not
 * found. */
static void test_component_module_of_sibling(void **state)
{
    void *module = NULL;

    setenv("HERD_MCA_stub", "beta", 1);
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(HERD_SUCCESS, opal_mca_framework_select(&stub_framework));
    free(herd_test_capture_stop(&stderr_capture));
    assert_string_equal("beta", winner());
    assert_int_equal(HERD_SUCCESS,
                     opal_mca_framework_component_module(&stub_framework, "beta", &module));
    assert_ptr_equal(opal_mca_framework_module(&stub_framework), module);
    module = NULL;
    assert_int_equal(HERD_SUCCESS,
                     opal_mca_framework_component_module(&stub_framework, "alpha", &module));
    assert_non_null(module);
    assert_string_equal("alpha", ((stub_module_t *) module)->name);
    /* the winner is still the winner */
    assert_string_equal("beta", winner());
    assert_int_equal(HERD_ERR_NOT_FOUND,
                     opal_mca_framework_component_module(&stub_framework, "delta", &module));
    assert_int_equal(HERD_ERR_NOT_FOUND,
                     opal_mca_framework_component_module(&stub_framework, "nosuch", &module));
}

static void test_component_module_needs_open_framework(void **state)
{
    void *module = NULL;
    assert_int_equal(HERD_ERR_BAD_PARAM,
                     opal_mca_framework_component_module(&stub_framework, "alpha", &module));
}

/* ---- Deferred loading: a framework given configure's hints for beta and gamma (both DSOs,
 * priority 20; gamma says it is available only with HERD_TEST_GAMMA set) and for alpha (static,
 * so the hint is moot). ---- */
static const opal_mca_component_hint_t stub_hints[] = {
    {"alpha", 99, ""},
    {"beta", 20, ""},
    {"gamma", 20, "var:stub_no_such_variable env:HERD_TEST_GAMMA"},
    {NULL, 0, NULL},
};
static opal_mca_framework_t hinted_framework =
    OPAL_MCA_FRAMEWORK_INIT_HINTS(opal, stub, "test stubs, loaded when they could be selected",
                                  false, stub_static_components, stub_register_base, stub_hints);

static int hinted_teardown(void **state)
{
    opal_mca_framework_close(&hinted_framework);
    opal_mca_set_defer(true);
    unsetenv("HERD_TEST_GAMMA");
    unsetenv("HERD_MCA_mca_base_component_defer");
    return 0;
}

static bool is_deferred(const char *name)
{
    for (size_t i = 0; i < hinted_framework.num_deferred; ++i) {
        if (0 == strcmp(hinted_framework.deferred[i].name, name)) {
            return true;
        }
    }
    return false;
}

static bool is_loaded(const char *name)
{
    for (size_t i = 0; i < hinted_framework.num_components; ++i) {
        if (0 == strcmp(hinted_framework.components[i].component->name, name)) {
            return true;
        }
    }
    return false;
}

static const char *hinted_winner(void)
{
    stub_module_t *module = opal_mca_framework_module(&hinted_framework);
    return NULL != module ? module->name : NULL;
}

static int hinted_select(void)
{
    herd_test_capture_start(&stderr_capture);
    int rc = opal_mca_framework_select(&hinted_framework);
    free(herd_test_capture_stop(&stderr_capture));
    return rc;
}

static void test_defer_register_loads_no_hinted_dso(void **state)
{
    herd_test_capture_start(&stderr_capture);
    int rc = opal_mca_framework_register(&hinted_framework);
    char *err = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(HERD_SUCCESS, rc);
    assert_true(is_loaded("alpha")); /* static: in the program already */
    assert_true(is_loaded("delta"));
    assert_true(is_deferred("beta"));
    assert_true(is_deferred("gamma"));
    assert_int_equal(2, hinted_framework.num_components);
    assert_int_equal(2, hinted_framework.num_deferred);
    assert_true(opal_mca_var_find("stub_beta_priority") < 0);
    /* DSOs without a hint are loaded, and refused, as before */
    assert_non_null(strstr(err, "herd_stub_badabi"));
    free(err);
}

static void test_defer_loads_only_what_can_win(void **state)
{
    assert_int_equal(HERD_SUCCESS, hinted_select());
    /* alpha offers 5, beta could beat it and does (20); gamma is not available */
    assert_string_equal("beta", hinted_winner());
    assert_true(is_deferred("gamma"));
    assert_false(is_loaded("gamma"));
}

static void test_defer_tie_goes_to_first_name_unloaded(void **state)
{
    setenv("HERD_TEST_GAMMA", "1", 1);
    assert_int_equal(HERD_SUCCESS, hinted_select());
    /* gamma is available, but at 20 it would lose the tie to beta: not loaded */
    assert_string_equal("beta", hinted_winner());
    assert_true(is_deferred("gamma"));
}

static void test_defer_variable_set_loads_component(void **state)
{
    setenv("HERD_MCA_stub_gamma_priority", "50", 1);
    int rc = hinted_select();
    unsetenv("HERD_MCA_stub_gamma_priority");
    assert_int_equal(HERD_SUCCESS, rc);
    /* its variable names it, whatever its condition says; beta (20) cannot beat 50 */
    assert_string_equal("gamma", hinted_winner());
    assert_true(is_deferred("beta"));
    assert_true(opal_mca_var_find("stub_gamma_priority") >= 0);
}

static void test_defer_include_list_loads_component(void **state)
{
    setenv("HERD_MCA_stub", "gamma", 1);
    int rc = hinted_select();
    unsetenv("HERD_MCA_stub");
    assert_int_equal(HERD_SUCCESS, rc);
    assert_string_equal("gamma", hinted_winner());
    assert_true(is_deferred("beta"));
}

static void test_defer_exclude_list_never_loads(void **state)
{
    setenv("HERD_MCA_stub", "^beta", 1);
    setenv("HERD_TEST_GAMMA", "1", 1);
    int rc = hinted_select();
    unsetenv("HERD_MCA_stub");
    assert_int_equal(HERD_SUCCESS, rc);
    assert_string_equal("gamma", hinted_winner());
    assert_true(is_deferred("beta"));
}

static void test_defer_unknown_name_lists_unloaded(void **state)
{
    setenv("HERD_MCA_stub", "betta", 1);
    herd_test_capture_start(&stderr_capture);
    int rc = opal_mca_framework_open(&hinted_framework);
    char *err = herd_test_capture_stop(&stderr_capture);
    unsetenv("HERD_MCA_stub");
    assert_int_equal(HERD_ERR_BAD_PARAM, rc);
    assert_non_null(strstr(err, "alpha, beta, delta, gamma"));
    free(err);
}

static void test_defer_load_deferred_keeps_selection(void **state)
{
    assert_int_equal(HERD_SUCCESS, hinted_select());
    assert_string_equal("beta", hinted_winner());
    herd_test_capture_start(&stderr_capture);
    int rc = opal_mca_framework_load_deferred(&hinted_framework);
    free(herd_test_capture_stop(&stderr_capture));
    assert_int_equal(HERD_SUCCESS, rc);
    assert_int_equal(0, hinted_framework.num_deferred);
    assert_int_equal(4, hinted_framework.num_components);
    assert_true(opal_mca_var_find("stub_gamma_priority") >= 0);
    /* the components moved; the winner is still found, and sorted by name */
    assert_string_equal("beta", hinted_winner());
    assert_string_equal("gamma", hinted_framework.components[3].component->name);
}

static void test_defer_multi_select_loads_available(void **state)
{
    hinted_framework.multi_select = true;
    int rc = hinted_select();
    hinted_framework.multi_select = false;
    assert_int_equal(HERD_SUCCESS, rc);
    /* every available component is kept: beta (20) and alpha (5); gamma is not available */
    assert_int_equal(2, hinted_framework.num_selected);
    assert_string_equal("beta", hinted_framework.selected[0]->component->name);
    assert_string_equal("alpha", hinted_framework.selected[1]->component->name);
    assert_true(is_deferred("gamma"));
}

/* A deferred DSO asked for by name is loaded, and the selection (pointers into the moved
 * component table) still holds. */
static void test_defer_component_module_loads_it(void **state)
{
    void *module = NULL;

    setenv("HERD_MCA_stub", "alpha,beta", 1);
    assert_int_equal(HERD_SUCCESS, hinted_select());
    assert_string_equal("beta", hinted_winner());
    assert_false(is_loaded("gamma"));
    herd_test_capture_start(&stderr_capture);
    int rc = opal_mca_framework_component_module(&hinted_framework, "gamma", &module);
    free(herd_test_capture_stop(&stderr_capture));
    assert_int_equal(HERD_SUCCESS, rc);
    assert_true(is_loaded("gamma"));
    assert_string_equal("gamma", ((stub_module_t *) module)->name);
    assert_string_equal("beta", hinted_winner());
}

static void test_defer_off(void **state)
{
    opal_mca_set_defer(false);
    assert_int_equal(HERD_SUCCESS, hinted_select());
    assert_int_equal(0, hinted_framework.num_deferred);
    assert_int_equal(4, hinted_framework.num_components);
    opal_mca_framework_close(&hinted_framework);
    opal_mca_set_defer(true);
    setenv("HERD_MCA_mca_base_component_defer", "false", 1);
    assert_int_equal(HERD_SUCCESS, hinted_select());
    assert_int_equal(0, hinted_framework.num_deferred);
}

static void test_var_set_under_and_unknown_under(void **state)
{
    setenv("HERD_MCA_stub_gamma_colour", "blue", 1);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_init());
    assert_true(opal_mca_var_any_set_under("stub_gamma_"));
    assert_false(opal_mca_var_any_set_under("stub_beta_"));
    assert_true(opal_mca_var_unknown_under("stub"));
    assert_false(opal_mca_var_unknown_under("stu")); /* not "stub_..." */
    assert_false(opal_mca_var_unknown_under("other"));
    assert_false(opal_mca_var_has_value("stub_beta_priority"));
    assert_true(opal_mca_var_has_value("stub_gamma_colour"));
    opal_mca_var_finalize();
    unsetenv("HERD_MCA_stub_gamma_colour");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_find_static_and_dso, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals_are_explained, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals_can_be_silenced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_and_missing_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_select_priority_and_tie, setup, teardown),
        cmocka_unit_test_setup_teardown(test_select_priority_from_variable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_multi_select_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_include_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exclude_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exclude_everything_available, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mixed_list_is_an_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_name_is_an_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parse_selection, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close_and_reopen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unload_and_reload, setup, teardown),
        cmocka_unit_test_setup_teardown(test_register_base_hook, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_select_pairs_with_close, setup, teardown),
        cmocka_unit_test_setup_teardown(test_component_module_of_sibling, setup, teardown),
        cmocka_unit_test_setup_teardown(test_component_module_needs_open_framework, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_defer_register_loads_no_hinted_dso, setup,
                                        hinted_teardown),
        cmocka_unit_test_setup_teardown(test_defer_loads_only_what_can_win, setup, hinted_teardown),
        cmocka_unit_test_setup_teardown(test_defer_tie_goes_to_first_name_unloaded, setup,
                                        hinted_teardown),
        cmocka_unit_test_setup_teardown(test_defer_variable_set_loads_component, setup,
                                        hinted_teardown),
        cmocka_unit_test_setup_teardown(test_defer_include_list_loads_component, setup,
                                        hinted_teardown),
        cmocka_unit_test_setup_teardown(test_defer_exclude_list_never_loads, setup,
                                        hinted_teardown),
        cmocka_unit_test_setup_teardown(test_defer_unknown_name_lists_unloaded, setup,
                                        hinted_teardown),
        cmocka_unit_test_setup_teardown(test_defer_load_deferred_keeps_selection, setup,
                                        hinted_teardown),
        cmocka_unit_test_setup_teardown(test_defer_multi_select_loads_available, setup,
                                        hinted_teardown),
        cmocka_unit_test_setup_teardown(test_defer_off, setup, hinted_teardown),
        cmocka_unit_test_setup_teardown(test_defer_component_module_loads_it, setup,
                                        hinted_teardown),
        cmocka_unit_test_setup_teardown(test_var_set_under_and_unknown_under, setup,
                                        hinted_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
