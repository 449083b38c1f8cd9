#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# herdrun on this host and on simulated nodes, as a user sees it: which ranks run where and with
# what environment, forwarded output, MPMD, exit codes and failure messages, signals, timeouts,
# programs that cannot start, lost daemons, errmgr continue, the reports, mapping policies and
# maps that cannot be made. After every case nothing may be left: no herdd, no session daemon,
# no process of the job, no job database in /dev/shm.
. "$(dirname "$0")/lib.sh"
SIM="--mca ras simulator --mca ras_simulator_num_nodes"

# The test programs live in $WORK/bin, so that a process left behind is found by its command
# line (check_clean) even without the environment herdrun passes on.
BIN=$WORK/bin
mkdir -p "$BIN"
cp "$(command -v sleep)" "$BIN/sleep"

# rankenv.sh DIR: append what the process was told to DIR/<rank>; the parent pid is its session
# daemon, the same for all processes of one node.
cat >"$BIN/rankenv.sh" <<'EOF'
#!/bin/sh
echo "$HERD_RANK $HERD_SIZE $HERD_LOCAL_RANK $HERD_LOCAL_SIZE $HERD_NODE_RANK $HERD_JOBID" \
    "$HERD_APPNUM $PPID" >>"$1/$HERD_RANK"
EOF
# app.sh DIR NAME: for MPMD: the app's name and number, the size, directory, -x variables.
cat >"$BIN/app.sh" <<'EOF'
#!/bin/sh
echo "$2 $HERD_APPNUM $HERD_SIZE $(pwd) A=${A-unset} B=${B-unset} HERE=${HERE-unset}" \
    >>"$1/$HERD_RANK"
EOF
# sleeper.sh DIR: write its pid to DIR/pid.<rank>, then sleep (the processes a failure must kill).
cat >"$BIN/sleeper.sh" <<EOF
#!/bin/sh
echo \$\$ >"\$1/pid.\$HERD_RANK"
exec $BIN/sleep 30
EOF
# failer.sh DIR RANK CODE: every rank writes its pid; RANK waits until all have, then exits
# with CODE (kills itself with SIGKILL for CODE KILL); the others sleep.
cat >"$BIN/failer.sh" <<EOF
#!/bin/sh
echo \$\$ >"\$1/pid.\$HERD_RANK"
[ "\$HERD_RANK" = "\$2" ] || exec $BIN/sleep 30
i=0
while [ "\$(ls "\$1" | grep -c '^pid\.')" -lt "\$HERD_SIZE" ] && [ \$i -lt 200 ]; do
    sleep 0.05; i=\$((i + 1))
