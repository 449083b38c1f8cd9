#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Launch time of N x /bin/true on this host, side by side in one run: a plain fork+exec+wait
# loop (the floor), herdrun, Open MPI's mpirun and MPICH's Hydra; and, with --message-size, the
# size of herdrun's launch message as the job grows (it should not).
# Usage: contrib/bench/launch.sh [--message-size] [PREFIX]
#   PREFIX: an installed herd (default ./install, as contrib/setup-debian.sh makes it).
#   --message-size: only the launch message table (LAUNCH_BENCH_MSG=1: both tables).
#   LAUNCH_BENCH_REPS (default 10): timed runs per cell, after one untimed warm-up run; the
#     launchers of one N take turns, one run each per round.
#   LAUNCH_BENCH_MSG_REPS (default 3): timed runs per size of the message table (no warm-up).
#   LAUNCH_BENCH_TIMEOUT (default 60): seconds a launch may take before it is killed and its
#     cell marked FAIL; the message table allows ten times that.
# Each cell is the wall time of the whole command, fork to reaping, on CLOCK_MONOTONIC, taken
# by contrib/bench/forkloop.c (compiled here with cc into a temporary folder), so the shell
# adds nothing: "median / best" in ms. Ratios use the medians of this one run; timings are
# reported, never asserted (the exit status is 0 whatever they are). Launchers that are not
# installed are n/a; one that fails or hangs is FAIL, with its output on stderr.
#
# Flags, and why (found on Debian 12, Open MPI 4.1.4, MPICH 4.0.2, 2 cores, no network):
#   herdrun -n N --oversubscribe /bin/true
#   mpirun.openmpi --oversubscribe -n N /bin/true, plus:
#     --allow-run-as-root             when run as root (it refuses otherwise);
#     --mca odls_base_num_threads 0   Open MPI 4.x only: from odls_base_cutoff (32) local procs
#                                     up it spawns from a thread pool and now and then misses a
#                                     child's exit, then waits forever with every child reaped
#                                     (1 run in 4 to 2 in 3 at n=64 here); spawning from the main
#                                     thread never hung in 100+ runs; it costs about a
#                                     quarter at n=64, nothing below 32.
#     No other flag mattered: nothing is launched over ssh on one host (plm_rsh_agent unused),
#     /bin/true never opens a BTL (--mca btl self changes nothing), and oob_tcp_if_include lo,
#     --bind-to none, --mca plm isolated, HWLOC_COMPONENTS=-gl measured the same.
#   mpiexec.hydra (or mpiexec.mpich) -launcher fork -n N /bin/true
#     -launcher fork: start the proxy with fork, never ssh. Hydra places any number of processes
#     on a host without an oversubscribe flag, and binds nothing unless asked.
set -eu
MESSAGE_ONLY=no
case "${1:-}" in
--message-size) MESSAGE_ONLY=yes; shift ;;
-h | --help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
PREFIX=${1:-$(cd "$HERE/../.." && pwd)/install}
REPS=${LAUNCH_BENCH_REPS:-10}
MSG_REPS=${LAUNCH_BENCH_MSG_REPS:-3}
TIMEOUT=${LAUNCH_BENCH_TIMEOUT:-60}
SIZES="1 4 16 64"
MSG_SIZES="16 256 4096 65536 1048576"
MSG_NODES=256

TMP=$(mktemp -d "${TMPDIR:-/tmp}/launch-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
${CC:-cc} -O2 -o "$TMP/forkloop" "$HERE/forkloop.c" ||
    { echo "launch.sh: cannot compile $HERE/forkloop.c with ${CC:-cc}" >&2; exit 1; }
FORKLOOP=$TMP/forkloop

# --- the launchers: each is a command prefix ending where "-n N /bin/true" goes, or empty ---
HERDRUN=""
[ -x "$PREFIX/bin/herdrun" ] && HERDRUN="$PREFIX/bin/herdrun"

MPIRUN=""
MPIRUN_VERSION=""
for candidate in mpirun.openmpi mpirun; do
    path=$(command -v "$candidate" 2>/dev/null) || continue
    # "mpirun (Open MPI) 4.1.4", or "(OpenRTE)" when called mpirun.openmpi
    version=$("$path" --version 2>/dev/null |
        sed -n -e 's/^.*(Open MPI) \([0-9][0-9.]*\).*$/\1/p' \
            -e 's/^.*(OpenRTE) \([0-9][0-9.]*\).*$/\1/p' | head -n 1)
    [ -n "$version" ] || continue # an mpirun that is not Open MPI's (MPICH's, herd's shim)
    MPIRUN=$path
    MPIRUN_VERSION=$version
    break
done
MPIRUN_FLAGS="--oversubscribe"
[ "$(id -u)" -eq 0 ] && MPIRUN_FLAGS="--allow-run-as-root $MPIRUN_FLAGS"
case "$MPIRUN_VERSION" in
4.*) MPIRUN_FLAGS="$MPIRUN_FLAGS --mca odls_base_num_threads 0" ;;
esac

