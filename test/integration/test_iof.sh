#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# I/O forwarding on this host and on simulated nodes, as a user sees it: every process's stdout
# and stderr on herdrun's, whole lines that never mix ranks, the last words of processes that
# exit or are killed, --tag-output, --timestamp-output, --merge-stderr-to-stdout,
# --output-filename, herdrun's stdin to one rank, all or none, and memory that stays bounded
# when nobody reads. After every case nothing may be left running or in /dev/shm.
. "$(dirname "$0")/lib.sh"
SIM="--mca ras simulator --mca ras_simulator_num_nodes"
# How long one job may take (herdrun_wait, herdrun_in, herdrun_piped): a hang is a failure.
HERDRUN_LIMIT=60

BIN=$WORK/bin
mkdir -p "$BIN"
cp "$(command -v sleep)" "$BIN/sleep"
if ! make_iof_programs "$BIN" 2>"$ERR"; then
    fail "the test programs build"
    finish
    exit 1
fi
# blast BYTES PIDFILE: its pid to PIDFILE, then BYTES bytes of 1 KiB lines on stdout, in 64 KiB
# writes.
cat >"$WORK/blast.c" <<'EOF'
/* A fast writer for the flow-control case: many bytes of 1 KiB lines, in large writes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    static char buffer[65536];
    char temporary[4096];

    if (argc < 3) {
        fprintf(stderr, "usage: blast BYTES PIDFILE\n");
        return 2;
    }
    long long left = atoll(argv[1]);
    /* written whole, then renamed: whoever sees the file sees the pid */
    snprintf(temporary, sizeof(temporary), "%s.tmp", argv[2]);
    FILE *pid_file = fopen(temporary, "w");
    if (NULL == pid_file || fprintf(pid_file, "%d\n", (int) getpid()) < 0 ||
        0 != fclose(pid_file) || 0 != rename(temporary, argv[2])) {
        perror(argv[2]);
        return 1;
    }
    for (size_t i = 0; i < sizeof(buffer); i++) {
        buffer[i] = (1023 == i % 1024) ? '\n' : (char) ('a' + (i / 1024) % 26);
    }
    while (left > 0) {
        size_t size = left < (long long) sizeof(buffer) ? (size_t) left : sizeof(buffer);
        ssize_t wrote = write(STDOUT_FILENO, buffer, size);
        if (wrote < 0 && EINTR == errno) {
            continue;
        }
        if (wrote < 0) {
            perror("blast: write");
            return 1;
        }
        left -= wrote;
    }
    return 0;
}
EOF
if ! cc -O2 -o "$BIN/blast" "$WORK/blast.c" 2>"$ERR"; then
    fail "the flow-control writer builds"
    finish
    exit 1
fi

# fresh NAME: an empty folder $WORK/NAME, its path in $dir.
fresh() { dir=$WORK/$1; rm -rf "$dir"; mkdir -p "$dir"; }
# job ARGS...: herdrun ARGS (stdin /dev/null), waited for at most $HERDRUN_LIMIT s.
job() { herdrun_bg "$@"; herdrun_wait "$HERDRUN_LIMIT"; }
# expect_file WHAT FILE TEXT: FILE holds exactly TEXT and a final newline.
expect_file() {
    if printf '%s\n' "$3" | cmp -s - "$2"; then
        ok "$1"
    else
        fail "$1 ($2 holds '$(head -c 300 "$2" 2>&1 | tr '\n' ';')', expected '$(
            printf '%s' "$3" | tr '\n' ';');')"
    fi
}
# sums: the "RANK CKSUM" lines of the ranks (ckranks.sh), sorted, on one line.
sums() { sort -n "$OUT" | tr '\n' ';'; }
# ckranks.sh: what each rank read on its stdin (cksum: sum and byte count), after its rank.
cat >"$BIN/ckranks.sh" <<'EOF'
#!/bin/sh
echo "$HERD_RANK $(cksum)"
EOF
chmod +x "$BIN/ckranks.sh"
EMPTY=$(cksum </dev/null)

# --- 1. Whole lines: 8 ranks x 20000 lines through 4 KiB buffers -----------------------------
# many_lines WHAT SLEEP_US STREAMS ARGS...: 8 ranks of `lines 20000 SLEEP_US STREAMS` with
# herdrun ARGS; every line must arrive once, whole and in its rank's order (on stderr too with
# STREAMS both).
many_lines() {
    what=$1 sleep_us=$2 streams=$3
    shift 3
    job "$@" -n 8 "$BIN/lines" 20000 "$sleep_us" "$streams"
    expect_rc "$what: exit 0" 0
    expect_eq "$what: on stdout every line once, whole, in its rank's order" \
        "$(lines_problems "$OUT" 8 20000 | tr '\n' ';')" ""
    if [ "$streams" = both ]; then
        expect_eq "$what: on stderr every line once, whole, in its rank's order" \
            "$(lines_problems "$ERR" 8 20000 | tr '\n' ';')" ""
    fi
    check_clean "$what"
}
many_lines "8 x 20000 lines on this host" 0 out --oversubscribe
many_lines "8 x 20000 lines on 2 simulated nodes, stdout and stderr" 0 both \
    $SIM 2 --mca ras_simulator_slots 4
many_lines "8 x 20000 lines on this host, with pauses" 1000 out --oversubscribe
many_lines "8 x 20000 lines on 4 simulated nodes, with pauses, stdout and stderr" 1000 both \
    $SIM 4 --mca ras_simulator_slots 2
many_lines "8 x 20000 lines on 4 simulated nodes, --map-by node" 0 out \
    $SIM 4 --mca ras_simulator_slots 2 --map-by node

