/* SPDX-License-Identifier: BSD-3-Clause */
/* The endpoint-tag generator: configure's header for the fixture components under
 * fixtures/ (alpha: one tag, beta: two, gamma: none, nobuild: a tag but not built), and the
 * generator script's checks run directly (duplicates, bad names, no tags, no dynamic slot). */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "endpoint_tags/fixture_endpoint_tags.h"

#define GENERATOR HERD_TEST_TOP_SRCDIR "/config/herd_endpoint_tags.sh"

/* A proc structure laid out as the endpoint registry will use it. */
typedef struct {
    int rank;
    void *endpoint[HERD_ENDPOINT_SLOT_COUNT];
} fixture_proc_t;

static void test_configure_numbering(void **state)
{
    /* in the order the components were found: xport/alpha, then xport/beta's two tags */
    assert_int_equal(0, HERD_ENDPOINT_TAG_ALPHA);
    assert_int_equal(1, HERD_ENDPOINT_TAG_BETA);
    assert_int_equal(2, HERD_ENDPOINT_TAG_BETA_RDMA);
    assert_int_equal(3, HERD_ENDPOINT_STATIC_COUNT);
    assert_int_equal(HERD_ENDPOINT_STATIC_COUNT + HERD_ENDPOINT_DYNAMIC_SLOTS,
                     HERD_ENDPOINT_SLOT_COUNT);
#if HERD_ENDPOINT_DYNAMIC_SLOTS
    assert_int_equal(HERD_ENDPOINT_STATIC_COUNT, HERD_ENDPOINT_DYNAMIC_INDEX);
#endif
}

static void test_plain_index(void **state)
{
    fixture_proc_t proc = {0};
    int beta_endpoint = 42;
    proc.endpoint[HERD_ENDPOINT_TAG_BETA] = &beta_endpoint;
    assert_ptr_equal(&beta_endpoint, proc.endpoint[1]);
    assert_true(sizeof(proc) >= sizeof(void *) * HERD_ENDPOINT_SLOT_COUNT);
    assert_true(sizeof(proc) <= sizeof(void *) * (HERD_ENDPOINT_SLOT_COUNT + 1));
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (NULL == f) {
        return NULL;
    }
    static char buf[16384];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strdup(buf);
}

static void test_unbuilt_component_has_no_tag(void **state)
{
    char *text = read_file(HERD_TEST_BUILDDIR "/endpoint_tags/fixture_endpoint_tags.h");
    assert_non_null(text);
    assert_null(strstr(text, "NOBUILD"));
    assert_non_null(strstr(text, "xport-beta"));
    free(text);
}

/* Run the generator; returns its exit status, its stderr in *err and the header in *header. */
static int run_generator(const char *args, char **err, char **header)
{
    char out[128], errfile[128], cmd[1024];
    snprintf(out, sizeof(out), "/tmp/herd-test-tags-%d.h", (int) getpid());
    snprintf(errfile, sizeof(errfile), "/tmp/herd-test-tags-%d.err", (int) getpid());
    unlink(out);
    snprintf(cmd, sizeof(cmd), "sh %s %s %s >/dev/null 2>%s", GENERATOR, out, args, errfile);
    int status = system(cmd);
    *err = read_file(errfile);
    *header = read_file(out);
    unlink(out);
    unlink(errfile);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_duplicate_tag_names_both(void **state)
{
    char *err, *header;
    int rc = run_generator("G yes tcp:btl-tcp ofi:btl-ofi TCP:btl-tcp2", &err, &header);
    assert_int_not_equal(0, rc);
    assert_non_null(strstr(err, "btl-tcp and btl-tcp2"));
    assert_null(header); /* nothing half-written */
    free(err);
}

static void test_bad_identifier(void **state)
{
    char *err, *header;
    int rc = run_generator("G yes 9lives:btl-cat", &err, &header);
    assert_int_not_equal(0, rc);
    assert_non_null(strstr(err, "btl-cat declares endpoint tag '9lives'"));
    free(err);
    free(header);
    rc = run_generator("G yes my-tag:btl-x", &err, &header);
    assert_int_not_equal(0, rc);
    free(err);
    free(header);
}

static void test_no_tags_and_no_dynamic(void **state)
{
    char *err, *header;
    int rc = run_generator("MY_GUARD no", &err, &header);
    assert_int_equal(0, rc);
    assert_non_null(header);
    assert_non_null(strstr(header, "HERD_ENDPOINT_STATIC_COUNT == 0"));
    assert_non_null(strstr(header, "#define HERD_ENDPOINT_DYNAMIC_SLOTS 0"));
    assert_null(strstr(header, "HERD_ENDPOINT_DYNAMIC_INDEX"));
    assert_non_null(strstr(header, "#define HERD_ENDPOINT_NUM_STATIC_TAGS 0\n"));
    assert_non_null(strstr(header, "#define HERD_ENDPOINT_TAG_FOREACH(X)\n"));
    assert_non_null(strstr(header, "#ifndef MY_GUARD"));
    free(err);
    free(header);
}

/* The generated header must compile and its static asserts must hold. */
static void test_generated_header_compiles(void **state)
{
    char *err, *header;
    int rc = run_generator("G yes a:x-a b:x-b c:x-c", &err, &header);
    assert_int_equal(0, rc);
    assert_non_null(header);
    char src[128], cmd[512];
    snprintf(src, sizeof(src), "/tmp/herd-test-tags-%d.c", (int) getpid());
    FILE *f = fopen(src, "w");
    assert_non_null(f);
    /* the count is usable in #if, and the name list expands to one entry per tag */
    fprintf(f, "%s\n_Static_assert(HERD_ENDPOINT_TAG_C == 2, \"c\");\n"
               "_Static_assert(HERD_ENDPOINT_SLOT_COUNT == 4, \"slots\");\n"
               "#if HERD_ENDPOINT_NUM_STATIC_TAGS != 3\n#error count\n#endif\n"
               "#define ONE(tag, name, owner) +1\n"
               "_Static_assert(0 HERD_ENDPOINT_TAG_FOREACH(ONE) == 3, \"names\");\n",
            header);
    assert_non_null(strstr(header, "    X(B, \"b\", \"x-b\") \\\n"));
    assert_non_null(strstr(header, "    X(C, \"c\", \"x-c\")\n"));
    fclose(f);
    snprintf(cmd, sizeof(cmd), "%s -std=c11 -fsyntax-only %s", HERD_TEST_CC, src);
    int status = system(cmd);
    unlink(src);
    assert_true(WIFEXITED(status) && 0 == WEXITSTATUS(status));
    free(err);
    free(header);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_configure_numbering),
        cmocka_unit_test(test_plain_index),
        cmocka_unit_test(test_unbuilt_component_has_no_tag),
        cmocka_unit_test(test_duplicate_tag_names_both),
        cmocka_unit_test(test_bad_identifier),
        cmocka_unit_test(test_no_tags_and_no_dynamic),
        cmocka_unit_test(test_generated_header_compiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
