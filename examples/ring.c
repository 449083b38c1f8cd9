/* SPDX-License-Identifier: BSD-3-Clause */
/* ring: every rank talks to its two neighbours only. Each rank starts with a token worth its
 * rank; in each step it passes the token it holds to its right neighbour and takes its left
 * neighbour's. After size steps every token went once round the ring and came home, so each rank
 * received every token once: their sum is 0 + 1 + ... + (size - 1).
 *
 *   herdrun -n 4 ./ring [STEPS] [--memory]
 *
 * STEPS (default size, one lap): with fewer, each token received is checked, not the sum.
 * --memory: also print, after the ring, this process's private memory (Private_Clean +
 * Private_Dirty of /proc/self/smaps_rollup) and the shared-memory segments it maps, which
 * contrib/bench/endpoints.sh compares across job sizes: with the lazy add a ring process holds
 * state for 2 peers, whatever the size. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <herd.h>

#define TAG_RING 1

static void check(int rc, const char *call)
{
    if (HERD_SUCCESS != rc) {
        fprintf(stderr, "rank %u: %s failed: %s\n", herd_rank(), call, herd_last_error());
        herd_abort(1, "ring: a messaging call failed");
    }
}

/* Private memory of this process in KiB, or -1 where smaps_rollup is missing (Linux < 4.14). */
static long private_kib(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    long total = -1, kib;

    if (NULL == f) {
        return -1;
    }
    while (NULL != fgets(line, sizeof(line), f)) {
        if (1 == sscanf(line, "Private_Clean: %ld kB", &kib) ||
            1 == sscanf(line, "Private_Dirty: %ld kB", &kib)) {
            total = (total < 0 ? 0 : total) + kib;
        }
    }
    fclose(f);
    return total;
}

/* The shared-memory segments this process maps (the sm transport's rings: its own and its
 * peers'), and their size in KiB, from /proc/self/maps. */
static void shm_mapped(long *segments, long *kib)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    unsigned long start, end;

    *segments = 0, *kib = 0;
    while (NULL != f && NULL != fgets(line, sizeof(line), f)) {
        if (NULL != strstr(line, " /dev/shm/") && 2 == sscanf(line, "%lx-%lx", &start, &end)) {
            (*segments)++;
            *kib += (long) ((end - start) / 1024);
        }
    }
    if (NULL != f) {
        fclose(f);
    }
}

int main(int argc, char **argv)
{
    int memory = argc > 1 && 0 == strcmp(argv[argc - 1], "--memory");
    if (HERD_SUCCESS != herd_init()) {
        fprintf(stderr, "ring: herd_init: %s (run it with herdrun)\n", herd_last_error());
        return 1;
    }
    uint32_t me = herd_rank(), size = herd_size();
    uint32_t right = (me + 1) % size, left = (me + size - 1) % size;
    uint32_t steps = argc > 1 + memory ? (uint32_t) strtoul(argv[1], NULL, 10) : size;

    uint64_t held = me, sum = 0;
    for (uint32_t step = 0; step < steps; ++step) {
        uint64_t incoming;
        size_t len;
        herd_request_t request;

        /* receive posted before the send: no rank waits on a neighbour that is sending too */
        check(herd_irecv(left, TAG_RING, &incoming, sizeof(incoming), &len, NULL, NULL, &request),
              "herd_irecv");
        check(herd_send(right, TAG_RING, &held, sizeof(held)), "herd_send");
        check(herd_wait(&request), "herd_wait");
        /* the token received at step s started at rank me - 1 - s */
        uint32_t origin = (uint32_t) ((me + (uint64_t) size * (step + 1) - 1 - step) % size);
        if (len != sizeof(incoming) || incoming != origin) {
            fprintf(stderr, "rank %u: step %u brought %" PRIu64 ", expected %u\n", me, step,
                    incoming, origin);
            herd_abort(1, "ring: wrong value");
        }
        held = incoming;
        sum += incoming;
    }

    const char *via = herd_peer_transport(right);
    printf("rank %u: %u steps, to rank %u via %s, from rank %u", me, steps, right,
           NULL != via ? via : "(none)", left);
    if (steps == size) {
        uint64_t expected = (uint64_t) size * (size - 1) / 2;
        printf(", sum %" PRIu64 " (expected %" PRIu64 ")", sum, expected);
        if (sum != expected) {
            printf(" WRONG\n");
            herd_abort(1, "ring: wrong sum");
        }
    }
    printf(" ok\n");
    if (memory) {
        long segments, kib;
        shm_mapped(&segments, &kib);
        printf("rank %u: private memory %ld KiB; %ld shared-memory segments mapped (%ld KiB)\n", me,
               private_kib(), segments, kib);
    }
    return HERD_SUCCESS == herd_finalize() ? 0 : 1;
}