done
case \$3 in KILL) kill -9 \$\$ ;; esac
exit "\$3"
EOF
# stubborn.sh DIR: ignore SIGINT and SIGTERM (sleep inherits that), pid to DIR/pid.<rank>.
cat >"$BIN/stubborn.sh" <<EOF
#!/bin/sh
trap '' INT TERM
echo \$\$ >"\$1/pid.\$HERD_RANK"
exec $BIN/sleep 30
EOF
# touch.sh FILE: the marker of a process that started.
cat >"$BIN/touch.sh" <<'EOF'
#!/bin/sh
echo started >>"$1"
EOF
chmod +x "$BIN"/*.sh

# fresh NAME: an empty folder $WORK/NAME, its path in $dir.
fresh() { dir=$WORK/$1; rm -rf "$dir"; mkdir -p "$dir"; }
# count_files DIR PREFIX: how many files in DIR start with PREFIX.
count_files() { ls "$1" | grep -c "^$2"; }
# all_started DIR N: N processes wrote their pid files into DIR.
all_started() { [ "$(count_files "$1" pid.)" -ge "$2" ]; }
# alive_pids DIR: the pids from DIR/pid.* that still run.
alive_pids() { for f in "$1"/pid.*; do kill -0 "$(cat "$f")" 2>/dev/null && cat "$f"; done; }
# expect_all_gone WHAT DIR: no process of DIR/pid.* runs any more.
expect_all_gone() { expect_eq "$1" "$(alive_pids "$2" | tr '\n' ' ')" ""; }
# expect_not_started WHAT FILE: the marker FILE of touch.sh is not there.
expect_not_started() {
    if [ -e "$2" ]; then fail "$1: nothing started (a process did)"; else ok "$1: nothing started"
    fi
}

# rank_problems DIR N: what is wrong with the rankenv.sh lines of an N-process SPMD job, nothing
# when all is well: every rank ran exactly once, HERD_SIZE N, one job id, app 0, and per node
# (the processes of one session daemon) local ranks 0..k-1 once each, HERD_LOCAL_SIZE k, node
# rank = local rank, local sizes adding up to N.
rank_problems() {
    seen=$(ls "$1" | sort -n | tr '\n' ' ')
    want=$(seq 0 $(($2 - 1)) | tr '\n' ' ')
    [ "$seen" = "$want" ] || echo "the ranks that ran are [$seen], expected [$want]"
    for f in "$1"/*; do
        [ "$(wc -l <"$f")" -eq 1 ] || echo "rank ${f##*/} ran $(wc -l <"$f") times"
    done
    cat "$1"/* | awk -v n="$2" '
        $2 != n { print "rank " $1 ": HERD_SIZE " $2 }
        $7 != 0 { print "rank " $1 ": HERD_APPNUM " $7 }
        $3 != $5 { print "rank " $1 ": HERD_NODE_RANK " $5 " but HERD_LOCAL_RANK " $3 }
        {
            jobs[$6] = 1; count[$8]++; local[$8 " " $3]++
            if (($8) in size && size[$8] != $4)
                print "rank " $1 ": HERD_LOCAL_SIZE " $4 " but " size[$8] " on the same node"
            size[$8] = $4
        }
        END {
            j = 0; for (id in jobs) j++
            if (j != 1) print j " different HERD_JOBID values"
            total = 0
            for (node in count) {
                total += size[node]
                if (size[node] != count[node])
                    print count[node] " processes on a node with HERD_LOCAL_SIZE " size[node]
                for (l = 0; l < count[node]; l++)
                    if (local[node " " l] != 1)
                        print "local rank " l " appears " local[node " " l] + 0 " times on one node"
            }
            if (total != n) print "HERD_LOCAL_SIZE adds up to " total
        }'
}
expect_ranks() { expect_eq "$1" "$(rank_problems "$2" "$3" | head -n 5 | tr '\n' ';')" ""; }

# map_of: the --display-map in $OUT as lines "rank node local".
map_of() {
    awk '/^node / { node = $2; sub(":", "", node) } /^ +rank / { print $2, node, $6 }' "$OUT" |
        sort -n
}

# --- 1. SPMD: every rank once, a consistent environment --------------------------------------
fresh spmd1
herdrun -n 2 --oversubscribe "$BIN/rankenv.sh" "$dir"
expect_rc "SPMD on this host: exit 0" 0
expect_ranks "SPMD on this host: every rank ran once, environment consistent" "$dir" 2
check_clean "SPMD on this host"

fresh spmd4
herdrun $SIM 4 --mca ras_simulator_slots 3 -n 10 "$BIN/rankenv.sh" "$dir"
expect_rc "SPMD on 4 simulated nodes: exit 0" 0
expect_ranks "SPMD on 4 simulated nodes: every rank ran once, environment consistent" "$dir" 10
expect_eq "SPMD on 4 simulated nodes: 4 session daemons ran processes" \
    "$(cut -d' ' -f8 "$dir"/* | sort -u | wc -l)" 4
check_clean "SPMD on 4 simulated nodes"

# On a real node the binding --report-bindings shows must be the one the process has.
herdrun --report-bindings -n 1 grep Cpus_allowed_list /proc/self/status
expect_rc "--report-bindings on this host: exit 0" 0
expect_eq "on this host the process runs on the cpus --report-bindings reports" \
    "$(awk '{ print $2 }' "$OUT")" "$(sed -n 's/.* bound to cpus \([^ ]*\).*/\1/p' "$ERR")"
expect_no_err "this host is not called a simulated node" "simulated node"
check_clean "--report-bindings on this host"

# --- 2. Output forwarding --------------------------------------------------------------------
herdrun $SIM 2 --mca ras_simulator_slots 2 -n 3 sh -c 'echo out$HERD_RANK; echo err$HERD_RANK >&2'
expect_rc "output: exit 0" 0
expect_eq "output: each rank's stdout line once, on stdout" "$(sort "$OUT" | tr '\n' ' ')" \
    "out0 out1 out2 "
expect_eq "output: each rank's stderr line once, on stderr" "$(sort "$ERR" | tr '\n' ' ')" \
    "err0 err1 err2 "
check_clean "output"

head -c 1048576 /dev/urandom >"$WORK/big.out"
head -c 1048576 /dev/urandom >"$WORK/big.err"
herdrun $SIM 2 --mca ras_simulator_slots 2 -n 3 sh -c \
    "case \$HERD_RANK in 1) cat $WORK/big.out ;; 2) cat $WORK/big.err >&2 ;; esac"
expect_rc "1 MB of output: exit 0" 0
expect_eq "1 MB on stdout from one rank arrives whole (cksum)" "$(cksum <"$OUT")" \
    "$(cksum <"$WORK/big.out")"
expect_eq "1 MB on stderr from another rank arrives whole (cksum)" "$(cksum <"$ERR")" \
    "$(cksum <"$WORK/big.err")"
check_clean "1 MB of output"

# Lines written whole (one write each) by four ranks at once stay whole.
cat >"$BIN/lines.sh" <<'EOF'
#!/bin/sh
pad=0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
i=0
while [ $i -lt 2000 ]; do echo "rank $HERD_RANK line $i $pad"; i=$((i + 1)); done
EOF
chmod +x "$BIN/lines.sh"
herdrun $SIM 2 --mca ras_simulator_slots 2 -n 4 "$BIN/lines.sh"
expect_rc "4 ranks x 2000 lines: exit 0" 0
expect_eq "4 ranks x 2000 lines: all 8000 lines arrive, whole" \
    "$(grep -cE '^rank [0-3] line [0-9]+ 0{88}$' "$OUT") of $(wc -l <"$OUT")" "8000 of 8000"
check_clean "4 ranks x 2000 lines"

