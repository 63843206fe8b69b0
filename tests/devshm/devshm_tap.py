"""What the devshm suite's Python tests share: TAP output, the names of /dev/shm, and jobs run in a
session of their own that are SIGKILLed whole. Run by Debian's /usr/bin/python3 through devshm_ns,
which sets DEVSHM_KIND (pool or tmpfs), DEVSHM_DATAPATH, DEVSHM_WORK and DEVSHM_NAMES."""
import os
import signal
import subprocess
import sys
import time

SHM = '/dev/shm'
ON_POOL = os.environ.get('DEVSHM_KIND') == 'pool'
BOUND = 60.0        # seconds: the bound of every wait (never a timing check)


class Tap:
    """TAP lines on stdout, the plan last; diagnostics as comments."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, desc, why=''):
        self.n += 1
        print('%s %d - %s' % ('ok' if cond else 'not ok', self.n, desc), flush=True)
        if not cond:
            self.failed += 1
            if why:
                self.diag(why)
        return cond

    def diag(self, text):
        for line in str(text).splitlines():
            print('# ' + line, flush=True)

    def done(self):
        print('1..%d' % self.n, flush=True)
        sys.exit(1 if self.failed else 0)


def skip_all(why):
    print('1..0 # SKIP ' + why, flush=True)
    sys.exit(0)


def names():
    """The entries of /dev/shm (as this user sees them), sorted."""
    return sorted(os.listdir(SHM))


def note(entries):
    """Tell devshm_ns about /dev/shm entries this test saw (it checks the machine has none)."""
    path = os.environ.get('DEVSHM_NAMES')
    if path:
        with open(path, 'a') as f:
            for e in entries:
                f.write(e + '\n')


def wait_for(pred, bound=BOUND):
    """Poll pred() until it is true or `bound` seconds have passed; its last value."""
    end = time.monotonic() + bound
    while not pred():
        if time.monotonic() > end:
            return pred()
        time.sleep(0.05)
    return True


def session_pids(sid):
    """The live processes of session sid."""
    out = []
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % d) as f:
                fields = f.read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != 'Z':
            out.append(int(d))
    return out


def start_job(argv, env=None):
    """argv as a job: a session of its own (so autohold=session holds what it makes until it
    ends), output to our stdout as TAP comments."""
    return subprocess.Popen(argv, start_new_session=True, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def kill_job(job):
    """SIGKILL every process of the job's session (by pid, again until none is left), reap the
    job; its output is returned. True in [1] if the session is empty within the bound."""
    def sweep():
        left = session_pids(job.pid)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return not left
    gone = wait_for(sweep)
    out = job.communicate(timeout=BOUND)[0].decode(errors='replace')
    return out, gone


def require_devshm_ns():
    """Skip everything unless run by devshm_ns, which says what /dev/shm is (DEVSHM_KIND)."""
    if os.environ.get('DEVSHM_KIND') not in ('pool', 'tmpfs'):
        skip_all('DEVSHM_KIND is not set: run me through devshm_ns')


def start_reporting_job(t, argv, report, what):
    """Start argv as a job (start_job) that writes the names it made to `report`: (job, the names
    it made, less what /dev/shm held before), once it has. If it never reports, the job is
    killed, the test says `what` did not run, and the names are None."""
    before = set(names())     # ours, not the job's
    job = start_job(argv)
    made = read_report(report, job)
    if made is None:
        out, _ = kill_job(job)
        t.ok(False, what + ' ran', out)
        return job, None
    made = [n for n in made if n not in before]
    note(made)
    return job, made


def expect_killed_job_cleaned(t, job, made, processes, pool_left, tmpfs_left):
    """SIGKILL the job (kill_job): every process of it (`processes` names them) must be gone; on
    the pool nothing of `made` may be left once its session has ended (`pool_left` says so), on
    a plain tmpfs all of it stays (`tmpfs_left`, with %s for the names left)."""
    _, gone = kill_job(job)
    t.ok(gone, 'every process of the job (%s) is gone after SIGKILL' % processes)
    if ON_POOL:
        ok = wait_for(lambda: not set(made) & set(names()))
        t.ok(ok, 'pool: ' + pool_left, 'left: %s' % sorted(set(made) & set(names())))
    else:
        left = sorted(set(made) & set(names()))
        t.ok(left == sorted(made), 'tmpfs: ' + tmpfs_left % ' '.join(left),
             'made %s, left %s' % (made, left))


def read_report(path, job, bound=BOUND * 3):
    """The lines of the report file a job writes whole (rename), once it is there; None if the job
    ended first or the bound passed."""
    if not wait_for(lambda: os.path.exists(path) or job.poll() is not None, bound):
        return None
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return f.read().split()


def write_report(path, lines):
    """For the job's side: the report, written whole."""
    tmp = '%s.tmp.%d' % (path, os.getpid())
    with open(tmp, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    os.rename(tmp, path)
