"""Diagonals, traces and products of vectors, composed from indexing, where, sums and matmul."""
import numpy as np

from ..errors import ShapeError
from ..ops import where
from ..ops.util import normalize_dim
from ..tensor import Tensor


def diagonal(x, offset=0, dim1=0, dim2=1):
    # y_i = x[..., i, i + offset] over the dims dim1, dim2, which go, as one dim, to the end
    if x.ndim < 2:
        raise ShapeError(f"diagonal: needs at least 2 dims, got shape {tuple(x.shape)}")
    d1, d2 = normalize_dim(dim1, x.ndim, "diagonal"), normalize_dim(dim2, x.ndim, "diagonal")
    if d1 == d2:
        raise ValueError(f"diagonal: dim1 and dim2 cannot be the same dim ({dim1}, {dim2})")
    moved = x.movedim((d1, d2), (-2, -1))
    rows, cols = moved.shape[-2:]
    start_row, start_col = max(-offset, 0), max(offset, 0)
    length = max(min(rows - start_row, cols - start_col), 0)
    i = np.arange(length)
    return moved[..., start_row + i, start_col + i]


def diag_embed(x, offset=0, dim1=-2, dim2=-1):
    # a batch of matrices with x's last dim on their diagonal (shifted by offset), zeros elsewhere
    n = x.shape[-1] + abs(offset)
    out_ndim = x.ndim + 1
    d1, d2 = normalize_dim(dim1, out_ndim, "diag_embed"), normalize_dim(dim2, out_ndim, "diag_embed")
    if d1 == d2:
        raise ValueError(f"diag_embed: dim1 and dim2 cannot be the same dim ({dim1}, {dim2})")
    on_diagonal = np.eye(n, n, offset, dtype=bool)
    # column j of row i holds x[..., min(i, j)] on the diagonal: padded so that the index stays in range
    source = np.minimum(np.arange(n)[:, None], np.arange(n)[None, :])
    source = np.clip(source, 0, max(x.shape[-1] - 1, 0))
    if x.shape[-1] == 0:
        matrices = x.reshape(*x.shape[:-1], 0, 0).expand(*x.shape[:-1], n, n) if n == 0 else None
        if matrices is None:
            matrices = Tensor._make(np.zeros(x.shape[:-1] + (n, n), dtype=x.dtype))
    else:
        # a zero of x's own dtype: a Python 0.0 would promote an integer matrix to float
        matrices = where(on_diagonal, x[..., source], Tensor._make(np.zeros((), x.dtype)))
    return matrices.movedim((-2, -1), (d1, d2)) if (d1, d2) != (out_ndim - 2, out_ndim - 1) else matrices


def diag(x, diagonal_=0):
    # a vector: the matrix with it on the diagonal; a matrix: its diagonal
    if x.ndim == 1:
        return diag_embed(x, diagonal_)
    if x.ndim == 2:
        return diagonal(x, diagonal_)
    raise ShapeError(f"diag: expects a 1-D or 2-D tensor, got shape {tuple(x.shape)}")


def diagflat(x, offset=0):
    return diag_embed(x.reshape(-1), offset)


def trace(x):
    # the sum of the diagonal of a matrix
    if x.ndim != 2:
        raise ShapeError(f"trace: expects a matrix (2-D), got shape {tuple(x.shape)}")
    return diagonal(x).sum()


def _vectors(a, b, op):
    if a.ndim != 1 or b.ndim != 1:
        raise ShapeError(f"{op}: expects two 1-D tensors, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    if a.shape != b.shape:
        raise ShapeError(f"{op}: inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] "
                         "to have the same number of elements")
    if a.dtype != b.dtype:
        raise TypeError(f"{op}: expected both vectors to have same dtype, but found {a.dtype} and {b.dtype}")


def dot(a, b):
    # sum_i a_i b_i of two 1-D tensors of the same dtype (as PyTorch, no promotion)
    _vectors(a, b, "dot")
    return a @ b


def vdot(a, b):
    # the conjugate of a dotted with b: dot, for real tensors
    _vectors(a, b, "vdot")
    return a @ b


def inner(a, b):
    # the sum over the last dims: y[i..., j...] = sum_k a[i..., k] b[j..., k]
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.shape[-1] != b.shape[-1]:
        raise ShapeError(f"inner: the last dims must match, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    k = a.shape[-1]
    return (a.reshape(-1, k) @ b.reshape(-1, k).transpose(0, 1)).reshape(*a.shape[:-1], *b.shape[:-1])


def unfold(x, dimension, size, step):
    # Tensor.unfold: the windows x[i*step : i*step + size] along `dimension`, as a new last dim
    d = normalize_dim(dimension, x.ndim, "unfold")
    length = x.shape[d] if x.ndim else 1
    if size > length or size < 0:
        raise ShapeError(f"unfold: maximum size for tensor at dimension {d} is {length} but size is {size}")
    if step <= 0:
        raise ValueError(f"unfold: step is {step} but must be > 0")
    if x.ndim == 0:
        return x.reshape(1)
    windows = (np.arange((length - size) // step + 1)[:, None] * step + np.arange(size)[None, :])
    out = x.movedim(d, -1)[..., windows]  # (..., windows, size)
    return out.movedim(-2, d)


def tensordot(a, b, dims=2):
    # the sum over a's last `dims` dims against b's first (or over the listed pairs of dims)
    if isinstance(dims, int):
        dims_a, dims_b = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
    dims_a = [d % a.ndim for d in dims_a]
    dims_b = [d % b.ndim for d in dims_b]
    free_a = [d for d in range(a.ndim) if d not in dims_a]
    free_b = [d for d in range(b.ndim) if d not in dims_b]
    k = int(np.prod([a.shape[d] for d in dims_a])) if dims_a else 1
    left = a.permute(*free_a, *dims_a).reshape(-1, k)
    right = b.permute(*dims_b, *free_b).reshape(k, -1)
    return (left @ right).reshape(*[a.shape[d] for d in free_a], *[b.shape[d] for d in free_b])
