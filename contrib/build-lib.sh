# SPDX-License-Identifier: BSD-3-Clause
# Shared by contrib/setup-debian.sh and contrib/run-tests.sh: install the Debian packages herd
# needs when they are missing, and build herd in a folder. Source it; it defines functions only.

# Build, test and benchmark dependencies (Debian 12 package names).
HERD_DEBIAN_PACKAGES="gcc make autoconf automake libtool libtool-bin libltdl-dev pkg-config
    libhwloc-dev hwloc libevent-dev libfabric-dev libucx-dev libpmix-dev libcmocka-dev libsodium-dev
    valgrind clang libclang-rt-14-dev lld iproute2 procps openssh-server openssh-client
    groff mandoc man-db lmod debhelper lintian fakeroot chrpath rpm libpmix-bin gdb python3"

herd_log() { printf '==> %s\n' "$*"; }

# What the tests need besides: Open MPI and MPICH, whose unmodified programs the wireup tests run
# under herdrun (and which the benchmarks compare against).
HERD_TEST_PACKAGES="openmpi-bin libopenmpi-dev mpich libmpich-dev"

# Install whatever of HERD_DEBIAN_PACKAGES (and of the packages named as arguments) is missing
# (apt-get update first), as root or sudo.
herd_install_deps() {
    missing=""
    for p in $HERD_DEBIAN_PACKAGES "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing="$missing $p"
    done
    [ -z "$missing" ] && { herd_log "Debian packages: all present"; return 0; }
    herd_log "installing Debian packages:$missing"
    if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else
        echo "herd: these Debian packages are missing and I am not root:$missing" >&2
        echo "herd: install them (apt-get install$missing) and run me again" >&2
        return 1
    fi
    $sudo apt-get update -q >/dev/null || { echo "herd: apt-get update failed" >&2; return 1; }
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q $missing >/dev/null ||
        { echo "herd: apt-get install$missing failed" >&2; return 1; }
}

# herd_build DIR [configure options...]: autogen when needed, configure into DIR (again when
# the options changed), make. Warnings are errors here, so a warning cannot slip in.
herd_build() {
    dir=$1; shift
    top=$(pwd)
    if [ ! -x configure ] || [ -n "$(find . -path ./_build\* -prune -o -name configure.m4 -newer configure -print 2>/dev/null | head -1)" ]; then
        herd_log "autogen.sh"
        ./autogen.sh >autogen.out 2>&1 || { cat autogen.out >&2; return 1; }
    fi
    mkdir -p "$dir"
    opts="--enable-werror $*"
    if [ ! -f "$dir/Makefile" ] || [ "$(cat "$dir/.herd-configure-options" 2>/dev/null)" != "$opts" ]; then
        # what was built with other options (another --prefix: libtool's rpaths) is not rebuilt
        # by make alone, and libtool would refuse to install it: start the folder afresh
        if [ -f "$dir/Makefile" ]; then
            herd_log "configure options changed: cleaning $dir"
            make -C "$dir" distclean >/dev/null 2>&1 || true
        fi
        herd_log "configure $opts (in $dir)"
        (cd "$dir" && "$top/configure" $opts >configure.out 2>&1) ||
            { tail -n 30 "$dir/configure.out" >&2; return 1; }
        echo "$opts" > "$dir/.herd-configure-options"
    fi
    herd_log "make (in $dir)"
    make -C "$dir" -j"$(nproc)" >"$dir/make.out" 2>&1 || { grep -E -B2 -A8 'error|Error' "$dir/make.out" | tail -n 60 >&2; return 1; }
}

# herd_fetch_envmodules DIR: Environment Modules unpacked into DIR (not installed: Debian's
# package conflicts with lmod, which the suite installs), so test_install.sh loads herd's
# modulefile with both. Downloaded once (apt-get download, the Debian archive only).
herd_fetch_envmodules() {
    dir=$1
    [ -f "$dir/usr/lib/x86_64-linux-gnu/modulecmd.tcl" ] && return 0
    tmp=$(mktemp -d) || return 1
    # (apt-get update first when the package lists do not have it yet)
    { (cd "$tmp" && apt-get download -q environment-modules >/dev/null 2>&1) ||
        { apt-get update -q >/dev/null 2>&1 &&
            (cd "$tmp" && apt-get download -q environment-modules >/dev/null 2>&1); }; } &&
        mkdir -p "$dir" && dpkg-deb -x "$tmp"/environment-modules_*.deb "$dir"
    status=$?
    rm -rf "$tmp"
    [ $status -eq 0 ] || echo "herd: could not unpack Environment Modules into $dir" >&2
    return $status
}
