/* SPDX-License-Identifier: BSD-3-Clause */
/* libherd messages (herd_send/herd_recv), as the integration tests and docs/btl.md use them:
 *   herd_msg ring [iterations] [bytes]   each rank sends to rank+1 and receives from rank-1
 *   herd_msg halo [bytes]                sparse halo: each rank exchanges with rank +-1 and +-2
 *   herd_msg alltoall [bytes]            every rank sends to every rank (itself included)
 *   herd_msg pingpong [iterations] [bytes]  ranks 0 and 1 bounce a message; others idle
 *   herd_msg trunc                       rank 0 sends 100 bytes to rank 1, which posts 10
 * Every payload is checked byte by byte; each rank prints one line "rank R: MODE ok ..." with
 * the transports it used, or says what was wrong and exits 1. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "herd.h"

static uint32_t me, np;

static int die(const char *what, int rc)
{
    fprintf(stderr, "rank %u: %s: %s (%s)\n", me, what, herd_strerror(rc), herd_last_error());
    herd_finalize();
    exit(1);
}

/* The payload rank src sends for step: every byte depends on all three. */
static void fill(unsigned char *buf, size_t len, uint32_t src, uint32_t step)
{
    for (size_t i = 0; i < len; ++i) {
        buf[i] = (unsigned char) (i * 31u + src * 7u + step * 13u + (i >> 8));
    }
}

static int check(const unsigned char *buf, size_t len, uint32_t src, uint32_t step)
{
    for (size_t i = 0; i < len; ++i) {
        if (buf[i] != (unsigned char) (i * 31u + src * 7u + step * 13u + (i >> 8))) {
            fprintf(stderr, "rank %u: byte %zu of %zu from rank %u (step %u) is wrong\n", me, i,
                    len, src, step);
            return 0;
        }
    }
    return 1;
}

static const char *via(uint32_t peer)
{
    const char *name = herd_peer_transport(peer);
    return NULL != name ? name : "(none)";
}

static void ring(unsigned iterations, size_t bytes)
{
    uint32_t right = (me + 1) % np, left = (me + np - 1) % np;
    unsigned char *out = malloc(bytes + 1), *in = malloc(bytes + 1);
    if (NULL == out || NULL == in) {
        die("out of memory", HERD_ERR_OUT_OF_RESOURCE);
    }
    for (unsigned it = 0; it < iterations; ++it) {
        herd_request_t req;
        size_t len;
        uint32_t src;
        int tag, rc;
        fill(out, bytes, me, it);
        /* post the receive first, then send: works with any transport and any size */
        if (HERD_SUCCESS != (rc = herd_irecv(left, 5, in, bytes, &len, &src, &tag, &req))) {
            die("herd_irecv", rc);
        }
        if (HERD_SUCCESS != (rc = herd_send(right, 5, out, bytes))) {
            die("herd_send", rc);
        }
        if (HERD_SUCCESS != (rc = herd_wait(&req))) {
            die("herd_wait", rc);
        }
        if (len != bytes || src != left || 5 != tag || !check(in, len, left, it)) {
            fprintf(stderr, "rank %u: got %zu bytes from %u tag %d, expected %zu from %u\n", me,
                    len, src, tag, bytes, left);
            exit(1);
        }
    }
    printf("rank %u: ring ok, %u x %zu bytes, to %u via %s, from %u\n", me, iterations, bytes,
           right, via(right), left);
    free(out);
    free(in);
}

/* Exchange with each peer in peers[] (distinct, not me): receive any source, check all came. */
static void exchange(const char *mode, const uint32_t *peers, uint32_t n, size_t bytes)
{
    unsigned char *out = malloc(bytes + 1), *in = malloc(bytes + 1);
    unsigned char *seen = calloc(np, 1);
    char line[4096];
    size_t used = 0;
    if (NULL == out || NULL == in || NULL == seen) {
        die("out of memory", HERD_ERR_OUT_OF_RESOURCE);
    }
    fill(out, bytes, me, 1);
    for (uint32_t i = 0; i < n; ++i) {
        int rc = herd_send(peers[i], 9, out, bytes);
        if (HERD_SUCCESS != rc) {
            die("herd_send", rc);
        }
    }
    for (uint32_t i = 0; i < n; ++i) {
        size_t len;
        uint32_t src;
        int rc = herd_recv(HERD_ANY_SOURCE, HERD_ANY_TAG, in, bytes, &len, &src, NULL);
        if (HERD_SUCCESS != rc) {
            die("herd_recv", rc);
        }
        if (src >= np || seen[src] || len != bytes || !check(in, len, src, 1)) {
            fprintf(stderr, "rank %u: unexpected message from %u (%zu bytes)\n", me, src, len);
            exit(1);
        }
        seen[src] = 1;
    }
    for (uint32_t i = 0; i < n && used < sizeof(line) - 64; ++i) {
        used +=
            (size_t) snprintf(line + used, sizeof(line) - used, " %u:%s", peers[i], via(peers[i]));
    }
    printf("rank %u: %s ok, %u peers x %zu bytes, via%s\n", me, mode, n, bytes, line);
    free(out);
    free(in);
    free(seen);
}