# --- 3. MPMD, -x, --wdir ---------------------------------------------------------------------
fresh mpmd
mkdir -p "$WORK/wa" "$WORK/wb"
HERE=fromhere
export HERE
herdrun $SIM 2 --mca ras_simulator_slots 4 \
    -n 2 -x A=1 -x HERE --wdir "$WORK/wa" "$BIN/app.sh" "$dir" progA : \
    -n 3 -x B=2 --wdir "$WORK/wb" "$BIN/app.sh" "$dir" progB
unset HERE
expect_rc "MPMD: exit 0" 0
want="0 progA 0 5 $WORK/wa A=1 B=unset HERE=fromhere
1 progA 0 5 $WORK/wa A=1 B=unset HERE=fromhere
2 progB 1 5 $WORK/wb A=unset B=2 HERE=fromhere
3 progB 1 5 $WORK/wb A=unset B=2 HERE=fromhere
4 progB 1 5 $WORK/wb A=unset B=2 HERE=fromhere"
got=$(for f in $(ls "$dir" | sort -n); do echo "$f $(cat "$dir/$f")"; done)
expect_eq "MPMD: ranks 0-1 run progA as app 0, 2-4 progB as app 1, each with its -x and --wdir" \
    "$got" "$want"
check_clean "MPMD"

fresh unset
herdrun $SIM 2 -n 1 -x HERE "$BIN/touch.sh" "$dir/marker"
expect_rc "-x of a variable herdrun does not have: exit 1" 1
expect_err "-x of an unset variable: the message names it" "HERE"
expect_not_started "-x of an unset variable" "$dir/marker"
check_clean "-x of an unset variable"

# --- 4. Exit codes ---------------------------------------------------------------------------
fresh exit3
herdrun $SIM 2 --mca ras_simulator_slots 2 --report-usage="$WORK/exit3.json" -n 4 \
    "$BIN/failer.sh" "$dir" 1 3
expect_rc "a rank exits 3: herdrun exits 3" 3
pid=$(cat "$dir/pid.1" 2>/dev/null)
expect_err "a rank exits 3: the failure line names rank, node, pid and status" \
    "^herdrun: job [^ ]+: rank 1 on node sim000[12] \\(pid $pid\\) exited with status 3$"
expect_eq "a rank exits 3: one failure line (the ranks killed for it are not failures)" \
    "$(grep -cE 'rank [0-9]+ on node .* (exited with status|was killed by signal)' "$ERR")" 1
expect_all_gone "a rank exits 3: the sleeping ranks are gone when herdrun returns" "$dir"
expect_eq "a rank exits 3: the 3 sleeping ranks were killed (--report-usage: signaled)" \
    "$(grep -cE '"rank": [023],.*"state": "signaled"' "$WORK/exit3.json")" 3
check_clean "a rank exits 3"

fresh kill9
herdrun $SIM 2 --mca ras_simulator_slots 2 -n 4 "$BIN/failer.sh" "$dir" 2 KILL
expect_rc "a rank killed by SIGKILL: herdrun exits 137" 137
pid=$(cat "$dir/pid.2" 2>/dev/null)
expect_err "a rank killed by SIGKILL: the line names rank, node, pid and signal 9" \
    "rank 2 on node sim000[12] \\(pid $pid\\) was killed by signal 9 \\(Killed\\)"
expect_all_gone "a rank killed by SIGKILL: the other ranks are gone" "$dir"
check_clean "a rank killed by SIGKILL"

# --- 5. SIGINT -------------------------------------------------------------------------------
# Processes that catch SIGINT write it down and exit 0: herdrun forwards it and exits 130.
cat >"$BIN/catcher.sh" <<'EOF'
#!/bin/sh
trap 'echo INT >"$1/int.$HERD_RANK"; exit 0' INT
echo $$ >"$1/pid.$HERD_RANK"
sleep 30 &
wait
EOF
chmod +x "$BIN/catcher.sh"
# start_or_give_up WHAT DIR N: wait for the N processes of the herdrun in the background; if
# they do not all start, say so, stop that herdrun, and return false.
start_or_give_up() {
    wait_for 10 all_started "$2" "$3" && return 0
    fail "$1: the $3 processes start"
    kill -9 "$run_pid" 2>/dev/null
    herdrun_wait 5
    return 1
}
fresh sigint
herdrun_bg $SIM 2 --mca ras_simulator_slots 2 -n 4 "$BIN/catcher.sh" "$dir"
if start_or_give_up "SIGINT" "$dir" 4; then
    kill -INT "$run_pid"
    herdrun_wait 15
    expect_rc "SIGINT: herdrun exits 130" 130
    expect_eq "SIGINT: every process got it" "$(count_files "$dir" int.)" 4
    expect_err "SIGINT: herdrun says it forwards it" "Interrupt"
fi
check_clean "SIGINT"

# Processes that ignore SIGINT and SIGTERM, a grace of 60 s: the first SIGINT leaves them
# running, the second kills them at once (well before the grace ends).
fresh sigint2
herdrun_bg $SIM 2 --mca ras_simulator_slots 2 --mca odls_base_kill_grace_ms 60000 \
    --report-usage="$WORK/sigint2.json" -n 2 "$BIN/stubborn.sh" "$dir"
