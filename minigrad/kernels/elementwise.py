"""Elementwise functions whose textbook formulas lose their accuracy in a tail, in forms that keep it.

The usual culprit is a subtraction of nearly equal numbers. sigmoid written as 0.5 (tanh(x/2) + 1)
cannot overflow, but for x << 0 it adds 1 to a tanh near -1: sigmoid(-20) comes out 0 where the value
is 2.06e-9, and its relative error reaches 7e-2 already at -15. The derivative y (1 - y) loses the
other tail the same way: for x >> 0, y rounds to 1 and 1 - y to 0.

Every function here is computed from e = exp(-|x|), which lies in (0, 1] and never overflows:

    sigmoid(x)      = 1 / (1 + e)  for x >= 0,   e / (1 + e)  for x < 0
    1 - sigmoid(x)  = sigmoid(-x), the same two values the other way round (never 1 - s)
    softplus(x)     = log(1 + e^x)        = max(x, 0) + log1p(e)
    log_sigmoid(x)  = -softplus(-x)       = min(x, 0) - log1p(e)

so each result is within a few float32 ulps of the true value over the whole range where that value
is a normal number, and so are the derivatives, built from the same pieces: sigmoid' = s (1 - s) with
both factors accurate, SiLU' = s (1 + x (1 - s)), BCE-with-logits' = (1 - y) s - pw y (1 - s), whose two
terms never cancel for a 0/1 target. tanh' = 1 - tanh^2 = 4 e2 / (1 + e2)^2 with e2 = exp(-2|x|).

GELU: Phi(x) = (1 + erf(x / sqrt 2)) / 2 adds 1 to an erf near -1 for x << 0, so x Phi(x) is 0 (or
noise) below x = -5.5 where it is a normal number down to x = -13. The lower tail (x < _GELU_TAIL) is
recomputed in float64 from erfc's continued fraction: Phi(x) = exp(-x^2/2) / sqrt(2 pi) * K(-x / sqrt 2)
* sqrt 2, K the fraction; `gelu_tails` patches a Phi and GELU computed by any fast body formula, and
`gelu_grad_tails` its derivative. The tanh form 0.5 x (1 + tanh(u)) is x sigmoid(2u).

float16 is computed in float32 and rounded once; float64 by the same formulas in float64.
"""
import math

import numpy as np

_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_TAIL = -3.0  # below this x, Phi(x) < 1.35e-3 and 1 + erf(x / sqrt 2) has lost ~10 of float32's 24 bits
_ERFC_TERMS = 24  # continued-fraction terms: relative error < 1e-9 for x <= -3


def _working(x):
    """(x as an array in the dtype to compute in, the dtype to return)."""
    x = np.asarray(x)
    if x.dtype == _F16:
        return x.astype(_F32), _F16
    if x.dtype.kind != "f":
        x = x.astype(_F32)
    return x, x.dtype


def _exp_neg_abs(x):
    """e = exp(-|x|), in (0, 1]: a new array."""
    e = np.abs(x, out=np.empty_like(x))  # out=: an array even for 0-d x, so the steps below are in place
    np.negative(e, out=e)
    return np.exp(e, out=e)


def _pair(x, e):
    """(sigmoid(x), sigmoid(-x)) from x and e = exp(-|x|), both accurate."""
    r = np.add(e, 1.0, out=np.empty_like(e))
    np.reciprocal(r, out=r)  # 1 / (1 + e): sigmoid(|x|)
    small = np.multiply(e, r)  # e / (1 + e): sigmoid(-|x|)
    positive = x >= 0
    return np.where(positive, r, small), np.where(positive, small, r)


def sigmoid(x):
    """1 / (1 + e^-x), accurate in both tails (sigmoid(-20) = 2.06e-9, not 0)."""
    return sigmoid_pair(x)[0]


