"""Similarities and distances between vectors, composed from products, sums, powers and roots."""
import numpy as np

from ..errors import ShapeError
from ..ops import where


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    # x1 . x2 / (max(|x1|, eps) max(|x2|, eps)) along dim (PyTorch's form: each norm clamped by itself)
    dot = (x1 * x2).sum(dim)
    n1 = (x1 * x1).sum(dim).sqrt().clamp(min=eps)
    n2 = (x2 * x2).sum(dim).sqrt().clamp(min=eps)
    return dot / (n1 * n2)


def _p_norm(d, p, dim, keepdim):
    # ||d||_p along dim: (sum |d|^p)^(1/p); p = inf: max |d|; p = 0: the count of nonzero entries
    if p == float("inf"):
        return d.abs().amax(dim, keepdim=keepdim)
    if p == 0:
        return (d != 0).to(d.dtype).sum(dim, keepdim=keepdim)
    if p == 2:
        # a stand-in 1 under the root where the sum is 0 keeps 1/0 out of the gradient (which is 0 there)
        s = (d * d).sum(dim, keepdim=keepdim)
        zero = s == 0
        return where(zero, 0.0, where(zero, 1.0, s).sqrt())
    if p == 1:
        return d.abs().sum(dim, keepdim=keepdim)
    s = (d.abs() ** p).sum(dim, keepdim=keepdim)
    zero = s == 0
    return where(zero, 0.0, where(zero, 1.0, s) ** (1.0 / p))


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    # ||x1 - x2 + eps||_p along the last dim
    if x1.ndim == 0 or x2.ndim == 0:
        raise ShapeError(f"pairwise_distance: expects tensors with at least 1 dim, got shapes {tuple(x1.shape)} and {tuple(x2.shape)}")
    return _p_norm(x1 - x2 + eps, p, -1, keepdim)


def cdist(x1, x2, p=2.0):
    # d[..., i, j] = ||x1[..., i, :] - x2[..., j, :]||_p
    if x1.ndim < 2 or x2.ndim < 2 or x1.shape[-1] != x2.shape[-1]:
        raise ShapeError(f"cdist: expects (..., P, M) and (..., R, M), got shapes {tuple(x1.shape)} and {tuple(x2.shape)}")
    return _p_norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, -1, False)


def pdist(x, p=2.0):
    # the distances between the rows of x, i < j, in row-major order of the upper triangle
    if x.ndim != 2:
        raise ShapeError(f"pdist: expects a 2-D tensor, got shape {tuple(x.shape)}")
    i, j = np.triu_indices(x.shape[0], 1)
    return _p_norm(x[i] - x[j], p, -1, False)


def dist(x1, x2, p=2.0):
    # ||x1 - x2||_p over all elements
    return _p_norm((x1 - x2).reshape(-1), p, 0, False)


def _other_dims(x, dim):
    return tuple(k for k in range(x.ndim) if k != dim % max(x.ndim, 1))


def renorm(x, p, dim, maxnorm):
    # each slice along dim whose p-norm exceeds maxnorm scaled down to norm maxnorm (PyTorch adds 1e-7)
    dims = _other_dims(x, dim)
    big = _p_norm(x.detach(), p, dims, True) > maxnorm  # the slices to scale (a NaN norm is not: scale 1)
    norms = _p_norm(where(big, x, 0.0), p, dims, True)  # the others' norms never enter the gradient
    scale = where(big, maxnorm / (where(big, norms, 1.0) + 1e-7), 1.0)
    return x * scale


def norm_except_dim(v, pow=2, dim=0):  # noqa: A002  (PyTorch's name)
    # the p-norm over every dim but dim, kept as size-1 dims (weight normalisation's g / ||v||); dim=-1: all
    if dim == -1:
        return _p_norm(v.reshape(-1), pow, 0, False)
    return _p_norm(v, pow, _other_dims(v, dim), True)


def frobenius_norm(x, dim=(), keepdim=False):
    dims = tuple(range(x.ndim)) if dim in ((), None) else ((dim,) if isinstance(dim, int) else tuple(dim))
    return _p_norm(x, 2, dims, keepdim)
