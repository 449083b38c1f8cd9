#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The ucx btl (UCX's UCP) as a user sees it through test/programs/herd_msg: a ring (2, 4 and 8
# processes), a sparse halo, an all-to-all, a pingpong, 8 MB messages and truncation under
# --mca btl self,ucx, with btl_ucx_tls set to tcp, to UCX's shared-memory transports and left to
# UCX, on this node and on 2 simulated nodes; herd_peer_transport must say "ucx" and verbose 10
# must show the UCX transport asked for. The transport lives in its own DSO: its undefined
# symbols are UCX's and libc's only, a job that leaves ucx out never maps libucp and one that
# selects it does. A peer that exits makes sends to it fail, and the sender's finalize ends.
# After every case nothing may be left running, in /dev/shm (herd's and UCX's files) or as a
# System V segment of UCX's.
. "$(dirname "$0")/lib.sh"
HERDRUN_LIMIT=120
PROG=$HERD_BUILDDIR/test/programs/herd_msg
OVER=--oversubscribe
DSO=$HERD_BUILDDIR/ompi-shim/mca/btl/ucx/.libs/herd-btl-ucx.so

if [ ! -f "$DSO" ]; then
    echo "SKIP: this build has no ucx btl (UCX was not found by configure)"
    exit 77
fi

# UCX's own shared memory: posix files in /dev/shm (named ucx_*), System V segments of ours.
# Other tests run beside this one, some with Open MPI programs that use UCX too: a file another
# process has mapped is not ours (shm_left), nor is a System V segment still attached somewhere;
# one left unattached is a leak once it has stayed so for 3 s (a new one is briefly unattached).
ucx_shm() { ls /dev/shm 2>/dev/null | grep -i '^ucx' | sort; }
sysv_ids() { ipcs -m 2>/dev/null | awk -v u="$(id -un)" '$3 == u { print $2 }' | sort; }
sysv_unattached() {
    ipcs -m 2>/dev/null | awk -v u="$(id -un)" '$3 == u && $6 == 0 { print $2 }' | sort |
        comm -13 "$SYSV_START" -
}
UCX_SHM_START=$WORK/ucx-shm.start
SYSV_START=$WORK/sysv.start
ucx_shm >"$UCX_SHM_START"
sysv_ids >"$SYSV_START"
check_ucx_clean() {
    left=$(shm_left "$UCX_SHM_START" ucx_shm)
    if [ -n "$left" ]; then fail "$1: UCX left nothing in /dev/shm: $left"; else ok "$1: UCX left nothing in /dev/shm"; fi
    left=$(sysv_unattached)
    n=0
    while [ -n "$left" ] && [ $n -lt 30 ]; do
        sleep 0.1
        n=$((n + 1))
        left=$(sysv_unattached)
    done
    if [ -n "$left" ]; then fail "$1: UCX left no System V segment: $left"; else ok "$1: UCX left no System V segment"; fi
}

run_ok() {
    what=$1
    shift
    herdrun_bg "$@"
    herdrun_wait "$HERDRUN_LIMIT"
    expect_rc "$what: exit 0" 0
    check_clean "$what"
    check_ucx_clean "$what"
}

# The DSO needs nothing of libherd's (it gets it through the services table)
undef=$(nm -D --undefined-only "$DSO" | awk '{ print $NF }' | grep -E '^(opal_|orte_|ompi_|herd_)' || true)
expect_eq "herd-btl-ucx.so references no libherd symbol" "$undef" ""
expect_eq "herd-btl-ucx.so exports one symbol, its entry" \
    "$(nm -D --defined-only "$DSO" | awk '$2 == "T" { print $3 }')" "herd_btl_ucx_transport"

