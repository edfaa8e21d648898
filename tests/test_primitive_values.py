"""Values of elementwise primitives (minigrad/ops/) against NumPy, Python's math module and closed forms,
without PyTorch.

gradcheck compares a primitive's backward with finite differences of its forward, which cannot see a
forward off by a constant: sinh, asinh, atanh, log1p and igamma/igammac each passed the suite without
PyTorch with 0.125 added to their value (issue 39, item 4). The references here are independent of
minigrad: NumPy's functions, math.erf/erfc/lgamma, and known values of the special functions.
"""
import math

import numpy as np
import pytest

import minigrad as mg

REAL = np.array([-800.0, -20.0, -3.0, -1.0, -0.5, -1e-8, -0.0, 0.0, 1e-300, 1e-8, 0.5, 1.0, 3.0, 20.0, 800.0,
                 np.inf, -np.inf, np.nan])
UNIT = np.array([-1.0, -0.999, -0.5, -1e-9, -0.0, 0.0, 1e-9, 0.5, 0.999, 1.0, 1.5, -2.0, np.nan])
POSITIVE = np.array([1e-300, 1e-8, 0.1, 0.5, 1.0, 1.5, 2.0, 10.0, 100.0, 1e6, np.inf, 0.0, -1.0, np.nan])
GAMMA = np.array([0.1, 0.5, 1.0, 1.5, 2.0, 3.0, 7.5, 30.0, 171.5, -0.5, -2.5])


def t(values):
    return mg.tensor(np.asarray(values, dtype=np.float64))


def same(got, expected, rtol):
    got = np.asarray(got)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-300, equal_nan=True)
    zero = np.asarray(expected) == 0
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(np.asarray(expected)[zero]))


