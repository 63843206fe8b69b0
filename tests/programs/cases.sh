#!/usr/bin/env bash
# tests/programs: the unmodified programs themselves, one case per call:
#
#   cases.sh NAME     (NAME: venv tar compileall fifo make unix_socket tmux git mpi)
#
# programs_test runs this in a session of its own (setsid), as the setting's user, with TMPDIR
# either a pool's root or a plain tmpfs folder, and compares the two runs' stdout with TMPDIR's
# path replaced by "TMPDIR". So stdout holds only what must be the same on a pool as on tmpfs;
# each case also checks what it can itself and exits non-zero with a message on stderr when a
# check fails. Everything a case makes is under TMPDIR (nothing is removed: what a program leaves
# is what the pool must take away when the session ends).
#
# Environment (set by programs_test): TMPDIR, PROG_LIB (a copy of tests/programs), PROG_FIX (the
# tar fixture on tmpfs: tree/ and tree.tar), PROG_BIN (mpi_hello), PROG_PIDS (a file where a case
# writes the pid of a server that leaves the session, so a failed run's cleanup can stop it).
set -euo pipefail
: "${TMPDIR:?}" "${PROG_LIB:?}" "${PROG_FIX:?}" "${PROG_BIN:?}" "${PROG_PIDS:?}"
PY=/usr/bin/python3    # Debian's python3 (python3-venv), whatever PATH says
cd "$TMPDIR"

die() {
    printf 'cases.sh %s: %s\n' "$CASE" "$*" >&2
    exit 1
}

# Background processes of this case, stopped by pid if the case ends early.
BG=()
stop_bg() {
    local p
    for p in "${BG[@]}"; do kill "$p" 2>/dev/null || true; done
}
trap stop_bg EXIT

# wait_until and pid_gone: programs_test copies tests/shell/testlib.sh next to this file.
# shellcheck source=tests/shell/testlib.sh
. "$PROG_LIB/testlib.sh"

inode() { stat -c %i "$1"; }

# same_entry A B: A and B are names of one entry (same inode, as hard links are).
same_entry() {
    [[ $(inode "$1") == "$(inode "$2")" ]] || die "$1 and $2 are not one entry (inodes $(inode "$1") and $(inode "$2"))"
    printf '%s and %s: one entry, %s names\n' "$1" "$2" "$(stat -c %h "$1")"
}

# python3 -m venv with pip: Debian's python3-venv brings pip's and setuptools' wheels
# (python3-pip-whl), so ensurepip works offline and --without-pip is not needed.
case_venv() {
    "$PY" -m venv venv
    venv/bin/python -c 'import sys; print(sys.prefix); print("in a venv:", sys.prefix != sys.base_prefix)'
    printf 'bin/python3 -> %s\n' "$(readlink venv/bin/python3)"
    venv/bin/python -m pip --version
    [[ -f venv/pyvenv.cfg ]] || die "no venv/pyvenv.cfg"
}

# tar -x of regular files, symlinks (relative, absolute, dangling, to a folder, a long target)
# and hard links (also of a symlink): same content, targets, sizes, link counts and entries.
case_tar() {
    mkdir x
    tar -xf "$PROG_FIX/tree.tar" -C x
    diff -r --no-dereference "$PROG_FIX/tree" x >&2 || die "the extracted tree differs from the archived one"
    # Type, link count (stat %h), size (a symlink's: its target's length), name, target.
    (cd x && find . -mindepth 1 ! -type d -printf '%y %n %s %p %l\n' | LC_ALL=C sort)
    (cd x && find . -mindepth 1 -type d -printf '%y %p\n' | LC_ALL=C sort)
    same_entry x/hard1 x/sub/hard2
    same_entry x/tri1 x/tri2
    same_entry x/tri1 x/sub/deeper/tri3
    same_entry x/rel x/rel-hard
    [[ $(stat -c %h x/tri1) == 3 && $(stat -c %h x/hard1) == 2 && $(stat -c %h x/small.txt) == 1 ]] ||
        die "link counts: tri1 $(stat -c %h x/tri1), hard1 $(stat -c %h x/hard1), small.txt $(stat -c %h x/small.txt)"
    cmp "$PROG_FIX/tree/data.bin" x/data.bin
    [[ $(readlink x/long) == "$(readlink "$PROG_FIX/tree/long")" ]] || die "the long symlink's target changed"
}

