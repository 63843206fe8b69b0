#!/usr/bin/env bash
# tests/install: a DESTDIR install of a build, checked through the installed files only.
#
#   install_test.sh BUILDDIR SRCDIR CHECK
#
# CHECK is one of: layout, man, unit, fstab, notify, syslog (see the functions below). Every
# check installs the build into a fresh temporary DESTDIR; whatever it mounts or starts is
# unmounted and stopped (by pid) on the way out, also on failure.
set -euo pipefail
# shellcheck source=tests/shell/testlib.sh
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../shell/testlib.sh"

builddir=$(readlink -f "$1")
srcdir=$(readlink -f "$2")
check=$3
PY=/usr/bin/python3    # Debian's python3, whatever PATH says

T=$(mktemp -d /tmp/poolfs-install.XXXXXX)
MOUNTS=()      # mountpoints to unmount on the way out
PIDS=()        # processes we started, to stop on the way out

cleanup() {
    local m p
    for m in "${MOUNTS[@]}"; do
        if mountpoint -q "$m"; then
            umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
        fi
    done
    for p in "${PIDS[@]}"; do
        kill "$p" 2>/dev/null || true
    done
    for p in "${PIDS[@]}"; do
        wait "$p" 2>/dev/null || true
    done
    # Daemons that detached and outlived their mount (they exit when it goes).
    for p in "$T"/backing*; do
        [[ -d $p ]] || continue
        if p=$(daemon_pid "$p"); then kill "$p" 2>/dev/null || true; fi
    done
    [[ -n ${KEEP:-} ]] || rm -rf "$T"
}
trap cleanup EXIT



pid_gone() { ! kill -0 "$1" 2>/dev/null; }
is_empty() { [[ -z $(ls -A "$1") ]]; }

# The daemon that serves a pool whose backing= is $1: the process holding its private subfolder
# open (the name carries the pid the daemon had before it detached, not its own).
daemon_pid() {
    local d fd p
    for d in "$1"/poolfs-*; do
        [[ -d $d ]] || continue
        for fd in /proc/[0-9]*/fd/*; do
            [[ $(readlink "$fd" 2>/dev/null) == "$d" ]] || continue
            p=${fd#/proc/}
            printf '%s\n' "${p%%/*}"
            return 0
        done
    done
    return 1
}

DEST=$T/dest
meson install -C "$builddir" --destdir "$DEST" --no-rebuild --quiet >"$T/install.log" 2>&1 ||
    { cat "$T/install.log" >&2; fail "meson install --destdir failed"; }
prefix=$(meson introspect "$builddir" --buildoptions |
    "$PY" -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
ROOT=$DEST$prefix
SBIN=$ROOT/sbin
BIN=$ROOT/bin
PCFILE=$(find "$ROOT" -name poolfs.pc -print -quit)
[[ -n $PCFILE ]] || fail "no poolfs.pc installed under $ROOT"
LIBDIR=$(dirname "$(dirname "$PCFILE")")
export LD_LIBRARY_PATH=$LIBDIR    # the installed libpoolfs, for the installed poolctl

# prepare MOUNTPOINT BACKING: make both folders, remember the mountpoint for cleanup.
prepare() {
    mkdir -p "$1" "$2"
    MOUNTS+=("$1")
}

# The installed files are where an admin looks for them, and they run.
check_layout() {
    local f
    for f in "$SBIN/poolfs" "$BIN/poolctl" "$ROOT/include/poolfs.h" "$PCFILE" \
        "$LIBDIR/libpoolfs.so" "$ROOT/share/man/man8/poolfs.8" "$ROOT/share/man/man1/poolctl.1" \
        "$ROOT/share/man/man3/libpoolfs.3" "$ROOT/lib/systemd/system/poolfs@.service" \
        "$ROOT/lib/systemd/system/poolfs-devshm.service" \
        "$ROOT/lib/systemd/system/poolfs-metrics.service" \
        "$ROOT/lib/systemd/system/poolfs-metrics.timer"; do
        [[ -e $f ]] || fail "not installed: ${f#"$DEST"}"
    done
    [[ ! -e $BIN/poolfs ]] || fail "the daemon belongs in sbin, not bin"
    "$SBIN/poolfs" --version | grep -q '^poolfs ' || fail "installed poolfs --version"
    "$BIN/poolctl" --version | grep -q '^poolctl ' || fail "installed poolctl --version"
}

# Every page renders with no warning from groff or man, and covers every command and option.
check_man() {
    local page out cmd opt
    for page in "$ROOT"/share/man/man*/*; do
        out=$(groff -man -ww -z "$page" 2>&1) || fail "groff failed on ${page##*/}: $out"
        [[ -z $out ]] || fail "groff -man -ww on ${page##*/}: $out"
        out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null) ||
            fail "man -l ${page##*/} failed: $out"
        [[ -z $out ]] || fail "man -l ${page##*/}: $out"
        grep -q '@VERSION@' "$page" && fail "${page##*/}: @VERSION@ not substituted"
    done
    # poolctl's commands, as its --help lists them, each have an entry in poolctl(1).
    while read -r cmd; do
        grep -Eq "^\.(B|BI|BR) \"?$cmd( |\"|$)" "$ROOT/share/man/man1/poolctl.1" ||
            fail "poolctl(1) does not describe the command '$cmd'"
    done < <("$BIN/poolctl" --help | sed -n 's/^  \([a-z]*\).*/\1/p')
    # The daemon's -o options, as its --help lists them, each have an entry in poolfs(8).
    while read -r opt; do
        grep -Eq "^\.(B|BI|BR) $opt" "$ROOT/share/man/man8/poolfs.8" ||
            fail "poolfs(8) does not describe the option '$opt'"
    done < <("$SBIN/poolfs" --help | sed -n '/^pool options:/,/^FUSE options:/s/^ *-o \([a-z_]*\).*/\1/p')
}

