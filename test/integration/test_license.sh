#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The license: every tracked source, script and build file carries the SPDX line
# (contrib/spdx-add.sh --check, whose rules list the exempt files and why), and the script that
# adds it keeps shebangs and modulefile cookies first, changes nothing a user sees (a help
# catalog prints the same message, a man page renders the same) and does nothing the second time.
. "$(dirname "$0")/lib.sh"
SRC=$HERD_SRCDIR

[ -f "$SRC/LICENSE" ] && grep -q "BSD 3-Clause" "$SRC/LICENSE" && grep -q "The herd authors" "$SRC/LICENSE" &&
    ok "LICENSE: BSD-3-Clause, the herd authors" || fail "LICENSE: BSD-3-Clause, the herd authors"

if git -C "$SRC" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    sh "$SRC/contrib/spdx-add.sh" --check >"$OUT" 2>"$ERR"
    rc=$?
    expect_rc "every tracked file has the SPDX line (contrib/spdx-add.sh --check)" 0
else
    echo "SKIP: the source tree is not a git checkout (a tarball): no tracked files to check"
fi

# The script on a scratch repository of sample files: what it adds, where, and only once.
repo=$WORK/repo
mkdir -p "$repo/contrib" "$repo/doc" "$repo/t/fixtures"
cp "$SRC/contrib/spdx-add.sh" "$repo/contrib/"
printf '#!/bin/sh\necho hi\n' >"$repo/run.sh" && chmod +x "$repo/run.sh"
printf '#%%Module1.0\nsetenv X 1\n' >"$repo/contrib/herd.modulefile.in"
printf '/* a file */\nint x;\n' >"$repo/a.c"
printf 'dnl a macro\nAC_DEFUN([X], [])\n' >"$repo/x.m4"
printf '# Messages.\n[topic]\nherd: hello %%s.\n' >"$repo/help-x.txt"
cp "$SRC/orte/tools/herdd/herdd.1" "$repo/page.1"
sed -i '/SPDX-License-Identifier/d' "$repo/page.1"
sed -i '2{/SPDX-License-Identifier/d}' "$repo/contrib/spdx-add.sh"
mkdir -p "$repo/help"
sed '/SPDX-License-Identifier/d' "$SRC/orte/tools/herd-info/help-herd-info.txt" \
    >"$repo/help/help-herd-info.txt"
HERD_HELP_PATH=$repo/help "$HERD_BIN/herd-info/herd-info" --level x 2>"$WORK/help.before"
printf '# Title\n' >"$repo/doc/README.md"
printf 'data\r\n' >"$repo/t/fixtures/crlf.txt"
(cd "$repo" && git init -q && git add -A) >/dev/null 2>&1
groff -mandoc -Tutf8 "$repo/page.1" 2>/dev/null >"$WORK/page.before"
(cd "$repo" && sh contrib/spdx-add.sh) >"$OUT" 2>"$ERR"
rc=$?
expect_rc "spdx-add.sh adds the line" 0
expect_eq "a shebang stays first" "$(head -n 2 "$repo/run.sh" | tr '\n' '|')" \
    "#!/bin/sh|# SPDX-License-Identifier: BSD-3-Clause|"
[ -x "$repo/run.sh" ] && ok "a script stays executable" || fail "a script stays executable"
expect_eq "a modulefile's #%Module cookie stays first" \
    "$(head -n 2 "$repo/contrib/herd.modulefile.in" | tr '\n' '|')" \
    "#%Module1.0|# SPDX-License-Identifier: BSD-3-Clause|"
expect_eq "C: a comment" "$(head -n 1 "$repo/a.c")" "/* SPDX-License-Identifier: BSD-3-Clause */"
expect_eq "m4: dnl" "$(head -n 1 "$repo/x.m4")" "dnl SPDX-License-Identifier: BSD-3-Clause"
expect_eq "man page: a roff comment" "$(head -n 1 "$repo/page.1")" \
    '.\" SPDX-License-Identifier: BSD-3-Clause'
groff -mandoc -Tutf8 "$repo/page.1" 2>/dev/null >"$WORK/page.after"
cmp -s "$WORK/page.before" "$WORK/page.after" && ok "the man page renders the same" ||
    fail "the man page renders the same"
HERD_HELP_PATH=$repo/help "$HERD_BIN/herd-info/herd-info" --level x 2>"$WORK/help.after"
cmp -s "$WORK/help.before" "$WORK/help.after" && grep -q "level" "$WORK/help.after" &&
    ok "a help catalog prints the same message" || fail "a help catalog prints the same message"
expect_eq "exempt: a .md document" "$(cat "$repo/doc/README.md")" "# Title"
expect_eq "exempt: a data fixture" "$(od -c "$repo/t/fixtures/crlf.txt" | head -n 1)" \
    "$(printf 'data\r\n' | od -c | head -n 1)"
sums() { (cd "$repo" && find . -type f -not -path './.git/*' | sort | xargs md5sum); }
sums >"$WORK/sums.first"
(cd "$repo" && sh contrib/spdx-add.sh) >"$OUT" 2>"$ERR"
rc=$?
expect_rc "a second run succeeds" 0
sums >"$WORK/sums.second"
cmp -s "$WORK/sums.first" "$WORK/sums.second" && ok "a second run changes nothing" ||
    fail "a second run changes nothing"
(cd "$repo" && sh contrib/spdx-add.sh --check) >"$OUT" 2>"$ERR"
rc=$?
expect_rc "--check passes afterwards" 0
printf 'int y;\n' >"$repo/b.c" && printf 'x\n' >"$repo/data.bin"
(cd "$repo" && git add -A && sh contrib/spdx-add.sh --check) >"$OUT" 2>"$ERR"
rc=$?
expect_rc "--check fails for a new file without the line" 1
expect_out "--check names it" "^b.c lacks"
expect_err "--check names a file type it has no rule for" "no rule for data.bin"
finish
