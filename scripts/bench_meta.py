#!/usr/bin/env python3
"""The metadata loops of `scripts/bench --meta`: per target, 20000 stat() of one file, and tar -x
of a tarball then rm -r; prints the median over the repetitions, targets interleaved in each
repetition, and each median relative to the first target's (raw tmpfs).

    bench_meta.py REPS TARBALL NAME=DIR...
"""
import os
import shutil
import statistics
import subprocess
import sys
import time

STATS = 20000


def one_rep(name, path, tarball, results):
    """One repetition on one target: the stat loop, then tar -x and rm -r."""
    f = os.path.join(path, 'meta-stat')
    open(f, 'w').close()  # kept by the session's autohold until the unlink below
    t0 = time.perf_counter()
    for _ in range(STATS):
        os.stat(f)
    results[name]['stat'].append((time.perf_counter() - t0) / STATS * 1e6)
    os.unlink(f)
    d = os.path.join(path, 'meta-tar')
    os.mkdir(d)
    t0 = time.perf_counter()
    subprocess.run(['tar', '-xf', tarball, '-C', d], check=True)
    shutil.rmtree(d)
    results[name]['tar'].append(time.perf_counter() - t0)


def main(argv):
    if len(argv) < 4 or any('=' not in t for t in argv[3:]):
        sys.exit('usage: bench_meta.py REPS TARBALL NAME=DIR...')
    reps, tarball, targets = int(argv[1]), argv[2], [t.split('=', 1) for t in argv[3:]]
    results = {name: {'stat': [], 'tar': []} for name, _ in targets}
    for _ in range(reps):
        for name, path in targets:
            one_rep(name, path, tarball, results)
    raw = results[targets[0][0]]
    print('%-28s %12s %8s %12s %8s' % ('target', 'stat us/op', 'x raw', 'tar+rm s', 'x raw'))
    for name, _ in targets:
        s, t = statistics.median(results[name]['stat']), statistics.median(results[name]['tar'])
        print('%-28s %12.2f %8.2f %12.3f %8.2f' % (name, s, s / statistics.median(raw['stat']),
                                                 t, t / statistics.median(raw['tar'])))


if __name__ == '__main__':
    main(sys.argv)
