#!/usr/bin/env bash
# poolctl metrics through the real parts an admin runs: a pool with files of two users, a quota
# refusal, removals of three kinds; the command of poolfs-metrics.service (its own ExecStart, with
# the built poolctl and a temporary folder for node_exporter's) writes the textfile; Debian's
# prometheus-node-exporter, on a free loopback port with only its textfile collector, serves it;
# curl scrapes /metrics, and every metric of docs/monitoring.md shows with the values made here.
# promtool check metrics finds nothing to say of poolctl metrics' output, and a user sees its own
# usage only.
#
#   metrics_test.sh POOLFS POOLCTL UNIT   (UNIT: the built poolfs-metrics.service)
set -euo pipefail
# shellcheck source=tests/shell/testlib.sh
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../shell/testlib.sh"
poolfs=$1
poolctl=$2
unit=$3

need() {
    command -v "$1" >/dev/null ||
        fail "$1 is missing: install the Debian package $2 (scripts/test does: TEST_PACKAGES in scripts/lib.sh)"
}
need prometheus-node-exporter prometheus-node-exporter
need promtool prometheus
need curl curl
need setpriv util-linux
need unshare util-linux

# A mount namespace of our own, so that the unit's --all finds this test's pool alone: the pools
# other tests mounted before it are detached here (copies: their daemons go on serving them).
if [[ -z ${POOLFS_METRICS_OWN_NS:-} ]]; then
    exec env POOLFS_METRICS_OWN_NS=1 unshare -m --propagation private -- "$0" "$@"
fi
# (findmnt exits 1 when it finds none.)
mounts=$(findmnt -rn -t fuse.poolfs -o TARGET || true)
while read -r t; do
    [[ -z $t ]] || umount -l "$(printf '%b' "$t")" || true
done <<<"$mounts"
[[ -z $(findmnt -rn -t fuse.poolfs -o TARGET || true) ]] || fail "other pools are still mounted here"

