"""Selecting elements: indexing, masked_fill, where, tril/triu."""
import numpy as np

from ..errors import ShapeError
from ..function import Function
from ..tensor import Tensor
from .util import promote, scalar, shape_of


def _plain_index(index):
    """Turn Tensors and lists inside an index into arrays; say whether it is advanced (has arrays)."""
    parts = index if isinstance(index, tuple) else (index,)
    plain = []
    advanced = False
    for part in parts:
        if isinstance(part, Tensor):
            part = part.data
        elif isinstance(part, list):
            part = np.asarray(part)
            if part.dtype.kind == "f":
                raise IndexError(f"index: indices must be integers or bools, got floats {part.tolist()!r:.60}")
        if isinstance(part, np.ndarray):
            if part.dtype.kind == "b":
                plain.extend(np.nonzero(part))  # a bool mask selects the positions where it is True
                advanced = True
                continue
            if part.dtype.kind not in "iu":
                raise IndexError(f"index: index tensors must be integers or bools, got {part.dtype}")
            advanced = True
        elif isinstance(part, np.generic):
            part = part.item()
        plain.append(part)
    return tuple(plain), advanced


class GetItem(Function):
    @staticmethod
    def forward(ctx, x, index, advanced):
        ctx.in_shape, ctx.index, ctx.advanced = x.shape, index, advanced
        try:
            return x[index]
        except IndexError as error:
            raise IndexError(f"index: {error} (indexing a tensor of shape {x.shape})") from None

    @staticmethod
    def backward(ctx, grad):
        # y = x[index]  =>  dL/dx is zero except at the selected places, which receive dL/dy.
        # An integer array may select one element twice: np.add.at adds both contributions.
        out = np.zeros(ctx.in_shape, dtype=grad.dtype)
        if ctx.advanced:
            np.add.at(out, ctx.index, grad)
        else:
            out[ctx.index] = grad
        return out, None, None


class MaskedFill(Function):
    @staticmethod
    def forward(ctx, x, mask, value):
        ctx.mask = mask
        try:
            return np.where(mask, np.asarray(value, dtype=x.dtype), x)
        except ValueError:
            raise ShapeError(
                f"masked_fill: mask of shape {mask.shape} cannot be broadcast to the tensor's shape {x.shape}"
            ) from None

    @staticmethod
    def backward(ctx, grad):
        # filled places no longer depend on x: their gradient is 0; the rest pass dL/dy through
        return np.where(ctx.mask, 0, grad), None, None


class Where(Function):
    @staticmethod
    def forward(ctx, condition, a, b):
        ctx.condition = condition
        try:
            return np.where(condition, a, b)
        except ValueError:
            raise ShapeError(
                f"where: condition {np.shape(condition)}, input {shape_of(a)} and other {shape_of(b)} "
                "cannot be broadcast together"
            ) from None

    @staticmethod
    def backward(ctx, grad):
        # dL/da = dL/dy where the condition holds, dL/db = dL/dy where it does not
        c = ctx.condition
        return None, np.where(c, grad, 0), np.where(c, 0, grad)


class Triangle(Function):
    @staticmethod
    def forward(ctx, x, diagonal, upper):
        ctx.diagonal, ctx.upper = diagonal, upper
        return (np.triu if upper else np.tril)(x, diagonal)

    @staticmethod
    def backward(ctx, grad):
        # the kept triangle passes dL/dy through, the zeroed one gets 0
        return (np.triu if ctx.upper else np.tril)(grad, ctx.diagonal), None, None


def getitem(x, index):
    plain, advanced = _plain_index(index)
    return GetItem.apply(x, plain if isinstance(index, tuple) or len(plain) != 1 else plain[0], advanced)


def _bool_array(mask, op):
    data = mask.data if isinstance(mask, Tensor) else np.asarray(mask)
    if data.dtype.kind != "b":
        raise TypeError(f"{op}: the mask must be a bool tensor, got dtype {data.dtype}")
    return data


def masked_fill(x, mask, value):
    """Where mask is True, put `value`; elsewhere keep x."""
    mask = _bool_array(mask, "masked_fill")
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise ValueError(f"masked_fill: value must be a number or a 1-element tensor, got shape {value.shape}")
        value = value.item()
    return MaskedFill.apply(x, mask, scalar(value))


def where(condition, input, other):
    condition = _bool_array(condition, "where")
    input, other = promote(input, other)
    return Where.apply(condition, input, other)


def tril(x, diagonal=0):
    if x.ndim < 2:
        raise ShapeError(f"tril: needs at least 2 dims, got shape {x.shape}")
    return Triangle.apply(x, diagonal, False)


def triu(x, diagonal=0):
    if x.ndim < 2:
        raise ShapeError(f"triu: needs at least 2 dims, got shape {x.shape}")
    return Triangle.apply(x, diagonal, True)
