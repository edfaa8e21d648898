"""An optional compiled layer under the NumPy kernels: numba loops for the float32 elementwise and
row-wise work of a training step, where NumPy makes a dozen passes over memory and keeps one core:
the exact GELU (activations.py), layer norm (layer_norm.py; the weight's and bias's gradients stay
NumPy's sums), softmax (softmax.py, attention's too), the Adam/AdamW update (optim/adam.py), and the
2x2 max pool of stride 2 (pooling.py: a CNN's pools).

    pip install "minigrad-transformer[fast]"    # numba; without it everything runs on NumPy
    MINIGRAD_COMPILED=0 python train.py          # off (or minigrad.kernels.compiled.ENABLED = False)

The NumPy kernels stay complete and are the default and the reference: each of them calls the loop
here only for float32, C-contiguous arrays of at least MIN_ELEMENTS elements (numba's call costs
several microseconds) and only when numba imports (it is imported on first use, never by
`import minigrad`). tests/test_compiled_kernels.py compares every loop with its NumPy kernel.

Vector speed. This numba has no SVML, so math.exp and math.erf in a loop are scalar calls into libm
(measured: GELU with math.erf, 3.0 ms per 393,216 numbers on one thread, slower than NumPy). The
transcendental functions are written here as arithmetic that LLVM vectorizes:

    exp(t):  t = k ln2 + r, k = round(t / ln2), ln2 in two parts (Cody and Waite), so that r in
             [-ln2/2, ln2/2] carries no rounding error of k ln2; e^r = 1 + r + r^2 Q(r), Q of degree 5
             (Cephes' expf fit, ~1 ulp); 2^k from its bits, in two factors 2^(k/2) 2^(k - k/2) so that
             subnormal results and k = 128 come out right without a branch.
    Phi(x) = (1 + erf(x / sqrt 2)) / 2 with special.py's float32 erf(z) = tanh(z P(z^2)), written as
             Phi = sigmoid(2 s) = 1 / (1 + exp(-2 s)), s = z P(z^2): no 1 + tanh that cancels for x < 0.

The lower tail of GELU (x < -3) is redone in float64 inside the loop, as elementwise.gelu_tails does
(with the C library's erfc, where NumPy's kernel sums a continued fraction).

Threads: each loop is a numba prange over blocks; every output element (or row) is computed by one
iteration, the same way for any thread count, so results never depend on the threads. The count
follows minigrad's (threads.get_num_threads(), and only cores that are idle, as for the products), for
loops long enough to repay waking a worker (PARALLEL_MICROSECONDS).
The first call of each loop compiles it: about 5.5 s for the seven of a Transformer's step on the
development machine (AMD EPYC), 1.8 s for the two of the max pool (`NUMBA_CACHE_DIR=$(mktemp -d)
python benchmarks/compiled_kernels.py --rounds 1`, its "first call"), 0.4 s to load them from numba's
cache (cache=True: __pycache__ next to this file, or numba's per-user cache, ~/.cache/numba, where that
folder is read-only), plus 0.2 s to import numba (never at `import minigrad`). numba's OpenMP workers
are started sleeping between loops, not spinning (_start_threads_passive says why: spinning ones made
the matrix products run on one thread).
"""
import math
import os

import numpy as np

from ..ops import special
from . import elementwise, threads

