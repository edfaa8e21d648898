"""softmax and log_softmax along a dim, each fused into one forward and one backward.

Composing them from exp, sum and div would work (the tests do that as a reference), but the fused
forms are stable (a maximum is subtracted before exp, so inputs of size 1e4 do not overflow: see
rowwise.shifted_exp) and make fewer temporaries.
"""
import numpy as np

from .. import threads
from ..function import Function
from .rowwise import _SMALLEST_TOTAL, dot_along, shifted_exp, sum_along
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


def _last_dim_rows(x, dim):
    """x as (rows, last dim) without a copy, or None: then the kernel runs unblocked."""
    if dim != x.ndim - 1 or x.ndim < 2 or x.size == 0 or not x.flags.c_contiguous:
        return None
    return x.reshape(-1, x.shape[-1])


class Softmax(Function):
    @staticmethod
    def forward(ctx, x, dim):
        x2 = _last_dim_rows(x, dim)
        y = None if x2 is None else _softmax_rows(x2)
        if y is None:  # not rows of the last dim, or a row underflowed with the global shift
            _, y, total = shifted_exp(x, dim, keep_shifted=False)  # softmax(x) = softmax(x - c): no overflow in exp
            y /= total
            _flush_subnormals(y, signed=False)
        y = y.reshape(x.shape)
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, grad):
        # dy_i/dx_j = y_i (delta_ij - y_j)  =>  dx = y * (g - sum(g * y))
        (y,) = ctx.saved_tensors
        g2 = _last_dim_rows(np.ascontiguousarray(grad), ctx.dim)
        if g2 is None:
            dx = grad - dot_along(grad, y, ctx.dim)
            dx *= y
            return _flush_subnormals(dx, signed=True), None
        y2 = y.reshape(g2.shape)
        dx = np.empty_like(g2)

        def rows(lo, hi):
            out, yr = dx[lo:hi], y2[lo:hi]
            np.subtract(g2[lo:hi], dot_along(g2[lo:hi], yr, 1), out=out)
            out *= yr
            _flush_subnormals(out, signed=True)

        threads.run_rows(rows, g2.shape[0], g2.shape[1])
        return dx.reshape(grad.shape), None


def _softmax_rows(x2):
    """Softmax along the rows of x2 in row blocks (threads.run_rows), exactly as shifted_exp's first
    try computes it (shift by the global maximum); None if some row's sum is too small to trust."""
    y = np.empty_like(x2)
    c = x2.max()
    smallest = _SMALLEST_TOTAL.get(x2.dtype, 0.0)
    trusted = []

    def rows(lo, hi):
        out = y[lo:hi]
        np.subtract(x2[lo:hi], c, out=out)
        np.exp(out, out=out)
        total = sum_along(out, 1)
        if not total.min() >= smallest:  # also catches NaN
            trusted.append(False)
            return
        out /= total
        _flush_subnormals(out, signed=False)

    threads.run_rows(rows, x2.shape[0], x2.shape[1])
    return None if trusted else y


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
