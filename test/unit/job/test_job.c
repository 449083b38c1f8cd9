/* SPDX-License-Identifier: BSD-3-Clause */
/* The launch wire formats: the job spec and launch message (orte/runtime/job.c), the process
 * record (proc_record.c) and the node inventory (inventory.c), round trips and every kind of
 * malformed message rejected without a crash or a leak; and the mapper's input built from them
 * (jobmap.c). */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/fabric/fabric.h"
#include "opal/util/argv.h"
#include "orte/util/inventory.h"
#include "orte/runtime/job.h"
#include "orte/util/runs.h"
#include "orte/runtime/jobmap.h"
#include "orte/runtime/proc_record.h"
#include "support/capture.h"

#define T_2X4X2 "pack:2 core:4 pu:2" /* 8 cores */
#define T_2X2X1 "pack:2 core:2 pu:1" /* 4 cores */

/* What a decoder must leave in its output argument when it fails. */
static char sentinel_object;
#define SENTINEL ((void *) &sentinel_object)

/* ------------------------------------------------------------------------------------------ */
/* comparing */

static void assert_argv_equal(char *const *expected, char *const *got)
{
    if (NULL == expected) {
        assert_null(got);
        return;
    }
    assert_non_null(got);
    assert_int_equal(opal_argv_count(expected), opal_argv_count(got));
    for (size_t i = 0; NULL != expected[i]; ++i) {
        assert_string_equal(expected[i], got[i]);
    }
}

static void assert_opt_string_equal(const char *expected, const char *got)
{
    if (NULL == expected) {
        assert_null(got);
    } else {
        assert_non_null(got);
        assert_string_equal(expected, got);
    }
}

static void assert_spec_equal(const orte_job_spec_t *expected, const orte_job_spec_t *got)
{
    assert_string_equal(expected->jobid, got->jobid);
    assert_int_equal(expected->seq, got->seq);
    assert_int_equal(expected->num_apps, got->num_apps);
    for (uint32_t a = 0; a < expected->num_apps; ++a) {
        const orte_job_app_t *e = &expected->apps[a];
        const orte_job_app_t *g = &got->apps[a];
        assert_argv_equal(e->argv, g->argv);
        assert_argv_equal(e->env, g->env);
        assert_opt_string_equal(e->cwd, g->cwd);
        assert_int_equal(e->np, g->np);
        assert_opt_string_equal(e->map_by, g->map_by);
        assert_opt_string_equal(e->rank_by, g->rank_by);
        assert_opt_string_equal(e->bind_to, g->bind_to);
        assert_argv_equal(e->seq_hosts, g->seq_hosts);
    }
    assert_argv_equal(expected->hosts, got->hosts);
    assert_int_equal(expected->flags, got->flags);
    assert_int_equal(expected->oversubscribe, got->oversubscribe);
    assert_int_equal(expected->nooversubscribe, got->nooversubscribe);
    assert_int_equal(expected->timeout, got->timeout);
    assert_opt_string_equal(expected->errmgr, got->errmgr);
    assert_int_equal(expected->kill_grace_ms, got->kill_grace_ms);
    assert_int_equal(expected->stdin_target, got->stdin_target);
    assert_argv_equal(expected->mca, got->mca);
    assert_opt_string_equal(expected->sink_uri, got->sink_uri);
    assert_memory_equal(expected->secret, got->secret, sizeof(expected->secret));
}

