"""Shared by the python suite: mount a pool with the build's daemon for one test, and unmount it
and stop the daemon (by pid) whatever happens. Run by Debian's /usr/bin/python3 (python3-numpy,
python3-joblib); a test exits 0 on success, 1 with a message on failure, 77 to skip."""
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77


def fail(msg):
    print('FAIL: ' + msg, file=sys.stderr)
    sys.exit(1)


def wait_for(what, pred, bound=60.0):
    """Poll pred() until true; fail after `bound` seconds (a bound against hanging, not a timing
    check)."""
    end = time.monotonic() + bound
    while not pred():
        if time.monotonic() > end:
            fail('gave up waiting for: ' + what)
        time.sleep(0.05)


def entries(root):
    """Every path below root, relative, sorted."""
    out = []
    for d, dirs, files in os.walk(root):
        out += [os.path.relpath(os.path.join(d, n), root) for n in dirs + files]
    return sorted(out)


@contextlib.contextmanager
def pool(options):
    """Mount a pool with `options` (after backing=) on a fresh folder; yield its path."""
    daemon = os.environ.get('POOLFS_BIN')
    if not daemon:
        fail('POOLFS_BIN is not set')
    tmp = tempfile.mkdtemp(prefix='poolfs-py.')
    mnt = os.path.join(tmp, 'pool')
    os.mkdir(mnt)
    opts = 'backing=/dev/shm' + (',' + options if options else '')
    proc = subprocess.Popen([daemon, '-f', '-o', opts, mnt], stderr=subprocess.PIPE)
    try:
        wait_for('the mount', lambda: os.path.ismount(mnt) or proc.poll() is not None)
        if proc.poll() is not None:
            fail('the daemon exited %d: %s' % (proc.returncode, proc.stderr.read().decode()))
        yield mnt
    finally:
        if os.path.ismount(mnt):
            subprocess.call(['fusermount3', '-u', mnt])
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if os.path.ismount(mnt):
            subprocess.call(['umount', '-l', mnt])
        shutil.rmtree(tmp, ignore_errors=True)
