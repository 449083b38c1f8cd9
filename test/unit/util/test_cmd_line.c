/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the command-line parser: option forms, arguments, the tail, error messages as
 * the user sees them, and the usage table. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "opal/util/argv.h"
#include "opal/util/cmd_line.h"
#include "support/capture.h"

static const opal_cmd_line_option_t options[] = {
    {"np", 'n', 1, "N", "Number of processes to start"},
    {"host", 'H', 1, "HOSTS", "Comma-separated list of hosts"},
    {"mca", 0, 2, "NAME VALUE", "Set the MCA variable NAME to VALUE"},
    {"param", 0, 2, "FRAMEWORK COMPONENT", "Show the variables of one component"},
    {"display-map", 0, 0, NULL, "Print the process map before launching"},
    {"report-usage", 0, OPAL_CMD_LINE_OPTIONAL_ARG, "FILE", "Report resource usage"},
    {"verbose", 'v', 0, NULL, "Say more"},
    {"x", 0, 1, "VAR", "Export VAR to the launched processes"},
    {NULL, 0, 0, NULL, NULL},
};


/* Parse a command line given as one string of space-separated words (argv[0] is added). */
static int parse_words(opal_cmd_line_t *cmd, const char *words, bool stop_at_first_nonoption,
                       char **errors)
{
    char **argv = opal_argv_split(words, ' ');
    herd_test_capture_t capture;
    int rc;

    assert_int_equal(opal_argv_prepend(&argv, "herd-test"), HERD_SUCCESS);
    herd_test_capture_start(&capture);
    rc = opal_cmd_line_parse(cmd, (int) opal_argv_count(argv), argv, stop_at_first_nonoption);
    *errors = herd_test_capture_stop(&capture);
    opal_argv_free(argv);
    return rc;
}

/* Parse a line that must succeed without printing anything. */
static void parse_ok(opal_cmd_line_t *cmd, const char *words, bool stop_at_first_nonoption)
{
    char *errors;
    int rc = parse_words(cmd, words, stop_at_first_nonoption, &errors);

    if (HERD_SUCCESS != rc || '\0' != errors[0]) {
        fail_msg("parsing '%s' gave %d and printed: %s", words, rc, errors);
    }
    free(errors);
}

/* Parse a line that must fail with exactly the given message. */
static void parse_fails(opal_cmd_line_t *cmd, const char *words, bool stop_at_first_nonoption,
                        const char *expected_message)
{
    char *errors;
    int rc = parse_words(cmd, words, stop_at_first_nonoption, &errors);

    assert_int_equal(rc, HERD_ERR_BAD_PARAM);
    assert_string_equal(errors, expected_message);
    free(errors);
}

static int setup(void **state)
{
    opal_cmd_line_t *cmd = NULL;

    if (HERD_SUCCESS != opal_cmd_line_create("herd-test", options, &cmd)) {
        return -1;
    }
    *state = cmd;
    return 0;
}

static int teardown(void **state)
{
    opal_cmd_line_free(*state);
    return 0;
}

static void assert_tail(const opal_cmd_line_t *cmd, const char *expected)
{
    char *joined = opal_argv_join(opal_cmd_line_tail(cmd), ' ');

    assert_non_null(opal_cmd_line_tail(cmd));
    assert_string_equal(joined, expected);
    free(joined);
}

static void test_every_form_of_an_option_with_one_argument(void **state)
{
    const char *forms[] = {"--np 4", "-np 4", "--np=4", "-np=4", "-n 4", "-n4", "-n=4", NULL};

    for (size_t i = 0; NULL != forms[i]; i++) {
        parse_ok(*state, forms[i], false);
        assert_true(opal_cmd_line_is_set(*state, "np"));
        assert_int_equal(opal_cmd_line_count(*state, "np"), 1);
        assert_string_equal(opal_cmd_line_get(*state, "np", 0, 0), "4");
        assert_null(opal_cmd_line_get(*state, "np", 0, 1));
        assert_int_equal(opal_cmd_line_tail_count(*state), 0);
    }
}