# A line longer than iof_base_line_max (64 KiB) is passed on in pieces: nothing of it is lost.
cat >"$BIN/longline.sh" <<'EOF'
#!/bin/sh
letter=$(echo abcdefgh | cut -c $((HERD_RANK + 1)))
head -c 204800 /dev/zero | tr '\0' "$letter"
echo
echo "end $HERD_RANK"
EOF
chmod +x "$BIN/longline.sh"
job $SIM 2 --mca ras_simulator_slots 1 --map-by node -n 2 "$BIN/longline.sh"
expect_rc "200 KiB lines: exit 0" 0
expect_eq "200 KiB lines of 2 ranks: every byte arrives (a, b, the rest)" \
    "$(tr -cd a <"$OUT" | wc -c) $(tr -cd b <"$OUT" | wc -c) $(tr -d ab <"$OUT" | wc -c)" \
    "204800 204800 14"
expect_eq "200 KiB lines of 2 ranks: each rank's last line once" \
    "$(grep -oE 'end [01]$' "$OUT" | sort | tr '\n' ';')" "end 0;end 1;"
check_clean "200 KiB lines"

# --- 2. stdin goes to rank 0 (by default) and only to it --------------------------------------
seq 1 1000000 >"$WORK/seq"
herdrun_piped "$WORK/seq" -n 2 sh -c 'echo "$HERD_RANK $(wc -l)"'
expect_rc "seq 1 1000000 | herdrun -n 2 wc -l: exit 0" 0
expect_eq "seq 1 1000000 | herdrun -n 2 wc -l: rank 0 reads every line, rank 1 none" "$(sums)" \
    "0 1000000;1 0;"
check_clean "seq | herdrun -n 2 on this host"

# On this host (no DVM) a file or pipe for one rank becomes that process's stdin as it is: no
# copy through herdrun. A terminal, or --stdin all, goes through herdrun.
herdrun_in "$WORK/seq" -n 2 sh -c 'if [ "$HERD_RANK" = 0 ]; then readlink /proc/$$/fd/0; fi'
expect_eq "herdrun -n 2 <FILE on this host: rank 0's stdin is the file itself" "$(cat "$OUT")" \
    "$WORK/seq"
check_clean "herdrun -n 2 <FILE on this host"
herdrun_in "$WORK/seq" -n 1 --stdin all sh -c 'readlink /proc/$$/fd/0'
expect_out "herdrun --stdin all <FILE on this host: a pipe from herdrun" "^pipe:"
check_clean "herdrun --stdin all <FILE on this host"

herdrun_piped "$WORK/seq" $SIM 2 --mca ras_simulator_slots 1 --map-by node -n 2 \
    sh -c 'echo "$HERD_RANK $(wc -l)"'
expect_rc "seq | herdrun on 2 simulated nodes: exit 0" 0
expect_eq "seq | herdrun on 2 simulated nodes: rank 0 reads every line, rank 1 (other node) none" \
    "$(sums)" "0 1000000;1 0;"
check_clean "seq | herdrun on 2 simulated nodes"

herdrun_in "$WORK/seq" $SIM 2 --mca ras_simulator_slots 1 --map-by node --stdin 1 -n 2 \
    sh -c 'echo "$HERD_RANK $(wc -l)"'
expect_rc "--stdin 1 from a file, rank 1 on another node: exit 0" 0
expect_eq "--stdin 1 from a file: rank 1 reads every line, rank 0 none" "$(sums)" \
    "0 0;1 1000000;"
check_clean "--stdin 1 from a file"

# --- 3. --stdin all, --stdin RANK, --stdin none -----------------------------------------------
head -c 1048576 /dev/urandom >"$WORK/in.bin"
SUM=$(cksum <"$WORK/in.bin")
herdrun_piped "$WORK/in.bin" --oversubscribe --stdin all -n 3 "$BIN/ckranks.sh"
expect_rc "--stdin all on this host: exit 0" 0
expect_eq "--stdin all on this host: every rank reads the whole input" "$(sums)" \
    "0 $SUM;1 $SUM;2 $SUM;"
check_clean "--stdin all on this host"

herdrun_in "$WORK/in.bin" $SIM 3 --mca ras_simulator_slots 1 --map-by node --stdin all -n 3 \
    "$BIN/ckranks.sh"
expect_rc "--stdin all on 3 simulated nodes: exit 0" 0
expect_eq "--stdin all on 3 simulated nodes: every rank reads the whole input" "$(sums)" \
    "0 $SUM;1 $SUM;2 $SUM;"
check_clean "--stdin all on 3 simulated nodes"

herdrun_in "$WORK/in.bin" --oversubscribe --stdin 2 -n 3 "$BIN/ckranks.sh"
expect_rc "--stdin 2 on this host: exit 0" 0
expect_eq "--stdin 2 on this host: rank 2 reads the whole input, the others nothing" "$(sums)" \
    "0 $EMPTY;1 $EMPTY;2 $SUM;"
check_clean "--stdin 2 on this host"

herdrun_piped "$WORK/in.bin" $SIM 3 --mca ras_simulator_slots 1 --map-by node --stdin 2 -n 3 \
    "$BIN/ckranks.sh"
expect_rc "--stdin 2 on 3 simulated nodes: exit 0" 0
expect_eq "--stdin 2 on 3 simulated nodes: rank 2 reads the whole input, the others nothing" \
    "$(sums)" "0 $EMPTY;1 $EMPTY;2 $SUM;"
check_clean "--stdin 2 on 3 simulated nodes"

