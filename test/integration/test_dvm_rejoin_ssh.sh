#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# herd-dvm --add-host over ssh: a persistent DVM on four test hosts (radix 2: n3's daemon was
# started over ssh by n1's), the daemon on n3 killed with -9, said down, started again by the
# root with ssh below n1's daemon (a first try while n3's sshd is down fails, saying what ssh
# said), said up again once; a job on all four hosts then runs on n3 too, and the DVM shuts down
# with nothing left on any host. Needs root; the hosts are made
# here and torn down on every exit.
. "$(dirname "$0")/lib.sh"

need_testhosts up.sh
testhosts_up 4
SSH_ARGS="-F $HOSTS/ssh_config"
daemon_of_n3() {
    for p in $(ip netns pids "${TESTHOSTS_NS}3"); do
        case $(ps -o args= -p "$p" 2>/dev/null) in *"$HERD_BUILDDIR"*herdd*) echo "$p" ;; esac
    done
}
n3_down() { grep -q 'node n3 (daemon 3) is down' "$WORK/dvm.log"; }

on_host 1 env HERD_IT_TAG="$HERD_IT_TAG" "$HERD_BIN/herd-dvm/herd-dvm" -H n1,n2,n3,n4 \
    --mca plm_ssh_args "$SSH_ARGS" --mca dvm_radix 2 --daemonize --report-uri "$WORK/dvm.uri" \
    --timeout 60 </dev/null >>"$WORK/dvm.log" 2>&1
rc=$?
expect_rc "a persistent DVM on four hosts over ssh, radix 2" 0

on_n1 "$HERD_BIN/herd-dvm/herd-dvm" --add-host n3 --dvm-uri "$WORK/dvm.uri"
expect_fail "--add-host of a host that is up is refused"
expect_err "saying it is up" "node n3 is up"

victim=$(daemon_of_n3)
expect_eq "n3 runs a daemon of the DVM" "$(echo "$victim" | grep -c '^[0-9][0-9]*$')" 1
[ -n "$victim" ] && kill -9 $victim
wait_for 20 n3_down
expect_eq "the DVM's log says n3 is down" "$(grep -c 'node n3 (daemon 3) is down' "$WORK/dvm.log")" 1
on_n1 "$HERD_BIN/herdrun/herdrun" --dvm-uri "$WORK/dvm.uri" -n 3 --map-by node hostname
expect_rc "a job runs on the three hosts left" 0
expect_eq "on n1, n2 and n4" "$(sort "$OUT" | tr '\n' ' ')" "n1 n2 n4 "

# n3 unreachable still (its sshd stopped): the launch exits before the daemon joins; said so.
# Then n3's sshd is started again as up.sh starts it.
kill "$(cat "$HOSTS/sshd_n3.pid")"
rm -f "$HOSTS/sshd_n3.pid"
on_n1 "$HERD_BIN/herd-dvm/herd-dvm" --add-host n3 --dvm-uri "$WORK/dvm.uri"
expect_fail "--add-host of a host ssh cannot reach fails"
expect_err "saying its launch exited before it joined, with what ssh said" \
    "node n3 \(daemon 3\) exited with status 255 before it joined(.|\n)*"
expect_err "with ssh's words" "ssh: connect to host .*Connection refused"
expect_eq "the DVM's log says so too" "$(grep -c 'node n3 (daemon 3) exited with status 255' "$WORK/dvm.log")" 1
ip netns exec "${TESTHOSTS_NS}3" unshare --uts sh -c \
    "hostname n3; exec /usr/sbin/sshd -f $HOSTS/sshd_n3.conf -E $HOSTS/sshd_n3.log"
sshd_back() { [ -s "$HOSTS/sshd_n3.pid" ]; }
wait_for 10 sshd_back
KEEP_PIDS=$(cat "$HOSTS"/sshd_n*.pid) # the test hosts' own, not this test's leftovers

on_n1 "$HERD_BIN/herd-dvm/herd-dvm" --add-host n3 --dvm-uri "$WORK/dvm.uri"
expect_rc "--add-host n3" 0
expect_out "says n3 rejoined" "node n3 \(daemon 3\) rejoined the DVM \(attached below daemon 1\)"
expect_eq "the DVM's log says n3 is up again, once" \
    "$(grep -c 'node n3 (daemon 3) is up again' "$WORK/dvm.log")" 1
new=$(daemon_of_n3)
expect_eq "a new daemon runs on n3" "$([ -n "$new" ] && [ "$new" != "$victim" ] && echo yes)" yes
on_n1 "$HERD_BIN/herdrun/herdrun" --dvm-uri "$WORK/dvm.uri" -n 4 --map-by node hostname
expect_rc "a job on all four hosts" 0
expect_eq "runs on n1, n2, n3 and n4" "$(sort "$OUT" | tr '\n' ' ')" "n1 n2 n3 n4 "
on_n1 "$HERD_BIN/herdrun/herdrun" --dvm-uri "$WORK/dvm.uri" --host n3 -n 1 sh -c 'echo "$HERD_RANK $(hostname)"'
expect_rc "a job on n3 alone" 0
expect_eq "with its output" "$(sort "$OUT" | tr '\n' ' ')" "0 n3 "

on_n1 "$HERD_BIN/herd-dvm/herd-dvm" --shutdown --dvm-uri "$WORK/dvm.uri"
expect_rc "--shutdown stops it" 0
wait_for 10 no_herdd
expect_eq "no daemon left on any host" "$(herdd_pids)" ""
finish
