#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# errmgr restart after a node loss: the node daemon under a job's rank is killed (kill -9), the
# ranks that ran there start again on another live node of the job with their rank, herdrun
# says so once per rank, the job's output is complete and it ends well; a second job on other
# nodes is untouched. Restarts used up, no live node with room, or no errmgr restart: the job
# ends as before, naming the node. Simulated nodes on a persistent DVM and on herdrun's own DVM.
. "$(dirname "$0")/lib.sh"
SIM="--mca ras_simulator_num_nodes"
RESTART="--mca errmgr restart"
# mover: rank 1's first run waits to go with its node; the others wait until rank 1 ran again
# (its counter file says 2), so the job's end needs the moved rank. Each run says its number.
cat >"$WORK/mover.sh" <<'SCRIPT'
#!/bin/sh
f="$COUNTERS/count.$HERD_RANK"
n=$(cat "$f" 2>/dev/null || echo 0)
echo $((n + 1)) >"$f"
echo "rank $HERD_RANK run $((n + 1))"
if [ "$HERD_RANK" = 1 ] && [ "$n" = 0 ]; then exec sleep 60; fi
if [ "$HERD_RANK" != 1 ]; then
    i=0
    while [ "$(cat "$COUNTERS/count.1" 2>/dev/null)" != 2 ] && [ $i -lt 600 ]; do
        sleep 0.1; i=$((i + 1))
    done
fi
exit 0
SCRIPT
chmod +x "$WORK/mover.sh"
reset_counters() { rm -rf "$WORK/counters" && mkdir "$WORK/counters"; }
sleeping() { for p in $(test_pids); do [ "$(ps -o args= -p "$p")" = "sleep 60" ] && echo "$p"; done; }
has_sleeper() { [ -n "$(sleeping)" ]; }
# daemon_of VPID: the DVM's node daemon with that vpid (node sim000<VPID>)
daemon_of() {
    for p in $(ps -o pid= --ppid "$root"); do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "HERD_DVM_VPID=$1" && echo "$p"
    done
}

# --- a persistent DVM of 4 nodes: rank 1's node lost, rank 1 moves ----------------------------
uri=$WORK/dvm.uri
herd_dvm $SIM 4 --daemonize --report-uri "$uri"
expect_rc "a persistent DVM of 4 nodes" 0
root=$(sed -n 's/^pid //p' "$uri")
# a second job on the fourth node only, to be left alone
"$HERD_BIN/herdrun/herdrun" --dvm-uri "$uri" --host sim0004 -n 1 sh -c \
    'while [ ! -e "$1" ]; do sleep 0.1; done; echo other done' sh "$WORK/other.go" \
    </dev/null >"$WORK/other.out" 2>"$WORK/other.err" &
other_pid=$!
reset_counters
herdrun_bg --dvm-uri "$uri" $RESTART --host sim0001,sim0002,sim0003 -x COUNTERS="$WORK/counters" \
    -n 3 --map-by node "$WORK/mover.sh"
wait_for 20 has_sleeper
kill -9 "$(daemon_of 2)"
herdrun_wait 60
expect_rc "rank 1's node lost: it runs again elsewhere, the job ends well" 0
expect_err "the move is said" \
    "rank 1 on node sim0002 was lost with its node; started again on sim0001 \(restart 1 of 3, errmgr restart\)"
expect_eq "said once, nothing else by herdrun" "$(grep -c '^herdrun' "$ERR")" 1
expect_eq "every run's output" "$(sort "$OUT" | tr '\n' ';')" \
    "rank 0 run 1;rank 1 run 1;rank 1 run 2;rank 2 run 1;"
touch "$WORK/other.go"
wait "$other_pid"
expect_eq "the job on another node is untouched" "$?:$(cat "$WORK/other.out")" "0:other done"
herd_dvm --shutdown --dvm-uri "$uri"
no_herdd() { [ -z "$(herdd_pids)" ]; }
wait_for 10 no_herdd
expect_eq "no daemon left" "$(herdd_pids)" ""
check_clean "a rank moved off a lost node on a persistent DVM"
finish