# Each UCX transport choice on this node: "" is UCX's own (shared memory here), then tcp, then
# the shared-memory transports by name. What UCX uses is said per peer at verbose 10.
for tls in default tcp posix,sysv,cma; do
    if [ $tls = default ]; then TLS=""; else TLS="--mca btl_ucx_tls $tls"; fi
    case $tls in
    tcp) lane='tcp/' ;;
    *) lane='(posix|sysv)/memory' ;;
    esac
    w="pingpong, btl_ucx_tls $tls"
    run_ok "$w" -n 2 --mca btl self,ucx $TLS --mca btl_base_verbose 10 "$PROG" pingpong 500 8
    expect_out "$w: rank 0 pingpongs via ucx" "^rank 0: pingpong ok, 500 x 8 bytes via ucx$"
    expect_err "$w: UCX carries it over $lane" "rank 0: ucx to rank 1: lane\[0\]: .*$lane"
    expect_err "$w: the worker address goes by the modex" \
        "rank 1: ucx .* started .*published by the modex"
    expect_err "$w: the DSO is loaded" "rank 0: the ucx transport is loaded from .*herd-btl-ucx.so"
    for np in 2 4 8; do
        w="ring, $np procs, btl_ucx_tls $tls"
        run_ok "$w" $OVER -n $np --mca btl self,ucx $TLS --mca btl_base_verbose 5 \
            "$PROG" ring 20 100
        expect_eq "$w: every rank received every message from its left neighbour" \
            "$(count_out "^rank [0-9]+: ring ok, 20 x 100 bytes, to [0-9]+ via ucx, from [0-9]+$")" \
            "$np"
        # a ring process sends to one peer and hears from one: at most 2 procs whatever N is
        expect_eq "$w: no process added more than 2 peers" \
            "$(count_err "rank [0-9]+ at finalize: [12] procs in the proc table; peers per btl: self 0, ucx [12];")" \
            "$np"
    done
    w="ring of 8 MB messages, btl_ucx_tls $tls"
    run_ok "$w" $OVER -n 3 --mca btl self,ucx $TLS "$PROG" ring 2 8000000
    expect_eq "$w: all arrive whole" \
        "$(count_out "^rank [0-9]+: ring ok, 2 x 8000000 bytes, to [0-9]+ via ucx")" 3
    w="halo, 6 procs, btl_ucx_tls $tls"
    run_ok "$w" $OVER -n 6 --mca btl self,ucx $TLS "$PROG" halo 50000
    expect_out "$w: rank 3 exchanges with 1, 2, 4 and 5" \
        "^rank 3: halo ok, 4 peers x 50000 bytes, via 1:ucx 2:ucx 4:ucx 5:ucx$"
    w="alltoall, 4 procs, btl_ucx_tls $tls"
    run_ok "$w" $OVER -n 4 --mca btl self,ucx $TLS "$PROG" alltoall 20000
    expect_eq "$w: every rank hears from all 4 (itself through self)" \
        "$(count_out "^rank [0-9]: alltoall ok, 4 peers x 20000 bytes, via( [0-9]:(self|ucx)){4}$")" 4
    w="truncation, btl_ucx_tls $tls"
    run_ok "$w" -n 2 --mca btl self,ucx $TLS "$PROG" trunc
    expect_out "$w: the receiver is told, with both sizes" \
        "^rank 1: trunc status message truncated, length 100, .*100 bytes, more than the 10-byte receive buffer"
done

# 2 simulated nodes, processes alternating. The default selection: sm on the node, ucx (above
# tcp) to the other node.
SIM="--mca ras simulator --mca ras_simulator_num_nodes 2 --map-by node"
w="alltoall on 2 simulated nodes, default transports"
run_ok "$w" $SIM -n 4 "$PROG" alltoall 100000
expect_out "$w: rank 0 uses sm to rank 2 and ucx to 1 and 3" \
    "^rank 0: alltoall ok, 4 peers x 100000 bytes, via 0:self 1:ucx 2:sm 3:ucx$"
# ucx only, over tcp: every peer, the one on the same node too
w="alltoall on 2 simulated nodes, btl self,ucx over tcp"
run_ok "$w" $SIM -n 4 --mca btl self,ucx --mca btl_ucx_tls tcp --mca btl_base_verbose 10 \
    "$PROG" alltoall 100000
expect_out "$w: rank 3 uses ucx to all" \
    "^rank 3: alltoall ok, 4 peers x 100000 bytes, via 0:ucx 1:ucx 2:ucx 3:self$"
expect_err "$w: over tcp" "rank 0: ucx to rank 1: lane\[0\]: .*tcp/"
w="ring of 8 MB messages on 2 simulated nodes"
run_ok "$w" $SIM $OVER -n 4 --mca btl self,ucx "$PROG" ring 2 8000000
expect_eq "$w: all arrive whole" \
    "$(count_out "^rank [0-9]+: ring ok, 2 x 8000000 bytes, to [0-9]+ via ucx")" 4
# Shared memory between simulated nodes (they share this host): only without UCX's peer error
# handling, which UCX 1.13's shared-memory transports lack (auto asks for it across nodes)
w="halo on 2 simulated nodes over shared memory"
run_ok "$w" $SIM $OVER -n 6 --mca btl self,ucx --mca btl_ucx_tls posix,sysv,cma \
    --mca btl_ucx_error_handling none --mca btl_base_verbose 10 "$PROG" halo 50000
expect_out "$w: rank 2 exchanges with 0, 1, 3 and 4" \
    "^rank 2: halo ok, 4 peers x 50000 bytes, via 0:ucx 1:ucx 3:ucx 4:ucx$"
