"""Reductions over `dim` (an int, a tuple, or None for all; negative allowed) with `keepdim`.

Backward broadcasts the reduced gradient back over the reduced dims; `_unreduce` does that.
"""
import builtins
from collections import namedtuple

import numpy as np

from ..function import Function
from ..kernels import summation
from ..tensor import Tensor
from .join import cat
from .util import normalize_dim, normalize_dims


def _unreduce(grad, dims, keepdim):
    """Give a reduced gradient back the reduced dims as size-1 axes, ready to broadcast."""
    return grad if keepdim else np.expand_dims(grad, dims)


def _unreduced(grad, dims, keepdim):
    """_unreduce for a gradient that is a Tensor (the recorded walk of create_graph=True)."""
    if keepdim:
        return grad
    shape = list(grad.shape)
    for d in sorted(dims):
        shape.insert(d, 1)
    return grad.reshape(shape)


def _mask(condition, dtype):
    """A bool Tensor as 0.0 / 1.0 of `dtype`: a constant factor of a recorded formula (masks have no gradient)."""
    return condition.to(dtype)


class Sum(Function):
    @staticmethod
    def forward(ctx, x, dims, keepdim):
        # y = sum_i x_i over dims
        ctx.in_shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        return summation.sum(x, dims, keepdim)

    @staticmethod
    def backward(ctx, grad):
        # y = sum_i x_i  =>  dL/dx_i = dL/dy for every i
        grad = _unreduce(grad, ctx.dims, ctx.keepdim)
        return np.broadcast_to(grad, ctx.in_shape), None, None

    @staticmethod
    def backward_differentiable(ctx, grad):
        # the same, recorded: dL/dx = dL/dy expanded over the summed dims
        return _unreduced(grad, ctx.dims, ctx.keepdim).expand(ctx.in_shape), None, None


class Mean(Function):
    @staticmethod
    def forward(ctx, x, dims, keepdim):
        # y = (1/n) sum_i x_i over dims
        ctx.in_shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        ctx.count = int(np.prod([x.shape[d] for d in dims]))
        return summation.mean(x, dims, keepdim)

    @staticmethod
    def backward(ctx, grad):
        # y = (1/n) sum_i x_i  =>  dL/dx_i = dL/dy / n
        grad = _unreduce(grad, ctx.dims, ctx.keepdim) / ctx.count
        return np.broadcast_to(grad, ctx.in_shape), None, None

    @staticmethod
    def backward_differentiable(ctx, grad):
        # the same, recorded: dL/dx = dL/dy / n expanded over the averaged dims
        return (_unreduced(grad, ctx.dims, ctx.keepdim) / ctx.count).expand(ctx.in_shape), None, None


class Var(Function):
    @staticmethod
    def forward(ctx, x, dims, correction, keepdim):
        # y = sum_i (x_i - mean)^2 / (n - correction) over dims
        ctx.dims, ctx.keepdim = dims, keepdim
        count = int(np.prod([x.shape[d] for d in dims]))
        ctx.denominator = builtins.max(count - correction, 0)  # this module's max is the op
        centered = x - summation.mean(x, dims, keepdims=True)
        ctx.save_for_backward(centered)
        with np.errstate(divide="ignore", invalid="ignore"):
            return summation.sum(centered * centered, dims, keepdim) / ctx.denominator

    @staticmethod
    def backward(ctx, grad):
        # y = sum_i (x_i - mean)^2 / (n - correction)  =>  dL/dx_i = dL/dy * 2 (x_i - mean) / (n - correction)
        # (the mean's own dependence on x_i drops out: sum_i (x_i - mean) = 0)
        (centered,) = ctx.saved_tensors
        grad = _unreduce(grad, ctx.dims, ctx.keepdim)
        scale = 2.0 / ctx.denominator if ctx.denominator else float("inf")  # n <= correction: inf, as PyTorch
        with np.errstate(invalid="ignore"):
            return grad * centered * scale, None, None, None

    @staticmethod
    def backward_differentiable(ctx, grad):
        # the same, recorded, with x - mean recomputed from x: it depends on x, and so does the gradient
        x = ctx.parents[0]
        centered = x - x.mean(ctx.dims, keepdim=True)
        scale = 2.0 / ctx.denominator if ctx.denominator else float("inf")
        return _unreduced(grad, ctx.dims, ctx.keepdim) * centered * scale, None, None, None


