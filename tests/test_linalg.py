"""minigrad.linalg (torch.linalg) and the older torch-level names (torch.lu, torch.cholesky_solve, ...): values, gradients (gradcheck and gradgradcheck in float64), batches,
PyTorch's torch-level names, errors; and the same against PyTorch where installed."""
import math
import sys

import numpy as np
import pytest

import minigrad as mg
import minigrad.linalg as LA
from minigrad.autograd import gradcheck, gradgradcheck

from conftest import torch

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
RNG = np.random.default_rng(7)
SQUARE = RNG.standard_normal((2, 4, 4))  # a batch of two 4x4 matrices
TALL = RNG.standard_normal((2, 5, 3))
RHS = RNG.standard_normal((2, 4, 3))


def t(a):
    return mg.tensor(a, dtype=mg.float64, requires_grad=True)


def spd(lib, x):
    """A symmetric positive-definite matrix made from any x: x x^T + n I."""
    return x @ x.mT + 4 * lib.eye(x.shape[-1], dtype=x.dtype)


def sym(lib, x):
    return x + x.mT


# function of the input(s), by name; each output is gauge-free (a singular/eigen vector's sign is arbitrary)
CASES = {
    "inv": (lambda lib, a: lib.linalg.inv(a), [SQUARE]),
    "det": (lambda lib, a: lib.linalg.det(a), [SQUARE]),
    "slogdet": (lambda lib, a: lib.linalg.slogdet(a)[1], [SQUARE]),
    "solve": (lambda lib, a, b: lib.linalg.solve(a, b), [SQUARE, RHS]),
    "solve_vector": (lambda lib, a, b: lib.linalg.solve(a, b[..., 0]), [SQUARE, RHS]),
    "solve_right": (lambda lib, a, b: lib.linalg.solve(a, b.mT, left=False), [SQUARE, RHS]),
    "cholesky": (lambda lib, x: lib.linalg.cholesky(spd(lib, x)), [SQUARE]),
    "cholesky_upper": (lambda lib, x: lib.linalg.cholesky(spd(lib, x), upper=True), [SQUARE]),
    "eigh": (lambda lib, x: (lambda w, v: (w, v * v))(*lib.linalg.eigh(sym(lib, x))), [SQUARE]),
    "eigvalsh": (lambda lib, x: lib.linalg.eigvalsh(sym(lib, x)), [SQUARE]),
    "svd_tall": (lambda lib, a: (lambda u, s, vh: (s, u @ vh, u * u))(*lib.linalg.svd(a, full_matrices=False)),
                 [TALL]),
    "svd_wide": (lambda lib, a: (lambda u, s, vh: (s, u @ vh, vh * vh))(*lib.linalg.svd(a.mT, full_matrices=False)),
                 [TALL]),
    "svd_full": (lambda lib, a: (lambda u, s, vh: (s, u[..., :s.shape[-1]] @ vh))(*lib.linalg.svd(a)), [TALL]),
    "svdvals": (lambda lib, a: lib.linalg.svdvals(a), [TALL]),
    "qr_tall": (lambda lib, a: tuple(lib.linalg.qr(a)), [TALL]),
    "qr_wide": (lambda lib, a: tuple(lib.linalg.qr(a.mT)), [TALL]),
    "qr_square": (lambda lib, a: tuple(lib.linalg.qr(a)), [SQUARE]),
    "pinv_tall": (lambda lib, a: lib.linalg.pinv(a), [TALL]),
    "pinv_wide": (lambda lib, a: lib.linalg.pinv(a.mT), [TALL]),
    "pinv_hermitian": (lambda lib, x: lib.linalg.pinv(sym(lib, x), hermitian=True), [SQUARE]),
    "vector_norm": (lambda lib, a: lib.linalg.vector_norm(a, 3, dim=-1), [TALL]),
    "norm_flat": (lambda lib, a: lib.linalg.norm(a), [TALL]),
    "norm_dim": (lambda lib, a: lib.linalg.norm(a, dim=1), [TALL]),
    "matrix_power": (lambda lib, a: lib.linalg.matrix_power(a, 3), [SQUARE]),
    "matrix_power_neg": (lambda lib, a: lib.linalg.matrix_power(a, -2), [SQUARE]),
    "torch_det": (lambda lib, a: lib.det(a), [SQUARE]),
    "torch_logdet": (lambda lib, x: lib.logdet(spd(lib, x)), [SQUARE]),
    "torch_inverse": (lambda lib, a: lib.inverse(a), [SQUARE]),
    "torch_svd": (lambda lib, a: (lambda u, s, v: (s, u @ v.mT))(*lib.svd(a)), [TALL]),
    "torch_pinverse": (lambda lib, a: lib.pinverse(a), [TALL]),
    "tensor_methods": (lambda lib, a: (a.det(), a.inverse(), a.slogdet()[1]), [SQUARE]),
}
for _ord in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
    CASES[f"matrix_norm_{_ord}"] = (lambda lib, a, o=_ord: lib.linalg.matrix_norm(a, o), [TALL])
    CASES[f"norm_ord_{_ord}"] = (lambda lib, a, o=_ord: lib.linalg.norm(a[0], o), [TALL])
