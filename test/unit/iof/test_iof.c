/* SPDX-License-Identifier: BSD-3-Clause */
/* iof: which component is selected (default, a stub DSO that outranks it, one built for another
 * interface version), the framework variables, the base helpers (prefixes, --stdin values, pipes,
 * passing pipe ends over a socket), and the default component's source and sink forwarding real
 * pipes to each other in one process: whole lines, long lines, end of stream, files, flow
 * control, the drained callback, stdin, malformed and repeated messages. */
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
#include <regex.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "opal/event/event.h"
#include "opal/mca/base/mca_var.h"
#include "opal/mca/mca.h"
#include "orte/mca/iof/default/iof_default.h"
#include "orte/mca/iof/iof.h"
#include "support/capture.h"

#define STUB_DIR HERD_TEST_BUILDDIR "/iof/stubs"

#define DEFAULT_WINDOW    ((size_t) 262144)
#define DEFAULT_LINE_MAX  ((size_t) 65536)
#define DEFAULT_PIPE_SIZE ((size_t) 262144)

/* Rounds of the event loop a test may wait for something; with the 10 ms tick a broken build
 * fails after about a minute instead of hanging. */
#define MAX_ROUNDS 6000
/* Rounds without any change after which the forwarding is taken to be at rest. */
#define QUIET_ROUNDS 5

#define MAX_PROCS 48

/* "[YYYY-MM-DD HH:MM:SS.uuuuuu] " */
#define TIMESTAMP_REGEX "^\\[[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}\\] "

/* HERD_MCA_component_path as test/uninstalled-env.sh set it (the real DSO components). */
static char *build_component_path;
static herd_test_capture_t stderr_capture;

/* ------------------------------------------------------------------------------------------ */
/* helpers shared by every group */

/* No iof setting of one test leaks into the next. */
static void reset_environment(void)
{
    setenv("HERD_MCA_component_path", build_component_path, 1);
    unsetenv("HERD_MCA_iof");
    unsetenv("HERD_MCA_iof_base_verbose");
    unsetenv("HERD_MCA_iof_base_window");
    unsetenv("HERD_MCA_iof_base_line_max");
    unsetenv("HERD_MCA_iof_base_pipe_size");
    unsetenv("HERD_MCA_iof_default_priority");
    unsetenv("HERD_MCA_iof_stub_priority");
    setenv("HERD_MCA_mca_base_component_show_load_errors", "1", 1);
}

/* Writes all of text to a blocking fd. */
static void write_text(int fd, const char *text)
{
    size_t len = strlen(text);
    size_t done = 0;

    while (done < len) {
        ssize_t n = write(fd, text + done, len - done);
        if (n < 0 && EINTR == errno) {
            continue;
        }
        assert_true(n > 0);
        done += (size_t) n;
    }
}

/* Bytes waiting to be read from a pipe (0 for what is not one any more). */
static int pipe_pending(int fd)
{
    int pending = 0;

    return 0 == ioctl(fd, FIONREAD, &pending) ? pending : 0;
}

static bool fd_is_open(int fd)
{
    return fcntl(fd, F_GETFD) >= 0;
}

static bool has_flag(int fd, int flag)
{
    int flags = fcntl(fd, F_GETFL);

    assert_true(flags >= 0);
    return 0 != (flags & flag);
}

static bool is_cloexec(int fd)
{
    int flags = fcntl(fd, F_GETFD);

    assert_true(flags >= 0);
    return 0 != (flags & FD_CLOEXEC);
}

/* How many fds this process has open. */
static int count_open_fds(void)
{
    int count = 0;

    for (int fd = 0; fd < 4096; ++fd) {
        if (fd_is_open(fd)) {
            ++count;
        }
    }
    return count;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    return remove(path);
}

/* The whole file (NUL-terminated), or NULL. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *text;
    size_t n;

    if (NULL == f) {
        return NULL;
    }
    text = calloc(1, 65536);
    assert_non_null(text);
    n = fread(text, 1, 65535, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

static void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t) (v >> 24);
    p[1] = (uint8_t) (v >> 16);
    p[2] = (uint8_t) (v >> 8);
    p[3] = (uint8_t) v;
}

static void put_u64(uint8_t *p, uint64_t v)
{
    put_u32(p, (uint32_t) (v >> 32));
    put_u32(p + 4, (uint32_t) v);
}

static uint32_t get_u32(const uint8_t *p)
{
    return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3];
}

/* The wire headers, built by hand as iof_default.h describes them. */
static void data_header(uint8_t h[IOF_DATA_HEADER], uint32_t rank, uint8_t stream, uint8_t flags,
                        uint64_t offset)
{
    put_u32(h, rank);
    h[4] = stream;
    h[5] = flags;
    put_u64(h + 6, offset);
    put_u64(h + 14, 0);
}

static void ack_message(uint8_t m[IOF_ACK_SIZE], uint32_t rank, uint8_t stream, uint64_t end)
{
    put_u32(m, rank);
    m[4] = stream;
    put_u64(m + 5, end);
}

static void stdin_header(uint8_t h[IOF_STDIN_HEADER], uint32_t target, uint8_t flags,
                         uint64_t offset)
{
    put_u32(h, target);
    h[4] = flags;
    put_u64(h + 5, offset);
}

/* ------------------------------------------------------------------------------------------ */
/* framework: selection and variables */

static int framework_setup(void **state)
{
    reset_environment();
    return 0;
}

static int framework_teardown(void **state)
{
    orte_iof_base_close();
    assert_false(orte_iof_base_framework.opened);
    reset_environment();
    return 0;
}

/* Opens the framework (selection NULL: no HERD_MCA_iof) and returns the selected module's
 * name; fails the test when nothing is selected. */
static const char *open_with(const char *selection)
{
    const orte_iof_module_t *module;

    if (NULL != selection) {
        setenv("HERD_MCA_iof", selection, 1);
    }
    assert_int_equal(orte_iof_base_open(), HERD_SUCCESS);
    module = orte_iof_base_module();
    assert_non_null(module);
    return module->name;
}

static void close_and_reset(void)
{
    orte_iof_base_close();
    unsetenv("HERD_MCA_iof");
}

static bool has_component(const char *name)
{
    const opal_mca_framework_t *fw = &orte_iof_base_framework;

    for (size_t i = 0; i < fw->num_components; i++) {
        if (0 == strcmp(fw->components[i].component->name, name)) {
            return true;
        }
    }
    return false;
}

static void use_stub_components(void)
{
    char path[4096];

    snprintf(path, sizeof(path), "%s:%s", STUB_DIR, build_component_path);
    setenv("HERD_MCA_component_path", path, 1);
}

static void test_default_selected(void **state)
{
    const opal_mca_framework_t *fw = &orte_iof_base_framework;
    const orte_iof_module_t *module;

    assert_null(orte_iof_base_module());
    assert_string_equal(open_with(NULL), "default");
    assert_true(has_component("default"));
    assert_int_equal(fw->num_selected, 1);
    assert_int_equal(fw->selected[0]->priority, 50);
    module = orte_iof_base_module();
    /* the whole vtable is there */
    assert_non_null(module->source_create);
    assert_non_null(module->source_destroy);
    assert_non_null(module->source_add);
    assert_non_null(module->source_all_added);
    assert_non_null(module->source_exited);
    assert_non_null(module->source_finish);
    assert_non_null(module->source_deliver);
    assert_non_null(module->sink_create);
    assert_non_null(module->sink_destroy);
    assert_non_null(module->sink_deliver);
    assert_non_null(module->sink_source_lost);
    assert_non_null(module->sink_attach);
    assert_non_null(module->sink_queued);
    /* opening an open framework does nothing; one close undoes it */
    assert_int_equal(orte_iof_base_open(), HERD_SUCCESS);
    assert_ptr_equal(orte_iof_base_module(), module);
    orte_iof_base_close();
    assert_false(fw->opened);
    assert_null(orte_iof_base_module());
}

static void test_nothing_left(void **state)
{
    setenv("HERD_MCA_iof", "^default", 1);
    assert_int_equal(orte_iof_base_open(), HERD_ERR_NOT_FOUND);
    assert_false(orte_iof_base_framework.opened);
    assert_null(orte_iof_base_module());
}

/* A DSO on the component path with a higher priority wins; one built for another interface
 * version is refused with the reason. */
static void test_stub_outranks_default(void **state)
{
    const char *name;
    char *err;

    use_stub_components();
    herd_test_capture_start(&stderr_capture);
    name = open_with(NULL);
    err = herd_test_capture_stop(&stderr_capture);
    assert_string_equal(name, "stub");
    assert_int_equal(orte_iof_base_framework.selected[0]->priority, 90);
    assert_true(has_component("default"));
    assert_false(has_component("badiface"));
    assert_contains(err, "herd_iof_badiface");
    assert_contains(err, "iof interface version 7");
    free(err);
    close_and_reset();

    setenv("HERD_MCA_mca_base_component_show_load_errors", "0", 1);
    assert_string_equal(open_with("^stub"), "default");
    close_and_reset();
    assert_string_equal(open_with("default,stub"), "stub");
    close_and_reset();
    assert_string_equal(open_with("default"), "default");
    close_and_reset();
    setenv("HERD_MCA_iof_stub_priority", "1", 1);
    assert_string_equal(open_with(NULL), "default");
    close_and_reset();
    /* included alone, it is used whatever its priority */
    assert_string_equal(open_with("stub"), "stub");
    assert_int_equal(orte_iof_base_framework.selected[0]->priority, 1);
    close_and_reset();
    unsetenv("HERD_MCA_iof_stub_priority");
    setenv("HERD_MCA_iof_default_priority", "95", 1);
    assert_string_equal(open_with(NULL), "default");
    assert_int_equal(orte_iof_base_framework.selected[0]->priority, 95);
}

static void test_variable_defaults(void **state)
{
    int index;
    opal_mca_var_info_t info;

    assert_string_equal(open_with(NULL), "default");
    assert_int_equal(orte_iof_base_window(), DEFAULT_WINDOW);
    assert_int_equal(orte_iof_base_line_max(), DEFAULT_LINE_MAX);
    assert_int_equal(orte_iof_base_pipe_size(), DEFAULT_PIPE_SIZE);
    index = opal_mca_var_find("iof_base_window");
    assert_true(index >= 0);
    assert_int_equal(opal_mca_var_get_info(index, &info), HERD_SUCCESS);
    assert_int_equal(info.type, OPAL_MCA_VAR_SIZE);
    assert_int_equal(info.source, OPAL_MCA_VAR_SOURCE_DEFAULT);
    assert_true(opal_mca_var_find("iof_base_line_max") >= 0);
    assert_true(opal_mca_var_find("iof_base_pipe_size") >= 0);
    assert_true(opal_mca_var_find("iof_default_priority") >= 0);
}

static void test_variables_set(void **state)
{
    opal_mca_var_info_t info;
    int index;

    setenv("HERD_MCA_iof_base_window", "4k", 1);
    setenv("HERD_MCA_iof_base_line_max", "100", 1);
    setenv("HERD_MCA_iof_base_pipe_size", "0", 1);
    assert_string_equal(open_with(NULL), "default");
    assert_int_equal(orte_iof_base_window(), 4096);
    assert_int_equal(orte_iof_base_line_max(), 100);
    assert_int_equal(orte_iof_base_pipe_size(), 0);
    index = opal_mca_var_find("iof_base_window");
    assert_int_equal(opal_mca_var_get_info(index, &info), HERD_SUCCESS);
    assert_int_equal(info.source, OPAL_MCA_VAR_SOURCE_ENV);

    /* the program may change one while the framework is open */
    index = opal_mca_var_find("iof_base_line_max");
    assert_int_equal(opal_mca_var_set_value(index, "200"), HERD_SUCCESS);
    assert_int_equal(orte_iof_base_line_max(), 200);
    close_and_reset();

    /* a value of one open is not the default of the next */
    unsetenv("HERD_MCA_iof_base_window");
    unsetenv("HERD_MCA_iof_base_line_max");
    unsetenv("HERD_MCA_iof_base_pipe_size");
    assert_string_equal(open_with(NULL), "default");
    assert_int_equal(orte_iof_base_window(), DEFAULT_WINDOW);
    assert_int_equal(orte_iof_base_line_max(), DEFAULT_LINE_MAX);
    assert_int_equal(orte_iof_base_pipe_size(), DEFAULT_PIPE_SIZE);
    close_and_reset();

    /* the smallest values allowed, and a pipe size beyond the largest is clamped */
    setenv("HERD_MCA_iof_base_window", "4096", 1);
    setenv("HERD_MCA_iof_base_line_max", "80", 1);
    setenv("HERD_MCA_iof_base_pipe_size", "4g", 1);
    assert_string_equal(open_with(NULL), "default");
    assert_int_equal(orte_iof_base_window(), 4096);
    assert_int_equal(orte_iof_base_line_max(), 80);
    assert_int_equal(orte_iof_base_pipe_size(), (size_t) 1 << 30);
}

/* Opening with one variable out of range fails with a message naming it. */
static void expect_refused(const char *env, const char *value, const char *message)
{
    char *err;
    int rc;

    setenv(env, value, 1);
    herd_test_capture_start(&stderr_capture);
    rc = orte_iof_base_open();
    err = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(rc, HERD_ERR_BAD_PARAM);
    assert_false(orte_iof_base_framework.opened);
    assert_null(orte_iof_base_module());
    assert_contains(err, message);
    free(err);
    unsetenv(env);
}

static void test_out_of_range_refused(void **state)
{
    expect_refused("HERD_MCA_iof_base_window", "100",
                   "iof_base_window is 100 bytes; it must be between 4096 and 1073741824");
    expect_refused("HERD_MCA_iof_base_window", "4095", "iof_base_window is 4095 bytes");
    expect_refused("HERD_MCA_iof_base_window", "2g", "iof_base_window is 2147483648 bytes");
    expect_refused("HERD_MCA_iof_base_line_max", "79",
                   "iof_base_line_max is 79 bytes; it must be between 80 and");
    /* and after a refusal, a good value opens */
    assert_string_equal(open_with(NULL), "default");
    assert_int_equal(orte_iof_base_window(), DEFAULT_WINDOW);
}

/* ------------------------------------------------------------------------------------------ */
/* base helpers */

/* The helpers read the framework variables: open it so they are the defaults. */
static int helpers_setup(void **state)
{
    reset_environment();
    assert_int_equal(orte_iof_base_open(), HERD_SUCCESS);
    return 0;
}

static int helpers_teardown(void **state)
{
    orte_iof_base_close();
    unsetenv("TZ");
    tzset();
    return 0;
}

/* 2023-11-14 22:13:20.123456789 UTC */
#define KNOWN_NS ((uint64_t) 1700000000123456789ull)

static void test_prefix_tag(void **state)
{
    char text[128];

    assert_int_equal(orte_iof_base_prefix(text, sizeof(text), ORTE_IOF_FLAG_TAG, 3, 7,
                                          ORTE_IOF_STDOUT, KNOWN_NS),
                     strlen("[3,7]<stdout>: "));
    assert_string_equal(text, "[3,7]<stdout>: ");
    assert_int_equal(orte_iof_base_prefix(text, sizeof(text), ORTE_IOF_FLAG_TAG, 1, 0,
                                          ORTE_IOF_STDERR, KNOWN_NS),
                     strlen("[1,0]<stderr>: "));
    assert_string_equal(text, "[1,0]<stderr>: ");
    assert_int_equal(orte_iof_base_prefix(text, sizeof(text), ORTE_IOF_FLAG_TAG, 4294967295u,
                                          4294967294u, ORTE_IOF_STDOUT, 0),
                     strlen("[4294967295,4294967294]<stdout>: "));
    assert_string_equal(text, "[4294967295,4294967294]<stdout>: ");
    /* no flag (NOCOPY is not a prefix): nothing */
    memset(text, 'x', sizeof(text));
    assert_int_equal(orte_iof_base_prefix(text, sizeof(text), 0, 3, 7, ORTE_IOF_STDOUT, KNOWN_NS),
                     0);
    assert_string_equal(text, "");
    assert_int_equal(orte_iof_base_prefix(text, sizeof(text), ORTE_IOF_FLAG_NOCOPY, 3, 7,
                                          ORTE_IOF_STDOUT, KNOWN_NS),
                     0);
    assert_string_equal(text, "");
}

