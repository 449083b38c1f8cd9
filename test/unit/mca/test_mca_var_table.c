/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of table-driven registration (opal_mca_var_register_table() and its framework
 * variant): every type, levels, enums, a failure in the middle of a table, a table registered
 * twice, and that a table registers exactly what the same calls one by one would. */
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
#include "support/capture.h"

static const opal_mca_component_t tcp_component = {.framework = "fabric", .name = "tcp"};
static const opal_mca_component_t ofi_component = {.framework = "fabric", .name = "ofi"};

static const opal_mca_var_enum_value_t colours[] = {
    {"red", 1}, {"green", 2}, {"blue", 3}, {NULL, 0}};

/* Storage is static, as a component's is: the variable system writes to it until finalize, which
 * teardown reaches after the test returned. Tests set the defaults they need first. */
typedef struct {
    int priority;
    unsigned int count;
    size_t size;
    bool flag;
    char *text;
    int colour;
} test_vars_t;

static test_vars_t vars, other_vars;

static int initialized;
static herd_test_capture_t stderr_capture;

/* Every HERD_MCA_* variable comes out of the environment, so that only what a test sets counts. */
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

static void var_init(void)
{
    assert_int_equal(HERD_SUCCESS, opal_mca_var_init());
    initialized++;
}

static void set_defaults(void)
{
    vars = (test_vars_t){
        .priority = 10, .count = 3, .size = 4096, .flag = true, .text = "lo", .colour = 2};
    other_vars = vars;
}

static int setup(void **state)
{
    clear_mca_environment();
    set_defaults();
    initialized = 0;
    return 0;
}

static int teardown(void **state)
{
    if (NULL != stderr_capture.file) { /* a test failed while capturing */
        free(herd_test_capture_stop(&stderr_capture));
    }
    while (initialized > 0) {
        opal_mca_var_finalize();
        initialized--;
    }
    clear_mca_environment();
    return 0;
}

static void assert_value_string(const char *full_name, const char *expected)
{
    char *value = NULL;
    int index = opal_mca_var_find(full_name);

    if (index < 0) {
        fail_msg("%s is not registered", full_name);
    }
    assert_int_equal(HERD_SUCCESS, opal_mca_var_value_string(index, &value));
    assert_string_equal(expected, value);
    free(value);
}

static int level_of(const char *full_name)
{
    opal_mca_var_info_t info;

    assert_int_equal(HERD_SUCCESS, opal_mca_var_get_info(opal_mca_var_find(full_name), &info));
    return info.level;
}

/* ---------------------------------------------------------------------------------------------
 * Tables that register
 * ------------------------------------------------------------------------------------------- */

