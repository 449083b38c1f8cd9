/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer harness for the wireup wire messages: native client frames and payloads, PMI-1
 * commands and PMI_process_mapping, and the session daemons' engine messages fed to a real
 * engine. With HERD_FUZZ_WIREUP_SEEDS=<dir> it first writes valid messages there as seeds. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/dss/buffer.h"
#include "opal/event/event.h"
#include "opal/mca/mca.h"
#include "opal/status.h"
#include "opal/util/native_wire.h"
#include "orte/mca/grpcomm/grpcomm.h"
#include "orte/mca/grpcomm/tree/grpcomm_tree.h"
#include "orte/mca/wireup/base/base.h"
#include "orte/mca/wireup/pmi1/wireup_pmi1.h"
#include "orte/mca/wireup/wireup.h"
#include "test/fuzz/fuzz.h"


/* Input layout: byte 0 picks the mode; the rest is the mode's (see each function). */
enum {
    FUZZ_NATIVE_FRAMES, /* a stream of native frames, each payload decoded by its type */
    FUZZ_NATIVE_HELLO,  /* one native payload, straight to its decoder */
    FUZZ_NATIVE_COMMIT,
    FUZZ_NATIVE_FENCE,
    FUZZ_NATIVE_GET,
    FUZZ_NATIVE_ABORT,
    FUZZ_NATIVE_REPLY,
    FUZZ_PMI1_STREAM,  /* PMI-1 text as a process writes it */
    FUZZ_PMI1_MAPPING, /* PMI_process_mapping of a rank-to-node table */
    FUZZ_ENGINE,       /* one message between session daemons, into an engine */
    FUZZ_NUM_MODES
};

/* A re-encoded value is exactly the bytes decoded (the encodings are canonical): that catches a
 * decoder accepting something the encoder never writes. */
static void fuzz_check_same_bytes(const opal_buffer_t *repacked, const uint8_t *data, size_t len)
{
    FUZZ_CHECK(repacked->used == len);
    FUZZ_CHECK(0 == len || 0 == memcmp(repacked->base, data, len));
}

static bool fuzz_same_blob(const void *a, size_t a_len, const void *b, size_t b_len)
{
    return a_len == b_len && (0 == a_len || 0 == memcmp(a, b, a_len));
}

/* ------------------------------------------------------------------------------------------ */
/* native client protocol (opal/util/native_wire.h) */

/* A failed decode reports malformed input (or no memory) and leaves *out as it was. */
static void fuzz_check_native_failure(int rc, const void *out, size_t out_size)
{
    FUZZ_CHECK(HERD_ERR_UNPACK_FAILURE == rc || HERD_ERR_OUT_OF_RESOURCE == rc);
    FUZZ_CHECK(fuzz_all_bytes(out, out_size));
}

static void fuzz_native_hello(const uint8_t *data, size_t len)
{
    opal_native_hello_t hello, again;
    opal_buffer_t repacked = OPAL_BUFFER_STATIC_INIT;

    memset(&hello, FUZZ_BYTE, sizeof(hello));
    int rc = opal_native_unpack_hello(data, len, &hello);
    if (HERD_SUCCESS != rc) {
        fuzz_check_native_failure(rc, &hello, sizeof(hello));
        return;
    }
    FUZZ_CHECK(NULL != hello.nspace && '\0' != hello.nspace[0]);
    FUZZ_CHECK(strlen(hello.nspace) <= OPAL_NATIVE_MAX_NSPACE);
    FUZZ_CHECK(NULL != hello.token && strlen(hello.token) <= OPAL_NATIVE_MAX_MESSAGE);
    FUZZ_CHECK(HERD_SUCCESS == opal_native_pack_hello(&repacked, &hello));
    fuzz_check_same_bytes(&repacked, data, len);
    FUZZ_CHECK(HERD_SUCCESS == opal_native_unpack_hello(repacked.base, repacked.used, &again));
    FUZZ_CHECK(0 == strcmp(again.nspace, hello.nspace) && again.rank == hello.rank &&
               again.pid == hello.pid && 0 == strcmp(again.token, hello.token));
    opal_native_hello_free(&again);
    opal_native_hello_free(&hello);
    opal_buffer_destruct(&repacked);
}

static void fuzz_native_commit(const uint8_t *data, size_t len)
{
    opal_native_commit_t commit, again;
    opal_buffer_t repacked = OPAL_BUFFER_STATIC_INIT;

    memset(&commit, FUZZ_BYTE, sizeof(commit));
    int rc = opal_native_unpack_commit(data, len, &commit);
    if (HERD_SUCCESS != rc) {
        fuzz_check_native_failure(rc, &commit, sizeof(commit));
        return;
    }
    FUZZ_CHECK(commit.num_puts <= OPAL_NATIVE_MAX_PUTS);
    FUZZ_CHECK(0 == commit.num_puts || NULL != commit.puts);
    for (uint32_t i = 0; i < commit.num_puts; ++i) {
        const opal_native_put_t *put = &commit.puts[i];
        FUZZ_CHECK(NULL != put->key && '\0' != put->key[0]);
        FUZZ_CHECK(strlen(put->key) <= OPAL_NATIVE_MAX_KEY);
        FUZZ_CHECK(put->len <= OPAL_NATIVE_MAX_VALUE && (0 == put->len) == (NULL == put->value));
    }
    FUZZ_CHECK(HERD_SUCCESS == opal_native_pack_commit(&repacked, &commit));
    fuzz_check_same_bytes(&repacked, data, len);
    FUZZ_CHECK(HERD_SUCCESS == opal_native_unpack_commit(repacked.base, repacked.used, &again));
    FUZZ_CHECK(again.num_puts == commit.num_puts);
    for (uint32_t i = 0; i < commit.num_puts; ++i) {
        FUZZ_CHECK(0 == strcmp(again.puts[i].key, commit.puts[i].key));
        FUZZ_CHECK(fuzz_same_blob(again.puts[i].value, again.puts[i].len, commit.puts[i].value,
                                  commit.puts[i].len));
    }
    opal_native_commit_free(&again);
    opal_native_commit_free(&commit);
    opal_buffer_destruct(&repacked);
}