# a rank the job does not have: said before anything starts (no rank would read the input)
for where in local sim; do
    args="--oversubscribe"
    [ "$where" = sim ] && args="$SIM 3 --mca ras_simulator_slots 1 --map-by node"
    # word splitting of $args is intended
    # shellcheck disable=SC2086
    herdrun_piped "$WORK/in.bin" $args --stdin 3 -n 3 "$BIN/ckranks.sh"
    expect_rc "--stdin 3 of 3 processes ($where): exit 1" 1
    expect_err "--stdin 3 of 3 processes ($where): says which ranks exist" \
        "--stdin 3 names no process of the job: it has 3 \\(ranks 0 to 2\\)"
    expect_eq "--stdin 3 of 3 processes ($where): nothing ran" "$(sums)" ""
    check_clean "--stdin 3 of 3 processes ($where)"
done

herdrun_piped "$WORK/in.bin" $SIM 2 --mca ras_simulator_slots 1 --map-by node --stdin none -n 2 \
    "$BIN/ckranks.sh"
expect_rc "--stdin none: exit 0" 0
expect_eq "--stdin none: no rank reads anything" "$(sums)" "0 $EMPTY;1 $EMPTY;"
check_clean "--stdin none"

# (herdrun --stdin none ...; cat) <INPUT: herdrun leaves its stdin alone, cat reads all of it.
# INPUT is the file itself or, with "pipe", a pipe that cat fills.
none_leaves_stdin() {
    what="--stdin none leaves herdrun's stdin (a $1) to the next reader"
    rm -f "$WORK/rest" "$WORK/rest.rc"
    shm_mark
    script='HERD_IT_TAG=$1 "$2" --stdin none -n 1 true; echo $? >"$3.rc"; cat >"$3"'
    if [ "$1" = pipe ]; then
        cat "$WORK/in.bin" | sh -c "$script" sh "$HERD_IT_TAG" "$HERD_BIN/herdrun/herdrun" \
            "$WORK/rest" >"$OUT" 2>"$ERR" &
    else
        sh -c "$script" sh "$HERD_IT_TAG" "$HERD_BIN/herdrun/herdrun" "$WORK/rest" \
            <"$WORK/in.bin" >"$OUT" 2>"$ERR" &
    fi
    run_pid=$!
    herdrun_wait "$HERDRUN_LIMIT"
    rc=$(cat "$WORK/rest.rc" 2>/dev/null || echo "none")
    expect_eq "$what: herdrun exits 0" "$rc" 0
    expect_eq "$what: all of it" "$(cksum <"$WORK/rest")" "$SUM"
    check_clean "$what"
}
none_leaves_stdin file
none_leaves_stdin pipe

# A rank that stops reading (head): the others still get everything, and the job ends well.
cat >"$BIN/head100.sh" <<'EOF'
#!/bin/sh
if [ "$HERD_RANK" = 0 ]; then echo "0 $(head -c 100 | cksum)"; else echo "$HERD_RANK $(cksum)"; fi
EOF
chmod +x "$BIN/head100.sh"
herdrun_piped "$WORK/in.bin" $SIM 3 --mca ras_simulator_slots 1 --map-by node --stdin all -n 3 \
    "$BIN/head100.sh"
expect_rc "--stdin all, rank 0 reads 100 bytes only: exit 0" 0
expect_eq "--stdin all, rank 0 reads 100 bytes only: the others read the whole input" "$(sums)" \
    "0 $(head -c 100 "$WORK/in.bin" | cksum);1 $SUM;2 $SUM;"
check_clean "--stdin all, rank 0 reads 100 bytes only"

# yes | herdrun -n 2 head -n 5: stdin never ends, the target stops reading; the job ends.
cp "$(command -v yes)" "$BIN/yes"
rm -f "$WORK/stdin.fifo"
mkfifo "$WORK/stdin.fifo"
shm_mark
HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herdrun/herdrun" $SIM 2 --mca ras_simulator_slots 1 \
    --map-by node -n 2 head -n 5 <"$WORK/stdin.fifo" >"$OUT" 2>"$ERR" &
run_pid=$!
"$BIN/yes" >"$WORK/stdin.fifo" &
feed_pid=$!
herdrun_wait "$HERDRUN_LIMIT"
expect_rc "yes | herdrun -n 2 head -n 5: exit 0" 0
expect_eq "yes | herdrun -n 2 head -n 5: rank 0 prints 5 lines, rank 1 none" \
    "$(tr '\n' ' ' <"$OUT")" "y y y y y "
wait_gone "$feed_pid" 5 || kill -9 "$feed_pid" 2>/dev/null
wait "$feed_pid" 2>/dev/null
check_clean "yes | herdrun -n 2 head -n 5"

# herdrun -n 2 yes | head -n 2: nobody reads herdrun's output any more, so the job stops, as the
# writer of a pipeline that gets SIGPIPE (exit 141), on this host and on simulated nodes
for where in local sim; do
    args=""
    [ "$where" = sim ] && args="$SIM 2 --mca ras_simulator_slots 1 --map-by node"
    what="herdrun -n 2 yes | head -n 2 ($where)"
    rm -f "$WORK/head.rc"
    shm_mark
    sh -c '{ HERD_IT_TAG=$1 "$2" $3 -n 2 "$4"; echo $? >"$5"; } | head -n 2' sh \
        "$HERD_IT_TAG" "$HERD_BIN/herdrun/herdrun" "$args" "$BIN/yes" "$WORK/head.rc" \
        </dev/null >"$OUT" 2>"$ERR" &
    run_pid=$!
    herdrun_wait "$HERDRUN_LIMIT"
    expect_eq "$what: herdrun exits 141 (128 + SIGPIPE)" "$(cat "$WORK/head.rc" 2>&1)" 141
    expect_err "$what: herdrun says why the job stopped" \
        "nobody reads its standard output any more \\(the pipe was closed\\): stopping job"
    expect_eq "$what: head got its 2 lines" "$(tr '\n' ' ' <"$OUT")" "y y "
    check_clean "$what"
