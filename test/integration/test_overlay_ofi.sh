#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The ofi overlay selected (--mca overlay ofi) on simulated nodes: each daemon opens a libfabric
# RDM endpoint (tcp and shm providers) and says so at overlay_base_verbose 1; the DVM's start-up
# allgather and a libherd program's fences carry messages over the fabric (the counters each
# daemon prints at overlay_base_verbose 2: every message sent over it was received); jobs run;
# a provider that cannot be opened falls back to tcp with the reason and the DVM and jobs still
# run; a daemonized DVM shuts down with nothing left, /dev/shm included.
. "$(dirname "$0")/lib.sh"
SIM="--mca ras simulator --mca ras_simulator_num_nodes"
OFI="--mca overlay ofi --mca overlay_base_verbose 2"
HERD_HELLO=$HERD_BUILDDIR/test/programs/herd_hello

# files that libfabric's shm provider makes (/dev/shm/<pid>:<n>:<n>), or an fi_ prefix
fabric_shm() { ls /dev/shm 2>/dev/null | grep -E '^[0-9]+:[0-9]+:[0-9]+$|^fi_' | sort; }
# fabric_shm_left: such files new since the test began whose process is gone (tests running
# beside this one have theirs while their processes live)
fabric_shm_left() {
    fabric_shm | comm -13 "$WORK/fshm.before" - | while read -r f; do
        pid=${f%%:*}
        case $f in [0-9]*) [ -d "/proc/$pid" ] && continue ;; esac
        echo "$f"
    done
}
fabric_shm >"$WORK/fshm.before"

# "S R": messages all the daemons sent and received over the fabric (their verbose 2 counters)
fabric_counts() {
    pattern='.*overlay ofi: daemon [0-9]* sent \([0-9]*\) messages .*received \([0-9]*\) messages.*'
    sed -n "s/$pattern/\\1 \\2/p" "$ERR" | awk '{ s += $1; r += $2 } END { print s + 0, r + 0 }'
}
# expect_fabric WHAT [all]: messages went over the fabric and arrived (all: as many arrived
# as were sent; not under herdrun, whose session daemons may end without their counters)
expect_fabric() {
    set -- "$1" "${2:-some}" $(fabric_counts)
    if [ "$3" -gt 0 ] && [ "$4" -gt 0 ] && { [ "$2" != all ] || [ "$3" = "$4" ]; }; then
        ok "$1: $3 messages sent over the fabric, $4 received"
    else
        fail "$1: fabric messages sent/received: $3/$4"
    fi
}

herd_info --parsable --param overlay ofi
expect_out "herd-info shows overlay_ofi_provider" '^mca:overlay:ofi:param:overlay_ofi_provider:'
expect_out "herd-info shows the ofi priority, below tcp's" \
    '^mca:overlay:ofi:param:overlay_ofi_priority:value:5$'

