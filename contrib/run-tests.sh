#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Run herd's whole test suite from a clean clone: install what is missing, build, unit and
# integration tests of the DSO build (in parallel), the static-component build (installed, then
# a smoke run), a build without dynamic endpoint slots (unit tests), install/uninstall, the
# Debian packages and RPMs (built from the tarball, installed, run, removed), valgrind
# over the unit tests, make distcheck (the tarball builds, installs, uninstalls and passes make
# check once: unit tests and the smoke test), fuzz smoke runs, and that nothing is left behind.
# Ends with one line "N passed, N failed" and a non-zero exit if anything failed. Logs go to
# _test-logs/; docs/testing.md says how the suite is organised.
# Usage: contrib/run-tests.sh            everything (CI: .ci/run)
#        contrib/run-tests.sh --quick    build, unit and integration tests of the DSO build
#        contrib/run-tests.sh TEST...    only these tests, against the existing DSO build
#                                        (test_iof.sh or test_iof; unit tests as rmaps/test_rmaps
#                                        or test_rmaps)
set -u
cd "$(dirname "$0")/.."
. contrib/build-lib.sh
TOP=$(pwd)
LOGS=$TOP/_test-logs
MODE=all
case ${1:-} in
--quick) MODE=quick ;;
-h | --help)
    sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
    exit 0
    ;;
-*)
    echo "run-tests.sh: unknown option '$1' (--quick, or test names)" >&2
    exit 2
    ;;
?*) MODE=named ;;
esac
# Test cases run in parallel: integration tests spend much of their time waiting on processes,
# so more of them than cores keeps both cores busy.
JOBS=${HERD_TEST_JOBS:-$(($(nproc) * 2))}
mkdir -p "$LOGS"
[ "$MODE" = named ] || { rm -rf "$LOGS"; mkdir -p "$LOGS"; }
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
: >"$LOGS/stage-times.txt"

# stage NAME COMMAND...: run a step, log it, count it, and note its time.
stage() {
    name=$1
    shift
    t0=$(date +%s)
    log=$LOGS/$(echo "$name" | tr ' /' '__').log
    if "$@" >"$log" 2>&1; then
        stages_passed=$((stages_passed + 1))
        result=ok
    else
        stages_failed=$((stages_failed + 1))
        result=FAILED
        echo "---- $name failed; last lines of $log:"
        tail -n 40 "$log"
        echo "----"
    fi
    printf '==> %-50s %s (%ss)\n' "$name" "$result" "$(($(date +%s) - t0))" |
        tee -a "$LOGS/stage-times.txt"
}

