#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# herd-dvm inside a Slurm allocation on the test hosts (../shared/testhosts: slurmctld on n1,
# slurmd on n2, n3 and n4): the allocation from SLURM_JOB_NODELIST, daemons started as one srun
# step that shares the allocation with the user's other steps, and nothing left afterwards. Needs root; hosts and Slurm are made here and torn down
# on every exit.
. "$(dirname "$0")/lib.sh"

need_testhosts slurm-up.sh
testhosts_slurm_up 4

# in_allocation ARGS...: run herd-dvm ARGS on n1 inside `salloc -N2` (output $OUT/$ERR, $rc)
in_allocation() {
    on_host 1 env HERD_IT_TAG="$HERD_IT_TAG" SLURM_CONF="$SLURM_CONF" timeout 120 salloc -N2 \
        --quiet "$HERD_BIN/herd-dvm/herd-dvm" "$@" >"$OUT" 2>"$ERR"
    rc=$?
}

in_allocation --display-allocation --exit-when-ready --timeout 60
expect_rc "a DVM inside a Slurm allocation comes up and goes down" 0
expect_out "the allocation comes from Slurm" "source: slurm"
expect_out "with the allocated nodes" "^n2 .*SLURM_JOB_NODELIST"
expect_out "the ready line" "^DVM ready: 2 nodes"
wait_for 10 no_herdd
[ -z "$(herdd_pids)" ] && ok "no daemon left on the Slurm nodes" || fail "daemons left: $(herdd_pids)"

# srun refuses the step: the error says so, with srun's words, and nothing is left.
in_allocation --mca plm_slurm_args "--cpus-per-task=64" --exit-when-ready --timeout 30
expect_fail "an srun error fails the start"
expect_err "the message names a node" "node n[23]"
expect_err "with srun's own words" "srun: .*(error|processors|CPU)"
wait_for 10 no_herdd
[ -z "$(herdd_pids)" ] && ok "no daemon left after the srun error" || fail "daemons left: $(herdd_pids)"

# A persistent DVM beside the allocation's other steps: its daemons' step holds no CPU they
# need (--overlap), so srun runs at once, and so do jobs on the DVM.
cat >"$WORK/beside.sh" <<EOF
#!/bin/sh
$HERD_BIN/herd-dvm/herd-dvm --daemonize --report-uri "$WORK/sdvm.uri" || exit 1
timeout 30 srun -n 3 hostname >"$WORK/srun.out"
echo "\$?" >"$WORK/srun.rc"
$HERD_BIN/herdrun/herdrun --dvm-uri "$WORK/sdvm.uri" -n 6 hostname | sort >"$WORK/job.out"
$HERD_BIN/herd-dvm/herd-dvm --add-host n2 --dvm-uri "$WORK/sdvm.uri" 2>"$WORK/add.err"
echo "\$?" >"$WORK/add.rc"
$HERD_BIN/herd-dvm/herd-dvm --shutdown --dvm-uri "$WORK/sdvm.uri"
EOF
chmod +x "$WORK/beside.sh"
on_host 1 env HERD_IT_TAG="$HERD_IT_TAG" SLURM_CONF="$SLURM_CONF" timeout 120 salloc -N3 -n6 \
    --quiet "$WORK/beside.sh" >"$OUT" 2>"$ERR"
rc=$?
expect_rc "a persistent DVM in salloc -N3 -n6" 0
expect_eq "srun -n 3 beside it runs at once (not held until the DVM ends)" \
    "$(cat "$WORK/srun.rc")" 0
expect_eq "srun -n 3 beside it runs on the three nodes" "$(sort "$WORK/srun.out" | tr '\n' ' ')" \
    "n2 n3 n4 "
expect_eq "a job of 6 on the DVM uses the three nodes" "$(sort -u "$WORK/job.out" | tr '\n' ' ')" \
    "n2 n3 n4 "
expect_eq "herd-dvm --add-host on a Slurm DVM is refused" "$(cat "$WORK/add.rc")" 1
expect_eq "as not supported yet" "$(grep -c 'not supported yet for this DVM' "$WORK/add.err")" 1
wait_for 10 no_herdd
[ -z "$(herdd_pids)" ] && ok "no daemon left after the DVM beside srun" || fail "daemons left: $(herdd_pids)"

# A Slurm node list that does not parse: a clear error, no crash.
on_host 1 env HERD_IT_TAG="$HERD_IT_TAG" SLURM_JOB_NODELIST='n[2-' "$HERD_BIN/herd-dvm/herd-dvm" \
    --exit-when-ready >"$OUT" 2>"$ERR"
rc=$?
expect_fail "a malformed SLURM_JOB_NODELIST fails"
expect_err "the error names the variable" "SLURM_JOB_NODELIST"

finish
