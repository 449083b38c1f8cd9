#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Connection state and messages on this host: the lazy add (each peer added on its first
# message, the default) against add-all at start (--mca btl_base_add_all 1), and pingpong per
# transport beside Open MPI.
#   startup: wall time of herdrun -n N --oversubscribe running examples/ring.c for 1 step (every
#     rank's first message, to its right neighbour, and its left one's), minus that of herdrun
#     -n N /bin/true: what starting libherd and the first message cost, lazy and add-all.
#   state: after that ring, per process (from the same runs): procs in the proc table and peers
#     per btl (btl_base_verbose 5 at finalize), shared-memory segments mapped and private memory
#     (Private_Clean + Private_Dirty of /proc/self/smaps_rollup; both printed by ring --memory),
#     lazy and add-all, over sm (the default) and, for fewer processes, over tcp.
#   pingpong: one-way latency of 8 B (us) and bandwidth of 1 MiB (MB/s) of examples/pingpong.c
#     over each herd btl that herd-info lists (but self), beside contrib/bench/mpi_pingpong.c
#     under mpirun.openmpi --mca btl self,vader and self,tcp; medians of runs alternated.
# Usage: contrib/bench/endpoints.sh [PREFIX]
#   PREFIX: an installed herd (default ./install); the programs are built against it.
#   ENDPOINTS_BENCH_SIZES (default "2 4 8 16 32 64 128 256"): process counts, sm;
#   ENDPOINTS_BENCH_TCP_SIZES (default "2 8 32"): the same over tcp (add-all opens N - 1
#     connections per process, each with a 64 KiB buffer: keep these small);
#   ENDPOINTS_BENCH_REPS (default 3): timed runs per startup cell, after one untimed;
#   ENDPOINTS_BENCH_PP_REPS (default 7), ENDPOINTS_BENCH_PP_ITERS (default 20000): pingpong runs
#     per transport and round trips per size; ENDPOINTS_BENCH_TIMEOUT (default 120 s per run).
# Timings are reported, never asserted: the exit status is 0 whatever they are. Flags: herdrun
# --oversubscribe; pingpong herdrun/mpirun -n 2 --bind-to core; mpirun.openmpi --oversubscribe
# (--allow-run-as-root as root).
set -eu
case "${1:-}" in
-h | --help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
PREFIX=${1:-$TOP/install}
SIZES=${ENDPOINTS_BENCH_SIZES:-2 4 8 16 32 64 128 256}
TCP_SIZES=${ENDPOINTS_BENCH_TCP_SIZES:-2 8 32}
REPS=${ENDPOINTS_BENCH_REPS:-3}
PP_REPS=${ENDPOINTS_BENCH_PP_REPS:-7}
PP_ITERS=${ENDPOINTS_BENCH_PP_ITERS:-20000}
TIMEOUT=${ENDPOINTS_BENCH_TIMEOUT:-120}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/endpoints-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
HERDRUN=$PREFIX/bin/herdrun
[ -x "$HERDRUN" ] || { echo "endpoints.sh: no herdrun in $PREFIX/bin (install herd there)" >&2; exit 1; }
${CC:-cc} -O2 -o "$TMP/forkloop" "$HERE/forkloop.c" ||
    { echo "endpoints.sh: cannot compile $HERE/forkloop.c with ${CC:-cc}" >&2; exit 1; }
FORKLOOP=$TMP/forkloop
HERD_PC="env PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config"
$HERD_PC --exists herd 2>/dev/null ||
    { echo "endpoints.sh: pkg-config finds no herd.pc in $PREFIX/lib/pkgconfig" >&2; exit 1; }
for prog in ring pingpong; do
    # shellcheck disable=SC2046
    ${CC:-cc} -O2 -o "$TMP/$prog" "$TOP/examples/$prog.c" $($HERD_PC --cflags --libs herd) \
        -Wl,-rpath,"$PREFIX/lib" ||
        { echo "endpoints.sh: cannot build examples/$prog.c against $PREFIX" >&2; exit 1; }
done
MPIRUN=$(command -v mpirun.openmpi 2>/dev/null || true)
OMPI_CC=$(command -v mpicc.openmpi 2>/dev/null || true)
MPIRUN_FLAGS="--oversubscribe"
[ "$(id -u)" -eq 0 ] && MPIRUN_FLAGS="--allow-run-as-root $MPIRUN_FLAGS"
MPI_PP=""
if [ -n "$MPIRUN" ] && [ -n "$OMPI_CC" ] &&
    "$OMPI_CC" -O2 -o "$TMP/mpi_pingpong" "$HERE/mpi_pingpong.c"; then
    MPI_PP=$TMP/mpi_pingpong
fi

