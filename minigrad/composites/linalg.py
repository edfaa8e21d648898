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
    and vecdot, cross, diagonal, multi_dot, matrix_rank, cond, solve_triangular, tensorinv, tensorsolve,
    vander, lstsq, matrix_exp, householder_product, inv_ex, cholesky_ex, solve_ex, and LU with partial
    pivoting as Gaussian elimination step by step: lu, lu_factor, lu_factor_ex, lu_solve (below)
    ldl_factor, ldl_factor_ex, ldl_solve: Bunch-Kaufman LDL^T in LAPACK's form, values only (composites/ldl.py)

Not here: eig, eigvals (complex results: complex numbers are out of minigrad's scope).
"""
import math
from collections import namedtuple

import numpy as np

from ..errors import LinAlgError  # noqa: F401  (torch.linalg.LinAlgError)
from ..ops.linalg import check_matrix, check_square, cholesky, det, eigh, inv, logabsdet, qr, solve, svd  # noqa: F401
from ..ops.join import cat, stack
from ..ops.matmul import matmul  # noqa: F401  (torch.linalg.matmul is torch.matmul)
from ..ops.norm import norm as _p_norm
from ..ops.util import normalize_dim, refuse_out
from .ldl import ldl_factor, ldl_factor_ex, ldl_solve  # noqa: F401  (torch.linalg's)
from .. import random as _random
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
    raise ValueError(f"linalg.norm: with ord={ord!r} and no dim, the input must be 1-D or 2-D, got shape {tuple(A.shape)}")


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


# ---- more of torch.linalg, composed ---------------------------------------------------------------
def vecdot(x, y, *, dim=-1, out=None):
    """sum_i x_i y_i along dim (real tensors), broadcasting."""
    refuse_out(out, "linalg.vecdot")
    return (x * y).sum(dim)


def cross(input, other, *, dim=-1, out=None):
    """The cross product of 3-vectors along dim: (a2 b3 - a3 b2, a3 b1 - a1 b3, a1 b2 - a2 b1)."""
    refuse_out(out, "linalg.cross")
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise ValueError(f"linalg.cross: dim {dim} must have size 3 in both inputs, got shapes {tuple(input.shape)} and "
                         f"{tuple(other.shape)}")
    a = [input.narrow(dim, k, 1) for k in range(3)]
    b = [other.narrow(dim, k, 1) for k in range(3)]
    parts = [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    return cat(parts, dim)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonal A[..., i, i + offset] of the matrices in (dim1, dim2), as the last dim."""
    moved = A.movedim((dim1, dim2), (-2, -1))
    rows, cols = moved.shape[-2:]
    start_row, start_col = max(-offset, 0), max(offset, 0)
    length = max(min(rows - start_row, cols - start_col), 0)
    i = np.arange(length)
    return moved[..., Tensor._make(i + start_row), Tensor._make(i + start_col)]


def multi_dot(tensors, *, out=None):
    """The product of a chain of matrices (the first may be a row vector, the last a column vector)."""
    refuse_out(out, "linalg.multi_dot")
    if len(tensors) < 2:
        raise ValueError(f"linalg.multi_dot: expects at least 2 tensors, got {len(tensors)}")
    result = tensors[0]
    for t in tensors[1:]:
        result = result @ t
    return result


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """The number of singular values above max(atol, rtol * s_max) (an int64 tensor, no gradient)."""
    refuse_out(out, "linalg.matrix_rank")
    check_matrix(A, "linalg.matrix_rank")
    a = A._array
    s = np.abs(np.linalg.eigvalsh(a)) if hermitian else np.linalg.svd(a, compute_uv=False)
    if rtol is None:
        rtol = np.finfo(a.dtype).eps * max(a.shape[-2:]) if atol is None else 0.0
    cutoff = np.maximum(_array(0.0 if atol is None else atol), _array(rtol) * s.max(-1, initial=0)[..., None])
    return Tensor._make((s > cutoff).sum(-1).astype(np.int64))


def cond(A, p=None, *, out=None):
    """The condition number: s_max / s_min for p=None or 2 (s_min / s_max for -2), else
    ||A||_p ||A^-1||_p for 'fro', 'nuc', 1, -1, inf, -inf."""
    refuse_out(out, "linalg.cond")
    check_matrix(A, "linalg.cond")
    if p in (None, 2, -2):
        s = svdvals(A)
        largest, smallest = s.amax(-1), s.amin(-1)
        return largest / smallest if p != -2 else smallest / largest
    check_square(A, "linalg.cond")
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """X with A X = B (or X A = B), reading only A's upper or lower triangle (its diagonal taken as 1 when
    unitriangular): a solve with the other triangle zeroed, so the gradient reaches only the triangle read."""
    refuse_out(out, "linalg.solve_triangular")
    check_square(A, "linalg.solve_triangular")
    n = A.shape[-1]
    if unitriangular:
        part = A.triu(1) if upper else A.tril(-1)
        part = part + Tensor._make(np.eye(n, dtype=A._array.dtype))
    else:
        part = A.triu() if upper else A.tril()
    if B.ndim < 2:
        raise ValueError(f"linalg.solve_triangular: B must be a matrix (..., n, k), got shape {tuple(B.shape)}")
    return solve(part, B, left=left)


def tensorinv(A, ind=2, *, out=None):
    """The inverse of A seen as a matrix of its first `ind` dims by the rest; shape A.shape[ind:] + A.shape[:ind]."""
    refuse_out(out, "linalg.tensorinv")
    rows, cols = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != cols:
        raise ValueError(f"linalg.tensorinv: the product of the first {ind} dims must equal that of the rest, got "
                         f"shape {tuple(A.shape)}")
    return inv(A.reshape(rows, cols)).reshape(tuple(A.shape[ind:]) + tuple(A.shape[:ind]))


def tensorsolve(A, B, dims=None, *, out=None):
    """X with tensordot(A, X, X.ndim) = B, X of shape A.shape[B.ndim:] (`dims` of A moved to the end first)."""
    refuse_out(out, "linalg.tensorsolve")
    if dims is not None:
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
        A = A.movedim(dims, tuple(range(A.ndim - len(dims), A.ndim)))
    rest = tuple(A.shape[B.ndim:])
    if math.prod(rest) != B.numel() or tuple(A.shape[:B.ndim]) != tuple(B.shape):
        raise ValueError(f"linalg.tensorsolve: A of shape {tuple(A.shape)} and B of shape {tuple(B.shape)} do not fit")
    return solve(A.reshape(B.numel(), -1), B.reshape(-1)).reshape(rest)


def vander(x, *, N=None):
    """The Vandermonde matrix: powers x^0, x^1, ..., x^(N-1) along a new last dim."""
    N = x.shape[-1] if N is None else N
    if N < 0:
        raise ValueError(f"linalg.vander: N must be non-negative, got {N}")
    return stack([x ** k for k in range(N)], -1) if N else x.unsqueeze(-1)[..., :0]


_lstsq_result = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])