static void assert_u32_array_equal(const uint32_t *expected, const uint32_t *got, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        assert_int_equal(expected[i], got[i]);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* specs to encode */

static char *full_argv[] = {"./prog", "--flag", "", "an argument with spaces", NULL};
static char *full_env[] = {"FOO=1", "EMPTY=", NULL};
static char *full_seq[] = {"n1", "n0", "n1", NULL};
static char *full_hosts[] = {"n0", "n1", "n2", NULL};
static char *full_mca[] = {"HERD_MCA_odls_base_verbose=5", "HERD_MCA_x=y", NULL};
static char *plain_argv[] = {"/bin/true", NULL};

/* Every field set, none at its zero value. */
static void fill_full(orte_job_spec_t *spec, orte_job_app_t *app)
{
    memset(app, 0, sizeof(*app));
    app->argv = full_argv;
    app->env = full_env;
    app->cwd = "/tmp/work dir";
    app->np = 12;
    app->map_by = "ppr:2:package:PE=2";
    app->rank_by = "core";
    app->bind_to = "hwthread";
    app->seq_hosts = full_seq;

    memset(spec, 0, sizeof(*spec));
    spec->jobid = "dvm-1234.56";
    spec->seq = 56;
    spec->apps = app;
    spec->num_apps = 1;
    spec->hosts = full_hosts;
    spec->flags = ORTE_JOB_FLAG_DISPLAY_MAP | ORTE_JOB_FLAG_VERBOSE | 0x80000000u;
    spec->oversubscribe = true;
    spec->nooversubscribe = true;
    spec->timeout = 3600;
    spec->errmgr = "continue";
    spec->kill_grace_ms = -1;
    spec->stdin_target = -2; /* --stdin all */
    spec->mca = full_mca;
    spec->sink_uri = "tcp://[fd00::1]:40123";
    for (size_t i = 0; i < sizeof(spec->secret); ++i) {
        spec->secret[i] = (uint8_t) (0xff - 7 * i);
    }
}

/* Only what must be there: one app with a program, a jobid. */
static void fill_minimal(orte_job_spec_t *spec, orte_job_app_t *app)
{
    memset(app, 0, sizeof(*app));
    app->argv = plain_argv;
    memset(spec, 0, sizeof(*spec));
    spec->jobid = "d.1";
    spec->seq = 1;
    spec->apps = app;
    spec->num_apps = 1;
}

static void pack_spec(const orte_job_spec_t *spec, opal_buffer_t *buffer)
{
    opal_buffer_init(buffer);
    assert_int_equal(HERD_SUCCESS, orte_job_spec_pack(buffer, spec));
}

/* Decode the whole buffer: the message must be used up exactly. */
static orte_job_spec_t *unpack_spec(opal_buffer_t *buffer)
{
    orte_job_spec_t *got = NULL;
    assert_int_equal(HERD_SUCCESS, orte_job_spec_unpack(buffer, &got));
    assert_non_null(got);
    assert_int_equal(0, opal_buffer_remaining(buffer));
    return got;
}

static int spec_unpack_rc(opal_buffer_t *buffer)
{
    orte_job_spec_t *got = SENTINEL;
    int rc = orte_job_spec_unpack(buffer, &got);
    if (HERD_SUCCESS == rc) {
        orte_job_spec_free(got);
    } else {
        assert_ptr_equal(SENTINEL, got);
    }
    return rc;
}

/* The spec's wire layout, written here a second time so that tests can produce what
 * orte_job_spec_pack never would: another version, an announced app count that differs from the
 * apps that follow, a secret of another length, an optional string flagged present but NULL. */
typedef struct {
    uint32_t version;
    uint32_t declared_apps;
    size_t secret_len;
    bool null_cwd_flagged_present;
} spec_wire_t;

static spec_wire_t wire_of(const orte_job_spec_t *spec)
{
    return (spec_wire_t){.version = ORTE_JOB_WIRE_VERSION,
                         .declared_apps = spec->num_apps,
                         .secret_len = ORTE_JOB_SECRET_BYTES};
}

static void wire_opt_string(opal_buffer_t *b, const char *value)
{
    assert_int_equal(HERD_SUCCESS, opal_buffer_pack_bool(b, NULL != value));
    if (NULL != value) {
        assert_int_equal(HERD_SUCCESS, opal_buffer_pack_string(b, value));
    }
}

static void wire_argv(opal_buffer_t *b, char *const *argv)
{
    assert_int_equal(HERD_SUCCESS, opal_buffer_pack_string_array(b, argv, opal_argv_count(argv)));
}

static void pack_spec_wire(opal_buffer_t *b, const orte_job_spec_t *spec, const spec_wire_t *w)
{
    uint8_t secret[2 * ORTE_JOB_SECRET_BYTES];
    opal_buffer_init(b);
    assert_int_equal(HERD_SUCCESS, opal_buffer_pack_uint32(b, w->version));
    assert_int_equal(HERD_SUCCESS, opal_buffer_pack_string(b, spec->jobid));
    assert_int_equal(HERD_SUCCESS, opal_buffer_pack_uint32(b, spec->seq));
    assert_int_equal(HERD_SUCCESS, opal_buffer_pack_uint32(b, w->declared_apps));
    for (uint32_t a = 0; a < spec->num_apps; ++a) {
        const orte_job_app_t *app = &spec->apps[a];
        wire_argv(b, app->argv);
        wire_argv(b, app->env);
        if (0 == a && w->null_cwd_flagged_present) {
            assert_int_equal(HERD_SUCCESS, opal_buffer_pack_bool(b, true));
            assert_int_equal(HERD_SUCCESS, opal_buffer_pack_string(b, NULL));
        } else {
            wire_opt_string(b, app->cwd);
        }
        assert_int_equal(HERD_SUCCESS, opal_buffer_pack_uint32(b, app->np));
        wire_opt_string(b, app->map_by);
        wire_opt_string(b, app->rank_by);
        wire_opt_string(b, app->bind_to);
        wire_argv(b, app->seq_hosts);
    }
    wire_argv(b, spec->hosts);
    assert_int_equal(HERD_SUCCESS, opal_buffer_pack_uint32(b, spec->flags));
    assert_int_equal(HERD_SUCCESS, opal_buffer_pack_bool(b, spec->oversubscribe));
    assert_int_equal(HERD_SUCCESS, opal_buffer_pack_bool(b, spec->nooversubscribe));
    assert_int_equal(HERD_SUCCESS, opal_buffer_pack_uint32(b, spec->timeout));
    wire_opt_string(b, spec->errmgr);
    assert_int_equal(HERD_SUCCESS, opal_buffer_pack_int32(b, spec->kill_grace_ms));
    assert_int_equal(HERD_SUCCESS, opal_buffer_pack_int32(b, spec->stdin_target));
    wire_argv(b, spec->mca);
    wire_opt_string(b, spec->sink_uri);
    assert_true(w->secret_len <= sizeof(secret));
    memset(secret, 0x11, sizeof(secret));
    memcpy(secret, spec->secret,
           sizeof(spec->secret) < w->secret_len ? sizeof(spec->secret) : w->secret_len);
    assert_int_equal(HERD_SUCCESS, opal_buffer_pack_bytes(b, secret, w->secret_len));
}

/* ------------------------------------------------------------------------------------------ */
/* launch messages to encode */

static uint32_t launch_index[] = {1, 4, 6};
static uint32_t launch_slots[] = {8, 0, 4};
static uint32_t launch_max_slots[] = {0, 16, 4};
static uint32_t launch_participants[] = {0, 2};
static uint32_t launch_session_slot[] = {3, 0, 1};
static char *launch_xml_pairs[] = {"00aa", "<topology/>", "00bb", "<topology>2</topology>", NULL};

#define LAUNCH_DVM_NODES 7u

static void fill_launch(orte_job_launch_t *launch, orte_job_spec_t *spec)
{
    memset(launch, 0, sizeof(*launch));
    launch->spec = spec;
    launch->radix = 32;
    launch->universe_size = 96;
    launch->num_candidates = 3;
    launch->node_index = launch_index;
    launch->slots = launch_slots;
    launch->max_slots = launch_max_slots;
    launch->num_participants = 2;
    launch->participants = launch_participants;
    launch->session_slot = launch_session_slot;
    launch->xml_pairs = launch_xml_pairs;
}

static int launch_unpack_rc(opal_buffer_t *buffer, uint32_t num_dvm_nodes)
{
    orte_job_launch_t *got = SENTINEL;
    int rc = orte_job_launch_unpack(buffer, num_dvm_nodes, &got);
    if (HERD_SUCCESS == rc) {
        orte_job_launch_free(got);
    } else {
        assert_ptr_equal(SENTINEL, got);
    }
    return rc;
}

/* The launch message packed, then decoded against num_dvm_nodes: its status. */
static int launch_rc(const orte_job_launch_t *launch, uint32_t num_dvm_nodes)
{
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    assert_int_equal(HERD_SUCCESS, orte_job_launch_pack(&buffer, launch));
    int rc = launch_unpack_rc(&buffer, num_dvm_nodes);
    opal_buffer_destruct(&buffer);
    return rc;
}

/* A launch message whose three per-candidate arrays may differ in length (the encoder cannot
 * write that): the spec, then the arrays as given. */
static int launch_arrays_rc(const orte_job_spec_t *spec, size_t n_index, size_t n_slots,
                            size_t n_max)
{
    static const uint32_t values[] = {0, 1, 2, 3};
    static const uint32_t participants[] = {0};
    opal_buffer_t b;
    opal_buffer_init(&b);
    assert_int_equal(HERD_SUCCESS, orte_job_spec_pack(&b, spec));
    assert_int_equal(HERD_SUCCESS, opal_buffer_pack_uint32(&b, 2)); /* radix */
    assert_int_equal(HERD_SUCCESS, opal_buffer_pack_uint32(&b, 8)); /* universe size */
    assert_int_equal(HERD_SUCCESS, orte_runs_pack(&b, values, n_index));
    assert_int_equal(HERD_SUCCESS, orte_runs_pack(&b, values, n_slots));
    assert_int_equal(HERD_SUCCESS, orte_runs_pack(&b, values, n_max));
    assert_int_equal(HERD_SUCCESS, orte_runs_pack(&b, participants, 1));
    assert_int_equal(HERD_SUCCESS, orte_runs_pack(&b, values, n_index));
    assert_int_equal(HERD_SUCCESS, opal_buffer_pack_string_array(&b, NULL, 0));
    int rc = launch_unpack_rc(&b, 4);
    opal_buffer_destruct(&b);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* truncation */

typedef int (*decode_fn_t)(opal_buffer_t *buffer);

/* Every prefix of a valid message (0 to size - 1 bytes) is refused as short or malformed, with
 * the output untouched (the decoders check) and nothing leaked (valgrind checks); the whole
 * message is accepted. */
static void assert_every_prefix_rejected(const opal_buffer_t *message, decode_fn_t decode)
{
    opal_buffer_t prefix;
    opal_buffer_init(&prefix);
    for (size_t len = 0; len < message->used; ++len) {
        assert_int_equal(HERD_SUCCESS, opal_buffer_load(&prefix, message->base, len));
        int rc = decode(&prefix);
        if (HERD_ERR_UNPACK_FAILURE != rc && HERD_ERR_UNPACK_READ_PAST_END != rc) {
            fail_msg("the first %zu of %zu bytes gave status %d (%s)", len, message->used, rc,
                     opal_strerror(rc));
        }
    }
    assert_int_equal(HERD_SUCCESS, opal_buffer_load(&prefix, message->base, message->used));
    assert_int_equal(HERD_SUCCESS, decode(&prefix));
    opal_buffer_destruct(&prefix);
}

static int decode_spec(opal_buffer_t *buffer)
{
    return spec_unpack_rc(buffer);
}

static int decode_launch(opal_buffer_t *buffer)
{
    return launch_unpack_rc(buffer, LAUNCH_DVM_NODES);
}

static int decode_record(opal_buffer_t *buffer)
{
    orte_proc_record_t record;
    memset(&record, 0x5a, sizeof(record));
    int rc = orte_proc_record_unpack(buffer, &record);
    if (HERD_SUCCESS != rc) {
        assert_int_equal(0x5a5a5a5a, (uint32_t) record.rank);
        assert_int_equal(0x5a5a5a5a5a5a5a5aull, (uint64_t) record.max_rss_kb);
    }
    return rc;
}

static int decode_inventory(opal_buffer_t *buffer)
{
    orte_inventory_t *got = SENTINEL;
    int rc = orte_inventory_unpack(buffer, &got);
    if (HERD_SUCCESS == rc) {
        orte_inventory_free(got);
    } else {
        assert_ptr_equal(SENTINEL, got);
    }
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* spec round trips */

static void test_spec_roundtrip_full(void **state)
{
    orte_job_spec_t spec;
    orte_job_app_t app;
    opal_buffer_t buffer;
    (void) state;
    fill_full(&spec, &app);
    pack_spec(&spec, &buffer);
    orte_job_spec_t *got = unpack_spec(&buffer);
    assert_spec_equal(&spec, got);
    assert_int_equal(12, orte_job_spec_requested_np(got));
    orte_job_spec_free(got);
    opal_buffer_destruct(&buffer);
}

static void test_spec_roundtrip_null_optionals(void **state)
{
    orte_job_spec_t spec;
    orte_job_app_t app;
    opal_buffer_t buffer;
    (void) state;
    /* cwd, map_by, rank_by, bind_to, env, seq_hosts, hosts, errmgr, mca, sink_uri all NULL */
    fill_minimal(&spec, &app);
    pack_spec(&spec, &buffer);
    orte_job_spec_t *got = unpack_spec(&buffer);
    assert_spec_equal(&spec, got);
    const orte_job_app_t *g = &got->apps[0];
    assert_null(g->env);
    assert_null(g->cwd);
    assert_null(g->map_by);
    assert_null(g->rank_by);
    assert_null(g->bind_to);
    assert_null(g->seq_hosts);
    assert_null(got->hosts);
    assert_null(got->errmgr);
    assert_null(got->mca);
    assert_null(got->sink_uri);
    assert_int_equal(0, orte_job_spec_requested_np(got));
    orte_job_spec_free(got);
    opal_buffer_destruct(&buffer);
}

/* Empty strings are values, not absences: they come back as "". */
static void test_spec_roundtrip_empty_strings(void **state)
{
    static char *empty_env[] = {"", NULL};
    orte_job_spec_t spec;
    orte_job_app_t app;
    opal_buffer_t buffer;
    (void) state;
    fill_minimal(&spec, &app);
    app.cwd = "";
    app.map_by = "";
    app.env = empty_env;
    spec.errmgr = "";
    spec.sink_uri = "";
    pack_spec(&spec, &buffer);
    orte_job_spec_t *got = unpack_spec(&buffer);
    assert_spec_equal(&spec, got);
    assert_string_equal("", got->apps[0].cwd);
    assert_string_equal("", got->errmgr);
    orte_job_spec_free(got);
    opal_buffer_destruct(&buffer);
}

static void test_spec_roundtrip_mpmd(void **state)
{
    static char *argv_b[] = {"./worker", "-v", NULL};
    static char *argv_c[] = {"./io", NULL};
    static char *env_c[] = {"IO=1", NULL};
    static char *seq_c[] = {"n2", NULL};
    orte_job_spec_t spec;
    orte_job_app_t apps[3];
    opal_buffer_t buffer;
    (void) state;
    fill_full(&spec, &apps[0]);
    memset(&apps[1], 0, sizeof(apps[1]));
    apps[1].argv = argv_b;
    apps[1].np = 30;
    apps[1].map_by = "node";
    memset(&apps[2], 0, sizeof(apps[2]));
    apps[2].argv = argv_c;
    apps[2].env = env_c;
    apps[2].np = 1;
    apps[2].cwd = "/io";
    apps[2].bind_to = "none";
    apps[2].seq_hosts = seq_c;
    spec.apps = apps;
    spec.num_apps = 3;
    pack_spec(&spec, &buffer);
    orte_job_spec_t *got = unpack_spec(&buffer);
    assert_spec_equal(&spec, got);
    assert_int_equal(43, orte_job_spec_requested_np(got));
    /* an app taking every free slot makes the job's size unknown before mapping */
    got->apps[1].np = 0;
    assert_int_equal(0, orte_job_spec_requested_np(got));
    orte_job_spec_free(got);
    opal_buffer_destruct(&buffer);
}

/* The secret is carried byte for byte (zeros and 0xff included), and must be exactly
 * ORTE_JOB_SECRET_BYTES long. */
static void test_spec_secret(void **state)
{
    orte_job_spec_t spec;
    orte_job_app_t app;
    opal_buffer_t buffer;
    (void) state;
    fill_minimal(&spec, &app);
    for (size_t i = 0; i < sizeof(spec.secret); ++i) {
        spec.secret[i] = (uint8_t) (0 == i % 3 ? 0 : 0xff - i);
    }
    pack_spec(&spec, &buffer);
    orte_job_spec_t *got = unpack_spec(&buffer);
    assert_memory_equal(spec.secret, got->secret, ORTE_JOB_SECRET_BYTES);
    orte_job_spec_free(got);
    opal_buffer_destruct(&buffer);

    const size_t bad_lengths[] = {0, 1, ORTE_JOB_SECRET_BYTES - 1, ORTE_JOB_SECRET_BYTES + 1,
                                  2 * ORTE_JOB_SECRET_BYTES};
    for (size_t i = 0; i < sizeof(bad_lengths) / sizeof(bad_lengths[0]); ++i) {
        spec_wire_t w = wire_of(&spec);
        w.secret_len = bad_lengths[i];
        pack_spec_wire(&buffer, &spec, &w);
        assert_int_equal(HERD_ERR_UNPACK_FAILURE, spec_unpack_rc(&buffer));
        opal_buffer_destruct(&buffer);
    }
}

/* --stdin is a rank, all (-2) or none (-1): anything below is a corrupt message. */
static void test_spec_bad_stdin_target(void **state)
{
    orte_job_spec_t spec;
    orte_job_app_t app;
    opal_buffer_t buffer;
    (void) state;
    fill_minimal(&spec, &app);
    const int32_t good[] = {-2, -1, 0, 7, INT32_MAX};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); ++i) {
        spec.stdin_target = good[i];
        pack_spec(&spec, &buffer);
        orte_job_spec_t *got = unpack_spec(&buffer);
        assert_int_equal(good[i], got->stdin_target);
        orte_job_spec_free(got);
        opal_buffer_destruct(&buffer);
    }
    const int32_t bad[] = {-3, INT32_MIN};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        spec.stdin_target = bad[i];
        spec_wire_t w = wire_of(&spec);
        pack_spec_wire(&buffer, &spec, &w);
        assert_int_equal(HERD_ERR_UNPACK_FAILURE, spec_unpack_rc(&buffer));
        opal_buffer_destruct(&buffer);
    }
}