static void fuzz_native_fence(const uint8_t *data, size_t len)
{
    opal_buffer_t repacked = OPAL_BUFFER_STATIC_INIT;
    bool collect = false, probe = true, again = false;

    int rc = opal_native_unpack_fence(data, len, &collect);
    if (HERD_SUCCESS != rc) {
        /* two probes, since a bool has no spare value to act as a sentinel */
        FUZZ_CHECK(HERD_ERR_UNPACK_FAILURE == rc || HERD_ERR_OUT_OF_RESOURCE == rc);
        FUZZ_CHECK(opal_native_unpack_fence(data, len, &probe) == rc);
        FUZZ_CHECK(!collect && probe);
        return;
    }
    FUZZ_CHECK(HERD_SUCCESS == opal_native_pack_fence(&repacked, collect));
    fuzz_check_same_bytes(&repacked, data, len);
    FUZZ_CHECK(HERD_SUCCESS == opal_native_unpack_fence(repacked.base, repacked.used, &again));
    FUZZ_CHECK(again == collect);
    opal_buffer_destruct(&repacked);
}

static void fuzz_native_get(const uint8_t *data, size_t len)
{
    opal_native_get_t get, again;
    opal_buffer_t repacked = OPAL_BUFFER_STATIC_INIT;

    memset(&get, FUZZ_BYTE, sizeof(get));
    int rc = opal_native_unpack_get(data, len, &get);
    if (HERD_SUCCESS != rc) {
        fuzz_check_native_failure(rc, &get, sizeof(get));
        return;
    }
    FUZZ_CHECK(NULL != get.key && '\0' != get.key[0] && strlen(get.key) <= OPAL_NATIVE_MAX_KEY);
    FUZZ_CHECK(HERD_SUCCESS == opal_native_pack_get(&repacked, &get));
    fuzz_check_same_bytes(&repacked, data, len);
    FUZZ_CHECK(HERD_SUCCESS == opal_native_unpack_get(repacked.base, repacked.used, &again));
    FUZZ_CHECK(again.peer == get.peer && 0 == strcmp(again.key, get.key));
    opal_native_get_free(&again);
    opal_native_get_free(&get);
    opal_buffer_destruct(&repacked);
}

static void fuzz_native_abort(const uint8_t *data, size_t len)
{
    opal_native_abort_t message, again;
    opal_buffer_t repacked = OPAL_BUFFER_STATIC_INIT;

    memset(&message, FUZZ_BYTE, sizeof(message));
    int rc = opal_native_unpack_abort(data, len, &message);
    if (HERD_SUCCESS != rc) {
        fuzz_check_native_failure(rc, &message, sizeof(message));
        return;
    }
    FUZZ_CHECK(NULL != message.message && strlen(message.message) <= OPAL_NATIVE_MAX_MESSAGE);
    FUZZ_CHECK(HERD_SUCCESS == opal_native_pack_abort(&repacked, &message));
    fuzz_check_same_bytes(&repacked, data, len);
    FUZZ_CHECK(HERD_SUCCESS == opal_native_unpack_abort(repacked.base, repacked.used, &again));
    FUZZ_CHECK(again.status == message.status && 0 == strcmp(again.message, message.message));
    opal_native_abort_free(&again);
    opal_native_abort_free(&message);
    opal_buffer_destruct(&repacked);
}

static void fuzz_native_reply(const uint8_t *data, size_t len)
{
    opal_native_reply_t reply, again;
    opal_buffer_t repacked = OPAL_BUFFER_STATIC_INIT;

    memset(&reply, FUZZ_BYTE, sizeof(reply));
    int rc = opal_native_unpack_reply(data, len, &reply);
    if (HERD_SUCCESS != rc) {
        fuzz_check_native_failure(rc, &reply, sizeof(reply));
        return;
    }
    /* what the client library hands its caller as a status */
    FUZZ_CHECK(reply.status <= HERD_SUCCESS && reply.status > HERD_ERR_MAX);
    FUZZ_CHECK(NULL != reply.error && strlen(reply.error) <= OPAL_NATIVE_MAX_MESSAGE);
    FUZZ_CHECK(reply.len <= OPAL_NATIVE_MAX_VALUE && (0 == reply.len) == (NULL == reply.value));
    FUZZ_CHECK(HERD_SUCCESS == opal_native_pack_reply(&repacked, &reply));
    fuzz_check_same_bytes(&repacked, data, len);
    FUZZ_CHECK(HERD_SUCCESS == opal_native_unpack_reply(repacked.base, repacked.used, &again));
    FUZZ_CHECK(again.status == reply.status && 0 == strcmp(again.error, reply.error));
    FUZZ_CHECK(fuzz_same_blob(again.value, again.len, reply.value, reply.len));
    opal_native_reply_free(&again);
    opal_native_reply_free(&reply);
    opal_buffer_destruct(&repacked);
}

static void fuzz_native_payload(uint16_t type, const uint8_t *data, size_t len)
{
    switch (type) {
    case OPAL_NATIVE_HELLO:
        fuzz_native_hello(data, len);
        break;
    case OPAL_NATIVE_COMMIT:
        fuzz_native_commit(data, len);
        break;
    case OPAL_NATIVE_FENCE:
        fuzz_native_fence(data, len);
        break;
    case OPAL_NATIVE_GET:
        fuzz_native_get(data, len);
        break;
    case OPAL_NATIVE_ABORT:
        fuzz_native_abort(data, len);
        break;
    case OPAL_NATIVE_REPLY:
        fuzz_native_reply(data, len);
        break;
    default:
        break; /* FINALIZE carries nothing to decode */
    }
}

