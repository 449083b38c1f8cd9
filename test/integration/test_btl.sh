#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# herd_send/herd_recv as a user sees them (test/programs/herd_msg): a ring, a sparse halo, an
# all-to-all, a pingpong, messages far longer than an sm cell or a socket buffer, and a receive
# buffer too small, on this host with 2 to 8 processes, with each transport forced by
# --mca btl (self,sm and self,tcp) and with the default choice. A ring process adds only its
# neighbours (the proc table and each btl's peers, printed at finalize with btl_base_verbose 5);
# tcp's path (RM-assigned endpoint or modex) is said at verbose 5. A process killed after its
# first message leaves no sm segment. After every case nothing may be left running or in
# /dev/shm.
. "$(dirname "$0")/lib.sh"
HERDRUN_LIMIT=120
PROG=$HERD_BUILDDIR/test/programs/herd_msg
OVER=--oversubscribe


for btl in sm tcp; do
    for np in 2 3 8; do
        w="ring, $np procs, --mca btl self,$btl"
        run_ok "$w" $OVER -n $np --mca btl self,$btl --mca btl_base_verbose 5 "$PROG" ring 20 100
        expect_eq "$w: every rank received every message from its left neighbour" \
            "$(count_out "^rank [0-9]+: ring ok, 20 x 100 bytes, to [0-9]+ via $btl, from [0-9]+$")" \
            "$np"
        # a ring process sends to one peer and hears from one: at most 2 procs whatever N is
        expect_eq "$w: no process added more than 2 peers" \
            "$(count_err "rank [0-9]+ at finalize: [12] procs in the proc table; peers per btl: self 0, $btl [12];")" \
            "$np"
    done
    w="ring of 8 MB messages, --mca btl self,$btl"
    run_ok "$w" $OVER -n 3 --mca btl self,$btl "$PROG" ring 2 8000000
    expect_eq "$w: all arrive whole" \
        "$(count_out "^rank [0-9]+: ring ok, 2 x 8000000 bytes, to [0-9]+ via $btl")" 3
    w="halo, 6 procs, --mca btl self,$btl"
    run_ok "$w" $OVER -n 6 --mca btl self,$btl "$PROG" halo 50000
    expect_out "$w: rank 0 exchanges with 1 and 2" "^rank 0: halo ok, 2 peers x 50000 bytes, via 1:$btl 2:$btl$"
    expect_out "$w: rank 3 exchanges with 1, 2, 4 and 5" \
        "^rank 3: halo ok, 4 peers x 50000 bytes, via 1:$btl 2:$btl 4:$btl 5:$btl$"
    w="alltoall, 4 procs, --mca btl self,$btl"
    run_ok "$w" $OVER -n 4 --mca btl self,$btl "$PROG" alltoall 20000
    expect_eq "$w: every rank hears from all 4 (itself through self)" \
        "$(count_out "^rank ([0-9]): alltoall ok, 4 peers x 20000 bytes, via .*:self")" 4
    w="pingpong, --mca btl self,$btl"
    run_ok "$w" -n 2 --mca btl self,$btl "$PROG" pingpong 500 8
    expect_out "$w: rank 0" "^rank 0: pingpong ok, 500 x 8 bytes via $btl$"
    w="truncation, --mca btl self,$btl"
    run_ok "$w" -n 2 --mca btl self,$btl "$PROG" trunc
    expect_out "$w: the receiver is told, with both sizes" \
        "^rank 1: trunc status message truncated, length 100, .*100 bytes, more than the 10-byte receive buffer"
done

# Default: self for itself, sm on this node (tcp is never chosen here)
run_ok "alltoall, default transports" $OVER -n 3 "$PROG" alltoall 1000
expect_eq "alltoall, default transports: sm to the others, self to itself" \
    "$(count_out '^rank [0-9]: alltoall ok, 3 peers x 1000 bytes, via( [0-9]:(self|sm)){3}$')" 3

