"""torch.linalg, as minigrad.linalg: the decompositions and solvers (primitives, minigrad/ops/linalg.py) and
the functions composed from them and from the reductions, which need no backward of their own:

    slogdet(A)        (sign, log|det A|): the sign is a constant, log|det A| a primitive
    vector_norm       ||x||_ord over dims (ops/norm.py)
    matrix_norm       'fro': the 2-norm of the entries; 'nuc': the sum of the singular values;
                      2 / -2: the largest / smallest singular value; 1 / -1: the largest / smallest
                      column sum of |A|; inf / -inf: the largest / smallest row sum of |A|
    norm              vector_norm or matrix_norm, chosen by dim and ord as torch.linalg.norm chooses
    svdvals           the singular values, through svd
    pinv              V diag(1/s) U^T over the singular values above the cutoff (the rest give 0)
    matrix_power      repeated products (a negative power of the inverse)
"""
import math
from collections import namedtuple

import numpy as np

from ..errors import LinAlgError  # noqa: F401  (torch.linalg.LinAlgError)
from ..ops.linalg import check_matrix, check_square, cholesky, det, eigh, inv, logabsdet, qr, solve, svd  # noqa: F401
from ..ops.matmul import matmul  # noqa: F401  (torch.linalg.matmul is torch.matmul)
from ..ops.norm import norm as _p_norm
from ..ops.util import normalize_dim, refuse_out
from ..tensor import Tensor

_slogdet_result = namedtuple("linalg_slogdet", ["sign", "logabsdet"])


def slogdet(A, *, out=None):
    """(sign of det A, log |det A|); only the second carries a gradient (the sign is piecewise constant)."""
    refuse_out(out, "linalg.slogdet")
    check_square(A, "linalg.slogdet")
    sign = Tensor._make(np.linalg.slogdet(A._array)[0])
    return _slogdet_result(sign, logabsdet(A))


def logdet(A):
    """log det A: log |det A| + log(sign), so NaN for a negative determinant and -inf for 0, as torch.logdet."""
    sign, log_abs = slogdet(A)
    with np.errstate(divide="ignore", invalid="ignore"):
        return log_abs + Tensor._make(np.log(sign._array))


def eigvalsh(A, UPLO="L", *, out=None):
    refuse_out(out, "linalg.eigvalsh")
    return eigh(A, UPLO).eigenvalues


