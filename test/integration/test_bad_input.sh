#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Input herdrun once took silently or failed on obscurely (issue 28): 70,000 arguments run as
# the kernel takes them (no 16-bit count on the way); a parameter file named in
# HERD_MCA_param_files that does not exist is said; a negative odls_base_kill_grace_ms and an
# empty -H or --hostfile are refused with a message, nothing started.
. "$(dirname "$0")/lib.sh"
SIM="--mca ras_simulator_num_nodes"

# --- more than 65,536 arguments --------------------------------------------------------------
args=$(seq 70000)
# shellcheck disable=SC2086
herdrun -n 1 sh -c 'echo "$# arguments, the last ${70000}"' x $args
expect_rc "70,000 arguments on this host: exit 0" 0
expect_eq "70,000 arguments on this host: the program gets every one" "$(cat "$OUT")" \
    "70000 arguments, the last 70000"
expect_eq "70,000 arguments on this host: nothing said" "$(head -c 300 "$ERR")" ""
check_clean "70,000 arguments on this host"
# shellcheck disable=SC2086
herdrun $SIM 2 -n 2 --map-by node sh -c 'echo "$# arguments, the last ${70000}"' x $args
expect_rc "70,000 arguments on 2 simulated nodes: exit 0" 0
expect_eq "70,000 arguments on 2 simulated nodes: both ranks get every one" \
    "$(grep -c '^70000 arguments, the last 70000$' "$OUT")" 2
expect_eq "70,000 arguments on 2 simulated nodes: nothing said" "$(head -c 300 "$ERR")" ""
check_clean "70,000 arguments on 2 simulated nodes"

# --- a parameter file that does not exist -----------------------------------------------------
HERD_MCA_param_files=$WORK/no-such.conf herdrun $SIM 2 -n 2 echo ran
expect_rc "a missing parameter file: the job still runs" 0
expect_eq "a missing parameter file: every rank ran" "$(grep -c '^ran$' "$OUT")" 2
expect_err "a missing parameter file: a warning names it" \
    "The MCA parameter file $WORK/no-such.conf, named in HERD_MCA_param_files, cannot be found"
expect_eq "a missing parameter file: said once, not by every daemon" \
    "$(grep -c 'no-such.conf, named in' "$ERR")" 1
check_clean "a missing parameter file"
HERD_MCA_param_files= herdrun -n 1 echo ran
expect_eq "HERD_MCA_param_files empty: nothing said" "$rc $(cat "$OUT") $(head -c 300 "$ERR")" \
    "0 ran "

# --- a negative kill grace --------------------------------------------------------------------
for how in cli env; do
    if [ $how = cli ]; then
        herdrun --mca odls_base_kill_grace_ms -1 -n 1 echo must-not-run
    else
        HERD_MCA_odls_base_kill_grace_ms=-1 herdrun -n 1 echo must-not-run
    fi
    expect_rc "odls_base_kill_grace_ms -1 ($how): refused, exit 1" 1
    expect_err "odls_base_kill_grace_ms -1 ($how): says what it must be" \
        "odls_base_kill_grace_ms must be 0 or more milliseconds, not -1"
    expect_no_out "odls_base_kill_grace_ms -1 ($how): nothing ran" "must-not-run"
    check_clean "odls_base_kill_grace_ms -1 ($how)"
done

# --- an empty host list -----------------------------------------------------------------------
for opt in -H --host --hostfile; do
    herdrun "$opt" "" -n 1 echo must-not-run
    expect_rc "$opt \"\": refused, exit 1" 1
    expect_err "$opt \"\": says the value is empty" "herdrun: --host(file)? was given an empty value"
    expect_no_out "$opt \"\": nothing ran" "must-not-run"
    check_clean "$opt \"\""
done
finish