static void test_prefix_timestamp(void **state)
{
    char text[128];
    regex_t re;
    size_t n;

    assert_int_equal(regcomp(&re, TIMESTAMP_REGEX, REG_EXTENDED | REG_NOSUB), 0);
    /* in any time zone: the format */
    n = orte_iof_base_prefix(text, sizeof(text), ORTE_IOF_FLAG_TIMESTAMP, 3, 7, ORTE_IOF_STDOUT,
                             KNOWN_NS);
    assert_int_equal(n, strlen(text));
    assert_int_equal(n, 29);
    assert_int_equal(regexec(&re, text, 0, NULL, 0), 0);
    assert_string_equal(text + 21, "123456] "); /* microseconds, truncated */

    /* in UTC: the exact time */
    setenv("TZ", "UTC", 1);
    tzset();
    orte_iof_base_prefix(text, sizeof(text), ORTE_IOF_FLAG_TIMESTAMP, 3, 7, ORTE_IOF_STDOUT,
                         KNOWN_NS);
    assert_string_equal(text, "[2023-11-14 22:13:20.123456] ");
    orte_iof_base_prefix(text, sizeof(text), ORTE_IOF_FLAG_TIMESTAMP, 3, 7, ORTE_IOF_STDOUT,
                         1000000000ull * 86400 + 5000);
    assert_string_equal(text, "[1970-01-02 00:00:00.000005] ");

    /* both: the time first, then the tag */
    n = orte_iof_base_prefix(text, sizeof(text), ORTE_IOF_FLAG_TIMESTAMP | ORTE_IOF_FLAG_TAG, 3, 7,
                             ORTE_IOF_STDERR, KNOWN_NS);
    assert_string_equal(text, "[2023-11-14 22:13:20.123456] [3,7]<stderr>: ");
    assert_int_equal(n, strlen(text));
    assert_int_equal(regexec(&re, text, 0, NULL, 0), 0);
    regfree(&re);
}

/* A buffer too small gets as much as fits, always terminated, never a byte past its end. */
static void test_prefix_truncation(void **state)
{
    char text[64];
    size_t n;

    setenv("TZ", "UTC", 1);
    tzset();
    memset(text, 'x', sizeof(text));
    n = orte_iof_base_prefix(text, 8, ORTE_IOF_FLAG_TAG, 3, 7, ORTE_IOF_STDOUT, KNOWN_NS);
    assert_int_equal(n, 7);
    assert_string_equal(text, "[3,7]<s");
    assert_int_equal(text[8], 'x');

    memset(text, 'x', sizeof(text));
    n = orte_iof_base_prefix(text, 1, ORTE_IOF_FLAG_TAG | ORTE_IOF_FLAG_TIMESTAMP, 3, 7,
                             ORTE_IOF_STDOUT, KNOWN_NS);
    assert_int_equal(n, 0);
    assert_int_equal(text[0], '\0');
    assert_int_equal(text[1], 'x');

    /* size 0: not one byte written */
    memset(text, 'x', sizeof(text));
    n = orte_iof_base_prefix(text, 0, ORTE_IOF_FLAG_TAG, 3, 7, ORTE_IOF_STDOUT, KNOWN_NS);
    assert_int_equal(n, 0);
    assert_int_equal(text[0], 'x');

    /* the time cut short, no room left for the tag */
    memset(text, 'x', sizeof(text));
    n = orte_iof_base_prefix(text, 20, ORTE_IOF_FLAG_TAG | ORTE_IOF_FLAG_TIMESTAMP, 3, 7,
                             ORTE_IOF_STDOUT, KNOWN_NS);
    assert_int_equal(n, 19);
    assert_string_equal(text, "[2023-11-14 22:13:2");
    assert_int_equal(text[20], 'x');

    /* the whole time and part of the tag */
    memset(text, 'x', sizeof(text));
    n = orte_iof_base_prefix(text, 35, ORTE_IOF_FLAG_TAG | ORTE_IOF_FLAG_TIMESTAMP, 3, 7,
                             ORTE_IOF_STDOUT, KNOWN_NS);
    assert_int_equal(n, 34);
    assert_string_equal(text, "[2023-11-14 22:13:20.123456] [3,7]");
    assert_int_equal(text[35], 'x');

    /* exactly the room it needs */
    memset(text, 'x', sizeof(text));
    n = orte_iof_base_prefix(text, 16, ORTE_IOF_FLAG_TAG, 3, 7, ORTE_IOF_STDOUT, KNOWN_NS);
    assert_int_equal(n, 15);
    assert_string_equal(text, "[3,7]<stdout>: ");
    n = orte_iof_base_prefix(text, 15, ORTE_IOF_FLAG_TAG, 3, 7, ORTE_IOF_STDOUT, KNOWN_NS);
    assert_int_equal(n, 14);
    assert_string_equal(text, "[3,7]<stdout>:");
}

static void test_parse_stdin(void **state)
{
    static const char *const bad[] = {
        "",   "-1",    "1x",   "2147483648", "99999999999999999999999", " 1", "1 ", "+1", "ALL",
        "al", "nonee", "0x10", "1.0",
    };
    int32_t target = 12345;

    assert_int_equal(orte_iof_base_parse_stdin("all", &target), HERD_SUCCESS);
    assert_int_equal(target, ORTE_IOF_STDIN_ALL);
    assert_int_equal(orte_iof_base_parse_stdin("none", &target), HERD_SUCCESS);
    assert_int_equal(target, ORTE_IOF_STDIN_NONE);
    assert_int_equal(orte_iof_base_parse_stdin("0", &target), HERD_SUCCESS);
    assert_int_equal(target, 0);
    assert_int_equal(orte_iof_base_parse_stdin("17", &target), HERD_SUCCESS);
    assert_int_equal(target, 17);
    assert_int_equal(orte_iof_base_parse_stdin("007", &target), HERD_SUCCESS);
    assert_int_equal(target, 7);
    assert_int_equal(orte_iof_base_parse_stdin("2147483647", &target), HERD_SUCCESS);
    assert_int_equal(target, INT32_MAX);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        target = 12345;
        if (HERD_ERR_BAD_PARAM != orte_iof_base_parse_stdin(bad[i], &target)) {
            fail_msg("--stdin \"%s\" was accepted", bad[i]);
        }
        /* not set on failure */
        assert_int_equal(target, 12345);
    }
    assert_int_equal(orte_iof_base_parse_stdin(NULL, &target), HERD_ERR_BAD_PARAM);
}

static void close_parent(int parent[3])
{
    for (int i = 0; i < 3; ++i) {
        if (parent[i] >= 0) {
            close(parent[i]);
            parent[i] = -1;
        }
    }
}

static void test_make_pipes(void **state)
{
    int child[3], parent[3];
    char buf[16];

    /* stdout and stderr apart, with stdin */
    assert_int_equal(orte_iof_base_make_pipes(true, false, child, parent), HERD_SUCCESS);
    for (int i = 0; i < 3; ++i) {
        assert_true(child[i] >= 0);
        assert_true(parent[i] >= 0);
        assert_true(is_cloexec(child[i]));
        assert_true(is_cloexec(parent[i]));
        /* the process's ends stay as a program expects, ours never block */
        assert_false(has_flag(child[i], O_NONBLOCK));
        assert_true(has_flag(parent[i], O_NONBLOCK));
    }
    assert_int_not_equal(child[1], child[2]);
    /* which end goes where */
    write_text(parent[0], "in");
    assert_int_equal(read(child[0], buf, sizeof(buf)), 2);
    write_text(child[1], "out!");
    assert_int_equal(read(parent[1], buf, sizeof(buf)), 4);
    write_text(child[2], "err");
    assert_int_equal(read(parent[2], buf, sizeof(buf)), 3);
    /* the stdout pipe is enlarged to iof_base_pipe_size */
    assert_int_equal(fcntl(parent[1], F_GETPIPE_SZ), (int) DEFAULT_PIPE_SIZE);
    /* nothing there: our end does not block */
    errno = 0;
    assert_int_equal(read(parent[1], buf, sizeof(buf)), -1);
    assert_int_equal(errno, EAGAIN);
    orte_iof_base_close_child(child);
    for (int i = 0; i < 3; ++i) {
        assert_int_equal(child[i], -1);
    }
    /* the process's ends are gone: EOF on ours */
    assert_int_equal(read(parent[1], buf, sizeof(buf)), 0);
    assert_int_equal(read(parent[2], buf, sizeof(buf)), 0);
    close_parent(parent);

    /* no stdin, stderr merged into stdout */
    assert_int_equal(orte_iof_base_make_pipes(false, true, child, parent), HERD_SUCCESS);
    assert_int_equal(child[0], -1);
    assert_int_equal(parent[0], -1);
    assert_int_equal(child[2], child[1]);
    assert_int_equal(parent[2], -1);
    assert_true(parent[1] >= 0);
    assert_true(is_cloexec(child[1]));
    assert_true(is_cloexec(parent[1]));
    assert_true(has_flag(parent[1], O_NONBLOCK));
    write_text(child[2], "both");
    assert_int_equal(read(parent[1], buf, sizeof(buf)), 4);
    int kept = child[1];
    orte_iof_base_close_child(child);
    assert_false(fd_is_open(kept));
    assert_int_equal(child[1], -1);
    assert_int_equal(child[2], -1);
    assert_int_equal(read(parent[1], buf, sizeof(buf)), 0);
    close_parent(parent);
}

static void test_make_pipes_default_capacity(void **state)
{
    int child[3], parent[3], plain[2];

    /* iof_base_pipe_size 0: the system's default capacity */
    orte_iof_base_close();
    setenv("HERD_MCA_iof_base_pipe_size", "0", 1);
    assert_int_equal(orte_iof_base_open(), HERD_SUCCESS);
    assert_int_equal(pipe(plain), 0);
    assert_int_equal(orte_iof_base_make_pipes(false, false, child, parent), HERD_SUCCESS);
    assert_int_equal(fcntl(parent[1], F_GETPIPE_SZ), fcntl(plain[0], F_GETPIPE_SZ));
    orte_iof_base_close_child(child);
    close_parent(parent);
    close(plain[0]);
    close(plain[1]);
}

/* Out of fds half way: nothing it opened is left open, errno says why. */
static void test_make_pipes_failure_leaves_nothing(void **state)
{
    struct rlimit saved, low;
    int child[3] = {11, 12, 13}, parent[3] = {21, 22, 23};
    int before, rc, saved_errno;

    assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
    before = count_open_fds();
    /* the lowest free fd, and room for three more: the second or third pipe fails */
    int probe = dup(0);
    assert_true(probe >= 0);
    close(probe);
    low = saved;
    low.rlim_cur = (rlim_t) probe + 3;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    rc = orte_iof_base_make_pipes(true, false, child, parent);
    saved_errno = errno;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
    assert_int_equal(rc, HERD_ERR_IN_ERRNO);
    assert_int_equal(saved_errno, EMFILE);
    assert_int_equal(count_open_fds(), before);
    /* output arguments untouched on failure */
    assert_int_equal(child[0], 11);
    assert_int_equal(parent[2], 23);
}

static void test_send_recv_fds(void **state)
{
    int sock[2], child[3], parent[3], got[3] = {-1, -1, -1};
    uint32_t rank = 0;
    char buf[16];

    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sock), 0);
    /* nothing waiting */
    assert_int_equal(orte_iof_base_recv_fds(sock[1], &rank, got), HERD_ERR_NOT_FOUND);

    /* all three ends */
    assert_int_equal(orte_iof_base_make_pipes(true, false, child, parent), HERD_SUCCESS);
    assert_int_equal(orte_iof_base_send_fds(sock[0], 7, parent), HERD_SUCCESS);
    close_parent(parent); /* what was sent are copies */
    assert_int_equal(orte_iof_base_recv_fds(sock[1], &rank, got), HERD_SUCCESS);
    assert_int_equal(rank, 7);
    for (int i = 0; i < 3; ++i) {
        assert_true(got[i] >= 0);
        assert_true(is_cloexec(got[i]));
        assert_true(has_flag(got[i], O_NONBLOCK));
    }
    write_text(got[0], "stdin");
    assert_int_equal(read(child[0], buf, sizeof(buf)), 5);
    assert_memory_equal(buf, "stdin", 5);
    write_text(child[1], "stdout");
    assert_int_equal(read(got[1], buf, sizeof(buf)), 6);
    assert_memory_equal(buf, "stdout", 6);
    write_text(child[2], "stderr");
    assert_int_equal(read(got[2], buf, sizeof(buf)), 6);
    assert_memory_equal(buf, "stderr", 6);
    orte_iof_base_close_child(child);
    close_parent(got);

    /* no stdin, stderr merged: the absent ends stay -1 */
    assert_int_equal(orte_iof_base_make_pipes(false, true, child, parent), HERD_SUCCESS);
    assert_int_equal(orte_iof_base_send_fds(sock[0], 8, parent), HERD_SUCCESS);
    close_parent(parent);
    got[0] = got[1] = got[2] = 99;
    assert_int_equal(orte_iof_base_recv_fds(sock[1], &rank, got), HERD_SUCCESS);
    assert_int_equal(rank, 8);
    assert_int_equal(got[0], -1);
    assert_true(got[1] >= 0);
    assert_int_equal(got[2], -1);
    write_text(child[2], "merged");
    assert_int_equal(read(got[1], buf, sizeof(buf)), 6);
    orte_iof_base_close_child(child);
    close_parent(got);

    /* none at all: the end mark the session daemon sends */
    int none[3] = {-1, -1, -1};
    assert_int_equal(orte_iof_base_send_fds(sock[0], ORTE_IOF_RANK_DAEMON, none), HERD_SUCCESS);
    got[0] = got[1] = got[2] = 99;
    assert_int_equal(orte_iof_base_recv_fds(sock[1], &rank, got), HERD_SUCCESS);
    assert_int_equal(rank, ORTE_IOF_RANK_DAEMON);
    assert_int_equal(got[0], -1);
    assert_int_equal(got[1], -1);
    assert_int_equal(got[2], -1);

    /* drained: nothing waiting; the peer gone: unreachable, on both sides */
    assert_int_equal(orte_iof_base_recv_fds(sock[1], &rank, got), HERD_ERR_NOT_FOUND);
    close(sock[0]);
    rank = 4242;
    assert_int_equal(orte_iof_base_recv_fds(sock[1], &rank, got), HERD_ERR_UNREACH);
    assert_int_equal(rank, 4242);
    close(sock[1]);

    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sock), 0);
    close(sock[1]);
    assert_int_not_equal(orte_iof_base_send_fds(sock[0], 1, none), HERD_SUCCESS);
    close(sock[0]);
}

