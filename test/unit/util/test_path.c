/* SPDX-License-Identifier: BSD-3-Clause */
/* opal_path_writable: where a tool may write a file when its work ends, asked before it starts. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/util/path.h"

/* The folder every test works in, made by the group's setup; each test removes what it made. */
static char tmp_dir[] = "/tmp/herd-test-path-XXXXXX";

static int make_folder(void **state)
{
    return NULL == mkdtemp(tmp_dir) ? -1 : 0;
}

static int remove_folder(void **state)
{
    return rmdir(tmp_dir);
}

static char *in_tmp(const char *name)
{
    char *path = NULL;
    assert_true(asprintf(&path, "%s/%s", tmp_dir, name) > 0);
    return path;
}

static void test_new_and_existing_files(void **state)
{
    const char *why = "unset";
    char *fresh = in_tmp("report.json");
    assert_true(opal_path_writable(fresh, &why));
    assert_null(why);

    FILE *f = fopen(fresh, "w");
    assert_non_null(f);
    fclose(f);
    assert_true(opal_path_writable(fresh, &why));
    assert_null(why);
    /* a relative name is in the current folder */
    assert_true(opal_path_writable("relative-name-here.json", NULL));
    assert_int_equal(0, unlink(fresh));
    free(fresh);
}

static void test_refused(void **state)
{
    const char *why = NULL;
    char *missing = in_tmp("no-such-folder/report.json");
    assert_false(opal_path_writable(missing, &why));
    assert_string_equal(why, "its folder does not exist");
    free(missing);

    assert_false(opal_path_writable(tmp_dir, &why));
    assert_string_equal(why, "it is a folder");

    char *file = in_tmp("plain");
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    char *under_file = in_tmp("plain/report.json");
    assert_false(opal_path_writable(under_file, &why));
    assert_non_null(why); /* ENOTDIR's text */
    assert_int_equal(0, unlink(file));
    free(under_file);
    free(file);

    assert_false(opal_path_writable("", &why));
    assert_string_equal(why, "no file name");
    assert_false(opal_path_writable(NULL, NULL));

    if (0 != geteuid()) { /* root may write anywhere */
        char *locked = in_tmp("locked");
        assert_int_equal(0, mkdir(locked, 0500));
        char *inside = in_tmp("locked/report.json");
        assert_false(opal_path_writable(inside, &why));
        assert_int_equal(0, rmdir(locked));
        free(inside);
        free(locked);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_and_existing_files),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, make_folder, remove_folder);
}
