#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A persistent DVM of simulated nodes that outlives its faults (dvm_on_node_loss continue, the
# default of herd-dvm): a killed node daemon that runs none of a job's processes leaves the job
# alone; one that does ends only that job, naming the node; an inner daemon's subtree
# re-attaches and later jobs use every live node; down nodes are said in the DVM's log; and a
# DVM whose root is gone is said so by --shutdown. herdrun's own DVM keeps stopping on a loss.
. "$(dirname "$0")/lib.sh"
SIM="--mca ras_simulator_num_nodes"
# run_job URI ARGS...: herdrun --dvm-uri URI ARGS (stdout $OUT, stderr $ERR, status $rc)
run_job() {
    uri=$1
    shift
    herdrun --dvm-uri "$uri" "$@"
}

# --- a leaf daemon without processes of a running job -----------------------------------------
uri=$WORK/dvm.uri
start_dvm $SIM 4 --mca dvm_radix 2
expect_rc "a persistent DVM of 4 nodes" 0
# the job runs on sim0001 and sim0002 only; daemon 4 (sim0004, a leaf) is killed under it
# the root's PMIx tool server runs in a helper process it forked: a loss is no reason to kill it
# (it was taken for an orphan and killed on every lost daemon, and gone for good after a few)
tool_helper() {
    for p in $(ps -o pid= --ppid "$(sed -n 's/^pid //p' "$uri")"); do
        case $(ps -o args= -p "$p") in *herd-dvm*) echo "$p" ;; esac
    done
}
helper=$(tool_helper)
herdrun_bg --dvm-uri "$uri" --host sim0001,sim0002 -n 2 --map-by node \
    sh -c 'sleep 1; echo "done $HERD_RANK"'
victim=$(dvm_daemon_pid "$uri" 4)
[ -n "$victim" ] && kill -9 "$victim"
herdrun_wait 30
expect_rc "a job elsewhere finishes well after a node daemon is killed" 0
expect_eq "with all its output" "$(sort "$OUT" | tr '\n' ' ')" "done 0 done 1 "
expect_no_err "and nothing said about the lost node" "sim0004"
expect_log "the DVM's log says the node is down" "node sim0004 \(daemon 4\) is down"
if [ -n "$helper" ] && [ "$(tool_helper)" = "$helper" ]; then
    ok "the root's tool server helper outlives the loss"
else
    fail "the root's tool server helper outlives the loss (was '$helper', now '$(tool_helper)')"
fi
run_job "$uri" -n 3 --map-by node sh -c 'echo "$HERD_RANK"'
expect_rc "a new job runs on the three nodes left" 0
expect_eq "every rank of it" "$(sort "$OUT" | tr '\n' ' ')" "0 1 2 "
herdrun --dvm-uri "$uri" --host sim0004 -n 1 true
expect_fail "a job asking for the down node is refused"
expect_err "saying the node is down" "sim0004, which is down"

# --- a daemon under a job's process: only that job ends -----------------------------------------
# no timing: job a sleeps until it is killed, job b's ranks wait for the go file the test makes
# once its node daemon is dead (both are seen running first, however loaded the machine)
herdrun_bg --dvm-uri "$uri" --host sim0003 -n 1 sleep 3000
job_a=$run_pid
OUT_A=$OUT ERR_A=$ERR
OUT=$WORK/b.out ERR=$WORK/b.err
HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herdrun/herdrun" --dvm-uri "$uri" --host sim0001,sim0002 \
    -n 2 --map-by node sh -c 'while [ ! -e "$0" ]; do sleep 0.1; done; echo "b $HERD_RANK"' \
    "$WORK/go" </dev/null >"$OUT" 2>"$ERR" &