CASES["matrix_norm_dims_keepdim"] = (lambda lib, a: lib.linalg.matrix_norm(a, "nuc", dim=(0, 2), keepdim=True), [TALL])
VEC3 = RNG.standard_normal((2, 2, 3))  # two batches of two 3-vectors
TENSOR4 = RNG.standard_normal((2, 3, 6))  # as a 6x6 system for tensorinv (ind=2) and tensorsolve
TALL_RHS = RNG.standard_normal((2, 5, 2))
TAU = RNG.random((2, 2)) + 0.5
TAU3 = RNG.random((2, 3)) + 0.5
CASES.update({
    "vecdot": (lambda lib, x: lib.linalg.vecdot(x[:, 0], x[:, 1]), [VEC3]),
    "cross": (lambda lib, x: lib.linalg.cross(x[:, 0], x[:, 1]), [VEC3]),
    "diagonal": (lambda lib, a: lib.linalg.diagonal(a, offset=1), [TALL]),
    "diagonal_dims": (lambda lib, a: lib.linalg.diagonal(a, offset=-1, dim1=0, dim2=2), [TALL]),
    "multi_dot": (lambda lib, a, b, x: lib.linalg.multi_dot([x[0, 0, :2], a[0, :2], b[0]]), [SQUARE, RHS, VEC3]),
    "cond": (lambda lib, a: lib.linalg.cond(a), [TALL]),
    "cond_fro": (lambda lib, a: lib.linalg.cond(a, "fro"), [SQUARE]),
    "cond_1": (lambda lib, a: lib.linalg.cond(a, 1), [SQUARE]),
    "solve_triangular": (lambda lib, a, b: lib.linalg.solve_triangular(a + 3 * lib.eye(a.shape[-1], dtype=a.dtype), b,
                                                                       upper=True), [SQUARE, RHS]),
    "solve_triangular_unit_right": (lambda lib, a, b: lib.linalg.solve_triangular(a, b.mT, upper=False, left=False,
                                                                                  unitriangular=True), [SQUARE, RHS]),
    "tensorinv": (lambda lib, a: lib.linalg.tensorinv(a.reshape(6, 6).reshape(2, 3, 3, 2)[:, :, :, :], ind=2),
                  [TENSOR4]),
    "tensorsolve": (lambda lib, a, x: lib.linalg.tensorsolve(a.reshape(6, 6).reshape(2, 3, 6), x[0]), [TENSOR4, VEC3]),
    "vander": (lambda lib, x: lib.linalg.vander(x, N=4), [VEC3]),
    "lstsq": (lambda lib, a, b: lib.linalg.lstsq(a, b).solution, [TALL, TALL_RHS]),
    "matrix_exp": (lambda lib, a: lib.linalg.matrix_exp(3 * a), [SQUARE]),
    "householder_product": (lambda lib, a, tau: lib.linalg.householder_product(a, tau), [TALL, TAU]),
    "inv_ex": (lambda lib, a: lib.linalg.inv_ex(a)[0], [SQUARE]),
    "cholesky_ex": (lambda lib, x: lib.linalg.cholesky_ex(spd(lib, x))[0], [SQUARE]),
    "solve_ex": (lambda lib, a, b: lib.linalg.solve_ex(a, b)[0], [SQUARE, RHS]),
    "lu": (lambda lib, a: tuple(lib.linalg.lu(a)), [SQUARE]),
    "lu_tall": (lambda lib, a: tuple(lib.linalg.lu(a))[1:], [TALL]),
    "lu_wide": (lambda lib, a: tuple(lib.linalg.lu(a.mT))[1:], [TALL]),
    "lu_factor": (lambda lib, a: lib.linalg.lu_factor(a).LU, [SQUARE]),
    "lu_solve": (lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b), [SQUARE, RHS]),
    "torch_lu_solve": (lambda lib, a, b: lib.lu_solve(b, *lib.linalg.lu_factor(a)), [SQUARE, RHS]),
    "torch_lu_unpack": (lambda lib, a: tuple(lib.lu_unpack(*lib.linalg.lu_factor(a)))[1:], [SQUARE]),
    "torch_cholesky_solve": (lambda lib, x, b: lib.cholesky_solve(b, lib.linalg.cholesky(spd(lib, x))), [SQUARE, RHS]),
    "torch_cholesky_solve_upper": (lambda lib, x, b: lib.cholesky_solve(b, lib.linalg.cholesky(spd(lib, x)).mT,
                                                                        upper=True), [SQUARE, RHS]),
    "torch_cholesky_inverse": (lambda lib, x: lib.cholesky_inverse(lib.linalg.cholesky(spd(lib, x))[0]), [SQUARE]),
    "torch_triangular_solve": (lambda lib, a, b: lib.triangular_solve(b, a + 3 * lib.eye(a.shape[-1], dtype=a.dtype),
                                                                      upper=False, transpose=True).solution,
                               [SQUARE, RHS]),
    "torch_matrix_exp": (lambda lib, a: a.matrix_exp(), [SQUARE]),
    "torch_frobenius_norm": (lambda lib, a: lib.frobenius_norm(a, (1, 2)), [TALL]),
    "torch_nuclear_norm": (lambda lib, a: lib.nuclear_norm(a, keepdim=True), [TALL]),
    "torch_orgqr": (lambda lib, a, tau: lib.orgqr(a[0], tau[0]), [TALL, TAU]),
    "torch_ormqr": (lambda lib, a, tau, b: lib.ormqr(a[0], tau[0], b[0].mT, left=False, transpose=True),
                    [TALL, TAU3, TALL_RHS]),
    "lu_solve_adjoint_right": (lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b.mT, left=False,
                                                                     adjoint=True), [SQUARE, RHS]),
})
SMALL = {id(SQUARE): SQUARE[:1, :3, :3], id(RHS): RHS[:1, :3, :2], id(TALL): TALL[:1, :4, :2], id(TALL_RHS): TALL_RHS[:1, :4],
         id(TAU): TAU[:1], id(TAU3): TAU3[:1, :2]}
