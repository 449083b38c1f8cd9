#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The runtime's rooms stay rooms: no C file of orte/runtime or of a framework's base over 900
# lines, no function there over 120 lines, and no cycle among herd's own headers (a header
# that, through others, includes itself). docs/architecture.md says where each part lives.
. "$(dirname "$0")/lib.sh"
cd "$HERD_SRCDIR" || exit 1

files=$(ls orte/runtime/*.c orte/mca/*/base/*.c opal/mca/*/base/*.c ompi-shim/mca/*/base/*.c \
    2>/dev/null)
for f in $files; do
    n=$(wc -l <"$f")
    [ "$n" -le 900 ] && ok "$f: $n lines (at most 900)" || fail "$f: $n lines, more than 900"
done

# A function runs from its head (the last line at column 0 before a "{" line at column 0) to the
# next "}" at column 0.
long=$(awk '
    FNR == 1 { head = ""; start = 0 }
    /^[A-Za-z_]/ { last_head = $0; last_head_line = FNR }
    /^\{$/ { start = last_head_line; head = last_head }
    /^\}/ && start > 0 {
        if (FNR - start + 1 > 120) {
            name = head; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
            printf "%s:%d: %s is %d lines\n", FILENAME, start, name, FNR - start + 1
        }
        start = 0
    }' $files)
expect_eq "no function of the runtime or a framework base over 120 lines" "$long" ""

# Headers of herd's own tree and the herd headers each includes ("layer/..." paths).
headers=$(find opal orte ompi-shim -name '*.h' | sort)
cycles=$(for h in $headers; do
    sed -n 's|^#include "\(\(opal\|orte\|ompi-shim\)/[^"]*\)"|\1|p' "$h" | while read -r inc; do
        for base in "" opal/include/ orte/include/ ompi-shim/include/; do
            [ -f "$base$inc" ] && { echo "$h $base$inc"; break; }
        done
    done
done | awk '
    { edge[$1] = edge[$1] " " $2; node[$1] = 1; node[$2] = 1 }
    function visit(n,    i, k, parts) {
        if (state[n] == 1) { print "cycle through " n; return }
        if (state[n] == 2) return
        state[n] = 1
        k = split(edge[n], parts, " ")
        for (i = 1; i <= k; i++) visit(parts[i])
        state[n] = 2
    }
    END { for (n in node) visit(n) }' | sort -u)
expect_eq "no include cycle among herd's headers" "$cycles" ""

finish
