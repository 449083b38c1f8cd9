#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# DVM start + stop time on simulated nodes (one herdd per node, all on this host), and the
# tree's broadcast rounds. Usage: contrib/bench/dvm.sh [PREFIX] [REPEATS]
#   PREFIX: an installed herd (default ./install, as contrib/setup-debian.sh makes it).
# Prints one line per size: the best wall time of REPEATS runs of
#   herd-dvm --mca ras_simulator_num_nodes N --exit-when-ready
# (start, inventory allgather, ready barrier, shutdown, all daemons reaped), the time to ready
# that herd-dvm itself reports, and the rounds of the tree.
set -eu
PREFIX=${1:-$(cd "$(dirname "$0")/../.." && pwd)/install}
REPEATS=${2:-5}
DVM=$PREFIX/bin/herd-dvm
[ -x "$DVM" ] || { echo "dvm.sh: $DVM not found; build and install first (contrib/setup-debian.sh)" >&2; exit 1; }
now() { date +%s%N; }
printf '%-7s %-14s %-14s %-7s %-6s %s\n' nodes "up+down (s)" "to ready (s)" depth rounds "per node (ms)"
for n in 1 16 64 256; do
    best=""
    ready=""
    for r in $(seq 1 "$REPEATS"); do
        t0=$(now)
        out=$("$DVM" --mca ras_simulator_num_nodes "$n" --display-allocation --exit-when-ready 2>&1) || {
            echo "dvm.sh: herd-dvm failed at $n nodes:" >&2; echo "$out" >&2; exit 1; }
        t1=$(now)
        ns=$((t1 - t0))
        if [ -z "$best" ] || [ "$ns" -lt "$best" ]; then
            best=$ns
            ready=$(echo "$out" | sed -n 's/^DVM ready: .*, \([0-9.]*\) s$/\1/p')
            tree=$(echo "$out" | grep '^DVM tree:')
        fi
    done
    depth=$(echo "$tree" | sed -n 's/.*depth \([0-9]*\),.*/\1/p')
    rounds=$(echo "$tree" | sed -n 's/.*broadcast rounds \([0-9]*\),.*/\1/p')
    printf '%-7s %-14s %-14s %-7s %-6s %s\n' "$n" "$(echo "$best" | awk '{printf "%.3f", $1/1e9}')" \
        "$ready" "$depth" "$rounds" "$(echo "$best $n" | awk '{printf "%.2f", $1/1e6/$2}')"
done
