# shellcheck shell=bash
# Machine-wide locks of poolfs's scripts and tests, one way for all of them: a lock file per
# resource in /run/lock (poolfs-NAME.lock, flock(2)), for what two runs on one machine would
# otherwise share: a whole scripts/test run ("scripts-test"), apt ("apt"), the kernel's
# enable_uring switch ("enable_uring"), the Slurm suites' fixed uids and ports ("cluster-slurm",
# "cluster-nodes"), the uids tests/programs picks from ("test-users"). The second taker waits and
# says for whom. Sourced by scripts/lib.sh and tests/shell/testlib.sh (CONTRIBUTING.md, "Running
# tests side by side").

MACHINE_LOCK_FDS=()   # the descriptors of the locks this shell holds

# machine_lock_path NAME: the lock file of resource NAME.
machine_lock_path() {
    local dir=${POOLFS_LOCK_DIR:-/run/lock}
    [[ -d $dir && -w $dir ]] || dir=${TMPDIR:-/tmp}
    printf '%s/poolfs-%s.lock\n' "$dir" "$1"
}

# machine_lock NAME VAR [WHO]: take resource NAME's lock, waiting while another holds it; the
# lock's descriptor goes into the variable VAR (machine_unlock VAR lets go; so does the end of this
# process and of every child that inherited the descriptor). WHO says who holds
# it, for the message of the next one who waits (default: this script and its pid).
machine_lock() {
    local __ml_name=$1 __ml_path __ml_fd __ml_who=${3:-"${0##*/} (pid $$)"}
    __ml_path=$(machine_lock_path "$__ml_name")
    exec {__ml_fd}>>"$__ml_path" || return 1
    if ! flock -n "$__ml_fd"; then
        printf '%s: waiting for the machine lock "%s": %s\n' "${PROG:-${0##*/}}" "$__ml_name" \
            "$(head -c 200 "$__ml_path" 2>/dev/null || true)" >&2
        flock "$__ml_fd" || return 1
    fi
    # Whom the next waiter waits for: the lock is on the file, so rewriting it keeps the lock.
    printf '%s, since %s\n' "$__ml_who" "$(date '+%F %T')" >"$__ml_path"
    printf -v "$2" '%s' "$__ml_fd"
    MACHINE_LOCK_FDS+=("$__ml_fd")
}

# machine_unlock VAR: let go of the lock whose descriptor is in the variable VAR (none: nothing).
machine_unlock() {
    # Names of our own that no caller's VAR can be (a local would hide the caller's variable).
    local __ml_fd=${!1:-} __ml_i
    [[ -n $__ml_fd ]] || return 0
    exec {__ml_fd}>&-
    for __ml_i in "${!MACHINE_LOCK_FDS[@]}"; do
        [[ ${MACHINE_LOCK_FDS[$__ml_i]} == "$__ml_fd" ]] && unset "MACHINE_LOCK_FDS[$__ml_i]"
    done
    printf -v "$1" '%s' ""
}

# without_machine_locks CMD...: run CMD without the descriptors of the locks this shell holds, so
# that a process CMD leaves behind cannot hold them after this shell lets go.
without_machine_locks() {
    # Already a subshell (`without_machine_locks CMD &`): close and exec here, since a subshell of
    # our own would leave this one holding the descriptors while it waits for CMD.
    if [[ $BASHPID != "$$" ]]; then
        for __ml_fd in "${MACHINE_LOCK_FDS[@]}"; do exec {__ml_fd}>&-; done
        exec "$@"
    fi
    (
        for __ml_fd in "${MACHINE_LOCK_FDS[@]}"; do exec {__ml_fd}>&-; done
        exec "$@"
    )
}