def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution X of A X = B, as the pseudo-inverse gives it (pinv(A) B: the minimum-norm
    solution). The other fields follow PyTorch's CPU drivers: 'gelsy' (the default) gives the rank only;
    'gelsd' and 'gelss' the rank and A's singular values; 'gels' neither. Every driver but 'gelsy' gives the
    residuals, the squared norm of each column of A X - B, for a tall A (m > n) of full rank n (over the
    whole batch; 'gels' assumes the rank), and empty residuals otherwise."""
    check_matrix(A, "linalg.lstsq")
    vector = B.ndim == A.ndim - 1
    b = B.unsqueeze(-1) if vector else B
    if b.shape[-2] != A.shape[-2]:
        raise ValueError(f"linalg.lstsq: A of shape {tuple(A.shape)} and B of shape {tuple(B.shape)} do not fit (A X = B needs "
                         f"B's rows to be A's {A.shape[-2]})")
    if driver not in (None, "gelsy", "gelsd", "gelss", "gels"):
        raise ValueError(f"linalg.lstsq: driver must be one of 'gels', 'gelsy', 'gelsd', 'gelss', got {driver!r}")
    driver = driver or "gelsy"
    solution = pinv(A, rtol=rcond) @ b
    empty = Tensor._make(np.zeros((0,), A._array.dtype))
    m, n = A.shape[-2], A.shape[-1]
    rank = Tensor._make(np.zeros((0,), np.int64)) if driver == "gels" else matrix_rank(A, rtol=rcond)
    residuals = empty
    if driver != "gelsy" and m > n and (driver == "gels" or bool(np.all(rank._array == n))):
        residuals = ((A @ solution - b) ** 2).sum(-2)
    singular_values = svdvals(A).detach() if driver in ("gelsd", "gelss") else empty
    return _lstsq_result(solution.squeeze(-1) if vector else solution, residuals, rank, singular_values)


def matrix_exp(A):
    """e^A = sum_k A^k / k!, by scaling and squaring: e^A = (e^(A / 2^s))^(2^s), with s such that
    ||A / 2^s|| <= 1/2, where 18 Taylor terms are exact to below float64's precision."""
    check_square(A, "linalg.matrix_exp")
    norm1 = np.abs(A._array).sum(-2).max(-1, initial=0) if A.numel() else np.zeros(())
    s = max(0, int(np.ceil(np.log2(max(float(np.max(norm1)), 1e-300)))) + 1)  # a constant: the same for the batch
    scaled = A * (0.5 ** s)
    eye = Tensor._make(np.broadcast_to(np.eye(A.shape[-1], dtype=A._array.dtype), A.shape).copy())
    term, total = eye, eye
    for k in range(1, 19):
        term = (term @ scaled) * (1.0 / k)
        total = total + term
    for _ in range(s):
        total = total @ total
    return total


