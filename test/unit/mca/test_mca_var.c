/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the MCA variable system: parsing of every type, the sources and their precedence,
 * parameter files, the messages users see, synonyms, unknown names and the init/finalize cycle. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/mca/base/mca_var.h"
#include "support/capture.h"

/* Storage given to opal_mca_var_register*() is static in every test, as a component's is: the
 * variable system writes to it until finalize, which teardown reaches after the test returned. */
static const opal_mca_component_t tcp_component = {.framework = "fabric", .name = "tcp"};

static const opal_mca_var_enum_value_t fabric_kinds[] = {
    {"tcp", 1}, {"ofi", 2}, {"ucx", 3}, {NULL, 0}};

/* Per-test state: a scratch folder and how many times the test called init. */
static struct {
    char dir[64];
    int inits;
} t;

/* ---------------------------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------------------------- */

/* Every HERD_MCA_* variable comes out of the environment, so that only what a test sets counts;
 * HERD_MCA_param_files is set to empty (no file) as the harness does. */
static void clear_mca_environment(void)
{
    extern char **environ;
    bool removed = true;

    while (removed) {
        removed = false;
        for (char **entry = environ; NULL != *entry; entry++) {
            if (0 == strncmp(*entry, "HERD_MCA_", 9)) {
                char name[256];
                size_t len = strcspn(*entry, "=");

                assert_true(len < sizeof(name));
                memcpy(name, *entry, len);
                name[len] = '\0';
                unsetenv(name);
                removed = true;
                break;
            }
        }
    }
    setenv("HERD_MCA_param_files", "", 1);
}

static char *write_file(const char *name, const char *content)
{
    char *path = NULL;
    FILE *file;

    assert_true(asprintf(&path, "%s/%s", t.dir, name) > 0);
    file = fopen(path, "w");
    assert_non_null(file);
    fputs(content, file);
    fclose(file);
    return path;
}

static void test_init(void)
{
    assert_int_equal(HERD_SUCCESS, opal_mca_var_init());
    t.inits++;
}

static void test_finalize(void)
{
    assert_true(t.inits > 0);
    opal_mca_var_finalize();
    t.inits--;
}

static herd_test_capture_t stderr_capture;

static size_t count_occurrences(const char *text, const char *part)
{
    size_t count = 0;

    for (const char *p = strstr(text, part); NULL != p; p = strstr(p + 1, part)) {
        count++;
    }
    return count;
}

static void assert_value_string(int index, const char *expected)
{
    char *value = NULL;

    assert_int_equal(HERD_SUCCESS, opal_mca_var_value_string(index, &value));
    assert_string_equal(expected, value);
    free(value);
}

static void assert_source(int index, opal_mca_var_source_t source, const char *detail)
{
    opal_mca_var_info_t info;

    assert_int_equal(HERD_SUCCESS, opal_mca_var_get_info(index, &info));
    assert_string_equal(opal_mca_var_source_name(source), opal_mca_var_source_name(info.source));
    if (NULL == detail) {
        assert_null(info.source_detail);
    } else {
        assert_non_null(info.source_detail);
        assert_string_equal(detail, info.source_detail);
    }
}

static opal_mca_var_source_t source_of(int index)
{
    opal_mca_var_info_t info;

    assert_int_equal(HERD_SUCCESS, opal_mca_var_get_info(index, &info));
    return info.source;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    chmod(path, 0700);
    return remove(path);
}

static int setup(void **state)
{
    snprintf(t.dir, sizeof(t.dir), "/tmp/herd-test-mca-var-XXXXXX");
    if (NULL == mkdtemp(t.dir)) {
        return -1;
    }
    t.inits = 0;
    clear_mca_environment();
    setenv("HOME", t.dir, 1);
    return 0;
}