/* The test's own copy of the layout is the real one: byte for byte the same message. */
static void test_spec_wire_mirror(void **state)
{
    orte_job_spec_t spec;
    orte_job_app_t app;
    opal_buffer_t real, mirror;
    (void) state;
    fill_full(&spec, &app);
    pack_spec(&spec, &real);
    spec_wire_t w = wire_of(&spec);
    pack_spec_wire(&mirror, &spec, &w);
    assert_int_equal(real.used, mirror.used);
    assert_memory_equal(real.base, mirror.base, real.used);
    opal_buffer_destruct(&real);
    opal_buffer_destruct(&mirror);
}

/* ------------------------------------------------------------------------------------------ */
/* spec rejections */

static void test_spec_version_mismatch(void **state)
{
    const uint32_t versions[] = {0, ORTE_JOB_WIRE_VERSION + 1, UINT32_MAX};
    orte_job_spec_t spec;
    orte_job_app_t app;
    orte_job_launch_t launch;
    opal_buffer_t buffer;
    (void) state;
    fill_full(&spec, &app);
    for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); ++i) {
        spec_wire_t w = wire_of(&spec);
        w.version = versions[i];
        pack_spec_wire(&buffer, &spec, &w);
        assert_int_equal(HERD_ERR_VERSION_MISMATCH, spec_unpack_rc(&buffer));
        opal_buffer_destruct(&buffer);
    }
    /* the launch message says so too, rather than "malformed" */
    fill_launch(&launch, &spec);
    opal_buffer_init(&buffer);
    assert_int_equal(HERD_SUCCESS, orte_job_launch_pack(&buffer, &launch));
    assert_int_equal(HERD_SUCCESS, launch_unpack_rc(&buffer, LAUNCH_DVM_NODES));
    buffer.unpack_offset = 0;
    buffer.base[4] ^= 0x40; /* the version: a uint32 after its one-byte type tag */
    assert_int_equal(HERD_ERR_VERSION_MISMATCH, launch_unpack_rc(&buffer, LAUNCH_DVM_NODES));
    opal_buffer_destruct(&buffer);
}

static void test_spec_app_count(void **state)
{
    orte_job_spec_t spec;
    orte_job_app_t app;
    opal_buffer_t buffer;
    (void) state;
    fill_minimal(&spec, &app);
    /* orte_job_spec_pack refuses a job without apps; the decoder must too */
    opal_buffer_init(&buffer);
    spec.num_apps = 0;
    assert_int_equal(HERD_ERR_BAD_PARAM, orte_job_spec_pack(&buffer, &spec));
    assert_int_equal(0, buffer.used);
    spec_wire_t w = wire_of(&spec);
    pack_spec_wire(&buffer, &spec, &w);
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, spec_unpack_rc(&buffer));
    opal_buffer_destruct(&buffer);
    /* more apps announced than follow: the decoder runs out of message */
    spec.num_apps = 1;
    w = wire_of(&spec);
    w.declared_apps = 2;
    pack_spec_wire(&buffer, &spec, &w);
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, spec_unpack_rc(&buffer));
    opal_buffer_destruct(&buffer);
    /* a huge announced count is refused before anything is allocated for it */
    w.declared_apps = UINT32_MAX;
    pack_spec_wire(&buffer, &spec, &w);
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, spec_unpack_rc(&buffer));
    opal_buffer_destruct(&buffer);
}

static void test_spec_too_many_apps(void **state)
{
    orte_job_app_t *apps = calloc(ORTE_JOB_MAX_APPS + 1, sizeof(*apps));
    orte_job_spec_t spec;
    opal_buffer_t buffer;
    (void) state;
    assert_non_null(apps);
    fill_minimal(&spec, &apps[0]);
    for (uint32_t a = 0; a <= ORTE_JOB_MAX_APPS; ++a) {
        apps[a].argv = plain_argv;
        apps[a].np = 1;
    }
    spec.apps = apps;
    spec.num_apps = ORTE_JOB_MAX_APPS; /* the limit itself is fine */
    pack_spec(&spec, &buffer);
    orte_job_spec_t *got = unpack_spec(&buffer);
    assert_int_equal(ORTE_JOB_MAX_APPS, got->num_apps);
    assert_int_equal(ORTE_JOB_MAX_APPS, orte_job_spec_requested_np(got));
    orte_job_spec_free(got);
    opal_buffer_destruct(&buffer);
    spec.num_apps = ORTE_JOB_MAX_APPS + 1;
    pack_spec(&spec, &buffer);
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, spec_unpack_rc(&buffer));
    opal_buffer_destruct(&buffer);
    free(apps);
}

/* An app without a program: no argv at all, or an empty argv[0]; also in a later app, after
 * earlier ones were decoded (they must be freed). */
static void test_spec_app_without_program(void **state)
{
    static char *empty_program[] = {"", "arg", NULL};
    orte_job_spec_t spec;
    orte_job_app_t apps[2];
    opal_buffer_t buffer;
    (void) state;
    fill_full(&spec, &apps[0]);
    apps[1] = apps[0];
    spec.apps = apps;
    spec.num_apps = 2;
    apps[1].argv = NULL;
    pack_spec(&spec, &buffer);
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, spec_unpack_rc(&buffer));
    opal_buffer_destruct(&buffer);
    apps[1].argv = empty_program;
    pack_spec(&spec, &buffer);
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, spec_unpack_rc(&buffer));
    opal_buffer_destruct(&buffer);
    spec.num_apps = 1;
    apps[0].argv = NULL;
    pack_spec(&spec, &buffer);
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, spec_unpack_rc(&buffer));
    opal_buffer_destruct(&buffer);
}

/* The jobid names files and shared-memory segments: it may not be empty or hold a '/'. */
static void test_spec_bad_jobid(void **state)
{
    const char *bad[] = {"dvm/1.2", "/", "../x", "a/", ""};
    orte_job_spec_t spec;
    orte_job_app_t app;
    opal_buffer_t buffer;
    (void) state;
    fill_full(&spec, &app);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        spec.jobid = (char *) bad[i];
        pack_spec(&spec, &buffer);
        assert_int_equal(HERD_ERR_UNPACK_FAILURE, spec_unpack_rc(&buffer));
        opal_buffer_destruct(&buffer);
    }
    /* a NULL jobid: the encoder refuses it, a forged message is refused */
    spec.jobid = NULL;
    opal_buffer_init(&buffer);
    assert_int_equal(HERD_ERR_BAD_PARAM, orte_job_spec_pack(&buffer, &spec));
    spec_wire_t w = wire_of(&spec);
    pack_spec_wire(&buffer, &spec, &w);
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, spec_unpack_rc(&buffer));
    opal_buffer_destruct(&buffer);
}

/* Lists at their limits are accepted, one entry more is refused. The hosts limit is a million
 * entries: decoding them must not take time quadratic in their number. */
static void test_spec_list_limits(void **state)
{
    const size_t max_hosts = ORTE_JOB_MAX_HOSTS;
    char **hosts = calloc(max_hosts + 2, sizeof(char *));
    char **args = calloc(ORTE_JOB_MAX_ARGS + 2, sizeof(char *));
    orte_job_spec_t spec;
    orte_job_app_t app;
    opal_buffer_t buffer;
    (void) state;
    assert_non_null(hosts);
    assert_non_null(args);
    alarm(300); /* a hang guard for valgrind runs, not a timing assertion */
    for (size_t i = 0; i <= max_hosts; ++i) {
        hosts[i] = "h";
    }
    args[0] = "./prog";
    for (size_t i = 1; i <= ORTE_JOB_MAX_ARGS; ++i) {
        args[i] = "";
    }
    fill_minimal(&spec, &app);

    hosts[max_hosts] = NULL;
    spec.hosts = hosts;
    pack_spec(&spec, &buffer);
    orte_job_spec_t *got = unpack_spec(&buffer);
    assert_int_equal(max_hosts, opal_argv_count(got->hosts));
    assert_string_equal("h", got->hosts[max_hosts - 1]);
    orte_job_spec_free(got);
    opal_buffer_destruct(&buffer);
    hosts[max_hosts] = "h";
    pack_spec(&spec, &buffer);
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, spec_unpack_rc(&buffer));
    opal_buffer_destruct(&buffer);
    /* seq_hosts has the same limit */
    spec.hosts = NULL;
    app.seq_hosts = hosts;
    pack_spec(&spec, &buffer);
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, spec_unpack_rc(&buffer));
    opal_buffer_destruct(&buffer);
    app.seq_hosts = NULL;

    args[ORTE_JOB_MAX_ARGS] = NULL;
    app.argv = args;
    pack_spec(&spec, &buffer);
    got = unpack_spec(&buffer);
    assert_int_equal(ORTE_JOB_MAX_ARGS, opal_argv_count(got->apps[0].argv));
    orte_job_spec_free(got);
    opal_buffer_destruct(&buffer);
    args[ORTE_JOB_MAX_ARGS] = "";
    pack_spec(&spec, &buffer);
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, spec_unpack_rc(&buffer));
    opal_buffer_destruct(&buffer);
    alarm(0);
    free(hosts);
    free(args);
}

