"""Variance and standard deviation over dims, composed from mean, subtraction, products, sum and sqrt."""
import builtins

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
