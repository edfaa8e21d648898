"""The fused softmax and log_softmax against the same functions composed from exp, sum and log.

The fused ops have their own forward and backward (stable and with fewer temporaries); the composed
versions are built from primitive ops that are gradchecked on their own, so the two must agree in
values and in gradients. Then the cases the composed version gets wrong: large inputs, -inf rows.
"""
import numpy as np
import pytest

import minigrad as mg


def composed_softmax(x, dim):
    e = x.exp()
    return e / e.sum(dim, keepdim=True)


def composed_log_softmax(x, dim):
    return x - x.exp().sum(dim, keepdim=True).log()


FUSED = {"softmax": lambda x, dim: x.softmax(dim), "log_softmax": lambda x, dim: x.log_softmax(dim)}
COMPOSED = {"softmax": composed_softmax, "log_softmax": composed_log_softmax}


def value_and_grad(fn, array, dim, upstream, dtype=mg.float64):
    x = mg.tensor(array, dtype=dtype, requires_grad=True)
    y = fn(x, dim)
    y.backward(mg.tensor(upstream, dtype=dtype))
    return y.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape,dim", [((6,), 0), ((3, 5), -1), ((3, 5), 0), ((2, 3, 4), 1), ((4, 1), 1)])
@pytest.mark.parametrize("dtype", [mg.float64, mg.float32])
def test_fused_matches_composed(op, shape, dim, dtype):
    rng = np.random.default_rng(0)
    x, upstream = rng.standard_normal(shape) * 3, rng.standard_normal(shape)
    fused_y, fused_g = value_and_grad(FUSED[op], x, dim, upstream, dtype)
    ref_y, ref_g = value_and_grad(COMPOSED[op], x, dim, upstream, dtype)
    tol = 1e-12 if dtype == mg.float64 else 1e-5
    assert fused_y.dtype == dtype and fused_g.dtype == dtype
    np.testing.assert_allclose(fused_y, ref_y, rtol=tol * 10, atol=tol)
    np.testing.assert_allclose(fused_g, ref_g, rtol=tol * 10, atol=tol)


def test_softmax_rows_sum_to_one_and_log_softmax_is_its_log():
    x = mg.randn(4, 7, dtype=mg.float64) * 5
    np.testing.assert_allclose(x.softmax(-1).sum(-1).detach().numpy(), np.ones(4), rtol=1e-12)
    np.testing.assert_allclose(x.log_softmax(1).exp().detach().numpy(), x.softmax(1).detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", [mg.float32, mg.float64])
def test_large_inputs_do_not_overflow(op, dtype):
    rng = np.random.default_rng(1)
    small = rng.standard_normal((3, 5))
    # softmax is unchanged by adding a constant to a row; 1e4 overflows exp in both dtypes
    for big in (small + 1e4, small - 1e4, small * 1e4):
        big = big.astype(dtype).astype(np.float64)  # what the tensor holds (float32 rounds at 1e4)
        upstream = rng.standard_normal(big.shape)
        y, g = value_and_grad(FUSED[op], big, -1, upstream, dtype)
        assert np.all(np.isfinite(y)) and np.all(np.isfinite(g))
        # the composed version on the input shifted by its row maximum (a constant) is exact
        shift = big.max(axis=-1, keepdims=True)
        ref_y, ref_g = value_and_grad(COMPOSED[op], big - shift, -1, upstream, mg.float64)
        if op == "log_softmax":
            tol = 1e-5 if dtype == mg.float32 else 1e-9
            np.testing.assert_allclose(y, ref_y, rtol=tol, atol=tol * np.abs(big).max())
        else:
            np.testing.assert_allclose(y, ref_y, rtol=1e-4 if dtype == mg.float32 else 1e-9, atol=1e-7)
        np.testing.assert_allclose(g, ref_g, rtol=1e-4 if dtype == mg.float32 else 1e-9, atol=1e-6)


def test_composed_softmax_does_overflow():
    # the reason for the fused op: exp(1e4) is inf, inf / inf is nan
    with np.errstate(over="ignore", invalid="ignore"):
        y = composed_softmax(mg.tensor([1e4, 0.0]), 0)
    assert np.isnan(y.detach().numpy()[0])


@pytest.mark.parametrize("dtype", [mg.float32, mg.float64])
def test_row_of_minus_inf_but_one_position(dtype):
    inf = float("inf")
    x = np.array([[-inf, 2.0, -inf, -inf], [0.5, -1.0, 3.0, 0.0]])
    upstream = np.array([[0.3, -1.2, 0.7, 2.0], [1.0, 0.5, -0.5, 0.25]])
    y, g = value_and_grad(FUSED["softmax"], x, -1, upstream, dtype)
    assert np.array_equal(y[0], [0.0, 1.0, 0.0, 0.0])
    assert np.all(np.isfinite(g))
    # one-hot output: softmax is locally constant there, so no gradient reaches any position
    assert np.array_equal(g[0], np.zeros(4))
    # the ordinary row agrees with the composed version
    ref_y, ref_g = value_and_grad(COMPOSED["softmax"], x[1:], -1, upstream[1:], mg.float64)
    np.testing.assert_allclose(y[1:], ref_y, rtol=1e-6)
    np.testing.assert_allclose(g[1:], ref_g, rtol=1e-5, atol=1e-7)

    y, g = value_and_grad(FUSED["log_softmax"], x, -1, upstream, dtype)
    assert y[0, 1] == 0.0 and np.all(y[0, [0, 2, 3]] == -inf)
    assert np.all(np.isfinite(g))
    # dx = g - softmax(x) * sum(g): the surviving position gets g - sum(g), the others keep g
    expected = upstream[0].copy()
    expected[1] -= upstream[0].sum()
    np.testing.assert_allclose(g[0], expected, rtol=1e-6)


def test_masked_fill_minus_inf_then_softmax_gives_finite_gradients():
    x = mg.randn(3, 5, dtype=mg.float64, requires_grad=True)
    mask = mg.tensor(np.array([[1, 1, 0, 1, 1], [0, 0, 0, 0, 1], [1, 1, 1, 1, 0]], dtype=bool))
    y = x.masked_fill(mask, float("-inf")).softmax(-1)
    (y * mg.randn(3, 5, dtype=mg.float64)).sum().backward()
    assert np.all(np.isfinite(y.detach().numpy())) and np.all(np.isfinite(x.grad.numpy()))
    assert np.all(y.detach().numpy()[mask.detach().numpy()] == 0.0)
    assert np.all(x.grad.numpy()[mask.detach().numpy()] == 0.0)
    assert y.detach().numpy()[0, 2] == 1.0 and y.detach().numpy()[2, 4] == 1.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_row_with_one_allowed_key_gets_weight_exactly_one(dtype):
    # the blocked kernel shifts rows by the tensor's maximum, so exp(x - c) is not 1 there: only a
    # correctly rounded division e / e gives exactly 1 (a multiply by 1 / e missed it by an ulp)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 8, 24, 24)).astype(dtype) * 5
    keep = np.zeros(x.shape, dtype=bool)
    keep[..., rng.integers(0, 24)] = True
    y = mg.tensor(x).masked_fill(mg.tensor(~keep), float("-inf")).softmax(-1).numpy()
    assert (y[keep] == 1.0).all() and (y[~keep] == 0.0).all()
