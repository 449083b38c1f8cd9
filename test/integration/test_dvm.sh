#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# herd-dvm on simulated nodes: up and down, displays, a persistent DVM and its shutdown, two
# DVMs side by side, and the failures a user must be told about (a daemon that cannot start,
# one that does not report in time, one killed with -9) - with nothing left behind.
. "$(dirname "$0")/lib.sh"
SIM="--mca ras_simulator_num_nodes"

herd_dvm $SIM 64 --exit-when-ready
expect_rc "a 64-node simulated DVM comes up and goes down" 0
expect_out "the ready line counts nodes and slots" '^DVM ready: 64 nodes, [0-9]+ slots, [0-9.]+ s$'
[ -z "$(herdd_pids)" ] && ok "no daemon left after --exit-when-ready" || fail "daemons left: $(herdd_pids)"

herd_dvm $SIM 6 --mca ras_simulator_topology "pack:2 core:4 pu:2;pack:1 core:2 pu:1" \
    --display-allocation --display-topology --exit-when-ready
expect_rc "a heterogeneous DVM with displays" 0
expect_out "the allocation lists simulated nodes" "sim0006"
expect_out "slots come from the topology (3 x 8 + 3 x 2 cores)" "^DVM ready: 6 nodes, 30 slots"
expect_out "each distinct topology is shown once" "signature [0-9a-f]+: 2 packages, 8 cores, 16 hwthreads.*3 nodes"
expect_out "the second topology too" "signature [0-9a-f]+: 1 package, 2 cores, 2 hwthreads.*3 nodes"
[ "$(grep -c '^  signature' "$OUT")" -eq 2 ] && ok "exactly two topologies (XML sent twice, not six times)" ||
    fail "expected 2 topology lines"

# A persistent DVM: --daemonize, --report-uri, --shutdown.
uri=$WORK/dvm.uri
herd_dvm $SIM 8 --daemonize --report-uri "$uri"
expect_rc "--daemonize returns once the DVM is ready" 0
expect_out "ready before going to the background" "^DVM ready: 8 nodes"
[ -f "$uri" ] && ok "the contact file is written" || fail "no contact file"
[ "$(stat -c %a "$uri" 2>/dev/null)" = 600 ] && ok "the contact file is private (0600)" || fail "contact file mode"
dvm_pid=$(sed -n 's/^pid //p' "$uri")
[ "$(herdd_pids | wc -l)" -eq 8 ] && ok "8 daemons serve the DVM" || fail "expected 8 daemons, found $(herdd_pids | wc -l)"
# Strangers at the root's port: garbage, and a well-formed but unauthenticated hello. The DVM
# must drop them and go on serving.
root_uri=$(sed -n 's|^uri tcp://||p' "$uri")
root_host=${root_uri%:*}
root_port=${root_uri##*:}
if command -v bash >/dev/null; then
    bash -c "exec 3<>/dev/tcp/$root_host/$root_port && printf 'GET / HTTP/1.0\r\n\r\n' >&3 && sleep 0.2" 2>/dev/null
    bash -c "exec 3<>/dev/tcp/$root_host/$root_port && head -c 4096 /dev/urandom >&3 && sleep 0.2" 2>/dev/null
fi
kill -0 "$dvm_pid" 2>/dev/null && ok "the DVM survives garbage on its port" || fail "the DVM died on garbage"
[ "$(herdd_pids | wc -l)" -eq 8 ] && ok "and keeps its 8 daemons" || fail "daemons lost after garbage"
# a second DVM beside it must not collide
uri2=$WORK/dvm2.uri
herd_dvm $SIM 4 --daemonize --report-uri "$uri2"
expect_rc "a second DVM on the same host comes up" 0
[ "$(sed -n 's/^id //p' "$uri")" != "$(sed -n 's/^id //p' "$uri2")" ] && ok "the two DVMs have different ids" || fail "same DVM id"
herd_dvm --shutdown --dvm-uri "$uri2"
expect_rc "--shutdown stops the second DVM" 0
herd_dvm --shutdown --dvm-uri "$uri"
expect_rc "--shutdown stops the first DVM" 0
wait_gone "$dvm_pid" 10 && ok "the DVM process is gone" || fail "DVM $dvm_pid still running"
[ -z "$(herdd_pids)" ] && ok "no daemon left after --shutdown" || fail "daemons left: $(herdd_pids)"
# What node daemons print once the DVM is ready reaches the DVM's stderr, each line with its
# node (it stayed in a pipe nobody read: never seen, and a daemon that printed 64 KiB blocked).
HERD_IT_TAG=$HERD_IT_TAG "$HERD_BIN/herd-dvm/herd-dvm" $SIM 2 --mca overlay_base_verbose 10 \
    --daemonize --report-uri "$uri" >"$WORK/relay.out" 2>"$WORK/relay.log"
expect_eq "a DVM whose daemons are verbose comes up" "$?" 0
herdrun --dvm-uri "$uri" -n 2 true
expect_rc "a job on it" 0
herd_dvm --shutdown --dvm-uri "$uri"
expect_rc "and its shutdown" 0
wait_for 10 grep -q '^\[herdd sim0002\] .*overlay' "$WORK/relay.log"
for node in sim0001 sim0002; do
    expect_eq "the DVM's log has what the daemon on $node printed, named" \
        "$(grep -c "^\[herdd $node\] \[[^]]*\] overlay: " "$WORK/relay.log" | sed 's/^[1-9][0-9]*$/some/')" some
done
wait_for 10 no_test_pids
herd_dvm --shutdown --dvm-uri "$uri"
expect_fail "--shutdown of a DVM that is gone fails"
expect_err "and says the contact file cannot be read" "cannot read the DVM contact file"

