#!/usr/bin/env bash
# scripts/machine_lock.sh, the one way runs on one machine take what they would share: a second
# taker waits until the first lets go (machine_unlock) and says for whom; without_machine_locks
# runs a command that does not hold the locks, so what it leaves behind keeps nobody waiting; and
# every test script that creates users or binds fixed ports takes a lock first.
#   test_machine_lock.sh ROOT
set -euo pipefail
ROOT=$1
WORK=$(mktemp -d /tmp/poolfs-machine-lock.XXXXXX)
export POOLFS_LOCK_DIR=$WORK   # locks of this test alone, not the machine's
child=""
cleanup() {
    [[ -z $child ]] || kill "$child" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
# shellcheck source=scripts/machine_lock.sh
. "$ROOT/scripts/machine_lock.sh"
echo "1..4"
n=0
report() {
    n=$((n + 1))
    if [[ -z $2 ]]; then echo "ok $n - $1"; else echo "not ok $n - $1"; echo "# $2"; fi
}

# 1: the second taker waits for the first, and names it.
machine_lock demo fd "the first taker"
# Another process, as another run would be: not a fork holding the first taker's descriptor.
# shellcheck disable=SC2016  # expanded by the inner shell
without_machine_locks bash -c '. "$1"; machine_lock demo fd2 "the second taker" 2>"$2/waited"
    date +%s.%N >"$2/second"' _ "$ROOT/scripts/machine_lock.sh" "$WORK" &
child=$!
sleep 1
why=""
[[ ! -e $WORK/second ]] || why="the second taker did not wait"
released=$(date +%s.%N)
machine_unlock fd
wait "$child" || why="the second taker failed"
child=""
[[ -n $why || -e $WORK/second ]] || why="the second taker never got the lock"
[[ -n $why ]] || awk -v a="$(cat "$WORK/second")" -v b="$released" 'BEGIN { exit !(a >= b) }' ||
    why="the second taker got the lock before the first let go"
[[ -n $why ]] || grep -q 'waiting for the machine lock "demo": the first taker' "$WORK/waited" ||
    why="the waiter did not say for whom: $(cat "$WORK/waited")"
report "a second taker waits for the first and says for whom" "$why"

# 2: machine_unlock forgets the descriptor; a second unlock is harmless.
why=""
[[ -z $fd && ${#MACHINE_LOCK_FDS[@]} -eq 0 ]] || why="fd '$fd', held: ${MACHINE_LOCK_FDS[*]}"
machine_unlock fd || why="a second unlock failed"
report "machine_unlock lets go once and forgets" "$why"

# 3: a command run without_machine_locks holds none: a process it leaves keeps nobody waiting.
machine_lock demo fd "the holder"
# shellcheck disable=SC2016  # expanded by the inner shell
without_machine_locks bash -c 'sleep 30 </dev/null >/dev/null 2>&1 & echo $! >"$1"' _ "$WORK/leftover"
child=$(cat "$WORK/leftover")
machine_unlock fd
why=""
# shellcheck disable=SC2016  # expanded by the inner shell
timeout 5 bash -c '. "$1"; machine_lock demo fd "after the holder"' _ "$ROOT/scripts/machine_lock.sh" \
    2>/dev/null || why="the lock stayed taken by the leftover process"
kill "$child" 2>/dev/null || true
child=""
report "what a command run without_machine_locks leaves behind holds no lock" "$why"

# 4: test scripts that create users or use fixed ports take a machine lock.
# sourcing_scripts LIB: the test scripts (not libraries) that source LIB, directly or through
# libraries that source it.
declare -A seen_libs=()
sourcing_scripts() {
    local user
    seen_libs[$1]=1
    while IFS= read -r user; do
        if head -n 1 "$user" | grep -q '^# shellcheck shell='; then
            # Libraries name each other (slurm_common.sh and slurm_env.sh): each is walked once.
            [[ -n ${seen_libs[$user]:-} ]] || sourcing_scripts "$user"
        else
            printf '%s\n' "$user"
        fi
    done < <(grep -rlE "\b$(basename "$1")\b" "$ROOT/tests" |
        grep -v -e '/lint/' -e "^$1\$" -e '/meson\.build$' -e '\.\(c\|h\|py\|md\)$')
}
why="" users=()
while IFS= read -r f; do
    if head -n 1 "$f" | grep -q '^# shellcheck shell='; then
        mapfile -t users < <(sourcing_scripts "$f")
        [[ ${#users[@]} -gt 0 ]] || why+="nothing sources $f; "
    else
        users=("$f")
    fi
    for u in "${users[@]}"; do
        grep -q 'machine_lock ' "$u" || why+="$u creates users (through $f) but takes no machine_lock; "
    done
done < <(grep -rlE '^[^#]*\buseradd\b' "$ROOT/tests" | grep -v '/lint/')
for f in "$ROOT/tests/cluster/cluster_test" "$ROOT/tests/cluster/nodes_test"; do
    grep -q 'machine_lock ' "$f" || why+="$f (fixed ports and uids) takes no machine_lock; "
done
report "test scripts that create users or bind fixed ports take a machine lock" "$why"