static void test_every_type(void **state)
{
    int indices[6] = {-7, -7, -7, -7, -7, -7};
    const opal_mca_var_def_t defs[] = {
        {.name = "priority",
         .type = OPAL_MCA_VAR_INT,
         .storage = &vars.priority,
         .help = "The priority",
         .index = &indices[0]},
        {.name = "count",
         .type = OPAL_MCA_VAR_UNSIGNED,
         .storage = &vars.count,
         .help = "A count",
         .index = &indices[1]},
        {.name = "size",
         .type = OPAL_MCA_VAR_SIZE,
         .storage = &vars.size,
         .help = "A size",
         .index = &indices[2]},
        {.name = "flag",
         .type = OPAL_MCA_VAR_BOOL,
         .storage = &vars.flag,
         .help = "A flag",
         .index = &indices[3]},
        {.name = "text",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &vars.text,
         .help = "A text",
         .index = &indices[4]},
        {.name = "colour",
         .type = OPAL_MCA_VAR_ENUM,
         .storage = &vars.colour,
         .help = "A colour",
         .enum_values = colours,
         .index = &indices[5]},
    };
    opal_mca_var_info_t info;
    char *value = NULL;

    setenv("HERD_MCA_fabric_tcp_priority", "-4", 1);
    setenv("HERD_MCA_fabric_tcp_count", "0x10", 1);
    setenv("HERD_MCA_fabric_tcp_size", "2k", 1);
    setenv("HERD_MCA_fabric_tcp_flag", "off", 1);
    setenv("HERD_MCA_fabric_tcp_text", "eth0", 1);
    setenv("HERD_MCA_fabric_tcp_colour", "blue", 1);
    var_init();
    assert_int_equal(HERD_SUCCESS, opal_mca_var_register_table(&tcp_component, defs,
                                                               OPAL_MCA_VAR_DEFS_COUNT(defs)));

    /* the values of the sources, in the storage and as text */
    assert_int_equal(-4, vars.priority);
    assert_int_equal(16, vars.count);
    assert_int_equal(2048, vars.size);
    assert_false(vars.flag);
    assert_string_equal("eth0", vars.text);
    assert_int_equal(3, vars.colour);
    assert_value_string("fabric_tcp_colour", "blue");

    /* in table order, each index written, each with its name, type, help and default */
    assert_int_equal(6, opal_mca_var_count());
    for (int i = 0; i < 6; i++) {
        assert_int_equal(i, indices[i]);
        assert_int_equal(HERD_SUCCESS, opal_mca_var_get_info(indices[i], &info));
        assert_string_equal("fabric", info.framework);
        assert_string_equal("tcp", info.component);
        assert_string_equal(defs[i].name, info.name);
        assert_string_equal(defs[i].help, info.help);
        assert_int_equal(defs[i].type, info.type);
        assert_int_equal(OPAL_MCA_VAR_LEVEL_DEFAULT, info.level);
        assert_int_equal(OPAL_MCA_VAR_SOURCE_ENV, info.source);
    }
    assert_int_equal(HERD_SUCCESS, opal_mca_var_default_string(indices[2], &value));
    assert_string_equal("4096", value);
    free(value);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_default_string(indices[4], &value));
    assert_string_equal("lo", value);
    free(value);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_default_string(indices[5], &value));
    assert_string_equal("green", value);
    free(value);
}

static void test_levels(void **state)
{
    const opal_mca_var_def_t defs[] = {
        {.name = "priority", .type = OPAL_MCA_VAR_INT, .storage = &vars.priority},
        {.name = "count", .type = OPAL_MCA_VAR_UNSIGNED, .storage = &vars.count, .level = 4},
        {.name = "size", .type = OPAL_MCA_VAR_SIZE, .storage = &vars.size, .level = 9},
        {.name = "flag", .type = OPAL_MCA_VAR_BOOL, .storage = &vars.flag, .level = 1},
    };

    var_init();
    assert_int_equal(HERD_SUCCESS, opal_mca_var_register_table(&tcp_component, defs,
                                                               OPAL_MCA_VAR_DEFS_COUNT(defs)));
    assert_int_equal(OPAL_MCA_VAR_LEVEL_DEFAULT, level_of("fabric_tcp_priority"));
    assert_int_equal(4, level_of("fabric_tcp_count"));
    assert_int_equal(9, level_of("fabric_tcp_size"));
    assert_int_equal(1, level_of("fabric_tcp_flag"));
}

static void test_bad_levels(void **state)
{
    const int bad_levels[] = {10, -1};
    char expected[64];
    char *out;

    var_init();
    for (size_t i = 0; i < 2; i++) {
        const opal_mca_var_def_t defs[] = {
            {.name = "priority", .type = OPAL_MCA_VAR_INT, .storage = &vars.priority},
            {.name = "count",
             .type = OPAL_MCA_VAR_UNSIGNED,
             .storage = &vars.count,
             .level = bad_levels[i]},
            {.name = "size", .type = OPAL_MCA_VAR_SIZE, .storage = &vars.size},
        };

        herd_test_capture_start(&stderr_capture);
        assert_int_equal(
            HERD_ERR_BAD_PARAM,
            opal_mca_var_register_table(&tcp_component, defs, OPAL_MCA_VAR_DEFS_COUNT(defs)));
        out = herd_test_capture_stop(&stderr_capture);
        snprintf(expected, sizeof(expected), "count was registered with level %d", bad_levels[i]);
        assert_contains(out, expected);
        assert_contains(out, "to 9 (developers)");
        free(out);
        /* the entry before it registered, the bad one and those after it not */
        assert_true(opal_mca_var_find("fabric_tcp_priority") >= 0);
        assert_int_equal(HERD_ERR_NOT_FOUND, opal_mca_var_find("fabric_tcp_count"));
        assert_int_equal(HERD_ERR_NOT_FOUND, opal_mca_var_find("fabric_tcp_size"));
    }
}