TWICE = set(CASES)  # every one is twice differentiable at these (generic) inputs


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck(name):
    fn, arrays = CASES[name]
    inputs = tuple(t(a) for a in arrays)
    assert gradcheck(lambda *xs: fn(mg, *xs), inputs)


@pytest.mark.parametrize("name", sorted(TWICE))
def test_gradgradcheck(name):
    fn, arrays = CASES[name]
    if name in ("multi_dot", "matrix_exp", "torch_matrix_exp"):
        arrays = [a[:1] for a in arrays]
    inputs = tuple(t(SMALL.get(id(a), a)) for a in arrays)  # smaller matrices: second order is slower
    assert gradgradcheck(lambda *xs: fn(mg, *xs), inputs)


def test_values_by_definition():
    """Each result checked by what it must satisfy, not by another implementation."""
    a, b = mg.tensor(SQUARE), mg.tensor(RHS)
    eye = np.eye(4)
    np.testing.assert_allclose((a @ LA.inv(a)).numpy(), np.broadcast_to(eye, (2, 4, 4)), atol=1e-12)
    np.testing.assert_allclose((a @ LA.solve(a, b)).numpy(), RHS, atol=1e-12)
    low = LA.cholesky(spd(mg, a))
    np.testing.assert_allclose((low @ low.mT).numpy(), spd(mg, a).numpy(), atol=1e-12)
    assert not np.triu(low.numpy(), 1).any() and (np.diagonal(low.numpy(), 0, -2, -1) > 0).all()
    w, v = LA.eigh(sym(mg, a))
    np.testing.assert_allclose((v @ (w.unsqueeze(-1) * v.mT)).numpy(), sym(mg, a).numpy(), atol=1e-12)
    assert (np.diff(w.numpy(), axis=-1) >= 0).all()
    u, s, vh = LA.svd(mg.tensor(TALL), full_matrices=False)
    np.testing.assert_allclose(((u * s.unsqueeze(-2)) @ vh).numpy(), TALL, atol=1e-12)
    q, r = LA.qr(mg.tensor(TALL))
    np.testing.assert_allclose((q @ r).numpy(), TALL, atol=1e-12)
    np.testing.assert_allclose((q.mT @ q).numpy(), np.broadcast_to(np.eye(3), (2, 3, 3)), atol=1e-12)
    # det of a triangular matrix is the product of its diagonal; of a permutation, its sign
    tri = mg.tensor([[2.0, 5.0, 1.0], [0.0, -3.0, 7.0], [0.0, 0.0, 0.5]], dtype=mg.float64)
    assert LA.det(tri).item() == pytest.approx(-3.0)
    sign, logabs = LA.slogdet(tri)
    assert sign.item() == -1.0 and logabs.item() == pytest.approx(math.log(3.0))
    assert math.isnan(mg.logdet(tri).item())
    m = mg.tensor([[1.0, -2.0], [3.0, 4.0]], dtype=mg.float64)
    assert LA.matrix_norm(m, 1).item() == 6.0  # the largest column sum of |m|: 2 + 4
    assert LA.matrix_norm(m, -1).item() == 4.0
    assert LA.matrix_norm(m, math.inf).item() == 7.0  # the largest row sum: 3 + 4
    assert LA.matrix_norm(m, -math.inf).item() == 3.0
    assert LA.matrix_norm(m).item() == pytest.approx(math.sqrt(30))
    p = LA.pinv(mg.tensor(TALL))
    np.testing.assert_allclose((p @ mg.tensor(TALL)).numpy(), np.broadcast_to(np.eye(3), (2, 3, 3)), atol=1e-12)
    assert LA.matrix_power(m, 0).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    np.testing.assert_allclose(LA.matrix_power(m, 3).numpy(), (m @ m @ m).numpy())


