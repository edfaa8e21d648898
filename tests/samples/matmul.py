"""Products and the torch-level linear algebra: mm, bmm, matmul, addmm, einsum, tensordot, det, solve, qr, svd...

Matrices are small (2-4), float32 and float64, batched and transposed (non-contiguous); decompositions are
compared through quantities that do not depend on sign choices where PyTorch's own tests do the same.
References: NumPy.
"""
import numpy as np

from . import Check, Fn, Op, S


def _spd(r, n=3, dtype="float64", batch=()):
    a = r.rng.standard_normal(batch + (n, n))
    return r.value(a @ np.swapaxes(a, -1, -2) + n * np.eye(n), dtype)


def _well(r, n=3, dtype="float64", batch=()):
    return r.value(r.rng.standard_normal(batch + (n, n)) + 3 * np.eye(n), dtype)


def _addmm(c, a, b, beta=1, alpha=1):
    return beta * c + alpha * (a @ b)


def _addbmm(c, a, b, beta=1, alpha=1):
    return beta * c + alpha * (a @ b).sum(0)


def _addr(c, a, b, beta=1, alpha=1):
    return beta * c + alpha * np.outer(a, b)


ENTRIES = [
    Op("mm", lambda r: [S(r.real((2, 3)), r.real((3, 4))), S(r.real((2, 3), "float64", layout="T"),
                                                             r.real((3, 2), "float64")),
                        S(r.ints((2, 3)), r.ints((3, 2))), S(r.real((2, 3)), r.real((2, 3)), error=True)],
       ref=np.matmul),
    Op("bmm", lambda r: [S(r.real((2, 2, 3)), r.real((2, 3, 2))), S(r.real((2, 3, 3), "float64", layout="T"),
                                                                    r.real((2, 3, 1), "float64"))], ref=np.matmul),
    Op("matmul", lambda r: [S(r.real((2, 3)), r.real((3, 4))), S(r.real((3,), "float64"), r.real((3, 2), "float64")),
                            S(r.real((2, 3), "float64"), r.real((3,), "float64")),
                            S(r.real((3,), "float64"), r.real((3,), "float64")),
                            S(r.real((2, 1, 2, 3), "float64"), r.real((3, 3, 2), "float64")),
                            S(r.ints((2, 3)), r.ints((3,)))], ref=np.matmul, out=True),
    Op("mv", lambda r: [S(r.real((2, 3)), r.real((3,))), S(r.real((2, 3), "float64", layout="T"),
                                                           r.real((3,), "float64"))], ref=np.matmul, out=True),
    Op("dot", lambda r: [S(r.real((3,)), r.real((3,))), S(r.real((4,), "float64"), r.real((4,), "float64")),
                         S(r.ints((3,)), r.ints((3,)))], ref=np.dot, out=True),
    Op("vdot", lambda r: [S(r.real((3,)), r.real((3,))), S(r.real((4,), "float64"), r.real((4,), "float64"))],
       ref=np.vdot, out=True),
    Op("inner", lambda r: [S(r.real((2, 3)), r.real((4, 3))), S(r.real((3,), "float64"), r.real((3,), "float64"))],
       ref=np.inner, out=True),
    Op("outer", lambda r: [S(r.real((2,)), r.real((3,))), S(r.real((3,), "float64"), r.real((2,), "float64")),
                           S(r.ints((2,)), r.ints((2,)))], aliases=("ger",), ref=np.outer, out=True),
    Op("addmm", lambda r: [S(r.real((2, 2)), r.real((2, 3)), r.real((3, 2))),
                           S(r.real((2,), "float64"), r.real((2, 3), "float64"), r.real((3, 2), "float64"),
                             beta=0.5, alpha=2.0),
                           S(r.real((2, 2), "float64"), r.real((2, 3), "float64"), r.real((3, 2), "float64"),
                             beta=0)], ref=_addmm, out=True),
    Op("addmv", lambda r: [S(r.real((2,)), r.real((2, 3)), r.real((3,))),
                           S(r.real((2,), "float64"), r.real((2, 3), "float64"), r.real((3,), "float64"),
                             beta=2, alpha=-1)], ref=_addmm, out=True),
    Op("addbmm", lambda r: [S(r.real((2, 2)), r.real((3, 2, 3)), r.real((3, 3, 2))),
                            S(r.real((2, 2), "float64"), r.real((3, 2, 3), "float64"), r.real((3, 3, 2), "float64"),
                              beta=0.5, alpha=3)], ref=_addbmm, out=True),
    Op("baddbmm", lambda r: [S(r.real((2, 2, 2)), r.real((2, 2, 3)), r.real((2, 3, 2))),
                             S(r.real((2, 2), "float64"), r.real((2, 2, 3), "float64"), r.real((2, 3, 2), "float64"),
                               beta=-1, alpha=0.5)], ref=_addmm, out=True),
    Op("addr", lambda r: [S(r.real((2, 3)), r.real((2,)), r.real((3,))),
                          S(r.real((3,), "float64"), r.real((2,), "float64"), r.real((3,), "float64"), beta=2,
                            alpha=0.5)], ref=_addr, out=True),
    Fn("torch.chain_matmul", lambda L, *ms: L.chain_matmul(*ms),
       lambda r: [S(r.real((2, 3)), r.real((3, 4)), r.real((4, 2))), S(r.real((2, 2), "float64"),
                                                                       r.real((2, 3), "float64"))],
       ref=lambda *ms: np.linalg.multi_dot(ms)),
    Fn("torch.einsum", lambda L, eq, *xs: L.einsum(eq, *xs),
       lambda r: [S("ij,jk->ik", r.real((2, 3)), r.real((3, 2))),
                  S("bij,bjk->bik", r.real((2, 2, 3), "float64"), r.real((2, 3, 2), "float64")),
                  S("i,j", r.real((2,), "float64"), r.real((3,), "float64")),
                  S("...j,j->...", r.real((2, 3), "float64"), r.real((3,), "float64")),
                  S("ij->", r.real((2, 3), "float64")),
                  S("ii->i", r.real((3, 3), "float64"))],
       ref=lambda eq, *xs: np.einsum(eq, *xs)),
    Op("tensordot", lambda r: [S(r.real((2, 3, 4)), r.real((4, 3, 2)), dims=([1, 2], [1, 0])),
                               S(r.real((2, 3), "float64"), r.real((3, 2), "float64"), 1),
                               S(r.real((2, 3), "float64"), r.real((2, 3), "float64"), dims=2),
                               S(r.real((2, 3), "float64"), r.real((3, 2), "float64"), dims=0)],
       ref=lambda a, b, dims=2: np.tensordot(a, b, dims), out=True),
    Op("cross", lambda r: [S(r.real((2, 3)), r.real((2, 3))), S(r.real((3, 2), "float64"), r.real((3, 2), "float64"),
                                                                dim=0)],
       ref=lambda a, b, dim=None: np.cross(a, b, axis=-1 if dim is None else dim), out=True),
    Op("cdist", lambda r: [S(r.real((3, 4)), r.real((2, 4))), S(r.real((2, 3, 4), "float64"),
                                                                r.real((2, 2, 4), "float64"), p=1.0),
                           S(r.real((3, 2), "float64"), r.real((2, 2), "float64"), 3.0)],
       names=["torch.cdist"],
       ref=lambda a, b, p=2.0: (np.abs(a[..., :, None, :] - b[..., None, :, :]) ** p).sum(-1) ** (1 / p)),
    Op("det", lambda r: [S(_well(r, dtype="float32")), S(_well(r, batch=(2,))), S(r.real((2, 2), "float64"))],
       ref=np.linalg.det),
    Op("logdet", lambda r: [S(_spd(r, dtype="float32")), S(_spd(r, batch=(2,)))],
       ref=lambda a: np.linalg.slogdet(a)[1]),
    Op("slogdet", lambda r: [S(_well(r, dtype="float32")), S(_well(r, batch=(2,)))],
       ref=lambda a: tuple(np.linalg.slogdet(a))),
    Op("inverse", lambda r: [S(_well(r, dtype="float32")), S(_well(r, batch=(2,)))], ref=np.linalg.inv, out=True),
    Op("pinverse", lambda r: [S(r.real((3, 2), "float64")), S(r.real((2, 3), "float64"), rcond=1e-10)],
       ref=lambda a, rcond=1e-15: np.linalg.pinv(a, rcond)),
    # on the symmetric part of the input, so that finite differences see the function the gradient describes
    Fn(["torch.cholesky", "Tensor.cholesky"],
       lambda L, a, **k: ((a + a.transpose(-1, -2)) / 2).cholesky(**k) if k else L.cholesky(
           (a + a.transpose(-1, -2)) / 2),
       lambda r: [S(_spd(r, dtype="float32")), S(_spd(r, batch=(2,))), S(_spd(r), upper=True)],
       ref=lambda a, upper=False: np.swapaxes(np.linalg.cholesky(a), -1, -2) if upper else np.linalg.cholesky(a)),
    Op("cholesky_inverse", lambda r: [S(r.value(np.linalg.cholesky(_spd(r).array), "float64")),
                                      S(r.value(np.linalg.cholesky(_spd(r).array).T, "float64"), upper=True)],
       ref=lambda l, upper=False: np.linalg.inv(l.T @ l if upper else l @ l.T)),
    Op("cholesky_solve", lambda r: [S(r.real((3, 2), "float64"), r.value(np.linalg.cholesky(_spd(r).array),
                                                                          "float64")),
                                    S(r.real((3, 1), "float64"), r.value(np.linalg.cholesky(_spd(r).array).T,
                                                                         "float64"), upper=True)],
       ref=lambda b, l, upper=False: np.linalg.solve(l.T @ l if upper else l @ l.T, b)),
    Op("triangular_solve", lambda r: [S(r.real((3, 2), "float64"), r.value(np.triu(_well(r).array), "float64")),
                                      S(r.real((3, 2), "float64"), r.value(np.tril(_well(r).array), "float64"),
                                        upper=False),
                                      S(r.real((3, 2), "float64"), r.value(np.triu(_well(r).array), "float64"),
                                        transpose=True, unitriangular=True)], gradgrad=False),
    Check(["torch.solve", "Tensor.solve"], lambda L: _removed(L, "solve")),
    Check(["torch.lstsq", "Tensor.lstsq"], lambda L: _removed(L, "lstsq")),
    Check(["torch.symeig", "Tensor.symeig"], lambda L: _removed(L, "symeig")),
    Check(["torch.eig"], lambda L: _removed(L, "eig")),
    Check(["torch.matrix_rank"], lambda L: _removed(L, "matrix_rank")),
    # Q R (the input back) and |R| (Q and R are unique up to the signs of R's rows)
    Fn(["torch.qr", "Tensor.qr"],
       lambda L, a, **k: (lambda q, rr: (q @ rr, rr.abs()))(*(L.qr(a, **k) if k else a.qr())),
       lambda r: [S(r.real((3, 2))), S(r.real((3, 2), "float64"), some=False, grad=False),
                  S(r.real((2, 3, 2), "float64"), grad=False)],
       ref=lambda a, some=True: (a, np.abs(np.linalg.qr(a, "reduced" if some else "complete")[1])), gradgrad=False),
    # the singular values (U and V are unique only up to signs)
    Fn(["torch.svd", "Tensor.svd"], lambda L, a, **k: (L.svd(a, **k) if k else a.svd())[1],
       lambda r: [S(r.real((3, 2))), S(r.real((2, 3), "float64"), some=False, forward="full U or V"),
                  S(r.real((3, 2), "float64"), compute_uv=False, grad=False)],
       ref=lambda a, **k: np.linalg.svd(a, compute_uv=False), gradgrad=False),
    Op("matrix_power", lambda r: [S(r.real((3, 3)), 2), S(r.real((2, 3, 3), "float64"), 3),
                                  S(_well(r), -1), S(r.real((3, 3), "float64"), 0, grad=False)],
       ref=np.linalg.matrix_power),
    Op("matrix_exp", lambda r: [S(r.real((3, 3), scale=0.5)), S(r.real((2, 2, 2), "float64", scale=0.5))],
       ref=lambda a: _expm(a)),
    Op("lu", lambda r: [S(_well(r)), S(_well(r), get_infos=True, grad=False)], grad=False),
    Op("lu_solve", lambda r: [S(r.real((3, 2), "float64"), *_lu_factors(r))], grad=False),
    Op("lu_unpack", lambda r: [S(*_lu_factors(r))], grad=False),
    Op("geqrf", lambda r: [S(r.real((3, 2), "float64"))], grad=False),
    Op("orgqr", lambda r: [S(*_geqrf(r))], grad=False),
    Op("ormqr", lambda r: [S(*_geqrf(r), r.real((3, 2), "float64")),
                           S(*_geqrf(r), r.real((3, 2), "float64"), transpose=True)], grad=False),
    Fn("torch.lobpcg", lambda L, a, **k: L.lobpcg(a, **k)[0],
       lambda r: [S(_spd(r, 6), k=1, largest=True, grad=False)],
       ref=lambda a, k=1, largest=True: np.linalg.eigvalsh(a)[-k:][::-1], rtol=1e-5),
    Fn("torch.pca_lowrank", lambda L, a, **k: L.pca_lowrank(a, **k)[1],
       lambda r: [S(r.real((6, 3), "float64"), q=3, grad=False)]),
    Fn("torch.svd_lowrank", lambda L, a, **k: L.svd_lowrank(a, **k)[1],
       lambda r: [S(r.real((6, 3), "float64"), q=3, grad=False)],
       ref=lambda a, q=6: np.linalg.svd(a, compute_uv=False)[:q]),
    Op("norm_except_dim", lambda r: [S(r.real((2, 3), "float64"), 2, 0), S(r.real((2, 3), "float64"), 2, 1)],
       names=["torch.norm_except_dim"]),
]