class Std(Function):
    @staticmethod
    def forward(ctx, x, dims, correction, keepdim):
        # y = sqrt(sum_i (x_i - mean)^2 / (n - correction)) over dims
        ctx.dims, ctx.keepdim = dims, keepdim
        count = int(np.prod([x.shape[d] for d in dims]))
        ctx.denominator = builtins.max(count - correction, 0)
        centered = x - summation.mean(x, dims, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            std = np.sqrt(summation.sum(centered * centered, dims, keepdims=True) / ctx.denominator)
        ctx.save_for_backward(centered, std)
        return std if keepdim else np.squeeze(std, axis=dims)

    @staticmethod
    def backward(ctx, grad):
        # y = sqrt(var)  =>  dL/dx_i = dL/dy * (x_i - mean) / ((n - correction) y);
        # where y = 0 (all values equal) the gradient is 0, as PyTorch
        centered, std = ctx.saved_tensors
        grad = _unreduce(grad, ctx.dims, ctx.keepdim)
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(std == 0, 0, grad / (std * ctx.denominator)).astype(grad.dtype, copy=False)
        return scale * centered, None, None, None

    @staticmethod
    def backward_differentiable(ctx, grad):
        # the same, recorded, with x - mean and y recomputed from x. Where y = 0 the gradient is 0: y is
        # computed there from var + 1 instead (then masked out), so no 1/0 enters the graph's derivatives.
        x = ctx.parents[0]
        centered = x - x.mean(ctx.dims, keepdim=True)
        var = (centered * centered).sum(ctx.dims, keepdim=True) / ctx.denominator
        zero = _mask(var == 0, x.dtype)
        std = (var + zero).sqrt()
        scale = _unreduced(grad, ctx.dims, ctx.keepdim) / (std * ctx.denominator) * (1 - zero)
        return scale * centered, None, None, None


class Prod(Function):
    @staticmethod
    def forward(ctx, x, dim, keepdim):
        # y = prod_j x_j along dim
        ctx.save_for_backward(x)
        ctx.dim, ctx.keepdim = dim, keepdim
        return x.prod(axis=dim, keepdims=keepdim)

    @staticmethod
    def backward(ctx, grad):
        # y = prod_j x_j  =>  dy/dx_i = prod_{j != i} x_j, the product of the others. Computed as
        # (product of those before i) * (product of those after i), never as y / x_i, which fails at 0.
        (x,) = ctx.saved_tensors
        d = ctx.dim
        ones = np.ones_like(np.take(x, [0], axis=d))
        before = np.concatenate([ones, np.cumprod(x, axis=d)], axis=d)
        before = np.delete(before, -1, axis=d)
        after = np.flip(np.cumprod(np.flip(x, axis=d), axis=d), axis=d)
        after = np.delete(np.concatenate([after, ones], axis=d), 0, axis=d)
        grad = _unreduce(grad, d, ctx.keepdim)
        return grad * before * after, None, None

    @staticmethod
    def backward_differentiable(ctx, grad):
        # the same (product of those before i) * (product of those after i), recorded: the running
        # products in minigrad ops (_cumprod), shifted one place by a 1 at the start
        x = ctx.parents[0]
        d = ctx.dim
        n = x.shape[d]
        ones = Tensor._make(np.ones(x.shape[:d] + (1,) + x.shape[d + 1:], dtype=x.dtype))
        before = cat([ones, _cumprod(x, d).narrow(d, 0, n - 1)], d)
        after = cat([_cumprod(x.flip(d), d).flip(d).narrow(d, 1, n - 1), ones], d)
        return _unreduced(grad, (d,), ctx.keepdim) * before * after, None, None


def _cumprod(x, d):
    """x_0, x_0 x_1, x_0 x_1 x_2, ... along d, in minigrad ops (recorded): log2(n) rounds, each multiplying
    every running product by the one `shift` places before it (1 where there is none)."""
    n = x.shape[d]
    shift = 1
    while shift < n:
        ones = Tensor._make(np.ones(x.shape[:d] + (shift,) + x.shape[d + 1:], dtype=x.dtype))
        x = x * cat([ones, x.narrow(d, 0, n - shift)], d)
        shift *= 2
    return x


class LogSumExp(Function):
    node_name = "LogsumexpBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, x, dims, keepdim):
        # log sum exp(x) = m + log sum exp(x - m), m the maximum: no exp overflows
        m = np.max(x, axis=dims, keepdims=True, initial=-np.inf)
        m = np.where(np.isfinite(m), m, 0).astype(x.dtype, copy=False)  # all -inf (or inf): shift by 0
        with np.errstate(divide="ignore"):
            out = np.log(summation.sum(np.exp(x - m), dims, keepdims=True)) + m
        ctx.save_for_backward(x, out)
        ctx.dims, ctx.keepdim = dims, keepdim
        return out if keepdim else np.squeeze(out, axis=dims)

    @staticmethod
    def backward(ctx, grad):
        # dL/dx_i = dL/dy * exp(x_i - y), the softmax of x over dims
        x, out = ctx.saved_tensors
        with np.errstate(invalid="ignore"):
            return _unreduce(grad, ctx.dims, ctx.keepdim) * np.exp(x - out), None, None

    @staticmethod
    def backward_differentiable(ctx, grad):
        # the same, recorded, with y recomputed from x (y depends on x: the softmax's own derivative)
        x, _ = ctx.saved_tensors
        out = LogSumExp.apply(x, ctx.dims, True)
        return _unreduced(grad, ctx.dims, ctx.keepdim) * (x - out).exp(), None, None


class AMax(Function):
    """max (or min, with negate) over dims; ties share the gradient evenly."""

    node_name = "AmaxBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, x, dims, keepdim, smallest=False):
        # y = max_i x_i over dims (min_i x_i with smallest)
        out = (x.min if smallest else x.max)(axis=dims, keepdims=True)
        ctx.save_for_backward(x, out)
        ctx.dims, ctx.keepdim = dims, keepdim
        return out if keepdim else np.squeeze(out, axis=dims)

    @staticmethod
    def backward(ctx, grad):
        # dL/dx_i = dL/dy / (number of ties) where x_i equals the extreme value, else 0
        x, out = ctx.saved_tensors
        is_extreme = x == out
        ties = is_extreme.sum(axis=ctx.dims, keepdims=True).astype(x.dtype)  # int counts would promote to float64
        grad = _unreduce(grad, ctx.dims, ctx.keepdim)
        return grad * is_extreme / ties, None, None

    @staticmethod
    def backward_differentiable(ctx, grad):
        # the same, recorded: the share of each element is a constant (0 almost everywhere is its derivative)
        x, out = ctx.saved_tensors
        is_extreme = _mask(x == out, grad.dtype)  # out kept its reduced dims (keepdim=True)
        share = is_extreme / is_extreme.sum(ctx.dims, keepdim=True)
        return _unreduced(grad, ctx.dims, ctx.keepdim) * share, None, None


class MaxAlongDim(Function):
    """The values at `indices` (found by argmax or argmin along `dim`); the gradient goes there only."""

    node_name = "MaxBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, x, indices, dim, keepdim):
        # y = x at indices along dim (the argmax or argmin): y = take_along_dim(x, indices, dim)
        ctx.in_shape, ctx.dim, ctx.keepdim = x.shape, dim, keepdim
        ctx.save_for_backward(indices)
        values = np.take_along_axis(x, indices, axis=dim)
        return values if keepdim else np.squeeze(values, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        # dL/dx_i = dL/dy where i is the returned index, else 0
        (indices,) = ctx.saved_tensors
        grad = _unreduce(grad, ctx.dim, ctx.keepdim)
        out = np.zeros(ctx.in_shape, dtype=grad.dtype)
        np.put_along_axis(out, indices, grad, axis=ctx.dim)
        return out, None, None, None

    @staticmethod
    def backward_differentiable(ctx, grad):
        # the same, recorded: dL/dy times a constant one-hot mask of the returned indices
        (indices,) = ctx.saved_tensors
        hit = np.zeros(ctx.in_shape, dtype=grad.dtype)
        np.put_along_axis(hit, indices.numpy(), 1, axis=ctx.dim)
        return _unreduced(grad, (ctx.dim,), ctx.keepdim) * Tensor._make(hit), None, None, None


_max_result = namedtuple("max", ["values", "indices"])
_min_result = namedtuple("min", ["values", "indices"])


def _check_nonempty(x, dims, op):
    if any(x.shape[d] == 0 for d in dims) or (not dims and x.numel() == 0):
        raise ValueError(f"{op}: cannot reduce an empty dimension of a tensor of shape {x.shape}")


def _integers_as_int64(x, dtype, op):
    """Cast to `dtype` if given; sums of bool or integers are int64, as PyTorch (NumPy: uint8 -> uint64)."""
    if dtype is not None:
        return x.to(dtype)
    return x.to(np.dtype(np.int64)) if x.dtype.kind == "u" else x


def sum(x, dim=None, keepdim=False, *, dtype=None):
    x = _integers_as_int64(x, dtype, "sum")
    return Sum.apply(x, normalize_dims(dim, x.ndim, "sum"), keepdim)


def mean(x, dim=None, keepdim=False):
    if x.dtype.kind != "f":
        raise TypeError(f"mean: expects a floating point tensor, got {x.dtype}")
    return Mean.apply(x, normalize_dims(dim, x.ndim, "mean"), keepdim)


def var(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance with Bessel's correction by default (correction=1), as PyTorch.

    As in PyTorch, a bool in dim's place is `unbiased`: x.var(False) is the biased variance.
    """
    dims, correction = _spread_args("var", x, dim, unbiased, correction)
    return Var.apply(x, dims, correction, keepdim)


def _spread_args(op, x, dim, unbiased, correction):
    """(dims, correction) from var/std's PyTorch arguments; a bool in dim's place is `unbiased`."""
    if x.dtype.kind != "f":
        raise TypeError(f"{op}: expects a floating point tensor, got {x.dtype}")
    if isinstance(dim, bool):
        if unbiased is not None:
            raise TypeError(f"{op}: got unbiased twice (a bool in place of dim, and unbiased=)")
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise ValueError(f"{op}: give either unbiased or correction, not both")
    if correction is None:
        correction = 0 if unbiased is False else 1
    return normalize_dims(dim, x.ndim, op), correction


def amax(x, dim=(), keepdim=False):
    dims = normalize_dims(dim, x.ndim, "amax")
    _check_nonempty(x, dims, "amax")
    return AMax.apply(x, dims, keepdim)


def amin(x, dim=(), keepdim=False):
    dims = normalize_dims(dim, x.ndim, "amin")
    _check_nonempty(x, dims, "amin")
    return AMax.apply(x, dims, keepdim, smallest=True)


def _max_or_min(x, dim, keepdim, smallest):
    op = "min" if smallest else "max"
    if isinstance(dim, Tensor):  # torch.max(a, b): elementwise
        from .elementwise import maximum, minimum

        return (minimum if smallest else maximum)(x, dim)
    if dim is None:
        # the maximum of all elements: ties share the gradient evenly, as PyTorch's max()
        return (amin if smallest else amax)(x)
    d = normalize_dim(dim, x.ndim, op)
    _check_nonempty(x, (d,) if x.ndim else (), op)
    if x.ndim == 0:
        return (_min_result if smallest else _max_result)(x, Tensor._make(np.array(0)))
    indices = (np.argmin if smallest else np.argmax)(x._array, axis=d, keepdims=True)
    values = MaxAlongDim.apply(x, indices, d, keepdim)
    if not keepdim:
        indices = np.squeeze(indices, axis=d)
    return (_min_result if smallest else _max_result)(values, Tensor._make(indices.astype(np.int64)))


def max(x, dim=None, keepdim=False):
    return _max_or_min(x, dim, keepdim, smallest=False)


def min(x, dim=None, keepdim=False):
    return _max_or_min(x, dim, keepdim, smallest=True)


def _arg(np_fn, name):
    def arg(x, dim=None, keepdim=False):
        if dim is None:
            _check_nonempty(x, (), name)
            index = np_fn(x._array)
            if keepdim:
                return Tensor._make(np.full((1,) * x.ndim, index, dtype=np.int64))
            return Tensor._make(np.asarray(index, dtype=np.int64))
        d = normalize_dim(dim, x.ndim, name)
        _check_nonempty(x, (d,) if x.ndim else (), name)
        return Tensor._make(np_fn(x._array, axis=d, keepdims=keepdim).astype(np.int64))

    arg.__name__ = name
    return arg


argmax = _arg(np.argmax, "argmax")
argmin = _arg(np.argmin, "argmin")


def std(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation: the square root of var() with the same arguments (correction=1 by default)."""
    dims, correction = _spread_args("std", x, dim, unbiased, correction)
    return Std.apply(x, dims, correction, keepdim)


def prod(x, dim=None, keepdim=False, *, dtype=None):
    """The product of all elements, or along one dim; integers give int64, as PyTorch."""
    x = _integers_as_int64(x, dtype, "prod")
    if x.dtype.kind == "b":
        x = x.to(np.dtype(np.int64))
    if dim is None:
        return Prod.apply(x.reshape(-1), 0, False)
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"prod: dim must be one int, got {dim!r}")
    d = normalize_dim(dim, x.ndim, "prod")
    if x.ndim == 0:
        return Prod.apply(x.reshape(1), 0, False).reshape(())
    return Prod.apply(x, d, keepdim)


def logsumexp(x, dim, keepdim=False):
    """log(sum(exp(x))) over dim, computed without overflow; integers give the default float dtype."""
    if x.dtype.kind != "f":
        from .. import dtype as _dtype

        x = x.to(_dtype.get_default_dtype())
    return LogSumExp.apply(x, normalize_dims(dim, x.ndim, "logsumexp"), keepdim)


def _any_or_all(np_fn, name):
    def reduce(x, dim=None, keepdim=False):
        dims = normalize_dims(dim, x.ndim, name)
        result = np_fn(x._array, axis=dims, keepdims=keepdim)
        return Tensor._make(np.asarray(result, dtype=np.uint8 if x.dtype == np.uint8 else bool))

    reduce.__name__ = name
    reduce.__doc__ = f"Whether {name} elements (along dim) are nonzero: bool (uint8 for uint8 input, as PyTorch)."
    return reduce


any_ = _any_or_all(np.any, "any")  # exported as any and all; named apart from the builtins used above
all_ = _any_or_all(np.all, "all")