# Off switch: MINIGRAD_COMPILED=0 in the environment, or ENABLED = False at run time (the tests toggle it).
ENABLED = os.environ.get("MINIGRAD_COMPILED", "1") != "0"
# The smallest array (in elements) handed to a loop; smaller ones stay on NumPy. Measured with
# `python benchmarks/compiled_kernels.py --crossover` (AMD EPYC, one thread, GELU forward + backward
# through the public op): 1,024 numbers 54 us on NumPy, 32 us compiled; 4,096: 138 and 49 us.
MIN_ELEMENTS = 1 << 10
# Elements per prange iteration of the elementwise loops: large enough that a thread's share is worth
# waking it for, fixed so that the cut never depends on the thread count.
BLOCK = 1 << 13
# A loop runs on more than one thread only where one thread would take PARALLEL_MICROSECONDS or more. A
# worker asleep since the last loop, as in a training step after a millisecond of other work, takes 60-100 us
# to start, which smaller loops do not win back (`python benchmarks/compiled_kernels.py --parallel`, AMD EPYC:
# layer norm's forward over 524,288 numbers 188 us on one thread, 230 on two; GELU's forward over 1,048,576
# numbers 987 and 676). The one-thread time is the size times the loop's COST_NS, its nanoseconds per element
# there (softmax's rows of 24 cost 2.6, of 128 and more 1.0). nanoGPT's step, median of 60 in one process
# (`python benchmarks/compiled_kernels.py --step 60`): 42.6 ms with this rule, 42.7 with every loop on one
# thread, 45.8 with the old rule (two threads from 65,536 elements on); the loops large enough to gain
# still share.
PARALLEL_MICROSECONDS = 400.0
COST_NS = {"gelu_forward_loop": 1.0, "gelu_backward_loop": 0.7, "layer_norm_forward_loop": 0.45,
           "layer_norm_backward_loop": 0.27, "softmax_forward_loop": 1.0, "softmax_backward_loop": 0.2,
           "adam_loop": 0.55, "max_pool_2x2_forward_loop": 0.12, "max_pool_2x2_backward_loop": 0.4}

_F32 = np.dtype(np.float32)
_loops = None  # the compiled loops (a namespace) once built; False when numba cannot be imported


def usable(*arrays):
    """Whether the compiled loops take these arrays: on, numba importable, all float32, C-contiguous,
    and the first at least MIN_ELEMENTS elements."""
    if not ENABLED or arrays[0].size < MIN_ELEMENTS or _forked:
        return False
    for a in arrays:
        if a.dtype != _F32 or not a.flags.c_contiguous:
            return False
    return loops() is not None


# GNU OpenMP (numba's threading layer here, with no TBB) cannot run in a child forked from a process that
# used it: numba terminates the child ("fork() called from a process already using GNU OpenMP"), even
# on one thread. Such a child (a DataLoader worker, multiprocessing's fork) runs the NumPy kernels.
_forked = False


def _after_fork_in_child():
    global _forked
    if _loops:
        try:
            _forked = _forked or _loops.numba.threading_layer() == "omp"
        except ValueError:  # no parallel loop has run yet: the child may start its own threads
            pass


def loops():
    """The compiled loops, built on first use; None without numba."""
    global _loops
    if _loops is None:
        try:
            _loops = _build()
        except ImportError:
            _loops = False
    return _loops or None


def _threads_for(name, n):
    """How many of numba's threads loop `name` over n elements uses: one where one thread takes less than
    PARALLEL_MICROSECONDS, else minigrad's count, only for idle cores."""
    wanted = threads.get_num_threads()
    if n * COST_NS[name] < 1000.0 * PARALLEL_MICROSECONDS or wanted <= 1:
        return 1
    return 1 + min(wanted - 1, threads.idle_cores(), _loops.max_threads - 1)


def _run(name, n, *args):
    _loops.set_num_threads(_threads_for(name, n))
    getattr(_loops, name)(*args)


# ---- GELU (exact) ------------------------------------------------------------------------------------

def gelu(x):
    """(y, cdf) of the exact GELU on a float32 C-contiguous x: y = x Phi(x), cdf = Phi(x)."""
    flat = x.reshape(-1)
    y, cdf = np.empty_like(flat), np.empty_like(flat)
    _run("gelu_forward_loop", flat.size, flat, y, cdf)
    return y.reshape(x.shape), cdf.reshape(x.shape)


def gelu_backward(x, cdf, grad):
    """grad * (Phi(x) + x phi(x)) for float32 C-contiguous arrays of one shape."""
    flat = x.reshape(-1)
    out = np.empty_like(flat)
    _run("gelu_backward_loop", flat.size, flat, cdf.reshape(-1), grad.reshape(-1), out)
    return out.reshape(x.shape)


# ---- layer norm (rows) --------------------------------------------------------------------------------

