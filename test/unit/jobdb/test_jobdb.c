/* SPDX-License-Identifier: BSD-3-Clause */
/* The node's shared-memory job database: round trips, partial fills seen by a concurrent reader,
 * corrupt segments rejected, and no segment ever left behind in /dev/shm. */
#include "herd_config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "opal/util/jobdb.h"
#include "support/capture.h"

/* Every job id of this run starts with this, so teardown finds what a failed test left. */
static char job_prefix[32];

static void make_jobid(const char *what, char *jobid, size_t size)
{
    snprintf(jobid, size, "%s%s", job_prefix, what);
}

/* The /dev/shm entries of this run: removed when unlink_them, counted either way. */
static int test_segments(bool unlink_them)
{
    char prefix[64];
    int count = 0;
    snprintf(prefix, sizeof(prefix), "herd-%lu-%s", (unsigned long) getuid(), job_prefix);
    DIR *dir = opendir("/dev/shm");
    if (NULL == dir) {
        return -1;
    }
    struct dirent *entry;
    while (NULL != (entry = readdir(dir))) {
        if (0 == strncmp(entry->d_name, prefix, strlen(prefix))) {
            ++count;
            if (unlink_them) {
                char name[300];
                snprintf(name, sizeof(name), "/%s", entry->d_name);
                shm_unlink(name);
            }
        }
    }
    closedir(dir);
    return count;
}

static int setup(void **state)
{
    return 0 == test_segments(false) ? 0 : -1;
}

/* Runs even when the test failed: nothing may stay in /dev/shm. */
static int teardown(void **state)
{
    int left = test_segments(true);
    if (0 != left) {
        fprintf(stderr, "a test left %d segment(s) in /dev/shm\n", left);
        return -1;
    }
    return 0;
}

/* The same proc from its rank, for both writing and checking. */
static void fill_proc(uint32_t rank, uint32_t num_procs, uint32_t num_nodes, char *cpuset,
                      char *locality, uint8_t *endpoints, opal_jobdb_proc_t *proc)
{
    uint32_t per_node = (num_procs + num_nodes - 1) / num_nodes;
    memset(proc, 0, sizeof(*proc));
    proc->rank = rank;
    proc->app = rank % 3;
    proc->node = rank / per_node;
    proc->local_rank = rank % per_node;
    proc->node_rank = rank % per_node + 1;
    proc->bound = 0 != rank % 2;
    /* Unique cpusets and repeated localities: both the plain and the shared string path. */
    snprintf(cpuset, 16, "%u-%u", rank, rank + 1);
    snprintf(locality, 32, "pk%u:co%u", rank % 2, rank % 64);
    proc->cpuset = cpuset;
    proc->locality = locality;
    if (NULL != endpoints) {
        for (uint32_t b = 0; b < 12; ++b) {
            endpoints[b] = (uint8_t) (rank * 7 + b);
        }
        proc->endpoints = endpoints;
        proc->endpoints_length = 12;
    }
}

static void check_view(const opal_jobdb_proc_view_t *view, uint32_t rank, uint32_t num_procs,
                       uint32_t num_nodes)
{
    char cpuset[16], locality[32];
    uint8_t endpoints[12];
    opal_jobdb_proc_t want;
    fill_proc(rank, num_procs, num_nodes, cpuset, locality, endpoints, &want);
    assert_int_equal(rank, view->rank);
    assert_int_equal(want.app, view->app);
    assert_int_equal(want.node, view->node);
    assert_int_equal(want.local_rank, view->local_rank);
    assert_int_equal(want.node_rank, view->node_rank);
    assert_int_equal(want.bound, view->bound);
    assert_string_equal(cpuset, view->cpuset);
    assert_string_equal(locality, view->locality);
    assert_non_null(view->endpoints);
    assert_memory_equal(endpoints, view->endpoints, sizeof(endpoints));
    for (uint32_t b = sizeof(endpoints); b < 16; ++b) {
        assert_int_equal(0, view->endpoints[b]); /* the rest of the slots stays zero */
    }
}

static const opal_jobdb_layout_t two_slots = {.endpoint_slots = 2, .endpoint_slot_size = 8};

