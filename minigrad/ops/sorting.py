"""Ordering along a dim: sort, argsort, topk.

Each finds the order as integer indices (no gradient), then reads the values with gather, whose
backward sends each value's gradient to the position it came from. Ties keep their original order
(a stable sort, for descending too), which is what PyTorch's stable=True promises and what its CPU
sort gives anyway; topk returns the first k of that order. NaN sorts as the largest value.
"""
from collections import namedtuple

import numpy as np

from ..function import named_node
from .gather import Gather, _positions
from .util import normalize_dim, refuse_out
from ..tensor import Tensor

_sort_result = namedtuple("sort", ["values", "indices"])
_topk_result = namedtuple("topk", ["values", "indices"])


def _stable_order(array, dim, descending):
    """Indices that sort `array` along dim, ties in their original order."""
    if not descending:
        return np.argsort(array, axis=dim, kind="stable")
    # Sorting the reversed array ascending and reversing the result puts the largest first, and
    # among equal values the one that came first in the original comes first.
    n = array.shape[dim]
    reversed_order = np.argsort(np.flip(array, axis=dim), axis=dim, kind="stable")
    return (n - 1) - np.flip(reversed_order, axis=dim)


def _values(input, indices, dim, node_name):
    if input.ndim == 0:
        return input
    return named_node(Gather.apply(input, _positions(input.shape, dim, indices, "sort")), node_name)


def argsort(input, dim=-1, descending=False, stable=False):
    """The int64 indices that sort input along dim (stable=False is accepted; minigrad is always stable)."""
    d = normalize_dim(dim, input.ndim, "argsort")
    if input.ndim == 0:
        return Tensor._make(np.zeros((), dtype=np.int64))
    return Tensor._make(_stable_order(input._array, d, descending).astype(np.int64, copy=False))


def sort(input, dim=-1, descending=False, stable=False, *, out=None):
    """(values, indices): input sorted along dim; the gradient of each value goes where it came from."""
    refuse_out(out, "sort")
    d = normalize_dim(dim, input.ndim, "sort")
    indices = argsort(input, d, descending)
    return _sort_result(_values(input, indices._array, d, "SortBackward0"), indices)


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    """(values, indices) of the k largest (or smallest) along dim, in order; ties: the earlier one first."""
    refuse_out(out, "topk")
    d = normalize_dim(dim, input.ndim, "topk")
    size = input.shape[d] if input.ndim else 1
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not 0 <= k <= size:
        raise ValueError(f"topk: k={k!r} is out of range for dim {d} of size {size} (shape {tuple(input.shape)})")
    if input.ndim == 0:
        return _topk_result(input, Tensor._make(np.zeros((), dtype=np.int64)))
    order = _stable_order(input._array, d, descending=largest)
    indices = np.take(order, np.arange(int(k)), axis=d).astype(np.int64, copy=False)
    return _topk_result(_values(input, indices, d, "TopkBackward0"), Tensor._make(indices))