ELEMENTWISE = {
    "exp": (mg.exp, np.exp, REAL),
    "log": (mg.log, np.log, POSITIVE),
    "sqrt": (mg.sqrt, np.sqrt, POSITIVE),
    "rsqrt": (mg.rsqrt, lambda x: 1 / np.sqrt(x), POSITIVE),
    "tanh": (mg.tanh, np.tanh, REAL),
    "sin": (mg.sin, np.sin, REAL[np.abs(REAL) < 1e3]),
    "cos": (mg.cos, np.cos, REAL[np.abs(REAL) < 1e3]),
    "sinh": (mg.sinh, np.sinh, REAL),
    "cosh": (mg.cosh, np.cosh, REAL),
    "asin": (mg.asin, np.arcsin, UNIT),
    "acos": (mg.acos, np.arccos, UNIT),
    "atan": (mg.atan, np.arctan, REAL),
    "asinh": (mg.asinh, np.arcsinh, REAL),
    "acosh": (mg.acosh, np.arccosh, POSITIVE + 1),
    "atanh": (mg.atanh, np.arctanh, UNIT),
    "log1p": (mg.log1p, np.log1p, np.concatenate([UNIT, REAL[REAL > -1]])),
    "expm1": (mg.expm1, np.expm1, REAL),
    "erf": (mg.erf, np.vectorize(math.erf), REAL),
    "erfc": (mg.erfc, np.vectorize(math.erfc), REAL[~np.isnan(REAL)]),
    "lgamma": (mg.lgamma, np.vectorize(lambda x: math.lgamma(x) if x > 0 or x != round(x) else math.inf), GAMMA),
    "i0": (mg.i0, np.i0, REAL[np.abs(REAL) <= 20]),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_values_against_numpy_and_math(name):
    fn, reference, points = ELEMENTWISE[name]
    with np.errstate(all="ignore"):
        expected = reference(points)
    same(fn(t(points)).numpy(), expected, rtol=1e-13 if name not in ("erf", "erfc", "lgamma", "i0") else 1e-12)


def test_atan2_against_numpy():
    y = np.repeat([0.0, -0.0, 1.0, -2.0, np.inf, -np.inf, np.nan], 7)
    x = np.tile([0.0, -0.0, 1.0, -2.0, np.inf, -np.inf, np.nan], 7)
    same(mg.atan2(t(y), t(x)).numpy(), np.arctan2(y, x), rtol=1e-15)


def test_erfinv_inverts_erf():
    y = np.array([-1.0, -0.999999, -0.9, -0.3, -1e-12, 0.0, 1e-12, 0.2, 0.7, 0.99, 0.999999, 1.0])
    x = mg.erfinv(t(y)).numpy()
    assert x[0] == -np.inf and x[-1] == np.inf and x[5] == 0
    np.testing.assert_allclose([math.erf(v) for v in x[1:-1]], y[1:-1], rtol=1e-13, atol=1e-15)
    assert np.isnan(mg.erfinv(t([1.5, -2.0, np.nan])).numpy()).all()


EULER_GAMMA = 0.5772156649015329
ZETA3 = 1.2020569031595942


def test_digamma_and_polygamma_known_values():
    """psi(1) = -gamma, psi(1/2) = -gamma - 2 ln 2, psi(x + 1) = psi(x) + 1/x; psi_1(1) = pi^2/6,
    psi_1(1/2) = pi^2/2; psi_2(1) = -2 zeta(3); psi_n(x + 1) = psi_n(x) + (-1)^n n! / x^(n+1)."""
    psi = mg.digamma(t([1.0, 0.5, 2.0, 3.5, 2.5])).numpy()
    np.testing.assert_allclose(psi[:2], [-EULER_GAMMA, -EULER_GAMMA - 2 * math.log(2)], rtol=1e-13)
    np.testing.assert_allclose(psi[2], psi[0] + 1, rtol=1e-13)
    np.testing.assert_allclose(psi[3], psi[4] + 1 / 2.5, rtol=1e-13)
    np.testing.assert_allclose(mg.polygamma(1, t([1.0, 0.5])).numpy(), [math.pi ** 2 / 6, math.pi ** 2 / 2],
                               rtol=1e-12)
    np.testing.assert_allclose(mg.polygamma(2, t([1.0])).numpy(), [-2 * ZETA3], rtol=1e-12)
    x = np.array([0.3, 1.7, 4.0])
    for n in (1, 2, 3):
        step = (-1) ** n * math.factorial(n) / x ** (n + 1)
        np.testing.assert_allclose(mg.polygamma(n, t(x + 1)).numpy(), mg.polygamma(n, t(x)).numpy() + step,
                                   rtol=1e-11)


@pytest.mark.parametrize("a, closed_form", [
    (1.0, lambda x: -np.expm1(-x)),                                      # P(1, x) = 1 - e^-x
    (2.0, lambda x: 1 - np.exp(-x) * (1 + x)),                           # P(2, x) = 1 - e^-x (1 + x)
    (3.0, lambda x: 1 - np.exp(-x) * (1 + x + x * x / 2)),
    (0.5, lambda x: np.vectorize(math.erf)(np.sqrt(x))),                 # P(1/2, x) = erf(sqrt x)
])
def test_igamma_and_igammac_closed_forms(a, closed_form):
    x = np.array([0.0, 1e-6, 0.1, 0.5, 1.0, 2.0, 5.0, 12.0, 40.0])
    lower = closed_form(x)  # (these forms cancel near x = 0: absolute error there, a probability's)
    np.testing.assert_allclose(mg.igamma(t(np.full_like(x, a)), t(x)).numpy(), lower, rtol=1e-12, atol=1e-15)
    upper = mg.igammac(t(np.full_like(x, a)), t(x)).numpy()
    np.testing.assert_allclose(upper, 1 - lower, rtol=1e-9, atol=1e-15)


def test_mvlgamma_is_a_sum_of_lgammas():
    """log Gamma_p(a) = p (p - 1) / 4 log pi + sum_{j=1..p} lgamma(a + (1 - j) / 2)."""
    a = np.array([1.6, 2.0, 3.5, 10.0])
    for p in (1, 2, 3):
        expected = [p * (p - 1) / 4 * math.log(math.pi) + sum(math.lgamma(v + (1 - j) / 2) for j in range(1, p + 1))
                    for v in a]
        np.testing.assert_allclose(mg.mvlgamma(t(a), p).numpy(), expected, rtol=1e-13)


def test_fmod_remainder_floor_divide_and_rounding_against_numpy():
    """fmod keeps the dividend's sign (C's fmod), remainder the divisor's (Python's %); floor_divide rounds
    down; round goes half to even, as NumPy. (fmod survived a +0.125 planted in its forward.)"""
    a = np.repeat([-7.5, -3.0, -0.0, 0.0, 2.5, 5.0, 7.25, np.inf, np.nan], 6)
    b = np.tile([-2.0, -0.75, 0.5, 2.0, 3.0, np.inf], 9)
    with np.errstate(all="ignore"):
        same(mg.fmod(t(a), t(b)).numpy(), np.fmod(a, b), rtol=0)
        same(mg.remainder(t(a), t(b)).numpy(), np.remainder(a, b), rtol=0)
        finite = np.isfinite(b)
        same(mg.floor_divide(t(a[finite]), t(b[finite])).numpy(), np.floor_divide(a[finite], b[finite]), rtol=0)
    same(mg.fmod(t(a), 1.5).numpy(), np.fmod(a, 1.5), rtol=0)
    x = np.array([-2.5, -1.5, -0.5, -0.0, 0.5, 1.5, 2.5, 2.675, -7.3, np.inf, np.nan])
    for name, reference in [("round", np.round), ("floor", np.floor), ("ceil", np.ceil), ("trunc", np.trunc)]:
        same(getattr(mg, name)(t(x)).numpy(), reference(x), rtol=0)
    same(mg.round(t(x), decimals=1).numpy(), np.round(x, 1), rtol=1e-15)
