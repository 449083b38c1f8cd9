#!/bin/sh
# Run herd's whole test suite from a clean clone: install what is missing, build (DSO and
# static-component builds), unit and integration tests, valgrind, install/uninstall, the unit
# tests of a build without dynamic endpoint slots, distcheck, fuzz smoke runs. Ends with one line "N passed, N failed" and a non-zero exit if
# anything failed. Logs go to _test-logs/.
# Usage: contrib/run-tests.sh [--quick]   (--quick: skip valgrind, distcheck and fuzzing)
set -u
cd "$(dirname "$0")/.."
. contrib/build-lib.sh
TOP=$(pwd)
LOGS=$TOP/_test-logs
QUICK=no
[ "${1:-}" = "--quick" ] && QUICK=yes
rm -rf "$LOGS"; mkdir -p "$LOGS"
# The multi-host tests use ../shared/testhosts beside the repository; say where it is so that
# the copies distcheck builds and tests find it too.
if [ -z "${HERD_TESTHOSTS:-}" ] && [ -d "$TOP/../shared/testhosts" ]; then
    HERD_TESTHOSTS=$(cd "$TOP/../shared/testhosts" && pwd)
    export HERD_TESTHOSTS
fi
stages_passed=0
stages_failed=0
tests_passed=0
tests_failed=0
started=$(date +%s)

# stage NAME COMMAND...: run a step, log it, count it.
stage() {
    name=$1; shift
    t0=$(date +%s)
    log=$LOGS/$(echo "$name" | tr ' /' '__').log
    if "$@" >"$log" 2>&1; then
        stages_passed=$((stages_passed + 1)); result=ok
    else
        stages_failed=$((stages_failed + 1)); result=FAILED
        echo "---- $name failed; last lines of $log:"; tail -n 40 "$log"; echo "----"
    fi
    printf '==> %-45s %s (%ss)\n' "$name" "$result" "$(( $(date +%s) - t0 ))"
}

