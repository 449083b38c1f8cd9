#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# What other local users see of a user's DVM and jobs (issue 28): the DVM secret is in no
# daemon's /proc/PID/environ; another user submitting to the DVM, attaching to its jobs or
# shutting it down is told the DVM is not theirs; another user's PMIx client at a job's PMIx
# server is refused (docs/wireup.md says what libpmix checks). The other user is "nobody",
# through setpriv: the cases needing it are skipped when not run as root.
. "$(dirname "$0")/lib.sh"
SIM="--mca ras_simulator_num_nodes"
uri=$WORK/dvm.uri
chmod 755 "$WORK" # the other user may look at the contact file, as in a shared folder
herd_dvm $SIM 3 --daemonize --report-uri "$uri"
expect_rc "a persistent DVM of 3 simulated nodes" 0
dvm_pid=$(sed -n 's/^pid //p' "$uri")

# jobs that run until told to end (the file go appears), each rank's environment kept: one on
# the DVM (with the PMIx server), one on herdrun's own DVM (its daemons get the secret the same
# way)
hold='env >"$0/env.$1.$HERD_RANK"; i=0; while [ ! -e "$0/go" ] && [ $i -lt 600 ]; do
    sleep 0.1; i=$((i + 1)); done; echo "rank $HERD_RANK ended"'
herdrun_bg --dvm-uri "$uri" -n 3 --map-by node --mca wireup pmix sh -c "$hold" "$WORK" dvm
job_pid=$run_pid JOB_OUT=$OUT
OUT=$WORK/own.out ERR=$WORK/own.err
herdrun_bg $SIM 2 -n 2 --map-by node sh -c "$hold" "$WORK" own
own_pid=$run_pid
OUT=$WORK/out2 ERR=$WORK/err2
running() { [ "$(ls "$WORK" | grep -c '^env\.')" -eq 5 ]; }
wait_for 60 running || fail "the jobs run"

# --- 4. the DVM secret in /proc/PID/environ ----------------------------------------------------
with_secret=
checked=0
for p in $(test_pids); do
    [ -r "/proc/$p/environ" ] || continue
    checked=$((checked + 1))
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -q '^HERD_DVM_SECRET=' &&
        with_secret="$with_secret $p:$(ps -o comm= -p "$p")"
done
[ "$checked" -ge 18 ] && ok "every process of the DVMs and jobs is looked at ($checked)" ||
    fail "every process of the DVMs and jobs is looked at (only $checked)"
expect_eq "not one has the DVM secret in its /proc/PID/environ" "$with_secret" ""

if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
    as_nobody() {
        (cd / && HERD_IT_TAG=$HERD_IT_TAG setpriv --reuid=65534 --regid=65534 --clear-groups \
            "$@") </dev/null >"$OUT" 2>"$ERR"
        rc=$?
    }
    chmod 644 "$uri"
    # --- 5. another user's DVM ----------------------------------------------------------------
    as_nobody "$HERD_BIN/herdrun/herdrun" --dvm-uri "$uri" -n 1 echo must-not-run
    expect_rc "another user submits to the DVM: exit 1" 1
    expect_err "another user submits: told whose DVM it is and who may use it" \
        "herdrun: the DVM of $uri belongs to user root \\(uid 0\\):"
    expect_err "another user submits: told only its owner may use it" "only its owner may"
    expect_no_err "another user submits: not told the DVM is not running" "running"
    as_nobody "$HERD_BIN/herdrun/herdrun" --dvm-uri "$uri" --attach 1
    expect_rc "another user attaches to a job: exit 1" 1
    expect_err "another user attaches: told whose DVM it is" "belongs to user root"
    as_nobody "$HERD_BIN/herd-dvm/herd-dvm" --shutdown --dvm-uri "$uri"
    expect_rc "another user shuts the DVM down: exit 1" 1
    expect_err "another user shuts it down: told whose DVM it is" \
        "herd-dvm: the DVM of $uri belongs to user root"
    kill -0 "$dvm_pid" 2>/dev/null && ok "the DVM still runs" || fail "the DVM is gone"

    # --- 8. another user at a job's PMIx server (TCP on 127.0.0.1) ------------------------------
    # rank 0's PMIx environment, its data store left out (its folder is ours, 0700): only the
    # server's own check of the connecting user stands in the way
    pmix_env=$(grep -E '^PMIX_(NAMESPACE|RANK|SERVER_URI[0-9]*|SECURITY_MODE|VERSION|BFROP_BUFFER_TYPE|HOSTNAME)=' \
        "$WORK/env.dvm.0" | tr '\n' ' ')
    case $pmix_env in
    *PMIX_SERVER_URI*) ok "the job's rank 0 has a PMIx server to connect to" ;;
    *) fail "the job's rank 0 has a PMIx server to connect to ($pmix_env)" ;;
    esac
    # shellcheck disable=SC2086
    (cd / && env -i $pmix_env PMIX_MCA_gds=hash "$HERD_BUILDDIR/test/programs/pmix_client" \
        bare </dev/null >"$OUT" 2>"$ERR")
    rc=$?
    expect_eq "the same PMIx client as the job's user is let in (the control)" \
        "$rc $(cat "$OUT")" "0 pmix_client rank 0 ok"
    # shellcheck disable=SC2086
    as_nobody env -i $pmix_env PMIX_MCA_gds=hash "$HERD_BUILDDIR/test/programs/pmix_client" bare
    expect_rc "another user's PMIx client, as rank 0 of the job: refused (exit 1)" 1
    expect_err "another user's PMIx client: PMIx_Init fails" "PMIx_Init failed"
else
    echo "SKIP: another user's view (items 5 and 8) needs root and setpriv"
fi

# the jobs are untouched: they end well when told to
touch "$WORK/go"
run_pid=$own_pid
herdrun_wait 60
expect_eq "the job on herdrun's own DVM ends well" "$rc $(grep -c '^rank [01] ended$' "$WORK/own.out")" "0 2"
run_pid=$job_pid
herdrun_wait 60
expect_eq "the job on the DVM ends well" "$rc $(grep -c '^rank [0-2] ended$' "$JOB_OUT")" "0 3"
herd_dvm --shutdown --dvm-uri "$uri"
expect_rc "its owner shuts the DVM down" 0
wait_gone "$dvm_pid" 30 || fail "the DVM's root is gone"
[ -z "$(herdd_pids)" ] && ok "no daemon left" || fail "daemons left: $(herdd_pids)"
finish
