"""docs/python.md: JOBLIB_TEMP_FOLDER on a pool. joblib memory-maps the big
argument into the pool for its workers, the results are right, and nothing is left after."""
import os
import sys

from pooltest import entries, fail, pool, wait_for

with pool('autohold=process') as p:
    os.environ['JOBLIB_TEMP_FOLDER'] = p
    import numpy as np
    from joblib import Parallel, delayed

    def column_sum(a, j):
        return float(a[:, j].sum()), type(a).__name__

    a = np.arange(512 * 512, dtype=np.float64).reshape(512, 512)
    seen = []
    # The first task runs while joblib's dump is in the pool: look at it from the parent.
    with Parallel(n_jobs=2, max_nbytes='1M', mmap_mode='r') as par:
        out = par(delayed(column_sum)(a, j) for j in range(8))
        seen = entries(p)
    if [s for s, _ in out] != [float(a[:, j].sum()) for j in range(8)]:
        fail('wrong sums: %s' % out)
    if {t for _, t in out} != {'memmap'}:
        fail('the workers did not get a memmap: %s' % out)
    if not any(e.startswith('joblib_memmapping_folder_') for e in seen):
        fail('joblib did not use the pool: %s' % seen)
    wait_for('the pool to empty after Parallel', lambda: entries(p) == [])
print('ok', file=sys.stderr)
