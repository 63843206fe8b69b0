# shellcheck shell=bash
# shellcheck disable=SC2034  # NODES, NODE_PIDS, ... are read by the script sourcing this
# The many-nodes suite's private world (docs/cluster.md, "Many nodes"): three virtual Slurm nodes
# on this machine. One munged and one slurmctld of its own in $WORK (own key, socket, spool, state,
# loopback port 46827); per node a slurmd (`slurmd -N NAME`, Debian's Slurm 22.05 is built without
# --enable-multiple-slurmd, so each slurmd gets its own spool, pid and log files by a bind mount in
# its own mount namespace at the one path slurm.conf names), with its own address 127.0.0.2N and
# port 4683N, in a mount and UTS namespace of its own (`hostname` says the node), whose scratch
# folder $WORK/pool and /dev/shm are pools of that node, started with the packaged units' command
# lines (systemd/poolfs@.service.in, poolfs-devshm.service.in: `poolfs -f -o allow_other poolfs
# MOUNTPOINT`). Jobs, the time-limit job and Dask run as test users of their own (uids 61011-61013).
# slurm.conf sets PrologFlags=Contain: each job has an extern step on each of its nodes.
# Every process started here is recorded and stopped by pid in nodes_teardown; what runs in a
# node's namespaces (step daemons, tasks, Dask) is found through that namespace and stopped by pid
# too; the namespaces end with their last process, and their mounts with them. What the one-node
# suite does the same way is in slurm_common.sh.
# Source it from a bash script with `set -euo pipefail` after setting WORK.

# shellcheck source=tests/cluster/slurm_common.sh
. "$(dirname "${BASH_SOURCE[0]}")/slurm_common.sh"

NODES_PACKAGES=(munge slurmctld slurmd slurm-client openmpi-bin libopenmpi-dev python3-distributed)
NODES_CTLD_PORT=46827
NODES=(pnode1 pnode2 pnode3)
# node name -> its loopback address and slurmd port
declare -A NODE_ADDR=([pnode1]=127.0.0.21 [pnode2]=127.0.0.22 [pnode3]=127.0.0.23)
declare -A NODE_PORT=([pnode1]=46831 [pnode2]=46832 [pnode3]=46833)
declare -A NODE_SLURMD=() NODE_SCRATCH_PID=() NODE_SHM_PID=() NODE_NS=()
# The jobs' user, the time-limit job's and the Dask user (uid name: fixed, high, unlikely to
# clash; removed at the end).
NODES_USER_UID=61011
LIMIT_UID=61012
DASK_UID=61013
NODES_TEST_USERS=("61011 poolfs-nod1" "61012 poolfs-nod2" "61013 poolfs-nod3")
# The pools' options: the units' default POOLFS_OPTIONS.
POOL_OPTIONS=allow_other

write_nodes_conf() {
    local n
    {
        slurm_conf_common poolfsnodes "$NODES_CTLD_PORT" proctrack/linuxproc "$WORK/node"
        printf '%s\n' SlurmdTimeout=10 JobRequeue=0 PrologFlags=Contain
    } >"$WORK/slurm.conf"
    for n in "${NODES[@]}"; do
        printf 'NodeName=%s NodeHostname=%s NodeAddr=%s Port=%s CPUs=4 RealMemory=1000 State=UNKNOWN\n' \
            "$n" "$n" "${NODE_ADDR[$n]}" "${NODE_PORT[$n]}" >>"$WORK/slurm.conf"
    done
    printf 'PartitionName=nodes Nodes=%s Default=YES MaxTime=INFINITE State=UP\n' \
        "$(IFS=,; echo "${NODES[*]}")" >>"$WORK/slurm.conf"
}