def sigmoid_pair(x):
    """(sigmoid(x), 1 - sigmoid(x)), the second computed as sigmoid(-x): both accurate in both tails.
    Their product is sigmoid's derivative."""
    xw, dtype = _working(x)
    s, c = _pair(xw, _exp_neg_abs(xw))
    return s.astype(dtype, copy=False), c.astype(dtype, copy=False)


def sigmoid_grad(x):
    """d sigmoid(x) / dx = sigmoid(x) sigmoid(-x), accurate in both tails."""
    s, c = sigmoid_pair(x)
    s *= c
    return s


def softplus(x):
    """log(1 + e^x) = max(x, 0) + log1p(exp(-|x|)): no overflow, accurate in both tails."""
    xw, dtype = _working(x)
    out = np.log1p(_exp_neg_abs(xw))
    out += np.maximum(xw, 0)
    return out.astype(dtype, copy=False)


def log_sigmoid(x):
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)); its derivative is sigmoid(-x)."""
    xw, dtype = _working(x)
    out = np.minimum(xw, 0)
    out -= np.log1p(_exp_neg_abs(xw))
    return out.astype(dtype, copy=False)


def silu(x):
    """(x sigmoid(x), e) with e = exp(-|x|), which silu_grad takes to rebuild sigmoid(+-x) cheaply."""
    xw, dtype = _working(x)
    e = _exp_neg_abs(xw)
    s, _ = _pair(xw, e)
    s *= xw
    return s.astype(dtype, copy=False), e


def silu_grad(x, e=None):
    """d (x sigmoid(x)) / dx = s (1 + x (1 - s)), s = sigmoid(x), with 1 - s computed as sigmoid(-x).
    `e` is the second value silu returned (recomputed if not given)."""
    xw, dtype = _working(x)
    s, c = _pair(xw, _exp_neg_abs(xw) if e is None else e)
    c *= xw
    c += 1.0
    s *= c
    return s.astype(dtype, copy=False)


def tanh_grad(x):
    """d tanh(x) / dx = 1 - tanh(x)^2 = 4 e2 / (1 + e2)^2, e2 = exp(-2|x|): accurate where tanh(x)
    rounds to +-1 (1 - y * y from the output gives 0 there)."""
    xw, dtype = _working(x)
    e2 = _exp_neg_abs(2 * xw)
    d = np.add(e2, 1.0, out=np.empty_like(e2))
    np.square(d, out=d)
    np.divide(e2, d, out=d)
    d *= 4.0
    return d.astype(dtype, copy=False)


def bce_with_logits(x, y, pos_weight=None):
    """(loss, softplus(-x)) of binary cross-entropy with logits x and targets y, elementwise:

        loss = -pw y log sigmoid(x) - (1 - y) log(1 - sigmoid(x))
             = (1 - y) x + lw log(1 + e^-x),   lw = 1 + (pw - 1) y
             = [x >= 0: (1 - y) x,  x < 0: -pw y x] + lw log1p(exp(-|x|))

    The last form adds no large terms that cancel: for y = 0 and x = -20 it is log1p(e^-20) = 2.06e-9
    (the middle one gives 20 - 20). softplus(-x) = log(1 + e^-x) is returned for the derivatives in y
    and pw."""
    x = np.asarray(x)
    tail = np.log1p(_exp_neg_abs(x))
    softplus_neg = np.maximum(-x, 0) + tail
    positive = x >= 0
    if pos_weight is None:
        linear = np.where(positive, (1 - y) * x, -(y * x))
        return linear + tail, softplus_neg
    linear = np.where(positive, (1 - y) * x, -(pos_weight * y * x))
    return linear + (1 + (pos_weight - 1) * y) * tail, softplus_neg


def bce_with_logits_grad(x, y, pos_weight=None):
    """d loss / dx of bce_with_logits = (1 - y) - lw sigmoid(-x) = (1 - y) sigmoid(x) - pw y sigmoid(-x):
    for a 0/1 target one term is zero and the other accurate (sigmoid(x) - y would cancel for y = 1)."""
    s, c = sigmoid_pair(x)
    weight = y if pos_weight is None else pos_weight * y
    return (1 - y) * s - weight * c


def _normal_cdf_tail64(x):
    """Phi(x) for float64 x <= _GELU_TAIL: 0.5 erfc(z), z = -x / sqrt 2, from the continued fraction
    erfc(z) = exp(-z^2) / sqrt(pi) / (z + (1/2) / (z + 1 / (z + (3/2) / (z + ...))))."""
    z = -x / math.sqrt(2.0)
    t = z.copy()
    for k in range(_ERFC_TERMS, 0, -1):
        t = z + (0.5 * k) / t
    return np.exp(-0.5 * x * x) / (math.sqrt(math.pi) * 2.0) / t


def normal_cdf_tail(x):
    """Phi(x), the standard normal CDF, for x <= -3 (its lower tail), to float64 accuracy; any dtype."""
    xw = np.asarray(x)
    return _normal_cdf_tail64(xw.astype(np.float64)).astype(xw.dtype if xw.dtype.kind == "f" else _F32)


def gelu_tails(x, y, cdf=None):
    """Fix a GELU computed by a fast body formula in its lower tail, in place: where x < -3, y = x Phi(x)
    (and cdf = Phi(x), if given) recomputed in float64. Returns y. One comparison pass when nothing is
    in the tail."""
    below = x < _GELU_TAIL
    if below.any():
        xt = x[below].astype(np.float64)
        phi = _normal_cdf_tail64(xt)
        y[below] = xt * phi
        if cdf is not None:
            cdf[below] = phi
    return y


def gelu_grad_tails(x, d):
    """Fix GELU's derivative Phi(x) + x phi(x), computed by a fast body formula, in its lower tail,
    in place (where x < -3, in float64: there exp(-x^2/2) in float32 has a relative error of x^2/2
    ulps). Returns d."""
    below = x < _GELU_TAIL
    if below.any():
        xt = x[below].astype(np.float64)
        d[below] = _normal_cdf_tail64(xt) + xt * np.exp(-0.5 * xt * xt) * _INV_SQRT_2PI
    return d


def _gelu_tanh_parts(xw):
    """(sigmoid(2u), sigmoid(-2u)) for u = sqrt(2/pi) (x + 0.044715 x^3)."""
    return sigmoid_pair((2 * _SQRT_2_OVER_PI) * (xw + 0.044715 * xw * xw * xw))


def _gelu_tanh_grad_from(xw, s, c):
    c *= s
    c *= 2 * _SQRT_2_OVER_PI * xw * (1 + 3 * 0.044715 * xw * xw)
    c += s
    return c


def gelu_tanh(x):
    """0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), computed as x sigmoid(2u): no 1 + tanh(u)
    that cancels for x << 0. Where x < -3 in float64: there an error in u is multiplied by |2u| in
    exp(2u), and sigmoid(2u) is a subnormal float32 before x sigmoid(2u) is a normal one."""
    xw, dtype = _working(x)
    s, _ = _gelu_tanh_parts(xw)
    s *= xw
    below = xw < _GELU_TAIL
    if below.any():
        xt = xw[below].astype(np.float64)
        s[below] = xt * _gelu_tanh_parts(xt)[0]
    return s.astype(dtype, copy=False)


def gelu_tanh_grad(x):
    """d/dx of x sigmoid(2u) = s + 2 x s (1 - s) u',  u' = sqrt(2/pi) (1 + 3 * 0.044715 x^2), with
    s = sigmoid(2u) and 1 - s = sigmoid(-2u) both accurate; where x < -3 in float64, as gelu_tanh."""
    xw, dtype = _working(x)
    d = _gelu_tanh_grad_from(xw, *_gelu_tanh_parts(xw))
    below = xw < _GELU_TAIL
    if below.any():
        xt = xw[below].astype(np.float64)
        d[below] = _gelu_tanh_grad_from(xt, *_gelu_tanh_parts(xt))
    return d.astype(dtype, copy=False)