/* An optional string flagged present must be a string: the encoder never writes a NULL there,
 * and accepting one would give the same spec two encodings. */
static void test_spec_flagged_null_string(void **state)
{
    orte_job_spec_t spec;
    orte_job_app_t app;
    opal_buffer_t buffer;
    (void) state;
    fill_full(&spec, &app);
    app.cwd = NULL;
    spec_wire_t w = wire_of(&spec);
    w.null_cwd_flagged_present = true;
    pack_spec_wire(&buffer, &spec, &w);
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, spec_unpack_rc(&buffer));
    opal_buffer_destruct(&buffer);
}

/* Some other value where the spec starts, and bad arguments. */
static void test_spec_bad_input(void **state)
{
    orte_job_spec_t spec;
    orte_job_app_t app;
    orte_job_spec_t *got = SENTINEL;
    opal_buffer_t buffer;
    (void) state;
    opal_buffer_init(&buffer);
    assert_int_equal(HERD_SUCCESS, opal_buffer_pack_string(&buffer, "not a spec"));
    assert_int_not_equal(HERD_SUCCESS, spec_unpack_rc(&buffer));
    assert_int_not_equal(HERD_SUCCESS, launch_unpack_rc(&buffer, LAUNCH_DVM_NODES));
    opal_buffer_destruct(&buffer);
    fill_minimal(&spec, &app);
    assert_int_equal(HERD_ERR_BAD_PARAM, orte_job_spec_pack(NULL, &spec));
    assert_int_equal(HERD_ERR_BAD_PARAM, orte_job_spec_pack(&buffer, NULL));
    assert_int_equal(HERD_ERR_BAD_PARAM, orte_job_spec_unpack(NULL, &got));
    assert_ptr_equal(SENTINEL, got);
    assert_int_equal(HERD_ERR_BAD_PARAM, orte_job_spec_unpack(&buffer, NULL));
    orte_job_spec_free(NULL);
    orte_job_launch_free(NULL);
}

static void test_spec_truncated(void **state)
{
    orte_job_spec_t spec;
    orte_job_app_t apps[2];
    opal_buffer_t buffer;
    (void) state;
    fill_full(&spec, &apps[0]);
    apps[1] = apps[0];
    apps[1].cwd = NULL;
    spec.apps = apps;
    spec.num_apps = 2;
    pack_spec(&spec, &buffer);
    assert_every_prefix_rejected(&buffer, decode_spec);
    opal_buffer_destruct(&buffer);
}

/* ------------------------------------------------------------------------------------------ */
/* launch messages */

static void test_launch_roundtrip(void **state)
{
    orte_job_spec_t spec;
    orte_job_app_t app;
    orte_job_launch_t launch;
    orte_job_launch_t *got = NULL;
    opal_buffer_t buffer;
    (void) state;
    fill_full(&spec, &app);
    fill_launch(&launch, &spec);
    opal_buffer_init(&buffer);
    assert_int_equal(HERD_SUCCESS, orte_job_launch_pack(&buffer, &launch));
    assert_int_equal(HERD_SUCCESS, orte_job_launch_unpack(&buffer, LAUNCH_DVM_NODES, &got));
    assert_int_equal(0, opal_buffer_remaining(&buffer));
    assert_spec_equal(&spec, got->spec);
    assert_int_equal(32, got->radix);
    assert_int_equal(96, got->universe_size);
    assert_int_equal(3, got->num_candidates);
    assert_u32_array_equal(launch_index, got->node_index, 3);
    assert_u32_array_equal(launch_slots, got->slots, 3);
    assert_u32_array_equal(launch_max_slots, got->max_slots, 3);
    assert_u32_array_equal(launch_session_slot, got->session_slot, 3);
    assert_int_equal(2, got->num_participants);
    assert_u32_array_equal(launch_participants, got->participants, 2);
    assert_argv_equal(launch_xml_pairs, got->xml_pairs);
    orte_job_launch_free(got);
    opal_buffer_destruct(&buffer);

    /* a session daemon decodes without knowing the DVM's size */
    assert_int_equal(HERD_SUCCESS, launch_rc(&launch, UINT32_MAX));
}

/* One candidate that is the only participant, no XML, the smallest spec. */
static void test_launch_roundtrip_minimal(void **state)
{
    static uint32_t zero[] = {0};
    orte_job_spec_t spec;
    orte_job_app_t app;
    orte_job_launch_t launch;
    orte_job_launch_t *got = NULL;
    opal_buffer_t buffer;
    (void) state;
    fill_minimal(&spec, &app);
    memset(&launch, 0, sizeof(launch));
    launch.spec = &spec;
    launch.radix = 1;
    launch.num_candidates = 1;
    launch.node_index = zero;
    launch.slots = zero;
    launch.max_slots = zero;
    launch.num_participants = 1;
    launch.participants = zero;
    launch.session_slot = zero;
    opal_buffer_init(&buffer);
    assert_int_equal(HERD_SUCCESS, orte_job_launch_pack(&buffer, &launch));
    assert_int_equal(HERD_SUCCESS, orte_job_launch_unpack(&buffer, 1, &got));
    assert_spec_equal(&spec, got->spec);
    assert_int_equal(1, got->num_candidates);
    assert_int_equal(0, got->node_index[0]);
    assert_int_equal(0, got->participants[0]);
    assert_null(got->xml_pairs);
    orte_job_launch_free(got);
    opal_buffer_destruct(&buffer);
}

static void test_launch_participants(void **state)
{
    uint32_t parts[3];
    orte_job_spec_t spec;
    orte_job_app_t app;
    orte_job_launch_t launch;
    (void) state;
    fill_minimal(&spec, &app);
    fill_launch(&launch, &spec);
    launch.participants = parts;
    /* every candidate participates: fine */
    launch.num_participants = 3;
    parts[0] = 0, parts[1] = 1, parts[2] = 2;
    assert_int_equal(HERD_SUCCESS, launch_rc(&launch, LAUNCH_DVM_NODES));
    /* not ascending: a repeat, or out of order */
    parts[0] = 0, parts[1] = 1, parts[2] = 1;
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, launch_rc(&launch, LAUNCH_DVM_NODES));
    parts[0] = 0, parts[1] = 2, parts[2] = 1;
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, launch_rc(&launch, LAUNCH_DVM_NODES));
    /* out of range: not a candidate */
    launch.num_participants = 2;
    parts[0] = 1, parts[1] = 3;
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, launch_rc(&launch, LAUNCH_DVM_NODES));
    parts[0] = 1, parts[1] = UINT32_MAX;
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, launch_rc(&launch, LAUNCH_DVM_NODES));
    /* none, or more than the candidates */
    launch.num_participants = 0;
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, launch_rc(&launch, LAUNCH_DVM_NODES));
    uint32_t many[4] = {0, 1, 2, 3};
    launch.participants = many;
    launch.num_participants = 4;
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, launch_rc(&launch, LAUNCH_DVM_NODES));
}

static void test_launch_node_index(void **state)
{
    uint32_t index[3] = {1, 4, 6};
    orte_job_spec_t spec;
    orte_job_app_t app;
    orte_job_launch_t launch;
    (void) state;
    fill_minimal(&spec, &app);
    fill_launch(&launch, &spec);
    launch.node_index = index;
    /* the last candidate is the DVM's last node: fine; one node fewer: out of range */
    assert_int_equal(HERD_SUCCESS, launch_rc(&launch, 7));
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, launch_rc(&launch, 6));
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, launch_rc(&launch, 0));
    /* more candidates than DVM nodes */
    index[0] = 0, index[1] = 1, index[2] = 2;
    assert_int_equal(HERD_SUCCESS, launch_rc(&launch, 3));
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, launch_rc(&launch, 2));
    /* not ascending */
    index[0] = 1, index[1] = 1, index[2] = 2;
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, launch_rc(&launch, LAUNCH_DVM_NODES));
    index[0] = 2, index[1] = 1, index[2] = 3;
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, launch_rc(&launch, LAUNCH_DVM_NODES));
    index[0] = 0, index[1] = 5, index[2] = UINT32_MAX;
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, launch_rc(&launch, UINT32_MAX));
    /* no candidates */
    launch.num_candidates = 0;
    launch.num_participants = 0;
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, launch_rc(&launch, LAUNCH_DVM_NODES));
}

static void test_launch_array_lengths(void **state)
{
    orte_job_spec_t spec;
    orte_job_app_t app;
    (void) state;
    fill_minimal(&spec, &app);
    assert_int_equal(HERD_SUCCESS, launch_arrays_rc(&spec, 3, 3, 3));
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, launch_arrays_rc(&spec, 3, 2, 3));
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, launch_arrays_rc(&spec, 3, 3, 4));
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, launch_arrays_rc(&spec, 2, 3, 3));
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, launch_arrays_rc(&spec, 3, 0, 0));
}

static void test_launch_xml_pairs_and_radix(void **state)
{
    static char *odd[] = {"00aa", "<topology/>", "00bb", NULL};
    static char *empty_xml[] = {"00aa", "", NULL};
    orte_job_spec_t spec;
    orte_job_app_t app;
    orte_job_launch_t launch;
    (void) state;
    fill_minimal(&spec, &app);
    fill_launch(&launch, &spec);
    launch.xml_pairs = odd;
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, launch_rc(&launch, LAUNCH_DVM_NODES));
    launch.xml_pairs = empty_xml; /* a pair whose XML is empty is still a pair */
    assert_int_equal(HERD_SUCCESS, launch_rc(&launch, LAUNCH_DVM_NODES));
    launch.xml_pairs = NULL;
    launch.radix = 0;
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, launch_rc(&launch, LAUNCH_DVM_NODES));
    launch.radix = UINT32_MAX;
    assert_int_equal(HERD_SUCCESS, launch_rc(&launch, LAUNCH_DVM_NODES));
}

