"""softmax and log_softmax along a dim, each fused into one forward and one backward.

Composing them from exp, sum and div would work (the tests do that as a reference), but the fused
forms are stable (a maximum is subtracted before exp, so inputs of size 1e4 do not overflow: see
rowwise.shifted_exp) and make fewer temporaries.
"""
import numpy as np

from ..function import Function
from .rowwise import dot_along, shifted_exp, sum_along
from .util import normalize_dim


# Weights below the smallest normal float (about 1e-38 in float32) are set to 0: such subnormal
# numbers make every multiplication that touches them many times slower on x86 CPUs, and the
# product weights @ V of a training step ran 7x slower for them. What they would contribute
# beside a sum of 1 is far below float precision.
_SMALLEST_NORMAL = {np.dtype(t): np.finfo(t).tiny for t in (np.float16, np.float32, np.float64)}


def _flush_subnormals(a, signed):
    tiny = _SMALLEST_NORMAL.get(a.dtype)
    if tiny is not None and a.ndim:  # (a 0-d result may be a NumPy scalar; softmax of one number is 1)
        np.copyto(a, 0, where=(np.abs(a) if signed else a) < tiny)
    return a


class Softmax(Function):
    @staticmethod
    def forward(ctx, x, dim):
        _, y, total = shifted_exp(x, dim, keep_shifted=False)  # softmax(x) = softmax(x - c): no overflow in exp
        y /= total
        _flush_subnormals(y, signed=False)
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, grad):
        # dy_i/dx_j = y_i (delta_ij - y_j)  =>  dx = y * (g - sum(g * y))
        (y,) = ctx.saved_tensors
        dx = grad - dot_along(grad, y, ctx.dim)
        dx *= y
        return _flush_subnormals(dx, signed=True), None


class LogSoftmax(Function):
    @staticmethod
    def forward(ctx, x, dim):
        shifted, _, total = shifted_exp(x, dim)
        y = shifted
        y -= np.log(total)  # log softmax(x) = (x - c) - log sum exp(x - c)
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, grad):
        # y_i = x_i - log sum_j e^{x_j}  =>  dx = g - softmax(x) * sum(g)
        (y,) = ctx.saved_tensors
        dx = np.exp(y)
        dx *= -sum_along(grad, ctx.dim)
        dx += grad
        return dx, None


def _check_floating(x, op):
    if x.dtype.kind != "f":
        raise TypeError(f"{op}: expects a floating point tensor, got {x.dtype} (convert with .float())")


def softmax(x, dim):
    _check_floating(x, "softmax")
    return Softmax.apply(x, normalize_dim(dim, x.ndim, "softmax"))


def log_softmax(x, dim):
    _check_floating(x, "log_softmax")
    return LogSoftmax.apply(x, normalize_dim(dim, x.ndim, "log_softmax"))
