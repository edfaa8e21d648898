"""Counting, searching and order statistics: histograms, bincount, bucketize, unique, isin, median,
quantile, mode, kthvalue. The counts have no gradient (as in PyTorch); median, quantile, kthvalue and
mode read values at positions found without a graph, so their gradient goes to the elements they read."""
from collections import namedtuple

import numpy as np

from .. import dtype as _dtype
from ..errors import ShapeError
from ..ops import stack, where
from ..ops.util import normalize_dim
from ..tensor import Tensor

_values_indices = {name: namedtuple(name, ["values", "indices"]) for name in ("median", "mode", "kthvalue", "nanmedian")}
_histogram = namedtuple("histogram", ["hist", "bin_edges"])


def _array(x):
    return x._array if isinstance(x, Tensor) else np.asarray(x)


def histc(input, bins=100, min=0, max=0):  # noqa: A002  (PyTorch's names)
    # counts in `bins` equal bins over [min, max] (the data's range when both are 0); outside values ignored
    data = _array(input).reshape(-1)
    low, high = float(min), float(max)
    if low == high and data.size:
        low, high = float(data.min()), float(data.max())
    if low == high:
        low, high = low - 1, high + 1
    counts, _ = np.histogram(data[(data >= low) & (data <= high)], bins=bins, range=(low, high))
    return Tensor._make(counts.astype(input.dtype))


def histogram(input, bins=100, *, range=None, weight=None, density=False):  # noqa: A002
    data = _array(input).reshape(-1)
    bins = _array(bins) if isinstance(bins, Tensor) else bins
    w = None if weight is None else _array(weight).reshape(-1)
    hist, edges = np.histogram(data, bins=bins, range=range, weights=w, density=density)
    return _histogram(Tensor._make(hist.astype(input.dtype)), Tensor._make(edges.astype(input.dtype)))


def bincount(input, weights=None, minlength=0):
    data = _array(input)
    if data.ndim != 1 or data.dtype.kind not in "iu":
        raise ValueError(f"bincount: expects a 1-D tensor of non-negative integers, got {data.dtype} of shape "
                         f"{tuple(data.shape)}")
    if data.size and data.min() < 0:
        raise ValueError("bincount: the input must hold non-negative integers")
    w = None if weights is None else _array(weights)
    counts = np.bincount(data, weights=w, minlength=minlength)
    dtype = np.int64 if w is None else (w.dtype if w.dtype.kind == "f" else np.float64)
    return Tensor._make(counts.astype(dtype))


def bucketize(input, boundaries, *, out_int32=False, right=False):
    out = np.searchsorted(_array(boundaries), _array(input), side="right" if right else "left")
    return Tensor._make(np.asarray(out, dtype=np.int32 if out_int32 else np.int64))


