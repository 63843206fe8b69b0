# shellcheck shell=bash
# What the bash-driven tests (tests/install, tests/lib/poolctl_ls_test.sh, tests/cluster,
# tests/programs, tests/devshm, examples/) share: failing with a message, bounded waiting, whether
# a process still runs, taking down a pool they mounted, and the machine-wide locks of
# scripts/machine_lock.sh. Sourced, not run.

# In the source tree only: tests/programs gives its cases a copy of this file, which takes no lock.
if [[ -f $(dirname "${BASH_SOURCE[0]}")/../../scripts/machine_lock.sh ]]; then
    # shellcheck source=scripts/machine_lock.sh
    . "$(dirname "${BASH_SOURCE[0]}")/../../scripts/machine_lock.sh"
fi

# cleanup_begins: the first call of a cleanup that an EXIT trap runs, in a script whose INT and
# TERM traps `exit 130`: from here on those signals (meson's timeout, a second Ctrl-C) are
# ignored, since exiting in the middle would leave running what the cleanup was about to stop.
cleanup_begins() {
    trap '' INT TERM
}

# fail MESSAGE...: the test fails with MESSAGE.
fail() {
    printf 'FAIL: %s\n' "$*" >&2
    exit 1
}

# wait_until TENTHS CMD...: run CMD every 0.1 s until it succeeds, at most TENTHS times and once
# more: CMD's last status (a bound against hanging forever, not a timing check).
wait_until() {
    local n=$1 i
    shift
    for ((i = 0; i < n; i++)); do
        "$@" && return 0
        sleep 0.1
    done
    "$@"
}

# wait_for DESCRIPTION CMD...: run CMD until it succeeds; fail after about 30 s.
wait_for() {
    local what=$1
    shift
    wait_until 300 "$@" || fail "gave up waiting for: $what"
}

# pid_alive PID: true while PID runs (a zombie counts as gone); pid_gone PID: the opposite.
pid_alive() {
    local st
    st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
    [[ -n $st && $st != Z && $st != X ]]
}

pid_gone() { ! pid_alive "$1"; }

# proc_start PID: when the process PID started (field 22 of /proc/PID/stat, clock ticks since
# boot), nothing if there is none. A pid alone stops naming its process once that ends: pids
# come back within a minute here (kernel.pid_max is 32768 and the tests fork thousands), so a
# pid kept for later is kept with its start, and checked against it before any signal.
proc_start() {
    local stat f
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
    read -r -a f <<<"${stat##*) }"   # from field 3 on: the name before may hold spaces
    printf '%s\n' "${f[19]}"
}

# same_proc PID START: PID runs and is the process that started at START (not a zombie).
same_proc() { [[ -n $2 && $(proc_start "$1") == "$2" ]] && pid_alive "$1"; }
other_proc() { ! same_proc "$1" "$2"; }

# stop_pool MOUNTPOINT [PID]: unmount (lazily if busy), then stop the daemon this test started,
# by its pid, and reap it. For cleanup traps: never fails.
stop_pool() {
    local mnt=$1 pid=${2:-}
    if mountpoint -q "$mnt"; then
        fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true
    fi
    if [[ -n $pid ]]; then
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
}

# copy_for_users DIR FILE...: copies of FILEs in DIR (made if missing), readable and runnable by
# every user, for tests that run them as test users, who may not read the tree (a clone in root's
# 0700 home). A file with libpoolfs beside it (poolctl in the build dir) brings it along: the
# copy finds it beside itself ($ORIGIN).
copy_for_users() {
    local dir=$1 f
    shift
    mkdir -p "$dir"
    for f in "$@"; do
        cp "$f" "$dir/"
        [[ ! -e $(dirname "$f")/libpoolfs.so.0 ]] || cp "$(dirname "$f")/libpoolfs.so.0" "$dir/"
    done
    chmod -R a+rX "$dir"
}
