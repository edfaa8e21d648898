"""Vector norms: ||x||_p = (sum_i |x_i|^p)^(1/p) over dims, with p = 2 (the default), 1, inf, -inf, 0 or any other number.

torch.norm's p="fro" is the 2-norm of all the elements in dims. Where the norm is 0 the gradient is
0, as PyTorch (the 2-norm is not differentiable there, and 0 is the subgradient it picks).
"""
import math

import numpy as np

from ..function import Function
from .reduction import _unreduce
from .util import normalize_dims


class Norm(Function):
    node_name = "LinalgVectorNormBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, x, p, dims, keepdim):
        magnitude = np.abs(x)
        if p == math.inf:
            out = np.max(magnitude, axis=dims, keepdims=True, initial=0)
        elif p == -math.inf:
            out = np.min(magnitude, axis=dims, keepdims=True)
        elif p == 0:
            out = (x != 0).sum(axis=dims, keepdims=True).astype(x.dtype)
        elif p == 1:
            out = magnitude.sum(axis=dims, keepdims=True)
        elif p == 2:
            out = np.sqrt((x * x).sum(axis=dims, keepdims=True))
        else:
            out = ((magnitude ** p).sum(axis=dims, keepdims=True)) ** (1.0 / p)
        ctx.save_for_backward(x, out)
        ctx.p, ctx.dims, ctx.keepdim = p, dims, keepdim
        return out if keepdim else np.squeeze(out, axis=dims)

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        p = ctx.p
        grad = _unreduce(grad, ctx.dims, ctx.keepdim)
        sign = np.sign(x)
        if p == 0:
            # the count of nonzeros is piecewise constant
            return np.zeros_like(x), None, None, None
        if p == 1:
            # d sum|x_i| / dx_i = sign(x_i)
            return grad * sign, None, None, None
        if p in (math.inf, -math.inf):
            # the extreme |x_i| gets the gradient with its sign; ties share it evenly (as amax)
            extreme = np.abs(x) == out
            count = extreme.sum(axis=ctx.dims, keepdims=True).astype(x.dtype)
            return grad * sign * extreme / count, None, None, None
        # d||x||_p / dx_i = sign(x_i) |x_i|^(p-1) / ||x||_p^(p-1)   (p = 2: x_i / ||x||), 0 where ||x|| = 0
        with np.errstate(divide="ignore", invalid="ignore"):
            if p == 2:
                scale = grad / out
                dx = x * scale
            else:
                scale = grad / out ** (p - 1)
                dx = sign * np.abs(x) ** (p - 1) * scale
        return np.where(out == 0, 0, dx).astype(x.dtype, copy=False), None, None, None


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """The p-norm over dim (all elements when dim is None), as torch.norm."""
    if input.dtype.kind != "f":
        raise TypeError(f"norm: expects a floating point tensor, got {input.dtype}")
    if dtype is not None:
        input = input.to(dtype)
    if p == "fro" or p is None:
        p = 2
    elif isinstance(p, str):
        raise ValueError(f"norm: p={p!r} is not supported; minigrad has p='fro' and numbers (2, 1, inf, -inf, 0, ...)")
    elif not isinstance(p, (int, float)) or isinstance(p, bool):
        raise TypeError(f"norm: p must be a number or 'fro', got {p!r}")
    dims = normalize_dims(dim, input.ndim, "norm")
    if p == -math.inf and input.numel() == 0:
        raise ValueError(f"norm: p=-inf of an empty tensor (shape {input.shape}) is undefined")
    return Norm.apply(input, float(p), dims, keepdim)
