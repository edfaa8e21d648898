"""Lower precision in float32 storage: bfloat16 (and float16) rounding, and the autocast region that applies it.

NumPy has no bfloat16, so minigrad never stores one. What it can do exactly is ROUND: a bfloat16 is a
float32 whose low 16 bits are zero (1 sign, 8 exponent and 7 mantissa bits), so rounding a float32 to
the nearest bfloat16 (ties to even, as PyTorch's conversion) and keeping it in float32 gives the very
value PyTorch holds, only wider storage. The rounding is a primitive with PyTorch's cast gradient:

    y = bf16(x)          dL/dx = bf16(dL/dy)   (the gradient that reaches a bfloat16 tensor is bfloat16)

An autocast region (torch.autocast("cpu", dtype=torch.bfloat16): minigrad/torch_compat/amp/) marks the
ops that PyTorch's CPU autocast runs in lower precision (matmul and its spellings, linear, scaled
dot-product attention, einsum through its matmuls): inside it, `lower_precision` rounds their float32
inputs and their output to the region's dtype; the product itself sums in float32, as PyTorch's bfloat16
CPU matmuls do. Outputs keep dtype float32: the ops after them compute in float32 where PyTorch's would
compute in bfloat16 (docs/autocast.md says what this means for the numbers).
"""
import contextlib
import functools

import numpy as np

from ..function import Function
from ..tensor import Tensor
from .util import linear_jvp


def round_to_bfloat16(array):
    """The float32 array rounded to the nearest bfloat16 (ties to even), as float32; NaN stays NaN."""
    array = np.ascontiguousarray(array, dtype=np.float32)
    bits = array.view(np.uint32)
    # add 0x7FFF, plus 1 when the kept part is odd (ties to even), then drop the low 16 bits; a carry
    # ripples into the exponent as it should (the largest values round to inf, as in PyTorch)
    rounded = ((bits + (np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1)))) & np.uint32(0xFFFF0000)).view(np.float32)
    return np.where(np.isnan(array), array, rounded)  # the sum would turn some NaN payloads into inf


def round_to_float16(array):
    """The float32 array rounded to the nearest float16 (NumPy's conversion), as float32."""
    return np.asarray(array, dtype=np.float32).astype(np.float16).astype(np.float32)


_ROUNDERS = {"bfloat16": round_to_bfloat16, "float16": round_to_float16}


class RoundToLowerPrecision(Function, arrays=True):
    node_name = "ToCopyBackward0"  # PyTorch's node for the cast it stands for

    @staticmethod
    def forward(ctx, x, precision):
        # y = round(x) to `precision` ("bfloat16" or "float16"), stored as float32
        ctx.precision = precision
        return _ROUNDERS[precision](x)

    @staticmethod
    def backward(ctx, grad):
        # dL/dx = round(dL/dy): a cast's gradient passes through, held in the lower precision as PyTorch's is
        return RoundToLowerPrecision.apply(grad, ctx.precision), None

    jvp = staticmethod(linear_jvp)  # linear: dy = round(dx), the tangent held in the lower precision as the value, the forward on the tangent


def round_to(x, precision):
    """The Tensor `x` (cast to float32 first) rounded to bfloat16's or float16's precision, differentiably."""
    if x.dtype != np.float32:
        x = x.float()
    return RoundToLowerPrecision.apply(x, precision)


# ---- the autocast region -------------------------------------------------------------------------
_region_precision = None  # "bfloat16" or "float16" inside an enabled CPU autocast region; None outside


def autocast_precision():
    """The precision that lower-precision ops round to now ("bfloat16", "float16"), or None."""
    return _region_precision


@contextlib.contextmanager
def autocast_region(precision):
    """Inside: lower-precision ops round to `precision` (None: they don't, as in a disabled region)."""
    global _region_precision
    before, _region_precision = _region_precision, precision
    try:
        yield
    finally:
        _region_precision = before


def _rounded(value, precision):
    # PyTorch's autocast casts float32 tensors only: float64 and integer tensors pass unchanged
    if isinstance(value, Tensor) and value.dtype == np.float32:
        return RoundToLowerPrecision.apply(value, precision)
    return value


def lower_precision(op):
    """Mark `op` as one that autocast runs in lower precision: in a region, its float32 Tensor arguments
    and its output(s) are rounded; the ops it is made of are not rounded again."""

    @functools.wraps(op)
    def run(*args, **kwargs):
        precision = _region_precision
        if precision is None:
            return op(*args, **kwargs)
        args = [_rounded(a, precision) for a in args]
        kwargs = {k: _rounded(v, precision) for k, v in kwargs.items()}
        with autocast_region(None):
            out = op(*args, **kwargs)
        if isinstance(out, tuple):
            return type(out)(_rounded(o, precision) for o in out)
        return _rounded(out, precision)

    return run
