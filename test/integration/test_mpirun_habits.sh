#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# What users of mpirun count on, under herdrun:
#   MPIEXEC_TIMEOUT ends a job as --timeout does (the option wins; a bad value is refused);
#   a program in the working directory (or --wdir) runs by its bare name without "." in PATH, and
#   MPI_Comm_spawn("worker") finds worker there too; a program nowhere is still a clear error;
#   a spawn refused (no --oversubscribe on full nodes) returns an error at once, and the program
#   goes on; MPI_UNIVERSE_SIZE is the DVM's slot count, for Open MPI and MPICH programs.
. "$(dirname "$0")/lib.sh"
SIM="--mca ras simulator --mca ras_simulator_num_nodes"
HERDRUN_LIMIT=60
BIN=$WORK/bin
mkdir -p "$BIN"
mpi_flavours
for f in $FLAVOURS; do
    for p in universe spawn_refused spawn; do
        "mpicc.$f" -o "$BIN/${f}_$p" "$HERD_SRCDIR/test/programs/mpi_$p.c" 2>"$ERR" ||
            fail "mpi_$p.c builds with mpicc.$f"
    done
done

# --- MPIEXEC_TIMEOUT -----------------------------------------------------------------------------
MPIEXEC_TIMEOUT=1 herdrun_bg -n 2 sleep 30
herdrun_wait "$HERDRUN_LIMIT"
expect_rc "MPIEXEC_TIMEOUT=1: the job is ended as by --timeout (124)" 124
expect_err "MPIEXEC_TIMEOUT=1: herdrun says the limit" "exceeded its time limit of 1 s"
check_clean "MPIEXEC_TIMEOUT=1"
MPIEXEC_TIMEOUT=600 herdrun_bg --timeout 1 -n 2 sleep 30
herdrun_wait "$HERDRUN_LIMIT"
expect_rc "--timeout 1 with MPIEXEC_TIMEOUT=600: the option wins" 124
expect_err "--timeout 1 with MPIEXEC_TIMEOUT=600: the option's limit" "time limit of 1 s"
check_clean "--timeout with MPIEXEC_TIMEOUT"
MPIEXEC_TIMEOUT=0 herdrun -n 1 true
expect_rc "MPIEXEC_TIMEOUT=0: no limit" 0
MPIEXEC_TIMEOUT=soon herdrun -n 1 true
expect_rc "MPIEXEC_TIMEOUT=soon: refused" 1
expect_err "MPIEXEC_TIMEOUT=soon: the error names the variable and its value" \
    'MPIEXEC_TIMEOUT="soon" in the environment is not a time limit'
check_clean "MPIEXEC_TIMEOUT=soon"
herdrun --help
expect_out "herdrun --help mentions MPIEXEC_TIMEOUT" "MPIEXEC_TIMEOUT"
if grep -q 'MPIEXEC_TIMEOUT' "$HERD_SRCDIR/orte/tools/herdrun/herdrun.1"; then
    ok "the man page says MPIEXEC_TIMEOUT"
else
    fail "the man page says MPIEXEC_TIMEOUT"
fi

# --- a program in the working directory ----------------------------------------------------------
# as a user's shell has it: no "." in PATH
PATH=$(echo "$PATH" | tr ':' '\n' | grep -v -e '^\.$' -e '^$' | tr '\n' ':' | sed 's/:$//')
export PATH
mkdir -p "$WORK/wd/sub"
printf '#!/bin/sh\necho "hello from rank $HERD_RANK in $(pwd)"\n' >"$WORK/wd/hello"
chmod +x "$WORK/wd/hello"
cd "$WORK/wd" || exit 1
herdrun -n 2 hello
expect_rc "hello in the working directory, . not in PATH: it runs" 0
expect_eq "hello in the working directory: both ranks" \
    "$(count_out "^hello from rank [01] in $WORK/wd$")" 2
check_clean "hello in the working directory"
cd "$WORK/wd/sub" || exit 1
herdrun --wdir "$WORK/wd" -n 1 hello
expect_rc "hello in --wdir: it runs there" 0
expect_out "hello in --wdir: in that folder" "^hello from rank 0 in $WORK/wd$"
check_clean "hello in --wdir"
herdrun -n 1 hello
expect_rc "hello nowhere: refused" 1
expect_err "hello nowhere: the error says where it looked" \
    "and then in the working directory, $WORK/wd/sub"
