# SPDX-License-Identifier: BSD-3-Clause
# Shared helpers for the integration tests: run the real binaries from the build tree, check
# what a user sees, count passes and failures, and check nothing is left behind.
# Each test script sources this, calls `expect_*` helpers, and ends with `finish`.
set -u
: "${HERD_BUILDDIR:?run through make check}"
: "${HERD_SRCDIR:?run through make check}"
HERD_BIN=$HERD_BUILDDIR/orte/tools
LIBTOOL=$HERD_BUILDDIR/libtool
passed=0
failed=0
TEST_STARTED=$(date +%s)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/herd-it-XXXXXX")
# However the test ends (finish, a failed command under set -u, a signal from make or a
# timeout), what it started goes with it: its processes are killed, its leftover segments
# removed, its test hosts torn down, its work folder removed. finish has reported them first.
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
trap test_teardown EXIT
# Everything this test starts through the helpers below carries HERD_IT_TAG in its environment
# (herdrun and herd-dvm pass their environment on to daemons and processes): how its processes
# are told from those of the tests running beside it. Not exported: the test's own helpers
# (ps, grep) must not carry it.
HERD_IT_TAG=$(basename "$WORK")
OUT=$WORK/out
ERR=$WORK/err
# Shared-memory segments already there (another user's or a concurrent benchmark's job): not
# this test's to report.
SHM_AT_START=$WORK/shm.at-start
ls /dev/shm 2>/dev/null | grep -e "^herd-$(id -u)-" -e '^vader_segment\.' | sort >"$SHM_AT_START"

# herd_info ARGS...: run the uninstalled herd-info, stdout to $OUT, stderr to $ERR, status in $rc.
herd_info() {
    "$HERD_BIN/herd-info/herd-info" "$@" >"$OUT" 2>"$ERR"
    rc=$?
}

# HERD_TEST_TIMES=1: each PASS/FAIL line ends with the seconds since the test started (to see
# where a test spends its time).
case_time() { [ -n "${HERD_TEST_TIMES:-}" ] && echo " [$(($(date +%s) - TEST_STARTED)) s]"; }
ok() { passed=$((passed + 1)); echo "PASS: $1$(case_time)"; }
fail() {
    failed=$((failed + 1))
    echo "FAIL: $1$(case_time)"
    echo "  --- stdout (first 20 lines)"; head -n 20 "$OUT" 2>/dev/null | sed 's/^/  /'
    echo "  --- stderr (first 20 lines)"; head -n 20 "$ERR" 2>/dev/null | sed 's/^/  /'
}
# expect_rc WHAT CODE: the last command's exit status
expect_rc() { if [ "$rc" -eq "$2" ]; then ok "$1"; else fail "$1 (exit $rc, expected $2)"; fi; }
expect_fail() { if [ "$rc" -ne 0 ]; then ok "$1"; else fail "$1 (exit 0, expected failure)"; fi; }
# expect_out WHAT PATTERN / expect_err WHAT PATTERN: grep -E in stdout / stderr
expect_out() { if grep -Eq -- "$2" "$OUT"; then ok "$1"; else fail "$1 (stdout lacks /$2/)"; fi; }
expect_err() { if grep -Eq -- "$2" "$ERR"; then ok "$1"; else fail "$1 (stderr lacks /$2/)"; fi; }
# expect_eq WHAT GOT WANT: two values are the same
expect_eq() { if [ "$2" = "$3" ]; then ok "$1"; else fail "$1 (got '$2', expected '$3')"; fi; }
expect_no_out() { if grep -Eq -- "$2" "$OUT"; then fail "$1 (stdout has /$2/)"; else ok "$1"; fi; }
expect_no_err() { if grep -Eq -- "$2" "$ERR"; then fail "$1 (stderr has /$2/)"; else ok "$1"; fi; }

