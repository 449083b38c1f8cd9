#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Wireup on this host, side by side in one run:
#   ompi:  an Open MPI hello (MPI_Init, MPI_Allreduce, MPI_Finalize; test/programs/mpi_hello.c
#          built with mpicc.openmpi) at N = 2, 8, 32 under herdrun and under Open MPI's mpirun;
#   mpich: the same program built with mpicc.mpich under herdrun and under MPICH's Hydra;
#   fence: libherd fences without and with data (contrib/bench/herdbench.c), per fence, as the
#          processes and the simulated nodes (session daemons) grow;
#   get:   libherd get of a peer's key: a peer on the same node, a peer on another (simulated)
#          node for the first time (direct modex), and again (kept on the node);
#   mem:   private memory (Private_Clean + Private_Dirty) each of 256 processes on one node adds
#          once herd_init is done and every peer's node and locality were read, against a
#          process that keeps its own copy of every peer's record.
# Usage: contrib/bench/wireup.sh [PREFIX]
#   PREFIX: an installed herd (default ./install, as contrib/setup-debian.sh makes it).
#   WIREUP_BENCH_REPS (default 10), WIREUP_BENCH_TIMEOUT (default 120 s per run),
#   WIREUP_BENCH_PARTS (default "ompi mpich libherd": which tables).
# Cells: "median / best" ms of the whole command (contrib/bench/forkloop.c's stopwatch); ratios
# from this one run. The MPI hellos run side by side: one run under herdrun, one under the other
# launcher, and so on, so that what else the machine does weighs on both alike. Timings are
# reported, never asserted: the exit status is 0 whatever they are. Flags: herdrun -n N
# --oversubscribe; mpirun.openmpi --oversubscribe (--allow-run-as-root as root);
# mpiexec.hydra -launcher fork.
set -eu
case "${1:-}" in
-h | --help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
PREFIX=${1:-$TOP/install}
REPS=${WIREUP_BENCH_REPS:-10}
TIMEOUT=${WIREUP_BENCH_TIMEOUT:-120}
SIZES="2 8 32"
PARTS=${WIREUP_BENCH_PARTS:-ompi mpich libherd}
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/wireup-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
${CC:-cc} -O2 -o "$TMP/forkloop" "$HERE/forkloop.c" ||
    { echo "wireup.sh: cannot compile $HERE/forkloop.c with ${CC:-cc}" >&2; exit 1; }
FORKLOOP=$TMP/forkloop
HERDRUN=$PREFIX/bin/herdrun
[ -x "$HERDRUN" ] || { echo "wireup.sh: no herdrun in $PREFIX/bin (install herd there)" >&2; exit 1; }

MPIRUN=$(command -v mpirun.openmpi 2>/dev/null || true)
MPIRUN_FLAGS="--oversubscribe"
[ "$(id -u)" -eq 0 ] && MPIRUN_FLAGS="--allow-run-as-root $MPIRUN_FLAGS"
HYDRA=$(command -v mpiexec.hydra 2>/dev/null || true)
OMPI_CC=$(command -v mpicc.openmpi 2>/dev/null || true)
MPICH_CC=$(command -v mpicc.mpich 2>/dev/null || true)
[ -n "$OMPI_CC" ] && "$OMPI_CC" -O2 -o "$TMP/ompi_hello" "$TOP/test/programs/mpi_hello.c"
[ -n "$MPICH_CC" ] && "$MPICH_CC" -O2 -o "$TMP/mpich_hello" "$TOP/test/programs/mpi_hello.c"
HERDBENCH=""
if PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config --exists herd 2>/dev/null; then
    # shellcheck disable=SC2046
    ${CC:-cc} -O2 -o "$TMP/herdbench" "$HERE/herdbench.c" \
        $(PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config --cflags --libs herd) \
        -Wl,-rpath,"$PREFIX/lib" && HERDBENCH=$TMP/herdbench
fi