def test_det_gradient_at_singular_matrices():
    """d det/dA = adj(A)^T: nonzero at rank n - 1 (where A^-1 does not exist), zero at rank n - 2.
    (PyTorch 2.13 gives 0 at rank n - 1 too; the cofactors are what central differences give.)"""
    rank2 = mg.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 5.0]], dtype=mg.float64, requires_grad=True)
    LA.det(rank2).backward()
    # the cofactors of rank2, by hand: C_ij = (-1)^(i+j) * minor_ij
    cof = np.array([[4 * 5 - 6 * 1, -(2 * 5 - 6 * 0), 2 * 1 - 4 * 0],
                    [-(2 * 5 - 3 * 1), 1 * 5 - 3 * 0, -(1 * 1 - 2 * 0)],
                    [2 * 6 - 3 * 4, -(1 * 6 - 3 * 2), 1 * 4 - 2 * 2]], dtype=float)
    np.testing.assert_allclose(rank2.grad.numpy(), cof, atol=1e-10)
    assert gradcheck(LA.det, (rank2,))
    rank1 = mg.tensor(np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 2.0]), requires_grad=True)
    LA.det(rank1).backward()
    np.testing.assert_allclose(rank1.grad.numpy(), 0, atol=1e-10)


def test_the_integer_results():
    """matrix_rank counts the singular values above the cutoff; the _ex forms' info flags each failure."""
    rank2 = mg.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 5.0]], dtype=mg.float64)
    assert LA.matrix_rank(rank2).item() == 2 and LA.matrix_rank(mg.eye(3)).item() == 3
    assert LA.matrix_rank(rank2, atol=100.0).item() == 0
    assert LA.matrix_rank(mg.stack([rank2, mg.eye(3, dtype=mg.float64)])).tolist() == [2, 3]
    result, info = LA.inv_ex(mg.stack([rank2, mg.eye(3, dtype=mg.float64)]))
    assert info.tolist() == [3, 0] and info.dtype == mg.int32  # LU's third pivot is 0
    not_pd = mg.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 2.0], [0.0, 2.0, 1.0]], dtype=mg.float64)
    assert LA.cholesky_ex(not_pd)[1].item() == 3  # the first leading minor that is not positive-definite
    assert LA.cholesky_ex(mg.eye(2))[1].item() == 0
    with pytest.raises(mg.linalg.LinAlgError):
        LA.cholesky_ex(not_pd, check_errors=True)
    x = mg.tensor([2.0, 3.0])
    assert LA.vander(x).tolist() == [[1.0, 2.0], [1.0, 3.0]]
    assert LA.cross(mg.tensor([1.0, 0.0, 0.0]), mg.tensor([0.0, 1.0, 0.0])).tolist() == [0.0, 0.0, 1.0]
    e = LA.matrix_exp(mg.tensor([[0.0, 1.0], [-1.0, 0.0]], dtype=mg.float64))  # a rotation by 1 radian
    np.testing.assert_allclose(e.numpy(), [[math.cos(1), math.sin(1)], [-math.sin(1), math.cos(1)]], atol=1e-14)


