"""The compiled layer (minigrad/kernels/compiled.py, numba) against the NumPy kernels it stands in for:
the same public ops run with the layer on and off (compiled.ENABLED), values and float32 gradients,
on many shapes and on the edges (tails, +-inf, NaN, -0.0, subnormals, huge values), and its results
on 1 and 2 threads. The NumPy kernels are the reference; mg.gradcheck runs in float64, which never
takes the compiled path, so float32 backward passes are compared between the two paths here.
Skipped where numba is not installed (`pip install "minigrad-transformer[fast]"`)."""
import ast
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.kernels import compiled, elementwise
from minigrad.ops.special import erf

pytestmark = pytest.mark.skipif(compiled.loops() is None,
                                reason="numba is not installed: the compiled layer is the optional `fast` extra")


@pytest.fixture
def layer():
    """Yields a function run(on, f, *arrays) -> (outputs, input grads) with the layer on or off."""
    saved = compiled.ENABLED

    def run(on, f, *arrays, upstream=None):
        compiled.ENABLED = on
        leaves = [mg.tensor(a, requires_grad=True) for a in arrays]
        out = f(*leaves)
        out.backward(mg.tensor(upstream if upstream is not None else np.ones(out.shape, out.dtype.name)))
        return out.detach().numpy(), [t.grad.numpy() for t in leaves]

    yield run
    compiled.ENABLED = saved


def ulps(got, want):
    """|got - want| in float32 ulps of want (NaN where both are NaN counts 0)."""
    want = np.asarray(want, np.float64)
    spacing = np.maximum(np.spacing(np.abs(want.astype(np.float32))).astype(np.float64),
                         np.finfo(np.float32).smallest_subnormal)
    with np.errstate(invalid="ignore"):
        error = np.abs(got.astype(np.float64) - want) / spacing
    both_nan = np.isnan(got) & np.isnan(want)
    assert not (np.isnan(error) & ~both_nan).any(), "NaN in one result only"
    return np.where(both_nan, 0.0, error)


def gelu_reference64(x):
    """(GELU, its derivative) in float64: erf's float64 form, the float64 continued fraction below -3."""
    x = x.astype(np.float64)
    phi = 0.5 * (1.0 + erf(x / math.sqrt(2.0)))
    tail = x < -3.0
    phi[tail] = elementwise._normal_cdf_tail64(x[tail])
    return x * phi, phi + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


EDGES = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, 1e-45, -1e-45, 1e-39, -1e-39, 3e38, -3e38, 1e30, -1e30,
                  -13.5, -13.0, -9.0, -5.66, -4.0, -3.0001, -3.0, -2.9999, -0.7517915, 1e-8, 5.7, 13.0, 14.0,
                  88.0, -88.0], np.float32)


def test_the_layer_is_used_for_large_float32_arrays_only():
    x = np.zeros(compiled.MIN_ELEMENTS, np.float32)
    assert compiled.usable(x)
    assert not compiled.usable(x[:-1])  # small: NumPy
    assert not compiled.usable(x.astype(np.float64))  # float64 stays on NumPy
    assert not compiled.usable(np.zeros((2, compiled.MIN_ELEMENTS), np.float32)[:, ::2])  # not contiguous
    saved = compiled.ENABLED
    compiled.ENABLED = False
    try:
        assert not compiled.usable(x)
    finally:
        compiled.ENABLED = saved


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's kernel on the infinite edges (inf * 0)
@pytest.mark.parametrize("shape", [(4096,), (64, 65), (3, 7, 1031), (2, 4, 64, 512), (100003,)])
def test_gelu_matches_the_numpy_kernel(layer, shape):
    rng = np.random.default_rng(sum(shape))
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    x.reshape(-1)[:EDGES.size] = EDGES
    g = rng.standard_normal(shape).astype(np.float32)
    (y1, (d1,)), (y0, (d0,)) = layer(True, F.gelu, x, upstream=g), layer(False, F.gelu, x, upstream=g)
    assert y1.dtype == d1.dtype == np.float32
    np.testing.assert_array_equal(np.isnan(y1), np.isnan(y0))
    np.testing.assert_array_equal(np.isnan(d1), np.isnan(d0))
    # the body formulas differ (sigmoid(2s) here, (1 + tanh s) / 2 there): both within special.py's float32 erf
    np.testing.assert_allclose(y1, y0, rtol=3e-5, atol=1e-30)
    np.testing.assert_allclose(d1, d0, rtol=1e-4, atol=1e-6 * np.abs(g).max())
    tail = x < -3  # the same float64 formula in both
    np.testing.assert_allclose(y1[tail], y0[tail], rtol=1e-6, atol=1e-44)
    assert np.signbit(y1[x == 0]).tolist() == np.signbit(y0[x == 0]).tolist()  # -0.0 stays -0.0