/* The spec inside a launch message is checked as when alone: a bad app fails the launch, with
 * the candidates' arrays never looked at. */
static void test_launch_bad_spec(void **state)
{
    orte_job_spec_t spec;
    orte_job_app_t app;
    orte_job_launch_t launch;
    opal_buffer_t buffer;
    (void) state;
    fill_full(&spec, &app);
    fill_launch(&launch, &spec);
    app.argv = NULL;
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, launch_rc(&launch, LAUNCH_DVM_NODES));
    app.argv = full_argv;
    spec.jobid = "a/b";
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, launch_rc(&launch, LAUNCH_DVM_NODES));
    /* no spec to pack: the encoder says so */
    launch.spec = NULL;
    opal_buffer_init(&buffer);
    assert_int_equal(HERD_ERR_BAD_PARAM, orte_job_launch_pack(&buffer, &launch));
    opal_buffer_destruct(&buffer);
}

static void test_launch_truncated(void **state)
{
    orte_job_spec_t spec;
    orte_job_app_t app;
    orte_job_launch_t launch;
    opal_buffer_t buffer;
    (void) state;
    fill_full(&spec, &app);
    fill_launch(&launch, &spec);
    opal_buffer_init(&buffer);
    assert_int_equal(HERD_SUCCESS, orte_job_launch_pack(&buffer, &launch));
    assert_every_prefix_rejected(&buffer, decode_launch);
    opal_buffer_destruct(&buffer);
}

/* ------------------------------------------------------------------------------------------ */
/* process records */

static orte_proc_record_t record_exited(int32_t exit_code)
{
    return (orte_proc_record_t){.rank = 3,
                                .node = 1,
                                .app = 0,
                                .pid = 4242,
                                .state = ORTE_PROC_EXITED,
                                .exit_code = exit_code};
}

static orte_proc_record_t record_roundtrip(const orte_proc_record_t *record)
{
    opal_buffer_t buffer;
    orte_proc_record_t got;
    opal_buffer_init(&buffer);
    assert_int_equal(HERD_SUCCESS, orte_proc_record_pack(&buffer, record));
    memset(&got, 0x5a, sizeof(got));
    assert_int_equal(HERD_SUCCESS, orte_proc_record_unpack(&buffer, &got));
    assert_int_equal(0, opal_buffer_remaining(&buffer));
    opal_buffer_destruct(&buffer);
    return got;
}

static void test_record_roundtrip(void **state)
{
    const orte_proc_record_t records[] = {
        {.rank = UINT32_MAX,
         .node = 7,
         .app = 2,
         .pid = INT32_MAX,
         .state = ORTE_PROC_EXITED,
         .signaled = true,
         .aborted = true,
         .exit_code = 255,
         .signo = 127,
         .wall_ns = UINT64_MAX,
         .user_us = 1,
         .sys_us = UINT64_MAX - 1,
         .max_rss_kb = INT64_MIN},
        {.rank = 0, .state = ORTE_PROC_LOST, .exit_code = 1, .max_rss_kb = -1},
        {.rank = 5,
         .state = ORTE_PROC_START_FAILED,
         .exit_code = 127,
         .pid = -1,
         .max_rss_kb = INT64_MAX},
    };
    (void) state;
    for (size_t i = 0; i < sizeof(records) / sizeof(records[0]); ++i) {
        orte_proc_record_t got = record_roundtrip(&records[i]);
        const orte_proc_record_t *e = &records[i];
        assert_int_equal(e->rank, got.rank);
        assert_int_equal(e->node, got.node);
        assert_int_equal(e->app, got.app);
        assert_int_equal(e->pid, got.pid);
        assert_int_equal(e->state, got.state);
        assert_int_equal(e->signaled, got.signaled);
        assert_int_equal(e->aborted, got.aborted);
        assert_int_equal(e->exit_code, got.exit_code);
        assert_int_equal(e->signo, got.signo);
        assert_true(e->wall_ns == got.wall_ns);
        assert_true(e->user_us == got.user_us);
        assert_true(e->sys_us == got.sys_us);
        assert_true(e->max_rss_kb == got.max_rss_kb);
    }
}

/* What the launcher and the error manager make of a record, after it crossed the wire. */
static void check_record(const orte_proc_record_t *record, bool failed, int status,
                         const char *text)
{
    char described[128];
    orte_proc_record_t got = record_roundtrip(record);
    assert_int_equal(failed, orte_proc_record_failed(&got));
    assert_int_equal(status, orte_proc_record_status(&got));
    orte_proc_record_describe(&got, described, sizeof(described));
    assert_string_equal(text, described);
}

static void test_record_exit_0(void **state)
{
    (void) state;
    orte_proc_record_t r = record_exited(0);
    check_record(&r, false, 0, "exited with status 0");
    /* ended by the job's abort yet cleanly: still not a failure */
    r.aborted = true;
    check_record(&r, false, 0, "exited with status 0");
}

static void test_record_exit_3(void **state)
{
    (void) state;
    orte_proc_record_t r = record_exited(3);
    check_record(&r, true, 3, "exited with status 3");
}

static void test_record_signal_9(void **state)
{
    (void) state;
    orte_proc_record_t r = record_exited(0);
    r.signaled = true;
    r.signo = SIGKILL;
    check_record(&r, true, 137, "was killed by signal 9 (Killed)");
}

static void test_record_start_failed(void **state)
{
    (void) state;
    orte_proc_record_t r = record_exited(127);
    r.state = ORTE_PROC_START_FAILED;
    r.pid = 0;
    /* whatever the exit code says, a launcher exits 1 for a process that never ran */
    check_record(&r, true, 1, "could not be started");
    r.exit_code = 0;
    check_record(&r, true, 1, "could not be started");
}

static void test_record_lost(void **state)
{
    (void) state;
    orte_proc_record_t r = record_exited(0);
    r.state = ORTE_PROC_LOST;
    check_record(&r, true, 1, "was lost with its node's session daemon");
}

static void test_record_aborted(void **state)
{
    (void) state;
    orte_proc_record_t r = record_exited(5);
    r.state = ORTE_PROC_ABORTED;
    check_record(&r, true, 5, "called abort with status 5");
    /* an aborted job never reports success, even for abort(0) */
    r.exit_code = 0;
    check_record(&r, true, 1, "called abort with status 0");
}

static void test_record_unfinalized(void **state)
{
    (void) state;
    orte_proc_record_t r = record_exited(0);
    r.state = ORTE_PROC_UNFINALIZED;
    check_record(&r, true, 1,
                 "exited with status 0 without finalizing (after MPI_Init, PMIx_Init or "
                 "herd_init)");
}

/* A spawn request and the broadcast of it: every field survives the wire; every truncation, a
 * preput list whose keys and values disagree, or an app without a process count is refused. */
static void test_spawn_roundtrip_and_rejects(void **state)
{
    (void) state;
    orte_job_spec_t spec;
    orte_job_app_t app;
    fill_minimal(&spec, &app);
    app.np = 2;
    char *keys[] = {"PARENT_ROOT_PORT_NAME", "other", NULL};
    char *values[] = {"tag#0$description#x$", "", NULL};
    orte_job_spawn_t sp = {.req_id = 7,
                           .requester = 3,
                           .parent_nspace = 0,
                           .parent_rank = 5,
                           .nspace = 2,
                           .offset = 100,
                           .spec = &spec,
                           .preput_keys = keys,
                           .preput_values = values,
                           .num_preput = 2};
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    assert_int_equal(HERD_SUCCESS, orte_job_spawn_pack(&buffer, &sp));
    size_t full = buffer.used;
    orte_job_spawn_t *got = NULL;
    assert_int_equal(HERD_SUCCESS, orte_job_spawn_unpack(&buffer, &got));
    assert_int_equal(0, opal_buffer_remaining(&buffer));
    assert_int_equal(7, got->req_id);
    assert_int_equal(3, got->requester);
    assert_int_equal(5, got->parent_rank);
    assert_int_equal(2, got->nspace);
    assert_int_equal(100, got->offset);
    assert_int_equal(2, got->num_preput);
    assert_string_equal("PARENT_ROOT_PORT_NAME", got->preput_keys[0]);
    assert_string_equal("", got->preput_values[1]);
    assert_int_equal(2, got->spec->apps[0].np);
    orte_job_spawn_free(got);
    for (size_t cut = 0; cut < full; ++cut) {
        opal_buffer_t part;
        opal_buffer_init(&part);
        assert_int_equal(HERD_SUCCESS, opal_buffer_load(&part, buffer.base, cut));
        got = SENTINEL;
        assert_int_not_equal(HERD_SUCCESS, orte_job_spawn_unpack(&part, &got));
        assert_ptr_equal(SENTINEL, got);
        opal_buffer_destruct(&part);
    }
    opal_buffer_destruct(&buffer);
    /* keys and values must pair up: the encoder refuses, a forged message is refused */
    sp.num_preput = 1;
    opal_buffer_init(&buffer);
    assert_int_equal(HERD_ERR_BAD_PARAM, orte_job_spawn_pack(&buffer, &sp));
    opal_buffer_destruct(&buffer);
    char *one[] = {"k", NULL};
    sp.preput_values = one;
    sp.preput_keys = keys;
    sp.num_preput = 2;
    opal_buffer_init(&buffer);
    assert_int_equal(HERD_ERR_BAD_PARAM, orte_job_spawn_pack(&buffer, &sp));
    opal_buffer_destruct(&buffer);
    /* a spawn's app must say how many */
    sp.preput_keys = sp.preput_values = NULL;
    sp.num_preput = 0;
    app.np = 0;
    opal_buffer_init(&buffer);
    assert_int_equal(HERD_SUCCESS, orte_job_spawn_pack(&buffer, &sp));
    got = SENTINEL;
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, orte_job_spawn_unpack(&buffer, &got));
    opal_buffer_destruct(&buffer);
}

