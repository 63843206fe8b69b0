#!/usr/bin/env python3
"""The scale section of `scripts/bench --only scale` (docs/performance.md "Scale"): for each size,
a fresh multi-user pool (allow_other,autohold=none, default data path and transport) filled with
that many entries by several users, each in folders of their own (one pinned folder per user,
FOLDERS folders in it), then:

  - the create rate of one user's next BATCH creates (open O_CREAT + close), against raw tmpfs:
    the best and the median of RATE_ROUNDS rounds, each started on a quiet daemon, and the
    first (right after the fill) as a row of its own;
  - the daemon's RSS per entry (VmRSS after the fill minus after the mount, over the entries);
  - the time of getxattr user.poolfs.stat on the root and of `poolctl ls` of one folder;
  - the worst latency of another user's stat + open(O_CREAT) + close, and the removal latency of
    a mapped file (its last munmap, after its close, to the name's disappearance: stat polled),
    with no load, while root loops user.poolfs.stat, while MAPPERS processes that each map a
    file are killed at once, and while one user removes REMOVE files (rm -rf, timed against the
    same tree on raw tmpfs);
  - the same create+close probe on raw tmpfs under the same loads made on raw tmpfs (statvfs for
    user.poolfs.stat): the floor this machine itself sets for a worst case; with --ref, on
    libfuse's passthrough_hp (fuse-ref) with no load, under the mappers and under rm -rf of up to
    REF_REMOVE files there: what any FUSE file system pays;
  - the daemon's own time per CREATE and LOOKUP during the create rate (user.poolfs.ops): what
    of the create rate's change with size is the daemon's and what the kernel's;
  - under each load on the pool, how many of the daemon's request handlers took over 10 ms and
    the bucket of the slowest (the handler-time histogram of user.poolfs.counters): a worst
    create+close far above the slowest handler was spent in the kernel or the scheduler; and
    how many waits to take the pool lock took over 10 ms and the bucket of the longest (the
    lock-wait histogram): a long wait is a request waiting behind another's work;
  - the unmount time (umount to the daemon's exit) with what is left.

Run as root (it mounts, and switches uids with fork + setuid: no passwd entries needed).

    bench_scale.py --daemon POOLFS --poolctl POOLCTL --work DIR --sizes N,N... [--logdir DIR]
                   [--csv FILE] [--ref PASSTHROUGH_HP]

DIR (where the mountpoints go) must be reachable by other users; the daemons' logs go to
--logdir (default DIR).
"""
import argparse
import json
import math
import mmap
import select
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

USERS = [60101, 60102, 60103, 60104]  # the fillers; the first also removes and is timed
PROBE_UID = 60109  # another user: the create+close and removal probes
MAPPER_UID = 60110  # the mappers
FOLDERS = 8  # per user
BATCH = 5000
RATE_ROUNDS = 7
MAPPERS = 200
REMOVE = 100000
REF_REMOVE = 10000  # fuse-ref's rm -rf: passthrough_hp holds a descriptor per inode
LOAD_SECONDS = 3.0  # each load's probes, at least (--load-seconds)
STATS = 200
HOLD = 'user.poolfs.hold'
STAT = 'user.poolfs.stat'


def say(msg):
    print(msg, flush=True)


def as_user(uid, fn, *args):
    """fn(*args) in a child that runs as uid (no groups), in the caller's session; its JSON-able
    result, or raises."""
    return finish(start_as_user(uid, fn, *args, new_session=False))


def start_as_user(uid, fn, *args, new_session=True):
    """fn(*args) in a child that runs as uid (no groups), by default in a session of its own,
    without waiting: (pid, read end); finish() collects its JSON-able result."""
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(rd)
            os.chdir('/')  # the caller's folder may be one the user cannot reach
            if new_session:
                os.setsid()
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            with os.fdopen(wr, 'w') as out:
                json.dump(fn(*args), out)
            code = 0
        except BaseException as e:
            print(f'bench_scale: child as uid {uid}: {e!r}', file=sys.stderr, flush=True)
        os._exit(code)
    os.close(wr)
    return pid, rd


def finish(child):
    pid, rd = child
    with os.fdopen(rd) as inp:
        text = inp.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not text:
        raise RuntimeError(f'child {pid} failed ({status})')
    return json.loads(text)


def user_top(mnt, uid):
    return os.path.join(mnt, f'u{uid}')


