#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A DVM over ssh on test hosts, side by side with a whole `hostname` job of MPICH's Hydra on the
# same hosts (and Slurm's srun, with --slurm), in one run.
# Usage: contrib/bench/dvm_ssh.sh [--slurm] [PREFIX] [REPEATS]
#   PREFIX: an installed herd (default ./install, as contrib/setup-debian.sh makes it).
#   REPEATS (default 5): timed runs per cell after one untimed warm-up; the launchers of one size
#     take turns, one run each per round.
#   --slurm: also Slurm on the hosts (../shared/testhosts/slurm-up.sh: slurmctld on n1, slurmd
#     on n2..n8): `srun -N K hostname` and herd-dvm inside `salloc -N K` (plm slurm), K = N - 1.
# Needs root (network namespaces) and ../shared/testhosts (or HERD_TESTHOSTS): brings up 8 test
# hosts of its own (a free TESTHOSTS_ID, held with flock as the tests do, a state folder under
# TMPDIR), runs everything from n1, and tears everything down on exit. For N = 4 and 8 hosts:
#   herd-dvm -H n1,...,nN --mca plm_ssh_args "-F CONFIG -x" --exit-when-ready
#       the whole command (start, ready, shutdown, every daemon reaped) and the "DVM ready"
#       time it reports;
#   mpiexec.hydra -launcher ssh -launcher-exec SSH -iface eth0 -hosts IP1,...,IPN -n N hostname
#       SSH: ssh -F CONFIG; the hosts by address and -iface: the test hosts' names resolve only
#       through the ssh configuration, and Hydra's proxies connect back by address.
# Cells: "median / best" of the wall times in ms (date +%s%N around the command, the namespace
# entry included for every launcher alike); ratios use the medians. Timings are reported, never
# asserted. The machine's load average is printed before and after: other work on it shows in
# every cell.
set -eu
SLURM=no
case "${1:-}" in
--slurm) SLURM=yes; shift ;;
-h | --help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
PREFIX=${1:-$(cd "$HERE/../.." && pwd)/install}
REPEATS=${2:-5}
DVM=$PREFIX/bin/herd-dvm
TESTHOSTS=${HERD_TESTHOSTS:-$(cd "$HERE/../.." && pwd)/../shared/testhosts}
[ -x "$DVM" ] || { echo "dvm_ssh.sh: $DVM not found; build and install first" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "dvm_ssh.sh: needs root (network namespaces)" >&2; exit 1; }
[ -x "$TESTHOSTS/up.sh" ] || { echo "dvm_ssh.sh: no test hosts at $TESTHOSTS" >&2; exit 1; }
HYDRA=$(command -v mpiexec.hydra || command -v mpiexec.mpich || true)

