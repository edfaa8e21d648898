"""The scans other than cumsum, as compositions: cumprod, cummax and cummin, logcumsumexp.

cumprod and logcumsumexp combine each running value with the one `k` places before it, for k = 1, 2, 4,
... (a parallel prefix scan in log2(n) rounds of slicing and one elementwise op): each round is made of
primitives, so every derivative follows, and a zero in cumprod needs no special case (the gradient is
never formed as y / x). cummax and cummin read x at the running extreme's index, as max(dim) does.
"""
import math
from collections import namedtuple

import numpy as np

from .. import dtype as _dtype
from ..ops import cat
from ..ops.util import normalize_dim
from ..tensor import Tensor
from .elementwise_math import logaddexp

_cummax_result = namedtuple("cummax", ["values", "indices"])
_cummin_result = namedtuple("cummin", ["values", "indices"])


def _prefix_scan(x, dim, combine, fill):
    """y_i = x_0 (+) x_1 (+) ... (+) x_i along dim, for an associative (+) with identity `fill`."""
    n = x.shape[dim]
    lead = (slice(None),) * dim
    out = x
    k = 1
    while k < n:
        # out_i (+)= out_{i-k}, the first k places combined with the identity
        before = out[lead + (slice(0, n - k),)]
        pad_shape = list(x.shape)
        pad_shape[dim] = k
        padding = Tensor._make(np.full(pad_shape, fill, dtype=x.dtype))
        out = combine(out, cat([padding, before], dim))
        k *= 2
    return out


def cumprod(x, dim, *, dtype=None):
    # y_i = x_0 x_1 ... x_i along dim; bool and integer tensors give int64, as PyTorch
    if dtype is not None:
        x = x.to(dtype)
    elif x.dtype.kind in "biu":
        x = x.to(_dtype.int64)
    if x.ndim == 0:
        return x.clone()
    return _prefix_scan(x, normalize_dim(dim, x.ndim, "cumprod"), lambda a, b: a * b, 1)


def logcumsumexp(x, dim):
    # y_i = log(e^x_0 + ... + e^x_i) along dim, each step a logaddexp (no overflow, no underflow to -inf)
    if x.dtype.kind != "f":
        x = x.to(_dtype.get_default_dtype())
    if x.ndim == 0:
        return x.clone()
    return _prefix_scan(x, normalize_dim(dim, x.ndim, "logcumsumexp"), logaddexp, -math.inf)


def _running_extreme(x, dim, smallest):
    """(values, indices) of the running max (min) along dim: the index is the last place where the running
    extreme was reached (x_i >= the running max updates it, as PyTorch), and a NaN, once met, stays."""
    a = np.moveaxis(x._array, dim, -1)
    n = a.shape[-1]
    if n == 0:
        indices = np.zeros(a.shape, dtype=np.int64)
    else:
        accumulate = np.minimum.accumulate if smallest else np.maximum.accumulate
        running = accumulate(a, axis=-1)  # NaN propagates, as in PyTorch
        previous = np.concatenate([running[..., :1], running[..., :-1]], axis=-1)
        with np.errstate(invalid="ignore"):
            reached = (a <= previous) if smallest else (a >= previous)
        if a.dtype.kind == "f":
            reached |= np.isnan(a) & ~np.isnan(previous)
        reached[..., 0] = True
        positions = np.where(reached, np.arange(n), 0)
        indices = np.maximum.accumulate(positions, axis=-1)
    indices = np.moveaxis(indices, -1, dim).astype(np.int64)
    return x.gather(dim, Tensor._make(indices)), Tensor._make(indices)


def cummax(x, dim):
    # y_i = max(x_0, ..., x_i) along dim, and the index it came from; the gradient goes to that index
    d = normalize_dim(dim, x.ndim, "cummax")
    if x.ndim == 0:
        return _cummax_result(x.clone(), Tensor._make(np.array(0)))
    return _cummax_result(*_running_extreme(x, d, smallest=False))


def cummin(x, dim):
    d = normalize_dim(dim, x.ndim, "cummin")
    if x.ndim == 0:
        return _cummin_result(x.clone(), Tensor._make(np.array(0)))
    return _cummin_result(*_running_extreme(x, d, smallest=True))
