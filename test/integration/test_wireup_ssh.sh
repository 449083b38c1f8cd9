#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Wireup across three test hosts (network namespaces with sshd, ../shared/testhosts): unmodified
# Open MPI and MPICH programs (hello with MPI_Allreduce, a ring, MPI_Comm_spawn, MPI_Abort) and
# a libherd program find each other over the network, with nothing left on any host. Needs
# root; the hosts are made here and torn down on every exit.
. "$(dirname "$0")/lib.sh"

need_testhosts up.sh
BIN=$WORK/bin
mkdir -p "$BIN"
mpi_flavours
for f in $FLAVOURS; do
    for p in hello ring spawn abort; do
        "mpicc.$f" -o "$BIN/${f}_$p" "$HERD_SRCDIR/test/programs/mpi_$p.c" 2>"$ERR" ||
            fail "mpi_$p.c builds with mpicc.$f"
    done
done
HERD_HELLO=$HERD_BUILDDIR/test/programs/herd_hello

testhosts_up 3
SSH_ARGS="-F $HOSTS/ssh_config"
HERDRUN_LIMIT=120

# on_n1 ARGS...: herdrun ARGS on test host n1 across the three hosts (2 slots each).
on_n1() {
    shm_mark
    on_host 1 env HERD_IT_TAG="$HERD_IT_TAG" timeout "$HERDRUN_LIMIT" "$HERD_BIN/herdrun/herdrun" \
        -H n1:2,n2:2,n3:2 --mca plm_ssh_args "$SSH_ARGS" "$@" </dev/null >"$OUT" 2>"$ERR"
    rc=$?
}
sessions() { for p in $KEEP_PIDS; do ps -o pid=,args= --ppid "$p"; done; }
no_sessions() { [ -z "$(sessions)" ]; }
after_job() {
    wait_for 10 no_sessions
    expect_eq "$1: no ssh session left open on a host" "$(sessions | tr '\n' ';')" ""
    check_clean "$1"
}

for f in $FLAVOURS; do
    on_n1 -n 6 "$BIN/${f}_hello"
    expect_rc "$f hello on 3 hosts: exit 0" 0
    expect_eq "$f hello on 3 hosts: 6 ranks greet, 2 per host" \
        "$(grep -oE 'rank [0-5] of 6 on n[1-3]' "$OUT" | sort | tr '\n' ';')" \
        "rank 0 of 6 on n1;rank 1 of 6 on n1;rank 2 of 6 on n2;rank 3 of 6 on n2;rank 4 of 6 on n3;rank 5 of 6 on n3;"
    expect_no_out "$f hello on 3 hosts: every sum right" "WRONG"
    after_job "$f hello on 3 hosts"

    on_n1 -n 6 "$BIN/${f}_ring"
    expect_rc "$f ring on 3 hosts: exit 0" 0
    expect_out "$f ring on 3 hosts: the token went round" "^ring ok: token 60 "
    after_job "$f ring on 3 hosts"

    on_n1 -n 6 "$BIN/${f}_abort"
    expect_rc "$f MPI_Abort(7) on 3 hosts: herdrun exits 7" 7
    expect_err "$f MPI_Abort(7) on 3 hosts: herdrun names rank 1" \
        "rank 1 on node n1 .* called abort with status 7"
    after_job "$f MPI_Abort(7) on 3 hosts"
done

if echo "$FLAVOURS" | grep -q openmpi; then
    # a parent on n1 and one on n2; their 2 children take the free slots of those hosts
    on_n1 -n 2 --map-by node "$BIN/openmpi_spawn"
    expect_rc "openmpi spawn on 3 hosts: exit 0" 0
    expect_eq "openmpi spawn on 3 hosts: both parents see their children" \
        "$(count_out '^parent ok: ')" 2
    expect_eq "openmpi spawn on 3 hosts: both children see their parents" \
        "$(count_out '^child ok: ')" 2
    after_job "openmpi spawn on 3 hosts"
fi

if [ -x "$HERD_HELLO" ]; then
    on_n1 -n 6 "$HERD_HELLO"
    expect_rc "libherd put/fence/get on 3 hosts: exit 0" 0
    after_job "libherd put/fence/get on 3 hosts"
else
    fail "libherd's test program $HERD_HELLO was built"
fi

finish
