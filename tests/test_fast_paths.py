"""The fast paths behind three former performance cliffs (issue 22), checked against the slow ones.

- pow with a constant exponent: small integers by multiplication, 0.5 and -0.5 by a square root
  (elementwise.power); values against np.power and PyTorch over a grid with zeros, infinities and NaN.
- the backward of reading whole slices at an integer index (x[idx], x[:, idx], index_select,
  embedding): sorted sums (util.take_grad) instead of np.add.at, which stays the reference.
- the 2-norm: sqrt(sum x^2) as a dot of x with itself, gradient x / ||x|| and 0 where ||x|| = 0.
- a reduction's gradient spread back over its input (util.broadcast_to): the view np.broadcast_to
  makes, built directly (issue 41), with the same shape, strides, values and read-only flag.
Gradients are checked against central finite differences in float64 (mg.gradcheck).
"""
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.ops.util import broadcast_to, take_axis, take_grad

EXPONENTS = [-2, -1, -0.5, 0, 0.5, 1, 2, 3, 4, 5, 2.5]


def leaf(array):
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=True)


# ---- pow with a constant exponent ----------------------------------------------------------------
def grid(dtype):
    """Negatives, both zeros, infinities, NaN, numbers whose powers overflow, and random values."""
    special = [-np.inf, -1e15, -7.5, -2.0, -1.0, -0.3, -1e-5, -0.0, 0.0, 1e-5, 0.3, 1.0, 2.0, 7.5, 1e15, np.inf, np.nan]
    rng = np.random.default_rng(0)
    return np.concatenate([special, rng.standard_normal(200) * 3]).astype(dtype)


def expected_pow(x, p):
    """np.power, except (-inf) ** -0.5 and (-0) ** -0.5: minigrad computes x ** -0.5 as 1 / sqrt(x), as
    PyTorch does, so these two are nan and -inf (PyTorch's values) where np.power gives 0 and inf."""
    with np.errstate(all="ignore"):
        want = np.power(x, x.dtype.type(p))
    if p == -0.5:
        want[x == -np.inf] = np.nan
        want[(x == 0) & np.signbit(x)] = -np.inf
    return want


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("p", EXPONENTS)
def test_pow_matches_np_power_over_the_grid(p, dtype):
    x = grid(dtype)
    with np.errstate(all="ignore"):
        got = (mg.tensor(x) ** p).numpy()
    want = expected_pow(x, p)
    assert got.dtype == dtype
    # Each product rounds where pow rounds once: within 5 ulps (eps = 1 ulp at 1) of np.power, itself
    # within 1 ulp of the exact value. A result below the smallest normal number may be flushed to 0 by
    # 1 / x^n where np.power keeps a subnormal (1e15 ** -3 in float32): hence atol = tiny.
    finfo = np.finfo(dtype)
    np.testing.assert_allclose(got, want, rtol=5 * finfo.eps, atol=finfo.tiny, equal_nan=True)
    # the same infinities and NaNs, with the same signs (x ** 3 keeps -inf and -0 negative)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(got[np.isinf(want)], want[np.isinf(want)])
    zeros = want == 0
    assert np.array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))


def test_pow_special_values_as_stated():
    x = mg.tensor([0.0, -0.0, -1.0, np.inf, np.nan])
    with np.errstate(all="ignore"):
        assert (x ** 0).tolist() == [1.0] * 5  # 0 ** 0 = 1, also inf ** 0 and nan ** 0
        assert (x ** -2).tolist()[:2] == [np.inf, np.inf]
        assert (x ** -1).tolist()[:2] == [np.inf, -np.inf]
        assert np.isnan((x ** 0.5).numpy()[2])  # negative ** 0.5 is nan
        assert (x ** 0.5).numpy()[3] == np.inf
        assert np.isnan((x ** 3).numpy()[4])


def test_pow_matches_pytorch_over_the_grid():
    torch = pytest.importorskip("torch")
    x = grid(np.float32)
    for p in EXPONENTS:
        with np.errstate(all="ignore"):
            got = (mg.tensor(x) ** p).numpy()
        want = torch.pow(torch.from_numpy(x), p).numpy()
        np.testing.assert_allclose(got, want, rtol=5 * np.finfo(np.float32).eps,
                                   atol=np.finfo(np.float32).tiny, equal_nan=True, err_msg=f"x ** {p}")


