/* SPDX-License-Identifier: BSD-3-Clause */
/* libherd's RM-assigned endpoint calls (herd_peer_endpoint, herd_peer_endpoint_at) against a job
 * database built here, with a stand-in session daemon (a thread answering the native protocol)
 * so herd_init succeeds as under herdrun. */
#include "herd_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "herd.h"
#include "opal/dss/buffer.h"
#include "opal/util/fd.h"
#include "opal/util/jobdb.h"
#include "opal/util/native_wire.h"

typedef struct {
    char dir[48];
    char path[64];
    int listen_fd;
    pthread_t thread;
    opal_jobdb_t *db;
} fixture_t;

/* The stand-in daemon: every request of the one client gets a success reply, until it leaves. */
static void *daemon_main(void *arg)
{
    fixture_t *fx = arg;
    int fd = accept(fx->listen_fd, NULL, NULL);
    uint8_t buf[65536];
    size_t used = 0;
    while (fd >= 0) {
        ssize_t n = read(fd, buf + used, sizeof(buf) - used);
        if (n <= 0) {
            break;
        }
        used += (size_t) n;
        opal_native_header_t h;
        long whole;
        while ((whole = opal_native_frame(buf, used, &h)) > 0) {
            opal_buffer_t payload, frame;
            opal_native_reply_t reply = {.status = HERD_SUCCESS, .error = ""};
            opal_buffer_init(&payload);
            opal_buffer_init(&frame);
            if (HERD_SUCCESS == opal_native_pack_reply(&payload, &reply) &&
                HERD_SUCCESS == opal_native_encode(OPAL_NATIVE_REPLY, h.id, payload.base,
                                                   payload.used, &frame)) {
                opal_fd_write_all(fd, frame.base, frame.used);
            }
            opal_buffer_destruct(&payload);
            opal_buffer_destruct(&frame);
            memmove(buf, buf + whole, used - (size_t) whole);
            used -= (size_t) whole;
        }
    }
    if (fd >= 0) {
        close(fd);
    }
    return NULL;
}

static opal_jobdb_addr_t addr_of(const char *text)
{
    opal_jobdb_addr_t a = {.family = OPAL_JOBDB_ADDR_IPV4};
    if (1 != inet_pton(AF_INET, text, a.bytes)) {
        a.family = OPAL_JOBDB_ADDR_IPV6;
        assert_int_equal(1, inet_pton(AF_INET6, text, a.bytes));
    }
    return a;
}

/* 3 procs, rank 0 and 1 on node a, rank 2 on node b; tcp and ofi:tcp;ofi_rxm assigned, ucx not. */
static void build_db(fixture_t *fx)
{
    char jobid[64];
    opal_jobdb_layout_t layout = {.num_fabrics = 3, .fabric_addrs = 2};
    snprintf(jobid, sizeof(jobid), "libherdtest%ld", (long) getpid());
    assert_int_equal(HERD_SUCCESS, opal_jobdb_create(jobid, "a", 3, 2, &layout, &fx->db));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_set_node(fx->db, 0, "a"));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_set_node(fx->db, 1, "b"));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_set_fabric(fx->db, 0, "tcp", true, 16384, 512, NULL));
    assert_int_equal(HERD_SUCCESS,
                     opal_jobdb_set_fabric(fx->db, 1, "ofi:tcp;ofi_rxm", true, 20480, 256, NULL));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_set_fabric(fx->db, 2, "ucx", false, 0, 0,
                                                         "UCX makes a worker's address at run "
                                                         "time"));
    opal_jobdb_addr_t a[2] = {addr_of("10.0.0.1"), addr_of("fd00::1")};
    opal_jobdb_addr_t b[2] = {addr_of("10.0.0.2"), addr_of("fd00::2")};
    opal_jobdb_addr_t b_ofi = addr_of("10.1.0.2"), a_ofi = addr_of("10.1.0.1");
    assert_int_equal(HERD_SUCCESS, opal_jobdb_set_fabric_addrs(fx->db, 0, 0, a, 2));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_set_fabric_addrs(fx->db, 0, 1, b, 2));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_set_fabric_addrs(fx->db, 1, 0, &a_ofi, 1));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_set_fabric_addrs(fx->db, 1, 1, &b_ofi, 1));
    for (uint32_t r = 0; r < 3; ++r) {
        uint32_t node_rank = r < 2 ? r : 0;
        uint16_t ports[3] = {(uint16_t) (16384 + node_rank), (uint16_t) (20480 + node_rank), 0};
        opal_jobdb_proc_t proc = {.rank = r,
                                  .node = r < 2 ? 0 : 1,
                                  .local_rank = node_rank,
                                  .node_rank = node_rank,
                                  .cpuset = "",
                                  .locality = "",
                                  .ports = ports};
        assert_int_equal(HERD_SUCCESS, opal_jobdb_put_proc(fx->db, &proc));
    }
    assert_int_equal(HERD_SUCCESS, opal_jobdb_finish(fx->db));
}

