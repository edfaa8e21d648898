"""Pooling as the table samples it: F.max_pool, avg_pool, lp_pool and the adaptive pools in 1, 2 and 3 dims, over
kernel, stride, padding, dilation, ceil_mode, count_include_pad, divisor_override and return_indices.
Values are distinct (Shape, from convolution.py), so a maximum has one winner. The references are plain
loops over the output positions, each reading its window element by element.
"""
import itertools
import math

import numpy as np

from . import Op, S
from .convolution import Shape, window_entries


SAMPLES = {
    "max_pool1d": [
        ((Shape(2, 3, 9), 3), dict(stride=2, padding=1, dilation=2, ceil_mode=True)),
        ((Shape(3, 8), 2), {}),
        ((Shape(1, 2, 7), 3), dict(stride=2, return_indices=True, ceil_mode=True)),
    ],
    "max_pool2d": [
        ((Shape(2, 3, 7, 6), 2), {}),
        ((Shape(1, 2, 7, 8), (3, 2)), dict(stride=(2, 3), padding=(1, 1), dilation=(1, 2), return_indices=True)),
        ((Shape(2, 5, 5), 2), dict(stride=2, ceil_mode=True, return_indices=True)),
        ((Shape(1, 1, 6, 6), 3), dict(stride=2, padding=1, ceil_mode=True)),
    ],
    "max_pool3d": [
        ((Shape(1, 2, 4, 5, 3), 2), dict(stride=(1, 2, 1), padding=1, return_indices=True)),
    ],
    "avg_pool1d": [
        ((Shape(2, 3, 9), 3), dict(stride=2, padding=1, ceil_mode=True)),
        ((Shape(2, 3, 9), 3), dict(stride=2, padding=1, count_include_pad=False)),
        ((Shape(3, 7), 2), {}),
    ],
    "avg_pool2d": [
        ((Shape(2, 3, 6, 6), 2), {}),
        ((Shape(1, 2, 7, 8), (3, 2)), dict(stride=(2, 3), padding=(1, 1), ceil_mode=True, count_include_pad=False)),
        ((Shape(1, 2, 7, 8), 3), dict(stride=2, padding=1, ceil_mode=True)),
        ((Shape(2, 5, 5), 2), dict(divisor_override=3)),
    ],
    "avg_pool3d": [
        ((Shape(1, 2, 4, 5, 3), 2), dict(stride=(2, 2, 1), padding=1, count_include_pad=False)),
    ],
    "adaptive_avg_pool1d": [((Shape(2, 3, 10), 4), {}), ((Shape(3, 5), 7), {})],
    "adaptive_avg_pool2d": [((Shape(2, 3, 7, 6), (3, 4)), {}), ((Shape(2, 5, 5), 1), {}), ((Shape(1, 2, 6, 9), (None, 4)), {})],
    "adaptive_avg_pool3d": [((Shape(1, 2, 5, 4, 3), (2, 3, 2)), {})],
    "adaptive_max_pool1d": [((Shape(2, 3, 10), 4), dict(return_indices=True)), ((Shape(3, 5), 3), {})],
    "adaptive_max_pool2d": [((Shape(2, 3, 7, 6), (3, 4)), dict(return_indices=True)), ((Shape(2, 5, 5), 2), {})],
    "adaptive_max_pool3d": [((Shape(1, 2, 5, 4, 3), (2, 3, 2)), dict(return_indices=True))],
    # (positive inputs: x^p of a negative x is not real for a fractional p, and PyTorch gives nan there too)
    "lp_pool1d": [((Shape(2, 3, 9, offset=3.0), 3.0, 3), dict(stride=2, ceil_mode=True))],
    "lp_pool2d": [((Shape(2, 3, 6, 7, offset=3.0), 2.0, (2, 3)), dict(stride=2)), ((Shape(2, 5, 5, offset=3.0), 1.5, 2), {})],
}