# The template unit passes systemd-analyze verify and runs the installed daemon the way systemd
# expects of a Type=notify service.
check_unit() {
    local unit=$ROOT/lib/systemd/system/poolfs@.service copy out
    grep -qx 'Type=notify' "$unit" || fail "the unit is not Type=notify"
    grep -Eq "^ExecStart=$prefix/sbin/poolfs -f .*%f$" "$unit" ||
        fail "ExecStart does not run $prefix/sbin/poolfs in the foreground on %f: $(grep ExecStart "$unit")"
    [[ $(systemd-escape --path /pool/a-b) == 'pool-a\x2db' ]] || fail "systemd-escape"
    # verify checks that ExecStart's program exists: point it at the DESTDIR copy, change nothing else.
    mkdir -p "$T/units"
    copy=$T/units/poolfs@pool.service
    sed "s|^ExecStart=$prefix/sbin/poolfs |ExecStart=$SBIN/poolfs |" "$unit" >"$copy"
    out=$(MANPATH=$ROOT/share/man systemd-analyze verify "$copy" 2>&1) ||
        fail "systemd-analyze verify: $out"
    [[ -z $out ]] || fail "systemd-analyze verify: $out"
    # The metrics timer and the service it runs: the installed poolctl, on every pool.
    unit=$ROOT/lib/systemd/system/poolfs-metrics.service
    grep -Eq "^ExecStart=$prefix/bin/poolctl metrics --all --output /var/lib/prometheus/node-exporter/poolfs.prom$" "$unit" ||
        fail "poolfs-metrics.service: $(grep ExecStart "$unit")"
    grep -qx 'OnUnitActiveSec=15s' "$ROOT/lib/systemd/system/poolfs-metrics.timer" ||
        fail "poolfs-metrics.timer does not run every 15 s"
    sed "s|^ExecStart=$prefix/bin/poolctl |ExecStart=$BIN/poolctl |" "$unit" >"$T/units/poolfs-metrics.service"
    cp "$ROOT/lib/systemd/system/poolfs-metrics.timer" "$T/units/"
    out=$(MANPATH=$ROOT/share/man systemd-analyze verify "$T/units/poolfs-metrics.timer" \
        "$T/units/poolfs-metrics.service" 2>&1) || fail "systemd-analyze verify (metrics): $out"
    [[ -z $out ]] || fail "systemd-analyze verify (metrics): $out"
}

