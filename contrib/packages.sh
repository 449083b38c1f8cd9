#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Build herd's Debian packages and RPMs from the `make dist` tarball as a distribution would,
# and check them: lintian reports no error (its warnings are printed), the .debs install on
# this machine and run herd-info, jobs on this host and on simulated nodes and a libherd program
# built with pkg-config, man -k finds the pages, and removing the packages leaves nothing
# behind; rpmbuild -bb builds the same split. contrib/run-tests.sh runs it as a stage.
# Usage: contrib/packages.sh [BUILD_DIR [WORK_DIR]]   (defaults: _build, _build-pkg)
# Needs root (dpkg -i). Refuses to run when a herd package is installed already.
set -u
cd "$(dirname "$0")/.."
TOP=$(pwd)
BUILD=${1:-_build}
WORK=${2:-$TOP/_build-pkg}
DEBS="herd herd-fabric-ofi herd-fabric-ucx libherd0 libherd-dev"
failed=0
say() { printf '==> %s\n' "$*"; }
bad() {
    echo "FAILED: $*"
    failed=$((failed + 1))
}

installed_herd() { dpkg-query -W -f='${Package} ${Status}\n' $DEBS 2>/dev/null | grep ' installed$'; }
if [ -n "$(installed_herd)" ]; then
    echo "packages.sh: herd packages are installed already ($(installed_herd | cut -d' ' -f1 |
        tr '\n' ' ')); remove them first (dpkg --purge)" >&2
    exit 2
fi
[ "$(id -u)" -eq 0 ] || { echo "packages.sh: dpkg -i needs root" >&2; exit 2; }

# ---- the tarball, and the version every packaging file must carry
say "make dist (in $BUILD)"
rm -f "$BUILD"/herd-*.tar.gz
make -C "$BUILD" dist >"$WORK.dist.log" 2>&1 || { tail -n 20 "$WORK.dist.log"; exit 1; }
tarball=$(ls "$BUILD"/herd-*.tar.gz)
version=$(basename "$tarball" .tar.gz | sed 's/^herd-//')
rm -rf "$WORK" && mkdir -p "$WORK/deb" "$WORK/rpm/SOURCES"
deb_version=$(sed -n '1s/^herd (\([^)-]*\)-[^)]*).*/\1/p' contrib/debian/changelog)
rpm_version=$(sed -n 's/^Version: *//p' contrib/herd.spec)
[ "$deb_version" = "$version" ] || bad "contrib/debian/changelog is at $deb_version, configure.ac at $version"
[ "$rpm_version" = "$version" ] || bad "contrib/herd.spec is at $rpm_version, configure.ac at $version"

# ---- Debian: dpkg-buildpackage in the unpacked tarball, with contrib/debian as debian/
say "dpkg-buildpackage -us -uc -b (herd $version)"
tar -C "$WORK/deb" -xzf "$tarball"
src=$WORK/deb/herd-$version
cp -r "$src/contrib/debian" "$src/debian"
if ! (cd "$src" && dpkg-buildpackage -us -uc -b -j"$(nproc)") >"$WORK/deb/build.log" 2>&1; then
    grep -E -B2 -A10 'error|Error|dh_missing' "$WORK/deb/build.log" | tail -n 40
    echo "FAILED: dpkg-buildpackage ($WORK/deb/build.log)"
    exit 1
fi
for p in $DEBS; do
    ls "$WORK/deb/${p}_${version}-"*.deb >/dev/null 2>&1 || bad "no package $p was built"
