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

The default is one thread per core, at most 4, and workers are woken only for cores that are idle
at that moment (`idle_cores`, from the kernel's count of runnable threads): a process alone uses the
idle cores for its large products, and processes that share the cores each keep to one, instead of
taking turns on all of them. Idle workers sleep, so they cost nothing. Measured on the 2-core
development machine (`python benchmarks/train_step.py --sizes tiny small --libraries minigrad
--parallel 2`; docs/speed.md has the whole run): with OpenBLAS's own 2 threads, two
processes at once each ran 10-56x slower than alone; with minigrad's, each ran 0.93-1.00x as long as
minigrad alone on one thread, the most a process can have when every core is taken.

Row-wise kernels (softmax, ReLU, masked fill) are cut the same way, into blocks of whole rows fixed
by the shape (`run_rows`); each row is computed by one block, so again no result depends on the
threads. Sharing those blocks among the threads did not pay on the development machine (see
SHARE_ROW_BLOCKS), so by default the calling thread runs them, one after the other.
`benchmarks/blas_threads.py` measures the choices on the product shapes of a training step: one
BLAS thread, OpenBLAS's threads, and minigrad's blocks over 1 or 2 threads.

    mg.get_num_threads()      # threads minigrad's matrix products use now (cores, at most 4, by default)
    mg.set_num_threads(2)     # use 2; changes speed only, never a result
"""
import itertools
import os
import queue
import threading
from functools import partial

import numpy as np
from threadpoolctl import ThreadpoolController

def _available_cores():
    try:
        return len(os.sched_getaffinity(0))  # the cores this process may run on (containers, taskset)
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


_CORES = os.cpu_count() or 1  # the machine's, as /proc/loadavg counts the machine's threads
DEFAULT_NUM_THREADS = min(_available_cores(), 4)

# A product is cut into blocks of at least MACS_PER_BLOCK multiply-adds (about 0.2 ms on one core),
# so that handing a block to another thread (tens of microseconds) pays, and into a power of two of
# them (balanced over 2 or 4 threads), at most MAX_BLOCKS, each at least MIN_BLOCK_ROWS rows or one
# matrix of a batch. Measured on the small training step (`python benchmarks/train_step.py --sizes
# small --libraries minigrad --threads N`), alone on 2 cores: blocks of 2^25 multiply-adds and up
# to 16 of them, 195-200 ms (the (1536, 128) @ (128, 128) products of attention were not cut); 2^23
# and up to 16, 175-180 ms; 2^23 and up to 4, 168 ms. Cutting costs one thread a little (more,
# smaller BLAS calls): 222 ms on 1 thread uncut, 232 ms with 2^23 and up to 4.
# Fixed numbers, not the thread count: the cut must not depend on the threads (see above).
MACS_PER_BLOCK = 2**23
MAX_BLOCKS = 4
MIN_BLOCK_ROWS = 64

# Row-wise and elementwise kernels (softmax, ReLU, masked fill) are cut into blocks of whole rows of
# at least ELEMENTS_PER_ROW_BLOCK elements (see run_rows): a few NumPy passes over 2^15 float32
# numbers take tens of microseconds, enough to pay for handing the block to a worker, and a block's
# temporaries (128 KB each) stay in the core's cache between passes. Smaller arrays are not cut.
# (Layer norm and dropout were measured blocked too and were 2-25% slower per op: left whole.)
ELEMENTS_PER_ROW_BLOCK = 2**15
MAX_ROW_BLOCKS = 16
# Whether run_rows shares its blocks among the threads (True) or runs them all on the calling thread.
# Off: on the 2-core development machine, sharing made the small training step 2-3% slower at 2
# threads (207-214 ms against 203-209 ms; 2 blocks to 16 of 2^15 elements and more). These kernels
# are a few cheap passes over memory, which a second core barely speeds up (an elementwise multiply
# of 786k floats: 339 us on 1 thread, 320 us on 2), and np.einsum, which computes the row sums,
# holds the GIL, so two threads run it one after the other (138 us -> 232 us). The cut itself stays
# (a block's passes stay in the core's cache), and results are the same bits either way.
SHARE_ROW_BLOCKS = False

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


# Whether _run wakes workers only for idle cores (True), or for as many threads as it may use.
# Measured with two identical processes on the 2-core development machine (`python
# benchmarks/train_step.py --sizes small --libraries minigrad --parallel 2`, blocks of 2^23 and up
# to 16): waking workers regardless, each process's small step took 248 ms, 1.42x its time alone
# and slower than on one thread; the processes took turns on both cores.
ONLY_IDLE_CORES = True
_loadavg = None  # a file descriptor of /proc/loadavg, opened on first use


def idle_cores():
    """How many cores are running nothing right now: the machine's cores less its runnable threads.

    Linux counts the runnable threads of the whole machine, this one included, in the 4th field of
    /proc/loadavg ("runnable/total"); one os.pread of it takes about 2 microseconds. Elsewhere, or
    if it cannot be read, every other core counts as idle.
    """
    global _loadavg
    try:
        if _loadavg is None:
            _loadavg = os.open("/proc/loadavg", os.O_RDONLY)
        runnable = int(os.pread(_loadavg, 128, 0).split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return _CORES - 1
    return max(_CORES - runnable, 0)


def _work():
    while True:
        share = _tasks.get()  # sleeps until there is work: an idle worker costs no CPU
        share()


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
        blocks = [partial(np.matmul, a[lo:hi], b[lo:hi], out=out[lo:hi]) for lo, hi in zip(edges, edges[1:])]
    else:  # whole rows of the output: (rows of a) @ b, with b shared by all blocks
        blocks = [partial(np.matmul, a[..., lo:hi, :], b, out=out[..., lo:hi, :]) for lo, hi in zip(edges, edges[1:])]
    _run(blocks)  # NumPy releases the GIL inside BLAS
    return out


def row_blocks(n_rows, row_size):
    """The (lo, hi) row ranges that run_rows cuts n_rows rows of row_size elements into.

    A power of two of them (at most MAX_ROW_BLOCKS), each at least ELEMENTS_PER_ROW_BLOCK elements; one
    range, all the rows, for a smaller array. Depends on the shape only, never on the threads.
    """
    count = min(MAX_ROW_BLOCKS, n_rows * row_size // ELEMENTS_PER_ROW_BLOCK, n_rows)
    count = 1 << (count.bit_length() - 1) if count >= 2 else 1
    edges = [n_rows * i // count for i in range(count + 1)]
    return list(zip(edges, edges[1:]))


def run_rows(kernel, n_rows, row_size):
    """Call kernel(lo, hi) for the row ranges of row_blocks(n_rows, row_size), shared among the
    threads if SHARE_ROW_BLOCKS (see there).

    The kernel computes rows lo:hi of its result, with the same NumPy code whatever the range, into
    its slice of an output the caller allocated; a row's result must depend on that row only (as
    elementwise work and reductions along a row do). Each row is then computed by one call, the same
    way for any thread count: the results are bit-identical to kernel(0, n_rows) by construction.
    NumPy releases the GIL inside its ufunc loops over large arrays, so shared blocks do run side by side.
    """
    blocks = row_blocks(n_rows, row_size)
    if SHARE_ROW_BLOCKS:
        _run([partial(kernel, lo, hi) for lo, hi in blocks])
    else:
        for lo, hi in blocks:
            kernel(lo, hi)


def _run(tasks):
    """Call every task (no arguments) once: the caller and up to _num_threads - 1 workers each take
    the next task not yet taken until none is left. Which thread runs a task never changes what it
    computes (each writes its own slice of an output), so this balances the work freely.

    Workers are woken only for cores that are idle right now (see idle_cores), so two processes on
    two cores each run on their own core instead of taking turns on both. And the caller waits only
    for the tasks a worker has started, never for a worker to wake: if another process takes the
    core meanwhile, the caller does all the tasks itself (a worker that wakes late finds nothing
    left and sleeps again)."""
    helpers = min(_num_threads, len(tasks)) - 1
    if helpers > 0 and ONLY_IDLE_CORES:
        helpers = min(helpers, idle_cores())
    if helpers <= 0:
        for task in tasks:
            task()
        return
    taken = itertools.count()  # next() on these is atomic under the GIL: each task is taken once
    finished = itertools.count(1)
    all_finished = threading.Event()
    errors = []

    def share():
        for i in iter(taken.__next__, None):
            if i >= len(tasks):
                return
            try:
                tasks[i]()
            except BaseException as error:  # handed to the caller, which raises it
                errors.append(error)
            if next(finished) == len(tasks):
                all_finished.set()

    for _ in range(helpers):
        _tasks.put(share)
    share()
    all_finished.wait()  # tasks that workers took write into the outputs: wait for them
    if errors:
        raise errors[0]


set_num_threads(DEFAULT_NUM_THREADS)  # also holds BLAS to one thread
os.register_at_fork(after_in_child=_forget_workers_after_fork)
