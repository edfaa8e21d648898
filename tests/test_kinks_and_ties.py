"""Gradients at kinks and ties, where finite differences straddle two branches and say nothing: PyTorch's
documented values, written as literals (relu'(0) = 0, abs'(0) = 0, clamp passes the gradient at its
bounds, maximum/minimum split a tie half-half, amax/amin share it evenly among all tied elements, max/min
with dim send it to the returned index), var's Bessel correction by default, and pow's gradient at 0."""
import math

import numpy as np
import pytest

import minigrad as mg

def leaf(array):
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=True)

# ---- conventions at kinks and ties: PyTorch's documented values ---------------------------------
def grad_of(fn, *values):
    """The gradients of fn(*leaves).sum() for leaves holding `values` (float64)."""
    leaves = [leaf(v) for v in values]
    fn(*leaves).sum().backward()
    return [t.grad.numpy() for t in leaves]


def test_relu_gradient_is_zero_at_the_kink():
    (g,) = grad_of(lambda x: x.relu(), [-1.0, 0.0, 2.0])
    assert g.tolist() == [0.0, 0.0, 1.0]


def test_abs_gradient_is_zero_at_the_kink():
    (g,) = grad_of(lambda x: x.abs(), [-2.0, 0.0, 3.0])
    assert g.tolist() == [-1.0, 0.0, 1.0]


def test_clamp_passes_the_gradient_at_its_bounds_inclusive():
    (g,) = grad_of(lambda x: x.clamp(0.0, 1.0), [-0.5, 0.0, 0.5, 1.0, 1.5])
    assert g.tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]
    (g,) = grad_of(lambda x: x.clamp(min=1.0), [0.0, 1.0, 2.0])
    assert g.tolist() == [0.0, 1.0, 1.0]
    (g,) = grad_of(lambda x: x.clamp(max=1.0), [0.0, 1.0, 2.0])
    assert g.tolist() == [1.0, 1.0, 0.0]


def test_maximum_and_minimum_split_a_tie_half_half():
    a, b = grad_of(mg.maximum, [1.0, 2.0, 5.0], [1.0, 3.0, 4.0])
    assert a.tolist() == [0.5, 0.0, 1.0] and b.tolist() == [0.5, 1.0, 0.0]
    a, b = grad_of(mg.minimum, [1.0, 2.0, 5.0], [1.0, 3.0, 4.0])
    assert a.tolist() == [0.5, 1.0, 0.0] and b.tolist() == [0.5, 0.0, 1.0]


def test_amax_amin_and_max_without_dim_share_the_gradient_evenly_among_ties():
    values = [[2.0, 5.0, 5.0], [1.0, 1.0, 1.0]]
    (g,) = grad_of(lambda x: x.amax(1), values)
    assert g.tolist() == [[0.0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]]
    (g,) = grad_of(lambda x: x.amin(1), values)
    assert g.tolist() == [[1.0, 0.0, 0.0], [1 / 3, 1 / 3, 1 / 3]]
    (g,) = grad_of(lambda x: x.max(), [2.0, 2.0, 1.0, 0.0])
    assert g.tolist() == [0.5, 0.5, 0.0, 0.0]
    (g,) = grad_of(lambda x: x.min(), [1.0, 3.0, 1.0, 2.0])
    assert g.tolist() == [0.5, 0.0, 0.5, 0.0]


def test_max_and_min_with_dim_send_the_gradient_to_the_returned_index():
    x = leaf([[2.0, 5.0, 5.0], [1.0, 1.0, 0.5]])
    values, indices = x.max(1)
    assert indices.tolist() == [1, 0]  # the first of the tied maxima, as PyTorch
    values.sum().backward()
    assert x.grad.numpy().tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
    x = leaf([[2.0, 1.0, 1.0]])
    values, indices = x.min(1)
    values.sum().backward()
    assert indices.tolist() == [1] and x.grad.numpy().tolist() == [[0.0, 1.0, 0.0]]


def test_var_is_unbiased_by_default():
    x = leaf([1.0, 2.0, 3.0, 4.0])
    assert x.var().item() == pytest.approx(5 / 3, rel=1e-12)  # sum of squares 5, over n - 1 = 3
    assert x.var(unbiased=False).item() == pytest.approx(5 / 4, rel=1e-12)
    assert mg.var(x, correction=0).item() == pytest.approx(5 / 4, rel=1e-12)
    x.var().backward()
    assert np.allclose(x.grad.numpy(), [-1.0, -1 / 3, 1 / 3, 1.0], rtol=1e-12)  # 2 (x - 2.5) / 3


def test_pow_gradient_at_zero_is_finite_where_the_limit_is():
    (g,) = grad_of(lambda x: x ** 2, [0.0, 3.0])
    assert g.tolist() == [0.0, 6.0]
    (g,) = grad_of(lambda x: x ** 0, [0.0, 3.0])
    assert g.tolist() == [0.0, 0.0]  # x**0 is the constant 1
    (g,) = grad_of(lambda x: x ** 1, [0.0, 3.0])
    assert g.tolist() == [1.0, 1.0]
    (g,) = grad_of(lambda x: x ** 3, [0.0, -1.0])
    assert g.tolist() == [0.0, 3.0]
    (g,) = grad_of(lambda x: x ** 1.5, [0.0, 4.0])
    assert g.tolist() == [0.0, 3.0]
    # a tensor exponent: d(a^b)/da = b a^(b-1) is 0 at b = 0 (not 0 * 0^-1), d/db = a^b log a is 0 at a = 0
    a, b = grad_of(lambda a, b: a ** b, [0.0, 0.0, 2.0], [2.0, 0.0, 0.0])
    assert a.tolist() == [0.0, 0.0, 0.0]
    assert b.tolist() == [0.0, 0.0, pytest.approx(math.log(2.0), rel=1e-12)]