if start_or_give_up "two SIGINTs" "$dir" 2; then
    kill -INT "$run_pid"
    wait_for 10 grep -q Interrupt "$ERR" || fail "SIGINT to stubborn processes: herdrun says so"
    expect_eq "SIGINT to processes that ignore it: within the grace they still run" \
        "$(alive_pids "$dir" | wc -l)" 2
    kill -INT "$run_pid"
    herdrun_wait 10
    expect_rc "a second SIGINT: herdrun exits 130" 130
    expect_all_gone "a second SIGINT kills at once (not after the 60 s grace)" "$dir"
    expect_eq "a second SIGINT: both were killed by SIGKILL (--report-usage)" \
        "$(grep -c '"signal": 9' "$WORK/sigint2.json")" 2
fi
check_clean "two SIGINTs"

# The same with one SIGINT and a 500 ms grace: killed (SIGKILL) once the grace is over.
fresh sigint1
herdrun_bg $SIM 2 --mca ras_simulator_slots 2 --mca odls_base_kill_grace_ms 500 \
    --report-usage="$WORK/sigint1.json" -n 2 "$BIN/stubborn.sh" "$dir"
if start_or_give_up "one SIGINT and a grace" "$dir" 2; then
    kill -INT "$run_pid"
    herdrun_wait 15
    expect_rc "one SIGINT and a 500 ms grace: herdrun exits 130" 130
    expect_all_gone "one SIGINT and a 500 ms grace: the processes that ignore it are gone" "$dir"
    expect_eq "one SIGINT and a 500 ms grace: both were killed by SIGKILL (--report-usage)" \
        "$(grep -c '"signal": 9' "$WORK/sigint1.json")" 2
fi
check_clean "one SIGINT and a grace"

# --- 6. --timeout ----------------------------------------------------------------------------
fresh timeout
herdrun $SIM 2 --timeout 1 -n 2 "$BIN/sleeper.sh" "$dir"
expect_rc "--timeout 1: herdrun exits 124" 124
expect_err "--timeout 1: the message names the time limit" "time limit of 1 s"
expect_all_gone "--timeout 1: the processes are gone" "$dir"
check_clean "--timeout 1"

# --- 7. Programs that cannot start: nothing starts -------------------------------------------
# Two nodes of one slot: app 0 (valid, writes a marker) on sim0001, app 1 on sim0002.
ONE_EACH="$SIM 2 --mca ras_simulator_slots 1"
fresh missing
herdrun $ONE_EACH -n 1 "$BIN/touch.sh" "$dir/marker" : -n 1 /nonexistent/prog
expect_rc "a missing program: exit 1" 1
expect_err "a missing program: the message names it" "/nonexistent/prog"
expect_err "a missing program: the message names the node of its process" "sim0002"
expect_not_started "a missing program" "$dir/marker"
# As mpirun does, one message for the job, not one per node (a 1000-node job would repeat it
# 1000 times).
expect_eq "a missing program: said once, not once per node" \
    "$(grep -c 'The program "/nonexistent/prog"' "$ERR")" 1
check_clean "a missing program"

fresh noexec
printf '#!/bin/sh\necho never\n' >"$WORK/notexecutable"
herdrun $ONE_EACH -n 1 "$BIN/touch.sh" "$dir/marker" : -n 1 "$WORK/notexecutable"
expect_rc "a non-executable program: exit 1" 1
expect_err "a non-executable program: the message names it" "$WORK/notexecutable"
expect_err "a non-executable program: the message names the node of its process" "sim0002"
expect_err "a non-executable program: the message gives the reason" "Permission denied"
expect_not_started "a non-executable program" "$dir/marker"
check_clean "a non-executable program"

fresh nopath
herdrun $ONE_EACH -n 1 "$BIN/touch.sh" "$dir/marker" : -n 1 herd-no-such-program
expect_rc "a program not in PATH: exit 1" 1
expect_err "a program not in PATH: the message names it and the node" \
    "herd-no-such-program.*sim0002"
expect_not_started "a program not in PATH" "$dir/marker"
check_clean "a program not in PATH"

# --- 8. A daemon killed with -9 mid-job ------------------------------------------------------
# descendants PID: every process below PID (this test's herdrun), one per line.
descendants() {
    ps -eo pid=,ppid= | awk -v root="$1" '
        { parent[$1] = $2 }
        END {
            for (p in parent) {
                q = p
                while ((q in parent) && q != root && q > 1) q = parent[q]
                if (q == root && p != root) print p
            }
        }'
}
# node_of PID: the node a daemon serves (HERD_DVM_NODE in its environment).
node_of() { tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | sed -n 's/^HERD_DVM_NODE=//p'; }
# lose_daemon WHAT session|node: a job of 6 on 3 nodes; kill -9 the session daemon / node
# daemon of sim0002 that this herdrun started; herdrun must fail, name the node, leave nothing.
lose_daemon() {
    fresh lose
    herdrun_bg $SIM 3 --mca ras_simulator_slots 2 -n 6 "$BIN/sleeper.sh" "$dir"
    if ! start_or_give_up "$1" "$dir" 6; then check_clean "$1"; return; fi
    victim=
    for p in $(descendants "$run_pid"); do
        case $2:$(ps -o args= -p "$p") in
        session:*"herdd --session"*) [ "$(node_of "$p")" = sim0002 ] && victim=$p ;;
        node:*herdd*--session*) ;;
        node:*/herdd*) [ "$(node_of "$p")" = sim0002 ] && victim=$p ;;
        esac
    done
    if [ -z "$victim" ]; then
        fail "$1: the daemon of sim0002 is found below herdrun $run_pid"
        kill -9 "$run_pid"
        herdrun_wait 5
        check_clean "$1"
        return
    fi
    kill -9 "$victim"
    herdrun_wait 15
    expect_fail "$1: herdrun fails"
    expect_err "$1: the message names the node" "node sim0002"
    # the nodes stopped because of it were not lost: blaming them sends the user after them
    expect_eq "$1: only sim0002 is reported lost" \
        "$(grep -E 'lost|died' "$ERR" | grep -oE 'node sim000[13]' | sort -u | tr '\n' ' ')" ""
    expect_all_gone "$1: every process of the job is gone" "$dir"
    check_clean "$1"
}
lose_daemon "a session daemon killed with -9" session
lose_daemon "a node daemon killed with -9" node