# Nothing this test started may outlive it: no process (tagged, running from $WORK, or inside
# its test hosts; test_pids), no herd shared-memory segment it made. Other tests run beside this
# one (make check -j): their processes and segments are theirs to check, and
# contrib/run-tests.sh checks once all are done that nothing of the build is left at all.
no_test_pids() { [ -z "$(test_pids)" ]; }
check_leftovers() {
    local left shm
    # an ssh session or Slurm step of a test host may take a moment to end
    wait_for 5 no_test_pids
    left=$(test_pids)
    if [ -n "$left" ]; then
        fail "no herd process left behind: $(ps -o pid=,args= -p "$(echo $left | tr ' ' ,)" |
            tr '\n' ';')"
    else
        ok "no herd process left behind"
    fi
    shm=$(new_shm "$SHM_AT_START")
    if [ -n "$shm" ]; then
        fail "no herd shared memory left in /dev/shm: $(echo $shm)"
    else
        ok "no herd shared memory left in /dev/shm"
    fi
}

finish() {
    check_leftovers
    echo "elapsed: $(($(date +%s) - TEST_STARTED)) s"
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}

# herd_dvm ARGS...: run the uninstalled herd-dvm like herd_info (stdout $OUT, stderr $ERR, $rc).
# The files are opened to append after being emptied, here and in herdrun: a daemonized DVM keeps
# writing its log into them, and a writer at its own offset would overwrite the next command's.
herd_dvm() {
    : >"$OUT"
    : >"$ERR"
    HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herd-dvm/herd-dvm" "$@" >>"$OUT" 2>>"$ERR"
    rc=$?
}

# wait_gone PID SECONDS: wait until a process is gone; false if it is still there.
wait_gone() {
    local i
    i=0
    while kill -0 "$1" 2>/dev/null; do
        i=$((i + 1))
        [ "$i" -gt $(($2 * 20)) ] && return 1
        sleep 0.05
    done
    return 0
}

# Daemons (herdd) of this build that this test started and that still run.
herdd_pids() {
    local p
    for p in $(test_pids); do
        case $(ps -o args= -p "$p" 2>/dev/null) in *"$HERD_BUILDDIR"*herdd*) echo "$p" ;; esac
    done
}
# no_herdd: true when no node daemon this test started is left
no_herdd() { [ -z "$(herdd_pids)" ]; }

# --- a persistent DVM (herd-dvm --daemonize) --------------------------------------------------
# start_dvm ARGS...: start one whose contact file is $uri; what it says later lands in
# $WORK/dvm.log, not in $ERR (the next herdrun would truncate that); its status in $rc
start_dvm() {
    HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herd-dvm/herd-dvm" "$@" --daemonize --report-uri "$uri" \
        </dev/null >"$WORK/dvm.out" 2>"$WORK/dvm.log"
    rc=$?
}
# daemon_pid_of ROOT VPID: the pid of node daemon VPID started by process ROOT (a DVM's root or
# herdrun with its own DVM)
daemon_pid_of() {
    local p
    for p in $(ps -o pid= --ppid "$1"); do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "HERD_DVM_VPID=$2" && echo "$p"
    done
}
# dvm_daemon_pid URI VPID: the same for the DVM whose contact file is URI
dvm_daemon_pid() { daemon_pid_of "$(sed -n 's/^pid //p' "$1")" "$2"; }
# expect_log WHAT REGEX: the DVM's log says REGEX
expect_log() {
    if grep -Eq -- "$2" "$WORK/dvm.log"; then ok "$1"; else fail "$1 (the DVM's log lacks /$2/)"; fi
}

# herdrun ARGS...: run the uninstalled herdrun like herd_info (stdout $OUT, stderr $ERR, $rc),
# stdin from /dev/null. What it starts inherits HERD_IT_TAG (herdrun passes its environment on
# to daemons and processes), which is how check_clean finds them.
herdrun() {
    shm_mark
    : >"$OUT"
    : >"$ERR"
    HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herdrun/herdrun" "$@" </dev/null >>"$OUT" 2>>"$ERR"
    rc=$?
}
# herdrun_bg ARGS...: the same in the background, its pid in $run_pid; herdrun_wait SECONDS
# waits for it (bounded: a herdrun still running then is reported and killed, rc 137).
herdrun_bg() {
    shm_mark
    : >"$OUT"
    : >"$ERR"
    HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herdrun/herdrun" "$@" </dev/null >>"$OUT" 2>>"$ERR" &
    run_pid=$!
}
herdrun_wait() {
    if ! wait_gone "$run_pid" "$1"; then
        fail "herdrun (pid $run_pid) ends within $1 s"
        kill -9 "$run_pid" 2>/dev/null
    fi
    wait "$run_pid"
    rc=$?
}