done

# stdout on a full disk (/dev/full): said once, the job goes on, and herdrun exits 1
rm -rf "$WORK/full"
mkdir -p "$WORK/full"
shm_mark
HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herdrun/herdrun" -n 2 \
    sh -c 'echo lost; sleep 0.3; echo lost again; echo ok >"$0/done.$HERD_RANK"' "$WORK/full" \
    </dev/null >/dev/full 2>"$ERR"
rc=$?
expect_rc "stdout on a full disk: herdrun exits 1 (the output was lost)" 1
expect_err "stdout on a full disk: herdrun says so" \
    "cannot write to its standard output \\(No space left on device\\): what job .* writes there is lost"
expect_eq "stdout on a full disk: said once" "$(grep -c 'cannot write to its standard output' "$ERR")" 1
expect_eq "stdout on a full disk: the job went on" "$(ls "$WORK/full" | tr '\n' ' ')" "done.0 done.1 "
check_clean "stdout on a full disk"

# herdrun run with stdin, stdout or stderr closed: its own sockets never take their numbers
shm_mark
HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herdrun/herdrun" -n 1 sh -c 'readlink /proc/$$/fd/0' \
    <&- >"$OUT" 2>"$ERR"
rc=$?
expect_rc "herdrun <&-: exit 0" 0
expect_out "herdrun <&-: the process reads /dev/null" "^/dev/null$"
check_clean "herdrun <&-"
shm_mark
HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herdrun/herdrun" -n 1 sh -c 'echo out; echo err >&2' \
    </dev/null >&- 2>"$ERR"
rc=$?
expect_rc "herdrun >&-: exit 0" 0
expect_eq "herdrun >&-: stderr still comes" "$(cat "$ERR")" "err"
check_clean "herdrun >&-"
shm_mark
HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herdrun/herdrun" -n 1 sh -c 'echo out; echo err >&2' \
    </dev/null >"$OUT" 2>&-
rc=$?
expect_rc "herdrun 2>&-: exit 0" 0
expect_eq "herdrun 2>&-: stdout still comes" "$(cat "$OUT")" "out"
check_clean "herdrun 2>&-"

job --stdin bogus -n 1 "$BIN/ckranks.sh"
expect_rc "--stdin bogus: exit 1" 1
expect_err "--stdin bogus: the error names the option and the value" \
    "bogus.*--stdin|--stdin.*bogus"
expect_eq "--stdin bogus: nothing started" "$(cat "$OUT")" ""
check_clean "--stdin bogus"

# --- 4. Large stdin -------------------------------------------------------------------------
head -c 100663296 /dev/urandom >"$WORK/big.in"
BIGSUM=$(cksum <"$WORK/big.in")
herdrun_piped "$WORK/big.in" $SIM 2 --mca ras_simulator_slots 1 --map-by node --stdin 1 -n 2 \
    "$BIN/ckranks.sh"
expect_rc "96 MiB on stdin to rank 1 on another node: exit 0" 0
expect_eq "96 MiB on stdin to rank 1 on another node: arrives whole (cksum)" "$(sums)" \
    "0 $EMPTY;1 $BIGSUM;"
check_clean "96 MiB on stdin"

herdrun_in "$WORK/big.in" -n 1 "$BIN/ckranks.sh"
expect_rc "96 MiB on stdin (a file) on this host: exit 0" 0
expect_eq "96 MiB on stdin (a file) on this host: arrives whole (cksum)" "$(sums)" "0 $BIGSUM;"
check_clean "96 MiB on stdin on this host"

# peak_kb PIDS...: the largest VmHWM (peak resident memory, kB) of these processes, 0 for none.
peak_kb() {
    for p in "$@"; do
        sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB$/\1/p' "/proc/$p/status" 2>/dev/null
    done | sort -n | tail -n 1 | grep . || echo 0
}
# sample_memory: update $peak_run (herdrun, $run_pid) and $peak_daemons (every other process of
# this build: daemons and session daemons) from their VmHWM now.
sample_memory() {
    m=$(peak_kb "$run_pid")
    [ "$m" -gt "$peak_run" ] && peak_run=$m
    m=$(peak_kb $(build_pids | grep -vx "$run_pid"))
    [ "$m" -gt "$peak_daemons" ] && peak_daemons=$m
}
# gone: herdrun ($run_pid) has ended (then waiting for what its job does is pointless).
gone() { ! kill -0 "$run_pid" 2>/dev/null; }
# drain: wait for herdrun like herdrun_wait $HERDRUN_LIMIT, sampling memory meanwhile.
drain() {
    n=0
    while ! gone && [ $n -lt $((HERDRUN_LIMIT * 20)) ]; do
        sample_memory
        n=$((n + 1))
        sleep 0.05
    done
    herdrun_wait 1
}
# expect_bounded WHAT: the peak memory of herdrun and of the daemons was seen, below 64 MiB.
expect_bounded() {
    for who in herdrun daemons; do
        if [ $who = herdrun ]; then peak=$peak_run; else peak=$peak_daemons; fi
        check="$1: the memory of $who stays below 64 MiB (peak $((peak / 1024)) MiB)"
        if [ "$peak" -eq 0 ]; then
            fail "$check: read from /proc/PID/status (VmHWM)"
        elif [ "$peak" -lt 65536 ]; then
            ok "$check"
        else
            fail "$check"
        fi
    done
}

