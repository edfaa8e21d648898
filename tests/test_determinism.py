"""A seeded training run gives the same bits whatever the threads: BLAS's from the environment, or
minigrad's own (mg.set_num_threads). See minigrad/kernels/threads.py for why that holds by construction."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import minigrad as mg
from minigrad.kernels import compiled, threads

ROOT = Path(__file__).resolve().parents[1]
STEPS = 12


# The copy model's products are too small to be cut into blocks by default; these runs cut every
# product of 2^14 multiply-adds or more, so that the worker threads do take part in the training.
# ONLY_IDLE_CORES off: the workers take part even if something else keeps the cores busy meanwhile.
SMALL_BLOCKS = "from minigrad.kernels import threads; threads.MACS_PER_BLOCK = 2**13; threads.ONLY_IDLE_CORES = False; "


def _train(out, env=None, num_threads=None):
    """`python -m minigrad_models.cli train copy --steps STEPS --out out` in a fresh process; with
    num_threads, the same after mg.set_num_threads(num_threads) and with SMALL_BLOCKS."""
    cli = ["-m", "minigrad_models.cli"]
    if num_threads is not None:
        cli = ["-c", f"import sys, minigrad as mg; {SMALL_BLOCKS}mg.set_num_threads({num_threads}); "
                     "from minigrad_models.cli import main; sys.exit(main(sys.argv[1:]))"]
    command = [sys.executable, *cli, "train", "copy", "--steps", str(STEPS), "--seed", "3", "--quiet", "--out", str(out)]
    subprocess.run(command, check=True, cwd=ROOT, capture_output=True, env={**os.environ, **(env or {})})
    checkpoint = mg.load(out)
    del checkpoint["seconds"], checkpoint["history"]["eval_seconds"]  # wall clock: the one thing that may differ
    return checkpoint


def _assert_identical(a, b, where="checkpoint"):
    """Every array, number and string of two loaded checkpoints is the same, to the bit."""
    assert type(a) is type(b), where
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            _assert_identical(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_identical(x, y, f"{where}[{i}]")
    elif isinstance(a, (np.ndarray, mg.Tensor)):
        x, y = np.asarray(a), np.asarray(b)
        assert x.dtype == y.dtype and x.shape == y.shape, where
        assert x.tobytes() == y.tobytes(), f"{where} differs: max |difference| {np.abs(x - y).max()}"
    else:
        assert a == b, where


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    return _train(tmp_path_factory.mktemp("ref") / "copy.npz", env={"OPENBLAS_NUM_THREADS": "1",
                                                                    "OMP_NUM_THREADS": "1"})


@pytest.mark.parametrize("env", [{"OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "2"},
                                 {"OPENBLAS_NUM_THREADS": "8", "OMP_NUM_THREADS": "8", "MKL_NUM_THREADS": "8"}],
                         ids=["blas-2", "blas-8"])
def test_training_ignores_blas_threads_of_the_environment(reference, tmp_path, env):
    _assert_identical(reference, _train(tmp_path / "copy.npz", env=env))


@pytest.fixture(scope="module")
def reference_small_blocks(tmp_path_factory):
    return _train(tmp_path_factory.mktemp("ref") / "copy.npz", num_threads=1)


@pytest.mark.parametrize("num_threads", [2, 3])
def test_training_is_the_same_on_minigrad_threads(reference_small_blocks, tmp_path, num_threads):
    _assert_identical(reference_small_blocks, _train(tmp_path / "copy.npz", num_threads=num_threads))


def test_the_run_is_a_real_training(reference):
    # the comparison above means something only if the runs trained: losses fell, weights moved
    losses = reference["history"]["loss"]
    assert len(losses) == STEPS and losses[-1] < losses[0]


USER_BLAS_THREADS = """
import json
import numpy  # the user's NumPy, and its BLAS, loaded before minigrad
from threadpoolctl import threadpool_info, threadpool_limits
def blas():
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
found = blas()
import minigrad as mg
after_import = blas()
x = mg.randn(768, 256)
w = mg.randn(384, 256, requires_grad=True)
(x @ w.T @ w).sum().backward()  # large products, forward and backward
mg.randn(20000) @ mg.randn(20000)
after_products = blas()
threadpool_limits(limits=1, user_api="blas")
x @ w.T
print(json.dumps([found, after_import, after_products, blas()]))
"""


@pytest.mark.parametrize("blas_threads", [None, "1"])
def test_the_users_blas_threads_are_left_as_they_were(blas_threads):
    # import minigrad and its products leave the process's BLAS thread count alone (the user's NumPy
    # code keeps it), and a count the user sets later stays set
    env = {key: value for key, value in os.environ.items() if key not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    if blas_threads is not None:
        env["OPENBLAS_NUM_THREADS"] = blas_threads
    run = subprocess.run([sys.executable, "-c", USER_BLAS_THREADS], capture_output=True, text=True, cwd=ROOT, env=env)
    assert run.returncode == 0, run.stderr
    found, after_import, after_products, after_user_limit = json.loads(run.stdout)
    assert found and after_import == found and after_products == found, run.stdout
    assert after_user_limit == [1] * len(found)
    if blas_threads is not None:
        assert found == [int(blas_threads)] * len(found)  # the environment's count, kept


@pytest.mark.parametrize("shape_a, shape_b", [
    ((1536, 128), (128, 512)),          # a linear layer's forward (N, in) @ (in, out)
    ((512, 1536), (1536, 128)),         # its weight gradient g^T x: a long sum over N
    ((64, 24, 128), (128, 512)),        # 3-D input through a 2-D weight
    ((32, 8, 128, 64), (32, 8, 64, 128)),  # attention scores, batched: whole matrices per block
    ((3, 1536, 64), (64, 700)),
    ((700, 3000), (3000, 90)),          # rows not a multiple of the block count
])
def test_blocked_matmul_is_bit_identical_for_any_thread_count(shape_a, shape_b, monkeypatch):
    monkeypatch.setattr(threads, "ONLY_IDLE_CORES", False)
    monkeypatch.setattr(threads, "USE_OPENBLAS_THREADS", False)  # minigrad's blocks for every product  # the workers take part, however busy the machine
    monkeypatch.setattr(threads, "ONE_CALL_WITHOUT_HELPERS", False)  # on one thread too (the next test: one call)
    cuts = []
    monkeypatch.setattr(threads, "_run", lambda blocks, *helpers, run=threads._run: cuts.append(len(blocks)) or run(blocks, *helpers))
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape_a, dtype=np.float32)
    b = rng.standard_normal(shape_b, dtype=np.float32)
    results = []
    before = mg.get_num_threads()
    try:
        for n in (1, 2, 3, 5):
            mg.set_num_threads(n)
            results.append(threads.matmul(a, b))
    finally:
        mg.set_num_threads(before)
    np.testing.assert_allclose(results[0], np.matmul(a.astype(np.float64), b), rtol=1e-4, atol=1e-3)
    for other in results[1:]:
        assert other.tobytes() == results[0].tobytes()
    assert len(cuts) == 4 and len(set(cuts)) == 1 and cuts[0] >= 2  # really cut, and the same way each time


def test_one_call_without_helpers_gives_the_blocks_bits(monkeypatch):
    """With no thread to share the blocks with, a product is one BLAS call where the probe shows that call
    gives the blocks' bits, and the blocks where it does not (float64 (1000, 333) @ (333, 777) here, on
    OpenBLAS 0.3.31): the blocks' bits either way."""
    monkeypatch.setattr(threads, "USE_OPENBLAS_THREADS", False)
    monkeypatch.setattr(threads, "_one_call", {})
    cuts = []
    monkeypatch.setattr(threads, "_run", lambda blocks, *helpers, run=threads._run: cuts.append(len(blocks)) or run(blocks, *helpers))
    rng = np.random.default_rng(1)
    shapes = [((768, 128), (128, 384), np.float32), ((1536, 128), (128, 512), np.float32),
              ((700, 3000), (3000, 90), np.float32), ((1000, 333), (333, 777), np.float64),
              ((32, 8, 128, 64), (32, 8, 64, 128), np.float32)]
    before = mg.get_num_threads()
    try:
        mg.set_num_threads(1)
        for shape_a, shape_b, dtype in shapes:
            a, b = rng.standard_normal(shape_a).astype(dtype), rng.standard_normal(shape_b).astype(dtype)
            if a.ndim == 2 and a.shape[0] > 1000:
                a = np.ascontiguousarray(a.T).T  # a transposed operand, as a weight gradient g^T x passes it
            blocks, want = threads._blocks(a, b)
            for block in blocks:
                threads._with_blas_threads(1, block)
            cuts.clear()
            got = threads.matmul(a, b)
            probed = list(threads._one_call.values())[-1]
            assert cuts == ([] if probed else [len(blocks)])  # one call exactly where the probe agreed
            assert got.tobytes() == want.tobytes(), f"{shape_a} @ {shape_b}: not the blocks' bits"
    finally:
        mg.set_num_threads(before)
    assert any(threads._one_call.values()), "no product ran as one call: the test did not test it"