/* What is not the helper's message is refused, and leaves no fd behind. */
static void test_recv_fds_malformed(void **state)
{
    int sock[2], got[3] = {-1, -1, -1}, before;
    uint32_t rank = 0;

    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sock), 0);
    /* too short */
    assert_int_equal(send(sock[0], "abc", 3, 0), 3);
    assert_int_equal(orte_iof_base_recv_fds(sock[1], &rank, got), HERD_ERR_UNPACK_FAILURE);

    /* says an end is there, passes none */
    uint8_t header[8] = {0};
    header[4] = 1;
    assert_int_equal(send(sock[0], header, sizeof(header), 0), (ssize_t) sizeof(header));
    assert_int_equal(orte_iof_base_recv_fds(sock[1], &rank, got), HERD_ERR_UNPACK_FAILURE);

    /* passes an fd it does not announce: refused, and the fd is not kept */
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    before = count_open_fds();
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof(control));
    memset(header, 0, sizeof(header));
    struct iovec iov = {.iov_base = header, .iov_len = sizeof(header)};
    struct msghdr msg = {.msg_iov = &iov,
                         .msg_iovlen = 1,
                         .msg_control = control.buf,
                         .msg_controllen = sizeof(control.buf)};
    struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cmsg), &pipefd[0], sizeof(int));
    assert_int_equal(sendmsg(sock[0], &msg, 0), (ssize_t) sizeof(header));
    assert_int_equal(orte_iof_base_recv_fds(sock[1], &rank, got), HERD_ERR_UNPACK_FAILURE);
    assert_int_equal(count_open_fds(), before);
    assert_int_equal(got[0], -1);
    close(pipefd[0]);
    close(pipefd[1]);
    close(sock[0]);
    close(sock[1]);
}

/* ------------------------------------------------------------------------------------------ */
/* the default component: a source and a sink in one process */

/* A message on its way, copied: the transport queues, so no half is called back from its own
 * send(). */
typedef struct queued {
    struct queued *next;
    bool to_sink;
    orte_vpid_t vpid; /* the source it comes from (to the sink) or goes to */
    int kind;
    int iovcnt;
    struct iovec iov[ORTE_IOF_MAX_PIECES];
} queued_t;

typedef struct {
    char *data; /* NUL-terminated */
    size_t len;
    size_t cap;
    bool eof;
} text_t;

typedef struct {
    uint32_t rank;
    int child[3];  /* the test writes (stdout, stderr) and reads (stdin) these */
    int parent[3]; /* owned by the source */
    text_t in;     /* what arrived on its stdin */
    bool hold_in;  /* the process does not read its stdin for now */
} test_proc_t;

typedef struct {
    uint32_t flags;
    const char *output_dir;
    int32_t stdin_target;
    int stdin_fd;
    bool no_source;
    bool no_sink;
    bool two_sources; /* vpids 1 and 2 */
} start_opts_t;

typedef struct test_ctx ctx_t;

/* One source's end of the transport: who it is. */
typedef struct {
    ctx_t *ctx;
    orte_vpid_t vpid;
} endpoint_t;

struct test_ctx {
    opal_event_base_t *base;
    opal_event_t *tick;
    const orte_iof_module_t *module;
    orte_iof_source_t *source;  /* vpid 1 */
    orte_iof_source_t *source2; /* vpid 2, when the test has two */
    endpoint_t endpoint[3];
    orte_iof_sink_t *sink;
    queued_t *head;
    queued_t *tail;
    /* deliver at once, inside send(), as herdrun does for the pipes of a one-node job, instead
     * of queueing until the end of the round */
    bool direct;
    bool sink_unreachable; /* the source's sends fail */
    /* the sink's stdout and stderr: the test reads [0] (unless read_stdout is false) */
    int out_pipe[2];
    int err_pipe[2];
    bool read_stdout;
    text_t out;
    text_t err;
    /* the sink's stdin: the test writes [1] */
    int stdin_pipe[2];
    test_proc_t procs[MAX_PROCS];
    int num_procs;
    /* what went over the transport */
    int to_sink[ORTE_IOF_NUM_MSGS];
    int to_source[ORTE_IOF_NUM_MSGS];
    int data_eof;                     /* DATA with the end mark */
    int stdin_closed_acks;            /* STDIN_ACK with IOF_STDIN_CLOSED */
    uint64_t acked_stdout[MAX_PROCS]; /* the furthest ACK of ranks 0.. stdout */
    int refused;                      /* deliveries the receiving half refused */
    int undeliverable;                /* messages for a half the test did not make */
    int bad_sends; /* a wrong destination, or more pieces than a transport must take */
    int drained;
    size_t max_queued;
    char dir[256]; /* a scratch folder, removed at the end */
};

static void text_append(text_t *t, const void *data, size_t len)
{
    if (t->len + len + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + len + 1) {
            cap *= 2;
        }
        t->data = realloc(t->data, cap);
        assert_non_null(t->data);
        t->cap = cap;
    }
    memcpy(t->data + t->len, data, len);
    t->len += len;
    t->data[t->len] = '\0';
}

static const char *text_str(const text_t *t)
{
    return NULL != t->data ? t->data : "";
}

/* Reads what a non-blocking fd holds into t; notes its end. */
static void read_into(int fd, text_t *t)
{
    char buf[65536];

    while (fd >= 0 && !t->eof) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n > 0) {
            text_append(t, buf, (size_t) n);
        } else if (0 == n) {
            t->eof = true;
        } else if (EINTR != errno) {
            break;
        }
    }
}

/* Copies the first len bytes of a message. */
static size_t copy_head(const struct iovec *iov, int iovcnt, uint8_t *to, size_t len)
{
    size_t at = 0;

    for (int i = 0; i < iovcnt && at < len; ++i) {
        size_t take = iov[i].iov_len < len - at ? iov[i].iov_len : len - at;
        memcpy(to + at, iov[i].iov_base, take);
        at += take;
    }
    return at;
}

/* Counts what the source says about stdin (it goes the other way: source to sink). */
static void note_stdin_ack(ctx_t *ctx, bool to_sink, int kind, const struct iovec *iov, int iovcnt)
{
    uint8_t ack[IOF_STDIN_ACK_SIZE];

    if (to_sink && ORTE_IOF_MSG_STDIN_ACK == kind &&
        copy_head(iov, iovcnt, ack, sizeof(ack)) == sizeof(ack) && (ack[8] & IOF_STDIN_CLOSED)) {
        ctx->stdin_closed_acks++;
    }
}

static orte_iof_source_t *source_of(const ctx_t *ctx, orte_vpid_t vpid)
{
    return 1 == vpid ? ctx->source : 2 == vpid ? ctx->source2 : NULL;
}

/* Hands a message to the half it is for, and counts what that half refused. */
static void deliver_one(ctx_t *ctx, bool to_sink, orte_vpid_t vpid, int kind,
                        const struct iovec *iov, int iovcnt)
{
    int rc = HERD_SUCCESS;

    note_stdin_ack(ctx, to_sink, kind, iov, iovcnt);
    if (to_sink && NULL != ctx->sink) {
        rc = ctx->module->sink_deliver(ctx->sink, vpid, kind, iov, iovcnt);
    } else if (!to_sink && NULL != source_of(ctx, vpid)) {
        rc = ctx->module->source_deliver(source_of(ctx, vpid), 0, kind, iov, iovcnt);
    } else {
        ctx->undeliverable++;
    }
    if (HERD_SUCCESS != rc) {
        ctx->refused++;
    }
}

static int enqueue(ctx_t *ctx, bool to_sink, orte_vpid_t vpid, int kind, const struct iovec *iov,
                   int iovcnt)
{
    queued_t *q;

    if (iovcnt < 0 || iovcnt > ORTE_IOF_MAX_PIECES) {
        ctx->bad_sends++;
        return HERD_ERR_BAD_PARAM;
    }
    if (ctx->direct) {
        deliver_one(ctx, to_sink, vpid, kind, iov, iovcnt);
        return HERD_SUCCESS;
    }
    q = calloc(1, sizeof(*q));
    assert_non_null(q);
    q->to_sink = to_sink;
    q->vpid = vpid;
    q->kind = kind;
    q->iovcnt = iovcnt;
    for (int i = 0; i < iovcnt; ++i) {
        q->iov[i].iov_len = iov[i].iov_len;
        q->iov[i].iov_base = malloc(iov[i].iov_len + 1);
        assert_non_null(q->iov[i].iov_base);
        memcpy(q->iov[i].iov_base, iov[i].iov_base, iov[i].iov_len);
    }
    if (NULL == ctx->tail) {
        ctx->head = q;
    } else {
        ctx->tail->next = q;
    }
    ctx->tail = q;
    return HERD_SUCCESS;
}

static void free_queued(queued_t *q)
{
    for (int i = 0; i < q->iovcnt; ++i) {
        free(q->iov[i].iov_base);
    }
    free(q);
}

/* A source (vpid 1 or 2) sends to the sink (vpid 0). */
static int source_send(void *arg, orte_vpid_t dst, int msg, const struct iovec *iov, int iovcnt)
{
    const endpoint_t *from = arg;
    ctx_t *ctx = from->ctx;
    uint8_t header[IOF_DATA_HEADER];

    if (0 != dst || msg < 0 || msg >= ORTE_IOF_NUM_MSGS) {
        ctx->bad_sends++;
        return HERD_ERR_BAD_PARAM;
    }
    if (ctx->sink_unreachable) {
        return HERD_ERR_UNREACH;
    }
    ctx->to_sink[msg]++;
    if (ORTE_IOF_MSG_DATA == msg &&
        copy_head(iov, iovcnt, header, sizeof(header)) == sizeof(header) &&
        (header[5] & IOF_DATA_EOF)) {
        ctx->data_eof++;
    }
    return enqueue(ctx, true, from->vpid, msg, iov, iovcnt);
}

/* The sink sends to a source (vpid 1, or 2 when there are two). */
static int sink_send(void *arg, orte_vpid_t dst, int msg, const struct iovec *iov, int iovcnt)
{
    ctx_t *ctx = arg;

    if (dst < 1 || dst > 2 || msg < 0 || msg >= ORTE_IOF_NUM_MSGS) {
        ctx->bad_sends++;
        return HERD_ERR_BAD_PARAM;
    }
    ctx->to_source[msg]++;
    if (ORTE_IOF_MSG_ACK == msg) {
        uint8_t ack[IOF_ACK_SIZE];
        if (copy_head(iov, iovcnt, ack, sizeof(ack)) == sizeof(ack) && get_u32(ack) < MAX_PROCS &&
            ORTE_IOF_STDOUT == ack[4]) {
            uint64_t end = ((uint64_t) get_u32(ack + 5) << 32) | get_u32(ack + 9);
            if (end > ctx->acked_stdout[get_u32(ack)]) {
                ctx->acked_stdout[get_u32(ack)] = end;
            }
        }
    }
    return enqueue(ctx, false, dst, msg, iov, iovcnt);
}

/* Delivers every queued message, also those sent while delivering. */
static void deliver_all(ctx_t *ctx)
{
    while (NULL != ctx->head) {
        queued_t *q = ctx->head;

        ctx->head = q->next;
        if (NULL == ctx->head) {
            ctx->tail = NULL;
        }
        deliver_one(ctx, q->to_sink, q->vpid, q->kind, q->iov, q->iovcnt);
        free_queued(q);
    }
}

static void collect(ctx_t *ctx)
{
    if (ctx->read_stdout) {
        read_into(ctx->out_pipe[0], &ctx->out);
    }
    read_into(ctx->err_pipe[0], &ctx->err);
    for (int i = 0; i < ctx->num_procs; ++i) {
        test_proc_t *p = &ctx->procs[i];
        if (p->child[0] >= 0 && !p->hold_in) {
            read_into(p->child[0], &p->in);
        }
    }
    if (NULL != ctx->sink) {
        size_t queued = ctx->module->sink_queued(ctx->sink);
        if (queued > ctx->max_queued) {
            ctx->max_queued = queued;
        }
    }
}

/* One round: what is on its way is delivered, the loop handles one round of events (at most
 * the 10 ms tick later), and the outputs are read. */
static void run_round(ctx_t *ctx)
{
    deliver_all(ctx);
    opal_event_base_loop(ctx->base, true);
    deliver_all(ctx);
    collect(ctx);
}

#define RUN_UNTIL(ctx, cond)                                                                       \
    do {                                                                                           \
        int rounds_ = 0;                                                                           \
        collect(ctx);                                                                              \
        while (!(cond)) {                                                                          \
            if (++rounds_ > MAX_ROUNDS) {                                                          \
                fail_msg("%s:%d: still not (%s) after %d rounds", __FILE__, __LINE__, #cond,       \
                         MAX_ROUNDS);                                                              \
            }                                                                                      \
            run_round(ctx);                                                                        \
        }                                                                                          \
    } while (0)

/* Bytes still in the processes' stdout and stderr pipes (the source's ends). */
static int unread_output(const ctx_t *ctx)
{
    int total = 0;

    for (int i = 0; i < ctx->num_procs; ++i) {
        const test_proc_t *p = &ctx->procs[i];
        for (int s = 1; s <= 2; ++s) {
            if (p->parent[s] >= 0 && fd_is_open(p->parent[s])) {
                total += pipe_pending(p->parent[s]);
            }
        }
    }
    return total;
}

/* Runs until the source read everything written and a few rounds passed without anything
 * changing: whatever was going to appear has. */
static void settle(ctx_t *ctx)
{
    int quiet = 0;

    for (int rounds = 0; quiet < QUIET_ROUNDS; ++rounds) {
        size_t out = ctx->out.len, err = ctx->err.len;
        if (rounds > MAX_ROUNDS) {
            fail_msg("the forwarding never came to rest");
        }
        run_round(ctx);
        bool same = out == ctx->out.len && err == ctx->err.len && NULL == ctx->head &&
                    0 == unread_output(ctx);
        quiet = same ? quiet + 1 : 0;
    }
}

static void on_drained(void *cbdata)
{
    ctx_t *ctx = cbdata;

    ctx->drained++;
}

static void on_tick(int fd, short what, void *arg)
{
    /* only wakes the loop so a round ends */
}

static void make_output_pipe(int fds[2])
{
    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    assert_int_equal(fcntl(fds[0], F_SETFL, O_NONBLOCK), 0);
}

/* The initial state, when there is one, says whether the transport delivers directly. */
static int e2e_setup(void **state)
{
    ctx_t *ctx = calloc(1, sizeof(*ctx));
    struct timeval tick = {.tv_sec = 0, .tv_usec = 10000};

    assert_non_null(ctx);
    ctx->direct = NULL != *state && *(const bool *) *state;
    reset_environment();
    assert_int_equal(orte_iof_base_open(), HERD_SUCCESS);
    ctx->module = orte_iof_base_module();
    assert_non_null(ctx->module);
    assert_string_equal(ctx->module->name, "default");
    assert_int_equal(opal_event_base_create(&ctx->base), HERD_SUCCESS);
    assert_int_equal(opal_event_timer_create(ctx->base, true, on_tick, ctx, &ctx->tick),
                     HERD_SUCCESS);
    assert_int_equal(opal_event_add(ctx->tick, &tick), HERD_SUCCESS);
    make_output_pipe(ctx->out_pipe);
    make_output_pipe(ctx->err_pipe);
    ctx->stdin_pipe[0] = ctx->stdin_pipe[1] = -1;
    ctx->read_stdout = true;
    *state = ctx;
    return 0;
}

