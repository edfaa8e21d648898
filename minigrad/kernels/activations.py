"""The kernels of the activations (minigrad/composites/activations.py): sigmoid, SiLU and GELU, each one
fused forward and backward on arrays, where the compositions make an array per step.

GELU's exact form (PyTorch's default) takes Phi(x) = (1 + erf(x / sqrt 2)) / 2 from special.erf, in
the input's dtype (float16 in float32), in cache-sized blocks; approximate="tanh" gives the cheaper
form 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as PyTorch.
"""
import math

import numpy as np

from ..composites import activations as composites
from ..composites import stands_in_for
from ..function import Function
from ..ops.special import _erf_float32 as erf_float32_block
from ..ops.special import erf
from . import compiled, elementwise, threads

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


@stands_in_for(composites._gelu)
class GELU(Function, arrays=True):
    node_name = "GeluBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, x, approximate):
        # y = x Phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2;  "tanh": y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        ctx.save_for_backward(x)
        ctx.approximate = approximate
        if approximate == "tanh":
            return elementwise.gelu_tanh(x)  # as x sigmoid(2u): no 1 + tanh(u) that cancels for x << 0
        if compiled.usable(x):  # numba's loop (kernels/compiled.py), where installed: the same values
            y, cdf = compiled.gelu(x)
            ctx.cdf, ctx.blocked = cdf.reshape(-1), True
            return y
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
            elementwise.gelu_tails(flat, y, cdf)  # x < -3: 1 + erf(x / sqrt 2) cancels; redone in float64
            ctx.cdf, ctx.blocked = cdf, True
            return y.reshape(x.shape)
        dtype, x = x.dtype, _working(x)
        cdf = erf(x * _INV_SQRT_2)  # a new array: the two steps below are in place
        cdf += 1.0
        cdf *= 0.5
        ctx.cdf, ctx.blocked = cdf, False
        y = x * cdf
        if dtype != np.float64:  # (float64 keeps PyTorch's erf form, whose tail is exact to float64's needs)
            elementwise.gelu_tails(x, y, cdf)
        return y.astype(dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if ctx.approximate == "tanh":
            # d/dx x s = s + 2 x s (1 - s) u',  s = sigmoid(2u),  u' = sqrt(2/pi) (1 + 3 * 0.044715 x^2)
            return grad * elementwise.gelu_tanh_grad(x), None
        # d/dx x Phi(x) = Phi(x) + x phi(x),  phi(x) = exp(-x^2 / 2) / sqrt(2 pi); in place after the first
        if ctx.blocked and grad.dtype == np.float32:
            flat, g, cdf = x.reshape(-1), np.ascontiguousarray(grad).reshape(-1), ctx.cdf
            if compiled.usable(flat, g):
                return compiled.gelu_backward(flat, cdf, g).reshape(x.shape), None
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
            below = flat < -3.0  # the lower tail, where exp(-x^2 / 2) in float32 loses precision: in float64
            if below.any():
                out[below] = elementwise.gelu_grad_tails(flat[below], np.empty(int(below.sum()), np.float32)) * g[below]
            return out.reshape(x.shape), None
        x = _working(x)
        d = np.multiply(x, x, out=np.empty_like(x))  # an array even for a 0-d x (x * x would be a NumPy scalar)
        d *= -0.5
        np.exp(d, out=d)
        d *= x
        d *= _INV_SQRT_2PI
        d += ctx.cdf
        if grad.dtype != np.float64:
            elementwise.gelu_grad_tails(x, d)
        d *= grad
        return d.astype(grad.dtype, copy=False), None


@stands_in_for(composites._sigmoid)
class Sigmoid(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = 1 / (1 + e^-x), and 1 - y = sigmoid(-x), both accurate in both tails (elementwise.py)
        y, ctx.complement = elementwise.sigmoid_pair(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        # d(sigmoid x)/dx = y (1 - y)
        (y,) = ctx.saved_tensors
        return grad * y * ctx.complement


@stands_in_for(composites._silu)
class SiLU(Function, arrays=True):
    node_name = "SiluBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, x):
        # y = x sigmoid(x)
        y, ctx.exp_neg_abs = elementwise.silu(x)  # and exp(-|x|), from which backward rebuilds sigmoid(+-x)
        ctx.save_for_backward(x)
        return y

    @staticmethod
    def backward(ctx, grad):
        # d(x s)/dx = s + x s (1 - s) = s (1 + x (1 - s)),   s = sigmoid(x)
        (x,) = ctx.saved_tensors
        return grad * elementwise.silu_grad(x, ctx.exp_neg_abs)
