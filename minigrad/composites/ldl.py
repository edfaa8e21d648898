"""torch.linalg.ldl_factor, ldl_factor_ex, ldl_solve: the LDL^T factorisation of a symmetric (possibly
indefinite) matrix with Bunch-Kaufman diagonal pivoting, in LAPACK's sytrf form (lower), and the solve from it.

    P^T A P = L D L^T     L unit lower triangular, D block diagonal with 1x1 and symmetric 2x2 blocks

LAPACK's compact result: LD holds D's blocks on (and, for a 2x2 block, just below) the diagonal and L's
strict lower triangle elsewhere (zeros above the diagonal, as PyTorch returns it); pivots are 1-based:
pivots[k] = p > 0 means a 1x1 block at k after rows/columns k and p-1 were exchanged; pivots[k] =
pivots[k+1] = -p < 0 means a 2x2 block at k, k+1 after rows/columns k+1 and p-1 were exchanged.

Values only, as in PyTorch (which has no derivative for either): the results carry no graph. The work is
done in float64 per matrix (a loop over the leading dims) and cast back to A's dtype.
"""
import math
from collections import namedtuple

import numpy as np

from ..errors import LinAlgError, ShapeError
from ..ops.linalg import check_square
from ..ops.util import refuse_out
from ..tensor import Tensor

_ldl_factor_result = namedtuple("linalg_ldl_factor", ["LD", "pivots"])
_ldl_factor_ex_result = namedtuple("linalg_ldl_factor_ex", ["LD", "pivots", "info"])

# Bunch and Kaufman's threshold: it bounds the growth of the entries of the factors
_ALPHA = (1 + math.sqrt(17)) / 8


def _interchange(a, k, j):
    """Rows and columns k < j of the symmetric trailing matrix a[k:, k:] exchanged, reading and writing only
    the lower triangle (the update below keeps only that triangle meaningful)."""
    a[j + 1:, [k, j]] = a[j + 1:, [j, k]]  # below both: two columns swap
    between = a[k + 1:j, k].copy()  # column k between them <-> row j between them
    a[k + 1:j, k] = a[j, k + 1:j]
    a[j, k + 1:j] = between
    a[k, k], a[j, j] = a[j, j], a[k, k]


def _bunch_kaufman(m):
    """(LD, pivots, info) of one symmetric matrix m, by the unblocked algorithm (LAPACK's sytf2, lower).

    Step k chooses a 1x1 pivot a_kk when it is large enough next to its column (|a_kk| >= alpha colmax),
    else looks at row/column r of that column's largest entry: a 1x1 pivot a_kk still when
    |a_kk| rowmax >= alpha colmax^2, a 1x1 pivot a_rr (after exchanging k and r) when |a_rr| >= alpha rowmax,
    else a 2x2 pivot on k and r (after exchanging k+1 and r). info is the first 1-based step whose column
    is entirely zero (D singular there; that step is skipped, as LAPACK does)."""
    a = np.array(m, dtype=np.float64)
    n = a.shape[0]
    pivots = np.zeros(n, dtype=np.int32)
    info = 0
    k = 0
    while k < n:
        step = 1
        diag = abs(a[k, k])
        if k + 1 < n:
            r = k + 1 + int(np.argmax(np.abs(a[k + 1:, k])))
            colmax = abs(a[r, k])
        else:
            r, colmax = k, 0.0
        if max(diag, colmax) == 0 or math.isnan(diag):
            info = info or k + 1
            pivots[k] = k + 1
            k += 1
            continue
        if diag >= _ALPHA * colmax:
            p = k
        else:
            rowmax = max(np.max(np.abs(a[r, k:r])), np.max(np.abs(a[r + 1:, r]), initial=0.0))
            if diag * rowmax >= _ALPHA * colmax * colmax:
                p = k
            elif abs(a[r, r]) >= _ALPHA * rowmax:
                p = r
            else:
                p, step = r, 2
        target = k + step - 1  # the row/column that p moves to
        if p != target:
            _interchange(a, target, p)
            if step == 2:
                a[[k + 1, p], k] = a[[p, k + 1], k]
        if step == 1:
            if k + 1 < n:
                column = a[k + 1:, k].copy()
                a[k + 1:, k + 1:] -= np.outer(column, column) / a[k, k]  # A22 - c c^T / d
                a[k + 1:, k] = column / a[k, k]  # l = c / d
            pivots[k] = p + 1
        else:
            if k + 2 < n:
                # W = C D^-1 for the 2x2 block D = [[d11, d21], [d21, d22]], written around d21 (the large
                # entry by the pivot choice) so the inverse does not lose accuracy: A22 - W C^T, L = W
                d21 = a[k + 1, k]
                e11, e22 = a[k + 1, k + 1] / d21, a[k, k] / d21
                scale = 1 / (e11 * e22 - 1) / d21
                c0, c1 = a[k + 2:, k].copy(), a[k + 2:, k + 1].copy()
                w0 = scale * (e11 * c0 - c1)
                w1 = scale * (e22 * c1 - c0)
                a[k + 2:, k + 2:] -= np.outer(c0, w0) + np.outer(c1, w1)
                a[k + 2:, k], a[k + 2:, k + 1] = w0, w1
            pivots[k] = pivots[k + 1] = -(p + 1)
        k += step
    return np.tril(a), pivots, info


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """(LD, pivots, info): info[b] is 0, or the 1-based step where matrix b's D has a zero (1x1) block."""
    refuse_out(out, "linalg.ldl_factor_ex")
    check_square(A, "linalg.ldl_factor_ex")
    batch, n = tuple(A.shape[:-2]), A.shape[-1]
    flat = A._array.reshape((-1, n, n))
    parts = [_bunch_kaufman(m) for m in flat]
    LD = np.stack([p[0] for p in parts]) if parts else np.zeros((0, n, n))
    pivots = np.stack([p[1] for p in parts]) if parts else np.zeros((0, n), np.int32)
    info = np.array([p[2] for p in parts], dtype=np.int32)
    if check_errors and info.any():
        raise LinAlgError(f"linalg.ldl_factor_ex: D[{info[info > 0][0] - 1}] is zero (a singular matrix, shape "
                          f"{tuple(A.shape)})")
    return _ldl_factor_ex_result(Tensor._make(LD.astype(A._array.dtype).reshape(batch + (n, n))),
                                 Tensor._make(pivots.reshape(batch + (n,))), Tensor._make(info.reshape(batch)))