/* describe never writes past the size it is given. */
static void test_record_describe_small(void **state)
{
    char text[12];
    (void) state;
    orte_proc_record_t r = record_exited(0);
    r.signaled = true;
    r.signo = SIGTERM;
    memset(text, 'x', sizeof(text));
    orte_proc_record_describe(&r, text, 8);
    assert_string_equal("was kil", text);
    assert_int_equal('x', text[8]);
}

/* A signaled record needs a signal number (1-127), an exit code is 8 bits as wait() reports it
 * (a launcher exiting with 256 would look like success), the state must be one there is. */
static void test_record_rejects(void **state)
{
    const int32_t bad_signals[] = {0, -1, 128, INT32_MIN, INT32_MAX};
    const int32_t bad_exit_codes[] = {-1, 256, 262144, INT32_MIN, INT32_MAX};
    opal_buffer_t buffer;
    (void) state;
    for (size_t i = 0; i < sizeof(bad_exit_codes) / sizeof(bad_exit_codes[0]); ++i) {
        orte_proc_record_t r = record_exited(bad_exit_codes[i]);
        opal_buffer_init(&buffer);
        assert_int_equal(HERD_SUCCESS, orte_proc_record_pack(&buffer, &r));
        assert_int_equal(HERD_ERR_UNPACK_FAILURE, decode_record(&buffer));
        opal_buffer_destruct(&buffer);
        r.state = ORTE_PROC_START_FAILED; /* whatever the state */
        opal_buffer_init(&buffer);
        assert_int_equal(HERD_SUCCESS, orte_proc_record_pack(&buffer, &r));
        assert_int_equal(HERD_ERR_UNPACK_FAILURE, decode_record(&buffer));
        opal_buffer_destruct(&buffer);
    }
    for (size_t i = 0; i < sizeof(bad_signals) / sizeof(bad_signals[0]); ++i) {
        orte_proc_record_t r = record_exited(0);
        r.signaled = true;
        r.signo = bad_signals[i];
        opal_buffer_init(&buffer);
        assert_int_equal(HERD_SUCCESS, orte_proc_record_pack(&buffer, &r));
        assert_int_equal(HERD_ERR_UNPACK_FAILURE, decode_record(&buffer));
        opal_buffer_destruct(&buffer);
    }
    /* the signal number is ignored when not signaled */
    orte_proc_record_t r = record_exited(2);
    r.signo = 0;
    opal_buffer_init(&buffer);
    assert_int_equal(HERD_SUCCESS, orte_proc_record_pack(&buffer, &r));
    assert_int_equal(HERD_SUCCESS, decode_record(&buffer));
    opal_buffer_destruct(&buffer);
    /* the states after LOST: a process that called abort, one that did not finalize */
    for (uint8_t state = ORTE_PROC_ABORTED; state <= ORTE_PROC_UNFINALIZED; ++state) {
        r.state = state;
        opal_buffer_init(&buffer);
        assert_int_equal(HERD_SUCCESS, orte_proc_record_pack(&buffer, &r));
        assert_int_equal(HERD_SUCCESS, decode_record(&buffer));
        opal_buffer_destruct(&buffer);
    }
    r.state = ORTE_PROC_UNFINALIZED + 1;
    opal_buffer_init(&buffer);
    assert_int_equal(HERD_SUCCESS, orte_proc_record_pack(&buffer, &r));
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, decode_record(&buffer));
    opal_buffer_destruct(&buffer);
    r.state = UINT8_MAX;
    opal_buffer_init(&buffer);
    assert_int_equal(HERD_SUCCESS, orte_proc_record_pack(&buffer, &r));
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, decode_record(&buffer));
    opal_buffer_destruct(&buffer);
}

static void test_record_truncated(void **state)
{
    opal_buffer_t buffer;
    (void) state;
    orte_proc_record_t r = record_exited(0);
    r.signaled = true;
    r.signo = SIGSEGV;
    r.max_rss_kb = 123456;
    opal_buffer_init(&buffer);
    assert_int_equal(HERD_SUCCESS, orte_proc_record_pack(&buffer, &r));
    assert_every_prefix_rejected(&buffer, decode_record);
    opal_buffer_destruct(&buffer);
}

/* ------------------------------------------------------------------------------------------ */
/* inventories */

static orte_inventory_t *synthetic_inventory(const char *name, const char *synthetic)
{
    orte_inventory_t *inv = NULL;
    assert_int_equal(HERD_SUCCESS, orte_inventory_collect(name, synthetic, NULL, &inv));
    assert_non_null(inv);
    /* a simulated node's XML is made only when asked for, then kept */
    assert_null(inv->xml);
    const char *xml = orte_inventory_xml(inv);
    assert_non_null(xml);
    assert_non_null(strstr(xml, "<topology"));
    assert_ptr_equal(xml, orte_inventory_xml(inv));
    return inv;
}

static orte_inventory_t *inventory_roundtrip(const orte_inventory_t *inv, bool with_xml)
{
    opal_buffer_t buffer;
    orte_inventory_t *got = NULL;
    opal_buffer_init(&buffer);
    assert_int_equal(HERD_SUCCESS, orte_inventory_pack(&buffer, inv, with_xml));
    assert_int_equal(HERD_SUCCESS, orte_inventory_unpack(&buffer, &got));
    assert_int_equal(0, opal_buffer_remaining(&buffer));
    opal_buffer_destruct(&buffer);
    assert_non_null(got);
    assert_string_equal(inv->node_name, got->node_name);
    assert_int_equal(inv->slots, got->slots);
    assert_int_equal(inv->num_packages, got->num_packages);
    assert_int_equal(inv->num_cores, got->num_cores);
    assert_int_equal(inv->num_pus, got->num_pus);
    assert_string_equal(inv->signature, got->signature);
    assert_opt_string_equal(inv->synthetic, got->synthetic);
    assert_opt_string_equal(with_xml ? inv->xml : NULL, got->xml);
    assert_int_equal(inv->num_fabric, got->num_fabric);
    for (size_t i = 0; i < inv->num_fabric; ++i) {
        assert_string_equal(inv->fabric[i]->component, got->fabric[i]->component);
        assert_int_equal(inv->fabric[i]->num_devices, got->fabric[i]->num_devices);
        assert_int_equal(inv->fabric[i]->num_attrs, got->fabric[i]->num_attrs);
    }
    assert_argv_equal(inv->session_uris, got->session_uris);
    return got;
}

static void add_fabric(orte_inventory_t *inv)
{
    opal_fabric_record_t *record = opal_fabric_record_new("tcp");
    assert_non_null(record);
    assert_int_equal(HERD_SUCCESS, opal_fabric_record_add_attr(record, "version", "1"));
    opal_fabric_device_t *device = opal_fabric_record_add_device(record, "eth0", "ethernet");
    assert_non_null(device);
    assert_int_equal(HERD_SUCCESS, opal_fabric_device_add_attr(device, "address", "10.0.0.1"));
    inv->fabric = calloc(1, sizeof(*inv->fabric));
    assert_non_null(inv->fabric);
    inv->fabric[0] = record;
    inv->num_fabric = 1;
}

static void test_inventory_roundtrip_session_uris(void **state)
{
    (void) state;
    orte_inventory_t *inv = synthetic_inventory("n0", T_2X4X2);
    assert_int_equal(8, inv->slots);
    assert_non_null(inv->xml);
    assert_int_equal(HERD_SUCCESS, opal_argv_append(&inv->session_uris, "tcp://10.0.0.1:4000"));
    assert_int_equal(HERD_SUCCESS, opal_argv_append(&inv->session_uris, "tcp://[fd00::1]:4001"));
    assert_int_equal(HERD_SUCCESS, opal_argv_append(&inv->session_uris, ""));
    add_fabric(inv);
    orte_inventory_t *got = inventory_roundtrip(inv, true);
    assert_string_equal("tcp://[fd00::1]:4001", got->session_uris[1]);
    assert_string_equal("eth0", got->fabric[0]->devices[0].name);
    orte_inventory_free(got);
    got = inventory_roundtrip(inv, false); /* the receiver knows this signature's XML */
    assert_null(got->xml);
    orte_inventory_free(got);
    orte_inventory_free(inv);
}

static void test_inventory_roundtrip_no_session_uris(void **state)
{
    (void) state;
    orte_inventory_t *inv = synthetic_inventory("node-with-a-long-name", T_2X2X1);
    assert_null(inv->session_uris);
    orte_inventory_t *got = inventory_roundtrip(inv, true);
    assert_null(got->session_uris);
    assert_int_equal(0, got->num_fabric);
    orte_inventory_free(got);
    /* a real machine's inventory has no synthetic description */
    free(inv->synthetic);
    inv->synthetic = NULL;
    got = inventory_roundtrip(inv, true);
    assert_null(got->synthetic);
    orte_inventory_free(got);
    orte_inventory_free(inv);
}

static int inventory_rc(const orte_inventory_t *inv)
{
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    assert_int_equal(HERD_SUCCESS, orte_inventory_pack(&buffer, inv, false));
    int rc = decode_inventory(&buffer);
    opal_buffer_destruct(&buffer);
    return rc;
}

/* At most 1024 session endpoints (a daemon holds a listener for each); the list must not hold a
 * NULL. */