def make_tree(top, pin):
    os.mkdir(top, 0o700)
    if pin:
        os.setxattr(top, HOLD, b'pin')
    for k in range(FOLDERS):
        os.mkdir(os.path.join(top, f'd{k}'), 0o700)
    return 0


def create_files(top, first, count):
    """count empty files spread over top's folders, numbered from first; seconds taken."""
    t0 = time.perf_counter()
    for i in range(first, first + count):
        fd = os.open(os.path.join(top, f'd{i % FOLDERS}', f'f{i}'),
                     os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600)
        os.close(fd)
    return time.perf_counter() - t0


def create_batch(top, count, name='rate'):
    """count creates in a new folder `name` of top: seconds taken."""
    d = os.path.join(top, name)
    os.mkdir(d, 0o700)
    t0 = time.perf_counter()
    for i in range(count):
        os.close(os.open(os.path.join(d, f'r{i}'), os.O_CREAT | os.O_WRONLY | os.O_EXCL,
                         0o600))
    return time.perf_counter() - t0


def rm_folders(paths):
    t0 = time.perf_counter()
    subprocess.run(['rm', '-rf', '--'] + paths, check=True)
    return time.perf_counter() - t0


def poolctl_ls(poolctl, path):
    t0 = time.perf_counter()
    subprocess.run([poolctl, 'ls', path], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def stopped(stop):
    """Has the parent written to pipe `stop` (a read end; nobody reads it)?"""
    return bool(select.select([stop], [], [], 0)[0])


def probe_create(mnt, stop, raw=False):
    """Another user's stat + open(O_CREAT) + close of new names in the root (each goes at its
    close: autohold=none) until told to stop: [start, latency in ms] of each (start on
    time.perf_counter's clock, CLOCK_MONOTONIC: every process's). On raw tmpfs (mnt a folder
    there) each file is then unlinked, untimed: on the pool it goes by itself."""
    lat, i, me = [], 0, os.getpid()
    while not stopped(stop):
        name = os.path.join(mnt, f'p{me}-{i}')
        i += 1
        t0 = time.perf_counter()
        try:
            os.stat(name)
        except FileNotFoundError:
            pass
        os.close(os.open(name, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600))
        lat.append((t0, (time.perf_counter() - t0) * 1e3))
        if raw:
            os.unlink(name)
    return lat


def probe_removal(mnt, stop):
    """A mapped file's removal: create, map, close the fd, then from the munmap poll stat until
    the name is gone; [start, latency in ms] of each (as probe_create's), until told to stop."""
    lat, i, me = [], 0, os.getpid()
    while not stopped(stop):
        name = os.path.join(mnt, f'r{me}-{i}')
        i += 1
        fd = os.open(name, os.O_CREAT | os.O_RDWR | os.O_EXCL, 0o600)
        os.ftruncate(fd, 4096)
        m = mmap.mmap(fd, 4096)
        m[0:1] = b'x'
        os.close(fd)
        t0 = time.perf_counter()
        m.close()
        while True:
            try:
                os.stat(name)
            except FileNotFoundError:
                break
            if time.perf_counter() - t0 > 10:
                raise RuntimeError(f'{name} still there 10 s after its last munmap')
        lat.append((t0, (time.perf_counter() - t0) * 1e3))
        time.sleep(0.002)
    return lat


def mapper(path, ready_fd):
    fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_EXCL, 0o600)
    os.ftruncate(fd, 65536)
    m = mmap.mmap(fd, 65536)
    m[0:65536] = b'm' * 65536
    os.close(fd)
    os.write(ready_fd, b'r')
    signal.pause()
    return m


def lean_mappers_killed(uid, mnt, raw=False):
    """mappers_killed() as uid, by a fresh interpreter (this script with --mappers, started as
    root: the interpreter may be root's alone), whose forks are small. Forked from this process,
    each mapper would carry the bench's heap (the samples kept so far) and their 200 exits would
    tear its page tables down 200 times: with a few hundred MB, a kill storm several times
    longer, growing with what the bench keeps, not with the pool."""
    out = subprocess.run([sys.executable, os.path.abspath(__file__), '--mappers', str(uid), mnt]
                         + (['--raw'] if raw else []),
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out)


