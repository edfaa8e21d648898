"""The elementwise functions that are not compositions of the others: inverse trigonometric,
hyperbolic, log(1 + x) and e^x - 1 (accurate near 0, where log(1 + x) and exp(x) - 1 cancel), atan2.

Each backward is dL/dx = dL/dy * f'(x); the derivatives are written as PyTorch writes them (so the
edges agree: asin'(1) = inf, acosh'(1) = inf).
"""
import numpy as np

from ..function import Function
from ..tensor import Tensor
from .unary import _floating
from .util import promote, tangent_sum


class Sinh(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = sinh x = (e^x - e^-x) / 2, computed without the cancellation near 0
        ctx.save_for_backward(x)
        return np.sinh(x)

    @staticmethod
    def backward(ctx, grad):
        # d(sinh x)/dx = cosh x
        (x,) = ctx.saved_tensors
        return grad * np.cosh(x)

    @staticmethod
    def jvp(ctx, dx):
        # d(sinh x) = cosh x dx
        x = ctx.primals[0]
        return dx * np.cosh(x)


class Cosh(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = cosh x = (e^x + e^-x) / 2
        ctx.save_for_backward(x)
        return np.cosh(x)

    @staticmethod
    def backward(ctx, grad):
        # d(cosh x)/dx = sinh x
        (x,) = ctx.saved_tensors
        return grad * np.sinh(x)

    @staticmethod
    def jvp(ctx, dx):
        # d(cosh x) = sinh x dx
        x = ctx.primals[0]
        return dx * np.sinh(x)


class Asin(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = arcsin x  (NaN outside [-1, 1])
        ctx.save_for_backward(x)
        return np.arcsin(x)

    @staticmethod
    def backward(ctx, grad):
        # d(arcsin x)/dx = 1 / sqrt(1 - x^2)
        (x,) = ctx.saved_tensors
        return grad / np.sqrt(1 - x * x)

    @staticmethod
    def jvp(ctx, dx):
        # d(arcsin x) = dx / sqrt(1 - x^2)
        x = ctx.primals[0]
        return dx / np.sqrt(1 - x * x)


class Acos(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = arccos x  (NaN outside [-1, 1])
        ctx.save_for_backward(x)
        return np.arccos(x)

    @staticmethod
    def backward(ctx, grad):
        # d(arccos x)/dx = -1 / sqrt(1 - x^2)
        (x,) = ctx.saved_tensors
        return -grad / np.sqrt(1 - x * x)

    @staticmethod
    def jvp(ctx, dx):
        # d(arccos x) = -dx / sqrt(1 - x^2)
        x = ctx.primals[0]
        return -dx / np.sqrt(1 - x * x)


class Atan(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = arctan x
        ctx.save_for_backward(x)
        return np.arctan(x)

    @staticmethod
    def backward(ctx, grad):
        # d(arctan x)/dx = 1 / (1 + x^2)
        (x,) = ctx.saved_tensors
        return grad / (1 + x * x)

    @staticmethod
    def jvp(ctx, dx):
        # d(arctan x) = dx / (1 + x^2)
        x = ctx.primals[0]
        return dx / (1 + x * x)


class Asinh(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = arsinh x = log(x + sqrt(x^2 + 1)), computed without that form's cancellation for x < 0
        ctx.save_for_backward(x)
        return np.arcsinh(x)

    @staticmethod
    def backward(ctx, grad):
        # d(arsinh x)/dx = 1 / sqrt(x^2 + 1)
        (x,) = ctx.saved_tensors
        return grad / np.sqrt(x * x + 1)

    @staticmethod
    def jvp(ctx, dx):
        # d(arsinh x) = dx / sqrt(x^2 + 1)
        x = ctx.primals[0]
        return dx / np.sqrt(x * x + 1)


class Acosh(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = arcosh x = log(x + sqrt(x^2 - 1))  (NaN below 1)
        ctx.save_for_backward(x)
        return np.arccosh(x)

    @staticmethod
    def backward(ctx, grad):
        # d(arcosh x)/dx = 1 / sqrt(x^2 - 1)
        (x,) = ctx.saved_tensors
        return grad / np.sqrt(x * x - 1)

    @staticmethod
    def jvp(ctx, dx):
        # d(arcosh x) = dx / sqrt(x^2 - 1)
        x = ctx.primals[0]
        return dx / np.sqrt(x * x - 1)


class Atanh(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = artanh x = log((1 + x) / (1 - x)) / 2  (±inf at ±1, NaN beyond)
        ctx.save_for_backward(x)
        return np.arctanh(x)

    @staticmethod
    def backward(ctx, grad):
        # d(artanh x)/dx = 1 / (1 - x^2)
        (x,) = ctx.saved_tensors
        return grad / (1 - x * x)

    @staticmethod
    def jvp(ctx, dx):
        # d(artanh x) = dx / (1 - x^2)
        x = ctx.primals[0]
        return dx / (1 - x * x)


class Log1p(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = log(1 + x), exact for tiny x (where 1 + x rounds to 1)
        ctx.save_for_backward(x)
        return np.log1p(x)

    @staticmethod
    def backward(ctx, grad):
        # d(log(1 + x))/dx = 1 / (1 + x)
        (x,) = ctx.saved_tensors
        return grad / (x + 1)

    @staticmethod
    def jvp(ctx, dx):
        # d log(1 + x) = dx / (1 + x)
        x = ctx.primals[0]
        return dx / (x + 1)


class Expm1(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = e^x - 1, exact for tiny x (where e^x rounds to 1)
        y = np.expm1(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        # d(e^x - 1)/dx = e^x = y + 1
        (y,) = ctx.saved_tensors
        return grad * (y + 1)

    @staticmethod
    def jvp(ctx, dx):
        # d(e^x - 1) = e^x dx = (y + 1) dx
        return dx * (ctx.result + 1)


class Atan2(Function, arrays=True):
    @staticmethod
    def forward(ctx, a, b):
        # y = atan2(a, b): the angle of the point (b, a), in (-pi, pi]
        ctx.save_for_backward(a, b)
        return np.arctan2(a, b)

    @staticmethod
    def backward(ctx, grad):
        # d/da = b / (a^2 + b^2),  d/db = -a / (a^2 + b^2)  (0 at the origin, as PyTorch)
        a, b = ctx.saved_tensors
        r = a * a + b * b
        origin = r == 0
        scale = np.where(origin, 0, grad / np.where(origin, 1, r))
        return scale * b, -scale * a

    @staticmethod
    def jvp(ctx, da, db):
        # d atan2(a, b) = (b da - a db) / (a^2 + b^2)  (0 at the origin)
        a, b = ctx.primals
        r = a * a + b * b
        origin = r == 0
        scale = np.where(origin, 0, 1 / np.where(origin, 1, r))
        return tangent_sum(None if da is None else da * b, None if db is None else -db * a) * scale


def sinh(x):
    return Sinh.apply(_floating(x))


def cosh(x):
    return Cosh.apply(_floating(x))


def asin(x):
    return Asin.apply(_floating(x))


def acos(x):
    return Acos.apply(_floating(x))


def atan(x):
    return Atan.apply(_floating(x))


def asinh(x):
    return Asinh.apply(_floating(x))


def acosh(x):
    return Acosh.apply(_floating(x))


def atanh(x):
    return Atanh.apply(_floating(x))


def log1p(x):
    return Log1p.apply(_floating(x))


def expm1(x):
    return Expm1.apply(_floating(x))


def atan2(input, other):
    """The angle of (other, input): atan2(y, x), with integer operands giving the default float dtype."""
    a, b = promote(input, other)
    a, b = _floating_pair(a, b)
    return Atan2.apply(a, b)


def _floating_pair(a, b):
    return tuple(_floating(t) if isinstance(t, Tensor) else float(t) for t in (a, b))
