"""sigmoid, SiLU and GELU (exact and tanh forms), composed from exp, tanh, erf and arithmetic.

Each public function checks its argument and calls its composition (`_sigmoid`, ...), or the kernel
registered for it (minigrad/kernels/activations.py).
"""
import math

import numpy as np

from .. import dtype as _dtype
from .. import random as _random
from ..tensor import Tensor
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


# ---- the rest of PyTorch's activations, each a composition (minigrad.nn.functional checks the arguments) --
# A kink's derivative is PyTorch's: where(x > 0, ...) sends the gradient of the x > 0 branch only where
# x > 0 holds, so the value at the kink itself (x = 0) is the other branch's, as in PyTorch.

def _constant(x, value):
    """value as a 0-d tensor of x's dtype (two Python numbers in a where would give the default dtype)."""
    return Tensor._make(np.asarray(value, dtype=x.dtype))


def _nonpositive_part(x):
    # x where x <= 0, else 0: the input of e^x in the ELUs, which then cannot overflow in the branch not taken
    return where(x <= 0, x, 0.0)


def elu(x, alpha=1.0):
    # alpha (e^x - 1) for x <= 0, x otherwise (NaN takes the x branch, as in PyTorch)
    return where(x <= 0, alpha * _nonpositive_part(x).expm1(), x)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x):
    # scale * elu(x, alpha), with the constants of Klambauer et al. (2017)
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def celu(x, alpha=1.0):
    # alpha (e^(x / alpha) - 1) for x <= 0, x otherwise
    return where(x <= 0, alpha * (_nonpositive_part(x) / alpha).expm1(), x)


def softplus(x, beta=1.0, threshold=20.0):
    # log(1 + e^(beta x)) / beta, and x itself where beta x > threshold (as PyTorch); the log1p form is
    # taken of a stand-in 0 there so that e^(beta x) cannot overflow in the branch not taken
    bx = x * beta
    linear = bx > threshold
    return where(linear, x, where(linear, 0.0, bx).exp().log1p() / beta)


def logsigmoid(x):
    # log sigmoid(x) = x - log(1 + e^x) for x < 0, -log(1 + e^-x) for x >= 0: each side computed where its
    # exponential is at most 1
    negative = x < 0
    x_neg, x_pos = where(negative, x, 0.0), where(negative, 0.0, x)
    return where(negative, x_neg - x_neg.exp().log1p(), -(-x_pos).exp().log1p())


def softsign(x):
    # x / (1 + |x|)
    return x / (x.abs() + 1)


def mish(x):
    # x tanh(softplus(x))   (Misra, 2019)
    return x * softplus(x).tanh()


def hardtanh(x, min_val=-1.0, max_val=1.0):
    # x clipped to [min_val, max_val]; the gradient passes strictly inside (0 at the bounds, as PyTorch)
    return where(x <= min_val, min_val, where(x >= max_val, max_val, x))


def relu6(x):
    # min(max(x, 0), 6)
    return hardtanh(x, 0.0, 6.0)


def hardsigmoid(x):
    # x / 6 + 1/2 strictly inside (-3, 3), 0 below, 1 above (NaN stays NaN, with gradient 0, as PyTorch)
    inside = (x > -3) & (x < 3)
    outside = where(x <= -3, 0.0, where(x >= 3, 1.0, _constant(x, math.nan)))
    return where(inside, x / 6 + 0.5, outside)


def hardswish(x):
    # x (x + 3) / 6 on [-3, 3], 0 below, x above   (Howard et al., 2019); below, x * 0 keeps
    # PyTorch's x relu6(x + 3) / 6 at -inf, which is NaN
    middle = (x >= -3) & (x <= 3)
    x_mid = where(middle, x, 0.0)
    return where(x < -3, x * 0.0, where(middle, x_mid * (x_mid + 3) / 6, x))


def leaky_relu(x, negative_slope=0.01):
    # x for x > 0, negative_slope x otherwise
    return where(x > 0, x, x * negative_slope)


def prelu(x, weight):
    # leaky_relu with a learned slope: one per channel (dim 1), or one for all
    if weight.numel() != 1 and x.ndim >= 2:
        weight = weight.reshape((weight.numel(),) + (1,) * (x.ndim - 2))
    return where(x > 0, x, x * weight)


def rrelu(x, lower, upper, training, generator=None):
    # leaky_relu with the slope drawn from U(lower, upper) per element in training, (lower + upper) / 2 in eval
    if not training:
        return leaky_relu(x, (lower + upper) / 2)
    slope = (generator or _random.default_generator()).uniform(lower, upper, x.shape).astype(x.dtype)
    return where(x >= 0, x, x * slope)


def threshold(x, threshold, value):
    # value where x <= threshold, else x
    return where(x <= threshold, value, x)


def tanhshrink(x):
    # x - tanh x
    return x - x.tanh()


def softshrink(x, lambd=0.5):
    # 0 on [-lambd, lambd], x - lambd above, x + lambd below
    return where((x >= -lambd) & (x <= lambd), 0.0, where(x > lambd, x - lambd, x + lambd))


def hardshrink(x, lambd=0.5):
    # 0 on [-lambd, lambd], x elsewhere
    return where((x >= -lambd) & (x <= lambd), 0.0, x)


def glu(x, dim=-1):
    # a sigmoid(b), a and b the two halves of x along dim   (Dauphin et al., 2017)
    a, b = x.chunk(2, dim)
    return a * sigmoid(b)