check_clean "hello nowhere"
cd "$WORK/wd" || exit 1
for f in $FLAVOURS; do
    [ "$f" = openmpi ] || continue # Debian 12's MPICH cannot spawn even under Hydra
    cp "$BIN/${f}_spawn" "$WORK/wd/spawner"
    herdrun_bg -n 1 --oversubscribe spawner
    herdrun_wait "$HERDRUN_LIMIT"
    expect_rc "$f MPI_Comm_spawn(\"spawner\") from the working directory: exit 0" 0
    expect_eq "$f MPI_Comm_spawn by bare name: both children ran" "$(count_out '^child ok: ')" 2
    check_clean "$f MPI_Comm_spawn by bare name"
done
cd "$WORK" || exit 1

# --- a spawn refused, MPI_UNIVERSE_SIZE ----------------------------------------------------------
printf 'localhost slots=3\n' >"$WORK/hosts"
for f in $FLAVOURS; do
    herdrun_bg --hostfile "$WORK/hosts" -n 1 "$BIN/${f}_spawn_refused" 64
    herdrun_wait "$HERDRUN_LIMIT"
    expect_rc "$f spawn of 64 on 3 slots: the program goes on and ends well" 0
    expect_out "$f spawn of 64 on 3 slots: MPI_Comm_spawn returns an error" "^spawn refused: "
    expect_out "$f spawn of 64 on 3 slots: the program still runs after it" "^still running$"
    check_clean "$f spawn refused"
    herdrun_bg --hostfile "$WORK/hosts" -n 1 "$BIN/${f}_universe"
    herdrun_wait "$HERDRUN_LIMIT"
    expect_out "$f MPI_UNIVERSE_SIZE: the slots of the DVM (3)" "^universe size 3$"
    check_clean "$f MPI_UNIVERSE_SIZE"
    herdrun_bg --hostfile "$WORK/hosts" -n 5 --oversubscribe "$BIN/${f}_universe"
    herdrun_wait "$HERDRUN_LIMIT"
    expect_out "$f MPI_UNIVERSE_SIZE, oversubscribed: still the slots (3), as mpirun says" \
        "^universe size 3$"
    check_clean "$f MPI_UNIVERSE_SIZE oversubscribed"
    herdrun_bg $SIM 4 --mca ras_simulator_slots 2 -H sim0002 -n 1 "$BIN/${f}_universe"
    herdrun_wait "$HERDRUN_LIMIT"
    expect_out "$f MPI_UNIVERSE_SIZE with --host one of 4 nodes: every node's slots (8)" \
        "^universe size 8$"
    check_clean "$f MPI_UNIVERSE_SIZE with --host"
done

# --- what MPICH programs are told about the node (wireup_pmi1_topology_hint) ---------------------
SHOW_HWLOC='echo "xml=${HWLOC_XMLFILE-unset} thissystem=${HWLOC_THISSYSTEM-unset}"'
herdrun -n 1 sh -c "$SHOW_HWLOC"
expect_out "topology hint: the process is given herd's topology file" "^xml=/.*\.xml thissystem=1$"
xml=$(sed -n 's/^xml=\([^ ]*\) .*/\1/p' "$OUT")
# a node with PCI devices has them in the file (MPICH asks hwloc for every one)
want_io=no
[ -n "$(ls /sys/bus/pci/devices 2>/dev/null)" ] && want_io=yes
if [ -r "$xml" ] && grep -q '<topology' "$xml" &&
    { [ $want_io = no ] || grep -q 'type="PCIDev"' "$xml"; }; then
    ok "topology hint: the file is hwloc's XML, with the PCI devices"
else
    fail "topology hint: the file is hwloc's XML, with the PCI devices ($xml)"
fi
herdrun -n 1 -x HWLOC_COMPONENTS=linux sh -c "$SHOW_HWLOC"
expect_out "topology hint: never over the user's HWLOC_ settings" "^xml=unset thissystem=unset$"
herdrun -n 1 --mca wireup_pmi1_topology_hint 0 sh -c "$SHOW_HWLOC"
expect_out "topology hint off: nothing said" "^xml=unset thissystem=unset$"
check_clean "topology hint"
for f in $FLAVOURS; do
    herdrun_bg -n 4 --oversubscribe "$BIN/${f}_universe"
    herdrun_wait "$HERDRUN_LIMIT"
    expect_rc "$f program with the topology hint: runs" 0
    check_clean "$f program with the topology hint"
done

finish
