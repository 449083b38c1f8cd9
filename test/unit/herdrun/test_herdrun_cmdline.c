/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of herdrun's command line: app contexts, per-app and job-wide options, the values
 * they give the job description, and the messages a user sees for each mistake. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/base/mca_var.h"
#include "opal/util/argv.h"
#include "orte/mca/ras/base/base.h"
#include "orte/mca/iof/iof.h"
#include "orte/tools/herdrun/herdrun_cmdline.h"
#include "support/capture.h"

/* Environment variables the parser sets (--mca) or the tests use; cleared around each test. */
static const char *const test_variables[] = {
    "HERD_MCA_foo_bar",
    "HERD_MCA_odls_base_verbose",
    "HERD_MCA_ras_base_host",
    "HERD_MCA_ras_base_hostfile",
    NULL,
};

static char temp_dir[64];

static void clear_variables(void)
{
    for (size_t i = 0; NULL != test_variables[i]; i++) {
        unsetenv(test_variables[i]);
    }
}

static int setup(void **state)
{
    clear_variables();
    return HERD_SUCCESS == opal_mca_var_init() ? 0 : -1;
}

static int teardown(void **state)
{
    opal_mca_var_finalize();
    clear_variables();
    return 0;
}

static int group_setup(void **state)
{
    snprintf(temp_dir, sizeof(temp_dir), "/tmp/herd-test-herdrun-XXXXXX");
    return NULL != mkdtemp(temp_dir) ? 0 : -1;
}

static int group_teardown(void **state)
{
    return rmdir(temp_dir);
}

/* Writes text to a file in the test folder; returns its path (malloc'd; the caller removes the
 * file and frees the path). */
static char *write_file(const char *name, const char *text)
{
    size_t size = strlen(temp_dir) + strlen(name) + 2;
    char *path = malloc(size);
    FILE *file;

    assert_non_null(path);
    snprintf(path, size, "%s/%s", temp_dir, name);
    file = fopen(path, "w");
    assert_non_null(file);
    assert_int_equal(fputs(text, file) >= 0, 1);
    assert_int_equal(fclose(file), 0);
    return path;
}

static void remove_file(char *path)
{
    unlink(path);
    free(path);
}

/* Parse argv (argv[0] included) with stderr captured into *errors (caller frees). */
static int parse_argv(char **argv, char *const env[], herdrun_options_t *opts, char **errors)
{
    herd_test_capture_t capture;
    int rc;

    memset(opts, 0, sizeof(*opts));
    herd_test_capture_start(&capture);
    rc = herdrun_cmdline_parse((int) opal_argv_count(argv), argv, env, opts);
    *errors = herd_test_capture_stop(&capture);
    return rc;
}

/* Parse a command line given as space-separated words ("herdrun" is added as argv[0]). */
static int parse_words(const char *words, char *const env[], herdrun_options_t *opts, char **errors)
{
    char **argv = opal_argv_split(words, ' ');
    int rc;

    assert_non_null(argv);
    assert_int_equal(opal_argv_prepend(&argv, "herdrun"), HERD_SUCCESS);
    rc = parse_argv(argv, env, opts, errors);
    opal_argv_free(argv);
    return rc;
}

/* A line that must parse without a word on stderr. */
static void parse_ok(const char *words, char *const env[], herdrun_options_t *opts)
{
    char *errors;
    int rc = parse_words(words, env, opts, &errors);

    if (HERD_SUCCESS != rc || '\0' != errors[0]) {
        fail_msg("parsing '%s' gave %d and printed: %s", words, rc, errors);
    }
    free(errors);
}

/* A line that must fail, leaving the options untouched, with a message holding each needle
 * (a NULL-terminated list). */
static void parse_fails(const char *words, char *const env[], ...)
{
    herdrun_options_t opts;
    char *errors;
    const char *needle;
    va_list ap;
    int rc = parse_words(words, env, &opts, &errors);

    if (HERD_ERR_SILENT != rc) {
        fail_msg("parsing '%s' gave %d (expected HERD_ERR_SILENT); printed: %s", words, rc, errors);
    }
    assert_null(opts.spec);
    assert_null(opts.dvm_uri);
    assert_null(opts.report_usage_file);
    va_start(ap, env);
    while (NULL != (needle = va_arg(ap, const char *))) {
        assert_contains(errors, needle);
    }
    va_end(ap);
    free(errors);
}

