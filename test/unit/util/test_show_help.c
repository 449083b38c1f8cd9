/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the help catalogs: topic lookup, placeholders, the dashed frame, the
 * HERD_HELP_PATH search order and the fallback when a file or topic is missing. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "opal/util/show_help.h"
#include "support/capture.h"

#define FIRST HERD_TEST_SRCDIR "/util/fixtures/first"
#define SECOND HERD_TEST_SRCDIR "/util/fixtures/second"
#define MISSING HERD_TEST_SRCDIR "/util/fixtures/no-such-folder"

static const char dashes[] =
    "--------------------------------------------------------------------------\n";


static int use_both_folders(void **state)
{
    return setenv("HERD_HELP_PATH", FIRST ":" SECOND, 1);
}

static void test_placeholders_and_comments(void **state)
{
    char *text = opal_show_help_string("help-test-util.txt", "greeting", false, "Ada", 3);

    assert_string_equal(text, "Hello Ada, you have 3 new messages.\n"
                              "Second line with 100% certainty.\n");
    free(text);
}

static void test_error_header_frames_the_text(void **state)
{
    char *text = opal_show_help_string("help-test-util.txt", "greeting", true, "Ada", 3);
    char expected[512];

    assert_int_equal(strlen(dashes), 75);
    snprintf(expected, sizeof(expected), "%sHello Ada, you have 3 new messages.\n"
             "Second line with 100%% certainty.\n%s", dashes, dashes);
    assert_string_equal(text, expected);
    free(text);
}

static void test_show_help_prints_to_stderr(void **state)
{
    char *expected = opal_show_help_string("help-test-util.txt", "greeting", true, "Bo", 0);
    herd_test_capture_t capture;
    char *text;
    int rc;

    herd_test_capture_start(&capture);
    rc = opal_show_help("help-test-util.txt", "greeting", true, "Bo", 0);
    text = herd_test_capture_stop(&capture);
    assert_int_equal(rc, HERD_SUCCESS);
    assert_string_equal(text, expected);
    assert_non_null(strstr(text, "Hello Bo, you have 0 new messages."));
    free(text);
    free(expected);
}

static void test_section_layout(void **state)
{
    char *text = opal_show_help_string("help-test-util.txt", "layout", false);

    assert_string_equal(text, "Blank lines at the start and end of a section are dropped.\n"
                              "[host:pid] a line that merely starts with a bracket is text.\n"
                              "\n"
                              "A blank line inside the text is kept.\n"
                              "[not a header]\n");
    free(text);
}

static void test_empty_and_last_sections(void **state)
{
    char *text = opal_show_help_string("help-test-util.txt", "empty-topic", false);

    assert_string_equal(text, "\n");
    free(text);
    text = opal_show_help_string("help-test-util.txt", "last-topic", false);
    assert_string_equal(text, "The last section ends at the end of the file.\n");
    free(text);
}

static void test_windows_line_endings(void **state)
{
    char *text = opal_show_help_string("help-crlf.txt", "crlf", false);

    assert_string_equal(text, "line one\nline two\n");
    free(text);
}

static void test_search_order_follows_help_path(void **state)
{
    char *text = opal_show_help_string("help-test-util.txt", "override", false);

    assert_string_equal(text, "from the first folder\n");
    free(text);

    assert_int_equal(setenv("HERD_HELP_PATH", SECOND ":" FIRST, 1), 0);
    text = opal_show_help_string("help-test-util.txt", "override", false);
    assert_string_equal(text, "from the second folder\n");
    free(text);

    /* Empty entries and folders that do not exist are skipped. */
    assert_int_equal(setenv("HERD_HELP_PATH", "::" MISSING "::" FIRST ":", 1), 0);
    text = opal_show_help_string("help-test-util.txt", "override", false);
    assert_string_equal(text, "from the first folder\n");
    free(text);
}

static void test_file_only_in_a_later_folder(void **state)
{
    char *text = opal_show_help_string("help-only-second.txt", "found", false, "yes");

    assert_string_equal(text, "found in the second folder: yes\n");
    free(text);
}