static void test_enums(void **state)
{
    const opal_mca_var_def_t good[] = {
        {.name = "colour",
         .type = OPAL_MCA_VAR_ENUM,
         .storage = &vars.colour,
         .enum_values = colours,
         .level = 5},
    };
    const opal_mca_var_def_t without_values[] = {
        {.name = "shade", .type = OPAL_MCA_VAR_ENUM, .storage = &vars.priority},
    };
    const opal_mca_var_def_t values_on_int[] = {
        {.name = "hue",
         .type = OPAL_MCA_VAR_INT,
         .storage = &vars.priority,
         .enum_values = colours},
    };
    opal_mca_var_info_t info;
    char *out;

    setenv("HERD_MCA_fabric_tcp_colour", "1", 1); /* the numeric form of a listed value */
    var_init();
    assert_int_equal(HERD_SUCCESS, opal_mca_var_register_table(&tcp_component, good, 1));
    assert_int_equal(1, vars.colour);
    assert_value_string("fabric_tcp_colour", "red");
    assert_int_equal(HERD_SUCCESS,
                     opal_mca_var_get_info(opal_mca_var_find("fabric_tcp_colour"), &info));
    assert_non_null(info.enum_values);
    assert_string_equal("blue", info.enum_values[2].name);
    assert_int_equal(5, info.level);

    /* an enum needs its values; other types take none */
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(HERD_ERR_BAD_PARAM,
                     opal_mca_var_register_table(&tcp_component, without_values, 1));
    assert_int_equal(HERD_ERR_BAD_PARAM,
                     opal_mca_var_register_table(&tcp_component, values_on_int, 1));
    out = herd_test_capture_stop(&stderr_capture);
    assert_contains(out, "fabric_tcp_shade");
    assert_contains(out, "hue");
    free(out);
    assert_int_equal(1, opal_mca_var_count());
}

/* ---------------------------------------------------------------------------------------------
 * Failures and repeats
 * ------------------------------------------------------------------------------------------- */

/* A bad value in the environment for the middle entry: reported once, the table stops there. */
static void test_error_in_the_middle(void **state)
{
    int indices[3] = {-7, -7, -7};
    const opal_mca_var_def_t defs[] = {
        {.name = "priority",
         .type = OPAL_MCA_VAR_INT,
         .storage = &vars.priority,
         .index = &indices[0]},
        {.name = "count",
         .type = OPAL_MCA_VAR_UNSIGNED,
         .storage = &vars.count,
         .level = 4,
         .index = &indices[1]},
        {.name = "size", .type = OPAL_MCA_VAR_SIZE, .storage = &vars.size, .index = &indices[2]},
    };
    char *out;

    setenv("HERD_MCA_fabric_tcp_priority", "7", 1);
    setenv("HERD_MCA_fabric_tcp_count", "-1", 1);
    setenv("HERD_MCA_fabric_tcp_size", "1k", 1);
    var_init();
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_mca_var_register_table(
                                             &tcp_component, defs, OPAL_MCA_VAR_DEFS_COUNT(defs)));
    out = herd_test_capture_stop(&stderr_capture);
    assert_contains(out, "fabric_tcp_count");
    assert_contains(out, "HERD_MCA_fabric_tcp_count");
    free(out);

    /* no index written: the table as a whole did not register */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(-7, indices[i]);
    }
    /* before it: registered with its value; itself: registered, keeping its default, its level
     * not set; after it: not registered, storage untouched */
    assert_int_equal(7, vars.priority);
    assert_int_equal(3, vars.count);
    assert_value_string("fabric_tcp_count", "3");
    assert_int_equal(OPAL_MCA_VAR_LEVEL_DEFAULT, level_of("fabric_tcp_count"));
    assert_int_equal(HERD_ERR_NOT_FOUND, opal_mca_var_find("fabric_tcp_size"));
    assert_int_equal(4096, vars.size);
    assert_int_equal(2, opal_mca_var_count());
}