/* Assert a NULL-terminated vector holds exactly the space-separated words of expected. */
static void assert_argv(char **argv, const char *expected)
{
    char *joined;

    assert_non_null(argv);
    joined = opal_argv_join(argv, ' ');
    assert_non_null(joined);
    assert_string_equal(joined, expected);
    free(joined);
}

static char *current_directory(void)
{
    char *cwd = getcwd(NULL, 0);

    assert_non_null(cwd);
    return cwd;
}

/* ------------------------------------------------------------------------------------------ */

static void test_spmd(void **state)
{
    herdrun_options_t opts;
    char *cwd = current_directory();
    const orte_job_spec_t *spec;

    parse_ok("-n 4 ./a.out arg1 arg2", NULL, &opts);
    spec = opts.spec;
    assert_non_null(spec);
    assert_int_equal(spec->num_apps, 1);
    assert_int_equal(spec->apps[0].np, 4);
    assert_argv(spec->apps[0].argv, "./a.out arg1 arg2");
    assert_null(spec->apps[0].env);
    assert_string_equal(spec->apps[0].cwd, cwd);
    assert_null(spec->apps[0].map_by);
    assert_null(spec->apps[0].rank_by);
    assert_null(spec->apps[0].bind_to);
    assert_null(spec->apps[0].seq_hosts);
    assert_null(spec->hosts);
    assert_null(spec->mca);
    assert_null(spec->jobid);
    assert_null(spec->sink_uri);
    assert_int_equal(spec->flags, 0);
    assert_int_equal(spec->timeout, 0);
    assert_false(spec->oversubscribe);
    assert_false(spec->nooversubscribe);
    assert_true(spec->kill_grace_ms < 0);
    assert_null(opts.dvm_uri);
    assert_null(opts.report_usage_file);
    assert_int_equal(opts.verbose, 0);
    assert_false(opts.help);
    assert_false(opts.version);
    herdrun_options_destruct(&opts);
    assert_null(opts.spec);
    free(cwd);
}

static void test_np_not_given(void **state)
{
    herdrun_options_t opts;

    parse_ok("./a.out", NULL, &opts);
    assert_int_equal(opts.spec->apps[0].np, 0);
    assert_argv(opts.spec->apps[0].argv, "./a.out");
    herdrun_options_destruct(&opts);
}

static void test_np_spellings(void **state)
{
    const char *lines[] = {"-np 3 ./a",  "--np 3 ./a", "-n 3 ./a",     "-n3 ./a",
                           "--np=3 ./a", "-np=3 ./a",  "-n 3 -n 3 ./a"};

    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        herdrun_options_t opts;

        parse_ok(lines[i], NULL, &opts);
        assert_int_equal(opts.spec->apps[0].np, 3);
        assert_argv(opts.spec->apps[0].argv, "./a");
        herdrun_options_destruct(&opts);
    }
}

static void test_mpmd_three_contexts(void **state)
{
    char *env[] = {"HOME=/home/u", "B=from-env", NULL};
    herdrun_options_t opts;
    char *cwd = current_directory();
    char expected[4096];
    const orte_job_spec_t *spec;

    parse_ok("-n 1 -x A=1 --wdir /tmp ./manager m1 : -np 2 -x B ./worker w1 w2 : "
             "--np 3 --wdir sub ./other",
             env, &opts);
    spec = opts.spec;
    assert_int_equal(spec->num_apps, 3);

    assert_int_equal(spec->apps[0].np, 1);
    assert_argv(spec->apps[0].argv, "./manager m1");
    assert_argv(spec->apps[0].env, "A=1");
    assert_string_equal(spec->apps[0].cwd, "/tmp");

    assert_int_equal(spec->apps[1].np, 2);
    assert_argv(spec->apps[1].argv, "./worker w1 w2");
    assert_argv(spec->apps[1].env, "B=from-env");
    assert_string_equal(spec->apps[1].cwd, cwd);

    assert_int_equal(spec->apps[2].np, 3);
    assert_argv(spec->apps[2].argv, "./other");
    assert_null(spec->apps[2].env);
    snprintf(expected, sizeof(expected), "%s/sub", cwd);
    assert_string_equal(spec->apps[2].cwd, expected);
    herdrun_options_destruct(&opts);
    free(cwd);
}

