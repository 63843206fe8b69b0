"""Unmodified joblib (Debian's python3-joblib) with JOBLIB_TEMP_FOLDER on a poolfs pool.

Run by test_joblib.c as /usr/bin/python3 joblib_run.py POOL UPFD DOWNFD, in a session of its own
(the caller did setsid()), so with the default autohold=session every file joblib dumps is held
until this process exits.

Two batches of Parallel(n_jobs=2, max_nbytes='1M') in one `with Parallel(...)` block, each task
summing a slice of a 4 MiB numpy array (joblib memmaps it into the pool). Between the batches the
script writes b"P" to UPFD and waits for one byte on DOWNFD, so the test can look at the pool while
joblib's dump is closed by its creator and idle; b"K" from the test means "stop here" (the test
then kills us). Output lines start with "# " (they end up in a TAP stream's comments).
Exit 0 when every sum is right and the workers saw a memmap under POOL, 1 otherwise.
"""
import os
import sys

import numpy as np
from joblib import Parallel, delayed

POOL = sys.argv[1]
UP = int(sys.argv[2])
DOWN = int(sys.argv[3])
N = 512 * 1024          # float64: 4 MiB, well over max_nbytes, so joblib memmaps it
CHUNK = 64 * 1024


def say(msg):
    print("# joblib_run[%d]: %s" % (os.getpid(), msg), flush=True)


def tree(root):
    out = []
    for d, dirs, files in os.walk(root):
        for x in dirs:
            out.append(os.path.relpath(os.path.join(d, x), root) + "/")
        for f in files:
            out.append(os.path.relpath(os.path.join(d, f), root))
    return sorted(out)


def part_sum(a, lo, hi):
    # What the worker got: a memmap of a file in the pool, or a pickled copy.
    name = getattr(a, "filename", None)
    return float(a[lo:hi].sum()), type(a).__name__, name, os.getpid()


def expected(lo, hi):
    # sum of the integers lo..hi-1, exact in float64 at this size
    return float((lo + hi - 1) * (hi - lo) // 2)


def run_batch(parallel, a, label):
    ok = True
    res = parallel(delayed(part_sum)(a, i, i + CHUNK) for i in range(0, N, CHUNK))
    files = set()
    workers = set()
    for i, (s, kind, name, wpid) in enumerate(res):
        lo = i * CHUNK
        want = expected(lo, lo + CHUNK)
        workers.add(wpid)
        if s != want:
            say("%s: slice %d sum %r, want %r" % (label, i, s, want))
            ok = False
        if kind != "memmap" or not name or not os.path.realpath(name).startswith(
                os.path.realpath(POOL) + os.sep):
            say("%s: slice %d came as %s %r, not a memmap in the pool" % (label, i, kind, name))
            ok = False
        elif name:
            files.add(os.path.relpath(name, POOL))
    say("%s: %d tasks in workers %s, memmapped files %s" % (label, len(res), sorted(workers),
                                                           sorted(files)))
    if os.getpid() in workers:
        say("%s: tasks ran in the parent, not in 2 workers" % label)
        ok = False
    return ok


def main():
    if os.environ.get("JOBLIB_TEMP_FOLDER") != POOL:
        say("JOBLIB_TEMP_FOLDER is %r, want %r" % (os.environ.get("JOBLIB_TEMP_FOLDER"), POOL))
        return 1
    say("sid %d, joblib %s, numpy %s" % (os.getsid(0), __import__("joblib").__version__,
                                         np.__version__))
    a = np.arange(N, dtype=np.float64)
    ok = True
    with Parallel(n_jobs=2, max_nbytes="1M") as parallel:
        ok &= run_batch(parallel, a, "batch 1")
        say("pool between batches: %s" % tree(POOL))
        os.write(UP, b"P")
        cmd = os.read(DOWN, 1)
        if cmd != b"G":
            say("told to stop (%r): waiting to be killed" % cmd)
            os.read(DOWN, 1)
            return 3
        ok &= run_batch(parallel, a, "batch 2")
    say("pool after the Parallel block: %s" % tree(POOL))
    total = float(a.sum())
    if total != expected(0, N):
        ok = False
    say("done: %s" % ("results correct" if ok else "WRONG"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
