#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# I/O forwarding throughput on this host, side by side in one run: a plain pipe (the floor),
# herdrun, Open MPI's mpirun and MPICH's Hydra, for
#   out1:  one rank writing IOF_BENCH_MB MiB to stdout, the launcher's stdout to /dev/null
#          (plain pipe: iofwriter MB | cat >/dev/null);
#   out8:  8 ranks writing IOF_BENCH_MB/8 MiB each (plain pipe: 8 writers into one | cat);
#   stdin: seq 1 1000000 | LAUNCHER -n 1 wc -l (plain pipe: seq 1 1000000 | wc -l); a count
#          other than 1000000 marks the cell WRONG.
# Usage: contrib/bench/iof.sh [PREFIX]
#   PREFIX: an installed herd (default ./install, as contrib/setup-debian.sh makes it).
#   IOF_BENCH_MB (default 512), IOF_BENCH_REPS (default 3: timed runs after one warm-up),
#   IOF_BENCH_TIMEOUT (default 120 s per run; a launcher that takes longer is FAIL).
# Cells: "median MiB/s (median ms)", stdin "median ms"; ratios to the plain pipe from this one
# run. Timings are reported, never asserted: the exit status is 0 whatever they are.
# Flags: herdrun -n N --oversubscribe; mpirun.openmpi --oversubscribe (--allow-run-as-root as
# root; Open MPI 4.x: --mca odls_base_num_threads 0, see launch.sh); mpiexec.hydra -launcher
# fork. The writer is contrib/bench/iofwriter.c, compiled here with cc, as is forkloop.c (the
# stopwatch: fork to reaping on CLOCK_MONOTONIC).
set -eu
case "${1:-}" in
-h | --help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
PREFIX=${1:-$(cd "$HERE/../.." && pwd)/install}
MB=${IOF_BENCH_MB:-512}
REPS=${IOF_BENCH_REPS:-3}
TIMEOUT=${IOF_BENCH_TIMEOUT:-120}
LINES=1000000

TMP=$(mktemp -d "${TMPDIR:-/tmp}/iof-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
for prog in forkloop iofwriter; do
    ${CC:-cc} -O2 -o "$TMP/$prog" "$HERE/$prog.c" ||
        { echo "iof.sh: cannot compile $HERE/$prog.c with ${CC:-cc}" >&2; exit 1; }
done
FORKLOOP=$TMP/forkloop
WRITER=$TMP/iofwriter

# --- the launchers (as launch.sh finds them) ---
HERDRUN=""
[ -x "$PREFIX/bin/herdrun" ] && HERDRUN="$PREFIX/bin/herdrun --oversubscribe"
MPIRUN=""
for candidate in mpirun.openmpi mpirun; do
    path=$(command -v "$candidate" 2>/dev/null) || continue
    version=$("$path" --version 2>/dev/null |
        sed -n -e 's/^.*(Open MPI) \([0-9][0-9.]*\).*$/\1/p' \
            -e 's/^.*(OpenRTE) \([0-9][0-9.]*\).*$/\1/p' | head -n 1)
    [ -n "$version" ] || continue
    MPIRUN="$path --oversubscribe"
    [ "$(id -u)" -eq 0 ] && MPIRUN="$MPIRUN --allow-run-as-root"
    case "$version" in 4.*) MPIRUN="$MPIRUN --mca odls_base_num_threads 0" ;; esac
    break
done
HYDRA=""
for candidate in mpiexec.hydra mpiexec.mpich; do
    path=$(command -v "$candidate" 2>/dev/null) || continue
    "$path" --version 2>/dev/null | grep -q HYDRA || continue
    HYDRA="$path -launcher fork"
    break
done

# run NAME COMMAND: time the shell command COMMAND; its median ms (or FAIL) in med_NAME.
run() {
    cell=$1
    if out=$("$FORKLOOP" --time --reps "$REPS" --timeout "$TIMEOUT" --log "$TMP/out" -- \
        sh -c "$2" 2>"$TMP/err"); then
        eval "med_$cell=\$(echo \"\$out\" | cut -d' ' -f2)"
    else
        eval "med_$cell=FAIL"
        { echo "iof.sh: $cell failed: $2"; sed 's/^/    /' "$TMP/err"
          tail -n 20 "$TMP/out" 2>/dev/null | sed 's/^/    /'; } >&2
    fi
}

