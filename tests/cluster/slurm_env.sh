# shellcheck shell=bash
# shellcheck disable=SC2034  # CLUSTER_WHY, POOLFS_PID, NODE_SHM are read by the script sourcing this
# The cluster suite's private world: Debian's munge/Slurm/Open MPI packages (installed when
# missing), a munged, slurmctld and slurmd of its own in $WORK (own key, socket, spool and state
# dirs, pid files, loopback ports 46817/46818), two test users with fixed high uids, and a
# multi-user pool. slurmd runs in a mount namespace of its own whose /dev/shm is a pool
# (docs/devshm.md), so every job on the node has that /dev/shm and the machine's is untouched.
# Everything started here is recorded and stopped by pid in cluster_teardown.
# Source it from a bash script with `set -euo pipefail` after setting WORK.

CLUSTER_PACKAGES=(munge slurmctld slurmd slurm-client openmpi-bin libopenmpi-dev)
CTLD_PORT=46817
SLURMD_PORT=46818
NODE=poolfsnode
# uid name: fixed, high, and unlikely to clash; created here and removed at the end.
TEST_USERS=("61001 poolfs-clu1" "61002 poolfs-clu2")
CLUSTER_WHY=""   # why the cluster cannot be had here (the skip reason)
# Process tracking: linuxproc (the default here), or cgroup-v1 (proctrack/cgroup on a cgroup v1
# freezer hierarchy; docs/cluster.md says what was measured with each).
CLUSTER_PROCTRACK=${POOLFS_CLUSTER_PROCTRACK:-linuxproc}

# log MSG: a TAP diagnostic line.
log() { printf '# %s\n' "$*"; }

# wait_until TENTHS CMD...: poll CMD every 0.1 s, at most TENTHS times; 0 once it succeeds.
wait_until() {
    local n=$1 i
    shift
    for ((i = 0; i < n; i++)); do
        "$@" && return 0
        sleep 0.1
    done
    "$@"
}