static void test_inventory_session_uris_limit(void **state)
{
    (void) state;
    orte_inventory_t *inv = synthetic_inventory("n0", T_2X2X1);
    inv->session_uris = calloc(1026, sizeof(char *));
    assert_non_null(inv->session_uris);
    for (size_t i = 0; i < 1024; ++i) {
        inv->session_uris[i] = strdup("tcp://10.1.2.3:5000");
        assert_non_null(inv->session_uris[i]);
    }
    assert_int_equal(HERD_SUCCESS, inventory_rc(inv));
    inv->session_uris[1024] = strdup("tcp://10.1.2.3:5001");
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, inventory_rc(inv));

    /* The list is the message's last value: count, common prefix, and the rests (NUL-ended) as
     * one byte string; a good one in its place is the control, then each way of getting it wrong.
     */
    static const struct {
        uint32_t count;
        const char *rests;
        size_t len;
        int rc;
    } lists[] = {
        {2, "a:1\0b:2\0", 8, HERD_SUCCESS},
        {2, "a:1\0", 4, HERD_ERR_UNPACK_FAILURE},      /* fewer rests than URIs */
        {1, "a:1\0b:2\0", 8, HERD_ERR_UNPACK_FAILURE}, /* more */
        {1, "a:1", 3, HERD_ERR_UNPACK_FAILURE},        /* not NUL-ended */
        {0, "a:1\0", 4, HERD_ERR_UNPACK_FAILURE},      /* rests of no URI */
        {1025, "a:1\0", 4, HERD_ERR_UNPACK_FAILURE},   /* over the limit */
    };
    char **uris = inv->session_uris;
    opal_buffer_t buffer, empty;
    inv->session_uris = NULL;
    opal_buffer_init(&buffer);
    opal_buffer_init(&empty);
    assert_int_equal(HERD_SUCCESS, orte_inventory_pack(&buffer, inv, false));
    assert_int_equal(HERD_SUCCESS, opal_buffer_pack_uint32(&empty, 0));
    assert_int_equal(HERD_SUCCESS, opal_buffer_pack_string(&empty, ""));
    assert_int_equal(HERD_SUCCESS, opal_buffer_pack_bytes(&empty, "", 0));
    size_t without_list = buffer.used - empty.used;
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); ++i) {
        buffer.used = without_list;
        buffer.unpack_offset = 0;
        assert_int_equal(HERD_SUCCESS, opal_buffer_pack_uint32(&buffer, lists[i].count));
        assert_int_equal(HERD_SUCCESS, opal_buffer_pack_string(&buffer, "tcp://"));
        assert_int_equal(HERD_SUCCESS,
                         opal_buffer_pack_bytes(&buffer, lists[i].rests, lists[i].len));
        orte_inventory_t *got = NULL;
        assert_int_equal(lists[i].rc, orte_inventory_unpack(&buffer, &got));
        if (HERD_SUCCESS == lists[i].rc) {
            assert_int_equal(2, opal_argv_count(got->session_uris));
            assert_string_equal("tcp://a:1", got->session_uris[0]);
            assert_string_equal("tcp://b:2", got->session_uris[1]);
            orte_inventory_free(got);
        }
    }
    opal_buffer_destruct(&buffer);
    opal_buffer_destruct(&empty);
    inv->session_uris = uris;
    orte_inventory_free(inv);
}

static void test_inventory_rejects(void **state)
{
    opal_buffer_t buffer;
    (void) state;
    orte_inventory_t *inv = synthetic_inventory("n0", T_2X2X1);
    assert_int_equal(HERD_SUCCESS, opal_argv_append(&inv->session_uris, "tcp://10.0.0.1:4000"));
    /* format 1 had no session endpoints, 2 sent each session URI whole: refused as another
     * version, as is any other */
    opal_buffer_init(&buffer);
    assert_int_equal(HERD_SUCCESS, orte_inventory_pack(&buffer, inv, false));
    assert_int_equal(3, buffer.base[4]); /* the version: a uint32 after its type tag */
    buffer.base[4] = 2;
    assert_int_equal(HERD_ERR_VERSION_MISMATCH, decode_inventory(&buffer));
    buffer.unpack_offset = 0;
    buffer.base[4] = 4;
    assert_int_equal(HERD_ERR_VERSION_MISMATCH, decode_inventory(&buffer));
    opal_buffer_destruct(&buffer);
    /* a node without a name or signature */
    char *name = inv->node_name;
    inv->node_name = NULL;
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, inventory_rc(inv));
    inv->node_name = name;
    char *signature = inv->signature;
    inv->signature = NULL;
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, inventory_rc(inv));
    inv->signature = signature;
    orte_inventory_free(inv);
}

static void test_inventory_truncated(void **state)
{
    opal_buffer_t buffer;
    (void) state;
    orte_inventory_t *inv = synthetic_inventory("n0", T_2X2X1);
    assert_int_equal(HERD_SUCCESS, opal_argv_append(&inv->session_uris, "tcp://10.0.0.1:4000"));
    assert_int_equal(HERD_SUCCESS, opal_argv_append(&inv->session_uris, "tcp://10.0.0.1:4001"));
    add_fabric(inv);
    opal_buffer_init(&buffer);
    assert_int_equal(HERD_SUCCESS, orte_inventory_pack(&buffer, inv, false));
    assert_every_prefix_rejected(&buffer, decode_inventory);
    opal_buffer_destruct(&buffer);
    orte_inventory_free(inv);
}

/* ------------------------------------------------------------------------------------------ */
/* the mapper's apps */

static void test_jobmap_apps_policies(void **state)
{
    orte_job_spec_t spec;
    orte_job_app_t apps[3];
    orte_rmaps_app_t *mapped = NULL;
    (void) state;
    fill_minimal(&spec, &apps[0]);
    apps[0].np = 4;
    apps[0].map_by = "core:PE=2";
    apps[0].rank_by = "node";
    apps[0].bind_to = "hwthread";
    apps[1] = apps[0];
    apps[1].np = 0;
    apps[1].map_by = "seq";
    apps[1].rank_by = NULL;
    apps[1].bind_to = NULL;
    apps[1].seq_hosts = full_seq;
    apps[2] = apps[0];
    apps[2].np = 7;
    apps[2].map_by = "ppr:2:socket";
    apps[2].rank_by = NULL;
    apps[2].bind_to = "none";
    spec.apps = apps;
    spec.num_apps = 3;
    assert_int_equal(HERD_SUCCESS, orte_jobmap_apps(&spec, &mapped));
    assert_int_equal(4, mapped[0].np);
    assert_int_equal(ORTE_RMAPS_MAP_CORE, mapped[0].policy.mapping);
    assert_int_equal(2, mapped[0].policy.pe);
    assert_int_equal(ORTE_RMAPS_RANK_NODE, mapped[0].policy.ranking);
    assert_int_equal(ORTE_RMAPS_BIND_HWTHREAD, mapped[0].policy.binding);
    assert_null(mapped[0].policy.seq_hosts);
    assert_int_equal(0, mapped[1].np);
    assert_int_equal(ORTE_RMAPS_MAP_SEQ, mapped[1].policy.mapping);
    /* borrowed from the spec, not copied */
    assert_ptr_equal(full_seq, mapped[1].policy.seq_hosts);
    assert_int_equal(ORTE_RMAPS_RANK_DEFAULT, mapped[1].policy.ranking);
    assert_int_equal(ORTE_RMAPS_BIND_DEFAULT, mapped[1].policy.binding);
    assert_int_equal(7, mapped[2].np);
    assert_int_equal(ORTE_RMAPS_MAP_PPR, mapped[2].policy.mapping);
    assert_int_equal(2, mapped[2].policy.ppr_count);
    assert_int_equal(ORTE_RMAPS_MAP_PACKAGE, mapped[2].policy.ppr_object);
    assert_int_equal(ORTE_RMAPS_BIND_NONE, mapped[2].policy.binding);
    for (uint32_t a = 0; a < 3; ++a) {
        assert_int_equal(ORTE_RMAPS_OVERSUB_DEFAULT, mapped[a].policy.oversubscribe);
    }
    free(mapped);
}

/* --oversubscribe / --nooversubscribe apply to every app whose --map-by has no modifier of its
 * own. */
static void test_jobmap_apps_oversubscribe(void **state)
{
    static const struct {
        bool oversubscribe, nooversubscribe;
        const char *map_by;
        orte_rmaps_oversubscribe_t expected;
    } cases[] = {
        {false, false, "core", ORTE_RMAPS_OVERSUB_DEFAULT},
        {true, false, "core", ORTE_RMAPS_OVERSUB_ALLOW},
        {false, true, "core", ORTE_RMAPS_OVERSUB_FORBID},
        {true, false, NULL, ORTE_RMAPS_OVERSUB_ALLOW},
        {false, true, NULL, ORTE_RMAPS_OVERSUB_FORBID},
        {true, false, "core:NOOVERSUBSCRIBE", ORTE_RMAPS_OVERSUB_FORBID},
        {false, true, "node:OVERSUBSCRIBE", ORTE_RMAPS_OVERSUB_ALLOW},
        {false, false, "slot:OVERSUBSCRIBE", ORTE_RMAPS_OVERSUB_ALLOW},
        {true, false, "ppr:1:core:nooversubscribe", ORTE_RMAPS_OVERSUB_FORBID},
        /* herdrun refuses both options; if both came, the permissive one would win */
        {true, true, "core", ORTE_RMAPS_OVERSUB_ALLOW},
    };
    orte_job_spec_t spec;
    orte_job_app_t apps[2];
    (void) state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        orte_rmaps_app_t *mapped = NULL;
        fill_minimal(&spec, &apps[0]);
        apps[0].map_by = (char *) cases[i].map_by;
        apps[1] = apps[0];
        apps[1].map_by = "package"; /* a second app without a modifier */
        spec.apps = apps;
        spec.num_apps = 2;
        spec.oversubscribe = cases[i].oversubscribe;
        spec.nooversubscribe = cases[i].nooversubscribe;
        assert_int_equal(HERD_SUCCESS, orte_jobmap_apps(&spec, &mapped));
        if (cases[i].expected != mapped[0].policy.oversubscribe) {
            fail_msg("case %zu (--map-by %s): oversubscribe %d, expected %d", i,
                     NULL != cases[i].map_by ? cases[i].map_by : "(default)",
                     (int) mapped[0].policy.oversubscribe, (int) cases[i].expected);
        }
        orte_rmaps_oversubscribe_t job_wide =
            spec.oversubscribe
                ? ORTE_RMAPS_OVERSUB_ALLOW
                : (spec.nooversubscribe ? ORTE_RMAPS_OVERSUB_FORBID : ORTE_RMAPS_OVERSUB_DEFAULT);
        assert_int_equal(job_wide, mapped[1].policy.oversubscribe);
        free(mapped);
    }
}

/* A bad policy in any app is reported (naming the option) and nothing is returned. */
static void test_jobmap_apps_bad_policy(void **state)
{
    orte_job_spec_t spec;
    orte_job_app_t apps[2];
    orte_rmaps_app_t *mapped = SENTINEL;
    herd_test_capture_t capture;
    (void) state;
    fill_minimal(&spec, &apps[0]);
    apps[1] = apps[0];
    apps[1].bind_to = "board";
    spec.apps = apps;
    spec.num_apps = 2;
    herd_test_capture_start(&capture);
    int rc = orte_jobmap_apps(&spec, &mapped);
    char *err = herd_test_capture_stop(&capture);
    assert_int_equal(HERD_ERR_BAD_PARAM, rc);
    assert_ptr_equal(SENTINEL, mapped);
    assert_contains(err, "The value \"board\" of --bind-to is not valid");
    free(err);
}

