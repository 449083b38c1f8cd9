/* SPDX-License-Identifier: BSD-3-Clause */
/* The PMI-1 decoder and PMI_process_mapping (orte/mca/wireup/pmi1/wireup_pmi1.h): commands and
 * spawn blocks as MPICH sends them, every malformed form refused, framing of partial input, and
 * the process mapping of block, cyclic and uneven maps. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/status.h"
#include "orte/mca/wireup/pmi1/wireup_pmi1.h"

static void parse_ok(const char *text, wireup_pmi1_msg_t *m)
{
    long n = wireup_pmi1_frame(text, strlen(text));
    assert_int_equal(n, (long) strlen(text));
    assert_int_equal(wireup_pmi1_parse(text, (size_t) n, m), HERD_SUCCESS);
}

static void test_commands(void **state)
{
    wireup_pmi1_msg_t m;
    parse_ok("cmd=init pmi_version=1 pmi_subversion=1\n", &m);
    assert_string_equal(m.cmd, "init");
    assert_false(m.multi);
    assert_string_equal(wireup_pmi1_get(&m, "pmi_version"), "1");
    assert_string_equal(wireup_pmi1_get(&m, "pmi_subversion"), "1");
    assert_null(wireup_pmi1_get(&m, "nope"));
    wireup_pmi1_msg_free(&m);
    parse_ok("cmd=put kvsname=kvs_1 key=-bcast-1-0 value=2F6465762F\n", &m);
    assert_string_equal(m.cmd, "put");
    assert_string_equal(wireup_pmi1_get(&m, "value"), "2F6465762F");
    wireup_pmi1_msg_free(&m);
    /* a value may hold '=' (after the first) and be empty */
    parse_ok("cmd=put kvsname=k key=a value=x=y=z\n", &m);
    assert_string_equal(wireup_pmi1_get(&m, "value"), "x=y=z");
    wireup_pmi1_msg_free(&m);
    parse_ok("cmd=put kvsname=k key=a value=\n", &m);
    assert_string_equal(wireup_pmi1_get(&m, "value"), "");
    wireup_pmi1_msg_free(&m);
    parse_ok("cmd=barrier_in\n", &m);
    assert_int_equal(m.num_pairs, 0);
    wireup_pmi1_msg_free(&m);
}

static void test_spawn_block(void **state)
{
    const char *block = "mcmd=spawn\nnprocs=2\nexecname=/bin/prog\ntotspawns=1\nspawnssofar=1\n"
                        "argcnt=2\narg1=first arg with spaces\narg2=x=y\npreput_num=1\n"
                        "preput_key_0=PARENT_ROOT_PORT_NAME\npreput_val_0=tag#0$port#1$\n"
                        "info_num=0\nendcmd\n";
    wireup_pmi1_msg_t m;
    /* every prefix of the block waits for more */
    for (size_t cut = 1; cut < strlen(block); ++cut) {
        assert_int_equal(wireup_pmi1_frame(block, cut), 0);
    }
    parse_ok(block, &m);
    assert_true(m.multi);
    assert_string_equal(m.cmd, "spawn");
    assert_string_equal(wireup_pmi1_get(&m, "arg1"), "first arg with spaces");
    assert_string_equal(wireup_pmi1_get(&m, "arg2"), "x=y");
    assert_string_equal(wireup_pmi1_get(&m, "preput_val_0"), "tag#0$port#1$");
    wireup_pmi1_msg_free(&m);
}

