/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of opal_strerror: every status code has its own description. */
#include "herd_config.h"

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "opal/status.h"

static const char unknown[] = "unknown status code";

static void test_every_code_has_a_description(void **state)
{
    /* Runs up to HERD_ERR_MAX, so a code added later without a description fails here. */
    for (int code = HERD_SUCCESS; code > HERD_ERR_MAX; code--) {
        const char *text = opal_strerror(code);

        assert_non_null(text);
        assert_true(strlen(text) > 0);
        if (0 == strcmp(text, unknown)) {
            fail_msg("status code %d has no description", code);
        }
    }
}

static void test_descriptions_are_distinct(void **state)
{
    for (int a = HERD_SUCCESS; a > HERD_ERR_MAX; a--) {
        for (int b = a - 1; b > HERD_ERR_MAX; b--) {
            if (0 == strcmp(opal_strerror(a), opal_strerror(b))) {
                fail_msg("status codes %d and %d share the description \"%s\"", a, b,
                         opal_strerror(a));
            }
        }
    }
}

static void test_known_descriptions(void **state)
{
    assert_string_equal(opal_strerror(HERD_SUCCESS), "success");
    assert_string_equal(opal_strerror(HERD_ERR_NOT_FOUND), "not found");
    assert_string_equal(opal_strerror(HERD_ERR_TIMEOUT), "timed out");
}

static void test_unknown_codes(void **state)
{
    const int codes[] = {HERD_ERR_MAX, HERD_ERR_MAX - 1, 1, 42, -1000, INT_MIN, INT_MAX};

    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        assert_string_equal(opal_strerror(codes[i]), unknown);
    }
    /* A fixed string, not a formatted buffer that a later call could overwrite. */
    assert_ptr_equal(opal_strerror(-1000), opal_strerror(1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_code_has_a_description),
        cmocka_unit_test(test_descriptions_are_distinct),
        cmocka_unit_test(test_known_descriptions),
        cmocka_unit_test(test_unknown_codes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