def test_gelu_is_as_accurate_as_the_numpy_kernel_over_a_sweep(layer):
    """Every 397th float32 in (-16, 16) and every float32 in [0.5, 1): errors against float64, in ulps."""
    step = np.arange(0, np.array(16, np.float32).view(np.int32), 397, dtype=np.int32).view(np.float32)
    dense = np.arange(np.array(0.5, np.float32).view(np.int32), np.array(1.0, np.float32).view(np.int32),
                      dtype=np.int32).view(np.float32)
    x = np.concatenate([-step, step, dense, -dense])
    want_y, want_d = gelu_reference64(x)
    (y1, (d1,)), (y0, (d0,)) = layer(True, F.gelu, x), layer(False, F.gelu, x)
    e1, e0 = ulps(y1, want_y), ulps(y0, want_y)
    # special.py's float32 erf limits both near x = -2.8 (Phi ~ 3e-3): ~280 ulps of y on NumPy's (1 + tanh)
    assert e1.max() <= e0.max()
    assert np.percentile(e1, 99.9) <= 4 and e1[x >= -1].max() <= 5 and e1[x < -3].max() <= 1
    big = np.abs(want_d) > 0.05  # where the derivative does not cross 0
    d1e, d0e = ulps(d1[big], want_d[big]), ulps(d0[big], want_d[big])
    assert d1e.max() <= d0e.max() + 2  # (~21 ulps against ~30 near x = -0.6, where Phi + x phi cancels)


def test_gelu_results_do_not_depend_on_the_thread_count(layer):
    x = np.random.default_rng(1).standard_normal(1 << 18).astype(np.float32) * 4
    loops = compiled.loops()
    results = []
    for n in (1, 2) if loops.max_threads >= 2 else (1,):
        loops.set_num_threads(n)
        y, cdf = np.empty_like(x), np.empty_like(x)
        loops.gelu_forward_loop(x, y, cdf)
        out = np.empty_like(x)
        loops.gelu_backward_loop(x, cdf, x, out)
        results.append((y.tobytes(), cdf.tobytes(), out.tobytes()))
    assert all(r == results[0] for r in results)


def test_exp_bounded_gives_exp32s_bits_in_its_range():
    """GELU's exp without clips: the same bits as exp32 over every 7919th float32 in [-22, 22] (|2 s| <= 21.2)."""
    loops = compiled.loops()
    t = np.arange(np.array(-22.0, np.float32).view(np.int32), np.array(-1e-30, np.float32).view(np.int32), -7919,
                  dtype=np.int32).view(np.float32)
    t = np.concatenate([t, -t, np.float32([0.0, -0.0])])
    got = np.array([loops.exp_bounded(v) for v in t], np.float32)
    want = np.array([loops.exp32(v) for v in t], np.float32)
    assert got.view(np.int32).tolist() == want.view(np.int32).tolist()