static void test_registered_twice(void **state)
{
    int first[2] = {-7, -7};
    int second[2] = {-7, -7};
    const opal_mca_var_def_t defs[] = {
        {.name = "priority",
         .type = OPAL_MCA_VAR_INT,
         .storage = &vars.priority,
         .index = &first[0]},
        {.name = "text",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &vars.text,
         .level = 6,
         .index = &first[1]},
    };
    /* the same names with other storage: the value is shared */
    const opal_mca_var_def_t again[] = {
        {.name = "priority",
         .type = OPAL_MCA_VAR_INT,
         .storage = &other_vars.priority,
         .index = &second[0]},
        {.name = "text",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &other_vars.text,
         .level = 6,
         .index = &second[1]},
    };

    setenv("HERD_MCA_fabric_tcp_text", "eth1", 1);
    var_init();
    assert_int_equal(HERD_SUCCESS, opal_mca_var_register_table(&tcp_component, defs, 2));
    assert_int_equal(HERD_SUCCESS, opal_mca_var_register_table(&tcp_component, defs, 2));
    other_vars.priority = 99; /* a second default is not a value: the first registration's wins */
    assert_int_equal(HERD_SUCCESS, opal_mca_var_register_table(&tcp_component, again, 2));
    assert_int_equal(2, opal_mca_var_count());
    assert_memory_equal(first, second, sizeof(first));
    assert_int_equal(10, other_vars.priority);
    assert_string_equal("eth1", other_vars.text);
    assert_ptr_equal(vars.text, other_vars.text);
    assert_int_equal(6, level_of("fabric_tcp_text"));

    /* a value set later reaches every storage */
    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_value(first[0], "12"));
    assert_int_equal(12, vars.priority);
    assert_int_equal(12, other_vars.priority);
}

/* The same name under another type in a second table is a programming mistake. */
static void test_registered_again_with_other_type(void **state)
{
    const opal_mca_var_def_t defs[] = {
        {.name = "priority", .type = OPAL_MCA_VAR_INT, .storage = &vars.priority},
    };
    const opal_mca_var_def_t wrong[] = {
        {.name = "priority", .type = OPAL_MCA_VAR_STRING, .storage = &vars.text},
    };
    char *out;

    var_init();
    assert_int_equal(HERD_SUCCESS, opal_mca_var_register_table(&tcp_component, defs, 1));
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_mca_var_register_table(&tcp_component, wrong, 1));
    out = herd_test_capture_stop(&stderr_capture);
    assert_contains(out, "fabric_tcp_priority was registered again with a different type");
    free(out);
}

static void test_empty_and_bad_tables(void **state)
{
    const opal_mca_var_def_t defs[] = {
        {.name = "priority", .type = OPAL_MCA_VAR_INT, .storage = &vars.priority},
    };
    const opal_mca_var_def_t no_storage[] = {
        {.name = "priority", .type = OPAL_MCA_VAR_INT},
    };
    const opal_mca_var_def_t no_name[] = {
        {.type = OPAL_MCA_VAR_INT, .storage = &vars.priority},
    };
    char *out;

    /* before init: refused, and said so */
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(HERD_ERROR, opal_mca_var_register_table(&tcp_component, defs, 1));
    out = herd_test_capture_stop(&stderr_capture);
    assert_contains(out, "opal_mca_var_init");
    free(out);

    var_init();
    assert_int_equal(HERD_SUCCESS, opal_mca_var_register_table(&tcp_component, NULL, 0));
    assert_int_equal(HERD_SUCCESS, opal_mca_var_register_framework_table("fabric", NULL, 0));
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_mca_var_register_table(&tcp_component, NULL, 1));
    assert_int_equal(HERD_ERR_BAD_PARAM,
                     opal_mca_var_register_table(&tcp_component, no_storage, 1));
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_mca_var_register_table(&tcp_component, no_name, 1));
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_mca_var_register_framework_table(NULL, defs, 1));
    out = herd_test_capture_stop(&stderr_capture);
    assert_contains(out, "fabric_tcp_priority was registered with a missing argument");
    free(out);
    assert_int_equal(0, opal_mca_var_count());
}

