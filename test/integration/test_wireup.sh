#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Wireup as a user sees it: unmodified Open MPI and MPICH programs (a hello with MPI_Allreduce,
# a ring of MPI_Send/MPI_Recv, MPI_Comm_spawn of 2 children, MPI_Abort from one rank, a rank
# that exits without MPI_Finalize) and a libherd program (put, fence, get) under herdrun, on this
# host and on simulated nodes (one session daemon each, so fences and direct modex cross
# daemons). After every case nothing may be left running or in /dev/shm.
. "$(dirname "$0")/lib.sh"
SIM="--mca ras simulator --mca ras_simulator_num_nodes"
HERDRUN_LIMIT=90
BIN=$WORK/bin
mkdir -p "$BIN"

mpi_flavours
for f in $FLAVOURS; do
    for p in hello ring spawn abort nofinalize; do
        if ! "mpicc.$f" -o "$BIN/${f}_$p" "$HERD_SRCDIR/test/programs/mpi_$p.c" 2>"$ERR"; then
            fail "mpi_$p.c builds with mpicc.$f"
        fi
    done
done

# Simulated nodes all run on this host: Open MPI's shared-memory transport names its segments
# after the real host name, so ranks of different simulated nodes would share them. Between
# simulated nodes Open MPI programs use TCP (real nodes need nothing of the kind).
OMPI_SIM="-x OMPI_MCA_btl=self,tcp"
HERD_HELLO=$HERD_BUILDDIR/test/programs/herd_hello


# count_out PATTERN: how many lines of stdout match.

for f in $FLAVOURS; do
    # hello: every rank, the right sum, on one node and across simulated nodes
    run_ok "$f hello -n 8" -n 8 --oversubscribe "$BIN/${f}_hello"
    expect_eq "$f hello -n 8: 8 ranks greet" "$(count_out '^hello from rank [0-7] of 8 ')" 8
    expect_no_out "$f hello -n 8: every sum right" "WRONG"
    sim_flags=""
    [ "$f" = openmpi ] && sim_flags=$OMPI_SIM
    run_ok "$f hello on 3 simulated nodes" $SIM 3 --mca ras_simulator_slots 3 -n 8 \
        --map-by node $sim_flags "$BIN/${f}_hello"
    expect_eq "$f hello on 3 simulated nodes: 8 ranks greet" \
        "$(count_out '^hello from rank [0-7] of 8 ')" 8
    expect_no_out "$f hello on 3 simulated nodes: every sum right" "WRONG"

    # ring: point-to-point among every pair of neighbours
    run_ok "$f ring -n 8" -n 8 --oversubscribe "$BIN/${f}_ring"
    expect_out "$f ring -n 8: the token went round" "^ring ok: token 80 "
    run_ok "$f ring on 4 simulated nodes" $SIM 4 --mca ras_simulator_slots 2 -n 8 $sim_flags \
        "$BIN/${f}_ring"
    expect_out "$f ring on 4 simulated nodes: the token went round" "^ring ok: token 80 "

    # MPI_Abort from rank 1: the job ends with its code and its words
    herdrun_bg -n 4 --oversubscribe "$BIN/${f}_abort"
    herdrun_wait "$HERDRUN_LIMIT"
    expect_rc "$f MPI_Abort(7): herdrun exits 7" 7
    expect_err "$f MPI_Abort(7): herdrun names the rank and its status" \
        "rank 1 on node .* called abort with status 7"
    check_clean "$f MPI_Abort(7)"

    # a rank that exits 0 without MPI_Finalize is a failure, not a success
    herdrun_bg -n 3 --oversubscribe "$BIN/${f}_nofinalize"
    herdrun_wait "$HERDRUN_LIMIT"
    expect_fail "$f exit without MPI_Finalize: herdrun fails"
    expect_err "$f exit without MPI_Finalize: herdrun names the rank" \
        "rank 2 on node .* without finalizing"
    check_clean "$f exit without MPI_Finalize"
done

