"""PyTorch's arithmetic as plain functions (torch.add(x, y, alpha=2), torch.div(x, y, rounding_mode=...))
and its fused forms (addcmul, addmm, ...), each a composition of the operators."""
import math

import numpy as np

from ..errors import ShapeError
from ..ops import elementwise, rounding, unary
from ..ops.indexing import where
from ..ops.util import result_dtype
from ..tensor import Tensor


def _scaled(other, alpha):
    return other if alpha == 1 else other * alpha


def add(input, other, *, alpha=1):
    # input + alpha * other
    return elementwise.add(input, _scaled(other, alpha))


def sub(input, other, *, alpha=1):
    # input - alpha * other
    return elementwise.sub(input, _scaled(other, alpha))


def rsub(input, other, *, alpha=1):
    # other - alpha * input
    return elementwise.sub(other, _scaled(input, alpha))


def mul(input, other):
    return elementwise.mul(input, other)


def div(input, other, *, rounding_mode=None):
    # input / other; rounding_mode "trunc" rounds the quotient towards 0, "floor" down (gradient 0)
    if rounding_mode is None:
        return elementwise.div(input, other)
    return rounding.rounded_divide(input, other, rounding_mode)


def true_divide(input, other):
    return elementwise.div(input, other)


def floor_divide(input, other):
    # input // other: the quotient rounded down, in the operands' dtype (Python's //)
    return rounding.rounded_divide(input, other, "floor", "floor_divide")


def negative(input):
    return elementwise.neg(input)


def positive(input):
    if input.dtype.kind == "b":
        raise TypeError("positive: the unary + is not supported for bool tensors")
    return input


def clamp(input, min=None, max=None):  # noqa: A002  (PyTorch's names)
    """min(max(x, min), max). Number bounds: the primitive (ops/unary.py). Tensor bounds (broadcast, NaN in
    any operand gives NaN) are a choice among the three operands, made by `where`, so that each gradient
    goes where PyTorch sends it: to x where min <= x <= max; to min where x < min < max; to max where
    x > max or max < min (the result is then max everywhere); to none where x < min = max."""
    if not isinstance(min, Tensor) and not isinstance(max, Tensor):
        return unary.clamp(input, min, max)
    bounds = [b if isinstance(b, Tensor) else Tensor._make(np.asarray(b)) for b in (min, max) if b is not None]
    dtype = result_dtype(input, *bounds)
    x = input.to(dtype)
    low = bounds[0].to(dtype) if min is not None else None
    high = bounds[-1].to(dtype) if max is not None else None
    x_, low_, high_ = x._array, None if low is None else low._array, None if high is None else high._array
    out, nan = x, np.isnan(x_) if dtype.kind == "f" else np.zeros(x_.shape, bool)
    if low is not None:
        below = x_ < low_
        nan = nan | np.isnan(low_) if dtype.kind == "f" else nan
        if high is not None:
            out = where(below & (low_ == high_), low.detach(), out)  # PyTorch's tie: no gradient
            below = below & (low_ < high_)
        out = where(below, low, out)
    if high is not None:
        nan = nan | np.isnan(high_) if dtype.kind == "f" else nan
        out = where((x_ > high_) | (high_ < low_) if low is not None else x_ > high_, high, out)
    return where(nan, math.nan, out) if np.any(nan) else out


def clamp_min(input, min):  # noqa: A002  (PyTorch's names)
    return clamp(input, min=min)


def clamp_max(input, max):  # noqa: A002
    return clamp(input, max=max)


def addcmul(input, tensor1, tensor2, *, value=1):
    # input + value * tensor1 * tensor2, in the dtype of (input, tensor1, tensor2) as PyTorch (value is a
    # scalar of the op: an int value with bool tensors does not make them int64)
    out = input + value * tensor1 * tensor2
    target = result_dtype(input, tensor1, tensor2)
    return out.to(target) if out.dtype != target and out.dtype.kind in "iu" and target.kind in "iu" else out


def addcdiv(input, tensor1, tensor2, *, value=1):
    # input + value * tensor1 / tensor2
    return input + value * tensor1 / tensor2


def _beta_alpha(input, product, beta, alpha):
    # beta * input + alpha * product; beta = 0 ignores input's values (a NaN there does not propagate, as
    # PyTorch), though its shape still broadcasts
    product = product if alpha == 1 else alpha * product
    if beta == 0:
        return product.expand(*np.broadcast_shapes(input.shape, product.shape))
    return (input if beta == 1 else beta * input) + product


def mv(input, vec):
    # the matrix-vector product
    if input.ndim != 2 or vec.ndim != 1:
        raise ShapeError(f"mv: expects a matrix and a vector, got shapes {tuple(input.shape)} and {tuple(vec.shape)}")
    return input @ vec


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    return _beta_alpha(input, mat1.mm(mat2), beta, alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    return _beta_alpha(input, mv(mat, vec), beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    # beta input + alpha sum_b batch1[b] @ batch2[b]
    return _beta_alpha(input, batch1.bmm(batch2).sum(0), beta, alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    return _beta_alpha(input, batch1.bmm(batch2), beta, alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    return _beta_alpha(input, vec1.outer(vec2), beta, alpha)


def chain_matmul(*matrices):
    if not matrices:
        raise ValueError("chain_matmul: expects at least one matrix")
    out = matrices[0]
    for m in matrices[1:]:
        out = out.mm(m)
    return out