@pytest.mark.skipif(threads._blas_get is None, reason="threadpoolctl finds no BLAS whose threads it can set")
def test_openblas_threads_are_used_only_where_they_give_the_blocks_bits(monkeypatch):
    # Products of a training step (inner dims up to 512), and shapes where OpenBLAS's 2 threads add up
    # in another order than one thread (inner dims over about 450; float64): every thread count gives
    # the bits of minigrad's blocks on one thread, whichever way each product ran.
    monkeypatch.setattr(threads, "ONLY_IDLE_CORES", False)  # OpenBLAS's threads and the workers take part
    monkeypatch.setattr(threads, "_agreement", {})
    monkeypatch.setattr(threads, "_check_for_stall", lambda seconds, one_thread_seconds: None)  # however busy
    monkeypatch.setattr(threads, "_openblas_paused_until", 0.0)
    used = []
    monkeypatch.setattr(threads, "_note_spinning_blas_workers", used.append)
    rng = np.random.default_rng(2)
    shapes = [((768, 128), (128, 384), np.float32), ((2048, 512), (512, 128), np.float32),
              ((128, 768), (768, 384), np.float32), ((576, 621), (621, 910), np.float32),
              ((1000, 333), (333, 777), np.float64), ((12, 256, 64), (12, 64, 256), np.float32)]
    before = mg.get_num_threads()
    try:
        for shape_a, shape_b, dtype in shapes:
            a, b = rng.standard_normal(shape_a).astype(dtype), rng.standard_normal(shape_b).astype(dtype)
            results = []
            for n, openblas in ((1, False), (2, False), (2, True), (3, True)):
                monkeypatch.setattr(threads, "USE_OPENBLAS_THREADS", openblas)
                mg.set_num_threads(n)
                results.append(threads.matmul(a, b).tobytes())
            assert len(set(results)) == 1, f"{shape_a} @ {shape_b} in {dtype.__name__}: bits depend on the threads"
    finally:
        mg.set_num_threads(before)
    agreed = [key for key, agrees in threads._agreement.items() if agrees]
    assert used and agreed, "no product ran on OpenBLAS's threads: the test did not test them"