# pyc_line MODULE: MODULE's three .pyc files (-O0, -O1, -O2): which are one entry, and their
# link counts.
pyc_line() {
    local m=$1 tag c i0 i1 i2
    tag=$("$PY" -c 'import sys; print(sys.implementation.cache_tag)')
    c=pkg/__pycache__/$m.$tag
    i0=$(inode "$c.pyc") i1=$(inode "$c.opt-1.pyc") i2=$(inode "$c.opt-2.pyc")
    printf '%s: opt-1 is opt-0: %s, opt-2 is opt-0: %s, names %s %s %s\n' "$m" \
        "$([[ $i1 == "$i0" ]] && echo yes || echo no)" "$([[ $i2 == "$i0" ]] && echo yes || echo no)" \
        "$(stat -c %h "$c.pyc")" "$(stat -c %h "$c.opt-1.pyc")" "$(stat -c %h "$c.opt-2.pyc")"
}

# compileall --hardlink-dupes at -O0/-O1/-O2: identical .pyc files are one entry with several
# names; the package imports at each level from those .pyc files (none is rewritten).
case_compileall() {
    local before after
    cp -r "$PROG_LIB/fixtures/pkg" pkg
    "$PY" -m compileall -q --hardlink-dupes -o 0 -o 1 -o 2 pkg
    pyc_line __init__
    pyc_line plain
    pyc_line doc
    # What the fixtures are made for: plain.py compiles the same at every level, doc.py's
    # docstring goes at -O2 only.
    [[ $(pyc_line plain) == *'yes, opt-2 is opt-0: yes, names 3 3 3' ]] || die "plain: $(pyc_line plain)"
    [[ $(pyc_line doc) == *'yes, opt-2 is opt-0: no, names 2 2 1' ]] || die "doc: $(pyc_line doc)"
    before=$(cd pkg/__pycache__ && stat -c '%n %i %h %Y' -- * | LC_ALL=C sort)
    "$PY" -c 'import pkg.plain, pkg.doc; print(pkg.plain.answer(), pkg.doc.greet("pool"), pkg.doc.__doc__ is not None)'
    "$PY" -O -c 'import pkg.plain, pkg.doc; print(pkg.plain.answer(), pkg.doc.greet("pool"), pkg.doc.__doc__ is not None)'
    "$PY" -OO -c 'import pkg.plain, pkg.doc; print(pkg.plain.answer(), pkg.doc.greet("pool"), pkg.doc.__doc__ is not None)'
    after=$(cd pkg/__pycache__ && stat -c '%n %i %h %Y' -- * | LC_ALL=C sort)
    [[ $before == "$after" ]] || die "importing rewrote .pyc files: before: $before; after: $after"
}

# A shell pipeline through two FIFOs: seq > f1 | gzip < f1 > f2 | gunzip < f2, all concurrent.
case_fifo() {
    local gz wr
    mkfifo f1 f2
    gzip -c <f1 >f2 &
    gz=$!
    BG+=("$gz")
    seq 1 100000 >f1 &
    wr=$!
    BG+=("$wr")
    gunzip -c <f2 | awk '{ s += $1 } END { print NR " lines, sum " s }'
    wait "$wr" || die "the writer failed"
    wait "$gz" || die "gzip failed"
    stat -c '%n %F %s' f1 f2
}