static void put_all(opal_jobdb_t *db, uint32_t num_procs, uint32_t num_nodes, bool shuffled)
{
    uint32_t *order = malloc(num_procs * sizeof(*order));
    assert_non_null(order);
    for (uint32_t r = 0; r < num_procs; ++r) {
        order[r] = r;
    }
    if (shuffled) {
        srand(42);
        for (uint32_t i = num_procs - 1; i > 0; --i) {
            uint32_t j = (uint32_t) rand() % (i + 1);
            uint32_t t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
    }
    for (uint32_t i = 0; i < num_procs; ++i) {
        char cpuset[16], locality[32];
        uint8_t endpoints[12];
        opal_jobdb_proc_t proc;
        fill_proc(order[i], num_procs, num_nodes, cpuset, locality, endpoints, &proc);
        assert_int_equal(HERD_SUCCESS, opal_jobdb_put_proc(db, &proc));
    }
    free(order);
}

static void set_nodes(opal_jobdb_t *db, uint32_t num_nodes)
{
    for (uint32_t n = 0; n < num_nodes; ++n) {
        char name[32];
        snprintf(name, sizeof(name), "node%03u", n);
        assert_int_equal(HERD_SUCCESS, opal_jobdb_set_node(db, n, name));
    }
}

static void round_trip(const char *what, uint32_t num_procs, uint32_t num_nodes, bool shuffled)
{
    char jobid[64];
    opal_jobdb_t *writer = NULL, *reader = NULL;
    make_jobid(what, jobid, sizeof(jobid));
    assert_int_equal(HERD_SUCCESS,
                     opal_jobdb_create(jobid, "n0", num_procs, num_nodes, &two_slots, &writer));
    set_nodes(writer, num_nodes);
    put_all(writer, num_procs, num_nodes, shuffled);
    assert_false(opal_jobdb_is_complete(writer));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_finish(writer));

    assert_int_equal(HERD_SUCCESS, opal_jobdb_attach(opal_jobdb_name(writer), &reader));
    assert_true(opal_jobdb_is_complete(reader));
    assert_int_equal(num_procs, opal_jobdb_num_procs(reader));
    assert_int_equal(num_nodes, opal_jobdb_num_nodes(reader));
    assert_string_equal(jobid, opal_jobdb_jobid(reader));
    for (uint32_t r = 0; r < num_procs; ++r) {
        opal_jobdb_proc_view_t view;
        assert_int_equal(HERD_SUCCESS, opal_jobdb_get_proc(reader, r, &view));
        check_view(&view, r, num_procs, num_nodes);
    }
    for (uint32_t n = 0; n < num_nodes; ++n) {
        char name[32];
        snprintf(name, sizeof(name), "node%03u", n);
        assert_string_equal(name, opal_jobdb_node_name(reader, n));
    }
    opal_jobdb_detach(reader);
    opal_jobdb_destroy(writer);
    assert_int_equal(0, test_segments(false));
}

static void test_round_trip_1(void **state)
{
    round_trip("one", 1, 1, false);
}

static void test_round_trip_7(void **state)
{
    round_trip("seven", 7, 3, true);
}

static void test_round_trip_100000(void **state)
{
    round_trip("big", 100000, 1000, true);
}

static void test_segment_name(void **state)
{
    char buf[300];
    char want[300];
    snprintf(want, sizeof(want), "/herd-%lu-42-n1", (unsigned long) getuid());
    assert_int_equal(HERD_SUCCESS, opal_jobdb_segment_name("42", "n1", buf, sizeof(buf)));
    assert_string_equal(want, buf);

    char small[8] = "keep";
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_segment_name("42", "n1", small, 8));
    assert_string_equal("keep", small); /* untouched on failure */
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_segment_name("4/2", "n1", buf, sizeof(buf)));
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_segment_name("", "n1", buf, sizeof(buf)));
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_segment_name("42", NULL, buf, sizeof(buf)));
    char long_node[300];
    memset(long_node, 'x', sizeof(long_node) - 1);
    long_node[sizeof(long_node) - 1] = '\0';
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_segment_name("42", long_node, buf, 300));
}

static void test_not_ready_and_put_errors(void **state)
{
    char jobid[64], cpuset[16], locality[32];
    opal_jobdb_t *writer = NULL, *reader = NULL;
    opal_jobdb_proc_t proc;
    opal_jobdb_proc_view_t view;
    make_jobid("notready", jobid, sizeof(jobid));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_create(jobid, "n0", 4, 2, NULL, &writer));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_attach(opal_jobdb_name(writer), &reader));

    memset(&view, 0xab, sizeof(view));
    opal_jobdb_proc_view_t untouched = view;
    assert_int_equal(HERD_ERR_NOT_FOUND, opal_jobdb_get_proc(reader, 2, &view));
    assert_memory_equal(&untouched, &view, sizeof(view)); /* output set only on success */
    assert_null(opal_jobdb_node_name(reader, 1));

    fill_proc(2, 4, 2, cpuset, locality, NULL, &proc);
    assert_int_equal(HERD_SUCCESS, opal_jobdb_put_proc(writer, &proc));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_get_proc(reader, 2, &view));
    assert_string_equal(cpuset, view.cpuset);
    assert_null(view.endpoints); /* no slots in the default layout */
    assert_int_equal(HERD_ERR_NOT_FOUND, opal_jobdb_get_proc(reader, 3, &view));
    assert_int_equal(HERD_ERR_EXISTS, opal_jobdb_put_proc(writer, &proc));

    proc.rank = 0;
    proc.node = 2; /* only nodes 0 and 1 */
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_put_proc(writer, &proc));
    proc.node = 0;
    proc.endpoints = cpuset;
    proc.endpoints_length = 1; /* no slots to hold it */
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_put_proc(writer, &proc));
    assert_int_equal(HERD_ERR_NOT_FOUND, opal_jobdb_get_proc(reader, 0, &view));
    /* Writing through a reader's handle is refused. */
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_put_proc(reader, &proc));
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_set_node(reader, 0, "n0"));

    assert_int_equal(HERD_SUCCESS, opal_jobdb_set_node(writer, 1, "n1"));
    assert_string_equal("n1", opal_jobdb_node_name(reader, 1));
    assert_int_equal(HERD_ERR_EXISTS, opal_jobdb_set_node(writer, 1, "again"));
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_set_node(writer, 2, "n2"));

    /* Not everything is in: finish refuses and nothing is marked. */
    assert_int_equal(HERD_ERR_NOT_FOUND, opal_jobdb_finish(writer));
    assert_false(opal_jobdb_is_complete(reader));

    /* The dump shows what is there and what is not. */
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    assert_non_null(out);
    opal_jobdb_dump(out, reader);
    fclose(out);
    assert_contains(text, "4 procs (1 ready), 2 nodes, incomplete");
    assert_contains(text, "  0 (not set)\n  1 n1\n");
    assert_contains(text, "  rank 0: not ready\n");
    assert_contains(text, "  rank 2: node 1 (n1), app 2, local rank 0, node rank 1, unbound on "
                          "2-3 (pk0:co2)\n");
    free(text);

    opal_jobdb_detach(reader);
    opal_jobdb_destroy(writer);
}

