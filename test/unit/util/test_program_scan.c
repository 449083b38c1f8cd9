/* SPDX-License-Identifier: BSD-3-Clause */
/* Which programs can reach a wireup: C-runtime-only programs that start nothing are leaves;
 * shells, programs with other libraries, scripts, unreadable or damaged files are not, and a
 * damaged ELF file never crashes the scan. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/status.h"
#include "opal/util/program_scan.h"

static char tmp_dir[] = "/tmp/herd-test-scan-XXXXXX";

static int setup(void **state)
{
    return NULL == mkdtemp(tmp_dir) ? -1 : 0;
}

static int teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp_dir);
    return system(cmd);
}

/* The file at path, read whole into *data (freed by the caller); its size. */
static size_t slurp(const char *path, unsigned char **data)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(0, fseek(f, 0, SEEK_END));
    long size = ftell(f);
    assert_true(size > 0);
    rewind(f);
    *data = malloc((size_t) size);
    assert_non_null(*data);
    assert_int_equal((size_t) size, fread(*data, 1, (size_t) size, f));
    fclose(f);
    return (size_t) size;
}

static void spill(const char *path, const unsigned char *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(size, fwrite(data, 1, size, f));
    fclose(f);
}

static bool leaf_of(const char *path, char *why, size_t size)
{
    bool leaf = false;
    assert_int_equal(HERD_SUCCESS, opal_program_is_leaf(path, &leaf, why, size));
    return leaf;
}

static void test_system_programs(void **state)
{
    char why[128];
    /* coreutils' true needs libc alone and starts nothing */
    assert_true(leaf_of("/bin/true", why, sizeof(why)));
    /* a shell runs other programs */
    assert_false(leaf_of("/bin/sh", why, sizeof(why)));
    assert_string_equal("imports execve", why);
    /* this test links cmocka and herd's own library (and calls system()) */
    assert_false(leaf_of("/proc/self/exe", why, sizeof(why)));
    assert_true(0 == strncmp(why, "needs ", 6) || 0 == strcmp(why, "imports system"));
    /* no reason asked for */
    bool leaf = false;
    assert_int_equal(HERD_SUCCESS, opal_program_is_leaf("/bin/true", &leaf, NULL, 0));
    assert_true(leaf);
}

static void test_not_elf(void **state)
{
    char path[256], why[128];
    snprintf(path, sizeof(path), "%s/script", tmp_dir);
    spill(path, (const unsigned char *) "#!/bin/sh\nexec mpi_app\n", 23);
    assert_false(leaf_of(path, why, sizeof(why)));
    assert_string_equal("not an ELF file", why);
    snprintf(path, sizeof(path), "%s/empty", tmp_dir);
    spill(path, (const unsigned char *) "", 0);
    assert_false(leaf_of(path, why, sizeof(why)));
    assert_false(leaf_of(tmp_dir, why, sizeof(why))); /* a folder */
    /* unreadable: an error, *leaf untouched */
    bool leaf = true;
    snprintf(path, sizeof(path), "%s/missing", tmp_dir);
    assert_int_equal(HERD_ERR_IN_ERRNO, opal_program_is_leaf(path, &leaf, why, sizeof(why)));
    assert_true(leaf);
}

/* Truncated and damaged copies of a leaf: never a crash, and a truncated one is no leaf. */
static void test_damaged(void **state)
{
    unsigned char *data = NULL, *copy;
    size_t size = slurp("/bin/true", &data);
    char path[256], why[128];
    snprintf(path, sizeof(path), "%s/damaged", tmp_dir);
    copy = malloc(size);
    assert_non_null(copy);
    /* cut before the section headers (at the end of the file): the dynamic symbols are gone */
    for (size_t len = 0; len < size; len += (len < 4096 ? 61 : 4099)) {
        spill(path, data, len);
        assert_false(leaf_of(path, why, sizeof(why)));
    }
    /* random bytes over the headers and tables: whatever the verdict, the scan survives */
    srand(7);
    for (int round = 0; round < 400; ++round) {
        memcpy(copy, data, size);
        for (int k = 0; k < 8; ++k) {
            size_t at = (size_t) rand() % (round % 2 ? size : (size < 4096 ? size : 4096));
            copy[at] = (unsigned char) rand();
        }
        if (round % 5 == 0) {
            memset(copy + (size_t) rand() % 64, 0xff, 8); /* huge offsets in the ELF header */
        }
        spill(path, copy, size);
        bool leaf;
        assert_int_equal(HERD_SUCCESS, opal_program_is_leaf(path, &leaf, why, sizeof(why)));
    }
    free(copy);
    free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_system_programs),
        cmocka_unit_test(test_not_elf),
        cmocka_unit_test(test_damaged),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
