# shellcheck shell=bash
# Shared helpers for scripts/build, scripts/run and scripts/test. Source it after `set -euo pipefail`
# and after setting PROG (the name used in messages). It sets POOLFS_ROOT and cds there.

POOLFS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Where the caller was, so relative paths given on the command line keep their meaning.
CALLER_PWD=$PWD
cd "$POOLFS_ROOT" || exit 1

FUSE_MIN=3.18                                   # first libfuse with FUSE over io_uring (passthrough: 3.17)
FUSE_SUITE=${POOLFS_FUSE_SUITE:-forky}          # Debian suite whose fuse3 source package we build
DEPS_DIR=$POOLFS_ROOT/.deps                     # gitignored
FUSE_PREFIX=$DEPS_DIR/fuse3                     # libfuse >= FUSE_MIN is installed here
FUSE_RECIPE=6                                   # bump when build_libfuse changes: prefixes rebuild
LOG_DIR=$DEPS_DIR/logs

# Debian packages needed to build and run poolfs (scripts/build, scripts/run), and to build libfuse
# from source. libc6-dev is only a Recommends of gcc, and we install without recommends.
# shellcheck disable=SC2034  # read by scripts/build and scripts/test
APT_PACKAGES=(libfuse3-dev fuse3 libcmocka-dev uuid-dev meson ninja-build pkg-config attr util-linux
              dpkg-dev gcc g++ libc6-dev
              python3 patch xz-utils procps  # our scripts' Python; libfuse's patches and tarball
              liburing-dev libnuma-dev)    # libfuse >= 3.18 builds its io_uring transport with these
# What the tests need besides: scripts/test installs these with APT_PACKAGES, in one apt-get call,
# before the first test starts. No test installs anything: one that finds its package missing says
# which, and scripts/test counts that skip as a failure (CONTRIBUTING.md, "Test dependencies").
# shellcheck disable=SC2034  # read by scripts/test
TEST_PACKAGES=(python3-numpy python3-joblib valgrind cppcheck clang-tidy clang-format
               shellcheck pyflakes3            # scripts/lint checks the bash and Python with these
               systemd man-db groff-base
               # tests/programs runs these unmodified programs in pools (Open MPI as the cluster
               # suites use it: mpirun and mpicc)
               python3-venv make git tmux curl openmpi-bin libopenmpi-dev
               # the Slurm suites (tests/cluster): one node, and three with Dask distributed
               munge slurmctld slurmd slurm-client python3-distributed
               # tests/monitoring: node_exporter's textfile collector scraped with curl, and
               # promtool (in prometheus) checks poolctl metrics' output and the alert rules
               prometheus-node-exporter prometheus)
# What only --long runs need: scripts/fuzz's libFuzzer builds (the fuzz/libfuzzer test).
# shellcheck disable=SC2034  # read by scripts/test and scripts/fuzz
LONG_TEST_PACKAGES=(clang-14 libclang-rt-14-dev)

# shellcheck source=scripts/machine_lock.sh
. "$POOLFS_ROOT/scripts/machine_lock.sh"

STEP=""        # what we are doing, for the failure message
REPORTED=0     # set once a failure was explained, so the exit trap stays quiet

say() { printf '%s: %s\n' "$PROG" "$*" >&2; }

die() {
    printf '%s: error: %s\n' "$PROG" "$*" >&2
    REPORTED=1
    exit 1
}

_poolfs_on_exit() {
    local rc=$1
    if [[ $rc -ne 0 && $REPORTED -eq 0 ]]; then
        printf '%s: FAILED (exit %d)%s\n' "$PROG" "$rc" "${STEP:+ while: $STEP}" >&2
    fi
}
trap '_poolfs_on_exit $?' EXIT

