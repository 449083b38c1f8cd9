#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Simulated nodes hosted many to a process (ras_simulator_nodes_per_process): 512 node daemons
# in 4 herdd processes come up, run a job with a process on every node, display its map, shut
# down with nothing left; bad values are refused with a clear message.
. "$(dirname "$0")/lib.sh"
SIM="--mca ras_simulator_num_nodes 512 --mca ras_simulator_nodes_per_process 128"
# two kinds of node, in turn: sim0001 has 2 cores, sim0002 4, ...
TOPO="pack:1 core:2 pu:1;pack:1 core:4 pu:1"

herd_info --parsable --param ras simulator
expect_out "herd-info shows ras_simulator_nodes_per_process and its default" \
    '^mca:ras:simulator:param:ras_simulator_nodes_per_process:value:1$'

herd_dvm $SIM --mca ras_simulator_topology "$TOPO" --display-allocation --exit-when-ready
expect_rc "512 simulated nodes in 4 processes come up and go down" 0
expect_out "the ready line counts every node" '^DVM ready: 512 nodes, 1536 slots, [0-9.]+ s$'
expect_out "the allocation lists the last node" 'sim0512'
expect_out "the inventories travel once per kind" '^DVM inventory: 512 inventories sent as 2 kinds, [1-9][0-9]* bytes to every daemon$'
expect_out "the start-up phases are timed" '^DVM phases: daemons started [0-9.]+ s, inventories gathered [0-9.]+ s, ready [0-9.]+ s$'
expect_out "the root's traffic per phase is counted" '^DVM root traffic: to the inventory [1-9][0-9]* messages, [1-9][0-9]* bytes in, [1-9][0-9]* bytes out; '
[ -z "$(herdd_pids)" ] && ok "no daemon left after --exit-when-ready" || fail "daemons left: $(herdd_pids)"

uri=$WORK/dvm.uri
herd_dvm $SIM --mca ras_simulator_topology "$TOPO" --daemonize --report-uri "$uri"
expect_rc "a persistent DVM of 512 hosted nodes" 0
dvm_pid=$(sed -n 's/^pid //p' "$uri")
[ "$(herdd_pids | wc -l)" -eq 4 ] && ok "4 herdd processes host the 512 nodes" ||
    fail "expected 4 herdd processes, found $(herdd_pids | wc -l)"

# one process per node: every hosted node daemon starts its session daemon
herdrun --dvm-uri "$uri" -n 512 --map-by node sh -c 'echo "rank $HERD_RANK of $HERD_SIZE"'
expect_rc "a job with a process on each of the 512 nodes" 0
[ "$(grep -c '^rank [0-9]* of 512$' "$OUT")" -eq 512 ] && ok "every rank printed its line" ||
    fail "expected 512 rank lines, got $(grep -c '^rank' "$OUT")"
[ "$(sort -u "$OUT" | wc -l)" -eq 512 ] && ok "each rank once" || fail "ranks repeated or missing"

herdrun --dvm-uri "$uri" -n 4 --map-by node --display-map sh -c 'echo "rank $HERD_RANK"'
expect_rc "a small job on the hosted nodes" 0
expect_out "its map names the simulated nodes" '^node sim0003: 2 slots, 1 processes'
expect_out "each with its own kind's slots" '^node sim0004: 4 slots, 1 processes'
expect_out "and its ranks ran" '^rank 3$'

herdrun --dvm-uri "$uri" -n 1024 --do-not-launch -v /bin/true
expect_rc "a 1024-process job is mapped without launching" 0
expect_out "the launch message names every node" 'launch message: [0-9]+ bytes .*512 candidate nodes'

herd_dvm --shutdown --dvm-uri "$uri"
expect_rc "--shutdown stops the DVM" 0
wait_gone "$dvm_pid" 10 && ok "the DVM process is gone" || fail "DVM $dvm_pid still running"
wait_for 10 sh -c "[ -z \"\$(ps -o pid= --ppid $dvm_pid 2>/dev/null)\" ]"
[ -z "$(herdd_pids)" ] && ok "no hosting process left after --shutdown" || fail "daemons left: $(herdd_pids)"
check_clean "the persistent DVM and its jobs"

# a hosting process killed with -9: its nodes are lost, the DVM herdrun starts for one job says
# which node and stops
herd_dvm $SIM --mca ras_simulator_topology "$TOPO" --daemonize --report-uri "$WORK/dvm2.uri"
expect_rc "another persistent DVM" 0
dvm_pid=$(sed -n 's/^pid //p' "$WORK/dvm2.uri")
victim=$(herdd_pids | tail -n 1)
kill -9 "$victim"
wait_gone "$victim" 5 && ok "a hosting process is killed" || fail "process $victim survived -9"
herdrun --dvm-uri "$WORK/dvm2.uri" -n 4 --map-by node sh -c 'echo "rank $HERD_RANK"'
expect_rc "nodes of the other processes still run jobs" 0
herd_dvm --shutdown --dvm-uri "$WORK/dvm2.uri"
expect_rc "and the DVM shuts down" 0
wait_gone "$dvm_pid" 10 && ok "the second DVM is gone" || fail "DVM $dvm_pid still running"

# bad values
herd_dvm --mca ras_simulator_num_nodes 8 --mca ras_simulator_nodes_per_process 0 --exit-when-ready
expect_fail "ras_simulator_nodes_per_process 0 is refused"
expect_err "and the message says what is allowed" 'ras_simulator_nodes_per_process is 0, but a daemon process hosts from 1 to 4096'
herd_dvm --mca ras_simulator_num_nodes 8 --mca ras_simulator_nodes_per_process 5000 --exit-when-ready
expect_fail "ras_simulator_nodes_per_process 5000 is refused"
expect_err "with the same message" 'ras_simulator_nodes_per_process is 5000'
[ -z "$(herdd_pids)" ] && ok "no daemon started for a bad value" || fail "daemons left: $(herdd_pids)"

finish