static void test_x_from_env_and_value(void **state)
{
    char *env[] = {"FOOBAR=no", "FOO=hello world", "EMPTY=", NULL};
    herdrun_options_t opts;

    parse_ok("-x FOO -x BAR=baz=qux -x EMPTY -x A=1 -x A=2 ./a", env, &opts);
    /* a repeated name keeps its place and takes the last value */
    assert_argv(opts.spec->apps[0].env, "FOO=hello world BAR=baz=qux EMPTY= A=2");
    herdrun_options_destruct(&opts);
}

static void test_x_unset(void **state)
{
    char *env[] = {"NOPEX=1", NULL};

    parse_fails("-x NOPE ./a", env, "-x NOPE: NOPE is not set", "-x NOPE=VALUE", NULL);
    parse_fails("-x NOPE ./a", NULL, "NOPE is not set", NULL);
    parse_fails("-x =value ./a", NULL, "no variable name", NULL);
}

static void test_program_args_look_like_options(void **state)
{
    herdrun_options_t opts;

    parse_ok("-n 2 ./a.out -n 5 --bogus -x Y --help : -n 1 ./b -V --mca x y", NULL, &opts);
    assert_false(opts.help);
    assert_false(opts.version);
    assert_int_equal(opts.spec->apps[0].np, 2);
    assert_argv(opts.spec->apps[0].argv, "./a.out -n 5 --bogus -x Y --help");
    assert_null(opts.spec->apps[0].env);
    assert_int_equal(opts.spec->apps[1].np, 1);
    assert_argv(opts.spec->apps[1].argv, "./b -V --mca x y");
    assert_null(opts.spec->mca);
    herdrun_options_destruct(&opts);

    /* "--" ends the options, so even a program whose name starts with '-' can be run */
    parse_ok("-n 2 -- -prog -n 3", NULL, &opts);
    assert_int_equal(opts.spec->apps[0].np, 2);
    assert_argv(opts.spec->apps[0].argv, "-prog -n 3");
    herdrun_options_destruct(&opts);
}

static void test_global_options_in_second_context(void **state)
{
    herdrun_options_t opts;
    const orte_job_spec_t *spec;

    parse_ok("-n 1 ./a : --map-by node --rank-by slot --bind-to core --display-map "
             "--report-bindings --explain --do-not-launch -H n1,n2 --oversubscribe "
             "--timeout 30 --mca foo_bar 7 -n 2 ./b",
             NULL, &opts);
    spec = opts.spec;
    assert_int_equal(spec->num_apps, 2);
    for (uint32_t i = 0; i < spec->num_apps; i++) {
        assert_string_equal(spec->apps[i].map_by, "node");
        assert_string_equal(spec->apps[i].rank_by, "slot");
        assert_string_equal(spec->apps[i].bind_to, "core");
    }
    assert_int_equal(spec->apps[0].np, 1);
    assert_int_equal(spec->apps[1].np, 2);
    assert_int_equal(spec->flags, ORTE_JOB_FLAG_DISPLAY_MAP | ORTE_JOB_FLAG_REPORT_BINDINGS |
                                      ORTE_JOB_FLAG_EXPLAIN | ORTE_JOB_FLAG_DO_NOT_LAUNCH);
    assert_true(spec->oversubscribe);
    assert_int_equal(spec->timeout, 30);
    assert_argv(spec->mca, "HERD_MCA_foo_bar=7");
    assert_non_null(getenv("HERD_MCA_foo_bar"));
    assert_string_equal(getenv("HERD_MCA_foo_bar"), "7");
    /* without --dvm-uri the hosts are the allocation's: the ras variable, not spec->hosts */
    assert_null(spec->hosts);
    assert_int_equal(orte_ras_base_register(), HERD_SUCCESS);
    assert_string_equal(orte_ras_base_host_list(), "n1,n2");
    assert_null(orte_ras_base_hostfile());
    herdrun_options_destruct(&opts);
}

static void test_global_option_repeated(void **state)
{
    herdrun_options_t opts;

    /* the same value again is harmless, in any context */
    parse_ok("--map-by node --timeout 5 ./a : --map-by node --timeout 5 --mca foo_bar 1 "
             "--mca foo_bar 1 ./b",
             NULL, &opts);
    assert_string_equal(opts.spec->apps[1].map_by, "node");
    assert_argv(opts.spec->mca, "HERD_MCA_foo_bar=1");
    herdrun_options_destruct(&opts);
    unsetenv("HERD_MCA_foo_bar");

    parse_fails("--map-by node ./a : --map-by core ./b", NULL,
                "--map-by is given twice, with different values (\"node\" and \"core\")",
                "in app context 2 of 2: --map-by core ./b", NULL);
    parse_fails("-H a -H b ./a", NULL, "--host is given twice", NULL);
    parse_fails("--mca foo_bar 1 ./a : --mca foo_bar 2 ./b", NULL,
                "--mca foo_bar is given twice, with different values (\"1\" and \"2\")", NULL);
    assert_null(getenv("HERD_MCA_foo_bar"));
}

