#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Tools on a persistent DVM over ssh on two test hosts: herd-ps lists three running jobs, a
# job's processes as the hosts' /proc have them (each on the host it names), and the nodes;
# pps lists the jobs; herd-cancel ends only the job it names. Then gdb reads herdrun's MPIR
# table of a job of 4 processes on 2 hosts, stopped before main. Needs root; the hosts are made
# here and torn down on every exit.
. "$(dirname "$0")/lib.sh"

need_testhosts up.sh
testhosts_up 2
SSH_ARGS="-F $HOSTS/ssh_config"
uri=$WORK/dvm.uri
field() { echo "$1" | tr '|' '\n' | sed -n "s/^$2://p" | head -1; }
procs_named() { for p in $(test_pids); do ps -o args= -p "$p"; done | grep -cx "sleep $1"; }
running() { [ "$(procs_named "$1")" -ge "$2" ]; }
# the test host a process runs on (its network namespace)
host_of() {
    case $(ip netns identify "$1" 2>/dev/null) in
    "${TESTHOSTS_NS}1") echo n1 ;;
    "${TESTHOSTS_NS}2") echo n2 ;;
    *) echo "?" ;;
    esac
}

on_host 1 env HERD_IT_TAG="$HERD_IT_TAG" "$HERD_BIN/herd-dvm/herd-dvm" -H n1:4,n2:4 \
    --mca plm_ssh_args "$SSH_ARGS" --daemonize --report-uri "$uri" --timeout 60 \
    </dev/null >"$WORK/dvm.log" 2>&1
rc=$?
expect_rc "a persistent DVM on two hosts over ssh" 0

job_bg() { # job_bg NAME ARGS...: herdrun --dvm-uri on n1 in the background; pid in pid_NAME
    name=$1
    shift
    on_host 1 env HERD_IT_TAG="$HERD_IT_TAG" "$HERD_BIN/herdrun/herdrun" --dvm-uri "$uri" "$@" \
        </dev/null >"$WORK/$name.out" 2>"$WORK/$name.err" &
    eval "pid_$name=\$!"
}
job_bg a -n 4 --map-by node sleep 7001
wait_for 30 running 7001 4
job_bg b --host n1 -n 2 sleep 7002
wait_for 30 running 7002 2
job_bg c --host n2 -n 3 sleep 7003
wait_for 30 running 7003 3
expect_eq "the three jobs' processes run" "$(procs_named 7001) $(procs_named 7002) $(procs_named 7003)" "4 2 3"

on_n1 "$HERD_BIN/herd-ps/herd-ps" --dvm-uri "$uri" --parsable
expect_rc "herd-ps on the DVM's host" 0
rec_a=$(grep 'command:sleep 7001$' "$OUT")
rec_b=$(grep 'command:sleep 7002$' "$OUT")
rec_c=$(grep 'command:sleep 7003$' "$OUT")
expect_eq "job a: running, 4 processes on n1,n2" \
    "$(field "$rec_a" state) $(field "$rec_a" procs) $(field "$rec_a" nodelist)" "running 4 n1,n2"
expect_eq "job b: running, 2 processes on n1" \
    "$(field "$rec_b" state) $(field "$rec_b" procs) $(field "$rec_b" nodelist)" "running 2 n1"
expect_eq "job c: running, 3 processes on n2" \
    "$(field "$rec_c" state) $(field "$rec_c" procs) $(field "$rec_c" nodelist)" "running 3 n2"
job_a=$(field "$rec_a" jobid)
job_b=$(field "$rec_b" jobid)
job_c=$(field "$rec_c" jobid)

on_n1 "$HERD_BIN/herd-ps/herd-ps" --dvm-uri "$uri" --procs "$job_a" --parsable
expect_rc "--procs" 0
bad=""
while IFS= read -r line; do
    rank=$(field "$line" rank)
    pid=$(field "$line" pid)
    [ "$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" = "sleep 7001 " ] || bad="$bad pid $pid is not sleep 7001;"
    tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "HERD_RANK=$rank" ||
        bad="$bad pid $pid is not rank $rank;"
    [ "$(host_of "$pid")" = "$(field "$line" node)" ] ||
        bad="$bad rank $rank runs on $(host_of "$pid"), not $(field "$line" node);"
done <"$OUT"
expect_eq "four processes" "$(wc -l <"$OUT")" 4
expect_eq "each is its rank, on the host herd-ps names (/proc, network namespace)" "$bad" ""

on_n1 "$HERD_BIN/herd-ps/herd-ps" --dvm-uri "$uri" --nodes --parsable
expect_eq "--nodes: both hosts up, slots in use, jobs" "$(tr '\n' ' ' <"$OUT")" \
    "node:n1|state:up|slots:4|inuse:4|jobs:2 node:n2|state:up|slots:4|inuse:5|jobs:2 "

if command -v pps >/dev/null; then
    root=$(sed -n 's/^pid //p' "$uri")
    pps_root() { # pps in the DVM root's rendezvous folder (pps 4.2.2 ignores --pid)
        on_host 1 env TMPDIR="${TMPDIR:-/tmp}/herd-$(id -u)/pmix-$root" timeout 20 pps >"$OUT" 2>&1
        rc=$?
        grep -q '^Active nspaces:' "$OUT"
    }
    wait_for 10 pps_root
    expect_rc "pps reaches the DVM root" 0
    expect_eq "and lists the three jobs" \
        "$(sed -n 's/^Active nspaces: //p' "$OUT" | tr ',' '\n' | sort | tr '\n' ' ')" \
        "$(printf '%s\n' "$job_a" "$job_b" "$job_c" | sort | tr '\n' ' ')"
