"""The elementwise math functions that are compositions of primitives: their values and every
derivative follow from the primitives' formulas by the chain rule.

Where a direct formula would overflow or cancel, the composition says how it avoids that (logaddexp,
hypot, lerp). A `where` with a constant stand-in keeps a masked-out branch's inf or NaN out of the
gradient (the "double where"): where(mask, f(where(mask, x, safe)), other).
"""
import math

import numpy as np

from .. import dtype as _dtype
from ..ops import rounding as _rounding, where
from ..ops.unary import _floating
from ..ops.util import promote, result_dtype
from ..tensor import Tensor

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


def _float_operands(a, b):
    """a, b promoted as PyTorch promotes them, and integers made the default float dtype."""
    a, b = promote(a, b)
    if result_dtype(a, b).kind != "f":
        a, b = (t.to(_dtype.get_default_dtype()) if isinstance(t, Tensor) else float(t) for t in (a, b))
    return a, b


def _both_tensors(a, b):
    """A number among the operands as a 0-d tensor of the other's dtype."""
    if not isinstance(a, Tensor):
        a = Tensor._make(np.asarray(a, dtype=b.dtype))
    if not isinstance(b, Tensor):
        b = Tensor._make(np.asarray(b, dtype=a.dtype))
    return a, b


def tan(x):
    # tan x = sin x / cos x
    x = _floating(x)
    return x.sin() / x.cos()


def log2(x):
    # log2 x = log x / ln 2
    return _floating(x).log() / _LN2


def log10(x):
    # log10 x = log x / ln 10
    return _floating(x).log() / _LN10


def exp2(x):
    # 2^x (exact at integers: 2^10 = 1024)
    return 2.0 ** _floating(x)


def reciprocal(x):
    # 1 / x (integers give the default float dtype)
    return 1.0 / _floating(x)


def square(x):
    # x^2 (integers stay integers)
    return x * x


def frac(x):
    # the fractional part, with x's sign: x - trunc(x)
    return x - x.trunc()


def deg2rad(x):
    return _floating(x) * (math.pi / 180.0)


def rad2deg(x):
    return _floating(x) * (180.0 / math.pi)


def lerp(start, end, weight):
    # start + w (end - start); for w >= 1/2 computed from the end, end - (1 - w)(end - start), which is
    # exact at w = 1 (as PyTorch)
    difference = end - start
    if isinstance(weight, Tensor):
        near_start = weight < 0.5
        return where(near_start, start + weight * difference, end - (1 - weight) * difference)
    return start + weight * difference if weight < 0.5 else end - (1 - weight) * difference


def logaddexp(a, b):
    # log(e^a + e^b) = max(a, b) + log(1 + e^-|a - b|): no overflow, and exact where one term dominates.
    # (Where a = b = ±inf, a - b is NaN: the difference is taken as 0 there, so the sum is the infinity.)
    a, b = _both_tensors(*_float_operands(a, b))
    same = a == b
    difference = where(same, 0.0, a - b)
    return a.maximum(b) + (-difference.abs()).exp().log1p()


def logaddexp2(a, b):
    # log2(2^a + 2^b) = logaddexp(a ln 2, b ln 2) / ln 2
    a, b = _float_operands(a, b)
    return logaddexp(a * _LN2, b * _LN2) / _LN2


def xlogy(x, y):
    # x log y, and 0 where x = 0 (unless y is NaN), as PyTorch: x * L with L = log y, except where x = 0 and
    # y <= 0 or y = inf, where the stand-in y = 1 gives L = 0 (log 0 = -inf and log(-1) = NaN would make 0 * L NaN).
    # So d/dx = L: log y at x = 0 with y > 0 (PyTorch's, and the finite difference's), 0 where y <= 0;
    # d/dy = x / y, 0 at the stand-ins (where x log y is 0 for every y near)
    x, y = _both_tensors(*_float_operands(x, y))
    stand_in = (x == 0) & ((y <= 0) | (y == math.inf))
    # + 0.0 where x = 0 turns the -0.0 of -0.0 * L into PyTorch's 0; + (-0.0) elsewhere changes nothing
    zero_sign = Tensor._make(np.where(x._array == 0, 0.0, -0.0).astype(x.dtype))
    return x * where(stand_in, 1.0, y).log() + zero_sign