# mount.fuse3 mounts the installed daemon for both fstab forms, with the options mount helpers
# add, and umount unmounts it; poolctl and a C client built against the installed header and
# poolfs.pc talk to it.
check_fstab() {
    local m1=$T/pool1 m2=$T/pool2 b1=$T/backing1 b2=$T/backing2 pid out
    prepare "$m1" "$b1"
    prepare "$m2" "$b2"

    # Form 1: "poolfs /pool fuse.poolfs OPTIONS 0 0": mount(8) runs mount.fuse3 like this (and
    # finds poolfs on its own PATH, which for a DESTDIR install we give it).
    PATH=$SBIN:$PATH /sbin/mount.fuse3 poolfs "$m1" -t poolfs \
        -o "rw,allow_other,max_user_size=8G,autohold=none,backing=$b1,nofail,_netdev,x-systemd.automount,defaults,dev,suid,exec,auto,users" ||
        fail "mount.fuse3 (fuse.poolfs form) failed"
    out=$(findmnt -n -o FSTYPE,OPTIONS "$m1") || fail "form 1: nothing mounted on $m1"
    [[ $out == fuse.poolfs* ]] || fail "form 1: mounted as $out"
    [[ $out == *nosuid* && $out == *nodev* ]] || fail "form 1: dev/suid reached the mount: $out"
    "$BIN/poolctl" stat "$m1" >"$T/stat.txt" || fail "installed poolctl stat"
    grep -q '^max_user_size .*8589934592 bytes' "$T/stat.txt" || fail "poolctl stat: $(cat "$T/stat.txt")"

    # A C client compiled against the installed files only.
    PKG_CONFIG_PATH=$LIBDIR/pkgconfig PKG_CONFIG_SYSROOT_DIR=$DEST pkg-config --cflags --libs poolfs \
        >"$T/pc.txt" || fail "pkg-config poolfs"
    # shellcheck disable=SC2046  # pkg-config's words are meant to split
    gcc -std=c11 -Wall -Wextra -Werror -o "$T/client" "$srcdir/tests/install/client.c" \
        $(cat "$T/pc.txt") || fail "the C client does not build against the installed poolfs.h/poolfs.pc"
    grep -q -- "-I$ROOT/include" "$T/pc.txt" || fail "pkg-config --cflags: $(cat "$T/pc.txt")"
    "$T/client" "$m1" >"$T/client.txt" || fail "the client failed on the pool"
    grep -q "^$m1/job-.*/x.npy pagecache\$" "$T/client.txt" || fail "client: $(cat "$T/client.txt")"
    # The kernel sends the last RELEASE after close() returns: the removal follows shortly.
    wait_for "the pool to be empty once the client released its job" is_empty "$m1"

    # Form 2, legacy: "/usr/local/sbin/poolfs#poolfs /pool fuse OPTIONS 0 0", through mount(8)
    # with an fstab of our own.
    printf '%s#poolfs %s fuse allow_other,backing=%s,nofail,_netdev,defaults,noauto 0 0\n' \
        "$SBIN/poolfs" "$m2" "$b2" >"$T/fstab"
    mount --fstab "$T/fstab" "$m2" || fail "mount --fstab (legacy poolfs#poolfs form) failed"
    out=$(findmnt -n -o FSTYPE "$m2") || fail "form 2: nothing mounted on $m2"
    [[ $out == fuse.poolfs ]] || fail "form 2: mounted as $out"
    echo data >"$m2/f" || fail "form 2: cannot write"

    # An option nobody knows is refused, with its name.
    out=$(PATH=$SBIN:$PATH /sbin/mount.fuse3 poolfs "$T" -t poolfs -o "backing=$b1,no_such_opt" 2>&1) &&
        fail "mount.fuse3 accepted an unknown option"
    [[ $out == *no_such_opt* ]] || fail "the refusal does not name the option: $out"

    for m in "$m1" "$m2"; do
        pid=$(daemon_pid "$([[ $m == "$m1" ]] && echo "$b1" || echo "$b2")") || fail "no daemon for $m"
        umount "$m" || fail "umount $m"
        wait_for "the daemon of $m to exit" pid_gone "$pid"
        ! mountpoint -q "$m" || fail "$m still mounted"
    done
}

start_sink() {   # start_sink SOCKET OUTFILE MOUNTPOINT
    local ready
    ready=$(mktemp -u "$T/sink-ready.XXXXXX")
    "$PY" "$srcdir/tests/install/dgram_sink.py" "$1" "$2" "$3" "$ready" &
    PIDS+=($!)
    wait_for "the socket $1" test -e "$ready"
}