def mappers_killed(mnt, raw=False):
    """MAPPERS processes each map a file of their own, then all are killed at once: the kill's
    time (time.perf_counter) and the seconds from it until every name is gone (raw tmpfs: until
    all are reaped; the names stay)."""
    rd, wr = os.pipe()
    pids = []
    for i in range(MAPPERS):
        pid = os.fork()
        if pid == 0:
            try:
                os.close(rd)
                mapper(os.path.join(mnt, f'm{os.getppid()}-{i}'), wr)
            finally:
                os._exit(1)
        pids.append(pid)
    os.close(wr)
    got = 0
    while got < MAPPERS:
        chunk = os.read(rd, MAPPERS)
        if not chunk:
            raise RuntimeError('a mapper died before mapping')
        got += len(chunk)
    os.close(rd)
    names = [os.path.join(mnt, f'm{os.getpid()}-{i}') for i in range(MAPPERS)]
    t0 = time.perf_counter()
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    for pid in pids:
        os.waitpid(pid, 0)
    for name in [] if raw else names:
        while os.path.exists(name):
            if time.perf_counter() - t0 > 30:
                raise RuntimeError(f'{name} still there 30 s after its mapper was killed')
    return t0, time.perf_counter() - t0


def stat_loop(mnt, stop, raw=False):
    n = 0
    while not stopped(stop):
        if raw:
            os.statvfs(mnt)
        else:
            os.getxattr(mnt, STAT)
        n += 1
    return n


def summary(samples, after=None, before=None):
    """Median, p99 and worst of the latencies of `samples` ([start, ms] pairs) that started at
    or after `after` and before `before` (time.perf_counter), if given."""
    s = sorted(ms for t, ms in samples
               if (after is None or t >= after) and (before is None or t < before))
    if not s:
        return {'n': 0}
    return {'n': len(s), 'median': statistics.median(s),
            'p99': s[min(len(s) - 1, int(len(s) * 0.99))], 'max': s[-1]}


def under_load(mnt, run_load, seconds, raw=False, handlers=None):
    """The two probes (as another user) while run_load(stop) runs (at least `seconds`); a
    byte written to the pipe whose read end is `stop` ends them (and a load's loop): their
    samples (probe_create's) and what run_load returned. On raw tmpfs (mnt a folder there) only
    the create probe, and no removal samples. `handlers` (a list, on a pool): gets the daemon's
    handler-time histogram before and after (daemon_latency), to tell its own slow requests from
    the machine's."""
    if handlers is not None:
        handlers.append(daemon_latency(mnt))
    stop, go = os.pipe()
    try:
        if raw:
            probes = [start_as_user(PROBE_UID, probe_create, mnt, stop, True),
                      start_as_user(PROBE_UID, lambda _stop: [], stop)]
        else:
            probes = [start_as_user(PROBE_UID, probe_create, mnt, stop),
                      start_as_user(PROBE_UID, probe_removal, mnt, stop)]
        try:
            t0 = time.perf_counter()
            extra = run_load(stop)
            rest = seconds - (time.perf_counter() - t0)
            if rest > 0:
                time.sleep(rest)
        finally:
            os.write(go, b's')
        create, removal = finish(probes[0]), finish(probes[1])
    finally:
        os.close(stop)
        os.close(go)
    if handlers is not None:
        handlers.append(daemon_latency(mnt))
    return create, removal, extra


def rss_kib(pid):
    with open(f'/proc/{pid}/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    raise RuntimeError('no VmRSS')


class Pool:
    def __init__(self, daemon, work, logdir, name):
        self.mnt = os.path.join(work, name)
        self.log = os.path.join(logdir, name + '.log')
        os.mkdir(self.mnt)
        self.logf = open(self.log, 'w')
        self.proc = subprocess.Popen([daemon, '-f', '-o', 'allow_other,autohold=none', self.mnt],
                                     stdin=subprocess.DEVNULL, stdout=self.logf,
                                     stderr=subprocess.STDOUT)
        for _ in range(300):
            with open(self.log) as f:
                text = f.read()
            if 'poolfs: mounted ' in text:
                self.line = [ln for ln in text.splitlines() if 'poolfs: mounted ' in ln][0]
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f'the daemon exited before mounting:\n{text}')
            time.sleep(0.05)
        raise RuntimeError('the daemon did not mount within 15 s')

    def unmount(self):
        """umount, then wait for the daemon: seconds taken."""
        t0 = time.perf_counter()
        subprocess.run(['umount', self.mnt], check=True)
        self.proc.wait(timeout=600)
        took = time.perf_counter() - t0
        self.close()
        return took

    def close(self):
        if self.proc.poll() is None:
            subprocess.run(['umount', '-l', self.mnt], stderr=subprocess.DEVNULL)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.logf.close()
        if os.path.isdir(self.mnt):
            os.rmdir(self.mnt)