# timed NAME ARGS...: median ms of herdrun ARGS (REPS runs after one untimed) in ms_NAME, or
# FAIL; the last run's stdout and stderr in $TMP/NAME.log.
timed() {
    name=$1
    shift
    # shellcheck disable=SC2034 # read by the eval below
    if out=$("$FORKLOOP" --time --reps "$REPS" --timeout "$TIMEOUT" --log "$TMP/$name.log" \
        -- "$HERDRUN" "$@" 2>"$TMP/err"); then
        eval "ms_$name=\$(echo \"\$out\" | cut -d' ' -f2)"
    else
        eval "ms_$name=FAIL"
        { echo "endpoints.sh: herdrun $* failed:"; sed 's/^/    /' "$TMP/err";
          tail -n 20 "$TMP/$name.log" 2>/dev/null | sed 's/^/    /'; } >&2
    fi
    return 0
}
# minus A B: A - B (ms), or FAIL
minus() {
    case "$1$2" in
    *FAIL*) echo FAIL ;;
    *) echo "$1 $2" | awk '{ printf "%.1f", $1 - $2 }' ;;
    esac
}
# state LOG: "procs sm tcp segments kib_mean kib_max" of a ring run's output: the most procs,
# peers and shared-memory segments a process held, and its private memory (mean, max), or dashes
state() {
    awk '/ at finalize: / {
            for (i = 1; i <= NF; i++) {
                if ($i == "procs") p = $(i - 1) + 0
                if ($i == "sm" || $i == "sm,") s = $(i + 1) + 0
                if ($i == "tcp" || $i == "tcp,") t = $(i + 1) + 0
            }
            if (p > mp) mp = p; if (s > ms) ms = s; if (t > mt) mt = t; seen = 1
        }
        /: private memory [0-9]+ KiB; [0-9]+ shared-memory segments/ {
            k = $5 + 0; g = $7 + 0; sum += k; n++; if (k > mk) mk = k; if (g > mg) mg = g
        }
        END { if (!seen || !n) print "- - - - - -"
              else printf "%d %d %d %d %.0f %d\n", mp, ms, mt, mg, sum / n, mk }' "$1"
}

# --- startup to the first message, and what each process then holds --------------------------
VERB="--mca btl_base_verbose 5"
startup_table() {
    btl=$1 sizes=$2
    echo "ring of 1 step over $btl (herdrun -n N --oversubscribe --mca btl self,$btl):"
    echo "  ms: herdrun of /bin/true, and what the ring adds to it, lazy and add-all (median of $REPS)"
    echo "  held per process after it (most of any process): procs in its proc table, peers on"
    echo "  $btl, shared-memory segments mapped; private memory: mean (max) KiB over the processes"
    printf '%-4s %-7s %-7s %-8s| %-14s| %-14s| %-13s %s\n' N true "+lazy" "+add-all" \
        "lazy: pr/pe/sg" "all: pr/pe/sg" "private lazy" "private add-all"
    for n in $sizes; do
        # /bin/true once per N for both tables
        eval "ms_true=\${true_$n:-}"
        if [ -z "$ms_true" ]; then
            timed true -n "$n" --oversubscribe /bin/true
            eval "true_$n=\$ms_true"
        fi
        # shellcheck disable=SC2086
        timed lazy -n "$n" --oversubscribe --mca btl self,$btl $VERB "$TMP/ring" 1 --memory
        # shellcheck disable=SC2086
        timed all -n "$n" --oversubscribe --mca btl self,$btl --mca btl_base_add_all 1 $VERB \
            "$TMP/ring" 1 --memory
        # shellcheck disable=SC2046
        set -- $(state "$TMP/lazy.log") $(state "$TMP/all.log")
        if [ "$btl" = sm ]; then lp=$2 ap=$8; else lp=$3 ap=$9; fi
        # shellcheck disable=SC2154
        printf '%-4s %-7s %-7s %-8s| %-14s| %-14s| %-13s %s\n' "$n" "$ms_true" \
            "$(minus "$ms_lazy" "$ms_true")" "$(minus "$ms_all" "$ms_true")" \
            "$1/$lp/$4" "$7/$ap/${10}" "$5 ($6)" "${11} (${12})"
        echo "$n $5 ${11}" >>"$TMP/mem.$btl"
    done
    # the issue's target: a ring process's state does not grow with N
    awk 'NR == 1 { n0 = $1; l0 = $2; a0 = $3 } { n1 = $1; l1 = $2; a1 = $3 }
        END { if (NR > 1 && l0 > 0 && a0 > 0)
              printf "mean private memory from N=%d to N=%d: lazy %+d KiB (x%.2f), add-all %+d KiB (x%.2f)\n",
                     n0, n1, l1 - l0, l1 / l0, a1 - a0, a1 / a0 }' "$TMP/mem.$btl"
    echo "target: ring memory per process independent of N (lazy)"
    echo
}
startup_table sm "$SIZES"
startup_table tcp "$TCP_SIZES"