def layer_norm(x2, weight, bias, eps):
    """(y, x_hat, rstd) of layer norm over the rows of a float32 C-contiguous (rows, D) x2, with float32
    weight and bias of D elements: as kernels/layer_norm.py computes them (rstd of shape (rows, 1))."""
    rows, D = x2.shape
    y, x_hat, rstd = np.empty_like(x2), np.empty_like(x2), np.empty((rows, 1), np.float32)
    _run("layer_norm_forward_loop", x2.size, x2, weight.reshape(D), bias.reshape(D), np.float32(eps),
         y, x_hat, rstd.reshape(rows))
    return y, x_hat, rstd


def layer_norm_backward(g2, x_hat, rstd, weight):
    """dx = rstd (h - mean(h) - x_hat mean(h x_hat)), h = g weight, row by row (float32 (rows, D))."""
    rows, D = g2.shape
    dx = np.empty_like(g2)
    _run("layer_norm_backward_loop", g2.size, g2, x_hat, rstd.reshape(rows), weight.reshape(D), dx)
    return dx


# ---- softmax (rows) ------------------------------------------------------------------------------------

def softmax(x2, causal_rows=0):
    """Softmax along the rows of a float32 C-contiguous (rows, n) x2, each row shifted by its own maximum;
    weights below the smallest normal float32 are 0, as kernels/softmax.py's. causal_rows=T: x2 is a stack
    of (T, n) score matrices and row i of each reads keys 0..i only, the weights of the others 0: the same
    bits as setting those scores to -inf first, without writing them or taking their exponentials."""
    y = np.empty_like(x2)
    _run("softmax_forward_loop", x2.size, x2, y, causal_rows)
    return y


def softmax_backward(g2, y2):
    """dx = y (g - sum(g y)) along the rows (float32 (rows, n)), subnormal results 0."""
    dx = np.empty_like(g2)
    _run("softmax_backward_loop", g2.size, g2, y2, dx)
    return dx


# ---- Adam / AdamW's update ----------------------------------------------------------------------------

def adam_update(p, g, m, v, decay, beta1, beta2, bias2_sqrt, eps, step_size):
    """optim/adam.py's update of one float32 parameter, in place, element by element with the same
    float32 operations in the same order (so the same bits):  p *= decay;  m = beta1 m + (1 - beta1) g;
    v = beta2 v + (1 - beta2) g g;  p -= step_size m / (sqrt(v) / bias2_sqrt + eps)."""
    c = [np.float32(a) for a in (decay, beta1, 1.0 - beta1, beta2, 1.0 - beta2, bias2_sqrt, eps, step_size)]
    _run("adam_loop", p.size, p.reshape(-1), g.reshape(-1), m.reshape(-1), v.reshape(-1), *c)


# ---- max pool over 2x2 tiles ---------------------------------------------------------------------------