# MPI_Comm_spawn: the children start in the running job, without new daemons
if echo "$FLAVOURS" | grep -q openmpi; then
    run_ok "openmpi spawn" -n 2 --oversubscribe "$BIN/openmpi_spawn"
    expect_eq "openmpi spawn: both parents see their children" "$(count_out '^parent ok: ')" 2
    expect_eq "openmpi spawn: both children see their parents" "$(count_out '^child ok: ')" 2
    run_ok "openmpi spawn on 2 simulated nodes" $SIM 2 --mca ras_simulator_slots 2 -n 2 \
        --map-by node $OMPI_SIM "$BIN/openmpi_spawn"
    expect_eq "openmpi spawn on 2 simulated nodes: parents" "$(count_out '^parent ok: ')" 2
    expect_eq "openmpi spawn on 2 simulated nodes: children" "$(count_out '^child ok: ')" 2
fi

# MPICH's MPI_Comm_spawn goes through PMI-1's spawn. Debian 12's MPICH 4.0.2 (ch4:ucx) cannot
# spawn even under its own Hydra ("Error in spawn call"): where Hydra can, herdrun must too;
# where it cannot, herdrun must end the job with the processes' abort and leave nothing.
if echo "$FLAVOURS" | grep -q mpich; then
    hydra=$(command -v mpiexec.hydra || true)
    if [ -n "$hydra" ] && timeout 60 "$hydra" -launcher fork -n 2 "$BIN/mpich_spawn" 2>/dev/null |
        grep -q '^child ok: '; then
        run_ok "mpich spawn" -n 2 --oversubscribe "$BIN/mpich_spawn"
        expect_eq "mpich spawn: both parents see their children" "$(count_out '^parent ok: ')" 2
        expect_eq "mpich spawn: both children see their parents" "$(count_out '^child ok: ')" 2
    else
        echo "NOTE: this MPICH cannot spawn under Hydra either; herdrun must fail cleanly"
        herdrun_bg -n 2 --oversubscribe "$BIN/mpich_spawn"
        herdrun_wait "$HERDRUN_LIMIT"
        expect_fail "mpich spawn this MPICH cannot do: herdrun fails"
        expect_err "mpich spawn this MPICH cannot do: herdrun names the aborting rank" \
            "rank [01] on node .* called abort"
        check_clean "mpich spawn this MPICH cannot do"
    fi
fi

# libherd: put, fence with data, gets of every peer; a barrier and direct gets; fence_nb
run_ok "libherd -n 6" -n 6 --oversubscribe "$HERD_HELLO"
expect_eq "libherd -n 6: every rank checked every peer's keys" "$(count_out '^herd_hello rank [0-5] ok$')" 6
run_ok "libherd on 3 simulated nodes" $SIM 3 --mca ras_simulator_slots 3 -n 8 --map-by node \
    "$HERD_HELLO"
expect_eq "libherd on 3 simulated nodes: every rank checked every peer's keys" \
    "$(count_out '^herd_hello rank [0-7] ok$')" 8
expect_out "libherd on 3 simulated nodes: rank 7 sees its node and local rank" \
    "^herd_hello rank 7 of 8, local rank 2 of 3, node sim0002 \\(1 of 3\\)"
herdrun_bg --mca wireup_base_get_timeout 2 $SIM 2 --mca ras_simulator_slots 2 -n 4 "$HERD_HELLO" \
    missing
herdrun_wait "$HERDRUN_LIMIT"
expect_rc "libherd get of a key never put: the program sees the failure and ends well" 0
expect_out "libherd get of a key never put: the error names the peer and the key" \
    "never-put: not found: rank 1 never committed key 'never-put' within 2.0 s"
check_clean "libherd get of a key never put"
herdrun_bg -n 3 --oversubscribe "$HERD_HELLO" abort 5
herdrun_wait "$HERDRUN_LIMIT"
expect_rc "herd_abort(5): herdrun exits 5" 5
expect_err "herd_abort(5): herdrun shows the message" \
    "rank 1 on node .* called abort with status 5: herd_hello gives up on purpose"
check_clean "herd_abort(5)"
herdrun_bg -n 3 --oversubscribe "$HERD_HELLO" nofinalize
herdrun_wait "$HERDRUN_LIMIT"
expect_fail "libherd exit without herd_finalize: herdrun fails"
expect_err "libherd exit without herd_finalize: herdrun names the rank" \
    "rank 2 on node .* without finalizing"
