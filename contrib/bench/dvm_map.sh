#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A job mapped by every node daemon of a DVM of simulated nodes hosted many to a process, and
# launched nowhere (herdrun --do-not-launch --mca herdrun_map_everywhere 1): each node maps the
# whole job as its session daemon would and reports its share, herdrun checks every report.
# Usage: contrib/bench/dvm_map.sh [PREFIX]
#   PREFIX: an installed herd (default ./install), or a build folder (e.g. _build).
#   NODES (default 512), PER nodes per herdd process (default 128), NP the big job's processes
#   (default 65536), SMALL the small job's (default 1024), TOPO the nodes' topology.
#   The issue's size: NODES=16384 PER=1024 NP=1048576 (about 10 minutes on 2 cores).
# Prints per job: the DVM's time to ready, the launch message's bytes (the same for SMALL and NP
# processes), the nodes that reported, the map CPU per node (min/median/max: the mapper, and the
# whole virtual session), what the root's endpoint received in the map phase (one report per
# node), the time from the broadcast to the last report, herdrun's wall time and peak memory.
set -eu
PREFIX=${1:-$(cd "$(dirname "$0")/../.." && pwd)/install}
NODES=${NODES:-512}
PER=${PER:-128}
NP=${NP:-65536}
SMALL=${SMALL:-1024}
TOPO=${TOPO:-pack:2 core:16 pu:2}
if [ -x "$PREFIX/orte/tools/herdrun/herdrun" ]; then
    # a build folder: run uninstalled
    HERD_BUILDDIR=$(cd "$PREFIX" && pwd)
    HERD_SRCDIR=$(cd "$(dirname "$0")/../.." && pwd)
    export HERD_BUILDDIR HERD_SRCDIR
    . "$HERD_BUILDDIR/test/uninstalled-env.sh"
    RUN=$HERD_BUILDDIR/orte/tools/herdrun/herdrun
else
    RUN=$PREFIX/bin/herdrun
fi
[ -x "$RUN" ] || { echo "dvm_map.sh: $RUN not found; build and install first" >&2; exit 1; }
now() { date +%s%N; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/herd-bench-XXXXXX")
trap 'rm -rf "$WORK"' EXIT

printf '%-6s %-8s %-9s %-10s %-9s %-20s %-20s %-18s %-10s %-8s %s\n' nodes procs "ready (s)" \
    "launch (B)" reported "map ms min/med/max" "session ms" "root in: msgs/KB" \
    "last (s)" "wall (s)" "RSS (MB)"
for np in $SMALL $NP; do
    t0=$(now)
    /usr/bin/time -f '%M' -o "$WORK/rss" "$RUN" --mca ras_simulator_num_nodes "$NODES" \
        --mca ras_simulator_nodes_per_process "$PER" --mca ras_simulator_topology "$TOPO" \
        -n "$np" --oversubscribe --do-not-launch --mca herdrun_map_everywhere 1 -v /bin/true \
        >"$WORK/out" 2>&1 || {
        echo "dvm_map.sh: herdrun failed for $np processes on $NODES nodes:" >&2
        tail -20 "$WORK/out" >&2
        exit 1
    }
    t1=$(now)
    out=$WORK/out
    launch=$(sed -n 's/^launch message: \([0-9]*\) bytes.*/\1/p' "$out")
    reported=$(sed -n 's/.* mapped on every node: \([0-9]*\) of \([0-9]*\) nodes reported.*/\1\/\2/p' "$out")
    times=$(sed -n 's/.*the mapper \([0-9.\/]*\) ms (min\/median\/max), the virtual session in all \([0-9.\/]*\) ms.*/\1 \2/p' "$out")
    last=$(sed -n 's/^herdrun: last report \([0-9.]*\) s after.*/\1/p' "$out")
    ready=$(sed -n 's/.* was ready \([0-9.]*\) s after it started.*/\1/p' "$out")
    root=$(sed -n 's/.* then \([0-9]*\) messages of reports arrived, one per child (\([0-9]*\) bytes in.*/\1 \2/p' "$out" |
        awk '{printf "%d/%.1f", $1, $2 / 1024}')
    printf '%-6s %-8s %-9s %-10s %-9s %-20s %-20s %-18s %-10s %-8s %s\n' "$NODES" "$np" \
        "$ready" "$launch" "$reported" "${times% *}" "${times#* }" "$root" "$last" \
        "$(echo "$t0 $t1" | awk '{printf "%.2f", ($2-$1)/1e9}')" \
        "$(awk '{printf "%.0f", $1/1024}' "$WORK/rss")"
done
