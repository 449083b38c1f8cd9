/* SPDX-License-Identifier: BSD-3-Clause */
/* What contrib/bench/wireup.sh measures with libherd, in one program run by herdrun:
 *
 *   herdbench fence N        N fences without data, then N with data (each rank puts 64 bytes
 *                            before each), timed; rank 0 prints
 *                            "fence nodata_us=A data_us=B" (averages per fence)
 *   herdbench get N          every rank puts a key and commits; a fence without data; rank 0
 *                            gets the key of a peer on its node (local), of a peer on another
 *                            node for the first time (direct modex) and then again (kept on its
 *                            node), N times each where it applies; prints
 *                            "get local_us=A remote_first_us=B remote_again_us=C" (-1: no such
 *                            peer)
 *   herdbench mem [copy]     reads every peer's node and locality, then prints this process's
 *                            private memory (Private_Clean + Private_Dirty of
 *                            /proc/self/smaps_rollup) before herd_init and after, in KiB:
 *                            "mem rank=R before_kb=A after_kb=B"; with copy, also keeps a
 *                            private copy of every peer's record (what a launcher that hands
 *                            each process the whole map does)
 *
 * Built by wireup.sh with cc and pkg-config herd; not part of the herd build. Exits non-zero
 * (saying why) on any herd error. */
#define _GNU_SOURCE
#include <herd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void check(int rc, const char *what)
{
    if (HERD_SUCCESS != rc) {
        fprintf(stderr, "herdbench: %s failed: %s (%s)\n", what, herd_strerror(rc),
                herd_last_error());
        exit(1);
    }
}

/* Private memory of this process in KiB, from smaps_rollup. */
static long private_kb(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    long total = 0, v;
    if (NULL == f) {
        return -1;
    }
    while (NULL != fgets(line, sizeof(line), f)) {
        if (1 == sscanf(line, "Private_Clean: %ld kB", &v) ||
            1 == sscanf(line, "Private_Dirty: %ld kB", &v)) {
            total += v;
        }
    }
    fclose(f);
    return total;
}

static int bench_fence(long n)
{
    char value[64];
    memset(value, 'x', sizeof(value));
    check(herd_barrier(), "the first barrier");
    double t0 = now_us();
    for (long i = 0; i < n; ++i) {
        check(herd_fence(0), "a fence without data");
    }
    double t1 = now_us();
    for (long i = 0; i < n; ++i) {
        char key[32];
        snprintf(key, sizeof(key), "k%ld", i);
        check(herd_put(key, value, sizeof(value)), "herd_put");
        check(herd_commit(), "herd_commit");
        check(herd_fence(1), "a fence with data");
    }
    double t2 = now_us();
    if (0 == herd_rank()) {
        printf("fence nodata_us=%.1f data_us=%.1f\n", (t1 - t0) / n, (t2 - t1) / n);
    }
    return 0;
}

static int bench_get(long n)
{
    uint32_t me = herd_rank(), size = herd_size(), my_node = herd_node();
    char value[64];
    snprintf(value, sizeof(value), "card-of-%u", me);
    check(herd_put("card", value, strlen(value) + 1), "herd_put");
    check(herd_commit(), "herd_commit");
    check(herd_fence(0), "a fence without data");
    if (0 == me) {
        long local = -1, remote = -1;
        for (uint32_t p = 1; p < size; ++p) {
            uint32_t node;
            check(herd_peer_node(p, &node), "herd_peer_node");
            if (node == my_node && local < 0) {
                local = p;
            } else if (node != my_node && remote < 0) {
                remote = p;
            }
        }
        double local_us = -1, first_us = -1, again_us = -1;
        void *v;
        size_t len;
        if (local >= 0) {
            double t0 = now_us();
            for (long i = 0; i < n; ++i) {
                check(herd_get((uint32_t) local, "card", &v, &len), "a local get");
                free(v);
            }
            local_us = (now_us() - t0) / n;
        }
        if (remote >= 0) {
            double t0 = now_us();
            check(herd_get((uint32_t) remote, "card", &v, &len), "a remote get");
            free(v);
            first_us = now_us() - t0;
            t0 = now_us();
            for (long i = 0; i < n; ++i) {
                check(herd_get((uint32_t) remote, "card", &v, &len), "a remote get again");
                free(v);
            }
            again_us = (now_us() - t0) / n;
        }
        printf("get local_us=%.1f remote_first_us=%.1f remote_again_us=%.1f\n", local_us,
               first_us, again_us);
    }
    check(herd_barrier(), "the last barrier");
    return 0;
}

static int bench_mem(int copy)
{
    long before = private_kb();
    check(herd_init(), "herd_init");
    uint32_t size = herd_size();
    unsigned long sum = 0;
    typedef struct {
        uint32_t node;
        unsigned locality;
    } peer_t;
    peer_t *copies = copy ? calloc(size, sizeof(*copies)) : NULL;
    for (uint32_t p = 0; p < size; ++p) {
        uint32_t node;
        unsigned loc;
        check(herd_peer_node(p, &node), "herd_peer_node");
        check(herd_peer_locality(p, &loc), "herd_peer_locality");
        sum += node + loc;
        if (NULL != copies) {
            copies[p].node = node;
            copies[p].locality = loc;
        }
    }
    long after = private_kb();
    printf("mem rank=%u before_kb=%ld after_kb=%ld check=%lu\n", herd_rank(), before, after,
           sum % 7);
    fflush(stdout);
    check(herd_barrier(), "the last barrier");
    free(copies);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: herdbench fence N | get N | mem [copy]\n");
        return 2;
    }
    int rc;
    if (0 == strcmp(argv[1], "mem")) {
        rc = bench_mem(argc > 2 && 0 == strcmp(argv[2], "copy"));
    } else {
        long n = argc > 2 ? atol(argv[2]) : 100;
        check(herd_init(), "herd_init");
        if (0 == strcmp(argv[1], "fence")) {
            rc = bench_fence(n > 0 ? n : 1);
        } else if (0 == strcmp(argv[1], "get")) {
            rc = bench_get(n > 0 ? n : 1);
        } else {
            fprintf(stderr, "herdbench: unknown mode %s\n", argv[1]);
            return 2;
        }
    }
    check(herd_finalize(), "herd_finalize");
    return rc;
}
