"""The kernels of softmax and log_softmax (minigrad/composites/softmax.py): each one fused forward and
one fused backward on arrays, in row blocks, with subnormal weights flushed to 0.

The compositions make an array per step (max, x - m, exp, sum, divide); these make one or two, and
shift by the whole tensor's maximum (a cheaper reduction than each row's, see rowwise.shifted_exp).
"""
import numpy as np

from ..composites import softmax as composites
from ..composites import stands_in_for
from ..function import Function
from . import compiled, threads
from .rowwise import _SMALLEST_TOTAL, dot_along, row_max, shifted_exp, sum_along


# Weights below the smallest normal float (about 1e-38 in float32) are set to 0: such subnormal
# numbers make every multiplication that touches them many times slower on x86 CPUs, and the
# product weights @ V of a training step ran 7x slower for them. What they would contribute
# beside a sum of 1 is far below float precision.
_SMALLEST_NORMAL = {np.dtype(t): np.finfo(t).tiny for t in (np.float16, np.float32, np.float64)}


def _flush_subnormals(a, signed):
    tiny = _SMALLEST_NORMAL.get(a.dtype)
    if tiny is not None and a.ndim:  # (a 0-d result may be a NumPy scalar; softmax of one number is 1)
        # a *= (|a| >= tiny): a multiply by a bool mask is twice as fast as np.copyto(..., where=);
        # NaN stays NaN as with copyto, and + 0.0 turns the -0.0 of a small negative into +0.0
        np.multiply(a, (np.abs(a) if signed else a) >= tiny, out=a)
        if signed:
            a += 0.0
    return a


def _last_dim_rows(x, dim):
    """x as (rows, last dim) without a copy, or None: then the kernel runs unblocked."""
    if dim != x.ndim - 1 or x.ndim < 2 or x.size == 0 or not x.flags.c_contiguous:
        return None
    return x.reshape(-1, x.shape[-1])


@stands_in_for(composites._softmax)
class Softmax(Function, arrays=True):
    @staticmethod
    def forward(ctx, x, dim):
        # y_i = exp(x_i - max x) / sum_j exp(x_j - max x)
        x2 = _last_dim_rows(x, dim)
        if x2 is not None:
            y = _softmax_rows(x2)
        else:
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
        # rows of the last dim: a contiguous grad (a copy only if it is not); other dims: unblocked
        g2 = _last_dim_rows(np.ascontiguousarray(grad), ctx.dim) if ctx.dim == grad.ndim - 1 else None
        if g2 is None:
            dx = grad - dot_along(grad, y, ctx.dim)
            dx *= y
            return _flush_subnormals(dx, signed=True), None
        return softmax_grad_rows(g2, y.reshape(g2.shape)).reshape(grad.shape), None


def softmax_grad_rows(g2, y2):
    """dx = y * (g - rowsum(g * y)) along the rows of 2-D g2 and y2 (softmax's backward, in row blocks)."""
    if compiled.usable(g2, y2):
        return compiled.softmax_backward(g2, y2)
    dx = np.empty_like(g2)

    def rows(lo, hi):
        out, yr = dx[lo:hi], y2[lo:hi]
        np.subtract(g2[lo:hi], dot_along(g2[lo:hi], yr, 1), out=out)
        out *= yr
        _flush_subnormals(out, signed=True)

    threads.run_rows(rows, g2.shape[0], g2.shape[1])
    return dx



def _smallest_normal_exp_argument(dtype):
    """The smallest c of the dtype with exp(c) a normal number (>= tiny)."""
    tiny = np.finfo(dtype).tiny
    c = dtype.type(np.log(tiny))
    while np.exp(c) < tiny:
        c = np.nextafter(c, dtype.type(0))
    return c


_NORMAL_EXP_FROM = {np.dtype(t): _smallest_normal_exp_argument(np.dtype(t)) for t in (np.float32, np.float64)}


def _exp_of_row_shifted(shifted):
    """np.exp(shifted) for rows shifted by their own maximum, except that results below the smallest
    normal number are 0: NumPy's exp runs about 5x slower where its result would be subnormal (or
    for -inf). Softmax loses nothing: such a row's sum is >= 1, so these values divided by it are
    subnormal and _flush_subnormals sets them to 0 anyway."""
    lowest = _NORMAL_EXP_FROM.get(shifted.dtype)
    if lowest is None:
        return np.exp(shifted)
    exps = np.maximum(shifted, lowest)
    np.exp(exps, out=exps)
    exps *= shifted >= lowest  # NaN rows stay NaN
    return exps


def _softmax_rows(x2):
    """Softmax along the rows of x2, in row blocks (threads.run_rows).

    As shifted_exp, each row is shifted by the maximum of the whole tensor, except a row whose sum
    of exponentials underflows with that shift (see shifted_exp): it alone is redone with its own
    maximum. The choice is made row by row, so no row depends on the others or on the blocks.
    With the compiled kernels (kernels/compiled.py), numba's loop shifts each row by its own maximum.
    """
    if compiled.usable(x2):
        return compiled.softmax(x2)
    y = np.empty_like(x2)
    c = x2.max()
    smallest = _SMALLEST_TOTAL.get(x2.dtype, 0.0)

    def rows(lo, hi):
        out = y[lo:hi]
        np.subtract(x2[lo:hi], c, out=out)
        np.exp(out, out=out)
        total = sum_along(out, 1)
        if not total.min() >= smallest:  # also catches NaN
            untrusted = np.flatnonzero(~(total[:, 0] >= smallest))
            xs = x2[lo:hi][untrusted]
            redone = _exp_of_row_shifted(xs - row_max(xs))
            out[untrusted] = redone
            total[untrusted] = sum_along(redone, 1)
        out /= total  # a division, correctly rounded: a row with one allowed key gives exactly 1
        _flush_subnormals(out, signed=False)

    threads.run_rows(rows, x2.shape[0], x2.shape[1])
    return y


@stands_in_for(composites._log_softmax)
class LogSoftmax(Function, arrays=True):
    @staticmethod
    def forward(ctx, x, dim):
        # y_i = x_i - max x - log sum_j exp(x_j - max x)  (= x_i - log sum_j e^{x_j})
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
