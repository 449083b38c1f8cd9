/* SPDX-License-Identifier: BSD-3-Clause */
/* The wireup framework base: its variables, the helpers modules prepare a process with
 * (environment, inherited descriptors), and the module test bed the component tests use. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "opal/mca/mca.h"
#include "opal/util/argv.h"
#include "orte/mca/wireup/wireup.h"

static void test_child_setenv(void **state)
{
    char **env = NULL;
    orte_wireup_child_t child = {.env = &env};
    assert_int_equal(opal_argv_append(&env, "A=1"), HERD_SUCCESS);
    assert_int_equal(orte_wireup_child_setenv(&child, "B", "two"), HERD_SUCCESS);
    assert_int_equal(orte_wireup_child_setenv(&child, "A", "replaced"), HERD_SUCCESS);
    assert_int_equal(orte_wireup_child_setenv(&child, "AB", "x"), HERD_SUCCESS);
    assert_int_equal(opal_argv_count(env), 3);
    assert_string_equal(env[0], "A=replaced");
    assert_string_equal(env[1], "B=two");
    assert_string_equal(env[2], "AB=x");
    assert_int_equal(orte_wireup_child_setenv(&child, "C=D", "x"), HERD_ERR_BAD_PARAM);
    assert_int_equal(orte_wireup_child_setenv(&child, "", "x"), HERD_ERR_BAD_PARAM);
    assert_int_equal(orte_wireup_child_setenv(&child, "C", NULL), HERD_ERR_BAD_PARAM);
    opal_argv_free(env);
}

static void test_child_add_fd(void **state)
{
    orte_wireup_child_t child = {0};
    int number = -1;
    for (int i = 0; i < ORTE_WIREUP_MAX_CHILD_FDS; ++i) {
        assert_int_equal(orte_wireup_child_add_fd(&child, 10 + i, &number), HERD_SUCCESS);
        assert_int_equal(number, 3 + i);
    }
    assert_int_equal(orte_wireup_child_add_fd(&child, 20, &number), HERD_ERR_OUT_OF_RESOURCE);
    assert_int_equal(orte_wireup_child_add_fd(&child, -1, &number), HERD_ERR_BAD_PARAM);
}

/* (The framework's open initializes the variable system, which reads the environment then.) */
static void test_get_timeout_variable(void **state)
{
    setenv("HERD_MCA_wireup_base_get_timeout", "7", 1);
    setenv("HERD_MCA_wireup", "nothing-here", 1);
    /* an unknown name in the selection is refused */
    assert_int_not_equal(orte_wireup_base_open(), HERD_SUCCESS);
    unsetenv("HERD_MCA_wireup");
    assert_int_equal(orte_wireup_base_open(), HERD_SUCCESS);
    assert_int_equal(orte_wireup_base_get_timeout_ms(), 7000);
    size_t n = 0;
    assert_non_null(orte_wireup_base_modules(&n));
    assert_true(n >= 2); /* native and pmi1 are always built */
    orte_wireup_base_close();
    /* a negative timeout is refused, naming the variable */
    setenv("HERD_MCA_wireup_base_get_timeout", "-1", 1);
    assert_int_not_equal(orte_wireup_base_open(), HERD_SUCCESS);
    unsetenv("HERD_MCA_wireup_base_get_timeout");
}

/* The test bed starts a real child with the HERD_* numbers and a descriptor it inherits. */
static void test_harness_child(void **state)
{
    wireup_harness_t h;
    assert_int_equal(wireup_harness_init(&h, 3), HERD_SUCCESS);
    assert_int_equal(h.ns.num_procs, 3);
    opal_jobdb_proc_view_t view;
    assert_int_equal(opal_jobdb_get_proc(h.db, 2, &view), HERD_SUCCESS);
    assert_int_equal(view.local_rank, 2);
    pid_t pid;
    char *argv[] = {"/bin/sh", "-c",
                    "test \"$HERD_RANK\" = 2 && test \"$HERD_SIZE\" = 3 && "
                    "test \"$HERD_LOCAL_SIZE\" = 3",
                    NULL};
    assert_int_equal(wireup_harness_start(&h, NULL, NULL, 2, argv, &pid), HERD_SUCCESS);
    int status = -1;
    bool unfinalized = true;
    assert_int_equal(wireup_harness_wait(&h, NULL, NULL, 2, pid, 10, &status, &unfinalized),
                     HERD_SUCCESS);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_false(unfinalized);
    char folder[sizeof(h.tmpdir)];
    char segment[sizeof(h.db_name) + 16];
    strcpy(folder, h.tmpdir);
    snprintf(segment, sizeof(segment), "/dev/shm%s", h.db_name);
    assert_int_equal(access(folder, F_OK), 0);
    wireup_harness_fini(&h);
    assert_int_not_equal(access(folder, F_OK), 0);
    assert_int_not_equal(access(segment, F_OK), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_child_setenv),
        cmocka_unit_test(test_child_add_fd),
        cmocka_unit_test(test_get_timeout_variable),
        cmocka_unit_test(test_harness_child),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