def test_exp32_against_float64():
    """The vectorizable exp: within 2 ulps over every 61st float32 in [-104, 89], and its edges."""
    exp32 = compiled.loops().exp32
    t = np.arange(np.array(-104.0, np.float32).view(np.int32), np.array(-1e-30, np.float32).view(np.int32), -61,
                  dtype=np.int32).view(np.float32)
    t = np.concatenate([t, -t[t > -88.7]])
    got = np.array([exp32(v) for v in t[::97]], np.float32)
    want = np.exp(t[::97].astype(np.float64))
    normal = want >= np.finfo(np.float32).tiny
    assert ulps(got[normal], want[normal]).max() <= 2
    assert np.abs(got[~normal] - want[~normal]).max() <= 2 * np.finfo(np.float32).smallest_subnormal
    edges = [exp32(np.float32(v)) for v in (np.inf, -np.inf, 89.0, -104.0, 0.0)]
    assert edges[:4] == [np.inf, 0.0, np.inf, 0.0] and edges[4] == 1.0 and math.isnan(exp32(np.float32(np.nan)))



def test_the_gaussian_of_the_gelu_backward_carries_the_rounding_of_x_squared():
    """exp(-x^2 / 2) in float32 with x^2 in two parts: x phi(x) (the backward with Phi = 0) is within 3 ulps of
    float64 for x in (1, 13) and (-3, -1) (below -3 the float64 tail takes over), where rounding x^2 alone
    costs up to x^2 / 2 ulps (63 over these x, checked by hand): so the multiply-add that gives x^2's
    rounding error really is fused."""
    loops = compiled.loops()
    step = np.arange(np.array(1.0, np.float32).view(np.int32), np.array(13.0, np.float32).view(np.int32), 1009,
                     dtype=np.int32).view(np.float32)
    x = np.concatenate([step, -step])
    d = np.empty_like(x)
    loops.gelu_backward_loop(x, np.zeros_like(x), np.ones_like(x), d)
    x64 = x.astype(np.float64)
    want = x64 * np.exp(-0.5 * x64 * x64) / math.sqrt(2.0 * math.pi)
    inner = (x > -3) & (np.abs(want) >= np.finfo(np.float32).tiny)  # (x < -3: the float64 tail's own formula)
    assert ulps(d[inner], want[inner]).max() <= 3


def _rows(shape, rng, scale=3.0):
    x = (rng.standard_normal(shape) * scale).astype(np.float32)
    return x


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's kernel on the row of -inf (-inf - -inf)
@pytest.mark.parametrize("shape", [(1024, 1), (64, 17), (12, 4, 64, 64), (3, 1000), (5, 3, 4099)])
def test_softmax_matches_the_numpy_kernel(layer, shape):
    rng = np.random.default_rng(shape[-1])
    x = _rows(shape, rng, scale=10.0)
    rows = x.reshape(-1, shape[-1])
    if rows.shape[0] > 8 and shape[-1] > 3:
        rows[0, 1] = -np.inf  # a masked key
        rows[1, :] = -np.inf  # a row with no allowed key: NaN, as on NumPy
        rows[2, 2] = np.nan
        rows[3, 0] = 3e38  # huge: weights 1 and 0
        rows[4, :] = -1e30  # a row far below the others (NumPy's global shift redoes it)
        rows[5, 0] += 120.0  # weights that would be subnormal: 0 on both paths
        rows[6, 3] = -np.float32(np.nan)  # a NaN with its sign bit set, which row_max's integer keys put lowest
        rows[7, -1] = rows[7].max() + 1.0  # the row's maximum at its end
    g = rng.standard_normal(shape).astype(np.float32)
    f = lambda t: F.softmax(t, dim=-1)  # noqa: E731
    (y1, (d1,)), (y0, (d0,)) = layer(True, f, x, upstream=g), layer(False, f, x, upstream=g)
    np.testing.assert_array_equal(np.isnan(y1), np.isnan(y0))
    np.testing.assert_allclose(y1, y0, rtol=2e-6, atol=1e-7)  # shifts by the row's max here, NumPy's by the tensor's
    np.testing.assert_allclose(d1, d0, rtol=1e-5, atol=2e-6)
    tiny, y1, d1 = np.finfo(np.float32).tiny, y1[~np.isnan(y1)], d1[~np.isnan(d1)]
    assert (y1 >= 0).all() and (y1[y1 != 0] >= tiny).all() and (np.abs(d1[d1 != 0]) >= tiny).all()  # flushed