static void test_two_arguments_and_repeats_keep_order(void **state)
{
    parse_ok(*state, "--mca a 1 -mca b 2 --mca=c 3", false);
    assert_int_equal(opal_cmd_line_count(*state, "mca"), 3);
    assert_string_equal(opal_cmd_line_get(*state, "mca", 0, 0), "a");
    assert_string_equal(opal_cmd_line_get(*state, "mca", 0, 1), "1");
    assert_string_equal(opal_cmd_line_get(*state, "mca", 1, 0), "b");
    assert_string_equal(opal_cmd_line_get(*state, "mca", 1, 1), "2");
    assert_string_equal(opal_cmd_line_get(*state, "mca", 2, 0), "c");
    assert_string_equal(opal_cmd_line_get(*state, "mca", 2, 1), "3");
    assert_null(opal_cmd_line_get(*state, "mca", 3, 0));
    assert_null(opal_cmd_line_get(*state, "mca", 0, 2));
    assert_null(opal_cmd_line_get(*state, "mca", -1, 0));
    assert_null(opal_cmd_line_get(*state, "mca", 0, -1));
}

static void test_repeated_flag_is_counted(void **state)
{
    parse_ok(*state, "-v --verbose -verbose --display-map", false);
    assert_int_equal(opal_cmd_line_count(*state, "verbose"), 3);
    assert_true(opal_cmd_line_is_set(*state, "display-map"));
    assert_null(opal_cmd_line_get(*state, "verbose", 0, 0));
    assert_false(opal_cmd_line_is_set(*state, "np"));
    assert_int_equal(opal_cmd_line_count(*state, "np"), 0);
}

static void test_optional_argument_only_with_equals(void **state)
{
    parse_ok(*state, "--report-usage=out.txt --report-usage next", false);
    assert_int_equal(opal_cmd_line_count(*state, "report-usage"), 2);
    assert_string_equal(opal_cmd_line_get(*state, "report-usage", 0, 0), "out.txt");
    assert_null(opal_cmd_line_get(*state, "report-usage", 1, 0));
    /* The word after the bare form is not its argument. */
    assert_tail(*state, "next");

    parse_ok(*state, "--report-usage=", false);
    assert_string_equal(opal_cmd_line_get(*state, "report-usage", 0, 0), "");
}

static void test_single_letter_long_name(void **state)
{
    parse_ok(*state, "-x PATH --x=HOME", false);
    assert_int_equal(opal_cmd_line_count(*state, "x"), 2);
    assert_string_equal(opal_cmd_line_get(*state, "x", 0, 0), "PATH");
    assert_string_equal(opal_cmd_line_get(*state, "x", 1, 0), "HOME");
}

static void test_negative_numbers_are_values(void **state)
{
    parse_ok(*state, "--np -5 --mca level -1.5 -n -0", false);
    assert_string_equal(opal_cmd_line_get(*state, "np", 0, 0), "-5");
    assert_string_equal(opal_cmd_line_get(*state, "mca", 0, 1), "-1.5");
    assert_string_equal(opal_cmd_line_get(*state, "np", 1, 0), "-0");
}

static void test_dash_values_that_name_no_option_are_values(void **state)
{
    parse_ok(*state, "--mca plm_rsh_args -q --host -", false);
    assert_string_equal(opal_cmd_line_get(*state, "mca", 0, 1), "-q");
    assert_string_equal(opal_cmd_line_get(*state, "host", 0, 0), "-");
}

static void test_empty_values(void **state)
{
    char *const argv[] = {"herd-test", "--np", "", "--host=", NULL};

    assert_int_equal(opal_cmd_line_parse(*state, 4, argv, false), HERD_SUCCESS);
    assert_string_equal(opal_cmd_line_get(*state, "np", 0, 0), "");
    assert_string_equal(opal_cmd_line_get(*state, "host", 0, 0), "");
}

