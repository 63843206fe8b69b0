#!/usr/bin/env bash
# Smoke test of scripts/bench (the bench suite): a tiny run of the create, scratch, ls and shm
# sections must print every row with a number in every cell (the fuse-ref columns included,
# where built) and the summary, and leave nothing behind: no mount, no daemon, no temp dir, no
# shm or semaphore name in the machine's /dev/shm; so must a run stopped by SIGTERM while its
# pools are mounted. The scratch tree holds symbolic links (one pointing out of the tree); the
# scratch and ls tables come twice, as root and as scripts/bench's ordinary user (made by
# scripts/bench if missing). Times are never judged (the machine is shared). Never touches the
# kernel's io_uring switch (--uring-switch never).
# The arrays section gets a small run of its own (mode arrays): the default pool and, beside it,
# the bench's own huge-page tmpfs (column tmpfs-huge), which must be unmounted afterwards too,
# and the default pool with a quota (column default-quota: a value in every row, a ratio
# wherever the default pool has one, and its summary line per row against the default pool).
# The scale section (mode scale) on a pool of 200 entries, 1 s per load: every measurement printed,
# every row of its CSV with a value, nothing left behind.
#   bench_smoke.sh BUILDDIR SOURCEDIR full|interrupted|arrays|scale
set -euo pipefail

