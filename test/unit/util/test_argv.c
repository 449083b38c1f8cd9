/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the argv vector helpers and the "did you mean" string distance. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "opal/util/argv.h"

/* Compare a vector against the expected strings, which end with NULL. */
static void assert_argv_equal(char **argv, ...)
{
    const char *expected;
    size_t i = 0;
    va_list ap;

    assert_non_null(argv);
    va_start(ap, argv);
    while (NULL != (expected = va_arg(ap, const char *))) {
        assert_non_null(argv[i]);
        assert_string_equal(argv[i], expected);
        i++;
    }
    va_end(ap);
    assert_null(argv[i]);
    assert_int_equal(opal_argv_count(argv), i);
}

static void test_append_creates_and_grows(void **state)
{
    char **argv = NULL;
    char word[] = "beta";

    assert_int_equal(opal_argv_append(&argv, "alpha"), HERD_SUCCESS);
    assert_int_equal(opal_argv_append(&argv, word), HERD_SUCCESS);
    assert_int_equal(opal_argv_append(&argv, ""), HERD_SUCCESS);
    /* The vector holds copies, not the caller's strings. */
    word[0] = 'X';
    assert_argv_equal(argv, "alpha", "beta", "", NULL);
    opal_argv_free(argv);
}

static void test_append_rejects_null(void **state)
{
    char **argv = NULL;

    assert_int_equal(opal_argv_append(NULL, "a"), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_argv_append(&argv, NULL), HERD_ERR_BAD_PARAM);
    assert_null(argv);
    assert_int_equal(opal_argv_prepend(&argv, NULL), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_argv_append_unique(&argv, NULL), HERD_ERR_BAD_PARAM);
    assert_null(argv);
}

static void test_append_unique(void **state)
{
    char **argv = NULL;

    assert_int_equal(opal_argv_append_unique(&argv, "a"), HERD_SUCCESS);
    assert_int_equal(opal_argv_append_unique(&argv, "b"), HERD_SUCCESS);
    assert_int_equal(opal_argv_append_unique(&argv, "a"), HERD_SUCCESS);
    assert_int_equal(opal_argv_append_unique(&argv, "b"), HERD_SUCCESS);
    assert_int_equal(opal_argv_append_unique(&argv, "A"), HERD_SUCCESS);
    assert_argv_equal(argv, "a", "b", "A", NULL);
    opal_argv_free(argv);
}

static void test_prepend(void **state)
{
    char **argv = NULL;

    assert_int_equal(opal_argv_prepend(&argv, "c"), HERD_SUCCESS);
    assert_int_equal(opal_argv_prepend(&argv, "b"), HERD_SUCCESS);
    assert_int_equal(opal_argv_prepend(&argv, "a"), HERD_SUCCESS);
    assert_argv_equal(argv, "a", "b", "c", NULL);
    opal_argv_free(argv);
}

static void test_insert_positions(void **state)
{
    char *const middle[] = {"x", "y", NULL};
    char *const front[] = {"0", NULL};
    char *const back[] = {"z", NULL};
    char **argv = opal_argv_split("a,b", ',');

    assert_int_equal(opal_argv_insert(&argv, 1, middle), HERD_SUCCESS);
    assert_argv_equal(argv, "a", "x", "y", "b", NULL);
    assert_int_equal(opal_argv_insert(&argv, 0, front), HERD_SUCCESS);
    assert_int_equal(opal_argv_insert(&argv, 5, back), HERD_SUCCESS);
    assert_argv_equal(argv, "0", "a", "x", "y", "b", "z", NULL);
    opal_argv_free(argv);
}

static void test_insert_out_of_range_leaves_vector(void **state)
{
    char *const source[] = {"x", NULL};
    char **argv = opal_argv_split("a,b", ',');

    assert_int_equal(opal_argv_insert(&argv, 3, source), HERD_ERR_BAD_PARAM);
    assert_argv_equal(argv, "a", "b", NULL);
    assert_int_equal(opal_argv_insert(NULL, 0, source), HERD_ERR_BAD_PARAM);
    opal_argv_free(argv);
}

