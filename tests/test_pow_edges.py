"""pow and abs at their edges, as PyTorch: 0 ** negative, gradients there, abs at NaN, integer negative powers."""
import numpy as np
import pytest

import minigrad as mg

from conftest import torch

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
INF, NAN = float("inf"), float("nan")


def _pow_grads(lib, a, b):
    at = lib.tensor(a, dtype=lib.float64, requires_grad=True)
    bt = lib.tensor(b, dtype=lib.float64, requires_grad=True)
    y = at ** bt
    y.backward(lib.ones_like(y))
    return y.detach().numpy(), at.grad.numpy(), bt.grad.numpy()


def test_zero_base_exponent_gradient():
    """d(a^b)/db = a^b log a: at a = 0 it is 0 for b >= 0 (the limit) and inf * -inf = -inf for b < 0."""
    y, ga, gb = _pow_grads(mg, [0.0, 0.0, 0.0, 0.0, 0.0], [-2.0, -0.5, 0.0, 0.5, 2.0])
    np.testing.assert_array_equal(y, [INF, INF, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(gb, [-INF, -INF, 0.0, 0.0, 0.0])
    # d(a^b)/da = b a^(b-1): -2 * 0^-3 = -inf, -0.5 * 0^-1.5 = -inf, 0 where b = 0, 0.5 * 0^-0.5 = inf
    np.testing.assert_array_equal(ga, [-INF, -INF, 0.0, INF, 0.0])


def test_number_base_zero():
    x = mg.tensor([-2.0, -0.5, 0.0, 0.5, 2.0], dtype=mg.float64, requires_grad=True)
    y = 0.0 ** x
    y.backward(mg.ones_like(y))
    np.testing.assert_array_equal(x.grad.numpy(), [-INF, -INF, 0.0, 0.0, 0.0])


def test_negative_zero_and_negative_base():
    y, ga, gb = _pow_grads(mg, [-0.0, -1.0], [-1.0, -1.0])
    np.testing.assert_array_equal(y, [-INF, -1.0])
    assert gb[0] == INF  # (-inf) * log(-0) = (-inf) * (-inf)
    assert np.isnan(gb[1])  # log of a negative base


def test_abs_gradient_at_nan_is_zero():
    x = mg.tensor([NAN, 0.0, -1.0, 2.0], requires_grad=True)
    x.abs().sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, -1.0, 1.0])


def test_integer_tensor_to_negative_tensor_powers():
    """x^-n = 1 / x^n rounded toward 0: 1 for x = 1, +-1 for x = -1, 0 otherwise (0 included)."""
    base = mg.tensor([0, 0, -1, -1, -2, 2, 1, 5, -5, 3])
    exponent = mg.tensor([-1, -2, -2, -3, -1, -1, -7, 0, -1, 2])
    out = base ** exponent
    assert out.dtype == mg.int64
    assert out.tolist() == [0, 0, 1, -1, 0, 0, 1, 1, 0, 9]
    assert (2 ** mg.tensor([-1, 2])).tolist() == [0, 4]
    assert (mg.tensor([2, 3], dtype=mg.int32) ** mg.tensor([-1, 2], dtype=mg.int32)).dtype == mg.int32


def test_integer_tensor_to_a_negative_number_is_refused():
    with pytest.raises(ValueError, match="negative integer power -1"):
        mg.tensor([1, 2]) ** -1


@needs_torch
def test_as_pytorch():
    a = [0.0, 0.0, 0.0, 0.0, -0.0, -1.0, 2.0, 0.0, 3.0]
    b = [-2.0, -0.5, 0.0, 0.5, -1.0, -1.0, -1.0, 3.0, 0.0]
    for ours, theirs in zip(_pow_grads(mg, a, b), _pow_grads(torch, a, b)):
        np.testing.assert_array_equal(ours, theirs)
    base, exponent = [0, 0, -1, -1, -2, 2, 1, 5, -5, 3], [-1, -2, -2, -3, -1, -1, -7, 0, -1, 2]
    assert (mg.tensor(base) ** mg.tensor(exponent)).tolist() == (torch.tensor(base) ** torch.tensor(exponent)).tolist()
    x = [NAN, 0.0, -1.0, 2.0]
    grads = []
    for lib in (mg, torch):
        t = lib.tensor(x, requires_grad=True)
        t.abs().sum().backward()
        grads.append(t.grad.numpy())
    np.testing.assert_array_equal(*grads)
    with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
        torch.tensor([1, 2]) ** -1  # the refusal minigrad mirrors (as a ValueError naming the power)
