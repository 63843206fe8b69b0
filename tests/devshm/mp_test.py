"""The devshm suite's Python check (docs/devshm.md): the standard library's multiprocessing and
multiprocessing.shared_memory, unmodified, on a /dev/shm that is a pool (or the tmpfs control).

  1. For each start method (fork, spawn, forkserver): a Lock guarding a shared Value across 4
     processes, a Queue, a Pool whose 2 workers meet at a Barrier (so both really run), a Manager's
     dict and Lock, and a SharedMemory block that a child maps by name, reads and writes. With
     spawn and forkserver the Lock's named semaphore (sem.mp-*) must be in /dev/shm while it lives.
  2. A job (a session of its own) with a spawn Lock, a Queue and a SharedMemory block mapped by a
     child is SIGKILLed whole, resource tracker included, so nothing of Python cleans up: on the
     pool its sem.mp-* and psm_* entries go once the session has ended; on tmpfs they stay.
Run by Debian's /usr/bin/python3 through devshm_ns: mp_test.py (the tests) or mp_test.py job
REPORT (the job of 2)."""
import multiprocessing as mp
import os
import sys
import time
from multiprocessing import shared_memory

import devshm_tap as dt

SEG = 1 << 20
PATTERN = bytes(range(256)) * (SEG // 256)


def add_under_lock(lock, counter, n):
    for _ in range(n):
        with lock:
            counter.value += 1


def put_squares(q, n):
    for i in range(n):
        q.put(i * i)


BARRIER = None


def pool_init(barrier):
    global BARRIER
    BARRIER = barrier


def meet(x):
    """A pool task that returns only once another worker runs the other task."""
    BARRIER.wait(timeout=dt.BOUND)
    return x * x, os.getpid()


def manager_put(d, lock, i):
    with lock:
        d[i] = i * i


def shm_child(name):
    s = shared_memory.SharedMemory(name)
    ok = bytes(s.buf[:SEG]) == PATTERN
    s.buf[0] = 0xAB
    s.close()
    sys.exit(0 if ok else 1)


def joined(procs):
    for p in procs:
        p.join(timeout=dt.BOUND)
    return [p.exitcode for p in procs]


def check_method(t, method):
    ctx = mp.get_context(method)
    lock = ctx.Lock()
    counter = ctx.Value('i', 0, lock=False)
    if method != 'fork':
        # fork's semaphores are unlinked at once; the others keep their name for their children.
        sems = [n for n in dt.names() if n.startswith('sem.mp-')]
        dt.note(sems)
        t.ok(sems, '%s: the Lock is a named semaphore in /dev/shm (%s)' % (method, ' '.join(sems)))
    procs = [ctx.Process(target=add_under_lock, args=(lock, counter, 500)) for _ in range(4)]
    for p in procs:
        p.start()
    codes = joined(procs)
    t.ok(codes == [0] * 4 and counter.value == 2000,
         '%s: Lock and Value: 4 processes x 500 increments' % method,
         'exit codes %s, counter %d' % (codes, counter.value))

    q = ctx.Queue()
    p = ctx.Process(target=put_squares, args=(q, 100))
    p.start()
    got = [q.get(timeout=dt.BOUND) for _ in range(100)]
    codes = joined([p])
    t.ok(codes == [0] and got == [i * i for i in range(100)], '%s: Queue across processes' % method)

    barrier = ctx.Barrier(2)
    with ctx.Pool(2, initializer=pool_init, initargs=(barrier,)) as pool:
        res = pool.map(meet, range(2), chunksize=1)
    pids = {pid for _, pid in res}
    t.ok([r for r, _ in res] == [0, 1] and len(pids) == 2 and os.getpid() not in pids,
         '%s: Pool: 2 workers at once (met at a Barrier)' % method, 'results %s' % res)

    with ctx.Manager() as m:
        d = m.dict()
        mlock = m.Lock()
        procs = [ctx.Process(target=manager_put, args=(d, mlock, i)) for i in range(3)]
        for p in procs:
            p.start()
        codes = joined(procs)
        t.ok(codes == [0] * 3 and dict(d) == {0: 0, 1: 1, 2: 4}, '%s: Manager dict and Lock' % method)

    s = shared_memory.SharedMemory(create=True, size=SEG)
    dt.note([s.name.lstrip('/')])
    s.buf[:SEG] = PATTERN
    there = os.path.exists(os.path.join(dt.SHM, s.name.lstrip('/')))
    p = ctx.Process(target=shm_child, args=(s.name,))
    p.start()
    codes = joined([p])
    ok = there and codes == [0] and s.buf[0] == 0xAB
    s.close()
    s.unlink()
    gone = not os.path.exists(os.path.join(dt.SHM, s.name.lstrip('/')))
    t.ok(ok and gone, '%s: SharedMemory mapped by name in a child, read and written' % method,
         'in /dev/shm: %s, child exit %s, unlinked: %s' % (there, codes, gone))


# ---- the job that is killed ------------------------------------------------------------------

def job_child(lock, name, q):
    s = shared_memory.SharedMemory(name)
    with lock:
        s.buf[1] = 1
    q.put('attached')
    time.sleep(3600)


def job(report):
    ctx = mp.get_context('spawn')
    lock = ctx.Lock()
    q = ctx.Queue()
    s = shared_memory.SharedMemory(create=True, size=SEG)
    p = ctx.Process(target=job_child, args=(lock, s.name, q))
    p.start()
    q.get(timeout=dt.BOUND)
    dt.write_report(report, dt.names())
    time.sleep(3600)


def check_killed_job(t):
    report = os.path.join(os.environ.get('DEVSHM_WORK', '/tmp'), 'mp-job.report')
    job_proc, made = dt.start_reporting_job(
        t, [sys.executable, os.path.abspath(__file__), 'job', report], report,
        'the multiprocessing job')
    if made is None:
        return
    sems = [n for n in made if n.startswith('sem.mp-')]
    segs = [n for n in made if n.startswith('psm_')]
    t.ok(sems and segs, 'the job made named semaphores and a segment in /dev/shm: %s' % ' '.join(made))
    dt.expect_killed_job_cleaned(
        t, job_proc, made, 'main, child, resource tracker',
        'nothing of the killed job is left once its session has ended',
        'the killed job leaves its entries (%s)')


def main():
    dt.require_devshm_ns()
    t = dt.Tap()
    for method in ('fork', 'spawn', 'forkserver'):
        check_method(t, method)
    check_killed_job(t)
    t.done()


if __name__ == '__main__':
    if len(sys.argv) == 3 and sys.argv[1] == 'job':
        job(sys.argv[2])
    else:
        main()
