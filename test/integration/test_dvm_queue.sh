#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Many jobs at once on a persistent DVM (issue 28): the root gives each job a free session slot
# on each of its nodes, whatever its job number; when a node has none the job waits, says so,
# and starts once one is free (first come, first served); --no-queue refuses instead; a waiting
# herdrun that is interrupted leaves nothing behind and does not hold up the jobs after it; a
# job waiting for a node that is lost is refused.
. "$(dirname "$0")/lib.sh"
SIM="--mca ras_simulator_num_nodes"
RUN=$HERD_BIN/herdrun/herdrun
uri=$WORK/dvm.uri
herd_dvm $SIM 4 --mca dvm_session_slots 2 --daemonize --report-uri "$uri"
expect_rc "a persistent DVM of 4 simulated nodes with 2 session slots each" 0
dvm_pid=$(sed -n 's/^pid //p' "$uri")

# job I: a herdrun in the background, its output in $WORK/job.I.{out,err,rc}
submit() {
    local i=$1
    shift
    (
        HERD_IT_TAG=$HERD_IT_TAG "$RUN" --dvm-uri "$uri" "$@" </dev/null \
            >"$WORK/job.$i.out" 2>"$WORK/job.$i.err"
        echo $? >"$WORK/job.$i.rc"
    ) &
}
# jobs_done NAME...: every one of these jobs has ended
jobs_done() {
    local i
    for i in "$@"; do [ -f "$WORK/job.$i.rc" ] || return 1; done
}

# 100 jobs at once, 8 ranks each over the 4 nodes: two can run at a time, every one must run.
for i in $(seq 1 100); do
    submit "$i" -n 8 --map-by node --oversubscribe sh -c 'echo "line of rank $HERD_RANK"'
done
wait_for 600 jobs_done $(seq 1 100) || fail "100 jobs at once end within 600 s"
bad=0
short=0
for i in $(seq 1 100); do
    [ "$(cat "$WORK/job.$i.rc" 2>/dev/null)" = 0 ] || bad=$((bad + 1))
    [ "$(grep -c '^line of rank [0-7]$' "$WORK/job.$i.out")" -eq 8 ] || short=$((short + 1))
done
expect_eq "100 jobs at once on 2 slots per node: every one exits 0" "$bad" 0
expect_eq "100 jobs at once: every one prints its 8 lines" "$short" 0
expect_eq "100 jobs at once: no job says it was refused" \
    "$(cat "$WORK"/job.*.err | grep -c 'cannot start\|not started')" 0
waiters=$(grep -l 'is waiting for a free session slot on node sim000[1-4]' "$WORK"/job.*.err |
    wc -l)
echo "jobs that waited for a slot: $waiters of 100"
kill -0 "$dvm_pid" 2>/dev/null && ok "the DVM serves on" || fail "the DVM is gone"

# Both slots of every node held by two jobs that run until told to end (a file appears).
rm -f "$WORK"/job.*
hold='while [ ! -e "$0" ]; do sleep 0.1; done; echo "held $HERD_RANK"'
submit h1 -n 4 --map-by node sh -c "$hold" "$WORK/go"
submit h2 -n 4 --map-by node sh -c "$hold" "$WORK/go"
holders_up() { [ "$(pgrep -fc "^sh -c while .* $WORK/go\$")" -ge 8 ]; }
wait_for 60 holders_up || fail "two jobs hold both slots of every node"

# a third job waits, and says so, naming the node
submit w -n 1 sh -c 'echo "the waiting job ran"'
said_waiting() { grep -qs 'waiting for a free session slot on node sim0001' "$WORK/job.w.err"; }
if wait_for 60 said_waiting; then ok "a job without a free slot waits, naming the node"; else
    fail "a job without a free slot waits, naming the node ($(cat "$WORK/job.w.err"))"
fi
[ ! -f "$WORK/job.w.rc" ] && ok "the waiting job has not ended" || fail "the waiting job ended"