# mpi_flavours: FLAVOURS, the MPI flavours to test (openmpi, mpich): those whose compiler is
# installed. CI installs both: a skip there would hide that nothing was tested, so it fails.
mpi_flavours() {
    FLAVOURS=""
    for f in openmpi mpich; do
        if command -v "mpicc.$f" >/dev/null 2>&1; then
            FLAVOURS="$FLAVOURS $f"
        elif [ -n "${CI:-}" ]; then
            fail "CI runs this test: mpicc.$f is needed (apt-get install lib$f-dev)"
        else
            echo "SKIP: mpicc.$f not installed: its programs are not tested"
        fi
    done
}
# run_ok WHAT ARGS...: herdrun ARGS (in the background, waited for at most $HERDRUN_LIMIT s)
# succeeds and leaves nothing behind.
run_ok() {
    what=$1
    shift
    herdrun_bg "$@"
    herdrun_wait "${HERDRUN_LIMIT:-60}"
    expect_rc "$what: exit 0" 0
    check_clean "$what"
}
# count_out / count_err REGEX: how many lines of the last stdout / stderr match
count_out() { grep -cE -- "$1" "$OUT"; }
count_err() { grep -cE -- "$1" "$ERR"; }

# herdrun_in FILE ARGS...: like herdrun, with FILE (a regular file) as stdin, waited for at most
# $HERDRUN_LIMIT s (default 60) as herdrun_wait does.
herdrun_in() {
    in=$1
    shift
    shm_mark
    HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herdrun/herdrun" "$@" <"$in" >"$OUT" 2>"$ERR" &
    run_pid=$!
    herdrun_wait "${HERDRUN_LIMIT:-60}"
}
# herdrun_piped FILE ARGS...: the same with FILE written into a pipe (as `cat FILE | herdrun`);
# returns once the writer is gone too (it gets EPIPE when herdrun ends without reading it all).
herdrun_piped() {
    in=$1
    shift
    rm -f "$WORK/stdin.fifo"
    mkfifo "$WORK/stdin.fifo"
    shm_mark
    HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herdrun/herdrun" "$@" <"$WORK/stdin.fifo" >"$OUT" \
        2>"$ERR" &
    run_pid=$!
    cat "$in" >"$WORK/stdin.fifo" &
    feed_pid=$!
    herdrun_wait "${HERDRUN_LIMIT:-60}"
    # a writer still blocked now has a reader that outlived herdrun: check_clean reports it
    wait_gone "$feed_pid" 5 || kill -9 "$feed_pid" 2>/dev/null
    wait "$feed_pid" 2>/dev/null
    rm -f "$WORK/stdin.fifo"
}

# wait_for SECONDS COMMAND...: poll until COMMAND succeeds; false if it never does.
wait_for() {
    local n
    n=$(($1 * 20))
    shift
    while ! "$@"; do
        n=$((n - 1))
        [ "$n" -le 0 ] && return 1
        sleep 0.05
    done
}

# Job databases and segments (/dev/shm/herd-<uid>-*), and Open MPI's shared-memory segments
# (vader_segment.*, which herd's PMIx server removes for a process that cannot), that were not
# there at the mark (new_shm [MARK]; default: the last shm_mark), minus those of other jobs
# under the same uid (tests running beside this one, a benchmark): a segment another process has
# mapped is its own, and one nobody has mapped (a launch segment between its writer and its
# reader) is given 3 s to go away before it counts as this test's leftover.
shm_ours() { ls /dev/shm 2>/dev/null | grep -e "^herd-$(id -u)-" -e '^vader_segment\.' | sort; }
shm_mark() { shm_ours >"$WORK/shm.mark"; }
# shm_unowned MARK LISTER: the /dev/shm names LISTER prints that MARK does not hold and that no
# process of another test has mapped.
shm_unowned() {
    local ours f foreign m
    ours=" $(echo $(test_pids)) "
    for f in $($2 | comm -13 "$1" -); do
        foreign=no
        for m in $(grep -lF "/dev/shm/$f" /proc/[0-9]*/maps 2>/dev/null); do
            m=${m#/proc/}
            case $ours in *" ${m%/maps} "*) ;; *) foreign=yes ;; esac
        done
        [ $foreign = yes ] || echo "$f"
    done
}
# shm_left MARK [LISTER]: those of them still there after up to 3 s (default lister: shm_ours).
shm_left() {
    local added n f
    added=$(shm_unowned "$1" "${2:-shm_ours}")
    n=0
    while [ -n "$added" ] && [ $n -lt 30 ]; do
        sleep 0.1
        n=$((n + 1))
        # only those still there count: a test of this one's never goes away by itself
        added=$(for f in $added; do [ -e "/dev/shm/$f" ] && echo "$f"; done)
    done
    echo $added
}
new_shm() { shm_left "${1:-$WORK/shm.mark}"; }