static void test_app_option_repeated(void **state)
{
    parse_fails("-n 2 -n 3 ./a", NULL, "-n/--np is given twice in one app context", "\"2\"",
                "\"3\"", NULL);
    parse_fails("./a : --wdir /x --wdir /y ./b", NULL, "--wdir is given twice",
                "app context 2 of 2", NULL);
}

static void test_npernode(void **state)
{
    herdrun_options_t opts;

    parse_ok("--npernode 2 ./a : --map-by core --bind-to none -n 3 ./b : --npernode 1 -n 4 ./c",
             NULL, &opts);
    assert_string_equal(opts.spec->apps[0].map_by, "ppr:2:node");
    assert_int_equal(opts.spec->apps[0].np, 0);
    assert_string_equal(opts.spec->apps[0].bind_to, "none");
    assert_string_equal(opts.spec->apps[1].map_by, "core");
    assert_string_equal(opts.spec->apps[2].map_by, "ppr:1:node");
    assert_int_equal(opts.spec->apps[2].np, 4);
    herdrun_options_destruct(&opts);

    parse_fails("--npernode 0 ./a", NULL, "\"0\" is not a number of processes per node", NULL);
    parse_fails("--npernode two ./a", NULL, "--npernode", NULL);
}

static void test_policies_valid(void **state)
{
    herdrun_options_t opts;

    parse_ok("--map-by ppr:2:package:PE=2 --rank-by slot --bind-to socket -n 4 ./a", NULL, &opts);
    assert_string_equal(opts.spec->apps[0].map_by, "ppr:2:package:PE=2");
    assert_string_equal(opts.spec->apps[0].rank_by, "slot");
    assert_string_equal(opts.spec->apps[0].bind_to, "socket");
    herdrun_options_destruct(&opts);

    parse_ok("--map-by CORE:SPAN,OVERSUBSCRIBE ./a", NULL, &opts);
    assert_string_equal(opts.spec->apps[0].map_by, "CORE:SPAN,OVERSUBSCRIBE");
    assert_null(opts.spec->apps[0].rank_by);
    assert_null(opts.spec->apps[0].bind_to);
    herdrun_options_destruct(&opts);
}

static void test_map_by_invalid(void **state)
{
    parse_fails("--map-by bogus ./a", NULL, "--map-by", "bogus", NULL);
    parse_fails("--map-by core:BOGUS ./a", NULL, "--map-by", "BOGUS", NULL);
    parse_fails("./a : --map-by ppr:0:node ./b", NULL, "--map-by", NULL);
}

static void test_rank_by_and_bind_to_invalid(void **state)
{
    parse_fails("--rank-by diagonal ./a", NULL, "--rank-by", "diagonal", NULL);
    parse_fails("--bind-to board ./a", NULL, "--bind-to", "board", NULL);
}

static void test_report_usage(void **state)
{
    herdrun_options_t opts;

    parse_ok("--report-usage ./a", NULL, &opts);
    assert_true(opts.spec->flags & ORTE_JOB_FLAG_REPORT_USAGE);
    assert_null(opts.report_usage_file);
    herdrun_options_destruct(&opts);

    /* the file is only taken after '=': the next word is the program */
    parse_ok("--report-usage=usage.json ./a : --report-usage ./b", NULL, &opts);
    assert_true(opts.spec->flags & ORTE_JOB_FLAG_REPORT_USAGE);
    assert_string_equal(opts.report_usage_file, "usage.json");
    assert_int_equal(opts.spec->num_apps, 2);
    herdrun_options_destruct(&opts);

    parse_fails("--report-usage= ./a", NULL, "--report-usage= names no file", NULL);
    parse_fails("--report-usage=a.json --report-usage=b.json ./a", NULL,
                "--report-usage is given twice", NULL);
    /* written at the job's end: a place it cannot go is said before the job starts */
    parse_fails("--report-usage=/nonexistent-herd-folder/usage.json ./a", NULL,
                "--report-usage=/nonexistent-herd-folder/usage.json", "its folder does not exist",
                "the job was not started", NULL);
    parse_fails("--report-usage=/ ./a", NULL, "it is a folder", NULL);
    parse_fails("--report-usage=/etc/hostname/usage.json ./a", NULL, "Not a directory", NULL);
}