static void test_out_of_range(void **state)
{
    char jobid[64];
    opal_jobdb_t *writer = NULL, *reader = NULL;
    opal_jobdb_proc_view_t view;
    make_jobid("range", jobid, sizeof(jobid));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_create(jobid, "n0", 3, 1, &two_slots, &writer));
    set_nodes(writer, 1);
    put_all(writer, 3, 1, false);
    assert_int_equal(HERD_SUCCESS, opal_jobdb_finish(writer));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_attach(opal_jobdb_name(writer), &reader));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_get_proc(reader, 2, &view));
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_get_proc(reader, 3, &view));
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_get_proc(reader, UINT32_MAX, &view));
    assert_null(opal_jobdb_node_name(reader, 1));
    assert_null(opal_jobdb_node_name(reader, UINT32_MAX));
    opal_jobdb_detach(reader);
    opal_jobdb_destroy(writer);

    /* Impossible sizes are refused before anything is created. */
    opal_jobdb_t *db = NULL;
    opal_jobdb_layout_t huge = {.endpoint_slots = OPAL_JOBDB_MAX_SLOTS + 1};
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_create(jobid, "n0", 0, 1, NULL, &db));
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_create(jobid, "n0", 1, 0, NULL, &db));
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_create(jobid, "n0", 1, 1, &huge, &db));
    assert_null(db);
    assert_int_equal(0, test_segments(false));
}

/* The forked reader's checks; its exit status says which one failed. */
static int reader_child(const char *name, uint32_t num_procs, int go_fd, int ack_fd)
{
    opal_jobdb_t *db = NULL;
    opal_jobdb_proc_view_t view;
    char token;
    int status = 0;
    if (HERD_SUCCESS != opal_jobdb_attach(name, &db)) {
        return 1;
    }
    if (opal_jobdb_is_complete(db) || HERD_ERR_NOT_FOUND != opal_jobdb_get_proc(db, 0, &view)) {
        status = 2;
        goto out;
    }
    if (1 != write(ack_fd, "a", 1) || 1 != read(go_fd, &token, 1)) {
        status = 3;
        goto out;
    }
    /* The writer has put the even ranks only. */
    for (uint32_t r = 0; r < num_procs; ++r) {
        int rc = opal_jobdb_get_proc(db, r, &view);
        if ((0 == r % 2 && (HERD_SUCCESS != rc || view.rank != r)) ||
            (0 != r % 2 && HERD_ERR_NOT_FOUND != rc)) {
            status = 4;
            goto out;
        }
    }
    if (opal_jobdb_is_complete(db) || 1 != write(ack_fd, "b", 1) || 1 != read(go_fd, &token, 1)) {
        status = 5;
        goto out;
    }
    if (!opal_jobdb_is_complete(db)) {
        status = 6;
        goto out;
    }
    for (uint32_t r = 0; r < num_procs; ++r) {
        char cpuset[16];
        snprintf(cpuset, sizeof(cpuset), "%u-%u", r, r + 1);
        if (HERD_SUCCESS != opal_jobdb_get_proc(db, r, &view) || 0 != strcmp(cpuset, view.cpuset)) {
            status = 7;
            goto out;
        }
    }
out:
    opal_jobdb_detach(db);
    return status;
}

static void test_reader_while_writer_fills(void **state)
{
    const uint32_t num_procs = 1000, num_nodes = 10;
    char jobid[64];
    int go[2], ack[2];
    char token;
    opal_jobdb_t *writer = NULL;
    make_jobid("fill", jobid, sizeof(jobid));
    assert_int_equal(HERD_SUCCESS,
                     opal_jobdb_create(jobid, "n0", num_procs, num_nodes, &two_slots, &writer));
    assert_int_equal(0, pipe(go));
    assert_int_equal(0, pipe(ack));
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (0 == pid) {
        close(go[1]);
        close(ack[0]);
        _exit(reader_child(opal_jobdb_name(writer), num_procs, go[0], ack[1]));
    }
    close(go[0]);
    close(ack[1]);
    assert_int_equal(1, read(ack[0], &token, 1));
    set_nodes(writer, num_nodes);
    for (uint32_t r = 0; r < num_procs; r += 2) {
        char cpuset[16], locality[32];
        uint8_t endpoints[12];
        opal_jobdb_proc_t proc;
        fill_proc(r, num_procs, num_nodes, cpuset, locality, endpoints, &proc);
        assert_int_equal(HERD_SUCCESS, opal_jobdb_put_proc(writer, &proc));
    }
    assert_int_equal(1, write(go[1], "g", 1));
    assert_int_equal(1, read(ack[0], &token, 1));
    for (uint32_t r = 1; r < num_procs; r += 2) {
        char cpuset[16], locality[32];
        uint8_t endpoints[12];
        opal_jobdb_proc_t proc;
        fill_proc(r, num_procs, num_nodes, cpuset, locality, endpoints, &proc);
        assert_int_equal(HERD_SUCCESS, opal_jobdb_put_proc(writer, &proc));
    }
    assert_int_equal(HERD_SUCCESS, opal_jobdb_finish(writer));
    assert_int_equal(1, write(go[1], "g", 1));
    int status = -1;
    assert_int_equal(pid, waitpid(pid, &status, 0));
    close(go[1]);
    close(ack[0]);
    opal_jobdb_destroy(writer);
    assert_true(WIFEXITED(status));
    assert_int_equal(0, WEXITSTATUS(status));
}

