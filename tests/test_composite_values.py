"""Values of the compositions in minigrad/composites/ (elementwise math, normalisation, distances) against
NumPy, without PyTorch.

A composition's gradient is the derivative of whatever value it computes, so gradcheck cannot see a
wrong formula that is differentiated consistently; values compared only with PyTorch left the suite
blind to it where PyTorch is absent (issue 39, item 4). NumPy's functions, or the formula written out
here, are the references; the inputs include each function's edges.
"""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F

EDGES = np.array([-np.inf, -700.0, -3.5, -2.0, -1.0, -0.5, -0.0, 0.0, 1e-300, 1e-5, 0.25, 0.5, 1.0, 2.5, 3.0,
                  700.0, np.inf, np.nan])
OTHER = np.array([0.0, 1.0, -1.0, 2.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -2.5, 3.0, 1e-300, -700.0, 700.0, 0.0,
                  -0.5, 2.0, 1.0])
UNIT = np.array([0.0, 1e-12, 0.1, 0.25, 0.5, 0.75, 0.999, 1.0, -0.5, 1.5, np.nan])


def t(values):
    return mg.tensor(np.asarray(values, dtype=np.float64))


def logaddexp_reference(a, b):
    with np.errstate(invalid="ignore"):
        return np.where((a == b) & np.isinf(a), a, np.logaddexp(a, b))


UNARY = {
    "tan": (mg.tan, np.tan, EDGES),
    "log2": (mg.log2, np.log2, EDGES),
    "log10": (mg.log10, np.log10, EDGES),
    "exp2": (mg.exp2, np.exp2, np.concatenate([EDGES, [10.0, -10.0, 1023.0, -1074.0]])),
    "reciprocal": (mg.reciprocal, np.reciprocal, EDGES),
    "square": (mg.square, np.square, EDGES),
    "frac": (mg.frac, lambda x: x - np.trunc(x), EDGES),
    "deg2rad": (mg.deg2rad, np.deg2rad, EDGES),
    "rad2deg": (mg.rad2deg, np.rad2deg, EDGES),
    "sinc": (mg.sinc, np.sinc, np.concatenate([EDGES[np.isfinite(EDGES)], [1e-6, -3e-5, 1.5, 7.0]])),
    "logit": (mg.logit, lambda x: np.log(x / (1 - x)), UNIT),
    "logit eps=0.01": (lambda x: mg.logit(x, eps=0.01), lambda x: np.log(np.clip(x, 0.01, 0.99) / (1 - np.clip(x, 0.01, 0.99))), UNIT),
    "nan_to_num": (mg.nan_to_num, np.nan_to_num, EDGES),
    "nan_to_num given": (lambda x: mg.nan_to_num(x, nan=-1.5, posinf=9.0, neginf=-8.0),
                         lambda x: np.nan_to_num(x, nan=-1.5, posinf=9.0, neginf=-8.0), EDGES),
    "signbit": (mg.signbit, np.signbit, EDGES),
    "isfinite": (mg.isfinite, np.isfinite, EDGES),
    "isposinf": (mg.isposinf, np.isposinf, EDGES),
    "isneginf": (mg.isneginf, np.isneginf, EDGES),
}

BINARY = {
    "logaddexp": (mg.logaddexp, logaddexp_reference),
    "logaddexp2": (mg.logaddexp2, lambda a, b: logaddexp_reference(a * math.log(2), b * math.log(2)) / math.log(2)),
    "xlogy": (mg.xlogy, lambda x, y: np.where((x == 0) & ~np.isnan(y), 0.0, x * np.log(y))),
    "hypot": (mg.hypot, np.hypot),
    "copysign": (mg.copysign, np.copysign),
    # (a tie of 0 and -0 goes to a, as PyTorch; NumPy's sign of that zero differs: compared without it)
    "fmax": (mg.fmax, lambda a, b: np.where(a == b, a, np.fmax(a, b))),
    "fmin": (mg.fmin, lambda a, b: np.where(a == b, a, np.fmin(a, b))),
    "float_power": (mg.float_power, np.float_power),
    # (PyTorch's heaviside is `values where x == 0, else x > 0`: 0 at x = NaN, where NumPy's is NaN)
    "heaviside": (mg.heaviside, lambda a, b: np.where(np.isnan(a), 0.0, np.heaviside(a, b))),
    "lerp by 0.3": (lambda a, b: mg.lerp(a, b, 0.3), lambda a, b: a + 0.3 * (b - a)),
    "lerp by 0.8": (lambda a, b: mg.lerp(a, b, 0.8), lambda a, b: b - (1 - 0.8) * (b - a)),  # from the end
}