# ensure_cluster_packages: install the missing Debian packages (apt-get update first). Returns 1
# with CLUSTER_WHY set when they cannot be had.
ensure_cluster_packages() {
    local missing=() p
    for p in "${CLUSTER_PACKAGES[@]}"; do
        dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed || missing+=("$p")
    done
    [[ ${#missing[@]} -eq 0 ]] && return 0
    if [[ $EUID -ne 0 ]]; then
        CLUSTER_WHY="missing packages ${missing[*]} and not root to install them"
        return 1
    fi
    log "installing ${missing[*]}"
    if ! { apt-get update -q && DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends "${missing[@]}"; } >"$WORK/apt.log" 2>&1; then
        sed 's/^/#   /' "$WORK/apt.log" | tail -n 20
        CLUSTER_WHY="apt-get install ${missing[*]} failed"
        return 1
    fi
}

# remember PID: a process of ours that teardown must stop.
remember() { printf '%s\n' "$1" >>"$WORK/pids"; }

# pid_alive PID: true while PID runs (a zombie counts as gone).
pid_alive() {
    local st
    st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
    [[ -n $st && $st != Z && $st != X ]]
}

pid_gone() { ! pid_alive "$1"; }

# stop_pid PID: SIGTERM, up to 5 s, then SIGKILL.
stop_pid() {
    pid_alive "$1" || return 0
    kill -TERM "$1" 2>/dev/null || return 0
    wait_until 50 pid_gone "$1" || { kill -KILL "$1" 2>/dev/null || true; wait_until 50 pid_gone "$1" || true; }
}

# start_daemon NAME PIDFILE CMD...: run a daemonizing CMD and remember the pid it writes.
start_daemon() {
    local name=$1 pidfile=$2
    shift 2
    if ! "$@" >"$WORK/log/$name.start" 2>&1; then
        CLUSTER_WHY="$name did not start: $(tr '\n' ' ' <"$WORK/log/$name.start")"
        return 1
    fi
    if ! wait_until 100 test -s "$pidfile"; then
        CLUSTER_WHY="$name wrote no pid file"
        return 1
    fi
    remember "$(cat "$pidfile")"
}

write_slurm_conf() {
    local host proctrack=proctrack/linuxproc
    host=$(hostname -s)
    if [[ $CLUSTER_PROCTRACK == cgroup-v1 ]]; then
        proctrack=proctrack/cgroup
        printf '%s\n' CgroupPlugin=cgroup/v1 CgroupMountpoint=/sys/fs/cgroup ConstrainCores=no \
            ConstrainRAMSpace=no ConstrainDevices=no >"$WORK/cgroup.conf"
    elif [[ $CLUSTER_PROCTRACK != linuxproc ]]; then
        CLUSTER_WHY="POOLFS_CLUSTER_PROCTRACK must be linuxproc or cgroup-v1"
        return 1
    fi
    cat >"$WORK/slurm.conf" <<CONF
ClusterName=poolfstest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$WORK/munge/sock
CredType=cred/munge
StateSaveLocation=$WORK/ctld
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/run/slurmctld.pid
SlurmdPidFile=$WORK/run/slurmd.pid
SlurmctldLogFile=$WORK/log/slurmctld.log
SlurmdLogFile=$WORK/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=$proctrack
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
ReturnToService=2
MessageTimeout=5
KillWait=2
OverTimeLimit=0
InactiveLimit=0
MinJobAge=600
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=16 RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
CONF
}

node_idle() { sinfo -h -n "$NODE" -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; }

# start_slurm: munged, slurmctld, slurmd; 0 once the node takes jobs, else 1 with CLUSTER_WHY.
start_slurm() {
    mkdir -p "$WORK/munge" "$WORK/ctld" "$WORK/spool" "$WORK/run" "$WORK/log"
    chmod 0711 "$WORK/munge"    # others reach the socket, nothing else
    head -c 1024 /dev/urandom >"$WORK/munge/key"
    chmod 0400 "$WORK/munge/key"
    start_daemon munged "$WORK/munge/pid" munged --force --key-file="$WORK/munge/key" \
        --socket="$WORK/munge/sock" --pid-file="$WORK/munge/pid" \
        --log-file="$WORK/log/munged.log" --seed-file="$WORK/munge/seed" || return 1
    write_slurm_conf || return 1
    export SLURM_CONF=$WORK/slurm.conf
    start_daemon slurmctld "$WORK/run/slurmctld.pid" slurmctld -f "$SLURM_CONF" || return 1
    start_node || return 1
    if ! wait_until 300 node_idle; then
        CLUSTER_WHY="the node never became idle: $(sinfo -h -N -o '%t %E' 2>&1 | tr '\n' ' ')"
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
        CLUSTER_WHY="slurmd did not start in its namespace: $(tr '\n' ' ' <"$WORK/log/slurmd.start")"
        return 1
    fi
    remember "$(cat "$WORK/run/slurmd.pid")"
    NODE_SHM=/proc/$DEVSHM_PID/root/dev/shm
    if [[ $(awk '$5 == "/dev/shm" { t = $(NF - 2) } END { print t }' "/proc/$DEVSHM_PID/mountinfo") != fuse.poolfs ]]; then
        CLUSTER_WHY="the node's /dev/shm is no pool: $(cat "$log")"
        return 1
    fi
}

# start_shm_control: a plain tmpfs ($SHMCTL) that the control job binds on its /dev/shm.
start_shm_control() {
    SHMCTL=$WORK/shmctl
    mkdir -p "$SHMCTL"
    mount -t tmpfs -o mode=1777,size=64m poolfs-clu-shmctl "$SHMCTL"
}

# add_users: the test users (a stale one of ours from an aborted run is replaced).
add_users() {
    local u uid name
    for u in "${TEST_USERS[@]}"; do
        read -r uid name <<<"$u"
        if getent passwd "$uid" >/dev/null; then
            [[ $(getent passwd "$uid" | cut -d: -f1) == "$name" ]] || {
                CLUSTER_WHY="uid $uid belongs to another user"
                return 1
            }
            userdel "$name"
        fi
        useradd --no-create-home --no-user-group --gid nogroup --uid "$uid" --shell /bin/bash "$name"
        printf '%s\n' "$name" >>"$WORK/users"
    done
}

# start_pool: a multi-user pool on $POOL with the default options (autohold=session).
start_pool() {
    mkdir -p "$POOL"
    "${POOLFS_BIN:?}" -f -o allow_other "$POOL" 2>"$WORK/log/poolfs.log" &
    POOLFS_PID=$!
    remember "$POOLFS_PID"
    if ! wait_until 100 grep -q 'poolfs: mounted' "$WORK/log/poolfs.log"; then
        CLUSTER_WHY="the pool did not mount: $(tr '\n' ' ' <"$WORK/log/poolfs.log")"
        return 1
    fi
}

# cluster_teardown: cancel our jobs, stop every process we started (newest first), unmount, remove
# the users and the work folder. Runs on every exit.
cluster_teardown() {
    local pid name jobs=() f stepd comm script
    if [[ -n ${SLURM_CONF:-} && -f ${SLURM_CONF:-} ]]; then
        mapfile -t jobs < <(squeue -h -o %i 2>/dev/null || true)
        [[ ${#jobs[@]} -eq 0 ]] || scancel --quiet "${jobs[@]}" 2>/dev/null || true
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
    if [[ -f $WORK/pids ]]; then
        while read -r pid; do stop_pid "$pid"; done < <(tac "$WORK/pids")
    fi
    # A job whose slurmstepd was killed leaves its (empty) freezer groups behind.
    if [[ $CLUSTER_PROCTRACK == cgroup-v1 && -d /sys/fs/cgroup/freezer/slurm_$NODE ]]; then
        find "/sys/fs/cgroup/freezer/slurm_$NODE" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    fi
    if [[ -n ${POOL:-} ]] && mountpoint -q "$POOL" 2>/dev/null; then
        fusermount3 -u "$POOL" 2>/dev/null || fusermount3 -uz "$POOL" 2>/dev/null || true
    fi
    if [[ -n ${SHMCTL:-} ]] && mountpoint -q "$SHMCTL" 2>/dev/null; then
        umount "$SHMCTL" 2>/dev/null || umount -l "$SHMCTL" 2>/dev/null || true
    fi
    if [[ -f $WORK/users ]]; then
        while read -r name; do userdel "$name" 2>/dev/null || true; done <"$WORK/users"
    fi
    rm -rf "$WORK"
}

no_jobs_left() { [[ -z $(squeue -h -t PD,R,CG,CF,S 2>/dev/null) ]]; }