/* A writable mapping of the whole segment, to damage it as a bug or another program could. */
static uint8_t *map_for_damage(const char *name, size_t *size)
{
    struct stat st;
    int fd = shm_open(name, O_RDWR, 0);
    assert_true(fd >= 0);
    assert_int_equal(0, fstat(fd, &st));
    void *base = mmap(NULL, (size_t) st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    assert_true(MAP_FAILED != base);
    *size = (size_t) st.st_size;
    return base;
}

/* Attach must fail with rc and tell the user why. */
static void expect_attach_failure(const char *name, int rc, const char *message)
{
    herd_test_capture_t capture;
    opal_jobdb_t *reader = NULL;
    herd_test_capture_start(&capture);
    int got = opal_jobdb_attach(name, &reader);
    char *err = herd_test_capture_stop(&capture);
    assert_int_equal(rc, got);
    assert_null(reader);
    assert_contains(err, name);
    assert_contains(err, message);
    free(err);
}

/* A finished 5-proc database to damage. */
static opal_jobdb_t *small_db(const char *what)
{
    char jobid[64];
    opal_jobdb_t *writer = NULL;
    make_jobid(what, jobid, sizeof(jobid));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_create(jobid, "n0", 5, 2, &two_slots, &writer));
    set_nodes(writer, 2);
    put_all(writer, 5, 2, false);
    assert_int_equal(HERD_SUCCESS, opal_jobdb_finish(writer));
    return writer;
}

static void test_corrupt_header(void **state)
{
    opal_jobdb_t *writer = small_db("corrupt");
    const char *name = opal_jobdb_name(writer);
    size_t size;
    uint8_t *base = map_for_damage(name, &size);
    opal_jobdb_header_t *h = (opal_jobdb_header_t *) base;
    opal_jobdb_header_t saved;
    memcpy(&saved, h, sizeof(saved));

    atomic_store(&h->magic, 0x12345678u);
    expect_attach_failure(name, HERD_ERR_UNPACK_FAILURE, "bad magic number");
    memcpy(h, &saved, sizeof(saved));

    h->version = OPAL_JOBDB_FORMAT_VERSION + 1;
    expect_attach_failure(name, HERD_ERR_VERSION_MISMATCH, "format version 3");
    memcpy(h, &saved, sizeof(saved));

    h->num_procs = UINT32_MAX; /* more records than the segment holds */
    expect_attach_failure(name, HERD_ERR_UNPACK_FAILURE, "outside the segment");
    memcpy(h, &saved, sizeof(saved));

    h->strings_offset = saved.segment_size + 64;
    expect_attach_failure(name, HERD_ERR_UNPACK_FAILURE, "string area lies outside");
    memcpy(h, &saved, sizeof(saved));

    h->nodes_offset = saved.records_offset; /* overlapping the records */
    expect_attach_failure(name, HERD_ERR_UNPACK_FAILURE, "node table lies outside");
    memcpy(h, &saved, sizeof(saved));

    h->strings_size = UINT64_MAX - 4; /* wraps around when added to the offset */
    expect_attach_failure(name, HERD_ERR_UNPACK_FAILURE, "counts are out of range");
    memcpy(h, &saved, sizeof(saved));

    memset(h->jobid, 'x', sizeof(h->jobid));
    expect_attach_failure(name, HERD_ERR_UNPACK_FAILURE, "not terminated");
    memcpy(h, &saved, sizeof(saved));

    opal_jobdb_t *reader = NULL;
    assert_int_equal(HERD_SUCCESS, opal_jobdb_attach(name, &reader)); /* repaired */
    opal_jobdb_detach(reader);
    munmap(base, size);
    opal_jobdb_destroy(writer);
}

static void test_truncated(void **state)
{
    opal_jobdb_t *writer = small_db("trunc");
    const char *name = opal_jobdb_name(writer);
    int fd = shm_open(name, O_RDWR, 0);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(0, fstat(fd, &st));
    assert_int_equal(0, ftruncate(fd, st.st_size - 8));
    expect_attach_failure(name, HERD_ERR_UNPACK_FAILURE, "truncated");
    assert_int_equal(0, ftruncate(fd, 16));
    expect_attach_failure(name, HERD_ERR_UNPACK_FAILURE, "too small");
    assert_int_equal(0, ftruncate(fd, 0));
    expect_attach_failure(name, HERD_ERR_UNPACK_FAILURE, "too small");
    close(fd);
    opal_jobdb_destroy(writer);
}

static void test_corrupt_record(void **state)
{
    opal_jobdb_t *writer = small_db("badrec");
    const char *name = opal_jobdb_name(writer);
    opal_jobdb_t *reader = NULL;
    opal_jobdb_proc_view_t view;
    herd_test_capture_t capture;
    assert_int_equal(HERD_SUCCESS, opal_jobdb_attach(name, &reader));
    size_t size;
    uint8_t *base = map_for_damage(name, &size);
    const opal_jobdb_header_t *h = (const opal_jobdb_header_t *) base;
    opal_jobdb_record_t *records = (opal_jobdb_record_t *) (base + h->records_offset);
    opal_jobdb_node_entry_t *nodes = (opal_jobdb_node_entry_t *) (base + h->nodes_offset);

    records[1].cpuset_offset = UINT32_MAX - 2; /* far outside the string area */
    records[2].locality_length += 1;           /* no NUL where the length says */
    records[3].node = 7;                       /* no such node */
    nodes[1].name_offset = (uint32_t) h->strings_size;
    for (uint32_t r = 1; r <= 3; ++r) {
        herd_test_capture_start(&capture);
        int rc = opal_jobdb_get_proc(reader, r, &view);
        char *err = herd_test_capture_stop(&capture);
        assert_int_equal(HERD_ERR_UNPACK_FAILURE, rc);
        assert_contains(err, "points outside the segment");
        free(err);
    }
    assert_null(opal_jobdb_node_name(reader, 1));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_get_proc(reader, 4, &view));
    check_view(&view, 4, 5, 2);

    munmap(base, size);
    opal_jobdb_detach(reader);
    opal_jobdb_destroy(writer);
}

