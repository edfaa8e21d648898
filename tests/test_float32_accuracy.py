"""Float32 results as accurate as PyTorch's (SPEC.md, Conventions; issue 34), with the bounds stated.

Every sum minigrad takes goes through one summation (minigrad/kernels/summation.py), blocked along any
axis; contractions run on BLAS; sigmoid and its relatives are computed in forms that do not cancel in
the tails (minigrad/kernels/elementwise.py). The bounds these tests assert, without PyTorch:

  SUM_BOUND = 1e-6 (about 8 float32 epsilons): the relative error, largest absolute error over the
      result divided by the result's largest magnitude, of a float32 reduction (sum, mean, var, std,
      logsumexp and their gradients), scan (cumsum and its gradient) or broadcast gradient (x + b,
      linear's and layer norm's bias and weight gradients), against the same computation in float64
      from the same float32 inputs: arrays of 1e5-1.7e7 elements, N(1, 1) values, along each axis.
      NumPy's own float32 sum along a non-contiguous axis grows like n: 1.8e-5 over 182,625 rows.
  CONTRACTION_BOUND = 4e-6: einsum's float32 product over 100,000 terms (a BLAS product, as PyTorch's).
  TORCH_FACTOR = 4: where PyTorch is installed, each error above is also at most 4x PyTorch's on the
      same float32 input (plus one epsilon, for the cases where both are exact).
  TAIL_BOUND = 8 epsilons: the elementwise relative error of sigmoid, SiLU, log-sigmoid, softplus,
      BCE with logits, tanh's derivative and GELU's lower tail, forward and derivative, over float32's
      range wherever the float64 value is a normal float32 (sigmoid(-20) = 2.06e-9, not 0). Near a zero
      of a derivative (SiLU's at x = -1.28, BCE's at sigmoid(x) = y for a soft target) the error is
      measured against the size of the terms that cancel there, the error no formula avoids.
"""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F

try:
    import torch
except ImportError:
    torch = None

EPS = float(np.finfo(np.float32).eps)
TINY = float(np.finfo(np.float32).tiny)
SUM_BOUND = 1e-6
CONTRACTION_BOUND = 4e-6
TORCH_FACTOR = 4
TAIL_BOUND = 8 * EPS