static void close_fd(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

static int e2e_teardown(void **state)
{
    ctx_t *ctx = *state;
    int refused, bad_sends;

    /* nobody reads the sink's outputs any more: destroying it cannot wait for a reader */
    close_fd(&ctx->out_pipe[0]);
    close_fd(&ctx->err_pipe[0]);
    if (NULL != ctx->source) {
        ctx->module->source_destroy(ctx->source);
    }
    if (NULL != ctx->source2) {
        ctx->module->source_destroy(ctx->source2);
    }
    if (NULL != ctx->sink) {
        ctx->module->sink_destroy(ctx->sink);
    }
    while (NULL != ctx->head) {
        queued_t *q = ctx->head;
        ctx->head = q->next;
        free_queued(q);
    }
    for (int i = 0; i < ctx->num_procs; ++i) {
        orte_iof_base_close_child(ctx->procs[i].child);
        free(ctx->procs[i].in.data);
    }
    close_fd(&ctx->stdin_pipe[0]);
    close_fd(&ctx->stdin_pipe[1]);
    close_fd(&ctx->out_pipe[1]);
    close_fd(&ctx->err_pipe[1]);
    opal_event_free(ctx->tick);
    opal_event_base_free(ctx->base);
    orte_iof_base_close();
    if ('\0' != ctx->dir[0]) {
        nftw(ctx->dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    }
    free(ctx->out.data);
    free(ctx->err.data);
    refused = ctx->refused;
    bad_sends = ctx->bad_sends;
    free(ctx);
    reset_environment();
    /* the halves refused nothing the other sent, and sent only where they should */
    assert_int_equal(refused, 0);
    assert_int_equal(bad_sends, 0);
    return 0;
}

/* Reopens the framework with one variable set (before the halves are made: they read the
 * variables when created). */
static void reopen_with(ctx_t *ctx, const char *name, const char *value)
{
    orte_iof_base_close();
    setenv(name, value, 1);
    assert_int_equal(orte_iof_base_open(), HERD_SUCCESS);
    ctx->module = orte_iof_base_module();
    assert_non_null(ctx->module);
}

static void start(ctx_t *ctx, const start_opts_t *opts)
{
    start_opts_t none = {.stdin_target = ORTE_IOF_STDIN_NONE, .stdin_fd = -1};

    if (NULL == opts) {
        opts = &none;
    }
    if (!opts->no_sink) {
        orte_iof_sink_config_t config = {
            .base = ctx->base,
            .jobseq = 1,
            .flags = opts->flags,
            .output_dir = opts->output_dir,
            .stdin_target = opts->stdin_target,
            .num_sources = opts->two_sources ? 2 : 1,
            .stdin_fd = opts->stdin_fd,
            .stdout_fd = ctx->out_pipe[1],
            .stderr_fd = ctx->err_pipe[1],
            .transport = {.send = sink_send, .ctx = ctx},
        };
        assert_int_equal(ctx->module->sink_create(&config, &ctx->sink), HERD_SUCCESS);
        assert_non_null(ctx->sink);
    }
    for (orte_vpid_t v = 1; !opts->no_source && v <= (opts->two_sources ? 2u : 1u); ++v) {
        ctx->endpoint[v] = (endpoint_t){.ctx = ctx, .vpid = v};
        orte_iof_source_config_t config = {
            .base = ctx->base,
            .vpid = v,
            .sink = 0,
            .stdin_target = opts->stdin_target,
            .transport = {.send = source_send, .ctx = &ctx->endpoint[v]},
            .drained = on_drained,
            .cbdata = ctx,
        };
        orte_iof_source_t **source = 1 == v ? &ctx->source : &ctx->source2;
        assert_int_equal(ctx->module->source_create(&config, source), HERD_SUCCESS);
        assert_non_null(*source);
    }
}

/* A process of the job: its pipes, the source reading our ends. */
static test_proc_t *add_proc_on(ctx_t *ctx, orte_iof_source_t *source, uint32_t rank,
                                bool want_stdin, bool merge)
{
    test_proc_t *p;

    assert_true(ctx->num_procs < MAX_PROCS);
    p = &ctx->procs[ctx->num_procs++];
    memset(p, 0, sizeof(*p));
    p->rank = rank;
    p->child[0] = p->child[1] = p->child[2] = -1;
    assert_int_equal(orte_iof_base_make_pipes(want_stdin, merge, p->child, p->parent),
                     HERD_SUCCESS);
    if (p->child[0] >= 0) {
        assert_int_equal(fcntl(p->child[0], F_SETFL, O_NONBLOCK), 0);
    }
    assert_int_equal(ctx->module->source_add(source, rank, p->parent), HERD_SUCCESS);
    return p;
}

static test_proc_t *add_proc(ctx_t *ctx, uint32_t rank, bool want_stdin, bool merge)
{
    return add_proc_on(ctx, ctx->source, rank, want_stdin, merge);
}

/* The process closes its stdout (and stderr, merged or not). */
static void close_output(test_proc_t *p, int stream)
{
    if (ORTE_IOF_STDOUT == stream && p->child[2] == p->child[1]) {
        p->child[2] = -1;
    }
    close_fd(&p->child[stream]);
}

static void make_scratch_dir(ctx_t *ctx)
{
    snprintf(ctx->dir, sizeof(ctx->dir), "/tmp/herd-test-iof-XXXXXX");
    assert_non_null(mkdtemp(ctx->dir));
}

/* ---- lines */

static void test_whole_lines(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *p;

    start(ctx, NULL);
    p = add_proc(ctx, 0, false, false);
    write_text(p->child[1], "hello\nworld\n");
    RUN_UNTIL(ctx, ctx->out.len >= 12);
    settle(ctx);
    assert_string_equal(text_str(&ctx->out), "hello\nworld\n");
    assert_int_equal(ctx->err.len, 0);
    /* what was written was acknowledged */
    assert_true(ctx->to_source[ORTE_IOF_MSG_ACK] >= 1);
    assert_int_equal(ctx->module->sink_queued(ctx->sink), 0);
}

static void test_partial_line_held(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *p;

    start(ctx, NULL);
    p = add_proc(ctx, 0, false, false);
    write_text(p->child[1], "abc");
    settle(ctx);
    assert_int_equal(ctx->out.len, 0);
    assert_int_equal(ctx->to_sink[ORTE_IOF_MSG_DATA], 0);
    write_text(p->child[1], " def\n");
    RUN_UNTIL(ctx, ctx->out.len >= 8);
    settle(ctx);
    assert_string_equal(text_str(&ctx->out), "abc def\n");
    /* as one fragment */
    assert_int_equal(ctx->to_sink[ORTE_IOF_MSG_DATA], 1);
    /* a whole line and the start of the next: the line now, the rest held */
    write_text(p->child[1], "ghi\njk");
    RUN_UNTIL(ctx, ctx->out.len >= 12);
    settle(ctx);
    assert_string_equal(text_str(&ctx->out), "abc def\nghi\n");
    write_text(p->child[1], "l\n");
    RUN_UNTIL(ctx, ctx->out.len >= 15);
    assert_string_equal(text_str(&ctx->out), "abc def\nghi\njkl\n");
}

/* Two ranks writing their lines in pieces, interleaved: every line arrives whole, each rank's
 * in order. */
static void test_interleaved_ranks_unmixed(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *p[2];
    char piece[64];
    const int lines = 20;
    size_t total = 0;

    start(ctx, NULL);
    p[0] = add_proc(ctx, 0, false, false);
    p[1] = add_proc(ctx, 1, false, false);
    for (int i = 0; i < lines; ++i) {
        for (int r = 0; r < 2; ++r) {
            snprintf(piece, sizeof(piece), "rank %d line %02d", r, i);
            write_text(p[r]->child[1], piece);
            total += strlen(piece);
            settle(ctx); /* read apart from the rest of its line */
        }
        for (int r = 0; r < 2; ++r) {
            write_text(p[r]->child[1], " ends here\n");
            total += strlen(" ends here\n");
            settle(ctx);
        }
    }
    RUN_UNTIL(ctx, ctx->out.len >= total);
    assert_int_equal(ctx->out.len, total);
    int next[2] = {0, 0};
    char *save = NULL;
    for (char *line = strtok_r(ctx->out.data, "\n", &save); NULL != line;
         line = strtok_r(NULL, "\n", &save)) {
        int r, i;
        char rest[32];
        if (3 != sscanf(line, "rank %d line %d%31[^\n]", &r, &i, rest) || r < 0 || r > 1 ||
            0 != strcmp(rest, " ends here")) {
            fail_msg("a mixed line: \"%s\"", line);
        }
        assert_int_equal(i, next[r]);
        next[r]++;
    }
    assert_int_equal(next[0], lines);
    assert_int_equal(next[1], lines);
    ctx->out.len = 0; /* strtok_r cut it up */
}

/* A line longer than iof_base_line_max is passed on in pieces, all of it, in order. */
static void test_long_line_in_pieces(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *p;
    char a[41], b[111], c[31], expect[200];

    reopen_with(ctx, "HERD_MCA_iof_base_line_max", "100");
    assert_int_equal(orte_iof_base_line_max(), 100);
    memset(a, 'a', 40);
    a[40] = '\0';
    memset(b, 'b', 110);
    b[110] = '\0';
    memset(c, 'c', 30);
    c[30] = '\0';
    start(ctx, NULL);
    p = add_proc(ctx, 0, false, false);
    write_text(p->child[1], a);
    settle(ctx);
    assert_int_equal(ctx->out.len, 0); /* 40 bytes: held */
    write_text(p->child[1], b);
    /* 150 bytes without a newline: more than the bound, passed on now */
    RUN_UNTIL(ctx, ctx->out.len >= 150);
    snprintf(expect, sizeof(expect), "%s%s", a, b);
    assert_string_equal(text_str(&ctx->out), expect);
    write_text(p->child[1], c);
    settle(ctx);
    assert_int_equal(ctx->out.len, 150); /* the rest of the line is held again */
    write_text(p->child[1], "\n");
    RUN_UNTIL(ctx, ctx->out.len >= 181);
    snprintf(expect, sizeof(expect), "%s%s%s\n", a, b, c);
    assert_string_equal(text_str(&ctx->out), expect);
    assert_int_equal(ctx->to_sink[ORTE_IOF_MSG_DATA], 2);
}

/* A long line written at once, with its newline, is not cut. */
static void test_long_whole_line_not_cut(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *p;
    char line[302];

    reopen_with(ctx, "HERD_MCA_iof_base_line_max", "100");
    memset(line, 'x', 300);
    line[300] = '\n';
    line[301] = '\0';
    start(ctx, &(start_opts_t){.flags = ORTE_IOF_FLAG_TAG,
                               .stdin_target = ORTE_IOF_STDIN_NONE,
                               .stdin_fd = -1});
    p = add_proc(ctx, 2, false, false);
    write_text(p->child[1], line);
    RUN_UNTIL(ctx, ctx->out.len >= 301 + 15);
    settle(ctx);
    assert_int_equal(ctx->out.len, 301 + 15);
    assert_memory_equal(ctx->out.data, "[1,2]<stdout>: ", 15);
    assert_memory_equal(ctx->out.data + 15, line, 301);
}

/* The last line without a newline comes at the end of the stream, untagged as it is. */
static void test_eof_line_untagged(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *p;

    start(ctx, NULL);
    p = add_proc(ctx, 0, false, false);
    write_text(p->child[1], "no newline");
    settle(ctx);
    assert_int_equal(ctx->out.len, 0);
    close_output(p, ORTE_IOF_STDOUT);
    RUN_UNTIL(ctx, 1 == ctx->data_eof && ctx->out.len >= 10);
    settle(ctx);
    assert_string_equal(text_str(&ctx->out), "no newline");
    /* stderr is still open */
    assert_int_equal(ctx->data_eof, 1);
    close_output(p, ORTE_IOF_STDERR);
    RUN_UNTIL(ctx, 2 == ctx->data_eof);
    settle(ctx);
    assert_string_equal(text_str(&ctx->out), "no newline");
    assert_int_equal(ctx->err.len, 0);
}

static void test_eof_line_tagged(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *p;

    start(ctx, &(start_opts_t){.flags = ORTE_IOF_FLAG_TAG,
                               .stdin_target = ORTE_IOF_STDIN_NONE,
                               .stdin_fd = -1});
    p = add_proc(ctx, 0, false, false);
    write_text(p->child[1], "first\nsecond\n");
    RUN_UNTIL(ctx, ctx->out.len >= 2 * 15 + 13);
    write_text(p->child[1], "no newline");
    write_text(p->child[2], "oops");
    settle(ctx);
    close_output(p, ORTE_IOF_STDOUT);
    close_output(p, ORTE_IOF_STDERR);
    RUN_UNTIL(ctx, 2 == ctx->data_eof);
    settle(ctx);
    assert_string_equal(text_str(&ctx->out), "[1,0]<stdout>: first\n"
                                             "[1,0]<stdout>: second\n"
                                             "[1,0]<stdout>: no newline\n");
    assert_string_equal(text_str(&ctx->err), "[1,0]<stderr>: oops\n");
}

static void test_timestamp_and_tag(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *p;
    regex_t re;

    assert_int_equal(regcomp(&re,
                             TIMESTAMP_REGEX "\\[1,4\\]<stdout>: one\n" TIMESTAMP_REGEX
                                             "\\[1,4\\]<stdout>: two\n$",
                             REG_EXTENDED | REG_NOSUB | REG_NEWLINE),
                     0);
    start(ctx, &(start_opts_t){.flags = ORTE_IOF_FLAG_TAG | ORTE_IOF_FLAG_TIMESTAMP,
                               .stdin_target = ORTE_IOF_STDIN_NONE,
                               .stdin_fd = -1});
    p = add_proc(ctx, 4, false, false);
    write_text(p->child[1], "one\ntwo\n");
    RUN_UNTIL(ctx, ctx->out.len >= 2 * (29 + 15 + 4));
    settle(ctx);
    int rc = regexec(&re, text_str(&ctx->out), 0, NULL, 0);
    regfree(&re);
    if (0 != rc) {
        fail_msg("not timestamped and tagged:\n%s", text_str(&ctx->out));
    }
}

/* ---- where output goes */

static void test_stdout_stderr_routing(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *apart, *merged;

    start(ctx, NULL);
    apart = add_proc(ctx, 3, false, false);
    merged = add_proc(ctx, 4, false, true);
    assert_int_equal(merged->child[2], merged->child[1]);
    write_text(apart->child[1], "to stdout\n");
    write_text(apart->child[2], "to stderr\n");
    RUN_UNTIL(ctx, ctx->out.len >= 10 && ctx->err.len >= 10);
    settle(ctx);
    assert_string_equal(text_str(&ctx->out), "to stdout\n");
    assert_string_equal(text_str(&ctx->err), "to stderr\n");
    write_text(merged->child[2], "merged stderr\n");
    RUN_UNTIL(ctx, ctx->out.len >= 24);
    settle(ctx);
    assert_string_equal(text_str(&ctx->out), "to stdout\nmerged stderr\n");
    assert_string_equal(text_str(&ctx->err), "to stderr\n");
}

/* herdrun > FILE: a file is written in full, blocking, as it comes. */
static void test_stdout_is_a_file(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *p[2];
    char path[PATH_MAX];
    char *text;

    make_scratch_dir(ctx);
    snprintf(path, sizeof(path), "%s/stdout.txt", ctx->dir);
    close_fd(&ctx->out_pipe[1]);
    ctx->out_pipe[1] = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    assert_true(ctx->out_pipe[1] >= 0);
    start(ctx, &(start_opts_t){.flags = ORTE_IOF_FLAG_TAG,
                               .stdin_target = ORTE_IOF_STDIN_NONE,
                               .stdin_fd = -1});
    p[0] = add_proc(ctx, 0, false, false);
    p[1] = add_proc(ctx, 1, false, false);
    write_text(p[0]->child[1], "zero\n");
    settle(ctx);
    write_text(p[1]->child[1], "one\n");
    settle(ctx);
    write_text(p[0]->child[1], "zero again");
    for (int i = 0; i < 2; ++i) {
        close_output(p[i], ORTE_IOF_STDOUT);
        close_output(p[i], ORTE_IOF_STDERR);
    }
    ctx->module->source_finish(ctx->source);
    RUN_UNTIL(ctx, 1 == ctx->drained);
    assert_int_equal(ctx->module->sink_queued(ctx->sink), 0);
    text = slurp(path);
    assert_non_null(text);
    assert_string_equal(text, "[1,0]<stdout>: zero\n"
                              "[1,1]<stdout>: one\n"
                              "[1,0]<stdout>: zero again\n");
    free(text);
}

static void check_rank_files(const ctx_t *ctx, const char *dir, uint32_t rank, const char *out,
                             const char *err)
{
    char path[PATH_MAX];
    char *text;

    snprintf(path, sizeof(path), "%s/rank.%u/stdout", dir, rank);
    text = slurp(path);
    if (NULL == text) {
        fail_msg("%s was not written", path);
    }
    assert_string_equal(text, out);
    free(text);
    snprintf(path, sizeof(path), "%s/rank.%u/stderr", dir, rank);
    text = slurp(path);
    if (NULL == text) {
        fail_msg("%s was not written", path);
    }
    assert_string_equal(text, err);
    free(text);
}

/* --output-filename DIR:nocopy: DIR/rank.N/stdout and stderr, nothing on the outputs. */
static void test_output_files_nocopy(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *p;
    char dir[PATH_MAX];

    make_scratch_dir(ctx);
    snprintf(dir, sizeof(dir), "%s/out", ctx->dir); /* the sink makes it */
    start(ctx, &(start_opts_t){.flags = ORTE_IOF_FLAG_NOCOPY | ORTE_IOF_FLAG_TAG,
                               .output_dir = dir,
                               .stdin_target = ORTE_IOF_STDIN_NONE,
                               .stdin_fd = -1});
    p = add_proc(ctx, 2, false, false);
    write_text(p->child[1], "to the file\nand no newline");
    write_text(p->child[2], "an error\n");
    close_output(p, ORTE_IOF_STDOUT);
    close_output(p, ORTE_IOF_STDERR);
    RUN_UNTIL(ctx, 2 == ctx->data_eof);
    settle(ctx);
    assert_int_equal(ctx->out.len, 0);
    assert_int_equal(ctx->err.len, 0);
    /* files are as written: untagged */
    check_rank_files(ctx, dir, 2, "to the file\nand no newline", "an error\n");
}

/* --output-filename DIR: the files, and a copy on the outputs. */
static void test_output_files_copy(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *p[2];

    make_scratch_dir(ctx);
    start(ctx, &(start_opts_t){
                   .output_dir = ctx->dir, .stdin_target = ORTE_IOF_STDIN_NONE, .stdin_fd = -1});
    p[0] = add_proc(ctx, 0, false, false);
    p[1] = add_proc(ctx, 1, false, false);
    write_text(p[0]->child[1], "zero out\n");
    write_text(p[1]->child[2], "one err\n");
    for (int i = 0; i < 2; ++i) {
        close_output(p[i], ORTE_IOF_STDOUT);
        close_output(p[i], ORTE_IOF_STDERR);
    }
    RUN_UNTIL(ctx, 4 == ctx->data_eof);
    settle(ctx);
    assert_string_equal(text_str(&ctx->out), "zero out\n");
    assert_string_equal(text_str(&ctx->err), "one err\n");
    check_rank_files(ctx, ctx->dir, 0, "zero out\n", "");
    check_rank_files(ctx, ctx->dir, 1, "", "one err\n");
}

/* ---- flow control */

static void fill_lines(char *buf, size_t total)
{
    for (size_t i = 0; i < total / 16; ++i) {
        char line[17];
        snprintf(line, sizeof(line), "%015zu\n", i);
        memcpy(buf + 16 * i, line, 16);
    }
}

/* The sink's stdout is a pipe nobody reads: the process ends up blocked, and what the sink
 * holds stays within the window (and the partial line the source may hold back, when lines
 * are long); once read, everything arrives, complete and in order. */
static void check_flow_control(ctx_t *ctx, bool newlines, const char *line_max)
{
    test_proc_t *p;
    const size_t total = 256 * 1024;
    const size_t window = 4096;
    size_t written = 0;
    char *buf = malloc(total);

    assert_non_null(buf);
    if (newlines) {
        fill_lines(buf, total);
    } else {
        memset(buf, 'z', total);
    }
    reopen_with(ctx, "HERD_MCA_iof_base_window", "4096");
    reopen_with(ctx, "HERD_MCA_iof_base_line_max", line_max);
    assert_int_equal(orte_iof_base_window(), window);
    /* held back: at most a line (16 bytes), or a partial line up to the bound */
    size_t held = newlines ? 16 : orte_iof_base_line_max();
    int sink_pipe = fcntl(ctx->out_pipe[1], F_SETPIPE_SZ, 4096);
    assert_true(sink_pipe > 0);
    ctx->read_stdout = false;
    start(ctx, NULL);
    p = add_proc(ctx, 0, false, false);
    int proc_pipe = fcntl(p->child[1], F_SETPIPE_SZ, 4096);
    assert_true(proc_pipe > 0);
    assert_int_equal(fcntl(p->child[1], F_SETFL, O_NONBLOCK), 0);

    /* write until nothing more goes in for a while */
    int stuck = 0;
    for (int rounds = 0; stuck < 20; ++rounds) {
        if (rounds > MAX_ROUNDS) {
            fail_msg("the writer was never held back");
        }
        ssize_t n = write(p->child[1], buf + written, total - written);
        if (n > 0) {
            written += (size_t) n;
            stuck = 0;
        } else {
            assert_int_equal(errno, EAGAIN);
            stuck++;
        }
        assert_true(written < total);
        run_round(ctx);
    }
    /* held back: the pipes, the window, and what the sink queued (also within the window) */
    size_t bound = (size_t) proc_pipe + (size_t) sink_pipe + 2 * window + held;
    if (written > bound) {
        fail_msg("%zu bytes went in before the writer was held back (bound %zu)", written, bound);
    }
    if (ctx->max_queued > window + held) {
        fail_msg("the sink queued %zu bytes with a window of %zu", ctx->max_queued, window);
    }
    assert_int_equal(ctx->out.len, 0);

    /* the reader comes: the rest flows */
    ctx->read_stdout = true;
    for (int rounds = 0; written < total; ++rounds) {
        if (rounds > MAX_ROUNDS) {
            fail_msg("only %zu of %zu bytes could be written", written, total);
        }
        ssize_t n = write(p->child[1], buf + written, total - written);
        if (n > 0) {
            written += (size_t) n;
        } else {
            assert_int_equal(errno, EAGAIN);
        }
        run_round(ctx);
    }
    close_output(p, ORTE_IOF_STDOUT);
    RUN_UNTIL(ctx, ctx->out.len >= total && 1 == ctx->data_eof);
    settle(ctx);
    assert_int_equal(ctx->out.len, total);
    assert_memory_equal(ctx->out.data, buf, total);
    if (ctx->max_queued > window + held) {
        fail_msg("the sink queued %zu bytes with a window of %zu", ctx->max_queued, window);
    }
    free(buf);
}

static void test_flow_control(void **state)
{
    check_flow_control(*state, true, "65536");
}

/* One endless line: it goes in pieces, and the window holds all the same. */
static void test_flow_control_no_newlines(void **state)
{
    check_flow_control(*state, false, "1000");
}

/* ---- the end */

/* finish(): drained() runs once, after every stream ended and was acknowledged; not before
 * finish(), even when every stream ended. */
static void test_finish_drained(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *p[2];
    const size_t total = 512 * 16;
    char *buf = malloc(total + 1);

    assert_non_null(buf);
    fill_lines(buf, total);
    buf[total] = '\0';
    start(ctx, NULL);
    p[0] = add_proc(ctx, 0, false, false);
    p[1] = add_proc(ctx, 1, false, false);
    write_text(p[0]->child[1], buf);
    write_text(p[1]->child[1], "rank one\n");
    close_output(p[0], ORTE_IOF_STDOUT);
    close_output(p[0], ORTE_IOF_STDERR);
    /* rank 1's ends stay open, as when a child of it holds them */
    RUN_UNTIL(ctx, ctx->out.len >= total + 9 && 2 == ctx->data_eof);
    settle(ctx);
    assert_int_equal(ctx->drained, 0);

    ctx->module->source_finish(ctx->source);
    RUN_UNTIL(ctx, ctx->drained > 0);
    settle(ctx);
    assert_int_equal(ctx->drained, 1);
    assert_int_equal(ctx->data_eof, 4);
    assert_int_equal(ctx->out.len, total + 9);
    /* rank 0's lines in order, rank 1's once, whole */
    char *one = strstr(ctx->out.data, "rank one\n");
    assert_non_null(one);
    assert_true(0 == (one - ctx->out.data) % 16);
    memmove(one, one + 9, strlen(one + 9) + 1);
    assert_string_equal(ctx->out.data, buf);
    free(buf);
}

/* Bytes of the sink's stdout written out so far (read by the test or waiting in the pipe). */
static size_t written_out(const ctx_t *ctx)
{
    return ctx->out.len + (size_t) pipe_pending(ctx->out_pipe[0]);
}

/* A stream's end mark (an empty DATA with IOF_DATA_EOF) is acknowledged only after the bytes
 * queued before it for a slow reader are written: ACK means "everything before end was
 * written out", so drained() must not run while output is still unwritten. */
static void test_drained_waits_for_output(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *p;
    const size_t total = 512 * 16;
    char *buf = malloc(total + 1);

    assert_non_null(buf);
    fill_lines(buf, total);
    buf[total] = '\0';
    /* a reader that does not read yet: the sink keeps what does not fit */
    assert_true(fcntl(ctx->out_pipe[1], F_SETPIPE_SZ, 4096) > 0);
    ctx->read_stdout = false;
    start(ctx, NULL);
    p = add_proc(ctx, 0, false, false);
    write_text(p->child[1], buf);
    settle(ctx);
    assert_true(ctx->module->sink_queued(ctx->sink) > 0);
    /* so far, only what was written out is acknowledged */
    assert_true(ctx->acked_stdout[0] <= written_out(ctx));

    /* the process ends: its streams' end marks come */
    close_output(p, ORTE_IOF_STDOUT);
    close_output(p, ORTE_IOF_STDERR);
    RUN_UNTIL(ctx, 2 == ctx->data_eof);
    settle(ctx);
    assert_true(ctx->module->sink_queued(ctx->sink) > 0);
    if (ctx->acked_stdout[0] > written_out(ctx)) {
        fail_msg("rank 0's stdout acknowledged up to %llu, but only %zu bytes were written out",
                 (unsigned long long) ctx->acked_stdout[0], written_out(ctx));
    }
    ctx->module->source_finish(ctx->source);
    settle(ctx);
    assert_int_equal(ctx->drained, 0);

    ctx->read_stdout = true;
    RUN_UNTIL(ctx, 1 == ctx->drained && ctx->out.len >= total);
    assert_string_equal(text_str(&ctx->out), buf);
    free(buf);
}

/* Without output and with nothing pending, finish() drains at once (or in the next round). */
static void test_finish_nothing_pending(void **state)
{
    ctx_t *ctx = *state;

    start(ctx, NULL);
    add_proc(ctx, 0, false, false);
    add_proc(ctx, 1, false, true);
    settle(ctx);
    assert_int_equal(ctx->drained, 0);
    ctx->module->source_finish(ctx->source);
    RUN_UNTIL(ctx, ctx->drained > 0);
    ctx->module->source_finish(ctx->source); /* again: drained() does not run again */
    settle(ctx);
    assert_int_equal(ctx->drained, 1);
    assert_int_equal(ctx->data_eof, 3);
    assert_int_equal(ctx->out.len, 0);
}

/* An exited process's streams end once its pipes are empty, even if something still holds
 * their other ends; what is written after that is not the job's. */
static void test_exited_ends_streams(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *p;

    start(ctx, NULL);
    p = add_proc(ctx, 5, false, false);
    write_text(p->child[1], "before exit\nand the rest");
    settle(ctx);
    assert_int_equal(ctx->data_eof, 0);
    ctx->module->source_exited(ctx->source, 5);
    ctx->module->source_exited(ctx->source, 5);  /* twice: no harm */
    ctx->module->source_exited(ctx->source, 77); /* unknown: ignored */
    RUN_UNTIL(ctx, 2 == ctx->data_eof);
    settle(ctx);
    assert_string_equal(text_str(&ctx->out), "before exit\nand the rest");
    /* the read ends are closed: a writer gets EPIPE, not a hang */
    errno = 0;
    assert_int_equal(write(p->child[1], "x", 1), -1);
    assert_int_equal(errno, EPIPE);
    assert_int_equal(ctx->drained, 0); /* finish() was not called */
}

/* Many ranks on one source (its table and the sink's grow): every line arrives, and the end
 * drains. */
static void test_many_ranks(void **state)
{
    ctx_t *ctx = *state;
    const int ranks = 40;
    char line[32];
    size_t total = 0;

    start(ctx, NULL);
    for (int r = 0; r < ranks; ++r) {
        /* ranks spread out, as on a node of a large job */
        add_proc(ctx, (uint32_t) (1000 + 37 * r), false, 0 == r % 2);
    }
    for (int r = 0; r < ranks; ++r) {
        snprintf(line, sizeof(line), "rank %u\n", 1000 + 37 * r);
        write_text(ctx->procs[r].child[2], line); /* stdout when merged, else stderr */
        total += strlen(line);
    }
    RUN_UNTIL(ctx, ctx->out.len + ctx->err.len >= total);
    ctx->module->source_finish(ctx->source);
    RUN_UNTIL(ctx, 1 == ctx->drained);
    settle(ctx);
    assert_int_equal(ctx->out.len + ctx->err.len, total);
    assert_int_equal(ctx->data_eof, ranks / 2 + ranks);
    for (int r = 0; r < ranks; ++r) {
        snprintf(line, sizeof(line), "rank %u\n", 1000 + 37 * r);
        assert_non_null(strstr(0 == r % 2 ? text_str(&ctx->out) : text_str(&ctx->err), line));
    }
}

/* Nobody reads the sink's stdout any more: what comes is dropped, acknowledged, and the job's
 * end is not held up by it. */
static void test_output_reader_gone(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *p;
    const size_t total = 64 * 1024;
    char *buf = malloc(total + 1);

    assert_non_null(buf);
    fill_lines(buf, total);
    buf[total] = '\0';
    assert_true(fcntl(ctx->out_pipe[1], F_SETPIPE_SZ, 4096) > 0);
    start(ctx, NULL);
    p = add_proc(ctx, 0, false, false);
    write_text(p->child[1], "seen\n");
    RUN_UNTIL(ctx, ctx->out.len >= 5);
    close_fd(&ctx->out_pipe[0]);
    write_text(p->child[1], buf);
    write_text(p->child[2], "stderr still works\n");
    close_output(p, ORTE_IOF_STDOUT);
    close_output(p, ORTE_IOF_STDERR);
    RUN_UNTIL(ctx, 2 == ctx->data_eof);
    ctx->module->source_finish(ctx->source);
    RUN_UNTIL(ctx, 1 == ctx->drained);
    assert_int_equal(ctx->module->sink_queued(ctx->sink), 0);
    assert_string_equal(text_str(&ctx->err), "stderr still works\n");
    free(buf);
}

/* The sink cannot be reached: the source does not wait for acknowledgements that cannot
 * come, and still drains. */
static void test_sink_unreachable(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *p;
    const size_t total = 64 * 1024;
    char *buf = malloc(total + 1);

    assert_non_null(buf);
    fill_lines(buf, total);
    buf[total] = '\0';
    reopen_with(ctx, "HERD_MCA_iof_base_window", "4096");
    start(ctx,
          &(start_opts_t){.stdin_target = ORTE_IOF_STDIN_NONE, .stdin_fd = -1, .no_sink = true});
    ctx->sink_unreachable = true;
    p = add_proc(ctx, 0, false, false);
    /* more than the window and the pipe: blocks unless the source reads on */
    assert_true(fcntl(p->child[1], F_SETPIPE_SZ, 4096) > 0);
    assert_int_equal(fcntl(p->child[1], F_SETFL, O_NONBLOCK), 0);
    size_t written = 0;
    for (int rounds = 0; written < total; ++rounds) {
        if (rounds > MAX_ROUNDS) {
            fail_msg("the source stopped reading after %zu bytes", written);
        }
        ssize_t n = write(p->child[1], buf + written, total - written);
        if (n > 0) {
            written += (size_t) n;
        }
        run_round(ctx);
    }
    close_output(p, ORTE_IOF_STDOUT);
    close_output(p, ORTE_IOF_STDERR);
    ctx->module->source_finish(ctx->source);
    RUN_UNTIL(ctx, 1 == ctx->drained);
    free(buf);
}

/* A rank added again (errmgr restart) continues its streams: what the old pipe still held
 * first, its unfinished last line on its own, then the new process's lines; and again after
 * the stream had ended at the sink. */
static void test_source_add_again_continues(void **state)
{
    ctx_t *ctx = *state;

    start(ctx, NULL);
    test_proc_t *first = add_proc(ctx, 0, false, false);
    write_text(first->child[1], "one\ntw");
    close_output(first, ORTE_IOF_STDOUT);
    close_output(first, ORTE_IOF_STDERR);
    ctx->module->source_exited(ctx->source, 0);
    test_proc_t *second = add_proc(ctx, 0, false, false);
    write_text(second->child[1], "three\n");
    RUN_UNTIL(ctx, ctx->out.len >= 12);
    settle(ctx);
    assert_string_equal(text_str(&ctx->out), "one\ntwthree\n");
    /* this one's end reaches the sink, then a third takes over */
    close_output(second, ORTE_IOF_STDOUT);
    close_output(second, ORTE_IOF_STDERR);
    ctx->module->source_exited(ctx->source, 0);
    settle(ctx);
    test_proc_t *third = add_proc(ctx, 0, false, false);
    write_text(third->child[1], "four\n");
    RUN_UNTIL(ctx, ctx->out.len >= 17);
    settle(ctx);
    assert_string_equal(text_str(&ctx->out), "one\ntwthree\nfour\n");
    close_output(third, ORTE_IOF_STDOUT);
    close_output(third, ORTE_IOF_STDERR);
    ctx->module->source_finish(ctx->source);
    RUN_UNTIL(ctx, 1 == ctx->drained);
}

/* ---- stdin */

static void open_stdin_pipe(ctx_t *ctx)
{
    assert_int_equal(pipe2(ctx->stdin_pipe, O_CLOEXEC), 0);
}

static void test_stdin_one_target(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *other, *target;

    open_stdin_pipe(ctx);
    start(ctx, &(start_opts_t){.stdin_target = 0, .stdin_fd = ctx->stdin_pipe[0]});
    /* rank 1 is not the target: its stdin is closed at once */
    other = add_proc(ctx, 1, true, false);
    RUN_UNTIL(ctx, other->in.eof);
    assert_int_equal(ctx->to_sink[ORTE_IOF_MSG_READY], 0);
    target = add_proc(ctx, 0, true, false);
    assert_int_equal(ctx->to_sink[ORTE_IOF_MSG_READY], 1);
    write_text(ctx->stdin_pipe[1], "hello stdin\n");
    RUN_UNTIL(ctx, target->in.len >= 12);
    write_text(ctx->stdin_pipe[1], "more, no newline");
    RUN_UNTIL(ctx, target->in.len >= 28);
    settle(ctx);
    assert_false(target->in.eof);
    /* our stdin ends: so does the target's */
    close_fd(&ctx->stdin_pipe[1]);
    RUN_UNTIL(ctx, target->in.eof);
    assert_string_equal(text_str(&target->in), "hello stdin\nmore, no newline");
    assert_int_equal(other->in.len, 0);
    assert_true(ctx->to_source[ORTE_IOF_MSG_STDIN] >= 3); /* two chunks and the end */
    assert_true(ctx->to_sink[ORTE_IOF_MSG_STDIN_ACK] >= 1);
    assert_int_equal(ctx->stdin_closed_acks, 0);
}

/* --stdin all: stdin flows once every process was added, to all of them, all of it. */
static void test_stdin_all(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *p[2];
    const size_t blob_len = 200 * 1024;
    char *expect = malloc(6 + blob_len + 1);
    size_t written = 0;

    assert_non_null(expect);
    memcpy(expect, "early\n", 6);
    fill_lines(expect + 6, blob_len);
    expect[6 + blob_len] = '\0';
    open_stdin_pipe(ctx);
    assert_int_equal(fcntl(ctx->stdin_pipe[1], F_SETFL, O_NONBLOCK), 0);
    start(ctx, &(start_opts_t){.stdin_target = ORTE_IOF_STDIN_ALL, .stdin_fd = ctx->stdin_pipe[0]});
    p[0] = add_proc(ctx, 0, true, false);
    p[1] = add_proc(ctx, 1, true, false);
    write_text(ctx->stdin_pipe[1], "early\n");
    written = 6;
    settle(ctx);
    /* not every process is there yet: stdin is not read */
    assert_int_equal(ctx->to_sink[ORTE_IOF_MSG_READY], 0);
    assert_int_equal(pipe_pending(ctx->stdin_pipe[0]), 6);
    assert_int_equal(p[0]->in.len, 0);
    assert_int_equal(p[1]->in.len, 0);

    ctx->module->source_all_added(ctx->source);
    assert_int_equal(ctx->to_sink[ORTE_IOF_MSG_READY], 1);
    for (int rounds = 0; written < 6 + blob_len; ++rounds) {
        if (rounds > MAX_ROUNDS) {
            fail_msg("only %zu bytes of stdin could be written", written);
        }
        ssize_t n = write(ctx->stdin_pipe[1], expect + written, 6 + blob_len - written);
        if (n > 0) {
            written += (size_t) n;
        }
        run_round(ctx);
    }
    close_fd(&ctx->stdin_pipe[1]);
    RUN_UNTIL(ctx, p[0]->in.eof && p[1]->in.eof);
    assert_int_equal(p[0]->in.len, 6 + blob_len);
    assert_int_equal(p[1]->in.len, 6 + blob_len);
    assert_memory_equal(p[0]->in.data, expect, 6 + blob_len);
    assert_memory_equal(p[1]->in.data, expect, 6 + blob_len);
    free(expect);
}

/* The one target closes its stdin: the source says so, and the sink stops reading stdin
 * (what is left there is for whoever reads it next). */
static void test_stdin_target_closes(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *target;

    open_stdin_pipe(ctx);
    start(ctx, &(start_opts_t){.stdin_target = 0, .stdin_fd = ctx->stdin_pipe[0]});
    target = add_proc(ctx, 0, true, false);
    write_text(ctx->stdin_pipe[1], "first\n");
    RUN_UNTIL(ctx, target->in.len >= 6);
    assert_string_equal(text_str(&target->in), "first\n");
    close_fd(&target->child[0]);
    write_text(ctx->stdin_pipe[1], "second\n");
    RUN_UNTIL(ctx, 1 == ctx->stdin_closed_acks);
    settle(ctx);
    write_text(ctx->stdin_pipe[1], "third\n");
    settle(ctx);
    assert_int_equal(pipe_pending(ctx->stdin_pipe[0]), 6);
    assert_int_equal(ctx->stdin_closed_acks, 1);
    /* nothing more is sent to the source */
    int stdin_msgs = ctx->to_source[ORTE_IOF_MSG_STDIN];
    settle(ctx);
    assert_int_equal(ctx->to_source[ORTE_IOF_MSG_STDIN], stdin_msgs);
}

/* A target that does not read its stdin: the sink stops reading ours once a window is on its
 * way; when the target reads, all of it arrives, in order. */
static void test_stdin_flow_control(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *target;
    const size_t total = 128 * 1024;
    const size_t window = 4096;
    char *buf = malloc(total);
    size_t written = 0;

    assert_non_null(buf);
    fill_lines(buf, total);
    reopen_with(ctx, "HERD_MCA_iof_base_window", "4096");
    open_stdin_pipe(ctx);
    assert_int_equal(fcntl(ctx->stdin_pipe[1], F_SETFL, O_NONBLOCK), 0);
    int stdin_cap = fcntl(ctx->stdin_pipe[1], F_SETPIPE_SZ, 4096);
    assert_true(stdin_cap > 0);
    start(ctx, &(start_opts_t){.stdin_target = 0, .stdin_fd = ctx->stdin_pipe[0]});
    target = add_proc(ctx, 0, true, false);
    target->hold_in = true;
    int target_cap = fcntl(target->child[0], F_SETPIPE_SZ, 4096);
    assert_true(target_cap > 0);

    int stuck = 0;
    for (int rounds = 0; stuck < 20; ++rounds) {
        if (rounds > MAX_ROUNDS) {
            fail_msg("stdin was never held back");
        }
        ssize_t n = write(ctx->stdin_pipe[1], buf + written, total - written);
        if (n > 0) {
            written += (size_t) n;
            stuck = 0;
        } else {
            stuck++;
        }
        assert_true(written < total);
        run_round(ctx);
    }
    /* what herdrun took from its stdin: the target's pipe and the window (held by the source
     * until written) */
    size_t taken = written - (size_t) pipe_pending(ctx->stdin_pipe[0]);
    size_t bound = (size_t) target_cap + 2 * window;
    if (taken > bound) {
        fail_msg("%zu bytes of stdin were taken for a target that reads nothing (bound %zu)", taken,
                 bound);
    }

    target->hold_in = false;
    for (int rounds = 0; written < total; ++rounds) {
        if (rounds > MAX_ROUNDS) {
            fail_msg("only %zu of %zu bytes of stdin could be written", written, total);
        }
        ssize_t n = write(ctx->stdin_pipe[1], buf + written, total - written);
        if (n > 0) {
            written += (size_t) n;
        }
        run_round(ctx);
    }
    close_fd(&ctx->stdin_pipe[1]);
    RUN_UNTIL(ctx, target->in.eof);
    assert_int_equal(target->in.len, total);
    assert_memory_equal(target->in.data, buf, total);
    free(buf);
}

/* --stdin all over two sources (two nodes): the sink reads stdin only once both hold their
 * processes, never more than a window ahead of the slowest target, and after losing a source
 * goes on for the other. */
static void test_stdin_all_two_sources(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *p[3];
    const size_t total = 64 * 1024;
    const size_t window = 4096;
    char *buf = malloc(total);
    size_t written = 0;

    assert_non_null(buf);
    fill_lines(buf, total);
    reopen_with(ctx, "HERD_MCA_iof_base_window", "4096");
    open_stdin_pipe(ctx);
    assert_int_equal(fcntl(ctx->stdin_pipe[1], F_SETFL, O_NONBLOCK), 0);
    assert_true(fcntl(ctx->stdin_pipe[1], F_SETPIPE_SZ, 4096) > 0);
    start(ctx, &(start_opts_t){.stdin_target = ORTE_IOF_STDIN_ALL,
                               .stdin_fd = ctx->stdin_pipe[0],
                               .two_sources = true});
    p[0] = add_proc_on(ctx, ctx->source, 0, true, false);
    p[1] = add_proc_on(ctx, ctx->source, 1, true, false);
    p[2] = add_proc_on(ctx, ctx->source2, 2, true, false);
    write_text(ctx->stdin_pipe[1], "go\n");
    ctx->module->source_all_added(ctx->source);
    settle(ctx);
    /* the second source is not ready yet */
    assert_int_equal(pipe_pending(ctx->stdin_pipe[0]), 3);
    ctx->module->source_all_added(ctx->source2);
    RUN_UNTIL(ctx, p[0]->in.len >= 3 && p[1]->in.len >= 3 && p[2]->in.len >= 3);

    /* rank 2 stops reading: everybody waits for it, within the window */
    p[2]->hold_in = true;
    int cap = fcntl(p[2]->child[0], F_SETPIPE_SZ, 4096);
    assert_true(cap > 0);
    int stuck = 0;
    for (int rounds = 0; stuck < 20; ++rounds) {
        if (rounds > MAX_ROUNDS) {
            fail_msg("stdin was never held back");
        }
        ssize_t n = write(ctx->stdin_pipe[1], buf + written, total - written);
        if (n > 0) {
            written += (size_t) n;
            stuck = 0;
        } else {
            stuck++;
        }
        assert_true(written < total);
        run_round(ctx);
    }
    size_t taken = written - (size_t) pipe_pending(ctx->stdin_pipe[0]);
    if (taken > (size_t) cap + 2 * window) {
        fail_msg("%zu bytes of stdin were taken while rank 2 reads nothing", taken);
    }
    assert_true(p[0]->in.len <= 3 + taken);

    /* its node is lost: the others get the rest */
    ctx->module->sink_source_lost(ctx->sink, 2);
    for (int rounds = 0; written < total; ++rounds) {
        if (rounds > MAX_ROUNDS) {
            fail_msg("only %zu of %zu bytes of stdin could be written", written, total);
        }
        ssize_t n = write(ctx->stdin_pipe[1], buf + written, total - written);
        if (n > 0) {
            written += (size_t) n;
        }
        run_round(ctx);
    }
    close_fd(&ctx->stdin_pipe[1]);
    RUN_UNTIL(ctx, p[0]->in.eof && p[1]->in.eof);
    for (int i = 0; i < 2; ++i) {
        assert_int_equal(p[i]->in.len, 3 + total);
        assert_memory_equal(p[i]->in.data, "go\n", 3);
        assert_memory_equal(p[i]->in.data + 3, buf, total);
    }
    free(buf);
}

/* --stdin all on a node without a process that takes stdin: the source says so at the first
 * chunk, and the sink stops reading stdin.
 * With the direct transport (herdrun's own source) the source's STDIN_ACK (CLOSED) arrives
 * within the sink's send: the sink counts what it sent before sending, so it takes the answer
 * and stops reading. */
static void test_stdin_all_no_target(void **state)
{
    ctx_t *ctx = *state;

    open_stdin_pipe(ctx);
    start(ctx, &(start_opts_t){.stdin_target = ORTE_IOF_STDIN_ALL, .stdin_fd = ctx->stdin_pipe[0]});
    add_proc(ctx, 0, false, false);
    ctx->module->source_all_added(ctx->source);
    assert_int_equal(ctx->to_sink[ORTE_IOF_MSG_READY], 1);
    write_text(ctx->stdin_pipe[1], "nobody\n");
    RUN_UNTIL(ctx, 0 == pipe_pending(ctx->stdin_pipe[0]));
    settle(ctx);
    assert_int_equal(ctx->stdin_closed_acks, 1);
    write_text(ctx->stdin_pipe[1], "more\n");
    settle(ctx);
    assert_int_equal(pipe_pending(ctx->stdin_pipe[0]), 5);
    assert_int_equal(ctx->to_source[ORTE_IOF_MSG_STDIN], 1);
}

/* herdrun < FILE: a file cannot be watched, it is read on a timer, within the window; the
 * target gets all of it, then EOF. */
static void test_stdin_from_file(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *target;
    const size_t total = 100 * 1024;
    char *expect = malloc(total + 1);
    char path[PATH_MAX];
    FILE *f;

    assert_non_null(expect);
    fill_lines(expect, total);
    expect[total] = '\0';
    reopen_with(ctx, "HERD_MCA_iof_base_window", "4096");
    make_scratch_dir(ctx);
    snprintf(path, sizeof(path), "%s/input", ctx->dir);
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(expect, 1, total, f), total);
    assert_int_equal(fclose(f), 0);
    ctx->stdin_pipe[0] = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(ctx->stdin_pipe[0] >= 0);
    start(ctx, &(start_opts_t){.stdin_target = 0, .stdin_fd = ctx->stdin_pipe[0]});
    target = add_proc(ctx, 0, true, false);
    RUN_UNTIL(ctx, target->in.eof);
    assert_int_equal(target->in.len, total);
    assert_memory_equal(target->in.data, expect, total);
    free(expect);
}

/* herdrun < /dev/null: the target reads EOF at once. */
static void test_stdin_dev_null(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *target;

    ctx->stdin_pipe[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
    assert_true(ctx->stdin_pipe[0] >= 0);
    start(ctx, &(start_opts_t){.stdin_target = 0, .stdin_fd = ctx->stdin_pipe[0]});
    target = add_proc(ctx, 0, true, false);
    RUN_UNTIL(ctx, target->in.eof);
    assert_int_equal(target->in.len, 0);
}

/* The sink loses its only source: it stops reading stdin too. */
static void test_stdin_source_lost(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *target;

    open_stdin_pipe(ctx);
    start(ctx, &(start_opts_t){.stdin_target = 0, .stdin_fd = ctx->stdin_pipe[0]});
    target = add_proc(ctx, 0, true, false);
    write_text(ctx->stdin_pipe[1], "first\n");
    RUN_UNTIL(ctx, target->in.len >= 6);
    ctx->module->sink_source_lost(ctx->sink, 1);
    ctx->module->sink_source_lost(ctx->sink, 1);
    ctx->module->sink_source_lost(ctx->sink, 9); /* unknown: ignored */
    write_text(ctx->stdin_pipe[1], "second\n");
    settle(ctx);
    assert_int_equal(pipe_pending(ctx->stdin_pipe[0]), 7);
    assert_string_equal(text_str(&target->in), "first\n");
}

/* ---- bad and repeated messages */

static int deliver_to_sink(ctx_t *ctx, int kind, const void *msg, size_t len)
{
    struct iovec iov = {.iov_base = (void *) msg, .iov_len = len};
    return ctx->module->sink_deliver(ctx->sink, 1, kind, &iov, 1);
}

static int deliver_to_source(ctx_t *ctx, int kind, const void *msg, size_t len)
{
    struct iovec iov = {.iov_base = (void *) msg, .iov_len = len};
    return ctx->module->source_deliver(ctx->source, 0, kind, &iov, 1);
}

static void test_malformed_to_sink(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *p;
    uint8_t m[64];
    struct iovec pieces[ORTE_IOF_MAX_PIECES + 2];
    const int bad = HERD_ERR_UNPACK_FAILURE;

    start(ctx, NULL);
    p = add_proc(ctx, 0, false, false);
    write_text(p->child[1], "before\n");
    RUN_UNTIL(ctx, ctx->out.len >= 7);

    memset(m, 0, sizeof(m));
    /* DATA: too short, nothing at all, a stream that is not stdout or stderr */
    assert_int_equal(deliver_to_sink(ctx, ORTE_IOF_MSG_DATA, m, IOF_DATA_HEADER - 1), bad);
    assert_int_equal(ctx->module->sink_deliver(ctx->sink, 1, ORTE_IOF_MSG_DATA, NULL, 0), bad);
    data_header(m, 0, ORTE_IOF_STDIN, 0, 7);
    memcpy(m + IOF_DATA_HEADER, "bad\n", 4);
    assert_int_equal(deliver_to_sink(ctx, ORTE_IOF_MSG_DATA, m, IOF_DATA_HEADER + 4), bad);
    data_header(m, 0, 3, 0, 7);
    assert_int_equal(deliver_to_sink(ctx, ORTE_IOF_MSG_DATA, m, IOF_DATA_HEADER + 4), bad);
    data_header(m, 0, 255, 0, 7);
    assert_int_equal(deliver_to_sink(ctx, ORTE_IOF_MSG_DATA, m, IOF_DATA_HEADER + 4), bad);
    /* more pieces than a message may have */
    data_header(m, 0, ORTE_IOF_STDOUT, 0, 7);
    pieces[0].iov_base = m;
    pieces[0].iov_len = IOF_DATA_HEADER;
    for (int i = 1; i < ORTE_IOF_MAX_PIECES + 2; ++i) {
        pieces[i].iov_base = "x";
        pieces[i].iov_len = 1;
    }
    assert_int_equal(
        ctx->module->sink_deliver(ctx->sink, 1, ORTE_IOF_MSG_DATA, pieces, ORTE_IOF_MAX_PIECES + 2),
        bad);
    /* kinds the sink does not take */
    assert_int_equal(deliver_to_sink(ctx, ORTE_IOF_MSG_ACK, m, IOF_ACK_SIZE), bad);
    assert_int_equal(deliver_to_sink(ctx, ORTE_IOF_MSG_STDIN, m, IOF_STDIN_HEADER), bad);
    assert_int_equal(deliver_to_sink(ctx, ORTE_IOF_NUM_MSGS, m, 32), bad);
    assert_int_equal(deliver_to_sink(ctx, -1, m, 32), bad);
    /* READY: too short, from no source there is */
    memset(m, 0, sizeof(m));
    assert_int_equal(deliver_to_sink(ctx, ORTE_IOF_MSG_READY, m, IOF_READY_SIZE - 1), bad);
    struct iovec ready = {.iov_base = m, .iov_len = IOF_READY_SIZE};
    assert_int_equal(ctx->module->sink_deliver(ctx->sink, 0, ORTE_IOF_MSG_READY, &ready, 1), bad);
    assert_int_equal(ctx->module->sink_deliver(ctx->sink, 2, ORTE_IOF_MSG_READY, &ready, 1), bad);
    /* STDIN_ACK: too short, beyond what was sent, from no source there is */
    assert_int_equal(deliver_to_sink(ctx, ORTE_IOF_MSG_STDIN_ACK, m, IOF_STDIN_ACK_SIZE - 1), bad);
    put_u64(m, 1);
    m[8] = 0;
    assert_int_equal(deliver_to_sink(ctx, ORTE_IOF_MSG_STDIN_ACK, m, IOF_STDIN_ACK_SIZE), bad);
    put_u64(m, 0);
    struct iovec sack = {.iov_base = m, .iov_len = IOF_STDIN_ACK_SIZE};
    assert_int_equal(ctx->module->sink_deliver(ctx->sink, 5, ORTE_IOF_MSG_STDIN_ACK, &sack, 1),
                     bad);

    /* nothing of it was written, and the job's output goes on */
    write_text(p->child[1], "after\n");
    RUN_UNTIL(ctx, ctx->out.len >= 13);
    settle(ctx);
    assert_string_equal(text_str(&ctx->out), "before\nafter\n");
}

static void test_malformed_to_source(void **state)
{
    ctx_t *ctx = *state;
    test_proc_t *p;
    uint8_t m[64];
    const int bad = HERD_ERR_UNPACK_FAILURE;

    /* the source alone: the test is its sink */
    start(ctx, &(start_opts_t){.stdin_target = 0, .stdin_fd = -1, .no_sink = true});
    p = add_proc(ctx, 0, true, false);
    write_text(p->child[1], "abc\n");
    RUN_UNTIL(ctx, 1 == ctx->to_sink[ORTE_IOF_MSG_DATA]);
    deliver_all(ctx); /* to no sink */

    /* ACK: too short, an unknown rank, a stream that is not stdout or stderr, beyond what was
     * sent */
    ack_message(m, 0, ORTE_IOF_STDOUT, 4);
    assert_int_equal(deliver_to_source(ctx, ORTE_IOF_MSG_ACK, m, IOF_ACK_SIZE - 1), bad);
    assert_int_equal(ctx->module->source_deliver(ctx->source, 0, ORTE_IOF_MSG_ACK, NULL, 0), bad);
    ack_message(m, 9, ORTE_IOF_STDOUT, 4);
    assert_int_equal(deliver_to_source(ctx, ORTE_IOF_MSG_ACK, m, IOF_ACK_SIZE), bad);
    ack_message(m, 0, ORTE_IOF_STDIN, 4);
    assert_int_equal(deliver_to_source(ctx, ORTE_IOF_MSG_ACK, m, IOF_ACK_SIZE), bad);
    ack_message(m, 0, 3, 4);
    assert_int_equal(deliver_to_source(ctx, ORTE_IOF_MSG_ACK, m, IOF_ACK_SIZE), bad);
    ack_message(m, 0, ORTE_IOF_STDOUT, 5);
    assert_int_equal(deliver_to_source(ctx, ORTE_IOF_MSG_ACK, m, IOF_ACK_SIZE), bad);
    ack_message(m, 0, ORTE_IOF_STDERR, 1);
    assert_int_equal(deliver_to_source(ctx, ORTE_IOF_MSG_ACK, m, IOF_ACK_SIZE), bad);
    /* exactly what was sent, twice: fine */
    ack_message(m, 0, ORTE_IOF_STDOUT, 4);
    assert_int_equal(deliver_to_source(ctx, ORTE_IOF_MSG_ACK, m, IOF_ACK_SIZE), HERD_SUCCESS);
    assert_int_equal(deliver_to_source(ctx, ORTE_IOF_MSG_ACK, m, IOF_ACK_SIZE), HERD_SUCCESS);
    ack_message(m, 0, ORTE_IOF_STDOUT, 2); /* behind: changes nothing */
    assert_int_equal(deliver_to_source(ctx, ORTE_IOF_MSG_ACK, m, IOF_ACK_SIZE), HERD_SUCCESS);

    /* kinds the source does not take */
    assert_int_equal(deliver_to_source(ctx, ORTE_IOF_MSG_DATA, m, 40), bad);
    assert_int_equal(deliver_to_source(ctx, ORTE_IOF_MSG_READY, m, IOF_READY_SIZE), bad);
    assert_int_equal(deliver_to_source(ctx, ORTE_IOF_MSG_STDIN_ACK, m, IOF_STDIN_ACK_SIZE), bad);
    assert_int_equal(deliver_to_source(ctx, 42, m, 40), bad);

    /* STDIN: too short, at the wrong offset; in order it is written */
    stdin_header(m, 0, 0, 0);
    assert_int_equal(deliver_to_source(ctx, ORTE_IOF_MSG_STDIN, m, IOF_STDIN_HEADER - 1), bad);
    stdin_header(m, 0, 0, 5);
    memcpy(m + IOF_STDIN_HEADER, "ab", 2);
    assert_int_equal(deliver_to_source(ctx, ORTE_IOF_MSG_STDIN, m, IOF_STDIN_HEADER + 2), bad);
    stdin_header(m, 0, 0, 0);
    assert_int_equal(deliver_to_source(ctx, ORTE_IOF_MSG_STDIN, m, IOF_STDIN_HEADER + 2),
                     HERD_SUCCESS);
    /* the same again: a repeat */
    assert_int_equal(deliver_to_source(ctx, ORTE_IOF_MSG_STDIN, m, IOF_STDIN_HEADER + 2), bad);
    stdin_header(m, 0, 0, 1);
    assert_int_equal(deliver_to_source(ctx, ORTE_IOF_MSG_STDIN, m, IOF_STDIN_HEADER + 2), bad);
    stdin_header(m, 0, 0, 2);
    memcpy(m + IOF_STDIN_HEADER, "cd", 2);
    assert_int_equal(deliver_to_source(ctx, ORTE_IOF_MSG_STDIN, m, IOF_STDIN_HEADER + 2),
                     HERD_SUCCESS);
    stdin_header(m, 0, IOF_STDIN_EOF, 4);
    assert_int_equal(deliver_to_source(ctx, ORTE_IOF_MSG_STDIN, m, IOF_STDIN_HEADER), HERD_SUCCESS);
    /* after the end, nothing more */
    stdin_header(m, 0, 0, 4);
    assert_int_equal(deliver_to_source(ctx, ORTE_IOF_MSG_STDIN, m, IOF_STDIN_HEADER + 2), bad);
    RUN_UNTIL(ctx, p->in.eof);
    assert_string_equal(text_str(&p->in), "abcd");

    /* the source still forwards */
    write_text(p->child[1], "def\n");
    RUN_UNTIL(ctx, 2 == ctx->to_sink[ORTE_IOF_MSG_DATA]);
}

/* A fragment delivered twice is written once; one partly written before, only its new part;
 * the header may come in pieces; a gap is reported once. */
static void test_repeated_fragment(void **state)
{
    ctx_t *ctx = *state;
    uint8_t h[IOF_DATA_HEADER];
    struct iovec iov[4];
    char *err;

    start(ctx,
          &(start_opts_t){.stdin_target = ORTE_IOF_STDIN_NONE, .stdin_fd = -1, .no_source = true});
    data_header(h, 5, ORTE_IOF_STDOUT, 0, 0);
    iov[0] = (struct iovec){.iov_base = h, .iov_len = sizeof(h)};
    iov[1] = (struct iovec){.iov_base = "hello\n", .iov_len = 6};
    assert_int_equal(ctx->module->sink_deliver(ctx->sink, 1, ORTE_IOF_MSG_DATA, iov, 2),
                     HERD_SUCCESS);
    assert_int_equal(ctx->module->sink_deliver(ctx->sink, 1, ORTE_IOF_MSG_DATA, iov, 2),
                     HERD_SUCCESS);
    settle(ctx);
    assert_string_equal(text_str(&ctx->out), "hello\n");
    /* both acknowledged: the source may have missed the first acknowledgement */
    assert_int_equal(ctx->to_source[ORTE_IOF_MSG_ACK], 2);

    /* overlapping what was written: only the new part */
    data_header(h, 5, ORTE_IOF_STDOUT, 0, 3);
    iov[1] = (struct iovec){.iov_base = "lo\nworld\n", .iov_len = 9};
    assert_int_equal(ctx->module->sink_deliver(ctx->sink, 1, ORTE_IOF_MSG_DATA, iov, 2),
                     HERD_SUCCESS);
    settle(ctx);
    assert_string_equal(text_str(&ctx->out), "hello\nworld\n");

    /* the header split over three pieces, the payload over two */
    data_header(h, 5, ORTE_IOF_STDOUT, 0, 12);
    iov[0] = (struct iovec){.iov_base = h, .iov_len = 5};
    iov[1] = (struct iovec){.iov_base = h + 5, .iov_len = 10};
    iov[2] = (struct iovec){.iov_base = h + 15, .iov_len = sizeof(h) - 15};
    iov[3] = (struct iovec){.iov_base = "again\n", .iov_len = 6};
    assert_int_equal(ctx->module->sink_deliver(ctx->sink, 1, ORTE_IOF_MSG_DATA, iov, 4),
                     HERD_SUCCESS);
    assert_int_equal(ctx->module->sink_deliver(ctx->sink, 1, ORTE_IOF_MSG_DATA, iov, 4),
                     HERD_SUCCESS);
    settle(ctx);
    assert_string_equal(text_str(&ctx->out), "hello\nworld\nagain\n");

    /* the same offsets on stderr and for another rank are other streams */
    data_header(h, 5, ORTE_IOF_STDERR, 0, 0);
    iov[0] = (struct iovec){.iov_base = h, .iov_len = sizeof(h)};
    iov[1] = (struct iovec){.iov_base = "err\n", .iov_len = 4};
    assert_int_equal(ctx->module->sink_deliver(ctx->sink, 1, ORTE_IOF_MSG_DATA, iov, 2),
                     HERD_SUCCESS);
    data_header(h, 6, ORTE_IOF_STDOUT, 0, 0);
    iov[1] = (struct iovec){.iov_base = "six\n", .iov_len = 4};
    assert_int_equal(ctx->module->sink_deliver(ctx->sink, 1, ORTE_IOF_MSG_DATA, iov, 2),
                     HERD_SUCCESS);
    /* the daemon's own messages are not counted: each is written */
    data_header(h, ORTE_IOF_RANK_DAEMON, ORTE_IOF_STDERR, 0, 0);
    iov[1] = (struct iovec){.iov_base = "daemon\n", .iov_len = 7};
    assert_int_equal(ctx->module->sink_deliver(ctx->sink, 1, ORTE_IOF_MSG_DATA, iov, 2),
                     HERD_SUCCESS);
    assert_int_equal(ctx->module->sink_deliver(ctx->sink, 1, ORTE_IOF_MSG_DATA, iov, 2),
                     HERD_SUCCESS);
    settle(ctx);
    assert_string_equal(text_str(&ctx->out), "hello\nworld\nagain\nsix\n");
    assert_string_equal(text_str(&ctx->err), "err\ndaemon\ndaemon\n");

    /* a gap: what comes is written, the loss reported once */
    data_header(h, 5, ORTE_IOF_STDOUT, 0, 100);
    iov[1] = (struct iovec){.iov_base = "gap\n", .iov_len = 4};
    herd_test_capture_start(&stderr_capture);
    int rc = ctx->module->sink_deliver(ctx->sink, 1, ORTE_IOF_MSG_DATA, iov, 2);
    data_header(h, 5, ORTE_IOF_STDOUT, 0, 200);
    int rc2 = ctx->module->sink_deliver(ctx->sink, 1, ORTE_IOF_MSG_DATA, iov, 2);
    err = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(rc, HERD_SUCCESS);
    assert_int_equal(rc2, HERD_SUCCESS);
    assert_contains(err, "82 bytes of rank 5's stdout were lost on the way");
    assert_null(strstr(err, "96 bytes"));
    free(err);
    settle(ctx);
    assert_string_equal(text_str(&ctx->out), "hello\nworld\nagain\nsix\ngap\ngap\n");
}

/* Delivers one hand-built DATA fragment to the sink (as if from the source, vpid 1). */
static int deliver_data(ctx_t *ctx, uint32_t rank, uint8_t stream, uint8_t flags, uint64_t offset,
                        const char *bytes)
{
    uint8_t h[IOF_DATA_HEADER];
    struct iovec iov[2] = {{.iov_base = h, .iov_len = sizeof(h)},
                           {.iov_base = (void *) bytes, .iov_len = strlen(bytes)}};

    data_header(h, rank, stream, flags, offset);
    return ctx->module->sink_deliver(ctx->sink, 1, ORTE_IOF_MSG_DATA, iov, iov[1].iov_len ? 2 : 1);
}

/* A repeated end mark is a repeat: it must not reopen DIR/rank.N/stdout (O_TRUNC) and empty
 * the file written so far. */
static void test_repeated_end_mark_keeps_file(void **state)
{
    ctx_t *ctx = *state;
    char dir[PATH_MAX];

    make_scratch_dir(ctx);
    snprintf(dir, sizeof(dir), "%s/out", ctx->dir);
    start(ctx, &(start_opts_t){.output_dir = dir,
                               .stdin_target = ORTE_IOF_STDIN_NONE,
                               .stdin_fd = -1,
                               .no_source = true});
    assert_int_equal(deliver_data(ctx, 3, ORTE_IOF_STDOUT, 0, 0, "hello\n"), HERD_SUCCESS);
    assert_int_equal(deliver_data(ctx, 3, ORTE_IOF_STDOUT, IOF_DATA_EOF, 6, ""), HERD_SUCCESS);
    assert_int_equal(deliver_data(ctx, 3, ORTE_IOF_STDERR, IOF_DATA_EOF, 0, ""), HERD_SUCCESS);
    check_rank_files(ctx, dir, 3, "hello\n", "");
    /* the end mark again: a repeat, written (and truncated) nothing */
    assert_int_equal(deliver_data(ctx, 3, ORTE_IOF_STDOUT, IOF_DATA_EOF, 6, ""), HERD_SUCCESS);
    settle(ctx);
    check_rank_files(ctx, dir, 3, "hello\n", "");
    assert_string_equal(text_str(&ctx->out), "hello\n");
}

/* Three lines for rank 0 when DIR/rank.0/stdout cannot be made; how often that was reported. */
static int deliver_with_file_error(ctx_t *ctx)
{
    char path[PATH_MAX];
    char *err;
    int fd, reports = 0;

    make_scratch_dir(ctx);
    /* rank.0 is a file: DIR/rank.0/stdout cannot be made */
    snprintf(path, sizeof(path), "%s/rank.0", ctx->dir);
    fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    close(fd);
    start(ctx, &(start_opts_t){.output_dir = ctx->dir,
                               .stdin_target = ORTE_IOF_STDIN_NONE,
                               .stdin_fd = -1,
                               .no_source = true});
    herd_test_capture_start(&stderr_capture);
    int rc1 = deliver_data(ctx, 0, ORTE_IOF_STDOUT, 0, 0, "one\n");
    int rc2 = deliver_data(ctx, 0, ORTE_IOF_STDOUT, 0, 4, "two\n");
    int rc3 = deliver_data(ctx, 0, ORTE_IOF_STDOUT, 0, 8, "three\n");
    err = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(rc1, HERD_SUCCESS);
    assert_int_equal(rc2, HERD_SUCCESS);
    assert_int_equal(rc3, HERD_SUCCESS);
    assert_contains(err, "cannot write");
    assert_contains(err, "rank.0/stdout");
    for (const char *at = strstr(err, "cannot write"); NULL != at;
         at = strstr(at + 1, "cannot write")) {
        reports++;
    }
    free(err);
    settle(ctx);
    assert_string_equal(text_str(&ctx->out), "one\ntwo\nthree\n");
    return reports;
}

/* An output file that cannot be made is reported, and the output still goes to stdout. */
static void test_output_file_error(void **state)
{
    assert_true(deliver_with_file_error(*state) >= 1);
}

/* An output file that cannot be opened is reported once, not once per fragment (a job writing
 * many lines would flood stderr). */
static void test_output_file_error_reported_once(void **state)
{
    int reports = deliver_with_file_error(*state);
    if (1 != reports) {
        fail_msg("the file error was reported %d times for 3 fragments", reports);
    }
}

/* herdrun --attach: a tool's socket gets every fragment framed, until it goes away. */
static void test_attach(void **state)
{
    ctx_t *ctx = *state;
    int sock[2];
    uint8_t h[IOF_DATA_HEADER], frame[64];
    struct iovec iov[2];

    start(ctx,
          &(start_opts_t){.stdin_target = ORTE_IOF_STDIN_NONE, .stdin_fd = -1, .no_source = true});
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock), 0);
    assert_int_equal(ctx->module->sink_attach(ctx->sink, sock[0]), HERD_SUCCESS);
    data_header(h, 2, ORTE_IOF_STDERR, 0, 0);
    iov[0] = (struct iovec){.iov_base = h, .iov_len = sizeof(h)};
    iov[1] = (struct iovec){.iov_base = "hi\n", .iov_len = 3};
    assert_int_equal(ctx->module->sink_deliver(ctx->sink, 1, ORTE_IOF_MSG_DATA, iov, 2),
                     HERD_SUCCESS);
    settle(ctx);
    assert_string_equal(text_str(&ctx->err), "hi\n");
    assert_int_equal(recv(sock[1], frame, sizeof(frame), MSG_DONTWAIT), 12);
    assert_int_equal(get_u32(frame), 2);
    assert_int_equal(frame[4], ORTE_IOF_STDERR);
    assert_int_equal(get_u32(frame + 5), 3);
    assert_memory_equal(frame + 9, "hi\n", 3);
    /* the tool goes: the job's output goes on */
    close(sock[1]);
    data_header(h, 2, ORTE_IOF_STDERR, 0, 3);
    iov[1] = (struct iovec){.iov_base = "ho\n", .iov_len = 3};
    assert_int_equal(ctx->module->sink_deliver(ctx->sink, 1, ORTE_IOF_MSG_DATA, iov, 2),
                     HERD_SUCCESS);
    data_header(h, 2, ORTE_IOF_STDERR, 0, 6);
    assert_int_equal(ctx->module->sink_deliver(ctx->sink, 1, ORTE_IOF_MSG_DATA, iov, 2),
                     HERD_SUCCESS);
    settle(ctx);
    assert_string_equal(text_str(&ctx->err), "hi\nho\nho\n");
}