HYDRA=""
HYDRA_VERSION=""
for candidate in mpiexec.hydra mpiexec.mpich; do
    path=$(command -v "$candidate" 2>/dev/null) || continue
    version=$("$path" --version 2>/dev/null | sed -n 's/^ *Version: *\([^ ]*\).*$/\1/p' | head -n 1)
    "$path" --version 2>/dev/null | grep -q HYDRA || continue
    HYDRA=$path
    HYDRA_VERSION=$version
    break
done
HYDRA_FLAGS="-launcher fork"

# run_once NAME N WARMUP COMMAND...: one timed run of COMMAND (after WARMUP untimed ones), its
# ms appended to $TMP/ms.NAME.N; a failure marks the cell FAIL ($TMP/fail.NAME.N), says why on
# stderr, and the cell's later rounds are skipped.
run_once() {
    name=$1
    n=$2
    warmup=$3
    shift 3
    [ -e "$TMP/fail.$name.$n" ] && return 0
    if out=$("$FORKLOOP" --time --warmup "$warmup" --reps 1 --timeout "$TIMEOUT"         --log "$TMP/out" -- "$@" 2>"$TMP/err"); then
        echo "$out" | cut -d' ' -f2 >>"$TMP/ms.$name.$n"
        # a warning (processes left behind) is worth seeing even when the times are good
        [ -s "$TMP/err" ] && sed "s/^/launch.sh: $name -n $n: /" "$TMP/err" >&2
    else
        : >"$TMP/fail.$name.$n"
        {
            echo "launch.sh: $name -n $n failed: $*"
            sed 's/^/    /' "$TMP/err"
            tail -n 40 "$TMP/out" 2>/dev/null | sed 's/^/    /'
        } >&2
    fi
    return 0
}

# summarize NAME N: the cell's median (ms) or FAIL into med_NAME_N, and "median / best" or FAIL
# into cell_NAME_N (forkloop's median: the middle run, or the mean of the middle two).
summarize() {
    if [ -e "$TMP/fail.$1.$2" ] || [ ! -s "$TMP/ms.$1.$2" ]; then
        eval "med_$1_$2=FAIL; cell_$1_$2=FAIL"
        return 0
    fi
    # shellcheck disable=SC2034 # read by the eval below
    stats=$(sort -n "$TMP/ms.$1.$2" | awk '{ v[NR] = $1 } END {
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "%.3f %.2f / %.2f", m, m, v[1] }')
    eval "med_$1_$2=\${stats%% *}; cell_$1_$2=\${stats#* }"
}

# measure NAME N COMMAND...: REPS runs of COMMAND in a row (after one untimed), summarized.
measure() {
    name=$1
    n=$2
    shift 2
    round=0
    while [ "$round" -lt "$REPS" ]; do
        run_once "$name" "$n" $((round == 0 ? 1 : 0)) "$@"
        round=$((round + 1))
    done
    summarize "$name" "$n"
}

# ratio A B: A/B of two medians, or n/a.
ratio() {
    case "$1$2" in
    *FAIL* | *n/a* | "") echo "n/a" ;;
    *) echo "$1 $2" | awk '{ if ($2 > 0) printf "%.2f", $1 / $2; else print "n/a" }' ;;
    esac
}

# target RATIO LIMIT: "<= LIMITx BASE (RATIO: met|not met)", or "(n/a)" without a ratio.
target() {
    case "$1" in
    n/a) printf '<= %sx %s (n/a)' "$2" "$3" ;;
    *) printf '<= %sx %s (%s: %s)' "$2" "$3" "$1" \
        "$(echo "$1 $2" | awk '{ print ($1 <= $2) ? "met" : "not met" }')" ;;
    esac
}