static int teardown(void **state)
{
    if (NULL != stderr_capture.file) { /* a test failed while capturing */
        free(herd_test_capture_stop(&stderr_capture));
    }
    while (t.inits > 0) {
        test_finalize();
    }
    opal_mca_var_set_system_file(NULL);
    clear_mca_environment();
    nftw(t.dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Parsing
 * ------------------------------------------------------------------------------------------- */

static void check_int(const char *text, int expected)
{
    int value = -12345;

    if (HERD_SUCCESS != opal_mca_var_parse(OPAL_MCA_VAR_INT, NULL, text, &value)) {
        fail_msg("\"%s\" should parse as an int", text);
    }
    assert_int_equal(expected, value);
}

static void check_rejected(opal_mca_var_type_t type, const opal_mca_var_enum_value_t *values,
                           const char *text)
{
    /* Large enough for any type; the output must be left untouched on failure. */
    union {
        size_t size;
        char bytes[16];
    } value;
    char before[sizeof(value)];

    memset(&value, 0x5a, sizeof(value));
    memcpy(before, &value, sizeof(value));
    if (HERD_ERR_BAD_PARAM != opal_mca_var_parse(type, values, text, &value)) {
        fail_msg("\"%s\" should be rejected as %s", text ? text : "(null)",
                 opal_mca_var_type_name(type));
    }
    assert_memory_equal(before, &value, sizeof(value));
}

static void test_parse_int(void **state)
{
    check_int("42", 42);
    check_int("-7", -7);
    check_int("+3", 3);
    check_int("0x2a", 42);
    check_int("0X2A", 42);
    check_int("-0x10", -16);
    check_int("010", 10); /* no octal: a leading zero is just a zero */
    check_int(" 5 ", 5);
    check_int("2147483647", INT_MAX);
    check_int("-2147483648", INT_MIN);
    check_rejected(OPAL_MCA_VAR_INT, NULL, "");
    check_rejected(OPAL_MCA_VAR_INT, NULL, "   ");
    check_rejected(OPAL_MCA_VAR_INT, NULL, "abc");
    check_rejected(OPAL_MCA_VAR_INT, NULL, "12abc");
    check_rejected(OPAL_MCA_VAR_INT, NULL, "1 2");
    check_rejected(OPAL_MCA_VAR_INT, NULL, "0x");
    check_rejected(OPAL_MCA_VAR_INT, NULL, "-");
    check_rejected(OPAL_MCA_VAR_INT, NULL, "1.5");
    check_rejected(OPAL_MCA_VAR_INT, NULL, "2147483648");
    check_rejected(OPAL_MCA_VAR_INT, NULL, "-2147483649");
    check_rejected(OPAL_MCA_VAR_INT, NULL, "99999999999999999999999");
    check_rejected(OPAL_MCA_VAR_INT, NULL, NULL);
}

static void test_parse_unsigned(void **state)
{
    unsigned int value = 0;

    assert_int_equal(HERD_SUCCESS, opal_mca_var_parse(OPAL_MCA_VAR_UNSIGNED, NULL, "4294967295",
                                                      &value));
    assert_true(UINT_MAX == value);
    assert_int_equal(HERD_SUCCESS,
                     opal_mca_var_parse(OPAL_MCA_VAR_UNSIGNED, NULL, "0xffff", &value));
    assert_int_equal(0xffff, value);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_parse(OPAL_MCA_VAR_UNSIGNED, NULL, "0", &value));
    assert_int_equal(0, value);
    check_rejected(OPAL_MCA_VAR_UNSIGNED, NULL, "4294967296");
    check_rejected(OPAL_MCA_VAR_UNSIGNED, NULL, "-1");
    check_rejected(OPAL_MCA_VAR_UNSIGNED, NULL, "-0");
    check_rejected(OPAL_MCA_VAR_UNSIGNED, NULL, "");
    check_rejected(OPAL_MCA_VAR_UNSIGNED, NULL, "7x");
}

static void check_size(const char *text, size_t expected)
{
    size_t value = 0;

    if (HERD_SUCCESS != opal_mca_var_parse(OPAL_MCA_VAR_SIZE, NULL, text, &value)) {
        fail_msg("\"%s\" should parse as a size", text);
    }
    assert_true(expected == value);
}

static void test_parse_size(void **state)
{
    check_size("512", 512);
    check_size("4k", 4096);
    check_size("4K", 4096);
    check_size("4kb", 4096);
    check_size("4KiB", 4096);
    check_size("4 KiB", 4096);
    check_size("2M", 2u << 20);
    check_size("2mib", 2u << 20);
    check_size("1g", (size_t) 1 << 30);
    check_size("1GB", (size_t) 1 << 30);
    check_size("100b", 100);
    check_size("0x10k", 16 * 1024);
    check_size("0", 0);
    check_size(" 8m ", 8u << 20);
    if (SIZE_MAX == UINT64_MAX) {
        check_size("18446744073709551615", SIZE_MAX);
        check_size("16777216g", (size_t) 1 << 54);
        check_rejected(OPAL_MCA_VAR_SIZE, NULL, "17179869184g"); /* 2^64 */
        check_rejected(OPAL_MCA_VAR_SIZE, NULL, "18446744073709551616");
    }
    check_rejected(OPAL_MCA_VAR_SIZE, NULL, "-1");
    check_rejected(OPAL_MCA_VAR_SIZE, NULL, "-4k");
    check_rejected(OPAL_MCA_VAR_SIZE, NULL, "");
    check_rejected(OPAL_MCA_VAR_SIZE, NULL, "k");
    check_rejected(OPAL_MCA_VAR_SIZE, NULL, "4q");
    check_rejected(OPAL_MCA_VAR_SIZE, NULL, "4t");
    check_rejected(OPAL_MCA_VAR_SIZE, NULL, "4kk");
    check_rejected(OPAL_MCA_VAR_SIZE, NULL, "4k1");
    check_rejected(OPAL_MCA_VAR_SIZE, NULL, "4ib");
    check_rejected(OPAL_MCA_VAR_SIZE, NULL, "1.5k");
}

static void test_parse_bool(void **state)
{
    static const char *const yes[] = {"1", "true", "TRUE", "yes", "Yes", "on", "ON",
                                      "enabled", "Enabled", " true "};
    static const char *const no[] = {"0", "false", "False", "no", "NO", "off", "Off",
                                     "disabled", "DISABLED"};
    bool value;

    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        value = false;
        assert_int_equal(HERD_SUCCESS, opal_mca_var_parse(OPAL_MCA_VAR_BOOL, NULL, yes[i], &value));
        assert_true(value);
    }
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
        value = true;
        assert_int_equal(HERD_SUCCESS, opal_mca_var_parse(OPAL_MCA_VAR_BOOL, NULL, no[i], &value));
        assert_false(value);
    }
    check_rejected(OPAL_MCA_VAR_BOOL, NULL, "");
    check_rejected(OPAL_MCA_VAR_BOOL, NULL, "2");
    check_rejected(OPAL_MCA_VAR_BOOL, NULL, "maybe");
    check_rejected(OPAL_MCA_VAR_BOOL, NULL, "truex");
    check_rejected(OPAL_MCA_VAR_BOOL, NULL, "t");
}

static void test_parse_string_and_enum(void **state)
{
    char *text = NULL;
    int kind = 0;

    assert_int_equal(HERD_SUCCESS, opal_mca_var_parse(OPAL_MCA_VAR_STRING, NULL, " a b ", &text));
    assert_string_equal(" a b ", text); /* strings are taken as they are */
    free(text);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_parse(OPAL_MCA_VAR_STRING, NULL, "", &text));
    assert_string_equal("", text);
    free(text);

    assert_int_equal(HERD_SUCCESS, opal_mca_var_parse(OPAL_MCA_VAR_ENUM, fabric_kinds, "ofi",
                                                      &kind));
    assert_int_equal(2, kind);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_parse(OPAL_MCA_VAR_ENUM, fabric_kinds, "UCX",
                                                      &kind));
    assert_int_equal(3, kind);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_parse(OPAL_MCA_VAR_ENUM, fabric_kinds, "1",
                                                      &kind));
    assert_int_equal(1, kind);
    check_rejected(OPAL_MCA_VAR_ENUM, fabric_kinds, "4");
    check_rejected(OPAL_MCA_VAR_ENUM, fabric_kinds, "sm");
    check_rejected(OPAL_MCA_VAR_ENUM, fabric_kinds, "");
    check_rejected(OPAL_MCA_VAR_ENUM, NULL, "tcp");
}

static void test_names_of_types_and_sources(void **state)
{
    assert_string_equal("int", opal_mca_var_type_name(OPAL_MCA_VAR_INT));
    assert_string_equal("unsigned", opal_mca_var_type_name(OPAL_MCA_VAR_UNSIGNED));
    assert_string_equal("size", opal_mca_var_type_name(OPAL_MCA_VAR_SIZE));
    assert_string_equal("bool", opal_mca_var_type_name(OPAL_MCA_VAR_BOOL));
    assert_string_equal("string", opal_mca_var_type_name(OPAL_MCA_VAR_STRING));
    assert_string_equal("enum", opal_mca_var_type_name(OPAL_MCA_VAR_ENUM));
    assert_string_equal("default", opal_mca_var_source_name(OPAL_MCA_VAR_SOURCE_DEFAULT));
    assert_string_equal("system file", opal_mca_var_source_name(OPAL_MCA_VAR_SOURCE_SYSTEM_FILE));
    assert_string_equal("user file", opal_mca_var_source_name(OPAL_MCA_VAR_SOURCE_USER_FILE));
    assert_string_equal("environment", opal_mca_var_source_name(OPAL_MCA_VAR_SOURCE_ENV));
    assert_string_equal("command line", opal_mca_var_source_name(OPAL_MCA_VAR_SOURCE_CLI));
    assert_string_equal("set", opal_mca_var_source_name(OPAL_MCA_VAR_SOURCE_SET));
    assert_string_equal("unknown", opal_mca_var_source_name((opal_mca_var_source_t) 42));
    assert_string_equal("unknown", opal_mca_var_type_name((opal_mca_var_type_t) 42));
}

/* ---------------------------------------------------------------------------------------------
 * Registration
 * ------------------------------------------------------------------------------------------- */

