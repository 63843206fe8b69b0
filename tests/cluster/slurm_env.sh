# shellcheck shell=bash
# shellcheck disable=SC2034  # POOLFS_PID, NODE_SHM are read by the script sourcing this
# The cluster suite's private world: Debian's munge/Slurm/Open MPI packages (installed when
# missing), a munged, slurmctld and slurmd of its own in $WORK (own key, socket, spool and state
# dirs, pid files, loopback ports 46817/46818), two test users with fixed high uids, and a
# multi-user pool. slurmd runs in a mount namespace of its own whose /dev/shm is a pool
# (docs/devshm.md), so every job on the node has that /dev/shm and the machine's is untouched.
# Everything started here is recorded and stopped by pid in cluster_teardown. What the
# many-nodes suite does the same way is in slurm_common.sh.
# Source it from a bash script with `set -euo pipefail` after setting WORK.

# shellcheck source=tests/cluster/slurm_common.sh
. "$(dirname "${BASH_SOURCE[0]}")/slurm_common.sh"

CLUSTER_PACKAGES=(munge slurmctld slurmd slurm-client openmpi-bin libopenmpi-dev)
CTLD_PORT=46817
SLURMD_PORT=46818
NODE=poolfsnode
# uid name: fixed, high, and unlikely to clash; created here and removed at the end.
TEST_USERS=("61001 poolfs-clu1" "61002 poolfs-clu2")
# Process tracking: linuxproc (the default here), or cgroup-v1 (proctrack/cgroup on a cgroup v1
# freezer hierarchy; docs/cluster.md says what was measured with each).
CLUSTER_PROCTRACK=${POOLFS_CLUSTER_PROCTRACK:-linuxproc}

write_slurm_conf() {
    local proctrack=proctrack/linuxproc
    if [[ $CLUSTER_PROCTRACK == cgroup-v1 ]]; then
        proctrack=proctrack/cgroup
    elif [[ $CLUSTER_PROCTRACK != linuxproc ]]; then
        SLURM_WHY="POOLFS_CLUSTER_PROCTRACK must be linuxproc or cgroup-v1"
        return 1
    fi
    # Memory limits as a site sets them: memory is allocated to jobs (their --mem, else 200 MB a
    # CPU, so that all 16 CPUs of the node's 4000 MB can be used) and task/cgroup puts each job's
    # tasks into a memory cgroup limited to it (cgroup v1's memory hierarchy: slurmd 22.05 refuses
    # this hybrid host's v2), which case_mem_limit_out_of_memory goes past.
    printf '%s\n' CgroupPlugin=cgroup/v1 CgroupMountpoint=/sys/fs/cgroup ConstrainCores=no \
        ConstrainRAMSpace=yes ConstrainSwapSpace=no ConstrainDevices=no >"$WORK/cgroup.conf"
    SLURM_TASK_PLUGIN=task/cgroup
    SLURM_SELECT_PARAMS=CR_Core_Memory
    {
        slurm_conf_common poolfstest "$CTLD_PORT" "$proctrack" "$WORK"
        cat <<CONF
SlurmdPort=$SLURMD_PORT
DefMemPerCPU=200
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=16 RealMemory=4000 State=UNKNOWN
PartitionName=test Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
CONF
    } >"$WORK/slurm.conf"
}

node_idle() { sinfo -h -n "$NODE" -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; }

# start_slurm: munged, slurmctld, slurmd; 0 once the node takes jobs, else 1 with SLURM_WHY.
start_slurm() {
    mkdir -p "$WORK/spool"
    start_controller write_slurm_conf || return 1
    start_node || return 1
    if ! wait_until 300 node_idle; then
        SLURM_WHY="the node never became idle: $(sinfo -h -N -o '%t %E' 2>&1 | tr '\n' ' ')"
        tail -n 5 "$WORK/log/slurmctld.log" "$WORK/log/slurmd.log" 2>/dev/null | sed 's/^/#   /'
        return 1
    fi
}

# host_devshm_state: what the machine's /dev/shm is (device, inode, its mounts): never changed.
host_devshm_state() {
    stat -c '%d:%i' /dev/shm
    awk '$5 == "/dev/shm"' /proc/self/mountinfo
}

