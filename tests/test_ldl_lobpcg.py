"""torch.linalg.ldl_factor / ldl_factor_ex / ldl_solve (Bunch-Kaufman LDL^T) and torch.lobpcg."""
import numpy as np
import pytest

import minigrad
from minigrad.errors import LinAlgError, ShapeError

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


def symmetric(rng, n, small_diagonal=False):
    a = rng.standard_normal((n, n))
    a = a + a.T
    if small_diagonal:  # makes 2x2 pivots likely
        a[np.diag_indices(n)] *= 0.01
    return a


def unpack(LD, pivots):
    """(P, L, D) with A = P L D L^T P^T, read from LAPACK's lower sytrf format, independently of the code
    under test: each step k applies its interchange to the rows of L's columns from k on."""
    n = LD.shape[0]
    L, D = np.eye(n), np.zeros((n, n))
    perm = np.eye(n)
    k = 0
    while k < n:
        two = pivots[k] < 0
        swap_row = k + 1 if two else k
        p = abs(pivots[k]) - 1
        # the interchange at step k acts on rows swap_row and p of everything factored after it
        step = np.eye(n)
        step[[swap_row, p]] = step[[p, swap_row]]
        size = 2 if two else 1
        block = np.eye(n)
        D[k:k + size, k:k + size] = LD[k:k + size, k:k + size]
        if two:
            D[k, k + 1] = LD[k + 1, k]
        block[k + size:, k:k + size] = LD[k + size:, k:k + size]
        # A_k = step^T (block diag(D_k) block^T) step with the trailing part recursive: accumulate P L
        perm = perm @ step @ block
        k += size
    return perm, D


def reconstruct(LD, pivots):
    PL, D = unpack(LD, pivots)
    return PL @ D @ PL.T


@pytest.mark.parametrize("n", [1, 2, 5, 9])
def test_ldl_factor_reconstructs_indefinite_matrices(n):
    rng = np.random.default_rng(n)
    for trial in range(6):
        a = symmetric(rng, n, small_diagonal=trial % 2 == 0)
        LD, pivots = minigrad.linalg.ldl_factor(minigrad.tensor(a))
        ld, piv = LD.numpy(), pivots.numpy()
        assert piv.dtype == np.int32 and np.all(np.triu(ld, 1) == 0)
        np.testing.assert_allclose(reconstruct(ld, piv), a, atol=1e-11)


def test_ldl_uses_2x2_pivots_where_the_diagonal_is_small():
    a = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [2.0, 3.0, 0.0]])
    LD, pivots = minigrad.linalg.ldl_factor(minigrad.tensor(a))
    piv = pivots.numpy()
    assert (piv < 0).sum() == 2  # one 2x2 block (a zero diagonal admits no 1x1 pivot first)
    np.testing.assert_allclose(reconstruct(LD.numpy(), piv), a, atol=1e-14)


def test_ldl_solve_matches_numpy_batched_and_broadcast():
    rng = np.random.default_rng(3)
    a = np.stack([symmetric(rng, 6, small_diagonal=i % 2 == 0) for i in range(4)]).reshape(2, 2, 6, 6)
    b = rng.standard_normal((2, 1, 6, 3))
    LD, pivots = minigrad.linalg.ldl_factor(minigrad.tensor(a))
    assert LD.shape == (2, 2, 6, 6) and pivots.shape == (2, 2, 6)
    x = minigrad.linalg.ldl_solve(LD, pivots, minigrad.tensor(b))
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a, np.broadcast_to(b, (2, 2, 6, 3))), atol=1e-10)


def test_ldl_float32_and_values_only():
    rng = np.random.default_rng(4)
    a = symmetric(rng, 5).astype(np.float32)
    A = minigrad.tensor(a, requires_grad=True)
    LD, pivots = minigrad.linalg.ldl_factor(A)
    assert LD.dtype == minigrad.float32 and not LD.requires_grad
    b = np.ones((5, 1), np.float32)
    x = minigrad.linalg.ldl_solve(LD, pivots, minigrad.tensor(b))
    assert x.dtype == minigrad.float32
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a.astype(np.float64), b), rtol=1e-4, atol=1e-4)


def test_ldl_factor_ex_reports_singular_and_ldl_factor_refuses():
    z = minigrad.zeros(3, 3)
    LD, pivots, info = minigrad.linalg.ldl_factor_ex(z)
    assert int(info.item()) == 1 and pivots.numpy().tolist() == [1, 2, 3]
    with pytest.raises(LinAlgError, match="ldl_factor"):
        minigrad.linalg.ldl_factor(z)
    with pytest.raises(LinAlgError, match="ldl_factor_ex"):
        minigrad.linalg.ldl_factor_ex(z, check_errors=True)
    _, _, info = minigrad.linalg.ldl_factor_ex(minigrad.tensor(np.stack([np.eye(2), np.zeros((2, 2))])))
    assert info.numpy().tolist() == [0, 1]