/* ------------------------------------------------------------------------------------------ */
/* the mapper's nodes */

static void test_jobmap_nodes_shared_topologies(void **state)
{
    const uint32_t slots[] = {1, 2, 3, 4};
    const uint32_t max_slots[] = {0, 5, 0, 6};
    orte_inventory_t *inv[4];
    orte_jobmap_nodes_t nodes;
    (void) state;
    inv[0] = synthetic_inventory("n0", T_2X4X2);
    inv[1] = synthetic_inventory("n1", T_2X2X1);
    inv[2] = synthetic_inventory("n2", T_2X4X2);
    inv[3] = synthetic_inventory("n3", T_2X2X1);
    assert_string_equal(inv[0]->signature, inv[2]->signature);
    assert_string_not_equal(inv[0]->signature, inv[1]->signature);

    assert_int_equal(HERD_SUCCESS, orte_jobmap_nodes_build(inv, slots, max_slots, 4, NULL, &nodes));
    assert_int_equal(4, nodes.num);
    assert_int_equal(2, nodes.num_topologies); /* one per distinct signature */
    assert_ptr_equal(nodes.nodes[0].topology, nodes.nodes[2].topology);
    assert_ptr_equal(nodes.nodes[1].topology, nodes.nodes[3].topology);
    assert_ptr_not_equal(nodes.nodes[0].topology, nodes.nodes[1].topology);
    assert_int_equal(8, hwloc_get_nbobjs_by_type(nodes.nodes[2].topology, HWLOC_OBJ_CORE));
    assert_int_equal(4, hwloc_get_nbobjs_by_type(nodes.nodes[3].topology, HWLOC_OBJ_CORE));
    for (uint32_t i = 0; i < 4; ++i) {
        assert_ptr_equal(inv[i]->node_name, nodes.nodes[i].name); /* borrowed */
        assert_int_equal(slots[i], nodes.nodes[i].slots);
        assert_int_equal(max_slots[i], nodes.nodes[i].max_slots);
        assert_true(nodes.simulated[i]);
    }
    orte_jobmap_nodes_destruct(&nodes);
    assert_null(nodes.nodes);
    assert_int_equal(0, nodes.num_topologies);

    /* without the allocation's numbers: the inventory's slots, no max_slots */
    assert_int_equal(HERD_SUCCESS, orte_jobmap_nodes_build(inv, NULL, NULL, 4, NULL, &nodes));
    assert_int_equal(8, nodes.nodes[0].slots);
    assert_int_equal(4, nodes.nodes[1].slots);
    assert_int_equal(0, nodes.nodes[1].max_slots);
    orte_jobmap_nodes_destruct(&nodes);
    for (uint32_t i = 0; i < 4; ++i) {
        orte_inventory_free(inv[i]);
    }
}

/* A real node's topology comes from its inventory's XML, or from the launch message's XML pairs
 * when the inventory came without it. */
static void test_jobmap_nodes_xml(void **state)
{
    orte_inventory_t *inv[3];
    orte_jobmap_nodes_t nodes;
    (void) state;
    for (uint32_t i = 0; i < 3; ++i) {
        char name[8];
        snprintf(name, sizeof(name), "r%u", i);
        inv[i] = synthetic_inventory(name, 0 == i ? T_2X2X1 : T_2X4X2);
        free(inv[i]->synthetic); /* as a real machine's */
        inv[i]->synthetic = NULL;
    }
    /* r2 shares r1's signature: r1's XML serves it */
    free(inv[2]->xml);
    inv[2]->xml = NULL;
    assert_int_equal(HERD_SUCCESS, orte_jobmap_nodes_build(inv, NULL, NULL, 3, NULL, &nodes));
    assert_int_equal(2, nodes.num_topologies);
    assert_ptr_equal(nodes.nodes[1].topology, nodes.nodes[2].topology);
    assert_int_equal(4, hwloc_get_nbobjs_by_type(nodes.nodes[0].topology, HWLOC_OBJ_CORE));
    for (uint32_t i = 0; i < 3; ++i) {
        assert_false(nodes.simulated[i]);
    }
    orte_jobmap_nodes_destruct(&nodes);

    /* r1 without XML either: the pairs give it (an empty XML in a pair does not count) */
    char *xml = inv[1]->xml;
    inv[1]->xml = NULL;
    char *pairs[] = {"ffff", "<bogus/>", inv[1]->signature, "", inv[1]->signature, xml, NULL};
    assert_int_equal(HERD_SUCCESS, orte_jobmap_nodes_build(inv, NULL, NULL, 3, pairs, &nodes));
    assert_int_equal(2, nodes.num_topologies);
    assert_int_equal(8, hwloc_get_nbobjs_by_type(nodes.nodes[2].topology, HWLOC_OBJ_CORE));
    orte_jobmap_nodes_destruct(&nodes);
    inv[1]->xml = xml;
    for (uint32_t i = 0; i < 3; ++i) {
        orte_inventory_free(inv[i]);
    }
}

/* A missing or unreadable topology names the node; what was loaded before is released (valgrind)
 * and *nodes is left alone. */
static void expect_nodes_error(orte_inventory_t **inv, uint32_t num, char *const *pairs,
                               const char *needle)
{
    orte_jobmap_nodes_t nodes;
    herd_test_capture_t capture;
    memset(&nodes, 0x5a, sizeof(nodes));
    herd_test_capture_start(&capture);
    int rc = orte_jobmap_nodes_build(inv, NULL, NULL, num, pairs, &nodes);
    char *err = herd_test_capture_stop(&capture);
    assert_int_equal(HERD_ERR_SILENT, rc);
    assert_int_equal(0x5a5a5a5a, nodes.num);
    assert_contains(err, needle);
    free(err);
}

static void test_jobmap_nodes_missing_topology(void **state)
{
    orte_inventory_t *inv[2];
    char text[256];
    (void) state;
    inv[0] = synthetic_inventory("n0", T_2X4X2);
    inv[1] = synthetic_inventory("n1", T_2X2X1);
    char *synthetic = inv[1]->synthetic;
    char *xml = inv[1]->xml;
    inv[1]->synthetic = NULL;
    inv[1]->xml = NULL;
    snprintf(text, sizeof(text), "the topology of node n1 (signature %s) is not known here",
             inv[1]->signature);
    expect_nodes_error(inv, 2, NULL, text);
    /* pairs for other signatures do not help */
    char *pairs[] = {inv[0]->signature, xml, NULL};
    expect_nodes_error(inv, 2, pairs, text);

    inv[1]->synthetic = strdup("pack:bogus");
    assert_non_null(inv[1]->synthetic);
    snprintf(text, sizeof(text), "the topology of node n1 (signature %s) is unreadable",
             inv[1]->signature);
    expect_nodes_error(inv, 2, NULL, text);
    free(inv[1]->synthetic);
    inv[1]->synthetic = NULL;
    inv[1]->xml = strdup("<not a topology");
    assert_non_null(inv[1]->xml);
    expect_nodes_error(inv, 2, NULL, text);

    inv[1]->synthetic = synthetic;
    free(inv[1]->xml);
    inv[1]->xml = xml;
    orte_inventory_free(inv[0]);
    orte_inventory_free(inv[1]);
}

/* ------------------------------------------------------------------------------------------ */

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_roundtrip_full),
        cmocka_unit_test(test_spec_roundtrip_null_optionals),
        cmocka_unit_test(test_spec_roundtrip_empty_strings),
        cmocka_unit_test(test_spec_roundtrip_mpmd),
        cmocka_unit_test(test_spec_secret),
        cmocka_unit_test(test_spec_wire_mirror),
        cmocka_unit_test(test_spec_bad_stdin_target),
        cmocka_unit_test(test_spec_version_mismatch),
        cmocka_unit_test(test_spec_app_count),
        cmocka_unit_test(test_spec_too_many_apps),
        cmocka_unit_test(test_spec_app_without_program),
        cmocka_unit_test(test_spec_bad_jobid),
        cmocka_unit_test(test_spec_list_limits),
        cmocka_unit_test(test_spec_flagged_null_string),
        cmocka_unit_test(test_spec_bad_input),
        cmocka_unit_test(test_spec_truncated),
        cmocka_unit_test(test_launch_roundtrip),
        cmocka_unit_test(test_launch_roundtrip_minimal),
        cmocka_unit_test(test_launch_participants),
        cmocka_unit_test(test_launch_node_index),
        cmocka_unit_test(test_launch_array_lengths),
        cmocka_unit_test(test_launch_xml_pairs_and_radix),
        cmocka_unit_test(test_launch_bad_spec),
        cmocka_unit_test(test_launch_truncated),
        cmocka_unit_test(test_record_roundtrip),
        cmocka_unit_test(test_record_exit_0),
        cmocka_unit_test(test_record_exit_3),
        cmocka_unit_test(test_record_signal_9),
        cmocka_unit_test(test_record_start_failed),
        cmocka_unit_test(test_record_lost),
        cmocka_unit_test(test_record_aborted),
        cmocka_unit_test(test_spawn_roundtrip_and_rejects),
        cmocka_unit_test(test_record_unfinalized),
        cmocka_unit_test(test_record_describe_small),
        cmocka_unit_test(test_record_rejects),
        cmocka_unit_test(test_record_truncated),
        cmocka_unit_test(test_inventory_roundtrip_session_uris),
        cmocka_unit_test(test_inventory_roundtrip_no_session_uris),
        cmocka_unit_test(test_inventory_session_uris_limit),
        cmocka_unit_test(test_inventory_rejects),
        cmocka_unit_test(test_inventory_truncated),
        cmocka_unit_test(test_jobmap_apps_policies),
        cmocka_unit_test(test_jobmap_apps_oversubscribe),
        cmocka_unit_test(test_jobmap_apps_bad_policy),
        cmocka_unit_test(test_jobmap_nodes_shared_topologies),
        cmocka_unit_test(test_jobmap_nodes_xml),
        cmocka_unit_test(test_jobmap_nodes_missing_topology),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
