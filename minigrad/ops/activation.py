"""GELU, the Gaussian error linear unit: gelu(x) = x * Phi(x), Phi the standard normal CDF.

The exact form (PyTorch's default) takes Phi(x) = (1 + erf(x / sqrt 2)) / 2 from special.erf, in the
input's dtype (float16 in float32); approximate="tanh" gives the cheaper form
0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as PyTorch.
"""
import math

import numpy as np

from ..function import Function
from .. import threads
from .special import erf
from .unary import erf as erf_op
from .special import _erf_float32 as erf_float32_block

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _working(a):
    """float16 is computed in float32 (as PyTorch does on the CPU); float32 and float64 as they are."""
    return a.astype(np.float32) if a.dtype == np.float16 else a


def _in_blocks(kernel, n):
    """kernel(lo, hi) over cache-sized blocks of n elements (threads.run_rows' blocks of 2^15 and more).

    The exact GELU is a dozen or more passes per element: block by block, every pass after the first
    reads memory that is still in the core's cache. Measured on float32 (32, 64, 512), forward and
    backward: 5.5 ms in whole-array passes, 4.7 ms in blocks. (Sharing the blocks among two threads
    gained nothing more: workers wait for the GIL between the many short NumPy calls of a block.)
    """
    threads.run_rows(kernel, n, 1)


class GELU(Function):
    node_name = "GeluBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, x, approximate):
        # y = x Phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2;  "tanh": y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        ctx.save_for_backward(x)
        ctx.approximate = approximate
        if approximate == "tanh":
            inner = _SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
            t = np.tanh(inner)
            ctx.tanh = t
            return 0.5 * x * (1 + t)
        if x.dtype == np.float32 and x.flags.c_contiguous:
            # Phi(x) = (1 + erf(x / sqrt 2)) / 2 and y = x Phi(x), block by block
            flat, y, cdf = x.reshape(-1), np.empty(x.size, np.float32), np.empty(x.size, np.float32)

            def block(lo, hi):
                z = flat[lo:hi] * np.float32(_INV_SQRT_2)
                erf_float32_block(z, cdf[lo:hi])
                c = cdf[lo:hi]
                c += 1.0
                c *= 0.5
                np.multiply(flat[lo:hi], c, out=y[lo:hi])

            _in_blocks(block, flat.size)
            ctx.cdf, ctx.blocked = cdf, True
            return y.reshape(x.shape)
        dtype, x = x.dtype, _working(x)
        cdf = erf(x * _INV_SQRT_2)  # a new array: the two steps below are in place
        cdf += 1.0
        cdf *= 0.5
        ctx.cdf, ctx.blocked = cdf, False
        return (x * cdf).astype(dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if ctx.approximate == "tanh":
            # d/dx 0.5 x (1 + t) = 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2)
            t = ctx.tanh
            d = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x * x)
            return grad * d, None
        # d/dx x Phi(x) = Phi(x) + x phi(x),  phi(x) = exp(-x^2 / 2) / sqrt(2 pi); in place after the first
        if ctx.blocked and grad.dtype == np.float32:
            flat, g, cdf = x.reshape(-1), np.ascontiguousarray(grad).reshape(-1), ctx.cdf
            out = np.empty(x.size, np.float32)

            def block(lo, hi):
                xb, d = flat[lo:hi], out[lo:hi]
                np.multiply(xb, xb, out=d)
                d *= np.float32(-0.5)
                np.exp(d, out=d)
                d *= xb
                d *= np.float32(_INV_SQRT_2PI)
                d += cdf[lo:hi]
                d *= g[lo:hi]

            _in_blocks(block, flat.size)
            return out.reshape(x.shape), None
        x = _working(x)
        d = x * x
        d *= -0.5
        np.exp(d, out=d)
        d *= x
        d *= _INV_SQRT_2PI
        d += ctx.cdf
        d *= grad
        return d.astype(grad.dtype, copy=False), None

    @staticmethod
    def backward_differentiable(ctx, grad):
        # The same derivatives in minigrad ops, recomputed from x (ctx.tanh and ctx.cdf are arrays the
        # forward computed: as constants they would lose the second derivative)
        (x,) = ctx.saved_tensors
        xw = x.float() if x.dtype == np.float16 else x  # float16 in float32, as the forward
        if ctx.approximate == "tanh":
            t = ((xw + 0.044715 * xw * xw * xw) * _SQRT_2_OVER_PI).tanh()
            d = 0.5 * (1 + t) + 0.5 * xw * (1 - t * t) * _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * xw * xw)
        else:
            # Phi(x) + x phi(x) as in backward, Phi(x) = (1 + erf(x / sqrt 2)) / 2 with mg.erf (differentiable)
            d = (1 + erf_op(xw * _INV_SQRT_2)) * 0.5 + xw * (xw * xw * -0.5).exp() * _INV_SQRT_2PI
        return (grad * d).to(grad.dtype), None