/* A tool that does not read falls behind and is dropped; the job's output is not slowed. */
static void test_attach_slow_tool_dropped(void **state)
{
    ctx_t *ctx = *state;
    int sock[2];
    const size_t piece = 16 * 1024;
    const int pieces = 128; /* 2 MiB: more than the socket holds and 16 windows of 4 KiB */
    char *line = malloc(piece + 1);
    uint64_t offset = 0;

    assert_non_null(line);
    memset(line, 'y', piece - 1);
    line[piece - 1] = '\n';
    line[piece] = '\0';
    reopen_with(ctx, "HERD_MCA_iof_base_window", "4096");
    start(ctx,
          &(start_opts_t){.stdin_target = ORTE_IOF_STDIN_NONE, .stdin_fd = -1, .no_source = true});
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock), 0);
    assert_int_equal(ctx->module->sink_attach(ctx->sink, sock[0]), HERD_SUCCESS);
    for (int i = 0; i < pieces; ++i) {
        assert_int_equal(deliver_data(ctx, 0, ORTE_IOF_STDOUT, 0, offset, line), HERD_SUCCESS);
        offset += piece;
        /* the job's own reader keeps up */
        RUN_UNTIL(ctx, ctx->out.len >= offset);
    }
    settle(ctx);
    assert_int_equal(ctx->out.len, offset);
    /* the tool got a part, then its end */
    size_t got = 0;
    char buf[65536];
    for (;;) {
        ssize_t n = recv(sock[1], buf, sizeof(buf), MSG_DONTWAIT);
        if (n > 0) {
            got += (size_t) n;
            continue;
        }
        if (0 == n) {
            break;
        }
        fail_msg("the tool was not dropped (%zu bytes read, then %s)", got, strerror(errno));
    }
    assert_true(got > 0);
    assert_true(got < offset);
    close(sock[1]);
    free(line);
}

