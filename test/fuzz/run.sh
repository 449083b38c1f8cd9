#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Build herd's fuzzers (libFuzzer + ASan + UBSan) from source and run each for SECONDS.
# Usage: test/fuzz/run.sh [SECONDS [HARNESS...]]   (default 30 seconds, every harness)
#   buffer       opal/dss buffer unpackers
#   hostfile     ras hostfile and -H host-list parser
#   slurm_list   ras Slurm host-list and tasks-per-node parsers
#   launch       launch message, process record, node inventory, inventories-by-kind, a
#                subtree's map reports, relocation and rejoin message decoders (orte/runtime)
#   wireup       native client frames, PMI-1 commands and mapping, session daemons' wireup messages
#   overlay_ofi  the ofi overlay's fabric fragments, control messages and fallbacks (its fabric
#                path over a stub provider)
# Exits non-zero if a fuzzer finds a crash, leak or broken invariant, keeping the reproducer.
# HERD_FUZZ_WORKDIR keeps the binaries, corpora and crash files there across runs; CC picks clang;
# HERD_FUZZ_JOBS says how many harnesses run at once (default: one per CPU).
set -eu

all_harnesses="buffer hostfile slurm_list launch wireup overlay_ofi"

usage() {
    echo "usage: $0 [SECONDS [HARNESS...]]   (harnesses: $all_harnesses)" >&2
    exit 2
}

seconds=${1:-30}
case $seconds in
    '' | *[!0-9]*) usage ;;
esac
[ $# -gt 0 ] && shift
harnesses=${*:-$all_harnesses}
for harness in $harnesses; do
    case " $all_harnesses " in
        *" $harness "*) ;;
        *) echo "$0: unknown harness '$harness'" >&2 && usage ;;
    esac
done

top=$(cd "$(dirname "$0")/../.." && pwd)
if [ -n "${HERD_FUZZ_WORKDIR:-}" ]; then
    work=$HERD_FUZZ_WORKDIR
    keep=yes
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/herd-fuzz.XXXXXX")
    keep=no
fi
mkdir -p "$work/include"

# The sources include the configure-generated herd_config.h but need nothing from it; a stub
# lets the fuzzers build from a plain checkout, without running configure.
printf '#define _GNU_SOURCE 1\n' >"$work/include/herd_config.h"

# What each harness is built from, beyond its own fuzz_<name>.c. The ras parsers report errors
# through the help-message code, which finds help-ras-base.txt in the source tree; their node
# limit is lowered so that inputs reaching it stay fast (same code, smaller numbers).
opal_util="$top/opal/util/show_help.c $top/opal/util/install_dirs.c $top/opal/util/output.c
    $top/opal/util/argv.c
    $top/opal/util/error.c"
ras_base="$top/orte/mca/ras/base"
wireup_base="$top/orte/mca/wireup/base"
ofi="$top/orte/mca/overlay/ofi"
# the wireup engine: dispatch and life cycle, then one file per service
wireup_engine="$wireup_base/wireup_base_engine.c $wireup_base/wireup_base_complete.c
    $wireup_base/wireup_base_kv.c $wireup_base/wireup_base_modex.c
    $wireup_base/wireup_base_coll.c $wireup_base/wireup_base_fence.c
    $wireup_base/wireup_base_names.c"
