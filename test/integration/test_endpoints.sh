#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# RM-assigned endpoints ("instant on") as a user sees them: herdrun --display-map -v says which
# path each fabric takes and shows every process's endpoint; a libherd program (herd_endpoints)
# reads its own and its peers' endpoints from the job database, every rank reads the same ones,
# and on this host rank 0 connects to rank 1 at rank 1's assigned tcp port. A port range too
# small for the job, or a multi-node job over the loopback only, falls back to the modex with a
# message naming the variable. After every case nothing may be left running or in /dev/shm.
. "$(dirname "$0")/lib.sh"
SIM="--mca ras simulator --mca ras_simulator_num_nodes"
HERDRUN_LIMIT=90
PROG=$HERD_BUILDDIR/test/programs/herd_endpoints


# A job on this host alone (herdrun forks its session daemon, no DVM) asks for no fabric
# inventory unless told to: its processes share memory.
herdrun --display-map -v --do-not-launch -n 2 /bin/true
expect_out "this host, by default: no fabric inventory, every transport uses the modex" \
    '^endpoints: none assigned, every transport uses the modex'
LOCAL="--mca dvm_fabric_inventory all"

# This host, 2 processes: the loopback (a one-node job), ports from fabric_tcp_port_base, and
# the addresses work: rank 1 listens at its own, rank 0 reaches it there.
run_ok "2 procs on this host" $LOCAL -n 2 "$PROG" --connect
expect_out "2 procs on this host: rank 0's own endpoint and rank 1's" \
    '^herd_endpoints rank 0 own tcp 127\.0\.0\.1:16384 peer 1 127\.0\.0\.1:16385$'
expect_out "2 procs on this host: rank 1's own endpoint and rank 0's" \
    '^herd_endpoints rank 1 own tcp 127\.0\.0\.1:16385 peer 0 127\.0\.0\.1:16384$'
expect_eq "2 procs on this host: every rank reads every endpoint as its owner does" \
    "$(count_out '^herd_endpoints rank [01] agrees on 2 endpoints$')" 2
expect_out "2 procs on this host: rank 0 connects to rank 1 at its assigned port" \
    '^herd_endpoints rank 0 connected to rank 1 at 127\.0\.0\.1:16385$'

# The base port is the site's: another one moves every endpoint.
run_ok "fabric_tcp_port_base 23000" $LOCAL --mca fabric_tcp_port_base 23000 -n 2 "$PROG" --connect
expect_out "fabric_tcp_port_base 23000: rank 0 connects to rank 1 at 23001" \
    '^herd_endpoints rank 0 connected to rank 1 at 127\.0\.0\.1:23001$'

# --display-map -v: the path per fabric, and each process's endpoint on its line
herdrun --display-map -v $LOCAL --do-not-launch -n 2 /bin/true
expect_rc "--display-map -v: exit 0" 0
expect_out "--display-map -v: tcp is RM-assigned, with its ports" \
    '^  tcp +RM-assigned, ports 16384-20479 \(session slot 0 of 1\)$'
expect_out "--display-map -v: rank 1's line ends with its endpoint" \
    '^    rank 1 .*  tcp 127\.0\.0\.1:16385$'
herdrun --display-map --do-not-launch -n 2 /bin/true
expect_no_out "--display-map without -v: no endpoints" 'endpoints|127\.0\.0\.1'

# A range too small for the job: the modex, said in the map and to the program.
herdrun --display-map -v $LOCAL --mca fabric_tcp_port_range 1 -n 2 "$PROG"
expect_rc "port range too small: the job still runs" 0
expect_out "port range too small: the map says modex and which variable to raise" \
    '^  tcp +modex: node .* runs 2 processes of the job, .*raise fabric_tcp_port_range to at least 2'
expect_eq "port range too small: every rank is told to use the modex" \
    "$(count_out '^herd_endpoints rank [01]: no endpoint on tcp, using the modex: .*fabric_tcp_port_range')" 2
check_clean "port range too small"
# No fabric inventory at all: nothing assigned, said once.
herdrun --display-map -v --mca dvm_fabric_inventory none --do-not-launch -n 2 /bin/true
expect_out "no fabric inventory: the map says every transport uses the modex" \
    '^endpoints: none assigned, every transport uses the modex'

# Simulated nodes (fabric inventories asked for: simulated nodes report this host's). A job on
# several nodes cannot use the loopback: with only lo it falls back.
run_ok "3 simulated nodes over lo" $SIM 3 --mca dvm_fabric_inventory all \
    --mca fabric_tcp_if_include lo -n 3 --map-by node --display-map -v "$PROG"
expect_out "3 simulated nodes over lo: the map says why tcp uses the modex" \
    '^  tcp +modex: node sim0001 has no address for it that another node can reach \(loopback only\)$'
expect_eq "3 simulated nodes over lo: every rank is told so" \
    "$(count_out '^herd_endpoints rank [0-2]: no endpoint on tcp, using the modex: .*loopback only')" 3
# With a routable address, each node's processes get ports of the job's session slot (the
# only job of herdrun's own DVM: slot 0 of 8, the first share of the range), and every rank
# agrees across the daemons.
if "$HERD_BIN/herd-info/herd-info" --fabric 2>/dev/null | grep -E '^ +endpoint_addr: ' |
    grep -vqE 'endpoint_addr: (127\.|::1$)'; then
    run_ok "5 procs on 3 simulated nodes" $SIM 3 --mca dvm_fabric_inventory all -n 5 \
        --map-by node --display-map -v "$PROG"
    expect_out "5 procs on 3 simulated nodes: tcp is RM-assigned in session slot 0" \
        '^  tcp +RM-assigned, ports 16384-16895 \(session slot 0 of 8\)$'
    expect_out "5 procs on 3 simulated nodes: rank 4 (node rank 1 of its node) has port 16385" \
        '^    rank 4 .*  tcp [^ ]+:16385$'
    expect_eq "5 procs on 3 simulated nodes: every rank agrees across the daemons" \
        "$(count_out '^herd_endpoints rank [0-4] agrees on 5 endpoints$')" 5
else
    echo "SKIP: this host has no address but the loopback: no multi-node assignment to test"
fi

finish
