#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Set up a fresh Debian 12 machine for herd and run it: install the packages herd needs (when
# missing), build, install into PREFIX (default: ./install), and run real jobs: herd-info, a
# job on this host, and a job on a DVM of simulated nodes.
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
herd_log "$PREFIX/bin/herdrun: a job of 2 processes on this host"
"$PREFIX/bin/herdrun" -n 2 --report-bindings sh -c 'echo "rank $HERD_RANK of $HERD_SIZE on $(hostname)"'
herd_log "$PREFIX/bin/herdrun: 32 processes on a DVM of 8 simulated nodes, with the map and usage"
"$PREFIX/bin/herdrun" --mca ras_simulator_num_nodes 8 --mca ras_simulator_slots 4 -n 32 \
    --map-by node --display-map --report-usage sh -c 'exit 0' >_build/job.out
grep -E '^(=== job map|node sim000[12]|Resource usage|  job:)' _build/job.out