check_clean "libherd exit without herd_finalize"
# herd_init opens the endpoint framework: the selection reaches it through herdrun's --mca, and
# a bad one fails herd_init with a message naming it (docs/endpoint.md)
run_ok "libherd with --mca endpoint static" --mca endpoint static -n 2 --oversubscribe \
    "$HERD_HELLO"
expect_eq "libherd with --mca endpoint static: both ranks ok" \
    "$(count_out '^herd_hello rank [01] ok$')" 2
herdrun_bg --mca endpoint nosuch -n 1 "$HERD_HELLO"
herdrun_wait "$HERDRUN_LIMIT"
expect_fail "libherd with an unknown endpoint component: herdrun fails"
expect_err "libherd with an unknown endpoint component: the component is named" '"nosuch"'
expect_err "libherd with an unknown endpoint component: herd_init says what to check" \
    "cannot open the endpoint framework .*HERD_MCA_endpoint"
check_clean "libherd with an unknown endpoint component"
# Files and folders a PMIx client registers for cleanup (PMIx_Job_control, as Open MPI does for
# its shared-memory segments) are removed by the PMIx server when the client dies, here by
# SIGKILL after every rank registered: on one node and on 2 simulated nodes (two servers).
PMIX_CLIENT=$HERD_BUILDDIR/test/programs/pmix_client
if [ -x "$PMIX_CLIENT" ]; then
    for nodes in 1 2; do
        rm -rf "$WORK/cleanup"
        mkdir "$WORK/cleanup"
        herdrun_bg $SIM $nodes --mca ras_simulator_slots 4 -n 4 "$PMIX_CLIENT" cleanup             "$WORK/cleanup"
        herdrun_wait "$HERDRUN_LIMIT"
        expect_rc "PMIx cleanup on $nodes node(s): the killed job exits 137" 137
        expect_eq "PMIx cleanup on $nodes node(s): the server removed what each rank registered"             "$(find "$WORK/cleanup" -mindepth 1 | wc -l)" 0
        check_clean "PMIx cleanup on $nodes node(s)"
    done
fi
# What Open MPI programs are told about the node (wireup_pmix_ompi_hints): skip the MTL-based
# PML where no device for it exists, yield when idle on an oversubscribed node; never over what
# the user set, and nothing at all with the hints off.
SHOW_HINTS='echo "pml=${OMPI_MCA_pml-unset} yield=${OMPI_MCA_mpi_yield_when_idle-unset}"'
NPUS=$(nproc)
if [ -e /sys/class/infiniband ] || [ -e /dev/ipath ] || [ -e /dev/hfi1_0 ] || [ -e /dev/cxi0 ]; then
    want_pml="pml=unset"
else
    want_pml="pml=\\^([a-z0-9]+,)*cm"
fi
run_ok "Open MPI hints" -n $((NPUS + 1)) --oversubscribe sh -c "$SHOW_HINTS"
expect_eq "Open MPI hints: every process" "$(count_out "^$want_pml yield=1$")" $((NPUS + 1))
run_ok "Open MPI hints, one process" -n 1 sh -c "$SHOW_HINTS"
expect_out "Open MPI hints, one process: no yield on a node not oversubscribed" "yield=unset$"
run_ok "Open MPI hints under the user's -x" -n $((NPUS + 1)) --oversubscribe \
    -x OMPI_MCA_pml=ob1 -x OMPI_MCA_mpi_yield_when_idle=0 sh -c "$SHOW_HINTS"
expect_eq "Open MPI hints under the user's -x: the user's values stay" \
    "$(count_out '^pml=ob1 yield=0$')" $((NPUS + 1))
run_ok "Open MPI hints off" --mca wireup_pmix_ompi_hints 0 -n $((NPUS + 1)) --oversubscribe \
    sh -c "$SHOW_HINTS"
expect_eq "Open MPI hints off: nothing said" "$(count_out '^pml=unset yield=unset$')" \
    $((NPUS + 1))
if echo "$FLAVOURS" | grep -q openmpi; then
    run_ok "openmpi hello with the user's pml" -n 2 -x OMPI_MCA_pml=ob1 "$BIN/openmpi_hello"
    expect_eq "openmpi hello with the user's pml: 2 ranks greet" \
        "$(count_out '^hello from rank [0-1] of 2 ')" 2
fi

