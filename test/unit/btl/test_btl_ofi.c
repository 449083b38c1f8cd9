/* SPDX-License-Identifier: BSD-3-Clause */
/* btl ofi: the front's variables reach the transport, its DSO missing leaves ofi out with the
 * reason, a loopback through the real DSO and libfabric in one process (a message to itself,
 * short and in fragments, by the modex of a stand-in runtime), and the wire decoders (every
 * malformed field, random bytes). */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ompi-shim/mca/btl/btl.h"
#include "ompi-shim/mca/btl/ofi/btl_ofi.h"
#include "ompi-shim/proc/proc.h"
#include "opal/mca/mca.h"
#include "support/capture.h"

#define JOB_SIZE 4u
#define MY_RANK  1u

static char *build_component_path;
static herd_test_capture_t stderr_capture;
static char jobid[64];

/* ------------------------------------------------------------------------------------------ */
/* a stand-in runtime: one node, no RM endpoints, a modex that keeps what this process puts */

static void *modex_value;
static size_t modex_len;
static int puts_seen, commits_seen;

static int rte_peer_node(uint32_t peer, uint32_t *node)
{
    (void) peer;
    *node = 0;
    return HERD_SUCCESS;
}

static int rte_peer_endpoint(uint32_t peer, const char *fabric, void *addr, size_t *len)
{
    (void) peer, (void) fabric, (void) addr, (void) len;
    return HERD_ERR_NOT_FOUND;
}

static int rte_put(const char *key, const void *value, size_t len)
{
    assert_string_equal(key, BTL_OFI_MODEX_KEY);
    free(modex_value);
    modex_value = malloc(len);
    memcpy(modex_value, value, len);
    modex_len = len;
    puts_seen++;
    return HERD_SUCCESS;
}

static int rte_commit(void)
{
    commits_seen++;
    return HERD_SUCCESS;
}

static int rte_get(uint32_t peer, const char *key, void **value, size_t *len)
{
    if (MY_RANK != peer || 0 != strcmp(key, BTL_OFI_MODEX_KEY) || NULL == modex_value) {
        return HERD_ERR_NOT_FOUND;
    }
    *value = malloc(modex_len);
    memcpy(*value, modex_value, modex_len);
    *len = modex_len;
    return HERD_SUCCESS;
}

static const char *rte_last_error(void)
{
    return "no job in a unit test";
}

static ompi_btl_rte_t rte = {
    .my_rank = MY_RANK,
    .job_size = JOB_SIZE,
    .my_node = 0,
    .jobid = jobid,
    .node_name = "unitnode",
    .peer_node = rte_peer_node,
    .peer_endpoint = rte_peer_endpoint,
    .put = rte_put,
    .commit = rte_commit,
    .get = rte_get,
    .last_error = rte_last_error,
};

static int setup(void **state)
{
    (void) state;
    setenv("HERD_MCA_component_path", build_component_path, 1);
    setenv("HERD_MCA_btl", "ofi", 1);
    assert_int_equal(ompi_proc_init(JOB_SIZE), HERD_SUCCESS);
    puts_seen = commits_seen = 0;
    return 0;
}

