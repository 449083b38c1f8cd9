#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Tools on a persistent DVM of simulated nodes: herd-ps lists three running jobs with their
# states and counts, a job's processes as /proc has them, and the nodes; tools that connect and
# vanish or send garbage disturb nothing; herd-cancel ends only the job it names (and refuses
# another user); a DVM that is gone is said so. Then the debugger interface: gdb reads herdrun's
# MPIR table of a job of 4 processes on 2 nodes stopped before main (--stop-on-exec).
. "$(dirname "$0")/lib.sh"
SIM="--mca ras_simulator_num_nodes"
PS=$HERD_BIN/herd-ps/herd-ps
CANCEL=$HERD_BIN/herd-cancel/herd-cancel
uri=$WORK/dvm.uri
# herd_ps ARGS / herd_cancel ARGS: stdout $OUT, stderr $ERR, status $rc
herd_ps() {
    "$PS" --dvm-uri "$uri" "$@" >"$OUT" 2>"$ERR"
    rc=$?
}
herd_cancel() {
    "$CANCEL" --dvm-uri "$uri" "$@" >"$OUT" 2>"$ERR"
    rc=$?
}
# field RECORD KEY: the value of KEY in a --parsable record
field() { echo "$1" | tr '|' '\n' | sed -n "s/^$2://p" | head -1; }
# procs_named WORD: how many of this test's processes run the command line "sleep WORD"
procs_named() { for p in $(test_pids); do ps -o args= -p "$p"; done | grep -cx "sleep $1"; }
running() { [ "$(procs_named "$1")" -ge "$2" ]; }

start_dvm $SIM 3 --mca ras_simulator_topology "pack:1 core:4 pu:1"
expect_rc "a persistent DVM of 3 simulated nodes" 0

# --- three jobs at once --------------------------------------------------------------------
job_bg() { # job_bg NAME ARGS...: herdrun --dvm-uri in the background; pid in pid_NAME
    name=$1
    shift
    HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herdrun/herdrun" --dvm-uri "$uri" "$@" </dev/null \
        >"$WORK/$name.out" 2>"$WORK/$name.err" &
    eval "pid_$name=\$!"
}
# one after the other, so that their numbers are 1, 2, 3
job_bg a -n 4 --map-by node sleep 6001
wait_for 30 running 6001 4
job_bg b --host sim0001 -n 2 sleep 6002
wait_for 30 running 6002 2
job_bg c --host sim0003 -n 3 sleep 6003
wait_for 30 running 6003 3
expect_eq "the three jobs' processes run" "$(procs_named 6001) $(procs_named 6002) $(procs_named 6003)" "4 2 3"

herd_ps
expect_rc "herd-ps lists the jobs" 0
expect_out "with a header" "^JOBID +USER +STATE +PROCS +NODES +ELAPSED +COMMAND"
expect_eq "three jobs, oldest first" "$(tail -n +2 "$OUT" | awk '{print $NF}' | tr '\n' ' ')" \
    "6001 6002 6003 "
herd_ps --parsable
rec_a=$(grep 'command:sleep 6001$' "$OUT")
rec_b=$(grep 'command:sleep 6002$' "$OUT")
rec_c=$(grep 'command:sleep 6003$' "$OUT")
expect_eq "job a: running, 4 processes on 3 nodes" \
    "$(field "$rec_a" state) $(field "$rec_a" procs) $(field "$rec_a" nodes)" "running 4 3"
expect_eq "job b: running, 2 processes on sim0001" \
    "$(field "$rec_b" state) $(field "$rec_b" procs) $(field "$rec_b" nodelist)" "running 2 sim0001"
expect_eq "job c: running, 3 processes on sim0003" \
    "$(field "$rec_c" state) $(field "$rec_c" procs) $(field "$rec_c" nodelist)" "running 3 sim0003"
expect_eq "the user is ours" "$(field "$rec_a" user)" "$(id -un)"
expect_eq "herdrun's pid is the one driving job b" "$(field "$rec_b" herdrun_pid)" "$pid_b"
job_a=$(field "$rec_a" jobid)
job_b=$(field "$rec_b" jobid)
job_c=$(field "$rec_c" jobid)
herd_ps --json
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if [j["procs"] for j in d["jobs"]] == [4, 2, 3] else 1)' "$OUT"; then
    ok "--json: valid JSON with the same counts"
else
    fail "--json: valid JSON with the same counts ($(cat "$OUT"))"
fi

