#!/bin/sh
# Build the opal/dss buffer fuzzer (libFuzzer + ASan + UBSan) from source and run it.
# Usage: test/fuzz/run.sh [SECONDS]   (default 30; exits non-zero if the fuzzer finds a crash)
# HERD_FUZZ_WORKDIR keeps the binary, corpus and crash files there across runs; CC picks clang.
set -eu

seconds=${1:-30}
case $seconds in
    '' | *[!0-9]*)
        echo "usage: $0 [SECONDS]" >&2
        exit 2
        ;;
esac

top=$(cd "$(dirname "$0")/../.." && pwd)
if [ -n "${HERD_FUZZ_WORKDIR:-}" ]; then
    work=$HERD_FUZZ_WORKDIR
    keep=yes
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/herd-fuzz.XXXXXX")
    keep=no
fi
mkdir -p "$work/include" "$work/corpus"

# buffer.c includes the configure-generated herd_config.h but needs nothing from it; a stub
# lets the fuzzer build from a plain checkout, without running configure.
printf '#define _GNU_SOURCE 1\n' >"$work/include/herd_config.h"

${CC:-clang} -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
    -I"$work/include" -I"$top" -I"$top/opal/include" \
    "$top/test/fuzz/fuzz_buffer.c" "$top/opal/dss/buffer.c" -o "$work/fuzz_buffer"

status=0
"$work/fuzz_buffer" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$work/" "$work/corpus" || status=$?

if [ "$status" -ne 0 ]; then
    echo "fuzz_buffer failed (exit $status); reproducer and binary kept in $work" >&2
    exit "$status"
fi
if [ "$keep" = no ]; then
    rm -rf "$work"
fi