static void test_insert_empty_and_self(void **state)
{
    char *const empty[] = {NULL};
    char **argv = opal_argv_split("a,b", ',');
    char **nothing = NULL;

    assert_int_equal(opal_argv_insert(&argv, 1, NULL), HERD_SUCCESS);
    assert_int_equal(opal_argv_insert(&argv, 1, empty), HERD_SUCCESS);
    assert_argv_equal(argv, "a", "b", NULL);
    /* Inserting a vector into itself must copy the strings before they move. */
    assert_int_equal(opal_argv_insert(&argv, 1, argv), HERD_SUCCESS);
    assert_argv_equal(argv, "a", "a", "b", "b", NULL);
    /* Inserting nothing into no vector still gives a vector. */
    assert_int_equal(opal_argv_insert(&nothing, 0, empty), HERD_SUCCESS);
    assert_argv_equal(nothing, NULL);
    opal_argv_free(nothing);
    opal_argv_free(argv);
}

static void test_delete(void **state)
{
    char **argv = opal_argv_split("a,b,c,d,e", ',');

    assert_int_equal(opal_argv_delete(&argv, 1, 2), HERD_SUCCESS);
    assert_argv_equal(argv, "a", "d", "e", NULL);
    assert_int_equal(opal_argv_delete(&argv, 1, 0), HERD_SUCCESS);
    assert_argv_equal(argv, "a", "d", "e", NULL);
    /* Past the end: nothing; too many: clamped. */
    assert_int_equal(opal_argv_delete(&argv, 3, 1), HERD_SUCCESS);
    assert_int_equal(opal_argv_delete(&argv, 10, 1), HERD_SUCCESS);
    assert_argv_equal(argv, "a", "d", "e", NULL);
    assert_int_equal(opal_argv_delete(&argv, 1, SIZE_MAX), HERD_SUCCESS);
    assert_argv_equal(argv, "a", NULL);
    assert_int_equal(opal_argv_delete(&argv, 0, 1), HERD_SUCCESS);
    assert_argv_equal(argv, NULL);
    /* The emptied vector is still usable. */
    assert_int_equal(opal_argv_append(&argv, "f"), HERD_SUCCESS);
    assert_argv_equal(argv, "f", NULL);
    opal_argv_free(argv);
    assert_int_equal(opal_argv_delete(NULL, 0, 1), HERD_ERR_BAD_PARAM);
}

static void test_delete_from_null_vector(void **state)
{
    char **argv = NULL;

    assert_int_equal(opal_argv_delete(&argv, 0, 1), HERD_SUCCESS);
    assert_null(argv);
}

static void test_count_and_free_null(void **state)
{
    char *const empty[] = {NULL};

    assert_int_equal(opal_argv_count(NULL), 0);
    assert_int_equal(opal_argv_count(empty), 0);
    opal_argv_free(NULL);
}

static void test_copy(void **state)
{
    char *const empty[] = {NULL};
    char **argv = opal_argv_split("one two", ' ');
    char **copy = opal_argv_copy(argv);

    assert_argv_equal(copy, "one", "two", NULL);
    assert_ptr_not_equal(copy, argv);
    assert_ptr_not_equal(copy[0], argv[0]);
    opal_argv_free(copy);
    opal_argv_free(argv);

    assert_null(opal_argv_copy(NULL));
    copy = opal_argv_copy(empty);
    assert_argv_equal(copy, NULL);
    opal_argv_free(copy);
}

static void test_split_drops_empty_fields(void **state)
{
    char **argv;

    argv = opal_argv_split("a,b,c", ',');
    assert_argv_equal(argv, "a", "b", "c", NULL);
    opal_argv_free(argv);

    argv = opal_argv_split(",,a,,b,,", ',');
    assert_argv_equal(argv, "a", "b", NULL);
    opal_argv_free(argv);

    argv = opal_argv_split("no delimiter here", ',');
    assert_argv_equal(argv, "no delimiter here", NULL);
    opal_argv_free(argv);

    argv = opal_argv_split(",,,", ',');
    assert_argv_equal(argv, NULL);
    opal_argv_free(argv);
}

