#!/usr/bin/env bash
# The many-nodes suite's job scripts (nodes_test), run by slurmstepd on a virtual node as the test
# user: a batch script (run on the job's first node) or an srun task (on every node).
# usage: nodes_job.sh MODE MARK NAME POOL POOLCTL [ARG...]
#   MARK  a world-writable folder where the job reports to the test (NAME.* files, written whole)
# MODE:
#   share    (batch) an srun step of 2 tasks per node running `share-task`
#   share-task  the node's first task makes the node's job folder (poolctl env) and an array in
#            it, and names the folder in the node's /dev/shm; the other task finds it there; each
#            maps the array and sums its half; report; wait for MARK/NAME.go
#   hold     (batch) an srun step of 1 task per node that makes a file in the node's job folder and
#            in /dev/shm, reports and waits (for scancel, the time limit or a lost node)
#   hold-task  that task
#   mpi      (batch) mpirun of the mpi_share program ARG over the job's 6 tasks, ARG2 "hang" or
#            empty; its output in MARK/NAME.mpirun; report its verdict
#   sbcast   (batch) sbcast the input ARG into every node's pool; report each node's holds on it;
#            an srun step of 2 tasks per node running `sbcast-task`; report; wait for go. ARG2
#            "keep": no step, the file is left as sbcast made it (whose hold it has)
#   sbcast-task  the node's first task ties the file to the job's extern step on the node; each
#            task maps the file and sums it
#   prep     (an srun task on every node) the node's input array in the pool, pinned
#   array    (an array task) map the node's input, sum it, report the sum and the node
#   release  (an srun task on every node) poolctl release of the node's input
set -euo pipefail
mode=$1 mark=$2 name=$3 pool=$4 poolctl=$5
shift 5
# This script's own path (a batch script runs from a copy in slurmd's spool, on its node only).
self=${NODES_JOB_SH:?}
py=/usr/bin/python3   # Debian's, with numpy, whatever PATH the job got
node=$(hostname)

# report KEY VALUE: MARK/NAME.KEY holds VALUE, written whole (the test polls for it).
report() {
    printf '%s\n' "$2" >"$mark/$name.$1.tmp.$$"
    mv -f "$mark/$name.$1.tmp.$$" "$mark/$name.$1"
}

# wait_go: until the test says go (the job's own time limit bounds the wait).
wait_go() { while [[ ! -e $mark/$name.go ]]; do sleep 0.1; done; }

# sum_file PATH [HALF OF]: the sum of the int64 array in PATH (or of its HALF-th of OF parts),
# mapped; with WAIT set the mapping is kept until MARK/NAME.go.
sum_file() {
    "$py" -c '
import numpy, os, sys, time
a = numpy.memmap(sys.argv[1], dtype=numpy.int64, mode="r")
k, parts = int(sys.argv[2]), int(sys.argv[3])
lo, hi = len(a) * k // parts, len(a) * (k + 1) // parts
print(int(a[lo:hi].sum()), flush=True)
if sys.argv[4]:
    while not os.path.exists(sys.argv[4]):
        time.sleep(0.1)' "$1" "${2:-0}" "${3:-1}" "${WAIT:-}"
}

case $mode in
share)
    srun --ntasks-per-node=2 "$self" share-task "$mark" "$name" "$pool" "$poolctl"
    ;;
share-task)
    named=/dev/shm/poolfs-nodes-$SLURM_JOB_ID
    if [[ $SLURM_LOCALID == 0 ]]; then
        eval "$("$poolctl" env "$pool")"
        # The node's array: 0 .. 2^20-1 plus the node's number, so each node's sum is its own.
        "$py" -c 'import numpy, sys; (numpy.arange(1 << 20, dtype=numpy.int64) + int(sys.argv[2])).tofile(sys.argv[1])' \
            "$POOLFS_JOB/array" "${node#pnode}"
        printf '%s\n' "$POOLFS_JOB" >"$named.tmp"
        mv "$named.tmp" "$named"
        report "files.$node" "$POOLFS_JOB $POOLFS_JOB/array $named"
    else
        while [[ ! -s $named ]]; do sleep 0.1; done
        POOLFS_JOB=$(cat "$named")
    fi
    # Each task sums its half; the mapping stays until go.
    WAIT=$mark/$name.go sum_file "$POOLFS_JOB/array" "$SLURM_LOCALID" 2 >"$mark/$name.sum.$node.$SLURM_LOCALID.tmp" &
    while [[ ! -s $mark/$name.sum.$node.$SLURM_LOCALID.tmp ]]; do sleep 0.1; done
    mv "$mark/$name.sum.$node.$SLURM_LOCALID.tmp" "$mark/$name.sum.$node.$SLURM_LOCALID"
    wait
    ;;
