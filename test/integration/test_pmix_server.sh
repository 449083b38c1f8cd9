#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# What herd's PMIx server answers, as PMIx clients built against libpmix see it, on this host and
# on simulated nodes (one session daemon each, so requests cross daemons):
#   PMIx_Lookup with PMIX_WAIT waits for another rank's PMIx_Publish; PMIX_TIMEOUT ends the wait;
#   PMIx_Log reaches herdrun's stdout and stderr as the process's own output (tagged with
#   --tag-output), and syslog;
#   PMIx_Job_control kills, terminates or signals the caller's job or named processes; what herd
#   does not offer (checkpoint) is refused;
#   PMIx_Query_info answers its keys one by one;
# and the example clients of OpenPMIx 4.2 (test/programs/pmix_examples.c does what each does)
# behave as under mpirun. After every case nothing may be left running or in /dev/shm.
. "$(dirname "$0")/lib.sh"
SIM="--mca ras simulator --mca ras_simulator_num_nodes"
HERDRUN_LIMIT=60
CALLS=$HERD_BUILDDIR/test/programs/pmix_calls
EXAMPLES=$HERD_BUILDDIR/test/programs/pmix_examples
if [ ! -x "$CALLS" ] || [ ! -x "$EXAMPLES" ]; then
    if [ -n "${CI:-}" ]; then
        fail "CI runs this test: herd must be built with OpenPMIx (libpmix-dev)"
        finish
        exit 1
    fi
    echo "SKIP: herd was built without OpenPMIx: no PMIx client to run"
    exit 77
fi


# --- PMIx_Lookup ---------------------------------------------------------------------------------
for nodes in 1 2; do
    where="on $nodes node(s)"
    run_ok "lookup with PMIX_WAIT $where" $SIM $nodes --mca ras_simulator_slots 4 -n 3 \
        "$CALLS" lookup-wait
    expect_eq "lookup with PMIX_WAIT $where: both ranks waited and got rank 0's value" \
        "$(count_out "^pmix_calls rank [12] looked up 'published by rank 0' after waiting$")" 2
done
run_ok "lookup with PMIX_WAIT and PMIX_TIMEOUT 1" -n 3 --oversubscribe "$CALLS" lookup-timeout 1
expect_eq "lookup with PMIX_TIMEOUT: both ranks get PMIX_ERR_TIMEOUT after waiting" \
    "$(count_out '^pmix_calls rank [12] lookup: TIMEOUT after waiting$')" 2
run_ok "lookup without PMIX_WAIT" -n 3 --oversubscribe "$CALLS" lookup-nowait
expect_eq "lookup without PMIX_WAIT: not found at once" \
    "$(count_out '^pmix_calls rank [12] lookup: NOT-FOUND after no wait$')" 2

# --- PMIx_Log ------------------------------------------------------------------------------------
run_ok "PMIx_Log on 2 nodes" $SIM 2 --mca ras_simulator_slots 4 -n 3 --tag-output "$CALLS" log
for r in 0 1 2; do
    expect_out "PMIx_Log: rank $r's stdout line, tagged as its output" \
        "^\[[0-9]+,$r\]<stdout>: log to stdout from rank $r$"
    expect_err "PMIx_Log: rank $r's stderr line, tagged as its output" \
        "^\[[0-9]+,$r\]<stderr>: log to stderr from rank $r$"
done
expect_no_out "PMIx_Log: stdout lines only on stdout" "log to stderr"
expect_out "PMIx_Log to a channel herd does not offer: PMIX_ERR_NOT_SUPPORTED" \
    "rank 0 log to the job record: NOT-SUPPORTED$"
# syslog: in a mount namespace of its own, /dev/log is a socket this test reads
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null && command -v python3 >/dev/null; then
    cat >"$WORK/syslogd.py" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
open(sys.argv[1] + ".ready", "w").close()
s.settimeout(60)
with open(sys.argv[2], "ab", buffering=0) as out:
    while True:
        out.write(s.recv(65536) + b"\n")
EOF
    cat >"$WORK/in-ns.sh" <<'EOF'