def relative_error(got, ref):
    got, ref = np.asarray(got, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    return float(np.max(np.abs(got - ref)) / np.max(np.abs(ref)))


def inputs(shape, seed=0):
    return (np.random.default_rng(seed).standard_normal(shape) + 1.0).astype(np.float32)


def check(err, torch_err, bound, what):
    assert err <= bound, f"{what}: relative error {err:.2e} above the bound {bound:.0e}"
    if torch_err is not None:
        assert err <= TORCH_FACTOR * torch_err + EPS, (
            f"{what}: relative error {err:.2e}, more than {TORCH_FACTOR}x PyTorch's {torch_err:.2e}")


# ---- reductions and their gradients ------------------------------------------------------------
# Each: (the op on a minigrad or torch tensor, its float64 value and the float64 gradient of
# sum(op(x) * w) from x64 and w64, keeping the reduced dims in the reference).
def _n(x, dims):
    return int(np.prod([x.shape[d] for d in dims]))


def _ref_var(x, dims):
    mu = x.mean(axis=dims, keepdims=True)
    return ((x - mu) ** 2).sum(axis=dims, keepdims=True) / (_n(x, dims) - 1), mu


def _reference(op, x, w, dims):
    """(value, gradient) in float64; w has the reduced shape with keepdims."""
    if op == "sum":
        return x.sum(axis=dims, keepdims=True), np.broadcast_to(w, x.shape)
    if op == "mean":
        return x.mean(axis=dims, keepdims=True), np.broadcast_to(w / _n(x, dims), x.shape)
    if op == "var":
        var, mu = _ref_var(x, dims)
        return var, 2 * (x - mu) * w / (_n(x, dims) - 1)
    if op == "std":
        var, mu = _ref_var(x, dims)
        std = np.sqrt(var)
        return std, (x - mu) * w / ((_n(x, dims) - 1) * std)
    m = x.max(axis=dims, keepdims=True)
    lse = np.log(np.exp(x - m).sum(axis=dims, keepdims=True)) + m
    return lse, w * np.exp(x - lse)


def _run(lib, op, x, w, dim):
    """(value, gradient) of op over dim from float32 x, in minigrad or torch."""
    t = lib.tensor(x, requires_grad=True)
    out = getattr(t, op)(dim, keepdim=True)  # var and std: unbiased, both libraries' default
    (out * lib.tensor(w)).sum().backward()
    return out.detach().numpy(), t.grad.numpy()


REDUCTION_CASES = [
    ((182625, 64), (0,)),  # a BatchNorm statistic over the batch: the case
    ((100000, 8), (0,)),
    ((100000, 8), (1,)),
    ((100000, 8), (0, 1)),
    ((400, 250, 8), (0,)),
    ((400, 250, 8), (1,)),
    ((400, 250, 8), (2,)),
    ((400, 250, 8), (0, 1)),
    ((400, 250, 8), (0, 2)),
    ((400, 250, 8), (1, 2)),
    ((400, 250, 8), (0, 1, 2)),
]


@pytest.fixture(scope="module")
def big():
    return {}


@pytest.mark.parametrize("op", ["sum", "mean", "var", "std", "logsumexp"])
@pytest.mark.parametrize("shape,dims", REDUCTION_CASES, ids=[f"{s}-dim{d}" for s, d in REDUCTION_CASES])
def test_reductions_and_their_gradients_are_accurate_along_every_axis(op, shape, dims, big):
    if shape not in big:
        big.clear()
        x = inputs(shape)
        big[shape] = (x, x.astype(np.float64))
    x, x64 = big[shape]
    w = inputs(tuple(1 if i in dims else s for i, s in enumerate(shape)), seed=1) - 0.5
    ref_value, ref_grad = _reference(op, x64, w.astype(np.float64), dims)
    value, grad = _run(mg, op, x, w, dims)
    torch_errs = (None, None)
    if torch is not None:
        t_value, t_grad = _run(torch, op, x, w, dims)
        torch_errs = (relative_error(t_value, ref_value), relative_error(t_grad, ref_grad))
    check(relative_error(value, ref_value), torch_errs[0], SUM_BOUND, f"{op} over {dims} of {shape}")
    check(relative_error(grad, ref_grad), torch_errs[1], SUM_BOUND, f"{op}'s gradient over {dims} of {shape}")


def test_sum_over_the_middle_dim_of_a_transformer_sized_activation():
    """(8, 4096, 512) over dim 1 and over dims (0, 1): the shapes of a batch of sequences."""
    x = inputs((8, 4096, 512))
    for dims in ((1,), (0, 1)):
        ref = x.astype(np.float64).sum(axis=dims)
        err = relative_error(mg.tensor(x).sum(dims).numpy(), ref)
        torch_err = relative_error(torch.from_numpy(x).sum(dims).numpy(), ref) if torch is not None else None
        check(err, torch_err, SUM_BOUND, f"sum over {dims} of (8, 4096, 512)")


def test_batch_norm_normalization_over_the_batch():
    """(x - mean) / sqrt(var + eps) over dim 0 of (182625, 64), forward and backward (issue 34's case)."""
    x, w = inputs((182625, 64)), inputs((182625, 64), seed=1) - 1.0
    x64, w64 = x.astype(np.float64), w.astype(np.float64)

    def run(lib):
        t = lib.tensor(x, requires_grad=True)
        y = (t - t.mean(0, keepdim=True)) / (t.var(0, unbiased=False, keepdim=True) + 1e-5).sqrt()
        (y * lib.tensor(w)).sum().backward()
        return y.detach().numpy(), t.grad.numpy()

    mu = x64.mean(0, keepdims=True)
    rstd = 1 / np.sqrt(((x64 - mu) ** 2).mean(0, keepdims=True) + 1e-5)
    xhat = (x64 - mu) * rstd
    ref_grad = rstd * (w64 - w64.mean(0, keepdims=True) - xhat * (w64 * xhat).mean(0, keepdims=True))
    value, grad = run(mg)
    t_errs = [relative_error(a, r) for a, r in zip(run(torch), (xhat, ref_grad))] if torch is not None else [None, None]
    check(relative_error(value, xhat), t_errs[0], SUM_BOUND, "batch-norm normalization")
    check(relative_error(grad, ref_grad), t_errs[1], SUM_BOUND, "batch-norm normalization's gradient")


# ---- scans -------------------------------------------------------------------------------------
SCAN_CASES = [((100000,), 0), ((100000, 4), 0), ((100000, 4), 1), ((4, 100000), 1), ((300, 400, 4), 1)]


@pytest.mark.parametrize("shape,dim", SCAN_CASES, ids=[f"{s}-dim{d}" for s, d in SCAN_CASES])
def test_cumsum_and_its_gradient_are_accurate(shape, dim):
    x, w = inputs(shape), inputs(shape, seed=1) - 0.5
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    ref = np.cumsum(x64, axis=dim)
    ref_grad = np.flip(np.cumsum(np.flip(w64, dim), axis=dim), dim)

    def run(lib):
        t = lib.tensor(x, requires_grad=True)
        y = t.cumsum(dim)
        (y * lib.tensor(w)).sum().backward()
        return y.detach().numpy(), t.grad.numpy()

    value, grad = run(mg)
    t_errs = [relative_error(a, r) for a, r in zip(run(torch), (ref, ref_grad))] if torch is not None else [None, None]
    check(relative_error(value, ref), t_errs[0], SUM_BOUND, f"cumsum along {dim} of {shape}")
    check(relative_error(grad, ref_grad), t_errs[1], SUM_BOUND, f"cumsum's gradient along {dim} of {shape}")


# ---- broadcast gradients: every bias -----------------------------------------------------------
BROADCAST_CASES = [((182625, 64), (64,)), ((8, 4096, 512), (512,)), ((182625, 64), (182625, 1)),
                   ((400, 250, 8), (400, 1, 8))]


@pytest.mark.parametrize("shape,b_shape", BROADCAST_CASES, ids=[f"{s}+{b}" for s, b in BROADCAST_CASES])
def test_the_gradient_of_a_broadcast_operand_is_accurate(shape, b_shape):
    x, b, w = inputs(shape), inputs(b_shape, seed=2), inputs(shape, seed=1)
    axes = tuple(range(len(shape) - len(b_shape))) + tuple(
        len(shape) - len(b_shape) + i for i, s in enumerate(b_shape) if s == 1)
    ref = w.astype(np.float64).sum(axis=axes).reshape(b_shape)

    def run(lib):
        tb = lib.tensor(b, requires_grad=True)
        ((lib.tensor(x) + tb) * lib.tensor(w)).sum().backward()
        return tb.grad.numpy()

    torch_err = relative_error(run(torch), ref) if torch is not None else None
    check(relative_error(run(mg), ref), torch_err, SUM_BOUND, f"the gradient of b in x + b, {shape} + {b_shape}")


def test_linear_bias_gradient_over_many_rows():
    """linear's bias gradient on 32768 x 512 (issue 34's case): a sum over the rows of the output's gradient."""
    x, weight, bias = inputs((32768, 16)), inputs((512, 16), seed=1) * 0.1, inputs((512,), seed=2)
    w = inputs((32768, 512), seed=3)
    ref = w.astype(np.float64).sum(0)
    ref_w = w.astype(np.float64).T @ x.astype(np.float64)

    def run(lib):
        tb, tw = lib.tensor(bias, requires_grad=True), lib.tensor(weight, requires_grad=True)
        (F.linear(lib.tensor(x), tw, tb) if lib is mg else torch.nn.functional.linear(lib.tensor(x), tw, tb)
         ).mul(lib.tensor(w)).sum().backward()
        return tb.grad.numpy(), tw.grad.numpy()

    grad_b, grad_w = run(mg)
    t_errs = [relative_error(a, r) for a, r in zip(run(torch), (ref, ref_w))] if torch is not None else [None, None]
    check(relative_error(grad_b, ref), t_errs[0], SUM_BOUND, "linear's bias gradient")
    check(relative_error(grad_w, ref_w), t_errs[1], CONTRACTION_BOUND, "linear's weight gradient")


def test_layer_norm_weight_and_bias_gradients_over_many_rows():
    x, w = inputs((65536, 16)), inputs((65536, 16), seed=1)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    xhat = (x64 - x64.mean(1, keepdims=True)) / np.sqrt(x64.var(1, keepdims=True) + 1e-5)
    refs = ((w64 * xhat).sum(0), w64.sum(0))

    def run(lib):
        weight = lib.tensor(np.ones(16, np.float32), requires_grad=True)
        bias = lib.tensor(np.zeros(16, np.float32), requires_grad=True)
        functional = F if lib is mg else torch.nn.functional
        (functional.layer_norm(lib.tensor(x), (16,), weight, bias) * lib.tensor(w)).sum().backward()
        return weight.grad.numpy(), bias.grad.numpy()

    got = run(mg)
    t_errs = [relative_error(a, r) for a, r in zip(run(torch), refs)] if torch is not None else [None, None]
    check(relative_error(got[0], refs[0]), t_errs[0], SUM_BOUND, "layer norm's weight gradient")
    check(relative_error(got[1], refs[1]), t_errs[1], SUM_BOUND, "layer norm's bias gradient")


def test_einsum_of_two_operands_is_a_blas_product():
    """nd,ne->de over n = 100,000 (issue 34's case) and its gradient."""
    a, b, w = inputs((100000, 32)), inputs((100000, 24), seed=1), inputs((32, 24), seed=2)
    a64, b64, w64 = a.astype(np.float64), b.astype(np.float64), w.astype(np.float64)
    refs = (a64.T @ b64, b64 @ w64.T)

    def run(lib):
        ta = lib.tensor(a, requires_grad=True)
        out = lib.einsum("nd,ne->de", ta, lib.tensor(b))
        (out * lib.tensor(w)).sum().backward()
        return out.detach().numpy(), ta.grad.numpy()

    got = run(mg)
    t_errs = [relative_error(x, r) for x, r in zip(run(torch), refs)] if torch is not None else [None, None]
    check(relative_error(got[0], refs[0]), t_errs[0], CONTRACTION_BOUND, "einsum nd,ne->de")
    check(relative_error(got[1], refs[1]), t_errs[1], CONTRACTION_BOUND, "einsum nd,ne->de, its gradient")


# ---- the summation itself: NumPy's semantics, no large temporaries ------------------------------
def test_summation_gives_numpys_results_for_any_layout():
    from minigrad.kernels import summation

    rng = np.random.default_rng(3)
    for shape in [(), (1,), (5,), (3, 4), (1, 7), (17, 1, 3), (33, 5, 2), (2, 300, 3), (4097,), (1000, 3),
                  (3, 2000), (5, 1, 1, 4), (0, 3), (3, 0)]:
        x = rng.standard_normal(shape).astype(np.float32)
        views = [x] + ([x.T, x[::2], np.moveaxis(x, 0, -1)] if x.ndim >= 2 else []) + ([x[..., ::-1]] if x.ndim else [])
        for v in views:
            dims = [None] + list(range(v.ndim)) + [(0, v.ndim - 1)] * (v.ndim >= 2) + [-1] * (v.ndim >= 1)
            for dim in dims:
                for keepdims in (False, True):
                    got = summation.sum(v, dim, keepdims=keepdims)
                    ref = np.sum(v.astype(np.float64), axis=dim, keepdims=keepdims)
                    assert np.shape(got) == np.shape(ref) and np.asarray(got).dtype == np.float32
                    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
                    assert not np.may_share_memory(got, v)
                    if v.size:
                        np.testing.assert_allclose(summation.mean(v, dim, keepdims), np.mean(v, axis=dim, keepdims=keepdims),
                                                   rtol=1e-5, atol=1e-6)
    for dtype in (np.float64, np.int32, np.float16, bool):  # NumPy's own sums, in its dtypes
        x = (rng.standard_normal((50, 3)) * 3).astype(dtype)
        assert summation.sum(x, 0).dtype == np.sum(x, axis=0).dtype
        np.testing.assert_allclose(summation.sum(x, 0).astype(np.float64), np.sum(x.astype(np.float64), axis=0), rtol=1e-2)
    assert summation.sum(np.ones((3, 4), np.float32), 1, dtype=np.float64).dtype == np.float64
    with pytest.raises(Exception, match="out of bounds"):
        summation.sum(np.ones((3, 4), np.float32), 2)


def test_einsum_kernel_gives_numpys_results():
    from minigrad.kernels import summation

    rng = np.random.default_rng(4)
    cases = [("ij", "jk", "ik", (3, 4), (4, 5)), ("bij", "bjk", "bik", (2, 3, 4), (2, 4, 5)),
             ("nd", "ne", "de", (50, 3), (50, 2)), ("ij", "ij", "i", (4, 6), (4, 6)), ("ij", "ij", "ij", (4, 6), (4, 6)),
             ("ijk", "jl", "lk", (2, 3, 4), (3, 5)), ("ij", "kj", "", (2, 3), (4, 3)), ("bij", "j", "ib", (2, 3, 4), (4,)),
             ("aij", "bjk", "abik", (1, 3, 4), (2, 4, 5)), ("abc", "cd", "db", (2, 3, 4), (4, 6))]
    for sa, sb, so, shape_a, shape_b in cases:
        a, b = rng.standard_normal(shape_a).astype(np.float32), rng.standard_normal(shape_b).astype(np.float32)
        got = summation.einsum([sa, sb], so, a, b)
        ref = np.einsum(f"{sa},{sb}->{so}", a.astype(np.float64), b.astype(np.float64))
        assert got.shape == ref.shape and got.dtype == np.float32, (sa, sb, so)
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((3, 4), (4, 5), (5, 2)))
    np.testing.assert_allclose(summation.einsum(["ij", "jk", "kl"], "il", a, b, c), a @ b @ c, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(summation.einsum(["ijk"], "kj", a[:, :, None] * np.ones(2, np.float32)),
                               (a[:, :, None] * np.ones(2)).sum(0).T, rtol=1e-6)


def test_summation_makes_no_large_temporaries():
    """The extra memory of a sum along a non-contiguous axis is the cascade's first level: 1/16 of the
    input, never a float64 copy; cumsum's float64 blocks are small (tracemalloc sees NumPy's buffers)."""
    import tracemalloc

    from minigrad.kernels import summation

    x = inputs((182625, 64))
    for fn, out_bytes in ((lambda: summation.sum(x, 0), 64 * 4), (lambda: summation.sum(x[:, ::2], 0), 32 * 4),
                          (lambda: summation.sum_to_shape(x, (64,)), 64 * 4),
                          (lambda: summation.cumsum(x, 0), x.nbytes), (lambda: summation.cumsum(x, 1), x.nbytes)):
        tracemalloc.start()
        try:
            fn()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak - out_bytes < 0.1 * x.nbytes


# ---- the tails -----------------------------------------------------------------------------------
def _grid():
    """float32 values over the range where sigmoid's tails are normal numbers, both signs, and 0."""
    magnitudes = np.logspace(-6, np.log10(87.0), 3000)
    return np.concatenate([-magnitudes[::-1], [0.0], magnitudes]).astype(np.float32)


def _sigmoid64(x):
    return np.where(x >= 0, 1 / (1 + np.exp(-np.abs(x))), np.exp(-np.abs(x)) / (1 + np.exp(-np.abs(x))))


def check_tail(got, ref, what, scale=None):
    """Elementwise: |got - ref| <= TAIL_BOUND * scale, scale = |ref| by default, where ref is normal."""
    got, ref = np.asarray(got, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    scale = np.abs(ref) if scale is None else scale
    normal = np.abs(ref) >= TINY
    errors = np.abs(got - ref)[normal] / scale[normal]
    worst = int(np.argmax(errors))
    assert errors[worst] <= TAIL_BOUND, (
        f"{what}: error {errors[worst] / EPS:.1f} eps at x = {np.flatnonzero(normal)[worst]}")


def _value_and_grad(fn, x):
    t = mg.tensor(x, requires_grad=True)
    y = fn(t)
    y.sum().backward()
    return y.detach().numpy(), t.grad.numpy()


def test_sigmoid_is_accurate_in_both_tails():
    x = _grid()
    x64 = x.astype(np.float64)
    s, c = _sigmoid64(x64), _sigmoid64(-x64)
    y, grad = _value_and_grad(lambda t: t.sigmoid(), x)
    check_tail(y, s, "sigmoid")
    check_tail(grad, s * c, "sigmoid's derivative")
    np.testing.assert_allclose(mg.tensor([-20.0, -15.0, 20.0]).sigmoid().numpy(),
                               [2.0611537e-9, 3.0590232e-7, 1.0], rtol=4 * EPS)
    _, grad = _value_and_grad(lambda t: t.sigmoid(), np.array([20.0, -20.0], np.float32))
    np.testing.assert_allclose(grad, [2.0611537e-9, 2.0611537e-9], rtol=4 * EPS)


def test_silu_is_accurate_in_both_tails():
    x = _grid()
    x64 = x.astype(np.float64)
    s, c = _sigmoid64(x64), _sigmoid64(-x64)
    y, grad = _value_and_grad(lambda t: F.silu(t), x)
    check_tail(y, x64 * s, "silu")
    check_tail(grad, s * (1 + x64 * c), "silu's derivative", scale=s * (1 + np.abs(x64) * c))
    np.testing.assert_allclose(F.silu(mg.tensor([-20.0])).numpy(), [-4.1223072e-8], rtol=4 * EPS)


def test_bce_with_logits_is_accurate_in_both_tails():
    x = _grid()
    x64 = x.astype(np.float64)
    s, c = _sigmoid64(x64), _sigmoid64(-x64)
    softplus_pos, softplus_neg = np.logaddexp(0, x64), np.logaddexp(0, -x64)  # -log(1 - s), -log(s)
    for target in (0.0, 1.0, 0.25):
        for pos_weight in (None, 3.0):
            y = np.full_like(x, target)
            pw = 1.0 if pos_weight is None else pos_weight
            extra = {} if pos_weight is None else {"pos_weight": mg.tensor([pos_weight])}
            value, grad = _value_and_grad(
                lambda t: F.binary_cross_entropy_with_logits(t, mg.tensor(y), reduction="none", **extra), x)
            what = f"BCE with logits, target {target}, pos_weight {pos_weight}"
            ref = pw * target * softplus_neg + (1 - target) * softplus_pos
            check_tail(value, ref, what, scale=pw * target * softplus_neg + (1 - target) * softplus_pos)
            check_tail(grad, (1 - target) * s - pw * target * c, what + ", its derivative",
                       scale=(1 - target) * s + pw * target * c)
    loss = F.binary_cross_entropy_with_logits(mg.tensor([-20.0, 20.0]), mg.tensor([0.0, 1.0]), reduction="none")
    np.testing.assert_allclose(loss.numpy(), [2.0611537e-9, 2.0611537e-9], rtol=4 * EPS)


def test_softplus_log_sigmoid_and_tanh_derivative_kernels():
    from minigrad.kernels import elementwise

    x = _grid()
    x64 = x.astype(np.float64)
    check_tail(elementwise.softplus(x), np.logaddexp(0, x64), "softplus")
    check_tail(elementwise.log_sigmoid(x), -np.logaddexp(0, -x64), "log_sigmoid")
    check_tail(elementwise.sigmoid_pair(x)[1], _sigmoid64(-x64), "1 - sigmoid, log_sigmoid's derivative")
    check_tail(elementwise.sigmoid_grad(x), _sigmoid64(x64) * _sigmoid64(-x64), "sigmoid_grad")
    x = x[np.abs(x) < 40]
    check_tail(elementwise.tanh_grad(x), 1 / np.cosh(x.astype(np.float64)) ** 2, "tanh's derivative")
    for dtype in (np.float16, np.float64):  # the same forms in the other float dtypes
        assert elementwise.sigmoid(np.array([-3.0], dtype)).dtype == dtype
    assert float(elementwise.sigmoid(np.float64(-700.0))) > 0


def test_gelu_tail_kernels():
    """GELU's lower tail: x Phi(x) is a normal float32 down to x = -13, where 1 + erf(x / sqrt 2) is 0."""
    from minigrad.kernels import elementwise

    x = -np.logspace(np.log10(3.0001), np.log10(13.0), 400).astype(np.float32)
    x64 = x.astype(np.float64)
    phi_cdf = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in x64])
    y, cdf = np.zeros_like(x), np.zeros_like(x)
    elementwise.gelu_tails(x, y, cdf)
    check_tail(y, x64 * phi_cdf, "GELU's lower tail")
    check_tail(cdf, phi_cdf, "Phi's lower tail")
    d = elementwise.gelu_grad_tails(x, np.zeros_like(x))
    check_tail(d, phi_cdf + x64 * np.exp(-x64 * x64 / 2) / math.sqrt(2 * math.pi), "GELU's derivative, lower tail")
    x = np.concatenate([x, np.linspace(-3, 6, 200, dtype=np.float32)])
    x64 = x.astype(np.float64)
    u2 = 2 * math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64 ** 3)
    s, c = _sigmoid64(u2), _sigmoid64(-u2)
    du = math.sqrt(2 / math.pi) * (1 + 3 * 0.044715 * x64 ** 2)
    check_tail(elementwise.gelu_tanh(x), x64 * s, "tanh GELU")
    check_tail(elementwise.gelu_tanh_grad(x), s + 2 * x64 * s * c * du, "tanh GELU's derivative",
               scale=s + 2 * np.abs(x64) * s * c * du)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_lower_tail_in_float32_through_the_kernel(approximate):
    # F.gelu in float32 runs the GELU kernel: its value and derivative where x < -3 (1 + erf(x / sqrt 2)
    # and 1 + tanh(u) cancel there) within 16 float32 epsilons of the float64 values (the tanh form: about 11
    # at x = -3, where its float32 body meets the float64 tail), while they are normal numbers
    x64 = np.linspace(-9.0, -3.0, 601).astype(np.float32).astype(np.float64)  # the float32 inputs, exactly
    x = mg.tensor(x64.astype(np.float32), requires_grad=True)
    y = F.gelu(x, approximate=approximate)
    y.sum().backward()
    if approximate == "none":
        cdf = 0.5 * np.array([math.erfc(-v / math.sqrt(2)) for v in x64])
        ref, dref = x64 * cdf, cdf + x64 * np.exp(-x64 * x64 / 2) / math.sqrt(2 * math.pi)
    else:
        u = math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64 ** 3)
        s = 1 / (1 + np.exp(-2 * u))
        ref = x64 * s
        dref = s + 2 * x64 * s * (1 - s) * math.sqrt(2 / math.pi) * (1 + 3 * 0.044715 * x64 ** 2)
    normal = (np.abs(ref) > np.finfo(np.float32).tiny) & (np.abs(dref) > np.finfo(np.float32).tiny)
    eps = np.finfo(np.float32).eps
    assert np.max(np.abs(y.detach().numpy()[normal] - ref[normal]) / np.abs(ref[normal])) < 16 * eps
    assert np.max(np.abs(x.grad.numpy()[normal] - dref[normal]) / np.abs(dref[normal])) < 16 * eps
