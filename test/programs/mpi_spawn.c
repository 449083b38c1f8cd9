/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Comm_spawn of 2 children. The parents spawn them collectively; the children find their
 * parent communicator, rank 0 of the parents sends each child a number, each child sends it back
 * plus its rank; everyone merges the intercommunicator and checks the merged size. Prints
 * "parent ok" / "child ok"; exit 1 on any mismatch. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define CHILDREN 2

int main(int argc, char **argv)
{
    MPI_Comm parent, inter, merged;
    int rank, size, msize, ok = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_get_parent(&parent);
    if (MPI_COMM_NULL == parent) {
        int errcodes[CHILDREN];
        MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, CHILDREN, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                       errcodes);
        for (int i = 0; i < CHILDREN; ++i) {
            ok = ok && MPI_SUCCESS == errcodes[i];
        }
        if (0 == rank) {
            for (int c = 0; c < CHILDREN; ++c) {
                int v = 100 + c, back = -1;
                MPI_Send(&v, 1, MPI_INT, c, 1, inter);
                MPI_Recv(&back, 1, MPI_INT, c, 2, inter, MPI_STATUS_IGNORE);
                ok = ok && back == v + c;
            }
        }
        MPI_Intercomm_merge(inter, 0, &merged);
        MPI_Comm_size(merged, &msize);
        ok = ok && msize == size + CHILDREN;
        printf("parent %s: rank %d of %d, merged size %d\n", ok ? "ok" : "WRONG", rank, size,
               msize);
    } else {
        int v = -1;
        MPI_Recv(&v, 1, MPI_INT, 0, 1, parent, MPI_STATUS_IGNORE);
        v += rank;
        MPI_Send(&v, 1, MPI_INT, 0, 2, parent);
        MPI_Intercomm_merge(parent, 1, &merged);
        MPI_Comm_size(merged, &msize);
        int psize;
        MPI_Comm_remote_size(parent, &psize);
        ok = size == CHILDREN && msize == psize + CHILDREN;
        printf("child %s: rank %d of %d, merged size %d\n", ok ? "ok" : "WRONG", rank, size, msize);
        inter = parent;
    }
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&inter);
    MPI_Finalize();
    return ok ? 0 : 1;
}
