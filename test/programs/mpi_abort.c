/* SPDX-License-Identifier: BSD-3-Clause */
/* Rank 1 calls MPI_Abort with error code 7 after a barrier; the others wait in a second
 * barrier that never completes (the job must be killed, not hang). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (1 == rank) {
        fprintf(stderr, "rank 1 calls MPI_Abort(7)\n");
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 7);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
