"""sigmoid, SiLU and GELU (exact and tanh forms), composed from exp, tanh, erf and arithmetic.

Each public function checks its argument and calls its composition (`_sigmoid`, ...), or the kernel
registered for it (minigrad/kernels/activations.py).
"""
import math

from .. import dtype as _dtype
from ..ops import where
from ..ops.util import require_floating
from . import composite

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)


def sigmoid(x):
    # an integer or bool tensor gives the default float dtype, as PyTorch
    return _sigmoid(x if x.dtype.kind == "f" else x.to(_dtype.get_default_dtype()))


def silu(x):
    require_floating(x, "silu")
    return _silu(x)


def gelu(x, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    require_floating(x, "gelu")
    return _gelu(x, approximate)


@composite
def _sigmoid(x):
    # s = 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) for x < 0: with e = exp(-|x|) <= 1 neither form
    # overflows, and the small tail e / (1 + e) keeps its relative precision
    negative = x < 0
    e = where(negative, x, -x).exp()  # exp(-|x|), with the derivative of x or -x on each side of 0
    return where(negative, e / (1 + e), 1 / (1 + e))


@composite
def _silu(x):
    # y = x sigmoid(x)   (also called swish)
    return x * _sigmoid(x)


@composite
def _gelu(x, approximate):
    if approximate == "tanh":
        # y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        return 0.5 * x * (1 + (_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)).tanh())
    # y = x Phi(x),  Phi(x) = (1 + erf(x / sqrt 2)) / 2, the standard normal CDF
    return x * (0.5 * (1 + (x * _INV_SQRT_2).erf()))
