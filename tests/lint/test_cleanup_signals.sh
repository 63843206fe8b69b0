#!/usr/bin/env bash
# A cleanup run by an EXIT trap finishes even when INT or TERM comes while it runs
# (tests/shell/testlib.sh cleanup_begins), and every test script whose signals `exit 130` starts
# each cleanup it traps on EXIT with it: else meson's timeout, arriving during a slow cleanup,
# ends the script there and leaves daemons running that break the next run.
#   test_cleanup_signals.sh ROOT
set -euo pipefail
ROOT=$1
WORK=$(mktemp -d /tmp/poolfs-cleanup-signals.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
echo "1..3"

# script_with CLEANUP-FIRST-LINE: a script in the tests' pattern whose cleanup takes a second.
script_with() {
    cat <<SCRIPT
#!/usr/bin/env bash
set -euo pipefail
. "$ROOT/tests/shell/testlib.sh"
cleanup() {
    $1
    touch "$WORK/started"
    sleep 1
    touch "$WORK/finished"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
exit 0
SCRIPT
}

# run_terminated FIRST-LINE: run the script, TERM it while its cleanup runs; "finished" or not.
run_terminated() {
    local pid i
    rm -f "$WORK/started" "$WORK/finished"
    script_with "$1" >"$WORK/script"
    bash "$WORK/script" &
    pid=$!
    for ((i = 0; i < 100; i++)); do
        [[ -e $WORK/started ]] && break
        sleep 0.05
    done
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" || true
    if [[ -e $WORK/finished ]]; then echo finished; else echo cut; fi
}

# The check can fail: without cleanup_begins the TERM cuts the cleanup short.
if [[ $(run_terminated ":") == cut ]]; then
    echo "ok 1 - a TERM during a plain cleanup cuts it short"
else
    echo "not ok 1 - a TERM during a plain cleanup cuts it short (the check cannot fail)"
fi
if [[ $(run_terminated cleanup_begins) == finished ]]; then
    echo "ok 2 - a cleanup that begins with cleanup_begins finishes despite a TERM"
else
    echo "not ok 2 - a cleanup that begins with cleanup_begins finishes despite a TERM"
fi

# Every test script that traps INT/TERM to `exit 130` and a function on EXIT: that function's
# first command is cleanup_begins (the function may live in a file the script sources).
missing=()
while IFS= read -r f; do
    while IFS= read -r fn; do
        first=$(cat "$f" "$(dirname "$f")"/*.sh 2>/dev/null |
                awk -v fn="$fn" '$0 ~ "^ *" fn "\\(\\) *\\{" {getline; while ($0 ~ /^ *(local .*)?$/) getline; print $1; exit}' || true)
        [[ $first == cleanup_begins ]] || missing+=("$f: $fn")
    done < <(grep -oE "^ *trap [a-z_]+ EXIT" "$f" | awk '{print $2}')
done < <(grep -rlE "trap 'exit 130' INT TERM" "$ROOT/tests" | grep -v "/lint/")
if [[ ${#missing[@]} -eq 0 ]]; then
    echo "ok 3 - every cleanup trapped on EXIT begins with cleanup_begins"
else
    echo "not ok 3 - every cleanup trapped on EXIT begins with cleanup_begins"
    printf '#   missing in %s\n' "${missing[@]}"
fi
