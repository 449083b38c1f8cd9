#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# DVM start + stop time on simulated nodes (one herdd per node, all on this host), and the
# tree's broadcast rounds. Usage: contrib/bench/dvm.sh [PREFIX] [REPEATS]
#   PREFIX: an installed herd (default ./install, as contrib/setup-debian.sh makes it).
# Prints one line per size (1 to 1,024 nodes of "pack:2 core:16 pu:2"): the best wall time of
# REPEATS runs of
#   herd-dvm --mca ras_simulator_num_nodes N --mca ras_simulator_topology "pack:2 core:16 pu:2"
#            --exit-when-ready
# (start, inventory allgather, ready barrier, shutdown, all daemons reaped), the time to ready
# that herd-dvm itself reports (of the same run), the rounds of the tree, the ready time per
# node and that per-node cost against 256 nodes' (the start-up should be linear: 1.00), and the
# least CPU (user + system of herd-dvm and all its daemons, GNU time) per node and against 256
# nodes': on this shared 2-core machine the start-up is CPU-bound, and its CPU changes less
# with other work than its wall time. The sizes take turns, one run each per round, so that
# other work on the machine falls on all of them alike; the load average is printed before and
# after.
set -eu
PREFIX=${1:-$(cd "$(dirname "$0")/../.." && pwd)/install}
REPEATS=${2:-5}
DVM=$PREFIX/bin/herd-dvm
[ -x "$DVM" ] || { echo "dvm.sh: $DVM not found; build and install first (contrib/setup-debian.sh)" >&2; exit 1; }
now() { date +%s%N; }
SIZES="1 16 64 256 1024"
TOPOLOGY="pack:2 core:16 pu:2"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/dvm-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# GNU time, when there, for the CPU every run took (a figure the machine's load changes less)
TIME=""
[ -x /usr/bin/time ] && TIME="/usr/bin/time -f CPU_%U_%S -o $TMP/cpu.raw"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$REPEATS"); do
    for n in $SIZES; do
        t0=$(now)
        out=$($TIME "$DVM" --mca ras_simulator_num_nodes "$n" --mca ras_simulator_topology \
            "$TOPOLOGY" --display-allocation --exit-when-ready 2>&1) || {
            echo "dvm.sh: herd-dvm failed at $n nodes:" >&2; echo "$out" >&2; exit 1; }
        t1=$(now)
        ns=$((t1 - t0))
        # CPU: herd-dvm and every daemon (it reaps them all), user + system, in ms
        cpu=$(tr '_' ' ' <"$TMP/cpu.raw" 2>/dev/null | awk '/^CPU / {printf "%.0f", ($2 + $3) * 1000}')
        if [ -n "$cpu" ] && { [ ! -s "$TMP/cpu.$n" ] || [ "$cpu" -lt "$(cat "$TMP/cpu.$n")" ]; }; then
            echo "$cpu" >"$TMP/cpu.$n"
        fi
        if [ ! -s "$TMP/best.$n" ] || [ "$ns" -lt "$(cat "$TMP/best.$n")" ]; then
            echo "$ns" >"$TMP/best.$n"
            echo "$out" | sed -n 's/^DVM ready: .*, \([0-9.]*\) s$/\1/p' >"$TMP/ready.$n"
            echo "$out" | grep '^DVM tree:' >"$TMP/tree.$n"
        fi
    done
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
per_node() { echo "$(cat "$TMP/ready.$1") $1" | awk '{printf "%.3f", $1 * 1000 / $2}'; }
cpu_per_node() { [ -s "$TMP/cpu.$1" ] && awk -v n="$1" '{printf "%.2f", $1 / n}' "$TMP/cpu.$1"; }
ratio() { [ -n "$1" ] && [ -n "$2" ] && echo "$1 $2" | awk '{printf "%.2f", $1 / $2}'; }
printf '%-6s %-11s %-12s %-5s %-6s %-15s %-7s %-14s %s\n' nodes "up+down (s)" "to ready (s)" \
    depth rounds "ready/node (ms)" "vs 256" "CPU/node (ms)" "vs 256"
for n in $SIZES; do
    tree=$(cat "$TMP/tree.$n")
    depth=$(echo "$tree" | sed -n 's/.*depth \([0-9]*\),.*/\1/p')
    rounds=$(echo "$tree" | sed -n 's/.*broadcast rounds \([0-9]*\),.*/\1/p')
    printf '%-6s %-11s %-12s %-5s %-6s %-15s %-7s %-14s %s\n' "$n" \
        "$(awk '{printf "%.3f", $1 / 1e9}' "$TMP/best.$n")" "$(cat "$TMP/ready.$n")" "$depth" \
        "$rounds" "$(per_node "$n")" "$(ratio "$(per_node "$n")" "$(per_node 256)")" \
        "$(cpu_per_node "$n")" "$(ratio "$(cpu_per_node "$n")" "$(cpu_per_node 256)")"
done