def _same(got, expected, rtol):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape
    if expected.dtype == bool:
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-300, equal_nan=True)
        zero = expected == 0  # and the sign of a zero
        np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(expected[zero]))


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_against_numpy(name):
    fn, reference, points = UNARY[name]
    with np.errstate(all="ignore"):
        expected = reference(points)
    _same(fn(t(points)).numpy(), expected, rtol=1e-14)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_values_against_numpy(name):
    fn, reference = BINARY[name]
    a = np.repeat(EDGES, len(OTHER))  # every pair of EDGES and OTHER
    b = np.tile(OTHER, len(EDGES))
    with np.errstate(all="ignore"):
        expected = reference(a, b)
    keep = ~np.isnan(expected) | np.isnan(a) | np.isnan(b)  # the NaNs NumPy makes of inf - inf: compared below
    got = fn(t(a), t(b)).numpy()
    _same(got[keep], expected[keep], rtol=1e-13)


# ---- normalisation ---------------------------------------------------------------------------------------
X = np.random.default_rng(0).standard_normal((3, 4, 5, 2)) * 2 + 0.5


def _normalized(x, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(x.var(axis=axes, keepdims=True) + eps)


@pytest.mark.parametrize("affine", [False, True])
def test_group_norm(affine):
    w, b = np.linspace(0.5, 2.0, 4), np.linspace(-1.0, 1.0, 4)
    grouped = X.reshape(3, 2, 2, 5, 2)
    expected = _normalized(grouped, (2, 3, 4), 1e-5).reshape(X.shape)
    if affine:
        expected = expected * w[:, None, None] + b[:, None, None]
    got = F.group_norm(t(X), 2, t(w) if affine else None, t(b) if affine else None)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("affine", [False, True])
def test_instance_norm(affine):
    w, b = np.linspace(0.5, 2.0, 4), np.linspace(-1.0, 1.0, 4)
    expected = _normalized(X, (2, 3), 1e-5)
    if affine:
        expected = expected * w[:, None, None] + b[:, None, None]
    got = F.instance_norm(t(X), weight=t(w) if affine else None, bias=t(b) if affine else None)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm(training):
    w, b = np.linspace(0.5, 2.0, 4), np.linspace(-1.0, 1.0, 4)
    running_mean, running_var = np.array([0.1, -0.2, 0.3, 0.0]), np.array([1.5, 0.5, 2.0, 1.0])
    rm, rv = t(running_mean.copy()), t(running_var.copy())
    got = F.batch_norm(t(X), rm, rv, t(w), t(b), training=training, momentum=0.25, eps=1e-4)
    shape = (1, 4, 1, 1)
    if training:
        expected = _normalized(X, (0, 2, 3), 1e-4)
        n = X.size // 4
        batch_var = X.var(axis=(0, 2, 3)) * n / (n - 1)  # the running variance takes the unbiased one
        np.testing.assert_allclose(rm.numpy(), 0.75 * running_mean + 0.25 * X.mean(axis=(0, 2, 3)), rtol=1e-12)
        np.testing.assert_allclose(rv.numpy(), 0.75 * running_var + 0.25 * batch_var, rtol=1e-12)
    else:
        expected = (X - running_mean.reshape(shape)) / np.sqrt(running_var.reshape(shape) + 1e-4)
        np.testing.assert_array_equal(rm.numpy(), running_mean)
    expected = expected * w.reshape(shape) + b.reshape(shape)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("eps", [None, 0.1])
def test_rms_norm(eps):
    w = np.linspace(0.5, 2.0, 10).reshape(5, 2)
    mean_square = (X ** 2).mean(axis=(2, 3), keepdims=True)
    expected = X / np.sqrt(mean_square + (np.finfo(np.float64).eps if eps is None else eps)) * w
    got = F.rms_norm(t(X), (5, 2), t(w), eps=eps)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-14)


