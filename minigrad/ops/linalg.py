"""torch.linalg's decompositions and solvers, the primitives: each op's ONE backward formula beside it.

The matrices are the last two dims; any dims before them are a batch. Real matrices only. In the
formulas g is the gradient of the output, A^-T the inverse transposed, and dA what backward returns.

    inv        Y = A^-1             dA = -Y^T g Y^T
    det        y = det A            dA = g adj(A)^T          (= g y A^-T where A is invertible)
    logabsdet  y = log|det A|       dA = g A^-T
    solve      X = A^-1 B           dB = A^-T g,   dA = -dB X^T
    cholesky   A = L L^T            dA = L^-T S L^-1,  S = sym(tril(L^T gL)) with its diagonal halved
    eigh       A = V diag(w) V^T    dA = V (diag(gw) + F o skew(V^T gV)) V^T,  F_ij = 1 / (w_j - w_i)
    svd        A = U diag(s) V^T    Townsend's formula (Svd.backward)
    qr         A = Q R              dA = (gQ + Q copyltu(M)) R^-T,  M = R gR^T - gQ^T Q

cholesky and eigh read one triangle of A (the lower one) and return the gradient of a function of a
symmetric matrix: a symmetric dA, as PyTorch. inv, det, logabsdet, solve and cholesky see NumPy
arrays (arrays=True); eigh, svd and qr return several outputs and so are written in PyTorch's form,
their backward in Tensor ops; they save their input and compute the factors again in backward (a
dropped output, as svdvals drops U and V, is then no loss), so under create_graph=True the factors
are recorded functions of A. Every formula is recorded, so higher orders work.
The compositions (norms, svdvals, pinv, slogdet's sign, ...) are in minigrad/composites/linalg.py.
"""
from collections import namedtuple

import numpy as np

from ..errors import LinAlgError, ShapeError
from ..function import Function
from ..tensor import Tensor
from .util import refuse_out, tangent_sum


def _swap(m):
    return np.swapaxes(m, -1, -2)  # the transpose of every matrix in a batch (a Tensor's is recorded)


def _diagonal(m):
    """The diagonal of every matrix in a batch (as a product with I, which is recorded on Tensors)."""
    return (m * np.eye(m.shape[-1], dtype=m.dtype)).sum(-1)


def _trace(m):
    """tr(M) of every matrix in a batch."""
    return _diagonal(m).sum(-1)


def _lower_symmetric(m):
    """The symmetric matrix an op that reads only the lower triangle of A sees: tril(M) + tril(M, -1)^T."""
    n = m.shape[-1]
    return m * np.tri(n, dtype=m.dtype) + _swap(m * np.tri(n, k=-1, dtype=m.dtype))


def check_square(a, op):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"{op}: expects a square matrix or a batch of them (..., n, n), got shape {tuple(a.shape)}")
    check_matrix(a, op)


def check_matrix(a, op):
    if a.ndim < 2:
        raise ShapeError(f"{op}: expects a matrix or a batch of them (..., m, n), got shape {tuple(a.shape)}")
    if a.dtype.kind != "f":
        raise TypeError(f"{op}: expects a floating point tensor, got {a.dtype}")


class Inv(Function, arrays=True):
    node_name = "LinalgInvExBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, a):
        # Y = A^-1
        try:
            y = np.linalg.inv(a)
        except np.linalg.LinAlgError:
            raise LinAlgError(f"linalg.inv: the input matrix is singular (shape {tuple(a.shape)}), it has no inverse") from None
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        # dA = -Y^T g Y^T
        (y,) = ctx.saved_tensors
        return -(_swap(y) @ grad @ _swap(y))

    @staticmethod
    def jvp(ctx, da):
        # d(A^-1) = -Y dA Y
        y = ctx.result
        return -(y @ da @ y)


