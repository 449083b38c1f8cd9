#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# btl ofi (libfabric) as a user sees it, through test/programs/herd_msg: a ring, a sparse halo,
# an all-to-all, a pingpong, 8 MB messages and a receive buffer too small, with --mca btl
# self,ofi for each libfabric provider that opens on this host (one at least must), on this
# host and on 2 simulated nodes, with the modex and with RM-assigned endpoints (the path is said
# at btl_base_verbose 5). libfabric is loaded only by a job that starts ofi. After every case
# nothing may be left running or in /dev/shm.
. "$(dirname "$0")/lib.sh"
HERDRUN_LIMIT=120
PROG=$HERD_BUILDDIR/test/programs/herd_msg
OVER=--oversubscribe
SIM="--mca ras simulator --mca ras_simulator_num_nodes 2 --map-by node"
RM="--mca dvm_fabric_inventory all --mca dvm_fabric_components all"

if [ ! -f "$HERD_BUILDDIR/ompi-shim/mca/btl/ofi/herd-btl-ofi.la" ]; then
    echo "SKIP: btl ofi is not built (configure found no libfabric)"
    finish
    exit 0
fi


# Which providers open here: a pingpong with each alone (verbose 1 says why one does not).
providers=
for prov in "tcp;ofi_rxm" sockets "udp;ofi_rxd" shm; do
    herdrun_bg -n 2 --mca btl self,ofi --mca btl_ofi_provider "$prov" --mca btl_base_verbose 1 \
        "$PROG" pingpong 10 8
    herdrun_wait "$HERDRUN_LIMIT"
    if [ "$rc" -eq 0 ] && grep -q '^rank 0: pingpong ok, 10 x 8 bytes via ofi$' "$OUT"; then
        providers="$providers|$prov"
    else
        echo "SKIP: provider $prov does not work here: $(grep -m1 'ofi' "$ERR")"
    fi
    check_clean "provider $prov probed"
done
expect_eq "at least one libfabric provider works here" "$([ -n "$providers" ] && echo yes)" yes

IFS_SAVE=$IFS
IFS='|'
set -- $providers
IFS=$IFS_SAVE
for prov in "$@"; do
    [ -n "$prov" ] || continue
    B="--mca btl self,ofi --mca btl_ofi_provider $prov"
    for np in 2 4 8; do
        w="$prov: ring, $np procs"
        run_ok "$w" $OVER -n $np $B --mca btl_base_verbose 5 "$PROG" ring 20 100
        expect_eq "$w: every rank received every message from its left neighbour via ofi" \
            "$(count_out "^rank [0-9]+: ring ok, 20 x 100 bytes, to [0-9]+ via ofi, from [0-9]+$")" \
            "$np"
        # the sender looked its right neighbour up; its left one was added from its messages
        expect_eq "$w: no process added more than 2 peers" \
            "$(count_err "rank [0-9]+ at finalize: [12] procs in the proc table; peers per btl: self 0, ofi [12];")" \
            "$np"
    done
    # 8 MB in fragments of an odd size: a fragment out of place cannot match the payload
    w="$prov: ring of 8 MB messages"
    run_ok "$w" $OVER -n 3 $B --mca btl_ofi_frag_size 50000 "$PROG" ring 2 8000000
    expect_eq "$w: all arrive whole" \
        "$(count_out "^rank [0-9]+: ring ok, 2 x 8000000 bytes, to [0-9]+ via ofi")" 3
    w="$prov: halo, 6 procs"
    run_ok "$w" $OVER -n 6 $B "$PROG" halo 50000
    expect_out "$w: rank 3 exchanges with 1, 2, 4 and 5" \
        "^rank 3: halo ok, 4 peers x 50000 bytes, via 1:ofi 2:ofi 4:ofi 5:ofi$"
    w="$prov: alltoall, 4 procs"
    run_ok "$w" $OVER -n 4 $B "$PROG" alltoall 20000
    expect_eq "$w: every rank hears from all 4 (itself through self)" \
        "$(count_out "^rank ([0-9]): alltoall ok, 4 peers x 20000 bytes, via .*:self")" 4
    w="$prov: pingpong"
    run_ok "$w" -n 2 $B "$PROG" pingpong 500 8
    expect_out "$w: rank 0" "^rank 0: pingpong ok, 500 x 8 bytes via ofi$"
    w="$prov: truncation"
    run_ok "$w" -n 2 $B "$PROG" trunc
    expect_out "$w: the receiver is told, with both sizes" \
        "^rank 1: trunc status message truncated, length 100, .*100 bytes, more than the 10-byte receive buffer"

    # 2 simulated nodes: sm on the node, ofi across, by the modex and at RM-assigned endpoints
    # (simulated nodes on one host are given the same ports: a process that finds its port
    # taken publishes another by the modex, and a hello to the taken port is answered by the
    # rank holding it, so the sender asks the modex)
    case $prov in shm) continue ;; esac
    w="$prov: alltoall on 2 simulated nodes, modex"
    run_ok "$w" $SIM -n 4 --mca btl self,sm,ofi --mca btl_ofi_provider "$prov" \
        --mca btl_base_verbose 5 "$PROG" alltoall 100000
    expect_out "$w: rank 0 uses sm to rank 2 and ofi to 1 and 3" \
        "^rank 0: alltoall ok, 4 peers x 100000 bytes, via 0:self 1:ofi 2:sm 3:ofi$"
    expect_err "$w: addresses come from the modex" "rank 0: ofi reaches rank 1 at .* \(modex\)"
    w="$prov: alltoall on 2 simulated nodes, RM-assigned endpoints"
    run_ok "$w" $SIM $RM -n 4 --mca btl self,sm,ofi --mca btl_ofi_provider "$prov" \
        --mca btl_base_verbose 5 "$PROG" alltoall 100000
    expect_eq "$w: every rank uses sm on its node and ofi across" \
        "$(count_out '^rank [0-3]: alltoall ok, 4 peers x 100000 bytes, via( [0-3]:(self|sm|ofi)){4}$')" 4
    case $prov in
    "tcp;ofi_rxm" | "udp;ofi_rxd") # fabric_ofi_assign's default providers
        expect_eq "$w: two ranks listen at their RM-assigned endpoints" \
            "$(count_err 'rank [0-3]: ofi \(provider .*\) listens at its RM-assigned endpoint')" 2
        expect_err "$w: a hello to a port another rank holds falls back to the modex" \
            "RM-assigned endpoint .* is another rank's: asking the modex"
        ;;
    *)
        expect_eq "$w: $prov is not assigned endpoints: every rank uses the modex" \
            "$(count_err 'published by the modex \(the job has no RM-assigned endpoint for it\)')" 4
        ;;
    esac
