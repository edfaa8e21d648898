"""Reductions over `dim` (an int, a tuple, or None for all; negative allowed) with `keepdim`.

Backward broadcasts the reduced gradient back over the reduced dims; `_unreduce` does that.
"""
import builtins
from collections import namedtuple

import numpy as np

from ..function import Function, named_node
from ..kernels import rowwise, summation
from ..tensor import Tensor
from .elementwise import maximum, minimum
from .indexing import IndexAdd
from .util import broadcast_to, linear_jvp, normalize_dim, normalize_dims


def _unreduce(grad, dims, keepdim):
    """Give a reduced gradient back the reduced dims as size-1 axes, ready to broadcast (an array or
    a Tensor alike: it is a reshape)."""
    if keepdim or grad.ndim == 0:  # (a 0-d gradient broadcasts as it is)
        return grad
    shape = list(grad.shape)
    for d in sorted((dims,) if isinstance(dims, int) else dims):
        shape.insert(d, 1)
    return grad.reshape(shape)


class Sum(Function, arrays=True):
    @staticmethod
    def forward(ctx, x, dims, keepdim):
        # y = sum_i x_i over dims
        ctx.in_shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        return summation.sum(x, dims, keepdim)

    @staticmethod
    def backward(ctx, grad):
        # y = sum_i x_i  =>  dL/dx_i = dL/dy for every i
        return broadcast_to(_unreduce(grad, ctx.dims, ctx.keepdim), ctx.in_shape), None, None

    jvp = staticmethod(linear_jvp)  # linear: d sum_i x_i = sum_i dx_i, the forward on the tangent


class Mean(Function, arrays=True):
    @staticmethod
    def forward(ctx, x, dims, keepdim):
        # y = (1/n) sum_i x_i over dims
        ctx.in_shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        ctx.count = int(np.prod([x.shape[d] for d in dims]))
        return summation.mean(x, dims, keepdim)

    @staticmethod
    def backward(ctx, grad):
        # y = (1/n) sum_i x_i  =>  dL/dx_i = dL/dy / n
        return broadcast_to(_unreduce(grad, ctx.dims, ctx.keepdim) / ctx.count, ctx.in_shape), None, None

    jvp = staticmethod(linear_jvp)  # linear: d mean_i x_i = mean_i dx_i, the forward on the tangent


class Prod(Function, arrays=True):
    @staticmethod
    def forward(ctx, x, dim, keepdim):
        # y = prod_j x_j along dim
        ctx.save_for_backward(x)
        ctx.dim, ctx.keepdim = dim, keepdim
        return x.prod(axis=dim, keepdims=keepdim)

    @staticmethod
    def backward(ctx, grad):
        # y = prod_j x_j  =>  dy/dx_i = prod_{j != i} x_j, the product of the others, computed as
        # (product of those before i) * (product of those after i), never as y / x_i, which fails at 0
        (x,) = ctx.saved_tensors
        d = ctx.dim
        after = np.flip(_products_before(np.flip(x, axis=d), d), axis=d)
        return _unreduce(grad, d, ctx.keepdim) * _products_before(x, d) * after, None, None

    @staticmethod
    def jvp(ctx, dx, dim, keepdim):
        # d prod_j x_j = sum_i (prod_{j != i} x_j) dx_i  (the products of the others, as backward)
        x, d = ctx.primals[0], ctx.dim
        others = _products_before(x, d) * np.flip(_products_before(np.flip(x, axis=d), d), axis=d)
        return (others * dx).sum(d, keepdim=ctx.keepdim)


def _products_before(x, d):
    """1, x_0, x_0 x_1, ..., x_0 ... x_{n-2} along d: in log2(n) rounds, each multiplying every running
    product by the one `shift` places before it (1 where there is none). Plain slicing and products,
    so it runs on arrays and, recorded, on Tensors."""
    n = x.shape[d]
    lead = (slice(None),) * d

    def shifted(a, k):  # a moved k places along d, ones coming in at the start
        return np.concatenate([np.ones_like(a[lead + (slice(0, k),)]), a[lead + (slice(0, n - k),)]], axis=d)

    out = shifted(x, 1)
    k = 1
    while k < n:
        out = out * shifted(out, k)
        k *= 2
    return out


class AMax(Function, arrays=True):
    """max (or min, with smallest) over dims; ties share the gradient evenly."""

    node_name = "AmaxBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, x, dims, keepdim, smallest=False):
        # y = max_i x_i over dims (min_i x_i with smallest)
        y = (x.min if smallest else x.max)(axis=dims, keepdims=keepdim)
        ctx.save_for_backward(x, y)
        ctx.dims, ctx.keepdim = dims, keepdim
        return y

    @staticmethod
    def backward(ctx, grad):
        # dL/dx_i = dL/dy / (number of ties) where x_i equals the extreme value, else 0
        x, y = ctx.saved_tensors
        is_extreme = x == _unreduce(y, ctx.dims, ctx.keepdim)
        ties = np.sum(is_extreme, axis=ctx.dims, keepdims=True, dtype=x.dtype)
        return _unreduce(grad, ctx.dims, ctx.keepdim) * is_extreme / ties, None, None

    @staticmethod
    def jvp(ctx, dx, dims, keepdim, smallest=None):
        # dy = the mean of dx_i over the i where x_i is the extreme value (ties share)
        x = ctx.primals[0]
        is_extreme = x == _unreduce(ctx.result, ctx.dims, ctx.keepdim)
        ties = np.sum(is_extreme, axis=ctx.dims, keepdims=True, dtype=x.dtype)
        return (dx * is_extreme / ties).sum(ctx.dims, keepdim=ctx.keepdim)