# A contact file that cannot be written: said before any daemon starts.
herd_dvm $SIM 3 --daemonize --report-uri "$WORK/no-such-folder/dvm.uri"
expect_rc "--report-uri in a missing folder: exit 1" 1
expect_err "--report-uri in a missing folder: says where and why" \
    "--report-uri .*/no-such-folder/dvm.uri: the contact file could not be written there \\(its folder does not exist\\), so no"
expect_eq "--report-uri in a missing folder: no DVM was started" "$(grep -c 'DVM ready' "$OUT")" 0
[ -z "$(herdd_pids)" ] && ok "--report-uri in a missing folder: no daemon" || fail "daemons left: $(herdd_pids)"

# A misspelt variable of a framework herd-dvm uses: said with the closest name; the DVM comes up.
HERD_MCA_ras_simulator_slot=2 herd_dvm $SIM 2 --mca plm_ssh_agnet ssh --mca btl_tcp_anything 1 \
    --exit-when-ready
expect_rc "a misspelt --mca name: the DVM still comes up" 0
expect_err "a misspelt --mca name: said, with the closest name" \
    "plm_ssh_agnet is not a variable.*|Did you mean plm_ssh_agent\\?"
expect_eq "a misspelt --mca name: the closest name is suggested" \
    "$(grep -c 'Did you mean plm_ssh_agent?' "$ERR")" 1
expect_err "a misspelt HERD_MCA_ name: said too" "ras_simulator_slot is not a variable"
expect_eq "a btl_ name is left to the processes" "$(grep -c btl_tcp_anything "$ERR")" 0
[ -z "$(herdd_pids)" ] && ok "a misspelt --mca name: no daemon left" || fail "daemons left: $(herdd_pids)"

# A daemon binary that does not exist on the node.
HERD_DVM_HERDD=/nonexistent/herdd herd_dvm $SIM 3 --exit-when-ready
expect_fail "a missing daemon binary fails"
expect_err "the message names the node" "node sim000[1-3]"
expect_err "the message gives the reason" "cannot execute /nonexistent/herdd"
[ -z "$(herdd_pids)" ] && ok "nothing left after a failed launch" || fail "daemons left: $(herdd_pids)"

# Daemons that never report: the timeout names who is missing.
silent_name="herd-test-silent-$$"
printf '#!/bin/bash\nexec -a %s sleep 60\n' "$silent_name" > "$WORK/silent-herdd"; chmod +x "$WORK/silent-herdd"
HERD_DVM_HERDD=$WORK/silent-herdd herd_dvm $SIM 3 --timeout 1 --exit-when-ready
expect_fail "daemons that do not report in time fail the start"
expect_err "the timeout is named" "within 1 seconds"
expect_err "the missing nodes are listed" "3 never connected \(sim0001,sim0002,sim0003\)"
if ps -eo args= | grep -v grep | grep -qF "$silent_name"; then
    fail "silent daemons left behind"
else
    ok "the silent daemons were stopped"
fi

# One daemon of four never connects: only it is named.
cat > "$WORK/one-silent-herdd" <<EOS
#!/bin/bash
[ "\$HERD_DVM_VPID" = 2 ] && exec -a $silent_name sleep 60
exec $HERD_BIN/herdd/herdd "\$@"
EOS
chmod +x "$WORK/one-silent-herdd"
HERD_DVM_HERDD=$WORK/one-silent-herdd herd_dvm $SIM 4 --timeout 2 --exit-when-ready
expect_fail "one daemon that never connects fails the start"
expect_err "only that node is named" "1 never connected \(sim0002\)"
[ -z "$(herdd_pids)" ] && ok "the other daemons were stopped" || fail "daemons left: $(herdd_pids)"
if ps -eo args= | grep -v grep | grep -qF "$silent_name"; then fail "the silent daemon is left"; else ok "the silent daemon was stopped"; fi

# A daemon killed with -9 while a DVM that stops on a loss serves (dvm_on_node_loss stop;
# herd-dvm's default, continue, is test_dvm_faults.sh's): reported with its node, DVM shuts down.
herd_dvm $SIM 5 --mca dvm_on_node_loss stop --daemonize --report-uri "$uri"
dvm_pid=$(sed -n 's/^pid //p' "$uri")
victim=$(dvm_daemon_pid "$uri" 1) # a node daemon (the first child may be the tool helper)
if [ -n "$victim" ]; then
    kill -9 "$victim"
    wait_gone "$dvm_pid" 15 && ok "the DVM shuts down after losing a daemon" || fail "DVM still running"
    expect_err "the lost daemon's node is named" "daemon on node sim000[1-5]"
else
    fail "no daemon found under DVM $dvm_pid"
fi
[ -z "$(herdd_pids)" ] && ok "no daemon left after a loss" || fail "daemons left: $(herdd_pids)"
rm -f "$uri"

# Bad input.
herd_dvm --hostfile /nonexistent/hosts --exit-when-ready
expect_fail "a missing hostfile fails"
expect_err "the error names the hostfile" "/nonexistent/hosts"
printf '# two good lines, then a bad one\nlocalhost slots=2\n\nlocalhost slots=abc\n' > "$WORK/hosts"
herd_dvm --hostfile "$WORK/hosts" --exit-when-ready
expect_fail "a malformed hostfile fails"
expect_err "the error gives file:line" "$WORK/hosts:4"
expect_err "and the bad token" "abc"
[ -z "$(herdd_pids)" ] && ok "nothing started for a malformed hostfile" || fail "daemons left: $(herdd_pids)"
herd_dvm --shutdown
expect_fail "--shutdown without --dvm-uri fails"
expect_err "and says what is needed" "needs --dvm-uri"

finish