# measure_pair N CMD_H -- CMD_O: herdrun's and the other launcher's command, one run each in
# turn (after one untimed run of each), REPS times; sets med_h_N, cell_h_N, med_o_N, cell_o_N
# (or FAIL, or n/a when CMD_O is empty).
measure_pair() {
    n=$1
    shift
    h_cmd=""
    while [ "$1" != "--" ]; do h_cmd="$h_cmd $1"; shift; done
    shift
    o_cmd="$*"
    : >"$TMP/h.times"
    : >"$TMP/o.times"
    for i in $(seq 0 "$REPS"); do
        for who in h o; do
            eval "cmd=\$${who}_cmd"
            [ -n "$cmd" ] || continue
            [ -f "$TMP/$who.failed" ] && continue
            # shellcheck disable=SC2086
            if out=$("$FORKLOOP" --time --reps 1 --warmup $((i == 0)) --timeout "$TIMEOUT" \
                --log "$TMP/out" -- $cmd 2>"$TMP/err"); then
                [ "$i" -gt 0 ] && echo "$out" | cut -d' ' -f1 >>"$TMP/$who.times"
            else
                touch "$TMP/$who.failed"
                { echo "wireup.sh: -n $n failed: $cmd"; sed 's/^/    /' "$TMP/err"
                  tail -n 20 "$TMP/out" 2>/dev/null | sed 's/^/    /'; } >&2
            fi
        done
    done
    for who in h o; do
        eval "cmd=\$${who}_cmd"
        if [ -z "$cmd" ]; then
            eval "med_${who}_$n=n/a; cell_${who}_$n=n/a"
        elif [ -f "$TMP/$who.failed" ]; then
            eval "med_${who}_$n=FAIL; cell_${who}_$n=FAIL"
            rm -f "$TMP/$who.failed"
        else
            med=$(sort -n "$TMP/$who.times" | awk '{ v[NR] = $1 } END {
                if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
            best=$(sort -n "$TMP/$who.times" | head -n 1)
            eval "med_${who}_$n=$med"
            eval "cell_${who}_$n=\$(echo $med $best | awk '{printf \"%.1f / %.1f\", \$1, \$2}')"
        fi
    done
    return 0
}
ratio() {
    case "$1$2" in
    *FAIL* | *n/a* | "") echo "n/a" ;;
    *) echo "$1 $2" | awk '{ if ($2 > 0) printf "%.2f", $1 / $2; else print "n/a" }' ;;
    esac
}

# --- MPI hellos -------------------------------------------------------------------------------
hello_table() {
    flavour=$1 other=$2 other_cmd=$3
    echo "$flavour hello (MPI_Init, MPI_Allreduce, MPI_Finalize), wall ms: median / best of $REPS"
    printf '%-5s %-18s %-18s %s\n' N herdrun "$other" "herdrun/$other"
    for n in $SIZES; do
        other=""
        [ -n "$other_cmd" ] && other="$other_cmd -n $n $TMP/${flavour}_hello"
        # shellcheck disable=SC2086
        measure_pair "$n" "$HERDRUN" -n "$n" --oversubscribe "$TMP/${flavour}_hello" -- $other
        eval "printf '%-5s %-18s %-18s %s\n' $n \"\$cell_h_$n\" \"\$cell_o_$n\" \
            \"\$(ratio \"\$med_h_$n\" \"\$med_o_$n\")\""
    done
    echo
}
if ! part ompi; then
    :
elif [ -n "$OMPI_CC" ]; then
    hello_table ompi mpirun "${MPIRUN:+$MPIRUN $MPIRUN_FLAGS}"
    # shellcheck disable=SC2154
    echo "target: Open MPI hello under herdrun <= 0.6x mpirun at n=8 ($(ratio "$med_h_8" "$med_o_8"))"
    echo
else
    echo "ompi: mpicc.openmpi not installed: n/a"
fi
if ! part mpich; then
    :