launch_table() {
    echo "launch of N x /bin/true, wall time in ms: median / best of $REPS runs (after 1 warm-up),"
    echo "the launchers taking turns (one run each per round)"
    echo "  fork loop: forkloop N /bin/true (fork+execve all N, then wait for all)"
    if [ -n "$HERDRUN" ]; then
        echo "  herdrun:   $HERDRUN -n N --oversubscribe /bin/true"
    else
        echo "  herdrun:   not installed ($PREFIX/bin/herdrun): n/a"
    fi
    if [ -n "$MPIRUN" ]; then
        echo "  mpirun:    $MPIRUN $MPIRUN_FLAGS -n N /bin/true (Open MPI $MPIRUN_VERSION)"
    else
        echo "  mpirun:    Open MPI not installed (no mpirun.openmpi, no Open MPI mpirun): n/a"
    fi
    if [ -n "$HYDRA" ]; then
        echo "  hydra:     $HYDRA $HYDRA_FLAGS -n N /bin/true (Hydra $HYDRA_VERSION)"
    else
        echo "  hydra:     MPICH Hydra not installed (no mpiexec.hydra, no mpiexec.mpich): n/a"
    fi
    printf '%-7s %-17s %-17s %-17s %s\n' N "fork loop" herdrun mpirun hydra
    for n in $SIZES; do
        for name in loop herdrun mpirun hydra; do
            eval "med_${name}_$n=n/a; cell_${name}_$n=n/a"
        done
        # The launchers take turns, one run each per round, so that the machine speeding up or
        # slowing down during the table weighs on all of them alike (a VM's speed wanders by
        # tens of percent within a minute); the first round also runs each once untimed.
        round=0
        while [ "$round" -lt "$REPS" ]; do
            warm=$((round == 0 ? 1 : 0))
            run_once loop "$n" "$warm" "$FORKLOOP" "$n" /bin/true
            # word splitting of the flag lists is intended: they hold no spaces within a flag
            # shellcheck disable=SC2086
            [ -n "$HERDRUN" ] && run_once herdrun "$n" "$warm" "$HERDRUN" -n "$n" \
                --oversubscribe /bin/true
            # shellcheck disable=SC2086
            [ -n "$MPIRUN" ] && run_once mpirun "$n" "$warm" "$MPIRUN" $MPIRUN_FLAGS -n "$n" \
                /bin/true
            # shellcheck disable=SC2086
            [ -n "$HYDRA" ] && run_once hydra "$n" "$warm" "$HYDRA" $HYDRA_FLAGS -n "$n" /bin/true
            round=$((round + 1))
        done
        summarize loop "$n"
        [ -n "$HERDRUN" ] && summarize herdrun "$n"
        [ -n "$MPIRUN" ] && summarize mpirun "$n"
        [ -n "$HYDRA" ] && summarize hydra "$n"
        eval "printf '%-7s %-17s %-17s %-17s %s\n' $n \"\$cell_loop_$n\" \"\$cell_herdrun_$n\" \
            \"\$cell_mpirun_$n\" \"\$cell_hydra_$n\""
    done
    echo
    echo "ratios of the medians above:"
    printf '%-7s %-14s %-14s %s\n' N herdrun/loop herdrun/hydra herdrun/mpirun
    for n in $SIZES; do
        eval "h=\$med_herdrun_$n; l=\$med_loop_$n; y=\$med_hydra_$n; m=\$med_mpirun_$n"
        # shellcheck disable=SC2154
        printf '%-7s %-14s %-14s %s\n' "$n" "$(ratio "$h" "$l")" "$(ratio "$h" "$y")" \
            "$(ratio "$h" "$m")"
    done
    # shellcheck disable=SC2154
    printf 'targets: n=16 herdrun %s and %s; n=64 %s\n' \
        "$(target "$(ratio "$med_herdrun_16" "$med_loop_16")" 1.5 loop)" \
        "$(target "$(ratio "$med_herdrun_16" "$med_hydra_16")" 0.7 hydra)" \
        "$(target "$(ratio "$med_herdrun_64" "$med_loop_64")" 1.3 loop)"
}