T=$(mktemp -d /tmp/poolfs-metrics.XXXXXX)
chmod 755 "$T" # the two users reach the pool through it
# The users run a copy of poolctl (copy_for_users): the build tree may be root's alone.
copy_for_users "$T/bin" "$poolctl"
poolctl=$T/bin/poolctl
m=$T/pool
text=$T/textfile
DAEMON=""
EXPORTER=""
MAPPER=""
cleanup() {
    cleanup_begins
    if [[ -n $MAPPER ]]; then
        kill "$MAPPER" 2>/dev/null || true
        wait "$MAPPER" 2>/dev/null || true
    fi
    if [[ -n $EXPORTER ]]; then
        kill "$EXPORTER" 2>/dev/null || true
        wait "$EXPORTER" 2>/dev/null || true
    fi
    stop_pool "$m" "$DAEMON"
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$m" "$text"
A=(setpriv --reuid=60001 --regid=60001 --clear-groups)
B=(setpriv --reuid=60002 --regid=60002 --clear-groups)

"$poolfs" -f -o "allow_other,autohold=none,max_size=64M,max_user_size=1M" "$m" 2>"$T/daemon.err" &
DAEMON=$!
wait_for "the mount" mountpoint -q "$m"

# Two users' files: A's job folder with 8 KiB and B's with 4 KiB and an empty file whose growth
# to 2 MiB the 1 MiB quota refuses (EDQUOT); B looks into A's folder (EACCES, a denial).
ja=$("${A[@]}" "$poolctl" mkjob --pin "$m")
jb=$("${B[@]}" "$poolctl" mkjob --pin "$m")
"${A[@]}" sh -c "head -c 8192 /dev/zero >'$ja/data' && echo x >'$ja/small'"
"${B[@]}" sh -c "head -c 4096 /dev/zero >'$jb/data'"
if "${B[@]}" truncate -s 2M "$jb/big" 2>"$T/truncate.err"; then
    fail "the quota let B's file grow past max_user_size"
fi
grep -q "quota exceeded" "$T/truncate.err" || fail "truncate: $(cat "$T/truncate.err")"
if "${B[@]}" ls "$ja" >/dev/null 2>&1; then
    fail "B listed A's folder"
fi
# Removals: an unlink, a file closed with nothing else keeping it, a job whose hold ended.
"${A[@]}" rm "$ja/small"
"${A[@]}" sh -c "echo y >'$m/gone-at-close'"
jc=$("${A[@]}" "$poolctl" mkjob --pin "$m")
"${A[@]}" "$poolctl" release "$jc"
[[ ! -e $jc && ! -e $m/gone-at-close ]] || fail "an entry was not removed"
# A file mapped, its descriptor closed, then unmapped. The mapping keeps the kernel's handle
# open (the page cache; passthrough on this kernel too) or, once that is closed, the file maybe
# mapped: one of the two gauges counts it until it goes.
sig=$T/sig
mkdir -m 777 "$sig"
"${A[@]}" /usr/bin/python3 - "$m/mapped" "$sig" <<'MAPPER_EOF' &
import mmap, os, sys, time
path, sig = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
os.ftruncate(fd, 4096)
mm = mmap.mmap(fd, 4096)
os.close(fd)
mm[0:1] = b"x"
open(sig + "/ready", "w").close()
while not os.path.exists(sig + "/go"):
    time.sleep(0.05)
mm.close()
MAPPER_EOF
MAPPER=$!
wait_for "the mapping" test -e "$sig/ready"
counter() { getfattr --only-values -n user.poolfs.counters "$m" | sed -n "s/^$1 //p"; }
mapping_counted() { (($(counter open_handles) + $(counter maybe_mapped) == 1)); }
wait_for "the mapping counted open or maybe mapped" mapping_counted
dp=$(getfattr --only-values -n user.poolfs.stat "$m" | sed -n 's/^datapath //p')
touch "$sig/go"
wait "$MAPPER" || fail "the mapper failed"
MAPPER=""
wait_for "the unmapped file removed" test ! -e "$m/mapped"

# node_exporter on a free loopback port, its textfile collector alone, reading our folder.
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
prometheus-node-exporter --web.listen-address="127.0.0.1:$port" --collector.disable-defaults \
    --collector.textfile --collector.textfile.directory="$text" --web.disable-exporter-metrics \
    >"$T/exporter.log" 2>&1 &
EXPORTER=$!
exporter_up() {
    pid_alive "$EXPORTER" || fail "node_exporter exited: $(cat "$T/exporter.log")"
    curl -sf "http://127.0.0.1:$port/metrics" -o /dev/null
}
wait_for "node_exporter on port $port" exporter_up

# The unit's own command line: the built poolctl for the installed one, our folder for
# node_exporter's.
cmd=$(sed -n 's/^ExecStart=//p' "$unit")
read -ra argv <<<"$cmd"
[[ ${argv[0]} == */poolctl && $cmd == *" /var/lib/prometheus/node-exporter/poolfs.prom" ]] ||
    fail "unexpected ExecStart in $unit: $cmd"
argv[0]=$poolctl
argv=("${argv[@]//\/var\/lib\/prometheus\/node-exporter/$text}")
"${argv[@]}" || fail "the unit's command failed: ${argv[*]}"
[[ $(ls -A "$text") == poolfs.prom ]] || fail "the folder holds more than poolfs.prom: $(ls -A "$text")"
[[ $(stat -c %a "$text/poolfs.prom") == 644 ]] || fail "poolfs.prom is not readable by node_exporter"

curl -sf "http://127.0.0.1:$port/metrics" -o "$T/scrape" || fail "scraping node_exporter"
# A sample's value as an integer (node_exporter writes 1048576 as 1.048576e+06); node_exporter
# sorts the labels by name, a histogram's le last.
val() { awk -v k="$1" '$1 == k { printf "%.0f\n", $2; found = 1 } END { exit !found }' "$T/scrape"; }
expect() {
    local got
    got=$(val "$1") || fail "no sample $1 in the scrape: $(grep poolfs_ "$T/scrape" | head -50)"
    [[ $got == "$2" ]] || fail "$1 is $got, not $2"
}
at_least() {
    local got
    got=$(val "$1") || fail "no sample $1 in the scrape"
    ((got >= $2)) || fail "$1 is $got, less than $2"
}
p="pool=\"$m\""
expect "node_textfile_scrape_error" 0
val "node_textfile_mtime_seconds{file=\"$text/poolfs.prom\"}" >/dev/null ||
    fail "no node_textfile_mtime_seconds for poolfs.prom"
# The data path and transport as the daemon reports them (io_uring when the machine's switch
# is on, as scripts/test sets it for some runs).
tr=$(getfattr --only-values -n user.poolfs.counters "$m" | sed -n 's/^transport //p')
[[ $tr == dev_fuse || $tr == io_uring ]] || fail "transport '$tr'"
expect "poolfs_up{$p}" 1
expect "poolfs_info{datapath=\"$dp\",$p,transport=\"$tr\"}" 1
expect "poolfs_entries{$p}" 5
expect "poolfs_data_bytes{$p}" 12288
at_least "poolfs_metadata_bytes{$p}" 1
expect "poolfs_max_size_bytes{$p}" 67108864
expect "poolfs_max_user_size_bytes{$p}" 1048576
at_least "poolfs_max_user_entries{$p}" 1
at_least "poolfs_max_user_metadata_bytes{$p}" 1
expect "poolfs_user_entries{$p,uid=\"60001\"}" 2
expect "poolfs_user_entries{$p,uid=\"60002\"}" 3
expect "poolfs_user_data_bytes{$p,uid=\"60001\"}" 8192
expect "poolfs_user_data_bytes{$p,uid=\"60002\"}" 4096
at_least "poolfs_user_metadata_bytes{$p,uid=\"60001\"}" 1
expect "poolfs_user_size_limit_bytes{$p,uid=\"60002\"}" 1048576
at_least "poolfs_user_entries_limit{$p,uid=\"60002\"}" 1
at_least "poolfs_user_metadata_limit_bytes{$p,uid=\"60002\"}" 1
at_least "poolfs_daemon_resident_memory_bytes{$p}" 1
at_least "poolfs_open_handles{$p}" 0
at_least "poolfs_maybe_mapped_entries{$p}" 0
expect "poolfs_held_entries{$p}" 2
at_least "poolfs_lingering_entries{$p}" 0
expect "poolfs_removed_entries_total{$p,reason=\"unlink\"}" 1
# The mapped file: its last unmap on passthrough, its last close on the page cache. On
# passthrough a mapping gone before the daemon's probe at RELEASE looked counts as the close's
# (docs/monitoring.md): only the sum is certain there.
closed=$(val "poolfs_removed_entries_total{$p,reason=\"last_close\"}") || fail "no last_close"
unmapped=$(val "poolfs_removed_entries_total{$p,reason=\"last_unmap\"}") || fail "no last_unmap"
((closed + unmapped == 2)) || fail "last close $closed + last unmap $unmapped, not 2"
[[ $dp == passthrough ]] || ((unmapped == 0)) || fail "the page cache counted an unmap"
expect "poolfs_removed_entries_total{$p,reason=\"hold_ended\"}" 1
expect "poolfs_refusals_total{errno=\"EDQUOT\",$p}" 1
expect "poolfs_refusals_total{errno=\"ENOSPC\",$p}" 0
at_least "poolfs_refusals_total{errno=\"EACCES\",$p}" 1
at_least "poolfs_refusals_total{errno=\"EPERM\",$p}" 0
at_least "poolfs_denied_total{$p}" 1
at_least "poolfs_denied_log_lines_total{$p}" 1
expect "poolfs_estale_retries_total{$p}" 0
expect "poolfs_crash_swept_folders_total{$p}" 0
expect "poolfs_crash_swept_files_total{$p}" 0
at_least "poolfs_lock_handoffs_total{$p}" 0
# a passthrough file that outlived its last close was probed at least once; the page cache
# never probes
probes=$(val "poolfs_mapping_proof_probes_total{$p}") || fail "no mapping proof probes"
[[ $dp == passthrough ]] || ((probes == 0)) || fail "the page cache probed $probes times"
((unmapped == 0 || probes >= 1)) || fail "a last unmap counted with no probe"
at_least "poolfs_requests_total{op=\"setattr\",$p}" 1
at_least "poolfs_requests_total{op=\"create\",$p}" 5
at_least "poolfs_request_handler_seconds_total{op=\"lookup\",$p}" 0
count=$(val "poolfs_request_duration_seconds_count{$p}") || fail "no request histogram"
((count > 0)) || fail "the request histogram counted nothing"
expect "poolfs_request_duration_seconds_bucket{$p,le=\"+Inf\"}" "$count"
at_least "poolfs_request_duration_seconds_bucket{$p,le=\"1\"}" 1
val "poolfs_request_duration_seconds_sum{$p}" >/dev/null || fail "no histogram sum"
# every request above took the pool lock, free or not: each take is counted
takes=$(val "poolfs_lock_wait_seconds_count{$p}") || fail "no lock-wait histogram"
((takes >= count)) || fail "the lock-wait histogram counted $takes takes for $count requests"
expect "poolfs_lock_wait_seconds_bucket{$p,le=\"+Inf\"}" "$takes"
at_least "poolfs_lock_wait_seconds_bucket{$p,le=\"1e-05\"}" 1
val "poolfs_lock_wait_seconds_sum{$p}" >/dev/null || fail "no lock-wait sum"

# promtool's linter: nothing to say of poolctl metrics' output.
"$poolctl" metrics "$m" >"$T/out.prom" || fail "poolctl metrics failed"
out=$(promtool check metrics <"$T/out.prom" 2>&1) || fail "promtool check metrics: $out"
[[ -z $out ]] || fail "promtool check metrics: $out"

# A user sees its own usage and none of the daemon's counters (they are the pool owner's).
"${A[@]}" "$poolctl" metrics "$m" >"$T/user.prom" || fail "poolctl metrics as a user"
grep -q "^poolfs_user_entries{$p,uid=\"60001\"} 2$" "$T/user.prom" || fail "A's own usage: $(cat "$T/user.prom")"
! grep -q 'uid="60002"' "$T/user.prom" || fail "A sees B's usage"
! grep -q '^poolfs_open_handles' "$T/user.prom" || fail "A sees the daemon's counters"
out=$(promtool check metrics <"$T/user.prom" 2>&1) || fail "promtool check metrics (user): $out"
[[ -z $out ]] || fail "promtool check metrics (user): $out"
echo "node_exporter served every metric with the values made"
