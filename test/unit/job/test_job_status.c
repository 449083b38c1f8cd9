/* SPDX-License-Identifier: BSD-3-Clause */
/* The tools' wire formats: a job's process table (orte_job_status_t, herdrun's answer to
 * herd-ps and PMIx tools) and the DVM root's list of nodes and jobs (orte_dvm_ps_t): what is
 * packed comes back, and every truncation and corruption is refused without a crash. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "orte/runtime/dvm_tool.h"
#include "orte/runtime/job_status.h"

static void pack_status(opal_buffer_t *b)
{
    uint32_t nodes[] = {0, 2}, node_procs[] = {3, 1};
    char *programs[] = {"/bin/sleep", "/bin/true"};
    orte_job_proc_status_t procs[] = {
        {.rank = 0, .node = 0, .app = 0, .pid = 100, .state = ORTE_JOB_PROC_RUNNING},
        {.rank = 1, .node = 0, .app = 0, .pid = 101, .state = ORTE_JOB_PROC_EXITED, .status = 3},
        {.rank = 2, .node = 0, .app = 1, .pid = 0, .state = ORTE_JOB_PROC_STARTING},
        {.rank = 3, .node = 2, .app = 1, .pid = 103, .state = ORTE_JOB_PROC_UNKNOWN},
    };
    orte_job_status_t st = {.state = "running",
                            .num_procs = 4,
                            .num_nodes = 2,
                            .nodes = nodes,
                            .node_procs = node_procs,
                            .programs = programs,
                            .num_apps = 2,
                            .procs = procs,
                            .num_table = 4};
    assert_int_equal(orte_job_status_pack(b, &st), HERD_SUCCESS);
}

static void test_status_roundtrip(void **state)
{
    opal_buffer_t b;
    opal_buffer_init(&b);
    pack_status(&b);
    orte_job_status_t *st = NULL;
    assert_int_equal(orte_job_status_unpack(&b, &st), HERD_SUCCESS);
    assert_string_equal(st->state, "running");
    assert_int_equal(st->num_procs, 4);
    assert_int_equal(st->num_nodes, 2);
    assert_int_equal(st->nodes[1], 2);
    assert_int_equal(st->node_procs[0], 3);
    assert_string_equal(st->programs[1], "/bin/true");
    assert_int_equal(st->num_table, 4);
    assert_int_equal(st->procs[1].status, 3);
    assert_int_equal(st->procs[3].pid, 103);
    assert_string_equal(orte_job_proc_state_name(st->procs[1].state), "exited");
    assert_string_equal(orte_job_proc_state_name(200), "unknown");
    orte_job_status_free(st);
    opal_buffer_destruct(&b);
}

/* Every prefix of a valid message, and each byte flipped: refused or read, never a crash (the
 * sanitizers and valgrind see the rest). */
static void test_status_malformed(void **state)
{
    opal_buffer_t b;
    opal_buffer_init(&b);
    pack_status(&b);
    size_t len = b.used;
    uint8_t *copy = malloc(len);
    assert_non_null(copy);
    memcpy(copy, b.base, len);
    for (size_t cut = 0; cut < len; ++cut) {
        opal_buffer_t t;
        orte_job_status_t *st = NULL;
        opal_buffer_init(&t);
        assert_int_equal(opal_buffer_load(&t, copy, cut), HERD_SUCCESS);
        assert_int_not_equal(orte_job_status_unpack(&t, &st), HERD_SUCCESS);
        assert_null(st);
        opal_buffer_destruct(&t);
    }
    for (size_t i = 0; i < len; ++i) {
        opal_buffer_t t;
        orte_job_status_t *st = NULL;
        uint8_t saved = copy[i];
        copy[i] ^= 0xff;
        opal_buffer_init(&t);
        assert_int_equal(opal_buffer_load(&t, copy, len), HERD_SUCCESS);
        if (HERD_SUCCESS == orte_job_status_unpack(&t, &st)) {
            orte_job_status_free(st);
        }
        opal_buffer_destruct(&t);
        copy[i] = saved;
    }
    free(copy);
    opal_buffer_destruct(&b);
}

static void pack_ps(opal_buffer_t *b)
{
    uint32_t job_nodes[] = {1};
    orte_dvm_ps_node_t nodes[] = {{.name = "n1", .slots = 4, .up = true},
                                  {.name = "n2", .slots = 4, .up = false}};
    orte_dvm_ps_job_t jobs[] = {{.jobid = "abc.1",
                                 .uid = 1000,
                                 .pid = 42,
                                 .start = 1700000000,
                                 .command = "sleep 30",
                                 .np = 2,
                                 .num_nodes = 1,
                                 .nodes = job_nodes}};
    orte_dvm_ps_t ps = {.id = "abc",
                        .now = 1700000010,
                        .nodes = nodes,
                        .num_nodes = 2,
                        .jobs = jobs,
                        .num_jobs = 1};
    assert_int_equal(orte_dvm_ps_pack(b, &ps), HERD_SUCCESS);
}

static void test_ps_roundtrip_and_malformed(void **state)
{
    opal_buffer_t b;
    opal_buffer_init(&b);
    pack_ps(&b);
    size_t len = b.used;
    orte_dvm_ps_t *ps = NULL;
    assert_int_equal(orte_dvm_ps_unpack(&b, &ps), HERD_SUCCESS);
    assert_string_equal(ps->id, "abc");
    assert_int_equal(ps->num_nodes, 2);
    assert_false(ps->nodes[1].up);
    assert_int_equal(ps->num_jobs, 1);
    assert_string_equal(ps->jobs[0].command, "sleep 30");
    assert_int_equal(ps->jobs[0].nodes[0], 1);
    assert_ptr_equal(orte_dvm_ps_find_job(ps, "1"), &ps->jobs[0]);
    assert_ptr_equal(orte_dvm_ps_find_job(ps, "abc.1"), &ps->jobs[0]);
    assert_null(orte_dvm_ps_find_job(ps, "2"));
    assert_null(orte_dvm_ps_find_job(ps, "abc."));
    orte_dvm_ps_free(ps);
    for (size_t cut = 0; cut < len; ++cut) {
        opal_buffer_t t;
        orte_dvm_ps_t *bad = NULL;
        opal_buffer_init(&t);
        assert_int_equal(opal_buffer_load(&t, b.base, cut), HERD_SUCCESS);
        assert_int_not_equal(orte_dvm_ps_unpack(&t, &bad), HERD_SUCCESS);
        assert_null(bad);
        opal_buffer_destruct(&t);
    }
    opal_buffer_destruct(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_roundtrip),
        cmocka_unit_test(test_status_malformed),
        cmocka_unit_test(test_ps_roundtrip_and_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
