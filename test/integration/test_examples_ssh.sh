#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The examples (examples/) across two test hosts (network namespaces with sshd,
# ../shared/testhosts): ring, halo, all-to-all and pingpong in jobs spanning both hosts, so that
# tcp carries every message between the hosts and sm those within one; and with --mca btl
# self,tcp, where tcp carries all. Nothing may be left on either host. Needs root; the hosts are
# made here and torn down on every exit.
. "$(dirname "$0")/lib.sh"

need_testhosts up.sh
EX=$HERD_BUILDDIR/examples
for prog in ring halo alltoall pingpong; do
    if [ ! -x "$EX/$prog" ]; then
        fail "examples/$prog is built by make"
        finish
        exit 1
    fi
done
testhosts_up 2
SSH_ARGS="-F $HOSTS/ssh_config"
HERDRUN_LIMIT=120

# on_n1 ARGS...: herdrun ARGS on test host n1 with 2 slots on each host (ranks 0-1 on n1, 2-3
# on n2 unless mapped otherwise); output to $OUT/$ERR, status in $rc.
on_n1() {
    shm_mark
    on_host 1 env HERD_IT_TAG="$HERD_IT_TAG" timeout "$HERDRUN_LIMIT" "$HERD_BIN/herdrun/herdrun" \
        -H n1:2,n2:2 --mca plm_ssh_args "$SSH_ARGS" "$@" </dev/null >"$OUT" 2>"$ERR"
    rc=$?
}
sessions() { for p in $KEEP_PIDS; do ps -o pid=,args= --ppid "$p"; done; }
no_sessions() { [ -z "$(sessions)" ]; }
after_job() {
    wait_for 10 no_sessions
    expect_eq "$1: no ssh session left open on a host" "$(sessions | tr '\n' ';')" ""
    check_clean "$1"
}

# tcp is named where tcp is checked: by default ucx or ofi, when built, takes the other host
TCP="--mca btl self,sm,tcp"
w="ring on 2 hosts"
# shellcheck disable=SC2086
on_n1 -n 4 $TCP "$EX/ring"
expect_rc "$w: exit 0" 0
expect_eq "$w: every rank got every token once" \
    "$(count_out '^rank [0-3]: 4 steps, .*, sum 6 \(expected 6\) ok$')" 4
expect_out "$w: rank 0 to rank 1 (n1) by sm" "^rank 0: 4 steps, to rank 1 via sm,"
expect_out "$w: rank 1 to rank 2 (n2) by tcp" "^rank 1: 4 steps, to rank 2 via tcp,"
expect_out "$w: rank 2 to rank 3 (n2) by sm" "^rank 2: 4 steps, to rank 3 via sm,"
expect_out "$w: rank 3 to rank 0 (n1) by tcp" "^rank 3: 4 steps, to rank 0 via tcp,"
after_job "$w"

w="halo on 2 hosts"
# shellcheck disable=SC2086
on_n1 -n 4 $TCP "$EX/halo" 20 64
expect_rc "$w: exit 0" 0
expect_out "$w: rank 0 (n1): south 2 (n2) by tcp, east 1 (n1) by sm" \
    "^rank 0: tile \(0,0\) of 2x2, 20 iterations of 64x64; south 2 via tcp, east 1 via sm; ghost cells ok$"
expect_out "$w: rank 3 (n2): north 1 (n1) by tcp, west 2 (n2) by sm" \
    "^rank 3: tile \(1,1\) of 2x2, 20 iterations of 64x64; north 1 via tcp, west 2 via sm; ghost cells ok$"
expect_eq "$w: every rank's ghost cells right" "$(count_out '; ghost cells ok$')" 4
after_job "$w"

w="alltoall on 2 hosts"
# shellcheck disable=SC2086
on_n1 -n 4 $TCP "$EX/alltoall" 100000
expect_rc "$w: exit 0" 0
expect_eq "$w: per rank self 1, sm 1 (its host), tcp 2 (the other), every block right" \
    "$(count_out '^rank [0-3]: 4 blocks of 800000 bytes, peers via self 1, sm 1, tcp 2, every block ok$')" 4
after_job "$w"

w="alltoall on 2 hosts, btl self,tcp"
on_n1 -n 4 --mca btl self,tcp "$EX/alltoall" 1000
expect_rc "$w: exit 0" 0
expect_eq "$w: tcp to every other rank" \
    "$(count_out '^rank [0-3]: 4 blocks of 8000 bytes, peers via self 1, tcp 3, every block ok$')" 4
after_job "$w"

w="pingpong between 2 hosts"
# shellcheck disable=SC2086
on_n1 -n 2 --map-by node $TCP "$EX/pingpong" 200 1048576
expect_rc "$w: exit 0" 0
expect_out "$w: from n1 to n2 by tcp" "^pingpong: rank 0 on n1, rank 1 on n2, via tcp$"
expect_out "$w: up to 1 MiB" "^ +1048576 +[0-9]+ +[0-9.]+ +[0-9.]+$"
after_job "$w"

finish
