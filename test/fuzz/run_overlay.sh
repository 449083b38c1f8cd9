#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Build the overlay wire-format fuzzer (libFuzzer + ASan + UBSan) from source and run it.
# Usage: test/fuzz/run_overlay.sh [SECONDS]   (default 60; exits non-zero if it finds a crash)
# HERD_FUZZ_WORKDIR keeps the binary, corpus and crash files there across runs; CC picks clang.
set -eu

seconds=${1:-60}
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
    work=$(mktemp -d "${TMPDIR:-/tmp}/herd-fuzz-overlay.XXXXXX")
    keep=no
fi
mkdir -p "$work/include" "$work/corpus"

# The wire code includes the configure-generated herd_config.h; a stub with what it needs lets
# the fuzzer build from a plain checkout, without running configure.
# libsodium is loaded by its development link (the fuzzer links -lsodium, so it is there).
printf '#define _GNU_SOURCE 1\n#define HERD_SODIUM_SONAME "libsodium.so"\n' \
    >"$work/include/herd_config.h"

sodium_cflags=$(pkg-config --cflags libsodium 2>/dev/null || true)
sodium_libs=$(pkg-config --libs libsodium 2>/dev/null || echo -lsodium)

# shellcheck disable=SC2086 # the pkg-config output is a list of flags
${CC:-clang} -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
    -I"$work/include" -I"$top" -I"$top/opal/include" -I"$top/orte/include" $sodium_cflags \
    "$top/test/fuzz/fuzz_overlay_frame.c" "$top/orte/mca/overlay/tcp/overlay_tcp_wire.c" \
    "$top/orte/mca/overlay/tcp/overlay_tcp_sodium.c" \
    $sodium_libs -o "$work/fuzz_overlay_frame"

# Seeds: a connector's whole side of a connection (HELLO, RESPONSE, DATA, HEARTBEAT, BYE), an
# acceptor's (CHALLENGE, DATA, HEARTBEAT) and a URI, each behind the two bytes that pick the
# limits. The fuzzer would find these frames by itself, only later.
bytes() { # each argument (0-255) as one byte
    for value in "$@"; do
        # shellcheck disable=SC2059 # the format is the octal escape being built
        printf "\\$(printf '%03o' "$value")"
    done
}
u16() { bytes $(($1 >> 8 & 255)) $(($1 & 255)); }
u32() { bytes $(($1 >> 24 & 255)) $(($1 >> 16 & 255)) $(($1 >> 8 & 255)) $(($1 & 255)); }
zeros() {
    i=0
    while [ "$i" -lt "$1" ]; do
        bytes 0
        i=$((i + 1))
    done
}
frame() { # TYPE TAG SRC DST LENGTH: a version 2 header
    printf HRDO
    bytes 2 "$1"
    u16 0
    u16 "$2"
    u16 0
    u32 "$3"
    u32 "$4"
    u32 "$5"
}
{
    bytes 20 6
    frame 1 0 1 0 52
    zeros 32
    u32 7
    u32 2
    u32 30000
    u16 4
    printf fuzz
    u16 0
    frame 3 0 1 0 32
    zeros 32
    frame 4 1 1 0 5
    printf hello
    frame 6 0 1 0 4
    u32 30000
    frame 5 0 1 0 4
    u32 1
} >"$work/corpus/seed-connector"
{
    bytes 20 6
    frame 2 0 0 1 68
    zeros 32
    u32 30000
    zeros 32
    frame 4 1 0 1 2
    printf hi
    frame 6 0 0 1 4
    u32 0
} >"$work/corpus/seed-acceptor"
{
    bytes 0 0
    printf 'tcp://[fd00::1]:40123'
} >"$work/corpus/seed-uri"

status=0
"$work/fuzz_overlay_frame" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$work/" "$work/corpus" || status=$?

if [ "$status" -ne 0 ]; then
    echo "fuzz_overlay_frame failed (exit $status); reproducer and binary kept in $work" >&2
    exit "$status"
fi
if [ "$keep" = no ]; then
    rm -rf "$work"
fi