static void test_split_empty_and_null_text(void **state)
{
    char **argv;

    argv = opal_argv_split("", ',');
    assert_argv_equal(argv, NULL);
    opal_argv_free(argv);

    argv = opal_argv_split(NULL, ',');
    assert_argv_equal(argv, NULL);
    opal_argv_free(argv);

    argv = opal_argv_split_with_empty("", ',');
    assert_argv_equal(argv, NULL);
    opal_argv_free(argv);
}

static void test_split_with_empty_keeps_fields(void **state)
{
    char **argv;

    argv = opal_argv_split_with_empty("a,,b", ',');
    assert_argv_equal(argv, "a", "", "b", NULL);
    opal_argv_free(argv);

    argv = opal_argv_split_with_empty("a,", ',');
    assert_argv_equal(argv, "a", "", NULL);
    opal_argv_free(argv);

    argv = opal_argv_split_with_empty(",", ',');
    assert_argv_equal(argv, "", "", NULL);
    opal_argv_free(argv);

    argv = opal_argv_split_with_empty(":/usr/bin", ':');
    assert_argv_equal(argv, "", "/usr/bin", NULL);
    opal_argv_free(argv);
}

static void test_split_nul_delimiter_is_whole_text(void **state)
{
    char **argv = opal_argv_split("a,b", '\0');

    assert_argv_equal(argv, "a,b", NULL);
    opal_argv_free(argv);
}

static void test_join(void **state)
{
    char *const two[] = {"a", "bc", NULL};
    char *const one[] = {"only", NULL};
    char *const empties[] = {"", "", NULL};
    char *const empty[] = {NULL};
    char *joined;

    joined = opal_argv_join(two, ',');
    assert_string_equal(joined, "a,bc");
    free(joined);
    joined = opal_argv_join(one, ',');
    assert_string_equal(joined, "only");
    free(joined);
    joined = opal_argv_join(empties, ':');
    assert_string_equal(joined, ":");
    free(joined);
    joined = opal_argv_join(empty, ',');
    assert_string_equal(joined, "");
    free(joined);
    joined = opal_argv_join(NULL, ',');
    assert_string_equal(joined, "");
    free(joined);
}

static void test_split_join_round_trip(void **state)
{
    const char *texts[] = {"a,,b", ",x,", "single", ",", NULL};

    for (size_t i = 0; NULL != texts[i]; i++) {
        char **argv = opal_argv_split_with_empty(texts[i], ',');
        char *joined = opal_argv_join(argv, ',');

        assert_string_equal(joined, texts[i]);
        free(joined);
        opal_argv_free(argv);
    }
}

static void test_find(void **state)
{
    char **argv = opal_argv_split("x,y,x,z", ',');

    assert_int_equal(opal_argv_find(argv, "x"), 0);
    assert_int_equal(opal_argv_find(argv, "z"), 3);
    assert_int_equal(opal_argv_find(argv, "w"), -1);
    assert_int_equal(opal_argv_find(argv, ""), -1);
    assert_int_equal(opal_argv_find(argv, NULL), -1);
    assert_int_equal(opal_argv_find(NULL, "x"), -1);
    opal_argv_free(argv);
}

static void test_env_find(void **state)
{
    char *env[] = {"PATHX=1", "PATH=/bin", "EMPTY=", "NOEQUALS", "PATH=/usr/bin", NULL};

    assert_int_equal(opal_env_find(env, "PATH"), 1); /* not PATHX, and the first PATH */
    assert_int_equal(opal_env_find(env, "PATH=/anything"), 1);
    assert_int_equal(opal_env_find(env, "PATHX"), 0);
    assert_int_equal(opal_env_find(env, "EMPTY"), 2);
    assert_int_equal(opal_env_find(env, "PAT"), -1);
    assert_int_equal(opal_env_find(env, "NOEQUALS"), -1); /* sets nothing */
    assert_int_equal(opal_env_find(env, NULL), -1);
    assert_int_equal(opal_env_find(NULL, "PATH"), -1);
}