elif [ -n "$MPICH_CC" ]; then
    hello_table mpich hydra "${HYDRA:+$HYDRA -launcher fork}"
    # shellcheck disable=SC2154
    echo "target: MPICH hello under herdrun <= 0.8x Hydra at n=8 ($(ratio "$med_h_8" "$med_o_8"))" \
        "and n=32 ($(ratio "$med_h_32" "$med_o_32"))"
    echo
else
    echo "mpich: mpicc.mpich not installed: n/a"
fi

# --- libherd fences, gets, memory -------------------------------------------------------------
part libherd || exit 0
if [ -z "$HERDBENCH" ]; then
    echo "libherd: pkg-config herd not found under $PREFIX: fence, get and mem are n/a"
    exit 0
fi
SIM="--mca ras simulator --mca ras_simulator_slots 64 --mca ras_simulator_num_nodes"
# run_bench ARGS...: herdbench's line from one run (or FAIL)
run_bench() {
    if timeout "$TIMEOUT" "$HERDRUN" "$@" >"$TMP/b.out" 2>"$TMP/b.err"; then
        grep -E '^(fence|get) ' "$TMP/b.out" | head -n 1
    else
        echo FAIL
        sed 's/^/    /' "$TMP/b.err" | head -n 20 >&2
    fi
}
echo "libherd fences, microseconds per fence (rank 0; 200 fences each)"
printf '%-7s %-7s %-12s %s\n' procs nodes "no data" "with data (64 B/rank)"
for spec in "8 1" "32 1" "32 4" "128 4" "128 16" "256 16"; do
    set -- $spec
    if [ "$2" -eq 1 ]; then
        line=$(run_bench -n "$1" --oversubscribe "$HERDBENCH" fence 200)
    else
        # shellcheck disable=SC2086
        line=$(run_bench $SIM "$2" -n "$1" --map-by node "$HERDBENCH" fence 200)
    fi
    printf '%-7s %-7s %-12s %s\n' "$1" "$2" \
        "$(echo "$line" | sed -n 's/.*nodata_us=\([^ ]*\).*/\1/p')" \
        "$(echo "$line" | sed -n 's/.*data_us=\([^ ]*\).*/\1/p' | tail -n 1)"
done
echo
echo "libherd get of a peer's key, microseconds (rank 0, 2 simulated nodes x 4 processes)"
# shellcheck disable=SC2086
line=$(run_bench $SIM 2 -n 8 --map-by node "$HERDBENCH" get 1000)
echo "  local (same node): $(echo "$line" | sed -n 's/.*local_us=\([^ ]*\).*/\1/p')" \
    " remote, first (direct modex): $(echo "$line" | sed -n 's/.*remote_first_us=\([^ ]*\).*/\1/p')" \
    " remote again (kept on the node): $(echo "$line" | sed -n 's/.*remote_again_us=\([^ ]*\).*/\1/p')"
echo
echo "private memory per process, 256 processes on this node (KiB added by herd_init and reading"
echo "every peer's node and locality: max / average over the processes)"
for mode in shared copy; do
    arg=""
    [ "$mode" = copy ] && arg=copy
    if timeout "$TIMEOUT" "$HERDRUN" -n 256 --oversubscribe "$HERDBENCH" mem $arg \
        >"$TMP/m.out" 2>"$TMP/m.err"; then
        awk -v mode="$mode" '/^mem / { for (i = 2; i <= NF; i++) { split($i, kv, "=");
            v[kv[1]] = kv[2] } d = v["after_kb"] - v["before_kb"]; s += d; n++;
            if (d > m) m = d }
            END { printf "  %-28s %d / %.1f KiB (%d processes)\n",
                  (mode == "shared" ? "job database in place:" : "a private copy per process:"),
                  m, s / n, n }' "$TMP/m.out"
    else
        echo "  $mode: FAIL"
        sed 's/^/    /' "$TMP/m.err" | head -n 20 >&2
    fi
done
echo "target: under 64 KiB per process whatever the count"
