#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The quick check a build gets when the whole suite has run elsewhere (the distcheck tarball, a
# static-component build): herd-info lists the frameworks, a job runs on this host and on
# simulated nodes, a persistent DVM takes a job and shuts down, and an unmodified Open MPI
# program (when mpicc.openmpi is there) runs - with nothing left behind.
. "$(dirname "$0")/lib.sh"
SIM="--mca ras simulator --mca ras_simulator_num_nodes"

herd_info
expect_rc "herd-info runs" 0
expect_out "herd-info lists the frameworks" "MCA rmaps: round_robin"

herdrun -n 2 --oversubscribe sh -c 'echo "rank $HERD_RANK of $HERD_SIZE"'
expect_rc "a job on this host: exit 0" 0
expect_eq "a job on this host: every rank once" "$(sort "$OUT" | tr '\n' ';')" \
    "rank 0 of 2;rank 1 of 2;"
check_clean "a job on this host"

herdrun $SIM 4 -n 8 --map-by node sh -c 'echo "rank $HERD_RANK on $(hostname)"'
expect_rc "a job on 4 simulated nodes: exit 0" 0
expect_eq "a job on 4 simulated nodes: 8 lines" "$(grep -c '^rank [0-7] on ' "$OUT")" 8
check_clean "a job on 4 simulated nodes"

herdrun -n 2 --oversubscribe sh -c '[ "$HERD_RANK" = 1 ] && exit 3; exit 0'
expect_rc "a failing rank: herdrun exits with its status" 3
expect_err "a failing rank: the failure line" "rank 1 on node .* exited with status 3"
check_clean "a failing rank"

uri=$WORK/dvm.uri
herd_dvm $SIM 3 --daemonize --report-uri "$uri"
expect_rc "a persistent DVM comes up" 0
herdrun --dvm-uri "$uri" -n 3 --map-by node sh -c 'echo "dvm rank $HERD_RANK"'
expect_rc "a job on the persistent DVM: exit 0" 0
expect_eq "a job on the persistent DVM: every rank once" "$(sort "$OUT" | tr '\n' ';')" \
    "dvm rank 0;dvm rank 1;dvm rank 2;"
herd_dvm --shutdown --dvm-uri "$uri"
expect_rc "the persistent DVM shuts down" 0
wait_for 10 no_herdd
expect_eq "no daemon left after --shutdown" "$(herdd_pids)" ""

if command -v mpicc.openmpi >/dev/null; then
    if mpicc.openmpi -o "$WORK/mpi_hello" "$HERD_SRCDIR/test/programs/mpi_hello.c" 2>"$ERR"; then
        herdrun -n 2 --oversubscribe "$WORK/mpi_hello"
        expect_rc "an Open MPI program: exit 0" 0
        expect_eq "an Open MPI program: both ranks say hello" \
            "$(grep -c '^hello from rank [01] of 2 .*: allreduce sum 1$' "$OUT")" 2
        check_clean "an Open MPI program"
    else
        fail "mpicc.openmpi builds test/programs/mpi_hello.c"
    fi
else
    echo "SKIP: no mpicc.openmpi: the Open MPI case is left out"
fi

finish