static void test_create_bad_config(void **state)
{
    ctx_t *ctx = *state;
    orte_iof_source_t *source = NULL;
    orte_iof_sink_t *sink = NULL;
    orte_iof_source_config_t src_config = {.base = ctx->base};
    orte_iof_sink_config_t sink_config = {
        .base = ctx->base, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1};

    /* no transport, no base: refused, nothing returned */
    assert_int_equal(ctx->module->source_create(&src_config, &source), HERD_ERR_BAD_PARAM);
    assert_null(source);
    assert_int_equal(ctx->module->source_create(NULL, &source), HERD_ERR_BAD_PARAM);
    assert_int_equal(ctx->module->sink_create(&sink_config, &sink), HERD_ERR_BAD_PARAM);
    assert_null(sink);
    sink_config.transport.send = sink_send;
    sink_config.base = NULL;
    assert_int_equal(ctx->module->sink_create(&sink_config, &sink), HERD_ERR_BAD_PARAM);
    assert_null(sink);
    /* destroying nothing is harmless */
    ctx->module->source_destroy(NULL);
    ctx->module->sink_destroy(NULL);
}

static const bool direct_transport = true;
#define DIRECT(f)                                                                                  \
    {                                                                                              \
        "direct_" #f, f, e2e_setup, e2e_teardown, (void *) &direct_transport                       \
    }

