"""Variance and standard deviation over dims, composed from mean, subtraction, products, sum and sqrt."""
import builtins
from collections import namedtuple

import numpy as np

from ..ops import where
from ..ops.util import normalize_dims
from . import composite


def var(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance with Bessel's correction by default (correction=1), as PyTorch.

    As in PyTorch, a bool in dim's place is `unbiased`: x.var(False) is the biased variance.
    """
    dims, correction = _spread_args("var", x, dim, unbiased, correction)
    return _var(x, dims, correction, keepdim)


def std(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation: the square root of var() with the same arguments (correction=1 by default)."""
    dims, correction = _spread_args("std", x, dim, unbiased, correction)
    return _std(x, dims, correction, keepdim)


@composite
def _var(x, dims, correction, keepdim):
    # y = sum_i (x_i - mean)^2 / (n - correction) over dims   (n <= correction: inf or nan, as PyTorch)
    centered = x - x.mean(dims, keepdim=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (centered * centered).sum(dims, keepdim=keepdim) / _denominator(x, dims, correction)


@composite
def _std(x, dims, correction, keepdim):
    # y = sqrt(var); where var = 0 (all values equal) the gradient is 0, as PyTorch: a stand-in 1 under
    # the root there keeps 1/0 out of the gradient and its own derivatives
    v = _var(x, dims, correction, keepdim)
    zero = v == 0
    return where(zero, 0.0, where(zero, 1.0, v).sqrt())


def _denominator(x, dims, correction):
    return builtins.max(int(np.prod([x.shape[d] for d in dims])) - correction, 0)


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


def var_mean(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(var, mean) with var()'s arguments."""
    dims, correction = _spread_args("var_mean", x, dim, unbiased, correction)
    return _var(x, dims, correction, keepdim), x.mean(dims, keepdim=keepdim)


def std_mean(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(std, mean) with std()'s arguments."""
    dims, correction = _spread_args("std_mean", x, dim, unbiased, correction)
    return _std(x, dims, correction, keepdim), x.mean(dims, keepdim=keepdim)


def nansum(x, dim=None, keepdim=False, *, dtype=None):
    # the sum with NaNs counted as 0 (their gradient is 0)
    return where(x.isnan(), 0.0, x).sum(dim, keepdim, dtype=dtype) if x.dtype.kind == "f" else x.sum(dim, keepdim)


def nanmean(x, dim=None, keepdim=False, *, dtype=None):
    # the mean of the elements that are not NaN
    if dtype is not None:
        x = x.to(dtype)
    present = ~x.isnan()
    count = present.to(x.dtype).sum(dim, keepdim)
    return nansum(x, dim, keepdim) / count


def count_nonzero(x, dim=None):
    return (x != 0).sum(dim)


_AMINMAX = namedtuple("aminmax", ["min", "max"])


def aminmax(x, *, dim=None, keepdim=False):
    dims = () if dim is None else dim
    return _AMINMAX(x.amin(dims, keepdim), x.amax(dims, keepdim))


def cov(x, *, correction=1, fweights=None, aweights=None):
    # the covariance of the rows (variables) over the columns (observations), with weights as PyTorch
    x = x if x.ndim == 2 else x.reshape(1, -1)
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = fweights.to(x.dtype)
    if aweights is not None:
        w = aweights if w is None else w * aweights
    if w is None:
        mean = x.mean(1, keepdim=True)
        denominator = n - correction
        centered = x - mean
        c = centered @ centered.transpose(0, 1) / max(denominator, 0)
    else:
        w_sum = w.sum()
        mean = (x * w).sum(1, keepdim=True) / w_sum
        if correction == 0:
            denominator = w_sum
        elif aweights is None:
            denominator = w_sum - correction
        else:
            denominator = w_sum - correction * (w * aweights).sum() / w_sum
        centered = x - mean
        c = (centered * w) @ centered.transpose(0, 1) / denominator.clamp(min=0)
    return c.squeeze() if c.shape == (1, 1) else c


def corrcoef(x):
    # the correlation coefficients: cov / (std_i std_j), clipped to [-1, 1]
    c = cov(x)
    if c.ndim == 0:
        return c / c
    d = c.diagonal().sqrt()
    return (c / d.unsqueeze(1) / d.unsqueeze(0)).clamp(-1, 1)