def test_pow_by_a_0d_exponent_tensor_takes_the_same_path():
    x = grid(np.float32)
    for p in (3.0, -0.5, 2.5):
        with np.errstate(all="ignore"):
            by_tensor = mg.pow(mg.tensor(x), mg.tensor(p)).numpy()
            by_number = (mg.tensor(x) ** p).numpy()
        np.testing.assert_array_equal(by_tensor, by_number)


def test_pow_of_integer_tensors_is_exact_and_refuses_negative_powers():
    x = mg.tensor([-3, -1, 0, 2, 7])
    for p in (0, 1, 2, 3, 4, 5):
        assert (x ** p).dtype == mg.int64
        assert (x ** p).tolist() == np.power(np.array([-3, -1, 0, 2, 7]), p).tolist()
    with pytest.raises(ValueError, match="negative integer power"):
        x ** -1


def test_pow_1_is_a_new_tensor():
    x = mg.tensor([1.0, -2.0])
    y = x ** 1
    y += 1
    assert x.tolist() == [1.0, -2.0] and y.tolist() == [2.0, -1.0]


@pytest.mark.parametrize("p", EXPONENTS)
def test_pow_gradcheck(p):
    rng = np.random.default_rng(1)
    if float(p).is_integer():  # any sign, kept off 0 where x^(p-1) would blow up
        x = rng.choice([-1.0, 1.0], (3, 4)) * rng.uniform(0.3, 2.0, (3, 4))
    else:
        x = rng.uniform(0.3, 2.0, (3, 4))
    assert mg.gradcheck(lambda t: t ** p, (leaf(x),))
    assert mg.gradcheck(lambda t: mg.pow(t, mg.tensor(float(p), dtype=mg.float64)), (leaf(x),))


def test_pow_gradient_values_against_the_formula():
    x = np.array([-2.0, -0.5, 0.0, 0.5, 3.0])
    for p in (2, 3, 4):  # at 0 too: p x^(p-1) = 0
        t = leaf(x)
        (t ** p).sum().backward()
        np.testing.assert_allclose(t.grad.numpy(), p * x ** (p - 1), rtol=1e-15)
    t = leaf([0.25, 4.0])
    (t ** -0.5).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), [-0.5 * 0.25 ** -1.5, -0.5 * 4.0 ** -1.5], rtol=1e-15)


# ---- the backward of reading whole slices at an integer index ------------------------------------
def add_at(shape, axis, index, grad):
    """The reference: np.add.at, one element at a time."""
    out = np.zeros(shape, dtype=grad.dtype)
    np.add.at(out, (slice(None),) * axis + (index,), grad)
    return out


@pytest.mark.parametrize("shape, axis, index", [
    ((5, 3), 0, [4, 0, 4, 4, 1, 0]),           # duplicates, unsorted
    ((5, 3), 0, [-1, 4, -5, 0, 2]),            # negative indices meet their positive twins
    ((5, 3), 0, []),                           # nothing read: all zeros
    ((4, 6, 2), 1, [[5, 0, 5], [1, 1, 5]]),    # a 2-D index along the middle dim
    ((4, 6, 2), 2, [1, 1, 0, 1]),              # along the last dim
    ((7,), 0, [3, 3, 3, 6, 0, 3]),             # a 1-D tensor: slices are single elements
    ((5, 0), 0, [1, 1, 2]),                    # empty slices
])
def test_take_grad_adds_up_as_np_add_at(shape, axis, index):
    index = np.asarray(index, dtype=np.int64)
    rng = np.random.default_rng(2)
    grad = rng.standard_normal(shape[:axis] + index.shape + shape[axis + 1:])
    got = take_grad(grad, index, axis, shape)
    np.testing.assert_allclose(got, add_at(shape, axis, index, grad), rtol=1e-12, atol=1e-12)
    again = take_grad(grad, index, axis, shape)
    assert got.tobytes() == again.tobytes()  # the same sums in the same order, every time


def test_take_grad_float32_with_many_repeats():
    rng = np.random.default_rng(3)
    index = rng.integers(0, 65, 2048)
    grad = rng.standard_normal((2048, 128)).astype(np.float32)
    got = take_grad(grad, index, 0, (65, 128))
    assert got.dtype == np.float32
    exact = add_at((65, 128), 0, index, grad.astype(np.float64))
    np.testing.assert_allclose(got, exact, rtol=0, atol=1e-4)  # ~30 float32 terms a row: rounding only