static void test_non_options_collected_anywhere(void **state)
{
    parse_ok(*state, "a --np 2 b - c", false);
    assert_tail(*state, "a b - c");
    assert_int_equal(opal_cmd_line_tail_count(*state), 4);
    assert_string_equal(opal_cmd_line_get(*state, "np", 0, 0), "2");
}

static void test_double_dash_ends_options(void **state)
{
    parse_ok(*state, "--np 2 -- --verbose x -- y", false);
    assert_false(opal_cmd_line_is_set(*state, "verbose"));
    assert_tail(*state, "--verbose x -- y");

    parse_ok(*state, "--", false);
    assert_int_equal(opal_cmd_line_tail_count(*state), 0);
}

static void test_stop_at_first_nonoption(void **state)
{
    parse_ok(*state, "-np 2 --display-map prog --verbose -n 3 --bogus -- x", true);
    assert_string_equal(opal_cmd_line_get(*state, "np", 0, 0), "2");
    assert_int_equal(opal_cmd_line_count(*state, "np"), 1);
    assert_false(opal_cmd_line_is_set(*state, "verbose"));
    assert_true(opal_cmd_line_is_set(*state, "display-map"));
    assert_tail(*state, "prog --verbose -n 3 --bogus -- x");

    /* "--" before the program is dropped; after it, even option-like words are the program's. */
    parse_ok(*state, "-v -- --prog --np", true);
    assert_int_equal(opal_cmd_line_count(*state, "verbose"), 1);
    assert_tail(*state, "--prog --np");
}

static void test_no_arguments(void **state)
{
    char *const argv[] = {"herd-test", NULL};

    assert_int_equal(opal_cmd_line_parse(*state, 1, argv, true), HERD_SUCCESS);
    assert_non_null(opal_cmd_line_tail(*state));
    assert_int_equal(opal_cmd_line_tail_count(*state), 0);
    assert_int_equal(opal_cmd_line_parse(*state, 0, NULL, false), HERD_SUCCESS);
    assert_int_equal(opal_cmd_line_tail_count(*state), 0);
    assert_int_equal(opal_cmd_line_parse(*state, 2, NULL, false), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_cmd_line_parse(NULL, 1, argv, false), HERD_ERR_BAD_PARAM);
}

static void test_reparse_replaces_results(void **state)
{
    parse_ok(*state, "--np 4 a", false);
    parse_ok(*state, "--verbose b", false);
    assert_false(opal_cmd_line_is_set(*state, "np"));
    assert_true(opal_cmd_line_is_set(*state, "verbose"));
    assert_tail(*state, "b");
}

static void test_failed_parse_keeps_previous_results(void **state)
{
    parse_ok(*state, "--np 4 a", false);
    parse_fails(*state, "--verbose --bogus", false,
                "herd-test: unknown option '--bogus' (see herd-test --help)\n");
    assert_string_equal(opal_cmd_line_get(*state, "np", 0, 0), "4");
    assert_false(opal_cmd_line_is_set(*state, "verbose"));
    assert_tail(*state, "a");
}

static void test_unknown_option_with_suggestion(void **state)
{
    parse_fails(*state, "--paramm fw comp", false,
                "herd-test: unknown option '--paramm'; did you mean '--param'? "
                "(see herd-test --help)\n");
    /* Single dash and an attached value: the suggestion is still the long form, without the
     * value. */
    parse_fails(*state, "-hots=a,b", false,
                "herd-test: unknown option '-hots'; did you mean '--host'? "
                "(see herd-test --help)\n");
    parse_fails(*state, "--display_map", false,
                "herd-test: unknown option '--display_map'; did you mean '--display-map'? "
                "(see herd-test --help)\n");
}