@pytest.mark.parametrize("T, S", [(64, 64), (5, 9), (9, 5), (1, 1)])
def test_the_causal_softmax_gives_the_bits_of_masking_with_minus_infinity(layer, T, S):
    """Attention's causal softmax reads keys 0..i of row i only: the same bits as writing -inf above the
    diagonal and taking the whole rows' softmax (the way it ran before), NaN and infinite scores included."""
    rng = np.random.default_rng(T * S)
    scores = (rng.standard_normal((40, T, S)) * 4).astype(np.float32)
    scores[1, 0, 0], scores[2, -1, 0], scores[3, :, 0], scores[4, -1, -1] = np.nan, np.inf, -np.inf, np.inf
    masked = scores.copy()
    np.copyto(masked, -np.inf, where=~np.tri(T, S, dtype=bool))
    want = compiled.softmax(masked.reshape(-1, S))
    got = [compiled.softmax(scores.reshape(-1, S), causal_rows=T)]
    loops = compiled.loops()
    for n in (1, 2) if loops.max_threads >= 2 else (1,):  # the loop itself on each thread count
        loops.set_num_threads(n)
        got.append(np.empty_like(want))
        loops.softmax_forward_loop(scores.reshape(-1, S), got[-1], T)
    for g in got:
        assert g.view(np.int32).tolist() == want.view(np.int32).tolist()
    assert (want.reshape(40, T, S)[5:][~np.broadcast_to(np.tri(T, S, dtype=bool), (35, T, S))] == 0).all()


def test_attention_through_the_layer_matches_numpy(layer):
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((2, 4, 64, 32)).astype(np.float32) for _ in range(3))
    f = lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)  # noqa: E731
    (o1, g1), (o0, g0) = layer(True, f, q, k, v), layer(False, f, q, k, v)
    np.testing.assert_allclose(o1, o0, rtol=1e-5, atol=1e-6)
    for a, b in zip(g1, g0):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape", [(1024, 1), (512, 3), (12, 64, 128), (7, 1000), (2, 3, 4097)])
def test_layer_norm_matches_the_numpy_kernel(layer, shape):
    rng = np.random.default_rng(shape[-1])
    x = _rows(shape, rng) + 5.0  # an offset: the variance is of x - mean
    D = shape[-1]
    rows = x.reshape(-1, D)
    rows[0] = 7.0  # a constant row: var 0, x_hat 0
    rows[1] *= 1e-3
    rows[2] *= 1e3
    w, b = rng.standard_normal(D).astype(np.float32), rng.standard_normal(D).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    f = lambda x, w, b: F.layer_norm(x, (D,), w, b, eps=1e-5)  # noqa: E731
    (y1, d1), (y0, d0) = layer(True, f, x, w, b, upstream=g), layer(False, f, x, w, b, upstream=g)
    np.testing.assert_allclose(y1, y0, rtol=1e-5, atol=2e-5)
    for a, c in zip(d1, d0):  # dx (compiled), dweight and dbias (NumPy's sums of the saved x_hat)
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, c, rtol=1e-4, atol=2e-4 * np.abs(c).max())


def test_layer_norm_with_a_weight_and_no_bias_takes_the_loop_and_agrees(layer, monkeypatch):
    # nanoGPT's LayerNorm(bias=False): the loop adds a bias of zeros
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((64, 128)).astype(np.float32), rng.standard_normal(128).astype(np.float32)
    ran = []
    monkeypatch.setattr(compiled, "layer_norm", lambda *a, run=compiled.layer_norm: ran.append(1) or run(*a))
    f = lambda x, w: F.layer_norm(x, (128,), w, None, eps=1e-5)  # noqa: E731
    (y1, d1), (y0, d0) = layer(True, f, x, w), layer(False, f, x, w)
    assert ran == [1]
    np.testing.assert_allclose(y1, y0, rtol=1e-5, atol=2e-5)
    for a, c in zip(d1, d0):
        np.testing.assert_allclose(a, c, rtol=1e-4, atol=2e-4 * np.abs(c).max())


