"""Rounding and the remainders: floor, ceil, trunc, round, sign, rounded division, fmod and remainder;
and the pieces of a float: copysign, nextafter, frexp.

The rounding functions and sign are steps: flat between their jumps, so their derivative is 0 (PyTorch's
too), and their results still carry a graph node, so `x.floor().sum().backward()` and
`x.sign().sum().backward()` give x a zero gradient as in PyTorch. The remainders a - q b (q the rounded
quotient) have derivative 1 in a and -q in b. copysign, nextafter and frexp's mantissa follow PyTorch's
formulas, NaN and the points where two inputs meet included.
"""
import numpy as np

from ..errors import DtypeError
from ..function import Function
from ..tensor import Tensor
from .util import promote, result_dtype, tangent_sum, zero_jvp

_ROUNDINGS = {"floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "round": np.round}


class Rounded(Function, arrays=True):
    """floor, ceil, trunc or round (half to even, as PyTorch) of x."""

    @staticmethod
    def forward(ctx, x, how):
        # y = floor(x), ceil(x), trunc(x) or round(x): the integer below, above, towards 0, nearest
        return _ROUNDINGS[how](x)

    @staticmethod
    def backward(ctx, grad):
        # a step function is flat between its jumps: dy/dx = 0
        return np.zeros_like(grad), None

    jvp = staticmethod(zero_jvp)  # a step function: dy = 0


class Sign(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = -1, 0 or 1 by the sign of x, and 0 for NaN: PyTorch's (x > 0) - (x < 0)
        return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        # a step: dy/dx = 0 (PyTorch's SignBackward0 gives zeros too)
        return np.zeros_like(grad)

    jvp = staticmethod(zero_jvp)  # a step function: dy = 0


class Copysign(Function, arrays=True):
    @staticmethod
    def forward(ctx, a, b):
        # y = |a| with the sign bit of b (-0.0 and -NaN count as negative)
        y = np.copysign(a, b)
        ctx.save_for_backward(a, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        # dy/da = y / a (= ±1), 0 where a = 0, NaN where a is NaN or infinite (PyTorch's formula);
        # dy/db = 0: b gives only a sign
        a, y = ctx.saved_tensors
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.where(a == 0, 0.0, y / a)
        return grad * ratio, np.zeros_like(grad)

    @staticmethod
    def jvp(ctx, da, db):
        # dy = (y / a) da, the same ratio as the backward's (b gives only a sign: no term in db)
        if da is None:
            return None
        a, y = np.asarray(ctx.primals[0].detach().numpy()), np.asarray(ctx.result.detach().numpy())
        with np.errstate(invalid="ignore", divide="ignore"):
            return da * np.where(a == 0, 0.0, y / a).astype(y.dtype)


class Nextafter(Function, arrays=True):
    @staticmethod
    def forward(ctx, a, b):
        # y = the next float after a towards b (b itself where a == b)
        ctx.save_for_backward(a, b)
        return np.nextafter(a, b)

    @staticmethod
    def backward(ctx, grad):
        # dy/da = 1 where a != b (y is a moved by one step), 0 where a == b (y is b); dy/db = 0 (PyTorch's)
        a, b = ctx.saved_tensors
        return grad * (a != b), np.zeros_like(grad)

    @staticmethod
    def jvp(ctx, da, db):
        # dy = da where a != b, 0 where a == b; b gives no term
        if da is None:
            return None
        a, b = ctx.primals
        return da * (a != b)


class Mantissa(Function, arrays=True):
    node_name = "FrexpBackward0"

    @staticmethod
    def forward(ctx, x):
        # y = m with x = m 2^e, 0.5 <= |m| < 1 (m = x, e = 0 for 0, NaN and ±inf)
        mantissa = np.frexp(x)[0]
        ctx.save_for_backward(x, mantissa)
        return mantissa

    @staticmethod
    def backward(ctx, grad):
        # dy/dx = 2^-e = m / x, 1 where e = 0 for 0, NaN, ±inf (PyTorch's grad / exponent.exp2())
        x, mantissa = ctx.saved_tensors
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = np.where((x == 0) | ~np.isfinite(x), 1.0, mantissa / x)
        return grad * scale

    @staticmethod
    def jvp(ctx, dx):
        # dy = 2^-e dx = (m / x) dx, dx itself where e = 0 (0, NaN, ±inf), the backward's scale
        x, m = np.asarray(ctx.primals[0].detach().numpy()), np.asarray(ctx.result.detach().numpy())
        with np.errstate(invalid="ignore", divide="ignore"):
            return dx * np.where((x == 0) | ~np.isfinite(x), 1.0, m / x).astype(m.dtype)


class RoundedDivide(Function, arrays=True):
    """a / b rounded towards 0 ("trunc") or down ("floor"), as div(a, b, rounding_mode=...)."""

    @staticmethod
    def forward(ctx, a, b, mode):
        # y = trunc(a / b) or floor(a / b); integers divide exactly, as Python's // does for floor
        if mode == "floor":
            return np.floor_divide(a, b)
        if np.result_type(a, b).kind == "f":
            return np.trunc(np.true_divide(a, b))
        quotient = np.floor_divide(np.abs(a), np.abs(b))
        return np.where((a < 0) != (b < 0), -quotient, quotient)

    @staticmethod
    def backward(ctx, grad):
        # a rounded quotient is a step function of a and of b: both derivatives are 0
        return np.zeros_like(grad), np.zeros_like(grad), None

    jvp = staticmethod(zero_jvp)  # a rounded quotient is a step function of a and b: dy = 0


class Fmod(Function, arrays=True):
    @staticmethod
    def forward(ctx, a, b):
        # y = a - trunc(a / b) b: the remainder with the sign of a (C's fmod)
        ctx.save_for_backward(a, b)
        return np.fmod(a, b)

    @staticmethod
    def backward(ctx, grad):
        # dy/da = 1, dy/db = -trunc(a / b)
        a, b = ctx.saved_tensors
        return grad, -grad * np.trunc(a / b)

    @staticmethod
    def jvp(ctx, da, db):
        # dy = da - trunc(a / b) db
        a, b = ctx.primals
        return tangent_sum(da, None if db is None else -db * np.trunc(a / b))


class Remainder(Function, arrays=True):
    @staticmethod
    def forward(ctx, a, b):
        # y = a - floor(a / b) b: the remainder with the sign of b (Python's %)
        ctx.save_for_backward(a, b)
        return np.remainder(a, b)

    @staticmethod
    def backward(ctx, grad):
        # dy/da = 1, dy/db = -floor(a / b)  (the floored quotient as Python's // computes it)
        a, b = ctx.saved_tensors
        return grad, -grad * np.floor_divide(a, b)

    @staticmethod
    def jvp(ctx, da, db):
        # dy = da - floor(a / b) db
        a, b = ctx.primals
        return tangent_sum(da, None if db is None else -db * np.floor_divide(a, b))


def _rounded(x, how):
    if x.dtype.kind != "f":
        return x.clone()  # an integer is already whole (PyTorch returns a copy)
    return Rounded.apply(x, how)


def sign(input):
    """-1, 0 or 1 by the sign of input (0 for NaN); bool stays bool (a copy), as PyTorch."""
    if input.dtype.kind == "b":
        return input.clone()
    return Sign.apply(input)


def copysign(a, b):
    """|a| with the sign bit of b; a and b floating point tensors of one dtype, broadcast together."""
    return Copysign.apply(a, b)


def nextafter(a, b):
    """The next floating point value after a towards b; a and b floating point tensors of one dtype."""
    return Nextafter.apply(a, b)


def frexp_mantissa(input):
    """The mantissa m of input = m 2^e (0.5 <= |m| < 1), differentiable in input."""
    return Mantissa.apply(input)


def floor(input):
    return _rounded(input, "floor")


def ceil(input):
    return _rounded(input, "ceil")


def trunc(input):
    return _rounded(input, "trunc")


def round(input, *, decimals=0):  # noqa: A001  (PyTorch's name)
    """Round half to even; with decimals, to that many decimal places (round(x * 10^d) / 10^d, as PyTorch)."""
    if decimals == 0:
        return _rounded(input, "round")
    if input.dtype.kind != "f":
        raise DtypeError(f"round: decimals={decimals} needs a floating point tensor, got {input.dtype}")
    scale = 10.0 ** decimals
    return _rounded(input * scale, "round") / scale


def _operands(a, b, op):
    a, b = promote(a, b)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError(f"{op}: expects a tensor among its operands, got {type(a).__name__} and {type(b).__name__}")
    # a Python number as a 0-d constant of the result dtype, so that NumPy cannot widen it (np.abs(2) is int64)
    target = result_dtype(a, b)
    if target == np.bool_:  # NumPy would answer in int8; PyTorch has no rounded division of bools
        raise DtypeError(f"{op}: not defined for two bool operands, as in PyTorch (convert one with .long())")
    a, b = (x if isinstance(x, Tensor) else Tensor._make(np.asarray(x, dtype=target)) for x in (a, b))
    if result_dtype(a, b).kind != "f":
        b_data = b._array if isinstance(b, Tensor) else np.asarray(b)
        if np.any(b_data == 0):
            raise ZeroDivisionError(f"{op}: integer division by zero (divisor {b_data.tolist()!s:.60})")
    return a, b


def fmod(input, other):
    """The remainder of input / other with input's sign: input - trunc(input / other) * other."""
    return Fmod.apply(*_operands(input, other, "fmod"))


def remainder(input, other):
    """The remainder of input / other with other's sign (Python's %): input - floor(input / other) * other."""
    return Remainder.apply(*_operands(input, other, "remainder"))


def rounded_divide(input, other, mode, op="div"):
    """input / other rounded towards 0 (mode "trunc") or down (mode "floor"), in the operands' dtype."""
    if mode not in ("trunc", "floor"):
        raise ValueError(f"{op}: rounding_mode must be None, 'trunc' or 'floor', got {mode!r}")
    return RoundedDivide.apply(*_operands(input, other, op), mode)
