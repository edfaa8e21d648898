"""torch.linalg: factorizations, solves, norms and the matrix functions.

A factorization that is unique only up to signs or ordering (eigh's vectors, svd's, qr's, lu's pivots) is
sampled through what is unique: the matrix rebuilt from its factors, the values, |vectors|. The inputs are
built inside the call from a random matrix (A Aᵀ + 3I is symmetric positive definite, A + 3I is well
conditioned), so that gradcheck sees a whole neighbourhood of valid inputs. Every sample has float32 and
float64 forms, batches and a transposed (non-contiguous) input where the function takes them.
References: NumPy's linalg, or the defining identity.
"""
import numpy as np

from . import Check, DT, Fn, Op, S

NP = np.linalg


def _spd(L, a):
    """A A^T + 3 I: symmetric positive definite for any A (either library, or NumPy)."""
    n = a.shape[-1]
    if L is np:
        return a @ np.swapaxes(a, -1, -2) + 3 * np.eye(n, dtype=a.dtype)
    return a @ a.mT + 3 * L.eye(n, dtype=a.dtype)


def _well(L, a):
    """A + 3 I: away from singular for the small random A drawn here."""
    n = a.shape[-1]
    return a + 3 * (np.eye(n, dtype=a.dtype) if L is np else L.eye(n, dtype=a.dtype))


def _mT(x):
    return np.swapaxes(x, -1, -2)


def square(r, n=3, batch=True, T=True):
    """Square-matrix samples: float32, float64, batched, transposed."""
    out = [S(r.real((n, n))), S(r.real((n, n), "float64"))]
    if batch:
        out.append(S(r.real((2, n, n), "float64")))
    if T:
        out.append(S(r.real((n, n), "float64", layout="T")))
    return out


def _np_matrix_norm(x, ord="fro", dim=(-2, -1), keepdim=False, dtype=None):
    return NP.norm(x, ord=ord, axis=tuple(dim), keepdims=keepdim)


def _np_vector_norm(x, ord=2, dim=None, keepdim=False, dtype=None):
    """The vector norm over dim (all dims when None; a tuple of dims is one vector, not a matrix)."""
    a = np.abs(x.astype(np.float64) if dtype is not None else x)
    dim = tuple(dim) if isinstance(dim, (list, tuple)) else dim
    if ord == float("inf"):
        return np.max(a, axis=dim, keepdims=keepdim)
    if ord == -float("inf"):
        return np.min(a, axis=dim, keepdims=keepdim)
    if ord == 0:
        return np.sum(a != 0, axis=dim, keepdims=keepdim).astype(a.dtype)
    return np.sum(a ** ord, axis=dim, keepdims=keepdim) ** (1 / ord)


def _np_norm(x, ord=None, dim=None, keepdim=False, dtype=None):
    if isinstance(dim, list):
        dim = tuple(dim)
    if ord is None and dim is None:
        return NP.norm(x.reshape(-1))
    return NP.norm(x, ord=ord, axis=dim, keepdims=keepdim)


def _householder(a, tau):
    """Q = H_1 ... H_k with H_i = I - tau_i v_i v_iᵀ, v_i the i-th column below the diagonal (1 on it)."""
    m, n = a.shape[-2:]
    q = np.eye(m, dtype=a.dtype)
    for i in range(tau.shape[-1]):
        v = np.zeros(m, a.dtype)
        v[i] = 1
        v[i + 1:] = a[i + 1:, i]
        q = q @ (np.eye(m, dtype=a.dtype) - tau[i] * np.outer(v, v))
    return q[:, :n]


def _lu_rebuild(L, a, pivot=True):
    p, lower, upper = L.linalg.lu(_well(L, a), pivot=pivot)
    return p @ lower @ upper


def _solve_triangular_ref(a, b, upper, left=True, unitriangular=False):
    t = np.triu(_well(np, a)) if upper else np.tril(_well(np, a))
    if unitriangular:
        eye = np.eye(t.shape[-1], dtype=t.dtype)
        t = t * (1 - eye) + eye
    return NP.solve(t, b) if left else _mT(NP.solve(_mT(t), _mT(b)))


def _lstsq_ref(a, b, driver=None):
    x, res, rank, sv = NP.lstsq(a, b, rcond=None)
    return x


def _vander_ref(x, N=None):
    return x[..., None] ** np.arange(N if N is not None else x.shape[-1])