static void test_register_names_and_info(void **state)
{
    static const char *literal = "eth0";
    static int port;
    static char *include;
    static char *selection;
    static int verbose;
    static char *path;
    static bool flag;
    opal_mca_var_info_t info;
    int index;

    port = 5000;
    include = (char *) literal;
    selection = NULL;
    verbose = 0;
    path = NULL;
    flag = true;

    test_init();
    index = opal_mca_var_register(&tcp_component, "port", "The port", OPAL_MCA_VAR_INT, &port);
    assert_true(index >= 0);
    assert_int_equal(5000, port);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_get_info(index, &info));
    assert_int_equal(index, info.index);
    assert_string_equal("fabric_tcp_port", info.full_name);
    assert_string_equal("fabric", info.framework);
    assert_string_equal("tcp", info.component);
    assert_string_equal("port", info.name);
    assert_string_equal("The port", info.help);
    assert_int_equal(OPAL_MCA_VAR_INT, info.type);
    assert_int_equal(OPAL_MCA_VAR_LEVEL_DEFAULT, info.level);
    assert_int_equal(OPAL_MCA_VAR_SOURCE_DEFAULT, info.source);
    assert_null(info.source_detail);
    assert_null(info.deprecated_by);
    assert_int_equal(index, opal_mca_var_find("fabric_tcp_port"));

    /* A string default is copied: the variable system owns what storage points to. */
    index = opal_mca_var_register(&tcp_component, "if_include", NULL, OPAL_MCA_VAR_STRING,
                                  &include);
    assert_true(index >= 0);
    assert_non_null(include);
    assert_string_equal("eth0", include);
    assert_ptr_not_equal(literal, include);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_get_info(index, &info));
    assert_string_equal("", info.help);

    index = opal_mca_var_register_framework("fabric", "", "Selection", OPAL_MCA_VAR_STRING,
                                            &selection);
    assert_true(index >= 0);
    assert_null(selection);
    assert_value_string(index, "");
    assert_int_equal(HERD_SUCCESS, opal_mca_var_get_info(index, &info));
    assert_string_equal("fabric", info.full_name);

    index = opal_mca_var_register_framework("fabric", "base_verbose", "Verbosity",
                                            OPAL_MCA_VAR_INT, &verbose);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_get_info(index, &info));
    assert_string_equal("fabric_base_verbose", info.full_name);
    assert_string_equal("fabric", info.framework);
    assert_string_equal("base", info.component);
    assert_string_equal("verbose", info.name);

    index = opal_mca_var_register_framework("", "component_path", "Path", OPAL_MCA_VAR_STRING,
                                            &path);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_get_info(index, &info));
    assert_string_equal("component_path", info.full_name);
    assert_string_equal("", info.framework);
    assert_string_equal("", info.component);

    index = opal_mca_var_register(NULL, "top_flag", "Top-level", OPAL_MCA_VAR_BOOL, &flag);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_get_info(index, &info));
    assert_string_equal("top_flag", info.full_name);
    assert_string_equal("", info.framework);

    assert_int_equal(6, opal_mca_var_count());
    assert_int_equal(HERD_ERR_NOT_FOUND, opal_mca_var_find("fabric_tcp_nothing"));
}

static void test_value_and_default_strings(void **state)
{
    static int i;
    static unsigned int u;
    static size_t size;
    static bool b;
    static char *s;
    static int kind;
    static int weird;
    char *text = NULL;
    int ii, iu, isz, ib, is, ie, iw;

    i = -5;
    u = 7;
    size = 1024;
    b = false;
    s = NULL;
    kind = 2;
    weird = 99;

    setenv("HERD_MCA_fabric_tcp_size", "4k", 1);
    setenv("HERD_MCA_fabric_tcp_b", "yes", 1);
    setenv("HERD_MCA_fabric_tcp_kind", "3", 1);
    test_init();
    ii = opal_mca_var_register(&tcp_component, "i", NULL, OPAL_MCA_VAR_INT, &i);
    iu = opal_mca_var_register(&tcp_component, "u", NULL, OPAL_MCA_VAR_UNSIGNED, &u);
    isz = opal_mca_var_register(&tcp_component, "size", NULL, OPAL_MCA_VAR_SIZE, &size);
    ib = opal_mca_var_register(&tcp_component, "b", NULL, OPAL_MCA_VAR_BOOL, &b);
    is = opal_mca_var_register(&tcp_component, "s", NULL, OPAL_MCA_VAR_STRING, &s);
    ie = opal_mca_var_register_enum(&tcp_component, "kind", NULL, fabric_kinds, &kind);
    iw = opal_mca_var_register_enum(&tcp_component, "weird", NULL, fabric_kinds, &weird);
    assert_true(ii >= 0 && iu >= 0 && isz >= 0 && ib >= 0 && is >= 0 && ie >= 0 && iw >= 0);

    assert_true(4096 == size);
    assert_true(b);
    assert_int_equal(3, kind);
    assert_value_string(ii, "-5");
    assert_value_string(iu, "7");
    assert_value_string(isz, "4096");
    assert_value_string(ib, "true");
    assert_value_string(is, "");
    assert_value_string(ie, "ucx");
    assert_value_string(iw, "99"); /* a default outside the list is shown as its number */

    assert_int_equal(HERD_SUCCESS, opal_mca_var_default_string(isz, &text));
    assert_string_equal("1024", text);
    free(text);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_default_string(ib, &text));
    assert_string_equal("false", text);
    free(text);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_default_string(ie, &text));
    assert_string_equal("ofi", text);
    free(text);

    text = (char *) "untouched";
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_mca_var_value_string(1000, &text));
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_mca_var_default_string(-1, &text));
    assert_string_equal("untouched", text);
}

static void test_info_level_and_bad_index(void **state)
{
    static int value;
    opal_mca_var_info_t info;
    opal_mca_var_info_t before;
    int index;

    value = 1;

    test_init();
    index = opal_mca_var_register(&tcp_component, "port", NULL, OPAL_MCA_VAR_INT, &value);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_level(index, 5));
    assert_int_equal(HERD_SUCCESS, opal_mca_var_get_info(index, &info));
    assert_int_equal(5, info.level);
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_mca_var_set_level(index, 0));
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_mca_var_set_level(index, 10));
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_mca_var_set_level(index + 1, 3));

    memset(&info, 0x77, sizeof(info));
    memcpy(&before, &info, sizeof(info));
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_mca_var_get_info(index + 1, &info));
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_mca_var_get_info(-1, &info));
    assert_memory_equal(&before, &info, sizeof(info));
}

static void test_register_mistakes(void **state)
{
    static int value;
    static char *text;
    static int enum_value;
    const opal_mca_var_enum_value_t empty[] = {{NULL, 0}};
    char *out;

    value = 1;
    text = NULL;
    enum_value = 1;

    /* Before init nothing could have applied: refused, and said so. */
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(HERD_ERROR,
                     opal_mca_var_register(&tcp_component, "port", NULL, OPAL_MCA_VAR_INT, &value));
    out = herd_test_capture_stop(&stderr_capture);
    assert_contains(out, "opal_mca_var_init");
    free(out);

    test_init();
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(HERD_ERR_BAD_PARAM,
                     opal_mca_var_register(&tcp_component, "bad name", NULL, OPAL_MCA_VAR_INT,
                                           &value));
    assert_int_equal(HERD_ERR_BAD_PARAM,
                     opal_mca_var_register(&tcp_component, "port", NULL, OPAL_MCA_VAR_INT, NULL));
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_mca_var_register_enum(&tcp_component, "e", NULL,
                                                                    empty, &enum_value));
    assert_true(opal_mca_var_register(&tcp_component, "port", NULL, OPAL_MCA_VAR_INT, &value) >=
                0);
    /* The same name with another type is a programming mistake. */
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_mca_var_register(&tcp_component, "port", NULL,
                                                               OPAL_MCA_VAR_STRING, &text));
    out = herd_test_capture_stop(&stderr_capture);
    assert_contains(out, "fabric_tcp_bad name");
    assert_contains(out, "fabric_tcp_port");
    free(out);
    assert_int_equal(1, opal_mca_var_count());
}

