#!/bin/sh
# Set up a fresh Debian 12 machine for herd and run it: install the packages herd needs (when
# missing), build, install into PREFIX (default: ./install), and run the main job (for now:
# herd-info, and a DVM of simulated nodes brought up and down; herdrun comes next).
# Usage: contrib/setup-debian.sh [PREFIX]
set -eu
cd "$(dirname "$0")/.."
. contrib/build-lib.sh
PREFIX=${1:-$(pwd)/install}
herd_install_deps
herd_build _build "--prefix=$PREFIX"
herd_log "make install (into $PREFIX)"
make -C _build install >_build/install.out 2>&1 || { tail -n 30 _build/install.out >&2; exit 1; }
herd_log "$PREFIX/bin/herd-info"
"$PREFIX/bin/herd-info"
herd_log "$PREFIX/bin/herd-dvm: a DVM of 8 simulated nodes, up and down"
"$PREFIX/bin/herd-dvm" --mca ras_simulator_num_nodes 8 --display-allocation --exit-when-ready