def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None, sorter=None):
    side = side or ("right" if right else "left")
    seq, vals = _array(sorted_sequence), _array(values)
    if sorter is not None:
        seq = np.take_along_axis(seq, _array(sorter), -1)
    if seq.ndim == 1:
        out = np.searchsorted(seq, vals, side=side)
    else:
        out = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(seq.reshape(-1, seq.shape[-1]),
                                                                            vals.reshape(-1, vals.shape[-1]))])
        out = out.reshape(vals.shape)
    return Tensor._make(np.asarray(out, dtype=np.int32 if out_int32 else np.int64))


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    return Tensor._make(np.isin(_array(elements), _array(test_elements), invert=invert))


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    data = _array(input)
    values, inverse, counts = np.unique(data, return_inverse=True, return_counts=True, axis=dim)
    out = [Tensor._make(values)]
    if return_inverse:
        out.append(Tensor._make(inverse.reshape(data.shape if dim is None else -1).astype(np.int64)))
    if return_counts:
        out.append(Tensor._make(counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    data = _array(input)
    if dim is None:
        flat = data.reshape(-1)
        starts = np.concatenate([[True], flat[1:] != flat[:-1]]) if flat.size else np.zeros(0, bool)
        values = flat[starts]
    else:
        d = normalize_dim(dim, data.ndim, "unique_consecutive")
        moved = np.moveaxis(data, d, 0)
        change = np.any((moved[1:] != moved[:-1]).reshape(moved.shape[0] - 1, -1), axis=1) if moved.shape[0] else []
        starts = np.concatenate([[True], change]) if moved.shape[0] else np.zeros(0, bool)
        values = np.moveaxis(moved[starts], 0, d)
    out = [Tensor._make(values)]
    if return_inverse:
        inverse = np.cumsum(starts) - 1
        out.append(Tensor._make(inverse.reshape(data.shape if dim is None else -1).astype(np.int64)))
    if return_counts:
        edges = np.concatenate([np.flatnonzero(starts), [len(starts)]])
        out.append(Tensor._make(np.diff(edges).astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def argwhere(input):
    return Tensor._make(np.argwhere(_array(input)).astype(np.int64))


def _read_at(x, dim, positions, keepdim):
    """x's values at `positions` (indices along dim, with keepdim's shape), differentiable through gather."""
    values = x.gather(dim, Tensor._make(positions))
    return values if keepdim else values.squeeze(dim)


def _lower_median_positions(data, dim, ignore_nan):
    """The index along dim of the lower median (NaN first unless ignored, as PyTorch)."""
    order = np.argsort(data, axis=dim, kind="stable")  # NaN sorts last
    n = data.shape[dim]
    if ignore_nan:
        counts = np.sum(~np.isnan(data), axis=dim, keepdims=True) if data.dtype.kind == "f" else n
        k = np.maximum((counts - 1) // 2, 0)
        return np.take_along_axis(order, np.broadcast_to(k, order.shape[:dim] + (1,) + order.shape[dim + 1:])
                                  .astype(np.int64), dim)
    k = (n - 1) // 2
    picked = np.take(order, [k], axis=dim)
    if data.dtype.kind == "f":
        nan_at = np.argmax(np.isnan(data), axis=dim)
        has_nan = np.any(np.isnan(data), axis=dim)
        picked = np.where(np.expand_dims(has_nan, dim), np.expand_dims(nan_at, dim), picked)
    return picked


def median(input, dim=None, keepdim=False):
    return _median(input, dim, keepdim, ignore_nan=False, op="median")


def nanmedian(input, dim=None, keepdim=False):
    return _median(input, dim, keepdim, ignore_nan=True, op="nanmedian")


def _median(input, dim, keepdim, ignore_nan, op):
    if dim is None:
        flat = input.reshape(-1)
        if flat.numel() == 0:
            return flat.sum() + np.nan  # NaN, as PyTorch (a graph that gives the empty input its empty gradient)
        positions = _lower_median_positions(flat._array, 0, ignore_nan)
        return _read_at(flat, 0, positions, False).reshape(())
    d = normalize_dim(dim, input.ndim, op)
    if input.ndim == 0:
        return _values_indices[op](input.clone(), Tensor._make(np.array(0)))
    _nonempty(input, d, op)
    positions = _lower_median_positions(input._array, d, ignore_nan)
    indices = positions if keepdim else positions.squeeze(d)
    return _values_indices[op](_read_at(input, d, positions, keepdim), Tensor._make(indices.astype(np.int64)))


def _nonempty(input, dim, op):
    if input.shape[dim] == 0:
        raise IndexError(f"{op}: expected a non-empty input along the reduced dim, got shape {tuple(input.shape)}")


def kthvalue(input, k, dim=-1, keepdim=False):
    # the k-th smallest value along dim (k counts from 1) and its index
    d = normalize_dim(dim, input.ndim, "kthvalue")
    n = input.shape[d] if input.ndim else 1
    if not 1 <= k <= n:
        raise IndexError(f"kthvalue: k ({k}) is out of range for a dim of size {n}")
    if input.ndim == 0:
        return _values_indices["kthvalue"](input.clone(), Tensor._make(np.array(0)))
    order = np.argsort(input._array, axis=d, kind="stable")
    positions = np.take(order, [k - 1], axis=d)
    indices = positions if keepdim else positions.squeeze(d)
    return _values_indices["kthvalue"](_read_at(input, d, positions, keepdim), Tensor._make(indices.astype(np.int64)))


def mode(input, dim=-1, keepdim=False):
    # the most frequent value along dim (the smallest among equally frequent ones) and its last index
    d = normalize_dim(dim, input.ndim, "mode")
    if input.ndim == 0:
        return _values_indices["mode"](input.clone(), Tensor._make(np.array(0)))
    data = np.moveaxis(input._array, d, -1)
    rows = data.reshape(-1, data.shape[-1])
    picked = np.empty(rows.shape[0], dtype=np.int64)
    for r, row in enumerate(rows):
        values, counts = np.unique(row, return_counts=True)
        best = values[np.argmax(counts)]
        picked[r] = np.flatnonzero(row == best)[-1]
    positions = np.expand_dims(picked.reshape(data.shape[:-1]), d)
    indices = positions if keepdim else positions.squeeze(d)
    return _values_indices["mode"](_read_at(input, d, positions, keepdim), Tensor._make(indices))


def msort(input):
    return input.sort(0).values


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile(input, q, dim, keepdim, interpolation, ignore_nan=False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile(input, q, dim, keepdim, interpolation, ignore_nan=True)


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    # the sorted values read at q (n - 1), interpolated between the two neighbours: a weighted sum of two
    # gathered values, so the gradient goes to them (linear) or to one (lower, higher, nearest)
    op = "nanquantile" if ignore_nan else "quantile"
    if input.dtype.kind != "f":
        raise TypeError(f"{op}: expects a floating point tensor, got {input.dtype}")
    scalar_q = not isinstance(q, Tensor)
    qs = np.atleast_1d(np.asarray(_array(q), dtype=np.float64))
    if qs.ndim > 1 or np.any((qs < 0) | (qs > 1)):
        raise ValueError(f"{op}: q must be a scalar or 1-D tensor with values in [0, 1], got {qs.tolist()}")
    if interpolation not in ("linear", "lower", "higher", "nearest", "midpoint"):
        raise ValueError(f"{op}: interpolation must be one of linear, lower, higher, midpoint, nearest")
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else normalize_dim(dim, input.ndim, op)
    if input.numel() == 0:
        raise RuntimeError(f"{op}: input tensor must be non-empty (shape {tuple(input.shape)})")
    sorted_x = x.sort(d).values  # NaN last
    data = sorted_x._array
    n = data.shape[d]
    if ignore_nan:
        valid = np.sum(~np.isnan(data), axis=d, keepdims=True)
    else:
        valid = np.full(data.shape[:d] + (1,) + data.shape[d + 1:], n)
    outs = []
    for qk in qs:
        rank = qk * np.maximum(valid - 1, 0)
        low = np.floor(rank).astype(np.int64)
        high = np.minimum(low + 1, np.maximum(valid - 1, 0))
        frac = rank - low
        if interpolation == "lower":
            high, frac = low, np.zeros_like(frac)
        elif interpolation == "higher":
            low, frac = np.ceil(rank).astype(np.int64), np.zeros_like(frac)
        elif interpolation == "nearest":
            low, frac = np.round(rank).astype(np.int64), np.zeros_like(frac)  # half to even, as PyTorch
        elif interpolation == "midpoint":
            frac = np.where(frac > 0, 0.5, 0.0)
        a = sorted_x.gather(d, Tensor._make(low))
        b = sorted_x.gather(d, Tensor._make(high))
        value = a + (b - a) * Tensor._make(frac.astype(input.dtype)) if interpolation in ("linear", "midpoint") else a
        if not ignore_nan:
            # a NaN in the slice makes the result that NaN (sorted last), which then takes the gradient
            has_nan = np.any(np.isnan(data), axis=d, keepdims=True)
            if has_nan.any():
                last = sorted_x.gather(d, Tensor._make(np.full(has_nan.shape, n - 1, dtype=np.int64)))
                value = where(Tensor._make(has_nan), last, value)
        elif ignore_nan:
            value = value.masked_fill(Tensor._make(valid == 0), np.nan) if np.any(valid == 0) else value
        outs.append(value if keepdim or dim is None else value.squeeze(d))
    if dim is None and not keepdim:
        outs = [o.reshape(()) for o in outs]
    elif dim is None and keepdim:
        outs = [o.reshape((1,) * input.ndim) for o in outs]
    return outs[0] if scalar_q else stack(outs, 0)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    # the integral by the trapezoid rule: sum (y_i + y_{i+1}) / 2 * dx_i along dim
    d = normalize_dim(dim, y.ndim, "trapezoid")
    lead = (slice(None),) * d
    mids = (y[lead + (slice(1, None),)] + y[lead + (slice(None, -1),)]) / 2
    if x is None:
        return mids.sum(d) * (1.0 if dx is None else dx)
    steps = x[..., 1:] - x[..., :-1] if x.ndim == 1 else x[lead + (slice(1, None),)] - x[lead + (slice(None, -1),)]
    if x.ndim == 1:
        steps = steps.reshape(*steps.shape, *([1] * (y.ndim - d - 1)))
    return (mids * steps).sum(d)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    d = normalize_dim(dim, y.ndim, "cumulative_trapezoid")
    lead = (slice(None),) * d
    mids = (y[lead + (slice(1, None),)] + y[lead + (slice(None, -1),)]) / 2
    if x is None:
        return mids.cumsum(d) * (1.0 if dx is None else dx)
    steps = x[lead + (slice(1, None),)] - x[lead + (slice(None, -1),)] if x.ndim > 1 else (x[1:] - x[:-1]).reshape(
        -1, *([1] * (y.ndim - d - 1)))
    return (mids * steps).cumsum(d)


def vander(x, N=None, increasing=False):
    if x.ndim != 1:
        raise ShapeError(f"vander: expects a 1-D tensor, got shape {tuple(x.shape)}")
    n = x.shape[0] if N is None else N
    powers = np.arange(n) if increasing else np.arange(n)[::-1].copy()
    if x.dtype.kind != "f":
        x = x.to(_dtype.int64)
    return x.unsqueeze(1) ** Tensor._make(powers.astype(x.dtype))