def householder_product(A, tau, *, out=None):
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T, v_i = (0, ..., 0, 1, A[i+1:, i])
    (the Q of a QR factorisation stored in LAPACK's form)."""
    refuse_out(out, "linalg.householder_product")
    check_matrix(A, "linalg.householder_product")
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    if not (m >= n >= k):
        raise ValueError(f"linalg.householder_product: needs A (m, n) with m >= n >= k, got A {tuple(A.shape)}, tau {tuple(tau.shape)}")
    v = A.tril(-1) + Tensor._make(np.eye(m, n, dtype=A._array.dtype))  # columns v_i, unit diagonal
    q = Tensor._make(np.broadcast_to(np.eye(m, dtype=A._array.dtype), tuple(A.shape[:-2]) + (m, m)).copy())
    for i in range(k):
        vi = v[..., :, i:i + 1]  # (..., m, 1)
        q = q - (q @ vi) * tau[..., i:i + 1].unsqueeze(-1) @ vi.mT  # Q H_i = Q - tau_i (Q v_i) v_i^T
    return q[..., :, :n]


# the _ex forms: (result, info), info 0 where the matrix was fine; check_errors=True raises instead
def _info(A, failed):
    return Tensor._make(np.asarray(failed, dtype=np.int32).reshape(A.shape[:-2]))


def _first_zero_pivot(m):
    """LAPACK's info for an LU factorisation with partial pivoting: the 1-based step whose pivot is exactly 0,
    else 0 (what PyTorch reports for inv_ex and solve_ex)."""
    u = np.array(m, dtype=np.float64)
    n = u.shape[-1]
    for k in range(n):
        p = k + int(np.argmax(np.abs(u[k:, k])))
        if u[p, k] == 0:
            return k + 1
        u[[k, p]] = u[[p, k]]
        u[k + 1:, k:] -= np.outer(u[k + 1:, k] / u[k, k], u[k, k:])
    return 0


def _pivot_info(A):
    return np.array([_first_zero_pivot(m) for m in A._array.reshape((-1,) + tuple(A.shape[-2:]))], dtype=np.int32)


def inv_ex(A, *, check_errors=False, out=None):
    refuse_out(out, "linalg.inv_ex")
    check_square(A, "linalg.inv_ex")
    info = _pivot_info(A)
    if info.any() and not check_errors:  # (PyTorch leaves the result unspecified there: NaN here)
        return Tensor._make(np.full(A.shape, np.nan, A._array.dtype)), _info(A, info)
    return inv(A), _info(A, info)


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    refuse_out(out, "linalg.cholesky_ex")
    check_square(A, "linalg.cholesky_ex")
    try:
        return cholesky(A, upper=upper), _info(A, np.zeros(A.shape[:-2], bool))
    except LinAlgError:
        if check_errors:
            raise
    failed = [_first_bad_minor(m) for m in A._array.reshape((-1,) + tuple(A.shape[-2:]))]
    return Tensor._make(np.full(A.shape, np.nan, A._array.dtype)), _info(A, failed)


def _first_bad_minor(m):
    """The order of the first leading minor of m that is not positive-definite (0 if none): PyTorch's info."""
    for k in range(1, m.shape[-1] + 1):
        try:
            np.linalg.cholesky(m[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return 0


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    refuse_out(out, "linalg.solve_ex")
    check_square(A, "linalg.solve_ex")
    try:
        return solve(A, B, left=left), _info(A, np.zeros(A.shape[:-2], bool))
    except LinAlgError:
        if check_errors:
            raise
    singular = _pivot_info(A)
    shape = np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2])) + tuple(B.shape[-2:]) if B.ndim >= 2 else B.shape
    return Tensor._make(np.full(shape, np.nan, A._array.dtype)), _info(A, singular)


