"""torch.lobpcg: the k largest (or smallest) eigenpairs of a symmetric A (or of the pencil A x = lambda B x,
B symmetric positive-definite), by the locally optimal block preconditioned conjugate gradient method.

Each iteration keeps a block X of n >= k approximate eigenvectors and does a Rayleigh-Ritz step on the
subspace spanned by [X, W, P]: W = iK (A X - B X diag(lambda)) the (preconditioned) residuals, P the previous
step's direction. The basis is made B-orthonormal (through eigh of its Gram matrix, dropping directions
that have become dependent), the small projected problem S^T A S c = theta c is solved by eigh, and the n
best Ritz pairs become the new X. It stops when every residual norm is at most tol * (|lambda| + 1) times
the column norms, or after niter iterations.

Values only: the results carry no graph (PyTorch differentiates lobpcg for a dense A without B; here an A
that requires a gradient is refused rather than given a wrong or silently missing one). One matrix at a
time (A of shape (m, m), as torch.lobpcg), computed in float64 and returned in A's dtype.
"""
import numpy as np

from ..errors import DtypeError, ShapeError
from .. import random as _random
from ..tensor import Tensor


def _array(t, name):
    if t is None:
        return None
    a = np.asarray(t._array if isinstance(t, Tensor) else t)
    if not np.issubdtype(a.dtype, np.floating):
        raise DtypeError(f"lobpcg: {name} must be a floating-point tensor, got {a.dtype}")
    return a.astype(np.float64)


def _b_orthonormal(S, B, drop):
    """A basis of S's columns' span that is B-orthonormal (S^T B S = I), dropping directions whose Gram
    eigenvalue is below drop times the largest (numerically dependent ones)."""
    BS = S if B is None else B @ S
    gram = S.T @ BS
    gram = (gram + gram.T) / 2
    values, vectors = np.linalg.eigh(gram)
    keep = values > drop * values[-1]
    return S @ (vectors[:, keep] / np.sqrt(values[keep]))


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, method=None,
           tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    """(eigenvalues (k,), eigenvectors (m, k)): largest first when largest (the default), else smallest first.

    method ('basic' or 'ortho') and the ortho_* parameters are accepted and ignored (one method here);
    tracker must be None."""
    a = _array(A, "A")
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ShapeError(f"lobpcg: A must be one square matrix (m, m), got shape {tuple(a.shape)}")
    if isinstance(A, Tensor) and A.requires_grad:
        raise NotImplementedError("lobpcg: no gradient here; call it on A.detach() (the results are values only)")
    if tracker is not None:
        raise NotImplementedError("lobpcg: tracker is not supported")
    if method not in (None, "basic", "ortho"):
        raise ValueError(f"lobpcg: method must be 'basic' or 'ortho', got {method!r}")
    m = a.shape[0]
    b = _array(B, "B")
    precondition = _array(iK, "iK")
    x0 = _array(X, "X")
    if x0 is not None and (x0.ndim != 2 or x0.shape[0] != m):
        raise ShapeError(f"lobpcg: X must be (m, n) = ({m}, n), got shape {tuple(x0.shape)}")
    k = (1 if x0 is None else x0.shape[1]) if k is None else int(k)
    n = (k if x0 is None else x0.shape[1]) if n is None else int(n)
    if not 0 < k <= n:
        raise ValueError(f"lobpcg: need 0 < k <= n, got k={k}, n={n}")
    if m < 3 * n:
        raise ValueError(f"lobpcg: A has {m} rows, fewer than 3 x the n={n} vectors iterated (use "
                         "linalg.eigh for so small a matrix)")
    largest = True if largest is None else bool(largest)
    niter = 1000 if niter is None else int(niter)
    niter = 10 ** 9 if niter < 0 else niter  # PyTorch: a negative niter runs until convergence
    tol = np.finfo(np.asarray(A._array if isinstance(A, Tensor) else A).dtype).eps ** 0.5 if tol is None else tol
    sign = -1.0 if largest else 1.0  # work on the smallest eigenpairs of sign * A
    a = sign * (a + a.T) / 2
    if x0 is None:
        x0 = _random.numpy_generator(None, "lobpcg").standard_normal((m, n))
    elif x0.shape[1] < n:
        extra = _random.numpy_generator(None, "lobpcg").standard_normal((m, n - x0.shape[1]))
        x0 = np.concatenate([x0, extra], 1)
    drop = 1e-14
    x = _b_orthonormal(x0, b, drop)
    theta, c = np.linalg.eigh(x.T @ a @ x)
    x = x @ c
    p = None
    for _ in range(niter):
        bx = x if b is None else b @ x
        residual = a @ x - bx * theta
        norms = np.linalg.norm(residual, axis=0)
        if np.all(norms[:k] <= tol * (np.abs(theta[:k]) + 1) * np.linalg.norm(x[:, :k], axis=0)):
            break
        w = residual if precondition is None else precondition @ residual
        blocks = [x, w] if p is None else [x, w, p]
        s = _b_orthonormal(np.concatenate(blocks, 1), b, drop)
        if s.shape[1] <= x.shape[1]:  # nothing new to search: the subspace is invariant
            break
        theta_all, c = np.linalg.eigh(s.T @ a @ s)
        new_x = s @ c[:, :x.shape[1]]
        # the direction taken this step: the new X less its component along the old X
        step = new_x - x @ (x.T @ (new_x if b is None else b @ new_x))
        p = step if np.linalg.norm(step) > 0 else None
        x, theta = new_x, theta_all[:x.shape[1]]
    dtype = np.asarray(A._array if isinstance(A, Tensor) else A).dtype
    return (Tensor._make((sign * theta[:k]).astype(dtype)), Tensor._make(x[:, :k].astype(dtype)))