static void test_unknown_option_without_suggestion(void **state)
{
    parse_fails(*state, "--completely-unrelated", false,
                "herd-test: unknown option '--completely-unrelated' (see herd-test --help)\n");
    /* Too short to guess from, though "q" is within two edits of "np". */
    parse_fails(*state, "-q", false, "herd-test: unknown option '-q' (see herd-test --help)\n");
    /* A short flag does not take an attached word. */
    parse_fails(*state, "-vq", false, "herd-test: unknown option '-vq' (see herd-test --help)\n");
    /* An option-like word after a non-option is still an option when not stopping there. */
    parse_fails(*state, "prog --bogus", false,
                "herd-test: unknown option '--bogus' (see herd-test --help)\n");
    parse_fails(*state, "--=value", false,
                "herd-test: unknown option '--=value' (see herd-test --help)\n");
    /* A negative number on its own is not a value of anything. */
    parse_fails(*state, "-5", true, "herd-test: unknown option '-5' (see herd-test --help)\n");
}

static void test_missing_arguments(void **state)
{
    parse_fails(*state, "--param fw", false,
                "herd-test: option '--param' needs 2 arguments (FRAMEWORK COMPONENT)\n");
    parse_fails(*state, "--np", false, "herd-test: option '--np' needs 1 argument (N)\n");
    parse_fails(*state, "-n", false, "herd-test: option '-n' needs 1 argument (N)\n");
    parse_fails(*state, "-np", true, "herd-test: option '--np' needs 1 argument (N)\n");
    parse_fails(*state, "--mca=name", false,
                "herd-test: option '--mca' needs 2 arguments (NAME VALUE)\n");
}

static void test_option_is_not_taken_as_an_argument(void **state)
{
    parse_fails(*state, "--np --host a", false, "herd-test: option '--np' needs 1 argument (N)\n");
    parse_fails(*state, "--np -v", false, "herd-test: option '--np' needs 1 argument (N)\n");
    parse_fails(*state, "--np -- 4", false, "herd-test: option '--np' needs 1 argument (N)\n");
    parse_fails(*state, "--mca a --display-map", false,
                "herd-test: option '--mca' needs 2 arguments (NAME VALUE)\n");
}

static void test_argument_given_to_a_flag(void **state)
{
    parse_fails(*state, "--verbose=yes", false,
                "herd-test: option '--verbose' does not take an argument (given 'yes')\n");
    parse_fails(*state, "-v=yes", false,
                "herd-test: option '-v' does not take an argument (given 'yes')\n");
    parse_fails(*state, "--display-map=", false,
                "herd-test: option '--display-map' does not take an argument (given '')\n");
}

static void test_queries_on_unknown_names(void **state)
{
    parse_ok(*state, "--np 1", false);
    assert_false(opal_cmd_line_is_set(*state, "nope"));
    assert_int_equal(opal_cmd_line_count(*state, "nope"), 0);
    assert_null(opal_cmd_line_get(*state, "nope", 0, 0));
    assert_false(opal_cmd_line_is_set(*state, NULL));
    assert_false(opal_cmd_line_is_set(NULL, "np"));
    assert_null(opal_cmd_line_tail(NULL));
    assert_int_equal(opal_cmd_line_tail_count(NULL), 0);
}

static void test_tail_before_any_parse(void **state)
{
    assert_non_null(opal_cmd_line_tail(*state));
    assert_int_equal(opal_cmd_line_tail_count(*state), 0);
    assert_false(opal_cmd_line_is_set(*state, "np"));
}

/* Try to create a parser from a table; return the status and what was printed. */
static int create_with(const char *tool, const opal_cmd_line_option_t *table, char **errors)
{
    opal_cmd_line_t *cmd = NULL;
    herd_test_capture_t capture;
    int rc;

    herd_test_capture_start(&capture);
    rc = opal_cmd_line_create(tool, table, &cmd);
    *errors = herd_test_capture_stop(&capture);
    if (HERD_SUCCESS == rc) {
        opal_cmd_line_free(cmd);
    } else {
        assert_null(cmd);
    }
    return rc;
}

