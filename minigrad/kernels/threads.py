"""Threads for minigrad's matrix products, and why the results never depend on them.

minigrad never changes the BLAS thread count of the process for anyone else: around each of its own
products that OpenBLAS might spread over threads it sets the count it wants, and puts back the one it
found (the user's NumPy code keeps OpenBLAS's default, or whatever the user chose). Which count a product
runs with is minigrad's choice, for two reasons, both measured:

- OpenBLAS's own threads spin for about 0.1 s after each product while they wait for more work. Two
  minigrad processes on a 2-core machine that both let OpenBLAS use every core fought over the cores
  and each ran 10 to 56 times slower than alone; and they wait for each other, so one whose core another
  process takes stalls the product. So minigrad asks OpenBLAS for a second thread only when a core is
  idle (`idle_cores`), and pauses OpenBLAS's threads for a while once its products on them have lost
  more time than they saved (`_check_for_stall`).
- How OpenBLAS splits a product over its threads may change the order in which a sum is added up: on
  OpenBLAS 0.3.31 (AMD EPYC, SkylakeX kernels), 96 of 150 random float32 shapes (141 of 150 in float64)
  gave other last bits on 2 threads than on 1, mostly for inner dims over about 450. A seeded training
  run must not depend on the number of cores.

So each product is computed in a way fixed by its shapes, one of two (and one more below, where no core is idle):

- minigrad's blocks: a large product is cut into blocks of whole output rows, or whole matrices of a
  batch (`matmul` below), each block one BLAS call on ONE BLAS thread writing into its slice of one
  output array, and the blocks are shared among n threads: the caller and n - 1 workers that sleep on
  a queue when idle (they never spin). How a product is cut depends only on its shapes, never on the
  thread count, and every output element comes from one block, so results are bit-identical for any
  n, by construction.
- OpenBLAS's own threads, one call for the whole product: faster where OpenBLAS splits well (the
  issue-41 measurement: nanoGPT's (768, 128) @ (128, 384) in float32 ran at about 180 GFLOP/s on
  OpenBLAS's 2 threads, 130 on minigrad's blocks; `benchmarks/blas_threads.py`). It is used for a shape
  only where a probe at the shape's first use (`_openblas_agrees`: the same product on random numbers of
  the same shapes and layout, computed both ways) shows that OpenBLAS gives the bits of minigrad's
  blocks on every thread count from 2 to set_num_threads. The order of a sum depends on the shapes and
  the thread count only, not on the numbers, so the probe holds for every later product of that shape.

A product cut into blocks with no idle core to share them with (one core, or the others busy) is one
BLAS call on one thread instead, where a probe of the same kind (`_one_call_agrees`) shows that call
gives the blocks' bits: the blocks would run one after the other anyway, each packing b again.

Every way the result is the blocks' result, for any n (tests/test_determinism.py trains under
different settings and compares checkpoints, and checks each product every way).

The default is one thread per core, at most 4, and extra threads are used only for cores that are
idle at that moment (`idle_cores`, from the kernel's count of runnable threads, less OpenBLAS's own
workers spinning after minigrad's last product): a process alone uses the idle cores for its large
products, and processes that share the cores each keep to one, instead of taking turns on all of them.
Measured on the 2-core development machine with minigrad's blocks (`python benchmarks/train_step.py
--sizes tiny small --libraries minigrad --parallel 2`; docs/speed.md has the whole run): with
OpenBLAS's own 2 threads always on, two processes at once each ran 10-56x slower than alone; with
minigrad's, each ran 0.93-1.00x as long as minigrad alone on one thread.

Row-wise kernels (softmax, ReLU, masked fill) are cut the same way, into blocks of whole rows fixed
by the shape (`run_rows`); each row is computed by one block, so again no result depends on the
threads. Sharing those blocks among the threads did not pay on the development machine (see
SHARE_ROW_BLOCKS), so by default the calling thread runs them, one after the other.
`benchmarks/blas_threads.py` measures the choices on the product shapes of a training step: one
BLAS thread, OpenBLAS's threads, and minigrad's blocks over 1 or n threads.

    mg.get_num_threads()      # threads minigrad's matrix products use now (cores, at most 4, by default)
    mg.set_num_threads(2)     # use 2; changes speed only, never a result
"""
import itertools
import os
import queue
import threading
import time
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

# NumPy's BLAS, if threadpoolctl can reach its thread count (OpenBLAS, MKL, BLIS); its raw get/set
# functions where it has them (about 1 us a call; threadpoolctl's limit() takes tens of microseconds).
_blas_libs = ThreadpoolController().select(user_api="blas").lib_controllers
_blas_lib = _blas_libs[0] if len(_blas_libs) == 1 else None


