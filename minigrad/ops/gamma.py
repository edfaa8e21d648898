"""The gamma family and the error function's relatives: lgamma, digamma, polygamma (one primitive, as each
is the derivative of the one before), erfc and erfinv. NumPy has none of them, and minigrad needs no
scipy: their arithmetic is here, in float64 (float32 inputs are computed in float64 and rounded).

    psi^(-1)(x) = lgamma(x) = log|Gamma(x)|     (math.lgamma, element by element)
    psi^(0)(x)  = digamma(x) = d lgamma / dx    (recurrence up to x >= 10, then the asymptotic series)
    psi^(n)(x)  = d^n digamma / dx^n            (the same, n >= 1)
"""
import math

import numpy as np

from ..function import Function
from . import special
from .unary import _floating
from .util import promote

# B_2k / (2k) for the asymptotic series of digamma: psi(x) ~ log x - 1/(2x) - sum_k B_2k / (2k x^2k)
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)
_SHIFT = 10.0  # the recurrence lifts x to here, where eight terms of the series are exact to float64


def _lgamma(x):
    def one(v):
        if math.isnan(v):
            return v
        if math.isinf(v):
            return math.inf  # lgamma(+-inf) = inf, as PyTorch
        if v <= 0 and v == math.floor(v):
            return math.inf  # a pole of Gamma, as PyTorch
        return math.lgamma(v)

    return np.vectorize(one, otypes=[np.float64])(x) if np.size(x) else np.zeros(np.shape(x))


def _polygamma(n, x):
    """psi^(n)(x) for n >= 0, float64 arrays; x <= 0 only for n = 0 (by reflection)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        if n == 0:
            reflect = x < 0.5
            y = np.where(reflect, 1.0 - x, x)
            out = _polygamma_positive(0, y)
            # psi(1 - x) - psi(x) = pi cot(pi x)
            out = np.where(reflect, out - math.pi / np.tan(math.pi * x), out)
            pole = (x <= 0) & (x == np.floor(x))
            # digamma(+-0) = -+inf (psi(x) ~ -1/x there), NaN at the negative integers, as PyTorch
            out = np.where(pole, np.where(x == 0, -np.copysign(math.inf, x), math.nan), out)
            return np.where(x == math.inf, math.inf, out)
        return _polygamma_positive(n, x)  # (negative x: the recurrence lifts it; a pole gives inf)


def _polygamma_positive(n, x):
    sign = -1.0 if n % 2 == 0 else 1.0  # (-1)^(n+1)
    factorial = math.factorial(n)
    total = np.zeros_like(x)
    y = np.where(np.isfinite(x), x, _SHIFT)
    while True:  # psi^(n)(y) = psi^(n)(y + 1) + (-1)^(n+1) n! / y^(n+1)
        low = y < _SHIFT
        if not low.any():
            break
        total = total + np.where(low, sign * factorial / y ** (n + 1), 0.0)
        y = np.where(low, y + 1, y)
    if n == 0:
        series = np.log(y) - 0.5 / y
        for k, b in enumerate(_BERNOULLI, start=1):
            series = series - b / (2 * k) / y ** (2 * k)
    else:
        # (-1)^(n+1) [ (n-1)!/y^n + n!/(2 y^(n+1)) + sum_k B_2k (2k+n-1)! / ((2k)! y^(2k+n)) ]
        series = math.factorial(n - 1) / y ** n + factorial / (2 * y ** (n + 1))
        for k, b in enumerate(_BERNOULLI, start=1):
            series = series + b * math.factorial(2 * k + n - 1) / math.factorial(2 * k) / y ** (2 * k + n)
        series = sign * series
    out = total + series
    out = np.where(x == math.inf, 0.0 if n else math.inf, out)
    return np.where(np.isnan(x) | (x == -math.inf), math.nan, out)


class Polygamma(Function, arrays=True):
    """psi^(n)(x): lgamma for n = -1, digamma for n = 0, the n-th derivative of digamma for n >= 1."""

    @staticmethod
    def forward(ctx, x, n):
        # y = psi^(n)(x)
        ctx.save_for_backward(x)
        ctx.n = n
        values = _lgamma(x) if n == -1 else _polygamma(n, x)
        return np.asarray(values, dtype=np.float64).astype(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        # d psi^(n)(x) / dx = psi^(n+1)(x)   (d lgamma/dx = digamma)
        (x,) = ctx.saved_tensors
        return grad * Polygamma.apply(x, ctx.n + 1), None

    @staticmethod
    def jvp(ctx, dx, n):
        # d psi^(n)(x) = psi^(n+1)(x) dx
        x, n = ctx.primals
        return dx * Polygamma.apply(x, n + 1)


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0


def erfc_array(x):
    """1 - erf(x) without the cancellation of that difference for large x (float64 arithmetic).

    For z > 1, erf's own tails are erf(z) = 1 - exp(-z^2) H(1/z - t0) (special.py), so erfc(z) = exp(-z^2) H:
    the polynomial H is erfc's scaled form itself; beyond 6 the asymptotic series of erfc(z) e^(z^2)."""
    x = np.asarray(x, dtype=np.float64)
    out = 1.0 - special.erf(x)  # exact enough where erfc >= 0.15 (x <= 1), and for every x < 0
    with np.errstate(all="ignore"):
        for low, high, t0, coefficients in ((1.0, 2.0, special._TAIL1_T0, special._TAIL1),
                                            (2.0, 6.0, special._TAIL2_T0, special._TAIL2)):
            inside = (x > low) & (x <= high)
            if inside.any():
                z = x[inside]
                out[inside] = np.exp(-z * z) * special._horner(coefficients, 1.0 / z - t0)
        far = x > 6.0
        if far.any():
            z = x[far]
            t = 1.0 / (2 * z * z)
            term, total = np.ones_like(z), np.ones_like(z)
            for k in range(1, 26):  # sum_k (-1)^k (2k-1)!! / (2 z^2)^k
                term = -term * (2 * k - 1) * t
                total = total + term
            out[far] = np.where(z == math.inf, 0.0, np.exp(-z * z) * total / (z * math.sqrt(math.pi)))
    return out