[[ $# -eq 3 ]] || { echo "usage: $0 BUILDDIR SOURCEDIR full|interrupted|arrays|scale" >&2; exit 2; }
build=$1 src=$2 mode=$3
# shellcheck source=tests/shell/testlib.sh
. "$src/tests/shell/testlib.sh"
if [[ $(id -u) -ne 0 ]]; then
    echo "# skip: not root (the multi-user pool mounts with allow_other)"
    exit 77
fi

tmp=$(mktemp -d /tmp/bench-smoke-XXXXXX)
# the tree is read by the user runs too
chmod 0755 "$tmp"
bench_pid=""
cleanup() {
    # A bench still running at this point (the test failed) gets SIGTERM: its own trap unmounts.
    if [[ -n $bench_pid ]]; then
        kill -TERM "$bench_pid" 2>/dev/null || true
        wait "$bench_pid" 2>/dev/null || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

# A small tree for the scratch workload: files, folders and symbolic links as /usr/include has
# them (to a file, to a folder, and one pointing out of the tree, dangling in the copy).
mkdir -p "$tmp/tree/a/b" "$tmp/tree/c"
for i in 1 2 3 4 5; do
    echo "file $i" >"$tmp/tree/a/f$i"
    echo "file $i" >"$tmp/tree/a/b/g$i"
    echo "file $i" >"$tmp/tree/c/h$i"
done
ln -s f1 "$tmp/tree/a/l1"
ln -s ../a/b "$tmp/tree/c/lb"
ln -s ../../../lib/nowhere/include "$tmp/tree/c/out"

args=(--no-build --builddir "$build" --quick --only "create,scratch,ls,shm" --uring-switch never
      -r 1 -n 20 --cycles 10 --scratch-reps 1 --tree "$tmp/tree" --entries 50 --files 50
      --datapath "pagecache,passthrough")

# work_dirs LOG: the temp dirs the run named ("work dirs: WORK MNTS [USERDIR]").
work_dirs() {
    sed -n 's/^bench: work dirs: //p' "$1"
}

# check_left_nothing LOG: the run's dirs are gone, nothing is mounted below them, and no process
# still names them on its command line (a daemon's mountpoint).
check_left_nothing() {
    local dirs d p line
    dirs=$(work_dirs "$1")
    [[ -n $dirs ]] || fail "the run did not name its work dirs"
    for d in $dirs; do
        [[ ! -e $d ]] || fail "$d is left behind"
        ! grep -qF " $d/" /proc/self/mountinfo || fail "a mount below $d is left behind"
        for p in /proc/[0-9]*; do
            line=$({ tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null || true)
            [[ $line != *"$d/"* ]] || fail "process ${p#/proc/} still runs on $d: $line"
        done
    done
}

# table TITLE_REGEX [START_REGEX]: the lines of the output's table whose title matches: from the
# line after it (or the first line after it matching START_REGEX) up to a blank line.
table() {
    awk -v re="$1" -v start="${2:-}" '
        state == 2 && /^$/ { exit }
        state == 1 && (start == "" || $0 ~ start) { state = 2 }
        state == 2 { print }
        state == 0 && $0 ~ re { state = 1 }' "$tmp/out"
}

# check_rows TITLE_REGEX START_REGEX COLUMNS ROW_REGEX...: that table (table TITLE_REGEX
# START_REGEX) has the header COLUMNS (a regex) and each ROW_REGEX matches one of its lines.
check_rows() {
    local title=$1 start=$2 header=$3 t row
    shift 3
    t=$(table "$title" "$start")
    [[ -n $t ]] || fail "no table titled /$title/"
    grep -Eq "$header" <<<"$t" || fail "table /$title/: no header /$header/: $(head -n 1 <<<"$t")"
    for row in "$@"; do
        grep -Eq "$row" <<<"$t" ||
            fail "table /$title/: no complete row /$row/: $(grep -E "^${row%% *}" <<<"$t" || echo none)"
    done
}

num='[0-9]+\.[0-9]+'
case $mode in
full)
    rc=0
    "$src/scripts/bench" "${args[@]}" >"$tmp/out" 2>"$tmp/err" || rc=$?
    cat "$tmp/out"
    [[ $rc -eq 0 ]] || { cat "$tmp/err" >&2; fail "scripts/bench exited $rc"; }
    grep -q 'enable_uring: .* (as found); --uring-switch never' "$tmp/err" ||
        fail "the run did not say what it found in enable_uring"
    ! grep -q 'set to Y' "$tmp/err" || fail "--uring-switch never changed the kernel's switch"
    # raw, then private and multi, each time with its ratio; then libfuse's reference file
    # system with its ratio where scripts/build built it, else a message that it is left out.
    # As the user: raw (the user's), multi, and fuse-ref-user (passthrough_hp run by the user).
    ref_cols="" ref_head="" user_ref_head="" shm_ref="" ref=0
    if [[ -x $src/.deps/fuse3/libexec/passthrough_hp ]]; then
        ref=1 ref_cols=" +$num +$num" ref_head=" +fuse-ref +ratio" user_ref_head=" +fuse-ref-user +ratio"
        shm_ref=" +[0-9]+ +$num"
        grep -Eq "^ls -l of 50 entries +fuse-ref +$num\$" "$tmp/out" || fail "no summary of ls -l on fuse-ref"
        grep -Eq "^create\+4KiB\+close\+removal +fuse-ref-uring-off +$num\$" "$tmp/out" ||
            fail "no summary of the create row on fuse-ref-uring-off"
        grep -Eq "^scratch as user, worst step +fuse-ref-user +$num \((tar|ls|grep|find|rm|all|cpu1|read1|read|stat|build)\)\$" "$tmp/out" ||
            fail "no summary of the scratch steps as the user on fuse-ref-user"
        grep -Eq "^ls -l of 50 entries, as user +fuse-ref-user +$num\$" "$tmp/out" ||
            fail "no summary of ls -l as the user on fuse-ref-user"
    else
        grep -q 'fuse-ref left out: ' "$tmp/err" || fail "no fuse-ref column and no message why"
    fi
    # the tree's three symbolic links went into the tarball, as root and as the user
    [[ $(grep -Ec '^scratch workload.*: 22 entries \(3 symbolic links\) from ' "$tmp/out") -eq 2 ]] ||
        fail "the scratch tree is not 22 entries with 3 symbolic links, twice: $(grep '^scratch workload' "$tmp/out")"
    rows=()
    for step in tar ls grep find rm all cpu1 read1 read stat build; do
        rows+=("^$step +$num +$num +$num +$num +$num$ref_cols\$")
    done
    check_rows '^scratch workload: ' '' "^step +raw +private +ratio +multi +ratio$ref_head\$" "${rows[@]}"
    check_rows '^ls -l of a folder of 50 entries, warm' '' "^step +raw +private +ratio +multi +ratio$ref_head\$" \
        "^ls-l +$num +$num +$num +$num +$num$ref_cols\$"
    rows=()
    for step in tar ls grep find rm all cpu1 read1 read stat build; do rows+=("^$step +$num +$num +$num$ref_cols\$"); done
    check_rows '^scratch workload as user [a-z_][a-z0-9_-]* \(uid [0-9]+\): ' '' \
        "^step +raw +multi +ratio$user_ref_head\$" "${rows[@]}"
    check_rows '^ls -l of a folder of 50 entries as user [a-z_][a-z0-9_-]* \(uid [0-9]+\), warm' '' \
        "^step +raw +multi +ratio$user_ref_head\$" "^ls-l +$num +$num +$num$ref_cols\$"
    grep -Eq "^scratch as user, worst step +multi +$num \((tar|ls|grep|find|rm|all|cpu1|read1|read|stat|build)\)\$" "$tmp/out" ||
        fail "no summary of the scratch steps as the user on multi"
    grep -Eq "^ls -l of 50 entries, as user +multi +$num\$" "$tmp/out" || fail "no summary of ls -l as the user on multi"
    # shm section: raw, the pools (the passthrough one where the daemon offers that data path:
    # not against libfuse 3.14) and fuse-ref, cycles/s in every cell and every ratio
    pools=(pagecache)
    grep -q '^bench: passthrough is not available here, left out' "$tmp/err" || pools+=(passthrough)
    head="^test +unit +raw" n=${#pools[@]}
    for pool in "${pools[@]}"; do head+=" +$pool +ratio"; done
    check_rows '^=== shm: ' '^test ' "$head${ref_head} *\$" \
        "^shm_open\+1MiB\+touch\+shm_unlink +ops/s +[0-9]+( +[0-9]+ +$num){$n}$shm_ref *\$" \
        "^sem_open\+sem_close\+sem_unlink +ops/s +[0-9]+( +[0-9]+ +$num){$n}$shm_ref *\$"
    targets=("${pools[@]}")
    [[ $ref -eq 0 ]] || targets+=(fuse-ref)
    for pool in "${targets[@]}"; do
        for row in 'shm_open\+1MiB\+touch\+shm_unlink' 'sem_open\+sem_close\+sem_unlink'; do
            grep -Eq "^$row +$pool +$num\$" "$tmp/out" || fail "no summary of /$row/ on $pool"
        done
    done
    # glibc's names went into the targets bound on /dev/shm in private namespaces, never into
    # the machine's own /dev/shm
    left=$(find /dev/shm -maxdepth 1 -name '*poolfs-bench-*' | head -n 3)
    [[ -z $left ]] || fail "the machine's /dev/shm got the bench's names: $left"
    # raw, then the page-cache pool over io_uring when the kernel's switch is on (scripts/test
    # turns it on for the libfuse 3.18 run), then at least the page-cache pool over /dev/fuse
    grep -Eq '^test +unit +raw +(pagecache-uring-on +ratio +)?pagecache-uring-off ' "$tmp/out" ||
        fail "no create table with pagecache-uring-off"
    grep -Eq "^create\+4KiB\+close\+removal +ops/s +[0-9]+ +[0-9]+ +$num" "$tmp/out" || fail "no complete create row"
    grep -Eq "^create\+4KiB\+close\+unlink \(2 procs\) +ops/s +[0-9]+ +[0-9]+ +$num" "$tmp/out" ||
        fail "no complete create row for two processes"
    for pool in private multi; do
        grep -Eq "^scratch, worst step +$pool +$num \((tar|ls|grep|find|rm|all|cpu1|read1|read|stat|build)\)\$" "$tmp/out" ||
            fail "no summary of the scratch steps on $pool"
        grep -Eq "^ls -l of 50 entries +$pool +$num\$" "$tmp/out" || fail "no summary of ls -l on $pool"
    done
    grep -Eq "^create\+4KiB\+close\+removal +pagecache-uring-off +$num\$" "$tmp/out" ||
        fail "no summary of the create row"
    grep -Eq "^create\+4KiB\+close\+unlink \(2 procs\) +pagecache-uring-off +$num\$" "$tmp/out" ||
        fail "no summary of the create row for two processes"
    ! grep -q 'FAILED' "$tmp/out" "$tmp/err" || fail "a section failed"
    check_left_nothing "$tmp/err"
    ;;
arrays)
    rc=0
    "$src/scripts/bench" --no-build --builddir "$build" --quick -s 8M --only arrays \
        --datapath default >"$tmp/out" 2>"$tmp/err" || rc=$?
    cat "$tmp/out"
    [[ $rc -eq 0 ]] || { cat "$tmp/err" >&2; fail "scripts/bench exited $rc"; }
    # raw, then tmpfs-huge and the default pool, each with its ratio, then the default pool with
    # a quota (right after default, which comes right after tmpfs-huge here)
    grep -Eq '^test +unit +raw +tmpfs-huge +ratio +default +ratio +default-quota +ratio *$' "$tmp/out" ||
        fail "no arrays table with raw, tmpfs-huge, default and default-quota"
    for row in "mmap write, fresh file" "mmap read, other process" "memory/byte held: Shmem"; do
        grep -Eq "^$row +[A-Za-z/]+ +$num.* +$num.* +$num +$num.* +$num .*\$" "$tmp/out" ||
            fail "no complete '$row' row: $(grep -F "$row" "$tmp/out" || echo none)"
    done
    # Every row of the section's tests (mmap, rw, map8, mem, rmlat), and in each a value in
    # default-quota's cell, and a ratio beside it wherever default has one (the same raw
    # value divides both; rmlat has none, nor has a memory row whose raw value is too small).
    # Cells are "MEDIAN [MIN-MAX]" or "MEDIAN": a word starting with "[" is the spread of the
    # value before it.
    rows=("mmap write, fresh file" "mmap read, other process" "mmap write, next fresh file"
          "pwrite 1 MiB blocks" "pread 1 MiB blocks, warm" "8 procs map+read one file"
          "memory/byte held: Cached" "memory/byte held: Shmem" "memory/byte held: -MemAvailable"
          "removal after last munmap: median" "removal after last munmap: worst")
    bad=$(table '^poolfs-bench ' '^test ' | awk -v want="$(printf '%s\n' "${rows[@]}")" '
        BEGIN { n = split(want, rows, "\n"); for (i = 1; i <= n; i++) if (rows[i] != "") need[rows[i]] = 1 }
        /^test / { next }
        {
            label = substr($0, 1, 34); sub(/ +$/, "", label)
            if (!(label in need)) next
            seen[label] = 1
            k = 0
            m = split(substr($0, 41), w, " ")
            for (i = 1; i <= m; i++) if (w[i] !~ /^\[/) c[++k] = w[i]
            # raw, tmpfs-huge, ratio, default, ratio, default-quota, ratio
            num = "^-?[0-9]+\\.[0-9]+$"
            if (k != 7) { print label ": " k " cells, want 7"; next }
            if (c[6] !~ num) print label ": default-quota has no value (" c[6] ")"
            if (c[5] ~ num && c[7] !~ num) print label ": default-quota has no ratio (" c[7] ")"
            if (c[5] == "-" && c[7] != "-") print label ": default-quota has a ratio where default has none"
        }
        END { for (r in need) if (!(r in seen)) print r ": no row" }')
    [[ -z $bad ]] || fail "arrays table, column default-quota: $bad"
    # the summary: each row's ratio of default-quota to default ("-": the divisor is 0; never
    # "failed", which says one of the two has no value). A memory row's ratio may be negative:
    # its figures are deltas of the machine's counters, which other jobs move too.
    summary=$(grep -E "^.{34} default-quota / default +(-?$num|-)\$" "$tmp/out" | cut -c1-34 | sed 's/ *$//')
    for row in "${rows[@]}"; do
        grep -qxF "$row" <<<"$summary" ||
            fail "no summary of '$row' for default-quota / default: $(grep -F "$row" "$tmp/out" | tail -n 1)"
    done
    ! grep -q 'FAILED' "$tmp/out" "$tmp/err" || fail "the section failed"
    check_left_nothing "$tmp/err"
    ;;
scale)
    rc=0
    "$src/scripts/bench" --no-build --builddir "$build" --only scale --scale-sizes 200 \
        --scale-load-seconds 1 --uring-switch never --csv "$tmp/scale.csv" >"$tmp/out" 2>"$tmp/err" || rc=$?
    cat "$tmp/out"
    [[ $rc -eq 0 ]] || { cat "$tmp/err" >&2; fail "scripts/bench exited $rc"; }
    for line in "^fill: 236 entries" "^daemon RSS: .* B per entry" "^create rate: [0-9]+/s" \
        "^create rate, round 7: [0-9]+/s" "^create rate, median round: [0-9]+/s" \
        "^user.poolfs.stat: median $num ms" "^poolctl ls of a folder" "^rm -rf of 50 files" \
        "^unmount with 5179 entries: [0-9]+ ms"; do
        grep -Eq "$line" "$tmp/out" || fail "no line matching '$line'"
    done
    for load in "no load" "stat loop" "mappers start" "mappers killed" "rm -rf"; do
        grep -Eq "^$load +create\+close: [1-9][0-9]* samples.* removal: [1-9][0-9]* samples" \
            "$tmp/out" || fail "no probe samples under '$load'"
    done
    # the daemon's own slow handlers and long waits for the pool lock under each load on the
    # pool (four loads, one line each)
    slowest="(at most [0-9.e+-]+|over 1000) ms"
    waits="[0-9]+ waits for the pool lock over 10 ms, the longest $slowest"
    n=$(grep -Ec "^ +daemon: [0-9]+ handlers over 10 ms, the slowest $slowest; $waits" "$tmp/out")
    [[ $n -eq 4 ]] || fail "$n lines of the daemon's slow handlers and lock waits, not 4"
    grep -Eq '^scale,"slowest daemon handler, rm -rf",ms,pool,([0-9]|inf)' "$tmp/scale.csv" ||
        fail "no slowest-handler row in the CSV"
    grep -Eq '^scale,"longest pool lock wait, stat loop",ms,pool,([0-9]|inf)' "$tmp/scale.csv" ||
        fail "no lock-wait row in the CSV"
    # the same probe on libfuse's passthrough_hp, where scripts/build made it
    if [[ -x $src/.deps/fuse3/libexec/passthrough_hp ]]; then
        for load in "no load" "mappers start" "mappers killed" "rm -rf"; do
            grep -Eq "^$load +create\+close on fuse-ref: [1-9][0-9]* samples" "$tmp/out" ||
                fail "no fuse-ref probe samples under '$load'"
        done
        grep -q '^scale,"create+close worst, mappers killed",ms,fuse-ref,[0-9]' "$tmp/scale.csv" ||
            fail "no fuse-ref row in the CSV"
    fi
    # every row of the section has a value (the value column is the fifth)
    nrows=$(grep -c "^scale," "$tmp/scale.csv")
    [[ $nrows -ge 30 ]] || fail "only $nrows scale rows in the CSV"
    bad=$(awk -F, '$1 == "scale" && $5 == ""' "$tmp/scale.csv")
    [[ -z $bad ]] || fail "scale rows without a value: $bad"
    ! grep -q 'FAILED' "$tmp/out" "$tmp/err" || fail "the section failed"
    check_left_nothing "$tmp/err"
    ;;
interrupted)
    "$src/scripts/bench" "${args[@]}" >"$tmp/out" 2>"$tmp/err" &
    bench_pid=$!
    wait_for "the run's work dirs" grep -q '^bench: work dirs: ' "$tmp/err"
    mnts=$(work_dirs "$tmp/err" | cut -d' ' -f2)
    wait_for "a pool mounted below $mnts" grep -qF " $mnts/" /proc/self/mountinfo
    kill -TERM "$bench_pid"
    rc=0
    wait "$bench_pid" || rc=$?
    bench_pid=""
    [[ $rc -eq 143 ]] || { cat "$tmp/err" >&2; fail "scripts/bench exited $rc after SIGTERM, not 143"; }
    check_left_nothing "$tmp/err"
    ;;
*) fail "unknown mode $mode" ;;
esac
echo "ok: $mode"
