/* SPDX-License-Identifier: BSD-3-Clause */
/* An MPI hello for the wireup tests: every rank prints its rank, size and host, the ranks sum
 * their numbers with MPI_Allreduce and check the total; exit 1 on a wrong sum. Built by the
 * tests with mpicc.openmpi and mpicc.mpich. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, sum = -1;
    char host[256] = "";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    gethostname(host, sizeof(host));
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int want = size * (size - 1) / 2;
    printf("hello from rank %d of %d on %s: allreduce sum %d%s\n", rank, size, host, sum,
           sum == want ? "" : " (WRONG)");
    MPI_Finalize();
    return sum == want ? 0 : 1;
}