/* ---------------------------------------------------------------------------------------------
 * Framework tables, and tables against calls
 * ------------------------------------------------------------------------------------------- */

static void test_framework_table(void **state)
{
    static char *selection;
    int indices[4];
    const opal_mca_var_def_t defs[] = {
        {.name = "", .type = OPAL_MCA_VAR_STRING, .storage = &selection, .index = &indices[0]},
        {.name = "base_verbose",
         .type = OPAL_MCA_VAR_INT,
         .storage = &vars.priority,
         .index = &indices[1]},
        {.name = "slots",
         .type = OPAL_MCA_VAR_UNSIGNED,
         .storage = &vars.count,
         .level = 3,
         .index = &indices[2]},
        {.name = "colour",
         .type = OPAL_MCA_VAR_ENUM,
         .storage = &vars.colour,
         .enum_values = colours,
         .index = &indices[3]},
    };
    const opal_mca_var_def_t top[] = {
        {.name = "top_level", .type = OPAL_MCA_VAR_BOOL, .storage = &vars.flag},
    };
    static const char *const expected[][3] = {
        {"dvm", "", ""},
        {"dvm_base_verbose", "base", "verbose"},
        {"dvm_slots", "", "slots"},
        {"dvm_colour", "", "colour"},
    };
    opal_mca_var_info_t info;

    selection = NULL;
    setenv("HERD_MCA_dvm_colour", "red", 1);
    setenv("HERD_MCA_top_level", "no", 1);
    var_init();
    assert_int_equal(HERD_SUCCESS, opal_mca_var_register_framework_table(
                                       "dvm", defs, OPAL_MCA_VAR_DEFS_COUNT(defs)));
    for (int i = 0; i < 4; i++) {
        assert_int_equal(HERD_SUCCESS, opal_mca_var_get_info(indices[i], &info));
        assert_string_equal(expected[i][0], info.full_name);
        assert_string_equal("dvm", info.framework);
        assert_string_equal(expected[i][1], info.component);
        assert_string_equal(expected[i][2], info.name);
    }
    assert_int_equal(3, level_of("dvm_slots"));
    assert_int_equal(1, vars.colour);

    assert_int_equal(HERD_SUCCESS, opal_mca_var_register_framework_table("", top, 1));
    assert_false(vars.flag);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_get_info(opal_mca_var_find("top_level"), &info));
    assert_string_equal("", info.framework);
    assert_string_equal("", info.component);
}

/* A table made at run time for storage in a struct passed in, as a program's own variables are
 * (the DVM's, herdrun's): defaults set first, checks after the registration. */
static int register_program_vars(test_vars_t *v)
{
    const opal_mca_var_def_t defs[] = {
        {.name = "startup_timeout", .type = OPAL_MCA_VAR_INT, .storage = &v->priority},
        {.name = "fabric_inventory", .type = OPAL_MCA_VAR_STRING, .storage = &v->text},
    };
    int rc;

    v->priority = 60;
    v->text = "auto";
    rc = opal_mca_var_register_framework_table("prog", defs, OPAL_MCA_VAR_DEFS_COUNT(defs));
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    return v->priority < 1 ? HERD_ERR_BAD_PARAM : HERD_SUCCESS;
}