# A target rank that does not read: herdrun must not take all of its stdin into memory. The rank
# says it runs, then reads nothing until DIR/go; meanwhile herdrun's offset in its stdin (a
# file) is watched until it stops moving (or reaches the end).
cat >"$BIN/hold.sh" <<'EOF'
#!/bin/sh
touch "$1/ready.$HERD_RANK"
i=0
while [ ! -e "$1/go" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
echo "$HERD_RANK $(cksum)"
EOF
chmod +x "$BIN/hold.sh"
fresh hold
shm_mark
HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herdrun/herdrun" $SIM 2 --mca ras_simulator_slots 1 \
    --map-by node --stdin 1 -n 2 "$BIN/hold.sh" "$dir" <"$WORK/big.in" >"$OUT" 2>"$ERR" &
run_pid=$!
peak_run=0 peak_daemons=0
if wait_for 20 sh -c "[ -e $dir/ready.1 ] || ! kill -0 $run_pid 2>/dev/null" && ! gone; then
    watched=yes last=-1 same=0 n=0
    while [ $same -lt 20 ] && [ $n -lt 400 ]; do
        sample_memory
        pos=$(sed -n 's/^pos:[[:space:]]*//p' "/proc/$run_pid/fdinfo/0" 2>/dev/null)
        if [ "$pos" = "$last" ]; then same=$((same + 1)); else same=0; fi
        last=$pos n=$((n + 1))
        sleep 0.05
    done
    if [ "${pos:-0}" -lt 100663296 ]; then
        ok "a rank that does not read: herdrun stops reading its stdin (at $pos bytes of 96 MiB)"
    else
        fail "a rank that does not read: herdrun stops reading its stdin (read ${pos:-?} bytes)"
    fi
else
    watched=no
    fail "a rank that does not read: rank 1 starts"
fi
touch "$dir/go"
drain
expect_rc "a rank that reads late: exit 0" 0
expect_eq "a rank that reads late: it gets the whole 96 MiB (cksum)" "$(sums)" \
    "0 $EMPTY;1 $BIGSUM;"
[ $watched = yes ] && expect_bounded "a rank that reads its 96 MiB stdin late"
check_clean "a rank that reads late"
rm -f "$WORK/big.in"

# --- 5. Last words ---------------------------------------------------------------------------
# lastwords.sh DIR: rank 1 writes 1000 lines on stdout and on stderr (more than a pipe holds),
# says so in DIR/written and sleeps; rank 0 waits for that (at most 30 s), then exits 3, which
# aborts the job: what rank 1 wrote must all come out.
PAD=0123456789012345678901234567890123456789012345678901234567890123456789
cat >"$BIN/lastwords.sh" <<EOF
#!/bin/sh
if [ "\$HERD_RANK" = 1 ]; then
    i=0
    while [ \$i -lt 1000 ]; do
        echo "last \$i $PAD"
        echo "err \$i" >&2
        i=\$((i + 1))
    done
    touch "\$1/written"
    exec $BIN/sleep 30
fi
i=0
while [ ! -e "\$1/written" ] && [ \$i -lt 600 ]; do sleep 0.05; i=\$((i + 1)); done
exit 3
EOF
chmod +x "$BIN/lastwords.sh"
# last_words WHAT ARGS...: lastwords.sh with herdrun ARGS.
last_words() {
    what=$1
    shift
    fresh lastwords
    job "$@" -n 2 "$BIN/lastwords.sh" "$dir"
    expect_rc "$what: herdrun exits 3" 3
    expect_eq "$what: all 1000 stdout lines of the killed rank arrive, whole" \
        "$(grep -cE "^last [0-9]+ $PAD\$" "$OUT") of $(grep -E '^last ' "$OUT" | sort -u |
            wc -l) different" "1000 of 1000 different"
    expect_eq "$what: all 1000 stderr lines of the killed rank arrive, whole" \
        "$(grep -cE '^err [0-9]+$' "$ERR") of $(grep -E '^err ' "$ERR" | sort -u |
            wc -l) different" "1000 of 1000 different"
    check_clean "$what"
}
last_words "last words before an abort, on this host"
last_words "last words before an abort, on 2 simulated nodes" \
    $SIM 2 --mca ras_simulator_slots 1 --map-by node

# Output just before a rank exits with an error (which aborts the job): all of it.
seq 1 100000 >"$WORK/seq100k"
job $SIM 2 --mca ras_simulator_slots 1 --map-by node -n 2 \
    sh -c "[ \$HERD_RANK = 1 ] || exec $BIN/sleep 30; seq 1 100000; seq 1 1000 >&2; exit 5"
expect_rc "output just before exit 5: herdrun exits 5" 5
expect_eq "output just before exit 5: all 100000 lines arrive (cksum)" "$(cksum <"$OUT")" \
    "$(cksum <"$WORK/seq100k")"
expect_eq "output just before exit 5: the 1000 stderr lines too" \
    "$(grep -xcE '[0-9]+' "$ERR")" 1000
check_clean "output just before exit 5"

# A last line without newline: as is untagged; a line of its own, newline added, tagged.
job -n 1 sh -c 'printf "first\nno newline"; printf "err no newline" >&2'
expect_rc "no final newline on this host: exit 0" 0
expect_eq "no final newline: stdout ends with exactly 'no newline'" \
    "$(od -An -c "$OUT" | tr -s ' \n' ' ')" "$(printf 'first\nno newline' | od -An -c |
        tr -s ' \n' ' ')"
expect_eq "no final newline: stderr is exactly 'err no newline'" \
    "$(od -An -c "$ERR" | tr -s ' \n' ' ')" "$(printf 'err no newline' | od -An -c |
        tr -s ' \n' ' ')"
