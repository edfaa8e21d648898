"""Autograd of the piecewise-constant ops and of the pieces of a float, as PyTorch (issue 39).

- The steps (sign, sgn, floor, ceil, trunc, fix, round with and without decimals, div with a rounding
  mode) of a tensor that requires grad are in the graph with a zero gradient:
  `torch.sign(x).sum().backward()` works and x.grad is zeros. (PyTorch refuses heaviside and
  floor_divide's gradient instead; minigrad's heaviside gives a result without a graph, its
  floor_divide zeros: docs/pytorch_surface.md.)
- copysign(a, b): d/da = y / a, 0 at a = 0, NaN where a is NaN or infinite; d/db = 0 (b in the graph).
- nextafter(a, b): d/da = 1 where a != b, 0 where a == b (the result is b there); d/db = 0.
- frexp(x): the mantissa's derivative is 2^-exponent (1 at 0, NaN, ±inf); the exponent has no graph.

Each is written once against `lib` (minigrad, then PyTorch where installed) with NumPy's closed form as the
reference, and checked by finite differences in float64 (mg.gradcheck, mg.gradgradcheck).
"""
import numpy as np
import pytest

import minigrad as mg

nan, inf = float("nan"), float("inf")

STEPS = {
    "sign": lambda L, x: L.sign(x), "sgn": lambda L, x: x.sgn(), "floor": lambda L, x: L.floor(x),
    "ceil": lambda L, x: L.ceil(x), "trunc": lambda L, x: L.trunc(x), "fix": lambda L, x: L.fix(x),
    "round": lambda L, x: L.round(x), "round_decimals": lambda L, x: L.round(x, decimals=1),
    "div_floor": lambda L, x: L.div(x, 0.7, rounding_mode="floor"),
    "div_trunc": lambda L, x: L.div(x, 0.7, rounding_mode="trunc"),
}
STEP_VALUES = {"sign": np.sign, "sgn": np.sign, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
               "fix": np.trunc, "round": np.round, "round_decimals": lambda x: np.round(x * 10) / 10,
               "div_floor": lambda x: np.floor(x / 0.7), "div_trunc": lambda x: np.trunc(x / 0.7)}
X = np.array([-2.5, -1.2, -0.0, 0.0, 0.4, 1.5, 3.7])


@pytest.mark.parametrize("name", sorted(STEPS))
def test_a_step_is_in_the_graph_with_a_zero_gradient(lib, name):
    x = lib.tensor(X, requires_grad=True)
    y = STEPS[name](lib, x)
    assert y.requires_grad and y.grad_fn is not None
    np.testing.assert_array_equal(y.detach().numpy(), STEP_VALUES[name](X))
    y.sum().backward()
    grad = x.grad
    if lib is not mg and grad._is_zerotensor():  # PyTorch's sgn gives a ZeroTensor, zeros that numpy() refuses
        grad = lib.zeros(grad.shape, dtype=grad.dtype)
    np.testing.assert_array_equal(grad.numpy(), np.zeros_like(X))


@pytest.mark.parametrize("name", ["sign", "floor", "round_decimals", "div_trunc"])
def test_a_step_gradchecks_away_from_its_jumps(name):
    x = mg.tensor([-2.3, -1.17, 0.42, 1.33, 3.61], dtype=mg.float64, requires_grad=True)
    assert mg.gradcheck(lambda x: STEPS[name](mg, x), (x,))
    assert mg.gradgradcheck(lambda x: STEPS[name](mg, x) * x, (x,))


def test_numpy_force_reads_a_tensor_that_requires_grad(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        x.numpy()
    np.testing.assert_array_equal(x.numpy(force=True), [1.0, 2.0])


def test_sign_keeps_integers_and_bools(lib):
    assert lib.sign(lib.tensor([-3, 0, 5])).tolist() == [-1, 0, 1]
    assert lib.sign(lib.tensor([True, False])).tolist() == [True, False]


def test_copysign_values_and_gradient_as_pytorch_at_nan_zero_and_inf(lib):
    a = np.array([nan, 1.0, -2.0, 0.0, -0.0, 3.0, nan, inf, -1.5])
    b = np.array([1.0, nan, -nan, -1.0, 1.0, -0.0, -1.0, -2.0, 2.0])
    x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
    out = lib.copysign(x, y)
    expected = np.copysign(a, b)
    np.testing.assert_array_equal(out.detach().numpy(), expected)
    assert list(np.signbit(out.detach().numpy())) == list(np.signbit(expected))
    out.sum().backward()
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(x.grad.numpy(), np.where(a == 0, 0.0, expected / a))  # NaN at NaN, inf
    np.testing.assert_array_equal(y.grad.numpy(), np.zeros_like(b))


def test_copysign_gradcheck_and_second_order():
    a = mg.tensor([0.7, -1.3, 2.2, -0.4], dtype=mg.float64, requires_grad=True)
    b = mg.tensor([-1.0, 2.0, -0.5, 3.0], dtype=mg.float64, requires_grad=True)
    assert mg.gradcheck(mg.copysign, (a, b))
    assert mg.gradgradcheck(lambda a, b: mg.copysign(a, b) * a, (a, b))
    assert mg.gradcheck(lambda a: mg.copysign(a, -2.0), (a,))  # a number as the sign


def test_nextafter_values_and_gradient_as_pytorch(lib):
    a = np.array([1.0, 1.0, 2.0, nan, nan, inf, -inf, 0.0, 0.0, -0.0, 5.0])
    b = np.array([1.0, 2.0, 1.0, nan, 1.0, inf, inf, 0.0, -0.0, 0.0, nan])
    x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
    out = lib.nextafter(x, y)
    np.testing.assert_array_equal(out.detach().numpy(), np.nextafter(a, b))
    out.backward(lib.tensor(np.arange(1.0, 12.0)))
    np.testing.assert_array_equal(x.grad.numpy(), np.arange(1.0, 12.0) * (a != b))
    np.testing.assert_array_equal(y.grad.numpy(), np.zeros_like(b))


def test_nextafter_gradcheck():
    a = mg.tensor([0.7, -1.3, 2.2], dtype=mg.float64, requires_grad=True)
    b = mg.tensor([-1.0, 2.0, 5.0], dtype=mg.float64)
    assert mg.gradcheck(mg.nextafter, (a, b))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_frexp_mantissa_gradient_is_two_to_minus_the_exponent(lib, dtype):
    values = np.array([nan, 1.0, -2.0, 0.0, 3.0, inf, 0.3, -1e-3], dtype=dtype)
    x = lib.tensor(values, requires_grad=True)
    mantissa, exponent = lib.frexp(x)
    m, e = np.frexp(values)
    np.testing.assert_array_equal(mantissa.detach().numpy(), m)
    assert exponent.dtype == lib.int32 and not exponent.requires_grad
    np.testing.assert_array_equal(exponent.numpy(), e)
    mantissa.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ldexp(np.ones_like(values), -e))
    assert x.grad.dtype == x.dtype


def test_frexp_gradcheck_and_second_order():
    x = mg.tensor([0.3, -1.7, 5.5, 100.25], dtype=mg.float64, requires_grad=True)
    assert mg.gradcheck(lambda x: mg.frexp(x)[0], (x,))
    assert mg.gradgradcheck(lambda x: mg.frexp(x)[0] * x, (x,))


def test_frexp_refuses_integers(lib):
    with pytest.raises((TypeError, RuntimeError), match="frexp"):
        lib.frexp(lib.tensor([1, 2]))
