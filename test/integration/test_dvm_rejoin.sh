#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# herd-dvm --add-host: a node daemon killed on a persistent DVM of simulated nodes is started
# again and rejoins (a leaf, and an inner daemon of a radix-4 tree whose children re-attached
# elsewhere); the DVM's log says it is up once, herd-ps lists it up, and the next job runs on
# every node, that one included. Refusals (unknown host, a host that is up, a missing or wrong
# contact file, a DVM that does not survive a loss) say why and exit non-zero; the DVM shuts
# down clean with the rejoined daemons.
. "$(dirname "$0")/lib.sh"
SIM="--mca ras_simulator_num_nodes"
uri=$WORK/dvm.uri
# daemon_pid VPID: the pid of node daemon VPID of the DVM of $uri
daemon_pid() { dvm_daemon_pid "$uri" "$1"; }
log_has() { grep -Eq -- "$1" "$WORK/dvm.log"; }
add_host() { herd_dvm --add-host "$1" --dvm-uri "$uri"; }
ps_nodes() { "$HERD_BIN/herd-ps/herd-ps" --dvm-uri "$uri" --nodes >"$OUT" 2>"$ERR"; rc=$?; }

# --- a leaf daemon: killed, marked down, rejoined ----------------------------------------------
start_dvm $SIM 4 --mca dvm_radix 2
expect_rc "a persistent DVM of 4 nodes" 0
add_host sim0004
expect_fail "--add-host of a node that is up is refused"
expect_err "saying it is up" "node sim0004 is up"
victim=$(daemon_pid 4)
expect_eq "node daemon 4 is found" "$(echo "$victim" | grep -c "^[0-9][0-9]*$")" 1
kill -9 $victim
wait_for 20 log_has "node sim0004 \(daemon 4\) is down"
expect_log "the DVM's log says the node is down" "node sim0004 \(daemon 4\) is down"
# a job running elsewhere while the node rejoins: its ranks wait for a file made afterwards
OUT=$WORK/bg.out ERR=$WORK/bg.err
herdrun_bg --dvm-uri "$uri" --host sim0001,sim0002 -n 2 --map-by node \
    sh -c 'while [ ! -e "$0" ]; do sleep 0.1; done; echo "bg $HERD_RANK"' "$WORK/go"
OUT=$WORK/out ERR=$WORK/err
waiting_ranks() { [ "$(for p in $(test_pids); do ps -o args= -p "$p"; done | grep -c '^sh -c while')" -ge 2 ]; }
wait_for 30 waiting_ranks
add_host sim0004
expect_rc "--add-host of the down node" 0
expect_out "says it rejoined" "node sim0004 \(daemon 4\) rejoined the DVM"
touch "$WORK/go"
OUT=$WORK/bg.out ERR=$WORK/bg.err
herdrun_wait 30
expect_rc "a job running elsewhere during the rejoin ends well" 0
expect_eq "with all its output" "$(sort "$OUT" | tr '\n' ' ')" "bg 0 bg 1 "
OUT=$WORK/out ERR=$WORK/err
expect_log "the DVM's log says it is up again" "node sim0004 \(daemon 4\) is up again"
expect_eq "said once" "$(grep -c 'sim0004 (daemon 4) is up again' "$WORK/dvm.log")" 1
new=$(daemon_pid 4)
expect_eq "a new daemon 4 runs" "$([ -n "$new" ] && [ "$new" != "$victim" ] && echo yes)" yes
ps_nodes
expect_rc "herd-ps --nodes" 0
expect_no_out "lists no node down" "down"
herdrun --dvm-uri "$uri" -n 4 --map-by node --display-map sh -c 'echo "rank $HERD_RANK"'
expect_rc "a job on every node runs" 0
expect_out "its map puts a rank on the rejoined node" "node sim0004: .*1 processes"
expect_eq "and all 4 ranks ran" "$(grep '^rank ' "$OUT" | sort | tr '\n' ' ')" "rank 0 rank 1 rank 2 rank 3 "
herdrun --dvm-uri "$uri" --host sim0004 -n 2 sh -c 'echo "on $HERD_RANK"'
expect_rc "a job on the rejoined node alone" 0
expect_eq "with its output" "$(sort "$OUT" | tr '\n' ' ')" "on 0 on 1 "
# lost again: said down again, and back again
kill -9 "$(daemon_pid 4)"
down_twice() { [ "$(grep -c 'node sim0004 (daemon 4) is down' "$WORK/dvm.log")" -ge 2 ]; }
wait_for 20 down_twice
expect_eq "a rejoined node lost again is said down again" "$(grep -c 'node sim0004 (daemon 4) is down' "$WORK/dvm.log")" 2
add_host sim0004
expect_rc "and rejoins again" 0
herdrun --dvm-uri "$uri" -n 4 --map-by node sh -c 'echo "$HERD_RANK"'
expect_rc "a job on every node after the second rejoin" 0
expect_eq "with its 4 ranks" "$(sort "$OUT" | tr '\n' ' ')" "0 1 2 3 "