# --procs against /proc: each pid runs that rank of that job
herd_ps --procs "$job_a" --parsable
expect_rc "--procs JOB" 0
expect_eq "four processes of job a" "$(wc -l <"$OUT")" 4
bad=""
while IFS= read -r line; do
    rank=$(field "$line" rank)
    pid=$(field "$line" pid)
    [ "$(field "$line" state)" = running ] || bad="$bad rank $rank not running;"
    [ "$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" = "sleep 6001 " ] || bad="$bad pid $pid is not sleep 6001;"
    tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "HERD_RANK=$rank" ||
        bad="$bad pid $pid is not rank $rank;"
    [ "$(field "$line" program)" = "$(readlink -f "/proc/$pid/exe")" ] || bad="$bad pid $pid's program;"
done <"$OUT"
expect_eq "every pid runs its rank (/proc)" "$bad" ""
expect_eq "nodes of job a's ranks (map-by node)" "$(cut -d'|' -f2 "$OUT" | tr '\n' ' ')" \
    "node:sim0001 node:sim0002 node:sim0003 node:sim0001 "
herd_ps --procs 2
expect_rc "--procs takes the job's number too" 0
expect_out "and lists job b's ranks" "^1 +sim0001 +[0-9]+ running"
herd_ps --procs 99
expect_fail "--procs of a job that does not run"
expect_err "says so" 'no job "99" runs on the DVM'

herd_ps --nodes --parsable
expect_eq "--nodes: every node up, slots, slots in use, jobs" "$(tr '\n' ' ' <"$OUT")" \
    "node:sim0001|state:up|slots:4|inuse:4|jobs:2 node:sim0002|state:up|slots:4|inuse:1|jobs:1 node:sim0003|state:up|slots:4|inuse:4|jobs:2 "

# --- PMIx tools (Debian's libpmix-bin) --------------------------------------------------------
# OpenPMIx 4.2.2's pps ignores --pid, --uri and --namespace: it connects to the host's system
# server (the DVM root, unless another process is), else to the one server under $TMPDIR; each
# tool server of herd has its rendezvous in a folder of its own, named after its host's pid.
root=$(sed -n 's/^pid //p' "$uri")
pmix_dir() { echo "${TMPDIR:-/tmp}/herd-$(id -u)/pmix-$1"; }
# pmix_pps PID: pps against the tool server of process PID (output in $OUT, status in $rc)
pmix_pps() {
    TMPDIR=$(pmix_dir "$1") timeout 20 pps >"$OUT" 2>&1 # pps prints on stderr
    rc=$?
}
pmix_answers() { [ -d "$(pmix_dir "$1")" ] && pmix_pps "$1" && grep -q '^Active nspaces:' "$OUT"; }
jobs_sorted() { sed -n 's/^Active nspaces: //p' "$OUT" | tr ',' '\n' | sort | tr '\n' ' '; }
all_three="$(printf '%s\n' "$job_a" "$job_b" "$job_c" | sort | tr '\n' ' ')"
if command -v pps >/dev/null && command -v pattrs >/dev/null; then
    wait_for 10 pmix_answers "$root"
    pmix_pps "$root"
    expect_rc "pps, in the DVM root's rendezvous folder" 0
    expect_eq "lists the three jobs' namespaces" "$(jobs_sorted)" "$all_three"
    wait_for 10 pmix_answers "$pid_b"
    pmix_pps "$pid_b"
    expect_rc "pps, in job b's herdrun's folder" 0
    expect_eq "lists that job" "$(jobs_sorted)" "$job_b "
    sys_pid=$(sed -n 3p "${TMPDIR:-/tmp}/pmix.sys.$(hostname)" 2>/dev/null)
    if [ -n "$sys_pid" ] && [ "$(ps -o ppid= -p "$sys_pid" 2>/dev/null | tr -d ' ')" = "$root" ]; then
        timeout 20 pps >"$OUT" 2>&1
        rc=$?
        expect_rc "pps with no option reaches the DVM root (the host's system server)" 0
        expect_eq "and lists the three jobs" "$(jobs_sorted)" "$all_three"
    else
        echo "SKIP: pps without options (another process is this host's PMIx system server)"
    fi
    timeout 20 pattrs --pid "$root" --client PMIx_Get >"$OUT" 2>&1
    rc=$?
    expect_rc "pattrs --pid <root> --client PMIx_Get" 0
    expect_out "lists the attributes" "^CLIENT SUPPORTED ATTRIBUTES"
    # OpenPMIx 4.2.2's server crashes answering the host's attributes (pattrs --host): only the
    # tool server's helper process dies, and another is started
    TMPDIR=$(pmix_dir "$root") timeout 20 pattrs --host all >"$OUT" 2>&1
    rc=$?
    expect_fail "pattrs --host fails (OpenPMIx 4.2.2's server crashes on it)"
    TMPDIR=$(pmix_dir "$pid_b") timeout 20 pattrs --host all >/dev/null 2>&1
    expect_eq "the jobs run on" "$(procs_named 6001) $(procs_named 6002) $(procs_named 6003)" "4 2 3"
    wait_for 10 pmix_answers "$root" && ok "pps answers again after it (a new helper)" ||
        fail "pps answers again after it (a new helper)"
    wait_for 10 pmix_answers "$pid_b" && ok "herdrun's too" || fail "herdrun's too"
    # pquery 4.2.2 itself dies of SIGFPE before it connects (pmix_init_registered_attrs):
    # nothing reaches the server, nothing changes
    timeout 20 pquery --pid "$root" PMIX_QUERY_NAMESPACES >/dev/null 2>&1
    expect_eq "pquery changes nothing either" "$(procs_named 6001) $(procs_named 6002) $(procs_named 6003)" "4 2 3"