def test_ldl_bad_input():
    with pytest.raises(ShapeError, match=r"ldl_factor_ex.*\(3, 4\)"):
        minigrad.linalg.ldl_factor(minigrad.zeros(3, 4))
    with pytest.raises(TypeError, match="ldl_factor_ex"):  # as the rest of minigrad.linalg
        minigrad.linalg.ldl_factor(minigrad.tensor([[1, 0], [0, 1]]))
    LD, pivots = minigrad.linalg.ldl_factor(minigrad.eye(3))
    with pytest.raises(ShapeError, match=r"ldl_solve.*\(4, 1\)"):
        minigrad.linalg.ldl_solve(LD, pivots, minigrad.zeros(4, 1))


@needs_torch
def test_ldl_matches_torch():
    rng = np.random.default_rng(5)
    for n in (2, 4, 7):
        for trial in range(5):
            a = symmetric(rng, n, small_diagonal=trial % 2 == 0)
            LD, pivots, info = minigrad.linalg.ldl_factor_ex(minigrad.tensor(a))
            tLD, tpiv, tinfo = torch.linalg.ldl_factor_ex(torch.tensor(a))
            np.testing.assert_array_equal(pivots.numpy(), tpiv.numpy())
            np.testing.assert_allclose(LD.numpy(), tLD.numpy(), rtol=1e-10, atol=1e-12)
            assert int(info.item()) == int(tinfo.item()) == 0
            b = rng.standard_normal((n, 2))
            x = minigrad.linalg.ldl_solve(LD, pivots, minigrad.tensor(b))
            np.testing.assert_allclose(x.numpy(), torch.linalg.ldl_solve(tLD, tpiv, torch.tensor(b)).numpy(),
                                       rtol=1e-9, atol=1e-10)


# ---- lobpcg ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("largest", [True, False])
def test_lobpcg_extreme_eigenpairs(largest):
    rng = np.random.default_rng(6)
    a = symmetric(rng, 24)
    values, vectors = minigrad.lobpcg(minigrad.tensor(a), k=3, largest=largest)
    exact = np.linalg.eigvalsh(a)
    expected = exact[::-1][:3] if largest else exact[:3]
    np.testing.assert_allclose(values.numpy(), expected, rtol=1e-6, atol=1e-6)
    v = vectors.numpy()
    assert v.shape == (24, 3)
    np.testing.assert_allclose(v.T @ v, np.eye(3), atol=1e-6)
    np.testing.assert_allclose(a @ v, v * values.numpy(), atol=1e-5)


def test_lobpcg_generalized_with_start_and_preconditioner():
    rng = np.random.default_rng(7)
    a = symmetric(rng, 18)
    c = rng.standard_normal((18, 18))
    b = c @ c.T + 18 * np.eye(18)
    x0 = rng.standard_normal((18, 2))
    values, vectors = minigrad.lobpcg(minigrad.tensor(a), B=minigrad.tensor(b), X=minigrad.tensor(x0),
                                      iK=minigrad.tensor(np.linalg.inv(b)))
    # the generalized eigenvalues of (a, b): those of L^-1 a L^-T with b = L L^T
    low = np.linalg.cholesky(b)
    m = np.linalg.solve(low, np.linalg.solve(low, a).T)
    np.testing.assert_allclose(values.numpy(), np.linalg.eigvalsh(m)[::-1][:2], rtol=1e-6, atol=1e-6)
    v = vectors.numpy()
    np.testing.assert_allclose(a @ v, b @ v * values.numpy(), atol=1e-5)


def test_lobpcg_bad_input():
    with pytest.raises(ValueError, match="3 x"):
        minigrad.lobpcg(minigrad.eye(5), k=2)
    with pytest.raises(ShapeError, match="lobpcg"):
        minigrad.lobpcg(minigrad.zeros(6, 5))
    with pytest.raises(NotImplementedError, match="detach"):
        minigrad.lobpcg(minigrad.eye(6, requires_grad=True))


@needs_torch
def test_lobpcg_matches_torch():
    rng = np.random.default_rng(8)
    a = symmetric(rng, 20)
    for largest in (True, False):
        ours = minigrad.lobpcg(minigrad.tensor(a), k=2, largest=largest)[0].numpy()
        theirs = torch.lobpcg(torch.tensor(a), k=2, largest=largest)[0].numpy()
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)
