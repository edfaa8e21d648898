"""Threads for minigrad's matrix products, and why the results never depend on them.

NumPy's BLAS (OpenBLAS here) is held to ONE thread, through threadpoolctl, whatever the
environment says (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS). Two reasons, both measured:

- OpenBLAS's own threads spin while they wait for work. Two minigrad processes on a 2-core machine
  (two trainings, a training beside the test suite) fought over the cores and each ran 10 to 56
  times slower than alone; with one BLAS thread each they ran side by side at full speed.
- How a product is split over BLAS threads is BLAS's choice and may change the order in which a
  sum is added up, so the last bit of a result could depend on the thread count, and a seeded
  training run on the number of cores.

More threads are minigrad's own instead (`mg.set_num_threads(n)`, as torch.set_num_threads). A
large product is cut into blocks of whole output rows, or whole matrices of a batch (`matmul`
below), each block is one single-threaded BLAS call writing into its slice of one output array,
and the blocks are shared among n threads: the caller and n - 1 workers that sleep on a queue when
idle (they never spin). How a product is cut depends only on its shapes, never on the thread count,
and every output element comes from one block, so results are bit-identical for any n, by
construction (tests/test_determinism.py trains under different settings and compares checkpoints).

The default is one thread per core, at most 4: a process alone uses the idle cores for its large
products, and because idle workers sleep, processes that share the cores slow each other down only
by the cores they really share. Measured on the 2-core development machine (small training step,
`python benchmarks/train_step.py --sizes small --libraries minigrad --threads N --parallel 2`):
OpenBLAS's own 2 threads 190 ms alone, but 10-56x slower with two processes at once; minigrad's
blocks on 1 thread 214 ms, on 2 threads 194 ms alone and 1.15x that with two processes at once
(tiny: 15.0 ms, 0.99x). Cutting the products into blocks costs one thread 1-2% of a step.
`benchmarks/blas_threads.py` measures the choices on the product shapes of a training step: one
BLAS thread, OpenBLAS's threads, and minigrad's blocks over 1 or 2 threads.

    mg.get_num_threads()      # threads minigrad's matrix products use now (cores, at most 4, by default)
    mg.set_num_threads(2)     # use 2; changes speed only, never a result
"""
import os
import queue
import threading

import numpy as np
from threadpoolctl import ThreadpoolController

def _available_cores():
    try:
        return len(os.sched_getaffinity(0))  # the cores this process may run on (containers, taskset)
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


DEFAULT_NUM_THREADS = min(_available_cores(), 4)

# A product is cut into blocks of at least MACS_PER_BLOCK multiply-adds (about half a millisecond
# on one core), so that handing a block to another thread (tens of microseconds) pays, and into a
# power of two of them (balanced over 2, 4, 8 threads), at most MAX_BLOCKS, each at least
# MIN_BLOCK_ROWS rows or one matrix of a batch. Cutting costs one thread a little (more, smaller
# BLAS calls): 1-2% of a small training step measured with 2 to 3 blocks, 4-5% with 8 blocks of
# every product of 4M multiply-adds or more, hence blocks this large.
# Fixed numbers, not the thread count: the cut must not depend on the threads (see above).
MACS_PER_BLOCK = 2**25
MAX_BLOCKS = 16
MIN_BLOCK_ROWS = 64

_blas = ThreadpoolController().select(user_api="blas")
_num_threads = 1  # until set_num_threads(DEFAULT_NUM_THREADS) below starts the workers
_workers = []  # worker threads, each waiting on _tasks
_tasks = queue.SimpleQueue()


def set_num_threads(n):
    """Let minigrad's matrix products use `n` threads (as torch.set_num_threads); results do not change."""
    global _num_threads
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"set_num_threads: expects a positive int, got {n!r}")
    _blas.limit(limits=1)  # again: something else in the process may have raised it
    while len(_workers) < n - 1:
        worker = threading.Thread(target=_work, name=f"minigrad-matmul-{len(_workers)}", daemon=True)
        worker.start()
        _workers.append(worker)
    _num_threads = n


def _forget_workers_after_fork():
    """A forked child has none of its parent's threads: start its own when asked."""
    global _tasks
    _workers.clear()
    _tasks = queue.SimpleQueue()
    if _num_threads > 1:
        set_num_threads(_num_threads)


def get_num_threads():
    """The number of threads minigrad's matrix products may use."""
    return _num_threads


def _work():
    while True:
        blocks, done = _tasks.get()  # sleeps until there is work: an idle worker costs no CPU
        try:
            for a, b, out in blocks:
                np.matmul(a, b, out=out)  # NumPy releases the GIL inside BLAS
            done.put(None)
        except BaseException as error:  # handed to the caller, which raises it
            done.put(error)


def matmul(a, b):
    """np.matmul(a, b) for arrays of 2 or more dims, cut into blocks as the module docstring says."""
    # multiply-adds: (batch * n * k) * m, or (batch * k * m) * n where b carries the larger batch
    macs = max(a.size * b.shape[-1], b.size * a.shape[-2])
    if macs < 2 * MACS_PER_BLOCK or a.dtype != b.dtype or a.dtype.kind != "f":
        return np.matmul(a, b)
    if b.ndim == 2 and a.ndim > 2 and a.flags.c_contiguous:
        # (..., n, k) @ (k, m) is one 2-D product (batch * n, k) @ (k, m): cut it by rows
        return matmul(a.reshape(-1, a.shape[-1]), b).reshape(a.shape[:-1] + b.shape[-1:])
    rows = a.shape[-2]
    out_shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (rows, b.shape[-1])
    batched = len(out_shape) > 2 and a.shape[:-2] == b.shape[:-2]  # cut whole matrices of the first batch dim
    count = min(MAX_BLOCKS, macs // MACS_PER_BLOCK, out_shape[0] if batched else rows // MIN_BLOCK_ROWS)
    if count < 2:
        return np.matmul(a, b)
    count = 1 << (count.bit_length() - 1)  # a power of two
    out = np.empty(out_shape, dtype=a.dtype)
    size = out_shape[0] if batched else rows
    edges = [size * i // count for i in range(count + 1)]
    if batched:
        blocks = [(a[lo:hi], b[lo:hi], out[lo:hi]) for lo, hi in zip(edges, edges[1:])]
    else:  # whole rows of the output: (rows of a) @ b, with b shared by all blocks
        blocks = [(a[..., lo:hi, :], b, out[..., lo:hi, :]) for lo, hi in zip(edges, edges[1:])]
    _run(blocks)
    return out


def _run(blocks):
    """Compute the blocks: the caller takes the first share, the workers the others."""
    shares = min(_num_threads, len(blocks))
    cuts = [len(blocks) * i // shares for i in range(shares + 1)]
    done = queue.SimpleQueue()
    for lo, hi in zip(cuts[1:-1], cuts[2:]):
        _tasks.put((blocks[lo:hi], done))
    try:
        for a, b, out in blocks[:cuts[1]]:
            np.matmul(a, b, out=out)
    finally:  # wait for the workers even if the caller's share failed: they write into `out`
        errors = [done.get() for _ in range(shares - 1)]
    for error in errors:
        if error is not None:
            raise error


set_num_threads(DEFAULT_NUM_THREADS)  # also holds BLAS to one thread
os.register_at_fork(after_in_child=_forget_workers_after_fork)