check_clean "no final newline on this host"

job $SIM 2 --mca ras_simulator_slots 1 --map-by node -n 2 \
    sh -c '[ $HERD_RANK = 0 ] || printf "first\nno newline"'
expect_rc "no final newline from another node: exit 0" 0
expect_eq "no final newline from another node: stdout ends with exactly 'no newline'" \
    "$(od -An -c "$OUT" | tr -s ' \n' ' ')" "$(printf 'first\nno newline' | od -An -c |
        tr -s ' \n' ' ')"
check_clean "no final newline from another node"

job $SIM 2 --mca ras_simulator_slots 1 --map-by node --tag-output -n 2 \
    sh -c 'printf "x$HERD_JOBID.$HERD_RANK"; printf "e$HERD_JOBID.$HERD_RANK" >&2'
expect_rc "no final newline, --tag-output: exit 0" 0
expect_eq "no final newline, --tag-output: one tagged line per rank, ended by a newline" \
    "$(grep -cE '^\[([0-9]+),([01])\]<stdout>: x\1\.\2$' "$OUT") $(sort -u "$OUT" | wc -l) $(
        wc -l <"$OUT")" "2 2 2"
expect_eq "no final newline, --tag-output: the same on stderr" \
    "$(grep -cE '^\[([0-9]+),([01])\]<stderr>: e\1\.\2$' "$ERR") $(sort -u "$ERR" | wc -l) $(
        wc -l <"$ERR")" "2 2 2"
check_clean "no final newline, --tag-output"

job --timestamp-output -n 1 sh -c 'printf "first\nno newline"'
expect_rc "no final newline, --timestamp-output: exit 0" 0
d='[0-9]'
expect_eq "no final newline, --timestamp-output: both lines stamped, the last ended by a newline" \
    "$(grep -cE "^\[$d{4}-$d{2}-$d{2} $d{2}:$d{2}:$d{2}\.$d{6}\] (first|no newline)\$" "$OUT") $(
        wc -l <"$OUT")" "2 2"
check_clean "no final newline, --timestamp-output"

# --- 6. Output options -----------------------------------------------------------------------
# stdout and stderr stay apart, in order, from 3 ranks on 2 nodes.
job $SIM 2 --mca ras_simulator_slots 2 -n 3 "$BIN/talk.sh" 1000
expect_rc "stdout and stderr: exit 0" 0
expect_eq "stdout holds every rank's stdout lines, in order, and nothing else" \
    "$(talk_problems "$OUT" out 3 1000 | tr '\n' ';')" ""
expect_eq "stderr holds every rank's stderr lines, in order, and nothing else" \
    "$(talk_problems "$ERR" err 3 1000 | tr '\n' ';')" ""
check_clean "stdout and stderr"

# tagged WHAT RANKS ARGS...: talk.sh 5 by RANKS ranks with --tag-output and herdrun ARGS.
tagged() {
    what=$1 ranks=$2
    shift 2
    job --tag-output "$@" "$BIN/talk.sh" 5
    expect_rc "$what: exit 0" 0
    expect_eq "$what: every stdout line tagged [JOBID,RANK]<stdout>, in order" \
        "$(talk_problems "$OUT" out "$ranks" 5 stdout | tr '\n' ';')" ""
    expect_eq "$what: every stderr line tagged [JOBID,RANK]<stderr>, in order" \
        "$(talk_problems "$ERR" err "$ranks" 5 stderr | tr '\n' ';')" ""
    check_clean "$what"
}
tagged "--tag-output on this host" 2 -n 2
tagged "--tag-output on 2 simulated nodes" 3 $SIM 2 --mca ras_simulator_slots 2 -n 3

# Timestamps are local time: with TZ 5:30 h from UTC, a UTC stamp is not between FROM and TO.
TZ_OFF=HRD-5:30
# stamped WHAT RANKS TAG ARGS...: talk.sh 5 by RANKS ranks with --timestamp-output and herdrun
# ARGS; TAG is stdout when ARGS hold --tag-output, else empty.
stamped() {
    what=$1 ranks=$2 tag=$3
    shift 3
    TZ=$TZ_OFF
    export TZ
    from=$(date '+%Y-%m-%d %H:%M:%S')
    job --timestamp-output "$@" "$BIN/talk.sh" 5
    to=$(date '+%Y-%m-%d %H:%M:%S')
    unset TZ
    expect_rc "$what: exit 0" 0
    expect_eq "$what: every stdout line stamped with the local time, in order" \
        "$(talk_problems "$OUT" out "$ranks" 5 "$tag" "$from" "$to" | tr '\n' ';')" ""
    expect_eq "$what: every stderr line stamped with the local time, in order" \
        "$(talk_problems "$ERR" err "$ranks" 5 "$([ -n "$tag" ] && echo stderr)" "$from" "$to" |
            tr '\n' ';')" ""
    check_clean "$what"
}
stamped "--timestamp-output on this host" 2 "" -n 2
stamped "--timestamp-output on 2 simulated nodes" 3 "" $SIM 2 --mca ras_simulator_slots 2 -n 3
stamped "--timestamp-output --tag-output (timestamp first)" 3 stdout --tag-output \
    $SIM 2 --mca ras_simulator_slots 2 -n 3

# --merge-stderr-to-stdout: each rank's stderr lines among its stdout lines, in the order written.
job --merge-stderr-to-stdout $SIM 2 --mca ras_simulator_slots 2 -n 3 "$BIN/talk.sh" 200
expect_rc "--merge-stderr-to-stdout: exit 0" 0
expect_eq "--merge-stderr-to-stdout: stdout holds out and err lines, in each rank's order" \
    "$(talk_problems "$OUT" "out err" 3 200 | tr '\n' ';')" ""