# run_logged NAME CMD...: run CMD with its output in $LOG_DIR/NAME.log; on failure show the end of
# the log, name the step and exit.
run_logged() {
    local name=$1 log=$LOG_DIR/$1.log rc=0
    shift
    mkdir -p "$LOG_DIR"
    "$@" >"$log" 2>&1 || rc=$?
    if [[ $rc -ne 0 ]]; then
        printf '%s: FAILED (exit %d) while: %s\n  command: %s\n  last lines of %s:\n' \
            "$PROG" "$rc" "${STEP:-$name}" "$*" "$log" >&2
        tail -n 40 "$log" | sed 's/^/    /' >&2
        REPORTED=1
        exit "$rc"
    fi
}

# abspath P: P made absolute relative to the caller's working directory.
abspath() {
    case $1 in
        /*) printf '%s\n' "$1" ;;
        *) printf '%s\n' "$CALLER_PWD/$1" ;;
    esac
}

# version_ge A B: true if version A >= version B.
version_ge() { dpkg --compare-versions "$1" ge "$2"; }

# pc_version FILE: the Version: field of a pkg-config file (empty if there is none).
pc_version() {
    [[ -f $1 ]] || return 0
    sed -n 's/^Version:[[:space:]]*//p' "$1" | head -n 1
}

# system_fuse_version: libfuse3 version pkg-config finds without our prefix (empty if none).
system_fuse_version() {
    env -u PKG_CONFIG_PATH -u PKG_CONFIG_LIBDIR pkg-config --modversion fuse3 2>/dev/null || true
}

# system_fuse_recent: true if the system's libfuse already has passthrough (>= FUSE_MIN).
system_fuse_recent() {
    local v
    v=$(system_fuse_version)
    [[ -n $v ]] && version_ge "$v" "$FUSE_MIN"
}

# builddir_for SANITIZE SYSFUSE: the default build directory name for a configuration (0/1 flags).
builddir_for() {
    local dir=build
    [[ $2 == 1 ]] && dir+=-sys
    [[ $1 == 1 ]] && dir+=-san
    printf '%s\n' "$dir"
}