class Erfc(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = erfc x = 1 - erf x
        ctx.save_for_backward(x)
        return erfc_array(x).astype(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        # d(erfc x)/dx = -2/sqrt(pi) e^(-x^2)
        (x,) = ctx.saved_tensors
        return grad * (-_TWO_OVER_SQRT_PI * np.exp(-x * x))

    @staticmethod
    def jvp(ctx, dx):
        # d(erfc x) = -2/sqrt(pi) e^(-x^2) dx
        x = ctx.primals[0]
        return dx * (-_TWO_OVER_SQRT_PI * np.exp(-x * x))


def erfinv_array(y):
    """The inverse of erf on [-1, 1]: a first guess, then Newton's method (on erf near 0, on erfc where
    |y| > 1/2, where 1 - |y| is exact and erf(x) - y would cancel)."""
    y = np.asarray(y, dtype=np.float64)
    with np.errstate(all="ignore"):
        a = 0.147  # Winitzki's approximation, within 2e-3, as the first guess
        log_term = np.log1p(-y * y)
        first = 2 / (math.pi * a) + log_term / 2
        x = np.sign(y) * np.sqrt(np.sqrt(first * first - log_term / a) - first)
        s = np.sign(y)
        tail = np.abs(y) > 0.5
        for _ in range(4):
            slope = _TWO_OVER_SQRT_PI * np.exp(-x * x)
            residual = np.where(tail, s * ((1 - np.abs(y)) - erfc_array(np.abs(x))), special.erf(x) - y)
            x = x - residual / slope
        x = np.where(y == 1, math.inf, np.where(y == -1, -math.inf, x))
        return np.where(np.abs(y) > 1, math.nan, x)


class Erfinv(Function, arrays=True):
    @staticmethod
    def forward(ctx, y):
        # x = erfinv y: erf(x) = y
        x = erfinv_array(y).astype(y.dtype)
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        # d(erfinv y)/dy = 1 / erf'(x) = sqrt(pi)/2 e^(x^2)
        (x,) = ctx.saved_tensors
        return grad * (_SQRT_PI_OVER_TWO * np.exp(x * x))

    @staticmethod
    def jvp(ctx, dy):
        # x = erfinv y: dx = sqrt(pi)/2 e^(x^2) dy
        x = ctx.result
        return dy * (_SQRT_PI_OVER_TWO * np.exp(x * x))


def lgamma(input):
    return Polygamma.apply(_floating(input), -1)


def digamma(input):
    return Polygamma.apply(_floating(input), 0)


def polygamma(n, input):
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"polygamma: n must be a non-negative int, got {n!r}")
    return Polygamma.apply(_floating(input), n)


def erfc(input):
    return Erfc.apply(_floating(input))


def erfinv(input):
    return Erfinv.apply(_floating(input))


def mvlgamma(input, p):
    # the multivariate log-gamma: p(p-1)/4 log(pi) + sum_{j<p} lgamma(x - j/2), defined for x > (p-1)/2
    x = _floating(input)
    if np.any(x._array <= (p - 1) / 2):
        raise ValueError(f"mvlgamma: all elements must be greater than (p-1)/2 = {(p - 1) / 2}")
    total = p * (p - 1) / 4 * math.log(math.pi)
    for j in range(p):
        total = lgamma(x - j / 2) + total
    return total


# ---- the modified Bessel functions I0, I1 (i0's derivative is I1), and the incomplete gamma functions ----
def _i1_array(x):
    """I1(x): its power series sum_k (x/2)^(2k+1) / (k! (k+1)!) for |x| <= 15, the asymptotic series
    e^|x| / sqrt(2 pi |x|) (1 - 3/(8|x|) - ...) beyond (I1 is odd)."""
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    with np.errstate(all="ignore"):
        half = np.minimum(a, 15.0) / 2
        term = half.copy()
        series = term.copy()
        for k in range(1, 60):
            term = term * half * half / (k * (k + 1))
            series = series + term
        big = np.maximum(a, 15.0)
        term, asymptotic = np.ones_like(big), np.ones_like(big)
        for k in range(1, 30):  # term_k = term_{k-1} * -(4 - (2k-1)^2) / (8 k x)
            term = term * -(4.0 - (2 * k - 1) ** 2) / (8.0 * k * big)
            asymptotic = asymptotic + term
        asymptotic = asymptotic * np.exp(big) / np.sqrt(2 * math.pi * big)
        out = np.where(a <= 15.0, series, asymptotic)
    return np.copysign(out, x)


class I0(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = I0(x) = sum_k (x/2)^(2k) / (k!)^2
        ctx.save_for_backward(x)
        return np.i0(x).astype(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        # d I0(x)/dx = I1(x)
        (x,) = ctx.saved_tensors
        return grad * I1.apply(x)

    @staticmethod
    def jvp(ctx, dx):
        # d I0(x) = I1(x) dx
        return dx * I1.apply(ctx.primals[0])


class I1(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = I1(x) = sum_k (x/2)^(2k+1) / (k! (k+1)!)
        ctx.save_for_backward(x)
        return _i1_array(x).astype(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        # d I1(x)/dx = I0(x) - I1(x) / x   (1/2 at x = 0: the stand-in x = 1 keeps 0/0 out)
        (x,) = ctx.saved_tensors
        zero = x == 0
        safe = np.where(zero, 1.0, x)
        return grad * np.where(zero, 0.5, I0.apply(x) - I1.apply(safe) / safe)

    @staticmethod
    def jvp(ctx, dx):
        # d I1(x) = (I0(x) - I1(x) / x) dx  (1/2 at x = 0)
        x = ctx.primals[0]
        zero = x == 0
        safe = np.where(zero, 1.0, x)
        return dx * np.where(zero, 0.5, I0.apply(x) - I1.apply(safe) / safe)


def _lower_incomplete_series(a, x):
    # P(a, x) = e^-x x^a / Gamma(a + 1) sum_n x^n / ((a + 1) ... (a + n))
    term = np.ones_like(x) / a
    total = term.copy()
    for n in range(1, 300):
        term = term * x / (a + n)
        total = total + term
    return total * np.exp(a * np.log(x) - x - _lgamma(a))


def _upper_incomplete_fraction(a, x):
    # Q(a, x) = e^-x x^a / Gamma(a) * 1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - ...)), by Lentz's method
    tiny = 1e-300
    b = x + 1 - a
    c = np.full_like(x, 1 / tiny)
    d = 1 / np.where(b == 0, tiny, b)
    h = d.copy()
    for i in range(1, 300):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = 1 / np.where(np.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        h = h * d * c
    return h * np.exp(a * np.log(x) - x - _lgamma(a))


def _regularized_gamma(a, x, upper):
    a, x = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(x, dtype=np.float64))
    with np.errstate(all="ignore"):
        use_series = x < a + 1
        series = _lower_incomplete_series(a, np.where(use_series, x, 0.5))
        fraction = _upper_incomplete_fraction(a, np.where(use_series, a + 2, x))
        lower = np.where(use_series, series, 1 - fraction)
        upper_value = np.where(use_series, 1 - series, fraction)
        out = upper_value if upper else lower
        out = np.where(x == 0, 1.0 if upper else 0.0, out)
        out = np.where(x == math.inf, 0.0 if upper else 1.0, out)
        return np.where((a <= 0) | (x < 0) | np.isnan(a) | np.isnan(x), math.nan, out)


class RegularizedGamma(Function, arrays=True):
    """P(a, x) = gamma(a, x) / Gamma(a) (igamma), or Q = 1 - P (igammac, with upper)."""

    @staticmethod
    def forward(ctx, a, x, upper):
        # y = P(a, x) = (1/Gamma(a)) int_0^x t^(a-1) e^-t dt,  or Q(a, x) = 1 - P(a, x)
        ctx.save_for_backward(a, x)
        ctx.upper = upper
        return _regularized_gamma(a, x, upper).astype(np.result_type(a, x))

    @staticmethod
    def backward(ctx, grad):
        # dP/dx = x^(a-1) e^-x / Gamma(a) = -dQ/dx; no derivative in a (as PyTorch)
        a, x = ctx.saved_tensors
        density = np.exp((a - 1) * np.log(x) - x - Polygamma.apply(a, -1))
        return None, grad * (-density if ctx.upper else density), None

    @staticmethod
    def jvp(ctx, da, dx, upper):
        # dP = x^(a-1) e^-x / Gamma(a) dx = -dQ; none in a (as the backward)
        a, x, upper = ctx.primals
        if dx is None:
            return None
        density = np.exp((a - 1) * np.log(x) - x - Polygamma.apply(a, -1))
        return dx * (-density if upper else density)


def i0(input):
    return I0.apply(_floating(input))


def igamma(input, other):
    a, x = promote(input, other)
    return RegularizedGamma.apply(_floating(a), _floating(x), False)


def igammac(input, other):
    a, x = promote(input, other)
    return RegularizedGamma.apply(_floating(a), _floating(x), True)