class Det(Function, arrays=True):
    node_name = "LinalgDetBackward0"

    @staticmethod
    def forward(ctx, a):
        # y = det A
        y = np.linalg.det(a)
        ctx.save_for_backward(a, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        # dA = g adj(A)^T; adj(A)^T = det(A) A^-T where A is invertible, else (A = U S V^T)
        # adj(A)^T = det(U) det(V) U diag(prod_{j != i} s_j) V^T, which is 0 when A's rank is n - 2 or less
        a, y = ctx.saved_tensors
        if _invertible(a):
            return (grad * y)[..., None, None] * _swap(Inv.apply(a))
        u, s, vh = Svd.apply(a, False) if isinstance(a, Tensor) else np.linalg.svd(a, full_matrices=False)
        n = s.shape[-1]
        others = np.stack([_product([s[..., j] for j in range(n) if j != i], s) for i in range(n)], -1)
        sign = np.linalg.det(_plain(u)) * np.linalg.det(_plain(vh))  # +-1, a constant
        return grad[..., None, None] * ((u * (others * sign)[..., None, :]) @ vh)

    @staticmethod
    def jvp(ctx, da):
        # d det A = det(A) tr(A^-1 dA)
        a = ctx.primals[0]
        return ctx.result * _trace(Solve.apply(a, da))


def _invertible(a):
    """Whether every matrix of the batch is far enough from singular for A^-1 to be accurate."""
    a = _plain(a)
    if a.shape[-1] == 0:
        return True
    with np.errstate(divide="ignore", invalid="ignore"):
        cond = np.linalg.cond(a)
    return bool(np.all(cond < 1 / np.finfo(a.dtype).eps))


def _product(factors, like):
    out = np.ones_like(like[..., 0]) if not factors else factors[0]
    for f in factors[1:]:
        out = out * f
    return out


def _plain(a):
    return a._array if isinstance(a, Tensor) else a


class LogAbsDet(Function, arrays=True):
    node_name = "LinalgSlogdetBackward0"

    @staticmethod
    def forward(ctx, a):
        # y = log |det A|
        ctx.save_for_backward(a)
        return np.linalg.slogdet(a)[1]

    @staticmethod
    def backward(ctx, grad):
        # dA = g A^-T
        (a,) = ctx.saved_tensors
        return grad[..., None, None] * _swap(Inv.apply(a))

    @staticmethod
    def jvp(ctx, da):
        # d log|det A| = tr(A^-1 dA)
        return _trace(Solve.apply(ctx.primals[0], da))


class Solve(Function, arrays=True):
    node_name = "LinalgSolveExBackward0"

    @staticmethod
    def forward(ctx, a, b):
        # X = A^-1 B   (B: (..., n, k), batch dims broadcast)
        try:
            x = np.linalg.solve(a, b)
        except np.linalg.LinAlgError:
            raise LinAlgError(f"linalg.solve: the matrix A (shape {tuple(a.shape)}) is singular: A X = B has no unique "
                              "solution") from None
        ctx.save_for_backward(a, x)
        return x

    @staticmethod
    def backward(ctx, grad):
        # dB = A^-T g,  dA = -dB X^T
        a, x = ctx.saved_tensors
        grad_b = Solve.apply(_swap(a), grad)
        return -(grad_b @ _swap(x)), grad_b

    @staticmethod
    def jvp(ctx, da, db):
        # X = A^-1 B: dX = A^-1 (dB - dA X)
        a = ctx.primals[0]
        return Solve.apply(a, tangent_sum(db, None if da is None else -(da @ ctx.result)))


class Cholesky(Function, arrays=True):
    node_name = "LinalgCholeskyExBackward0"

    @staticmethod
    def forward(ctx, a):
        # A = L L^T, L lower triangular with a positive diagonal (A's lower triangle is read)
        try:
            low = np.linalg.cholesky(a)
        except np.linalg.LinAlgError:
            raise LinAlgError(f"linalg.cholesky: the input (shape {tuple(a.shape)}) is not positive-definite, so it has "
                              "no Cholesky factor") from None
        ctx.save_for_backward(low)
        return low

    @staticmethod
    def backward(ctx, grad):
        # P = tril(L^T gL);  S = (P + P^T - diag(P)) / 2 (symmetric, diagonal halved);  dA = L^-T S L^-1
        (low,) = ctx.saved_tensors
        n = low.shape[-1]
        lower = np.tri(n, dtype=grad.dtype)  # constants: masks of the lower triangle, with and without diagonal
        strict = np.tri(n, k=-1, dtype=grad.dtype)
        p = (_swap(low) @ grad) * lower
        s = 0.5 * (p + _swap(p * strict))
        low_inv = Inv.apply(low)
        return _swap(low_inv) @ s @ low_inv

    @staticmethod
    def jvp(ctx, da):
        # A = L L^T: dL = L Phi(L^-1 dA L^-T), Phi: the lower triangle, diagonal halved
        low = ctx.result
        n = low.shape[-1]
        da = _lower_symmetric(da)  # the op reads A's lower triangle
        low_inv = Inv.apply(low)
        inner = low_inv @ da @ _swap(low_inv)
        return low @ (inner * (np.tri(n, k=-1, dtype=low.dtype) + 0.5 * np.eye(n, dtype=low.dtype)))


def _reciprocal_gaps(values):
    """F_ij = 1 / (values_j - values_i) off the diagonal, 0 on it (equal values give inf, as PyTorch)."""
    n = values.shape[-1]
    eye = np.eye(n, dtype=bool)
    gaps = values[..., None, :] - values[..., :, None]
    with np.errstate(divide="ignore"):
        return np.where(eye, 0.0, 1 / np.where(eye, 1.0, gaps))


class Eigh(Function):
    """Eigenvalues (ascending) and orthonormal eigenvectors of a symmetric matrix; PyTorch's form (two outputs)."""

    @staticmethod
    def forward(ctx, a, uplo):
        # A = V diag(w) V^T, read from A's `uplo` triangle
        w, v = np.linalg.eigh(a._array, UPLO=uplo)
        ctx.save_for_backward(a)  # the input: the outputs may be dropped (eigvalsh keeps only w)
        ctx.uplo = uplo
        return Tensor._make(w), Tensor._make(v)

    @staticmethod
    def backward(ctx, grad_w, grad_v):
        # dA = V (diag(gw) + F o skew(V^T gV)) V^T,  F_ij = 1 / (w_j - w_i),  skew(K) = (K - K^T) / 2
        (a,) = ctx.saved_tensors
        w, v = Eigh.apply(a, ctx.uplo)  # the factors again: under create_graph=True, recorded functions of A
        k = _swap(v) @ grad_v
        inner = _reciprocal_gaps(w) * (0.5 * (k - _swap(k))) + grad_w[..., None] * np.eye(w.shape[-1], dtype=w.dtype)
        return v @ inner @ _swap(v), None

    @staticmethod
    def jvp(ctx, da, uplo):
        # K = V^T dA V:  dw = diag(K),  dV = V (F o K),  F_ij = 1 / (w_j - w_i)  (dA: the triangle eigh reads)
        (a,) = ctx.saved_tensors
        w, v = Eigh.apply(a, ctx.uplo)
        da = _lower_symmetric(da if ctx.uplo == "L" else _swap(da))
        k = _swap(v) @ da @ v
        return _diagonal(k), v @ (_reciprocal_gaps(w) * k)


class Svd(Function):
    """A = U diag(S) Vh, singular values descending; PyTorch's form (three outputs)."""

    @staticmethod
    def forward(ctx, a, full_matrices):
        # A = U diag(S) Vh, S descending (full_matrices: U (m, m) and Vh (n, n), else k = min(m, n) columns)
        u, s, vh = (Tensor._make(m) for m in np.linalg.svd(a._array, full_matrices=full_matrices))
        ctx.save_for_backward(a)  # the input: the outputs may be dropped (svdvals keeps only S)
        ctx.full_matrices = full_matrices
        return u, s, vh

    @staticmethod
    def backward(ctx, grad_u, grad_s, grad_vh):
        # Townsend (2016), for A (m, n), k = min(m, n), U (m, k), V (n, k):
        #   dA = U [diag(gS) + (F o (U^T gU - gU^T U)) S + S (F o (V^T gV - gV^T V))] V^T
        #        + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T),     F_ij = 1 / (s_j^2 - s_i^2)
        # (with full_matrices=True only the first k columns of U and V enter, as PyTorch)
        (a,) = ctx.saved_tensors
        u, s, vh = Svd.apply(a, ctx.full_matrices)  # the factors again: recorded functions of A at higher order
        k = s.shape[-1]
        u, vh, grad_u, grad_vh = u[..., :k], vh[..., :k, :], grad_u[..., :k], grad_vh[..., :k, :]
        v, grad_v = _swap(vh), _swap(grad_vh)
        f = _reciprocal_gaps(s * s)
        ut_gu, vt_gv = _swap(u) @ grad_u, _swap(v) @ grad_v
        inner = ((f * (ut_gu - _swap(ut_gu))) * s[..., None, :] + s[..., :, None] * (f * (vt_gv - _swap(vt_gv)))
                 + grad_s[..., None] * np.eye(k, dtype=s.dtype))
        grad_a = u @ inner @ vh
        if u.shape[-2] > k:  # U has fewer columns than rows: the part of gU outside U's span
            grad_a = grad_a + ((grad_u - u @ ut_gu) / s[..., None, :]) @ vh
        if v.shape[-2] > k:
            grad_a = grad_a + u @ _swap((grad_v - v @ vt_gv) / s[..., None, :])
        return grad_a, None

    @staticmethod
    def jvp(ctx, da, full_matrices):
        # P = U^T dA V:  dS = diag(P),  dU = U (F o (P S + S P^T)) + (I - U U^T) dA V S^-1,
        # dV = V (F o (S P + P^T S)) + (I - V V^T) dA^T U S^-1,  F_ij = 1 / (s_j^2 - s_i^2)
        (a,) = ctx.saved_tensors
        u, s, vh = Svd.apply(a, ctx.full_matrices)
        k = s.shape[-1]
        if ctx.full_matrices and (u.shape[-1] > k or vh.shape[-2] > k):
            raise NotImplementedError("linalg.svd: forward-mode AD of the full U or V of a non-square matrix is not "
                                      "defined (their extra columns are arbitrary); use full_matrices=False")
        v = _swap(vh)
        p = _swap(u) @ da @ v
        f = _reciprocal_gaps(s * s)
        d_u = u @ (f * (p * s[..., None, :] + s[..., :, None] * _swap(p)))
        d_v = v @ (f * (s[..., :, None] * p + _swap(p) * s[..., None, :]))
        if u.shape[-2] > k:
            d_u = d_u + (da @ v - u @ p) / s[..., None, :]
        if v.shape[-2] > k:
            d_v = d_v + (_swap(da) @ u - v @ _swap(p)) / s[..., None, :]
        return d_u, _diagonal(p), _swap(d_v)


def _copyltu(m):
    """The symmetric matrix with m's lower triangle: tril(m) + tril(m, -1)^T."""
    n = m.shape[-1]
    return m * np.tri(n, dtype=m.dtype) + _swap(m * np.tri(n, k=-1, dtype=m.dtype))


class Qr(Function):
    """A = Q R, Q with orthonormal columns, R upper triangular; PyTorch's form (two outputs)."""

    @staticmethod
    def forward(ctx, a, mode):
        # A = Q R, Q with orthonormal columns, R upper triangular
        q, r = (Tensor._make(m) for m in np.linalg.qr(a._array, mode=mode))
        ctx.save_for_backward(a)  # the input: the outputs may be dropped
        ctx.mode = mode
        return q, r

    @staticmethod
    def backward(ctx, grad_q, grad_r):
        # A (m, n). m >= n: dA = (gQ + Q copyltu(M)) R^-T with M = R gR^T - gQ^T Q.
        # m < n: A = [X | Y], R = [R1 | R2], X = Q R1, Y = Q R2: dY = Q gR2, and dX is the square case
        # with gQ + Y gR2^T in place of gQ (Y enters through Q too)
        (a,) = ctx.saved_tensors
        q, r = Qr.apply(a, ctx.mode)  # the factors again: recorded functions of A at higher order
        m, n = q.shape[-2], r.shape[-1]
        if ctx.mode == "complete" and m > n:
            raise RuntimeError("linalg.qr: the QR decomposition is not differentiable when mode='complete' and "
                               f"nrows > ncols (here {m} > {n}); use mode='reduced'")
        if m >= n:
            return _qr_square_backward(q, r, grad_q, grad_r), None
        r1, r2 = r[..., :, :m], r[..., :, m:]
        g1, g2 = grad_r[..., :, :m], grad_r[..., :, m:]
        grad_x = _qr_square_backward(q, r1, grad_q + (q @ r2) @ _swap(g2), g1)
        return np.concatenate([grad_x, q @ g2], axis=-1), None

    @staticmethod
    def jvp(ctx, da, mode):
        # m >= n: C = Q^T dA R^-1,  W = tril(C, -1) - tril(C, -1)^T (Q^T dQ, skew),
        #         dR = (C - W) R,  dQ = Q W + (I - Q Q^T) dA R^-1
        (a,) = ctx.saved_tensors
        q, r = Qr.apply(a, ctx.mode)
        m, n = q.shape[-2], r.shape[-1]
        if m < n or (ctx.mode == "complete" and m > n):
            raise NotImplementedError(f"linalg.qr: forward-mode AD is implemented for A with rows >= columns in mode "
                                      f"'reduced' (here {m} x {n}, mode {ctx.mode!r})")
        da_r = da @ Inv.apply(r)
        c = _swap(q) @ da_r
        low = c * np.tri(n, k=-1, dtype=c.dtype)
        w = low - _swap(low)
        return q @ w + (da_r - q @ c), (c - w) @ r


def _qr_square_backward(q, r, grad_q, grad_r):
    m = r @ _swap(grad_r) - _swap(grad_q) @ q
    return (grad_q + q @ _copyltu(m)) @ _swap(Inv.apply(r))


# ---- the functions (arguments checked, PyTorch's names and result tuples) --------------------------
_eigh_result = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
_svd_result = namedtuple("linalg_svd", ["U", "S", "Vh"])
_qr_result = namedtuple("linalg_qr", ["Q", "R"])


def inv(A, *, out=None):
    refuse_out(out, "linalg.inv")
    check_square(A, "linalg.inv")
    return Inv.apply(A)


def det(A, *, out=None):
    refuse_out(out, "linalg.det")
    check_square(A, "linalg.det")
    return Det.apply(A)


def logabsdet(A):
    check_square(A, "linalg.slogdet")
    return LogAbsDet.apply(A)


def solve(A, B, *, left=True, out=None):
    """X with A X = B (left=True) or X A = B; B a matrix (..., n, k) or a vector (..., n), as torch.linalg.solve."""
    refuse_out(out, "linalg.solve")
    check_square(A, "linalg.solve")
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return solve(A.mT, B.mT).mT
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    b = B.unsqueeze(-1) if vector else B
    if b.ndim < 2 or b.shape[-2] != A.shape[-1]:
        raise ShapeError(f"linalg.solve: A of shape {tuple(A.shape)} and B of shape {tuple(B.shape)} do not fit (A X = B needs "
                         f"B's rows to be A's {A.shape[-1]})")
    x = Solve.apply(A, b)
    return x.squeeze(-1) if vector else x


def cholesky(A, *, upper=False, out=None):
    refuse_out(out, "linalg.cholesky")
    check_square(A, "linalg.cholesky")
    low = Cholesky.apply(A)
    return low.mT if upper else low


def eigh(A, UPLO="L", *, out=None):
    refuse_out(out, "linalg.eigh")
    check_square(A, "linalg.eigh")
    if UPLO not in ("L", "U"):
        raise ValueError(f"linalg.eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    return _eigh_result(*Eigh.apply(A, UPLO))


def svd(A, full_matrices=True, *, driver=None, out=None):
    refuse_out(out, "linalg.svd")
    check_matrix(A, "linalg.svd")
    return _svd_result(*Svd.apply(A, bool(full_matrices)))


def qr(A, mode="reduced", *, out=None):
    refuse_out(out, "linalg.qr")
    check_matrix(A, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"linalg.qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    if mode == "r":  # R alone, and Q empty, as PyTorch (no gradient: PyTorch has none for mode='r' either)
        r = Tensor._make(np.linalg.qr(A._array, mode="r"))
        return _qr_result(Tensor._make(np.zeros((0,), A._array.dtype)), r)
    return _qr_result(*Qr.apply(A, mode))