# start_node: slurmd in a mount namespace of its own (all mounts private, so nothing made there
# reaches the machine; the mounts made before, the test's pool and the control tmpfs, are there
# too) whose /dev/shm is a pool with poolfs-devshm.service's options, mounted before slurmd
# starts over a tmpfs of that namespace. Sets DEVSHM_PID (the pool's daemon) and NODE_SHM (the node's /dev/shm, seen from
# outside through that daemon's root).
# The namespace starts as a copy of the machine's mounts, with the pools of the tests that run
# alongside this one (tests/meson.build): its copy of a FUSE mount would keep that pool's
# connection after its test unmounts it, and its daemon would never see the unmount. So the
# namespace first lets go of every FUSE mount that is not under $WORK (its copies only: the
# machine's mounts are untouched).
start_node() {
    local log=$WORK/log/devshm-pool.log
    host_devshm_state >"$WORK/host-devshm.before"
    # shellcheck disable=SC2016  # expanded by the inner bash
    # Under the pool a tmpfs of the namespace's own: were the pool to go while jobs run, their
    # /dev/shm would be that, never the machine's.
    unshare -m --propagation private -- bash -c '
        awk -v w="$6/" '\''$(NF - 2) ~ /^fuse/ && index($5, w) != 1 { print $5 }'\'' /proc/self/mountinfo |
            while read -r m; do umount -l "$(printf "%b" "$m")" 2>/dev/null || true; done
        mount -t tmpfs -o "mode=1777,nosuid,nodev,size=$(($(stat -f -c "%b * %S" /dev/shm)))" \
            poolfs-clu-guard /dev/shm || exit 1
        "$1" -f -o allow_other poolfs /dev/shm 2>"$2" &
        echo $! >"$3"
        for ((i = 0; i < 100; i++)); do
            grep -q "^poolfs: mounted" "$2" && exec slurmd -f "$4" -N "$5"
            sleep 0.1
        done
        echo "no pool on /dev/shm: $(cat "$2")"
        exit 1' start_node "${POOLFS_BIN:?}" "$log" "$WORK/run/devshm-pool.pid" "$SLURM_CONF" "$NODE" "$WORK" \
        >"$WORK/log/slurmd.start" 2>&1 || true
    if [[ -s $WORK/run/devshm-pool.pid ]]; then
        DEVSHM_PID=$(cat "$WORK/run/devshm-pool.pid")
        remember "$DEVSHM_PID"
    fi
    if ! wait_until 100 test -s "$WORK/run/slurmd.pid"; then
        SLURM_WHY="slurmd did not start in its namespace: $(tr '\n' ' ' <"$WORK/log/slurmd.start")"
        return 1
    fi
    remember "$(cat "$WORK/run/slurmd.pid")"
    NODE_SHM=/proc/$DEVSHM_PID/root/dev/shm
    if [[ $(awk '$5 == "/dev/shm" { t = $(NF - 2) } END { print t }' "/proc/$DEVSHM_PID/mountinfo") != fuse.poolfs ]]; then
        SLURM_WHY="the node's /dev/shm is no pool: $(cat "$log")"
        return 1
    fi
}

# start_shm_control: a plain tmpfs ($SHMCTL) that the control job binds on its /dev/shm.
start_shm_control() {
    SHMCTL=$WORK/shmctl
    mkdir -p "$SHMCTL"
    mount -t tmpfs -o mode=1777,size=64m poolfs-clu-shmctl "$SHMCTL"
}

# start_pool: a multi-user pool on $POOL with the default options (autohold=session).
start_pool() {
    mkdir -p "$POOL"
    "${POOLFS_BIN:?}" -f -o allow_other "$POOL" 2>"$WORK/log/poolfs.log" &
    POOLFS_PID=$!
    remember "$POOLFS_PID"
    if ! wait_until 100 grep -q 'poolfs: mounted' "$WORK/log/poolfs.log"; then
        SLURM_WHY="the pool did not mount: $(tr '\n' ' ' <"$WORK/log/poolfs.log")"
        return 1
    fi
}

# cluster_teardown: cancel our jobs, stop every process we started (newest first), unmount, remove
# the users and the work folder. Runs on every exit.
cluster_teardown() {
    local pid f stepd comm script
    cleanup_begins
    cancel_jobs
    if [[ -n ${SLURM_CONF:-} && -f ${SLURM_CONF:-} ]]; then
        wait_until 100 no_jobs_left || log "teardown: jobs still listed: $(squeue -h 2>&1 | tr '\n' ' ')"
    fi
    # slurmstepd and job scripts outlive slurmd: stop those our jobs reported (checked by name,
    # so a reused pid is left alone).
    for f in "$WORK"/mark/*.stepd; do
        [[ -f $f ]] || continue
        read -r stepd comm script <"$f" || true
        for pid in $stepd $script; do
            comm=$(cat "/proc/$pid/comm" 2>/dev/null) || continue
            [[ $comm == slurmstepd || $comm == bash ]] && stop_pid "$pid"
        done
    done
    stop_remembered
    # A job whose slurmstepd was killed leaves its (empty) groups behind: freezer (proctrack/
    # cgroup) and memory (task/cgroup), which Slurm 22.05 does not remove. Only this node's
    # hierarchy, and rmdir takes only empty groups.
    for f in freezer memory; do
        [[ -d /sys/fs/cgroup/$f/slurm_$NODE ]] || continue
        find "/sys/fs/cgroup/$f/slurm_$NODE" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    done
    if [[ -n ${POOL:-} ]] && mountpoint -q "$POOL" 2>/dev/null; then
        fusermount3 -u "$POOL" 2>/dev/null || fusermount3 -uz "$POOL" 2>/dev/null || true
    fi
    if [[ -n ${SHMCTL:-} ]] && mountpoint -q "$SHMCTL" 2>/dev/null; then
        umount "$SHMCTL" 2>/dev/null || umount -l "$SHMCTL" 2>/dev/null || true
    fi
    remove_test_users
    rm -rf "$WORK"
}

no_jobs_left() { [[ -z $(squeue -h -t PD,R,CG,CF,S 2>/dev/null) ]]; }
