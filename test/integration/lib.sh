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
expect_no_out() { if grep -Eq -- "$2" "$OUT"; then fail "$1 (stdout has /$2/)"; else ok "$1"; fi; }
expect_no_err() { if grep -Eq -- "$2" "$ERR"; then fail "$1 (stderr has /$2/)"; else ok "$1"; fi; }

# Nothing this test started may outlive it: no process with the test's work folder or a herd
# binary of this build in its command line, no herd shared-memory segment. The binary is
# matched as a path component, so a checkout whose own path holds "herdrun" or "herdd" (and the
# make processes running this test there) is not taken for a leftover.
check_leftovers() {
    left=$(ps -eo pid=,args= | grep -F "$HERD_BUILDDIR" | grep -v -e grep -e "$$" | grep -E '/(lt-)?herd(d|run|-dvm|-info)' || true)
    if [ -n "$left" ]; then fail "no herd process left behind: $left"; else ok "no herd process left behind"; fi
    if ls /dev/shm 2>/dev/null | grep -qi herd; then fail "no herd shared memory left in /dev/shm"; else ok "no herd shared memory left in /dev/shm"; fi
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