def _raw(name):
    try:
        return _blas_lib._get_symbol(name)
    except Exception:  # another BLAS, or another threadpoolctl: its public methods instead
        return None


_blas_get = (_raw("openblas_get_num_threads") or (_blas_lib and _blas_lib.get_num_threads)) if _blas_lib else None
_blas_set = (_raw("openblas_set_num_threads") or (_blas_lib and _blas_lib.set_num_threads)) if _blas_lib else None

# OpenBLAS computes a product of n*k*m <= 65536 * 4 multiply-adds per matrix (its SMP_THRESHOLD_MIN times
# GEMM_MULTITHREAD_THRESHOLD, interface/gemm.c), and a matrix-vector product of fewer than 2304 * 4
# elements (interface/gemv.c), on one thread whatever its setting: those need no setting at all.
# (tests/test_determinism.py checks that results do not follow the process's BLAS threads.)
BLAS_ONE_THREAD_MACS = 65536 * 4
BLAS_ONE_THREAD_GEMV = 2304 * 4


def _with_blas_threads(n, function, *args):
    """function(*args) with NumPy's BLAS on n threads, then the process's own count put back."""
    if _blas_get is None:
        return function(*args)
    found = _blas_get()
    if found == n:
        return function(*args)
    _blas_set(n)
    try:
        return function(*args)
    finally:
        _blas_set(found)


_num_threads = 1  # until set_num_threads(DEFAULT_NUM_THREADS) below starts the workers
_workers = []  # worker threads, each waiting on _tasks
_tasks = queue.SimpleQueue()


def set_num_threads(n):
    """Let minigrad's matrix products use `n` threads (as torch.set_num_threads); results do not change."""
    global _num_threads
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"set_num_threads: expects a positive int, got {n!r}")
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
    if _spinning_workers and time.perf_counter() < _spinning_until:
        runnable = max(runnable - _spinning_workers, 1)  # OpenBLAS's workers, waiting for our next product
    return max(_CORES - runnable, 0)


# OpenBLAS's worker threads spin (runnable, yielding) for a while after a product before they sleep:
# measured on the development machine, a second core about half busy for 0.1-0.2 s. They are ours and
# idle: idle_cores() does not count those of minigrad's last product within BLAS_SPIN_SECONDS.
BLAS_SPIN_SECONDS = 0.1
_spinning_workers = 0
_spinning_until = 0.0


def _note_spinning_blas_workers(count):
    global _spinning_workers, _spinning_until
    _spinning_workers, _spinning_until = count, time.perf_counter() + BLAS_SPIN_SECONDS


def _work():
    while True:
        share = _tasks.get()  # sleeps until there is work: an idle worker costs no CPU
        share()


def matmul(a, b):
    """np.matmul(a, b) on minigrad's threads, or OpenBLAS's where they give the same bits, or as one call
    where no core is idle and that gives the same bits (see the module docstring); the process's BLAS
    thread count is as it was afterwards."""
    if a.ndim < 2 or b.ndim < 2:  # a matrix-vector or vector product: one BLAS thread, never cut
        if max(a.size, b.size) < BLAS_ONE_THREAD_GEMV:
            return np.matmul(a, b)
        return _with_blas_threads(1, np.matmul, a, b)
    if b.ndim == 2 and a.ndim > 2 and a.flags.c_contiguous:
        # (..., n, k) @ (k, m) is one 2-D product (batch * n, k) @ (k, m): cut it by rows
        return matmul(a.reshape(-1, a.shape[-1]), b).reshape(a.shape[:-1] + b.shape[-1:])
    one_blas_thread_anyway = a.shape[-2] * a.shape[-1] * b.shape[-1] <= BLAS_ONE_THREAD_MACS  # per matrix
    if a.dtype != b.dtype or a.dtype.char not in "fd":  # NumPy's own loops, or a BLAS call not probed: one thread
        return np.matmul(a, b) if one_blas_thread_anyway else _with_blas_threads(1, np.matmul, a, b)
    if not one_blas_thread_anyway and _num_threads > 1 and USE_OPENBLAS_THREADS:
        helpers = min(_num_threads - 1, idle_cores()) if ONLY_IDLE_CORES else _num_threads - 1
        if helpers > 0 and time.perf_counter() >= _openblas_paused_until:
            one_thread_seconds = _openblas_agrees(a, b)
            if one_thread_seconds:
                _note_spinning_blas_workers(helpers)
                start = time.perf_counter()
                out = _with_blas_threads(1 + helpers, np.matmul, a, b)
                _check_for_stall(time.perf_counter() - start, one_thread_seconds)
                return out
    blocks, out = _blocks(a, b)
    if blocks is None:
        return np.matmul(a, b) if one_blas_thread_anyway else _with_blas_threads(1, np.matmul, a, b)
    helpers = _helpers(len(blocks))
    if ONE_CALL_WITHOUT_HELPERS and helpers == 0 and _one_call_agrees(a, b):
        # no thread to share the blocks with: one BLAS call gives their bits (probed) and packs b once, not
        # once per block (see ONE_CALL_WITHOUT_HELPERS)
        return _with_blas_threads(1, np.matmul, a, b, out)
    _with_blas_threads(1, _run, blocks, helpers)  # NumPy releases the GIL inside BLAS
    return out