static void test_name_collision(void **state)
{
    char jobid[64];
    opal_jobdb_t *first = NULL, *second = NULL;
    herd_test_capture_t capture;
    make_jobid("twice", jobid, sizeof(jobid));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_create(jobid, "n0", 2, 1, NULL, &first));
    herd_test_capture_start(&capture);
    int rc = opal_jobdb_create(jobid, "n0", 2, 1, NULL, &second);
    char *err = herd_test_capture_stop(&capture);
    assert_int_equal(HERD_ERR_EXISTS, rc);
    assert_null(second);
    assert_contains(err, "already exists");
    assert_contains(err, opal_jobdb_name(first));
    free(err);
    /* The first one is untouched, and still the only one. */
    assert_int_equal(HERD_SUCCESS, opal_jobdb_set_node(first, 0, "n0"));
    assert_int_equal(1, test_segments(false));
    opal_jobdb_destroy(first);
}

static void test_destroy_unlinks(void **state)
{
    char jobid[64], path[320];
    opal_jobdb_t *writer = NULL, *reader = NULL;
    opal_jobdb_proc_view_t view;
    make_jobid("gone", jobid, sizeof(jobid));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_create(jobid, "n0", 1, 1, &two_slots, &writer));
    snprintf(path, sizeof(path), "/dev/shm%s", opal_jobdb_name(writer));
    struct stat st;
    assert_int_equal(0, stat(path, &st));
    assert_int_equal(0600, st.st_mode & 0777);
    assert_int_equal(1, test_segments(false));
    set_nodes(writer, 1);
    put_all(writer, 1, 1, false);
    assert_int_equal(HERD_SUCCESS, opal_jobdb_finish(writer));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_attach(opal_jobdb_name(writer), &reader));

    char name[300];
    snprintf(name, sizeof(name), "%s", opal_jobdb_name(writer));
    opal_jobdb_destroy(writer);
    assert_int_equal(-1, stat(path, &st));
    assert_int_equal(ENOENT, errno);
    assert_int_equal(0, test_segments(false));
    /* An attached reader keeps its mapping; nobody new can attach. */
    assert_int_equal(HERD_SUCCESS, opal_jobdb_get_proc(reader, 0, &view));
    assert_string_equal("0-1", view.cpuset);
    opal_jobdb_detach(reader);
    expect_attach_failure(name, HERD_ERR_NOT_FOUND, "No such file");
    opal_jobdb_destroy(NULL);
    opal_jobdb_detach(NULL);
}

/* The line of /proc/self/maps whose range holds address, into line. */
static bool maps_line_of(const void *address, char *line, size_t size)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    bool found = false;
    if (NULL == maps) {
        return false;
    }
    while (!found && NULL != fgets(line, (int) size, maps)) {
        unsigned long start, end;
        if (2 == sscanf(line, "%lx-%lx", &start, &end)) {
            found = (uintptr_t) address >= start && (uintptr_t) address < end;
        }
    }
    fclose(maps);
    return found;
}

static void test_reader_reads_in_place_read_only(void **state)
{
    opal_jobdb_t *writer = small_db("readonly");
    opal_jobdb_t *reader = NULL;
    opal_jobdb_proc_view_t view;
    char line[1024];
    assert_int_equal(HERD_SUCCESS, opal_jobdb_attach(opal_jobdb_name(writer), &reader));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_get_proc(reader, 3, &view));

    /* The strings and endpoints are in the reader's mapping of the segment, not copies... */
    assert_true(maps_line_of(view.cpuset, line, sizeof(line)));
    assert_contains(line, opal_jobdb_name(writer));
    char range[64];
    snprintf(range, sizeof(range), "%.*s", (int) strcspn(line, " "), line);
    assert_true(maps_line_of(view.endpoints, line, sizeof(line)));
    assert_int_equal(0, strncmp(range, line, strlen(range)));
    assert_true(maps_line_of(opal_jobdb_node_name(reader, 1), line, sizeof(line)));
    assert_int_equal(0, strncmp(range, line, strlen(range)));
    /* ...which is shared and read-only... */
    char *perms = strchr(line, ' ');
    assert_non_null(perms);
    assert_memory_equal(" r--s ", perms, 6);
    /* ...and cannot be made writable: the segment was opened read-only. */
    long page = sysconf(_SC_PAGESIZE);
    void *start = (void *) ((uintptr_t) view.cpuset & ~(uintptr_t) (page - 1));
    assert_int_equal(-1, mprotect(start, (size_t) page, PROT_READ | PROT_WRITE));
    assert_int_equal(EACCES, errno);
    assert_true(maps_line_of(view.cpuset, line, sizeof(line)));
    assert_memory_equal(" r--s ", strchr(line, ' '), 6);

    opal_jobdb_detach(reader);
    opal_jobdb_destroy(writer);
}

