# shellcheck shell=bash
# shellcheck disable=SC2034  # SLURM_WHY is read by the scripts sourcing this
# What the two Slurm suites share (cluster_test with slurm_env.sh, one node; nodes_test with
# nodes_env.sh, three): checking that Debian's packages are there, a munged and a slurmctld of
# their own in $WORK, the slurm.conf lines they have in common, test users with fixed uids,
# processes recorded and stopped by pid, the teardown steps, and the TAP driver that runs the cases (or skips them
# all with the reason, SLURM_WHY). Sourced by slurm_env.sh and nodes_env.sh, after
# tests/shell/testlib.sh (wait_until, pid_alive, pid_gone), with WORK set before anything runs.

# shellcheck source=tests/shell/testlib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../shell/testlib.sh"

SLURM_WHY=""   # why the cluster cannot be had here (the skip reason)

# log MSG: a TAP diagnostic line.
log() { printf '# %s\n' "$*"; }

# fail MSG: end the current case (run in a subshell) as failed.
fail() {
    log "FAIL: $*"
    exit 1
}

# require_packages PKG...: 0 when the Debian packages are installed, else 1 with SLURM_WHY naming
# the missing ones. Tests install nothing: scripts/test installs every test's packages before the
# first test starts (scripts/lib.sh, TEST_PACKAGES), and counts this skip as a failure.
require_packages() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed || missing+=("$p")
    done
    [[ ${#missing[@]} -eq 0 ]] && return 0
    SLURM_WHY="missing Debian packages: ${missing[*]} (scripts/test installs them)"
    return 1
}

# remember PID: a process of ours that teardown must stop, kept with its start (proc_start).
remember() { printf '%s %s\n' "$1" "$(proc_start "$1")" >>"$WORK/pids"; }

# stop_pid PID [START]: SIGTERM, up to 5 s, then SIGKILL, each only while PID is the process that
# started at START (default: the one PID names now; an empty START: one already gone).
stop_pid() {
    local pid=$1 start=${2-}
    [[ $# -ge 2 ]] || start=$(proc_start "$pid")
    same_proc "$pid" "$start" || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    wait_until 50 other_proc "$pid" "$start" && return 0
    if same_proc "$pid" "$start"; then kill -KILL "$pid" 2>/dev/null || true; fi
    wait_until 50 other_proc "$pid" "$start" || true
}

# stop_remembered: stop every process remember recorded, newest first, if it still runs.
stop_remembered() {
    local pid start
    if [[ -f $WORK/pids ]]; then
        while read -r pid start; do stop_pid "$pid" "$start"; done < <(tac "$WORK/pids")
    fi
}

# start_daemon NAME PIDFILE CMD...: run a daemonizing CMD and remember the pid it writes.
start_daemon() {
    local name=$1 pidfile=$2
    shift 2
    if ! "$@" >"$WORK/log/$name.start" 2>&1; then
        SLURM_WHY="$name did not start: $(tr '\n' ' ' <"$WORK/log/$name.start")"
        return 1
    fi
    if ! wait_until 100 test -s "$pidfile"; then
        SLURM_WHY="$name wrote no pid file"
        return 1
    fi
    remember "$(cat "$pidfile")"
}

# start_controller WRITE_CONF: munged with a fresh key of its own, then WRITE_CONF (which writes
# $WORK/slurm.conf), then slurmctld on it; SLURM_CONF is exported for every Slurm command after.
start_controller() {
    mkdir -p "$WORK/munge" "$WORK/ctld" "$WORK/run" "$WORK/log"
    chmod 0711 "$WORK/munge"    # others reach the socket, nothing else
    head -c 1024 /dev/urandom >"$WORK/munge/key"
    chmod 0400 "$WORK/munge/key"
    start_daemon munged "$WORK/munge/pid" munged --force --key-file="$WORK/munge/key" \
        --socket="$WORK/munge/sock" --pid-file="$WORK/munge/pid" \
        --log-file="$WORK/log/munged.log" --seed-file="$WORK/munge/seed" || return 1
    "$1" || return 1
    export SLURM_CONF=$WORK/slurm.conf
    start_daemon slurmctld "$WORK/run/slurmctld.pid" slurmctld -f "$SLURM_CONF" || return 1
}

# slurm_conf_common CLUSTER CTLD_PORT PROCTRACK SLURMD_DIR: the slurm.conf lines both suites
# have (on stdout): root daemons, munge through $WORK's socket, slurmctld's state, pid and log in
# $WORK, slurmd's spool, pid and log under SLURMD_DIR, no accounting, a quick scheduler, no
# requeue, and ended jobs kept listed for 10 minutes so that a test can read their state. The task
# plugin is task/none and cores the one resource counted, unless SLURM_TASK_PLUGIN and
# SLURM_SELECT_PARAMS say otherwise.
slurm_conf_common() {
    local host
    host=$(hostname -s)
    cat <<CONF
ClusterName=$1
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$WORK/munge/sock
CredType=cred/munge
StateSaveLocation=$WORK/ctld
SlurmdSpoolDir=$4/spool
SlurmctldPidFile=$WORK/run/slurmctld.pid
SlurmdPidFile=$4/run/slurmd.pid
SlurmctldLogFile=$WORK/log/slurmctld.log
SlurmdLogFile=$4/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=$3
TaskPlugin=${SLURM_TASK_PLUGIN:-task/none}
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=${SLURM_SELECT_PARAMS:-CR_Core}
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
CONF
}

# add_test_users "UID NAME"...: the test users (a stale one of ours from an aborted run is
# replaced), recorded for remove_test_users.
add_test_users() {
    local u uid name
    for u in "$@"; do
        read -r uid name <<<"$u"
        if getent passwd "$uid" >/dev/null; then
            [[ $(getent passwd "$uid" | cut -d: -f1) == "$name" ]] || {
                SLURM_WHY="uid $uid belongs to another user"
                return 1
            }
            userdel "$name"
        fi
        useradd --no-create-home --no-user-group --gid nogroup --uid "$uid" --shell /bin/bash "$name" 2>/dev/null
        printf '%s\n' "$name" >>"$WORK/users"
    done
}

remove_test_users() {
    local name
    if [[ -f $WORK/users ]]; then
        while read -r name; do userdel "$name" 2>/dev/null || true; done <"$WORK/users"
    fi
}

# cancel_jobs: scancel every job Slurm lists (all ours: the controller is ours).
cancel_jobs() {
    local jobs=()
    if [[ -n ${SLURM_CONF:-} && -f ${SLURM_CONF:-} ]]; then
        mapfile -t jobs < <(squeue -h -o %i 2>/dev/null || true)
        [[ ${#jobs[@]} -eq 0 ]] || scancel --quiet "${jobs[@]}" 2>/dev/null || true
    fi
}

# wait_report NAME KEY [TENTHS]: until MARK/NAME.KEY exists (default 60 s); fail with the job's
# output otherwise.
wait_report() {
    if ! wait_until "${3:-600}" test -e "$MARK/$1.$2"; then
        log "no $1.$2 report; job outputs:"
        tail -n 20 "$OUT"/*.out 2>/dev/null | sed 's/^/#   /'
        fail "job $1 did not report $2"
    fi
}

# skip_all WHY: the TAP plan of CASES, each skipped with WHY; exits 0.
skip_all() {
    local c n=0
    printf '1..%d\n' "${#CASES[@]}"
    for c in "${CASES[@]}"; do
        n=$((n + 1))
        printf 'ok %d - %s # SKIP %s\n' "$n" "$c" "$1"
    done
    exit 0
}

# run_cases: each of CASES (function case_NAME) in a subshell of its own, one TAP line each, with
# how long it took; 0 when all passed.
run_cases() {
    local c n=0 failed=0 t0
    printf '1..%d\n' "${#CASES[@]}"
    for c in "${CASES[@]}"; do
        n=$((n + 1))
        t0=$SECONDS
        if (set -euo pipefail; "case_$c"); then
            printf 'ok %d - %s\n' "$n" "$c"
        else
            printf 'not ok %d - %s\n' "$n" "$c"
            failed=$((failed + 1))
        fi
        log "$c took $((SECONDS - t0)) s"
    done
    [[ $failed -eq 0 ]]
}