static int teardown(void **state)
{
    (void) state;
    ompi_btl_base_close();
    ompi_proc_finalize();
    free(modex_value);
    modex_value = NULL;
    unsetenv("HERD_MCA_btl");
    unsetenv("HERD_MCA_btl_base_verbose");
    unsetenv("HERD_MCA_btl_ofi_frag_size");
    unsetenv("HERD_MCA_btl_ofi_provider");
    unsetenv("HERD_MCA_btl_base_dso_path");
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* the front */

/* No herd-btl-ofi.so on the component path: ofi does not start, the reason names the library
 * and the way out, and nothing was published. */
static void test_dso_missing(void **state)
{
    (void) state;
    setenv("HERD_MCA_component_path", "/nonexistent", 1);
    setenv("HERD_MCA_btl_base_dso_path", "/nonexistent", 1); /* not an installed one either */
    setenv("HERD_MCA_btl", "self,ofi", 1);
    setenv("HERD_MCA_btl_base_verbose", "1", 1);
    herd_test_capture_start(&stderr_capture);
    int rc = ompi_btl_base_open(&rte);
    char *err = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(rc, HERD_SUCCESS); /* self started */
    assert_contains(err, "herd-btl-ofi.so is in no folder of btl_base_dso_path (/nonexistent");
    assert_contains(err, "--mca btl ^ofi");
    assert_contains(err, "the ofi transport could not start");
    free(err);
    assert_int_equal(puts_seen, 0);
    assert_int_equal(ompi_btl_base_send(MY_RANK + 1, 1, "x", 1), HERD_ERR_UNREACH);
}

/* A provider list that names nothing that opens: ofi does not start, and says what it tried. */
static void test_no_provider(void **state)
{
    (void) state;
    setenv("HERD_MCA_btl", "self,ofi", 1);
    setenv("HERD_MCA_btl_ofi_provider", "no_such_provider,neither", 1);
    setenv("HERD_MCA_btl_base_verbose", "1", 1);
    herd_test_capture_start(&stderr_capture);
    int rc = ompi_btl_base_open(&rte);
    char *err = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(rc, HERD_SUCCESS);
    assert_contains(err, "no libfabric provider of btl_ofi_provider \"no_such_provider,neither\"");
    assert_contains(err, "no_such_provider (fi_getinfo: ");
    assert_contains(err, "; neither (fi_getinfo: ");
    free(err);
}

/* ------------------------------------------------------------------------------------------ */
/* a loopback through the transport */

static int wait_for(ompi_btl_recv_t *r)
{
    for (long i = 0; i < 20000000 && !r->done; ++i) {
        int rc = ompi_btl_base_progress();
        if (rc < 0) {
            return rc;
        }
    }
    return r->done ? HERD_SUCCESS : HERD_ERR_TIMEOUT;
}

static void test_loopback(void **state)
{
    (void) state;
    /* an odd fragment size: a fragment out of place cannot match the payload */
    setenv("HERD_MCA_btl_ofi_frag_size", "50000", 1);
    setenv("HERD_MCA_btl_base_verbose", "5", 1);
    herd_test_capture_start(&stderr_capture);
    int rc = ompi_btl_base_open(&rte);
    char *err = herd_test_capture_stop(&stderr_capture);
    if (HERD_SUCCESS != rc) {
        free(err);
        skip(); /* no provider of the default list opens on this host */
    }
    /* the modex path: the address was published (put and commit) */
    assert_contains(err, "published by the modex (the job has no RM-assigned endpoint for it)");
    free(err);
    assert_int_equal(puts_seen, 1);
    assert_int_equal(commits_seen, 1);

    char small[8] = "ofi-one", got_small[8] = "";
    ompi_btl_recv_t r = {.want_src = MY_RANK, .want_tag = 4, .buf = got_small, .cap = 8};
    assert_int_equal(ompi_btl_base_post_recv(&r), HERD_SUCCESS);
    rc = ompi_btl_base_send(MY_RANK, 4, small, sizeof(small));
    if (HERD_SUCCESS == rc) {
        rc = wait_for(&r);
    }
    if (HERD_SUCCESS != rc) {
        ompi_btl_base_cancel_recv(&r);
        skip(); /* the provider cannot send to its own endpoint */
    }
    assert_string_equal(ompi_btl_base_peer_module(MY_RANK)->name, "ofi");
    assert_int_equal(r.status, HERD_SUCCESS);
    assert_int_equal(r.len, sizeof(small));
    assert_string_equal(got_small, small);

    /* 1 MB: 21 fragments of 50000 bytes, joined in order */
    size_t n = 1u << 20;
    unsigned char *out = malloc(n), *in = calloc(1, n);
    for (size_t i = 0; i < n; ++i) {
        out[i] = (unsigned char) (i * 7u + (i >> 9));
    }
    ompi_btl_recv_t big = {.want_src = MY_RANK, .want_tag = 5, .buf = in, .cap = n};
    assert_int_equal(ompi_btl_base_post_recv(&big), HERD_SUCCESS);
    assert_int_equal(ompi_btl_base_send(MY_RANK, 5, out, n), HERD_SUCCESS);
    assert_int_equal(wait_for(&big), HERD_SUCCESS);
    assert_int_equal(big.len, n);
    assert_memory_equal(in, out, n);
    free(out);
    free(in);
}

/* ------------------------------------------------------------------------------------------ */
/* the wire */

static size_t frame(uint8_t *buf, uint8_t type, uint32_t src, int32_t tag, uint32_t dst,
                    uint64_t length, size_t payload)
{
    btl_ofi_header_t h = {.type = type, .src = src, .tag = tag, .dst = dst, .length = length};
    btl_ofi_encode_header(&h, buf);
    memset(buf + BTL_OFI_HEADER_SIZE, 0xab, payload);
    return BTL_OFI_HEADER_SIZE + payload;
}

static void test_wire_header(void **state)
{
    uint8_t buf[256];
    btl_ofi_header_t h;
    size_t len;
    (void) state;

    len = frame(buf, BTL_OFI_MSG, 3, 7, 1, 1000, 100);
    assert_int_equal(btl_ofi_decode_header(buf, len, JOB_SIZE, 4096, &h), HERD_SUCCESS);
    assert_int_equal(h.type, BTL_OFI_MSG);
    assert_int_equal(h.src, 3);
    assert_int_equal(h.tag, 7);
    assert_int_equal(h.dst, 1);
    assert_int_equal(h.length, 1000);
    /* shorter than a header, bad magic, another version, flags, a rank outside the job */
    assert_int_equal(btl_ofi_decode_header(buf, 23, JOB_SIZE, 4096, &h), HERD_ERR_UNPACK_FAILURE);
    buf[0] = 'X';
    assert_int_equal(btl_ofi_decode_header(buf, len, JOB_SIZE, 4096, &h), HERD_ERR_UNPACK_FAILURE);
    frame(buf, BTL_OFI_MSG, 3, 7, 1, 1000, 100);
    buf[1] = 2;
    assert_int_equal(btl_ofi_decode_header(buf, len, JOB_SIZE, 4096, &h),
                     HERD_ERR_VERSION_MISMATCH);
    frame(buf, BTL_OFI_MSG, 3, 7, 1, 1000, 100);
    buf[3] = 1;
    assert_int_equal(btl_ofi_decode_header(buf, len, JOB_SIZE, 4096, &h), HERD_ERR_UNPACK_FAILURE);
    len = frame(buf, BTL_OFI_MSG, JOB_SIZE, 7, 1, 1000, 100);
    assert_int_equal(btl_ofi_decode_header(buf, len, JOB_SIZE, 4096, &h), HERD_ERR_UNPACK_FAILURE);
    /* an unknown type, a negative tag, longer than max_message, a frame longer than its
     * message, an empty fragment */
    len = frame(buf, 9, 3, 7, 1, 1000, 100);
    assert_int_equal(btl_ofi_decode_header(buf, len, JOB_SIZE, 4096, &h), HERD_ERR_UNPACK_FAILURE);
    len = frame(buf, BTL_OFI_MSG, 3, -1, 1, 1000, 100);
    assert_int_equal(btl_ofi_decode_header(buf, len, JOB_SIZE, 4096, &h), HERD_ERR_UNPACK_FAILURE);
    len = frame(buf, BTL_OFI_MSG, 3, 7, 1, 5000, 100);
    assert_int_equal(btl_ofi_decode_header(buf, len, JOB_SIZE, 4096, &h), HERD_ERR_UNPACK_FAILURE);
    len = frame(buf, BTL_OFI_MSG, 3, 7, 1, 50, 100);
    assert_int_equal(btl_ofi_decode_header(buf, len, JOB_SIZE, 4096, &h), HERD_ERR_UNPACK_FAILURE);
    len = frame(buf, BTL_OFI_FRAG, 3, 7, 1, 1000, 0);
    assert_int_equal(btl_ofi_decode_header(buf, len, JOB_SIZE, 4096, &h), HERD_ERR_UNPACK_FAILURE);
    len = frame(buf, BTL_OFI_FRAG, 3, 7, 1, 1000, 10);
    assert_int_equal(btl_ofi_decode_header(buf, len, JOB_SIZE, 4096, &h), HERD_SUCCESS);
    /* an empty message is one MSG frame of its header */
    len = frame(buf, BTL_OFI_MSG, 3, 0, 1, 0, 0);
    assert_int_equal(btl_ofi_decode_header(buf, len, JOB_SIZE, 4096, &h), HERD_SUCCESS);
    /* HELLO/ACK: length must be the payload's, tag 0, dst a rank of the job */
    len = frame(buf, BTL_OFI_HELLO, 3, 0, 1, 10, 10);
    assert_int_equal(btl_ofi_decode_header(buf, len, JOB_SIZE, 4096, &h), HERD_SUCCESS);
    len = frame(buf, BTL_OFI_HELLO, 3, 0, 1, 11, 10);
    assert_int_equal(btl_ofi_decode_header(buf, len, JOB_SIZE, 4096, &h), HERD_ERR_UNPACK_FAILURE);
    len = frame(buf, BTL_OFI_ACK, 3, 5, 1, 10, 10);
    assert_int_equal(btl_ofi_decode_header(buf, len, JOB_SIZE, 4096, &h), HERD_ERR_UNPACK_FAILURE);
    len = frame(buf, BTL_OFI_ACK, 3, 0, JOB_SIZE, 10, 10);
    assert_int_equal(btl_ofi_decode_header(buf, len, JOB_SIZE, 4096, &h), HERD_ERR_UNPACK_FAILURE);
    len = frame(buf, BTL_OFI_ACK, 3, 0, 1, BTL_OFI_HELLO_MAX + 1, BTL_OFI_HELLO_MAX + 1);
    assert_int_equal(btl_ofi_decode_header(buf, len, JOB_SIZE, 4096, &h), HERD_ERR_UNPACK_FAILURE);
}

static void test_wire_hello_and_modex(void **state)
{
    uint8_t p[BTL_OFI_HELLO_MAX], addr[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    const uint8_t *a;
    size_t alen, n;
    bool same;
    (void) state;

    n = btl_ofi_encode_hello("job.1", addr, sizeof(addr), p);
    assert_int_equal(n, 2 + 5 + 2 + 16);
    assert_int_equal(btl_ofi_decode_hello(p, n, "job.1", true, &same, &a, &alen), HERD_SUCCESS);
    assert_true(same);
    assert_int_equal(alen, 16);
    assert_memory_equal(a, addr, 16);
    assert_int_equal(btl_ofi_decode_hello(p, n, "job.2", true, &same, &a, &alen), HERD_SUCCESS);
    assert_false(same);
    /* cut short, one byte too many, an address length of 0, a job id length of 0 */
    for (size_t k = 0; k < n; ++k) {
        assert_int_equal(btl_ofi_decode_hello(p, k, "job.1", true, &same, &a, &alen),
                         HERD_ERR_UNPACK_FAILURE);
    }
    assert_int_equal(btl_ofi_decode_hello(p, n + 1, "job.1", true, &same, &a, &alen),
                     HERD_ERR_UNPACK_FAILURE);
    p[7] = p[8] = 0;
    assert_int_equal(btl_ofi_decode_hello(p, n, "job.1", true, &same, &a, &alen),
                     HERD_ERR_UNPACK_FAILURE);
    p[0] = p[1] = 0;
    assert_int_equal(btl_ofi_decode_hello(p, n, "job.1", true, &same, &a, &alen),
                     HERD_ERR_UNPACK_FAILURE);
    /* an ACK: no address, nothing after the job id */
    n = btl_ofi_encode_hello("job.1", NULL, 0, p);
    assert_int_equal(btl_ofi_decode_hello(p, n, "job.1", false, &same, NULL, NULL), HERD_SUCCESS);
    assert_int_equal(btl_ofi_decode_hello(p, n + 1, "job.1", false, &same, NULL, NULL),
                     HERD_ERR_UNPACK_FAILURE);
    /* a job id too long, an address too long */
    char longid[BTL_OFI_JOBID_MAX + 2];
    memset(longid, 'j', sizeof(longid) - 1);
    longid[sizeof(longid) - 1] = '\0';
    assert_int_equal(btl_ofi_encode_hello(longid, NULL, 0, p), 0);
    assert_int_equal(btl_ofi_encode_hello("job.1", addr, BTL_OFI_ADDR_MAX + 1, p), 0);

    /* the modex value */
    uint8_t v[256];
    char name[64];
    n = btl_ofi_encode_modex("tcp;ofi_rxm", addr, sizeof(addr), v, sizeof(v));
    assert_int_equal(n, 1 + 11 + 16);
    assert_int_equal(btl_ofi_decode_modex(v, n, name, sizeof(name), &a, &alen), HERD_SUCCESS);
    assert_string_equal(name, "tcp;ofi_rxm");
    assert_int_equal(alen, 16);
    assert_int_equal(btl_ofi_decode_modex(v, 12, name, sizeof(name), &a, &alen),
                     HERD_ERR_UNPACK_FAILURE); /* no address */
    assert_int_equal(btl_ofi_decode_modex(v, n, name, 5, &a, &alen), HERD_ERR_UNPACK_FAILURE);
    v[3] = '\0';
    assert_int_equal(btl_ofi_decode_modex(v, n, name, sizeof(name), &a, &alen),
                     HERD_ERR_UNPACK_FAILURE); /* a NUL inside the name */
    assert_int_equal(btl_ofi_encode_modex("tcp", addr, sizeof(addr), v, 10), 0);
}

/* Random bytes never crash a decoder nor pass with a field out of range. */
static void test_wire_random(void **state)
{
    uint8_t buf[96];
    btl_ofi_header_t h;
    bool same;
    const uint8_t *a;
    size_t alen;
    char name[32];
    (void) state;

    srand(12345);
    for (int i = 0; i < 200000; ++i) {
        size_t len = (size_t) rand() % sizeof(buf);
        for (size_t k = 0; k < len; ++k) {
            buf[k] = (uint8_t) rand();
        }
        if (i % 2) {
            buf[0] = BTL_OFI_MAGIC; /* get past the first check often */
            if (len > 3) {
                buf[1] = BTL_OFI_VERSION;
                buf[3] = 0;
            }
        }
        if (HERD_SUCCESS == btl_ofi_decode_header(buf, len, JOB_SIZE, 4096, &h)) {
            assert_true(h.src < JOB_SIZE);
            assert_true(h.type >= BTL_OFI_HELLO && h.type <= BTL_OFI_FRAG);
            assert_true(h.length >= len - BTL_OFI_HEADER_SIZE);
        }
        if (HERD_SUCCESS == btl_ofi_decode_hello(buf, len, "j", true, &same, &a, &alen)) {
            assert_true(a + alen <= buf + len);
        }
        if (HERD_SUCCESS == btl_ofi_decode_modex(buf, len, name, sizeof(name), &a, &alen)) {
            assert_true(a + alen <= buf + len);
            assert_true(strlen(name) < sizeof(name));
        }
    }
}

int main(void)
{
    const char *path = getenv("HERD_MCA_component_path");

    build_component_path = strdup(NULL != path ? path : "");
    snprintf(jobid, sizeof(jobid), "unit%d.1", (int) getpid());
    unsetenv("HERD_MCA_btl_base_verbose");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_dso_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_provider, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loopback, setup, teardown),
        cmocka_unit_test(test_wire_header),
        cmocka_unit_test(test_wire_hello_and_modex),
        cmocka_unit_test(test_wire_random),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    free(build_component_path);
    return failed;
}