expect_eq "--merge-stderr-to-stdout: nothing on stderr" "$(head -c 300 "$ERR")" ""
check_clean "--merge-stderr-to-stdout"

# expect_rank_files WHAT DIR RANKS N: DIR/rank.R/stdout and stderr hold the raw lines of
# `talk.sh N` by each of RANKS ranks (no tag), job id $jobid.
expect_rank_files() {
    r=0
    while [ $r -lt "$3" ]; do
        want_out=$(seq 0 $(($4 - 1)) | sed "s/^/out $jobid $r /")
        want_err=$(seq 0 $(($4 - 1)) | sed "s/^/err $jobid $r /")
        expect_file "$1: rank.$r/stdout holds rank $r's stdout, untagged" "$2/rank.$r/stdout" \
            "$want_out"
        expect_file "$1: rank.$r/stderr holds rank $r's stderr, untagged" "$2/rank.$r/stderr" \
            "$want_err"
        r=$((r + 1))
    done
}
fresh outfile
job --tag-output --output-filename "$dir/new/folder" $SIM 2 --mca ras_simulator_slots 2 -n 3 \
    "$BIN/talk.sh" 4
expect_rc "--output-filename: exit 0" 0
jobid=$(sed -n '1s/^\[\([0-9]*\),.*/\1/p' "$OUT")
expect_eq "--output-filename: one rank.N folder per rank, made as needed" \
    "$(ls "$dir/new/folder" 2>&1 | tr '\n' ' ')" "rank.0 rank.1 rank.2 "
expect_rank_files "--output-filename" "$dir/new/folder" 3 4
expect_eq "--output-filename: stdout is still on the terminal, tagged" \
    "$(talk_problems "$OUT" out 3 4 stdout | tr '\n' ';')" ""
expect_eq "--output-filename: stderr is still on the terminal, tagged" \
    "$(talk_problems "$ERR" err 3 4 stderr | tr '\n' ';')" ""
check_clean "--output-filename"

fresh nocopy
job --output-filename "$dir:nocopy" -n 2 "$BIN/talk.sh" 4
expect_rc "--output-filename DIR:nocopy: exit 0" 0
expect_eq "--output-filename DIR:nocopy: nothing on stdout or stderr" \
    "$(cat "$OUT" "$ERR" | head -c 300)" ""
jobid=$(sed -n '1s/^out \([0-9]*\) .*/\1/p' "$dir/rank.0/stdout" 2>/dev/null)
expect_rank_files "--output-filename DIR:nocopy" "$dir" 2 4
check_clean "--output-filename DIR:nocopy"

# --- 7. A slow reader: the processes wait, memory stays bounded, every byte arrives -----------
# slow_reader WHAT BYTES RANKS ARGS...: RANKS ranks of `blast BYTES` with herdrun ARGS, herdrun's
# stdout into a pipe nobody reads until the writers have stopped making progress (or wrote
# everything) for 1 s, then read to the end: every writer must have been held back, herdrun and
# the daemons must stay below 64 MiB, and every byte must arrive.
slow_reader() {
    what=$1 bytes=$2 ranks=$3
    shift 3
    fresh slow
    mkfifo "$dir/fifo"
    # the reader: opens the pipe, reads nothing until $dir/go (at most 60 s), then counts
    sh -c 'i=0; while [ ! -e "$1/go" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
        exec wc -c' sh "$dir" <"$dir/fifo" >"$dir/count" &
    reader_pid=$!
    : >"$OUT"
    shm_mark
    HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herdrun/herdrun" "$@" -n "$ranks" sh -c \
        "exec $BIN/blast $bytes $dir/pid.\$HERD_RANK" </dev/null >"$dir/fifo" 2>"$ERR" &
    run_pid=$!
    peak_run=0 peak_daemons=0
    if wait_for 20 sh -c "[ \$(ls $dir | grep -c '^pid\.[0-9]*\$') -eq $ranks ] ||
        ! kill -0 $run_pid 2>/dev/null" && ! gone; then
        pids=$(cat "$dir"/pid.[0-9]*)
        watched=yes last=-1 same=0 n=0
        while [ $same -lt 20 ] && [ $n -lt 400 ]; do
            sample_memory
            written=$(for p in $pids; do sed -n 's/^wchar: //p' "/proc/$p/io" 2>/dev/null; done |
                tr '\n' ' ')
            if [ "$written" = "$last" ]; then same=$((same + 1)); else same=0; fi
            last=$written n=$((n + 1))
            sleep 0.05
        done
        if [ "$(echo $written | wc -w)" -eq "$ranks" ]; then
            ok "$what: the writers wait while nobody reads (written: $written bytes)"
        else
            fail "$what: the writers wait while nobody reads (some wrote all $bytes bytes)"
        fi
    else
        watched=no
        fail "$what: the $ranks writers start"
    fi
    touch "$dir/go"
    drain
    expect_rc "$what: exit 0" 0
    wait_gone "$reader_pid" 10 || kill -9 "$reader_pid" 2>/dev/null
    wait "$reader_pid" 2>/dev/null
    expect_eq "$what: every byte arrives" "$(cat "$dir/count" 2>/dev/null)" "$((bytes * ranks))"
    [ $watched = yes ] && expect_bounded "$what"
    check_clean "$what"
}
slow_reader "200 MiB to a slow reader on this host" 209715200 1
slow_reader "2 x 100 MiB to a slow reader from 2 simulated nodes" 104857600 2 \
    $SIM 2 --mca ras_simulator_slots 1 --map-by node