# Processes this test started that still run: those carrying its tag in their environment,
# running a program from $WORK, or with $WORK in their command line (the test programs live
# there), and any process inside its test hosts (their network namespaces), minus the pids in
# $KEEP_PIDS (a test's own helpers, such as the test hosts' sshd and Slurm daemons).
tagged_pids() {
    local p
    {
        grep -lzF "HERD_IT_TAG=$HERD_IT_TAG" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3
        find /proc -mindepth 2 -maxdepth 2 -name exe -lname "$WORK/*" 2>/dev/null | cut -d/ -f3
        ps -eo pid=,args= | W=$WORK awk 'index($0, ENVIRON["W"]) { print $1 }'
    } | sort -un | grep -vxF -e "$$" $(for p in ${KEEP_PIDS:-}; do printf ' -e %s' "$p"; done)
}
netns_pids() {
    local ns p
    [ -n "${HOSTS:-}" ] && [ -f "$HOSTS/namespaces" ] || return 0
    for ns in $(cat "$HOSTS/namespaces"); do ip netns pids "$ns" 2>/dev/null; done |
        sort -un | grep -vxF -e "$$" $(for p in ${KEEP_PIDS:-}; do printf ' -e %s' "$p"; done)
}
test_pids() { { tagged_pids; netns_pids; } | sort -un; }
# Those of them running a binary of this build (herdd, herdd --session, herdrun).
build_pids() {
    local p
    for p in $(test_pids); do
        case $(readlink "/proc/$p/exe" 2>/dev/null) in "$HERD_BUILDDIR"/*) echo "$p" ;; esac
    done
}

# check_clean WHAT: after a herdrun has returned, nothing it started may be left: no daemon,
# session daemon or process, no job database or MPI segment in /dev/shm. Leftovers are
# reported, then killed (by pid; they are this test's) so that the next case starts clean.
check_clean() {
    local left p shm f
    left=$(test_pids)
    if [ -n "$left" ]; then
        fail "$1: nothing left running; left: $(ps -o pid=,args= -p "$(echo $left | tr ' ' ,)" |
            tr '\n' ';')"
        for p in $left; do kill -9 "$p" 2>/dev/null; done
        for p in $left; do wait_gone "$p" 5; done
    else
        ok "$1: nothing left running"
    fi
    shm=$(new_shm)
    if [ -n "$shm" ]; then
        fail "$1: nothing left in /dev/shm: $(echo $shm)"
        for f in $shm; do rm -f "/dev/shm/$f"; done
    else
        ok "$1: nothing left in /dev/shm"
    fi
}

# need_testhosts SCRIPT: the test hosts (../shared/testhosts) with SCRIPT (up.sh, slurm-up.sh)
# must be usable: root and iproute2. Skips (exit 77) when they are not, except under CI, where
# that fails: a skip there would hide that nothing was tested. Sets TESTHOSTS and HOSTS (the
# hosts' state folder, in $WORK).
need_testhosts() {
    TESTHOSTS=${HERD_TESTHOSTS:-$HERD_SRCDIR/../shared/testhosts}
    if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null || ! command -v flock >/dev/null ||
        [ ! -f "$TESTHOSTS/$1" ]; then
        echo "SKIP: needs root, iproute2, flock and the test hosts in $TESTHOSTS"
        if [ -n "${CI:-}" ]; then
            fail "CI runs this test: root, iproute2, flock and $TESTHOSTS are needed"
            finish
            exit 1
        fi
        exit 77
    fi
    HOSTS=$WORK/hosts
}

# testhosts_up N: bring up N ssh test hosts of this test's own (a set with an id no other test
# holds: several tests run at once), torn down (with $WORK) on every exit. Sets TESTHOSTS_NS
# (namespace prefix: host i is ${TESTHOSTS_NS}i), TESTHOSTS_NET (its addresses' first three
# octets) and KEEP_PIDS (the hosts' sshd). The id is held by a lock on
# /run/lock/herd-testhosts.<id> for the life of this test, so no other test picks it; a set up
# by hand (its bridge namespace exists) is skipped too.
testhosts_up() {
    local id
    id=1
    while [ $id -le 250 ]; do
        exec 9>"/run/lock/herd-testhosts.$id"
        if flock -n 9; then
            ip netns list | awk '{print $1}' | grep -qx "herd-$id-br" || break
        fi
        exec 9>&-
        id=$((id + 1))
    done
    if [ $id -gt 250 ] || ! TESTHOSTS_ID=$id bash "$TESTHOSTS/up.sh" "$1" "$HOSTS" \
        >"$WORK/up.log" 2>&1; then
        cat "$WORK/up.log"
        fail "the test hosts come up (set $id)"
        finish
        exit 1
    fi
    . "$HOSTS/hosts.env"
    KEEP_PIDS=$(cat "$HOSTS"/sshd_n*.pid)
}

# testhosts_slurm_up N: the same, with Slurm on them (slurmctld on n1, slurmd on n2..nN);
# SLURM_CONF is its configuration. The Slurm daemons join KEEP_PIDS.
testhosts_slurm_up() {
    testhosts_up "$1"
    munge_was_running=no
    [ -S /run/munge/munge.socket.2 ] && pgrep -x munged >/dev/null && munge_was_running=yes
    slurm_started=yes
    if ! bash "$TESTHOSTS/slurm-up.sh" "$1" "$HOSTS" >>"$WORK/up.log" 2>&1; then
        cat "$WORK/up.log"
        fail "Slurm comes up on the test hosts"
        finish
        exit 1
    fi
    SLURM_CONF=$HOSTS/slurm/slurm.conf
    # slurmctld's script helper (slurmscriptd) is Slurm's too
    slurm_pids=$(cat "$HOSTS"/slurm/*.pid 2>/dev/null)
    KEEP_PIDS="$KEEP_PIDS $slurm_pids $(for p in $slurm_pids; do pgrep -P "$p" -x slurmscriptd; done)"
}

test_teardown() {
    local left f
    left=$(test_pids)
    if [ -n "$left" ]; then
        # SIGTERM first: herdrun and the daemons then remove their segments themselves
        kill $left 2>/dev/null
        wait_for 3 no_test_pids
        left=$(test_pids)
        [ -z "$left" ] || kill -9 $left 2>/dev/null
    fi
    for f in $(shm_left "$SHM_AT_START"); do rm -f "/dev/shm/$f"; done
    [ -z "${HOSTS:-}" ] || [ ! -f "$HOSTS/hosts.env" ] || testhosts_teardown
    rm -rf "$WORK"
}

testhosts_teardown() {
    local slurm_pids pid
    if [ "${slurm_started:-no}" = yes ]; then
        # slurmctld and slurmd exit some time after SIGTERM: wait for them (bounded), then kill
        slurm_pids=$(cat "$HOSTS"/slurm/*.pid 2>/dev/null)
        bash "$TESTHOSTS/slurm-down.sh" "$HOSTS" >/dev/null 2>&1
        for pid in $slurm_pids; do
            wait_gone "$pid" 10 || kill -9 "$pid" 2>/dev/null
        done
        # munged is started by slurm-up.sh when it is not running: stop only ours
        if [ "$munge_was_running" = no ] && [ -f /run/munge/munged.pid ]; then
            kill "$(cat /run/munge/munged.pid)" 2>/dev/null
        fi
    fi
    bash "$TESTHOSTS/down.sh" "$HOSTS" >/dev/null 2>&1
}

# on_host I ARGS...: run ARGS on test host nI (its namespace, with its host name), as is.
on_host() {
    local h
    h=$1
    shift
    ip netns exec "$TESTHOSTS_NS$h" unshare --uts sh -c 'hostname "$0"; exec "$@"' "n$h" "$@"
}
# on_n1 CMD...: run a command on test host n1, tagged (output to $OUT/$ERR, status in $rc); a
# script that needs more around it defines its own
on_n1() {
    on_host 1 env HERD_IT_TAG="$HERD_IT_TAG" "$@" </dev/null >"$OUT" 2>"$ERR"
    rc=$?
}

# --- I/O forwarding (test_iof.sh, test_iof_ssh.sh) ---------------------------------------------
# make_iof_programs DIR: put into DIR the programs whose output the iof tests check; false (with
# the compiler's messages on stderr) when they do not build.
#   lines N SLEEP_US [both]: N lines "rank R line I PAD" (R = HERD_RANK, I = 0..N-1) on stdout
#     through a 4 KiB block buffer, so that most lines straddle two writes. PAD repeats R's
#     letter (a for rank 0, b for rank 1...) iof_pad_length times: up to 119 bytes, and every
#     997th line 20000-59999 bytes (longer than a write, shorter than iof_base_line_max).
#     With SLEEP_US > 0, one line in 16 is followed by a pause of up to SLEEP_US us; with both,
#     each line goes to stderr (its own 4 KiB buffer) too.
#   talk.sh N: "out JOBID RANK I" on stdout and "err JOBID RANK I" on stderr, alternately,
#     I = 0..N-1, one write per line.
make_iof_programs() {
    cat >"$1/lines.c" <<'EOF'
/* The numbered lines of the iof tests, written through 4 KiB block buffers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Must give what iof_pad_length in lib.sh gives. */
static int pad_length(long rank, long line)
{
    if (996 == line % 997) {
        return 20000 + (int) ((line * 7919 + rank * 104729) % 40000);
    }
    return (int) ((line * 31 + rank * 17) % 120);
}

int main(int argc, char **argv)
{
    static char pad[65536];
    static char out_buffer[4096], err_buffer[4096];
    const char *rank_text = getenv("HERD_RANK");
    long rank = (NULL != rank_text) ? atol(rank_text) : 0;

    if (argc < 3) {
        fprintf(stderr, "usage: lines N SLEEP_US [both]\n");
        return 2;
    }
    long lines = atol(argv[1]);
    long sleep_us = atol(argv[2]);
    int both = argc > 3 && 0 == strcmp(argv[3], "both");
    memset(pad, 'a' + (int) (rank % 26), sizeof(pad));
    setvbuf(stdout, out_buffer, _IOFBF, sizeof(out_buffer));
    setvbuf(stderr, err_buffer, _IOFBF, sizeof(err_buffer));
    srand((unsigned) getpid());
    for (long line = 0; line < lines; line++) {
        int length = pad_length(rank, line);
        printf("rank %ld line %ld %.*s\n", rank, line, length, pad);
        if (both) {
            fprintf(stderr, "rank %ld line %ld %.*s\n", rank, line, length, pad);
        }
        if (sleep_us > 0 && 0 == rand() % 16) {
            usleep((useconds_t) (rand() % sleep_us));
        }
    }
    return (0 != fflush(stdout) || 0 != fflush(stderr)) ? 1 : 0;
}
EOF
    cat >"$1/talk.sh" <<'EOF'
#!/bin/sh
i=0
while [ $i -lt "$1" ]; do
    echo "out $HERD_JOBID $HERD_RANK $i"
    echo "err $HERD_JOBID $HERD_RANK $i" >&2
    i=$((i + 1))
done
EOF
    chmod +x "$1/talk.sh"
    cc -O2 -o "$1/lines" "$1/lines.c"
}