# On this host alone herdrun forks the session daemon with their connection already made (a
# socketpair): herdrun opens no TCP port for the job (the daemon's PMIx server may, on loopback,
# for its clients), and the daemon killed with -9 is noticed all the same.
# listening_inodes PID: the socket inodes of PID's TCP listeners.
listening_inodes() {
    socks=$(ls -l "/proc/$1/fd" 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\]$/\1/p')
    for ino in $socks; do
        awk -v ino="$ino" '$4 == "0A" && $10 == ino { print ino }' /proc/net/tcp /proc/net/tcp6
    done
}
fresh forked
herdrun_bg -n 2 --oversubscribe "$BIN/sleeper.sh" "$dir"
if start_or_give_up "the forked session daemon" "$dir" 2; then
    forked=$(ps -o pid= --ppid "$run_pid" | tr -d ' ')
    expect_eq "on this host alone herdrun listens on no TCP port" \
        "$(listening_inodes "$run_pid")" ""
    expect_eq "herdrun forked one session daemon" "$(echo "$forked" | wc -w)" 1
    kill -9 "$forked"
    herdrun_wait 15
    expect_fail "the forked session daemon killed with -9: herdrun fails"
    expect_err "the forked session daemon killed with -9: herdrun says so" \
        "lost the session daemon on node $(hostname)"
    expect_all_gone "the forked session daemon killed with -9: the processes are gone" "$dir"
fi
check_clean "the forked session daemon killed with -9"

# --- 9. errmgr continue ----------------------------------------------------------------------
# Rank 1 exits 2; the others wait until it is gone, then 1.5 s more (plenty for an abort to
# reach them), then write their file. With continue all write it; without, none does.
cat >"$BIN/survivor.sh" <<EOF
#!/bin/sh
if [ "\$HERD_RANK" = 1 ]; then echo \$\$ >"\$1/pid.1"; exit 2; fi
i=0
while { [ ! -s "\$1/pid.1" ] || kill -0 "\$(cat "\$1/pid.1")" 2>/dev/null; } && [ \$i -lt 200 ]; do
    sleep 0.05; i=\$((i + 1))
done
sleep 1.5
echo done >"\$1/done.\$HERD_RANK"
EOF
chmod +x "$BIN/survivor.sh"
fresh continue
herdrun $SIM 2 --mca ras_simulator_slots 2 --mca errmgr continue -n 4 "$BIN/survivor.sh" "$dir"
expect_rc "errmgr continue: herdrun exits with the failed rank's status 2" 2
expect_eq "errmgr continue: the other 3 ranks finished their work" "$(count_files "$dir" done.)" 3
expect_err "errmgr continue: the message says the job goes on" \
    "rank 1 on node sim000[12] .*exited with status 2.*goes on without it"
check_clean "errmgr continue"

fresh abort
herdrun $SIM 2 --mca ras_simulator_slots 2 -n 4 "$BIN/survivor.sh" "$dir"
expect_rc "default errmgr: exit 2" 2
expect_eq "default errmgr: the other ranks were stopped before finishing" \
    "$(count_files "$dir" done.)" 0
check_clean "default errmgr"

# --- 10. Reports and displays ----------------------------------------------------------------
herdrun $SIM 2 --mca ras_simulator_slots 2 --report-usage="$WORK/usage.json" -n 4 true
expect_rc "--report-usage=FILE: exit 0" 0
if python3 -m json.tool "$WORK/usage.json" >/dev/null 2>&1; then
    ok "--report-usage=FILE writes valid JSON"
else
    fail "--report-usage=FILE writes valid JSON"
fi
expect_eq "--report-usage=FILE: one entry per rank" "$(python3 -c '
import json, sys
print(" ".join(sorted(str(r["rank"]) for r in json.load(open(sys.argv[1]))["ranks"])))' \
    "$WORK/usage.json" 2>&1)" "0 1 2 3"
expect_out "--report-usage=FILE: the table is printed too" \
    "^Resource usage of job .*\\(4 processes\\)"
expect_eq "--report-usage: one table row per rank" \
    "$(grep -cE '^ +[0-3] +sim000[12] +[0-9]+ +exit 0 ' "$OUT")" 4
check_clean "--report-usage"