static void test_create_rejects_bad_tables(void **state)
{
    const opal_cmd_line_option_t duplicate_long[] = {
        {"np", 0, 1, "N", "a"}, {"np", 0, 0, NULL, "b"}, {NULL, 0, 0, NULL, NULL}};
    const opal_cmd_line_option_t duplicate_short[] = {
        {"np", 'n', 1, "N", "a"}, {"nodes", 'n', 0, NULL, "b"}, {NULL, 0, 0, NULL, NULL}};
    const opal_cmd_line_option_t bad_name[] = {{"a=b", 0, 0, NULL, "a"}, {NULL, 0, 0, NULL, NULL}};
    const opal_cmd_line_option_t dash_name[] = {{"-a", 0, 0, NULL, "a"}, {NULL, 0, 0, NULL, NULL}};
    const opal_cmd_line_option_t bad_count[] = {{"a", 0, -2, NULL, "a"}, {NULL, 0, 0, NULL, NULL}};
    const opal_cmd_line_option_t bad_short[] = {{"a", '-', 0, NULL, "a"}, {NULL, 0, 0, NULL, NULL}};
    const opal_cmd_line_option_t empty[] = {{NULL, 0, 0, NULL, NULL}};
    char *errors;

    assert_int_equal(create_with("t", duplicate_long, &errors), HERD_ERR_BAD_PARAM);
    assert_string_equal(errors, "t: internal error: option table entry 'np' repeats an earlier "
                                "long name\n");
    free(errors);
    assert_int_equal(create_with("t", duplicate_short, &errors), HERD_ERR_BAD_PARAM);
    assert_non_null(strstr(errors, "'nodes' repeats an earlier short name"));
    free(errors);
    const opal_cmd_line_option_t *const bad[] = {bad_name, dash_name, bad_count, bad_short};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(create_with("t", bad[i], &errors), HERD_ERR_BAD_PARAM);
        assert_non_null(strstr(errors, "t: internal error: option table entry"));
        free(errors);
    }
    assert_int_equal(create_with(NULL, options, &errors), HERD_ERR_BAD_PARAM);
    assert_non_null(strstr(errors, "without a tool name"));
    free(errors);
    assert_int_equal(create_with("t", NULL, &errors), HERD_ERR_BAD_PARAM);
    free(errors);

    /* A tool without options is fine, and then every option is unknown. */
    assert_int_equal(create_with("t", empty, &errors), HERD_SUCCESS);
    assert_string_equal(errors, "");
    free(errors);
}

static void test_tool_without_options(void **state)
{
    const opal_cmd_line_option_t empty[] = {{NULL, 0, 0, NULL, NULL}};
    opal_cmd_line_t *cmd = NULL;

    assert_int_equal(opal_cmd_line_create("bare", empty, &cmd), HERD_SUCCESS);
    parse_ok(cmd, "a b", false);
    assert_tail(cmd, "a b");
    parse_fails(cmd, "--help", false, "bare: unknown option '--help' (see bare --help)\n");
    opal_cmd_line_free(cmd);
    opal_cmd_line_free(NULL);
}

/* The usage text of a table, as a string. */
static char *usage_of(const opal_cmd_line_option_t *table)
{
    opal_cmd_line_t *cmd = NULL;
    char *text = NULL;
    size_t size = 0;
    FILE *stream;

    assert_int_equal(opal_cmd_line_create("herd-test", table, &cmd), HERD_SUCCESS);
    stream = open_memstream(&text, &size);
    assert_non_null(stream);
    opal_cmd_line_usage(cmd, stream);
    fclose(stream);
    opal_cmd_line_free(cmd);
    return text;
}

