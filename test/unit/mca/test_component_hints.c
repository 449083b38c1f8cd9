/* SPDX-License-Identifier: BSD-3-Clause */
/* What configure.m4 says about a component's selection (its priority, when it can be
 * available) must match what the component does, or a framework leaves unloaded a component
 * that should have won. For every framework of this build with hints: each hinted component's
 * priority variable defaults to the hint; its query declines while no alternative of its
 * condition holds; and with any one of them holding it offers no more than the hint. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_var.h"
#include "opal/mca/mca.h"
#include "opal/mca/opal_frameworks.h"
#include "opal/util/argv.h"
#include "orte/mca/orte_frameworks.h"
#include "support/capture.h"

static opal_mca_framework_t *all_frameworks[] = {
    HERD_MCA_opal_FRAMEWORKS HERD_MCA_orte_FRAMEWORKS NULL};
static herd_test_capture_t stderr_capture;

/* Every alternative of every hint, so a test can make each one hold and undo it. */
static void set_alternative(const char *alt, bool on)
{
    char name[256];
    if (0 == strcmp(alt, "asked")) {
        return; /* nothing to set: the framework base asks */
    }
    if (0 == strncmp(alt, "env:", 4)) {
        snprintf(name, sizeof(name), "%s", alt + 4);
    } else {
        assert_int_equal(0, strncmp(alt, "var:", 4));
        snprintf(name, sizeof(name), "HERD_MCA_%s", alt + 4);
    }
    if (on) {
        setenv(name, "1", 1);
    } else {
        unsetenv(name);
    }
}

static void set_all_alternatives(bool on)
{
    for (size_t f = 0; NULL != all_frameworks[f]; ++f) {
        for (const opal_mca_component_hint_t *h = all_frameworks[f]->hints;
             NULL != h && NULL != h->name; ++h) {
            char **alts = opal_argv_split(NULL != h->available_when ? h->available_when : "", ' ');
            for (size_t a = 0; NULL != alts && NULL != alts[a]; ++a) {
                set_alternative(alts[a], on);
            }
            opal_argv_free(alts);
        }
    }
}

/* Select fw with only component name; its offer, or -1 when it declines. */
static int offer_of(opal_mca_framework_t *fw, const char *name)
{
    char selection[128];
    snprintf(selection, sizeof(selection), "HERD_MCA_%s", fw->name);
    setenv(selection, name, 1);
    herd_test_capture_start(&stderr_capture);
    int rc = opal_mca_framework_select(fw);
    free(herd_test_capture_stop(&stderr_capture));
    int offer = (HERD_SUCCESS == rc) ? fw->selected[0]->priority : -1;
    opal_mca_framework_close(fw);
    unsetenv(selection);
    return offer;
}

static int default_priority(opal_mca_framework_t *fw, const char *name)
{
    char var[160];
    char *value = NULL;
    snprintf(var, sizeof(var), "%s_%s_priority", fw->name, name);
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(HERD_SUCCESS, opal_mca_framework_register(fw));
    free(herd_test_capture_stop(&stderr_capture));
    int index = opal_mca_var_find(var);
    assert_true(index >= 0);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_default_string(index, &value));
    int priority = atoi(value);
    free(value);
    opal_mca_framework_close(fw);
    return priority;
}

static void test_hints_match_components(void **state)
{
    size_t checked = 0;
    set_all_alternatives(false);
    opal_mca_set_defer(false);
    for (size_t f = 0; NULL != all_frameworks[f]; ++f) {
        opal_mca_framework_t *fw = all_frameworks[f];
        for (const opal_mca_component_hint_t *h = fw->hints; NULL != h && NULL != h->name; ++h) {
            print_message("%s %s: priority %d, available when \"%s\"\n", fw->name, h->name,
                          h->priority, NULL != h->available_when ? h->available_when : "");
            assert_int_equal(h->priority, default_priority(fw, h->name));
            char **alts = opal_argv_split(NULL != h->available_when ? h->available_when : "", ' ');
            if (NULL == alts || NULL == alts[0] || 0 == strcmp(alts[0], "asked")) {
                /* always offers; "asked": the framework base decides when to load it */
                assert_int_equal(h->priority, offer_of(fw, h->name));
            } else {
                assert_int_equal(-1, offer_of(fw, h->name));
                for (size_t a = 0; NULL != alts[a]; ++a) {
                    set_alternative(alts[a], true);
                    int offer = offer_of(fw, h->name);
                    set_alternative(alts[a], false);
                    assert_true(offer >= 0);
                    assert_true(offer <= h->priority);
                }
            }
            opal_argv_free(alts);
            ++checked;
        }
    }
    opal_mca_set_defer(true);
    print_message("%zu hinted components checked\n", checked);
    /* hints exist for DSOs only: where ras's components are DSOs, they have theirs */
    if (NULL == orte_ras_base_framework.static_components[0]) {
        assert_non_null(orte_ras_base_framework.hints);
        assert_non_null(orte_ras_base_framework.hints[0].name);
        assert_true(checked >= 3);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hints_match_components),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