# ---- LU with partial pivoting, composed: Gaussian elimination step by step ------------------------
_lu_result = namedtuple("linalg_lu", ["P", "L", "U"])
_lu_factor_result = namedtuple("linalg_lu_factor", ["LU", "pivots"])
_lu_factor_ex_result = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])


def _swap_rows(m, j, p):
    """m with rows j and p[b] exchanged in every matrix b of the batch (p: an array of row numbers)."""
    order = np.broadcast_to(np.arange(m.shape[-2]), p.shape + (m.shape[-2],)).copy()
    np.put_along_axis(order, np.full(p.shape + (1,), j), p[..., None], -1)
    np.put_along_axis(order, p[..., None], np.full(p.shape + (1,), j), -1)
    index = np.broadcast_to(order[..., None], tuple(m.shape[:-2]) + (m.shape[-2], m.shape[-1]))
    return m.gather(-2, Tensor._make(np.ascontiguousarray(index)))


def _eliminate(A):
    """(L (m, k) unit lower, U (k, n) upper, pivots (..., k) 1-based as LAPACK's ipiv, info) with P^T A = L U.

    Step j: the row with the largest |entry| in column j (from row j down) becomes row j (of the rows
    still to eliminate and of L's columns so far); then l = column j below the pivot / pivot, and
    the rows below lose l times row j. The pivot choice is a constant: gradients flow through the
    arithmetic, as PyTorch's LU backward does."""
    m, n = A.shape[-2:]
    k = min(m, n)
    batch = tuple(A.shape[:-2])
    u, columns = A, []
    pivots = np.zeros(batch + (k,), dtype=np.int32)
    info = np.zeros(batch, dtype=np.int32)
    for j in range(k):
        p = j + np.argmax(np.abs(u._array[..., j:, j]), axis=-1)
        pivots[..., j] = p + 1
        u = _swap_rows(u, j, p)
        columns = [_swap_rows(c, j, p) for c in columns]
        pivot = u[..., j:j + 1, j:j + 1]  # (..., 1, 1)
        zero = pivot._array == 0
        info = np.where((info == 0) & zero[..., 0, 0], j + 1, info)
        safe = pivot.masked_fill(Tensor._make(zero), 1.0)  # a zero pivot: its column of L stays 0
        below = u[..., j + 1:, j:j + 1] / safe  # (..., m - j - 1, 1)
        top = Tensor._make(np.zeros(batch + (j, 1), A._array.dtype))
        one = Tensor._make(np.ones(batch + (1, 1), A._array.dtype))
        columns.append(cat([top, one, below], -2))  # L's column j: 0 above, 1 on the diagonal
        u = cat([u[..., :j + 1, :], u[..., j + 1:, :] - below * u[..., j:j + 1, :]], -2)
    low = cat(columns, -1) if columns else Tensor._make(np.zeros(batch + (m, 0), A._array.dtype))
    return low, u[..., :k, :].triu(), pivots, info