def ldl_factor(A, *, hermitian=False, out=None):
    """As ldl_factor_ex, raising LinAlgError for a singular matrix (PyTorch 2.13 fails there with an internal
    assertion rather than a message)."""
    refuse_out(out, "linalg.ldl_factor")
    LD, pivots, info = ldl_factor_ex(A, hermitian=hermitian)
    if info._array.any():
        step = int(info._array[info._array > 0].reshape(-1)[0])
        raise LinAlgError(f"linalg.ldl_factor: D[{step - 1}] is zero (a singular matrix, shape {tuple(A.shape)}); "
                          "linalg.ldl_factor_ex factors it anyway and reports info")
    return _ldl_factor_result(LD, pivots)


def _ldl_solve_one(ld, pivots, b):
    """X with A X = b for A = P L D L^T P^T given as (ld, pivots) (LAPACK's sytrs, lower): apply the
    interchanges and L^-1 going down, D^-1 block by block, then L^-T and the interchanges going up."""
    n = ld.shape[0]
    x = np.array(b, dtype=np.float64)
    k = 0
    while k < n:  # x <- D^-1 L^-1 P^T x
        if pivots[k] > 0:
            p = pivots[k] - 1
            x[[k, p]] = x[[p, k]]
            x[k + 1:] -= np.outer(ld[k + 1:, k], x[k])
            x[k] /= ld[k, k]
            k += 1
        else:
            p = -pivots[k] - 1
            x[[k + 1, p]] = x[[p, k + 1]]
            x[k + 2:] -= np.outer(ld[k + 2:, k], x[k]) + np.outer(ld[k + 2:, k + 1], x[k + 1])
            block = np.array([[ld[k, k], ld[k + 1, k]], [ld[k + 1, k], ld[k + 1, k + 1]]])
            x[k:k + 2] = np.linalg.solve(block, x[k:k + 2])
            k += 2
    k = n - 1
    while k >= 0:  # x <- P L^-T x
        if pivots[k] > 0:
            x[k] -= ld[k + 1:, k] @ x[k + 1:]
            p = pivots[k] - 1
            x[[k, p]] = x[[p, k]]
            k -= 1
        else:  # the 2x2 block at k-1, k
            x[k] -= ld[k + 1:, k] @ x[k + 1:]
            x[k - 1] -= ld[k + 1:, k - 1] @ x[k + 1:]
            p = -pivots[k] - 1
            x[[k, p]] = x[[p, k]]
            k -= 2
    return x


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """X with A X = B, A given by ldl_factor's (LD, pivots); batch dims broadcast."""
    refuse_out(out, "linalg.ldl_solve")
    check_square(LD, "linalg.ldl_solve")
    n = LD.shape[-1]
    if B.ndim < 2 or B.shape[-2] != n:
        raise ShapeError(f"linalg.ldl_solve: B must be (..., {n}, k) to match LD of shape {tuple(LD.shape)}, "
                         f"got {tuple(B.shape)}")
    piv = np.asarray(pivots._array if isinstance(pivots, Tensor) else pivots)
    if piv.shape[-1:] != (n,) or not np.issubdtype(piv.dtype, np.integer):
        raise ValueError(f"linalg.ldl_solve: pivots must be integers of shape (..., {n}), got {piv.dtype} "
                         f"of shape {piv.shape}")
    batch = np.broadcast_shapes(tuple(LD.shape[:-2]), piv.shape[:-1], tuple(B.shape[:-2]))
    lds = np.broadcast_to(LD._array, batch + (n, n)).reshape((-1, n, n))
    pivs = np.broadcast_to(piv, batch + (n,)).reshape((-1, n))
    bs = np.broadcast_to(B._array, batch + tuple(B.shape[-2:])).reshape((-1,) + tuple(B.shape[-2:]))
    xs = [_ldl_solve_one(ld.astype(np.float64), p, b) for ld, p, b in zip(lds, pivs, bs)]
    dtype = np.result_type(LD._array.dtype, B._array.dtype)
    result = np.stack(xs) if xs else np.zeros(bs.shape)
    return Tensor._make(result.astype(dtype).reshape(batch + tuple(B.shape[-2:])))