# make -j4 with recursive sub-makes sharing the jobserver (a FIFO in TMPDIR with make >= 4.4 and
# --jobserver-style=fifo, a pipe with bookworm's make 4.3); gcc's temporary files are in TMPDIR.
case_make() {
    local style=() l flags auth
    cp -r "$PROG_LIB/fixtures/make" mk
    if make --help 2>/dev/null | grep -q -- '--jobserver-style'; then
        style=(--jobserver-style=fifo)
    fi
    make -C mk -s --no-print-directory -j4 "${style[@]}" CFLAGS='-O2 -Wall -Wextra -Werror'
    for l in 1 2; do
        flags=$(cat "mk/lib$l/makeflags")
        auth=$(grep -o -- '--jobserver-auth=[^ ]*' <<<"$flags") || die "lib$l's make got no jobserver: MAKEFLAGS=$flags"
        case ${auth#--jobserver-auth=} in
            fifo:"$TMPDIR"/*) echo "lib$l: jobserver fifo in TMPDIR" ;;
            fifo:*) die "the jobserver FIFO is outside TMPDIR: $auth" ;;
            [0-9]*,[0-9]*) echo "lib$l: jobserver pipe" ;;
            *) die "unknown jobserver: $auth" ;;
        esac
    done
    ls mk/prog mk/lib1/lib1.a mk/lib2/lib2.a
}

# socketserver.UnixStreamServer bound in TMPDIR, and a client's line echoed through it.
case_unix_socket() {
    local srv
    "$PY" "$PROG_LIB/echo_unix.py" serve "$TMPDIR/echo.sock" &
    srv=$!
    BG+=("$srv")
    "$PY" "$PROG_LIB/echo_unix.py" connect "$TMPDIR/echo.sock" 'hello through an AF_UNIX socket'
    wait "$srv" || die "the server failed"
    stat -c '%n %F' echo.sock
}

pane() { tmux -S "$TMPDIR/tmux.sock" capture-pane -p -t prog; }
pane_shows() { pane | grep -qx "$1"; }

# tmux with its server socket in TMPDIR: a detached session, keys sent, the pane read back, the
# server killed. The server leaves this session (it daemonizes): its pid goes to PROG_PIDS.
case_tmux() {
    local sock=$TMPDIR/tmux.sock pid
    tmux -f /dev/null -S "$sock" new-session -d -s prog -x 80 -y 24 'bash --norc --noprofile'
    pid=$(tmux -S "$sock" display-message -p -t prog '#{pid}')
    printf '%s\n' "$pid" >>"$PROG_PIDS"
    stat -c '%n %F' tmux.sock
    # shellcheck disable=SC2016  # expanded by the shell in the pane, not here
    tmux -S "$sock" send-keys -t prog 'echo tmux-$((6 * 7))' Enter
    wait_until 300 pane_shows tmux-42 || die "the pane never showed tmux-42: $(pane)"
    echo "the pane shows tmux-42"
    pane >pane.txt    # a saved screen, what such a session leaves behind
    tmux -S "$sock" kill-server
    wait_until 300 pid_gone "$pid" || die "the tmux server $pid outlived kill-server"
    echo "server gone"
}

# git init/add/commit/gc/fsck, and a local clone (which hard-links the objects).
case_git() {
    local id=(-c user.name='Pool Test' -c user.email=pool@example.invalid)
    # Fixed dates and no user or system configuration: the same commits, hashes included.
    export GIT_AUTHOR_DATE='2026-01-01T00:00:00 +0000' GIT_COMMITTER_DATE='2026-01-01T00:00:00 +0000'
    export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
    git init -q -b main repo
    printf 'one\n' >repo/a.txt
    mkdir repo/d
    printf 'two\n' >repo/d/b.txt
    ln -s a.txt repo/link
    git -C repo add -A
    git -C repo "${id[@]}" commit -q -m 'first commit'
    printf 'three\n' >>repo/a.txt
    git -C repo "${id[@]}" commit -q -a -m 'second commit'
    git -C repo log --oneline
    git -C repo fsck --full --strict --no-progress
    [[ -z $(git -C repo status --porcelain) ]] || die "git status: $(git -C repo status --porcelain)"
    # What git found out about the file system at init (filemode, symlinks...).
    git -C repo config --local --list | LC_ALL=C sort
    git -C repo gc -q
    git clone -q repo clone
    git -C clone log --oneline
    git -C clone fsck --full --strict --no-progress
    echo "objects hard-linked by the clone: $(find clone/.git/objects -type f -links +1 | wc -l)"
    [[ $(readlink clone/link) == a.txt ]] || die "the clone's symlink points to $(readlink clone/link)"
}

# mpirun -np 2 with TMPDIR here: Open MPI's session directory goes to TMPDIR. Exit 0, and no
# "CANNOT CREATE" in its output (what Open MPI says when it cannot make its files there).
case_mpi() {
    local args=(-np 2 --oversubscribe) rc=0
    [[ $(id -u) -ne 0 ]] || args+=(--allow-run-as-root)
    mpirun "${args[@]}" "$PROG_BIN/mpi_hello" >mpi.out 2>&1 || rc=$?
    if [[ $rc -ne 0 ]] || grep -qi 'CANNOT CREATE' mpi.out; then
        cat mpi.out >&2
        die "mpirun exited $rc; lines saying CANNOT CREATE: $(grep -ci 'CANNOT CREATE' mpi.out)"
    fi
    grep -E '^(ranks|session directory)' mpi.out
    cat mpi-result
}

CASE=${1:?usage: cases.sh NAME}
declare -F "case_$CASE" >/dev/null || die "no such case"
"case_$CASE"
