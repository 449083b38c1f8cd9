/* SPDX-License-Identifier: BSD-3-Clause */
/* pingpong: ranks 0 and 1 bounce a message back and forth, for sizes from 1 byte to MAX_BYTES,
 * and rank 0 prints the one-way latency (half a round trip) and the bandwidth that gives (bytes
 * / latency). Other ranks wait at the end. contrib/bench/endpoints.sh runs it per transport
 * beside contrib/bench/mpi_pingpong.c, which does the same with MPI and prints the same table.
 *
 *   herdrun -n 2 ./pingpong [ITERATIONS] [MAX_BYTES]
 *   herdrun -n 2 --mca btl self,tcp ./pingpong
 *
 * ITERATIONS (default 10000) round trips per size up to 32 KiB, fewer above (the same bytes),
 * after ITERATIONS / 10 untimed ones (the first contact, caches). MAX_BYTES: default 4 MiB.
 * What came back is checked after each size. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <herd.h>

#define TAG_PING 1
#define TAG_PONG 2

static const size_t sizes[] = {1, 8, 64, 512, 4096, 32768, 262144, 1048576, 4194304};

static void check(int rc, const char *call)
{
    if (HERD_SUCCESS != rc) {
        fprintf(stderr, "rank %u: %s failed: %s\n", herd_rank(), call, herd_last_error());
        herd_abort(1, "pingpong: a messaging call failed");
    }
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec * 1e6 + (double) t.tv_nsec / 1e3;
}

/* count round trips of bytes between 0 (which starts) and 1 (which echoes) */
static void bounce(char *buf, size_t bytes, long count)
{
    for (long i = 0; i < count; ++i) {
        if (0 == herd_rank()) {
            check(herd_send(1, TAG_PING, buf, bytes), "herd_send");
            check(herd_recv(1, TAG_PONG, buf, bytes, NULL, NULL, NULL), "herd_recv");
        } else {
            check(herd_recv(0, TAG_PING, buf, bytes, NULL, NULL, NULL), "herd_recv");
            check(herd_send(0, TAG_PONG, buf, bytes), "herd_send");
        }
    }
}

int main(int argc, char **argv)
{
    long iterations = argc > 1 ? atol(argv[1]) : 10000;
    size_t max_bytes = argc > 2 ? (size_t) strtoull(argv[2], NULL, 0) : 4194304;
    if (HERD_SUCCESS != herd_init()) {
        fprintf(stderr, "pingpong: herd_init: %s (run it with herdrun)\n", herd_last_error());
        return 1;
    }
    uint32_t me = herd_rank();
    if (herd_size() < 2 || iterations < 1) {
        if (0 == me) {
            fprintf(stderr, "pingpong: needs 2 processes (herdrun -n 2) and ITERATIONS >= 1\n");
        }
        herd_finalize();
        return 2;
    }
    char *buf = malloc(max_bytes + 1), *pattern = malloc(max_bytes + 1);
    if (NULL == buf || NULL == pattern) {
        herd_abort(1, "pingpong: out of memory");
    }
    for (size_t i = 0; i < max_bytes; ++i) {
        pattern[i] = (char) (i * 7 + 3);
    }

    int wrong = 0;
    for (size_t s = 0; me < 2 && s < sizeof(sizes) / sizeof(sizes[0]); ++s) {
        size_t bytes = sizes[s];
        if (bytes > max_bytes) {
            break;
        }
        long count = bytes <= 32768 ? iterations : iterations * 32768 / (long) bytes;
        count = count < 10 ? 10 : count;
        memcpy(buf, pattern, bytes);
        bounce(buf, bytes, count / 10 + 1);
        if (0 == me && 0 == s) {
            const char *via = herd_peer_transport(1);
            uint32_t node;
            herd_peer_node(1, &node);
            printf("pingpong: rank 0 on %s, rank 1 on %s, via %s\n", herd_node_name(herd_node()),
                   herd_node_name(node), NULL != via ? via : "(none)");
            printf("%10s %10s %12s %15s\n", "bytes", "iterations", "latency_us", "bandwidth_MB/s");
        }
        double start = now_us();
        bounce(buf, bytes, count);
        double one_way_us = (now_us() - start) / (2.0 * (double) count);
        if (0 != memcmp(buf, pattern, bytes)) {
            fprintf(stderr, "rank %u: the %zu-byte message came back changed\n", me, bytes);
            wrong = 1;
        }
        if (0 == me) {
            printf("%10zu %10ld %12.2f %15.1f\n", bytes, count, one_way_us,
                   (double) bytes / one_way_us);
            fflush(stdout);
        }
    }
    free(buf);
    free(pattern);
    if (wrong) {
        herd_abort(1, "pingpong: a message came back changed");
    }
    return HERD_SUCCESS == herd_finalize() ? 0 : 1;
}
