#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# DVM start-up on simulated nodes hosted many to a process (ras_simulator_nodes_per_process),
# and the launch message of a job of a million processes on them.
# Usage: contrib/bench/dvm_virtual.sh [PREFIX]
#   PREFIX: an installed herd (default ./install), or a build folder (e.g. _build).
#   SIZES="1024 4096 16384" nodes to try, PER=1024 nodes per herdd process, TOPO the topology.
# Prints per size: herdd processes, time to ready (herd-dvm's own figure), up+down wall time,
# when the phases ended (every process started, the inventory allgather complete at the root),
# the tree's rounds (broadcast/allgather), the bytes the allgather gives every daemon, what the
# root's endpoint carried (MB in/out, messages arrived per phase: it is the busiest daemon),
# and the peak memory of the biggest process; then the launch message of a 1,024- and a
# 1,048,576-process job (--do-not-launch: mapped by herdrun). With the tree grpcomm every other
# daemon sends one message up and at most radix copies down per collective.
set -eu
PREFIX=${1:-$(cd "$(dirname "$0")/../.." && pwd)/install}
SIZES=${SIZES:-1024 4096 16384}
PER=${PER:-1024}
TOPO=${TOPO:-pack:2 core:16 pu:2}
if [ -x "$PREFIX/orte/tools/herd-dvm/herd-dvm" ]; then
    # a build folder: run uninstalled
    HERD_BUILDDIR=$(cd "$PREFIX" && pwd)
    HERD_SRCDIR=$(cd "$(dirname "$0")/../.." && pwd)
    export HERD_BUILDDIR HERD_SRCDIR
    . "$HERD_BUILDDIR/test/uninstalled-env.sh"
    DVM=$HERD_BUILDDIR/orte/tools/herd-dvm/herd-dvm
    RUN=$HERD_BUILDDIR/orte/tools/herdrun/herdrun
else
    DVM=$PREFIX/bin/herd-dvm
    RUN=$PREFIX/bin/herdrun
fi
[ -x "$DVM" ] || { echo "dvm_virtual.sh: $DVM not found; build and install first" >&2; exit 1; }
now() { date +%s%N; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/herd-bench-XXXXXX")
trap 'rm -rf "$WORK"' EXIT

printf '%-6s %-5s %-9s %-8s %-22s %-11s %-14s %-15s %-17s %s\n' nodes procs "ready (s)" \
    "wall (s)" "phases: start/inv (s)" "rounds b/ag" "allgather B/dmn" "root in/out (MB)" \
    "root msgs inv/rdy" "max RSS (MB)"
for n in $SIZES; do
    procs=$(((n + PER - 1) / PER))
    t0=$(now)
    /usr/bin/time -f '%M' -o "$WORK/rss" "$DVM" --mca ras_simulator_num_nodes "$n" \
        --mca ras_simulator_nodes_per_process "$PER" --mca ras_simulator_topology "$TOPO" \
        --display-allocation --exit-when-ready >"$WORK/out" 2>&1 || {
        echo "dvm_virtual.sh: herd-dvm failed at $n nodes:" >&2; tail -20 "$WORK/out" >&2; exit 1; }
    t1=$(now)
    ready=$(sed -n 's/^DVM ready: .*, \([0-9.]*\) s$/\1/p' "$WORK/out")
    tree=$(grep '^DVM tree:' "$WORK/out")
    brounds=$(echo "$tree" | sed -n 's/.*broadcast rounds \([0-9]*\),.*/\1/p')
    arounds=$(echo "$tree" | sed -n 's/.*allgather rounds \([0-9]*\) .*/\1/p')
    bytes=$(sed -n 's/^DVM inventory: .* \([0-9]*\) bytes to every daemon$/\1/p' "$WORK/out")
    phases=$(sed -n 's/^DVM phases: daemons started \([0-9.]*\) s, inventories gathered \([0-9.]*\) s.*/\1\/\2/p' "$WORK/out")
    traffic=$(grep '^DVM root traffic:' "$WORK/out" | tr -dc '0-9 ' | tr -s ' ')
    # "a b c d e f": messages, bytes in, bytes out to the inventory; the same to ready
    root_io=$(echo "$traffic" | awk '{printf "%.1f/%.1f", ($2+$5)/1e6, ($3+$6)/1e6}')
    root_msgs=$(echo "$traffic" | awk '{printf "%d/%d", $1, $4}')
    printf '%-6s %-5s %-9s %-8s %-22s %-11s %-14s %-15s %-17s %s\n' "$n" "$procs" "$ready" \
        "$(echo "$t0 $t1" | awk '{printf "%.2f", ($2-$1)/1e9}')" "$phases" "$brounds/$arounds" \
        "${bytes:-?}" "$root_io" "$root_msgs" "$(awk '{printf "%.0f", $1/1024}' "$WORK/rss")"
done

# the launch message is the app context and the nodes, not a process map: the same size for a
# thousand processes and for a million
n=$(echo "$SIZES" | awk '{print $NF}')
"$DVM" --mca ras_simulator_num_nodes "$n" --mca ras_simulator_nodes_per_process "$PER" \
    --mca ras_simulator_topology "$TOPO" --daemonize --report-uri "$WORK/uri" >/dev/null
for np in 1024 1048576; do
    t0=$(now)
    line=$("$RUN" --dvm-uri "$WORK/uri" -n "$np" --oversubscribe --do-not-launch -v /bin/true |
        grep '^launch message:')
    t1=$(now)
    echo "$np processes on $n nodes: $line; mapped by herdrun in $(echo "$t0 $t1" |
        awk '{printf "%.2f", ($2-$1)/1e9}') s"
done
"$DVM" --shutdown --dvm-uri "$WORK/uri" >/dev/null
