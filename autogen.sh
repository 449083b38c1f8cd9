#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Regenerate the build system: gather every component's configure.m4 (config/herd_mca_scan.sh),
# then run autoreconf. Re-run after adding or removing a component folder.
set -e
cd "$(dirname "$0")"
command -v autoreconf >/dev/null || { echo "autogen.sh: autoreconf not found; install autoconf, automake, libtool (Debian: apt-get install autoconf automake libtool libtool-bin libltdl-dev)" >&2; exit 1; }
command -v libtoolize >/dev/null || { echo "autogen.sh: libtoolize not found; install libtool (Debian: apt-get install libtool libtool-bin)" >&2; exit 1; }
sh config/herd_mca_scan.sh
mkdir -p config/m4 config/build-aux
autoreconf -fi -Wall,no-obsolete
echo "autogen.sh: done; now run ./configure"