static void test_verbose(void **state)
{
    herdrun_options_t opts;

    parse_ok("./a", NULL, &opts);
    assert_int_equal(opts.verbose, 0);
    assert_false(opts.spec->flags & ORTE_JOB_FLAG_VERBOSE);
    herdrun_options_destruct(&opts);

    parse_ok("-v --verbose ./a : -v ./b -v", NULL, &opts);
    assert_int_equal(opts.verbose, 3);
    assert_true(opts.spec->flags & ORTE_JOB_FLAG_VERBOSE);
    assert_argv(opts.spec->apps[1].argv, "./b -v");
    herdrun_options_destruct(&opts);
}

static void test_timeout(void **state)
{
    const char *bad[] = {"0", "-5", "abc", "1.5", "10s", "99999999999", "2147483648", "+3"};
    herdrun_options_t opts;

    parse_ok("--timeout 2147483647 ./a", NULL, &opts);
    assert_int_equal(opts.spec->timeout, 2147483647u);
    herdrun_options_destruct(&opts);

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char line[128];
        char needle[128];

        snprintf(line, sizeof(line), "--timeout %s ./a", bad[i]);
        snprintf(needle, sizeof(needle), "\"%s\" is not a --timeout", bad[i]);
        parse_fails(line, NULL, needle, "from 1 to 2147483647", NULL);
    }
}

/* The I/O options: --stdin's values, flags, --output-filename with and without :nocopy. */
static void test_iof_options(void **state)
{
    herdrun_options_t opts;

    parse_ok("./a", NULL, &opts);
    assert_int_equal(opts.spec->stdin_target, 0); /* rank 0, as mpirun */
    assert_null(opts.output_dir);
    herdrun_options_destruct(&opts);

    const struct {
        const char *value;
        int32_t target;
    } good[] = {{"all", ORTE_IOF_STDIN_ALL}, {"none", ORTE_IOF_STDIN_NONE}, {"0", 0}, {"17", 17}};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        char line[128];
        snprintf(line, sizeof(line), "--stdin %s ./a", good[i].value);
        parse_ok(line, NULL, &opts);
        assert_int_equal(opts.spec->stdin_target, good[i].target);
        herdrun_options_destruct(&opts);
    }
    const char *bad[] = {"-1", "rank", "ALL", "1x", "99999999999", "2147483648"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char line[128];
        char needle[128];
        snprintf(line, sizeof(line), "--stdin %s ./a", bad[i]);
        snprintf(needle, sizeof(needle), "\"%s\" is not a --stdin target", bad[i]);
        parse_fails(line, NULL, needle, NULL);
    }

    parse_ok("--tag-output --timestamp-output --merge-stderr-to-stdout ./a", NULL, &opts);
    assert_true(opts.spec->flags & ORTE_JOB_FLAG_TAG_OUTPUT);
    assert_true(opts.spec->flags & ORTE_JOB_FLAG_TIMESTAMP_OUTPUT);
    assert_true(opts.spec->flags & ORTE_JOB_FLAG_MERGE_STDERR);
    herdrun_options_destruct(&opts);

    parse_ok("--output-filename /tmp/out ./a", NULL, &opts);
    assert_string_equal(opts.output_dir, "/tmp/out");
    assert_false(opts.output_nocopy);
    herdrun_options_destruct(&opts);
    parse_ok("--output-filename out:nocopy ./a", NULL, &opts);
    assert_string_equal(opts.output_dir, "out");
    assert_true(opts.output_nocopy);
    herdrun_options_destruct(&opts);
    parse_fails("--output-filename :nocopy ./a", NULL, "--output-filename needs a folder", NULL);
}

