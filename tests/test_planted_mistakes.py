"""Tests that would notice: each catches a mistake that, planted in the code, passed the rest of the
suite without PyTorch (issue 39, item 4). None of them needs PyTorch; each has a reference of its own:
central differences in float64, a closed form, NumPy, or an independent path through the library.

One blind spot runs through several of them: gradgradcheck differentiates the recorded first derivative
(create_graph=True) and compares with finite differences of that same recorded derivative, so a recorded
first derivative that is wrong, but consistently so, passes it. Here the recorded first derivative is
compared with the plain one (backward without create_graph, which a kernel computes with its own
shortcut and gradcheck checks), and its derivative with finite differences of the plain one.
"""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.kernels import summation
from minigrad.composites import without_kernels
from test_kernels import CASES as KERNEL_CASES
from test_kernels import _values_and_grads


def leaf(array):
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=True)


def normal(*shape, seed=0, scale=1.0):
    return leaf(np.random.default_rng(seed).standard_normal(shape) * scale)


def _plain_grads(fn, inputs, upstream):
    """d sum(upstream * fn(inputs)) / d inputs by backward() without create_graph: the kernels' own shortcuts."""
    out = fn(*inputs)
    return [g.numpy().copy() for g in mg.autograd.grad(out, inputs, upstream)]


def _finite_differences(f, arrays, k, eps=1e-6):
    """Central differences in float64 of the array-valued f(*arrays) with respect to arrays[k]:
    one array of shape arrays[k].shape + f's shape."""
    base = [np.array(a, dtype=np.float64) for a in arrays]
    columns = []
    for i in range(base[k].size):
        plus, minus = [a.copy() for a in base], [a.copy() for a in base]
        plus[k].flat[i] += eps
        minus[k].flat[i] -= eps
        columns.append((np.asarray(f(*plus)) - np.asarray(f(*minus))) / (2 * eps))
    return np.stack(columns).reshape(base[k].shape + np.shape(columns[0]))


# ---- the recorded first derivative of every kernel, and its derivative --------------------------------
# Kernels given the same tensor twice (a recorded backward replays the composition, which already adds up
# both uses: giving that gradient at both positions counts it twice), BCE with logits with pos_weight (the
# composition the kernel replays weighs the positive term), layer norm without weight and bias.
SQUARE = normal(4, 4, seed=21)


def _layer_norm_by_own_row(x):
    w = x[0]  # one non-leaf tensor, as weight and as bias
    return F.layer_norm(x, (6,), w, w)


SHARED = {
    "linear(x, x)": (lambda x: F.linear(x, x), [SQUARE]),
    "linear(x, x, b)": (lambda x, b: F.linear(x, x, b), [SQUARE, normal(4, seed=22)]),
    "layer_norm(x, w, w)": (lambda x, w: F.layer_norm(x, (6,), w, w), [normal(3, 6, seed=23), normal(6, seed=24)]),
    "layer_norm(x, w, w), w = x[0]": (lambda x: _layer_norm_by_own_row(x), [normal(3, 6, seed=25)]),
    "bce_with_logits(x, x)": (lambda x: F.binary_cross_entropy_with_logits(x, x, reduction="none"),
                              [normal(3, 4, seed=26)]),
    "bce_with_logits pos_weight": (
        lambda x, y, pw: F.binary_cross_entropy_with_logits(x, y.sigmoid(), pos_weight=pw, reduction="none"),
        [normal(3, 4, seed=27, scale=3), normal(3, 4, seed=28), leaf([0.5, 1.5, 3.0, 0.25])]),
    "bce_with_logits pos_weight = target": (
        lambda x, y: F.binary_cross_entropy_with_logits(x, y, pos_weight=y, reduction="sum"),
        [normal(3, 4, seed=29), leaf(np.random.default_rng(30).uniform(0.1, 0.9, (3, 4)))]),
    "kl_div(x, x)": (lambda x: F.kl_div(x, x, reduction="sum", log_target=True), [normal(3, 4, seed=31)]),
    "layer_norm no affine": (lambda x: F.layer_norm(x, (6,)), [normal(3, 6, seed=32)]),
}
RECORDED_CASES = {**KERNEL_CASES, **SHARED}