def test_layer_norm_without_affine_stays_on_numpy_and_agrees(layer):
    x = np.random.default_rng(2).standard_normal((64, 128)).astype(np.float32)
    f = lambda x: F.layer_norm(x, (128,))  # noqa: E731
    (y1, (d1,)), (y0, (d0,)) = layer(True, f, x), layer(False, f, x)
    np.testing.assert_array_equal(y1, y0)
    np.testing.assert_array_equal(d1, d0)


def test_row_loops_do_not_depend_on_the_thread_count():
    loops = compiled.loops()
    rng = np.random.default_rng(3)
    x, g = rng.standard_normal((3000, 129)).astype(np.float32), rng.standard_normal((3000, 129)).astype(np.float32)
    w, b = rng.standard_normal(129).astype(np.float32), rng.standard_normal(129).astype(np.float32)
    results = []
    for n in (1, 2) if loops.max_threads >= 2 else (1,):
        loops.set_num_threads(n)
        y, x_hat, rstd, dx = np.empty_like(x), np.empty_like(x), np.empty(3000, np.float32), np.empty_like(x)
        loops.layer_norm_forward_loop(x, w, b, np.float32(1e-5), y, x_hat, rstd)
        loops.layer_norm_backward_loop(g, x_hat, rstd, w, dx)
        s, ds = np.empty_like(x), np.empty_like(x)
        loops.softmax_forward_loop(x, s, 0)
        loops.softmax_backward_loop(g, s, ds)
        results.append(b"".join(a.tobytes() for a in (y, x_hat, rstd, dx, s, ds)))
    assert all(r == results[0] for r in results)


def test_a_loop_wakes_a_second_thread_only_when_one_would_take_long_enough(monkeypatch):
    # A sleeping worker takes longer to start than a short loop lasts (compiled.PARALLEL_MICROSECONDS)
    from minigrad.kernels import threads
    loops = compiled.loops()
    assert set(compiled.COST_NS) == set(compiled._ROWS + compiled._PARALLEL)  # every loop _run calls has a cost
    monkeypatch.setattr(threads, "idle_cores", lambda: 1)
    monkeypatch.setattr(threads, "get_num_threads", lambda: 2)
    two = min(2, loops.max_threads)
    assert compiled._threads_for("layer_norm_forward_loop", 1 << 19) == 1  # ~240 us on one thread
    assert compiled._threads_for("gelu_forward_loop", 1 << 20) == two  # ~1 ms
    assert compiled._threads_for("softmax_forward_loop", 1 << 20) == two
    monkeypatch.setattr(threads, "idle_cores", lambda: 0)  # no idle core: one thread, however long
    assert compiled._threads_for("gelu_forward_loop", 1 << 20) == 1
    monkeypatch.setattr(threads, "idle_cores", lambda: 1)
    monkeypatch.setattr(compiled, "PARALLEL_MICROSECONDS", 0.0)
    assert compiled._threads_for("max_pool_2x2_forward_loop", 1 << 10) == two


@pytest.mark.parametrize("options", [dict(), dict(weight_decay=0.1), dict(maximize=True, weight_decay=0.0),
                                     dict(amsgrad=True)])
