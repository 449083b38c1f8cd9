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
WORK=$(mktemp -d "${TMPDIR:-/tmp}/herd-it-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
OUT=$WORK/out
ERR=$WORK/err
# Shared-memory segments already there (another user's or a concurrent benchmark's job): not
# this test's to report.
SHM_AT_START=$WORK/shm.at-start
ls /dev/shm 2>/dev/null | grep -i herd | sort >"$SHM_AT_START"

# herd_info ARGS...: run the uninstalled herd-info, stdout to $OUT, stderr to $ERR, status in $rc.
herd_info() {
    "$HERD_BIN/herd-info/herd-info" "$@" >"$OUT" 2>"$ERR"
    rc=$?
}

ok() { passed=$((passed + 1)); echo "PASS: $1"; }
fail() {
    failed=$((failed + 1))
    echo "FAIL: $1"
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

# Nothing this test started may outlive it: no process with the test's work folder or a herd
# binary of this build in its command line, no herd shared-memory segment. The binary is
# matched as a path component, so a checkout whose own path holds "herdrun" or "herdd" (and the
# make processes running this test there) is not taken for a leftover.
check_leftovers() {
    left=$(ps -eo pid=,args= | grep -F "$HERD_BUILDDIR" | grep -v -e grep -e "$$" | grep -E '/(lt-)?herd(d|run|-dvm|-info)' || true)
    if [ -n "$left" ]; then fail "no herd process left behind: $left"; else ok "no herd process left behind"; fi
    shm=$(ls /dev/shm 2>/dev/null | grep -i herd | sort | comm -13 "$SHM_AT_START" -)
    if [ -n "$shm" ]; then
        fail "no herd shared memory left in /dev/shm: $shm"
    else
        ok "no herd shared memory left in /dev/shm"
    fi
}

finish() {
    check_leftovers
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}

# herd_dvm ARGS...: run the uninstalled herd-dvm like herd_info (stdout $OUT, stderr $ERR, $rc).
herd_dvm() {
    "$HERD_BIN/herd-dvm/herd-dvm" "$@" >"$OUT" 2>"$ERR"
    rc=$?
}

# wait_gone PID SECONDS: wait until a process is gone; false if it is still there.
wait_gone() {
    i=0
    while kill -0 "$1" 2>/dev/null; do
        i=$((i + 1))
        [ "$i" -gt $(($2 * 20)) ] && return 1
        sleep 0.05
    done
    return 0
}

# herdd processes of this build that are still running.
herdd_pids() {
    ps -eo pid=,args= | grep -F "$HERD_BUILDDIR" | grep -E 'herdd( |$)' | grep -v grep | awk '{print $1}'
}

# herdrun ARGS...: run the uninstalled herdrun like herd_info (stdout $OUT, stderr $ERR, $rc),
# stdin from /dev/null. What it starts inherits HERD_IT_TAG (herdrun passes its environment on
# to daemons and processes), which is how check_clean finds them.
HERD_IT_TAG=$(basename "$WORK")
herdrun() {
    shm_mark
    HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herdrun/herdrun" "$@" </dev/null >"$OUT" 2>"$ERR"
    rc=$?
}
# herdrun_bg ARGS...: the same in the background, its pid in $run_pid; herdrun_wait SECONDS
# waits for it (bounded: a herdrun still running then is reported and killed, rc 137).
herdrun_bg() {
    shm_mark
    HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herdrun/herdrun" "$@" </dev/null >"$OUT" 2>"$ERR" &
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

# wait_for SECONDS COMMAND...: poll until COMMAND succeeds; false if it never does.
wait_for() {
    n=$(($1 * 20))
    shift
    while ! "$@"; do
        n=$((n - 1))
        [ "$n" -le 0 ] && return 1
        sleep 0.05
    done
}

# Job databases and segments (/dev/shm/herd-<uid>-*) that were not there at the last shm_mark,
# minus those a process of someone else's job has mapped (a job of another build or of a
# benchmark running meanwhile, under the same uid: its names are as random as ours).
shm_mark() { ls /dev/shm 2>/dev/null | grep "^herd-$(id -u)-" | sort >"$WORK/shm.mark"; }
new_shm() {
    ours=" $(echo $(tagged_pids) $(build_pids)) "
    added=$(ls /dev/shm 2>/dev/null | grep "^herd-$(id -u)-" | sort | comm -13 "$WORK/shm.mark" -)
    for f in $added; do
        foreign=no
        for m in $(grep -lF "/dev/shm/$f" /proc/[0-9]*/maps 2>/dev/null); do
            m=${m#/proc/}
            case $ours in *" ${m%/maps} "*) ;; *) foreign=yes ;; esac
        done
        [ $foreign = yes ] || echo "$f"
    done
}

# Processes this test started that still run: those carrying its tag in their environment,
# running a program from $WORK, or with $WORK in their command line (the test programs live
# there), minus the pids in $KEEP_PIDS (a test's own helpers, such as the test hosts' sshd).
tagged_pids() {
    {
        grep -lzF "HERD_IT_TAG=$HERD_IT_TAG" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3
        find /proc -mindepth 2 -maxdepth 2 -name exe -lname "$WORK/*" 2>/dev/null | cut -d/ -f3
        ps -eo pid=,args= | W=$WORK awk 'index($0, ENVIRON["W"]) { print $1 }'
    } | sort -un | grep -vxF -e "$$" $(for p in ${KEEP_PIDS:-}; do printf ' -e %s' "$p"; done)
}
# Processes running a binary of this build (herdd, herdd --session, herdrun), wherever started.
build_pids() {
    find /proc -mindepth 2 -maxdepth 2 -name exe -lname "$HERD_BUILDDIR/*" 2>/dev/null |
        cut -d/ -f3 | sort -un
}

# check_clean WHAT: after a herdrun has returned, nothing it started may be left: no daemon,
# session daemon or process, no job database in /dev/shm. Leftovers are reported, then killed
# (by pid; they are this test's) so that the next case starts clean.
check_clean() {
    left=$( { tagged_pids; build_pids; } | sort -un)
    if [ -n "$left" ]; then
        fail "$1: nothing left running; left: $(ps -o pid=,args= -p "$(echo $left | tr ' ' ,)" |
            tr '\n' ';')"
        for p in $(tagged_pids); do kill -9 "$p" 2>/dev/null; done
        for p in $left; do wait_gone "$p" 5; done
    else
        ok "$1: nothing left running"
    fi
    shm=$(new_shm)
    if [ -n "$shm" ]; then
        fail "$1: no job database left in /dev/shm: $(echo $shm)"
        shm_mark
    else
        ok "$1: no job database left in /dev/shm"
    fi
}

# need_testhosts SCRIPT: the test hosts (../shared/testhosts) with SCRIPT (up.sh, slurm-up.sh)
# must be usable: root, iproute2, and no herd-* namespace up already. Skips (exit 77) when they
# are not, except under CI, where that fails: a skip there would hide that nothing was tested.
# Sets TESTHOSTS and HOSTS (the hosts' state folder, in $WORK).
need_testhosts() {
    TESTHOSTS=${HERD_TESTHOSTS:-$HERD_SRCDIR/../shared/testhosts}
    if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null || [ ! -f "$TESTHOSTS/$1" ]; then
        echo "SKIP: needs root, iproute2 and the test hosts in $TESTHOSTS"
        if [ -n "${CI:-}" ]; then
            fail "CI runs this test: root, iproute2 and $TESTHOSTS are needed"
            finish
            exit 1
        fi
        exit 77
    fi
    if ip netns list | grep -q '^herd-'; then
        fail "test hosts are already up (ip netns list shows herd-*); run $TESTHOSTS/down.sh first"
        finish
        exit 1
    fi
    HOSTS=$WORK/hosts
}

# testhosts_up N: bring up N ssh test hosts, torn down (with $WORK) on every exit.
testhosts_up() {
    trap 'bash "$TESTHOSTS/down.sh" "$HOSTS" >/dev/null 2>&1; rm -rf "$WORK"' EXIT
    if ! bash "$TESTHOSTS/up.sh" "$1" "$HOSTS" >"$WORK/up.log" 2>&1; then
        cat "$WORK/up.log"
        fail "the test hosts come up"
        finish
        exit 1
    fi
}
