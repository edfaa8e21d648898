"""Fast reductions along one dim, shared by the fused kernels (softmax, log_softmax, cross-entropy,
layer norm). They compute what `x.sum(axis=dim, keepdims=True)` and `x.max(...)` compute.

Why not plain NumPy reductions: along a short last axis (24 keys, 64 classes) `np.sum` and `np.max`
pay a per-row overhead and were 3-10x slower than `np.einsum`'s summation, which dominated the time of
softmax and layer norm in a training step.
"""
import numpy as np


def sum_along(x, dim):
    """x.sum(axis=dim, keepdims=True)."""
    if dim == x.ndim - 1:
        return np.einsum("...i->...", x)[..., None]
    return x.sum(axis=dim, keepdims=True)


def dot_along(a, b, dim):
    """(a * b).sum(axis=dim, keepdims=True), without the product as a temporary."""
    if dim == a.ndim - 1 and a.shape == b.shape:
        return np.einsum("...i,...i->...", a, b)[..., None]
    return (a * b).sum(axis=dim, keepdims=True)


def shifted_exp(x, dim):
    """(x - c, exp(x - c), sum of exp(x - c) along dim) with c constant along dim.

    softmax(x) = softmax(x - c) for any c constant along dim. c = the row's maximum keeps exp from
    overflowing; c = the maximum of the whole tensor does so too, and is a far cheaper reduction. It
    fails only for a row so far below the global maximum that its exponentials underflow (its sum
    is then tiny, 0, or NaN for an all -inf row); then every row is redone with its own maximum.
    """
    if x.size == 0:
        shifted = x.copy()
        return shifted, np.exp(shifted), sum_along(np.exp(shifted), dim)
    shifted = x - x.max()
    exps = np.exp(shifted)
    total = sum_along(exps, dim)
    if not (total >= np.sqrt(np.finfo(x.dtype).tiny)).all():
        shifted = x - x.max(axis=dim, keepdims=True)
        exps = np.exp(shifted)
        total = sum_along(exps, dim)
    return shifted, exps, total