# mibs MS MB: throughput, or the failure.
mibs() {
    case "$1" in FAIL | WRONG | n/a) echo "$1" ;; *) echo "$1 $2" | awk '{ printf "%.0f", $2 / ($1 / 1000) }' ;; esac
}
# ratio A B: A/B, or n/a.
ratio() {
    case "$1$2" in
    *FAIL* | *WRONG* | *n/a*) echo "n/a" ;;
    *) echo "$1 $2" | awk '{ if ($2 > 0) printf "%.2f", $1 / $2; else print "n/a" }' ;;
    esac
}
# target RATIO OP LIMIT WHAT: "OP LIMITx WHAT (RATIO: met|not met)".
target() {
    case "$1" in
    n/a) printf '%s %sx %s (n/a)' "$2" "$3" "$4" ;;
    *) printf '%s %sx %s (%s: %s)' "$2" "$3" "$4" "$1" "$(echo "$1 $3" |
        awk -v op="$2" '{ ok = (op == ">=") ? ($1 >= $2) : ($1 <= $2); print ok ? "met" : "not met" }')" ;;
    esac
}

per=$((MB / 8))
[ "$per" -gt 0 ] || per=1
eight=$(for i in 1 2 3 4 5 6 7 8; do printf '%s %s & ' "$WRITER" "$per"; done)
echo "I/O forwarding on this host: median of $REPS runs after 1 warm-up, MiB/s (ms)"
echo "  out1: 1 rank writes $MB MiB to stdout -> /dev/null"
echo "  out8: 8 ranks write $per MiB each -> /dev/null"
echo "  stdin: seq 1 $LINES | LAUNCHER -n 1 wc -l (ms; the count must be $LINES)"
printf '%-12s %-22s %-22s %s\n' "" out1 out8 stdin
for name in pipe herdrun mpirun hydra; do
    case $name in
    pipe) launcher="" ;;
    herdrun) launcher=$HERDRUN ;;
    mpirun) launcher=$MPIRUN ;;
    hydra) launcher=$HYDRA ;;
    esac
    eval "med_${name}_out1=n/a med_${name}_out8=n/a med_${name}_in=n/a"
    if [ "$name" = pipe ]; then
        run pipe_out1 "$WRITER $MB | cat >/dev/null"
        run pipe_out8 "{ $eight wait; } | cat >/dev/null"
        run pipe_in "seq 1 $LINES | wc -l"
    elif [ -n "$launcher" ]; then
        run "${name}_out1" "$launcher -n 1 $WRITER $MB >/dev/null"
        run "${name}_out8" "$launcher -n 8 $WRITER $per >/dev/null"
        run "${name}_in" "seq 1 $LINES | $launcher -n 1 wc -l"
        eval "v=\$med_${name}_in"
        # shellcheck disable=SC2154
        if [ "$v" != FAIL ] && [ "$(tr -d ' \r' <"$TMP/out" | tail -n 1)" != "$LINES" ]; then
            echo "iof.sh: $name: wc -l printed '$(tail -n 1 "$TMP/out")', not $LINES" >&2
            eval "med_${name}_in=WRONG"
        fi
    fi
    eval "o1=\$med_${name}_out1 o8=\$med_${name}_out8 in=\$med_${name}_in"
    # shellcheck disable=SC2154
    printf '%-12s %-22s %-22s %s\n' "$name" "$(mibs "$o1" "$MB") ($o1)" \
        "$(mibs "$o8" $((per * 8))) ($o8)" "$in"
done
echo
echo "ratios to the plain pipe (throughput for out1/out8, time for stdin):"
printf '%-12s %-10s %-10s %s\n' "" out1 out8 stdin
for name in herdrun mpirun hydra; do
    eval "o1=\$med_${name}_out1 o8=\$med_${name}_out8 in=\$med_${name}_in"
    # shellcheck disable=SC2154
    printf '%-12s %-10s %-10s %s\n' "$name" "$(ratio "$med_pipe_out1" "$o1")" \
        "$(ratio "$med_pipe_out8" "$o8")" "$(ratio "$in" "$med_pipe_in")"
done
# shellcheck disable=SC2154
printf 'targets: 1 rank %s, stdin %s lines %s\n' \
    "$(target "$(ratio "$med_pipe_out1" "$med_herdrun_out1")" ">=" 0.9 "plain pipe")" "$LINES" \
    "$(target "$(ratio "$med_herdrun_in" "$med_pipe_in")" "<=" 2 "direct pipe")"
exit 0
