/* SPDX-License-Identifier: BSD-3-Clause */
/* Prints the job's MPI_UNIVERSE_SIZE, as "universe size N" (rank 0), or "universe size unset". */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, flag = 0, *size = NULL;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &size, &flag);
    if (0 == rank) {
        if (flag) {
            printf("universe size %d\n", *size);
        } else {
            printf("universe size unset\n");
        }
    }
    MPI_Finalize();
    return 0;
}