else
    echo "SKIP: pps needs libpmix-bin"
fi

on_n1 "$HERD_BIN/herd-cancel/herd-cancel" --dvm-uri "$uri" "$job_b"
expect_rc "herd-cancel job b" 0
run_pid=$pid_b
OUT=$WORK/b.out ERR=$WORK/b.err
herdrun_wait 30
expect_rc "its herdrun exits 143" 143
expect_err "saying it was cancelled" "job $job_b cancelled"
OUT=$WORK/out ERR=$WORK/err
expect_eq "only job b ended" "$(procs_named 7001) $(procs_named 7002) $(procs_named 7003)" "4 0 3"
on_n1 "$HERD_BIN/herd-cancel/herd-cancel" --dvm-uri "$uri" --signal KILL "$job_a" "$job_c"
expect_rc "herd-cancel --signal KILL of the two others" 0
for j in a c; do
    eval "run_pid=\$pid_$j"
    OUT=$WORK/$j.out ERR=$WORK/$j.err
    herdrun_wait 30
    expect_rc "job $j's herdrun exits 137" 137
done
OUT=$WORK/out ERR=$WORK/err
on_n1 "$HERD_BIN/herd-dvm/herd-dvm" --shutdown --dvm-uri "$uri"
expect_rc "--shutdown" 0
wait_for 10 no_herdd
check_clean "the DVM over ssh"

# --- MPIR: gdb reads the table of 4 processes on 2 hosts, stopped before main ------------------
if command -v gdb >/dev/null; then
    on_host 1 env HERD_IT_TAG="$HERD_IT_TAG" "$HERD_BIN/herdrun/herdrun" -H n1,n2 \
        --mca plm_ssh_args "$SSH_ARGS" -n 4 --map-by node --oversubscribe --stop-on-exec \
        sh -c 'echo "rank $HERD_RANK ran"' </dev/null >"$OUT" 2>"$ERR" &
    run_pid=$!
    said_stopped() { grep -q "stopped before main" "$ERR"; }
    wait_for 60 said_stopped
    hpid=$(sed -n 's/.*attach one to herdrun (pid \([0-9]*\)).*/\1/p' "$ERR" | head -1)
    [ -n "$hpid" ] || hpid=$(sed -n 's/.*herdrun (pid \([0-9]*\)).*/\1/p' "$ERR" | head -1)
    cat >"$WORK/check.sh" <<'EOF'
r=$1 pid=$2
state=$(ps -o stat= -p "$pid" | cut -c1)
rank=$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | sed -n 's/^HERD_RANK=//p')
echo "check $r pid $pid rank $rank state $state exe $(readlink -f "/proc/$pid/exe") ns $(ip netns identify "$pid")"
EOF
    cat >"$WORK/mpir.gdb" <<EOF
set pagination off
set var MPIR_being_debugged = 1
break MPIR_Breakpoint
continue
printf "state %d size %d\\n", MPIR_debug_state, MPIR_proctable_size
set \$i = 0
while \$i < MPIR_proctable_size
  printf "proc %d %s %s %d\\n", \$i, MPIR_proctable[\$i].host_name, MPIR_proctable[\$i].executable_name, MPIR_proctable[\$i].pid
  eval "shell sh $WORK/check.sh %d %d", \$i, MPIR_proctable[\$i].pid
  set \$i = \$i + 1
end
detach
quit
EOF
    gdb -batch -nx -x "$WORK/mpir.gdb" -p "$hpid" >"$WORK/gdb.out" 2>&1 </dev/null
    expect_eq "gdb reads a table of 4 (MPIR_debug_state spawned)" \
        "$(sed -n 's/^state //p' "$WORK/gdb.out")" "1 size 4"
    bad=""
    [ "$(grep -c '^check ' "$WORK/gdb.out")" -eq 4 ] || bad="gdb ran check.sh $(grep -c '^check ' "$WORK/gdb.out") times, not 4;"
    for r in 0 1 2 3; do
        set -- $(grep "^proc $r " "$WORK/gdb.out") x x x x x
        host=$3 exe=$4 pid=$5
        ns=${TESTHOSTS_NS}${host#n}
        expected="check $r pid $pid rank $r state T exe $exe ns $ns"
        [ "$(grep "^check $r " "$WORK/gdb.out")" = "$expected" ] ||
            bad="$bad wanted '$expected', /proc said '$(grep "^check $r " "$WORK/gdb.out")';"
        echo "$host"
    done >"$WORK/table_hosts"
    expect_eq "each entry: its rank's pid and program, stopped, on the host it names" "$bad" ""
    expect_eq "2 processes on each host" \
        "$(sort "$WORK/table_hosts" | uniq -c | awk '{print $1, $2}' | tr '\n' ' ')" "2 n1 2 n2 "
    herdrun_wait 60
    expect_rc "the job runs once the debugger let herdrun go on" 0
    expect_eq "every rank ran" "$(sort "$OUT" | tr '\n' ' ')" "rank 0 ran rank 1 ran rank 2 ran rank 3 ran "
    wait_for 10 no_herdd
    check_clean "the MPIR job over ssh"
else
    echo "SKIP: the MPIR test needs gdb"
fi

finish
