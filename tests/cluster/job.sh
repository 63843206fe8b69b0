#!/usr/bin/env bash
# The batch script of the cluster suite's jobs (run by slurmstepd, as root or as a test user).
# usage: job.sh MODE MARK NAME POOL POOLCTL [ARG [ARG2]]
#   MARK  a world-writable folder where the job reports to the test (NAME.* files, written whole)
# MODE:
#   hold   poolctl env, a file in the job folder, a file in the pool root, an srun step that
#          writes one file into each; report; wait for MARK/NAME.go (which never comes for the
#          scancel, time-limit and killed-slurmstepd cases)
#   secret (a test user) one file in the pool root; report its path; wait for MARK/NAME.go
#   peek   (another test user) stat, open and list ARG, another user's file; report what happened
#   input  an input array in the pool root, held with --pin for the jobs that depend on this one
#   array  (a job array task) map the input ARG and sum it; report the sum
#   release  poolctl release ARG (the input's pin hold), as the last job of the chain
#   mpi    poolctl env, Open MPI's shared memory and session directory in the job folder, mpirun
#          of the mpi_share program ARG on the job's tasks; report its verdict and what is left
#   shm    (as root) what /dev/shm is for the job; the shm_hold program ARG makes a segment and a
#          semaphore in /dev/shm and reports them (NAME.made); wait to be cancelled. With ARG2, a
#          folder of a plain tmpfs: it is bound on /dev/shm for this job only (a mount namespace
#          of its own), the control where nothing removes what a killed job leaves
set -euo pipefail
# Debian's python3 has numpy (scripts/build installs python3-numpy), whatever PATH the job got.
mode=$1 mark=$2 name=$3 pool=$4 poolctl=$5 arg=${6:-} arg2=${7:-}

# report KEY VALUE: MARK/NAME.KEY holds VALUE, written whole (the test polls for it).
report() {
    printf '%s\n' "$2" >"$mark/$name.$1.tmp.$$"
    mv -f "$mark/$name.$1.tmp.$$" "$mark/$name.$1"
}

# wait_go: until the test says go (the job's own time limit bounds the wait).
wait_go() {
    while [[ ! -e $mark/$name.go ]]; do sleep 0.1; done
}

# gone_within TENTHS PATH: true once PATH is gone, polled every 0.1 s at most TENTHS times.
gone_within() {
    local i
    for ((i = 0; i < $1; i++)); do
        [[ -e $2 ]] || return 0
        sleep 0.1
    done
    [[ ! -e $2 ]]
}

case $mode in
hold)
    report stepd "$PPID $(cat "/proc/$PPID/comm") $$"
    eval "$("$poolctl" env "$pool")"
    report env "$POOLFS_JOB|$JOBLIB_TEMP_FOLDER|$TMPDIR"
    head -c 1048576 /dev/urandom >"$POOLFS_JOB/data"
    head -c 4096 /dev/urandom >"$pool/$name-root"
    tmp=$(mktemp)     # TMPDIR points into the job folder
    # A step's own files end with the step (its slurmstepd); the job folder's stay.
    srun --ntasks=1 bash -c "head -c 4096 /dev/zero >'$POOLFS_JOB/fromstep'; head -c 4096 /dev/zero >'$pool/$name-step'"
    if gone_within 100 "$pool/$name-step"; then step=gone; else step=stays; fi
    report files "$POOLFS_JOB/data $pool/$name-root $tmp $POOLFS_JOB/fromstep"
    report step "$step $pool/$name-step"
    report ready 1
    wait_go
    ;;
secret)
    head -c 4096 /dev/urandom >"$pool/$name-secret"
    report secret "$pool/$name-secret"
    report ready 1
    wait_go
    ;;
peek)
    # what OP: "ok", "EACCES" or the error text of OP on ARG.
    what() {
        if "$@" >/dev/null 2>"$mark/$name.err"; then echo ok
        elif grep -q 'Permission denied' "$mark/$name.err"; then echo EACCES
        else tr -s ' \n' '_' <"$mark/$name.err"; fi
    }
    listed=no
    for f in "$pool"/*; do [[ $f == "$arg" ]] && listed=yes; done
    report peek "stat=$(what stat "$arg") open=$(what cat "$arg") listed=$listed"
    ;;
input)
    /usr/bin/python3 -c 'import numpy, sys; numpy.arange(1 << 20, dtype=numpy.int64).tofile(sys.argv[1])' "$pool/$name-input"
    "$poolctl" hold --pin "$pool/$name-input"
    report input "$pool/$name-input"
    ;;
array)
    report "sum.$SLURM_ARRAY_TASK_ID" "$(/usr/bin/python3 -c '
import numpy, sys
a = numpy.memmap(sys.argv[1], dtype=numpy.int64, mode="r")
print(int(a.sum()))' "$arg")"
    ;;
release)
    "$poolctl" release "$arg"
    report released 1
    ;;
mpi)
    report stepd "$PPID $(cat "/proc/$PPID/comm") $$"
    eval "$("$poolctl" env "$pool")"
    export OMPI_MCA_btl_vader_backing_directory=$POOLFS_JOB OMPI_MCA_orte_tmpdir_base=$POOLFS_JOB
    mpirun --oversubscribe "$arg" "$POOLFS_JOB/array" 1000000 >"$mark/$name.mpirun" 2>&1 || true
    report verdict "$(grep -c 'ranks on 1 nodes, sum .*: ok' "$mark/$name.mpirun" || true)"
    # Open MPI has removed its own files; the array stays with the job folder until the job ends.
    # Right after mpirun returns, Open MPI's session folder (ompi.NODE.N) may still be listed:
    # seen once in eight CI runs. What a rank left in it goes at its last RELEASE, which the
    # kernel sends after the rank's exit, and the folder goes with its last entry: so the
    # listing waits (at most 5 s) for only the array to be left.
    for ((i = 0; i < 50; i++)); do
        left=$(cd "$POOLFS_JOB" && find . -mindepth 1 | sort | tr '\n' ' ')
        [[ $left != "./array " ]] || break
        sleep 0.1
    done
    report left "$left"
    report folder "$POOLFS_JOB"
    ;;
shm)
    report stepd "$PPID $(cat "/proc/$PPID/comm") $$"
    entry=poolfs-clu-$name-$SLURM_JOB_ID
    if [[ -n $arg2 ]]; then
        # shellcheck disable=SC2016  # expanded by the inner sh
        unshare -m --propagation private -- sh -c \
            'mount --bind "$1" /dev/shm && findmnt -n -o FSTYPE --mountpoint /dev/shm | tail -n 1 >"$4.fstype" && exec "$2" "$3" "$4"' \
            sh "$arg2" "$arg" "$entry" "$mark/$name.made" &
    else
        findmnt -n -o FSTYPE --mountpoint /dev/shm | tail -n 1 >"$mark/$name.made.fstype"
        "$arg" "$entry" "$mark/$name.made" &
    fi
    holder=$!
    while [[ ! -e $mark/$name.made ]] && kill -0 "$holder" 2>/dev/null; do sleep 0.1; done
    report ready 1
    wait "$holder"
    ;;
*)
    echo "job.sh: unknown mode $mode" >&2
    exit 2
    ;;
esac
