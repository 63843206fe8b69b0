"""The many-nodes suite's Dask client (nodes_test, case dask_spill_worker_killed).

usage: dask_client.py SCHEDULER WORKERS MARK

Waits for WORKERS workers, persists an array larger than any worker's memory limit so that every
worker spills part of it to its --local-directory, and writes MARK.spilled: one line per worker,
"NAME PID LOCAL_DIRECTORY SPILLED_KEYS". Then waits for MARK.go (the test kills workers in between),
sums the array (what was lost with the killed workers is computed again by the others) and writes
MARK.sum: "ok SUM" or "WRONG SUM WANT".
"""
import os
import sys
import time

import dask.array as da
from distributed import Client, wait

N = 48 * 1024 * 1024         # int64: 384 MiB in all, 48 chunks of 8 MiB (about 12 a worker)
CHUNK = 1024 * 1024


def put(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


def worker_state(dask_worker):
    data = dask_worker.data
    slow = getattr(data, "slow", None)   # SpillBuffer: what is on disk
    return (dask_worker.name, os.getpid(), dask_worker.local_directory,
            len(slow) if slow is not None else -1)


def main():
    address, workers, mark = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    client = Client(address, timeout=60)
    client.wait_for_workers(workers, timeout=120)
    y = (da.arange(N, chunks=CHUNK, dtype="int64") + 1).persist()
    wait(y)
    states = client.run(worker_state)
    put(mark + ".spilled", "".join("%s %d %s %d\n" % s for s in states.values()))
    while not os.path.exists(mark + ".go"):
        time.sleep(0.1)
    total = int(y.sum().compute())
    want = N * (N + 1) // 2
    put(mark + ".sum", ("ok %d\n" % total) if total == want else ("WRONG %d %d\n" % (total, want)))
    client.close()


if __name__ == "__main__":
    main()
