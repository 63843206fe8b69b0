#!/usr/bin/env bash
# Build-tree runner of the examples (meson suite "examples"): mounts a pool with the default
# options, runs one example in a session of its own (setsid: the default autohold=session keeps
# what the example writes until that session ends), checks its output, and checks the pool is
# empty once the session is over.
#
#   run_examples.sh POOLFS POOLCTL EXAMPLES_BUILDDIR EXAMPLES_SRCDIR plain|libpoolfs|shell
set -euo pipefail
# shellcheck source=tests/shell/testlib.sh
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../tests/shell/testlib.sh"
poolfs=$1 poolctl=$2 bin=$3 src=$4 which=$5

T=$(mktemp -d /tmp/poolfs-examples.XXXXXX)
m=$T/pool
DAEMON=""
cleanup() {
    stop_pool "$m" "$DAEMON"
    rm -rf "$T"
}
trap cleanup EXIT
is_empty() { [[ -z $(ls -A "$m") ]]; }

mkdir -p "$m"
"$poolfs" -f "$m" 2>"$T/daemon.err" &
DAEMON=$!
wait_for "the mount" mountpoint -q "$m"

case $which in
    plain)
        # shellcheck disable=SC2016  # expanded by the inner shell
        setsid --wait bash -c '"$1/producer" "$2/m.bin" 1000 && "$3/consumer" "$2/m.bin"' \
            _ "$bin/plain" "$m" "$bin/plain" >"$T/out" || fail "plain: $(cat "$T/out")"
        grep -qx 'consumer: 1000 doubles, sum 249750.0' "$T/out" || fail "plain: $(cat "$T/out")"
        ;;
    libpoolfs)
        # shellcheck disable=SC2016
        setsid --wait bash -c 'p=$("$1/producer" "$2" 300 200) && "$1/consumer" "$p" &&
            /usr/bin/python3 -c "import numpy, sys; a = numpy.load(sys.argv[1], mmap_mode=\"r\"); print(\"numpy\", a.shape, a.sum())" "$p"' \
            _ "$bin/libpoolfs" "$m" >"$T/out" || fail "libpoolfs: $(cat "$T/out")"
        grep -qx '300x200 sum 14940000.0' "$T/out" || fail "libpoolfs: $(cat "$T/out")"
        grep -qx 'numpy (300, 200) 14940000.0' "$T/out" || fail "libpoolfs, numpy: $(cat "$T/out")"
        ;;
    shell)
        POOLCTL=$poolctl setsid --wait "$src/shell/job.sh" "$m" >"$T/out" || fail "shell: $(cat "$T/out")"
        grep -qx 'largest: 100000' "$T/out" || fail "shell: $(cat "$T/out")"
        grep -q ' sorted .*held-above=' "$T/out" || fail "shell, poolctl ls: $(cat "$T/out")"
        ;;
    *) fail "unknown example '$which'" ;;
esac
wait_for "the pool to empty once the example's session ended" is_empty
echo "ok: $which"