/* As the daemon reads a client's socket: frame after frame until one is incomplete or bad. */
static void fuzz_native_frames(const uint8_t *data, size_t len)
{
    size_t offset = 0;
    while (offset < len) {
        const uint8_t *frame = data + offset;
        size_t left = len - offset;
        opal_native_header_t header;
        memset(&header, FUZZ_BYTE, sizeof(header));
        long total = opal_native_frame(frame, left, &header);
        if (total < 0) {
            FUZZ_CHECK(HERD_ERR_UNPACK_FAILURE == total || HERD_ERR_VERSION_MISMATCH == total);
            FUZZ_CHECK(fuzz_all_bytes(&header, sizeof(header)));
            return;
        }
        if (0 == total) {
            /* more to come: the header, when whole, says how much */
            FUZZ_CHECK(left < OPAL_NATIVE_HEADER_SIZE ||
                       OPAL_NATIVE_HEADER_SIZE + (size_t) header.length > left);
            return;
        }
        FUZZ_CHECK((size_t) total >= OPAL_NATIVE_HEADER_SIZE && (size_t) total <= left);
        FUZZ_CHECK(header.type >= OPAL_NATIVE_HELLO && header.type < OPAL_NATIVE_TYPE_END);
        FUZZ_CHECK(header.length == (size_t) total - OPAL_NATIVE_HEADER_SIZE);
        FUZZ_CHECK(header.length <= OPAL_NATIVE_MAX_PAYLOAD);
        const uint8_t *payload = frame + OPAL_NATIVE_HEADER_SIZE;
        fuzz_native_payload(header.type, payload, header.length);

        /* the header is canonical too: encoding it again gives the same frame */
        opal_buffer_t encoded = OPAL_BUFFER_STATIC_INIT;
        opal_native_header_t again;
        FUZZ_CHECK(HERD_SUCCESS == opal_native_encode((opal_native_type_t) header.type, header.id,
                                                      payload, header.length, &encoded));
        fuzz_check_same_bytes(&encoded, frame, (size_t) total);
        FUZZ_CHECK(opal_native_frame(encoded.base, encoded.used, &again) == total);
        FUZZ_CHECK(again.type == header.type && again.id == header.id &&
                   again.length == header.length);
        opal_buffer_destruct(&encoded);
        offset += (size_t) total;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* PMI-1 (orte/mca/wireup/pmi1/wireup_pmi1.h) */

/* The keys the pmi1 component asks of its commands. */
static const char *const fuzz_pmi1_keys[] = {
    "kvsname",        "key",        "value",       "pmi_version",
    "pmi_subversion", "nprocs",     "execname",    "argcnt",
    "arg1",           "totspawns",  "spawnssofar", "preput_num",
    "info_num",       "info_key_0", "info_val_0",  "preput_key_0",
    "preput_val_0",   "exitcode",   "msg",         "service",
    "port",           "",
};

/* Pairs whose lookups are checked: enough for every real command, without making a message of
 * thousands of pairs cost millions of comparisons. */
#define FUZZ_PMI1_CHECKED_PAIRS 32u

/* What the decoded message would look like written by a well-behaved client, or NULL when it
 * would not fit the decoder's limits. */
static char *fuzz_pmi1_write(const wireup_pmi1_msg_t *m, size_t *len)
{
    size_t size = strlen(m->cmd) + 16;
    for (size_t i = 0; i < m->num_pairs; ++i) {
        size += strlen(m->pairs[i].key) + strlen(m->pairs[i].value) + 2;
    }
    char *text = malloc(size);
    FUZZ_CHECK(NULL != text);
    size_t used = (size_t) snprintf(text, size, "%s=%s%s", m->multi ? "mcmd" : "cmd", m->cmd,
                                    m->multi ? "\n" : "");
    for (size_t i = 0; i < m->num_pairs; ++i) {
        used += (size_t) snprintf(text + used, size - used, "%s%s=%s%s", m->multi ? "" : " ",
                                  m->pairs[i].key, m->pairs[i].value, m->multi ? "\n" : "");
    }
    used += (size_t) snprintf(text + used, size - used, "%s", m->multi ? "endcmd\n" : "\n");
    FUZZ_CHECK(used < size);
    if (used > (m->multi ? WIREUP_PMI1_MAX_BLOCK : WIREUP_PMI1_MAX_LINE + 1)) {
        free(text);
        return NULL;
    }
    *len = used;
    return text;
}

/* The value found for key is the first pair's with that key (a client repeating a key gets its
 * first value, as MPICH's own server does), or NULL. */
static void fuzz_pmi1_check_get(const wireup_pmi1_msg_t *m, const char *key)
{
    const char *expected = NULL;
    for (size_t i = 0; i < m->num_pairs && NULL == expected; ++i) {
        if (0 == strcmp(m->pairs[i].key, key)) {
            expected = m->pairs[i].value;
        }
    }
    FUZZ_CHECK(wireup_pmi1_get(m, key) == expected);
}

static void fuzz_pmi1_message(const char *buf, size_t len)
{
    wireup_pmi1_msg_t m;
    memset(&m, FUZZ_BYTE, sizeof(m));
    int rc = wireup_pmi1_parse(buf, len, &m);
    if (HERD_SUCCESS != rc) {
        FUZZ_CHECK(HERD_ERR_UNPACK_FAILURE == rc || HERD_ERR_OUT_OF_RESOURCE == rc);
        FUZZ_CHECK(fuzz_all_bytes(&m, sizeof(m)));
        return;
    }
    FUZZ_CHECK(NULL != m.cmd && '\0' != m.cmd[0]);
    FUZZ_CHECK(m.multi == (len >= 5 && 0 == memcmp(buf, "mcmd=", 5)));
    FUZZ_CHECK(m.num_pairs <= WIREUP_PMI1_MAX_PAIRS && (0 == m.num_pairs || NULL != m.pairs));
    /* a token ends at a space, a block's line at a newline; a key at its first '=' */
    const char *ends = m.multi ? "\n" : " ";
    FUZZ_CHECK(NULL == strpbrk(m.cmd, ends));
    for (size_t i = 0; i < m.num_pairs; ++i) {
        const wireup_pmi1_pair_t *pair = &m.pairs[i];
        FUZZ_CHECK(NULL != pair->key && '\0' != pair->key[0] && NULL != pair->value);
        FUZZ_CHECK(NULL == strchr(pair->key, '=') && NULL == strpbrk(pair->key, ends));
        FUZZ_CHECK(NULL == strpbrk(pair->value, ends));
        size_t vlen = strlen(pair->value);
        bool plain = NULL == strpbrk(pair->value, " \n");
        FUZZ_CHECK(wireup_pmi1_value_ok(pair->value, vlen, WIREUP_PMI1_VALLEN_MAX) ==
                   (plain && vlen <= WIREUP_PMI1_VALLEN_MAX));
    }
    for (size_t i = 0; i < m.num_pairs && i < FUZZ_PMI1_CHECKED_PAIRS; ++i) {
        fuzz_pmi1_check_get(&m, m.pairs[i].key);
    }
    for (size_t k = 0; k < sizeof(fuzz_pmi1_keys) / sizeof(fuzz_pmi1_keys[0]); ++k) {
        fuzz_pmi1_check_get(&m, fuzz_pmi1_keys[k]);
    }

    /* written again the plain way, it decodes to the same message */
    size_t text_len = 0;
    char *text = fuzz_pmi1_write(&m, &text_len);
    if (NULL != text) {
        wireup_pmi1_msg_t again;
        FUZZ_CHECK(HERD_SUCCESS == wireup_pmi1_parse(text, text_len, &again));
        FUZZ_CHECK(0 == strcmp(again.cmd, m.cmd) && again.multi == m.multi);
        FUZZ_CHECK(again.num_pairs == m.num_pairs);
        for (size_t i = 0; i < m.num_pairs; ++i) {
            FUZZ_CHECK(0 == strcmp(again.pairs[i].key, m.pairs[i].key));
            FUZZ_CHECK(0 == strcmp(again.pairs[i].value, m.pairs[i].value));
        }
        wireup_pmi1_msg_free(&again);
        free(text);
    }
    wireup_pmi1_msg_free(&m);
    FUZZ_CHECK(NULL == m.cmd && NULL == m.pairs && 0 == m.num_pairs);
}

/* As the daemon serves a connection: frame, decode, next; then the whole input as one message,
 * as a reader would that got it in one piece. */
static void fuzz_pmi1_stream(const uint8_t *data, size_t len)
{
    const char *buf = (const char *) data;
    size_t offset = 0;
    while (offset < len) {
        long n = wireup_pmi1_frame(buf + offset, len - offset);
        if (n <= 0) {
            FUZZ_CHECK(0 == n || HERD_ERR_BAD_PARAM == n);
            break;
        }
        FUZZ_CHECK((size_t) n <= len - offset && '\n' == buf[offset + (size_t) n - 1]);
        fuzz_pmi1_message(buf + offset, (size_t) n);
        offset += (size_t) n;
    }
    fuzz_pmi1_message(buf, len);
}

/* The mapping read back the way MPICH reads it; false when it is not in the format. */
static bool fuzz_mapping_read(const char *text, unsigned *node_of, size_t max, size_t *num_ranks)
{
    size_t ranks = 0;
    if (0 != strncmp(text, "(vector", 7)) {
        return false;
    }
    const char *p = text + 7;
    while (',' == *p) {
        unsigned long first, nodes, ppn;
        int used = 0;
        if (3 != sscanf(p, ",(%lu,%lu,%lu)%n", &first, &nodes, &ppn, &used) || 0 == used ||
            0 == nodes || 0 == ppn) {
            return false;
        }
        for (unsigned long n = 0; n < nodes; ++n) {
            for (unsigned long r = 0; r < ppn; ++r) {
                if (ranks == max) {
                    return false;
                }
                node_of[ranks++] = (unsigned) (first + n);
            }
        }
        p += used;
    }
    *num_ranks = ranks;
    return 0 == strcmp(p, ")");
}

#define FUZZ_MAPPING_MAX_RANKS 1024u

/* Input layout: bytes 1-2 are the output buffer's size (big-endian, mod 2048), then one byte per
 * rank: its node. The buffer is exactly that size, so any write past it is ASan's to catch. */
static void fuzz_pmi1_mapping(const uint8_t *data, size_t len)
{
    static unsigned node_of[FUZZ_MAPPING_MAX_RANKS], read_back[FUZZ_MAPPING_MAX_RANKS];
    if (len < 2) {
        return;
    }
    size_t size = (((size_t) data[0] << 8) | data[1]) % 2048;
    size_t num_ranks = len - 2 < FUZZ_MAPPING_MAX_RANKS ? len - 2 : FUZZ_MAPPING_MAX_RANKS;
    for (size_t r = 0; r < num_ranks; ++r) {
        node_of[r] = data[2 + r];
    }
    char *buf = malloc(size > 0 ? size : 1);
    FUZZ_CHECK(NULL != buf);
    int rc = wireup_pmi1_process_mapping(node_of, num_ranks, buf, size);
    size_t text_len = 0;
    if (HERD_SUCCESS == rc) {
        text_len = strnlen(buf, size);
        FUZZ_CHECK(text_len < size);
    } else {
        FUZZ_CHECK(HERD_ERR_OUT_OF_RESOURCE == rc);
    }
    free(buf);

    /* with room to spare it always fits, reads back as the table, and needs exactly its length
     * plus the NUL: one byte less does not fit */
    size_t big = 16 + 40 * (num_ranks + 1);
    char *text = malloc(big);
    FUZZ_CHECK(NULL != text);
    FUZZ_CHECK(HERD_SUCCESS == wireup_pmi1_process_mapping(node_of, num_ranks, text, big));
    size_t needed = strlen(text) + 1;
    FUZZ_CHECK(HERD_SUCCESS != rc || text_len + 1 == needed);
    FUZZ_CHECK(HERD_SUCCESS == rc || size < needed);
    size_t read_ranks = 0;
    FUZZ_CHECK(fuzz_mapping_read(text, read_back, FUZZ_MAPPING_MAX_RANKS, &read_ranks));
    FUZZ_CHECK(read_ranks == num_ranks);
    FUZZ_CHECK(0 == num_ranks || 0 == memcmp(read_back, node_of, num_ranks * sizeof(*node_of)));
    char *exact = malloc(needed);
    FUZZ_CHECK(NULL != exact);
    FUZZ_CHECK(HERD_SUCCESS == wireup_pmi1_process_mapping(node_of, num_ranks, exact, needed));
    FUZZ_CHECK(0 == strcmp(exact, text));
    FUZZ_CHECK(HERD_ERR_OUT_OF_RESOURCE ==
               wireup_pmi1_process_mapping(node_of, num_ranks, exact, needed - 1));
    free(exact);
    free(text);
}

/* ------------------------------------------------------------------------------------------ */
/* the engine: messages between session daemons (orte/mca/wireup/base/base.h) */

/* The engine normally finds the grpcomm module and its verbose stream through the frameworks,
 * which load their components as DSOs (the static tables are configure-generated and empty):
 * the harness links the tree component's module directly and stands in for the two framework
 * objects, which only lend their (closed) output streams. */
opal_mca_framework_t orte_grpcomm_base_framework =
    OPAL_MCA_FRAMEWORK_INIT(orte, grpcomm, "grpcomm, as the wireup fuzzer uses it", false, NULL);
opal_mca_framework_t orte_wireup_base_framework =
    OPAL_MCA_FRAMEWORK_INIT(orte, wireup, "wireup, as the wireup fuzzer uses it", true, NULL);

const orte_grpcomm_module_t *orte_grpcomm_base_module(void)
{
    return &orte_grpcomm_tree_module;
}

/* The job the engine serves: namespace 0 on daemons 1 and 2 (rank r on 1 + r % 2), namespace 1
 * on daemons 1 and 3, added before or after the message (then held and delivered again).
 * Daemons 4 and 5 take part in nothing. */
#define FUZZ_ME         1u
#define FUZZ_NS0_PROCS  4u
#define FUZZ_MAX_DAEMON 5u
#define FUZZ_TIMEOUT_MS 1000

static opal_event_base_t *fuzz_base;

/* What the engine was asked to do before the message; each must complete exactly once. */
enum {
    FUZZ_OP_GET,    /* a key of a rank on daemon 2: a direct-modex request, id 1 */
    FUZZ_OP_DMODEX, /* raw (pmix) data of a rank on daemon 2: id 2 */
    FUZZ_OP_NAME,   /* publish (here) or lookup (at daemon 2) of a name: id 3 */
    FUZZ_OP_FENCE_A,
    FUZZ_OP_FENCE_B, /* a kv fence of both local ranks, over grpcomm */
    FUZZ_OP_DFENCE,  /* a direct fence of ranks 0 and 1 (daemons 1 and 2), sequence 1 */
    FUZZ_OP_COLL,    /* a raw allgather of namespace 0, over grpcomm */
    FUZZ_NUM_OPS
};

typedef struct fuzz_net fuzz_net_t;

typedef struct fuzz_node {
    orte_vpid_t me;
    orte_vpid_t names;
    orte_wireup_engine_t *engine;
    int fired[FUZZ_NUM_OPS];
    fuzz_net_t *net; /* seeds: where sent messages go; NULL while fuzzing */
} fuzz_node_t;

typedef struct fuzz_op {
    fuzz_node_t *node;
    int op;
} fuzz_op_t;

/* An engine and the context of each of its operations. */
typedef struct fuzz_engine {
    fuzz_node_t node;
    fuzz_op_t ops[FUZZ_NUM_OPS];
} fuzz_engine_t;

static bool fuzz_status_ok(int status)
{
    return status <= HERD_SUCCESS && status > HERD_ERR_MAX;
}

static void fuzz_fired(void *cbdata, int status)
{
    fuzz_op_t *op = cbdata;
    FUZZ_CHECK(fuzz_status_ok(status));
    op->node->fired[op->op]++;
}

static void fuzz_done_cb(int status, const char *error, void *cbdata)
{
    (void) error;
    fuzz_fired(cbdata, status);
}

static void fuzz_value_cb(int status, const void *value, size_t len, const char *error,
                          void *cbdata)
{
    (void) error;
    FUZZ_CHECK(HERD_SUCCESS == status || (NULL == value && 0 == len));
    FUZZ_CHECK((0 == len) == (NULL == value));
    FUZZ_CHECK(len <= ORTE_WIREUP_MAX_VALUE);
    fuzz_fired(cbdata, status);
}

static void fuzz_blobs_cb(int status, const struct iovec *blobs, uint32_t num_blobs,
                          const char *error, void *cbdata)
{
    (void) error;
    FUZZ_CHECK(HERD_SUCCESS == status || 0 == num_blobs);
    FUZZ_CHECK(0 == num_blobs || NULL != blobs);
    for (uint32_t i = 0; i < num_blobs; ++i) {
        FUZZ_CHECK((0 == blobs[i].iov_len) == (NULL == blobs[i].iov_base));
    }
    fuzz_fired(cbdata, status);
}

/* The pmix module's part: raw data of a local rank, answered at once. */
static void fuzz_dmodex_handler(void *ctx, uint32_t nspace, uint32_t rank, const char *key,
                                int timeout_ms, orte_wireup_ticket_t *ticket)
{
    char data[64];
    (void) ctx;
    (void) key;
    (void) timeout_ms;
    int n = snprintf(data, sizeof(data), "raw-%u-%u", nspace, rank);
    orte_wireup_dmodex_reply(ticket, HERD_SUCCESS, data, (size_t) n, NULL);
}

static orte_vpid_t fuzz_ns0_vpid(void *ctx, uint32_t rank)
{
    (void) ctx;
    return rank < FUZZ_NS0_PROCS ? 1 + rank % 2 : ORTE_VPID_INVALID;
}

static orte_vpid_t fuzz_ns1_vpid(void *ctx, uint32_t rank)
{
    (void) ctx;
    return 0 == rank ? 1 : (1 == rank ? 3 : ORTE_VPID_INVALID);
}

static void fuzz_add_ns1(orte_wireup_engine_t *engine)
{
    static const orte_vpid_t daemons[] = {1, 3};
    orte_wireup_engine_nspace_t desc = {.index = 1,
                                        .num_procs = 2,
                                        .daemons = daemons,
                                        .num_daemons = 2,
                                        .num_local = 1,
                                        .rank_vpid = fuzz_ns1_vpid};
    FUZZ_CHECK(HERD_SUCCESS == orte_wireup_engine_add_nspace(engine, &desc));
}

static int fuzz_engine_send(void *ctx, orte_vpid_t dst, uint16_t tag, const struct iovec *iov,
                            int iovcnt);

/* An engine for daemon me (1 or 2) in the job above, with one of each operation under way. */
static void fuzz_engine_setup(fuzz_engine_t *fe, orte_vpid_t me, orte_vpid_t names, fuzz_net_t *net)
{
    static const orte_vpid_t ns0_daemons[] = {1, 2};
    orte_vpid_t other = (1 == me) ? 2 : 1;
    memset(fe, 0, sizeof(*fe));
    fe->node.me = me;
    fe->node.names = names;
    fe->node.net = net;
    for (int i = 0; i < FUZZ_NUM_OPS; ++i) {
        fe->ops[i] = (fuzz_op_t){.node = &fe->node, .op = i};
    }
    orte_wireup_engine_config_t config = {.base = fuzz_base,
                                          .me = me,
                                          .radix = 2,
                                          .names = names,
                                          .get_timeout_ms = FUZZ_TIMEOUT_MS,
                                          .send = fuzz_engine_send,
                                          .ctx = &fe->node};
    FUZZ_CHECK(HERD_SUCCESS == orte_wireup_engine_create(&config, &fe->node.engine));
    orte_wireup_engine_t *e = fe->node.engine;
    orte_wireup_engine_nspace_t desc = {.index = 0,
                                        .num_procs = FUZZ_NS0_PROCS,
                                        .daemons = ns0_daemons,
                                        .num_daemons = 2,
                                        .num_local = 2,
                                        .rank_vpid = fuzz_ns0_vpid};
    FUZZ_CHECK(HERD_SUCCESS == orte_wireup_engine_add_nspace(e, &desc));
    FUZZ_CHECK(HERD_SUCCESS ==
               orte_wireup_set_dmodex_handler(e, ORTE_WIREUP_KIND_PMIX, fuzz_dmodex_handler, NULL));

    /* the local ranks (me - 1 and me + 1) and the namespace commit a key each */
    uint32_t local[2] = {me - 1, me + 1};
    for (int i = 0; i < 2; ++i) {
        char value[32];
        int n = snprintf(value, sizeof(value), "value-of-%u", local[i]);
        FUZZ_CHECK(HERD_SUCCESS ==
                   orte_wireup_kv_put(e, 0, local[i], "fuzz-key", value, (size_t) n));
        FUZZ_CHECK(HERD_SUCCESS == orte_wireup_kv_commit(e, 0, local[i]));
    }
    FUZZ_CHECK(HERD_SUCCESS ==
               orte_wireup_kv_put(e, 0, ORTE_WIREUP_OWNER_NSPACE, "ns-key", "ns-value", 8));
    FUZZ_CHECK(HERD_SUCCESS == orte_wireup_kv_commit(e, 0, ORTE_WIREUP_OWNER_NSPACE));

    /* requests to the other daemon, numbered 1, 2 and 3 in this order */
    FUZZ_CHECK(HERD_SUCCESS == orte_wireup_kv_get(e, 0, other - 1, "fuzz-key", FUZZ_TIMEOUT_MS,
                                                  fuzz_value_cb, &fe->ops[FUZZ_OP_GET]));
    FUZZ_CHECK(HERD_SUCCESS == orte_wireup_dmodex(e, 0, other + 1, ORTE_WIREUP_KIND_PMIX, NULL,
                                                  FUZZ_TIMEOUT_MS, fuzz_value_cb,
                                                  &fe->ops[FUZZ_OP_DMODEX]));
    if (names == me) {
        FUZZ_CHECK(HERD_SUCCESS == orte_wireup_publish(e, "fuzz-name", "port-1", 6, fuzz_done_cb,
                                                       &fe->ops[FUZZ_OP_NAME]));
    } else {
        FUZZ_CHECK(HERD_SUCCESS == orte_wireup_lookup(e, "fuzz-name", FUZZ_TIMEOUT_MS,
                                                      fuzz_value_cb, &fe->ops[FUZZ_OP_NAME]));
    }

    /* collectives waiting for the other daemon */
    FUZZ_CHECK(HERD_SUCCESS == orte_wireup_kv_fence(e, 0, ORTE_WIREUP_KIND_NATIVE, local[0], true,
                                                    fuzz_done_cb, &fe->ops[FUZZ_OP_FENCE_A]));
    FUZZ_CHECK(HERD_SUCCESS == orte_wireup_kv_fence(e, 0, ORTE_WIREUP_KIND_NATIVE, local[1], true,
                                                    fuzz_done_cb, &fe->ops[FUZZ_OP_FENCE_B]));
    orte_wireup_procid_t pair[2] = {{.nspace = 0, .rank = 0}, {.nspace = 0, .rank = 1}};
    char contribution[32];
    int n = snprintf(contribution, sizeof(contribution), "dfence-from-%u", me);
    FUZZ_CHECK(HERD_SUCCESS == orte_wireup_allgather(e, pair, 2, ORTE_WIREUP_KIND_CONNECT,
                                                     contribution, (size_t) n, fuzz_blobs_cb,
                                                     &fe->ops[FUZZ_OP_DFENCE]));
    orte_wireup_procid_t all = {.nspace = 0, .rank = ORTE_WIREUP_RANK_WILDCARD};
    n = snprintf(contribution, sizeof(contribution), "coll-from-%u", me);
    FUZZ_CHECK(HERD_SUCCESS == orte_wireup_allgather(e, &all, 1, ORTE_WIREUP_KIND_PMIX,
                                                     contribution, (size_t) n, fuzz_blobs_cb,
                                                     &fe->ops[FUZZ_OP_COLL]));
}

/* Run what the engines queued (their callbacks run from the loop, never inside a call). */
static void fuzz_engine_progress(void)
{
    for (int i = 0; i < 4; ++i) {
        FUZZ_CHECK(HERD_SUCCESS == opal_event_base_poll(fuzz_base));
    }
}

/* Every other daemon is lost: whatever still waits fails, so every operation has completed
 * exactly once before the engine goes. */
static void fuzz_engine_teardown(fuzz_engine_t *fe)
{
    for (orte_vpid_t v = 1; v <= FUZZ_MAX_DAEMON; ++v) {
        if (v != fe->node.me) {
            orte_wireup_engine_lost(fe->node.engine, v);
        }
    }
    fuzz_engine_progress();
    for (int i = 0; i < FUZZ_NUM_OPS; ++i) {
        FUZZ_CHECK(1 == fe->node.fired[i]);
    }
    orte_wireup_engine_destroy(fe->node.engine);
    fe->node.engine = NULL;
}

/* Input layout: byte 1 bits 0-3 pick the tag (32 + n % 10: the nine message types and one
 * unknown tag), bits 4-5 the sender (daemon 2 + n), bit 6 whether this daemon keeps the
 * published names (else daemon 2 does), bit 7 whether namespace 1 is known before the message
 * (else it is added after it, and what was held for it is delivered then); the rest is the
 * message. */
static void fuzz_engine(const uint8_t *data, size_t len)
{
    static fuzz_engine_t fe;
    if (0 == len) {
        return;
    }
    uint8_t selector = data[0];
    uint16_t tag = (uint16_t) (ORTE_WIREUP_TAG_BASE + (selector & 0x0f) % 10);
    orte_vpid_t src = 2 + ((selector >> 4) & 3);
    orte_vpid_t names = (selector & 0x40) ? FUZZ_ME : 2;
    bool ns1_first = 0 != (selector & 0x80);

    fuzz_engine_setup(&fe, FUZZ_ME, names, NULL);
    if (ns1_first) {
        fuzz_add_ns1(fe.node.engine);
    }
    orte_wireup_engine_stats_t before, after;
    orte_wireup_engine_get_stats(fe.node.engine, &before);
    int rc = orte_wireup_engine_deliver(fe.node.engine, src, tag, data + 1, len - 1);
    orte_wireup_engine_get_stats(fe.node.engine, &after);
    /* a message refused is counted as malformed; one held for later is not refused yet */
    FUZZ_CHECK(fuzz_status_ok(rc));
    FUZZ_CHECK(HERD_SUCCESS == rc || HERD_ERR_NOT_FOUND == rc ||
               after.malformed > before.malformed);
    if (!ns1_first) {
        fuzz_add_ns1(fe.node.engine);
    }
    fuzz_engine_progress();
    for (int i = 0; i < FUZZ_NUM_OPS; ++i) {
        FUZZ_CHECK(fe.node.fired[i] <= 1);
    }
    fuzz_engine_teardown(&fe);
}

/* ------------------------------------------------------------------------------------------ */
/* seeds: a little network of two engines, whose messages to daemon 1 are the engine seeds */

typedef struct fuzz_msg {
    struct fuzz_msg *next;
    orte_vpid_t src;
    orte_vpid_t dst;
    uint16_t tag;
    size_t len;
    uint8_t data[];
} fuzz_msg_t;

struct fuzz_net {
    fuzz_msg_t *head;
    fuzz_msg_t **tail;
};

static int fuzz_engine_send(void *ctx, orte_vpid_t dst, uint16_t tag, const struct iovec *iov,
                            int iovcnt)
{
    fuzz_node_t *node = ctx;
    size_t len = 0;
    FUZZ_CHECK(dst != node->me && dst >= 1 && dst <= FUZZ_MAX_DAEMON);
    FUZZ_CHECK(tag >= ORTE_WIREUP_TAG_BASE && tag < ORTE_WIREUP_TAG_END);
    FUZZ_CHECK(iovcnt >= 1);
    for (int i = 0; i < iovcnt; ++i) {
        len += iov[i].iov_len;
    }
    FUZZ_CHECK(len > 0);
    if (NULL == node->net) {
        return HERD_SUCCESS; /* fuzzing: what the engine answers goes nowhere */
    }
    fuzz_msg_t *m = malloc(sizeof(*m) + len);
    FUZZ_CHECK(NULL != m);
    *m = (fuzz_msg_t){.src = node->me, .dst = dst, .tag = tag, .len = len};
    size_t offset = 0;
    for (int i = 0; i < iovcnt; ++i) {
        memcpy(m->data + offset, iov[i].iov_base, iov[i].iov_len);
        offset += iov[i].iov_len;
    }
    *node->net->tail = m;
    node->net->tail = &m->next;
    return HERD_SUCCESS;
}

static void fuzz_write_seed(const char *dir, const char *name, uint8_t mode, const void *prefix,
                            size_t prefix_len, const void *data, size_t len)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *file = fopen(path, "wb");
    FUZZ_CHECK(NULL != file);
    FUZZ_CHECK(1 == fwrite(&mode, 1, 1, file));
    FUZZ_CHECK(0 == prefix_len || 1 == fwrite(prefix, prefix_len, 1, file));
    FUZZ_CHECK(0 == len || 1 == fwrite(data, len, 1, file));
    FUZZ_CHECK(0 == fclose(file));
}

static void fuzz_write_engine_seeds(const char *dir, orte_vpid_t names)
{
    static fuzz_engine_t engines[2];
    fuzz_net_t net = {.head = NULL, .tail = &net.head};
    unsigned count = 0;

    fuzz_engine_setup(&engines[0], 1, names, &net);
    fuzz_engine_setup(&engines[1], 2, names, &net);
    for (int round = 0; round < 64 && NULL != net.head; ++round) {
        fuzz_msg_t *m = net.head;
        net.head = NULL;
        net.tail = &net.head;
        while (NULL != m) {
            fuzz_msg_t *next = m->next;
            if (FUZZ_ME == m->dst) {
                char name[64];
                uint8_t selector = (uint8_t) ((m->tag - ORTE_WIREUP_TAG_BASE) |
                                              ((m->src - 2) << 4) | (FUZZ_ME == names ? 0x40 : 0));
                snprintf(name, sizeof(name), "engine-names%u-%02u-tag%u", names, count++, m->tag);
                fuzz_write_seed(dir, name, FUZZ_ENGINE, &selector, 1, m->data, m->len);
            }
            FUZZ_CHECK(HERD_SUCCESS == orte_wireup_engine_deliver(engines[m->dst - 1].node.engine,
                                                                  m->src, m->tag, m->data, m->len));
            free(m);
            m = next;
        }
        fuzz_engine_progress();
    }
    FUZZ_CHECK(NULL == net.head);
    /* the conversation went through: everything either daemon started completed */
    for (int e = 0; e < 2; ++e) {
        for (int i = 0; i < FUZZ_NUM_OPS; ++i) {
            FUZZ_CHECK(1 == engines[e].node.fired[i]);
        }
        fuzz_engine_teardown(&engines[e]);
    }
    while (NULL != net.head) {
        fuzz_msg_t *m = net.head;
        net.head = m->next;
        free(m);
    }
}

static void fuzz_write_native_seeds(const char *dir)
{
    opal_buffer_t payloads[FUZZ_NATIVE_REPLY + 1];
    static const uint16_t types[FUZZ_NATIVE_REPLY + 1] = {
        [FUZZ_NATIVE_HELLO] = OPAL_NATIVE_HELLO, [FUZZ_NATIVE_COMMIT] = OPAL_NATIVE_COMMIT,
        [FUZZ_NATIVE_FENCE] = OPAL_NATIVE_FENCE, [FUZZ_NATIVE_GET] = OPAL_NATIVE_GET,
        [FUZZ_NATIVE_ABORT] = OPAL_NATIVE_ABORT, [FUZZ_NATIVE_REPLY] = OPAL_NATIVE_REPLY,
    };
    static const char *const names[FUZZ_NATIVE_REPLY + 1] = {
        [FUZZ_NATIVE_HELLO] = "hello", [FUZZ_NATIVE_COMMIT] = "commit",
        [FUZZ_NATIVE_FENCE] = "fence", [FUZZ_NATIVE_GET] = "get",
        [FUZZ_NATIVE_ABORT] = "abort", [FUZZ_NATIVE_REPLY] = "reply",
    };
    opal_native_hello_t hello = {.nspace = "dvm.7", .rank = 3, .pid = 4242, .token = "secret"};
    opal_native_put_t puts[] = {{.key = "pmix.hname", .value = "n0", .len = 2},
                                {.key = "empty", .value = NULL, .len = 0},
                                {.key = "card", .value = "\x00\x01\xff", .len = 3}};
    opal_native_commit_t commit = {.puts = puts, .num_puts = 3};
    opal_native_get_t get = {.peer = 1, .key = "pmix.hname"};
    opal_native_abort_t abort_message = {.status = 3, .message = "rank 3 gave up"};
    opal_native_reply_t reply = {.status = 0, .error = "", .value = "n1", .len = 2};

    for (int i = FUZZ_NATIVE_HELLO; i <= FUZZ_NATIVE_REPLY; ++i) {
        opal_buffer_init(&payloads[i]);
    }
    FUZZ_CHECK(HERD_SUCCESS == opal_native_pack_hello(&payloads[FUZZ_NATIVE_HELLO], &hello));
    FUZZ_CHECK(HERD_SUCCESS == opal_native_pack_commit(&payloads[FUZZ_NATIVE_COMMIT], &commit));
    FUZZ_CHECK(HERD_SUCCESS == opal_native_pack_fence(&payloads[FUZZ_NATIVE_FENCE], true));
    FUZZ_CHECK(HERD_SUCCESS == opal_native_pack_get(&payloads[FUZZ_NATIVE_GET], &get));
    FUZZ_CHECK(HERD_SUCCESS ==
               opal_native_pack_abort(&payloads[FUZZ_NATIVE_ABORT], &abort_message));
    FUZZ_CHECK(HERD_SUCCESS == opal_native_pack_reply(&payloads[FUZZ_NATIVE_REPLY], &reply));

    /* each payload alone, then all of them as one client's stream of frames */
    uint8_t *stream = NULL;
    size_t stream_len = 0;
    for (int i = FUZZ_NATIVE_HELLO; i <= FUZZ_NATIVE_REPLY; ++i) {
        char name[64];
        opal_buffer_t frame = OPAL_BUFFER_STATIC_INIT;
        snprintf(name, sizeof(name), "native-%s", names[i]);
        fuzz_write_seed(dir, name, (uint8_t) i, NULL, 0, payloads[i].base, payloads[i].used);
        FUZZ_CHECK(HERD_SUCCESS == opal_native_encode((opal_native_type_t) types[i], (uint32_t) i,
                                                      payloads[i].base, payloads[i].used, &frame));
        snprintf(name, sizeof(name), "native-frame-%s", names[i]);
        fuzz_write_seed(dir, name, FUZZ_NATIVE_FRAMES, NULL, 0, frame.base, frame.used);
        uint8_t *grown = realloc(stream, stream_len + frame.used);
        FUZZ_CHECK(NULL != grown);
        memcpy(grown + stream_len, frame.base, frame.used);
        stream = grown;
        stream_len += frame.used;
        opal_buffer_destruct(&frame);
        opal_buffer_destruct(&payloads[i]);
    }
    opal_buffer_t finalize = OPAL_BUFFER_STATIC_INIT;
    FUZZ_CHECK(HERD_SUCCESS == opal_native_encode(OPAL_NATIVE_FINALIZE, 99, NULL, 0, &finalize));
    fuzz_write_seed(dir, "native-frames", FUZZ_NATIVE_FRAMES, stream, stream_len, finalize.base,
                    finalize.used);
    opal_buffer_destruct(&finalize);
    free(stream);
}

static void fuzz_write_text_seed(const char *dir, const char *name, uint8_t mode, const char *text)
{
    fuzz_write_seed(dir, name, mode, NULL, 0, text, strlen(text));
}

static void fuzz_write_pmi1_seeds(const char *dir)
{
    /* what MPICH's simple PMI sends, in the order it does */
    fuzz_write_text_seed(dir, "pmi1-startup", FUZZ_PMI1_STREAM,
                         "cmd=init pmi_version=1 pmi_subversion=1\n"
                         "cmd=get_maxes\ncmd=get_appnum\ncmd=get_my_kvsname\n"
                         "cmd=get_universe_size\n"
                         "cmd=get kvsname=kvs_7_0 key=PMI_process_mapping\n");
    fuzz_write_text_seed(dir, "pmi1-kvs", FUZZ_PMI1_STREAM,
                         "cmd=put kvsname=kvs_7_0 key=-bcast-1-0 value=2F6465762F73686D\n"
                         "cmd=barrier_in\n"
                         "cmd=get kvsname=kvs_7_0 key=-bcast-1-1\n"
                         "cmd=publish_name service=svc port=tag#0$\n"
                         "cmd=lookup_name service=svc\ncmd=unpublish_name service=svc\n"
                         "cmd=abort exitcode=3 msg=bye\ncmd=finalize\n");
    fuzz_write_text_seed(dir, "pmi1-spawn", FUZZ_PMI1_STREAM,
                         "mcmd=spawn\nnprocs=2\nexecname=./worker\ntotspawns=1\nspawnssofar=1\n"
                         "argcnt=2\narg1=-x\narg2=a b=c\npreput_num=1\npreput_key_0=PARENT_ROOT\n"
                         "preput_val_0=0\ninfo_num=1\ninfo_key_0=wdir\ninfo_val_0=/tmp\n"
                         "endcmd\ncmd=get_result\n");

    /* two nodes of four, then a cyclic map, each with a buffer of just enough room */
    static const uint8_t block[] = {0, 28, 0, 0, 0, 0, 1, 1, 1, 1};
    static const uint8_t cyclic[] = {0, 40, 0, 1, 2, 0, 1, 2, 0, 1, 2, 3};
    fuzz_write_seed(dir, "mapping-block", FUZZ_PMI1_MAPPING, NULL, 0, block, sizeof(block));
    fuzz_write_seed(dir, "mapping-cyclic", FUZZ_PMI1_MAPPING, NULL, 0, cyclic, sizeof(cyclic));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (0 == size) {
        return 0;
    }
    const uint8_t *rest = data + 1;
    size_t len = size - 1;
    switch (data[0] % FUZZ_NUM_MODES) {
    case FUZZ_NATIVE_FRAMES:
        fuzz_native_frames(rest, len);
        break;
    case FUZZ_NATIVE_HELLO:
        fuzz_native_hello(rest, len);
        break;
    case FUZZ_NATIVE_COMMIT:
        fuzz_native_commit(rest, len);
        break;
    case FUZZ_NATIVE_FENCE:
        fuzz_native_fence(rest, len);
        break;
    case FUZZ_NATIVE_GET:
        fuzz_native_get(rest, len);
        break;
    case FUZZ_NATIVE_ABORT:
        fuzz_native_abort(rest, len);
        break;
    case FUZZ_NATIVE_REPLY:
        fuzz_native_reply(rest, len);
        break;
    case FUZZ_PMI1_STREAM:
        fuzz_pmi1_stream(rest, len);
        break;
    case FUZZ_PMI1_MAPPING:
        fuzz_pmi1_mapping(rest, len);
        break;
    case FUZZ_ENGINE:
        fuzz_engine(rest, len);
        break;
    default:
        abort();
    }
    return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *dir = getenv("HERD_FUZZ_WIREUP_SEEDS");
    (void) argc;
    (void) argv;
    /* one loop for every engine: created once, as libFuzzer runs every input in this process */
    FUZZ_CHECK(HERD_SUCCESS == opal_event_base_create(&fuzz_base));
    if (NULL != dir) {
        fuzz_write_native_seeds(dir);
        fuzz_write_pmi1_seeds(dir);
        fuzz_write_engine_seeds(dir, FUZZ_ME);
        fuzz_write_engine_seeds(dir, 2);
    }
    return 0;
}