expect_err "$w: over shared memory" "rank 0: ucx to rank 1: lane\[0\]: .*(posix|sysv)/memory"
herdrun_bg $SIM -n 2 --mca btl self,ucx --mca btl_ucx_tls posix --mca btl_base_verbose 1 \
    "$PROG" pingpong 1
herdrun_wait "$HERDRUN_LIMIT"
expect_fail "shared memory only, auto error handling, across simulated nodes: fails"
expect_err "shared memory only, across nodes: says no UCX transport reaches the peer" \
    "ucx cannot make an endpoint to rank [01] .*no UCX transport \(btl_ucx_tls \"posix\"\) reaches it"
check_clean "shared memory only, across nodes"

# libucp is loaded only by a process that starts ucx
cat >"$WORK/maps.c" <<'EOF'
#include <herd.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
    char line[4096], b[8] = "x";
    int ucp = 0;
    herd_init();
    herd_send((herd_rank() + 1) % herd_size(), 1, b, 1);
    herd_recv(HERD_ANY_SOURCE, 1, b, sizeof(b), 0, 0, 0);
    FILE *maps = fopen("/proc/self/maps", "r");
    while (NULL != maps && NULL != fgets(line, sizeof(line), maps)) {
        ucp = ucp || NULL != strstr(line, "libucp");
    }
    if (NULL != maps) {
        fclose(maps);
    }
    printf("rank %u: libucp %s\n", herd_rank(), ucp ? "mapped" : "not mapped");
    return herd_finalize();
}
EOF
cat >"$WORK/gone.c" <<'EOF'
#include <herd.h>
#include <stdio.h>
#include <stdlib.h>
static char b[100000];
int main(int argc, char **argv)
{
    int count = argc > 1 ? atoi(argv[1]) : 1000;
    size_t big = argc > 2 ? (size_t) atoi(argv[2]) : 8;
    herd_init();
    if (1 == herd_rank()) {
        herd_recv(0, 1, b, sizeof(b), 0, 0, 0);
        return herd_finalize(); /* and exits while rank 0 goes on sending */
    }
    int rc = herd_send(1, 1, b, 8), i;
    for (i = 0; i < count && HERD_SUCCESS == rc; ++i) {
        rc = herd_send(1, 2, b, (i % 2) ? big : 8);
        herd_progress();
    }
    printf("rank 0: %d sends to a peer gone: %s\n", i, HERD_SUCCESS == rc ? "all accepted" : herd_strerror(rc));
    return herd_finalize();
}
EOF
for p in maps gone; do
    if ! "$LIBTOOL" --mode=link --quiet ${CC:-cc} -I"$HERD_SRCDIR/ompi-shim/include" "$WORK/$p.c" \
        "$HERD_BUILDDIR/ompi-shim/libherd.la" -o "$WORK/$p" >"$ERR" 2>&1; then
        fail "build the $p program"
    fi
done
if [ -x "$WORK/maps" ]; then
    run_ok "btl self,sm" -n 2 --mca btl self,sm "$WORK/maps"
    expect_eq "btl self,sm: no process maps libucp" "$(count_out '^rank [01]: libucp not mapped$')" 2
    run_ok "btl self,ucx" -n 2 --mca btl self,ucx "$WORK/maps"
    expect_eq "btl self,ucx: both processes map libucp" "$(count_out '^rank [01]: libucp mapped$')" 2
fi

# A peer that exits: its endpoint reports it (tcp, peer error handling), later sends fail, and
# the sender's finalize ends
if [ -x "$WORK/gone" ]; then
    w="a peer gone, over tcp"
    run_ok "$w" -n 2 --mca btl self,ucx --mca btl_ucx_tls tcp --mca btl_ucx_error_handling peer \
        --mca btl_base_verbose 1 "$WORK/gone" 200000 100000
    expect_out "$w: sends to it fail" "^rank 0: [0-9]+ sends to a peer gone: peer unreachable$"
    expect_err "$w: said at verbose 1" "rank 0: ucx (lost|could not deliver a message to) rank 1"
    # over shared memory UCX cannot tell: the sender's messages wait, and finalize gives them up
    # after btl_ucx_close_timeout
    w="a peer gone, over shared memory"
    run_ok "$w" -n 2 --mca btl self,ucx --mca btl_ucx_tls posix --mca btl_ucx_close_timeout 1 \
        --mca btl_base_verbose 1 "$WORK/gone" 20000 8
    expect_out "$w: the sender ends" "^rank 0: [0-9]+ sends to a peer gone"
    expect_err "$w: finalize gives up on the rest" \
        "rank 0: ucx gives up on [0-9]+ messages that no peer took for 1 s"
fi

finish