def svdvals(A, *, driver=None, out=None):
    refuse_out(out, "linalg.svdvals")
    return svd(A, full_matrices=False).S


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    refuse_out(out, "linalg.vector_norm")
    if isinstance(ord, str):
        raise ValueError(f"linalg.vector_norm: ord must be a number, got {ord!r} (matrix norms: linalg.matrix_norm)")
    return _p_norm(x, ord, dim, keepdim, dtype)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    refuse_out(out, "linalg.matrix_norm")
    check_matrix(A, "linalg.matrix_norm")
    if dtype is not None:
        A = A.to(dtype)
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise ValueError(f"linalg.matrix_norm: dim must be a pair of dims, got {dim!r}")
    rows, cols = (normalize_dim(d, A.ndim, "linalg.matrix_norm") for d in dim)
    if rows == cols:
        raise ValueError(f"linalg.matrix_norm: dim names one dim twice: {tuple(dim)}")
    if ord == "fro":
        return _p_norm(A, 2, (rows, cols), keepdim)
    if ord in ("nuc", 2, -2):
        # the singular values of the matrices held in (rows, cols), moved to the last two dims
        s = svdvals(A.movedim((rows, cols), (-2, -1)))
        out = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
    elif ord in (1, -1, math.inf, -math.inf):
        # 1: the largest column sum of |A| (summed over rows); inf: the largest row sum
        summed, other = (rows, cols) if ord in (1, -1) else (cols, rows)
        sums = A.abs().sum(summed, keepdim=True)
        out = (sums.amax if ord > 0 else sums.amin)(other, keepdim=True).squeeze((rows, cols))
    else:
        raise ValueError(f"linalg.matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {ord!r}")
    for d in sorted((rows, cols)) if keepdim else ():
        out = out.unsqueeze(d)
    return out


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """torch.linalg.norm: a vector norm over one dim (or all, flattened, when ord and dim are both None),
    a matrix norm over two dims; with ord given and no dim, A must be 1-D (vector) or 2-D (matrix)."""
    refuse_out(out, "linalg.norm")
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 1:
        return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    if dim is not None and len(dim) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    if dim is not None:
        raise ValueError(f"linalg.norm: dim must be one dim or a pair of dims, got {dim!r}")
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.ndim == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    if A.ndim == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    raise ValueError(f"linalg.norm: with ord={ord!r} and no dim, the input must be 1-D or 2-D, got shape {A.shape}")


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """The pseudo-inverse: V diag(1/s) U^T, where singular values at or below max(atol, rtol * s_max) count
    as 0 (rtol defaults to eps * max(m, n) when neither tolerance is given, as PyTorch)."""
    refuse_out(out, "linalg.pinv")
    check_matrix(A, "linalg.pinv")
    if rtol is None:
        rtol = np.finfo(A._array.dtype).eps * max(A.shape[-2:]) if atol is None else 0.0
    atol = 0.0 if atol is None else atol
    if hermitian:  # A = V diag(w) V^T: the pseudo-inverse inverts the eigenvalues kept
        w, v = eigh(A)
        size = w.abs()
        u, vh = v, v.mT
    else:
        u, size, vh = svd(A, full_matrices=False)
        w = size
    cutoff = np.maximum(_array(atol), _array(rtol) * size._array.max(-1, initial=0)[..., None])
    keep = size._array > cutoff
    # 1/w where kept, 0 elsewhere; the stand-in 1 keeps 1/0 out of the gradient of the unused branch
    w_inv = (1 / w.masked_fill(Tensor._make(~keep), 1.0)).masked_fill(Tensor._make(~keep), 0.0)
    return (vh.mT * w_inv.unsqueeze(-2)) @ u.mT  # V diag(1/w) U^T


def _array(value):
    return value._array[..., None] if isinstance(value, Tensor) else np.asarray(value)


def matrix_power(A, n, *, out=None):
    """A^n for an integer n: repeated products; n = 0 gives the identity, n < 0 powers of A^-1."""
    refuse_out(out, "linalg.matrix_power")
    check_square(A, "linalg.matrix_power")
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"linalg.matrix_power: n must be an integer, got {n!r}")
    base = inv(A) if n < 0 else A
    result = None
    square, k = base, abs(n)
    while k:  # binary powering: A^13 = A^8 A^4 A
        if k & 1:
            result = square if result is None else result @ square
        k >>= 1
        if k:
            square = square @ square
    if result is None:
        eye = np.broadcast_to(np.eye(A.shape[-1], dtype=A._array.dtype), A.shape)
        return Tensor._make(eye.copy())
    return result


# ---- PyTorch's older names at torch level (torch.det, torch.svd, ...) -----------------------------
_svd_result = namedtuple("svd", ["U", "S", "V"])
_qr_result = namedtuple("qr", ["Q", "R"])


def torch_svd(A, some=True, compute_uv=True, *, out=None):
    """torch.svd: (U, S, V), V not transposed; some=False gives the full U and V."""
    refuse_out(out, "svd")
    u, s, vh = svd(A, full_matrices=not some)
    if not compute_uv:  # zeros in place of U and V, as PyTorch
        return _svd_result(Tensor._make(np.zeros(u.shape, u._array.dtype)), s,
                           Tensor._make(np.zeros(vh.shape, vh._array.dtype)))
    return _svd_result(u, s, vh.mT)


def torch_qr(A, some=True, *, out=None):
    refuse_out(out, "qr")
    return _qr_result(*qr(A, "reduced" if some else "complete"))


def torch_cholesky(A, upper=False, *, out=None):
    return cholesky(A, upper=upper, out=out)


def pinverse(A, rcond=1e-15):
    return pinv(A, rtol=rcond)