# herd-info --job: a running job's database, one per node; an unknown id lists the jobs there
fresh jobdb
herdrun_bg $SIM 2 --mca ras_simulator_slots 2 -n 4 "$BIN/sleeper.sh" "$dir"
if start_or_give_up "herd-info --job" "$dir" 4; then
    info=$HERD_BIN/herd-info/herd-info
    "$info" --job no-such-job >"$WORK/jobs.out" 2>"$WORK/jobs.err"
    expect_eq "herd-info --job of an unknown id: exit 1" "$?" 1
    # this job's id, from its database's name in a rank's environment (other tests' jobs may
    # have databases here too)
    job=$(tr '\0' '\n' <"/proc/$(cat "$dir/pid.0")/environ" |
        sed -n 's|^HERD_JOBDB=/herd-[0-9]*-\([0-9a-f]\{16\}[.]1\)-sim000[12]$|\1|p')
    expect_eq "herd-info --job of an unknown id: names the running job" \
        "$(sed -n 's/.*Jobs with a database here: //p' "$WORK/jobs.err" | tr ' ' '\n' |
            grep -cx "${job:-none}")" 1
    "$info" --job "$job" >"$WORK/job.out" 2>&1
    expect_eq "herd-info --job JOBID: exit 0" "$?" 0
    expect_eq "herd-info --job JOBID: one database per node" \
        "$(grep -cE "^job $job on node sim000[12]: 4 procs \\(4 ready\\), 2 nodes, complete$" \
            "$WORK/job.out")" 2
    expect_eq "herd-info --job JOBID: each holds every rank, with node, local rank and binding" \
        "$(grep -cE '^  rank [0-3]: node [01] \(sim000[12]\), app 0, local rank [01], node rank [01], bound to ' \
            "$WORK/job.out")" 8
    kill -TERM "$run_pid"
    herdrun_wait 15
fi
check_clean "herd-info --job"
"$HERD_BIN/herd-info/herd-info" --job "${job:-x}" >"$WORK/job.out" 2>&1
expect_eq "herd-info --job after the job: its database is gone" \
    "$(grep -c "^job ${job:-x} on node" "$WORK/job.out")" 0

# written when the job ends: a place it cannot go is said first, and nothing runs
fresh report-unwritable
herdrun $SIM 2 --mca ras_simulator_slots 2 --report-usage="$WORK/no-such-folder/usage.json" \
    -n 2 "$BIN/survivor.sh" "$dir"
expect_rc "--report-usage=FILE in a missing folder: exit 1" 1
expect_err "--report-usage=FILE in a missing folder: says where and why" \
    "--report-usage=.*/no-such-folder/usage.json: the report could not be written there \\(its folder does not exist\\)"
expect_eq "--report-usage=FILE in a missing folder: nothing was started" \
    "$(count_files "$dir" "")" 0
check_clean "--report-usage=FILE in a missing folder"

herdrun $SIM 3 --mca ras_simulator_slots 2 --display-map -n 6 true
expect_rc "--display-map: exit 0" 0
expect_eq "--display-map lists every rank once" "$(map_of | awk '{ print $1 }' | tr '\n' ' ')" \
    "0 1 2 3 4 5 "
check_clean "--display-map"

herdrun $SIM 3 --mca ras_simulator_slots 2 --report-bindings -n 6 true
expect_rc "--report-bindings: exit 0" 0
expect_eq "--report-bindings prints one line per rank" "$(
    grep -E '^\[sim000[1-3]\] rank [0-5] \(app 0, local rank [01]\) bound to cpus ' "$ERR" |
        sed 's/.* rank \([0-9]*\) .*/\1/' | sort -n | tr '\n' ' ')" "0 1 2 3 4 5 "
check_clean "--report-bindings"

fresh dnl
herdrun $SIM 2 --do-not-launch --display-map -n 4 "$BIN/touch.sh" "$dir/marker"
expect_rc "--do-not-launch: exit 0" 0
expect_out "--do-not-launch still maps and displays the job" "^=== job map: 4 processes"
expect_not_started "--do-not-launch" "$dir/marker"
check_clean "--do-not-launch"

# The launch message carries the app context and node facts, never a process map: its size
# does not grow with -n. Both jobs use all 8 nodes (2 slots each), so only -n differs.
launch_size() { cat "$OUT" "$ERR" | sed -n 's/^launch message: \([0-9]*\) bytes.*/\1/p'; }
herdrun $SIM 8 --mca ras_simulator_slots 2 -v --oversubscribe -n 16 true
expect_rc "-v -n 16: exit 0" 0
size16=$(launch_size)
[ -n "$size16" ] && ok "-v prints the launch message size ($size16 bytes)" ||
    fail "-v prints the launch message size"
check_clean "-v -n 16"
herdrun $SIM 8 --mca ras_simulator_slots 2 -v --oversubscribe -n 4096 true
expect_rc "-v -n 4096 oversubscribed: exit 0" 0
expect_eq "the launch message is as large for -n 4096 as for -n 16" "$(launch_size)" "$size16"
check_clean "-v -n 4096"

