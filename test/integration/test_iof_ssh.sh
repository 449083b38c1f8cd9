#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# I/O forwarding across three test hosts (network namespaces with sshd, ../shared/testhosts):
# whole lines from 8 ranks on 3 hosts, herdrun's stdin to a rank on another host, tags that name
# ranks on every host, and the last words of a rank on another host before an abort - with
# nothing left on any host. Needs root; the hosts are made here and torn down on every exit.
. "$(dirname "$0")/lib.sh"

need_testhosts up.sh
testhosts_up 3

# on_n1_in FILE ARGS...: run herdrun ARGS on test host n1 with FILE as stdin (output to
# $OUT/$ERR, status in $rc), with the tag check_clean looks for; waited for at most 60 s (then
# reported and killed, as herdrun_wait does). on_n1 ARGS...: the same with stdin /dev/null.
on_n1_in() {
    in=$1
    shift
    shm_mark
    on_host 1 env HERD_IT_TAG="$HERD_IT_TAG" "$HERD_BIN/herdrun/herdrun" "$@" <"$in" >"$OUT" 2>"$ERR" &
    run_pid=$!
    herdrun_wait 60
}
on_n1() { on_n1_in /dev/null "$@"; }
SSH_ARGS="-F $HOSTS/ssh_config"
# 8 ranks: 0-2 on n1 (where herdrun runs), 3-5 on n2, 6-7 on n3.
EIGHT="-H n1:3,n2:3,n3:2 --timeout 60 -n 8"
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
if ! make_iof_programs "$BIN" 2>"$ERR"; then
    fail "the test programs build"
    finish
    exit 1
fi
# ckranks.sh: what each rank read on its stdin (cksum: sum and byte count), after its rank.
cat >"$BIN/ckranks.sh" <<'EOF'
#!/bin/sh
echo "$HERD_RANK $(cksum)"
EOF
# lastwords.sh DIR RANK: RANK writes 1000 lines on stdout and on stderr (more than a pipe
# holds), says so in DIR/written and sleeps; rank 0 waits for that (at most 30 s), then exits 3,
# which aborts the job; the other ranks sleep.
PAD=0123456789012345678901234567890123456789012345678901234567890123456789
cat >"$BIN/lastwords.sh" <<EOF
#!/bin/sh
if [ "\$HERD_RANK" = "\$2" ]; then
    i=0
    while [ \$i -lt 1000 ]; do
        echo "last \$i $PAD"
        echo "err \$i" >&2
        i=\$((i + 1))
    done
    touch "\$1/written"
    exec $BIN/sleep 30
fi
[ "\$HERD_RANK" = 0 ] || exec $BIN/sleep 30
i=0
while [ ! -e "\$1/written" ] && [ \$i -lt 600 ]; do sleep 0.05; i=\$((i + 1)); done
exit 3
EOF
chmod +x "$BIN"/*.sh
# sums: the "RANK CKSUM" lines of the ranks (ckranks.sh), sorted, on one line.
sums() { sort -n "$OUT" | tr '\n' ';'; }
fresh() { dir=$WORK/$1; rm -rf "$dir"; mkdir -p "$dir"; }

# --- whole lines from 8 ranks on 3 hosts -----------------------------------------------------
on_n1 --mca plm_ssh_args "$SSH_ARGS" $EIGHT "$BIN/lines" 20000 0 both
expect_rc "8 x 20000 lines on 3 hosts: exit 0" 0
expect_eq "8 x 20000 lines on 3 hosts: on stdout every line once, whole, in its rank's order" \
    "$(lines_problems "$OUT" 8 20000 | tr '\n' ';')" ""
expect_eq "8 x 20000 lines on 3 hosts: on stderr every line once, whole, in its rank's order" \
    "$(lines_problems "$ERR" 8 20000 | tr '\n' ';')" ""
after_job "8 x 20000 lines on 3 hosts"

on_n1 --mca plm_ssh_args "$SSH_ARGS" $EIGHT "$BIN/lines" 20000 1000
expect_rc "8 x 20000 lines on 3 hosts, with pauses: exit 0" 0
expect_eq "8 x 20000 lines on 3 hosts, with pauses: every line once, whole, in its rank's order" \
    "$(lines_problems "$OUT" 8 20000 | tr '\n' ';')" ""
after_job "8 x 20000 lines on 3 hosts, with pauses"

# --- stdin to a rank on another host ---------------------------------------------------------
seq 1 1000000 >"$WORK/seq"
on_n1_in "$WORK/seq" --mca plm_ssh_args "$SSH_ARGS" --stdin 5 $EIGHT \
    sh -c 'echo "$HERD_RANK $(wc -l)"'
expect_rc "--stdin 5 (on n2): exit 0" 0
expect_eq "--stdin 5 (on n2): rank 5 reads every line, the others none" "$(sums)" \
    "0 0;1 0;2 0;3 0;4 0;5 1000000;6 0;7 0;"
after_job "--stdin 5 (on n2)"

head -c 4194304 /dev/urandom >"$WORK/in.bin"
SUM=$(cksum <"$WORK/in.bin")
on_n1_in "$WORK/in.bin" --mca plm_ssh_args "$SSH_ARGS" --stdin all $EIGHT "$BIN/ckranks.sh"
expect_rc "--stdin all on 3 hosts: exit 0" 0
expect_eq "--stdin all on 3 hosts: every rank reads the whole input" "$(sums)" \
    "$(for r in 0 1 2 3 4 5 6 7; do printf '%s %s;' $r "$SUM"; done)"
after_job "--stdin all on 3 hosts"

# --- --tag-output with ranks on every host ---------------------------------------------------
on_n1 --mca plm_ssh_args "$SSH_ARGS" --tag-output $EIGHT "$BIN/talk.sh" 5
expect_rc "--tag-output on 3 hosts: exit 0" 0
expect_eq "--tag-output on 3 hosts: every stdout line tagged [JOBID,RANK]<stdout>, in order" \
    "$(talk_problems "$OUT" out 8 5 stdout | tr '\n' ';')" ""
expect_eq "--tag-output on 3 hosts: every stderr line tagged [JOBID,RANK]<stderr>, in order" \
    "$(talk_problems "$ERR" err 8 5 stderr | tr '\n' ';')" ""
after_job "--tag-output on 3 hosts"

# --- last words on n3 before an abort from n1 ------------------------------------------------
fresh lastwords
on_n1 --mca plm_ssh_args "$SSH_ARGS" $EIGHT "$BIN/lastwords.sh" "$dir" 7
expect_rc "last words on n3 before an abort: herdrun exits 3" 3
expect_eq "last words on n3 before an abort: all 1000 stdout lines of rank 7 arrive, whole" \
    "$(grep -cE "^last [0-9]+ $PAD\$" "$OUT") of $(grep -E '^last ' "$OUT" | sort -u |
        wc -l) different" "1000 of 1000 different"
expect_eq "last words on n3 before an abort: all 1000 stderr lines of rank 7 arrive, whole" \
    "$(grep -cE '^err [0-9]+$' "$ERR") of $(grep -E '^err ' "$ERR" | sort -u | wc -l) different" \
    "1000 of 1000 different"
expect_err "last words on n3 before an abort: the failure of rank 0 on n1 is reported" \
    "rank 0 on node n1 .*exited with status 3"
after_job "last words on n3 before an abort"

finish
