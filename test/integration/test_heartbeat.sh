#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Hung daemons are noticed (dvm_heartbeat_timeout, short here): a session daemon or a node daemon
# stopped with SIGSTOP ends herdrun's job with a message naming the node and saying it stopped
# answering; on a persistent DVM the stopped node is said down and the next job runs on the
# others; and an idle job whose herdrun watches with a shorter timeout than the DVM's is no false
# alarm. Whatever a case stops, it continues or kills, so nothing is left.
. "$(dirname "$0")/lib.sh"
SIM="--mca ras_simulator_num_nodes"
HB="--mca dvm_heartbeat_timeout 2"
uri=$WORK/dvm.uri

# running N: N processes "sleep 60" of this test run
running() { [ "$(for p in $(test_pids); do ps -o args= -p "$p"; done | grep -c '^sleep 60$')" -ge "$1" ]; }
# node_daemon VPID: the pid of this test's node daemon VPID (of the only DVM running)
node_daemon() {
    for p in $(herdd_pids); do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "HERD_DVM_VPID=$1" && echo "$p"
    done
}
# session_daemon PID: the session daemon node daemon PID started
session_daemon() {
    for p in $(ps -o pid= --ppid "$1"); do
        case $(ps -o args= -p "$p") in *--session*) echo "$p" ;; esac
    done
}
# release PID: a process this test stopped goes on (and, if it does not end, is killed)
release() {
    [ -n "$1" ] || return 0
    kill -CONT "$1" 2>/dev/null
    wait_gone "$1" 10 || kill -9 "$1" 2>/dev/null
}

# --- a session daemon stops answering: herdrun's own DVM ---------------------------------------
herdrun_bg $SIM 3 $HB --map-by node -n 3 sleep 60
wait_for 20 running 3
stopped=$(session_daemon "$(node_daemon 2)")
expect_eq "the job's session daemon on sim0002 runs" "$([ -n "$stopped" ] && echo yes)" yes
kill -STOP "$stopped"
herdrun_wait 30
release "$stopped"
expect_fail "a stopped session daemon fails the job"
expect_err "herdrun names its node and says it stopped answering" \
    "node sim0002 .*stopped answering: nothing heard from it for 2 s \\(dvm_heartbeat_timeout\\)"
expect_no_err "and does not call it a closed connection" "closed"
check_clean "a stopped session daemon"

# --- a node daemon stops answering: herdrun's own DVM (dvm_on_node_loss stop) ------------------
herdrun_bg $SIM 3 $HB --map-by node -n 3 sleep 60
wait_for 20 running 3
stopped=$(node_daemon 2)
expect_eq "herdrun's node daemon 2 runs" "$([ -n "$stopped" ] && echo yes)" yes
kill -STOP "$stopped"
herdrun_wait 30
release "$stopped"
expect_fail "a stopped node daemon fails herdrun's job"
expect_err "naming the node" "sim0002"
expect_err "and saying it stopped answering" "daemon 2 .*stopped answering"
check_clean "a stopped node daemon"

# --- a persistent DVM: a stopped node daemon is down, the next job runs elsewhere ---------------
HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herd-dvm/herd-dvm" $SIM 4 $HB --mca dvm_radix 2 --daemonize \
    --report-uri "$uri" </dev/null >"$WORK/dvm.out" 2>"$WORK/dvm.log"
rc=$?
expect_rc "a persistent DVM of 4 nodes" 0
stopped=$(node_daemon 4)
kill -STOP "$stopped"
down() { grep -q 'node sim0004 (daemon 4) is down' "$WORK/dvm.log"; }
wait_for 30 down
expect_eq "the DVM's log says the stopped node is down because it stopped answering" \
    "$(grep -c 'node sim0004 (daemon 4) is down: daemon 4 .*stopped answering' "$WORK/dvm.log")" 1
herdrun --dvm-uri "$uri" -n 3 --map-by node sh -c 'echo "$HERD_RANK"'
expect_rc "a job then runs on the three other nodes" 0
expect_eq "every rank of it" "$(sort "$OUT" | tr '\n' ' ')" "0 1 2 "
release "$stopped"

# --- a persistent DVM: a stopped session daemon, herdrun watching with a shorter timeout -------
# herdrun has 2 s from its environment, the DVM's daemons the default: the two ends of each
# connection agree on the shorter, so an idle job is no false alarm, and a hung one is noticed
HERD_IT_TAG=$HERD_IT_TAG HERD_MCA_dvm_heartbeat_timeout=2 "$HERD_BIN/herdrun/herdrun" \
    --dvm-uri "$uri" -n 3 --map-by node sh -c 'sleep 5; echo "idle $HERD_RANK"' \
    </dev/null >"$OUT" 2>"$ERR"
rc=$?
expect_rc "a job idle for more than herdrun's timeout ends well" 0
expect_eq "with all its output" "$(sort "$OUT" | tr '\n' ' ')" "idle 0 idle 1 idle 2 "
HERD_IT_TAG=$HERD_IT_TAG HERD_MCA_dvm_heartbeat_timeout=2 "$HERD_BIN/herdrun/herdrun" \
    --dvm-uri "$uri" -n 3 --map-by node sleep 60 </dev/null >"$OUT" 2>"$ERR" &
run_pid=$!
wait_for 20 running 3
stopped=$(session_daemon "$(node_daemon 2)")
kill -STOP "$stopped"
herdrun_wait 30
release "$stopped"
expect_fail "a stopped session daemon of a persistent DVM fails its job"
expect_err "herdrun says which node stopped answering" "node sim0002 .*stopped answering"
herd_dvm --shutdown --dvm-uri "$uri"
expect_rc "--shutdown stops the DVM" 0
wait_for 10 no_herdd
expect_eq "no daemon left" "$(herdd_pids)" ""
finish