def test_local_response_norm():
    size, alpha, beta, k = 3, 1e-2, 0.75, 2.0
    square = X ** 2
    expected = np.empty_like(X)
    for c in range(4):  # the mean of the squares over the channels c - size//2 .. c + (size-1)//2 (zeros outside)
        window = [j for j in range(c - size // 2, c + (size - 1) // 2 + 1) if 0 <= j < 4]
        expected[:, c] = X[:, c] / (k + alpha / size * square[:, window].sum(axis=1)) ** beta
    got = F.local_response_norm(t(X), size, alpha, beta, k)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("p, dim", [(2.0, 1), (1.0, -1), (3.0, 0)])
def test_normalize(p, dim):
    norm = np.sum(np.abs(X) ** p, axis=dim, keepdims=True) ** (1 / p)
    np.testing.assert_allclose(F.normalize(t(X), p=p, dim=dim).numpy(), X / np.maximum(norm, 1e-12), rtol=1e-12)


# ---- distances -------------------------------------------------------------------------------------------
A = np.random.default_rng(1).standard_normal((4, 3))
B = np.random.default_rng(2).standard_normal((4, 3))


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, np.inf])
def test_pairwise_distance_and_cdist_and_pdist(p):
    def norm(d, axis=-1):
        return np.max(np.abs(d), axis=axis) if p == np.inf else np.sum(np.abs(d) ** p, axis=axis) ** (1 / p)

    np.testing.assert_allclose(F.pairwise_distance(t(A), t(B), p=p).numpy(), norm(A - B + 1e-6), rtol=1e-12)
    np.testing.assert_allclose(mg.cdist(t(A), t(B), p=p).numpy(), norm(A[:, None] - B[None]), rtol=1e-12)
    rows, cols = np.triu_indices(4, 1)
    np.testing.assert_allclose(F.pdist(t(A), p=p).numpy(), norm(A[rows] - A[cols]), rtol=1e-12)
    np.testing.assert_allclose(mg.dist(t(A), t(B), p=p).numpy(), norm((A - B).ravel(), 0), rtol=1e-12)