static int setup(void **state)
{
    fixture_t *fx = calloc(1, sizeof(*fx));
    if (NULL == fx) {
        return -1;
    }
    snprintf(fx->dir, sizeof(fx->dir), "/tmp/herd-libherd-XXXXXX");
    if (NULL == mkdtemp(fx->dir)) {
        free(fx);
        return -1;
    }
    snprintf(fx->path, sizeof(fx->path), "%s/native.sock", fx->dir);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    memcpy(addr.sun_path, fx->path, strlen(fx->path) + 1);
    fx->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fx->listen_fd < 0 || 0 != bind(fx->listen_fd, (struct sockaddr *) &addr, sizeof(addr)) ||
        0 != listen(fx->listen_fd, 1) || 0 != pthread_create(&fx->thread, NULL, daemon_main, fx)) {
        return -1;
    }
    build_db(fx);
    char uri[160];
    snprintf(uri, sizeof(uri), "unix:%s", fx->path);
    setenv("HERD_WIREUP_URI", uri, 1);
    setenv("HERD_JOBDB", opal_jobdb_name(fx->db), 1);
    setenv("HERD_NSPACE", "herd.test", 1);
    setenv("HERD_RANK", "0", 1);
    setenv("HERD_LOCAL_SIZE", "2", 1);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *fx = *state;
    herd_finalize();
    shutdown(fx->listen_fd, SHUT_RDWR); /* a daemon still waiting in accept() returns */
    pthread_join(fx->thread, NULL);
    close(fx->listen_fd);
    unlink(fx->path);
    rmdir(fx->dir);
    opal_jobdb_destroy(fx->db);
    free(fx);
    return 0;
}

static void expect_endpoint(uint32_t peer, const char *fabric, uint32_t index, const char *want)
{
    struct sockaddr_storage addr;
    size_t len = sizeof(addr);
    char text[96];
    int rc = herd_peer_endpoint_at(peer, fabric, index, &addr, &len);
    if (HERD_SUCCESS != rc) {
        fail_msg("rank %u on %s: %s (%s)", peer, fabric, herd_strerror(rc), herd_last_error());
    }
    assert_int_equal(HERD_SUCCESS, opal_jobdb_endpoint_string(&addr, len, text, sizeof(text)));
    assert_string_equal(want, text);
}

static void expect_error(int want, int rc, const char *part)
{
    assert_int_equal(want, rc);
    if (NULL == strstr(herd_last_error(), part)) {
        fail_msg("herd_last_error() \"%s\" lacks \"%s\"", herd_last_error(), part);
    }
}

static void test_peer_endpoint(void **state)
{
    struct sockaddr_storage addr;
    size_t len = sizeof(addr);
    expect_error(HERD_ERR_NOT_AVAILABLE, herd_peer_endpoint(1, "tcp", &addr, &len),
                 "herd_init has not been called");
    assert_int_equal(HERD_SUCCESS, herd_init());

    /* its own endpoint (to bind) and its peers' (to connect to), on either address */
    expect_endpoint(0, "tcp", 0, "10.0.0.1:16384");
    expect_endpoint(1, "tcp", 0, "10.0.0.1:16385");
    expect_endpoint(2, "tcp", 0, "10.0.0.2:16384");
    expect_endpoint(2, "tcp", 1, "[fd00::2]:16384");
    /* a libfabric provider by its full fabric name or its plain name */
    expect_endpoint(1, "ofi:tcp;ofi_rxm", 0, "10.1.0.1:20481");
    expect_endpoint(2, "tcp;ofi_rxm", 0, "10.1.0.2:20480");

    struct sockaddr_in in4;
    len = sizeof(in4);
    assert_int_equal(HERD_SUCCESS, herd_peer_endpoint(2, "tcp", &in4, &len));
    assert_int_equal(sizeof(in4), len);
    assert_int_equal(AF_INET, in4.sin_family);
    assert_int_equal(16384, ntohs(in4.sin_port));

    /* no endpoint: the transport uses herd_put/herd_get, and the error says why */
    len = sizeof(addr);
    expect_error(HERD_ERR_NOT_FOUND, herd_peer_endpoint(1, "ucx", &addr, &len),
                 "fabric ucx uses the modex in this job: UCX makes a worker's address");
    expect_error(HERD_ERR_NOT_FOUND, herd_peer_endpoint(1, "verbs", &addr, &len),
                 "no endpoint is assigned on fabric verbs");
    expect_error(HERD_ERR_NOT_FOUND, herd_peer_endpoint_at(2, "tcp", 2, &addr, &len),
                 "no address 2");
    expect_error(HERD_ERR_NOT_FOUND, herd_peer_endpoint_at(2, "ofi:tcp;ofi_rxm", 1, &addr, &len),
                 "no address 1");
    /* bad arguments */
    expect_error(HERD_ERR_BAD_PARAM, herd_peer_endpoint(3, "tcp", &addr, &len), "not in the job");
    len = sizeof(struct sockaddr_in6) - 1;
    expect_error(HERD_ERR_BAD_PARAM, herd_peer_endpoint_at(2, "tcp", 1, &addr, &len), "too few");
    assert_int_equal(sizeof(struct sockaddr_in6) - 1, len); /* untouched on failure */
    expect_error(HERD_ERR_BAD_PARAM, herd_peer_endpoint(1, "", &addr, &len), "no fabric named");
    expect_error(HERD_ERR_BAD_PARAM, herd_peer_endpoint(1, "tcp", &addr, NULL), "its length");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_peer_endpoint, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