static void test_malformed(void **state)
{
    const char *bad[] = {
        "\n",                          /* nothing */
        "put kvsname=x\n",             /* no cmd= first */
        "cmd= key=v\n",                /* an empty command */
        "cmd=put keyonly\n",           /* a token without '=' */
        "cmd=put =v\n",                /* an empty key */
        "mcmd=spawn\nnprocs\nendcmd\n", /* a line without '=' */
        "mcmd=\nendcmd\n",             /* an empty command */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        wireup_pmi1_msg_t m;
        long n = wireup_pmi1_frame(bad[i], strlen(bad[i]));
        assert_true(n > 0);
        assert_int_equal(wireup_pmi1_parse(bad[i], (size_t) n, &m), HERD_ERR_UNPACK_FAILURE);
    }
    /* a NUL byte inside */
    const char nul[] = "cmd=put key=a\0b value=c\n";
    wireup_pmi1_msg_t m;
    assert_int_equal(wireup_pmi1_parse(nul, sizeof(nul) - 1, &m), HERD_ERR_UNPACK_FAILURE);
    /* a line that never ends, and a block that never ends, are refused past their limits */
    size_t big = WIREUP_PMI1_MAX_BLOCK + 16;
    char *line = malloc(big);
    memset(line, 'a', big);
    memcpy(line, "cmd=put value=", 14);
    assert_int_equal(wireup_pmi1_frame(line, WIREUP_PMI1_MAX_LINE), 0);
    assert_true(wireup_pmi1_frame(line, WIREUP_PMI1_MAX_LINE + 1) < 0);
    memcpy(line, "mcmd=spawn\n", 11);
    assert_int_equal(wireup_pmi1_frame(line, WIREUP_PMI1_MAX_LINE + 1), 0);
    assert_true(wireup_pmi1_frame(line, big) < 0);
    free(line);
    /* too many pairs */
    size_t n = 16 + 8 * (WIREUP_PMI1_MAX_PAIRS + 1);
    char *many = malloc(n);
    size_t used = (size_t) sprintf(many, "cmd=x");
    for (unsigned i = 0; i <= WIREUP_PMI1_MAX_PAIRS && used + 8 < n; ++i) {
        used += (size_t) sprintf(many + used, " k%u=v", i % 10);
    }
    many[used++] = '\n';
    assert_int_equal(wireup_pmi1_parse(many, used, &m), HERD_ERR_UNPACK_FAILURE);
    free(many);
}

static void mapping(const unsigned *nodes, size_t n, const char *want)
{
    char buf[256];
    assert_int_equal(wireup_pmi1_process_mapping(nodes, n, buf, sizeof(buf)), HERD_SUCCESS);
    assert_string_equal(buf, want);
}

static void test_process_mapping(void **state)
{
    unsigned one_node[] = {0, 0, 0, 0};
    mapping(one_node, 4, "(vector,(0,1,4))");
    unsigned block[] = {0, 0, 1, 1, 2, 2};
    mapping(block, 6, "(vector,(0,3,2))");
    unsigned cyclic[] = {0, 1, 2, 0, 1, 2, 0, 1};
    mapping(cyclic, 8, "(vector,(0,3,1),(0,3,1),(0,2,1))");
    unsigned uneven[] = {0, 0, 0, 1, 2, 2};
    mapping(uneven, 6, "(vector,(0,1,3),(1,1,1),(2,1,2))");
    unsigned single[] = {0};
    mapping(single, 1, "(vector,(0,1,1))");
    /* too long for the buffer: said, not truncated */
    unsigned *alternating = malloc(1000 * sizeof(unsigned));
    for (unsigned i = 0; i < 1000; ++i) {
        alternating[i] = (i * 7) % 13;
    }
    char small[64];
    assert_int_equal(wireup_pmi1_process_mapping(alternating, 1000, small, sizeof(small)),
                     HERD_ERR_OUT_OF_RESOURCE);
    free(alternating);
}

static void test_value_ok(void **state)
{
    assert_true(wireup_pmi1_value_ok("abc", 3, 1024));
    assert_false(wireup_pmi1_value_ok("a c", 3, 1024));
    assert_false(wireup_pmi1_value_ok("a\nc", 3, 1024));
    assert_false(wireup_pmi1_value_ok("abcd", 4, 3));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commands),        cmocka_unit_test(test_spawn_block),
        cmocka_unit_test(test_malformed),       cmocka_unit_test(test_process_mapping),
        cmocka_unit_test(test_value_ok),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