# ensure_packages PKG...: install those of the Debian packages PKG that are missing, in one
# apt-get call after an apt-get update; a fast no-op when all are there. apt
# waits for the dpkg lock another apt holds (an unattended upgrade, a second scripts/test) instead
# of failing on it, and our own installs take the machine lock "apt" (machine_lock) one at a time.
APT_LOCK_TIMEOUT=${POOLFS_APT_LOCK_TIMEOUT:-900}
ensure_packages() {
    local missing=() p status want=("$@")
    declare -A installed=()
    STEP="checking installed packages (dpkg-query)"
    while read -r p status; do
        [[ $status == installed ]] && installed[$p]=1
    done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${want[@]}" 2>/dev/null || true)
    for p in "${want[@]}"; do
        [[ -n ${installed[$p]:-} ]] || missing+=("$p")
    done
    [[ ${#missing[@]} -eq 0 ]] && return 0
    local sudo=()
    if [[ $EUID -ne 0 ]]; then
        command -v sudo >/dev/null ||
            die "missing Debian packages: ${missing[*]} (run as root or install them: apt-get install ${missing[*]})"
        sudo=(sudo)
    fi
    local lockfd
    machine_lock apt lockfd "another script of ours is installing packages"
    say "installing missing Debian packages: ${missing[*]}"
    local apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q
        -o "DPkg::Lock::Timeout=$APT_LOCK_TIMEOUT")
    STEP="apt-get update"
    apt_update_waiting "${apt[@]}"
    STEP="apt-get install ${missing[*]}"
    run_logged apt-install "${apt[@]}" install -y --no-install-recommends "${missing[@]}"
    exec {lockfd}>&-
    STEP=""
}

# apt_update_waiting APT-GET-CMD...: APT-GET-CMD update, again while another apt holds the lists
# lock, for up to APT_LOCK_TIMEOUT seconds: apt 2.6 (bookworm) waits for the dpkg lock with
# DPkg::Lock::Timeout but fails at once on the lists lock that only `update` takes.
apt_update_waiting() {
    local log=$LOG_DIR/apt-update.log start=$SECONDS
    mkdir -p "$LOG_DIR"
    while ! "$@" update >"$log" 2>&1; do
        if ! grep -q 'Could not get lock' "$log" || ((SECONDS - start >= APT_LOCK_TIMEOUT)); then
            printf '%s: FAILED while: %s\n  command: %s update\n  last lines of %s:\n' \
                "$PROG" "$STEP" "$*" "$log" >&2
            tail -n 40 "$log" | sed 's/^/    /' >&2
            REPORTED=1
            exit 1
        fi
        say "apt's lists are locked by another apt ($(grep -o 'held by process [0-9]* ([^)]*)' "$log" | head -n 1)); waiting"
        sleep 5
    done
}

# write_src_list FILE: a deb822 deb-src entry for $FUSE_SUITE with the URIs and Signed-By of the
# system's own Debian archive entry (read from its sources; no host name is written in this repo).
write_src_list() {
    local out=$1 codename
    # shellcheck source=/dev/null  # the system's file, not ours
    codename=$(. /etc/os-release && printf '%s' "${VERSION_CODENAME:-}")
    python3 "$POOLFS_ROOT/scripts/deb_src_list.py" "$out" "$FUSE_SUITE" "$codename"
}

# fuse_prefix_ok: FUSE_PREFIX holds a libfuse >= FUSE_MIN with its fusermount3, built by this recipe.
fuse_prefix_ok() {
    local have
    have=$(pc_version "$FUSE_PREFIX/lib/pkgconfig/fuse3.pc")
    [[ -n $have ]] && version_ge "$have" "$FUSE_MIN" && [[ -x $FUSE_PREFIX/bin/fusermount3 ]] &&
        [[ $(cat "$FUSE_PREFIX/.poolfs-recipe" 2>/dev/null) == "$FUSE_RECIPE" ]]
}

# build_libfuse: libfuse >= FUSE_MIN in FUSE_PREFIX, built from Debian's source package (README,
# "Building and testing"). A no-op when the prefix already has it.
build_libfuse() {
    local have
    if fuse_prefix_ok; then
        return 0
    fi
    mkdir -p "$DEPS_DIR"
    # Two scripts started at once must not build into the same prefix together.
    local lockfd
    exec {lockfd}>"$DEPS_DIR/.fuse3.lock"
    flock "$lockfd"
    if fuse_prefix_ok; then
        exec {lockfd}>&-
        return 0
    fi

    say "building libfuse >= $FUSE_MIN from Debian's $FUSE_SUITE source package into ${FUSE_PREFIX#"$POOLFS_ROOT"/} (logs: ${LOG_DIR#"$POOLFS_ROOT"/}/fuse3-*.log)"
    local work=$DEPS_DIR/fuse3-work
    rm -rf "$work"
    mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/download" "$work/src"

    STEP="writing a private deb-src list for $FUSE_SUITE from the system's Debian sources"
    write_src_list "$work/apt/$FUSE_SUITE-src.sources"
    # Private sources, lists and caches: the system's apt state is not touched.
    local apt_opts=(-q
        -o "Dir::Etc::sourcelist=$work/apt/$FUSE_SUITE-src.sources"
        -o "Dir::Etc::sourceparts=-"
        -o "Dir::State::Lists=$work/apt/lists"
        -o "Dir::Cache=$work/apt/cache"
        -o "Acquire::Languages=none")
    # As root apt would drop to _apt for downloads, which cannot write into our tree.
    [[ $EUID -eq 0 ]] && apt_opts+=(-o "APT::Sandbox::User=root")

    STEP="apt-get update for the private $FUSE_SUITE deb-src list"
    say "fetching the fuse3 source package list of $FUSE_SUITE"
    run_logged fuse3-apt-update apt-get "${apt_opts[@]}" update
    STEP="apt-get source --download-only fuse3 ($FUSE_SUITE)"
    # shellcheck disable=SC2016  # $1 and $@ belong to the inner shell
    run_logged fuse3-apt-source bash -c 'cd "$1" && shift && exec "$@"' _ "$work/download" \
        apt-get "${apt_opts[@]}" source --download-only fuse3

    STEP="unpacking the fuse3 source package"
    local orig deb
    orig=$(compgen -G "$work/download/fuse3_*.orig.tar.*" | grep -v '\.asc$' | head -n 1 || true)
    deb=$(compgen -G "$work/download/fuse3_*.debian.tar.*" | grep -v '\.asc$' | head -n 1 || true)
    [[ -n $orig && -n $deb ]] || die "apt-get source did not fetch fuse3_*.orig.tar.* and fuse3_*.debian.tar.* (see $LOG_DIR/fuse3-apt-source.log)"
    say "unpacking $(basename "$orig") and $(basename "$deb"), applying debian/patches"
    run_logged fuse3-unpack tar -xf "$orig" -C "$work/src" --strip-components=1
    run_logged fuse3-unpack tar -xf "$deb" -C "$work/src"

    local series=$work/src/debian/patches/series p n=0
    if [[ -f $series ]]; then
        while read -r p _; do
            [[ -z $p || $p == \#* ]] && continue
            STEP="applying debian/patches/$p"
            run_logged fuse3-patch patch -d "$work/src" -p1 -N -i "$work/src/debian/patches/$p"
            n=$((n + 1))
        done <"$series"
    fi

    STEP="configuring libfuse (meson setup)"
    say "building libfuse (meson + ninja, $n Debian patches applied)"
    run_logged fuse3-meson meson setup "$work/build" "$work/src" --prefix="$FUSE_PREFIX" --libdir=lib \
        -Dexamples=true -Dutils=true -Dtests=false -Dudevrulesdir="$FUSE_PREFIX/udev" \
        -Dinitscriptdir= -Duseroot=false --sysconfdir=/etc -Denable-io-uring=true
    # libfuse quietly leaves io_uring out when liburing or libnuma is missing or too old; poolfs's
    # uring= option promises it, so a build without it is a failure here (docs/interface.md).
    grep -q '^#define HAVE_URING' "$work/build/fuse_config.h" ||
        die "libfuse was configured without io_uring (liburing with SQE128 and libnuma needed; see $LOG_DIR/fuse3-meson.log)"
    STEP="compiling libfuse (ninja)"
    run_logged fuse3-ninja ninja -C "$work/build"
    # Stage the install and move it into place, so a half-installed prefix never looks complete.
    STEP="installing libfuse into ${FUSE_PREFIX}"
    run_logged fuse3-install env DESTDIR="$work/stage" ninja -C "$work/build" install
    local stage=$work/stage$FUSE_PREFIX
    # libfuse's own example file system passthrough_hp (C++, hence g++), the reference
    # scripts/bench measures FUSE's floor with (docs/performance.md, "Small files and metadata"); libfuse
    # does not install its examples itself.
    [[ -x $work/build/example/passthrough_hp ]] ||
        die "libfuse's example passthrough_hp was not built (is g++ installed? see $LOG_DIR/fuse3-meson.log)"
    mkdir -p "$stage/libexec"
    install -m 0755 "$work/build/example/passthrough_hp" "$stage/libexec/"
    # libfuse 3.17 runs the fusermount3 of its own prefix for auto_unmount, and bookworm's 3.14
    # fusermount3 does not know 3.17's --auto-unmount flag: so we build the matching one. Like
    # Debian's fuse3 package we make it setuid root, so users other than root can mount too, and
    # (--sysconfdir=/etc) it reads the system's /etc/fuse.conf (user_allow_other, mount_max).
    if [[ $EUID -eq 0 ]]; then
        chown root:root "$stage/bin/fusermount3"
        chmod 4755 "$stage/bin/fusermount3"
    fi
    have=$(pc_version "$stage/lib/pkgconfig/fuse3.pc")
    if [[ -z $have ]] || ! version_ge "$have" "$FUSE_MIN"; then
        die "the built libfuse reports version '${have}', expected >= $FUSE_MIN"
    fi
    printf '%s\n' "$FUSE_RECIPE" >"$stage/.poolfs-recipe"
    # Two renames: a daemon started meanwhile finds the old or the new library, hardly ever none.
    STEP="moving the new libfuse into $FUSE_PREFIX"
    if [[ -e $FUSE_PREFIX ]]; then
        mv "$FUSE_PREFIX" "$work/old-prefix"
    fi
    mv "$stage" "$FUSE_PREFIX"
    rm -rf "$work"
    exec {lockfd}>&-
    STEP=""
    say "libfuse $have installed in ${FUSE_PREFIX#"$POOLFS_ROOT"/}"
}

# setup_builddir DIR ARGS...: meson setup DIR (or reconfigure it) so it is configured with exactly
# ARGS. Quiet when it already is.
setup_builddir() {
    local dir=$1
    shift
    local stamp=$dir/.poolfs-setup-args want
    want=$(printf '%s\n' "$@")
    if [[ -f $dir/build.ninja && -f $stamp && $(<"$stamp") == "$want" ]]; then
        return 0
    fi
    local name
    name=$(basename "$dir")
    if [[ -f $dir/meson-private/coredata.dat ]]; then
        STEP="meson setup --reconfigure $dir"
        say "reconfiguring $name"
        run_logged "meson-setup-$name" meson setup --reconfigure "$dir" "$@"
    else
        STEP="meson setup $dir"
        say "configuring $name"
        run_logged "meson-setup-$name" meson setup "$dir" "$@"
    fi
    printf '%s\n' "$want" >"$stamp"
}

# ninja_build DIR: build DIR; quiet when there was nothing to do, the compiler's output on failure.
ninja_build() {
    local dir=$1 name log rc=0
    name=$(basename "$dir")
    mkdir -p "$LOG_DIR"
    log=$LOG_DIR/ninja-$name.log
    STEP="ninja -C $dir"
    ninja -C "$dir" >"$log" 2>&1 || rc=$?
    if [[ $rc -ne 0 ]]; then
        # What the reader needs: meson's ERROR lines (a failed regeneration) and everything from
        # ninja's first FAILED: on (the compiler's messages), without ninja's progress lines.
        local errors
        errors=$(awk '/^\[[0-9]+\/[0-9]+\] / { next } /^FAILED: / { f = 1 } f || /ERROR:/' "$log" |
            head -n 200)
        [[ -n $errors ]] || errors=$(tail -n 40 "$log")
        printf '%s\n' "$errors" | sed 's/^/    /' >&2
        printf '%s: FAILED (exit %d) while: ninja -C %s (full log: %s)\n' "$PROG" "$rc" "$dir" "$log" >&2
        REPORTED=1
        exit "$rc"
    fi
    if ! grep -q '^ninja: no work to do' "$log"; then
        say "built $name ($(grep -c '^\[[0-9]*/[0-9]*\] ' "$log" || true) steps)"
        # Only builds without werror (--sanitize) can succeed with warnings: show them.
        if grep -q 'warning:' "$log"; then
            say "$name: compiler warnings (full log: $log):"
            grep 'warning:' "$log" | sort -u | head -n 50 | sed 's/^/    /' >&2
        fi
    fi
    STEP=""
}

# A skip for want of what scripts/test provides (a package, a service) fails the run under CI=true
# and as root, where scripts/test installs and starts everything (scripts/skip_reasons.py).
count_flags=()
[[ ${CI:-} == true || $EUID -eq 0 ]] && count_flags+=(--strict)

# count_tests DIR: "PASSED FAILED SKIPPED" for the last `meson test` run in DIR, counted per test
# case from the TAP lines each binary printed (scripts/count_tests.py says how).
count_tests() {
    python3 "$POOLFS_ROOT/scripts/count_tests.py" "${count_flags[@]}" "$1"
}

# failed_tests DIR: one line per test binary of that run that failed, with its failed cases.
failed_tests() {
    python3 "$POOLFS_ROOT/scripts/count_tests.py" --failed "${count_flags[@]}" "$1"
}

# skipped_tests DIR: that run's skips grouped by reason, a line a group ("COUNT skipped|failed:
# REASON (TESTS)"), each test named under a group that is not an allowed reason.
skipped_tests() {
    python3 "$POOLFS_ROOT/scripts/count_tests.py" --skips "${count_flags[@]}" "$1"
}