@needs_torch
def test_integer_results_as_pytorch():
    a = np.stack([SQUARE[0], np.outer([1.0, 2, 3, 4], [1.0, 0, 1, 2])])
    for f in (lambda L: L.linalg.matrix_rank(L.tensor(a)), lambda L: L.linalg.inv_ex(L.tensor(a))[1],
              lambda L: L.linalg.lu_factor_ex(L.tensor(a)).info, lambda L: L.linalg.lu_factor_ex(L.tensor(a)).pivots,
              lambda L: L.linalg.cholesky_ex(L.tensor(a))[1], lambda L: L.linalg.lstsq(L.tensor(TALL), L.tensor(TALL_RHS)).rank):
        assert f(mg).tolist() == f(torch).tolist()


def test_errors():
    with pytest.raises(mg.linalg.LinAlgError, match=r"linalg.lu_factor: U\[2,2\] is zero"):
        LA.lu_factor(mg.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 5.0]]))
    with pytest.raises(mg.linalg.LinAlgError, match="linalg.inv: the input matrix is singular"):
        LA.inv(mg.zeros(2, 2))
    with pytest.raises(RuntimeError, match="not positive-definite"):
        LA.cholesky(-mg.eye(2))
    with pytest.raises(mg.ShapeError, match=r"linalg.det: expects a square matrix .* got shape \(2, 3\)"):
        LA.det(mg.zeros(2, 3))
    with pytest.raises(mg.ShapeError, match="linalg.solve"):
        LA.solve(mg.eye(3), mg.zeros(4, 2))
    with pytest.raises(ValueError, match="input must be 1-D or 2-D"):
        LA.norm(mg.zeros(2, 2, 2), ord=2)
    with pytest.raises(TypeError, match="out= is not supported"):
        LA.inv(mg.eye(2), out=mg.eye(2))
    x = t(TALL[0])
    q, r = LA.qr(x, mode="complete")
    with pytest.raises(RuntimeError, match="mode='complete' and nrows > ncols"):
        q.sum().backward()


def test_import_torch_linalg():
    """`import torch.linalg` with torch bound to minigrad gives minigrad.linalg (torch_compat/import_alias.py)."""
    import subprocess
    code = ("import sys, minigrad; sys.modules['torch'] = minigrad; import torch.linalg; "
            "from torch.linalg import svd; assert torch.linalg is minigrad.linalg and svd is minigrad.linalg.svd")
    subprocess.run([sys.executable, "-c", code], check=True)


# PyTorch 2.13's own backward of cond with p = 'fro' or 1 stops ("modified by an inplace operation"):
# their values are compared, their gradients are checked by gradcheck above
TORCH_FAILS_BACKWARD = {"cond_fro", "cond_1"}


@needs_torch
@pytest.mark.parametrize("name", sorted(CASES))
def test_as_pytorch(name):
    fn, arrays = CASES[name]
    results = []
    for lib in (mg, torch):
        inputs = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
        out = fn(lib, *inputs)
        outs = out if isinstance(out, tuple) else (out,)
        weights = [np.random.default_rng(k).standard_normal(tuple(o.shape)) for k, o in enumerate(outs)]
        total = sum((o * lib.tensor(w)).sum() for o, w in zip(outs, weights))
        if lib is torch and name in TORCH_FAILS_BACKWARD:
            results.append(([o.detach().numpy() for o in outs], results[0][1]))  # values only
            continue
        total.backward()
        results.append(([o.detach().numpy() for o in outs], [x.grad.numpy() for x in inputs]))
    (ours, our_grads), (theirs, their_grads) = results
    for a, b in zip(ours + our_grads, theirs + their_grads):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10, err_msg=name)