# lines_problems FILE RANKS N: what is wrong with the output of `lines N` by RANKS ranks in FILE,
# nothing when all is well: every line exactly as written (none split, none merged with
# another), each rank's lines 0..N-1 once each and in order.
lines_problems() {
    awk -v ranks="$2" -v n="$3" '
        function iof_pad_length(rank, line) {
            if (line % 997 == 996) return 20000 + (line * 7919 + rank * 104729) % 40000
            return (line * 31 + rank * 17) % 120
        }
        function report(message) { if (++problems <= 5) print message }
        {
            if ($0 !~ /^rank [0-9]+ line [0-9]+ [a-z]*$/ || $2 + 0 >= ranks) {
                report("line " NR " is not one that was written: " substr($0, 1, 60) \
                    (length($0) > 60 ? "... (" length($0) " bytes)" : ""))
                next
            }
            rank = $2 + 0
            line = $4 + 0
            pad = substr($0, length("rank " $2 " line " $4 " ") + 1)
            letter = substr("abcdefghijklmnopqrstuvwxyz", rank + 1, 1)
            rest = pad
            if (length(pad) != iof_pad_length(rank, line) || gsub(letter, "", rest) != length(pad))
                report("rank " rank " line " line " is cut or merged with another (" \
                    length(pad) " bytes of padding, not " iof_pad_length(rank, line) " of " \
                    letter ")")
            if (line != due[rank] + 0)
                report("rank " rank ": line " line " where line " due[rank] + 0 " was due")
            due[rank] = line + 1
        }
        END {
            for (rank = 0; rank < ranks; rank++)
                if (!((rank) in due)) report("rank " rank ": not one line")
                else if (due[rank] != n)
                    report("rank " rank ": its lines end with line " due[rank] - 1 ", not " n - 1)
            if (problems > 5) print problems - 5 " more problems"
        }' "$1"
}