static void halo(size_t bytes)
{
    uint32_t peers[4], n = 0;
    const int offsets[] = {-2, -1, 1, 2};
    for (int k = 0; k < 4; ++k) {
        int64_t p = (int64_t) me + offsets[k];
        if (p < 0 || p >= (int64_t) np) {
            continue;
        }
        peers[n++] = (uint32_t) p;
    }
    exchange("halo", peers, n, bytes);
}

static void alltoall(size_t bytes)
{
    uint32_t *peers = malloc(np * sizeof(*peers));
    if (NULL == peers) {
        die("out of memory", HERD_ERR_OUT_OF_RESOURCE);
    }
    for (uint32_t p = 0; p < np; ++p) {
        peers[p] = p;
    }
    exchange("alltoall", peers, np, bytes);
    free(peers);
}

static void pingpong(unsigned iterations, size_t bytes)
{
    unsigned char *buf = malloc(bytes + 1);
    if (NULL == buf) {
        die("out of memory", HERD_ERR_OUT_OF_RESOURCE);
    }
    if (me > 1) {
        printf("rank %u: pingpong idle\n", me);
        free(buf);
        return;
    }
    uint32_t peer = 1 - me;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned it = 0; it < iterations; ++it) {
        size_t len;
        int rc;
        if (0 == me) {
            fill(buf, bytes, me, it);
            if (HERD_SUCCESS != (rc = herd_send(peer, 1, buf, bytes))) {
                die("herd_send", rc);
            }
            if (HERD_SUCCESS != (rc = herd_recv(peer, 2, buf, bytes, &len, NULL, NULL))) {
                die("herd_recv", rc);
            }
            if (len != bytes || !check(buf, len, peer, it)) {
                exit(1);
            }
        } else {
            if (HERD_SUCCESS != (rc = herd_recv(peer, 1, buf, bytes, &len, NULL, NULL))) {
                die("herd_recv", rc);
            }
            if (len != bytes || !check(buf, len, peer, it)) {
                exit(1);
            }
            fill(buf, bytes, me, it);
            if (HERD_SUCCESS != (rc = herd_send(peer, 2, buf, bytes))) {
                die("herd_send", rc);
            }
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double us = ((double) (t1.tv_sec - t0.tv_sec) * 1e6 + (double) (t1.tv_nsec - t0.tv_nsec) / 1e3);
    printf("rank %u: pingpong ok, %u x %zu bytes via %s\n", me, iterations, bytes, via(peer));
    if (0 == me && NULL != getenv("HERD_MSG_TIMING")) {
        /* for benchmarks only (docs/btl.md): half a round trip, including the first contact */
        printf("rank 0: pingpong %.2f us one way\n", us / (2.0 * iterations));
    }
    free(buf);
}

static void trunc_mode(void)
{
    unsigned char buf[100];
    if (0 == me) {
        fill(buf, sizeof(buf), me, 0);
        int rc = herd_send(1, 3, buf, sizeof(buf));
        if (HERD_SUCCESS != rc) {
            die("herd_send", rc);
        }
        printf("rank 0: trunc sent 100 bytes via %s\n", via(1));
    } else if (1 == me) {
        size_t len = 0;
        int rc = herd_recv(0, 3, buf, 10, &len, NULL, NULL);
        printf("rank 1: trunc status %s, length %zu, %s\n", herd_strerror(rc), len,
               herd_last_error());
        if (HERD_ERR_TRUNCATE != rc || 100 != len || !check(buf, 10, 0, 0)) {
            exit(1);
        }
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ring";
    int rc = herd_init();
    if (HERD_SUCCESS != rc) {
        fprintf(stderr, "herd_init: %s\n", herd_last_error());
        return 1;
    }
    me = herd_rank();
    np = herd_size();
    if (0 == strcmp(mode, "ring")) {
        ring(argc > 2 ? (unsigned) atoi(argv[2]) : 10,
             argc > 3 ? (size_t) strtoull(argv[3], NULL, 0) : 64);
    } else if (0 == strcmp(mode, "halo")) {
        halo(argc > 2 ? (size_t) strtoull(argv[2], NULL, 0) : 1024);
    } else if (0 == strcmp(mode, "alltoall")) {
        alltoall(argc > 2 ? (size_t) strtoull(argv[2], NULL, 0) : 1024);
    } else if (0 == strcmp(mode, "pingpong")) {
        pingpong(argc > 2 ? (unsigned) atoi(argv[2]) : 100,
                 argc > 3 ? (size_t) strtoull(argv[3], NULL, 0) : 8);
    } else if (0 == strcmp(mode, "trunc")) {
        trunc_mode();
    } else {
        fprintf(stderr, "herd_msg: unknown mode %s\n", mode);
        herd_finalize();
        return 2;
    }
    rc = herd_finalize();
    if (HERD_SUCCESS != rc) {
        fprintf(stderr, "rank %u: herd_finalize: %s\n", me, herd_last_error());
        return 1;
    }
    return 0;
}