else
    echo "SKIP: the PMIx tools need libpmix-bin"
fi

# --- tools that vanish or send garbage: the jobs go on ---------------------------------------
sock=$(sed -n 's/^tool //p' "$uri")
python3 - "$sock" <<'EOF'
import os, socket, struct, sys, time
path = sys.argv[1]
def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s
conn().close()                                    # connects and goes away
s = conn(); s.sendall(os.urandom(4096)); s.close()  # garbage
s = conn(); s.sendall(b"\xff\xff\xff\xff" + b"x" * 100); s.close()  # an oversized frame
s = conn(); s.sendall(struct.pack(">I", 100) + b"\0\0\0\7"); s.close()  # half a frame
# a well-formed query for another job's answer it never reads, then gone
body = struct.pack(">I", 7)
s = conn(); s.sendall(struct.pack(">I", len(body)) + body); s.close()
held = conn(); held.sendall(struct.pack(">I", 8))   # a frame begun and left hanging
time.sleep(0.5)
EOF
herd_ps --parsable
expect_eq "after the bad tools, herd-ps still answers: three jobs running" \
    "$(grep -c '|state:running|' "$OUT")" 3
expect_eq "and every process still runs" "$(procs_named 6001) $(procs_named 6002) $(procs_named 6003)" "4 2 3"
grep -q "dropping a tool connection" "$WORK/dvm.log" && ok "the DVM's log says it dropped them" ||
    fail "the DVM's log says it dropped them ($(cat "$WORK/dvm.log"))"

# --- a stopped herdrun does not hang herd-ps ---------------------------------------------------
kill -STOP "$(field "$rec_c" herdrun_pid)"
herd_ps --parsable --timeout 2
expect_rc "herd-ps with job c's herdrun stopped" 0
expect_out "says its state is unknown" "jobid:$job_c\|.*state:unknown"
kill -CONT "$(field "$rec_c" herdrun_pid)"

# --- herd-cancel ----------------------------------------------------------------------------
cp "$uri" "$WORK/public.uri"
chmod 644 "$WORK/public.uri"
chmod 711 "$WORK"
runuser -u nobody -- "$CANCEL" --dvm-uri "$uri" "$job_b" >"$OUT" 2>"$ERR"
rc=$?
expect_fail "another user cannot cancel (contact file)"
expect_err "and is told why" "cannot read the DVM contact file"
runuser -u nobody -- "$CANCEL" --dvm-uri "$WORK/public.uri" "$job_b" >"$OUT" 2>"$ERR"
rc=$?
expect_fail "another user cannot cancel (the DVM's socket)"
expect_err "and is told why" "Only the DVM's own user may use it"
chmod 700 "$WORK"
expect_eq "job b still runs" "$(procs_named 6002)" 2

herd_cancel "$job_b"
expect_rc "herd-cancel JOB" 0
run_pid=$pid_b
OUT=$WORK/b.out ERR=$WORK/b.err
herdrun_wait 30
expect_rc "its herdrun exits 128+SIGTERM" 143
expect_err "and says the job was cancelled" "job $job_b cancelled \(herd-cancel, Terminated\)"
OUT=$WORK/out ERR=$WORK/err
expect_eq "job b's processes are gone, the others run" \
    "$(procs_named 6001) $(procs_named 6002) $(procs_named 6003)" "4 0 3"