static void test_usage_table_is_aligned(void **state)
{
    char *text = usage_of(options);

    /* The help column is two spaces after the longest synopsis. */
    assert_string_equal(text,
                        "  -n, --np N                       Number of processes to start\n"
                        "  -H, --host HOSTS                 Comma-separated list of hosts\n"
                        "      --mca NAME VALUE             Set the MCA variable NAME to VALUE\n"
                        "      --param FRAMEWORK COMPONENT  Show the variables of one component\n"
                        "      --display-map                "
                        "Print the process map before launching\n"
                        "      --report-usage[=FILE]        Report resource usage\n"
                        "  -v, --verbose                    Say more\n"
                        "      --x VAR                      "
                        "Export VAR to the launched processes\n");
    free(text);
}

static void test_usage_wraps_at_100_columns(void **state)
{
    const opal_cmd_line_option_t table[] = {
        {"np", 'n', 1, "N",
         "Number of processes to start. The processes are spread over the allocated nodes "
         "according to the mapping policy, which by default fills each node's cores before "
         "moving on to the next node."},
        {"a-very-long-option-name-that-pushes-the-help", 0, 1, "SOMETHING", "Short help"},
        {"word", 0, 0, NULL,
         "Unbreakable: "
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},
        {"quiet", 'q', 0, NULL, NULL},
        {NULL, 0, 0, NULL, NULL},
    };
    char *text = usage_of(table);
    char **lines = opal_argv_split(text, '\n');

    for (size_t i = 0; NULL != lines[i]; i++) {
        if (strlen(lines[i]) > 100) {
            fail_msg("usage line longer than 100 columns: '%s'", lines[i]);
        }
    }
    /* The help column is capped at 40, so a long synopsis puts its help on the next line, and a
     * word longer than the help column is cut. */
    assert_string_equal(lines[0], "  -n, --np N                            "
                                  "Number of processes to start. The processes are spread over");
    assert_string_equal(lines[1], "                                        "
                                  "the allocated nodes according to the mapping policy, which");
    assert_string_equal(lines[2], "                                        "
                                  "by default fills each node's cores before moving on to the");
    assert_string_equal(lines[3], "                                        next node.");
    assert_string_equal(lines[4], "      --a-very-long-option-name-that-pushes-the-help"
                                  " SOMETHING");
    assert_string_equal(lines[5], "                                        Short help");
    assert_string_equal(lines[6], "      --word                            Unbreakable:");
    assert_string_equal(lines[7], "                                        "
                                  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    assert_string_equal(lines[8], "                                        "
                                  "aaaaaaaaaaaaaaaaaaaaaaaa");
    assert_string_equal(lines[9], "  -q, --quiet");
    assert_null(lines[10]);
    opal_argv_free(lines);
    free(text);
}

int main(void)
{
#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        TEST(test_every_form_of_an_option_with_one_argument),
        TEST(test_two_arguments_and_repeats_keep_order),
        TEST(test_repeated_flag_is_counted),
        TEST(test_optional_argument_only_with_equals),
        TEST(test_single_letter_long_name),
        TEST(test_negative_numbers_are_values),
        TEST(test_dash_values_that_name_no_option_are_values),
        TEST(test_empty_values),
        TEST(test_non_options_collected_anywhere),
        TEST(test_double_dash_ends_options),
        TEST(test_stop_at_first_nonoption),
        TEST(test_no_arguments),
        TEST(test_reparse_replaces_results),
        TEST(test_failed_parse_keeps_previous_results),
        TEST(test_unknown_option_with_suggestion),
        TEST(test_unknown_option_without_suggestion),
        TEST(test_missing_arguments),
        TEST(test_option_is_not_taken_as_an_argument),
        TEST(test_argument_given_to_a_flag),
        TEST(test_queries_on_unknown_names),
        TEST(test_tail_before_any_parse),
        cmocka_unit_test(test_create_rejects_bad_tables),
        cmocka_unit_test(test_tool_without_options),
        cmocka_unit_test(test_usage_table_is_aligned),
        cmocka_unit_test(test_usage_wraps_at_100_columns),
    };
#undef TEST

    return cmocka_run_group_tests(tests, NULL, NULL);
}
