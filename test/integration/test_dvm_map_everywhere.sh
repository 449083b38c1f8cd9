#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# herdrun --do-not-launch --mca herdrun_map_everywhere 1: every node daemon of herdrun's DVM
# maps the job as its session daemon would, without starting anything, and reports its share;
# herdrun checks every report against its own map. 512 simulated nodes of two kinds hosted in 4
# processes map a job of 65,536 processes; nodes without processes report too; node daemons of
# their own (one process per node) do it the same way; modes where it cannot work are refused;
# nothing is left behind.
. "$(dirname "$0")/lib.sh"
SIM="--mca ras_simulator_num_nodes 512 --mca ras_simulator_nodes_per_process 128"
# two kinds of node, in turn: sim0001 has 2 cores, sim0002 4, ...
TOPO="pack:1 core:2 pu:1;pack:1 core:4 pu:1"
MAP="--do-not-launch --mca herdrun_map_everywhere 1"
DONE='^herdrun: job [^ ]+ mapped on every node: '

herd_info --parsable --param herdrun all
expect_out "herd-info shows herdrun_map_everywhere, off by default" \
    '^mca:herdrun:base:param:herdrun_map_everywhere:value:false$'

herdrun $SIM --mca ras_simulator_topology "$TOPO" -n 65536 --oversubscribe $MAP /bin/true
expect_rc "a job of 65,536 processes is mapped on 512 hosted nodes" 0
expect_out "every node reported and the counts add up to the job" \
    "${DONE}512 of 512 nodes reported, 65536 processes on 512 nodes, each rank exactly once"
expect_out "the map times per node are summed up" \
    '^herdrun: map CPU per node with processes: the mapper [0-9.]+/[0-9.]+/[0-9.]+ ms \(min/median/max\)'
expect_out "and when the last report came" '^herdrun: last report [0-9.]+ s after the launch broadcast$'
expect_no_out "nothing ran" '/bin/true'
[ -s "$ERR" ] && fail "nothing on stderr (got: $(head -3 "$ERR"))" || ok "nothing on stderr"
[ -z "$(herdd_pids)" ] && ok "no daemon left" || fail "daemons left: $(herdd_pids)"
check_clean "the 65,536-process map"

# one process per node, on 100 of the 512: the others report that they have none
herdrun $SIM --mca ras_simulator_topology "$TOPO" -n 100 --map-by node --bind-to core $MAP \
    /bin/true
expect_rc "a job on 100 of 512 nodes" 0
expect_out "all 512 report, 100 with a process" "${DONE}512 of 512 nodes reported, 100 processes on 100 nodes"

# node daemons of their own: each has every inventory, unpacked as a session daemon would
herdrun --mca ras_simulator_num_nodes 8 --mca ras_simulator_topology "pack:2 core:4 pu:2" \
    -n 200 --oversubscribe --map-by core --bind-to hwthread $MAP /bin/true
expect_rc "8 node daemons in their own processes map a bound job" 0
expect_out "each as herdrun does" "${DONE}8 of 8 nodes reported, 200 processes on 8 nodes"

# where it cannot work: said at once, nothing starts
herdrun $SIM -n 4 --mca herdrun_map_everywhere 1 /bin/true
expect_rc "herdrun_map_everywhere without --do-not-launch is refused" 1
expect_err "saying what to add" 'herdrun_map_everywhere maps the job on every node without starting it: add'
expect_no_out "and nothing ran" '.'
herdrun -n 2 $MAP /bin/true
expect_rc "a job on this host alone is refused" 1
expect_err "saying why and what to set" 'this host alone, which herdrun runs without a node daemon \(set --mca herdrun_direct 0'
herdrun -n 2 --mca herdrun_direct 0 $MAP /bin/true
expect_rc "with herdrun_direct 0 this host's node daemon maps it" 0
expect_out "and reports" "${DONE}1 of 1 nodes reported, 2 processes on 1 nodes"
uri=$WORK/dvm.uri
herd_dvm --mca ras_simulator_num_nodes 4 --daemonize --report-uri "$uri"
expect_rc "a persistent DVM" 0
dvm_pid=$(sed -n 's/^pid //p' "$uri")
herdrun --dvm-uri "$uri" -n 4 $MAP /bin/true
expect_rc "herdrun_map_everywhere on a running DVM is refused" 1
expect_err "saying why" 'a running DVM \(--dvm-uri\) maps only what it launches'
herdrun --dvm-uri "$uri" -n 4 --do-not-launch -v /bin/true
expect_rc "the DVM still plans jobs" 0
herd_dvm --shutdown --dvm-uri "$uri"
expect_rc "and shuts down" 0
wait_gone "$dvm_pid" 10 && ok "the DVM process is gone" || fail "DVM $dvm_pid still running"
herdrun $SIM --mca herdrun_map_everywhere maybe $MAP -n 4 /bin/true
expect_fail "a bad value of herdrun_map_everywhere is refused"
expect_err "naming the variable" 'herdrun_map_everywhere'
check_clean "the refusals"

finish
