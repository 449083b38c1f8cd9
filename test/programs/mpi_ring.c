/* SPDX-License-Identifier: BSD-3-Clause */
/* A token passed around a ring of ranks with MPI_Send/MPI_Recv, several laps: each rank adds one.
 * Rank 0 checks the count and prints "ring ok"; exit 1 otherwise. */
#include <mpi.h>
#include <stdio.h>

#define LAPS 10

int main(int argc, char **argv)
{
    int rank, size, token = 0, ok = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int lap = 0; lap < LAPS; ++lap) {
        if (0 == rank) {
            token++;
            MPI_Send(&token, 1, MPI_INT, next, lap, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, prev, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_INT, prev, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token++;
            MPI_Send(&token, 1, MPI_INT, next, lap, MPI_COMM_WORLD);
        }
    }
    if (0 == rank) {
        ok = (token == LAPS * size);
        printf("ring %s: token %d after %d laps of %d ranks\n", ok ? "ok" : "WRONG", token, LAPS,
               size);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return ok ? 0 : 1;
}