/* --attach prints a running job's output: it needs the DVM, a job number, and no program. */
static void test_attach(void **state)
{
    herdrun_options_t opts;

    parse_ok("--dvm-uri dvm.uri --attach 3", NULL, &opts);
    assert_string_equal(opts.attach, "3");
    assert_string_equal(opts.dvm_uri, "dvm.uri");
    herdrun_options_destruct(&opts);
    parse_ok("--dvm-uri dvm.uri --attach 9f3c.12 --tag-output", NULL, &opts);
    assert_string_equal(opts.attach, "9f3c.12");
    herdrun_options_destruct(&opts);
    parse_fails("--attach 3", NULL, "--attach 3 needs the running DVM", "--dvm-uri", NULL);
    parse_fails("--dvm-uri dvm.uri --attach x", NULL, "\"x\" is not a job to --attach to", NULL);
    parse_fails("--dvm-uri dvm.uri --attach 0", NULL, "\"0\" is not a job to --attach to", NULL);
    parse_fails("--dvm-uri dvm.uri --attach 3 ./a", NULL, "it starts nothing", "\"./a\"", NULL);
}

static void test_np_bad(void **state)
{
    const char *bad[] = {"0", "-1", "abc", "4x", "0x10", "99999999999", "4294967296", "+2"};
    char *empty_np[] = {"herdrun", "-n", "", "./a", NULL};
    herdrun_options_t opts;
    char *errors;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char line[128];
        char needle[128];

        snprintf(line, sizeof(line), "-n %s ./a", bad[i]);
        snprintf(needle, sizeof(needle), "\"%s\" is not a number of processes (-n/--np)", bad[i]);
        parse_fails(line, NULL, needle, "from 1 to 2147483647", NULL);
    }
    assert_int_equal(parse_argv(empty_np, NULL, &opts, &errors), HERD_ERR_SILENT);
    assert_contains(errors, "\"\" is not a number of processes");
    assert_null(opts.spec);
    free(errors);
    /* the option parser itself reports a missing value */
    parse_fails("./a : -n", NULL, "-n", "app context 2 of 2", NULL);
}

static void test_missing_program(void **state)
{
    char *alone[] = {"herdrun", NULL};
    herdrun_options_t opts;
    char *errors;

    parse_fails("-n 4", NULL, "no program to run was given", "herdrun -n 4 ./a.out", NULL);
    parse_fails("-n 4 --", NULL, "no program to run was given", NULL);
    parse_fails("-n 1 ./a : -n 2", NULL, "no program to run was given",
                "in app context 2 of 2: -n 2", NULL);
    assert_int_equal(parse_argv(alone, NULL, &opts, &errors), HERD_ERR_SILENT);
    assert_contains(errors, "no program to run was given");
    free(errors);
}

static void test_empty_context(void **state)
{
    parse_fails("./a : : ./b", NULL, "app context 2 of 3 is empty", "between two ':'", NULL);
    parse_fails(": ./a", NULL, "app context 1 of 2 is empty", "starts with ':'", NULL);
    parse_fails("./a :", NULL, "app context 2 of 2 is empty", "ends with ':'", NULL);
    parse_fails(":", NULL, "app context 1 of 2 is empty", NULL);
}

static void test_oversubscribe_conflict(void **state)
{
    herdrun_options_t opts;

    parse_fails("--oversubscribe --nooversubscribe ./a", NULL,
                "--oversubscribe and --nooversubscribe are both given", NULL);
    parse_fails("--oversubscribe ./a : -nooversubscribe ./b", NULL, "contradict", NULL);

    parse_ok("--nooversubscribe ./a", NULL, &opts);
    assert_true(opts.spec->nooversubscribe);
    assert_false(opts.spec->oversubscribe);
    herdrun_options_destruct(&opts);
}

static void test_host_without_dvm(void **state)
{
    char *hostfile = write_file("hosts", "n1 slots=2\nn2\n");
    char line[512];
    herdrun_options_t opts;

    snprintf(line, sizeof(line), "-H n1,n2:4 --hostfile %s -n 2 ./a", hostfile);
    parse_ok(line, NULL, &opts);
    assert_null(opts.spec->hosts);
    assert_null(opts.dvm_uri);
    assert_int_equal(orte_ras_base_register(), HERD_SUCCESS);
    assert_string_equal(orte_ras_base_host_list(), "n1,n2:4");
    assert_string_equal(orte_ras_base_hostfile(), hostfile);
    herdrun_options_destruct(&opts);
    remove_file(hostfile);
}