hold)
    srun -n 3 --ntasks-per-node=1 "$self" hold-task "$mark" "$name" "$pool" "$poolctl"
    ;;
hold-task)
    eval "$("$poolctl" env "$pool")"
    head -c 1048576 /dev/urandom >"$POOLFS_JOB/data"
    head -c 4096 /dev/urandom >"/dev/shm/poolfs-nodes-$name-$SLURM_JOB_ID"
    report "task.$node" "$PPID $$"
    report "files.$node" "$POOLFS_JOB $POOLFS_JOB/data /dev/shm/poolfs-nodes-$name-$SLURM_JOB_ID"
    wait_go
    ;;
mpi)
    # TCP between nodes on the loopback (Open MPI leaves lo out by default), shared memory
    # (vader, its segments in /dev/shm: the node's pool) within a node, and Open MPI's session
    # folder in the node's /dev/shm too.
    export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo \
        OMPI_MCA_orte_tmpdir_base=/dev/shm
    mpirun -np 6 --map-by ppr:2:node "$1" /dev/shm/mpi-array 1000000 ${2:+"$2"} >"$mark/$name.mpirun" 2>&1 || true
    report verdict "$(grep -c 'ranks on 3 nodes, sum .*: ok' "$mark/$name.mpirun" || true)"
    ;;
sbcast)
    target=$pool/bcast-$SLURM_JOB_ID
    sbcast -f "$1" "$target"
    # Whose holds the file has on each node, as sbcast left it.
    # shellcheck disable=SC2016  # expanded by the task's bash
    srun -n 3 --ntasks-per-node=1 bash -c 'printf "%s %s\n" "$(hostname)" "$(getfattr --absolute-names --only-values -n user.poolfs.refs "$1" | grep "^hold " | tr "\n" " ")"' \
        refs "$target" >"$mark/$name.refs.tmp"
    mv "$mark/$name.refs.tmp" "$mark/$name.refs"
    if [[ ${2:-} == keep ]]; then
        report finished 1
    else
        srun --ntasks-per-node=2 "$self" sbcast-task "$mark" "$name" "$pool" "$poolctl" "$target"
        # The step is over; the file stays with the job.
        report finished 1
        wait_go
    fi
    ;;
sbcast-task)
    # sbcast's file is held by slurmd's session (docs/cluster.md, "Many nodes"): the node's first
    # task, while the file is open, drops that hold (the user's own) and holds it by the job's
    # extern step on this node (PrologFlags=Contain), which ends when the job ends here.
    if [[ $SLURM_LOCALID == 0 ]]; then
        extern=$(scontrol listpids "$SLURM_JOB_ID" | awk '$3 == "extern" && $1 > 0 { print $1; exit }')
        exec 3<"$1"
        "$poolctl" release "$1"
        "$poolctl" hold --pid "$extern" "$1"
        exec 3<&-
        report "extern.$node" "$extern"
    fi
    while [[ ! -e $mark/$name.extern.$node ]]; do sleep 0.1; done
    report "sum.$node.$SLURM_LOCALID" "$(sum_file "$1")"
    ;;
prep)
    "$py" -c 'import numpy, sys; numpy.arange(1 << 20, dtype=numpy.int64).tofile(sys.argv[1])' "$pool/$name-input"
    "$poolctl" hold --pin "$pool/$name-input"
    report "input.$node" "$pool/$name-input"
    ;;
array)
    report "sum.$SLURM_ARRAY_TASK_ID" "$node $(sum_file "$pool/$name-input")"
    # A moment more, so that the first three tasks run at once, one on each node.
    sleep 2
    ;;
release)
    "$poolctl" release "$pool/$name-input"
    report "released.$node" 1
    ;;
*)
    echo "nodes_job.sh: unknown mode $mode" >&2
    exit 2
    ;;
esac