def max_pool_2x2(x):
    """(values, found) of kernels/pooling.py's TiledMaxPool for 2x2 windows of stride 2 on a float32
    C-contiguous (N, C, H, W) x: values (N, C, (H // 2) * (W // 2)), the first largest element of each
    window (NaN the largest), and found (uint8, one per window, flat): which of its 4 elements, row-major."""
    n, c, h, w = x.shape
    planes, out = n * c, (h // 2, w // 2)
    values, found = np.empty((planes, *out), x.dtype), np.empty((planes, *out), np.uint8)
    _run("max_pool_2x2_forward_loop", x.size, x.reshape(planes, h, w), values, found)
    return values.reshape(n, c, -1), found.reshape(-1)


def max_pool_2x2_backward(grad, found, shape):
    """dL/dx of max_pool_2x2 for an input of `shape`: grad (float32, C-contiguous, one per window) at the
    element `found` names, 0 elsewhere."""
    n, c, h, w = shape
    planes, out = n * c, (h // 2, w // 2)
    grad_x = np.empty(shape, grad.dtype)
    _run("max_pool_2x2_backward_loop", grad_x.size, grad.reshape(planes, *out), found.reshape(planes, *out),
         grad_x.reshape(planes, h, w))
    return grad_x


# ---- the loops ---------------------------------------------------------------------------------------
# Plain Python functions at module level (so that numba's cache finds them again in a later process),
# made numba functions in place by _build() on first use. Their constants are module globals, which
# numba freezes into the machine code.

f32 = np.float32
LOG2E, LN2_HI, LN2_LO = f32(1.4426950408889634), f32(0.693359375), f32(-2.12194440e-4)
# Cephes' expf: e^r = 1 + r + r^2 (((((E0 r + E1) r + E2) r + E3) r + E4) r + E5), |r| <= ln2 / 2
E0, E1, E2, E3, E4, E5 = (f32(1.9875691500e-4), f32(1.3981999507e-3), f32(8.3334519073e-3),
                          f32(4.1665795894e-2), f32(1.6666665459e-1), f32(5.0000001201e-1))
EXP_LO, EXP_HI = f32(-104.0), f32(89.0)  # exp rounds to 0 below -103.97 and to inf above 88.73
ZERO, ONE, HALF, MINUS_TWO = f32(0.0), f32(1.0), f32(0.5), f32(-2.0)
P0, P1, P2, P3, P4, P5, P6, P7 = (f32(c) for c in special._FLOAT32_P)  # special.py's erf(z) = tanh(z P(z^2))
ZMAX = f32(special._FLOAT32_ZMAX)
INV_SQRT_2 = f32(1.0 / math.sqrt(2.0))
MINUS_INV_SQRT_2_64 = -1.0 / math.sqrt(2.0)
INV_SQRT_2PI32 = f32(1.0 / math.sqrt(2.0 * math.pi))
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
GELU_TAIL = f32(elementwise._GELU_TAIL)


def float32_from_bits(bits):
    """The float32 whose bits are the int32 `bits`: replaced by a numba intrinsic (LLVM's bitcast)."""
    return np.int32(bits).view(np.float32)


def fused_multiply_add(a, b, c):
    """a b + c rounded once (float32): replaced by a numba intrinsic (LLVM's fma). Written out here, not
    left to 'contract', which may or may not fuse, and not after LLVM has merged a b with another a b."""
    # Python's stand-in, before the build: exact for gaussian's x x - h (the float64 product of two float32
    # is exact, and so is its difference with h), double-rounded in general
    return np.float32(np.float64(a) * np.float64(b) + np.float64(c))


def scale2(p, k):
    """p 2^k for int32 k in [-150, 128], from exponent bits, in two normal factors."""
    h = k >> 1
    a = float32_from_bits(np.int32((h + 127) << 23))
    b = float32_from_bits(np.int32((k - h + 127) << 23))
    return p * a * b


def ln2_reduction(t):
    """(r, k) with t = k ln2 + r, |r| <= ln2 / 2, k = round(t / ln2) (a float32 holding an integer): ln2 in
    two parts (Cody and Waite), so that r carries no rounding error of k ln2."""
    kf = np.floor(t * LOG2E + HALF)
    r = t - kf * LN2_HI
    r = r - kf * LN2_LO
    return r, kf


def exp_near_zero(r):
    """e^r for |r| <= ln2 / 2: 1 + r + r^2 Q(r) (float32)."""
    q = ((((E0 * r + E1) * r + E2) * r + E3) * r + E4) * r + E5
    return q * r * r + r + ONE


def exp_reduced(r, k):
    """e^r 2^k for |r| <= ln2 / 2 (float32)."""
    return scale2(exp_near_zero(r), k)


def exp32(t):
    """exp(t) for float32 t, within ~1 ulp; 0 below -104, inf above 88.7, NaN for NaN."""
    c = t if t > EXP_LO else EXP_LO  # NaN takes the lower bound here, and is put back below
    c = c if c < EXP_HI else EXP_HI
    r, kf = ln2_reduction(c)
    e = exp_reduced(r, np.int32(kf))
    return e if t == t else t


def gaussian(x):
    """exp(-x^2 / 2) for a float32 x, to float32 accuracy: x^2 = h + l exactly (h = x x rounded, l its
    rounding error, from one fused multiply-add), so that the rounding of x^2 (x^2 / 2 ulps of the result)
    does not enter; -h / 2 is reduced as exp32 reduces t, and -l / 2 joins the reduced argument r. All in
    float32 (the float64 square it replaces ran at half the vector width)."""
    h = x * x
    t = -HALF * h
    low = fused_multiply_add(x, x, -h)
    c = t if t > EXP_LO else EXP_LO  # 0 for |x| > 14.5 (and for x^2 = inf or NaN, whose low part is dropped)
    low = low if t > EXP_LO else ZERO
    r, kf = ln2_reduction(c)
    return exp_reduced(r - HALF * low, np.int32(kf))


def exp_bounded(t):
    """exp(t) for a float32 t known to lie within [-87, 88] and not NaN: exp32 without its clips, its NaN
    test and the second factor of 2^k (k is then a normal exponent), so the same bits in 9 fewer vector
    operations (a quarter of the GELU's loop on the development machine)."""
    r, kf = ln2_reduction(t)
    return exp_near_zero(r) * float32_from_bits(np.int32((np.int32(kf) + 127) << 23))


def normal_cdf(x):
    """Phi(x) = sigmoid(2 s), s = z P(z^2), z = x / sqrt 2 clipped to +-ZMAX (float32; a NaN x gives
    Phi(-ZMAX), and x Phi(x) is NaN). With z clipped, |2 s| <= 21.2 (P's value at ZMAX): within
    exp_bounded's range."""
    z = x * INV_SQRT_2
    z = z if z > -ZMAX else -ZMAX
    z = z if z < ZMAX else ZMAX
    u = z * z
    s = (((((((P0 * u + P1) * u + P2) * u + P3) * u + P4) * u + P5) * u + P6) * u + P7) * z
    return ONE / (ONE + exp_bounded(MINUS_TWO * s))


def normal_cdf_tail64(x):
    """Phi(x) for float64 x <= -3: erfc(-x / sqrt 2) / 2 from the C library (relative error ~1e-14; the
    NumPy kernel, without an erfc, sums a continued fraction to ~3e-11: the two round to different
    float32 for about 1 x in 10^4 near -3, where the result lies near a halfway point). Four times faster
    than the fraction's 24 dependent divisions."""
    return 0.5 * math.erfc(x * MINUS_INV_SQRT_2_64)


def tail_start(x, lo, hi):
    """The first i in [lo, hi) with x[i] < GELU_TAIL, else hi (a scalar scan: it may stop early)."""
    xb = x[lo:hi]
    for i in range(hi - lo):
        if xb[i] < GELU_TAIL:
            return lo + i
    return hi


TAIL_CHUNK = 64


def tail_chunks(x, lo, hi):
    """The first chunk start s in [lo, hi) (a multiple of TAIL_CHUNK from lo) whose chunk has an
    x < GELU_TAIL, else hi. Each chunk is counted by a loop without an early exit, which vectorizes
    (a scan that stops at the first hit cannot): the tail (0.13% of normal inputs) costs little."""
    for s in range(lo, hi, TAIL_CHUNK):
        xb = x[s:min(hi, s + TAIL_CHUNK)]
        count = 0
        for j in range(xb.size):
            count += 1 if xb[j] < GELU_TAIL else 0
        if count:
            return s
    return hi


def gelu_forward_loop(x, y, cdf):
    n = x.size
    for b in prange((n + BLOCK - 1) // BLOCK):
        lo, hi = b * BLOCK, min(n, (b + 1) * BLOCK)
        xb, yb, cb = x[lo:hi], y[lo:hi], cdf[lo:hi]  # views indexed from 0: LLVM then knows i >= 0 (no
        for i in range(hi - lo):                    # negative-index fix-up, no gathers) and vectorizes
            c = normal_cdf(xb[i])
            cb[i] = c
            yb[i] = xb[i] * c
        s = tail_chunks(x, lo, hi)
        while s < hi:  # x < -3: 1 + erf cancels (and the clip at z = -4 cuts the tail): float64
            e = min(hi, s + TAIL_CHUNK)
            i = tail_start(x, s, e)
            while i < e:
                xt = np.float64(x[i])
                phi = normal_cdf_tail64(xt)
                y[i] = np.float32(xt * phi)
                cdf[i] = np.float32(phi)
                i = tail_start(x, i + 1, e)
            s = tail_chunks(x, e, hi)


def gelu_backward_loop(x, cdf, g, out):
    # d/dx x Phi(x) = Phi(x) + x phi(x),  phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
    n = x.size
    for b in prange((n + BLOCK - 1) // BLOCK):
        lo, hi = b * BLOCK, min(n, (b + 1) * BLOCK)
        xb, cb, gb, ob = x[lo:hi], cdf[lo:hi], g[lo:hi], out[lo:hi]
        for i in range(hi - lo):
            d = xb[i] * gaussian(xb[i]) * INV_SQRT_2PI32 + cb[i]
            ob[i] = d * gb[i]
        s = tail_chunks(x, lo, hi)
        while s < hi:  # x < -3: in float64, as elementwise.gelu_grad_tails (with Phi from erfc here)
            e = min(hi, s + TAIL_CHUNK)
            i = tail_start(x, s, e)
            while i < e:
                xt = np.float64(x[i])
                d = normal_cdf_tail64(xt) + xt * math.exp(-0.5 * xt * xt) * INV_SQRT_2PI
                out[i] = np.float32(d) * g[i]
                i = tail_start(x, i + 1, e)
            s = tail_chunks(x, e, hi)


TINY = f32(np.finfo(np.float32).tiny)


def row_sum(a):
    """The sum of a float32 row, in float32 (numba may add it in vector lanes: 'reassoc' below)."""
    s = ZERO
    for j in range(a.size):
        s += a[j]
    return s


def ordered_key(bits):
    """An integer that orders float32s as their values do, from a float's int32 bits: a negative float's
    bits count up as it goes down, so all but the sign bit are flipped (-0 sorts just below +0, a NaN with
    the sign bit clear above +inf). Its own inverse."""
    return bits ^ ((bits >> 31) & 0x7FFFFFFF)


def row_max(a, n):
    """The largest of a[:n] (n >= 1, a C-contiguous float32 row), or a NaN if a[:n] has one with the sign bit
    clear. Taken on ordered_key integers: LLVM takes an integer maximum in vector lanes, where a float
    maximum ran one element after another (a 4-cycle chain: most of softmax's time)."""
    bits = a.view(np.int32)
    best = ordered_key(bits[0])
    for j in range(1, n):
        key = ordered_key(bits[j])
        best = key if key > best else best
    return float32_from_bits(np.int32(ordered_key(best)))


def row_dot(a, b):
    s = ZERO
    for j in range(a.size):
        s += a[j] * b[j]
    return s


def row_dot3(a, b, c):
    s = ZERO
    for j in range(a.size):
        s += a[j] * b[j] * c[j]
    return s


def layer_norm_forward_loop(x, w, b, eps, y, x_hat, rstd):
    # mean = E[x], var = E[(x - mean)^2], rstd = 1 / sqrt(var + eps), x_hat = (x - mean) rstd, y = x_hat w + b
    rows, D = x.shape
    for i in prange(rows):  # one row per iteration: its sums never depend on the threads
        xr, hr, yr = x[i], x_hat[i], y[i]
        mean = row_sum(xr) / f32(D)
        for j in range(D):
            hr[j] = xr[j] - mean
        r = ONE / np.sqrt(row_dot(hr, hr) / f32(D) + eps)
        rstd[i] = r
        for j in range(D):
            h = hr[j] * r
            hr[j] = h
            yr[j] = h * w[j] + b[j]


def layer_norm_backward_loop(g, x_hat, rstd, w, dx):
    # h = g w:  dx = rstd (h - mean(h) - x_hat mean(h x_hat))
    rows, D = g.shape
    for i in prange(rows):
        gr, hr, dr = g[i], x_hat[i], dx[i]
        mean_h, mean_hx, r = row_dot(gr, w) / f32(D), row_dot3(gr, w, hr) / f32(D), rstd[i]
        for j in range(D):
            dr[j] = (gr[j] * w[j] - mean_h - hr[j] * mean_hx) * r


def softmax_forward_loop(x, y, causal_rows):
    # y_j = exp(x_j - max x) / sum_k exp(x_k - max x), row by row; below the smallest normal float32: 0.
    # causal_rows = T > 0: only keys j <= i % T are read (a key at -inf gives exp(-inf - m) = 0, as here)
    rows, n = x.shape
    for i in prange(rows):
        xr, yr = x[i], y[i]
        keys = n if causal_rows <= 0 else min(n, i % causal_rows + 1)
        m = row_max(xr, keys)  # (a NaN in the row makes its exp, and so the sum, NaN below: a NaN row)
        for j in range(keys):
            yr[j] = exp32(xr[j] - m)
        for j in range(keys, n):
            yr[j] = ZERO
        total = row_sum(yr)  # over the whole row, zeros too: the same order of additions as the masked row
        for j in range(n):
            v = yr[j] / total  # a division, correctly rounded: one allowed key gives exactly 1
            yr[j] = ZERO if v < TINY else v


def softmax_backward_loop(g, y, dx):
    # dx = y (g - sum(g y)); |dx| below the smallest normal float32: +0
    rows, n = g.shape
    for i in prange(rows):
        gr, yr, dr = g[i], y[i], dx[i]
        s = row_dot(gr, yr)
        for j in range(n):
            v = (gr[j] - s) * yr[j]
            dr[j] = ZERO if abs(v) < TINY else v


def adam_loop(p, g, m, v, decay, beta1, one_minus_beta1, beta2, one_minus_beta2, bias2_sqrt, eps, step_size):
    n = p.size
    for b in prange((n + BLOCK - 1) // BLOCK):
        lo, hi = b * BLOCK, min(n, (b + 1) * BLOCK)
        pb, gb, mb, vb = p[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi]
        for i in range(hi - lo):
            gi = gb[i]
            mi = mb[i] * beta1 + gi * one_minus_beta1
            vi = vb[i] * beta2 + gi * one_minus_beta2 * gi
            mb[i] = mi
            vb[i] = vi
            pb[i] = pb[i] * decay - mi / (np.sqrt(vi) / bias2_sqrt + eps) * step_size


def replaces_max(v, m):
    """Whether v takes the place of m as the largest so far: larger, or the first NaN (as max(dim))."""
    return (v > m) | ((v != v) & (m == m))


def max_pool_2x2_forward_loop(x, values, found):
    # values[p, i, j] = the first largest of x[p, 2i:2i+2, 2j:2j+2] (row-major), found = its place 0..3
    # (written out for 2x2: loops over the window's runtime size did not vectorize, and ran 7x slower)
    planes, o1, o2 = values.shape
    for p in prange(planes):  # one plane per iteration: a copy and comparisons, exact on any thread count
        xp, vp, fp = x[p], values[p], found[p]
        for i in range(o1):
            top, bottom, vr, fr = xp[2 * i], xp[2 * i + 1], vp[i], fp[i]
            for j in range(o2):
                best, chosen = top[2 * j], np.uint8(0)
                v = top[2 * j + 1]
                t = replaces_max(v, best)
                best, chosen = (v, np.uint8(1)) if t else (best, chosen)
                v = bottom[2 * j]
                t = replaces_max(v, best)
                best, chosen = (v, np.uint8(2)) if t else (best, chosen)
                v = bottom[2 * j + 1]
                t = replaces_max(v, best)
                best, chosen = (v, np.uint8(3)) if t else (best, chosen)
                vr[j] = best  # the element itself: its bits (-0.0, a NaN's payload) as they were
                fr[j] = chosen


def max_pool_2x2_backward_loop(g, found, grad_x):
    # dL/dx = dL/dy at the element each window returned, 0 elsewhere (the windows do not overlap)
    planes, o1, o2 = g.shape
    for p in prange(planes):
        gp, fp, xp = g[p], found[p], grad_x[p]
        xp[:, :] = ZERO
        for i in range(o1):
            for j in range(o2):
                e = fp[i, j]
                xp[2 * i + e // 2, 2 * j + e % 2] = gp[i, j]


prange = range  # numba's prange once built; plain range for the Python functions before that
# in the order they call each other
_INLINED = ("ordered_key", "row_max", "scale2", "ln2_reduction", "exp_near_zero", "exp_reduced", "exp32",
            "exp_bounded", "gaussian", "normal_cdf", "replaces_max")
_HELPERS = ("normal_cdf_tail64", "tail_start", "tail_chunks")
_REDUCING = ("row_sum", "row_dot", "row_dot3")  # with reassoc (their sums in vector lanes); LLVM inlines them
_PARALLEL = ("gelu_forward_loop", "gelu_backward_loop")
_ROWS = ("adam_loop", "layer_norm_forward_loop", "layer_norm_backward_loop", "softmax_forward_loop",
         "softmax_backward_loop", "max_pool_2x2_forward_loop", "max_pool_2x2_backward_loop")
FASTMATH = {"contract"}  # a * b + c may become one fused multiply-add (no other change of IEEE semantics)
# The sums along a row (row_sum, row_dot, row_dot3: their own functions, so that the flag reaches no other
# arithmetic, e.g. exp's reduction) also let LLVM reorder them ('reassoc': partial sums in vector lanes,
# then added). The order is fixed by the machine code, not by the data or the threads: reproducible.
REDUCING_FASTMATH = {"reassoc"}


def _start_threads_passive(numba):
    """Start numba's threads with OpenMP's waiting policy PASSIVE, unless the user chose one.

    GNU OpenMP's workers otherwise spin for a while after each parallel loop, and /proc/loadavg counts
    them as running: threads.idle_cores() then saw no idle core, and the matrix products that followed
    ran on one thread (nanoGPT's step, 2-core AMD EPYC: idle_cores() said 0 for 89% of its products;
    72 ms per step, against 59 ms with the compiled loops off and 50 ms with passive workers). libgomp
    reads the variable once, when numba first starts its threads, which happens here; the process's
    environment is put back as it was afterwards.
    """
    chosen = "OMP_WAIT_POLICY" in os.environ
    if not chosen:
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    try:
        from numba.np.ufunc import parallel
        parallel._launch_threads()
    except (ImportError, AttributeError):  # another numba: its threads start at the first loop, spinning
        pass
    finally:
        if not chosen:
            del os.environ["OMP_WAIT_POLICY"]


def _build():
    """Compile (or load from numba's cache) the loops: imports numba, which raises ImportError if absent."""
    import types

    import numba
    from numba.core import types as nbtypes
    from numba.extending import intrinsic

    def jit(function, fastmath=FASTMATH, **options):
        try:
            return numba.njit(cache=True, fastmath=fastmath, **options)(function)
        except RuntimeError:  # no cache folder can be written (read-only install, no home): uncached
            return numba.njit(fastmath=fastmath, **options)(function)

    def float32_from_bits_intrinsic(typingctx, bits):
        sig = nbtypes.float32(nbtypes.int32)

        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], context.get_value_type(nbtypes.float32))

        return sig, codegen

    float32_from_bits_intrinsic.__name__ = "float32_from_bits"

    def fused_multiply_add_intrinsic(typingctx, a, b, c):
        sig = nbtypes.float32(nbtypes.float32, nbtypes.float32, nbtypes.float32)

        def codegen(context, builder, signature, args):
            return builder.fma(*args)

        return sig, codegen

    fused_multiply_add_intrinsic.__name__ = "fused_multiply_add"
    os.register_at_fork(after_in_child=_after_fork_in_child)
    _start_threads_passive(numba)
    names = globals()
    names["prange"] = numba.prange
    names["float32_from_bits"] = intrinsic(float32_from_bits_intrinsic)
    names["fused_multiply_add"] = intrinsic(fused_multiply_add_intrinsic)
    for name in _INLINED:
        names[name] = jit(names[name], inline="always")
    for name in _HELPERS:
        names[name] = jit(names[name])
    for name in _REDUCING:
        names[name] = jit(names[name], fastmath=FASTMATH | REDUCING_FASTMATH)
    for name in _PARALLEL:
        names[name] = jit(names[name], parallel=True)
    for name in _ROWS:  # no contraction: g w - mean(g w) must round g w first (0 for D = 1); Adam's bits
        names[name] = jit(names[name], fastmath=False, parallel=True)
    return types.SimpleNamespace(set_num_threads=numba.set_num_threads,
                                 max_threads=numba.config.NUMBA_NUM_THREADS, numba=numba,
                                 **{name: names[name] for name in _INLINED + _HELPERS + _REDUCING + _PARALLEL + _ROWS})