static void test_string_area_full(void **state)
{
    char jobid[64];
    opal_jobdb_t *writer = NULL;
    opal_jobdb_proc_view_t view;
    herd_test_capture_t capture;
    opal_jobdb_layout_t tiny = {.string_bytes = 16};
    make_jobid("full", jobid, sizeof(jobid));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_create(jobid, "n0", 2, 1, &tiny, &writer));
    opal_jobdb_proc_t proc = {.rank = 0, .cpuset = "0-3", .locality = "pk0"};
    assert_int_equal(HERD_SUCCESS, opal_jobdb_put_proc(writer, &proc));
    proc.rank = 1;
    proc.cpuset = "0123456789abcdef";
    herd_test_capture_start(&capture);
    int rc = opal_jobdb_put_proc(writer, &proc);
    char *err = herd_test_capture_stop(&capture);
    assert_int_equal(HERD_ERR_OUT_OF_RESOURCE, rc);
    assert_contains(err, "ran out of room");
    assert_contains(err, "rank 1");
    free(err);
    assert_int_equal(HERD_ERR_NOT_FOUND, opal_jobdb_get_proc(writer, 1, &view));
    /* Repeated strings take no room: 8 bytes for rank 0, none for rank 1, 3 for the node. */
    proc.cpuset = "0-3";
    assert_int_equal(HERD_SUCCESS, opal_jobdb_put_proc(writer, &proc));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_set_node(writer, 0, "n0"));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_finish(writer));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_get_proc(writer, 1, &view));
    assert_string_equal("0-3", view.cpuset);
    opal_jobdb_destroy(writer);
}

/* ------------------------------------------------------------------------------------------ */
/* RM-assigned endpoints: the fabric table, node addresses and per-proc ports */

static opal_jobdb_addr_t addr4(const char *text)
{
    opal_jobdb_addr_t a = {.family = OPAL_JOBDB_ADDR_IPV4};
    assert_int_equal(1, inet_pton(AF_INET, text, a.bytes));
    return a;
}

static opal_jobdb_addr_t addr6(const char *text)
{
    opal_jobdb_addr_t a = {.family = OPAL_JOBDB_ADDR_IPV6};
    assert_int_equal(1, inet_pton(AF_INET6, text, a.bytes));
    return a;
}

static const opal_jobdb_layout_t with_fabrics = {.num_fabrics = 3, .fabric_addrs = 2};

/* 6 procs on 2 nodes, 3 per node: fabric 0 (tcp) assigned with an IPv4 and an IPv6 address per
 * node, fabric 1 (ofi:udp;ofi_rxd) assigned with IPv6 only, fabric 2 (ucx) modex. */
static opal_jobdb_t *endpoint_db(const char *what)
{
    char jobid[64];
    opal_jobdb_t *writer = NULL;
    make_jobid(what, jobid, sizeof(jobid));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_create(jobid, "n0", 6, 2, &with_fabrics, &writer));
    set_nodes(writer, 2);
    assert_int_equal(HERD_SUCCESS,
                     opal_jobdb_set_fabric(writer, 0, "tcp", true, 16384, 512, NULL));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_set_fabric(writer, 1, "ofi:udp;ofi_rxd", true,
                                                         20480, 256, "ignored when assigned"));
    assert_int_equal(HERD_SUCCESS,
                     opal_jobdb_set_fabric(writer, 2, "ucx", false, 0, 0,
                                           "UCX worker addresses are made at run time"));
    opal_jobdb_addr_t n0[2] = {addr4("10.0.0.1"), addr6("fd00::1")};
    opal_jobdb_addr_t n1[2] = {addr4("10.0.0.2"), addr6("fd00::2")};
    opal_jobdb_addr_t n0v6 = addr6("fd00::1"), n1v6 = addr6("fd00::2");
    assert_int_equal(HERD_SUCCESS, opal_jobdb_set_fabric_addrs(writer, 0, 0, n0, 2));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_set_fabric_addrs(writer, 0, 1, n1, 2));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_set_fabric_addrs(writer, 1, 0, &n0v6, 1));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_set_fabric_addrs(writer, 1, 1, &n1v6, 1));
    for (uint32_t r = 0; r < 6; ++r) {
        char cpuset[16], locality[32];
        opal_jobdb_proc_t proc;
        fill_proc(r, 6, 2, cpuset, locality, NULL, &proc);
        uint16_t ports[3] = {(uint16_t) (16384 + r % 3), (uint16_t) (20480 + r % 3), 0};
        proc.ports = ports;
        assert_int_equal(HERD_SUCCESS, opal_jobdb_put_proc(writer, &proc));
    }
    assert_int_equal(HERD_SUCCESS, opal_jobdb_finish(writer));
    return writer;
}

static void expect_endpoint(const opal_jobdb_t *db, uint32_t rank, uint32_t fabric,
                            uint32_t index, const char *want)
{
    struct sockaddr_storage addr;
    size_t len = sizeof(addr);
    char text[128];
    assert_int_equal(HERD_SUCCESS, opal_jobdb_get_endpoint(db, rank, fabric, index, &addr, &len));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_endpoint_string(&addr, len, text, sizeof(text)));
    assert_string_equal(want, text);
}