def test_cosine_similarity():
    expected = (A * B).sum(1) / (np.linalg.norm(A, axis=1) * np.linalg.norm(B, axis=1))
    np.testing.assert_allclose(F.cosine_similarity(t(A), t(B)).numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(F.cosine_similarity(t(A), t(B), dim=0).numpy(),
                               (A * B).sum(0) / (np.linalg.norm(A, axis=0) * np.linalg.norm(B, axis=0)), rtol=1e-12)


# ---- scans, statistics, products -------------------------------------------------------------------------
M = np.random.default_rng(3).standard_normal((4, 5))
N = np.random.default_rng(4).standard_normal((5, 3))
V4, V5 = np.random.default_rng(5).standard_normal(4), np.random.default_rng(6).standard_normal(5)
BATCH1, BATCH2 = np.random.default_rng(7).standard_normal((2, 4, 5)), np.random.default_rng(8).standard_normal((2, 5, 3))
WITH_NAN = np.where(np.random.default_rng(9).random((4, 5)) < 0.3, np.nan, M)

REDUCTIONS_AND_PRODUCTS = {
    "cumprod": (lambda: mg.cumprod(t(M), 1), np.cumprod(M, 1)),
    "logcumsumexp": (lambda: mg.logcumsumexp(t(M), 0), np.logaddexp.accumulate(M, 0)),
    "cummax values": (lambda: mg.cummax(t(M), 1).values, np.maximum.accumulate(M, 1)),
    "cummin values": (lambda: mg.cummin(t(M), 0).values, np.minimum.accumulate(M, 0)),
    "var_mean": (lambda: mg.stack(mg.var_mean(t(M), 1)), np.stack([M.var(1, ddof=1), M.mean(1)])),
    "std_mean correction=0": (lambda: mg.stack(mg.std_mean(t(M), 0, correction=0)), np.stack([M.std(0), M.mean(0)])),
    "nansum": (lambda: mg.nansum(t(WITH_NAN), 1), np.nansum(WITH_NAN, 1)),
    "nanmean": (lambda: mg.nanmean(t(WITH_NAN), 0), np.nanmean(WITH_NAN, 0)),
    "aminmax": (lambda: mg.stack(mg.aminmax(t(M), dim=1)), np.stack([M.min(1), M.max(1)])),
    "cov": (lambda: mg.cov(t(M)), np.cov(M)),
    "cov correction=0 fweights aweights": (
        lambda: mg.cov(t(M), correction=0, fweights=mg.tensor([1, 2, 1, 3, 1]), aweights=t([0.5, 1.0, 2.0, 1.0, 0.25])),
        np.cov(M, ddof=0, fweights=[1, 2, 1, 3, 1], aweights=[0.5, 1.0, 2.0, 1.0, 0.25])),
    "corrcoef": (lambda: mg.corrcoef(t(M)), np.corrcoef(M)),
    "trace": (lambda: mg.trace(t(M)), np.trace(M)),
    "diag_embed": (lambda: mg.diag_embed(t(M), offset=1),
                   np.stack([np.diag(row, 1) for row in M])),
    "tensordot": (lambda: mg.tensordot(t(BATCH1), t(N), dims=([2], [0])), np.tensordot(BATCH1, N, axes=([2], [0]))),
    "inner": (lambda: mg.inner(t(M), t(M)), np.inner(M, M)),
    "vdot": (lambda: mg.vdot(t(V5), t(M[0])), np.vdot(V5, M[0])),
    "addcmul": (lambda: mg.addcmul(t(M), t(M), t(M[::-1]), value=0.5), M + 0.5 * M * M[::-1]),
    "addcdiv": (lambda: mg.addcdiv(t(M), t(M), t(M[::-1] + 3), value=-2.0), M - 2.0 * M / (M[::-1] + 3)),
    "addmm": (lambda: mg.addmm(t(M @ N), t(M), t(N), beta=0.5, alpha=2.0), 0.5 * M @ N + 2.0 * M @ N),
    "addmv": (lambda: mg.addmv(t(V4), t(M), t(V5), beta=-1.0, alpha=3.0), -V4 + 3.0 * M @ V5),
    "addbmm": (lambda: mg.addbmm(t(M @ N), t(BATCH1), t(BATCH2), beta=2.0, alpha=0.5),
               2.0 * M @ N + 0.5 * (BATCH1 @ BATCH2).sum(0)),
    "baddbmm": (lambda: mg.baddbmm(t(BATCH1 @ BATCH2), t(BATCH1), t(BATCH2), beta=0.25, alpha=-1.0),
                0.25 * BATCH1 @ BATCH2 - BATCH1 @ BATCH2),
    "addr": (lambda: mg.addr(t(M), t(V4), t(V5), beta=2.0, alpha=0.5), 2.0 * M + 0.5 * np.outer(V4, V5)),
    "chain_matmul": (lambda: mg.chain_matmul(t(M), t(N), t(N.T)), M @ N @ N.T),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS_AND_PRODUCTS))
def test_reductions_scans_and_products_against_numpy(name):
    fn, expected = REDUCTIONS_AND_PRODUCTS[name]
    np.testing.assert_allclose(fn().numpy(), expected, rtol=1e-12, atol=1e-13)