# Add up the test cases of a build folder: each CMocka program's and integration script's own
# counts; a program that failed without saying how many cases failed (a crash) counts as one.
count_tests() {
    for trs in "$1"/test/unit/*/*.trs "$1"/test/integration/*.trs; do
        [ -f "$trs" ] || continue
        log=${trs%.trs}.log
        result=$(sed -n 's/^:test-result: //p' "$trs")
        p=0
        f=0
        c=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\./\1/p' "$log" | tail -n 1)
        p=$((p + ${c:-0}))
        c=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s), listed below:/\1/p' "$log" | tail -n 1)
        f=$((f + ${c:-0}))
        c=$(sed -n 's/^\([0-9]*\) passed, [0-9]* failed$/\1/p' "$log" | tail -n 1)
        p=$((p + ${c:-0}))
        c=$(sed -n 's/^[0-9]* passed, \([0-9]*\) failed$/\1/p' "$log" | tail -n 1)
        f=$((f + ${c:-0}))
        case $result in FAIL | ERROR | XPASS) [ "$f" -eq 0 ] && f=1 ;; esac
        tests_passed=$((tests_passed + p))
        tests_failed=$((tests_failed + f))
        secs=$(sed -n 's/^elapsed: \([0-9]*\) s$/\1/p' "$log" | tail -n 1)
        printf '    %-40s %s (%s passed, %s failed%s)\n' "${log#"$1"/test/}" "$result" "$p" "$f" \
            "${secs:+, ${secs} s}"
    done >"$LOGS/summary-$(basename "$1").txt"
}

# The test programs first (the wireup tests start them), then the unit tests in parallel,
# then the integration tests in parallel. Not both at once: a unit test's job database is a
# /dev/shm/herd-* segment that may stay unmapped for seconds, which an integration test
# finishing meanwhile would take for its own leftover.
make_check() {
    make -C "$1/test/programs" check &&
        make -C "$1/test/unit" check -j"$JOBS" && make -C "$1/test/integration" check -j"$JOBS"
}

# Unit tests again under valgrind: no invalid access, no definite leak.
valgrind_check() {
    make -C "$1/test/unit" check -j"$(nproc)" \
        LOG_COMPILER="$TOP/$1/libtool" \
        AM_LOG_FLAGS="--mode=execute valgrind -q --child-silent-after-fork=yes --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --suppressions=$TOP/test/valgrind.supp"
}

# herd-info must say the same in the DSO and the static build, but for how each is built.
compare_static() {
    strip() { grep -v -E ':(build|file):|^path:|:component_path:value:'; }
    (. _build/test/uninstalled-env.sh && _build/orte/tools/herd-info/herd-info --parsable --all) |
        strip >"$LOGS/info-dso.txt" &&
        (. _build-static/test/uninstalled-env.sh &&
            _build-static/orte/tools/herd-info/herd-info --parsable --all) |
        strip >"$LOGS/info-static.txt" &&
        grep -q '^mca:fabric:tcp:param:fabric_tcp_if_include:' "$LOGS/info-dso.txt" &&
        diff -u "$LOGS/info-dso.txt" "$LOGS/info-static.txt" &&
        ! _build-static/orte/tools/herd-info/herd-info --parsable | grep -q ':build:dso$'
}

# Jobs run by an installed herdrun as users run it: components from the installed folder (the
# build tree's tests name theirs), a shell that gets PMIx, a leaf program that needs none, and
# a job on simulated nodes.
installed_job() {
    got=$(env -u HERD_MCA_component_path -u HERD_HELP_PATH "$1/bin/herdrun" -n 3 --oversubscribe \
        sh -c 'echo "rank $HERD_RANK ${PMIX_RANK:-no-pmix}"' | sort | tr '\n' ' ') &&
        [ "$got" = "rank 0 0 rank 1 1 rank 2 2 " ] ||
        {
            echo "installed herdrun -n 3 --oversubscribe sh: got '$got'"
            return 1
        }
    env -u HERD_MCA_component_path -u HERD_HELP_PATH "$1/bin/herdrun" -n 2 /bin/true ||
        {
            echo "installed herdrun -n 2 /bin/true failed"
            return 1
        }
    got=$(env -u HERD_MCA_component_path -u HERD_HELP_PATH "$1/bin/herdrun" \
        --mca ras_simulator_num_nodes 3 -n 3 --map-by node sh -c 'echo $HERD_RANK' |
        sort | tr '\n' ' ') && [ "$got" = "0 1 2 " ] ||
        {
            echo "installed herdrun on 3 simulated nodes: got '$got'"
            return 1
        }
}

# Install a build into PREFIX, check its herd-info finds the components where they were
# installed (FILE_PATTERN: the line herd-info --parsable must print for fabric tcp), run jobs,
# uninstall, and check only empty folders remain.
install_run_uninstall() {
    dir=$1
    prefix=$2
    want=$3
    make -C "$dir" install >/dev/null &&
        env -u HERD_MCA_component_path -u HERD_HELP_PATH "$prefix/bin/herd-info" --parsable \
            >"$LOGS/installed-info-$(basename "$dir").txt" &&
        grep -q "$want" "$LOGS/installed-info-$(basename "$dir").txt" &&
        env -u HERD_MCA_component_path -u HERD_HELP_PATH "$prefix/bin/herd-info" \
            --param fabric nope 2>&1 | grep -q "Known: base" &&
        installed_job "$prefix" &&
        make -C "$dir" uninstall >/dev/null &&
        left=$(find "$prefix" -type f) &&
        {
            [ -z "$left" ] || {
                echo "left after uninstall: $left"
                false
            }
        }
}

# The DSO build installed into a scratch prefix: components from pkglibdir, no build-tree paths.
install_check() {
    prefix=$TOP/_build-install/prefix
    rm -rf "$prefix"
    herd_build _build-install --prefix="$prefix" &&
        install_run_uninstall _build-install "$prefix" \
            "^mca:fabric:tcp:file:$prefix/lib/herd/herd_fabric_tcp.so$"
}

# The static-component build: built with a prefix, compared with the DSO build's herd-info,
# installed and run (its tests are the DSO build's: the code is the same, linked otherwise).
static_check() {
    prefix=$TOP/_build-static/prefix
    rm -rf "$prefix"
    herd_build _build-static --enable-static-components --prefix="$prefix" &&
        compare_static &&
        install_run_uninstall _build-static "$prefix" "^mca:fabric:tcp:build:static$"
}

# VERBOSE=yes: a failing test's log is printed into the stage's log, which outlives the
# distcheck tree (removed when the next distcheck starts). The tarball's make check runs the
# unit tests and the smoke test: the whole suite ran on the source tree already.
distcheck() {
    make -C _build distcheck DISTCHECK_CONFIGURE_FLAGS="$1" VERBOSE=yes \
        INTEGRATION_TESTS=test_smoke.sh AM_MAKEFLAGS="-j$JOBS"
}
# The same with no test run: the tarball builds, installs and uninstalls that way.
distcheck_build_only() {
    make -C _build distcheck DISTCHECK_CONFIGURE_FLAGS="$1" VERBOSE=yes TESTS=
}

# The unit tests of a build (the programs the wireup tests start first), without integration.
unit_check() { make -C "$1/test/programs" check && make -C "$1/test/unit" check -j"$(nproc)"; }

# libherd exports herd_* and nothing else (its opal copy and ompi-shim's frameworks are hidden).
libherd_exports_check() {
    other=$(nm -D --defined-only "$1/ompi-shim/.libs/libherd.so" | awk '{print $3}' |
        grep -v '^herd_')
    [ -z "$other" ] || {
        echo "libherd exports more than herd_*: $other"
        false
    }
}

# After every test: no process of any build of this tree, no herd segment of this user, no test
# host namespace (each test checks its own; this is the suite's word for all of them together).
nothing_left() {
    bad=0
    procs=$(find /proc -mindepth 2 -maxdepth 2 -name exe -lname "$TOP/_build*" 2>/dev/null |
        cut -d/ -f3 | sort -un)
    [ -z "$procs" ] || {
        echo "processes of this tree left:"
        ps -o pid=,args= -p "$(echo $procs | tr ' ' ,)"
        bad=1
    }
    shm=$(ls /dev/shm | grep "^herd-$(id -u)-")
    [ -z "$shm" ] || {
        echo "herd segments left in /dev/shm: $shm"
        bad=1
    }
    ns=$(ip netns list 2>/dev/null | awk '{print $1}' | grep '^herd-[0-9]*-')
    [ -z "$ns" ] || {
        echo "test host namespaces left: $ns"
        bad=1
    }
    [ $bad -eq 0 ]
}

# contrib/run-tests.sh TEST...: the named tests against _build, unit or integration.
run_named() {
    [ -f _build/Makefile ] || {
        echo "run-tests.sh: no build in _build: run contrib/run-tests.sh --quick first" >&2
        return 2
    }
    integration=""
    unit=""
    for t in "$@"; do
        name=${t##*/}
        name=${name%.sh}
        if [ -f "test/integration/$name.sh" ]; then
            integration="$integration $name.sh"
        elif p=$(cd test/unit && ls -d */"$name.c" 2>/dev/null | head -n 1) && [ -n "$p" ]; then
            unit="$unit ${p%.c}"
        else
            echo "run-tests.sh: no test named '$t' (test/integration/*.sh, test/unit/*/*.c)" >&2
            return 2
        fi
    done
    if ! make -C _build >"$LOGS/build.log" 2>&1 ||
        ! make -C _build/test/programs check >>"$LOGS/build.log" 2>&1; then
        grep -E -B2 -A6 'error|Error' "$LOGS/build.log" | tail -n 40
        echo "run-tests.sh: the build failed ($LOGS/build.log)"
        return 1
    fi
    rc=0
    rm -f _build/test/unit/*/*.trs _build/test/integration/*.trs
    if [ -n "$unit" ]; then
        make -C _build/test/unit check TESTS="${unit# }" -j"$JOBS" >"$LOGS/unit.log" 2>&1 || rc=1
    fi
    if [ -n "$integration" ]; then
        make -C _build/test/integration check INTEGRATION_TESTS="${integration# }" -j"$JOBS" \
            >"$LOGS/integration.log" 2>&1 || rc=1
    fi
    count_tests _build
    cat "$LOGS/summary-_build.txt"
    for trs in _build/test/unit/*/*.trs _build/test/integration/*.trs; do
        [ -f "$trs" ] || continue
        case $(sed -n 's/^:test-result: //p' "$trs") in
        PASS | SKIP) ;;
        *)
            echo "---- ${trs%.trs}.log:"
            grep -E '^(FAIL|\[  FAILED|\[  ERROR)' "${trs%.trs}.log" | head -n 20
            ;;
        esac
    done
    echo "$tests_passed passed, $tests_failed failed"
    [ $rc -eq 0 ] && [ "$tests_failed" -eq 0 ]
}

if [ "$MODE" = named ]; then
    run_named "$@"
    exit $?
fi

stage "install Debian packages" herd_install_deps $HERD_TEST_PACKAGES || true
stage "unpack Environment Modules (beside Lmod)" herd_fetch_envmodules "$TOP/_deps/environment-modules"
stage "build (DSO components)" herd_build _build
stage "make check (DSO build, unit + integration)" make_check _build
count_tests _build
stage "nothing left behind by the tests" nothing_left
if [ "$MODE" = all ]; then
    stage "build (static components), install, smoke run" static_check
    stage "libherd exports only herd_*" libherd_exports_check _build
    stage "build (--disable-dynamic-endpoint-slots)" herd_build _build-nodyn \
        --disable-dynamic-endpoint-slots
    stage "unit tests (--disable-dynamic-endpoint-slots)" unit_check _build-nodyn
    count_tests _build-nodyn
    stage "make install / uninstall" install_check
    # alone: make install relinks in the build tree (test/integration/Makefile.am)
    stage "installed tree moved, HERD_PREFIX, module load herd, man -k (test_install)" \
        make -C _build-install/test/integration check INTEGRATION_TESTS=test_install.sh VERBOSE=yes
    count_tests _build-install
    stage "Debian packages and RPMs: build, lintian, install, smoke run, purge" \
        sh contrib/packages.sh _build "$TOP/_build-pkg"
    stage "valgrind unit tests (DSO build)" valgrind_check _build
    stage "make distcheck (unit tests + smoke test)" distcheck ""
    stage "make distcheck (static components; builds, installs, no test run)" \
        distcheck_build_only "--enable-static-components"
    # the harnesses of run.sh, 15 s each, one per CPU at a time
    stage "fuzz smoke: buffers, hostfile, Slurm lists, launch and wireup messages, ofi overlay (15 s each)" \
        sh test/fuzz/run.sh 15
    stage "fuzz smoke: overlay frames (20 s)" sh test/fuzz/run_overlay.sh 20
    stage "nothing left behind at the end" nothing_left
fi

echo
for f in "$LOGS"/summary-*.txt; do
    echo "$(basename "$f" .txt):"
    cat "$f"
done
echo "test cases: $tests_passed passed, $tests_failed failed; stages: $stages_passed passed," \
    "$stages_failed failed ($(($(date +%s) - started))s)"
echo "$((tests_passed + stages_passed)) passed, $((tests_failed + stages_failed)) failed"
[ $((tests_failed + stages_failed)) -eq 0 ]
