#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# herdrun across three test hosts (network namespaces with sshd, ../shared/testhosts): every
# rank runs on the host the map gives it, a failing rank's status and message come back, and its
# failure stops the ranks on the other hosts - with nothing left on any host. Needs root; the
# hosts are made here and torn down on every exit.
. "$(dirname "$0")/lib.sh"

need_testhosts up.sh
testhosts_up 3

# on_n1 ARGS...: run herdrun ARGS on test host n1 (output to $OUT/$ERR, status in $rc), with the
# tag check_clean looks for.
on_n1() {
    shm_mark
    on_host 1 env HERD_IT_TAG="$HERD_IT_TAG" "$HERD_BIN/herdrun/herdrun" "$@" </dev/null >"$OUT" 2>"$ERR"
    rc=$?
}
SSH_ARGS="-F $HOSTS/ssh_config"
# after_job WHAT: nothing left on any host (the hosts share this machine's processes and
# /dev/shm): no herd process, no test program, no ssh session still open on a host.
sessions() { for p in $KEEP_PIDS; do ps -o pid=,args= --ppid "$p"; done; }
no_sessions() { [ -z "$(sessions)" ]; }
after_job() {
    wait_for 10 no_sessions
    expect_eq "$1: no ssh session left open on a host" "$(sessions | tr '\n' ';')" ""
    check_clean "$1"
}

BIN=$WORK/bin
mkdir -p "$BIN"
cp "$(command -v sleep)" "$BIN/sleep"
# where.sh DIR: the host (its UTS name) and what the process was told, into DIR/<rank>.
cat >"$BIN/where.sh" <<'EOF'
#!/bin/sh
echo "$HERD_RANK $(hostname) $HERD_LOCAL_RANK $HERD_SIZE" >>"$1/$HERD_RANK"
EOF
# failer.sh DIR RANK CODE: every rank writes its pid; RANK waits until all have, then exits
# with CODE; the others sleep.
cat >"$BIN/failer.sh" <<EOF
#!/bin/sh
echo \$\$ >"\$1/pid.\$HERD_RANK"
[ "\$HERD_RANK" = "\$2" ] || exec $BIN/sleep 30
i=0
while [ "\$(ls "\$1" | grep -c '^pid\.')" -lt "\$HERD_SIZE" ] && [ \$i -lt 400 ]; do
    sleep 0.05; i=\$((i + 1))
done
exit "\$3"
EOF
chmod +x "$BIN"/*.sh
fresh() { dir=$WORK/$1; rm -rf "$dir"; mkdir -p "$dir"; }

# --- a 3-host job: every rank on its host -----------------------------------------------------
fresh where
on_n1 -H n1:2,n2:2,n3:2 --mca plm_ssh_args "$SSH_ARGS" --timeout 60 --display-map -n 6 \
    "$BIN/where.sh" "$dir"
expect_rc "a 6-process job on 3 hosts: exit 0" 0
expected="0 n1 0 6;1 n1 1 6;2 n2 0 6;3 n2 1 6;4 n3 0 6;5 n3 1 6;"
expect_eq "the map puts 2 ranks on each host, in order" "$(awk '
    /^node / { node = $2; sub(":", "", node) }
    /^ +rank / { print $2, node, $6, 6 }' "$OUT" | sort -n | tr '\n' ';')" "$expected"
expect_eq "every rank ran once, on its host, with its local rank and the size" \
    "$(cat "$dir"/* 2>/dev/null | sort -n | tr '\n' ';')" "$expected"
after_job "a 6-process job on 3 hosts"

# --- a failure on n3 comes back and stops the ranks on n1 and n2 ------------------------------
fresh fail
on_n1 -H n1:2,n2:2,n3:2 --mca plm_ssh_args "$SSH_ARGS" --timeout 60 \
    --report-usage="$WORK/usage.json" -n 6 "$BIN/failer.sh" "$dir" 4 7
expect_rc "rank 4 exits 7 on n3: herdrun exits 7" 7
pid=$(cat "$dir/pid.4" 2>/dev/null)
expect_err "the failure line names rank 4, node n3, its pid and status 7" \
    "^herdrun: job [^ ]+: rank 4 on node n3 \\(pid $pid\\) exited with status 7$"
expect_eq "one failure line (the ranks killed for it are not failures)" \
    "$(grep -cE 'rank [0-9]+ on node .* (exited with status|was killed by signal)' "$ERR")" 1
expect_eq "the ranks on the other hosts are gone when herdrun returns" "$(
    for f in "$dir"/pid.*; do kill -0 "$(cat "$f")" 2>/dev/null && echo "${f##*.}"; done)" ""
expect_eq "the 5 other ranks were killed (--report-usage: signaled)" \
    "$(grep -cE '"rank": [0-35],.*"state": "signaled"' "$WORK/usage.json")" 5
expect_eq "--report-usage names each rank's host" "$(
    grep -oE '"rank": [0-5], "node": "n[1-3]"' "$WORK/usage.json" |
        sed 's/"rank": \([0-5]\), "node": "\(n[1-3]\)"/\1:\2/' | sort | tr '\n' ' ')" \
    "0:n1 1:n1 2:n2 3:n2 4:n3 5:n3 "
after_job "a failure on n3"

# --- a host without the program: named, nothing starts on the others --------------------------
fresh missing
on_n1 -H n1,n2,n3 --mca plm_ssh_args "$SSH_ARGS" --timeout 60 -n 2 "$BIN/where.sh" "$dir" : \
    -n 1 /nonexistent/prog
expect_rc "a missing program on 3 hosts: exit 1" 1
expect_err "the message names the program and its host" "/nonexistent/prog.*n3"
expect_eq "no process started on n1 or n2" "$(ls "$dir" | tr '\n' ' ')" ""
after_job "a missing program on 3 hosts"

finish