# --- refusals --------------------------------------------------------------------------------
add_host nosuchnode
expect_fail "--add-host of a host not in the DVM is refused"
expect_err "saying adding a new node is not supported yet" "not a node of this DVM.*|not supported yet"
herd_dvm --add-host sim0004
expect_fail "--add-host without --dvm-uri"
expect_err "saying it needs --dvm-uri" "needs --dvm-uri"
herd_dvm --add-host sim0004 --dvm-uri "$WORK/nosuchfile"
expect_fail "--add-host with a missing contact file"
expect_err "naming the file" "nosuchfile"
echo "not a contact file" >"$WORK/bad.uri"
herd_dvm --add-host sim0004 --dvm-uri "$WORK/bad.uri"
expect_fail "--add-host with a wrong contact file"
expect_err "saying so" "bad.uri"

herd_dvm --shutdown --dvm-uri "$uri"
expect_rc "--shutdown of a DVM with a rejoined node" 0
wait_for 10 no_herdd
expect_eq "no daemon left" "$(herdd_pids)" ""
add_host sim0004
expect_fail "--add-host on a DVM that is gone"
expect_err "saying it cannot be reached" "cannot be reached|not a usable DVM contact file"

# --- an inner daemon (radix 4): its children re-attached; it comes back as a leaf -------------
start_dvm $SIM 24 --mca dvm_radix 4
expect_rc "a persistent DVM of 24 nodes, radix 4" 0
kill -9 "$(daemon_pid 2)" # children 9-12
reattached() { [ "$(grep -c 're-attached to daemon 0' "$WORK/dvm.log")" -ge 4 ]; }
wait_for 20 reattached
expect_log "its node is said down" "node sim0002 \(daemon 2\) is down"
add_host sim0002
expect_rc "--add-host of the inner node" 0
expect_log "the DVM's log says it is up again" "node sim0002 \(daemon 2\) is up again"
herdrun --dvm-uri "$uri" -n 24 --map-by node sh -c 'echo "$HERD_RANK"'
expect_rc "a job on all 24 nodes" 0
expect_eq "every one of its 24 ranks ran" "$(sort -u "$OUT" | wc -l)" 24
herdrun --dvm-uri "$uri" --host sim0002,sim0010 -n 2 --map-by node sh -c 'echo "r $HERD_RANK"'
expect_rc "a job on the rejoined node and one of its old children" 0
expect_eq "with its output" "$(sort "$OUT" | tr '\n' ' ')" "r 0 r 1 "
# one of the old children lost now: its new parent (the root) reports it, not the rejoined one
rejoined=$(daemon_pid 2)
kill -9 "$(daemon_pid 10)"
wait_for 20 log_has "node sim0010 \(daemon 10\) is down"
expect_log "an old child lost later is said down" "node sim0010 \(daemon 10\) is down"
# the root reaps the killed daemon: the rejoined one is no orphan to end
herdrun --dvm-uri "$uri" --host sim0002 -n 1 true
expect_rc "a job on the rejoined node after another daemon was reaped" 0
expect_eq "the rejoined daemon still runs" "$(daemon_pid 2)" "$rejoined"
add_host sim0010
expect_rc "and rejoins" 0
herdrun --dvm-uri "$uri" -n 24 --map-by node sh -c 'echo "$HERD_RANK"'
expect_rc "a job on all 24 nodes again" 0
expect_eq "every one of its 24 ranks ran" "$(sort -u "$OUT" | wc -l)" 24
herd_dvm --shutdown --dvm-uri "$uri"
expect_rc "--shutdown stops it" 0
wait_for 10 no_herdd
expect_eq "no daemon left" "$(herdd_pids)" ""

