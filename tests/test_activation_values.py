"""The activations' values against their documented formulas, written out here in NumPy, without PyTorch.

Each is a composition (minigrad/composites/activations.py), so gradcheck agrees with a wrong formula as
long as it is differentiated consistently; a value off by a constant or a coefficient needs a reference
of its own (issue 39, item 4). The points include each activation's kinks and bounds, where the value
must be the one the formula gives at the point itself, and the tails, where no form may overflow.
"""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F

POINTS = np.array([-30.0, -6.5, -6.0, -3.0, -2.9, -1.0, -0.5, -0.25, -1e-3, 0.0, 1e-3, 0.25, 0.5, 1.0, 2.9, 3.0,
                   6.0, 6.5, 19.0, 25.0, 800.0, -800.0])
SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def softplus(x, beta=1.0, threshold=20.0):
    with np.errstate(over="ignore"):
        return np.where(beta * x > threshold, x, np.logaddexp(0.0, beta * x) / beta)


def elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0.0)))


REFERENCES = {
    "elu": (lambda x: F.elu(x), elu),
    "elu alpha=0.3": (lambda x: F.elu(x, alpha=0.3), lambda x: elu(x, 0.3)),
    "selu": (lambda x: F.selu(x), lambda x: SELU_SCALE * elu(x, SELU_ALPHA)),
    "celu": (lambda x: F.celu(x), lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0.0)))),
    "celu alpha=2": (lambda x: F.celu(x, alpha=2.0), lambda x: np.where(x > 0, x, 2 * np.expm1(np.minimum(x, 0) / 2))),
    "softplus": (lambda x: F.softplus(x), softplus),
    "softplus beta=2 threshold=5": (lambda x: F.softplus(x, beta=2.0, threshold=5.0), lambda x: softplus(x, 2.0, 5.0)),
    "softplus beta=0.5": (lambda x: F.softplus(x, beta=0.5), lambda x: softplus(x, 0.5)),
    "logsigmoid": (lambda x: F.logsigmoid(x), lambda x: -np.logaddexp(0.0, -x)),
    "softsign": (lambda x: F.softsign(x), lambda x: x / (1 + np.abs(x))),
    "mish": (lambda x: F.mish(x), lambda x: x * np.tanh(softplus(x))),
    "hardtanh": (lambda x: F.hardtanh(x), lambda x: np.clip(x, -1.0, 1.0)),
    "hardtanh -2.5, 0.5": (lambda x: F.hardtanh(x, -2.5, 0.5), lambda x: np.clip(x, -2.5, 0.5)),
    "relu6": (lambda x: F.relu6(x), lambda x: np.clip(x, 0.0, 6.0)),
    "hardsigmoid": (lambda x: F.hardsigmoid(x), lambda x: np.clip(x / 6 + 0.5, 0.0, 1.0)),
    "hardswish": (lambda x: F.hardswish(x), lambda x: x * np.clip(x + 3, 0.0, 6.0) / 6),
    "leaky_relu": (lambda x: F.leaky_relu(x), lambda x: np.where(x > 0, x, 0.01 * x)),
    "leaky_relu 0.2": (lambda x: F.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    "prelu one slope": (lambda x: F.prelu(x, mg.tensor([0.25], dtype=mg.float64)), lambda x: np.where(x > 0, x, 0.25 * x)),
    "rrelu eval": (lambda x: F.rrelu(x, 0.1, 0.3, training=False), lambda x: np.where(x > 0, x, 0.2 * x)),
    "threshold": (lambda x: F.threshold(x, 0.5, -7.0), lambda x: np.where(x > 0.5, x, -7.0)),
    "tanhshrink": (lambda x: F.tanhshrink(x), lambda x: x - np.tanh(x)),
    "softshrink": (lambda x: F.softshrink(x), lambda x: np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0.0))),
    "softshrink 1": (lambda x: F.softshrink(x, 1.0), lambda x: np.where(x > 1, x - 1, np.where(x < -1, x + 1, 0.0))),
    "hardshrink": (lambda x: F.hardshrink(x), lambda x: np.where(np.abs(x) > 0.5, x, 0.0)),
    "hardshrink 1": (lambda x: F.hardshrink(x, 1.0), lambda x: np.where(np.abs(x) > 1, x, 0.0)),
    "sigmoid": (lambda x: F.sigmoid(x), lambda x: np.exp(-np.logaddexp(0.0, -x))),
    "silu": (lambda x: F.silu(x), lambda x: x * np.exp(-np.logaddexp(0.0, -x))),
    "gelu": (lambda x: F.gelu(x), lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))),
    "gelu tanh": (lambda x: F.gelu(x, approximate="tanh"),
                  # 0.5 x (1 + tanh u) = x / (1 + e^(-2u)): the same, without cancelling in the left tail
                  lambda x: x / (1 + np.exp(-2 * math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_activation_values_by_the_formula(name):
    fn, reference = REFERENCES[name]
    with np.errstate(over="ignore", invalid="ignore"):
        expected = reference(POINTS)
    got = fn(mg.tensor(POINTS)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-300)


def test_prelu_one_slope_per_channel():
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    slopes = np.array([0.1, -0.5, 2.0])
    got = F.prelu(mg.tensor(x), mg.tensor(slopes)).numpy()
    np.testing.assert_allclose(got, np.where(x > 0, x, slopes[:, None] * x), rtol=1e-15)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_glu_is_the_first_half_times_the_sigmoid_of_the_second(dim):
    x = np.random.default_rng(1).standard_normal((4, 6, 2))
    a, b = np.split(x, 2, axis=dim)
    np.testing.assert_allclose(F.glu(mg.tensor(x), dim).numpy(), a / (1 + np.exp(-b)), rtol=1e-14)