# --- 11. Maps that cannot be made ------------------------------------------------------------
fresh toomany
herdrun $SIM 2 --mca ras_simulator_slots 2 -n 100 "$BIN/touch.sh" "$dir/marker"
expect_fail "-n 100 on 2 nodes x 2 slots fails"
expect_err "-n 100 on 2 nodes x 2 slots: the message says which limit (4 slots)" "4 slots"
expect_err "-n 100 on 2 nodes x 2 slots: the message suggests --oversubscribe" "--oversubscribe"
expect_not_started "-n 100 on 2 nodes x 2 slots" "$dir/marker"
check_clean "-n 100 on 2 nodes x 2 slots"

fresh over
herdrun $SIM 2 --mca ras_simulator_slots 2 --oversubscribe -n 100 "$BIN/rankenv.sh" "$dir"
expect_rc "-n 100 on 2 x 2 slots with --oversubscribe runs" 0
expect_ranks "-n 100 with --oversubscribe: every rank ran once" "$dir" 100
check_clean "-n 100 with --oversubscribe"

fresh badmap
herdrun $SIM 2 --map-by bogus -n 2 "$BIN/touch.sh" "$dir/marker"
expect_rc "--map-by bogus: exit 1" 1
expect_err "--map-by bogus: the error names the option and the value" \
    "bogus.*--map-by|--map-by.*bogus"
expect_not_started "--map-by bogus" "$dir/marker"
check_clean "--map-by bogus"

# a selection that names no component: said by herdrun before anything starts, on this host
# alone (a forked session daemon) and on a DVM herdrun starts
for where in local sim; do
    args=""
    [ "$where" = sim ] && args="$SIM 2"
    for fw in errmgr odls; do
        fresh "bad$fw$where"
        # word splitting of $args is intended
        # shellcheck disable=SC2086
        herdrun $args --mca "$fw" bogus -n 2 "$BIN/touch.sh" "$dir/marker"
        expect_rc "--mca $fw bogus ($where): exit 1" 1
        expect_err "--mca $fw bogus ($where): the error names the value and what exists" \
            "selection names a component that does not exist: \"bogus\""
        expect_err "--mca $fw bogus ($where): herdrun says what is missing" \
            "herdrun: no .*\\($fw component\\) is available"
        expect_not_started "--mca $fw bogus ($where)" "$dir/marker"
        check_clean "--mca $fw bogus ($where)"
    done
done

# a misspelt variable of a framework herdrun uses is said (with the closest name), and the job
# runs; the processes' own frameworks (btl, wireup) are not herdrun's to judge
for where in local sim; do
    args=""
    [ "$where" = sim ] && args="$SIM 2"
    fresh "typo$where"
    # word splitting of $args is intended
    # shellcheck disable=SC2086
    HERD_MCA_rmaps_base_verbos=1 herdrun $args --mca odls_default_wait_exe 1 \
        --mca btl_tcp_anything 1 --mca wireup_anything 1 -n 2 "$BIN/touch.sh" "$dir/marker"
    expect_rc "a misspelt --mca name ($where): the job still runs, exit 0" 0
    expect_err "a misspelt --mca name ($where): said, with the closest name" \
        "odls_default_wait_exe is not a variable"
    expect_eq "a misspelt --mca name ($where): the closest name is suggested" \
        "$(grep -c 'Did you mean odls_default_wait_exec?' "$ERR")" 1
    expect_err "a misspelt HERD_MCA_ name ($where): said, naming the environment" \
        "set from the environment \\(HERD_MCA_rmaps_base_verbos\\)"
    expect_eq "btl_ and wireup_ names are left to the processes ($where)" \
        "$(grep -c 'btl_tcp_anything\|wireup_anything' "$ERR")" 0
    expect_eq "a misspelt --mca name ($where): both processes ran" \
        "$(grep -c started "$dir/marker" 2>&1)" 2
    check_clean "a misspelt --mca name ($where)"
done

# --- 12. Mapping policies: where each rank ran ----------------------------------------------
# placement WHAT EXPECTED ARGS...: run rankenv.sh with ARGS and --display-map on 3 nodes of 4
# slots. The map must be EXPECTED ("rank node local" lines, ";"-separated), and the processes
# must agree: each has its local rank from the map, and the ranks of one node (one session
# daemon) are exactly those the map puts there.
placement() {
    what=$1 expected=$2
    shift 2
    fresh place
    herdrun $SIM 3 --mca ras_simulator_slots 4 --display-map "$@" "$BIN/rankenv.sh" "$dir"
    expect_rc "$what: exit 0" 0
    expect_eq "$what: the map" "$(map_of | tr '\n' ';')" "$expected"
    # the map's "rank node local" against the processes' rankenv.sh lines
    map_of >"$WORK/map"
    expect_eq "$what: every rank ran once, on its node of the map" "$(cat "$dir"/* | awk '
        NR == FNR { node[$1] = $2; local[$1] = $3; next }
        !(($1) in node) { print "rank " $1 " ran but is not in the map"; next }
        { ran[$1]++ }
        $3 != local[$1] { print "rank " $1 ": local rank " $3 " but " local[$1] " in the map" }
        {
            n = node[$1]
            if ((n) in daemon && daemon[n] != $8)
                print "the ranks of " n " ran under different session daemons"
            if (($8) in served && served[$8] != n)
                print "one session daemon ran ranks of " served[$8] " and of " n
            daemon[n] = $8; served[$8] = n
        }
        END { for (r in node) if (ran[r] != 1) print "rank " r " ran " ran[r] + 0 " times" }' \
        "$WORK/map" - | tr '\n' ';')" ""
    check_clean "$what"
}
placement "--map-by node -n 6" \
    "0 sim0001 0;1 sim0002 0;2 sim0003 0;3 sim0001 1;4 sim0002 1;5 sim0003 1;" --map-by node -n 6
