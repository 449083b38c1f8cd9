/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Comm_spawn of more processes than fit, with errors returned rather than fatal: a refused
 * spawn must come back at once with an error, and the program go on. One process asks (the
 * others of Open MPI 4.1's MPI_COMM_WORLD would wait in its own broadcast for a root that gave
 * up). Prints "spawn refused: ERROR-CLASS" then "still running", or "spawn started". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Comm parent, inter;
    int n = argc > 1 ? atoi(argv[1]) : 64;
    MPI_Init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    if (MPI_COMM_NULL != parent) {
        MPI_Finalize(); /* a child, should the spawn fit after all */
        return 0;
    }
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int rc = MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, n, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter,
                            MPI_ERRCODES_IGNORE);
    if (MPI_SUCCESS == rc) {
        printf("spawn started\n");
        MPI_Comm_disconnect(&inter);
    } else {
        int class = 0, len = 0;
        char text[MPI_MAX_ERROR_STRING];
        MPI_Error_class(rc, &class);
        MPI_Error_string(class, text, &len);
        printf("spawn refused: %s\n", text);
        printf("still running\n");
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