# talk_problems FILE WORDS RANKS N [TAG [FROM TO]]: what is wrong with the lines of `talk.sh N`
# by RANKS ranks in FILE, nothing when all is well. WORDS are those to find, in order, for each I
# ("out", "err" or, merged, "out err"); with TAG (stdout or stderr) each line must start with
# "[JOBID,RANK]<TAG>: " naming the job and rank that wrote it; with FROM and TO
# (YYYY-MM-DD HH:MM:SS) each line must start with a timestamp "[YYYY-MM-DD HH:MM:SS.uuuuuu] "
# between them (before the tag).
talk_problems() {
    awk -v words="$2" -v ranks="$3" -v n="$4" -v tag="${5:-}" -v from="${6:-}" -v to="${7:-}" '
        function report(message) { if (++problems <= 5) print message }
        BEGIN {
            count = split(words, word, " ")
            d = "[0-9]"
            stamp = "^\\[" d d d d "-" d d "-" d d " " d d ":" d d ":" d d "\\." d d d d d d "\\] "
        }
        {
            line = $0
            if (from != "") {
                if (line !~ stamp) { report("no timestamp: " $0); next }
                when = substr(line, 2, 19)
                if (when < from || when > to)
                    report("timestamp " when " is not between " from " and " to ": " $0)
                line = substr(line, 30)
            }
            if (tag != "") {
                if (line !~ ("^\\[[0-9]+,[0-9]+\\]<" tag ">: ")) {
                    report("no [JOBID,RANK]<" tag "> tag: " $0)
                    next
                }
                split(substr(line, 2, index(line, "]") - 2), id, ",")
                line = substr(line, index(line, ">: ") + 3)
            }
            if (line !~ /^[a-z]+ [0-9]+ [0-9]+ [0-9]+$/) {
                report("not a line of talk.sh: " $0)
                next
            }
            split(line, field, " ")
            if (tag != "" && (id[1] != field[2] || id[2] != field[3]))
                report("tag [" id[1] "," id[2] "] on a line of job " field[2] " rank " field[3])
            rank = field[3] + 0
            if (rank >= ranks) { report("a line of rank " rank ": " $0); next }
            k = seen[rank]++
            due = word[k % count + 1] " " int(k / count)
            if (field[1] " " field[4] != due)
                report("rank " rank ": \"" field[1] " " field[4] "\" where \"" due "\" was due")
        }
        END {
            for (rank = 0; rank < ranks; rank++)
                if (seen[rank] + 0 != n * count)
                    report("rank " rank ": " seen[rank] + 0 " lines, not " n * count)
            if (problems > 5) print problems - 5 " more problems"
        }' "$1"
}
