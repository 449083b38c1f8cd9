#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# errmgr restart after a node loss over ssh, on four test hosts: a persistent DVM, a job on n2,
# n3 and n4; the node daemon on n3 is killed (kill -9) under rank 1: rank 1 starts again on n2
# (the most free slots, ties by the lowest index), herdrun says so once, the job's output is
# complete and it ends well; a job on n1 runs on untouched. Needs root; the hosts are made here
# and torn down on every exit.
. "$(dirname "$0")/lib.sh"

need_testhosts up.sh
testhosts_up 4
SSH_ARGS="-F $HOSTS/ssh_config"

# mover: rank 1's first run waits to go with its node; the others wait until it ran again. Each
# run says its number and host.
mkdir "$WORK/counters"
cat >"$WORK/mover.sh" <<'SCRIPT'
#!/bin/sh
f="$COUNTERS/count.$HERD_RANK"
n=$(cat "$f" 2>/dev/null || echo 0)
echo $((n + 1)) >"$f"
echo "rank $HERD_RANK run $((n + 1)) on $(hostname)"
if [ "$HERD_RANK" = 1 ]; then
    [ "$n" = 0 ] && exec sleep 60
else
    i=0
    while [ "$(cat "$COUNTERS/count.1" 2>/dev/null)" != 2 ] && [ $i -lt 600 ]; do
        sleep 0.1; i=$((i + 1))
    done
fi
exit 0
SCRIPT
chmod +x "$WORK/mover.sh"

shm_mark
# two slots a host: room for a moved rank beside one of the job's
on_host 1 env HERD_IT_TAG="$HERD_IT_TAG" "$HERD_BIN/herd-dvm/herd-dvm" -H n1:2,n2:2,n3:2,n4:2 \
    --mca plm_ssh_args "$SSH_ARGS" --daemonize --report-uri "$WORK/dvm.uri" --timeout 60 \
    </dev/null >>"$WORK/dvm.log" 2>&1
rc=$?
expect_rc "a persistent DVM on four hosts over ssh" 0

# a job on n1 alone, to be left alone
on_host 1 env HERD_IT_TAG="$HERD_IT_TAG" "$HERD_BIN/herdrun/herdrun" --dvm-uri "$WORK/dvm.uri" \
    --host n1 -n 1 sh -c 'while [ ! -e "$1" ]; do sleep 0.1; done; echo other done' sh \
    "$WORK/other.go" </dev/null >"$WORK/other.out" 2>"$WORK/other.err" &
other_pid=$!
on_host 1 env HERD_IT_TAG="$HERD_IT_TAG" "$HERD_BIN/herdrun/herdrun" --dvm-uri "$WORK/dvm.uri" \
    --mca errmgr restart --host n2,n3,n4 -n 3 --map-by node -x COUNTERS="$WORK/counters" \
    "$WORK/mover.sh" </dev/null >"$OUT" 2>"$ERR" &
run_pid=$!
daemon_of_n3() {
    for p in $(ip netns pids "${TESTHOSTS_NS}3"); do
        case $(ps -o args= -p "$p" 2>/dev/null) in *"$HERD_BUILDDIR"*herdd*) echo "$p" ;; esac
    done
}
rank1_sleeps() { [ "$(cat "$WORK/counters/count.1" 2>/dev/null)" = 1 ]; }
if wait_for 30 rank1_sleeps; then
    kill -9 $(daemon_of_n3)
else
    fail "rank 1 starts on n3"
fi
herdrun_wait 60
expect_rc "n3's node daemon killed under rank 1: the job ends well" 0
expect_err "the move is said" \
    "rank 1 on node n3 was lost with its node; started again on n2 \(restart 1 of 3, errmgr restart\)"
expect_eq "said once, nothing else by herdrun" "$(grep -c '^herdrun' "$ERR")" 1
expect_eq "every run's output, rank 1's second on n2" "$(sort "$OUT" | tr '\n' ';')" \
    "rank 0 run 1 on n2;rank 1 run 1 on n3;rank 1 run 2 on n2;rank 2 run 1 on n4;"
touch "$WORK/other.go"
wait "$other_pid"
expect_eq "the job on n1 is untouched" "$?:$(cat "$WORK/other.out")" "0:other done"

on_host 1 env HERD_IT_TAG="$HERD_IT_TAG" "$HERD_BIN/herd-dvm/herd-dvm" --shutdown \
    --dvm-uri "$WORK/dvm.uri" </dev/null >"$OUT" 2>"$ERR"
rc=$?
expect_rc "--shutdown stops it" 0
wait_for 10 no_herdd
expect_eq "no daemon left on any host" "$(herdd_pids)" ""
check_clean "a rank moved off a lost host"
finish