def _expm(a):
    out, term = np.broadcast_to(np.eye(a.shape[-1]), a.shape).copy(), np.broadcast_to(np.eye(a.shape[-1]),
                                                                                      a.shape).copy()
    for k in range(1, 30):
        term = term @ a / k
        out = out + term
    return out


def _lu_factors(r):
    # PyTorch's packed LU (L below the diagonal, U on and above; 1-based pivots), by partial pivoting
    a = _well(r).array.astype(np.float64)
    n = a.shape[0]
    lu, piv = a.copy(), np.arange(1, n + 1)
    for k in range(n):
        p = k + int(np.argmax(np.abs(lu[k:, k])))
        piv[k] = p + 1
        lu[[k, p]] = lu[[p, k]]
        lu[k + 1:, k] /= lu[k, k]
        lu[k + 1:, k + 1:] -= np.outer(lu[k + 1:, k], lu[k, k + 1:])
    return r.value(lu, "float64"), r.value(piv, "int32")


def _geqrf(r):
    """A Householder QR in LAPACK's packed form (reflectors below the diagonal, tau)."""
    a = r.real((3, 2), "float64").array.astype(np.float64)
    m, n = a.shape
    tau = np.zeros(n)
    for k in range(n):
        x = a[k:, k].copy()
        alpha = -np.copysign(np.linalg.norm(x), x[0])
        v = x
        v[0] -= alpha
        v = v / v[0]
        tau[k] = 2 / (v @ v)
        a[k:, k:] -= tau[k] * np.outer(v, v @ a[k:, k:])
        a[k + 1:, k] = v[1:]
    return r.value(a, "float64"), r.value(tau, "float64")


def _removed(L, name):
    """A function PyTorch removed: calling it raises RuntimeError, pointing at torch.linalg."""
    try:
        getattr(L, name)(L.eye(2), L.eye(2))
    except RuntimeError as error:
        assert "linalg" in str(error) or "removed" in str(error) or "deprecated" in str(error), str(error)
        return "raised"
    raise AssertionError(f"{name} did not raise")