def raw_tree(count, where='/dev/shm'):
    """count empty files in FOLDERS folders in `where` (by default raw tmpfs): the top folder."""
    top = os.path.join(where, f'poolbench-scale-{os.getpid()}')
    make_tree(top, False)
    create_files(top, 0, count)
    return top


def daemon_ops(mnt):
    """The daemon's request counters (user.poolfs.ops, the pool owner's: root's here): {op:
    (count, ns)}."""
    ops = {}
    for line in os.getxattr(mnt, 'user.poolfs.ops').decode().splitlines():
        f = line.split()
        if len(f) == 3 and f[1].isdigit():
            ops[f[0]] = (int(f[1]), int(f[2]))
    return ops


def daemon_latency(mnt):
    """The daemon's histograms (user.poolfs.counters, the pool owner's: root's here) of handler
    times ('latency') and of waits to take the pool lock ('lock_wait'): for each, [(bound in ns,
    how many took at most that)], cumulative, the last bound inf."""
    hists = {'latency': [], 'lock_wait': []}
    for line in os.getxattr(mnt, 'user.poolfs.counters').decode().splitlines():
        f = line.split()
        if len(f) == 3 and f[0] in hists:
            hists[f[0]].append((math.inf if f[1] == 'inf' else int(f[1]), int(f[2])))
    return hists


def slow_handlers(before, after, over_ns):
    """Between two daemon_latency readings: (how many handlers took more than over_ns, one of
    the histogram's bounds; the bound of the slowest one's bucket in ns, 0 if none ran)."""
    delta = [(bound, a - b) for (bound, a), (_, b) in zip(after, before)]
    total = delta[-1][1] if delta else 0
    over = total - dict(delta).get(over_ns, total)
    slowest = next((bound for bound, n in delta if n == total), 0) if total else 0
    return over, slowest


def ops_between(before, after, op):
    """(requests, handler ns) of type `op` between two daemon_ops readings."""
    n0, ns0 = before.get(op, (0, 0))
    n1, ns1 = after.get(op, (0, 0))
    return n1 - n0, ns1 - ns0


def settle(mnt, quiet=0.2, limit=5.0):
    """Wait (at most `limit` s) until the daemon gets no request but our own reads of its
    counters for `quiet` s: the FORGETs and removals a big rm -rf leaves behind are done."""
    def others(ops):
        return sum(n for op, (n, _) in ops.items() if op not in ('getxattr', 'total'))
    end = time.monotonic() + limit
    last = others(daemon_ops(mnt))
    while time.monotonic() < end:
        time.sleep(quiet)
        now = others(daemon_ops(mnt))
        if now == last:
            return
        last = now


def raw_batch(count):
    top = os.path.join('/dev/shm', f'poolbench-scale-rate-{os.getpid()}')
    os.mkdir(top, 0o700)
    try:
        return create_batch(top, count)
    finally:
        shutil.rmtree(top, ignore_errors=True)


class RefFs:
    """libfuse's passthrough_hp (scripts/bench's fuse-ref) run by root over a fresh folder of raw
    tmpfs that every user may create in (it makes files with its own credentials, root's), over
    io_uring when the kernel's switch is on (as the pools' uring=auto): what any FUSE file system
    pays under the same load."""

    def __init__(self, binary, work, logdir, name):
        self.src = tempfile.mkdtemp(prefix='poolbench-scale-ref-', dir='/dev/shm')
        self.mnt = os.path.join(work, name)
        self.proc = None
        self.logf = open(os.path.join(logdir, name + '.log'), 'w')
        try:
            os.chmod(self.src, 0o777)
            os.mkdir(self.mnt)
            opts = 'allow_other' + (',io_uring' if uring_switch_on() else '')
            self.proc = subprocess.Popen([binary, '--foreground', '-o', opts, self.src, self.mnt],
                                         stdin=subprocess.DEVNULL, stdout=self.logf,
                                         stderr=subprocess.STDOUT)
            for _ in range(150):
                if os.path.ismount(self.mnt):
                    self.how = 'io_uring' if 'io_uring' in opts else '/dev/fuse'
                    return
                if self.proc.poll() is not None:
                    break
                time.sleep(0.1)
            raise RuntimeError(f'{binary} did not mount (its log: {self.logf.name})')
        except BaseException:
            self.close()
            raise

    def empty(self):
        for name in os.listdir(self.src):
            os.unlink(os.path.join(self.src, name))

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            subprocess.run(['umount', self.mnt], stderr=subprocess.DEVNULL)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.logf.close()
        if os.path.isdir(self.mnt) and not os.path.ismount(self.mnt):
            os.rmdir(self.mnt)
        shutil.rmtree(self.src, ignore_errors=True)