def test_products_that_lose_more_than_they_saved_pause_openblas_threads(monkeypatch):
    # products on OpenBLAS's threads that lose more time than earlier ones saved (another process took a
    # core) send the next products to minigrad's blocks for a while, doubling while losses follow; a
    # lone slow product that the savings cover does not, and a product faster than on one thread resets it
    monkeypatch.setattr(threads, "ONLY_IDLE_CORES", False)
    monkeypatch.setattr(threads, "_openblas_paused_until", 0.0)
    monkeypatch.setattr(threads, "_openblas_pause", threads.OPENBLAS_PAUSE_SECONDS)
    monkeypatch.setattr(threads, "_credit", 0.0)
    used = []
    monkeypatch.setattr(threads, "_note_spinning_blas_workers", used.append)
    a = np.ones((768, 128), np.float32)
    b = np.ones((128, 384), np.float32)
    credit = threads.CREDIT_SECONDS
    before = mg.get_num_threads()
    try:
        mg.set_num_threads(2)
        for _ in range(100):  # fast products: their savings banked, up to CREDIT_SECONDS
            threads._check_for_stall(0.001, 0.002)
        assert threads._credit == credit
        threads._check_for_stall(0.001 + 0.6 * credit, 0.001)  # a lone slow product: paid from the savings
        assert threads._openblas_paused_until == 0.0
        threads._check_for_stall(0.001 + 0.6 * credit, 0.001)  # another: more lost than saved
        assert threads._openblas_paused_until > time.perf_counter() + 0.9 * threads.OPENBLAS_PAUSE_SECONDS
        assert (threads.matmul(a, b) == 128).all() and not used  # paused: minigrad's blocks
        threads._check_for_stall(0.002, 0.001)  # slower again right after the pause: a longer pause
        assert threads._openblas_pause == 4 * threads.OPENBLAS_PAUSE_SECONDS
        threads._check_for_stall(0.001, 0.002)
        assert threads._openblas_pause == threads.OPENBLAS_PAUSE_SECONDS
        monkeypatch.setattr(threads, "_openblas_paused_until", 0.0)
        monkeypatch.setattr(threads, "_check_for_stall", lambda seconds, one_thread_seconds: None)
        assert (threads.matmul(a, b) == 128).all()
        assert used or not threads._openblas_agrees(a, b)  # resumed (where OpenBLAS gives the blocks' bits)
    finally:
        mg.set_num_threads(before)