job_b=$!
running_ab() {
    args=$(for p in $(test_pids); do ps -o args= -p "$p"; done)
    [ "$(echo "$args" | grep -c '^sleep 3000$')" -ge 1 ] &&
        [ "$(echo "$args" | grep -c '^sleep 0.1$\|^sh -c while')" -ge 2 ]
}
if wait_for 60 running_ab; then ok "both jobs run"; else
    fail "both jobs run"
    for p in $(test_pids); do ps -o pid=,ppid=,stat=,args= -p "$p"; done
    kill -0 "$job_a" 2>/dev/null && echo "job a's herdrun runs" || echo "job a's herdrun ended"
    echo "job a stdout:"; cat "$OUT_A"; echo "job a stderr:"; cat "$ERR_A"
    echo "dvm log:"; tail -20 "$WORK/dvm.log"
fi
victim=$(dvm_daemon_pid "$uri" 3)
expect_eq "node daemon 3 is found" "$(echo "$victim" | grep -c "^[0-9][0-9]*$")" 1
kill -9 $victim
run_pid=$job_a
OUT=$OUT_A ERR=$ERR_A
herdrun_wait 30
expect_fail "the job on the killed node fails"
expect_err "naming the node" "sim0003"
touch "$WORK/go"
run_pid=$job_b
OUT=$WORK/b.out ERR=$WORK/b.err
herdrun_wait 30
expect_rc "a second job elsewhere is untouched" 0
expect_eq "with all its output" "$(sort "$OUT" | tr '\n' ' ')" "b 0 b 1 "
herd_dvm --shutdown --dvm-uri "$uri"
expect_rc "--shutdown of a DVM with two nodes down" 0
wait_for 10 no_herdd
expect_eq "no daemon left" "$(herdd_pids)" ""

# --- an inner daemon of 64 (radix 4): its subtree re-attaches ----------------------------------
start_dvm $SIM 64 --mca dvm_radix 4
expect_rc "a persistent DVM of 64 nodes, radix 4" 0
kill -9 "$(dvm_daemon_pid "$uri" 2)" # children 9-12, and their subtrees below
reattached() { [ "$(grep -c 're-attached to daemon 0' "$WORK/dvm.log")" -ge 4 ]; }
wait_for 20 reattached
expect_eq "daemon 2's four children re-attach to the root" \
    "$(grep -c 'lost its parent and re-attached to daemon 0' "$WORK/dvm.log")" 4
expect_log "its node is said down in the DVM's log" "node sim0002 \(daemon 2\) is down"
run_job "$uri" -n 63 --map-by node sh -c 'echo "$HERD_RANK"'
expect_rc "a job on the 63 live nodes" 0
expect_eq "every one of its 63 ranks ran" "$(sort -u "$OUT" | wc -l)" 63
run_job "$uri" -n 63 --map-by node --display-map --do-not-launch true
expect_no_out "the down node is in no map" "sim0002[^0-9]"
herd_dvm --shutdown --dvm-uri "$uri"
expect_rc "--shutdown stops it" 0
wait_for 10 no_herdd
expect_eq "no daemon left" "$(herdd_pids)" ""

# --- the root gone: --shutdown says so -----------------------------------------------------------
start_dvm $SIM 2
root=$(sed -n 's/^pid //p' "$uri")
kill -9 "$root"
wait_gone "$root" 10
wait_for 10 no_herdd
herd_dvm --shutdown --dvm-uri "$uri"
expect_fail "--shutdown of a DVM whose root is gone fails"
expect_err "and says the DVM is not there" "(not running|gone|cannot reach|no DVM)"

# --- herdrun's own DVM still stops on a loss (the job is everything there) ---------------------
# running N: N processes "sleep 30" of this test run
running() { [ "$(for p in $(test_pids); do ps -o args= -p "$p"; done | grep -c '^sleep 30$')" -ge "$1" ]; }
herdrun_bg $SIM 3 --map-by node -n 3 sleep 30
wait_for 20 running 3
victim=$(for p in $(herdd_pids); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx 'HERD_DVM_VPID=2' && echo "$p"
done)
expect_eq "herdrun's own DVM: its daemon 2 runs" "$([ -n "$victim" ] && echo yes)" yes
[ -n "$victim" ] && kill -9 $victim
herdrun_wait 30
expect_fail "herdrun's own DVM: a lost daemon fails the job"
expect_err "herdrun's own DVM: the node is named" "sim0002"
finish
