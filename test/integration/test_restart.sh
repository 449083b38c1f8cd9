#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# errmgr restart: a failed process is started again on its node with its rank, up to
# errmgr_restart_max times, each restart said by herdrun; its output goes on in the same stream
# (tags, files); once its restarts are used up the job ends with
# its status; a bad maximum is refused; on a persistent DVM the same, and a node daemon killed
# under a job's process still ends that job (nothing on that node can restart it).
. "$(dirname "$0")/lib.sh"
SIM="--mca ras_simulator_num_nodes"
RESTART="--mca errmgr restart"
# flaky: rank 1 fails its first $FAILS runs (a counter file per rank in $WORK), the others run once
cat >"$WORK/flaky.sh" <<'SCRIPT'
#!/bin/sh
f="$COUNTERS/count.$HERD_RANK"
n=$(cat "$f" 2>/dev/null || echo 0)
echo $((n + 1)) >"$f"
echo "rank $HERD_RANK run $((n + 1))"
[ "$HERD_RANK" = 1 ] && [ "$n" -lt "$FAILS" ] && exit 3
exit 0
SCRIPT
chmod +x "$WORK/flaky.sh"
reset_counters() { rm -rf "$WORK/counters" && mkdir "$WORK/counters"; }

# --- one node: two failures, then a good run --------------------------------------------------
reset_counters
herdrun $RESTART -x COUNTERS="$WORK/counters" -x FAILS=2 -n 2 --oversubscribe "$WORK/flaky.sh"
expect_rc "a rank that fails twice is restarted and the job ends well" 0
expect_eq "every run's output" "$(sort "$OUT" | tr '\n' ';')" \
    "rank 0 run 1;rank 1 run 1;rank 1 run 2;rank 1 run 3;"
expect_err "the first restart is said" \
    "rank 1 on node [^ ]+ \(pid [0-9]+\) exited with status 3; started again \(restart 1, errmgr restart\)"
expect_err "and the second" "started again \(restart 2, errmgr restart\)"
expect_eq "nothing else is said" "$(grep -vc 'started again' "$ERR")" 0
check_clean "restarts on one node"

# --- restarts used up -------------------------------------------------------------------------
reset_counters
herdrun $RESTART --mca errmgr_restart_max 2 -x COUNTERS="$WORK/counters" -x FAILS=9 -n 2 \
    --oversubscribe "$WORK/flaky.sh"
expect_rc "a rank failing after its last restart ends the job with its status" 3
expect_eq "it ran 1 + 2 times" "$(grep -c '^rank 1 run' "$OUT")" 3
expect_err "the end says the restarts are used up" \
    "rank 1 on node .* exited with status 3 \(its 2 restarts used up: errmgr_restart_max\)"
check_clean "restarts used up"

reset_counters
herdrun $RESTART --mca errmgr_restart_max 0 -x COUNTERS="$WORK/counters" -x FAILS=1 -n 2 \
    --oversubscribe "$WORK/flaky.sh"
expect_rc "errmgr_restart_max 0: the first failure ends the job" 3
expect_no_err "without a restart" "started again"

herdrun $RESTART --mca errmgr_restart_max -1 -n 1 true
expect_fail "a negative errmgr_restart_max is refused"
expect_err "saying what is wrong with it" "errmgr_restart_max is -1; it must be 0 or more"

# --- simulated nodes: tags and files go on ----------------------------------------------------
reset_counters
herdrun $SIM 2 $RESTART --tag-output --output-filename "$WORK/files" -x COUNTERS="$WORK/counters" \
    -x FAILS=1 -n 4 --map-by node "$WORK/flaky.sh"
expect_rc "a restart on a simulated node" 0
expect_err "said with its node" "rank 1 on node sim0002 .*started again \(restart 1"
expect_eq "the restarted rank's lines keep its tag" "$(grep -c '^\[1,1\]<stdout>: rank 1 run [12]$' "$OUT")" 2
expect_eq "its file holds both runs" "$(cat "$WORK/files/rank.1/stdout" 2>&1 | tr '\n' ';')" \
    "rank 1 run 1;rank 1 run 2;"
check_clean "a restart on a simulated node"

# --- killed by a signal: restarted ------------------------------------------------------------
reset_counters
herdrun_bg $SIM 2 $RESTART -x COUNTERS="$WORK/counters" -n 2 --map-by node sh -c '
    f="$COUNTERS/count.$HERD_RANK"; n=$(cat "$f" 2>/dev/null || echo 0); echo $((n + 1)) >"$f"
    echo "rank $HERD_RANK run $((n + 1))"
    if [ "$HERD_RANK" = 1 ] && [ "$n" = 0 ]; then exec sleep 60; fi'
sleeping() { for p in $(test_pids); do [ "$(ps -o args= -p "$p")" = "sleep 60" ] && echo "$p"; done; }
has_sleeper() { [ -n "$(sleeping)" ]; }
wait_for 20 has_sleeper
kill -9 $(sleeping)
herdrun_wait 30
expect_rc "a rank killed by a signal is restarted; the job ends well" 0
expect_err "said as killed" "rank 1 on node sim0002 .*was killed by signal 9 .*started again \(restart 1"
expect_eq "both runs' output" "$(sort "$OUT" | tr '\n' ';')" "rank 0 run 1;rank 1 run 1;rank 1 run 2;"
check_clean "a rank killed by a signal"

# --- a persistent DVM -------------------------------------------------------------------------
uri=$WORK/dvm.uri
herd_dvm $SIM 3 --daemonize --report-uri "$uri"
expect_rc "a persistent DVM of 3 nodes" 0
reset_counters
herdrun --dvm-uri "$uri" $RESTART -x COUNTERS="$WORK/counters" -x FAILS=1 -n 3 --map-by node \
    "$WORK/flaky.sh"
expect_rc "a restart in a job on a persistent DVM" 0
expect_err "said" "rank 1 on node sim0002 .*started again \(restart 1"
expect_eq "every run's output" "$(sort "$OUT" | tr '\n' ';')" \
    "rank 0 run 1;rank 1 run 1;rank 1 run 2;rank 2 run 1;"
# its node daemon killed: nothing is left there to restart the process, the job ends
root=$(sed -n 's/^pid //p' "$uri")
# daemon_of VPID: the node daemon with that vpid (node sim000<VPID>)
daemon_of() { daemon_pid_of "$root" "$1"; }
herdrun_bg --dvm-uri "$uri" $RESTART --host sim0002 -n 1 sleep 60
is_sleeping() { [ -n "$(for p in $(test_pids); do ps -o args= -p "$p"; done | grep -x 'sleep 60')" ]; }
wait_for 20 is_sleeping
kill -9 "$(daemon_of 2)"
herdrun_wait 30
expect_fail "a node daemon killed under the job's process: the job ends"
expect_err "naming the node" "node daemon on sim0002 died"
expect_no_err "not restarted" "started again"
herd_dvm --shutdown --dvm-uri "$uri"
wait_for 10 no_herdd
expect_eq "no daemon left" "$(herdd_pids)" ""
check_clean "errmgr restart on a persistent DVM"
finish
