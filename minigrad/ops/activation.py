"""GELU, the Gaussian error linear unit: gelu(x) = x * Phi(x), Phi the standard normal CDF.

NumPy has no erf, so `erf` below sums its series; approximate="tanh" gives the cheaper form
0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as PyTorch.
"""
import math

import numpy as np

from ..function import Function

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def erf(x):
    """erf to float64 precision, for arrays.

    Uses erf(z) = 2/sqrt(pi) exp(-z^2) sum_n (2z^2)^n z / (1*3*...*(2n+1)), whose terms are all
    positive (no cancellation). |z| is clipped at 6, where erf already equals +-1 in float64.
    """
    z = np.clip(np.asarray(x, dtype=np.float64), -6.0, 6.0)
    z2 = z * z
    term = z.copy()
    total = z.copy()
    n = 0
    while True:
        n += 1
        term *= 2.0 * z2 / (2 * n + 1)
        total += term
        if not np.any(np.abs(term) > 1e-17 * np.abs(total)):
            break
    return (2.0 / math.sqrt(math.pi)) * np.exp(-z2) * total


class GELU(Function):
    node_name = "GeluBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, x, approximate):
        ctx.save_for_backward(x)
        ctx.approximate = approximate
        if approximate == "tanh":
            inner = _SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
            t = np.tanh(inner)
            ctx.tanh = t
            return 0.5 * x * (1 + t)
        cdf = 0.5 * (1.0 + erf(x / math.sqrt(2.0)))
        ctx.cdf = cdf
        return (x * cdf).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if ctx.approximate == "tanh":
            # d/dx 0.5 x (1 + t) = 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2)
            t = ctx.tanh
            d = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x * x)
            return grad * d, None
        # d/dx x Phi(x) = Phi(x) + x phi(x),  phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
        d = ctx.cdf + x * np.exp(-0.5 * x * x) * _INV_SQRT_2PI
        return (grad * d).astype(grad.dtype, copy=False), None
