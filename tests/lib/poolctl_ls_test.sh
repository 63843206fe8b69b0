#!/usr/bin/env bash
# poolctl ls and stat against a real pool: each reason an entry lives (open, mapped, children,
# holds with scope and owner, a held folder above) and "lingering", as text and as JSON; an entry's
# names (hard links); a path that is not on a pool; stat's per-user line with the quota.
#
#   poolctl_ls_test.sh POOLFS POOLCTL
set -euo pipefail
# shellcheck source=tests/shell/testlib.sh
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../shell/testlib.sh"
poolfs=$1
poolctl=$2
PY=/usr/bin/python3

T=$(mktemp -d /tmp/poolfs-ls.XXXXXX)
m=$T/pool
DAEMON=""
DAEMON2=""
m2=""
HELPERS=()
afd=""
cleanup() {
    local p
    [[ -z $afd ]] || exec {afd}<&-
    for p in "${HELPERS[@]}"; do
        kill "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    [[ -z $DAEMON2 ]] || stop_pool "$m2" "$DAEMON2"
    stop_pool "$m" "$DAEMON"
    rm -rf "$T"
}
trap cleanup EXIT
line_of() { "$poolctl" ls "$1" | grep -E " $2 " || true; }
has() { [[ $(line_of "$1" "$2") == *"$3"* ]]; }

mkdir -p "$m"
"$poolfs" -f -o "autohold=none,max_user_size=1G,backing=$T" "$m" 2>"$T/daemon.err" &
DAEMON=$!
wait_for "the mount" mountpoint -q "$m"