grpcomm="$top/orte/mca/grpcomm"
harness_sources() {
    case $1 in
        buffer) echo "$top/opal/dss/buffer.c" ;;
        hostfile)
            echo "$ras_base/ras_base_hostfile.c $ras_base/ras_base_allocation.c" \
                "$top/opal/dss/buffer.c $opal_util"
            ;;
        slurm_list)
            echo "$ras_base/ras_base_hostlist.c $ras_base/ras_base_allocation.c" \
                "$top/opal/dss/buffer.c $opal_util"
            ;;
        launch)
            echo "$top/orte/runtime/job.c $top/orte/runtime/proc_record.c" \
                "$top/orte/runtime/dvm_kinds_wire.c $top/orte/runtime/dvm_map_wire.c" \
                "$top/orte/runtime/dvm_rejoin_wire.c" \
                "$top/orte/runtime/relocate.c $top/orte/util/runs.c" \
                "$top/orte/util/inventory.c $top/opal/mca/fabric/base/fabric_base_record.c" \
                "$top/orte/util/radix.c $top/opal/dss/buffer.c $opal_util"
            ;;
        wireup)
            echo "$top/opal/util/native_wire.c $top/orte/mca/wireup/pmi1/wireup_pmi1_wire.c" \
                "$wireup_engine $wireup_base/wireup_base_store.c" \
                "$grpcomm/base/grpcomm_base_engine.c $grpcomm/base/grpcomm_base_wire.c" \
                "$grpcomm/base/grpcomm_base_lost.c" \
                "$grpcomm/tree/grpcomm_tree_module.c $top/orte/util/radix.c" \
                "$top/opal/event/event.c $top/opal/dss/buffer.c $opal_util"
            ;;
        overlay_ofi)
            echo "$ofi/overlay_ofi_module.c $ofi/overlay_ofi_path.c $ofi/overlay_ofi_start.c" \
                "$top/orte/util/radix.c $opal_util"
            ;;
    esac
}

# Compiler and linker options a harness needs beyond the common ones. inventory.c also
# discovers nodes: every function in its own section and lld dropping what the harness never
# reaches leave the fabric framework out (GNU ld would still want it; lld reports whatever is
# reached and missing). ASan's table of instrumented globals would keep what the dropped code
# refers to alive (with -fsanitize=fuzzer clang 14 does not emit the per-global metadata
# --gc-sections can drop): the harness's globals go without redzones, its heap keeps them.
harness_flags() {
    case $1 in
        launch)
            echo "-fuse-ld=lld -ffunction-sections -fdata-sections -Wl,--gc-sections" \
                "-mllvm -asan-globals=0"
            ;;
    esac
}

# Libraries a harness links beyond libpthread. The wireup engine runs on the event loop (libevent).
harness_libs() {
    case $1 in
        wireup) echo "-levent_core -levent_pthreads" ;;
    esac
}

# A few valid inputs to start from (byte 0 picks the harness's mode), written once per corpus.
seed_hostfile() {
    printf '\000node01 slots=4 max_slots=8  # big\nnode02\n\nnode01 slots = 2\n' >"$1/file"
    printf '\001a,b:4,c' >"$1/list"
    printf '\002a slots=2\nb max-slots=3\n\000b:2,a' >"$1/both"
}
seed_slurm_list() {
    printf '\000n[01-10,12],m[1-2]-ib,a[1-2]b[3-4],x' >"$1/list"
    printf '\0012(x3),1,16' >"$1/tasks"
    printf '\002n[1-3],m\0002(x3),1' >"$1/both"
}
# Binary messages: the harness writes them with the real encoders, so they follow the formats.
seed_launch() {
    HERD_FUZZ_LAUNCH_SEEDS=$1 "$work/fuzz_launch" -runs=0 >/dev/null 2>&1
}
# Records (kind, source, 2-byte length, bytes): a HELLO from daemon 1, a whole fabric message
# from it, a collective sent to it over the fabric and its completion.
seed_overlay_ofi() {
    {
        printf '\000\005\001\000\000'
        printf '\000\000\025\000\001\001\000\100\000\000\000\001'
        printf '\000\000\000\000\000\000\000\001\000\000\000\000x'
        printf '\003\001\001\000\040\004\000\000\000'
    } >"$1/hello-message-send"
}
# The engine seeds are what a second engine sends the fuzzed one in a short conversation.
seed_wireup() {
    HERD_FUZZ_WIREUP_SEEDS=$1 "$work/fuzz_wireup" -runs=0 >/dev/null 2>&1
}