done

# This host, RM-assigned endpoints: each rank binds its own, peers need no modex (the receiver
# adds the sender from its hello).
for prov in "tcp;ofi_rxm" "udp;ofi_rxd"; do
    case "|$providers|" in *"|$prov|"*) ;; *) continue ;; esac
    w="$prov: RM-assigned endpoints on this host"
    run_ok "$w" -n 2 $RM --mca btl self,ofi --mca btl_ofi_provider "$prov" \
        --mca btl_base_verbose 5 "$PROG" pingpong 10
    expect_err "$w: rank 1 listens at its endpoint" \
        "rank 1: ofi \(provider $prov\) listens at its RM-assigned endpoint .*127\.0\.0\.1:[0-9]+"
    expect_err "$w: rank 0 says hello there" \
        "rank 0: ofi says hello to rank 1 at .*127\.0\.0\.1:[0-9]+ \(RM-assigned endpoint\)"
    expect_no_err "$w: nobody asks the modex" "\(modex\)|published by the modex"
    expect_out "$w: messages flow" "^rank 0: pingpong ok, 10 x 8 bytes via ofi$"
done

# libfabric is loaded by a job that starts ofi, and by none that leaves it out (LD_DEBUG for
# the processes only: herdrun itself links the fabric components in a static build)
herdrun -x LD_DEBUG=files -n 2 --mca btl self,sm "$PROG" pingpong 10
expect_rc "--mca btl self,sm under LD_DEBUG: exit 0" 0
expect_no_err "--mca btl self,sm: no process loads libfabric" "file=libfabric"
herdrun -x LD_DEBUG=files -n 2 --mca btl self,ofi "$PROG" pingpong 10
expect_rc "--mca btl self,ofi under LD_DEBUG: exit 0" 0
expect_err "--mca btl self,ofi: the transport DSO loads libfabric" \
    "file=libfabric.* needed by .*herd-btl-ofi.so"
check_clean "LD_DEBUG runs"

# The transport's library missing: ofi is left out with the reason, the job says what to do
herdrun -n 2 --mca btl self,ofi --mca btl_base_verbose 1 --mca btl_base_dso_path /nonexistent \
    "$PROG" pingpong 10
expect_fail "ofi's DSO not found: the job fails"
expect_err "ofi's DSO not found: the reason and the way out" \
    "herd-btl-ofi.so is in no folder of btl_base_dso_path \(/nonexistent\).*--mca btl \^ofi"
check_clean "ofi's DSO not found"

# A rank killed after its first message: the job fails, nobody hangs, nothing is left
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
    for (int i = 0; i < 100; ++i) {
        herd_send(1, 2, b, sizeof(b));
    }
    return herd_finalize();
}
EOF
if "$LIBTOOL" --mode=link --quiet ${CC:-cc} -I"$HERD_SRCDIR/ompi-shim/include" "$WORK/killed.c" \
    "$HERD_BUILDDIR/ompi-shim/libherd.la" -o "$WORK/killed" >"$ERR" 2>&1; then
    herdrun_bg -n 2 --mca btl self,ofi "$WORK/killed"
    herdrun_wait "$HERDRUN_LIMIT"
    expect_fail "ofi, a rank killed: the job fails"
    check_clean "ofi, a rank killed"
else
    fail "build the killed-rank program"
fi

finish
