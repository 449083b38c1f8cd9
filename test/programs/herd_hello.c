/* SPDX-License-Identifier: BSD-3-Clause */
/* A libherd program for the wireup tests: every rank prints who it is, puts a key, fences with
 * data and checks every peer's key; then puts another key, fences without data (a barrier) and
 * gets every peer's second key directly (from the peer's node when it is elsewhere); then a
 * non-blocking fence. Exits 1 (saying why) on any mismatch or error.
 *   herd_hello            as above
 *   herd_hello abort N    rank 1 calls herd_abort(N, ...) after the first fence
 *   herd_hello nofinalize the last rank exits 0 without herd_finalize
 *   herd_hello missing    rank 0 gets a key no rank ever puts (must fail, naming it) */
#include <herd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check(int rc, const char *what)
{
    if (HERD_SUCCESS != rc) {
        fprintf(stderr, "herd_hello rank %u: %s failed: %s (%s)\n", herd_rank(), what,
                herd_strerror(rc), herd_last_error());
        exit(1);
    }
    return rc;
}

static void expect_key(uint32_t peer, const char *key, const char *prefix)
{
    void *value = NULL;
    size_t len = 0;
    char want[64];
    snprintf(want, sizeof(want), "%s-%u", prefix, peer);
    check(herd_get(peer, key, &value, &len), "herd_get");
    if (len != strlen(want) + 1 || 0 != memcmp(value, want, len)) {
        fprintf(stderr, "herd_hello rank %u: rank %u's %s is '%.*s', expected '%s'\n", herd_rank(),
                peer, key, (int) len, (char *) value, want);
        exit(1);
    }
    free(value);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    check(herd_init(), "herd_init");
    uint32_t me = herd_rank(), size = herd_size(), node = herd_node();
    unsigned flags = 0;
    check(herd_peer_locality(me, &flags), "herd_peer_locality of itself");
    if (0 == (flags & HERD_LOCALITY_NODE)) {
        fprintf(stderr, "herd_hello rank %u: not on its own node\n", me);
        return 1;
    }
    printf("herd_hello rank %u of %u, local rank %u of %u, node %s (%u of %u), app %u\n", me, size,
           herd_local_rank(), herd_local_size(), herd_node_name(node), node, herd_num_nodes(),
           herd_appnum());
    fflush(stdout);

    char value[64];
    snprintf(value, sizeof(value), "card-%u", me);
    check(herd_put("card", value, strlen(value) + 1), "herd_put");
    check(herd_commit(), "herd_commit");
    check(herd_fence(1), "herd_fence with data");
    for (uint32_t p = 0; p < size; ++p) {
        expect_key(p, "card", "card");
    }
    if (0 == strcmp(mode, "abort") && 1 == me) {
        herd_abort(argc > 2 ? atoi(argv[2]) : 3, "herd_hello gives up on purpose");
    }
    if (0 == strcmp(mode, "missing") && 0 == me) {
        void *v;
        size_t l;
        int rc = herd_get(size > 1 ? 1 : 0, "never-put", &v, &l);
        printf("herd_hello rank 0: get of never-put: %s: %s\n", herd_strerror(rc),
               herd_last_error());
        check(herd_finalize(), "herd_finalize");
        return HERD_ERR_NOT_FOUND == rc ? 0 : 1;
    }
    if (0 == strcmp(mode, "missing")) {
        check(herd_finalize(), "herd_finalize");
        return 0;
    }

    snprintf(value, sizeof(value), "late-%u", me);
    check(herd_put("late", value, strlen(value) + 1), "herd_put");
    check(herd_commit(), "herd_commit");
    check(herd_barrier(), "herd_barrier");
    for (uint32_t p = 0; p < size; ++p) {
        expect_key((me + p) % size, "late", "late");
    }
    uint32_t peer_node;
    check(herd_peer_node(size - 1, &peer_node), "herd_peer_node");
    if (HERD_ERR_BAD_PARAM != herd_peer_node(size, &peer_node)) {
        fprintf(stderr, "herd_hello rank %u: a peer out of range was accepted\n", me);
        return 1;
    }

    herd_request_t req;
    int done = 0;
    check(herd_fence_nb(0, &req), "herd_fence_nb");
    check(herd_test(&req, &done), "herd_test");
    if (!done) {
        check(herd_wait(&req), "herd_wait");
    }
    if (0 == strcmp(mode, "nofinalize") && me == size - 1) {
        return 0;
    }
    check(herd_finalize(), "herd_finalize");
    printf("herd_hello rank %u ok\n", me);
    return 0;
}