class MaxAlongDim(Function, arrays=True):
    """The values at `indices` (found by argmax or argmin along `dim`); the gradient goes there only."""

    node_name = "MaxBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, x, indices, dim, keepdim):
        # y = x at indices along dim (the argmax or argmin): y = take_along_dim(x, indices, dim)
        ctx.in_shape, ctx.dim, ctx.keepdim = x.shape, dim, keepdim
        ctx.positions = _along(indices, dim)
        values = x[ctx.positions]
        return values if keepdim else np.squeeze(values, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        # dL/dx_i = dL/dy where i is the returned index, else 0 (one index per output: no place twice)
        return (IndexAdd.apply(_unreduce(grad, ctx.dim, ctx.keepdim), ctx.in_shape, ctx.positions, unique=True),
                None, None, None)

    jvp = staticmethod(linear_jvp)  # linear: dy = dx at the returned index, the forward on the tangent


def _along(indices, dim):
    """The advanced index that reads, along dim, the positions in `indices` (np.take_along_axis's)."""
    grids = list(np.ogrid[tuple(slice(0, s) for s in indices.shape)])
    grids[dim] = indices
    return tuple(grids)


_max_result = namedtuple("max", ["values", "indices"])
_min_result = namedtuple("min", ["values", "indices"])


def _check_nonempty(x, dims, op):
    if any(x.shape[d] == 0 for d in dims) or (not dims and x.numel() == 0):
        raise ValueError(f"{op}: cannot reduce an empty dimension of a tensor of shape {tuple(x.shape)}")


def _integers_as_int64(x, dtype, op):
    """Cast to `dtype` if given; sums of bool or integers are int64, as PyTorch (NumPy: uint8 -> uint64)."""
    if dtype is not None:
        return x.to(dtype)
    return x.to(np.dtype(np.int64)) if x.dtype.kind == "u" else x


def sum(x, dim=None, keepdim=False, *, dtype=None):
    x = _integers_as_int64(x, dtype, "sum")
    out = Sum.apply(x, normalize_dims(dim, x.ndim, "sum"), keepdim)
    if dtype is not None and out.dtype != x.dtype:  # (NumPy sums small integers in int64; dtype=int8 wraps, as PyTorch's)
        out = out.to(x.dtype)
    return out if dim is None else named_node(out, "SumBackward1")  # PyTorch's names: sum(), sum(dim)


def mean(x, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:  # PyTorch casts the input first: mean(ints, dtype=torch.float64) is allowed
        x = x.to(dtype)
    if x.dtype.kind != "f":
        raise TypeError(f"mean: expects a floating point tensor (or dtype= a floating point type), got {x.dtype}")
    out = Mean.apply(x, normalize_dims(dim, x.ndim, "mean"), keepdim)
    return out if dim is None else named_node(out, "MeanBackward1")


def amax(x, dim=(), keepdim=False):
    dims = normalize_dims(dim, x.ndim, "amax")
    _check_nonempty(x, dims, "amax")
    return AMax.apply(x, dims, keepdim)


def amin(x, dim=(), keepdim=False):
    dims = normalize_dims(dim, x.ndim, "amin")
    _check_nonempty(x, dims, "amin")
    return named_node(AMax.apply(x, dims, keepdim, smallest=True), "AminBackward0")


def _max_or_min(x, dim, keepdim, smallest):
    op = "min" if smallest else "max"
    if isinstance(dim, Tensor):  # torch.max(a, b): elementwise
        return (minimum if smallest else maximum)(x, dim)
    if dim is None:
        # the maximum of all elements: ties share the gradient evenly, as PyTorch's max()
        return named_node((amin if smallest else amax)(x), "MinBackward1" if smallest else "MaxBackward1")
    d = normalize_dim(dim, x.ndim, op)
    _check_nonempty(x, (d,) if x.ndim else (), op)
    if x.ndim == 0:
        return (_min_result if smallest else _max_result)(x, Tensor._make(np.array(0)))
    indices = rowwise.arg_extreme(x._array, d, smallest)  # np.argmax/argmin, faster along a short middle dim
    values = MaxAlongDim.apply(x, indices, d, keepdim)
    if smallest:
        named_node(values, "MinBackward0")
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
    return named_node(Prod.apply(x, d, keepdim), "ProdBackward1")  # PyTorch's name for prod(dim)


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