message_table() {
    echo "herdrun launch message on $MSG_NODES simulated nodes, nothing launched; wall time in ms:"
    echo "median / best of $MSG_REPS runs (mapping, packing, and printing the map to a file)"
    echo "  herdrun --mca ras simulator --mca ras_simulator_num_nodes $MSG_NODES -n N" \
        "--oversubscribe --do-not-launch --display-map -v /bin/true"
    printf '%-9s %-22s %s\n' N "launch message (bytes)" "wall time (ms)"
    sizes_seen=""
    for n in $MSG_SIZES; do
        if [ -z "$HERDRUN" ]; then
            printf '%-9s %-22s %s\n' "$n" "herdrun not installed" "herdrun not installed"
            continue
        fi
        if out=$("$FORKLOOP" --time --warmup 0 --reps "$MSG_REPS" --timeout $((TIMEOUT * 10)) \
            --log "$TMP/out" -- "$HERDRUN" --mca ras simulator --mca ras_simulator_num_nodes \
            "$MSG_NODES" -n "$n" --oversubscribe --do-not-launch --display-map -v /bin/true \
            2>"$TMP/err"); then
            bytes=$(sed -n 's/^.*launch message: \([0-9][0-9]*\) bytes.*$/\1/p' "$TMP/out" |
                head -n 1)
            [ -n "$bytes" ] || bytes="not printed"
            wall=$(echo "$out" | awk '{printf "%.2f / %.2f", $2, $1}')
            [ -s "$TMP/err" ] && sed "s/^/launch.sh: herdrun -n $n: /" "$TMP/err" >&2
        else
            bytes=FAIL
            wall=FAIL
            {
                echo "launch.sh: herdrun -n $n on $MSG_NODES simulated nodes failed:"
                sed 's/^/    /' "$TMP/err"
                tail -n 40 "$TMP/out" 2>/dev/null | sed 's/^/    /'
            } >&2
        fi
        case "$bytes" in
        *[!0-9]*) ;;
        *) case " $sizes_seen " in *" $bytes "*) ;; *) sizes_seen="$sizes_seen $bytes" ;; esac ;;
        esac
        printf '%-9s %-22s %s\n' "$n" "$bytes" "$wall"
    done
    if [ -z "$HERDRUN" ]; then
        echo "launch message size: n/a (herdrun not installed)"
        return 0
    fi
    case "$sizes_seen" in
    "") echo "launch message size: no sizes to compare" ;;
    " "*" "*) echo "launch message size: varies with N (bytes:$sizes_seen)" ;;
    *) echo "launch message size: the same for every N that ran (${sizes_seen# } bytes)" ;;
    esac
}

# How long each launcher takes to notice a failed process, stop the job and exit: rank 1 exits
# with status 1 at once while rank 0 would sleep 5 s (a launcher that waits for it shows
# ~5000). The command is wrapped in sh so that a launcher's non-zero exit (what it must do
# here) counts as success; the wrapper costs every launcher the same. Compare with the -n 2
# launch of the table above (not timed here).
abort_table() {
    job='r=${HERD_RANK:-${OMPI_COMM_WORLD_RANK:-$PMI_RANK}}; [ "$r" = 1 ] && exit 1; exec sleep 5'
    wrap='"$@"; [ $? -ne 0 ]'
    echo "abort: -n 2, rank 1 exits 1 at once, rank 0 sleeps 5 s; wall time in ms until the"
    echo "launcher exits (median / best of $REPS)"
    [ -n "$HERDRUN" ] && measure aborth 2 sh -c "$wrap" sh "$HERDRUN" -n 2 sh -c "$job"
    # shellcheck disable=SC2086 # the flags are words
    [ -n "$MPIRUN" ] && measure aborto 2 sh -c "$wrap" sh "$MPIRUN" $MPIRUN_FLAGS -n 2 sh -c "$job"
    # shellcheck disable=SC2086
    [ -n "$HYDRA" ] && measure aborty 2 sh -c "$wrap" sh "$HYDRA" $HYDRA_FLAGS -n 2 sh -c "$job"
    printf '  herdrun: %s   mpirun: %s   hydra: %s\n' "${cell_aborth_2:-n/a}" \
        "${cell_aborto_2:-n/a}" "${cell_aborty_2:-n/a}"
    echo "  target: herdrun gone within 200 ms of the failure (launch included here)"
}

if [ "$MESSAGE_ONLY" = yes ]; then
    message_table
    exit 0
fi
launch_table
echo
abort_table
if [ "${LAUNCH_BENCH_MSG:-0}" = 1 ]; then
    echo
    message_table
fi