static void test_endpoints_round_trip(void **state)
{
    opal_jobdb_t *writer = endpoint_db("endpoints");
    opal_jobdb_t *reader = NULL;
    assert_int_equal(HERD_SUCCESS, opal_jobdb_attach(opal_jobdb_name(writer), &reader));
    assert_int_equal(3, opal_jobdb_num_fabrics(reader));

    opal_jobdb_fabric_view_t view;
    uint32_t index = 99;
    assert_int_equal(HERD_SUCCESS, opal_jobdb_find_fabric(reader, "ofi:udp;ofi_rxd", &index));
    assert_int_equal(1, index);
    assert_int_equal(HERD_SUCCESS, opal_jobdb_get_fabric(reader, 1, &view));
    assert_string_equal("ofi:udp;ofi_rxd", view.name);
    assert_true(view.assigned);
    assert_string_equal("", view.reason);
    assert_int_equal(20480, view.first_port);
    assert_int_equal(256, view.num_ports);
    assert_int_equal(HERD_SUCCESS, opal_jobdb_get_fabric(reader, 2, &view));
    assert_false(view.assigned);
    assert_string_equal("UCX worker addresses are made at run time", view.reason);
    assert_int_equal(HERD_ERR_NOT_FOUND, opal_jobdb_find_fabric(reader, "ofi:tcp", &index));
    assert_int_equal(1, index); /* untouched */

    /* every proc of a node has the node's addresses, each with its own port */
    expect_endpoint(reader, 0, 0, 0, "10.0.0.1:16384");
    expect_endpoint(reader, 2, 0, 0, "10.0.0.1:16386");
    expect_endpoint(reader, 2, 0, 1, "[fd00::1]:16386");
    expect_endpoint(reader, 4, 0, 0, "10.0.0.2:16385");
    expect_endpoint(reader, 4, 0, 1, "[fd00::2]:16385");
    expect_endpoint(reader, 5, 1, 0, "[fd00::2]:20482");

    struct sockaddr_in6 in6;
    struct sockaddr_in in4;
    size_t len = sizeof(in6);
    assert_int_equal(HERD_SUCCESS, opal_jobdb_get_endpoint(reader, 3, 1, 0, &in6, &len));
    assert_int_equal(sizeof(in6), len);
    assert_int_equal(AF_INET6, in6.sin6_family);
    assert_int_equal(20480, ntohs(in6.sin6_port));
    /* a second address the node does not have, a modex fabric: no endpoint */
    len = sizeof(in6);
    assert_int_equal(HERD_ERR_NOT_FOUND, opal_jobdb_get_endpoint(reader, 3, 1, 1, &in6, &len));
    assert_int_equal(HERD_ERR_NOT_FOUND, opal_jobdb_get_endpoint(reader, 3, 2, 0, &in6, &len));
    assert_int_equal(HERD_ERR_NOT_FOUND, opal_jobdb_get_endpoint(reader, 3, 0, 2, &in6, &len));
    /* too little room for an IPv6 address, ranks and fabrics out of range */
    len = sizeof(in4);
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_get_endpoint(reader, 3, 1, 0, &in4, &len));
    assert_int_equal(sizeof(in4), len); /* output set only on success */
    assert_int_equal(HERD_SUCCESS, opal_jobdb_get_endpoint(reader, 3, 0, 0, &in4, &len));
    assert_int_equal(AF_INET, in4.sin_family);
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_get_endpoint(reader, 6, 0, 0, &in6, &len));
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_get_endpoint(reader, 0, 3, 0, &in6, &len));

    /* herd-info --job shows the fabric table and every proc's endpoints */
    char *text = NULL;
    size_t text_len = 0;
    FILE *out = open_memstream(&text, &text_len);
    assert_non_null(out);
    opal_jobdb_dump(out, reader);
    fclose(out);
    assert_non_null(strstr(text, "0 tcp: assigned, ports 16384-16895"));
    assert_non_null(strstr(text, "2 ucx: modex (UCX worker addresses are made at run time)"));
    assert_non_null(strstr(text, "tcp 10.0.0.2:16385, ofi:udp;ofi_rxd [fd00::2]:20481"));
    free(text);
    opal_jobdb_detach(reader);
    opal_jobdb_destroy(writer);
}