herd_ps --parsable
expect_eq "herd-ps lists two jobs" "$(cut -d'|' -f1 "$OUT" | tr '\n' ' ')" "jobid:$job_a jobid:$job_c "
herd_cancel "$job_b"
expect_fail "cancelling a job that ended"
expect_err "says it does not run" "no job \"$job_b\" runs"
herd_cancel --signal BOGUS "$job_a"
expect_fail "an unknown signal"
expect_err "is named" "--signal BOGUS is not a signal"

herd_cancel --signal KILL "$job_c"
expect_rc "herd-cancel --signal KILL" 0
run_pid=$pid_c
OUT=$WORK/c.out ERR=$WORK/c.err
herdrun_wait 30
expect_rc "its herdrun exits 128+SIGKILL" 137
OUT=$WORK/out ERR=$WORK/err
herd_cancel -s USR2 "$job_a"
expect_rc "herd-cancel --signal USR2 (a signal, not an end)" 0
run_pid=$pid_a
OUT=$WORK/a.out ERR=$WORK/a.err
herdrun_wait 30
expect_rc "sleep dies of SIGUSR2: its herdrun exits 128+12" 140
expect_err "herdrun said the signal came from herd-cancel" "herd-cancel sent User defined signal 2"
OUT=$WORK/out ERR=$WORK/err
herd_ps --parsable
expect_eq "no job left" "$(cat "$OUT")" ""

# --- a stopped session daemon: herd-cancel --signal KILL has its node daemon kill it -----------
job_bg d --host sim0002 -n 2 sleep 6006
wait_for 30 running 6006 2
sleeper=$(for p in $(test_pids); do [ "$(ps -o args= -p "$p")" = "sleep 6006" ] && echo "$p"; done | head -1)
session=$(ps -o ppid= -p "$sleeper" | tr -d ' ')
expect_eq "job d's session daemon found" "$(ps -o args= -p "$session" | cut -d' ' -f2)" "--session"
kill -STOP "$session"
herd_ps --parsable
job_d=$(sed -n 's/^jobid:\([^|]*\)|.*command:sleep 6006$/\1/p' "$OUT")
herd_cancel --signal KILL "$job_d"
expect_rc "herd-cancel --signal KILL of a job whose session daemon is stopped" 0
sleepers_gone() { [ "$(procs_named 6006)" -eq 0 ]; }
wait_for 20 sleepers_gone
expect_eq "its processes are gone (its node daemon killed the session daemon)" "$(procs_named 6006)" 0
run_pid=$pid_d
OUT=$WORK/d.out ERR=$WORK/d.err
herdrun_wait 30
expect_fail "its herdrun ends"
expect_err "saying the job was cancelled" "job $job_d cancelled \(herd-cancel, Killed\)"
OUT=$WORK/out ERR=$WORK/err
expect_eq "no session daemon of it left" "$(ps -o pid= -p "$session" | tr -d ' ')" ""

# --- a DVM that is gone ----------------------------------------------------------------------
root=$(sed -n 's/^pid //p' "$uri")
kill -9 "$root"
wait_gone "$root" 10
wait_for 10 no_herdd
herd_ps
expect_fail "herd-ps on a DVM whose root is gone"
expect_err "says it cannot reach it" "cannot reach the DVM of"
herd_cancel 1
expect_fail "herd-cancel too"
rm -f "$uri"
herd_ps
expect_fail "herd-ps without a contact file"
expect_err "says so" "cannot read the DVM contact file"
check_clean "the DVM and its jobs"

# --- PMIx tool servers leave nothing behind ----------------------------------------------------
if command -v pps >/dev/null; then
    for p in $root $pid_a $pid_b $pid_c; do
        [ -e "$(pmix_dir "$p")" ] && left_dirs="${left_dirs:-} $(pmix_dir "$p")"
    done
    expect_eq "no rendezvous folder left by the DVM root (killed -9) or the herdruns" "${left_dirs:-}" ""
    start_dvm $SIM 2
    job_bg s -n 2 sleep 6005
    wait_for 30 running 6005 2
    root=$(sed -n 's/^pid //p' "$uri")
    wait_for 10 pmix_answers "$root"
    expect_eq "a second DVM's tool server answers" "$(jobs_sorted)" "$(sed -n 's/^id //p' "$uri").1 "
    herd_dvm --shutdown --dvm-uri "$uri"
    expect_rc "its --shutdown" 0
    run_pid=$pid_s
    OUT=$WORK/s.out ERR=$WORK/s.err
    herdrun_wait 30
    expect_fail "its job ends with it"
    OUT=$WORK/out ERR=$WORK/err
    wait_for 10 no_herdd
    gone() { [ ! -e "$(pmix_dir "$root")" ] && [ ! -e "$(pmix_dir "$pid_s")" ]; }
    wait_for 5 gone
    expect_eq "no rendezvous folder left after --shutdown" "$(ls -d "$(pmix_dir "$root")" "$(pmix_dir "$pid_s")" 2>/dev/null)" ""
    check_clean "a second DVM"