def hypot(a, b):
    # sqrt(a^2 + b^2), with a and b first divided by s = max(|a|, |b|) so that the squares cannot
    # overflow or underflow: s * sqrt((a/s)^2 + (b/s)^2). s is a constant (no graph): it cancels exactly,
    # so the derivatives are those of sqrt(a^2 + b^2) at every order
    a, b = _float_operands(a, b)
    a_data = a._array if isinstance(a, Tensor) else a
    b_data = b._array if isinstance(b, Tensor) else b
    with np.errstate(invalid="ignore"):
        scale = np.maximum(np.abs(a_data), np.abs(b_data))
    scale = np.where((scale == 0) | ~np.isfinite(scale), 1.0, scale).astype(
        (a if isinstance(a, Tensor) else b).dtype)
    a_s, b_s = a / scale, b / scale
    out = (a_s * a_s + b_s * b_s).sqrt() * scale
    infinite = np.isinf(a_data) | np.isinf(b_data)  # hypot(inf, nan) = inf, as C's hypot
    return where(infinite, math.inf, out) if np.any(infinite) else out


def copysign(a, b):
    # |a| with the sign bit of b (-0.0 counts as negative): the primitive ops/rounding.py's Copysign
    return _rounding.copysign(*_both_tensors(*_float_operands(a, b)))


def sinc(x):
    # sin(pi x) / (pi x); near 0 (|pi x| < 1e-4) its Taylor polynomial 1 - (pi x)^2 / 6, exact there to
    # float64's precision, whose derivative -pi^2 x / 3 has none of the quotient's 0/0 (stand-in 1 there)
    x = _floating(x)
    small = x.abs() < 1e-4 / math.pi
    px_small = where(small, x, 0.0) * math.pi
    px = where(small, 1.0, x) * math.pi
    return where(small, 1 - px_small * px_small / 6, px.sin() / px)


def logit(x, eps=None):
    # log(x / (1 - x)) = log x - log(1 - x), x first clamped to [eps, 1 - eps] when eps is given; the
    # difference form has the derivative 1/x + 1/(1 - x), infinite (not NaN) at 0 and 1, as PyTorch's
    x = _floating(x)
    if eps is not None:
        x = x.clamp(eps, 1 - eps)
    return x.log() - (-x).log1p()


def fmax(a, b):
    # the larger of a and b, ignoring a NaN (NaN only where both are); a tie goes to a, as PyTorch
    a, b = _both_tensors(*promote(a, b))
    return where(b.isnan() | (a >= b), a, b)


def fmin(a, b):
    # the smaller of a and b, ignoring a NaN; a tie goes to a
    a, b = _both_tensors(*promote(a, b))
    return where(b.isnan() | (a <= b), a, b)


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    # NaN, +inf and -inf replaced (the infinities by the dtype's largest and smallest finite values by
    # default); the gradient passes where x is finite, 0 where it was replaced
    if x.dtype.kind != "f":
        return x.clone()
    info = np.finfo(x.dtype)
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    return where(x.isnan(), nan, where(x == math.inf, posinf, where(x == -math.inf, neginf, x)))


def float_power(a, b):
    # a^b computed in float64, as PyTorch's float_power
    a = a.double() if isinstance(a, Tensor) else float(a)
    b = b.double() if isinstance(b, Tensor) else float(b)
    return a ** b


def heaviside(x, values):
    # 0 below 0, 1 above, values at 0; a step, with no derivative in PyTorch: the result has no graph
    if not isinstance(values, Tensor):
        raise TypeError(f"heaviside: values must be a Tensor, got {type(values).__name__}")
    if x.dtype != values.dtype:
        raise TypeError(f"heaviside: input ({x.dtype}) and values ({values.dtype}) must have the same dtype")
    # NaN is neither 0 nor above it: 0, as PyTorch (NumPy's heaviside gives NaN)
    x_array, v_array = np.broadcast_arrays(x._array, values._array)
    return Tensor._make(np.where(x_array == 0, v_array, x_array > 0).astype(x.dtype))


def signbit(x):
    return Tensor._make(np.signbit(x._array))


def isfinite(x):
    return Tensor._make(np.isfinite(x._array))


def isposinf(x):
    return Tensor._make(np.isposinf(x._array))


def isneginf(x):
    return Tensor._make(np.isneginf(x._array))