def test_blocked_matmul_raises_errors_of_its_blocks_and_goes_on_working():
    a = np.ones((1024, 4096), np.float32)
    before = mg.get_num_threads()
    try:
        mg.set_num_threads(2)
        with pytest.raises(ValueError):
            threads.matmul(a, np.ones((64, 4096), np.float32))  # inner dims 4096 and 64 do not align
        assert (threads.matmul(a, np.ones((4096, 64), np.float32)) == 4096).all()
    finally:
        mg.set_num_threads(before)


def test_default_threads_are_the_cores_at_most_four():
    assert threads.DEFAULT_NUM_THREADS == min(threads._available_cores(), 4)


def test_set_num_threads_checks_its_argument():
    before = mg.get_num_threads()
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="set_num_threads"):
            mg.set_num_threads(bad)
    assert mg.get_num_threads() == before


# Every kernel cut into row blocks (threads.run_rows), forward and backward, on shapes of a small
# training step and on awkward ones (rows not a multiple of the block count, non-finite values).
ROW_KERNELS = {
    "softmax": lambda x: (mg.softmax(x, dim=-1), ()),
}


def _kernel_bits(kernel, x_array, g_array):
    x = mg.tensor(x_array, requires_grad=True)
    y, params = ROW_KERNELS[kernel](x)
    y.backward(mg.tensor(g_array))
    return [np.asarray(t).tobytes() for t in (y.detach(), x.grad, *(p.grad for p in params))]


@pytest.mark.parametrize("kernel", sorted(ROW_KERNELS))
@pytest.mark.parametrize("shape", [(1536, 128), (64, 8, 24, 24), (37, 5, 13, 11)])
def test_row_blocked_kernels_are_bit_identical_to_unblocked_for_any_thread_count(kernel, shape, monkeypatch):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape, dtype=np.float32) * 3
    x.reshape(-1)[::97] = 0.0  # ReLU's kink, and exact zeros for the masks
    x.reshape(-1, shape[-1])[::7] *= 100  # rows whose exponentials underflow with softmax's global shift
    g = rng.standard_normal(shape, dtype=np.float32)
    cuts = []
    monkeypatch.setattr(threads, "_run", lambda tasks, *helpers, run=threads._run: cuts.append(len(tasks)) or run(tasks, *helpers))
    monkeypatch.setattr(threads, "SHARE_ROW_BLOCKS", True)  # the blocks really run on the worker threads
    monkeypatch.setattr(threads, "ONLY_IDLE_CORES", False)
    # the NumPy kernels' row blocks (the compiled layer's loops: tests/test_compiled_kernels.py)
    monkeypatch.setattr(compiled, "ENABLED", False)
    before = mg.get_num_threads()
    try:
        monkeypatch.setattr(threads, "ELEMENTS_PER_ROW_BLOCK", 2**62)
        mg.set_num_threads(2)
        unblocked = _kernel_bits(kernel, x, g)
        assert set(cuts) <= {1}  # no row blocks: one task
        monkeypatch.setattr(threads, "ELEMENTS_PER_ROW_BLOCK", 2**10)  # many blocks even for the small shape
        for n in (1, 2, 3):
            mg.set_num_threads(n)
            cuts.clear()
            assert _kernel_bits(kernel, x, g) == unblocked, f"{kernel} on {n} threads"
            assert max(cuts) >= 8  # really cut
    finally:
        mg.set_num_threads(before)


def test_row_blocks_depend_on_the_shape_only():
    assert threads.row_blocks(10, 2) == [(0, 10)]  # too small to cut
    n = threads.ELEMENTS_PER_ROW_BLOCK
    assert threads.row_blocks(4, n) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert threads.row_blocks(3, n) == [(0, 1), (1, 3)]  # a power of two of blocks
    assert len(threads.row_blocks(10**6, n)) == threads.MAX_ROW_BLOCKS
    assert threads.row_blocks(0, 5) == [(0, 0)]