for prov in tcp shm; do
    if ! FI_PROVIDER=$prov fi_info -t FI_EP_RDM >/dev/null 2>&1 &&
        command -v fi_info >/dev/null; then
        echo "SKIP: libfabric provider $prov has no RDM endpoint here"
        continue
    fi
    FI_PROVIDER=$prov herd_dvm $SIM 4 $OFI --exit-when-ready
    expect_rc "FI_PROVIDER=$prov: 4 simulated nodes come up and go down" 0
    expect_eq "FI_PROVIDER=$prov: every daemon opened an RDM endpoint" \
        "$(count_err "overlay ofi: daemon [1-4] opened an RDM endpoint of provider ([a-z_]+;)?$prov")" 4
    expect_no_err "FI_PROVIDER=$prov: none fell back" 'falls back to tcp|over tcp from now on'
    expect_fabric "FI_PROVIDER=$prov: the DVM's start-up allgather" all
    expect_no_err "FI_PROVIDER=$prov: nothing dropped" 'dropped a fabric message'
    fabric_shm_left >"$WORK/fshm.new"
    [ ! -s "$WORK/fshm.new" ] && ok "FI_PROVIDER=$prov: every daemon closed its endpoint (/dev/shm)" ||
        fail "FI_PROVIDER=$prov: left in /dev/shm: $(tr '\n' ' ' <"$WORK/fshm.new")"

    # a libherd program's fences (job start-up collectives) under herdrun
    FI_PROVIDER=$prov herdrun $OFI $SIM 3 -n 6 --map-by node "$HERD_HELLO"
    expect_rc "FI_PROVIDER=$prov: a libherd fence program under herdrun" 0
    expect_eq "FI_PROVIDER=$prov: every rank checked every peer's keys (herdrun)" \
        "$(count_out '^herd_hello rank [0-5] ok$')" 6
    expect_fabric "FI_PROVIDER=$prov: the job's start-up collectives"
    fabric_shm_left >"$WORK/fshm.new"
    [ ! -s "$WORK/fshm.new" ] && ok "FI_PROVIDER=$prov: herdrun left nothing in /dev/shm" ||
        fail "FI_PROVIDER=$prov: left in /dev/shm: $(tr '\n' ' ' <"$WORK/fshm.new")"

    uri=$WORK/dvm-$prov.uri
    FI_PROVIDER=$prov herd_dvm $SIM 3 $OFI --daemonize --report-uri "$uri"
    expect_rc "FI_PROVIDER=$prov: a persistent DVM" 0
    dvm_pid=$(sed -n 's/^pid //p' "$uri")
    herdrun --dvm-uri "$uri" -n 3 --map-by node sh -c 'echo "rank $HERD_RANK"'
    expect_rc "FI_PROVIDER=$prov: a job on the DVM" 0
    expect_eq "FI_PROVIDER=$prov: every rank ran" "$(count_out '^rank [0-2]$')" 3
    herdrun --dvm-uri "$uri" -n 6 --map-by node "$HERD_HELLO"
    expect_rc "FI_PROVIDER=$prov: a libherd fence program on the DVM" 0
    expect_eq "FI_PROVIDER=$prov: every rank checked every peer's keys" \
        "$(count_out '^herd_hello rank [0-5] ok$')" 6
    # the shm provider's and libinfinipath's signal handlers (exit on SIGTERM) are kept out:
    # the root's SIGTERM is an orderly shutdown in which every daemon closes its endpoint
    herd_dvm --shutdown --dvm-uri "$uri"
    expect_rc "FI_PROVIDER=$prov: --shutdown" 0
    wait_gone "$dvm_pid" 10 && ok "FI_PROVIDER=$prov: the DVM process is gone" ||
        fail "FI_PROVIDER=$prov: DVM $dvm_pid still running"
    [ -z "$(herdd_pids)" ] && ok "FI_PROVIDER=$prov: no daemon left" ||
        fail "FI_PROVIDER=$prov: daemons left: $(herdd_pids)"
    fabric_shm_left >"$WORK/fshm.new"
    [ ! -s "$WORK/fshm.new" ] && ok "FI_PROVIDER=$prov: no libfabric file left in /dev/shm" ||
        fail "FI_PROVIDER=$prov: left in /dev/shm: $(tr '\n' ' ' <"$WORK/fshm.new")"
done

# a provider that does not exist: every daemon says why, and the DVM runs over tcp alone
FI_PROVIDER=nonexistent herd_dvm $SIM 3 $OFI --exit-when-ready
expect_rc "FI_PROVIDER=nonexistent: the DVM still comes up" 0
expect_eq "FI_PROVIDER=nonexistent: every daemon gives its reason at verbose 1" \
    "$(count_err 'overlay ofi: daemon [1-3] falls back to tcp: fi_getinfo \(an RDM endpoint\) failed')" 3
herd_dvm $SIM 3 --mca overlay ofi --mca overlay_ofi_provider nonexistent \
    --mca overlay_base_verbose 1 --exit-when-ready
expect_rc "overlay_ofi_provider=nonexistent: the DVM still comes up" 0
expect_err "overlay_ofi_provider=nonexistent: the reason is given" 'falls back to tcp: fi_getinfo'
FI_PROVIDER=nonexistent herdrun --mca overlay ofi $SIM 2 -n 4 --map-by node "$HERD_HELLO"
expect_rc "FI_PROVIDER=nonexistent: a libherd fence program under herdrun still runs" 0
expect_eq "FI_PROVIDER=nonexistent: every rank checked every peer's keys" \
    "$(count_out '^herd_hello rank [0-3] ok$')" 4
expect_no_err "without verbose the fallback is silent" 'falls back'
FI_PROVIDER=nonexistent herdrun $OFI $SIM 2 -n 4 --map-by node "$HERD_HELLO"
expect_rc "FI_PROVIDER=nonexistent, verbose 2: the job runs" 0
expect_no_err "FI_PROVIDER=nonexistent: no fabric counters (nothing went over a fabric)" \
    'messages / [0-9]+ bytes over the fabric'

# without a selection the tcp component wins: ofi (priority 5) is used only when asked for
herd_dvm $SIM 2 --mca overlay_base_verbose 1 --exit-when-ready
expect_rc "the default selection" 0
expect_no_err "the default selection does not open the fabric" 'overlay ofi:'

finish