def _permutation(pivots, m, dtype):
    """P with A = P L U, from LAPACK's pivots (row j swapped with row pivots[j] - 1, in order)."""
    order = np.broadcast_to(np.arange(m), pivots.shape[:-1] + (m,)).copy()
    for j in range(pivots.shape[-1]):
        p = pivots[..., j:j + 1] - 1
        row_j, row_p = np.take_along_axis(order, np.full_like(p, j), -1), np.take_along_axis(order, p, -1)
        np.put_along_axis(order, np.full_like(p, j), row_p, -1)
        np.put_along_axis(order, p, row_j, -1)
    # P^T A = A[order]: P[order[i], i] = 1
    eye = np.eye(m, dtype=dtype)
    return Tensor._make(np.swapaxes(eye[order], -1, -2).copy())


def lu(A, *, pivot=True, out=None):
    """(P, L, U) with A = P L U: P a permutation, L unit lower triangular (m, k), U upper (k, n)."""
    refuse_out(out, "linalg.lu")
    check_matrix(A, "linalg.lu")
    if not pivot:
        raise NotImplementedError("linalg.lu: LU without pivoting is not implemented (PyTorch has it on CUDA only)")
    low, up, pivots, _ = _eliminate(A)
    return _lu_result(_permutation(pivots, A.shape[-2], A._array.dtype), low, up)


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """LAPACK's compact form: LU = L - I + U in one matrix, the row interchanges as 1-based pivots, and info
    (the first step with a zero pivot, 0 if none)."""
    refuse_out(out, "linalg.lu_factor_ex")
    check_matrix(A, "linalg.lu_factor")
    if not pivot:
        raise NotImplementedError("linalg.lu_factor: LU without pivoting is not implemented (PyTorch: CUDA only)")
    low, up, pivots, info = _eliminate(A)
    if check_errors and info.any():
        step = int(info.reshape(-1)[np.flatnonzero(info.reshape(-1))[0]]) - 1
        raise LinAlgError(f"linalg.lu_factor: U[{step},{step}] is zero (a singular matrix, shape {tuple(A.shape)}): "
                          "lu_solve would divide by zero; linalg.lu or linalg.lu_factor_ex factor it anyway")
    m, n = A.shape[-2:]
    k = min(m, n)
    strict_low = low.tril(-1)  # (m, k)
    compact = up if m <= n else cat([up, Tensor._make(np.zeros(tuple(A.shape[:-2]) + (m - k, n), A._array.dtype))], -2)
    if k < n:
        strict_low = cat([strict_low, Tensor._make(np.zeros(tuple(A.shape[:-2]) + (m, n - k), A._array.dtype))], -1)
    return _lu_factor_ex_result(compact + strict_low, Tensor._make(pivots), Tensor._make(info))


def lu_factor(A, *, pivot=True, out=None):
    """As lu_factor_ex, refusing a singular matrix (as PyTorch)."""
    LU, pivots, _ = lu_factor_ex(A, pivot=pivot, check_errors=True, out=out)
    return _lu_factor_result(LU, pivots)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """X with A X = B (or X A = B; adjoint: with A^T), A = P L U given by lu_factor: two triangular solves."""
    refuse_out(out, "linalg.lu_solve")
    check_square(LU, "linalg.lu_solve")
    n = LU.shape[-1]
    p = _permutation(np.asarray(pivots._array if isinstance(pivots, Tensor) else pivots), n, LU._array.dtype)
    low = LU.tril(-1) + Tensor._make(np.eye(n, dtype=LU._array.dtype))
    up = LU.triu()
    a = p @ low @ up  # A itself, composed from its factors (so the gradient reaches LU)
    if adjoint:
        a = a.mT
    return solve(a, B, left=left)


