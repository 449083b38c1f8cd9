#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A persistent DVM over ssh on four test hosts, as a site runs one: many jobs in a row, each
# ending well and said to have ended well (no session daemon taken for failed once its job is
# over), a killed session daemon said once, and a node daemon killed under a running job
# elsewhere: that job ends well, the DVM goes on without the node. Needs root; the hosts are made here and torn
# down on every exit.
. "$(dirname "$0")/lib.sh"

need_testhosts up.sh
testhosts_up 4
SSH_ARGS="-F $HOSTS/ssh_config"

# The DVM's own stderr stays open in the daemon: what it says later lands in dvm.log.
on_host 1 env HERD_IT_TAG="$HERD_IT_TAG" "$HERD_BIN/herd-dvm/herd-dvm" -H n1,n2,n3,n4 \
    --mca plm_ssh_args "$SSH_ARGS" --daemonize --report-uri "$WORK/dvm.uri" --timeout 60 \
    </dev/null >>"$WORK/dvm.log" 2>&1
rc=$?
expect_rc "a persistent DVM on four hosts over ssh" 0

# 100 jobs in a row, each printing a line per rank: every one ends well, none is said to fail.
bad=0
quiet=0
for i in $(seq 1 100); do
    on_n1 "$HERD_BIN/herdrun/herdrun" --dvm-uri "$WORK/dvm.uri" -n 8 --map-by node \
        --oversubscribe sh -c 'echo "job line $HERD_RANK"'
    [ "$rc" -eq 0 ] && [ "$(grep -c '^job line [0-7]$' "$OUT")" -eq 8 ] || bad=$((bad + 1))
    [ -s "$ERR" ] && quiet=$((quiet + 1))
done
expect_eq "100 jobs in a row: every one exits 0 with all 8 lines" "$bad" 0
expect_eq "100 jobs in a row: not one says anything on stderr" "$quiet" 0
expect_eq "100 jobs in a row: the DVM says nothing but its ready line" \
    "$(grep -vc '^DVM ready' "$WORK/dvm.log")" 0
: >"$WORK/dvm.log"

# A session daemon killed with -9: said once (by its node daemon, which knows why), the job
# fails, the DVM goes on.
on_host 1 env HERD_IT_TAG="$HERD_IT_TAG" "$HERD_BIN/herdrun/herdrun" --dvm-uri "$WORK/dvm.uri" \
    -n 4 --map-by node sleep 30 </dev/null >"$OUT" 2>"$ERR" &
run_pid=$!
session_of_n3() {
    for p in $(ip netns pids "${TESTHOSTS_NS}3"); do
        case $(ps -o args= -p "$p" 2>/dev/null) in "herdd --session"*) echo "$p" ;; esac
    done
}
has_session() { [ -n "$(session_of_n3)" ]; }
if wait_for 20 has_session; then
    kill -9 $(session_of_n3)
    herdrun_wait 20
    expect_fail "a killed session daemon: the job fails"
    expect_eq "a killed session daemon: said once" \
        "$(grep -cE 'session daemon on node n3' "$ERR")" 1
    expect_err "a killed session daemon: with the signal" "was killed by signal 9"
else
    fail "a session daemon on n3 starts"
    kill "$run_pid" 2>/dev/null
    herdrun_wait 10
fi
on_n1 "$HERD_BIN/herdrun/herdrun" --dvm-uri "$WORK/dvm.uri" -n 4 --map-by node hostname
expect_rc "after it, a job runs on the same DVM" 0

# The daemon on n3 killed with -9 while a job runs on n1 and n2: that job ends well, the node is
# said down, and a new job runs on the other hosts.
on_host 1 env HERD_IT_TAG="$HERD_IT_TAG" "$HERD_BIN/herdrun/herdrun" --dvm-uri "$WORK/dvm.uri" \
    --host n1,n2 -n 2 --map-by node sh -c 'sleep 2; echo "a $HERD_RANK $(hostname)"' \
    </dev/null >"$OUT" 2>"$ERR" &
run_pid=$!
daemon_of_n3() {
    for p in $(ip netns pids "${TESTHOSTS_NS}3"); do
        case $(ps -o args= -p "$p" 2>/dev/null) in *"$HERD_BUILDDIR"*herdd*) echo "$p" ;; esac
    done
}
victim=$(daemon_of_n3)
expect_eq "n3 runs a daemon of the DVM" "$([ -n "$victim" ] && echo yes)" yes
[ -n "$victim" ] && kill -9 $victim
herdrun_wait 30
expect_rc "a job on n1 and n2 ends well while n3's daemon is killed" 0
expect_eq "with all its output" "$(sort "$OUT" | tr '\n' ' ')" "a 0 n1 a 1 n2 "
n3_down() { grep -q 'node n3 (daemon [0-9]*) is down' "$WORK/dvm.log"; }
wait_for 10 n3_down
expect_eq "the DVM's log says n3 is down" "$(grep -c 'node n3 (daemon [0-9]*) is down' "$WORK/dvm.log")" 1
on_n1 "$HERD_BIN/herdrun/herdrun" --dvm-uri "$WORK/dvm.uri" -n 3 --map-by node hostname
expect_rc "a new job runs on the hosts left" 0
expect_eq "on n1, n2 and n4" "$(sort "$OUT" | tr '\n' ' ')" "n1 n2 n4 "

on_n1 "$HERD_BIN/herd-dvm/herd-dvm" --shutdown --dvm-uri "$WORK/dvm.uri"
expect_rc "--shutdown stops it" 0
wait_for 10 no_herdd
expect_eq "no daemon left on any host" "$(herdd_pids)" ""
finish