# --- a rejoin that fails: the daemon exits before joining, or does not join in time ----------
# daemon 1 (the parent of 3 and 4) is stopped, so a new daemon 4 cannot finish joining below it
start_dvm $SIM 4 --mca dvm_radix 2 --timeout 10
expect_rc "a persistent DVM of 4 nodes with a 10 s start-up timeout" 0
kill -9 "$(daemon_pid 3)" "$(daemon_pid 4)"
two_down() { log_has "node sim0003 \(daemon 3\) is down" && log_has "node sim0004 \(daemon 4\) is down"; }
wait_for 20 two_down
expect_eq "nodes 3 and 4 are said down" "$(grep -c 'node sim000[34] (daemon [34]) is down' "$WORK/dvm.log")" 2
parent=$(daemon_pid 1)
kill -STOP "$parent"
HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herd-dvm/herd-dvm" --add-host sim0004 --dvm-uri "$uri" \
    </dev/null >"$WORK/add1.out" 2>"$WORK/add1.err" &
add1=$!
new_four() { [ -n "$(daemon_pid 4)" ]; }
wait_for 20 new_four
add_host sim0003
expect_fail "a second --add-host while one is in progress is refused"
expect_err "saying which rejoin is in progress" "already in progress \(node sim0004\)"
kill -9 "$(daemon_pid 4)"
wait "$add1"
rc=$?
OUT=$WORK/add1.out ERR=$WORK/add1.err
expect_fail "--add-host whose daemon dies before joining fails"
expect_err "saying it exited before it joined" "sim0004 \(daemon 4\) was killed by signal 9.* before it joined"
OUT=$WORK/out ERR=$WORK/err
add_host sim0004
expect_fail "--add-host whose daemon does not join in time fails"
expect_err "saying it did not join within the start-up timeout" "within 10 seconds \(dvm_startup_timeout"
expect_log "the DVM's log says so too" "within 10 seconds \(dvm_startup_timeout"
kill -CONT "$parent"
expect_eq "no daemon 4 is left of the failed attempts" "$(daemon_pid 4)" ""
add_host sim0004
expect_rc "once its parent answers again, node 4 rejoins" 0
add_host sim0003
expect_rc "and node 3" 0
herdrun --dvm-uri "$uri" -n 4 --map-by node sh -c 'echo "$HERD_RANK"'
expect_rc "a job on every node" 0
expect_eq "with its 4 ranks" "$(sort "$OUT" | tr '\n' ' ')" "0 1 2 3 "
herd_dvm --shutdown --dvm-uri "$uri"
expect_rc "--shutdown stops it" 0
wait_for 10 no_herdd
expect_eq "no daemon left" "$(herdd_pids)" ""

# --- a DVM that stops on a loss has nothing to rejoin ------------------------------------------
start_dvm $SIM 2 --mca dvm_on_node_loss stop
expect_rc "a DVM with dvm_on_node_loss stop" 0
add_host sim0002
expect_fail "--add-host there is refused"
expect_err "saying the DVM does not survive a loss" "does not survive the loss of a node"
herd_dvm --shutdown --dvm-uri "$uri"
wait_for 10 no_herdd

# --- simulated nodes hosted many to a process: not supported yet ------------------------------
start_dvm $SIM 4 --mca ras_simulator_nodes_per_process 2
expect_rc "a DVM of 4 simulated nodes in 2 processes" 0
add_host sim0001
expect_fail "--add-host there is refused"
expect_err "saying it is not supported yet" "not supported yet for this DVM"
herd_dvm --shutdown --dvm-uri "$uri"
expect_rc "--shutdown stops it" 0
wait_for 10 no_herdd
expect_eq "no daemon left" "$(herdd_pids)" ""
finish