/* ---------------------------------------------------------------------------------------------
 * Sources and precedence
 * ------------------------------------------------------------------------------------------- */

/* Sets fabric_tcp_port to 100 + source in the given source (before registration, except SET). */
static void set_in_source(opal_mca_var_source_t source, char **system_file, char **user_file)
{
    char line[64];

    snprintf(line, sizeof(line), "fabric_tcp_port = %d\n", 100 + (int) source);
    switch (source) {
    case OPAL_MCA_VAR_SOURCE_SYSTEM_FILE:
        free(*system_file);
        *system_file = write_file("system.conf", line);
        break;
    case OPAL_MCA_VAR_SOURCE_USER_FILE:
        mkdir(*user_file, 0700); /* the folder; then the file inside it */
        free(*user_file);
        *user_file = write_file(".herd/mca-params.conf", line);
        break;
    case OPAL_MCA_VAR_SOURCE_ENV:
        snprintf(line, sizeof(line), "%d", 100 + (int) source);
        setenv("HERD_MCA_fabric_tcp_port", line, 1);
        break;
    case OPAL_MCA_VAR_SOURCE_CLI:
        snprintf(line, sizeof(line), "%d", 100 + (int) source);
        assert_int_equal(HERD_SUCCESS, opal_mca_var_set_cli("fabric_tcp_port", line));
        break;
    case OPAL_MCA_VAR_SOURCE_DEFAULT:
    case OPAL_MCA_VAR_SOURCE_SET:
        break;
    }
}

/* The source detail a value from source should have, as set_in_source() made it. */
static const char *expected_detail(int source, const char *system_file, const char *user_file,
                                   char *buffer, size_t size)
{
    switch (source) {
    case OPAL_MCA_VAR_SOURCE_SYSTEM_FILE:
        snprintf(buffer, size, "%s:1", system_file);
        return buffer;
    case OPAL_MCA_VAR_SOURCE_USER_FILE:
        snprintf(buffer, size, "%s:1", user_file);
        return buffer;
    case OPAL_MCA_VAR_SOURCE_ENV:
        return "HERD_MCA_fabric_tcp_port";
    case OPAL_MCA_VAR_SOURCE_CLI:
        return "--mca";
    default:
        return NULL;
    }
}

static void test_precedence_of_every_pair(void **state)
{
    for (int low = OPAL_MCA_VAR_SOURCE_DEFAULT; low <= OPAL_MCA_VAR_SOURCE_SET; low++) {
        for (int high = low; high <= OPAL_MCA_VAR_SOURCE_SET; high++) {
            char *system_file = NULL;
            char *user_file = NULL;
            char expected[16];
            char detail[256];
            static int port;
            int index;

            port = 100;

            /* The default list of files is used: the system file, then ~/.herd. */
            unsetenv("HERD_MCA_param_files");
            assert_true(asprintf(&user_file, "%s/.herd", t.dir) > 0);
            set_in_source((opal_mca_var_source_t) low, &system_file, &user_file);
            set_in_source((opal_mca_var_source_t) high, &system_file, &user_file);
            if (NULL == system_file) {
                /* A file that does not exist: the compiled-in one must not leak into the test. */
                assert_true(asprintf(&system_file, "%s/no-system.conf", t.dir) > 0);
            }
            assert_int_equal(HERD_SUCCESS, opal_mca_var_set_system_file(system_file));
            test_init();
            index = opal_mca_var_register(&tcp_component, "port", NULL, OPAL_MCA_VAR_INT, &port);
            assert_true(index >= 0);
            if (OPAL_MCA_VAR_SOURCE_SET == high) {
                assert_int_equal(HERD_SUCCESS, opal_mca_var_set_value(index, "105"));
            }
            if (port != 100 + high) {
                fail_msg("%s over %s: got %d", opal_mca_var_source_name(high),
                         opal_mca_var_source_name(low), port);
            }
            snprintf(expected, sizeof(expected), "%d", 100 + high);
            assert_value_string(index, expected);
            assert_source(index, (opal_mca_var_source_t) high,
                          expected_detail(high, system_file, user_file, detail,
                                          sizeof(detail)));
            test_finalize();

            unsetenv("HERD_MCA_fabric_tcp_port");
            unlink(system_file);
            if (NULL != user_file) {
                unlink(user_file);
            }
            free(system_file);
            free(user_file);
        }
    }
}

static void test_source_details(void **state)
{
    char *sys = write_file("sys.conf", "# site settings\n\nfabric_tcp_a = 1\n");
    char *user = write_file("user.conf", "fabric_tcp_b = 2\n");
    char *list = NULL;
    char *detail = NULL;
    static int a, b, c, d, e;
    int ia, ib, ic, id, ie;

    a = 0;
    b = 0;
    c = 0;
    d = 0;
    e = 0;

    assert_true(asprintf(&list, "%s:%s", sys, user) > 0);
    setenv("HERD_MCA_param_files", list, 1);
    setenv("HERD_MCA_fabric_tcp_c", "3", 1);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_system_file(sys));
    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_cli("fabric_tcp_d", "4"));
    test_init();
    ia = opal_mca_var_register(&tcp_component, "a", NULL, OPAL_MCA_VAR_INT, &a);
    ib = opal_mca_var_register(&tcp_component, "b", NULL, OPAL_MCA_VAR_INT, &b);
    ic = opal_mca_var_register(&tcp_component, "c", NULL, OPAL_MCA_VAR_INT, &c);
    id = opal_mca_var_register(&tcp_component, "d", NULL, OPAL_MCA_VAR_INT, &d);
    ie = opal_mca_var_register(&tcp_component, "e", NULL, OPAL_MCA_VAR_INT, &e);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_value(ie, "5"));
    assert_int_equal(1, a);
    assert_int_equal(2, b);
    assert_int_equal(3, c);
    assert_int_equal(4, d);
    assert_int_equal(5, e);

    assert_true(asprintf(&detail, "%s:3", sys) > 0);
    assert_source(ia, OPAL_MCA_VAR_SOURCE_SYSTEM_FILE, detail);
    free(detail);
    assert_true(asprintf(&detail, "%s:1", user) > 0);
    assert_source(ib, OPAL_MCA_VAR_SOURCE_USER_FILE, detail);
    free(detail);
    assert_source(ic, OPAL_MCA_VAR_SOURCE_ENV, "HERD_MCA_fabric_tcp_c");
    assert_source(id, OPAL_MCA_VAR_SOURCE_CLI, "--mca");
    assert_source(ie, OPAL_MCA_VAR_SOURCE_SET, NULL);
    free(list);
    free(sys);
    free(user);
}