# Add up the test cases of a build folder: each CMocka program's and integration script's own
# counts; a program that failed without saying how many cases failed (a crash) counts as one.
count_tests() {
    for trs in "$1"/test/unit/*/*.trs "$1"/test/integration/*.trs; do
        [ -f "$trs" ] || continue
        log=${trs%.trs}.log
        result=$(sed -n 's/^:test-result: //p' "$trs")
        p=0; f=0
        c=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\./\1/p' "$log" | tail -n 1); p=$((p + ${c:-0}))
        c=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s), listed below:/\1/p' "$log" | tail -n 1); f=$((f + ${c:-0}))
        c=$(sed -n 's/^\([0-9]*\) passed, [0-9]* failed$/\1/p' "$log" | tail -n 1); p=$((p + ${c:-0}))
        c=$(sed -n 's/^[0-9]* passed, \([0-9]*\) failed$/\1/p' "$log" | tail -n 1); f=$((f + ${c:-0}))
        case $result in FAIL|ERROR|XPASS) [ "$f" -eq 0 ] && f=1 ;; esac
        tests_passed=$((tests_passed + p))
        tests_failed=$((tests_failed + f))
        printf '    %-40s %s (%s passed, %s failed)\n' "${log#"$1"/test/}" "$result" "$p" "$f"
    done > "$LOGS/summary-$(basename "$1").txt"
}

make_check() { make -C "$1" check -j"$(nproc)"; }

# Unit tests again under valgrind: no invalid access, no definite leak.
valgrind_check() {
    make -C "$1/test/unit" check \
        LOG_COMPILER="$TOP/$1/libtool" \
        AM_LOG_FLAGS="--mode=execute valgrind -q --child-silent-after-fork=yes --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --suppressions=$TOP/test/valgrind.supp"
}

# herd-info must say the same in the DSO and the static build, but for how each is built.
compare_static() {
    strip() { grep -v -E ':(build|file):|^path:|:component_path:value:' ; }
    ( . _build/test/uninstalled-env.sh && _build/orte/tools/herd-info/herd-info --parsable --all ) |
        strip > "$LOGS/info-dso.txt" &&
    ( . _build-static/test/uninstalled-env.sh && _build-static/orte/tools/herd-info/herd-info --parsable --all ) |
        strip > "$LOGS/info-static.txt" &&
    grep -q '^mca:fabric:tcp:param:fabric_tcp_if_include:' "$LOGS/info-dso.txt" &&
    diff -u "$LOGS/info-dso.txt" "$LOGS/info-static.txt" &&
    ! _build-static/orte/tools/herd-info/herd-info --parsable | grep -q ':build:dso$'
}

# Install into a scratch prefix, run the installed herd-info (components from pkglibdir, no
# build-tree paths), uninstall, and check only empty folders remain.
# Jobs run by the installed herdrun as users run it: components from the installed folder (the
# build tree's tests name theirs), a shell that gets PMIx, a leaf program that needs none.
installed_job() {
    got=$(env -u HERD_MCA_component_path -u HERD_HELP_PATH "$1/bin/herdrun" -n 3 --oversubscribe sh -c \
        'echo "rank $HERD_RANK ${PMIX_RANK:-no-pmix}"' | sort | tr '\n' ' ') &&
    [ "$got" = "rank 0 0 rank 1 1 rank 2 2 " ] ||
        { echo "installed herdrun -n 3 --oversubscribe sh: got '$got'"; return 1; }
    env -u HERD_MCA_component_path -u HERD_HELP_PATH "$1/bin/herdrun" -n 2 /bin/true ||
        { echo "installed herdrun -n 2 /bin/true failed"; return 1; }
}

install_check() {
    prefix=$TOP/_build-install/prefix
    rm -rf "$prefix"
    herd_build _build-install --prefix="$prefix" &&
    make -C _build-install install >/dev/null &&
    env -u HERD_MCA_component_path -u HERD_HELP_PATH "$prefix/bin/herd-info" --parsable > "$LOGS/installed-info.txt" &&
    grep -q "^mca:fabric:tcp:file:$prefix/lib/herd/herd_fabric_tcp.so$" "$LOGS/installed-info.txt" &&
    env -u HERD_MCA_component_path -u HERD_HELP_PATH "$prefix/bin/herd-info" --param fabric nope 2>&1 | grep -q "Known: base" &&
    installed_job "$prefix" &&
    make -C _build-install uninstall >/dev/null &&
    left=$(find "$prefix" -type f) && { [ -z "$left" ] || { echo "left after uninstall: $left"; false; }; }
}

# VERBOSE=yes: a failing test's log is printed into the stage's log, which outlives the
# distcheck tree (removed when the next distcheck starts).
distcheck() { make -C _build distcheck DISTCHECK_CONFIGURE_FLAGS="$1" VERBOSE=yes; }
# The same with no test run: the tarball builds, installs and uninstalls that way (the tests of
# that configuration ran from the source tree, and the tarball's tests in the first distcheck).
distcheck_build_only() {
    make -C _build distcheck DISTCHECK_CONFIGURE_FLAGS="$1" VERBOSE=yes TESTS=
}

# The unit tests of a build (the programs the wireup tests start first), without integration.
unit_check() { make -C "$1/test/programs" check && make -C "$1/test/unit" check -j"$(nproc)"; }

# libherd exports herd_* and nothing else (its opal copy and ompi-shim's frameworks are hidden).
libherd_exports_check() {
    other=$(nm -D --defined-only "$1/ompi-shim/.libs/libherd.so" | awk '{print $3}' | grep -v '^herd_')
    [ -z "$other" ] || { echo "libherd exports more than herd_*: $other"; false; }
}

stage "install Debian packages" herd_install_deps $HERD_TEST_PACKAGES || true
stage "build (DSO components)" herd_build _build
stage "make check (DSO build)" make_check _build
count_tests _build
stage "build (static components)" herd_build _build-static --enable-static-components
stage "make check (static build)" make_check _build-static
count_tests _build-static
stage "herd-info same in DSO and static builds" compare_static
stage "libherd exports only herd_*" libherd_exports_check _build
stage "build (--disable-dynamic-endpoint-slots)" herd_build _build-nodyn --disable-dynamic-endpoint-slots
stage "unit tests (--disable-dynamic-endpoint-slots)" unit_check _build-nodyn
count_tests _build-nodyn
stage "make install / uninstall" install_check
if [ "$QUICK" = no ]; then
    stage "valgrind unit tests (DSO build)" valgrind_check _build
    stage "make distcheck" distcheck ""
    stage "make distcheck (static components; builds, installs, no test run)" \
        distcheck_build_only "--enable-static-components"
    # the harnesses of run.sh, 15 s each
    stage "fuzz smoke: buffers, hostfile, Slurm lists, launch messages, wireup messages (15 s each)" sh test/fuzz/run.sh 15
    stage "fuzz smoke: overlay frames (20 s)" sh test/fuzz/run_overlay.sh 20
fi

echo
for f in "$LOGS"/summary-*.txt; do echo "$(basename "$f" .txt):"; cat "$f"; done
echo "test cases: $tests_passed passed, $tests_failed failed; stages: $stages_passed passed, $stages_failed failed ($(( $(date +%s) - started ))s)"
echo "$((tests_passed + stages_passed)) passed, $((tests_failed + stages_failed)) failed"
[ $((tests_failed + stages_failed)) -eq 0 ]
