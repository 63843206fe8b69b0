"""A joblib job killed with SIGKILL in the middle of Parallel (its main process, loky workers and
resource tracker: the whole process group we started, by pid) leaves the pool empty once its
processes are gone. The pool uses autohold=process, so nothing outlives the job's processes."""
import glob
import os
import signal
import subprocess
import sys

from pooltest import entries, fail, pool, wait_for

JOB = '''
import os, sys, time
import numpy as np
from joblib import Parallel, delayed

def slow(a, i):
    open(os.path.join(sys.argv[1], 'started-%d' % os.getpid()), 'w').close()
    time.sleep(600)
    return float(a[i].sum())

a = np.ones((1024, 1024))
Parallel(n_jobs=2, max_nbytes='1M')(delayed(slow)(a, i) for i in range(4))
'''


def group_members(pgid):
    """Pids of the live processes in process group pgid."""
    out = []
    for st in glob.glob('/proc/[0-9]*/stat'):
        try:
            fields = open(st).read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != 'Z':
            out.append(int(st.split('/')[2]))
    return out


with pool('autohold=process') as p:
    env = dict(os.environ, JOBLIB_TEMP_FOLDER=p)
    flags = os.path.join(p, 'flags')
    os.mkdir(flags)
    os.setxattr(flags, 'user.poolfs.hold', b'pin')   # ours, released below
    job = subprocess.Popen([sys.executable, '-c', JOB, flags], env=env, start_new_session=True)
    pids = set()
    try:
        wait_for('two tasks to run', lambda: len(os.listdir(flags)) >= 2, bound=180)
        if not any(e.startswith('joblib_memmapping_folder_') for e in entries(p)):
            fail('joblib did not memmap into the pool: %s' % entries(p))
        pids = set(group_members(job.pid))
        os.killpg(job.pid, signal.SIGKILL)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
        job.wait()
        wait_for('every process of the job to be gone', lambda: group_members(job.pid) == [])
        # loky's POSIX semaphores live in /dev/shm, not in the pool: remove the killed job's.
        for pid in pids | {job.pid}:
            for sem in glob.glob('/dev/shm/sem.loky-%d-*' % pid):
                os.unlink(sem)
    os.removexattr(flags, 'user.poolfs.hold')
    wait_for('the pool to empty', lambda: entries(p) == [])
print('ok', file=sys.stderr)
