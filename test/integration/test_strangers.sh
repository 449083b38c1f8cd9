#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Strangers at the daemons' listeners: on a persistent DVM of simulated nodes, a node daemon's 9
# listeners (its own and its 8 session slots) get 1,008 idle connections and every kind of
# garbage; the daemon drops them (at once, or after overlay_base_handshake_timeout for the
# silent ones), says nothing about them on any output, a job then runs clean, and the daemons'
# descriptors come back down. Then 300 strangers at a running job's session daemon write
# nothing into that job's stderr.
. "$(dirname "$0")/lib.sh"
SIM="--mca ras_simulator_num_nodes"
STRANGER=$HERD_BUILDDIR/test/programs/herd_stranger
KINDS="garbage len4g data hello version partial"
uri=$WORK/dvm.uri

# daemon_pid VPID: the pid of node daemon VPID of the DVM of $uri
daemon_pid() { dvm_daemon_pid "$uri" "$1"; }
# listeners PID [FD]: HOST:PORT of every TCP socket PID listens on (or only the one that is its
# descriptor FD)
listeners() { ss -ltnpH | grep "pid=$1,fd=${2:-}" | awk '{print $4}' | sort -u; }
# fd_counts: "PID:N" for every node daemon, N its open descriptors
fd_counts() {
    for v in 1 2 3 4; do
        p=$(daemon_pid "$v")
        echo "$p:$(ls "/proc/$p/fd" | wc -l)"
    done
}
fds_back() { [ "$(fd_counts)" = "$fds_before" ]; }
# strangers ADDRESS KIND COUNT: herd_stranger in the background (its lines in $WORK/strangers)
stranger_pids=
launched=0
strangers() {
    "$STRANGER" "$1" "$2" "$3" 60 >>"$WORK/strangers" &
    stranger_pids="$stranger_pids $!"
    launched=$((launched + 1))
}
all_connected() { [ "$(grep -c ': connected ' "$WORK/strangers")" -ge "$launched" ]; }
# stop_strangers: end them (their last lines say what the daemons closed)
stop_strangers() {
    for p in $stranger_pids; do kill "$p" 2>/dev/null; done
    for p in $stranger_pids; do wait "$p" 2>/dev/null; done
    stranger_pids=
}
# closed_all KIND ADDRESS: the daemon closed every connection of that stranger
closed_all() { grep -Eq "^$1 $2: closed by the daemon ([0-9]+) of \\1\$" "$WORK/strangers"; }

HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herd-dvm/herd-dvm" $SIM 4 --mca dvm_radix 2 --daemonize \
    --report-uri "$uri" </dev/null >"$WORK/dvm.out" 2>"$WORK/dvm.log"
rc=$?
expect_rc "a persistent DVM of 4 simulated nodes" 0
victim=$(daemon_pid 1)
own_fd=$(tr '\0' '\n' <"/proc/$victim/environ" | sed -n 's/^HERD_DVM_LISTEN_FD=//p')
own=$(listeners "$victim" "$own_fd")
ports=$(listeners "$victim")
expect_eq "node daemon 1 has 9 listeners: its own and 8 session slots" "$(echo $ports | wc -w)" 9
fds_before=$(fd_counts)

# --- 1,008 idle connections and every kind of garbage at every listener ----------------------
: >"$WORK/strangers"
for port in $ports; do
    strangers "$port" idle 112
    for kind in $KINDS; do strangers "$port" "$kind" 3; done
done
wait_for 30 all_connected
expect_eq "every stranger connected to every listener" \
    "$(grep -c ': connected \([0-9]*\) of \1$' "$WORK/strangers")" "$launched"
# the daemon's own listener: garbage goes at once, silence after the handshake timeout
for kind in $KINDS idle; do
    wait_for 20 closed_all "$kind" "$own"
done
for kind in $KINDS; do
    if closed_all "$kind" "$own"; then ok "node daemon 1 drops $kind"; else
        fail "node daemon 1 drops $kind ($(grep "^$kind $own" "$WORK/strangers"))"
    fi
done
if closed_all idle "$own"; then ok "and 112 idle connections"; else
    fail "and 112 idle connections ($(grep "^idle $own" "$WORK/strangers"))"
fi
# a job takes a session slot where strangers queued: it runs, and says nothing about them
herdrun --dvm-uri "$uri" -n 4 --map-by node sh -c 'echo "ok $HERD_RANK"'
expect_rc "a job runs among the strangers" 0
expect_eq "with all its output" "$(sort "$OUT" | tr '\n' ' ')" "ok 0 ok 1 ok 2 ok 3 "
expect_eq "and nothing on its stderr" "$(cat "$ERR")" ""
wait_for 30 fds_back
expect_eq "the node daemons' descriptors come back down while the strangers hold on" \
    "$(fd_counts)" "$fds_before"
herdrun --dvm-uri "$uri" -n 4 --map-by node sh -c 'echo "again $HERD_RANK"'
expect_rc "and the next job too" 0
expect_eq "with all its output and no stderr" "$(sort "$OUT" | tr '\n' ' ')$(cat "$ERR")" \
    "again 0 again 1 again 2 again 3 "
stop_strangers
cp "$WORK/dvm.log" "$ERR"
expect_no_err "nothing about strangers in the DVM's log" "refused|stranger|handshake|HRDO"

# --- 300 strangers at a running job's session daemon ------------------------------------------
herdrun_bg --dvm-uri "$uri" -n 4 --map-by node \
    sh -c "while [ ! -e '$WORK/go' ]; do sleep 0.05; done; echo \"done \$HERD_RANK\""
# session_daemon: the job's session daemon on node 1 (the one running a process: the last job's
# may still be leaving)
session_daemon() {
    for p in $(ps -o pid= --ppid "$victim"); do
        case $(ps -o args= -p "$p") in
        *--session*) [ -n "$(ps -o pid= --ppid "$p")" ] && echo "$p" ;;
        esac
    done
}
has_session() { [ -n "$(session_daemon)" ]; }
wait_for 20 has_session
# its slot: the listener it shares with its node daemon (a wireup server may listen too)
slot=$(listeners "$(session_daemon)" | grep -Fx "$(listeners "$victim")")
expect_eq "the job's session daemon on node 1 took one of its node's slots" "$(echo $slot | wc -w)" 1
: >"$WORK/strangers"
launched=0
strangers "$slot" idle 150
for kind in garbage hello version; do strangers "$slot" "$kind" 50; done
wait_for 30 all_connected
touch "$WORK/go"
herdrun_wait 30
expect_rc "the job ends well" 0
expect_eq "with all its output" "$(sort "$OUT" | tr '\n' ' ')" "done 0 done 1 done 2 done 3 "
expect_eq "and no line about 300 strangers on its stderr" "$(cat "$ERR")" ""
stop_strangers
for kind in garbage hello version; do
    if closed_all "$kind" "$slot"; then ok "its session daemon dropped $kind"; else
        fail "its session daemon dropped $kind ($(grep "^$kind $slot" "$WORK/strangers"))"
    fi
done

herd_dvm --shutdown --dvm-uri "$uri"
expect_rc "--shutdown stops the DVM" 0
wait_for 10 no_herdd
finish