@pytest.mark.parametrize("optimizer", ["AdamW", "Adam"])
def test_adam_update_gives_the_numpy_bits(optimizer, options):
    """The compiled update does the NumPy update's float32 operations in its order: the same bits."""
    rng = np.random.default_rng(4)
    start = [rng.standard_normal(s).astype(np.float32) for s in ((64, 48), (5000,), (7,))]
    grads = [[(rng.standard_normal(a.shape) * 10.0 ** rng.integers(-6, 3)).astype(np.float32) for a in start]
             for _ in range(4)]
    results = []
    saved = compiled.ENABLED
    try:
        for on in (True, False):
            compiled.ENABLED = on
            params = [mg.tensor(a.copy(), requires_grad=True) for a in start]
            opt = getattr(mg.optim, optimizer)(params, lr=1e-2, **options)
            for step in grads:
                for p, g in zip(params, step):
                    p.grad = mg.tensor(g)
                opt.step()
            results.append([p.detach().numpy().tobytes() for p in params]
                           + [opt.state[p][k].tobytes() for p in params for k in ("exp_avg", "exp_avg_sq")])
    finally:
        compiled.ENABLED = saved
    assert results[0] == results[1]
    assert results[0][0] != start[0].tobytes()
    assert options.get("amsgrad") or (optimizer == "Adam" and options.get("weight_decay")) or \
        compiled.loops().adam_loop.signatures  # the compiled loop did run


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="os.fork is POSIX only")
def test_a_forked_child_runs_the_numpy_kernels():
    """GNU OpenMP terminates a forked child that starts a parallel loop: the child takes NumPy's path."""
    import os

    x = np.random.default_rng(6).standard_normal(1 << 17).astype(np.float32)
    loops = compiled.loops()
    loops.set_num_threads(loops.max_threads)
    loops.gelu_forward_loop(x, np.empty_like(x), np.empty_like(x))  # the parent's threads have started
    want = F.gelu(mg.tensor(x)).numpy()
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only if GELU there works and agrees
        try:
            got = F.gelu(mg.tensor(x)).numpy()
            ok = np.allclose(got, want, rtol=3e-5, atol=1e-30) and not compiled.usable(x)
            os._exit(0 if ok else 1)
        finally:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert compiled.usable(x)  # the parent keeps the layer