ENTRIES = [
    Check("linalg.LinAlgError", lambda L: issubclass(L.linalg.LinAlgError, RuntimeError)),

    # ---- products -------------------------------------------------------------------------------
    Op("matmul", lambda r: [S(r.real((2, 3)), r.real((3, 4))), S(r.real((2, 2, 3), "float64"), r.real((3, 2), "float64")),
                            S(r.real((3,), "float64"), r.real((3, 2), "float64", layout="T"))],
       names=["linalg.matmul"], ref=np.matmul),
    Op("multi_dot", lambda r: [S([r.real((2, 3)), r.real((3, 4)), r.real((4, 2))]),
                               S([r.real((3,), "float64"), r.real((3, 4), "float64"), r.real((4,), "float64")])],
       names=["linalg.multi_dot"], ref=lambda xs: NP.multi_dot(xs)),
    Op("vecdot", lambda r: [S(r.real((2, 3)), r.real((2, 3))), S(r.real((2, 3), "float64"), r.real((3,), "float64")),
                            S(r.real((2, 3), "float64"), r.real((2, 3), "float64"), dim=0)],
       names=["linalg.vecdot"], ref=lambda x, y, dim=-1: np.sum(x * y, axis=dim)),
    Op("cross", lambda r: [S(r.real((2, 3)), r.real((2, 3))), S(r.real((2, 3), "float64", layout="T"), r.real((1, 3), "float64")),
                           S(r.real((3, 2), "float64"), r.real((3, 2), "float64"), dim=0)],
       names=["linalg.cross"], ref=lambda x, y, dim=-1: np.cross(x, y, axis=dim)),
    Op("diagonal", lambda r: [S(r.real((3, 4))), S(r.real((2, 3, 3), "float64"), offset=1),
                              S(r.real((2, 3, 4), "float64"), offset=-1, dim1=0, dim2=2)],
       names=["linalg.diagonal"],
       ref=lambda x, offset=0, dim1=-2, dim2=-1: np.diagonal(x, offset, dim1, dim2)),
    Op("vander", lambda r: [S(r.real((4,))), S(r.real((2, 3), "float64"), N=4)],
       names=["linalg.vander"], ref=_vander_ref),
    Op("matrix_power", lambda r: [S(r.real((3, 3)), 3), S(r.real((2, 3, 3), "float64"), 0, grad=False),
                                  S(r.real((3, 3), "float64", layout="T"), 2)],
       names=["linalg.matrix_power"], ref=lambda x, n: NP.matrix_power(x, n)),
    Fn("linalg.matrix_power", lambda L, a, n: L.linalg.matrix_power(_well(L, a), n),
       lambda r: [S(r.real((3, 3), "float64"), -2)],
       ref=lambda a, n: NP.matrix_power(_well(np, a), n)),

    # ---- norms ----------------------------------------------------------------------------------
    Op("vector_norm", lambda r: [S(r.off((2, 3))), S(r.off((2, 3), "float64"), 1), S(r.off((2, 3), "float64"), 3.5, dim=1),
                                 S(r.off((2, 3), "float64"), float("inf"), dim=0, keepdim=True),
                                 S(r.off((2, 3), "float64"), -float("inf")), S(r.off((2, 3, 2), "float64"), dim=(0, 2)),
                                 S(r.off((2, 3), "float64"), 0, grad=False),
                                 S(r.off((2, 3)), dtype=DT("float64"))],
       names=["linalg.vector_norm"], ref=_np_vector_norm),
    Op("matrix_norm", lambda r: [S(r.distinct((3, 3))), S(r.distinct((3, 3), "float64"), "nuc"),
                                 S(r.distinct((2, 3, 3), "float64"), 2), S(r.distinct((3, 3), "float64"), -2),
                                 S(r.distinct((3, 3), "float64"), 1, keepdim=True), S(r.distinct((3, 3), "float64"), float("inf")),
                                 S(r.distinct((3, 3, 2), "float64"), "fro", dim=(0, 1))],
       names=["linalg.matrix_norm"], ref=_np_matrix_norm, rtol=1e-4, atol=1e-5),
    Op("norm", lambda r: [S(r.off((2, 3))), S(r.off((2, 3), "float64"), 3, dim=1), S(r.distinct((3, 3), "float64"), "fro"),
                          S(r.distinct((3, 3), "float64"), "nuc"), S(r.off((4,), "float64"), float("inf")),
                          S(r.distinct((2, 3, 3), "float64"), 2, dim=(1, 2), keepdim=True)],
       names=["linalg.norm"], ref=_np_norm, rtol=1e-4, atol=1e-5),
    Fn("linalg.cond", lambda L, a, *p: L.linalg.cond(_well(L, a), *p),
       lambda r: [S(r.real((3, 3), "float64")), S(r.real((3, 3), "float64"), "fro"), S(r.real((3, 3), "float64"), 1),
                  S(r.real((3, 3), "float64"), -2), S(r.real((2, 3, 3), "float64"), float("inf"))],
       ref=lambda a, *p: NP.cond(_well(np, a), *p), rtol=1e-6),

    # ---- inverses and determinants ----------------------------------------------------------------
    Fn(["linalg.inv"], lambda L, a: L.linalg.inv(_well(L, a)), square, ref=lambda a: NP.inv(_well(np, a)), rtol=1e-4),
    Fn(["linalg.inv_ex"], lambda L, a: L.linalg.inv_ex(_well(L, a)), square,
       ref=lambda a: (NP.inv(_well(np, a)), np.zeros(a.shape[:-2], np.int32)), rtol=1e-4, grad=False),
    Fn("linalg.det", lambda L, a: L.linalg.det(_well(L, a)), square, ref=lambda a: NP.det(_well(np, a)), rtol=1e-4),
    Op("det (singular)", lambda r: [S(r.value([[1.0, 2.0], [2.0, 4.0]], "float64"), grad=False)],
       names=["linalg.det"], ref=NP.det, atol=1e-12),
    Fn("linalg.slogdet", lambda L, a: tuple(L.linalg.slogdet(a)), lambda r: [S(r.real((3, 3), "float64")), S(r.real((2, 3, 3), "float64"))],
       ref=lambda a: tuple(NP.slogdet(a)), rtol=1e-6),
    Fn("linalg.pinv", lambda L, a, **k: L.linalg.pinv(a, **k),
       lambda r: [S(r.real((3, 2))), S(r.real((2, 4), "float64")), S(r.real((2, 3, 2), "float64")),
                  S(r.real((3, 3), "float64"), hermitian=False), S(r.real((3, 2), "float64"), rtol=1e-3)],
       ref=lambda a, **k: NP.pinv(a, rcond=k.get("rtol", 1e-15)), rtol=1e-4, atol=1e-6),
    Fn("linalg.pinv", lambda L, a: L.linalg.pinv(_spd(L, a), hermitian=True),
       lambda r: [S(r.real((3, 3), "float64"))], ref=lambda a: NP.pinv(_spd(np, a)), rtol=1e-6),
    Fn("linalg.matrix_rank", lambda L, a, **k: L.linalg.matrix_rank(a, **k),
       lambda r: [S(r.real((3, 3))), S(r.value([[1.0, 2.0], [2.0, 4.0]], "float64")), S(r.real((2, 3, 4), "float64")),
                  S(r.value([[1.0, 0.0], [0.0, 1e-9]], "float64"), atol=1e-6), S(r.real((3, 3), "float64"), hermitian=True)],
       ref=lambda a, **k: NP.matrix_rank(a, tol=k.get("atol")), grad=False),
    Fn(["linalg.tensorinv"], lambda L, a: L.linalg.tensorinv(_well(L, a).reshape(2, 3, 6), ind=2),
       lambda r: [S(r.real((6, 6), "float64"))], ref=lambda a: NP.tensorinv(_well(np, a).reshape(2, 3, 6), ind=2), rtol=1e-6),
    Fn(["linalg.tensorsolve"], lambda L, a, b: L.linalg.tensorsolve(_well(L, a).reshape(2, 3, 6), b),
       lambda r: [S(r.real((6, 6), "float64"), r.real((2, 3), "float64"))],
       ref=lambda a, b: NP.tensorsolve(_well(np, a).reshape(2, 3, 6), b), rtol=1e-6),
    Fn("linalg.matrix_exp", lambda L, a: L.linalg.matrix_exp(_spd(L, a) * 0.1),
       lambda r: [S(r.real((3, 3))), S(r.real((2, 3, 3), "float64"))],
       ref=lambda a: _expm_sym(_spd(np, a) * 0.1), rtol=1e-5),

    # ---- solves -----------------------------------------------------------------------------------
    Fn("linalg.solve", lambda L, a, b, **k: L.linalg.solve(_well(L, a), b, **k),
       lambda r: [S(r.real((3, 3)), r.real((3, 2))), S(r.real((3, 3), "float64"), r.real((3,), "float64")),
                  S(r.real((2, 3, 3), "float64"), r.real((3, 2), "float64")),
                  S(r.real((3, 3), "float64", layout="T"), r.real((2, 3), "float64"), left=False)],
       ref=lambda a, b, left=True: NP.solve(_well(np, a), b) if left else _mT(NP.solve(_mT(_well(np, a)), _mT(b))),
       rtol=1e-4),
    Fn("linalg.solve_ex", lambda L, a, b: L.linalg.solve_ex(_well(L, a), b),
       lambda r: [S(r.real((3, 3), "float64"), r.real((3, 2), "float64"))],
       ref=lambda a, b: (NP.solve(_well(np, a), b), np.zeros((), np.int32)), grad=False),
    Fn("linalg.solve_triangular", lambda L, a, b, **k: L.linalg.solve_triangular(
           L.triu(_well(L, a)) if k["upper"] else L.tril(_well(L, a)), b, **k),
       lambda r: [S(r.real((3, 3)), r.real((3, 2)), upper=True), S(r.real((3, 3), "float64"), r.real((3, 2), "float64"), upper=False),
                  S(r.real((3, 3), "float64"), r.real((2, 3), "float64"), upper=True, left=False),
                  S(r.real((2, 3, 3), "float64"), r.real((3, 1), "float64"), upper=False, unitriangular=True)],
       ref=_solve_triangular_ref, rtol=1e-4),
    Fn("linalg.lstsq", lambda L, a, b, **k: L.linalg.lstsq(a, b, **k).solution,
       lambda r: [S(r.real((4, 3)), r.real((4, 2))), S(r.real((5, 3), "float64"), r.real((5, 2), "float64")),
                  S(r.real((5, 3), "float64"), r.real((5, 2), "float64"), driver="gelsd"),
                  S(r.real((5, 3), "float64"), r.real((5, 2), "float64"), driver="gelss"),
                  S(r.real((5, 3), "float64"), r.real((5, 2), "float64"), driver="gelsy")],
       ref=_lstsq_ref, rtol=1e-4),
    Fn("linalg.lstsq",
       lambda L, a, b, **k: tuple(L.linalg.lstsq(a, b, **k))[1:],
       lambda r: [S(r.real((5, 3), "float64"), r.real((5, 2), "float64"), driver="gelsd", grad=False),
                  S(r.real((5, 3), "float64"), r.real((5, 2), "float64"), driver="gelss", grad=False)],
       ref=lambda a, b, driver=None: tuple(NP.lstsq(a, b, rcond=None)[1:])),
    Fn("linalg.cholesky", lambda L, a, **k: L.linalg.cholesky(_spd(L, a), **k),
       lambda r: [S(r.real((3, 3))), S(r.real((3, 3), "float64")), S(r.real((2, 3, 3), "float64")),
                  S(r.real((3, 3), "float64"), upper=True)],
       ref=lambda a, upper=False: _mT(NP.cholesky(_spd(np, a))) if upper else NP.cholesky(_spd(np, a)), rtol=1e-4),
    Fn("linalg.cholesky_ex", lambda L, a: L.linalg.cholesky_ex(_spd(L, a)),
       lambda r: [S(r.real((3, 3), "float64"))],
       ref=lambda a: (NP.cholesky(_spd(np, a)), np.zeros((), np.int32)), grad=False),
    Op("cholesky (not positive definite)", lambda r: [S(r.value([[1.0, 2.0], [2.0, 1.0]], "float64"), error=True)],
       names=["linalg.cholesky"]),

    # ---- factorizations, through what is unique ----------------------------------------------------
    Fn("linalg.qr", lambda L, a, *m: (lambda q, r_: (q @ r_, L.abs(r_.diagonal(dim1=-2, dim2=-1)), q.shape, r_.shape))(
           *L.linalg.qr(a, *m)),
       lambda r: [S(r.real((4, 3))), S(r.real((4, 3), "float64"), "complete", grad=False), S(r.real((3, 4), "float64"), "reduced", forward="rows >= columns"),
                  S(r.real((2, 4, 3), "float64"))],
       ref=lambda a, *m: (a, np.abs(np.diagonal(NP.qr(a, *m)[1], axis1=-2, axis2=-1)),
                          NP.qr(a, *m)[0].shape, NP.qr(a, *m)[1].shape), rtol=1e-4, atol=1e-5),
    Fn("linalg.eigh", lambda L, a, *u: (lambda w, v: (w, L.abs(v)))(*L.linalg.eigh(_spd(L, a), *u)),
       lambda r: [S(r.distinct((3, 3)) ), S(r.distinct((3, 3), "float64")), S(r.distinct((2, 3, 3), "float64"), "U")],
       ref=lambda a, *u: (NP.eigh(_spd(np, a))[0], np.abs(NP.eigh(_spd(np, a))[1])), rtol=1e-4, atol=1e-5),
    Fn("linalg.eigvalsh", lambda L, a, *u: L.linalg.eigvalsh(_spd(L, a), *u),
       lambda r: [S(r.distinct((3, 3))), S(r.distinct((2, 3, 3), "float64"), "U")],
       ref=lambda a, *u: NP.eigvalsh(_spd(np, a)), rtol=1e-4),
    Fn("linalg.svd", lambda L, a, **k: (lambda u, s, vh: (u @ L.diag_embed(s) @ vh, s, u.shape, vh.shape))(
           *L.linalg.svd(a, full_matrices=False, **k)),
       lambda r: [S(r.distinct((3, 3))), S(r.distinct((4, 3), "float64")), S(r.distinct((2, 3, 4), "float64"))],
       ref=lambda a, **k: (a, NP.svd(a, compute_uv=False), NP.svd(a, full_matrices=False)[0].shape,
                           NP.svd(a, full_matrices=False)[2].shape), rtol=1e-4, atol=1e-5),
    Fn("linalg.svd", lambda L, a: (lambda u, s, vh: (u.shape, s, vh.shape))(
           *L.linalg.svd(a, full_matrices=True)),
       lambda r: [S(r.distinct((4, 3), "float64"), forward="full U or V")],
       ref=lambda a: ((4, 4), NP.svd(a, compute_uv=False), (3, 3))),
    Op("svdvals", lambda r: [S(r.distinct((3, 3))), S(r.distinct((4, 3), "float64")), S(r.distinct((2, 3, 4), "float64"))],
       names=["linalg.svdvals"], ref=lambda a: NP.svd(a, compute_uv=False), rtol=1e-4),
    Fn("linalg.lu", _lu_rebuild, lambda r: [S(r.real((3, 3))), S(r.real((3, 3), "float64")), S(r.real((2, 3, 3), "float64"))],
       ref=lambda a: _well(np, a), rtol=1e-4),
    Fn(["linalg.lu_factor", "linalg.lu_solve"],
       lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(_well(L, a)), b),
       lambda r: [S(r.real((3, 3)), r.real((3, 2))), S(r.real((2, 3, 3), "float64"), r.real((3, 1), "float64"))],
       ref=lambda a, b: NP.solve(_well(np, a), b), rtol=1e-4),
    Fn("linalg.lu_factor_ex", lambda L, a: (lambda lu, piv, info: (lu.shape, piv.shape, info))(*L.linalg.lu_factor_ex(_well(L, a))),
       lambda r: [S(r.real((3, 3), "float64"))], ref=lambda a: ((3, 3), (3,), np.zeros((), np.int32)), grad=False),
    Fn(["linalg.ldl_factor", "linalg.ldl_solve"],
       lambda L, a, b: L.linalg.ldl_solve(*L.linalg.ldl_factor(_spd(L, a) - 4 * L.eye(3, dtype=a.dtype)), b),
       lambda r: [S(r.real((3, 3), "float64"), r.real((3, 2), "float64"), grad=False)],
       ref=lambda a, b: NP.solve(_spd(np, a) - 4 * np.eye(3), b), rtol=1e-6),
    Fn("linalg.ldl_factor_ex", lambda L, a: (lambda ld, piv, info: (ld.shape, piv.shape, info))(
           *L.linalg.ldl_factor_ex(_spd(L, a))),
       lambda r: [S(r.real((3, 3), "float64"), grad=False)], ref=lambda a: ((3, 3), (3,), np.zeros((), np.int32))),
    Op("householder_product", lambda r: [S(r.real((4, 3), "float64"), r.real((2,), "float64")),
                                         S(r.real((3, 3)), r.real((3,)))],
       names=["linalg.householder_product"], ref=_householder, rtol=1e-5),
]


def _expm_sym(a):
    """exp of a symmetric matrix from its eigendecomposition."""
    w, v = NP.eigh(a)
    return v @ (np.exp(w)[..., None] * _mT(v))
