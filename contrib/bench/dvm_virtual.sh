#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# DVM start-up on simulated nodes hosted many to a process (ras_simulator_nodes_per_process),
# and the launch message of a job of a million processes on them.
# Usage: contrib/bench/dvm_virtual.sh [PREFIX]
#   PREFIX: an installed herd (default ./install), or a build folder (e.g. _build).
#   SIZES="512 1024 2048" nodes to try, PER=512 nodes per herdd process, TOPO the topology.
# Prints per size: herdd processes, time to ready (herd-dvm's own figure), up+down wall time,
# the tree's depth and rounds, messages each daemon sends per phase, the bytes each daemon
# receives in the inventory allgather, and the peak memory of the biggest process; then the
# launch message of a 1,024- and a 1,048,576-process job (--do-not-launch: mapped by herdrun).
set -eu
PREFIX=${1:-$(cd "$(dirname "$0")/../.." && pwd)/install}
SIZES=${SIZES:-512 1024 2048}
PER=${PER:-512}
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

printf '%-7s %-6s %-10s %-10s %-6s %-12s %-22s %-16s %s\n' nodes procs "ready (s)" "wall (s)" \
    depth "rounds b/ag" "msgs/daemon b/ag/bar" "allgather B/dmn" "max RSS (MB)"
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
    depth=$(echo "$tree" | sed -n 's/.*depth \([0-9]*\),.*/\1/p')
    radix=$(echo "$tree" | sed -n 's/.*radix \([0-9]*\),.*/\1/p')
    brounds=$(echo "$tree" | sed -n 's/.*broadcast rounds \([0-9]*\),.*/\1/p')
    arounds=$(echo "$tree" | sed -n 's/.*allgather rounds \([0-9]*\) .*/\1/p')
    bytes=$(sed -n 's/^DVM inventory: .* \([0-9]*\) bytes to every daemon.*/\1/p' "$WORK/out")
    # tree grpcomm: a broadcast arrives once and goes to at most radix children; an allgather
    # or a barrier sends one message up and forwards the release to at most radix children
    printf '%-7s %-6s %-10s %-10s %-6s %-12s %-22s %-16s %s\n' "$n" "$procs" "$ready" \
        "$(echo "$t0 $t1" | awk '{printf "%.2f", ($2-$1)/1e9}')" "$depth" "$brounds/$arounds" \
        "<=$radix / <=$((radix + 1)) / <=$((radix + 1))" "${bytes:-?}" \
        "$(awk '{printf "%.0f", $1/1024}' "$WORK/rss")"
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
