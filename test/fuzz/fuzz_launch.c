/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer harness for the launch wire formats: the launch message (job spec, candidate nodes,
 * participants, XML pairs), the process record, the node inventory and the inventories by kind
 * (hosted simulated nodes' start-up), a node's map report (a job mapped everywhere), the
 * relocation message (errmgr restart) and the rejoin messages (herd-dvm --add-host), each decoded
 * from the same bytes. With HERD_FUZZ_LAUNCH_SEEDS=<dir> it first writes valid messages there as
 * seeds. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/argv.h"
#include "orte/util/inventory.h"
#include "orte/runtime/dvm_kinds.h"
#include "orte/runtime/dvm_map.h"
#include "orte/runtime/dvm_rejoin.h"
#include "orte/runtime/job.h"
#include "orte/runtime/proc_record.h"
#include "orte/runtime/relocate.h"
#include "test/fuzz/fuzz.h"

static char fuzz_sentinel_object;
#define FUZZ_SENTINEL ((void *) &fuzz_sentinel_object)

/* Input layout: byte 0 is the DVM's size the launch message is checked against (255: unknown,
 * as a session daemon decodes it); the rest is the message. */
static uint32_t fuzz_dvm_nodes(uint8_t byte)
{
    return 0xff == byte ? UINT32_MAX : byte;
}

/* A successful decode re-encodes to exactly the bytes it consumed (the encodings are canonical):
 * that catches a decoder accepting something the encoder never writes. */
static void fuzz_check_canonical(const opal_buffer_t *decoded, const opal_buffer_t *repacked)
{
    FUZZ_CHECK(repacked->used == decoded->unpack_offset);
    FUZZ_CHECK(0 == repacked->used || 0 == memcmp(repacked->base, decoded->base, repacked->used));
}

static bool fuzz_argv_within(char *const *argv, size_t max)
{
    return opal_argv_count(argv) <= max;
}

static void fuzz_launch(const uint8_t *data, size_t size, uint32_t num_dvm_nodes)
{
    opal_buffer_t buffer = OPAL_BUFFER_STATIC_INIT;
    opal_buffer_t repacked = OPAL_BUFFER_STATIC_INIT;
    orte_job_launch_t *launch = FUZZ_SENTINEL;

    FUZZ_CHECK(HERD_SUCCESS == opal_buffer_load(&buffer, data, size));
    int rc = orte_job_launch_unpack(&buffer, num_dvm_nodes, &launch);
    if (HERD_SUCCESS != rc) {
        FUZZ_CHECK(HERD_ERR_UNPACK_FAILURE == rc || HERD_ERR_VERSION_MISMATCH == rc ||
                   HERD_ERR_OUT_OF_RESOURCE == rc);
        FUZZ_CHECK(FUZZ_SENTINEL == launch);
        opal_buffer_destruct(&buffer);
        return;
    }
    /* what every consumer relies on without checking again */
    const orte_job_spec_t *spec = launch->spec;
    FUZZ_CHECK(NULL != spec && NULL != spec->jobid && '\0' != spec->jobid[0] &&
               NULL == strchr(spec->jobid, '/'));
    FUZZ_CHECK(spec->num_apps >= 1 && spec->num_apps <= ORTE_JOB_MAX_APPS);
    for (uint32_t a = 0; a < spec->num_apps; ++a) {
        const orte_job_app_t *app = &spec->apps[a];
        FUZZ_CHECK(NULL != app->argv && NULL != app->argv[0] && '\0' != app->argv[0][0]);
        FUZZ_CHECK(fuzz_argv_within(app->argv, ORTE_JOB_MAX_ARGS));
        FUZZ_CHECK(fuzz_argv_within(app->env, ORTE_JOB_MAX_ARGS));
        FUZZ_CHECK(fuzz_argv_within(app->seq_hosts, ORTE_JOB_MAX_HOSTS));
    }
    FUZZ_CHECK(fuzz_argv_within(spec->hosts, ORTE_JOB_MAX_HOSTS));
    (void) orte_job_spec_requested_np(spec);
    FUZZ_CHECK(launch->radix > 0);
    FUZZ_CHECK(launch->num_candidates > 0 && launch->num_candidates <= num_dvm_nodes);
    for (uint32_t c = 0; c < launch->num_candidates; ++c) {
        FUZZ_CHECK(launch->node_index[c] < num_dvm_nodes);
        FUZZ_CHECK(0 == c || launch->node_index[c] > launch->node_index[c - 1]);
    }
    FUZZ_CHECK(launch->num_participants > 0 && launch->num_participants <= launch->num_candidates);
    for (uint32_t p = 0; p < launch->num_participants; ++p) {
        FUZZ_CHECK(launch->participants[p] < launch->num_candidates);
        FUZZ_CHECK(0 == p || launch->participants[p] > launch->participants[p - 1]);
    }
    FUZZ_CHECK(0 == opal_argv_count(launch->xml_pairs) % 2);

    FUZZ_CHECK(HERD_SUCCESS == orte_job_launch_pack(&repacked, launch));
    fuzz_check_canonical(&buffer, &repacked);
    orte_job_launch_free(launch);
    opal_buffer_destruct(&repacked);
    opal_buffer_destruct(&buffer);
}

static void fuzz_record(const uint8_t *data, size_t size)
{
    opal_buffer_t buffer = OPAL_BUFFER_STATIC_INIT;
    opal_buffer_t repacked = OPAL_BUFFER_STATIC_INIT;
    orte_proc_record_t record;
    char text[256];

    FUZZ_CHECK(HERD_SUCCESS == opal_buffer_load(&buffer, data, size));
    memset(&record, FUZZ_BYTE, sizeof(record));
    int rc = orte_proc_record_unpack(&buffer, &record);
    if (HERD_SUCCESS != rc) {
        FUZZ_CHECK(HERD_ERR_UNPACK_FAILURE == rc || HERD_ERR_UNPACK_READ_PAST_END == rc ||
                   HERD_ERR_PACK_MISMATCH == rc);
        FUZZ_CHECK(fuzz_all_bytes(&record, sizeof(record)));
        opal_buffer_destruct(&buffer);
        return;
    }
    FUZZ_CHECK(record.state <= ORTE_PROC_UNFINALIZED);
    FUZZ_CHECK(!record.signaled || (record.signo > 0 && record.signo < 128));
    /* what a launcher exits with: a status the shell sees as it is (exit() keeps 8 bits) */
    int status = orte_proc_record_status(&record);
    FUZZ_CHECK(status >= 0 && status <= 255);
    FUZZ_CHECK(!record.signaled || ORTE_PROC_EXITED != record.state || status > 128);
    FUZZ_CHECK(orte_proc_record_failed(&record) || 0 == status);
    orte_proc_record_describe(&record, text, sizeof(text));
    FUZZ_CHECK('\0' != text[0]);

    FUZZ_CHECK(HERD_SUCCESS == orte_proc_record_pack(&repacked, &record));
    fuzz_check_canonical(&buffer, &repacked);
    opal_buffer_destruct(&repacked);
    opal_buffer_destruct(&buffer);
}

static void fuzz_inventory(const uint8_t *data, size_t size)
{
    opal_buffer_t buffer = OPAL_BUFFER_STATIC_INIT;
    opal_buffer_t repacked = OPAL_BUFFER_STATIC_INIT;
    orte_inventory_t *inventory = FUZZ_SENTINEL;
    char text[256];

    FUZZ_CHECK(HERD_SUCCESS == opal_buffer_load(&buffer, data, size));
    int rc = orte_inventory_unpack(&buffer, &inventory);
    if (HERD_SUCCESS != rc) {
        FUZZ_CHECK(HERD_ERR_UNPACK_FAILURE == rc || HERD_ERR_UNPACK_READ_PAST_END == rc ||
                   HERD_ERR_PACK_MISMATCH == rc || HERD_ERR_VERSION_MISMATCH == rc ||
                   HERD_ERR_OUT_OF_RESOURCE == rc);
        FUZZ_CHECK(FUZZ_SENTINEL == inventory);
        opal_buffer_destruct(&buffer);
        return;
    }
    FUZZ_CHECK(NULL != inventory->node_name && NULL != inventory->signature);
    FUZZ_CHECK(inventory->num_fabric <= 64);
    for (size_t i = 0; i < inventory->num_fabric; ++i) {
        FUZZ_CHECK(NULL != inventory->fabric[i]);
    }
    FUZZ_CHECK(opal_argv_count(inventory->session_uris) <= 1024);
    orte_inventory_summary(inventory, text, sizeof(text));

    /* the XML went over the wire when it is there */
    FUZZ_CHECK(HERD_SUCCESS == orte_inventory_pack(&repacked, inventory, true));
    fuzz_check_canonical(&buffer, &repacked);
    orte_inventory_free(inventory);
    opal_buffer_destruct(&repacked);
    opal_buffer_destruct(&buffer);
}

/* A table that decodes names only daemons 1..size-1, each range inside; once normalized it
 * packs again and decodes to the same kinds. */
static void fuzz_kinds(const uint8_t *data, size_t size, uint32_t num_dvm_nodes)
{
    uint32_t dvm_size = UINT32_MAX == num_dvm_nodes ? 256 : num_dvm_nodes + 1;
    dvm_kinds_t *kinds = dvm_kinds_table_new();
    char reason[256];
    FUZZ_CHECK(NULL != kinds);
    int rc = dvm_kinds_decode(data, size, dvm_size, kinds, reason, sizeof(reason));
    if (HERD_SUCCESS != rc) {
        FUZZ_CHECK(HERD_ERR_UNPACK_FAILURE == rc || HERD_ERR_VERSION_MISMATCH == rc ||
                   HERD_ERR_OUT_OF_RESOURCE == rc);
        FUZZ_CHECK('\0' != reason[0] || HERD_ERR_OUT_OF_RESOURCE == rc);
        dvm_kinds_table_free(kinds);
        return;
    }
    FUZZ_CHECK(kinds->num_kinds >= 1 && kinds->num_kinds < dvm_size);
    dvm_kinds_normalize(kinds);
    for (uint32_t i = 0; i < kinds->num_kinds; ++i) {
        FUZZ_CHECK(kinds->kinds[i].len > 0 && kinds->kinds[i].num_ranges >= 1);
        for (uint32_t r = 0; r < kinds->kinds[i].num_ranges; ++r) {
            const dvm_kinds_range_t *range = &kinds->kinds[i].ranges[r];
            FUZZ_CHECK(range->first >= 1 && range->count >= 1 &&
                       (uint64_t) range->first + range->count <= dvm_size);
        }
    }
    (void) dvm_kinds_complete(kinds, dvm_size, reason, sizeof(reason));
    opal_buffer_t repacked = OPAL_BUFFER_STATIC_INIT;
    dvm_kinds_t *again = dvm_kinds_table_new();
    FUZZ_CHECK(HERD_SUCCESS == dvm_kinds_pack(kinds, &repacked));
    FUZZ_CHECK(HERD_SUCCESS == dvm_kinds_decode(repacked.base, repacked.used, dvm_size, again,
                                                reason, sizeof(reason)));
    FUZZ_CHECK(again->num_kinds == kinds->num_kinds);
    opal_buffer_destruct(&repacked);
    dvm_kinds_table_free(again);
    dvm_kinds_table_free(kinds);
}

/* A subtree's map reports that decode encode to the same bytes, every vpid inside the DVM; a
 * message that does not decode leaves the output alone and says why. */
static void fuzz_mapped(const uint8_t *data, size_t size, uint32_t num_dvm_nodes)
{
    uint32_t dvm_size = UINT32_MAX == num_dvm_nodes ? 256 : num_dvm_nodes + 1;
    dvm_map_entry_t *entries = FUZZ_SENTINEL;
    uint32_t count = 0;
    char reason[128] = "";
    int rc = dvm_map_decode(data, size, dvm_size, &entries, &count, reason, sizeof(reason));
    if (HERD_SUCCESS != rc) {
        FUZZ_CHECK(HERD_ERR_UNPACK_FAILURE == rc || HERD_ERR_VERSION_MISMATCH == rc ||
                   HERD_ERR_OUT_OF_RESOURCE == rc);
        FUZZ_CHECK('\0' != reason[0]);
        FUZZ_CHECK(FUZZ_SENTINEL == entries && 0 == count);
        return;
    }
    FUZZ_CHECK(count >= 1 && count < dvm_size && size == dvm_map_message_bytes(count));
    for (uint32_t i = 0; i < count; ++i) {
        const dvm_map_report_t *r = &entries[i].report;
        FUZZ_CHECK(entries[i].vpid >= 1 && entries[i].vpid < dvm_size);
        FUZZ_CHECK(r->status <= 0 && r->map_ns <= r->total_ns);
        FUZZ_CHECK(0 == r->num_procs || r->first <= r->last);
    }
    uint8_t *again = malloc(size);
    FUZZ_CHECK(NULL != again);
    dvm_map_encode(entries, count, again);
    FUZZ_CHECK(0 == memcmp(again, data, size));
    free(again);
    free(entries);
}

/* The relocation message (errmgr restart after a node loss), bounded by byte 0 as a job's size:
 * a decode keeps within it and re-encodes canonically. */
static void fuzz_relocate(const uint8_t *data, size_t size, uint32_t max_ranks)
{
    orte_relocate_msg_t m;
    if (HERD_SUCCESS != orte_relocate_msg_unpack(data, size, max_ranks, &m)) {
        FUZZ_CHECK(NULL == m.ranks && NULL == m.reason);
        return;
    }
    FUZZ_CHECK(m.num_ranks <= max_ranks && (0 == m.num_ranks || NULL != m.ranks));
    FUZZ_CHECK(NULL == m.reason || strlen(m.reason) <= ORTE_RELOCATE_REASON_MAX);
    opal_buffer_t repacked = OPAL_BUFFER_STATIC_INIT;
    FUZZ_CHECK(HERD_SUCCESS == orte_relocate_msg_pack(&repacked, &m));
    FUZZ_CHECK(repacked.used == size && 0 == memcmp(repacked.base, data, size));
    opal_buffer_destruct(&repacked);
    orte_relocate_msg_free(&m);
}

/* The rejoin messages (dvm_rejoin_wire.c): the tool's request and the root's answer, the daemon's
 * hello, NODE_UP and the root's ACK; what decodes re-encodes to the same bytes. */
static void fuzz_rejoin(const uint8_t *data, size_t size, uint32_t num_dvm_nodes)
{
    uint32_t dvm_size = UINT32_MAX == num_dvm_nodes ? 256 : num_dvm_nodes + 1;
    opal_buffer_t in = OPAL_BUFFER_STATIC_INIT, out = OPAL_BUFFER_STATIC_INIT;
    char *text = NULL;
    void *inv = NULL;
    size_t len = 0;
    int status = 0;
    orte_vpid_t vpid = 0;

    FUZZ_CHECK(HERD_SUCCESS == opal_buffer_load(&in, data, size));
    if (HERD_SUCCESS == orte_dvm_rejoin_request_unpack(&in, &text)) {
        FUZZ_CHECK(NULL != text && '\0' != text[0]);
        FUZZ_CHECK(HERD_SUCCESS == orte_dvm_rejoin_request_pack(&out, text));
        fuzz_check_canonical(&in, &out);
        free(text);
    }
    opal_buffer_destruct(&out);
    FUZZ_CHECK(HERD_SUCCESS == opal_buffer_load(&in, data, size));
    if (HERD_SUCCESS == orte_dvm_rejoin_answer_unpack(&in, &status, &text)) {
        FUZZ_CHECK(status <= 0 && NULL != text);
        free(text);
    }
    FUZZ_CHECK(HERD_SUCCESS == opal_buffer_load(&in, data, size));
    if (HERD_SUCCESS == orte_dvm_rejoin_hello_unpack(&in, &inv, &len)) {
        FUZZ_CHECK(len > 0 && NULL != inv);
        free(inv);
    }
    FUZZ_CHECK(HERD_SUCCESS == opal_buffer_load(&in, data, size));
    if (HERD_SUCCESS == orte_dvm_rejoin_node_up_unpack(&in, dvm_size, &vpid, &inv, &len)) {
        FUZZ_CHECK(vpid >= 1 && vpid < dvm_size && len > 0);
        FUZZ_CHECK(HERD_SUCCESS == orte_dvm_rejoin_node_up_pack(&out, vpid, inv, len));
        fuzz_check_canonical(&in, &out);
        free(inv);
    }
    opal_buffer_destruct(&out);
    FUZZ_CHECK(HERD_SUCCESS == opal_buffer_load(&in, data, size));
    orte_dvm_rejoin_ack_t *ack = FUZZ_SENTINEL;
    int rc = orte_dvm_rejoin_ack_unpack(&in, dvm_size, &ack);
    if (HERD_SUCCESS == rc) {
        FUZZ_CHECK(ack->num_nodes + 1 == dvm_size && ack->num_down < dvm_size);
        for (uint32_t i = 0; i < ack->num_down; ++i) {
            FUZZ_CHECK(ack->down[i] >= 1 && ack->down[i] < dvm_size);
        }
        FUZZ_CHECK(HERD_SUCCESS == orte_dvm_rejoin_ack_pack(&out, ack));
        fuzz_check_canonical(&in, &out);
        orte_dvm_rejoin_ack_free(ack);
    } else {
        FUZZ_CHECK(FUZZ_SENTINEL == ack);
    }
    opal_buffer_destruct(&out);
    opal_buffer_destruct(&in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (0 == size) {
        return 0;
    }
    uint32_t num_dvm_nodes = fuzz_dvm_nodes(data[0]);
    fuzz_launch(data + 1, size - 1, num_dvm_nodes);
    fuzz_record(data + 1, size - 1);
    fuzz_inventory(data + 1, size - 1);
    fuzz_kinds(data + 1, size - 1, num_dvm_nodes);
    fuzz_mapped(data + 1, size - 1, num_dvm_nodes);
    fuzz_relocate(data + 1, size - 1, data[0]);
    fuzz_rejoin(data + 1, size - 1, num_dvm_nodes);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* seeds: valid messages from the real encoders, so they follow every change of the formats */

static void fuzz_write_seed(const char *dir, const char *name, uint8_t first,
                            const opal_buffer_t *message)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *file = fopen(path, "wb");
    FUZZ_CHECK(NULL != file);
    FUZZ_CHECK(1 == fwrite(&first, 1, 1, file));
    FUZZ_CHECK(message->used == fwrite(message->base, 1, message->used, file));
    FUZZ_CHECK(0 == fclose(file));
}

static void fuzz_write_seeds(const char *dir)
{
    static char *argv0[] = {"./prog", "-x", "", NULL};
    static char *argv1[] = {"./worker", NULL};
    static char *env[] = {"FOO=1", NULL};
    static char *seq[] = {"n1", "n0", NULL};
    static char *hosts[] = {"n0", "n1", "n3", NULL};
    static char *mca[] = {"HERD_MCA_odls_base_verbose=5", NULL};
    static char *pairs[] = {"0123456789abcdef", "<topology/>", NULL};
    static uint32_t index[] = {0, 1, 3};
    static uint32_t slots[] = {8, 4, 0};
    static uint32_t max_slots[] = {0, 8, 2};
    static uint32_t participants[] = {0, 2};
    static uint32_t session_slot[] = {1, 0, 7};
    orte_job_app_t apps[2] = {
        {.argv = argv0,
         .env = env,
         .cwd = "/tmp",
         .np = 4,
         .map_by = "ppr:2:package:PE=2",
         .rank_by = "core",
         .bind_to = "core"},
        {.argv = argv1, .np = 0, .map_by = "seq", .seq_hosts = seq},
    };
    orte_job_spec_t spec = {.jobid = "dvm.7",
                            .seq = 7,
                            .apps = apps,
                            .num_apps = 2,
                            .hosts = hosts,
                            .flags = ORTE_JOB_FLAG_DISPLAY_MAP,
                            .timeout = 60,
                            .oversubscribe = true,
                            .errmgr = "continue",
                            .kill_grace_ms = 500,
                            .mca = mca,
                            .sink_uri = "tcp://10.0.0.1:4000"};
    orte_job_launch_t launch = {.spec = &spec,
                                .radix = 2,
                                .num_candidates = 3,
                                .node_index = index,
                                .slots = slots,
                                .max_slots = max_slots,
                                .num_participants = 2,
                                .participants = participants,
                                .session_slot = session_slot,
                                .xml_pairs = pairs};
    opal_buffer_t b = OPAL_BUFFER_STATIC_INIT;

    for (size_t i = 0; i < sizeof(spec.secret); ++i) {
        spec.secret[i] = (uint8_t) i;
    }
    FUZZ_CHECK(HERD_SUCCESS == orte_job_launch_pack(&b, &launch));
    fuzz_write_seed(dir, "launch-full", 4, &b);
    fuzz_write_seed(dir, "launch-session", 0xff, &b);
    opal_buffer_destruct(&b);
    spec.num_apps = 1;
    apps[0] = (orte_job_app_t){.argv = argv1};
    spec.hosts = NULL;
    spec.mca = NULL;
    spec.errmgr = NULL;
    spec.sink_uri = NULL;
    launch.num_candidates = 1;
    launch.num_participants = 1;
    launch.xml_pairs = NULL;
    FUZZ_CHECK(HERD_SUCCESS == orte_job_launch_pack(&b, &launch));
    fuzz_write_seed(dir, "launch-minimal", 1, &b);
    opal_buffer_destruct(&b);

    /* inventories by kind: 8 daemons, two kinds, one of them in two ranges */
    dvm_kinds_t *kinds = dvm_kinds_table_new();
    FUZZ_CHECK(NULL != kinds);
    FUZZ_CHECK(HERD_SUCCESS == dvm_kinds_add(kinds, (const uint8_t *) "kind-a", 6, 1, 3));
    FUZZ_CHECK(HERD_SUCCESS == dvm_kinds_add(kinds, (const uint8_t *) "kind-b", 6, 4, 1));
    FUZZ_CHECK(HERD_SUCCESS == dvm_kinds_add(kinds, (const uint8_t *) "kind-a", 6, 5, 4));
    FUZZ_CHECK(HERD_SUCCESS == dvm_kinds_pack(kinds, &b));
    fuzz_write_seed(dir, "kinds", 8, &b);
    /* the rejoin messages of a DVM of 3 nodes */
    opal_buffer_destruct(&b);
    FUZZ_CHECK(HERD_SUCCESS == orte_dvm_rejoin_request_pack(&b, "node3"));
    fuzz_write_seed(dir, "rejoin-request", 3, &b);
    opal_buffer_destruct(&b);
    FUZZ_CHECK(HERD_SUCCESS == orte_dvm_rejoin_node_up_pack(&b, 3, "inv", 3));
    fuzz_write_seed(dir, "rejoin-node-up", 3, &b);
    opal_buffer_destruct(&b);
    {
        orte_vpid_t down[] = {2};
        uint8_t *invs[] = {(uint8_t *) "a", (uint8_t *) "b", (uint8_t *) "c"};
        size_t lengths[] = {1, 1, 1};
        orte_dvm_rejoin_ack_t ack = {.next_command = 7,
                                     .num_down = 1,
                                     .down = down,
                                     .num_nodes = 3,
                                     .inventories = invs,
                                     .lengths = lengths};
        FUZZ_CHECK(HERD_SUCCESS == orte_dvm_rejoin_ack_pack(&b, &ack));
        fuzz_write_seed(dir, "rejoin-ack", 3, &b);
    }
    opal_buffer_destruct(&b);
    dvm_kinds_table_free(kinds);

    /* a subtree's map reports: 64 processes, ranks 0-127, on daemon 3; none on daemon 4 */
    dvm_map_entry_t mapped[2] = {
        {.vpid = 3,
         .report = {.job_seq = 1, .num_procs = 64, .last = 127, .map_ns = 10, .total_ns = 12}},
        {.vpid = 4, .report = {.job_seq = 1}}};
    uint8_t mapped_bytes[DVM_MAP_HEADER_BYTES + 2 * DVM_MAP_ENTRY_BYTES];
    dvm_map_encode(mapped, 2, mapped_bytes);
    opal_buffer_t mapped_view = {.base = mapped_bytes, .used = sizeof(mapped_bytes)};
    fuzz_write_seed(dir, "mapped", 8, &mapped_view);

    /* a relocation answer for a job of 8 ranks: two moved, and why one could not */
    orte_relocate_rank_t moved[] = {{.rank = 1, .restarts = 1, .pid = 4711},
                                    {.rank = 5, .restarts = 2, .pid = 4712}};
    orte_relocate_msg_t relocate = {.lost_vpid = 2,
                                    .lost_candidate = 1,
                                    .to_candidate = 0,
                                    .max_restarts = 3,
                                    .num_ranks = 2,
                                    .ranks = moved,
                                    .reason = "rank 5 has used its 3 restarts"};
    FUZZ_CHECK(HERD_SUCCESS == orte_relocate_msg_pack(&b, &relocate));
    fuzz_write_seed(dir, "relocate", 8, &b);
    opal_buffer_destruct(&b);

    orte_proc_record_t record = {.rank = 3,
                                 .node = 1,
                                 .app = 1,
                                 .pid = 4242,
                                 .state = ORTE_PROC_EXITED,
                                 .signaled = true,
                                 .signo = 9,
                                 .wall_ns = 123456789,
                                 .user_us = 1000,
                                 .sys_us = 20,
                                 .max_rss_kb = 4096};
    FUZZ_CHECK(HERD_SUCCESS == orte_proc_record_pack(&b, &record));
    fuzz_write_seed(dir, "record-signaled", 0, &b);
    opal_buffer_destruct(&b);
    record = (orte_proc_record_t){.rank = 0, .state = ORTE_PROC_START_FAILED, .exit_code = 1};
    FUZZ_CHECK(HERD_SUCCESS == orte_proc_record_pack(&b, &record));
    fuzz_write_seed(dir, "record-start-failed", 0, &b);
    opal_buffer_destruct(&b);

    orte_inventory_t inventory = {.node_name = "n0",
                                  .slots = 8,
                                  .num_packages = 2,
                                  .num_cores = 8,
                                  .num_pus = 16,
                                  .signature = "0123456789abcdef",
                                  .synthetic = "pack:2 core:4 pu:2",
                                  .xml = "<topology/>"};
    opal_fabric_record_t *fabric = opal_fabric_record_new("tcp");
    FUZZ_CHECK(NULL != fabric);
    FUZZ_CHECK(HERD_SUCCESS == opal_fabric_record_add_attr(fabric, "version", "1"));
    opal_fabric_device_t *device = opal_fabric_record_add_device(fabric, "eth0", "ethernet");
    FUZZ_CHECK(NULL != device);
    FUZZ_CHECK(HERD_SUCCESS == opal_fabric_device_add_attr(device, "address", "10.0.0.1"));
    char *uris[] = {"tcp://10.0.0.1:5000", "tcp://10.0.0.1:5001", NULL};
    inventory.fabric = &fabric;
    inventory.num_fabric = 1;
    inventory.session_uris = uris;
    FUZZ_CHECK(HERD_SUCCESS == orte_inventory_pack(&b, &inventory, true));
    fuzz_write_seed(dir, "inventory-full", 0, &b);
    opal_buffer_destruct(&b);
    inventory.num_fabric = 0;
    inventory.session_uris = NULL;
    FUZZ_CHECK(HERD_SUCCESS == orte_inventory_pack(&b, &inventory, false));
    fuzz_write_seed(dir, "inventory-plain", 0, &b);
    opal_buffer_destruct(&b);
    opal_fabric_record_free(fabric);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *dir = getenv("HERD_FUZZ_LAUNCH_SEEDS");
    (void) argc;
    (void) argv;
    if (NULL != dir) {
        fuzz_write_seeds(dir);
    }
    return 0;
}