fi

# --- the debugger interface (MPIR) -------------------------------------------------------------
if command -v gdb >/dev/null; then
    herdrun_bg $SIM 2 --mca ras_simulator_topology "pack:1 core:2 pu:1" -n 4 --stop-on-exec \
        sh -c 'echo "rank $HERD_RANK ran"'
    said_stopped() { grep -q "stopped before main" "$ERR"; }
    wait_for 30 said_stopped
    expect_err "herdrun says the processes wait for a debugger" "all 4 processes are stopped before main"
    hpid=$run_pid # the libtool wrapper execs herdrun
    # at the breakpoint, gdb runs check.sh RANK PID for each entry: what /proc says then
    cat >"$WORK/check.sh" <<'EOF'
r=$1 pid=$2
state=$(ps -o stat= -p "$pid" | cut -c1)
rank=$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | sed -n 's/^HERD_RANK=//p')
echo "check $r pid $pid rank $rank state $state exe $(readlink -f "/proc/$pid/exe")"
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
    expect_eq "gdb reads MPIR_debug_state (spawned) and a table of 4" \
        "$(sed -n 's/^state //p' "$WORK/gdb.out")" "1 size 4"
    bad=""
    [ "$(grep -c '^check ' "$WORK/gdb.out")" -eq 4 ] || bad="gdb ran check.sh $(grep -c '^check ' "$WORK/gdb.out") times, not 4;"
    for r in 0 1 2 3; do
        set -- $(grep "^proc $r " "$WORK/gdb.out") x x x x x
        host=$3 exe=$4 pid=$5
        expected="check $r pid $pid rank $r state T exe $exe"
        [ "$(grep "^check $r " "$WORK/gdb.out")" = "$expected" ] ||
            bad="$bad wanted '$expected', /proc said '$(grep "^check $r " "$WORK/gdb.out")';"
        echo "$host"
    done >"$WORK/table_hosts"
    expect_eq "each entry is its rank's pid and program, stopped before main" "$bad" ""
    expect_eq "the hosts: 2 processes on each of the 2 nodes" \
        "$(sort "$WORK/table_hosts" | uniq -c | awk '{print $1, $2}' | tr '\n' ' ')" "2 sim0001 2 sim0002 "
    herdrun_wait 30
    expect_rc "the processes run once the debugger let herdrun go on" 0
    expect_eq "every rank ran" "$(sort "$OUT" | tr '\n' ' ')" "rank 0 ran rank 1 ran rank 2 ran rank 3 ran "
    check_clean "--stop-on-exec"

    # without --stop-on-exec, the table is there for a debugger that attaches later
    herdrun_bg $SIM 2 -n 4 sleep 6004
    wait_for 30 running 6004 4
    hpid=$run_pid
    have_table() {
        gdb -batch -nx -p "$hpid" -ex 'printf "size %d\n", MPIR_proctable_size' 2>/dev/null |
            grep -q '^size 4$'
    }
    wait_for 10 have_table
    gdb -batch -nx -p "$hpid" -ex 'printf "state %d size %d\n", MPIR_debug_state, MPIR_proctable_size' \
        -ex 'printf "pid %d\n", MPIR_proctable[3].pid' >"$WORK/gdb.out" 2>&1 </dev/null
    expect_out_gdb() { if grep -Eq -- "$2" "$WORK/gdb.out"; then ok "$1"; else fail "$1 ($(cat "$WORK/gdb.out"))"; fi; }
    expect_out_gdb "a running job's table, read by attaching later" "^state 1 size 4$"
    pid3=$(sed -n 's/^pid //p' "$WORK/gdb.out")
    tr '\0' '\n' <"/proc/$pid3/environ" 2>/dev/null | grep -qx "HERD_RANK=3" &&
        ok "its last entry is rank 3's pid" || fail "its last entry is rank 3's pid ($pid3)"
    kill -TERM "$run_pid"
    herdrun_wait 30
    expect_rc "the job ends on SIGTERM" 143
    check_clean "a job read by a debugger"
else
    echo "SKIP: the MPIR test needs gdb"
fi

finish
