#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Put an "SPDX-License-Identifier: BSD-3-Clause" line at the top of every tracked source,
# script and build file that lacks one, in the file's own comment syntax (after a "#!" or
# "#%Module" first line, which must stay first). Idempotent: a file whose first lines have the
# line already is left alone, so it can be run again after merging other branches.
# Usage: contrib/spdx-add.sh            add the line where it is missing
#        contrib/spdx-add.sh --check    only list what lacks it (exit 1 if anything does);
#                                       test/integration/test_license.sh runs this
# A file type with no rule below is an error in both modes: decide its comment syntax (or why
# it is exempt) here.
set -u
cd "$(dirname "$0")/.."
ID="SPDX-License-Identifier: BSD-3-Clause"
MODE=add
[ "${1:-}" = --check ] && MODE=check

# The comment line for a file, "-" for a file that is exempt, or "" for no rule.
comment_for() {
    case $1 in
    # Exempt, and why:
    LICENSE) echo - ;;                           # the license text itself
    contrib/debian/copyright) echo - ;;          # states the license itself (DEP-5)
    contrib/debian/changelog) echo - ;;          # Debian changelog: no comment syntax
    contrib/debian/source/format) echo - ;;      # one line that dpkg parses whole
    *.md) echo - ;;                              # documents: no comment that every renderer hides
    */fixtures/*) echo - ;;                      # data whose exact bytes the unit tests read
    test/fuzz/regressions/*) echo - ;;           # inputs that once crashed a fuzzer, replayed as they are
    # C, headers
    *.c | *.h) echo "/* $ID */" ;;
    # linker version scripts and dynamic lists: C comments
    *.dynlist) echo "/* $ID */" ;;
    # autoconf: dnl, which m4 drops (a '#' line would be copied into configure)
    *.m4 | configure.ac) echo "dnl $ID" ;;
    # man(7) pages
    *.[0-9]) echo ".\\\" $ID" ;;
    # '#' comments: shell, make, help catalogs (show_help skips '#' lines), pkg-config, RPM,
    # debhelper files, YAML, git, valgrind suppressions, libFuzzer dictionaries, Tcl modulefiles
    *.sh | *.sh.in | .ci/run | *Makefile.am | *Makefile.include | *.txt | *.pc.in | *.spec | \
        contrib/debian/* | .clang-format | .gitignore | *.supp | *.dict | *.modulefile.in)
        echo "# $ID" ;;
    *) echo "" ;;
    esac
}

has_id() { head -n 5 "$1" | grep -q "$ID"; }

files=$(git ls-files 2>/dev/null) || {
    echo "spdx-add.sh: not a git checkout: the tracked files are what it checks" >&2
    exit 77
}
missing=0
unknown=0
for f in $files; do
    [ -f "$f" ] && [ ! -L "$f" ] || continue
    line=$(comment_for "$f")
    if [ -z "$line" ]; then
        echo "spdx-add.sh: no rule for $f: add its comment syntax (or why it is exempt) to contrib/spdx-add.sh" >&2
        unknown=$((unknown + 1))
        continue
    fi
    [ "$line" = - ] && continue
    has_id "$f" && continue
    if [ "$MODE" = check ]; then
        echo "$f lacks '$ID' (contrib/spdx-add.sh adds it)"
        missing=$((missing + 1))
        continue
    fi
    tmp=$f.spdx-tmp
    case $(head -n 1 "$f") in
    '#!'* | '#%Module'*) { head -n 1 "$f" && echo "$line" && tail -n +2 "$f"; } >"$tmp" ;;
    *) { echo "$line" && cat "$f"; } >"$tmp" ;;
    esac
    # keep the mode (executable scripts stay executable)
    cat "$tmp" >"$f" && rm -f "$tmp"
    echo "added: $f"
done
[ "$MODE" = check ] && echo "$missing file(s) lack the SPDX line, $unknown with no rule"
[ "$missing" -eq 0 ] && [ "$unknown" -eq 0 ]