static void test_endpoints_writer_errors(void **state)
{
    char jobid[64];
    opal_jobdb_t *writer = NULL, *reader = NULL;
    make_jobid("eperr", jobid, sizeof(jobid));
    opal_jobdb_layout_t too_many = {.num_fabrics = OPAL_JOBDB_MAX_FABRICS + 1};
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_create(jobid, "n0", 2, 1, &too_many, &writer));
    too_many = (opal_jobdb_layout_t){.num_fabrics = 1, .fabric_addrs = OPAL_JOBDB_MAX_ADDRS + 1};
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_create(jobid, "n0", 2, 1, &too_many, &writer));
    assert_null(writer);

    opal_jobdb_layout_t one = {.num_fabrics = 1, .fabric_addrs = 1};
    assert_int_equal(HERD_SUCCESS, opal_jobdb_create(jobid, "n0", 2, 1, &one, &writer));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_attach(opal_jobdb_name(writer), &reader));
    opal_jobdb_fabric_view_t view;
    assert_int_equal(HERD_ERR_NOT_FOUND, opal_jobdb_get_fabric(reader, 0, &view));
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_get_fabric(reader, 1, &view));
    char long_name[OPAL_JOBDB_FABRIC_NAME_MAX + 1];
    memset(long_name, 'x', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = '\0';
    assert_int_equal(HERD_ERR_BAD_PARAM,
                     opal_jobdb_set_fabric(writer, 0, long_name, true, 1, 1, NULL));
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_set_fabric(writer, 0, "", true, 1, 1, NULL));
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_set_fabric(writer, 1, "tcp", true, 1, 1, NULL));
    assert_int_equal(HERD_ERR_BAD_PARAM,
                     opal_jobdb_set_fabric(reader, 0, "tcp", true, 1, 1, NULL));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_set_fabric(writer, 0, "tcp", true, 1024, 8, NULL));
    assert_int_equal(HERD_ERR_EXISTS, opal_jobdb_set_fabric(writer, 0, "tcp", true, 1, 1, NULL));
    opal_jobdb_addr_t two[2] = {addr4("10.0.0.1"), addr4("10.0.0.2")};
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_set_fabric_addrs(writer, 0, 0, two, 2));
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_set_fabric_addrs(writer, 0, 1, two, 1));
    opal_jobdb_addr_t bad = {.family = 5};
    assert_int_equal(HERD_ERR_BAD_PARAM, opal_jobdb_set_fabric_addrs(writer, 0, 0, &bad, 1));
    assert_int_equal(HERD_SUCCESS, opal_jobdb_set_fabric_addrs(writer, 0, 0, two, 1));

    /* a proc written without ports has none: no endpoint */
    char cpuset[16], locality[32];
    opal_jobdb_proc_t proc;
    fill_proc(0, 2, 1, cpuset, locality, NULL, &proc);
    assert_int_equal(HERD_SUCCESS, opal_jobdb_put_proc(writer, &proc));
    struct sockaddr_storage addr;
    size_t len = sizeof(addr);
    assert_int_equal(HERD_ERR_NOT_FOUND, opal_jobdb_get_endpoint(reader, 0, 0, 0, &addr, &len));
    /* a rank not written yet: not found either */
    assert_int_equal(HERD_ERR_NOT_FOUND, opal_jobdb_get_endpoint(reader, 1, 0, 0, &addr, &len));
    uint16_t port = 1025;
    fill_proc(1, 2, 1, cpuset, locality, NULL, &proc);
    proc.ports = &port;
    assert_int_equal(HERD_SUCCESS, opal_jobdb_put_proc(writer, &proc));
    expect_endpoint(reader, 1, 0, 0, "10.0.0.1:1025");
    opal_jobdb_detach(reader);
    opal_jobdb_destroy(writer);
}

static void test_endpoints_corrupt(void **state)
{
    opal_jobdb_t *writer = endpoint_db("epbad");
    const char *name = opal_jobdb_name(writer);
    opal_jobdb_t *reader = NULL;
    herd_test_capture_t capture;
    size_t size;
    uint8_t *base = map_for_damage(name, &size);
    opal_jobdb_header_t *h = (opal_jobdb_header_t *) base;
    opal_jobdb_header_t saved;
    memcpy(&saved, h, sizeof(saved));

    h->num_fabrics = OPAL_JOBDB_MAX_FABRICS + 1;
    expect_attach_failure(name, HERD_ERR_UNPACK_FAILURE, "fabric counts are out of range");
    memcpy(h, &saved, sizeof(saved));
    h->ports_offset = saved.segment_size; /* no room for the ports there */
    expect_attach_failure(name, HERD_ERR_UNPACK_FAILURE, "fabric table, addresses or ports");
    memcpy(h, &saved, sizeof(saved));
    h->addrs_offset = saved.nodes_offset; /* overlapping the node table */
    expect_attach_failure(name, HERD_ERR_UNPACK_FAILURE, "fabric table, addresses or ports");
    memcpy(h, &saved, sizeof(saved));

    assert_int_equal(HERD_SUCCESS, opal_jobdb_attach(name, &reader));
    opal_jobdb_fabric_entry_t *fabrics = (opal_jobdb_fabric_entry_t *) (base + h->fabrics_offset);
    opal_jobdb_addr_t *addrs = (opal_jobdb_addr_t *) (base + h->addrs_offset);
    fabrics[2].reason_offset = UINT32_MAX - 8;
    memset(fabrics[1].name, 'x', sizeof(fabrics[1].name));
    addrs[1].family = 9; /* fabric 0, node 0, second address */
    opal_jobdb_fabric_view_t view;
    struct sockaddr_storage addr;
    size_t len = sizeof(addr);
    for (uint32_t f = 1; f <= 2; ++f) {
        herd_test_capture_start(&capture);
        int rc = opal_jobdb_get_fabric(reader, f, &view);
        char *err = herd_test_capture_stop(&capture);
        assert_int_equal(HERD_ERR_UNPACK_FAILURE, rc);
        assert_contains(err, "is malformed");
        free(err);
    }
    herd_test_capture_start(&capture);
    int rc = opal_jobdb_get_endpoint(reader, 0, 0, 1, &addr, &len);
    char *err = herd_test_capture_stop(&capture);
    assert_int_equal(HERD_ERR_UNPACK_FAILURE, rc);
    assert_contains(err, "an address of fabric 0 on node 0 is malformed");
    free(err);
    expect_endpoint(reader, 0, 0, 0, "10.0.0.1:16384"); /* the rest still reads */
    munmap(base, size);
    opal_jobdb_detach(reader);
    opal_jobdb_destroy(writer);
}

int main(void)
{
    snprintf(job_prefix, sizeof(job_prefix), "jdbt%ld", (long) getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_segment_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_trip_1, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_trip_7, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_trip_100000, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_ready_and_put_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_out_of_range, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reader_while_writer_fills, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_header, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_name_collision, setup, teardown),
        cmocka_unit_test_setup_teardown(test_destroy_unlinks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reader_reads_in_place_read_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_string_area_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_endpoints_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_endpoints_writer_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_endpoints_corrupt, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
