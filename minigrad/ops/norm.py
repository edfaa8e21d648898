"""Vector norms: ||x||_p = (sum_i |x_i|^p)^(1/p) over dims, with p = 2 (the default), 1, inf, -inf, 0 or any other number.

torch.norm's p="fro" is the 2-norm of all the elements in dims. Where the norm is 0 the gradient is
0, as PyTorch (the 2-norm is not differentiable there, and 0 is the subgradient it picks).
"""
import math

import numpy as np

from ..function import Function
from .reduction import _unreduce
from ..kernels import summation
from ..kernels.rowwise import dot_along
from .util import normalize_dims


class Norm(Function, arrays=True):
    node_name = "LinalgVectorNormBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, x, p, dims, keepdim):
        # y = (sum_i |x_i|^p)^(1/p) over dims;  p = inf: max_i |x_i|,  p = -inf: min_i |x_i|,  p = 0: #{x_i != 0}
        if p == 2:
            # sqrt(sum x^2) needs no |x|; over one dim, or all, it is a dot of x with itself (no x * x temporary)
            if len(dims) == x.ndim:
                flat = x.reshape(-1)
                squares = dot_along(flat, flat, 0).reshape((1,) * x.ndim)
            elif len(dims) == 1:
                squares = dot_along(x, x, dims[0])
            else:
                squares = summation.sum(x * x, dims, keepdims=True)
            out = np.sqrt(squares)
        elif p == math.inf:
            out = np.max(np.abs(x), axis=dims, keepdims=True, initial=0)
        elif p == -math.inf:
            out = np.min(np.abs(x), axis=dims, keepdims=True)
        elif p == 0:
            out = (x != 0).sum(axis=dims, keepdims=True).astype(x.dtype)
        elif p == 1:
            out = summation.sum(np.abs(x), dims, keepdims=True)
        else:
            with np.errstate(divide="ignore"):  # p < 0 with a zero entry: 0^p = inf, and the norm is 0
                out = summation.sum(np.abs(x) ** p, dims, keepdims=True) ** (1.0 / p)
        ctx.p, ctx.dims, ctx.keepdim = p, dims, keepdim
        y = out if keepdim else np.squeeze(out, axis=dims)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        p = ctx.p
        grad = _unreduce(grad, ctx.dims, ctx.keepdim)
        norm = _unreduce(y, ctx.dims, ctx.keepdim)
        if p == 0:
            # the count of nonzeros is piecewise constant: its derivative is 0
            return np.zeros_like(x), None, None, None
        if p == 1:
            # d sum|x_i| / dx_i = sign(x_i)
            return grad * np.sign(x), None, None, None
        if p in (math.inf, -math.inf):
            # the extreme |x_i| gets the gradient with its sign; ties share it evenly (as amax)
            extreme = np.abs(x) == norm
            ties = np.sum(extreme, axis=ctx.dims, keepdims=True, dtype=x.dtype)
            return grad * np.sign(x) * extreme / ties, None, None, None
        # d||x||_p / dx_i = sign(x_i) |x_i|^(p-1) / ||x||_p^(p-1)  (p = 2: x_i / ||x||), 0 where ||x|| = 0.
        # A stand-in norm of 1 there keeps 1/0 out of this formula and out of its own derivatives.
        zero = norm == 0
        scale = np.where(zero, 0, grad / np.where(zero, 1, norm) ** (p - 1))
        if p == 2:
            return x * scale, None, None, None
        if p < 1:  # |x_i|^(p-1) is infinite at x_i = 0, where PyTorch takes the derivative as 0 (a stand-in 1 again)
            zero_entry = x == 0
            return np.where(zero_entry, 0, np.sign(x) * np.abs(np.where(zero_entry, 1, x)) ** (p - 1) * scale), None, None, None
        return np.sign(x) * np.abs(x) ** (p - 1) * scale, None, None, None

    @staticmethod
    def jvp(ctx, dx, p, dims, keepdim):
        # d||x||_p = sum_i sign(x_i) |x_i|^(p-1) dx_i / ||x||_p^(p-1)  (p = 2: <x, dx> / ||x||)
        x, p = ctx.primals[0], ctx.p
        norm = _unreduce(ctx.result, ctx.dims, ctx.keepdim)
        if p == 0:  # a count of nonzeros: piecewise constant
            return ctx.result * 0
        if p == 1:
            weight = np.sign(x)
        elif p in (math.inf, -math.inf):  # the extreme |x_i|, with its sign; ties share
            extreme = np.abs(x) == norm
            weight = np.sign(x) * extreme / np.sum(extreme, axis=ctx.dims, keepdims=True, dtype=x.dtype)
        else:
            zero = norm == 0
            scale = np.where(zero, 0, 1 / np.where(zero, 1, norm) ** (p - 1))
            weight = x * scale if p == 2 else np.sign(x) * np.abs(x) ** (p - 1) * scale
        return (weight * dx).sum(ctx.dims, keepdim=ctx.keepdim)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """The p-norm over dim (all elements when dim is None), as torch.norm."""
    if input.dtype.kind != "f":
        raise TypeError(f"norm: expects a floating point tensor, got {input.dtype}")
    if dtype is not None:
        input = input.to(dtype)
    if p == "fro" or p is None:
        p = 2
    elif isinstance(p, str):
        raise ValueError(f"norm: p={p!r} is not supported; minigrad has p='fro', 'nuc' (torch.norm) and numbers (2, 1, inf, -inf, 0, ...)")
    elif not isinstance(p, (int, float)) or isinstance(p, bool):
        raise TypeError(f"norm: p must be a number or 'fro', got {p!r}")
    dims = normalize_dims(dim, input.ndim, "norm")
    if p == -math.inf and input.numel() == 0:
        raise ValueError(f"norm: p=-inf of an empty tensor (shape {tuple(input.shape)}) is undefined")
    return Norm.apply(input, float(p), dims, keepdim)
