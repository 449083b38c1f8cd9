#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The examples (examples/: ring, halo, alltoall, pingpong) as a user runs them from the README:
# 1, 2, 4 and 8 processes on this host with --mca btl self,sm, self,tcp and the default choice,
# each checking its own data and printing each peer's transport; on 2 simulated nodes, where a
# peer on the same node gets sm and one on the other tcp, and where sm alone cannot reach the
# other node; and btl_base_add_all against the lazy add. After every case nothing may be left
# running or in /dev/shm. (Across ssh test hosts: test_examples_ssh.sh.)
. "$(dirname "$0")/lib.sh"
HERDRUN_LIMIT=120
EX=$HERD_BUILDDIR/examples
OVER=--oversubscribe

# the distinct "via X" of the output, on one line: "via sm;via tcp;"
transports() { grep -oE 'via [a-z(][a-z)]*' "$OUT" | sort -u | tr '\n' ';'; }

for prog in ring halo alltoall pingpong; do
    [ -x "$EX/$prog" ] && ok "examples/$prog is built by make" ||
        fail "examples/$prog is built by make"
done

# --- 1 to 8 processes on this host, each transport ---------------------------------------------
for btl in self,sm self,tcp default; do
    case $btl in
    default) sel="" ; t=sm ;;
    *) sel="--mca btl $btl" ; t=${btl#self,} ;;
    esac
    for n in 1 2 4 8; do
        [ "$n" -eq 1 ] && to=self || to=$t
        sum=$((n * (n - 1) / 2))
        w="ring, $n procs, btl $btl"
        # shellcheck disable=SC2086
        run_ok "$w" $OVER -n $n $sel "$EX/ring"
        expect_eq "$w: every rank got every token once, from its left neighbour" \
            "$(count_out "^rank [0-9]+: $n steps, to rank [0-9]+ via $to, from rank [0-9]+, sum $sum \(expected $sum\) ok$")" \
            "$n"

        w="halo, $n procs, btl $btl"
        # shellcheck disable=SC2086
        run_ok "$w" $OVER -n $n $sel "$EX/halo" 5 32
        expect_eq "$w: every rank's ghost cells are its neighbours' edges" \
            "$(count_out '^rank [0-9]+: tile \([0-9]+,[0-9]+\) of [0-9]+x[0-9]+, 5 iterations of 32x32; .*; ghost cells ok$')" \
            "$n"
        if [ "$n" -eq 1 ]; then
            expect_out "$w: a lone tile has no neighbours" "; no neighbours; ghost cells ok$"
        else
            expect_eq "$w: every neighbour through $t" "$(transports)" "via $t;"
        fi

        w="alltoall, $n procs, btl $btl"
        # shellcheck disable=SC2086
        run_ok "$w" $OVER -n $n $sel "$EX/alltoall" 3000
        if [ "$n" -eq 1 ]; then
            others=""
        else
            others=", $t $((n - 1))"
        fi
        expect_eq "$w: every rank got every block, itself through self, the others through $t" \
            "$(count_out "^rank [0-9]+: $n blocks of 24000 bytes, peers via self 1$others, every block ok$")" \
            "$n"
    done
    w="pingpong, btl $btl"
    # shellcheck disable=SC2086
    run_ok "$w" -n 2 $sel "$EX/pingpong" 200 65536
    expect_out "$w: rank 0 says the transport" "^pingpong: rank 0 on .*, rank 1 on .*, via $t$"
    expect_out "$w: a line for 8 bytes" "^ +8 +200 +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+$"
    expect_out "$w: a line for 32 KiB, the largest size within 64 KiB" \
        "^ +32768 +200 +[0-9.]+ +[0-9.]+$"
    expect_no_out "$w: nothing above 64 KiB" "^ +262144 "
done

w="pingpong, 3 procs (rank 2 idles)"
run_ok "$w" $OVER -n 3 "$EX/pingpong" 100 64
expect_eq "$w: only rank 0 prints the table" "$(count_out '^ +64 +100 ')" 1
herdrun_bg -n 1 "$EX/pingpong"
herdrun_wait "$HERDRUN_LIMIT"
expect_fail "pingpong, 1 proc: fails"
expect_err "pingpong, 1 proc: says it needs 2" "pingpong: needs 2 processes"
check_clean "pingpong, 1 proc"

# --- what a process holds: lazy add against btl_base_add_all ----------------------------------
w="ring, 6 procs, lazy add"
run_ok "$w" $OVER -n 6 --mca btl_base_verbose 5 "$EX/ring" 1 --memory
expect_eq "$w: each process holds its right neighbour only" \
    "$(grep -cE 'rank [0-9]+ at finalize: 1 procs in the proc table; peers per btl: self 0, sm 1, tcp 0;' "$ERR")" 6
expect_eq "$w: each maps the job database, its own ring and its right neighbour's" \
    "$(count_out '^rank [0-9]+: private memory [0-9]+ KiB; 3 shared-memory segments mapped')" 6
w="ring, 6 procs, btl_base_add_all"
run_ok "$w" $OVER -n 6 --mca btl_base_add_all 1 --mca btl_base_verbose 5 "$EX/ring" 1 --memory
expect_eq "$w: each process holds every peer" \
    "$(grep -cE 'rank [0-9]+ at finalize: 6 procs in the proc table; peers per btl: self 1, sm 5, tcp 0;' "$ERR")" 6
expect_eq "$w: each maps the job database and all 6 rings" \
    "$(count_out '^rank [0-9]+: private memory [0-9]+ KiB; 7 shared-memory segments mapped')" 6
expect_eq "$w: and says so at the start" \
    "$(grep -cE 'rank [0-9]+: btl_base_add_all: 6 of 6 processes added at start' "$ERR")" 6
expect_eq "$w: the ring still works" "$(count_out '^rank [0-9]+: 1 steps, .* ok$')" 6

# --- 2 simulated nodes, processes alternating between them -------------------------------------
# tcp is named where tcp is checked: by default a transport above it (ucx, then ofi, when built)
# takes the other node, as the default ring checks last.
SIM="--mca ras simulator --mca ras_simulator_num_nodes 2 --map-by node"
TCP="--mca btl self,sm,tcp"
w="ring on 2 simulated nodes"
# shellcheck disable=SC2086
run_ok "$w" $SIM $TCP -n 4 "$EX/ring"
expect_eq "$w: every right neighbour is on the other node: tcp" \
    "$(count_out '^rank [0-9]: 4 steps, to rank [0-9] via tcp, from rank [0-9], sum 6 \(expected 6\) ok$')" 4
w="halo on 2 simulated nodes"
# shellcheck disable=SC2086
run_ok "$w" $SIM $TCP -n 4 "$EX/halo" 3 16
expect_out "$w: rank 0 reaches 2 (its node) by sm, 1 by tcp" \
    "^rank 0: tile \(0,0\) of 2x2, 3 iterations of 16x16; south 2 via sm, east 1 via tcp; ghost cells ok$"
expect_out "$w: rank 3 reaches 1 (its node) by sm, 2 by tcp" \
    "^rank 3: tile \(1,1\) of 2x2, 3 iterations of 16x16; north 1 via sm, west 2 via tcp; ghost cells ok$"
w="alltoall on 2 simulated nodes"
# shellcheck disable=SC2086
run_ok "$w" $SIM $TCP -n 6 "$EX/alltoall" 20000
expect_eq "$w: per rank self 1, sm 2 (its node), tcp 3 (the other)" \
    "$(count_out '^rank [0-5]: 6 blocks of 160000 bytes, peers via self 1, sm 2, tcp 3, every block ok$')" 6
w="pingpong on 2 simulated nodes"
# shellcheck disable=SC2086
run_ok "$w" $SIM $TCP -n 2 "$EX/pingpong" 100 4096
expect_out "$w: through tcp" "^pingpong: rank 0 on [^,]+, rank 1 on [^,]+, via tcp$"

# the default selection: the other node through the first built of ucx (25), ofi (20), tcp (10)
XNODE=tcp
for t in ofi ucx; do
    if [ -f "$HERD_BUILDDIR/ompi-shim/mca/btl/$t/herd-btl-$t.la" ]; then XNODE=$t; fi
done
w="ring on 2 simulated nodes, default transports"
# shellcheck disable=SC2086
run_ok "$w" $SIM -n 4 "$EX/ring"
expect_eq "$w: every right neighbour is on the other node: $XNODE" \
    "$(count_out "^rank [0-9]: 4 steps, to rank [0-9] via $XNODE, from rank [0-9], sum 6 \\(expected 6\\) ok$")" 4

# sm alone cannot reach the other node: the example stops the job with herd's reason
w="ring on 2 simulated nodes, btl self,sm"
# shellcheck disable=SC2086
herdrun_bg $SIM -n 2 --mca btl self,sm "$EX/ring"
herdrun_wait "$HERDRUN_LIMIT"
expect_fail "$w: fails"
expect_err "$w: says the peer is unreachable and what to allow" \
    "herd_send failed: rank [01] cannot reach rank [01] with any of its transports: allow one"
check_clean "$w"

finish
