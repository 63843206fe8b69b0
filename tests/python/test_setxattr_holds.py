"""docs/python.md: holds with os.setxattr/os.removexattr, and what
user.poolfs.refs says about them."""
import errno
import os
import subprocess
import sys

from pooltest import fail, pool, wait_for


def refs(path):
    return os.getxattr(path, 'user.poolfs.refs').decode()


with pool('autohold=none') as p:
    job = os.path.join(p, 'job')
    os.mkdir(job)
    os.setxattr(job, 'user.poolfs.hold', b'pin')
    with open(os.path.join(job, 'a'), 'wb') as f:
        f.write(b'x' * 100)
    if 'hold pin uid=%d' % os.getuid() not in refs(job):
        fail('refs: ' + refs(job))
    if not os.path.exists(os.path.join(job, 'a')):
        fail('the folder hold did not keep its file')
    # A hold for another process: the entry goes when that process exits.
    sleeper = subprocess.Popen([sys.executable, '-c', 'import sys; sys.stdin.read()'],
                               stdin=subprocess.PIPE)
    b = os.path.join(p, 'b')
    try:
        with open(b, 'wb') as f:
            f.write(b'data')
            os.setxattr(b, 'user.poolfs.hold', ('pid:%d' % sleeper.pid).encode())
        # Closed, and still there: the sleeper's hold keeps it.
        if 'hold pid:%d' % sleeper.pid not in refs(b):
            fail('refs of b: ' + refs(b))
    finally:
        sleeper.stdin.close()
        sleeper.wait()
    wait_for('b to go with its pid', lambda: not os.path.exists(b))
    # Bad scopes are refused with EINVAL, a dead pid with ESRCH.
    for scope, want in ((b'forever', errno.EINVAL), (b'pid:999999999', errno.ESRCH)):
        try:
            os.setxattr(job, 'user.poolfs.hold', scope)
            fail('scope %r accepted' % scope)
        except OSError as e:
            if e.errno != want:
                fail('scope %r: %s' % (scope, e))
    os.removexattr(job, 'user.poolfs.hold')
    wait_for('the job folder to go once released', lambda: os.listdir(p) == [])
print('ok')
