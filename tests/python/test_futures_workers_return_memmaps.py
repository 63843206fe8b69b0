"""docs/python.md: concurrent.futures workers write arrays into the pool and
return them as np.memmap; the parent keeps them alive while it holds them, and they go after."""
import concurrent.futures
import copyreg
import gc
import os

import numpy as np

from pooltest import entries, fail, pool, wait_for


def reopen(m):
    """Pickle a memmap as "map this file again" instead of a copy of its data."""
    return np.load, (m.filename, 'r')


def init_worker():
    copyreg.pickle(np.memmap, reopen)


def produce(pool_dir, i):
    path = os.path.join(pool_dir, 'part-%d.npy' % i)
    a = np.lib.format.open_memmap(path, mode='w+', dtype=np.float64, shape=(256, 256))
    a[:] = i
    a.flush()
    return a       # the worker's process hold keeps the file until the parent maps it


with pool('autohold=process') as p:
    with concurrent.futures.ProcessPoolExecutor(max_workers=2, initializer=init_worker) as ex:
        parts = list(ex.map(produce, [p] * 4, range(4)))
    # The workers are gone (and their holds with them): only our mappings keep the files.
    for i, a in enumerate(parts):
        if not isinstance(a, np.memmap) or float(a[17, 42]) != i or a.shape != (256, 256):
            fail('part %d: %r' % (i, type(a)))
    if entries(p) != ['part-%d.npy' % i for i in range(4)]:
        fail('pool holds %s' % entries(p))
    del a
    parts.pop()                            # drop one: it goes, the others stay
    gc.collect()
    wait_for('part-3.npy to go once unmapped', lambda: 'part-3.npy' not in entries(p))
    if len(entries(p)) != 3:
        fail('pool holds %s' % entries(p))
    del parts
    gc.collect()
    wait_for('the pool to empty once the parent drops the arrays', lambda: entries(p) == [])
print('ok')