def test_run_rows_raises_errors_of_its_blocks_and_goes_on_working():
    before = mg.get_num_threads()
    out = np.zeros(4 * threads.ELEMENTS_PER_ROW_BLOCK)

    def failing(lo, hi):
        if lo > 0:
            raise FloatingPointError(f"block {lo}")
        out[lo:hi] = 1

    try:
        threads.SHARE_ROW_BLOCKS, shared_before = True, threads.SHARE_ROW_BLOCKS
        mg.set_num_threads(2)
        with pytest.raises(FloatingPointError, match="block"):
            threads.run_rows(failing, out.size, 1)
        threads.run_rows(lambda lo, hi: out.__setitem__(slice(lo, hi), 2), out.size, 1)
        assert (out == 2).all()
    finally:
        threads.SHARE_ROW_BLOCKS = shared_before
        mg.set_num_threads(before)


def _woken_workers(monkeypatch, idle, only_idle=True, num_threads=4):
    """How many workers _run wakes for one product cut into blocks, when idle_cores() says `idle`."""
    monkeypatch.setattr(threads, "ONLY_IDLE_CORES", only_idle)
    monkeypatch.setattr(threads, "USE_OPENBLAS_THREADS", False)  # minigrad's blocks
    monkeypatch.setattr(threads, "ONE_CALL_WITHOUT_HELPERS", False)  # even with no idle core: _run decides
    monkeypatch.setattr(threads, "idle_cores", lambda: idle)
    woken = []

    class RecordingQueue:  # the workers' queue, counting what is put on it
        def __init__(self, queue):
            self.queue = queue

        def put(self, share):
            woken.append(share)
            self.queue.put(share)

        def get(self):
            return self.queue.get()

    monkeypatch.setattr(threads, "_tasks", RecordingQueue(threads._tasks))
    a = np.ones((1024, 2048), np.float32)
    before = mg.get_num_threads()
    try:
        mg.set_num_threads(num_threads)
        assert (threads.matmul(a, np.ones((2048, 1024), np.float32)) == 2048).all()  # 2^31 multiply-adds: cut
    finally:
        mg.set_num_threads(before)
    return len(woken)


def test_workers_are_woken_only_for_idle_cores(monkeypatch):
    assert _woken_workers(monkeypatch, idle=0) == 0  # the machine is busy: the caller does every block
    assert _woken_workers(monkeypatch, idle=1) == 1
    assert _woken_workers(monkeypatch, idle=8) == 3  # never more than set_num_threads allows
    assert _woken_workers(monkeypatch, idle=0, only_idle=False) == 3


def test_idle_cores_is_what_the_machine_has_free():
    assert 0 <= threads.idle_cores() <= threads._CORES - 1  # this thread is running


@pytest.mark.skipif(not Path("/proc/loadavg").exists(), reason="idle_cores reads Linux's /proc/loadavg")
def test_idle_cores_sees_other_processes_keep_the_cores_busy():
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(threads._CORES)]
    try:
        deadline = time.monotonic() + 10
        while threads.idle_cores() != 0:  # they start within moments; then every core has one
            assert time.monotonic() < deadline, "idle_cores() still sees an idle core beside busy processes"
            time.sleep(0.05)
        assert all(threads.idle_cores() == 0 for _ in range(20))
    finally:
        for process in busy:
            process.kill()
            process.wait()


def test_idle_cores_without_proc_loadavg_counts_the_other_cores_idle(monkeypatch):
    def unreadable(*args):
        raise OSError("no /proc here")

    monkeypatch.setattr(threads.os, "pread", unreadable)
    assert threads.idle_cores() == threads._CORES - 1


def test_idle_cores_does_not_count_openblas_workers_spinning_after_our_product(monkeypatch):
    # OpenBLAS's workers stay runnable (spinning) for a while after a product; they are ours and idle
    monkeypatch.setattr(threads, "_loadavg", 0)
    runnable = threads._CORES  # every core has a runnable thread
    monkeypatch.setattr(threads.os, "pread", lambda fd, n, offset: f"0.5 0.5 0.5 {runnable}/100 1".encode())
    monkeypatch.setattr(threads, "_spinning_workers", 0)
    assert threads.idle_cores() == 0
    threads._note_spinning_blas_workers(1)
    assert threads.idle_cores() == min(1, threads._CORES - 1)  # our spinning worker's core counts as idle
    monkeypatch.setattr(threads, "_spinning_until", time.perf_counter() - 1)  # BLAS_SPIN_SECONDS later
    assert threads.idle_cores() == 0
