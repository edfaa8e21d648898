"""Softmax sets weights below the smallest normal float to 0 (they slow every product that
touches them many times over; minigrad/kernels/softmax.py) and keeps every weight above it."""
import numpy as np

import minigrad as mg

TINY32 = np.finfo(np.float32).tiny


def _subnormal_count(a):
    return int(((a != 0) & (np.abs(a) < TINY32)).sum())


def test_softmax_weights_below_the_normal_range_become_zero():
    x = mg.tensor([[0.0, -100.0, -80.0, -3.0]], requires_grad=True)  # e^-100: subnormal; e^-80: normal
    y = x.softmax(dim=-1)
    weights = y.detach().numpy()
    assert weights[0, 1] == 0.0
    expected = np.exp(np.array([0.0, -100.0, -80.0, -3.0])) / np.exp(np.array([0.0, -100.0, -80.0, -3.0])).sum()
    np.testing.assert_allclose(weights[0, [0, 2, 3]], expected[[0, 2, 3]], rtol=1e-5)  # e^-80 ~ 1.7e-35 is kept
    (y * mg.tensor([[1.0, 2.0, 3.0, -4.0]])).sum().backward()
    assert _subnormal_count(x.grad.numpy()) == 0


def test_softmax_gradient_has_no_subnormals():
    rng = np.random.default_rng(0)
    x = mg.tensor(rng.standard_normal((4, 64)).astype(np.float32) * 30, requires_grad=True)
    y = x.softmax(dim=-1)
    assert _subnormal_count(y.detach().numpy()) == 0
    (y * mg.tensor(rng.standard_normal((4, 64)).astype(np.float32))).sum().backward()
    assert _subnormal_count(x.grad.numpy()) == 0
    assert (x.grad.numpy() != 0).any()


def test_rows_far_below_the_global_maximum_keep_their_weights():
    # the exponentials are taken after subtracting the maximum of the whole tensor; a row 80 below
    # it must still get its full weights once normalised, not lose entries to the flush
    x = mg.tensor([[0.0, -1.0], [-80.0, -95.0]])
    weights = x.softmax(dim=-1).numpy()
    np.testing.assert_allclose(weights[1], [1.0 / (1.0 + np.exp(-15.0)), np.exp(-15.0) / (1.0 + np.exp(-15.0))],
                               rtol=1e-5)