def test_take_axis_recognises_only_whole_slices_at_one_integer_array():
    idx = np.array([1, 0])
    whole = slice(None)
    assert take_axis(idx, 2) == (0, idx)
    assert take_axis((whole, idx), 2) == (1, idx)
    assert take_axis((idx, whole), 2) == (0, idx)
    assert take_axis((whole, idx, Ellipsis), 3) == (1, idx)
    for other in [(idx, idx), (0, idx), (slice(1, None), idx), (None, idx), (Ellipsis, idx),
                  (idx, 0), np.array([True, False]), (whole, whole)]:
        assert take_axis(other, 2) is None, other


def upstream(shape, seed=4):
    return np.random.default_rng(seed).standard_normal(shape)


@pytest.mark.parametrize("index", [
    [3, 0, 3, 3, -1],                      # duplicates and a negative index (-1 is 4)
    [[0, 2], [2, 2]],                      # a 2-D index: an (B, T)-shaped lookup
    [],                                    # nothing selected
])
def test_getitem_rows_backward(index):
    x = leaf(upstream((5, 3), seed=5))
    y = x[mg.tensor(index, dtype=mg.int64)]
    g = upstream(y.shape)
    y.backward(mg.tensor(g))
    idx = np.asarray(index, dtype=np.int64)
    np.testing.assert_allclose(x.grad.numpy(), add_at((5, 3), 0, idx, g), rtol=1e-12, atol=1e-15)
    assert mg.gradcheck(lambda t: t[mg.tensor(index, dtype=mg.int64)], (leaf(upstream((5, 3), seed=6)),))


def test_getitem_columns_and_general_indices_backward():
    x = leaf(upstream((3, 5, 2), seed=7))
    idx = mg.tensor([4, 1, 4, -5])
    y = x[:, idx]
    g = upstream(y.shape)
    y.backward(mg.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), add_at((3, 5, 2), 1, idx.numpy(), g), rtol=1e-12, atol=1e-15)
    for index in [(slice(None), idx), (mg.tensor([2, 0, 2, 1]), idx), (0, idx), (Ellipsis, mg.tensor([1, 1]))]:
        assert mg.gradcheck(lambda t: t[index], (leaf(upstream((3, 5, 2), seed=8)),))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_select_backward(dim):
    x = leaf(upstream((4, 5, 3), seed=9))
    size = x.shape[dim]
    index = mg.tensor([size - 1, 0, size - 1, 1, size - 1])
    y = mg.index_select(x, dim, index)
    g = upstream(y.shape)
    y.backward(mg.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), add_at((4, 5, 3), dim % 3, index.numpy(), g), rtol=1e-12, atol=1e-15)
    assert mg.gradcheck(lambda t: mg.index_select(t, dim, index), (leaf(upstream((4, 5, 3), seed=10)),))
    empty = leaf(upstream((4, 5, 3)))
    mg.index_select(empty, dim, mg.tensor([], dtype=mg.int64)).sum().backward()
    assert not empty.grad.numpy().any()


def test_gather_keeps_the_general_path():
    x = leaf(upstream((4, 5), seed=11))
    index = mg.tensor([[0, 0], [4, 1], [2, 2], [3, 0]])
    assert mg.gradcheck(lambda t: mg.gather(t, 1, index), (x,))


def test_embedding_backward_with_repeats_and_padding():
    import minigrad.nn.functional as F

    ids = np.array([[2, 0, 2], [5, 2, 0]])
    w = leaf(upstream((6, 4), seed=12))
    y = F.embedding(mg.tensor(ids), w, padding_idx=0)
    g = upstream(y.shape)
    y.backward(mg.tensor(g))
    want = add_at((6, 4), 0, ids, g)
    want[0] = 0
    np.testing.assert_allclose(w.grad.numpy(), want, rtol=1e-12, atol=1e-15)
    assert mg.gradcheck(lambda t: F.embedding(mg.tensor(ids), t), (leaf(upstream((6, 4), seed=13)),))


# ---- the 2-norm ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [-1, 0, 1, (0, 2), None])
def test_norm_2_values_and_gradcheck(dim):
    x = upstream((3, 4, 5), seed=14)
    got = mg.tensor(x).norm(dim=dim).numpy()
    want = np.sqrt((x * x).sum(axis=dim))
    np.testing.assert_allclose(got, want, rtol=1e-13)
    assert mg.gradcheck(lambda t: t.norm(dim=dim), (leaf(x),))
    assert mg.gradcheck(lambda t: t.norm(dim=dim, keepdim=True), (leaf(x),))