# 2 simulated nodes, processes alternating: each peer gets its own transport (sm on the same
# node, tcp to the other), in one job. tcp is named: by default a transport above it (ucx or
# ofi, when built) takes the other node (test_btl_ucx.sh, test_btl_ofi.sh)
w="alltoall on 2 simulated nodes"
run_ok "$w" --mca ras simulator --mca ras_simulator_num_nodes 2 --map-by node -n 4 \
    --mca btl self,sm,tcp "$PROG" alltoall 100000
expect_out "$w: rank 0 uses sm to rank 2 and tcp to 1 and 3" \
    "^rank 0: alltoall ok, 4 peers x 100000 bytes, via 0:self 1:tcp 2:sm 3:tcp$"
expect_out "$w: rank 3 uses sm to rank 1 and tcp to 0 and 2" \
    "^rank 3: alltoall ok, 4 peers x 100000 bytes, via 0:tcp 1:sm 2:tcp 3:self$"

# tcp's address: the RM-assigned endpoint on this host (a job on this host alone gets one when
# the fabric inventory is asked for), or the modex when told not to use it
run_ok "tcp at the RM-assigned endpoints" -n 2 --mca dvm_fabric_inventory all --mca btl self,tcp \
    --mca btl_base_verbose 5 "$PROG" pingpong 10
expect_err "tcp at the RM-assigned endpoints: rank 1 listens at its port" \
    "rank 1: tcp listens at its RM-assigned endpoint 127\.0\.0\.1:[0-9]+"
expect_err "tcp at the RM-assigned endpoints: rank 0 connects there" \
    "rank 0: tcp connects to rank 1 at 127\.0\.0\.1:[0-9]+ \(RM-assigned endpoint\)"
run_ok "tcp by the modex" -n 2 --mca btl self,tcp --mca btl_tcp_use_rm_endpoint 0 \
    --mca btl_base_verbose 5 "$PROG" pingpong 10
expect_err "tcp by the modex: published" "rank 1: tcp listens at .*, published by the modex"
expect_err "tcp by the modex: found there" "rank 0: tcp connects to rank 1 at .* \(modex\)"
expect_out "tcp by the modex: messages flow" "^rank 0: pingpong ok, 10 x 8 bytes via tcp$"

# A transport that cannot reach the peer: an error that says so, and nothing left
herdrun_bg -n 2 --mca btl self "$PROG" ring 1 10
herdrun_wait "$HERDRUN_LIMIT"
expect_fail "btl self only, 2 procs: fails"
expect_err "btl self only, 2 procs: says the peer is unreachable and what to allow" \
    "cannot reach rank [01] with any of its transports: allow one that can \(HERD_MCA_btl"
check_clean "btl self only, 2 procs"

# A process killed after its first message: its session daemon removes its sm ring
cat >"$WORK/killed.c" <<'EOF'
#include <herd.h>
#include <signal.h>
int main(void)
{
    char b[8] = "x";
    herd_init();
    herd_send((herd_rank() + 1) % herd_size(), 1, b, 1);
    herd_recv(HERD_ANY_SOURCE, 1, b, sizeof(b), 0, 0, 0);
    if (1 == herd_rank()) {
        raise(SIGKILL);
    }
    return herd_finalize();
}
EOF
if "$LIBTOOL" --mode=link --quiet ${CC:-cc} -I"$HERD_SRCDIR/ompi-shim/include" "$WORK/killed.c" \
    "$HERD_BUILDDIR/ompi-shim/libherd.la" -o "$WORK/killed" >"$ERR" 2>&1; then
    herdrun_bg -n 2 --mca btl self,sm "$WORK/killed"
    herdrun_wait "$HERDRUN_LIMIT"
    expect_fail "sm, a rank killed: the job fails"
    check_clean "sm, a rank killed"
else
    fail "build the killed-rank program"
fi

finish