def uring_switch_on():
    try:
        with open('/sys/module/fuse/parameters/enable_uring') as f:
            return f.read().strip() == 'Y'
    except OSError:
        return False


def one_size(args, size, rows):
    pool = Pool(args.daemon, args.work, args.logdir or args.work, f'scale-{size}')
    try:
        return measure(args, pool, size, rows)
    finally:
        pool.close()


def measure(args, pool, size, rows):
    rawdir = tempfile.mkdtemp(prefix='poolbench-scale-probe-', dir='/dev/shm')
    ref = None
    try:
        os.chmod(rawdir, 0o1777)
        if args.ref:
            try:
                ref = RefFs(args.ref, args.work, args.logdir or args.work, f'scale-ref-{size}')
            except (OSError, RuntimeError) as e:
                say(f'fuse-ref left out: {e}')
        measure_in(args, pool, size, rows, rawdir, ref)
    finally:
        if ref:
            ref.close()
        shutil.rmtree(rawdir, ignore_errors=True)


def measure_in(args, pool, size, rows, rawdir, ref):
    """measure() with rawdir, a folder of raw tmpfs every user may create in (the raw probes),
    and ref, a RefFs or None."""
    mnt, per_user = pool.mnt, size // len(USERS)
    say(f'--- {size} entries: {pool.line}')

    def row(test, unit, target, value, note=''):
        rows.append({'size': size, 'test': test, 'unit': unit, 'target': target,
                     'value': value, 'note': note})

    rss0 = rss_kib(pool.proc.pid)
    kids = [start_as_user(uid, lambda u=uid: (make_tree(user_top(mnt, u), True),
                                              create_files(user_top(mnt, u), 0, per_user))[1])
            for uid in USERS]
    fill = max(finish(k) for k in kids)
    entries = len(USERS) * (per_user + FOLDERS + 1)
    rss = rss_kib(pool.proc.pid)
    say(f'fill: {entries} entries by {len(USERS)} users at once in {fill:.1f} s')
    row('fill', 'entries/s', 'pool', entries / fill, f'{len(USERS)} users at once')
    per_entry = (rss - rss0) * 1024 / entries
    say(f'daemon RSS: {rss0} KiB after the mount, {rss} KiB filled: {per_entry:.0f} B per entry')
    row('daemon RSS per entry', 'B', 'pool', per_entry)

    # Rounds of BATCH creates in a new folder, each removed (untimed) after it so that the pool
    # stays at its size; pool and raw in turn. The first round comes right after the fill, whose
    # aftermath slows the machine's creates for a moment, raw tmpfs's as much (a folder of 10^6
    # raw files takes creates as fast as an empty one once it has passed): it is a row of its own.
    # Every later round starts once the daemon is quiet: the last round's removal sends its
    # FORGETs in batches after `rm` returns, and they are that removal's work, not this round's.
    # A round is a few tenths of a second on a 2-CPU machine, so one round swings by a fifth
    # either way: the best round is the rate at this size, the median says how steady it was.
    best = None
    rates, raw_rates = [], []
    for k in range(RATE_ROUNDS):
        if k:
            settle(mnt)
        ops0 = daemon_ops(mnt)
        t_pool = as_user(USERS[0], create_batch, user_top(mnt, USERS[0]), BATCH, f'rate{k}')
        ops1 = daemon_ops(mnt)
        as_user(USERS[0], rm_folders, [os.path.join(user_top(mnt, USERS[0]), f'rate{k}')])
        t_raw = raw_batch(BATCH)
        say(f'create rate, round {k + 1}: {BATCH / t_pool:.0f}/s (raw tmpfs {BATCH / t_raw:.0f}/s)')
        if k == 0:
            row('create rate, first round', 'creates/s', 'pool', BATCH / t_pool,
                f'the {BATCH} creates right after the fill')
            row('create rate, first round', 'creates/s', 'raw', BATCH / t_raw)
        rates.append(BATCH / t_pool)
        raw_rates.append(BATCH / t_raw)
        if best is None or t_pool < best[0]:
            best = (t_pool, ops0, ops1)
    t_pool, ops0, ops1 = best
    # The removals' FORGETs come later, in batches: the next rows wait for them.
    settle(mnt)
    say(f'create rate: {BATCH / t_pool:.0f}/s (raw tmpfs {max(raw_rates):.0f}/s), best of '
        f'{RATE_ROUNDS} rounds')
    row('create rate', 'creates/s', 'pool', BATCH / t_pool,
        f'best of {RATE_ROUNDS} rounds of {BATCH} creates of one user')
    row('create rate', 'creates/s', 'raw', max(raw_rates), f'best of {RATE_ROUNDS} rounds')
    say(f'create rate, median round: {statistics.median(rates):.0f}/s (raw tmpfs '
        f'{statistics.median(raw_rates):.0f}/s)')
    row('create rate, median round', 'creates/s', 'pool', statistics.median(rates),
        f'median of the {RATE_ROUNDS} rounds')
    row('create rate, median round', 'creates/s', 'raw', statistics.median(raw_rates),
        f'median of the {RATE_ROUNDS} rounds')
    for op in ('create', 'lookup'):
        n, ns = ops_between(ops0, ops1, op)
        if n > 0:
            say(f'daemon time per {op.upper()} during the create rate: {ns / n / 1e3:.1f} us'
                f' ({n} requests)')
            row(f'daemon time per {op.upper()}', 'us', 'pool', ns / n / 1e3,
                f'{n} requests during the best round of the create rate')

    times = []
    ops0 = daemon_ops(mnt)
    for _ in range(STATS):
        t0 = time.perf_counter()
        os.getxattr(mnt, STAT)
        times.append((time.perf_counter() - t0) * 1e3)
    ops1 = daemon_ops(mnt)
    say(f'user.poolfs.stat: median {statistics.median(times):.3f} ms, worst {max(times):.3f} ms')
    row('user.poolfs.stat', 'ms', 'pool', statistics.median(times), f'median of {STATS}')
    # the daemon's own part: GETXATTR handler time (the counters' own read is one more)
    n, ns = ops_between(ops0, ops1, 'getxattr')
    n -= 1
    if n > 0:
        say(f'daemon time per GETXATTR of user.poolfs.stat: {ns / n / 1e3:.1f} us')
        row('daemon time per user.poolfs.stat', 'us', 'pool', ns / n / 1e3,
            f'{n} requests, with one read of user.poolfs.ops')
    folder = os.path.join(user_top(mnt, USERS[0]), 'd0')
    t = as_user(USERS[0], poolctl_ls, args.poolctl, folder)
    say(f'poolctl ls of a folder of {per_user // FOLDERS} entries: {t * 1e3:.1f} ms')
    row('poolctl ls of one folder', 'ms', 'pool', t * 1e3, f'{per_user // FOLDERS} entries in it')

    def create_rows(load, target, create):
        """The create+close probe's rows; its summary as text."""
        row(f'create+close worst, {load}', 'ms', target, create.get('max'),
            f'{create["n"]} samples')
        row(f'create+close p99, {load}', 'ms', target, create.get('p99'))
        row(f'create+close median, {load}', 'ms', target, create.get('median'))
        return (f'{create["n"]} samples, median {create.get("median", 0):.3f} ms, p99'
                f' {create.get("p99", 0):.3f}, worst {create.get("max", 0):.3f} ms')

    def report(load, create, removal, after=None, before=None):
        """The probes' rows under `load` from their samples (those begun in [after, before))."""
        create = summary(create, after, before)
        removal = summary(removal, after, before)
        say(f'{load:<22} create+close: {create_rows(load, "pool", create)}; removal:'
            f' {removal["n"]} samples, median {removal.get("median", 0):.3f} ms, worst'
            f' {removal.get("max", 0):.3f} ms')
        row(f'removal median, {load}', 'ms', 'pool', removal.get('median'),
            f'{removal["n"]} samples')
        row(f'removal worst, {load}', 'ms', 'pool', removal.get('max'))

    def report_handlers(load, handlers):
        """How many of the daemon's handlers took over 10 ms while `load` ran, and the slowest
        one's bucket: a worst create+close far above it was spent outside the daemon. The same
        for the waits to take the pool lock: a long one is work under the lock (or a holder
        off its CPU), which no request should wait for."""
        over, slowest = slow_handlers(handlers[0]['latency'], handlers[1]['latency'],
                                      10_000_000)
        waits, longest = slow_handlers(handlers[0]['lock_wait'], handlers[1]['lock_wait'],
                                       10_000_000)

        def bound(ns):
            return 'over 1000' if ns == math.inf else f'at most {ns / 1e6:g}'
        say(f'{"":<22} daemon: {over} handlers over 10 ms, the slowest {bound(slowest)} ms;'
            f' {waits} waits for the pool lock over 10 ms, the longest {bound(longest)} ms')
        row(f'daemon handlers over 10 ms, {load}', 'requests', 'pool', over)
        # inf: over the histogram's last bound, where no bucket bounds it
        row(f'slowest daemon handler, {load}', 'ms', 'pool', slowest / 1e6,
            'its histogram bucket\'s bound')
        row(f'pool lock waits over 10 ms, {load}', 'waits', 'pool', waits)
        row(f'longest pool lock wait, {load}', 'ms', 'pool', longest / 1e6,
            'its histogram bucket\'s bound')

    def report_raw(load, create, after=None, before=None, target='raw'):
        """report()'s create+close rows for raw tmpfs or, target 'fuse-ref', for `ref`."""
        say(f'{load:<22} create+close on {"raw tmpfs" if target == "raw" else target}: '
            f'{create_rows(load, target, summary(create, after, before))}')

    def no_load(stop):
        return None

    handlers = []
    report('no load', *under_load(mnt, no_load, args.load_seconds, handlers=handlers)[:2])
    report_handlers('no load', handlers)
    report_raw('no load', under_load(rawdir, no_load, args.load_seconds, raw=True)[0])
    if ref:
        say(f'(fuse-ref: libfuse\'s passthrough_hp as root, {ref.how})')
        report_raw('no load', under_load(ref.mnt, no_load, args.load_seconds, raw=True)[0],
                   target='fuse-ref')

    def stats(where, raw=False):
        """The stat loop as a load on `where` (statvfs on raw tmpfs)."""
        def load(stop):
            child = start_as_user(0, stat_loop, where, stop, raw)
            time.sleep(args.load_seconds)
            return child
        return load

    handlers = []
    create, removal, child = under_load(mnt, stats(mnt), args.load_seconds, handlers=handlers)
    n = finish(child)
    say(f'(root read user.poolfs.stat {n} times meanwhile)')
    report('stat loop', create, removal)
    report_handlers('stat loop', handlers)

    create, _, child = under_load(rawdir, stats(rawdir, True), args.load_seconds, raw=True)
    finish(child)
    report_raw('stat loop', create)

    def kill(where, raw=False):
        """MAPPERS mappers in `where` killed at once, as a load."""
        def load(stop):
            time.sleep(0.5)
            return lean_mappers_killed(MAPPER_UID, where, raw)
        return load

    # Two loads in one: the mappers' start (each creates, sizes, maps and fills a file in the
    # root at once: a storm of creates in one folder) and, from the kill on, their deaths. A
    # sample counts where it began.
    handlers = []
    create, removal, (t_kill, took) = under_load(mnt, kill(mnt), args.load_seconds,
                                                 handlers=handlers)
    say(f'({MAPPERS} mappers killed: every name gone {took * 1e3:.0f} ms after the kill)')
    row('killed mappers: all names gone', 'ms', 'pool', took * 1e3, f'{MAPPERS} mappers')
    report('mappers start', create, removal, before=t_kill)
    report('mappers killed', create, removal, after=t_kill)
    report_handlers('mappers start and killed', handlers)

    create, _, (t_kill, _) = under_load(rawdir, kill(rawdir, True), args.load_seconds, raw=True)
    report_raw('mappers start', create, before=t_kill)
    report_raw('mappers killed', create, after=t_kill)
    for name in os.listdir(rawdir):
        os.unlink(os.path.join(rawdir, name))
    if ref:
        create, _, (t_kill, _) = under_load(ref.mnt, kill(ref.mnt, True), args.load_seconds,
                                            raw=True)
        report_raw('mappers start', create, before=t_kill, target='fuse-ref')
        report_raw('mappers killed', create, after=t_kill, target='fuse-ref')
        ref.empty()

    remove = min(REMOVE, per_user)
    folders = max(1, round(FOLDERS * remove / per_user))
    remove = per_user * folders // FOLDERS
    paths = [os.path.join(user_top(mnt, USERS[0]), f'd{k}') for k in range(folders)]

    def rm(stop):
        return as_user(USERS[0], rm_folders, paths)

    handlers = []
    create, removal, t_rm = under_load(mnt, rm, args.load_seconds, handlers=handlers)
    top = raw_tree(remove)
    try:
        create_raw, _, t_raw = under_load(rawdir, lambda stop: rm_folders([top]),
                                          args.load_seconds, raw=True)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    say(f'rm -rf of {remove} files: {t_rm:.2f} s (raw tmpfs {t_raw:.2f} s)')
    row('rm -rf', 's', 'pool', t_rm, f'{remove} files')
    row('rm -rf', 's', 'raw', t_raw, f'{remove} files')
    report('rm -rf', create, removal)
    report_handlers('rm -rf', handlers)
    report_raw('rm -rf', create_raw)
    if ref:
        # passthrough_hp keeps a descriptor open per inode it knows, and this may be a machine
        # whose hard limit root cannot raise: at most REF_REMOVE files there.
        ref_remove = min(remove, REF_REMOVE)
        try:
            top = raw_tree(ref_remove, ref.mnt)
            try:
                create_ref, _, t_ref = under_load(ref.mnt, lambda stop: rm_folders([top]),
                                                  args.load_seconds, raw=True)
            finally:
                shutil.rmtree(top, ignore_errors=True)
            say(f'rm -rf of {ref_remove} files on fuse-ref: {t_ref:.2f} s')
            row('rm -rf', 's', 'fuse-ref', t_ref, f'{ref_remove} files')
            report_raw('rm -rf', create_ref, target='fuse-ref')
        except (OSError, RuntimeError, subprocess.SubprocessError) as e:
            say(f'rm -rf on fuse-ref left out: {e}')

    left = entries + BATCH + 1 - remove - folders  # the rate batch and its folder stay
    t = pool.unmount()
    say(f'unmount with {left} entries: {t * 1e3:.0f} ms')
    row('unmount', 'ms', 'pool', t * 1e3, f'{left} entries')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--daemon', required=True)
    ap.add_argument('--poolctl', required=True)
    ap.add_argument('--work', required=True)
    ap.add_argument('--sizes', required=True)
    ap.add_argument('--logdir')
    ap.add_argument('--csv')
    ap.add_argument('--ref', help="libfuse's passthrough_hp: the fuse-ref rows")
    ap.add_argument('--load-seconds', type=float, default=LOAD_SECONDS,
                    help='how long the probes run under each load, at least')
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit('bench_scale.py: needs root (it mounts and switches uids)')
    sizes = [int(s) for s in args.sizes.split(',')]
    if any(s < len(USERS) * FOLDERS for s in sizes):
        sys.exit(f'bench_scale.py: sizes of at least {len(USERS) * FOLDERS}')
    # The users run a copy of poolctl, with its libpoolfs beside it ($ORIGIN): the build tree may
    # be root's alone (a clone in /root).
    bindir = tempfile.mkdtemp(prefix='poolbench-scale-bin-', dir='/dev/shm')
    os.chmod(bindir, 0o755)
    for f in (args.poolctl, os.path.join(os.path.dirname(args.poolctl), 'libpoolfs.so.0')):
        shutil.copy2(f, bindir)
    args.poolctl = os.path.join(bindir, os.path.basename(args.poolctl))
    rows, rc = [], 0
    try:
        for size in sizes:
            try:
                one_size(args, size, rows)
            except (OSError, RuntimeError, subprocess.SubprocessError) as e:
                print(f'bench_scale.py: {size} entries: {e}', file=sys.stderr, flush=True)
                rc = 1
    finally:
        shutil.rmtree(bindir, ignore_errors=True)
    if args.csv:
        with open(args.csv, 'a') as out:
            for r in rows:
                value = '' if r['value'] is None else f'{r["value"]:.6g}'
                note = f'{r["size"]} entries' + (f'; {r["note"]}' if r['note'] else '')
                out.write(f'scale,"{r["test"]}",{r["unit"]},{r["target"]},{value},,,,1,"{note}"\n')
    return rc


if __name__ == '__main__':
    if sys.argv[1:2] == ['--mappers']:  # lean_mappers_killed's child: [kill time, seconds]
        print(json.dumps(as_user(int(sys.argv[2]), mappers_killed, sys.argv[3],
                                 sys.argv[4:] == ['--raw'])))
        sys.exit(0)
    sys.exit(main())