def test_norm_2_float32_against_float64():
    x = upstream((32, 64, 128), seed=15).astype(np.float32)
    exact = np.sqrt((x.astype(np.float64) ** 2).sum(axis=-1))
    np.testing.assert_allclose(mg.tensor(x).norm(dim=-1).numpy(), exact, rtol=1e-6)
    np.testing.assert_allclose(mg.tensor(x).norm().item(), np.sqrt((x.astype(np.float64) ** 2).sum()), rtol=1e-6)


def test_norm_2_zero_rows_get_zero_gradient_without_warnings():
    # row 3 is not 0, but its squares underflow to 0: a norm of 0 too
    x = np.array([[0.0, 0.0, 0.0], [3.0, 0.0, -4.0], [1e-30, -1e-30, 0.0]], dtype=np.float32)
    t = mg.tensor(x, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = t.norm(dim=1)
        y.backward(mg.tensor([1.0, 2.0, 3.0]))
    assert y.tolist() == [0.0, 5.0, 0.0]
    np.testing.assert_allclose(t.grad.numpy(), [[0, 0, 0], [2 * 0.6, 0, 2 * -0.8], [0, 0, 0]], rtol=1e-6)
    whole = mg.zeros(2, 3, requires_grad=True)
    whole.norm().backward()
    assert whole.grad.tolist() == [[0.0] * 3] * 2


def test_norm_2_zero_rows_as_pytorch():
    torch = pytest.importorskip("torch")
    x = np.array([[0.0, 0.0], [3.0, -4.0]], dtype=np.float32)
    ours, theirs = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ours.norm(dim=-1).sum().backward()
    theirs.norm(dim=-1).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-6)


# ---- a reduction's gradient spread back (util.broadcast_to) ----------------------------------------
@pytest.mark.parametrize("source, shape", [
    ((), (4, 4)), ((1,), (3, 2)), ((4, 1), (4, 5)), ((1, 5), (2, 3, 5)), ((3,), (3,)), ((2, 1, 3), (2, 4, 3)),
    ((1, 1), (1, 1)), ((4, 1), (4, 1)), ((0,), (0,)), ((3,), (2, 3)), ("scalar", (4, 4)), ("scalar", ()),
    ("strided", (2, 4, 3)),
])
def test_broadcast_to_is_numpys_view(source, shape):
    rng = np.random.default_rng(0)
    if source == "scalar":  # a mean's 0-d gradient divided by n: a NumPy scalar
        array = np.float32(rng.standard_normal())
    elif source == "strided":  # not contiguous: NumPy's own
        array = rng.standard_normal((4, 6)).astype(np.float32)[:, ::2]
    else:
        array = rng.standard_normal(source).astype(np.float32)
    ours, numpys = broadcast_to(array, shape), np.broadcast_to(array, shape)
    assert (ours.shape, ours.strides, ours.dtype) == (numpys.shape, numpys.strides, numpys.dtype)
    assert ours.tobytes() == numpys.tobytes()
    assert not ours.flags.writeable  # a write into it would land in every place it repeats
    with pytest.raises(ValueError):
        ours[...] = 0


@pytest.mark.parametrize("source, shape", [((2,), (3,)), ((3, 2), (2,)), ((2, 3), (2, 4))])
def test_broadcast_to_refuses_as_numpy(source, shape):
    array = np.zeros(source, np.float32)
    with pytest.raises(ValueError) as numpys:
        np.broadcast_to(array, shape)
    with pytest.raises(ValueError) as ours:
        broadcast_to(array, shape)
    assert str(ours.value) == str(numpys.value)


def test_sum_and_mean_gradients_are_read_only_broadcasts():
    x = mg.randn(3, 4, requires_grad=True)
    seen = []
    y = x * 1.0
    y.register_hook(lambda g: seen.append(g.numpy()))
    y.sum().backward()
    y = x * 1.0
    y.register_hook(lambda g: seen.append(g.numpy()))
    y.mean().backward()
    assert [g.strides for g in seen] == [(0, 0), (0, 0)] and not any(g.flags.writeable for g in seen)
    assert np.array_equal(seen[0], np.ones((3, 4), np.float32))
    assert np.array_equal(seen[1], np.full((3, 4), np.float32(1) / 12, np.float32))