done
say "lintian"
lintian --fail-on error --suppress-tags-from-file /dev/null "$WORK"/deb/*.changes \
    >"$WORK/deb/lintian.log" 2>&1
lintian_rc=$?
cat "$WORK/deb/lintian.log"
[ $lintian_rc -eq 0 ] || bad "lintian reports errors"
# each package holds what it should: the libfabric/UCX components only in theirs
contents() { dpkg-deb -c "$WORK/deb/${1}_${version}-"*.deb | awk '{print $6}'; }
contents herd | grep -q 'herd/herd_fabric_tcp.so$' || bad "herd lacks the tcp fabric component"
contents herd | grep -Eq '(ofi|ucx)\.so$' && bad "herd holds a libfabric or UCX component"
contents herd-fabric-ofi | grep -q 'herd/herd_fabric_ofi.so$' || bad "herd-fabric-ofi lacks fabric ofi"
contents herd-fabric-ofi | grep -q 'herd/herd-btl-ofi.so$' || bad "herd-fabric-ofi lacks btl ofi"
contents herd-fabric-ucx | grep -q 'herd/herd_fabric_ucx.so$' || bad "herd-fabric-ucx lacks fabric ucx"
contents libherd0 | grep -q 'libherd.so.0$' || bad "libherd0 lacks libherd.so.0"
contents libherd-dev | grep -q 'pkgconfig/herd.pc$' || bad "libherd-dev lacks herd.pc"
contents libherd-dev | grep -q 'man3/herd_finalize.3' || bad "libherd-dev lacks the man3 links"

# ---- install, run, remove
say "dpkg -i, a smoke run, dpkg --purge"
trap 'dpkg --purge $DEBS >/dev/null 2>&1' EXIT
if ! dpkg -i $(for p in $DEBS; do ls "$WORK/deb/${p}_${version}-"*.deb; done) \
    >"$WORK/deb/install.log" 2>&1; then
    cat "$WORK/deb/install.log"
    bad "dpkg -i"
fi
for p in $DEBS; do dpkg -L "$p"; done 2>/dev/null | sort -u >"$WORK/deb/files"
run() { (cd "$WORK" && env -u HERD_MCA_component_path -u HERD_HELP_PATH "$@") </dev/null; }
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
out=$(run herd-info --parsable 2>&1)
echo "$out" | grep -q "^mca:fabric:ofi:file:/usr/lib/$multiarch/herd/herd_fabric_ofi.so$" ||
    bad "installed herd-info does not find the ofi component: $(echo "$out" | grep fabric | head -n 5)"
echo "$out" | grep -q "^path:prefix:/usr$" || bad "installed herd-info: prefix is not /usr"
got=$(run herdrun -n 2 --oversubscribe sh -c 'echo "rank $HERD_RANK ${PMIX_RANK:-no-pmix}"' | sort |
    tr '\n' ' ')
[ "$got" = "rank 0 0 rank 1 1 " ] || bad "installed herdrun -n 2: got '$got'"
got=$(run herdrun --mca ras_simulator_num_nodes 3 -n 3 --map-by node sh -c 'echo $HERD_RANK' |
    sort | tr '\n' ' ')
[ "$got" = "0 1 2 " ] || bad "installed herdrun on 3 simulated nodes: got '$got'"
cat >"$WORK/hello.c" <<'PROGRAM'
#include <herd.h>
#include <stdio.h>
int main(void)
{
    if (HERD_SUCCESS != herd_init()) {
        fprintf(stderr, "herd_init: %s\n", herd_last_error());
        return 1;
    }
    printf("hello %u of %u\n", herd_rank(), herd_size());
    return HERD_SUCCESS == herd_barrier() && HERD_SUCCESS == herd_finalize() ? 0 : 1;
}
PROGRAM
# shellcheck disable=SC2046
if cc -o "$WORK/hello" "$WORK/hello.c" $(pkg-config --cflags --libs herd) 2>"$WORK/cc.log"; then
    got=$(run herdrun -n 2 --oversubscribe "$WORK/hello" | sort | tr '\n' ' ')
    [ "$got" = "hello 0 of 2 hello 1 of 2 " ] || bad "a libherd program under herdrun: got '$got'"
else
    bad "cc hello.c \$(pkg-config --cflags --libs herd): $(cat "$WORK/cc.log")"
fi
man -k herd >"$WORK/deb/man-k.txt" 2>&1
for page in 'herdrun (1)' 'herd-dvm (1)' 'herd-info (1)' 'herdd (1)' 'herd_init (3)'; do
    grep -qF "$page" "$WORK/deb/man-k.txt" || bad "man -k herd does not list $page"
done
dpkg --purge $DEBS >"$WORK/deb/purge.log" 2>&1 || { cat "$WORK/deb/purge.log"; bad "dpkg --purge"; }
trap - EXIT
left=""
while read -r f; do
    [ "$f" = /. ] && continue
    [ -e "$f" ] || [ -L "$f" ] || continue
    # a folder another package owns too (/usr/bin, /usr/share/man/man1) stays
    [ -d "$f" ] && [ ! -L "$f" ] && dpkg -S "$f" >/dev/null 2>&1 && continue
    left="$left $f"
done <"$WORK/deb/files"
[ -z "$left" ] || bad "left after dpkg --purge:$left"
[ -z "$(installed_herd)" ] || bad "herd packages still installed after dpkg --purge"

# ---- RPM: rpmbuild -bb from the same tarball (Debian's rpm has no RPM database of the build
# dependencies: --nodeps; no debuginfo tooling: no debug package)
say "rpmbuild -bb contrib/herd.spec"
cp "$tarball" "$WORK/rpm/SOURCES/"
if rpmbuild -bb --nodeps --define "_topdir $WORK/rpm" --define 'debug_package %{nil}' \
    "$src/contrib/herd.spec" >"$WORK/rpm/build.log" 2>&1; then
    for p in herd herd-fabric-ofi herd-fabric-ucx herd-libs herd-devel; do
        rpm=$(ls "$WORK"/rpm/RPMS/*/"$p-$version"-*.rpm 2>/dev/null | head -n 1)
        [ -n "$rpm" ] || { bad "no RPM $p was built"; continue; }
        echo "$(basename "$rpm"): $(rpm -qlp "$rpm" 2>/dev/null | wc -l) files"
    done
    rpm -qlp "$WORK"/rpm/RPMS/*/herd-fabric-ucx-"$version"-*.rpm 2>/dev/null |
        grep -q 'herd/herd_fabric_ucx.so$' || bad "herd-fabric-ucx RPM lacks fabric ucx"
    rpm -qlp "$WORK"/rpm/RPMS/*/herd-"$version"-*.rpm 2>/dev/null | grep -Eq '(ofi|ucx)\.so$' &&
        bad "herd RPM holds a libfabric or UCX component"
else
    tail -n 30 "$WORK/rpm/build.log"
    bad "rpmbuild -bb ($WORK/rpm/build.log)"
fi

[ $failed -eq 0 ] && say "packages: all good" || say "packages: $failed problem(s)"
[ $failed -eq 0 ]