# ---- PyTorch's older torch-level linear algebra (torch.lu, torch.cholesky_solve, ...) --------------
def torch_lu(A, pivot=True, get_infos=False, out=None):
    """torch.lu: (LU, pivots) in LAPACK's compact form, and the infos when get_infos=True."""
    LU, pivots, info = lu_factor_ex(A, pivot=pivot, out=out)
    return (LU, pivots, info) if get_infos else (LU, pivots)


_lu_unpack_result = namedtuple("lu_unpack", ["P", "L", "U"])


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """(P, L, U) from lu_factor's compact LU and pivots: L its strict lower part plus I, U its upper part."""
    refuse_out(out, "lu_unpack")
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    dt = LU_data._array.dtype
    empty = Tensor._make(np.zeros((0,), dt))
    low = up = empty
    if unpack_data:
        low = LU_data[..., :, :k].tril(-1) + Tensor._make(np.eye(m, k, dtype=dt))
        up = LU_data[..., :k, :].triu()
    pivots = np.asarray(LU_pivots._array if isinstance(LU_pivots, Tensor) else LU_pivots)
    p = _permutation(pivots, m, dt) if unpack_pivots else empty
    return _lu_unpack_result(p, low, up)


def torch_lu_solve(b, LU_data, LU_pivots, *, out=None):
    """torch.lu_solve(b, LU, pivots): X with A X = b (the argument order of the older name)."""
    return lu_solve(LU_data, LU_pivots, b, out=out)


def cholesky_solve(B, L, upper=False, *, out=None):
    """X with A X = B where A = L L^T (upper=True: A = U^T U), through two triangular solves."""
    refuse_out(out, "cholesky_solve")
    low = L.mT if upper else L
    y = solve_triangular(low, B, upper=False)
    return solve_triangular(low.mT, y, upper=True)


def cholesky_inverse(L, upper=False, *, out=None):
    """A^-1 for A = L L^T (upper=True: A = U^T U): L^-T L^-1."""
    refuse_out(out, "cholesky_inverse")
    check_square(L, "cholesky_inverse")
    low = (L.mT if upper else L).tril()
    low_inv = inv(low)
    return low_inv.mT @ low_inv


_triangular_solve_result = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """torch.triangular_solve: (X with op(A) X = b, op(A) = A or A^T, and a copy of A)."""
    refuse_out(out, "triangular_solve")
    a = A.mT if transpose else A
    x = solve_triangular(a, b, upper=upper != transpose, unitriangular=unitriangular)
    return _triangular_solve_result(x, A.clone())


def chain_matmul(*matrices, out=None):
    return multi_dot(list(matrices), out=out)


def frobenius_norm(input, dim, keepdim=False, *, out=None):
    refuse_out(out, "frobenius_norm")
    return _p_norm(input, 2, dim, keepdim)


