#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# An installed herd as a site uses it: make install (into a scratch DESTDIR), the tree moved to
# another folder and run from there (components, help files and the parameter file follow the
# tree; HERD_PREFIX points elsewhere), `module load herd` with Lmod and with Environment Modules
# (whichever are installed), and the man pages found by man and `man -k` (mandb). Run alone,
# never beside other tests: make install relinks libraries in the build tree they load.
. "$(dirname "$0")/lib.sh"
SIM="--mca ras simulator --mca ras_simulator_num_nodes"
# The tests' own settings (the build tree, no parameter files): an installed herd does without.
unset HERD_MCA_component_path HERD_HELP_PATH HERD_MCA_param_files

make -C "$HERD_BUILDDIR" install DESTDIR="$WORK/stage" >"$OUT" 2>"$ERR"
rc=$?
expect_rc "make install DESTDIR=..." 0
prefix=$(sed -n 's/^prefix = //p' "$HERD_BUILDDIR/Makefile")
version=$(sed -n 's/^PACKAGE_VERSION = //p' "$HERD_BUILDDIR/Makefile")
tree=$WORK/moved/herd-$version
mkdir -p "$WORK/moved" && mv "$WORK/stage$prefix" "$tree"
rm -rf "$WORK/stage"

# --- the moved tree runs: components from its pkglibdir, messages from its help files
(cd "$WORK" && HERD_IT_TAG=$HERD_IT_TAG "$tree/bin/herd-info" --parsable) >"$OUT" 2>"$ERR"
rc=$?
expect_rc "moved tree: herd-info runs" 0
expect_out "moved tree: herd-info says where it is" "^path:prefix:$tree\$"
expect_out "moved tree: components found in its lib/herd" "^mca:fabric:tcp:file:$tree/lib/herd/herd_fabric_tcp.so\$"
HERD_IT_TAG=$HERD_IT_TAG "$tree/bin/herdrun" -n 0 true >"$OUT" 2>"$ERR"
rc=$?
expect_rc "moved tree: a command-line mistake is an error" 1
expect_err "moved tree: the message comes from its help file" '"0" is not a number of processes'
expect_no_err "moved tree: no help file is missing" "help file is missing"
shm_mark
HERD_IT_TAG=$HERD_IT_TAG "$tree/bin/herdrun" $SIM 3 -n 3 --map-by node sh -c 'echo $HERD_RANK' \
    </dev/null >"$OUT" 2>"$ERR"
rc=$?
expect_rc "moved tree: a job on 3 simulated nodes" 0
expect_eq "moved tree: every rank once" "$(sort "$OUT" | tr '\n' ' ')" "0 1 2 "
check_clean "moved tree: a job on 3 simulated nodes"
# its parameter file ($(sysconfdir) under the prefix) moved with it
mkdir -p "$tree/etc" && echo "odls_base_kill_grace_ms = 1234" >"$tree/etc/herd-mca-params.conf"
HERD_IT_TAG=$HERD_IT_TAG "$tree/bin/herd-info" --param odls base --parsable >"$OUT" 2>"$ERR"
rc=$?
expect_out "moved tree: its etc/herd-mca-params.conf is read" "odls_base_kill_grace_ms:value:1234"
rm -f "$tree/etc/herd-mca-params.conf"

# --- HERD_PREFIX: another tree's help files and components win over the tree of the libraries
other=$WORK/other
cp -a "$tree" "$other"
sed -i 's/is not a number of processes/IS NOT A COUNT (from the other tree)/' \
    "$other/share/herd/help-herdrun.txt"
HERD_PREFIX=$other/ HERD_IT_TAG=$HERD_IT_TAG "$tree/bin/herdrun" -n 0 true >"$OUT" 2>"$ERR"
rc=$?
expect_err "HERD_PREFIX: help files from that prefix" "IS NOT A COUNT \\(from the other tree\\)"
HERD_PREFIX=$other HERD_IT_TAG=$HERD_IT_TAG "$tree/bin/herd-info" --parsable >"$OUT" 2>"$ERR"
expect_out "HERD_PREFIX: components from that prefix" "^mca:fabric:tcp:file:$other/lib/herd/herd_fabric_tcp.so\$"
HERD_PREFIX=$WORK/nowhere HERD_IT_TAG=$HERD_IT_TAG "$tree/bin/herdrun" -n 0 true >"$OUT" 2>"$ERR"
expect_err "HERD_PREFIX naming no herd: the missing help file is said, with where it looked" \
    "help file is missing.*|searched: +$WORK/nowhere/share/herd"
rm -rf "$other"