# Type=notify: READY=1 arrives once the mount is in place, STOPPING=1 on the way out; SIGTERM
# unmounts cleanly (exit 0).
check_notify() {
    local m=$T/pool b=$T/backing sock=$T/notify.sock out=$T/notify.txt pid rc=0
    prepare "$m" "$b"
    : >"$out"
    start_sink "$sock" "$out" "$m"
    NOTIFY_SOCKET=$sock "$SBIN/poolfs" -f -o "backing=$b,autohold=none" poolfs "$m" 2>"$T/daemon.err" &
    pid=$!
    PIDS+=("$pid")
    wait_for "READY=1" grep -q 'READY=1' "$out"
    grep -q $'^mounted=yes\tREADY=1' "$out" || fail "READY=1 came before the mount: $(cat "$out")"
    grep -q 'STOPPING=1' "$out" && fail "STOPPING=1 before any stop: $(cat "$out")"
    kill -TERM "$pid"
    wait "$pid" || rc=$?
    [[ $rc -eq 0 ]] || fail "SIGTERM: the daemon exited $rc: $(cat "$T/daemon.err")"
    ! mountpoint -q "$m" || fail "still mounted after SIGTERM"
    wait_for "STOPPING=1" grep -q 'STOPPING=1' "$out"
    [[ $(grep -c . "$out") -eq 2 ]] || fail "expected READY then STOPPING only: $(cat "$out")"
    grep -q 'unmounted cleanly' "$T/daemon.err" || fail "no 'unmounted cleanly' on stderr"
    # An abstract socket ("@name"), as systemd may pass, works the same way.
    sock=@poolfs-test-$$
    : >"$out"
    start_sink "$sock" "$out" "$m"
    NOTIFY_SOCKET=$sock "$SBIN/poolfs" -f -o "backing=$b" poolfs "$m" 2>"$T/daemon2.err" &
    pid=$!
    PIDS+=("$pid")
    wait_for "READY=1 on $sock" grep -q $'^mounted=yes\tREADY=1' "$out"
    kill -TERM "$pid"
    wait "$pid" || fail "the second daemon did not exit cleanly: $(cat "$T/daemon2.err")"
    wait_for "STOPPING=1 on $sock" grep -q 'STOPPING=1' "$out"
}

# Daemonized, the daemon logs to syslog with the identifier poolfs: mount, refusal, unmount;
# -o debug adds the request trace. The stand-in socket is named with log_socket=.
check_syslog() {
    local m=$T/pool b=$T/backing sock=$T/log.sock out=$T/log.txt pid
    prepare "$m" "$b"
    chmod 755 "$T"
    : >"$out"
    start_sink "$sock" "$out" -
    "$SBIN/poolfs" -o "allow_other,backing=$b,log_socket=$sock,debug" poolfs "$m" \
        2>"$T/daemon.err" || fail "the daemon did not start: $(cat "$T/daemon.err")"
    pid=$(daemon_pid "$b") || fail "no daemon"
    echo x >"$m/mine"
    # Another user is refused, and the daemon says so.
    if setpriv --reuid=65534 --regid=65534 --clear-groups stat "$m/mine" >/dev/null 2>&1; then
        fail "uid 65534 could stat root's entry"
    fi
    wait_for "the mount line" grep -q "poolfs\[$pid\]: mounted $m datapath=" "$out"
    wait_for "the denied line" grep -q "poolfs\[$pid\]: denied: uid 65534" "$out"
    grep -q "poolfs\[$pid\]: .*opcode: LOOKUP" "$out" || fail "no request trace with -o debug"
    umount "$m" || fail "umount"
    wait_for "the daemon to exit" pid_gone "$pid"
    wait_for "the unmount line" grep -q "poolfs\[$pid\]: unmounted cleanly" "$out"
    # Facility daemon (3): info lines are <30>, the trace is debug, <31>.
    grep -q $'\t'"<30>.* poolfs\[$pid\]: mounted " "$out" || fail "mount line priority"
    grep -q $'\t'"<31>.*opcode: LOOKUP" "$out" || fail "trace priority"
    # Without debug: no trace.
    : >"$out"
    "$SBIN/poolfs" -o "backing=$b,log_socket=$sock" poolfs "$m" 2>/dev/null || fail "second start"
    pid=$(daemon_pid "$b") || fail "no second daemon"
    ls "$m" >/dev/null
    umount "$m"
    wait_for "the second daemon to exit" pid_gone "$pid"
    grep -q 'unmounted cleanly' "$out" || fail "second run: no unmount line"
    grep -q 'opcode:' "$out" && fail "request trace without -o debug: $(head -3 "$out")"
    return 0
}

case $check in
    layout | man | unit | fstab | notify | syslog) "check_$check" ;;
    *) fail "unknown check '$check'" ;;
esac
echo "ok: $check"