WATCH_THREADS = """
import os, sys, threading, time
import numpy as np
import minigrad as mg
from minigrad.kernels import compiled
environment = dict(os.environ)
mg.set_num_threads(2)
x = np.random.default_rng(0).standard_normal(1 << 18).astype(np.float32)
assert compiled.loops() is not None
ours = {thread.native_id for thread in threading.enumerate()}  # Python's threads: this one, the matmul workers
states = []
for _ in range(5):
    compiled._loops.set_num_threads(min(2, compiled._loops.max_threads))
    compiled._loops.gelu_forward_loop(x, np.empty_like(x), np.empty_like(x))
    time.sleep(0.005)
    for task in os.listdir("/proc/self/task"):
        if int(task) not in ours:
            with open(f"/proc/self/task/{task}/stat") as f:
                states.append(f.read().rsplit(")", 1)[1].split()[0])
print(states, dict(os.environ) == environment)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="reads thread states from Linux's /proc")
def test_numbas_threads_sleep_between_loops_and_the_environment_is_left_as_it_was():
    # Spinning OpenMP workers count as running threads in /proc/loadavg: threads.idle_cores() would see
    # no idle core, and the matrix products after every compiled loop would run on one thread. A process
    # of its own: with PyTorch imported first (as in this test session), numba shares PyTorch's libgomp,
    # whose waiting policy was read when PyTorch loaded it.
    environment = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    done = subprocess.run([sys.executable, "-c", WATCH_THREADS], capture_output=True, text=True, env=environment,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    states, environment_kept = done.stdout.strip().rsplit(" ", 1)
    states = ast.literal_eval(states)  # the one-letter states the child printed
    assert states and states.count("R") <= 1, states  # asleep, not spinning (1: a thread caught late)
    assert environment_kept == "True"  # OMP_WAIT_POLICY was set only while numba started its threads


@pytest.mark.parametrize("shape, loops", [((64, 6, 28, 28), [1, 2]), ((2, 3, 65, 67), [1, 2]),
                                          ((1, 2, 64, 128), [1, 2]),
                                          ((1, 2, 64, 16), [1])])  # dL/dy too small: NumPy's backward
def test_max_pool_2x2_gives_the_numpy_kernels_bits(layer, monkeypatch, shape, loops):
    # ties (equal values, 0.0 beside -0.0: the first of the window is returned), NaN (the first NaN of a
    # window is returned), infinities, and an odd height or width (the last row or column is in no window)
    rng = np.random.default_rng(5)
    x = rng.standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    flat[rng.integers(0, flat.size, flat.size // 5)] = 0.0
    flat[rng.integers(0, flat.size, flat.size // 5)] = -0.0
    flat[rng.integers(0, flat.size, flat.size // 50)] = np.nan
    flat[rng.integers(0, flat.size, flat.size // 50)] = -np.inf
    flat[rng.integers(0, flat.size, flat.size // 50)] = np.inf
    flat[rng.integers(0, flat.size, flat.size // 10)] = 1.5
    upstream = rng.standard_normal((shape[0], shape[1], shape[2] // 2, shape[3] // 2)).astype(np.float32)
    ran = []
    monkeypatch.setattr(compiled, "max_pool_2x2", lambda *a, run=compiled.max_pool_2x2: ran.append(1) or run(*a))
    monkeypatch.setattr(compiled, "max_pool_2x2_backward",
                        lambda *a, run=compiled.max_pool_2x2_backward: ran.append(2) or run(*a))
    f = lambda x: F.max_pool2d(x, 2)  # noqa: E731
    (y1, (d1,)), (y0, (d0,)) = layer(True, f, x, upstream=upstream), layer(False, f, x, upstream=upstream)
    assert ran == loops  # with the layer on, these loops ran (off, the NumPy kernel ran)
    assert y1.tobytes() == y0.tobytes() and d1.tobytes() == d0.tobytes()
    _, indices = F.max_pool2d(mg.tensor(x), 2, return_indices=True)  # the composition: the reference of both
    chosen = np.take_along_axis(x.reshape(shape[0], shape[1], -1), indices.numpy().reshape(shape[0], shape[1], -1), 2)
    assert y1.reshape(chosen.shape).tobytes() == chosen.tobytes()


def test_max_pool_2x2_numpy_forward_then_compiled_backward(layer, monkeypatch):
    # a transposed input is not contiguous: NumPy's forward; its dL/dy is: the compiled backward
    rng = np.random.default_rng(7)
    x = rng.standard_normal((8, 4, 40, 30)).astype(np.float32)
    x.reshape(-1)[rng.integers(0, x.size, x.size // 4)] = 0.5  # ties
    upstream = rng.standard_normal((8, 4, 15, 20)).astype(np.float32)
    ran = []
    monkeypatch.setattr(compiled, "max_pool_2x2", lambda *a, run=compiled.max_pool_2x2: ran.append(1) or run(*a))
    monkeypatch.setattr(compiled, "max_pool_2x2_backward",
                        lambda *a, run=compiled.max_pool_2x2_backward: ran.append(2) or run(*a))
    f = lambda x: F.max_pool2d(x.transpose(2, 3), 2)  # noqa: E731
    (y1, (d1,)), (y0, (d0,)) = layer(True, f, x, upstream=upstream), layer(False, f, x, upstream=upstream)
    assert ran == [2]
    assert y1.tobytes() == y0.tobytes() and d1.tobytes() == d0.tobytes()


def test_max_pool_2x2_loops_do_not_depend_on_the_thread_count():
    loops = compiled.loops()
    x = np.random.default_rng(6).standard_normal((32, 8, 30, 30)).astype(np.float32)
    planes = x.reshape(256, 30, 30)
    results = []
    for n in (1, 2) if loops.max_threads >= 2 else (1,):
        loops.set_num_threads(n)  # the loops themselves: compiled.max_pool_2x2 would choose the count again
        values, found = np.empty((256, 15, 15), np.float32), np.empty((256, 15, 15), np.uint8)
        loops.max_pool_2x2_forward_loop(planes, values, found)
        grad_x = np.empty_like(planes)
        loops.max_pool_2x2_backward_loop(values, found, grad_x)
        results.append(values.tobytes() + found.tobytes() + grad_x.tobytes())
    assert all(r == results[0] for r in results)
