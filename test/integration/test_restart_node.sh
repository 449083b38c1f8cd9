#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# errmgr restart after a node loss: the node daemon under a job's rank is killed (kill -9), the
# ranks that ran there start again on another live node of the job with their rank, herdrun
# says so once per rank, the job's output is complete and it ends well; a second job on other
# nodes is untouched. Restarts used up, no live node with room, or no errmgr restart: the job
# ends as before, naming the node. Simulated nodes on a persistent DVM and on herdrun's own DVM.
. "$(dirname "$0")/lib.sh"
SIM="--mca ras_simulator_num_nodes"
RESTART="--mca errmgr restart"
# mover: rank 1 fails its first $FAILS runs (exit 3), then waits to go with its node (its run
# number FAILS + 1); the others wait (unless WAIT=0) until rank 1 ran once more, so the job's end
# needs the moved rank. Each run says its number; then, with WHERE set, every rank runs
# herd_where 1 (libherd: where rank 1 is, as its job database says). With HOLD set, rank 1's
# run after the move waits for that file (the test looks at the running job first).
cat >"$WORK/mover.sh" <<'SCRIPT'
#!/bin/sh
f="$COUNTERS/count.$HERD_RANK"
n=$(cat "$f" 2>/dev/null || echo 0)
echo $((n + 1)) >"$f"
echo "rank $HERD_RANK run $((n + 1))"
if [ "$HERD_RANK" = 1 ]; then
    [ "$n" -lt "${FAILS:-0}" ] && exit 3
    [ "$n" = "${FAILS:-0}" ] && exec sleep 60
    if [ -n "${HOLD:-}" ]; then
        i=0
        while [ ! -e "$HOLD" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
    fi
elif [ "${WAIT:-1}" = 1 ]; then
    i=0
    while [ "$(cat "$COUNTERS/count.1" 2>/dev/null)" != $((${FAILS:-0} + 2)) ] && [ $i -lt 600 ]; do
        sleep 0.1; i=$((i + 1))
    done
fi
[ -n "${WHERE:-}" ] && exec "$WHERE" 1
exit 0
SCRIPT
chmod +x "$WORK/mover.sh"
reset_counters() { rm -rf "$WORK/counters" && mkdir "$WORK/counters"; }
sleeping() { for p in $(test_pids); do [ "$(ps -o args= -p "$p")" = "sleep 60" ] && echo "$p"; done; }
has_sleeper() { [ -n "$(sleeping)" ]; }
# daemon_of VPID: the node daemon with that vpid (node sim000<VPID>)
daemon_of() { daemon_pid_of "$root" "$1"; }
uri=$WORK/dvm.uri
# dvm_up ARGS: a persistent DVM of simulated nodes; dvm_down WHAT: shut down, nothing left
dvm_up() {
    herd_dvm "$@" --daemonize --report-uri "$uri"
    expect_rc "a persistent DVM ($*)" 0
    root=$(sed -n 's/^pid //p' "$uri")
}
dvm_down() {
    herd_dvm --shutdown --dvm-uri "$uri"
    wait_for 10 no_herdd
    expect_eq "$1: no daemon left" "$(herdd_pids)" ""
    check_clean "$1"
}
# run_and_lose VPID ARGS: herdrun ARGS on the DVM, the node daemon VPID killed under rank 1
run_and_lose() {
    lose=$1
    shift
    reset_counters
    herdrun_bg --dvm-uri "$uri" -x COUNTERS="$WORK/counters" "$@" "$WORK/mover.sh"
    wait_for 20 has_sleeper
    kill -9 "$(daemon_of "$lose")"
    herdrun_wait 60
}
MOVED="rank 1 on node sim0002 was lost with its node; started again on sim0001"

# --- rank 1's node lost: it runs again on another node; a job elsewhere goes on ---------------
dvm_up $SIM 4
# a second job on the fourth node only, to be left alone
"$HERD_BIN/herdrun/herdrun" --dvm-uri "$uri" --host sim0004 -n 1 sh -c \
    'while [ ! -e "$1" ]; do sleep 0.1; done; echo other done' sh "$WORK/other.go" \
    </dev/null >"$WORK/other.out" 2>"$WORK/other.err" &
other_pid=$!
# it runs before the next job is submitted, so that it is job 1 and the next job 2 (herd-ps below)
other_runs() {
    "$HERD_BIN/herd-ps/herd-ps" --dvm-uri "$uri" --procs 1 --parsable 2>/dev/null |
        grep -q 'state:running'
}
wait_for 20 other_runs || fail "the job on the fourth node runs"
reset_counters
herdrun_bg --dvm-uri "$uri" -x COUNTERS="$WORK/counters" $RESTART --host sim0001,sim0002,sim0003 \
    -x WHERE="$HERD_BUILDDIR/test/programs/herd_where" -x HOLD="$WORK/hold" -n 3 --map-by node \
    "$WORK/mover.sh"
wait_for 20 has_sleeper
kill -9 "$(daemon_of 2)"
moved_ran() { [ "$(cat "$WORK/counters/count.1" 2>/dev/null)" = 2 ]; }
wait_for 20 moved_ran
"$HERD_BIN/herd-ps/herd-ps" --dvm-uri "$uri" --procs 2 >"$WORK/ps.out" 2>&1
expect_eq "herd-ps shows rank 1 running on its new node" \
    "$(awk '$1 == 1 {print $2, $4}' "$WORK/ps.out")" "sim0001 running"
touch "$WORK/hold"
herdrun_wait 60
expect_rc "rank 1's node lost: it runs again elsewhere, the job ends well" 0
expect_err "the move is said" "$MOVED \(restart 1 of 3, errmgr restart\)"
expect_eq "said once, nothing else by herdrun" "$(grep -c '^herdrun' "$ERR")" 1
expect_eq "every run's output" "$(grep ' run ' "$OUT" | sort | tr '\n' ';')" \
    "rank 0 run 1;rank 1 run 1;rank 1 run 2;rank 2 run 1;"
expect_eq "libherd: the moved rank and its peers see it on its new node" \
    "$(grep sees "$OUT" | sort | tr '\n' ';')" \
    "rank 0 on sim0001 sees rank 1 on sim0001;rank 1 on sim0001 sees rank 1 on sim0001;rank 2 on sim0003 sees rank 1 on sim0001;"
touch "$WORK/other.go"
wait "$other_pid"
expect_eq "the job on another node is untouched" "$?:$(cat "$WORK/other.out")" "0:other done"
dvm_down "a rank moved off a lost node"

# --- the others had finished: the node that takes it has processes again ---------------------
dvm_up $SIM 3
run_and_lose 2 $RESTART -x WAIT=0 -n 3 --map-by node
expect_rc "the moved rank alone still runs: the job waits for it and ends well" 0
expect_err "said" "$MOVED \(restart 1 of 3"
expect_eq "every run's output" "$(sort "$OUT" | tr '\n' ';')" \
    "rank 0 run 1;rank 1 run 1;rank 1 run 2;rank 2 run 1;"
# --- restarts used up: the job ends, naming the node -----------------------------------------
run_and_lose 3 $RESTART --mca errmgr_restart_max 1 -x FAILS=1 --host sim0001,sim0003 -n 2 \
    --map-by node
expect_fail "rank 1 restarted once already, errmgr_restart_max 1: the job ends"
expect_err "naming the node" "node daemon on sim0003 died"
expect_err "why" "cannot move them to another node: rank 1 has used its 1 restart \(errmgr_restart_max\)"
expect_no_err "not moved" "started again on"
dvm_down "restarts used up"

# --- no live node with room ------------------------------------------------------------------
dvm_up $SIM 3 --mca ras_simulator_slots 1
run_and_lose 2 $RESTART -n 3
expect_fail "every other node full: the job ends"
expect_err "naming the node" "node daemon on sim0002 died"
expect_err "and why" "no other live node of the job has 1 free slot for it \(--oversubscribe"
expect_no_err "not moved" "started again on"
# --- the same with --oversubscribe: it moves -------------------------------------------------
run_and_lose 3 $RESTART --oversubscribe --host sim0001,sim0003 -n 2 --map-by node
expect_rc "--oversubscribe: it moves to a full node" 0
expect_err "said" "rank 1 on node sim0003 was lost with its node; started again on sim0001"
dvm_down "no live node with room"

# --- two nodes lost one after the other: the moved rank moves again, its restarts counted -----
# held: every rank says its run and waits for $WORK/release
cat >"$WORK/held.sh" <<'SCRIPT'
#!/bin/sh
f="$COUNTERS/count.$HERD_RANK"
n=$(cat "$f" 2>/dev/null || echo 0)
echo $((n + 1)) >"$f"
echo "rank $HERD_RANK run $((n + 1))"
i=0
while [ ! -e "$RELEASE" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
SCRIPT
chmod +x "$WORK/held.sh"
runs_are() { [ "$(cat "$WORK/counters/count.1" 2>/dev/null):$(cat "$WORK/counters/count.2" 2>/dev/null)" = "$1" ]; }
dvm_up $SIM 4
reset_counters
rm -f "$WORK/release"
# ranks 0 and 4 on sim0001, 1 on sim0002, 2 on sim0003, 3 on sim0004
herdrun_bg --dvm-uri "$uri" $RESTART -x COUNTERS="$WORK/counters" -x RELEASE="$WORK/release" \
    -n 5 --map-by node "$WORK/held.sh"
wait_for 20 runs_are 1:1
kill -9 "$(daemon_of 2)"
wait_for 20 runs_are 2:1
kill -9 "$(daemon_of 3)"
wait_for 20 runs_are 3:2
touch "$WORK/release"
herdrun_wait 60
expect_rc "two nodes lost in turn: the job ends well" 0
expect_err "rank 1 moved to the freest node, sim0003" \
    "rank 1 on node sim0002 was lost with its node; started again on sim0003 \(restart 1 of 3"
expect_err "then with sim0003's rank 2 to sim0004, its second restart" \
    "rank 1 on node sim0003 was lost with its node; started again on sim0004 \(restart 2 of 3"
expect_err "rank 2's first" \
    "rank 2 on node sim0003 was lost with its node; started again on sim0004 \(restart 1 of 3"
expect_eq "every run's output" "$(sort "$OUT" | tr '\n' ';')" \
    "rank 0 run 1;rank 1 run 1;rank 1 run 2;rank 1 run 3;rank 2 run 1;rank 2 run 2;rank 3 run 1;rank 4 run 1;"
dvm_down "two nodes lost in turn"

# --- without errmgr restart: as before -------------------------------------------------------
dvm_up $SIM 3
run_and_lose 2 -n 3 --map-by node
expect_fail "without errmgr restart the job ends"
expect_err "naming the node" "the node daemon on sim0002 died"
expect_no_err "nothing moved" "started again"
dvm_down "a lost node without errmgr restart"

# --- herdrun's own DVM, told to go on without a lost node ------------------------------------
reset_counters
herdrun_bg $SIM 3 --mca dvm_on_node_loss continue $RESTART -x COUNTERS="$WORK/counters" -n 3 \
    --map-by node "$WORK/mover.sh"
wait_for 20 has_sleeper
root=$run_pid
kill -9 "$(daemon_of 2)"
herdrun_wait 60
expect_rc "herdrun's own DVM (dvm_on_node_loss continue): rank 1 moves, the job ends well" 0
expect_err "said" "$MOVED \(restart 1 of 3"
expect_eq "every run's output" "$(grep ' run ' "$OUT" | sort | tr '\n' ';')" \
    "rank 0 run 1;rank 1 run 1;rank 1 run 2;rank 2 run 1;"
wait_for 10 no_herdd
check_clean "herdrun's own DVM"
finish