# --- 9. attaching to a running job's output on a persistent DVM ------------------------------
# A job ticks (one numbered line every 20 ms) until told to stop; a tool attaches, gets ticks,
# another attaches and is killed (detached) midway; the job's own output stays complete.
uri=$WORK/attach.uri
shm_mark
HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herd-dvm/herd-dvm" --mca ras simulator \
    --mca ras_simulator_num_nodes 2 --mca ras_simulator_slots 2 --daemonize --report-uri "$uri" \
    >"$OUT" 2>"$ERR"
rc=$?
expect_rc "--attach: herd-dvm comes up" 0
adir=$WORK/attach
mkdir -p "$adir"
cat >"$adir/ticker.sh" <<'EOF2'
#!/bin/sh
# ticker.sh DIR: rank 1 ticks until DIR/stop exists (at most 3000 ticks), then says last
[ "$HERD_RANK" = 1 ] || exit 0
i=0
while [ ! -e "$1/stop" ] && [ $i -lt 3000 ]; do echo "tick $i"; i=$((i + 1)); sleep 0.02; done
echo "last $i"
EOF2
chmod +x "$adir/ticker.sh"
HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herdrun/herdrun" --dvm-uri "$uri" -n 2 --map-by node \
    "$adir/ticker.sh" "$adir" </dev/null >"$adir/job.out" 2>"$adir/job.err" &
job=$!
# the job's first tick: it runs, and its herdrun listens for tools
wait_for 30 grep -q '^tick 0$' "$adir/job.out" || fail "--attach: the job starts ticking"
jobid=1
HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herdrun/herdrun" --dvm-uri "$uri" --attach "$jobid" \
    --tag-output </dev/null >"$adir/tool1.out" 2>"$adir/tool1.err" &
tool1=$!
HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herdrun/herdrun" --dvm-uri "$uri" --attach "$jobid" \
    </dev/null >"$adir/tool2.out" 2>"$adir/tool2.err" &
tool2=$!
ticks() { [ "$(grep -c tick "$1" 2>/dev/null)" -ge "$2" ]; }
wait_for 30 ticks "$adir/tool1.out" 5 || fail "--attach: the first tool gets ticks"
wait_for 30 ticks "$adir/tool2.out" 5 || fail "--attach: the second tool gets ticks"
kill "$tool2" 2>/dev/null # detach the second one midway
wait "$tool2" 2>/dev/null
n_now=$(grep -c tick "$adir/job.out")
wait_for 30 ticks "$adir/job.out" $((n_now + 10)) || fail "--attach: the job goes on after a tool detached"
touch "$adir/stop"
if wait_gone "$job" 60; then wait "$job"; rc=$?; else kill -9 "$job"; rc=137; fi
expect_rc "--attach: the job ends well" 0
if wait_gone "$tool1" 30; then wait "$tool1"; rc=$?; else kill -9 "$tool1"; rc=137; fi
expect_rc "--attach: the attached tool ends with the job, exit 0" 0
last=$(sed -n 's/^last //p' "$adir/job.out")
expect_eq "--attach: the job's own output has every tick, in order, and its last line" \
    "$(grep -c '^tick ' "$adir/job.out") $(awk '/^tick/ { if ($2 != n) bad++; n++ } END { print bad+0 }' "$adir/job.out")" \
    "$last 0"
# the tool saw a run of consecutive ticks (from when it attached) up to the last line, tagged
first=$(sed -n '1s/^\[1,1\]<stdout>: tick \([0-9]*\)$/\1/p' "$adir/tool1.out")
expect_eq "--attach: the tool's lines are tagged, consecutive, and end with the last line" \
    "$(awk -v f="${first:-x}" '{ sub(/^\[1,1\]<stdout>: /, ""); if ($1 == "tick") { if ($2 != f + n) bad++; n++ } else if ($1 == "last") { last = $2 } else bad++ } END { print bad+0, last }' "$adir/tool1.out")" \
    "0 $last"
HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herdrun/herdrun" --dvm-uri "$uri" --attach 99 </dev/null \
    >"$OUT" 2>"$ERR"
rc=$?
expect_fail "--attach to a job that does not run fails"
expect_err "--attach: ... saying the job is not running" "job 99 is not running"
tool_sock=$(sed -n 's/^tool //p' "$uri")
expect_eq "--attach: the DVM's contact file names its tool socket" "${tool_sock:+yes}" yes
"$HERD_BIN/herd-dvm/herd-dvm" --shutdown --dvm-uri "$uri" >"$OUT" 2>"$ERR"
rc=$?
expect_rc "--attach: the DVM shuts down" 0
wait_for 10 sh -c "[ -z \"\$(ps -eo args= | grep -F '$HERD_BUILDDIR' | grep -E 'herdd( |$)' | grep -v grep)\" ]" ||
    true
# this DVM's (DVM.job-N.iof beside its DVM.sock): others' sockets in the shared folder are not ours
expect_eq "--attach: no attach socket is left" \
    "$(ls "${tool_sock%.sock}".job-*.iof 2>/dev/null | wc -l)" 0
check_clean "--attach"

# --- 8. herd-info ----------------------------------------------------------------------------
herd_info
expect_rc "herd-info runs" 0
expect_out "herd-info lists the iof framework's default component" "MCA iof: default \("
herd_info --parsable --all
expect_out "herd-info shows iof_base_window (bytes)" \
    '^mca:iof:base:param:iof_base_window:value:[1-9][0-9]*$'
expect_out "herd-info shows iof_base_line_max, 64 KiB by default" \
    '^mca:iof:base:param:iof_base_line_max:value:65536$'

finish