static void test_param_files_list(void **state)
{
    char *sys = write_file("sys.conf", "fabric_tcp_a = 1\nfabric_tcp_b = 1\n");
    char *first = write_file("first.conf", "fabric_tcp_a = 2\nfabric_tcp_b = 2\n");
    char *second = write_file("second.conf", "fabric_tcp_b = 3\n");
    char *list = NULL;
    char *detail = NULL;
    static int a, b;
    int ia, ib;

    a = 0;
    b = 0;

    /* Only a first entry naming the system file is the system file: here it comes last, so it
     * is a user file, and later files override earlier ones. */
    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_system_file(sys));
    assert_true(asprintf(&list, "%s:%s/missing.conf::%s:%s", first, t.dir, second, sys) > 0);
    setenv("HERD_MCA_param_files", list, 1);
    test_init();
    ia = opal_mca_var_register(&tcp_component, "a", NULL, OPAL_MCA_VAR_INT, &a);
    ib = opal_mca_var_register(&tcp_component, "b", NULL, OPAL_MCA_VAR_INT, &b);
    assert_int_equal(1, a);
    assert_int_equal(1, b);
    assert_true(asprintf(&detail, "%s:1", sys) > 0);
    assert_source(ia, OPAL_MCA_VAR_SOURCE_USER_FILE, detail);
    free(detail);
    test_finalize();
    free(list);

    assert_true(asprintf(&list, "%s:%s", first, second) > 0);
    setenv("HERD_MCA_param_files", list, 1);
    test_init();
    ia = opal_mca_var_register(&tcp_component, "a", NULL, OPAL_MCA_VAR_INT, &a);
    ib = opal_mca_var_register(&tcp_component, "b", NULL, OPAL_MCA_VAR_INT, &b);
    assert_int_equal(2, a);
    assert_int_equal(3, b);
    assert_int_equal(OPAL_MCA_VAR_SOURCE_USER_FILE, source_of(ib));
    test_finalize();
    free(list);

    /* "~/" means $HOME (the scratch folder here). */
    setenv("HERD_MCA_param_files", "~/second.conf", 1);
    test_init();
    ib = opal_mca_var_register(&tcp_component, "b", NULL, OPAL_MCA_VAR_INT, &b);
    assert_int_equal(3, b);
    free(sys);
    free(first);
    free(second);
}

static void test_param_file_syntax(void **state)
{
    char *path = write_file("syntax.conf",
                            "# a comment\n"                                      /* 1 */
                            "   # an indented comment\n"                         /* 2 */
                            "\n"                                                 /* 3 */
                            "fabric_tcp_port=1\n"                                /* 4 */
                            "  fabric_tcp_name   =   spaced value   # note\n"    /* 5 */
                            "fabric_tcp_quoted = \"  keep # this \"\n"           /* 6 */
                            "fabric_tcp_empty =\n"                               /* 7 */
                            "fabric_tcp_hash = a#b\n"                            /* 8 */
                            "this line has no equals sign\n"                     /* 9 */
                            "   = orphan value\n"                                /* 10 */
                            "fabric_tcp_crlf = 6\r\n"                            /* 11 */
                            "fabric_tcp_eq = a=b\n"                              /* 12 */
                            "fabric_tcp_last = 7");                              /* 13 */
    char *port_detail = NULL;
    char *where = NULL;
    char *out;
    static int port, crlf, last;
    static char *name, *quoted, *empty, *hash, *eq;
    int index;

    port = 0;
    crlf = 0;
    last = 0;
    name = NULL;
    quoted = NULL;
    empty = (char *) "default";
    hash = NULL;
    eq = NULL;

    setenv("HERD_MCA_param_files", path, 1);
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_init());
    t.inits++;
    out = herd_test_capture_stop(&stderr_capture);
    /* Both bad lines are reported with file:line and their text; nothing else is said. */
    assert_true(asprintf(&where, "%s:9", path) > 0);
    assert_contains(out, where);
    free(where);
    assert_contains(out, "this line has no equals sign");
    assert_true(asprintf(&where, "%s:10", path) > 0);
    assert_contains(out, where);
    free(where);
    assert_contains(out, "= orphan value");
    assert_null(strstr(out, ":4"));
    free(out);

    index = opal_mca_var_register(&tcp_component, "port", NULL, OPAL_MCA_VAR_INT, &port);
    assert_int_equal(1, port);
    assert_true(asprintf(&port_detail, "%s:4", path) > 0);
    assert_source(index, OPAL_MCA_VAR_SOURCE_USER_FILE, port_detail);
    free(port_detail);
    opal_mca_var_register(&tcp_component, "name", NULL, OPAL_MCA_VAR_STRING, &name);
    assert_string_equal("spaced value", name);
    opal_mca_var_register(&tcp_component, "quoted", NULL, OPAL_MCA_VAR_STRING, &quoted);
    assert_string_equal("  keep # this ", quoted);
    opal_mca_var_register(&tcp_component, "empty", NULL, OPAL_MCA_VAR_STRING, &empty);
    assert_string_equal("", empty);
    opal_mca_var_register(&tcp_component, "hash", NULL, OPAL_MCA_VAR_STRING, &hash);
    assert_string_equal("a#b", hash);
    opal_mca_var_register(&tcp_component, "crlf", NULL, OPAL_MCA_VAR_INT, &crlf);
    assert_int_equal(6, crlf);
    opal_mca_var_register(&tcp_component, "eq", NULL, OPAL_MCA_VAR_STRING, &eq);
    assert_string_equal("a=b", eq);
    opal_mca_var_register(&tcp_component, "last", NULL, OPAL_MCA_VAR_INT, &last);
    assert_int_equal(7, last);
    free(path);
}

static void test_missing_and_unreadable_files(void **state)
{
    char *list = NULL;
    char *folder = NULL;
    char *out;

    /* A missing file named in HERD_MCA_param_files is skipped with a warning naming it (the
     * user meant its settings to apply); init still succeeds. */
    assert_true(asprintf(&list, "%s/none.conf", t.dir) > 0);
    setenv("HERD_MCA_param_files", list, 1);
    herd_test_capture_start(&stderr_capture);
    test_init();
    out = herd_test_capture_stop(&stderr_capture);
    assert_contains(out, list);
    assert_contains(out, "cannot be found");
    free(out);
    test_finalize();
    free(list);

    /* The default files (none named) are silently absent. */
    unsetenv("HERD_MCA_param_files");
    setenv("HOME", t.dir, 1);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_system_file("/nonexistent/herd.conf"));
    herd_test_capture_start(&stderr_capture);
    test_init();
    out = herd_test_capture_stop(&stderr_capture);
    assert_string_equal("", out);
    free(out);
    test_finalize();

    /* A folder where a file should be is worth a warning; init still succeeds. */
    assert_true(asprintf(&folder, "%s/a-folder", t.dir) > 0);
    assert_int_equal(0, mkdir(folder, 0700));
    setenv("HERD_MCA_param_files", folder, 1);
    herd_test_capture_start(&stderr_capture);
    test_init();
    out = herd_test_capture_stop(&stderr_capture);
    assert_contains(out, folder);
    assert_contains(out, "could not be read");
    free(out);
    test_finalize();

    if (0 != geteuid()) {
        char *path = write_file("secret.conf", "fabric_tcp_port = 1\n");

        assert_int_equal(0, chmod(path, 0));
        setenv("HERD_MCA_param_files", path, 1);
        herd_test_capture_start(&stderr_capture);
        test_init();
        out = herd_test_capture_stop(&stderr_capture);
        assert_contains(out, path);
        assert_contains(out, strerror(EACCES));
        free(out);
        free(path);
    }
    free(folder);
}