static void test_string_distance(void **state)
{
    assert_int_equal(opal_string_distance("kitten", "sitting"), 3);
    assert_int_equal(opal_string_distance("sitting", "kitten"), 3);
    assert_int_equal(opal_string_distance("param", "param"), 0);
    assert_int_equal(opal_string_distance("paramm", "param"), 1);
    assert_int_equal(opal_string_distance("pram", "param"), 1);
    assert_int_equal(opal_string_distance("parma", "param"), 2);
    assert_int_equal(opal_string_distance("", "abc"), 3);
    assert_int_equal(opal_string_distance("abc", ""), 3);
    assert_int_equal(opal_string_distance("", ""), 0);
    assert_int_equal(opal_string_distance(NULL, "ab"), 2);
    assert_int_equal(opal_string_distance("ab", NULL), 2);
    assert_int_equal(opal_string_distance("abc", "xyz"), 3);
}

static void test_string_distance_long_strings(void **state)
{
    /* Longer than the stack row, so the heap path is used. */
    char a[201], b[201];

    memset(a, 'a', 200);
    a[200] = '\0';
    memcpy(b, a, sizeof(a));
    b[100] = 'b';
    assert_int_equal(opal_string_distance(a, b), 1);
    b[150] = '\0';
    assert_int_equal(opal_string_distance(a, b), 51);
    assert_int_equal(opal_string_distance("short", a), 200);
}

static void test_closest_string(void **state)
{
    char *const candidates[] = {"np", "param", "parsable", "display-map", "host", NULL};

    assert_string_equal(opal_closest_string("paramm", candidates), "param");
    assert_string_equal(opal_closest_string("parsabel", candidates), "parsable");
    assert_string_equal(opal_closest_string("display-mpa", candidates), "display-map");
    assert_string_equal(opal_closest_string("hots", candidates), "host");
    assert_string_equal(opal_closest_string("host", candidates), "host");
    assert_null(opal_closest_string("completely-different", candidates));
    assert_null(opal_closest_string("paramxyz", candidates));
    assert_null(opal_closest_string(NULL, candidates));
    assert_null(opal_closest_string("param", NULL));
}

static void test_closest_string_threshold(void **state)
{
    /* 12 letters allow 4 edits; short words allow 2. */
    char *const long_word[] = {"abcdefghijkl", NULL};
    char *const short_word[] = {"abc", NULL};

    assert_non_null(opal_closest_string("abcdefghWXYZ", long_word));
    assert_null(opal_closest_string("abcdefgVWXYZ", long_word));
    assert_non_null(opal_closest_string("aXY", short_word));
    assert_null(opal_closest_string("XYZ", short_word));
}

static void test_closest_string_prefers_nearest_then_first(void **state)
{
    char *const candidates[] = {"abcx", "abce", "abcd", NULL};
    char *const tie[] = {"abxy", "abyx", NULL};

    assert_string_equal(opal_closest_string("abcd", candidates), "abcd");
    assert_string_equal(opal_closest_string("abzz", tie), "abxy");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_append_creates_and_grows),
        cmocka_unit_test(test_append_rejects_null),
        cmocka_unit_test(test_append_unique),
        cmocka_unit_test(test_prepend),
        cmocka_unit_test(test_insert_positions),
        cmocka_unit_test(test_insert_out_of_range_leaves_vector),
        cmocka_unit_test(test_insert_empty_and_self),
        cmocka_unit_test(test_delete),
        cmocka_unit_test(test_delete_from_null_vector),
        cmocka_unit_test(test_count_and_free_null),
        cmocka_unit_test(test_copy),
        cmocka_unit_test(test_split_drops_empty_fields),
        cmocka_unit_test(test_split_empty_and_null_text),
        cmocka_unit_test(test_split_with_empty_keeps_fields),
        cmocka_unit_test(test_split_nul_delimiter_is_whole_text),
        cmocka_unit_test(test_join),
        cmocka_unit_test(test_split_join_round_trip),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_env_find),
        cmocka_unit_test(test_string_distance),
        cmocka_unit_test(test_string_distance_long_strings),
        cmocka_unit_test(test_closest_string),
        cmocka_unit_test(test_closest_string_threshold),
        cmocka_unit_test(test_closest_string_prefers_nearest_then_first),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