run_harness() {
    name=$1
    sources=$(harness_sources "$name")
    flags=$(harness_flags "$name")
    libs=$(harness_libs "$name")
    if [ "$name" = buffer ]; then
        # kept where they always were, so that an existing HERD_FUZZ_WORKDIR still counts
        corpus=$work/corpus
        artifacts=$work/
    else
        corpus=$work/corpus-$name
        artifacts=$work/$name-
    fi
    mkdir -p "$corpus"
    # shellcheck disable=SC2086 # the source, flag and library lists are meant to split
    ${CC:-clang} -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
        $flags -I"$work/include" -I"$top" -I"$top/opal/include" -I"$top/orte/include" \
        -DHERD_PKGDATADIR="\"$ras_base\"" -DORTE_RAS_MAX_NODES=4096u \
        -DHERD_PREFIX_DIR="\"/nonexistent\"" -DHERD_LIBDIR="\"/nonexistent/lib\"" \
        -DHERD_PKGLIBDIR="\"/nonexistent/lib/herd\"" -DHERD_SYSCONFDIR="\"/nonexistent/etc\"" \
        "$top/test/fuzz/fuzz_$name.c" $sources $libs -lpthread -o "$work/fuzz_$name" || return 1

    extra=
    if [ "$name" != buffer ]; then
        if [ -z "$(ls -A "$corpus")" ]; then
            "seed_$name" "$corpus" || return 1
        fi
        # inputs that once failed are part of every run
        if [ -d "$top/test/fuzz/regressions/$name" ]; then
            cp "$top/test/fuzz/regressions/$name/"* "$corpus/"
        fi
        # the parsers explain every bad input on stderr; libFuzzer keeps its own report and the
        # sanitizers' on a copy of it
        extra=-close_fd_mask=2
    fi
    if [ -f "$top/test/fuzz/$name.dict" ]; then
        extra="$extra -dict=$top/test/fuzz/$name.dict"
    fi

    echo "== fuzz_$name for ${seconds}s"
    status=0
    # shellcheck disable=SC2086 # extra holds separate options
    "$work/fuzz_$name" -max_total_time="$seconds" -print_final_stats=1 \
        -artifact_prefix="$artifacts" $extra "$corpus" || status=$?
    if [ "$status" -ne 0 ]; then
        echo "fuzz_$name failed (exit $status); reproducer and binary kept in $work" >&2
        return "$status"
    fi
}

# run_logged NAME: one harness, what it says in $work/NAME.log, its status in $work/NAME.status
run_logged() {
    status=0
    run_harness "$1" >"$work/$1.log" 2>&1 || status=$?
    echo "$status" >"$work/$1.status"
}

# Each harness is one process fuzzing for SECONDS: they run HERD_FUZZ_JOBS at a time (default
# one per CPU), so that on 2 cores the harnesses take half the time they took one after another.
# What each says is printed whole once it ended, in the order given.
jobs=${HERD_FUZZ_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}
case $jobs in
    '' | *[!0-9]* | 0) jobs=1 ;;
esac
failed=
last_status=0
# shellcheck disable=SC2086 # the list is meant to split
set -- $harnesses
while [ $# -gt 0 ]; do
    batch=
    while [ $# -gt 0 ] && [ "$(echo $batch | wc -w)" -lt "$jobs" ]; do
        run_logged "$1" &
        batch="$batch $1"
        shift
    done
    wait
    for name in $batch; do
        cat "$work/$name.log"
        status=$(cat "$work/$name.status")
        if [ "$status" -ne 0 ]; then
            failed="$failed $name"
            last_status=$status
        fi
    done
done

if [ -n "$failed" ]; then
    echo "failed:$failed (see $work)" >&2
    exit "$last_status"
fi
if [ "$keep" = no ]; then
    rm -rf "$work"
fi