nodes_idle() { [[ $(sinfo -h -N -o '%N %t' 2>/dev/null | grep -cE ' (idle|mix|alloc)$') -eq ${#NODES[@]} ]]; }

# start_nodes_slurm: munged, slurmctld, one slurmd per node; 0 once every node takes jobs.
start_nodes_slurm() {
    local n
    mkdir -p "$WORK/node" "$WORK/pool"
    start_controller write_nodes_conf || return 1
    for n in "${NODES[@]}"; do start_one_node "$n" || return 1; done
    if ! wait_until 300 nodes_idle; then
        SLURM_WHY="the nodes never became idle: $(sinfo -h -N -o '%N %t %E' 2>&1 | tr '\n' ' ')"
        tail -n 5 "$WORK/log/slurmctld.log" "$WORK"/nodes/*/log/slurmd.log 2>/dev/null | sed 's/^/#   /'
        return 1
    fi
}

# start_one_node NAME: the node's namespaces (mount and UTS, all mounts private), its own state
# folder bound on $WORK/node, its two pools, then slurmd -N NAME. Sets NODE_SLURMD, NODE_SCRATCH_PID,
# NODE_SHM_PID and NODE_NS (the namespace's mnt inode) for NAME.
# The namespace starts as a copy of the machine's mounts, with the pools of the tests that run
# alongside this one: it first lets go of every FUSE mount that is not under $WORK (its copies
# only), else its copy would keep their connections after their tests unmount them.
start_one_node() {
    local n=$1 dir=$WORK/nodes/$1
    mkdir -p "$dir/spool" "$dir/run" "$dir/log"
    # shellcheck disable=SC2016  # expanded by the inner bash
    unshare -m -u --propagation private -- bash -c '
        node=$1 poolfs=$2 dir=$3 work=$4 opts=$5 conf=$6
        awk -v w="$work/" '\''$(NF - 2) ~ /^fuse/ && index($5, w) != 1 { print $5 }'\'' /proc/self/mountinfo |
            while read -r m; do umount -l "$(printf "%b" "$m")" 2>/dev/null || true; done
        hostname "$node" || exit 1
        mount --bind "$dir" "$work/node" || exit 1
        # Under the /dev/shm pool a tmpfs of the node: were the pool to go, jobs would see that,
        # never the machine'"'"'s /dev/shm.
        mount -t tmpfs -o "mode=1777,nosuid,nodev,size=1g" "poolfs-$node-guard" /dev/shm || exit 1
        "$poolfs" -f -o "$opts" poolfs /dev/shm 2>"$dir/log/devshm-pool.log" &
        echo $! >"$dir/run/devshm-pool.pid"
        "$poolfs" -f -o "$opts" poolfs "$work/pool" 2>"$dir/log/scratch-pool.log" &
        echo $! >"$dir/run/scratch-pool.pid"
        for ((i = 0; i < 100; i++)); do
            if grep -q "^poolfs: mounted" "$dir/log/devshm-pool.log" &&
                grep -q "^poolfs: mounted" "$dir/log/scratch-pool.log"; then
                exec slurmd -f "$conf" -N "$node"
            fi
            sleep 0.1
        done
        echo "the pools did not mount: $(cat "$dir"/log/*-pool.log)"
        exit 1' start_one_node "$n" "${POOLFS_BIN:?}" "$dir" "$WORK" "$POOL_OPTIONS" "$SLURM_CONF" \
        >"$dir/log/slurmd.start" 2>&1 || true
    local f
    for f in devshm-pool scratch-pool; do
        [[ -s $dir/run/$f.pid ]] && remember "$(cat "$dir/run/$f.pid")"
    done
    if ! wait_until 100 test -s "$dir/run/slurmd.pid"; then
        SLURM_WHY="slurmd of $n did not start: $(tr '\n' ' ' <"$dir/log/slurmd.start")"
        return 1
    fi
    NODE_SLURMD[$n]=$(cat "$dir/run/slurmd.pid")
    NODE_SHM_PID[$n]=$(cat "$dir/run/devshm-pool.pid")
    NODE_SCRATCH_PID[$n]=$(cat "$dir/run/scratch-pool.pid")
    NODE_NS[$n]=$(readlink "/proc/${NODE_SHM_PID[$n]}/ns/mnt")
    remember "${NODE_SLURMD[$n]}"
    printf '%s %s %s %s\n' "$n" "${NODE_SHM_PID[$n]}" "${NODE_SCRATCH_PID[$n]}" "${NODE_NS[$n]}" >>"$WORK/nodes.list"
    [[ $(mount_type "${NODE_SHM_PID[$n]}" /dev/shm) == fuse.poolfs &&
        $(mount_type "${NODE_SHM_PID[$n]}" "$WORK/pool") == fuse.poolfs ]] ||
        { SLURM_WHY="$n: its pools are not mounted: $(cat "$dir"/log/*-pool.log)"; return 1; }
}

# mount_type PID PATH: the type of what is mounted on PATH (the topmost) as process PID sees it.
mount_type() { awk -v p="$2" '$5 == p { t = $(NF - 2) } END { print t }' "/proc/$1/mountinfo"; }

# on_node NAME CMD...: CMD in the node's namespaces (as root), with the node's root and working
# folder (-r -w): where the test runs chrooted (scripts/test --fresh-root), entering a mount
# namespace alone would put CMD at that namespace's real root, outside the chroot.
on_node() {
    local n=$1
    shift
    nsenter -t "${NODE_SHM_PID[$n]}" -m -u -r -w -- "$@"
}

# as_user_on NAME CMD...: CMD in the node's namespaces as the test user.
as_user_on() {
    local n=$1
    shift
    on_node "$n" setpriv --reuid="$NODES_USER_UID" --regid=nogroup --clear-groups "$@"
}

# pool_entries NAME WHICH [UID]: the number of entries in the node's pool WHICH (scratch or shm),
# of all users or of UID's, from the pool's own count (user.poolfs.stat, read as root).
pool_entries() {
    local mp=$WORK/pool
    [[ $2 == shm ]] && mp=/dev/shm
    on_node "$1" getfattr --absolute-names --only-values -n user.poolfs.stat "$mp" |
        awk -v u="${3:-}" 'u == "" && $1 == "entries" { n = $2 }
            u != "" && $1 == "user" && $2 == u && $3 == "entries" { n = $4 }
            END { print n + 0 }'
}

# node_listing NAME: what the jobs' user sees in the node's two pools, one path a line.
node_listing() {
    as_user_on "$1" find "$WORK/pool" /dev/shm -mindepth 1 2>/dev/null | sort || true
}

# nodes_left [UID]: "NAME:scratch=N,shm=N ..." for every node; all_nodes_empty [UID]: all zero.
nodes_left() {
    local n
    for n in "${NODES[@]}"; do
        printf '%s:scratch=%s,shm=%s ' "$n" "$(pool_entries "$n" scratch "${1:-}")" "$(pool_entries "$n" shm "${1:-}")"
    done
}

all_nodes_empty() { [[ $(nodes_left "${1:-}") != *=[1-9]* ]]; }

# ns_pids INODE: the processes in mount namespace INODE (mnt:[N]), newest first.
ns_pids() {
    local p
    for p in /proc/[0-9]*; do
        [[ $(readlink "$p/ns/mnt" 2>/dev/null) == "$1" ]] && printf '%s\n' "${p#/proc/}"
    done | sort -rn
}

# ppid PID: its parent's pid (empty once it is gone).
ppid() { awk '{print $4}' "/proc/$1/stat" 2>/dev/null || true; }

# nodes_teardown: cancel the jobs, stop every process of the nodes' namespaces (all ours: we made
# the namespaces) but the pools and their helpers, then everything recorded (newest first),
# then whatever is left in the namespaces, unmount the control tmpfs, remove the user and the
# work folder. Runs on every exit.
# A pool's helpers (its unmount guard and libfuse's `fusermount3 --auto-unmount`, children of
# the daemon) ignore SIGTERM on purpose (fs/unmount_guard.h): they go by themselves once their
# daemon has ended, so they are left to it, and signalled only if they outlive it by 2 s
# (SIGTERM to each cost 5 s before its SIGKILL: a minute of every run).
nodes_teardown() {
    local n shm scratch ns pid parent
    cleanup_begins
    cancel_jobs
    if [[ -f $WORK/nodes.list ]]; then
        while read -r n shm scratch ns; do
            for pid in $(ns_pids "$ns"); do
                parent=$(ppid "$pid")
                [[ $pid == "$shm" || $pid == "$scratch" || $parent == "$shm" || $parent == "$scratch" ]] ||
                    stop_pid "$pid"
            done
        done <"$WORK/nodes.list"
    fi
    stop_remembered
    if [[ -f $WORK/nodes.list ]]; then
        while read -r n shm scratch ns; do
            for pid in $(ns_pids "$ns"); do wait_until 20 pid_gone "$pid" || stop_pid "$pid"; done
        done <"$WORK/nodes.list"
    fi
    if [[ -n ${CONTROL:-} ]] && mountpoint -q "$CONTROL" 2>/dev/null; then
        umount "$CONTROL" 2>/dev/null || umount -l "$CONTROL" 2>/dev/null || true
    fi
    remove_test_users
    rm -rf "$WORK"
}
