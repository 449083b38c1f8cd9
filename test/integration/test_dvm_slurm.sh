#!/bin/sh
# herd-dvm inside a Slurm allocation on the test hosts (../shared/testhosts: slurmctld on n1,
# slurmd on n2 and n3): the allocation from SLURM_JOB_NODELIST, daemons started as one srun
# step, and nothing left afterwards. Needs root; hosts and Slurm are made here and torn down
# on every exit.
. "$(dirname "$0")/lib.sh"

need_testhosts slurm-up.sh
munge_was_running=no
[ -S /run/munge/munge.socket.2 ] && pgrep -x munged >/dev/null && munge_was_running=yes
teardown() {
    # slurmctld and slurmd exit some time after SIGTERM: wait for them (bounded), then kill
    slurm_pids=$(cat "$HOSTS"/slurm/*.pid 2>/dev/null)
    bash "$TESTHOSTS/slurm-down.sh" "$HOSTS" >/dev/null 2>&1
    for pid in $slurm_pids; do
        wait_gone "$pid" 10 || kill -9 "$pid" 2>/dev/null
    done
    bash "$TESTHOSTS/down.sh" "$HOSTS" >/dev/null 2>&1
    # munged is started by slurm-up.sh when it is not running: stop only ours
    if [ "$munge_was_running" = no ] && [ -f /run/munge/munged.pid ]; then
        kill "$(cat /run/munge/munged.pid)" 2>/dev/null
    fi
    rm -rf "$WORK"
}
trap teardown EXIT
if ! bash "$TESTHOSTS/up.sh" 3 "$HOSTS" >"$WORK/up.log" 2>&1 ||
    ! bash "$TESTHOSTS/slurm-up.sh" 3 "$HOSTS" >>"$WORK/up.log" 2>&1; then
    cat "$WORK/up.log"
    fail "the test hosts and Slurm come up"
    finish
    exit 1
fi

# in_allocation ARGS...: run herd-dvm ARGS on n1 inside `salloc -N2` (output $OUT/$ERR, $rc)
in_allocation() {
    ip netns exec herd-n1 unshare --uts sh -c 'hostname n1; exec "$@"' sh \
        env SLURM_CONF="$HOSTS/slurm/slurm.conf" timeout 120 salloc -N2 --quiet \
        "$HERD_BIN/herd-dvm/herd-dvm" "$@" >"$OUT" 2>"$ERR"
    rc=$?
}

in_allocation --display-allocation --exit-when-ready --timeout 60
expect_rc "a DVM inside a Slurm allocation comes up and goes down" 0
expect_out "the allocation comes from Slurm" "source: slurm"
expect_out "with the allocated nodes" "^n2 .*SLURM_JOB_NODELIST"
expect_out "the ready line" "^DVM ready: 2 nodes"
i=0
while [ -n "$(herdd_pids)" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -z "$(herdd_pids)" ] && ok "no daemon left on the Slurm nodes" || fail "daemons left: $(herdd_pids)"

# srun refuses the step: the error says so, with srun's words, and nothing is left.
in_allocation --mca plm_slurm_args "--cpus-per-task=64" --exit-when-ready --timeout 30
expect_fail "an srun error fails the start"
expect_err "the message names a node" "node n[23]"
expect_err "with srun's own words" "srun: .*(error|processors|CPU)"
i=0
while [ -n "$(herdd_pids)" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -z "$(herdd_pids)" ] && ok "no daemon left after the srun error" || fail "daemons left: $(herdd_pids)"

# A Slurm node list that does not parse: a clear error, no crash.
ip netns exec herd-n1 env SLURM_JOB_NODELIST='n[2-' "$HERD_BIN/herd-dvm/herd-dvm" --exit-when-ready >"$OUT" 2>"$ERR"
rc=$?
expect_fail "a malformed SLURM_JOB_NODELIST fails"
expect_err "the error names the variable" "SLURM_JOB_NODELIST"

finish
