"""Fast reductions along one dim, shared by the fused kernels (softmax, log_softmax, cross-entropy,
layer norm). They compute what `x.sum(axis=dim, keepdims=True)` and `x.max(...)` compute.

Why not plain NumPy reductions: along a short last axis (24 keys, 64 classes) `np.sum` and `np.max`
pay a per-row overhead and were 3-10x slower than `np.einsum`'s summation, which dominated the time of
softmax and layer norm in a training step. The sums are the kernels' summation
(minigrad/kernels/summation.py), which takes einsum's loop for short contiguous rows and stays accurate
along any dim and for long rows.
"""
import numpy as np

from . import summation


def sum_along(x, dim):
    """x.sum(axis=dim, keepdims=True)."""
    return summation.sum(x, dim, keepdims=True)


def dot_along(a, b, dim):
    """(a * b).sum(axis=dim, keepdims=True), without the product as a temporary."""
    if dim == a.ndim - 1 and a.shape == b.shape:
        return np.einsum("...i,...i->...", a, b)[..., None]
    return np.expand_dims(summation.sum_of_products(a, b, dim), dim)


def row_max(x2):
    """x2.max(axis=1, keepdims=True) for a 2-D array, exactly (a maximum has no rounding).

    Along short rows NumPy's max pays a per-row overhead (5x slower for rows of 24); an elementwise
    np.maximum over the columns, one column at a time, does not.
    """
    if not 2 <= x2.shape[1] <= 64:
        return x2.max(axis=1, keepdims=True)
    m = x2[:, :1].copy()
    for j in range(1, x2.shape[1]):
        np.maximum(m, x2[:, j:j + 1], out=m)
    return m


# The smallest sum of exponentials trusted after the global shift (see shifted_exp), per dtype.
_SMALLEST_TOTAL = {np.dtype(t): float(np.sqrt(np.finfo(t).tiny)) for t in (np.float16, np.float32, np.float64)}


def shifted_exp(x, dim, keep_shifted=True):
    """(x - c, exp(x - c), sum of exp(x - c) along dim) with c constant along dim.

    softmax(x) = softmax(x - c) for any c constant along dim. c = the row's maximum keeps exp from
    overflowing; c = the maximum of the whole tensor does so too, and is a far cheaper reduction. It
    fails only for a row so far below the global maximum that its exponentials underflow (its sum
    is then tiny, 0, or NaN for an all -inf row); then every row is redone with its own maximum.
    With keep_shifted=False the exponentials overwrite x - c in its buffer (one array fewer, one
    pass fewer) and None stands in for x - c.
    """
    if x.size == 0:
        shifted = x.copy()
        return shifted, np.exp(shifted), sum_along(np.exp(shifted), dim)
    shifted = np.subtract(x, x.max(), out=np.empty_like(x))  # an array even for 0-d x, so exp can overwrite it
    exps = np.exp(shifted, out=None if keep_shifted else shifted)
    total = sum_along(exps, dim)
    if not total.min() >= _SMALLEST_TOTAL.get(x.dtype, 0.0):  # also catches NaN
        shifted = x - x.max(axis=dim, keepdims=True)
        exps = np.exp(shifted, out=None if keep_shifted else shifted)
        total = sum_along(exps, dim)
    return (shifted if keep_shifted else None), exps, total


def arg_extreme(x, dim, smallest=False):
    """np.argmax (argmin) of x along dim, keepdims: the first place of the largest (smallest) value.

    Along a short dim that is not the last (a max pool's window of 4 in (N, C, K, L)), NumPy's argmax is
    about 20x its max (1.47 ms against 0.08 ms for a LeNet pool). There the index comes from the max
    itself: the extreme found first, then each place compared with it from the last to the first, so
    that the first of tied places wins as with argmax. NaN (which argmax picks first) goes to NumPy.
    """
    size = x.shape[dim]
    if dim in (-1, x.ndim - 1) or size > 16 or x.size < 4096 or x.dtype.kind not in "fiu":
        return (np.argmin if smallest else np.argmax)(x, axis=dim, keepdims=True)
    extreme = (x.min if smallest else x.max)(axis=dim, keepdims=True)
    if x.dtype.kind == "f" and np.isnan(extreme).any():
        return (np.argmin if smallest else np.argmax)(x, axis=dim, keepdims=True)
    index = np.full(extreme.shape, size - 1, dtype=np.intp)
    before = (slice(None),) * (dim % x.ndim)
    equal = np.empty(extreme.shape, dtype=bool)
    for k in range(size - 2, -1, -1):
        np.equal(x[before + (slice(k, k + 1),)], extreme, out=equal)  # a view of place k, no copy
        np.copyto(index, k, where=equal)
    return index