static void test_environment_and_home_file(void **state)
{
    char *user = NULL;
    static int port;
    static size_t size;
    int index;

    port = 0;
    size = 0;

    /* With HERD_MCA_param_files unset, ~/.herd/mca-params.conf is read. */
    unsetenv("HERD_MCA_param_files");
    assert_true(asprintf(&user, "%s/.herd", t.dir) > 0);
    assert_int_equal(0, mkdir(user, 0700));
    free(user);
    user = write_file(".herd/mca-params.conf", "fabric_tcp_port = 9\n");
    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_system_file("/nonexistent/herd.conf"));
    setenv("HERD_MCA_fabric_tcp_size", "2M", 1);
    test_init();
    index = opal_mca_var_register(&tcp_component, "port", NULL, OPAL_MCA_VAR_INT, &port);
    assert_int_equal(9, port);
    assert_int_equal(OPAL_MCA_VAR_SOURCE_USER_FILE, source_of(index));
    opal_mca_var_register(&tcp_component, "size", NULL, OPAL_MCA_VAR_SIZE, &size);
    assert_true((2u << 20) == size);
    free(user);
}

/* ---------------------------------------------------------------------------------------------
 * Bad values
 * ------------------------------------------------------------------------------------------- */

static void test_bad_env_int(void **state)
{
    static int port;
    int index;
    char *out;

    port = 5000;

    setenv("HERD_MCA_fabric_tcp_port", "12x", 1);
    test_init();
    herd_test_capture_start(&stderr_capture);
    index = opal_mca_var_register(&tcp_component, "port", NULL, OPAL_MCA_VAR_INT, &port);
    out = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(HERD_ERR_BAD_PARAM, index);
    assert_int_equal(5000, port);
    assert_contains(out, "fabric_tcp_port");
    assert_contains(out, "\"12x\"");
    assert_contains(out, "environment");
    assert_contains(out, "HERD_MCA_fabric_tcp_port");
    assert_contains(out, "not an integer");
    assert_contains(out, "keeps the value 5000 (source: default)");
    free(out);

    /* Still registered, with the default; the bad value is not reported twice. */
    index = opal_mca_var_find("fabric_tcp_port");
    assert_true(index >= 0);
    assert_source(index, OPAL_MCA_VAR_SOURCE_DEFAULT, NULL);
    /* A synonym makes the variable look at its settings again, bad one included. */
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_register_synonym(index, "tcp_port_older"));
    out = herd_test_capture_stop(&stderr_capture);
    assert_string_equal("", out);
    free(out);
    assert_int_equal(5000, port);
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_cli("fabric_tcp_port", "7"));
    out = herd_test_capture_stop(&stderr_capture);
    assert_string_equal("", out);
    free(out);
    assert_int_equal(7, port);
}

static void test_bad_value_falls_back_to_lower_source(void **state)
{
    char *file = write_file("params.conf", "fabric_tcp_port = 7\n");
    char *detail = NULL;
    static int port;
    int index;
    char *out;

    port = 5000;

    setenv("HERD_MCA_param_files", file, 1);
    setenv("HERD_MCA_fabric_tcp_port", "-", 1);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_cli("fabric_tcp_port", "0x"));
    test_init();
    herd_test_capture_start(&stderr_capture);
    index = opal_mca_var_register(&tcp_component, "port", NULL, OPAL_MCA_VAR_INT, &port);
    out = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(HERD_ERR_BAD_PARAM, index);
    assert_int_equal(7, port);
    /* Both bad settings are named, each with its source; the file's value is kept. */
    assert_contains(out, "command line (--mca)");
    assert_contains(out, "\"0x\"");
    assert_contains(out, "environment (HERD_MCA_fabric_tcp_port)");
    assert_contains(out, "keeps the value 7 (source: user file)");
    free(out);
    assert_true(asprintf(&detail, "%s:1", file) > 0);
    assert_source(opal_mca_var_find("fabric_tcp_port"), OPAL_MCA_VAR_SOURCE_USER_FILE, detail);
    free(detail);
    free(file);
}

static void test_bad_values_of_other_types(void **state)
{
    static unsigned int u;
    static size_t size;
    static bool b;
    static int kind;
    char *out;

    u = 1;
    size = 2;
    b = true;
    kind = 1;

    setenv("HERD_MCA_fabric_tcp_u", "-3", 1);
    setenv("HERD_MCA_fabric_tcp_size", "12q", 1);
    setenv("HERD_MCA_fabric_tcp_b", "perhaps", 1);
    setenv("HERD_MCA_fabric_tcp_kind", "sm", 1);
    test_init();
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(HERD_ERR_BAD_PARAM,
                     opal_mca_var_register(&tcp_component, "u", NULL, OPAL_MCA_VAR_UNSIGNED, &u));
    assert_int_equal(HERD_ERR_BAD_PARAM,
                     opal_mca_var_register(&tcp_component, "size", NULL, OPAL_MCA_VAR_SIZE, &size));
    assert_int_equal(HERD_ERR_BAD_PARAM,
                     opal_mca_var_register(&tcp_component, "b", NULL, OPAL_MCA_VAR_BOOL, &b));
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_mca_var_register_enum(&tcp_component, "kind", NULL,
                                                                    fabric_kinds, &kind));
    out = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(1, u);
    assert_true(2 == size);
    assert_true(b);
    assert_int_equal(1, kind);
    assert_contains(out, "fabric_tcp_u");
    assert_contains(out, "not a non-negative integer");
    assert_contains(out, "\"12q\"");
    assert_contains(out, "not a size");
    assert_contains(out, "\"perhaps\"");
    assert_contains(out, "not a boolean");
    assert_contains(out, "HERD_MCA_fabric_tcp_kind");
    assert_contains(out, "tcp, ofi, ucx");
    assert_contains(out, "keeps the value tcp (source: default)");
    free(out);
}

/* ---------------------------------------------------------------------------------------------
 * Command line and program settings after registration
 * ------------------------------------------------------------------------------------------- */

static void test_cli_after_registration(void **state)
{
    static int port;
    static char *name;
    int index;
    int name_index;
    char *out;

    port = 5000;
    name = NULL;

    setenv("HERD_MCA_fabric_tcp_port", "6000", 1);
    test_init();
    index = opal_mca_var_register(&tcp_component, "port", NULL, OPAL_MCA_VAR_INT, &port);
    name_index = opal_mca_var_register(&tcp_component, "name", NULL, OPAL_MCA_VAR_STRING, &name);
    assert_int_equal(6000, port);

    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_cli("fabric_tcp_port", "6001"));
    assert_int_equal(6001, port);
    assert_source(index, OPAL_MCA_VAR_SOURCE_CLI, "--mca");
    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_cli("fabric_tcp_name", "x"));
    assert_string_equal("x", name);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_cli("fabric_tcp_name", "y"));
    assert_string_equal("y", name); /* the later --mca wins */
    assert_source(name_index, OPAL_MCA_VAR_SOURCE_CLI, "--mca");

    /* A bad value is refused at once and changes nothing. */
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_mca_var_set_cli("fabric_tcp_port", "lots"));
    out = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(6001, port);
    assert_source(index, OPAL_MCA_VAR_SOURCE_CLI, "--mca");
    assert_contains(out, "fabric_tcp_port");
    assert_contains(out, "\"lots\"");
    assert_contains(out, "command line (--mca)");
    assert_contains(out, "keeps the value 6001 (source: command line)");
    assert_int_equal(1, count_occurrences(out, "\"lots\""));
    free(out);
    assert_int_equal(0, opal_mca_var_check_unknown(NULL));

    /* What the program sets outranks the command line, which then cannot change it. */
    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_value(index, "42"));
    assert_int_equal(42, port);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_value(index, "43"));
    assert_int_equal(43, port);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_cli("fabric_tcp_port", "6002"));
    assert_int_equal(43, port);
    assert_source(index, OPAL_MCA_VAR_SOURCE_SET, NULL);
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_mca_var_set_value(index, "forty"));
    out = herd_test_capture_stop(&stderr_capture);
    assert_contains(out, "\"forty\"");
    free(out);
    assert_int_equal(43, port);
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_mca_var_set_value(index + 100, "1"));
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_mca_var_set_value(index, NULL));
}