def _tuple(v, d):
    return (v,) * d if isinstance(v, int) else tuple(v)


def _pooled(n, k, s, p, dl, ceil_mode):
    o = (math.ceil if ceil_mode else math.floor)((n + 2 * p - dl * (k - 1) - 1) / s) + 1
    return o - 1 if ceil_mode and (o - 1) * s >= n + p else o


def _batch(x, d):
    return (x[None], True) if x.ndim == d + 1 else (x, False)


def max_pool_reference(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    d = _spatial_dims
    x, unbatched = _batch(x, d)
    kernel = _tuple(kernel_size, d)
    stride = kernel if stride is None else _tuple(stride, d)
    padding, dilation = _tuple(padding, d), _tuple(dilation, d)
    size = x.shape[2:]
    out = [_pooled(n, k, s, p, dl, ceil_mode) for n, k, s, p, dl in zip(size, kernel, stride, padding, dilation)]
    y, where = np.zeros(x.shape[:2] + tuple(out)), np.zeros(x.shape[:2] + tuple(out), dtype=np.int64)
    for n, c, *pos in itertools.product(*[range(s) for s in x.shape[:2]], *[range(o) for o in out]):
        best, best_at = -np.inf, -1
        for k in itertools.product(*[range(s) for s in kernel]):
            at = [o * s - p + kk * dl for o, s, p, kk, dl in zip(pos, stride, padding, k, dilation)]
            if all(0 <= a < m for a, m in zip(at, size)) and x[(n, c, *at)] > best:  # the first largest wins
                best, best_at = x[(n, c, *at)], int(np.ravel_multi_index(at, size))
        y[(n, c, *pos)], where[(n, c, *pos)] = best, best_at
    y, where = (y[0], where[0]) if unbatched else (y, where)
    return (y, where) if return_indices else y


def avg_pool_reference(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                       divisor_override=None):
    d = _spatial_dims
    x, unbatched = _batch(x, d)
    kernel = _tuple(kernel_size, d)
    stride = kernel if stride is None else _tuple(stride, d)
    padding = _tuple(padding, d)
    size = x.shape[2:]
    out = [_pooled(n, k, s, p, 1, ceil_mode) for n, k, s, p in zip(size, kernel, stride, padding)]
    y = np.zeros(x.shape[:2] + tuple(out))
    for n, c, *pos in itertools.product(*[range(s) for s in x.shape[:2]], *[range(o) for o in out]):
        # PyTorch's rule: the window clipped to the padded input counts for count_include_pad, to the input otherwise
        start = [o * s - p for o, s, p in zip(pos, stride, padding)]
        end = [min(a + k, m + p) for a, k, m, p in zip(start, kernel, size, padding)]
        with_padding = int(np.prod([e - a for a, e in zip(start, end)]))
        start, end = [max(a, 0) for a in start], [min(e, m) for e, m in zip(end, size)]
        window = x[(n, c) + tuple(slice(a, e) for a, e in zip(start, end))]
        divisor = divisor_override or (with_padding if count_include_pad else window.size)
        y[(n, c, *pos)] = window.sum() / divisor
    return y[0] if unbatched else y


def _adaptive(x, output_size, reduce):
    d = _spatial_dims
    x, unbatched = _batch(x, d)
    out = _tuple(output_size, d)
    out = [n if o is None else o for n, o in zip(x.shape[2:], out)]
    y, where = np.zeros(x.shape[:2] + tuple(out)), np.zeros(x.shape[:2] + tuple(out), dtype=np.int64)
    for n, c, *pos in itertools.product(*[range(s) for s in x.shape[:2]], *[range(o) for o in out]):
        ranges = [range(math.floor(i * m / o), math.ceil((i + 1) * m / o)) for i, m, o in zip(pos, x.shape[2:], out)]
        y[(n, c, *pos)], where[(n, c, *pos)] = reduce(x[n, c], list(itertools.product(*ranges)))
    return (y[0], where[0]) if unbatched else (y, where)


def adaptive_avg_reference(x, output_size):
    return _adaptive(x, output_size, lambda plane, at: (np.mean([plane[a] for a in at]), 0))[0]


def adaptive_max_reference(x, output_size, return_indices=False):
    def largest(plane, at):
        best = max(at, key=lambda a: plane[a])  # max() keeps the first of equals
        return plane[best], int(np.ravel_multi_index(best, plane.shape))
    y, where = _adaptive(x, output_size, largest)
    return (y, where) if return_indices else y


def lp_pool_reference(x, norm_type, kernel_size, stride=None, ceil_mode=False):
    # (sum over the window of x^p)^(1/p): the window's elements are p-th powers summed, then the root
    d = _spatial_dims
    kernel = _tuple(kernel_size, d)
    return (avg_pool_reference(x ** norm_type, kernel, stride, 0, ceil_mode) * np.prod(kernel)) ** (1 / norm_type)


_spatial_dims = None


REFERENCES = {"lp_pool": lp_pool_reference, "max_pool": max_pool_reference, "avg_pool": avg_pool_reference,
              "adaptive_avg_pool": adaptive_avg_reference, "adaptive_max_pool": adaptive_max_reference}




def _reference(name):
    """The reference of `name` (max_pool2d -> max_pool) with its number of spatial dims set first."""
    def ref(*args, **kwargs):
        global _spatial_dims
        _spatial_dims = int(name[-2])
        return REFERENCES[name[:-2]](*args, **kwargs)
    return ref


ENTRIES = window_entries(SAMPLES, _reference)


def _with_indices(name):
    """F.*_with_indices: the pool with return_indices=True."""
    base = _reference(name.replace("_with_indices", ""))
    return lambda *a, **k: base(*a, **k, return_indices=True)


def _unpool_reference(d):
    """max_unpool: zeros with each value put back at its index (PyTorch's flat index within each plane)."""
    def ref(x, indices, kernel_size, stride=None, padding=0, output_size=None):
        k = (kernel_size,) * d if isinstance(kernel_size, int) else tuple(kernel_size)
        s = k if stride is None else ((stride,) * d if isinstance(stride, int) else tuple(stride))
        p = (padding,) * d if isinstance(padding, int) else tuple(padding)
        size = output_size[-d:] if output_size is not None else tuple(
            (n - 1) * ss - 2 * pp + kk for n, ss, pp, kk in zip(x.shape[-d:], s, p, k))
        out = np.zeros(x.shape[:-d] + tuple(size))
        planes, flat = out.reshape(-1, int(np.prod(size))), indices.reshape(-1, int(np.prod(x.shape[-d:])))
        for plane, idx, vals in zip(planes, flat, x.reshape(flat.shape)):
            plane[idx] = vals
        return out
    return ref


def _pooled_then_unpooled(d):
    """max_unpool's sample: the values and indices of a max pool of a distinct-valued input."""
    def gen(r):
        shape = (1, 2) + (6,) * d
        x = _values_array(r, shape)
        windows = x.reshape(1, 2, *sum(((n // 2, 2) for n in shape[2:]), ()))
        axes = tuple(range(3, 2 + 2 * d, 2))
        values = windows.max(axis=axes)
        index = np.zeros(values.shape, np.int64)
        for pos in itertools.product(*[range(n) for n in values.shape]):
            block = x[pos[:2] + tuple(slice(2 * i, 2 * i + 2) for i in pos[2:])]
            at = np.unravel_index(np.argmax(block), block.shape)
            index[pos] = np.ravel_multi_index(tuple(2 * i + a for i, a in zip(pos[2:], at)), shape[2:])
        return [S(r.value(values, "float64"), r.value(index, "int64"), 2),
                S(r.value(values, "float64"), r.value(index, "int64"), 2, 2, 0, shape)]
    return gen


def _values_array(r, shape):
    n = int(np.prod(shape))
    return r.rng.permutation(n).reshape(shape) / n * 4 - 2


def _distinct(r, *shape):
    return r.value(_values_array(r, shape), "float64")


ENTRIES += [
    Op("max_pool1d_with_indices", lambda r: [S(_distinct(r, 2, 3, 9), 3, 2, 1, 2, True), S(_distinct(r, 3, 8), 2)],
       names=["nn.functional.max_pool1d_with_indices"], ref=_with_indices("max_pool1d_with_indices")),
    Op("max_pool2d_with_indices", lambda r: [S(_distinct(r, 1, 2, 7, 8), (3, 2), (2, 3), 1)],
       names=["nn.functional.max_pool2d_with_indices"], ref=_with_indices("max_pool2d_with_indices")),
    Op("max_pool3d_with_indices", lambda r: [S(_distinct(r, 1, 2, 4, 5, 3), 2)],
       names=["nn.functional.max_pool3d_with_indices"], ref=_with_indices("max_pool3d_with_indices")),
    *[Op(f"adaptive_max_pool{d}d_with_indices", lambda r, d=d: [S(_distinct(r, 2, 3, *(7,) * d), 3)],
         names=[f"nn.functional.adaptive_max_pool{d}d_with_indices"],
         ref=_with_indices(f"adaptive_max_pool{d}d_with_indices")) for d in (1, 2, 3)],
    Op("lp_pool3d", lambda r: [S(r.value(_values_array(r, (1, 2, 4, 4, 4)) + 3, "float64"), 2.0, 2),
                               S(r.value(_values_array(r, (1, 2, 4, 5, 4)) + 3, "float64"), 1.5, (2, 3, 2), 2, ceil_mode=True)],
       names=["nn.functional.lp_pool3d"], ref=_reference("lp_pool3d")),
    *[Op(f"max_unpool{d}d", _pooled_then_unpooled(d), names=[f"nn.functional.max_unpool{d}d"], ref=_unpool_reference(d),
         gradgrad=False) for d in (1, 2, 3)],
    # the torch.* forms: ATen's positional order, and no return_indices (the *_with_indices forms return both)
    Op("max_pool1d", lambda r: [S(_distinct(r, 2, 3, 9), 3, 2, 1, 2, True), S(_distinct(r, 3, 8), 2)],
       names=["torch.max_pool1d"], ref=_reference("max_pool1d")),
    Op("max_pool2d", lambda r: [S(_distinct(r, 1, 2, 7, 8), (3, 2), (2, 3), 1, (1, 2))],
       names=["torch.max_pool2d"], ref=_reference("max_pool2d")),
    Op("max_pool3d", lambda r: [S(_distinct(r, 1, 2, 4, 5, 3), 2, (1, 2, 1), 1)],
       names=["torch.max_pool3d"], ref=_reference("max_pool3d")),
    Op("max_pool1d_with_indices", lambda r: [S(_distinct(r, 2, 3, 9), 3, 2, 1)],
       names=["torch.max_pool1d_with_indices"], ref=_with_indices("max_pool1d_with_indices")),
    Op("avg_pool1d", lambda r: [S(_distinct(r, 2, 3, 9), 3, 2, 1, True), S(_distinct(r, 2, 3, 9), 3, 2, 1, False, False)],
       names=["torch.avg_pool1d"], ref=_reference("avg_pool1d")),
    Op("adaptive_avg_pool1d", lambda r: [S(_distinct(r, 2, 3, 10), 4)], names=["torch.adaptive_avg_pool1d"],
       ref=_reference("adaptive_avg_pool1d")),
    # (torch.adaptive_max_pool1d returns the values and the indices)
    Op("adaptive_max_pool1d", lambda r: [S(_distinct(r, 2, 3, 10), 4)], names=["torch.adaptive_max_pool1d"],
       ref=_with_indices("adaptive_max_pool1d_with_indices")),
]