def torch_norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm and Tensor.norm: p='nuc' is the nuclear norm of the matrices over dim (a pair of dims; the
    whole of a 2-D input when dim is None), every other p the vector norm of ops/norm.py."""
    refuse_out(out, "norm")
    if p != "nuc":
        return _p_norm(input, p, dim, keepdim, dtype)
    if dim is None:
        if input.ndim != 2:
            raise ValueError(f"norm: p='nuc' with dim=None needs a 2-D input (a matrix), got shape {tuple(input.shape)}; "
                             "give dim=(d0, d1)")
        dim = (-2, -1)
    if isinstance(dim, int) or len(dim) != 2:
        raise ValueError(f"norm: p='nuc' needs dim to be a pair of dims, got {dim!r}")
    return matrix_norm(input, "nuc", tuple(dim), keepdim, dtype=dtype)


def nuclear_norm(input, dim=(-2, -1), keepdim=False, *, out=None):
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim) in PyTorch's first form
        dim, keepdim = (-2, -1), dim
    return matrix_norm(input, "nuc", dim, keepdim, out=out)


def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """Q other (left) or other Q, Q^T with transpose=True, Q = H_1 ... H_k the full (m, m) product of
    householder_product's reflectors (input: (m, n) in geqrf's form)."""
    refuse_out(out, "ormqr")
    m, n = input.shape[-2:]
    needed = min(other.shape[-2 if left else -1], n)
    if tau.shape[-1] != needed:
        raise ValueError(f"ormqr: tau.shape[-1] must be equal to min(other.shape[{-2 if left else -1}], "
                         f"input.shape[-1]) = {needed}, got tau of shape {tuple(tau.shape)}")
    full = input if n == m else cat([input, Tensor._make(np.zeros(tuple(input.shape[:-2]) + (m, m - n),
                                                                   input._array.dtype))], -1)
    q = householder_product(full[..., :, :m], tau)
    q = q.mT if transpose else q
    return q @ other if left else other @ q


_geqrf_result = namedtuple("geqrf", ["a", "tau"])


def geqrf(A, *, out=None):
    """torch.geqrf: LAPACK's QR in its raw form, (a, tau): R on and above a's diagonal, the Householder vectors
    below it (their leading 1 implied), tau their scales; Q = householder_product(a, tau). Values only, no
    gradient (PyTorch has none either). Batched over leading dims."""
    refuse_out(out, "geqrf")
    check_matrix(A, "geqrf")
    data = A._array
    m, n = data.shape[-2:]
    a = np.empty(data.shape, data.dtype)
    tau = np.empty(data.shape[:-2] + (min(m, n),), data.dtype)
    for index in np.ndindex(*data.shape[:-2]):
        h, scales = np.linalg.qr(data[index], mode="raw")  # h is LAPACK's output transposed
        a[index], tau[index] = h.T, scales
    return _geqrf_result(Tensor._make(a), Tensor._make(tau))


def svd_lowrank(A, q=6, niter=2, M=None):
    """torch.svd_lowrank: (U, S, V) of a rank-q approximation of A - M (M None: A), by the randomized range
    finder (Halko, Martinsson & Tropp 2011): Q spans (A A^T)^niter A R for a Gaussian R (n, q), then
    B = Q^T A is small and its SVD U_B S V^T gives A ~ (Q U_B) S V^T. Composed of matmul, qr and svd, so
    it is differentiable; the factors depend on the random draw (minigrad's generator)."""
    check_matrix(A, "svd_lowrank")
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if not 0 < q <= min(m, n):
        raise ValueError(f"svd_lowrank: q={q} must lie in (0, min(m, n) = {min(m, n)}] for A of shape {tuple(A.shape)}")
    if M is not None:
        A = A - M
    if m < n:  # work on the tall A^T: its V, S, U are A's U, S, V
        V, S, U = svd_lowrank(A.transpose(-2, -1), q, niter)
        return U, S, V
    Q = _range_basis(A, q, niter)
    U_b, S, Vh = svd(matmul(Q.transpose(-2, -1), A), full_matrices=False)
    return matmul(Q, U_b), S, Vh.transpose(-2, -1)


def _range_basis(A, q, niter):
    # orthonormal Q (m, q) whose span nearly holds A's top q left singular vectors; each power iteration
    # (re-orthonormalised, else the columns would all align with the top one) sharpens the spectrum's decay
    draw = _random.numpy_generator(None, "svd_lowrank").standard_normal((A.shape[-1], q))
    Q = qr(matmul(A, Tensor._make(draw.astype(A._array.dtype)))).Q
    for _ in range(niter):
        Q = qr(matmul(A.transpose(-2, -1), Q)).Q
        Q = qr(matmul(A, Q)).Q
    return Q


def pca_lowrank(A, q=None, center=True, niter=2):
    """torch.pca_lowrank: svd_lowrank of A with its column means subtracted (center=True); q defaults to
    min(6, m, n). The columns of V are the principal directions, S**2 / (m - 1) their variances."""
    check_matrix(A, "pca_lowrank")
    m, n = A.shape[-2:]
    q = min(6, m, n) if q is None else q
    if not 0 <= q <= min(m, n):
        raise ValueError(f"pca_lowrank: q={q} must lie in [0, min(m, n) = {min(m, n)}] for A of shape {tuple(A.shape)}")
    return svd_lowrank(A - A.mean(-2, keepdim=True) if center else A, q, niter)