# --no-queue: refused at once with the node and what to do, exit 1, nothing started
submit nq -n 1 --no-queue sh -c 'echo "must not run"'
wait_for 30 jobs_done nq || fail "--no-queue: herdrun returns"
expect_eq "--no-queue: exit 1" "$(cat "$WORK/job.nq.rc")" 1
OUT=$WORK/job.nq.out ERR=$WORK/job.nq.err
expect_err "--no-queue: says which node has no free slot" \
    'not started \(--no-queue\): all 2 session slots of node sim0001 are in use'
expect_no_out "--no-queue: nothing ran" 'must not run'

# a waiting herdrun interrupted: it ends at once, and the job after it is not held up
submit int -n 1 sh -c 'echo "interrupted job ran"'
said_int() { grep -qs 'waiting for a free session slot' "$WORK/job.int.err"; }
wait_for 60 said_int || fail "the second waiting job says it waits"
int_pid=$(pgrep -f "herdrun --dvm-uri .*interrupted job ran" | head -n 1)
[ -n "$int_pid" ] && kill -INT "$int_pid"
wait_for 30 jobs_done int || fail "an interrupted waiting herdrun ends"
expect_eq "an interrupted waiting herdrun exits 130" "$(cat "$WORK/job.int.rc")" 130
expect_eq "the interrupted job never ran" "$(grep -c 'interrupted job ran' "$WORK/job.int.out")" 0

# the slots free: the holders end, the waiting job starts and ends well
touch "$WORK/go"
wait_for 60 jobs_done h1 h2 w ||
    fail "the holders and the waiting job end"
expect_eq "the holders end well" "$(cat "$WORK/job.h1.rc") $(cat "$WORK/job.h2.rc")" "0 0"
expect_eq "the waiting job ran once a slot was free" \
    "$(cat "$WORK/job.w.rc") $(cat "$WORK/job.w.out")" "0 the waiting job ran"

# and the DVM still runs jobs, then shuts down leaving nothing
herdrun --dvm-uri "$uri" -n 8 --map-by node --oversubscribe sh -c 'echo "after $HERD_RANK"'
expect_eq "a job after all that runs on every node" "$rc $(grep -c '^after [0-7]$' "$OUT")" "0 8"
# a node lost under a job waiting for it: the job is refused then, not left waiting
hold2='while [ ! -e "$0" ]; do sleep 0.1; done'
submit k1 --host sim0004 -n 1 sh -c "$hold2" "$WORK/go2"
submit k2 --host sim0004 -n 1 sh -c "$hold2" "$WORK/go2"
holding_4() { [ "$(pgrep -fc "^sh -c while .* $WORK/go2\$")" -ge 2 ]; }
wait_for 60 holding_4 || fail "two jobs hold both slots of sim0004"
submit k3 --host sim0004 -n 1 echo must-not-run
said_k3() { grep -qs 'waiting for a free session slot on node sim0004' "$WORK/job.k3.err"; }
wait_for 60 said_k3 || fail "a third job on sim0004 waits"
kill -9 "$(dvm_daemon_pid "$uri" 4)"
wait_for 60 jobs_done k1 k2 k3 || fail "the jobs on the lost node end"
expect_eq "the job waiting for the lost node: exit 1" "$(cat "$WORK/job.k3.rc")" 1
OUT=$WORK/job.k3.out ERR=$WORK/job.k3.err
expect_err "the job waiting for the lost node: told why and what to do" \
    "waited for a free session slot, but one of its nodes was lost in the meantime. Submit"
expect_no_out "the job waiting for the lost node never ran" "must-not-run"
touch "$WORK/go2"

herd_dvm --shutdown --dvm-uri "$uri"
expect_rc "the DVM shuts down" 0
wait_gone "$dvm_pid" 30 || fail "the DVM's root is gone"
[ -z "$(herdd_pids)" ] && ok "no daemon left" || fail "daemons left: $(herdd_pids)"
finish