static void test_host_with_dvm(void **state)
{
    herdrun_options_t opts;

    parse_ok("--dvm-uri dvm.uri -H n2,n1,n2 -n 2 ./a", NULL, &opts);
    assert_string_equal(opts.dvm_uri, "dvm.uri");
    assert_argv(opts.spec->hosts, "n2 n1");
    /* the DVM's allocation is not this herdrun's to change */
    assert_int_equal(orte_ras_base_register(), HERD_SUCCESS);
    assert_null(orte_ras_base_host_list());
    herdrun_options_destruct(&opts);

    parse_ok("--dvm-uri dvm.uri ./a", NULL, &opts);
    assert_null(opts.spec->hosts);
    herdrun_options_destruct(&opts);

    parse_fails("--dvm-uri dvm.uri -H n1:4,n2 ./a", NULL, "-H n1:4,n2 gives slot counts",
                "only picks its nodes", NULL);
    parse_fails("--dvm-uri dvm.uri -H n1,bad!name ./a", NULL, "bad!name", NULL);
}

static void test_hostfile_with_dvm(void **state)
{
    char *hostfile = write_file("dvm-hosts", "# nodes\nn3 slots=4\nn1\nn3\n");
    char line[512];
    herdrun_options_t opts;

    snprintf(line, sizeof(line), "--dvm-uri dvm.uri --hostfile %s ./a", hostfile);
    parse_ok(line, NULL, &opts);
    assert_argv(opts.spec->hosts, "n3 n1");
    herdrun_options_destruct(&opts);

    /* -H picks from the hostfile */
    snprintf(line, sizeof(line), "--dvm-uri dvm.uri --hostfile %s -H n1 ./a", hostfile);
    parse_ok(line, NULL, &opts);
    assert_argv(opts.spec->hosts, "n1");
    herdrun_options_destruct(&opts);
    remove_file(hostfile);
}

static void test_map_by_seq_hostfile(void **state)
{
    char *hostfile = write_file("seq-hosts", "# the order of ranks\n"
                                             "n1 slots=2   # first\n"
                                             "\n"
                                             "   n2\tmax_slots=4\n"
                                             "n1\n"
                                             "n3 slots = 1\n");
    char line[512];
    herdrun_options_t opts;

    snprintf(line, sizeof(line), "--hostfile %s --map-by seq ./a : ./b : --npernode 1 ./c",
             hostfile);
    parse_ok(line, NULL, &opts);
    assert_argv(opts.spec->apps[0].seq_hosts, "n1 n2 n1 n3");
    assert_argv(opts.spec->apps[1].seq_hosts, "n1 n2 n1 n3");
    assert_string_equal(opts.spec->apps[1].map_by, "seq");
    /* --npernode chose this app's mapping */
    assert_null(opts.spec->apps[2].seq_hosts);
    assert_string_equal(opts.spec->apps[2].map_by, "ppr:1:node");
    herdrun_options_destruct(&opts);

    /* without a hostfile, seq takes every node once */
    parse_ok("-H n1,n2 --map-by seq ./a", NULL, &opts);
    assert_null(opts.spec->apps[0].seq_hosts);
    herdrun_options_destruct(&opts);

    /* and a hostfile without seq gives no list */
    snprintf(line, sizeof(line), "--hostfile %s ./a", hostfile);
    parse_ok(line, NULL, &opts);
    assert_null(opts.spec->apps[0].seq_hosts);
    herdrun_options_destruct(&opts);
    remove_file(hostfile);
}

static void test_map_by_seq_bad_hostfile(void **state)
{
    char *hostfile = write_file("bad-hosts", "n1\nn2:4\n");
    char missing[128];
    char line[512];
    char where[512];

    snprintf(line, sizeof(line), "--hostfile %s --map-by seq ./a", hostfile);
    snprintf(where, sizeof(where), "%s:2", hostfile);
    parse_fails(line, NULL, where, "n2 slots=4", NULL);
    remove_file(hostfile);

    snprintf(missing, sizeof(missing), "%s/none", temp_dir);
    snprintf(line, sizeof(line), "--hostfile %s --map-by seq ./a", missing);
    parse_fails(line, NULL, missing, NULL);
}

static void test_unknown_option(void **state)
{
    parse_fails("--bogus ./a", NULL, "herdrun: unknown option '--bogus'", NULL);
    parse_fails("--map-bye core ./a", NULL, "did you mean '--map-by'", NULL);
    parse_fails("-n 1 ./a : -n 1 --nprenode 2 ./b", NULL, "did you mean '--npernode'",
                "in app context 2 of 2", NULL);
    parse_fails("--display-map=yes ./a", NULL, "does not take an argument", NULL);
}

