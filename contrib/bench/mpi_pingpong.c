/* SPDX-License-Identifier: BSD-3-Clause */
/* The MPI side of contrib/bench/endpoints.sh's pingpong: the same sizes, round trips, untimed
 * warm-up and table as examples/pingpong.c, with MPI_Send/MPI_Recv, so that herd's transports
 * and Open MPI's BTLs (mpirun --mca btl self,vader / self,tcp) are timed alike.
 *
 *   mpicc.openmpi -O2 -o mpi_pingpong mpi_pingpong.c
 *   mpirun.openmpi -n 2 --mca btl self,vader ./mpi_pingpong [ITERATIONS] [MAX_BYTES]
 *
 * Built by endpoints.sh when mpicc.openmpi is installed; not part of the herd build. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const size_t sizes[] = {1, 8, 64, 512, 4096, 32768, 262144, 1048576, 4194304};

static void bounce(int rank, char *buf, int bytes, long count)
{
    for (long i = 0; i < count; ++i) {
        if (0 == rank) {
            MPI_Send(buf, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, bytes, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, bytes, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        }
    }
}

int main(int argc, char **argv)
{
    int rank, size, wrong = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long iterations = argc > 1 ? atol(argv[1]) : 10000;
    size_t max_bytes = argc > 2 ? (size_t) strtoull(argv[2], NULL, 0) : 4194304;
    if (size < 2 || iterations < 1) {
        if (0 == rank) {
            fprintf(stderr, "mpi_pingpong: needs 2 processes and ITERATIONS >= 1\n");
        }
        MPI_Finalize();
        return 2;
    }
    char *buf = malloc(max_bytes + 1), *pattern = malloc(max_bytes + 1);
    if (NULL == buf || NULL == pattern) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < max_bytes; ++i) {
        pattern[i] = (char) (i * 7 + 3);
    }
    if (0 == rank) {
        char name[MPI_MAX_PROCESSOR_NAME];
        int len;
        MPI_Get_processor_name(name, &len);
        printf("pingpong: MPI, rank 0 on %s, %d processes\n", name, size);
        printf("%10s %10s %12s %15s\n", "bytes", "iterations", "latency_us", "bandwidth_MB/s");
    }
    for (size_t s = 0; rank < 2 && s < sizeof(sizes) / sizeof(sizes[0]); ++s) {
        size_t bytes = sizes[s];
        if (bytes > max_bytes) {
            break;
        }
        long count = bytes <= 32768 ? iterations : iterations * 32768 / (long) bytes;
        count = count < 10 ? 10 : count;
        memcpy(buf, pattern, bytes);
        bounce(rank, buf, (int) bytes, count / 10 + 1);
        double start = MPI_Wtime();
        bounce(rank, buf, (int) bytes, count);
        double one_way_us = (MPI_Wtime() - start) * 1e6 / (2.0 * (double) count);
        if (0 != memcmp(buf, pattern, bytes)) {
            fprintf(stderr, "rank %d: the %zu-byte message came back changed\n", rank, bytes);
            wrong = 1;
        }
        if (0 == rank) {
            printf("%10zu %10ld %12.2f %15.1f\n", bytes, count, one_way_us,
                   (double) bytes / one_way_us);
            fflush(stdout);
        }
    }
    free(buf);
    free(pattern);
    if (wrong) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Finalize();
    return 0;
}