static void test_cli_names_checked(void **state)
{
    static int port;
    char *out;

    herd_test_capture_start(&stderr_capture);
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_mca_var_set_cli("bad-name", "1"));
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_mca_var_set_cli("", "1"));
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_mca_var_set_cli("fabric_tcp_port", NULL));
    out = herd_test_capture_stop(&stderr_capture);
    assert_contains(out, "bad-name");
    free(out);
    /* Recorded before init, applied at registration. */
    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_cli("fabric_tcp_port", "11"));
    test_init();
    port = 0;
    opal_mca_var_register(&tcp_component, "port", NULL, OPAL_MCA_VAR_INT, &port);
    assert_int_equal(11, port);
}

/* ---------------------------------------------------------------------------------------------
 * Re-registration, synonyms, unknown names
 * ------------------------------------------------------------------------------------------- */

static void test_reregistration_shares_value(void **state)
{
    static int first;
    static int second;
    static char *s1;
    static char *s2;
    int index;
    int sindex;

    first = 1;
    second = 3;
    s1 = (char *) "a";
    s2 = (char *) "b";

    setenv("HERD_MCA_fabric_tcp_port", "9", 1);
    test_init();
    index = opal_mca_var_register(&tcp_component, "port", NULL, OPAL_MCA_VAR_INT, &first);
    assert_int_equal(9, first);
    assert_int_equal(index, opal_mca_var_register(&tcp_component, "port", NULL, OPAL_MCA_VAR_INT,
                                                  &second));
    assert_int_equal(9, second);
    assert_int_equal(1, opal_mca_var_count());
    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_value(index, "4"));
    assert_int_equal(4, first);
    assert_int_equal(4, second);

    sindex = opal_mca_var_register(&tcp_component, "name", NULL, OPAL_MCA_VAR_STRING, &s1);
    assert_int_equal(sindex,
                     opal_mca_var_register(&tcp_component, "name", NULL, OPAL_MCA_VAR_STRING, &s2));
    assert_string_equal("a", s2);
    assert_ptr_equal(s1, s2);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_value(sindex, "c"));
    assert_string_equal("c", s1);
    assert_ptr_equal(s1, s2);

    test_finalize();
    assert_null(s1);
    assert_null(s2);
}

static void test_synonym(void **state)
{
    static int port;
    int index;
    int old_index;
    opal_mca_var_info_t info;
    char *out;

    port = 5000;

    setenv("HERD_MCA_tcp_port_old", "77", 1);
    test_init();
    index = opal_mca_var_register(&tcp_component, "port", NULL, OPAL_MCA_VAR_INT, &port);
    assert_int_equal(5000, port);
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_register_synonym(index, "tcp_port_old"));
    out = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(77, port);
    assert_source(index, OPAL_MCA_VAR_SOURCE_ENV, "HERD_MCA_tcp_port_old");
    assert_contains(out, "tcp_port_old");
    assert_contains(out, "tcp_port_old has been renamed to fabric_tcp_port");
    assert_contains(out, "from the environment (HERD_MCA_tcp_port_old)");
    free(out);

    old_index = opal_mca_var_find("tcp_port_old");
    assert_true(old_index >= 0 && old_index != index);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_get_info(old_index, &info));
    assert_string_equal("tcp_port_old", info.full_name);
    assert_string_equal("fabric_tcp_port", info.deprecated_by);
    assert_value_string(old_index, "77");

    /* The old name on the command line outranks the environment; warned once per name only. */
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_cli("tcp_port_old", "88"));
    out = herd_test_capture_stop(&stderr_capture);
    assert_string_equal("", out);
    free(out);
    assert_int_equal(88, port);
    assert_int_equal(0, opal_mca_var_check_unknown(NULL));

    /* Registering the same synonym again is harmless; taking a used name is not. */
    assert_int_equal(HERD_SUCCESS, opal_mca_var_register_synonym(index, "tcp_port_old"));
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_mca_var_register_synonym(index, "fabric_tcp_port"));
    out = herd_test_capture_stop(&stderr_capture);
    free(out);
}

static void test_synonym_loses_to_new_name_in_same_source(void **state)
{
    char *file = write_file("p.conf", "fabric_tcp_port = 2\ntcp_port_old = 1\n");
    static int port;
    int index;
    char *out;

    port = 0;

    setenv("HERD_MCA_param_files", file, 1);
    setenv("HERD_MCA_tcp_port_old", "3", 1);
    setenv("HERD_MCA_fabric_tcp_port", "4", 1);
    test_init();
    index = opal_mca_var_register(&tcp_component, "port", NULL, OPAL_MCA_VAR_INT, &port);
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_register_synonym(index, "tcp_port_old"));
    out = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(4, port);
    assert_contains(out, "renamed");
    free(out);
    test_finalize();

    /* The old name in a higher source beats the new name in a lower one. */
    unsetenv("HERD_MCA_fabric_tcp_port");
    test_init();
    index = opal_mca_var_register(&tcp_component, "port", NULL, OPAL_MCA_VAR_INT, &port);
    herd_test_capture_start(&stderr_capture);
    opal_mca_var_register_synonym(index, "tcp_port_old");
    free(herd_test_capture_stop(&stderr_capture));
    assert_int_equal(3, port);
    free(file);
}