# the three wireups side by side, and one left out
herdrun_bg --mca wireup ^pmix -n 2 --oversubscribe "$HERD_HELLO"
herdrun_wait "$HERDRUN_LIMIT"
expect_rc "--mca wireup ^pmix: libherd still runs" 0
check_clean "--mca wireup ^pmix"
# A program that can use no wireup (printenv: the C runtime alone, it starts nothing) gets none,
# so no PMIx server starts for it; a shell may start an MPI program and gets every wireup;
# wireup_base_always and LD_PRELOAD (which could bring anything in) give a leaf them too.
PRINTENV=$(command -v printenv)
herdrun_bg -n 2 "$PRINTENV" PMIX_RANK
herdrun_wait "$HERDRUN_LIMIT"
expect_fail "printenv PMIX_RANK: a leaf program gets no PMIx (printenv finds nothing)"
expect_eq "printenv PMIX_RANK: nothing printed" "$(wc -c <"$OUT")" 0
check_clean "printenv PMIX_RANK"
run_ok "sh -c printenv PMIX_RANK" -n 2 sh -c 'printenv PMIX_RANK'
expect_eq "sh -c printenv: a shell gets PMIx" "$(sort "$OUT" | tr '\n' ' ')" "0 1 "
run_ok "printenv PMIX_RANK, wireup_base_always" -n 2 --mca wireup_base_always 1 "$PRINTENV" \
    PMIX_RANK
expect_eq "wireup_base_always: a leaf gets PMIx" "$(sort "$OUT" | tr '\n' ' ')" "0 1 "
run_ok "printenv HERD_WIREUP_URI, LD_PRELOAD" -n 1 -x LD_PRELOAD=libm.so.6 "$PRINTENV" \
    HERD_WIREUP_URI
expect_out "LD_PRELOAD: a leaf gets the wireups" "^unix:"
export LD_PRELOAD=libm.so.6 # inherited from herdrun's own environment this time
run_ok "printenv HERD_WIREUP_URI, LD_PRELOAD inherited" -n 1 "$PRINTENV" HERD_WIREUP_URI
unset LD_PRELOAD
expect_out "LD_PRELOAD inherited: a leaf gets the wireups" "^unix:"
herdrun_bg -n 1 --mca wireup_base_verbose 5 "$PRINTENV" PMIX_RANK
herdrun_wait "$HERDRUN_LIMIT"
expect_err "wireup_base_verbose 5: says why no wireup" "printenv cannot use a wireup \(C runtime only"
expect_err "wireup_base_verbose 5: says none started" "none started"
check_clean "wireup_base_verbose"
run_ok "leaf on 3 simulated nodes" $SIM 3 -n 6 --map-by node "$PRINTENV" HERD_RANK
expect_eq "leaf on 3 simulated nodes: every rank runs" "$(sort "$OUT" | tr '\n' ' ')" \
    "0 1 2 3 4 5 "
# A spawn onto a node whose programs were all leaves: that node started no wireup, and starts it
# for the spawned processes (a PMIx client that spawns without a fence first: an MPI program's
# MPI_Init would wait for the leaf too). 1 slot per node puts the leaf alone on sim0002, and the
# two spawned processes go one to each node.
run_ok "spawn onto a node of leaves" $SIM 2 --mca ras_simulator_slots 1 --oversubscribe \
    --mca wireup_base_verbose 5 -n 1 "$PMIX_CLIENT" spawn 2 : -n 1 /bin/sleep 1
expect_out "spawn onto a node of leaves: the parent's spawn returns" "^pmix_client spawned 2$"
expect_eq "spawn onto a node of leaves: both spawned processes ran their PMIx client" \
    "$(count_out '^pmix_client rank [01] ok$')" 2
expect_err "spawn onto a node of leaves: that node had started no wireup" \
    "wireup on sim0002: no program of job .* can use a wireup"
expect_err "spawn onto a node of leaves: it starts the wireup for the spawn" \
    "wireup on sim0002: a spawn brings processes that may use a wireup: starting it now"
herdrun_bg --mca wireup bogus -n 1 /bin/true
herdrun_wait "$HERDRUN_LIMIT"
expect_fail "--mca wireup bogus: refused"
expect_err "--mca wireup bogus: the error names the value" "bogus"
check_clean "--mca wireup bogus"

finish
