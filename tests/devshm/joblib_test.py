"""The devshm suite's joblib check (docs/devshm.md): unmodified joblib (Debian's python3-joblib, its
loky backend) with no JOBLIB_TEMP_FOLDER, so it picks /dev/shm itself, on a /dev/shm that is a pool
(or the tmpfs control).

  1. Parallel(n_jobs=2, max_nbytes='1M') over slices of a 4 MiB array: every sum right, every task
     got a memmap of a file in /dev/shm/joblib_memmapping_folder_*, and two workers (neither of
     them this process) ran at once: each task waits, bounded, until two workers have checked in.
     joblib quietly falls back to serial mode when loky's semaphores fail, which this would see.
     While they run, loky's semaphores (sem.loky-*) are in /dev/shm.
  2. The same job in a session of its own, SIGKILLed whole (main process, workers, resource
     tracker) while its tasks run: on the pool neither the memmapping folder nor a sem.loky-*
     entry is left once the session has ended; on tmpfs both stay.
Run by Debian's /usr/bin/python3 through devshm_ns: joblib_test.py (the tests) or joblib_test.py
job FLAGS REPORT (the job of 2)."""
import importlib.util
import os
import sys
import time

os.environ.pop('JOBLIB_TEMP_FOLDER', None)      # joblib chooses: /dev/shm when it has 2 GB free

import devshm_tap as dt  # noqa: E402  (after the environment is set)

N = 512 * 1024          # float64: 4 MiB, over max_nbytes, so joblib memmaps it
CHUNK = 128 * 1024
MEMFOLDER = 'joblib_memmapping_folder_'


def task(a, lo, hi, flags):
    """Sum a slice once two workers have checked in (a bounded wait: a single process, as in
    joblib's serial fallback, ends it unmet)."""
    open(os.path.join(flags, str(os.getpid())), 'w').close()
    met = dt.wait_for(lambda: len(os.listdir(flags)) >= 2)
    seen = dt.names()
    return (float(a[lo:hi].sum()), type(a).__name__, getattr(a, 'filename', None), os.getpid(),
            met, seen)


def expected(lo, hi):
    return float((lo + hi - 1) * (hi - lo) // 2)


def check_parallel(t):
    import numpy as np
    from joblib import Parallel, delayed

    flags = os.path.join(os.environ.get('DEVSHM_WORK', '/tmp'), 'joblib-flags')
    os.makedirs(flags, exist_ok=True)
    a = np.arange(N, dtype=np.float64)
    res = Parallel(n_jobs=2, max_nbytes='1M')(
        delayed(task)(a, lo, lo + CHUNK, flags) for lo in range(0, N, CHUNK))
    sums_ok = all(r[0] == expected(lo, lo + CHUNK) for r, lo in zip(res, range(0, N, CHUNK)))
    t.ok(sums_ok and len(res) == N // CHUNK, 'joblib: %d sums right' % len(res))
    files = sorted({r[2] for r in res if r[2]})
    kinds = sorted({r[1] for r in res})
    in_shm = files and all(f.startswith(os.path.join(dt.SHM, MEMFOLDER)) for f in files)
    t.ok(kinds == ['memmap'] and in_shm,
         'joblib: every task got a memmap in /dev/shm/%s* (%s)' % (MEMFOLDER, ' '.join(files)),
         'kinds %s, files %s' % (kinds, files))
    pids = sorted({r[3] for r in res})
    t.ok(len(pids) == 2 and os.getpid() not in pids and all(r[4] for r in res),
         'joblib: 2 workers ran at once (%s), not this process (%d)' % (pids, os.getpid()),
         'met: %s' % [r[4] for r in res])
    seen = sorted(set().union(*(r[5] for r in res)))
    dt.note(seen)
    sems = [n for n in seen if n.startswith('sem.loky-')]
    t.ok(sems, "joblib: loky's semaphores are in /dev/shm while it runs (%s)" % ' '.join(sems),
         'seen: %s' % seen)


# ---- the job that is killed ------------------------------------------------------------------

def stuck(a, i, flags, report):
    """A task that never ends; once both workers run one, the report says what /dev/shm holds."""
    open(os.path.join(flags, str(os.getpid())), 'w').close()
    if dt.wait_for(lambda: len(os.listdir(flags)) >= 2, dt.BOUND * 3):
        dt.write_report(report, dt.names())
    time.sleep(3600)
    return float(a[i])


def job(flags, report):
    import numpy as np
    from joblib import Parallel, delayed

    a = np.ones(N)
    Parallel(n_jobs=2, max_nbytes='1M')(delayed(stuck)(a, i, flags, report) for i in range(4))


def check_killed_job(t):
    work = os.environ.get('DEVSHM_WORK', '/tmp')
    flags = os.path.join(work, 'joblib-job-flags')
    report = os.path.join(work, 'joblib-job.report')
    os.makedirs(flags, exist_ok=True)
    job_proc, made = dt.start_reporting_job(
        t, [sys.executable, os.path.abspath(__file__), 'job', flags, report], report,
        'the joblib job')
    if made is None:
        return
    folders = [n for n in made if n.startswith(MEMFOLDER)]
    sems = [n for n in made if n.startswith('sem.loky-')]
    t.ok(folders and sems and len(os.listdir(flags)) >= 2,
         'the job runs 2 workers with a memmapping folder and semaphores in /dev/shm: %s'
         % ' '.join(made))
    dt.expect_killed_job_cleaned(
        t, job_proc, made, 'main, loky workers, resource tracker',
        'no memmapping folder and no sem.loky-* left once the session has ended',
        'the killed job leaves its memmapping folder and semaphores (%s)')


def main():
    dt.require_devshm_ns()
    missing = [m for m in ('joblib', 'numpy') if importlib.util.find_spec(m) is None]
    if missing:
        dt.skip_all('%s cannot be imported (Debian: python3-joblib, python3-numpy)' % missing)
    t = dt.Tap()
    check_parallel(t)
    check_killed_job(t)
    t.done()


if __name__ == '__main__':
    if len(sys.argv) == 4 and sys.argv[1] == 'job':
        job(sys.argv[2], sys.argv[3])
    else:
        main()