static void test_wdir(void **state)
{
    char *empty_wdir[] = {"herdrun", "--wdir", "", "./a", NULL};
    herdrun_options_t opts;
    char *errors;

    parse_ok("--wdir / ./a", NULL, &opts);
    assert_string_equal(opts.spec->apps[0].cwd, "/");
    herdrun_options_destruct(&opts);

    assert_int_equal(parse_argv(empty_wdir, NULL, &opts, &errors), HERD_ERR_SILENT);
    assert_contains(errors, "--wdir was given an empty directory");
    assert_null(opts.spec);
    free(errors);
}

static void test_help_and_version(void **state)
{
    herdrun_options_t opts;

    parse_ok("--help", NULL, &opts);
    assert_true(opts.help);
    assert_null(opts.spec);
    herdrun_options_destruct(&opts);

    /* help wins over mistakes in the values, and needs no program */
    parse_ok("-n 0 -h -v", NULL, &opts);
    assert_true(opts.help);
    assert_int_equal(opts.verbose, 1);
    herdrun_options_destruct(&opts);

    parse_ok("./a : -V ./b", NULL, &opts);
    assert_true(opts.version);
    assert_false(opts.help);
    assert_null(opts.spec);
    herdrun_options_destruct(&opts);

    /* but a line the option parser cannot read is still an error */
    parse_fails("--help --bogus", NULL, "unknown option '--bogus'", NULL);
}

static void test_mca(void **state)
{
    herdrun_options_t opts;

    parse_ok("--mca foo_bar 1 -n 2 ./a : --mca odls_base_verbose 5 ./b", NULL, &opts);
    assert_argv(opts.spec->mca, "HERD_MCA_foo_bar=1 HERD_MCA_odls_base_verbose=5");
    assert_string_equal(getenv("HERD_MCA_foo_bar"), "1");
    assert_string_equal(getenv("HERD_MCA_odls_base_verbose"), "5");
    herdrun_options_destruct(&opts);

    /* the variable system refuses a malformed name */
    parse_fails("--mca bad-name 1 ./a", NULL, "bad-name", NULL);
    parse_fails("--mca foo_bar", NULL, "--mca", "needs 2 arguments", NULL);
}

static void test_usage(void **state)
{
    FILE *file = tmpfile();
    char text[16384];
    size_t length;

    assert_non_null(file);
    herdrun_cmdline_usage(file);
    rewind(file);
    length = fread(text, 1, sizeof(text) - 1, file);
    text[length] = '\0';
    fclose(file);
    assert_contains(text, "Usage: herdrun [OPTION]... PROGRAM");
    assert_contains(text, "-n, --np N");
    assert_contains(text, "--report-usage[=FILE]");
    assert_contains(text, "--map-by POLICY");
    assert_contains(text, "--dvm-uri FILE");
    assert_contains(text, "at most 2 processes  --map-by core --rank-by core --bind-to core");
    assert_contains(text, "more than 2          --map-by package");
    assert_contains(text, "Examples:");
    assert_contains(text, "herdrun -n 1 ./manager : -n 8");
    /* every line fits in 100 columns */
    for (char *line = text; '\0' != *line;) {
        size_t width = strcspn(line, "\n");

        assert_true(width <= 100);
        line += width + ('\n' == line[width]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_spmd, setup, teardown),
        cmocka_unit_test_setup_teardown(test_np_not_given, setup, teardown),
        cmocka_unit_test_setup_teardown(test_np_spellings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mpmd_three_contexts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_x_from_env_and_value, setup, teardown),
        cmocka_unit_test_setup_teardown(test_x_unset, setup, teardown),
        cmocka_unit_test_setup_teardown(test_program_args_look_like_options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_global_options_in_second_context, setup, teardown),
        cmocka_unit_test_setup_teardown(test_global_option_repeated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_app_option_repeated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_npernode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_policies_valid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_map_by_invalid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rank_by_and_bind_to_invalid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_usage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_verbose, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_iof_options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_attach, setup, teardown),
        cmocka_unit_test_setup_teardown(test_np_bad, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_program, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_context, setup, teardown),
        cmocka_unit_test_setup_teardown(test_oversubscribe_conflict, setup, teardown),
        cmocka_unit_test_setup_teardown(test_host_without_dvm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_host_with_dvm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostfile_with_dvm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_map_by_seq_hostfile, setup, teardown),
        cmocka_unit_test_setup_teardown(test_map_by_seq_bad_hostfile, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_option, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wdir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_help_and_version, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mca, setup, teardown),
        cmocka_unit_test_setup_teardown(test_usage, setup, teardown),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