static void test_unknown_names(void **state)
{
    char *file = write_file("p.conf", "\nfabric_tcp_prto = 2\n");
    char *where = NULL;
    static int port;
    char *out;
    const char *const skip_fabric[] = {"fabric", NULL};
    const char *const skip_other[] = {"fab", "fabric_tc", NULL};

    port = 0;

    setenv("HERD_MCA_param_files", file, 1);
    setenv("HERD_MCA_fabric_tcp_prot", "1", 1);
    setenv("HERD_MCA_completely_unrelated_thing", "1", 1);
    test_init();
    opal_mca_var_register(&tcp_component, "port", NULL, OPAL_MCA_VAR_INT, &port);
    opal_mca_var_register_framework("fabric", "base_verbose", NULL, OPAL_MCA_VAR_INT, &port);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_cli("fabricx_port", "1"));

    /* A prefix covers "<prefix>_..." and "<prefix>" itself, not "<prefix>x...". */
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(2, opal_mca_var_check_unknown(skip_fabric));
    out = herd_test_capture_stop(&stderr_capture);
    assert_contains(out, "completely_unrelated_thing");
    assert_contains(out, "fabricx_port");
    assert_null(strstr(out, "fabric_tcp_prot"));
    free(out);

    herd_test_capture_start(&stderr_capture);
    assert_int_equal(4, opal_mca_var_check_unknown(skip_other));
    out = herd_test_capture_stop(&stderr_capture);
    assert_contains(out, "fabric_tcp_prot is not a variable");
    assert_contains(out, "set from the environment (HERD_MCA_fabric_tcp_prot)");
    assert_contains(out, "Did you mean fabric_tcp_port?");
    assert_contains(out, "fabric_tcp_prto is not a variable");
    assert_true(asprintf(&where, "set from the user file (%s:2)", file) > 0);
    assert_contains(out, where);
    free(where);
    /* Already reported names are not repeated. */
    assert_null(strstr(out, "completely_unrelated_thing"));
    assert_null(strstr(out, "param_files"));
    free(out);

    herd_test_capture_start(&stderr_capture);
    assert_int_equal(4, opal_mca_var_check_unknown(NULL));
    out = herd_test_capture_stop(&stderr_capture);
    assert_string_equal("", out);
    free(out);
    free(file);
}

/* Only the names under the given prefixes are checked: those of frameworks the program uses. */
static void test_unknown_names_under(void **state)
{
    static int port;
    char *out;
    const char *const under_fabric[] = {"fabric", NULL};

    port = 0;

    setenv("HERD_MCA_fabric_tcp_prot", "1", 1);
    setenv("HERD_MCA_btl_tcp_anything", "1", 1);
    test_init();
    opal_mca_var_register(&tcp_component, "port", NULL, OPAL_MCA_VAR_INT, &port);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_cli("fabricx_port", "1"));

    herd_test_capture_start(&stderr_capture);
    assert_int_equal(1, opal_mca_var_check_unknown_under(under_fabric));
    out = herd_test_capture_stop(&stderr_capture);
    assert_contains(out, "fabric_tcp_prot is not a variable");
    assert_contains(out, "Did you mean fabric_tcp_port?");
    assert_null(strstr(out, "btl_tcp_anything"));
    assert_null(strstr(out, "fabricx_port"));
    free(out);

    /* no prefix: nothing is checked */
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(0, opal_mca_var_check_unknown_under(NULL));
    out = herd_test_capture_stop(&stderr_capture);
    assert_string_equal("", out);
    free(out);
}

static void test_unknown_name_without_suggestion(void **state)
{
    static int port;
    char *out;

    port = 0;

    setenv("HERD_MCA_zzzzzzzzzz", "1", 1);
    test_init();
    opal_mca_var_register(&tcp_component, "port", NULL, OPAL_MCA_VAR_INT, &port);
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(1, opal_mca_var_check_unknown(NULL));
    out = herd_test_capture_stop(&stderr_capture);
    assert_contains(out, "zzzzzzzzzz is not a variable");
    assert_contains(out, "set from the environment (HERD_MCA_zzzzzzzzzz)");
    assert_null(strstr(out, "Did you mean"));
    free(out);
}

/* ---------------------------------------------------------------------------------------------
 * Lifetime
 * ------------------------------------------------------------------------------------------- */

static void test_init_finalize_cycle(void **state)
{
    static int port;
    static char *name;

    port = 1;
    name = (char *) "default";

    setenv("HERD_MCA_fabric_tcp_port", "10", 1);
    test_init();
    test_init(); /* reference counted */
    opal_mca_var_register(&tcp_component, "port", NULL, OPAL_MCA_VAR_INT, &port);
    opal_mca_var_register(&tcp_component, "name", NULL, OPAL_MCA_VAR_STRING, &name);
    assert_int_equal(10, port);
    assert_non_null(name);
    test_finalize();
    assert_int_equal(2, opal_mca_var_count());
    assert_non_null(name);
    test_finalize();
    assert_int_equal(0, opal_mca_var_count());
    assert_null(name);
    assert_int_equal(1, port); /* back to its default, for the next registration */
    opal_mca_var_finalize(); /* one too many: harmless */

    /* A new init reads the environment again and knows no variable. */
    setenv("HERD_MCA_fabric_tcp_port", "20", 1);
    test_init();
    assert_int_equal(HERD_ERR_NOT_FOUND, opal_mca_var_find("fabric_tcp_port"));
    opal_mca_var_register(&tcp_component, "port", NULL, OPAL_MCA_VAR_INT, &port);
    assert_int_equal(20, port);
    test_finalize();

    /* Nothing set any more: the default is the original one, not the last value. */
    unsetenv("HERD_MCA_fabric_tcp_port");
    test_init();
    opal_mca_var_register(&tcp_component, "port", NULL, OPAL_MCA_VAR_INT, &port);
    assert_int_equal(1, port);
}

static void test_release_component(void **state)
{
    static const opal_mca_component_t other = {.framework = "fabric", .name = "ofi"};
    static int port;
    static char *name;
    static int other_port;
    int index;

    port = 1;
    name = (char *) "x";
    other_port = 1;

    test_init();
    index = opal_mca_var_register(&tcp_component, "port", NULL, OPAL_MCA_VAR_INT, &port);
    opal_mca_var_register(&tcp_component, "name", NULL, OPAL_MCA_VAR_STRING, &name);
    opal_mca_var_register(&other, "port", NULL, OPAL_MCA_VAR_INT, &other_port);
    opal_mca_var_release_component(&tcp_component);
    assert_null(name);
    /* The variable stays known, with its value, but no longer writes to the storage. */
    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_value(index, "5"));
    assert_int_equal(1, port);
    assert_value_string(index, "5");
    assert_value_string(opal_mca_var_find("fabric_tcp_name"), "x");
    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_cli("fabric_ofi_port", "6"));
    assert_int_equal(6, other_port);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_parse_int, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parse_unsigned, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parse_size, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parse_bool, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parse_string_and_enum, setup, teardown),
        cmocka_unit_test_setup_teardown(test_names_of_types_and_sources, setup, teardown),
        cmocka_unit_test_setup_teardown(test_register_names_and_info, setup, teardown),
        cmocka_unit_test_setup_teardown(test_value_and_default_strings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_info_level_and_bad_index, setup, teardown),
        cmocka_unit_test_setup_teardown(test_register_mistakes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_precedence_of_every_pair, setup, teardown),
        cmocka_unit_test_setup_teardown(test_source_details, setup, teardown),
        cmocka_unit_test_setup_teardown(test_param_files_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_param_file_syntax, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_and_unreadable_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_environment_and_home_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_env_int, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_value_falls_back_to_lower_source, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_bad_values_of_other_types, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cli_after_registration, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cli_names_checked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reregistration_shares_value, setup, teardown),
        cmocka_unit_test_setup_teardown(test_synonym, setup, teardown),
        cmocka_unit_test_setup_teardown(test_synonym_loses_to_new_name_in_same_source, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_unknown_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_names_under, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_name_without_suggestion, setup, teardown),
        cmocka_unit_test_setup_teardown(test_init_finalize_cycle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_release_component, setup, teardown),
    };

    /* Run by hand (not through make check), help files are still found in the source tree. */
    setenv("HERD_HELP_PATH", HERD_TEST_TOP_SRCDIR "/opal/mca/base", 0);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