static void test_table_built_at_run_time(void **state)
{
    test_vars_t *v = &other_vars;

    setenv("HERD_MCA_prog_fabric_inventory", "none", 1);
    var_init();
    assert_int_equal(HERD_SUCCESS, register_program_vars(v));
    assert_int_equal(60, v->priority);
    assert_string_equal("none", v->text);
    assert_value_string("prog_startup_timeout", "60");
    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_cli("prog_startup_timeout", "0"));
    assert_int_equal(HERD_ERR_BAD_PARAM, register_program_vars(v));
}

/* What herd-info shows of a variable but its full name and where its value came from, as one
 * line. */
static char *describe(int index)
{
    opal_mca_var_info_t info;
    char *value = NULL;
    char *fallback = NULL;
    char *line = NULL;

    assert_int_equal(HERD_SUCCESS, opal_mca_var_get_info(index, &info));
    assert_int_equal(HERD_SUCCESS, opal_mca_var_value_string(index, &value));
    assert_int_equal(HERD_SUCCESS, opal_mca_var_default_string(index, &fallback));
    assert_true(asprintf(&line, "%s|%s|%s|%s|%d|%s|%s|%s|%s", info.framework, info.name, info.help,
                         opal_mca_var_type_name(info.type), info.level, value, fallback,
                         opal_mca_var_source_name(info.source),
                         NULL == info.enum_values ? "" : info.enum_values[0].name) > 0);
    free(value);
    free(fallback);
    return line;
}

/* A table registers what the calls it replaces registered, in the same order. */
static void test_table_matches_calls(void **state)
{
    const opal_mca_var_def_t defs[] = {
        {.name = "priority",
         .type = OPAL_MCA_VAR_INT,
         .storage = &vars.priority,
         .help = "Priority"},
        {.name = "size",
         .type = OPAL_MCA_VAR_SIZE,
         .storage = &vars.size,
         .help = "Size",
         .level = 4},
        {.name = "colour",
         .type = OPAL_MCA_VAR_ENUM,
         .storage = &vars.colour,
         .help = "Colour",
         .enum_values = colours},
        {.name = "text", .type = OPAL_MCA_VAR_STRING, .storage = &vars.text, .help = "Text"},
    };
    int index;

    setenv("HERD_MCA_fabric_tcp_size", "8k", 1);
    setenv("HERD_MCA_fabric_ofi_size", "8k", 1);
    var_init();
    /* one by one, as components used to, for ofi: indices 0, 2, 4, 6 */
    index = opal_mca_var_register(&ofi_component, "priority", "Priority", OPAL_MCA_VAR_INT,
                                  &other_vars.priority);
    assert_int_equal(0, index);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_register_table(&tcp_component, defs, 1));
    index =
        opal_mca_var_register(&ofi_component, "size", "Size", OPAL_MCA_VAR_SIZE, &other_vars.size);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_set_level(index, 4));
    assert_int_equal(HERD_SUCCESS, opal_mca_var_register_table(&tcp_component, &defs[1], 1));
    opal_mca_var_register_enum(&ofi_component, "colour", "Colour", colours, &other_vars.colour);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_register_table(&tcp_component, &defs[2], 1));
    opal_mca_var_register(&ofi_component, "text", "Text", OPAL_MCA_VAR_STRING, &other_vars.text);
    assert_int_equal(HERD_SUCCESS, opal_mca_var_register_table(&tcp_component, &defs[3], 1));

    assert_int_equal(8, opal_mca_var_count());
    for (int i = 0; i < 8; i += 2) {
        char *by_call = describe(i);
        char *by_table = describe(i + 1);

        assert_string_equal(by_call, by_table);
        free(by_call);
        free(by_table);
    }
    assert_memory_equal(&vars.size, &other_vars.size, sizeof(vars.size));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_every_type, setup, teardown),
        cmocka_unit_test_setup_teardown(test_levels, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_levels, setup, teardown),
        cmocka_unit_test_setup_teardown(test_enums, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_in_the_middle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_registered_twice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_registered_again_with_other_type, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_and_bad_tables, setup, teardown),
        cmocka_unit_test_setup_teardown(test_framework_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_table_built_at_run_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_table_matches_calls, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
