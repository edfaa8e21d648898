"""Elementwise functions of one tensor. Each backward is dL/dx = dL/dy * f'(x).

isnan and isinf, at the end, are tests with bool results and no gradient.
"""
import math

import numpy as np

from .. import dtype as _dtype
from ..function import Function
from ..tensor import Tensor
from . import special
from .util import linear_jvp, scalar

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _floating(x):
    """exp, log, ... of an integer or bool tensor give the default float dtype, as in PyTorch."""
    return x if x.dtype.kind == "f" else to_dtype(x, _dtype.get_default_dtype())


class Exp(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = e^x
        y = np.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        # d(e^x)/dx = e^x = y
        (y,) = ctx.saved_tensors
        return grad * y

    @staticmethod
    def jvp(ctx, dx):
        # d(e^x) = e^x dx = y dx
        return dx * ctx.result


class Log(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = log x
        ctx.save_for_backward(x)
        return np.log(x)

    @staticmethod
    def backward(ctx, grad):
        # d(log x)/dx = 1 / x
        (x,) = ctx.saved_tensors
        return grad / x

    @staticmethod
    def jvp(ctx, dx):
        # d(log x) = dx / x
        return dx / ctx.primals[0]


class Sqrt(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = sqrt x
        y = np.sqrt(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        # d(sqrt x)/dx = 1 / (2 sqrt x)
        (y,) = ctx.saved_tensors
        return grad / (2 * y)

    @staticmethod
    def jvp(ctx, dx):
        # d(sqrt x) = dx / (2 sqrt x) = dx / (2 y)
        return dx / (2 * ctx.result)


class Tanh(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = tanh x
        y = np.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        # d(tanh x)/dx = 1 - tanh(x)^2
        (y,) = ctx.saved_tensors
        return grad * (1 - y * y)

    @staticmethod
    def jvp(ctx, dx):
        # d(tanh x) = (1 - y^2) dx
        y = ctx.result
        return dx * (1 - y * y)


class ReLU(Function, arrays=True):
    node_name = "ReluBackward0"  # PyTorch's name for this node

    # Saves its output y rather than x (y > 0 exactly where x > 0): y is kept anyway by the op that
    # uses it, so x can be freed.
    @staticmethod
    def forward(ctx, x):
        # y = max(x, 0)
        y = np.maximum(x, 0)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        # d(max(x, 0))/dx = 1 where x > 0, else 0 (0 at the kink, as PyTorch)
        (y,) = ctx.saved_tensors
        return grad * (y > 0)

    @staticmethod
    def jvp(ctx, dx):
        # d max(x, 0) = dx where x > 0, else 0
        return dx * (ctx.result > 0)


class Abs(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = |x|
        ctx.save_for_backward(x)
        return np.abs(x)

    @staticmethod
    def backward(ctx, grad):
        # d|x|/dx = sign(x) (0 at x = 0, and at NaN, as PyTorch)
        (x,) = ctx.saved_tensors
        sign = np.where(np.isnan(x), 0, np.sign(x))
        return grad * sign  # (sign has derivative 0: it is a constant factor at every order)

    @staticmethod
    def jvp(ctx, dx):
        # d|x| = sign(x) dx  (0 at x = 0 and at NaN)
        x = ctx.primals[0]
        return dx * np.where(np.isnan(x), 0, np.sign(x))



class Clamp(Function, arrays=True):
    node_name = "ClampBackward1"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, x, low, high):
        # y = min(max(x, low), high)
        ctx.save_for_backward(x)
        ctx.low, ctx.high = low, high
        return np.clip(x, low, high)

    @staticmethod
    def backward(ctx, grad):
        # the gradient passes where low <= x <= high (bounds included, as PyTorch), else 0
        (x,) = ctx.saved_tensors
        if ctx.low is not None:
            grad = grad * (x >= ctx.low)
        if ctx.high is not None:
            grad = grad * (x <= ctx.high)
        return grad, None, None

    @staticmethod
    def jvp(ctx, dx, low, high):
        # dy = dx where low <= x <= high, else 0
        x, low, high = ctx.primals
        if low is not None:
            dx = dx * (x >= low)
        if high is not None:
            dx = dx * (x <= high)
        return dx



class Sin(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = sin x
        ctx.save_for_backward(x)
        return np.sin(x)

    @staticmethod
    def backward(ctx, grad):
        # d(sin x)/dx = cos x
        (x,) = ctx.saved_tensors
        return grad * np.cos(x)

    @staticmethod
    def jvp(ctx, dx):
        # d(sin x) = cos x dx
        return dx * np.cos(ctx.primals[0])



class Cos(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = cos x
        ctx.save_for_backward(x)
        return np.cos(x)

    @staticmethod
    def backward(ctx, grad):
        # d(cos x)/dx = -sin x
        (x,) = ctx.saved_tensors
        return grad * -np.sin(x)

    @staticmethod
    def jvp(ctx, dx):
        # d(cos x) = -sin x dx
        return dx * -np.sin(ctx.primals[0])



class Erf(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = erf x = 2/sqrt(pi) int_0^x e^(-t^2) dt
        ctx.save_for_backward(x)
        return special.erf(x)  # in x's dtype (special.py)

    @staticmethod
    def backward(ctx, grad):
        # d(erf x)/dx = 2/sqrt(pi) e^(-x^2)
        (x,) = ctx.saved_tensors
        return grad * (_TWO_OVER_SQRT_PI * np.exp(-x * x))

    @staticmethod
    def jvp(ctx, dx):
        # d(erf x) = 2/sqrt(pi) e^(-x^2) dx
        x = ctx.primals[0]
        return dx * (_TWO_OVER_SQRT_PI * np.exp(-x * x))



class Rsqrt(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = x^(-1/2)
        with np.errstate(divide="ignore", invalid="ignore"):  # rsqrt(0) = inf, rsqrt(-1) = nan, as PyTorch
            y = 1.0 / np.sqrt(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        # y = x^(-1/2)  =>  dy/dx = -1/2 x^(-3/2) = -y^3 / 2
        (y,) = ctx.saved_tensors
        return grad * (-0.5 * y * y * y)

    @staticmethod
    def jvp(ctx, dx):
        # d(x^(-1/2)) = -y^3 / 2 dx
        y = ctx.result
        return dx * (-0.5 * y * y * y)


class ToDtype(Function, arrays=True):
    node_name = "ToCopyBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, x, dtype):
        # y = x cast to dtype
        ctx.in_dtype = x.dtype
        return x.astype(dtype)

    @staticmethod
    def backward(ctx, grad):
        # a cast is the identity on values: the gradient is cast back
        return ToDtype.apply(grad, ctx.in_dtype), None

    jvp = staticmethod(linear_jvp)  # linear: d cast(x) = cast(dx), the forward on the tangent



def exp(x):
    return Exp.apply(_floating(x))


def log(x):
    return Log.apply(_floating(x))


def sqrt(x):
    return Sqrt.apply(_floating(x))


def tanh(x):
    return Tanh.apply(_floating(x))


def sin(x):
    return Sin.apply(_floating(x))


def cos(x):
    return Cos.apply(_floating(x))


def erf(x):
    return Erf.apply(_floating(x))


def rsqrt(x):
    return Rsqrt.apply(_floating(x))


def isnan(x):
    return Tensor._make(np.isnan(x._array))


def isinf(x):
    return Tensor._make(np.isinf(x._array))


def relu(x):
    return ReLU.apply(x)


def abs(x):
    return Abs.apply(x)


def clamp(x, min=None, max=None):
    if min is None and max is None:
        raise ValueError("clamp: at least one of min and max must be given")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        raise TypeError("clamp: min and max must be numbers")
    min, max = scalar(min), scalar(max)
    if x.dtype.kind != "f" and any(isinstance(b, float) for b in (min, max)):
        x = to_dtype(x, _dtype.get_default_dtype())  # an int tensor clamped to a float bound: floats, as PyTorch
    return Clamp.apply(x, min, max)


def to_dtype(x, dtype):
    if x.dtype == dtype:
        return x
    if dtype.kind == "f" and x.dtype.kind == "f":
        return ToDtype.apply(x, dtype)
    # casting to or from integers is not differentiable: the result has no history
    return Tensor._make(x._array.astype(dtype))