static void test_missing_file_fallback(void **state)
{
    herd_test_capture_t capture;
    char *text;
    int rc;

    herd_test_capture_start(&capture);
    rc = opal_show_help("help-no-such-file.txt", "some-topic", true, "lost", 42);
    text = herd_test_capture_stop(&capture);
    assert_int_equal(rc, HERD_ERR_NOT_FOUND);
    /* Framed like the message it replaces; names the file, the topic and where it looked. */
    assert_memory_equal(text, dashes, strlen(dashes));
    assert_string_equal(text + strlen(text) - strlen(dashes), dashes);
    assert_non_null(strstr(text, "help file is missing"));
    assert_non_null(strstr(text, "  help file: help-no-such-file.txt\n"));
    assert_non_null(strstr(text, "  topic:     some-topic\n"));
    assert_non_null(strstr(text, "  searched:  " FIRST ":" SECOND ":"));
    assert_non_null(strstr(text, "HERD_HELP_PATH"));
    free(text);
}

static void test_missing_topic_fallback(void **state)
{
    char *text = opal_show_help_string("help-test-util.txt", "no-such-topic", false);

    assert_non_null(text);
    assert_ptr_equal(strstr(text, "herd could not show a message because its help file has no "
                                  "section for it.\n"),
                     text);
    assert_non_null(strstr(text, "  help file: " FIRST "/help-test-util.txt\n"));
    assert_non_null(strstr(text, "  topic:     no-such-topic\n"));
    assert_null(strstr(text, dashes));
    free(text);

    herd_test_capture_t capture;
    int rc;

    herd_test_capture_start(&capture);
    rc = opal_show_help("help-test-util.txt", "no-such-topic", false);
    text = herd_test_capture_stop(&capture);
    assert_int_equal(rc, HERD_ERR_NOT_FOUND);
    assert_non_null(strstr(text, "no-such-topic"));
    free(text);
}

static void test_first_file_found_is_authoritative(void **state)
{
    /* The topic exists only in the second folder's copy; the first copy wins, so this is the
     * missing-topic fallback naming the first copy. */
    char *text = opal_show_help_string("help-test-util.txt", "only-second", false);

    assert_non_null(strstr(text, "  help file: " FIRST "/help-test-util.txt\n"));
    assert_null(strstr(text, "exists only in the second"));
    free(text);
}

static void test_topic_names_match_exactly(void **state)
{
    /* Neither a prefix nor a longer name of an existing topic. */
    char *text = opal_show_help_string("help-test-util.txt", "greet", false);

    assert_non_null(strstr(text, "has no section for it"));
    free(text);
    text = opal_show_help_string("help-test-util.txt", "greeting-extra", false);
    assert_non_null(strstr(text, "has no section for it"));
    free(text);
}

static void test_without_help_path(void **state)
{
    char *text;

    assert_int_equal(unsetenv("HERD_HELP_PATH"), 0);
    text = opal_show_help_string("help-test-util.txt", "greeting", false, "x", 1);
    /* Only the install folder is searched, and the fixture is not installed there. */
    assert_non_null(strstr(text, "help file is missing"));
    assert_null(strstr(text, FIRST));
    free(text);
}

static void test_null_names(void **state)
{
    char *text = opal_show_help_string(NULL, NULL, false);

    assert_non_null(strstr(text, "(no file given)"));
    assert_non_null(strstr(text, "(no topic given)"));
    free(text);
}

int main(void)
{
#define TEST(name) cmocka_unit_test_setup(name, use_both_folders)
    const struct CMUnitTest tests[] = {
        TEST(test_placeholders_and_comments),
        TEST(test_error_header_frames_the_text),
        TEST(test_show_help_prints_to_stderr),
        TEST(test_section_layout),
        TEST(test_empty_and_last_sections),
        TEST(test_windows_line_endings),
        TEST(test_search_order_follows_help_path),
        TEST(test_file_only_in_a_later_folder),
        TEST(test_missing_file_fallback),
        TEST(test_missing_topic_fallback),
        TEST(test_first_file_found_is_authoritative),
        TEST(test_topic_names_match_exactly),
        TEST(test_without_help_path),
        TEST(test_null_names),
    };
#undef TEST

    return cmocka_run_group_tests(tests, NULL, NULL);
}