# --- man pages: found by man, and by man -k once mandb indexed the tree
MANPATH=$tree/share/man man -w herdrun >"$OUT" 2>"$ERR"
rc=$?
expect_out "man finds herdrun(1) in the tree" "^$tree/share/man/man1/herdrun.1\$"
MANPATH=$tree/share/man man -w 3 herd_finalize >"$OUT" 2>"$ERR"
expect_out "man finds herd_finalize(3), a link to herd_init(3)" "man3/herd_init.3\$"
MANPATH=$tree/share/man man 3 herd_finalize 2>/dev/null | grep -Eq "herd_init, +herd_finalize" &&
    ok "man herd_finalize shows herd_init(3)" || fail "man herd_finalize shows herd_init(3)"
mandb -q "$tree/share/man" >"$OUT" 2>"$ERR"
MANPATH=$tree/share/man man -k herd >"$OUT" 2>"$ERR"
for page in 'herdrun \(1\)' 'herd-dvm \(1\)' 'herd-info \(1\)' 'herdd \(1\)' 'herd_init \(3\)' \
    'herd_send \(3\)'; do
    expect_out "man -k herd lists $page" "^$page"
done

# --- module load herd: Lmod and Environment Modules read the same Tcl modulefile
modulefile=$tree/share/modulefiles/herd/$version
[ -f "$modulefile" ] && ok "make install installs share/modulefiles/herd/$version" ||
    fail "make install installs share/modulefiles/herd/$version"
# module_job INIT: in a clean shell with the `module` command of INIT, load herd and run a job.
module_job() {
    env -u MANPATH -u LD_LIBRARY_PATH -u PKG_CONFIG_PATH HERD_IT_TAG=$HERD_IT_TAG bash -c "
        $1
        module use '$tree/share/modulefiles' && module load herd || exit 9
        echo \"which: \$(command -v herdrun)\"
        echo \"LD_LIBRARY_PATH: \$LD_LIBRARY_PATH\"
        echo \"PKG_CONFIG_PATH: \$PKG_CONFIG_PATH\"
        echo \"man: \$(man -w herdrun)\"
        echo \"man ls: \$(man -w ls)\"
        echo \"pkg-config: \$(pkg-config --modversion herd)\"
        herdrun $SIM 2 -n 2 --map-by node sh -c 'echo rank \$HERD_RANK' | sort
        module unload herd
        echo \"unloaded: \$(command -v herdrun || echo none)\"
    " </dev/null >"$OUT" 2>"$ERR"
    rc=$?
}
check_module_job() {
    expect_rc "$1: module load herd, a job, module unload" 0
    expect_out "$1: PATH" "^which: $tree/bin/herdrun\$"
    expect_out "$1: LD_LIBRARY_PATH" "^LD_LIBRARY_PATH: $tree/lib(:|\$)"
    expect_out "$1: PKG_CONFIG_PATH" "^PKG_CONFIG_PATH: $tree/lib/pkgconfig(:|\$)"
    expect_out "$1: MANPATH (herd's pages)" "^man: $tree/share/man/man1/herdrun.1\$"
    expect_out "$1: MANPATH (the system's pages still found)" "^man ls: /usr/share/man/"
    expect_out "$1: pkg-config herd" "^pkg-config: $version\$"
    expect_eq "$1: the job ran" "$(grep -c '^rank [01]$' "$OUT")" 2
    expect_out "$1: module unload takes herd away again" "^unloaded: none\$"
    check_clean "$1: the job"
}
tested=0
lmod_init=/usr/share/lmod/lmod/init/bash
if [ -f "$lmod_init" ]; then
    module_job ". $lmod_init"
    check_module_job "Lmod"
    tested=$((tested + 1))
fi
# Environment Modules: installed, or unpacked beside Lmod (the two packages conflict) by
# contrib/build-lib.sh's herd_fetch_envmodules into HERD_ENVMODULES_ROOT.
for modulecmd in /usr/lib/x86_64-linux-gnu/modulecmd.tcl /usr/share/modules/libexec/modulecmd.tcl \
    "${HERD_ENVMODULES_ROOT:-$HERD_SRCDIR/_deps/environment-modules}/usr/lib/x86_64-linux-gnu/modulecmd.tcl"; do
    [ -f "$modulecmd" ] || continue
    module_job "module() { eval \"\$(tclsh '$modulecmd' bash \"\$@\")\"; }"
    check_module_job "Environment Modules"
    tested=$((tested + 1))
    break
done
[ "$tested" -gt 0 ] && ok "the modulefile was loaded by $tested module system(s)" ||
    fail "no module system to test with (contrib/build-lib.sh installs lmod)"
finish