@pytest.mark.parametrize("name", sorted(RECORDED_CASES))
def test_the_recorded_first_derivative_is_the_plain_one(name):
    """autograd.grad(..., create_graph=True) (the composition replayed) equals backward's (the kernel's)."""
    fn, inputs = RECORDED_CASES[name]
    upstream = mg.tensor(np.random.default_rng(1).standard_normal(fn(*inputs).shape))
    plain = _plain_grads(fn, inputs, upstream)
    recorded = mg.autograd.grad(fn(*inputs), inputs, upstream, create_graph=True)
    for p, r in zip(plain, recorded):
        np.testing.assert_allclose(r.detach().numpy(), p, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", sorted(SHARED))
def test_the_kernel_gives_the_compositions_values_and_gradients_here_too(name):
    fn, inputs = SHARED[name]
    kernel_out, kernel_grads = _values_and_grads(fn, inputs)
    with without_kernels():
        composed_out, composed_grads = _values_and_grads(fn, inputs)
    np.testing.assert_allclose(kernel_out, composed_out, rtol=1e-10, atol=1e-12)
    for k, c in zip(kernel_grads, composed_grads):
        np.testing.assert_allclose(k, c, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", sorted(SHARED))
def test_the_plain_first_derivative_of_a_tensor_passed_twice_is_the_finite_differences(name):
    fn, inputs = SHARED[name]
    arrays = [t.detach().numpy().copy() for t in inputs]
    upstream = np.random.default_rng(2).standard_normal(fn(*inputs).shape)

    def loss(*values):
        with mg.no_grad():
            return float((fn(*map(mg.tensor, values)).numpy() * upstream).sum())

    plain = _plain_grads(fn, inputs, mg.tensor(upstream))
    for k, p in enumerate(plain):
        np.testing.assert_allclose(p, _finite_differences(loss, arrays, k), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(RECORDED_CASES))
def test_the_second_derivative_is_finite_differences_of_the_plain_first(name):
    """w . d/dx_k (v . d fn / dx) from the recorded graph, against central differences of the plain
    (kernel) first derivative: a reference the recorded graph does not take part in."""
    fn, inputs = RECORDED_CASES[name]
    arrays = [t.detach().numpy().copy() for t in inputs]
    rng = np.random.default_rng(3)
    upstream = rng.standard_normal(fn(*inputs).shape)
    weights = [rng.standard_normal(a.shape) for a in arrays]

    def first(*values):  # sum_j w_j . dL/dx_j by the plain backward
        tensors = [leaf(v) for v in values]
        return sum(float((g * w).sum()) for g, w in zip(_plain_grads(fn, tensors, mg.tensor(upstream)), weights))

    recorded = mg.autograd.grad(fn(*inputs), inputs, mg.tensor(upstream), create_graph=True)
    total = sum((g * mg.tensor(w)).sum() for g, w in zip(recorded, weights) if g.requires_grad)
    if not isinstance(total, mg.Tensor):  # no first derivative depends on the inputs: all second ones 0
        second = [np.zeros_like(a) for a in arrays]
    else:
        second = [np.zeros_like(a) if g is None else g.numpy()
                  for g, a in zip(mg.autograd.grad(total, inputs, allow_unused=True), arrays)]
    for k, s in enumerate(second):
        np.testing.assert_allclose(s, _finite_differences(first, arrays, k), rtol=1e-5, atol=1e-7)


# ---- x and x.detach() in one op, at second order: one array for two tensors ----------------------------
@pytest.mark.parametrize("form", ["x * c", "c * x", "x ** c", "c ** x"])
def test_an_op_given_x_and_x_detach_differentiates_twice_only_through_x(form):
    """loss = sum(u * f(x)^2) with c = x.detach() a constant; closed forms of the first and second derivative
    (w . d/dx of the first, w a direction)."""
    rng = np.random.default_rng(4)
    xv = rng.uniform(0.5, 2.0, (3, 4))
    u, w = rng.standard_normal(xv.shape), rng.standard_normal(xv.shape)
    c = xv  # the detached copy's values
    f = {"x * c": lambda x, c: x * c, "c * x": lambda x, c: c * x,
         "x ** c": lambda x, c: x ** c, "c ** x": lambda x, c: c ** x}[form]
    first_ref, second_ref = {  # d(f^2)/dx = 2 f f' and its derivative
        "x * c": (2 * xv * c ** 2, 2 * c ** 2),
        "c * x": (2 * xv * c ** 2, 2 * c ** 2),
        "x ** c": (2 * c * xv ** (2 * c - 1), 2 * c * (2 * c - 1) * xv ** (2 * c - 2)),
        "c ** x": (2 * c ** (2 * xv) * np.log(c), 4 * c ** (2 * xv) * np.log(c) ** 2),
    }[form]
    x = leaf(xv)
    y = f(x, x.detach())
    (g,) = mg.autograd.grad((y * y * mg.tensor(u)).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), u * first_ref, rtol=1e-12)
    (h,) = mg.autograd.grad((g * mg.tensor(w)).sum(), x)
    np.testing.assert_allclose(h.numpy(), u * w * second_ref, rtol=1e-12)


# ---- a saved array shared with another tensor, changed in place before backward ------------------------
@pytest.mark.parametrize("form", ["x * c", "c * x", "x ** c", "c ** x"])
@pytest.mark.parametrize("changed", ["x", "c"])
def test_changing_x_or_its_detached_copy_after_an_op_saved_them_raises_at_backward(form, changed):
    """The op saved x.detach()'s array, a NumPy view of x's (told apart from x's own): changing either
    tensor in place changes the saved values, so backward must refuse, as PyTorch does."""
    x = leaf(np.random.default_rng(5).uniform(0.5, 2.0, (3, 4))) * 1  # not a leaf: it may change in place
    c = x.detach()
    y = {"x * c": lambda: x * c, "c * x": lambda: c * x, "x ** c": lambda: x ** c, "c ** x": lambda: c ** x}[form]()
    (x if changed == "x" else c).add_(10)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# ---- the cascade of sum_of_products along a non-contiguous axis ------------------------------------------
@pytest.mark.parametrize("rows", [255, 256, 257, 271, 300, 1000, 4111])
@pytest.mark.parametrize("axis", [0, 1])
def test_sum_of_products_of_float32_is_the_float64_sum(rows, axis):
    """Over more than 16 x 16 rows the sum is split into slabs of whole 16-row blocks and a tail; the
    tail must count once (rows not a multiple of 16). Reference: the float64 sum by NumPy."""
    rng = np.random.default_rng(rows)
    shape = (rows, 7) if axis == 0 else (5, rows, 3)
    a, b = rng.standard_normal(shape).astype(np.float32), rng.standard_normal(shape).astype(np.float32)
    got = summation.sum_of_products(a, b, axis)
    exact = np.einsum("...,...->...", a.astype(np.float64), b.astype(np.float64)).sum(axis)
    scale = np.abs(a.astype(np.float64) * b).sum(axis)
    assert got.dtype == np.float32 and got.shape == exact.shape
    assert np.all(np.abs(got - exact) <= 1e-6 * scale), np.max(np.abs(got - exact) / scale)


@pytest.mark.parametrize("rows", [300, 257, 64])
def test_layer_norm_weight_and_bias_gradients_over_many_rows_in_float32(rows):
    """dweight = sum over rows of g * x_hat, dbias = sum of g: against NumPy in float64."""
    rng = np.random.default_rng(6)
    xv = rng.standard_normal((rows, 8)).astype(np.float32)
    g = rng.standard_normal((rows, 8)).astype(np.float32)
    x = mg.tensor(xv, requires_grad=True)
    w = mg.tensor(np.ones(8, np.float32) * 1.5, requires_grad=True)
    b = mg.tensor(np.zeros(8, np.float32), requires_grad=True)
    (F.layer_norm(x, (8,), w, b) * mg.tensor(g)).sum().backward()
    x64 = xv.astype(np.float64)
    x_hat = (x64 - x64.mean(1, keepdims=True)) / np.sqrt(x64.var(1, keepdims=True) + 1e-5)
    scale = np.abs(g * x_hat).sum(0)
    assert np.all(np.abs(w.grad.numpy() - (g * x_hat).sum(0)) <= 1e-5 * scale)
    assert np.all(np.abs(b.grad.numpy() - g.astype(np.float64).sum(0)) <= 1e-5 * np.abs(g).sum(0))


# ---- an in-place change through a permuted view --------------------------------------------------------
PERMUTATIONS = [((3, 3, 3), (1, 2, 0)), ((3, 3, 3), (2, 0, 1)), ((2, 3, 4), (1, 2, 0)), ((2, 3, 4), (2, 0, 1)),
                ((2, 3, 4), (1, 0, 2)), ((2, 2, 3, 2), (3, 0, 2, 1))]


@pytest.mark.parametrize("shape, dims", PERMUTATIONS)
def test_an_in_place_change_through_a_permuted_view(shape, dims):
    """b.permute(dims).mul_(w) changes b: its value against NumPy's view written in place, its gradients
    (the view written back through the inverse permutation) against finite differences."""
    rng = np.random.default_rng(7)
    av = rng.standard_normal(shape)
    wv = rng.standard_normal(tuple(shape[d] for d in dims))

    def fn(a, w):
        b = a * 1
        b.permute(*dims).mul_(w)
        return b * b.sum(0)  # b read again after the change, whole and reduced

    expected = av.copy()
    np.transpose(expected, dims)[...] *= wv
    np.testing.assert_allclose(fn(leaf(av), leaf(wv)).detach().numpy(), expected * expected.sum(0), rtol=1e-12)
    assert mg.gradcheck(fn, [leaf(av), leaf(wv)])
    assert mg.gradgradcheck(fn, [leaf(av), leaf(wv)])


# ---- layer norm without weight and bias, its upstream gradient shared with another branch ----------------
@pytest.mark.parametrize("other", ["+ x", "+ 2 x", "* 3 then + x", "twice"])
def test_layer_norm_without_affine_leaves_a_shared_upstream_gradient_alone(other):
    """Add hands one gradient array to both its inputs: the layer norm's backward must not change it in
    place under the other branch. Reference: finite differences."""
    fn = {"+ x": lambda x: F.layer_norm(x, (6,)) + x,
          "+ 2 x": lambda x: x * 2 + F.layer_norm(x, (6,)),
          "* 3 then + x": lambda x: F.layer_norm(x * 3, (6,)) + x * 3,
          "twice": lambda x: F.layer_norm(x, (6,)) + F.layer_norm(x, (6,), eps=0.5)}[other]
    assert mg.gradcheck(fn, [normal(4, 6, seed=8)])
    assert mg.gradcheck(lambda x: F.layer_norm(x, (2, 3)) + x, [normal(2, 2, 3, seed=9)])  # over two dims


# ---- i1 (i0's derivative) and its derivative at 0 ------------------------------------------------------
def _i1_series(x):
    """I1(x) = sum_k (x/2)^(2k+1) / (k! (k+1)!), 80 terms in float64 (|x| <= 10 here)."""
    term, total = x / 2, np.zeros_like(x)
    for k in range(80):
        total = total + term
        term = term * (x / 2) ** 2 / ((k + 1) * (k + 2))
    return total


def test_i1_and_its_derivative_against_the_series():
    """I1 by its power series; dI1/dx = I0(x) - I1(x)/x (np.i0), 1/2 at x = 0 (the limit of the series'
    derivative: its first term is x/2); and i0's second derivative, which is the same, at 0 too."""
    xv = np.array([0.0, -0.0, 1e-8, -1e-3, 0.5, -1.5, 3.0, 7.0, -10.0])
    x = leaf(xv)
    y = mg.ops.gamma.I1.apply(x)
    np.testing.assert_allclose(y.detach().numpy(), _i1_series(xv), rtol=1e-12, atol=1e-300)
    (g,) = mg.autograd.grad(y.sum(), x)
    nonzero = np.where(xv == 0, 1.0, xv)
    expected = np.where(xv == 0, 0.5, np.i0(xv) - _i1_series(nonzero) / nonzero)
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-9)
    assert g.numpy()[0] == 0.5 and g.numpy()[1] == 0.5
    (d1,) = mg.autograd.grad(mg.i0(x).sum(), x, create_graph=True)
    (d2,) = mg.autograd.grad(d1.sum(), x)
    np.testing.assert_allclose(d1.detach().numpy(), _i1_series(xv), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(d2.numpy(), expected, rtol=1e-9)


# ---- huber loss: its values by the closed form -----------------------------------------------------------
@pytest.mark.parametrize("delta", [0.5, 1.0, 2.5])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_huber_loss_values_by_the_closed_form(delta, reduction):
    """d = x - y: d^2 / 2 where |d| < delta, delta (|d| - delta / 2) elsewhere (|d| = delta: both are
    delta^2 / 2), ±inf: inf. The function and the module, against NumPy."""
    rng = np.random.default_rng(10)
    xv = np.concatenate([rng.standard_normal(12) * 2, [delta, -delta, 0.0, np.inf, 3 * delta]])
    yv = np.concatenate([rng.standard_normal(12), [0.0, 0.0, 0.0, 1.0, -delta]])
    d = xv - yv
    pointwise = np.where(np.abs(d) < delta, 0.5 * d ** 2, delta * (np.abs(d) - 0.5 * delta))
    expected = {"none": pointwise, "mean": pointwise.mean(), "sum": pointwise.sum()}[reduction]
    x, y = leaf(xv), mg.tensor(yv)
    for got in (F.huber_loss(x, y, reduction=reduction, delta=delta),
                mg.nn.HuberLoss(reduction=reduction, delta=delta)(x, y)):
        np.testing.assert_allclose(got.detach().numpy(), expected, rtol=1e-13)
    finite = leaf(xv[:-2])
    assert mg.gradcheck(lambda t: F.huber_loss(t, mg.tensor(yv[:-2]), reduction=reduction, delta=delta), [finite])


# ---- every kernel in float32, against itself in float64 ------------------------------------------------
# Some kernels take another path for float32 (sum_of_products' cascade runs for float32 only), which the
# float64 comparisons above never reach. Rows: 300, more than 16 x 16 and not a multiple of 16.
FLOAT32_CASES = {
    "linear": (lambda x, w, b: F.linear(x, w, b), [(300, 6), (4, 6), (4,)]),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (6,), w, b), [(300, 6), (6,), (6,)]),
    "layer_norm no affine": (lambda x: F.layer_norm(x, (6,)), [(300, 6)]),
    "softmax over dim 0": (lambda x: x.softmax(0), [(300, 6)]),
    "log_softmax": (lambda x: x.log_softmax(-1), [(300, 6)]),
    "var over dim 0": (lambda x: x.var(0), [(300, 6)]),
    "std": (lambda x: x.std(1), [(300, 6)]),
    "gelu": (lambda x: F.gelu(x), [(300, 6)]),
    "silu": (lambda x: F.silu(x), [(300, 6)]),
    "sigmoid": (lambda x: x.sigmoid(), [(300, 6)]),
    "cross_entropy": (lambda x: F.cross_entropy(x, mg.tensor(np.arange(300) % 6)), [(300, 6)]),
    "bce_with_logits pos_weight": (lambda x, y, pw: F.binary_cross_entropy_with_logits(x, y.sigmoid(), pos_weight=pw),
                                   [(300, 6), (300, 6), (6,)]),
    "kl_div": (lambda x, y: F.kl_div(x.log_softmax(-1), y.softmax(-1), reduction="batchmean"), [(300, 6), (300, 6)]),
}


@pytest.mark.parametrize("name", sorted(FLOAT32_CASES))
def test_a_kernel_in_float32_gives_its_float64_values_and_gradients(name):
    fn, shapes = FLOAT32_CASES[name]
    rng = np.random.default_rng(11)
    arrays = [rng.standard_normal(s) + (1.0 if len(s) == 1 else 0.0) for s in shapes]  # (1-D: weights near 1)
    results = {}
    for dtype in (np.float32, np.float64):
        inputs = [mg.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
        out = fn(*inputs)
        upstream = np.random.default_rng(12).standard_normal(out.shape)
        grads = mg.autograd.grad(out, inputs, mg.tensor(upstream.astype(dtype)))
        assert out.dtype == mg.tensor(np.zeros(1, dtype)).dtype and all(g.dtype == out.dtype for g in grads)
        results[dtype] = [out.detach().numpy()] + [g.numpy() for g in grads]
    for got, exact in zip(results[np.float32], results[np.float64]):
        scale = np.max(np.abs(exact)) + 1e-30
        assert np.max(np.abs(got - exact)) <= 2e-5 * scale, (np.max(np.abs(got - exact)), scale)
