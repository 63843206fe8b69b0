# shellcheck shell=bash
# What the bash-driven tests (tests/install, tests/lib/poolctl_ls_test.sh, examples/) share:
# failing with a message, bounded waiting, and taking down a pool they mounted. Sourced, not run.

# fail MESSAGE...: the test fails with MESSAGE.
fail() {
    printf 'FAIL: %s\n' "$*" >&2
    exit 1
}

# wait_for DESCRIPTION CMD...: run CMD until it succeeds; fail after about 30 s (a bound against
# hanging forever, not a timing check).
wait_for() {
    local what=$1 i
    shift
    for ((i = 0; i < 300; i++)); do
        "$@" && return 0
        sleep 0.1
    done
    fail "gave up waiting for: $what"
}

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
