#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The man pages: every installed command has one, and the options its --help lists are the
# options its page's OPTIONS section describes (neither drifts from the other); every function
# of <herd.h> has a section-3 page or a link to one, with the header's prototype in its
# SYNOPSIS; every page is lint-clean (groff -wall, mandoc -Tlint). docs/man.md.
. "$(dirname "$0")/lib.sh"
SRC=$HERD_SRCDIR

# The option names of a --help text: "-n, --np N" gives n and np (herdrun's -x is "--x").
help_options() {
    grep -E '^(  -[A-Za-z], |      )--[A-Za-z]' |
        sed -E 's/^ *(-([A-Za-z]), )?--([A-Za-z0-9-]+).*/\2 \3/' |
        tr ' ' '\n' | grep -v '^$' | sort -u
}
# The option names a page's OPTIONS section describes: the words starting with a dash on the
# line after each .TP (the item's tag), escapes and fonts removed.
man_options() {
    sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$1" | awk 'tag { print; tag = 0 } /^\.TP/ { tag = 1 }' |
        sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' | grep -oE '(^|[ "])--?[A-Za-z][A-Za-z0-9-]*' |
        sed -E 's/^[ "]*-+//' | sort -u
}
# The commands make install installs: orte's bin_PROGRAMS, as tools/NAME/NAME.
installed_commands() {
    echo 'herd-print-bin-programs: ; @echo $(bin_PROGRAMS)' |
        env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s --no-print-directory -C "$HERD_BUILDDIR/orte" \
            -f Makefile -f - herd-print-bin-programs EXEEXT= |
        tr ' ' '\n' | grep -v '^$'
}

commands=$(installed_commands)
case " $(echo $commands) " in
*" tools/herdrun/herdrun "*) ok "the installed commands are found (bin_PROGRAMS)" ;;
*) fail "the installed commands are found (bin_PROGRAMS: '$commands')" ;;
esac
for cmd in $commands; do
    name=$(basename "$cmd")
    page=$(find "$SRC" -path "*/$cmd.1" -not -path '*/_*' | head -n 1)
    if [ -z "$page" ]; then
        fail "$name has a man page ($cmd.1 beside its code)"
        continue
    fi
    ok "$name has a man page"
    "$HERD_BUILDDIR/orte/$cmd" --help >"$OUT" 2>"$ERR"
    rc=$?
    expect_rc "$name --help" 0
    help_options <"$OUT" >"$WORK/help.$name"
    man_options "$page" >"$WORK/man.$name"
    [ -s "$WORK/help.$name" ] || fail "$name --help lists options"
    missing=$(comm -23 "$WORK/help.$name" "$WORK/man.$name" | tr '\n' ' ')
    extra=$(comm -13 "$WORK/help.$name" "$WORK/man.$name" | tr '\n' ' ')
    expect_eq "$name: every option of --help is in its man page" "$missing" ""
    expect_eq "$name: its man page lists no option --help lacks" "$extra" ""
done

# Section 3: <herd.h>'s functions and their prototypes, one per line, blanks collapsed.
header_prototypes() {
    tr '\n' ' ' <"$SRC/ompi-shim/include/herd.h" | sed 's/;/;\n/g' | sed -n 's/.*HERD_API //p' |
        grep '^[^#]*herd_[a-z_]*(' | sed -e 's/ __attribute__((noreturn))//' -e 's/  */ /g' -e 's/( /(/g' -e 's/ *;$/;/'
}
# The prototypes in a page's SYNOPSIS (.B lines between .nf and .fi), joined and unquoted.
page_prototypes() {
    sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$1" | sed -n 's/^\.B //p' | grep -v '^#' |
        sed -e 's/"//g' -e 's/\\-/-/g' | tr '\n' ' ' | sed 's/;/;\n/g' |
        sed -e 's/^ *//' -e 's/  */ /g' -e 's/( /(/g' | grep .
}
header_prototypes | sort >"$WORK/header"
for page in "$SRC"/ompi-shim/man/*.3; do page_prototypes "$page"; done | sort >"$WORK/pages"
expect_eq "<herd.h> has functions" "$(grep -c . "$WORK/header" | awk '{print ($1 > 30)}')" 1
expect_eq "every function of <herd.h> is in a man page's SYNOPSIS, prototype as in the header" \
    "$(comm -23 "$WORK/header" "$WORK/pages" | tr '\n' ' ')" ""
expect_eq "no man page shows a prototype <herd.h> lacks" \
    "$(comm -13 "$WORK/header" "$WORK/pages" | tr '\n' ' ')" ""
# Each function has its page or a link (the page's NAME names it), and each page its SYNOPSIS.
sh "$SRC/config/herd_man_links.sh" "$SRC"/ompi-shim/man/*.3 | cut -d' ' -f1 >"$WORK/names"
for page in "$SRC"/ompi-shim/man/*.3; do basename "$page" .3; done >>"$WORK/names"
sed -n 's/^[^(]* \**\(herd_[a-z_]*\)(.*/\1/p' "$WORK/header" | sort >"$WORK/functions"
expect_eq "every function of <herd.h> has a page or a link named after it" \
    "$(sort "$WORK/names" | comm -23 "$WORK/functions" - | tr '\n' ' ')" ""
expect_eq "no page or link names a function <herd.h> lacks" \
    "$(sort "$WORK/names" | comm -13 "$WORK/functions" - | tr '\n' ' ')" ""

# Lint: groff's warnings, mandoc's warnings and errors (its STYLE notes are left out: they ask
# for lines under 80 bytes in the source).
if ! command -v groff >/dev/null || ! command -v mandoc >/dev/null; then
    fail "groff and mandoc are installed (contrib/build-lib.sh installs them)"
else
    for page in $(find "$SRC/orte" "$SRC/ompi-shim" -name '*.[13]' -not -path '*/_*'); do
        groff -wall -mandoc -Tutf8 -z "$page" >"$OUT" 2>"$ERR"
        rc=$?
        [ -s "$ERR" ] && rc=1
        expect_rc "groff -wall -mandoc: $(basename "$page") has no warning" 0
        mandoc -Tlint -Wwarning "$page" >"$OUT" 2>"$ERR"
        rc=$?
        expect_rc "mandoc -Tlint -Wwarning: $(basename "$page") has no warning" 0
    done
fi
finish
