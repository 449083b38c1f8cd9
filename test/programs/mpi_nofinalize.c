/* SPDX-License-Identifier: BSD-3-Clause */
/* Every rank initializes MPI; the last rank leaves with exit(0) without MPI_Finalize, the others
 * finalize. The job must be reported as failed, naming that rank. */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == size - 1) {
        exit(0);
    }
    MPI_Finalize();
    return 0;
}
