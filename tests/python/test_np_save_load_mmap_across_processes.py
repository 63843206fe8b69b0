"""docs/python.md: np.save in one process, np.load(mmap_mode="r") in another;
the default autohold keeps the closed file for the reader, and dropping the hold removes it."""
import os
import subprocess
import sys

import numpy as np

from pooltest import entries, fail, pool, wait_for

READER = '''
import sys, numpy as np
a = np.load(sys.argv[1], mmap_mode="r")
assert isinstance(a, np.memmap), type(a)
print(a.shape[0], float(a.sum()), float(a[123, 4]))
'''

with pool('autohold=process') as p:
    path = os.path.join(p, 'x.npy')
    a = np.arange(1000 * 10, dtype=np.float64).reshape(1000, 10)
    np.save(path, a)                      # written and closed: our process hold keeps it
    out = subprocess.run([sys.executable, '-c', READER, path], capture_output=True, text=True)
    if out.returncode != 0:
        fail('reader: ' + out.stderr)
    n, total, v = out.stdout.split()
    if int(n) != 1000 or float(total) != float(a.sum()) or float(v) != a[123, 4]:
        fail('reader saw %s' % out.stdout)
    # A process hold ends with its process: a child's file goes when the child exits.
    child = os.path.join(p, 'child.npy')
    subprocess.run([sys.executable, '-c', 'import numpy as np, sys; np.save(sys.argv[1], np.ones(10))',
                    child], check=True)
    wait_for('child.npy to go with its creator', lambda: not os.path.exists(child))
    # Ours stays while we live, or until we drop the hold.
    if entries(p) != ['x.npy']:
        fail('pool holds %s' % entries(p))
    os.removexattr(path, 'user.poolfs.hold')
    wait_for('x.npy to go once unheld', lambda: entries(p) == [])
print('ok')