placement "--map-by ppr:2:node" \
    "0 sim0001 0;1 sim0001 1;2 sim0002 0;3 sim0002 1;4 sim0003 0;5 sim0003 1;" --map-by ppr:2:node
placement "--npernode 1" "0 sim0001 0;1 sim0002 0;2 sim0003 0;" --npernode 1
placement "--map-by slot -n 6" \
    "0 sim0001 0;1 sim0001 1;2 sim0001 2;3 sim0001 3;4 sim0002 0;5 sim0002 1;" --map-by slot -n 6

# A persistent DVM: herdrun --dvm-uri runs jobs on it, two at once, and starts no daemon.
uri=$WORK/dvm.uri
shm_mark
HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herd-dvm/herd-dvm" --mca ras simulator \
    --mca ras_simulator_num_nodes 3 --mca ras_simulator_slots 2 --daemonize --report-uri "$uri" \
    >"$OUT" 2>"$ERR"
rc=$?
expect_rc "--dvm-uri: herd-dvm comes up" 0
expect_eq "--dvm-uri: its contact file names the tool socket" "$(grep -c '^tool ' "$uri")" 1
sock=$(sed -n 's/^tool //p' "$uri")
daemons_before=$(herdd_pids | wc -l)
OUT1=$WORK/job1.out
OUT2=$WORK/job2.out
HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herdrun/herdrun" --dvm-uri "$uri" -n 4 \
    sh -c 'sleep 0.5; echo one$HERD_RANK' </dev/null >"$OUT1" 2>&1 &
job1=$!
HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herdrun/herdrun" --dvm-uri "$uri" -n 6 --map-by node \
    sh -c 'echo two$HERD_RANK' </dev/null >"$OUT2" 2>&1
rc=$?
expect_rc "--dvm-uri: a second job runs while the first does" 0
wait "$job1"
rc=$?
expect_rc "--dvm-uri: the first job ends well too" 0
expect_eq "--dvm-uri: every rank of job 1 ran once" "$(sort "$OUT1" | tr '\n' ' ')" \
    "one0 one1 one2 one3 "
expect_eq "--dvm-uri: every rank of job 2 ran once" "$(sort "$OUT2" | tr '\n' ' ')" \
    "two0 two1 two2 two3 two4 two5 "
expect_eq "--dvm-uri: no daemon was started for the jobs" "$(herdd_pids | wc -l)" \
    "$daemons_before"
herdrun --dvm-uri "$uri" -n 2 sh -c '[ $HERD_RANK = 1 ] && exit 4; exit 0'
expect_rc "--dvm-uri: a failing job's status comes back" 4
herdrun --dvm-uri "$uri" -H nosuchnode -n 1 /bin/true
expect_fail "--dvm-uri: --host naming a node the DVM lacks is refused"
expect_err "--dvm-uri: ... saying which" "nosuchnode"
herdrun --dvm-uri "$WORK/no-such.uri" -n 1 /bin/true
expect_fail "--dvm-uri: a missing contact file is an error"
expect_err "--dvm-uri: ... naming it" "no-such.uri"
"$HERD_BIN/herd-dvm/herd-dvm" --shutdown --dvm-uri "$uri" >"$OUT" 2>"$ERR"
rc=$?
expect_rc "--dvm-uri: the DVM shuts down" 0
[ -n "$sock" ] && [ ! -e "$sock" ] && ok "--dvm-uri: the tool socket is removed" ||
    fail "--dvm-uri: the tool socket $sock is removed"
wait_for 10 sh -c "[ -z \"\$(ps -eo args= | grep -F '$HERD_BUILDDIR' | grep -E 'herdd( |$)' | grep -v grep)\" ]" ||
    true
check_clean "--dvm-uri"

# Started under taskset, herdrun maps onto the CPUs it was given, and binds there.
last_cpu=$(($(nproc --all) - 1))
if [ "$last_cpu" -ge 1 ] && command -v taskset >/dev/null; then
    shm_mark
    HERD_IT_TAG=$HERD_IT_TAG taskset -c "$last_cpu" "$HERD_BIN/herdrun/herdrun" -n 1 \
        --display-map sh -c 'sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status' \
        </dev/null >"$OUT" 2>"$ERR"
    rc=$?
    expect_rc "under taskset -c $last_cpu: exit 0" 0
    expect_out "under taskset: the node has 1 slot" "node .*: 1 slots"
    expect_eq "under taskset: rank 0 is bound to CPU $last_cpu" "$(tail -n 1 "$OUT")" "$last_cpu"
    HERD_IT_TAG=$HERD_IT_TAG taskset -c "$last_cpu" "$HERD_BIN/herdrun/herdrun" -n 2 /bin/true \
        </dev/null >"$OUT" 2>"$ERR"
    rc=$?
    expect_fail "under taskset -c $last_cpu: 2 processes do not fit 1 slot"
    check_clean "taskset"
fi

finish
