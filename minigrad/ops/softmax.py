"""softmax and log_softmax along a dim, each fused into one forward and one backward.

Composing them from exp, sum and div would work (the tests do that as a reference), but the fused
forms are stable (the row maximum is subtracted first, so inputs of size 1e4 do not overflow)
and make fewer temporaries.
"""
import numpy as np

from ..function import Function
from .util import normalize_dim


class Softmax(Function):
    @staticmethod
    def forward(ctx, x, dim):
        y = np.asarray(x - x.max(axis=dim, keepdims=True))  # softmax(x) = softmax(x - c): no overflow in exp
        np.exp(y, out=y)
        y /= y.sum(axis=dim, keepdims=True)
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, grad):
        # dy_i/dx_j = y_i (delta_ij - y_j)  =>  dx = y * (g - sum(g * y))
        (y,) = ctx.saved_tensors
        gy = grad * y
        gy -= y * gy.sum(axis=ctx.dim, keepdims=True)
        return gy, None


class LogSoftmax(Function):
    @staticmethod
    def forward(ctx, x, dim):
        shifted = x - x.max(axis=dim, keepdims=True)
        y = shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, grad):
        # y_i = x_i - log sum_j e^{x_j}  =>  dx = g - softmax(x) * sum(g)
        (y,) = ctx.saved_tensors
        return grad - np.exp(y) * grad.sum(axis=ctx.dim, keepdims=True), None


def _check_floating(x, op):
    if x.dtype.kind != "f":
        raise TypeError(f"{op}: expects a floating point tensor, got {x.dtype} (convert with .float())")


def softmax(x, dim):
    _check_floating(x, "softmax")
    return Softmax.apply(x, normalize_dim(dim, x.ndim, "softmax"))


def log_softmax(x, dim):
    _check_floating(x, "log_softmax")
    return LogSoftmax.apply(x, normalize_dim(dim, x.ndim, "log_softmax"))