TMP=$(mktemp -d "${TMPDIR:-/tmp}/dvm-ssh-bench.XXXXXX")
HOSTS=$TMP/hosts
ID=""
MUNGE_WAS_RUNNING=no
cleanup() {
    if [ -f "$HOSTS/slurm/slurm.conf" ]; then
        slurm_pids=$(cat "$HOSTS"/slurm/*.pid 2>/dev/null || true)
        bash "$TESTHOSTS/slurm-down.sh" "$HOSTS" >/dev/null 2>&1 || true
        # slurmctld writes its state while it stops: its folder goes once it is gone
        for _ in $(seq 1 50); do
            alive=""
            for p in $slurm_pids; do kill -0 "$p" 2>/dev/null && alive=yes; done
            [ -z "$alive" ] && break
            sleep 0.1
        done
        if [ "$MUNGE_WAS_RUNNING" = no ] && [ -f /run/munge/munged.pid ]; then
            kill "$(cat /run/munge/munged.pid)" 2>/dev/null || true
        fi
    fi
    [ -f "$HOSTS/namespaces" ] && bash "$TESTHOSTS/down.sh" "$HOSTS" >/dev/null 2>&1
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A free set of test hosts: its lock held on fd 9 for as long as this script runs.
id=1
while [ $id -le 250 ]; do
    exec 9>"/run/lock/herd-testhosts.$id"
    if flock -n 9 && ! ip netns list | awk '{print $1}' | grep -qx "herd-$id-br"; then
        ID=$id
        break
    fi
    exec 9>&-
    id=$((id + 1))
done
[ -n "$ID" ] || { echo "dvm_ssh.sh: no free test-host set" >&2; exit 1; }
TESTHOSTS_ID=$ID bash "$TESTHOSTS/up.sh" 8 "$HOSTS" >"$TMP/up.log" 2>&1 ||
    { cat "$TMP/up.log" >&2; exit 1; }
. "$HOSTS/hosts.env"
CONFIG=$HOSTS/ssh_config
if [ "$SLURM" = yes ]; then
    [ -S /run/munge/munge.socket.2 ] && pgrep -x munged >/dev/null && MUNGE_WAS_RUNNING=yes
    bash "$TESTHOSTS/slurm-up.sh" 8 "$HOSTS" >>"$TMP/up.log" 2>&1 ||
        { cat "$TMP/up.log" >&2; exit 1; }
fi
printf '#!/bin/sh\nexec ssh -F %s "$@"\n' "$CONFIG" >"$TMP/ssh"
chmod +x "$TMP/ssh"

# on_n1 CMD...: CMD on test host n1
on_n1() {
    ip netns exec "${TESTHOSTS_NS}1" unshare --uts sh -c 'hostname n1; exec "$@"' sh "$@"
}

# run_once NAME N CMD...: one run of CMD on n1, its ms appended to $TMP/ms.NAME.N (and, for
# herd-dvm, the ready time it reports to $TMP/ready.NAME.N); a failure marks the cell FAIL.
run_once() {
    name=$1
    n=$2
    shift 2
    [ -e "$TMP/fail.$name.$n" ] && return 0
    t0=$(date +%s%N)
    if on_n1 timeout 120 "$@" >"$TMP/out" 2>&1; then
        t1=$(date +%s%N)
        echo $(((t1 - t0) / 1000)) | awk '{printf "%.1f\n", $1 / 1000}' >>"$TMP/ms.$name.$n"
        sed -n 's/^DVM ready: .*, \([0-9.]*\) s$/\1/p' "$TMP/out" |
            awk '{printf "%.0f\n", $1 * 1000}' >>"$TMP/ready.$name.$n"
    else
        : >"$TMP/fail.$name.$n"
        { echo "dvm_ssh.sh: $name on $n hosts failed: $*"; tail -n 20 "$TMP/out"; } >&2
    fi
}

# median FILE: the middle value (mean of the middle two), "" if none
median() {
    [ -s "$1" ] || return 0
    sort -n "$1" | awk '{ v[NR] = $1 } END {
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.0f", m }'
}
cell() {
    [ -e "$TMP/fail.$1.$2" ] && { echo FAIL; return 0; }
    [ -s "$TMP/ms.$1.$2" ] || { echo n/a; return 0; }
    echo "$(median "$TMP/ms.$1.$2") / $(sort -n "$TMP/ms.$1.$2" | head -n 1 | awk '{printf "%.0f", $1}')"
}
ratio() {
    a=$(median "$TMP/$1") b=$(median "$TMP/$2")
    [ -n "$a" ] && [ -n "$b" ] && echo "$a $b" | awk '{printf "%.2f", $1 / $2}' || echo n/a
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for n in 4 8; do
    names="" ips=""
    for i in $(seq 1 "$n"); do
        names="$names${names:+,}n$i"
        ips="$ips${ips:+,}$TESTHOSTS_NET.$i"
    done
    k=$((n - 1))
    round=0
    while [ $round -le "$REPEATS" ]; do
        [ $round -eq 1 ] && rm -f "$TMP"/ms.*."$n" "$TMP"/ready.*."$n" # round 0: warm-up
        run_once herd "$n" "$DVM" -H "$names" --mca plm_ssh_args "-F $CONFIG -x" --exit-when-ready
        [ -n "$HYDRA" ] && run_once hydra "$n" "$HYDRA" -launcher ssh -launcher-exec "$TMP/ssh" \
            -iface eth0 -hosts "$ips" -n "$n" hostname
        if [ "$SLURM" = yes ]; then
            run_once srun "$n" env SLURM_CONF="$HOSTS/slurm/slurm.conf" srun -N "$k" -n "$k" hostname
            run_once herd_slurm "$n" env SLURM_CONF="$HOSTS/slurm/slurm.conf" salloc -N "$k" \
                --quiet "$DVM" --exit-when-ready
        fi
        round=$((round + 1))
    done
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"

printf '\n%-6s %-22s %-16s %-22s %-14s\n' hosts "herd-dvm up+down (ms)" "herd ready (ms)" \
    "hydra hostname (ms)" "ready / hydra"
for n in 4 8; do
    printf '%-6s %-22s %-16s %-22s %-14s\n' "$n" "$(cell herd "$n")" \
        "$(median "$TMP/ready.herd.$n")" "$(cell hydra "$n")" "$(ratio "ready.herd.$n" "ms.hydra.$n")"
done
if [ "$SLURM" = yes ]; then
    printf '\n%-6s %-26s %-16s %-22s %-14s\n' hosts "herd-dvm in salloc (ms)" "herd ready (ms)" \
        "srun hostname (ms)" "ready / srun"
    for n in 4 8; do
        printf '%-6s %-26s %-16s %-22s %-14s\n' "$((n - 1))" "$(cell herd_slurm "$n")" \
            "$(median "$TMP/ready.herd_slurm.$n")" "$(cell srun "$n")" \
            "$(ratio "ready.herd_slurm.$n" "ms.srun.$n")"
    done
fi
