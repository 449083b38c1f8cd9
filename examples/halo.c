/* SPDX-License-Identifier: BSD-3-Clause */
/* halo: a sparse exchange. The ranks tile a 2-D grid (px x py, as square as the job's size
 * allows, not periodic); each owns a BLOCK x BLOCK tile of a global field and, every iteration,
 * swaps its edge rows and columns with its 2 to 4 grid neighbours (north, south, west, east)
 * into a one-cell ghost border around its tile, as a stencil code does before each sweep. No
 * rank ever talks to more than 4 others, whatever the job's size.
 *
 *   herdrun -n 6 ./halo [ITERATIONS] [BLOCK]
 *
 * Cell (x, y) of the global field holds x * 1e6 + y + iteration, so every ghost cell received
 * can be checked against the cell it copies. */
#include <stdio.h>
#include <stdlib.h>

#include <herd.h>

enum { NORTH, SOUTH, WEST, EAST, NUM_SIDES };
static const char *const side_name[NUM_SIDES] = {"north", "south", "west", "east"};

static void check(int rc, const char *call)
{
    if (HERD_SUCCESS != rc) {
        fprintf(stderr, "rank %u: %s failed: %s\n", herd_rank(), call, herd_last_error());
        herd_abort(1, "halo: a messaging call failed");
    }
}

static double value_at(long x, long y, int iteration)
{
    return (double) x * 1e6 + (double) y + iteration;
}

int main(int argc, char **argv)
{
    int iterations = argc > 1 ? atoi(argv[1]) : 10;
    int block = argc > 2 ? atoi(argv[2]) : 64;
    if (HERD_SUCCESS != herd_init()) {
        fprintf(stderr, "halo: herd_init: %s (run it with herdrun)\n", herd_last_error());
        return 1;
    }
    uint32_t me = herd_rank(), size = herd_size();
    if (iterations < 1 || block < 1) {
        herd_abort(2, "halo: ITERATIONS and BLOCK must be at least 1");
    }

    /* px columns of tiles, py rows: the divisor of size closest to its square root */
    uint32_t px = 1;
    for (uint32_t d = 1; d * d <= size; ++d) {
        if (0 == size % d) {
            px = d;
        }
    }
    uint32_t py = size / px;
    long col = me % px, row = me / px; /* this tile's place in the grid */

    /* grid neighbours; UINT32_MAX where the grid ends */
    uint32_t peer[NUM_SIDES] = {
        [NORTH] = row > 0 ? me - px : UINT32_MAX,
        [SOUTH] = (uint32_t) row < py - 1 ? me + px : UINT32_MAX,
        [WEST] = col > 0 ? me - 1 : UINT32_MAX,
        [EAST] = (uint32_t) col < px - 1 ? me + 1 : UINT32_MAX,
    };

    /* the tile with its ghost border: (block + 2)^2 cells, interior at [1..block][1..block] */
    long n = block + 2;
    double *field = malloc((size_t) (n * n) * sizeof(double));
    double *out[NUM_SIDES], *in[NUM_SIDES];
    for (int s = 0; s < NUM_SIDES; ++s) {
        out[s] = malloc((size_t) block * sizeof(double));
        in[s] = malloc((size_t) block * sizeof(double));
        if (NULL == out[s] || NULL == in[s]) {
            herd_abort(1, "halo: out of memory");
        }
    }
    if (NULL == field) {
        herd_abort(1, "halo: out of memory");
    }
    /* i: row (y), j: column (x), both 1-based inside the ghost border */
#define CELL(i, j) field[n * (i) + (j)]
    long x0 = col * block, y0 = row * block; /* global coordinates of the tile's first cell */
    long wrong = 0;

    for (int it = 0; it < iterations; ++it) {
        for (long i = 1; i <= block; ++i) {
            for (long j = 1; j <= block; ++j) {
                CELL(i, j) = value_at(x0 + j - 1, y0 + i - 1, it);
            }
        }
        /* pack the edges: rows are contiguous, columns are not */
        for (long k = 0; k < block; ++k) {
            out[NORTH][k] = CELL(1, k + 1);
            out[SOUTH][k] = CELL(block, k + 1);
            out[WEST][k] = CELL(k + 1, 1);
            out[EAST][k] = CELL(k + 1, block);
        }
        /* the tag is the side the message arrives on, so a pair of ranks never confuses two
         * messages; receives are posted first, then every send, then the waits */
        static const int arrives_on[NUM_SIDES] = {SOUTH, NORTH, EAST, WEST};
        herd_request_t request[NUM_SIDES];
        size_t bytes = (size_t) block * sizeof(double), len[NUM_SIDES];
        for (int s = 0; s < NUM_SIDES; ++s) {
            if (UINT32_MAX != peer[s]) {
                check(herd_irecv(peer[s], s, in[s], bytes, &len[s], NULL, NULL, &request[s]),
                      "herd_irecv");
            }
        }
        for (int s = 0; s < NUM_SIDES; ++s) {
            if (UINT32_MAX != peer[s]) {
                check(herd_send(peer[s], arrives_on[s], out[s], bytes), "herd_send");
            }
        }
        for (int s = 0; s < NUM_SIDES; ++s) {
            if (UINT32_MAX == peer[s]) {
                continue;
            }
            check(herd_wait(&request[s]), "herd_wait");
            if (len[s] != bytes) {
                wrong++;
                continue;
            }
            /* unpack into the ghost border and check each cell against the global field */
            for (long k = 0; k < block; ++k) {
                long i = NORTH == s ? 0 : SOUTH == s ? block + 1 : k + 1;
                long j = WEST == s ? 0 : EAST == s ? block + 1 : k + 1;
                CELL(i, j) = in[s][k];
                if (CELL(i, j) != value_at(x0 + j - 1, y0 + i - 1, it)) {
                    wrong++;
                }
            }
        }
    }
#undef CELL

    printf("rank %u: tile (%ld,%ld) of %ux%u, %d iterations of %dx%d;", me, col, row, px, py,
           iterations, block, block);
    int neighbours = 0;
    for (int s = 0; s < NUM_SIDES; ++s) {
        if (UINT32_MAX != peer[s]) {
            const char *via = herd_peer_transport(peer[s]);
            printf("%s %s %u via %s", 0 == neighbours ? "" : ",", side_name[s], peer[s],
                   NULL != via ? via : "(none)");
            neighbours++;
        }
    }
    if (0 == neighbours) {
        printf(" no neighbours");
    }
    printf("; %s\n", 0 == wrong ? "ghost cells ok" : "WRONG ghost cells");
    for (int s = 0; s < NUM_SIDES; ++s) {
        free(out[s]);
        free(in[s]);
    }
    free(field);
    if (0 != wrong) {
        herd_abort(1, "halo: wrong ghost cells");
    }
    return HERD_SUCCESS == herd_finalize() ? 0 : 1;
}