int main(void)
{
    const struct CMUnitTest tests[] = {
        /* framework */
        cmocka_unit_test_setup_teardown(test_default_selected, framework_setup, framework_teardown),
        cmocka_unit_test_setup_teardown(test_nothing_left, framework_setup, framework_teardown),
        cmocka_unit_test_setup_teardown(test_stub_outranks_default, framework_setup,
                                        framework_teardown),
        cmocka_unit_test_setup_teardown(test_variable_defaults, framework_setup,
                                        framework_teardown),
        cmocka_unit_test_setup_teardown(test_variables_set, framework_setup, framework_teardown),
        cmocka_unit_test_setup_teardown(test_out_of_range_refused, framework_setup,
                                        framework_teardown),
        /* base helpers (the pipe tests first: a process enlarges only so many pipes) */
        cmocka_unit_test_setup_teardown(test_make_pipes, helpers_setup, helpers_teardown),
        cmocka_unit_test_setup_teardown(test_make_pipes_default_capacity, helpers_setup,
                                        helpers_teardown),
        cmocka_unit_test_setup_teardown(test_make_pipes_failure_leaves_nothing, helpers_setup,
                                        helpers_teardown),
        cmocka_unit_test_setup_teardown(test_send_recv_fds, helpers_setup, helpers_teardown),
        cmocka_unit_test_setup_teardown(test_recv_fds_malformed, helpers_setup, helpers_teardown),
        cmocka_unit_test_setup_teardown(test_prefix_tag, helpers_setup, helpers_teardown),
        cmocka_unit_test_setup_teardown(test_prefix_timestamp, helpers_setup, helpers_teardown),
        cmocka_unit_test_setup_teardown(test_prefix_truncation, helpers_setup, helpers_teardown),
        cmocka_unit_test_setup_teardown(test_parse_stdin, helpers_setup, helpers_teardown),
        /* source and sink */
        cmocka_unit_test_setup_teardown(test_whole_lines, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_partial_line_held, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_interleaved_ranks_unmixed, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_long_line_in_pieces, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_long_whole_line_not_cut, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_eof_line_untagged, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_eof_line_tagged, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_timestamp_and_tag, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_stdout_stderr_routing, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_stdout_is_a_file, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_output_files_nocopy, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_output_files_copy, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_flow_control, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_flow_control_no_newlines, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_finish_drained, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_drained_waits_for_output, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_finish_nothing_pending, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_exited_ends_streams, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_many_ranks, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_output_reader_gone, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_sink_unreachable, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_source_add_again_continues, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_stdin_one_target, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_stdin_all, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_stdin_target_closes, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_stdin_flow_control, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_stdin_all_two_sources, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_stdin_all_no_target, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_stdin_from_file, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_stdin_dev_null, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_stdin_source_lost, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_malformed_to_sink, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_malformed_to_source, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_repeated_fragment, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_repeated_end_mark_keeps_file, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_output_file_error, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_output_file_error_reported_once, e2e_setup,
                                        e2e_teardown),
        cmocka_unit_test_setup_teardown(test_attach, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_attach_slow_tool_dropped, e2e_setup, e2e_teardown),
        cmocka_unit_test_setup_teardown(test_create_bad_config, e2e_setup, e2e_teardown),
        /* again with a transport that delivers inside send(), as herdrun's own source does */
        DIRECT(test_whole_lines),
        DIRECT(test_partial_line_held),
        DIRECT(test_interleaved_ranks_unmixed),
        DIRECT(test_long_line_in_pieces),
        DIRECT(test_eof_line_tagged),
        DIRECT(test_stdout_stderr_routing),
        DIRECT(test_flow_control),
        DIRECT(test_finish_drained),
        DIRECT(test_finish_nothing_pending),
        DIRECT(test_exited_ends_streams),
        DIRECT(test_stdin_one_target),
        DIRECT(test_stdin_all),
        DIRECT(test_stdin_target_closes),
        DIRECT(test_stdin_flow_control),
        DIRECT(test_stdin_all_two_sources),
        DIRECT(test_many_ranks),
        DIRECT(test_output_reader_gone),
        DIRECT(test_stdin_all_no_target),
        DIRECT(test_stdin_from_file),
    };
    const char *path = getenv("HERD_MCA_component_path");
    int failed;

    /* herdrun and the session daemon ignore SIGPIPE: a process that closed its stdin, or a
     * reader of the sink's output that went away, is an error to handle, not a signal */
    signal(SIGPIPE, SIG_IGN);
    /* empty in a static build: the real components are in the library */
    build_component_path = strdup(NULL != path ? path : "");
    if (NULL == build_component_path) {
        return 1;
    }
    failed = cmocka_run_group_tests(tests, NULL, NULL);
    free(build_component_path);
    return failed;
}