def _blocks(a, b):
    """The blocks of a @ b (calls that each write their slice of `out`) and `out`; (None, None) for a
    product too small to cut. The cut depends on the shapes only."""
    # multiply-adds: (batch * n * k) * m, or (batch * k * m) * n where b carries the larger batch
    macs = max(a.size * b.shape[-1], b.size * a.shape[-2])
    if macs < 2 * MACS_PER_BLOCK:
        return None, None
    rows = a.shape[-2]
    out_shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (rows, b.shape[-1])
    batched = len(out_shape) > 2 and a.shape[:-2] == b.shape[:-2]  # cut whole matrices of the first batch dim
    count = min(MAX_BLOCKS, macs // MACS_PER_BLOCK, out_shape[0] if batched else rows // MIN_BLOCK_ROWS)
    if count < 2:
        return None, None
    count = 1 << (count.bit_length() - 1)  # a power of two
    out = np.empty(out_shape, dtype=np.result_type(a, b))
    size = out_shape[0] if batched else rows
    edges = [size * i // count for i in range(count + 1)]
    if batched:
        blocks = [partial(np.matmul, a[lo:hi], b[lo:hi], out=out[lo:hi]) for lo, hi in zip(edges, edges[1:])]
    else:  # whole rows of the output: (rows of a) @ b, with b shared by all blocks
        blocks = [partial(np.matmul, a[..., lo:hi, :], b, out=out[..., lo:hi, :]) for lo, hi in zip(edges, edges[1:])]
    return blocks, out


# Whether a product that would be cut into blocks, with no idle core to share them with (one core, or the
# others busy), is one BLAS call instead where a probe shows that call gives the blocks' bits. Each block
# packs b again: nanoGPT's 48 products of a step on one core (AMD EPYC) took 44.3 ms as blocks and 41.9 as
# one call each (`taskset -c 0 python benchmarks/blas_threads.py --sequence`, "minigrad blocks" and "minigrad").
ONE_CALL_WITHOUT_HELPERS = True
_one_call = {}  # (shapes, strides, dtype) -> whether one BLAS call on one thread gives the blocks' bits


def _probe_operands(a, b, cache):
    """Random numbers of a's and b's shapes and memory order, for a probe of how their product adds up;
    the probe's cache is emptied first once it holds 4,096 shapes (shapes that keep changing: forget,
    rather than grow without end)."""
    if len(cache) >= 4096:
        cache.clear()
    rng = np.random.default_rng(0)
    probe_a, probe_b = np.empty_like(a), np.empty_like(b)
    probe_a[...] = rng.standard_normal(a.shape)
    probe_b[...] = rng.standard_normal(b.shape)
    return probe_a, probe_b


def _one_call_agrees(a, b):
    """Whether np.matmul on one BLAS thread, one call for the whole product, gives the bits of minigrad's
    blocks for products of a's and b's shapes and layout: probed once per shape on random numbers, as
    _openblas_agrees probes OpenBLAS's threads (the order of a sum follows the shapes, not the numbers)."""
    key = (a.shape, a.strides, b.shape, b.strides, a.dtype.char)
    agrees = _one_call.get(key)
    if agrees is None:
        probe_a, probe_b = _probe_operands(a, b, _one_call)
        blocks, reference = _blocks(probe_a, probe_b)
        for block in blocks:
            _with_blas_threads(1, block)
        agrees = _one_call[key] = _with_blas_threads(1, np.matmul, probe_a, probe_b).tobytes() == reference.tobytes()
    return agrees


# Whether matmul may hand a product to OpenBLAS's own threads where they give the blocks' bits (off:
# minigrad's blocks for every product, the policy before issue 41).
USE_OPENBLAS_THREADS = True
_agreement = {}  # (shapes, strides, dtype, threads) -> seconds on one thread if OpenBLAS's threads give the blocks' bits, else 0


def _openblas_agrees(a, b):
    """Whether np.matmul on OpenBLAS's threads, for every count from 2 to get_num_threads(), gives the
    bits of minigrad's blocks for products of a's and b's shapes and layout: if so, the seconds the
    product takes on one thread (the best of two), else 0.

    Probed once per shape, on random numbers (a few products' time): the order in which BLAS adds
    up a sum depends on the shapes, the layout and the thread count, never on the numbers, and random
    numbers show any change of order in the last bits."""
    key = (a.shape, a.strides, b.shape, b.strides, a.dtype.char, _num_threads)
    seconds = _agreement.get(key)
    if seconds is None:
        probe_a, probe_b = _probe_operands(a, b, _agreement)
        times = []
        for _ in range(2):
            start = time.perf_counter()
            blocks, reference = _blocks(probe_a, probe_b)
            if blocks is None:
                reference = _with_blas_threads(1, np.matmul, probe_a, probe_b)
            else:
                for block in blocks:
                    _with_blas_threads(1, block)
            times.append(time.perf_counter() - start)
        agrees = all(_with_blas_threads(n, np.matmul, probe_a, probe_b).tobytes() == reference.tobytes()
                     for n in range(2, _num_threads + 1))
        seconds = _agreement[key] = min(times) if agrees else 0
    return seconds


# OpenBLAS's threads wait for each other: when another process takes the core of one of them in the
# middle of a product, the product waits for the scheduler to give it back (measured on the 2-core
# development machine under a load of 6-11: a (384, 64) @ (64, 64) product took 74 ms instead of
# 0.04), and idle_cores() only tells how the machine was a moment before. So OpenBLAS's threads are
# paused when they lose more time than they save: each product on them adds its one-thread time less
# its time to a credit, of at most CREDIT_SECONDS; when the credit goes below 0, for
# OPENBLAS_PAUSE_SECONDS (doubled at each pause in a row, up to 32 times that) the products run on
# minigrad's blocks, whose caller never waits for a worker that has not started. Under another
# process's load one stall takes the credit at once. A process alone on quiet cores saves about half
# of each product and meets a lone slow product now and then (a 6-15x one about once in 2,000, when
# the system took a core for a moment), which the credit absorbs. Until issue 41's third pass a single
# product slower than on one thread paused them, 2 s at a time: nanoGPT's products then ran on the
# blocks most of the time, 31-44 ms a step instead of 22-25 on OpenBLAS's threads
# (`python benchmarks/blas_threads.py --sequence`).
OPENBLAS_PAUSE_SECONDS = 2.0
CREDIT_SECONDS = 0.02
_openblas_paused_until = 0.0
_openblas_pause = OPENBLAS_PAUSE_SECONDS
_credit = CREDIT_SECONDS


def _check_for_stall(seconds, one_thread_seconds):
    """Called after each product on OpenBLAS's threads (see above): pause them once they cost more than they save."""
    global _openblas_paused_until, _openblas_pause, _credit
    _credit = min(_credit + one_thread_seconds - seconds, CREDIT_SECONDS)
    if _credit < 0:
        _openblas_paused_until = time.perf_counter() + _openblas_pause
        _openblas_pause = min(2 * _openblas_pause, 32 * OPENBLAS_PAUSE_SECONDS)
        _credit = 0.0
    elif seconds <= one_thread_seconds:
        _openblas_pause = OPENBLAS_PAUSE_SECONDS


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


def _helpers(n_tasks):
    """How many workers _run would wake for n_tasks tasks now: up to _num_threads - 1, only for idle cores."""
    helpers = min(_num_threads, n_tasks) - 1
    if helpers > 0 and ONLY_IDLE_CORES:
        helpers = min(helpers, idle_cores())
    return helpers


def _run(tasks, helpers=None):
    """Call every task (no arguments) once: the caller and up to _num_threads - 1 workers each take
    the next task not yet taken until none is left. Which thread runs a task never changes what it
    computes (each writes its own slice of an output), so this balances the work freely.

    Workers are woken only for cores that are idle right now (see idle_cores), so two processes on
    two cores each run on their own core instead of taking turns on both. And the caller waits only
    for the tasks a worker has started, never for a worker to wake: if another process takes the
    core meanwhile, the caller does all the tasks itself (a worker that wakes late finds nothing
    left and sleeps again). `helpers`: the caller's _helpers(len(tasks)), if it has just counted them."""
    if helpers is None:
        helpers = _helpers(len(tasks))
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


set_num_threads(DEFAULT_NUM_THREADS)
os.register_at_fork(after_in_child=_forget_workers_after_fork)