# --- pingpong per transport, beside Open MPI ---------------------------------------------------
# pp NAME COMMAND...: append "latency_8B bandwidth_1MiB" of one run to $TMP/pp.NAME (or FAIL)
pp() {
    name=$1
    shift
    if timeout "$TIMEOUT" "$@" >"$TMP/pp.out" 2>"$TMP/pp.err"; then
        awk '$1 == 8 { l = $3 } $1 == 1048576 { b = $4 } END { print (l == "" ? "FAIL" : l),
            (b == "" ? "FAIL" : b) }' "$TMP/pp.out" >>"$TMP/pp.$name"
    else
        echo "FAIL FAIL" >>"$TMP/pp.$name"
        { echo "endpoints.sh: $* failed:"; sed 's/^/    /' "$TMP/pp.err" | head -n 20; } >&2
    fi
}
median() { # median of column $1 of file $2 (FAIL when any run failed)
    awk -v c="$1" '{ v[NR] = $c; if ($c == "FAIL") f = 1 }
        END { if (f || !NR) { print "FAIL"; exit }
              for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++)
                  if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
              print v[int((NR + 1) / 2)] }' "$2"
}
BTLS=$("$PREFIX/bin/herd-info" --parsable | sed -n 's/^mca:btl:\([a-z0-9_]*\):version:.*/\1/p' |
    grep -vx self | tr '\n' ' ')
OMPI_BTLS=""
[ -n "$MPI_PP" ] && OMPI_BTLS="vader tcp"
i=0
while [ "$i" -lt "$PP_REPS" ]; do
    for b in $BTLS; do
        pp "herd_$b" "$HERDRUN" -n 2 --bind-to core --mca btl "self,$b" "$TMP/pingpong" \
            "$PP_ITERS" 1048576
        for o in $OMPI_BTLS; do
            # alternate with Open MPI's equivalent, so both see the same machine
            case $b/$o in sm/vader | tcp/tcp)
                # shellcheck disable=SC2086
                pp "ompi_$o" "$MPIRUN" $MPIRUN_FLAGS -n 2 --bind-to core --mca btl "self,$o" \
                    "$MPI_PP" "$PP_ITERS" 1048576 ;;
            esac
        done
    done
    i=$((i + 1))
done
echo "pingpong, 2 processes on this host bound to cores (median of $PP_REPS runs alternated;"
echo "$PP_ITERS round trips of 8 B, fewer of 1 MiB, after untimed ones)"
printf '%-22s %-16s %s\n' transport "8 B one-way us" "1 MiB MB/s"
for b in $BTLS; do
    printf '%-22s %-16s %s\n' "herd $b" "$(median 1 "$TMP/pp.herd_$b")" \
        "$(median 2 "$TMP/pp.herd_$b")"
done
for o in $OMPI_BTLS; do
    [ -f "$TMP/pp.ompi_$o" ] || continue
    printf '%-22s %-16s %s\n' "Open MPI $o" "$(median 1 "$TMP/pp.ompi_$o")" \
        "$(median 2 "$TMP/pp.ompi_$o")"
done
[ -n "$MPI_PP" ] || echo "Open MPI: mpirun.openmpi or mpicc.openmpi not installed: n/a"
ratio() {
    case "$1$2" in
    *FAIL* | "") echo "n/a" ;;
    *) echo "$1 $2" | awk '{ if ($2 > 0) printf "%.2f", $1 / $2; else print "n/a" }' ;;
    esac
}
if [ -f "$TMP/pp.herd_sm" ] && [ -f "$TMP/pp.ompi_vader" ]; then
    echo "herd sm / vader: latency $(ratio "$(median 1 "$TMP/pp.herd_sm")" \
        "$(median 1 "$TMP/pp.ompi_vader")"), bandwidth $(ratio \
        "$(median 2 "$TMP/pp.herd_sm")" "$(median 2 "$TMP/pp.ompi_vader")") (target: latency <= 1.5)"
fi
if [ -f "$TMP/pp.herd_tcp" ] && [ -f "$TMP/pp.ompi_tcp" ]; then
    echo "herd tcp / Open MPI tcp: latency $(ratio "$(median 1 "$TMP/pp.herd_tcp")" \
        "$(median 1 "$TMP/pp.ompi_tcp")"), bandwidth $(ratio \
        "$(median 2 "$TMP/pp.herd_tcp")" "$(median 2 "$TMP/pp.ompi_tcp")")"
fi
exit 0