# in a private mount namespace: a /dev of our own with the real nodes herd needs, and /dev/log
set -e
W=$1
shift
mount --make-rprivate /
mkdir -p "$W/realdev"
mount --rbind /dev "$W/realdev"
mount -t tmpfs herd-test-dev /dev
for f in null zero full random urandom tty; do
    touch "/dev/$f"
    mount --bind "$W/realdev/$f" "/dev/$f"
done
for d in shm pts; do
    mkdir "/dev/$d"
    mount --rbind "$W/realdev/$d" "/dev/$d"
done
ln -s /proc/self/fd /dev/fd
python3 "$W/syslogd.py" /dev/log "$W/syslog.out" &
listener=$!
i=0
while [ ! -e /dev/log.ready ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
"$@"
status=$?
kill $listener
exit $status
EOF
    herdrun_bg_ns() {
        shm_mark
        HERD_IT_TAG=$HERD_IT_TAG unshare -m sh "$WORK/in-ns.sh" "$WORK" \
            "$HERD_BIN/herdrun/herdrun" "$@" </dev/null >"$OUT" 2>"$ERR" &
        run_pid=$!
    }
    herdrun_bg_ns -n 2 "$CALLS" log syslog "herd-syslog-check-$$"
    herdrun_wait "$HERDRUN_LIMIT"
    expect_rc "PMIx_Log to syslog: exit 0" 0
    expect_eq "PMIx_Log to syslog: the message reached syslog, naming the job and rank" \
        "$(grep -c "herd job [0-9a-f.]* rank 0: herd-syslog-check-$$" "$WORK/syslog.out")" 1
    check_clean "PMIx_Log to syslog"
else
    echo "SKIP: PMIx_Log to syslog needs root, unshare and python3"
fi

# --- PMIx_Job_control ----------------------------------------------------------------------------
for how in kill terminate; do
    herdrun_bg $SIM 2 --mca ras_simulator_slots 4 -n 3 "$CALLS" $how-job
    herdrun_wait "$HERDRUN_LIMIT"
    expect_rc "PMIx_Job_control $how of its own job: the job ends as it asked (exit 0)" 0
    expect_err "PMIx_Job_control $how of its own job: herdrun says who asked for what" \
        "rank 0 asked \(PMIx_Job_control\) to $how every process of herd\.[0-9a-f]+\.1$"
    expect_no_err "PMIx_Job_control $how of its own job: no rank outlived it" "still running"
    check_clean "PMIx_Job_control $how of its own job"
done
# rank 1 is on the other node
run_ok "PMIx_Job_control kill of rank 1" $SIM 2 --mca ras_simulator_slots 4 --map-by node -n 3 \
    "$CALLS" kill-rank 1
expect_out "PMIx_Job_control kill of rank 1: the call succeeds" \
    "^pmix_calls rank 0 kill-rank rank 1: SUCCESS$"
expect_eq "PMIx_Job_control kill of rank 1: the other ranks finish" \
    "$(count_out '^pmix_calls rank [02] done$')" 2
expect_err "PMIx_Job_control kill of rank 1: herdrun says who asked" \
    "rank 0 asked \(PMIx_Job_control\) to kill rank 1 of "
run_ok "PMIx_Job_control signal to rank 1" $SIM 2 --mca ras_simulator_slots 4 --map-by node \
    -n 3 "$CALLS" signal-rank 1
expect_out "PMIx_Job_control signal: rank 1 got SIGUSR1" "^pmix_calls rank 1 got SIGUSR1$"
expect_eq "PMIx_Job_control signal: every rank finishes" \
    "$(count_out '^pmix_calls rank [0-2] done$')" 3
run_ok "PMIx_Job_control checkpoint" -n 2 "$CALLS" checkpoint
expect_out "PMIx_Job_control checkpoint: not offered" "^pmix_calls rank 0 checkpoint: NOT-SUPPORTED$"

# --- PMIx_Query_info -----------------------------------------------------------------------------
run_ok "PMIx_Query_info on 2 nodes" $SIM 2 --mca ras_simulator_slots 4 --map-by node -n 3 \
    "$CALLS" query
expect_out "query namespaces" "^pmix_calls query pmix.qry.ns: SUCCESS: .*herd\.[0-9a-f]+\.1$"
expect_out "query number of process sets" "^pmix_calls query pmix.qry.psetnum: SUCCESS: .*Value: 0$"
expect_out "query process set names" "^pmix_calls query pmix.qry.psets: SUCCESS: "
expect_out "query spawn support" "^pmix_calls query pmix.qry.spawn: SUCCESS: .*pmix.wdir"
expect_out "query job status" "^pmix_calls query pmix.qry.jst: SUCCESS: .*Value: SUCCESS$"
expect_out "query of a key herd does not answer: NOT_SUPPORTED, not UNREACHABLE" \
    "^pmix_calls query pmix.qry.debug: NOT-SUPPORTED"
expect_out "query of an unknown namespace: NOT_FOUND" \
    "^pmix_calls query pmix.qry.jst of an unknown namespace: NOT-FOUND$"
expect_out "query of two keys, one answered: its answer comes" \
    "^pmix_calls query pmix.qry.psetnum and pmix.qry.debug: SUCCESS, 1 answer\(s\)$"
expect_eq "query process table: every rank, with its node and pid" \
    "$(count_out '^pmix_calls proc table: rank [0-2] on sim000[12] pid known state .* exe .*pmix_calls$')" 3
expect_eq "query local process table: this node's ranks" \
    "$(count_out '^pmix_calls local proc table: rank [02] on sim0001 pid known')" 2
expect_no_err "query: every table right" "is wrong"

# --- OpenPMIx's example clients, as under mpirun ---------------------------------------------------
ex() { count_out "^$1 rank [0-9]+: $2$"; }
for nodes in 1 2; do
    where="on $nodes node(s)"
    sim="$SIM $nodes --mca ras_simulator_slots 4 --map-by node"
    run_ok "example hello $where" $sim -n 3 "$EXAMPLES" hello
    expect_eq "example hello $where: every rank, its query answered" \
        "$(ex hello 'query of process sets: SUCCESS, 2 values')" 3
    run_ok "example client $where" $sim -n 3 "$EXAMPLES" client
    expect_eq "example client $where: every rank checked every key" \
        "$(ex client 'checked the keys of 3 of 3 ranks')" 3
    run_ok "example dmodex $where" $sim -n 3 "$EXAMPLES" dmodex
    expect_eq "example dmodex $where: every key fetched without a fence" \
        "$(ex dmodex 'checked the keys of 3 of 3 ranks')" 3
    for pub in pub pubi; do
        run_ok "example $pub $where" $sim -n 3 "$EXAMPLES" $pub
        expect_eq "example $pub $where: both ranks looked up rank 0's names" \
            "$(ex $pub 'looked up .*: right values from rank 0')" 2
        expect_eq "example $pub $where: rank 0 unpublished" "$(ex $pub unpublished)" 1
    done
    run_ok "example dynamic $where" $sim -n 2 "$EXAMPLES" dynamic
    expect_eq "example dynamic $where: rank 0 saw the spawned job" \
        "$(ex dynamic 'spawned a job of size 2, its rank 1 has local rank [01]')" 1
    expect_eq "example dynamic $where: the spawned clients checked their keys" \
        "$(ex client 'checked the keys of 2 of 2 ranks')" 2
    run_ok "example nodeinfo $where" $sim -n 3 "$EXAMPLES" nodeinfo
    expect_eq "example nodeinfo $where: every rank found its neighbour's host" \
        "$(ex nodeinfo 'rank [0-2] is on [a-z0-9]+')" 3
    expect_eq "example nodeinfo $where: no fabric coordinates, as under mpirun" \
        "$(ex nodeinfo 'its fabric coordinates: NOT-FOUND')" 3
done
run_ok "example log" -n 2 "$EXAMPLES" log
expect_err "example log: the message reaches herdrun's stderr" "^stderr log message$"
run_ok "example jctrl" -n 2 "$EXAMPLES" jctrl
expect_eq "example jctrl: preemptible and checkpoint method noted, monitoring accepted" \
    "$(ex jctrl 'job control and monitoring done')" 2
for bad in fault bad_exit; do
    herdrun_bg -n 3 --oversubscribe "$EXAMPLES" $bad
    herdrun_wait "$HERDRUN_LIMIT"
    expect_rc "example $bad: rank 0's exit 1 ends the job with 1, as under mpirun" 1
    expect_err "example $bad: herdrun names rank 0" "rank 0 on node .* exited with status 1"
    check_clean "example $bad"
done

finish