job=$("$poolctl" mkjob --pin "$m") || fail "mkjob"
jname=${job##*/}
# a: open by a helper; b: mapped after its fd was closed; c: only the job's hold keeps it.
echo x >"$job/a"
exec {afd}<"$job/a"
"$PY" - "$job/b" "$T/mapped" <<'PYEOF' &
import ctypes, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
os.ftruncate(fd, 4096)
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
addr = libc.mmap(None, 4096, 3, 1, fd, 0)   # PROT_READ|PROT_WRITE, MAP_SHARED
if addr in (None, ctypes.c_void_p(-1).value):
    sys.exit('mmap failed')
os.close(fd)
open(sys.argv[2], 'w').close()
time.sleep(600)
PYEOF
HELPERS+=($!)
echo y >"$job/c"
mkdir "$m/never"                          # created empty: stays until rmdir, nothing keeps it
mkdir "$m/held" && setfattr -n user.poolfs.hold -v "pid:$$" "$m/held"
wait_for "the mapping" test -e "$T/mapped"
# On the page-cache path (max_user_size selects it) the kernel keeps the mapping's file open, so
# the daemon counts it as an open handle; on passthrough it is "mapped" once the fd is closed.
b_alive() { has "$job" b " mapped" || has "$job" b " open=1"; }
wait_for "b kept by its mapping" b_alive

has "$m" "$jname" "children=3" || fail "job: $(line_of "$m" "$jname")"
has "$m" "$jname" "hold=pin(root)" || fail "job hold: $(line_of "$m" "$jname")"
has "$m" held "hold=pid:$$(root)" || fail "held: $(line_of "$m" held)"
has "$m" never "lingering" || fail "never: $(line_of "$m" never)"
has "$job" a "open=1" || fail "a: $(line_of "$job" a)"
[[ $(line_of "$job" b) != *lingering* ]] || fail "b is mapped, not lingering"
has "$job" c "held-above=$job" || fail "c: $(line_of "$job" c)"
[[ $(line_of "$job" c) != *lingering* ]] || fail "c is held, not lingering"
[[ $(line_of "$job" a) == -rw-------* ]] || fail "not an ls -l line: $(line_of "$job" a)"
# A file operand is listed itself.
"$poolctl" ls "$job/c" | grep -q "held-above=$job" || fail "ls FILE: $("$poolctl" ls "$job/c")"

# --json: the same facts, as valid JSON.
"$poolctl" ls --json "$m" "$job" >"$T/ls.json" || fail "ls --json"
"$PY" - "$T/ls.json" "$jname" "$job" <<'PYEOF' || fail "ls --json: $(cat "$T/ls.json")"
import json, sys
entries = {e['name']: e for e in json.load(open(sys.argv[1]))}
job, jobpath = entries[sys.argv[2]], sys.argv[3]
assert job['type'] == 'folder' and job['children'] == 3 and job['mode'] == '0700', job
assert [h['scope'] for h in job['holds']] == ['pin'] and job['holds'][0]['uid'] == 0, job
assert entries['a']['opens'] == 1 and entries['a']['size'] == 2 and not entries['a']['lingering']
assert entries['b']['mapped'] or entries['b']['opens'] == 1, entries['b']
assert not entries['b']['lingering'], entries['b']
assert entries['c']['held_above'] == [jobpath] and not entries['c']['lingering'], entries['c']
assert entries['never']['lingering'] is True, entries['never']
assert entries['held']['holds'][0]['scope'].startswith('pid:'), entries['held']
PYEOF

# A second name (a hard link) in the same folder: both names say names=2, a file with one name
# says nothing; --json has "names" for every entry.
ln "$job/c" "$job/c2" || fail "ln $job/c $job/c2"
has "$job" c "names=2" || fail "c: $(line_of "$job" c)"
has "$job" c2 "names=2" || fail "c2: $(line_of "$job" c2)"
[[ $(line_of "$job" a) != *names=* ]] || fail "a has one name: $(line_of "$job" a)"
"$poolctl" ls --json "$job" >"$T/names.json" || fail "ls --json $job"
"$PY" - "$T/names.json" <<'PYEOF' || fail "ls --json names: $(cat "$T/names.json")"
import json, sys
entries = {e['name']: e for e in json.load(open(sys.argv[1]))}
assert entries['c']['names'] == 2 and entries['c2']['names'] == 2, entries
assert entries['a']['names'] == 1, entries['a']
PYEOF

# A symlink and a FIFO (held by the folder's pin): listed with their kind, the symlink with its
# target, no error and exit 0; their refs are not readable (no user.* xattrs on them), so
# neither is called lingering.
ln -s c "$job/sl" || fail "ln -s"
mkfifo "$job/ff" || fail "mkfifo"
"$poolctl" ls "$job" >"$T/kinds.txt" 2>"$T/kinds.err" || fail "ls with a symlink and a FIFO: $(cat "$T/kinds.err")"
[[ ! -s $T/kinds.err ]] || fail "ls with a symlink and a FIFO said: $(cat "$T/kinds.err")"
has "$job" sl "-> c" || fail "sl: $(line_of "$job" sl)"
[[ $(line_of "$job" sl) == lrwx------* ]] || fail "sl: $(line_of "$job" sl)"
[[ $(line_of "$job" ff) == prw-------* ]] || fail "ff: $(line_of "$job" ff)"
[[ $(line_of "$job" ff) != *lingering* ]] || fail "ff: $(line_of "$job" ff)"
"$poolctl" ls --json "$job" >"$T/kinds.json" || fail "ls --json with a symlink and a FIFO"
"$PY" - "$T/kinds.json" <<'PYEOF' || fail "ls --json kinds: $(cat "$T/kinds.json")"
import json, sys
entries = {e['name']: e for e in json.load(open(sys.argv[1]))}
assert entries['sl']['type'] == 'symlink' and entries['ff']['type'] == 'fifo', entries
assert not entries['sl']['lingering'] and not entries['ff']['lingering'], entries
PYEOF
rm "$job/sl" "$job/ff"

# Not a pool: one message, exit 1. Unknown option: exit 2.
rc=0
"$poolctl" ls "$T" 2>"$T/err" || rc=$?
[[ $rc -eq 1 ]] || fail "ls on a non-pool: rc $rc"
grep -q 'not on a poolfs pool' "$T/err" || fail "ls on a non-pool: $(cat "$T/err")"
rc=0
"$poolctl" ls --bogus 2>/dev/null || rc=$?
[[ $rc -eq 2 ]] || fail "ls --bogus: rc $rc"

# Relative operands after a folder: each taken from where poolctl started (it lists a folder from
# inside it). "." after "$jname" must be the pool's root, not the job folder.
(cd "$m" && "$poolctl" ls "$jname" .) >"$T/rel.txt" || fail "ls of relative operands"
sed -n '/^\.:$/,$p' "$T/rel.txt" | grep -Eq " $jname .*children=[0-9]" ||
    fail "ls JOB . did not list the root as '.': $(cat "$T/rel.txt")"
sed -n "/^$jname:\$/,/^\.:\$/p" "$T/rel.txt" | grep -Eq " a .*open=1" ||
    fail "ls JOB . did not list the job: $(cat "$T/rel.txt")"

# In a multi-user pool every walk through a name in the root reaches the daemon: listing a folder's
# entries by full path would cost two LOOKUPs each beside its user.poolfs.refs.
m2=$T/shared
mkdir -p "$m2"
"$poolfs" -f -o "allow_other,autohold=none,backing=$T" "$m2" 2>"$T/daemon2.err" &
DAEMON2=$!
wait_for "the shared mount" mountpoint -q "$m2"
mkdir "$m2/top" && setfattr -n user.poolfs.hold -v pin "$m2/top"
for i in $(seq 50); do : >"$m2/top/f$i"; done
setfattr -n user.poolfs.ops -v reset "$m2"
"$poolctl" ls "$m2/top" >"$T/shared.txt" || fail "ls in a multi-user pool"
[[ $(grep -c ' f[0-9]* ' "$T/shared.txt") -eq 50 ]] || fail "ls listed: $(cat "$T/shared.txt")"
ops=$(getfattr --only-values -n user.poolfs.ops "$m2")
lookups=$(awk '$1 == "lookup" { print $2 }' <<<"$ops")
refs=$(awk '$1 == "getxattr" { print $2 }' <<<"$ops")
# A few walks to the folder itself (finding the pool's root, the holds above, reading it) are
# the same for any size; none may be per entry.
[[ ${lookups:-0} -lt 50 ]] || fail "ls of 50 entries sent ${lookups} LOOKUPs (${refs} GETXATTRs)"
stop_pool "$m2" "$DAEMON2"
DAEMON2=""

# stat: data path, limits, and the caller's own line with its share of the quota.
"$poolctl" stat "$m" >"$T/stat" || fail "stat"
grep -q '^datapath  *pagecache' "$T/stat" || fail "stat datapath: $(cat "$T/stat")"
grep -q '^max_user_size .*1073741824 bytes' "$T/stat" || fail "stat limit: $(cat "$T/stat")"
grep -Eq '^user  *uid 0 \(root\): [0-9]+ entries, .* of 1.0 GiB \([0-9]+%\)' "$T/stat" ||
    fail "stat user line: $(cat "$T/stat")"
echo "ok"
