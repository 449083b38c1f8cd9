#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# herd-dvm across three test hosts (network namespaces with sshd, ../shared/testhosts): a real
# tree spawn over ssh (the launcher's own node without ssh), and an unreachable host reported
# with ssh's own words. Needs root; the
# hosts are made here and torn down on every exit.
. "$(dirname "$0")/lib.sh"

need_testhosts up.sh
testhosts_up 3

# on_n1 CMD...: run a command on test host n1 (output to $OUT/$ERR, status in $rc)
on_n1() {
    on_host 1 "$@" >"$OUT" 2>"$ERR"
    rc=$?
}
DVM=$HERD_BIN/herd-dvm/herd-dvm
SSH_ARGS="-F $HOSTS/ssh_config"

on_n1 "$DVM" -H n1,n2,n3 --mca plm_ssh_args "$SSH_ARGS" --mca dvm_radix 1 \
    --display-topology --exit-when-ready --timeout 60
expect_rc "a DVM over ssh on three hosts comes up and goes down" 0
expect_out "the ready line" "^DVM ready: 3 nodes, 3 slots"
expect_out "each host reported its fabric" "n3: .*tcp"
[ -z "$(herdd_pids)" ] && ok "no daemon left on any host" || fail "daemons left: $(herdd_pids)"

# A persistent DVM with radix 1 is a chain: n3's daemon must have been started by n2's.
on_n1 "$DVM" -H n1,n2,n3 --mca plm_ssh_args "$SSH_ARGS" --mca dvm_radix 1 --daemonize \
    --report-uri "$WORK/dvm.uri" --timeout 60
expect_rc "a persistent DVM over ssh" 0
spawned_by_daemon=0
for daemon in $(herdd_pids); do
    spawned_by_daemon=$((spawned_by_daemon + $(ps -o comm= --ppid "$daemon" | grep -cx ssh)))
done
[ "$spawned_by_daemon" -ge 2 ] && ok "daemons start their children (tree spawn: $spawned_by_daemon ssh clients under herdd)" ||
    fail "tree spawn: only $spawned_by_daemon ssh clients were started by daemons"
# herd-dvm runs on n1: n1's own daemon is started directly, not over ssh to itself
root=$(sed -n 's/^pid //p' "$WORK/dvm.uri")
under_root=$(ps -o comm= --ppid "$root" | sort | tr '\n' ' ')
case "$under_root" in
*herdd*) case "$under_root" in *ssh*) fail "n1's daemon started over ssh (under the root: $under_root)" ;;
    *) ok "n1's daemon is started without ssh (under the root: $under_root)" ;; esac ;;
*) fail "no daemon under the root on n1 (under the root: $under_root)" ;;
esac
on_n1 "$DVM" --shutdown --dvm-uri "$WORK/dvm.uri"
expect_rc "--shutdown stops it" 0
wait_for 10 no_herdd
[ -z "$(herdd_pids)" ] && ok "no daemon left after --shutdown" || fail "daemons left: $(herdd_pids)"

# A host nobody can reach: named, with ssh's reason, and nothing left.
on_n1 "$DVM" -H n1,n2,nosuchhost --mca plm_ssh_args "$SSH_ARGS" --exit-when-ready --timeout 30
expect_fail "an unreachable host fails the start"
expect_err "the host is named" "node nosuchhost"
expect_err "with ssh's own message" "(Could not resolve|Name or service not known|nosuchhost)"
wait_for 10 no_herdd
[ -z "$(herdd_pids)" ] && ok "no daemon left after the failure" || fail "daemons left: $(herdd_pids)"

finish
